"""Every code block of the README runs as written: the Python blocks, and each `hlolab …`
command of the shell blocks (the TUI's `open`/`explore` excepted: they need a terminal)."""

from __future__ import annotations

import re
import shlex

import pytest

from hlolab.cli import main
from tests.conftest import REPO

README = (REPO / "README.md").read_text()
BLOCKS = re.findall(r"```(\w*)\n(.*?)```", README, re.S)
PYTHON = [b for lang, b in BLOCKS if lang == "python"]
COMMANDS = [part.strip() for lang, b in BLOCKS if lang in ("bash", "sh") for line in b.splitlines()
            for part in line.split("&&") if part.strip().startswith("hlolab ")
            and part.split()[1] not in ("open", "explore")]


def test_the_readme_has_code_to_check():
    assert PYTHON and len(COMMANDS) >= 5


@pytest.mark.parametrize("code", PYTHON, ids=lambda c: c.splitlines()[0][:40])
def test_python_blocks_run(code, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "depends on" in out  # the trace printed as `hlolab trace` prints it, not a dump of masks


@pytest.mark.parametrize("command", COMMANDS)
def test_shell_commands_run(command, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # exports write here
    assert main(shlex.split(command)[1:]) == 0
