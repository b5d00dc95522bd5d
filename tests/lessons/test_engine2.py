"""What lesson authors found missing (issue 29, step 2): qualified value names, loop
iterations and processes in views and exercises, several-result target programs, "no
cells" answers, answers held back until asked, programs read from files, and the small
plain-mode fixes (empty results, verbatim edited lines, plain-text hints)."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from hlolab.errors import HloLabError
from hlolab.lessons import check as chk
from hlolab.lessons.lint import lint
from hlolab.lessons.loader import LessonError, parse_lesson
from hlolab.lessons.plain import PlainLesson, edit_line
from hlolab.lessons.progress import Progress
from hlolab.lessons.views import giveaways, hidden_results, hidden_views, view_text
from hlolab.messages import text

from .conftest import FIXTURES

HEAD = '+++\nid = "x"\ntitle = "X"\norder = 1\nops = []\nprerequisites = []\n+++\n'
FORI = FIXTURES / "engine2" / "fori.mlir"  # lax.fori_loop(0, 3, lambda i, x: x * 2 + i, [1, 10])

GRID = """```hlolab-program
name = "shards"
lang = "mlir"
args = ["dense<[[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0]]> : tensor<4x2xf32>"]
text = '''
module attributes {mhlo.num_replicas = 1 : i32, mhlo.num_partitions = 4 : i32} {
  func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    %next = "stablehlo.collective_permute"(%x) {
      channel_handle = #stablehlo.channel_handle<handle = 3, type = 1>,
      source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 0]]> : tensor<4x2xi64>
    } : (tensor<2xf32>) -> tensor<2xf32>
    %twice = stablehlo.add %next, %next : tensor<2xf32>
    return %twice : tensor<2xf32>
  }
}
'''
```
"""


def _lesson(tmp_path: Path, body: str, with_fori: bool = True) -> Path:
    folder = tmp_path / "lessons" / "01-x"
    folder.mkdir(parents=True, exist_ok=True)
    if with_fori:
        shutil.copy(FORI, folder / "fori.mlir")
    fori = '```hlolab-program\nname = "fori"\nlang = "mlir"\nfile = "fori.mlir"\n```\n' if with_fori else ""
    path = folder / "en.md"
    path.write_text(HEAD + fori + body, encoding="utf-8")
    return path


def _exercise(kind: str, fields: str, answer: str, wrong: str, show: str = "") -> str:
    if not show:  # "show me": the value asked about, else the solved program's result
        value = fields.split('value = "', 1)[1].split('"', 1)[0] if 'value = "' in fields else "%r"
        show = f'{{ value = "{value}" }}'
    return (f'```hlolab-exercise\nid = "e{abs(hash((kind, fields))) % 10**6}"\nkind = "{kind}"\n{fields}\n'
            f'prompt = "?"\nanswer = {answer}\nwrong = {wrong}\nhints = ["h"]\nshow = {show}\n```\n')


def _verdicts(les, runner, ex) -> tuple[bool, list[bool]]:
    return chk.check(runner, ex, ex.answer).ok, [chk.check(runner, ex, w).ok for w in ex.wrong]


# --- 1, 2: values of called functions, loop iterations ----------------------------------------

def test_value_ref_keeps_the_function_qualifier() -> None:
    assert chk.value_ref("y") == "%y"
    assert chk.value_ref("@closed_call:%5") == "@closed_call:%5"
    assert chk.value_ref("@closed_call:5") == "@closed_call:%5"
    assert chk.local_name("@f:%x#1") == "%x#1"


def test_qualified_values_in_every_exercise_kind_and_iteration(tmp_path: Path) -> None:
    body = "".join([
        # x[1] goes 10 -> 20 -> 41 -> 84 through the three calls (iterations 0, 1, 2)
        _exercise("predict-value", 'value = "@closed_call:%5"\nelement = [1]', "84", "[41, 20]"),
        _exercise("predict-value", 'value = "@closed_call:%5"\nelement = [1]\niteration = 1', "41",
                  "[84, 20]"),
        _exercise("predict-value", 'value = "@closed_call:%5"\niteration = 0', "[2, 20]", "[[5, 41]]"),
        _exercise("predict-shape", 'value = "@closed_call:%5"\niteration = 2', "[2]", "[[]]"),
        _exercise("predict-type", 'value = "@closed_call:%0"', '"tensor<i32>"', '["tensor<2xi32>"]'),
        # add(%2, %4): element 1 reads %2[1]; the operand may be written qualified or not
        _exercise("pick-sources", 'value = "@closed_call:%5"\nelement = [1]\noperand = "%2"', "[[1]]",
                  "[[[0]], []]"),
        _exercise("pick-sources", 'value = "@closed_call:%5"\nelement = [0]\noperand = "@closed_call:%4"\n'
                  "iteration = 1", "[[0]]", "[[[1]]]"),
    ])
    les = parse_lesson(_lesson(tmp_path, body))
    runner = chk.Runner(les)
    for ex in les.exercises:
        assert _verdicts(les, runner, ex) == (True, [False] * len(ex.wrong)), ex.raw
    v = chk.check(runner, les.exercises[1], 84)
    assert not v.ok and "@closed_call:%5[1] (iteration 1) is not 84" in text(v.message, "en")


def test_views_of_called_values_and_iterations(tmp_path: Path) -> None:
    body = ('```hlolab-view\nvalue = "@closed_call:%5"\nelement = [1]\nmode = "explain"\n```\n'
            '```hlolab-view\nvalue = "@closed_call:%5"\niteration = 1\n```\n'
            '```hlolab-view\nvalue = "@closed_call:%5"\nelement = [1]\nmode = "trace"\niteration = 0\n```\n'
            + _exercise("predict-value", 'value = "%0#2"\nelement = [0]', "12", "[5]",
                        show='{ value = "@closed_call:%5", element = [1], mode = "explain", iteration = 1 }'))
    les = parse_lesson(_lesson(tmp_path, body))
    runner = chk.Runner(les)
    explain, value, trace = (view_text(runner, v, None, "en") for v in les.views)
    assert "@closed_call:%5[1] = 84  (stablehlo.add)" in explain and "add(82, 2) = 84" in explain
    assert value.splitlines()[0] == "@closed_call:%5 (iteration 1) : tensor<2xi32>"
    assert "[ 5 41]" in value
    assert trace.startswith("@closed_call:%5[1]") and "%x[1]" in trace
    show = view_text(runner, les.exercises[0].show, les.exercises[0], "en")
    assert "add(40, 1) = 41" in show


def test_an_iteration_that_never_ran_is_named(tmp_path: Path) -> None:
    body = '```hlolab-view\nvalue = "@closed_call:%5"\niteration = 7\n```\n' + _exercise(
        "predict-value", 'value = "%0#2"\nelement = [0]', "12", "[5]")
    les = parse_lesson(_lesson(tmp_path, body))
    with pytest.raises(HloLabError, match=r"in loop iterations \[0, 1, 2\], not in iteration 7"):
        view_text(chk.Runner(les), les.views[0])
    report = lint(tmp_path / "lessons", langs=["en"])
    assert [i.where for i in report.errors] == [f"{les.path}:{les.views[0].line}"]


# --- 3: another process's value ------------------------------------------------------------

def test_process_key_in_views_and_exercises(tmp_path: Path) -> None:
    # collective_permute [[0,1],[1,2],[2,3],[3,0]]: process p receives process p-1's shard
    body = GRID + "".join([
        '```hlolab-view\nvalue = "%next"\nprocess = 2\n```\n',
        '```hlolab-view\nvalue = "%twice"\nelement = [1]\nmode = "explain"\nprocess = 1\n```\n',
        _exercise("predict-value", 'value = "%next"\nprocess = 1', "[0.0, 1.0]", "[[6.0, 7.0], [2.0, 3.0]]",
                  show='{ value = "%next", process = 1 }'),
        _exercise("predict-value", 'value = "%next"', "[6.0, 7.0]", "[[0.0, 1.0]]"),
        _exercise("predict-value", 'value = "%x"\nprocess = 3', "[6.0, 7.0]", "[[0.0, 1.0]]"),
        _exercise("pick-sources", 'value = "%twice"\nelement = [0]\noperand = "%next"\nprocess = 2',
                  "[[0]]", "[[[1]]]"),
    ])
    les = parse_lesson(_lesson(tmp_path, body, with_fori=False))
    runner = chk.Runner(les)
    for ex in les.exercises:
        assert _verdicts(les, runner, ex) == (True, [False] * len(ex.wrong)), ex.raw
    grid, explain = (view_text(runner, v, None, "en") for v in les.views)
    assert grid.splitlines() == ["%next (process 2) : tensor<2xf32>", "  [2. 3.]"]
    assert "%twice[1] = 2.0  (stablehlo.add) (process 1)" in explain
    report = lint(tmp_path / "lessons", langs=["en"])
    assert not report.errors, report.format()


def test_process_on_a_single_process_program_is_an_error(tmp_path: Path) -> None:
    body = '```hlolab-view\nvalue = "%0#2"\nprocess = 1\n```\n' + _exercise(
        "predict-value", 'value = "%0#2"\nelement = [0]', "12", "[5]")
    les = parse_lesson(_lesson(tmp_path, body))
    with pytest.raises(HloLabError, match="process 1: the program runs as one process"):
        view_text(chk.Runner(les), les.views[0])


@pytest.mark.parametrize("key, value, message", [
    ("iteration", "-1", "'iteration' must be a loop iteration"),
    ("process", '"1"', "'process' must be a process number"),
])
def test_instance_keys_are_checked(tmp_path: Path, key: str, value: str, message: str) -> None:
    body = f'```hlolab-view\nvalue = "%0#2"\n{key} = {value}\n```\n'
    with pytest.raises(LessonError, match=message) as e:
        parse_lesson(_lesson(tmp_path, body))
    assert e.value.loc.line == 15


# --- 4: a target program with several results ----------------------------------------------

TWO_RESULTS = """```hlolab-program
name = "two"
lang = "mlir"
text = '''
func.func @main() -> (tensor<2xi32>, tensor<2xi32>) {
  %a = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %b = stablehlo.constant dense<[5, 7]> : tensor<2xi32>
  return %a, %b : tensor<2xi32>, tensor<2xi32>
}
'''
```
"""
FILL = '''lang = "mlir"
template = \'\'\'
func.func @main() -> tensor<2xi32> {
  %r = stablehlo.constant dense<[${x}]> : tensor<2xi32>
  return %r : tensor<2xi32>
}
\'\'\'
blanks = ["x"]
target_program = "two"
'''


@pytest.mark.parametrize("pick, right, wrong", [
    ("", "1, 2", "5, 7"),                       # default: the first result
    ('target_value = "%b"', "5, 7", "1, 2"),
    ("target_result = 1", "5, 7", "1, 2"),
    ("target_result = 0", "1, 2", "5, 7"),
])
def test_target_value_and_result_pick_a_value(tmp_path: Path, pick: str, right: str, wrong: str) -> None:
    body = TWO_RESULTS + _exercise("fill-attributes", FILL + pick, f'{{ x = "{right}" }}',
                                   f'[{{ x = "{wrong}" }}]')
    les = parse_lesson(_lesson(tmp_path, body, with_fori=False))
    runner = chk.Runner(les)
    ex = les.exercises[0]
    assert _verdicts(les, runner, ex) == (True, [False])
    assert np.asarray(chk.target_value(runner, ex)).tolist() == [int(n) for n in right.split(", ")]


def test_target_result_out_of_range_and_misuse(tmp_path: Path) -> None:
    body = TWO_RESULTS + _exercise("fill-attributes", FILL + "target_result = 2", '{ x = "1, 2" }',
                                   '[{ x = "5, 7" }]')
    les = parse_lesson(_lesson(tmp_path, body, with_fori=False))
    with pytest.raises(HloLabError, match=r"target_result = 2: program 'two' returns 2 value\(s\)"):
        chk.target_value(chk.Runner(les), les.exercises[0])
    bad = TWO_RESULTS + _exercise("fill-attributes", FILL.replace('target_program = "two"', "target = [1, 2]")
                                  + 'target_value = "%b"', '{ x = "1, 2" }', '[{ x = "5, 7" }]')
    with pytest.raises(LessonError, match="'target_value' picks a value of 'target_program'"):
        parse_lesson(_lesson(tmp_path, bad, with_fori=False))


# --- 5: an element that reads no cells ------------------------------------------------------

PAD = """```hlolab-program
name = "pad"
lang = "mlir"
text = '''
func.func @main() -> tensor<4xi32> {
  %x = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %z = stablehlo.constant dense<0> : tensor<i32>
  %p = stablehlo.pad %x, %z, low = [1], high = [1], interior = [0]
    : (tensor<2xi32>, tensor<i32>) -> tensor<4xi32>
  return %p : tensor<4xi32>
}
'''
```
"""


def test_no_cells_is_an_answer(tmp_path: Path) -> None:
    body = PAD + _exercise("pick-sources", 'value = "%p"\nelement = [0]\noperand = "%x"', "[]", "[[[0]]]",
                           show='{ value = "%p", element = [0], mode = "explain" }') + _exercise(
        "pick-sources", 'value = "%p"\nelement = [1]\noperand = "%x"', "[[0]]", "[[]]",
        show='{ value = "%p", element = [1], mode = "explain" }')
    les = parse_lesson(_lesson(tmp_path, body, with_fori=False))
    runner = chk.Runner(les)
    for ex in les.exercises:
        assert _verdicts(les, runner, ex) == (True, [False])
    ex = les.exercises[0]
    for typed in ("-", "none", " None ", "无", "ninguna"):
        assert chk.parse_typed(ex, typed) == []
    assert chk.check(runner, ex, chk.parse_typed(ex, "-")).ok
    with pytest.raises(chk.AnswerFormatError):
        chk.parse_typed(ex, "nothing at all")
    out, _ = _plain(les, ["0", "-", "-", "0"])
    assert "Not quite: %p[0] does not read [0] of %x." in out
    assert "Right: %p[0] reads no cell of %x." in out
    assert "(or - if it reads none)" in out


# --- 6: answers held back until the exercise is answered ---------------------------------------

GIVEAWAY = """```hlolab-program
name = "p"
lang = "mlir"
text = '''
func.func @main() -> (tensor<2xi32>, tensor<2xi32>) {
  %a = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %s = stablehlo.add %a, %a : tensor<2xi32>
  %m = stablehlo.multiply %s, %a : tensor<2xi32>
  return %s, %m : tensor<2xi32>, tensor<2xi32>
}
'''
```

```hlolab-view
value = "%m"
```

```hlolab-view
value = "%m"
element = [0]
mode = "explain"
```
"""


def _plain(les, lines: list[str]) -> tuple[str, Progress]:
    out = io.StringIO()
    console = Console(file=out, width=120, no_color=True, highlight=False)
    feed = iter(lines)

    def ask(prompt: str) -> str:
        console.print(prompt, end="")
        line = next(feed)  # StopIteration would be a test bug: EOFError ends the lesson
        console.print(line)
        return line

    def ask_or_eof(prompt: str) -> str:
        try:
            return ask(prompt)
        except StopIteration:
            raise EOFError from None

    progress = Progress.load()
    PlainLesson(les, "en", console, ask_or_eof, progress).run()
    return out.getvalue(), progress


def test_printed_results_and_views_are_held_back(tmp_path: Path) -> None:
    body = GIVEAWAY + _exercise("predict-value", 'value = "%s"', "[2, 4]", "[[1, 2]]") + _exercise(
        "predict-shape", 'value = "%m"', "[2]", "[[1, 2]]") + _exercise(
        "predict-value", 'value = "%m"\nelement = [1]', "8", "[4]")
    les = parse_lesson(_lesson(tmp_path, body, with_fori=False))
    runner = chk.Runner(les)
    ids = [e.id for e in les.exercises]
    assert giveaways(runner) == {"p": {"%s": [ids[0]], "%m": [ids[1], ids[2]]}}
    assert hidden_results(runner, "p") == {"%s": [ids[0]], "%m": [ids[1], ids[2]]}
    assert hidden_results(runner, "p", {ids[0], ids[1]}) == {"%m": [ids[2]]}
    assert hidden_results(runner, "p", set(ids)) == {}
    # the value view shows %m (shape and all); the explanation of element 0 does not answer [1]
    assert hidden_views(runner) == {les.views[0].line: [ids[1], ids[2]]}
    report = lint(tmp_path / "lessons", langs=["en"])
    assert not report.errors and report.counts["hidden"] == 3

    out, progress = _plain(les, ["[2, 4]", "2", "8"])
    head, after_first = out.split("Right: %s = [2, 4].", 1)
    assert "%s : hidden until you answer exercise 1" in head
    assert "%m : hidden until you answer exercise 2, 3" in head
    assert "held back until you answer exercise 2, 3" in head
    assert "[2 4]" not in head and "[2 8]" not in head
    assert "%m[0] = 2  (stablehlo.multiply)" in head  # the other view is shown in place
    first, rest = after_first.split("Exercise 2 of 3", 1)
    assert "Now that you have answered" in first and "%s : tensor<2xi32>\n  [2 4]" in first
    second, third = rest.split("Exercise 3 of 3", 1)
    assert "Now that you have answered" not in second  # %m waits for exercise 3 as well
    assert third.count("%m : tensor<2xi32>\n  [2 8]") == 2  # the printed result and the view
    assert progress.completed("en", "x") == ids
    # answered before: shown in place the next time
    out2, _ = _plain(les, [])
    assert "hidden until" not in out2 and "held back" not in out2 and "%s : tensor<2xi32>\n  [2 4]" in out2


def test_skipping_releases_what_was_held_back(tmp_path: Path) -> None:
    body = GIVEAWAY.split("```hlolab-view")[0] + _exercise("predict-value", 'value = "%s"', "[2, 4]",
                                                           "[[1, 2]]")
    les = parse_lesson(_lesson(tmp_path, body, with_fori=False))
    out, progress = _plain(les, ["skip"])
    assert out.index("Skipped") < out.index("Now that you have answered") < out.index("[2 4]")
    assert progress.completed("en", "x") == []


def test_a_constant_asked_for_is_an_error(tmp_path: Path) -> None:
    body = GIVEAWAY.split("```hlolab-view")[0] + _exercise("predict-value", 'value = "%a"\nelement = [1]',
                                                           "2", "[1]")
    path = _lesson(tmp_path, body, with_fori=False)
    report = lint(tmp_path / "lessons", langs=["en"])
    line = path.read_text().splitlines().index('value = "%a"') + 1
    assert [str(i) for i in report.errors] == [
        f"{path}:{line}: error: exercise "
        f"'{parse_lesson(path).exercises[0].id}' asks for %a, a stablehlo.constant: the program text shows "
        "its value, so the answer is given away; ask about a value computed from it"]


def test_the_shipped_lessons_hold_back_what_they_print() -> None:
    from hlolab.lessons.loader import load

    runner = chk.Runner(load(6))
    assert hidden_results(runner, "rows") == {"%rows": ["rows-value"]}
    assert hidden_results(runner, "rows", {"rows-value"}) == {}


# --- 7: plain-mode details ---------------------------------------------------------------------

def test_empty_results_print_no_heading(tmp_path: Path) -> None:
    body = PAD.replace('name = "pad"', 'name = "pad"\nresults = []') + _exercise(
        "predict-shape", 'value = "%p"', "[4]", "[[2]]", show='{ value = "%p" }')
    out, _ = _plain(parse_lesson(_lesson(tmp_path, body, with_fori=False)), ["4"])
    assert "Results:" not in out
    out, _ = _plain(parse_lesson(_lesson(tmp_path, body.replace("results = []\n", ""), with_fori=False)), [])
    assert "Results:" in out


def test_edited_lines_keep_what_the_learner_typed() -> None:
    old = "    %r = stablehlo.add %a, %b : tensor<2xi32>"
    assert edit_line(old, " %r = stablehlo.sub %a, %b") == ("    %r = stablehlo.sub %a, %b", 4)
    assert edit_line(old, "%r = x") == ("    %r = x", 4)
    assert edit_line(old, "   %r = x") == ("  %r = x", 0)   # one space separates, the rest is kept
    assert edit_line(old, "\t%r = x") == ("\t%r = x", 0)
    assert edit_line(old, "") == ("", 0)


FIX = """```hlolab-exercise
id = "fix"
kind = "fix-program"
lang = "mlir"
broken = '''
func.func @main() -> tensor<2xi32> {
  %a = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %r = stablehlo.add %a, %a : tensor<3xi32>
  return %r : tensor<2xi32>
}
'''
expect_error = "add"
target = [2, 4]
answer = { 3 = "  %r = stablehlo.add %a, %a : tensor<2xi32>" }
wrong = [{ 3 = "  %r = stablehlo.add %a, %a : tensor<3xi32>" }]
prompt = "Fix it."
hints = ["Count: 2 * 3 * 4 is not *emphasis*"]
show = { value = "%r" }
```
"""


def test_fix_program_plain_mode_keeps_spaces_and_shifts_the_error_column(tmp_path: Path) -> None:
    les = parse_lesson(_lesson(tmp_path, FIX, with_fori=False))
    # typed without indentation: hlolab indents the line; the error's column counts in the typed text
    out, _ = _plain(les, ["hint", "hint", "3: %r = stablehlo.add %a, %q : tensor<2xi32>", "run",
                          "3:      %r = stablehlo.add %a, %a : tensor<2xi32>", "list", "run"])
    assert "Hint 2 of 2: Count: 2 * 3 * 4 is not *emphasis*" in out  # hints are plain text
    assert "Line 3 is now:   %r = stablehlo.add %a, %q : tensor<2xi32>" in out
    assert "<lesson>:3:24: use of undefined value %q" in out  # col 26 in the program, 24 as typed
    assert "Line 3 is now:      %r = stablehlo.add %a, %a : tensor<2xi32>" in out
    assert "3      %r = stablehlo.add %a, %a : tensor<2xi32>" in out  # the listing keeps the 5 spaces
    assert "Right: the program runs and produces the target." in out


# --- 8: programs read from files ---------------------------------------------------------------

def test_program_from_a_file(tmp_path: Path) -> None:
    body = _exercise("predict-value", 'value = "%0#2"\nelement = [1]', "84", "[41]")
    les = parse_lesson(_lesson(tmp_path, body))
    p = les.programs["fori"]
    assert p.file == "fori.mlir" and p.text == FORI.read_text()
    assert chk.check(chk.Runner(les), les.exercises[0], 84).ok
    out, _ = _plain(les, ["84"])
    assert "(read from fori.mlir, next to the lesson)" in out and "func.func private @closed_call" in out


def test_a_failing_program_file_is_reported_at_its_own_line(tmp_path: Path) -> None:
    path = _lesson(tmp_path, _exercise("predict-value", 'value = "%0#2"\nelement = [1]', "84", "[41]"))
    mlir = path.parent / "fori.mlir"
    mlir.write_text(mlir.read_text().replace("%5 = stablehlo.add %2, %4", "%5 = stablehlo.add %2, %9"))
    report = lint(tmp_path / "lessons", langs=["en"])
    line = mlir.read_text().splitlines().index("    %5 = stablehlo.add %2, %9 : tensor<2xi32>") + 1
    where = f"{mlir}:{line}:28:"  # the .mlir file's own line, not the lesson's
    assert any(where in i.message and "%9" in i.message for i in report.errors), report.format()


@pytest.mark.parametrize("block, message", [
    ('file = "missing.mlir"', "cannot read"),
    ('file = "../fori.mlir"', "'file' must name a .mlir file in the lesson's folder"),
    ('file = "fori.mlir"\ntext = "x"', "give exactly one of 'text' (the program) and 'file'"),
])
def test_program_file_errors(tmp_path: Path, block: str, message: str) -> None:
    path = _lesson(tmp_path, "")
    path.write_text(HEAD + f'```hlolab-program\nname = "q"\nlang = "mlir"\n{block}\n```\n')
    with pytest.raises(LessonError, match=message.replace("(", r"\(").replace(")", r"\)")) as e:
        parse_lesson(path)
    assert e.value.loc.file == str(path)


def test_lesson_18_reads_its_program_from_mlp_mlir() -> None:
    from hlolab.lessons.loader import find_folder, load

    les = load(18)
    p = les.programs["mlp"]
    assert p.file == "mlp.mlir"
    assert p.text == (find_folder(18).path / "mlp.mlir").read_text(encoding="utf-8")


GRID_FILL = """lang = "mlir"
template = '''
module attributes {mhlo.num_replicas = 1 : i32, mhlo.num_partitions = 2 : i32} {
  func.func @main() -> tensor<ui32> {
    %p = stablehlo.partition_id : tensor<ui32>
    %k = stablehlo.constant dense<${k}> : tensor<ui32>
    %r = stablehlo.multiply %p, %k : tensor<ui32>
    return %r : tensor<ui32>
  }
}
'''
blanks = ["k"]
target = 7
"""


@pytest.mark.parametrize("extra", ["process = 1", 'value = "%r"\nprocess = 1'])
def test_fill_attributes_compares_another_process(tmp_path: Path, extra: str) -> None:
    # process 1 computes 1 * k: only k = 7 gives 7 there (process 0 gives 0 whatever k is)
    body = _exercise("fill-attributes", GRID_FILL + extra, '{ k = "7" }', '[{ k = "0" }, { k = "1" }]',
                     show='{ value = "%r", process = 1 }')
    les = parse_lesson(_lesson(tmp_path, body, with_fori=False))
    assert _verdicts(les, chk.Runner(les), les.exercises[0]) == (True, [False, False])
    assert not lint(tmp_path / "lessons", langs=["en"]).errors


def test_fill_attributes_iteration_needs_a_value(tmp_path: Path) -> None:
    body = _exercise("fill-attributes", GRID_FILL + "iteration = 1", '{ k = "7" }', '[{ k = "0" }]',
                     show='{ value = "%r" }')
    with pytest.raises(LessonError, match="'iteration' picks an instance of 'value', which is not given"):
        parse_lesson(_lesson(tmp_path, body, with_fori=False))


def test_pick_sources_on_a_collective_is_refused_by_name(tmp_path: Path) -> None:
    # process 1's %next comes from process 0's %x: cells of another process's value
    body = GRID + _exercise("pick-sources", 'value = "%next"\nelement = [0]\noperand = "%x"\nprocess = 1',
                            "[[0]]", "[[[1]]]")
    les = parse_lesson(_lesson(tmp_path, body, with_fori=False))
    want = (r"pick-sources on stablehlo.collective_permute: element \[0\] reads %x of processes \(0, 0\); "
            r"a pick-sources answer names cells of one process's value")
    with pytest.raises(HloLabError, match=want):
        chk.check(chk.Runner(les), les.exercises[0], [[0]])
