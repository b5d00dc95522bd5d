"""uniform_quantize / uniform_dequantize: the spec's examples, and every storage type
(i2 … i32, ui2 … ui32) and expressed type (f16, bf16, f32, f64), per-tensor and per-axis,
with ties, saturation, NaN and infinities, against a slow reference written here from the
spec's Notation formulas (one Python loop per element)."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

from hlolab.errors import VerificationError
from hlolab.interp.engine import Interpreter
from hlolab.interp.single import apply_op
from hlolab.ir.parser import parse_module
from hlolab.ops.registry import OpCall, lookup
from hlolab.trace.explain import format_explanation
from hlolab.types import QuantizedElementType, TensorType, element_type

STORAGE = ["i2", "i4", "i8", "i16", "i32", "ui2", "ui4", "ui8", "ui16", "ui32"]
EXPRESSED = ["f16", "bf16", "f32", "f64"]


# --- the slow reference: the spec's formulas, element by element ---------------------------

def params(qt: QuantizedElementType, index: tuple[int, ...]) -> tuple[float, int]:
    k = index[qt.axis] if qt.axis is not None else 0
    return qt.scales[k], qt.zero_points[k]


def bounds(qt: QuantizedElementType) -> tuple[int, int]:
    lo = qt.storage_min if qt.storage_min is not None else qt.storage.min_value()
    hi = qt.storage_max if qt.storage_max is not None else qt.storage.max_value()
    return int(lo), int(hi)


def ref_dequantize(q: np.ndarray, qt: QuantizedElementType) -> np.ndarray:
    """convert(x_storage - zero_point, expressed) * scale, each in the expressed type."""
    et = qt.expressed.dtype.type
    out = np.empty(q.shape, qt.expressed.dtype)
    with np.errstate(all="ignore"):
        for index in np.ndindex(q.shape):
            scale, zp = params(qt, index)
            out[index] = et(int(q[index]) - zp) * et(scale)
    return out


def ref_quantize(x: np.ndarray, qt: QuantizedElementType) -> np.ndarray:
    """x / scale + zero_point in the expressed type, clamped to [storage_min, storage_max],
    rounded half to even (Python's round), NaN -> 0."""
    et = qt.expressed.dtype.type
    lo, hi = bounds(qt)
    out = np.empty(x.shape, qt.storage.dtype)
    for index in np.ndindex(x.shape):
        scale, zp = params(qt, index)
        with np.errstate(all="ignore"):  # f16 overflows to inf as the spec's convert does
            v = float(et(et(et(x[index]) / et(scale)) + et(zp)))
        if math.isnan(v):
            out[index] = 0
            continue
        with np.errstate(all="ignore"):
            v = min(max(v, float(et(lo))), float(et(hi)))
        r = round(v) if math.isfinite(v) else (hi if v > 0 else lo)
        out[index] = min(max(int(r), lo), hi)
    return out


# --- helpers ---------------------------------------------------------------------------------

def qtype(storage: str = "i8", expressed: str = "f32", scales=(0.5,), zero_points=(0,), axis=None,
          lo=None, hi=None) -> QuantizedElementType:
    return QuantizedElementType(element_type(storage), element_type(expressed), tuple(scales),
                                tuple(zero_points), axis, lo, hi)


def quantize(x: np.ndarray, qt: QuantizedElementType) -> np.ndarray:
    (r,) = apply_op("stablehlo.uniform_quantize", [x], result_types=[TensorType(x.shape, qt)],
                    operand_types=[TensorType(x.shape, qt.expressed)])
    return r


def dequantize(q: np.ndarray, qt: QuantizedElementType) -> np.ndarray:
    (r,) = apply_op("stablehlo.uniform_dequantize", [q], result_types=[TensorType(q.shape, qt.expressed)],
                    operand_types=[TensorType(q.shape, qt)])
    return r


def requantize(q: np.ndarray, src: QuantizedElementType, dst: QuantizedElementType) -> np.ndarray:
    (r,) = apply_op("stablehlo.uniform_quantize", [q], result_types=[TensorType(q.shape, dst)],
                    operand_types=[TensorType(q.shape, src)])
    return r


def same(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape
    a, b = got.astype(np.float64), want.astype(np.float64)
    assert np.array_equal(a, b, equal_nan=True), (got, want)


def edge_values(qt: QuantizedElementType, n: int, seed: int) -> np.ndarray:
    """Ties (k + 0.5 after scaling), the bounds and beyond, infinities, NaN, zeros, randoms."""
    rng = np.random.default_rng(seed)
    lo, hi = bounds(qt)
    scale, zp = qt.scales[0], qt.zero_points[0]
    real = lambda q: (q - zp) * scale  # noqa: E731
    ties = [real(k + 0.5) for k in range(max(lo, -6), min(hi, 6))]
    edges = [real(lo), real(hi), real(lo) - scale * 0.5, real(hi) + scale * 0.5, real(lo) * 4 - 1,
             real(hi) * 4 + 1, np.inf, -np.inf, np.nan, 0.0, -0.0]
    span = max(abs(real(lo)), abs(real(hi)))
    rand = rng.uniform(-1.2 * span, 1.2 * span, size=n)
    with np.errstate(over="ignore"):  # beyond f16: inf, an edge value too
        return np.array(ties + edges + list(rand), np.float64).astype(qt.expressed.dtype)


# --- the spec's examples -----------------------------------------------------------------------

SPEC_Q = "!quant.uniform<i8:f32:0, {0.1:-30,0.5:-20}>"


def run1(text: str, args: list[np.ndarray]) -> np.ndarray:
    return Interpreter(parse_module(text)).run(None, args)[0]


def test_spec_example_uniform_quantize():
    text = (f"func.func @main(%x: tensor<2xf32>) -> tensor<2x{SPEC_Q}> {{\n"
            f'  %r = "stablehlo.uniform_quantize"(%x) : (tensor<2xf32>) -> tensor<2x{SPEC_Q}>\n'
            f"  return %r : tensor<2x{SPEC_Q}>\n}}")
    r = run1(text, [np.array([4.0, 15.0], np.float32)])
    assert r.dtype == np.int8 and r.tolist() == [10, 10]


def test_spec_example_requantize():
    dst = "!quant.uniform<i8:f32:0, {0.1:-20,0.2:-30}>"
    text = (f"func.func @main(%x: tensor<2x{SPEC_Q}>) -> tensor<2x{dst}> {{\n"
            f'  %r = "stablehlo.uniform_quantize"(%x) : (tensor<2x{SPEC_Q}>) -> tensor<2x{dst}>\n'
            f"  return %r : tensor<2x{dst}>\n}}")
    r = run1(text, [np.array([10, 10], np.int8)])
    assert r.dtype == np.int8 and r.tolist() == [20, 45]


def test_spec_example_uniform_dequantize():
    text = (f"func.func @main(%x: tensor<2x{SPEC_Q}>) -> tensor<2xf32> {{\n"
            f'  %r = "stablehlo.uniform_dequantize"(%x) : (tensor<2x{SPEC_Q}>) -> tensor<2xf32>\n'
            f"  return %r : tensor<2xf32>\n}}")
    r = run1(text, [np.array([10, 10], np.int8)])
    assert r.dtype == np.float32
    # (10 + 30) * f32(0.1) and (10 + 20) * 0.5, in f32
    assert r.tolist() == [float(np.float32(40) * np.float32(0.1)), 15.0]
    np.testing.assert_allclose(r, [4.0, 15.0], rtol=1e-6)


# --- every storage and expressed type, against the reference ------------------------------------

def _params_for(storage: str) -> tuple[float, int]:
    st = element_type(storage)
    lo, hi = int(st.min_value()), int(st.max_value())
    zp = (lo + hi) // 2 + (1 if st.bits > 2 else 0)  # inside the range, not 0 where possible
    scale = 0.3 if st.bits <= 8 else 0.0078125  # an inexact scale and a power of two
    return scale, zp


@pytest.mark.parametrize("expressed", EXPRESSED)
@pytest.mark.parametrize("storage", STORAGE)
def test_per_tensor_quantize_and_dequantize_match_the_reference(storage, expressed):
    scale, zp = _params_for(storage)
    qt = qtype(storage, expressed, (scale,), (zp,))
    x = edge_values(qt, 64, seed=len(storage) * 7 + len(expressed))
    q = quantize(x, qt)
    same(q, ref_quantize(x, qt))
    same(dequantize(q, qt), ref_dequantize(q, qt))


@pytest.mark.parametrize("storage", STORAGE)
def test_every_storage_value_round_trips(storage):
    """quantize(dequantize(q)) = q for each storage value (exhaustive up to 16 bits; a sample
    of i32/ui32 where f64 holds q - zero_point exactly)."""
    st = element_type(storage)
    lo, hi = int(st.min_value()), int(st.max_value())
    scale, zp = _params_for(storage)
    expressed = "f64" if st.bits > 8 else "f32"
    qt = qtype(storage, expressed, (scale,), (zp,))
    if st.bits <= 16:
        q = np.arange(lo, hi + 1, dtype=np.int64)
    else:
        q = np.concatenate([np.arange(lo, lo + 300), np.arange(hi - 300, hi + 1),
                            np.random.default_rng(1).integers(lo, hi, 2000)])
    q = q.astype(st.dtype)
    f = dequantize(q, qt)
    same(f, ref_dequantize(q, qt))
    same(quantize(f, qt), q)


@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("storage, expressed", [("i8", "f32"), ("ui4", "bf16"), ("i16", "f16"),
                                                ("ui8", "f64"), ("i2", "f32")])
def test_per_axis_matches_the_reference(axis, storage, expressed):
    shape = (3, 4, 2)
    st = element_type(storage)
    lo, hi = int(st.min_value()), int(st.max_value())
    n = shape[axis]
    rng = np.random.default_rng(axis)
    scales = tuple(float(s) for s in rng.choice([0.1, 0.25, 0.7, 2.0, 0.015625], n))
    zero_points = tuple(int(z) for z in rng.integers(lo, hi + 1, n))
    qt = qtype(storage, expressed, scales, zero_points, axis)
    span = max(abs(lo), abs(hi)) * max(scales) * 1.3
    x = rng.uniform(-span, span, size=shape)
    x.flat[:4] = [np.nan, np.inf, -np.inf, 0.0]
    with np.errstate(over="ignore"):
        x = x.astype(qt.expressed.dtype)
    q = quantize(x, qt)
    same(q, ref_quantize(x, qt))
    same(dequantize(q, qt), ref_dequantize(q, qt))
    # the slices really use their own parameters: slice k alone, per-tensor, agrees
    for k in range(n):
        sl = tuple(k if d == axis else slice(None) for d in range(3))
        alone = qtype(storage, expressed, (scales[k],), (zero_points[k],))
        same(q[sl], quantize(np.ascontiguousarray(x[sl]), alone))


def test_ties_round_half_to_even():
    qt = qtype("i8", "f32", (1.0,), (0,))
    x = np.array([0.5, 1.5, 2.5, 3.5, -0.5, -1.5, -2.5, 126.5, -127.5], np.float32)
    assert quantize(x, qt).tolist() == [0, 2, 2, 4, 0, -2, -2, 126, -128]
    # the tie after the zero point is added: 0.75 / 0.5 + 3 = 4.5 -> 4
    assert quantize(np.array([0.75, 1.25], np.float32), qtype("i8", "f32", (0.5,), (3,))).tolist() == [4, 6]


def test_saturation_nan_and_infinities():
    qt = qtype("ui8", "f32", (0.5,), (10,))
    x = np.array([1e30, -1e30, np.inf, -np.inf, np.nan, -5.0, -5.25, 122.5, 122.75], np.float32)
    # -5 / 0.5 + 10 = 0; -5.25 -> -0.5 -> clamp 0; 122.5 -> 255; 122.75 -> 255.5 -> clamp 255
    assert quantize(x, qt).tolist() == [255, 0, 255, 0, 0, 0, 0, 255, 255]


def test_storage_min_and_max_narrow_the_range():
    qt = qtype("i8", "f32", (1.0,), (0,), lo=-100, hi=100)
    x = np.array([-101.0, -100.4, 99.5, 100.5, 500.0], np.float32)
    q = quantize(x, qt)
    assert q.tolist() == [-100, -100, 100, 100, 100]
    same(q, ref_quantize(x, qt))


def test_expressed_type_bounds_rounded_outwards_stay_in_range():
    # f16 rounds storage_max 32767 to 32768: the result is still an i16 within range
    qt = qtype("i16", "f16", (1.0,), (0,))
    q = quantize(np.array([40000.0, -40000.0, 32760.0, 32752.0], np.float16), qt)
    # f16(32760) = 32768 (f16 steps by 16 there), clamped to 32768, stored as 32767
    assert q.dtype == np.int16 and q.tolist() == [32767, -32768, 32767, 32752]


def test_int4_and_int2_storage_are_ml_dtypes_arrays():
    for storage, dt in (("i4", ml_dtypes.int4), ("ui4", ml_dtypes.uint4), ("i2", ml_dtypes.int2)):
        qt = qtype(storage, "f32", (1.0,), (0,))
        q = quantize(np.array([-9.0, 1.0, 9.0], np.float32), qt)
        lo, hi = bounds(qt)
        assert q.dtype == np.dtype(dt)
        assert q.astype(np.int64).tolist() == [max(lo, -9), 1, min(hi, 9)]


def test_requantize_per_tensor_and_per_axis_match_the_reference():
    src = qtype("i8", "f32", (0.1, 0.5), (-30, -20), axis=1)
    dst = qtype("ui8", "f32", (0.07,), (128,))
    q = np.array([[-128, 127], [0, 5], [17, -90]], np.int8)
    got = requantize(q, src, dst)
    same(got, ref_quantize(ref_dequantize(q, src), dst))
    back = qtype("i8", "f32", (0.2, 0.3), (0, 1), axis=1)
    same(requantize(got, dst, back), ref_quantize(ref_dequantize(got, dst), back))


def test_batched_application_inside_a_region():
    # a per-element region (map) runs uniform ops with batch dims in front
    q = "!quant.uniform<i8:f32, 0.25:2>"
    text = (f"func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {{\n"
            f'  %r = "stablehlo.map"(%x) ({{\n'
            f"  ^bb0(%a: tensor<f32>):\n"
            f'    %q = "stablehlo.uniform_quantize"(%a) : (tensor<f32>) -> tensor<{q}>\n'
            f'    %d = "stablehlo.uniform_dequantize"(%q) : (tensor<{q}>) -> tensor<f32>\n'
            f"    stablehlo.return %d : tensor<f32>\n"
            f"  }}) {{dimensions = array<i64: 0>}} : (tensor<4xf32>) -> tensor<4xf32>\n"
            f"  return %r : tensor<4xf32>\n}}")
    r = run1(text, [np.array([0.1, 0.125, 0.3, 100.0], np.float32)])
    # 0.1 / 0.25 + 2 = 2.4 -> 2 -> 0.0; 0.125 -> 2.5 -> 2 -> 0.0; 0.3 -> 3.2 -> 3 -> 0.25; 100 -> 127
    assert r.tolist() == [0.0, 0.0, 0.25, 31.25]


# --- constraints --------------------------------------------------------------------------------

def _text(op: str, t_in: str, t_out: str) -> str:
    return (f"func.func @main(%x: {t_in}) -> {t_out} {{\n"
            f'  %r = "stablehlo.{op}"(%x) : ({t_in}) -> {t_out}\n  return %r : {t_out}\n}}')


@pytest.mark.parametrize("op, t_in, t_out, label", [
    ("uniform_quantize", "tensor<2xi8>", "tensor<2x!quant.uniform<i8:f32, 0.5>>", "(I1)"),
    ("uniform_quantize", "tensor<2xf32>", "tensor<3x!quant.uniform<i8:f32, 0.5>>", "(C1)"),
    ("uniform_quantize", "tensor<2xf16>", "tensor<2x!quant.uniform<i8:f32, 0.5>>", "(C2)"),
    ("uniform_quantize", "tensor<2x!quant.uniform<i8:f16, 0.5>>", "tensor<2x!quant.uniform<i8:f32, 0.5>>",
     "(C2)"),
    ("uniform_dequantize", "tensor<2xf32>", "tensor<2xf32>", "(I1)"),
    ("uniform_dequantize", "tensor<2x!quant.uniform<i8:f32, 0.5>>", "tensor<3xf32>", "(C1)"),
    ("uniform_dequantize", "tensor<2x!quant.uniform<i8:f32, 0.5>>", "tensor<2xf16>", "(C2)"),
])
def test_constraints(op, t_in, t_out, label):
    with pytest.raises(VerificationError) as e:
        Interpreter(parse_module(_text(op, t_in, t_out)))
    assert f"{op} {label}" in str(e.value)


# --- explain -------------------------------------------------------------------------------------

def test_explain_shows_scaling_clamping_and_rounding():
    qt = qtype("i8", "f32", (0.25,), (120,))
    x = np.array([6.0, 0.375], np.float32)
    module = parse_module(_text("uniform_quantize", "tensor<2xf32>", f"tensor<2x{qt}>"))
    op = next(o for o in module.walk() if o.name == "stablehlo.uniform_quantize")
    call = OpCall(op)
    out = [quantize(x, qt)]
    d = lookup("stablehlo.uniform_quantize")
    e = d.explain(call, [x], out, 0, (0,))
    steps = {s.name: s for s in e.steps}
    assert steps["x_scaled_add_zp"].value == 144.0
    assert steps["x_clamped"].value == 127.0 and steps["x_clamped"].before_clamp == 144.0
    assert steps["result"].value == e.value == 127
    e = d.explain(call, [x], out, 0, (1,))  # 0.375 / 0.25 + 120 = 121.5: a tie, to 122
    steps = {s.name: s for s in e.steps}
    assert steps["x_scaled_add_zp"].value == 121.5 and steps["x_clamped"].before_clamp is None
    assert steps["x_rounded"].value == 122.0 and e.value == 122
    assert "round_nearest_even" in format_explanation(e)


def test_explain_dequantize_per_axis_uses_the_slice_parameters():
    qt = qtype("i8", "f32", (0.1, 0.5), (-30, -20), axis=0)
    module = parse_module(_text("uniform_dequantize", f"tensor<2x{qt}>", "tensor<2xf32>"))
    op = next(o for o in module.walk() if o.name == "stablehlo.uniform_dequantize")
    q = np.array([10, 10], np.int8)
    e = lookup("stablehlo.uniform_dequantize").explain(OpCall(op), [q], [dequantize(q, qt)], 0, (1,))
    (step,) = e.steps
    assert str(step.substituted) == "(10 - (-20)) * 0.5"
    assert step.value == e.value == 15.0
