"""The hlolab command line: run, print, explain, ops, examples."""

from __future__ import annotations

import numpy as np
import pytest

from hlolab.cli import main
from hlolab.errors import ExecutionError
from hlolab.session import Session
from tests.programs import ENDLESS_WHILE

PASSING = """
func.func @ok() {
  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %1 = stablehlo.add %0, %0 : tensor<2xi32>
  check.expect_eq_const %1, dense<[2, 4]> : tensor<2xi32>
  func.return
}
// -----
func.func @bad() {
  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  check.expect_eq_const %0, dense<[1, 3]> : tensor<2xi32>
  func.return
}
// -----
func.func @missing(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.frob"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
// -----
func.func @typo() {
  %0 = stablehlo.constant dense<[1, 2> : tensor<2xi32>
  func.return
}
"""


def test_run_reports_one_line_per_module(tmp_path, capsys):
    f = tmp_path / "prog.mlir"
    f.write_text(PASSING)
    rc = main(["run", "--split-input-file", "--seed", "0", str(f)])
    out = capsys.readouterr().out.splitlines()
    assert rc == 1
    assert out[0] == "prog.mlir#1: PASS"
    assert out[1].startswith("prog.mlir#2: FAIL: check.expect_eq_const at line 11: ")
    assert "expected 3, got 2" in out[1]
    # every located error or failure shows its source line and a caret
    assert out[2].strip().startswith("check.expect_eq_const %0") and out[3] == "      ^"
    assert out[4] == f"prog.mlir#3: ERROR: {f}:16:3: stablehlo.frob is not implemented yet"
    assert out[5].strip().startswith("%0 = \"stablehlo.frob\"") and out[6] == "      ^"
    assert out[7] == (f"prog.mlir#4: ERROR: {f}:21:38: "
                      "expected ',' or ']' in a list, got the end of the literal")
    assert out[9].strip() == "^" and out[8].strip().startswith("%0 = stablehlo.constant")



PADDED_MAX = """func.func @main(%x: tensor<4x4xf32>) -> tensor<1x1xf32> {
  %c = stablehlo.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %r = "stablehlo.reduce_window"(%x, %init) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) {window_dimensions = array<i64: 10, 10>, window_strides = array<i64: 10, 10>,
      padding = dense<[[3, 3], [3, 3]]> : tensor<2x2xi64>} : (tensor<4x4xf32>, tensor<f32>) -> tensor<1x1xf32>
  func.return %r : tensor<1x1xf32>
}
"""


def test_run_budgets_are_options(tmp_path, capsys):
    endless, padded = tmp_path / "endless.mlir", tmp_path / "padded.mlir"
    endless.write_text(ENDLESS_WHILE)
    padded.write_text(PADDED_MAX)
    assert main(["run", "--max-steps", "500", str(endless)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("endless.mlir#1: ERROR: ") and "step budget of 500 executed ops" in out[0]
    assert out[2].strip() == "^"
    # the 10x10 padded frame is refused before it is allocated; the 2x2 literal is not
    assert main(["run", "--seed", "0", "--max-elements", "99", str(padded)]) == 1
    out = capsys.readouterr().out
    assert "the padded input [10, 10] has 100 elements, over the budget of 99" in out
    assert main(["run", "--seed", "0", "--max-elements", "3", str(padded)]) == 1
    assert "dense literal of type tensor<2x2xf32> has 4 elements, over the budget of 3" in \
        capsys.readouterr().out
    assert main(["run", "--seed", "0", "--max-elements", "100", str(padded)]) == 0
    assert "result #0: dense<" in capsys.readouterr().out


def test_run_budget_option_errors(capsys):
    import pytest

    for bad in ("0", "-3", "many"):
        with pytest.raises(SystemExit) as e:
            main(["run", "--max-steps", bad, "x.mlir"])
        assert e.value.code == 2
    err = capsys.readouterr().err
    assert "must be at least 1: 0" in err and "not a whole number: 'many'" in err


def test_run_prints_results_that_parse_back(tmp_path, capsys):
    f = tmp_path / "f.mlir"
    f.write_text("""func.func @main(%a: tensor<2xi32>, %b: tensor<2xi32>) -> tensor<2xi32> {
      %0 = stablehlo.add %a, %b : tensor<2xi32>
      func.return %0 : tensor<2xi32>
    }""")
    rc = main(["run", str(f), "--args", "[dense<1> : tensor<2xi32>, dense<[2, 5]> : tensor<2xi32>]",
               "--output", str(tmp_path / "out")])
    out = capsys.readouterr().out.splitlines()
    assert rc == 0
    assert out == ["f.mlir#1: OK", "  result #0: dense<[3, 6]> : tensor<2xi32>"]
    assert np.load(tmp_path / "out" / "f_1_result0.npy").tolist() == [3, 6]


def test_run_inputs_from_npy(tmp_path, capsys):
    f = tmp_path / "f.mlir"
    f.write_text("""func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {
      %0 = stablehlo.negate %a : tensor<3xf32>
      func.return %0 : tensor<3xf32>
    }""")
    np.save(tmp_path / "a.npy", np.array([1.5, -2.0, 0.0], np.float32))
    assert main(["run", str(f), "--input", str(tmp_path / "a.npy")]) == 0
    assert "dense<[-1.500000e+00, 2.000000e+00, -0.000000e+00]> : tensor<3xf32>" in capsys.readouterr().out


def test_missing_arguments_is_a_clear_error(tmp_path, capsys):
    f = tmp_path / "f.mlir"
    f.write_text("func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> { func.return %a : tensor<3xf32> }")
    assert main(["run", str(f)]) == 1
    assert "@main takes 1 arguments: give them with --args" in capsys.readouterr().out


def test_print_round_trips_and_reports_parse_errors(tmp_path, capsys):
    f = tmp_path / "p.mlir"
    f.write_text(PASSING)
    assert main(["print", "--split-input-file", str(f)]) == 1  # the last module does not parse
    captured = capsys.readouterr()
    assert "stablehlo.add %0, %0 : tensor<2xi32>" in captured.out
    assert f"{f}:21:38: error: expected ',' or ']'" in captured.err


def test_explain_an_element(capsys):
    assert main(["explain", "--example", "softplus", "--value", "%7", "--index", "2,1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("%7[2, 1] = stablehlo.transpose")
    assert "%6[1, 2]  copy" in out


def test_explain_a_convolution_element(capsys):
    """conv2d: x[0, h, w, c] = h; result[0, 1, 1, 0] sums rows 1..3 of the padded window."""
    assert main(["explain", "--example", "conv2d", "--value", "%0", "--index", "0,1,1,0"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("%0[0, 1, 1, 0] = stablehlo.convolution")
    # kernel rows: channel 0 [1, 2, 1], channel 1 [1, 2, 1], channel 0 [-1, -1, -1]
    assert "result[0, 1, 1, 0] = 3.0" in out  # 4 * 1 + 4 * 2 - 3 * 3
    assert "lhs_window_start = output_spatial_index * window_strides = (1, 1) * [2, 2] = (2, 2)" in out
    assert "lhs[0, 3, 1, 0] * rhs[2, 0, 0, 0] = 3.0 * -1.0 = -3.0" in out
    assert out.count("  window\n") == 18 and out.count("  kernel\n") == 18


def test_explain_a_reduce_window_element_on_padding(capsys):
    """maxpool: result[0, 0, 0, 0]'s 3x3 window starts in the padding."""
    rows = [[[float(6 * i + j)] for j in range(6)] for i in range(6)]
    x = f"[dense<{[rows]}> : tensor<1x6x6x1xf32>]"
    assert main(["explain", "--example", "maxpool", "--args", x, "--value", "%1", "--index", "0,0,0,0"]) == 0
    out = capsys.readouterr().out
    assert "reduce_window result[0, 0, 0, 0] = 7.0" in out
    assert "window_start = result_index * window_strides = (0, 0, 0, 0) * (1, 2, 2, 1) = (0, 0, 0, 0)" in out
    # window element (0, 0, 0, 0) lies in the padding of dims 1 and 2: the pad value (init) -inf
    first = out.split("windows[0][0, 0, 0, 0] = ")[1].split("windows[0][0, 0, 1, 0]")[0]
    assert "dims: 0: operand, 1: padding, 2: padding, 3: operand" in first
    assert "(0, 0, 0, 0) - (0, 1, 1, 0) = (0, -1, -1, 0) outside [0, (1, 6, 6, 1))" in first
    assert first.rstrip().endswith("= -inf")
    sources = out.split("sources:\n")[1].split("next step back:\n")[0].splitlines()
    assert out.split("next step back:\n")[1].splitlines() == [
        "  %cst = stablehlo.constant (line 4)", "  %arg0 = argument of @main"]
    assert sources == ["  %cst[]  init", "  %arg0[0, 0, 0, 0]  window", "  %arg0[0, 0, 1, 0]  window",
                       "  %arg0[0, 1, 0, 0]  window", "  %arg0[0, 1, 1, 0]  window", "  %cst[]  pad_value"]


def test_ops_and_examples_list(capsys):
    assert main(["ops"]) == 0
    names = capsys.readouterr().out
    assert "stablehlo.pad  (Pad)" in names and "stablehlo.while" in names
    assert main(["examples"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert listed == ["conv2d", "conv_maxpool", "grid_matmul", "maxpool", "mlp_step", "sharded_matmul",
                      "softplus"]


def test_help_does_not_import_front_ends():
    # nor numpy: --help shows the budgets from hlolab.limits, which imports nothing
    import subprocess
    import sys

    code = ("import sys, hlolab.cli; hlolab.cli.build_parser(); "
            "print(sorted(m for m in ('textual', 'matplotlib', 'prompt_toolkit', 'jax', 'numpy') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_every_subcommand_help_prints(capsys):
    import pytest

    for cmd in ("run", "print", "explain", "trace", "ops", "examples"):
        with pytest.raises(SystemExit) as e:
            main([cmd, "--help"])
        assert e.value.code == 0
        assert "usage: hlolab" in capsys.readouterr().out


def test_trace_an_mlp_logit(capsys):
    """logits[1, 2] of the JAX MLP: row 1 of x, all of w1 and b1, column 2 of w2, b2[2]."""
    assert main(["trace", "--example", "mlp_step", "--seed", "0", "--value", "%9", "--index", "1,2"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("%9[1, 2] = stablehlo.add (line 15)\ndepends on 170 elements of 6 values:")
    for line in ("window     %arg0[1, 0:8]", "kernel     %arg1[0:8, 0:16] (all)",
                 "copy       %arg2[0:16] (all)", "kernel     %arg3[0:16, 2]", "copy       %arg4[2]",
                 "via dot_general %0 → add %3 → maximum %5 → dot_general %6 → add %9"):
        assert line in out, line


def test_trace_json_lists_each_source_once_per_role(capsys):
    import json

    assert main(["trace", "--example", "mlp_step", "--seed", "0", "--value", "%9", "--index", "1,2",
                 "--json"]) == 0
    js = json.loads(capsys.readouterr().out)
    assert js["value"] == "%9" and js["index"] == [1, 2]
    keys = [(s["value"], tuple(s["index"]), s["role"]) for s in js["sources"]]
    assert len(keys) == len(set(keys)) == 170
    assert {k for k in keys if k[0] == "%arg0"} == {("%arg0", (1, j), "window") for j in range(8)}
    (b2,) = [s for s in js["sources"] if s["value"] == "%arg4"]
    assert b2["index"] == [2] and b2["role"] == "copy" and b2["n_paths"] == 1
    assert [(h["op"], h["name"], h["role"]) for h in b2["path"]] == [
        ("stablehlo.broadcast_in_dim", "%7", "copy"), ("stablehlo.broadcast_in_dim", "%8", "copy"),
        ("stablehlo.add", "%9", "combine")]


def test_trace_a_conv_maxpool_element(capsys):
    """pool[0, 1, 2, 1] = max of conv rows 2..3, cols 4..5; a 3x3 SAME conv reads x rows 1..4, cols 3..6."""
    assert main(["trace", "--example", "conv_maxpool", "--seed", "0", "--value", "%2",
                 "--index", "0,1,2,1"]) == 0
    out = capsys.readouterr().out
    assert "window     %arg0[0, 1:5, 3:7, 0]" in out
    assert "kernel     %arg1[0:3, 0:3, 0, 1]" in out
    assert "via convolution %0 → reduce_window %2" in out


def test_trace_forward_and_errors(capsys):
    assert main(["trace", "--example", "conv_maxpool", "--seed", "0", "--value", "%arg0",
                 "--index", "0,0,0,0", "--forward"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("%arg0[0, 0, 0, 0] = argument #0 of @main\nflows into 10 elements of 2 values")
    assert "%2[0, 0, 0, 0:2]" in out
    assert main(["trace", "--example", "conv_maxpool", "--seed", "0", "--value", "%2",
                 "--index", "9,9,9,9"]) == 1
    assert "out of range" in capsys.readouterr().err
    assert main(["trace", "--example", "conv_maxpool", "--value", "%2", "--index", "0,0,0,0"]) == 1
    assert "--seed N for random values" in capsys.readouterr().err


def test_verbose_shows_the_python_error_behind_an_op_failure(tmp_path, capsys, monkeypatch):
    from hlolab.ops.registry import lookup

    def broken(ctx, x):
        raise ValueError("a bug in the negate evaluator")

    monkeypatch.setattr(lookup("stablehlo.negate"), "evaluate", broken)
    f = tmp_path / "neg.mlir"
    f.write_text("""func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.negate %a : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}""")
    assert main(["run", "--seed", "0", str(f)]) == 1
    plain = capsys.readouterr().out
    assert f"neg.mlir#1: ERROR: {f}:2:3: stablehlo.negate failed: ValueError: a bug in the negate" in plain
    assert "Traceback" not in plain
    assert main(["run", "-v", "--seed", "0", str(f)]) == 1
    verbose = capsys.readouterr().out
    assert "Traceback (most recent call last)" in verbose and "in broken" in verbose


UNTAKEN = """
func.func @main() -> tensor<2x3xf32> {
  %pred = stablehlo.constant dense<true> : tensor<i1>
  %x = stablehlo.constant dense<1.0> : tensor<2x3xf32>
  %0 = "stablehlo.if"(%pred) ({
    stablehlo.return %x : tensor<2x3xf32>
  }, {
    %t = stablehlo.transpose %x, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<2x3xf32>
    stablehlo.return %t : tensor<2x3xf32>
  }) : (tensor<i1>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
"""


def test_an_invalid_op_in_an_untaken_branch_fails_run_verify_and_print(tmp_path, capsys):
    f = tmp_path / "untaken.mlir"
    f.write_text(UNTAKEN)
    assert main(["run", str(f)]) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"untaken.mlir#1: ERROR: {f}:8:5: transpose (C3): ")
    assert main(["verify", str(f)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{f}:8:5: error: transpose (C3): ") and err.rstrip().endswith("^")
    assert main(["print", str(f)]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and "transpose (C3)" in captured.err
    f.write_text(UNTAKEN.replace("dims = [1, 0] : (tensor<2x3xf32>) -> tensor<2x3xf32>",
                                 "dims = [0, 1] : (tensor<2x3xf32>) -> tensor<2x3xf32>"))
    assert main(["verify", str(f)]) == 0
    assert capsys.readouterr().out == "untaken.mlir: verified\n"


HELPERS = """
func.func private @relu(%arg0: tensor<3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.constant dense<0.0> : tensor<3xf32>
  %1 = stablehlo.maximum %arg0, %0 : tensor<3xf32>
  return %1 : tensor<3xf32>
}
func.func private @twice(%arg0: tensor<3xf32>) -> tensor<3xf32> {
  %2 = stablehlo.add %arg0, %arg0 : tensor<3xf32>
  return %2 : tensor<3xf32>
}
func.func @main(%arg0: tensor<3xf32>) -> tensor<3xf32> {
  %0 = call @relu(%arg0) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = call @twice(%0) : (tensor<3xf32>) -> tensor<3xf32>
  return %1 : tensor<3xf32>
}
"""


def test_an_unqualified_value_is_the_entry_functions(tmp_path, capsys):
    f = tmp_path / "helpers.mlir"
    f.write_text(HELPERS)
    # %0 exists in @relu too (computed later than @main's %0 starts): the entry's wins
    assert main(["explain", str(f), "--args", "[dense<[-1.0, 2.0, -3.0]> : tensor<3xf32>]",
                 "--value", "%0", "--index", "1"]) == 0
    assert capsys.readouterr().out.startswith("%0[1] = func.call (line 12), @main op 0")
    # only @twice defines %2: it is found there
    assert main(["trace", str(f), "--seed", "0", "--value", "%2", "--index", "0"]) == 0
    assert capsys.readouterr().out.startswith("@twice:%2[0] = stablehlo.add (line 8)")
    # a name in two helpers and not in @main is ambiguous; a name nowhere is named as such
    f.write_text(HELPERS.replace("%2", "%1"))
    assert main(["trace", str(f), "--seed", "0", "--value", "%1", "--index", "0"]) == 0
    capsys.readouterr()
    f.write_text(HELPERS.replace("%2", "%0").replace("%0 = call", "%5 = call").replace("@twice(%0)",
                                                                                       "@twice(%5)"))
    assert main(["trace", str(f), "--seed", "0", "--value", "%0", "--index", "0"]) == 1
    err = capsys.readouterr().err
    assert "several functions define it: @relu:%0, @twice:%0; name one" in err
    assert main(["trace", str(f), "--seed", "0", "--value", "%99", "--index", "0"]) == 1
    assert capsys.readouterr().err.strip() == "error: no value %99 in @main; values are %arg0, %5, %1"


def test_a_missing_index_on_a_tensor_is_a_usage_error(capsys):
    rc = main(["explain", "--example", "softplus", "--value", "%0"])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.startswith("usage: hlolab explain")
    assert "hlolab explain: error: the following argument is required for %0 (shape " in err
    assert "--index" in err.splitlines()[-1]


# --- inputs: budgets before allocation, partial inputs, clear messages (issue 24) ------------

BIG = ("func.func @main(%a: tensor<20000x20000xf32>) -> tensor<20000x20000xf32> "
       "{ return %a : tensor<20000x20000xf32> }")
FOUR = """func.func @main(%a: tensor<3xf32>, %b: tensor<3xf32>, %c: tensor<3xf32>, %d: tensor<3xf32>)
    -> tensor<3xf32> {
  %0 = stablehlo.add %a, %b : tensor<3xf32>
  %1 = stablehlo.add %c, %d : tensor<3xf32>
  %2 = stablehlo.add %0, %1 : tensor<3xf32>
  return %2 : tensor<3xf32>
}"""


def test_generated_inputs_are_refused_over_the_budget_before_allocation(tmp_path, capsys):
    from hlolab.interp.inputs import random_value
    from hlolab.types import tensor_type

    class NoDraws:  # a generator asked for anything means the values were being made
        def __getattr__(self, name):
            raise AssertionError(f"rng.{name} called for a tensor over the budget")

    with pytest.raises(ExecutionError, match="400,000,000 elements, over the element budget of 1,000"):
        random_value(tensor_type((20000, 20000), "f32"), NoDraws(), 1000)
    f = tmp_path / "big.mlir"
    f.write_text(BIG)
    assert main(["run", str(f), "--seed", "1", "--max-elements", "1000"]) == 1
    out = capsys.readouterr().out
    assert "argument #0 of @main: a 20000x20000 tensor has 400,000,000 elements, over the element " \
           "budget of 1,000 (--max-elements)" in out
    # a .npy over the budget is refused from its header, before its data is read
    np.save(tmp_path / "x.npy", np.zeros(2000, np.float32))
    g = tmp_path / "v.mlir"
    g.write_text("func.func @main(%a: tensor<2000xf32>) -> tensor<2000xf32> { return %a : tensor<2000xf32> }")
    assert main(["run", str(g), "--input", str(tmp_path / "x.npy"), "--max-elements", "1000"]) == 1
    err = capsys.readouterr().err
    assert "x.npy: a 2000 tensor has 2,000 elements, over the element budget of 1,000" in err
    # the same budget holds for a session's inputs (explain, trace, the TUI stepper)
    s = Session(g.read_text(), element_budget=1000)
    with pytest.raises(ExecutionError, match="over the element budget of 1,000"):
        s.bind(files=[tmp_path / "x.npy"])
    with pytest.raises(ExecutionError, match="over the element budget of 1,000"):
        s.bind([np.zeros(2000, np.float32)])


def test_input_files_then_the_seed_fill_every_argument(tmp_path, capsys):
    f = tmp_path / "four.mlir"
    f.write_text(FOUR)
    np.save(tmp_path / "a.npy", np.array([1.0, 2.0, 3.0], np.float32))
    assert main(["run", str(f), "--input", str(tmp_path / "a.npy"), "--seed", "1"]) == 0
    assert "result #0" in capsys.readouterr().out
    assert main(["explain", str(f), "--input", str(tmp_path / "a.npy"), "--seed", "1", "--value", "%0",
                 "--index", "0"]) == 0
    assert "%a[0] = 1.0" in capsys.readouterr().out  # the file is argument #0, the seed made the rest


def test_bad_input_files_and_empty_programs_say_what_is_wrong(tmp_path, capsys):
    f = tmp_path / "v.mlir"
    f.write_text("func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> { return %a : tensor<3xf32> }")
    (tmp_path / "text.npy").write_text("1 2 3\n")
    np.save(tmp_path / "obj.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    np.save(tmp_path / "f64.npy", np.array([1.0, 2.0, 3.0]))
    assert main(["run", str(f), "--input", str(tmp_path / "text.npy")]) == 1
    err = capsys.readouterr().err
    assert "not a .npy file (it starts with b'1 2 3\\n'); save arrays with numpy.save" in err
    assert main(["run", str(f), "--input", str(tmp_path / "obj.npy")]) == 1
    assert "it holds Python objects (pickled), not numbers" in capsys.readouterr().err
    assert main(["run", str(f), "--input", str(tmp_path / "f64.npy")]) == 1
    assert "must be tensor<3xf32>, got array of shape (3,) and dtype float64 (cast it: " \
           "x.astype(numpy.float32))" in capsys.readouterr().out
    empty = tmp_path / "empty.mlir"
    empty.write_text("// nothing here\n")
    assert main(["run", str(empty)]) == 1
    assert "empty.mlir holds no module (no func.func to run)" in capsys.readouterr().out


def test_export_names_the_file_as_the_op_was_typed_and_says_where(tmp_path, capsys, monkeypatch):
    # issue 24: `export conv --format gif` wrote convolution.gif
    pytest.importorskip("matplotlib")
    monkeypatch.chdir(tmp_path)
    assert main(["export", "conv", "--format", "gif", "--max-frames", "2"]) == 0
    assert capsys.readouterr().out == "wrote conv.gif (2 frames of stablehlo.convolution)\n"
    assert main(["export", "DotGeneral"]) == 0
    assert capsys.readouterr().out == "wrote DotGeneral.png (diagram of stablehlo.dot_general)\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["DotGeneral.png", "conv.gif"]
    out = tmp_path / "sub" / "x.png"  # --out still wins, and is what is printed
    assert main(["export", "conv", "--out", str(out)]) == 0
    assert capsys.readouterr().out == f"wrote {out} (diagram of stablehlo.convolution)\n" and out.is_file()


def test_explain_an_op_built_from_its_parameters(capsys):
    """hlolab explain OP: the spec's gather example, element [0, 1, 2, 1, 1]: start (0, 9)
    clamps to (0, 2, 0, 0), batching adds (1, 0, 0, 0), offset (0, 0, 1, 1): operand[1, 2, 1, 1]."""
    assert main(["explain", "gather", "--preset", "spec-example", "--index", "0,1,2,1,1"]) == 0
    out = capsys.readouterr().out
    assert "= (0, 2, 0, 0)  (before clamp: (0, 9, 0, 0))" in out
    assert "7. operand_index = full_start_index + full_batching_index + full_offset_index" in out
    assert "%operand[1, 2, 1, 1]  copy" in out and "%start_indices[0, 1, 2, 1]  index_read" in out
    # parameters as --param and as the --NAME VALUE shorthand; an op with --value is an error
    assert main(["explain", "pad", "--param", "interior_padding=1", "--operand", "3",
                 "--edge_padding_low", "0", "--edge_padding_high", "0", "--index", "1"]) == 0
    out = capsys.readouterr().out  # result [1, -1, 2, -1, 3]: position 1 is a hole
    assert "pad result[1] = -1" in out and "1/2 not an integer: a hole" in out
    assert main(["explain", "gather", "--value", "%0"]) == 2
    assert "choose its element with --index" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["export", "explain"])
def test_an_op_parameter_named_like_a_global_option_is_never_swallowed(command, capsys):
    """scatter's parameter `input` vs the global --input FILE.npy: a clear error that says how to
    set the parameter; --args (no op parameter of that name) is rejected for an op too."""
    assert main([command, "scatter", "--input", "[1, 2]"]) == 2
    err = capsys.readouterr().err
    assert "--input is hlolab's option for a program's inputs" in err and "--param input=VALUE" in err
    assert main([command, "gather", "--args", "[dense<1> : tensor<i32>]"]) == 2
    assert "applies to a program file, not to the op gather" in capsys.readouterr().err
