"""Bit-level helpers for every float type hlolab supports (ml_dtypes included).

- ``float_format(dtype)``: the encoding facts of a float type (precision,
  exponent range, which of inf / NaN / -0 / 0 it has), as LLVM's APFloat
  describes them.
- ``round_float64(x, dtype)``: float64 → any float type, correctly rounded
  (round to nearest, ties to even) with APFloat's (= MLIR's) overflow rules.
  ``x.astype(dtype)`` is *not* that for ml_dtypes' small floats: they go
  through float32 first and round twice (e.g. bf16, f8E5M2).
- ``to_bits`` / ``from_bits``: the raw bit patterns as unsigned integers.
- ``ulp_distance(a, b)``: how many representable values apart two floats are.
- ``extremum_key(x, is_max)``: the order the spec's float maximum / minimum
  follow (NaN propagates, -0.0 < +0.0) as int64 keys, so element-wise max/min,
  clamp, reduce, reduce_window and scatter combiners share one policy.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import ml_dtypes
import numpy as np

from hlolab.errors import UnsupportedError

_UINT_OF_SIZE = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


@dataclass(frozen=True)
class FloatFormat:
    """How a float type encodes its values (the facts APFloat's fltSemantics holds)."""

    name: str
    bits: int        # bits actually used (4 for f4E2M1FN, stored in one byte)
    precision: int   # significand bits including the implicit one
    min_exp: int     # exponent of the smallest normal number
    max_finite: float
    has_inf: bool
    has_nan: bool
    has_neg_zero: bool   # FNUZ types use that encoding for their only NaN
    has_zero: bool       # f8E8M0FNU has no zero
    signed: bool         # f8E8M0FNU has no sign bit
    nan_bits: int        # canonical positive quiet NaN (meaningless when not has_nan)

    @property
    def sign_mask(self) -> int:
        return 1 << (self.bits - 1) if self.signed else 0

    @property
    def bits_mask(self) -> int:
        return (1 << self.bits) - 1


# Types whose non-finite encodings differ from IEEE 754 (APFloat's NanOnly /
# FiniteOnly behaviours); every other float type is IEEE-like.
_FINITE_ONLY = {"float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn"}
_NAN_ONLY_NEG_ZERO = {"float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e4m3b11fnuz"}
_NAN_ONLY_ALL_ONES = {"float8_e4m3fn", "float8_e8m0fnu"}


@cache
def float_format(dtype: np.dtype | type) -> FloatFormat:
    """Encoding facts of a float dtype (numpy or ml_dtypes)."""
    dt = np.dtype(dtype)
    if dt.kind == "c" or not _is_float_dtype(dt):
        raise UnsupportedError(f"float_format: {dt} is not a real floating-point dtype")
    fi = ml_dtypes.finfo(dt)
    bits = int(fi.bits)
    nmant = int(fi.nmant)
    name = dt.name
    signed = name != "float8_e8m0fnu"
    if name in _FINITE_ONLY:
        has_inf = has_nan = False
        nan_bits = 0
    elif name in _NAN_ONLY_NEG_ZERO:
        has_inf, has_nan = False, True
        nan_bits = 1 << (bits - 1)
    elif name in _NAN_ONLY_ALL_ONES:
        has_inf, has_nan = False, True
        nan_bits = (1 << (bits - 1 if signed else bits)) - 1
    else:
        has_inf = has_nan = True
        exp_ones = ((1 << (bits - 1 - nmant)) - 1) << nmant
        nan_bits = exp_ones | (1 << (nmant - 1))  # quiet bit set, rest of payload 0
    return FloatFormat(
        name=name, bits=bits, precision=nmant + 1, min_exp=int(fi.minexp),
        max_finite=float(fi.max), has_inf=has_inf, has_nan=has_nan,
        has_neg_zero=signed and name not in _NAN_ONLY_NEG_ZERO,
        has_zero=name != "float8_e8m0fnu", signed=signed, nan_bits=nan_bits)


_ML_FLOAT_NAMES = frozenset({
    "bfloat16", "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "float8_e3m4",
    "float8_e4m3", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e4m3b11fnuz", "float8_e5m2",
    "float8_e5m2fnuz", "float8_e8m0fnu"})


def _is_float_dtype(dt: np.dtype) -> bool:
    return dt.kind == "f" or dt.name in _ML_FLOAT_NAMES


def is_float_dtype(dtype: np.dtype | type) -> bool:
    """Real floating point, numpy's or ml_dtypes' (not complex, not int)."""
    return _is_float_dtype(np.dtype(dtype))


def uint_dtype(dtype: np.dtype | type) -> np.dtype:
    """The unsigned integer dtype of the same storage size."""
    return np.dtype(_UINT_OF_SIZE[np.dtype(dtype).itemsize])


def to_bits(a: np.ndarray) -> np.ndarray:
    """Bit patterns of a real float (or int) array as unsigned ints; sub-byte types masked."""
    a = np.asarray(a)
    if not a.flags.c_contiguous:
        a = a.copy(order="C")
    bits = a.view(uint_dtype(a.dtype))
    if is_float_dtype(a.dtype):
        fmt = float_format(a.dtype)
        if fmt.bits < 8 * a.dtype.itemsize:
            bits = bits & bits.dtype.type(fmt.bits_mask)
    return bits


def from_bits(bits: np.ndarray, dtype: np.dtype | type) -> np.ndarray:
    """The values with the given bit patterns (the inverse of ``to_bits``)."""
    dt = np.dtype(dtype)
    return np.asarray(bits).astype(uint_dtype(dt)).view(dt)


def nan_value(dtype: np.dtype | type, negative: bool = False) -> np.ndarray:
    """The canonical quiet NaN of a float type, as a 0-d array."""
    fmt = float_format(dtype)
    if not fmt.has_nan:
        raise UnsupportedError(f"{fmt.name} has no NaN")
    bits = fmt.nan_bits
    if negative and fmt.signed and fmt.has_neg_zero:  # FNUZ: the one NaN has the sign bit
        bits |= fmt.sign_mask
    return from_bits(np.array(bits), dtype)


def round_float64(x: np.ndarray, dtype: np.dtype | type) -> np.ndarray:
    """``x`` (float64) rounded to ``dtype``: nearest, ties to even, in one step.

    Overflow and special values follow LLVM APFloat's ``convert`` (what MLIR
    does for a literal): past the largest finite value a type with infinities
    gives ±inf, a NaN-only type (f8E4M3FN, FNUZ types, f8E8M0FNU) gives NaN,
    a finite-only type (f4E2M1FN, f6*) saturates to ±max. FNUZ types have no
    -0 (it becomes +0); f8E8M0FNU has no zero (0 and underflow give its
    smallest value 2^-127) and no sign (negative values give NaN). NaN input
    gives the type's quiet NaN keeping the sign; a type without NaN raises.
    """
    x = np.asarray(x, dtype=np.float64)
    dt = np.dtype(dtype)
    if dt == np.float64:
        return x.copy()
    fmt = float_format(dt)
    nan = np.isnan(x)
    if not fmt.has_nan and np.any(nan):
        raise UnsupportedError(f"{fmt.name} has no NaN: cannot represent a NaN value")
    neg = np.signbit(x)
    with np.errstate(over="ignore", invalid="ignore"):
        mag = _round_magnitude(np.abs(x), fmt)
    over = ~nan & (mag > fmt.max_finite)  # also catches infinite inputs
    zero = mag == 0
    # every value kept below is exactly representable, so ml_dtypes' cast is exact
    mag = np.where(over | nan, 0.0, mag)
    if not fmt.has_zero:
        mag = np.where(zero, 2.0 ** fmt.min_exp, mag)
    # negative values keep their sign, except zero in FNUZ types (no -0 there)
    value = np.where(neg & fmt.signed & (fmt.has_neg_zero | ~zero), -mag, mag)
    out = value.astype(dt)
    if fmt.has_inf:
        special = np.where(neg, -np.inf, np.inf).astype(dt)
    elif fmt.has_nan:
        special = _nan_like(fmt, dt, neg)
    else:
        special = np.where(neg, -fmt.max_finite, fmt.max_finite).astype(dt)
    out = np.where(over, special, out)
    if fmt.has_nan:
        out = np.where(nan, _nan_like(fmt, dt, neg), out)
    if not fmt.signed:  # f8E8M0FNU: a negative non-zero value has no encoding
        out = np.where(neg & ~zero, nan_value(dt), out)
    return np.asarray(out, dtype=dt)


def _nan_like(fmt: FloatFormat, dt: np.dtype, neg: np.ndarray) -> np.ndarray:
    pos = nan_value(dt)
    if fmt.signed and fmt.has_neg_zero:
        return np.where(neg, nan_value(dt, negative=True), pos)
    return pos


def _round_magnitude(a: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """|x| rounded to ``fmt``'s precision and exponent range (no overflow handling).

    Works on the float64 bit pattern: significand ``m`` and exponent ``e`` with
    |x| = m * 2^(e-52); the target keeps ``precision`` bits at exponent
    max(e, min_exp), so ``shift`` low bits of ``m`` go, rounded half to even.
    The result q * 2^(qe) is exact in float64.
    """
    finite = np.isfinite(a)
    a = np.where(finite, a, 0.0)
    bits = a.view(np.uint64)
    e_raw = (bits >> np.uint64(52)).astype(np.int64)
    m = bits & np.uint64((1 << 52) - 1)
    normal = e_raw > 0
    m = np.where(normal, m | np.uint64(1 << 52), m)
    e = np.where(normal, e_raw - 1023, -1022)
    te = np.maximum(e, fmt.min_exp)
    qe = te - (fmt.precision - 1)
    shift = np.minimum(qe - (e - 52), 60).astype(np.uint64)  # > 0: precision < 53
    q = m >> shift
    rem = m & ((np.uint64(1) << shift) - np.uint64(1))
    half = np.uint64(1) << (shift - np.uint64(1))
    up = (rem > half) | ((rem == half) & ((q & np.uint64(1)) == 1))
    q = q + up.astype(np.uint64)
    mag = np.ldexp(q.astype(np.float64), qe.astype(np.int32))
    return np.where(finite, mag, np.inf)


def is_nan(a: np.ndarray) -> np.ndarray:
    """Elementwise NaN test for any dtype (always False for ints and bools)."""
    a = np.asarray(a)
    if a.dtype.kind == "c" or is_float_dtype(a.dtype):
        with np.errstate(invalid="ignore"):
            return np.isnan(a)
    return np.zeros(a.shape, bool)


def ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Number of representable values between ``a`` and ``b`` (uint64, elementwise).

    Same sign: the difference of the bit patterns read as integers; opposite
    signs: the sum of both distances to zero (so +0 and -0 are 0 apart);
    bitwise-equal values are 0 apart, two NaNs are 0 apart, a NaN and a
    number are 2^64-1 apart. Complex: the worse of the real and imaginary
    distances.
    """
    a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
    if a.dtype != b.dtype:
        raise UnsupportedError(f"ulp_distance needs equal dtypes, got {a.dtype} and {b.dtype}")
    if a.dtype.kind == "c":
        return np.maximum(ulp_distance(a.real, b.real), ulp_distance(a.imag, b.imag))
    if not is_float_dtype(a.dtype):
        raise UnsupportedError(f"ulp_distance needs a float dtype, got {a.dtype}")
    fmt = float_format(a.dtype)
    ba = to_bits(a).astype(np.uint64)
    bb = to_bits(b).astype(np.uint64)
    sign = np.uint64(fmt.sign_mask)
    ma, mb = ba & ~sign, bb & ~sign
    same = (ba & sign) == (bb & sign)
    dist = np.where(same, np.maximum(ma, mb) - np.minimum(ma, mb), ma + mb)
    with np.errstate(invalid="ignore"):  # ml_dtypes warn on NaN inputs
        na, nb = np.isnan(a), np.isnan(b)
    dist = np.where(na & nb, np.uint64(0), dist)
    return np.where(na ^ nb, np.iinfo(np.uint64).max, dist).astype(np.uint64)


def widen(a: np.ndarray) -> np.ndarray:
    """Real floats as float64 and complex as complex128, exactly (every type fits)."""
    a = np.asarray(a)
    if a.dtype.kind == "c":
        return a.astype(np.complex128)
    return a.astype(np.float64)


# --- the spec's maximum / minimum on floats -------------------------------------------------

_NAN_TOP = np.int64(np.iinfo(np.int64).max)
_NAN_BOTTOM = np.int64(np.iinfo(np.int64).min)


def extremum_key(x: np.ndarray, is_max: bool) -> np.ndarray:
    """int64 keys whose order is the one float ``maximum`` (``is_max``) or ``minimum``
    follow: every NaN beats every number (NaN propagates) and ties with every NaN,
    -0.0 < +0.0, otherwise the numbers' order. Of equal keys the first wins: a NaN lhs
    stays, and the first NaN of a chain is the result, as in XLA. Every float type
    is exact in float64, so one key serves all; ``key_value`` inverts a number's key."""
    x64 = np.asarray(x).astype(np.float64)
    bits = x64.view(np.int64)
    # IEEE total order: flip the magnitude bits of negatives, so -0.0 sorts just below +0.0
    key = np.where(bits < 0, bits ^ np.int64(0x7FFFFFFFFFFFFFFF), bits)
    return np.where(np.isnan(x64), _NAN_TOP if is_max else _NAN_BOTTOM, key)


def key_value(key: np.ndarray) -> np.ndarray:
    """The float64 a non-NaN ``extremum_key`` stands for (bit-exact)."""
    k = np.asarray(key, dtype=np.int64)
    return np.where(k < 0, k ^ np.int64(0x7FFFFFFFFFFFFFFF), k).view(np.float64)


def is_nan_key(key: np.ndarray, is_max: bool) -> np.ndarray:
    return np.asarray(key) == (_NAN_TOP if is_max else _NAN_BOTTOM)


def takes_first(a: np.ndarray, b: np.ndarray, is_max: bool) -> np.ndarray:
    """Where float ``maximum(a, b)`` (``minimum``) is ``a``: ``a`` wins ties, so a NaN
    ``a`` stays and a NaN ``b`` wins over a number. Selecting from the operands keeps
    the result bit-identical to one of them (NaN payloads included)."""
    ka, kb = extremum_key(a, is_max), extremum_key(b, is_max)
    return ka >= kb if is_max else ka <= kb
