# ruff: noqa: E501
"""Animations: frame plans (captions with the arithmetic, progressive fill, sampling over
the whole range, clamp and dropped-update frames) worked out by hand or with numpy, then
GIF / PNG / MP4 writing: pixels, frame counts, sizes, palette and bytes."""

from __future__ import annotations

import sys

import numpy as np
import pytest

pytest.importorskip("matplotlib")
from PIL import Image  # noqa: E402

from hlolab.errors import HloLabError  # noqa: E402
from hlolab.messages import text  # noqa: E402
from hlolab.render import style  # noqa: E402
from hlolab.render.animate import _quantizer, animate, gif_palette, plan_frames, spread  # noqa: E402
from hlolab.render.export import op_target  # noqa: E402
from tests.render.test_render import event_of  # noqa: E402

SCATTER = """
func.func @main(%x: tensor<5xi32>, %i: tensor<{n}x1xi32>, %u: tensor<{n}xi32>) -> tensor<5xi32> {{
  %0 = "stablehlo.scatter"(%x, %i, %u) ({{
    ^bb0(%a: tensor<i32>, %b: tensor<i32>):
      %s = stablehlo.add %a, %b : tensor<i32>
      stablehlo.return %s : tensor<i32>
  }}) {{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [],
      inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}}
     : (tensor<5xi32>, tensor<{n}x1xi32>, tensor<{n}xi32>) -> tensor<5xi32>
  return %0 : tensor<5xi32>
}}
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

EMPTY = """
func.func @main(%x: tensor<3x4xf32>) -> tensor<0x4xf32> {
  %0 = stablehlo.slice %x [1:1, 0:4] : (tensor<3x4xf32>) -> tensor<0x4xf32>
  return %0 : tensor<0x4xf32>
}
"""


def scatter_event(idx=(2, 0, 2, 7), upd=(10, 20, 30, 40)):
    """x = [1 2 3 4 5] scattered with add: index 2 twice, 7 out of bounds (dropped)."""
    x = np.array([1, 2, 3, 4, 5], dtype=np.int32)
    i = np.asarray(idx, dtype=np.int32).reshape(-1, 1)
    u = np.asarray(upd, dtype=np.int32)
    return event_of(SCATTER.format(n=len(u)), [x, i, u], "stablehlo.scatter")


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


def cells(plan, key=None, role=None):
    """{(key, role): sorted index rows} of what a frame paints."""
    out = {}
    for g in plan.paint:
        if (key is None or g.key == key) and (role is None or g.role == role):
            out.setdefault((g.key, g.role), []).extend(map(tuple, g.indices.tolist()))
    return {k: sorted(v) for k, v in out.items()}


# --- spreading frames over a range --------------------------------------------------------

def test_spread_takes_the_first_the_last_and_evenly_between_never_twice():
    assert spread(5, 9).tolist() == [0, 1, 2, 3, 4]
    assert spread(16, 5).tolist() == [0, 4, 8, 11, 15]  # steps of 15/4 = 3.75, rounded
    assert spread(10, 1).tolist() == [9]
    for n in range(1, 60):
        for k in range(1, n + 1):
            s = spread(n, k)
            assert len(s) == k and s[0] == (0 if k > 1 else n - 1) and s[-1] == n - 1
            assert np.all(np.diff(s) >= 1)  # strictly increasing: no element twice


# --- the plain walk -----------------------------------------------------------------------

def test_walk_frames_carry_the_windows_arithmetic_and_fill_the_result_in():
    ev = conv_event()
    plans = plan_frames(ev)
    assert len(plans) == 16
    x, w = ev.inputs
    want = numpy_conv(x, w)
    padded = np.pad(x[0, :, :, 0], 1)
    for k, plan in enumerate(plans):
        i, j = divmod(k, 4)
        lines = plan.caption.split("\n")
        # the dot product written out from the window: its real inputs times the kernel's 1s
        inside = _inside(i, j)
        terms = " + ".join(f"{float(v)}·1.0" for v in padded[i:i + 3, j:j + 3][inside])
        skipped = f" (+ {9 - int(inside.sum())} on padding/holes)" if not inside.all() else ""
        flat = " ".join(line.strip() for line in lines)
        assert flat.startswith(f"%0[0, {i}, {j}, 0] = {terms}{skipped} = {float(want[i, j])} "), flat
        assert "(from: window element" in flat
        # the window start, substituted with this element's numbers
        assert "  lhs_window_start = output_spatial_index * window_strides" in lines
        assert f"      = ({i}, {j}) * [1, 1] = ({i}, {j})" in lines
        assert plan.kind == "element" and plan.element == (0, (0, i, j, 0))
        # progressive fill: elements 0..k show their value, the rest are blank
        blank = plan.pending["result0"].mask((1, 4, 4, 1)).reshape(-1)
        assert blank.tolist() == [False] * (k + 1) + [True] * (15 - k)
        res = cells(plan, role="result")
        assert res == {("result0", "result"): [(0, i, j, 0)]}
        # the window is drawn in the padded 6x6 frame: 3x3 cells, window + padding
        framed = [r for (key, _), rows in cells(plan, "operand0").items() for r in rows]
        assert sorted((a, b) for _, a, b, _ in framed) == [(i + a, j + b) for a in range(3) for b in range(3)]
        assert set(cells(plan, "operand1")) == {("operand1", "kernel")}
    assert {r for _, r in cells(plans[0], "operand0")} == {"window", "pad_value"}
    assert {r for _, r in cells(plans[5], "operand0")} == {"window"}


def _inside(i, j):
    """Which positions of the 3x3 window at (i, j) of the padded 6x6 frame are real inputs."""
    r, c = np.arange(i, i + 3)[:, None], np.arange(j, j + 3)[None, :]
    return (r >= 1) & (r <= 4) & (c >= 1) & (c <= 4)


def test_sampling_keeps_the_last_window_and_says_which_frame_and_element():
    ev = conv_event()
    plans = plan_frames(ev, max_frames=5)
    assert [p.element[1] for p in plans] == [(0, 0, 0, 0), (0, 1, 0, 0), (0, 2, 0, 0), (0, 2, 3, 0), (0, 3, 3, 0)]
    for k, (p, element) in enumerate(zip(plans, [1, 5, 9, 12, 16], strict=True)):
        assert p.caption.split("\n")[-1] == f"frame {k + 1} of 5 shown, element {element} of 16"
    # everything before the shown element counts as computed, sampled or not
    assert plans[3].pending["result0"].mask((1, 4, 4, 1)).reshape(-1).tolist() == [False] * 12 + [True] * 4
    assert not plans[-1].pending["result0"].mask((1, 4, 4, 1)).any()
    chosen = plan_frames(ev, [(0, (0, 3, 3, 0)), (0, (0, 1, 2, 0))])
    assert [p.caption.split(" =")[0] for p in chosen] == ["%0[0, 3, 3, 0]", "%0[0, 1, 2, 0]"]
    # chosen elements: those not shown yet are blank, the others keep their value
    blank = chosen[0].pending["result0"].mask((1, 4, 4, 1))
    assert np.argwhere(blank).tolist() == [[0, 1, 2, 0]]


def test_chosen_elements_of_two_results_fill_in_per_result_and_bad_ones_are_errors():
    ev = op_target("chlo.top_k", "default").event  # top 2 of each row of [[1..5], [6..10], [11..15]]
    plans = plan_frames(ev, [(1, (0, 1)), (0, (0, 0)), (1, (0, 0))])
    assert [p.caption.split("   (from")[0] for p in plans] == [
        "%result#1[0, 1] = ranking[1] = 3", "%result#0[0, 0] = %operand[0, 4] = 5.0", "%result#1[0, 0] = ranking[0] = 4"]
    blank = [(np.argwhere(p.pending["result0"].mask((3, 2))).tolist(), np.argwhere(p.pending["result1"].mask((3, 2))).tolist())
             for p in plans]
    assert blank == [([[0, 0]], [[0, 0]]), ([], [[0, 0]]), ([], [])]
    with pytest.raises(HloLabError, match=r"index \[3, 0\] is outside result #0 of shape \[3, 2\]"):
        plan_frames(ev, [(0, (3, 0))])


def test_sampled_gallery_pad_and_gather_show_the_high_edge_row_and_the_last_batch():
    pad = plan_frames(op_target("pad", "spec-example").event, max_frames=36)  # 5x9 result
    assert len(pad) == 36
    assert pad[-1].element == (0, (4, 8))
    assert {p.element[1][0] for p in pad} == {0, 1, 2, 3, 4}  # every row, the high-edge padding one too
    gather = plan_frames(op_target("gather", "spec-example").event, max_frames=36)  # 2x2x3x2x2 result
    assert len(gather) == 36
    assert gather[-1].element == (0, (1, 1, 2, 1, 1))
    batches = {p.element[1][:3] for p in gather if p.kind == "element"}
    assert len(batches) == 12  # every batch has a frame


# --- clamped starts --------------------------------------------------------------------

def test_a_clamped_dynamic_slice_start_gets_a_frame_of_its_own():
    ev = op_target("dynamic_slice", "spec-example").event  # start (-1, 3), 2x2 slice of a 4x4 operand
    plans = plan_frames(ev)
    assert [p.kind for p in plans] == ["clamped", "element", "element", "element", "element"]
    clamp = plans[0]
    assert " ".join(clamp.caption.split()).startswith(
        "clamped start: adjusted_start_indices = (-1, 3) is moved to (0, 2), so that the slice fits inside the "
        "operand (4 result element(s) use this start)")
    assert "      = clamp(0, [-1, 3], [4, 4] - [2, 2]) = (0, 2)   clamped from (-1, 3)" in clamp.caption.split("\n")
    # the slice the clamped start reads: rows 0..1, columns 2..3; the start indices; all of the result
    assert cells(clamp) == {("operand0", "copy"): [(0, 2), (0, 3), (1, 2), (1, 3)],
                            ("operand1", "index_read"): [()], ("operand2", "index_read"): [()],
                            ("result0", "result"): [(0, 0), (0, 1), (1, 0), (1, 1)]}
    assert clamp.pending["result0"].mask((2, 2)).all()  # before the slice's first element
    assert plans[1].caption.startswith("%result[0, 0] = %operand[0, 2] = 1")
    want = np.asarray(ev.inputs[0])[0:2, 2:4]
    for p, (i, j) in zip(plans[1:], [(0, 0), (0, 1), (1, 0), (1, 1)], strict=True):
        assert p.caption.startswith(f"%result[{i}, {j}] = %operand[{i}, {j + 2}] = {want[i, j]}")


def test_a_clamped_dynamic_update_slice_start_moves_where_the_update_lands():
    ev = op_target("dynamic_update_slice", "spec-example").event  # 2x2 update at (-1, 3) of a 4x4 operand
    plans = plan_frames(ev)
    kinds = [p.kind for p in plans]
    assert kinds.count("clamped") == 1 and len(plans) == 17
    k = kinds.index("clamped")
    # elements (0, 0) and (0, 1) copy the operand and read no start: the clamp frame comes before
    # (0, 2), the first element the (clamped) update lands on
    assert [p.element for p in plans[:k + 2]] == [(0, (0, 0)), (0, (0, 1)), (0, (0, 2)), (0, (0, 2))]
    assert cells(plans[k]) == {("operand1", "copy"): [(0, 0), (0, 1), (1, 0), (1, 1)],
                               ("operand2", "index_read"): [()], ("operand3", "index_read"): [()],
                               ("result0", "result"): [(0, 2), (0, 3), (1, 2), (1, 3)]}


def test_a_clamped_gather_start_gets_one_frame_before_its_batch():
    ev = op_target("gather", "spec-example").event
    plans = plan_frames(ev)
    kinds = [p.kind for p in plans]
    assert kinds.count("clamped") == 1 and len(plans) == 49  # 48 elements + the clamp
    k = kinds.index("clamped")
    # start_indices[0, 1, 2, :] = (0, 9): clamp(9, 0, 3 - 1) = 2 moves the slice of batch (0, 1, 2)
    assert plans[k + 1].element == (0, (0, 1, 2, 0, 0)) and plans[k - 1].element == (0, (0, 1, 1, 1, 1))
    assert "full_start_index = (0, 9, 0, 0) is moved to (0, 2, 0, 0)" in plans[k].caption
    c = cells(plans[k])
    assert c[("operand1", "index_read")] == [(0, 1, 2, 0), (0, 1, 2, 1)]
    # full_batching_index (1, 0, 0, 0) + the clamped start: operand[1, 2, 0:2, 0:2]
    assert c[("operand0", "copy")] == [(1, 2, a, b) for a in range(2) for b in range(2)]
    assert c[("result0", "result")] == [(0, 1, 2, a, b) for a in range(2) for b in range(2)]
    op = np.asarray(ev.inputs[0])
    assert plans[k + 1].caption.startswith(f"%result[0, 1, 2, 0, 0] = %operand[1, 2, 0, 0] = {op[1, 2, 0, 0]}")
    # few frames: the clamp frame counts against max_frames (12 spread elements would bring
    # the clamped batch and 13 frames, so 11 are spread, and they miss that batch)
    few = plan_frames(ev, max_frames=12)
    assert len(few) == 11 and "clamped" not in [p.kind for p in few]
    assert few[-1].element == (0, (1, 1, 2, 1, 1))
    more = plan_frames(ev, max_frames=13)
    assert len(more) == 13 and [p.kind for p in more].count("clamped") == 1


# --- scatter: updates in application order, running values, drops ----------------------

def test_scatter_frames_run_the_duplicate_index_by_hand_and_show_the_dropped_update():
    ev = scatter_event()  # x = [1 2 3 4 5]; updates 10 -> [2], 20 -> [0], 30 -> [2], 40 -> [7]
    plans = plan_frames(ev)
    assert [p.caption for p in plans] == [
        "update 1/4: %u[0] = 10 -> %0[2] = add(3, 10) = 13",
        "update 2/4: %u[1] = 20 -> %0[0] = add(1, 20) = 21",
        "update 3/4: %u[2] = 30 -> %0[2] = add(13, 30) = 43",
        "update 4/4: %u[3] = 40 -> %0[7] is out of bounds for shape [5]: dropped (the spec skips this update element)"]
    states = [[1, 2, 13, 4, 5], [21, 2, 13, 4, 5], [21, 2, 43, 4, 5], [21, 2, 43, 4, 5]]
    for k, (plan, state) in enumerate(zip(plans, states, strict=True)):
        assert plan.result_values["result0"].tolist() == state
        assert plan.pending == {}  # scatter starts from its inputs: nothing is blank
        c = cells(plan)
        assert c[("operand2", "update")] == [(k,)] and c[("operand1", "index_read")] == [(k, 0)]
    assert [p.kind for p in plans] == ["step", "step", "step", "dropped"]
    assert cells(plans[0], role="result") == {("result0", "result"): [(2,)]}
    assert cells(plans[3], role="result") == {}  # a dropped update writes nothing
    np.testing.assert_array_equal(plans[-1].result_values["result0"], ev.outputs[0])
    # chosen elements: only the updates landing there (a dropped one lands nowhere)
    assert [p.caption.rsplit("= ", 1)[1] for p in plan_frames(ev, [(0, (2,))])] == ["13", "43"]


def test_sampled_scatter_keeps_the_dropped_update_and_the_last_one():
    n = 30
    idx = [k % 5 for k in range(n)]
    idx[13] = 99  # out of bounds
    ev = scatter_event(idx, list(range(1, n + 1)))
    plans = plan_frames(ev, max_frames=8)
    assert len(plans) == 8
    assert [p.kind for p in plans].count("dropped") == 1
    dropped = next(p for p in plans if p.kind == "dropped")
    assert dropped.caption.startswith("update 14/30: %u[13] = 14 -> %0[99] is out of bounds")
    last = plans[-1]
    assert last.caption.split("\n")[0] == "update 30/30: %u[29] = 30 -> %0[4] = add(80, 30) = 110"
    assert last.caption.split("\n")[-1] == "frame 8 of 8 shown, step 30 of 30"
    # the updates of frames not shown count: x[4] = 5, then 5, 10, 15, 20, 25 (k = 4, 9, ..., 24)
    assert 5 + 5 + 10 + 15 + 20 + 25 == 80
    assert last.result_values["result0"].tolist() == ev.outputs[0].tolist()


# --- select_and_scatter, reduce: the op's own order --------------------------------------

def test_select_and_scatter_has_a_select_and_a_scatter_frame_per_window():
    ev, x, src = sas_event()
    plans = plan_frames(ev)
    assert len(plans) == 2 * src.size
    picks = [(2, 0), (2, 1), (3, 0), (2, 1)]  # 3x1 windows, stride 2, one padding row below (GE: first max)
    state = np.zeros_like(x)
    for k, q in enumerate(picks):
        select, scatter = plans[2 * k], plans[2 * k + 1]
        assert cells(select, role="selected")[("operand0", "selected")] == [q]
        assert "result0" not in {g.key for g in select.paint}
        state[q] += src.reshape(-1)[k]
        assert cells(scatter, role="update")[("operand1", "update")] == [divmod(k, 2)]
        assert cells(scatter, role="result")[("result0", "result")] == [q]
        assert scatter.caption.endswith(f"= {state[q]}"), scatter.caption
        np.testing.assert_array_equal(scatter.result_values["result0"], state)
    np.testing.assert_array_equal(state, ev.outputs[0])
    # sampled: a window's select and scatter frames stay together; the last window is shown
    two = plan_frames(ev, max_frames=3)
    assert len(two) == 2 and [p.caption.split("\n")[-1] for p in two] == [
        "frame 1 of 2 shown, step 7 of 8", "frame 2 of 2 shown, step 8 of 8"]
    assert cells(two[0], role="selected")[("operand0", "selected")] == [(2, 1)]
    np.testing.assert_array_equal(two[1].result_values["result0"], ev.outputs[0])


def test_reduce_frames_run_the_schedule_and_fill_results_in_when_reached():
    ev, x = reduce_event()
    plans = plan_frames(ev)
    assert len(plans) == 2 * (1 + x.shape[1])
    running = [np.cumsum(np.concatenate([[10], row])) for row in x]  # init 10, then row-major
    for k, plan in enumerate(plans):
        r, step = divmod(k, 4)
        assert plan.caption.endswith(f"{running[r][step]}"), plan.caption
        assert plan.result_values["result0"][r] == running[r][step]
        # element 1 is blank until its first (init) frame
        blank = plan.pending.get("result0")
        assert (blank is not None and blank.mask((2,)).tolist() == [False, True]) == (r == 0)
    one = plan_frames(ev, [(0, (1,))])
    assert [p.result_values["result0"][1] for p in one] == running[1].tolist()
    assert cells(one[0]) == {("operand1", "init"): [()], ("result0", "result"): [(1,)]}
    assert len(plan_frames(ev, max_frames=5)) == 5


def test_an_op_with_too_many_steps_animates_result_elements_spread_over_it(monkeypatch):
    import hlolab.render.animate as animate_module

    ev, x = reduce_event()  # 8 steps: init + 3 per element
    monkeypatch.setattr(animate_module, "STEP_BUDGET", 6)
    plans = plan_frames(ev, max_frames=1)  # the steps of the last element, its last step shown
    assert len(plans) == 1 and plans[0].result_values["result0"][1] == 10 + 4 + 5 + 6
    lines = plans[0].caption.split("\n")
    assert "(the steps of 1 of 2 result elements, spread over the result" in lines[1]
    assert lines[-1] == "frame 1 of 1 shown, step 4 of 4"
    monkeypatch.setattr(animate_module, "STEP_BUDGET", 3)
    cut = plan_frames(ev, [(0, (1,))])
    assert len(cut) == 3 and "(the first 3 steps: the op lists more than hlolab animates)" in cut[0].caption


# --- empty and degenerate -----------------------------------------------------------------

def test_an_empty_result_gives_one_frame_that_says_so_and_exports(tmp_path):
    ev = event_of(EMPTY, [np.zeros((3, 4), np.float32)], "stablehlo.slice")
    plans = plan_frames(ev)
    assert len(plans) == 1 and plans[0].kind == "empty"
    assert plans[0].caption == "empty result: 0 elements (shape 0x4)"
    anim = animate(ev)
    gif = anim.save_gif(tmp_path / "e.gif")
    im = Image.open(gif)
    assert im.n_frames == 1 and im.size == anim.size
    with pytest.raises(HloLabError, match="max_frames"):
        plan_frames(ev, max_frames=0)


# --- writing: GIF pixels, palette, bytes; PNG frames; MP4 ----------------------------------

def _cell(frame, board, key, index):
    """(the colour near the cell's corner, how many dark pixels its middle has: its value)."""
    px, py = board.pixel(key, index)
    off = int(board.cell_inches * board.fig.dpi * 0.3)
    corner = frame.getpixel((px - off, py - off))
    mid = np.asarray(frame)[py - 6:py + 6, px - 12:px + 12].astype(int)
    return corner, int((mid.sum(axis=-1) < 300).sum())


def test_gif_frames_paint_roles_and_fill_results_in(tmp_path):
    ev = scatter_event()
    anim = animate(ev)
    gif = anim.save_gif(tmp_path / "s.gif")
    im = Image.open(gif)
    assert im.n_frames == anim.n_frames == 4 and im.size == anim.size
    board = anim.board
    rgb = {r: style.hex_to_rgb(style.role_color(r)) for r in ("update", "index_read", "result")}
    base = style.hex_to_rgb(style.CELL_FILL)
    for k, target in enumerate([2, 0, 2, None]):
        im.seek(k)
        frame = im.convert("RGB")
        assert _cell(frame, board, "operand2", (k,))[0] == rgb["update"]
        assert _cell(frame, board, "operand1", (k, 0))[0] == rgb["index_read"]
        if target is not None:
            assert _cell(frame, board, "result0", (target,))[0] == rgb["result"]
            assert _cell(frame, board, "operand0", (target,))[0] == base
        assert _cell(frame, board, "result0", (4,))[0] == base
        if k < 3:
            assert _cell(frame, board, "operand2", (3,))[0] == base  # the dropped update, before its frame


def test_walk_gif_leaves_results_not_yet_computed_blank(tmp_path):
    ev = conv_event()
    anim = animate(ev)
    im = Image.open(anim.save_gif(tmp_path / "c.gif"))
    board = anim.board
    im.seek(0)
    first = im.convert("RGB")
    im.seek(15)
    last = im.convert("RGB")
    white = style.hex_to_rgb(style.CELL_FILL)
    assert _cell(first, board, "result0", (0, 3, 3, 0)) == (white, 0)  # blank: no value drawn yet
    corner, ink = _cell(last, board, "result0", (0, 2, 2, 0))
    assert corner == white and ink > 10  # filled in by the last frame
    assert _cell(first, board, "operand0", (0, 3, 3, 0))[1] > 5  # operand values always show


def test_gif_uses_one_palette_and_style_colours_map_exactly(tmp_path):
    pal = gif_palette()
    assert pal.shape[1] == 3 and len(pal) <= 256 and len({tuple(c) for c in pal}) == len(pal)
    colors = [style.hex_to_rgb(c) for c in [*style.ROLE_COLORS.values(), style.CELL_FILL, style.CELL_EDGE,
                                             style.PADDING_FILL, style.MUTED_TEXT, "#000000", "#222222"]]
    rgba = np.asarray([[r | g << 8 | b << 16 | 255 << 24 for r, g, b in colors]], dtype="<u4")
    idx = _quantizer()(rgba)[0]
    assert [tuple(int(v) for v in pal[i]) for i in idx] == colors
    ev, *_ = sas_event()
    anim = animate(ev)
    im = Image.open(anim.save_gif(tmp_path / "a.gif"))
    board = anim.palette  # the fixed colours first, then the board's own
    assert board[:len(pal)].tolist() == pal.tolist() and len(board) <= 255
    assert im.getpalette()[:3 * len(board)] == board.reshape(-1).tolist()
    # decoded (unchanged pixels are transparent over the frame before), every frame is exactly
    # its palette indices: nothing is lost between the frames drawn and the file
    fresh = animate(ev)
    for k in range(im.n_frames):
        im.seek(k)
        want = board[fresh.gif_frame(k)]
        np.testing.assert_array_equal(np.asarray(im.convert("RGB")), want, err_msg=f"frame {k}")
        assert len(np.unique(want.reshape(-1, 3), axis=0)) > 20
    # and the palette is close to what was drawn: no pixel of a frame moves far
    px = fresh.frame_pixels(3).reshape(-1, 3).astype(int)
    err = np.sqrt(((px - board[fresh.gif_frame(3)].reshape(-1, 3).astype(int)) ** 2).sum(axis=-1))
    assert err.max() < 40 and (err > 12).mean() < 0.001, (err.max(), (err > 12).mean())


def test_gif_bytes_are_identical_and_png_frames_match(tmp_path):
    ev, *_ = sas_event()
    a = animate(ev).save_gif(tmp_path / "a.gif")
    b = animate(ev, progress=True).save_gif(tmp_path / "b.gif")
    assert a.read_bytes() == b.read_bytes()
    anim = animate(ev)
    frames = anim.save_frames(tmp_path / "frames")
    assert len(frames) == anim.n_frames == 8
    assert [p.name for p in frames[:2]] == ["frame_000.png", "frame_001.png"]
    again = animate(ev).save_frames(tmp_path / "again")
    assert [p.read_bytes() for p in frames] == [p.read_bytes() for p in again]
    png = Image.open(frames[1]).convert("RGB")
    assert png.size == anim.size
    # frame 1 scatters source[0, 0] = 5 into the selected (2, 0): result colour there
    assert _cell(png, anim.board, "result0", (2, 0))[0] == style.hex_to_rgb(style.role_color("result"))


def test_frames_drawn_in_any_order_are_the_same_pixels():
    ev = scatter_event()
    forward = [f.copy() for f in map(animate(ev).frame_pixels, range(4))]
    anim = animate(ev)
    for k in (3, 1, 0, 2, 3):
        np.testing.assert_array_equal(anim.frame_pixels(k), forward[k], err_msg=f"frame {k}")


def test_mp4_without_ffmpeg_is_a_clean_error(tmp_path, monkeypatch):
    from matplotlib import animation

    monkeypatch.setattr(animation.writers, "is_available", lambda name: False)
    ev, *_ = reduce_event()
    with pytest.raises(HloLabError, match="ffmpeg"):
        animate(ev, max_frames=2).save_mp4(tmp_path / "r.mp4")
    assert not (tmp_path / "r.mp4").exists()


def test_mp4_pipes_every_frame_to_ffmpeg_as_raw_rgb(tmp_path, monkeypatch):
    """A stand-in ffmpeg that stores what it is sent: one raw RGB frame per frame, even-sized."""
    from matplotlib import animation

    fake = tmp_path / "ffmpeg"
    fake.write_text(f"#!{sys.executable}\nimport sys, shutil\n"
                    "shutil.copyfileobj(sys.stdin.buffer, open(sys.argv[-1], 'wb'))\n")
    fake.chmod(0o755)
    monkeypatch.setattr(animation.writers, "is_available", lambda name: True)
    monkeypatch.setattr(animation.FFMpegWriter, "bin_path", classmethod(lambda cls: str(fake)))
    ev, *_ = reduce_event()
    anim = animate(ev, max_frames=3)
    out = anim.save_mp4(tmp_path / "r.mp4")
    w, h = anim.size
    ew, eh = w + w % 2, h + h % 2
    raw = np.frombuffer(out.read_bytes(), np.uint8)
    assert raw.size == 3 * ew * eh * 3
    first = raw[:ew * eh * 3].reshape(eh, ew, 3)
    np.testing.assert_array_equal(first[:h, :w], animate(ev, max_frames=3).frame_pixels(0))


def test_captions_are_messages_in_the_readers_language():
    ev = conv_event()
    plans = plan_frames(ev, max_frames=2)
    from hlolab.messages import Msg

    assert plans[-1].caption.split("\n")[-1] == text(Msg("animate.sampled", frame=2, frames=2, element=16, total=16))


def test_gif_legend_names_the_cell_kinds_and_the_ops_role_names():
    pad = animate(op_target("pad", "spec-example").event, max_frames=4)
    assert pad.cell_kinds == [1, 2, 3]  # low edge, interior hole, high edge of the 5x9 result
    texts = {t.get_text() for t in pad.board.ax.texts}
    assert {text_of("render.cell_kind.padding_low"), text_of("render.cell_kind.hole"),
            text_of("render.cell_kind.padding_high")} <= texts
    dot = animate(op_target("dot_general", "gallery").event, max_frames=4)
    assert dot.legend_labels["window"] == "lhs element (contracted)" and "lhs element (contracted)" in {
        t.get_text() for t in dot.board.ax.texts}


def text_of(key: str) -> str:
    from hlolab.messages import Msg
    return text(Msg(key))
