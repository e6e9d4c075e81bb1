"""examples/python/time_hlo.py runs as README's "From Python" section shows."""

import os
import re
import subprocess
import sys

from conftest import REPO


def test_time_hlo_times_compares_sweeps_and_plots(tmp_path):
    plot = tmp_path / "sweep.png"
    done = subprocess.run([sys.executable, str(REPO / "examples" / "python" / "time_hlo.py"),
                           str(plot)], capture_output=True, text=True, env=os.environ,
                          check=False)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith("mlp_tensor_parallel.hlo on v5e-2x4: ")
    assert "mlp/tp, written by hand: " in out
    times = [float(t) for t in re.findall(r"m=\d+ +([\d.]+) us", out)]
    assert len(times) == 4 and times == sorted(times), out  # more batch, more time
    assert plot.read_bytes().startswith(b"\x89PNG")
    assert out.rstrip().endswith(f"plot: {plot}")
