"""``#stablehlo.bounds<...>`` tensor encodings: kept in the type (printed back as
written), checked when parsed (one bound per dim, only on ``?`` dims, not negative) and
at run time: a ``?`` size over its bound, in an argument, an operand or a result, is an
error naming the value, the dimension, its size and the bound."""

from __future__ import annotations

import numpy as np
import pytest

from hlolab.errors import ExecutionError, ParseError
from hlolab.interp.engine import Interpreter
from hlolab.ir.parser import parse_module
from hlolab.ir.printer import print_module
from hlolab.types import BoundsEncoding, TensorType

B = "tensor<?x4xf32, #stablehlo.bounds<3, ?>>"
ABS = (f"func.func @main(%x: {B}) -> {B} {{\n  %r = stablehlo.abs %x : {B}\n  return %r : {B}\n}}")
ECHO = f"func.func @main(%x: {B}) -> {B} {{\n  return %x : {B}\n}}"
R = "tensor<?x?xi64, #stablehlo.bounds<4, 8>>"
IOTA = (f"func.func @main(%s: tensor<2xi64>) -> {R} {{\n"
        f"  %r = stablehlo.dynamic_iota %s, dim = 0 : (tensor<2xi64>) -> {R}\n"
        f"  return %r : {R}\n}}")


def test_the_bounds_stay_in_the_type_and_print_back():
    m = parse_module(ABS)
    t = m.funcs[0].args[0].type
    assert isinstance(t, TensorType) and t.bounds == BoundsEncoding((3, None))
    assert str(t) == B
    text = print_module(m)
    assert text.count("#stablehlo.bounds<3, ?>") == 4
    assert print_module(parse_module(text)) == text
    # written without spaces, printed in MLIR's form
    assert str(parse_module(ABS.replace("<3, ?>", "<3,?>")).funcs[0].args[0].type) == B


@pytest.mark.parametrize("enc, message", [
    ("#stablehlo.bounds<3>", "has 1 bound(s) for a tensor of rank 2"),
    ("#stablehlo.bounds<3, 5>", "static dimension 1 (size 4) cannot have a bound"),
    ("#stablehlo.bounds<-1, ?>", "the bound of dimension 0 must be >= 0, got -1"),
    ("#stablehlo.bounds<x, ?>", "malformed bounds"),
])
def test_bounds_that_cannot_describe_the_tensor_are_parse_errors(enc, message):
    with pytest.raises(ParseError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_module(ABS.replace("#stablehlo.bounds<3, ?>", enc))


def run(text: str, *args: np.ndarray) -> list[np.ndarray]:
    return Interpreter(parse_module(text)).run(None, list(args))


def test_sizes_within_the_bound_run_and_refine_to_static_types():
    (r,) = run(ABS, -np.ones((3, 4), np.float32))
    assert r.shape == (3, 4) and (r == 1).all()
    (r,) = run(ECHO, np.ones((0, 4), np.float32))
    assert r.shape == (0, 4)


def test_an_argument_over_its_bound_is_an_error_naming_it():
    want = (r"argument #0 \(%x\) of @main has size 5 in dimension 0, over its bound 3 "
            r"\(tensor<\?x4xf32, #stablehlo.bounds<3, \?>>\)")
    for text in (ABS, ECHO):  # also when no op reads it
        with pytest.raises(ExecutionError, match=want):
            run(text, np.ones((5, 4), np.float32))


def test_a_result_over_its_bound_names_the_op_and_the_value():
    (r,) = run(IOTA, np.array([4, 2], np.int64))
    assert r.tolist() == [[0, 0], [1, 1], [2, 2], [3, 3]]
    with pytest.raises(ExecutionError, match=r"stablehlo.dynamic_iota: %r has size 5 in dimension 0 at run "
                                             r"time, over its bound 4"):
        run(IOTA, np.array([5, 2], np.int64))
    with pytest.raises(ExecutionError, match=r"%r has size 9 in dimension 1 at run time, over its bound 8"):
        run(IOTA, np.array([1, 9], np.int64))


def test_the_older_type_extensions_form_is_checked_too_and_prints_as_written():
    t = "tensor<?x4xf32, #stablehlo.type_extensions<bounds = [3, ?]>>"
    text = ABS.replace(B, t)
    m = parse_module(text)
    assert m.funcs[0].args[0].type.bounds == BoundsEncoding((3, None))
    assert str(m.funcs[0].args[0].type) == t
    with pytest.raises(ExecutionError, match=r"size 4 in dimension 0, over its bound 3"):
        run(text, np.ones((4, 4), np.float32))
    with pytest.raises(ParseError, match=r"static dimension 1 \(size 4\) cannot have a bound"):
        parse_module(ABS.replace(B, "tensor<?x4xf32, #stablehlo.type_extensions<bounds = [3, 4]>>"))
