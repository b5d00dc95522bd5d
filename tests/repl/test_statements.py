"""What statements do: bare scalars as constants of the operands' type, records written
flat, computations by name, several results, MLIR ops with regions over several lines,
and incremental evaluation (one new op evaluated per statement)."""

from __future__ import annotations

import numpy as np

from hlolab.repl.calls import record_keywords

REDUCE_WINDOW = '''%m = "stablehlo.reduce_window"(%c, %init) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %r = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %r : tensor<f32>
  }) {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>}
     : (tensor<4x4xf32>, tensor<f32>) -> tensor<2x2xf32>'''


def test_bare_scalar_takes_the_operand_element_type(drive):
    out, repl = drive(["i = Iota(s32[2, 3], 1)",
                       "z = Pad(i, 0, low=[1, 0], high=[0, 2], interior=[1, 0])"])
    assert "%z : tensor<4x5xi32>\n  [[0 0 0 0 0]\n   [0 1 2 0 0]\n   [0 0 0 0 0]\n   [0 1 2 0 0]]" in out
    out, _ = drive(["f = Max(Iota(bf16[3], 0), 1)"], repl=repl)
    assert "%f : tensor<3xbf16>\n  [1 1 2]" in out


def test_ambiguous_scalar_is_an_error_with_its_column(drive):
    out, repl = drive(["a = Iota(s32[2], 0)", "b = Iota(f32[2], 0)",
                       "c = Select(Lt(a, 1), b, [7, 8])",  # the predicate's i1 does not count
                       "d = Add(1, 2)", "e = Clamp(0, a, b)"])
    assert "%c : tensor<2xf32>\n  [0. 8.]" in out
    assert "<repl>:1:9: error: Add: the element type of the constant for 'lhs' is ambiguous " \
        "(no other operand has one)" in out
    assert "<repl>:1:11: error: Clamp: the element type of the constant for 'min' is ambiguous " \
        "(the operands have f32, i32)" in out
    assert [n for n in repl.program.b.names() if not n.isdigit()] == ["a", "b", "c"]


def test_records_written_flat_come_from_one_table(drive):
    table = record_keywords()
    assert set(table["ConvolutionDimensionNumbers"].keywords) >= {"input_batch_dimension",
                                                                  "kernel_spatial_dimensions"}
    assert table["PaddingConfig"].keywords == ("low", "high", "interior")
    assert "offset_dims" in table["GatherDimensionNumbers"].keywords
    out, _ = drive([
        "x = Iota(f32[1, 1, 4, 4], 2)", "k = [[[[1, 1], [1, 1]]]]:f32",
        "c = ConvGeneralDilated(x, k, [1, 1], [[0, 0], [0, 0]], input_batch_dimension=0,\n"
        "  input_feature_dimension=1, input_spatial_dimensions=[2, 3], kernel_output_feature_dimension=0,\n"
        "  kernel_input_feature_dimension=1, kernel_spatial_dimensions=[2, 3], output_batch_dimension=0,\n"
        "  output_feature_dimension=1, output_spatial_dimensions=[2, 3])"])
    # each output sums a 2x2 window of rows r, r+1: 2 * (r + r + 1)
    assert "%c : tensor<1x1x3x3xf32>\n  [[[[ 2.  2.  2.]\n     [ 6.  6.  6.]\n     [10. 10. 10.]]]]" in out


def test_computation_by_name_and_several_results(drive):
    out, repl = drive(["x = [[1, 5], [7, 3]]:f32", "s = Reduce(x, 0:f32, Add, dimensions_to_reduce=[0])",
                       "v, i = TopK(Iota(f32[5], 0), 2)"])
    assert "%s : tensor<2xf32>\n  [8. 8.]" in out
    assert "%v : tensor<2xf32>\n  [4. 3.]\n%i : tensor<2xi32>\n  [4 3]" in out


def test_mlir_op_with_a_region_over_several_lines(drive):
    out, repl = drive(["%c = stablehlo.iota dim = 1 : tensor<4x4xf32>",
                       "%init = stablehlo.constant dense<0xFF800000> : tensor<f32>", REDUCE_WINDOW])
    assert "%m : tensor<2x2xf32>\n  [[1. 3.]\n   [1. 3.]]" in out
    assert repl.program.entries[-1].text == REDUCE_WINDOW


def test_each_statement_evaluates_only_its_new_op(drive, monkeypatch):
    import hlolab.interp.single as single

    out, repl = drive(["a = Iota(f32[3], 0)", "b = Exp(a)", "c = Add(a, b)"])
    calls: list[str] = []
    real = single.evaluate_op

    def counting(op, inputs, call=None):
        calls.append(op.name)
        return real(op, inputs, call)

    monkeypatch.setattr(single, "evaluate_op", counting)
    out, repl = drive(["d = Mul(c, b)"], repl=repl)
    assert calls == ["stablehlo.multiply"]
    a = np.arange(3, dtype=np.float32)
    assert np.array_equal(repl.program.value("d")[1], (a + np.exp(a)) * np.exp(a))


def test_mlir_statements_without_result_names_and_with_result_groups(drive):
    out, repl = drive([
        "x = Iota(f32[3], 0)",
        "stablehlo.add %x, %x : tensor<3xf32>",  # no name: the value gets a fresh number
        "stablehlo.add %x, %nope : tensor<3xf32>",
        '%p:2 = "stablehlo.optimization_barrier"(%x, %0) : (tensor<3xf32>, tensor<3xf32>)'
        " -> (tensor<3xf32>, tensor<3xf32>)",
        "s = Sub(%p#1, x)",
    ])
    assert "%0 : tensor<3xf32>\n  [0. 2. 4.]" in out
    # the error points into what was typed, not at a name the REPL added
    assert "<repl>:1:19: error: use of undefined value %nope\nstablehlo.add %x, %nope : tensor<3xf32>\n" \
        + " " * 18 + "^" in out
    assert "%p#0 : tensor<3xf32>\n  [0. 1. 2.]\n%p#1 : tensor<3xf32>\n  [0. 2. 4.]" in out
    assert "%s : tensor<3xf32>\n  [0. 1. 2.]" in out


def test_variadic_and_list_arguments(drive):
    out, _ = drive(["x = Iota(s32[2, 3], 1)", "z = Reshape(x, [1, 0], [3, 2])", "c = Concatenate([x, x], 0)"])
    # the dimensions-order form: transpose by [1, 0], then reshape
    assert "%z : tensor<3x2xi32>\n  [[0 0]\n   [1 1]\n   [2 2]]" in out
    assert "%c : tensor<4x3xi32>\n  [[0 1 2]\n   [0 1 2]\n   [0 1 2]\n   [0 1 2]]" in out
