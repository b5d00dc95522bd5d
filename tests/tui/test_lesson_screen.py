"""The TUI lesson viewer: lesson 6 completed end to end through the widgets (keys, one
mouse click, wrong answers rejected), progress written atomically under a temporary
XDG_STATE_HOME, the lesson list with progress, the language switch, and answers that
cannot be read (never an exception)."""

from __future__ import annotations

import json

import pytest
from textual.widgets import Button, Input, Select, TextArea

from hlolab.lessons.progress import Progress
from hlolab.tui.app import HloLabApp
from hlolab.tui.screens.lesson import LessonScreen, LessonsListScreen, ProgramBlock, ProseBlock, ViewBlock
from hlolab.tui.widgets.grid import TensorGrid
from hlolab.tui.widgets.lesson_exercise import ExerciseBox, PickGrid, edits_of

from .conftest import run, settle

LESSON6 = ["rows-value", "windows-sources", "spec-shape", "spec-value", "columns-fill", "rows-fix"]


@pytest.fixture(autouse=True)
def _state_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("HLOLAB_LANG", raising=False)
    return tmp_path / "state" / "hlolab" / "lessons.json"


async def _goto(pilot, box: ExerciseBox, limit: int = 60) -> None:
    """Press n until the exercise ``box`` is the block in focus (n never types into a box
    here: each box is left with Esc or by answering it right)."""
    screen = pilot.app.screen
    for _ in range(limit):
        if screen.current is box:
            return
        await pilot.press("n")
        await pilot.pause()
    raise AssertionError(f"n never reached {box.ex.id}")


async def _type(pilot, text: str) -> None:
    await pilot.press(*list(text))


def _cell_offset(grid: PickGrid, index: tuple[int, int]) -> tuple[int, int]:
    """Where to click cell ``index`` of a 2-D grid (widget offset: border, labels, header)."""
    lw, cw = grid._label_width(), grid._cell_width()
    return 1 + lw + index[1] * cw + cw - 1, 1 + grid._n_header + index[0]


def test_lesson_6_end_to_end(_state_home):
    async def body():
        async with HloLabApp(open_lesson="6", lang="en").run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            screen = pilot.app.screen
            assert isinstance(screen, LessonScreen)
            boxes = screen.boxes
            assert [b.ex.id for b in boxes] == LESSON6
            # opening the lesson makes it the current one, on disk
            assert json.loads(_state_home.read_text())["languages"]["en"]["current"] == "gather"

            # the program's printed %rows would answer exercise 1: held back, on both sides
            rows = next(p for p in screen.query(ProgramBlock) if p.block.name == "rows")

            def results_text() -> str:
                return str(rows.query_one(".results").render())

            assert "%rows : hidden until you answer exercise 1" in results_text()
            assert "21" not in results_text()
            rows.focus()
            await settle(pilot)
            assert screen.live.main_grid is None and "%rows is hidden" in screen.live.title_text

            # 1. predict-value: a wrong number is rejected, a hint is shown, then the right one
            b = boxes[0]
            await _goto(pilot, b)
            assert pilot.app.focused is b  # on the box, n and p still move; typing starts the answer
            # the value asked for is hidden on the live side; its operands are shown
            assert screen.live.main_grid is None and "%rows is hidden" in screen.live.title_text
            await _type(pilot, "11")
            await pilot.press("enter")
            await pilot.pause()
            assert b.last is not None and not b.last.ok
            assert "%rows[2, 1] is not 11" in b.verdict_text
            assert not Progress.load(_state_home).is_done("en", "gather", "rows-value")
            await pilot.press("escape")  # out of the box: h and s are keys again
            await pilot.press("h")
            await pilot.pause()
            assert b.hints_shown == 1
            b.focus_answer()
            await _type(pilot, "21")  # the wrong answer is selected: typing replaces it
            assert b.query_one(Input).value == "21"
            await pilot.press("enter")
            await pilot.pause()
            assert b.solved and "Right: %rows[2, 1] = 21" in b.verdict_text
            assert Progress.load(_state_home).is_done("en", "gather", "rows-value")
            assert screen.live.main_grid is not None  # answered: the value itself is shown now
            await settle(pilot)
            assert "[[20 21 22]" in results_text()  # and the program's results too

            # 2. pick-sources: a wrong cell picked by keys is rejected; then a mouse click picks
            b = boxes[1]
            await _goto(pilot, b)
            grid = b.query_one(PickGrid)
            assert pilot.app.focused is grid and grid.index == (0, 0)
            await pilot.press("down", "right", "right", "space", "enter")
            await pilot.pause()
            assert grid.picked == [(1, 2)]
            assert not b.last.ok and "does not read [1, 2]" in b.verdict_text
            await pilot.press("space")  # unpick (1, 2)
            assert grid.picked == []
            await pilot.click(grid, offset=_cell_offset(grid, (2, 2)))
            await pilot.pause()
            assert grid.picked == [(2, 2)] and grid.highlights == {(2, 2): "selected"}
            await pilot.press("enter")
            await pilot.pause()
            assert b.solved and "reads [2, 2] of %operand" in b.verdict_text

            # 3. predict-shape
            b = boxes[2]
            await _goto(pilot, b)
            await _type(pilot, "2x3x2x2")
            await pilot.press("enter")
            await pilot.pause()
            assert not b.last.ok
            await _type(pilot, "2x2x3x2x2")
            await pilot.press("enter")
            await pilot.pause()
            assert b.solved

            # 4. predict-value, with "show me" played first (the explanation of the element)
            b = boxes[3]
            await _goto(pilot, b)
            await pilot.press("s")
            await pilot.pause()
            assert screen.live.name_shown == "%result" and screen.live.main_grid.index == (1, 0, 1, 1, 0)
            assert "The answer: 15" in b.verdict_text
            before = screen.live.explain_text
            assert "result[1, 0, 1, 1, 0] = 15" in before
            screen.live.step()  # what the animation does each tick: the next element, explained
            await pilot.pause()
            assert screen.live.main_grid.index == (1, 0, 1, 1, 1)
            assert screen.live.explain_text != before and "result[1, 0, 1, 1, 1]" in screen.live.explain_text
            b.focus_answer()
            await _type(pilot, "15")
            await pilot.press("enter")
            await pilot.pause()
            assert b.solved

            # 5. fill-attributes: Enter goes blank to blank, the last one checks
            b = boxes[4]
            await _goto(pilot, b)
            assert screen.live.title_text == "the target"
            assert screen.live.query("TensorGrid").first().value.tolist() == [[4, 8, 12], [2, 6, 10]]
            inputs = list(b.query(".blank-input").results(Input))
            assert [i.name for i in inputs] == ["offset_dims", "collapsed_slice_dims", "start_index_map"]
            await pilot.press("enter")  # into the first blank
            assert pilot.app.focused is inputs[0]
            await _type(pilot, "1")
            await pilot.press("enter")
            assert pilot.app.focused is inputs[1]
            await _type(pilot, "1")
            await pilot.press("enter")
            await _type(pilot, "0")
            await pilot.press("enter")
            await pilot.pause()
            assert not b.last.ok and "not the target" in b.verdict_text  # runs, wrong tensor
            inputs[2].focus()
            await pilot.press("backspace")
            await _type(pilot, "1")
            await pilot.press("enter")
            await pilot.pause()
            assert b.solved

            # 6. fix-program: run as it is (the (C9) error), then edit line 10 in the editor
            b = boxes[5]
            await _goto(pilot, b)
            area = b.query_one(TextArea)
            await pilot.press("enter")  # into the editor
            assert pilot.app.focused is area
            assert "gather (C9)" in str(b.query_one(".fix-error").render())
            await pilot.press("ctrl+r")
            await pilot.pause()
            assert not b.last.ok and "(C9)" in b.verdict_text
            await pilot.press(*["down"] * 9, "end", *["left"] * 5, "delete", "1")
            assert area.text.splitlines()[9] == "    slice_sizes = array<i64: 1, 3>"
            await pilot.click(b.query_one("Button.check", Button))
            await pilot.pause()
            assert b.solved, b.verdict_text

            done = json.loads(_state_home.read_text())["languages"]["en"]
            assert sorted(done["completed"]["gather"]) == sorted(LESSON6)
            assert done["current"] == "gather"
            assert "[6/6]" in str(screen.query_one("#lesson-heading").render())
            # no temporary files are left beside the progress file
            assert sorted(p.name for p in _state_home.parent.iterdir()) == ["lessons.json"]

    run(body)


def test_resume_and_the_list_shows_progress(_state_home):
    p = Progress.load(_state_home)
    p.complete("en", "gather", "rows-value")
    p.complete("en", "gather", "windows-sources")
    p.complete("en", "tensors", "read-index")
    p.set_current("en", "gather")
    p.save()

    async def body():
        async with HloLabApp(lessons=True, lang="en").run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            screen = pilot.app.screen
            assert isinstance(screen, LessonsListScreen)
            rows = screen.row_texts
            assert len(rows) == 18
            row6 = next(r for r in rows if r.startswith(" 6"))
            assert row6.startswith(" 6  [2/6]  Gather") and row6.endswith("continue here")
            assert next(r for r in rows if r.startswith(" 1")).startswith(" 1  [1/")
            assert next(r for r in rows if r.startswith(" 7")).startswith(" 7  [0/")
            # the current lesson is highlighted: Enter opens it where it was left
            await pilot.press("enter")
            await settle(pilot)
            lesson = pilot.app.screen
            assert isinstance(lesson, LessonScreen) and lesson.lesson.order == 6
            assert lesson.current is lesson.boxes[2]  # the first exercise not done yet
            assert pilot.app.focused is lesson.boxes[2]
            await pilot.press("escape")
            await settle(pilot)
            assert isinstance(pilot.app.screen, LessonsListScreen)

    run(body)


def test_language_switch_shows_zh_ui_strings(_state_home):
    async def body():
        async with HloLabApp(open_lesson="6", lang="en").run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            screen = pilot.app.screen
            assert "Lesson 6" in str(screen.query_one("#lesson-heading").render())
            screen.query_one("#lesson-lang", Select).value = "zh"
            await settle(pilot)
            zh = pilot.app.screen
            assert isinstance(zh, LessonScreen) and zh is not screen and zh.lang == "zh"
            assert "第 6 课" in str(zh.query_one("#lesson-heading").render())
            box = zh.boxes[0]
            assert "练习 1/6" in str(box.query_one(".exercise-heading").render())
            assert str(box.query_one("Button.hint", Button).label) == "提示"
            # no zh.md yet: the English lesson, and a notice saying so in Chinese
            if "zh" not in {p.stem for p in zh.lesson.path.parent.glob("*.md")}:
                assert zh.lesson.path.name == "en.md"
                assert any("还没有" in str(n.render()) for n in zh.query(".notice"))
            assert pilot.app.lesson_lang == "zh"
            # the list follows the language
            await pilot.press("escape")
            await settle(pilot)
            lst = pilot.app.screen
            assert isinstance(lst, LessonsListScreen)
            assert lst.lang == "zh"
            assert "课程" in str(lst.query_one("#lessons-heading").render())

    run(body)


def test_answers_that_cannot_be_read_are_verdicts(_state_home):
    async def body():
        async with HloLabApp(open_lesson="6", lang="en").run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            screen = pilot.app.screen
            assert screen.has_class("-narrow")
            boxes = screen.boxes
            for text in ("[[", "abc", "1e999999", "tensor<", "--", "[1, [2]]", "nan"):
                for b in boxes[:4]:
                    if b.ex.kind == "pick-sources":
                        continue
                    b.query_one(Input).value = text
                    verdict = b.submit()
                    assert not verdict.ok
            fill = boxes[4]
            for i in fill.query(".blank-input").results(Input):
                i.value = "]]] ${x} \"'"
            assert not fill.submit().ok
            for i in fill.query(".blank-input").results(Input):
                i.value = ""
            v = fill.submit()
            assert not v.ok and "fill in every blank" in fill.verdict_text
            fix = boxes[5]
            area = fix.query_one(TextArea)
            for t in ("", "garbage", "func.func @main() {", "\n" * 40):
                area.text = t
                assert not fix.submit().ok
            # picking nothing is a verdict too
            assert not boxes[1].submit().ok
            # every key of the screen on every kind of block: no exception
            await pilot.press("v", "v", "a", "a", "o")
            await settle(pilot)
            assert isinstance(screen.current, ProseBlock)  # no program to open: a notification
            assert pilot.app.screen is screen
            assert any("no program" in str(n.message) for n in pilot.app._notifications)
            screen.query(ProgramBlock).first().focus()
            await pilot.press("o")
            await settle(pilot)
            # o opened the program of the block in focus in the stepper
            assert type(pilot.app.screen).__name__ == "StepperScreen"
            assert "stablehlo.gather" in pilot.app.screen.source
            pilot.app.pop_screen()
            await settle(pilot)
            for b in boxes:
                await _goto(pilot, b)
                await pilot.press("h", "s", "v", "v", "ctrl+r", "enter", "escape")
                assert pilot.app.screen is screen
                await pilot.pause()
            assert isinstance(pilot.app.screen, LessonScreen)
            assert not Progress.load(_state_home).completed("en", "gather")

    run(body)


def test_edits_of_the_editor_text():
    broken = "a\nb\nc\n"
    assert edits_of(broken, "a\nB\nc") == {"2": "B"}
    assert edits_of(broken, "a\nb\nc\n") == {}
    # a line added: the whole text as line 1, the others emptied
    assert edits_of(broken, "a\nb\nx\nc") == {"1": "a\nb\nx\nc", "2": "", "3": ""}


def test_home_and_palette_reach_the_lesson_list():
    async def body():
        async with HloLabApp().run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            await pilot.press(*"lessons")
            await pilot.pause()
            assert pilot.app.screen.highlighted_id == "lessons:list"
            await pilot.press("enter")
            await settle(pilot)
            assert isinstance(pilot.app.screen, LessonsListScreen)
            await pilot.press("escape")
            await settle(pilot)
            await pilot.press("ctrl+p")
            await pilot.pause()
            await pilot.press(*"Lessons: guided")
            await pilot.pause(0.3)
            await pilot.press("enter")
            await settle(pilot)
            assert isinstance(pilot.app.screen, LessonsListScreen)

    run(body)


@pytest.mark.parametrize("number", [1, 13, 17, 18])
def test_every_block_is_shown_live_and_every_show_me_plays(number):
    """Lessons with element types, control flow (iterations), collectives (processes) and a
    program read from a file: each block in focus is drawn live without an error, and each
    exercise's "show me" plays its view."""

    async def body():
        async with HloLabApp(open_lesson=str(number), lang="en").run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            screen = pilot.app.screen
            assert isinstance(screen, LessonScreen) and screen.lesson.order == number
            assert not [str(w.render()) for w in screen.query(".view-text, .results")
                        if "does not run" in str(w.render())]
            for block in screen.blocks:
                screen._focus_block(block)
                await settle(pilot)
                assert screen.current is block
                if isinstance(block, ProgramBlock):
                    assert screen.live.title_text  # the program's result, or why it is held back
            for box in screen.boxes:
                screen._focus_block(box)
                await settle(pilot)
                box.show_me()
                await settle(pilot)
                assert screen.live.title_text.startswith("Show me:"), (box.ex.id, screen.live.title_text)
                assert screen.live.main_grid is not None or screen.live.query("TensorGrid")

    run(body)


def test_no_grid_gives_an_unanswered_value_away():
    """Lesson 1 explains %y[0, 2] before asking for %y[1, 0]: until that is answered, neither
    side draws %y whole (the element's explanation is shown over the operand)."""

    async def body():
        async with HloLabApp(open_lesson="1", lang="en").run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            screen = pilot.app.screen
            view = next(v for v in screen.query(ViewBlock) if v.block.value == "%y")
            box = next(b for b in screen.boxes if b.ex.value == "%y")
            assert box.ex.kind == "predict-value" and tuple(box.ex.element) != tuple(view.block.element)
            assert view.secret and not view.query(TensorGrid)
            assert "%y[0, 2] = 9.0" in str(view.query_one(".view-text").render())
            view.focus()
            await settle(pilot)
            live = screen.live
            assert live.main_grid is None and [g.title_text for g in live.query(TensorGrid)] == [
                "%x : tensor<2x3xf32>"]
            assert "result[0, 2] = 9.0" in live.explain_text
            box.focus()
            await _type(pilot, str(box.ex.answer))
            await pilot.press("enter")
            await settle(pilot)
            assert box.solved
            assert not view.secret and view.query(TensorGrid)  # drawn whole now
            view.focus()
            await settle(pilot)
            assert live.main_grid is not None and live.main_grid.index == (0, 2)

    run(body)


@pytest.mark.parametrize("i, lesson", list(enumerate([1, 6, 10, 13, 17])))
def test_fuzz_the_lesson_viewer(monkeypatch, i, lesson):
    """The TUI fuzzer's random keys, bursts, pastes, clicks and resizes (tests/tui/tui_fuzz.py),
    started on a lesson: no exception escapes, no handler error, and the app still quits."""
    import dataclasses

    from . import tui_fuzz

    def make_app(start, files):
        return HloLabApp(open_lesson=start.target, lang="en")

    monkeypatch.setattr(tui_fuzz, "make_app", make_app)
    case = tui_fuzz.make_case(tui_fuzz.case_seed(29, i), 40, "home")
    case = dataclasses.replace(case, start=tui_fuzz.Start("lesson", str(lesson)))
    out = tui_fuzz.run_case(case)
    assert not out.failed, out.report()
    assert out.done == len(case.actions) or out.quit_early
