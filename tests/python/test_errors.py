"""Errors are exceptions of tpusim.Error's classes, with the CLI's messages; Ctrl-C stops a
run and leaves the interpreter usable."""

import os
import signal
import subprocess
import sys
import textwrap

import pytest

import tpusim


def cli_error(cli, *args):
    """What `tpusim ARGS` prints on stderr, where it fails."""
    done = subprocess.run([str(cli), *args], capture_output=True, text=True, check=False)
    assert done.returncode != 0
    return done.stderr


def test_an_unknown_entry_has_the_clis_message(cli):
    with pytest.raises(tpusim.InvalidArgumentError) as raised:
        tpusim.run("no_such_kernel", topology="v5e-2x2")
    assert str(raised.value).startswith("unknown kernel 'no_such_kernel'; known kernels:")
    assert str(raised.value) in cli_error(cli, "run", "no_such_kernel", "--topology", "v5e-2x2")
    assert isinstance(raised.value, ValueError)


def test_an_unknown_topology_has_the_clis_message(cli):
    with pytest.raises(tpusim.InvalidArgumentError, match="no-such-slice") as raised:
        tpusim.run("ppermute", topology="no-such-slice", axis="x")
    message = str(raised.value).removesuffix(" tpusim.topologies() lists the presets.")
    assert message in cli_error(cli, "run", "ppermute", "--topology", "no-such-slice")


def test_a_missing_topology_is_named():
    with pytest.raises(tpusim.InvalidArgumentError, match="give the slice: topology="):
        tpusim.run("ppermute", axis="x")


def test_a_bad_parameter_value_has_the_clis_message(cli):
    with pytest.raises(tpusim.InvalidArgumentError) as raised:
        tpusim.run("ppermute", topology="v5e-2x2", axis="x", bytes="lots")
    assert str(raised.value) in cli_error(cli, "run", "ppermute", "--topology", "v5e-2x2",
                                          "--axis", "x", "--bytes", "lots")


def test_a_bad_run_option_has_the_clis_message(cli):
    with pytest.raises(tpusim.InvalidArgumentError,
                       match="--uninitialized-memory is 'maybe'; use nan or zero.") as raised:
        tpusim.run("ppermute", topology="v5e-2x2", axis="x", uninitialized_memory="maybe")
    assert str(raised.value) in cli_error(cli, "run", "ppermute", "--topology", "v5e-2x2",
                                          "--axis", "x", "--uninitialized-memory", "maybe")


def test_a_switch_takes_true_or_false():
    with pytest.raises(tpusim.InvalidArgumentError, match="timing_only=True or"):
        tpusim.run("ppermute", topology="v5e-2x2", axis="x", timing_only="yes")


def test_a_target_of_another_type_is_refused():
    with pytest.raises(tpusim.InvalidArgumentError, match="the target is a int"):
        tpusim.run(42, topology="v5e-2x2")


def test_hlo_text_that_does_not_parse_says_where():
    with pytest.raises(tpusim.InvalidArgumentError, match=r"<hlo text>:3:\d+: "):
        tpusim.run("HloModule m\n\nENTRY %main { %p = f32[2] parameter(0) %q }\n",
                   topology="v5e-2x2")


def test_a_race_is_a_race_error_with_the_report():
    with pytest.raises(tpusim.RaceError, match="race on chip") as raised:
        tpusim.run("all_reduce_psum_no_capacity", topology="v5e-2x2", axis="x", bytes="64M")
    assert raised.value.report.completed is False
    assert raised.value.report.error_kind == "race"


def test_a_run_past_its_time_limit_is_a_time_limit_error():
    with pytest.raises(tpusim.TimeLimitError, match="simulated-time limit of 1.000 ns") as raised:
        tpusim.run("ppermute", topology="v5e-2x2", axis="x", bytes="4K", time_limit=1e-9)
    # It names the keyword, as the library does, and no command-line flag.
    assert "(time_limit)" in str(raised.value) and "--time-limit" not in str(raised.value)


def test_compare_of_different_computations_is_refused():
    with pytest.raises(tpusim.InvalidArgumentError, match="mlp/dp"):
        tpusim.compare(["mlp/dp", "all_gather_ring"], topology="v5e-2x4", axis="x",
                       bytes="4K")


def test_bench_needs_sizes_and_sweep_needs_a_list():
    with pytest.raises(tpusim.InvalidArgumentError, match="sizes="):
        tpusim.bench("ppermute", topology="v5e-2x2", axis="x")
    with pytest.raises(tpusim.InvalidArgumentError, match="at least one list"):
        tpusim.sweep("ppermute", topology="v5e-2x2", axis="x")


def test_an_error_leaves_the_next_run_unharmed():
    with pytest.raises(tpusim.RaceError):
        tpusim.run("all_reduce_psum_no_capacity", topology="v5e-2x2", axis="x", bytes="64M")
    assert tpusim.run("ppermute", topology="v5e-2x2", axis="x", bytes="4K").correct


def test_ctrl_c_interrupts_a_long_run_and_the_interpreter_goes_on():
    # A run of some seconds in a child; SIGINT once it has started.
    script = textwrap.dedent("""
        import sys
        import tpusim
        print("started", flush=True)
        try:
            tpusim.run("all_reduce_ring", topology="v5e-4x4", axis="x", bytes="256M",
                       chunk_bytes="4K", timing_only=True)
            print("finished")
        except KeyboardInterrupt as e:
            print("interrupted:", e)
        r = tpusim.run("ppermute", topology="v5e-2x2", axis="x", bytes="4K")
        print("next run ok" if r.correct else "next run wrong")
    """)
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                             env=os.environ)
    assert child.stdout.readline() == "started\n"
    # Python only reaches the run after the print; give it a moment to be inside it.
    import time
    time.sleep(1.0)
    child.send_signal(signal.SIGINT)
    out, _ = child.communicate(timeout=300)
    assert child.returncode == 0
    assert "interrupted: the run stopped on an interrupt from the caller (e.g. Ctrl-C) at " in out
    assert "next run ok" in out


def test_every_error_kind_of_the_library_has_its_class():
    from tpusim import _core, _errors
    for kind in _core.error_kinds():
        cls = type(_errors.error_for(kind, "message"))
        assert cls is not tpusim.Error and cls.kind == kind
        assert cls.__module__ == "tpusim" and getattr(tpusim, cls.__name__) is cls
