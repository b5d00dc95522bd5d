"""A tensor of any rank as a grid of cells, drawn with Textual's line API.

Two axes form the grid: the last two, or the ``grid_axes`` the op declares
(a convolution's spatial dims of an NHWC image); a 1-D tensor is one row, a
scalar one cell. The other axes are chosen with a slice selector (``[``/``]``
the innermost, ``{``/``}`` the outer ones). Internally the grid shows a
transposed view (other axes first, grid axes last); every public index (the
cursor's ``index``, highlights, messages) is in the tensor's own order. Only visible rows are rendered, and
a rendered row is cached until the value, the highlights or the slice change,
so moving the cursor repaints two rows: 64x64 and larger tensors stay fast.

Highlights map full indices to a provenance role; the colours are the ones of
``hlolab.trace.roles`` so the TUI and the exported images agree.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

import numpy as np
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import var
from textual.scroll_view import ScrollView
from textual.strip import Strip

from hlolab.trace.roles import ROLE_COLORS, text_color

PEER = "cursor-peer"
_FULL_FORMAT_LIMIT = 65_536  # slices up to this size are formatted at once (exact column width)
_SAMPLE = 4_096
_ROW_CACHE = 512


def format_element(x: object) -> str:
    """One element, compactly: ints as ints, bools T/F, floats in numpy's shortest repr."""
    if isinstance(x, (bool, np.bool_)):
        return "T" if x else "F"
    s = str(x)
    if s.startswith("(") and s.endswith(")"):  # complex: (1-2j) -> 1-2j
        s = s[1:-1]
    return s


def format_row(row: np.ndarray) -> list[str]:
    """A 1-D array as cell texts (vectorized for ints and bools)."""
    kind = row.dtype.kind
    if kind == "b":
        return np.where(row, "T", "F").tolist()
    if kind in "iu":
        return row.astype(str).tolist()
    return [format_element(x) for x in row]


def format_quantized_row(row: np.ndarray, reals: np.ndarray) -> list[str]:
    """A quantized row: each storage value with its real value, ``174 (43.5)`` (no real
    value where there is none: NaN, a padding cell)."""
    return [s if not np.isfinite(r) else f"{s} ({format_element(r)})"
            for s, r in zip(format_row(row), reals.tolist(), strict=True)]


class _Slice:
    """The 2-D slice on screen: cell texts per row (lazy) and the column width; ``reals``
    (a quantized tensor's real values, same shape) are written after the storage values."""

    def __init__(self, plane: np.ndarray, reals: np.ndarray | None = None):
        self.plane = plane
        self.reals = reals
        self.rows, self.cols = plane.shape
        self._texts: dict[int, list[str]] = {}
        self.width = self._measure()

    def _format(self, row: int) -> list[str]:
        if self.reals is None:
            return format_row(self.plane[row])
        return format_quantized_row(self.plane[row], self.reals[row])

    def _measure(self) -> int:
        p = self.plane
        if p.size == 0:
            return 1
        if self.reals is not None:
            if p.size <= _FULL_FORMAT_LIMIT:
                for r in range(self.rows):
                    self._texts[r] = self._format(r)
                return max(len(t) for texts in self._texts.values() for t in texts)
            pick = np.linspace(0, p.size - 1, _SAMPLE).astype(np.int64)
            sample = format_quantized_row(p.reshape(-1)[pick], self.reals.reshape(-1)[pick])
            return max(len(t) for t in sample)
        kind = p.dtype.kind
        if kind == "b":
            return 1
        if kind in "iu":
            return max(len(str(int(p.min()))), len(str(int(p.max()))))
        if p.size <= _FULL_FORMAT_LIMIT:
            for r in range(self.rows):
                self._texts[r] = format_row(p[r])
            return max(len(t) for texts in self._texts.values() for t in texts)
        flat = p.reshape(-1)
        sample = flat[np.linspace(0, flat.size - 1, _SAMPLE).astype(np.int64)]
        return max(len(t) for t in format_row(sample))

    def texts(self, row: int) -> list[str]:
        t = self._texts.get(row)
        if t is None:
            t = self._texts[row] = self._format(row)
        return t


def split_title(title: str) -> tuple[str, str]:
    """``"%x : tensor<2x3xf32>, dims 0: free, …"`` -> the name and type, and the note after
    the first comma outside brackets ("" when there is none)."""
    depth = 0
    for i, ch in enumerate(title):
        depth += ch in "<([{"
        depth -= ch in ">)]}"
        if ch == "," and depth == 0:
            return title[:i], title[i + 1:].strip()
    return title, ""


class TensorGrid(ScrollView, can_focus=True):
    """Any-rank tensor: last two axes as a grid of cells; leading axes chosen with a slice selector."""

    DEFAULT_CSS = """
    TensorGrid {
        height: auto;
        width: auto;
        max-width: 100%;
        border: round $foreground 30%;
        border-title-color: $foreground;
        padding: 0 1 0 0;
        scrollbar-size: 1 1;
    }
    TensorGrid:focus {
        border: heavy $accent;
        border-title-color: $accent;
        border-title-style: bold;
    }
    TensorGrid > .tensor-grid--label { color: $foreground 55%; }
    TensorGrid > .tensor-grid--info { color: $foreground 70%; text-style: italic; }
    TensorGrid > .tensor-grid--cursor { text-style: reverse bold; }
    TensorGrid > .tensor-grid--cursor-blur { text-style: underline bold; }
    TensorGrid > .tensor-grid--peer { background: $secondary 50%; text-style: bold; }
    TensorGrid > .tensor-grid--frame { color: $foreground 45%; }
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "tensor-grid--label", "tensor-grid--info", "tensor-grid--cursor",
        "tensor-grid--cursor-blur", "tensor-grid--peer", "tensor-grid--frame",
    }

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "move(-1, 0)", "Up", show=False, id="grid.up"),
        Binding("down,j", "move(1, 0)", "Down", show=False, id="grid.down"),
        Binding("left,h", "move(0, -1)", "Left", show=False, id="grid.left"),
        Binding("right,l", "move(0, 1)", "Right", show=False, id="grid.right"),
        Binding("home", "edge('home')", "Row start", show=False, id="grid.home"),
        Binding("end", "edge('end')", "Row end", show=False, id="grid.end"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="grid.pageup"),
        Binding("pagedown", "page(1)", "Page down", show=False, id="grid.pagedown"),
        Binding("left_square_bracket", "slice(-1)", "Prev slice", show=False, id="grid.prev-slice"),
        Binding("right_square_bracket", "slice(1)", "Next slice", show=False, id="grid.next-slice"),
        Binding("left_curly_bracket", "outer_slice(-1)", "Prev outer", show=False, id="grid.prev-outer"),
        Binding("right_curly_bracket", "outer_slice(1)", "Next outer", show=False, id="grid.next-outer"),
        Binding("enter", "activate", "Select", show=False, id="grid.activate"),
    ]

    cursor: var[tuple[int, ...]] = var((), init=False)
    """The full index of the cursor cell (len == rank; () for rank 0)."""

    class _CellMessage(Message):
        """A message about one cell of ``grid``."""

        def __init__(self, grid: TensorGrid, index: tuple[int, ...]):
            super().__init__()
            self.grid = grid
            self.index = index

        @property
        def control(self) -> TensorGrid:
            return self.grid

    class CursorMoved(_CellMessage):
        """The cursor moved to ``index`` (keys, mouse, or ``move_cursor``)."""

    class Activated(_CellMessage):
        """Enter or a double click on the cell ``index``."""

    def __init__(self, value: np.ndarray | None = None, *, title: str = "", name: str | None = None,
                 id: str | None = None, classes: str | None = None):
        super().__init__(name=name, id=id, classes=classes)
        self._value: np.ndarray | None = None  # the view on screen: other axes, then the grid axes
        self._orig: np.ndarray | None = None
        self.title_text = ""  # the whole title given to set_value (split over both borders)
        self._perm: tuple[int, ...] | None = None  # view axis -> tensor axis (None: the same order)
        self._kinds: np.ndarray | None = None
        self._reals: np.ndarray | None = None  # a quantized tensor's real values, view axis order
        self._highlights: dict[tuple[int, ...], str] = {}
        self._plane_hl: dict[tuple[int, int], str] = {}
        self._other_slices = 0
        self._slice: _Slice | None = None
        self._slice_key: tuple[int, ...] | None = None
        self._rows: dict[tuple, Strip] = {}
        self._role_styles: dict[str, Style] = {}
        self.set_reactive(TensorGrid.cursor, ())
        self.set_value(value, title)

    # --- public interface ----------------------------------------------------------
    @property
    def value(self) -> np.ndarray | None:
        return self._orig

    @property
    def index(self) -> tuple[int, ...]:
        """The cursor's index in the tensor's own axis order."""
        return self._to_orig(tuple(self.cursor))

    @property
    def grid_axes(self) -> tuple[int, int] | None:
        """The tensor axes shown as rows and columns (None: the last two, or rank < 2)."""
        return (self._perm[-2], self._perm[-1]) if self._perm is not None else None

    def _to_view(self, index: tuple[int, ...]) -> tuple[int, ...]:
        if self._perm is None or len(index) != len(self._perm):
            return index
        return tuple(index[a] for a in self._perm)

    def _to_orig(self, index: tuple[int, ...]) -> tuple[int, ...]:
        if self._perm is None or len(index) != len(self._perm):
            return index
        out = [0] * len(index)
        for view_axis, axis in enumerate(self._perm):
            out[axis] = index[view_axis]
        return tuple(out)

    @property
    def highlights(self) -> dict[tuple[int, ...], str]:
        return dict(self._highlights)

    @property
    def slice_index(self) -> tuple[int, ...]:
        """The leading indices of the slice on screen (() for rank <= 2)."""
        return tuple(self.cursor[:-2]) if self._value is not None and self._value.ndim > 2 else ()

    @property
    def has_cells(self) -> bool:
        return self._value is not None and self._value.size > 0

    @property
    def other_slice_highlights(self) -> int:
        """Highlighted cells on slices not on screen (told in the info line)."""
        return self._other_slices

    def set_value(self, value: np.ndarray | None, title: str = "", *,
                  kinds: np.ndarray | None = None, grid_axes: tuple[int, int] | None = None,
                  reals: np.ndarray | None = None) -> None:
        """Show ``value``; the cursor stays where it was when it is still inside the shape.

        ``kinds`` (same shape, int8: 0 element, 1 padding, 2 dilation hole) dims the
        cells of a padded frame that are not operand elements. ``grid_axes`` are the
        two axes drawn as rows and columns (default: the last two). ``reals`` (same
        shape, float: a quantized tensor's real values, NaN for none) are shown after
        each storage value, ``174 (43.5)``.
        """
        old_orig = self.index if self._value is not None else tuple(self.cursor)
        self._orig = None if value is None else np.asarray(value)
        self._perm = None
        if self._orig is not None and grid_axes is not None:
            rank = self._orig.ndim
            a, b = (int(x) for x in grid_axes)
            if rank >= 2 and a != b and 0 <= a < rank and 0 <= b < rank and (a, b) != (rank - 2, rank - 1):
                self._perm = tuple(x for x in range(rank) if x not in (a, b)) + (a, b)
        self._value = self._orig if self._perm is None else self._orig.transpose(self._perm)
        if kinds is not None and self._orig is not None and kinds.shape == self._orig.shape:
            self._kinds = kinds if self._perm is None else kinds.transpose(self._perm)
        else:
            self._kinds = None
        if reals is not None and self._orig is not None and np.shape(reals) == self._orig.shape:
            r = np.asarray(reals)
            self._reals = r if self._perm is None else r.transpose(self._perm)
        else:
            self._reals = None
        # "name : type" on the top border, what the op says about the tensor (its dims'
        # roles, its padded frame) on the bottom one, so neither is cut at 80 columns
        self.title_text = title
        head, note = split_title(title)
        self.border_title = head or None
        self.border_subtitle = note or None
        self._slice_key = None
        if self._value is not None:
            shape = self._value.shape
            old = self._to_view(old_orig)
            if len(old) == len(shape) and all(0 <= i < d for i, d in zip(old, shape)):
                new = old
            else:
                new = tuple(min(max(i, 0), max(d - 1, 0))
                            for i, d in zip(old + (0,) * len(shape), shape))[:len(shape)]
            self.set_reactive(TensorGrid.cursor, new)
            if new != old and self.is_mounted:
                self.post_message(self.CursorMoved(self, self._to_orig(new)))
        else:
            self.set_reactive(TensorGrid.cursor, ())
        self._split_highlights()
        self._layout_changed()

    def set_highlights(self, cells: Mapping[tuple[int, ...], str]) -> None:
        """Colour cells by role: full index -> ROLE_COLORS key (or "cursor-peer")."""
        self._highlights = {tuple(int(i) for i in k): v for k, v in cells.items()}
        before = self._other_slices
        self._split_highlights()
        if self._other_slices != before:
            self._layout_changed()  # the "highlighted on other slices" line changed
        else:
            self._invalidate()

    def clear_highlights(self) -> None:
        self.set_highlights({})

    def move_cursor(self, index: tuple[int, ...]) -> None:
        """Put the cursor on the full ``index`` (switching the slice on screen)."""
        self.cursor = self._to_view(tuple(int(i) for i in index))

    # --- geometry ------------------------------------------------------------------
    def _plane(self, v: np.ndarray | None = None) -> np.ndarray:
        """The 2-D slice on screen of ``v`` (default: the value; the real values have its shape)."""
        v = self._value if v is None else v
        assert v is not None
        if v.ndim == 0:
            return v.reshape(1, 1)
        if v.ndim == 1:
            return v.reshape(1, -1)
        if v.ndim > 2 and 0 in v.shape[:-2]:  # no slice to show (an empty leading axis)
            return np.empty((0, v.shape[-1]), v.dtype)
        return v[tuple(self.cursor[:-2])] if v.ndim > 2 else v

    def _cell_of(self, index: tuple[int, ...]) -> tuple[int, int]:
        if len(index) == 0:
            return 0, 0
        if len(index) == 1:
            return 0, index[0]
        return index[-2], index[-1]

    @property
    def _current(self) -> _Slice:
        key = self.slice_index
        if self._slice is None or self._slice_key != key:
            self._slice = _Slice(self._plane(),
                                 None if self._reals is None else self._plane(self._reals))
            self._slice_key = key
            self._split_highlights()
            self._rows.clear()
        return self._slice

    @property
    def _n_header(self) -> int:
        """Info lines (slice, highlights elsewhere), then the column labels."""
        return len(self._info_lines()) + 1

    def _info_lines(self) -> list[str]:
        v = self._value
        if v is None or v.ndim <= 2:
            return []
        where = self._to_orig(tuple(self.cursor[:-2]) + (-1, -1))
        at = ", ".join(":" if i < 0 else str(i) for i in where)
        others = "x".join(str(d) for d in v.shape[:-2])
        lines = [f"slice [{at}] of {others}"]
        if self._other_slices:
            lines.append(f"{self._other_slices} highlighted on other slices")
        return lines

    def _label_width(self) -> int:
        rows = 1 if self._value is None or self._value.ndim < 2 else self._value.shape[-2]
        return len(str(max(rows - 1, 0))) + 1

    def _cell_width(self) -> int:
        if self._value is None:
            return 1
        cols = 1 if self._value.ndim == 0 else self._value.shape[-1]
        return max(self._current.width, len(str(max(cols - 1, 0)))) + 1

    def _layout_changed(self) -> None:
        if self._value is None:
            self.virtual_size = Size(16, 1)
        else:
            s = self._current
            width = self._label_width() + s.cols * self._cell_width()
            info = max((len(t) for t in self._info_lines()), default=0)
            self.virtual_size = Size(max(width, info), self._n_header + max(s.rows, 1))
        self._rows.clear()
        self.refresh(layout=True)

    def get_content_width(self, container: Size, viewport: Size) -> int:
        """Wide enough for the border title when there is room (never forces scrolling)."""
        return max(self.virtual_size.width, len(str(self.border_title or "")) + 4,
                   len(str(self.border_subtitle or "")) + 4)

    def _invalidate(self) -> None:
        self._rows.clear()
        self.refresh()

    def _split_highlights(self) -> None:
        """Highlights of the slice on screen by (row, col); count the others."""
        v = self._value
        plane: dict[tuple[int, int], str] = {}
        other = 0
        if v is not None:
            lead = self.slice_index
            n = len(lead)
            for k, role in self._highlights.items():
                if len(k) != v.ndim:
                    continue
                k = self._to_view(k)
                if k[:n] == lead:
                    plane[self._cell_of(k)] = role
                else:
                    other += 1
        self._plane_hl = plane
        self._other_slices = other

    # --- cursor ----------------------------------------------------------------------
    def validate_cursor(self, index: tuple[int, ...]) -> tuple[int, ...]:
        v = self._value
        if v is None:
            return ()
        idx = tuple(int(i) for i in index)
        if len(idx) != v.ndim:
            return tuple(self.cursor)
        return tuple(min(max(i, 0), max(d - 1, 0)) for i, d in zip(idx, v.shape))

    def watch_cursor(self, old: tuple[int, ...], new: tuple[int, ...]) -> None:
        if self._value is None:
            return
        if self._value.ndim > 2 and tuple(old[:-2]) != tuple(new[:-2]):
            self._slice_key = None  # another slice: re-format, re-split the highlights
            self._layout_changed()
        else:
            for index in (old, new):
                if len(index) == self._value.ndim:
                    self._refresh_row(self._cell_of(index)[0])
        self._scroll_to_cursor()
        if self.has_cells:
            self.post_message(self.CursorMoved(self, self._to_orig(tuple(new))))

    def _refresh_row(self, row: int) -> None:
        for key in [k for k in self._rows if k[0] == row]:
            del self._rows[key]
        y = self._n_header + row - int(self.scroll_offset.y)
        self.refresh(Region(0, y, self.size.width, 1))

    def _scroll_to_cursor(self) -> None:
        if self._value is None or not self.has_cells:
            return
        row, col = self._cell_of(tuple(self.cursor))
        region = self.scrollable_content_region
        vis_rows = max(region.height - self._n_header, 1)
        cw = self._cell_width()
        vis_w = max(region.width - self._label_width(), cw)
        sx, sy = self.scroll_offset
        x, y = sx, sy
        if row < sy:
            y = row
        elif row >= sy + vis_rows:
            y = row - vis_rows + 1
        left = col * cw
        if left < sx:
            x = left
        elif left + cw > sx + vis_w:
            x = left + cw - vis_w
        if (x, y) != (sx, sy):
            self.scroll_to(x, y, animate=False)

    def on_focus(self) -> None:
        self._refresh_cursor_row()

    def on_blur(self) -> None:
        self._refresh_cursor_row()

    def _refresh_cursor_row(self) -> None:
        if self._value is not None and len(self.cursor) == self._value.ndim:
            self._refresh_row(self._cell_of(tuple(self.cursor))[0])

    # --- actions ----------------------------------------------------------------------
    def action_move(self, drow: int, dcol: int) -> None:
        v = self._value
        if v is None or v.ndim == 0 or not self.has_cells:
            return
        idx = list(self.cursor)
        if v.ndim == 1:
            idx[0] += dcol
        else:
            idx[-2] += drow
            idx[-1] += dcol
        self.cursor = tuple(idx)

    def action_edge(self, where: str) -> None:
        v = self._value
        if v is None or v.ndim == 0:
            return
        idx = list(self.cursor)
        idx[-1] = 0 if where == "home" else v.shape[-1] - 1
        self.cursor = tuple(idx)

    def action_page(self, direction: int) -> None:
        step = max(self.scrollable_content_region.height - self._n_header, 1)
        self.action_move(direction * step, 0)

    def action_slice(self, step: int) -> None:
        """Previous/next slice of the innermost leading axis (wraps)."""
        v = self._value
        if v is None or v.ndim <= 2 or not self.has_cells:
            return
        idx = list(self.cursor)
        axis = v.ndim - 3
        idx[axis] = (idx[axis] + step) % v.shape[axis]
        self.cursor = tuple(idx)

    def action_outer_slice(self, step: int) -> None:
        """Previous/next slice of the outer leading axes, counted row-major (wraps)."""
        v = self._value
        if v is None or v.ndim <= 3 or not self.has_cells:
            return
        outer = v.shape[:-3]
        flat = int(np.ravel_multi_index(tuple(self.cursor[:-3]), outer))
        flat = (flat + step) % int(np.prod(outer))
        idx = tuple(int(i) for i in np.unravel_index(flat, outer)) + tuple(self.cursor[-3:])
        self.cursor = idx

    def action_activate(self) -> None:
        if self.has_cells:
            self.post_message(self.Activated(self, self.index))

    # --- mouse ------------------------------------------------------------------------
    def cell_at(self, x: int, y: int) -> tuple[int, ...] | None:
        """The full index of the cell at content offset (x, y), or None."""
        v = self._value
        if v is None or not self.has_cells or y < self._n_header:
            return None
        lw, cw = self._label_width(), self._cell_width()
        if x < lw:
            return None
        sx, sy = self.scroll_offset
        row = y - self._n_header + sy
        col = (x - lw + sx) // cw
        s = self._current
        if not (0 <= row < s.rows and 0 <= col < s.cols):
            return None
        if v.ndim == 0:
            return ()
        if v.ndim == 1:
            return (col,)
        return self._to_orig(tuple(self.cursor[:-2]) + (row, col))

    async def _on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        index = self.cell_at(offset.x, offset.y)
        if index is None:
            return
        event.stop()
        self.move_cursor(index)
        if event.chain >= 2:
            self.post_message(self.Activated(self, index))

    # --- rendering --------------------------------------------------------------------
    def _role_style(self, role: str) -> Style:
        s = self._role_styles.get(role)
        if s is None:
            if role == PEER:
                peer = self.get_component_rich_style("tensor-grid--peer")
                s = Style(bgcolor=peer.bgcolor, bold=peer.bold)
            else:
                fill = ROLE_COLORS.get(role, ROLE_COLORS["copy"])
                s = Style(bgcolor=fill, color=text_color(fill))
            self._role_styles[role] = s
        return s

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._role_styles.clear()
        self._rows.clear()

    def render_line(self, y: int) -> Strip:
        base = self.rich_style
        width = self.scrollable_content_region.width
        v = self._value
        if v is None:
            text = "(no value)" if y == 0 else ""
            return Strip([Segment(text, base + self.get_component_rich_style("tensor-grid--info"))]
                         ).adjust_cell_length(width, base)
        n_head = self._n_header
        if y < n_head - 1:
            info = self._info_lines()[y]
            return Strip([Segment(info, base + self.get_component_rich_style("tensor-grid--info"))]
                         ).crop(0, width).adjust_cell_length(width, base)
        sx, sy = self.scroll_offset
        lw = self._label_width()
        label_style = base + self.get_component_rich_style("tensor-grid--label")
        if y == n_head - 1:
            label = Segment(" " * lw, base)
            body = self._header_strip(label_style)
        else:
            row = y - n_head + int(sy)
            s = self._current
            if row >= s.rows or not self.has_cells:
                text = "(empty)" if not self.has_cells and row == 0 else ""
                return Strip([Segment(text, label_style)]).adjust_cell_length(width, base)
            row_text = str(row) if v.ndim >= 2 else ""
            label = Segment(row_text.rjust(lw - 1) + " ", label_style)
            body = self._row_strip(row)
        return Strip.join([Strip([label]), self._whole_cells(body, int(sx), max(width - lw, 0), base)]
                          ).adjust_cell_length(width, base)

    def _whole_cells(self, body: Strip, sx: int, avail: int, base: Style) -> Strip:
        """The ``avail`` columns of ``body`` from ``sx``, with a cell the edges cut left blank,
        so no number is shown in part ("-0.50162" of "-0.5016229"); a dim "…" at an edge
        says there are more columns that way."""
        cw = self._cell_width()
        more_right = sx + avail < body.cell_length
        left = -sx % cw  # a partial cell at the left edge
        if sx > 0 and left < 2:  # room for the marker and a blank before the first whole cell
            left += cw
        # the end of the last whole cell (leaving a blank and the marker when there are more)
        right = (sx + avail - 2 * more_right) // cw * cw - sx
        if right <= left:  # not even one whole cell fits: show what there is
            return body.crop(sx, sx + avail)
        marker = base + self.get_component_rich_style("tensor-grid--label")
        head = Strip([Segment("…", marker), Segment(" " * (left - 1), base)]) if sx > 0 else \
            Strip.blank(left, base)
        body_part = body.crop(sx + left, sx + right)
        tail = Strip([Segment(" " * (avail - right - 1), base), Segment("…", marker)]) if more_right else \
            Strip.blank(avail - right, base)
        return Strip.join([head, body_part, tail])

    def _header_strip(self, style: Style) -> Strip:
        key = ("header",)
        strip = self._rows.get(key)
        if strip is None:
            cw = self._cell_width()
            cols = self._current.cols
            text = "".join(str(c).rjust(cw) for c in range(cols)) if self._value is not None \
                and self._value.ndim >= 1 else "".rjust(cw)
            strip = self._rows[key] = Strip([Segment(text, style)])
        return strip

    def _row_strip(self, row: int) -> Strip:
        """Row ``row`` of the slice, unscrolled and without its label (cached)."""
        crow, ccol = self._cell_of(tuple(self.cursor))
        focused = self.has_focus
        key = (row, ccol if row == crow else -1, focused)
        strip = self._rows.get(key)
        if strip is not None:
            return strip
        if len(self._rows) > _ROW_CACHE:
            self._rows.clear()
        s = self._current
        cw = self._cell_width()
        base = self.rich_style
        texts = s.texts(row)
        hl = self._plane_hl
        kinds = self._kinds_row(row)
        frame_style = base + Style(color=self.get_component_rich_style("tensor-grid--frame").color)
        # text attributes only: a component style also carries the widget background
        cursor_style = self.get_component_rich_style(
            "tensor-grid--cursor" if focused else "tensor-grid--cursor-blur").without_color
        on_role_style = self.get_component_rich_style("tensor-grid--cursor-blur").without_color
        segments: list[Segment] = []
        plain: list[str] = []
        for col, text in enumerate(texts):
            cell = " " + (text if len(text) < cw else text[:cw - 2] + "…").rjust(cw - 1)
            role = hl.get((row, col)) if hl else None
            is_cursor = row == crow and col == ccol
            if role is None and not is_cursor and (kinds is None or kinds[col] == 0):
                plain.append(cell)
                continue
            if plain:
                segments.append(Segment("".join(plain), base))
                plain = []
            style = frame_style if kinds is not None and kinds[col] != 0 else base
            if role is not None:
                style = style + self._role_style(role)
            if is_cursor:  # on a coloured cell the colour stays and the text is marked
                style = style + (on_role_style if role is not None else cursor_style)
            segments.append(Segment(" ", style if role is not None and not is_cursor else base))
            segments.append(Segment(cell[1:], style))
        if plain:
            segments.append(Segment("".join(plain), base))
        strip = self._rows[key] = Strip(segments)
        return strip

    def _kinds_row(self, row: int) -> np.ndarray | None:
        k = self._kinds
        if k is None:
            return None
        if k.ndim == 0:
            return k.reshape(1)
        if k.ndim == 1:
            return k
        plane = k[tuple(self.cursor[:-2])] if k.ndim > 2 else k
        return plane[row]
