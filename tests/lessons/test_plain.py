"""Plain mode: lesson 6 completed through piped stdin in a subprocess, and the flow's
commands (hint, show, skip, quit, end of input, Ctrl-C) with a recording console."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.console import Console

from hlolab.lessons.loader import folders, load
from hlolab.lessons.plain import PlainLesson, follow
from hlolab.lessons.progress import Progress

REPO = Path(__file__).resolve().parents[2]
GATHER_IDS = ["rows-value", "windows-sources", "spec-shape", "spec-value", "columns-fill", "rows-fix"]
# every exercise of lesson 6, with a wrong try, a hint and the learner's typing habits
LESSON6 = [
    "11", "hint", "21",                       # rows-value: wrong, hint, right
    "2,3", "[2, 2]",                          # windows-sources
    "2x3x2x2", "2 x 2 x 3 x 2 x 2",           # spec-shape
    "15",                                     # spec-value
    "1", "1", "0",                            # columns-fill: start_index_map = 0 is wrong...
    "1", "1", "1",                            # ...then right
    "hint", "10: slice_sizes = array<i64: 1, 3>", "list", "run",  # rows-fix
]


def _run_cli(args: list[str], stdin: str, state: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, XDG_STATE_HOME=str(state), COLUMNS="100")
    env.pop("HLOLAB_LANG", None)
    return subprocess.run([sys.executable, "-m", "hlolab", *args], input=stdin, capture_output=True,
                          text=True, env=env, cwd=REPO, timeout=120)


def test_lesson6_plain_through_piped_stdin(state_home: Path) -> None:
    r = _run_cli(["lesson", "6", "--plain"], "\n".join(LESSON6) + "\n", state_home)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "Lesson 6: Gather" in out
    assert "Not quite: %rows[2, 1] is not 11." in out
    assert "Hint 1 of 2:" in out
    assert "Right: %rows[2, 1] = 21." in out
    assert "Not quite: %windows[2, 1, 0] does not read [2, 3] of %operand." in out
    assert "Right: %result has shape 2x2x3x2x2." in out
    assert "Right: %result[1, 0, 1, 1, 0] = 15." in out
    assert "The program runs, but it gives" in out          # the clamped columns
    assert "The error says: <lesson>:4:3: gather (C9)" in out
    # the learner typed no indentation: the line keeps its own, shown as it now reads
    assert "Line 10 is now:     slice_sizes = array<i64: 1, 3>" in out
    # %rows is printed by its program block and asked in exercise 1: held back until answered
    assert "%rows : hidden until you answer exercise 1" in out
    head, tail = out.split("Right: %rows[2, 1] = 21.", 1)
    assert "[[" not in head.split("%rows : hidden", 1)[1].split("Exercise 1 of 6", 1)[0]
    assert tail.split("Exercise 2 of 6", 1)[0].count("Now that you have answered") == 1
    assert "%rows : tensor<3x3xi32>" in tail.split("Exercise 2 of 6", 1)[0]
    assert out.count("Right: the program runs and produces the target.") == 2
    assert "End of lesson 6: 6 of 6 exercises done." in out
    assert "Read first: 1 (Tensors, element types, and reading a StableHLO program), 2 (Element-wise" in out
    later = sorted(f.number for f in folders() if f.number > 6)
    assert ("Next: hlolab lesson" in out) is bool(later)
    if later:
        assert f"Next: hlolab lesson {later[0]} (" in out
    assert "func.func @main() -> tensor<3x3xi32>" in out    # programs are shown
    assert "%table[0, 2]" in out                              # a view's sources
    doc = json.loads((state_home / "hlolab" / "lessons.json").read_text())
    assert doc["languages"]["en"]["completed"]["gather"] == GATHER_IDS
    assert doc["languages"]["en"]["current"] == "gather"


def test_end_of_input_mid_lesson_keeps_progress(state_home: Path) -> None:
    r = _run_cli(["lesson", "6"], "21\n2,2\n", state_home)   # then stdin ends
    assert r.returncode == 0, r.stderr
    assert "plain mode" in r.stdout                            # no TUI viewer yet: says so
    assert "Bye: your progress is saved." in r.stdout
    doc = json.loads((state_home / "hlolab" / "lessons.json").read_text())
    assert doc["languages"]["en"]["completed"]["gather"] == ["rows-value", "windows-sources"]
    again = _run_cli(["lesson", "6", "--plain"], "quit\n", state_home)
    assert again.returncode == 0 and "(already done)" in again.stdout


def _scripted(lines: list[str], interrupt: bool = False) -> tuple[Iterator[str], list[str]]:
    asked: list[str] = []
    it = iter(lines)

    def ask(prompt: str) -> str:
        asked.append(prompt)
        try:
            return next(it)
        except StopIteration:
            raise KeyboardInterrupt if interrupt else EOFError from None
    return ask, asked


def _flow(lesson: int, lines: list[str], lang: str = "en",
          interrupt: bool = False) -> tuple[int, str, Progress]:
    out = io.StringIO()
    console = Console(file=out, width=100, no_color=True, highlight=False)
    ask, _ = _scripted(lines, interrupt)
    progress = Progress.load()
    code = PlainLesson(load(lesson, lang), lang, console, ask, progress).run()
    return code, out.getvalue(), Progress.load()


def test_hints_show_skip_and_reveal() -> None:
    code, out, progress = _flow(1, ["16", "hint", "hint", "-24", "250", "240", "show", "skip", "quit"])
    assert code == 0
    assert "Right: %y[1, 0] = 16." in out
    assert "Hint 1 of 1:" in out and "No more hints." in out
    # after three wrong tries the verdict says what the program gives
    assert out.count("For the record: your value") == 1 and "the program gives -16" in out
    assert "Show me:" in out and "The answer: -16" in out
    assert "Skipped" in out
    assert progress.completed("en", "tensors") == ["read-index"]


def test_ctrl_c_exits_cleanly_with_progress() -> None:
    code, out, progress = _flow(2, ["7"], interrupt=True)
    assert code == 130 and "Bye: your progress is saved." in out
    assert progress.completed("en", "elementwise-broadcast") == ["select-value"]
    assert progress.current("en") == "elementwise-broadcast"


def test_a_missing_translation_falls_back_to_english(monkeypatch: pytest.MonkeyPatch) -> None:
    from .conftest import FIXTURES

    monkeypatch.setenv("HLOLAB_LESSONS", str(FIXTURES / "good"))   # en and zh, no es
    for lang, heading, fallback in [("es", "A tiny lesson", True), ("zh", "一个很小的课程", False)]:
        out = io.StringIO()
        ask, _ = _scripted(["4"])
        assert follow(1, lang, console=Console(file=out, width=100, no_color=True), ask=ask) == 0
        text = out.getvalue()
        assert heading in text
        assert ("no es translation yet" in text or "traducción" in text) is fallback
        assert Progress.load().completed(lang, "demo") == ["v"]


# lesson 10 (convolution) answered in Chinese: a wrong answer (the flipped kernel), then every
# exercise right, the fix typed without its indentation
LESSON10 = [
    "345", "543",                                  # conv1d-value: flipped kernel, then right
    "2x4x3x3",                                     # nchw-shape
    "2", "1", "1",                                 # pad-stride-fill: stride, low, high
    "0,0,2,0  0,0,3,0  0,1,2,0  0,1,3,0",          # spec-sources
    "-10",                                         # depthwise-value
    "7: feature_group_count = 2 : i64,", "run",    # groups-fix
]
CONV_IDS = ["conv1d-value", "nchw-shape", "pad-stride-fill", "spec-sources", "depthwise-value", "groups-fix"]


def test_lesson10_plain_in_chinese_through_piped_stdin(state_home: Path) -> None:
    r = _run_cli(["lesson", "10", "--plain", "--lang", "zh"], "\n".join(LESSON10) + "\n", state_home)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    zh = load(10, "zh")
    assert zh.title in out and zh.title != load(10, "en").title   # the Chinese text is shown
    assert "Not quite" not in out and "Right:" not in out          # verdicts in Chinese too
    assert "不对：%out[0, 2, 0] 不是 345。" in out and "正确：%out[0, 2, 0] = 543。" in out
    assert "第 10 课结束：完成了 6 道练习中的 6 道。" in out
    doc = json.loads((state_home / "hlolab" / "lessons.json").read_text())
    assert doc["languages"]["zh"]["completed"]["convolution"] == CONV_IDS
    assert "en" not in doc["languages"] or "convolution" not in doc["languages"]["en"]["completed"]
