"""Run the StableHLO interpreter test programs (../shared/conformance/interpret).

Every module whose ops hlolab implements must PASS, except the modules in
KNOWN_FAILURES, each with its reason. The list stays honest: a listed
module that starts passing fails the test until it is removed.
"""

from __future__ import annotations

import re
import shlex
from functools import lru_cache
from pathlib import Path

from hlolab.ir.parser import parse_module, split_source
from hlolab.ops.registry import lookup
from hlolab.runner import ModuleResult, is_check, parse_args_literal, run_module
from tests.conftest import shared_dir

# label -> why it fails (keep sorted; every entry must still fail)
KNOWN_FAILURES: dict[str, str] = {
}


def corpus_files() -> list[Path]:
    root = shared_dir("conformance", "interpret")
    return sorted(root.rglob("*.mlir"))


def run_args(text: str) -> list | None:
    """The --args of the file's first RUN line that expects success, if any."""
    for line in text.splitlines():
        m = re.match(r"\s*//\s*RUN:\s*(.*)", line)
        if not m or m.group(1).startswith("not "):
            continue
        for tok in shlex.split(m.group(1)):
            if tok.startswith("--args="):
                return parse_args_literal(tok[len("--args="):])
        return None
    return None


def unimplemented_ops(module) -> list[str]:
    missing = []
    for op in module.walk():
        if op.name in ("func.return", "return", "stablehlo.return"):
            continue
        if lookup(op.name) is None:
            missing.append(op.name)
        elif op.name == "stablehlo.custom_call" and not is_check(op.name, op.attributes):
            missing.append("stablehlo.custom_call")
    return missing


@lru_cache(maxsize=1)
def corpus_results() -> tuple[list[tuple[ModuleResult, list[str]]], int]:
    root = shared_dir("conformance", "interpret")
    out = []
    for path in corpus_files():
        text = path.read_text()
        args = run_args(text)
        for n, (first, chunk) in enumerate(split_source(text), start=1):
            label = f"{path.relative_to(root)}#{n}"
            module = parse_module(chunk, str(path), first)
            if not module.funcs:
                continue
            out.append((run_module(module, label, args=args), unimplemented_ops(module)))
    return out, len(corpus_files())


def test_interpret_corpus():
    results, n_files = corpus_results()
    # OK: ran without error and has no check ops (its upstream test reads the printed output)
    passed = sum(r.ok for r, _ in results)
    print(f"\ninterpret corpus: {passed}/{len(results)} modules pass ({n_files} files)")

    runnable = [(r, m) for r, m in results if not m]
    unexpected = [r.line() for r, _ in runnable if not r.ok and r.label not in KNOWN_FAILURES]
    fixed = [label for label in KNOWN_FAILURES
             if any(r.label == label and r.ok for r, _ in results)]
    assert not unexpected, "modules using only implemented ops fail:\n" + "\n".join(unexpected)
    assert not fixed, "now passing, remove from KNOWN_FAILURES:\n" + "\n".join(fixed)
    labels = {r.label for r, _ in results}
    stale = [label for label in KNOWN_FAILURES if label not in labels]
    assert not stale, f"KNOWN_FAILURES names modules that do not exist: {stale}"


def test_unimplemented_ops_fail_cleanly():
    results, _ = corpus_results()
    for r, missing in results:
        if missing and r.status != "PASS":
            assert r.status == "ERROR", r.line()
            assert "not implemented yet" in r.message or "not supported" in r.message, r.line()


def test_no_module_crashes_with_an_internal_error():
    results, _ = corpus_results()
    bad = [r.line() for r, _ in results if "internal error" in r.message or "failed: " in r.message]
    assert not bad, "\n".join(bad)
