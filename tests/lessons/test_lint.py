"""The linter: planted mistakes in fixture lessons are found; missing translations are
reported, and fail only with strict."""

from __future__ import annotations

import pytest

from hlolab import messages
from hlolab.lessons.lint import ERROR, MISSING, lint

from .conftest import FIXTURES


def test_good_fixture_passes() -> None:
    r = lint(FIXTURES / "good")
    assert not r.errors, r.format()
    assert r.counts["answers"] == 1 and r.counts["wrong"] == 1 and r.counts["translations"] == 1
    assert [i.message for i in r.missing] == ["no es translation (es.md)"]
    assert r.ok() and not r.ok(strict=True)
    assert "1 reference answer(s) accepted, 1 wrong answer(s) rejected" in r.format()


def test_wrong_reference_answer_is_found() -> None:
    r = lint(FIXTURES / "wrong_answer")
    assert not r.ok()
    [e] = r.errors
    assert e.where.endswith("wrong_answer/01-demo/en.md:29")
    assert "reference answer 5 is rejected" in e.message and "the program gives 4" in e.message


def test_a_wrong_answer_that_is_accepted_is_found(tmp_path) -> None:
    d = tmp_path / "01-demo"
    d.mkdir()
    (d / "en.md").write_text((FIXTURES / "good" / "01-demo" / "en.md").read_text()
                             .replace("wrong = [2]", "wrong = [2, 4.0]"))
    r = lint(tmp_path)
    [e] = r.errors
    assert "the wrong answer 4.0 is accepted" in e.message


def test_structural_mismatches_between_translations_are_errors() -> None:
    r = lint(FIXTURES / "mismatch")
    by_file = {e.where.split("/")[-1]: e.message for e in r.errors}
    assert set(by_file) == {"zh.md:29", "es.md:23"}, r.format()
    assert "'answer' differs: English has 4, this file 3" in by_file["zh.md:29"]
    assert "block 2 is hlolab-view; the English original has hlolab-exercise there" in by_file["es.md:23"]
    assert not r.ok()


def test_missing_ui_translations_are_listed(monkeypatch: pytest.MonkeyPatch) -> None:
    zh = dict(messages.catalogue("zh"))
    zh.pop("lessons.verdict.value_right", None)
    zh.pop("roles.copy", None)
    monkeypatch.setitem(messages._catalogues, "zh", zh)
    r = lint(FIXTURES / "good", langs=["en", "zh"])
    assert "lessons.verdict.value_right" in r.missing_keys["zh"]
    assert r.ok() and not r.ok(strict=True)
    assert "have no zh translation" in r.format()
    assert all(i.level in (ERROR, MISSING) for i in r.issues)


def test_the_shipped_lessons_pass() -> None:
    r = lint()
    assert not r.errors, r.format()
    assert r.counts["exercises"] >= 15 and r.counts["wrong"] >= r.counts["exercises"]


def test_a_program_error_points_at_the_lesson_file_line(tmp_path) -> None:
    d = tmp_path / "01-demo"
    d.mkdir()
    (d / "en.md").write_text((FIXTURES / "good" / "01-demo" / "en.md").read_text()
                             .replace("stablehlo.add %a, %a", "stablehlo.add %a, %b"))
    r = lint(tmp_path)
    first = r.errors[0]
    assert first.where.endswith("en.md:11") and "program 'p' does not run" in first.message
    assert f"{d / 'en.md'}:17:" in first.message      # the line of `%s = stablehlo.add %a, %b`
    assert (d / "en.md").read_text().splitlines()[16].lstrip().startswith("%s = stablehlo.add %a, %b")
