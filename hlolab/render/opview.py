"""One op instance on a board: ``hlolab.trace.view.OpCells`` (its tensors, frames,
grid axes and each element's source cells, from the op's own provenance) laid out
with operands left and results right, and painted.

An operand read through a padded / dilated frame (reduce_window's padded base, a
convolution's padded and lhs-dilated input) is drawn in that frame, so padding
and dilation holes are cells the window can land on.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hlolab.render import style
from hlolab.render.layout import Board, TensorLayout
from hlolab.trace.view import CellGroup, OpCells

COLUMN_GAP = 5.0   # between the operand column and the result column
ROW_GAP = 2.2      # between tensors stacked in one column (room for the label)

__all__ = ["CellGroup", "OpView", "COLUMN_GAP", "ROW_GAP"]


class OpView(OpCells):
    """Operands (left column) and results (right column) of an executed op, on a board.

    ``focus`` lists (result, index) elements that must stay visible, with their
    sources, when large tensors are elided.
    """

    def __init__(self, event: Any, focus: Sequence[tuple[int, tuple[int, ...]]] = (),
                 *, x: float = 0.0, y: float = 1.2):
        super().__init__(event, focus)
        self.x, self.y = x, y
        self.board: Board | None = None

    def build(self, title: str = "", board: Board | None = None, show_values: bool = True) -> Board:
        """Lay the tensors out (operands left, results right) and draw the figure."""
        b = board or Board(title)
        layouts: dict[str, TensorLayout] = {}
        drawn = {key: self.drawn_ring(key) for key in self.keys()}
        for key, (_, values, _, origin) in drawn.items():
            layouts[key] = TensorLayout(values.shape, keep=self.keep.get(key, ()),
                                        grid_axes=self.grid_axes(key), origin=origin)
        operands = [k for k in layouts if k.startswith("operand")]
        results = [k for k in layouts if k.startswith("result")]
        left_w = max((layouts[k].width for k in operands), default=0.0)
        for column, keys in ((self.x, operands), (self.x + left_w + COLUMN_GAP, results)):
            y = self.y
            for key in keys:
                label, values, kinds, _ = drawn[key]
                b.add(key, label, layouts[key], column, y, values, kinds,
                      reals=self.reals(key, ring=True)).frame_axes = self.frame_axes(key)
                y += layouts[key].height + ROW_GAP
        self.results_x = self.x + left_w + COLUMN_GAP
        if board is None:
            b.draw(show_values=show_values)
        self.board = b
        return b

    def paint_element(self, result: int, index: Sequence[int], color: str | None = None) -> list[CellGroup]:
        """Paint result element ``index`` and its sources (role colours, or all in ``color``)."""
        assert self.board is not None, "build() first"
        groups = self.element_cells(result, index)
        # paint the least specific roles first so the most specific stays visible
        order = {r: k for k, r in enumerate(style.ROLE_ORDER)}
        for g in sorted(groups, key=lambda g: -order.get(g.role, len(order))):
            self.board.paint(g.key, g.indices, color or style.role_color(g.role))
        self.board.paint(f"result{result}", [tuple(index)], color or style.role_color("result"))
        return groups
