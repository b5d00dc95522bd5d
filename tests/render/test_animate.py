# ruff: noqa: E501
"""Animations: frame plans in each op's own order (walk, scatter, select_and_scatter,
reduce), running values against numpy, GIF pixels and bytes, PNG frames."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("matplotlib")
from PIL import Image  # noqa: E402

from hlolab.errors import HloLabError  # noqa: E402
from hlolab.render import style  # noqa: E402
from hlolab.render.animate import animate, plan_frames  # noqa: E402
from tests.render.test_render import event_of  # noqa: E402

SCATTER = """
func.func @main(%x: tensor<5xi32>, %i: tensor<4x1xi32>, %u: tensor<4xi32>) -> tensor<5xi32> {
  %0 = "stablehlo.scatter"(%x, %i, %u) ({
    ^bb0(%a: tensor<i32>, %b: tensor<i32>):
      %s = stablehlo.add %a, %b : tensor<i32>
      stablehlo.return %s : tensor<i32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [],
      inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}
     : (tensor<5xi32>, tensor<4x1xi32>, tensor<4xi32>) -> tensor<5xi32>
  return %0 : tensor<5xi32>
}
"""

SAS = """
func.func @main(%x: tensor<4x2xi64>, %s: tensor<2x2xi64>, %init: tensor<i64>) -> tensor<4x2xi64> {
  %0 = "stablehlo.select_and_scatter"(%x, %s, %init) ({
    ^bb0(%a: tensor<i64>, %b: tensor<i64>):
      %c = stablehlo.compare GE, %a, %b : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
  }, {
    ^bb0(%a: tensor<i64>, %b: tensor<i64>):
      %c = stablehlo.add %a, %b : tensor<i64>
      stablehlo.return %c : tensor<i64>
  }) {window_dimensions = array<i64: 3, 1>, window_strides = array<i64: 2, 1>,
      padding = dense<[[0, 1], [0, 0]]> : tensor<2x2xi64>}
     : (tensor<4x2xi64>, tensor<2x2xi64>, tensor<i64>) -> tensor<4x2xi64>
  return %0 : tensor<4x2xi64>
}
"""

REDUCE = """
func.func @main(%x: tensor<2x3xi32>, %init: tensor<i32>) -> tensor<2xi32> {
  %0 = stablehlo.reduce(%x init: %init) applies stablehlo.add across dimensions = [1]
       : (tensor<2x3xi32>, tensor<i32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}
"""

CONV = """
func.func @main(%x: tensor<1x4x4x1xf32>, %w: tensor<3x3x1x1xf32>) -> tensor<1x4x4x1xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
       window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1]}
       {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
       : (tensor<1x4x4x1xf32>, tensor<3x3x1x1xf32>) -> tensor<1x4x4x1xf32>
  return %0 : tensor<1x4x4x1xf32>
}
"""


def scatter_event():
    x = np.array([1, 2, 3, 4, 5], dtype=np.int32)
    idx = np.array([[2], [0], [2], [7]], dtype=np.int32)  # duplicate 2; 7 is out of bounds
    upd = np.array([10, 20, 30, 40], dtype=np.int32)
    return event_of(SCATTER, [x, idx, upd], "stablehlo.scatter"), x, idx, upd


def sas_event():
    x = np.array([[1, 5], [2, 5], [3, 6], [4, 4]], dtype=np.int64)
    src = np.array([[5, 6], [7, 8]], dtype=np.int64)
    return event_of(SAS, [x, src, np.array(0, dtype=np.int64)], "stablehlo.select_and_scatter"), x, src


def reduce_event():
    x = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int32)
    return event_of(REDUCE, [x, np.array(10, dtype=np.int32)], "stablehlo.reduce"), x


def conv_event():
    x = np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1)
    w = np.ones((3, 3, 1, 1), dtype=np.float32)
    return event_of(CONV, [x, w], "stablehlo.convolution")


def numpy_conv(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    p = np.pad(x[0, :, :, 0], 1)
    k = w[:, :, 0, 0]
    return np.array([[(p[i:i + 3, j:j + 3] * k).sum() for j in range(4)] for i in range(4)])


# --- the plain walk ---------------------------------------------------------------------

def test_walk_has_one_frame_per_result_element_with_the_value_in_the_caption():
    ev = conv_event()
    plans = plan_frames(ev)
    assert len(plans) == 16
    want = numpy_conv(ev.inputs[0], ev.inputs[1])
    for k, plan in enumerate(plans):
        i, j = divmod(k, 4)
        assert plan.caption.startswith(f"%0[0, {i}, {j}, 0] = {float(want[i, j])}"), plan.caption
        res = [g for g in plan.paint if g.role == "result"]
        assert len(res) == 1 and res[0].indices.tolist() == [[0, i, j, 0]]
        # the window is drawn in the padded 6x6 frame: 3x3 cells, window + padding
        framed = np.concatenate([g.indices for g in plan.paint if g.key == "operand0"])
        assert sorted(map(tuple, framed[:, 1:3].tolist())) == [(i + a, j + b) for a in range(3) for b in range(3)]
        assert {g.role for g in plan.paint if g.key == "operand1"} == {"kernel"}
    corner = {g.role for g in plans[0].paint if g.key == "operand0"}
    assert corner == {"window", "pad_value"}
    assert {g.role for g in plans[5].paint if g.key == "operand0"} == {"window"}


def test_walk_cap_and_chosen_subset():
    ev = conv_event()
    plans = plan_frames(ev, max_frames=5)
    assert len(plans) == 5 and all("first 5 of 16" in p.caption for p in plans)
    chosen = plan_frames(ev, [(0, (0, 3, 3, 0)), (0, (0, 1, 2, 0))])
    assert [p.caption.split(" =")[0] for p in chosen] == ["%0[0, 3, 3, 0]", "%0[0, 1, 2, 0]"]


# --- scatter: updates in application order with running values --------------------------

def numpy_scatter_states(x, idx, upd):
    state, out = x.copy(), []
    for i, u in zip(idx[:, 0], upd, strict=True):
        if 0 <= i < len(x):
            state[i] += u
            out.append((int(i), int(state[i]), state.copy()))
    return out


def test_scatter_frames_follow_application_order_with_running_sums():
    ev, x, idx, upd = scatter_event()
    plans = plan_frames(ev)
    want = numpy_scatter_states(x, idx, upd)
    assert len(plans) == len(want) == 3  # update 3 (index 7) is out of bounds: no frame
    for k, (plan, (target, value, state)) in enumerate(zip(plans, want, strict=True)):
        assert plan.caption.endswith(f"= {value}"), plan.caption
        assert f"%0[{target}]" in plan.caption
        np.testing.assert_array_equal(plan.result_values["result0"], state)
        roles = {(g.key, g.role): g.indices.tolist() for g in plan.paint}
        assert roles[("operand2", "update")] == [[k]]
        assert roles[("operand1", "index_read")] == [[k, 0]]
        assert roles[("result0", "result")] == [[target]]
    # the duplicate index 2: 3 -> 13 -> 43
    assert "add(3, 10) = 13" in plans[0].caption and "add(13, 30) = 43" in plans[2].caption
    np.testing.assert_array_equal(plans[-1].result_values["result0"], ev.outputs[0])


def test_scatter_frames_for_chosen_elements_only():
    ev, *_ = scatter_event()
    plans = plan_frames(ev, [(0, (2,))])
    assert len(plans) == 2
    assert [p.caption.rsplit("= ", 1)[1] for p in plans] == ["13", "43"]
    assert len(plan_frames(ev, max_frames=2)) == 2


# --- select_and_scatter: select then scatter per window ---------------------------------

def test_select_and_scatter_has_a_select_and_a_scatter_frame_per_window():
    ev, x, src = sas_event()
    plans = plan_frames(ev)
    assert len(plans) == 2 * src.size
    # windows (3x1, stride 2, one padding row below): the max of each (GE keeps the first)
    picks = [(2, 0), (2, 1), (3, 0), (2, 1)]
    state = np.zeros_like(x)
    for k, q in enumerate(picks):
        select, scatter = plans[2 * k], plans[2 * k + 1]
        roles = {(g.key, g.role): g.indices.tolist() for g in select.paint}
        assert roles[("operand0", "selected")] == [list(q)]
        assert "result0" not in {g.key for g in select.paint}
        s = src.reshape(-1)[k]
        state[q] += s
        roles = {(g.key, g.role): g.indices.tolist() for g in scatter.paint}
        assert roles[("operand1", "update")] == [list(divmod(k, 2))]
        assert roles[("result0", "result")] == [list(q)]
        assert scatter.caption.endswith(f"= {state[q]}"), scatter.caption
        np.testing.assert_array_equal(scatter.result_values["result0"], state)
    assert {tuple(r) for g in plans[0].paint if g.role == "window" for r in g.indices.tolist()} == {(0, 0), (1, 0)}
    np.testing.assert_array_equal(state, ev.outputs[0])


# --- reduce: the schedule of one element ------------------------------------------------

def test_reduce_frames_are_init_then_each_element_with_the_running_value():
    ev, x = reduce_event()
    plans = plan_frames(ev, [(0, (1,))])
    assert len(plans) == 1 + x.shape[1]
    running = np.cumsum(np.concatenate([[10], x[1]]))
    for k, (plan, value) in enumerate(zip(plans, running, strict=True)):
        assert plan.caption.endswith(f"{value}"), plan.caption
        assert plan.result_values["result0"][1] == value
        roles = {(g.key, g.role): g.indices.tolist() for g in plan.paint}
        if k == 0:
            assert ("operand1", "init") in roles and ("operand0", "window") not in roles
        else:
            assert roles[("operand0", "window")] == [[1, k - 1]]
    assert running[-1] == ev.outputs[0][1]
    assert len(plan_frames(ev)) == 2 * (1 + x.shape[1])
    assert len(plan_frames(ev, max_frames=5)) == 5


# --- rendering: GIF pixels, determinism, PNG frames, MP4 ---------------------------------

def test_gif_frames_paint_roles_and_leave_other_cells_alone(tmp_path):
    ev, *_ = scatter_event()
    anim = animate(ev)
    gif = anim.save_gif(tmp_path / "s.gif")
    im = Image.open(gif)
    assert im.n_frames == anim.n_frames == 3
    board = anim.board
    off = int(board.cell_inches * board.fig.dpi * 0.3)

    def at(frame, key, index):
        px, py = board.pixel(key, index)
        return frame.getpixel((px - off, py - off))

    rgb = {r: style.hex_to_rgb(style.role_color(r)) for r in ("update", "index_read", "result")}
    base = style.hex_to_rgb(style.CELL_FILL)
    for k, target in enumerate([2, 0, 2]):
        im.seek(k)
        frame = im.convert("RGB")
        assert at(frame, "operand2", (k,)) == rgb["update"]
        assert at(frame, "operand1", (k, 0)) == rgb["index_read"]
        assert at(frame, "result0", (target,)) == rgb["result"]
        assert at(frame, "operand2", (3,)) == base  # the dropped update is never painted
        assert at(frame, "result0", (4,)) == base
        assert at(frame, "operand0", (target,)) == base


def test_gif_bytes_are_identical_and_png_frames_match(tmp_path):
    ev, *_ = sas_event()
    a = animate(ev).save_gif(tmp_path / "a.gif")
    b = animate(ev, progress=True).save_gif(tmp_path / "b.gif")
    assert a.read_bytes() == b.read_bytes()
    anim = animate(ev)
    frames = anim.save_frames(tmp_path / "frames")
    assert len(frames) == anim.n_frames == 8
    assert [p.name for p in frames[:2]] == ["frame_000.png", "frame_001.png"]
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in frames)


def test_mp4_without_ffmpeg_is_a_clean_error(tmp_path, monkeypatch):
    from matplotlib import animation

    monkeypatch.setattr(animation.writers, "is_available", lambda name: False)
    ev, *_ = reduce_event()
    with pytest.raises(HloLabError, match="ffmpeg"):
        animate(ev, max_frames=2).save_mp4(tmp_path / "r.mp4")
    assert not (tmp_path / "r.mp4").exists()
