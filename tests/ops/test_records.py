"""Typed op definitions: attribute records, result-type inference, families.

For every registered op: an attribute record and an ``infer``. For every op
instance of the interpret corpus and the JAX fixtures: the record read from
the IR writes back the same attributes (so the pretty and the generic text
round-trip), and ``infer`` admits the declared result types. The record's
fields and the pretty-syntax table name the same attributes.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pytest

from hlolab.errors import HloLabError
from hlolab.ir import syntax
from hlolab.ir.parser import parse_file
from hlolab.ir.printer import print_module
from hlolab.ops.record import Attrs, infer_with, inferred_for, type_admits
from hlolab.ops.registry import FAMILIES, OpCall, all_ops, lookup
from tests.conftest import REPO, shared_dir

# attributes any op may carry that belong to no op's record (discardable)
DISCARDABLE_PREFIXES = ("mhlo.", "jax.", "tf.", "xla.", "sdy.", "_")



def _discardable(key: str) -> bool:
    return key.startswith(DISCARDABLE_PREFIXES)


@pytest.mark.parametrize("name", sorted(all_ops()))
def test_every_op_has_a_record_infer_and_family(name: str) -> None:
    d = all_ops()[name]
    assert isinstance(d.attrs, type) and issubclass(d.attrs, Attrs), name
    assert d.infer is not None, f"{name} has no infer"
    assert d.family in FAMILIES, f"{name}: family {d.family!r}"


def _corpus_paths() -> list[Path]:
    root = shared_dir("conformance", "interpret")
    return (sorted(root.rglob("*.mlir")) + sorted((REPO / "hlolab" / "examples").glob("*.mlir"))
            + sorted((REPO / "tests" / "fixtures" / "jax_programs").glob("*.mlir")))


@lru_cache(maxsize=1)
def _instances() -> list:
    out = []
    for path in _corpus_paths():
        try:
            modules = parse_file(str(path), split=True)
        except HloLabError:
            continue
        for m in modules:
            for op in m.walk():
                if lookup(op.name) is not None:
                    out.append((path.name, m, op))
    return out


def test_corpus_has_instances_of_most_ops() -> None:
    seen = {op.name for _, _, op in _instances()}
    assert len(seen) >= 80, sorted(seen)


def _of(name: str) -> list:
    found = [i for i in _instances() if i[2].name == name]
    if not found:
        pytest.skip(f"no instance of {name} in the corpus or the JAX fixtures")
    return found


OPS = sorted(all_ops())


@pytest.mark.parametrize("name", OPS)
def test_records_round_trip_over_the_corpus(name: str) -> None:
    """Each record writes back exactly the attributes it was read from."""
    failures = []
    for where, _, op in _of(name):
        call = OpCall(op)
        try:
            rec = call.attrs
        except HloLabError as e:
            failures.append(f"{where}: {op.name}: {e}")
            continue
        own = {k: v for k, v in op.attributes.items() if not _discardable(k)}
        unknown = set(own) - rec.ir_names()
        if unknown:
            failures.append(f"{where}: {op.name}: attributes {sorted(unknown)} are in no record field")
            continue
        written = rec.to_ir()
        if written != own:
            failures.append(f"{where}: {op.name}: wrote {written}, read {own}")
            continue
        again = type(rec).from_ir(written, call.error)
        if again != rec:
            failures.append(f"{where}: {op.name}: re-read {again} != {rec}")
    assert not failures, "\n".join(failures[:20]) + f"\n({len(failures)} in all)"


def test_printed_text_round_trips_through_records() -> None:
    """Replacing every op's attributes by its record's ``to_ir`` prints the same
    module text, in the pretty and the generic form."""
    done = set()
    for _, m, _ in _instances():
        if id(m) in done:
            continue
        done.add(id(m))
        before = (print_module(m), print_module(m, generic=True))
        saved = []
        for op in m.walk():
            if lookup(op.name) is None:
                continue
            rec = OpCall(op).attrs
            saved.append((op, op.attributes))
            extra = {k: v for k, v in op.attributes.items() if k not in rec.ir_names()}
            op.attributes = {**rec.to_ir(), **extra}
        try:
            after = (print_module(m), print_module(m, generic=True))
        finally:
            for op, attrs in saved:
                op.attributes = attrs
        assert after == before


@pytest.mark.parametrize("name", OPS)
def test_infer_admits_every_declared_result_type(name: str) -> None:
    failures = []
    for where, _, op in _of(name):
        d = lookup(op.name)
        call = OpCall(op)
        try:
            inferred = infer_with(d.infer, call.attrs, op.operand_types, call.error)
        except HloLabError as e:
            failures.append(f"{where}: {op.name}: {e}")
            continue
        declared = op.result_types
        inferred = inferred_for(inferred, declared)
        if len(inferred) != len(declared) or not all(
                type_admits(a, b) for a, b in zip(inferred, declared, strict=True)):
            failures.append(f"{where}: {op.name}: inferred {[str(t) for t in inferred]}, "
                            f"declared {[str(t) for t in declared]}")
    assert not failures, "\n".join(failures[:20]) + f"\n({len(failures)} in all)"


def _syntax_names(name: str) -> frozenset[str] | None:
    s = syntax.lookup(name)
    if s is None:
        return None
    # a derived attribute (chlo.scan's resultSegmentSizes) is in the IR too: the record holds it
    derived = frozenset(getattr(s, "derived_names", ()) or ())
    return frozenset(s.inherent) | derived


@pytest.mark.parametrize("name", sorted(n for n in all_ops() if syntax.lookup(n) is not None))
def test_record_and_pretty_syntax_name_the_same_attributes(name: str) -> None:
    rec = all_ops()[name].attrs
    assert _syntax_names(name) == rec.ir_names()


def test_required_upstream_attributes_are_written_at_their_defaults():
    # upstream's convolution requires feature_group_count and batch_group_count, even at 1
    from hlolab.ops.contraction import ConvolutionAttrs
    from hlolab.ops.examples import make_example

    assert ConvolutionAttrs.always_written() == {"feature_group_count", "batch_group_count"}
    text = make_example("convolution").text
    assert "batch_group_count = 1 : i64" in text and "feature_group_count = 1 : i64" in text
