"""The check ops, interpreter.probe / interpreter.print, and check custom calls."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest

from hlolab.errors import CheckFailure, NotImplementedOpError, VerificationError
from hlolab.interp.single import apply_op, build_op, evaluate_op, value_type
from hlolab.ir.attrs import DenseElementsAttr, FloatAttr, IntegerAttr, StringAttr
from hlolab.ir.dense import parse_dense
from hlolab.ops.check import format_printed
from hlolab.ops.registry import OpCall
from hlolab.types import QuantizedElementType, TensorType, element_type, tensor_type

f32 = np.float32
NEXT = np.nextafter(f32(1), f32(2))  # 1 ULP above 1.0


def check(name: str, *inputs: Any, **attrs: Any) -> None:
    """Run a check op; passing means returning no results."""
    assert apply_op(name, [np.asarray(x) for x in inputs], attrs, []) == []


def fails(name: str, *inputs: Any, **attrs: Any) -> str:
    with pytest.raises(CheckFailure) as info:
        check(name, *inputs, **attrs)
    assert info.value.check == name
    return info.value.detail


def const(body: str, shape: tuple[int, ...], el: str) -> DenseElementsAttr:
    t = tensor_type(shape, el)
    return DenseElementsAttr(t, parse_dense(body, t))


def ulps(x: float, n: int, dtype: Any = f32) -> Any:
    """``x`` moved ``n`` representable values up."""
    v = np.asarray(x, dtype)
    for _ in range(n):
        v = np.nextafter(v, np.asarray(np.inf, dtype))
    return v


# --------------------------------------------------------------------------
# check.expect_eq / expect_eq_const
# --------------------------------------------------------------------------

@pytest.mark.parametrize("values,dtype", [
    ([1, -2, 3], np.int32), ([0, 255], np.uint8), ([-8, 7], ml_dtypes.int4), ([3], ml_dtypes.uint2),
    ([True, False], np.bool_), ([1.5, -0.0], ml_dtypes.bfloat16), ([0.5, 448], ml_dtypes.float8_e4m3fn),
    ([6.0, -0.5], ml_dtypes.float4_e2m1fn), ([1 + 2j, -3j], np.complex64), ([1e300], np.float64),
])
def test_expect_eq_passes_on_equal_values_of_every_kind(values, dtype):
    a = np.array(values, dtype=dtype)
    check("check.expect_eq", a, a.copy())


def test_expect_eq_failure_message():
    msg = fails("check.expect_eq", np.array([1, 2, 3, 4], f32), np.array([1, 2.5, 3, 5], f32))
    assert msg == ("2 of 4 elements differ (shape 4); at [1]: expected 2.5, got 2.0; "
                   "at [3]: expected 5.0, got 4.0")


def test_expect_eq_lists_only_the_first_mismatches():
    a = np.arange(12, dtype=np.int64).reshape(3, 4)
    msg = fails("check.expect_eq", a, a + 1)
    assert msg.startswith("12 of 12 elements differ (shape 3x4); at [0, 0]: expected 1, got 0; "
                          "at [0, 1]: expected 2, got 1; at [0, 2]: expected 3, got 2")
    assert msg.endswith("; ...")


def test_expect_eq_is_ieee_equality():
    check("check.expect_eq", np.array([0.0, np.inf], f32), np.array([-0.0, np.inf], f32))
    msg = fails("check.expect_eq", f32(np.nan), f32(np.nan))
    assert msg == "expected nan (0x7FC00000), got nan (0x7FC00000)"  # NaN never matches
    fails("check.expect_eq", np.array([np.inf], f32), np.array([-np.inf], f32))
    msg = fails("check.expect_eq", np.array([1 + 1j], np.complex64), np.array([1 + 2j], np.complex64))
    assert "expected (1.0, 2.0), got (1.0, 1.0)" in msg
    assert "expected true, got false" in fails("check.expect_eq", np.array([False]), np.array([True]))


def test_expect_eq_shape_and_type_mismatch():
    msg = fails("check.expect_eq", np.zeros((2, 2), f32), np.zeros(4, f32))
    assert msg == "shapes differ: got tensor<2x2xf32>, expected tensor<4xf32>"
    msg = fails("check.expect_eq", np.zeros(2, np.int32), np.zeros(2, np.int64))
    assert msg == "element types differ: got i32, expected i64"


def test_expect_eq_const():
    a = np.array([[1, 2], [3, 4]], np.int8)
    check("check.expect_eq_const", a, value=const("[[1, 2], [3, 4]]", (2, 2), "i8"))
    msg = fails("check.expect_eq_const", a, value=const("[[1, 2], [3, 5]]", (2, 2), "i8"))
    assert msg == "1 of 4 elements differ (shape 2x2); at [1, 1]: expected 5, got 4"
    bf = np.full(3, 0.1, ml_dtypes.bfloat16)
    check("check.expect_eq_const", bf, value=const("0.1", (3,), "bf16"))
    with pytest.raises(VerificationError, match="attribute 'value'"):
        check("check.expect_eq_const", a, value=IntegerAttr(1))


# --------------------------------------------------------------------------
# check.expect_almost_eq / expect_almost_eq_const
# --------------------------------------------------------------------------

def test_expect_almost_eq_default_tolerance():
    a = np.array([1.0, 2.0, 0.0], np.float64)
    check("check.expect_almost_eq", a, a + 5e-5)
    msg = fails("check.expect_almost_eq", a, a + np.array([0, 2e-4, 0]))
    assert msg.startswith("1 of 3 elements differ (shape 3); at [1]: expected 2.0002, got 2.0")
    assert "(tolerance 0.0001, |difference| 0.000199999" in msg  # 2.0002 - 2.0 in f64


def test_expect_almost_eq_tolerance_attribute():
    a, b = np.array([1.0], f32), np.array([1.09], f32)
    check("check.expect_almost_eq", a, b, tolerance=FloatAttr(0.1))
    fails("check.expect_almost_eq", a, b, tolerance=FloatAttr(0.01))


def test_expect_almost_eq_special_values():
    inf, nan = np.inf, np.nan
    check("check.expect_almost_eq", np.array([inf, -inf, nan, 0.0], f32),
          np.array([inf, -inf, nan, -0.0], f32))
    for a, b in [(inf, -inf), (inf, 3.4028235e38), (nan, 1.0), (1.0, nan), (inf, nan)]:
        fails("check.expect_almost_eq", np.array([a], f32), np.array([b], f32))
    big = np.finfo(np.float64).max
    fails("check.expect_almost_eq", np.array([big]), np.array([-big]))  # |a-b| overflows


def test_expect_almost_eq_complex_parts_separately():
    c = np.complex64
    check("check.expect_almost_eq", np.array([1 + 1j], c), np.array([1 + 1.00005j], c))
    fails("check.expect_almost_eq", np.array([1 + 1j], c), np.array([1.001 + 1j], c))
    fails("check.expect_almost_eq", np.array([1 + 1j], c), np.array([1 + 1.001j], c))


def test_expect_almost_eq_const_small_floats():
    a = parse_dense("[0.1, 3.1415, 0x7F]", tensor_type((3,), "f8E4M3FN"))
    check("check.expect_almost_eq_const", a, value=const("[0.1015630, 3.25, 0xFF]", (3,), "f8E4M3FN"))
    fails("check.expect_almost_eq_const", a, value=const("[0.125, 3.25, 0xFF]", (3,), "f8E4M3FN"))
    b = np.array([1.0, 2.0], ml_dtypes.bfloat16)
    check("check.expect_almost_eq_const", b, value=const("[1.0, 2.0]", (2,), "bf16"),
          tolerance=FloatAttr(0.0))


def test_expect_almost_eq_rejects_integers():
    with pytest.raises(VerificationError, match="floating-point or complex elements, got i32"):
        check("check.expect_almost_eq", np.array([1], np.int32), np.array([1], np.int32))


# --------------------------------------------------------------------------
# check.expect_close
# --------------------------------------------------------------------------

def test_expect_close_ulp_limits():
    one = np.array([1.0], f32)
    three = IntegerAttr(3)
    check("check.expect_close", one, ulps(1.0, 3).reshape(1), max_ulp_difference=three)
    msg = fails("check.expect_close", one, ulps(1.0, 4).reshape(1), max_ulp_difference=three)
    assert msg.endswith("(allowed 0..3, ULP distance 4)")
    check("check.expect_close", one, np.array([NEXT]))  # default max 1
    fails("check.expect_close", one, ulps(1.0, 2).reshape(1))
    msg = fails("check.expect_close", one, one, max_ulp_difference=three,
                min_ulp_difference=IntegerAttr(1))
    assert "ULP distance 0" in msg
    # across zero: distances to zero add up
    tiny = np.array([1e-45], f32)
    check("check.expect_close", -tiny, tiny, max_ulp_difference=IntegerAttr(2))
    check("check.expect_close", np.array([0.0], f32), np.array([-0.0], f32))


def test_expect_close_non_finite_needs_bitwise_equality_or_two_nans():
    nan1 = np.array([0x7FC00000], np.uint32).view(f32)
    nan2 = np.array([0x7FC00001], np.uint32).view(f32)
    check("check.expect_close", nan1, nan2)  # any two NaNs
    check("check.expect_close", np.array([np.inf], f32), np.array([np.inf], f32))
    fails("check.expect_close", np.array([np.nan], f32), np.array([1.0], f32))
    big = np.array([np.finfo(f32).max], f32)  # 1 ULP below inf, still not close
    fails("check.expect_close", np.array([np.inf], f32), big, max_ulp_difference=IntegerAttr(5))


def test_expect_close_small_floats_and_complex():
    bf = ml_dtypes.bfloat16
    check("check.expect_close", np.array([1.0], bf), np.array([1.0078125], bf))  # 1 bf16 ULP
    fails("check.expect_close", np.array([1.0], bf), np.array([1.015625], bf))
    e4 = ml_dtypes.float8_e4m3fn
    check("check.expect_close", np.array([448], e4), np.array([416], e4))
    c = np.complex64
    a = np.array([1 + 1j], c)
    b = np.array([complex(1.0, float(ulps(1.0, 2)))], c)
    check("check.expect_close", a, b, max_ulp_difference=IntegerAttr(2))
    msg = fails("check.expect_close", a, b, max_ulp_difference=IntegerAttr(1))
    assert "ULP distance 2" in msg  # the worse of the two parts


# --------------------------------------------------------------------------
# interpreter.probe and check.expect_serialized_eq
# --------------------------------------------------------------------------

def run(name: str, inputs: list[Any], attrs: dict[str, Any], results: list[Any],
        state: dict[str, Any]) -> list[Any]:
    """Run an op with the per-run state of an interpreter shared across calls."""
    op = build_op(name, inputs, attrs, results)
    return evaluate_op(op, inputs, OpCall(op, state))


def test_probe_records_each_run_and_passes_the_value_through():
    state: dict[str, Any] = {}
    x = np.array([1, 2], np.int64)
    t = value_type(x)
    (out,) = run("interpreter.probe", [x], {"probe_id": StringAttr("p")}, [t], state)
    assert out is x
    x2 = x + 1
    run("interpreter.probe", [x2], {"probe_id": StringAttr("p")}, [t], state)
    x[0] = 99  # the record is a copy
    assert [v.tolist() for v in state["probes"]["p"]] == [[1, 2], [2, 3]]
    serialized = "check.expect_serialized_eq"
    run(serialized, [np.array([1, 2])], {"probe_id": StringAttr("p")}, [], state)
    run(serialized, [x2], {"probe_id": StringAttr("p"), "iteration": IntegerAttr(1)}, [], state)
    with pytest.raises(CheckFailure, match=r"at \[0\]: expected 2, got 1"):
        run(serialized, [x2], {"probe_id": StringAttr("p")}, [], state)
    with pytest.raises(CheckFailure, match=r'probe "p" at iteration 2 \(the probe ran 2 times\)'):
        run(serialized, [x2], {"probe_id": StringAttr("p"), "iteration": IntegerAttr(2)}, [], state)
    with pytest.raises(CheckFailure, match="no value recorded by probe \"q\""):
        run(serialized, [x2], {"probe_id": StringAttr("q")}, [], state)
    with pytest.raises(CheckFailure, match="element types differ: got i64, expected i32"):
        run(serialized, [x2.astype(np.int32)], {"probe_id": StringAttr("p"), "iteration": IntegerAttr(1)},
            [], state)


# --------------------------------------------------------------------------
# interpreter.print
# --------------------------------------------------------------------------

@pytest.mark.parametrize("body,shape,el,printed", [
    ("[1, 2, -3, -4]", (4,), "i8", "tensor<4xi8> {\n  [1, 2, -3, -4]\n}"),
    ("[1.0, 2.0, -3.0, -4.0]", (4,), "f16",
     "tensor<4xf16> {\n  [1.000000e+00, 2.000000e+00, -3.000000e+00, -4.000000e+00]\n}"),
    ("[true, false]", (2,), "i1", "tensor<2xi1> {\n  [true, false]\n}"),
    ("1", (), "ui8", "tensor<ui8> {1}"),
    ("[1]", (1,), "i8", "tensor<1xi8> {\n  [1]\n}"),
    ("[[1, 2], [3, 4]]", (2, 2), "i8", "tensor<2x2xi8> {\n  [\n    [1, 2],\n    [3, 4]\n  ]\n}"),
    ("[[[0, 1], [2, 3]], [[4, 0], [1, 2]]]", (2, 2, 2), "i64",
     "tensor<2x2x2xi64> {\n  [\n    [\n      [0, 1],\n      [2, 3]\n    ],\n    [\n      [4, 0],\n"
     "      [1, 2]\n    ]\n  ]\n}"),
    ("", (0,), "ui8", "tensor<0xui8> {\n  []\n}"),
    ("", (0, 2), "i8", "tensor<0x2xi8> {\n  []\n}"),
    ("", (2, 0), "i8", "tensor<2x0xi8> {\n  [\n    [],\n    []\n  ]\n}"),
    ("[1, -2]", (2,), "i2", "tensor<2xi2> {\n  [1, -2]\n}"),
    ("(3.14, 1.0)", (2,), "complex<f32>",
     "tensor<2xcomplex<f32>> {\n  [[3.140000e+00, 1.000000e+00], [3.140000e+00, 1.000000e+00]]\n}"),
])
def test_format_printed_like_the_stablehlo_interpreter(body, shape, el, printed):
    t = tensor_type(shape, el)
    assert format_printed(parse_dense(body, t), t) == printed


def test_print_appends_to_the_run_output():
    state: dict[str, Any] = {}
    x = np.array([3, 3], np.int32)
    assert run("interpreter.print", [x], {}, [], state) == []
    (same,) = run("interpreter.print", [x], {}, [value_type(x)], state)
    assert same is x
    assert state["output"] == ["%arg0 = tensor<2xi32> {\n  [3, 3]\n}"] * 2


# --------------------------------------------------------------------------
# stablehlo.custom_call @check.*
# --------------------------------------------------------------------------

def custom(target: str, *inputs: Any, results: list[Any] | None = None) -> list[Any]:
    return apply_op("stablehlo.custom_call", [np.asarray(x) for x in inputs],
                    {"call_target_name": StringAttr(target)}, results or [])


def custom_fails(target: str, *inputs: Any, results: list[Any] | None = None) -> str:
    with pytest.raises(CheckFailure) as info:
        custom(target, *inputs, results=results)
    assert info.value.check == target
    return info.value.detail


def test_custom_call_expect_close_is_3_ulp():
    one = np.array([1.0, 2.0], f32)
    assert custom("check.expect_close", one, np.array([ulps(1.0, 3), 2.0], f32)) == []
    msg = custom_fails("check.expect_close", one, np.array([ulps(1.0, 4), 2.0], f32))
    assert msg == "1 of 2 elements differ (shape 2); at [0]: expected 1.0000005, got 1.0 " \
                  "(allowed 3, ULP distance 4)"
    nan1 = np.array([0x7FC00000], np.uint32).view(f32)
    nan2 = np.array([0xFFC00123], np.uint32).view(f32)
    custom("check.expect_close", nan1, nan2)  # two NaNs, any payloads
    custom_fails("check.expect_close", nan1, np.array([1.0], f32))
    c = np.complex128
    custom("check.expect_close", np.array([1 + 1j], c), np.array([complex(1, ulps(1.0, 3, np.float64))], c))
    custom_fails("check.expect_close", np.array([1 + 1j], c),
                 np.array([complex(ulps(1.0, 4, np.float64), 1)], c))


def test_custom_call_expect_eq_and_almost_eq():
    a = np.array([1, 2], np.int32)
    custom("check.expect_eq", a, a)
    custom_fails("check.expect_eq", a, a + 1)
    x = np.array([1.0, np.inf, np.nan], np.float64)
    custom("check.expect_almost_eq", x, x + np.array([9e-4, 0, 0]))
    msg = custom_fails("check.expect_almost_eq", x, x + np.array([2e-3, 0, 0]))
    assert "tolerance 0.001, |difference| 0.002" in msg


def test_custom_call_check_eq_returns_i1():
    i1 = tensor_type((), "i1")
    a = np.array([1.0, 2.0], f32)
    (ok,) = custom("check.eq", a, a + f32(5e-5), results=[i1])
    assert ok.dtype == np.bool_ and ok.shape == () and bool(ok)
    # operands are (expected, actual)
    msg = custom_fails("check.eq", np.array([1, 2], np.int64), np.array([1, 3], np.int64), results=[i1])
    assert msg == "1 of 2 elements differ (shape 2); at [1]: expected 2, got 3"
    custom_fails("check.eq", a, a + f32(2e-4), results=[i1])
    with pytest.raises(VerificationError, match="returns nothing or one tensor<i1>"):
        custom("check.eq", a, a, results=[tensor_type((), "f32")])


def test_custom_call_other_targets_are_not_implemented():
    with pytest.raises(NotImplementedOpError) as info:
        custom("foo_bar", np.zeros(2, f32), np.zeros(2, f32))
    assert "stablehlo.custom_call is not implemented yet (call target @foo_bar)" in str(info.value)
    with pytest.raises(VerificationError, match="@check.expect_eq takes 2 operands, got 1"):
        custom("check.expect_eq", np.zeros(2, f32))


def test_checks_compare_quantized_values_by_storage_integers():
    q = QuantizedElementType(element_type("i8"), element_type("f32"), (0.5,), (0,))
    t = TensorType((2,), q)
    value = DenseElementsAttr(t, parse_dense("[1, -2]", t))
    check("check.expect_eq_const", np.array([1, -2], np.int8), value=value)
    fails("check.expect_eq_const", np.array([1, -1], np.int8), value=value)


# --------------------------------------------------------------------------
# against stablehlo-translate's own output (FileCheck lines of printing.mlir)
# --------------------------------------------------------------------------

def _printing_cases() -> list[tuple[str, str, list[str]]]:
    """(dense body, tensor type, printed lines) for each constant printing.mlir checks."""
    import re

    from tests.conftest import shared_dir

    text = (shared_dir("conformance", "interpret") / "printing.mlir").read_text()
    cases, block = [], None
    for line in text.splitlines():
        head = re.match(r"\s*// CHECK:\s+(tensor<.*)$", line)
        more = re.match(r"\s*// CHECK-NEXT(?:\{LITERAL\})?:(.*)$", line)
        const = re.match(r"\s*%\w+ = stablehlo.constant dense<(.*)> : (tensor<.*>)$", line)
        if head:
            block = [head.group(1).strip()]
        elif more and block is not None:
            block.append(more.group(1).strip())
        elif const and block is not None:
            cases.append((const.group(1), const.group(2), block))
            block = None
    return cases


def _tensor_type(text: str) -> TensorType:
    import re

    m = re.fullmatch(r"tensor<((?:\d+x)*)(.+)>", text)
    assert m, text
    return tensor_type(tuple(int(d) for d in m.group(1).split("x") if d), m.group(2))


def test_print_matches_the_stablehlo_interpreter_output():
    cases = _printing_cases()
    assert len(cases) >= 14
    for body, type_text, lines in cases:
        t = _tensor_type(type_text)
        printed = format_printed(parse_dense(body, t), t)
        # FileCheck compares lines with leading/trailing blanks ignored
        assert [ln.strip() for ln in printed.splitlines()] == lines, (type_text, printed)


# --------------------------------------------------------------------------
# attribute records and result types
# --------------------------------------------------------------------------

def _no_error(constraint, message):
    return ValueError(message)


def test_check_records_defaults_and_names():
    from hlolab.ops.check import (
        ExpectAlmostEqConstAttrs,
        ExpectCloseAttrs,
        ExpectSerializedEqAttrs,
    )

    close = ExpectCloseAttrs.from_ir({"max_ulp_difference": IntegerAttr(3, element_type("ui64"))}, _no_error)
    assert (close.max_ulp_difference, close.min_ulp_difference) == (3, 0)
    assert close.to_ir() == {"max_ulp_difference": IntegerAttr(3, element_type("ui64"))}
    assert ExpectCloseAttrs.from_ir({}, _no_error).max_ulp_difference == 1
    ser = ExpectSerializedEqAttrs.from_ir({"probe_id": StringAttr("p")}, _no_error)
    assert (ser.probe_id, ser.iteration) == ("p", 0)
    value = const("[1.0, 2.0]", (2,), "f32")
    almost = ExpectAlmostEqConstAttrs.from_ir({"value": value}, _no_error)
    assert almost.tolerance == 1e-4 and almost.value is value
    assert list(almost.to_ir()) == ["value"]


def test_expect_eq_const_value_must_be_dense():
    with pytest.raises(VerificationError, match="attribute 'value' must be a dense elements attribute"):
        check("check.expect_eq_const", np.array([1], np.int32), value=IntegerAttr(1))
    with pytest.raises(VerificationError, match="missing attribute 'value'"):
        check("check.expect_eq_const", np.array([1], np.int32))


def test_check_ops_infer_no_results_and_probe_passes_its_type_through():
    from hlolab.ops.check import ProbeAttrs, infer_check, infer_print, infer_probe
    from hlolab.ops.record import InferError
    from hlolab.ops.registry import lookup

    t = tensor_type((2, 3), "f32")
    for name in ("check.expect_eq", "check.expect_eq_const", "check.expect_almost_eq",
                 "check.expect_almost_eq_const", "check.expect_close", "check.expect_serialized_eq"):
        d = lookup(name)
        assert d.infer is infer_check and d.family == "check"
    assert infer_check(None, [t, t]) == []
    assert infer_probe(ProbeAttrs(probe_id="p"), [t]) == [t]
    with pytest.raises(InferError):
        infer_probe(ProbeAttrs(probe_id="p"), [t, t])
    # print has no result now and had the operand's type as one in older StableHLO
    printed = infer_print(None, [t])
    assert printed.expand(0) == [] and printed.expand(1) == [t]


def test_custom_call_record_keeps_every_attribute_as_written():
    from hlolab.ir.attrs import ArrayAttr, BoolAttr, DictAttr
    from hlolab.ops.check import CustomCallAttrs, infer_custom_call
    from hlolab.ops.record import type_admits

    attrs = {"call_target_name": StringAttr("check.eq"), "has_side_effect": BoolAttr(True),
             "backend_config": DictAttr((("k", IntegerAttr(1)),)),
             "api_version": IntegerAttr(4, element_type("i32")),
             "result_layouts": ArrayAttr(())}
    rec = CustomCallAttrs.from_ir(attrs, _no_error)
    assert (rec.call_target_name, rec.has_side_effect, rec.api_version) == ("check.eq", True, 4)
    assert rec.to_ir() == attrs
    assert CustomCallAttrs.from_ir({}, _no_error).call_target_name == ""
    (each,) = infer_custom_call(rec, []).expand(1)
    assert type_admits(each, tensor_type((), "i1"))
