"""Time an HLO module on a simulated TPU slice, compare it with a hand-written program,
sweep a size and plot the result: a notebook's cells, as a script (docs/python.md).

    PYTHONPATH=build/python /usr/bin/python3 examples/python/time_hlo.py [PLOT.png]

The plot goes to PLOT.png, or into a new temporary directory.
"""

# %% Set-up: Agg draws without a display, as on a server or in CI.
import pathlib
import sys
import tempfile

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import tpusim  # noqa: E402

MODULE = pathlib.Path(__file__).resolve().parents[1] / "hlo" / "mlp_tensor_parallel.hlo"

# %% 1. Time the module XLA compiled. In a notebook, pass the JAX object itself:
#       tpusim.run(jax.jit(f).lower(x, w1, w2).compile(), topology="v5e-2x4")
hlo = tpusim.run(MODULE, topology="v5e-2x4", timing_only=True)
print(f"{MODULE.name} on {hlo.topology}: {hlo.human['sim_time_ns']}")
for op in hlo.ops[:3]:
    print(f"  {op.name:<20} {op.total_ns / 1e3:9.3f} us  {op.share:6.1%}")

# %% 2. The same MLP as a hand-written program (mlp/tp: tensor parallel over x).
hand = tpusim.run("mlp/tp", topology="v5e-2x4", timing_only=True, m=16, k=32, n=128)
print(f"mlp/tp, written by hand: {hand.human['sim_time_ns']}")
print(f"  {hand.contract}")

# %% 3. Sweep the batch and plot the time against it.
sizes = [256, 512, 1024, 2048]
table = tpusim.sweep("mlp/tp", topology="v5e-2x4", timing_only=True, m=sizes, k=1024, n=4096)
for r in table:
    print(f"  m={r.params['m']:<5} {r.human['sim_time_ns']:>12}   MXU {r.human['mxu_utilisation']}")

fig, ax = plt.subplots(figsize=(5, 3.5))
ax.plot(sizes, [r.simulated_seconds * 1e6 for r in table], marker="o")
ax.set_xlabel("batch m")
ax.set_ylabel("simulated time (us)")
ax.set_title("mlp/tp on v5e-2x4")
fig.tight_layout()
plot = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else pathlib.Path(
    tempfile.mkdtemp()) / "mlp_tp_sweep.png"
fig.savefig(plot)
print(f"plot: {plot}")
