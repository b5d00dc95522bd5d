"""Element types, tensor/tuple/token/function types and their printing."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from hlolab.errors import UnsupportedError
from hlolab.types import (
    ALL_ELEMENT_TYPE_NAMES,
    FunctionType,
    QuantizedElementType,
    TensorType,
    TokenType,
    TupleType,
    element_type,
    element_type_of_dtype,
    is_element_type_name,
    tensor_type,
)

# name: (kind, bits, dtype, min, max)
EXPECTED = {
    "i1": ("bool", 1, np.bool_, 0, 1),
    "i2": ("sint", 2, ml_dtypes.int2, -2, 1),
    "i4": ("sint", 4, ml_dtypes.int4, -8, 7),
    "i8": ("sint", 8, np.int8, -128, 127),
    "i16": ("sint", 16, np.int16, -32768, 32767),
    "i32": ("sint", 32, np.int32, -(2 ** 31), 2 ** 31 - 1),
    "i64": ("sint", 64, np.int64, -(2 ** 63), 2 ** 63 - 1),
    "ui2": ("uint", 2, ml_dtypes.uint2, 0, 3),
    "ui4": ("uint", 4, ml_dtypes.uint4, 0, 15),
    "ui8": ("uint", 8, np.uint8, 0, 255),
    "ui16": ("uint", 16, np.uint16, 0, 65535),
    "ui32": ("uint", 32, np.uint32, 0, 2 ** 32 - 1),
    "ui64": ("uint", 64, np.uint64, 0, 2 ** 64 - 1),
    "f4E2M1FN": ("float", 4, ml_dtypes.float4_e2m1fn, -6.0, 6.0),
    "f6E2M3FN": ("float", 6, ml_dtypes.float6_e2m3fn, -7.5, 7.5),
    "f6E3M2FN": ("float", 6, ml_dtypes.float6_e3m2fn, -28.0, 28.0),
    "f8E3M4": ("float", 8, ml_dtypes.float8_e3m4, -15.5, 15.5),
    "f8E4M3": ("float", 8, ml_dtypes.float8_e4m3, -240.0, 240.0),
    "f8E4M3FN": ("float", 8, ml_dtypes.float8_e4m3fn, -448.0, 448.0),
    "f8E4M3FNUZ": ("float", 8, ml_dtypes.float8_e4m3fnuz, -240.0, 240.0),
    "f8E4M3B11FNUZ": ("float", 8, ml_dtypes.float8_e4m3b11fnuz, -30.0, 30.0),
    "f8E5M2": ("float", 8, ml_dtypes.float8_e5m2, -57344.0, 57344.0),
    "f8E5M2FNUZ": ("float", 8, ml_dtypes.float8_e5m2fnuz, -57344.0, 57344.0),
    # no sign and no zero: its smallest value is 2^-127, its largest 2^127
    "f8E8M0FNU": ("float", 8, ml_dtypes.float8_e8m0fnu, 2.0 ** -127, 2.0 ** 127),
    "bf16": ("float", 16, ml_dtypes.bfloat16, -(2 - 2 ** -7) * 2.0 ** 127, (2 - 2 ** -7) * 2.0 ** 127),
    "f16": ("float", 16, np.float16, -65504.0, 65504.0),
    "f32": ("float", 32, np.float32, -(2 - 2 ** -23) * 2.0 ** 127, (2 - 2 ** -23) * 2.0 ** 127),
    "f64": ("float", 64, np.float64, -np.finfo(np.float64).max, np.finfo(np.float64).max),
    "complex<f32>": ("complex", 64, np.complex64, None, None),
    "complex<f64>": ("complex", 128, np.complex128, None, None),
}


def test_all_element_type_names_are_covered():
    assert set(ALL_ELEMENT_TYPE_NAMES) == set(EXPECTED)
    assert len(ALL_ELEMENT_TYPE_NAMES) == len(set(ALL_ELEMENT_TYPE_NAMES))


@pytest.mark.parametrize("name", list(EXPECTED))
def test_element_type_facts(name):
    kind, bits, dtype, lo, hi = EXPECTED[name]
    et = element_type(name)
    assert (et.name, et.kind, et.bits, et.dtype) == (name, kind, bits, np.dtype(dtype))
    assert str(et) == name
    if lo is not None:
        assert (et.min_value(), et.max_value()) == (lo, hi)
        assert type(et.min_value()) is (float if kind == "float" else int)
    assert et.is_bool == (kind == "bool") and et.is_float == (kind == "float")
    assert et.is_int == (kind in ("sint", "uint")) and et.is_complex == (kind == "complex")
    assert et.is_signed == (kind == "sint") and et.is_unsigned == (kind == "uint")
    assert element_type(name) is et  # cached
    assert is_element_type_name(name)


def test_signed_and_signless_spellings():
    si, i = element_type("si32"), element_type("i32")
    assert si.name == "si32" and str(si) == "si32"
    assert (si.kind, si.bits, si.dtype) == (i.kind, i.bits, i.dtype)
    assert si != i  # the spelling is kept: they print back differently
    assert element_type("si4").dtype == ml_dtypes.int4


def test_complex_component():
    assert element_type("complex<f32>").component is element_type("f32")
    assert element_type("complex<f64>").component is element_type("f64")
    assert element_type("f16").component is element_type("f16")


def test_unsupported_and_unknown_element_types():
    with pytest.raises(UnsupportedError) as info:
        element_type("tf32")
    assert info.value.message == ("element type tf32 is not supported: ml_dtypes has no "
                                  "TensorFloat32 dtype")
    assert is_element_type_name("tf32")
    for bad in ("i3", "f128", "complex<f16>", "ui1", "x"):
        with pytest.raises(UnsupportedError, match=f"unknown element type '{bad}'"):
            element_type(bad)
        assert not is_element_type_name(bad)


@pytest.mark.parametrize("name", [n for n in ALL_ELEMENT_TYPE_NAMES])
def test_element_type_of_dtype_round_trip(name):
    et = element_type(name)
    assert element_type_of_dtype(et.dtype) is et
    assert element_type_of_dtype(np.zeros(1, et.dtype).dtype).name == name


def test_element_type_of_dtype_canonical_names_and_errors():
    assert element_type_of_dtype(np.dtype(np.bool_)).name == "i1"
    assert element_type_of_dtype(np.int8).name == "i8"  # not si8
    assert element_type_of_dtype(np.uint16).name == "ui16"
    with pytest.raises(UnsupportedError, match="no StableHLO element type for numpy dtype object"):
        element_type_of_dtype(np.dtype(object))
    with pytest.raises(UnsupportedError, match="<U1"):
        element_type_of_dtype(np.dtype("<U1"))


def test_tensor_type_printing_and_properties():
    f32 = element_type("f32")
    t = TensorType((2, None, 3), f32)
    assert str(t) == "tensor<2x?x3xf32>"
    assert (t.rank, t.is_static, t.dtype, t.is_quantized) == (3, False, np.float32, False)
    assert str(TensorType((), element_type("i1"))) == "tensor<i1>"
    assert str(TensorType((0, 4), element_type("complex<f64>"))) == "tensor<0x4xcomplex<f64>>"
    bounded = TensorType((None, 2), f32, encoding="#stablehlo.bounds<4, ?>")
    assert str(bounded) == "tensor<?x2xf32, #stablehlo.bounds<4, ?>>"
    s = tensor_type((2, 3), "bf16")
    assert (s.static_shape(), s.num_elements, s.is_static) == ((2, 3), 6, True)
    assert tensor_type([4], element_type("i8")) == TensorType((4,), element_type("i8"))
    assert TensorType((), f32).num_elements == 1


def test_static_shape_refuses_dynamic_dimensions():
    t = TensorType((None, 2), element_type("f32"))
    with pytest.raises(UnsupportedError) as info:
        t.static_shape("operand #0")
    assert info.value.message == ("operand #0 has dynamic shape tensor<?x2xf32>; execution needs "
                                  "a static shape")
    with pytest.raises(UnsupportedError, match="dynamic shape"):
        _ = t.num_elements


def test_quantized_element_type_printing():
    i8, f32 = element_type("i8"), element_type("f32")
    q = QuantizedElementType(i8, f32, (0.5,), (3,))
    assert str(q) == "!quant.uniform<i8:f32, 0.5:3>"
    assert (q.kind, q.dtype, q.is_per_axis, q.name) == ("quant", np.int8, False, str(q))
    assert str(QuantizedElementType(i8, f32, (2.0,), (0,))) == "!quant.uniform<i8:f32, 2.0>"
    per_axis = QuantizedElementType(i8, f32, (0.5, 0.25), (0, 2), axis=1)
    assert str(per_axis) == "!quant.uniform<i8:f32:1, {0.5,0.25:2}>"
    narrow = QuantizedElementType(i8, f32, (1.0,), (0,), storage_min=-127)
    assert str(narrow) == "!quant.uniform<i8<-127:127>:f32, 1.0>"
    texts = QuantizedElementType(element_type("ui8"), element_type("bf16"), (0.1,), (0,),
                                 scale_texts=("1.0e-1",))
    assert str(texts) == "!quant.uniform<ui8:bf16, 1.0e-1>"
    assert texts == QuantizedElementType(element_type("ui8"), element_type("bf16"), (0.1,), (0,))
    t = TensorType((2,), q)
    assert str(t) == "tensor<2x!quant.uniform<i8:f32, 0.5:3>>" and t.is_quantized and t.dtype == np.int8


def test_tuple_token_and_function_type_printing():
    f32 = tensor_type((2,), "f32")
    i1 = tensor_type((), "i1")
    tok = TokenType()
    assert str(tok) == "!stablehlo.token"
    assert str(TokenType("!mhlo.token")) == "!mhlo.token"
    tup = TupleType((f32, tok, TupleType(())))
    assert str(tup) == "tuple<tensor<2xf32>, !stablehlo.token, tuple<>>"
    assert str(FunctionType((f32,), (i1,))) == "(tensor<2xf32>) -> tensor<i1>"
    assert str(FunctionType((f32, i1), (i1, tok))) == \
        "(tensor<2xf32>, tensor<i1>) -> (tensor<i1>, !stablehlo.token)"
    assert str(FunctionType((), ())) == "() -> ()"
    assert str(FunctionType((), (FunctionType((i1,), (i1,)),))) == \
        "() -> ((tensor<i1>) -> tensor<i1>)"
