"""Static diagrams: one op instance, one or more chosen result elements, the
cells they derive from (by role), arrows to them and the derivation.

Everything comes from the op's provenance (through ``OpView``) and its
``explain()``; no op is special-cased here.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hlolab.render import style
from hlolab.render.layout import Board
from hlolab.render.opview import CellGroup, OpView
from hlolab.trace.explain import Explanation, format_explanation, format_value

EXPLAIN_WIDTH = 72   # characters per explanation line
EXPLAIN_LINES = 40   # lines of explanation before eliding


@dataclass
class Rendered:
    fig: Any
    board: Board
    view: OpView
    elements: list[tuple[int, tuple[int, ...]]]
    groups: list[list[CellGroup]]  # per element, the painted cells


def default_element(event: Any) -> tuple[int, tuple[int, ...]]:
    """The middle element of the first tensor result."""
    for r, v in enumerate(event.outputs):
        if isinstance(v, np.ndarray) and v.size:
            return r, tuple(int(d) // 2 for d in v.shape)
    return 0, ()


def explanation_of(event: Any, result: int, index: tuple[int, ...]) -> Explanation | None:
    from hlolab.errors import HloLabError
    from hlolab.ops.registry import lookup

    opdef = lookup(event.op.name)
    if opdef is None or opdef.explain is None:
        return None
    try:
        return opdef.explain(event.call, event.inputs, event.outputs, result, index)
    except (HloLabError, NotImplementedError):
        return None


def _wrap(text: str, width: int = EXPLAIN_WIDTH, max_lines: int = EXPLAIN_LINES) -> str:
    lines: list[str] = []
    for line in text.splitlines():
        indent = len(line) - len(line.lstrip())
        lines += textwrap.wrap(line, width, subsequent_indent=" " * (indent + 4)) or [""]
    if len(lines) > max_lines:
        lines = lines[:max_lines - 1] + [f"… {len(lines) - max_lines + 1} more lines"]
    return "\n".join(lines)


def _title(event: Any, result: int, index: tuple[int, ...]) -> str:
    short = event.op.name.removeprefix("stablehlo.")
    out = event.outputs[result]
    value = format_value(out[index]) if isinstance(out, np.ndarray) and out.ndim == len(index) else "?"
    where = ", ".join(str(i) for i in index)
    name = event.op.results[result].name if result < len(event.op.results) else "result"
    return f"{short}: {name}[{where}] = {value}"


def draw_diagram(event: Any, elements: Sequence[tuple[int, tuple[int, ...]]] | None = None, *,
                 title: str | None = None, explain: bool = True) -> Rendered:
    """The diagram of ``event`` for the chosen result ``elements`` (default: the middle one)."""
    chosen = [(int(r), tuple(int(i) for i in idx)) for r, idx in (elements or [default_element(event)])]
    view = OpView(event, focus=chosen)
    board = Board(title if title is not None else _title(event, *chosen[0]))
    view.build(board=board)
    right = board.width + 2.0  # the explanation column, right of the results
    single = len(chosen) == 1
    texts: list[str] = []
    for k, (r, idx) in enumerate(chosen):
        e = explanation_of(event, r, idx) if explain else None
        if e is not None:
            texts.append(format_explanation(e, max_children=6) if single else _one_line(e, k))
    text = _wrap("\n".join(texts)) if texts else ""
    if text:
        board.add_text(right, view.y - 0.45, text, fontsize=7.5, family="DejaVu Sans Mono",
                       width=EXPLAIN_WIDTH * 0.17)
    present = {g.role for r, idx in chosen for g in view.element_cells(r, idx)}
    roles = ["result"] + [role for role in style.ROLE_ORDER if role in present]
    legend_y = board.height + 1.2
    if single:
        board.height = legend_y + 0.9 * len(roles)
    board.draw()
    groups: list[list[CellGroup]] = []
    for k, (r, idx) in enumerate(chosen):
        color = None if single else style.ELEMENT_COLORS[k % len(style.ELEMENT_COLORS)]
        painted = view.paint_element(r, idx, color)
        groups.append(painted)
        _arrows(board, f"result{r}", idx, painted, color)
        if not single:  # a frame per small multiple, so overlapping windows stay visible
            for g in painted:
                panel_axes = board.views[g.key].layout.panel_axes
                panels = g.indices[:, panel_axes] if panel_axes else np.zeros((len(g.indices), 0))
                for p in {tuple(row) for row in panels.tolist()}:
                    rows = g.indices[(panels == np.asarray(p)).all(axis=1)] if p else g.indices
                    board.box(g.key, rows, color or style.ACCENT)
    if single:
        board.legend(roles, view.x, legend_y)
    return Rendered(board.fig, board, view, chosen, groups)


def _one_line(e: Explanation, k: int) -> str:
    """One element's derivation in a line: its last step (the result's formula with numbers)."""
    where = ", ".join(str(i) for i in e.index)
    last = e.steps[-1] if e.steps else None
    formula = f" = {last.formula}" if last is not None and last.formula else ""
    return f"({k + 1}) result[{where}]{formula} = {format_value(e.value)}"


def _arrows(board: Board, result_key: str, index: tuple[int, ...], groups: list[CellGroup],
            color: str | None) -> None:
    """One arrow per (tensor, role) group: from the chosen cell to the group's nearest cell."""
    start = board.views[result_key].cell_center(index)
    if start is None:
        return
    for g in groups:
        view = board.views.get(g.key)
        if view is None or g.key == result_key:
            continue
        centers = [c for c in (view.cell_center(row) for row in g.indices) if c is not None]
        if not centers:
            continue
        pts = np.asarray(centers)
        near = pts[np.argmin(((pts - start) ** 2).sum(axis=1))]
        board.arrow(start, (float(near[0]), float(near[1])), color or style.ACCENT, alpha=0.55)
