"""cholesky, triangular_solve and fft vs XLA:CPU on random cases (ulp_table "linalg" rows).

jax lowers lax.linalg.cholesky / triangular_solve to LAPACK custom calls on CPU, so those two
run hand-written StableHLO (``run_text``: several independent ops of one matrix size per
program, one ``terms`` array per output); fft goes through jax's lowering of ``lax.fft``
(``stablehlo.fft``, several cases per program). ``terms`` per result element, computed in
float64/complex128 from the inputs (the bounds of tests/ops/test_linalg_oracle.py):

* cholesky: (|L|·|L|ᴴ)_ij / |L_jj|, L the exact factor, n = matrix size; 0 in the other
  triangle and for batch elements that are not positive definite (both sides: exact 0 / NaN).
* triangular_solve: |M⁻¹|·(|M|·|x| + |b|), M = op(a) as solved, x the exact solution, n = m.
* fft: max(1, log2 N)·Σ|x| over the transformed block (/N for the inverse transforms, IRFFT
  counts its doubled half twice), n = 1 (the log2 N depth is folded into terms).

The elements the ops do not read (cholesky's and triangular_solve's other triangle, the diagonal
with unit_diagonal) hold NaN/inf/denormal garbage; triangular_solve runs every one of its 24
attribute combinations.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hlolab.ops.linalg import TriangularSolveAttrs
from tests.ops.test_linalg import FORMS, pd, ttype, well_conditioned
from tests.oracle.differential.harness import Case, lax, run_cases, run_text
from tests.oracle.differential.strategies import ELEMENT_TYPES, make_values, seeds, shapes

MATRIX_TYPES = ["f32", "f64", "complex<f32>", "complex<f64>", "bf16", "f16"]


def wide(et: str) -> type:
    """The float64/complex128 type the exact values are computed in."""
    return np.complex128 if et.startswith("complex") else np.float64


def program(calls: list[tuple[str, str, list[str], str]]) -> str:
    """``@main`` running independent ops, one result each: (op name, attributes, operand
    types, result type); the operands are @main's arguments in order."""
    params, lines, rets = [], [], []
    for i, (name, attrs, types, rtype) in enumerate(calls):
        names = [f"%a{i}_{j}" for j in range(len(types))]
        params += [f"{v}: {t}" for v, t in zip(names, types, strict=True)]
        lines.append(f'  %r{i} = "stablehlo.{name}"({", ".join(names)}) {{{attrs}}} : '
                     f"({', '.join(types)}) -> {rtype}")
        rets.append((f"%r{i}", rtype))
    return (f"func.func @main({', '.join(params)}) -> ({', '.join(t for _, t in rets)}) {{\n"
            + "\n".join(lines) + f"\n  return {', '.join(r for r, _ in rets)} : "
            f"{', '.join(t for _, t in rets)}\n}}")


def other_triangle(shape: tuple[int, ...], lower: bool, diagonal: bool = False) -> np.ndarray:
    """Mask of the elements the op does not read: the strict upper (lower = True) or strict
    lower triangle, plus the diagonal if ``diagonal`` (unit_diagonal)."""
    m = shape[-1]
    keep = np.tril(np.ones((m, m), bool), -int(diagonal)) if lower else np.triu(np.ones((m, m), bool),
                                                                                 int(diagonal))
    return np.broadcast_to(~keep, shape)


def garbage(et: str, shape: tuple[int, ...], seed: int) -> np.ndarray:
    """What the unread elements hold: random values, 40% NaN/inf/denormals/extremes."""
    return make_values(et, shape, seed, special=0.4)


# --- cholesky ----------------------------------------------------------------------------------

@st.composite
def chol_spec(draw):
    """(element type, batch shape, lower, fraction of batch elements that are not PD)."""
    return (draw(st.sampled_from(MATRIX_TYPES)), draw(shapes(0, 2, max_side=4)), draw(st.booleans()),
            draw(st.sampled_from([0.0, 0.0, 0.5])))


def chol_input(et: str, batch: tuple[int, ...], n: int, lower: bool, bad: float,
               rng: np.random.Generator, seed: int) -> tuple[np.ndarray, np.ndarray, int]:
    """(a, terms of the result, number of not-PD batch elements). A not-PD element gets a pivot
    far below zero at a random column or a NaN in the read triangle."""
    h = pd(rng, batch, n, wide(et))
    flags = np.asarray(rng.random(batch) < bad) & (n > 0)
    for idx in map(tuple, np.argwhere(flags)):
        i, j = sorted(int(v) for v in rng.integers(0, n, 2))
        if rng.random() < 0.5:
            h[idx + (j, j)] = -40.0
        else:
            h[idx + (j, i)] = h[idx + (i, j)] = np.nan  # (j, i) lies in the lower triangle
    a = h.astype(ELEMENT_TYPES[et])  # rounding keeps it Hermitian
    exact = a.astype(wide(et))
    a = np.where(other_triangle(a.shape, lower), garbage(et, a.shape, seed), a)
    terms = np.zeros(a.shape)
    good = ~flags
    if n and good.any():
        low = np.linalg.cholesky(exact[good])
        prod = np.abs(low) @ np.abs(np.swapaxes(low, -1, -2))
        t = np.tril(prod / np.abs(np.diagonal(low, axis1=-2, axis2=-1))[..., None, :])
        terms[good] = t if lower else np.swapaxes(t, -1, -2)  # upper: U = Lᴴ
    return a, terms, int(flags.sum())


@settings(max_examples=25)
@given(st.integers(0, 6), st.lists(chol_spec(), min_size=1, max_size=5), seeds)
def test_cholesky_matches_xla(n, specs, seed):
    rng = np.random.default_rng(seed)
    calls, args, terms, labels = [], [], [], []
    for i, (et, batch, lower, bad) in enumerate(specs):
        a, t, n_bad = chol_input(et, batch, n, lower, bad, rng, seed + 7 * i)
        ty = ttype(a.shape, et)
        calls.append(("cholesky", f"lower = {str(lower).lower()}", [ty], ty))
        args.append(a), terms.append(t)
        labels.append(f"[{i}] {ty} lower={lower} not_pd={n_bad}")
    run_text(Case(f"cholesky n={n} seed={seed}: " + "; ".join(labels), None, args, "cholesky",
                  terms=terms, n=n), program(calls))


# --- triangular_solve --------------------------------------------------------------------------

@st.composite
def tri_spec(draw):
    """(element type, batch shape, number of right-hand sides)."""
    return draw(st.sampled_from(MATRIX_TYPES)), draw(shapes(0, 2, max_side=4)), draw(st.integers(0, 4))


def op_a(a: np.ndarray, f: TriangularSolveAttrs) -> np.ndarray:
    """op(a) as the op solves with it: the read triangle, unit diagonal, transposed/adjoint."""
    m = a.shape[-1]
    t = np.where(other_triangle(a.shape, f.lower, f.unit_diagonal), 0, a)
    if f.unit_diagonal:
        t = t + np.eye(m)
    return {"NO_TRANSPOSE": t, "TRANSPOSE": np.swapaxes(t, -1, -2),
            "ADJOINT": np.conj(np.swapaxes(t, -1, -2))}[f.transpose_a]


def tri_terms(a: np.ndarray, b: np.ndarray, f: TriangularSolveAttrs) -> np.ndarray:
    """|M⁻¹|·(|M|·|x| + |b|) per result element (Higham's componentwise bound for substitution),
    solved as M x = b (left side) or Mᵀ xᵀ = bᵀ (right side)."""
    m = a.shape[-1]
    if a.size == 0 or b.size == 0:
        return np.zeros(b.shape)
    mat = op_a(a.astype(np.complex128), f)
    bb = b.astype(np.complex128)
    if not f.left_side:
        mat, bb = np.swapaxes(mat, -1, -2), np.swapaxes(bb, -1, -2)
    x = np.linalg.solve(mat, bb)
    inv = np.linalg.inv(mat)
    t = np.abs(inv) @ (np.abs(mat) @ np.abs(x) + np.abs(bb))
    assert t.shape[-2] == m
    return t if f.left_side else np.swapaxes(t, -1, -2)


def tri_input(f: TriangularSolveAttrs, et: str, batch: tuple[int, ...], m: int, k: int,
              rng: np.random.Generator, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A diagonally dominant read triangle; NaN/inf garbage in the other one (and on the
    diagonal with unit_diagonal); b random."""
    dt = ELEMENT_TYPES[et]
    a = well_conditioned(rng, batch + (m, m), wide(et)) if m else np.zeros(batch + (0, 0))
    if f.unit_diagonal:  # off-diagonal entries stay below 1/m, so I + N is well conditioned too
        a = a - np.eye(m) * np.diagonal(a, axis1=-2, axis2=-1)[..., None, :] + np.eye(m)
    a = a.astype(dt)
    a = np.where(other_triangle(a.shape, f.lower, f.unit_diagonal), garbage(et, a.shape, seed), a)
    b = make_values(et, batch + ((m, k) if f.left_side else (k, m)), seed + 1, special=0.0)
    return a, b


@pytest.mark.parametrize("f", FORMS, ids=lambda f: f"{'L' if f.left_side else 'R'}"
                         f"{'lo' if f.lower else 'up'}{'U' if f.unit_diagonal else ''}-{f.transpose_a}")
@settings(max_examples=3)  # per form; the first example is hypothesis's minimal one
@given(m=st.integers(0, 6), specs=st.lists(tri_spec(), min_size=1, max_size=3), seed=seeds)
def test_triangular_solve_matches_xla(f, m, specs, seed):
    rng = np.random.default_rng(seed)
    calls, args, terms, labels = [], [], [], []
    for i, (et, batch, k) in enumerate(specs):
        a, b = tri_input(f, et, batch, m, k, rng, seed + 7 * i)
        ta, tb = ttype(a.shape, et), ttype(b.shape, et)
        attrs = (f"left_side = {str(f.left_side).lower()}, lower = {str(f.lower).lower()}, "
                 f"unit_diagonal = {str(f.unit_diagonal).lower()}, "
                 f"transpose_a = #stablehlo<transpose {f.transpose_a}>")
        calls.append(("triangular_solve", attrs, [ta, tb], tb))
        args += [a, b]
        terms.append(tri_terms(a, b, f))
        labels.append(f"[{i}] {ta} {tb} {attrs}")
    run_text(Case(f"triangular_solve m={m} seed={seed}: " + "; ".join(labels), None, args,
                  "triangular_solve", terms=terms, n=m), program(calls))


# --- fft ---------------------------------------------------------------------------------------

@st.composite
def fft_case(draw) -> Case:
    kind = draw(st.sampled_from(["FFT", "IFFT", "RFFT", "IRFFT"]))
    lengths = tuple(draw(st.lists(st.integers(1, 8), min_size=1, max_size=3)))
    batch = draw(shapes(0, 2, max_side=4))
    double = draw(st.booleans())
    seed = draw(seeds)
    real = "f64" if double else "f32"
    et = real if kind == "RFFT" else f"complex<{real}>"
    shape = batch + (lengths[:-1] + (lengths[-1] // 2 + 1,) if kind == "IRFFT" else lengths)
    x = make_values(et, shape, seed, special=0.0)
    # a NaN in both parts makes its whole transformed block NaN+NaNj on both sides; (RFFT leaves
    # some parts finite, and check() cannot bound a complex element with one NaN part)
    if kind != "RFFT" and x.size and draw(st.booleans()):
        x.reshape(-1)[draw(st.integers(0, x.size - 1))] = complex(np.nan, np.nan)
    size = math.prod(lengths)
    block = tuple(range(len(batch), len(shape)))
    total = np.abs(x.astype(wide(et))).sum(axis=block, keepdims=True) * max(1.0, math.log2(size))
    if kind in ("IFFT", "IRFFT"):
        total = total / size * (2 if kind == "IRFFT" else 1)
    terms = np.broadcast_to(total, batch + lengths if kind == "IRFFT" else
                            batch + lengths[:-1] + (lengths[-1] // 2 + 1,) if kind == "RFFT" else shape)

    def fn(v):
        return lax.fft(v, kind, lengths)

    return Case(f"fft {kind} {et}{shape} fft_length={list(lengths)} seed={seed}", fn, [x], "fft",
                terms=[np.array(terms)], n=1)


@settings(max_examples=100)
@given(st.lists(fft_case(), min_size=1, max_size=8))
def test_fft_matches_xla(cases):
    run_cases(cases)
