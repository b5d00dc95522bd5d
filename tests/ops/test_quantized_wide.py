"""Quantized values with 64-bit storage (i64, ui64) and storage wider than the expressed
type's significand (i32 in bf16): uniform_dequantize / uniform_quantize and a quantized add,
checked bit for bit against a slow reference written from the spec's formulas with Python
integers and fractions (``convert`` of an integer rounds once, to nearest even)."""

from __future__ import annotations

from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

from hlolab.interp.engine import Interpreter
from hlolab.ir.parser import parse_module
from hlolab.ops.quant_ops import dequantize, quantize, round_to_float
from hlolab.types import QuantizedElementType, element_type

BF16 = np.dtype(ml_dtypes.bfloat16)
UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def ref_convert(n: int, dt: np.dtype) -> np.generic:
    """The ``dt`` value nearest the integer ``n``, ties to the even significand: the f64
    rounding of n and its neighbours in ``dt`` (by bit pattern), compared exactly."""
    if n < 0:
        return -ref_convert(-n, dt)
    c = np.array([float(n)], dtype=np.float64).astype(dt)
    bits = int(c.view(UINT[dt.itemsize])[0])
    cands = [np.array([bits + d], dtype=UINT[dt.itemsize]).view(dt)[0] for d in (-1, 0, 1) if bits + d >= 0]
    cands = [v for v in cands if np.isfinite(v)]
    best = min(cands, key=lambda v: (abs(Fraction(float(v)) - n),
                                     int(np.array([v], dt).view(UINT[dt.itemsize])[0]) & 1))
    return best


def ref_dequantize(q: int, scale: float, zp: int, dt: np.dtype) -> np.generic:
    """(x_storage - zero_point) * scale: the difference exact, converted, times convert(scale)."""
    return (np.array([ref_convert(int(q) - int(zp), dt)], dt) * np.array([scale], dt))[0]


def ref_quantize(x: np.generic, scale: float, zp: int, lo: int, hi: int, dt: np.dtype) -> int:
    """x / scale + zero_point, clamp(convert(storage_min), ., convert(storage_max)),
    round_nearest_even, convert: exact, and within [storage_min, storage_max] (where convert
    of a bound the expressed type rounded outwards would leave the range)."""
    a = np.array([x], dt)
    x_scaled = a / np.array([scale], dt)
    add = x_scaled + np.array([ref_convert(zp, dt)], dt)
    cmin, cmax = np.array([ref_convert(lo, dt)], dt), np.array([ref_convert(hi, dt)], dt)
    clamped = np.minimum(np.maximum(add, cmin), cmax)
    rounded = float(np.rint(clamped)[0])
    if rounded != rounded:  # NaN: 0
        return 0 if lo <= 0 <= hi else lo
    n = int(rounded) if abs(rounded) != float("inf") else (hi if rounded > 0 else lo)
    return min(max(n, lo), hi)


def qtype(storage: str, expressed: str, scale: float, zp: int) -> QuantizedElementType:
    return QuantizedElementType(element_type(storage), element_type(expressed), (scale,), (zp,))


I64 = [-2**63, -2**63 + 1, -2**62 - 3, -2**53 - 1, -1, 0, 1, 2**24 + 1, 2**53 + 1,
       2**62 + 2**39 + 1, 2**63 - 2**39 - 1, 2**63 - 2, 2**63 - 1]
U64 = [0, 1, 2**32 + 1, 2**53 + 1, 2**63 - 1, 2**63, 2**63 + 1, 2**64 - 2**40 - 1, 2**64 - 2**11, 2**64 - 1]
CASES = [("i64", I64, zp) for zp in (0, 1, -7, 2**40 + 3, -2**63, 2**63 - 1)] + \
        [("ui64", U64, zp) for zp in (0, 1, 2**63, 2**64 - 1)] + \
        [("i32", [-2**31, 2**24 + 2**16 + 1, -(2**24 + 2**16 + 1), 2**31 - 1, 16777217], zp)
         for zp in (0, -3)]


@pytest.mark.parametrize("expressed", ["f32", "f64", "bf16"])
@pytest.mark.parametrize("scale", [1.0, 0.5, 3.0])
@pytest.mark.parametrize("storage, values, zp", CASES)
def test_dequantize_and_round_trip_match_the_reference(storage, values, zp, scale, expressed):
    qt = qtype(storage, expressed, scale, zp)
    dt = np.dtype(qt.expressed.dtype)
    q = np.array(values, dtype=qt.storage.dtype)
    got = dequantize(q, qt)
    want = np.array([ref_dequantize(v, scale, zp, dt) for v in values], dt)
    np.testing.assert_array_equal(got.view(UINT[dt.itemsize]), want.view(UINT[dt.itemsize]))
    lo, hi = int(qt.storage.min_value()), int(qt.storage.max_value())
    back = quantize(got, qt)
    assert back.dtype == qt.storage.dtype
    assert [int(v) for v in back] == [ref_quantize(v, scale, zp, lo, hi, dt) for v in want]


@pytest.mark.parametrize("storage", ["i64", "ui64"])
@pytest.mark.parametrize("expressed", ["f32", "f64"])
def test_quantize_saturates_at_the_boundary_exactly(storage, expressed):
    qt = qtype(storage, expressed, 1.0, 0)
    dt = np.dtype(qt.expressed.dtype)
    lo, hi = int(qt.storage.min_value()), int(qt.storage.max_value())
    top = 2.0 ** (63 if storage == "i64" else 64)
    below = np.nextafter(np.array(top, dt), np.array(0, dt))  # the largest float under 2^63 / 2^64
    xs = np.array([top, below, -top, -float(below), 1e30, -1e30, np.inf, -np.inf, np.nan, 2.0**53 + 2], dt)
    got = [int(v) for v in quantize(xs, qt)]
    assert got == [ref_quantize(x, 1.0, 0, lo, hi, dt) for x in xs]
    assert got[0] == hi and got[1] == int(below) and got[6] == hi and got[7] == lo
    assert got[9] == (2**53 + 2 if expressed == "f64" else 2**53)  # f32 holds 2^53, not 2^53 + 2


def test_round_to_float_rounds_once_where_a_cast_rounds_twice():
    # 2^24 + 2^16 + 1 is just above the bf16 tie between 2^24 and 2^24 + 2^17; through f32 it
    # first becomes the tie itself (2^24 + 2^16), then the even 2^24
    n = 2**24 + 2**16 + 1
    assert float(np.array([n], np.int64).astype(BF16)[0]) == 2**24  # numpy's cast: twice
    got = round_to_float(np.array([n], np.uint64), np.array([False]), BF16)
    assert float(got[0]) == 2**24 + 2**17 == float(ref_convert(n, BF16))
    top = round_to_float(np.array([2**64 - 1], np.uint64), np.array([True]), np.dtype(np.float32))
    assert float(top[0]) == -(2.0 ** 64)


@pytest.mark.parametrize("storage, lhs, rhs", [
    ("i64", [2**63 - 1, 2**62, -2**63, 2**53 + 1, -5], [2**63 - 1, 2**62, -1, 2**53 + 3, 7]),
    ("ui64", [2**64 - 1, 2**63, 2**64 - 1, 2**53 + 1, 0], [2**64 - 1, 2**63, 1, 2**53 + 3, 0]),
])
def test_quantized_add_with_64_bit_storage_matches_the_reference(storage, lhs, rhs):
    a, r = f"!quant.uniform<{storage}:f32, 2.0:4>", f"!quant.uniform<{storage}:f32, 4.0:1>"
    n = len(lhs)
    text = (f"func.func @main(%x: tensor<{n}x{a}>, %y: tensor<{n}x{a}>) -> tensor<{n}x{r}> {{\n"
            f"  %r = stablehlo.add %x, %y : (tensor<{n}x{a}>, tensor<{n}x{a}>) -> tensor<{n}x{r}>\n"
            f"  return %r : tensor<{n}x{r}>\n}}")
    dt = np.dtype(np.float32)
    st = qtype(storage, "f32", 1.0, 0).storage
    (out,) = Interpreter(parse_module(text)).run(None, [np.array(lhs, st.dtype), np.array(rhs, st.dtype)])
    lo, hi = int(st.min_value()), int(st.max_value())
    want = [ref_quantize((np.array([ref_dequantize(x, 2.0, 4, dt)], dt)
                          + np.array([ref_dequantize(y, 2.0, 4, dt)], dt))[0], 4.0, 1, lo, hi, dt)
            for x, y in zip(lhs, rhs, strict=True)]
    assert [int(v) for v in out] == want
    # (max - 4) * 2 twice is 2^65 (i64) / 2^66 (ui64) in f32; / 4 + 1 rounds to 2^63 / 2^64, the
    # expressed storage_max: converted exactly it is one past the range, and saturates
    assert want[0] == hi
    # 2^62 + 2^62 (i64) / 2^63 + 2^63 (ui64): the f32 sum / 4 + 1 = 2^62 + 1 / 2^63 + 1 rounds
    # to 2^62 / 2^63 in f32: the result is exact in neither storage
    assert want[1] == (2**62 if storage == "i64" else 2**63)
