"""Renderer benchmark: a 60-frame convolution GIF.

A 1x10x10x1 input, 3x3 kernel, padding 1 (100 output elements; the first 60
frames). Reported next to a baseline measured in the same run: matplotlib
writing 60 frames of the same figure with nothing changed between frames,
which is the floor any GIF of that size costs.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

FRAMES = 60
CONV = """
func.func @main(%x: tensor<1x10x10x1xf32>, %w: tensor<3x3x1x1xf32>) -> tensor<1x10x10x1xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
       window = {stride = [1, 1], pad = [[1, 1], [1, 1]]}
       {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
       : (tensor<1x10x10x1xf32>, tensor<3x3x1x1xf32>) -> tensor<1x10x10x1xf32>
  return %0 : tensor<1x10x10x1xf32>
}
"""


def report() -> None:
    from matplotlib.animation import PillowWriter

    from hlolab.render import style
    from hlolab.render.animate import animate
    from hlolab.session import Session

    session = Session(CONV)
    session.bind(seed=0)
    session.run()
    event = session.history[-1]
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        anim = animate(event, None, max_frames=FRAMES)
        path = anim.save_gif(Path(tmp) / "conv.gif")
        t_ours = time.perf_counter() - t0
        size = path.stat().st_size
        fig = anim.figure  # the baseline writes this same figure, unchanged
        t0 = time.perf_counter()
        with style.styled():
            writer = PillowWriter(fps=2)
            with writer.saving(fig, str(Path(tmp) / "base.gif"), dpi=fig.dpi):
                for _ in range(FRAMES):
                    writer.grab_frame()
        t_base = time.perf_counter() - t0
    print(f"\nrender: {FRAMES}-frame convolution GIF (1x10x10x1 * 3x3x1x1, padding 1)")
    print(f"{'case':32s} {'s':>8s} {'ms/frame':>9s} {'vs base':>8s}")
    print(f"{'hlolab animate + save_gif':32s} {t_ours:8.2f} {t_ours / FRAMES * 1e3:9.1f} "
          f"{t_ours / t_base:7.2f}x   ({size / 1024:.0f} KiB)")
    print(f"{'matplotlib 60 unchanged frames':32s} {t_base:8.2f} {t_base / FRAMES * 1e3:9.1f}")
