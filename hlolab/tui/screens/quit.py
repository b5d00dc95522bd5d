"""Ask before quitting when a screen holds typed text that cannot be autosaved."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static


class ConfirmQuit(ModalScreen[bool]):
    """"Quit and lose …?" with the list of what would be lost; y quits, n / esc stays."""

    DEFAULT_CSS = """
    ConfirmQuit { align: center middle; }
    ConfirmQuit > Vertical { width: 70; max-width: 95%; height: auto; border: thick $warning;
                             background: $surface; padding: 0 1; }
    ConfirmQuit Horizontal { height: auto; margin-top: 1; }
    ConfirmQuit Button { margin-right: 2; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "quit", id="quit.yes"),
        Binding("n,escape", "answer(False)", "stay", id="quit.no"),
    ]

    def __init__(self, lost: list[str]):
        super().__init__()
        self.lost = lost

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Quit? This would be lost:")
            yield Static("\n".join(f"  • {x}" for x in self.lost), markup=False, id="quit-lost")
            with Horizontal():
                yield Button("Quit (y)", variant="error", id="quit-yes")
                yield Button("Stay (n / esc)", variant="primary", id="quit-no")

    def on_mount(self) -> None:
        self.query_one("#quit-no", Button).focus()

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "quit-yes")
