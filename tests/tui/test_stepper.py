"""The program stepper screen, driven with Pilot: stepping, breakpoints, tracing, errors.

A minimal App pushes the screen, so these tests do not depend on the main app.
Expected values come from ``hlolab.session.Session`` run independently on the
same program, never from the screen itself.
"""

from __future__ import annotations

import asyncio
import functools
import io
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("textual")

from textual.app import App  # noqa: E402
from textual.widgets import Input, Static, TabbedContent, TextArea  # noqa: E402

from hlolab.session import Session  # noqa: E402
from hlolab.tui.screens.stepper import InputsDialog, ProgramDialog, StepperScreen  # noqa: E402
from hlolab.tui.widgets.source import SourceView, highlight_line  # noqa: E402
from hlolab.tui.widgets.values import ValueList  # noqa: E402
from tests.programs import RUNAWAY_WHILE, SQUARING_WHILE  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[2] / "hlolab" / "examples"

# pad (line 3) -> slice (line 4) -> add (line 5): %r = [0, x0, x1] + y
PAD_SLICE_ADD = "\n".join([
    "func.func @main(%x: tensor<4xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {",
    "  %zero = stablehlo.constant dense<0.0> : tensor<f32>",
    "  %p = stablehlo.pad %x, %zero, low = [2], high = [1], interior = [0]"
    " : (tensor<4xf32>, tensor<f32>) -> tensor<7xf32>",
    "  %s = stablehlo.slice %p [1:4] : (tensor<7xf32>) -> tensor<3xf32>",
    "  %r = stablehlo.add %s, %y : tensor<3xf32>",
    "  func.return %r : tensor<3xf32>",
    "}",
])


# the second op cannot run: the session stops with an ExecutionError
NOT_IMPLEMENTED = """\
func.func @main(%a: tensor<4xi32>) -> tensor<4xi32> {
  %0 = stablehlo.add %a, %a : tensor<4xi32>
  %1 = stablehlo.custom_call @foo(%0) : (tensor<4xi32>) -> tensor<4xi32>
  return %1 : tensor<4xi32>
}
"""



def sync(test):
    """Run an async Pilot test with asyncio.run (no pytest asyncio plugin needed)."""

    @functools.wraps(test)
    def wrapper(*args, **kw):
        asyncio.run(test(*args, **kw))

    return wrapper


class StepperApp(App):
    """Pushes one StepperScreen (what ``hlolab open`` does in the real app)."""

    def __init__(self, source: str, **kw):
        super().__init__()
        self._source = source
        self._kw = kw

    def on_mount(self) -> None:
        self.push_screen(StepperScreen(self._source, **self._kw))


async def settle(pilot) -> StepperScreen:
    """Wait until no command runs and none is queued; returns the stepper screen."""
    app = pilot.app
    await pilot.pause()
    for _ in range(200):
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = stepper(app)
        if screen.busy is None and not screen._queue:
            return screen
    raise AssertionError("the stepper did not settle")


def stepper(app: App) -> StepperScreen:
    for s in app.screen_stack:
        if isinstance(s, StepperScreen):
            return s
    raise AssertionError("no stepper screen")


def text_of(screen, selector: str) -> str:
    """The plain text a Static shows (a string, a Text or a rich renderable such as a Group)."""
    from rich.console import Console

    console = Console(width=200, record=True, file=io.StringIO(), color_system=None)
    console.print(screen.query_one(selector, Static).content, markup=False, highlight=False)
    return console.export_text()


def reference(text: str, seed: int = 0) -> Session:
    s = Session(text, filename="<ref>")
    s.bind(seed=seed)
    return s


# --- stepping ------------------------------------------------------------------------------------

@sync
async def test_step_forward_and_back_changes_the_current_op():
    path = EXAMPLES / "conv_maxpool.mlir"
    app = StepperApp(path.read_text(), path=str(path))
    ref = reference(path.read_text())
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await settle(pilot)
        source = screen.query_one(SourceView)
        assert screen.session.current is None and source.current_line is None
        await pilot.press("n")
        screen = await settle(pilot)
        first = ref.step().event
        assert screen.session.current.op.name == first.op.name == "stablehlo.convolution"
        assert source.current_line == first.op.loc.line
        assert "stablehlo.convolution" in text_of(screen, "#stepper-op")
        # the op's values are on screen: outputs grid holds the convolution's result
        out = screen.query_one("#stepper-outputs", ValueList).grids()
        assert len(out) == 1
        np.testing.assert_array_equal(out[0][1].value, first.outputs[0])
        ins = screen.query_one("#stepper-inputs", ValueList).grids()
        assert [g.value.shape for _, g in ins] == [(1, 8, 8, 1), (3, 3, 1, 2)]
        await pilot.press("n", "n")  # typed ahead: both run, in order
        screen = await settle(pilot)
        ref.step(2)
        assert screen.session.current.op.name == ref.current.op.name == "stablehlo.broadcast_in_dim"
        assert source.current_line == ref.current.op.loc.line == 7
        await pilot.press("b")
        screen = await settle(pilot)
        assert screen.session.current.op.name == "stablehlo.constant"
        assert source.current_line == 6
        assert "stablehlo.constant" in text_of(screen, "#stepper-op")


@sync
async def test_step_into_while_shows_the_frame_then_step_over_and_finish():
    app = StepperApp(SQUARING_WHILE, inputs=[np.array(2, np.int64), np.ones(8, np.float32)])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("n", "n", "s")  # two constants, then into the while's cond region
        screen = await settle(pilot)
        ev = screen.session.current
        assert ev.op.name == "stablehlo.compare" and screen.query_one(SourceView).current_line == 6
        header = text_of(screen, "#stepper-op")
        assert "while line 4" in header and "region 0" in header and "iteration 0" in header
        await pilot.press("n")  # into the body
        await pilot.press("o")  # step over stays at the body's depth
        screen = await settle(pilot)
        assert screen.session.current.op.name == "stablehlo.multiply"
        assert screen.query_one(SourceView).current_line == 10
        await pilot.press("f")  # finish: out of the while
        screen = await settle(pilot)
        assert screen.session.current.op.name == "stablehlo.while"
        assert screen.session.current.frame.depth == 0
        assert "region" not in text_of(screen, "#stepper-op")


@sync
async def test_breakpoint_on_cursor_line_then_continue_stops_there():
    path = EXAMPLES / "mlp_step.mlir"
    text = path.read_text()
    ref = reference(text)
    add_line = next(op.loc.line for op in ref.module.walk() if op.name == "stablehlo.add")
    app = StepperApp(text, path=str(path))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await settle(pilot)
        source = screen.query_one(SourceView)
        await pilot.press(*["down"] * (add_line - 1))
        assert source.cursor_line == add_line
        await pilot.press("t")
        assert source.breakpoints == {add_line}
        assert [(b.kind, b.value) for b in screen.session.breakpoints] == [("line", add_line)]
        await pilot.press("c")
        screen = await settle(pilot)
        assert screen.session.current.op.name == "stablehlo.add"
        assert source.current_line == add_line and not screen.session.finished
        assert "breakpoint" in text_of(screen, "#stepper-message")
        # toggling again removes it; a line without an op gets none
        await pilot.press("t")
        assert source.breakpoints == frozenset() and screen.session.breakpoints == []
        await pilot.press("home", "t")
        assert source.breakpoints == frozenset()


@sync
async def test_gutter_click_toggles_a_breakpoint():
    app = StepperApp(PAD_SLICE_ADD)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await settle(pilot)
        source = screen.query_one(SourceView)
        await pilot.click(SourceView, offset=(2, 4))  # border row 0, then line 4 (the slice)
        assert source.breakpoints == {4}
        await pilot.click(SourceView, offset=(2, 4))
        assert source.breakpoints == frozenset()


@sync
async def test_run_to_cursor_line():
    app = StepperApp(PAD_SLICE_ADD)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await settle(pilot)
        await pilot.press("down", "down", "down", "g")  # line 4: the slice
        screen = await settle(pilot)
        assert screen.session.current.op.name == "stablehlo.slice"
        assert screen.query_one(SourceView).current_line == 4


@sync
async def test_continue_to_the_end_shows_the_results():
    path = EXAMPLES / "conv_maxpool.mlir"
    ref = reference(path.read_text())
    ref.run()
    app = StepperApp(path.read_text(), path=str(path))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("c")
        screen = await settle(pilot)
        assert screen.session.finished
        assert screen.query_one(TabbedContent).active == "tab-results"
        grids = screen.query_one("#stepper-results", ValueList).grids()
        assert len(grids) == len(ref.results) == 1
        np.testing.assert_array_equal(grids[0][1].value, ref.results[0])
        assert "returned" in text_of(screen, "#stepper-message")
        # restart goes back to before the first op, the results are gone
        await pilot.press("r")
        screen = await settle(pilot)
        assert screen.session.current is None and screen.query_one(SourceView).current_line is None
        assert screen.query_one("#stepper-results", ValueList).grids() == []


# --- tracing ------------------------------------------------------------------------------------------

def expected_trace(text: str, index: tuple[int, ...], result: int = 0) -> tuple[set[int], dict[int, dict]]:
    """Lines of the ops on the paths and {arg: {index: role}} of a result element, from a
    reference session (program provenance API)."""
    s = reference(text)
    s.run()
    tr = s.sources(s.result_defs()[result], index)
    lines = {h.line for g in tr.groups for h in g.path}
    for d in {tr.query} | {g.value for g in tr.groups if g.value[0] != 0}:  # the op, constants
        lines.add(s.event(d[0]).op.loc.line)
    args: dict[int, dict] = {i: {} for i in range(len(s.func.args))}
    for g in tr.groups:
        if g.value[0] == 0:
            for ix in np.argwhere(g.mask):
                args[g.value[1]][tuple(int(i) for i in ix)] = g.role
    return lines, args


@pytest.mark.parametrize("index, lines, x_cells, y_cells", [
    ((2,), {3, 4, 5}, {(1,): "copy"}, {(2,): "combine"}),  # r[2] = p[3] + y[2] = x[1] + y[2]
    ((0,), {2, 3, 4, 5}, {}, {(0,): "combine"}),  # r[0] = %zero (line 2) + y[0]: no element of %x
])
@sync
async def test_trace_a_result_element_marks_lines_and_argument_elements(index, lines, x_cells, y_cells):
    want_lines, want_args = expected_trace(PAD_SLICE_ADD, index)
    assert want_lines == lines and want_args == {0: x_cells, 1: y_cells}  # the hand-derived answer
    app = StepperApp(PAD_SLICE_ADD)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("c")
        screen = await settle(pilot)
        (_, grid), = screen.query_one("#stepper-results", ValueList).grids()
        grid.focus()
        grid.move_cursor(index)
        await pilot.press("enter")
        screen = await settle(pilot)
        assert screen.query_one(SourceView).trace_lines == lines
        args = dict(screen.query_one("#stepper-args", ValueList).grids())
        assert args[("arg", 0)].highlights == x_cells
        assert args[("arg", 1)].highlights == y_cells
        assert grid.highlights == {index: "result"}
        assert screen.query_one(TabbedContent).active == "tab-trace"
        summary = text_of(screen, "#stepper-trace")
        assert f"ops on the path: lines {min(lines)}-5" in summary
        if x_cells:
            assert "%x[1]" in summary and "%y[2]" in summary
        else:
            assert "pad_value" in summary and "%x" not in summary.split("depends on")[1]
        # escape clears the trace
        await pilot.press("escape")
        assert screen.query_one(SourceView).trace_lines == frozenset()
        assert args[("arg", 0)].highlights == {} and args[("arg", 1)].highlights == {}


@sync
async def test_trace_key_on_an_intermediate_output():
    app = StepperApp(PAD_SLICE_ADD)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("n", "n")  # the constant, the pad
        screen = await settle(pilot)
        assert screen.session.current.op.name == "stablehlo.pad"
        (_, out), = screen.query_one("#stepper-outputs", ValueList).grids()
        out.move_cursor((3,))  # p[3] = x[1]
        await pilot.press("e")  # the source view has focus: e traces the first output's cursor
        screen = await settle(pilot)
        assert screen.query_one(SourceView).trace_lines == {3}
        args = dict(screen.query_one("#stepper-args", ValueList).grids())
        assert args[("arg", 0)].highlights == {(1,): "copy"}
        assert args[("arg", 1)].highlights == {}


@sync
async def test_trace_on_the_mlp_marks_argument_boxes():
    path = EXAMPLES / "mlp_step.mlir"
    text = path.read_text()
    want_lines, want_args = expected_trace(text, (1, 2), result=1)  # the logits, %9
    app = StepperApp(text, path=str(path))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("c")
        screen = await settle(pilot)
        grid = screen.query_one("#stepper-results", ValueList).grid(("result", 1))
        grid.focus()
        grid.move_cursor((1, 2))
        await pilot.press("enter")
        screen = await settle(pilot)
        # the trace tab shows, though the focus was on a grid of the results tab
        assert screen.query_one(TabbedContent).active == "tab-trace"
        assert screen.query_one(SourceView).trace_lines == want_lines
        args = dict(screen.query_one("#stepper-args", ValueList).grids())
        for i, cells in want_args.items():
            assert args[("arg", i)].highlights == cells
        # logits[1, 2] reads row 1 of x, all of w1 and b1, column 2 of w2, b2[2]
        assert set(want_args[0]) == {(1, j) for j in range(8)}
        assert len(want_args[1]) == 8 * 16 and len(want_args[2]) == 16
        assert set(want_args[3]) == {(j, 2) for j in range(16)} and set(want_args[4]) == {(2,)}
        assert want_lines == {5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}  # line 9: the relu's zero
        summary = text_of(screen, "#stepper-trace")
        assert "%arg0[1, 0:8]" in summary and "%arg3[0:16, 2]" in summary


# --- errors and inputs -----------------------------------------------------------------------------------

@sync
async def test_parse_error_in_pasted_text_shows_line_col_and_keeps_the_text():
    app = StepperApp(PAD_SLICE_ADD)
    bad = ("func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
           "  %0 = stablehlo.add %a, %a : tensor<5xf32>\n"
           "  func.return %0 : tensor<4xf32>\n}")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+o")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, ProgramDialog)
        area = dialog.query_one(TextArea)
        area.text = bad
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.screen is dialog  # not loaded
        error = str(dialog.query_one("#dialog-error", Static).render())
        assert "<pasted>:2:" in error and "error:" in error and "^" in error
        assert area.text == bad
        # cancelling keeps the draft: it is there again next time
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, StepperScreen)
        await pilot.press("ctrl+o")
        await pilot.pause()
        area = app.screen.query_one(TextArea)
        assert area.text == bad
        # fix it and load: the stepper now runs the new program
        area.text = bad.replace("tensor<5xf32>", "tensor<4xf32>")
        await pilot.press("ctrl+s")
        screen = await settle(pilot)
        assert app.screen is screen and screen.filename == "<pasted>"
        assert screen.query_one(SourceView).lines[1].strip().startswith("%0 = stablehlo.add")
        await pilot.press("c")
        screen = await settle(pilot)
        assert screen.session.finished and screen.session.results[0].shape == (4,)


@sync
async def test_program_with_a_parse_error_opens_with_the_message_and_stays_usable():
    bad = "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = stablehlo.add %a %a\n}"
    app = StepperApp(bad, path="bad.mlir")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await settle(pilot)
        message = text_of(screen, "#stepper-message")
        assert "bad.mlir:2:" in message and "^" in message
        assert screen.query_one(SourceView).error_line == 2
        await pilot.press("n", "c", "e", "t", "r")  # nothing to run: messages, no crash
        screen = await settle(pilot)
        assert screen.session is None and "bad.mlir:2:" in text_of(screen, "#stepper-message")
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert app.screen.query_one(TextArea).text == bad  # the text to fix, not lost


@sync
async def test_execution_error_keeps_the_screen_alive():
    app = StepperApp(NOT_IMPLEMENTED)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("c")
        screen = await settle(pilot)
        message = text_of(screen, "#stepper-message")
        assert "custom_call is not implemented" in message and "<pasted>:3:" in message
        source = screen.query_one(SourceView)
        assert source.error_line == 3  # the failing op is marked; the cursor stays on the last good one
        assert screen.session.current.op.name == "stablehlo.add" and source.current_line == 2
        await pilot.press("n")  # stepping on reports the error again
        screen = await settle(pilot)
        assert "not implemented" in text_of(screen, "#stepper-message")
        assert source.error_line == 3
        await pilot.press("b")
        screen = await settle(pilot)
        assert screen.session.current is None and source.error_line is None
        await pilot.press("n")
        screen = await settle(pilot)
        assert screen.session.current.op.name == "stablehlo.add"
        assert "not returned" not in text_of(screen, "#stepper-results-note")


@sync
async def test_a_long_run_is_interruptible_and_the_ui_stays_responsive():
    app = StepperApp(RUNAWAY_WHILE)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await settle(pilot)
        await pilot.press("c")
        for _ in range(10_000):  # wait for the worker to be inside the run (no time limit)
            await pilot.pause()
            if screen.session.history:
                break
        assert screen.busy == "running"
        await pilot.press("down")  # the UI still takes keys while the worker runs
        assert screen.query_one(SourceView).cursor_line == 2
        await pilot.press("escape")
        screen = await settle(pilot)
        assert screen.last_stop.reason == "interrupted" and not screen.session.finished
        assert "interrupted" in text_of(screen, "#stepper-message")
        n = screen.session.cursor
        await pilot.press("n")
        screen = await settle(pilot)
        assert screen.session.cursor == n + 1


@sync
async def test_escape_stops_a_finish_inside_a_runaway_loop():
    app = StepperApp(RUNAWAY_WHILE)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("n", "n", "n", "n")  # three constants, then the body's add
        screen = await settle(pilot)
        assert screen.session.current.frame.depth == 1
        await pilot.press("f")  # finish the while: never, until esc
        for _ in range(10_000):
            await pilot.pause()
            if len(screen.session.history) > 10:
                break
        assert screen.busy == "finishing"
        await pilot.press("escape")
        screen = await settle(pilot)
        assert screen.last_stop.reason == "interrupted"
        assert "interrupted" in text_of(screen, "#stepper-message")
        n = screen.session.cursor
        await pilot.press("b")  # the history is there either way
        screen = await settle(pilot)
        assert screen.session.cursor == n - 1


@sync
async def test_inputs_from_npy_files(tmp_path):
    x = np.arange(4, dtype=np.float32)
    np.save(tmp_path / "x.npy", x)
    app = StepperApp(PAD_SLICE_ADD, seed=3)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await settle(pilot)
        assert "random seed 3" in text_of(screen, "#stepper-status-text")
        await pilot.press("i")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, InputsDialog)
        dialog.query_one("#inputs-arg0", Input).value = str(tmp_path / "missing.npy")
        await pilot.click("#inputs-ok")
        await pilot.pause()
        assert app.screen is dialog and "cannot load input" in str(
            dialog.query_one("#inputs-error", Static).render())
        field = dialog.query_one("#inputs-arg0", Input)
        field.value = str(tmp_path / "x.npy")
        field.focus()
        await pilot.press("enter")
        screen = await settle(pilot)
        assert isinstance(app.screen, StepperScreen)
        np.testing.assert_array_equal(screen.session.args[0], x)
        ref = Session(PAD_SLICE_ADD)
        ref_y = ref.bind([x], seed=3)[1]  # the rest still random from seed 3
        np.testing.assert_array_equal(screen.session.args[1], ref_y)
        assert "x.npy" in text_of(screen, "#stepper-status-text")
        await pilot.press("c")
        screen = await settle(pilot)
        np.testing.assert_array_equal(screen.session.results[0], np.array([0, 0, 1], np.float32) + ref_y)


@sync
async def test_inputs_typed_as_literals_for_any_argument():
    """%y typed as a literal, %x random from the seed: %r = [0, x0, x1] + y."""
    app = StepperApp(PAD_SLICE_ADD, seed=5)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("i")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, InputsDialog)
        y = dialog.query_one("#inputs-arg1", Input)
        y.value = "[1, 2]"  # the wrong shape: the error names the argument, the text stays
        await pilot.click("#inputs-ok")
        await pilot.pause()
        error = str(dialog.query_one("#inputs-error", Static).render())
        assert app.screen is dialog and "%y (argument #1" in error and y.value == "[1, 2]"
        y.value = "dense<[10.0, 20.0, 30.0]>"
        y.focus()
        await pilot.press("enter")
        screen = await settle(pilot)
        assert isinstance(app.screen, StepperScreen)
        x = Session(PAD_SLICE_ADD).bind(seed=5)[0]  # %x: the seed's first draw
        np.testing.assert_array_equal(screen.session.args[0], x)
        np.testing.assert_array_equal(screen.session.args[1], [10, 20, 30])
        assert "1 typed + random seed 5" in text_of(screen, "#stepper-status-text")
        await pilot.press("c")
        screen = await settle(pilot)
        np.testing.assert_array_equal(screen.session.results[0], np.array([10, 20 + x[0], 30 + x[1]],
                                                                          np.float32))
        # one number for every element, over the budget: refused before it is made
        screen.session.element_budget = 2
        await pilot.press("i")
        await pilot.pause()
        field = app.screen.query_one("#inputs-arg1", Input)
        field.value = "7"
        field.focus()
        await pilot.press("enter")
        await pilot.pause()
        assert "over the element budget" in str(app.screen.query_one("#inputs-error", Static).render())


# --- the source view ---------------------------------------------------------------------------

def test_highlight_line_kinds():
    line = '    %0 = stablehlo.add %a, %b : tensor<4xf32> // sum'
    spans = {line[a:b]: kind for a, b, kind in highlight_line(line)}
    assert spans["%0"] == "value" and spans["stablehlo.add"] == "op"
    assert spans["tensor"] == "type" and spans["// sum"] == "comment"
    assert highlight_line("  \x01 weird ` text") is not None  # never raises


@sync
async def test_long_program_scrolls_to_the_current_op():
    body = "\n".join(f"  %v{i} = stablehlo.add %v{i - 1}, %v{i - 1} : tensor<2xf32>" for i in range(1, 400))
    text = ("func.func @main(%v0: tensor<2xf32>) -> tensor<2xf32> {\n" + body
            + "\n  func.return %v399 : tensor<2xf32>\n}\n")
    app = StepperApp(text)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("end", "g")  # run to the last line holding an op? "end" is the closing brace
        screen = await settle(pilot)
        assert screen.session.current is None  # no op on that line: nothing ran
        await pilot.press("up", "up", "g")  # line 400: %v399
        screen = await settle(pilot)
        source = screen.query_one(SourceView)
        assert source.current_line == 400 and screen.session.current.op.results[0].name == "%v399"
        assert source.scroll_y <= 399 < source.scroll_y + source.scrollable_content_region.height


# --- snapshots -----------------------------------------------------------------------------------

def _snapshot_app() -> StepperApp:
    path = EXAMPLES / "conv_maxpool.mlir"
    return StepperApp(path.read_text(), path="conv_maxpool.mlir")


async def _two_steps(pilot) -> None:
    await settle(pilot)
    await pilot.press("n", "n")
    await settle(pilot)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_snapshot(snap_compare, size):
    assert snap_compare(_snapshot_app(), terminal_size=size, run_before=_two_steps)



# --- breakpoints beyond lines ---------------------------------------------------------------------

# log of a negative number: the first NaN is made by the log on line 4 (then 0/0 on line 5)
NAN_PROGRAM = """\
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  %a = stablehlo.abs %x : tensor<3xf32>
  %n = stablehlo.negate %a : tensor<3xf32>
  %l = stablehlo.log %n : tensor<3xf32>
  %z = stablehlo.subtract %a, %a : tensor<3xf32>
  %d = stablehlo.divide %z, %z : tensor<3xf32>
  %r = stablehlo.add %l, %d : tensor<3xf32>
  func.return %r : tensor<3xf32>
}
"""


def bp_dialog(app):
    from hlolab.tui.screens.stepper import BreakpointsDialog

    assert isinstance(app.screen, BreakpointsDialog), app.screen
    return app.screen


async def add_bp(pilot, text: str) -> str:
    """Type ``text`` into the dialog's box and press enter; the inline error ("" when none)."""
    dialog = bp_dialog(pilot.app)
    box = dialog.query_one("#bp-input", Input)
    box.focus()
    box.value = ""
    await pilot.press(*text, "enter")
    await pilot.pause()
    return str(dialog.query_one("#bp-error", Static).render()).strip()


@sync
async def test_breakpoints_dialog_op_name_then_continue_stops_at_that_op():
    path = EXAMPLES / "mlp_step.mlir"
    text = path.read_text()
    ref = reference(text)
    dots = [op.loc.line for op in ref.module.walk() if op.name == "stablehlo.dot_general"]
    app = StepperApp(text, path=str(path))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await settle(pilot)
        await pilot.press("B")
        await pilot.pause()
        # invalid input: a clear message inline, nothing added, no crash
        assert "no op named 'nosuchop'" in await add_bp(pilot, "op nosuchop")
        assert "no op starts on line 1" in await add_bp(pilot, "line 1")
        assert "expected a line number" in await add_bp(pilot, "line x")
        assert "no op result is named %nope" in await add_bp(pilot, "name %nope")
        assert screen.session.breakpoints == []
        assert bp_dialog(app).query_one("#bp-input", Input).value == "name %nope"  # kept, to fix
        # valid ones: an op name, an SSA name, a line (the line shows in the gutter)
        assert await add_bp(pilot, "op dot_general") == ""
        assert await add_bp(pilot, "name %9") == ""
        assert await add_bp(pilot, f"line {dots[1]}") == ""
        kinds = [(b.kind, b.value) for b in screen.session.breakpoints]
        assert kinds == [("op", "dot_general"), ("name", "%9"), ("line", dots[1])]
        assert screen.query_one(SourceView).breakpoints == {dots[1]}
        listed = bp_dialog(app).query_one("#bp-list")
        assert listed.option_count == 3
        # remove the selected one (the last added: the line)
        listed.focus()
        await pilot.press("delete")
        await pilot.pause()
        assert [b.kind for b in screen.session.breakpoints] == ["op", "name"]
        assert screen.query_one(SourceView).breakpoints == frozenset()
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen
        await pilot.press("c")
        screen = await settle(pilot)
        ev = screen.session.current
        assert ev.op.name == "stablehlo.dot_general" and ev.op.loc.line == dots[0]
        assert "breakpoint (op dot_general)" in text_of(screen, "#stepper-message")
        await pilot.press("c")
        screen = await settle(pilot)
        assert screen.session.current.op.loc.line == dots[1]
        await pilot.press("c")  # then the SSA name
        screen = await settle(pilot)
        assert [v.name for v in screen.session.current.op.results] == ["%9"]
        assert "breakpoint (name %9)" in text_of(screen, "#stepper-message")


@sync
async def test_nan_breakpoint_stops_at_the_first_op_producing_nan():
    x = np.array([1.0, 2.0, 3.0], np.float32)
    app = StepperApp(NAN_PROGRAM, inputs=[x])
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await settle(pilot)
        await pilot.press("B")
        await pilot.pause()
        dialog = bp_dialog(app)
        switch = dialog.query_one("#bp-nonfinite")
        assert not switch.value
        await pilot.click("#bp-nonfinite")
        await pilot.pause()
        assert switch.value
        assert [b.kind for b in screen.session.breakpoints] == ["nonfinite"]
        assert "NaN" in str(dialog.query_one("#bp-list").get_option_at_index(0).prompt)
        await pilot.press("escape", "c")
        screen = await settle(pilot)
        ev = screen.session.current
        assert ev.op.name == "stablehlo.log" and screen.query_one(SourceView).current_line == 4
        assert np.isnan(ev.outputs[0]).all()
        assert "breakpoint" in text_of(screen, "#stepper-message")
        # "nan" typed does the same; turning it off runs to the end
        await pilot.press("B")
        await pilot.pause()
        assert await add_bp(pilot, "nan") == ""
        assert [b.kind for b in screen.session.breakpoints] == ["nonfinite"]  # not twice
        await pilot.click("#bp-nonfinite")
        await pilot.pause()
        assert screen.session.breakpoints == []
        await pilot.press("escape", "c")
        screen = await settle(pilot)
        assert screen.session.finished


# --- the paste draft survives quitting --------------------------------------------------------------

@sync
async def test_pasted_text_survives_quit_and_a_successful_load_clears_it(tmp_path):
    from hlolab.tui.app import HloLabApp
    from hlolab.tui.drafts import draft_path

    path = tmp_path / "p.mlir"
    path.write_text(PAD_SLICE_ADD)
    typed = "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  %0 = stablehlo.abs %a"
    app = HloLabApp(open_path=str(path))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert isinstance(app.screen, ProgramDialog)
        area = app.screen.query_one(TextArea)
        assert area.text == ""
        area.focus()
        await pilot.press(*typed.replace("\n", "\r").split("\r")[0])  # typed, as a user does
        area.insert("\n" + typed.split("\n", 1)[1])  # the rest as a paste
        await pilot.press("ctrl+q")  # before the autosave's debounce: quitting saves it
        await pilot.pause()
    assert app.return_code == 0
    assert draft_path().read_text() == typed

    app = HloLabApp(open_path=str(path))  # a new run of the app
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+o")
        await pilot.pause()
        area = app.screen.query_one(TextArea)
        assert area.text == typed  # the text is back
        area.text = typed + " : tensor<2xf32>\n  func.return %0 : tensor<2xf32>\n}\n"
        await pilot.press("ctrl+s")
        screen = await settle(pilot)
        assert app.screen is screen and screen.filename == "<pasted>"
        assert not draft_path().exists()  # loaded: the draft is gone
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert app.screen.query_one(TextArea).text == ""


@sync
async def test_draft_is_autosaved_while_typing(tmp_path):
    from hlolab.tui.drafts import draft_path

    app = StepperApp(PAD_SLICE_ADD)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+o")
        await pilot.pause()
        dialog = app.screen
        dialog.query_one(TextArea).text = "func.func @main("
        for _ in range(1000):  # the debounced save (waiting on the app, not asserting a time)
            await pilot.pause(0.05)
            if draft_path().exists():
                break
        assert draft_path().read_text() == "func.func @main("


@sync
async def test_open_binds_given_inputs_and_fills_the_rest_from_the_seed(tmp_path):
    # hlolab open FILE --input a.npy --seed 1 on a 4-argument function (issue 24)
    from hlolab.cli import _load_inputs, build_parser
    from hlolab.interp.inputs import random_args
    from hlolab.tui.app import HloLabApp
    from tests.test_cli import FOUR

    f = tmp_path / "four.mlir"
    f.write_text(FOUR)
    np.save(tmp_path / "a.npy", np.array([1.0, 2.0, 3.0], np.float32))
    ns = build_parser().parse_args(["open", str(f), "--input", str(tmp_path / "a.npy"), "--seed", "1"])
    inputs = _load_inputs(ns)
    app = HloLabApp(open_path=str(f), inputs=inputs, seed=ns.seed)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await settle(pilot)
        args = screen.session.args
        assert len(args) == 4 and args[0].tolist() == [1.0, 2.0, 3.0]
        # the others are what --seed 1 makes for arguments #1..#3 (the seed's draws start there)
        want = random_args(screen.session.func, [args[0]], 1)
        assert [a.tolist() for a in args[1:]] == [a.tolist() for a in want[1:]]
        assert args[1].tolist() != args[2].tolist()
        assert screen.describe_inputs() == "inputs: 1 given + random seed 1"


# --- Enter on a source line, focus, Tab order (issue 24, defect 2) ---------------------------------

@sync
async def test_enter_on_an_op_line_selects_its_result_then_enter_traces():
    """PAD_SLICE_ADD: Enter on the slice (line 4) runs to it and focuses its result; Enter
    there traces %s[1] = %p[2] = %x[0]; Enter on the pad (line 3) goes back to it."""
    app = StepperApp(PAD_SLICE_ADD, inputs=[np.arange(4, dtype=np.float32) + 1,
                                            np.full(3, 10, np.float32)])
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await settle(pilot)
        source = screen.query_one(SourceView)
        assert screen.session.current is None
        await pilot.press("down", "down", "down", "enter")
        screen = await settle(pilot)
        assert source.cursor_line == 4
        ev = screen.session.current
        assert ev.op.name == "stablehlo.slice" and source.current_line == 4
        assert screen.query_one(TabbedContent).active == "tab-op"
        await pilot.pause()
        out = screen.query_one("#stepper-outputs", ValueList).grids()
        assert screen.focused is out[0][1]  # the result grid, where Enter traces
        np.testing.assert_array_equal(out[0][1].value, [0, 1, 2])
        await pilot.press("right", "enter")
        screen = await settle(pilot)
        assert screen.trace is not None and screen.trace.index == (1,)
        x_sources = screen.trace.mask(value=(0, 0))  # ARGS_NODE 0: %x
        assert np.argwhere(x_sources).tolist() == [[0]]
        # back to the pad, already executed: the cursor moves back, nothing runs
        screen.query_one(SourceView).focus()
        await pilot.press("up", "enter")
        screen = await settle(pilot)
        assert screen.session.current.op.name == "stablehlo.pad"
        assert len(screen.session.history) == 3  # constant, pad, slice: no op ran again
        # a line without an op changes nothing
        screen.query_one(SourceView).focus()
        await pilot.press("home", "enter")
        screen = await settle(pilot)
        assert screen.session.current.op.name == "stablehlo.pad"


@sync
async def test_tab_order_has_no_invisible_stops_and_focus_is_marked():
    path = EXAMPLES / "mlp_step.mlir"
    app = StepperApp(path.read_text(), path=str(path))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("n")
        screen = await settle(pilot)
        chain = screen.focus_chain
        kinds = [type(w).__name__ for w in chain]
        # dot_general: source, tabs, then its two operand grids and its result grid
        assert kinds == ["ProcessSourceView", "ContentTabs", "TensorGrid", "TensorGrid", "TensorGrid"]
        assert screen.focused is chain[0]
        await pilot.press("tab", "tab", "tab", "tab")
        out = screen.query_one("#stepper-outputs", ValueList).grids()[0][1]
        assert screen.focused is out
        # the focused grid and the focused source view wear a heavy accent border
        assert out.styles.border_top[0] == "heavy"
        ins = screen.query_one("#stepper-inputs", ValueList).grids()[0][1]
        assert ins.styles.border_top[0] == "round"
        assert screen.query_one(SourceView).styles.border_top[0] != "heavy"


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
@sync
async def test_trace_tree_fits_the_pane_and_keeps_its_guides(size):
    """The trace is drawn while its tab is still hidden: it is wrapped to the pane's width
    anyway, every continuation line under the guides of its tree."""
    path = EXAMPLES / "mlp_step.mlir"
    app = StepperApp(path.read_text(), path=str(path))
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("c")
        screen = await settle(pilot)
        grid = screen.query_one("#stepper-results", ValueList).grid(("result", 1))
        grid.focus()
        grid.move_cursor((1, 2))
        await pilot.press("enter")
        screen = await settle(pilot)
        await pilot.pause()
        width = screen.query_one("#stepper-trace").content_size.width
        lines = text_of(screen, "#stepper-trace").rstrip("\n").split("\n")
        tree = lines[lines.index(next(s for s in lines if s.startswith("%9[1, 2]"))):]
        assert all(len(line.rstrip()) <= width for line in tree)
        assert all(line[0] in "%d├│└ " for line in tree)  # every line of the tree under a guide
        assert sum(line.startswith("│ ") for line in tree) > 5


@sync
async def test_a_line_inside_a_multi_line_op_means_that_op():
    """SQUARING_WHILE: the while's text spans lines 4-12; Enter on its closing line 12 goes to
    the while, t sets the breakpoint on line 4; a line holding no op says so."""
    app = StepperApp(SQUARING_WHILE, inputs=[np.array(2, np.int64), np.ones(8, np.float32)])
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await settle(pilot)
        source = screen.query_one(SourceView)
        assert source.op_at(12) == 4 and source.op_at(10) == 10 and source.op_at(11) == 4
        assert source.op_at(1) is None  # func.func: no op
        source.cursor_line = 12
        await pilot.press("enter")
        screen = await settle(pilot)
        assert screen.session.current.op.name == "stablehlo.while"
        await pilot.press("t")
        assert source.breakpoints == {4}


GRID_ALL_REDUCE = """module @g attributes {mhlo.num_replicas = 2 : i32, mhlo.num_partitions = 1 : i32} {
  func.func @main(%x : tensor<2xf32>) -> tensor<2xf32> {
    %h = stablehlo.multiply %x, %x : tensor<2xf32>
    %s = "stablehlo.all_reduce"(%h) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %r = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %r : tensor<f32>
    }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xf32>) -> tensor<2xf32>
    return %s : tensor<2xf32>
  }
}"""


@sync
async def test_a_grid_program_names_the_process_of_each_step_and_where_every_process_is():
    app = StepperApp(GRID_ALL_REDUCE)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("n")  # lockstep (the default on a grid): both processes' multiply
        screen = await settle(pilot)
        assert [(ev.op.name, ev.frame.process) for ev in screen.session.history] == \
            [("stablehlo.multiply", 0), ("stablehlo.multiply", 1)]
        header = text_of(screen, "#stepper-op")
        assert "process 0 (replica 0, partition 0)" in header and "multiply  line 3" in header
        panel = text_of(screen, "#stepper-processes")
        assert "%h = multiply line 3" in panel and "process 1" in panel
        await pilot.press("n")  # the all_reduce of the group, each process's
        screen = await settle(pilot)
        header = text_of(screen, "#stepper-op")
        assert screen.session.current.op.name == "stablehlo.all_reduce"
        assert "all_reduce  line 4" in header
