"""Run lesson programs and check exercise answers by executing them.

Nothing here compares prose: a predicted value is compared with the value the
program computes, picked cells with the op's provenance, filled-in attributes and
fixed programs by running the result and comparing it with the target tensor.

A check returns a ``Verdict``: whether the answer is right, a catalogue message
the learner reads now (never giving the answer away), and a ``reveal`` message
with what the program actually gives, for a front end to show after a few tries
or when the learner skips.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from hlolab.errors import ExecutionError, HloLabError
from hlolab.lessons.loader import ANSWER_PROGRAM, BLANK_RE
from hlolab.lessons.model import Exercise, Lesson, Program
from hlolab.messages import Msg

LESSON_FILE = "<lesson>"
# executed ops per program: lesson programs are small, so a learner's endless while loop
# (a wrong loop bound, a condition that never turns false) stops in well under a second
STEP_BUDGET = 100_000


@dataclass
class Verdict:
    """The outcome of one answer."""

    ok: bool
    message: Msg
    reveal: Msg | None = None  # what the program gives (may give the answer away)
    error: HloLabError | None = None  # the program's error (fill-attributes, fix-program)


class AnswerFormatError(HloLabError):
    """A typed answer that cannot be read as the kind of answer asked for."""

    def __init__(self, msg: Msg):
        super().__init__(msg.key)
        self.msg = msg


# --- running programs ---------------------------------------------------------------------

@dataclass
class Run:
    """A program run to its end."""

    session: Any  # hlolab.session.Session
    lang: str

    def find(self, name: str, iteration: int | None = None, process: int | None = None) -> Any:
        """The definition (a ``Def``) of ``[@func:]%name``: in loop ``iteration`` (default: the
        last instance) and, on a process grid, of ``process`` (default 0)."""
        s = self.session
        if process is not None and s.n_processes <= 1 and process != 0:
            raise HloLabError(f"process {process}: the program runs as one process (a grid needs "
                              "mhlo.num_replicas / mhlo.num_partitions on its module)")
        proc = process if s.n_processes > 1 else None
        try:
            return s.find(_ref(name), iteration, proc)
        except HloLabError:
            if iteration is None:
                raise
            # a value of a function called from a while body: its frame is the call's, which
            # carries no iteration; the loop iteration is the nearest one up the call stack
            d, seen = _called_instance(s, _ref(name), iteration, proc)
            if d is not None:
                return d
            if not seen:
                raise
            raise HloLabError(f"{_ref(name)} was computed in loop iterations {seen[:10]}, not in "
                              f"iteration {iteration}") from None

    def value(self, name: str, iteration: int | None = None, process: int | None = None) -> Any:
        return self.session.value_of(self.find(name, iteration, process))

    def results(self) -> list[Any]:
        return list(self.session.results or [])

    def main_result(self) -> Any:
        res = self.results()
        if not res:
            raise HloLabError("the program returns nothing to compare")
        return res[0]

    def declared_type(self, name: str, iteration: int | None = None, process: int | None = None) -> str:
        """The MLIR type of a value as declared by the op that made it."""
        from hlolab.interp.engine import ARGS_NODE

        s = self.session
        d = self.find(name, iteration, process)
        if d[0] <= ARGS_NODE:
            return str(s.func.args[d[1]].type)
        return str(s.event(d[0]).op.results[d[1]].type)


def _loop_iteration(frame: Any) -> int | None:
    """The iteration of the innermost while loop around ``frame``, across calls."""
    while frame is not None:
        if frame.iteration is not None:
            return frame.iteration
        frame = frame.parent
    return None


def _called_instance(session: Any, ref: str, iteration: int, process: int | None) -> tuple[Any, list[int]]:
    """The latest op result named ``ref`` made in loop ``iteration`` (looked up the call stack),
    and the iterations it was made in."""
    from hlolab.trace.locate import ValueRef, resolve

    r = resolve(session.module, session.func, ValueRef.parse(ref))
    seen: set[int] = set()
    for ev in reversed(session.history[:session.cursor]):
        if (r.func is not None and ev.frame.func != r.func) or (process is not None
                                                              and ev.frame.process != process):
            continue
        for k, v in enumerate(ev.op.results):
            if v.name == r.name:
                it = _loop_iteration(ev.frame)
                if it == iteration:
                    return (ev.id, k), []
                if it is not None:
                    seen.add(it)
    return None, sorted(seen)


def value_ref(name: str) -> str:
    """A value name as Session.find takes it: ``y`` (a builder name) -> ``%y``; a value of a
    called function keeps its qualifier: ``@f:%x`` (``@f:x`` -> ``@f:%x``)."""
    name = name.strip()
    if name.startswith("@") and ":" in name:
        func, local = name.split(":", 1)
        return f"{func}:{value_ref(local)}"
    return name if name.startswith("%") else "%" + name


def local_name(name: str) -> str:
    """``@f:%x`` -> ``%x``: the name as the ops of its function spell it."""
    ref = value_ref(name)
    return ref.split(":", 1)[1] if ref.startswith("@") else ref


def instance_text(iteration: int | None, process: int | None) -> str:
    """`` (iteration 2, process 1)`` for a value's instance; empty for the defaults."""
    parts = ([f"iteration {iteration}"] if iteration is not None else []) + (
        [f"process {process}"] if process else [])
    return f" ({', '.join(parts)})" if parts else ""


_ref = value_ref  # the short name used throughout this module


def builder_statements(text: str) -> list[tuple[int, str]]:
    """The statements of a builder-language program with their first line: one per line,
    continued on the next lines while a bracket is open; blank and ``#``/``//`` lines skipped."""
    out: list[tuple[int, str]] = []
    cur: list[str] = []
    first = 0
    depth = 0
    for n, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not cur and (not s or s.startswith(("#", "//"))):
            continue
        if not cur:
            first = n
        cur.append(line)
        depth += sum(s.count(c) for c in "([{") - sum(s.count(c) for c in ")]}")
        if depth <= 0:
            out.append((first, "\n".join(cur).strip()))
            cur, depth = [], 0
    if cur:
        out.append((first, "\n".join(cur).strip()))
    return out


def run_program(text: str, lang: str = "mlir", args: list[str] | None = None, seed: int = 0,
                filename: str = LESSON_FILE, first_line: int = 1) -> Run:
    """Parse, verify and run a program to the end; any failure is an ``HloLabError``.
    ``filename``/``first_line``: where the text sits, for the errors' ``file:line:col``."""
    from hlolab.ir.parser import parse_module
    from hlolab.session import Session

    if lang == "builder":
        from hlolab.repl.state import Program as ReplProgram

        p = ReplProgram(seed=seed)
        for line, stmt in builder_statements(text):
            p.execute(stmt, line)
        session = Session(p.computation().module, filename=filename, step_budget=STEP_BUDGET)
        session.bind(p.inputs())
    else:
        module = parse_module(text, filename, first_line)
        session = Session(module, filename=filename, step_budget=STEP_BUDGET)
        from hlolab.runner import parse_args_literal

        values = None
        if args is not None:
            values = parse_args_literal("[" + ", ".join(args) + "]")
        session.bind(values, seed=seed)
    stop = session.run(max_steps=STEP_BUDGET)
    if stop.error is not None:
        raise stop.error
    if not session.finished:
        raise ExecutionError(f"the program did not finish within {STEP_BUDGET:,} steps")
    return Run(session, lang)


class Runner:
    """Runs a lesson's programs once each (a lesson asks about the same program often)."""

    def __init__(self, lesson: Lesson):
        self.lesson = lesson
        self._cache: dict[tuple[Any, ...], Run | HloLabError] = {}

    def _run(self, text: str, lang: str, args: list[str] | None, seed: int, filename: str,
             first_line: int = 1) -> Run:
        key = (text, lang, tuple(args) if args is not None else None, seed, filename, first_line)
        if key not in self._cache:
            try:
                self._cache[key] = run_program(text, lang, args, seed, filename, first_line)
            except HloLabError as e:
                self._cache[key] = e
        got = self._cache[key]
        if isinstance(got, HloLabError):
            raise got
        return got

    def program(self, name: str) -> Run:
        p = self.lesson.programs[name]
        # a program read from a file reports its errors at that file's lines
        where = str(self.lesson.path.parent / p.file) if p.file else str(self.lesson.path)
        return self._run(p.text, p.lang, p.args, p.seed, where, p.text_line)

    def text(self, text: str, lang: str) -> Run:
        return self._run(text, lang, None, 0, LESSON_FILE)

    def view_program(self, ex: Exercise | None, name: str) -> Run:
        """The program a view names; ``answer`` is the exercise solved with its reference answer."""
        if name == ANSWER_PROGRAM:
            if ex is None:
                raise HloLabError("the program 'answer' exists only in an exercise's show")
            return self.text(solved_text(ex, ex.answer), ex.lang)
        return self.program(name)


def fill_template(template: str, values: dict[str, str]) -> str:
    return BLANK_RE.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def apply_edits(broken: str, edits: dict[str | int, str]) -> str:
    """``broken`` with lines replaced: ``{line number: new text}`` (1-based)."""
    lines = broken.splitlines()
    for k, v in edits.items():
        n = int(k)
        if not 1 <= n <= len(lines):
            raise AnswerFormatError(Msg("lessons.answer.no_line", line=n, lines=len(lines)))
        lines[n - 1] = v
    return "\n".join(lines) + "\n"


def solved_text(ex: Exercise, answer: Any) -> str:
    if ex.kind == "fill-attributes":
        return fill_template(ex.template, answer)
    if ex.kind == "fix-program":
        return apply_edits(ex.broken, answer)
    raise HloLabError(f"a {ex.kind} exercise has no program of its own")


# --- comparing values ------------------------------------------------------------------------

def _close(given: Any, actual: Any, rtol: float, atol: float) -> bool:
    """One element: exact for integers and booleans, within tolerance for floats."""
    if isinstance(actual, np.generic):
        kind = actual.dtype.kind
        if kind == "c":
            return False  # complex values are refused by _equal_values
        # ml_dtypes' int2/int4/uint4 are kind "V" like its floats: integers are exact all the same
        if kind in "biu" or actual.dtype.name.startswith(("int", "uint")):
            actual = actual.item() if kind in "biu" else int(actual)
        else:
            actual = float(actual)
    if isinstance(actual, bool):  # true/false, or 1/0
        return (given is True or given is False or given in (0, 1)) and bool(given) == actual
    if isinstance(given, bool):
        return False
    if isinstance(actual, int):
        return isinstance(given, int | float) and float(given).is_integer() and int(given) == actual
    g = float(given)
    a = float(actual)
    if math.isnan(a) or math.isnan(g):
        return math.isnan(a) and math.isnan(g)
    if math.isinf(a) or math.isinf(g):
        return a == g
    return abs(g - a) <= atol + rtol * abs(a)


def _equal_values(given: Any, actual: Any, rtol: float, atol: float) -> bool:
    """A (nested) given value against a computed scalar or tensor."""
    a = np.asarray(actual)
    if a.dtype.kind == "c":
        raise HloLabError("comparing complex values is not supported in lessons: "
                          "ask about real(x) or imag(x)")
    if a.ndim == 0:
        return not isinstance(given, list) and _close(given, a[()], rtol, atol)
    try:
        g = np.array(given, dtype=object)
    except ValueError:
        return False
    if g.shape != a.shape:
        return False
    return all(_close(gv, av, rtol, atol) for gv, av in zip(g.ravel().tolist(), a.ravel()))


def value_text(v: Any) -> str:
    """A computed value (or a TOML one) as the learner would type it."""
    if isinstance(v, np.ndarray) and v.ndim == 0:
        v = v[()]
    if isinstance(v, np.generic):
        if v.dtype.kind == "b":
            return "true" if bool(v) else "false"
        if v.dtype.kind in "iu" or v.dtype.name.startswith(("int", "uint")):
            return str(int(v))
        f = float(v)
        return _float_text(f)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return _float_text(v)
    if isinstance(v, np.ndarray) and 0 < v.size <= 64:  # one line, spelled like a target: [[4, 8], [2, 6]]
        return "[" + ", ".join(value_text(x) for x in v) + "]"
    if isinstance(v, np.ndarray):
        from hlolab.repl.display import elements_text

        return elements_text(v, indent="").strip()
    if isinstance(v, list):
        return "[" + ", ".join(value_text(x) for x in v) + "]"
    return str(v)


def _float_text(f: float) -> str:
    if math.isnan(f):
        return "nan"
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    return f"{f:.7g}"


def _element(value: Any, element: tuple[int, ...] | None) -> Any:
    if element is None:
        return value
    a = np.asarray(value)
    if len(element) != a.ndim or any(not 0 <= i < d for i, d in zip(element, a.shape)):
        raise HloLabError(f"element {list(element)} is not an index of a value of shape {list(a.shape)}")
    return a[tuple(element)]


def _name(ex: Exercise) -> str:
    return f"{_ref(ex.value)}{instance_text(ex.iteration, ex.process)}"


def _label(ex: Exercise) -> str:
    el = "" if ex.element is None else "[" + ", ".join(map(str, ex.element)) + "]"
    return f"{_ref(ex.value)}{el}{instance_text(ex.iteration, ex.process)}"


# --- reading what a learner typed ---------------------------------------------------------------

_NUM = r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|inf|nan)"


def _number(tok: str) -> int | float | bool:
    t = tok.strip().lower()
    if t in ("true", "false"):
        return t == "true"
    if t in ("nan", "+nan", "-nan"):
        return float("nan")
    if t in ("inf", "+inf", "-inf", "infinity", "-infinity"):
        return float("-inf") if t.startswith("-") else float("inf")
    try:
        return int(t)
    except ValueError:
        return float(t)


# what a learner types for "no cells" (an element that reads none), in every lesson language
NO_CELLS = {"-", "none", "nothing", "无", "没有", "ninguna", "ninguno", "nada"}


def parse_typed(ex: Exercise, text: str) -> Any:
    """What a learner typed, read as this exercise's kind of answer (AnswerFormatError if it
    cannot be). fill-attributes and fix-program answers are built by the front end."""
    t = text.strip()
    if ex.kind == "predict-value":
        if t.startswith("["):
            try:
                import json

                return json.loads(re.sub(r"\b(nan|inf)\b", lambda m: {"nan": "NaN", "inf": "Infinity"}[m[1]],
                                         t.replace("True", "true").replace("False", "false")))
            except ValueError:
                raise AnswerFormatError(Msg("lessons.answer.expect_list", text=t)) from None
        try:
            return _number(t)
        except ValueError:
            raise AnswerFormatError(Msg("lessons.answer.expect_number", text=t)) from None
    if ex.kind == "predict-shape":
        s = t.strip("[]() ")
        if s == "" and t:
            return []
        parts = [p for p in re.split(r"[x,\s]+", s) if p]
        if not parts or not all(p.isdigit() for p in parts):
            raise AnswerFormatError(Msg("lessons.answer.expect_shape", text=t))
        return [int(p) for p in parts]
    if ex.kind == "predict-type":
        if not t:
            raise AnswerFormatError(Msg("lessons.answer.expect_type", text=t))
        return t
    if ex.kind == "pick-sources":
        if t.lower() in NO_CELLS:  # the element reads no cell of the operand
            return []
        groups = re.findall(r"\[([^\]]*)\]|\(([^)]*)\)", t)
        if groups:
            items = [a or b for a, b in groups]
        else:
            items = [g for g in re.split(r"[;\s]+", t) if g]
        out = []
        for item in items:
            nums = [p for p in re.split(r"[,\s]+", item.strip()) if p]
            if not nums or not all(re.fullmatch(r"-?\d+", p) for p in nums):
                raise AnswerFormatError(Msg("lessons.answer.expect_indices", text=t))
            out.append([int(p) for p in nums])
        if not out:
            raise AnswerFormatError(Msg("lessons.answer.expect_indices", text=t))
        return out
    raise HloLabError(f"a {ex.kind} answer is built by the front end, not typed in one line")


def _canonical_type(text: str) -> str:
    """An MLIR type as hlolab prints it; XLA's ``f32[2,3]`` is read too."""
    from hlolab.ir.parser import parse_type
    from hlolab.repl.language import mlir_element_name

    t = text.strip()
    m = re.fullmatch(r"(\w+)\[([\d,\s]*)\]", t)
    if m:
        et = mlir_element_name(m.group(1))
        if et is None:
            raise AnswerFormatError(Msg("lessons.answer.expect_type", text=text))
        dims = [d for d in re.split(r"[,\s]+", m.group(2)) if d]
        t = f"tensor<{''.join(d + 'x' for d in dims)}{et}>"
    try:
        return str(parse_type(t))
    except HloLabError:
        raise AnswerFormatError(Msg("lessons.answer.expect_type", text=text)) from None


# --- checking ----------------------------------------------------------------------------------

def _sources(run: Run, ex: Exercise) -> set[tuple[int, ...]]:
    """The cells of ``ex.operand`` that the op making ``ex.value`` reads for ``ex.element``."""
    from hlolab.session import explain_element

    d = run.find(ex.value, ex.iteration, ex.process)
    e = explain_element(run.session, d, ex.element or ())
    if e.event is None:
        raise HloLabError(f"{_ref(ex.value)} is an argument: no op made it, it reads no cells")
    want = local_name(ex.operand).lstrip("%")
    names = {o.name.lstrip("%") for o in e.event.op.operands}
    if want not in names:
        raise HloLabError(f"{_ref(ex.operand)} is not an operand of the op that made {_ref(ex.value)} "
                          f"(its operands: {', '.join('%' + n for n in sorted(names))})")
    # a collective reads the operand of several processes (labels "%x@(0, 1)"): cells of one
    # value cannot name them, so such a question is refused rather than answered wrongly
    procs = sorted({s.label.split("@", 1)[1] for s in e.sources if s.label is not None and "@(" in s.label
                    and s.label.split("@", 1)[0].lstrip("%") == want})
    if procs:
        raise HloLabError(f"pick-sources on {e.event.op.name}: element {list(ex.element or ())} reads "
                          f"{_ref(ex.operand)} of processes {', '.join(procs)}; a pick-sources answer names "
                          "cells of one process's value: ask with predict-value, or show a trace view")
    return {tuple(int(i) for i in s.source.index) for s in e.sources
            if s.label is not None and s.label.lstrip("%") == want
            and (ex.roles is None or s.source.role in ex.roles)}


def _cells_text(cells: Any) -> str:
    return " ".join("[" + ", ".join(map(str, c)) + "]" for c in sorted(tuple(c) for c in cells)) or "-"


def target_value(runner: Runner, ex: Exercise) -> Any:
    """The tensor a fill-attributes / fix-program answer must produce: ``target``, or a value
    of ``target_program`` (``target_value``, result ``target_result``, else its first result)."""
    if ex.target_program:
        run = runner.program(ex.target_program)
        if ex.target_value:
            return run.value(ex.target_value)
        if ex.target_result is not None:
            res = run.results()
            if ex.target_result >= len(res):
                raise HloLabError(f"target_result = {ex.target_result}: program '{ex.target_program}' "
                                  f"returns {len(res)} value(s) (results 0..{len(res) - 1})")
            return res[ex.target_result]
        return run.main_result()
    return ex.target


def _compared_value(run: Run, ex: Exercise) -> Any:
    """What a fill-attributes / fix-program run is compared on: ``value`` (its instance), else
    the first result (on a grid: of ``process``)."""
    if ex.value:
        return run.value(ex.value, ex.iteration, ex.process)
    if ex.process:
        per = run.session.process_results
        if not per or ex.process >= len(per):
            raise HloLabError(f"process {ex.process}: the program runs as {len(per) if per else 1} "
                              "process(es)")
        return per[ex.process][0]
    return run.main_result()


def _program_verdict(runner: Runner, ex: Exercise, text: str) -> Verdict:
    """fill-attributes / fix-program: the learner's program must run and produce the target."""
    try:
        run = runner.text(text, ex.lang)
    except HloLabError as e:
        return Verdict(False, Msg("lessons.verdict.program_error", error=e.short()), error=e)
    try:  # the learner's program may lack the value (or the process) compared
        got = _compared_value(run, ex)
    except HloLabError as e:
        return Verdict(False, Msg("lessons.verdict.program_error", error=e.short()), error=e)
    target = target_value(runner, ex)
    t_arr = np.asarray(target)
    g_arr = np.asarray(got)
    if g_arr.shape != t_arr.shape:
        return Verdict(False, Msg("lessons.verdict.program_shape", got=list(g_arr.shape),
                                  target=list(t_arr.shape)),
                       Msg("lessons.verdict.program_target", target=value_text(t_arr)))
    given = t_arr.tolist() if isinstance(target, np.ndarray) else target
    if _equal_values(given, got, ex.rtol, ex.atol):
        return Verdict(True, Msg("lessons.verdict.program_right"))
    return Verdict(False, Msg("lessons.verdict.program_differs", got=value_text(g_arr)),
                   Msg("lessons.verdict.program_target", target=value_text(t_arr)))


def check(runner: Runner, ex: Exercise, answer: Any) -> Verdict:
    """Check ``answer`` (in the form of the lesson file's ``answer``) by executing."""
    if ex.kind in ("fill-attributes", "fix-program"):
        if ex.kind == "fill-attributes":
            missing = [b for b in ex.blanks if b not in answer]
            if missing:
                return Verdict(False, Msg("lessons.answer.missing_blanks", blanks=", ".join(missing)))
        try:
            text = solved_text(ex, answer)
        except AnswerFormatError as e:
            return Verdict(False, e.msg)
        return _program_verdict(runner, ex, text)

    run = runner.program(ex.program)
    label = _label(ex)
    if ex.kind == "predict-value":
        actual = _element(run.value(ex.value, ex.iteration, ex.process), ex.element)
        given = answer
        if isinstance(given, str):
            try:
                given = parse_typed(ex, given)
            except AnswerFormatError as e:
                return Verdict(False, e.msg)
        reveal = Msg("lessons.verdict.value_reveal", given=value_text(given), actual=value_text(actual),
                     value=label)
        if _equal_values(given, actual, ex.rtol, ex.atol):
            return Verdict(True, Msg("lessons.verdict.value_right", value=label, actual=value_text(actual)))
        wrong = Msg("lessons.verdict.value_wrong", value=label, given=value_text(given))
        return Verdict(False, wrong, reveal)
    if ex.kind == "predict-shape":
        shape = list(np.asarray(run.value(ex.value, ex.iteration, ex.process)).shape)
        shown = "x".join(map(str, shape)) or "()"
        given = "x".join(map(str, answer)) or "()"
        if list(answer) == shape:
            return Verdict(True, Msg("lessons.verdict.shape_right", value=_name(ex), actual=shown))
        return Verdict(False, Msg("lessons.verdict.shape_wrong", value=_name(ex), given=given),
                       Msg("lessons.verdict.shape_reveal", value=_name(ex), actual=shown))
    if ex.kind == "predict-type":
        actual = run.declared_type(ex.value, ex.iteration, ex.process)
        try:
            given = _canonical_type(answer)
        except AnswerFormatError as e:
            reveal = Msg("lessons.verdict.type_reveal", value=_name(ex), actual=actual)
            return Verdict(False, e.msg, reveal)
        if given == actual:
            return Verdict(True, Msg("lessons.verdict.type_right", value=_name(ex), actual=actual))
        return Verdict(False, Msg("lessons.verdict.type_wrong", value=_name(ex), given=given),
                       Msg("lessons.verdict.type_reveal", value=_name(ex), actual=actual))
    if ex.kind == "pick-sources":
        actual_cells = _sources(run, ex)
        given_cells = {tuple(c) for c in answer}
        reveal = Msg("lessons.verdict.sources_reveal", value=label, operand=_ref(ex.operand),
                     cells=_cells_text(actual_cells))
        if not actual_cells:  # an element that reads none of the operand's cells (say, padding)
            reveal = Msg("lessons.verdict.sources_none_reveal", value=label, operand=_ref(ex.operand))
        if given_cells == actual_cells:
            if not actual_cells:
                return Verdict(True, Msg("lessons.verdict.sources_none", value=label,
                                         operand=_ref(ex.operand)))
            return Verdict(True, Msg("lessons.verdict.sources_right", value=label, operand=_ref(ex.operand),
                                     cells=_cells_text(actual_cells)))
        extra = given_cells - actual_cells
        if extra:
            return Verdict(False, Msg("lessons.verdict.sources_extra", value=label, operand=_ref(ex.operand),
                                      cells=_cells_text(extra)), reveal)
        return Verdict(False, Msg("lessons.verdict.sources_missing", value=label, operand=_ref(ex.operand),
                                  n=len(actual_cells - given_cells)), reveal)
    raise HloLabError(f"unknown exercise kind {ex.kind!r}")


def broken_error(runner: Runner, ex: Exercise) -> HloLabError | None:
    """The error a fix-program's broken program fails with (None if it runs: a lesson bug)."""
    try:
        runner.text(ex.broken, ex.lang)
    except HloLabError as e:
        return e
    return None


def program_of(lesson: Lesson, name: str) -> Program:
    return lesson.programs[name]


_target = target_value  # the name the TUI's lesson screen first used
