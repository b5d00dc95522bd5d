"""dense<...> literals: parsing every element type, errors, and bit-exact round trips."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hlolab.errors import UnsupportedError
from hlolab.ir.attrs import DenseElementsAttr
from hlolab.ir.dense import DenseSyntaxError, format_dense, parse_dense
from hlolab.numerics import float_format, from_bits, to_bits
from hlolab.types import ALL_ELEMENT_TYPE_NAMES, QuantizedElementType, TensorType, element_type, tensor_type

SPELLINGS = ALL_ELEMENT_TYPE_NAMES + tuple(f"si{b}" for b in (2, 4, 8, 16, 32, 64))


def T(shape: tuple[int, ...], name: str) -> TensorType:
    return tensor_type(shape, name)


def bits_of(a: np.ndarray) -> list[int]:
    return to_bits(np.asarray(a)).reshape(-1).tolist()


# --------------------------------------------------------------------------
# hand-written cases, per element type
# --------------------------------------------------------------------------

@pytest.mark.parametrize("body,shape,name,expected", [
    ("[1, 0, -1, -2]", (4,), "i2", [1, 0, -1, -2]),
    ("[3, 2]", (2,), "i2", [-1, -2]),  # signless: 2-bit patterns, two's complement
    ("[1, 0x3]", (2,), "ui2", [1, 3]),
    ("[7, -8, 0xF, 15]", (4,), "i4", [7, -8, -1, -1]),
    ("[15, 0]", (2,), "ui4", [15, 0]),
    ("[-8, 7]", (2,), "si4", [-8, 7]),
    ("[255, 0x7F, -128, 0xFF]", (4,), "i8", [-1, 127, -128, -1]),
    ("[127, -128]", (2,), "si8", [127, -128]),
    ("[65535, -32768]", (2,), "i16", [-1, -32768]),
    ("[4294967295, 0x80000000]", (2,), "ui32", [4294967295, 2147483648]),
    ("[18446744073709551615, 0]", (2,), "ui64", [18446744073709551615, 0]),
    ("[-9223372036854775808, 0xFFFFFFFFFFFFFFFF]", (2,), "i64", [-(2 ** 63), -1]),
    ("[true, false, 1, 0, 0x1]", (5,), "i1", [True, False, True, False, True]),
])
def test_integer_and_bool_literals(body, shape, name, expected):
    a = parse_dense(body, T(shape, name))
    assert a.dtype == element_type(name).dtype and a.shape == shape
    assert a.tolist() == expected


@pytest.mark.parametrize("body,name,expected_bits", [
    ("0x7FC00000", "f32", [0x7FC00000]),
    ("0x7F800001", "f32", [0x7F800001]),  # a signalling NaN payload, kept
    ("[1.0, -2.5e-3, +1.0, 1, 2e5, .5]", "f32",
     [int(np.float32(v).view(np.uint32)) for v in (1.0, -2.5e-3, 1.0, 1.0, 2e5, 0.5)]),
    ("[3.14159274, 7.52857188E-4]", "f32",  # MLIR's shortest-form output
     [int(np.float32(v).view(np.uint32)) for v in (3.14159274, 7.52857188e-4)]),
    ("[0x7FF0000000000000, 1.2246467991473532E-16, 4.940660e-324]", "f64",
     [0x7FF0000000000000, int(np.float64(1.2246467991473532e-16).view(np.uint64)), 1]),
    ("[0x7E00, -0.0, 65504.0, 5.960460e-08]", "f16", [0x7E00, 0x8000, 0x7BFF, 0x0001]),
    ("[0x7FC0, 1.0, 9.183550e-41, -3.140630e+00]", "bf16", [0x7FC0, 0x3F80, 0x0001, 0xC049]),
    ("[0xFF, 57344.0, 1.52587890625e-05, -0.0]", "f8E5M2", [0xFF, 0x7B, 0x01, 0x80]),
    ("[0.0, -0.0, 1.0, 0.1015630, 3.25, 0x7F, 0xFF, 0.001953130]", "f8E4M3FN",
     [0x00, 0x80, 0x38, 0x1D, 0x45, 0x7F, 0xFF, 0x01]),
    ("[-0.0, 240.0, 0x80]", "f8E4M3FNUZ", [0x00, 0x7F, 0x80]),  # no -0: it is +0
    ("[0.0, -0.0, 1.0, 0.125, 0.1, 3.1415, 0x07, 0x0F, 0x01, 0x09]", "f4E2M1FN",
     [0x0, 0x8, 0x2, 0x0, 0x0, 0x5, 0x7, 0xF, 0x1, 0x9]),
    ("[0.1, 3.1415, 0x1F, 0x3F, 0x21]", "f6E2M3FN", [0x01, 0x15, 0x1F, 0x3F, 0x21]),
    ("[0.1, 3.1415, 0x1F, 0x21]", "f6E3M2FN", [0x02, 0x12, 0x1F, 0x21]),
    ("[0.0, 1.0, 0.125, 0.1, 3.1415, 0x00, 0x80, 0xFF]", "f8E8M0FNU",
     [0x00, 0x7F, 0x7C, 0x7C, 0x81, 0x00, 0x80, 0xFF]),
    ("[nan, -nan, inf, -inf, NaN, Infinity]", "f16", [0x7E00, 0xFE00, 0x7C00, 0xFC00, 0x7E00, 0x7C00]),
    ("[nan, -nan]", "f8E4M3FN", [0x7F, 0xFF]),
    ("[nan, -nan]", "f8E5M2FNUZ", [0x80, 0x80]),
])
def test_float_literals_bits(body, name, expected_bits):
    a = parse_dense(body, T((len(expected_bits),), name))
    assert a.dtype == element_type(name).dtype
    assert bits_of(a) == expected_bits


def test_decimal_is_rounded_once_not_twice():
    # just below the midpoint of bf16 neighbours 0x3F81 and 0x3F82: float32 would
    # round it onto the midpoint and ties-to-even would then pick 0x3F82
    x = np.nextafter((1 + 2.0 ** -7 + 1 + 2.0 ** -6) / 2, 0.0)
    assert bits_of(parse_dense(repr(float(x)), T((), "bf16"))) == [0x3F81]


def test_overflowing_decimal_follows_mlir():
    # MLIR reads decimals as f64, then converts: 1e40 is inf in f32, NaN in f8E4M3FN,
    # the largest value in f4E2M1FN; only a literal beyond f64 is an error
    assert np.isposinf(parse_dense("1e40", T((), "f32")))
    assert bits_of(parse_dense("-1e40", T((), "f8E4M3FN"))) == [0xFF]
    assert parse_dense("[1e40, -7.0]", T((2,), "f4E2M1FN")).astype(float).tolist() == [6.0, -6.0]
    with pytest.raises(DenseSyntaxError, match="too large"):
        parse_dense("1e400", T((), "f64"))


def test_complex_literals():
    a = parse_dense("[(1.0, 2.0), (-0.0, nan), (0x7F800000, -1)]", T((3,), "complex<f32>"))
    assert a.dtype == np.complex64
    assert bits_of(a.real) == [0x3F800000, 0x80000000, 0x7F800000]
    assert bits_of(a.imag) == [0x40000000, 0x7FC00000, 0xBF800000]
    s = parse_dense(" ( 1.5 ,\n -2.5 ) ", T((2, 2), "complex<f64>"))
    assert s.tolist() == [[1.5 - 2.5j] * 2] * 2


def test_splat_shapes_and_zero_size():
    assert parse_dense("7", T((2, 3), "i32")).tolist() == [[7] * 3] * 2
    assert parse_dense("1.5", T((), "bf16")).shape == ()
    for body, shape in [("[]", (0,)), ("", (0,)), ("[[], []]", (2, 0)), ("", (0, 2)),
                        ("[]", (0, 2)), ("  ", (3, 0, 2))]:
        a = parse_dense(body, T(shape, "f32"))
        assert a.shape == shape and a.dtype == np.float32


def test_nested_lists_with_whitespace_anywhere():
    body = "[\n  [ 1 ,2 ],\n\t[3,\n 4 ]\n]"
    assert parse_dense(body, T((2, 2), "i32")).tolist() == [[1, 2], [3, 4]]
    assert parse_dense("[[[- 1]]]", T((1, 1, 1), "i8")).tolist() == [[[-1]]]


def test_quantized_tensor_types_hold_storage_integers():
    q = QuantizedElementType(element_type("i8"), element_type("f32"), (0.5,), (3,))
    t = TensorType((3,), q)
    a = parse_dense("[1, -2, 127]", t)
    assert a.dtype == np.int8 and a.tolist() == [1, -2, 127]
    assert format_dense(a, t) == "[1, -2, 127]"
    with pytest.raises(DenseSyntaxError, match="out of range"):
        parse_dense("[300]", TensorType((1,), q))


# --------------------------------------------------------------------------
# hex strings: raw little-endian element bytes
# --------------------------------------------------------------------------

@pytest.mark.parametrize("body,shape,name,expected", [
    ('"0x0102"', (2,), "i8", [1, 2]),
    ('"0x01000000FFFFFFFF"', (2,), "i32", [1, -1]),
    ('"0x0000C03F"', (3,), "f32", [1.5, 1.5, 1.5]),  # one element's bytes: a splat
    ('"0x803F0040"', (2,), "bf16", [1.0, 2.0]),
    ('"0x010F"', (2,), "i4", [1, -1]),  # sub-byte: one byte per element
    ('"0xFF"', (3,), "i4", [-1, -1, -1]),  # only the low 4 bits count
    ('"0x0F"', (1,), "ui4", [15]),
    ('"0x0709"', (2,), "f4E2M1FN", [6.0, -0.5]),
    ('"0x3F21"', (2,), "f6E2M3FN", [-7.5, -0.125]),
    ('"0x01000101"', (4,), "i1", [True, False, True, True]),  # MLIR now: a byte each
    ('"0x05"', (4,), "i1", [True, False, True, False]),  # older MLIR: bit-packed
    ('"0x0502"', (10,), "i1", [True, False, True] + [False] * 6 + [True]),
    ('"0xFF"', (3,), "i1", [True] * 3),
    ('"0x01"', (3,), "i1", [True] * 3),
    ('"0x0000803F00000040"', (2,), "complex<f32>", [1 + 2j, 1 + 2j]),
    ('"0x"', (0,), "f32", []),
])
def test_hex_strings(body, shape, name, expected):
    a = parse_dense(body, T(shape, name))
    assert a.dtype == element_type(name).dtype
    assert a.reshape(-1).tolist() == expected


@given(st.sampled_from([n for n in ALL_ELEMENT_TYPE_NAMES if n != "i1"]), st.integers(0, 6),
       st.data())
def test_hex_string_bytes_are_little_endian_elements(name, n, data):
    et = element_type(name)
    width = et.dtype.itemsize
    raw = data.draw(st.binary(min_size=width * n, max_size=width * n))
    a = parse_dense('"0x' + raw.hex() + '"', T((n,), name))
    if et.is_complex:
        want = np.frombuffer(raw, dtype=et.dtype.newbyteorder("<"))
        assert a.tobytes() == want.astype(et.dtype).tobytes()
    else:
        udt = np.dtype(f"<u{width}")
        want = np.frombuffer(raw, dtype=udt) & ((1 << et.bits) - 1)
        assert bits_of(a) == want.tolist()


# --------------------------------------------------------------------------
# errors: message and offset
# --------------------------------------------------------------------------

@pytest.mark.parametrize("body,shape,name,message,offset", [
    ("[1, 2]", (3,), "i32", r"inferred shape of elements literal \(\[2\]\) does not match "
                            r"type tensor<3xi32> \(\[3\]\)", 0),
    ("[[1, 2], [3]]", (2, 2), "i32", r"ranks are not consistent.*\[1\] after \[2\]", 9),
    ("[1]", (), "i32", r"\(\[1\]\) does not match type tensor<i32> \(\[\]\)", 0),
    ("[1, 2", (2,), "i32", r"expected ',' or '\]' in a list, got the end", 5),
    ("[1 2]", (2,), "i32", r"expected ',' or '\]' in a list, got '2'", 3),
    ("[1, foo]", (2,), "i32", r"got 'foo'", 4),
    ("[1, 2]]", (2,), "i32", r"unexpected '\]' after the literal", 6),
    ("", (1,), "i32", r"parsed zero elements, but type tensor<1xi32> expects 1", 0),
    ("[1, 128]", (2,), "si8", r"integer value 128 is out of range for si8 \(expected -128..127\)", 4),
    ("[256]", (1,), "i8", r"256 is out of range for i8 \(expected -128..127, or 128..255", 1),
    ("[0, -129]", (2,), "i8", r"-129 is out of range for i8", 4),
    ("[0x100]", (1,), "ui8", r"0x100 is out of range for ui8 \(expected 0..255\)", 1),
    ("[2, -1]", (2,), "ui16", r"negative value -1 for ui16", 4),
    ("[16]", (1,), "i4", r"16 is out of range for i4 \(expected -8..7, or 8..15 as two's", 1),
    ("[8]", (1,), "si4", r"8 is out of range for si4 \(expected -8..7\)", 1),
    ("2", (), "i1", r"integer value 2 is out of range for i1", 0),
    ("[1.5]", (1,), "i32", r"expected integer elements, but parsed floating-point 1.5", 1),
    ("true", (), "i32", r"'true' or 'false' needs an i1", 0),
    ("[1, nan]", (2,), "i32", r"expected integer elements, got nan", 4),
    ("[0, 1e400]", (2,), "f32", r"floating point value too large: 1e400", 4),
    ("0x1FFFF", (), "f16", r"hexadecimal float constant 0x1FFFF out of range for f16", 0),
    ("0x10", (), "f4E2M1FN", r"out of range for f4E2M1FN \(4 bits\)", 0),
    ("-0x1", (), "f32", r"should not have a leading minus", 0),
    ("[1.0, nan]", (2,), "f6E3M2FN", r"f6E3M2FN has no NaN", 6),
    ("inf", (), "f8E4M3FN", r"f8E4M3FN has no infinity", 0),
    ("[1.0, -2.0]", (2,), "f8E8M0FNU", r"negative literal -2.0 not valid for f8E8M0FNU", 6),
    ("true", (), "f32", r"expected floating point literal for f32, got true", 0),
    ("[(1.0, 2.0)]", (1,), "f32", r"complex element .* not valid for element type f32", 1),
    ("[1.0]", (1,), "complex<f32>", r"expected a complex element \(re, im\)", 1),
    ('"0x010"', (2,), "i8", r"odd number of digits", 0),
    ('"0x0102"', (3,), "i8", r"hex data size is invalid for provided type: tensor<3xi8>", 0),
    ('"1234"', (1,), "i8", r"hex digits starting with `0x`", 0),
    ('"0x0203"', (2,), "i1", r"neither 0 nor 1", 0),
])
def test_errors_name_the_problem_and_its_offset(body, shape, name, message, offset):
    with pytest.raises(DenseSyntaxError, match=message) as info:
        parse_dense(body, T(shape, name))
    assert info.value.offset == offset


def test_deep_nesting_and_huge_rank_are_clear_errors():
    with pytest.raises(DenseSyntaxError, match="nested deeper than 1024 levels") as info:
        parse_dense("[" * 5000 + "1" + "]" * 5000, T((1,), "i32"))
    assert info.value.offset == 1024
    deep = "[" * 64 + "7" + "]" * 64
    assert parse_dense(deep, T((1,) * 64, "i32")).reshape(-1).tolist() == [7]
    with pytest.raises(UnsupportedError, match="rank 65; numpy arrays have at most 64"):
        parse_dense("7", T((1,) * 65, "i32"))


def test_element_budget_is_checked_before_allocating():
    with pytest.raises(UnsupportedError, match=r"tensor<32768x16384xf32> has 536870912 elements, "
                                               r"over the budget of 268435456"):
        parse_dense("0.0", T((2 ** 15, 2 ** 14), "f32"))
    with pytest.raises(UnsupportedError, match="over the budget of 5"):
        parse_dense("[1, 2, 3, 4, 5, 6]", T((6,), "i8"), max_elements=5)
    assert parse_dense("1", T((5,), "i8"), max_elements=5).tolist() == [1] * 5


def test_dynamic_shape_is_rejected():
    with pytest.raises(DenseSyntaxError, match="static shape"):
        parse_dense("1", TensorType((None,), element_type("f32")))


# --------------------------------------------------------------------------
# formatting
# --------------------------------------------------------------------------

def test_format_mlir_style():
    f32 = T((4,), "f32")
    a = np.array([1.0, -0.0, np.pi, np.nan], np.float32)
    assert format_dense(a, f32) == "[1.000000e+00, -0.000000e+00, 3.1415927e+00, 0x7FC00000]"
    assert format_dense(np.array([[1, 2], [3, 4]], np.int32), T((2, 2), "i32")) == "[[1, 2], [3, 4]]"
    assert format_dense(np.full((2, 3), 5, np.uint8), T((2, 3), "ui8")) == "5"
    assert format_dense(np.array([True, False]), T((2,), "i1")) == "[true, false]"
    assert format_dense(np.zeros((2, 0), np.int8), T((2, 0), "i8")) == ""
    c = np.array([1 + 2j, complex(0.0, -0.5)], np.complex64)
    assert format_dense(c, T((2,), "complex<f32>")) == \
        "[(1.000000e+00,2.000000e+00), (0.000000e+00,-5.000000e-01)]"
    inf = np.array([np.inf, -np.inf], np.float16)
    assert format_dense(inf, T((2,), "f16")) == "[0x7C00, 0xFC00]"
    # NaNs with different payloads are no splat
    nans = from_bits(np.array([0x7FC00000, 0x7FC00001]), np.float32)
    assert format_dense(nans, T((2,), "f32")) == "[0x7FC00000, 0x7FC00001]"
    assert str(DenseElementsAttr(T((2,), "i32"), np.array([1, 2], np.int32))) == \
        "dense<[1, 2]> : tensor<2xi32>"


def test_format_rejects_wrong_array():
    with pytest.raises(UnsupportedError, match="shape"):
        format_dense(np.zeros(3, np.float32), T((2,), "f32"))
    with pytest.raises(UnsupportedError, match="dtype"):
        format_dense(np.zeros(2, np.float64), T((2,), "f32"))


# --------------------------------------------------------------------------
# round trips: format_dense -> parse_dense is bit-identical, every element type
# --------------------------------------------------------------------------

def _special_bits(name: str) -> list[int]:
    """Bit patterns worth hitting: ±0, ±min/max, smallest denormal, inf, NaN payloads."""
    et = element_type(name)
    fmt = float_format(et.dtype)
    top = fmt.bits_mask
    sign = fmt.sign_mask
    cand = [0, sign, 1, sign | 1, top, top & ~sign, (top & ~sign) - 1, fmt.nan_bits,
            fmt.nan_bits | 1, sign | fmt.nan_bits, 1 << (fmt.precision - 1)]
    return [b & top for b in cand]


def _float_array(name: str, n: int, data: st.DataObject) -> np.ndarray:
    et = element_type(name)
    fmt = float_format(et.dtype)
    bit = st.one_of(st.integers(0, fmt.bits_mask), st.sampled_from(_special_bits(name)))
    bits = data.draw(st.lists(bit, min_size=n, max_size=n))
    return from_bits(np.array(bits, dtype=np.uint64), et.dtype)


def _array(name: str, shape: tuple[int, ...], data: st.DataObject) -> np.ndarray:
    et = element_type(name)
    n = math.prod(shape)
    if et.is_bool:
        vals = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
        return np.array(vals, dtype=bool).reshape(shape)
    if et.is_int:
        lo, hi = et.min_value(), et.max_value()
        ints = st.one_of(st.integers(lo, hi), st.sampled_from([lo, hi, 0]))
        vals = data.draw(st.lists(ints, min_size=n, max_size=n))
        wide = np.uint64 if et.is_unsigned else np.int64
        return np.array(vals, dtype=wide).astype(et.dtype).reshape(shape)
    if et.is_complex:
        part = et.component.name
        out = np.empty(n, et.dtype)
        out.real = _float_array(part, n, data)
        out.imag = _float_array(part, n, data)
        return out.reshape(shape)
    return _float_array(name, n, data).reshape(shape)


@pytest.mark.parametrize("name", SPELLINGS)
@given(shape=st.lists(st.integers(0, 3), max_size=3).map(tuple), splat=st.booleans(),
       data=st.data())
def test_format_parse_round_trip_is_bit_exact(name, shape, splat, data):
    a = _array(name, shape, data)
    if splat and a.size:
        a = np.full(shape, a.reshape(-1)[0], dtype=a.dtype)
    t = T(shape, name)
    body = format_dense(a, t)
    b = parse_dense(body, t)
    assert b.dtype == a.dtype and b.shape == a.shape
    assert a.tobytes() == b.tobytes(), body
    if splat and a.size:
        assert "[" not in body.replace("(", "")  # a splat prints as one scalar


@pytest.mark.parametrize("name", [n for n in ALL_ELEMENT_TYPE_NAMES
                                  if element_type(n).is_float and element_type(n).bits <= 16])
def test_every_bit_pattern_of_small_floats_round_trips(name):
    et = element_type(name)
    fmt = float_format(et.dtype)
    a = from_bits(np.arange(fmt.bits_mask + 1, dtype=np.uint64), et.dtype)
    t = T(a.shape, name)
    assert bits_of(parse_dense(format_dense(a, t), t)) == bits_of(a)


@given(st.floats(width=64, allow_nan=False, allow_infinity=False))
def test_decimal_text_rounds_like_ieee_for_f32_and_f16(x):
    # numpy's float64 -> f32/f16 casts are correctly rounded: the reference
    with np.errstate(over="ignore"):
        assert bits_of(parse_dense(repr(x), T((), "f32"))) == bits_of(np.float32(x))
        assert bits_of(parse_dense(repr(x), T((), "f16"))) == bits_of(np.float16(x))
    assert bits_of(parse_dense(repr(x), T((), "f64"))) == bits_of(np.float64(x))


def test_bf16_decimal_matches_exhaustive_nearest():
    vals = from_bits(np.arange(0x7F80, dtype=np.uint64), ml_dtypes.bfloat16).astype(np.float64)
    mids = (vals[1:] + vals[:-1]) / 2
    below, above = np.nextafter(mids, 0.0), np.nextafter(mids, np.inf)
    t = T(mids.shape, "bf16")
    text = "[" + ", ".join(repr(float(v)) for v in below) + "]"
    assert bits_of(parse_dense(text, t)) == list(range(0, 0x7F7F))
    text = "[" + ", ".join(repr(float(v)) for v in above) + "]"
    assert bits_of(parse_dense(text, t)) == list(range(1, 0x7F80))


def test_format_matches_stablehlo_translate_print_dense():
    """Each CHECK-DENSE line of printing.mlir is what format_dense prints for its constant."""
    import re

    from tests.conftest import shared_dir

    text = (shared_dir("conformance", "interpret") / "printing.mlir").read_text()
    expected = re.findall(r"// CHECK-DENSE(?:\{LITERAL\})?: dense<(.*)> : (tensor<.*>)", text)
    constants = re.findall(r"stablehlo.constant dense<(.*)> : (tensor<.*>)", text)
    assert len(expected) >= 14
    by_type = {}
    for body, type_text in constants:
        by_type.setdefault(type_text, []).append(body)
    for printed, type_text in expected:
        m = re.fullmatch(r"tensor<((?:\d+x)*)(.+)>", type_text)
        t = T(tuple(int(d) for d in m.group(1).split("x") if d), m.group(2))
        body = by_type[type_text].pop(0)
        assert format_dense(parse_dense(body, t), t) == printed, type_text
