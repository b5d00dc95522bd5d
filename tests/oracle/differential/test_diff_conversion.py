"""convert, bitcast_convert and reduce_precision vs XLA:CPU, with conversion edge values."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.oracle.differential.harness import Case, jax, lax, run_cases
from tests.oracle.differential.strategies import (
    ALL_TYPES,
    COMPLEX,
    CONVERSION_EDGES,
    ELEMENT_TYPES,
    FLOATS,
    kind,
    make_values,
    seeds,
    shapes,
)

CASES_PER_PROGRAM = 6


def conversion_values(et: str, shape, seed: int) -> np.ndarray:
    x = make_values(et, shape, seed, 0.3, scale=(-10, 40))
    if kind(et) == "float" and x.size:
        rng = np.random.default_rng(seed)
        edges = np.array(CONVERSION_EDGES + [-v for v in CONVERSION_EDGES], np.float64)
        with np.errstate(over="ignore"):
            e = edges[rng.integers(0, len(edges), x.size)].astype(x.dtype).reshape(x.shape)
        x = np.where(rng.random(x.shape) < 0.3, e, x)
    return np.asarray(x)


def _jax_converts(src: str, dst: str) -> bool:
    try:
        jax.eval_shape(lambda v: lax.convert_element_type(v, ELEMENT_TYPES[dst]),
                       jax.ShapeDtypeStruct((2,), ELEMENT_TYPES[src]))
        return True
    except (TypeError, ValueError):
        return False


# complex -> real: jax drops the imaginary part with stablehlo.real first (still compared)
CONVERT_PAIRS = [(s, d) for s in ALL_TYPES for d in ALL_TYPES if s != d and _jax_converts(s, d)]


@st.composite
def convert_case(draw):
    src, dst = draw(st.sampled_from(CONVERT_PAIRS))
    shape = draw(shapes(max_rank=1, max_side=8))
    seed = draw(seeds)
    x = conversion_values(src, shape, seed)
    return Case(f"convert {src}->{dst} {shape} seed={seed}",
                lambda v, dt=ELEMENT_TYPES[dst]: lax.convert_element_type(v, dt), [x], "convert")


@settings(max_examples=60)
@given(st.lists(convert_case(), min_size=CASES_PER_PROGRAM, max_size=CASES_PER_PROGRAM))
def test_convert_matches_xla(cases):
    run_cases(cases)


BY_WIDTH: dict[int, list[str]] = {}
for _t in ALL_TYPES:
    if _t not in ("i1", "i4", "ui4", *COMPLEX):  # i1/i4: a byte in XLA, bits in the spec; jax: no complex
        BY_WIDTH.setdefault(ELEMENT_TYPES[_t].itemsize, []).append(_t)


@st.composite
def bitcast_case(draw):
    src = draw(st.sampled_from([t for ts in BY_WIDTH.values() for t in ts]))
    dst = draw(st.sampled_from([t for ts in BY_WIDTH.values() for t in ts]))
    w = ELEMENT_TYPES[src].itemsize
    seed = draw(seeds)
    shape = draw(shapes(max_rank=2, max_side=4))
    if ELEMENT_TYPES[dst].itemsize > w:
        shape = (*shape, ELEMENT_TYPES[dst].itemsize // w)
    x = make_values(src, shape, seed, 0.3)
    return Case(f"bitcast_convert {src}->{dst} {shape} seed={seed}",
                lambda v, dt=ELEMENT_TYPES[dst]: lax.bitcast_convert_type(v, dt), [x], "bitcast_convert")


@settings(max_examples=40)
@given(st.lists(bitcast_case(), min_size=CASES_PER_PROGRAM, max_size=CASES_PER_PROGRAM))
def test_bitcast_convert_matches_xla(cases):
    run_cases(cases)


@st.composite
def reduce_precision_case(draw):
    et = draw(st.sampled_from([t for t in FLOATS if not t.startswith("f8")]))
    eb, mb = draw(st.integers(1, 11)), draw(st.integers(0, 23))
    seed = draw(seeds)
    x = conversion_values(et, draw(shapes(max_rank=1, max_side=8)), seed)
    if mb == 0:  # ulp_table.REDUCE_PRECISION_NAN_M0
        x = np.where(np.isnan(x.astype(np.float64)), np.zeros((), x.dtype), x).astype(x.dtype)
    return Case(f"reduce_precision {et} e{eb}m{mb} seed={seed}",
                lambda v, e=eb, m=mb: lax.reduce_precision(v, e, m), [x], "reduce_precision")


@settings(max_examples=40)
@given(st.lists(reduce_precision_case(), min_size=CASES_PER_PROGRAM, max_size=CASES_PER_PROGRAM))
def test_reduce_precision_matches_xla(cases):
    run_cases(cases)
