"""The builder language's parser: literals, shapes, nesting, and errors with columns."""

from __future__ import annotations

import pytest

from hlolab.errors import ParseError
from hlolab.repl.language import (
    Bool,
    Call,
    ListLit,
    Number,
    Ref,
    ShapeLit,
    String,
    is_complete,
    literal_value,
    parse_statement,
)


def test_assignment_call_with_shape_and_number():
    s = parse_statement("x = Iota(s32[4,8], 1)")
    assert s.targets == [("x", 1)]
    call = s.expr
    assert isinstance(call, Call) and call.func == "Iota" and call.col == 5
    shape, dim = call.args
    assert isinstance(shape, ShapeLit) and (shape.etype, shape.dims, shape.col) == ("s32", [4, 8], 10)
    assert shape.mlir_element == "i32"
    assert isinstance(dim, Number) and dim.value == 1 and dim.col == 20


def test_keywords_lists_and_nesting():
    s = parse_statement("y = Gather(x, Add(%idx, 1), offset_dims=[1], slice_sizes=[1, 8])")
    call = s.expr
    assert isinstance(call, Call)
    assert isinstance(call.args[0], Ref) and call.args[0].name == "x"
    inner = call.args[1]
    assert isinstance(inner, Call) and inner.func == "Add" and inner.col == 15
    assert isinstance(inner.args[0], Ref) and inner.args[0].name == "idx"  # %idx is the SSA spelling
    assert [k.name for k in call.kwargs] == ["offset_dims", "slice_sizes"]
    assert literal_value(call.kwargs[1].value) == [1, 8]
    assert call.kwargs[1].col == 46


def test_typed_literals_numbers_strings_bools():
    c = parse_statement("c = [[1, 2], [3, -4.5e1]]:f32").expr
    assert isinstance(c, ListLit) and c.etype == "f32"
    assert literal_value(ListLit(c.col, c.items)) == [[1, 2], [3, -45.0]]
    scalar = parse_statement("z = 0.5:bf16").expr
    assert isinstance(scalar, Number) and scalar.value == 0.5 and scalar.etype == "bf16"
    assert isinstance(parse_statement("F(True)").expr.args[0], Bool)  # type: ignore[attr-defined]
    s = parse_statement('F("a\\"b", -inf, 0x10, pred[], c64[2])').expr
    assert isinstance(s, Call)
    assert isinstance(s.args[0], String) and s.args[0].value == 'a"b'
    assert s.args[1].value == float("-inf")  # type: ignore[attr-defined]
    assert s.args[2].value == 16  # type: ignore[attr-defined]
    assert (s.args[3].etype, s.args[3].dims) == ("pred", [])  # type: ignore[attr-defined]
    assert s.args[4].mlir_element == "complex<f32>"  # type: ignore[attr-defined]


def test_several_targets():
    s = parse_statement("v, i = TopK(x, 2)")
    assert s.targets == [("v", 1), ("i", 4)]


@pytest.mark.parametrize("text, col, words", [
    ("x = Add(a,", 11, "expected an expression"),
    ("x = Add(a b)", 11, "expected ')'"),
    ("x = [1, 2]:q32", 12, "expected an element type"),
    ("x = y[1]", 6, "no indexing"),
    ("x = os.system(1)", 7, "unexpected character '.'"),
    ("x = F(a=1, 2)", 12, "positional argument after keyword"),
    ("x = F(a=1, a=2)", 12, "given twice"),
    ("x = - y", 5, "'-' applies to a number"),
    ("x = 1 2", 7, "after the expression"),
    ("x = s32[2, -1]", 12, "dimension size"),
])
def test_errors_name_the_column(text, col, words):
    with pytest.raises(ParseError) as e:
        parse_statement(text)
    assert e.value.loc is not None and e.value.loc.col == col
    assert e.value.loc.file == "<repl>" and e.value.loc.line == 1
    assert words in e.value.message
    shown = str(e.value)
    assert shown.startswith(f"<repl>:1:{col}: error: ")
    assert shown.endswith(text + "\n" + " " * (col - 1) + "^")


@pytest.mark.parametrize("text, col", [
    ('__import__("os")', 1), ("x = __import__('os').system('true')", 5), ("x = (lambda: 1)()", 5),
    ("x = F(*a)", 7), ("x = {1: 2}", 5), ("x = a.b", 6), ("import os", 8), ("x = 1 + 2", 7),
])
def test_python_is_not_the_builder_language(text, col):
    # dunder names, attribute access, lambdas, dicts, operators and starred arguments are
    # not in the grammar: a parse error, nothing evaluated
    with pytest.raises(ParseError) as e:
        parse_statement(text)
    assert e.value.loc is not None and e.value.loc.col == col


def test_is_complete_balances_brackets():
    assert is_complete("x = Add(a, b)")
    assert not is_complete("x = Gather(a,")
    assert not is_complete("x = [[1, 2],")
    assert is_complete('x = F("(")')
