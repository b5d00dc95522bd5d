"""Lesson files with mistakes: every error names file:line and what is wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from hlolab.errors import HloLabError
from hlolab.lessons.loader import LessonError, find_folder, folders, parse_lesson
from hlolab.lessons.model import Exercise, Program, Prose

from .conftest import FIXTURES

HEAD = '+++\nid = "x"\ntitle = "X"\norder = 1\nops = []\nprerequisites = []\n+++\n'
PROG = ("```hlolab-program\nname = \"p\"\nlang = \"mlir\"\ntext = '''\nfunc.func @main() -> tensor<2xi32> {\n"
        "  %a = stablehlo.constant dense<[1, 2]> : tensor<2xi32>\n  return %a : tensor<2xi32>\n}\n'''\n```\n")
EX = ('```hlolab-exercise\nid = "e"\nkind = "predict-value"\nvalue = "%a"\nelement = [0]\nprompt = "?"\n'
      'answer = 1\nwrong = [2]\nhints = ["h"]\nshow = { value = "%a" }\n```\n')


def _err(text: str, tmp_path: Path) -> LessonError:
    p = tmp_path / "en.md"
    p.write_text(text)
    with pytest.raises(LessonError) as ei:
        parse_lesson(p)
    assert isinstance(ei.value, HloLabError)
    return ei.value


def test_a_good_file_parses(tmp_path: Path) -> None:
    p = tmp_path / "en.md"
    p.write_text(HEAD + "Some *prose*.\n\n" + PROG + "\nMore.\n\n" + EX)
    les = parse_lesson(p)
    assert [type(b) for b in les.blocks] == [Prose, Program, Prose, Exercise]
    ex = les.exercises[0]
    assert ex.program == "p" and ex.element == (0,) and ex.show.program == "p"
    assert les.blocks[1].line == 10 and ex.line == 23
    assert les.programs["p"].text.startswith("func.func")


@pytest.mark.parametrize("body, line, words", [
    (HEAD.replace('order = 1\n', 'order = "one"\n'), 4, "'order' must be a int"),
    (HEAD.replace('ops = []\n', 'ops = []\ncolour = 1\n'), 6, "unknown key 'colour'"),
    (HEAD.replace('id = "x"\n', ''), 1, "'id' is missing"),
    (HEAD + PROG.replace('lang = "mlir"', 'lang = "python"'), 10, "\"mlir\" or \"builder\""),
    (HEAD + PROG + EX.replace('answer = 1', 'answer = 1\nanser = 2'), 25, "unknown key 'anser'"),
    (HEAD + PROG + EX.replace('kind = "predict-value"', 'kind = "guess"'), 20, "kind 'guess' is not one of"),
    (HEAD + PROG + EX.replace('wrong = [2]', 'wrong = []'), 25, "at least one wrong answer"),
    (HEAD + PROG + EX.replace('answer = 1\n', ''), 18, "'answer' is missing"),
    (HEAD + EX, 8, "no program block above"),
    (HEAD + PROG + PROG, 18, "already used on line 8"),
    (HEAD + "```hlolab-programm\nname = 1\n```\n", 8, "unknown block 'hlolab-programm'"),
    (HEAD + "```hlolab-view\nvalue = \"%a\n```\n", 9, "not valid TOML"),
    (HEAD + "```hlolab-view\nvalue = \"%a\"\n", 8, "never closed"),
    (HEAD + PROG + "```hlolab-view\nvalue = \"%a\"\nmode = \"explain\"\n```\n", 18, "needs an 'element'"),
    ("# no front matter\n", 1, "front matter"),
    (HEAD + PROG.replace('lang = "mlir"', 'lang = "builder"\nargs = ["dense<1> : tensor<i32>"]'), 11,
     "'args' are inputs of an MLIR @main"),
])
def test_errors_name_file_and_line(tmp_path: Path, body: str, line: int, words: str) -> None:
    e = _err(body, tmp_path)
    assert e.loc is not None and e.loc.line == line, str(e)
    assert e.loc.file == str(tmp_path / "en.md")
    assert words in e.message, e.message
    assert str(e).startswith(f"{tmp_path / 'en.md'}:{line}:1: error: ")


def test_fill_attributes_blanks_must_match_the_template(tmp_path: Path) -> None:
    ex = ('```hlolab-exercise\nid = "f"\nkind = "fill-attributes"\ntemplate = "a ${x} ${y}"\n'
          'blanks = ["x"]\ntarget = [1]\nanswer = { x = "1" }\nwrong = [{ x = "2" }]\nhints = ["h"]\n'
          'show = { value = "%a" }\n```\n')
    e = _err(HEAD + PROG + ex, tmp_path)
    assert "must name exactly the ${…} blanks" in e.message and e.loc.line == 22


def test_fix_program_edits_must_name_lines_of_the_program(tmp_path: Path) -> None:
    ex = ('```hlolab-exercise\nid = "f"\nkind = "fix-program"\nbroken = "a\\nb"\nexpect_error = "C1"\n'
          'target = [1]\nanswer = { 3 = "x" }\nwrong = [{ 1 = "y" }]\nhints = ["h"]\n'
          'show = { value = "%a" }\n```\n')
    e = _err(HEAD + PROG + ex, tmp_path)
    assert "line 3 is not a line of 'broken' (1..2)" in e.message and e.loc.line == 24


def test_ordinary_code_blocks_are_prose(tmp_path: Path) -> None:
    p = tmp_path / "en.md"
    p.write_text(HEAD + "````\n```hlolab-view\nnot toml at all\n```\n````\n" + PROG + EX)
    les = parse_lesson(p)
    assert isinstance(les.blocks[0], Prose) and "not toml at all" in les.blocks[0].text
    assert len(les.views) == 0


def test_finding_lessons(monkeypatch: pytest.MonkeyPatch) -> None:
    assert find_folder(6).slug == "gather" and find_folder("06").slug == "gather"
    assert find_folder("gather").number == 6
    with pytest.raises(LessonError, match="no lesson '99'"):
        find_folder(99)
    monkeypatch.setenv("HLOLAB_LESSONS", str(FIXTURES / "good"))
    assert [f.path.name for f in folders()] == ["01-demo"]
    assert folders()[0].languages == ["en", "zh"]
