"""Bit-level float helpers: encodings, correctly rounded casts, ULP distance."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hlolab.errors import UnsupportedError
from hlolab.numerics import (
    float_format,
    from_bits,
    is_float_dtype,
    is_nan,
    nan_value,
    round_float64,
    to_bits,
    ulp_distance,
    widen,
)
from hlolab.types import ALL_ELEMENT_TYPE_NAMES, element_type

FLOAT_NAMES = [n for n in ALL_ELEMENT_TYPE_NAMES if element_type(n).is_float]
SMALL_FLOAT_NAMES = [n for n in FLOAT_NAMES if element_type(n).dtype.itemsize <= 2]


def dt(name: str) -> np.dtype:
    return element_type(name).dtype


def all_finite_values(name: str) -> np.ndarray:
    """Every finite value of a <= 16-bit float type, sorted, -0 dropped (float64)."""
    d = dt(name)
    count = 1 << (8 * d.itemsize)
    bits = np.arange(count, dtype=np.uint64)
    fmt = float_format(d)
    bits = bits[bits <= fmt.bits_mask]
    vals = from_bits(bits, d)
    with np.errstate(invalid="ignore"):
        wide = vals.astype(np.float64)
    keep = np.isfinite(wide) & ~((wide == 0) & np.signbit(wide))
    return np.unique(wide[keep])


def reference_round(x: np.ndarray, name: str) -> np.ndarray:
    """Nearest representable value, ties to the even bit pattern, by exhaustive search.

    All comparisons are exact: the values and their midpoints are float64-exact.
    Returns float64; +-inf marks overflow past the rounding boundary of max.
    """
    d = dt(name)
    vals = all_finite_values(name)
    fmt = float_format(d)
    # the value the format would have one step above max bounds the rounding of max
    top = vals[-1]
    beyond = 2 * top if fmt.precision == 1 else 2 * top - vals[-2]
    ext = np.concatenate([[-beyond], vals, [beyond]])
    a = np.abs(x) if not fmt.signed else x
    i = np.clip(np.searchsorted(ext, a), 1, len(ext) - 1)
    lo, hi = ext[i - 1], ext[i]
    mid = (lo + hi) / 2
    # ties go to the even significand: the even bit pattern, except that a
    # 1-bit significand (f8E8M0FNU) is always odd, so its ties round up
    even_lo = (to_bits(np.where(np.abs(lo) <= top, lo, 0).astype(d)) & 1) == 0
    if fmt.precision == 1:
        even_lo = np.zeros_like(even_lo)
    pick_lo = (a < mid) | ((a == mid) & even_lo)
    out = np.where(pick_lo, lo, hi)
    out = np.where(out > top, np.inf, np.where(out < -top, -np.inf, out))
    return np.where(a == ext[i], ext[i], out)


def test_float_format_facts():
    expect = {  # name: (has_inf, has_nan, has_neg_zero, has_zero, quiet NaN bits)
        "f64": (True, True, True, True, 0x7FF8000000000000),
        "f32": (True, True, True, True, 0x7FC00000),
        "f16": (True, True, True, True, 0x7E00),
        "bf16": (True, True, True, True, 0x7FC0),
        "f8E5M2": (True, True, True, True, 0x7E),
        "f8E4M3": (True, True, True, True, 0x7C),
        "f8E3M4": (True, True, True, True, 0x78),
        "f8E4M3FN": (False, True, True, True, 0x7F),
        "f8E4M3FNUZ": (False, True, False, True, 0x80),
        "f8E5M2FNUZ": (False, True, False, True, 0x80),
        "f8E4M3B11FNUZ": (False, True, False, True, 0x80),
        "f8E8M0FNU": (False, True, False, False, 0xFF),
        "f4E2M1FN": (False, False, True, True, 0),
        "f6E2M3FN": (False, False, True, True, 0),
        "f6E3M2FN": (False, False, True, True, 0),
    }
    assert set(expect) == set(FLOAT_NAMES)
    for name, (inf, nan, negz, zero, nan_bits) in expect.items():
        f = float_format(dt(name))
        assert (f.has_inf, f.has_nan, f.has_neg_zero, f.has_zero) == (inf, nan, negz, zero), name
        assert f.bits == element_type(name).bits
        if nan:
            assert f.nan_bits == nan_bits, name
            assert np.isnan(nan_value(dt(name)))
            assert int(to_bits(nan_value(dt(name)))) == nan_bits
    assert float_format(dt("f8E4M3FN")).precision == 4
    assert float_format(dt("f8E8M0FNU")).signed is False
    assert int(to_bits(nan_value(np.float32, negative=True))) == 0xFFC00000
    assert int(to_bits(nan_value(dt("f8E5M2FNUZ"), negative=True))) == 0x80  # the only NaN


def test_float_format_rejects_non_floats():
    with pytest.raises(UnsupportedError):
        float_format(np.int32)
    with pytest.raises(UnsupportedError):
        nan_value(dt("f4E2M1FN"))
    assert not is_float_dtype(ml_dtypes.int4) and is_float_dtype(ml_dtypes.bfloat16)


@pytest.mark.parametrize("name", SMALL_FLOAT_NAMES)
def test_round_float64_matches_exhaustive_reference(name):
    vals = all_finite_values(name)
    mids = (vals[1:] + vals[:-1]) / 2
    x = np.concatenate([vals, mids, np.nextafter(mids, np.inf), np.nextafter(mids, -np.inf),
                        vals * 1.0625, vals * 0.75, [1e-300, -1e-300, 1e300, -1e300]])
    fmt = float_format(dt(name))
    if not fmt.signed:
        x = np.abs(x)
    got = round_float64(x, dt(name)).astype(np.float64)
    want = reference_round(x, name)
    if not fmt.has_zero:  # f8E8M0FNU: zero and underflow give the smallest value
        want = np.where(want == 0, vals[0], want)
    if not fmt.has_inf:
        over = np.isinf(want)
        want = np.where(over, np.nan if fmt.has_nan else np.sign(want) * vals[-1], want)
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    assert same.all(), (name, x[~same][:5], got[~same][:5], want[~same][:5])
    # zero keeps its sign exactly when the type has -0
    zeros = round_float64(np.array([0.0, -0.0, -1e-300]), dt(name)).astype(np.float64)
    if fmt.has_zero:
        assert list(np.signbit(zeros)) == [False, fmt.has_neg_zero, fmt.has_neg_zero]


def test_round_float64_is_single_rounding_unlike_ml_dtypes_cast():
    # x lies just below the midpoint of two bf16 values; float32 rounds it onto the
    # midpoint, so float64 -> float32 -> bf16 (ml_dtypes' cast) rounds the wrong way
    lo, hi = 1.0 + 2.0 ** -7, 1.0 + 2.0 ** -6  # bit patterns 0x3F81 (odd), 0x3F82
    x = np.nextafter((lo + hi) / 2, 0.0)
    assert float(round_float64(np.array(x), ml_dtypes.bfloat16)) == lo
    assert float(np.array(x).astype(ml_dtypes.bfloat16)) == hi  # ml_dtypes: double rounding


def test_round_float64_overflow_rules():
    big = np.array([1e300, -1e300, np.inf, -np.inf])
    assert list(round_float64(big, np.float32)) == [np.inf, -np.inf, np.inf, -np.inf]
    assert to_bits(round_float64(big, dt("f8E4M3FN"))).tolist() == [0x7F, 0xFF, 0x7F, 0xFF]
    assert to_bits(round_float64(big, dt("f8E5M2FNUZ"))).tolist() == [0x80] * 4
    assert round_float64(big, dt("f4E2M1FN")).astype(float).tolist() == [6.0, -6.0, 6.0, -6.0]
    # 464 is the midpoint of 448 (max of f8E4M3FN, significand 1.110) and 480
    # (1.111, the NaN pattern): ties to even keep 448; anything above overflows
    assert float(round_float64(np.array(464.0), dt("f8E4M3FN"))) == 448.0
    assert np.isnan(round_float64(np.array(464.5), dt("f8E4M3FN")))
    e8m0 = round_float64(np.array([0.0, -1.0, 3.0, 2.0 ** 200, 1e-300]), dt("f8E8M0FNU"))
    # no zero (0 -> 2^-127), no sign (-1 -> NaN), 3 ties up to 4 = 2^2 (1-bit significand)
    assert to_bits(e8m0).tolist() == [0x00, 0xFF, 0x81, 0xFF, 0x00]
    with pytest.raises(UnsupportedError, match="no NaN"):
        round_float64(np.array(np.nan), dt("f6E3M2FN"))


@given(st.floats(allow_nan=False, allow_infinity=False, width=64))
def test_round_float64_f32_and_f16_agree_with_hardware(x):
    # numpy's float64 -> float32/float16 casts are correctly rounded
    with np.errstate(over="ignore"):
        assert to_bits(round_float64(np.array(x), np.float32)) == to_bits(np.array(x).astype(np.float32))
        assert to_bits(round_float64(np.array(x), np.float16)) == to_bits(np.array(x).astype(np.float16))


def test_to_bits_from_bits_round_trip_and_masking():
    x = np.array([0.5, -0.5, 6.0], dtype=dt("f4E2M1FN"))
    assert to_bits(x).tolist() == [0x1, 0x9, 0x7]
    assert from_bits(to_bits(x), x.dtype).astype(float).tolist() == [0.5, -0.5, 6.0]
    y = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32).T  # non-contiguous
    assert to_bits(y).tolist() == [[0x3F800000, 0x40400000], [0x40000000, 0x40800000]]
    assert to_bits(np.float32(-0.0)).shape == ()


def test_ulp_distance_hand_computed():
    f32 = np.float32
    one = f32(1.0)
    a = np.array([one, 0.0, -0.0, np.nan, np.nan, 1.0, np.inf, -1e-45], f32)
    b = np.array([np.nextafter(one, f32(2)), -0.0, 1e-45, np.nan, 1.0, -1.0, 3.4028235e38, 1e-45], f32)
    assert ulp_distance(a, b).tolist() == [1, 0, 1, 0, 2 ** 64 - 1, 2 * 0x3F800000, 1, 2]
    bf = ml_dtypes.bfloat16
    assert ulp_distance(np.array([1, 2], bf), np.array([2, -2], bf)).tolist() == [128, 2 * 0x4000]
    assert ulp_distance(np.array([0.5], dt("f4E2M1FN")), np.array([-0.5], dt("f4E2M1FN"))).tolist() == [2]
    e8 = dt("f8E8M0FNU")  # no sign bit: the whole byte is magnitude
    assert ulp_distance(np.array([1.0], e8), np.array([4.0], e8)).tolist() == [2]
    c = ulp_distance(np.array([1 + 1j], np.complex64), np.array([1 + 2j], np.complex64))
    assert c.tolist() == [0x40000000 - 0x3F800000]
    assert ulp_distance(np.array([np.nan + 0j]), np.array([np.nan + 0j])).tolist() == [0]


@given(st.integers(0, 2 ** 32 - 1), st.integers(0, 2 ** 32 - 1))
def test_ulp_distance_properties_f32(x, y):
    a = from_bits(np.array([x], np.uint64), np.float32)
    b = from_bits(np.array([y], np.uint64), np.float32)
    d = ulp_distance(a, b)
    assert d == ulp_distance(b, a)
    if np.isnan(a).any() or np.isnan(b).any():
        assert d == (0 if np.isnan(a).all() and np.isnan(b).all() else 2 ** 64 - 1)
    else:
        assert (d == 0) == bool(a[0] == b[0])  # 0 apart exactly when equal (incl. +-0)
        # the distance counts the steps of nextafter between them
        if d[0] <= 3:
            c = a.copy()
            for _ in range(int(d[0])):
                c = np.nextafter(c, b)
            assert c[0] == b[0]


def test_ulp_distance_rejects_ints_and_mixed_dtypes():
    with pytest.raises(UnsupportedError):
        ulp_distance(np.array([1]), np.array([2]))
    with pytest.raises(UnsupportedError):
        ulp_distance(np.array([1.0], np.float32), np.array([1.0]))


def test_is_nan_and_widen():
    assert is_nan(np.array([1, 2])).tolist() == [False, False]
    assert is_nan(np.array([np.nan, 1], ml_dtypes.bfloat16)).tolist() == [True, False]
    assert widen(np.array([1.5], ml_dtypes.float8_e4m3fn)).dtype == np.float64
    assert widen(np.array([1j], np.complex64)).dtype == np.complex128


# --- the float maximum / minimum policy ------------------------------------------------------

@pytest.mark.parametrize("dt", [np.float64, np.float32, np.float16, ml_dtypes.bfloat16,
                                ml_dtypes.float8_e4m3fn])
def test_extremum_key_orders_numbers_zeros_and_nan(dt):
    from hlolab.numerics import extremum_key, key_value

    xs = np.array([-np.inf, -2.5, -0.0, 0.0, 0.5, 3.0], dtype=dt)
    if dt != ml_dtypes.float8_e4m3fn:  # e4m3fn has no inf
        keys = extremum_key(xs, True)
        assert (np.diff(keys) > 0).all()  # strictly increasing: -0.0 < +0.0
        assert to_bits(key_value(keys).astype(dt)).tolist() == to_bits(xs).tolist()
    nan = np.array([np.nan], dtype=dt)
    assert extremum_key(nan, True)[0] > extremum_key(np.array([3.0], dtype=dt), True)[0]
    assert extremum_key(nan, False)[0] < extremum_key(np.array([-2.5], dtype=dt), False)[0]


def test_takes_first_is_the_spec_maximum_and_minimum():
    from hlolab.numerics import takes_first

    a = np.array([1.0, np.nan, 2.0, -0.0, 0.0, 5.0, np.nan], dtype=np.float32)
    b = np.array([2.0, 3.0, np.nan, 0.0, -0.0, 5.0, np.nan], dtype=np.float32)
    assert takes_first(a, b, True).tolist() == [False, True, False, False, True, True, True]
    assert takes_first(a, b, False).tolist() == [True, True, False, True, False, True, True]


def test_scatter_style_extremum_matches_the_sequential_chain():
    # combine_at's maximum/minimum over colliding targets == max(lhs, rhs) applied in order
    from hlolab.numerics import takes_first
    from hlolab.ops.regions import combine_at

    rng = np.random.default_rng(0)
    pool = np.array([np.nan, -np.nan, 0.0, -0.0, 1.0, -1.0, 2.0, np.inf, -np.inf], dtype=np.float32)
    pool[0] = from_bits(np.array([0x7FC00001], np.uint32), np.float32)[0]  # a NaN with a payload
    for is_max in (True, False):
        acc = rng.choice(pool, 6)
        t = rng.integers(0, 6, 200)
        v = rng.choice(pool, 200)
        want = acc.copy()
        for j in range(len(t)):  # the reference: one max(lhs, rhs) at a time
            lhs, rhs = want[t[j]:t[j] + 1], v[j:j + 1]
            want[t[j]] = lhs[0] if takes_first(lhs, rhs, is_max)[0] else rhs[0]
        got = acc.copy()
        assert combine_at("maximum" if is_max else "minimum", got, t, v, element_type("f32"))
        assert to_bits(got).tolist() == to_bits(want).tolist()
