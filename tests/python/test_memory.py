"""Many runs in one interpreter: memory stays flat, and each run is deterministic."""

import dataclasses

import tpusim


def resident_bytes():
    """This process's resident memory now (not the peak, which cannot fall)."""
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    import resource
    return pages * resource.getpagesize()


def run_once():
    return tpusim.run("all_gather_ring", topology="v5e-2x2", axis="x", bytes="64K")


def test_a_hundred_runs_keep_memory_flat():
    for _ in range(10):  # allocators and caches settle
        run_once()
    before = resident_bytes()
    for _ in range(100):
        assert run_once().correct
    grown = resident_bytes() - before
    # A leak of one run's model (hundreds of KiB: 96 KiB of HBM per chip alone) would
    # pass 10 MiB within the 100 runs.
    assert grown < 10 * 2 ** 20, f"resident memory grew {grown} bytes over 100 runs"


def without_host_costs(result):
    metrics = dataclasses.asdict(result.metrics)
    for key in ("wall_seconds", "events_per_second", "process_seconds", "peak_rss_mib"):
        metrics.pop(key)
    return metrics


def test_runs_are_deterministic_with_other_runs_between(tmp_path, hlo_dir):
    module = hlo_dir / "async_permute_ring.hlo"
    first = tpusim.run(module, topology="v5e-2x4", trace=tmp_path / "a.pftrace")
    tpusim.run("mlp/tp", topology="v5e-2x4", timing_only=True)  # something else between
    second = tpusim.run(module, topology="v5e-2x4", trace=tmp_path / "b.pftrace")
    assert without_host_costs(first) == without_host_costs(second)
    assert first.ops == second.ops
    assert (tmp_path / "a.pftrace").read_bytes() == (tmp_path / "b.pftrace").read_bytes()
    assert all((a == b).all() for a, b in zip(first.outputs, second.outputs))
