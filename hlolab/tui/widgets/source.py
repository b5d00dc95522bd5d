"""The program text of the stepper: highlighted MLIR with a gutter.

Built on Textual's Line API (``ScrollView.render_line``) so only the visible
lines are drawn: a JAX-lowered program with thousands of long lines scrolls
as fast as a short one. Lines are highlighted with hlolab's own lexer (no
extra dependency) and cached per line; the gutter says, per line:

- ``●`` a breakpoint (click the gutter or ``t``/F9 on the screen),
- ``▶`` the op instance the stepper is on (the whole line tinted),
- ``◆`` an op on the path of the current trace (tinted too).

Colours come from component classes (``source--op``, ``source--current``,
...) with theme variables, so light and dark themes both work.
"""

from __future__ import annotations

import re
from functools import lru_cache

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from hlolab.errors import HloLabError
from hlolab.ir import lexer as lx

_TYPE_RE = re.compile(r"^(?:tensor|tuple|complex|index|token|[fiu][0-9]+|[su]i[0-9]+|bf16|tf32"
                      r"|f8E\w+|f4E\w+|f6E\w+|x[0-9x?]*\w*)$")
_KEYWORDS = frozenset({"module", "func.func", "public", "private", "attributes", "cond", "do",
                       "return", "func.return", "stablehlo.return", "loc"})


@lru_cache(maxsize=4096)
def highlight_line(line: str) -> tuple[tuple[int, int, str], ...]:
    """Spans ``(start, end, kind)`` of one source line, kinds named after the
    ``source--<kind>`` component classes. Never raises: a character the lexer
    rejects is left plain and lexing goes on after it."""
    spans: list[tuple[int, int, str]] = []
    lexer = lx.Lexer(line)
    pos = 0
    n = len(line)
    while pos < n:
        comment = line.find("//", pos)
        try:
            tok = lexer.lex(pos)
        except HloLabError:
            nxt = lx.BLANK_RE.match(line, pos).end()  # the rejected character
            if comment >= 0 and comment < nxt:
                spans.append((comment, n, "comment"))
                break
            pos = nxt + 1
            continue
        if comment >= 0 and comment < tok.start:  # the lexer skipped a // comment
            spans.append((comment, n, "comment"))
            break
        if tok.kind == lx.EOF:
            break
        spans.append((tok.start, tok.end, _kind(tok)))
        pos = tok.end
    return tuple(spans)


def _kind(tok: lx.Token) -> str:
    if tok.kind == lx.BARE:
        if tok.text in _KEYWORDS:
            return "keyword"
        if _TYPE_RE.match(tok.text):
            return "type"
        return "op" if "." in tok.text else "plain"
    return {lx.VALUE: "value", lx.CARET: "value", lx.AT: "func", lx.HASH: "attr", lx.BANG: "type",
            lx.INT: "number", lx.FLOAT: "number", lx.STRING: "string", lx.PUNCT: "punct"}.get(tok.kind,
                                                                                            "plain")


class SourceView(ScrollView, can_focus=True):
    """Highlighted program text with a cursor line and a marker gutter."""

    COMPONENT_CLASSES = {
        "source--op", "source--keyword", "source--value", "source--func", "source--type",
        "source--number", "source--string", "source--attr", "source--comment", "source--punct",
        "source--gutter", "source--breakpoint", "source--marker", "source--current",
        "source--trace", "source--cursor", "source--error",
    }
    DEFAULT_CSS = """
    SourceView { background: $surface; }
    SourceView > .source--op { color: $accent; text-style: bold; }
    SourceView > .source--keyword { color: $primary; text-style: bold; }
    SourceView > .source--value { color: $secondary; }
    SourceView > .source--func { color: $primary; }
    SourceView > .source--type { color: $success; }
    SourceView > .source--number { color: $warning; }
    SourceView > .source--string { color: $warning; }
    SourceView > .source--attr { color: $text-muted; }
    SourceView > .source--comment { color: $text-muted; text-style: italic; }
    SourceView > .source--punct { color: $text-muted; }
    SourceView > .source--gutter { color: $text-muted; background: $panel; }
    SourceView > .source--breakpoint { color: $error; text-style: bold; }
    SourceView > .source--marker { color: $accent; text-style: bold; }
    SourceView > .source--current { background: $accent 30%; }
    SourceView > .source--trace { background: $warning 20%; }
    SourceView > .source--error { background: $error 30%; }
    SourceView > .source--cursor { background: $primary 15%; }
    SourceView:focus > .source--cursor { background: $primary 40%; }
    """
    BINDINGS = [
        Binding("up,k", "cursor(-1)", "up", show=False),
        Binding("down,j", "cursor(1)", "down", show=False),
        Binding("pageup", "page(-1)", "page up", show=False),
        Binding("pagedown", "page(1)", "page down", show=False),
        Binding("home", "cursor_to(1)", "first line", show=False),
        Binding("end", "cursor_to(-1)", "last line", show=False),
        Binding("left,h", "scroll_left", "scroll left", show=False),
        Binding("right,l", "scroll_right", "scroll right", show=False),
        Binding("enter", "select_line", "show value", id="source.select"),
    ]

    cursor_line: reactive[int] = reactive(1)
    current_line: reactive[int | None] = reactive(None)
    error_line: reactive[int | None] = reactive(None)

    class CursorMoved(Message):
        """The cursor moved to ``line`` (1-based)."""

        def __init__(self, view: SourceView, line: int):
            super().__init__()
            self.view = view
            self.line = line

    class LineSelected(Message):
        """Enter on ``line``: the screen shows the value the op there makes."""

        def __init__(self, view: SourceView, line: int):
            super().__init__()
            self.view = view
            self.line = line

    class GutterClicked(Message):
        """The gutter of ``line`` was clicked (the screen toggles a breakpoint)."""

        def __init__(self, view: SourceView, line: int):
            super().__init__()
            self.view = view
            self.line = line

    def __init__(self, text: str = "", *, name: str | None = None, id: str | None = None,
                 classes: str | None = None):
        super().__init__(name=name, id=id, classes=classes)
        self.breakpoints: frozenset[int] = frozenset()
        self.trace_lines: frozenset[int] = frozenset()
        self.op_lines: frozenset[int] = frozenset()
        self.op_owner: dict[int, int] = {}  # line -> first line of the innermost op holding it
        self.lines: list[str] = [""]
        self._line_cache: dict[tuple, Strip] = {}
        self.set_text(text)

    # --- content -------------------------------------------------------------
    def set_text(self, text: str) -> None:
        """Show ``text`` (tabs expanded so columns match the terminal)."""
        self.lines = text.expandtabs(4).split("\n") or [""]
        if len(self.lines) > 1 and self.lines[-1] == "":
            self.lines.pop()
        width = max((len(s) for s in self.lines), default=0)
        self.virtual_size = Size(width + self.gutter_width + 1, len(self.lines))
        self.breakpoints = frozenset()
        self.trace_lines = frozenset()
        self.set_reactive(SourceView.cursor_line, 1)
        self.set_reactive(SourceView.current_line, None)
        self.set_reactive(SourceView.error_line, None)
        self._line_cache: dict[tuple, Strip] = {}
        self.refresh()

    @property
    def gutter_width(self) -> int:
        """Two marker cells, the line number, a space."""
        return 2 + len(str(max(1, len(self.lines)))) + 1

    def set_breakpoints(self, lines: set[int] | frozenset[int]) -> None:
        self.breakpoints = frozenset(lines)
        self.refresh()

    def set_trace_lines(self, lines: set[int] | frozenset[int]) -> None:
        self.trace_lines = frozenset(lines)
        self.refresh()

    def set_op_spans(self, spans: list[tuple[int, int]]) -> None:
        """The (first, last) source lines of every op's text. An op starts on its first line
        (others are dimmed in the gutter's number); a line inside an op's text (the closing
        ``}) : (...) -> ...`` of a multi-line op) belongs to the innermost op holding it."""
        self.op_lines = frozenset(first for first, _ in spans)
        owner: dict[int, int] = {}
        for first, last in sorted(spans, key=lambda s: s[0] - s[1]):  # widest first, inner last
            owner.update(dict.fromkeys(range(first, last + 1), first))
        owner.update({n: n for n in self.op_lines})
        self.op_owner = owner
        self.refresh()

    def op_at(self, line: int) -> int | None:
        """The first line of the op whose text holds ``line`` (None: no op there)."""
        return self.op_owner.get(line)

    # --- reactives ---------------------------------------------------------------
    def validate_cursor_line(self, line: int) -> int:
        return max(1, min(line, len(self.lines)))

    def watch_cursor_line(self, old: int, new: int) -> None:
        self.scroll_to_line(new)
        self.refresh()
        self.post_message(self.CursorMoved(self, new))

    def watch_current_line(self, old: int | None, new: int | None) -> None:
        if new is not None:
            self.scroll_to_line(new, center=True)
        self.refresh()

    def watch_error_line(self, old: int | None, new: int | None) -> None:
        if new is not None:
            self.scroll_to_line(new, center=True)
        self.refresh()

    def scroll_to_line(self, line: int, center: bool = False) -> None:
        """Bring ``line`` into view (centred when asked and it is off screen)."""
        y = line - 1
        if self.scroll_y <= y < self.scroll_y + self.scrollable_content_region.height:
            return
        self.scroll_to_region(Region(0, y, 1, 1), animate=False, center=center, x_axis=False,
                              immediate=True)

    # --- actions -------------------------------------------------------------
    def action_cursor(self, delta: int) -> None:
        self.cursor_line += delta

    def action_page(self, direction: int) -> None:
        self.cursor_line += direction * max(1, self.scrollable_content_region.height - 1)

    def action_cursor_to(self, line: int) -> None:
        self.cursor_line = len(self.lines) if line < 0 else line

    def action_select_line(self) -> None:
        self.post_message(self.LineSelected(self, self.cursor_line))

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        line = int(self.scroll_y) + offset.y + 1
        if not 1 <= line <= len(self.lines):
            return
        if offset.x < self.gutter_width:
            self.post_message(self.GutterClicked(self, line))
        self.cursor_line = line

    # --- drawing -------------------------------------------------------------
    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._line_cache = {}

    def render_line(self, y: int) -> Strip:
        """One screen row: the fixed gutter, then the code scrolled horizontally."""
        scroll_x, scroll_y = self.scroll_offset
        n = scroll_y + y + 1
        width = self.scrollable_content_region.width
        if n > len(self.lines):
            return Strip.blank(width, self.rich_style)
        state = (n in self.breakpoints, n == self.current_line, n in self.trace_lines,
                 n == self.error_line, n == self.cursor_line, n in self.op_lines)
        key = (n, state)
        full = self._line_cache.get(key)
        if full is None:
            if len(self._line_cache) > 2000:
                self._line_cache.clear()
            full = self._line_cache[key] = self._render_full_line(n, *state)
        gutter_w = self.gutter_width
        code_w = max(0, width - gutter_w)
        return Strip.join([full.crop(0, gutter_w),
                           full.crop(gutter_w + scroll_x, gutter_w + scroll_x + code_w)
                           .extend_cell_length(code_w, self._row_style(*state[1:5]))])

    def _row_style(self, current: bool, trace: bool, error: bool, cursor: bool) -> Style:
        base = self.rich_style
        for flag, cls in ((trace, "source--trace"), (current, "source--current"),
                          (error, "source--error"), (cursor, "source--cursor")):
            if flag:
                bg = self.get_component_rich_style(cls).bgcolor  # blended over the background
                if bg is not None:
                    base = base + Style(bgcolor=bg)
        return base

    def _render_full_line(self, n: int, bp: bool, current: bool, trace: bool, error: bool,
                          cursor: bool, has_op: bool) -> Strip:
        gstyle = self.get_component_rich_style("source--gutter")
        mark = self.get_component_rich_style("source--marker", partial=True)
        digits = len(str(len(self.lines)))
        segs = [Segment("●", gstyle + self.get_component_rich_style("source--breakpoint", partial=True))
                if bp else Segment(" ", gstyle),
                Segment("▶" if current else "◆" if trace else "✗" if error else " ", gstyle + mark),
                Segment(f"{n:>{digits}} ", gstyle + (Style() if has_op or not self.op_lines
                                                     else Style(dim=True)))]
        row = self._row_style(current, trace, error, cursor)
        line = self.lines[n - 1]
        pos = 0
        for start, end, kind in highlight_line(line):
            if start > pos:
                segs.append(Segment(line[pos:start], row))
            style = row if kind == "plain" else \
                row + self.get_component_rich_style(f"source--{kind}", partial=True)
            segs.append(Segment(line[start:end], style))
            pos = end
        if pos < len(line):
            segs.append(Segment(line[pos:], row))
        return Strip(segs)
