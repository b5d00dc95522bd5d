"""compare, select, clamp: spec examples, edge values, constraints, provenance.
(Bit-exact comparisons with XLA are in test_conversion_oracle.py.)"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hlolab.errors import VerificationError
from hlolab.interp.single import apply_op, build_op, evaluate_op
from hlolab.ir.attrs import EnumAttr, IntegerAttr
from hlolab.numerics import from_bits
from hlolab.ops.compare import CompareAttrs, total_order_key
from hlolab.ops.record import Attrs, InferError, type_admits
from hlolab.ops.registry import OpCall, lookup
from hlolab.ops.verify import verify_op
from hlolab.trace.provenance import Source, Target
from hlolab.types import (
    ALL_ELEMENT_TYPE_NAMES,
    QuantizedElementType,
    TensorType,
    element_type,
    element_type_of_dtype,
    tensor_type,
)


def t(shape: tuple[int | None, ...], elem: Any) -> TensorType:
    return tensor_type(shape, elem)


def attrs(direction: str, compare_type: str | None = None) -> dict:
    a = {"comparison_direction": EnumAttr("stablehlo", "comparison_direction", direction)}
    if compare_type is not None:
        a["compare_type"] = EnumAttr("stablehlo", "comparison_type", compare_type)
    return a


def compare(lhs: np.ndarray, rhs: np.ndarray, direction: str, compare_type: str | None = None,
            elem: str | None = None) -> list:
    types = [t(lhs.shape, elem)] * 2 if elem else None
    out = apply_op("stablehlo.compare", [lhs, rhs], attrs(direction, compare_type),
                   [t(lhs.shape, "i1")], types)[0]
    assert out.dtype == np.bool_
    return out.astype(int).tolist()


def fails(constraint: str | None, name: str, inputs: list, result_types: list,
          attributes: dict | None = None, operand_types: list | None = None) -> str:
    with pytest.raises(VerificationError) as info:
        apply_op(name, inputs, attributes or {}, result_types, operand_types)
    assert info.value.constraint == constraint, str(info.value)
    return info.value.message


def f64_bits(*hexes: int) -> np.ndarray:
    return np.array(hexes, np.uint64).view(np.float64)


# --- compare -------------------------------------------------------------------------------

def test_spec_example_compare():
    lhs, rhs = np.array([1.0, 3.0], np.float32), np.array([1.1, 2.9], np.float32)
    assert compare(lhs, rhs, "LT", "FLOAT") == [1, 0]


SIGNED_L, SIGNED_R = np.array([-2, -1, 0, 2, 2], np.int64), np.array([-2, -2, 0, 1, 2], np.int64)


@pytest.mark.parametrize("direction,want", [
    ("EQ", [1, 0, 1, 0, 1]), ("NE", [0, 1, 0, 1, 0]), ("GE", [1, 1, 1, 1, 1]),
    ("GT", [0, 1, 0, 1, 0]), ("LE", [1, 0, 1, 0, 1]), ("LT", [0, 0, 0, 0, 0]),
])
def test_compare_signed(direction, want):
    assert compare(SIGNED_L, SIGNED_R, direction, "SIGNED") == want
    assert compare(SIGNED_L, SIGNED_R, direction) == want  # default: SIGNED


def test_compare_unsigned_uses_unsigned_order():
    lhs = np.array([0, 2**64 - 1, 5], np.uint64)
    rhs = np.array([2**63, 1, 5], np.uint64)
    assert compare(lhs, rhs, "LT", "UNSIGNED") == [1, 0, 0]
    assert compare(lhs, rhs, "GE") == [0, 1, 1]
    i4l, i4r = np.array([-8, 7, -1], ml_dtypes.int4), np.array([7, -8, -1], ml_dtypes.int4)
    assert compare(i4l, i4r, "LT") == [1, 0, 0]
    u4l, u4r = np.array([15, 0], ml_dtypes.uint4), np.array([1, 0], ml_dtypes.uint4)
    assert compare(u4l, u4r, "GT") == [1, 0]


@pytest.mark.parametrize("direction,want", [
    ("EQ", [1, 0, 0, 1]), ("NE", [0, 1, 1, 0]), ("GE", [1, 1, 0, 1]),
    ("GT", [0, 1, 0, 0]), ("LE", [1, 0, 1, 1]), ("LT", [0, 0, 1, 0]),
])
def test_compare_booleans_false_below_true(direction, want):
    lhs, rhs = np.array([True, True, False, False]), np.array([True, False, True, False])
    assert compare(lhs, rhs, direction, "UNSIGNED") == want


# -NaN, -NaN, -Inf, -Inf, -2, -2, -0, -0, +0, 1, 2, +Inf, +NaN, +NaN(payload)
F_L = f64_bits(0xFFF0000000000001, 0xFFF0000000000001, 0xFFF0000000000000, 0xFFF0000000000000,
               0xC000000000000000, 0xC000000000000000, 0x8000000000000000, 0x8000000000000000,
               0, 0x3FF0000000000000, 0x4000000000000000, 0x7FF0000000000000,
               0x7FF0000000000001, 0x7FF0000000000001)
# -NaN, +NaN, -Inf, +Inf, -2, -1, -0, +0, +0, 2, 2, +Inf, +NaN, +NaN(other payload)
F_R = f64_bits(0xFFF0000000000001, 0x7FF0000000000001, 0xFFF0000000000000, 0x7FF0000000000000,
               0xC000000000000000, 0xBFF0000000000000, 0x8000000000000000, 0,
               0, 0x4000000000000000, 0x4000000000000000, 0x7FF0000000000000,
               0x7FF0000000000001, 0x7FFFFFFFFFFFFFFF)


@pytest.mark.parametrize("direction,want", [
    ("EQ", [0, 0, 1, 0, 1, 0, 1, 1, 1, 0, 1, 1, 0, 0]),
    ("NE", [1, 1, 0, 1, 0, 1, 0, 0, 0, 1, 0, 0, 1, 1]),
    ("GE", [0, 0, 1, 0, 1, 0, 1, 1, 1, 0, 1, 1, 0, 0]),
    ("GT", [0] * 14),
    ("LE", [0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0]),
    ("LT", [0, 0, 0, 1, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0]),
])
def test_compare_float_is_ieee_quiet(direction, want):
    assert compare(F_L, F_R, direction, "FLOAT") == want
    assert compare(F_L, F_R, direction) == want  # default: FLOAT


@pytest.mark.parametrize("direction,want", [
    # -0 < +0; NaNs are ordered by sign and payload and equal to themselves
    ("EQ", [1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 1, 1, 0]),
    ("LT", [0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0, 0, 1]),
    ("GT", [0] * 14),
    ("LE", [1] * 14),
    ("GE", [1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 1, 1, 0]),
    ("NE", [0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0, 0, 1]),
])
def test_compare_totalorder(direction, want):
    assert compare(F_L, F_R, direction, "TOTALORDER") == want


def _all_values(name: str) -> np.ndarray:
    dt = element_type(name).dtype
    n = 1 << element_type(name).bits
    return from_bits(np.arange(n, dtype=np.uint64), dt)


@pytest.mark.parametrize("name", [n for n in ALL_ELEMENT_TYPE_NAMES
                                  if element_type(n).is_float and element_type(n).bits <= 16])
def test_totalorder_key_sorts_every_encoding(name):
    x = _all_values(name)
    order = np.argsort(total_order_key(x), kind="stable")
    with np.errstate(invalid="ignore"):
        s = x[order].astype(np.float64)
    finite = ~np.isnan(s)
    # the numbers come in increasing order (-0.0 before +0.0), NaNs only at the ends
    assert np.all(np.diff(s[finite]) >= 0)
    zeros = np.flatnonzero(s == 0)
    assert np.all(np.signbit(s[zeros]) == (np.arange(len(zeros)) < len(zeros) - 1))
    nan_at = np.flatnonzero(~finite)
    fnuz = "FNUZ" in name
    if fnuz:  # the one NaN (sign bit set, like -0.0) sorts first
        assert nan_at.tolist() == [0]
    elif len(nan_at):
        neg = np.signbit(s[nan_at])
        signed = name != "f8E8M0FNU"
        assert np.all(nan_at[neg] < len(s) // 2) and np.all(nan_at[~neg] >= len(s) // 2 if signed
                                                            else nan_at[~neg] == len(s) - 1)
    # keys are a bijection on encodings
    assert len(np.unique(total_order_key(x))) == len(x)


def test_totalorder_bf16_and_f8():
    x = np.array([-np.nan, -np.inf, -1.0, -0.0, 0.0, 1e-40, np.inf, np.nan], ml_dtypes.bfloat16)
    assert compare(x[:-1], x[1:], "LT", "TOTALORDER") == [1] * 7
    assert compare(x[:-1], x[1:], "LT", "FLOAT") == [0, 1, 1, 0, 1, 1, 0]
    e4 = np.array([-448, -0.0, 0.0, 448, np.nan], ml_dtypes.float8_e4m3fn)
    assert compare(e4[:-1], e4[1:], "LT", "TOTALORDER") == [1, 1, 1, 1]
    # FNUZ: NaN (0x80), -max, -min, +0, +max in increasing total order
    fnuz = np.array([0x80, 0xFF, 0x81, 0x00, 0x7F], np.uint8).view(ml_dtypes.float8_e4m3fnuz)
    assert compare(fnuz[:-1], fnuz[1:], "LT", "TOTALORDER") == [1, 1, 1, 1]
    assert compare(fnuz, fnuz, "EQ", "TOTALORDER") == [1] * 5
    assert compare(fnuz, fnuz, "EQ", "FLOAT") == [0, 1, 1, 1, 1]


@pytest.mark.parametrize("direction,want", [
    ("EQ", [0, 0, 1, 0]), ("NE", [1, 1, 0, 1]),
])
def test_compare_complex_equality(direction, want):
    # (NaN, +0) vs (NaN, -0); (+0, NaN) vs (-0, NaN); (-0, +0) vs (+0, +0); (2, 2) vs (2, 1)
    nan = float("nan")
    lhs = np.array([complex(nan, 0.0), complex(0.0, nan), complex(-0.0, 0.0), 2 + 2j], np.complex128)
    rhs = np.array([complex(nan, -0.0), complex(-0.0, nan), 0j, 2 + 1j], np.complex128)
    assert compare(lhs, rhs, direction, "FLOAT") == want
    assert compare(lhs, rhs, direction) == want


@pytest.mark.parametrize("direction,want", [
    ("LT", [0, 1, 0, 0, 1, 0]), ("LE", [1, 1, 0, 0, 1, 0]),
    ("GT", [0, 0, 1, 1, 0, 0]), ("GE", [1, 0, 1, 1, 0, 0]),
])
def test_compare_complex_is_lexicographic(direction, want):
    nan = float("nan")
    lhs = np.array([1 + 2j, 1 + 2j, 1 + 3j, 2 + 0j, 1 + 9j, complex(1, nan)], np.complex64)
    rhs = np.array([1 + 2j, 1 + 3j, 1 + 2j, 1 + 5j, 2 + 0j, 1 + 1j], np.complex64)
    assert compare(lhs, rhs, direction) == want


@given(st.lists(st.tuples(st.floats(width=32), st.floats(width=32)), min_size=1, max_size=20))
def test_float_compare_matches_python(pairs):
    a = np.array([p[0] for p in pairs], np.float32)
    b = np.array([p[1] for p in pairs], np.float32)
    assert compare(a, b, "LT") == [int(x < y) for x, y in pairs]
    assert compare(a, b, "NE") == [int(x != y) for x, y in pairs]


def test_compare_constraints():
    x, y = np.zeros(2, np.float32), np.zeros(2, np.float64)
    b2 = [t((2,), "i1")]
    assert "f32" in fails("C1", "stablehlo.compare", [x, y], b2, attrs("EQ"))
    fails("C2", "stablehlo.compare", [x, np.zeros(3, np.float32)], b2, attrs("EQ"))
    fails("C2", "stablehlo.compare", [x, x], [t((3,), "i1")], attrs("EQ"))
    msg = fails("C3", "stablehlo.compare", [x, x], b2, attrs("EQ", "SIGNED"))
    assert "SIGNED" in msg and "FLOAT or TOTALORDER" in msg
    i = np.zeros(2, np.int32)
    fails("C3", "stablehlo.compare", [i, i], b2, attrs("LT", "UNSIGNED"))
    fails("C3", "stablehlo.compare", [i.astype(np.uint32)] * 2, b2, attrs("LT", "SIGNED"))
    fails("C3", "stablehlo.compare", [np.zeros(2, bool)] * 2, b2, attrs("LT", "SIGNED"))
    fails("C3", "stablehlo.compare", [np.zeros(2, np.complex64)] * 2, b2, attrs("EQ", "TOTALORDER"))
    fails("C3", "stablehlo.compare", [x, x], b2, attrs("EQ", "PARTIAL"))
    assert "XX" in fails(None, "stablehlo.compare", [x, x], b2, attrs("XX"))
    fails(None, "stablehlo.compare", [x, x], [t((2,), "i8")], attrs("EQ"))
    fails(None, "stablehlo.compare", [x, x], b2, {})


def test_compare_i32_and_si32_are_the_same_type():
    x = np.array([1, 2], np.int32)
    out = apply_op("stablehlo.compare", [x, x], attrs("EQ", "SIGNED"), [t((2,), "i1")],
                   [t((2,), "i32"), t((2,), "si32")])[0]
    assert out.tolist() == [True, True]


def test_compare_quantized_compares_the_dequantized_values():
    # dequantize_compare: lhs [2, 4] * 0.5 = [1, 2], rhs [4, 4] * 0.25 = [1, 1] (storage says the opposite)
    q = TensorType((2,), QuantizedElementType(element_type("i8"), element_type("f32"), (0.5,), (0,)))
    q2 = TensorType((2,), QuantizedElementType(element_type("i8"), element_type("f32"), (0.25,), (0,)))
    x, y = np.array([2, 4], np.int8), np.array([4, 4], np.int8)
    assert apply_op("stablehlo.compare", [x, y], attrs("EQ"), [t((2,), "i1")], [q, q2])[0].tolist() == \
        [True, False]
    assert apply_op("stablehlo.compare", [x, y], attrs("GT"), [t((2,), "i1")], [q, q2])[0].tolist() == \
        [False, True]


# --- select --------------------------------------------------------------------------------

def test_spec_example_select():
    pred = np.array([[False, True], [True, False]])
    on_true, on_false = np.array([[1, 2], [3, 4]], np.int32), np.array([[5, 6], [7, 8]], np.int32)
    out = apply_op("stablehlo.select", [pred, on_true, on_false], {}, [t((2, 2), "i32")])[0]
    assert out.dtype == np.int32 and out.tolist() == [[5, 2], [3, 8]]


def test_select_rank0_pred_picks_a_whole_tensor():
    a, b = np.array([2, 3, -1], np.int64), np.array([3, 7, -3], np.int64)
    for p, want in ((False, [3, 7, -3]), (True, [2, 3, -1])):
        out = apply_op("stablehlo.select", [np.array(p), a, b], {}, [t((3,), "i64")])[0]
        assert out.tolist() == want


def test_select_keeps_bits_of_every_type():
    pred = np.array([True, False, True])
    for dt in (ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn, ml_dtypes.int4, np.complex64):
        a = np.array([-0.0, 1, 2], dt) if dt != ml_dtypes.int4 else np.array([-8, 1, 7], dt)
        b = np.array([5, 6, 7], dt) if dt != ml_dtypes.int4 else np.array([3, 4, 5], dt)
        et = element_type_of_dtype(np.dtype(dt))
        out = apply_op("stablehlo.select", [pred, a, b], {}, [t((3,), et)])[0]
        assert out.dtype == np.dtype(dt)
        assert out.tobytes() == np.where(pred, a, b).tobytes()
    out = apply_op("stablehlo.select", [pred, np.array([-0.0, 0, 0]), np.zeros(3)], {},
                   [t((3,), "f64")])[0]
    assert np.signbit(out).tolist() == [True, False, False]


def test_select_constraints():
    a = np.zeros((2, 2), np.float32)
    r = [t((2, 2), "f32")]
    fails("I1", "stablehlo.select", [np.zeros((2, 2), np.int8), a, a], r)
    msg = fails("C1", "stablehlo.select", [np.zeros(2, bool), a, a], r)
    assert "[2]" in msg and "[2, 2]" in msg
    fails("C2", "stablehlo.select", [np.array(True), a, a.astype(np.float64)], r)
    fails("C2", "stablehlo.select", [np.array(True), a, np.zeros((2, 3), np.float32)], r)
    fails("C2", "stablehlo.select", [np.array(True), a, a], [t((2, 2), "f64")])


# --- clamp ----------------------------------------------------------------------------------

def clamp(mn: Any, x: Any, mx: Any, elem: str) -> np.ndarray:
    dt = element_type(elem).dtype
    mn, x, mx = (np.asarray(v, dt) for v in (mn, x, mx))
    return apply_op("stablehlo.clamp", [mn, x, mx], {}, [t(x.shape, elem)])[0]


def test_spec_example_clamp():
    assert clamp([5, 10, 15], [3, 13, 23], [10, 15, 20], "i32").tolist() == [5, 13, 20]


def test_clamp_scalar_bounds():
    x = [2, 3, -1]
    assert clamp([0, 0, -2], x, 1, "i64").tolist() == [1, 1, -1]
    assert clamp(0, x, [1, 1, 4], "i64").tolist() == [1, 1, 0]
    assert clamp(0, x, 1, "i64").tolist() == [1, 1, 0]
    assert clamp(5, x, 1, "i64").tolist() == [1, 1, 1]  # min > max: max wins (applied last)
    assert clamp(2, [0, 15, 9], 9, "ui4").tolist() == [2, 9, 9]


def test_clamp_float_nan_and_signed_zeros():
    nan = float("nan")
    mn = [0.0, nan, 0.0, -0.0, 0.0, 2.0, -0.0, 0.0]
    x = [nan, 1.0, 1.0, 0.0, -0.0, 1.0, -0.0, 0.0]
    mx = [1.0, 2.0, nan, 1.0, 1.0, 1.0, 0.0, -0.0]
    for elem in ("f32", "f64", "bf16", "f16"):
        out = clamp(mn, x, mx, elem).astype(np.float64)
        assert np.isnan(out[:3]).all()
        assert out[3:].tolist() == [0.0, 0.0, 1.0, -0.0, -0.0]
        assert np.signbit(out[3:]).tolist() == [False, False, False, True, True]


def test_clamp_booleans_and_complex():
    out = clamp([False, True, False, True], [True, False, False, True], [False, True, True, True], "i1")
    assert out.tolist() == [False, True, False, True]
    z = clamp([1 + 1j, 1 + 1j, 0j], [1 + 0j, 1 + 5j, 3 + 3j], [2 + 2j, 1 + 2j, 1 + 9j], "complex<f32>")
    assert z.tolist() == [1 + 1j, 1 + 2j, 1 + 9j]  # lexicographic (real, imag)


@given(st.lists(st.integers(-100, 100), min_size=1, max_size=10), st.integers(-50, 0),
       st.integers(0, 50))
def test_clamp_integers_like_python(values, lo, hi):
    assert clamp(lo, values, hi, "i16").tolist() == [min(max(v, lo), hi) for v in values]


def test_clamp_constraints():
    x = np.zeros(3, np.float32)
    r = [t((3,), "f32")]
    assert "[2]" in fails("C1", "stablehlo.clamp", [np.zeros(2, np.float32), x, x], r)
    fails("C2", "stablehlo.clamp", [x, x, np.zeros(2, np.float32)], r)
    fails("C3", "stablehlo.clamp", [x, x, x.astype(np.float64)], r)
    fails("C4", "stablehlo.clamp", [x, x, x], [t((3,), "f64")])
    fails("C4", "stablehlo.clamp", [x, x, x], [t((4,), "f32")])


def test_aliases():
    for alias in ("Compare", "Eq", "Ne", "Ge", "Gt", "Le", "Lt"):
        assert lookup(alias).name == "stablehlo.compare"
    assert lookup("Select").name == "stablehlo.select" and lookup("Clamp").name == "stablehlo.clamp"


# --- provenance -----------------------------------------------------------------------------

def provenance(name: str, inputs: list, result_types: list, attributes: dict | None = None):
    op = build_op(name, inputs, attributes or {}, result_types)
    call = OpCall(op)
    outputs = evaluate_op(op, inputs, call)
    return lookup(name).provenance(call, inputs, outputs)


def test_compare_provenance_combines():
    x = np.zeros((2, 2), np.float32)
    p = provenance("stablehlo.compare", [x, x], [t((2, 2), "i1")], attrs("LT"))
    assert p.sources(0, (1, 0)) == [Source(0, (1, 0), "combine"), Source(1, (1, 0), "combine")]


def test_clamp_provenance_with_scalar_bounds():
    p = provenance("stablehlo.clamp", [np.array(0, np.int32), np.arange(3, dtype=np.int32),
                                       np.array([1, 1, 1], np.int32)], [t((3,), "i32")])
    assert p.sources(0, (2,)) == [Source(0, (), "combine"), Source(1, (2,), "combine"),
                                  Source(2, (2,), "combine")]
    assert p.targets(0, ()) == [Target(0, (k,), "combine") for k in range(3)]


def test_select_provenance_elementwise_pred():
    pred = np.array([[False, True], [True, False]])
    a, b = np.ones((2, 2), np.int32), np.zeros((2, 2), np.int32)
    p = provenance("stablehlo.select", [pred, a, b], [t((2, 2), "i32")])
    assert p.sources(0, (0, 0)) == [Source(0, (0, 0), "control"), Source(2, (0, 0), "copy")]
    assert p.sources(0, (0, 1)) == [Source(0, (0, 1), "control"), Source(1, (0, 1), "copy")]
    assert p.targets(1, (0, 0)) == []  # on_true[0, 0] was not chosen
    assert p.targets(2, (0, 0)) == [Target(0, (0, 0), "copy")]
    back = p.back(0, np.ones((2, 2), bool))
    assert back[(0, "control")].all()
    assert back[(1, "copy")].tolist() == pred.tolist()
    assert back[(2, "copy")].tolist() == (~pred).tolist()
    fwd = p.fwd(1, np.ones((2, 2), bool))
    assert list(fwd) == [(0, "copy")] and fwd[(0, "copy")].tolist() == pred.tolist()


def test_select_provenance_rank0_pred():
    a, b = np.ones(3, np.float32), np.zeros(3, np.float32)
    p = provenance("stablehlo.select", [np.array(False), a, b], [t((3,), "f32")])
    assert p.sources(0, (1,)) == [Source(0, (), "control"), Source(2, (1,), "copy")]
    assert p.targets(0, ()) == [Target(0, (k,), "control") for k in range(3)]
    assert p.back(0, np.array([False, True, False]))[(0, "control")].tolist() is True
    assert (1, "copy") not in p.back(0, np.ones(3, bool))


@pytest.mark.parametrize("name", ["i1", "i4", "ui8", "bf16", "f32", "f8E5M2FNUZ", "f4E2M1FN",
                                  "complex<f64>"])
def test_rank0_results_are_rank0_arrays(name):
    et = element_type(name)
    x, y = np.zeros((), et.dtype), np.ones((), et.dtype)
    types = ["FLOAT", "TOTALORDER"] if et.is_float else [None]
    for ctype in types:
        out = apply_op("stablehlo.compare", [x, y], attrs("LT", ctype), [t((), "i1")])[0]
        assert isinstance(out, np.ndarray) and out.shape == () and bool(out) is True
    out = apply_op("stablehlo.clamp", [x, y, y], {}, [t((), name)])[0]
    assert isinstance(out, np.ndarray) and out.shape == () and out.dtype == et.dtype
    assert out.tobytes() == y.tobytes()
    out = apply_op("stablehlo.select", [np.array(False), x, y], {}, [t((), name)])[0]
    assert isinstance(out, np.ndarray) and out.shape == () and out.tobytes() == y.tobytes()


def test_select_provenance_rank0_result():
    p = provenance("stablehlo.select", [np.array(True), np.array(1.0), np.array(2.0)], [t((), "f64")])
    assert p.sources(0, ()) == [Source(0, (), "control"), Source(1, (), "copy")]


# --- records and result type inference ---------------------------------------------------

def infer(name: str, *operand_types: Any, attributes: dict | None = None) -> list:
    opdef = lookup(f"stablehlo.{name}")
    op = build_op(opdef.name, [], attributes or {}, [], list(operand_types))
    return opdef.infer(OpCall(op).attrs, list(operand_types))


def infer_fails(label: str | None, name: str, *operand_types: Any) -> str:
    with pytest.raises(InferError) as info:
        infer(name, *operand_types, attributes=attrs("EQ") if name == "compare" else None)
    assert info.value.constraint == label, info.value.message
    return info.value.message


def quant(shape: tuple[int, ...], scale: float, storage: str = "i8") -> TensorType:
    return TensorType(shape, QuantizedElementType(element_type(storage), element_type("f32"), (scale,), (0,)))


def test_families_and_records():
    assert {lookup(f"stablehlo.{n}").family for n in ("compare", "select", "clamp")} == {"compare"}
    assert lookup("stablehlo.select").attrs is Attrs and lookup("stablehlo.clamp").attrs is Attrs
    assert CompareAttrs.ir_names() == {"comparison_direction", "compare_type"}


def test_compare_record_reads_and_writes_the_enums():
    def record(a: dict) -> CompareAttrs:
        return CompareAttrs.from_ir(a, lambda c, m: VerificationError("stablehlo.compare", c, m))

    rec = record(attrs("GE"))
    assert (rec.comparison_direction, rec.compare_type) == ("GE", None)
    assert rec.to_ir() == attrs("GE")  # no compare_type written when the text had none
    rec = record(attrs("LT", "TOTALORDER"))
    assert (rec.comparison_direction, rec.compare_type) == ("LT", "TOTALORDER")
    assert rec.to_ir() == attrs("LT", "TOTALORDER")
    assert CompareAttrs(comparison_direction="NE", compare_type="SIGNED").to_ir() == attrs("NE", "SIGNED")
    with pytest.raises(VerificationError, match="attribute 'comparison_direction' must be an enum"):
        record({"comparison_direction": IntegerAttr(1, element_type("i64"))})
    with pytest.raises(VerificationError, match="attribute 'compare_type' must be an enum"):
        record({**attrs("EQ"), "compare_type": EnumAttr("stablehlo", "comparison_direction", "EQ")})


def test_compare_reads_its_record_once():
    x = np.array([1.0, 2.0], np.float32)
    op = build_op("stablehlo.compare", [x, x], attrs("LE", "TOTALORDER"), [t((2,), "i1")])
    call = OpCall(op)
    assert evaluate_op(op, [x, x + 1], call)[0].tolist() == [True, True]
    assert op.record == CompareAttrs(comparison_direction="LE", compare_type="TOTALORDER")


def test_infer_compare():
    got = infer("compare", t((None, 3), "f32"), t((2, None), "f32"), attributes=attrs("LT"))
    assert got == [t((2, 3), "i1")]
    assert infer("compare", t((), "si32"), t((), "i32"), attributes=attrs("EQ")) == [t((), "i1")]
    assert "f32" in infer_fails("C1", "compare", t((2,), "f32"), t((2,), "f64"))
    infer_fails("C2", "compare", t((2,), "f32"), t((3,), "f32"))
    infer_fails(None, "compare", t((2,), "f32"))


def test_infer_select_ignores_a_rank0_pred():
    f32 = t((None, 3), "f32")
    assert infer("select", t((), "i1"), f32, t((2, None), "f32")) == [t((2, 3), "f32")]
    assert infer("select", t((2, None), "i1"), t((None, None), "f32"), f32) == [t((2, 3), "f32")]
    infer_fails("I1", "select", t((), "i8"), f32, f32)
    assert "shape(pred) = [3]" in infer_fails("C1", "select", t((3,), "i1"), f32, f32)
    infer_fails("C2", "select", t((), "i1"), f32, t((None, 3), "f64"))
    infer_fails("C2", "select", t((), "i1"), f32, t((None, 4), "f32"))
    (got,) = infer("select", t((), "i1"), quant((2,), 0.5), quant((2,), 2.0))
    assert type_admits(got, quant((2,), 4.0)) and not type_admits(got, quant((2,), 0.5, "i16"))
    infer_fails("C2", "select", t((), "i1"), quant((2,), 0.5), quant((2,), 0.5, "i16"))


def test_infer_clamp_ignores_rank0_bounds():
    x = t((None, 2), "i32")
    assert infer("clamp", t((), "i32"), x, t((), "i32")) == [x]
    assert infer("clamp", t((3, None), "i32"), x, t((), "i32")) == [t((3, 2), "i32")]
    assert infer("clamp", t((), "i32"), x, t((3, 2), "i32")) == [t((3, 2), "i32")]
    assert "shape(min) = [4, 2]" in infer_fails("C1", "clamp", t((4, 2), "i32"), t((3, 2), "i32"),
                                                 t((), "i32"))
    infer_fails("C2", "clamp", t((), "i32"), t((3, 2), "i32"), t((2,), "i32"))
    infer_fails("C3", "clamp", t((), "i32"), x, t((), "i64"))
    # each bound fits the dynamic operand, but not each other
    infer_fails(None, "clamp", t((3, 2), "i32"), x, t((4, 2), "i32"))
    (got,) = infer("clamp", quant((), 1.0), quant((3,), 0.5), quant((), 2.0))
    assert type_admits(got, quant((3,), 0.25)) and not type_admits(got, t((3,), "i8"))


def test_verification_relates_every_operand_through_infer():
    # lhs is dynamic: (C2)'s pairs each fit, but rhs fixes the size at 2
    op = build_op("stablehlo.compare", [], attrs("EQ"), [t((3,), "i1")], [t((None,), "f32"), t((2,), "f32")])
    with pytest.raises(VerificationError, match=r"declared tensor<3xi1>, its operands and attributes "
                       r"give tensor<2xi1>"):
        verify_op(op)
    op = build_op("stablehlo.clamp", [], {}, [t((None,), "f32")],
                  [t((2,), "f32"), t((None,), "f32"), t((3,), "f32")])
    with pytest.raises(VerificationError, match=r"shape\(operand\) = \[None\], shape\(min\) = \[2\], "
                       r"shape\(max\) = \[3\] must be equal"):
        verify_op(op)
    verify_op(build_op("stablehlo.select", [], {}, [t((2,), "f32")],
                       [t((), "i1"), t((None,), "f32"), t((2,), "f32")]))
