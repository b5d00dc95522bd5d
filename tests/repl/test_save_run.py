"""``:save`` writes MLIR that ``hlolab run`` runs to the values the REPL printed; ``:load``
reads it back and the program can be continued."""

from __future__ import annotations

import numpy as np

from hlolab import cli
from hlolab.runner import format_value


def test_save_then_hlolab_run_round_trips(drive, tmp_path, capsys):
    path = tmp_path / "prog.mlir"
    out, repl = drive([
        "x = Parameter(f32[2,3])",
        ":args %x [[1, 2, 3], [4, 5, 6]]",
        "i = Iota(s32[2,3], 1)",
        "%f = stablehlo.convert %i : (tensor<2x3xi32>) -> tensor<2x3xf32>",
        "y = Pad(Mul(x, f), 0, low=[1, 0], high=[0, 1], interior=[0, 1])",
        f":save {path}",
    ])
    assert f"saved {path} (returns %y)" in out
    _, y = repl.program.value("y")
    assert y.tolist() == [[0, 0, 0, 0, 0, 0], [0, 0, 2, 0, 6, 0], [0, 0, 5, 0, 12, 0]]
    assert not repl.program.unsaved
    capsys.readouterr()
    x = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    assert cli.main(["run", str(path), "--args", f"[{format_value(x)}]"]) == 0
    printed = capsys.readouterr().out
    assert f"result #0: {format_value(y)}" in printed


def test_load_then_continue_building(drive, tmp_path):
    path = tmp_path / "prog.mlir"
    drive(["a = [[1, 2], [3, 4]]:f32", "b = Transpose(a, [1, 0])", f":save {path}"])
    out, repl = drive([f":load {path}", "c = Add(a, b)", ":show %c"])
    assert "loaded" in out
    _, c = repl.program.value("c")
    assert c.tolist() == [[2, 5], [5, 8]]
    assert [e.kind for e in repl.program.entries] == ["load", "statement"]


def test_load_a_file_with_arguments_makes_parameters(drive, tmp_path):
    path = tmp_path / "f.mlir"
    path.write_text("func.func @main(%arg0: tensor<3xf32>) -> tensor<3xf32> {\n"
                    "  %0 = stablehlo.multiply %arg0, %arg0 : tensor<3xf32>\n"
                    "  return %0 : tensor<3xf32>\n}\n")
    out, repl = drive([f":load {path}", ":args 0 [1, 2, 3]", ":show %0"])
    assert [p.name for p in repl.program.b.parameters()] == ["arg0"]
    _, v = repl.program.value("%0")
    assert v.tolist() == [1, 4, 9]


def test_load_a_while_whose_regions_share_argument_names(drive, tmp_path):
    # cond and body both name their arguments %arg0, %arg1 (sibling regions: legal MLIR, as
    # in the conformance file while.mlir); loading used to refuse "%arg0 is already in use"
    path = tmp_path / "w.mlir"
    path.write_text(
        "func.func @main() -> tensor<i64> {\n"
        "  %i0 = stablehlo.constant dense<0> : tensor<i64>\n"
        "  %one = stablehlo.constant dense<1> : tensor<i64>\n"
        "  %ten = stablehlo.constant dense<10> : tensor<i64>\n"
        "  %r0, %r1 = stablehlo.while(%arg0 = %i0, %arg1 = %i0) : tensor<i64>, tensor<i64>\n"
        "  cond {\n"
        "    %c = stablehlo.compare LT, %arg0, %ten : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
        "    stablehlo.return %c : tensor<i1>\n"
        "  } do {\n"
        "    %s = stablehlo.add %arg1, %arg0 : tensor<i64>\n"
        "    %n = stablehlo.add %arg0, %one : tensor<i64>\n"
        "    stablehlo.return %n, %s : tensor<i64>, tensor<i64>\n"
        "  }\n"
        "  return %r1 : tensor<i64>\n}\n")
    out, repl = drive([f":load {path}", ":show %r1"])
    assert "already in use" not in out
    _, v = repl.program.value("%r1")
    assert int(v) == 45  # 0 + 1 + ... + 9
