"""The other commands: :help, :ops, :show, :args, :step/:back/:run/:break, :export, :tui."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from hlolab.repl.display import elements_text


def test_help_lists_commands_and_describes_ops(drive):
    out, _ = drive([":help"])
    for name in ("help", "ops", "show", "explain", "trace", "targets", "step", "back", "run", "break",
                 "reset", "undo", "load", "save", "args", "export", "tui", "lang"):
        assert f"\n  :{name}" in out
    out, _ = drive([":help Pad"])
    assert out.startswith("stablehlo.pad  (builder: Pad)\n")
    assert "  edge_padding_low: tuple[int, ...]" in out and "  interior_padding: tuple[int, ...]" in out
    assert "builder: Pad(operand, padding_value, padding_config, low, high, interior)" in out
    out, _ = drive([":help stablehlo.gather"])
    assert "  offset_dims: tuple[int, ...]" in out and "builder: Gather(operand, start_indices," in out
    out, _ = drive([":help trace", ":help nosuchthing"])
    assert ":trace %x[i,j]\n  every input element" in out
    assert "error: no command or op named 'nosuchthing'" in out


def test_ops_lists_builder_functions_and_ops(drive):
    out, _ = drive([":ops"])
    assert "builder functions (" in out and " Gather " in out
    assert "stablehlo.gather" in out and "chlo.top_k" in out


def test_show_names_the_op_and_the_parameter(drive):
    out, _ = drive(["a = Parameter(f32[2])", "b = Neg(a)", ":show %b", ":show a"])
    assert "made by: %b = stablehlo.negate %a : tensor<2xf32>" in out
    assert "made by: parameter 0 of @main (random, seed 0)" in out


def test_args_literal_npy_dense_and_seed(drive, tmp_path):
    np.save(tmp_path / "v.npy", np.array([[5, 6], [7, 8]], np.int32))
    out, repl = drive(["a = Parameter(s32[2,2])", "b = Add(a, a)", ":args"])
    assert "  0: %a : tensor<2x2xi32>  (random, seed 0)" in out
    random_b = repl.program.value("b")[1].copy()
    assert np.array_equal(random_b, 2 * repl.program.value("a")[1])
    out, repl = drive([":args 0 [[1, 2], [3, 4]]", ":show %b"], repl=repl)
    assert "%b : tensor<2x2xi32>\n  [[2 4]\n   [6 8]]" in out  # every value follows the new input
    out, repl = drive([f":args %a {tmp_path / 'v.npy'}"], repl=repl)
    assert repl.program.value("b")[1].tolist() == [[10, 12], [14, 16]]
    out, repl = drive([":args a dense<[[0, 1], [1, 0]]> : tensor<2x2xi32>"], repl=repl)
    assert repl.program.value("b")[1].tolist() == [[0, 2], [2, 0]]
    out, repl = drive([":args seed 0"], repl=repl)
    assert np.array_equal(repl.program.value("b")[1], random_b)  # seeded: the same values again
    out, repl = drive([":args 0 [1, 2, 3]", ":args 3 [1]"], repl=repl)
    assert "error: the value has shape [3]; the parameter is tensor<2x2xi32>" in out
    assert "error: no parameter 3 (the program has 1)" in out


def test_large_values_are_elided_and_dtypes_shown(drive):
    out, _ = drive(["big = Iota(f32[40, 50], 0)", "h = ConvertElementType(Iota(f32[3], 0), bf16)",
                    "b = Lt(Iota(s32[3], 0), Iota(s32[3], 0))",
                    "i = ConvertElementType(Iota(s32[3], 0), s4)"])
    assert "%big : tensor<40x50xf32>\n  [[ 0.  0.  0. ...  0.  0.  0.]" in out
    assert out.count("...") >= 2
    assert "%h : tensor<3xbf16>\n  [0 1 2]" in out
    assert "%b : tensor<3xi1>\n  [False False False]" in out
    assert "%i : tensor<3xi4>\n  [0 1 2]" in out


def test_step_back_run_and_breakpoints(drive):
    lines = ["x = [[1, -2], [3, 4]]:f32", "y = Exp(x)", "z = Reduce(y, 0:f32, Max, dimensions_to_reduce=[0])",
             ":step", ":step", ":back", ":break op exponential", ":run"]
    out, repl = drive(lines)
    steps = [ln for ln in out.splitlines() if ln.startswith(("step", "breakpoint", "end", "start"))]
    assert steps[:3] == ["step at #1 %x = stablehlo.constant", "step at #2 %y = stablehlo.exponential",
                         "step at #1 %x = stablehlo.constant"]
    assert steps[3] == "breakpoint: op exponential"
    assert steps[4] == "breakpoint at #2 %y = stablehlo.exponential (op exponential)"
    out, repl = drive([":break clear", ":break line 3", ":run", ":run"], repl=repl)
    assert "breakpoint at #4 %z = stablehlo.reduce (name %z)" in out
    want = np.exp(np.array([[1, -2], [3, 4]], np.float32)).max(axis=0)
    assert elements_text(want) in out
    assert "end at #4" in out
    out, repl = drive(["w = Log(Neg(z))", ":break clear", ":break nan", ":run"], repl=repl)
    assert "breakpoint at #6 %w = stablehlo.log (nonfinite)" in out
    out, _ = drive([":break line 9", ":break sideways"], repl=repl)
    assert "error: line 9: the program has statements 1..4" in out
    assert "error: usage: :break op NAME" in out


def test_export_svg_of_an_element(drive, tmp_path):
    path = tmp_path / "p.svg"
    out, _ = drive(["x = [[1, 2], [3, 4]]:f32", "p = Pad(x, 0, low=[1, 0], high=[0, 1], interior=[0, 0])",
                    f":export %p[2,1] svg {path}"])
    assert f"wrote {path}" in out
    svg = path.read_text()
    assert svg.startswith("<?xml") and "pad" in svg


def test_tui_opens_at_the_current_step(drive, tmp_path):
    from hlolab.repl.tui import make_app

    out, repl = drive(["x = [[1, 2], [3, 4]]:f32", "y = Exp(x)", "z = Add(y, x)", ":step", ":step"])
    path = tmp_path / "p.mlir"
    path.write_text(repl.program.computation().as_text())

    async def body() -> tuple[str, int, str]:
        app = make_app(str(path), repl.program.inputs(), 0, repl.stepper_session.cursor)
        async with app.run_test() as pilot:
            for _ in range(400):
                await pilot.pause(0.02)
                s = getattr(app.screen, "session", None)
                if s is not None and s.cursor:
                    break
            s = app.screen.session
            return type(app.screen).__name__, s.cursor, s.current.op.name

    screen, cursor, op = asyncio.run(body())
    assert (screen, cursor, op) == ("StepperScreen", 2, "stablehlo.exponential")


@pytest.mark.parametrize("line, words", [
    (":nosuch", "unknown command :nosuch"), (":explain", "usage: :explain %x[i,j]"),
    (":show %nothing", "no value named %nothing"), (":lang fr", "usage: :lang en|zh|es"),
    (":step 0", "usage: :step [N]"), (":save", "usage: :save FILE.mlir"),
])
def test_command_errors(drive, line, words):
    out, _ = drive(["a = Iota(s32[2], 0)", line])
    assert words in out and "Traceback" not in out
