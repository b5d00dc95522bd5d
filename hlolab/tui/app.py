"""The hlolab TUI: the gallery (home), the op explorer and, opened from a file,
the program stepper. ``run_tui`` is the entry point ``hlolab`` calls.
"""

from __future__ import annotations

import traceback
from pathlib import Path
from typing import Any, ClassVar

from textual.app import App
from textual.binding import Binding, BindingType
from textual.command import CommandList, CommandPalette

from hlolab.errors import HloLabError
from hlolab.tui.commands import HloLabCommands
from hlolab.tui.screens.help import HelpScreen
from hlolab.tui.screens.home import HomeScreen, remember_file

# ctrl+t cycles through these (Textual built-ins; the palette's "Theme" offers all of them)
THEMES = ("textual-dark", "textual-light", "nord", "gruvbox", "catppuccin-latte", "dracula")


class Palette(CommandPalette):
    """Textual's command palette, where paging before the command list is laid out does
    nothing: Textual 8.2.8 raises KeyError there (ctrl+p, pageup in one burst quit the app)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("pagedown", "page(1)", "Next page", show=False),
        Binding("pageup", "page(-1)", "Previous page", show=False),
    ]

    def action_page(self, direction: int) -> None:
        commands = self.query_one(CommandList)
        try:
            commands.action_page_down() if direction > 0 else commands.action_page_up()
        except KeyError:  # the list's line map is still empty: no page to move to yet
            pass


class HloLabApp(App):
    """Home screen first; ``open_op`` pushes the explorer, ``open_path`` the stepper."""

    CSS_PATH = "app.tcss"
    TITLE = "hlolab"
    COMMANDS = App.COMMANDS | {HloLabCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit", show=False, id="app.quit"),
        Binding("f1", "help", "Help", id="app.help"),
        Binding("question_mark", "help", "Help", show=False, id="app.help-2"),
        Binding("ctrl+t", "next_theme", "Theme", show=False, id="app.theme"),
    ]

    def __init__(self, open_path: str | None = None, open_op: str | None = None, *,
                 inputs: list[Any] | None = None, seed: int = 0, open_lesson: str | None = None,
                 lessons: bool = False, lang: str | None = None):
        super().__init__()
        self.open_path = open_path
        self.open_op_name = open_op
        self.open_inputs, self.open_seed = inputs, seed
        self.open_lesson_key = open_lesson
        self.open_lessons_list = lessons or open_lesson is not None
        from hlolab.messages import current_language

        self.lesson_lang = lang or current_language()  # the lessons' language (list, viewer)

    def action_command_palette(self) -> None:
        if self.use_command_palette and not CommandPalette.is_open(self):
            self.push_screen(Palette(id="--command-palette"))

    def on_mount(self) -> None:
        self.push_screen(HomeScreen())
        if self.open_op_name:
            self.open_op(self.open_op_name)
        if self.open_path:
            self.open_file(self.open_path, self.open_inputs, self.open_seed)
        if self.open_lessons_list:
            self.open_lessons()
        if self.open_lesson_key is not None:
            self.open_lesson(self.open_lesson_key)

    # --- navigation -------------------------------------------------------------------------
    def open_op(self, op: str, preset: str = "default", params: dict[str, str] | None = None) -> None:
        """Push the op explorer on ``op`` (an error notification when it has no schema)."""
        from hlolab.tui.screens.explorer import ExplorerScreen

        try:
            screen = ExplorerScreen(op, preset, params=params)
        except HloLabError as e:
            self.notify(e.message, severity="error", title="cannot explore")
            return
        self.push_screen(screen)

    def open_file(self, path: str, inputs: list[Any] | None = None, seed: int = 0) -> None:
        """Push the program stepper on the program in ``path`` (entry arguments ``inputs``,
        the rest random from ``seed``)."""
        try:
            text = Path(path).read_text()
        except (OSError, UnicodeDecodeError) as e:
            self.notify(f"cannot read {path}: {e}", severity="error", title="open")
            return
        try:
            from hlolab.tui.screens.stepper import StepperScreen

            screen = StepperScreen(text, path=path, seed=seed, inputs=inputs)
        except HloLabError as e:
            self.notify(e.short(), severity="error", title=f"cannot open {path}")
            return
        except Exception as e:  # noqa: BLE001 - never a traceback for the user
            self.log.error(traceback.format_exc())
            self.notify(f"{type(e).__name__}: {e}", severity="error", title=f"cannot open {path}")
            return
        remember_file(path)
        self.push_screen(screen)

    def open_lessons(self) -> None:
        """Push the lesson list (in ``lesson_lang``)."""
        from hlolab.tui.screens.lesson import LessonsListScreen

        self.push_screen(LessonsListScreen(self.lesson_lang))

    def open_lesson(self, key: str | int, lang: str | None = None) -> None:
        """Push the lesson viewer on lesson ``key`` (number or slug); an error is a notification."""
        from hlolab.tui.screens.lesson import LessonScreen

        if lang is not None:
            self.lesson_lang = lang
        try:
            screen = LessonScreen(key, self.lesson_lang)
        except HloLabError as e:
            self.notify(e.short(), severity="error", title="cannot open the lesson")
            return
        self.push_screen(screen)

    # --- quitting -------------------------------------------------------------------------
    def unsaved(self) -> list[str]:
        """Flush every screen's autosave, then list the typed text that quitting would lose.

        Screens opt in with ``flush_unsaved()`` (write a draft now) and ``unsaved_text()``
        (a description, or None); a failing hook counts as unsaved, never as a crash."""
        lost: list[str] = []
        for screen in reversed(self.screen_stack):
            try:
                flush = getattr(screen, "flush_unsaved", None)
                if flush is not None:
                    flush()
                describe = getattr(screen, "unsaved_text", None)
                text = describe() if describe is not None else None
            except Exception as e:  # noqa: BLE001 - ask rather than lose text or crash
                self.log.error(traceback.format_exc())
                text = f"{type(screen).__name__}: could not check ({type(e).__name__}: {e})"
            if text:
                lost.append(text)
        return lost

    async def action_quit(self) -> None:
        """q / ctrl+q: autosaved drafts are written; other typed text is asked about."""
        from hlolab.tui.screens.quit import ConfirmQuit

        if isinstance(self.screen, ConfirmQuit):  # ctrl+q twice: quit
            self.exit()
            return
        lost = self.unsaved()
        if not lost:
            self.exit()
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.exit()

        self.push_screen(ConfirmQuit(lost), answered)

    def action_go_home(self) -> None:
        while len(self.screen_stack) > 2 and not isinstance(self.screen, HomeScreen):
            self.pop_screen()
        if not isinstance(self.screen, HomeScreen):
            self.push_screen(HomeScreen())

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            return
        rows = []
        seen = set()
        for key, active in self.screen.active_bindings.items():
            b = active.binding
            if not b.description or b.description in seen or key in ("tab", "shift+tab"):
                continue
            seen.add(b.description)
            rows.append((self.get_key_display(b), b.description))
        name = type(self.screen).__name__.removesuffix("Screen").lower() or "screen"
        self.push_screen(HelpScreen(name, rows, grids=bool(self.screen.query("TensorGrid"))))

    def action_next_theme(self) -> None:
        i = THEMES.index(self.theme) if self.theme in THEMES else -1
        self.theme = THEMES[(i + 1) % len(THEMES)]
        self.notify(f"theme: {self.theme}", timeout=1.5)



def run_tui(open_path: str | None = None, open_op: str | None = None, *,
            inputs: list[Any] | None = None, seed: int = 0, open_lesson: str | None = None,
            lessons: bool = False, lang: str | None = None) -> int:
    """Run the TUI until the user quits; the exit code."""
    app = HloLabApp(open_path=open_path, open_op=open_op, inputs=inputs, seed=seed,
                    open_lesson=open_lesson, lessons=lessons, lang=lang)
    app.run()
    return int(app.return_code or 0)
