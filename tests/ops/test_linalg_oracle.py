"""triangular_solve, fft, cholesky against XLA:CPU.

The same StableHLO text hlolab runs is compiled by XLA:CPU (``run_xla``: its
TriangularSolveExpander / CholeskyExpander / DUCC FFT); jax's own entry points
(lax.linalg.* lower to LAPACK calls on CPU, jnp.fft.* to stablehlo.fft) are
checked too. Float results differ by rounding only; the bounds, written down:

* triangular_solve: per element |Δx| <= k·m·eps·(|M⁻¹|·(|M|·|x| + |b|)), k = 2
  (Higham's componentwise bound for substitution, M the triangular system
  matrix); measured worst ratio 0.2 for f32/f64/complex64 and non-dominant M.
* fft: |Δ| <= k·log2(N)·eps·Σ|x| (divided by N for the inverse transforms;
  IRFFT counts its doubled half twice), k = 2; measured worst 0.21.
* cholesky: |ΔL_ij| <= k·n·eps·(|L|·|L|ᴴ)_ij / |L_jj|, k = 2; measured worst
  0.33. The zero pattern (other triangle) and the NaN pattern of non positive
  definite batch elements are bit-exact.
* bf16/f16: hlolab rounds once from f32, XLA:CPU rounds every intermediate, so
  the bounds above use the element type's eps (XLA's own rounding dominates).
"""

from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import pytest

from tests.ops.test_linalg import (
    DT,
    FORMS,
    chol_program,
    chol_run,
    fft_case,
    fft_program,
    fft_run,
    pd,
    tri_program,
    tri_run,
    triangle_of,
    well_conditioned,
)
from tests.xla_oracle import jax, run_xla

jax.config.update("jax_platforms", "cpu")
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

K = 2


def eps_of(e: str) -> float:
    dt = DT[e]
    return float(ml_dtypes.finfo(np.float32 if np.dtype(dt) == np.complex64 else
                                 np.float64 if np.dtype(dt) == np.complex128 else dt).eps)


def as_c128(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x)
    if x.dtype in (ml_dtypes.bfloat16, np.float16):
        x = x.astype(np.float32)
    return x.astype(np.complex128)


# --- triangular_solve ----------------------------------------------------------------------

def tri_bound(a, b, x, f, e) -> np.ndarray:
    t = triangle_of(as_c128(a), f)
    op_a = {"NO_TRANSPOSE": t, "TRANSPOSE": np.swapaxes(t, -1, -2),
            "ADJOINT": np.conj(np.swapaxes(t, -1, -2))}[f.transpose_a]
    m_mat = op_a if f.left_side else np.swapaxes(op_a, -1, -2)
    xx, bb = as_c128(x), as_c128(b)
    if not f.left_side:
        xx, bb = np.swapaxes(xx, -1, -2), np.swapaxes(bb, -1, -2)
    bound = np.abs(np.linalg.inv(m_mat)) @ (np.abs(m_mat) @ np.abs(xx) + np.abs(bb))
    if not f.left_side:
        bound = np.swapaxes(bound, -1, -2)
    return K * a.shape[-1] * eps_of(e) * bound


def tri_inputs(f, e, rng, m=6, batch=(3,)):
    a = well_conditioned(rng, batch + (m, m), np.complex128 if "complex" in e else np.float64) * 3
    noise = rng.standard_normal(a.shape)
    a = a + (noise * (1 + 1j) if "complex" in e else noise)  # not diagonally dominant
    bsh = batch + ((m, 4) if f.left_side else (4, m))
    b = rng.standard_normal(bsh)
    return a.astype(DT[e]), b.astype(DT[e])


@pytest.mark.parametrize("f", FORMS, ids=lambda f: f"{'L' if f.left_side else 'R'}"
                         f"{'lo' if f.lower else 'up'}{'U' if f.unit_diagonal else ''}-{f.transpose_a}")
def test_triangular_solve_matches_xla(f):
    rng = np.random.default_rng(21)
    for e in ("f32", "f64", "complex<f32>"):
        a, b = tri_inputs(f, e, rng)
        got = tri_run(a, b, f, e).outputs[0]
        text = tri_program(a.shape, b.shape, e, f.left_side, f.lower, f.unit_diagonal, f.transpose_a)
        bound = tri_bound(a, b, got, f, e)
        xla = run_xla(text, a, b)[0]
        lapack = np.asarray(lax.linalg.triangular_solve(
            a, b, left_side=f.left_side, lower=f.lower, transpose_a=f.transpose_a != "NO_TRANSPOSE",
            conjugate_a=f.transpose_a == "ADJOINT", unit_diagonal=f.unit_diagonal))
        for want in (xla, lapack):
            assert want.dtype == got.dtype
            assert np.all(np.abs(as_c128(got) - as_c128(want)) <= bound), (e, np.max(
                np.abs(as_c128(got) - as_c128(want)) / bound))


@pytest.mark.parametrize("e", ["bf16", "f16"])
def test_triangular_solve_narrow_floats_within_xla_rounding(e):
    rng = np.random.default_rng(22)
    for f in FORMS[::3]:
        a = well_conditioned(rng, (2, 5, 5), np.float32).astype(DT[e])
        b = rng.standard_normal((2, 5, 3) if f.left_side else (2, 3, 5)).astype(DT[e])
        got = tri_run(a, b, f, e).outputs[0]
        text = tri_program(a.shape, b.shape, e, f.left_side, f.lower, f.unit_diagonal, f.transpose_a)
        xla = run_xla(text, a, b)[0]
        assert xla.dtype == got.dtype
        assert np.all(np.abs(as_c128(got) - as_c128(xla)) <= tri_bound(a, b, got, f, e))


# --- fft -------------------------------------------------------------------------------------

JNP = {"FFT": jnp.fft.fftn, "IFFT": jnp.fft.ifftn, "RFFT": jnp.fft.rfftn, "IRFFT": jnp.fft.irfftn}


@pytest.mark.parametrize("kind", ["FFT", "IFFT", "RFFT", "IRFFT"])
def test_fft_matches_jnp_fft(kind):
    for single, lengths, batch in itertools.product((True, False), ([8], [7], [4, 6], [3, 4, 5]),
                                                    ((), (2, 1))):
        rng = np.random.default_rng(len(lengths) + 7 * len(batch))
        x, e, r_shape, r_e = fft_case(kind, batch, lengths, np.complex64 if single else np.complex128,
                                      rng)
        got = fft_run(kind, x, e, lengths, r_shape, r_e).outputs[0]
        axes = tuple(range(x.ndim - len(lengths), x.ndim))
        kw = {"s": lengths} if kind in ("RFFT", "IRFFT") else {}
        want = np.asarray(JNP[kind](x, axes=axes, **kw))
        xla = run_xla(fft_program(x.shape, e, kind, lengths, r_shape, r_e), x)[0]
        n = int(np.prod(lengths))
        lead = x.shape[:x.ndim - len(lengths)]
        total = np.abs(x).reshape(lead + (-1,)).sum(-1).reshape(lead + (1,) * len(lengths))
        if kind == "IFFT":
            total = total / n
        if kind == "IRFFT":
            total = 2 * total / n
        bound = K * max(1.0, np.log2(n)) * np.finfo(np.float32 if single else np.float64).eps * total
        for w in (want, xla):
            assert w.dtype == got.dtype and w.shape == got.shape
            assert np.all(np.abs(got - w) <= bound), (kind, lengths, batch, single)


# --- cholesky --------------------------------------------------------------------------------

def chol_check(got, want, lower, e) -> None:
    assert got.dtype == want.dtype
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.array_equal(got == 0, want == 0)  # the other triangle: XLA's zeros
    low = got if lower else np.conj(np.swapaxes(got, -1, -2))
    low_w = want if lower else np.conj(np.swapaxes(want, -1, -2))
    ok = ~np.isnan(low).any(axis=(-1, -2))
    low, low_w = as_c128(low[ok]), as_c128(low_w[ok])
    n = got.shape[-1]
    prod = np.abs(low) @ np.abs(np.swapaxes(low, -1, -2))
    diag = np.abs(np.diagonal(low, axis1=-2, axis2=-1))[..., None, :]
    bound = K * n * eps_of(e) * prod / diag
    assert np.all(np.abs(low - low_w) <= bound), np.max(np.abs(low - low_w) / bound)


@pytest.mark.parametrize("e", ["f32", "f64", "complex<f32>"])
@pytest.mark.parametrize("lower", [True, False])
def test_cholesky_matches_xla(e, lower):
    rng = np.random.default_rng(31)
    for n, batch in ((1, ()), (3, (2,)), (8, (2, 2)), (20, ())):
        a = pd(rng, batch, n, DT[e])
        got = chol_run(a, e, lower).outputs[0]
        chol_check(got, run_xla(chol_program(a.shape, e, lower), a)[0], lower, e)
        # jax's entry point (LAPACK on CPU) reads the same triangle
        lapack = np.asarray(lax.linalg.cholesky(a if lower else np.conj(np.swapaxes(a, -1, -2)),
                                                symmetrize_input=False))
        chol_check(got if lower else np.conj(np.swapaxes(got, -1, -2)), lapack, True, e)


@pytest.mark.parametrize("lower", [True, False])
def test_cholesky_not_positive_definite_matches_xla(lower):
    rng = np.random.default_rng(32)
    a = pd(rng, (4,), 4, np.float32)
    a[1, 2, 2] = -40.0          # negative pivot at column 2
    a[2, 3, 3] = 0.0            # negative pivot at the last column
    a[3, 0, 0] = np.nan         # NaN input
    if not lower:
        a = np.swapaxes(a, -1, -2).copy()
    got = chol_run(a, "f32", lower).outputs[0]
    want = run_xla(chol_program(a.shape, "f32", lower), a)[0]
    chol_check(got, want, lower, "f32")
    assert np.isnan(got[1:]).all() and np.isfinite(got[0]).all()


@pytest.mark.parametrize("e", ["bf16", "f16"])
def test_cholesky_narrow_floats_within_xla_rounding(e):
    a = pd(np.random.default_rng(33), (2,), 6, np.float32).astype(DT[e])
    got = chol_run(a, e, True).outputs[0]
    chol_check(got, run_xla(chol_program(a.shape, e, True), a)[0], True, e)
