"""``hlolab lessons``, ``hlolab lessons check`` and ``hlolab lesson N``."""

from __future__ import annotations

import pytest

from hlolab.cli import main
from hlolab.lessons.progress import Progress

from .conftest import FIXTURES


def test_list_shows_progress_per_language(capsys: pytest.CaptureFixture[str]) -> None:
    p = Progress.load()
    p.complete("en", "gather", "rows-value")
    p.complete("en", "gather", "spec-shape")
    p.set_current("en", "gather")
    p.save()
    assert main(["lessons"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Lessons (en)\n")
    row = next(line for line in out.splitlines() if "Gather" in line)
    assert row.startswith(" 6  Gather") and "[2/6]" in row and row.endswith("<- current")
    assert " 1  Tensors" in out and "[0/" in out
    assert main(["lessons", "--lang", "zh"]) == 0
    zh = capsys.readouterr().out
    assert "[2/6]" not in zh and "<- " not in zh


def test_check_exit_codes(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("HLOLAB_LESSONS", str(FIXTURES / "good"))
    assert main(["lessons", "check"]) == 0
    out = capsys.readouterr().out
    assert "missing: no es translation" in out and out.rstrip().splitlines()[-1].startswith("ok: 0 error(s)")
    assert main(["lessons", "check", "--strict"]) == 1
    assert "FAILED" in capsys.readouterr().out
    assert main(["lessons", "check", "--lang", "zh"]) == 0
    assert "no es translation" not in capsys.readouterr().out
    monkeypatch.setenv("HLOLAB_LESSONS", str(FIXTURES / "wrong_answer"))
    assert main(["lessons", "check", "1"]) == 1
    assert "reference answer 5 is rejected" in capsys.readouterr().out
    monkeypatch.setenv("HLOLAB_LESSONS", str(FIXTURES / "mismatch"))
    assert main(["lessons", "check"]) == 1


def test_check_the_shipped_lessons(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lessons", "check", "6", "1", "2"]) == 0, capsys.readouterr().out


def test_lesson_unknown_number(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lesson", "99", "--plain"]) == 1
    assert "no lesson '99'" in capsys.readouterr().err
