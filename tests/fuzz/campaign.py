"""Fuzz campaigns over the parser and the executor.

The invariant (issue 6): on any input hlolab gives either a result or a clean
hlolab error (ParseError, VerificationError naming op and ``(Cn)``,
ExecutionError, ...); never another exception, never a hang.

Two sources of cases:
- **mutated programs**: the StableHLO interpreter test programs
  (``../shared/conformance/interpret``) and hlolab's examples, each mutated by
  a few text edits that aim at the parser's and verifier's edges (numbers at
  type limits, dims swapped, tokens dropped, duplicated, cut);
- **random op parameters**: every op with a parameter schema built by
  ``make_example`` from random parameter values of each parameter's kind, then run.

Every case runs under a wall-clock alarm; a case that overruns it is a hang.
"""

from __future__ import annotations

import re
import signal
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hlolab.errors import HloLabError

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO.parent / "shared" / "conformance" / "interpret"
EXAMPLES = REPO / "hlolab" / "examples"
CASE_SECONDS = 20.0  # a case running longer than this is reported as a hang
ELEMENT_BUDGET = 2**22  # elements per tensor while fuzzing (the default 2^28 would swap the machine)
STEP_BUDGET = 20_000  # executed ops per case


class Hang(Exception):
    """Raised by the alarm inside a case that ran over CASE_SECONDS."""


@dataclass
class Finding:
    kind: str  # "crash" (a non-hlolab exception) or "hang"
    source: str  # where the case came from: "add.mlir#2 + 3 mutations", "op gather"
    error: str  # exception type and message
    trace: str
    text: str  # the program (or op parameters) that triggered it


@dataclass
class Tally:
    cases: int = 0
    parsed: int = 0  # mutated programs that still parsed
    ran: int = 0  # cases that ran to a result
    clean_errors: int = 0  # cases that ended in an hlolab error
    findings: list[Finding] = field(default_factory=list)

    def line(self) -> str:
        return (f"{self.cases} cases: {self.parsed} parsed, {self.ran} ran to a result, "
                f"{self.clean_errors} clean hlolab errors, {len(self.findings)} findings")


# --- corpus -------------------------------------------------------------------------------------

def corpus() -> list[tuple[str, str]]:
    """(label, module text) for every module of the conformance programs and the examples."""
    from hlolab.ir.parser import split_source

    out = []
    paths = sorted(CORPUS.glob("*.mlir")) + sorted(EXAMPLES.glob("*.mlir"))
    for p in paths:
        for k, (_, chunk) in enumerate(split_source(p.read_text())):
            if chunk.strip():
                out.append((f"{p.name}#{k + 1}", chunk))
    return out


# --- mutations ------------------------------------------------------------------------------------

EDGE_NUMBERS = ("0", "-1", "1", "2", "7", "-9", "127", "128", "255", "65535", "2147483647", "-2147483648",
                "4294967296", "9223372036854775807", "-9223372036854775808", "18446744073709551616",
                "99999999999", "1.0e+400", "-0.0", "0x7FC00000", "0xFFFFFFFF", "1e-45", "nan", "inf")
PUNCT = "{}()[]<>,:=%@#!\"x-+.^ \n"
TYPES = ("f32", "f16", "bf16", "f64", "i1", "i4", "i8", "i32", "i64", "ui8", "ui32", "complex<f32>",
         "f8E4M3FN", "f8E5M2", "tensor<f32>", "tuple<>", "!stablehlo.token", "index", "none")
NUMBER = re.compile(r"-?\b\d+(\.\d+)?([eE][+-]?\d+)?\b")
DIMS = re.compile(r"\b\d+(x\d+)*x(?=[a-z!])")
TYPE_WORD = re.compile(r"\b(f16|bf16|f32|f64|i1|i4|i8|i16|i32|i64|ui8|ui32|ui64)\b")
WORD = re.compile(r"[%@^#]?[A-Za-z_][\w.$]*")
# numbers, dims, types, words, delete, punctuation, dup line, swap lines, drop line, cut, char
KIND_WEIGHTS = np.array([26, 22, 14, 8, 5, 5, 5, 4, 5, 2, 4], dtype=float) / 100


def _spans(pattern: re.Pattern[str], text: str) -> list[tuple[int, int]]:
    return [m.span() for m in pattern.finditer(text)]


def _replace(text: str, span: tuple[int, int], new: str) -> str:
    return text[:span[0]] + new + text[span[1]:]


def mutate_once(text: str, rng: np.random.Generator) -> str:
    """One random edit aimed at an edge of the parser or verifier."""
    if not text:
        return text
    # mostly edits that keep the program parseable (so the verifier and executor see it too)
    kind = int(rng.choice(11, p=KIND_WEIGHTS))
    pick = lambda seq: seq[int(rng.integers(0, len(seq)))]  # noqa: E731
    if kind == 0:  # a number at a type limit
        spans = _spans(NUMBER, text)
        return _replace(text, pick(spans), pick(EDGE_NUMBERS)) if spans else text
    if kind == 1:  # a dims list changed: grow, shrink, zero, drop one
        spans = _spans(DIMS, text)
        if not spans:
            return text
        s = pick(spans)
        dims = text[s[0]:s[1] - 1].split("x")
        op = int(rng.integers(0, 4))
        if op == 0:
            dims[int(rng.integers(0, len(dims)))] = pick(("0", "1", "3", "100000", "?"))
        elif op == 1 and len(dims) > 1:
            dims.pop(int(rng.integers(0, len(dims))))
        elif op == 2:
            dims.insert(int(rng.integers(0, len(dims) + 1)), pick(("1", "2", "5")))
        else:
            rng.shuffle(dims)
        return _replace(text, s, "x".join(dims) + "x")
    if kind == 2:  # an element type swapped
        spans = _spans(TYPE_WORD, text)
        return _replace(text, pick(spans), pick(TYPES)) if spans else text
    if kind == 3:  # a word replaced by another word of the program (op names, SSA names, attrs)
        spans = _spans(WORD, text)
        if len(spans) < 2:
            return text
        other = pick(spans)
        return _replace(text, pick(spans), text[other[0]:other[1]])
    if kind == 4:  # a span deleted
        i = int(rng.integers(0, len(text)))
        return text[:i] + text[i + int(rng.integers(1, 24)):]
    if kind == 5:  # punctuation inserted
        i = int(rng.integers(0, len(text) + 1))
        return text[:i] + pick(PUNCT) + text[i:]
    lines = text.split("\n")
    if kind == 6:  # a line duplicated
        i = int(rng.integers(0, len(lines)))
        lines.insert(i, lines[i])
    elif kind == 7:  # two lines swapped
        i, j = (int(x) for x in rng.integers(0, len(lines), size=2))
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == 8:  # a line dropped
        lines.pop(int(rng.integers(0, len(lines))))
    elif kind == 9:  # the text cut
        return text[:int(rng.integers(0, len(text)))]
    else:  # a character replaced by one of the program's own characters
        i, j = (int(x) for x in rng.integers(0, len(text), size=2))
        return text[:i] + text[j] + text[i + 1:]
    return "\n".join(lines)


def mutate(text: str, rng: np.random.Generator, n: int) -> str:
    for _ in range(n):
        text = mutate_once(text, rng)
    return text


# --- running one case -----------------------------------------------------------------------------

def run_program(text: str, label: str = "<fuzz>") -> str:
    """Parse, verify and run ``text``'s entry function: "parse-error", "error" or "ok"."""
    from hlolab.interp.engine import Interpreter
    from hlolab.interp.inputs import random_value
    from hlolab.ir.parser import parse_module
    from hlolab.types import TensorType

    try:
        module = parse_module(text, label)
    except HloLabError:
        return "parse-error"
    try:
        interp = Interpreter(module, element_budget=ELEMENT_BUDGET, step_budget=STEP_BUDGET)
        func = interp.entry(None)
        rng = np.random.default_rng(0)
        for a in func.args:
            if isinstance(a.type, TensorType) and a.type.is_static and a.type.num_elements > ELEMENT_BUDGET:
                return "error"  # an argument over the budget: the CLI refuses it the same way
        args = [random_value(a.type, rng) for a in func.args]
        for _ in interp.steps(func.name, args):
            pass
    except HloLabError:
        return "error"
    return "ok"


def random_param_text(p: Any, rng: np.random.Generator) -> str:
    """A random value for schema parameter ``p`` in its text form: often near the default,
    sometimes out of range or malformed."""
    pick = lambda seq: seq[int(rng.integers(0, len(seq)))]  # noqa: E731
    if rng.random() < 0.08:
        return pick(("", "x", "-1", "1,,2", "1;2", "[", "9999999999999999999999", "nan", "2x-3"))
    k = p.kind
    small = lambda: int(rng.integers(-1, 5))  # noqa: E731
    if k == "shape":
        rank = int(rng.integers(0, 5)) if rng.random() < 0.3 else len(p.default)
        return "x".join(str(int(rng.integers(0, 6))) for _ in range(rank)) or "scalar"
    if k == "dtype":
        return pick(("f32", "f16", "bf16", "f64", "i1", "i8", "i32", "i64", "ui8", "ui32", "i4", "f8E4M3FN",
                     "complex<f32>"))
    if k == "int":
        return str(small())
    if k == "ints":
        n = len(p.default) if rng.random() < 0.7 else int(rng.integers(0, 5))
        return ",".join(str(small()) for _ in range(n))
    if k == "pairs":
        if rng.random() < 0.4:
            return str(small())
        n = int(rng.integers(0, 5))
        return ";".join(f"{small()},{small()}" for _ in range(n))
    if k == "enum":
        return pick(p.choices)
    if k == "bool":
        return pick(("true", "false"))
    if k == "number":
        return pick(("0", "1", "-2.5", "inf", "-inf", "nan", "identity"))
    return p.format(p.default)


def run_op(op: str, params: dict[str, str], fill: str, seed: int) -> str:
    """``make_example`` then run; "error" for a clean refusal, "ok" for a result."""
    from hlolab.interp.engine import Interpreter
    from hlolab.ir.parser import parse_module
    from hlolab.ops.examples import make_example

    try:
        ex = make_example(op, "default", params, fill=fill, seed=seed)
        module = parse_module(ex.text, f"<{op}>")
        interp = Interpreter(module, element_budget=ELEMENT_BUDGET, step_budget=STEP_BUDGET)
        for _ in interp.steps(interp.entry(None).name, ex.inputs):
            pass
    except HloLabError:
        return "error"
    return "ok"


class _Alarm:
    """SIGALRM after ``seconds``: a hang becomes a Hang exception inside the case. ``0`` turns it
    off (under pytest, whose pytest-timeout owns SIGALRM and catches a hang itself)."""

    def __init__(self, seconds: float):
        self.seconds = seconds

    def _fire(self, *_: Any) -> None:
        raise Hang(f"over {self.seconds:.0f} s")

    def __enter__(self) -> _Alarm:
        if self.seconds:
            self.old = signal.signal(signal.SIGALRM, self._fire)
            signal.setitimer(signal.ITIMER_REAL, self.seconds)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.seconds:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.old)


def _case(tally: Tally, source: str, text: str, fn: Callable[[], str], seconds: float | None) -> None:
    tally.cases += 1
    try:
        with _Alarm(seconds):
            outcome = fn()
    except Hang as e:
        tally.findings.append(Finding("hang", source, str(e), traceback.format_exc(), text))
        return
    except RecursionError as e:  # the runner reports deep recursion as an error; so must we
        tally.findings.append(Finding("crash", source, f"RecursionError: {e}", "", text))
        return
    except Exception as e:  # noqa: BLE001 - the invariant under test
        error = f"{type(e).__name__}: {e}"
        tally.findings.append(Finding("crash", source, error, traceback.format_exc(), text))
        return
    if outcome == "parse-error":
        tally.clean_errors += 1
    else:
        tally.parsed += 1
        if outcome == "ok":
            tally.ran += 1
        else:
            tally.clean_errors += 1


# --- campaigns ------------------------------------------------------------------------------------

def program_cases(seed: int) -> Iterator[tuple[str, str]]:
    """Endless (label, mutated program) pairs, deterministic for ``seed``."""
    rng = np.random.default_rng(seed)
    modules = corpus()
    if not modules:
        raise RuntimeError(f"no programs to mutate: {CORPUS} is missing")
    while True:
        label, text = modules[int(rng.integers(0, len(modules)))]
        n = int(rng.integers(1, 4))
        yield f"{label} + {n} mutations", mutate(text, rng, n)


def op_cases(seed: int) -> Iterator[tuple[str, dict[str, str], str, int]]:
    """Endless (op, params, fill, seed) cases over every op with a parameter schema."""
    from hlolab.ops.examples import schema_for, schema_ops

    rng = np.random.default_rng(seed)
    ops = schema_ops()
    while True:
        op = ops[int(rng.integers(0, len(ops)))]
        schema = schema_for(op)
        assert schema is not None
        chosen = [p for p in schema.params if rng.random() < 0.35] or [schema.params[0]]
        params = {p.name: random_param_text(p, rng) for p in chosen}
        yield op, params, ("iota" if rng.random() < 0.5 else "random"), int(rng.integers(0, 1000))


def campaign(seed: int = 0, *, seconds: float | None = None, programs: int | None = None,
             ops: int | None = None, case_seconds: float | None = CASE_SECONDS,
             progress: Callable[[Tally], None] | None = None) -> Tally:
    """Alternate program and op cases until ``seconds`` pass, or exactly ``programs`` + ``ops`` cases."""
    tally = Tally()
    pg, og = program_cases(seed), op_cases(seed + 1)
    end = time.monotonic() + seconds if seconds is not None else None
    n_prog = n_op = 0
    while True:
        if end is not None and time.monotonic() >= end:
            break
        want_prog = programs is None or n_prog < programs
        want_op = ops is None or n_op < ops
        if end is None and not (want_prog or want_op):
            break
        if want_prog and (n_prog <= n_op or not want_op):
            label, text = next(pg)
            _case(tally, label, text, lambda t=text, lab=label: run_program(t, lab), case_seconds)
            n_prog += 1
        else:
            op, params, fill, s = next(og)
            text = f"hlolab export {op} " + " ".join(f"--param {k}={v!r}" for k, v in params.items()) + \
                f" --fill {fill} --seed {s}"
            _case(tally, f"op {op}", text, lambda a=(op, params, fill, s): run_op(*a), case_seconds)
            n_op += 1
        if progress is not None and tally.cases % 5000 == 0:
            progress(tally)
    return tally


def save_findings(tally: Tally, out: Path) -> list[Path]:
    """One file per finding: the input, the error and the traceback (to replay by hand)."""
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for k, f in enumerate(tally.findings):
        p = out / f"finding_{k:03d}_{f.kind}.txt"
        p.write_text(f"// {f.source}\n// {f.error}\n/*\n{f.trace}*/\n{f.text}\n")
        paths.append(p)
    return paths
