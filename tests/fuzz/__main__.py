"""``python -m tests.fuzz --minutes N [--seed S] [--out DIR]``: a long fuzz campaign (outside CI)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from tests.fuzz.campaign import campaign, save_findings


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--minutes", type=float, default=5.0)
    ap.add_argument("--seed", type=int, default=int(time.time()) % 100000)
    ap.add_argument("--out", default="fuzz-findings", help="where findings are written")
    ns = ap.parse_args(argv)
    print(f"fuzzing for {ns.minutes} min, seed {ns.seed}", flush=True)
    t0 = time.monotonic()
    tally = campaign(ns.seed, seconds=ns.minutes * 60,
                     progress=lambda t: print(f"  {time.monotonic() - t0:7.0f} s  {t.line()}", flush=True))
    print(tally.line())
    for f in tally.findings:
        print(f"  {f.kind}: {f.source}: {f.error}")
    if tally.findings:
        paths = save_findings(tally, Path(ns.out))
        print(f"wrote {len(paths)} findings to {ns.out}/")
    return 1 if tally.findings else 0


if __name__ == "__main__":
    sys.exit(main())
