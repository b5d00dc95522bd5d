"""Animations: frames that show, step by step, how an op's results are derived.

The board is built once (``OpView``); each frame resets the cell colours,
paints that frame's cells by role, updates the result values when they run
(scatter) and sets the caption, so a frame costs one repaint, not a relayout.

Which frames: when the op's provenance has ``animation_steps(call, inputs,
outputs, elements, limit)`` (scatter: updates in application order;
select_and_scatter: select then scatter per window; reduce: the reduction
schedule), its steps, in the op's real order. Otherwise the plain walk: one
frame per result element, row-major (or the chosen ones). For convolution and
reduce_window the operand is drawn in its padded / dilated frame, so the walk
*is* the window sliding over the padded input, with the kernel beside it.
Nothing here knows an op by name.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hlolab.errors import HloLabError
from hlolab.messages import Msg, text
from hlolab.render import style
from hlolab.render.diagram import explanation_of
from hlolab.render.layout import Board, format_cell
from hlolab.render.opview import CellGroup, OpView
from hlolab.trace.explain import format_value

Elements = Sequence[tuple[int, tuple[int, ...]]]
CAPTION_CHARS = 110     # wrap longer captions
CAPTION_CHAR_W = 0.2    # board units per character of the 9 pt monospaced caption
LEGEND_W = 7.5          # board units reserved right of the tensors for the legend
FORMULA_CHARS = 48      # longer explanation formulas are left out of the caption


@dataclass
class FramePlan:
    """What one frame shows: a caption, the cells to paint (with roles) and, when the
    result values run (scatter), the values to show in the result cells."""

    caption: str
    paint: list[CellGroup] = field(default_factory=list)
    result_values: dict[str, np.ndarray] | None = None


def _walk(event: Any, elements: Elements | None,
          max_frames: int) -> tuple[list[tuple[int, tuple[int, ...]]], int]:
    """The result elements to show, row-major over result 0 unless given; and how many exist."""
    if elements:
        chosen = [(int(r), tuple(int(i) for i in idx)) for r, idx in elements]
        return chosen[:max_frames], len(chosen)
    for r, v in enumerate(event.outputs):
        if isinstance(v, np.ndarray) and v.size:
            n = int(v.size)
            flat = np.arange(min(n, max_frames))
            idx = np.stack(np.unravel_index(flat, v.shape), axis=-1) if v.ndim else np.zeros((len(flat), 0))
            return [(r, tuple(int(i) for i in row)) for row in idx], n
    return [], 0


def _result_line(event: Any, view: OpView, r: int, idx: tuple[int, ...]) -> str:
    """``result[i, j] = formula = value`` from the op's explanation (its last step)."""
    where = f"{view.result_name(r)}[{', '.join(str(i) for i in idx)}]"
    e = explanation_of(event, r, idx)
    if e is None:
        return f"{where} = {format_value(np.asarray(event.outputs[r])[idx])}"
    last = e.steps[-1] if e.steps else None
    formula = text(last.substituted or last.formula) if last is not None else ""
    if formula and len(formula) <= FORMULA_CHARS:
        return f"{where} = {formula} = {format_value(e.value)}"
    return f"{where} = {format_value(e.value)}"


def _walk_frames(event: Any, view: OpView, elements: Elements | None, max_frames: int) -> list[FramePlan]:
    chosen, total = _walk(event, elements, max_frames)
    plans = []
    for k, (r, idx) in enumerate(chosen):
        groups = view.element_cells(r, idx)
        roles = ", ".join(dict.fromkeys(style.ROLE_LABELS.get(g.role, g.role) for g in groups))
        source = Msg("render.from_roles", roles=roles) if roles else Msg("render.from_nothing")
        caption = f"{_result_line(event, view, r, idx)}   {text(source)}"
        if total > len(chosen):
            caption += "   " + text(Msg("render.frame_of", frame=k + 1, shown=len(chosen), total=total))
        plans.append(FramePlan(caption, groups + [CellGroup(f"result{r}", "result",
                                                            np.asarray([idx], dtype=np.int64))]))
    return plans


def _step_frames(event: Any, view: OpView, steps: list[Any]) -> list[FramePlan]:
    """FramePlans from the op's own animation steps (operand coordinates -> drawn cells)."""
    state = {f"result{r}": np.array(v) for r, v in enumerate(event.outputs) if isinstance(v, np.ndarray)}
    runs = any(s.running for s in steps)
    plans = []
    for step in steps:
        if step.start is not None:
            for r, v in step.start.items():
                state[f"result{r}"] = np.array(v)
        by: dict[tuple[int | None, str], list[tuple[int, ...]]] = {}
        for s in step.sources:
            by.setdefault((s.operand, s.role), []).append(tuple(s.index))
        groups: list[CellGroup] = []
        for (operand, role), rows in by.items():
            groups += view.source_cells(operand, role, rows)
        for r, idx in step.results:
            groups.append(CellGroup(f"result{r}", "result", np.asarray([idx], dtype=np.int64)))
        for r, idx, value in step.running:
            state[f"result{r}"][tuple(idx)] = value
        values = {k: v.copy() for k, v in state.items()} if runs else None
        plans.append(FramePlan(text(step.caption), [g for g in groups if len(g.indices)], values))
    return plans


def plan_frames(event: Any, elements: Elements | None = None, *,
                max_frames: int = 400, view: OpView | None = None) -> list[FramePlan]:
    """The frames of ``event``: the op's own steps when its provenance lists them
    (``animation_steps``), else one frame per result element; at most ``max_frames``."""
    view = view or OpView(event)
    steps_of = getattr(view.prov, "animation_steps", None) if view.prov is not None else None
    if steps_of is not None:
        chosen = None if not elements else [(int(r), tuple(int(i) for i in idx)) for r, idx in elements]
        steps = steps_of(event.call, list(event.inputs), list(event.outputs), chosen, max_frames)
        return _step_frames(event, view, steps[:max_frames])
    return _walk_frames(event, view, elements, max_frames)


class Animation:
    """Frames of one op instance, drawn on one board; save as GIF, MP4 or PNG frames."""

    def __init__(self, event: Any, plans: list[FramePlan], view: OpView, progress: bool = False):
        self.event = event
        self.plans = plans
        self.view = view
        self.progress = progress
        short = event.op.name.removeprefix("stablehlo.")
        self.board: Board = view.build(board=Board(f"{short}: how each result element is derived"))
        self.board.clear_operand_labels(gap=1.0)
        self._wrapped = [textwrap.wrap(p.caption, CAPTION_CHARS) or [""] for p in plans]
        lines = max((len(w) for w in self._wrapped), default=1)
        longest = max((len(line) for w in self._wrapped for line in w), default=0)
        self.roles = self._roles()
        tensors_w = self.board.width
        self.board.width = max(tensors_w + LEGEND_W, view.x + longest * CAPTION_CHAR_W)
        legend_h = 0.9 * len(self.roles) + 0.6
        self.board.height = max(self.board.height, view.y + legend_h)
        self.caption_y = self.board.height + 0.7
        self.board.height = self.caption_y + 0.55 * lines
        self.board.draw()
        self.figure = self.board.fig
        self.board.legend(self.roles, tensors_w + 1.0, view.y)
        self._caption = self.board.ax.text(view.x, self.caption_y, "", fontsize=9, va="top",
                                           ha="left", family="DejaVu Sans Mono", linespacing=1.3)
        self._showing_values = False

    def _roles(self) -> list[str]:
        """The roles any frame paints, in the style's precedence order (the legend)."""
        used = {g.role for p in self.plans for g in p.paint}
        return [r for r in style.ROLE_ORDER if r in used]

    @property
    def n_frames(self) -> int:
        return len(self.plans)

    def show(self, k: int) -> None:
        """Draw frame ``k`` on the board."""
        plan = self.plans[k]
        self.board.reset()
        self._set_values(plan.result_values)
        order = {r: i for i, r in enumerate(style.ROLE_ORDER)}
        for g in sorted(plan.paint, key=lambda g: -order.get(g.role, len(order))):
            if g.key in self.board.views:
                self.board.paint(g.key, g.indices, style.role_color(g.role))
        self._caption.set_text("\n".join(self._wrapped[k]))

    def _set_values(self, values: dict[str, np.ndarray] | None) -> None:
        """Show running result values (or the final ones again)."""
        if values is None and not self._showing_values:
            return
        for key, view in self.board.views.items():
            if not key.startswith("result") or not view.texts:
                continue
            arr = values.get(key) if values is not None else None
            arr = view.values if arr is None else arr
            cells = arr[tuple(view.index.T)] if view.index.shape[1] else np.asarray(arr).reshape(1)
            for t, v in zip(view.texts, cells, strict=False):
                t.set_text(format_cell(v))
        self._showing_values = values is not None

    def _frames(self) -> Iterator[int]:
        if not self.progress:
            yield from range(self.n_frames)
            return
        from rich.console import Console
        from rich.progress import Progress

        with Progress(console=Console(stderr=True), transient=True) as bar:
            task = bar.add_task("rendering frames", total=self.n_frames)
            for k in range(self.n_frames):
                yield k
                bar.advance(task)

    def _write(self, writer: Any, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.stem}.tmp{path.suffix}")
        with style.styled(), writer.saving(self.figure, str(tmp), dpi=self.figure.dpi):
            for k in self._frames():
                self.show(k)
                writer.grab_frame()
        tmp.replace(path)
        return path

    def save_gif(self, path: str | Path, fps: float = 2.0) -> Path:
        """All frames as one GIF (Pillow; same input -> same bytes)."""
        from matplotlib.animation import PillowWriter

        return self._write(PillowWriter(fps=fps), Path(path))

    def save_mp4(self, path: str | Path, fps: float = 2.0) -> Path:
        """All frames as an MP4; needs ffmpeg (a clean HloLabError without it)."""
        from matplotlib import animation

        if not animation.writers.is_available("ffmpeg"):
            raise HloLabError("MP4 needs ffmpeg, which is not installed; use --format gif")
        return self._write(animation.FFMpegWriter(fps=fps), Path(path))

    def save_frames(self, directory: str | Path, fmt: str = "png") -> list[Path]:
        """Every frame as its own image: DIR/frame_000.png, ..."""
        out = Path(directory)
        paths = []
        for k in self._frames():
            self.show(k)
            paths.append(style.save_figure(self.figure, out / f"frame_{k:03d}.{fmt}", fmt))
        return paths

    def close(self) -> None:
        import matplotlib.pyplot as plt

        plt.close(self.figure)


def animate(event: Any, elements: Elements | None = None, *,
            max_frames: int = 400, progress: bool = False) -> Animation:
    """The animation of ``event`` (frames: see ``plan_frames``)."""
    chosen, _ = _walk(event, elements, max_frames)
    view = OpView(event, focus=chosen[:8])
    return Animation(event, plan_frames(event, elements, max_frames=max_frames, view=view), view, progress)
