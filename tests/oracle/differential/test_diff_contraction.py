"""dot_general and conv_general_dilated (lhs/rhs dilation, feature/batch groups, negative padding)
vs XLA:CPU: integers bit-exact, floats within k * n * eps * sum|terms| (ulp_table CONTRACTION)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, reject, settings
from hypothesis import strategies as st

from tests.ops.test_contraction import dot_cases
from tests.ops.test_contraction_oracle import conv_oracle_cases, lax_conv_layout
from tests.oracle.differential.harness import Case, jax, lax, run_cases
from tests.oracle.differential.strategies import make_values

TYPES = ["i8", "i32", "f32", "f64", "bf16", "f16", "complex<f32>"]


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
                    terms=terms, n=n)])


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
    run_cases([Case(f"conv {et} x{x.shape} w{w.shape} dn={dn} s={strides} p={padding} ld={lhs_dil} "
                    f"rd={rhs_dil} fgc={fgc} bgc={bgc} seed={seed}", fn, [x, w], "convolution",
                    terms=terms, n=int(np.prod(ks)) * Ci)])
