"""The lesson viewer: the lesson's text on the left (Markdown, programs with their
results, views drawn live, exercises answered in place) and, on the right, the live view
of the block in focus (grids with the sources of the cursor's element marked, the op's
explanation). The lesson list (title, progress, language) is ``LessonsListScreen``.

The flow offers what plain mode offers (``hlolab.lessons.plain``): hints one by one
(``h``), "show me" (``s``), skip, answers checked by executing, progress saved after every
answer under ``$XDG_STATE_HOME/hlolab`` and the current lesson remembered per language.
At 80 columns the live view takes the whole width when asked for (``v``).
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Header, Input, Markdown, OptionList, Select, Static, TextArea
from textual.widgets.option_list import Option

from hlolab.errors import HloLabError
from hlolab.lessons import check as chk
from hlolab.lessons.model import LANGUAGES, Exercise, Lesson, Program, Prose, View
from hlolab.lessons.progress import Progress
from hlolab.messages import Msg, text
from hlolab.tui.widgets.bindings import LocalizedBindings
from hlolab.tui.widgets.footer import FittingFooter
from hlolab.tui.widgets.grid import TensorGrid
from hlolab.tui.widgets.lesson_exercise import ExerciseBox, PickGrid, code_renderable
from hlolab.tui.widgets.lesson_live import LivePane

NARROW = 100  # below this width the live view is shown instead of the text (``v``), not beside it
LANGUAGE_NAMES = {"en": "English", "zh": "中文", "es": "Español"}


def _t(in_lang: str, key: str, **args: Any) -> str:
    return text(Msg(f"lessons.{key}", **args), in_lang)


@dataclass
class LessonContext:
    """What the blocks of one lesson share."""

    lesson: Lesson
    lang: str
    runner: chk.Runner
    progress: Progress
    # exercises answered or skipped: results and views that would give them away show after
    answered: set[str] = field(default_factory=set)

    def secret(self, program: str, d: Any) -> bool:
        """Whether an exercise not answered yet asks to predict the value ``d`` of ``program``
        (then no grid shows that value whole)."""
        from hlolab.lessons.views import GIVEAWAY_KINDS, exercise_def

        for ex in self.lesson.exercises:
            if ex.kind in GIVEAWAY_KINDS and ex.id not in self.answered and ex.program == program:
                try:
                    if exercise_def(self.runner, ex) == d:
                        return True
                except HloLabError:
                    continue
        return False

    def numbers(self, ids: list[str]) -> str:
        """Exercise ids as the numbers the learner sees ("2, 3")."""
        order = [e.id for e in self.lesson.exercises]
        return ", ".join(str(order.index(i) + 1) for i in ids if i in order)


def load_lesson(key: str | int, lang: str) -> tuple[Lesson, list[Msg]]:
    """The lesson in ``lang`` (English, with a notice, where it is not translated yet)."""
    from hlolab.lessons.loader import find_folder, parse_lesson

    folder = find_folder(key)
    notes = []
    path = folder.files.get(lang)
    if path is None:
        path = folder.files["en"]
        notes.append(Msg("lessons.ui.no_translation", lang=lang))
    return parse_lesson(path), notes


def program_source(run: Any, program: Program | None, fallback: str = "") -> str:
    """MLIR text of a program (a builder program printed from its module)."""
    if program is not None and program.lang == "mlir":
        return program.text
    if run is not None:
        from hlolab.ir.printer import print_module

        return print_module(run.session.module)
    return fallback


# --- the blocks on the text side --------------------------------------------------------------

class ProseBlock(Markdown, can_focus=True):
    """Markdown between special blocks (a stop of n/p)."""

    def __init__(self, prose: Prose):
        super().__init__(prose.text, classes="lesson-block lesson-prose")
        self.block = prose


class ProgramBlock(Vertical, can_focus=True):
    """A program, highlighted, with its results (those that would answer a later exercise
    held back until it is answered or skipped); in focus it is shown live."""

    def __init__(self, program: Program, ctx: LessonContext):
        super().__init__(classes="lesson-block lesson-program")
        self.block = program
        self.ctx = ctx
        self.held: set[str] = set()  # exercise ids the hidden results wait for

    def compose(self) -> ComposeResult:
        from hlolab.lessons.views import binding_text, hidden_results, printed_results

        p, ctx = self.block, self.ctx
        if p.caption:
            yield Static(Text(p.caption, style="italic"), classes="caption")
        if p.file:
            yield Static(Text(_t(ctx.lang, "ui.program_file", file=p.file), style="dim"), classes="caption")
        yield Static(code_renderable(p.text, p.lang), classes="code")
        try:
            printed = printed_results(ctx.runner, p)
            hidden = hidden_results(ctx.runner, p.name, ctx.answered)
        except HloLabError as e:
            failed = _t(ctx.lang, "ui.program_failed", error=e.short())
            yield Static(Text(failed, style="red"), classes="results")
            return
        self.held = {i for ids in hidden.values() for i in ids}
        if not printed:
            return
        out = Text(_t(ctx.lang, "ui.results") + "\n", style="dim")
        for label, value, _ in printed:
            ids = hidden.get(label)
            if ids:
                held = _t(ctx.lang, "ui.hidden_result", n=ctx.numbers(ids))
                out.append(f"{label} : {held}\n", style="dim")
            else:
                out.append(binding_text(label, value) + "\n")
        out.rstrip()
        yield Static(out, classes="results")

    def main(self) -> tuple[Any, str, bool]:
        """(Def, label, hidden) of the first printed result: what the live side shows."""
        from hlolab.lessons.views import hidden_results, printed_results

        printed = printed_results(self.ctx.runner, self.block)
        if not printed:
            raise HloLabError(f"program {self.block.name} prints no result")
        label, _, d = printed[0]
        return d, label, label in hidden_results(self.ctx.runner, self.block.name, self.ctx.answered)


class ViewBlock(Vertical, can_focus=True):
    """A view: the value's grid with the element highlighted, and the explanation or trace
    as text; in focus the live side shows it with its sources marked."""

    def __init__(self, view: View, ctx: LessonContext):
        super().__init__(classes="lesson-block lesson-view")
        self.block = view
        self.ctx = ctx
        self.held: set[str] = set()  # exercise ids the view waits for
        self.secret = False  # its value is asked by an exercise not answered yet

    def compose(self) -> ComposeResult:
        from hlolab.lessons.views import hidden_views, resolve, view_def, view_label, view_text

        v, ctx = self.block, self.ctx
        try:
            ids = hidden_views(ctx.runner, ctx.answered).get(v.line)
        except HloLabError:
            ids = None
        self.held = set(ids or ())
        if ids:  # it shows what a later exercise asks: after that exercise
            yield Static(Text(_t(ctx.lang, "ui.hidden_view", n=ctx.numbers(ids)), style="dim italic"),
                         classes="view-text")
            return
        if v.caption:
            yield Static(Text(v.caption, style="italic"), classes="caption")
        try:
            run, value = resolve(ctx.runner, v)
            # a later exercise predicts this value: its explained element only, no whole grid
            self.secret = ctx.secret(v.program, view_def(run, v))
            if isinstance(value, np.ndarray) and not self.secret:
                grid = TensorGrid(value, title=f"{view_label(v)} : "
                                               f"{run.declared_type(v.value, v.iteration, v.process)}")
                grid.can_focus = False
                if v.element is not None:
                    grid.move_cursor(tuple(v.element))
                    grid.set_highlights({tuple(v.element): "result"})
                yield grid
            if v.mode != "value" or v.element is not None:
                body = view_text(ctx.runner, v, None, ctx.lang)
                if v.mode == "value":  # the grid shows the value: keep the element's lines only
                    body = _element_lines(body)
                yield Static(Text(body), classes="view-text")
        except HloLabError as e:
            yield Static(Text(e.short(), style="red"), classes="view-text")


def _element_lines(body: str) -> str:
    """The lines of a value view's text from the element's line on (the grid shows the rest)."""
    lines = body.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("%") and "] = " in line:
            return "\n".join(lines[i:])
    return ""


# --- the lesson screen -------------------------------------------------------------------------

class LessonScreen(LocalizedBindings, Screen):
    """One lesson in one language: text and exercises on the left, the live view on the right."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n", "move(1)", "Next", id="lesson.next"),
        Binding("p", "move(-1)", "Previous", id="lesson.prev"),
        Binding("h", "hint", "Hint", id="lesson.hint"),
        Binding("s", "show", "Show me", id="lesson.show"),
        Binding("ctrl+r", "check", "Check / run", show=False, id="lesson.check"),
        Binding("o", "open_stepper", "Stepper", id="lesson.stepper"),
        Binding("e", "open_explorer", "Explorer", show=False, id="lesson.explorer"),
        Binding("a", "play", "Animate", show=False, id="lesson.play"),
        Binding("v", "toggle_live", "Live view", show=False, id="lesson.live"),
        Binding("escape", "back", "Back", id="lesson.back"),
    ]

    def __init__(self, key: str | int, lang: str = "en", *, progress: Progress | None = None):
        super().__init__()
        self.key = key
        self.lang = lang if lang in LANGUAGES else "en"
        self.lesson, self.notices = load_lesson(key, self.lang)
        self.progress = progress or Progress.load()
        self.ctx = LessonContext(self.lesson, self.lang, chk.Runner(self.lesson), self.progress)
        les = self.lesson
        self.ctx.answered = {e.id for e in les.exercises if self.progress.is_done(self.lang, les.id, e.id)}
        self.current: Widget | None = None  # the block in focus
        self.localize_bindings(self.lang)

    def t(self, key: str, **args: Any) -> str:
        return text(Msg(f"lessons.{key}", **args), self.lang)

    # --- layout ----------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        les = self.lesson
        yield Header()
        with Horizontal(id="lesson-top"):
            yield Static(self._heading(), id="lesson-heading")
            yield Select([(LANGUAGE_NAMES[x], x) for x in LANGUAGES], value=self.lang, allow_blank=False,
                         id="lesson-lang", compact=True)
        with Horizontal(id="lesson-body"):
            with VerticalScroll(id="lesson-text", can_focus=False):
                for w in self.progress.warnings:
                    yield Static(Text(text(w, self.lang), style="yellow"), classes="notice")
                for n in self.notices:
                    yield Static(Text(text(n, self.lang), style="yellow"), classes="notice")
                exercises = les.exercises
                for b in les.blocks:
                    if isinstance(b, Prose):
                        if b.text.strip():
                            yield ProseBlock(b)
                    elif isinstance(b, Program):
                        if not b.hidden:
                            yield ProgramBlock(b, self.ctx)
                    elif isinstance(b, View):
                        yield ViewBlock(b, self.ctx)
                    elif isinstance(b, Exercise):
                        yield ExerciseBox(b, exercises.index(b) + 1, len(exercises), self.ctx)
            yield LivePane(self.lang, id="lesson-live")
        yield Static(self.t("tui.keys"), id="hint")
        yield FittingFooter()

    def _heading(self) -> Text:
        les = self.lesson
        out = Text(self.t("ui.lesson_heading", order=les.order, title=les.title), style="bold")
        done = self.done_count
        total = len(les.exercises)
        out.append(f"  [{done}/{total}]", style="bold green" if done == total else "dim")
        if les.minutes:
            out.append("  " + self.t("ui.minutes", minutes=les.minutes), style="dim")
        return out

    @property
    def done_count(self) -> int:
        les = self.lesson
        return len([e for e in les.exercises if self.progress.is_done(self.lang, les.id, e.id)])

    def on_mount(self) -> None:
        self.sub_title = self.t("tui.lessons_title")
        self.progress.set_current(self.lang, self.lesson.id)
        self._save()
        self._fit(self.app.size.width)
        # resume: the first exercise not done yet when some are, else the top
        boxes = self.boxes
        target: Widget | None = None
        if any(b.solved for b in boxes):
            target = next((b for b in boxes if not b.solved), None)
        if target is None:
            target = next(iter(self.blocks), None)
        if target is not None:
            self.call_after_refresh(self._focus_block, target)

    def on_resize(self, event: Any) -> None:
        self._fit(event.size.width)

    def _fit(self, width: int) -> None:
        narrow = width < NARROW
        self.set_class(narrow, "-narrow")
        self.query_one("#hint", Static).update(self.t("tui.keys_narrow" if narrow else "tui.keys"))

    @property
    def blocks(self) -> list[Widget]:
        return list(self.query(".lesson-block"))

    @property
    def boxes(self) -> list[ExerciseBox]:
        return list(self.query(ExerciseBox))

    @property
    def live(self) -> LivePane:
        return self.query_one(LivePane)

    def _save(self) -> None:
        try:
            self.progress.save()
        except OSError as e:
            self.notify(self.t("ui.progress_unsaved", why=str(e)), severity="error")

    # --- focus: the block in focus is shown live -----------------------------------------------
    def _block_of(self, widget: Widget | None) -> Widget | None:
        w = widget
        while w is not None and w is not self:
            if w.has_class("lesson-block"):
                return w
            w = w.parent  # type: ignore[assignment]
        return None

    def _focus_block(self, block: Widget) -> None:
        if isinstance(block, ExerciseBox) and not block.solved and block.ex.kind == "pick-sources":
            block.focus_answer()  # the grid: n, p, h, s stay keys there
        else:
            block.focus()
        # after the focus's own scrolling: the block's top at the top of the text
        self.call_after_refresh(block.scroll_visible, top=True, animate=False)

    async def on_descendant_focus(self, event: Any) -> None:
        block = self._block_of(getattr(event, "widget", None))
        if block is None or block is self.current or self.has_class("-show-live"):
            return
        self.current = block
        await self.show_live(block)

    async def show_live(self, block: Widget) -> None:
        """The live view of ``block`` (never the value an unanswered exercise asks for)."""
        live = self.live
        try:
            if isinstance(block, ProgramBlock):
                p = block.block
                run = self.ctx.runner.program(p.name)
                d, label, hidden = block.main()
                if hidden:
                    await live.show_operands(run, d, self.t("tui.hidden_value", value=label))
                else:
                    await live.show_value(run, d, title=self.t("tui.live_program", name=p.name, value=label))
            elif isinstance(block, ViewBlock):
                if block.held:
                    note = self.t("ui.hidden_view", n=self.ctx.numbers(sorted(block.held)))
                    await live.show_tensors([], note)
                else:
                    await self._show_view(block.block, None)
            elif isinstance(block, ExerciseBox):
                await self._show_exercise(block)
        except (HloLabError, IndexError) as e:
            live.stop()
            await live.show_tensors([], e.short() if isinstance(e, HloLabError) else str(e))
        except Exception as e:  # noqa: BLE001 - a view that cannot be drawn is a message, never a crash
            self.log.error(traceback.format_exc())
            await live.show_tensors([], f"{type(e).__name__}: {e}")

    async def _show_view(self, view: View, ex: Exercise | None) -> None:
        from hlolab.lessons.views import resolve, view_def, view_label

        run, _ = resolve(self.ctx.runner, view, ex)
        title = view.caption or view_label(view)
        d = view_def(run, view)
        # "show me" shows all; a view shows no whole value that a later exercise asks for
        hide = ex is None and self.ctx.secret(view.program, d)
        if ex is not None:
            title = f"{self.t('ui.show_heading')} {title}"
        await self.live.show_value(run, d, view.element, mode=view.mode, title=title, hide_value=hide)
        if view.mode == "animation" and not self.live.playing:
            self.live.play()

    async def _show_exercise(self, box: ExerciseBox) -> None:
        ex = box.ex
        live = self.live
        if ex.kind in ("fill-attributes", "fix-program"):
            target = chk.target_value(self.ctx.runner, ex)
            await live.show_tensors([(self.t("tui.live_target"), target)], self.t("tui.live_target"))
            return
        from hlolab.lessons.views import exercise_def

        run = self.ctx.runner.program(ex.program)
        d = exercise_def(self.ctx.runner, ex)
        if box.solved:  # (another exercise may ask about the same value: then its element only)
            await live.show_value(run, d, ex.element, hide_value=self.ctx.secret(ex.program, d))
        else:
            # a pick-sources operand is on the exercise's own grid already
            await live.show_operands(run, d, self.t("tui.hidden_value", value=chk.value_ref(ex.value)),
                                     exclude=ex.operand if ex.kind == "pick-sources" else "")

    # --- exercises ---------------------------------------------------------------------------------
    @property
    def box(self) -> ExerciseBox | None:
        """The exercise in focus (or the last one focused)."""
        return self.current if isinstance(self.current, ExerciseBox) else None

    @on(ExerciseBox.Answered)
    async def _answered(self, event: ExerciseBox.Answered) -> None:
        event.stop()
        box = event.box
        if event.verdict.ok or event.skipped:
            await self._release(box.ex.id)
            box.reveal_verdict()  # blocks above may have grown
        if event.verdict.ok:
            self.progress.complete(self.lang, self.lesson.id, box.ex.id)
            self._save()
            self.query_one("#lesson-heading", Static).update(self._heading())
            box.focus()  # out of the input: n, h, s work again
            if self.current is box:
                await self._show_exercise(box)
            if self.done_count == len(self.lesson.exercises):
                self.notify(self.t("tui.lesson_done", total=len(self.lesson.exercises)))
        elif event.skipped:
            self.action_move(1)

    async def _release(self, ex_id: str) -> None:
        """``ex_id`` is answered or skipped: results and views held back for it show now."""
        self.ctx.answered.add(ex_id)
        for block in list(self.query(".lesson-program, .lesson-view")):
            held = getattr(block, "held", set())
            if held and held <= self.ctx.answered or getattr(block, "secret", False):
                await block.recompose()
                if block is self.current:
                    await self.show_live(block)

    @on(ExerciseBox.ShowMe)
    async def _show_me(self, event: ExerciseBox.ShowMe) -> None:
        event.stop()
        box = event.box
        self.current = box
        try:
            await self._show_view(box.ex.show, box.ex)
        except HloLabError as e:
            await self.live.show_tensors([], e.short())
        if self.has_class("-narrow"):
            self.show_live_side(True)

    def action_hint(self) -> None:
        if self.box is not None:
            self.box.hint()

    def action_show(self) -> None:
        if self.box is not None:
            self.box.show_me()

    def action_check(self) -> None:
        if self.box is not None:
            self.box.submit()

    # --- moving, opening ---------------------------------------------------------------------------
    def action_move(self, step: int) -> None:
        """The next / previous block (prose section, program, view or exercise)."""
        blocks = self.blocks
        if not blocks:
            return
        cur = self._block_of(self.focused) or self.current
        i = blocks.index(cur) if cur in blocks else -1
        j = min(max(i + step, 0), len(blocks) - 1)
        if self.has_class("-show-live"):  # the text is shown again first: focus once it is laid out
            self.show_live_side(False, refocus=False)
            self.call_after_refresh(self._focus_block, blocks[j])
        else:
            self._focus_block(blocks[j])

    def action_back(self) -> None:
        """Esc: out of an answer box first, then (or from the live view) back to the list."""
        if self.has_class("-show-live"):
            self.show_live_side(False)
            return
        f = self.focused
        if isinstance(f, Input | TextArea | PickGrid):
            block = self._block_of(f)
            if block is not None:
                block.focus()
                return
        self.app.pop_screen()

    def action_toggle_live(self) -> None:
        self.show_live_side(not self.has_class("-show-live"))

    def show_live_side(self, on: bool, refocus: bool = True) -> None:
        """Narrow terminals: the live view in place of the text (``on``) or the text again,
        with the focus on the block it had (hiding the text must not move the reader on)."""
        if on == self.has_class("-show-live"):
            return
        block = self.current
        if on:
            self.add_class("-show-live")
            grid = self.live.main_grid
            target: Widget = grid if grid is not None else self.live.query_one("#live-explain")
            self.call_after_refresh(target.focus)
        else:
            self.remove_class("-show-live")
            if refocus and block is not None:
                self.call_after_refresh(block.focus)

    def action_play(self) -> None:
        self.live.play()

    def _program_text(self) -> str | None:
        """The program of the block in focus, as MLIR (a learner's edits included)."""
        block = self.current
        runner = self.ctx.runner
        if isinstance(block, ProgramBlock):
            return program_source(runner.program(block.block.name), block.block)
        if isinstance(block, ViewBlock):
            name = block.block.program
            return program_source(runner.program(name), self.lesson.programs.get(name))
        if isinstance(block, ExerciseBox):
            ex = block.ex
            if ex.kind == "fix-program":
                return block.query_one(TextArea).text
            if ex.kind == "fill-attributes":
                answer, _ = block.answer()
                return chk.fill_template(ex.template, answer)
            return program_source(runner.program(ex.program), self.lesson.programs.get(ex.program))
        return None

    def action_open_stepper(self) -> None:
        try:
            source = self._program_text()
        except HloLabError as e:
            self.notify(e.short(), severity="error")
            return
        if not source:
            self.notify(self.t("tui.no_program"), severity="warning")
            return
        try:
            from hlolab.tui.screens.stepper import StepperScreen

            screen = StepperScreen(source)
        except HloLabError as e:
            self.notify(e.short(), severity="error")
            return
        except Exception as e:  # noqa: BLE001 - a program the stepper refuses is a message
            self.log.error(traceback.format_exc())
            self.notify(f"{type(e).__name__}: {e}", severity="error")
            return
        self.app.push_screen(screen)

    def action_open_explorer(self) -> None:
        if self.lesson.ops:
            app: Any = self.app
            app.open_op(self.lesson.ops[0])

    # --- language ----------------------------------------------------------------------------------
    @on(Select.Changed, "#lesson-lang")
    def _language(self, event: Select.Changed) -> None:
        event.stop()
        lang = str(event.value)
        if lang == self.lang or lang not in LANGUAGES:
            return
        self.set_language(lang)

    def set_language(self, lang: str) -> None:
        """The same lesson in ``lang`` (progress of that language; its UI strings)."""
        app: Any = self.app
        app.lesson_lang = lang
        self.app.switch_screen(LessonScreen(self.key, lang, progress=self.progress))


# --- the list ------------------------------------------------------------------------------------

class LessonsListScreen(LocalizedBindings, Screen):
    """Every lesson with its title in the chosen language and the exercises done."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", id="lessons.back"),
    ]

    def __init__(self, lang: str = "en", *, progress: Progress | None = None):
        super().__init__()
        self.lang = lang if lang in LANGUAGES else "en"
        self.progress = progress
        self.localize_bindings(self.lang)

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="lesson-top"):
            yield Static("", id="lessons-heading")
            yield Select([(LANGUAGE_NAMES[x], x) for x in LANGUAGES], value=self.lang, allow_blank=False,
                         id="lessons-lang", compact=True)
        yield OptionList(id="lessons", compact=True)
        yield Static(_t(self.lang, "tui.list_hint"), id="hint")
        yield FittingFooter()

    def on_mount(self) -> None:
        self.sub_title = _t(self.lang, "tui.lessons_title")
        self.refill()
        self.query_one("#lessons", OptionList).focus()

    def on_screen_resume(self) -> None:
        """Back from a lesson: its progress, and its language if the learner changed it there."""
        app: Any = self.app
        lang = getattr(app, "lesson_lang", self.lang)
        if lang in LANGUAGES and lang != self.lang:
            self.set_language(lang)
        else:
            self.refill()

    def rows(self) -> list[tuple[int, Text]]:
        """(lesson number, row text) of every lesson, in the list's language."""
        from hlolab.lessons.loader import folders, parse_lesson

        progress = self.progress = Progress.load()
        lang = self.lang
        current = progress.current(lang)
        out = []
        for f in folders():
            path = f.files.get(lang) or f.files.get("en")
            if path is None:
                continue
            try:
                les = parse_lesson(path)
            except HloLabError as e:
                out.append((f.number, Text(f"{f.number:>2}  {f.path.name}: {e.short()}", style="red")))
                continue
            done = len([e for e in les.exercises if progress.is_done(lang, les.id, e.id)])
            total = len(les.exercises)
            # progress before the title: a long title wraps without hiding it
            row = Text(f"{les.order:>2}  ")
            row.append(f"[{done}/{total}]", style="bold green" if done == total and total else
                       "bold" if done else "dim")
            row.append(f"  {les.title}")
            if lang not in f.files:
                row.append(f"  ({_t(lang, 'tui.translation_missing', lang=lang)})", style="dim italic")
            if les.id == current:
                row.append("  ← " + _t(lang, "tui.list_continue"), style="bold")
            out.append((f.number, row))
        return out

    def refill(self) -> None:
        ol = self.query_one("#lessons", OptionList)
        keep = ol.highlighted
        rows = self.rows()
        ol.clear_options()
        ol.add_options([Option(row, id=str(n)) for n, row in rows])
        mark = _t(self.lang, "tui.list_continue")
        current = next((i for i, (_, row) in enumerate(rows) if row.plain.endswith(mark)), None)
        ol.highlighted = keep if keep is not None and keep < len(rows) else (current or 0) if rows else None
        self.query_one("#lessons-heading", Static).update(
            Text(_t(self.lang, "list.heading", lang=LANGUAGE_NAMES[self.lang]), style="bold"))

    @property
    def row_texts(self) -> list[str]:
        ol = self.query_one("#lessons", OptionList)
        return [Text.assemble(ol.get_option_at_index(i).prompt).plain for i in range(ol.option_count)]

    @on(OptionList.OptionSelected, "#lessons")
    def _open(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        app: Any = self.app
        app.open_lesson(event.option.id, self.lang)

    @on(Select.Changed, "#lessons-lang")
    def _language(self, event: Select.Changed) -> None:
        event.stop()
        lang = str(event.value)
        if lang in LANGUAGES and lang != self.lang:
            self.set_language(lang)

    def set_language(self, lang: str) -> None:
        self.lang = lang
        self.localize_bindings(lang)
        self.refresh_bindings()
        app: Any = self.app
        app.lesson_lang = lang
        select = self.query_one("#lessons-lang", Select)
        if select.value != lang:
            select.value = lang
        self.sub_title = _t(lang, "tui.lessons_title")
        self.query_one("#hint", Static).update(_t(lang, "tui.list_hint"))
        self.refill()

    def action_back(self) -> None:
        self.app.pop_screen()
