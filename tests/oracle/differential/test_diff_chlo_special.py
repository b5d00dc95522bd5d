"""CHLO special functions vs XLA:CPU: every op on bf16, f16, f32 and f64.

Each (op, type) case is one program: the type's shared edge values (strategies.float_edges:
NaNs, +-inf, +-0, denormals, the largest finite values, ...) and a spread of random values
(fixed seeds), lowered by jax (lax.erf, ...) to chlo.* text and run by hlolab and by XLA:CPU.

Comparison: NaN matches NaN; otherwise the ulp distance, where XLA's flush-to-zero result
(hlolab on flushed inputs, output flushed) also counts (ulp_table.FTZ_RULE). Most pairs agree
within 3 ulp; tests/oracle/ulp_table.py (CHLO_BOUNDS) lists the measured
exceptions and why. Run with ``-s`` to see the worst
ulp per op and type (WORST).

"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from hlolab.numerics import ulp_distance
from tests.oracle.differential.harness import WORKER, Case, hlolab_run, jax, lax, lower
from tests.oracle.differential.strategies import ELEMENT_TYPES, float_edges
from tests.oracle.numerics import flush
from tests.oracle.ulp_table import chlo_bound

TYPES = ["bf16", "f16", "f32", "f64"]
N_RANDOM = 400

WORST: dict[tuple[str, str], tuple[int, int]] = {}  # (op, type) -> (worst ulp, elements compared)


def _spread(rng: np.random.Generator, n: int, lo: int, hi: int) -> np.ndarray:
    return rng.standard_normal(n) * np.exp2(rng.uniform(lo, hi, n))


def _values(op: str, et: str, seed: int) -> list[np.ndarray]:
    """The operands of one case: edge values first, then random ones."""
    dt = ELEMENT_TYPES[et]
    rng = np.random.default_rng(seed)
    edges = float_edges(dt).astype(np.float64)
    n = N_RANDOM
    with np.errstate(over="ignore", invalid="ignore"):
        if op == "erf_inv":
            xs = [np.concatenate([edges, rng.uniform(-1, 1, n), 1 - np.exp2(-rng.uniform(1, 20, 20))])]
        elif op == "zeta":
            x = np.concatenate([edges, 1 + np.abs(_spread(rng, n, -4, 5)), [2, 4, 1, 3]])
            q = np.concatenate([np.resize(_spread(rng, 8, -2, 3), len(edges)), _spread(rng, n, -3, 4),
                                [1, 1, -2, -2]])
            xs = [x, q]
        elif op == "polygamma":
            nn = np.concatenate([np.resize([0, 1, 2, 3, -1, 0.5], len(edges)), rng.integers(0, 5, n)])
            x = np.concatenate([edges, _spread(rng, n, -3, 4)])
            xs = [nn, x]
        else:
            scale = {"erf": (-10, 3), "erfc": (-10, 4), "bessel_i1e": (-8, 7)}.get(op, (-6, 6))
            xs = [np.concatenate([edges, _spread(rng, n, *scale), [1.0, 2.0, 0.5, -0.5, -1.5]])]
        return [x.astype(dt) for x in xs]


FNS = {"erf": lax.erf, "erfc": lax.erfc, "erf_inv": lax.erf_inv, "lgamma": lax.lgamma,
       "digamma": lax.digamma, "bessel_i1e": lax.bessel_i1e, "polygamma": lax.polygamma,
       "zeta": lax.zeta}
PAIRS = [(op, et) for op in FNS for et in TYPES]


def _isnan(a: np.ndarray) -> np.ndarray:
    return np.isnan(a.astype(np.float64))


@pytest.mark.parametrize("op,et", PAIRS)
def test_chlo_special_matches_xla(op, et):
    args = _values(op, et, seed=zlib.crc32(f"{op} {et}".encode()))
    case = Case(f"{op} {et}", FNS[op], args, op)
    text, flat = lower([case])
    assert f"chlo.{op}" in text, text  # jax kept the CHLO op: this is what hlolab runs
    fut = WORKER.submit(text, flat)
    ours = hlolab_run(text, flat, case.label)[0]
    flushed = flush(hlolab_run(text, [flush(a) for a in flat], case.label)[0])
    ref = WORKER.result(fut, case.label)[0]
    assert ours.dtype == ref.dtype and ours.shape == ref.shape
    both_nan = _isnan(ours) & _isnan(ref)
    dist = np.minimum(ulp_distance(flush(ours), ref), ulp_distance(flushed, ref))
    dist = np.where(both_nan, 0, dist)
    # zeta's summands (q + k)^-x fall below the normal range for results under ~2^24 * tiny:
    # XLA:CPU flushes those subnormal intermediates (FTZ_RULE), hlolab keeps them
    if op in ("zeta", "polygamma"):
        tiny = float(np.finfo(np.float64 if et == "f64" else np.float32).tiny)
        dist = np.where(np.abs(ref.astype(np.float64)) < tiny * 2.0**24, 0, dist)
    worst = int(dist.max())
    WORST[(op, et)] = (worst, dist.size)
    limit = int(chlo_bound(op, et).k)  # tests/oracle/ulp_table.py
    bad = np.argwhere(dist > limit)[:5].ravel()
    assert not len(bad), (f"{op} {et}: {int((dist > limit).sum())} of {dist.size} elements over {limit} "
                          f"ulp; (inputs, hlolab, xla): "
                          f"{[([float(a[i]) for a in args], float(ours[i]), float(ref[i])) for i in bad]}")


def test_report_worst_ulp_per_op_and_type():
    """Prints the table (pytest -s); runs last in this module."""
    if len(WORST) < len(PAIRS):
        pytest.skip("run the whole module to see the table")
    lines = [f"{'op':11s}" + "".join(f"{et:>14s}" for et in TYPES)]
    for op in FNS:
        lines.append(f"{op:11s}" + "".join(f"{WORST[(op, et)][0]:>8d} / {WORST[(op, et)][1]:<4d}"
                                           for et in TYPES))
    print("\nworst ulp / elements compared, hlolab vs XLA:CPU\n" + "\n".join(lines))
    assert jax is not None
