"""The interpreter, written as a stepping engine.

``Interpreter.steps(func, args)`` is a generator: it yields one ``OpRun``
event per executed op (control-flow bodies op by op, with a frame saying
where) and returns the function's results. ``run`` drains it. Per-element
regions (reduce bodies, comparators, ...) run as one batched application
through ``OpCall.run_region`` and are not stepped.
"""

from __future__ import annotations

import threading
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hlolab.errors import ExecutionError, HloLabError, NotImplementedOpError, RunInterrupted, UnsupportedError
from hlolab.interp.processes import Rendezvous
from hlolab.interp.refine import refine, settle
from hlolab.interp.single import normalize_outputs
from hlolab.ir.module import Block, Func, Module, Op, Region
from hlolab.limits import ELEMENT_BUDGET as DEFAULT_ELEMENT_BUDGET
from hlolab.limits import MAX_CALL_DEPTH as DEFAULT_MAX_CALL_DEPTH
from hlolab.limits import STEP_BUDGET as DEFAULT_STEP_BUDGET
from hlolab.ops.common import shapes_compatible
from hlolab.ops.registry import OpCall, Token, lookup
from hlolab.ops.verify import verify_module
from hlolab.types import TensorType, TokenType, TupleType, Type

RETURN_OPS = frozenset({"func.return", "return", "stablehlo.return", "sdy.return"})
# calls that may run inside a per-element region: their callee runs batched too
BATCHABLE_CALLS = frozenset({"func.call", "call", "stablehlo.composite"})


# for a stepper (Session): executed ops without a yielded event after which a pending
# interrupt stops the run inside the interpreter. A run that yields events is stopped by its
# stepper between two events (and can go on); only a loop that yields none (an empty-bodied
# while) needs the hard stop, which ends the run.
STEPPER_INTERRUPT_GRACE = 1000

# Where a value came from: (node id, result number). Node ``args_node(p)`` holds
# process p's entry arguments (``ARGS_NODE`` for process 0: 0, -1, -2, ...); every
# other node is an executed op instance (``OpRun.id`` > 0, counted across
# processes), whose frame carries its process. So a Def names its process too
# (``Session.process_of``). Region and function arguments are not nodes: they take
# the definition of the value bound to them, so dataflow links skip the aliasing.
Def = tuple[int, int]


def args_node(process: int = 0) -> int:
    """The node holding process ``process``'s entry arguments."""
    return -process


ARGS_NODE = args_node(0)


@dataclass(frozen=True)
class Frame:
    """Where an op instance ran: function, op path, region and loop iteration.

    ``depth`` counts the regions and calls the op is nested in (0: the entry
    function's body); ``parent`` links to the frame of the enclosing op (or
    the calling op), so the chain is the call stack.
    """

    func: str
    path: tuple[int, ...] = ()  # op indices from the function body down
    region: int | None = None  # region number of the enclosing op, when nested
    iteration: int | None = None  # loop iteration of the innermost while
    parent: Frame | None = field(default=None, compare=False, repr=False)
    depth: int = field(default=0, compare=False)
    process: int = 0  # the simulated process running it (0: single-process programs)
    # the process grid (num_replicas, num_partitions) it runs in; process = replica * P + partition
    grid: tuple[int, int] = (1, 1)

    def child(self, path_index: int, region: int | None = None,
              iteration: int | None = None) -> Frame:
        return Frame(self.func, self.path + (path_index,), region,
                     iteration if iteration is not None else self.iteration, self, self.depth, self.process,
                     self.grid)

    def into(self, region: int, iteration: int | None = None) -> Frame:
        """The frame of region ``region`` of the op at this frame."""
        return Frame(self.func, self.path, region, iteration if iteration is not None else self.iteration,
                     self, self.depth + 1, self.process, self.grid)

    def call(self, func: str) -> Frame:
        """The frame of the body of ``func`` called by the op at this frame."""
        return Frame(func, (), None, None, self, self.depth + 1, self.process, self.grid)

    @property
    def replica_id(self) -> int:
        return self.process // self.grid[1]

    @property
    def partition_id(self) -> int:
        return self.process % self.grid[1]

    def describe(self) -> str:
        on_grid = self.process or self.grid != (1, 1)
        s = f"process {self.process}: @{self.func}" if on_grid else f"@{self.func}"
        if self.path:
            s += " op " + ".".join(str(p) for p in self.path)
        if self.iteration is not None:
            s += f" iteration {self.iteration}"
        return s


@dataclass
class RegionRun:
    """One stepped execution of a region (or called function) by a control-flow op."""

    region: int  # region number; -1 for a called function's body
    iteration: int | None
    arg_defs: list[Def | None]
    return_defs: list[Def | None]


@dataclass
class OpRun:
    """One executed op instance: the event the stepper, TUI and tracer consume.

    ``operand_defs[i]`` says which earlier node computed operand ``i``.
    Control-flow ops (while, if, case, call) also say where their results come
    from: ``result_defs[r]`` is the value result ``r`` takes (a body's last
    return, a branch's return) and ``control_defs`` the values that decided
    which (a while's conditions, an if's predicate). ``regions`` lists the
    region executions in order.
    """

    id: int
    op: Op
    inputs: list[Any]
    outputs: list[Any]
    frame: Frame
    call: OpCall
    operand_defs: list[Def | None] = field(default_factory=list)
    result_defs: list[Def | None] | None = None
    control_defs: list[Def] = field(default_factory=list)
    regions: list[RegionRun] = field(default_factory=list)

    @property
    def source_defs(self) -> list[Def | None]:
        """What the operand numbers of the op's provenance name: ``operand_defs``, or for a
        collective the operands of every member of its process group (in group order)."""
        peers = getattr(self.call, "peer_defs", None)
        return peers if peers is not None else self.operand_defs

    def provenance(self) -> Any:
        """The op's per-instance provenance (None where the op defines none)."""
        opdef = lookup(self.op.name)
        if opdef is None or opdef.provenance is None:
            return None
        return opdef.provenance(self.call, self.inputs, self.outputs)

    def explain(self, result: int, index: tuple[int, ...]) -> Any:
        """The op's explanation of element ``index`` of result ``result`` (None where the
        op defines none)."""
        opdef = lookup(self.op.name)
        if opdef is None or opdef.explain is None:
            return None
        return opdef.explain(self.call, self.inputs, self.outputs, result, tuple(index))


class InterpCall(OpCall):
    """OpCall with access to the running interpreter (regions, calls)."""

    def __init__(self, op: Op, interp: Interpreter, env: dict[Any, Any], frame: Frame,
                 batch_shape: tuple[int, ...] = (), denv: dict[Any, Def] | None = None,
                 operand_defs: list[Def | None] | None = None):
        super().__init__(op, interp.state)
        self.interp = interp
        self.env = env
        self.frame = frame
        self.batch_shape = batch_shape
        self.denv = denv  # value -> Def, None inside batched (per-element) regions
        self.operand_defs: list[Def | None] = operand_defs or [None] * len(op.operands)
        self.region_runs: list[RegionRun] = []
        # set by control-flow evaluators: where each result comes from, what decided it
        self.result_defs: list[Def | None] | None = None
        self.control_defs: list[Def] = []

    @property
    def last_defs(self) -> list[Def | None]:
        """The definitions of the values the last stepped region returned."""
        return self.region_runs[-1].return_defs if self.region_runs else []

    def run_region(self, index: int, args: list[Any]) -> list[Any]:
        """Apply region ``index`` once to batched args; not stepped.

        Each arg has the shape ``batch + type`` of its block argument, with the
        same leading ``batch`` dims for all: one call evaluates the region for
        every element (every pair of a comparator, every reduction step).
        Only ops marked ``elementwise`` may run batched.
        """
        region = self.op.regions[index]
        batch: tuple[int, ...] = ()
        block_args = region.blocks[0].args if region.blocks else []
        if args and block_args and isinstance(block_args[0].type, TensorType):
            a0 = np.asarray(args[0])
            batch = a0.shape[:a0.ndim - block_args[0].type.rank]
        gen = self.interp._exec_region(region, args, self.env, self.frame.into(index),
                                       quiet=True, batch=batch)
        return drain(gen)

    def step_region(self, index: int, args: list[Any], iteration: int | None = None,
                    arg_defs: list[Def | None] | None = None) -> Generator[OpRun, None, list[Any]]:
        """Run region ``index`` yielding one event per op; returns its results.

        ``arg_defs`` are the definitions of ``args`` (a while passes the
        previous iteration's ``last_defs``); the region's return definitions
        are then in ``last_defs``.
        """
        frame = self.frame.into(index, iteration)
        defs = list(arg_defs) if arg_defs is not None else [None] * len(args)
        run = RegionRun(index, iteration, defs, [])
        out = yield from self.interp._exec_region(self.op.regions[index], args, self.env, frame,
                                                  denv=self.denv, arg_defs=defs, returns=run.return_defs)
        self.region_runs.append(run)
        return out

    def call_function(self, name: str, args: list[Any]) -> Generator[OpRun, None, list[Any]]:
        if self.batch_shape:
            # inside a per-element region (a reduce body that calls a function): the
            # callee runs batched like the region itself, quietly, and must be element-wise
            return self.interp._call_batched(name, args, self.op, self.frame, self.batch_shape)
        run = RegionRun(-1, None, list(self.operand_defs), [])
        out = yield from self.interp._call(name, args, self.op, self.frame, run.arg_defs, run.return_defs)
        self.region_runs.append(run)
        return out

    def count_step(self) -> None:
        self.interp._count_step(self.op)


def drain(gen: Generator[Any, None, Any]) -> Any:
    """Run a generator to its end and return its return value. A collective it meets must
    complete within the running process alone (a group of one; see ``Rendezvous.alone``)."""
    events = solo(gen)
    while True:
        try:
            next(events)
        except StopIteration as stop:
            return stop.value


def solo(gen: Generator[Any, Any, Any]) -> Generator[OpRun, None, Any]:
    """The events of one process's run, its collectives completed alone (a 1x1 grid)."""
    value = None
    while True:
        try:
            item = gen.send(value)
        except StopIteration as stop:
            return stop.value
        value = None
        if isinstance(item, Rendezvous):
            value = item.alone()
        else:
            yield item


class Interpreter:
    """Evaluates the functions of one module."""

    def __init__(self, module: Module, *, element_budget: int = DEFAULT_ELEMENT_BUDGET,
                 step_budget: int = DEFAULT_STEP_BUDGET,
                 max_call_depth: int = DEFAULT_MAX_CALL_DEPTH):
        self.module = module
        self.element_budget = element_budget
        self.step_budget = step_budget
        self.max_call_depth = max_call_depth
        self.state: dict[str, Any] = {"element_budget": element_budget}  # read by ops (OpCall)
        self._next_id = 0
        self._steps = 0
        self._depth: dict[int, int] = {}  # call depth per process
        self.args: list[Any] = []  # the entry arguments of the current run (node ARGS_NODE)
        # per process, its entry arguments (node args_node(p)); a single-process run: [args]
        self.process_args: list[list[Any]] = []
        # per process, what its entry function returned (a grid run; see hlolab.interp.processes)
        self.process_return_defs: list[list[Def | None]] = []
        self.scheduler: Any = None  # the Scheduler of a grid run (who waits at which rendezvous)
        # region/function argument bindings (frame, value, def), for addressing block
        # arguments by name; off unless a stepper asks for it
        self.record_bindings = False
        # (frame, value, def, id of the last op instance finished before the binding)
        self.bindings: list[tuple[Frame, Any, Def | None, int]] = []
        self.return_defs: list[Def | None] = []  # what the entry function returned
        self._captures: dict[int, dict[Any, None]] = {}
        # set from another thread to stop a run (RunInterrupted) before the next op; honoured
        # only once ``interrupt_grace`` ops have run without a yielded event, so a stepper
        # that stops between events itself (grace > 0) is not cut short while events flow,
        # and a loop that yields none (an empty-bodied while) still stops
        self.interrupt = threading.Event()
        self.interrupt_grace = 0
        self._since_yield = 0  # ops executed since the last yielded event
        # the whole module is verified before anything runs (untaken branches and
        # uncalled functions too); a module verifies once however often it runs
        verify_module(module)

    # --- public API -------------------------------------------------------
    def run(self, func: str | None = None, args: list[Any] | None = None) -> list[Any]:
        return drain(self.steps(func, args))

    def steps(self, func: str | None = None,
              args: list[Any] | None = None) -> Generator[OpRun, None, list[Any]]:
        f = self.entry(func)
        # a numpy scalar (np.float32(2)) is the rank-0 array it stands for
        args = [np.asarray(a) if isinstance(a, np.generic) else a for a in args or []]
        check_args(f, args)
        self.start()
        self.args = args
        self.process_args = [args]
        self.process_return_defs = [self.return_defs]
        return (yield from solo(self.process_steps(f, args)))

    def start(self) -> None:
        """Reset the per-run state: op-instance ids count from 1 in each run (nodes <= 0 are
        the processes' entry arguments)."""
        self._next_id = ARGS_NODE
        self._steps = 0
        self._since_yield = 0
        self._depth = {}
        self.scheduler = None
        self.args = []
        self.process_args = []
        self.process_return_defs = []
        self.bindings = []
        self.return_defs = []

    def process_steps(self, f: Func, args: list[Any], process: int = 0, grid: tuple[int, int] = (1, 1),
                      returns: list[Def | None] | None = None) -> Generator[Any, Any, list[Any]]:
        """Run ``f`` as process ``process`` of ``grid`` on its entry arguments (node
        ``args_node(process)``). Yields events and ``Rendezvous`` requests (collectives), which
        a scheduler (``hlolab.interp.processes``) answers."""
        node = args_node(process)
        return (yield from self._invoke(f, args, None, Frame(f.name, process=process, grid=grid),
                                        [(node, i) for i in range(len(args))],
                                        self.return_defs if returns is None else returns, top=True))

    def events(self, func: str | None = None, args: list[Any] | None = None) -> Iterator[OpRun]:
        """The events of a run, without the return value."""
        yield from self.steps(func, args)

    def entry(self, name: str | None = None) -> Func:
        """``@name``, else ``@main``, else the module's only function."""
        if name is not None:
            f = self.module.func(name.lstrip("@"))
            if f is None:
                names = ", ".join("@" + g.name for g in self.module.funcs) or "none"
                raise ExecutionError(f"no function @{name.lstrip('@')} in the module (functions: {names})")
            return f
        f = self.module.func("main")
        if f is not None:
            return f
        defined = [g for g in self.module.funcs if g.body is not None]
        if len(defined) == 1:
            return defined[0]
        names = ", ".join("@" + g.name for g in defined) or "none"
        raise ExecutionError(f"no @main and {len(defined)} functions ({names}): pick one with --entry")

    # --- execution --------------------------------------------------------
    def _call(self, name: str, args: list[Any], at: Op | None, caller: Frame | None = None,
              arg_defs: list[Def | None] | None = None,
              returns: list[Def | None] | None = None) -> Generator[OpRun, None, list[Any]]:
        f = self.module.func(name)
        if f is None or f.body is None:
            raise ExecutionError(f"call to undefined function @{name}", at.loc if at else None)
        check_args(f, args, at)
        return (yield from self._invoke(f, args, at, caller, arg_defs, returns))

    def _call_batched(self, name: str, args: list[Any], at: Op, caller: Frame,
                      batch: tuple[int, ...]) -> list[Any]:
        """Run ``@name`` once on batched args (each with ``batch`` leading dims)."""
        f = self.module.func(name)
        if f is None or f.body is None:
            raise ExecutionError(f"call to undefined function @{name}", at.loc)
        check_args(f, args, at, batch)
        p = caller.process
        if self._depth.get(p, 0) >= self.max_call_depth:
            raise ExecutionError(f"call depth exceeds {self.max_call_depth} (recursive calls?)", at.loc)
        self._depth[p] = self._depth.get(p, 0) + 1
        try:
            return drain(self._exec_region(f.body, args, {}, caller.call(f.name), quiet=True,
                                           batch=batch))
        finally:
            self._depth[p] -= 1

    def _invoke(self, f: Func, args: list[Any], at: Op | None, caller: Frame | None = None,
                arg_defs: list[Def | None] | None = None,
                returns: list[Def | None] | None = None,
                top: bool = False) -> Generator[OpRun, None, list[Any]]:
        """Run ``f``'s body; ``caller`` is the calling op's frame, or with ``top`` the frame of
        the body itself (a process's entry function)."""
        if f.body is None:
            raise ExecutionError(f"function @{f.name} has no body", f.loc)
        p = caller.process if caller is not None else 0
        if self._depth.get(p, 0) >= self.max_call_depth:
            raise ExecutionError(f"call depth exceeds {self.max_call_depth} (recursive calls?)",
                                 at.loc if at else f.loc)
        self._depth[p] = self._depth.get(p, 0) + 1
        frame = caller if top and caller is not None else (
            caller.call(f.name) if caller is not None else Frame(f.name))
        try:
            return (yield from self._exec_region(f.body, args, {}, frame, denv={},
                                                 arg_defs=arg_defs, returns=returns))
        finally:
            self._depth[p] -= 1

    def _exec_region(self, region: Region, args: list[Any], env: dict[Any, Any], frame: Frame,
                     quiet: bool = False, batch: tuple[int, ...] = (),
                     denv: dict[Any, Def] | None = None, arg_defs: list[Def | None] | None = None,
                     returns: list[Def | None] | None = None) -> Generator[OpRun, None, list[Any]]:
        if len(region.blocks) != 1:
            raise UnsupportedError(f"regions with {len(region.blocks)} blocks are not supported")
        return (yield from self._exec_block(region.blocks[0], args, env, frame, quiet, batch,
                                            denv, arg_defs, returns))

    def _exec_block(self, block: Block, args: list[Any], env: dict[Any, Any], frame: Frame,
                    quiet: bool, batch: tuple[int, ...] = (), denv: dict[Any, Def] | None = None,
                    arg_defs: list[Def | None] | None = None,
                    returns: list[Def | None] | None = None) -> Generator[OpRun, None, list[Any]]:
        """Run a block; ``denv`` (value -> Def) is tracked unless the block runs quietly.

        ``returns``, when given, receives the definitions of the returned values.
        """
        if len(args) != len(block.args):
            raise ExecutionError(f"region expects {len(block.args)} arguments, got {len(args)}")
        for v, a in zip(block.args, args):
            env[v] = a
        if denv is not None:
            defs = arg_defs if arg_defs is not None else [None] * len(args)
            for v, d in zip(block.args, defs):
                denv[v] = d
                if self.record_bindings:
                    self.bindings.append((frame, v, d, self._next_id))
        for i, op in enumerate(block.ops):
            if op.name in RETURN_OPS:
                if returns is not None and denv is not None:
                    returns[:] = [denv.get(v) for v in op.operands]
                return [_batched(self._read(env, v, op), v.type, batch) for v in op.operands]
            inputs = [self._read(env, v, op) for v in op.operands]
            if batch:
                inputs = [_batched(x, v.type, batch) for x, v in zip(inputs, op.operands)]
            operand_defs = [denv.get(v) for v in op.operands] if denv is not None else None
            event = yield from self._exec_op(op, inputs, env, frame.child(i, frame.region), batch,
                                             denv, operand_defs)
            for k, (v, out) in enumerate(zip(op.results, event.outputs)):
                env[v] = out
                if denv is not None:
                    denv[v] = (event.id, k)
            if not quiet:
                self._since_yield = 0
                yield event
        return []

    def _exec_op(self, op: Op, inputs: list[Any], env: dict[Any, Any], frame: Frame,
                 batch: tuple[int, ...] = (), denv: dict[Any, Def] | None = None,
                 operand_defs: list[Def | None] | None = None) -> Generator[OpRun, None, OpRun]:
        opdef = lookup(op.name)
        if opdef is None:
            raise NotImplementedOpError(op.name, op.loc)
        if batch and not (opdef.elementwise or op.name in BATCHABLE_CALLS or _elementwise_target(op)):
            raise UnsupportedError(f"{op.name} inside a per-element region (reduce body, comparator, "
                                   "scatter update) is not supported yet: only element-wise ops are",
                                   op.loc)
        self._count_step(op)
        self._check_budget(op)
        # an op with `?` sizes runs on a copy typed by its values' shapes (hlolab.interp.refine)
        call = InterpCall(op if batch else refine(op, inputs), self, env, frame, batch, denv, operand_defs)
        try:
            if opdef.steps:
                out = yield from opdef.evaluate(call, *inputs)
            else:
                with np.errstate(all="ignore"):
                    out = opdef.evaluate(call, *inputs)
            outputs = normalize_outputs(out, len(op.results))
        except HloLabError as e:
            raise e.with_loc(op.loc) from None
        except (KeyboardInterrupt, RecursionError, MemoryError):
            raise
        except Exception as e:  # an op bug must still reach the user as a clear error
            raise ExecutionError(f"{op.name} failed: {type(e).__name__}: {e}", op.loc) from e
        if batch:
            outputs = [_batched(x, v.type, batch) for x, v in zip(outputs, op.results)]
        check_outputs(call.op, outputs, batch)
        if call.op is not op:
            settle(call.op, outputs)
        self._next_id += 1
        # a stepped op answers through result_defs, or through its own provenance (chlo.scan)
        if opdef.steps and call.result_defs is None and denv is not None and opdef.provenance is None:
            raise ExecutionError(f"internal error: {op.name} did not say where its results come from",
                                 op.loc)
        # the finished call keeps only what its regions read from outside (explain and
        # provenance may re-run a region), not the whole frame's values
        call.env = {v: env[v] for v in self._captured(op) if v in env}
        call.denv = None
        return OpRun(self._next_id, op, inputs, outputs, frame, call, call.operand_defs,
                     call.result_defs, call.control_defs, call.region_runs)

    def _captured(self, op: Op) -> dict[Any, None]:
        """The values ``op``'s regions use but do not define (ordered, cached per op)."""
        key = id(op)
        found = self._captures.get(key)
        if found is None:
            found = {}
            if op.regions:
                defined: set[int] = set()
                for inner in op.walk():
                    for region in inner.regions:
                        for block in region.blocks:
                            defined.update(id(a) for a in block.args)
                    if inner is not op:
                        defined.update(id(r) for r in inner.results)
                for inner in op.walk():
                    if inner is op:
                        continue
                    for v in inner.operands:
                        if id(v) not in defined:
                            found[v] = None
            self._captures[key] = found
        return found

    def _read(self, env: dict[Any, Any], v: Any, op: Op) -> Any:
        try:
            return env[v]
        except KeyError:
            raise ExecutionError(f"value {v.name} used by {op.name} has not been computed", op.loc) from None

    def _count_step(self, op: Op) -> None:
        self._since_yield += 1
        if self._since_yield > self.interrupt_grace and self.interrupt.is_set():
            self.interrupt.clear()
            raise RunInterrupted(f"interrupted after {self._steps} executed ops", op.loc)
        self._steps += 1
        if self._steps > self.step_budget:
            raise ExecutionError(f"step budget of {self.step_budget} executed ops exceeded "
                                 "(an endless while loop?)", op.loc)

    def _check_budget(self, op: Op) -> None:
        for v in op.results:
            t = v.type
            if isinstance(t, TensorType) and t.is_static and t.num_elements > self.element_budget:
                raise ExecutionError(
                    f"{op.name} result {v.name} has {t.num_elements} elements, over the budget of "
                    f"{self.element_budget}", op.loc)


def _elementwise_target(op: Op) -> bool:
    """A custom_call whose target works element by element (``@Sharding``)."""
    if op.name != "stablehlo.custom_call":
        return False
    from hlolab.ops.check import ELEMENTWISE_TARGETS

    return getattr(op.attributes.get("call_target_name"), "value", None) in ELEMENTWISE_TARGETS


def _batched(value: Any, t: Type, batch: tuple[int, ...]) -> Any:
    """``value`` with the batch dims in front (constants and captured values lack them)."""
    if not batch or not isinstance(t, TensorType) or not isinstance(value, np.ndarray):
        return value
    if value.shape == batch + value.shape[len(batch):] and value.ndim == len(batch) + t.rank:
        return value
    return np.broadcast_to(value, batch + tuple(value.shape))


def type_matches(value: Any, t: Type, batch: tuple[int, ...] = ()) -> bool:
    if isinstance(t, TensorType):
        # a `?` size matches any size (the value binds it)
        return (isinstance(value, np.ndarray) and value.dtype == t.dtype
                and shapes_compatible(batch + t.shape, value.shape))
    if isinstance(t, TupleType):
        return (isinstance(value, tuple) and len(value) == len(t.types)
                and all(type_matches(v, s) for v, s in zip(value, t.types)))
    if isinstance(t, TokenType):
        return isinstance(value, Token)
    return True


def describe_value(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"array of shape {value.shape} and dtype {value.dtype}"
    if isinstance(value, tuple):
        return "tuple(" + ", ".join(describe_value(v) for v in value) + ")"
    return type(value).__name__


def check_outputs(op: Op, outputs: list[Any], batch: tuple[int, ...] = ()) -> None:
    """Every op result must match its declared type exactly (catches op bugs early)."""
    if len(outputs) != len(op.results):
        raise ExecutionError(f"{op.name} produced {len(outputs)} results, expected {len(op.results)}",
                             op.loc)
    for v, out in zip(op.results, outputs):
        if not type_matches(out, v.type, batch):
            raise ExecutionError(f"internal error: {op.name} produced {describe_value(out)} for "
                                 f"{v.name} : {v.type}", op.loc)


def check_args(f: Func, args: list[Any], at: Op | None = None, batch: tuple[int, ...] = ()) -> None:
    if len(args) != len(f.args):
        raise ExecutionError(f"@{f.name} takes {len(f.args)} arguments, got {len(args)}",
                             at.loc if at else f.loc)
    for i, (v, a) in enumerate(zip(f.args, args)):
        if not type_matches(a, v.type, batch):
            hint = ""
            t = v.type
            if (isinstance(a, np.ndarray) and isinstance(t, TensorType) and t.is_static
                    and a.shape == t.static_shape() and a.dtype != t.dtype):
                hint = f" (cast it: x.astype(numpy.{t.dtype.name}))"
            raise ExecutionError(f"argument #{i} of @{f.name} must be {v.type}, got {describe_value(a)}"
                                 + hint, at.loc if at else f.loc)
        over = v.type.bounds.exceeded(a.shape[len(batch):]) if isinstance(v.type, TensorType) \
            and v.type.bounds is not None and isinstance(a, np.ndarray) else None
        if over is not None:  # #stablehlo.bounds: a `?` size within its bound
            raise ExecutionError(f"argument #{i} ({v.name}) of @{f.name} has size {over[1]} in dimension "
                                 f"{over[0]}, over its bound {over[2]} ({v.type})", at.loc if at else f.loc)
