"""Hypothesis-driven fuzzing of the lexer, parser, verifier and executor, with shrinking.

The invariant is the campaign's (tests/fuzz/campaign.py): every program ends in a result or a
clean hlolab error (``run_program`` / ``run_op`` return "ok", "error" or "parse-error" and let
any other exception through). Where the seeded campaign covers ground fast, these tests let
hypothesis pick the edits, so a failure shrinks to the smallest edit, token list or parameter
set that still breaks the invariant.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fuzz.campaign import CORPUS, EDGE_NUMBERS, PUNCT, TYPES, corpus, mutate_once, run_op, run_program

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"LOUD SKIP: {CORPUS} is missing")

MODULES = corpus() if CORPUS.is_dir() else [("<none>", "")]
OUTCOMES = {"ok", "error", "parse-error"}

# the pieces programs are made of: a token soup of these reaches deep into the parser
TOKENS = (*EDGE_NUMBERS, *TYPES, *PUNCT.replace(" ", "").replace("\n", ""),
          "func.func", "@main", "%a", "%b", "%0", "%1:2", "%0#1", "return", "func.return",
          "stablehlo.add", "stablehlo.constant", "stablehlo.while", "stablehlo.reduce",
          "\"stablehlo.gather\"",
          "dense<", "array<i64:", "tensor<", "2x3x", "?x", "cond", "do", "applies", "across", "dimensions",
          "=", "->", ":", "^bb0", "loc(", "#stablehlo.gather<", "offset_dims", "#loc", "dims", "window",
          "stablehlo.return", "check.expect_eq", "\"x\"", "true", "false", "{", "}", "(", ")")


@settings(max_examples=300)
@given(st.lists(st.sampled_from(TOKENS), max_size=40), st.sampled_from([" ", "\n", ""]))
def test_token_soup(tokens, sep):
    assert run_program(sep.join(tokens)) in OUTCOMES


@settings(max_examples=300)
@given(st.sampled_from(MODULES), st.data())
def test_corpus_module_with_an_edit(module, data):
    """Delete a span of a real module and insert short text in its place."""
    label, text = module
    start = data.draw(st.integers(0, len(text)), label="start")
    end = data.draw(st.integers(start, min(len(text), start + 12)), label="end")
    alphabet = st.sampled_from(PUNCT + "0123456789abcdefxi")
    insert = data.draw(st.text(alphabet, max_size=8) | st.sampled_from(EDGE_NUMBERS + TYPES), label="insert")
    assert run_program(text[:start] + insert + text[end:], label) in OUTCOMES


@settings(max_examples=200)
@given(st.sampled_from(MODULES), st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=3))
def test_corpus_module_with_campaign_mutations(module, seeds):
    """The campaign's structure-aware mutations (numbers, dims, types, lines), one per seed."""
    label, text = module
    for s in seeds:
        text = mutate_once(text, np.random.default_rng(s))
    assert run_program(text, label) in OUTCOMES


def _param_values(p) -> st.SearchStrategy[str]:
    small = st.integers(-2, 6).map(str)
    junk = st.sampled_from(["", "x", "-1", "1,,2", "1;2", "[", "9999999999999999999999", "nan", "2x-3"])
    by_kind = {
        "shape": st.lists(st.integers(0, 5), max_size=4).map(lambda d: "x".join(map(str, d)) or "scalar"),
        "dtype": st.sampled_from(["f32", "f16", "bf16", "f64", "i1", "i8", "i32", "i64", "ui8", "ui32",
                                  "i4", "f8E4M3FN", "complex<f32>"]),
        "int": small,
        "ints": st.lists(small, max_size=5).map(",".join),
        "pairs": small | st.lists(st.tuples(small, small), max_size=4).map(
            lambda ps: ";".join(f"{a},{b}" for a, b in ps)),
        "enum": st.sampled_from(list(p.choices or [p.format(p.default)])),
        "bool": st.sampled_from(["true", "false"]),
        "number": st.sampled_from(["0", "1", "-2.5", "inf", "-inf", "nan", "identity"]),
    }
    return by_kind.get(p.kind, st.just(p.format(p.default))) | junk


@st.composite
def op_params(draw):
    from hlolab.ops.examples import schema_for, schema_ops

    op = draw(st.sampled_from(schema_ops()))
    schema = schema_for(op)
    chosen = draw(st.lists(st.sampled_from(schema.params), max_size=4, unique_by=lambda p: p.name))
    return op, {p.name: draw(_param_values(p)) for p in chosen}


@settings(max_examples=300)
@given(op_params(), st.sampled_from(["iota", "random"]), st.integers(0, 999))
def test_random_op_parameters(case, fill, seed):
    op, params = case
    assert run_op(op, params, fill, seed) in OUTCOMES
