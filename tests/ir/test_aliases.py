"""MLIR type and attribute aliases at the top of a module (``!qx = !quant.uniform<…>``,
``#cmp = #stablehlo<comparison_direction LT>``): a use stands for its definition, the
printer writes the definition out, and an unknown alias is an error at its use."""

from __future__ import annotations

import numpy as np
import pytest

from hlolab.errors import ParseError
from hlolab.ir.parser import parse_module
from hlolab.ir.printer import print_module
from hlolab.session import Session

QUANT_ALIASED = """\
!qx = !quant.uniform<i8:f32, 0.5:-1>
!in = tensor<4xf32>
func.func @main(%a: !in) -> (tensor<4x!qx>, tensor<4xf32>) {
  %q = stablehlo.uniform_quantize %a : (!in) -> tensor<4x!qx>
  %d = stablehlo.uniform_dequantize %q : (tensor<4x!qx>) -> tensor<4xf32>
  return %q, %d : tensor<4x!qx>, tensor<4xf32>
}
"""
QUANT_EXPANDED = """\
func.func @main(%a: tensor<4xf32>) -> (tensor<4x!quant.uniform<i8:f32, 0.5:-1>>, tensor<4xf32>) {
  %q = stablehlo.uniform_quantize %a : (tensor<4xf32>) -> tensor<4x!quant.uniform<i8:f32, 0.5:-1>>
  %d = stablehlo.uniform_dequantize %q : (tensor<4x!quant.uniform<i8:f32, 0.5:-1>>) -> tensor<4xf32>
  return %q, %d : tensor<4x!quant.uniform<i8:f32, 0.5:-1>>, tensor<4xf32>
}
"""

ATTR_ALIASED = """\
#lt = #stablehlo<comparison_direction LT>
#rows = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0],
  index_vector_dim = 1>
#loc1 = loc("x.py":3:0)
func.func @main() -> (tensor<2xi1>, tensor<2x2xi32>) {
  %a = stablehlo.constant dense<[1, 5]> : tensor<2xi32>
  %b = stablehlo.constant dense<[3, 2]> : tensor<2xi32>
  %c = "stablehlo.compare"(%a, %b) {comparison_direction = #lt}
    : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
  %o = stablehlo.constant dense<[[1, 2, 3], [4, 5, 6], [7, 8, 9]]> : tensor<3x3xi32>
  %i = stablehlo.constant dense<[[0], [2]]> : tensor<2x1xi32>
  %g = "stablehlo.gather"(%o, %i) {dimension_numbers = #rows, slice_sizes = array<i64: 1, 2>}
    : (tensor<3x3xi32>, tensor<2x1xi32>) -> tensor<2x2xi32> loc(#loc1)
  return %c, %g : tensor<2xi1>, tensor<2x2xi32>
}
"""


def _run(text: str, args: list | None = None) -> list:
    s = Session(parse_module(text, "a.mlir"))
    s.bind(args)
    stop = s.run()
    assert stop.error is None
    return list(s.results)


def test_type_alias_is_its_definition() -> None:
    aliased = parse_module(QUANT_ALIASED, "a.mlir")
    expanded = parse_module(QUANT_EXPANDED, "b.mlir")
    # the printer writes the definitions out: both print the same text
    assert print_module(aliased) == print_module(expanded)
    assert "!qx" not in print_module(aliased) and "!in" not in print_module(aliased)
    x = [np.array([1.0, -0.5, 3.2, 100.0], np.float32)]
    q, d = _run(QUANT_ALIASED, x)
    q2, d2 = _run(QUANT_EXPANDED, x)
    # round(x / 0.5) - 1, clamped to i8: 1.0 -> 1, -0.5 -> -2, 3.2 -> 5 (6.4 rounds to 6), 100 -> 127
    assert np.asarray(q).astype(np.int64).tolist() == [1, -2, 5, 127]
    assert np.asarray(d).tolist() == [1.0, -0.5, 3.0, 64.0]
    assert np.array_equal(np.asarray(q), np.asarray(q2)) and np.array_equal(d, d2)


def test_round_trip_through_the_printer() -> None:
    for text in (QUANT_ALIASED, ATTR_ALIASED):
        once = print_module(parse_module(text, "a.mlir"))
        assert print_module(parse_module(once, "b.mlir")) == once


def test_attribute_alias_is_its_definition() -> None:
    c, g = _run(ATTR_ALIASED)
    assert np.asarray(c).tolist() == [True, False]
    assert np.asarray(g).tolist() == [[1, 2], [7, 8]]
    printed = print_module(parse_module(ATTR_ALIASED, "a.mlir"))
    assert "#lt" not in printed and "#rows" not in printed
    assert "offset_dims = [1]" in printed


@pytest.mark.parametrize("text, where, message", [
    ("func.func @main(%a: !nope) -> () {\n  return\n}\n", "a.mlir:1:21",
     "undefined type alias !nope (type aliases: none defined)"),
    ("!q = !quant.uniform<i8:f32, 0.5>\nfunc.func @main(%a: tensor<2x!r>) -> () {\n  return\n}\n",
     "a.mlir:2:30",
     "undefined type alias !r (type aliases: !q)"),
    ("#x = #stablehlo<comparison_direction LT>\nfunc.func @main() -> tensor<i1> {\n"
     "  %a = stablehlo.constant dense<1> : tensor<i32>\n"
     "  %c = \"stablehlo.compare\"(%a, %a) {comparison_direction = #y}\n"
     "    : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
     "  return %c : tensor<i1>\n}\n", "a.mlir:4:60", "undefined attribute alias #y (attribute aliases: #x)"),
    ("!t = tensor<2xf32>\nfunc.func @main(%a: tensor<2x!t>) -> () {\n  return\n}\n", "a.mlir:2:30",
     "type alias !t = tensor<2xf32> is not a tensor element type"),
    ("!t = f32\n!t = f32\n", "a.mlir:2:1", "redefinition of type alias !t"),
    ("#a = 1 : i32\n#a = loc(unknown)\n", "a.mlir:2:1", "redefinition of alias #a"),
])
def test_alias_errors_name_file_line_col(text: str, where: str, message: str) -> None:
    with pytest.raises(ParseError) as e:
        parse_module(text, "a.mlir")
    assert e.value.short() == f"{where}: {message}"


def test_alias_error_lines_count_from_the_chunk_line() -> None:
    with pytest.raises(ParseError) as e:
        parse_module("func.func @main(%a: !nope) -> () {\n  return\n}\n", "lesson.md", 40)
    assert str(e.value.loc) == "lesson.md:40:21"
