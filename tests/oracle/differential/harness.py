"""Differential harness: one jax.lax call, lowered to StableHLO text, run by hlolab and by XLA:CPU.

``run_cases`` lowers ``jax.jit(f).lower(*args).as_text()`` (several independent cases may share
one program: f returns every case's outputs, each compared on its own), runs the text through
hlolab's parser and executor (``hlolab.runner.run_module``) and, at the same time, through
XLA:CPU in a persistent spawned worker process that compiles the same text with the options
jax.jit uses (``tests.xla_oracle.run_xla``) and caches executables by text. If XLA aborts the
worker (it has, rarely, on reduce_window), the case becomes a test failure naming the cases
and the program, and the next call starts a new worker.

Comparison (``check``) follows tests/oracle/ulp_table.py: bit-exact (NaN == NaN whatever the
payload: ulp_table.NAN_RULE), ulps, complex relative, or k * n * eps * sum|terms|.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing as mp
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import ml_dtypes
import numpy as np

from hlolab.ir.parser import parse_module
from hlolab.numerics import to_bits, ulp_distance
from hlolab.runner import run_module
from hlolab.types import element_type_of_dtype
from tests.oracle.numerics import flush
from tests.oracle.ulp_table import Bound, bound
from tests.xla_oracle import jax  # skips loudly without jax (fails under HLOLAB_REQUIRE_ORACLE)

lax = jax.lax
XLA_TIMEOUT = 120.0  # seconds for one program on the worker; a hang becomes a failure, not a stall


# ---- the XLA:CPU worker ----------------------------------------------------------------------

_EXES: dict[str, Any] = {}


def _worker_run(text: str, args: list[np.ndarray]) -> list[np.ndarray]:
    """In the worker: compile (cached by text) and run on XLA:CPU."""
    from tests.xla_oracle import CPU, _xla_client

    exe = _EXES.get(text)
    if exe is None:
        exe = CPU.compile_and_load(text, CPU.devices()[:1], _xla_client.CompileOptions())
        _EXES[text] = exe
    res = exe.execute_sharded([jax.device_put(np.asarray(a), CPU.devices()[0]) for a in args])
    return [np.asarray(o[0]) for o in res.disassemble_into_single_device_arrays()]


def _worker_init() -> None:
    import tests.xla_oracle  # noqa: F401  (import jax once, at start)


class XlaWorker:
    def __init__(self) -> None:
        self.pool: cf.ProcessPoolExecutor | None = None

    def submit(self, text: str, args: list[np.ndarray]) -> cf.Future:
        if self.pool is None:
            self.pool = cf.ProcessPoolExecutor(1, mp_context=mp.get_context("spawn"),
                                               initializer=_worker_init)
        return self.pool.submit(_worker_run, text, args)

    def result(self, fut: cf.Future, what: str) -> list[np.ndarray]:
        try:
            return fut.result(timeout=XLA_TIMEOUT)
        except (cf.process.BrokenProcessPool, cf.TimeoutError) as e:
            self.restart()
            raise AssertionError(f"XLA:CPU worker died or hung ({type(e).__name__}) on {what}") from None

    def restart(self) -> None:
        if self.pool is not None:
            for p in list(getattr(self.pool, "_processes", {}).values()):
                p.kill()  # only our own worker
            self.pool.shutdown(wait=False, cancel_futures=True)
        self.pool = None


WORKER = XlaWorker()


# ---- running cases ----------------------------------------------------------------------------

@dataclass
class Case:
    """One jax.lax call: ``fn(*args)`` returns an array or a tuple of arrays. ``op``/``variant``
    select the ulp_table entry; ``terms``: the sum|terms| arrays for ``terms`` bounds (one per
    output), ``n`` the number of terms combined."""
    label: str
    fn: Callable | None
    args: list[np.ndarray]
    op: str
    variant: str | None = None
    terms: list[np.ndarray] | None = None
    n: int = 1
    n_out: int = field(default=0)


def _as_list(x) -> list:
    return list(x) if isinstance(x, (tuple, list)) else [x]


def lower(cases: Sequence[Case]) -> tuple[str, list[np.ndarray]]:
    """One program computing every case (independent outputs, no shared values)."""
    counts = [len(c.args) for c in cases]

    def program(*flat):
        outs, i = [], 0
        for c, k in zip(cases, counts, strict=True):
            res = _as_list(c.fn(*flat[i:i + k]))
            c.n_out = len(res)
            outs += res
            i += k
        return tuple(outs)

    flat = [np.asarray(a) for c in cases for a in c.args]
    # keep_unused: every case's arguments stay parameters of @main (XLA gets all of flat)
    return jax.jit(program, keep_unused=True).lower(*flat).as_text(), flat


def hlolab_run(text: str, args: list[np.ndarray], what: str) -> list[np.ndarray]:
    res = run_module(parse_module(text, "<jax>"), what, args=list(args))
    if not res.ok:
        raise AssertionError(f"hlolab failed on {what}: {res.message}\n{text}")
    return [np.asarray(o) for o in res.outputs]


def describe(cases: Sequence[Case], text: str) -> str:
    return "cases " + "; ".join(c.label for c in cases) + "\n" + text


def run_cases(cases: Sequence[Case], rewrite: Callable[[str], str] | None = None) -> int:
    """Run ``cases`` as one program on both sides and check each output; returns len(cases).
    ``rewrite``: an edit of the lowered text where jax cannot spell an attribute (both sides run
    the edited text)."""
    text, flat = lower(cases)
    if rewrite is not None:
        text = rewrite(text)
    return _run_and_check(text, flat, cases)


def run_text(case: Case, text: str) -> int:
    """Run hand-written StableHLO ``text`` (a module whose ``@main`` takes ``case.args``) on both
    sides and check every output against ``case``'s bound: for ops jax does not print (it lowers
    them to library calls, or has no lax function for them). ``case.fn`` is not called;
    ``case.terms``, if given, holds one array per output."""
    case.n_out = 0
    return _run_and_check(text, [np.asarray(a) for a in case.args], [case])


def _run_and_check(text: str, flat: list[np.ndarray], cases: Sequence[Case]) -> int:
    fut = WORKER.submit(text, flat)
    what = describe(cases, text)
    try:
        ours = hlolab_run(text, flat, what)
    finally:
        ref = WORKER.result(fut, what)
    alt = None
    if any(_has_denormal(a) for a in flat) or any(_has_denormal(o) for o in ours):
        alt = [flush(o) for o in hlolab_run(text, [flush(a) for a in flat], what)]
    if len(cases) == 1 and cases[0].n_out == 0:  # run_text: every output belongs to the case
        cases[0].n_out = len(ref)
    assert len(ours) == len(ref), f"hlolab gave {len(ours)} outputs, XLA {len(ref)}: {what}"
    i = 0
    for c in cases:
        for j in range(c.n_out):
            et = element_type_of_dtype(ref[i].dtype).name
            b = bound(c.op, et, c.variant)
            check(b, ours[i], ref[i], alt[i] if alt is not None and b.ftz else None,
                  c.terms[j] if c.terms is not None else None, c.n, f"{c.label} output {j}", text)
            i += 1
    return len(cases)


# ---- comparing ------------------------------------------------------------------------------



def _has_denormal(a: np.ndarray) -> bool:
    return a.size > 0 and not np.array_equal(to_bits_any(flush(a)), to_bits_any(a))


def to_bits_any(a: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "c":
        return np.stack([to_bits(np.ascontiguousarray(a.real)), to_bits(np.ascontiguousarray(a.imag))])
    if a.dtype == np.bool_:
        return a.view(np.uint8)
    return to_bits(a)


def _isnan(a: np.ndarray) -> np.ndarray:
    if a.dtype.kind in "biu" or (a.dtype.kind == "V" and not element_type_of_dtype(a.dtype).is_float):
        return np.zeros(a.shape, bool)
    try:
        with np.errstate(invalid="ignore"):
            return np.isnan(a.astype(np.complex128 if a.dtype.kind == "c" else np.float64))
    except (TypeError, ValueError):
        return np.zeros(a.shape, bool)


def same_bits(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per element: identical bits (so -0.0 != +0.0), or NaN on both sides (NAN_RULE); complex:
    per part."""
    if a.dtype.kind == "c":
        return same_bits(np.ascontiguousarray(a.real), np.ascontiguousarray(b.real)) & \
            same_bits(np.ascontiguousarray(a.imag), np.ascontiguousarray(b.imag))
    if a.dtype == np.bool_:
        return a == b
    return (to_bits(a) == to_bits(b)) | (_isnan(a) & _isnan(b))


def _report(bad: np.ndarray, ours, ref, what: str, text: str, how: str) -> None:
    if bad.shape != np.shape(ours) and bad.size == np.size(ours):  # e.g. (1,) against a 0-d output
        bad = bad.reshape(np.shape(ours))
    if bad.any():
        idx = np.argwhere(bad)[:5]
        sample = [(tuple(int(v) for v in i), ours[tuple(i)].item(), ref[tuple(i)].item()) for i in idx]
        raise AssertionError(f"{what}: {int(bad.sum())} of {bad.size} elements {how}; "
                             f"(index, hlolab, xla): {sample}\n{text}")


def check(b: Bound, ours: np.ndarray, ref: np.ndarray, alt: np.ndarray | None, terms, n: int,
          what: str, text: str = "") -> None:
    assert ours.dtype == ref.dtype and ours.shape == ref.shape, \
        f"{what}: hlolab {ours.dtype}{ours.shape} vs xla {ref.dtype}{ref.shape}\n{text}"
    ok = same_bits(ours, ref)
    if alt is not None:
        ok |= same_bits(alt, ref)
    if b.kind == "exact" or ok.all():
        _report(~ok, ours, ref, what, text, "differ from XLA (bit-exact)")
        return
    if b.kind == "ulp":
        dist = ulp_distance(flush(ours), ref)
        if alt is not None:
            dist = np.minimum(dist, ulp_distance(alt, ref))
        ok |= dist <= b.k
        _report(~ok, ours, ref, what, text, f"are more than {b.k} ulp from XLA")
        return
    c128 = np.complex128 if ref.dtype.kind == "c" else np.float64
    with np.errstate(invalid="ignore", over="ignore"):
        o, r = ours.astype(c128), ref.astype(c128)
        err = np.abs(o - r)
        eps = float(ml_dtypes.finfo(ref.real.dtype if ref.dtype.kind == "c" else ref.dtype).eps)
        if b.kind == "rel":
            lim = b.k * eps * np.abs(r) + float(ml_dtypes.finfo(np.float32).tiny)
        else:  # terms; eps of the result type bounds both XLA's and hlolab's accumulation
            tiny = float(ml_dtypes.finfo(np.float32).tiny)
            lim = b.k * max(n, 1) * eps * np.asarray(terms, np.float64) + eps * np.abs(r) + tiny
        ok |= err <= lim
    _report(~ok, ours, ref, what, text, f"exceed the {b.kind} bound k={b.k}")
