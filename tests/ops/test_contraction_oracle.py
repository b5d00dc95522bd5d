"""dot_general and convolution vs XLA:CPU (jax.lax.dot_general, lax.conv_general_dilated).

The programs are the StableHLO text jax lowers to, run by hlolab and by XLA:CPU
(tests/xla_oracle.run_xla). Integers must be bit-exact. Floats: the summation
order is the implementation's, so the check is
|hlolab - xla| <= k * n * eps * sum|terms| + ulp(result type) * |xla|,
with k = 2, n the number of products summed, eps the unit roundoff of the
compute type (f32 for bf16/f16/f32 operands, f64 for f64) and sum|terms| the
exact sum of |lhs| * |rhs| (the last term covers the one final rounding to a
narrower result type, where both sides may round a slightly different sum).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
from hypothesis import given, reject, settings
from hypothesis import strategies as st

from hlolab.interp.engine import Interpreter
from hlolab.ir.parser import parse_module
from tests.ops.test_contraction import dot_cases
from tests.xla_oracle import jax, run_xla  # skips the file loudly without jax

lax = jax.lax
jnp = jax.numpy

K = 2  # the k of the float bound

DTYPES = {
    "i8": (np.int8, np.int32), "i32": (np.int32, None), "f32": (np.float32, None),
    "bf16": (ml_dtypes.bfloat16, None), "f16": (np.float16, None),
    "complex64": (np.complex64, None), "bf16->f32": (ml_dtypes.bfloat16, np.float32),
}


def _values(rng, shape, dt) -> np.ndarray:
    """Random values of ``shape`` (a 0-d array for shape (), never a numpy scalar)."""
    if np.dtype(dt).kind in "iu":
        return np.asarray(rng.integers(-100, 100, shape).astype(dt))
    if np.dtype(dt).kind == "c":
        return np.asarray((rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt))
    return np.asarray(rng.standard_normal(shape).astype(dt))


def _both(fn, args):
    text = jax.jit(fn).lower(*args).as_text()
    ours = Interpreter(parse_module(text)).run(None, list(args))[0]
    theirs = run_xla(text, *args)[0]
    return text, np.asarray(ours), np.asarray(theirs)


def _check_close(ours, theirs, bound_terms, n, compute_eps):
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    if ours.dtype.kind in "iub":
        assert ours.tobytes() == theirs.tobytes()
        return
    o = ours.astype(np.complex128 if ours.dtype.kind == "c" else np.float64)
    t = theirs.astype(o.dtype)
    out_eps = float(np.finfo(ours.dtype).eps) if ours.dtype.kind in "fc" else \
        float(ml_dtypes.finfo(ours.dtype).eps)
    bound = K * max(n, 1) * compute_eps * bound_terms + out_eps * np.abs(t)
    assert np.all(np.abs(o - t) <= bound + 1e-300), float(np.max(np.abs(o - t) - bound))


def _eps(dt) -> float:
    return float(np.finfo(np.float64).eps) if np.dtype(dt) in (np.float64, np.complex128) else \
        float(np.finfo(np.float32).eps)


@settings(max_examples=40)
@given(dot_cases(), st.sampled_from(sorted(DTYPES)))
def test_dot_general_matches_xla(case, name):
    ls, rs, lb, rb, lc, rc, seed = case
    dt, pref = DTYPES[name]
    rng = np.random.default_rng(seed)
    a, b = _values(rng, ls, dt), _values(rng, rs, dt)
    dn = ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb)))

    def fn(x, y):
        return lax.dot_general(x, y, dn, preferred_element_type=pref)

    _, ours, theirs = _both(fn, (a, b))
    terms = np.asarray(lax.dot_general(jnp.abs(jnp.asarray(np.abs(a).astype(np.float64))),
                                       jnp.asarray(np.abs(b).astype(np.float64)), dn)) \
        if np.dtype(dt).kind not in "iu" else 0
    n = int(np.prod([ls[x] for x in lc], dtype=np.int64))
    _check_close(ours, theirs, terms, n, _eps(dt))


@st.composite
def conv_oracle_cases(draw):
    s = draw(st.sampled_from([1, 2, 2, 3]))
    fgc, bgc = draw(st.sampled_from([(1, 1), (2, 1), (1, 2), (3, 1)]))
    N = bgc * draw(st.integers(1, 2))
    Ci = draw(st.integers(1, 3))
    O = fgc * bgc * draw(st.integers(1, 2))
    xs = [draw(st.integers(1, 6 if s < 3 else 4)) for _ in range(s)]
    ks = [draw(st.integers(1, 3)) for _ in range(s)]
    strides = [draw(st.integers(1, 3)) for _ in range(s)]
    lhs_dil = [draw(st.integers(1, 2)) for _ in range(s)]
    rhs_dil = [draw(st.integers(1, 2)) for _ in range(s)]
    padding = [(draw(st.integers(-1, 2)), draw(st.integers(-1, 2))) for _ in range(s)]
    layout = draw(st.sampled_from(["NCHW", "NHWC", "random"]))
    perms = [list(range(s + 2))] * 3
    if layout == "NHWC":
        perms = [[0, s + 1] + list(range(1, s + 1)), [s + 1, s] + list(range(s)),
                 [0, s + 1] + list(range(1, s + 1))]
    elif layout == "random":
        perms = [draw(st.permutations(range(s + 2))) for _ in range(3)]
    return (N, fgc * Ci, O, Ci, xs, ks, strides, padding, lhs_dil, rhs_dil, fgc, bgc, perms,
            draw(st.integers(0, 2**32 - 1)), draw(st.sampled_from(["i32", "f32", "bf16", "i8"])))


def lax_conv_layout(perms, xs, ks, padding, lhs_dil, rhs_dil) -> tuple[tuple[str, str, str], list]:
    """jax's dimension_numbers strings ("NCHW"-like) for the canonical -> actual permutations
    ``perms``, and ``padding`` widened where the padded extent would hold no window (an empty
    result: fine, but dull)."""
    spatial = "".join("HWD"[j] for j in range(len(xs)))

    def spec(perm, a, b):
        out = [""] * len(perm)
        for k, pos in enumerate(perm):
            out[pos] = ([a, b] + list(spatial))[k]
        return "".join(out)

    lp, kp, op_ = perms
    padding = list(padding)
    for j in range(len(xs)):
        dil = (xs[j] - 1) * lhs_dil[j] + 1 + padding[j][0] + padding[j][1]
        if dil < (ks[j] - 1) * rhs_dil[j] + 1:
            padding[j] = (padding[j][0] + 3, padding[j][1] + 3)
    return (spec(lp, "N", "C"), spec(kp, "O", "I"), spec(op_, "N", "C")), padding


@settings(max_examples=40)
@given(conv_oracle_cases())
def test_convolution_matches_xla(case):
    (N, C, O, Ci, xs, ks, strides, padding, lhs_dil, rhs_dil, fgc, bgc, perms, seed, name) = case
    dt, pref = DTYPES[name]
    rng = np.random.default_rng(seed)
    lp, kp, _ = perms
    xc = _values(rng, (N, C, *xs), dt)
    wc = _values(rng, (O, Ci, *ks), dt)
    x = np.moveaxis(xc, list(range(len(lp))), lp)
    w = np.moveaxis(wc, list(range(len(kp))), kp)
    dn, padding = lax_conv_layout(perms, xs, ks, padding, lhs_dil, rhs_dil)

    def fn(a, b):
        return lax.conv_general_dilated(a, b, strides, padding, lhs_dil, rhs_dil, dn,
                                        feature_group_count=fgc, batch_group_count=bgc,
                                        preferred_element_type=pref)

    try:
        _, ours, theirs = _both(fn, (x, w))
    except ValueError as e:  # jax's front end checks negative padding against lhs.shape[2:]
        if "Negative padding" not in str(e):  # in the given layout, not the spatial dims
            raise
        reject()
    terms = 0
    if np.dtype(dt).kind not in "iu":
        terms = np.asarray(lax.conv_general_dilated(
            np.abs(x).astype(np.float64), np.abs(w).astype(np.float64), strides, padding, lhs_dil,
            rhs_dil, dn, feature_group_count=fgc, batch_group_count=bgc))
    n = int(np.prod(ks)) * Ci
    _check_close(ours, theirs, terms, n, _eps(dt))
