"""The stepper's view of a process grid: one column per process, and source-line markers.

``ProcessPanel`` shows, per process of the grid, its name (``process 1 (replica 0,
partition 1)``), its current op (its last event as of the session's cursor) and its state
(ready, waits at a collective for whom, finished), the focused process highlighted. When
the columns would be narrower than ``MIN_COLUMN`` (80 columns, 4 processes) it shows one
line of tabs, one per process, and the focused process's details under them.

``ProcessSourceView`` is the program text with, at the right edge of a line, the numbers of
the processes whose current op is there (``◀ 0,2,3``), so one sees where every process is.
"""

from __future__ import annotations

from typing import Any

from rich.segment import Segment
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.strip import Strip
from textual.widgets import Static

from hlolab.session import ProcessState
from hlolab.tui.widgets.source import SourceView

MIN_COLUMN = 26  # columns of text a process needs to be shown side by side with the others
SHORT_STATE = {"not started": "new", "ready": "ready", "waiting": "waits", "finished": "done"}


def op_text(ps: ProcessState) -> str:
    """``%y = dot_general line 6`` (the process's current op), ``not started``."""
    ev = ps.event
    if ev is None:
        return "not started"
    names = ", ".join(v.name for v in ev.op.results)
    line = f" line {ev.op.loc.line}" if ev.op.loc else ""
    what = ev.op.name.removeprefix("stablehlo.")
    return f"{names} = {what}{line}" if names else f"{what}{line}"


def state_text(ps: ProcessState) -> str:
    """``ready`` / ``waits at all_gather line 7 for 0, 2, 3`` / ``finished: 1 result``."""
    if ps.state == "finished":
        n = len(ps.results) if ps.results is not None else 0
        return f"finished: {n} result{'s' if n != 1 else ''}"
    if ps.state == "not started":
        return "ready"
    return ps.describe()


class ProcessPanel(Static):
    """Every process of the grid: its current op and state; the focused one highlighted."""

    DEFAULT_CSS = """
    ProcessPanel { height: auto; max-height: 7; padding: 0 1; background: $boost; display: none; }
    ProcessPanel.-shown { display: block; }
    """

    def __init__(self, *, id: str | None = None):
        super().__init__(id=id, markup=False)
        self.states: list[ProcessState] = []
        self.focus_process = 0
        self.mode = ""

    def show_states(self, states: list[ProcessState], focus: int, mode: str) -> None:
        """Show ``states`` (hidden for a single process), ``focus`` highlighted."""
        self.states, self.focus_process, self.mode = list(states), focus, mode
        self.set_class(len(states) > 1, "-shown")
        self._redraw()

    def on_resize(self) -> None:
        self._redraw()

    @property
    def tabbed(self) -> bool:
        """Too narrow for a column per process: one line of tabs and the focused one's details."""
        width = self.content_size.width or self.size.width
        return bool(self.states) and width < MIN_COLUMN * len(self.states)

    def column_texts(self) -> list[str]:
        """Per process, the text its column shows (title, op, state), one line each."""
        return [f"{'▶ ' if ps.process == self.focus_process else ''}{ps.name}\n{op_text(ps)}\n"
                f"{state_text(ps)}" for ps in self.states]

    def _redraw(self) -> None:
        if len(self.states) < 2:
            self.update("")
            return
        self.update(self._tabs() if self.tabbed else self._columns())

    def _title_style(self, ps: ProcessState) -> str:
        return "bold reverse" if ps.process == self.focus_process else "bold"

    def _state_style(self, ps: ProcessState) -> str:
        return {"waiting": "yellow", "finished": "green"}.get(ps.state, "")

    def _columns(self) -> Any:
        table = Table.grid(expand=True, padding=(0, 1))
        for _ in self.states:
            table.add_column(ratio=1)
        width = (self.content_size.width or self.size.width) // len(self.states) - 1
        titles = []
        for ps in self.states:
            title = ("▶ " if ps.process == self.focus_process else "") + ps.name
            if len(title) > width:  # "process 1" over "(replica 0, partition 1)", not cut mid-way
                head, _, rest = title.partition(" (")
                title = f"{head}\n({rest}"
            titles.append(Text(title, style=self._title_style(ps)))
        table.add_row(*titles)
        table.add_row(*[Text(op_text(ps)) for ps in self.states])
        table.add_row(*[Text(state_text(ps), style=self._state_style(ps)) for ps in self.states])
        return table

    def _tabs(self) -> Text:
        out = Text()
        for ps in self.states:
            label = f" {ps.process}:{SHORT_STATE.get(ps.state, ps.state)} "
            out.append(label, style=self._title_style(ps) if ps.process == self.focus_process else "")
            out.append("│", style="dim")
        out.append(f" {self.mode}", style="dim")
        focused = next((ps for ps in self.states if ps.process == self.focus_process), None)
        if focused is not None:
            out.append("\n")
            out.append(f"▶ {focused.name}", style="bold")
            out.append(f" · {op_text(focused)} · ")
            out.append(state_text(focused), style=self._state_style(focused))
        return out


class ProcessSourceView(SourceView):
    """The source view, with the processes whose current op is on a line named at its right
    edge (``◀ 0,2,3``)."""

    def __init__(self, text: str = "", *, id: str | None = None):
        super().__init__(text, id=id)
        self.process_marks: dict[int, list[int]] = {}

    def set_process_marks(self, marks: dict[int, list[int]]) -> None:
        """``{line: [process, ...]}``; empty for a single process."""
        if marks != self.process_marks:
            self.process_marks = {n: sorted(ps) for n, ps in marks.items()}
            self.refresh()

    def set_text(self, text: str) -> None:
        self.process_marks = {}
        super().set_text(text)

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        n = self.scroll_offset.y + y + 1
        procs = self.process_marks.get(n)
        if not procs:
            return strip
        label = " ◀ " + ",".join(map(str, procs)) + " "
        width = strip.cell_length
        if len(label) * 2 > width:  # no room: the ▶ of the focused process still shows
            return strip
        style = self.get_component_rich_style("source--marker") + Style(reverse=True)
        return Strip.join([strip.crop(0, width - len(label)), Strip([Segment(label, style)])])
