# ruff: noqa: E501
"""Static diagrams (hlolab.render.diagram): pixel colours of chosen, source and untouched
cells for every provenance family, the legend, several elements, elision, the derivation
text and byte-identical output."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("matplotlib")
from PIL import Image  # noqa: E402

from hlolab.errors import HloLabError  # noqa: E402
from hlolab.render import (
    diagram,  # noqa: E402
    style,  # noqa: E402
)
from hlolab.render.diagram import draw_diagram  # noqa: E402
from hlolab.render.opview import OpView  # noqa: E402
from hlolab.trace.explain import DimRole  # noqa: E402
from tests.render.test_render import event_of  # noqa: E402

ADD_BODY = """({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
  })"""


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


def one_op(op_line: str, arg_types: list[str], out_type: str) -> str:
    params = ", ".join(f"%a{i}: {t}" for i, t in enumerate(arg_types))
    return f"func.func @main({params}) -> {out_type} {{\n  %0 = {op_line}\n  return %0 : {out_type}\n}}\n"


def f32(*shape: int) -> np.ndarray:
    return np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) + 1


# --- the events ---------------------------------------------------------------------------------

def gather_spec():
    text = one_op("""\"stablehlo.gather\"(%a0, %a1) {dimension_numbers = #stablehlo.gather<
      offset_dims = [3, 4], collapsed_slice_dims = [1], operand_batching_dims = [0],
      start_indices_batching_dims = [1], start_index_map = [2, 1], index_vector_dim = 3>,
      slice_sizes = array<i64: 1, 1, 2, 2>, indices_are_sorted = false}
      : (tensor<2x3x4x2xi32>, tensor<2x2x3x2xi64>) -> tensor<2x2x3x2x2xi32>""",
                  ["tensor<2x3x4x2xi32>", "tensor<2x2x3x2xi64>"], "tensor<2x2x3x2x2xi32>")
    operand = np.arange(1, 49, dtype=np.int32).reshape(2, 3, 4, 2)
    idx = np.array([[[[0, 0], [1, 0], [2, 1]], [[0, 1], [1, 1], [0, 9]]],
                    [[[0, 0], [2, 1], [2, 2]], [[1, 2], [0, 1], [1, 0]]]], np.int64)
    return event_of(text, [operand, idx], "stablehlo.gather")


def gather_big():
    text = one_op("""\"stablehlo.gather\"(%a0, %a1) {dimension_numbers = #stablehlo.gather<offset_dims = [1],
      collapsed_slice_dims = [0], start_index_map = [0, 1], index_vector_dim = 1>,
      slice_sizes = array<i64: 1, 1>} : (tensor<64x64xf32>, tensor<1x2xi32>) -> tensor<1x1xf32>""",
                  ["tensor<64x64xf32>", "tensor<1x2xi32>"], "tensor<1x1xf32>")
    return event_of(text, [f32(64, 64), np.array([[40, 37]], np.int32)], "stablehlo.gather")


def conv(pad="[[1, 1], [1, 1]]", lhs_dilate="[1, 1]", stride="[2, 2]", x_shape=(1, 4, 4, 1),
         w_shape=(3, 3, 1, 1), out_shape=(1, 2, 2, 1), groups=1):
    t = lambda s: "tensor<" + "x".join(map(str, s)) + "xf32>"  # noqa: E731
    text = one_op(f"""stablehlo.convolution(%a0, %a1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
       window = {{stride = {stride}, pad = {pad}, lhs_dilate = {lhs_dilate}, rhs_dilate = [1, 1]}}
       {{batch_group_count = 1 : i64, feature_group_count = {groups} : i64}}
       : ({t(x_shape)}, {t(w_shape)}) -> {t(out_shape)}""", [t(x_shape), t(w_shape)], t(out_shape))
    x = np.arange(int(np.prod(x_shape)), dtype=np.float32).reshape(x_shape)
    w = np.arange(int(np.prod(w_shape)), dtype=np.float32).reshape(w_shape)
    return event_of(text, [x, w], "stablehlo.convolution")


def reduce_window_dilated():
    text = f"""func.func @main(%x: tensor<3x3xf32>) -> tensor<5x5xf32> {{
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%x, %init) {ADD_BODY} {{window_dimensions = array<i64: 2, 2>,
      base_dilations = array<i64: 2, 2>, padding = dense<[[1, 0], [1, 0]]> : tensor<2x2xi64>}}
     : (tensor<3x3xf32>, tensor<f32>) -> tensor<5x5xf32>
  return %0 : tensor<5x5xf32>
}}"""
    return event_of(text, [f32(3, 3)], "stablehlo.reduce_window")


def reduce_rows():
    text = f"""func.func @main(%x: tensor<3x5xf32>) -> tensor<3xf32> {{
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = "stablehlo.reduce"(%x, %init) {ADD_BODY} {{dimensions = array<i64: 1>}}
     : (tensor<3x5xf32>, tensor<f32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}}"""
    return event_of(text, [f32(3, 5)], "stablehlo.reduce")


def scatter_add():
    text = f"""func.func @main(%x: tensor<4x3xf32>, %i: tensor<2x1xi32>, %u: tensor<2x3xf32>) -> tensor<4x3xf32> {{
  %0 = "stablehlo.scatter"(%x, %i, %u) {ADD_BODY} {{scatter_dimension_numbers = #stablehlo.scatter<
      update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0],
      index_vector_dim = 1>}} : (tensor<4x3xf32>, tensor<2x1xi32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}}"""
    return event_of(text, [f32(4, 3), np.array([[1], [1]], np.int32), f32(2, 3) * 10], "stablehlo.scatter")


def select_and_scatter(window: str = "window_dimensions = array<i64: 2, 2>, "
                                      "window_strides = array<i64: 2, 2>"):
    text = """func.func @main(%x: tensor<4x4xf32>, %s: tensor<2x2xf32>) -> tensor<4x4xf32> {
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = "stablehlo.select_and_scatter"(%x, %s, %init) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %c = stablehlo.compare GE, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
  }, {
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %t = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %t : tensor<f32>
  }) {WINDOW}
     : (tensor<4x4xf32>, tensor<2x2xf32>, tensor<f32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}""".replace("WINDOW", window)
    x = np.array([[1, 5, 2, 0], [3, 4, 9, 1], [0, 0, 1, 2], [7, 1, 3, 8]], np.float32)
    return event_of(text, [x, np.array([[10, 20], [30, 40]], np.float32)], "stablehlo.select_and_scatter")


SIMPLE = {
    "pad": ("stablehlo.pad %a0, %a1, low = [1, -1], high = [1, -1], interior = [0, 1] : (tensor<5x4xf32>, tensor<f32>) -> tensor<7x5xf32>",
            ["tensor<5x4xf32>", "tensor<f32>"], "tensor<7x5xf32>", [f32(5, 4), np.float32(-1)], (2, 1)),
    "dot_general": ("stablehlo.dot_general %a0, %a1, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<2x2x3xf32>, tensor<2x3x2xf32>) -> tensor<2x2x2xf32>",
                    ["tensor<2x2x3xf32>", "tensor<2x3x2xf32>"], "tensor<2x2x2xf32>", [f32(2, 2, 3), f32(2, 3, 2)], (1, 0, 1)),
    "transpose": ("stablehlo.transpose %a0, dims = [2, 0, 1] : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>",
                  ["tensor<2x3x4xf32>"], "tensor<4x2x3xf32>", [f32(2, 3, 4)], (3, 1, 2)),
    "broadcast_in_dim": ("stablehlo.broadcast_in_dim %a0, dims = [0, 2] : (tensor<3x1xf32>) -> tensor<3x2x2xf32>",
                         ["tensor<3x1xf32>"], "tensor<3x2x2xf32>", [f32(3, 1)], (2, 1, 0)),
    "reshape": ("stablehlo.reshape %a0 : (tensor<2x6xf32>) -> tensor<3x4xf32>",
                ["tensor<2x6xf32>"], "tensor<3x4xf32>", [f32(2, 6)], (2, 1)),
    "concatenate": ("stablehlo.concatenate %a0, %a1, dim = 0 : (tensor<3x2xf32>, tensor<1x2xf32>) -> tensor<4x2xf32>",
                    ["tensor<3x2xf32>", "tensor<1x2xf32>"], "tensor<4x2xf32>", [f32(3, 2), f32(1, 2)], (3, 1)),
    "slice": ("stablehlo.slice %a0 [1:3, 0:4:2] : (tensor<4x4xf32>) -> tensor<2x2xf32>",
              ["tensor<4x4xf32>"], "tensor<2x2xf32>", [f32(4, 4)], (1, 1)),
    "dynamic_slice": ("stablehlo.dynamic_slice %a0, %a1, %a2, sizes = [2, 2] : (tensor<4x4xf32>, tensor<i32>, tensor<i32>) -> tensor<2x2xf32>",
                      ["tensor<4x4xf32>", "tensor<i32>", "tensor<i32>"], "tensor<2x2xf32>",
                      [f32(4, 4), np.int32(1), np.int32(7)], (1, 0)),
    "add": ("stablehlo.add %a0, %a1 : tensor<2x3xf32>", ["tensor<2x3xf32>", "tensor<2x3xf32>"], "tensor<2x3xf32>",
            [f32(2, 3), f32(2, 3) * 10], (1, 2)),
    "add_rank0": ("stablehlo.add %a0, %a1 : tensor<f32>", ["tensor<f32>", "tensor<f32>"], "tensor<f32>",
                  [np.float32(2), np.float32(3)], ()),
    "add_rank5": ("stablehlo.add %a0, %a1 : tensor<2x2x2x2x3xf32>", ["tensor<2x2x2x2x3xf32>"] * 2, "tensor<2x2x2x2x3xf32>",
                  [f32(2, 2, 2, 2, 3), f32(2, 2, 2, 2, 3)], (1, 0, 1, 1, 2)),
    "select": ("stablehlo.select %a0, %a1, %a2 : tensor<2x2xi1>, tensor<2x2xf32>",
               ["tensor<2x2xi1>", "tensor<2x2xf32>", "tensor<2x2xf32>"], "tensor<2x2xf32>",
               [np.array([[True, False], [False, True]]), f32(2, 2), -f32(2, 2)], (0, 1)),
}


def simple(name: str):
    line, types, out, args, index = SIMPLE[name]
    op = "stablehlo." + name.split("_rank")[0]
    return event_of(one_op(line, types, out), args, op), index


# --- pixel helpers -------------------------------------------------------------------------------

def patch_colour(png_rgb, x: int, y: int, r: int = 3) -> tuple[int, int, int]:
    """The most common colour of the (2r+1)^2 pixels around (x, y): a cell's fill, not the
    thin hatch line of a hole that may cross the point."""
    from collections import Counter

    return Counter(png_rgb.getpixel((x + i, y + j)) for i in range(-r, r + 1)
                   for j in range(-r, r + 1)).most_common(1)[0][0]


def samples(png_rgb, board, key, index) -> list[tuple[int, int, int]]:
    """Colours at four points around a cell's centre, away from its value text."""
    px, py = board.pixel(key, index, style.EXPORT_DPI)
    off = int(board.cell_inches * style.EXPORT_DPI * 0.32)
    return [patch_colour(png_rgb, px + dx, py + dy) for dx in (-off, off) for dy in (-off, off)]


def assert_color(png_rgb, board, key, index, color, what):
    want = style.hex_to_rgb(color)
    got = samples(png_rgb, board, key, index)
    # an arrow may cross one sample point; the fill must show at the others
    assert sum(g == want for g in got) >= 3, f"{what}: {key}{index} is {got}, want {want} ({color})"


def expected_fills(view, result, index) -> dict[tuple[str, tuple[int, ...]], str]:
    """The role colour each source cell must show (the most specific role wins)."""
    order = {r: k for k, r in enumerate(style.ROLE_ORDER)}
    best: dict[tuple[str, tuple[int, ...]], str] = {}
    for g in view.element_cells(result, index):
        for row in g.indices.tolist():
            cell = (g.key, tuple(row))
            if cell not in best or order[g.role] < order[best[cell]]:
                best[cell] = g.role
    return best


def render(ev, elements, tmp_path, name="d"):
    r = draw_diagram(ev, elements)
    png = style.save_figure(r.fig, tmp_path / f"{name}.png")
    return r, Image.open(png).convert("RGB")


def legend_labels(r) -> set[str]:
    """The role names written on the board: the shared ones and the op's own (role_labels)."""
    labels = set(style.ROLE_LABELS.values()) | {r.view.role_label(x) for x in style.ROLE_LABELS}
    return {t.get_text() for t in r.board.ax.texts if t.get_text() in labels}


def check_single(ev, index, tmp_path, result=0):
    r, img = render(ev, [(result, index)], tmp_path)
    board, view = r.board, r.view
    assert_color(img, board, f"result{result}", index, style.role_color("result"), "chosen cell")
    fills = expected_fills(view, result, tuple(index))
    assert fills, "the element has sources"
    drawn = 0
    for (key, cell), role in fills.items():
        if board.pixel(key, cell) is None:
            continue  # elided
        assert_color(img, board, key, cell, style.role_color(role), role)
        drawn += 1
    assert drawn > 0
    # a cell of each operand outside the provenance keeps its base fill
    for key, tv in board.views.items():
        if not key.startswith("operand"):
            continue
        free = [tuple(int(i) for i in row) for row in tv.index if (key, tuple(int(i) for i in row)) not in fills]
        if free:
            base = tv.base_faces[tv.slot[free[-1]]]
            assert_color(img, board, key, free[-1], base, "untouched cell")
    roles = {role for role in fills.values()} | {"result"}
    assert legend_labels(r) == {r.view.role_label(x) for x in roles}
    inside(r)
    return r, img


def inside(r) -> None:
    """Every text artist lies inside the figure (nothing runs off)."""
    fig = r.fig
    rend = fig.canvas.get_renderer()
    w, h = fig.bbox.width, fig.bbox.height
    for t in r.board.ax.texts:
        bb = t.get_window_extent(rend)
        assert bb.x0 >= -1 and bb.y0 >= -1 and bb.x1 <= w + 1 and bb.y1 <= h + 1, t.get_text()


# --- one element, every family --------------------------------------------------------------------

def test_gather_spec_example_sources_roles_and_clamped_start(tmp_path):
    ev = gather_spec()
    r, _ = check_single(ev, (0, 1, 2, 0, 1), tmp_path)
    # start [0, 9] (start_index_map [2, 1]) clamps operand dim 1 to 3 - 1 = 2; the batching dim
    # takes start_indices dim 1 (= 1); offset (0, 1) lands in operand dims 2, 3
    assert "full_start_index\n" in r.text and "= (0, 2, 0, 0)  clamped from (0, 9, 0, 0)" in r.text
    assert "7. operand_index\n" in r.text and "= (1, 2, 0, 1)\n" in r.text
    assert "result[0, 1, 2, 0, 1] = 42" in r.text
    # the layout model, by hand: the result block of batch (0, 1, 2) spans the offset dims 3, 4;
    # it copies operand[1, 2, 0:2, 0:2] (slice_sizes [1, 1, 2, 2] at the clamped start); the
    # unclamped start (0, 9, 0, 0) + batching (1, 0, 0, 0) would put it at operand[1, 9, 0:2, 0:2]
    from hlolab.render.model import Outline
    assert r.models[0].outlines == [
        Outline("result0", "block", (0, 1, 2, 0, 0), (1, 2, 3, 2, 2)),
        Outline("operand0", "slice", (1, 2, 0, 0), (2, 3, 2, 2)),
        Outline("operand0", "unclamped", (1, 9, 0, 0), (2, 10, 2, 2))]
    assert ev.inputs[0][1, 2, 0, 1] == ev.outputs[0][0, 1, 2, 0, 1] == 42
    clamp_texts = [t for t in r.board.ax.texts if "clamped from" in t.get_text()]
    assert clamp_texts and clamp_texts[0].get_color() == diagram.CLAMP
    assert {("operand0", "copy"), ("operand1", "index_read")} <= {(g.key, g.role) for g in r.groups[0]}
    assert r.fig.axes[0].texts[0].get_text().startswith("gather: ")


@pytest.mark.parametrize("name", sorted(SIMPLE))
def test_simple_families(name, tmp_path):
    ev, index = simple(name)
    check_single(ev, index, tmp_path)


def test_pad_interior_and_negative(tmp_path):
    ev, _ = simple("pad")
    r, _ = check_single(ev, (2, 3), tmp_path)  # an original element: (2 - 1, 3 // 2 + ... )
    roles = {g.role for g in r.groups[0]}
    assert roles == {"copy"}
    r2, _ = check_single(ev, (2, 2), tmp_path)  # an interior hole reads the padding value
    assert {(g.key, g.role) for g in r2.groups[0]} == {("operand1", "pad_value")}
    # cell kinds by hand: low = [1, -1], high = [1, -1], interior = [0, 1] on a 5x4 operand.
    # rows: 0 low edge, 1..5 the operand rows, 6 high edge; columns: the dilated row has 7
    # positions (operand cols at 0, 2, 4, 6), cropped by one each side -> result cols 0..4 are
    # positions 1..5: hole, col 1, hole, col 2, hole. Operand cols 0 and 3 are cropped away.
    res = r2.board.views["result0"]
    want = np.array([[1] * 5] + [[2, 0, 2, 0, 2]] * 5 + [[3] * 5], np.int8)
    assert np.array_equal(res.kinds, want)
    assert np.array_equal(r2.board.views["operand0"].kinds, np.array([[4, 0, 0, 4]] * 5, np.int8))
    assert res.frame_axes == ((1, 1, 5), (-1, 2, 4))
    labels = [t.get_text() for t in r2.board.ax.texts if t.get_color() == style.ACCENT
              and t.get_text() in {"-1", "·", "0", "1", "2", "3", "4"}]
    assert labels == ["·", "1", "·", "2", "·", "-1", "0", "1", "2", "3", "4", "-1"]


@pytest.mark.parametrize("kind", ["padded", "lhs_dilated", "feature_groups"])
def test_convolution(kind, tmp_path):
    if kind == "padded":
        ev, index = conv(), (0, 1, 1, 0)
    elif kind == "lhs_dilated":
        ev, index = conv(pad="[[1, 1], [1, 1]]", lhs_dilate="[2, 2]", stride="[1, 1]", x_shape=(1, 3, 3, 1),
                         w_shape=(2, 2, 1, 1), out_shape=(1, 6, 6, 1)), (0, 2, 3, 0)
    else:
        ev, index = conv(pad="[[0, 0], [0, 0]]", stride="[1, 1]", x_shape=(1, 3, 3, 4), w_shape=(2, 2, 2, 2),
                         out_shape=(1, 2, 2, 2), groups=2), (0, 1, 0, 1)
    r, _ = check_single(ev, index, tmp_path)
    roles = {g.role for g in r.groups[0]}
    assert {"window", "kernel"} <= roles
    if kind == "lhs_dilated":
        assert "dilation_hole" in roles and style.ROLE_LABELS["dilation_hole"] in legend_labels(r)
    if kind == "feature_groups":  # group 1 reads input features 2 and 3 only
        (win,) = [g for g in r.groups[0] if g.role == "window"]
        assert set(win.indices[:, 3].tolist()) == {2, 3}


def test_reduce_window_base_dilation_holes(tmp_path):
    ev = reduce_window_dilated()
    r, img = check_single(ev, (2, 2), tmp_path)
    roles = {g.role for g in r.groups[0]}
    assert "dilation_hole" in roles and "window" in roles
    hole = [g for g in r.groups[0] if g.role == "dilation_hole"][0]
    assert r.view.board.views["operand0"].kinds[tuple(hole.indices[0])] == 2


def test_reduce_scatter_select_and_scatter(tmp_path):
    r, _ = check_single(reduce_rows(), (1,), tmp_path)
    assert len([g for g in r.groups[0] if g.key == "operand0"][0].indices) == 5
    r, _ = check_single(scatter_add(), (1, 2), tmp_path)  # two updates land on row 1
    assert any(g.role == "update" and len(g.indices) == 2 for g in r.groups[0])
    r, _ = check_single(select_and_scatter(), (1, 2), tmp_path)  # the max 9 of its window
    assert any(g.role == "selected" for g in r.groups[0])


def test_large_operand_is_elided_and_source_drawn(tmp_path):
    ev = gather_big()
    r, img = check_single(ev, (0, 0), tmp_path)
    tv = r.board.views["operand0"]
    assert len(tv.index) < 64 * 64
    assert r.board.pixel("operand0", (40, 37)) is not None
    assert r.board.pixel("operand0", (30, 30)) is None
    assert_color(img, r.board, "operand0", (40, 37), style.role_color("copy"), "kept source")


# --- several elements ----------------------------------------------------------------------------

def test_several_elements_each_in_its_colour_with_dot_products(tmp_path):
    ev = conv()
    chosen = [(0, (0, 0, 0, 0)), (0, (0, 1, 1, 0))]
    r, img = render(ev, chosen, tmp_path)
    cells = [expected_fills(r.view, res, idx) for res, idx in chosen]
    for k, (_, idx) in enumerate(chosen):
        color = style.ELEMENT_COLORS[k]
        assert_color(img, r.board, "result0", idx, color, f"element {k}")
        later = set().union(*[set(c) for c in cells[k + 1:]]) if k + 1 < len(cells) else set()
        own = [c for c in cells[k] if c not in later]
        assert own
        for key, cell in own:
            assert_color(img, r.board, key, cell, color, f"element {k} source")
    # untouched: padded-frame cell (5, 5) is read by neither window
    tv = r.board.views["operand0"]
    assert_color(img, r.board, "operand0", (0, 5, 5, 0), tv.base_faces[tv.slot[(0, 5, 5, 0)]], "untouched")
    # dot products from the fans: x[1..3, 1..3] window (values 5, 6, 7, 9...) with w = 0..8
    assert "5.0·0.0 + 6.0·1.0 + 7.0·2.0" in r.text and "= 438.0" in r.text
    assert "(+ 5 on padding/holes) = 73.0" in r.text.replace("\n  ", " ")
    assert legend_labels(r) == set()  # per-element colours, not roles
    inside(r)


def test_several_gather_elements_table_marks_clamp(tmp_path):
    ev = gather_spec()
    r, _ = render(ev, [(0, (0, 1, 2, 0, 1)), (0, (0, 0, 1, 1, 0))], tmp_path)
    rows = {ln.split()[0]: ln for ln in r.text.splitlines() if ln.strip()}
    assert "full_start_index" in rows and "←" in rows["full_start_index"]
    assert "operand_index" in rows and "(1, 2, 0, 1)" in rows["operand_index"]
    inside(r)


def test_default_element_and_bad_elements():
    ev, _ = simple("add")
    r = draw_diagram(ev)
    assert r.elements == [(0, (1, 1))]
    with pytest.raises(HloLabError):
        draw_diagram(ev, [(0, (5, 0))])
    with pytest.raises(HloLabError):
        draw_diagram(ev, [(3, (0, 0))])


def test_deterministic_png_and_svg(tmp_path):
    ev = gather_spec()
    for fmt in ("png", "svg"):
        a = style.save_figure(draw_diagram(ev, [(0, (0, 1, 2, 0, 1))]).fig, tmp_path / f"a.{fmt}")
        b = style.save_figure(draw_diagram(ev, [(0, (0, 1, 2, 0, 1))]).fig, tmp_path / f"b.{fmt}")
        assert a.read_bytes() == b.read_bytes()


def test_several_gather_elements_table_keeps_whole_indices_and_colours_dims():
    ev = gather_spec()
    chosen = [(0, (0, 1, 2, 1, 1)), (0, (1, 0, 0, 0, 1)), (0, (0, 0, 1, 1, 0))]
    view = OpView(ev)
    lines = diagram.multi_text(view, chosen, [diagram.explanation_of(ev, r, i) for r, i in chosen])
    head = "".join(t for t, _ in lines[0])
    for k, (_, idx) in enumerate(chosen):  # nothing cut: every header names its whole index
        assert f"({k + 1})[{', '.join(map(str, idx))}]" in head
    batch, offset = diagram._dim_color(DimRole("batch")), diagram._dim_color(DimRole("offset", k=0))
    colours = {c for t, c in lines[0] if t.strip().isdigit()}
    assert batch != offset and {batch, offset} <= colours  # index components coloured by dim role
    full = next(ln for ln in lines if ln and ln[0][0].startswith("full_start_index"))
    assert "(0, 2, 0, 0)←(0, 9, 0, 0)" in "".join(t for t, _ in full)


def test_padded_strided_convolution_model_pairs_window_and_kernel_by_hand():
    """conv(): x = arange(16) 4x4, w = arange(9) 3x3, padding 1, stride 2. result[0, 0, 0, 0]'s
    window is frame rows/cols 0..2; its real cells x[0:2, 0:2] = 0, 1, 4, 5 meet w[1:3, 1:3] =
    4, 5, 7, 8 (0·4 + 1·5 + 4·7 + 5·8 = 73); the other 5 positions are padding."""
    ev = conv()
    r = draw_diagram(ev, [(0, (0, 0, 0, 0))])
    m = r.models[0]
    from hlolab.render.model import Outline
    assert m.outlines == [Outline("operand0", "window", (0, 0, 0, 0), (1, 3, 3, 1)),
                          Outline("operand1", "fan", (1, 1, 0, 0), (3, 3, 1, 1))]  # weights meeting x
    assert [(p.number, p.a, p.b, float(p.a_value), float(p.b_value)) for p in m.pairs] == [
        (1, (0, 1, 1, 0), (1, 1, 0, 0), 0.0, 4.0), (2, (0, 1, 2, 0), (1, 2, 0, 0), 1.0, 5.0),
        (3, (0, 2, 1, 0), (2, 1, 0, 0), 4.0, 7.0), (4, (0, 2, 2, 0), (2, 2, 0, 0), 5.0, 8.0)]
    assert m.derivation.terms == ["0.0·4.0", "1.0·5.0", "4.0·7.0", "5.0·8.0"]
    assert (m.derivation.skipped, m.derivation.value) == (5, "73.0")
    assert float(ev.outputs[0][0, 0, 0, 0]) == 73.0
    # the whole derivation is drawn: every step, every product, the numbered sum
    assert "= 0.0·4.0 + 1.0·5.0 + 4.0·7.0 + 5.0·8.0 (+ 5 on padding/holes) = 73.0" in " ".join(r.text.split())
    marks = sorted(t.get_text() for t in r.board.ax.texts if t.get_text() in {"1", "2", "3", "4"}
                   and t.get_fontsize() < 6 and t.get_fontweight() == "bold")
    assert marks == ["1", "1", "2", "2", "3", "3", "4", "4"]


def test_long_derivations_are_not_cut():
    """A 5x5 kernel has 25 products: every one is written (the old panel stopped at 4)."""
    ev = conv(pad="[[2, 2], [2, 2]]", stride="[1, 1]", w_shape=(5, 5, 1, 1), out_shape=(1, 4, 4, 1))
    r = draw_diagram(ev, [(0, (0, 1, 1, 0))])
    d = r.models[0].derivation
    x, w = ev.inputs
    window = np.pad(x[0, :, :, 0], 2)[1:6, 1:6]
    assert len(d.terms) == int((np.pad(np.ones((4, 4)), 2)[1:6, 1:6] > 0).sum()) == 16
    assert d.skipped == 9 and float(d.value) == float((window * w[:, :, 0, 0]).sum())
    assert "… " not in r.text and r.text.count(" * rhs[") == 25


def select_and_scatter_padded():
    """3x3 windows, stride 2, padding 1 on the 4x4 operand of ``select_and_scatter``."""
    return select_and_scatter("window_dimensions = array<i64: 3, 3>, window_strides = array<i64: 2, 2>, "
                              "padding = dense<1> : tensor<2x2xi64>")


def test_select_and_scatter_with_padding_is_drawn_in_its_padded_frame():
    """By hand: the padded frame is 6x6 (operand at frame (1..4, 1..4)); the windows are frame
    rows/cols {0..2, 2..4}. Windows (0, 1) (x[0:2, 1:4] = 5 2 0 / 4 9 1) and (1, 1)
    (x[1:4, 1:4] = 4 9 1 / 0 1 2 / 1 3 8) both select x[1, 2] = 9, so result[1, 2] = 20 + 40."""
    ev = select_and_scatter_padded()
    assert float(ev.outputs[0][1, 2]) == 60.0
    r = draw_diagram(ev, [(0, (1, 2))])
    from hlolab.render.model import Outline
    m = r.models[0]
    assert m.outlines == [Outline("operand0", "window", (0, 2), (3, 5)),
                          Outline("operand0", "window", (2, 2), (5, 5))]
    assert m.marks == [("operand0", (2, 3), "winner")]
    op = r.board.views["operand0"]
    assert op.layout.full_shape == (6, 6) and "padded frame 6x6" in op.label
    kinds = op.kinds
    assert kinds[0].tolist() == [1] * 6 and kinds[1:5, 1:5].sum() == 0
    assert any(t.get_text() == "★" for t in r.board.ax.texts)


def test_max_pool_marks_its_winner_and_outlines_the_window():
    text = """func.func @main(%x: tensor<4x4xf32>) -> tensor<2x2xf32> {
  %init = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%x, %init) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %m = stablehlo.maximum %a, %b : tensor<f32>
      stablehlo.return %m : tensor<f32>
  }) {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>}
     : (tensor<4x4xf32>, tensor<f32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}"""
    x = np.array([[1, 5, 2, 0], [3, 4, 9, 1], [0, 0, 1, 2], [7, 1, 3, 8]], np.float32)
    ev = event_of(text, [x], "stablehlo.reduce_window")
    from hlolab.render.model import Outline
    for idx, winner, value in (((0, 1), (1, 2), 9.0), ((1, 0), (3, 0), 7.0)):
        r = draw_diagram(ev, [(0, idx)])
        lo = (2 * idx[0], 2 * idx[1])
        assert r.models[0].outlines == [Outline("operand0", "window", lo, (lo[0] + 2, lo[1] + 2))]
        assert r.models[0].marks == [("operand0", winner, "winner")]
        assert float(ev.outputs[0][idx]) == float(x[winner]) == value


@pytest.mark.parametrize("op,params", [
    ("pad", {"operand": "4", "edge_padding_low": "-2", "edge_padding_high": "-2", "interior_padding": "0"}),
    ("slice", {"operand": "3x4", "start_indices": "1,2", "limit_indices": "1,4", "strides": "1,1"}),
])
def test_an_empty_result_gives_a_picture_that_says_so(op, params, tmp_path):
    from hlolab.render import export

    target = export.op_target(op, "default", params)
    assert target.event.outputs[0].size == 0
    path, _ = export.write(target, "png", tmp_path / f"{op}.png")
    assert Image.open(path).size[0] > 100
    gif, frames = export.write(target, "gif", tmp_path / f"{op}.gif")
    assert frames == 1 and Image.open(gif).n_frames == 1
    r = draw_diagram(target.event)
    assert "has no elements: there is no element to explain" in r.text
    assert any(t.get_text() == "∅ 0 elements" for t in r.board.ax.texts)


def test_elements_no_update_or_window_reaches_say_so_in_the_title(tmp_path):
    """scatter_add: updates land on row 1 only, so result[0, 0] is the input's 1.0;
    select_and_scatter: the 2x2 windows select x[0, 1] = 5, x[1, 2] = 9, x[3, 0] = 7 and
    x[3, 3] = 8, so nothing selects x[0, 0] and result[0, 0] keeps init_value 0."""
    r = draw_diagram(scatter_add(), [(0, (0, 0))])
    title = r.fig.axes[0].texts[0].get_text()
    assert "(no update lands on result[0, 0]: its value is the input's, %x[0, 0] = 1.0)" in title
    assert r.board.views["operand0"].label == "%x : tensor<4x3xf32>, input (start value)"
    r = draw_diagram(select_and_scatter(), [(0, (0, 0))])
    assert "no window selects operand[0, 0]: result[0, 0] keeps init_value = 0.0" in r.fig.axes[0].texts[0].get_text()
    assert r.models[0].outlines == [] and r.models[0].marks == []
    png = style.save_figure(r.fig, tmp_path / "s.png")
    assert Image.open(png).size[0] > 100


def test_an_op_about_bits_draws_its_bit_view(tmp_path):
    """reduce_precision to e5m2 of 4/3 (0 01111111 0101…011): kept mantissa bits 01, the guard
    bit 0 -> round down, 1.25 = 0 01111111 0100…0."""
    from hlolab.render import export

    target = export.op_target("reduce_precision", "default",
                              {"exponent_bits": "5", "mantissa_bits": "2"}, [(0, 1)])
    r = draw_diagram(target.event, target.elements)
    assert float(target.event.outputs[0][0, 1]) == 1.25
    assert "guard bit 0, below half a unit of the last kept bit -> round down, keep 01" in r.text
    texts = [t.get_text() for t in r.board.ax.texts]
    assert "reduce_precision to e5m2, bit by bit" in texts
    png = style.save_figure(r.fig, tmp_path / "rp.png")
    assert Image.open(png).size[1] > 1000  # the panel is drawn under the tensors, not cut


def test_dynamic_slice_clamped_start_draws_the_slice_and_its_unclamped_ghost():
    """operand 4x5 (iota from 1), slice 2x3 at start (3, -1): clamped to (2, 0); result[1, 1] =
    operand[3, 1] = 17. The ghost sits where (3, -1) would have put the slice: rows 3..4,
    cols -1..1, left of the operand, so the operand is drawn one cell further right."""
    from hlolab.render import export

    t = export.op_target("dynamic_slice", "default", {"start_indices": "3,-1"}, [(1, 1)])
    r = draw_diagram(t.event, t.elements)
    from hlolab.render.model import Outline
    assert float(t.event.outputs[0][1, 1]) == 17.0
    assert r.models[0].outlines == [Outline("operand0", "slice", (2, 0), (4, 3)),
                                    Outline("operand0", "unclamped", (3, -1), (5, 2))]
    assert r.board.views["operand0"].x == 1.0
    from matplotlib.patches import Rectangle

    dashed = [p for p in r.board.ax.patches if isinstance(p, Rectangle) and p.get_linestyle() not in ("-", "solid")]
    assert len(dashed) == 1 and dashed[0].get_x() == 0.0 and dashed[0].get_width() == 3.0


def test_scatter_with_duplicate_indices_writes_every_running_value():
    """scatter_add: x = 1..12 (4x3), updates 10..60 (2x3), both rows land on row 1: result[1, 2]
    = 6 + 30 + 60, updated 6 -> 36 -> 96 in update order."""
    ev = scatter_add()
    r = draw_diagram(ev, [(0, (1, 2))])
    assert float(ev.outputs[0][1, 2]) == 96.0
    flat = " ".join(r.text.split())
    first = "results[0][result_index] = 36.0 (add(6.0, 30.0))"
    second = "results[0][result_index] = 96.0 (add(36.0, 60.0))"
    assert first in flat and second in flat and flat.index(first) < flat.index(second)
    assert r.text.rstrip().splitlines()[0] == "result[1, 2] = 96.0"


def test_dot_general_names_lhs_rhs_and_every_dim_and_pairs_the_products():
    """The gallery preset: the spec example's dims (batch 0, contracting lhs 2 / rhs 1) with
    rhs = [[[1, 2], [3, 4]], [[5, 6], [7, 8]]]: result[1, 0, 1] = lhs[1, 0, :] · rhs[1, :, 1]
    = 5·6 + 6·8 = 78."""
    from hlolab.render import export

    t = export.op_target("dot_general", "gallery")
    r = draw_diagram(t.event, t.elements)
    assert t.elements == [(0, (1, 0, 1))] and int(t.event.outputs[0][1, 0, 1]) == 78
    v = r.board.views
    assert v["operand0"].label.endswith(", dims 0: batch, 1: free, 2: contracting")
    assert v["operand1"].label.endswith(", dims 0: batch, 1: contracting, 2: free")
    assert v["result0"].label.endswith(", dims 0: batch, 1: lhs free, 2: rhs free")
    m = r.models[0]
    assert [(p.number, p.a, p.b, int(p.a_value), int(p.b_value)) for p in m.pairs] == [
        (1, (1, 0, 0), (1, 0, 1), 5, 6), (2, (1, 0, 1), (1, 1, 1), 6, 8)]
    assert m.derivation.text() == "5·6 + 6·8 = 78"
    texts = {t.get_text() for t in r.board.ax.texts}
    assert {"lhs element (contracted)", "rhs element (contracted)"} <= texts


def test_negative_padding_draws_the_cropped_ring_outside_the_frame():
    """reduce_window over a 5x5 iota (1..25) with padding [[-1, 1], [1, -1]]: the frame
    drops operand row 0 and column 4; both are drawn around it, hatched as cropped, with
    their values and their frame positions (row -1, column 5), and the window still sits
    at frame (1, 1)..(2, 2)."""
    text = """func.func @main(%x: tensor<5x5xf32>) -> tensor<4x4xf32> {
  %init = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%x, %init) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %m = stablehlo.maximum %a, %b : tensor<f32>
      stablehlo.return %m : tensor<f32>
  }) {window_dimensions = array<i64: 2, 2>, padding = dense<[[-1, 1], [1, -1]]> : tensor<2x2xi64>}
     : (tensor<5x5xf32>, tensor<f32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}"""
    x = np.arange(1, 26, dtype=np.float32).reshape(5, 5)
    ev = event_of(text, [x], "stablehlo.reduce_window")
    r = draw_diagram(ev, [(0, (1, 1))])
    view = r.board.views["operand0"]
    assert view.layout.origin == (-1, 0) and view.values.shape == (6, 6)
    kinds = view.kinds
    cropped = np.zeros((6, 6), bool)
    cropped[0, :] = cropped[:, 5] = True  # drawn row 0 is frame row -1; column 5 is past the frame
    assert np.array_equal(kinds == 4, cropped)
    assert view.values[0, 1:].tolist() == [1, 2, 3, 4, 5]  # operand row 0, shifted by the low column
    assert view.values[1:5, 5].tolist() == [10, 15, 20, 25]
    assert kinds[5, 1:5].tolist() == [3, 3, 3, 3] and kinds[1:6, 0].tolist() == [1] * 5
    from hlolab.render.model import Outline
    assert r.models[0].outlines == [Outline("operand0", "window", (1, 1), (3, 3))]
    assert r.models[0].marks == [("operand0", (2, 2), "winner")]  # 17, frame (2, 2)
    assert float(ev.outputs[0][1, 1]) == 17.0
    # frame indices label the rows from -1, the operand index column says which row each is
    texts = [t.get_text() for t in r.board.ax.texts]
    assert "-1" in texts and "5" in texts
    box = view.cell_box((2, 2))
    assert box is not None and box[1] - view.cell_box((-1, 2))[1] == 3.0
    assert any("cropped" in t for t in texts)  # the legend names the hatched cells


def test_cell_values_fit_their_cell():
    from hlolab.render.layout import format_cell
    assert format_cell(np.float32(-0.2618332)) == "-0.26"  # not -2.6e-1
    assert format_cell(np.float32(0.125)) == "0.125"
    assert format_cell(np.float32(2.8311157)) == "2.83"
    assert format_cell(np.float64(1234567.0)) == "1.2e6"
    assert format_cell(np.float32(-0.000123)) == "-1.2e-4"
    assert format_cell(np.int32(np.iinfo(np.int32).min)) == "i32 min"
    assert format_cell(np.uint8(255)) == "255" and format_cell(np.bool_(True)) == "T"
