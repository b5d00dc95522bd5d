"""Renderer benchmark: GIF export before and after issue 23, measured in the same run.

Two GIFs: the gallery's gather (the spec example, 48 frames) and a convolution
(1x10x10x1 input, 3x3 kernel, padding 1: 100 windows, 60 frames spread over
them). For each, the same frame plans are written twice on two boards built
the same way:

- before: today's method before issue 23, kept here as the baseline
  (``save_gif_before``): every frame repaints the board's artists (cell
  colours, value texts, caption), matplotlib's ``PillowWriter`` redraws the
  whole figure, and Pillow quantizes each frame with its own palette;
- after: ``Animation.save_gif`` (the static board drawn once, per frame only
  the changed cells and the caption, one fixed palette).

Reported: seconds, ms per frame and the ratio, for the export alone and for
``animate()`` + export (planning and building the board are the same code in
both).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

CONV_FRAMES = 60
GATHER_FRAMES = 48
CONV = """
func.func @main(%x: tensor<1x10x10x1xf32>, %w: tensor<3x3x1x1xf32>) -> tensor<1x10x10x1xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
       window = {stride = [1, 1], pad = [[1, 1], [1, 1]]}
       {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
       : (tensor<1x10x10x1xf32>, tensor<3x3x1x1xf32>) -> tensor<1x10x10x1xf32>
  return %0 : tensor<1x10x10x1xf32>
}
"""


def save_gif_before(anim: Any, path: Path, fps: float = 2.0) -> Path:
    """The GIF export hlolab had before issue 23 (``Animation.show`` + ``_write``), over the
    frames of ``anim``: per frame every cell back to its base colour, the frame's cells
    painted, the result values and the caption set, then ``PillowWriter.grab_frame`` (a
    full figure redraw); Pillow quantizes every frame on its own when the GIF is written.
    The one addition: blank (not yet computed) result cells are set to "", so both
    methods draw the same picture."""
    from matplotlib.animation import PillowWriter

    from hlolab.render import style
    from hlolab.render.layout import format_cell

    board = anim.board
    caption = board.ax.text(anim.view.x, anim.caption_y, "", fontsize=9, va="top", ha="left",
                            family="DejaVu Sans Mono", linespacing=1.3)
    order = {r: i for i, r in enumerate(style.ROLE_ORDER)}

    def set_values(plan: Any) -> None:
        for key, view in board.views.items():
            if not key.startswith("result") or not view.texts:
                continue
            arr = plan.result_values.get(key) if plan.result_values is not None else None
            arr = view.values if arr is None else arr
            cells = arr[tuple(view.index.T)] if view.index.shape[1] else np.asarray(arr).reshape(1)
            pend = plan.pending.get(key)
            blank = pend.mask(np.asarray(arr).shape)[tuple(view.index.T)] if pend is not None \
                and view.index.shape[1] else np.zeros(len(cells), bool)
            for t, v, b in zip(view.texts, cells, blank, strict=False):
                t.set_text("" if b else format_cell(v))

    def show(k: int) -> None:
        plan = anim.plans[k]
        board.reset()
        set_values(plan)
        for g in sorted(plan.paint, key=lambda g: -order.get(g.role, len(order))):
            if g.key in board.views:
                board.paint(g.key, g.indices, style.role_color(g.role))
        caption.set_text(plan.caption)

    writer = PillowWriter(fps=fps)
    with style.styled(), writer.saving(anim.figure, str(path), dpi=anim.figure.dpi):
        for k in range(anim.n_frames):
            show(k)
            writer.grab_frame()
    return path


def _events() -> list[tuple[str, Any, int]]:
    from hlolab.render.export import op_target
    from hlolab.session import Session

    gather = op_target("gather", "spec-example").event
    session = Session(CONV)
    session.bind(seed=0)
    session.run()
    return [("gather, spec example", gather, GATHER_FRAMES),
            ("conv 1x10x10x1 * 3x3, pad 1", session.history[-1], CONV_FRAMES)]


def _timed(fn: Any) -> tuple[Any, float]:
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def report() -> None:
    from PIL import Image

    from hlolab.render.animate import animate

    print("\nrender: GIF export before issue 23 (full redraw per frame, PillowWriter, a palette per "
          "frame) and after (board drawn once, changed cells only, one fixed palette), same frames")
    print(f"{'case':30s} {'frames':>6s} {'size':>10s} {'build s':>8s} {'before s':>9s} {'ms/frame':>9s} "
          f"{'after s':>8s} {'ms/frame':>9s} {'export':>7s} {'total':>7s} {'KiB before/after':>17s}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, event, frames in _events():
            old, t_build_old = _timed(lambda event=event, frames=frames: animate(event, max_frames=frames))
            before, t_old = _timed(lambda old=old: save_gif_before(old, Path(tmp) / "before.gif"))
            old.close()
            new, t_build = _timed(lambda event=event, frames=frames: animate(event, max_frames=frames))
            after, t_new = _timed(lambda new=new: new.save_gif(Path(tmp) / "after.gif"))
            new.close()
            a, b = Image.open(after), Image.open(before)
            if (a.n_frames, a.size) != (b.n_frames, b.size):
                print(f"{name:30s} MISMATCH: after {a.n_frames} frames {a.size}, "
                      f"before {b.n_frames} {b.size}")
                continue
            n = a.n_frames
            size = f"{a.size[0]}x{a.size[1]}"
            print(f"{name:30s} {n:6d} {size:>10s} {t_build:8.2f} {t_old:9.2f} {t_old / n * 1e3:9.1f} "
                  f"{t_new:8.2f} {t_new / n * 1e3:9.1f} {t_old / t_new:6.1f}x "
                  f"{(t_build_old + t_old) / (t_build + t_new):6.1f}x "
                  f"{before.stat().st_size / 1024:8.0f}/{after.stat().st_size / 1024:<8.0f}")
    print("(export: save_gif before / after; total: animate() + save_gif before / after)")
