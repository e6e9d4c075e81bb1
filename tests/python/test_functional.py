"""Functional runs: numpy arrays in, numpy arrays out."""

import numpy as np
import pytest

import tpusim


def test_an_hlo_module_computes_the_callers_arrays(hlo_dir):
    rng = np.random.default_rng(0)
    # jit_f: relu(X @ W1) @ W2 with X sharded over 8 devices by rows (8 x [2,32]).
    x = rng.standard_normal((16, 32), dtype=np.float32)
    w1 = rng.standard_normal((32, 128), dtype=np.float32)
    w2 = rng.standard_normal((128, 32), dtype=np.float32)
    r = tpusim.run(hlo_dir / "mlp_data_parallel.hlo", topology="v5e-2x4", inputs=[x, w1, w2])
    expected = np.maximum(x @ w1, 0) @ w2
    (out,) = r.outputs
    assert out.dtype == np.float32 and out.shape == (16, 32)
    # The MXU's default precision rounds f32 operands to bf16 (docs/hlo.md).
    np.testing.assert_allclose(out, expected, rtol=0.05, atol=0.5)
    # Each device holds its block of rows.
    blocks = r.device_outputs[0]
    assert len(blocks) == 8
    np.testing.assert_array_equal(np.concatenate(blocks), out)
    # The entry's own reference is for its own inputs: not checked against the caller's.
    assert r.correct is None


def test_a_kernel_gathers_the_callers_array():
    x = np.arange(256, dtype=np.float32)
    r = tpusim.run("all_gather_ring", topology="v5e-2x2", axis="x", bytes="1K", dtype="f32",
                   inputs=[x])
    np.testing.assert_array_equal(r.outputs[0], x)
    assert all(np.array_equal(block, x) for block in r.device_outputs[0])


def test_bf16_outputs_are_bfloat16_or_float32_without_ml_dtypes():
    x = np.linspace(-4, 4, 256)  # float64: rounded to the entry's bf16
    r = tpusim.run("all_gather_ring", topology="v5e-2x2", axis="x", bytes="512", dtype="bf16",
                   inputs=[x])
    out = r.outputs[0]
    if tpusim.ml_dtypes is None:
        assert out.dtype == np.float32
    else:
        assert out.dtype == tpusim.ml_dtypes.bfloat16
    # bf16 keeps 8 significant bits; the ends, -4 and 4, are exact.
    np.testing.assert_allclose(out.astype(np.float32), x, rtol=2 ** -8)
    assert out[0] == -4 and out[-1] == 4


def test_the_default_inputs_run_against_the_host_reference(hlo_dir):
    r = tpusim.run(hlo_dir / "mlp_data_parallel.hlo", topology="v5e-2x4")
    assert r.correct is True
    assert r.outputs[0].shape == (16, 32)


def test_an_input_of_the_wrong_shape_is_refused():
    with pytest.raises(tpusim.InvalidArgumentError,
                       match=r"input 0 is f32\[4,64\], and the entry takes f32\[256\]"):
        tpusim.run("all_gather_ring", topology="v5e-2x2", axis="x", bytes="1K", dtype="f32",
                   inputs=[np.zeros((4, 64), np.float32)])


def test_the_wrong_number_of_inputs_is_refused():
    with pytest.raises(tpusim.InvalidArgumentError, match=r"takes 1 input\(s\), and 2 were"):
        tpusim.run("all_gather_ring", topology="v5e-2x2", axis="x", bytes="1K", dtype="f32",
                   inputs=[np.zeros(256, np.float32)] * 2)


def test_an_integer_array_for_a_float_input_is_refused():
    with pytest.raises(tpusim.InvalidArgumentError, match=r"input 0 is int32\[256\]"):
        tpusim.run("all_gather_ring", topology="v5e-2x2", axis="x", bytes="1K", dtype="f32",
                   inputs=[np.zeros(256, np.int32)])


def test_a_dtype_tpusim_lacks_is_refused():
    with pytest.raises(tpusim.InvalidArgumentError, match="dtype complex64, which tpusim"):
        tpusim.run("all_gather_ring", topology="v5e-2x2", axis="x", bytes="1K", dtype="f32",
                   inputs=[np.zeros(256, np.complex64)])


def test_inputs_to_a_timing_only_run_are_refused():
    with pytest.raises(tpusim.InvalidArgumentError, match="timing-only run, which moves no"):
        tpusim.run("all_gather_ring", topology="v5e-2x2", axis="x", bytes="1K", dtype="f32",
                   timing_only=True, inputs=[np.zeros(256, np.float32)])


def mlp_inputs():
    rng = np.random.default_rng(1)
    return (rng.standard_normal((16, 32), dtype=np.float32),
            rng.standard_normal((32, 128), dtype=np.float32),
            rng.standard_normal((128, 32), dtype=np.float32))


def test_per_device_blocks_are_assembled_as_the_specs_say(hlo_dir):
    module = hlo_dir / "mlp_data_parallel.hlo"
    x, w1, w2 = mlp_inputs()
    whole = tpusim.run(module, topology="v5e-2x4", inputs=[x, w1, w2])
    # X is split by rows over the 8 devices; W1 is replicated, so each device has a copy.
    blocks = tpusim.run(module, topology="v5e-2x4",
                        inputs=[np.split(x, 8), [w1] * 8, w2])
    np.testing.assert_array_equal(blocks.outputs[0], whole.outputs[0])


def test_per_device_blocks_must_be_one_per_device(hlo_dir):
    x, w1, w2 = mlp_inputs()
    with pytest.raises(tpusim.InvalidArgumentError,
                       match="input 0 has 4 blocks, and the slice has 8 devices"):
        tpusim.run(hlo_dir / "mlp_data_parallel.hlo", topology="v5e-2x4",
                   inputs=[np.split(x, 4), w1, w2])


def test_per_device_blocks_must_agree_in_shape(hlo_dir):
    x, w1, w2 = mlp_inputs()
    blocks = np.split(x, 8)
    blocks[3] = np.zeros((3, 32), np.float32)
    with pytest.raises(tpusim.InvalidArgumentError,
                       match=r"device 3's block is f32\[3,32\], and device 0's is f32\[2,32\]"):
        tpusim.run(hlo_dir / "mlp_data_parallel.hlo", topology="v5e-2x4",
                   inputs=[blocks, w1, w2])


def test_copies_of_a_replicated_input_must_agree(hlo_dir):
    x, w1, w2 = mlp_inputs()
    copies = [w1] * 8
    copies[5] = w1 + 1
    with pytest.raises(tpusim.InvalidArgumentError,
                       match="the blocks of devices 0 and 5 differ, and its PartitionSpec"):
        tpusim.run(hlo_dir / "mlp_data_parallel.hlo", topology="v5e-2x4",
                   inputs=[x, copies, w2])
