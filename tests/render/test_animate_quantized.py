"""Animations of quantized ops (hlolab.render.animate): cells show the stored integer over
its real value as the static board does, painted cells too; result cells not yet reached
show neither; the running values of a step-by-step op are shown in real values as they
change; captions give the real arithmetic and the stored result. Numbers worked by hand."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from hlolab.render import style  # noqa: E402
from hlolab.render.animate import REAL, animate  # noqa: E402
from tests.render.test_quantized_cells import conv_event  # noqa: E402
from tests.render.test_render import event_of  # noqa: E402

H = "!quant.uniform<i8:f32, 0.5:-1>"  # real = (stored + 1) / 2
ADD_BODY = (f"  ^bb0(%a: tensor<{H}>, %b: tensor<{H}>):\n"
            f"    %s = stablehlo.add %a, %b : (tensor<{H}>, tensor<{H}>) -> tensor<{H}>\n"
            f"    stablehlo.return %s : tensor<{H}>\n")
SCATTER = (f"func.func @main(%x: tensor<3x{H}>, %i: tensor<2x1xi32>, %u: tensor<2x{H}>) -> tensor<3x{H}> {{\n"
           f"  %r = \"stablehlo.scatter\"(%x, %i, %u) ({{\n{ADD_BODY}  }}) {{scatter_dimension_numbers = "
           f"#stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], "
           f"index_vector_dim = 1>}} : (tensor<3x{H}>, tensor<2x1xi32>, tensor<2x{H}>) -> tensor<3x{H}>\n"
           f"  return %r : tensor<3x{H}>\n}}")


def scatter_event():
    # x = [0, 2, 0] -> reals [0.5, 1.5, 0.5]; updates 4 (2.5) and 6 (3.5) both land on 1:
    # add(1.5, 2.5) = 4 -> stored 7; add(4, 3.5) = 7.5 -> stored 14
    args = [np.array([0, 2, 0], np.int8), np.array([[1], [1]], np.int32), np.array([4, 6], np.int8)]
    return event_of(SCATTER, args, "stablehlo.scatter")


def band_ink(frame: np.ndarray, board, key: str, index, fill) -> int:
    """Pixels unlike the cell's fill in the lower part of a cell, where the real value is."""
    px, py = board.pixel(key, index)
    cell = board.cell_inches * board.fig.dpi
    band = frame[py + int(0.12 * cell):py + int(0.4 * cell), px - int(0.3 * cell):px + int(0.3 * cell), :3]
    return int((np.abs(band.astype(int) - np.array(fill)).sum(axis=-1) > 60).sum())


def test_painted_cells_keep_their_real_value_and_results_show_it_when_reached():
    anim = animate(conv_event(), [(0, (0, 1, 1, 1))])
    frame = anim.frame_pixels(0)
    board = anim.board
    window, kernel, result = (style.hex_to_rgb(style.role_color(r)) for r in ("window", "kernel", "result"))
    for idx in ((0, 1, 1, 0), (0, 2, 2, 0)):  # the lhs window: 5 (3.0) ... 9 (5.0)
        assert band_ink(frame, board, "operand0", idx, window) > 10
    assert band_ink(frame, board, "operand1", (1, 1, 0, 1), kernel) > 10  # 8 (4.0)
    assert band_ink(frame, board, "result0", (0, 1, 1, 1), result) > 10  # 174 (43.5)
    assert anim.plans[0].caption.splitlines()[0].startswith(
        "%r[0, 1, 1, 1] = 3.0·1.0 + 3.5·2.0 + 4.5·3.0 + 5.0·4.0 = 43.5 -> stored 174")


def test_results_not_yet_reached_show_no_real_value_either():
    anim = animate(conv_event())
    board = anim.board
    white = style.hex_to_rgb(style.CELL_FILL)
    first, last = anim.frame_pixels(0).copy(), anim.frame_pixels(anim.n_frames - 1).copy()
    assert band_ink(first, board, "result0", (0, 1, 1, 1), white) == 0  # the last element: blank
    assert band_ink(last, board, "result0", (0, 0, 0, 0), white) > 10  # 78 (9.75), computed earlier
    # the static board writes the same reals: every real text of the result is one of them
    shown = anim._result_text(anim.plans[-1])
    assert shown["result0" + REAL] == [t.get_text() for t in board.views["result0"].real_texts]
    assert "43.5" in shown["result0" + REAL] and "9.75" in shown["result0" + REAL]


def test_running_values_are_shown_in_real_values_as_they_change():
    anim = animate(scatter_event())
    assert anim.n_frames == 2
    s = anim.board.views["result0"].slot[(1,)]
    reals = [anim._result_text(p)["result0" + REAL][s] for p in anim.plans]
    stored = [anim._result_text(p)["result0"][s] for p in anim.plans]
    assert stored == ["7", "14"] and reals == ["4", "7.5"]
    captions = [p.caption for p in anim.plans]
    assert "%r[1] so far: stored 7 = real 4.0" in captions[0]
    assert "%r[1] so far: stored 14 = real 7.5" in captions[1]


def test_quantized_frames_drawn_in_any_order_are_the_same_pixels():
    forward = [animate(scatter_event()).frame_pixels(k).copy() for k in range(2)]
    anim = animate(scatter_event())
    for k in (1, 0, 1):
        np.testing.assert_array_equal(anim.frame_pixels(k), forward[k], err_msg=f"frame {k}")
    anim = animate(conv_event())
    fwd = [anim.frame_pixels(k).copy() for k in range(anim.n_frames)]
    back = animate(conv_event())
    for k in reversed(range(back.n_frames)):
        np.testing.assert_array_equal(back.frame_pixels(k), fwd[k], err_msg=f"conv frame {k}")

