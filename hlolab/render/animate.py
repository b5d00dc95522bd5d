"""Animations: frames that walk the result and show how each element derives.

The board is built once (``OpView``); each frame resets the cell colours,
paints one element's cells by role and sets the caption, so a frame costs
one repaint, not a relayout. For convolution and reduce_window the operand
is drawn in its padded / dilated frame, so the walk *is* the window sliding
over the padded input, with the kernel painted beside it.

Frames come from the op's provenance; nothing here knows an op.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hlolab.errors import HloLabError
from hlolab.render import style
from hlolab.render.diagram import explanation_of
from hlolab.render.layout import Board
from hlolab.render.opview import CellGroup, OpView
from hlolab.trace.explain import format_value


@dataclass
class FramePlan:
    """What one frame shows: a caption and the cells to paint (with roles)."""

    caption: str
    paint: list[CellGroup] = field(default_factory=list)


def _walk(event: Any, elements: Sequence[tuple[int, tuple[int, ...]]] | None,
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


def plan_frames(event: Any, elements: Sequence[tuple[int, tuple[int, ...]]] | None = None, *,
                max_frames: int = 400, view: OpView | None = None) -> list[FramePlan]:
    """One frame per result element (row-major, or ``elements``), at most ``max_frames``."""
    view = view or OpView(event)
    chosen, total = _walk(event, elements, max_frames)
    plans = []
    short = event.op.name.removeprefix("stablehlo.")
    for k, (r, idx) in enumerate(chosen):
        groups = view.element_cells(r, idx)
        e = explanation_of(event, r, idx)
        value = format_value(e.value) if e is not None else format_value(np.asarray(event.outputs[r])[idx])
        where = ", ".join(str(i) for i in idx)
        roles = ", ".join(dict.fromkeys(g.role for g in groups)) or "no inputs"
        caption = f"{short}  {view.result_name(r)}[{where}] = {value}   ({roles})"
        if total > len(chosen):
            caption += f"   frame {k + 1} of the first {len(chosen)} of {total}"
        plans.append(FramePlan(caption, groups + [CellGroup(f"result{r}", "result",
                                                            np.asarray([idx], dtype=np.int64))]))
    return plans


class Animation:
    """Frames of one op instance, drawn on one board; save as GIF, MP4 or PNG frames."""

    def __init__(self, event: Any, plans: list[FramePlan], view: OpView, progress: bool = False):
        self.event = event
        self.plans = plans
        self.view = view
        self.progress = progress
        short = event.op.name.removeprefix("stablehlo.")
        self.board: Board = view.build(board=Board(short))
        self.board.height += 1.6  # the caption line under the tensors
        self.caption_y = self.board.height - 0.8
        self.board.draw()
        self.figure = self.board.fig
        self._caption = self.board.ax.text(self.view.x, self.caption_y, "", fontsize=9, va="center",
                                           ha="left", family="DejaVu Sans Mono")

    @property
    def n_frames(self) -> int:
        return len(self.plans)

    def show(self, k: int) -> None:
        """Draw frame ``k`` on the board."""
        plan = self.plans[k]
        self.board.reset()
        order = {r: i for i, r in enumerate(style.ROLE_ORDER)}
        for g in sorted(plan.paint, key=lambda g: -order.get(g.role, len(order))):
            if g.key in self.board.views:
                self.board.paint(g.key, g.indices, style.role_color(g.role))
        self._caption.set_text(plan.caption)

    def _frames(self) -> Any:
        if not self.progress:
            yield from range(self.n_frames)
            return
        from rich.progress import Progress

        with Progress(transient=True) as bar:
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
        from matplotlib.animation import PillowWriter

        return self._write(PillowWriter(fps=fps), Path(path))

    def save_mp4(self, path: str | Path, fps: float = 2.0) -> Path:
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


def animate(event: Any, elements: Sequence[tuple[int, tuple[int, ...]]] | None = None, *,
            max_frames: int = 400, progress: bool = False) -> Animation:
    """The animation of ``event``: one frame per result element (see ``plan_frames``)."""
    chosen, _ = _walk(event, elements, max_frames)
    view = OpView(event, focus=chosen[:8])
    return Animation(event, plan_frames(event, elements, max_frames=max_frames, view=view), view, progress)
