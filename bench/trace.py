"""Program tracing benchmark: single-element backward queries on a 200-op program.

The program (tests/trace/programs.py ``chain_program``) has 200 ops over
250x400 f32 tensors (10^5 elements): element-wise math, transposes, slices
and pads, concatenations, selects, reductions and dot_generals. A query
walks back from one element of the result to the arguments; it is reported
next to the time to run the program once, measured in the same run.
"""

from __future__ import annotations

from bench.run import best_time as _best
from hlolab.session import Session


def report(repeat: int = 3) -> None:
    from tests.trace.programs import chain_program

    text = chain_program(200, 100_000, seed=0)

    def run() -> Session:
        s = Session(text)
        s.bind(seed=0)
        s.run()
        return s

    t_run = _best(run, repeat)
    s = run()
    (result,) = s.result_defs()
    print(f"\nprogram trace: 200 ops x 10^5 elements; running it takes {t_run * 1e3:.0f} ms")
    print(f"{'query':32s} {'sources':>10s} {'ms':>10s} {'vs run':>8s}")
    for index in [(0, 0), (125, 200), (249, 399)]:
        trace = s.sources(result, index)
        n = sum(g.count for g in trace.groups)
        t = _best(lambda index=index: s.sources(result, index), repeat)
        print(f"{'back from result' + str(list(index)):32s} {n:10d} {t * 1e3:10.1f} {t / t_run:7.2f}x")
