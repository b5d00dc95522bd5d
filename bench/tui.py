"""TUI benchmark: cursor move to repaint on a 64x64 gather explorer, and time to first frame.

    python -m bench.tui [--repeat N]

Headless (Textual's ``run_test``). "handle" is the work one arrow key causes, called
directly so Pilot's idle-detection sleeps are not counted: the grid's move action and the
explorer's CursorMoved handler (provenance highlights on every grid, the explanation);
"paint" renders every visible line of every grid afterwards (what the next screen refresh
draws; the compositor's own work is not included). The same is measured on the default
4x5 gather in the same run, so the ratio says how the cost grows with the tensor. Time to
first frame is measured in a fresh interpreter, next to the bare interpreter start.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import time

BIG = {"operand": "64x64", "start_indices": "64x2", "offset_dims": "1", "collapsed_slice_dims": "0",
       "start_index_map": "0,1", "index_vector_dim": "1", "slice_sizes": "1,64"}

FIRST_FRAME = """
import asyncio, sys, time
t0 = time.perf_counter()
from hlolab.tui.app import HloLabApp
async def main():
    app = HloLabApp(open_op=sys.argv[1] or None)
    async with app.run_test(size=(120, 40)) as pilot:
        while True:
            await app.workers.wait_for_complete()
            await pilot.pause()
            if not getattr(app.screen, "busy", False):
                break
        app.screen._compositor.render_update(full=True)
        print(time.perf_counter() - t0)
asyncio.run(main())
"""


async def _moves(params: dict[str, str] | None, repeat: int) -> tuple[list[float], list[float], tuple]:
    from hlolab.tui.app import HloLabApp
    from hlolab.tui.widgets.grid import TensorGrid

    app = HloLabApp()
    async with app.run_test(size=(160, 50)) as pilot:
        app.open_op("gather", params=params)
        while True:
            await app.workers.wait_for_complete()
            await pilot.pause()
            if not getattr(app.screen, "busy", True):
                break
        screen = app.screen
        result = screen.grid("result0")
        result.focus()
        await pilot.pause()
        handle, paint = [], []
        moves = [(0, 1), (1, 0), (0, -1), (-1, 0)]
        for k in range(repeat):
            await pilot.pause()  # let the previous refresh happen outside the timing
            t0 = time.perf_counter()
            result.action_move(*moves[k % 4])
            screen._refresh_driver()  # what the CursorMoved handler does
            t1 = time.perf_counter()
            for grid in screen.query(TensorGrid):
                for y in range(grid.size.height):
                    grid.render_line(y)
            t2 = time.perf_counter()
            handle.append(t1 - t0)
            paint.append(t2 - t1)
        return handle, paint, result.value.shape


def _first_frame(op: str) -> float:
    out = subprocess.run([sys.executable, "-c", FIRST_FRAME, op], capture_output=True, text=True,
                         check=True)
    return float(out.stdout.strip().splitlines()[-1])


def _bare() -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=40)
    ns = ap.parse_args(argv)
    rows = {}
    for label, params in (("gather 4x5 (default)", None), ("gather 64x64", BIG)):
        handle, paint, shape = asyncio.run(_moves(params, ns.repeat))
        rows[label] = (statistics.median(handle), statistics.median(paint), shape)
    print(f"{'cursor move':24s} {'result':>10s} {'handle ms':>10s} {'paint ms':>10s} {'total ms':>10s}")
    for label, (h, p, shape) in rows.items():
        print(f"{label:24s} {'x'.join(map(str, shape)):>10s} {h * 1e3:10.2f} {p * 1e3:10.2f} "
              f"{(h + p) * 1e3:10.2f}")
    small, big = rows["gather 4x5 (default)"], rows["gather 64x64"]
    print(f"64x64 / 4x5 total ratio: {(big[0] + big[1]) / (small[0] + small[1]):.2f} (goal: < 50 ms total)")
    bare = min(_bare() for _ in range(3))
    home = min(_first_frame("") for _ in range(3))
    explorer = min(_first_frame("gather") for _ in range(3))
    print(f"first frame (after interpreter start): home {home * 1e3:.0f} ms, gather explorer "
          f"{explorer * 1e3:.0f} ms; bare interpreter start {bare * 1e3:.0f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
