"""The checker: answers compared with what the program computes, typed answers read
leniently, and verdict messages that say what is wrong without giving it away."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hlolab.lessons import check as chk
from hlolab.lessons.loader import parse_lesson
from hlolab.messages import text

HEAD = '+++\nid = "x"\ntitle = "X"\norder = 1\nops = []\nprerequisites = []\n+++\n'
PROG = '''```hlolab-program
name = "p"
lang = "mlir"
text = \'\'\'
func.func @main() -> tensor<2x2xf32> {
  %i = stablehlo.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  %f = stablehlo.constant dense<[[0.5, 1.0], [2.0, 3.0]]> : tensor<2x2xf32>
  %t = stablehlo.transpose %f, dims = [1, 0] : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %d = stablehlo.divide %t, %f : tensor<2x2xf32>
  %p = stablehlo.compare GT, %i, %i : (tensor<2x2xi32>, tensor<2x2xi32>) -> tensor<2x2xi1>
  return %d : tensor<2x2xf32>
}
\'\'\'
```
'''


def _exercise(tmp_path: Path, body: str) -> tuple[chk.Runner, object]:
    p = tmp_path / "en.md"
    p.write_text(HEAD + PROG + "```hlolab-exercise\nid = \"e\"\nprompt = \"?\"\nhints = [\"h\"]\n"
                 "show = { value = \"%d\" }\n" + body + "```\n")
    les = parse_lesson(p)
    return chk.Runner(les), les.exercises[0]


def test_predict_value_integers_exact_floats_with_tolerance(tmp_path: Path) -> None:
    r, ex = _exercise(tmp_path, 'kind = "predict-value"\nvalue = "%d"\nelement = [0, 1]\n'
                      'answer = 2.0\nwrong = [0.5]\n')
    # %d = transpose(%f) / %f = [[1, 2], [0.5, 1]]
    assert chk.check(r, ex, 2.0).ok
    assert chk.check(r, ex, 2).ok                 # an integer for a float value
    assert chk.check(r, ex, 2.0019).ok            # within rtol = 1e-3
    assert not chk.check(r, ex, 2.01).ok
    assert chk.check(r, ex, "2.0").ok             # typed text
    ex.element = (1, 0)                           # 1.0 / 2.0
    assert chk.check(r, ex, 0.5).ok and not chk.check(r, ex, 2).ok
    ex.value, ex.element = "%i", (1, 1)
    assert chk.check(r, ex, 4).ok and chk.check(r, ex, 4.0).ok
    assert not chk.check(r, ex, 4.001).ok         # integers are exact
    ex.value, ex.element = "%p", (0, 0)
    assert chk.check(r, ex, False).ok and chk.check(r, ex, "false").ok and chk.check(r, ex, 0).ok
    assert not chk.check(r, ex, True).ok and not chk.check(r, ex, 2).ok
    ex.value, ex.element = "%i", None             # the whole value
    assert chk.check(r, ex, [[1, 2], [3, 4]]).ok and chk.check(r, ex, "[[1, 2], [3, 4]]").ok
    assert not chk.check(r, ex, [[1, 2], [4, 3]]).ok and not chk.check(r, ex, [1, 2, 3, 4]).ok


def test_verdict_says_what_is_wrong_and_reveals_separately(tmp_path: Path) -> None:
    r, ex = _exercise(tmp_path, 'kind = "predict-value"\nvalue = "%i"\nelement = [1, 0]\n'
                      'answer = 3\nwrong = [7]\n')
    v = chk.check(r, ex, 7)
    assert not v.ok
    assert text(v.message, "en") == "Not quite: %i[1, 0] is not 7. Try again, or type 'hint'."
    assert "3" not in text(v.message, "en")       # the first message does not give it away
    assert text(v.reveal, "en") == "your value 7, the program gives 3"
    ok = chk.check(r, ex, 3)
    assert ok.ok and text(ok.message, "en") == "Right: %i[1, 0] = 3."
    bad = chk.check(r, ex, "seven")
    assert not bad.ok and "'seven' is not a number" in text(bad.message, "en")


@pytest.mark.parametrize("typed, ok", [("2x2", True), ("[2, 2]", True), ("2, 2", True), ("(2,2)", True),
                                       ("2x3", False), ("4", False), ("[]", False)])
def test_predict_shape_typed(tmp_path: Path, typed: str, ok: bool) -> None:
    r, ex = _exercise(tmp_path, 'kind = "predict-shape"\nvalue = "%t"\nanswer = [2, 2]\nwrong = [[4]]\n')
    assert chk.check(r, ex, chk.parse_typed(ex, typed)).ok is ok


@pytest.mark.parametrize("typed, ok", [("tensor<2x2xi1>", True), (" tensor<2x2xi1> ", True),
                                       ("pred[2,2]", True), ("tensor<2x2xi32>", False), ("s32[2,2]", False),
                                       ("tensor<4xi1>", False)])
def test_predict_type_reads_mlir_and_xla_spellings(tmp_path: Path, typed: str, ok: bool) -> None:
    r, ex = _exercise(tmp_path, 'kind = "predict-type"\nvalue = "%p"\nanswer = "tensor<2x2xi1>"\n'
                      'wrong = ["tensor<2x2xf32>"]\n')
    assert chk.check(r, ex, typed).ok is ok
    assert not chk.check(r, ex, "tensor<2x2").ok   # unreadable: rejected with a message, no crash


def test_pick_sources_against_provenance(tmp_path: Path) -> None:
    r, ex = _exercise(tmp_path, 'kind = "pick-sources"\nvalue = "%t"\nelement = [0, 1]\noperand = "%f"\n'
                      'answer = [[1, 0]]\nwrong = [[[0, 1]]]\n')
    assert chk.check(r, ex, [[1, 0]]).ok
    assert chk.check(r, ex, chk.parse_typed(ex, "1,0")).ok
    assert chk.check(r, ex, chk.parse_typed(ex, "[1, 0]")).ok
    extra = chk.check(r, ex, [[1, 0], [0, 1]])
    assert not extra.ok and text(extra.message, "en") == "Not quite: %t[0, 1] does not read [0, 1] of %f."
    assert text(extra.reveal, "en") == "%t[0, 1] reads [1, 0] of %f"
    # an element that reads two operand cells: one of them is "almost"
    ex.value, ex.element = "%d", (0, 1)
    assert chk.check(r, ex, [[0, 1]]).ok           # %d reads %f[0, 1] (and %t[0, 1])
    ex.operand = "%t"
    assert chk.check(r, ex, [[0, 1]]).ok
    assert chk.parse_typed(ex, "0,1 1,0") == [[0, 1], [1, 0]]
    assert chk.parse_typed(ex, "(0, 1); (1, 0)") == [[0, 1], [1, 0]]
    ex.operand = "%i"
    with pytest.raises(chk.HloLabError, match="not an operand of the op that made %d"):
        chk.check(r, ex, [[0, 1]])


def test_program_kinds_run_the_learners_program(tmp_path: Path) -> None:
    body = ('kind = "fill-attributes"\ntemplate = \'\'\'\nfunc.func @main() -> tensor<3xi32> {\n'
            '  %a = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi32>\n'
            '  %r = stablehlo.reverse %a, dims = [${d}] : tensor<3xi32>\n'
            '  return %r : tensor<3xi32>\n}\n\'\'\'\n'
            'blanks = ["d"]\ntarget = [3, 2, 1]\nanswer = { d = "0" }\nwrong = [{ d = "" }]\n')
    r, ex = _exercise(tmp_path, body.replace('show = { value = "%d" }', ''))
    assert chk.check(r, ex, {"d": "0"}).ok
    same = chk.check(r, ex, {"d": ""})
    assert not same.ok
    assert text(same.message, "en") == "The program runs, but it gives [1, 2, 3], not the target."
    assert text(same.reveal, "en") == "the target is [3, 2, 1]"
    broken = chk.check(r, ex, {"d": "1"})
    assert not broken.ok and broken.error is not None and "reverse (C" in text(broken.message, "en")
    assert not chk.check(r, ex, {}).ok             # a blank left empty is not an answer


def test_builder_programs_run_statement_by_statement() -> None:
    run = chk.run_program("x = [[1, 2, 3],\n     [4, 5, 6]]:s32\n# a comment\ny = Add(x, x)\n", "builder")
    assert run.value("y").tolist() == [[2, 4, 6], [8, 10, 12]]
    assert run.value("%x").dtype == np.int32
    assert run.declared_type("y") == "tensor<2x3xi32>"
    assert chk.builder_statements("a = f(1,\n 2)\n\nb = g(a)") == [(1, "a = f(1,\n 2)"), (4, "b = g(a)")]
    with pytest.raises(chk.HloLabError):
        chk.run_program("y = Add(x, x)", "builder")   # x is not defined


def test_apply_edits() -> None:
    assert chk.apply_edits("a\nb\nc\n", {"2": "B", 3: ""}) == "a\nB\n\n"
    with pytest.raises(chk.AnswerFormatError):
        chk.apply_edits("a\nb\n", {"5": "x"})


def test_narrow_types_compare_by_kind() -> None:
    import ml_dtypes

    from hlolab.lessons.check import _close, value_text

    i4 = np.array([7], dtype=ml_dtypes.int4)[0]
    assert _close(7, i4, 1e-3, 1e-6) and not _close(7.001, i4, 1e-3, 1e-6) and value_text(i4) == "7"
    h = np.array([256.0], dtype=ml_dtypes.bfloat16)[0]
    assert _close(256.2, h, 1e-3, 1e-6) and not _close(256.5, h, 0.0, 0.0) and value_text(h) == "256"
    f8 = np.array([0.5], dtype=ml_dtypes.float8_e4m3fn)[0]
    assert _close(0.5, f8, 0.0, 0.0) and _close(float("nan"), np.float32("nan"), 0, 0)
    assert _close(float("inf"), np.float32("inf"), 1, 1) and not _close(1e30, np.float32("inf"), 1, 1)


def test_an_endless_loop_is_a_wrong_answer_not_a_hang(tmp_path: Path) -> None:
    body = ('kind = "fill-attributes"\ntemplate = \'\'\'\nfunc.func @main() -> tensor<i32> {\n'
            '  %zero = stablehlo.constant dense<0> : tensor<i32>\n'
            '  %step = stablehlo.constant dense<${step}> : tensor<i32>\n'
            '  %limit = stablehlo.constant dense<3> : tensor<i32>\n'
            '  %r = stablehlo.while(%i = %zero) : tensor<i32>\n'
            '    cond {\n'
            '      %c = stablehlo.compare LT, %i, %limit : (tensor<i32>, tensor<i32>) -> tensor<i1>\n'
            '      stablehlo.return %c : tensor<i1>\n'
            '    } do {\n'
            '      %n = stablehlo.add %i, %step : tensor<i32>\n'
            '      stablehlo.return %n : tensor<i32>\n'
            '    }\n'
            '  return %r : tensor<i32>\n}\n\'\'\'\n'
            'blanks = ["step"]\ntarget = 3\nanswer = { step = "1" }\nwrong = [{ step = "0" }]\n')
    r, ex = _exercise(tmp_path, body)
    assert chk.check(r, ex, {"step": "1"}).ok
    v = chk.check(r, ex, {"step": "0"})    # 0 never reaches 3: the step budget stops it
    assert not v.ok and v.error is not None and "budget" in str(v.error)
