"""convert, bitcast_convert, complex, real, imag: spec examples, edge values, constraints,
provenance. (Bit-exact comparisons with XLA are in test_conversion_oracle.py.)"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hlolab.errors import UnsupportedError, VerificationError
from hlolab.interp.single import apply_op, build_op, evaluate_op
from hlolab.ops.record import Attrs, InferError, Partial, type_admits
from hlolab.ops.registry import OpCall, lookup
from hlolab.ops.verify import verify_op
from hlolab.trace.provenance import Source, Target
from hlolab.types import QuantizedElementType, TensorType, TupleType, element_type, tensor_type


def t(shape: tuple[int | None, ...], elem: Any) -> TensorType:
    return tensor_type(shape, elem)


def convert(x: Any, dst: str, src: str | None = None) -> np.ndarray:
    x = np.asarray(x, element_type(src).dtype) if src else np.asarray(x)
    return apply_op("stablehlo.convert", [x], {}, [t(x.shape, dst)],
                    [t(x.shape, src)] if src else None)[0]


def bitcast(x: np.ndarray, result: TensorType, operand: TensorType | None = None) -> np.ndarray:
    return apply_op("stablehlo.bitcast_convert", [x], {}, [result],
                    [operand] if operand else None)[0]


def bits(a: np.ndarray) -> list[int]:
    a = np.ascontiguousarray(a)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize]).tolist()


def f64_bits(*hexes: int) -> np.ndarray:
    return np.array(hexes, np.uint64).view(np.float64)


def fails(constraint: str | None, name: str, inputs: list, result_types: list,
          operand_types: list | None = None, attrs: dict | None = None) -> str:
    with pytest.raises(VerificationError) as info:
        apply_op(name, inputs, attrs or {}, result_types, operand_types)
    assert info.value.constraint == constraint, str(info.value)
    return info.value.message


# --- spec examples --------------------------------------------------------------------

def test_spec_example_convert_i64_to_complex():
    out = convert(np.array([-1, 0, 1], np.int64), "complex<f64>")
    assert out.dtype == np.complex128
    assert out.tolist() == [-1 + 0j, 0j, 1 + 0j]
    assert not np.signbit(out.imag).any()  # the destination imaginary part is zeroed (+0.0)


def test_spec_example_bitcast_f64_to_4xf16():
    operand = f64_bits(0x0123456789ABCDEF).reshape(())
    out = bitcast(operand, t((4,), "f16"))
    assert out.dtype == np.float16
    assert bits(out) == [0xCDEF, 0x89AB, 0x4567, 0x0123]


def test_spec_example_complex():
    out = apply_op("stablehlo.complex", [np.array([1.0, 3.0]), np.array([2.0, 4.0])], {},
                   [t((2,), "complex<f64>")])[0]
    assert out.dtype == np.complex128 and out.tolist() == [1 + 2j, 3 + 4j]


def test_spec_example_real_and_imag():
    z = np.array([1 + 2j, 3 + 4j], np.complex64)
    re = apply_op("stablehlo.real", [z], {}, [t((2,), "f32")])[0]
    im = apply_op("stablehlo.imag", [z], {}, [t((2,), "f32")])[0]
    assert re.dtype == im.dtype == np.float32
    assert re.tolist() == [1.0, 3.0] and im.tolist() == [2.0, 4.0]


def test_real_and_imag_of_a_real_operand():
    x = np.array([1.0, -2.0, np.nan], ml_dtypes.bfloat16)
    re = apply_op("stablehlo.real", [x], {}, [t((3,), "bf16")])[0]
    im = apply_op("stablehlo.imag", [x], {}, [t((3,), "bf16")])[0]
    assert re.dtype == im.dtype == x.dtype
    assert bits(re) == bits(x)
    assert bits(im) == [0, 0, 0]  # constant(0): +0.0 everywhere, NaN included


def test_imag_of_a_type_without_zero_is_an_error():
    x = np.array([1.0, 2.0], ml_dtypes.float8_e8m0fnu)
    with pytest.raises(UnsupportedError, match="no zero"):
        apply_op("stablehlo.imag", [x], {}, [t((2,), "f8E8M0FNU")])


def test_complex_parts_keep_their_bits():
    re = np.array([-0.0, np.nan, np.inf], np.float32)
    im = np.array([1e-45, -np.nan, -0.0], np.float32)
    out = apply_op("stablehlo.complex", [re, im], {}, [t((3,), "complex<f32>")])[0]
    assert bits(np.ascontiguousarray(out.real)) == bits(re)
    assert bits(np.ascontiguousarray(out.imag)) == bits(im)


# --- convert: the cases of the spec text ------------------------------------------------

def test_bool_to_any_type_is_zero_or_one():
    p = np.array([True, False])
    assert convert(p, "i64").tolist() == [1, 0]
    assert convert(p, "ui64").tolist() == [1, 0]
    assert convert(p, "i4").tolist() == [1, 0]
    assert convert(p, "f64").tolist() == [1.0, 0.0]
    assert convert(p, "bf16").astype(np.float32).tolist() == [1.0, 0.0]
    assert convert(p, "complex<f64>").tolist() == [1 + 0j, 0j]
    assert convert(p, "i1").tolist() == [True, False]


def test_any_type_to_bool_is_nonzero():
    assert convert(np.array([-1, 0, 1], np.int64), "i1").tolist() == [True, False, True]
    assert convert(np.array([0, 8], np.uint64), "i1").tolist() == [False, True]
    # NaN and denormals are non-zero; -0.0 is zero
    x = np.array([np.nan, -0.0, 0.0, 1e-45, -np.inf], np.float32)
    assert convert(x, "i1").tolist() == [True, False, False, True, True]
    # complex: only the real part counts (the spec ignores the imaginary part)
    z = np.array([-1 + 0j, 0 + 1j, 1 + 0j], np.complex128)
    assert convert(z, "i1").tolist() == [True, False, True]


def test_complex_to_real_types_drops_the_imaginary_part():
    z = np.array([-1.5 + 7j, 0 + 1j, 2.75 - 3j], np.complex128)
    assert convert(z, "i64").tolist() == [-1, 0, 2]
    assert convert(z, "f32").tolist() == [-1.5, 0.0, 2.75]
    assert convert(z, "ui8").tolist() == [0, 0, 2]


def test_complex_to_complex_rounds_each_part():
    z = np.array([complex(1 + 2.0**-30, 1e300), complex(-np.inf, 1 + 2.0**-24)], np.complex128)
    out = convert(z, "complex<f32>")
    assert out.dtype == np.complex64
    assert out.real.tolist() == [1.0, -np.inf]
    assert out.imag.tolist() == [np.inf, 1.0]  # 1 + 2^-24 is a tie: to even


def test_float_to_int_truncates_toward_zero_nan_zero_and_saturates():
    x = np.array([np.nan, -np.nan, np.inf, -np.inf, -0.0, 2.9, -2.9, 127.9, 128.0, -128.9, -129.0],
                 np.float32)
    assert convert(x, "i8").tolist() == [0, 0, 127, -128, 0, 2, -2, 127, 127, -128, -128]
    assert convert(x, "ui8").tolist() == [0, 0, 255, 0, 0, 2, 0, 127, 128, 0, 0]
    assert convert(x, "i4").tolist() == [0, 0, 7, -8, 0, 2, -2, 7, 7, -8, -8]
    assert convert(x, "ui2").tolist() == [0, 0, 3, 0, 0, 2, 0, 3, 3, 0, 0]


def test_float_to_64_bit_ints_at_the_range_edges():
    x = np.array([2.0**63, -2.0**63, 9223372036854774784.0, -9223372036854777856.0, 2.0**64,
                  18446744073709549568.0, -0.9], np.float64)
    assert convert(x, "i64").tolist() == [2**63 - 1, -2**63, 9223372036854774784, -2**63,
                                          2**63 - 1, 2**63 - 1, 0]
    assert convert(x, "ui64").tolist() == [2**63, 0, 9223372036854774784, 0, 2**64 - 1,
                                           18446744073709549568, 0]
    f16 = np.array([65504, -65504, np.inf, -2.5], np.float16)
    assert convert(f16, "i64").tolist() == [65504, -65504, 2**63 - 1, -2]


def test_int_to_int_wraps():
    x = np.array([300, -129, 2**31 - 1, -1, 15, 16], np.int32)
    assert convert(x, "i8").tolist() == [44, 127, -1, -1, 15, 16]
    assert convert(x, "ui8").tolist() == [44, 127, 255, 255, 15, 16]
    assert convert(x, "i4").tolist() == [-4, -1, -1, -1, -1, 0]
    assert convert(x, "ui4").tolist() == [12, 15, 15, 15, 15, 0]
    assert convert(x, "i2").tolist() == [0, -1, -1, -1, -1, 0]
    assert convert(np.array([2**64 - 1, 2**63], np.uint64), "i64").tolist() == [-1, -2**63]
    assert convert(np.array([-8, 7], ml_dtypes.int4), "ui64").tolist() == [2**64 - 8, 7]


def test_int_to_float_rounds_to_nearest_even():
    x = np.array([2**24 + 1, 2**24 + 3, -(2**53 + 1), 2**63 - 1], np.int64)
    assert convert(x, "f32").astype(np.float64).tolist() == [2.0**24, 2.0**24 + 4, -(2.0**24 * 2**29),
                                                             2.0**63]
    assert convert(x, "f64").tolist() == [2.0**24 + 1, 2.0**24 + 3, -(2.0**53), 2.0**63]
    assert convert(np.array([65519, 65520, -70000], np.int32), "f16").tolist() == [65504, np.inf, -np.inf]


def test_int_to_bf16_goes_through_f32_like_xla():
    # 2^25 + 2^17 + 1 is just above a bf16 tie; f32 drops the +1 and the tie goes to even
    x = np.array([2**25 + 2**17 + 1, -(2**25 + 2**17 + 1), 2**25 + 2**17 + 4], np.int64)
    assert convert(x, "bf16").astype(np.float64).tolist() == [2.0**25, -(2.0**25), 2.0**25 + 2**18]


def test_float_to_float_rounding_paths():
    # f32 -> bf16 / f16: one rounding
    assert convert(np.float32(1 + 2**-8 + 2**-20), "bf16").astype(np.float64) == 1 + 2**-7
    # f64 -> bf16 / f16: through f32 (XLA:CPU), the 2^-30 / 2^-40 is lost first
    assert convert(np.float64(1 + 2**-8 + 2**-30), "bf16").astype(np.float64) == 1.0
    assert convert(np.float64(1 + 2**-11 + 2**-40), "f16").astype(np.float64) == 1.0
    # f64 -> f8: one rounding from the exact value
    assert convert(np.float64(1 + 2**-4 + 2**-40), "f8E4M3FN").astype(np.float64) == 1.125
    assert convert(np.float64(1 + 2**-2 + 2**-40), "f4E2M1FN").astype(np.float64) == 1.5


def test_float_overflow_per_type_family():
    x = np.array([464.0, 465.0, 1e6, -1e6, np.inf, np.nan], np.float32)
    e4m3fn = convert(x, "f8E4M3FN")
    assert bits(e4m3fn) == [0x7E, 0x7F, 0x7F, 0xFF, 0x7F, 0x7F]  # 464 ties to 448; past it: NaN
    assert bits(convert(x, "f8E5M2")) == [0x5F, 0x5F, 0x7C, 0xFC, 0x7C, 0x7E]  # +-inf
    assert bits(convert(x, "f8E4M3FNUZ")) == [0x80] * 6  # the only NaN
    assert bits(convert(x, "f4E2M1FN")) == [0x7, 0x7, 0x7, 0xF, 0x7, 0x8]  # +-6; NaN -> -0.0
    f6 = convert(np.array([100.0, -100.0, np.nan, 7.25], np.float32), "f6E2M3FN")
    assert bits(f6) == [0x1F, 0x3F, 0x20, 0x1E]  # +-7.5 saturated, NaN -> -0.0, 7.25 -> 7.0 (even)


def test_fnuz_has_no_negative_zero_and_e8m0_no_zero():
    assert bits(convert(np.array([-0.0, 0.0], np.float32), "f8E5M2FNUZ")) == [0, 0]
    e8m0 = convert(np.array([0.0, -1.0, 1.0, 2.0**-128, 0.75], np.float32), "f8E8M0FNU")
    assert bits(e8m0) == [0xFF, 0xFF, 127, 0, 127]  # 0 and negatives: NaN; 2^-128: smallest


def test_denormals_are_kept():
    x = np.array([1e-45, -1e-40], np.float32)
    assert convert(x, "f64").tolist() == [float(np.float32(1e-45)), float(np.float32(-1e-40))]
    assert convert(np.array([1e-45], np.float64), "f32").tolist() == [float(np.float32(1e-45))]
    assert bits(convert(np.array([2.0**-133], np.float32), "bf16")) == [1]  # smallest bf16 denormal


def test_sub_byte_types_to_float_and_back():
    x = np.arange(-8, 8).astype(ml_dtypes.int4)
    assert convert(x, "f32").tolist() == list(range(-8, 8))
    f4 = np.array([0x0, 0x1, 0x7, 0x9, 0xF], np.uint8).view(ml_dtypes.float4_e2m1fn)
    assert convert(f4, "f32").tolist() == [0.0, 0.5, 6.0, -0.5, -6.0]
    assert convert(f4, "i8").tolist() == [0, 0, 6, 0, -6]  # 6 is exact: no saturation


@given(st.lists(st.integers(-2**31, 2**31 - 1), min_size=1, max_size=20))
def test_int32_to_int8_is_the_low_byte(values):
    x = np.array(values, np.int32)
    want = [((v + 128) % 256) - 128 for v in values]
    assert convert(x, "i8").tolist() == want


# --- bitcast_convert -------------------------------------------------------------------

def test_bitcast_64_booleans_to_i64_lowest_bit_first():
    value = 0x0123456789ABCDEF
    flags = np.array([(value >> k) & 1 == 1 for k in range(64)])
    out = bitcast(flags, t((), "i64"))
    assert out.shape == () and int(out) == value
    back = bitcast(f64_bits(value).reshape(()), t((64,), "i1"))
    assert back.tolist() == flags.tolist()


def test_bitcast_complex128_to_two_complex64():
    z = np.array([0j], np.complex128)
    z.real = f64_bits(0x0123456789ABCDEF)
    z.imag = f64_bits(0x0000000011111111)
    out = bitcast(z.reshape(()), t((2,), "complex<f32>"))
    assert bits(np.ascontiguousarray(out.real)) == [0x89ABCDEF, 0x11111111]
    assert bits(np.ascontiguousarray(out.imag)) == [0x01234567, 0x00000000]


def test_bitcast_sub_byte_pieces_are_little_endian():
    x = np.array([0x1F, 0x8E], np.uint8)
    assert bitcast(x, t((2, 2), "i4")).tolist() == [[-1, 1], [-2, -8]]
    assert bitcast(np.array([0xE4], np.uint8), t((1, 4), "i2")).tolist() == [[0, 1, -2, -1]]
    f4 = bitcast(np.array([0x1F], np.uint8), t((1, 2), "f4E2M1FN"))
    assert f4.astype(np.float32).tolist() == [[-6.0, 0.5]]
    joined = bitcast(np.array([[1, -2], [7, -8]], ml_dtypes.int4), t((2,), "ui8"))
    assert joined.tolist() == [0xE1, 0x87]
    f6 = bitcast(np.array([1, 2, 3], ml_dtypes.int2), t((), "f6E2M3FN"))  # 0b11_10_01
    assert bits(f6) == [0b111001]


def test_bitcast_equal_widths_keeps_the_shape_and_bits():
    x = np.array([[-1.0, np.nan], [-0.0, 1e-45]], np.float32)
    out = bitcast(x, t((2, 2), "ui32"))
    assert out.tolist() == [[0xBF800000, 0x7FC00000], [0x80000000, 1]]
    back = bitcast(out, t((2, 2), "f32"))
    assert bits(back) == bits(x)
    assert bitcast(np.array([-1], np.int16), t((1,), "bf16")).view(np.uint16).tolist() == [0xFFFF]


@given(st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=8))
def test_bitcast_split_then_join_is_identity(values):
    x = np.array(values, np.uint32)
    pieces = bitcast(x, t((len(values), 8), "ui4"))
    assert pieces.tolist() == [[(v >> (4 * k)) & 15 for k in range(8)] for v in values]
    assert bitcast(pieces, t((len(values),), "ui32")).tolist() == values
    as_bits = bitcast(x.view(np.float32), t((len(values), 32), "i1"))
    assert bitcast(as_bits, t((len(values),), "f32")).view(np.uint32).tolist() == values


# --- constraints -------------------------------------------------------------------------

def test_convert_c1_shape():
    msg = fails("C1", "stablehlo.convert", [np.zeros(3, np.int32)], [t((4,), "f32")])
    assert "[3]" in msg and "[4]" in msg


def test_convert_accepts_dynamic_dims():
    x = np.array([1, 2], np.int32)
    out = apply_op("stablehlo.convert", [x], {}, [t((None,), "f32")], [t((None,), "i32")])[0]
    assert out.tolist() == [1.0, 2.0]


def test_bitcast_c1_shapes():
    x = np.zeros((2,), np.float32)
    assert "[2]" in fails("C1", "stablehlo.bitcast_convert", [x], [t((3,), "i32")])
    msg = fails("C1", "stablehlo.bitcast_convert", [x], [t((2, 2), "i8")])
    assert "[2, 4]" in msg and "[2, 2]" in msg
    fails("C1", "stablehlo.bitcast_convert", [x], [t((2,), "i8")])
    fails("C1", "stablehlo.bitcast_convert", [np.zeros((2, 3), np.int8)], [t((2,), "i32")])
    fails("C1", "stablehlo.bitcast_convert", [np.zeros((), np.int8)], [t((), "i32")])
    # 6-bit elements do not divide 8: no shape works
    fails("C1", "stablehlo.bitcast_convert", [np.zeros((2,), np.uint8)], [t((2, 1), "f6E2M3FN")])


def test_bitcast_c2_complex_only_with_complex():
    msg = fails("C2", "stablehlo.bitcast_convert", [np.zeros((2,), np.complex64)], [t((2,), "f64")])
    assert "complex<f32>" in msg and "f64" in msg


def test_complex_constraints():
    f32, f64 = np.zeros(2, np.float32), np.zeros(2, np.float64)
    fails("I1", "stablehlo.complex", [np.zeros(2, np.float16)] * 2, [t((2,), "complex<f32>")])
    fails("C1", "stablehlo.complex", [f32, f64], [t((2,), "complex<f32>")])
    fails("C1", "stablehlo.complex", [f32, np.zeros(3, np.float32)], [t((2,), "complex<f32>")])
    fails("C2", "stablehlo.complex", [f32, f32], [t((3,), "complex<f32>")])
    msg = fails("C3", "stablehlo.complex", [f32, f32], [t((2,), "complex<f64>")])
    assert "complex<f32>" in msg


def test_real_imag_constraints():
    z = np.zeros(2, np.complex64)
    for name in ("stablehlo.real", "stablehlo.imag"):
        fails("I1", name, [np.zeros(2, np.int32)], [t((2,), "i32")])
        fails("C1", name, [z], [t((3,), "f32")])
        assert "f32" in fails("C2", name, [z], [t((2,), "f64")])
        fails("C2", name, [np.zeros(2, np.float32)], [t((2,), "f64")])


def test_quantized_convert_is_refused_and_bitcast_reads_the_storage():
    q = QuantizedElementType(element_type("i8"), element_type("f32"), (0.5,), (0,))
    x = np.array([3, -7], np.int8)
    with pytest.raises(VerificationError, match=r"convert \(I1\).*uniform_quantize"):
        apply_op("stablehlo.convert", [x], {}, [t((2,), "f32")], [TensorType((2,), q)])
    (r,) = apply_op("stablehlo.bitcast_convert", [x], {}, [t((2,), "i8")], [TensorType((2,), q)])
    assert r.dtype == np.int8 and r.tolist() == [3, -7]
    (r,) = apply_op("stablehlo.bitcast_convert", [x.view(np.uint8)], {}, [TensorType((2,), q)],
                    [t((2,), "ui8")])
    assert r.dtype == np.int8 and r.tolist() == [3, -7]


def test_aliases_find_the_ops():
    for alias, name in (("ConvertElementType", "stablehlo.convert"),
                        ("BitcastConvertType", "stablehlo.bitcast_convert"),
                        ("Complex", "stablehlo.complex"), ("Real", "stablehlo.real"),
                        ("Imag", "stablehlo.imag")):
        assert lookup(alias).name == name


# --- provenance --------------------------------------------------------------------------

def provenance(name: str, inputs: list, result_types: list):
    op = build_op(name, inputs, {}, result_types)
    call = OpCall(op)
    outputs = evaluate_op(op, inputs, call)
    return lookup(name).provenance(call, inputs, outputs)


def test_convert_provenance_is_a_copy_at_the_same_index():
    p = provenance("stablehlo.convert", [np.zeros((2, 3), np.int32)], [t((2, 3), "f32")])
    assert p.sources(0, (1, 2)) == [Source(0, (1, 2), "copy")]
    assert p.targets(0, (0, 1)) == [Target(0, (0, 1), "copy")]


def test_complex_provenance_combines_both_parts():
    x = np.zeros(3, np.float32)
    p = provenance("stablehlo.complex", [x, x], [t((3,), "complex<f32>")])
    assert p.sources(0, (2,)) == [Source(0, (2,), "combine"), Source(1, (2,), "combine")]


def test_bitcast_split_provenance():
    p = provenance("stablehlo.bitcast_convert", [np.zeros((2,), np.uint32)], [t((2, 4), "ui8")])
    assert p.sources(0, (1, 3)) == [Source(0, (1,), "copy")]
    assert p.targets(0, (0,)) == [Target(0, (0, k), "copy") for k in range(4)]
    m = np.zeros((2, 4), bool)
    m[1, 2] = True
    back = p.back(0, m)
    assert list(back) == [(0, "copy")] and back[(0, "copy")].tolist() == [False, True]
    fwd = p.fwd(0, np.array([True, False]))
    assert fwd[(0, "copy")].tolist() == [[True] * 4, [False] * 4]


def test_bitcast_join_provenance():
    p = provenance("stablehlo.bitcast_convert", [np.zeros((3, 2), np.uint16)], [t((3,), "f32")])
    assert p.sources(0, (2,)) == [Source(0, (2, 0), "copy"), Source(0, (2, 1), "copy")]
    assert p.targets(0, (1, 1)) == [Target(0, (1,), "copy")]
    back = p.back(0, np.array([True, False, True]))
    assert back[(0, "copy")].tolist() == [[True, True], [False, False], [True, True]]
    m = np.zeros((3, 2), bool)
    m[1, 0] = True
    assert p.fwd(0, m)[(0, "copy")].tolist() == [False, True, False]


def test_bitcast_equal_width_provenance():
    p = provenance("stablehlo.bitcast_convert", [np.zeros((2,), np.int32)], [t((2,), "f32")])
    assert p.sources(0, (1,)) == [Source(0, (1,), "copy")]


def test_real_imag_provenance():
    z = np.zeros((2,), np.complex64)
    for name in ("stablehlo.real", "stablehlo.imag"):
        p = provenance(name, [z], [t((2,), "f32")])
        assert p.sources(0, (0,)) == [Source(0, (0,), "copy")]


RANK0_TYPES = ["i1", "i4", "i8", "ui64", "f16", "bf16", "f32", "f64", "f8E4M3FN", "f4E2M1FN",
               "f8E8M0FNU", "complex<f32>", "complex<f64>"]


@pytest.mark.parametrize("src", RANK0_TYPES)
def test_rank0_values_stay_rank0_arrays(src):
    x = np.ones((), element_type(src).dtype)
    for dst in RANK0_TYPES:
        out = apply_op("stablehlo.convert", [x], {}, [t((), dst)])[0]
        assert isinstance(out, np.ndarray) and out.shape == () and out.dtype == element_type(dst).dtype
    et = element_type(src)
    if et.is_float or et.is_complex:
        for name in ("stablehlo.real", "stablehlo.imag"):
            if name == "stablehlo.imag" and src == "f8E8M0FNU":
                continue
            out = apply_op(name, [x], {}, [t((), et.component.name)])[0]
            assert isinstance(out, np.ndarray) and out.shape == ()
            # ones((), complex) is (1, 0): real 1 and imag 0; a float operand: itself and 0
            assert float(out.astype(np.float64)) == (1.0 if name == "stablehlo.real" else 0.0)


def test_rank0_bitcasts_and_their_provenance():
    out = bitcast(np.array([0, 0, 0x80, 0x3F], np.uint8), t((), "f32"))
    assert out.shape == () and float(out) == 1.0
    p = provenance("stablehlo.bitcast_convert", [np.zeros(4, np.uint8)], [t((), "f32")])
    assert p.sources(0, ()) == [Source(0, (k,), "copy") for k in range(4)]
    pieces = bitcast(np.array(1.0, np.float32), t((4,), "ui8"))
    assert pieces.tolist() == [0, 0, 0x80, 0x3F]
    p = provenance("stablehlo.bitcast_convert", [np.zeros((), np.float32)], [t((4,), "ui8")])
    assert p.sources(0, (2,)) == [Source(0, (), "copy")]


# --- records and result type inference ---------------------------------------------------

def infer(name: str, *operand_types: Any) -> list:
    opdef = lookup(f"stablehlo.{name}")
    return opdef.infer(opdef.attrs(), list(operand_types))


def infer_fails(label: str | None, name: str, *operand_types: Any) -> str:
    with pytest.raises(InferError) as info:
        infer(name, *operand_types)
    assert info.value.constraint == label, info.value.message
    return info.value.message


@pytest.mark.parametrize("name", ["convert", "bitcast_convert", "complex", "real", "imag"])
def test_conversions_have_no_attributes(name):
    opdef = lookup(f"stablehlo.{name}")
    assert opdef.family == "conversion" and opdef.attrs is Attrs


def test_infer_convert_fixes_the_shape_not_the_element():
    (got,) = infer("convert", t((2, None), "i32"))
    assert got == Partial((2, None), None)
    assert type_admits(got, t((2, 5), "f32")) and type_admits(got, t((2, None), "complex<f64>"))
    assert not type_admits(got, t((3, 5), "f32")) and not type_admits(got, t((2,), "i32"))
    infer_fails("I1", "convert", TupleType((t((2,), "i32"),)))
    infer_fails(None, "convert")


def test_infer_bitcast_admits_what_c1_and_c2_allow():
    (split,) = infer("bitcast_convert", t((), "f64"))  # the spec's example
    assert type_admits(split, t((4,), "f16")) and type_admits(split, t((8,), "ui8"))
    assert type_admits(split, t((), "i64")) and type_admits(split, t((None,), "f16"))
    assert not type_admits(split, t((3,), "f16")) and not type_admits(split, t((), "f16"))
    assert not type_admits(split, t((), "complex<f32>"))  # (C2)
    (join,) = infer("bitcast_convert", t((2, 4), "ui8"))
    assert type_admits(join, t((2,), "f32")) and not type_admits(join, t((2, 4), "f32"))
    assert not type_admits(join, t((2,), "f64"))  # 4 bytes do not make an f64
    (cplx,) = infer("bitcast_convert", t((3,), "complex<f64>"))
    assert type_admits(cplx, t((3, 2), "complex<f32>")) and not type_admits(cplx, t((3, 2), "f64"))


def test_bitcast_shape_of_the_schema():
    from hlolab.ops.conversion import bitcast_shape

    assert bitcast_shape((3,), 32, 8) == (3, 4)
    assert bitcast_shape((2, 4), 8, 32) == (2,)
    assert bitcast_shape((2, 3), 32, 32) == (2, 3)
    assert bitcast_shape((2, 3), 8, 32) is None  # the last dim must hold 4 bytes
    assert bitcast_shape((), 8, 32) is None
    assert bitcast_shape((2,), 8, 6) is None  # 6-bit pieces do not divide a byte


def test_infer_complex():
    assert infer("complex", t((2,), "f32"), t((2,), "f32")) == [t((2,), "complex<f32>")]
    assert infer("complex", t((None, 3), "f64"), t((2, None), "f64")) == [t((2, 3), "complex<f64>")]
    assert "f32 or f64" in infer_fails("I1", "complex", t((2,), "f16"), t((2,), "f16"))
    infer_fails("I1", "complex", t((2,), "i32"), t((2,), "i32"))
    infer_fails("C1", "complex", t((2,), "f32"), t((2,), "f64"))
    infer_fails("C1", "complex", t((2,), "f32"), t((3,), "f32"))
    infer_fails(None, "complex", t((2,), "f32"))


@pytest.mark.parametrize("name", ["real", "imag"])
def test_infer_real_and_imag(name):
    assert infer(name, t((2, None), "complex<f64>")) == [t((2, None), "f64")]
    assert infer(name, t((3,), "bf16")) == [t((3,), "bf16")]
    assert "floating-point or complex" in infer_fails("I1", name, t((2,), "i32"))
    q = QuantizedElementType(element_type("i8"), element_type("f32"), (0.5,), (0,))
    infer_fails("I1", name, TensorType((2,), q))


def test_verification_runs_infer_on_the_whole_op():
    # each pair that complex's (C1) and (C2) relate fits, but rhs fixes the size at 2
    op = build_op("stablehlo.complex", [], {}, [t((3,), "complex<f32>")],
                  [t((None,), "f32"), t((2,), "f32")])
    with pytest.raises(VerificationError, match=r"declared tensor<3xcomplex<f32>>, its operands and "
                       r"attributes give tensor<2xcomplex<f32>>"):
        verify_op(op)
    verify_op(build_op("stablehlo.complex", [], {}, [t((None,), "complex<f32>")],
                       [t((None,), "f32"), t((2,), "f32")]))
    verify_op(build_op("stablehlo.convert", [], {}, [t((None, 2), "f16")], [t((3, 2), "i8")]))
