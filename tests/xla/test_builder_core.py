"""The core of hlolab.xla: naming, lookup, undo, append, verification at the call site,
builders kept apart, shapes, FUNCTIONS, computations (text, run, session)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from hlolab.errors import HloLabError, VerificationError
from hlolab.ir.parser import parse_module
from hlolab.types import TensorType, element_type
from hlolab.xla import (
    F32,
    FUNCTIONS,
    S32,
    Add,
    BuilderError,
    ConstantLiteral,
    ConstantR0,
    ConstantR1,
    CreateScalarAddComputation,
    Iota,
    Mul,
    Neg,
    Parameter,
    Reduce,
    Shape,
    XlaBuilder,
    XlaComputation,
    XlaOp,
    to_element_type,
)
from hlolab.xla import FUNCTIONS as _F

Call, Lt, While = _F["Call"], _F["Lt"], _F["While"]


def state(b: XlaBuilder) -> tuple:
    """Everything a failed call must leave as it was (and the next fresh number)."""
    return (b.names(), [id(o) for o in b.ops], b._counter, set(b._taken), b.build().as_text()
            if b.ops or b.parameters() else "")


# --- naming and lookup -----------------------------------------------------------------

def test_fresh_numbers_and_set_name():
    b = XlaBuilder("main")
    x = Parameter(b, 0, Shape.parse("f32[2,3]"), "x")
    c = ConstantR0(b, 1.0)
    y = Add(x, c)
    assert (x.name, c.name, y.name) == ("x", "0", "2")  # %1 is the broadcast of the scalar
    b.set_name(y, "y")
    assert y.name == "y" and b.lookup("y") == y and b.lookup("%y") == y
    assert b.names() == ["x", "0", "1", "y"]
    z = Neg(y)
    assert z.name == "2"  # the number %y gave up is reused, never a user name
    text = b.build().as_text()
    assert "%y = stablehlo.add %x, %1 : tensor<2x3xf32>" in text
    assert "func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32>" in text


def test_fresh_numbers_skip_user_names():
    b = XlaBuilder("main")
    x = Parameter(b, 0, "f32[]", "1")
    assert [Neg(x).name, Neg(x).name] == ["0", "2"]


def test_set_name_on_parameter_renames_argument():
    b = XlaBuilder("main")
    p = Parameter(b, 0, "s32[4]")
    assert p.name == "arg0"
    b.set_name(p, "%idx")
    Neg(p)
    assert "func.func @main(%idx: tensor<4xi32>)" in b.build().as_text()
    assert b.lookup("idx") == p


def test_set_name_errors():
    b = XlaBuilder("main")
    x = Parameter(b, 0, "f32[]", "x")
    y = Neg(x)
    with pytest.raises(BuilderError, match="already in use"):
        b.set_name(y, "x")
    for bad in ("a b", "1a", "", "x#1", "a:b"):
        with pytest.raises(BuilderError, match="invalid SSA name"):
            b.set_name(y, bad)
    assert y.name == "0"


def test_lookup_missing_is_a_hlolab_error():
    b = XlaBuilder("main")
    Parameter(b, 0, "f32[]", "x")
    with pytest.raises(HloLabError, match=r"no value named %nope .*names: %x"):
        b.lookup("nope")


def test_parameter_errors():
    b = XlaBuilder("main")
    Parameter(b, 0, "f32[]", "x")
    with pytest.raises(BuilderError, match="parameter 0 is already %x"):
        Parameter(b, 0, "f32[]")
    with pytest.raises(BuilderError, match="already in use"):
        Parameter(b, 1, "f32[]", "x")
    with pytest.raises(BuilderError, match=">= 0"):
        Parameter(b, -1, "f32[]")
    Parameter(b, 2, "f32[]", "z")
    with pytest.raises(BuilderError, match=r"numbered 0..n-1; missing \[1\]"):
        b.build()


# --- undo ---------------------------------------------------------------------------------

def test_mark_truncate_undoes_ops_parameters_and_renames():
    b = XlaBuilder("main")
    x = Parameter(b, 0, "f32[3]", "x")
    before = state(b)
    m = b.mark()
    y = Neg(x)
    b.set_name(y, "y")
    b.set_name(x, "renamed")
    Parameter(b, 1, "f32[3]", "w")
    Mul(y, b.lookup("w"))
    b.truncate(m)
    assert state(b) == before
    assert x.name == "x"
    with pytest.raises(BuilderError, match="no longer in builder"):
        Neg(y)
    assert Neg(x).name == "0"  # the numbers are given again
    with pytest.raises(BuilderError, match="newer"):
        b.truncate((10**6, 0))


def test_truncate_restores_a_later_mark_too():
    b = XlaBuilder("main")
    x = Parameter(b, 0, "f32[]", "x")
    m1 = b.mark()
    Neg(x)
    m2 = b.mark()
    Neg(x)
    b.truncate(m2)
    assert b.names() == ["x", "0"]
    b.truncate(m1)
    assert b.names() == ["x"]


# --- verification at the call site ------------------------------------------------------

def test_verification_error_names_constraint_and_leaves_builder_unchanged():
    b = XlaBuilder("main")
    x = Parameter(b, 0, "f32[2,3]", "x")
    i = Parameter(b, 1, "s32[2,3]", "i")
    zero = ConstantR0(b, 0, S32)
    Neg(x)
    before = state(b)
    with pytest.raises(VerificationError, match=r"add \(C1\)") as e:
        Add(x, i)
    assert e.value.op == "stablehlo.add" and e.value.constraint == "C1"
    with pytest.raises(VerificationError, match=r"iota \(C1\)"):
        Iota(b, "s32[4,8]", 2)
    with pytest.raises(VerificationError, match=r"reduce \(C\d+\)"):
        Reduce(x, zero, CreateScalarAddComputation(F32), [0])
    assert state(b) == before


def test_infer_error_is_a_verification_error_with_constraint():
    b = XlaBuilder("main")
    x = Parameter(b, 0, "f32[2,3]", "x")
    from hlolab.xla import Transpose

    before = state(b)
    with pytest.raises(VerificationError, match=r"transpose \(C\d\)"):
        Transpose(x, [0, 0])
    assert state(b) == before


def test_mixing_builders_is_an_error():
    a, b = XlaBuilder("a"), XlaBuilder("b")
    x = Parameter(a, 0, "f32[]", "x")
    y = Parameter(b, 0, "f32[]", "y")
    with pytest.raises(BuilderError, match="two builders"):
        Add(x, y)
    with pytest.raises(BuilderError, match="belongs to builder 'a'"):
        b.set_name(x, "z")
    with pytest.raises(BuilderError, match="two builders"):
        b.build(x)


# --- append (the REPL's parsed MLIR statements) -------------------------------------------

def _parsed_op(text: str, b: XlaBuilder):
    """The first op of @f in ``text``, its operands rebound to ``b``'s values of the same names."""
    m = parse_module(text)
    f = m.funcs[0]
    op = f.body.blocks[0].ops[0]
    op.operands = [b.lookup(v.name).value for v in op.operands]
    op.parent = None
    return op


def test_append_parsed_op():
    b = XlaBuilder("main")
    x = Parameter(b, 0, "f32[2]", "x")
    op = _parsed_op("func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
                    "  %y = stablehlo.multiply %x, %x : tensor<2xf32>\n  return %y : tensor<2xf32>\n}", b)
    (y,) = b.append(op)
    assert isinstance(y, XlaOp) and y.name == "y" and b.lookup("y") == y
    z = Add(y, x)
    assert z.name == "0"
    np.testing.assert_array_equal(b.build(z).run(np.array([2, 3], np.float32))[0], [6, 12])


def test_append_with_region():
    b = XlaBuilder("main")
    Parameter(b, 0, "f32[2,3]", "x")
    Parameter(b, 1, "f32[]", "zero")
    op = _parsed_op("""func.func @f(%x: tensor<2x3xf32>, %zero: tensor<f32>) -> tensor<3xf32> {
  %s = stablehlo.reduce(%x init: %zero) across dimensions = [0]
      : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>
   reducer(%a: tensor<f32>, %c: tensor<f32>)  {
    %t = stablehlo.add %a, %c : tensor<f32>
    stablehlo.return %t : tensor<f32>
  }
  return %s : tensor<3xf32>
}""", b)
    (s,) = b.append(op)
    out = b.build(s).run(np.ones((2, 3), np.float32), np.array(1, np.float32))
    np.testing.assert_array_equal(out[0], [3, 3, 3])
    with pytest.raises(BuilderError, match="already in use"):  # %a is taken inside the region
        b.set_name(s, "a")


def test_append_failure_leaves_builder_unchanged():
    b = XlaBuilder("main")
    Parameter(b, 0, "f32[2]", "x")
    Parameter(b, 1, "s32[2]", "i")
    op = _parsed_op("func.func @f(%x: tensor<2xf32>, %i: tensor<2xi32>) -> tensor<2xf32> {\n"
                    "  %y = stablehlo.add %x, %i : (tensor<2xf32>, tensor<2xi32>) -> tensor<2xf32>\n"
                    "  return %y : tensor<2xf32>\n}", b)
    before = state(b)
    with pytest.raises(VerificationError, match=r"add \(C1\)"):
        b.append(op)
    assert state(b) == before
    # a taken name, and an operand of no builder
    op = _parsed_op("func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
                    "  %w = stablehlo.negate %x : tensor<2xf32>\n  return %w : tensor<2xf32>\n}", b)
    op.results[0].name = "%x"
    with pytest.raises(BuilderError, match="already in use"):
        b.append(op)
    op = parse_module("func.func @f(%q: tensor<2xf32>) -> tensor<2xf32> {\n"
                      "  %n = stablehlo.negate %q : tensor<2xf32>\n  return %n : tensor<2xf32>\n}"
                      ).funcs[0].body.blocks[0].ops[0]
    with pytest.raises(BuilderError, match="not a value of builder"):
        b.append(op)
    assert state(b) == before


# --- build, run, session ---------------------------------------------------------------

def test_build_roots_and_independence():
    b = XlaBuilder("f")
    x = Parameter(b, 0, "s32[3]", "x")
    y = Neg(x)
    z = Add(x, y)
    comp = b.build()  # the last op
    assert isinstance(comp, XlaComputation) and comp.module.verified
    assert comp.module.func("f").result_types == [TensorType((3,), element_type("i32"))]
    two = b.build([y, z])
    out = two.run(np.array([1, 2, 3], np.int32))
    np.testing.assert_array_equal(out[0], [-1, -2, -3])
    np.testing.assert_array_equal(out[1], [0, 0, 0])
    text = comp.as_text()
    b.set_name(y, "later")  # a built computation does not change with the builder
    assert comp.as_text() == text
    assert parse_module(text) == comp.module
    with pytest.raises(BuilderError, match="is empty"):
        XlaBuilder("e").build()


def test_session_steps_the_computation():
    b = XlaBuilder("main")
    x = Parameter(b, 0, "f32[2]", "x")
    y = b.set_name(Neg(x), "y")
    b.set_name(Mul(y, y), "z")
    s = b.build().session([np.array([2, 3], np.float32)])
    s.step()
    np.testing.assert_array_equal(s.value("%y"), [-2, -3])
    s.run()
    np.testing.assert_array_equal(s.results[0], [4, 9])


def test_operators_and_numbers_on_xlaops():
    b = XlaBuilder("main")
    x = Parameter(b, 0, "f32[2]", "x")
    out = b.build(-(x * 2.0 + 1.0) / 2.0 - x).run(np.array([1, 2], np.float32))
    np.testing.assert_array_equal(out[0], [-2.5, -4.5])
    i = Parameter(b, 1, "s32[2]", "i")
    out = b.build([Add(i, 1), Mul(3, i), 1 - i]).run(np.zeros(2, np.float32), np.array([1, 2], np.int32))
    assert [o.tolist() for o in out] == [[2, 3], [3, 6], [0, -1]]
    assert all(o.dtype == np.int32 for o in out)


# --- implicit broadcasting --------------------------------------------------------------

def test_implicit_broadcast_lower_rank():
    b = XlaBuilder("main")
    m = ConstantLiteral(b, np.arange(6).reshape(2, 3), S32)
    v = ConstantR1(b, [10, 20], S32)
    out = b.build(Add(m, v, broadcast_dimensions=[0])).run()[0]
    np.testing.assert_array_equal(out, [[10, 11, 12], [23, 24, 25]])
    assert "stablehlo.broadcast_in_dim" in b.build().as_text()
    with pytest.raises(BuilderError, match="must map each"):
        Add(m, v)
    with pytest.raises(BuilderError, match="not compatible"):
        Add(m, v, broadcast_dimensions=[1])


def test_implicit_broadcast_degenerate_dims():
    """XLA's same-rank broadcasting: a size-1 dim stretches to the other operand's size."""
    b = XlaBuilder("main")
    col = ConstantLiteral(b, [[1], [2]], S32)
    row = ConstantLiteral(b, [[10, 20, 30]], S32)
    out = b.build(Add(col, row)).run()[0]
    np.testing.assert_array_equal(out, [[11, 21, 31], [12, 22, 32]])
    with pytest.raises(BuilderError, match="not compatible"):
        Add(ConstantLiteral(b, np.zeros((2, 3), np.int32)), ConstantLiteral(b, np.zeros((3, 3), np.int32)))


# --- shapes ------------------------------------------------------------------------------

@pytest.mark.parametrize("text, want", [
    ("f32[2,3]", "tensor<2x3xf32>"), ("s32[]", "tensor<i32>"), ("pred[4]", "tensor<4xi1>"),
    ("u8[1]", "tensor<1xui8>"), ("c64[2]", "tensor<2xcomplex<f32>>"), ("bf16[3]", "tensor<3xbf16>"),
    ("f8e5m2[2]", "tensor<2xf8E5M2>"), ("i32[2]", "tensor<2xi32>"), ("ui16[]", "tensor<ui16>"),
    ("f32[2,3]{1,0}", "tensor<2x3xf32>"), ("(f32[2], s32[])", "tuple<tensor<2xf32>, tensor<i32>>"),
    ("token[]", "!stablehlo.token"),
])
def test_shape_parse(text, want):
    assert str(Shape.parse(text).to_type()) == want


def test_shape_constructors_and_errors():
    assert str(Shape.array_shape(np.float32, [2, 3])) == "f32[2,3]"
    assert str(Shape.scalar("pred")) == "pred[]"
    assert str(Shape.array_shape(F32, [1])) == "f32[1]"
    assert Shape.parse("(f32[2], s32[])").is_tuple()
    for bad in ("f32[2", "flt[2]", "f32[2,-1]", "(f32[2]"):
        with pytest.raises(HloLabError):
            Shape.parse(bad)


def test_constant_defaults_and_ranges():
    b = XlaBuilder("main")
    assert str(ConstantR0(b, 1).type) == "tensor<i32>"
    assert str(ConstantR0(b, 1.5).type) == "tensor<f32>"
    assert str(ConstantR0(b, True).type) == "tensor<i1>"
    assert str(ConstantLiteral(b, np.zeros(2, np.float64)).type) == "tensor<2xf64>"
    with pytest.raises(BuilderError, match="outside"):
        ConstantR0(b, 300, "u8")
    with pytest.raises(BuilderError, match="rank-1"):
        ConstantR1(b, 3)


# --- FUNCTIONS ---------------------------------------------------------------------------

def test_functions_table():
    assert len(FUNCTIONS) >= 120
    for name, fn in FUNCTIONS.items():
        assert fn.__name__ == name
        sig = inspect.signature(fn)
        assert sig.return_annotation is not inspect.Signature.empty, name
        doc = fn.__doc__ or ""
        assert doc.strip(), name
        assert any(p in doc for p in ("stablehlo.", "chlo.", "func.call", "no op")), name
    for collective in ("AllGather", "AllReduce", "AllToAll", "CollectivePermute", "ReduceScatter",
                       "ReplicaId", "CrossReplicaSum", "Send", "Recv", "Infeed", "Outfeed"):
        assert collective in FUNCTIONS  # hlolab/xla/collectives.py
    builder_first = [n for n, f in FUNCTIONS.items()
                     if next(iter(inspect.signature(f).parameters), "") == "builder"]
    assert {"Parameter", "ConstantLiteral", "Iota", "AfterAll", "CreateToken"} <= set(builder_first)


def test_sub_computation_values_are_renumbered():
    b = XlaBuilder("main")
    x = Parameter(b, 0, "f32[4]", "lhs")  # the body's parameter names clash with nothing
    r = Reduce(x, ConstantR0(b, 0.0), CreateScalarAddComputation(F32), [0])
    text = b.build(r).as_text()
    assert parse_module(text) == b.build(r).module
    assert "%lhs: tensor<4xf32>" in text
    assert b.build(r).run(np.array([1, 2, 3, 4], np.float32))[0] == 10


def test_nested_calls_and_regions_inside_sub_computations():
    inner_b = XlaBuilder("inner")
    inner = inner_b.build(Parameter(inner_b, 0, "f32[2]") * 3.0)
    outer_b = XlaBuilder("outer")
    outer = outer_b.build(Call(outer_b, inner, [Parameter(outer_b, 0, "f32[2]")]) + 1.0)
    b = XlaBuilder("main")
    x = Parameter(b, 0, "f32[2]", "x")
    comp = b.build(Call(b, inner, [Call(b, outer, [x])]))
    assert [f.name for f in comp.module.funcs] == ["main", "outer", "inner"]
    assert parse_module(comp.as_text()) == comp.module
    np.testing.assert_array_equal(comp.run(np.array([1, 2], np.float32))[0], [12, 21])
    # a reduce inside a while body: its region's values are renumbered too
    bb = XlaBuilder("body")
    i, v = Parameter(bb, 0, "s32[]"), Parameter(bb, 1, "f32[3]")
    body = bb.build([i + 1, v + Reduce(v, ConstantR0(bb, 0.0), CreateScalarAddComputation(F32), [0])])
    cb = XlaBuilder("cond")
    i = Parameter(cb, 0, "s32[]")
    Parameter(cb, 1, "f32[3]")
    cond = cb.build(Lt(i, ConstantR0(cb, 2)))
    b = XlaBuilder("main")
    n, out = While(cond, body, [ConstantR0(b, 0), Parameter(b, 0, "f32[3]", "x")])
    comp = b.build([n, out])
    assert parse_module(comp.as_text()) == comp.module
    np.testing.assert_array_equal(comp.run(np.array([1, 2, 3], np.float32))[1], [31, 32, 33])


def test_call_name_clash_is_an_error():
    one = XlaBuilder("helper")
    c1 = one.build(Parameter(one, 0, "f32[]") + 1.0)
    two = XlaBuilder("helper")
    c2 = two.build(Parameter(two, 0, "f32[]") * 2.0)
    b = XlaBuilder("main")
    x = Parameter(b, 0, "f32[]", "x")
    Call(b, c1, [x])
    Call(b, c1, [x])  # the same function twice is fine
    before = state(b)
    with pytest.raises(BuilderError, match="two different functions named @helper"):
        Call(b, c2, [x])
    assert state(b) == before


def test_append_region_reading_a_foreign_value():
    b = XlaBuilder("main")
    Parameter(b, 0, "f32[2,3]", "x")
    Parameter(b, 1, "f32[]", "zero")
    op = _parsed_op("""func.func @f(%x: tensor<2x3xf32>, %zero: tensor<f32>,
                    %k: tensor<f32>) -> tensor<3xf32> {
  %s = stablehlo.reduce(%x init: %zero) across dimensions = [0]
      : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>
   reducer(%a: tensor<f32>, %c: tensor<f32>)  {
    %t = stablehlo.add %a, %k : tensor<f32>
    stablehlo.return %t : tensor<f32>
  }
  return %s : tensor<3xf32>
}""", b)
    with pytest.raises(BuilderError, match="reads %k"):
        b.append(op)


def test_element_type_spellings():
    for spelling in ("s32", "i32", "S32", np.int32, "int32", S32):
        assert to_element_type(spelling).name == "i32"
    assert to_element_type("pred").name == to_element_type(np.bool_).name == "i1"
    assert to_element_type("c128").name == "complex<f64>"
    with pytest.raises(HloLabError, match="unknown element type"):
        to_element_type("f33")


def _plausible(p: inspect.Parameter, b: XlaBuilder, x: XlaOp):
    """A well-formed argument for parameter ``p`` (by its type hint)."""
    a = str(p.annotation)
    if p.name == "builder":
        return b
    if "XlaComputation" in a:
        return CreateScalarAddComputation(F32)
    if "XlaOp" in a:
        return x
    if p.default is not inspect.Parameter.empty:
        return p.default
    if "Shape" in a:
        return "f32[2,3]"
    if "Sequence[int]" in a or "list[int]" in a:
        return [0, 1]
    if "int" in a:
        return 0
    if "Element" in a:
        return "f32"
    if "bool" in a:
        return True
    if "float" in a:
        return 0.1
    return "FFT"


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_bad_arguments_give_hlolab_errors(name):
    """Whatever a user passes, only hlolab's errors come out (the REPL prints them)."""
    fn = FUNCTIONS[name]
    params = [p for p in inspect.signature(fn).parameters.values()
              if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    for k in range(len(params)):
        for bad in ("x", None, [1, "a"], 10**30, [[1]]):
            b = XlaBuilder("m")
            x = Parameter(b, 0, "f32[2,3]", "x")
            args = [bad if j == k else _plausible(p, b, x) for j, p in enumerate(params)]
            try:
                fn(*args)
            except HloLabError:
                pass
