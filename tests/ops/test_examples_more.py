"""Schemas of the conversion, reduction, contraction, gather, linalg, shape and control-flow ops
added after the first set: each default runs and equals an independent numpy computation, each
spec-example preset gives the spec's listed result, and bad parameters fail with a ParamError or
the op's own VerificationError naming the constraint."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from hlolab.errors import HloLabError, VerificationError
from hlolab.ops.examples import ParamError, float_attr, make_example, schema_for, schema_ops
from hlolab.session import Session

NEW = ["stablehlo.bitcast_convert", "stablehlo.reduce_precision", "stablehlo.map",
       "stablehlo.batch_norm_inference", "stablehlo.batch_norm_training", "stablehlo.batch_norm_grad",
       "stablehlo.dot", "stablehlo.dynamic_conv", "stablehlo.dynamic_gather", "stablehlo.cholesky",
       "stablehlo.triangular_solve", "stablehlo.fft", "stablehlo.optimization_barrier", "stablehlo.if",
       "stablehlo.case", "stablehlo.while"]
WITH_SPEC_EXAMPLE = [n for n in NEW if n != "stablehlo.dot"]  # the spec has no section for dot


def run(ex) -> list[np.ndarray]:
    s = Session(ex.text)
    s.bind(ex.inputs)
    stop = s.run()
    assert stop.reason == "end", stop
    return [np.asarray(r) for r in s.results]


def example(name: str, preset: str = "default", **params) -> tuple[object, list[np.ndarray]]:
    ex = make_example(name, preset, {k: str(v) if not isinstance(v, str) else v for k, v in params.items()})
    return ex, run(ex)


def check_types(ex, results: list[np.ndarray]) -> None:
    inferred = schema_for(ex.op).infer(ex.params)
    assert [r.shape for r in results] == [t.static_shape() for t in inferred]
    assert [r.dtype for r in results] == [t.dtype for t in inferred]


def bad(name: str, constraint: str, **params) -> VerificationError:
    """The op's verify rejects ``params`` with ``constraint``, and the message names both."""
    with pytest.raises(VerificationError) as e:
        make_example(name, params={k: str(v) for k, v in params.items()})
    short = name.removeprefix("stablehlo.")
    assert e.value.op == f"stablehlo.{short}" and e.value.constraint == constraint, e.value
    assert f"{short} ({constraint})" in str(e.value)
    return e.value


# --- coverage ------------------------------------------------------------------------------

def test_every_new_op_has_a_schema_with_the_expected_presets():
    ops = schema_ops()
    for name in NEW:
        assert name in ops, name
        presets = list(schema_for(name).presets)
        assert presets[0] == "default"
        if name in WITH_SPEC_EXAMPLE:
            assert presets[1] == "spec-example", name
    # a tuple value is no tensor: neither grid nor input fill can show one (see shape.py)
    assert "stablehlo.tuple" not in ops and "stablehlo.get_tuple_element" not in ops


@pytest.mark.parametrize("name", NEW)
def test_presets_build_verify_run_and_infer_their_types(name):
    for preset in schema_for(name).presets:
        ex = make_example(name, preset)
        assert f'"{name}"' in ex.text
        results = run(ex)
        check_types(ex, results)
        if ex.index is not None:
            assert len(ex.index) == results[0].ndim
        for p in schema_for(name).params:  # every default round-trips its text form
            assert p.parse(p.format(p.default)) == p.default and p.doc


# --- conversion -----------------------------------------------------------------------------

def test_bitcast_convert_default_is_numpys_little_endian_view():
    ex, (out,) = example("bitcast_convert")
    x = ex.inputs[0]
    assert x.dtype == np.float32 and out.dtype == np.uint8 and out.shape == (3, 4)
    np.testing.assert_array_equal(out, x.view(np.uint8).reshape(3, 4))
    assert out[0].tolist() == [0, 0, 128, 63]  # 1.0f = 0x3F800000 (iota fills start at 1)


def test_bitcast_convert_join_and_equal_widths():
    ex, (out,) = example("bitcast_convert", "join")
    np.testing.assert_array_equal(out, ex.inputs[0].view(np.float32).reshape(2))
    ex, (out,) = example("bitcast_convert", operand="2x3", dtype="i32", result_dtype="f32")
    np.testing.assert_array_equal(out.view(np.int32), ex.inputs[0])


def test_bitcast_convert_spec_example_bits():
    _, (out,) = example("bitcast_convert", "spec-example")
    assert out.dtype == np.float16
    assert out.view(np.uint16).tolist() == [0xCDEF, 0x89AB, 0x4567, 0x0123]


def test_bitcast_convert_bad_shapes_and_kinds_are_the_spec_constraints():
    bad("bitcast_convert", "C1", operand="2x3", dtype="ui8", result_dtype="f32")  # needs a last dim of 4
    bad("bitcast_convert", "C2", operand="3", dtype="complex<f32>", result_dtype="i64")


# --- reduction: reduce_precision, map, batch norm -------------------------------------------

def _round_mantissa(x: np.ndarray, m: int) -> np.ndarray:
    """x rounded to m mantissa bits, ties to even (normal range only)."""
    e = np.floor(np.log2(np.abs(x)))
    q = 2.0 ** (e - m)
    return np.round(x / q) * q


def test_reduce_precision_default_is_f16_rounding():
    ex, (out,) = example("reduce_precision")
    x = ex.inputs[0]
    assert (x != x.astype(np.float16).astype(np.float32)).any()  # the default values do round
    np.testing.assert_array_equal(out, x.astype(np.float16).astype(np.float32))


def test_reduce_precision_bf16_preset_and_short_mantissa():
    ex, (out,) = example("reduce_precision", "bf16")
    np.testing.assert_array_equal(out, ex.inputs[0].astype(ml_dtypes.bfloat16).astype(np.float32))
    ex, (out,) = example("reduce_precision", mantissa_bits=2, dtype="f64")
    x = ex.inputs[0]
    np.testing.assert_array_equal(out, _round_mantissa(x.astype(np.float64), 2))
    assert out.ravel()[:6].tolist() == [1.0, 1.25, 1.75, 2.0, 2.5, 2.5]


def test_reduce_precision_spec_example_bits():
    _, (out,) = example("reduce_precision", "spec-example")
    want = np.array([np.inf, 0, 0.0, 0.0, 65504.0, np.inf]).view(np.uint64)
    want[1] = 0x7FFFFFFFFFFFFFFF  # the NaN keeps its bits
    assert out.view(np.uint64).tolist() == want.tolist()


def test_reduce_precision_bad_bits():
    bad("reduce_precision", "C2", exponent_bits=0)
    bad("reduce_precision", "C3", mantissa_bits=-1)


def test_map_default_and_other_bodies():
    ex, (out,) = example("map")
    a, b = ex.inputs
    np.testing.assert_array_equal(out, a * b)
    assert '"stablehlo.multiply"' in ex.text and "dimensions = array<i64: 0, 1>" in ex.text
    ex, (out,) = example("map", body="max", shape="3", dimensions="0", dtype="i32")
    np.testing.assert_array_equal(out, np.maximum(*ex.inputs))


def test_map_spec_example():
    _, (out,) = example("map", "spec-example")
    assert out.dtype == np.int64 and out.tolist() == [[0, 5], [12, 21]]


def test_map_dimensions_must_be_every_dim_in_order():
    bad("map", "C3", dimensions="1,0")
    bad("map", "C3", shape="2x3x4")  # dimensions 0,1 no longer cover the rank


def _bn_reference(x, scale, offset, mean, var, eps, fi):
    shape = [1] * x.ndim
    shape[fi] = -1
    r = [np.asarray(v, np.float64).reshape(shape) for v in (scale, offset, mean, var)]
    return r[0] * (x.astype(np.float64) - r[2]) / np.sqrt(r[3] + eps) + r[1]


def test_batch_norm_inference_default_matches_the_formula():
    ex, (out,) = example("batch_norm_inference")
    x, scale, offset, mean, var = ex.inputs
    assert ex.params["feature_index"] == 2 and (var > 0).all() and len(set(scale.tolist())) == 3
    want = _bn_reference(x, scale, offset, mean, var, np.float32(0.001), 2)
    np.testing.assert_allclose(out, want, rtol=1e-6)


def test_batch_norm_inference_other_feature_index():
    ex, (out,) = example("batch_norm_inference", feature_index=0, epsilon=0.5)
    assert ex.inputs[1].shape == (2,)
    np.testing.assert_allclose(out, _bn_reference(*ex.inputs, 0.5, 0), rtol=1e-6)


def test_batch_norm_training_default_matches_batch_statistics():
    ex, (out, mean, var) = example("batch_norm_training")
    x, scale, offset = ex.inputs
    xd = x.astype(np.float64)
    np.testing.assert_allclose(mean, xd.mean(axis=(0, 1)), rtol=1e-6)
    np.testing.assert_allclose(var, xd.var(axis=(0, 1)), rtol=1e-6)
    want = _bn_reference(x, scale, offset, xd.mean(axis=(0, 1)), xd.var(axis=(0, 1)), np.float32(0.001), 2)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)


def test_batch_norm_grad_default_matches_the_gradient_formula():
    ex, (g_x, g_scale, g_offset) = example("batch_norm_grad")
    x, scale, mean, var, dy = (np.asarray(v, np.float64) for v in ex.inputs)
    eps = float(np.float32(0.001))
    axes, n = (0, 1), x.size / x.shape[2]
    # the defaults are the operand's own batch statistics
    np.testing.assert_allclose(mean, x.mean(axis=axes))
    np.testing.assert_allclose(var, x.var(axis=axes))
    xhat = (x - mean) / np.sqrt(var + eps)
    want_scale = (dy * xhat).sum(axis=axes)
    want_offset = dy.sum(axis=axes)
    want_x = scale / (n * np.sqrt(var + eps)) * (n * dy - want_offset - xhat * want_scale)
    np.testing.assert_allclose(g_offset, want_offset, rtol=1e-6)
    np.testing.assert_allclose(g_scale, want_scale, rtol=1e-5)
    np.testing.assert_allclose(g_x, want_x, rtol=1e-4, atol=1e-6)
    assert np.abs(g_x).max() > 0.1  # a gradient that is not (almost) zero


def test_batch_norm_spec_examples():
    want = [[[0.0, 0.0], [2.0, 2.0]], [[2.0, 2.0], [0.0, 0.0]]]
    _, (out,) = example("batch_norm_inference", "spec-example")
    assert out.dtype == np.float64 and out.tolist() == want
    _, (out, mean, var) = example("batch_norm_training", "spec-example")
    assert out.tolist() == want and mean.tolist() == [2.0, 3.0] and var.tolist() == [1.0, 1.0]
    _, (g_x, g_scale, g_offset) = example("batch_norm_grad", "spec-example")
    assert g_x.tolist() == [[[0.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 0.0]]]
    assert g_scale.tolist() == [0.0, 0.0] and g_offset.tolist() == [0.4, 0.4]


@pytest.mark.parametrize("name", ["batch_norm_inference", "batch_norm_training", "batch_norm_grad"])
def test_batch_norm_bad_params(name):
    bad(name, "C1", feature_index=3)
    bad(name, "C1", feature_index=-1)
    with pytest.raises(ParamError, match="parameter 'epsilon'"):
        make_example(name, params={"epsilon": "lots"})
    with pytest.raises(ParamError, match="epsilon"):  # no decimal literal for inf
        make_example(name, params={"epsilon": "inf"})


# --- contraction: dot, dynamic_conv ----------------------------------------------------------

def test_dot_default_and_vector_preset():
    ex, (out,) = example("dot")
    np.testing.assert_array_equal(out, ex.inputs[0] @ ex.inputs[1])
    assert "precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]" in ex.text
    ex, (out,) = example("dot", "vector")
    assert out.shape == () and float(out) == float(ex.inputs[0] @ ex.inputs[1])
    ex, (out,) = example("dot", lhs="2x3", rhs="3", precision_config="HIGHEST")
    np.testing.assert_array_equal(out, ex.inputs[0] @ ex.inputs[1])


def test_dot_names_the_legacy_op_not_dot_general():
    assert schema_for("dot").op == "stablehlo.dot" and schema_for("Dot").op == "stablehlo.dot"
    assert schema_for("DotGeneral").op == "stablehlo.dot_general"
    assert schema_for("dot_general").op == "stablehlo.dot_general"


def test_dot_bad_operands():
    with pytest.raises(VerificationError, match=r"dot: dim\(lhs, lhs_contracting_dimensions...\)") as e:
        make_example("dot", params={"rhs": "4x2"})
    assert e.value.op == "stablehlo.dot"  # the legacy dot has no spec section, so no (Cn)
    with pytest.raises(VerificationError, match="dot takes rank-1 or rank-2 operands"):
        make_example("dot", params={"lhs": "2x2x3"})
    with pytest.raises(ParamError, match="parameter 'precision_config'"):
        make_example("dot", params={"precision_config": "LOW"})


def _conv2d_b01f(lhs: np.ndarray, rhs: np.ndarray, pad: int) -> np.ndarray:
    """Stride-1 cross-correlation of one-feature b01f input with a 01io kernel."""
    x = np.pad(lhs[0, :, :, 0].astype(np.float64), pad)
    k = rhs[:, :, 0, 0]
    win = np.lib.stride_tricks.sliding_window_view(x, k.shape)
    return np.einsum("ijkl,kl->ij", win, k)[None, :, :, None]


def test_dynamic_conv_default_pads_by_the_operand_value():
    ex, (out,) = example("dynamic_conv")
    lhs, rhs, pad = ex.inputs
    assert pad.dtype == np.int64 and pad.tolist() == [[1, 1], [1, 1]]
    assert out.shape == (1, 4, 4, 1)
    np.testing.assert_array_equal(out, _conv2d_b01f(lhs, rhs, 1))
    ex, (out,) = example("dynamic_conv", padding=0)
    np.testing.assert_array_equal(out, _conv2d_b01f(ex.inputs[0], ex.inputs[1], 0))


def test_dynamic_conv_spec_example():
    ex, (out,) = example("dynamic_conv", "spec-example")
    assert out.dtype == np.int64 and out.tolist() == [[[[1], [5]], [[10], [14]]]]
    assert "lhs_dilation = array<i64: 2, 2>" in ex.text and "padding = " not in ex.text


def test_dynamic_conv_bad_params():
    bad("dynamic_conv", "C4", padding="1,1")  # one pair for two spatial dims
    bad("dynamic_conv", "C3", stride=0)
    with pytest.raises(VerificationError, match=r"padding must be a 2-dimensional tensor of integer type"):
        make_example("dynamic_conv", params={"padding_dtype": "f32"})


# --- gather: dynamic_gather ------------------------------------------------------------------

def test_dynamic_gather_default_reads_the_windows_at_the_starts():
    ex, (out,) = example("dynamic_gather")
    operand, starts, sizes = ex.inputs
    assert sizes.tolist() == [2, 2] and out.shape == (2, 2, 2)
    rows = starts[:, 0, None] + np.arange(2)
    cols = starts[:, 1, None] + np.arange(2)
    np.testing.assert_array_equal(out, operand[rows[:, :, None], cols[:, None, :]])


def test_dynamic_gather_spec_example():
    ex, (out,) = example("dynamic_gather", "spec-example")
    assert ex.inputs[2].tolist() == [1, 2, 2]
    assert out.dtype == np.int64 and out.tolist() == [
        [[[1, 2], [3, 4]], [[3, 4], [5, 6]], [[13, 14], [15, 16]]],
        [[[9, 10], [11, 12]], [[11, 12], [13, 14]], [[17, 18], [19, 20]]]]


def test_dynamic_gather_bad_params():
    bad("dynamic_gather", "C2", index_vector_dim=5)
    bad("dynamic_gather", "C11", slice_sizes="2,2,2")  # size(slice_sizes) = rank(operand)
    # the slice sizes are a value: their bounds are checked when the op runs
    ex = make_example("dynamic_gather", params={"slice_sizes": "5,2"})
    s = Session(ex.text)
    s.bind(ex.inputs)
    stop = s.run()
    assert isinstance(stop.error, VerificationError) and stop.error.constraint == "C12", stop


# --- linalg: cholesky, triangular_solve, fft --------------------------------------------------

def test_cholesky_default_is_numpys_factor():
    ex, (out,) = example("cholesky")
    a = ex.inputs[0].astype(np.float64)
    np.testing.assert_array_equal(a, a.T)
    assert (np.linalg.eigvalsh(a) > 0).all()
    np.testing.assert_allclose(out, np.linalg.cholesky(a), rtol=1e-6)
    assert out.tolist() == [[1, 0, 0], [2, 1, 0], [3, 2, 1]]  # the integer factor, exactly


def test_cholesky_upper_and_batched():
    ex, (out,) = example("cholesky", lower="false")
    np.testing.assert_allclose(out, np.linalg.cholesky(ex.inputs[0].astype(np.float64)).T, rtol=1e-6)
    ex, (out,) = example("cholesky", a="2x4x4", dtype="f64")
    a = ex.inputs[0]
    assert not np.array_equal(a[0], a[1])
    np.testing.assert_allclose(out, np.linalg.cholesky(a), rtol=1e-12)


def test_cholesky_spec_example():
    _, (out,) = example("cholesky", "spec-example")
    # the spec declares an f64 result for its f32 operand, against its own (C1): f32 here
    assert out.dtype == np.float32 and out.tolist() == [[1, 0, 0], [2, 4, 0], [3, 5, 6]]


def test_cholesky_bad_shapes():
    bad("cholesky", "C3", a="2x3")
    bad("cholesky", "C2", a="3")


def _op_a(a: np.ndarray, lower: bool, transpose_a: str) -> np.ndarray:
    t = np.tril(a) if lower else np.triu(a)
    return t if transpose_a == "NO_TRANSPOSE" else np.swapaxes(t, -1, -2).conj()


@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("transpose_a", ["NO_TRANSPOSE", "TRANSPOSE"])
def test_triangular_solve_matches_numpy_solve(left_side, lower, transpose_a):
    b = "3x2" if left_side else "2x3"
    ex, (out,) = example("triangular_solve", b=b, left_side=str(left_side).lower(), lower=str(lower).lower(),
                         transpose_a=transpose_a, dtype="f64")
    a, rhs = ex.inputs
    m = _op_a(a, lower, transpose_a)
    want = np.linalg.solve(m, rhs) if left_side else np.linalg.solve(m.T, rhs.T).T
    np.testing.assert_allclose(out, want, rtol=1e-12)


def test_triangular_solve_default_is_exact():
    ex, (out,) = example("triangular_solve")
    a, b = ex.inputs
    np.testing.assert_array_equal(np.tril(a) @ out, b)  # dyadic solutions: no rounding at all
    assert out.tolist() == [[0.5, 1.0], [1.25, 1.5], [1.625, 1.75]]


def test_triangular_solve_spec_example():
    _, (out,) = example("triangular_solve", "spec-example")
    assert out.tolist() == [[2, 0, 0], [0, 2, 0], [0, 0, 2]]


def test_triangular_solve_bad_shapes():
    bad("triangular_solve", "C3", b="4x2")
    bad("triangular_solve", "C3", a="3x4")
    bad("triangular_solve", "C2", a="3", b="3")


def test_fft_default_and_presets_match_numpy():
    ex, (out,) = example("fft")
    assert out.dtype == np.complex64
    np.testing.assert_allclose(out, np.fft.fft(ex.inputs[0], axis=-1), rtol=1e-6)
    ex, (out,) = example("fft", "rfft")
    assert ex.inputs[0].dtype == np.float32 and out.shape == (2, 3)
    np.testing.assert_allclose(out, np.fft.rfft(ex.inputs[0], axis=-1), rtol=1e-6)
    ex, (out,) = example("fft", "irfft")
    assert out.dtype == np.float32 and out.shape == (2, 4)
    np.testing.assert_allclose(out, np.fft.irfft(ex.inputs[0], n=4, axis=-1), rtol=1e-6, atol=1e-6)
    ex, (out,) = example("fft", "fft2d")
    np.testing.assert_allclose(out, np.fft.fft2(ex.inputs[0]), rtol=1e-6, atol=1e-5)
    ex, (out,) = example("fft", fft_type="IFFT", dtype="f64")
    np.testing.assert_allclose(out, np.fft.ifft(ex.inputs[0], axis=-1), rtol=1e-12)


def test_fft_spec_example():
    _, (out,) = example("fft", "spec-example")
    assert out.dtype == np.complex64 and out.tolist() == [1 + 0j] * 4


def test_fft_bad_params():
    bad("fft", "C1", fft_length="2,2,4")
    bad("fft", "C3", operand="1x1x2x4", fft_length="1,1,2,4")
    bad("fft", "C4", fft_type="RFFT", fft_length="5")
    bad("fft", "C5", fft_type="IRFFT", operand="2x4", fft_length="4")  # operand's last dim must be 3
    with pytest.raises(ParamError, match="parameter 'fft_type'.*FFT, IFFT, RFFT, IRFFT"):
        make_example("fft", params={"fft_type": "DCT"})


# --- shape: optimization_barrier -------------------------------------------------------------

def test_optimization_barrier_is_the_identity():
    ex, outs = example("optimization_barrier")
    assert len(outs) == 2
    for x, y in zip(ex.inputs, outs, strict=True):
        np.testing.assert_array_equal(x, y)
    ex, outs = example("optimization_barrier", count=3, dtype="i32")
    assert [o.tolist() for o in outs] == [x.tolist() for x in ex.inputs] and len(outs) == 3


def test_optimization_barrier_spec_example_and_bad_count():
    _, outs = example("optimization_barrier", "spec-example")
    assert [o.tolist() for o in outs] == [0.0, 1.0] and outs[0].dtype == np.float32
    with pytest.raises(ParamError, match="optimization_barrier"):
        make_example("optimization_barrier", params={"count": "0"})


# --- control flow: if, case, while -----------------------------------------------------------

def test_captures_are_main_arguments_but_not_operands():
    ex = make_example("if")
    assert ex.text.startswith("func.func @main(%pred: tensor<i1>, %x: tensor<2x3xf32>)")
    assert '"stablehlo.if"(%pred) (' in ex.text
    assert len(ex.inputs) == 2 and ex.inputs[1].tolist() == [[1, 2, 3], [4, 5, 6]]


@pytest.mark.parametrize("pred", [True, False])
def test_if_runs_the_branch_the_predicate_picks(pred):
    ex, (out,) = example("if", pred=str(pred).lower())
    x = ex.inputs[1]
    np.testing.assert_array_equal(out, x + 1 if pred else x * 2)
    ex, (out,) = example("if", pred=str(pred).lower(), true_branch="negate", false_branch="identity",
                         dtype="i32")
    np.testing.assert_array_equal(out, -ex.inputs[1] if pred else ex.inputs[1])


def test_if_spec_example_gives_both_branch_values():
    _, (out,) = example("if", "spec-example")
    assert out.dtype == np.int32 and int(out) == 10
    _, (out,) = example("if", "spec-example", pred="false")
    assert int(out) == 11


def test_if_bad_branch_is_a_param_error():
    with pytest.raises(ParamError, match="parameter 'true_branch'"):
        make_example("if", params={"true_branch": "square"})


@pytest.mark.parametrize("index,branch", [(0, 0), (1, 1), (2, 2), (3, 2), (-1, 2)])
def test_case_runs_the_indexed_branch_or_the_last(index, branch):
    ex, (out,) = example("case", index_value=index)
    assert int(ex.inputs[0]) == index
    np.testing.assert_array_equal(out, ex.inputs[1] + branch)


def test_case_spec_example():
    _, outs = example("case", "spec-example")
    assert [o.tolist() for o in outs] == [[1, 1], [1, 1]] and outs[0].dtype == np.int64


def test_case_needs_a_branch():
    bad("case", "C1", branches=0)


@pytest.mark.parametrize("start,trip_count", [(0, 3), (2, 5), (4, 0), (1, -2)])
def test_while_counts_and_accumulates(start, trip_count):
    ex, (i, acc) = example("while", start=start, trip_count=trip_count)
    _, acc0, x = ex.inputs
    n = max(trip_count, 0)
    assert int(i) == start + n
    np.testing.assert_array_equal(acc, acc0 + n * x)


def test_while_spec_example():
    _, (i, total) = example("while", "spec-example")
    # the spec lists 10 and 10, but i starts at 1: nine iterations, so the sum is 9
    # (the same known typo as tests/spec/test_spec_examples.py "while#1")
    assert int(i) == 10 and int(total) == 9


def test_while_bad_param_is_a_param_error():
    with pytest.raises(ParamError, match="parameter 'trip_count'"):
        make_example("while", params={"trip_count": "many"})


# --- helpers ---------------------------------------------------------------------------------

def test_float_attr():
    assert float_attr(0.001) == "0.001 : f32" and float_attr(0) == "0.0 : f32"
    assert float_attr(1e-5, "f64") == "1e-05 : f64"
    with pytest.raises(ValueError):
        float_attr(float("nan"))


def test_new_schema_errors_are_hlolab_errors():
    for name, params in [("fft", {"fft_length": "2,2,4"}), ("while", {"start": "x"}),
                         ("cholesky", {"a": "2x3"})]:
        with pytest.raises(HloLabError):
            make_example(name, params=params)
