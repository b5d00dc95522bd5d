"""An exercise of a lesson, answered in place: an input (predict a value, shape or type),
the operand grid to pick cells on (keys and mouse), one input per blank (fill in
attributes), or an editor of the broken program (fix it). Every answer is checked by
``hlolab.lessons.check`` (by executing); a typing mistake is a verdict, never an exception.
"""

from __future__ import annotations

import traceback
from typing import Any, ClassVar

import numpy as np
from rich.syntax import Syntax
from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, Input, Label, Markdown, Static, TextArea
from textual.widgets.input import Selection

from hlolab.errors import HloLabError
from hlolab.lessons import check as chk
from hlolab.lessons.model import Exercise
from hlolab.lessons.plain import REVEAL_AFTER, answer_text
from hlolab.messages import Msg, text
from hlolab.tui.widgets.bindings import LocalizedBindings
from hlolab.tui.widgets.fields import Editor, Field
from hlolab.tui.widgets.grid import TensorGrid

PICKED = "selected"  # the role colour of a picked cell


def code_renderable(source: str, lang: str, numbered: bool = False) -> Syntax:
    """A program with the REPL's MLIR / builder highlighting."""
    from hlolab.repl.lexer import BuilderLexer, MlirLexer

    lexer = MlirLexer() if lang == "mlir" else BuilderLexer()
    return Syntax(source.rstrip("\n"), lexer, line_numbers=numbered, word_wrap=True,
                  theme="ansi_dark", background_color="default")


def edits_of(broken: str, edited: str) -> dict[str, str]:
    """The learner's editor text as the line edits ``check`` takes: changed lines when the
    number of lines is the same, else the whole text as line 1 and the other lines emptied
    (line numbers in errors stay those of the edited text)."""
    old = broken.rstrip("\n").split("\n")
    new = edited.rstrip("\n").split("\n")
    if len(new) == len(old):
        return {str(i + 1): n for i, (o, n) in enumerate(zip(old, new)) if o != n}
    out = {"1": "\n".join(new)}
    out.update({str(i): "" for i in range(2, len(old) + 1)})
    return out


class PickGrid(LocalizedBindings, TensorGrid):
    """The operand grid of a pick-sources exercise: space or a click toggles a cell,
    Enter submits the picked set; ``h`` asks for a hint (not "left", as in other grids)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("space", "toggle", "Pick / unpick", id="pick.toggle"),
        Binding("h", "screen.hint", "Hint", show=False, id="pick.hint"),
    ]

    class Changed(Message):
        def __init__(self, grid: PickGrid):
            super().__init__()
            self.grid = grid

    class Submitted(Message):
        def __init__(self, grid: PickGrid):
            super().__init__()
            self.grid = grid

    def __init__(self, value: np.ndarray, *, title: str = "", id: str | None = None, lang: str = "en"):
        super().__init__(value, title=title, id=id)
        self.picked: list[tuple[int, ...]] = []
        self.localize_bindings(lang)

    def toggle(self, index: tuple[int, ...]) -> None:
        index = tuple(int(i) for i in index)
        if index in self.picked:
            self.picked.remove(index)
        else:
            self.picked.append(index)
        self.set_highlights({c: PICKED for c in self.picked})
        self.post_message(self.Changed(self))

    def clear_picks(self) -> None:
        self.picked = []
        self.set_highlights({})
        self.post_message(self.Changed(self))

    def action_toggle(self) -> None:
        if self.has_cells:
            self.toggle(self.index)

    def action_activate(self) -> None:
        self.post_message(self.Submitted(self))

    async def _on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        index = self.cell_at(offset.x, offset.y) if offset is not None else None
        if index is None:
            return
        event.stop()
        self.focus()
        self.move_cursor(index)
        self.toggle(index)


class ExerciseBox(Vertical, can_focus=True):
    """One exercise: heading, prompt, the answer widgets, buttons, hints and the verdict.

    ``ctx`` is the lesson screen's state: ``lesson``, ``lang``, ``runner``, ``progress``, and
    ``answered(ex, verdict)`` / ``show(ex)`` to call back."""

    class Answered(Message):
        """An answer was checked (the screen saves progress on a right one)."""

        def __init__(self, box: ExerciseBox, verdict: chk.Verdict, skipped: bool = False):
            super().__init__()
            self.box = box
            self.verdict = verdict
            self.skipped = skipped

    class ShowMe(Message):
        def __init__(self, box: ExerciseBox):
            super().__init__()
            self.box = box

    def __init__(self, ex: Exercise, n: int, total: int, ctx: Any, *, id: str | None = None):
        super().__init__(id=id, classes="lesson-block lesson-exercise")
        self.ex = ex
        self.n, self.total = n, total
        self.ctx = ctx
        self.tries = 0
        self.hints_shown = 0
        self.solved = ctx.progress.is_done(ctx.lang, ctx.lesson.id, ex.id)
        self.last: chk.Verdict | None = None
        # typing started on the box: keys that arrive before the answer box has the focus
        # (fast typing, a paste) belong to the answer, even n, s or e
        self.typing = False

    def on_focus(self) -> None:
        self.typing = False

    def t(self, key: str, **args: Any) -> str:
        return text(Msg(f"lessons.{key}", **args), self.ctx.lang)

    # --- layout ------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        ex = self.ex
        yield Static(self._heading(), classes="exercise-heading")
        yield Markdown(ex.prompt, classes="exercise-prompt")
        kind = ex.kind
        if kind in ("predict-value", "predict-shape", "predict-type"):
            yield Field(placeholder=self.t("tui.answer_placeholder"), classes="answer", compact=True,
                        select_on_focus=False)
            keys = "tui.keys_predict"
        elif kind == "pick-sources":
            run = self.ctx.runner.program(ex.program)
            op = chk.value_ref(ex.operand)
            yield PickGrid(np.asarray(run.value(op)), title=f"{op} : {run.declared_type(op)}",
                           lang=self.ctx.lang)
            yield Static(self.t("tui.picked_none"), classes="picked")
            keys = "tui.keys_pick"
        elif kind == "fill-attributes":
            yield Static(code_renderable(ex.template, ex.lang, numbered=True), classes="code")
            for blank in ex.blanks:
                with Horizontal(classes="blank"):
                    yield Label(f"{blank} = ", classes="blank-label")
                    yield Field(classes="answer blank-input", name=blank, compact=True, select_on_focus=False)
            keys = "tui.keys_fill"
        else:  # fix-program
            err = chk.broken_error(self.ctx.runner, ex)
            if err is not None:
                yield Static(Text(self.t("ui.error_hint", error=err.short())), classes="fix-error")
            area = Editor.code_editor(ex.broken.rstrip("\n"), classes="fix-editor", soft_wrap=False,
                                      tab_behavior="focus")
            area.styles.height = min(len(ex.broken.splitlines()) + 2, 18)
            yield area
            keys = "tui.keys_fix"
        yield Static(self.t(keys), classes="exercise-keys")
        with Horizontal(classes="exercise-buttons"):
            check_label = "tui.run" if kind == "fix-program" else "tui.check"
            yield Button(self.t(check_label), id=f"check-{ex.id}", classes="check", compact=True)
            yield Button(self.t("tui.hint_button"), classes="hint", compact=True)
            yield Button(self.t("tui.show_button"), classes="show", compact=True)
            yield Button(self.t("tui.skip_button"), classes="skip", compact=True)
        yield Vertical(classes="hints")
        yield Static("", classes="verdict")
        explanation = Markdown(ex.explanation or "", classes="explanation")
        explanation.display = False
        yield explanation

    def _heading(self) -> Text:
        kind = self.t(f"kind.{self.ex.kind}")
        out = Text(self.t("ui.exercise_heading", n=self.n, total=self.total, kind=kind), style="bold")
        if self.solved:
            out.append("  ✓ " + self.t("tui.done_mark"), style="bold green")
        return out

    def on_key(self, event: events.Key) -> None:
        """On the box itself: Enter goes into the answer; typing starts it (except the
        screen's keys: n, p, h, s… move and help; Enter first to type an answer starting so)."""
        if self.app.focused is not self:
            return
        if event.key == "enter":
            event.stop()
            typed = [i for i in self.query(Input) if i.value.strip()]
            if typed and self.ex.kind != "fill-attributes":  # typed fast: the focus had not moved yet
                self.submit()
            else:
                self.focus_answer()
            return
        printable = event.is_printable and bool(event.character)
        if not printable or (event.key in self.screen.active_bindings and not self.typing):
            return
        inputs = list(self.query(Input))
        if inputs:
            event.stop()
            self.typing = True
            inputs[0].focus()
            inputs[0].insert_text_at_cursor(event.character)

    def focus_answer(self) -> None:
        """Put the focus where the answer is typed or picked."""
        for w in self.query("Input, PickGrid, TextArea"):
            w.focus()
            return
        self.focus()

    # --- answering ---------------------------------------------------------------------------
    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        from hlolab.lessons.plain import command_of

        cmd = command_of(event.value)
        if cmd is not None and cmd != "quit":
            event.input.value = ""
            {"hint": self.hint, "show": self.show_me, "skip": self.skip}[cmd]()
            return
        if self.ex.kind == "fill-attributes":
            inputs = list(self.query(".blank-input").results(Input))
            i = inputs.index(event.input) if event.input in inputs else len(inputs) - 1
            if i + 1 < len(inputs) and not all(x.value.strip() for x in inputs):
                inputs[i + 1].focus()
                return
        self.submit()

    @on(PickGrid.Changed)
    def _picked(self, event: PickGrid.Changed) -> None:
        event.stop()
        cells = " ".join("[" + ", ".join(map(str, c)) + "]" for c in event.grid.picked)
        self.query_one(".picked", Static).update(
            self.t("tui.picked", cells=cells) if cells else self.t("tui.picked_none"))

    @on(PickGrid.Submitted)
    def _pick_submitted(self, event: PickGrid.Submitted) -> None:
        event.stop()
        self.submit()

    @on(Button.Pressed)
    def _button(self, event: Button.Pressed) -> None:
        event.stop()
        b = event.button
        if b.has_class("check"):
            self.submit()
        elif b.has_class("hint"):
            self.hint()
        elif b.has_class("show"):
            self.show_me()
        elif b.has_class("skip"):
            self.skip()

    def answer(self) -> tuple[Any, chk.Verdict | None]:
        """What the widgets hold, as ``check`` takes it, or a verdict when it cannot be read."""
        ex = self.ex
        if ex.kind == "pick-sources":
            picked = self.query_one(PickGrid).picked
            if not picked:
                return None, chk.Verdict(False, Msg("lessons.answer.expect_indices", text=""))
            return [list(c) for c in picked], None
        if ex.kind == "fill-attributes":
            return {i.name: i.value.strip() for i in self.query(".blank-input").results(Input)}, None
        if ex.kind == "fix-program":
            return edits_of(ex.broken, self.query_one(TextArea).text), None
        typed = self.query_one(Input).value
        try:
            return chk.parse_typed(ex, typed), None
        except chk.AnswerFormatError as e:
            return None, chk.Verdict(False, e.msg)

    def submit(self) -> chk.Verdict:
        """Check what the widgets hold; show the verdict and tell the screen."""
        ex = self.ex
        answer, verdict = self.answer()
        if ex.kind == "fill-attributes" and verdict is None:
            empty = [b for b, v in answer.items() if not v]
            if empty:
                verdict = chk.Verdict(False, Msg("lessons.answer.missing_blanks", blanks=", ".join(empty)))
        if verdict is None:
            try:
                verdict = chk.check(self.ctx.runner, ex, answer)
            except HloLabError as e:
                verdict = chk.Verdict(False, Msg("lessons.verdict.program_error", error=e.short()), error=e)
            except Exception as e:  # noqa: BLE001 - an answer is a verdict, never a crash
                self.log.error(traceback.format_exc())
                why = f"{type(e).__name__}: {e}"
                verdict = chk.Verdict(False, Msg("lessons.verdict.program_error", error=why))
        self.last = verdict
        if verdict.ok:
            self.solved = True
            self.query_one(".exercise-heading", Static).update(self._heading())
        else:
            self.tries += 1
            if ex.kind.startswith("predict-"):  # typing again replaces the wrong answer
                inp = self.query_one(Input)
                inp.selection = Selection(0, len(inp.value))
        self._show_verdict(verdict)
        self.post_message(self.Answered(self, verdict))
        return verdict

    def _show_verdict(self, verdict: chk.Verdict) -> None:
        out = Text(text(verdict.message, self.ctx.lang), style="bold green" if verdict.ok else "bold yellow")
        if not verdict.ok and verdict.reveal is not None and self.tries >= REVEAL_AFTER:
            out.append("\n" + self.t("ui.reveal", reveal=text(verdict.reveal, self.ctx.lang)), style="dim")
        self.query_one(".verdict", Static).update(out)
        self._explain(verdict.ok)
        self.reveal_verdict()

    def reveal_verdict(self) -> None:
        """Scroll the verdict (and the explanation under it) into view once laid out."""
        last = self.query_one(".explanation", Markdown)
        target = last if last.display else self.query_one(".verdict", Static)
        self.call_after_refresh(target.scroll_visible, animate=False)

    def _explain(self, shown: bool) -> None:
        """The author's explanation (Markdown) after a right answer, "show me" or a skip."""
        self.query_one(".explanation", Markdown).display = shown and bool(self.ex.explanation)

    @property
    def verdict_text(self) -> str:
        return str(self.query_one(".verdict", Static).render())

    def hint(self) -> None:
        """The next hint (a fix-program's error first); "no more hints" after the last."""
        steps: list[tuple[str, bool]] = [(h, True) for h in self.ex.hints]
        if self.ex.kind == "fix-program":
            err = chk.broken_error(self.ctx.runner, self.ex)
            if err is not None:
                steps.insert(0, (self.t("ui.error_hint", error=err.short()), False))
        box = self.query_one(".hints", Vertical)
        if self.hints_shown >= len(steps):
            box.mount(Static(self.t("ui.no_more_hints"), classes="hint-text dim"))
            return
        body, is_md = steps[self.hints_shown]
        line = self.t("ui.hint", n=self.hints_shown + 1, total=len(steps), text=body)
        shown = Markdown(line, classes="hint-text") if is_md else Static(Text(line), classes="hint-text")
        box.mount(shown)
        self.hints_shown += 1
        self.call_after_refresh(shown.scroll_visible, animate=False)

    def show_me(self) -> None:
        """The answer in words, and the screen plays the exercise's ``show`` view."""
        out = Text(self.t("ui.show_heading") + " ", style="bold")
        out.append(self.t("ui.solution", answer=answer_text(self.ex)))
        self.query_one(".verdict", Static).update(out)
        self._explain(True)
        self.reveal_verdict()
        self.post_message(self.ShowMe(self))

    def skip(self) -> None:
        self.query_one(".verdict", Static).update(Text(self.t("ui.skipped"), style="dim"))
        self._explain(True)
        self.post_message(self.Answered(self, chk.Verdict(False, Msg("lessons.ui.skipped")), skipped=True))

