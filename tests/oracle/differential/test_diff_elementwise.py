"""Element-wise unary and binary ops (incl. transcendental) vs XLA:CPU, through jax.lax.

Each hypothesis example batches CASES_PER_PROGRAM independent one-op cases into one program."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.oracle.differential.harness import Case, jax, lax, run_cases
from tests.oracle.differential.strategies import (
    COMPLEX,
    ELEMENT_TYPES,
    FLOATS,
    INTS,
    make_values,
    seeds,
    shapes,
)

CASES_PER_PROGRAM = 4

# lax function -> (StableHLO op name for the table, element types it accepts)
UNARY = {
    "neg": ("negate", INTS[:5] + FLOATS + COMPLEX), "abs": ("abs", INTS[:5] + FLOATS),
    "sign": ("sign", INTS[:5] + FLOATS), "floor": ("floor", FLOATS), "ceil": ("ceil", FLOATS),
    "round": ("round_nearest_afz", FLOATS), "is_finite": ("is_finite", FLOATS),
    "bitwise_not": ("not", ["i1", *INTS]), "population_count": ("popcnt", INTS),
    "clz": ("count_leading_zeros", INTS), "sqrt": ("sqrt", FLOATS + COMPLEX),
    "exp": ("exponential", FLOATS), "expm1": ("exponential_minus_one", FLOATS), "log": ("log", FLOATS),
    "log1p": ("log_plus_one", FLOATS), "logistic": ("logistic", FLOATS), "rsqrt": ("rsqrt", FLOATS),
    "cbrt": ("cbrt", FLOATS), "sin": ("sine", FLOATS), "cos": ("cosine", FLOATS), "tan": ("tan", FLOATS),
    "tanh": ("tanh", FLOATS),
}
BINARY = {
    "add": ("add", ["i1", *INTS, *FLOATS, *COMPLEX]), "sub": ("subtract", INTS + FLOATS + COMPLEX),
    "mul": ("multiply", INTS + FLOATS + COMPLEX), "div": ("divide", INTS + FLOATS),
    "rem": ("remainder", INTS + FLOATS), "max": ("maximum", ["i1", *INTS, *FLOATS]),
    "min": ("minimum", ["i1", *INTS, *FLOATS]), "bitwise_and": ("and", ["i1", *INTS]),
    "bitwise_or": ("or", ["i1", *INTS]),
    "bitwise_xor": ("xor", ["i1", *INTS]), "shift_left": ("shift_left", INTS),
    "shift_right_arithmetic": ("shift_right_arithmetic", INTS),
    "shift_right_logical": ("shift_right_logical", INTS), "atan2": ("atan2", FLOATS),
    "pow": ("power", FLOATS),
}
TRANSCENDENTAL = {"exponential", "exponential_minus_one", "log", "log_plus_one", "logistic", "rsqrt",
                  "cbrt", "sine", "cosine", "tan", "tanh", "atan2", "power"}
# input exponent ranges where the table's bounds were measured (outside them results are
# over/underflow, where both sides give the same inf/0 anyway)
SCALE = {"sine": (-20, 8), "cosine": (-20, 8), "tan": (-20, 8), "tanh": (-10, 5), "exponential": (-8, 6),
         "exponential_minus_one": (-8, 6), "logistic": (-8, 6), "power": (-4, 4)}


def _jax_accepts(name: str, et: str, arity: int) -> bool:
    """jax's front end refuses some (op, type) pairs (e.g. abs on int4): those are not cases."""
    x = jax.ShapeDtypeStruct((2,), ELEMENT_TYPES[et])
    try:
        jax.eval_shape(getattr(lax, name), *([x] * arity))
        return True
    except TypeError:
        return False


PAIRS = sorted((name, et, arity) for arity, table in ((1, UNARY), (2, BINARY)) for name, (_, types)
               in table.items() for et in types if _jax_accepts(name, et, arity))


@st.composite
def elementwise_case(draw):
    name, et, arity = draw(st.sampled_from(PAIRS))
    binary = arity == 2
    op = (BINARY if binary else UNARY)[name][0]
    shape = draw(shapes(max_rank=2, max_side=5))
    seed = draw(seeds)
    special = draw(st.sampled_from([0.0, 0.15, 0.5]))
    scale = SCALE.get(op, (-30, 30) if op in ("log", "log_plus_one", "rsqrt", "cbrt") else (-8, 8))
    args = [make_values(et, shape, seed + i, special, scale) for i in range(2 if binary else 1)]
    if op == "popcnt" and et == "i4":  # ulp_table POPCNT_I4: negative i4 values left out
        args = [(a.astype(np.int64) & 7).astype(a.dtype) for a in args]
    fn = getattr(lax, name)
    return Case(f"{name} {et} {shape} seed={seed} special={special}", fn, args, op)


@settings(max_examples=150)
@given(st.lists(elementwise_case(), min_size=CASES_PER_PROGRAM, max_size=CASES_PER_PROGRAM))
def test_elementwise_matches_xla(cases):
    run_cases(cases)


def test_harness_sees_a_difference():
    """The comparison is live: a wrong expected value fails."""
    import pytest

    from tests.oracle.differential.harness import check
    from tests.oracle.ulp_table import bound

    with pytest.raises(AssertionError):
        check(bound("add", "f32"), np.float32([1, 2]), np.float32([1, 2.0000002]), None, None, 1, "x")
    check(bound("add", "f32"), np.float32([np.nan]), -np.float32([np.nan]), None, None, 1, "nan")
