"""The interpreter: control flow, calls, stepping events, budgets, errors."""

from __future__ import annotations

import numpy as np
import pytest

from hlolab.errors import ExecutionError, HloLabError, NotImplementedOpError
from hlolab.interp.engine import Interpreter
from hlolab.ir.parser import parse_module
from tests.programs import ENDLESS_WHILE

WHILE = """
func.func @main(%n: tensor<i64>) -> (tensor<i64>, tensor<i64>) {
  %zero = stablehlo.constant dense<0> : tensor<i64>
  %one = stablehlo.constant dense<1> : tensor<i64>
  %i, %s = stablehlo.while(%a = %zero, %b = %zero) : tensor<i64>, tensor<i64>
  cond {
    %c = stablehlo.compare LT, %a, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %a1 = stablehlo.add %a, %one : tensor<i64>
    %b1 = stablehlo.add %b, %a : tensor<i64>
    stablehlo.return %a1, %b1 : tensor<i64>, tensor<i64>
  }
  func.return %i, %s : tensor<i64>, tensor<i64>
}
"""


def test_while_sums_and_steps_op_by_op():
    m = parse_module(WHILE)
    interp = Interpreter(m)
    gen = interp.steps(None, [np.array(4, np.int64)])
    events = []
    while True:
        try:
            events.append(next(gen))
        except StopIteration as stop:
            result = stop.value
            break
    assert [int(r) for r in result] == [4, 0 + 1 + 2 + 3]
    # 2 constants, then per iteration: compare (cond) + 2 adds (body); final compare; then the while
    names = [e.op.name for e in events]
    assert names.count("stablehlo.compare") == 5
    assert names.count("stablehlo.add") == 8
    assert names[-1] == "stablehlo.while"
    adds = [e for e in events if e.op.name == "stablehlo.add"]
    assert [e.frame.iteration for e in adds] == [0, 0, 1, 1, 2, 2, 3, 3]
    assert all(e.frame.region == 1 for e in adds)
    ids = [e.id for e in events]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)


def test_step_budget_stops_endless_loop():
    interp = Interpreter(parse_module(ENDLESS_WHILE), step_budget=1000)
    with pytest.raises(ExecutionError, match="step budget of 1000"):
        interp.run()


def test_element_budget_refuses_before_allocating():
    text = """
    func.func @main() -> tensor<100000x100000xf32> {
      %z = stablehlo.constant dense<0.0> : tensor<f32>
      %b = stablehlo.broadcast_in_dim %z, dims = [] : (tensor<f32>) -> tensor<100000x100000xf32>
      func.return %b : tensor<100000x100000xf32>
    }"""
    with pytest.raises(ExecutionError, match="over the budget"):
        Interpreter(parse_module(text)).run()


def test_call_if_case_and_recursion_limit():
    text = """
    func.func private @twice(%x: tensor<i32>) -> tensor<i32> {
      %y = stablehlo.add %x, %x : tensor<i32>
      return %y : tensor<i32>
    }
    func.func @main(%p: tensor<i1>, %k: tensor<i32>) -> (tensor<i32>, tensor<i32>) {
      %c = stablehlo.constant dense<5> : tensor<i32>
      %r = "stablehlo.if"(%p) ({
        %t = func.call @twice(%c) : (tensor<i32>) -> tensor<i32>
        stablehlo.return %t : tensor<i32>
      }, {
        stablehlo.return %c : tensor<i32>
      }) : (tensor<i1>) -> tensor<i32>
      %s = "stablehlo.case"(%k) ({
        stablehlo.return %c : tensor<i32>
      }, {
        stablehlo.return %r : tensor<i32>
      }) : (tensor<i32>) -> tensor<i32>
      return %r, %s : tensor<i32>, tensor<i32>
    }"""
    m = parse_module(text)
    r = Interpreter(m).run(None, [np.array(True), np.array(0, np.int32)])
    assert [int(v) for v in r] == [10, 5]
    r = Interpreter(m).run(None, [np.array(False), np.array(7, np.int32)])  # out of range -> last
    assert [int(v) for v in r] == [5, 5]

    rec = """
    func.func @main(%x: tensor<i32>) -> tensor<i32> {
      %y = func.call @main(%x) : (tensor<i32>) -> tensor<i32>
      return %y : tensor<i32>
    }"""
    with pytest.raises(ExecutionError, match="call depth"):
        Interpreter(parse_module(rec), max_call_depth=50).run(None, [np.array(1, np.int32)])


def test_unimplemented_op_is_a_clear_error():
    text = """
    func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
      %y = "stablehlo.frobnicate"(%x) : (tensor<4xf32>) -> tensor<4xf32>
      return %y : tensor<4xf32>
    }"""
    with pytest.raises(NotImplementedOpError, match="stablehlo.frobnicate is not implemented yet"):
        Interpreter(parse_module(text)).run(None, [np.zeros(4, np.float32)])


def test_argument_type_mismatch():
    text = """
    func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
      return %x : tensor<4xf32>
    }"""
    with pytest.raises(ExecutionError, match=r"argument #0 of @main must be tensor<4xf32>"):
        Interpreter(parse_module(text)).run(None, [np.zeros(3, np.float32)])


def test_batched_region_rejects_non_elementwise_ops():
    text = """
    func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
      %r = "stablehlo.sort"(%x) <{dimension = 0 : i64, is_stable = true}> ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %ra = stablehlo.reshape %a : (tensor<f32>) -> tensor<1xf32>
        %rb = stablehlo.reshape %b : (tensor<f32>) -> tensor<1xf32>
        %c = stablehlo.compare LT, %ra, %rb : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xi1>
        %s = stablehlo.reshape %c : (tensor<1xi1>) -> tensor<i1>
        stablehlo.return %s : tensor<i1>
      }) : (tensor<4xf32>) -> tensor<4xf32>
      func.return %r : tensor<4xf32>
    }"""
    from hlolab.errors import UnsupportedError

    with pytest.raises(UnsupportedError, match="stablehlo.reshape inside a per-element region"):
        Interpreter(parse_module(text)).run(None, [np.array([3, 1, 2, 0], np.float32)])


def test_batched_region_broadcasts_constants_and_captured_values():
    text = """
    func.func @main(%x: tensor<5xf32>, %t: tensor<f32>) -> tensor<5xf32> {
      %r = "stablehlo.sort"(%x) <{dimension = 0 : i64, is_stable = true}> ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %da = stablehlo.subtract %a, %t : tensor<f32>
        %db = stablehlo.subtract %b, %t : tensor<f32>
        %aa = stablehlo.abs %da : tensor<f32>
        %ab = stablehlo.abs %db : tensor<f32>
        %c = stablehlo.compare LT, %aa, %ab : (tensor<f32>, tensor<f32>) -> tensor<i1>
        stablehlo.return %c : tensor<i1>
      }) : (tensor<5xf32>) -> tensor<5xf32>
      func.return %r : tensor<5xf32>
    }"""
    x = np.array([0.0, 5.0, 2.5, 1.0, 4.0], np.float32)
    (r,) = Interpreter(parse_module(text)).run(None, [x, np.array(2.0, np.float32)])
    assert r.tolist() == [2.5, 1.0, 0.0, 4.0, 5.0]  # by distance to 2.0; ties keep input order


CALLING_BODIES = """
func.func @main(%x: tensor<2x3xf32>, %t: tensor<f32>) -> (tensor<2xf32>, tensor<2x3xf32>, tensor<2x2xf32>) {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %r = stablehlo.reduce(%x init: %ninf) across dimensions = [1]
      : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
   reducer(%a: tensor<f32>, %b: tensor<f32>) {
    %m = func.call @bigger(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    stablehlo.return %m : tensor<f32>
  }
  %s = "stablehlo.sort"(%x) <{dimension = 1 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = func.call @closer(%a, %b, %t) : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %w = "stablehlo.reduce_window"(%x, %ninf) <{window_dimensions = array<i64: 1, 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = func.call @bigger(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x2xf32>
  func.return %r, %s, %w : tensor<2xf32>, tensor<2x3xf32>, tensor<2x2xf32>
}
func.func private @bigger(%a: tensor<f32>, %b: tensor<f32>) -> tensor<f32> {
  %m = stablehlo.maximum %a, %b : tensor<f32>
  return %m : tensor<f32>
}
func.func private @closer(%a: tensor<f32>, %b: tensor<f32>, %t: tensor<f32>) -> tensor<i1> {
  %aa = func.call @distance(%a, %t) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %ab = func.call @distance(%b, %t) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %c = stablehlo.compare LT, %aa, %ab : (tensor<f32>, tensor<f32>) -> tensor<i1>
  return %c : tensor<i1>
}
func.func private @distance(%a: tensor<f32>, %t: tensor<f32>) -> tensor<f32> {
  %d = stablehlo.subtract %a, %t : tensor<f32>
  %e = stablehlo.abs %d : tensor<f32>
  return %e : tensor<f32>
}
"""


def test_per_element_regions_may_call_functions():
    """A body that calls a function (jax prints this for a jitted reducer) runs batched;
    the callee, its nested calls and captured arguments included."""
    x = np.array([[0.0, 5.0, 2.5], [4.0, -1.0, 1.5]], np.float32)
    r, s, w = Interpreter(parse_module(CALLING_BODIES)).run(None, [x, np.array(2.0, np.float32)])
    assert r.tolist() == [5.0, 4.0]
    assert s.tolist() == [[2.5, 0.0, 5.0], [1.5, 4.0, -1.0]]
    assert w.tolist() == [[5.0, 5.0], [4.0, 1.5]]


def test_a_called_function_in_a_per_element_region_must_be_element_wise():
    text = CALLING_BODIES.replace(
        "%m = stablehlo.maximum %a, %b : tensor<f32>\n  return %m",
        "%m = stablehlo.maximum %a, %b : tensor<f32>\n"
        "  %n = stablehlo.reshape %m : (tensor<f32>) -> tensor<1xf32>\n"
        "  %o = stablehlo.reshape %n : (tensor<1xf32>) -> tensor<f32>\n  return %o")
    assert text != CALLING_BODIES
    from hlolab.errors import UnsupportedError

    with pytest.raises(UnsupportedError, match="stablehlo.reshape inside a per-element region") as e:
        Interpreter(parse_module(text)).run(None, [np.zeros((2, 3), np.float32), np.array(0, np.float32)])
    assert e.value.loc is not None and e.value.loc.source_line.strip().startswith("%n = stablehlo.reshape")


def test_a_recursive_call_in_a_per_element_region_stops_at_the_depth_limit():
    text = CALLING_BODIES.replace("%m = stablehlo.maximum %a, %b : tensor<f32>\n  return %m",
                                  "%m = func.call @bigger(%a, %b)"
                                  " : (tensor<f32>, tensor<f32>) -> tensor<f32>\n"
                                  "  return %m")
    with pytest.raises(ExecutionError, match="call depth exceeds"):
        Interpreter(parse_module(text)).run(None, [np.zeros((2, 3), np.float32), np.array(0, np.float32)])


def test_token_ops_have_one_token_result():
    # found by fuzzing: an after_all declared with four results crashed with a TypeError
    text = """
    func.func @main() -> !stablehlo.token {
      %t = stablehlo.create_token : !stablehlo.token
      %r:2 = "stablehlo.after_all"(%t) : (!stablehlo.token) -> (tensor<2xi64>, !stablehlo.token)
      func.return %r#1 : !stablehlo.token
    }"""
    with pytest.raises(HloLabError, match=r"after_all: the result must be one token, got tensor<2xi64>, "
                                          r"!stablehlo.token") as e:
        Interpreter(parse_module(text)).run()
    assert e.value.loc is not None and e.value.loc.line == 4
    ok = parse_module(text.replace("%r:2 = \"stablehlo.after_all\"(%t) : (!stablehlo.token) -> "
                                   "(tensor<2xi64>, !stablehlo.token)",
                                   "%r:1 = \"stablehlo.after_all\"(%t, %t) : (!stablehlo.token, "
                                   "!stablehlo.token) -> (!stablehlo.token)").replace("%r#1", "%r#0"))
    assert len(Interpreter(ok).run()) == 1


def test_evaluator_value_count_is_checked():
    from hlolab.interp.single import normalize_outputs

    assert normalize_outputs(None, 0) == [] and normalize_outputs(5, 1) == [5]
    with pytest.raises(ExecutionError, match="produced 1 values for its 2 results"):
        normalize_outputs(object(), 2)
    with pytest.raises(ExecutionError, match="produced 3 values for its 2 results"):
        normalize_outputs([1, 2, 3], 2)


def test_control_records_and_result_types():
    from hlolab.ir.attrs import DictAttr, IntegerAttr, StringAttr, SymbolRefAttr, UnitAttr
    from hlolab.ops.control import (
        CallAttrs,
        CompositeAttrs,
        infer_branches,
        infer_call,
        infer_token,
        infer_while,
    )
    from hlolab.ops.record import type_admits
    from hlolab.types import TokenType, element_type, tensor_type

    def err(constraint, message):
        return ValueError(message)

    call = CallAttrs.from_ir({"callee": SymbolRefAttr(("twice",)), "no_inline": UnitAttr()}, err)
    assert (call.callee, call.no_inline, call.arg_attrs) == ("twice", True, None)
    assert call.to_ir() == {"callee": SymbolRefAttr(("twice",)), "no_inline": UnitAttr()}
    with pytest.raises(ValueError, match="missing attribute 'callee'"):
        CallAttrs.from_ir({}, err)
    attrs = {"name": StringAttr("my.add"), "decomposition": SymbolRefAttr(("add_impl",)),
             "version": IntegerAttr(2, element_type("i32"))}
    comp = CompositeAttrs.from_ir(attrs, err)
    assert (comp.name, comp.decomposition, comp.version, comp.composite_attributes) == (
        "my.add", "add_impl", 2, DictAttr(()))
    assert comp.to_ir() == attrs  # composite_attributes at its default stays unwritten

    i, t = tensor_type((), "i64"), tensor_type((2, 3), "f32")
    assert infer_while(None, [i, t, TokenType()]) == [i, t, TokenType()]
    (token,) = infer_token(None, [TokenType(), TokenType()])
    assert type_admits(token, TokenType()) and not type_admits(token, i)
    # the branches' / the callee's results: as many as declared, of any type
    for out in (infer_branches(None, [tensor_type((), "i1")]), infer_call(call, [i])):
        assert out.expand(0) == [] and all(type_admits(e, t) for e in out.expand(2))


def test_if_and_case_branches_must_return_the_result_types():
    from hlolab.errors import VerificationError

    text = """
    func.func @main(%p: tensor<i1>, %k: tensor<i32>) -> tensor<i32> {
      %c = stablehlo.constant dense<5> : tensor<i32>
      %d = stablehlo.constant dense<5> : tensor<i64>
      %r = "stablehlo.if"(%p) ({
        stablehlo.return %c : tensor<i32>
      }, {
        stablehlo.return %c : tensor<i32>
      }) : (tensor<i1>) -> tensor<i32>
      %s = "stablehlo.case"(%k) ({
        stablehlo.return %c : tensor<i32>
      }, {
        stablehlo.return %r : tensor<i32>
      }) : (tensor<i32>) -> tensor<i32>
      return %s : tensor<i32>
    }"""
    args = [np.array(True), np.array(1, np.int32)]
    assert int(Interpreter(parse_module(text)).run(None, args)[0]) == 5

    def error(bad: str) -> VerificationError:
        with pytest.raises(VerificationError) as e:
            Interpreter(parse_module(bad)).run(None, args)
        return e.value

    e = error(text.replace("stablehlo.return %c : tensor<i32>\n      }) : (tensor<i1>)",
                           "stablehlo.return %d : tensor<i64>\n      }) : (tensor<i1>)"))
    assert (e.op, e.constraint) == ("stablehlo.if", "C2")
    assert "output_types(false_branch) = (tensor<i64>) must equal output_types(true_branch) = " \
           "(tensor<i32>)" in str(e)
    e = error(text.replace("}) : (tensor<i1>) -> tensor<i32>", "}) : (tensor<i1>) -> tensor<2xi32>")
              .replace("%r : tensor<i32>", "%c : tensor<i32>"))
    assert (e.op, e.constraint) == ("stablehlo.if", "C3")
    e = error(text.replace("stablehlo.return %r : tensor<i32>", "stablehlo.return %d : tensor<i64>"))
    assert (e.op, e.constraint) == ("stablehlo.case", "C3")
    e = error(text.replace("}) : (tensor<i32>) -> tensor<i32>\n      return %s : tensor<i32>",
                           "}) : (tensor<i32>) -> tensor<i64>\n      return %c : tensor<i32>"))
    assert (e.op, e.constraint) == ("stablehlo.case", "C4")
