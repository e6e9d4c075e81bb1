"""Every call of the API on registry entries and HLO modules, and what results hold."""

import dataclasses
import json

import pytest

import tpusim


def test_topologies_lists_the_presets_with_their_shapes():
    presets = {t.name: t for t in tpusim.topologies()}
    assert presets["v5e-2x4"].chips == 8
    assert presets["v5e-2x4"].devices == 8
    # A TPU7x chip is two devices (docs/model.md, "Chiplets").
    assert presets["tpu7x-16x24x24"].chips == 9216
    assert presets["tpu7x-16x24x24"].devices == 18432
    assert presets["v5e-2x4"].shape == "2x4"
    assert presets["v5e-2x4"].axes == ("x", "y")
    assert presets["v5p-4x4x8-twisted"].twisted
    assert not presets["v5p-4x4x8"].twisted


def test_list_names_kernels_and_programs_with_their_parameters():
    entries = {e.name: e for e in tpusim.list()}
    assert entries["all_gather_ring"].kind == "kernel"
    assert "bytes" in entries["all_gather_ring"].params
    assert entries["mlp/dp"].kind == "program"


def test_run_reports_every_metric_of_the_cli_table():
    r = tpusim.run("all_gather_ring", topology="v5e-2x2", axis="x", bytes="64K")
    assert r.completed and r.correct and r.ok
    assert r.simulated_seconds > 0
    assert r.simulated_seconds == pytest.approx(r.sim_time_ns / 1e9)
    # The metrics are the C++ table's (tools/tpusim/run_metrics.h): every key of the
    # report's metrics is a typed field, none invented, none left out.
    keys = {f.name for f in dataclasses.fields(tpusim.Metrics)}
    assert keys <= set(r.report)
    assert "busbw_gbps" in keys and "peak_hbm_bytes" in keys
    assert isinstance(r.busbw_gbps, float) and r.busbw_gbps > 0
    assert isinstance(r.events, int)
    assert r.params["bytes"] == 65536
    with pytest.raises(AttributeError, match="no field 'busbw'"):
        r.busbw


def test_result_reads_as_text_html_dict_and_says_when_pandas_is_missing():
    r = tpusim.run("all_gather_ring", topology="v5e-2x2", axis="x", bytes="64K")
    text = repr(r)
    assert text.startswith("<tpusim.Result all_gather_ring on v5e-2x2 (4 chips, functional)")
    assert "simulated time" in text and r.human["sim_time_ns"] in text
    assert "<table>" in r._repr_html_()
    values = r.to_dict()
    assert values["entry"] == "all_gather_ring" and values["sim_time_ns"] == r.sim_time_ns
    json.dumps(values)  # plain values only
    try:
        import pandas  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="needs pandas"):
            r.to_pandas()
    else:
        assert r.to_pandas().loc[0, "sim_time_ns"] == r.sim_time_ns


def test_an_hlo_module_runs_from_a_path_its_text_or_an_object_with_as_text(hlo_dir):
    path = hlo_dir / "sharded_matmul_permute.hlo"

    class Compiled:  # what jax.jit(f).lower(x).compile() offers
        def as_text(self):
            return path.read_text()

    times = {
        tpusim.run(target, topology="v5e-2x4", timing_only=True).simulated_seconds
        for target in (str(path), path, path.read_text(), Compiled())
    }
    assert len(times) == 1 and times.pop() > 0


@pytest.mark.parametrize("module", ["async_permute_ring", "layers_while_all_gather",
                                    "mlp_data_parallel", "mlp_fsdp", "mlp_tensor_parallel",
                                    "sharded_matmul_permute"])
def test_every_example_module_runs_and_matches_its_reference(hlo_dir, module):
    r = tpusim.run(hlo_dir / f"{module}.hlo", topology="v5e-2x4")
    assert r.kind == "program"
    assert r.correct, r.mismatch
    assert r.ops, "a program reports its per-op table"


def test_run_options_are_keyword_arguments():
    r = tpusim.run("lax/psum", topology="v5e-2x4", axis="x", bytes="64K", timing_only=True,
                   collective_algorithm="ring")
    assert r.timing_only and r.correct is None and r.outputs == []
    assert r.collective_algorithm == "ring"
    assert [(c.algorithm, c.forced) for c in r.collectives] == [("ring", True)]
    assert set(tpusim.RUN_OPTIONS) >= {"timing_only", "time_limit", "collective_algorithm"}


def test_slow_chip_is_the_clis_slow_chip():
    run = dict(topology="v5e-2x2", m=512, k=512, n=512, timing_only=True)
    nominal = tpusim.run("matmul", **run).simulated_seconds
    slowed = tpusim.run("matmul", slow_chip="2=3", **run).simulated_seconds
    assert 2 * nominal < slowed < 3.5 * nominal


def test_slow_chip_by_coordinates_and_slow_link_are_the_clis():
    run = dict(topology="v5e-2x2", axis="y", bytes="4M", timing_only=True)
    nominal = tpusim.run("all_gather_ring", **run).simulated_seconds
    by_index = tpusim.run("all_gather_ring", slow_chip="2=100", **run).simulated_seconds
    by_coords = tpusim.run("all_gather_ring", slow_chip="1,0=100", **run).simulated_seconds
    assert by_coords == by_index > nominal
    slow_link = tpusim.run("all_gather_ring", slow_link="0,0:y+=4", **run).simulated_seconds
    assert slow_link > 2 * nominal
    assert "slow_link" in tpusim.RUN_OPTIONS


def test_trace_writes_the_file_the_result_names(tmp_path):
    path = tmp_path / "run.json"
    r = tpusim.run("ppermute", topology="v5e-2x2", axis="x", bytes="4K", trace=path)
    assert r.trace == str(path)
    assert json.loads(path.read_text())["traceEvents"]


def test_compare_runs_each_schedule_of_one_computation():
    table = tpusim.compare(["mlp/dp", "mlp/tp"], topology="v5e-2x4", timing_only=True)
    assert [r.entry for r in table] == ["mlp/dp", "mlp/tp"]
    assert table[0].simulated_seconds != table[1].simulated_seconds
    assert "mlp/tp" in repr(table) and "<table>" in table._repr_html_()
    assert len(table.to_dict()["runs"]) == 2


def test_bench_runs_each_size():
    table = tpusim.bench("all_gather_ring", topology="v5e-2x2", sizes=["16K", "64K"], axis="x",
                         timing_only=True)
    assert [r.params["bytes"] for r in table] == [16384, 65536]
    assert table[0].simulated_seconds < table[1].simulated_seconds


def test_sweep_runs_the_product_of_the_lists():
    table = tpusim.sweep("all_gather_ring", topology=["v5e-2x2", "v5e-4x4"], axis="x",
                         bytes=["16K", "64K"], timing_only=True)
    points = [(r.topology, r.params["bytes"]) for r in table]
    assert points == [("v5e-2x2", 16384), ("v5e-2x2", 65536), ("v5e-4x4", 16384),
                      ("v5e-4x4", 65536)]
    assert "bytes" in repr(table)  # the swept parameter is a column
