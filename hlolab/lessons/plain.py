"""A lesson followed in a plain terminal (``hlolab lesson N --plain``, ``:lesson N``).

Prose is printed as Markdown with ``rich``, programs with syntax highlighting and
their results, views as the text of ``hlolab explain``/``trace``; each exercise is a
prompt that takes an answer or ``hint``, ``show``, ``skip``, ``quit``. Progress is
saved after every answer, so Ctrl-C, end of input or ``quit`` lose nothing.

The flow reads its input through an ``ask(prompt) -> str`` function (``input`` in a
terminal, prompt_toolkit in the REPL), which raises EOFError / KeyboardInterrupt.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from hlolab.errors import HloLabError
from hlolab.lessons import check as chk
from hlolab.lessons.model import Exercise, Lesson, Program, Prose, View
from hlolab.lessons.progress import Progress
from hlolab.lessons.views import binding_text, hidden_results, hidden_views, printed_results, view_text
from hlolab.messages import Msg, text

Ask = Callable[[str], str]
REVEAL_AFTER = 3  # wrong tries before the verdict says what the program gives
_EDIT_RE = re.compile(r"^\s*(\d+)\s*:(.*)$")
COMMAND_WORDS = {
    # typed commands, in English and in the lesson's language (a learner types either)
    "hint": {"hint", "h", "提示", "pista"},
    "show": {"show", "显示", "mostrar"},
    "skip": {"skip", "跳过", "saltar"},
    "quit": {"quit", "q", "exit", "退出", "salir"},
}


class _Quit(Exception):
    """The learner typed quit."""


def command_of(word: str) -> str | None:
    """``hint``/``show``/``skip``/``quit`` for what a learner typed (in any lesson language)."""
    w = word.strip().lower()
    for name, words in COMMAND_WORDS.items():
        if w in words:
            return name
    return None


_command = command_of  # the name the TUI's exercise widget first used


class PlainLesson:
    """One lesson in one language, followed block by block."""

    def __init__(self, lesson: Lesson, lang: str, console: Any, ask: Ask, progress: Progress,
                 notices: list[Msg] | None = None, others: list[Lesson] | None = None):
        self.lesson = lesson
        self.lang = lang
        self.console = console
        self.ask = ask
        self.progress = progress
        self.runner = chk.Runner(lesson)
        self.notices = list(notices or [])
        self.others: list[Lesson] = list(others or [])  # the other lessons: prerequisites, what is next
        # exercises answered or skipped: results and views that would give them away show after
        self.answered = {e.id for e in lesson.exercises if progress.is_done(lang, lesson.id, e.id)}
        self.number = {e.id: n for n, e in enumerate(lesson.exercises, 1)}
        self.held: list[tuple[list[str], Callable[[], None]]] = []  # (exercise ids, what to show)

    # --- output ---------------------------------------------------------------------------
    def t(self, key: str, **args: Any) -> str:
        return text(Msg(f"lessons.{key}", **args), self.lang)

    def say(self, s: str = "", style: str | None = None) -> None:
        # soft_wrap: explanations and grids are laid out already; the terminal wraps long lines
        self.console.print(s, style=style, markup=False, highlight=False, soft_wrap=True)

    def markdown(self, s: str) -> None:
        from rich.markdown import Markdown

        self.console.print(Markdown(s))

    def code(self, source: str, lang: str, numbered: bool = False) -> None:
        from rich.syntax import Syntax

        from hlolab.repl.lexer import BuilderLexer, MlirLexer

        lexer = MlirLexer() if lang == "mlir" else BuilderLexer()
        self.console.print(Syntax(source.rstrip("\n"), lexer, line_numbers=numbered, word_wrap=True,
                                  theme="ansi_dark", background_color="default"))

    def save(self) -> None:
        try:
            self.progress.save()
        except OSError as e:
            self.say(self.t("ui.progress_unsaved", why=str(e)), "red")

    # --- the lesson -----------------------------------------------------------------------
    def run(self) -> int:
        """Follow the lesson; 0 at its end or on quit / end of input, 130 on Ctrl-C."""
        for w in self.progress.warnings:
            self.say(text(w, self.lang), "yellow")
        les = self.lesson
        self.say(self.t("ui.lesson_heading", order=les.order, title=les.title), "bold")
        if les.minutes:
            self.say(self.t("ui.minutes", minutes=les.minutes), "dim")
        before = [o for o in self.others if o.id in les.prerequisites]
        if before:
            names = ", ".join(f"{o.order} ({o.title})" for o in before)
            self.say(self.t("ui.prerequisites", lessons=names), "dim")
        for n in self.notices:
            self.say(text(n, self.lang), "dim")
        self.progress.set_current(self.lang, les.id)
        self.save()
        try:
            exercises = les.exercises
            for b in les.blocks:
                if isinstance(b, Prose):
                    self.markdown(b.text)
                elif isinstance(b, Program):
                    self.program(b)
                elif isinstance(b, View):
                    self.view(b)
                elif isinstance(b, Exercise):
                    self.exercise(b, exercises.index(b) + 1, len(exercises))
        except _Quit:
            self.save()
            self.say(self.t("ui.bye"))
            return 0
        except EOFError:
            self.save()
            self.say()
            self.say(self.t("ui.bye"))
            return 0
        except KeyboardInterrupt:
            self.save()
            self.say()
            self.say(self.t("ui.bye"))
            return 130
        done = len([e for e in exercises if self.progress.is_done(self.lang, les.id, e.id)])
        self.say(self.t("ui.lesson_done", order=les.order, done=done, total=len(exercises)), "bold")
        later = [o for o in self.others if o.order > les.order]
        if later:
            nxt = min(later, key=lambda o: o.order)
            self.say(self.t("ui.next_lesson", order=nxt.order, title=nxt.title), "dim")
        self.save()
        return 0

    def program(self, p: Program) -> None:
        if p.hidden:
            return
        self.say()
        if p.caption:
            self.say(p.caption, "italic")
        if p.file:
            self.say(self.t("ui.program_file", file=p.file), "dim")
        self.code(p.text, p.lang)
        try:
            printed = printed_results(self.runner, p)
            hidden = hidden_results(self.runner, p.name, self.answered)
        except HloLabError as e:
            self.say(self.t("ui.program_failed", error=str(e)), "red")
            return
        if not printed:  # results = []: nothing to print, not even the heading
            return
        self.say(self.t("ui.results"), "dim")
        for label, value, _ in printed:
            ids = hidden.get(label)
            if ids:
                self.say(f"{label} : " + self.t("ui.hidden_result", n=self._numbers(ids)), "dim")
                self._hold(ids, lambda label=label, value=value: self.say(binding_text(label, value)))
            else:
                self.say(binding_text(label, value))

    def _numbers(self, ids: list[str]) -> str:
        return ", ".join(str(self.number[i]) for i in ids)

    def _hold(self, ids: list[str], show: Callable[[], None]) -> None:
        """Show ``show`` once every exercise in ``ids`` is answered or skipped."""
        self.held.append((list(ids), show))

    def _release(self, ex: Exercise) -> None:
        """The learner answered or skipped ``ex``: show what was held back for it."""
        self.answered.add(ex.id)
        ready = [h for h in self.held if all(i in self.answered for i in h[0])]
        if not ready:
            return
        self.held = [h for h in self.held if h not in ready]
        self.say(self.t("ui.now_shown"), "dim")
        for _, show in ready:
            show()

    def view(self, v: View, ex: Exercise | None = None) -> None:
        if ex is None:
            self.say()
            try:
                ids = hidden_views(self.runner, self.answered).get(v.line)
            except HloLabError:
                ids = None
            if ids:  # it shows what a later exercise asks: after that exercise
                self.say(self.t("ui.hidden_view", n=self._numbers(ids)), "dim")
                self._hold(ids, lambda: self._view_body(v, None))
                return
        self._view_body(v, ex)

    def _view_body(self, v: View, ex: Exercise | None) -> None:
        if v.caption:
            self.say(v.caption, "italic")
        try:
            self.say(view_text(self.runner, v, ex, self.lang))
        except HloLabError as e:
            self.say(str(e), "red")

    # --- exercises ------------------------------------------------------------------------
    def exercise(self, ex: Exercise, n: int, total: int) -> None:
        les = self.lesson
        kind = self.t(f"kind.{ex.kind}")
        self.say()
        self.say(self.t("ui.exercise_heading", n=n, total=total, kind=kind), "bold cyan")
        if self.progress.is_done(self.lang, les.id, ex.id):
            self.say(self.t("ui.already_done"), "dim")
        self.markdown(ex.prompt)
        state = _Attempt(ex)
        if ex.kind == "fill-attributes":
            self._fill(ex, state)
        elif ex.kind == "fix-program":
            self._fix(ex, state)
        else:
            self._single(ex, state)

    def _done(self, ex: Exercise, verdict: chk.Verdict) -> None:
        self.say(text(verdict.message, self.lang), "green")
        if ex.explanation:
            self.markdown(ex.explanation)
        self.progress.complete(self.lang, self.lesson.id, ex.id)
        self.save()
        self._release(ex)

    def _wrong(self, verdict: chk.Verdict, state: _Attempt) -> None:
        state.tries += 1
        self.say(text(verdict.message, self.lang), "yellow")
        if verdict.reveal is not None and state.tries >= REVEAL_AFTER:
            self.say(self.t("ui.reveal", reveal=text(verdict.reveal, self.lang)), "dim")

    def _hint(self, ex: Exercise, state: _Attempt) -> None:
        # hints are plain text, shown as written (a "2 * 3 * 4" keeps its stars); the broken
        # program's error comes first for fix-program
        hints = list(ex.hints)
        if ex.kind == "fix-program":
            err = chk.broken_error(self.runner, ex)
            if err is not None:
                hints.insert(0, self.t("ui.error_hint", error=err.short()))
        if state.hints >= len(hints):
            self.say(self.t("ui.no_more_hints"), "dim")
            return
        self.say(self.t("ui.hint", n=state.hints + 1, total=len(hints), text=hints[state.hints]), "cyan")
        state.hints += 1

    def _show(self, ex: Exercise) -> None:
        self.say(self.t("ui.show_heading"), "bold")
        self.view(ex.show, ex)
        self.say(self.t("ui.solution", answer=answer_text(ex)), "dim")

    def _skip(self, ex: Exercise) -> None:
        self.say(self.t("ui.skipped"), "dim")
        if ex.explanation:
            self.markdown(ex.explanation)
        self._release(ex)

    def _common(self, ex: Exercise, state: _Attempt, line: str) -> str | None:
        """hint / show / skip / quit: handled here; returns 'skip' to leave the exercise."""
        cmd = command_of(line)
        if cmd == "hint":
            self._hint(ex, state)
        elif cmd == "show":
            self._show(ex)
        elif cmd == "quit":
            raise _Quit
        elif cmd == "skip":
            self._skip(ex)
        return cmd

    def _single(self, ex: Exercise, state: _Attempt) -> None:
        self.say(self.t("ui.commands_pick" if ex.kind == "pick-sources" else "ui.commands"), "dim")
        while True:
            line = self.ask(self.t("ui.answer_prompt"))
            if not line.strip():
                continue
            cmd = self._common(ex, state, line)
            if cmd == "skip":
                return
            if cmd is not None:
                continue
            try:
                answer = chk.parse_typed(ex, line)
            except chk.AnswerFormatError as e:
                self.say(text(e.msg, self.lang), "yellow")
                continue
            verdict = chk.check(self.runner, ex, answer)
            if verdict.ok:
                self._done(ex, verdict)
                return
            self._wrong(verdict, state)

    def _fill(self, ex: Exercise, state: _Attempt) -> None:
        self.code(ex.template, ex.lang, numbered=True)
        self.say(self.t("ui.commands_fill"), "dim")
        while True:
            values: dict[str, str] = {}
            for blank in ex.blanks:
                while blank not in values:
                    line = self.ask(self.t("ui.blank_prompt", name=blank))
                    cmd = self._common(ex, state, line)
                    if cmd == "skip":
                        return
                    if cmd is None:
                        values[blank] = line.strip()
            verdict = chk.check(self.runner, ex, values)
            if verdict.ok:
                self._done(ex, verdict)
                return
            self._wrong(verdict, state)

    def _fix(self, ex: Exercise, state: _Attempt) -> None:
        edits: dict[int, str] = {}
        added: dict[int, int] = {}  # line -> indentation hlolab added to what the learner typed
        self.code(ex.broken, ex.lang, numbered=True)
        self.say(self.t("ui.commands_fix"), "dim")
        while True:
            line = self.ask(self.t("ui.edit_prompt"))
            if not line.strip():
                continue
            m = _EDIT_RE.match(line)
            word = line.strip().lower()
            if m:
                n = int(m.group(1))
                n_lines = len(ex.broken.splitlines())
                if not 1 <= n <= n_lines:
                    self.say(self.t("answer.no_line", line=n, lines=n_lines), "yellow")
                    continue
                new, added[n] = edit_line(ex.broken.splitlines()[n - 1], m.group(2))
                edits[n] = new
                self.say(self.t("ui.edited", line=n, text=new), "dim")
            elif word in ("list", "ls"):
                self.code(chk.apply_edits(ex.broken, edits), ex.lang, numbered=True)
            elif word == "reset":
                edits.clear()
                added.clear()
                self.code(ex.broken, ex.lang, numbered=True)
            elif word == "run":
                verdict = chk.check(self.runner, ex, {str(k): v for k, v in edits.items()})
                if verdict.ok:
                    self._done(ex, verdict)
                    return
                self._wrong(_typed_columns(verdict, added), state)
            else:
                cmd = self._common(ex, state, line)
                if cmd == "skip":
                    return
                if cmd is None:
                    self.say(self.t("answer.expect_edit", text=line.strip()), "yellow")


def edit_line(old: str, typed: str) -> tuple[str, int]:
    """The new text of a line from what follows ``N:``: one space after the colon separates;
    the rest replaces the line verbatim, leading spaces included. Typed without indentation,
    the line keeps its own (returned: how many characters were added in front)."""
    new = typed[1:] if typed.startswith(" ") else typed
    if new and not new[0].isspace():
        indent = old[:len(old) - len(old.lstrip())]
        return indent + new, len(indent)
    return new, 0


def _typed_columns(verdict: chk.Verdict, added: dict[int, int]) -> chk.Verdict:
    """The verdict with its error's column counted in the text the learner typed: on an edited
    line that hlolab indented, the indentation added is taken off again."""
    e = verdict.error
    if e is None or e.loc is None or not added.get(e.loc.line):
        return verdict
    import copy
    from dataclasses import replace

    shift = added[e.loc.line]
    moved = copy.copy(e)
    moved.loc = replace(e.loc, col=max(1, e.loc.col - shift), source_line=e.loc.source_line[shift:])
    msg = Msg("lessons.verdict.program_error", error=moved.short())
    return chk.Verdict(False, msg, verdict.reveal, moved)


class _Attempt:
    def __init__(self, ex: Exercise):
        self.ex = ex
        self.tries = 0
        self.hints = 0


def answer_text(ex: Exercise) -> str:
    """The reference answer as a learner would type it."""
    a = ex.answer
    if ex.kind == "predict-shape":
        return "x".join(map(str, a)) or "[]"
    if ex.kind == "pick-sources":
        return " ".join("[" + ", ".join(map(str, c)) + "]" for c in a) or "-"
    if ex.kind == "fill-attributes":
        return "; ".join(f"{b} = {a[b]}" for b in ex.blanks)
    if ex.kind == "fix-program":
        return "; ".join(f"{k}: {v}" for k, v in sorted(a.items(), key=lambda kv: int(kv[0])))
    return chk.value_text(a)


def follow(key: str | int, lang: str = "en", console: Any = None, ask: Ask | None = None,
           progress: Progress | None = None, notice: Msg | None = None) -> int:
    """Follow lesson ``key`` in ``lang`` (English where it has no translation yet)."""
    from hlolab.lessons.loader import find_folder, folders, parse_lesson

    if console is None:
        from rich.console import Console

        console = Console()
    folder = find_folder(key)
    progress = progress or Progress.load()
    path = folder.files.get(lang)
    notes = [notice] if notice is not None else []
    if path is None:
        path = folder.files["en"]
        notes.append(Msg("lessons.ui.no_translation", lang=lang))
    lesson = parse_lesson(path)
    others = []
    for f in folders():  # titles in the learner's language where translated
        if f.path != folder.path and (f.files.get(lang) or f.files.get("en")):
            try:
                others.append(parse_lesson(f.files.get(lang) or f.files["en"]))
            except HloLabError:
                continue  # a broken neighbour must not stop this lesson (the linter reports it)
    if ask is None:
        ask = _terminal_ask(console)
    return PlainLesson(lesson, lang, console, ask, progress, notes, others).run()


def _terminal_ask(console: Any) -> Ask:
    """``input`` with the prompt; piped input is echoed so a transcript reads as a dialogue."""
    import sys

    echo = not sys.stdin.isatty()

    def ask(prompt: str) -> str:
        line = console.input(prompt)
        if echo:
            console.print(line, markup=False, highlight=False, soft_wrap=True)
        return line
    return ask
