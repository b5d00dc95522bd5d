"""Benchmarks: hlolab ops against the direct numpy equivalent, measured in the same run.

    python -m bench.run [--filter NAME] [--repeat N]     (--filter trace: the program trace only;
                                                         --filter render: GIF export before/after;
                                                         --filter tui: cursor latency, first frame)

Each case times one op evaluation through hlolab (verify + evaluate, no
parsing) and the plain numpy expression that computes the same values, and
reports the ratio (and jax.jit on XLA:CPU where jax is installed). Results
are checked equal before timing, so a fast wrong answer cannot pass.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from bench.cases import CASES
from hlolab.errors import HloLabError


@dataclass
class Case:
    name: str
    elements: int  # output elements
    hlolab: Callable[[], object]
    numpy: Callable[[], object]
    jax: Callable[[], object] | None = None
    # float contractions sum in another order than the numpy baseline: compare
    # with this relative tolerance instead of bit-exactly
    rtol: float = 0.0


def best_time(fn: Callable[[], object], repeat: int) -> float:
    fn()  # warm up (imports, caches, jit)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def same_values(ours: np.ndarray, ref: np.ndarray, rtol: float) -> bool:
    """Bit-identical, or (rtol > 0) equal within rtol of the largest magnitude."""
    if ours.shape != ref.shape or ours.dtype != ref.dtype:
        return False
    if rtol == 0.0:
        return ours.tobytes() == ref.tobytes()
    scale = float(np.max(np.abs(ref))) if ref.size else 0.0
    return bool(np.all(np.abs(ours.astype(np.float64) - ref) <= rtol * scale))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--filter", default="")
    ap.add_argument("--repeat", type=int, default=5)
    ns = ap.parse_args(argv)
    print(f"{'case':32s} {'out elems':>10s} {'hlolab ms':>10s} {'numpy ms':>10s} "
          f"{'ratio':>7s} {'jax ms':>8s}")
    for make in CASES:
        case = make()
        if ns.filter not in case.name:
            continue
        try:
            ours, ref = np.asarray(case.hlolab()), np.asarray(case.numpy())
        except HloLabError as e:
            print(f"{case.name:32s} ERROR: {e.short()}")
            continue
        if not same_values(ours, ref, case.rtol):
            print(f"{case.name:32s} MISMATCH between hlolab and numpy: not timed")
            continue
        t_h = best_time(case.hlolab, ns.repeat)
        t_n = best_time(case.numpy, ns.repeat)
        t_j = best_time(case.jax, ns.repeat) if case.jax else None
        jax_s = f"{t_j * 1e3:8.2f}" if t_j is not None else f"{'-':>8s}"
        print(f"{case.name:32s} {case.elements:10d} {t_h * 1e3:10.2f} {t_n * 1e3:10.2f} "
              f"{t_h / t_n:6.2f}x {jax_s}")
    if ns.filter in "trace":
        from bench.trace import report

        report(min(ns.repeat, 3))
    if ns.filter in "render":
        from bench.render import report as render_report

        render_report()
    if ns.filter in "tui":
        from bench.tui import main as tui_report

        print("\ntui: cursor-move-to-repaint latency and time to first frame")
        tui_report([])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
