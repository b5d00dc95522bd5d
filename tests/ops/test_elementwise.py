"""Element-wise ops: the spec's examples, edge cases per element type, errors.

Integer results are checked against Python's unbounded integers wrapped to the
bit width; float edge cases against hand-computed values.
"""

from __future__ import annotations

import itertools
import math
import warnings

import ml_dtypes
import numpy as np
import pytest

from hlolab.errors import ExecutionError, UnsupportedError, VerificationError
from hlolab.interp.single import apply_op, build_op, value_type
from hlolab.ops.record import Attrs, InferError, type_admits
from hlolab.ops.registry import lookup
from hlolab.ops.verify import verify_op
from hlolab.trace import provenance as prov
from hlolab.types import QuantizedElementType, TensorType, TupleType, element_type, tensor_type

OPS = ("abs add and atan2 cbrt ceil cosine count_leading_zeros divide exponential exponential_minus_one "
       "floor is_finite log log_plus_one logistic maximum minimum multiply negate not or popcnt power "
       "remainder round_nearest_afz round_nearest_even rsqrt shift_left shift_right_arithmetic "
       "shift_right_logical sign sine sqrt subtract tan tanh xor").split()

ALIASES = dict(zip(OPS, (
    "Abs Add And Atan2 Cbrt Ceil Cos Clz Div Exp Expm1 Floor IsFinite Log Log1p Logistic Max Min Mul Neg "
    "Not Or PopulationCount Pow Rem RoundNearestAfz RoundNearestEven Rsqrt ShiftLeft ShiftRightArithmetic "
    "ShiftRightLogical Sign Sin Sqrt Sub Tan Tanh Xor").split(), strict=True))


def arr(values, et: str) -> np.ndarray:
    return np.array(values, dtype=element_type(et).dtype)


def from_bits(values, et: str) -> np.ndarray:
    dtype = element_type(et).dtype
    return np.array(values, dtype=f"u{dtype.itemsize}").view(dtype)


def bits_of(a: np.ndarray) -> list[int]:
    return a.view(f"u{a.dtype.itemsize}").tolist()


def run(name: str, *inputs: np.ndarray, result: str | None = None) -> np.ndarray:
    """Apply ``stablehlo.<name>``; the result type is the first operand's unless given."""
    first = value_type(inputs[0])
    et = element_type(result) if result else first.element
    (out,) = apply_op(f"stablehlo.{name}", list(inputs), result_types=[TensorType(first.shape, et)])
    return out


# --- the spec's examples ---------------------------------------------------------

PI = math.pi

# (op, inputs, element type of the inputs, result element type, expected)
SPEC_EXAMPLES = [
    ("abs", [[-2, 0, 2]], "i32", "i32", [2, 0, 2]),
    ("add", [[[1, 2], [3, 4]], [[5, 6], [7, 8]]], "i32", "i32", [[6, 8], [10, 12]]),
    ("and", [[[1, 2], [3, 4]], [[5, 6], [7, 8]]], "i32", "i32", [[1, 2], [3, 0]]),
    ("atan2", [[0.0, 1.0, -1.0], [0.0, 0.0, 0.0]], "f64", "f64", [0.0, 1.57079637, -1.57079637]),
    ("cbrt", [[0.0, 1.0, 8.0, 27.0]], "f64", "f64", [0.0, 1.0, 2.0, 3.0]),
    ("ceil", [[-0.8166, -0.2530, 0.2530, 0.8166, 2.0]], "f32", "f32", [-0.0, -0.0, 1.0, 1.0, 2.0]),
    ("cosine", [[[0.0, 1.57079632], [3.14159265, 4.71238898]]], "f32", "f32", [[1.0, 0.0], [-1.0, 0.0]]),
    ("count_leading_zeros", [[[0, 1], [128, -1]]], "i64", "i64", [[64, 63], [56, 0]]),
    # the spec prints 17/3 = 5.66666651 for 17.1 / 3 (the interpreter test says 5.7)
    ("divide", [[17.1, -17.1, 17.1, -17.1], [3.0, 3.0, -3.0, -3.0]], "f32", "f32", [5.7, -5.7, -5.7, 5.7]),
    ("exponential", [[[0.0, 1.0], [2.0, 3.0]]], "f64", "f64",
     [[1.0, 2.7182818284590451], [7.3890560989306504, 20.085536923187668]]),
    ("exponential_minus_one", [[0.0, 1.0]], "f64", "f64", [0.0, 1.71828187]),
    ("floor", [[-0.8166, -0.2530, 0.2530, 0.8166, 2.0]], "f32", "f32", [-1.0, -1.0, 0.0, 0.0, 2.0]),
    ("is_finite", [[-math.inf, math.inf, math.nan, -10.0, -0.0, 0.0, 10.0]], "f64", "i1",
     [False, False, False, True, True, True, True]),
    ("log", [[[1.0, 2.0], [3.0, 4.0]]], "f64", "f64",
     [[0.0, 0.69314718055994529], [1.0986122886681098, 1.3862943611198906]]),
    ("log_plus_one", [[0.0, -0.999, 7.0, 6.38905621, 15.0]], "f64", "f64",
     [0.0, -6.90776825, 2.07944155, 2.0, 2.77258873]),
    ("logistic", [[[0.0, 1.0], [2.0, 3.0]]], "f64", "f64", [[0.5, 0.73105858], [0.88079708, 0.95257413]]),
    ("maximum", [[[1, 2], [7, 8]], [[5, 6], [3, 4]]], "i32", "i32", [[5, 6], [7, 8]]),
    ("minimum", [[[1, 2], [7, 8]], [[5, 6], [3, 4]]], "i32", "i32", [[1, 2], [3, 4]]),
    ("multiply", [[[1, 2], [3, 4]], [[5, 6], [7, 8]]], "i32", "i32", [[5, 12], [21, 32]]),
    ("negate", [[0, -2]], "i32", "i32", [0, 2]),
    ("negate", [[2.5 + 0j]], "complex<f32>", "complex<f32>", [-2.5 - 0j]),
    ("not", [[[1, 2], [3, 4]]], "i32", "i32", [[-2, -3], [-4, -5]]),
    ("not", [[True, False]], "i1", "i1", [False, True]),
    ("or", [[[1, 2], [3, 4]], [[5, 6], [7, 8]]], "i32", "i32", [[5, 6], [7, 12]]),
    ("or", [[[False, False], [True, True]], [[False, True], [False, True]]], "i1", "i1",
     [[False, True], [True, True]]),
    ("popcnt", [[0, 1, 2, 127]], "i64", "i64", [0, 1, 1, 7]),
    # the spec prints inf for 10000^10, which is 1e40 in f64 (the interpreter test says 1e40)
    ("power", [[-2.0, -0.0, -36.0, 5.0, 3.0, 10000.0], [2.0, 2.0, 1.1, 2.0, -1.0, 10.0]], "f64", "f64",
     [4.0, 0.0, math.nan, 25.0, 0.333333343, 1e40]),
    ("remainder", [[17, -17, 17, -17], [3, 3, -3, -3]], "i64", "i64", [2, -2, 2, -2]),
    ("round_nearest_afz", [[-2.5, 0.4, 0.5, 0.6, 2.5]], "f64", "f64", [-3.0, 0.0, 1.0, 1.0, 3.0]),
    ("round_nearest_even", [[-2.5, 0.4, 0.5, 0.6, 2.5]], "f64", "f64", [-2.0, 0.0, 0.0, 1.0, 2.0]),
    ("rsqrt", [[[1.0, 4.0], [9.0, 25.0]]], "f32", "f32", [[1.0, 0.5], [0.33333343, 0.2]]),
    ("shift_left", [[-1, 0, 1], [1, 2, 3]], "i64", "i64", [-2, 0, 8]),
    ("shift_right_arithmetic", [[-1, 0, 8], [1, 2, 3]], "i64", "i64", [-1, 0, 1]),
    ("shift_right_logical", [[-1, 0, 8], [1, 2, 3]], "i64", "i64", [9223372036854775807, 0, 1]),
    ("sine", [[[0.0, 1.57079632], [3.14159265, 4.71238898]]], "f32", "f32", [[0.0, 1.0], [0.0, -1.0]]),
    ("sqrt", [[[0.0, 1.0], [4.0, 9.0]]], "f32", "f32", [[0.0, 1.0], [2.0, 3.0]]),
    ("subtract", [[[6, 8], [10, 12]], [[5, 6], [7, 8]]], "f32", "f32", [[1, 2], [3, 4]]),
    # the spec's tan values are those of the exact double pi/2 and 3pi/2 (its inputs are truncated)
    ("tan", [[[0.0, PI / 2], [PI, 3 * PI / 2]]], "f64", "f64", [[0.0, 1.63312e16], [0.0, 5.44375e15]]),
    ("tanh", [[-1.0, 0.0, 1.0]], "f32", "f32", [-0.76159416, 0.0, 0.76159416]),
    ("xor", [[[1, 2], [3, 4]], [[5, 6], [7, 8]]], "i32", "i32", [[4, 4], [4, 12]]),
    ("xor", [[[False, False], [True, True]], [[False, True], [False, True]]], "i1", "i1",
     [[False, True], [True, False]]),
]


@pytest.mark.parametrize("case", SPEC_EXAMPLES, ids=lambda c: c[0])
def test_spec_example(case):
    name, inputs, et, result_et, expected = case
    got = run(name, *(arr(x, et) for x in inputs), result=result_et)
    want = arr(expected, result_et)
    assert got.dtype == want.dtype and got.shape == want.shape
    if got.dtype.kind in "biu":
        assert got.tolist() == want.tolist()
    else:
        # the spec prints 6 to 8 significant digits; cos/sin/tan of its pi/2 inputs are ~1e-8, not 0
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7, equal_nan=True)
        zeros = (got.real == 0) & (want.real == 0)  # e.g. ceil(-0.25) = -0.0
        assert (np.signbit(got.real) == np.signbit(want.real))[zeros].all()


def test_spec_example_sign_keeps_nan_payload_and_signed_zero():
    # %operand: [0x7FFFFFFFFFFFFFFF, -1.0, -0.0, 0.0, 1.0] -> the same
    x = np.array([from_bits([0x7FFFFFFFFFFFFFFF], "f64")[0], -1.0, -0.0, 0.0, 1.0])
    assert bits_of(run("sign", x)) == bits_of(x)


# --- integers: Python integers wrapped to the width are the reference ---------------

INT_TYPES = ["i2", "i4", "i8", "i16", "i32", "i64", "ui2", "ui4", "ui8", "ui16", "ui32", "ui64"]


def int_values(et: str) -> list[int]:
    t = element_type(et)
    lo, hi = t.min_value(), t.max_value()
    if t.bits <= 4:
        return list(range(lo, hi + 1))
    mid = [v for v in (-3, -2, -1, 0, 1, 2, 3, 5, 7, t.bits - 1, t.bits, t.bits + 1) if lo <= v <= hi]
    return sorted({lo, lo + 1, hi - 1, hi, lo // 2, hi // 2, *mid})


def wrap(v: int, et: str) -> int:
    t = element_type(et)
    v &= (1 << t.bits) - 1
    if t.is_signed and v >= 1 << (t.bits - 1):
        v -= 1 << t.bits
    return v


def pairs(et: str) -> tuple[np.ndarray, np.ndarray, list[tuple[int, int]]]:
    ps = list(itertools.product(int_values(et), repeat=2))
    return arr([a for a, _ in ps], et), arr([b for _, b in ps], et), ps


def c_div(a: int, b: int, et: str) -> int:
    t = element_type(et)
    if b == 0:
        return -1 if t.is_signed else t.max_value()
    q = abs(a) // abs(b)
    return wrap(q if (a < 0) == (b < 0) else -q, et)


def c_rem(a: int, b: int, et: str) -> int:
    if b == 0:
        return a
    return wrap(a - c_div(a, b, et) * b, et)


def int_pow(a: int, e: int, et: str) -> int:
    """Exact while nothing overflows; overflow (implementation-defined) as XLA: only the
    exponent's low 6 bits count, and a set top bit (also unsigned) is a negative exponent."""
    t = element_type(et)
    bits = t.bits
    if pattern(e, et) >> (bits - 1) and (t.is_signed or bits >= 8):  # ui2/ui4: stored zero-extended
        return wrap(1 if pattern(a, et) == 1 else (-1 if e % 2 else 1)
                    if pattern(a, et) == pattern(-1, et) else 0, et)
    if a in (0, 1, -1):
        return wrap(a**e, et)  # exact, never overflows
    return wrap(pow(a, e & 63, 1 << bits), et)  # e >= 64 overflows every width for |a| >= 2


def pattern(v: int, et: str) -> int:
    return v & ((1 << element_type(et).bits) - 1)


def shift_amount(b: int, et: str) -> int:
    return pattern(b, et)  # read as unsigned: negative amounts are huge


BINARY_INT = {
    "add": lambda a, b, et: wrap(a + b, et),
    "subtract": lambda a, b, et: wrap(a - b, et),
    "multiply": lambda a, b, et: wrap(a * b, et),
    "divide": c_div,
    "remainder": c_rem,
    "maximum": lambda a, b, et: max(a, b),
    "minimum": lambda a, b, et: min(a, b),
    "power": int_pow,
    "and": lambda a, b, et: wrap(pattern(a, et) & pattern(b, et), et),
    "or": lambda a, b, et: wrap(pattern(a, et) | pattern(b, et), et),
    "xor": lambda a, b, et: wrap(pattern(a, et) ^ pattern(b, et), et),
    "shift_left": lambda a, b, et: wrap(pattern(a, et) << shift_amount(b, et), et)
    if shift_amount(b, et) < element_type(et).bits else 0,
    "shift_right_logical": lambda a, b, et: wrap(pattern(a, et) >> shift_amount(b, et), et)
    if shift_amount(b, et) < element_type(et).bits else 0,
    # the bit pattern read as signed, shifted with sign fill (also for unsigned types)
    "shift_right_arithmetic": lambda a, b, et: wrap(
        wrap(a, "i" + str(element_type(et).bits)) >> min(shift_amount(b, et), element_type(et).bits - 1), et),
}

UNARY_INT = {
    "negate": lambda a, et: wrap(-a, et),
    "not": lambda a, et: wrap(~a, et),
    "popcnt": lambda a, et: wrap(bin(pattern(a, et)).count("1"), et),
    "count_leading_zeros": lambda a, et: wrap(element_type(et).bits - pattern(a, et).bit_length(), et),
}
SIGNED_UNARY_INT = {
    "abs": lambda a, et: wrap(abs(a), et),
    "sign": lambda a, et: (a > 0) - (a < 0),
}


@pytest.mark.parametrize("et", INT_TYPES)
@pytest.mark.parametrize("name", sorted(BINARY_INT))
def test_integer_binary_ops_match_python_integers(name, et):
    lhs, rhs, ps = pairs(et)
    got = run(name, lhs, rhs)
    assert got.dtype == element_type(et).dtype
    want = [BINARY_INT[name](a, b, et) for a, b in ps]
    bad = [(a, b, g, w) for (a, b), g, w in zip(ps, got.tolist(), want, strict=True) if g != w]
    assert not bad, f"{name} {et}: (lhs, rhs, got, want) {bad[:8]}"


@pytest.mark.parametrize("et", INT_TYPES)
def test_integer_unary_ops_match_python_integers(et):
    values = int_values(et)
    ops = dict(UNARY_INT, **(SIGNED_UNARY_INT if element_type(et).is_signed else {}))
    for name, f in ops.items():
        got = run(name, arr(values, et))
        assert got.dtype == element_type(et).dtype
        assert got.tolist() == [f(a, et) for a in values], (name, et, values)


@pytest.mark.parametrize("et", ["i8", "i32", "i64"])
def test_integer_division_edge_cases(et):
    lo = element_type(et).min_value()
    lhs = arr([7, -7, 7, -7, lo, lo, 5, -5, 0], et)
    rhs = arr([2, 2, -2, -2, -1, 0, 0, 0, 0], et)
    assert run("divide", lhs, rhs).tolist() == [3, -3, -3, 3, lo, -1, -1, -1, -1]
    assert run("remainder", lhs, rhs).tolist() == [1, -1, 1, -1, 0, lo, 5, -5, 0]


def test_unsigned_division_by_zero_is_all_ones():
    assert run("divide", arr([7, 0], "ui8"), arr([0, 0], "ui8")).tolist() == [255, 255]
    assert run("divide", arr([7], "ui64"), arr([0], "ui64")).tolist() == [2**64 - 1]
    assert run("remainder", arr([7, 0], "ui32"), arr([0, 0], "ui32")).tolist() == [7, 0]


def test_abs_and_negate_of_int_min_wrap():
    for et in ("i2", "i4", "i8", "i16", "i32", "i64"):
        lo = element_type(et).min_value()
        assert run("abs", arr([lo], et)).tolist() == [lo]
        assert run("negate", arr([lo], et)).tolist() == [lo]


def test_power_negative_exponents_and_overflow():
    base = arr([1, -1, -1, 2, 0, -2, 3, 0, 2], "i32")
    exponent = arr([-3, -3, -2, -1, -1, -5, 40, 0, 31], "i32")
    # 3^40 wraps mod 2^32; 2^31 wraps to INT_MIN
    assert run("power", base, exponent).tolist() == [1, -1, 1, 0, 0, 0, 689956897, 1, -(2**31)]
    assert run("power", arr([2, 3, 255, 0], "ui8"), arr([8, 5, 2, 0], "ui8")).tolist() == [0, 243, 1, 1]
    # overflowing exponents: XLA's low 6 bits (3^64 -> 3^0, 3^65 -> 3^1); 0^64 stays 0, (-1)^65 = -1
    base = arr([3, 3, 2, 0, -1, 1], "i64")
    assert run("power", base, arr([64, 65, 66, 64, 65, 2**62], "i64")).tolist() == [1, 3, 4, 0, -1, 1]
    # an unsigned exponent with its top bit set counts as negative (XLA): 3^200 -> 0, 255^129 -> 255
    assert run("power", arr([3, 255, 1], "ui8"), arr([200, 129, 200], "ui8")).tolist() == [0, 255, 1]
    # ... but not in ui4, which XLA stores zero-extended in a byte: 3^8 = 6561 = 1 (mod 16)
    assert run("power", arr([3], "ui4"), arr([8], "ui4")).tolist() == [1]


def test_shift_amounts_out_of_range():
    lhs = arr([-8, -8, 5, 5, 5, -1], "i8")
    rhs = arr([8, -1, 7, 9, -1, 100], "i8")
    assert run("shift_left", lhs, rhs).tolist() == [0, 0, -128, 0, 0, 0]
    assert run("shift_right_arithmetic", lhs, rhs).tolist() == [-1, -1, 0, 0, 0, -1]
    assert run("shift_right_logical", lhs, rhs).tolist() == [0, 0, 0, 0, 0, 0]
    # arithmetic shift of an unsigned type fills with its top bit
    assert run("shift_right_arithmetic", arr([200, 5, 255], "ui8"), arr([8, 255, 7], "ui8")).tolist() == [
        255, 0, 255]


def test_clz_and_popcnt_narrow_widths():
    i4 = arr([-8, -1, 0, 1, 7], "i4")
    assert run("count_leading_zeros", i4).tolist() == [0, 0, 4, 3, 1]
    assert run("popcnt", i4).tolist() == [1, 4, 0, 1, 3]
    # i2: popcnt(-1) = 2 and clz(0) = 2 wrap to -2
    i2 = arr([-2, -1, 0, 1], "i2")
    assert run("popcnt", i2).tolist() == [1, -2, 0, 1]
    assert run("count_leading_zeros", i2).tolist() == [0, 0, -2, 1]
    assert run("count_leading_zeros", arr([0, 1, 2**63], "ui64")).tolist() == [64, 63, 0]


BOOL_OPS = {
    "add": lambda a, b: a or b,
    "multiply": lambda a, b: a and b,
    "maximum": lambda a, b: a or b,
    "minimum": lambda a, b: a and b,
    "and": lambda a, b: a and b,
    "or": lambda a, b: a or b,
    "xor": lambda a, b: a != b,
}


@pytest.mark.parametrize("name", sorted(BOOL_OPS))
def test_boolean_ops(name):
    lhs = arr([False, False, True, True], "i1")
    rhs = arr([False, True, False, True], "i1")
    got = run(name, lhs, rhs)
    assert got.dtype == np.bool_
    assert got.tolist() == [BOOL_OPS[name](a, b) for a, b in zip(lhs.tolist(), rhs.tolist(), strict=True)]


# --- floats -------------------------------------------------------------------------

FLOAT_TYPES = ["f16", "bf16", "f32", "f64", "f8E4M3FN", "f8E5M2"]


def test_narrow_floats_round_once_to_nearest_even():
    # bf16 has 8 significand bits: 1 + 2^-8 is a tie (-> 1.0), 1 + 3*2^-8 ties up to 1 + 2^-6
    got = run("add", arr([1.0, 1.0], "bf16"), arr([2.0**-8, 3 * 2.0**-8], "bf16"))
    assert got.astype(np.float64).tolist() == [1.0, 1.0 + 2.0**-6]
    got = run("add", arr([1.0, 1.0], "f16"), arr([2.0**-11, 3 * 2.0**-11], "f16"))
    assert got.astype(np.float64).tolist() == [1.0, 1.0 + 2.0**-9]
    # 1/3 in bf16 is 0.333984375 (0x3EAB)
    assert bits_of(run("divide", arr([1.0], "bf16"), arr([3.0], "bf16"))) == [0x3EAB]


def test_narrow_float_overflow():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the overflowing casts must not warn either
        got = run("add", arr([65504.0, 60000.0], "f16"), arr([32.0, 6000.0], "f16"))
        assert got.tolist() == [math.inf] * 2
        # f8E4M3FN has no infinity: 448 + 32 overflows to NaN
        got = run("add", arr([448.0, 1.0], "f8E4M3FN"), arr([32.0, 0.0625], "f8E4M3FN")).astype(np.float32)
        assert np.isnan(got[0]) and got[1] == 1.0
        # f4E2M1FN has neither: 6 * 6 saturates to 6; sqrt(6) = 2.449 rounds to 2
        f4 = arr([6.0], "f4E2M1FN")
        assert run("multiply", f4, f4).astype(np.float32).tolist() == [6.0]
        assert run("sqrt", f4).astype(np.float32).tolist() == [2.0]


@pytest.mark.parametrize("et", FLOAT_TYPES)
def test_maximum_minimum_nan_and_signed_zero(et):
    lhs = arr([0.0, -0.0, np.nan, 1.0, -1.0, -0.0], et)
    rhs = arr([-0.0, 0.0, 1.0, np.nan, 2.0, -0.0], et)
    mx, mn = run("maximum", lhs, rhs), run("minimum", lhs, rhs)
    assert mx.dtype == mn.dtype == element_type(et).dtype
    mx64, mn64 = mx.astype(np.float64), mn.astype(np.float64)
    assert np.isnan(mx64[2:4]).all() and np.isnan(mn64[2:4]).all()
    assert mx64[[0, 1, 4, 5]].tolist() == [0.0, 0.0, 2.0, 0.0]
    assert mn64[[0, 1, 4, 5]].tolist() == [0.0, 0.0, -1.0, 0.0]
    assert np.signbit(mx64[[0, 1, 5]]).tolist() == [False, False, True]
    assert np.signbit(mn64[[0, 1, 5]]).tolist() == [True, True, True]


def test_maximum_keeps_the_nan_operand_bits():
    nan = from_bits([0x7FC00001], "f32")[0]
    got = run("maximum", np.array([nan, 1.0], np.float32), np.array([1.0, nan], np.float32))
    assert bits_of(got) == [0x7FC00001, 0x7FC00001]


def test_complex_maximum_minimum_are_lexicographic():
    lhs = np.array([1.5 + 2.5j, 1.5 + 7.5j, 0.0 + 1.5j, complex(0.0, 1.0), complex(1.0, -0.0)], np.complex64)
    rhs = np.array([7.5 + 1.5j, 1.5 + 2.5j, complex(-0.0, 2.5), complex(-0.0, 1.0), complex(1.0, 0.0)],
                   np.complex64)
    mx, mn = run("maximum", lhs, rhs), run("minimum", lhs, rhs)
    assert mx.tolist() == [7.5 + 1.5j, 1.5 + 7.5j, 2.5j, 1j, 1 + 0j]
    assert mn.tolist() == [1.5 + 2.5j, 1.5 + 2.5j, 1.5j, 1j, 1 + 0j]
    # equal pairs give rhs (reference interpreter, jax.lax): the signs of zero show which
    assert np.signbit(mx[3].real) and not np.signbit(mx[4].imag)
    assert np.signbit(mn[3].real) and not np.signbit(mn[4].imag)
    # the imaginary parts decide between equal real parts; NaN comparisons give rhs
    a = np.array([1 + 1j, 1 + 2j, complex(1, np.nan), complex(np.nan, 0)], np.complex128)
    b = np.array([1 + 2j, 1 + 1j, 1 + 2j, 0j], np.complex128)
    assert run("maximum", a, b)[:3].tolist() == [1 + 2j, 1 + 2j, 1 + 2j]
    assert run("minimum", a, b).tolist() == [1 + 1j, 1 + 1j, 1 + 2j, 0j]


@pytest.mark.parametrize("et", FLOAT_TYPES)
def test_rounding_ops(et):
    x = arr([-2.5, -1.5, -0.5, -0.2, 0.5, 1.5, 2.5, 3.75, np.inf, np.nan], et)
    xs = x.astype(np.float64)
    afz = run("round_nearest_afz", x).astype(np.float64)
    even = run("round_nearest_even", x).astype(np.float64)
    floor = run("floor", x).astype(np.float64)
    ceil = run("ceil", x).astype(np.float64)
    finite = np.isfinite(xs)
    # only values the type can hold are compared (f8E5M2 holds 3.5 for 3.75, ...)
    want_afz = np.where(finite, np.sign(xs) * np.floor(np.abs(xs) + 0.5), xs)
    want_even = np.where(finite, np.rint(xs), xs)
    np.testing.assert_array_equal(afz, want_afz)
    np.testing.assert_array_equal(even, want_even)
    np.testing.assert_array_equal(floor, np.floor(xs))
    np.testing.assert_array_equal(ceil, np.ceil(xs))
    assert np.signbit(afz[[2, 3]]).all()  # -0.5 -> -1, -0.2 -> -0.0
    assert afz[:3].tolist() == [-3.0, -2.0, -1.0] and even[:3].tolist() == [-2.0, -2.0, -0.0]


def test_round_nearest_afz_does_not_add_half():
    # 0.49999997 + 0.5 rounds to 1.0 in f32; the op must give 0
    assert run("round_nearest_afz", np.array([0.49999997, -0.49999997], np.float32)).tolist() == [0.0, -0.0]


def test_ceil_floor_of_subnormals_and_zeros():
    x = from_bits([0x8001, 0x0001, 0x8000], "bf16")
    assert bits_of(run("ceil", x)) == [0x8000, 0x3F80, 0x8000]  # -0.0, 1.0, -0.0
    assert bits_of(run("floor", x)) == [0xBF80, 0x0000, 0x8000]  # -1.0, 0.0, -0.0


@pytest.mark.parametrize("et", FLOAT_TYPES)
def test_sign_of_floats(et):
    x = arr([-3.0, -0.0, 0.0, 2.0, np.nan, -448.0], et)
    got = run("sign", x).astype(np.float64)
    assert got[[0, 1, 2, 3, 5]].tolist() == [-1.0, 0.0, 0.0, 1.0, -1.0]
    assert np.signbit(got[1]) and np.isnan(got[4])


def test_sign_of_complex():
    x = np.array([3 + 4j, 0j, complex(np.nan, 0.0), complex(0.0, np.nan), complex(np.inf, 1.0)], C128)
    got = run("sign", x)
    assert got[0] == 0.6 + 0.8j and got[1] == 0j
    assert np.isnan(got[2].real) and np.isnan(got[2].imag) and np.isnan(got[3].real) and np.isnan(got[3].imag)
    assert np.isnan(got[4].real) and got[4].imag == 0.0  # (inf / inf, 1 / inf)


@pytest.mark.parametrize("et", FLOAT_TYPES)
def test_negate_and_abs_are_sign_bit_operations(et):
    x = arr([1.5, -2.0, 0.0, -0.0, 448.0, -448.0], et)  # f8E4M3FN has no inf: 448 is its max
    neg, ab = run("negate", x).astype(np.float64), run("abs", x).astype(np.float64)
    assert neg.tolist() == [-1.5, 2.0, -0.0, 0.0, -448.0, 448.0]
    assert np.signbit(neg).tolist() == [True, False, True, False, True, False]
    assert ab.tolist() == [1.5, 2.0, 0.0, 0.0, 448.0, 448.0] and not np.signbit(ab).any()


def test_negate_flips_nan_sign_and_keeps_payload():
    assert bits_of(run("negate", from_bits([0x7FFF, 0xFFFF], "bf16"))) == [0xFFFF, 0x7FFF]
    assert bits_of(run("abs", from_bits([0xFFFF], "f16"))) == [0x7FFF]


def test_fnuz_negate_of_zero_is_zero():
    # FNUZ formats have no -0.0: 0x80 is their NaN
    x = arr([0.0, 1.0], "f8E4M3FNUZ")
    assert bits_of(run("negate", x)) == [0x00, bits_of(arr([-1.0], "f8E4M3FNUZ"))[0]]


def test_abs_of_complex_is_real():
    got = run("abs", np.array([3 + 4j, -5j], np.complex64), result="f32")
    assert got.dtype == np.float32 and got.tolist() == [5.0, 5.0]
    got = run("abs", np.array([3 + 4j], np.complex128), result="f64")
    assert got.dtype == np.float64 and got.tolist() == [5.0]


@pytest.mark.parametrize("et", FLOAT_TYPES)
def test_is_finite(et):
    x = arr([1.0, -0.0, np.inf, -np.inf, np.nan], et)
    got = run("is_finite", x, result="i1")
    assert got.dtype == np.bool_
    finite = np.isfinite(x.astype(np.float64))  # f8E4M3FN turns inf into NaN
    assert got.tolist() == finite.tolist()


def test_float_remainder_is_fmod():
    got = run("remainder", np.array([5.5, -5.5, 5.5, 1.0, np.inf, 3.0, -0.0], np.float32),
              np.array([2.0, 2.0, -2.0, 0.0, 2.0, np.inf, 1.0], np.float32))
    assert got[[0, 1, 2, 5]].tolist() == [1.5, -1.5, 1.5, 3.0]
    assert np.isnan(got[3]) and np.isnan(got[4]) and np.signbit(got[6])
    # exact in f16: the remainder of 1000 by f16(0.1) = 0.0999755859375
    got = run("remainder", arr([1000.0], "f16"), arr([0.1], "f16"))
    assert got.tolist() == [float(np.float16(math.fmod(1000.0, float(np.float16(0.1)))))]


def test_logistic_f16_rounds_each_step_of_the_spec_formula():
    # division(1, addition(1, exp(-x))) in f16: exp(12) overflows f16, so the result is 0 (XLA too)
    assert run("logistic", arr([-12.0, 0.0], "f16")).tolist() == [0.0, 0.5]
    got = run("logistic", np.array([-12.0], np.float32))
    assert got.tolist() == [np.float32(1) / (np.float32(1) + np.exp(np.float32(12)))]
    # bf16 is computed in f32 and rounded once: 1 / (1 + e^0.0986328125) = 0.47536... -> 0.474609375
    assert run("logistic", arr([-0.0986328125], "bf16")).astype(np.float64).tolist() == [0.474609375]


def test_float_special_values():
    f32 = np.float32
    assert run("sqrt", np.array([-1.0, -0.0, np.inf], f32)).astype(np.float64)[1:].tolist() == [-0.0, np.inf]
    assert np.isnan(run("sqrt", np.array([-1.0], f32))[0])
    assert run("rsqrt", np.array([0.0, -0.0, np.inf, 4.0], f32)).tolist() == [np.inf, -np.inf, 0.0, 0.5]
    assert run("cbrt", np.array([-8.0, -0.0, 27.0], f32)).tolist() == [-2.0, -0.0, 3.0]
    assert run("log", np.array([0.0, 1.0], f32)).tolist() == [-np.inf, 0.0]
    assert run("log_plus_one", np.array([-1.0, 1e-30], f32)).tolist() == [-np.inf, np.float32(1e-30)]
    assert run("exponential_minus_one", np.array([1e-30, -np.inf], f32)).tolist() == [np.float32(1e-30), -1.0]
    got = run("power", np.array([0.0, -0.0, np.inf, 1.0, np.nan, -1.0], f32),
              np.array([-1.0, -3.0, -0.5, np.nan, 0.0, np.inf], f32))
    assert got.tolist() == [np.inf, -np.inf, 0.0, 1.0, 1.0, 1.0]
    assert run("atan2", np.array([0.0, -0.0], f32), np.array([-1.0, -1.0], f32)).tolist() == [
        np.float32(math.pi), -np.float32(math.pi)]


def test_transcendental_values_on_narrow_floats():
    # computed in f32, rounded once: sin(1) = 0.84147... -> bf16 0.83984375
    assert run("sine", arr([1.0], "bf16")).astype(np.float64).tolist() == [0.83984375]
    assert run("exponential", arr([1.0], "f16")).tolist() == [float(np.float16(math.e))]


# --- complex ------------------------------------------------------------------------

C128 = np.complex128


def close(got: np.ndarray, want, rtol: float = 1e-13) -> None:
    np.testing.assert_allclose(got, np.asarray(want, dtype=got.dtype), rtol=rtol, atol=1e-300)


def test_complex_functions_hand_values():
    z = np.array([3 + 4j], C128)
    close(run("sqrt", z), [2 + 1j])
    close(run("rsqrt", np.array([-1 + 0j, 3 + 4j], C128)), [-1j, 0.4 - 0.2j])
    close(run("exponential", np.array([1j * math.pi], C128)), [-1 + 1.2246467991473532e-16j], rtol=1e-15)
    close(run("log", np.array([-1 + 0j], C128)), [1j * math.pi])
    # the principal cube root of -8 is 2 e^(i pi/3) = 1 + i sqrt(3)
    close(run("cbrt", np.array([-8 + 0j], C128)), [1 + 1j * math.sqrt(3)])
    close(run("cbrt", np.array([3 + 4j], C128)), [1.6289371459221759 + 0.5201745023045458j])
    # atan2 of real-valued complex numbers is the real atan2
    close(run("atan2", np.array([1 + 0j], C128), np.array([1 + 0j], C128)), [math.pi / 4])
    close(run("logistic", np.array([0j], C128)), [0.5])
    close(run("tanh", np.array([1j * math.pi / 4], C128)), [1j])
    close(run("tan", np.array([math.pi / 4 + 0j], C128)), [1.0])
    close(run("sine", np.array([math.pi / 2 + 0j], C128)), [1.0])
    close(run("cosine", np.array([0j], C128)), [1.0])
    close(run("power", np.array([1j], C128), np.array([2 + 0j], C128)), [-1 + 0j])
    close(run("divide", np.array([1 + 2j], C128), np.array([3 - 4j], C128)), [(1 + 2j) / (3 - 4j)])
    close(run("multiply", np.array([1 + 2j], np.complex64), np.array([3 - 4j], np.complex64)), [11 + 2j])


def test_complex_power_of_zero():
    zero = np.zeros(5, C128)
    got = run("power", zero, np.array([0j, 2 + 0j, 0.5 + 1j, -1 + 0j, 1j], C128))
    assert got[:2].tolist() == [1 + 0j, 0j]
    assert np.isnan(got[2:].real).all() and np.isnan(got[2:].imag).all()


def test_complex_expm1_log1p_are_accurate_near_zero():
    z = np.array([1e-10 + 1e-10j], C128)
    # e^z - 1 = z + z^2/2 + ...: real part 1e-10 + (1e-20 - 1e-20)/2 = 1e-10
    close(run("exponential_minus_one", z), [1e-10 + (1e-10 + 1e-20) * 1j], rtol=1e-15)
    # log(1 + z) = z - z^2/2: real 1e-10, imag 1e-10 - 1e-20
    close(run("log_plus_one", z), [1e-10 + (1e-10 - 1e-20) * 1j], rtol=1e-15)
    # the spec's formula: log(hypot(x + 1, y)) + i atan2(y, x + 1)
    w = np.array([1 + 2j, -0.5 + 3j], C128)
    want = np.log(np.hypot(w.real + 1, w.imag)) + 1j * np.arctan2(w.imag, w.real + 1)
    close(run("log_plus_one", w), want)


def test_complex_remainder_is_unsupported():
    with pytest.raises(UnsupportedError, match="remainder of complex"):
        run("remainder", np.array([1 + 1j], np.complex64), np.array([1 + 0j], np.complex64))


# --- every op: result dtype, no numpy warnings ----------------------------------------

def _sample_inputs(name: str):
    """(inputs, result type) for one run of ``name`` on awkward values."""
    if name in ("and", "or", "xor", "shift_left", "shift_right_arithmetic", "shift_right_logical"):
        return [arr([-128, 5, 127], "i8"), arr([-1, 9, 0], "i8")], None
    if name in ("not", "popcnt", "count_leading_zeros"):
        return [arr([-128, 0, 127], "i8")], None
    if name == "is_finite":
        return [arr([0.0, np.inf, np.nan], "bf16")], "i1"
    if name in ("floor", "ceil", "round_nearest_afz", "round_nearest_even"):
        return [arr([-1.5, np.inf, np.nan], "f16")], None
    x = arr([0.0, -1.0, np.inf], "f32")
    if name in ("abs", "sign", "negate", "sqrt", "rsqrt", "cbrt", "exponential", "exponential_minus_one",
                "log", "log_plus_one", "logistic", "sine", "cosine", "tan", "tanh"):
        return [x], None
    return [x, arr([0.0, 0.0, np.inf], "f32")], None


@pytest.mark.parametrize("name", OPS)
def test_no_numpy_warning_leaks_and_result_dtype(name):
    inputs, result = _sample_inputs(name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = run(name, *inputs, result=result)
    want = element_type(result).dtype if result else inputs[0].dtype
    assert isinstance(got, np.ndarray) and got.dtype == want and got.shape == inputs[0].shape


def test_integer_division_by_zero_raises_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lo = np.iinfo(np.int64).min
        assert run("divide", arr([lo, 1], "i64"), arr([-1, 0], "i64")).tolist() == [lo, -1]


def test_rank0_and_empty_tensors_stay_arrays():
    got = run("add", np.array(2, ml_dtypes.int4), np.array(3, ml_dtypes.int4))
    assert isinstance(got, np.ndarray) and got.shape == () and got.dtype == ml_dtypes.int4 and int(got) == 5
    got = run("multiply", np.zeros((2, 0, 3), np.float32), np.zeros((2, 0, 3), np.float32))
    assert got.shape == (2, 0, 3) and got.dtype == np.float32


# --- verification ---------------------------------------------------------------------

def verify_error(name: str, inputs: list[np.ndarray], result: TensorType,
                 operand_types: list | None = None) -> VerificationError:
    with pytest.raises(VerificationError) as info:
        apply_op(f"stablehlo.{name}", inputs, result_types=[result], operand_types=operand_types)
    return info.value


F32x3 = np.zeros(3, np.float32)
I32x3 = np.zeros(3, np.int32)


@pytest.mark.parametrize("name,inputs,result,label", [
    ("and", [F32x3, F32x3], tensor_type([3], "f32"), "I1"),
    ("not", [F32x3], tensor_type([3], "f32"), "I1"),
    ("sqrt", [I32x3], tensor_type([3], "i32"), "I1"),
    ("floor", [np.zeros(3, np.complex64)], tensor_type([3], "complex<f32>"), "I1"),
    ("abs", [np.zeros(3, np.uint8)], tensor_type([3], "ui8"), "I1"),
    ("sign", [np.zeros(3, np.uint32)], tensor_type([3], "ui32"), "I1"),
    ("subtract", [np.zeros(3, bool), np.zeros(3, bool)], tensor_type([3], "i1"), "I1"),
    ("shift_left", [I32x3, F32x3], tensor_type([3], "i32"), "I2"),
    ("popcnt", [np.zeros(3, bool)], tensor_type([3], "i1"), "I1"),
    ("is_finite", [I32x3], tensor_type([3], "i1"), "I1"),
    ("add", [F32x3, np.zeros(4, np.float32)], tensor_type([3], "f32"), "C1"),
    ("add", [F32x3, F32x3], tensor_type([3], "f64"), "C1"),
    ("multiply", [F32x3, F32x3], tensor_type([3, 1], "f32"), "C1"),
    ("xor", [I32x3, np.zeros(3, np.int64)], tensor_type([3], "i32"), "C1"),
    ("negate", [F32x3], tensor_type([3], "bf16"), "C1"),
    ("power", [I32x3, I32x3], tensor_type([3], "ui32"), "C1"),
    ("abs", [F32x3], tensor_type([4], "f32"), "C1"),
    ("abs", [np.zeros(3, np.complex64)], tensor_type([3], "complex<f32>"), "C2"),
    ("abs", [np.zeros(3, np.complex64)], tensor_type([3], "f64"), "C2"),
    ("is_finite", [F32x3], tensor_type([2], "i1"), "C1"),
])
def test_verification_errors_name_the_constraint(name, inputs, result, label):
    err = verify_error(name, inputs, result)
    assert err.constraint == label
    assert str(err).startswith(f"error: {name} ({label}): ")


def test_verification_message_shows_the_types():
    err = verify_error("and", [F32x3, F32x3], tensor_type([3], "f32"))
    assert "tensor<3xf32>" in str(err) and "boolean or integer" in str(err)
    err = verify_error("add", [F32x3, F32x3], tensor_type([3], "f64"))
    assert "(tensor<3xf32>, tensor<3xf32>) -> tensor<3xf64>" in str(err)


def test_is_finite_result_must_be_boolean():
    err = verify_error("is_finite", [F32x3], tensor_type([3], "f32"))
    assert "boolean" in str(err)


def test_wrong_operand_count():
    err = verify_error("add", [F32x3], tensor_type([3], "f32"))
    assert "expects 2 operand(s)" in str(err)


def test_signed_and_signless_spellings_are_the_same_type():
    si32 = tensor_type([3], "si32")
    got = apply_op("stablehlo.add", [arr([1, 2, 3], "i32")] * 2, result_types=[si32],
                   operand_types=[tensor_type([3], "i32"), si32])
    assert got[0].tolist() == [2, 4, 6]


def test_dynamic_dims_verify_and_runtime_shapes_must_agree():
    dyn = TensorType((None,), element_type("f32"))
    got = apply_op("stablehlo.add", [F32x3 + 1, F32x3 + 2], result_types=[dyn], operand_types=[dyn, dyn])
    assert got[0].tolist() == [3.0] * 3
    with pytest.raises(ExecutionError, match="different shapes"):
        apply_op("stablehlo.add", [F32x3, np.zeros(1, np.float32)], result_types=[dyn],
                 operand_types=[dyn, dyn])


# --- quantized ------------------------------------------------------------------------

def quant_type(shape, scale: float = 0.5, axis: int | None = None, storage: str = "i8",
               expressed: str = "f32") -> TensorType:
    n = 1 if axis is None else shape[axis]
    q = QuantizedElementType(element_type(storage), element_type(expressed), (scale,) * n, (0,) * n, axis)
    return TensorType(tuple(shape), q)


def test_quantized_operands_dequantize_op_quantize():
    qt = quant_type([3])
    x = np.array([1, 3, 5], np.int8)
    # [0.5, 1.5, 2.5] + [0.5, 0.5, 0.5] = [1, 2, 3] -> / 0.25 (the storage add gives [2, 4, 6])
    (r,) = apply_op("stablehlo.add", [x, np.ones(3, np.int8)], result_types=[quant_type([3], 0.25)],
                    operand_types=[qt, qt])
    assert r.dtype == np.int8 and r.tolist() == [4, 8, 12]
    # tanh([0, 1, -1]) / 0.5 = [0, 1.52, -1.52] -> [0, 2, -2]
    (r,) = apply_op("stablehlo.tanh", [np.array([0, 2, -2], np.int8)], result_types=[qt], operand_types=[qt])
    assert r.tolist() == [0, 2, -2]


def test_quantized_baseline_types_ignore_scales():
    # scales may differ (baseline_type): max([0.5, 1, 1.5], [2, 0, 2]) = [2, 1, 2] -> / 0.25
    (r,) = apply_op("stablehlo.maximum", [np.array([1, 2, 3], np.int8), np.array([1, 0, 1], np.int8)],
                    result_types=[quant_type([3], 0.25)],
                    operand_types=[quant_type([3], 0.5), quant_type([3], 2.0)])
    assert r.tolist() == [8, 4, 8]


def test_quantized_constraint_violations():
    qt, f32 = quant_type([3]), tensor_type([3], "f32")
    x = np.zeros(3, np.int8)
    assert verify_error("add", [x, np.zeros(3, np.float32)], qt, [qt, f32]).constraint == "C2"
    assert verify_error("add", [x, x], quant_type([3], storage="i16"), [qt, qt]).constraint == "C3"
    assert verify_error("add", [x, x], quant_type([3], expressed="f16"), [qt, qt]).constraint == "C4"
    per_axis = quant_type([3], axis=0)
    assert verify_error("add", [x, x], qt, [per_axis, qt]).constraint == "C5"
    # per-axis operands are only allowed for add
    assert verify_error("subtract", [x, x], per_axis, [per_axis, per_axis]).constraint == "I1"
    # storage_min/storage_max are part of the baseline type
    narrow = TensorType((3,), QuantizedElementType(element_type("i8"), element_type("f32"), (0.5,), (0,),
                                                   storage_min=-100, storage_max=100))
    assert verify_error("multiply", [x, x], narrow, [qt, qt]).constraint == "C1"


def test_is_finite_of_quantized_values_is_true():
    qt = quant_type([2])
    (got,) = apply_op("stablehlo.is_finite", [np.array([-128, 127], np.int8)],
                      result_types=[tensor_type([2], "i1")], operand_types=[qt])
    assert got.dtype == np.bool_ and got.tolist() == [True, True]


# --- registration, aliases, provenance ------------------------------------------------

@pytest.mark.parametrize("name", OPS)
def test_registered_with_alias_and_elementwise_provenance(name):
    opdef = lookup(f"stablehlo.{name}")
    assert opdef is not None and opdef.verify is not None and opdef.doc
    assert opdef.provenance is prov.elementwise_provenance
    assert lookup(ALIASES[name]) is opdef


def test_provenance_same_index_combine():
    from hlolab.interp.single import build_op
    from hlolab.ops.registry import OpCall

    lhs, rhs = np.arange(6, dtype=np.float32).reshape(2, 3), np.ones((2, 3), np.float32)
    op = build_op("stablehlo.add", [lhs, rhs], result_types=[tensor_type([2, 3], "f32")])
    opdef = lookup("stablehlo.add")
    p = opdef.provenance(OpCall(op), [lhs, rhs], [run("add", lhs, rhs)])
    got = sorted((s.operand, s.index, s.role) for s in p.sources(0, (1, 2)))
    assert got == [(0, (1, 2), "combine"), (1, (1, 2), "combine")]
    mask = np.zeros((2, 3), bool)
    mask[0, 1] = True
    back = p.back(0, mask)
    assert sorted(back) == [(0, "combine"), (1, "combine")]
    assert all(m.tolist() == mask.tolist() for m in back.values())
    # a unary op on a rank-0 tensor
    x = np.array(2.0, np.float32)
    op = build_op("stablehlo.sqrt", [x], result_types=[tensor_type([], "f32")])
    p = lookup("stablehlo.sqrt").provenance(OpCall(op), [x], [run("sqrt", x)])
    assert [(s.operand, s.index, s.role) for s in p.sources(0, ())] == [(0, (), "combine")]


# --- records and result type inference ---------------------------------------------------

BINARY = ("add subtract multiply divide remainder power maximum minimum atan2 and or xor shift_left "
          "shift_right_logical shift_right_arithmetic").split()


def infer(name: str, *operand_types):
    opdef = lookup(f"stablehlo.{name}")
    return opdef.infer(opdef.attrs(), list(operand_types))


@pytest.mark.parametrize("name", OPS)
def test_every_op_is_elementwise_without_attributes(name):
    opdef = lookup(f"stablehlo.{name}")
    assert opdef.family == "elementwise"
    assert opdef.attrs is Attrs and opdef.attrs.ir_names() == frozenset()


@pytest.mark.parametrize("name", sorted(set(OPS) - {"abs", "is_finite"}))
def test_infer_gives_the_operand_type(name):
    et = "i32" if name in ("and", "or", "xor", "not", "popcnt", "count_leading_zeros") \
        or name.startswith("shift") else "f32"
    arity = 2 if name in BINARY else 1
    ty = tensor_type([2, 3], et)
    assert infer(name, *[ty] * arity) == [ty]


def test_infer_joins_dynamic_dims_of_both_operands():
    lhs, rhs = tensor_type([None, 3, None], "f32"), tensor_type([2, None, None], "f32")
    assert infer("add", lhs, rhs) == [tensor_type([2, 3, None], "f32")]
    assert infer("atan2", rhs, lhs) == [tensor_type([2, 3, None], "f32")]


def test_infer_of_abs_and_is_finite():
    assert infer("abs", tensor_type([2], "complex<f64>")) == [tensor_type([2], "f64")]
    assert infer("abs", tensor_type([None], "i8")) == [tensor_type([None], "i8")]
    assert infer("is_finite", tensor_type([4, 1], "bf16")) == [tensor_type([4, 1], "i1")]
    assert infer("is_finite", quant_type([3])) == [tensor_type([3], "i1")]


def test_infer_refuses_operands_that_admit_no_result():
    f32, i32 = tensor_type([3], "f32"), tensor_type([3], "i32")
    cases = [
        (("add", f32, tensor_type([4], "f32")), "C1", "shape(lhs) = [3], shape(rhs) = [4] must be equal"),
        (("subtract", f32, tensor_type([3, 1], "f32")), "C1", "must be equal"),
        (("multiply", f32, i32), "C1", "the element types must be equal, got lhs = f32, rhs = i32"),
        (("sqrt", f32, f32), None, "expects 1 operand(s) (operand), got 2"),
        (("add", f32), None, "expects 2 operand(s) (lhs, rhs), got 1"),
        (("negate", TupleType((f32,))), "I1", "operand must be a tensor, got tuple<tensor<3xf32>>"),
        (("add", quant_type([3]), f32), "C2", "must all be quantized"),
        (("add", quant_type([3]), quant_type([3], storage="i16")), "C3", "storage and expressed"),
    ]
    for args, label, message in cases:
        with pytest.raises(InferError) as info:
            infer(*args)
        assert info.value.constraint == label and message in info.value.message, args


def test_infer_of_quantized_operands_leaves_scales_to_the_result():
    # baseline_type: the result may have its own scales and zero points, nothing else
    (got,) = infer("maximum", quant_type([3], 0.5), quant_type([3], 2.0))
    assert type_admits(got, quant_type([3], 0.25))
    assert not type_admits(got, quant_type([3], storage="i16"))
    assert not type_admits(got, quant_type([4], 0.5))
    assert not type_admits(got, tensor_type([3], "f32"))
    (got,) = infer("abs", quant_type([2], 0.5))
    assert type_admits(got, quant_type([2], 3.0)) and not type_admits(got, tensor_type([2], "i8"))
    # add: any quantized result with the operands' storage and expressed types (per-axis too)
    (got,) = infer("add", quant_type([3], axis=0), quant_type([3], 2.0))
    assert type_admits(got, quant_type([3], 0.125, axis=0)) and type_admits(got, quant_type([3], 4.0))
    assert not type_admits(got, quant_type([3], expressed="f16"))
    assert not type_admits(got, tensor_type([3], "f32"))


def test_verification_checks_the_operands_against_each_other_through_infer():
    # each operand fits the dynamic result, but the operands differ: only infer sees it
    dyn = TensorType((None,), element_type("f32"))
    op = build_op("stablehlo.add", [], result_types=[dyn],
                  operand_types=[tensor_type([2], "f32"), tensor_type([3], "f32")])
    with pytest.raises(VerificationError) as info:
        verify_op(op)
    assert info.value.constraint == "C1"
    assert "shape(lhs) = [2], shape(rhs) = [3] must be equal" in info.value.message
    op = build_op("stablehlo.add", [], result_types=[tensor_type([2], "f32")],
                  operand_types=[tensor_type([2], "f32"), dyn])
    verify_op(op)  # no error
