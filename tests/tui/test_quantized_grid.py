"""TensorGrid with a quantized tensor: each cell shows its storage value and its real value
(``174 (43.5)``), from ``OpCells.reals``; the cursor, the value and the index are the
storage tensor's, as for any other tensor."""

from __future__ import annotations

import numpy as np
from textual.app import App, ComposeResult

from hlolab.trace.view import OpCells
from hlolab.tui.widgets.grid import TensorGrid, format_quantized_row
from tests.render.test_quantized_cells import CONV_R, conv_event

from .conftest import run


class QApp(App):
    def compose(self) -> ComposeResult:
        yield TensorGrid(id="g")


def test_format_quantized_row_pairs_storage_and_real_values():
    row = np.array([174, -3, 0], np.int32)
    reals = np.array([43.5, -0.75, np.nan], np.float32)
    assert format_quantized_row(row, reals) == ["174 (43.5)", "-3 (-0.75)", "0"]


def test_grid_shows_storage_and_real_value_of_a_quantized_convolution():
    view = OpCells(conv_event())
    label, values, kinds = view.drawn("result0")
    reals = view.reals("result0")

    async def body():
        app = QApp()
        async with app.run_test(size=(100, 24)) as pilot:
            g = app.query_one(TensorGrid)
            g.set_value(values, label, kinds=kinds, grid_axes=view.grid_axes("result0"), reals=reals)
            g.move_cursor((0, 1, 1, 1))
            await pilot.pause()
            assert g.border_title == f"%r : {CONV_R.join(['tensor<1x2x2x2x', '>'])}"
            text = "\n".join(g.render_line(y).text for y in range(g.size.height))
            # the slice of output feature 1 (scale 0.25): result [0,1,1,1] = 43.5 stored as 174
            # (worked in test_quantized_cells); [0,1,0,1] = 154 -> 154 * 0.25 = 38.5
            assert "slice [0, :, :, 1]" in text
            assert "174 (43.5)" in text and "154 (38.5)" in text
            # the cursor, value and index stay the storage tensor's
            assert g.index == (0, 1, 1, 1)
            assert g.value is not None and g.value.dtype == np.int32 and int(g.value[0, 1, 1, 1]) == 174
            # feature 0 has its own scale (per axis): [0,0,0,0] = 78 -> 78 * 0.125 = 9.75
            g.move_cursor((0, 0, 0, 0))
            await pilot.pause()
            text = "\n".join(g.render_line(y).text for y in range(g.size.height))
            assert "slice [0, :, :, 0]" in text and "78 (9.75)" in text and "(43.5)" not in text
            # without reals the same grid shows the storage values alone
            g.set_value(values, label, kinds=kinds, grid_axes=view.grid_axes("result0"))
            await pilot.pause()
            text = "\n".join(g.render_line(y).text for y in range(g.size.height))
            assert "126 142" in text and "(" not in text

    run(body)
