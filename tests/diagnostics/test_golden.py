"""Golden diagnostics: ~50 malformed programs and the exact message each one gets.

Every message has one form (DESIGN.md, "Errors"): ``file:line:col: error: message``, the
source line and a caret; verification errors name the op and the spec constraint
``(Cn)``. ``cases.mlir`` holds the programs (split at ``// -----``, each opened by a
comment saying what is wrong); ``expected.txt`` the messages. After a deliberate change
of wording: ``HLOLAB_UPDATE_GOLDEN=1 python -m pytest tests/diagnostics`` and read the diff.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from hlolab.errors import HloLabError
from hlolab.interp.engine import Interpreter
from hlolab.interp.inputs import random_args
from hlolab.ir.parser import parse_module, split_source

HERE = Path(__file__).parent
CASES = HERE / "cases.mlir"
EXPECTED = HERE / "expected.txt"
STEP_BUDGET = 10_000  # small, so the endless-loop case ends quickly


def diagnose(chunk: str, first_line: int) -> str:
    """What a user sees for one module: the error text, or OK."""
    try:
        module = parse_module(chunk, "cases.mlir", first_line)
        interp = Interpreter(module, step_budget=STEP_BUDGET)
        func = interp.entry(None)
        for _ in interp.steps(func.name, random_args(func, [], 0)):
            pass
    except HloLabError as e:
        return str(e).rstrip()
    return "OK"


def cases() -> list[tuple[str, str]]:
    out = []
    for first_line, chunk in split_source(CASES.read_text()):
        title = next(ln for ln in chunk.splitlines() if ln.startswith("// ")).removeprefix("// ")
        out.append((title, diagnose(chunk, first_line)))
    return out


def render(results: list[tuple[str, str]]) -> str:
    return "".join(f"=== {k + 1}: {title}\n{msg}\n\n" for k, (title, msg) in enumerate(results))


def test_every_malformed_program_gets_its_exact_message():
    got = render(cases())
    if os.environ.get("HLOLAB_UPDATE_GOLDEN"):
        EXPECTED.write_text(got)
    want = EXPECTED.read_text()
    got_blocks, want_blocks = got.split("\n=== "), want.split("\n=== ")
    for g, w in zip(got_blocks, want_blocks, strict=True):
        assert g == w


def test_every_message_has_the_one_form():
    for title, msg in cases():
        first = msg.splitlines()[0]
        assert re.match(r"cases\.mlir:\d+:\d+: error: ", first), (title, first)
        lines = msg.splitlines()
        assert len(lines) >= 3 and lines[2].strip() == "^", (title, msg)  # source line and caret
        if title.startswith("verify:"):
            assert re.search(r"^cases\.mlir:\d+:\d+: error: [a-z_.]+ \([CI]\d+\): ", first), (title, first)


def test_the_file_has_about_fifty_cases():
    assert len(cases()) >= 50
