"""Simulated processes: a StableHLO process grid run in one Python process.

The spec's parallel execution ("Execution" / "Parallel execution"): ``num_replicas x
num_partitions`` processes, process ``(replica_id, partition_id)`` numbered
``replica_id * num_partitions + partition_id`` here (the spec's flattened id). Each process
is one stepping-engine generator (``Interpreter.process_steps``). A collective op's
evaluate yields one ``Rendezvous`` (its process, its op, the group key and the process
group it computed, its operands) and receives an ``Arrival`` back. The ``Scheduler``
runs the processes round-robin, one event each in turn, parks a process at its
rendezvous, and when every member of a group has arrived computes all their results at
once (the op's ``compute``, vectorized over the gathered operands) and resumes them.

``send``/``recv`` meet by channel id: the n-th send on a channel pairs with the n-th
recv on it (FIFO), whichever process runs them.

Front ends choose who runs (``SchedulePolicy``): by default round-robin; with
``policy.focus = p`` only process ``p`` runs, and when it cannot (it waits at a rendezvous
or has finished while others still run) the scheduler yields an ``Idle`` instead of
running another process, so a stepper never silently runs the others.

No process can move but some wait: the run ends with an ``ExecutionError`` naming every
waiting process, its op (with source location) and the group it waits for, never a hang.
Two processes each waiting for the other at different collectives (a mismatched group
or op) fail at once, naming both.

This module imports no engine code (the engine imports ``Rendezvous`` from here).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Generator, Hashable
from dataclasses import dataclass, field
from typing import Any

from hlolab.errors import ExecutionError, UnsupportedError

Grid = tuple[int, int]  # (num_replicas, num_partitions)


def process_name(p: int, grid: Grid) -> str:
    """``process 3 (replica 1, partition 1)``; a single-partition grid says the replica only."""
    r, q = divmod(p, grid[1])
    return f"process {p} (replica {r}, partition {q})"


def _where(op: Any) -> str:
    loc = getattr(op, "loc", None)
    if loc is None:
        return op.name
    return f"{op.name} at {loc.file}:{loc.line}:{loc.col}" if getattr(loc, "file", None) else \
        f"{op.name} at line {loc.line}"


@dataclass(eq=False)
class Rendezvous:
    """A process's request to meet others at a collective op (yielded by its evaluate).

    ``key`` is what every member must agree on (op name, channel id, the process group);
    ``group`` the processes that must arrive (in the group's order). ``compute`` gets the
    members' requests in group order and returns one result per member. A ``send`` or
    ``recv`` (``kind``) meets its peer by ``channel``; its group is unknown in advance.
    """

    process: int
    op: Any  # hlolab.ir.module.Op
    key: Hashable
    group: tuple[int, ...]
    operands: list[Any]
    compute: Callable[[list[Rendezvous]], list[Any]] | None
    grid: Grid = (1, 1)
    ctx: Any = None  # the op's call (regions, attributes) for compute
    operand_defs: list[Any] = field(default_factory=list)  # where the operands came from
    kind: str = "group"  # "group" | "send" | "recv"
    channel: int = 0

    def describe(self) -> str:
        if self.kind in ("send", "recv"):
            return (f"{process_name(self.process, self.grid)} waits at {_where(self.op)} for a "
                    f"{'recv' if self.kind == 'send' else 'send'} on channel {self.channel}")
        members = ", ".join(str(divmod(q, self.grid[1])) for q in self.group)
        return (f"{process_name(self.process, self.grid)} waits at {_where(self.op)} for process group "
                f"[{members}]")

    def alone(self) -> Arrival:
        """Complete within this process alone (a run without a scheduler): a group of one."""
        if self.kind in ("send", "recv"):
            raise UnsupportedError(
                f"{self.op.name} on channel {self.channel} has no peer process: a run of one process "
                "cannot send or receive (host transfers are not supported); run the program on a "
                "process grid (interpreter.run_parallel, --replicas/--partitions) with its peer",
                self.op.loc)
        if self.group != (self.process,):
            raise ExecutionError("deadlock: " + self.describe() + ", but only this process runs "
                                 "(run it on a process grid: --replicas R --partitions P, or "
                                 "mhlo.num_replicas / mhlo.num_partitions)", self.op.loc)
        assert self.compute is not None
        return Arrival(self.compute([self])[0], [self])


@dataclass
class SchedulePolicy:
    """Who the scheduler runs next, set by a front end between events: ``focus`` None is
    round-robin; a process id runs only that process (``Idle`` when it cannot run)."""

    focus: int | None = None


@dataclass(frozen=True)
class Idle:
    """Yielded instead of an event when the focused process cannot run: it waits at a
    rendezvous (``state`` "waiting") or has finished while others still run; and after it
    arrives at a rendezvous (``state`` "arrived": it may have completed the group)."""

    process: int
    state: str


@dataclass
class Arrival:
    """What a rendezvous returns to each member: its result and every member's request
    (group order; for send/recv: [send, recv])."""

    result: Any
    members: list[Rendezvous]


class Scheduler:
    """Runs one engine generator per process, round-robin, with rendezvous for collectives.

    ``run()`` is a generator: it yields every process's events (their frames name the
    process) and returns the processes' results in process order.
    """

    def __init__(self, gens: list[Generator[Any, Any, Any]], grid: Grid,
                 policy: SchedulePolicy | None = None):
        if len(gens) != grid[0] * grid[1]:
            raise ExecutionError(f"{len(gens)} programs for a {grid[0]}x{grid[1]} process grid")
        self.gens = gens
        self.grid = grid
        self.ready: deque[int] = deque(range(len(gens)))
        self.send_value: dict[int, Any] = {}
        self.parked: dict[int, Rendezvous] = {}
        self.waiting: dict[Hashable, dict[int, Rendezvous]] = {}
        self.channels: dict[int, tuple[deque[Rendezvous], deque[Rendezvous]]] = {}
        self.done: dict[int, Any] = {}
        self.current: int | None = None  # the process last resumed (for front ends)
        self.policy = policy or SchedulePolicy()

    def status(self) -> list[tuple[str, Rendezvous | None]]:
        """Per process, for front ends: ``("ready" | "waiting" | "finished", its rendezvous)``;
        a ready process released from a rendezvous (its collective's result not taken yet)
        comes with that rendezvous."""
        out: list[tuple[str, Rendezvous | None]] = []
        for p in range(len(self.gens)):
            if p in self.done:
                out.append(("finished", None))
            elif p in self.parked:
                out.append(("waiting", self.parked[p]))
            else:
                arrival = self.send_value.get(p)
                own = [m for m in arrival.members if m.process == p] if isinstance(arrival, Arrival) else []
                out.append(("ready", own[0] if own else None))
        return out

    def run(self) -> Generator[Any, None, list[Any]]:
        while len(self.done) < len(self.gens):
            if not self.ready:
                raise self._deadlock()
            focus = self.policy.focus
            if focus is None:
                p = self.ready.popleft()
            elif focus in self.ready:
                self.ready.remove(focus)
                p = focus
            else:  # the focused process cannot run: say so, do not run another one
                yield Idle(focus, "finished" if focus in self.done else "waiting")
                continue
            self.current = p
            try:
                item = self.gens[p].send(self.send_value.pop(p, None))
            except StopIteration as stop:
                self.done[p] = stop.value
                self._check_waiting_for(p)
                continue
            if isinstance(item, Rendezvous):
                if item.process != p:
                    raise ExecutionError(f"internal error: process {p} yielded a rendezvous of "
                                         f"process {item.process}", item.op.loc)
                self._arrive(item)
                if self.policy.focus is not None:  # a front end steps it: it has arrived
                    yield Idle(p, "arrived")
            else:
                self.ready.append(p)
                yield item
        return [self.done[p] for p in range(len(self.gens))]

    # --- rendezvous ----------------------------------------------------------------------
    def _arrive(self, rv: Rendezvous) -> None:
        p = rv.process
        self.parked[p] = rv
        if rv.kind in ("send", "recv"):
            sends, recvs = self.channels.setdefault(rv.channel, (deque(), deque()))
            (sends if rv.kind == "send" else recvs).append(rv)
            if sends and recvs:
                s, r = sends.popleft(), recvs.popleft()
                self._resume(s, Arrival(None, [s, r]))
                self._resume(r, Arrival(list(s.operands), [s, r]))  # the send's operands
            return
        if p not in rv.group:
            raise ExecutionError(f"internal error: {process_name(p, self.grid)} is not in its own "
                                 f"process group {rv.group}", rv.op.loc)
        for q in rv.group:
            if not 0 <= q < len(self.gens):
                raise ExecutionError(f"{_where(rv.op)}: process group {rv.group} names process {q}, "
                                     f"outside the {self.grid[0]}x{self.grid[1]} grid", rv.op.loc)
            other = self.parked.get(q)
            if q != p and other is not None and other.key != rv.key and p in other.group \
                    and other.kind == "group":
                raise ExecutionError(
                    "mismatched collectives, the processes wait for each other at different ones: "
                    f"{rv.describe()}; {other.describe()}", rv.op.loc)
            if q in self.done:
                raise ExecutionError(f"deadlock: {rv.describe()}, but {process_name(q, self.grid)} "
                                     "has already finished", rv.op.loc)
        arrived = self.waiting.setdefault(rv.key, {})
        arrived[p] = rv
        if len(arrived) == len(rv.group):
            del self.waiting[rv.key]
            members = [arrived[q] for q in rv.group]
            assert rv.compute is not None
            results = rv.compute(members)
            for m, result in sorted(zip(members, results), key=lambda mr: mr[0].process):
                self._resume(m, Arrival(result, members))

    def _resume(self, rv: Rendezvous, arrival: Arrival) -> None:
        del self.parked[rv.process]
        self.send_value[rv.process] = arrival
        self.ready.append(rv.process)

    def _check_waiting_for(self, p: int) -> None:
        for rv in self.parked.values():
            if rv.kind == "group" and p in rv.group:
                raise ExecutionError(f"deadlock: {rv.describe()}, but {process_name(p, self.grid)} "
                                     "has finished without arriving", rv.op.loc)

    def _deadlock(self) -> ExecutionError:
        lines = []
        for p in sorted(self.parked):
            rv = self.parked[p]
            line = "  " + rv.describe()
            if rv.kind == "group":
                missing = [q for q in rv.group if q not in self.waiting.get(rv.key, {})]
                why = []
                for q in missing:
                    other = self.parked.get(q)
                    if other is None:
                        why.append(f"{process_name(q, self.grid)} has finished")
                    else:
                        why.append(f"{process_name(q, self.grid)} waits at {_where(other.op)}")
                line += ": " + "; ".join(why)
            lines.append(line)
        first = next(iter(self.parked.values()))
        return ExecutionError("deadlock, no process can go on:\n" + "\n".join(lines), first.op.loc)


# --- process groups (the spec's "Collective ops" strategies) ------------------------------

def cross_replica(groups: list[list[int]], grid: Grid) -> list[tuple[int, ...]]:
    """Each replica group times each partition id (flattened process ids)."""
    _, n_part = grid
    return [tuple(r * n_part + q for r in g) for g in groups for q in range(n_part)]


def cross_partition(groups: list[list[int]], grid: Grid) -> list[tuple[int, ...]]:
    """Each partition group times each replica id."""
    n_rep, n_part = grid
    return [tuple(r * n_part + q for q in g) for g in groups for r in range(n_rep)]


def cross_replica_and_partition(groups: list[list[int]], grid: Grid) -> list[tuple[int, ...]]:
    """Each replica group with every partition: partition-major, replicas within."""
    _, n_part = grid
    return [tuple(r * n_part + q for q in range(n_part) for r in g) for g in groups]


def flattened_ids(groups: list[list[int]], grid: Grid) -> list[tuple[int, ...]]:
    """The groups as flattened ids ``replica_id * num_partitions + partition_id``."""
    return [tuple(g) for g in groups]


STRATEGIES: dict[str, Callable[[list[list[int]], Grid], list[tuple[int, ...]]]] = {
    "cross_replica": cross_replica,
    "cross_partition": cross_partition,
    "cross_replica_and_partition": cross_replica_and_partition,
    "flattened_ids": flattened_ids,
}


def group_of(process: int, groups: list[tuple[int, ...]]) -> tuple[int, ...] | None:
    """The process group holding ``process`` (None when none does)."""
    for g in groups:
        if process in g:
            return g
    return None


def run_grid(interp: Any, func: Any, args: list[list[Any]], grid: Grid,
             policy: SchedulePolicy | None = None) -> Generator[Any, None, list[Any]]:
    """Run ``func`` as every process of ``grid`` (process ``p`` on ``args[p]``) on one
    interpreter: yields every process's events, returns each process's results. A
    ``policy`` lets a front end choose who runs (it may then yield ``Idle``)."""
    from hlolab.interp.engine import check_args

    n = grid[0] * grid[1]
    if len(args) != n:
        raise ExecutionError(f"{len(args)} argument lists for {n} processes")
    for a in args:
        check_args(func, a)
    interp.start()
    interp.args = args[0]
    interp.process_args = list(args)
    interp.process_return_defs = [interp.return_defs] + [[] for _ in range(n - 1)]
    gens = [interp.process_steps(func, args[p], p, grid, interp.process_return_defs[p])
            for p in range(n)]
    scheduler = Scheduler(gens, grid, policy)
    interp.scheduler = scheduler  # front ends read who waits where (Scheduler.status)
    return (yield from scheduler.run())


def module_grid(module: Any) -> Grid:
    """The grid a module declares (``mhlo.num_replicas`` / ``mhlo.num_partitions``, as jax
    prints sharded programs), else 1x1."""
    def read(key: str) -> int:
        a = module.attributes.get(key)
        if a is None:
            return 1
        v = getattr(a, "value", None)
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ExecutionError(f"module attribute {key} must be a positive integer, got {a}")
        return v

    return read("mhlo.num_replicas"), read("mhlo.num_partitions")


def grid_args(func: Any, given: list[Any], grid: Grid, seed: int | None,
              budget: int | None = None) -> list[list[Any]]:
    """Each process's entry arguments. A given argument of the entry's type goes to every
    process; one with an extra leading dim of size ``num_replicas * num_partitions`` is
    split across them (process ``p`` gets ``arg[p]``). Arguments not given are random,
    process ``p`` drawing from ``seed + p``; a global-view sharded program (``global_view``)
    gets the same random arguments (from ``seed``) on every process."""
    import numpy as np

    from hlolab.interp.inputs import random_args
    from hlolab.limits import ELEMENT_BUDGET
    from hlolab.types import TensorType

    n = grid[0] * grid[1]
    if len(given) > len(func.args):
        raise ExecutionError(f"@{func.name} takes {len(func.args)} arguments, got {len(given)}")
    per: list[list[Any]] = [[] for _ in range(n)]
    for i, a in enumerate(given):
        t = func.args[i].type
        if a is None:
            for p in range(n):
                per[p].append(None)
            continue
        x = np.asarray(a)
        shape = t.static_shape() if isinstance(t, TensorType) and t.is_static else None
        if shape is not None and x.shape == (n,) + shape:
            for p in range(n):
                per[p].append(np.require(x[p], requirements="C"))  # rank 0 stays rank 0
        elif shape is None or x.shape == shape:
            for p in range(n):
                per[p].append(x)
        else:
            raise ExecutionError(
                f"argument #{i} of @{func.name} must be {t} (the same for every process) or have a "
                f"leading process dim of {n} ({list((n,) + shape)}: one per process of the "
                f"{grid[0]}x{grid[1]} grid), got shape {list(x.shape)}")
    if global_view(func):  # one global program: every process gets the same (random) arguments
        shared = random_args(func, per[0], seed, ELEMENT_BUDGET if budget is None else budget)
        return [list(shared) for _ in range(n)]
    return [random_args(func, per[p], None if seed is None else seed + p,
                        ELEMENT_BUDGET if budget is None else budget) for p in range(n)]


def same_results(per_process: list[list[Any]]) -> bool:
    """Whether every process returned the same values (bit for bit, NaNs alike)."""
    import numpy as np

    first = per_process[0]
    for outs in per_process[1:]:
        for a, b in zip(first, outs, strict=True):
            if not isinstance(a, np.ndarray) or not isinstance(b, np.ndarray):
                if a is not b and a != b:
                    return False
            elif a.dtype != b.dtype or a.shape != b.shape or a.tobytes() != b.tobytes():
                return False
    return True


def global_view(func: Any) -> bool:
    """Whether ``func`` is a global-view sharded program (what ``jax.jit`` prints for a mesh:
    ``sdy.sharding`` / ``mhlo.sharding`` on its arguments or results, or an
    ``sdy.manual_computation`` / ``@SPMDFullToShardShape`` in it), whose arguments are the
    same global values on every process."""
    keys = ("sdy.sharding", "mhlo.sharding")
    if any(k in d for d in list(func.arg_attrs) + list(func.result_attrs) for k in keys):
        return True
    for op in func.walk():
        if op.name == "sdy.manual_computation" or (
                op.name == "stablehlo.custom_call"
                and getattr(op.attributes.get("call_target_name"), "value", "") == "SPMDFullToShardShape"):
            return True
    return False
