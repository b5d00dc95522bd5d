"""reduce / reduce_precision / batch_norm_* against XLA:CPU (jax): integer and boolean
reductions, argmax/argmin bodies and reduce_precision bit-exact; float reductions
within |delta| <= k * n * eps * sum|terms| (k = 2; XLA and numpy sum in different
orders, and XLA rounds raw bf16/f16 partial sums to the element type)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hlolab.interp.engine import Interpreter
from hlolab.ir.parser import parse_module
from hlolab.ops.reduction import reduce_precision_values
from tests.ops.test_reduction import bn_program, reduce_program
from tests.xla_oracle import jax, run_xla  # skips this file loudly without jax

jnp = jax.numpy
lax = jax.lax
K = 2  # the rounding-error constant of the float bounds

DTYPES = {"i8": np.int8, "i32": np.int32, "ui8": np.uint8, "f32": np.float32, "f16": np.float16,
          "bf16": ml_dtypes.bfloat16, "i1": np.bool_}
FNS = {"sum": jnp.sum, "prod": jnp.prod, "max": jnp.max, "min": jnp.min, "any": jnp.any, "all": jnp.all}


def hlolab_run(text: str, *args: np.ndarray) -> list[np.ndarray]:
    return Interpreter(parse_module(text)).run(None, list(args))


def _data(rng, shape, e):
    dt = DTYPES[e]
    if e == "i1":
        return rng.random(shape) < 0.3
    if np.dtype(dt).kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, int(info.max) + 1, shape, dtype=dt)
    return rng.standard_normal(shape).astype(dt)


@given(st.sampled_from(list(FNS)), st.sampled_from(list(DTYPES)),
       st.lists(st.integers(1, 5), min_size=1, max_size=3), st.data(), st.integers(0, 2**32))
def test_jnp_reductions_match_xla(fn, e, shape, data, seed):
    if (fn in ("any", "all")) != (e == "i1") and fn in ("any", "all"):
        return
    if e == "i1" and fn in ("sum", "prod"):
        return  # jnp promotes bools to ints for those
    axes = tuple(sorted(data.draw(st.lists(st.integers(0, len(shape) - 1), unique=True, min_size=1))))
    x = _data(np.random.default_rng(seed), tuple(shape), e)
    f = jax.jit(lambda v: FNS[fn](v, axis=axes))
    text = f.lower(x).as_text()
    (got,) = hlolab_run(text, x)
    want = np.asarray(f(x))
    assert got.dtype == want.dtype and got.shape == want.shape
    if got.dtype.kind in "biu" or fn in ("max", "min"):
        assert got.tobytes() == want.tobytes()
        return
    n = int(np.prod([shape[a] for a in axes]))
    terms = np.abs(x.astype(np.float64))
    bound_terms = terms.sum(axis=axes) if fn == "sum" else np.abs(want.astype(np.float64))
    eps = float(ml_dtypes.finfo(want.dtype).eps)
    assert np.all(np.abs(got.astype(np.float64) - want.astype(np.float64)) <= K * n * eps * bound_terms
                  + float(ml_dtypes.finfo(want.dtype).tiny))


def _raw_reduce(e: str, shape, dims) -> str:
    return reduce_program(shape, [e], dims, "add")


@settings(max_examples=10)  # each example compiles with XLA: keep the file under ~40 s
@given(st.sampled_from(["bf16", "f16", "f32"]), st.integers(0, 2**32))
def test_raw_narrow_float_reduce_add_is_within_bound(e, seed):
    """A raw bf16/f16 reduce: XLA rounds its partial sums to the element type, hlolab
    accumulates in f32: both within K * n * eps(E) * sum|x| of the exact sum."""
    x = _data(np.random.default_rng(seed), (6, 40), e)
    text = _raw_reduce(e, (6, 40), [1])
    init = np.zeros((), DTYPES[e])
    (want,) = run_xla(text, x, init)
    (got,) = hlolab_run(text, x, init)
    exact = x.astype(np.float64).sum(axis=1)
    eps = float(ml_dtypes.finfo(DTYPES[e]).eps)
    bound = K * 40 * eps * np.abs(x.astype(np.float64)).sum(axis=1)
    assert np.all(np.abs(got.astype(np.float64) - exact) <= bound)
    assert np.all(np.abs(want.astype(np.float64) - exact) <= bound)


@settings(max_examples=20)
@given(st.sampled_from(["argmax", "argmin"]), st.integers(0, 2**32), st.integers(0, 1))
def test_argmax_argmin_match_xla(which, seed, axis):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 3, (4, 9)).astype(np.float32)  # many ties
    x[rng.random(x.shape) < 0.1] = np.nan
    f = jax.jit(lambda v: getattr(jnp, which)(v, axis=axis))
    (got,) = hlolab_run(f.lower(x).as_text(), x)
    assert got.tolist() == np.asarray(f(x)).tolist()


SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 65504.0, 65520.0, 6.1e-5, 6e-8, 1e-40,
            3.4e38, 1e-310, 1.7e308]


@given(st.sampled_from([np.float64, np.float32, np.float16, ml_dtypes.bfloat16]),
       st.lists(st.one_of(st.sampled_from(SPECIALS), st.floats(allow_nan=True, width=64)),
                min_size=1, max_size=30),
       st.integers(1, 12), st.integers(0, 60), st.integers(0, 2**32))
def test_reduce_precision_is_bit_exact(dt, values, eb, mb, seed):
    x = np.array(values, np.float64).astype(dt)
    nb = np.dtype(dt).itemsize
    raw = np.random.default_rng(seed).integers(0, 2 ** (8 * nb), 20, dtype=np.uint64)
    x = np.concatenate([x, raw.astype(f"u{nb}").view(dt)])
    want = np.asarray(jax.jit(lambda v: lax.reduce_precision(v, eb, mb))(x))
    assert reduce_precision_values(x, eb, mb).tobytes() == want.tobytes()


def test_reduce_precision_f8_types_are_bit_exact():
    for name in ["float8_e5m2", "float8_e4m3", "float8_e3m4", "float8_e4m3fn", "float8_e4m3fnuz",
                 "float8_e5m2fnuz"]:
        x = np.arange(256, dtype=np.uint8).view(getattr(ml_dtypes, name))
        for eb in (1, 3, 5, 8):
            for mb in (0, 2, 5):
                want = np.asarray(jax.jit(lambda v, e=eb, m=mb: lax.reduce_precision(v, e, m))(x))
                got = reduce_precision_values(x, eb, mb)
                nan = np.isnan(want.astype(np.float32))
                assert np.array_equal(nan, np.isnan(got.astype(np.float32))), (name, eb, mb)
                assert np.array_equal(want.view(np.uint8)[~nan], got.view(np.uint8)[~nan]), (name, eb, mb)


@settings(max_examples=6)
@given(st.integers(0, 2**32), st.integers(0, 2), st.sampled_from(["f32", "f64"]))
def test_batch_norm_ops_match_xla(seed, fi, e):
    rng = np.random.default_rng(seed)
    shape = (3, 4, 5)
    dt = DTYPES[e] if e != "f64" else np.float64
    c = shape[fi]
    x = rng.standard_normal(shape).astype(dt)
    scale, offset = rng.standard_normal(c).astype(dt), rng.standard_normal(c).astype(dt)
    mean, var = rng.standard_normal(c).astype(dt), rng.random(c).astype(dt) + dt(0.5)
    g = rng.standard_normal(shape).astype(dt)
    tol = 1e-4 if e == "f32" else 1e-10
    cases = [("inference", [x, scale, offset, mean, var]), ("training", [x, scale, offset]),
             ("grad", [x, scale, mean, var, g])]
    for kind, args in cases:
        text = bn_program(kind, shape, e, fi, 1e-3)
        want = run_xla(text, *args)
        got = hlolab_run(text, *args)
        for w, h in zip(want, got, strict=True):
            assert h.dtype == w.dtype
            assert np.allclose(h, w, rtol=tol, atol=tol), kind
