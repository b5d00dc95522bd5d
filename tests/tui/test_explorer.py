"""The op explorer driven through Pilot: provenance highlights both ways, live
parameter validation, presets, and every op opening with its defaults."""

from __future__ import annotations

import numpy as np
import pytest

from hlolab.ops.examples import make_example, schema_ops
from hlolab.session import Session
from hlolab.trace.roles import ROLE_ORDER
from hlolab.tui.app import HloLabApp
from hlolab.tui.screens.explorer import ExplorerScreen
from hlolab.tui.widgets.grid import TensorGrid

from .conftest import run, settle


def gather_event(preset: str = "default"):
    ex = make_example("gather", preset)
    s = Session(ex.text)
    s.bind(ex.inputs)
    s.run()
    ev = [e for e in s.history if e.op.name == "stablehlo.gather"][-1]
    return ex, s.event(ev.id)


def expected_sources(prov, index) -> dict[str, dict[tuple[int, ...], str]]:
    """Operand cells of result element ``index`` straight from provenance (not OpView)."""
    order = {r: k for k, r in enumerate(ROLE_ORDER)}
    out: dict[str, dict[tuple[int, ...], str]] = {}
    for s in prov.sources(0, index):
        cells = out.setdefault(f"operand{s.operand}", {})
        old = cells.get(s.index)
        if old is None or order[s.role] < order[old]:
            cells[s.index] = s.role
    return out


def test_result_cursor_highlights_exactly_its_sources():
    ex, event = gather_event()
    prov = event.provenance()
    target = (0, 1, 0)
    want = expected_sources(prov, target)
    assert want["operand0"] and want["operand1"]  # a copy and the index reads

    async def body():
        async with HloLabApp(open_op="gather").run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            screen = pilot.app.screen
            assert isinstance(screen, ExplorerScreen)
            result = screen.grid("result0")
            assert result.has_focus
            assert result.cursor == ex.index  # the preset's interesting element
            result.move_cursor(target)
            await pilot.pause()
            assert screen.grid("operand0").highlights == want["operand0"]
            assert screen.grid("operand1").highlights == want["operand1"]
            assert result.highlights == {target: "result"}
            # the explain panel shows this element's derivation and its value
            text = screen.query_one("#explain").text
            assert "gather result[0, 1, 0]" in text
            assert str(event.outputs[0][target]) in text
            # keys move it too: one step right in the last axis
            await pilot.press("right")
            moved = (0, 1, 1)
            assert result.cursor == moved
            assert screen.grid("operand0").highlights == expected_sources(prov, moved)["operand0"]

    run(body)


def test_operand_cursor_highlights_the_results_it_feeds():
    _, event = gather_event()
    prov = event.provenance()
    cell = (1, 1)
    want = {t.index: t.role for t in prov.targets(0, cell)}
    assert len(want) >= 2  # overlapping windows: this element feeds two results

    async def body():
        async with HloLabApp(open_op="gather").run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            screen = pilot.app.screen
            operand = screen.grid("operand0")
            operand.focus()
            await pilot.pause()
            operand.move_cursor(cell)
            await pilot.pause()
            assert screen.grid("result0").highlights == want
            assert screen.grid("operand1").highlights == {}
            assert "flows into 2 elements of %result" in screen.query_one("#explain").text

    run(body)


def test_invalid_parameter_shows_the_constraint_and_keeps_the_view():
    async def body():
        async with HloLabApp(open_op="gather").run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            screen = pilot.app.screen
            before = screen.grid("result0").value.copy()
            operand_before = screen.grid("operand0").value.copy()
            panel = screen.query_one("#params")
            field = panel.field("index_vector_dim")
            field.focus()
            await pilot.press("end", "backspace", "7", "enter")  # as a user types it
            await settle(pilot)
            error = screen.query_one("#error")
            assert error.display
            assert "gather (C2)" in screen.error
            assert "index_vector_dim = 7 must be in [0, 2]" in screen.error
            assert field.value == "7"
            assert "gather (C2)" in str(error.render())
            np.testing.assert_array_equal(screen.grid("result0").value, before)
            np.testing.assert_array_equal(screen.grid("operand0").value, operand_before)
            # fixing it clears the error
            await pilot.press("backspace", "1", "enter")
            await settle(pilot)
            assert screen.error == ""
            assert not error.display

    run(body)


def test_malformed_field_is_reported_without_building():
    async def body():
        async with HloLabApp(open_op="gather").run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            screen = pilot.app.screen
            panel = screen.query_one("#params")
            panel.set_field("slice_sizes", "2,x")
            await settle(pilot)
            assert "slice_sizes" in screen.error
            assert panel.field("slice_sizes").has_class("-invalid")
            assert screen.grid("result0").value.shape == (2, 2, 2)

    run(body)


def test_preset_switch_changes_the_operand_shape():
    async def body():
        async with HloLabApp(open_op="gather").run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            screen = pilot.app.screen
            assert screen.grid("operand0").value.shape == (4, 5)
            screen.query_one("#preset").value = "spec-example"
            await settle(pilot)
            assert screen.error == ""
            assert screen.grid("operand0").value.shape == (2, 3, 4, 2)
            assert screen.query_one("#params").field("operand").value == "2x3x4x2"
            ex = make_example("gather", "spec-example")
            assert screen.grid("result0").cursor == ex.index
            # rank-5 result: the highlighted sources sit on slices of a rank-4 operand
            assert screen.grid("operand0").highlights

    run(body)


def test_step_and_play_move_the_result_cursor_row_major():
    async def body():
        async with HloLabApp(open_op="gather").run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            screen = pilot.app.screen
            result = screen.grid("result0")
            result.move_cursor((1, 1, 1))  # the last element: the next step wraps
            await pilot.press("n")
            assert result.cursor == (0, 0, 0)
            await pilot.press("n")
            assert result.cursor == (0, 0, 1)
            await pilot.press("p", "p")
            assert result.cursor == (1, 1, 1)
            await pilot.press("space")
            assert screen.playing
            await pilot.press("space")
            assert not screen.playing

    run(body)


OPS = schema_ops()


def test_every_op_opens_with_its_defaults():
    """One app; each op's explorer is pushed, built and popped (fast)."""
    failures: dict[str, str] = {}

    async def body():
        async with HloLabApp().run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            for op in OPS:
                pilot.app.open_op(op)
                await settle(pilot)
                screen = pilot.app.screen
                if not isinstance(screen, ExplorerScreen):
                    failures[op] = "no explorer"
                    continue
                if screen.error or screen.built is None:
                    failures[op] = screen.error or "not built"
                elif not any(k.startswith("result") for k in screen.grid_keys):
                    failures[op] = "no result grid"
                else:
                    grids = [screen.grid(k) for k in screen.grid_keys]
                    if not all(isinstance(g, TensorGrid) and g.value is not None for g in grids):
                        failures[op] = "empty grid"
                    elif not screen.query_one("#explain").text:
                        failures[op] = "no explanation"
                pilot.app.pop_screen()
                await pilot.pause()

    run(body)
    assert not failures, failures
    assert len(OPS) > 50


@pytest.mark.parametrize("op", ["reduce_window", "pad", "convolution"])
def test_padding_sources_land_in_the_drawn_frame(op):
    """Padded ops: every highlighted cell lies inside the grid that shows it."""

    async def body():
        async with HloLabApp(open_op=op).run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            screen = pilot.app.screen
            assert screen.error == ""
            result = screen.grid("result0")
            shape = result.value.shape
            for flat in range(min(int(np.prod(shape)), 12)):
                result.move_cursor(tuple(int(i) for i in np.unravel_index(flat, shape)))
                await pilot.pause()
                for key in screen.grid_keys:
                    g = screen.grid(key)
                    for idx in g.highlights:
                        assert len(idx) == g.value.ndim
                        assert all(0 <= i < d for i, d in zip(idx, g.value.shape)), (key, idx)

    run(body)


def test_export_writes_the_file_and_says_where(tmp_path, monkeypatch):
    monkeypatch.setattr(ExplorerScreen, "EXPORT_DIR", tmp_path / "out")

    async def body():
        async with HloLabApp(open_op="gather").run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            await pilot.press("x")
            await pilot.pause()
            await pilot.press("s")  # the format modal: s = SVG
            await settle(pilot)
            path = tmp_path / "out" / "gather.svg"
            assert path.exists() and path.stat().st_size > 0
            assert any(f"wrote {path}" in str(n.message) for n in pilot.app._notifications)

    run(body)


def test_gif_export_walks_the_whole_result(tmp_path, monkeypatch):
    from PIL import Image

    monkeypatch.setattr(ExplorerScreen, "EXPORT_DIR", tmp_path / "out")

    async def body():
        async with HloLabApp(open_op="gather").run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            await pilot.press("x")
            await pilot.pause()
            await pilot.press("g")
            for _ in range(100):  # the export runs in a worker: wait for its notification
                await settle(pilot)
                if any("wrote" in str(n.message) for n in pilot.app._notifications):
                    break
            path = tmp_path / "out" / "gather.gif"
            assert Image.open(path).n_frames == 8  # one frame per element of the 2x2x2 result

    run(body)


def test_an_unexpected_error_in_a_handler_is_a_notification_not_a_crash(monkeypatch):
    def boom(self, *a, **k):
        raise RuntimeError("kaboom")

    async def body():
        async with HloLabApp(open_op="gather").run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            monkeypatch.setattr(ExplorerScreen, "_show_sources", boom)
            await pilot.press("up")
            await pilot.pause()
            assert any("kaboom" in str(n.message) for n in pilot.app._notifications)
            assert isinstance(pilot.app.screen, ExplorerScreen)  # still running
            monkeypatch.undo()
            await pilot.press("down")
            await pilot.pause()
            assert pilot.app.screen.grid("operand0").highlights

    run(body)


# --- custom input fill ---------------------------------------------------------------------------

def gather_result(inputs: dict) -> np.ndarray:
    """The gather's result for these operand values, run independently of the screen."""
    ex = make_example("gather", inputs=inputs)
    s = Session(ex.text)
    s.bind(ex.inputs)
    s.run()
    return [e for e in s.history if e.op.name == "stablehlo.gather"][-1].outputs[0]


def test_custom_values_for_the_gather_operand_change_the_result():
    operand = (np.arange(20, dtype=np.float32).reshape(4, 5) * 10 + 1)
    literal = "dense<" + str(operand.astype(int).tolist()) + ">"
    want = gather_result({"operand": operand})
    assert not np.array_equal(want, gather_result({}))

    async def body():
        async with HloLabApp(open_op="gather").run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            screen = pilot.app.screen
            panel = screen.query_one("#params")
            assert not panel.query_one("#custom-box").has_class("-shown")
            panel.query_one("#fill").value = "custom"  # as the Select does
            await settle(pilot)
            assert panel.query_one("#custom-box").has_class("-shown")
            assert panel.custom_operand == "operand"
            box = panel.query_one("#custom-values")
            box.focus()
            await pilot.press(*literal, "enter")  # typed as a user would
            await settle(pilot)
            assert screen.error == ""
            np.testing.assert_array_equal(screen.grid("operand0").value, operand)
            np.testing.assert_array_equal(screen.grid("result0").value, want)
            # a scalar broadcasts
            panel.set_custom("operand", "7")
            await settle(pilot)
            assert (screen.grid("result0").value == 7).all()
            # bad text: the reason inline, the field marked, the last good view kept
            panel.set_custom("operand", "[[1, 2], [3, x]]")
            await settle(pilot)
            assert "custom values for %operand" in screen.error and "'x'" in screen.error
            assert screen.query_one("#error").display
            assert box.has_class("-error")
            assert not any(panel.field(p.name).has_class("-error") for p in panel.schema.params)
            assert (screen.grid("result0").value == 7).all()
            panel.set_custom("operand", "[1, 2]")  # wrong shape: says which
            await settle(pilot)
            assert "tensor<4x5xf32>" in screen.error
            # fixing it clears the error
            panel.set_custom("operand", literal)
            await settle(pilot)
            assert screen.error == "" and not box.has_class("-error")
            np.testing.assert_array_equal(screen.grid("result0").value, want)
            # back to iota: the custom values no longer apply
            panel.query_one("#fill").value = "iota"
            await settle(pilot)
            np.testing.assert_array_equal(screen.grid("result0").value, gather_result({}))

    run(body)


# --- a verification error marks the parameter it names --------------------------------------------

def test_verification_error_marks_the_named_field_until_fixed():
    async def body():
        async with HloLabApp(open_op="gather").run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            screen = pilot.app.screen
            panel = screen.query_one("#params")
            field = panel.field("index_vector_dim")
            field.focus()
            await pilot.press("end", "backspace", "7", "enter")
            await settle(pilot)
            assert "index_vector_dim = 7" in screen.error
            assert field.has_class("-error")
            marked = {p.name for p in panel.schema.params if panel.field(p.name).has_class("-error")}
            assert marked == {"index_vector_dim"}  # start_indices is mentioned, not given a value
            await pilot.press("backspace", "1", "enter")
            await settle(pilot)
            assert screen.error == "" and not field.has_class("-error")
            # a constraint over several parameters marks each one it names
            panel.set_field("offset_dims", "0,1,2")
            await settle(pilot)
            marked = {p.name for p in panel.schema.params if panel.field(p.name).has_class("-error")}
            assert {"offset_dims", "collapsed_slice_dims"} <= marked and "slice_sizes" not in marked
            panel.set_field("offset_dims", "1,2")
            await settle(pilot)
            assert not any(panel.field(p.name).has_class("-error") for p in panel.schema.params)

    run(body)


# --- quitting with edits that do not build asks first ----------------------------------------------

def test_quit_with_parameter_edits_that_do_not_build_asks():
    from hlolab.tui.screens.quit import ConfirmQuit

    async def body():
        app = HloLabApp(open_op="gather")
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            screen = app.screen
            screen.query_one("#params").set_field("index_vector_dim", "7")
            await settle(pilot)
            await pilot.press("ctrl+q")
            await pilot.pause()
            assert isinstance(app.screen, ConfirmQuit)
            assert "explorer: parameter edits that do not build" in str(app.screen.query_one("#quit-lost")
                                                                         .render())
            await pilot.press("n")  # stay
            await pilot.pause()
            assert app.screen is screen and app.is_running
            screen.query_one("#params").set_field("index_vector_dim", "1")
            await settle(pilot)
            assert app.unsaved() == []  # nothing left to lose: q quits at once
            await pilot.press("ctrl+q")
            await pilot.pause()
            assert isinstance(app.screen, ConfirmQuit) is False
        assert app.return_code == 0

    run(body)


def test_convolution_explorer_shows_spatial_planes_with_the_channel_as_slice():
    # default NHWC: lhs 1x5x5x1 read in its 7x7 frame (padding 1), kernel 3x3x1x1 (HWIO)
    async def body():
        async with HloLabApp(open_op="convolution").run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            screen = pilot.app.screen
            lhs, rhs, result = screen.grid("operand0"), screen.grid("operand1"), screen.grid("result0")
            assert lhs.value.shape == (1, 7, 7, 1) and lhs.grid_axes == (1, 2)
            assert rhs.value.shape == (3, 3, 1, 1) and rhs.grid_axes == (0, 1)  # HWIO: H and W
            assert result.value.shape == (1, 5, 5, 1) and result.grid_axes == (1, 2)
            lines = [lhs.render_line(y).text for y in range(lhs.size.height)]
            assert lines[0].startswith("slice [0, :, :, 0] of 1x1")
            assert lines[1].split() == [str(c) for c in range(7)]  # seven frame columns
            # the chosen output element's window: a 3x3 block of the frame, one kernel cell each
            idx = result.index
            assert idx == (0, 2, 2, 0)
            window = {k for k, role in lhs.highlights.items() if role == "window"}
            assert window == {(0, r, c, 0) for r in range(2, 5) for c in range(2, 5)}
            assert {k for k, role in rhs.highlights.items() if role == "kernel"} == \
                {(r, c, 0, 0) for r in range(3) for c in range(3)}
            # the corner element reads padding: its window includes frame row 0 and column 0
            result.move_cursor((0, 0, 0, 0))
            await pilot.pause()
            text = screen.query_one("#explain").text
            assert "convolution result[0, 0, 0, 0]" in text and "padding" in text

    run(body)
