"""Message catalogues (hlolab.messages) and the explanations written with them.

Every op's explanation of its example elements is structured: step names are
spec symbols or messages, formulas, substituted formulas and notes are messages,
dimension roles are DimRole values. Rendering through a second, test-only
catalogue proves no English is baked into the ops' code: what is left once that
catalogue's tokens are removed is numbers, spec symbols and punctuation.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from hlolab import messages
from hlolab.messages import Msg, catalogue, fields, text
from hlolab.ops.examples import make_example, schema_for, schema_ops
from hlolab.session import Session
from hlolab.trace.explain import DimRole, Explanation, Step, format_explanation
from hlolab.trace.roles import DIM_GROUP_COLORS, DIM_KINDS

# two words of prose in a row ("clamped to", "the value"); spec symbols are one word each
PROSE = re.compile(r"(?<![\w%@#.])[A-Za-z]{2,} +[A-Za-z]{2,}(?![\w(\[])")
TOKEN = re.compile(r"⟪[^⟫]*⟫")
PSEUDO = "x-pseudo"


def pseudo_catalogue() -> dict[str, str]:
    """Every English template replaced by its key and its fields, nothing else."""
    return {key: f"⟪{key}⟫" + "".join(f"⟨{{{f}}}⟩" for f in sorted(fields(t)))
            for key, t in catalogue("en").items()}


@pytest.fixture(scope="module", autouse=True)
def _pseudo():
    messages.register(PSEUDO, pseudo_catalogue())
    yield
    messages._catalogues.pop(PSEUDO, None)


# --- the catalogue itself ----------------------------------------------------------------

def test_english_catalogue_loads_and_every_template_formats():
    en = catalogue("en")
    assert len(en) > 40
    for key, t in en.items():
        t.format_map({f: "x" for f in fields(t)})  # no positional fields, balanced braces
        assert key.count(".") >= 1, key


def test_every_catalogue_uses_the_english_fields():
    en = catalogue("en")
    for lang in messages.languages():
        for key, t in catalogue(lang).items():
            assert key in en, f"{lang}: {key} is not an English key"
            assert fields(t) == fields(en[key]), f"{lang}: {key} names other fields than English"


def test_missing_translation_falls_back_per_string():
    messages.register("x-partial", {"explain.more": "encore {count}"})
    try:
        assert text(Msg("explain.more", count=3), "x-partial") == "encore 3"
        assert text(Msg("dims.batch"), "x-partial") == "batch"
        with messages.language("x-partial"):
            assert str(Msg("explain.more", count=2)) == "encore 2"
    finally:
        messages._catalogues.pop("x-partial", None)
    with pytest.raises(KeyError, match="no message"):
        text(Msg("no.such.key"))


def test_dim_roles_have_a_label_and_one_colour_each():
    en = catalogue("en")
    for kind, group in DIM_KINDS.items():
        assert f"dims.{kind}" in en, kind
        assert group in DIM_GROUP_COLORS, kind
    assert DimRole("offset", k=1) == DimRole("offset", k=1) != DimRole("offset", k=0)
    assert text(DimRole("spatial", k=1).message()) == "spatial 1"


# --- every op's explanations ----------------------------------------------------------------

def _indices(shape: tuple[int, ...]) -> list[tuple[int, ...]]:
    if not shape:
        return [()]
    if not all(shape):
        return []
    picks = {tuple(0 for _ in shape), tuple(d // 2 for d in shape), tuple(d - 1 for d in shape)}
    return sorted(picks)


def explanations(op: str) -> Iterator[tuple[str, Explanation]]:
    """The explanations of a few elements of every result of every preset of ``op``."""
    for preset in schema_for(op).presets:
        ex = make_example(op, preset)
        s = Session(ex.text)
        s.bind(ex.inputs)
        s.run()
        for ev in s.history:
            for r, out in enumerate(ev.outputs):
                if not isinstance(out, np.ndarray):
                    continue
                for idx in _indices(out.shape):
                    e = ev.explain(r, idx)
                    if e is not None:
                        yield f"{op} {preset} #{r}{list(idx)}", e


def _walk(step: Step) -> Iterator[Step]:
    yield step
    for c in step.children:
        yield from _walk(c)


def assert_substituted_everywhere(e: Explanation, descriptive: set[str]) -> None:
    """Every step whose formula has symbols (its key not in ``descriptive``, the formulas
    that describe rather than compute) shows it again with this element's numbers."""
    for top in e.steps:
        for s in _walk(top):
            if s.formula is not None and s.formula.key not in descriptive:
                assert isinstance(s.substituted, Msg), f"{s.name}: {s.formula.key} has no substituted form"


def _messages_in(x: Any) -> Iterator[Msg]:
    if isinstance(x, Msg):
        yield x
        for v in x.args.values():
            yield from _messages_in(v)
    elif isinstance(x, DimRole):
        yield x.message()
    elif isinstance(x, (tuple, list)):
        for v in x:
            yield from _messages_in(v)


def _strings_in(msg: Msg) -> Iterator[str]:
    for v in msg.args.values():
        if isinstance(v, str):
            yield v


def check_structured(where: str, e: Explanation) -> None:
    en = catalogue("en")
    found: list[Msg] = list(_messages_in(e.notes))
    for top in e.steps:
        for s in _walk(top):
            assert isinstance(s.name, (str, Msg)), where
            if isinstance(s.name, str):
                assert not PROSE.search(s.name), f"{where}: step name {s.name!r} is prose: use a Msg"
            for part in (s.formula, s.substituted):
                assert part is None or isinstance(part, Msg), f"{where}: {s.name}: {part!r} is not a Msg"
            for d, role in (s.dim_roles or {}).items():
                assert isinstance(d, int) and isinstance(role, DimRole), f"{where}: {s.name}: {d}: {role!r}"
                assert role.kind in DIM_KINDS, f"{where}: unknown dim kind {role.kind}"
            found += _messages_in([s.name, s.formula, s.substituted, s.value, *(s.dim_roles or {}).values()])
    for n in e.notes:
        assert isinstance(n, Msg), f"{where}: note {n!r} is not a Msg"
    for m in found:
        assert m.key in en, f"{where}: no English message {m.key}"
        missing = fields(en[m.key]) - set(m.args)
        assert not missing, f"{where}: {m.key} lacks {missing}"
        for v in _strings_in(m):
            assert not PROSE.search(v), f"{where}: {m.key} has prose in an argument: {v!r}"


def check_no_english(where: str, e: Explanation) -> None:
    out = format_explanation(e, max_children=100, lang=PSEUDO)
    left = TOKEN.sub(" ", out)
    hit = PROSE.search(left)
    assert hit is None, f"{where}: English outside the catalogue: {hit.group(0)!r} in\n{out}"


@pytest.mark.parametrize("op", schema_ops())
def test_explanations_are_structured_and_hold_no_english(op):
    n = 0
    for where, e in explanations(op):
        check_structured(where, e)
        check_no_english(where, e)
        format_explanation(e)  # and English renders
        n += 1
    assert n or schema_for(op) is not None


@pytest.mark.parametrize("op", [o for o in schema_ops() if o.rsplit(".", 1)[-1] in (
    "reduce", "batch_norm_training", "dot_general", "convolution", "dynamic_conv", "triangular_solve", "fft",
    "cholesky", "reduce_window")])
def test_provenance_schedules_are_messages(op):
    ex = make_example(op)
    s = Session(ex.text)
    s.bind(ex.inputs)
    s.run()
    ev = [e for e in s.history if e.op.name == op][-1]
    schedule = ev.provenance().schedule
    assert isinstance(schedule, Msg) and text(schedule, PSEUDO).startswith("⟪")
    assert PROSE.search(text(schedule))  # and it reads as a sentence in English
