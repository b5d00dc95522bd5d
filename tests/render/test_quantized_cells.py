"""Quantized tensors on a board (hlolab.trace.view.OpCells, hlolab.render.layout): each
tensor labelled with the op's declared type (``!quant.uniform`` kept, dynamic dims refined
by the run) and each quantized cell drawn as its storage value over its real value (the
spec's dequantize, per axis too); numbers worked by hand."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from hlolab.render import style  # noqa: E402
from hlolab.render.diagram import draw_diagram  # noqa: E402
from hlolab.render.opview import OpView  # noqa: E402
from tests.render.test_render import event_of  # noqa: E402

CONV_L = "!quant.uniform<i8:f32, 0.5:-1>"
CONV_K = "!quant.uniform<i8:f32:3, {0.25,0.5}>"
CONV_R = "!quant.uniform<i32:f32:3, {0.125,0.25}>"
X_T, W_T, R_T = f"tensor<1x3x3x1x{CONV_L}>", f"tensor<2x2x1x2x{CONV_K}>", f"tensor<1x2x2x2x{CONV_R}>"
CONV = (f"func.func @main(%x: {X_T}, %w: {W_T}) -> {R_T} {{\n"
        f"  %r = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], "
        f"window = {{stride = [1, 1]}} {{batch_group_count = 1 : i64, feature_group_count = 1 : i64}} : "
        f"({X_T}, {W_T}) -> {R_T}\n  return %r : {R_T}\n}}")
CX = np.arange(1, 10, dtype=np.int8).reshape(1, 3, 3, 1)
CW = np.arange(1, 9, dtype=np.int8).reshape(2, 2, 1, 2)

QA, QB = "!quant.uniform<i8:f32, 0.1:-30>", "!quant.uniform<i8:f32, 0.5:-20>"
ADD = (f"func.func @main(%x: tensor<2x{QA}>, %y: tensor<2x{QB}>) -> tensor<2x{QB}> {{\n"
       f"  %r = stablehlo.add %x, %y : (tensor<2x{QA}>, tensor<2x{QB}>) -> tensor<2x{QB}>\n"
       f"  return %r : tensor<2x{QB}>\n}}")


def conv_event():
    return event_of(CONV, [CX, CW], "stablehlo.convolution")


def cell_texts(board, key, index) -> tuple[str, str | None]:
    """The storage text of a drawn cell and the real-value text drawn under it (None: none)."""
    view = board.views[key]
    s = view.slot[tuple(index)]
    top = view.texts[s]
    x, y = top.get_position()
    under = view.real_texts[s] if view.real_texts else None
    if under is not None:  # drawn under the storage value, in the same cell
        assert under.get_position()[0] == x and 0 < under.get_position()[1] - y < 0.5
    return top.get_text(), None if under is None else under.get_text()


def test_conv_labels_carry_the_declared_quantized_types():
    view = OpView(conv_event())
    assert view.drawn("operand0")[0] == f"%x : {X_T}"
    assert view.drawn("operand1")[0] == f"%w : {W_T}"
    assert view.drawn("result0")[0].startswith(f"%r : {R_T}")
    assert str(view.quant_type("operand1")) == CONV_K


def test_conv_reals_per_tensor_and_per_axis_by_hand():
    view = OpView(conv_event())
    # lhs 0.5:-1: (9 + 1) * 0.5 = 5, (1 + 1) * 0.5 = 1
    rx = view.reals("operand0")
    assert rx.dtype == np.float32 and rx[0, 2, 2, 0] == 5.0 and rx[0, 0, 0, 0] == 1.0
    # kernel per axis 3 (output feature): storage 7 at o=0 is 7 * 0.25, storage 8 at o=1 is 8 * 0.5
    rw = view.reals("operand1")
    assert rw[1, 1, 0, 0] == 1.75 and rw[1, 1, 0, 1] == 4.0
    # result [0,1,1,1]: window [[3, 3.5], [4.5, 5]] . kernel o=1 [[1, 2], [3, 4]] = 43.5
    # -> 43.5 / 0.25 = 174 (i32 storage, zero point 0); o=0 scale 0.125
    out = view.drawn("result0")[1]
    rr = view.reals("result0")
    assert out[0, 1, 1, 1] == 174 and rr[0, 1, 1, 1] == 43.5
    assert rr[0, 1, 1, 0] == out[0, 1, 1, 0] * 0.125


def test_conv_board_draws_storage_over_real_value(tmp_path):
    r = draw_diagram(conv_event(), [(0, (0, 1, 1, 1))])
    board = r.board
    assert board.views["result0"].label.startswith(f"%r : {R_T}")
    assert cell_texts(board, "result0", (0, 1, 1, 1)) == ("174", "43.5")
    assert cell_texts(board, "operand0", (0, 2, 2, 0)) == ("9", "5")
    assert cell_texts(board, "operand1", (1, 1, 0, 0)) == ("7", "1.75")
    assert cell_texts(board, "operand1", (1, 1, 0, 1)) == ("8", "4")
    # every drawn cell of a quantized tensor has its real value under it, legible when painted
    assert board.views["result0"].real_texts[board.views["result0"].slot[(0, 1, 1, 1)]].get_color() \
        == board.views["result0"].texts[board.views["result0"].slot[(0, 1, 1, 1)]].get_color()
    for key, tv in board.views.items():
        assert len(tv.real_texts) == len(tv.texts) and None not in tv.real_texts, key
        real_size, top_size = tv.real_texts[0].get_fontsize(), tv.texts[0].get_fontsize()
        assert real_size < top_size  # the real value is the smaller line
    png = style.save_figure(r.fig, tmp_path / "qconv.png")
    assert png.stat().st_size > 0


def test_quantized_add_by_hand():
    # x [-20, -10] at 0.1:-30 -> [1, 2]; y [-14, -12] at 0.5:-20 -> [3, 4];
    # sum [4, 6] -> 4 / 0.5 - 20 = -12, 6 / 0.5 - 20 = -8
    ev = event_of(ADD, [np.array([-20, -10], np.int8), np.array([-14, -12], np.int8)], "stablehlo.add")
    view = OpView(ev)
    assert view.drawn("operand0")[0] == f"%x : tensor<2x{QA}>"
    assert view.drawn("result0")[0] == f"%r : tensor<2x{QB}>"
    assert view.reals("operand0").tolist() == pytest.approx([1.0, 2.0])
    assert view.reals("operand1").tolist() == [3.0, 4.0]
    assert view.drawn("result0")[1].tolist() == [-12, -8]
    assert view.reals("result0").tolist() == [4.0, 6.0]
    board = view.build("add")
    assert cell_texts(board, "result0", (1,)) == ("-8", "6")
    assert cell_texts(board, "operand0", (1,)) == ("-10", "2")


def test_float_tensors_keep_one_line_and_the_same_label():
    text = ("func.func @main(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> tensor<2x3xf32> {\n"
            "  %r = stablehlo.add %x, %y : tensor<2x3xf32>\n  return %r : tensor<2x3xf32>\n}")
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    view = OpView(event_of(text, [x, x], "stablehlo.add"))
    assert view.reals("operand0") is None and view.quant_type("result0") is None
    board = view.build("f32")
    assert board.views["result0"].label == "%r : tensor<2x3xf32>"
    assert all(not tv.real_texts for tv in board.views.values())
    t = board.views["result0"].texts[board.views["result0"].slot[(1, 2)]]
    assert t.get_text() == "10" and t.get_position()[1] == pytest.approx(board.views["result0"].y + 1 + 0.55)


def test_dynamic_declared_type_is_refined_by_the_run():
    text = ("func.func @main(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {\n"
            "  %r = stablehlo.abs %x : tensor<?x2xf32>\n  return %r : tensor<?x2xf32>\n}")
    view = OpView(event_of(text, [np.ones((3, 2), np.float32)], "stablehlo.abs"))
    assert view.declared_type("operand0").shape == (None, 2)
    assert view.drawn("operand0")[0] == "%x : tensor<3x2xf32>"
    assert view.drawn("result0")[0] == "%r : tensor<3x2xf32>"


def test_trailing_operand_without_declared_type_falls_back():
    view = OpView(conv_event())
    assert view.declared_type("operand5") is None


def test_conv_dot_product_is_written_with_real_values():
    """The written-out sum multiplies what the op multiplies: the dequantized window
    [[3, 3.5], [4.5, 5]] and kernel o=1 [[1, 2], [3, 4]], = 43.5 (the storage integers
    5·2 + 6·4 + 8·6 + 9·8 = 154 would be a wrong sum for a stored 174)."""
    from hlolab.render.model import pairs_and_derivation

    view = OpView(conv_event())
    pairs, d = pairs_and_derivation(view, 0, (0, 1, 1, 1))
    assert d is not None and d.value == "43.5"
    assert d.terms == ["3.0·1.0", "3.5·2.0", "4.5·3.0", "5.0·4.0"]
    assert [(float(p.a_value), float(p.b_value)) for p in pairs] == [(3, 1), (3.5, 2), (4.5, 3), (5, 4)]
