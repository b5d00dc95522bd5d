"""The printer: pretty forms as MLIR prints them, generic fallback when an op's
attributes do not fit its pretty form, functions, modules and locations."""

from __future__ import annotations

import numpy as np
import pytest

from hlolab.ir.attrs import DenseArrayAttr, DenseElementsAttr, EnumAttr, IntegerAttr, StringAttr
from hlolab.ir.module import Op, Value
from hlolab.ir.parser import parse_module
from hlolab.ir.printer import print_module, print_op
from hlolab.types import TensorType, element_type
from tests.ir.test_parser import ARGS, PAIRS, first_op

F32 = element_type("f32")


def roundtrips(text: str) -> str:
    """Print the module pretty; check both forms parse back equal and print stably."""
    m = parse_module(text)
    out = print_module(m)
    for generic in (False, True):
        printed = print_module(m, generic=generic)
        again = parse_module(printed)
        assert again == m
        assert print_module(again, generic=generic) == printed
    return out


# the pretty text MLIR (and JAX) print for these ops
CANONICAL = {
    "add": "%r = stablehlo.add %x, %y : tensor<2x3xf32>",
    "add_functional": "%r = stablehlo.add %x, %y : tensor<2x3xf32>",
    "compare": "%r = stablehlo.compare GT, %x, %y, FLOAT : (tensor<2x3xf32>, tensor<2x3xf32>) -> "
               "tensor<2x3xi1>",
    "compare_no_type": "%r = stablehlo.compare LT, %x, %y : (tensor<2x3xf32>, tensor<2x3xf32>) -> "
                       "tensor<2x3xi1>",
    "iota": "%r = stablehlo.iota dim = 1 : tensor<2x3xf32>",
    "slice": "%r = stablehlo.slice %x [0:2, 1:3:2] : (tensor<2x3xf32>) -> tensor<2x1xf32>",
    "dynamic_slice": "%r = stablehlo.dynamic_slice %x, %i, %j, sizes = [1, 2] : (tensor<2x3xf32>, "
                     "tensor<i64>, "
                     "tensor<i64>) -> tensor<1x2xf32>",
    "get_tuple_element": "%r = stablehlo.get_tuple_element %tu[1] : (tuple<tensor<f32>, tensor<i64>>) -> "
                         "tensor<i64>",
    "select": "%r = stablehlo.select %p, %x, %y : tensor<2x3xi1>, tensor<2x3xf32>",
    # MLIR's select type syntax needs only on_true == on_false == result, whatever the predicate's shape
    "select_scalar_pred": "%r = stablehlo.select %b, %x, %y : tensor<i1>, tensor<2x3xf32>",
    "dot_general": "%r = stablehlo.dot_general %x, %y, contracting_dims = [1] x [1], precision = [DEFAULT, "
                   "HIGHEST] : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x2xf32>",
    "convolution": "%r = stablehlo.convolution(%v, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, "
                   "1, f], "
                   "window = {stride = [4, 4], pad = [[0, 0], [1, 1]], lhs_dilate = [2, 2], rhs_dilate = "
                   "[1, 1], "
                   "reverse = [false, true]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : "
                   "(tensor<1x4x4x1xf32>, tensor<3x3x1x1xf32>) -> tensor<1x2x2x1xf32>",
    "reduce_compact": "%r = stablehlo.reduce(%x init: %s) applies stablehlo.add across dimensions = [1] : "
                      "(tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>",
    "fft": "%r = stablehlo.fft %c, type = FFT, length = [3] : (tensor<2x3xcomplex<f32>>) -> "
           "tensor<2x3xcomplex<f32>>",
    "reduce_precision": "%r = stablehlo.reduce_precision %x, format = e5m10 : tensor<2x3xf32>",
    "custom_call": '%r = stablehlo.custom_call @foo(%x) {backend_config = "cfg", has_side_effect = true} : '
                   "(tensor<2x3xf32>) -> tensor<2x3xf32>",
    "custom_call_defaults": "%r = stablehlo.custom_call @foo() : () -> tensor<2x3xf32>",
    "composite": '%r = stablehlo.composite "foo.bar" %x {composite_attributes = {n = 2 : i64}, decomposition '
                 '= @g} '
                 ": (tensor<2x3xf32>) -> tensor<2x3xf32>",
    "after_all_empty": "%r = stablehlo.after_all : !stablehlo.token",
    "optimization_barrier": "%r:2 = stablehlo.optimization_barrier %x, %s : tensor<2x3xf32>, tensor<f32>",
    "cholesky_default": "%r = stablehlo.cholesky %x : tensor<2x3xf32>",
    "complex": "%r = stablehlo.complex %x, %y : tensor<2x3xcomplex<f32>>",
    "expect_eq_const": "check.expect_eq_const %x, dense<1.000000e+00> : tensor<2x3xf32>",
    "expect_close": "check.expect_close %x, %y, max_ulp_difference = 3, min_ulp_difference = 1 : "
                    "tensor<2x3xf32>, tensor<2x3xf32>",
    "expect_serialized_eq": 'check.expect_serialized_eq %x, probe_id = "p/0", iter = 2 : tensor<2x3xf32>',
    "chlo_top_k": "%v2, %ix = chlo.top_k(%k, k = 2) : tensor<4xi32> -> (tensor<2xi32>, tensor<2xi32>)",
    "chlo_erf": "%r = chlo.erf %x : tensor<2x3xf32> -> tensor<2x3xf32>",
    "call": "%r = func.call @g(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>",
}


@pytest.mark.parametrize("name", sorted(CANONICAL))
def test_pretty_printing_from_either_spelling(name):
    for text in PAIRS[name]:
        assert print_op(first_op(text)) == CANONICAL[name]


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_every_pair_round_trips_in_both_forms(name):
    for text in PAIRS[name]:
        roundtrips(f"func.func @f({ARGS}) {{\n  {text}\n  func.return\n}}")


def test_float_attributes_print_as_written():
    pretty, generic = PAIRS["expect_almost_eq_const"]
    assert print_op(first_op(pretty)) == ("check.expect_almost_eq_const %x, dense<2.000000e+00> : "
                                          "tensor<2x3xf32>, "
                                          "tolerance = 0.1")
    assert print_op(first_op(generic)).endswith("tolerance = 1.000000e-01")


def test_generic_printing_of_one_op():
    op = first_op(PAIRS["compare"][0])
    assert print_op(op, generic=True) == (
        '%r = "stablehlo.compare"(%x, %y) <{comparison_direction = #stablehlo<comparison_direction GT>, '
        "compare_type = #stablehlo<comparison_type FLOAT>}> : (tensor<2x3xf32>, tensor<2x3xf32>) -> "
        "tensor<2x3xi1>")


@pytest.mark.parametrize("generic", [
    # broadcast_dimensions spelled as a dense tensor: the pretty `dims = [..]` would change its class
    '%r = "stablehlo.broadcast_in_dim"(%s) {broadcast_dimensions = dense<> : tensor<0xi64>} : '
    "(tensor<f32>) -> tensor<2x3xf32>",
    # an enum of another dialect where the pretty form expects #stablehlo
    '%r = "stablehlo.compare"(%x, %y) {comparison_direction = #chlo<comparison_direction GT>} : '
    "(tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>",
    # a constant whose value type differs from its result type
    '%r = "stablehlo.constant"() {value = dense<1> : tensor<2xi8>} : () -> tensor<2xui8>',
    # an add with three operands cannot be written `stablehlo.add %a, %b`
    '%r = "stablehlo.add"(%x, %y, %x) : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> '
    'tensor<2x3xf32>',
    # a while whose regions name their arguments differently
    '%r = "stablehlo.while"(%i) ({\n  ^bb0(%a: tensor<i64>):\n    "stablehlo.return"(%b) : (tensor<i1>) '
    '-> ()\n'
    '  }, {\n  ^bb0(%c2: tensor<i64>):\n    "stablehlo.return"(%c2) : (tensor<i64>) -> ()\n'
    "  }) : (tensor<i64>) -> tensor<i64>",
    # iota without its dimension
    '%r = "stablehlo.iota"() : () -> tensor<4xi32>',
])
def test_ops_that_do_not_fit_their_pretty_form_print_generic(generic):
    op = first_op(generic)
    assert print_op(op).startswith('%r = "stablehlo.')
    roundtrips(f"func.func @f({ARGS}) {{\n  {generic}\n  func.return\n}}")


def test_reduce_prints_compact_only_when_the_body_is_what_compact_parsing_builds():
    named = ('%r = "stablehlo.reduce"(%x, %s) <{dimensions = array<i64: 1>}> ({\n'
             '  ^bb0(%a: tensor<f32>, %b2: tensor<f32>):\n'
             '    %0 = "stablehlo.add"(%a, %b2) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n'
             '    "stablehlo.return"(%0) : (tensor<f32>) -> ()\n'
             "  }) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>")
    text = print_op(first_op(named))
    assert text == ("%r = stablehlo.reduce(%x init: %s) across dimensions = [1] : (tensor<2x3xf32>, "
                    "tensor<f32>) "
                    "-> tensor<2xf32>\n reducer(%a: tensor<f32>, %b2: tensor<f32>)  {\n"
                    "  %0 = stablehlo.add %a, %b2 : tensor<f32>\n  stablehlo.return %0 : tensor<f32>\n}")
    roundtrips(f"func.func @f({ARGS}) {{\n  {named}\n  func.return\n}}")
    compact = print_op(first_op(PAIRS["reduce_compact"][1]))
    assert " applies stablehlo.add " in compact


def test_while_prints_its_regions_after_cond_and_do():
    text = print_op(first_op(PAIRS["while"][1]))
    assert text == (
        "%r:2 = stablehlo.while(%it = %i, %acc = %s) : tensor<i64>, tensor<f32>\n"
        "cond {\n  %cnd = stablehlo.compare LT, %it, %j : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
        "  stablehlo.return %cnd : tensor<i1>\n} do {\n  stablehlo.return %it, %acc : tensor<i64>, "
        "tensor<f32>\n}")


def test_functions_modules_and_locations_print_like_mlir():
    text = (
        'module @jit_f attributes {mhlo.num_partitions = 1 : i32} {\n'
        '  func.func public @main(%arg0: tensor<2xf32> {jax.arg_info = "x"} loc("x")) -> (tensor<2xf32> '
        '{jax.result_info = "result"}, tensor<i64>) {\n'
        "    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32> loc(#loc1)\n"
        "    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2xf32>\n"
        "    %1 = call @helper(%arg0) : (tensor<2xf32>) -> tensor<i64>\n"
        "    %2:2 = stablehlo.while(%iterArg = %0, %iterArg_0 = %1) : tensor<2xf32>, tensor<i64>\n"
        "    cond {\n"
        "      %c = stablehlo.constant dense<true> : tensor<i1>\n"
        "      stablehlo.return %c : tensor<i1>\n"
        "    } do {\n"
        "      %3 = func.call @helper(%iterArg) : (tensor<2xf32>) -> tensor<i64>\n"
        "      stablehlo.return %iterArg, %3 : tensor<2xf32>, tensor<i64>\n"
        "    } loc(#loc1)\n"
        "    return %2#0, %2#1 : tensor<2xf32>, tensor<i64>\n"
        "  } loc(#loc1)\n"
        "  func.func private @helper(%arg0: tensor<2xf32>) -> tensor<i64> {\n"
        "    %c = stablehlo.constant dense<7> : tensor<i64>\n"
        "    return %c : tensor<i64>\n"
        "  }\n"
        "} loc(#loc)\n"
        "#loc = loc(unknown)\n"
        '#loc1 = loc("f.py":3:4)\n')
    assert roundtrips(text) == text


def test_implicit_module_prints_bare_functions_and_declarations():
    text = ("func.func private @decl(%arg0: tensor<f32>) -> (tensor<f32>, tensor<i1>)\n"
            "func.func @f() attributes {foo} {\n  return\n}\n")
    assert roundtrips(text) == text


def test_ops_built_in_code_print_pretty():
    a, b = Value("%arg0", TensorType((2,), F32)), Value("%arg1", TensorType((2,), F32))
    add = Op("stablehlo.add", operands=[a, b])
    add.results = [Value("%0", TensorType((2,), F32), add, 0)]
    assert print_op(add) == "%0 = stablehlo.add %arg0, %arg1 : tensor<2xf32>"
    bcast = Op("stablehlo.broadcast_in_dim", operands=[a],
               attributes={"broadcast_dimensions": DenseArrayAttr("i64", (1,))})
    t32 = TensorType((3, 2), F32)
    bcast.results = [Value("%b#0", t32, bcast, 0), Value("%b#1", t32, bcast, 1)]
    # the result group is recovered from the value names
    assert print_op(bcast) == ("%b:2 = stablehlo.broadcast_in_dim %arg0, dims = [1] : (tensor<2xf32>) -> "
                               "(tensor<3x2xf32>, tensor<3x2xf32>)")
    cmp = Op("stablehlo.compare", operands=[a, b], attributes={
        "comparison_direction": EnumAttr("stablehlo", "comparison_direction", "EQ")})
    cmp.results = [Value("%c", TensorType((2,), element_type("i1")), cmp, 0)]
    assert print_op(cmp) == ("%c = stablehlo.compare EQ, %arg0, %arg1 : (tensor<2xf32>, tensor<2xf32>) -> "
                             "tensor<2xi1>")


def test_attribute_values_print_back_exactly():
    op = Op("x.y", attributes={
        "d": DenseElementsAttr(TensorType((2,), element_type("i32")), np.array([1, -2], np.int32)),
        "i": IntegerAttr(-3, element_type("i64")), "s": StringAttr('q"\n')})
    assert print_op(op) == ('"x.y"() {d = dense<[1, -2]> : tensor<2xi32>, i = -3 : i64, s = "q\\"\\n"} : () '
                            '-> ()')
