"""TensorGrid on its own: cursor keys, slices of rank-4 tensors, highlight bookkeeping,
mouse clicks, value formatting."""

from __future__ import annotations

import ml_dtypes
import numpy as np
from textual.app import App, ComposeResult

from hlolab.tui.widgets.grid import TensorGrid, format_row

from .conftest import run


class GridApp(App):
    def __init__(self, value, **kw):
        super().__init__()
        self.value = value
        self.moved: list[tuple[int, ...]] = []
        self.activated: list[tuple[int, ...]] = []

    def compose(self) -> ComposeResult:
        yield TensorGrid(self.value, title="%x", id="g")

    def on_mount(self) -> None:
        self.query_one(TensorGrid).focus()

    def on_tensor_grid_cursor_moved(self, event: TensorGrid.CursorMoved) -> None:
        self.moved.append(event.index)

    def on_tensor_grid_activated(self, event: TensorGrid.Activated) -> None:
        self.activated.append(event.index)


def test_arrow_keys_and_hjkl_move_and_clamp():
    async def body():
        app = GridApp(np.arange(12).reshape(3, 4))
        async with app.run_test(size=(60, 20)) as pilot:
            g = app.query_one(TensorGrid)
            assert g.cursor == (0, 0)
            await pilot.press("down", "right", "right")
            assert g.cursor == (1, 2)
            await pilot.press("j", "j", "j", "l", "l", "l")  # clamps at the edges
            assert g.cursor == (2, 3)
            await pilot.press("k", "h")
            assert g.cursor == (1, 2)
            await pilot.press("home")
            assert g.cursor == (1, 0)
            await pilot.pause()
            assert app.moved[-1] == (1, 0)
            assert (1, 2) in app.moved
            await pilot.press("enter")
            await pilot.pause()
            assert app.activated == [(1, 0)]

    run(body)


def test_rank4_slice_keys_switch_the_shown_slice():
    async def body():
        value = np.arange(2 * 3 * 4 * 5).reshape(2, 3, 4, 5)
        app = GridApp(value)
        async with app.run_test(size=(80, 24)) as pilot:
            g = app.query_one(TensorGrid)
            assert g.slice_index == (0, 0)
            await pilot.press("down", "right")
            await pilot.press("right_square_bracket")
            assert g.slice_index == (0, 1)
            assert g.cursor == (0, 1, 1, 1)  # the cell within the slice is kept
            await pilot.press("left_square_bracket", "left_square_bracket")  # wraps
            assert g.slice_index == (0, 2)
            await pilot.press("right_curly_bracket")
            assert g.slice_index == (1, 2)
            await pilot.press("right_curly_bracket")  # the outer axis wraps too
            assert g.slice_index == (0, 2)
            g.move_cursor((1, 0, 3, 4))
            await pilot.pause()
            assert g.slice_index == (1, 0)
            assert app.moved[-1] == (1, 0, 3, 4)
            # what is drawn is that slice: row 3 of slice (1, 0) ends with value[1, 0, 3, 4]
            lines = [strip.text for strip in (g.render_line(y) for y in range(g.size.height))]
            assert any(line.split()[:1] == ["3"] and str(value[1, 0, 3, 4]) in line for line in lines)

    run(body)


def test_highlights_on_other_slices_are_counted_and_drawn_line_says_so():
    async def body():
        app = GridApp(np.zeros((2, 3, 4, 5), dtype=np.float32))
        async with app.run_test(size=(80, 24)) as pilot:
            g = app.query_one(TensorGrid)
            g.set_highlights({(0, 0, 1, 1): "copy", (0, 1, 2, 2): "window", (1, 2, 0, 0): "init",
                              (1, 2, 3, 3): "update"})
            await pilot.pause()
            assert g.other_slice_highlights == 3
            assert g.highlights[(0, 0, 1, 1)] == "copy"
            text = "\n".join(g.render_line(y).text for y in range(4))
            assert "3 highlighted on other slices" in text
            g.move_cursor((1, 2, 0, 0))
            await pilot.pause()
            assert g.other_slice_highlights == 2
            g.clear_highlights()
            await pilot.pause()
            assert g.highlights == {} and g.other_slice_highlights == 0

    run(body)


def test_click_moves_the_cursor_and_double_click_activates():
    async def body():
        app = GridApp(np.arange(20).reshape(4, 5))
        async with app.run_test(size=(60, 20)) as pilot:
            g = app.query_one(TensorGrid)
            # find the screen offset of cell (2, 3) from the grid's own geometry
            lw, cw = g._label_width(), g._cell_width()
            content = g.content_region
            x = content.x + lw + 3 * cw + cw - 1 - g.region.x
            y = content.y + g._n_header + 2 - g.region.y
            assert g.cell_at(x - (content.x - g.region.x), y - (content.y - g.region.y)) == (2, 3)
            await pilot.click(g, offset=(x, y))
            await pilot.pause()
            assert g.cursor == (2, 3)
            assert app.moved[-1] == (2, 3)
            await pilot.click(g, offset=(x, y), times=2)
            await pilot.pause()
            assert app.activated and app.activated[-1] == (2, 3)

    run(body)


def test_set_value_keeps_a_valid_cursor_and_clamps_an_invalid_one():
    async def body():
        app = GridApp(np.arange(12).reshape(3, 4))
        async with app.run_test(size=(60, 20)) as pilot:
            g = app.query_one(TensorGrid)
            g.move_cursor((2, 3))
            g.set_value(np.ones((5, 5)))
            assert g.cursor == (2, 3)
            g.set_value(np.ones((2, 2)))
            assert g.cursor == (1, 1)
            g.set_value(np.ones(7))
            assert g.cursor == (1,)
            g.set_value(np.array(3.5, dtype=np.float32))
            assert g.cursor == ()
            await pilot.pause()
            assert "3.5" in "".join(g.render_line(y).text for y in range(3))
            g.set_value(None)
            assert g.value is None and g.cursor == ()

    run(body)


def test_rank1_is_one_row_and_moves_sideways():
    async def body():
        app = GridApp(np.arange(6, dtype=np.int8))
        async with app.run_test(size=(60, 20)) as pilot:
            g = app.query_one(TensorGrid)
            await pilot.press("right", "right", "down")
            assert g.cursor == (2,)

    run(body)


def test_formatting_is_compact():
    assert format_row(np.array([True, False])) == ["T", "F"]
    assert format_row(np.array([-3, 40], dtype=np.int32)) == ["-3", "40"]
    assert format_row(np.array([0.1, 2.0], dtype=np.float32)) == ["0.1", "2.0"]
    assert format_row(np.array([1 - 2j], dtype=np.complex64)) == ["1-2j"]
    assert format_row(np.array([0.1], dtype=ml_dtypes.bfloat16)) == [str(ml_dtypes.bfloat16(0.1))]


def test_grid_axes_show_an_nhwc_image_as_its_spatial_plane():
    # a 1x5x5x2 NHWC image drawn as 5x5 planes (axes 1, 2), the channel as the slice selector;
    # every public index (cursor, messages, highlights, clicks) stays in NHWC order
    async def body():
        value = np.arange(50).reshape(1, 5, 5, 2)
        app = GridApp(None)
        async with app.run_test(size=(80, 24)) as pilot:
            g = app.query_one(TensorGrid)
            g.set_value(value, "%lhs", grid_axes=(1, 2))
            await pilot.pause()
            assert g.grid_axes == (1, 2) and g.value is value
            lines = [g.render_line(y).text for y in range(g.size.height)]
            assert lines[0].startswith("slice [0, :, :, 0] of 1x2")
            assert lines[1].split() == ["0", "1", "2", "3", "4"]  # five columns: the width axis
            row2 = next(line for line in lines if line.split()[:1] == ["2"])
            assert row2.split()[1:] == [str(v) for v in value[0, 2, :, 0]]
            await pilot.press("down", "down", "right")
            assert g.index == (0, 2, 1, 0)
            await pilot.press("right_square_bracket")  # next channel
            assert g.index == (0, 2, 1, 1) and g.slice_index == (0, 1)
            await pilot.pause()
            assert app.moved[-1] == (0, 2, 1, 1)
            g.move_cursor((0, 4, 3, 0))
            await pilot.pause()
            assert g.index == (0, 4, 3, 0) and app.moved[-1] == (0, 4, 3, 0)
            g.set_highlights({(0, 4, 3, 0): "window", (0, 1, 1, 1): "copy"})
            await pilot.pause()
            assert g.other_slice_highlights == 1  # the channel-1 cell is on the other slice
            assert g.highlights[(0, 4, 3, 0)] == "window"
            await pilot.press("enter")
            await pilot.pause()
            assert app.activated[-1] == (0, 4, 3, 0)

    run(body)
