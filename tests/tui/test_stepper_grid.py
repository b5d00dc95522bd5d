"""The stepper on a process grid (hlolab/examples/grid_matmul.mlir: 4 partitions, each
multiplies its row block of x by w, then an all_gather): the per-process panel (a column
per process at 120 columns, tabs at 80), focus keys (p/P), the mode key (m: lockstep /
one process), w (run the others to the rendezvous), values of the focused process, the
source markers of every process's line, and every key in both modes at both sizes.

Expected values are computed here with numpy from the arguments the session bound."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("textual")

from hlolab.tui.widgets.processes import ProcessPanel, ProcessSourceView  # noqa: E402
from hlolab.tui.widgets.values import ValueList  # noqa: E402
from tests.tui.test_stepper import StepperApp, settle, sync, text_of  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[2] / "hlolab" / "examples" / "grid_matmul.mlir"
W = np.array([[1.0, 0.0, 2.0], [0.0, 1.0, -1.0], [1.0, 1.0, 0.0], [0.5, -2.0, 1.0]], np.float32)


def app() -> StepperApp:
    return StepperApp(EXAMPLE.read_text(), path="grid_matmul.mlir")


def shards(screen) -> list[np.ndarray]:
    return [a[0] for a in screen.session.process_args]


def grid_values(screen, selector: str) -> dict[str, np.ndarray]:
    """Title -> value of the grids a ValueList shows."""
    lst = screen.query_one(selector, ValueList)
    return {str(g.border_title).split(" :")[0]: g.value for _, g in lst.grids()}


def columns(screen) -> list[str]:
    return screen.query_one(ProcessPanel).column_texts()


@sync
async def test_the_panel_shows_every_process_and_lockstep_steps_them_all():
    async with app().run_test(size=(120, 40)) as pilot:
        screen = await settle(pilot)
        cols = columns(screen)
        assert len(cols) == 4
        assert cols[0].split("\n") == ["▶ process 0 (replica 0, partition 0)", "not started", "ready"]
        assert cols[3].split("\n") == ["process 3 (replica 0, partition 3)", "not started", "ready"]
        assert "lockstep (m)" in text_of(screen, "#stepper-status-text")
        await pilot.press("n", "n")
        screen = await settle(pilot)
        assert len(screen.session.history) == 8
        for col in columns(screen):
            assert col.split("\n")[1:] == ["%y = dot_general line 6", "ready"]
        assert screen.query_one(ProcessSourceView).process_marks == {6: [0, 1, 2, 3]}
        assert screen.query_one(ProcessSourceView).current_line == 6
        # process 0's values: its own block of x and its product
        x = shards(screen)
        ins = grid_values(screen, "#stepper-inputs")
        np.testing.assert_array_equal(ins["%x@(0, 0)"], x[0])
        outs = grid_values(screen, "#stepper-outputs")
        np.testing.assert_allclose(outs["%y@(0, 0)"], x[0] @ W, rtol=1e-6)
        await pilot.press("n")  # the all_gather, every process's
        screen = await settle(pilot)
        assert len(screen.session.history) == 12
        want = np.concatenate([x[p] @ W for p in range(4)])
        np.testing.assert_allclose(grid_values(screen, "#stepper-outputs")["%all@(0, 0)"], want, rtol=1e-6)
        assert screen.query_one(ProcessSourceView).process_marks == {7: [0, 1, 2, 3]}
        await pilot.press("b")  # back one lockstep step: every process at its dot_general
        screen = await settle(pilot)
        assert screen.session.cursor == 8
        assert all(col.split("\n")[1] == "%y = dot_general line 6" for col in columns(screen))


@sync
async def test_focus_and_one_process_mode_through_the_all_gather():
    async with app().run_test(size=(120, 40)) as pilot:
        screen = await settle(pilot)
        x = shards(screen)
        await pilot.press("p")  # focus process 1
        screen = await settle(pilot)
        assert columns(screen)[1].startswith("▶ process 1 (replica 0, partition 1)")
        assert not columns(screen)[0].startswith("▶")
        await pilot.press("m")  # one process: only process 1 runs
        screen = await settle(pilot)
        assert "one process: 1 (m)" in text_of(screen, "#stepper-status-text")
        await pilot.press("n", "n")
        screen = await settle(pilot)
        assert [ev.frame.process for ev in screen.session.history] == [1, 1]
        header = text_of(screen, "#stepper-op")
        assert "dot_general  line 6" in header and "process 1 (replica 0, partition 1)" in header
        np.testing.assert_allclose(grid_values(screen, "#stepper-outputs")["%y@(0, 1)"], x[1] @ W,
                                   rtol=1e-6)
        cols = columns(screen)
        assert cols[0].split("\n")[1:] == ["not started", "ready"]
        await pilot.press("n")  # it arrives at the all_gather and waits: nobody else runs
        screen = await settle(pilot)
        assert len(screen.session.history) == 2
        message = text_of(screen, "#stepper-message")
        assert "process 1 (replica 0, partition 1) waits at all_gather line 7 for 0, 2, 3" in message
        assert "w: run the others to it" in message
        assert columns(screen)[1].split("\n")[2] == "waits at all_gather line 7 for 0, 2, 3"
        assert screen.query_one(ProcessSourceView).process_marks == {7: [1]}
        await pilot.press("w")  # the others to the rendezvous
        screen = await settle(pilot)
        assert "can go on" in text_of(screen, "#stepper-message")
        met = "met its group at all_gather line 7; the result comes next"
        assert columns(screen)[1].split("\n")[2] == met
        await pilot.press("n")  # process 1's all_gather
        screen = await settle(pilot)
        want = np.concatenate([x[p] @ W for p in range(4)])
        np.testing.assert_allclose(grid_values(screen, "#stepper-outputs")["%all@(0, 1)"], want, rtol=1e-6)
        await pilot.press("P")  # back to process 0: its own op and values
        screen = await settle(pilot)
        assert "one process: 0 (m)" in text_of(screen, "#stepper-status-text")
        assert "process 0 (replica 0, partition 0)" in text_of(screen, "#stepper-op")
        np.testing.assert_allclose(grid_values(screen, "#stepper-outputs")["%y@(0, 0)"], x[0] @ W,
                                   rtol=1e-6)
        np.testing.assert_array_equal(grid_values(screen, "#stepper-args")["%x@(0, 0)"], x[0])
        await pilot.press("c")  # process 0 to its end
        screen = await settle(pilot)
        assert "process 0 (replica 0, partition 0) has finished" in text_of(screen, "#stepper-message")
        await pilot.press("m", "c")  # lockstep again; c runs every process to the end
        screen = await settle(pilot)
        assert screen.session.results is not None
        res = grid_values(screen, "#stepper-results")
        np.testing.assert_allclose(res["result #0@(0, 0)"], want, rtol=1e-6)
        assert [c.split("\n")[2] for c in columns(screen)] == ["finished: 1 result"] * 4


@sync
async def test_at_80_columns_the_processes_are_tabs():
    async with app().run_test(size=(80, 24)) as pilot:
        screen = await settle(pilot)
        await pilot.press("n", "n", "p")
        screen = await settle(pilot)
        panel = screen.query_one(ProcessPanel)
        assert panel.tabbed
        lines = text_of(screen, "#stepper-processes").splitlines()
        assert lines[0].strip().startswith("0:ready │ 1:ready │ 2:ready │ 3:ready │ lockstep")
        assert lines[1].strip() == "▶ process 1 (replica 0, partition 1) · %y = dot_general line 6 · ready"
        await pilot.press("m", "n")
        screen = await settle(pilot)
        lines = text_of(screen, "#stepper-processes").splitlines()
        assert "1:waits" in lines[0] and "one process: 1" in lines[0]


# every key the stepper binds, with the dialogs it opens closed again (escape)
KEYS = ["n", "s", "b", "o", "f", "g", "t", "e", "escape", "1", "2", "3", "p", "P", "w", "enter",
        "tab", "down", "up", "B", "escape", "i", "escape", "ctrl+o", "escape", "r", "n", "n", "n",
        "w", "p", "n", "P", "c", "b", "b", "w", "m"]


@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])
@sync
async def test_every_key_in_both_modes_does_not_crash(size):
    async with app().run_test(size=size) as pilot:
        await settle(pilot)
        for mode in range(2):
            for key in KEYS:
                await pilot.press(key)
                await settle(pilot)
            screen = await settle(pilot)
            if mode == 0:  # the keys end with m: the next round runs in the other mode
                assert screen.one_process
        errors = [str(n.message) for n in pilot.app._notifications if "internal error" in str(n.message)]
        assert errors == []
        assert screen.session is not None and screen.query_one(ProcessPanel).display


# --- snapshots -----------------------------------------------------------------------------------

async def _to_the_rendezvous(pilot) -> None:
    await settle(pilot)
    await pilot.press("n", "n", "p", "m", "n")  # lockstep twice, then process 1 alone: it waits
    await settle(pilot)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_snapshot(snap_compare, size):
    assert snap_compare(app(), terminal_size=size, run_before=_to_the_rendezvous)
