"""The stepper every front end drives: load, bind inputs, step, trace.

A ``Session`` runs one entry function of one module as a sequence of
events (``OpRun``: one executed op instance, control-flow bodies op by op)
and keeps their history, so a user can go forward and back, stop at
breakpoints, and ask where any element of any value came from::

    s = Session.open("model.mlir")
    s.bind(seed=0)                      # or s.bind([x, w]) / s.bind(files=["x.npy"])
    s.add_breakpoint("op", "stablehlo.dot_general")
    s.run()                             # Stop(reason="breakpoint", ...)
    s.current.outputs[0]
    s.step_back()
    s.finish()                          # out of the current region
    s.sources("%5", (3, 7))             # program provenance (hlolab.trace.program)

The cursor sits *on* an executed op instance: its inputs and outputs are
known. Stepping forward past the end of the history executes the next op;
stepping inside the history replays it without executing anything.

Memory: values larger than ``store_limit`` bytes, and the oldest values once
the history holds ``history_bytes``, are not kept; asking for them
recomputes them from their op and its (recursively recomputed) inputs.
Ops are deterministic, so a recomputed value is the value that was seen.
"""

from __future__ import annotations

import threading
from bisect import bisect_left, bisect_right
from collections import OrderedDict, deque
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from hlolab.errors import ExecutionError, HloLabError, RunInterrupted
from hlolab.interp.engine import (
    ARGS_NODE,
    DEFAULT_ELEMENT_BUDGET,
    DEFAULT_STEP_BUDGET,
    STEPPER_INTERRUPT_GRACE,
    Def,
    Frame,
    Interpreter,
    OpRun,
    args_node,
    check_args,
)
from hlolab.interp.processes import (
    Idle,
    Rendezvous,
    SchedulePolicy,
    grid_args,
    module_grid,
    process_name,
    run_grid,
)
from hlolab.interp.single import normalize_outputs
from hlolab.ir.module import Func, Module, Op
from hlolab.ops.registry import lookup
from hlolab.trace import program
from hlolab.trace.locate import ValueRef, resolve
from hlolab.trace.provenance import Provenance, Shape, Source, check_index, value_shape

DEFAULT_STORE_LIMIT = 16 << 20  # bytes: a larger value is recomputed when asked for
DEFAULT_HISTORY_BYTES = 1 << 30  # bytes of values the history keeps before dropping the oldest
DEFAULT_RUN_BUDGET = 1_000_000  # events one run()/run_to() call executes before pausing
BREAKPOINT_KINDS = ("op", "line", "name", "nonfinite")


@dataclass(frozen=True)
class Dropped:
    """Stands in for a value the history did not keep (recomputed on demand)."""

    shape: tuple[int, ...]
    dtype: Any


@dataclass(frozen=True)
class Breakpoint:
    """Stop after an op instance that matches: ``op`` name (StableHLO or XLA
    name), source ``line``, result SSA ``name``, or the first ``nonfinite``
    (NaN/Inf) value produced."""

    kind: str
    value: Any = None

    def matches(self, event: OpRun) -> bool:
        if self.kind == "op":
            return _same_op(event.op.name, str(self.value))
        if self.kind == "line":
            return event.op.loc is not None and event.op.loc.line == int(self.value)
        if self.kind == "name":
            want = str(self.value) if str(self.value).startswith("%") else "%" + str(self.value)
            return any(v.name == want for v in event.op.results)
        if self.kind == "nonfinite":
            return any(_has_nonfinite(x) for x in event.outputs)
        return False

    def __str__(self) -> str:
        return self.kind if self.value is None else f"{self.kind} {self.value}"


def _same_op(name: str, want: str) -> bool:
    if name == want or name.split(".", 1)[-1] == want:
        return True
    d = lookup(want)
    return d is not None and d.name == name


def _has_nonfinite(x: Any) -> bool:
    if not isinstance(x, np.ndarray) or x.dtype.kind not in "fc" and "float" not in str(x.dtype):
        return False
    try:
        return not bool(np.isfinite(x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)).all())
    except (TypeError, ValueError):
        return False


@dataclass(frozen=True)
class Stop:
    """Why stepping stopped: ``step``, ``breakpoint``, ``end`` (the function
    returned), ``start`` (stepped back to the beginning), ``budget`` (the run
    budget of events was used up; call run() again to continue),
    ``interrupted``, or ``error`` (the program failed; the history stays).
    Stepping one process of a grid (``Session.focus``) also stops with ``waiting``
    (it waits at a rendezvous: ``detail`` says for whom) or ``finished`` (it has
    returned, others have not)."""

    reason: str
    event: OpRun | None = None
    breakpoint: Breakpoint | None = None
    error: HloLabError | None = None
    detail: str = ""

    def __str__(self) -> str:
        where = ""
        if self.event is not None:
            line = f" line {self.event.op.loc.line}" if self.event.op.loc else ""
            names = ", ".join(v.name for v in self.event.op.results)
            where = f" at #{self.event.id} {names} = {self.event.op.name}{line}"
        extra = f" ({self.breakpoint})" if self.breakpoint else ""
        if self.error is not None:
            extra = f": {self.error.short()}"
        if self.detail:
            extra += f": {self.detail}"
        return f"{self.reason}{where}{extra}"


@dataclass(frozen=True)
class ProcessState:
    """One process of a grid as of the cursor: its current op (its last event), whether it
    is ready, waits at a rendezvous (for which processes) or has finished (its results)."""

    process: int
    name: str  # "process 1 (replica 0, partition 1)"
    state: str  # "not started" | "ready" | "waiting" | "finished"
    event: OpRun | None
    rendezvous: Rendezvous | None = None  # where it waits, or the one it was just released from
    waits_for: tuple[int, ...] = ()  # members of its group that have not arrived
    results: list[Any] | None = None

    def describe(self) -> str:
        """``ready`` / ``waits at all_gather line 12 for 2, 3`` / ``finished``, in the reader's
        language (the ``stepper.process`` messages)."""
        from hlolab.messages import Msg, text

        rv = self.rendezvous
        at = ""
        if rv is not None:
            at = rv.op.name.removeprefix("stablehlo.") + (
                text(Msg("stepper.process.line", line=rv.op.loc.line)) if rv.op.loc else "")
        if self.state == "waiting" and rv is not None:
            if rv.kind in ("send", "recv"):
                peer = "recv" if rv.kind == "send" else "send"
                return text(Msg("stepper.process.waits_peer", at=at, peer=peer, channel=rv.channel))
            return text(Msg("stepper.process.waits", at=at, members=", ".join(map(str, self.waits_for))))
        if self.state == "ready" and rv is not None:  # released: the collective's result is next
            return text(Msg("stepper.process.released", at=at))
        return text(Msg("stepper.process." + self.state.replace(" ", "_")))


@dataclass(frozen=True)
class StackEntry:
    """One level of the call stack: the enclosing op and where it ran."""

    op: Op
    frame: Frame
    region: int | None
    iteration: int | None

    def describe(self) -> str:
        line = f" line {self.op.loc.line}" if self.op.loc else ""
        names = ", ".join(v.name for v in self.op.results)
        what = f"{names} = {self.op.name}" if names else self.op.name
        s = f"@{self.frame.func}: {what}{line}"
        if self.region is not None:
            s += f", region {self.region}"
        if self.iteration is not None:
            s += f", iteration {self.iteration}"
        return s


class Session:
    """One program run under a user's control (see the module doc)."""

    def __init__(self, module: Module | str, *, filename: str = "<string>", entry: str | None = None,
                 store_limit: int = DEFAULT_STORE_LIMIT, history_bytes: int = DEFAULT_HISTORY_BYTES,
                 step_budget: int = DEFAULT_STEP_BUDGET, element_budget: int = DEFAULT_ELEMENT_BUDGET,
                 run_budget: int = DEFAULT_RUN_BUDGET, grid: tuple[int, int] | None = None,
                 infeed: list[Any] | None = None):
        if isinstance(module, str):
            from hlolab.ir.parser import parse_module

            module = parse_module(module, filename)
        self.module = module
        self.store_limit = store_limit
        self.history_bytes = history_bytes
        self.step_budget = step_budget
        self.element_budget = element_budget
        self.run_budget = run_budget
        self.func: Func = Interpreter(module).entry(entry)
        self.breakpoints: list[Breakpoint] = []
        self._interrupt = threading.Event()
        self.args: list[Any] | None = None
        # the process grid (replicas, partitions): every process runs the entry function,
        # their events interleaved round-robin (hlolab.interp.processes); default: the
        # module's mhlo.num_replicas / mhlo.num_partitions, else 1x1
        self.grid: tuple[int, int] = grid or module_grid(module)
        self.process_args: list[list[Any]] | None = None  # per process (a grid of > 1)
        self.process_results: list[list[Any]] | None = None
        # on a grid, the process an unqualified value name refers to (the spec: ``name`` is
        # ``name@(replica_id(), partition_id())``); find() takes another one
        self.process = 0
        # how step() moves on a grid: ``focus`` p runs only process p (it stops "waiting" at
        # a rendezvous, run_others() brings the rest there); else ``lockstep`` runs every
        # ready process's next op per step; else one event per step, round-robin
        self.focus: int | None = None
        self.lockstep = False
        self.infeed = list(infeed or [])  # what stablehlo.infeed reads, in order
        self._reset()

    @classmethod
    def open(cls, path: str | Path, **kw: Any) -> Session:
        p = Path(path)
        try:
            text = p.read_text()
        except (OSError, UnicodeDecodeError) as e:
            raise HloLabError(f"cannot read {p}: {e}") from None
        return cls(text, filename=str(p), **kw)

    # --- inputs -----------------------------------------------------------
    def bind(self, args: list[Any] | None = None, *, seed: int | None = 0,
             files: list[str | Path] | None = None) -> list[Any]:
        """Set the entry arguments and restart: ``args`` (arrays; ``None`` for one to make),
        then ``files`` (``.npy``, no pickles), the rest random by type from ``seed``."""
        from hlolab.interp.inputs import load_npy, random_args

        values = [None if a is None else np.asarray(a) for a in (args or [])]
        values += [load_npy(f, self.element_budget) for f in files or []]
        for i, v in enumerate(values):  # given arrays count against the budget as made ones do
            if v is not None and v.size > self.element_budget:
                raise ExecutionError(f"argument #{i} of @{self.func.name} has {v.size:,} elements, over "
                                     f"the element budget of {self.element_budget:,}")
        if self.n_processes > 1:
            per = grid_args(self.func, values, self.grid, seed, self.element_budget)
            for a in per:
                check_args(self.func, a)
            self.process_args = per
            self.args = per[0]
            self._reset()
            return per[0]
        values = random_args(self.func, values, seed, self.element_budget)
        check_args(self.func, values)
        self.args = values
        self._reset()
        return values

    @property
    def n_processes(self) -> int:
        return self.grid[0] * self.grid[1]

    @property
    def outfeed(self) -> list[tuple[int, list[Any]]]:
        """What stablehlo.outfeed wrote so far: ``(process, values)`` per outfeed op run."""
        return list(self.interp.state.get("outfeed", []))

    def _reset(self) -> None:
        self.interp = Interpreter(self.module, element_budget=self.element_budget,
                                  step_budget=self.step_budget)
        self.interp.record_bindings = True
        self.interp.interrupt_grace = STEPPER_INTERRUPT_GRACE
        self.history: list[OpRun] = []
        self._by_id: dict[int, OpRun] = {}
        self._consumers: dict[Def, list[tuple[int, str, int]]] = {}
        self._stored: deque[tuple[OpRun, int, int]] = deque()
        self._stored_bytes = 0
        self._cache: OrderedDict[Def, Any] = OrderedDict()
        self.cursor = 0  # history[cursor - 1] is the current event
        self.results: list[Any] | None = None
        self.error: HloLabError | None = None
        self._gen = None
        self.process_results = None
        self._policy = SchedulePolicy()
        self._marks: list[int] = []  # cursors where a forward stepping command ended
        self._by_process: dict[int, list[int]] = {}  # history positions of each process's events
        # who waits where after each event of a grid run, stored where it changes:
        # _status_at[i] holds from history position _status_pos[i] on
        self._status_pos: list[int] = []
        self._status_at: list[list[tuple[str, Rendezvous | None]]] = []
        self.interp.state["infeed"] = list(self.infeed)
        if self.n_processes > 1:
            if self.process_args is None and not self.func.args:
                self.process_args = [[] for _ in range(self.n_processes)]
            if self.process_args is not None:
                self._gen = run_grid(self.interp, self.func, self.process_args, self.grid,
                                     self._policy)
        elif self.args is not None or not self.func.args:
            self._gen = self.interp.steps(self.func.name, list(self.args or []))

    def restart(self) -> None:
        """Back to before the first op (the history is discarded)."""
        self._reset()

    # --- state ------------------------------------------------------------
    @property
    def finished(self) -> bool:
        """The entry function has returned (or failed) and the cursor is at the end."""
        return (self.results is not None or self.error is not None) and self.cursor == len(self.history)

    @property
    def current(self) -> OpRun | None:
        """The op instance the cursor is on, its values recomputed where dropped."""
        return self.event(self.history[self.cursor - 1].id) if self.cursor else None

    def instance(self, node: int) -> OpRun:
        """The op instance ``node`` as recorded (inputs and outputs may be ``Dropped``)."""
        ev = self._by_id.get(node)
        if ev is None:
            raise ExecutionError(f"no op instance #{node} in this run")
        return ev

    def event(self, node: int) -> OpRun:
        """The op instance ``node`` with all its inputs and outputs present."""
        ev = self._by_id.get(node)
        if ev is None:
            raise ExecutionError(f"no op instance #{node} in this run")
        if not any(isinstance(x, Dropped) for x in ev.inputs + ev.outputs):
            return ev
        return replace(ev, inputs=[self.value_of(d) if isinstance(x, Dropped) and d is not None else x
                                   for x, d in zip(ev.inputs, ev.operand_defs)],
                       outputs=[self.value_of((node, k)) for k in range(len(ev.outputs))])

    def call_stack(self, event: OpRun | None = None) -> list[StackEntry]:
        """The enclosing ops of ``event`` (default: the current one), outermost first."""
        ev = event or (self.history[self.cursor - 1] if self.cursor else None)
        if ev is None:
            return []
        out = []
        f = ev.frame.parent  # the block frame of the event
        while f is not None:
            op_frame = f.parent
            if op_frame is None:
                break
            out.append(StackEntry(self._resolve(op_frame), op_frame, f.region if f.path else None,
                                  f.iteration if f.path else None))
            f = op_frame.parent
        return out[::-1]

    def _resolve(self, frame: Frame) -> Op:
        """The op an op frame stands for (walks the frame chain through the IR)."""
        block_frame = frame.parent
        assert block_frame is not None
        if not block_frame.path:  # a function body
            func = self.module.func(block_frame.func)
            assert func is not None and func.body is not None
            block = func.body.blocks[0]
        else:
            enclosing = self._resolve(block_frame.parent)  # type: ignore[arg-type]
            block = enclosing.regions[block_frame.region or 0].blocks[0]
        return block.ops[frame.path[-1]]

    # --- breakpoints --------------------------------------------------------
    def add_breakpoint(self, kind: str, value: Any = None) -> Breakpoint:
        if kind not in BREAKPOINT_KINDS:
            raise ExecutionError(f"unknown breakpoint kind '{kind}' (kinds: {', '.join(BREAKPOINT_KINDS)})")
        if kind == "line":
            try:
                value = int(value)
            except (TypeError, ValueError):
                raise ExecutionError(f"a line breakpoint needs a line number, got {value!r}") from None
        if kind == "op":
            v = str(value)
            known = (lookup(v) or lookup("stablehlo." + v)
                     or any(_same_op(o.name, v) for o in self.module.walk()))
            if not known:
                raise ExecutionError(f"no op named '{v}' (see `hlolab ops`)")
        bp = Breakpoint(kind, value)
        if bp not in self.breakpoints:
            self.breakpoints.append(bp)
        return bp

    def remove_breakpoint(self, bp: Breakpoint) -> None:
        if bp in self.breakpoints:
            self.breakpoints.remove(bp)

    def interrupt(self) -> None:
        """Ask a running step/run()/run_to()/finish() to stop (thread-safe).

        Normally it stops cleanly after the current op and the session can go on:
        the interpreter's own flag is honoured only after ``STEPPER_INTERRUPT_GRACE``
        ops have run without an event, i.e. inside a loop that yields no op (an
        empty-bodied while). Such a loop cannot be stopped any other way, so that
        ends the run (``Stop("interrupted")``, the history stays)."""
        self._interrupt.set()
        self.interp.interrupt.set()

    # --- stepping -------------------------------------------------------------
    def step(self, n: int = 1) -> Stop:
        """Forward ``n`` op instances (into regions and calls). On a grid: with ``focus``
        set, ``n`` ops of that process; with ``lockstep``, ``n`` rounds of every ready
        process's next op; else ``n`` events, the processes in turn."""
        self._clear_interrupt()
        stop = Stop("step", self.current)
        for i in range(n):
            if i and self._interrupt.is_set():
                self._clear_interrupt()
                return Stop("interrupted", self.current)
            if self.n_processes > 1 and self.focus is not None:
                stop = self._advance_process(self._check_process(self.focus))
            elif self.n_processes > 1 and self.lockstep:
                stop = self._advance_round()
            else:
                stop = self._advance()
            self._mark()
            if stop.reason != "step":
                return stop
        return stop

    def step_back(self, n: int = 1) -> Stop:
        """Back ``n`` steps of the stepping mode: an event; with ``focus``, to before that
        process's current op; with ``lockstep``, to where the step before ended."""
        for _ in range(n):
            if self.n_processes > 1 and self.focus is not None:
                p = self._check_process(self.focus)
                pos = self._positions(p)
                i = bisect_left(pos, self.cursor) - 1
                if i < 0:
                    return Stop("start", self.current_of(p))
                self.cursor = pos[i]  # its op and everything that ran after it undone
            elif self.n_processes > 1 and self.lockstep:
                i = bisect_left(self._marks, self.cursor) - 1
                self.cursor = self._marks[i] if i >= 0 else 0
            else:
                self.cursor = max(0, self.cursor - 1)
        if self.n_processes > 1 and self.focus is not None:
            ev = self.current_of(self.focus)
            return Stop("step" if ev is not None else "start", ev)
        return Stop("step" if self.cursor else "start", self.current)

    # --- a process grid -----------------------------------------------------------
    def _check_process(self, p: int) -> int:
        if not isinstance(p, int) or not 0 <= p < self.n_processes:
            raise ExecutionError(f"process {p} is not in the {self.grid[0]}x{self.grid[1]} grid "
                                 f"(processes 0..{self.n_processes - 1})")
        return p

    def _positions(self, p: int) -> list[int]:
        return self._by_process.get(p, [])

    def current_of(self, p: int) -> OpRun | None:
        """Process ``p``'s current op instance: its last event at or before the cursor."""
        ev = self._last_of(p)
        return self.event(ev.id) if ev is not None else None

    def _last_of(self, p: int) -> OpRun | None:
        """``current_of`` as recorded (values may be ``Dropped``)."""
        pos = self._positions(p)
        i = bisect_left(pos, self.cursor) - 1
        return self.history[pos[i]] if i >= 0 else None

    def _mark(self) -> None:
        """After a stepping command: where it ended (lockstep steps back to it), and who
        waits where now (a process may have parked after the last event: seen from then on)."""
        if self.cursor != len(self.history) or not self.cursor:
            return
        if not self._marks or self._marks[-1] < self.cursor:
            self._marks.append(self.cursor)
        if self.n_processes > 1:
            self._log_status(len(self.history) - 1)

    def _log_status(self, pos: int) -> None:
        """The live status as that after history position ``pos`` (the last one or a new one)."""
        live = self._live_status()
        if self._status_pos and self._status_pos[-1] == pos:
            self._status_at[-1] = live
        elif not self._status_at or self._status_at[-1] != live:
            self._status_pos.append(pos)
            self._status_at.append(live)

    def _live_status(self) -> list[tuple[str, Rendezvous | None]]:
        scheduler = self.interp.scheduler
        if scheduler is None:
            return [("ready", None)] * self.n_processes
        return scheduler.status()

    def process_states(self) -> list[ProcessState]:
        """Every process of the grid as of the cursor (a single process: one entry)."""
        n = self.n_processes
        if self.cursor == len(self.history):
            status = self._live_status()
        elif self.cursor == 0:
            status = [("ready", None)] * n
        else:
            status = self._status_at[bisect_right(self._status_pos, self.cursor - 1) - 1]
        done = self.interp.scheduler.done if self.interp.scheduler is not None else {}
        out = []
        for p, (state, rv) in enumerate(status):
            ev = self._last_of(p)
            waits: tuple[int, ...] = ()
            if state == "waiting" and rv is not None and rv.kind == "group":
                waits = tuple(q for q in rv.group if q != p and not (
                    status[q][0] == "waiting" and status[q][1] is not None and status[q][1].key == rv.key))
            if state == "ready" and ev is None:
                state = "not started"
            results = None
            if state == "finished":
                results = list(done[p]) if p in done else (self.results if n == 1 else None)
            out.append(ProcessState(p, process_name(p, self.grid), state, ev, rv, waits, results))
        return out

    def _idle_stop(self, p: int, state: str) -> Stop:
        ps = self.process_states()[p]
        if state == "finished":
            return Stop("finished", self.current_of(p), detail=f"{ps.name} has finished; others still run")
        return Stop("waiting", self.current_of(p), detail=f"{ps.name} {ps.describe()}")

    def _advance_process(self, p: int, through: bool = True) -> Stop:
        """Process ``p``'s next op: its next event in the history, else run it alone. When it
        arrives at a rendezvous and completes it, ``through`` runs its collective too; else
        the stop is ``arrived`` (a lockstep round runs the group in process order)."""
        pos = self._positions(p)
        i = bisect_left(pos, self.cursor)
        if i < len(pos):
            self.cursor = pos[i] + 1
            return Stop("step", self.current)
        self.cursor = len(self.history)
        self._policy.focus = p
        try:
            while True:
                stop = self._advance()
                if stop.reason != "arrived":
                    return stop
                if self._live_status()[p][0] != "ready":  # the others have not all arrived
                    return self._idle_stop(p, "waiting")
                if not through:
                    return stop
        finally:
            self._policy.focus = None

    def _advance_round(self) -> Stop:
        """One lockstep step: every process that can runs its next op (a process that
        arrives at a rendezvous and is released in the same step runs the collective too);
        processes waiting at a rendezvous stay. Replayed rounds end where they ended."""
        if self.cursor < len(self.history):
            i = bisect_right(self._marks, self.cursor)
            self.cursor = self._marks[i] if i < len(self._marks) else len(self.history)
            return Stop("step", self.current)
        if self.results is not None or self.error is not None or self._gen is None:
            return self._advance()
        pending = [p for p, (st, _) in enumerate(self._live_status()) if st != "finished"]
        ran = 0
        while True:
            status = self._live_status()
            ready = [p for p in pending if status[p][0] == "ready"]
            if not ready:
                break
            p = ready[0]
            stop = self._advance_process(p, through=False)
            if stop.reason == "arrived":  # it completed a group: its members run in order
                continue
            if stop.reason in ("step", "breakpoint"):
                ran += 1
                pending.remove(p)
                if stop.reason == "breakpoint":
                    return stop
            elif stop.reason == "finished":
                pending.remove(p)
            elif stop.reason != "waiting":  # the end, an error, an interrupt
                return stop
        if not ran:  # nobody could move: the scheduler reports the deadlock (or the end)
            return self._advance()
        return Stop("step", self.current)

    def run_others(self, process: int | None = None, max_steps: int | None = None) -> Stop:
        """Run the other processes until ``process`` (default: ``focus``), which waits at a
        rendezvous, is released: the members it waits for first, one at a time."""
        p = self._check_process(self.focus if process is None else process)
        self._clear_interrupt()
        self.cursor = len(self.history)
        if self._live_status()[p][0] != "waiting":
            return Stop("step", self.current_of(p),
                        detail=f"{process_name(p, self.grid)} does not wait at a rendezvous")
        budget = self.run_budget if max_steps is None else max_steps
        for _ in range(budget):
            if self._interrupt.is_set():
                self._clear_interrupt()
                return Stop("interrupted", self.current)
            status = self._live_status()
            if status[p][0] != "waiting":
                self._mark()
                return Stop("step", self.current_of(p), detail=f"{process_name(p, self.grid)} can go on: "
                            "the others arrived")
            ps = self.process_states()[p]
            others = [q for q in range(self.n_processes) if q != p and status[q][0] == "ready"]
            first = [q for q in ps.waits_for if q in others]
            if not others:  # nobody can move: the scheduler reports the deadlock
                stop = self._advance()
            else:
                stop = self._advance_process((first or others)[0])
            if stop.reason not in ("step", "waiting", "finished"):
                self._mark()
                return stop
        self._mark()
        return Stop("budget", self.current)

    def step_over(self) -> Stop:
        """Forward to the next op instance at the current depth or shallower."""
        depth = self._depth()
        return self._run_until(lambda ev: ev.frame.depth <= depth)

    def finish(self) -> Stop:
        """Forward until the op whose region (or call) holds the cursor has finished."""
        depth = self._depth()
        if depth == 0:
            return self.run()
        return self._run_until(lambda ev: ev.frame.depth < depth)

    def run(self, max_steps: int | None = None) -> Stop:
        """Forward to the next breakpoint, the end, or ``max_steps`` events."""
        return self._run_until(lambda ev: False, max_steps)

    def run_to(self, op: str | None = None, line: int | None = None, name: str | None = None,
               max_steps: int | None = None) -> Stop:
        """Forward to the next op instance with this op name, source line or result name."""
        targets = [Breakpoint(k, v) for k, v in (("op", op), ("line", line), ("name", name)) if v is not None]
        if not targets:
            raise ExecutionError("run_to needs an op name, a line or a value name")
        return self._run_until(lambda ev: any(b.matches(ev) for b in targets), max_steps)

    def goto_line(self, line: int) -> Stop:
        """Show the op on source ``line``: the cursor moves back to its latest instance at or
        before the cursor, else forward (running as ``run_to(line=...)``, breakpoints apply)
        to its next one."""
        at_line = Breakpoint("line", line)
        for i in range(self.cursor - 1, -1, -1):  # one test per op instance of the history
            if at_line.matches(self.history[i]):
                self.cursor = i + 1
                return Stop("step", self.current)
        return self.run_to(line=line)

    def _depth(self) -> int:
        if self.n_processes > 1 and self.focus is not None:  # the focused process's depth
            ev = self._last_of(self._check_process(self.focus))
            return ev.frame.depth if ev is not None else 0
        return self.history[self.cursor - 1].frame.depth if self.cursor else 0

    def _clear_interrupt(self) -> None:
        """Forget an interrupt that arrived when nothing was running (or just too late)."""
        self._interrupt.clear()
        self.interp.interrupt.clear()

    def _run_until(self, done: Any, max_steps: int | None = None) -> Stop:
        self._clear_interrupt()
        budget = self.run_budget if max_steps is None else max_steps
        focus = self.focus if self.n_processes > 1 else None
        try:
            for _ in range(budget):
                if self._interrupt.is_set():
                    self._clear_interrupt()
                    return Stop("interrupted", self.current)
                stop = self._advance() if focus is None else self._advance_process(self._check_process(focus))
                if stop.reason != "step":
                    return stop
                ev = self.history[self.cursor - 1]
                if done(ev):
                    return stop
                for bp in self.breakpoints:
                    if bp.matches(ev):
                        return Stop("breakpoint", stop.event, bp)
            return Stop("budget", self.current)
        finally:
            self._mark()

    def _advance(self) -> Stop:
        if self.cursor < len(self.history):
            self.cursor += 1
            return Stop("step", self.current)
        if self.error is not None:
            return Stop("error", self.current, error=self.error)
        if self.results is not None:
            return Stop("end", self.current)
        if self._gen is None:
            raise ExecutionError(f"@{self.func.name} takes {len(self.func.args)} arguments: "
                                 "bind inputs first (bind(args), bind(seed=N) or bind(files=...))")
        try:
            ev = next(self._gen)
        except StopIteration as stop:
            if self.n_processes > 1:
                self.process_results = [list(r) for r in stop.value]
                self.results = self.process_results[0]
            else:
                self.results = list(stop.value)
            return Stop("end", self.current)
        except HloLabError as e:
            self.error = e
            return Stop("interrupted" if isinstance(e, RunInterrupted) else "error", self.current, error=e)
        except RecursionError:
            self.error = ExecutionError("recursion too deep while running the program")
            return Stop("error", self.current, error=self.error)
        if isinstance(ev, Idle):  # the focused process cannot run (see _advance_process)
            if ev.state == "arrived":
                return Stop("arrived", self.current)
            return self._idle_stop(ev.process, ev.state)
        stop_bp = None
        for bp in self.breakpoints:  # check on the real values, before any are dropped
            if bp.kind == "nonfinite" and bp.matches(ev):
                stop_bp = bp
        self._record(ev)
        self.cursor = len(self.history)
        if stop_bp is not None:
            return Stop("breakpoint", ev, stop_bp)
        return Stop("step", ev)

    # --- history and memory -------------------------------------------------
    def _record(self, ev: OpRun) -> None:
        self._by_process.setdefault(ev.frame.process, []).append(len(self.history))
        if self.n_processes > 1:  # who waits where when this event ran (process_states)
            self._log_status(len(self.history))
        self.history.append(ev)
        self._by_id[ev.id] = ev
        for i, d in enumerate(ev.source_defs):  # a collective reads other processes' values too
            if d is not None:
                self._consumers.setdefault(d, []).append((ev.id, "operand", i))
        for r, d in enumerate(ev.result_defs or []):
            if d is not None:
                self._consumers.setdefault(d, []).append((ev.id, "result", r))
        for d in ev.control_defs:
            self._consumers.setdefault(d, []).append((ev.id, "control", 0))
        for i, x in enumerate(ev.inputs):
            if isinstance(x, np.ndarray) and x.nbytes > self.store_limit:
                ev.inputs[i] = Dropped(x.shape, x.dtype)
        for k, x in enumerate(ev.outputs):
            if not isinstance(x, np.ndarray):
                continue
            if x.nbytes > self.store_limit:
                ev.outputs[k] = Dropped(x.shape, x.dtype)
            else:
                self._stored.append((ev, k, x.nbytes))
                self._stored_bytes += x.nbytes
        while self._stored_bytes > self.history_bytes and self._stored:
            old, k, nbytes = self._stored.popleft()
            x = old.outputs[k]
            if isinstance(x, np.ndarray):
                old.outputs[k] = Dropped(x.shape, x.dtype)
                for cid, kind, i in self._consumers.get((old.id, k), []):
                    c = self._by_id[cid]
                    if kind == "operand" and i < len(c.inputs) and c.inputs[i] is x:
                        c.inputs[i] = Dropped(x.shape, x.dtype)
            self._stored_bytes -= nbytes

    def process_of(self, d: Def) -> int:
        """The process a value binding belongs to (0 in single-process programs)."""
        if d[0] <= ARGS_NODE:
            return ARGS_NODE - d[0]
        return self.instance(d[0]).frame.process

    def value_of(self, d: Def) -> Any:
        """The value ``d`` names, recomputed if the history dropped it."""
        todo = [d]
        while todo:
            top = todo[-1]
            got = self._peek(top)
            if not isinstance(got, Dropped):
                todo.pop()
                continue
            ev = self._by_id[top[0]]
            if ev.result_defs is not None:  # a control-flow result is a body's return
                src = ev.result_defs[top[1]]
                if src is None:
                    raise ExecutionError(f"cannot recompute {ev.op.results[top[1]].name}")
                inner = self._peek(src)
                if isinstance(inner, Dropped):
                    todo.append(src)
                    continue
                self._remember(top, inner)
                todo.pop()
                continue
            missing = [od for x, od in zip(ev.inputs, ev.operand_defs)
                       if isinstance(x, Dropped) and isinstance(self._peek(od), Dropped)]
            if missing:
                todo.extend(missing)
                continue
            inputs = [self._peek(od) if isinstance(x, Dropped) else x
                      for x, od in zip(ev.inputs, ev.operand_defs)]
            opdef = lookup(ev.op.name)
            assert opdef is not None
            with np.errstate(all="ignore"):
                if opdef.steps:  # a stepped op with its own provenance (chlo.scan): re-run it
                    from hlolab.interp.engine import drain

                    runs = list(ev.call.region_runs)  # the recorded region runs stay as they were
                    out = drain(opdef.evaluate(ev.call, *inputs))
                    ev.call.region_runs[:] = runs
                else:
                    out = opdef.evaluate(ev.call, *inputs)
                outs = normalize_outputs(out, len(ev.op.results))
            for k, x in enumerate(outs):
                self._remember((ev.id, k), x)
            todo.pop()
        return self._peek(d)

    def _peek(self, d: Def | None) -> Any:
        if d is None:
            raise ExecutionError("internal error: a value without a definition was dropped")
        if d[0] == ARGS_NODE:
            return (self.args or [])[d[1]]
        if d[0] < ARGS_NODE:  # another process's entry arguments (a process grid run)
            return self.interp.process_args[ARGS_NODE - d[0]][d[1]]
        x = self._by_id[d[0]].outputs[d[1]]
        if isinstance(x, Dropped):
            cached = self._cache.get(d)
            if cached is not None:
                self._cache.move_to_end(d)
                return cached
        return x

    def _remember(self, d: Def, x: Any) -> None:
        self._cache[d] = x
        self._cache.move_to_end(d)
        while len(self._cache) > 16:
            self._cache.popitem(last=False)

    # --- addressing -----------------------------------------------------------
    def find(self, ref: str | ValueRef, iteration: int | None = None, process: int | None = None) -> Def:
        """The definition of ``[@func:]%name[#k]`` as of the cursor: the latest
        instance (in loop ``iteration`` when given); ``%argN`` names the entry's arguments.
        On a process grid, the instance of ``process`` (default: ``self.process``)."""
        r = ValueRef.parse(ref) if isinstance(ref, str) else ref
        r = resolve(self.module, self.func, r)  # an unqualified name is the entry function's
        proc = None
        if self.n_processes > 1:
            proc = self.process if process is None else process
            if not 0 <= proc < self.n_processes:
                raise ExecutionError(f"process {proc} is not in the {self.grid[0]}x{self.grid[1]} grid")
        if r.func == self.func.name and iteration is None:
            for i, a in enumerate(self.func.args):
                if a.name == r.name:
                    return (args_node(proc or 0), i)
        upto = self.history[self.cursor - 1].id if self.cursor else 0
        found: tuple[int, Def] | None = None  # (time it was made, def)
        seen_iterations: set[int | None] = set()
        for ev in reversed(self.history[:self.cursor]):
            if r.func is not None and ev.frame.func != r.func:
                continue
            if proc is not None and ev.frame.process != proc:
                continue
            for k, v in enumerate(ev.op.results):
                if v.name == r.name:
                    if iteration is None or ev.frame.iteration == iteration:
                        found = (ev.id, (ev.id, k))
                        break
                    seen_iterations.add(ev.frame.iteration)
            if found:
                break
        # block arguments (loop-carried values, function arguments of calls)
        for frame, v, d, t in reversed(self.interp.bindings):
            if t >= upto and self.cursor:  # bound after the cursor's op instance
                continue
            if d is None or v.name != r.name or (r.func is not None and frame.func != r.func):
                continue
            if proc is not None and frame.process != proc:
                continue
            if iteration is not None and frame.iteration != iteration:
                seen_iterations.add(frame.iteration)
                continue
            if found is None or t >= found[0]:
                found = (t, d)
            break
        if found is not None:
            return found[1]
        if seen_iterations:
            its = sorted(i for i in seen_iterations if i is not None)[:10]
            raise ExecutionError(f"{r} was computed in iterations {its}, not in iteration {iteration}")
        raise ExecutionError(f"{r} has not been computed yet (at op instance #{upto})")

    def value(self, ref: str, iteration: int | None = None) -> Any:
        return self.value_of(self.find(ref, iteration))

    def label(self, d: Def) -> str:
        """``%x``; on a grid of several processes every value carries its process, the spec's
        ``%x@(replica, partition)``, process 0's too, so a trace never leaves one ambiguous."""
        several = self.grid[0] * self.grid[1] > 1
        if d[0] <= ARGS_NODE:
            p = ARGS_NODE - d[0]
            name = self.func.args[d[1]].name
            return f"{name}@{divmod(p, self.grid[1])}" if several else name
        ev = self._by_id[d[0]]
        name = ev.op.results[d[1]].name
        if several or ev.frame.process:
            name += f"@{divmod(ev.frame.process, ev.frame.grid[1])}"
        return name if ev.frame.func == self.func.name else f"@{ev.frame.func}:{name}"

    # --- provenance -------------------------------------------------------------
    def sources(self, ref: str | Def, index: tuple[int, ...] | list[int] = (),
                iteration: int | None = None) -> program.Trace:
        """The argument and constant elements ``ref[index]`` depends on (backward trace)."""
        d = ref if isinstance(ref, tuple) else self.find(ref, iteration)
        return self._described(program.backward(_RunGraph(self), d, tuple(index)))

    def targets(self, ref: str | Def, index: tuple[int, ...] | list[int] = (),
                iteration: int | None = None) -> program.Trace:
        """Every value element ``ref[index]`` flows into so far (forward trace)."""
        d = ref if isinstance(ref, tuple) else self.find(ref, iteration)
        return self._described(program.forward(_RunGraph(self), d, tuple(index)))

    def _described(self, trace: program.Trace) -> program.Trace:
        from hlolab.trace.format import describe_query

        trace.what = describe_query(self, trace.query)
        return trace

    def result_defs(self) -> list[Def | None]:
        """The definitions of the entry function's results (once it has returned)."""
        return list(self.interp.return_defs) if self.results is not None else []


class _RunGraph:
    """The executed dataflow graph of a session, for hlolab.trace.program."""

    def __init__(self, session: Session):
        self.s = session
        self._prov: dict[int, Provenance | None] = {}

    def shape(self, d: Def) -> Shape | None:
        x = self.s._peek(d)
        if isinstance(x, Dropped):
            return tuple(int(n) for n in x.shape)
        return value_shape(x)

    def is_leaf(self, d: Def) -> bool:
        if d[0] <= ARGS_NODE:
            return True
        ev = self.s._by_id[d[0]]
        return ev.result_defs is None and not ev.op.operands

    def label(self, d: Def) -> str:
        return self.s.label(d)

    def hop(self, node: int, result: int, role: str) -> program.Hop:
        ev = self.s._by_id[node]
        return program.Hop(node, ev.op.name, self.s.label((node, result)), role,
                           ev.op.loc.line if ev.op.loc else None, ev.frame)

    def provenance(self, node: int) -> Provenance | None:
        if node not in self._prov:
            self._prov[node] = self.s.event(node).provenance()
        return self._prov[node]

    def back(self, d: Def, mask: np.ndarray) -> list[tuple[Def, str, np.ndarray]]:
        ev = self.s._by_id[d[0]]
        if ev.result_defs is not None:
            out = []
            src = ev.result_defs[d[1]]
            if src is not None:
                out.append((src, "copy", mask))
            for c in ev.control_defs:
                out.append((c, "control", self._full(c)))
            return out
        prov = self.provenance(d[0])
        if prov is None:
            return [(od, "combine", self._full(od)) for od in ev.operand_defs
                    if od is not None and self.shape(od) is not None]
        out = []
        defs = ev.source_defs
        for (i, role), m in prov.back(d[1], mask).items():
            od = defs[i] if i is not None and i < len(defs) else None
            if od is not None:
                out.append((od, role, m))
        return out

    def fwd(self, d: Def, mask: np.ndarray) -> list[tuple[Def, str, np.ndarray]]:
        out: list[tuple[Def, str, np.ndarray]] = []
        upto = self.s.history[self.s.cursor - 1].id if self.s.cursor else 0
        for node, kind, i in self.s._consumers.get(d, []):
            if node > upto:  # not run yet as of the cursor
                continue
            ev = self.s._by_id[node]
            if kind == "result":
                out.append(((node, i), "copy", mask))
            elif kind == "control":
                out += [((node, r), "control", self._full((node, r))) for r in range(len(ev.outputs))
                        if self.shape((node, r)) is not None]
            else:
                prov = self.provenance(node)
                if prov is None:
                    out += [((node, r), "combine", self._full((node, r))) for r in range(len(ev.outputs))
                            if self.shape((node, r)) is not None]
                    continue
                for (r, role), m in prov.fwd(i, mask).items():
                    out.append(((node, r), role, m))
        return out

    def _full(self, d: Def) -> np.ndarray:
        shape = self.shape(d)
        return np.ones(shape if shape is not None else (), dtype=bool)


@dataclass
class ElementSource:
    """One per-op source of an explained element, with the value it is an element of."""

    source: Any  # hlolab.trace.provenance.Source
    label: str | None  # the operand value's name; None for an implicit value
    value: Def | None
    producer: str  # how that value was made: "stablehlo.pad (line 4)", "argument of @main"


@dataclass
class ElementExplanation:
    """One element of a program value: the op instance that made it, that op's
    explain(), and its per-op sources, each linked to the value to explain next."""

    label: str
    index: tuple[int, ...]
    value: Def
    event: OpRun | None  # None for an entry argument
    explanation: Any  # hlolab.trace.explain.Explanation or None
    sources: list[ElementSource]
    element: Any = None


def _producer(session: Session, d: Def | None) -> str:
    if d is None:
        return "implicit"
    if d[0] <= ARGS_NODE:
        return f"argument of @{session.func.name}"
    ev = session._by_id[d[0]]
    line = f" (line {ev.op.loc.line})" if ev.op.loc else ""
    it = f", iteration {ev.frame.iteration}" if ev.frame.iteration is not None else ""
    return f"{ev.op.name}{line}{it}"


def explain_element(session: Session, ref: str | Def, index: tuple[int, ...] | list[int] = (),
                    iteration: int | None = None) -> ElementExplanation:
    """Explain ``ref[index]`` in the program run by ``session``."""
    d = ref if isinstance(ref, tuple) else session.find(ref, iteration)
    label = session.label(d)
    value = session.value_of(d)
    idx = check_index(value_shape(value), tuple(index), f"{label} index")
    element = value[idx] if isinstance(value, np.ndarray) else None
    if d[0] <= ARGS_NODE:
        return ElementExplanation(label, idx, d, None, None, [], element)
    ev = session.event(d[0])
    expl = ev.explain(d[1], idx)
    sources: list[ElementSource] = []
    if ev.result_defs is not None:  # control flow: the value a body or branch returned
        src = ev.result_defs[d[1]]
        if src is not None:
            sources.append(ElementSource(Source(None, idx, "copy"), session.label(src), src,
                                         _producer(session, src)))
    else:
        prov = ev.provenance()
        if prov is not None:
            defs = ev.source_defs
            for s in prov.sources(d[1], idx):
                od = defs[s.operand] if s.operand is not None and s.operand < len(defs) else None
                # a collective's source is another process's value: name it by its definition
                name = session.label(od) if od is not None and defs is not ev.operand_defs else (
                    ev.op.operands[s.operand].name if s.operand is not None and
                    s.operand < len(ev.op.operands) else None)
                sources.append(ElementSource(s, name, od, _producer(session, od)))
    return ElementExplanation(label, idx, d, ev, expl, sources, element)
