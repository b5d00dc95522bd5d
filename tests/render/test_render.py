# ruff: noqa: E501
"""Renderers: layout geometry, diagram and animation pixels, determinism, hlolab export."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("matplotlib")
from PIL import Image  # noqa: E402

from hlolab.cli import main  # noqa: E402
from hlolab.render import style  # noqa: E402
from hlolab.render.animate import animate  # noqa: E402
from hlolab.render.diagram import draw_diagram  # noqa: E402
from hlolab.render.layout import TensorLayout, axis_entries  # noqa: E402
from hlolab.session import Session  # noqa: E402
from hlolab.trace.provenance import FrameMap  # noqa: E402

CONV = """
func.func @main(%x: tensor<1x4x4x1xf32>, %w: tensor<3x3x1x1xf32>) -> tensor<1x2x2x1xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
       window = {stride = [2, 2], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1]}
       {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
       : (tensor<1x4x4x1xf32>, tensor<3x3x1x1xf32>) -> tensor<1x2x2x1xf32>
  return %0 : tensor<1x2x2x1xf32>
}
"""

GATHER = """
func.func @main(%operand: tensor<3x4xi32>, %idx: tensor<2x1xi32>) -> tensor<2x4xi32> {
  %0 = "stablehlo.gather"(%operand, %idx) {dimension_numbers = #stablehlo.gather<offset_dims = [1],
       collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>,
       slice_sizes = array<i64: 1, 4>} : (tensor<3x4xi32>, tensor<2x1xi32>) -> tensor<2x4xi32>
  return %0 : tensor<2x4xi32>
}
"""

POOL = """
func.func @main(%x: tensor<3x3xf32>) -> tensor<5x5xf32> {
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%x, %init) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
  }) {window_dimensions = array<i64: 2, 2>, base_dilations = array<i64: 2, 2>,
      padding = dense<[[1, 0], [1, 0]]> : tensor<2x2xi64>}
     : (tensor<3x3xf32>, tensor<f32>) -> tensor<5x5xf32>
  return %0 : tensor<5x5xf32>
}
"""


def event_of(text: str, args: list[np.ndarray], op: str):
    """The last event of ``op`` when ``text`` runs on ``args`` (the render tests draw it)."""
    s = Session(text)
    s.bind(args)
    stop = s.run()
    assert stop.error is None
    return [e for e in s.history if e.op.name == op][-1]


def conv_event():
    x = np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1)
    w = np.ones((3, 3, 1, 1), np.float32)
    return event_of(CONV, [x, w], "stablehlo.convolution")


def rgb_at(png, board, key, index):
    """The colour of a cell, sampled near its top-left corner (away from the value text)."""
    from collections import Counter

    px, py = board.pixel(key, index, style.EXPORT_DPI)
    off = int(board.cell_inches * style.EXPORT_DPI * 0.3)
    img = Image.open(png).convert("RGB")
    # the most common colour of a 7x7 patch: the fill, not a hole's thin hatch line
    return Counter(img.getpixel((px - off + i, py - off + j)) for i in range(-3, 4)
                   for j in range(-3, 4)).most_common(1)[0][0]


# --- layout ---------------------------------------------------------------------------

def test_axis_entries_elide_but_keep_chosen_indices():
    assert axis_entries(5, limit=12) == [0, 1, 2, 3, 4]
    assert axis_entries(40, keep=[17], limit=12) == [0, 1, 2, None, 17, None, 37, 38, 39]


@pytest.mark.parametrize("shape", [(), (4,), (2, 3), (2, 3, 4), (2, 2, 3, 4), (2, 3, 2, 2, 3)])
def test_layout_cells_are_distinct_and_inside(shape):
    lay = TensorLayout(shape)
    idx, xy = lay.cells()
    assert len(idx) == int(np.prod(shape))
    assert len({(round(x, 6), round(y, 6)) for x, y in xy}) == len(xy)  # no two cells overlap
    assert (xy[:, 0] >= 0).all() and (xy[:, 0] + 1 <= lay.width + 1e-9).all()
    assert (xy[:, 1] >= 0).all() and (xy[:, 1] + 1 <= lay.height + 1e-9).all()
    for row, p in zip(idx, xy):
        assert lay.position(tuple(row)) == pytest.approx(tuple(p))


def test_layout_grid_axes_draw_chosen_dims_as_the_grid():
    lay = TensorLayout((1, 5, 6, 2), grid_axes=(1, 2))
    a, b = lay.position((0, 0, 0, 0)), lay.position((0, 0, 1, 0))
    c = lay.position((0, 1, 0, 0))
    assert b[0] - a[0] == pytest.approx(1) and b[1] == a[1]  # dim 2 runs across
    assert c[1] - a[1] == pytest.approx(1) and c[0] == a[0]  # dim 1 runs down
    assert lay.position((0, 0, 0, 1))[0] > lay.position((0, 0, 5, 0))[0]  # features: panels


def test_large_tensor_is_elided_but_the_chosen_cell_stays():
    lay = TensorLayout((64, 64), keep=[(33, 40)])
    assert lay.position((33, 40)) is not None
    assert lay.position((20, 20)) is None
    assert len(lay.cells()[0]) < 200


def test_frame_map_kinds_padding_and_holes():
    fm = FrameMap(0, (6,), (1,), (2,))  # 3 elements, low padding 1, dilation 2 -> 0 . 1 . 2 + pad
    assert fm.kinds((3,)).tolist() == [1, 0, 2, 0, 2, 0]
    assert fm.to_frame((2,)) == (5,)


# --- diagrams -------------------------------------------------------------------------

def test_conv_diagram_paints_window_padding_and_kernel(tmp_path):
    ev = conv_event()
    r = draw_diagram(ev, [(0, (0, 0, 0, 0))])
    png = style.save_figure(r.fig, tmp_path / "conv.png")
    board = r.board
    # result (0,0): window rows/cols -1..1 of the input; frame position 0 is padding
    assert rgb_at(png, board, "result0", (0, 0, 0, 0)) == style.hex_to_rgb(style.ROLE_COLORS["result"])
    assert rgb_at(png, board, "operand0", (0, 1, 1, 0)) == style.hex_to_rgb(style.ROLE_COLORS["window"])
    assert rgb_at(png, board, "operand0", (0, 0, 1, 0)) == style.hex_to_rgb(style.ROLE_COLORS["pad_value"])
    assert rgb_at(png, board, "operand0", (0, 3, 3, 0)) == style.hex_to_rgb(style.CELL_FILL)
    assert rgb_at(png, board, "operand1", (2, 2, 0, 0)) == style.hex_to_rgb(style.ROLE_COLORS["kernel"])
    groups = {(g.key, g.role): len(g.indices) for g in r.groups[0]}
    # the 5 kernel weights that meet padding are not sources: only 4 are painted
    assert groups == {("operand0", "window"): 4, ("operand0", "pad_value"): 5, ("operand1", "kernel"): 4}


def test_gather_diagram_paints_the_copied_row_and_the_index_read(tmp_path):
    operand = np.arange(12, dtype=np.int32).reshape(3, 4)
    ev = event_of(GATHER, [operand, np.array([[2], [0]], np.int32)], "stablehlo.gather")
    r = draw_diagram(ev, [(0, (0, 1))])
    png = style.save_figure(r.fig, tmp_path / "g.png")
    assert rgb_at(png, r.board, "operand0", (2, 1)) == style.hex_to_rgb(style.ROLE_COLORS["copy"])
    assert rgb_at(png, r.board, "operand0", (0, 1)) == style.hex_to_rgb(style.CELL_FILL)
    assert rgb_at(png, r.board, "operand1", (0, 0)) == style.hex_to_rgb(style.ROLE_COLORS["index_read"])
    texts = " ".join(t.get_text() for t in r.fig.axes[0].texts)
    assert "operand_index" in texts and "(2, 1)" in texts


def test_reduce_window_base_dilation_holes_are_drawn_dashed_and_painted(tmp_path):
    x = np.arange(9, dtype=np.float32).reshape(3, 3)
    ev = event_of(POOL, [x], "stablehlo.reduce_window")
    r = draw_diagram(ev, [(0, (1, 1))])
    roles = {g.role for g in r.groups[0]}
    assert {"window", "dilation_hole", "init"} <= roles
    png = style.save_figure(r.fig, tmp_path / "p.png")
    # frame: pad 1 low, dilation 2: position (2, 2) is a hole, (1, 1) the element x[0, 0]
    assert rgb_at(png, r.board, "operand0", (2, 2)) == style.hex_to_rgb(style.ROLE_COLORS["dilation_hole"])
    assert rgb_at(png, r.board, "operand0", (1, 1)) == style.hex_to_rgb(style.ROLE_COLORS["window"])


def test_several_elements_each_in_its_own_colour(tmp_path):
    ev = conv_event()
    r = draw_diagram(ev, [(0, (0, 0, 0, 0)), (0, (0, 1, 1, 0))])
    png = style.save_figure(r.fig, tmp_path / "two.png")
    c0, c1 = (style.hex_to_rgb(c) for c in style.ELEMENT_COLORS[:2])
    assert rgb_at(png, r.board, "operand0", (0, 0, 0, 0)) == c0  # only the first window
    assert rgb_at(png, r.board, "operand0", (0, 4, 4, 0)) == c1  # only the second


def test_render_twice_gives_identical_bytes(tmp_path):
    ev = conv_event()
    for fmt in ("png", "svg"):
        a = style.save_figure(draw_diagram(ev).fig, tmp_path / f"a.{fmt}")
        b = style.save_figure(draw_diagram(ev).fig, tmp_path / f"b.{fmt}")
        assert a.read_bytes() == b.read_bytes()


# --- animations -----------------------------------------------------------------------

def test_animation_has_a_frame_per_result_element_and_paints_each_window(tmp_path):
    ev = conv_event()
    anim = animate(ev)
    assert anim.n_frames == 4
    gif = anim.save_gif(tmp_path / "c.gif")
    im = Image.open(gif)
    assert im.n_frames == 4
    board = anim.board
    window = style.hex_to_rgb(style.ROLE_COLORS["window"])
    for k, (cell, idle) in enumerate([((0, 1, 1, 0), (0, 4, 4, 0)), ((0, 1, 3, 0), (0, 4, 1, 0)),
                                      ((0, 3, 1, 0), (0, 1, 4, 0)), ((0, 3, 3, 0), (0, 1, 1, 0))]):
        im.seek(k)
        frame = im.convert("RGB")
        off = int(board.cell_inches * board.fig.dpi * 0.3)
        px, py = board.pixel("operand0", cell)
        assert frame.getpixel((px - off, py - off)) == window, k
        px, py = board.pixel("operand0", idle)
        assert frame.getpixel((px - off, py - off)) != window, k
    again = animate(ev).save_gif(tmp_path / "d.gif")
    assert gif.read_bytes() == again.read_bytes()
    frames = anim.save_frames(tmp_path / "frames")
    assert len(frames) == 4 and all(p.stat().st_size for p in frames)


def test_animation_caps_frames_and_says_so():
    ev = conv_event()
    anim = animate(ev, max_frames=3)
    assert anim.n_frames == 3
    # spread over all 4 windows, the last one included (issue 23)
    assert anim.plans[0].caption.endswith("frame 1 of 3 shown, element 1 of 4")
    assert anim.plans[-1].caption.endswith("frame 3 of 3 shown, element 4 of 4")


# --- hlolab export ----------------------------------------------------------------------

def test_export_writes_a_diagram_and_a_gif_of_a_program_value(tmp_path, capsys):
    out = tmp_path / "mp.png"
    assert main(["export", "--example", "conv_maxpool", "--out", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    gif = tmp_path / "c.gif"
    assert main(["export", "--example", "conv2d", "--value", "%0", "--format", "gif", "--out", str(gif)]) == 0
    assert Image.open(gif).n_frames == 9  # one frame per element of the 1x3x3x1 result
    assert "9 frames of stablehlo.convolution" in capsys.readouterr().out


def test_export_errors_are_clean(capsys):
    assert main(["export", "no_such_op"]) == 1
    assert "not an op with a parameter schema nor a file" in capsys.readouterr().err
    assert main(["export", "--example", "conv2d", "--value", "%nope"]) == 1
    err = capsys.readouterr().err
    assert "%nope" in err and "Traceback" not in err
