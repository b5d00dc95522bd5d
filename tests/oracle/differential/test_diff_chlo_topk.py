"""chlo.top_k vs XLA:CPU: ``jax.lax.top_k`` lowers to ``chlo.top_k``; both outputs compared bit-exact
(ulp_table "sort": data movement; NaN == NaN whatever the payload, as XLA:CPU canonicalizes bf16
NaN payloads in the values it returns). Rows hold every edge value of the type (NaNs of both
signs and several payloads, signalling NaNs, +-inf, +-0, denormals, max) twice, so ties,
NaN ranks and -0.0 vs +0.0 are all decided; other rows are random with many repeats."""

from __future__ import annotations

import numpy as np
import pytest

from tests.oracle.differential.harness import Case, lax, run_cases
from tests.oracle.differential.strategies import ELEMENT_TYPES, float_edges, int_edges, make_values

TYPES = ["f32", "f16", "bf16", "f64", "f8E5M2", "f8E4M3FN", "i32", "ui8", "i8", "i1", "i64"]
# (shape, ks): rank 1..3, k = 0, 1, middle, the whole last dim
SHAPES = [((1,), (0, 1)), ((7,), (0, 1, 3, 7)), ((3, 5), (2, 5)), ((2, 3, 16), (1, 5, 16)),
          ((4, 0), (0,)), ((0, 6), (2,))]


def edges(et: str) -> np.ndarray:
    dt = ELEMENT_TYPES[et]
    if et == "i1":
        return np.array([True, False])
    return int_edges(dt) if dt.kind in "iu" else float_edges(dt)


def edge_rows(et: str, rows: int, seed: int) -> np.ndarray:
    """``rows`` shuffles of the type's edge values, each twice (every value ties)."""
    e = edges(et)
    row = np.concatenate([e, e])
    rng = np.random.default_rng(seed)
    return np.stack([row[rng.permutation(row.size)] for _ in range(rows)])


def repeats(et: str, shape: tuple[int, ...], seed: int) -> np.ndarray:
    """Random values drawn from a few distinct ones (edges included), so rows have ties."""
    pool = make_values(et, (6,), seed).reshape(-1)
    rng = np.random.default_rng(seed + 1)
    return pool[rng.integers(0, pool.size, shape)]


def top_k_case(label: str, x: np.ndarray, k: int) -> Case:
    return Case(f"{label} k={k}", lambda a, k=k: lax.top_k(a, k), [x], "sort")


@pytest.mark.parametrize("et", TYPES)
def test_edge_rows(et):
    x = edge_rows(et, 3, 7)
    n = x.shape[-1]
    ks = sorted({0, 1, n // 2, n})
    assert run_cases([top_k_case(f"{et} edges", x, k) for k in ks]) == len(ks)


@pytest.mark.parametrize("et", TYPES)
def test_shapes(et):
    cases = []
    for s, (shape, ks) in enumerate(SHAPES):
        for make in (make_values, repeats):
            x = make(et, shape, 100 + s)
            cases += [top_k_case(f"{et} {make.__name__} {shape}", x, k) for k in ks]
    assert run_cases(cases) == len(cases) == 2 * sum(len(ks) for _, ks in SHAPES)
