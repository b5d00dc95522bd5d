"""Every lesson × every language present: the programs run, every view can be drawn,
every exercise accepts its reference answer and rejects each wrong one, by execution."""

from __future__ import annotations

import pytest

from hlolab.lessons import check as chk
from hlolab.lessons.loader import folders, parse_lesson
from hlolab.lessons.model import Exercise, Program, View
from hlolab.lessons.views import check_view, view_text

CASES = [pytest.param(f.files[lang], id=f"{f.path.name}-{lang}") for f in folders() for lang in f.languages]


def test_the_first_lessons_are_there() -> None:
    names = {f.path.name for f in folders()}
    assert {"01-tensors", "02-elementwise-broadcast", "06-gather"} <= names
    for f in folders():
        assert "en" in f.files


@pytest.mark.parametrize("path", CASES)
def test_lesson(path) -> None:
    les = parse_lesson(path)
    assert 3 <= len(les.exercises) <= 6, "a lesson has 3 to 6 exercises"
    runner = chk.Runner(les)
    for b in les.blocks:
        if isinstance(b, Program):
            run = runner.program(b.name)
            assert run.results(), f"{b.name} returns nothing"
        elif isinstance(b, View):
            check_view(runner, b)
            assert view_text(runner, b, lang=les.lang).strip()
        elif isinstance(b, Exercise):
            v = chk.check(runner, b, b.answer)
            assert v.ok, f"{les.where(b.line)}: reference answer rejected: {v.message}"
            assert b.wrong
            for w in b.wrong:
                vw = chk.check(runner, b, w)
                assert not vw.ok, f"{les.where(b.line)}: wrong answer {w!r} accepted"
            check_view(runner, b.show, b)
            assert b.hints and b.prompt


def test_gather_lesson_uses_every_kind_that_fits() -> None:
    les = parse_lesson(next(f for f in folders() if f.slug == "gather").files["en"])
    kinds = {e.kind for e in les.exercises}
    assert kinds >= {"predict-value", "predict-shape", "pick-sources", "fill-attributes", "fix-program"}
    fix = next(e for e in les.exercises if e.kind == "fix-program")
    err = chk.broken_error(chk.Runner(les), fix)
    assert err is not None and "gather (C9)" in str(err)
    spec = les.programs["spec"]
    res = chk.Runner(les).program(spec.name).main_result()
    # the StableHLO spec's gather example result, a few elements of it
    assert res.shape == (2, 2, 3, 2, 2)
    assert res[0, 0, 2].tolist() == [[13, 14], [15, 16]]
    assert res[1, 1, 0].tolist() == [[43, 44], [45, 46]]
    assert res[1, 1, 2].tolist() == [[27, 28], [29, 30]]
