"""Tensors of any rank as grids of cells, and the board that holds them.

A ``TensorLayout`` places the elements of a shape in the plane, in *cell
units* (one cell is 1 x 1, y grows downward):

- the last axis runs across (columns), the one before it down (rows);
- each leading axis adds a level of small multiples, alternating across and
  down: axis -3 panels across, axis -4 panels down, axis -5 across, ...
  (DESIGN.md, "Any rank"); each panel is titled with its leading index;
- an axis longer than its limit is elided: its first and last few indices
  stay, every index in ``keep`` (the highlighted cells) stays, and each gap
  becomes one "…" slot.

The layout is separable: an element's position is the sum of one offset per
axis, so every cell position is computed with numpy at once.

A ``Board`` is one matplotlib figure in cell units holding several tensors;
``TensorView`` is one placed tensor whose cells can be painted by role.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hlolab.render import style

GRID_LIMIT = 12   # elements shown along a grid axis before eliding
PANEL_LIMIT = 4   # panels shown along a leading axis before eliding
EDGE = 3          # indices kept at each end of an elided axis
PANEL_GAP = 0.8   # space between small multiples (grows with the level)
TITLE_H = 1.3     # room for a panel title


def axis_entries(n: int, keep: Iterable[int] = (), limit: int = GRID_LIMIT,
                 edge: int = EDGE) -> list[int | None]:
    """The indices of an axis of length ``n`` to draw, with ``None`` for each "…" gap.
    Every index in ``keep`` is drawn, whatever ``limit`` says."""
    if n <= limit:
        return list(range(n))
    shown = set(range(min(edge, n))) | set(range(max(0, n - edge), n))
    shown |= {int(k) for k in keep if 0 <= int(k) < n}
    out: list[int | None] = []
    prev = -1
    for i in sorted(shown):
        if i > prev + 1:
            out.append(None)
        out.append(i)
        prev = i
    return out


@dataclass
class _Axis:
    entries: list[int | None]
    across: bool          # True: offsets move along x
    offsets: np.ndarray   # per entry slot
    gap_offsets: list[float] = field(default_factory=list)  # positions of the "…" slots
    slot: dict[int, int] = field(default_factory=dict)       # index -> entry slot


class TensorLayout:
    """Cell positions of a tensor of ``shape``; see the module doc.

    ``keep`` lists indices (full tuples) that must stay visible when axes are
    elided. Positions are relative to the layout's upper-left corner.
    """

    def __init__(self, shape: Sequence[int], keep: Iterable[Sequence[int]] = (),
                 grid_limit: int = GRID_LIMIT, panel_limit: int = PANEL_LIMIT,
                 grid_axes: tuple[int, int] | None = None, origin: Sequence[int] | None = None):
        full = tuple(int(d) for d in shape)
        rank = len(full)
        # the index of the first cell per dim: negative for a padded frame drawn with the ring
        # of operand cells negative padding cropped (frame position -1 is left of / above 0)
        self.origin = tuple(int(o) for o in origin) if origin is not None else (0,) * rank
        keep = [tuple(int(i) - o for i, o in zip(k, self.origin, strict=True)) for k in keep]
        # drawing order of the axes: leading (panel) axes, then the grid's rows and columns;
        # ``grid_axes`` picks other grid axes, e.g. the spatial dims of an NHWC image
        if grid_axes is not None and rank >= 2 and len(set(grid_axes)) == 2 \
                and all(0 <= a < rank for a in grid_axes):
            self.perm = [a for a in range(rank) if a not in grid_axes] + list(grid_axes)
        else:
            self.perm = list(range(rank))
        self.full_shape = full
        self.shape = tuple(full[a] for a in self.perm)
        kept = [tuple(int(k[a]) for a in self.perm) for k in keep]
        # innermost axis first; ``extent`` is one panel's (width, height) at the current level
        self.title_h = TITLE_H if rank > 2 else 0.0
        extent = [1.0, 1.0]
        per_axis: dict[int, _Axis] = {}
        for depth, a in enumerate(range(rank - 1, -1, -1)):
            entries = axis_entries(self.shape[a], (k[a] for k in kept),
                                   grid_limit if depth < 2 else panel_limit)
            across = depth == 0 or (depth >= 2 and depth % 2 == 0)
            if depth == 2:
                extent[1] += self.title_h  # every innermost panel carries its title
            gap = 0.0 if depth < 2 else PANEL_GAP * (depth - 1)
            step = 1.0 if depth < 2 else (extent[0] if across else extent[1]) + gap
            offsets: list[float] = []
            gaps: list[float] = []
            slot: dict[int, int] = {}
            pos = 0.0
            for e in entries:
                if e is None:
                    gaps.append(pos)
                    pos += 1.0 + gap
                    offsets.append(np.nan)
                else:
                    slot[e] = len(offsets)
                    offsets.append(pos)
                    pos += step
            extent[0 if across else 1] = max(pos - gap, 1.0)
            per_axis[a] = _Axis(entries, across, np.asarray(offsets, dtype=float), gaps, slot)
        self.axes = [per_axis[a] for a in range(rank)]
        self.width = extent[0]
        self.height = extent[1]
        self.grid_offset_y = self.title_h  # the innermost grid starts under the panel titles

    @property
    def panel_axes(self) -> list[int]:
        return self.perm[:-2] if len(self.perm) > 2 else []

    # --- positions -----------------------------------------------------------------
    def position(self, index: Sequence[int]) -> tuple[float, float] | None:
        """Upper-left corner of the cell of ``index``; None when the cell is elided."""
        x, y = 0.0, self.grid_offset_y if self.shape else 0.0
        index = [int(index[a]) - self.origin[a] for a in self.perm]
        for ax, i in zip(self.axes, index, strict=True):
            s = ax.slot.get(int(i))
            if s is None:
                return None
            if ax.across:
                x += ax.offsets[s]
            else:
                y += ax.offsets[s]
        return x, y

    def cells(self) -> tuple[np.ndarray, np.ndarray]:
        """Every drawn cell: (indices int64 [n, rank], upper-left corners float [n, 2])."""
        shown = [[e for e in ax.entries if e is not None] for ax in self.axes]
        if not self.shape:
            return np.zeros((1, 0), dtype=np.int64), np.array([[0.0, 0.0]])
        grids = np.meshgrid(*[np.asarray(s, dtype=np.int64) for s in shown], indexing="ij")
        idx = np.stack([g.reshape(-1) for g in grids], axis=-1)
        xy = np.zeros((len(idx), 2))
        xy[:, 1] = self.grid_offset_y
        for d, ax in enumerate(self.axes):
            slots = np.asarray([ax.slot[int(i)] for i in shown[d]], dtype=np.int64)
            lookup = np.full(self.shape[d], -1, dtype=np.int64)
            lookup[np.asarray(shown[d], dtype=np.int64)] = slots
            off = ax.offsets[lookup[idx[:, d]]]
            xy[:, 0 if ax.across else 1] += off
        inverse = np.argsort(self.perm)
        return idx[:, inverse] + np.asarray(self.origin, dtype=np.int64), xy

    def local(self, index: np.ndarray) -> tuple[np.ndarray, ...]:
        """Indices (rows of ``cells()``) into the drawn arrays (values, kinds)."""
        return tuple((index - np.asarray(self.origin, dtype=np.int64)).T)

    def panels(self) -> list[tuple[tuple[int, ...], float, float]]:
        """One (leading index, x, y) per small multiple: the title goes at (x, y).
        The leading index lists the panel axes in order (``panel_axes``)."""
        lead = self.axes[:-2] if len(self.axes) > 2 else []
        if not lead:
            return []
        out = []
        for combo in itertools.product(*[[e for e in ax.entries if e is not None] for ax in lead]):
            x = y = 0.0
            for ax, i in zip(lead, combo, strict=True):
                if ax.across:
                    x += ax.offsets[ax.slot[i]]
                else:
                    y += ax.offsets[ax.slot[i]]
            out.append((tuple(combo), x, y))
        return out

    def gaps(self) -> list[tuple[float, float, str]]:
        """Where to write the "…" of elided stretches: (x, y, text) centres."""
        out: list[tuple[float, float, str]] = []
        rank = len(self.shape)
        if rank == 0:
            return out
        _, xy = self.cells()
        col = self.axes[-1]
        ys = sorted(set(xy[:, 1].tolist()))
        for g in col.gap_offsets:
            for px in self._panel_starts(across=True):
                out += [(px + g + 0.5, y + 0.5, "…") for y in ys]
        if rank >= 2:
            row = self.axes[-2]
            xs = sorted(set(xy[:, 0].tolist()))
            for g in row.gap_offsets:
                for py in self._panel_starts(across=False):
                    out += [(x + 0.5, py + g + 0.5, "⋮") for x in xs]
        for ax in self.axes[:-2]:
            for g in ax.gap_offsets:
                if ax.across:
                    out.append((g + 0.5 + PANEL_GAP / 2, self.height / 2, "…"))
                else:
                    out.append((self.width / 2, g + 0.5 + PANEL_GAP / 2, "⋮"))
        return sorted(set(out))

    def _panel_starts(self, across: bool) -> list[float]:
        """x (across) or y origins of every panel, for gaps drawn once per panel."""
        ps = self.panels()
        if not ps:
            return [0.0] if across else [self.grid_offset_y]
        vals = {(x if across else y + self.title_h) for _, x, y in ps}
        return sorted(vals)


# --- the board -------------------------------------------------------------------------

CELL_INCHES = 0.36
MARGIN = 0.6
LABEL_CHAR_W = 0.24  # board units per character of a 9 pt bold label
TITLE_CHAR_W = 0.27  # ... of the 11 pt bold title


@dataclass
class TensorView:
    """A tensor placed on a board: its layout, origin and cell artists."""

    key: str
    label: str
    layout: TensorLayout
    x: float
    y: float
    values: np.ndarray | None
    kinds: np.ndarray | None  # frame kinds per element: 0 value, 1 padding, 2 dilation hole
    index: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.int64))
    corners: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))
    slot: dict[tuple[int, ...], int] = field(default_factory=dict)
    collection: Any = None
    # per dim (low, step, operand size) when the tensor is drawn as a padded frame: the
    # operand index of each frame position is labelled under / beside the grid
    frame_axes: tuple[tuple[int, int, int], ...] | None = None
    texts: list[Any] = field(default_factory=list)
    base_faces: list[str] = field(default_factory=list)
    # a quantized tensor: the real (dequantized) value of each cell, NaN where there is none;
    # drawn small under the storage value (``real_texts``: per slot, None where there is none)
    reals: np.ndarray | None = None
    real_texts: list[Any] = field(default_factory=list)

    def cell_center(self, index: Sequence[int]) -> tuple[float, float] | None:
        """Centre of a cell in board units, None when elided."""
        p = self.layout.position(index)
        if p is None:
            return None
        return self.x + p[0] + 0.5, self.y + p[1] + 0.5

    def cell_box(self, index: Sequence[int]) -> tuple[float, float, float, float] | None:
        p = self.layout.position(index)
        if p is None:
            return None
        return self.x + p[0], self.y + p[1], 1.0, 1.0


CELL_CHARS = 5  # characters a cell holds at the cell font size; longer values shrink to fit


def _short_exp(f: float) -> str:
    """``1.2e6``, ``-3.4e-5``: one decimal, no exponent padding."""
    m, e = f"{f:.1e}".split("e")
    return f"{m.removesuffix('.0')}e{int(e)}"


def format_cell(v: Any) -> str:
    """A value short enough for a cell: the extremes of an integer type by name (``i32 min``),
    long numbers in short scientific form (``1.2e6``)."""
    if isinstance(v, (bool, np.bool_)):
        return "T" if v else "F"
    if isinstance(v, (np.integer, int)):
        txt = str(int(v))
        if len(txt) <= CELL_CHARS:
            return txt
        if isinstance(v, np.integer):
            info = np.iinfo(v.dtype)
            name = f"{'u' if info.min == 0 else 'i'}{info.bits}"
            if int(v) == info.min and info.min != 0:
                return f"{name} min"
            if int(v) == info.max:
                return f"{name} max"
        return _short_exp(float(int(v)))
    if isinstance(v, np.complexfloating | complex):
        return f"{complex(v).real:.3g}{complex(v).imag:+.2g}j"
    try:
        f = float(v)
    except (TypeError, ValueError):
        return str(v)
    if np.isnan(f) or np.isinf(f):
        return str(f)
    if f == int(f) and abs(f) < 1e5:
        return str(int(f))
    for digits in (3, 2):  # -0.262 does not fit, -0.26 does: better than -2.6e-1
        txt = f"{f:.{digits}g}"
        if len(txt) <= CELL_CHARS and "e" not in txt:
            return txt
    return _short_exp(f)


def cell_font_size(txt: str, size: float) -> float:
    """``size``, shrunk so ``txt`` fits its cell (never below 60 % of it)."""
    return size if len(txt) <= CELL_CHARS else max(size * 0.6, size * CELL_CHARS / len(txt))


class Board:
    """One figure laid out in cell units; tensors, text and arrows go on it.

    Build it with ``add`` / ``add_text``, then ``draw()`` creates the figure;
    after that, ``paint`` / ``reset`` recolour cells (cheap enough per frame).
    """

    def __init__(self, title: str = "", cell_inches: float = CELL_INCHES):
        self.title = title
        self.cell_inches = cell_inches
        self.views: dict[str, TensorView] = {}
        self.notes: list[tuple[float, float, str, dict[str, Any]]] = []
        self.fig: Any = None
        self.ax: Any = None
        self.width = 0.0
        self.height = 0.0

    # --- building --------------------------------------------------------------------
    def add(self, key: str, label: str, layout: TensorLayout, x: float, y: float,
            values: np.ndarray | None = None, kinds: np.ndarray | None = None,
            reals: np.ndarray | None = None) -> TensorView:
        view = TensorView(key, label, layout, x, y, values, kinds, reals=reals)
        self.views[key] = view
        self.width = max(self.width, x + layout.width, x + len(label) * LABEL_CHAR_W)
        self.height = max(self.height, y + layout.height)
        return view

    def clear_operand_labels(self, gap: float) -> None:
        """Move the result column right of the widest operand label (a padded-frame label is
        longer than its cells), ``gap`` cells past it, so labels never overlap. Before draw()."""
        operands = [v for k, v in self.views.items() if k.startswith("operand")]
        results = [v for k, v in self.views.items() if k.startswith("result")]
        if not operands or not results:
            return
        need = max(v.x + len(v.label) * LABEL_CHAR_W for v in operands) + gap
        shift = need - min(v.x for v in results)
        if shift > 0:
            for v in results:
                v.x += shift
                self.width = max(self.width, v.x + v.layout.width, v.x + len(v.label) * LABEL_CHAR_W)

    def add_text(self, x: float, y: float, text: str, **kw: Any) -> None:
        lines = text.count("\n") + 1
        self.notes.append((x, y, text, kw))
        size = kw.get("fontsize", 8)
        self.width = max(self.width, x + kw.get("width", 0.0))
        self.height = max(self.height, y + lines * size / 72 / self.cell_inches * 1.35)

    # --- drawing ---------------------------------------------------------------------
    def draw(self, show_values: bool = True, show_index: bool = True) -> Any:
        import matplotlib.pyplot as plt
        from matplotlib.collections import PatchCollection
        from matplotlib.patches import Rectangle

        top = 1.2 if self.title else 0.4
        self.width = max(self.width, len(self.title) * TITLE_CHAR_W)  # the title is never cut
        w = self.width + 2 * MARGIN
        h = self.height + top + MARGIN
        with style.styled():
            fig = plt.figure(figsize=(w * self.cell_inches, h * self.cell_inches))
            ax = fig.add_axes((0, 0, 1, 1))
            ax.set_xlim(-MARGIN, self.width + MARGIN)
            ax.set_ylim(self.height + MARGIN, -top)
            ax.set_axis_off()
            if self.title:
                ax.text(-MARGIN + 0.2, -top + 0.25, self.title, fontsize=11, va="top", ha="left",
                        fontweight="bold")
            for view in self.views.values():
                self._draw_view(ax, view, Rectangle, PatchCollection, show_values, show_index)
            for x, y, text, kw in self.notes:
                kw = {k: v for k, v in kw.items() if k != "width"}
                kw.setdefault("fontsize", 8)
                kw.setdefault("va", "top")
                kw.setdefault("ha", "left")
                ax.text(x, y, text, **kw)
        self.fig, self.ax = fig, ax
        return fig

    def _draw_view(self, ax: Any, view: TensorView, Rectangle: Any, PatchCollection: Any,
                   show_values: bool, show_index: bool) -> None:
        lay = view.layout
        idx, xy = lay.cells()
        view.index, view.corners = idx, xy + [view.x, view.y]
        view.slot = {tuple(int(i) for i in row): k for k, row in enumerate(idx)}
        kinds = (view.kinds[lay.local(idx)] if view.kinds is not None and idx.shape[1]
                 else np.zeros(len(idx), np.int8))
        faces = [style.CELL_KIND_FILLS[int(k)] for k in kinds]
        view.base_faces = faces
        rects = [Rectangle((float(x), float(y)), 1.0, 1.0) for x, y in view.corners]
        coll = PatchCollection(rects, facecolors=faces, edgecolors=style.CELL_EDGE,
                               linewidths=0.6, zorder=2)
        ax.add_collection(coll)
        view.collection = coll
        # holes and cropped cells hatched above any fill, so a painted hole still reads as one
        hatched = [r for r, k in zip(view.corners, kinds, strict=True) if style.CELL_KIND_HATCHED[int(k)]]
        if hatched:
            ax.add_collection(PatchCollection(
                [Rectangle((float(x), float(y)), 1.0, 1.0) for x, y in hatched], facecolors="none",
                edgecolors=style.HATCH_EDGE, linewidths=0.0, hatch="//", zorder=2.5))
        # label above the tensor
        ax.text(view.x, view.y - 0.45, view.label, fontsize=9, va="bottom", ha="left",
                fontweight="bold")
        small = min(7.0, 0.36 / self.cell_inches * 7)
        view.texts = []
        if show_values and view.values is not None:
            vals = view.values[lay.local(idx)] if idx.shape[1] else view.values.reshape(1)
            reals = None
            if view.reals is not None:
                reals = view.reals[lay.local(idx)] if idx.shape[1] else view.reals.reshape(1)
            view.real_texts = []
            for n, ((x, y), v, k) in enumerate(zip(view.corners, vals, kinds, strict=True)):
                txt = format_cell(v)
                real = reals[n] if reals is not None and np.isfinite(reals[n]) else None
                # a quantized cell: the storage value on top, its real value smaller under it
                view.texts.append(ax.text(x + 0.5, y + (0.55 if real is None else 0.4), txt,
                                          fontsize=cell_font_size(txt, small),
                                          ha="center",
                                          va="center", zorder=3,
                                          color=style.MUTED_TEXT if k else "#000000"))
                if reals is not None:
                    rtxt = None if real is None else format_cell(real)
                    view.real_texts.append(None if rtxt is None else ax.text(
                        x + 0.5, y + 0.76, rtxt, fontsize=cell_font_size(rtxt, small * 0.78),
                        ha="center", va="center", zorder=3, color=style.MUTED_TEXT))
        for x, y, t in lay.gaps():
            ax.text(view.x + x, view.y + y, t, fontsize=8, ha="center", va="center",
                    color=style.MUTED_TEXT)
        for combo, px, py in lay.panels():
            at = dict(zip(lay.panel_axes, combo, strict=True))
            title = "[" + ", ".join(str(at[a]) if a in at else ":" for a in range(len(lay.shape))) + "]"
            ax.text(view.x + px, view.y + py + 0.55, title, fontsize=7,
                    ha="left", va="bottom", color=style.MUTED_TEXT)
        if show_index and len(lay.shape) >= 1:
            self._draw_indices(ax, view, small)

    def _draw_indices(self, ax: Any, view: TensorView, size: float) -> None:
        """Column indices above the first panel row, row indices left of the first column."""
        lay = view.layout
        col_ax = lay.axes[-1]
        y0 = view.y + lay.grid_offset_y
        starts = lay.panels() or [((), 0.0, 0.0)]
        for _, px, py in starts:
            if py != starts[0][2]:
                continue
            for i, s in col_ax.slot.items():
                ax.text(view.x + px + col_ax.offsets[s] + 0.5, y0 + py - 0.05,
                        str(i + lay.origin[lay.perm[-1]]),
                        fontsize=size * 0.8, ha="center", va="bottom", color=style.MUTED_TEXT)
        if len(lay.shape) >= 2:
            row_ax = lay.axes[-2]
            for _, px, py in starts:
                if px != starts[0][1]:
                    continue
                for i, s in row_ax.slot.items():
                    ax.text(view.x + px - 0.1, y0 + py + row_ax.offsets[s] + 0.5,
                            str(i + lay.origin[lay.perm[-2]]),
                            fontsize=size * 0.8, ha="right", va="center", color=style.MUTED_TEXT)
        if view.frame_axes is not None:
            self._draw_operand_indices(ax, view, size)

    def _draw_operand_indices(self, ax: Any, view: TensorView, size: float) -> None:
        """Under the last panel row and right of the last panel column: the operand index of
        each frame column / row, (p - low) / step: "·" for a hole, -1 for edge padding, so
        both the frame index and the original index can be read."""
        lay = view.layout
        color = style.ACCENT
        if not lay.axes or not lay.axes[-1].slot:
            return  # an empty frame: no positions to label

        def label(d: int, i: int) -> str:  # i: the drawn slot along dim d
            low, step, n = view.frame_axes[d]
            t = i + lay.origin[d] - low
            if t < 0 or t > (n - 1) * step:
                return "-1"
            return str(t // step) if t % step == 0 else "·"

        panels = lay.panels() or [((), 0.0, 0.0)]
        bottom = max(py for _, _, py in panels)
        right = max(px for _, px, _ in panels)
        col_dim = lay.perm[-1]
        col_ax = lay.axes[-1]
        y_under = view.y + lay.grid_offset_y + bottom + lay.axes[-2].offsets[-1] + 1.08 \
            if len(lay.shape) >= 2 else view.y + lay.grid_offset_y + 1.08
        for _, px, py in panels:
            if py != bottom:
                continue
            for i, s in col_ax.slot.items():
                ax.text(view.x + px + col_ax.offsets[s] + 0.5, y_under, label(col_dim, i),
                        fontsize=size * 0.8, ha="center", va="top", color=color)
        xs = [view.x + px + col_ax.offsets[s] for _, px, _ in panels for s in col_ax.slot.values()]
        ax.text(max(xs) + 1.15, y_under, "← " + self._operand_index_word(), fontsize=size * 0.8,
                ha="left", va="top", color=color)
        if len(lay.shape) >= 2:
            row_dim = lay.perm[-2]
            row_ax = lay.axes[-2]
            x_right = view.x + right + col_ax.offsets[-1] + 1.1
            for _, px, py in panels:
                if px != right:
                    continue
                for i, s in row_ax.slot.items():
                    ax.text(x_right, view.y + lay.grid_offset_y + py + row_ax.offsets[s] + 0.5,
                            label(row_dim, i), fontsize=size * 0.8, ha="left", va="center", color=color)

    @staticmethod
    def _operand_index_word() -> str:
        from hlolab.messages import Msg, text

        return text(Msg("render.operand_index"))

    # --- painting --------------------------------------------------------------------
    def reset(self) -> None:
        """Every cell back to its base colour."""
        for view in self.views.values():
            view.collection.set_facecolor(view.base_faces)
            for t, k in zip(view.texts, self._kinds(view), strict=False):
                t.set_color(style.MUTED_TEXT if k else "#000000")
            for t in view.real_texts:
                if t is not None:
                    t.set_color(style.MUTED_TEXT)

    def _kinds(self, view: TensorView) -> np.ndarray:
        if view.kinds is None or not view.index.shape[1]:
            return np.zeros(len(view.index), np.int8)
        return view.kinds[view.layout.local(view.index)]

    def paint(self, key: str, cells: np.ndarray | Iterable[Sequence[int]], color: str) -> int:
        """Fill the cells of tensor ``key`` (a boolean mask of its shape, or indices)
        with ``color``; returns how many drawn cells were painted (elided ones are not)."""
        view = self.views[key]
        slots = self.slots(key, cells)
        if not slots:
            return 0
        faces = list(view.collection.get_facecolor())
        import matplotlib.colors as mcolors

        rgba = mcolors.to_rgba(color)
        for s in slots:
            faces[s] = rgba
        view.collection.set_facecolor(faces)
        fg = style.text_color(color)
        for s in slots:
            if s < len(view.texts):
                view.texts[s].set_color(fg)
            if s < len(view.real_texts) and view.real_texts[s] is not None:
                view.real_texts[s].set_color(fg)  # legible on the fill, as the storage value
        return len(slots)

    def slots(self, key: str, cells: np.ndarray | Iterable[Sequence[int]]) -> list[int]:
        """Drawn-cell numbers of ``cells`` (mask or indices) in tensor ``key``."""
        view = self.views[key]
        if isinstance(cells, np.ndarray) and cells.dtype == np.bool_:
            if not view.index.shape[1]:
                return [0] if bool(cells.reshape(-1)[0]) else []
            # a mask covers the tensor (the frame), not the cropped ring drawn around it
            inside = np.all((view.index >= 0) & (view.index < np.asarray(cells.shape)), axis=1)
            hit = np.zeros(len(view.index), bool)
            hit[inside] = cells[tuple(view.index[inside].T)]
            return [int(s) for s in np.flatnonzero(hit)]
        out = []
        for c in cells:
            s = view.slot.get(tuple(int(i) for i in c))
            if s is not None:
                out.append(s)
        return out

    def outline(self, key: str, index: Sequence[int], color: str, width: float = 2.4,
                dashed: bool = False) -> Any:
        """A thick frame around one cell (the chosen output element)."""
        from matplotlib.patches import Rectangle

        box = self.views[key].cell_box(index)
        if box is None:
            return None
        r = Rectangle(box[:2], box[2], box[3], fill=False, edgecolor=color, linewidth=width,
                      linestyle=(0, (3, 2)) if dashed else "solid", zorder=4)
        self.ax.add_patch(r)
        return r

    def box(self, key: str, indices: np.ndarray, color: str, width: float = 2.0) -> Any:
        """A frame around the bounding box of drawn cells ``indices`` ([n, rank]) when they
        are one rectangle on screen (a window); None otherwise."""
        from matplotlib.patches import Rectangle

        view = self.views[key]
        slots = self.slots(key, indices)
        if not slots:
            return None
        c = view.corners[slots]
        x0, y0 = c.min(axis=0)
        x1, y1 = c.max(axis=0) + 1
        r = Rectangle((x0, y0), x1 - x0, y1 - y0, fill=False, edgecolor=color, linewidth=width,
                      zorder=5)
        self.ax.add_patch(r)
        return r

    def range_box(self, key: str, lo: Sequence[int], hi: Sequence[int], color: str,
                  width: float = 2.0, dashed: bool = False) -> list[Any]:
        """Frames around the cells ``lo <= index < hi`` of tensor ``key``: one per small
        multiple they cover. A range reaching past the tensor along a grid axis (a ghost
        slice at an unclamped start) extends past the drawn cells by as many cells."""
        from matplotlib.patches import Rectangle

        view = self.views[key]
        lay = view.layout
        shape = lay.full_shape
        if len(shape) == 0 or view.index.shape[1] == 0:
            return []
        first = lay.origin
        clo = [min(max(int(a), o), o + d - 1) for a, d, o in zip(lo, shape, first, strict=True)]
        chi = [max(min(int(b), o + d), c + 1) for b, d, c, o in zip(hi, shape, clo, first, strict=True)]
        inside = np.all((view.index >= clo) & (view.index < chi), axis=1)
        if not inside.any():
            return []
        grid = lay.perm[-2:] if len(shape) >= 2 else lay.perm[-1:]
        if any((int(lo[a]) != clo[a] or int(hi[a]) != chi[a]) for a in lay.panel_axes):
            return []  # past the tensor along a panel axis: there is no panel to draw it in
        col = grid[-1]
        row = grid[0] if len(grid) == 2 else None
        # how far the range reaches past the tensor, in cells, along the grid axes
        ext_x = (clo[col] - int(lo[col]), int(hi[col]) - chi[col])
        ext_y = (clo[row] - int(lo[row]), int(hi[row]) - chi[row]) if row is not None else (0, 0)
        panels = [a for a in lay.panel_axes]
        keys = view.index[inside][:, panels] if panels else np.zeros((int(inside.sum()), 0), np.int64)
        corners = view.corners[inside]
        out = []
        for p in sorted({tuple(k) for k in keys.tolist()}):
            sel = (np.all(keys == np.asarray(p, dtype=np.int64), axis=1) if panels
                   else np.ones(len(keys), bool))
            c = corners[sel]
            x0, y0 = c.min(axis=0) - [ext_x[0], ext_y[0]]
            x1, y1 = c.max(axis=0) + 1 + [ext_x[1], ext_y[1]]
            r = Rectangle((x0, y0), x1 - x0, y1 - y0, fill=False, edgecolor=color, linewidth=width,
                          linestyle=(0, (4, 2)) if dashed else "solid", zorder=5)
            self.ax.add_patch(r)
            out.append(r)
        return out

    def corner_mark(self, key: str, index: Sequence[int], label: str, color: str = "#222222",
                    size: float = 5.5, right: bool = False) -> Any:
        """A small label in the upper-left (``right``: upper-right) corner of a cell: a pair
        number, a winner's star."""
        box = self.views[key].cell_box(index)
        if box is None:
            return None
        x = box[0] + box[2] - 0.06 if right else box[0] + 0.06
        return self.ax.text(x, box[1] + 0.04, label, fontsize=size, ha="right" if right else "left",
                            va="top", color=color, zorder=6, fontweight="bold")

    def arrow(self, start: tuple[float, float], end: tuple[float, float], color: str,
              alpha: float = 0.8, boxes: tuple[Any, Any] | None = None) -> Any:
        """An arrow from ``start`` to ``end``; with ``boxes`` (two (x, y, w, h) cells) it is
        clipped to their edges, so it never covers the two cells' values. It is drawn under
        the cells' numbers, so one it passes over stays readable."""
        from matplotlib.patches import FancyArrowPatch, Rectangle

        clip: dict[str, Any] = {}
        if boxes is not None:
            clip = {k: Rectangle(b[:2], b[2], b[3], transform=self.ax.transData)
                    for k, b in zip(("patchA", "patchB"), boxes, strict=True) if b is not None}
        a = FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=9, color=color,
                            linewidth=1.0, alpha=alpha, zorder=2.8, shrinkA=2, shrinkB=2,
                            connectionstyle="arc3,rad=0.12", **clip)
        self.ax.add_patch(a)
        return a

    def legend(self, roles: Iterable[str], x: float, y: float, cell_kinds: Iterable[int] = (),
               labels: dict[str, str] | None = None) -> None:
        """Coloured squares with role names, then the cell kinds shown (padding, holes, cropped
        cells), one per line, at (x, y) on the board."""
        from matplotlib.patches import Rectangle

        from hlolab.messages import Msg, text
        from hlolab.ops.frame import CELL_KINDS

        labels = labels or {}
        entries = [(style.role_color(r), False, labels.get(r) or style.ROLE_LABELS.get(r, r)) for r in roles]
        entries += [(style.CELL_KIND_FILLS[k], style.CELL_KIND_HATCHED[k],
                     text(Msg(f"render.cell_kind.{CELL_KINDS[k]}"))) for k in cell_kinds if k]
        for k, (fill, hatched, label) in enumerate(entries):
            self.ax.add_patch(Rectangle((x, y + k * 0.9), 0.7, 0.7, facecolor=fill,
                                        edgecolor=style.CELL_EDGE, linewidth=0.6, zorder=2))
            if hatched:
                self.ax.add_patch(Rectangle((x, y + k * 0.9), 0.7, 0.7, facecolor="none", hatch="//",
                                            edgecolor=style.HATCH_EDGE, linewidth=0.0, zorder=2.5))
            self.ax.text(x + 1.0, y + k * 0.9 + 0.35, label, fontsize=8, va="center", ha="left")

    def pixel(self, key: str, index: Sequence[int], dpi: float | None = None) -> tuple[int, int] | None:
        """(column, row) pixel of the cell centre in an image written at ``dpi`` (origin
        top-left): a saved PNG is ``style.EXPORT_DPI``; None is the figure's own dpi (GIF frames)."""
        c = self.views[key].cell_center(index)
        if c is None:
            return None
        px, py = self.ax.transData.transform(c)
        scale = 1.0 if dpi is None else dpi / self.fig.dpi
        height = self.fig.get_size_inches()[1] * self.fig.dpi
        return int(round(px * scale)), int(round((height - py) * scale))
