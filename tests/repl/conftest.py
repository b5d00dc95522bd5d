"""Drive the REPL as a user would: keystrokes through prompt_toolkit's pipe input,
the screen to a DummyOutput, and what the REPL prints collected as text."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from hlolab.repl.app import Repl

CTRL_D = "\x04"


@pytest.fixture(autouse=True)
def data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """History and autosave go to a fresh XDG data dir, never the user's."""
    d = tmp_path / "xdg"
    monkeypatch.setenv("XDG_DATA_HOME", str(d))
    return d


def type_lines(lines: list[str], quit_answer: str = "y") -> str:
    """Keystrokes: each line then Enter (a line may hold newlines of a multi-line
    statement: each one is an Enter too), then Ctrl-D and the answer to "quit anyway?"."""
    keys = "".join(line.replace("\n", "\r") + "\r" for line in lines)
    return keys + CTRL_D + quit_answer + "\r"


Drive = Callable[..., tuple[str, Repl]]


@pytest.fixture
def drive() -> Drive:
    def run(lines: list[str], repl: Repl | None = None, prefix: str = "") -> tuple[str, Repl]:
        out = io.StringIO()
        repl = repl or Repl(out=out, colour=False)
        repl.out = out
        with create_pipe_input() as inp:
            inp.send_text(prefix + type_lines(lines))
            with create_app_session(input=inp, output=DummyOutput()):
                assert repl.run() == 0
        return out.getvalue(), repl
    return run
