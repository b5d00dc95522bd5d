"""Bit pictures: a ``BitPanel`` (hlolab.trace.bits) drawn with matplotlib.

One cell per bit, filled by field (sign / exponent / mantissa, or the integer's
bits) with the colours of ``style.BIT_FIELD_COLORS``; a float's implicit bit is a
dashed cell before the mantissa. Marks: a coloured bar under each marked bit
(``style.BIT_MARK_COLORS``), dropped bits (guard, sticky, shifted out, leading
zeros) hatched, changed bits outlined. Beside each row: its value; under it:
the field names and the decoding formula with numbers; between rows: what the
step between them did (the rounding decision, the range check …); at the
bottom: notes and a legend of the marks present.

Two entry points:

- ``draw_bit_panel(ax, panel, x, y)`` draws on an existing Axes whose data
  units are cells (1 cell = 1 x 1, y grows downward, as ``layout.Board``) and
  returns the ``Extent`` it used; ``panel_size(panel)`` gives that size before
  drawing, so a layout can reserve the room.
- ``bits_figure(panel)`` makes a figure holding just the panel.

All text is DejaVu Sans Mono at ``FONT`` (9 pt at the style's 100 dpi and the
board's ``CELL_INCHES``), so widths are known before drawing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hlolab.messages import Msg, text
from hlolab.render import style
from hlolab.render.layout import CELL_INCHES
from hlolab.trace.bits import HIDDEN, MARK_KINDS, BitPanel, BitRow, BitView, field_runs

FONT = 9.0            # points: every text of the panel
TITLE_FONT = 10.0
MONO = "DejaVu Sans Mono"
ADVANCE = 0.602       # DejaVu Sans Mono advance width, em
BIT_W = 0.6           # a bit cell, cell units
BIT_H = 0.9
FIELD_GAP = 0.2       # between two fields of one value
INK = "#222222"
DROPPED = {"guard", "sticky", "dropped", "shifted_out", "leading_zero"}
OUTLINED = {"changed", "shifted_in", "fill", "extended", "first_one"}
MARGIN = 0.4
DPI = 100             # the style sheet's figure.dpi / savefig.dpi


@dataclass(frozen=True)
class Extent:
    """The rectangle a drawing used, in cell units (``y`` down)."""

    x: float
    y: float
    width: float
    height: float


def char_w(cell_inches: float, size: float = FONT) -> float:
    """Width of one character, in cell units. Agg rounds glyph advances to whole pixels
    (7.5 px at 9 pt becomes 8 at the style's 100 dpi): the wider of the two counts."""
    exact = ADVANCE * size / 72 * DPI
    return max(exact, round(exact)) / DPI / cell_inches


def line_h(cell_inches: float, size: float = FONT) -> float:
    """Height of one line of text, in cell units."""
    return 1.35 * size / 72 / cell_inches


# --- geometry --------------------------------------------------------------------------------

def bit_positions(view: BitView, implicit: bool = True) -> dict[int, float]:
    """Bit position -> left x of its cell (relative to the row's start): fields most
    significant first, a gap between fields, the implicit bit (``implicit``) before the
    mantissa."""
    xs: dict[int, float] = {}
    x = 0.0
    for k, (f, _) in enumerate(field_runs(view)):
        if k:
            x += FIELD_GAP
        if implicit and f.kind == "mantissa" and f.part is None and view.hidden is not None:
            xs[HIDDEN] = x
            x += BIT_W
        for p in range(f.hi, f.lo - 1, -1):
            xs[p] = x
            x += BIT_W
    return xs


def _bits_width(row: BitRow) -> float:
    xs = bit_positions(row.view, row.shows_implicit)
    return max(xs.values()) + BIT_W if xs else 0.0


def field_fill(f: Any, pos: int) -> str:
    """A bit's fill: its field's colour; a two's complement's top bit (worth -2^(n-1)) in
    the sign's."""
    if f.kind == "twos_complement" and pos == f.hi and f.hi > 0:
        return style.BIT_FIELD_COLORS["sign"]
    return style.BIT_FIELD_COLORS[f.kind]


@dataclass
class _Layout:
    label_w: float
    bits_w: float
    value_x: float
    width: float
    heights: list[float]   # per row block
    gaps: list[int]        # message lines before each row
    height: float


def _row_label(row: BitRow) -> str:
    return text(row.label)


def _messages_before(panel: BitPanel, i: int) -> list[str]:
    return ["↓ " + text(m) for c in panel.changes_into(i) for m in c.messages]


def _legend(panel: BitPanel) -> list[str]:
    kinds = {k for r in panel.rows for k in r.marks.values()}
    items = [text(Msg(f"bits.mark.{k}")) for k in MARK_KINDS if k in kinds]
    if any(r.shows_implicit and any(f.kind == "mantissa" for f in r.view.fields) for r in panel.rows):
        items.append(text(Msg("bits.legend.hidden")))
    return items


def _layout(panel: BitPanel, cell_inches: float) -> _Layout:
    cw, lh = char_w(cell_inches), line_h(cell_inches)
    label_w = max(max(len(_row_label(r)), len(r.view.type_name)) for r in panel.rows) * cw + 0.5
    bits_w = max(_bits_width(r) for r in panel.rows)
    value_x = label_w + bits_w + 0.5
    width = value_x + max(len("= " + r.view.value_text) * cw for r in panel.rows)
    heights, gaps = [], []
    for i, r in enumerate(panel.rows):
        msgs = _messages_before(panel, i)
        gaps.append(len(msgs))
        width = max(width, label_w + max([len(m) for m in msgs] + [0]) * cw,
                    label_w + len(text(r.view.formula)) * cw)
        heights.append(lh + BIT_H + 2 * lh + 0.25 + (lh + 0.15 if r.pieces else 0))
    foot = [text(Msg("explain.note", note=n)) for n in panel.notes]
    legend = _legend(panel)
    legend_w = sum((len(t) + 4) * cw for t in legend)
    width = max([width, legend_w, len(text(panel.title)) * char_w(cell_inches, TITLE_FONT)]
                + [len(t) * cw for t in foot]) + cw  # one character of room: glyph overhangs, ↓
    height = (line_h(cell_inches, TITLE_FONT) + 0.2 + sum(heights) + sum(gaps) * lh
              + len(foot) * lh + (lh + 0.2 if legend else 0))
    return _Layout(label_w, bits_w, value_x, width, heights, gaps, height)


def panel_size(panel: BitPanel, cell_inches: float = CELL_INCHES) -> tuple[float, float]:
    """(width, height) in cell units that ``draw_bit_panel`` uses for ``panel``."""
    lay = _layout(panel, cell_inches)
    return lay.width, lay.height


# --- drawing ---------------------------------------------------------------------------------

def _mono(ax: Any, x: float, y: float, s: str, **kw: Any) -> Any:
    kw.setdefault("fontsize", FONT)
    kw.setdefault("color", INK)
    kw.setdefault("va", "top")
    kw.setdefault("ha", "left")
    return ax.text(x, y, s, family=MONO, **kw)


def _draw_row(ax: Any, row: BitRow, x: float, y: float, lay: _Layout, cell_inches: float,
              chosen_piece: int | None = None) -> None:
    from matplotlib.patches import Rectangle

    cw, lh = char_w(cell_inches), line_h(cell_inches)
    v = row.view
    # label and type, left
    _mono(ax, x, y + lh, _row_label(row), fontweight="bold" if row.chosen else "normal")
    _mono(ax, x, y + 2 * lh, v.type_name, color=style.MUTED_TEXT)
    bx = x + lay.label_w
    top = y + lh
    xs = bit_positions(v, row.shows_implicit)
    # position numbers above the first and last bit of each field
    for f, _ in field_runs(v):
        for p in {f.hi, f.lo}:
            _mono(ax, bx + xs[p] + BIT_W / 2, top - 0.05, str(p), ha="center", va="bottom",
                  color=style.MUTED_TEXT)
    for p, cx in xs.items():
        if p == HIDDEN:
            fill, bit, ls = style.BIT_FIELD_COLORS["mantissa"], str(v.hidden), (0, (2, 2))
        else:
            f = v.field_at(p)
            fill, bit, ls = field_fill(f, p), str(v.bit(p)), "solid"
        mark = row.marks.get(p)
        hidden = p == HIDDEN
        ax.add_patch(Rectangle((bx + cx, top), BIT_W, BIT_H, facecolor=fill, alpha=0.55 if hidden else 1.0,
                               edgecolor=style.CELL_EDGE, linewidth=0.6, linestyle=ls, zorder=2,
                               hatch="////" if mark in DROPPED else None))
        if mark in OUTLINED:
            dashed = mark in ("shifted_in", "fill", "extended")  # new bits: dashed, changed ones solid
            ax.add_patch(Rectangle((bx + cx + 0.04, top + 0.04), BIT_W - 0.08, BIT_H - 0.08, fill=False,
                                   edgecolor=style.BIT_MARK_COLORS[mark], linewidth=1.8, zorder=4,
                                   linestyle="dashed" if dashed else "solid"))
        if mark is not None:
            ax.add_patch(Rectangle((bx + cx, top + BIT_H + 0.03), BIT_W, 0.14,
                                   facecolor=style.BIT_MARK_COLORS[mark], edgecolor="none", zorder=3))
        weight = "bold" if mark in ("set", "first_one", "changed") else "normal"
        _mono(ax, bx + cx + BIT_W / 2, top + BIT_H / 2, bit, ha="center", va="center", zorder=5,
              fontweight=weight, color=style.MUTED_TEXT if mark in DROPPED else INK)
    # the chosen piece of a wide bitcast element, and the pieces' brackets
    below = top + BIT_H + 0.2
    for piece in row.pieces:
        x0, x1 = bx + xs[piece.hi], bx + xs[piece.lo] + BIT_W
        chosen = piece.index == chosen_piece
        ink = style.ROLE_COLORS["result"] if chosen else style.ACCENT
        ax.plot([x0 + 0.05, x0 + 0.05, x1 - 0.05, x1 - 0.05], [below, below + 0.15, below + 0.15, below],
                color=ink, linewidth=2.0 if chosen else 1.0, zorder=3)
        _mono(ax, (x0 + x1) / 2, below + 0.15, f"[{piece.index}]", ha="center", color=ink,
              fontweight="bold" if chosen else "normal")
    if row.pieces:
        below += lh + 0.15
    # field names under the fields, packed left to right so they never overlap
    cursor = bx
    for f, _ in field_runs(v):
        label = text(f.label())
        lx = max(bx + xs[f.hi], cursor)
        _mono(ax, lx, below, label, color=style.MUTED_TEXT)
        cursor = lx + (len(label) + 1) * cw
    # value right of the bits, formula under the field names
    _mono(ax, x + lay.value_x, top + BIT_H / 2, "= " + v.value_text, va="center",
          fontweight="bold" if row.chosen else "normal",
          color=style.ROLE_COLORS["result"] if row.chosen else INK)
    _mono(ax, bx, below + lh, text(v.formula))


def draw_bit_panel(ax: Any, panel: BitPanel, x: float = 0.0, y: float = 0.0,
                   cell_inches: float = CELL_INCHES) -> Extent:
    """Draw ``panel`` on ``ax`` (data units = cells, y down) with its top-left corner at
    (``x``, ``y``); ``cell_inches`` is the size of a cell at export (text stays ``FONT``
    points). Returns the rectangle used (``panel_size`` before drawing gives the same)."""
    from matplotlib.patches import Rectangle

    lay = _layout(panel, cell_inches)
    lh = line_h(cell_inches)
    _mono(ax, x, y, text(panel.title), fontsize=TITLE_FONT, fontweight="bold")
    cy = y + line_h(cell_inches, TITLE_FONT) + 0.2
    chosen_piece = next((r.piece for r in panel.rows if r.chosen and r.piece is not None), None)
    for i, row in enumerate(panel.rows):
        for m in _messages_before(panel, i):
            _mono(ax, x + lay.label_w, cy, m, color="#444444", style="italic")
            cy += lh
        _draw_row(ax, row, x, cy, lay, cell_inches, chosen_piece)
        cy += lay.heights[i]
    for n in panel.notes:
        _mono(ax, x, cy, text(Msg("explain.note", note=n)), style="italic", color="#444444")
        cy += lh
    legend = _legend(panel)
    if legend:
        cy += 0.2
        lx = x
        kinds = [k for k in MARK_KINDS if any(k in r.marks.values() for r in panel.rows)]
        for k, label in zip(kinds + [None] * (len(legend) - len(kinds)), legend, strict=True):
            if k is None:
                ax.add_patch(Rectangle((lx, cy + 0.05), 0.5, 0.35, facecolor="none",
                                       edgecolor=style.CELL_EDGE, linestyle=(0, (2, 2)), linewidth=0.8))
            else:
                ax.add_patch(Rectangle((lx, cy + 0.05), 0.5, 0.35, facecolor=style.BIT_MARK_COLORS[k],
                                       edgecolor="none", hatch="////" if k in DROPPED else None))
            _mono(ax, lx + 0.65, cy, label)
            lx += 0.65 + (len(label) + 3) * char_w(cell_inches)
        cy += lh
    return Extent(x, y, lay.width, lay.height)


def bits_figure(panel: BitPanel, cell_inches: float = CELL_INCHES) -> Any:
    """A figure holding ``panel`` alone (save it with ``style.save_figure``)."""
    import matplotlib.pyplot as plt

    w, h = panel_size(panel, cell_inches)
    with style.styled():
        fig = plt.figure(figsize=((w + 2 * MARGIN) * cell_inches, (h + 2 * MARGIN) * cell_inches))
        ax = fig.add_axes((0, 0, 1, 1))
        ax.set_xlim(-MARGIN, w + MARGIN)
        ax.set_ylim(h + MARGIN, -MARGIN)
        ax.set_axis_off()
        draw_bit_panel(ax, panel, 0.0, 0.0, cell_inches)
    return fig


__all__ = ["Extent", "FONT", "bit_positions", "field_fill", "panel_size", "draw_bit_panel",
           "bits_figure", "char_w", "line_h"]
