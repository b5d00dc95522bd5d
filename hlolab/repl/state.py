"""The program a REPL user is building: an ``XlaBuilder``, the statements typed so
far (for undo and the autosave), the bound inputs and every value computed.

Each statement is applied to the builder (verified there) and its new ops are
evaluated at once from the cached values of their operands, one op at a time
(``evaluate_op``), so a statement costs one op, not a re-run. Ops with regions
(reduce, while, sort, ...) and calls need the interpreter: for those the program
runs up to the op. A ``Session`` over the whole program is
built only when a command needs one (stepping, tracing, explaining, export).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from hlolab.atomic import write_text as write_atomic
from hlolab.errors import ExecutionError, HloLabError, ParseError
from hlolab.repl.statements import is_mlir_statement, parse_in_scope

AUTOSAVE_VERSION = 1
_UNNAMED_RE = re.compile(r"has (\d+) results but 0 are named")


def data_dir() -> Path:
    """``$XDG_DATA_HOME/hlolab`` (default ``~/.local/share/hlolab``): history, autosave."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "hlolab"


@dataclass
class Entry:
    """One change to the program: a statement, or a loaded file (its whole text)."""

    kind: str  # "statement" | "load"
    text: str
    mark: Any  # the builder's mark before the change (undo goes back to it)
    values: list[Any] = field(default_factory=list)  # the XlaOps it defined
    path: str | None = None


class Program:
    """The program being built and its values (see the module doc)."""

    def __init__(self, seed: int = 0, autosave_path: Path | None = None):
        self._builder: Any = None  # made on first use: the REPL prompts before numpy loads
        self.entries: list[Entry] = []
        self.cache: dict[Any, Any] = {}  # IR Value -> its value (numpy array, tuple, token)
        self.bound: dict[int, Any] = {}  # parameter number -> a value the user gave (:args)
        self.seed = seed
        self.unsaved = False  # changed since the last :save / :load
        self.version = 0  # bumped on every change: a cached Session is stale once it moves
        self.autosave_path = autosave_path

    @property
    def b(self) -> Any:
        """The XlaBuilder of the program (``@main``)."""
        if self._builder is None:
            from hlolab.xla import XlaBuilder

            self._builder = XlaBuilder("main")
        return self._builder

    # --- statements ------------------------------------------------------------------
    def execute(self, text: str, line: int = 1) -> list[Any]:
        """Apply one statement (MLIR or builder language) and evaluate what it added; on
        any error the program is unchanged. Returns the XlaOps it defined."""
        b = self.b
        mark = b.mark()
        try:
            if is_mlir_statement(text):
                values = self._append_mlir(text, line)
            else:
                from hlolab.repl.calls import run_statement
                from hlolab.repl.language import parse_statement
                from hlolab.xla import FUNCTIONS

                values = run_statement(b, parse_statement(text), FUNCTIONS)
            self._evaluate_new()
        except BaseException:
            b.truncate(mark)
            self._prune()
            raise
        for v in values:  # positions in a typed line mean nothing once it is part of the program
            for op in v.value.owner.walk() if hasattr(v.value.owner, "walk") else ():
                op.loc = None
        self.entries.append(Entry("statement", text, mark, values))
        self._changed()
        return values

    def _append_mlir(self, text: str, line: int) -> list[Any]:
        scope = {"%" + k: v for k, v in self.b.values().items()}
        try:
            op = parse_in_scope(text, scope, line)
        except ParseError as e:
            # no result names where the op has results: the values get fresh numbers
            m = _UNNAMED_RE.search(e.message)
            if m is None or re.match(r"\s*%", text):
                raise
            n = int(m.group(1))
            name = self._free_number()
            prefix = f"%{name} = " if n == 1 else f"%{name}:{n} = "
            try:
                op = parse_in_scope(prefix + text, scope, line)
            except ParseError as e2:
                if e2.loc is not None and e2.loc.line == line:  # columns of what the user typed
                    e2.loc = replace(e2.loc, col=max(1, e2.loc.col - len(prefix)),
                                     source_line=e2.loc.source_line[len(prefix):])
                raise e2 from None
        try:
            return self.b.append(op)
        except HloLabError as e:
            raise e.with_loc(op.loc) from None

    def _free_number(self) -> str:
        taken = set(self.b.names())
        k = 0
        while str(k) in taken:
            k += 1
        return str(k)

    def _evaluate_new(self) -> None:
        """Values for the parameters and ops the builder has that the cache lacks."""
        for p in self.b.parameters():
            if p.value not in self.cache:
                self.cache[p.value] = self.input_value(self.b.parameters().index(p), p)
        for op in self.b.ops:
            if op.results and all(r in self.cache for r in op.results):
                continue
            outputs = self._evaluate_op(op)
            for r, v in zip(op.results, outputs):
                self.cache[r] = v

    def _evaluate_op(self, op: Any) -> list[Any]:
        import numpy as np

        from hlolab.ops.registry import lookup

        inputs = [self.cache[v] for v in op.operands]
        opdef = lookup(op.name)
        try:
            if opdef is not None and not op.regions and not opdef.steps:
                from hlolab.interp.single import evaluate_op

                with np.errstate(all="ignore"):
                    return evaluate_op(op, inputs)
            return self._run_with_interpreter(op, inputs)
        except HloLabError as e:
            raise e.with_loc(op.loc) from None
        except (KeyboardInterrupt, MemoryError, RecursionError):
            raise
        except Exception as e:  # an op bug reaches the user as a clear error, not a traceback
            raise ExecutionError(f"{op.name} failed: {type(e).__name__}: {e}", op.loc) from e

    def _run_with_interpreter(self, op: Any, inputs: list[Any]) -> list[Any]:
        """Ops with regions (reduce, while, ...) and calls need the interpreter: the program
        up to this op runs with the bound inputs, returning this op's results (one op
        executor, ``evaluate_op``, has no regions to run)."""
        from hlolab.interp.engine import Interpreter
        from hlolab.xla import XlaOp

        comp = self.b.build([XlaOp(self.b, r) for r in op.results])
        params = self.b.parameters()
        return list(Interpreter(comp.module).run(self.b.name, [self.cache[p.value] for p in params]))

    def input_value(self, number: int, p: Any) -> Any:
        """Parameter ``number``'s value: the one bound with :args, else random from the seed
        (per parameter, so adding one never changes another), under the element budget."""
        import numpy as np

        from hlolab.interp.inputs import random_value

        if number in self.bound:
            return self.bound[number]
        rng = np.random.default_rng([self.seed, number])
        return random_value(p.type, rng, what=f"parameter {number} (%{p.name})")

    def _prune(self) -> None:
        live = set(self.b.values().values())
        for op in self.b.ops:
            live.update(op.results)
        for v in list(self.cache):
            if v not in live:
                del self.cache[v]

    def _changed(self) -> None:
        self.unsaved = True
        self.version += 1
        self.autosave()

    # --- undo / reset ----------------------------------------------------------------
    def undo(self) -> Entry | None:
        if not self.entries:
            return None
        e = self.entries.pop()
        self.b.truncate(e.mark)
        self._prune()
        self._changed()
        return e

    def reset(self) -> None:
        self._builder = None
        self.entries.clear()
        self.cache.clear()
        self.bound.clear()
        self._changed()

    # --- values ----------------------------------------------------------------------
    def value(self, name: str) -> tuple[Any, Any]:
        """(XlaOp, value) of ``name`` (``x`` or ``%x``)."""
        op = self.b.lookup(name)
        return op, self.cache.get(op.value)

    def producer(self, name: str) -> Any:
        """The top-level op that defines ``name`` (None for a parameter)."""
        op = self.b.lookup(name)
        owner = op.value.owner
        return owner if owner is not None and hasattr(owner, "operands") else None

    def root(self) -> list[Any]:
        """What the program returns: the values of the last statement still there."""
        for e in reversed(self.entries):
            live = [v for v in e.values if v.value in self.cache]
            if live:
                return live
        return []

    def computation(self) -> Any:
        if not self.b.ops and not self.b.parameters():
            raise HloLabError("the program is empty: define a value first (:help)")
        root = self.root()
        return self.b.build(root or None)

    def inputs(self) -> list[Any]:
        return [self.cache[p.value] for p in self.b.parameters()]

    def session(self) -> Any:
        """A Session over the whole program with the bound inputs (not yet stepped)."""
        from hlolab.session import Session

        s = Session(self.computation().module, filename="<repl>")
        s.bind(self.inputs())
        return s

    # --- inputs ------------------------------------------------------------------------
    def bind(self, number: int, value: Any) -> None:
        """Bind parameter ``number`` to ``value`` (checked against its type); every value is
        recomputed from the new inputs."""
        from hlolab.interp.engine import type_matches

        params = self.b.parameters()
        if not 0 <= number < len(params):
            raise HloLabError(f"no parameter {number} (the program has {len(params)})")
        p = params[number]
        if not type_matches(value, p.type):
            raise HloLabError(f"parameter {number} (%{p.name}) is {p.type}; the value given is "
                              f"{getattr(value, 'dtype', type(value).__name__)}"
                              f"{list(getattr(value, 'shape', []))}")
        self.bound[number] = value
        self.recompute()

    def reseed(self, seed: int) -> None:
        self.seed = seed
        self.bound.clear()
        self.recompute()

    def recompute(self) -> None:
        old = dict(self.cache)
        self.cache.clear()
        try:
            self._evaluate_new()
        except BaseException:
            self.cache = old
            raise
        self._changed()

    # --- files -------------------------------------------------------------------------
    def save(self, path: str | Path) -> Path:
        """The program as MLIR (``hlolab run`` reads it); written atomically."""
        p = Path(path)
        write_atomic(p, self.computation().as_text())
        self.unsaved = False
        return p

    def load(self, path: str | Path | None = None, text: str | None = None) -> list[Any]:
        """Add a module's entry function to the program: its arguments become parameters
        (after the ones there are), its ops statements, its other functions callees."""
        if text is None:
            assert path is not None
            try:
                text = Path(path).read_text()
            except (OSError, UnicodeDecodeError) as e:
                raise HloLabError(f"cannot read {path}: {e}") from None
        from hlolab.ir.parser import parse_module
        from hlolab.ir.printer import print_op
        from hlolab.ops.verify import verify_module
        from hlolab.xla import FUNCTIONS, Shape

        module = parse_module(text, str(path or "<restored>"))
        verify_module(module)
        func = _entry(module)
        b = self.b
        mark = b.mark()
        values: list[Any] = []
        try:
            for f in module.funcs:
                if f is not func and f.body is not None:
                    b.add_func(f)
            first = len(b.parameters())
            for i, a in enumerate(func.args):
                values.append(FUNCTIONS["Parameter"](b, first + i, Shape.from_type(a.type), a.name[1:]))
            assert func.body is not None
            for op in func.body.blocks[0].ops:
                if op.name == "func.return":
                    continue
                stmt = print_op(op)
                values += self._append_mlir(stmt, op.loc.line if op.loc else 1)
            self._evaluate_new()
        except BaseException:
            b.truncate(mark)
            self._prune()
            raise
        self.entries.append(Entry("load", text, mark, values[-1:] if values else [], str(path)))
        self._changed()
        if path is not None and len(self.entries) == 1:
            self.unsaved = False  # the program is the file's: nothing to lose yet
        return values

    # --- autosave ----------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        from hlolab.runner import format_value

        return {"version": AUTOSAVE_VERSION, "seed": self.seed,
                "entries": [{"kind": e.kind, "text": e.text, "path": e.path} for e in self.entries],
                "args": {str(k): format_value(v) for k, v in self.bound.items()}}

    def autosave(self) -> None:
        if self.autosave_path is None:
            return
        if not self.entries and not self.bound:
            self.autosave_path.unlink(missing_ok=True)
            return
        write_atomic(self.autosave_path, json.dumps(self.snapshot(), indent=1))

    def restore(self, snap: dict[str, Any]) -> list[str]:
        """Replay an autosaved session; the problems met (one line each), if any."""
        from hlolab.ir.parser import parse_attribute

        problems: list[str] = []
        self.seed = int(snap.get("seed", 0))
        for e in snap.get("entries", []):
            try:
                if e.get("kind") == "load":
                    self.load(e.get("path"), e["text"])
                else:
                    self.execute(e["text"])
            except HloLabError as err:
                problems.append(f"{e.get('text', '')[:60]!r}: {err.short()}")
        for k, lit in snap.get("args", {}).items():
            try:
                self.bind(int(k), _array_of(parse_attribute(lit)))
            except HloLabError as err:
                problems.append(f"argument {k}: {err.short()}")
        return problems


def _entry(module: Any) -> Any:
    """``@main``, else the module's only function with a body."""
    f = module.func("main")
    if f is not None:
        return f
    defined = [g for g in module.funcs if g.body is not None]
    if len(defined) != 1:
        raise HloLabError(f"the module has no @main and {len(defined)} functions: cannot tell which to load")
    return defined[0]


def _array_of(attr: Any) -> Any:
    import numpy as np

    return np.array(attr.array)


def read_autosave(path: Path) -> dict[str, Any] | None:
    try:
        snap = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(snap, dict) or snap.get("version") != AUTOSAVE_VERSION or not snap.get("entries"):
        return None
    return snap
