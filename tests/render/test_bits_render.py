# ruff: noqa: E501
"""Bit pictures (hlolab.render.bits): every element type draws inside the extent it reports,
all text is at least 9 pt, marks are drawn on the bits they mark, the e5m2 picture of
reduce_precision(0.1) is written and byte-identical run to run."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

pytest.importorskip("matplotlib")
from matplotlib.patches import Rectangle  # noqa: E402

from hlolab.messages import Msg  # noqa: E402
from hlolab.numerics import from_bits  # noqa: E402
from hlolab.ops.reduction import reduce_precision_values  # noqa: E402
from hlolab.render import style  # noqa: E402
from hlolab.render.bits import (  # noqa: E402
    BIT_H,
    BIT_W,
    DROPPED,
    FONT,
    bit_positions,
    bits_figure,
    draw_bit_panel,
    panel_size,
)
from hlolab.render.layout import CELL_INCHES  # noqa: E402
from hlolab.trace.bits import (  # noqa: E402
    HIDDEN,
    BitPanel,
    BitRow,
    bit_view,
    bitcast_panel,
    convert_panel,
    reduce_precision_panel,
    shift_panel,
)
from hlolab.types import ALL_ELEMENT_TYPE_NAMES, element_type  # noqa: E402


def a_value(name: str):
    """A value of type ``name`` whose bits are not all equal."""
    et = element_type(name)
    if et.is_bool:
        return np.bool_(True)
    if et.is_complex:
        return np.array(complex(0.1, -2.5), et.dtype)[()]
    if et.is_float:  # f8E8M0FNU has no sign; 0.1 is no small float's value
        v = 0.25 if et.name == "f8E8M0FNU" else -0.8125 if et.bits < 16 else 0.1
        return np.array(v).astype(et.dtype)[()]
    return np.array(-5 if et.is_signed else 5).astype(et.dtype)[()]


def panels() -> list[tuple[str, BitPanel]]:
    out = []
    for name in ALL_ELEMENT_TYPE_NAMES:  # every type: a convert to itself and to f32 / i8
        v = a_value(name)
        out.append((name, convert_panel(v, v, name, name)))
    x = np.float32(0.1)
    out.append(("reduce e5m2", reduce_precision_panel(x, reduce_precision_values(np.array([x]), 5, 2)[0],
                                                      "f32", 5, 2, ("%operand[0]", "%output[0]"))))
    q = from_bits(np.array([0xCD, 0xCC, 0xCC, 0x3D], np.uint8), np.int8)
    out.append(("bitcast split", bitcast_panel([x], list(q), "f32", "i8",
                                               (["%x"], [f"%r[{k}]" for k in range(4)]), chosen=2)))
    halves = from_bits(np.array([0xCCCD, 0x3DCC], np.uint16), ml_dtypes.bfloat16)
    out.append(("bitcast join", bitcast_panel(list(halves), [x], "bf16", "f32", (["%h[0]", "%h[1]"], ["%r"]))))
    out.append(("shift", shift_panel(np.int8(-100), np.int8(3), np.int8(-13), "i8", "right_arithmetic")))
    f = np.float32(500.0)
    out.append(("f8 overflow", convert_panel(f, np.array(np.nan, ml_dtypes.float8_e4m3fn)[()], "f32", "f8E4M3FN")))
    return out


PANELS = panels()


def figure_for(panel: BitPanel, x: float, y: float):
    import matplotlib.pyplot as plt

    w, h = panel_size(panel)
    with style.styled():
        fig = plt.figure(figsize=((w + x + 1) * CELL_INCHES, (h + y + 1) * CELL_INCHES))
        ax = fig.add_axes((0, 0, 1, 1))
        ax.set_xlim(0, w + x + 1)
        ax.set_ylim(h + y + 1, 0)
        ax.set_axis_off()
        ext = draw_bit_panel(ax, panel, x, y)
    return fig, ax, ext


@pytest.mark.parametrize(("what", "panel"), PANELS, ids=[w for w, _ in PANELS])
def test_draws_inside_the_extent_it_reports(what, panel):
    fig, ax, ext = figure_for(panel, 1.5, 2.0)
    assert (ext.x, ext.y) == (1.5, 2.0) and (ext.width, ext.height) == panel_size(panel)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    inv = ax.transData.inverted()
    slack = 0.15  # cells: glyph side bearings, descenders
    for t in ax.texts:
        (x0, y1), (x1, y0) = inv.transform(t.get_window_extent(renderer).get_points())
        assert x0 >= ext.x - slack and x1 <= ext.x + ext.width + slack, (what, t.get_text())
        assert y0 >= ext.y - slack and y1 <= ext.y + ext.height + slack, (what, t.get_text())
        assert t.get_fontsize() >= 9, (what, t.get_text())
    for p in ax.patches:
        bx, by = p.get_xy()
        assert ext.x <= bx and bx + p.get_width() <= ext.x + ext.width + 1e-9, what
        assert ext.y <= by and by + p.get_height() <= ext.y + ext.height + 1e-9, what


@pytest.mark.parametrize("name", ALL_ELEMENT_TYPE_NAMES)
def test_one_cell_per_bit_coloured_by_field(name):
    v = bit_view(a_value(name), name)
    panel = BitPanel(Msg("bits.title.popcnt"), [BitRow("%x", v), BitRow("%y", v, chosen=True)])
    fig, ax, ext = figure_for(panel, 0.0, 0.0)
    cells = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_width() == BIT_W
             and p.get_height() == BIT_H]
    hidden = 1 if v.hidden is not None and any(f.kind == "mantissa" for f in v.fields) else 0
    assert len(cells) == 2 * (v.width + hidden)  # two rows of one cell per bit (+ the implicit one)
    xs = bit_positions(v)
    # most significant bit leftmost, the implicit bit right before the mantissa's top bit
    order = sorted(xs, key=xs.get)
    stored = [p for p in order if p != HIDDEN]
    assert stored == sorted(stored, reverse=True) and len(stored) == v.width
    if hidden:
        mant = next(f for f in v.fields if f.kind == "mantissa")
        assert order[order.index(HIDDEN) + 1] == mant.hi
    # field colours: each stored bit's fill is its field's colour
    fills = {tuple(np.round(c.get_facecolor()[:3], 3)) for c in cells}
    from matplotlib.colors import to_rgb
    want = {tuple(np.round(to_rgb(style.BIT_FIELD_COLORS[f.kind]), 3)) for f in v.fields}
    assert want <= fills


def test_marks_are_drawn_on_their_bits():
    _, panel = next(p for p in PANELS if p[0] == "reduce e5m2")
    fig, ax, ext = figure_for(panel, 0.0, 0.0)
    row0 = panel.rows[0]
    dropped = [p for p, k in row0.marks.items() if k in DROPPED]
    assert len(dropped) == 21  # the guard and 20 sticky bits
    hatched = [p for p in ax.patches if p.get_hatch() and p.get_width() == BIT_W]
    assert len(hatched) == 21
    # the guard bit's bar has the guard colour and sits under bit 20's cell
    from matplotlib.colors import to_rgba
    bars = [p for p in ax.patches if p.get_height() == 0.14]
    guard = [b for b in bars if np.allclose(b.get_facecolor(), to_rgba(style.BIT_MARK_COLORS["guard"]))]
    assert len(guard) == 1
    cell20 = [p for p in hatched if abs(p.get_x() - guard[0].get_x()) < 1e-9]
    assert len(cell20) == 1
    # changed output bits are outlined: one outline per changed bit
    changed = sum(1 for k in panel.rows[1].marks.values() if k == "changed")
    outlines = [p for p in ax.patches if not p.get_fill() and p.get_linewidth() == 1.8]
    assert changed == 11 and len(outlines) == changed
    assert HIDDEN in bit_positions(row0.view)


def test_e5m2_png_is_written_legibly_and_deterministically(tmp_path):
    _, panel = next(p for p in PANELS if p[0] == "reduce e5m2")
    a = style.save_figure(bits_figure(panel), tmp_path / "a.png")
    b = style.save_figure(bits_figure(panel), tmp_path / "b.png")
    assert a.read_bytes() == b.read_bytes()
    from PIL import Image

    w, h = Image.open(a).size
    pw, ph = panel_size(panel)
    dpi = style.EXPORT_DPI
    assert abs(w - round((pw + 0.8) * CELL_INCHES * dpi)) <= 1 and abs(h - round((ph + 0.8) * CELL_INCHES * dpi)) <= 1
    fig = bits_figure(panel)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "= 0.09375" in texts and "= 0.1" in texts
    assert any("guard bit 0, below half" in t for t in texts)
    assert all(t.get_fontsize() >= FONT for t in fig.axes[0].texts)


def test_svg_keeps_text_as_text(tmp_path):
    _, panel = next(p for p in PANELS if p[0] == "bitcast split")
    svg = style.save_figure(bits_figure(panel), tmp_path / "b.svg").read_text()
    assert "piece 2: bits 23..16" in svg and "[3]" in svg


def test_bitcast_draws_stored_bits_only_and_the_chosen_piece():
    _, panel = next(p for p in PANELS if p[0] == "bitcast split")
    fig, ax, ext = figure_for(panel, 0.0, 0.0)
    cells = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_width() == BIT_W
             and p.get_height() == BIT_H]
    assert len(cells) == 32 + 4 * 8  # no implicit bit: a bitcast regroups the stored bits
    from matplotlib.colors import to_rgba
    brackets = [line for line in ax.lines if len(line.get_xdata()) == 4]
    assert len(brackets) == 4
    chosen = [b for b in brackets if np.allclose(to_rgba(b.get_color()), to_rgba(style.ROLE_COLORS["result"]))]
    assert len(chosen) == 1 and chosen[0].get_linewidth() == 2.0
    # piece 2 covers bits 23..16: its bracket spans those cells
    xs = bit_positions(panel.rows[0].view, implicit=False)
    x0, x1 = min(chosen[0].get_xdata()), max(chosen[0].get_xdata())
    assert abs(x0 - (ext.x + _label_w(panel) + xs[23] + 0.05)) < 1e-6 and abs(x1 - (ext.x + _label_w(panel) + xs[16] + BIT_W - 0.05)) < 1e-6


def _label_w(panel: BitPanel) -> float:
    from hlolab.render.bits import char_w

    return max(max(len(str(r.label)), len(r.view.type_name)) for r in panel.rows) * char_w(CELL_INCHES) + 0.5
