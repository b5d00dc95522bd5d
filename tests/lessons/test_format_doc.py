"""lessons/README.md is the format's only documentation: every key, kind and mode the
loader accepts is documented there, and its examples are real."""

from __future__ import annotations

import re
import textwrap
import tomllib

from hlolab.lessons import check as chk
from hlolab.lessons import loader
from hlolab.lessons.model import EXERCISE_KINDS, TRANSLATABLE, VIEW_MODES
from tests.conftest import REPO

DOC = (REPO / "lessons" / "README.md").read_text()


def test_every_key_kind_and_mode_is_documented() -> None:
    keys = (set(loader.FRONT_REQUIRED) | set(loader.FRONT_OPTIONAL) | loader.PROGRAM_KEYS | loader.VIEW_KEYS
            | loader.COMMON_EXERCISE_KEYS | set().union(*loader.KIND_KEYS.values()) | TRANSLATABLE)
    missing = sorted(k for k in keys if f"`{k}`" not in DOC)
    assert not missing, f"keys the loader accepts but README.md does not document: {missing}"
    assert all(f"`{k}`" in DOC for k in EXERCISE_KINDS)
    assert all(f'`"{m}"`' in DOC for m in VIEW_MODES)


def _example(kind: str) -> dict:
    """The README's example exercise of ``kind`` (an indented code block)."""
    m = re.search(rf'\n((?:    .*\n|\n)*?    kind = "{kind}"\n(?:    .*\n|\n)*?)\n(?! )', DOC)
    assert m, kind
    return tomllib.loads(textwrap.dedent(m.group(1)))


def test_the_fill_attributes_example_is_real() -> None:
    ex = _example("fill-attributes")
    for answer, ok in [(ex["answer"], True)] + [(w, False) for w in ex["wrong"]]:
        run_ok = True
        try:
            got = chk.run_program(chk.fill_template(ex["template"], answer)).main_result()
        except chk.HloLabError:
            run_ok = False
        assert (run_ok and got.tolist() == ex["target"]) is ok
