"""reduce, argmax/argmin, reduce_window, select_and_scatter (jax's max-pool gradient) and sort
vs XLA:CPU. reduce_window's init is the body's identity (XLA:CPU skips padding where the spec
combines init: tests/ops/test_window_oracle.py documents it)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.oracle.differential.harness import Case, flush, jax, lax, run_cases
from tests.oracle.differential.strategies import (
    ELEMENT_TYPES,
    FLOATS,
    INTS,
    make_values,
    seeds,
    shapes,
    window_configs,
)

BODIES = {"sum": lax.add, "prod": lax.mul, "max": lax.max, "min": lax.min}
TYPES = ["i8", "i32", "i64", "ui8", "ui32", "f32", "f64", "bf16", "f16"]


def identity(body: str, et: str):
    dt = ELEMENT_TYPES[et]
    if body == "sum":
        return np.zeros((), dt)
    if body == "prod":
        return np.ones((), dt)
    if et in INTS:
        info = np.iinfo(dt)
        return np.array(info.min if body == "max" else info.max, dt)
    return np.array(-np.inf if body == "max" else np.inf, dt)


def _terms(x, body, f):
    if body == "sum":
        return f(np.abs(x).astype(np.float64))
    return None


@st.composite
def reduce_case(draw):
    et, body = draw(st.sampled_from(TYPES)), draw(st.sampled_from(sorted(BODIES)))
    shape = draw(shapes(min_rank=1, max_rank=3, max_side=5))
    seed = draw(seeds)
    dims = tuple(sorted(set(draw(st.lists(st.integers(0, len(shape) - 1), min_size=1)))))
    special = 0.0 if body in ("sum", "prod") else 0.3
    x = make_values(et, shape, seed, special, scale=(-2, 2))
    init = identity(body, et)

    def f(v, i=init):
        return lax.reduce(v, i, BODIES[body], dims)

    n = int(np.prod([shape[d] for d in dims]))
    terms = None
    if et in FLOATS:
        terms = [np.abs(x.astype(np.float64)).sum(axis=dims)] if body == "sum" else None
        if body == "prod":  # every partial product is at most |result| times the rest, bounded here
            terms = [np.prod(np.maximum(np.abs(x.astype(np.float64)), 1.0), axis=dims)]
    return Case(f"reduce {body} {et} {shape} dims={dims} seed={seed}", f, [x], "reduce", body, terms, n)


@st.composite
def argmax_case(draw):
    et = draw(st.sampled_from(TYPES))
    shape = draw(shapes(min_rank=1, max_rank=2, max_side=5, zero=False))
    seed = draw(seeds)
    axis = draw(st.integers(0, len(shape) - 1))
    x = make_values(et, shape, seed, 0.3)
    which = draw(st.sampled_from([lax.argmax, lax.argmin]))
    return Case(f"{which.__name__} {et} {shape} axis={axis} seed={seed}",
                lambda v: which(v, axis, np.int32), [x], "argmax")


@st.composite
def reduce_window_case(draw):
    et, body = draw(st.sampled_from(TYPES)), draw(st.sampled_from(sorted(BODIES)))
    shape = draw(shapes(min_rank=1, max_rank=3, max_side=5, zero=False))
    wd, ws, bd, wdil, pad = draw(window_configs(shape))
    seed = draw(seeds)
    x = make_values(et, shape, seed, 0.0 if body in ("sum", "prod") else 0.3, scale=(-2, 2))
    init = identity(body, et)

    def f(v, i=init):
        return lax.reduce_window(v, i, BODIES[body], wd, ws, pad, base_dilation=bd, window_dilation=wdil)

    n = int(np.prod(wd))
    terms = None
    if et in FLOATS:
        if body == "sum":
            terms = [np.asarray(jax.jit(f)(np.abs(x).astype(np.float64), np.zeros((), np.float64)))]
        elif body == "prod":
            big = np.maximum(np.abs(x.astype(np.float64)), 1.0)
            terms = [np.asarray(jax.jit(f)(big, np.ones((), np.float64)))]
    return Case(f"reduce_window {body} {et} {shape} wd={wd} ws={ws} bd={bd} wdil={wdil} pad={pad} "
                f"seed={seed}", f, [x], "reduce_window", body, terms, n)


@settings(max_examples=60)
@given(st.lists(st.one_of(reduce_case(), argmax_case()), min_size=4, max_size=4))
def test_reduce_and_argmax_match_xla(cases):
    run_cases(cases)


@settings(max_examples=120)
@given(reduce_window_case())
def test_reduce_window_matches_xla(case):
    run_cases([case])


@settings(max_examples=40)
@given(st.integers(1, 2).flatmap(lambda r: st.tuples(
    st.lists(st.integers(2, 6), min_size=r, max_size=r), st.lists(st.integers(1, 3), min_size=r, max_size=r),
    st.lists(st.integers(1, 3), min_size=r, max_size=r))), seeds, st.sampled_from(["f32", "f64"]))
def test_select_and_scatter_is_the_max_pool_gradient(cfg, seed, et):
    """jax.grad of a max pool lowers to stablehlo.select_and_scatter (distinct values: no ties)."""
    shape, wd, ws = (tuple(v) for v in cfg)
    wd = tuple(min(w, s) for w, s in zip(wd, shape, strict=True))
    n = int(np.prod(shape))
    x = (np.random.default_rng(seed).permutation(n).reshape(shape) - n / 2).astype(ELEMENT_TYPES[et])

    def pool_grad(v):
        return jax.grad(lambda u: lax.reduce_window(u, -np.inf, lax.max, wd, ws, "VALID").sum())(v)

    run_cases([Case(f"select_and_scatter {et} {shape} wd={wd} ws={ws} seed={seed}", pool_grad, [x],
                    "select_and_scatter")])


@st.composite
def sort_case(draw):
    et = draw(st.sampled_from(TYPES + ["i1", "f8E5M2"]))
    shape = draw(shapes(min_rank=1, max_rank=2, max_side=6))
    seed = draw(seeds)
    dim = draw(st.integers(0, len(shape) - 1))
    keys = make_values(et, shape, seed, 0.4)
    if et in INTS or et == "i1":  # ties
        keys = (keys.astype(np.int64) % 3).astype(keys.dtype)
    # XLA:CPU compares f32/f64/bf16 keys with denormals-are-zero (ties where IEEE-754 orders them):
    # ulp_table SORT_DAZ; keys here are normal numbers
    keys = flush(keys)
    payload = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    nk = draw(st.sampled_from([1, 2]))
    stable = True  # unstable sorts may order ties differently (spec: is_stable=false leaves it open)
    return Case(f"sort {et} {shape} dim={dim} num_keys={nk} stable={stable} seed={seed}",
                lambda k, p: lax.sort((k, p), dimension=dim, is_stable=stable, num_keys=nk),
                [keys, payload], "sort")


@settings(max_examples=50)
@given(st.lists(sort_case(), min_size=4, max_size=4))
def test_sort_matches_xla(cases):
    run_cases(cases)
