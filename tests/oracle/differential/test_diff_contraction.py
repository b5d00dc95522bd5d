"""dot_general and conv_general_dilated (lhs/rhs dilation, feature/batch groups, negative padding)
vs XLA:CPU: integers bit-exact, floats within k * n * eps * sum|terms| (ulp_table CONTRACTION);
complex dot_general and f64 convolution without padding bit-exact (ulp_table CONTRACTION_XLA_ORDER:
hlolab sums them in XLA:CPU's order, hlolab/ops/contraction.py "XLA:CPU's summation orders")."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, reject, settings
from hypothesis import strategies as st

from hlolab.ops.contraction import DotGeneralAttrs, xla_dot_guaranteed
from tests.ops.test_contraction import dot_cases
from tests.ops.test_contraction_oracle import conv_oracle_cases, lax_conv_layout
from tests.oracle.differential.harness import Case, jax, lax, run_cases, run_text
from tests.oracle.differential.strategies import ELEMENT_TYPES, make_values

jnp = jax.numpy
TYPES = ["i8", "i32", "f32", "f64", "bf16", "f16", "complex<f32>", "complex<f64>"]


def _dot_variant(ls, rs, lb, rb, lc, rc, et: str) -> str | None:
    """"unguaranteed" for a complex dot_general whose XLA order hlolab does not claim (ulp_table)."""
    if not et.startswith("complex"):
        return None
    d = DotGeneralAttrs(lhs_batching_dimensions=tuple(lb), rhs_batching_dimensions=tuple(rb),
                        lhs_contracting_dimensions=tuple(lc), rhs_contracting_dimensions=tuple(rc))
    dt = np.dtype(ELEMENT_TYPES[et])
    return None if xla_dot_guaranteed(tuple(ls), tuple(rs), d, dt) else "unguaranteed"


def _terms(fn, args):
    """sum|terms| per output element: the same call on |args| in f64 (XLA:CPU, in this process)."""
    return [np.asarray(jax.jit(fn)(*[np.abs(a).astype(np.float64) for a in args]))]


@settings(max_examples=100)
@given(dot_cases(), st.sampled_from(TYPES))
def test_dot_general_matches_xla(case, et):
    ls, rs, lb, rb, lc, rc, seed = case
    a, b = make_values(et, tuple(ls), seed, 0.0), make_values(et, tuple(rs), seed + 1, 0.0)
    dn = ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb)))

    def fn(x, y):
        return lax.dot_general(x, y, dn)

    n = int(np.prod([ls[i] for i in lc], dtype=np.int64))
    terms = _terms(fn, [a, b]) if et not in ("i8", "i32") else None
    run_cases([Case(f"dot_general {et} {ls}x{rs} dn={dn} seed={seed}", fn, [a, b], "dot_general",
                    variant=_dot_variant(ls, rs, lb, rb, lc, rc, et), terms=terms, n=n)])


@settings(max_examples=100)
@given(conv_oracle_cases(), st.sampled_from(["i32", "f32", "bf16", "f16", "f64"]))
def test_convolution_matches_xla(case, et):
    (N, C, O, Ci, xs, ks, strides, padding, lhs_dil, rhs_dil, fgc, bgc, perms, seed, _) = case
    lp, kp, _ = perms
    x = np.moveaxis(make_values(et, (N, C, *xs), seed, 0.0), list(range(len(lp))), lp)
    w = np.moveaxis(make_values(et, (O, Ci, *ks), seed + 1, 0.0), list(range(len(kp))), kp)
    dn, padding = lax_conv_layout(perms, xs, ks, padding, lhs_dil, rhs_dil)

    def fn(a, b):
        return lax.conv_general_dilated(a, b, strides, padding, lhs_dil, rhs_dil, dn,
                                        feature_group_count=fgc, batch_group_count=bgc)

    try:
        terms = _terms(fn, [x, w]) if et != "i32" else None
    except ValueError as e:  # jax's front end checks negative padding in the given layout
        if "Negative padding" not in str(e):
            raise
        reject()
    # XLA's f64 loop is bit-exact where padding, holes or groups do not make it test positions
    # (ulp_table; hlolab.ops.contraction.xla_conv_conditional)
    unpadded = (all(lo == hi == 0 for lo, hi in padding) and all(d == 1 for d in lhs_dil) and bgc == 1
                and (fgc == 1 or Ci == 1))
    run_cases([Case(f"conv {et} x{x.shape} w{w.shape} dn={dn} s={strides} p={padding} ld={lhs_dil} "
                    f"rd={rhs_dil} fgc={fgc} bgc={bgc} seed={seed}", fn, [x, w], "convolution",
                    variant="unpadded" if unpadded else None, terms=terms, n=int(np.prod(ks)) * Ci)])


# ---- XLA:CPU's summation order: bit-exact cases -------------------------------------------------
# Every case below is compared bit for bit (ulp_table CONTRACTION_XLA_ORDER); the inputs are
# normals, so sums cancel and any other order shows in the last bits.

def _normals(et: str, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    dt = np.dtype(ELEMENT_TYPES[et])
    if dt.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    return rng.standard_normal(shape).astype(dt)


@pytest.mark.parametrize("cet", ["complex<f32>", "complex<f64>"])
@pytest.mark.parametrize("src", ["f32", "f16", "bf16", "f64"])
def test_matmul_of_real_and_complex_is_bit_exact(src, cet):
    """issue 25: jnp.matmul of a real and a complex array (a convert to complex, then a complex
    dot_general), 4x3 . 3x6 (up to 92 ULP before) and larger, with batch dims, several seeds."""
    shapes = [((4, 3), (3, 6)), ((8, 17), (17, 5)), ((2, 4, 3), (2, 3, 6)), ((3, 5, 9), (3, 9, 7))]
    cases = []
    for seed in range(3):
        rng = np.random.default_rng(seed)
        for ls, rs in shapes:
            a, b = _normals(src, ls, rng), _normals(cet, rs, rng)
            cases.append(Case(f"matmul {src}{ls} x {cet}{rs} seed={seed}", jnp.matmul, [a, b], "dot_general"))
            cases.append(Case(f"matmul {cet}{rs[::-1]} x {src}{ls[::-1]} seed={seed}",
                              lambda x, y: jnp.matmul(y, x), [a.swapaxes(-1, -2), b.swapaxes(-1, -2)],
                              "dot_general"))
    run_cases(cases)


# (M, K, N) reaching every XLA:CPU path and Eigen register block (hlolab/ops/contraction.py):
# K = 1 (a multiply; a column times one value fuses the other product), two vectors (unrolled up to
# 32 terms, then XLA's tree reduction in one and two levels), M = 1 (gemv, then in blocks of 16 k),
# and Eigen's gebp: rows in 2-packet, packet and half-packet blocks and complex<f32>'s last row,
# columns in 4s and the rest, K & ~7 peeled (pairs), K & ~3 (quads), and k blocks above Eigen's
# cache block (340 > 336 / 248: blocks of 176)
PATHS = [(5, 1, 7), (6, 1, 1), (1, 1, 6), (1, 1, 1), (1, 9, 1), (1, 32, 1), (1, 33, 1), (1, 100, 1),
         (1, 1100, 1), (1, 9, 5), (1, 9, 7), (1, 130, 17), (4, 3, 6), (8, 17, 5), (9, 9, 17), (7, 8, 13),
         (13, 16, 3), (5, 40, 11), (6, 25, 9), (2, 2, 1), (7, 5, 1), (33, 100, 20), (64, 64, 64),
         (8, 340, 5)]


@pytest.mark.parametrize("et", ["complex<f32>", "complex<f64>"])
def test_complex_dot_paths_are_bit_exact(et):
    cases = []
    for i, (M, K, N) in enumerate(PATHS):
        for batch in ((), (2,)):
            rng = np.random.default_rng(100 + i)
            a, b = _normals(et, batch + (M, K), rng), _normals(et, batch + (K, N), rng)
            nb = len(batch)
            dn = (((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb))))
            cases.append(Case(f"dot_general {et} {batch}+{(M, K)} x {(K, N)}", lambda x, y, dn=dn:
                              lax.dot_general(x, y, dn), [a, b], "dot_general"))
    run_cases(cases)


@settings(max_examples=60)
@given(dot_cases(), st.sampled_from(["complex<f32>", "complex<f64>"]), st.booleans())
def test_complex_dot_general_with_edge_values(case, et, special):
    """random dims and layouts, normals or 20 % edge values (inf, NaN, zeros, subnormals: XLA's
    flush of subnormals accepted by the FTZ rule); C's complex multiply on Eigen's scalar path"""
    ls, rs, lb, rb, lc, rc, seed = case
    a = make_values(et, tuple(ls), seed, 0.2 if special else 0.0)
    b = make_values(et, tuple(rs), seed + 1, 0.2 if special else 0.0)
    dn = ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb)))
    fn = lambda x, y: lax.dot_general(x, y, dn)  # noqa: E731
    variant = _dot_variant(ls, rs, lb, rb, lc, rc, et)
    terms = _terms(fn, [a, b]) if variant else None  # the CONTRACTION bound needs them
    n = int(np.prod([ls[i] for i in lc], dtype=np.int64))
    run_cases([Case(f"dot_general {et} {ls}x{rs} dn={dn} seed={seed} special={special}", fn, [a, b],
                    "dot_general", variant=variant, terms=terms, n=n)])


@pytest.mark.parametrize("shape", [(2, 6, 11, 6, 3), (1, 3, 9, 3, 3), (2, 12, 20, 9, 5), (2, 24, 30, 12, 4)])
def test_grouped_1d_convolution_is_bit_exact(shape):
    """issue 25: a 1-D grouped convolution (feature_group_count 3, rhs_dilation 2, NCW) in f64, up to
    4923 ULP before (relative to sums that cancel): XLA:CPU's loop nest sums kernel positions (outer)
    and input features (inner) with fused multiply-adds. Groups make XLA's loop test positions
    (xla_conv_conditional); for these shapes it keeps every product fused (ulp_table "fused")."""
    N, C, W, O, K = shape
    cases = []
    for seed in range(3):
        rng = np.random.default_rng(seed)
        x, w = _normals("f64", (N, C, W), rng), _normals("f64", (O, C // 3, K), rng)
        cases.append(Case(f"conv f64 NCW x{x.shape} w{w.shape} fgc=3 rd=2 seed={seed}",
                          lambda a, b: lax.conv_general_dilated(a, b, (1,), [(0, 0)], (1,), (2,),
                                                                ("NCH", "OIH", "NCH"), feature_group_count=3),
                          [x, w], "convolution", variant="fused"))
    run_cases(cases)


# XLA swaps a convolution's operands when its kernel has more positions than its input; its loop
# then visits the swapped dims backwards (hlolab/ops/contraction.py xla_swapped_dims)
SWAPS = [((1, 2, 3, 2), (3, 2, 3, 3), (1, 1), (1, 1)), ((2, 3, 4, 4), (2, 3, 3, 2), (1, 2), (2, 1)),
         ((1, 2, 2, 3), (4, 2, 2, 3), (1, 1), (1, 1)), ((2, 2, 5), (3, 2, 4), (2,), (1,))]


@pytest.mark.parametrize("xs, ws, strides, rhs_dil", SWAPS)
def test_convolution_with_swapped_operands_is_bit_exact(xs, ws, strides, rhs_dil):
    s = len(xs) - 2
    dn = ("NCHW", "OIHW", "NCHW") if s == 2 else ("NCH", "OIH", "NCH")
    rng = np.random.default_rng(7)
    x, w = _normals("f64", xs, rng), _normals("f64", ws, rng)
    run_cases([Case(f"conv f64 x{xs} w{ws} s={strides} rd={rhs_dil}",
                    lambda a, b: lax.conv_general_dilated(a, b, strides, [(0, 0)] * s, (1,) * s, rhs_dil, dn),
                    [x, w], "convolution", variant="unpadded")])


COMPLEX_CONV = """func.func @main(%x: tensor<2x9x4x{t}>, %w: tensor<3x2x4x{t}>) -> tensor<2x4x4x{t}> {{
  %r = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f],
    window = {{stride = [2], pad = [[1, 1]], rhs_dilate = [2], reverse = [{rev}]}}
    {{batch_group_count = 1 : i64, feature_group_count = 2 : i64}}
    : (tensor<2x9x4x{t}>, tensor<3x2x4x{t}>) -> tensor<2x4x4x{t}>
  return %r : tensor<2x4x4x{t}>
}}"""


@pytest.mark.parametrize("et", ["complex<f32>", "complex<f64>"])
@pytest.mark.parametrize("rev", ["false", "true"])
def test_complex_convolution_in_xlas_loop_order(et, rev):
    """complex convolution (hand-written: jax lowers complex convolutions to real ones) runs XLA's
    loop order with fused complex products; which imaginary product LLVM fuses depends on the loop,
    so the bound stays CONTRACTION (hlolab/ops/contraction.py)"""
    rng = np.random.default_rng(3)
    x, w = _normals(et, (2, 9, 4), rng), _normals(et, (3, 2, 4), rng)
    terms = np.abs(x).astype(np.float64), np.abs(w).astype(np.float64)
    ref = jax.jit(lambda a, b: lax.conv_general_dilated(
        a, b, (2,), [(1, 1)], (1,), (2,), ("NHC", "HIO", "NHC"), feature_group_count=2))(
        terms[0], terms[1][::-1] if rev == "true" else terms[1])
    run_text(Case(f"conv {et} reverse={rev}", None, [x, w], "convolution", terms=[np.asarray(ref)], n=6),
             COMPLEX_CONV.format(t=et, rev=rev))
