"""``:lesson N`` in the REPL, driven through prompt_toolkit's pipe input: one exercise
completed at the REPL's prompt, ``:lang`` choosing the language, then back at the REPL."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from hlolab.lessons.progress import Progress
from hlolab.repl.app import Repl

from .conftest import FIXTURES


@pytest.fixture(autouse=True)
def data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))


def _drive(lines: list[str]) -> str:
    out = io.StringIO()
    repl = Repl(out=out, colour=False)
    keys = "".join(line + "\r" for line in lines) + "\x04" + "y\r"
    with create_pipe_input() as inp:
        inp.send_text(keys)
        with create_app_session(input=inp, output=DummyOutput()):
            assert repl.run() == 0
    return out.getvalue()


def test_lesson_completes_an_exercise_in_the_repl() -> None:
    out = _drive([":lesson 1", "2.25", "16", "quit", "x = [1, 2]:s32"])
    assert "Lesson 1: Tensors" in out
    assert "Not quite: %y[1, 0] is not 2.25." in out
    assert "Right: %y[1, 0] = 16." in out
    assert "Bye: your progress is saved." in out
    assert "%x : tensor<2xi32>" in out                         # back at the REPL afterwards
    assert Progress.load().completed("en", "tensors") == ["read-index"]


def test_lesson_follows_lang(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HLOLAB_LESSONS", str(FIXTURES / "good"))
    out = _drive([":lang zh", ":lesson 1", "4"])
    assert "一个很小的课程" in out and "两个向量相加" in out
    assert Progress.load().completed("zh", "demo") == ["v"]


def test_lesson_without_a_number_says_how() -> None:
    out = _drive([":lesson"])
    assert "usage: :lesson N" in out
