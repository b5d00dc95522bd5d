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
                 grid_axes: tuple[int, int] | None = None):
        full = tuple(int(d) for d in shape)
        rank = len(full)
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
        index = [index[a] for a in self.perm]
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
        return idx[:, inverse], xy

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
    texts: list[Any] = field(default_factory=list)
    base_faces: list[str] = field(default_factory=list)

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


def format_cell(v: Any) -> str:
    """A value short enough for a cell."""
    if isinstance(v, (bool, np.bool_)):
        return "T" if v else "F"
    if isinstance(v, (np.integer, int)):
        return str(int(v))
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
    return f"{f:.3g}"


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
            values: np.ndarray | None = None, kinds: np.ndarray | None = None) -> TensorView:
        view = TensorView(key, label, layout, x, y, values, kinds)
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
        kinds = (view.kinds[tuple(idx.T)] if view.kinds is not None and idx.shape[1]
                 else np.zeros(len(idx), np.int8))
        faces = [style.CELL_FILL if k == 0 else style.PADDING_FILL if k == 1 else style.HOLE_FILL
                 for k in kinds]
        styles = ["solid" if k != 2 else (0, (2, 2)) for k in kinds]
        view.base_faces = faces
        rects = [Rectangle((float(x), float(y)), 1.0, 1.0) for x, y in view.corners]
        coll = PatchCollection(rects, facecolors=faces, edgecolors=style.CELL_EDGE,
                               linewidths=0.6, linestyles=styles, zorder=2)
        ax.add_collection(coll)
        view.collection = coll
        # label above the tensor
        ax.text(view.x, view.y - 0.45, view.label, fontsize=9, va="bottom", ha="left",
                fontweight="bold")
        small = min(7.0, 0.36 / self.cell_inches * 7)
        view.texts = []
        if show_values and view.values is not None:
            vals = view.values[tuple(idx.T)] if idx.shape[1] else view.values.reshape(1)
            for (x, y), v, k in zip(view.corners, vals, kinds, strict=True):
                txt = format_cell(v)
                view.texts.append(ax.text(x + 0.5, y + 0.55, txt, fontsize=small, ha="center",
                                          va="center", zorder=3,
                                          color=style.MUTED_TEXT if k else "#000000"))
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
                ax.text(view.x + px + col_ax.offsets[s] + 0.5, y0 + py - 0.05, str(i),
                        fontsize=size * 0.8, ha="center", va="bottom", color=style.MUTED_TEXT)
        if len(lay.shape) >= 2:
            row_ax = lay.axes[-2]
            for _, px, py in starts:
                if px != starts[0][1]:
                    continue
                for i, s in row_ax.slot.items():
                    ax.text(view.x + px - 0.1, y0 + py + row_ax.offsets[s] + 0.5, str(i),
                            fontsize=size * 0.8, ha="right", va="center", color=style.MUTED_TEXT)

    # --- painting --------------------------------------------------------------------
    def reset(self) -> None:
        """Every cell back to its base colour."""
        for view in self.views.values():
            view.collection.set_facecolor(view.base_faces)
            for t, k in zip(view.texts, self._kinds(view), strict=False):
                t.set_color(style.MUTED_TEXT if k else "#000000")

    def _kinds(self, view: TensorView) -> np.ndarray:
        if view.kinds is None or not view.index.shape[1]:
            return np.zeros(len(view.index), np.int8)
        return view.kinds[tuple(view.index.T)]

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
        return len(slots)

    def slots(self, key: str, cells: np.ndarray | Iterable[Sequence[int]]) -> list[int]:
        """Drawn-cell numbers of ``cells`` (mask or indices) in tensor ``key``."""
        view = self.views[key]
        if isinstance(cells, np.ndarray) and cells.dtype == np.bool_:
            if not view.index.shape[1]:
                return [0] if bool(cells.reshape(-1)[0]) else []
            hit = cells[tuple(view.index.T)]
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

    def arrow(self, start: tuple[float, float], end: tuple[float, float], color: str,
              alpha: float = 0.8) -> Any:
        from matplotlib.patches import FancyArrowPatch

        a = FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=9, color=color,
                            linewidth=1.0, alpha=alpha, zorder=6, shrinkA=2, shrinkB=2,
                            connectionstyle="arc3,rad=0.12")
        self.ax.add_patch(a)
        return a

    def legend(self, roles: Iterable[str], x: float, y: float) -> None:
        """Coloured squares with role names, one per line, at (x, y) on the board."""
        from matplotlib.patches import Rectangle

        for k, role in enumerate(roles):
            fill = style.role_color(role)
            self.ax.add_patch(Rectangle((x, y + k * 0.9), 0.7, 0.7, facecolor=fill,
                                        edgecolor=style.CELL_EDGE, linewidth=0.6, zorder=2,
                                        linestyle=(0, (2, 2)) if role == "dilation_hole" else "solid"))
            self.ax.text(x + 1.0, y + k * 0.9 + 0.35, style.ROLE_LABELS.get(role, role),
                         fontsize=8, va="center", ha="left")

    def pixel(self, key: str, index: Sequence[int]) -> tuple[int, int] | None:
        """(column, row) pixel of the cell centre in the saved PNG (origin top-left)."""
        c = self.views[key].cell_center(index)
        if c is None:
            return None
        px, py = self.ax.transData.transform(c)
        height = self.fig.get_size_inches()[1] * self.fig.dpi
        return int(round(px)), int(round(height - py))
