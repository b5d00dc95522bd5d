"""CHLO ops (hlolab/ops/chlo.py): worked values, edge cases, verification, explain, provenance."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from hlolab.errors import HloLabError
from hlolab.ir.parser import parse_module
from hlolab.ops.chlo import decompose, mulhi_values, next_after_values
from hlolab.ops.registry import lookup
from hlolab.runner import run_module
from hlolab.session import Session
from hlolab.trace.explain import format_explanation
from hlolab.types import element_type


def run1(op: str, args: list[np.ndarray], types: list[str], result: str, attrs: str = "",
         generic: bool = False) -> np.ndarray:
    names = [f"%a{i}" for i in range(len(args))]
    sig = ", ".join(f"{n}: {t}" for n, t in zip(names, types))
    if generic:
        body = f'"{op}"({", ".join(names)}) {attrs} : ({", ".join(types)}) -> {result}'
    elif op.startswith("chlo.broadcast_"):
        body = f'{op} {", ".join(names)} {attrs} : ({", ".join(types)}) -> {result}'
    else:
        body = f'{op} {", ".join(names)} {attrs} : {", ".join(types)} -> {result}'
    text = f"func.func @main({sig}) -> {result} {{\n  %r = {body}\n  return %r : {result}\n}}"
    res = run_module(parse_module(text, "t"), "t", args=args)
    assert res.ok, res.message
    return np.asarray(res.outputs[0])


def unary(op: str, x, et: str = "f32") -> np.ndarray:
    x = np.asarray(x, dtype=element_type(et).dtype)
    t = f"tensor<{x.size}x{et}>"
    out = "i1" if op.startswith("chlo.is_") else et
    return run1(op, [x.reshape(-1)], [t], f"tensor<{x.size}x{out}>")


# --- worked values ---------------------------------------------------------------------

def test_acos_values_and_the_minus_one_case():
    got = unary("chlo.acos", [-1, 0, 0.5, 1, 2])
    np.testing.assert_allclose(got[:4], [np.pi, np.pi / 2, np.pi / 3, 0], rtol=1e-7)
    assert np.isnan(got[4])
    assert got[0] == np.float32(np.pi)  # the select, not atan2(0, 0) = 0


def test_asin_atan_acosh_asinh_atanh_values():
    np.testing.assert_allclose(unary("chlo.asin", [-1, 0.5, 0]), [-np.pi / 2, np.pi / 6, 0], rtol=1e-7)
    np.testing.assert_allclose(unary("chlo.atan", [1, -1, 0]), [np.pi / 4, -np.pi / 4, 0], rtol=1e-7)
    np.testing.assert_allclose(unary("chlo.acosh", [1, 2, 10]), np.arccosh([1, 2, 10]), rtol=2e-7)
    np.testing.assert_allclose(unary("chlo.asinh", [-2, 0.5, 1e-20]), np.arcsinh([-2, 0.5, 1e-20]), rtol=2e-7)
    np.testing.assert_allclose(unary("chlo.atanh", [0.5, -0.25]), np.arctanh([0.5, -0.25]), rtol=2e-7)


def test_domain_edges():
    assert np.isnan(unary("chlo.acosh", [0.5])[0])
    assert unary("chlo.acosh", [3e38])[0] == np.float32(np.log(2) + np.log(3e38))  # the overflow branch
    at = unary("chlo.atanh", [1, -1, 1.5])
    assert at[0] == np.inf and at[1] == -np.inf and np.isnan(at[2])
    big = unary("chlo.asinh", [-1e30])[0]
    assert big == np.float32(-(np.log(2) + np.log(1e30)))
    assert unary("chlo.asinh", [-0.0])[0] == 0 and np.signbit(unary("chlo.asinh", [-0.0])[0])


def test_cosh_sinh_tan_square():
    np.testing.assert_allclose(unary("chlo.cosh", [0, 1, -2]), np.cosh([0, 1, -2]), rtol=2e-7)
    np.testing.assert_allclose(unary("chlo.sinh", [1e-5, 0.5, -3]), np.sinh([1e-5, 0.5, -3]), rtol=2e-7)
    # cosh(89) overflows e^89 but not e^(89 + log 1/2)
    assert np.isfinite(unary("chlo.cosh", [89.0])[0])
    np.testing.assert_allclose(unary("chlo.tan", [0.5, -1]), np.tan([0.5, -1]), rtol=2e-7)
    assert list(unary("chlo.square", [-3, 0.5])) == [9, 0.25]


def test_cosh_in_bf16_is_computed_in_f32_and_rounded_once():
    x = np.asarray([3.0], ml_dtypes.bfloat16)
    got = unary("chlo.cosh", x, "bf16")
    assert got.dtype == ml_dtypes.bfloat16
    assert got[0] == np.asarray(np.cosh(np.float32(3.0)), np.float32).astype(ml_dtypes.bfloat16)
    _, d = decompose("cosh", x)
    assert d.dtype == np.float32
    _, d = decompose("acos", x)  # no upcast: every step rounds to bf16
    assert d.dtype == ml_dtypes.bfloat16


def test_complex_ops():
    z = np.asarray([0.5 + 0.25j, -2 + 1j, 3 - 4j], np.complex128)
    for op, ref in (("acos", np.arccos), ("asin", np.arcsin), ("acosh", np.arccosh), ("asinh", np.arcsinh),
                    ("atanh", np.arctanh), ("cosh", np.cosh), ("sinh", np.sinh), ("tan", np.tan),
                    ("square", np.square), ("atan", np.arctan)):
        np.testing.assert_allclose(unary(f"chlo.{op}", z, "complex<f64>"), ref(z), rtol=1e-13, err_msg=op)
    assert list(unary("chlo.conj", z, "complex<f64>")) == list(np.conj(z))
    # square: |x| = |y| gives an exact 0 real part (no cancellation residue)
    assert unary("chlo.square", [1e20 + 1e20j], "complex<f32>")[0].real == 0


def test_predicates():
    x = [np.inf, -np.inf, np.nan, 0, 1e38]
    assert list(unary("chlo.is_inf", x)) == [True, True, False, False, False]
    assert list(unary("chlo.is_pos_inf", x)) == [True, False, False, False, False]
    got = unary("chlo.is_neg_inf", [-np.inf, np.inf, np.nan, 0, -6e4], "f16")
    assert list(got) == [True, False, False, False, False]


def test_next_after():
    x = np.float32([0, 0, 1, 1, -1, np.nan, 2, -0.0])
    y = np.float32([1, -1, 2, 0, 0, 1, 2, 0.0])
    got = next_after_values(x, y)
    tiny = np.float32(1.4e-45)
    assert got[0] == tiny and got[1] == -tiny
    assert got[2] == np.nextafter(np.float32(1), np.float32(2))
    assert got[3] == np.nextafter(np.float32(1), np.float32(0))
    assert got[4] == np.nextafter(np.float32(-1), np.float32(0))
    assert np.isnan(got[5]) and got[6] == 2
    assert got[7] == 0 and not np.signbit(got[7])  # x == y: the result is y
    via_ir = run1("chlo.next_after", [x, y], ["tensor<8xf32>"] * 2, "tensor<8xf32>")
    np.testing.assert_array_equal(via_ir, got)


@pytest.mark.parametrize("et, a, b, want", [
    ("i8", [64, -64, -64, -128], [4, 4, -4, -128], [1, -1, 1, 64]),
    ("ui8", [240, 128, 255], [16, 2, 255], [15, 1, 254]),
    ("i64", [2**60, -(2**60), -1, 2**63 - 1], [16, 16, -1, 2**63 - 1], [1, -1, 0, 2**62 - 1]),
    ("ui64", [2**64 - 1, 2**63], [2**64 - 1, 2], [2**64 - 2, 1]),
])
def test_mulhi(et, a, b, want):
    e = element_type(et)
    wide = np.uint64 if et.startswith("ui") else np.int64
    got = mulhi_values(np.array(a, wide).astype(e.dtype), np.array(b, wide).astype(e.dtype), e)
    assert [int(v) for v in got] == want


def test_constant_and_constant_like():
    text = ("func.func @main(%a: tensor<2xf32>) -> (tensor<2xf32>, tensor<2x2xi32>) {\n"
            '  %0 = "chlo.constant_like"(%a) {value = 1.5 : f32} : (tensor<2xf32>) -> tensor<2xf32>\n'
            "  %1 = chlo.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>\n"
            "  return %0, %1 : tensor<2xf32>, tensor<2x2xi32>\n}")
    res = run_module(parse_module(text, "t"), "t", args=[np.float32([7, 8])])
    assert res.ok, res.message
    assert list(res.outputs[0]) == [1.5, 1.5] and res.outputs[1].tolist() == [[1, 2], [3, 4]]


# --- broadcasting ------------------------------------------------------------------------

def test_numpy_broadcasting_and_explicit_dimensions():
    a, b = np.arange(6, dtype=np.float32).reshape(2, 3), np.float32([10, 20, 30])
    got = run1("chlo.broadcast_add", [a, b], ["tensor<2x3xf32>", "tensor<3xf32>"], "tensor<2x3xf32>")
    np.testing.assert_array_equal(got, a + b)
    c = np.float32([100, 200])
    got = run1("chlo.broadcast_subtract", [a, c], ["tensor<2x3xf32>", "tensor<2xf32>"], "tensor<2x3xf32>",
               "{broadcast_dimensions = array<i64: 0>}")
    np.testing.assert_array_equal(got, a - c[:, None])
    d = np.int32([[1], [2]])
    got = run1("chlo.broadcast_shift_left", [d, np.int32([1, 2, 3])], ["tensor<2x1xi32>", "tensor<3xi32>"],
               "tensor<2x3xi32>")
    assert got.tolist() == [[2, 4, 8], [4, 8, 16]]


def test_broadcast_compare_select_complex():
    a, b = np.float32([[1, 5], [3, 2]]), np.float32([2, 2])
    lt = run1("chlo.broadcast_compare", [a, b], ["tensor<2x2xf32>", "tensor<2xf32>"], "tensor<2x2xi1>",
              "{comparison_direction = #chlo<comparison_direction LT>}", generic=True)
    assert lt.tolist() == [[True, False], [False, False]]
    sel = run1("chlo.broadcast_select", [np.asarray(True), a, b],
               ["tensor<i1>", "tensor<2x2xf32>", "tensor<2xf32>"],
               "tensor<2x2xf32>")
    np.testing.assert_array_equal(sel, a)
    z = run1("chlo.broadcast_complex", [np.float32([1, 2]), np.float32([3])],
             ["tensor<2xf32>", "tensor<1xf32>"],
             "tensor<2xcomplex<f32>>")
    assert list(z) == [1 + 3j, 2 + 3j]


def test_broadcast_polygamma_calls_the_special_function():
    got = run1("chlo.broadcast_polygamma", [np.float32([[0], [1]]), np.float32([1, 2])],
               ["tensor<2x1xf32>", "tensor<2xf32>"], "tensor<2x2xf32>")
    zeta2 = np.pi ** 2 / 6
    np.testing.assert_allclose(got, [[-0.5772157, 0.4227843], [zeta2, zeta2 - 1]], rtol=1e-5)


def _program(body: str, sig: str, result: str) -> str:
    return f"func.func @main({sig}) -> {result} {{\n  %r = {body}\n  return %r : {result}\n}}"


@pytest.mark.parametrize("body, sig, result, label", [
    ("chlo.broadcast_add %a, %b : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>",
     "%a: tensor<2x3xf32>, %b: tensor<2xf32>", "tensor<2x3xf32>", "(C3)"),
    ("chlo.broadcast_add %a, %b {broadcast_dimensions = array<i64: 0, 1>} : (tensor<2x3xf32>, tensor<2xf32>)"
     " -> tensor<2x3xf32>", "%a: tensor<2x3xf32>, %b: tensor<2xf32>", "tensor<2x3xf32>", "(C2)"),
    ("chlo.broadcast_add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3x3xf32>",
     "%a: tensor<2x3xf32>, %b: tensor<3xf32>", "tensor<3x3xf32>", "(C4)"),
    ("chlo.broadcast_add %a, %b : (tensor<2xf32>, tensor<2xi32>) -> tensor<2xf32>",
     "%a: tensor<2xf32>, %b: tensor<2xi32>", "tensor<2xf32>", "(C1)"),
    ("chlo.broadcast_and %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>",
     "%a: tensor<2xf32>", "tensor<2xf32>", "(I1)"),
    ("chlo.acos %a : tensor<2xi32> -> tensor<2xi32>", "%a: tensor<2xi32>", "tensor<2xi32>", "(I1)"),
    ("chlo.acos %a : tensor<2xf32> -> tensor<2xf64>", "%a: tensor<2xf32>", "tensor<2xf64>", "(C1)"),
    ("chlo.is_inf %a : tensor<2xf32> -> tensor<2xf32>", "%a: tensor<2xf32>", "tensor<2xf32>", "(C1)"),
    ("chlo.mulhi %a, %a : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>", "%a: tensor<2xf32>",
     "tensor<2xf32>", "(I1)"),
])
def test_verification_names_the_constraint(body, sig, result, label):
    with pytest.raises(HloLabError) as e:
        run = run_module(parse_module(_program(body, sig, result), "t"), "t")
        assert not run.ok
        raise HloLabError(run.message)
    assert label in str(e.value), str(e.value)


# --- explain and provenance -----------------------------------------------------------------

def _event(text: str, args: list[np.ndarray], name: str):
    s = Session(text)
    s.bind(args)
    s.run()
    return [e for e in s.history if e.op.name == name][-1]


def test_explain_shows_the_decomposition_with_numbers():
    text = _program("chlo.acos %a : tensor<2xf32> -> tensor<2xf32>", "%a: tensor<2xf32>", "tensor<2xf32>")
    ev = _event(text,
                [np.float32([0.5, -1])], "chlo.acos")
    e = lookup("chlo.acos").explain(ev.call, ev.inputs, ev.outputs, 0, (0,))
    steps = {s.name: s.value for s in e.steps if isinstance(s.name, str)}
    assert steps["x_squared"] == 0.25 and steps["one_minus_x2"] == 0.75 and steps["one_plus_x"] == 1.5
    assert steps["half_angle"] == np.float32(np.arctan2(np.sqrt(0.75), 1.5))
    assert e.value == np.float32(np.pi / 3)
    text = format_explanation(e)
    assert "atan2(0.8660254, 1.5)" in text and "1 - x_squared = 1.0 - 0.25 = 0.75" in text
    e = lookup("chlo.acos").explain(ev.call, ev.inputs, ev.outputs, 0, (1,))
    assert "angle if not_minus_one else pi = 0.0 if False else 3.1415927" in format_explanation(e)


def test_explain_of_an_upcast_op_notes_the_f32_steps():
    x = np.asarray([0.5], ml_dtypes.bfloat16)
    ev = _event(_program("chlo.sinh %a : tensor<1xbf16> -> tensor<1xbf16>", "%a: tensor<1xbf16>",
                         "tensor<1xbf16>"), [x], "chlo.sinh")
    e = lookup("chlo.sinh").explain(ev.call, ev.inputs, ev.outputs, 0, (0,))
    assert any(getattr(n, "key", "") == "chlo.explain.upcast" for n in e.notes)
    steps = {s.name: s.value for s in e.steps if isinstance(s.name, str)}
    assert steps["expm1"].dtype == np.float32 and steps["expm1"] == np.expm1(np.float32(0.5))


def test_broadcast_provenance_is_the_broadcast_index_map():
    text = _program("chlo.broadcast_multiply %a, %b : (tensor<2x1xf32>, tensor<3xf32>) -> tensor<2x3xf32>",
                    "%a: tensor<2x1xf32>, %b: tensor<3xf32>", "tensor<2x3xf32>")
    ev = _event(text, [np.float32([[1], [2]]), np.float32([3, 4, 5])], "chlo.broadcast_multiply")
    p = ev.provenance()
    src = {(s.operand, s.index, s.role) for s in p.sources(0, (1, 2))}
    assert src == {(0, (1, 0), "combine"), (1, (2,), "combine")}
    assert {t.index for t in p.targets(1, (0,))} == {(0, 0), (1, 0)}
    back = p.back(0, np.array([[True, False, False], [False, False, False]]))
    assert back[(1, "combine")].tolist() == [True, False, False]
    e = lookup("chlo.broadcast_multiply").explain(ev.call, ev.inputs, ev.outputs, 0, (1, 2))
    assert e.value == 10 and [s.value for s in e.steps[:4]] == [(1, 0), 2, (2,), 5]


def test_broadcast_select_provenance_picks_the_chosen_branch():
    text = _program("chlo.broadcast_select %p, %a, %b : (tensor<2xi1>, tensor<2xf32>, tensor<f32>) "
                    "-> tensor<2xf32>",
                    "%p: tensor<2xi1>, %a: tensor<2xf32>, %b: tensor<f32>", "tensor<2xf32>")
    ev = _event(text, [np.array([True, False]), np.float32([1, 2]), np.float32(9)], "chlo.broadcast_select")
    assert list(ev.outputs[0]) == [1, 9]
    p = ev.provenance()
    assert {(s.operand, s.role) for s in p.sources(0, (1,))} == {(0, "control"), (2, "copy")}
    assert {(s.operand, s.role) for s in p.sources(0, (0,))} == {(0, "control"), (1, "copy")}
