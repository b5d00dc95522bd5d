"""F1 / ``?``: the keys of the screen underneath (from its active bindings) and, where
the screen shows tensor grids, the keys every grid understands."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

GRID_KEYS = (
    ("← → ↑ ↓ / h l k j", "move the cursor"),
    ("[ ]", "previous / next slice of the innermost leading axis (rank ≥ 3)"),
    ("{ }", "previous / next slice of the outer leading axes (rank ≥ 4)"),
    ("home end pgup pgdn", "row start / end, page up / down"),
    ("enter, double click", "select the cell"),
    ("click", "move the cursor there"),
)
GENERAL_KEYS = (
    ("ctrl+p", "command palette: every op, screen and action"),
    ("ctrl+t", "next theme (palette: 'Theme' picks one)"),
    ("F1, ?", "this help"),
    ("tab / shift+tab", "next / previous panel"),
    ("q, ctrl+q", "quit (q only outside text fields)"),
)


def _table(title: str, rows: Any) -> Table:
    t = Table(title=title, title_justify="left", title_style="bold", show_header=False, box=None,
              padding=(0, 2, 0, 0), expand=False)
    t.add_column(style="bold", no_wrap=True)
    t.add_column()
    for key, what in rows:
        t.add_row(key, what)
    return t


class HelpScreen(ModalScreen[None]):
    """Keys of ``screen_name`` (its bindings, as collected by the app) and the general keys."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,f1,question_mark,q", "close", "Close", id="help.close"),
    ]

    def __init__(self, screen_name: str, bindings: list[tuple[str, str]], grids: bool = True):
        super().__init__()
        self.screen_name = screen_name
        self.bindings = bindings
        self.grids = grids  # the screen shows tensor grids: list their keys

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box"):
            yield Static(Text("hlolab help", style="bold"), id="help-title")
            if self.bindings:
                yield Static(_table(f"{self.screen_name} keys", self.bindings))
            if self.grids:
                yield Static(_table("tensor grids", GRID_KEYS))
            yield Static(_table("everywhere", GENERAL_KEYS))
            yield Static(Text("The op explorer: the cursor on a result cell colours its sources by role; "
                              "on an operand cell, the result cells it feeds. Parameters are checked as you "
                              "type; an invalid combination names the spec constraint it breaks.",
                              style="dim"))
            yield Static(Text("esc closes", style="italic dim"))

    def action_close(self) -> None:
        self.dismiss(None)
