"""The core of the XLA builder API: ``XlaBuilder``, ``XlaOp``, ``XlaComputation``.

A builder holds one function being written op by op. Every builder function
makes one IR ``Op`` through ``emit``: the op definition's attribute record
writes the attributes, its ``infer`` gives the result types, and ``verify_op``
checks the spec's constraints before anything changes, so an error names the
op and ``(Cn)`` at the call site and leaves the builder as it was.

``build()`` copies the ops into a fresh, verified ``Module`` (later changes to
the builder do not reach a built computation). Sub-computations (reduce
bodies, comparators, while cond/body, branches) are ``XlaComputation``s of
their own builders; ``region_of`` inlines one as an op's region.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from hlolab.errors import HloLabError, VerificationError
from hlolab.ir.module import Block, Func, Module, Op, Region, Value
from hlolab.ops.record import AsDeclared, Partial, infer_with, inferred_for
from hlolab.ops.registry import lookup
from hlolab.ops.verify import verify_module, verify_op
from hlolab.types import TensorType, Type
from hlolab.xla.shapes import Shape, as_shape

__all__ = ["XlaBuilder", "XlaOp", "XlaComputation", "BuilderError", "FUNCTIONS", "builder_function",
           "emit", "region_of"]


class BuilderError(HloLabError):
    """A misuse of the builder API (unknown name, values of another builder, ...)."""


# every builder name -> its function (filled by @builder_function in the op modules)
FUNCTIONS: dict[str, Callable[..., Any]] = {}


def builder_function(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Register ``fn`` in FUNCTIONS under its own name. Arguments of the wrong kind (a
    string for a list of ints, a missing argument) become a BuilderError naming the
    function, so only hlolab errors reach a user; ``inspect.signature`` still shows
    ``fn``'s own parameters."""
    if fn.__name__ in FUNCTIONS:
        raise RuntimeError(f"builder function {fn.__name__} defined twice")

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except HloLabError:
            raise
        except (TypeError, ValueError, AttributeError, IndexError, KeyError) as e:
            raise BuilderError(f"{fn.__name__}: bad arguments ({type(e).__name__}: {e})") from e

    FUNCTIONS[fn.__name__] = call
    return call


# MLIR's suffix-id: a number, or a letter-like character then letters, digits, $ . _ -
_NAME_RE = re.compile(r"(?:[0-9]+|[A-Za-z$._-][A-Za-z0-9$._-]*)")


class XlaOp:
    """A value being built: one result of one op (or a parameter) of a builder."""

    __slots__ = ("builder", "value")

    def __init__(self, builder: XlaBuilder, value: Value):
        self.builder = builder
        self.value = value

    @property
    def type(self) -> Type:
        return self.value.type

    @property
    def name(self) -> str:
        """The SSA name without ``%``."""
        return self.value.name[1:]

    def shape(self) -> Shape:
        return Shape.from_type(self.value.type)

    def __repr__(self) -> str:
        return f"XlaOp(%{self.name}: {self.value.type})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, XlaOp) and other.value is self.value

    def __hash__(self) -> int:
        return id(self.value)

    # XLA's Python client offers arithmetic operators on XlaOps
    def __add__(self, other: Any) -> XlaOp:
        return FUNCTIONS["Add"](self, lift(self, other))

    def __radd__(self, other: Any) -> XlaOp:
        return FUNCTIONS["Add"](lift(self, other), self)

    def __sub__(self, other: Any) -> XlaOp:
        return FUNCTIONS["Sub"](self, lift(self, other))

    def __rsub__(self, other: Any) -> XlaOp:
        return FUNCTIONS["Sub"](lift(self, other), self)

    def __mul__(self, other: Any) -> XlaOp:
        return FUNCTIONS["Mul"](self, lift(self, other))

    def __rmul__(self, other: Any) -> XlaOp:
        return FUNCTIONS["Mul"](lift(self, other), self)

    def __truediv__(self, other: Any) -> XlaOp:
        return FUNCTIONS["Div"](self, lift(self, other))

    def __neg__(self) -> XlaOp:
        return FUNCTIONS["Neg"](self)


def lift(like: XlaOp, x: Any) -> XlaOp:
    """A Python number next to an XlaOp: a scalar constant of its element type."""
    if isinstance(x, XlaOp):
        return x
    t = like.type
    if not isinstance(t, TensorType):
        raise BuilderError(f"cannot combine a number with %{like.name} of type {t}")
    return FUNCTIONS["ConstantR0"](like.builder, x, dtype=t.element)


class _Entry:
    """One undo-log entry: what to revert."""

    __slots__ = ("kind", "data")

    def __init__(self, kind: str, data: Any):
        self.kind = kind
        self.data = data


class XlaBuilder:
    """Builds one ``func.func @<name>`` op by op (see the module docstring)."""

    def __init__(self, name: str = "main"):
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$.]*", name):
            raise BuilderError(f"invalid function name '{name}'")
        self.name = name
        self._params: dict[int, Value] = {}  # parameter number -> argument
        self._ops: list[Op] = []  # top-level ops in program order
        self._values: dict[str, Value] = {}  # top-level name (no '%') -> value
        self._taken: set[str] = set()  # every name in the function, regions included
        self._funcs: dict[str, Func] = {}  # private functions (Call targets)
        self._log: list[_Entry] = []
        self._counter = 0

    def __repr__(self) -> str:
        return f"XlaBuilder({self.name!r}: {len(self._params)} parameters, {len(self._ops)} ops)"

    # --- names ---------------------------------------------------------------
    def _fresh(self, avoid: set[str] | None = None) -> str:
        """The next unused number (never a name in use, nor one in ``avoid``)."""
        while str(self._counter) in self._taken or (avoid and str(self._counter) in avoid):
            self._counter += 1
        name = str(self._counter)
        self._counter += 1
        return name

    def _fresh_names(self, n: int) -> list[str]:
        """``n`` fresh names, without using them up (the op may still fail to verify)."""
        saved = self._counter
        out: list[str] = []
        for _ in range(n):
            out.append(self._fresh(set(out)))
        self._counter = saved
        return out

    def set_name(self, op: XlaOp, name: str) -> XlaOp:
        """Rename ``op``'s SSA value to ``%name`` (a parameter renames the argument)."""
        v = self._own(op, "set_name")
        name = name[1:] if name.startswith("%") else name
        if not _NAME_RE.fullmatch(name):
            raise BuilderError(f"invalid SSA name '%{name}': use letters, digits and $ . _ - "
                               "(not starting with a digit unless all digits)")
        old = v.name[1:]
        if name == old:
            return op
        if name in self._taken:
            raise BuilderError(f"the name %{name} is already in use")
        if "#" in old:
            raise BuilderError(f"%{old} is one result of a result group; it cannot be renamed alone")
        self._rename(v, name)
        self._log.append(_Entry("rename", (v, old)))
        return op

    def _rename(self, v: Value, name: str) -> None:
        old = v.name[1:]
        self._taken.discard(old)
        self._values.pop(old, None)
        v.name = "%" + name
        self._taken.add(name)
        self._values[name] = v
        owner = v.owner
        if isinstance(owner, Op):
            owner.result_groups = [(r.name, 1) for r in owner.results]

    def lookup(self, name: str) -> XlaOp:
        """The value named ``name`` (``x`` or ``%x``); BuilderError if there is none."""
        key = name[1:] if name.startswith("%") else name
        v = self._values.get(key)
        if v is None:
            known = ", ".join("%" + n for n in self.names()) or "none yet"
            raise BuilderError(f"no value named %{key} in @{self.name} (names: {known})")
        return XlaOp(self, v)

    def names(self) -> list[str]:
        """Every top-level value's name (no ``%``): parameters by number, then op results
        in program order."""
        out = [self._params[k].name[1:] for k in sorted(self._params)]
        for op in self._ops:
            out.extend(r.name[1:] for r in op.results)
        return out

    def values(self) -> dict[str, Value]:
        """Name (no ``%``) -> IR value of every top-level value (an MLIR parser's scope)."""
        return {n: self._values[n] for n in self.names()}

    def parameters(self) -> list[XlaOp]:
        return [XlaOp(self, self._params[k]) for k in sorted(self._params)]

    @property
    def ops(self) -> list[Op]:
        """The top-level IR ops so far (read only)."""
        return list(self._ops)

    # --- values of this builder ----------------------------------------------
    def _own(self, op: Any, what: str) -> Value:
        if not isinstance(op, XlaOp):
            raise BuilderError(f"{what}: expected an XlaOp, got {type(op).__name__} {op!r}")
        if op.builder is not self:
            raise BuilderError(f"{what}: %{op.name} belongs to builder '{op.builder.name}', "
                               f"not to '{self.name}' (values of two builders cannot be mixed)")
        v = op.value
        if self._values.get(v.name[1:]) is not v:
            raise BuilderError(f"{what}: %{op.name} is no longer in builder '{self.name}' (undone)")
        return v

    # --- adding ----------------------------------------------------------------
    def add_parameter(self, number: int, shape: Shape | str | Type, name: str | None = None) -> XlaOp:
        """A function argument numbered ``number`` (Parameter() calls this)."""
        if isinstance(number, bool) or not isinstance(number, (int, np.integer)) or number < 0:
            raise BuilderError(f"Parameter: the parameter number must be an integer >= 0, got {number!r}")
        number = int(number)
        if number in self._params:
            raise BuilderError(f"Parameter: parameter {number} is already %{self._params[number].name[1:]}")
        t = as_shape(shape).to_type()
        if name is not None:
            name = name[1:] if name.startswith("%") else name
            if not _NAME_RE.fullmatch(name):
                raise BuilderError(f"Parameter: invalid SSA name '%{name}'")
            if name in self._taken:
                raise BuilderError(f"Parameter: the name %{name} is already in use")
        else:
            name = self._fresh_arg_name(number)
        v = Value("%" + name, t)
        self._params[number] = v
        self._taken.add(name)
        self._values[name] = v
        self._log.append(_Entry("param", number))
        return XlaOp(self, v)

    def _fresh_arg_name(self, number: int) -> str:
        name, k = f"arg{number}", 0
        while name in self._taken:
            k += 1
            name = f"arg{number}_{k}"
        return name

    def _add_op(self, op: Op) -> list[XlaOp]:
        inner = [v.name[1:] for v in _inner_values(op)]
        for r in op.results:
            n = r.name[1:]
            self._taken.add(n)
            self._values[n] = r
        self._taken.update(inner)
        self._ops.append(op)
        self._log.append(_Entry("op", (op, inner)))
        return [XlaOp(self, r) for r in op.results]

    def append(self, ir_op: Op) -> list[XlaOp]:
        """Append an IR op built elsewhere (a parsed MLIR statement) whose operands are
        this builder's values; verified first (its regions' ops too), and on failure the
        builder is unchanged. Returns one XlaOp per result."""
        live = {id(v) for v in self._values.values()}
        for k, v in enumerate(ir_op.operands):
            if id(v) not in live:
                raise BuilderError(f"{ir_op.name}: operand #{k} {v.name} is not a value of builder "
                                   f"'{self.name}'")
        inner_values = _inner_values(ir_op)
        visible = live | {id(v) for v in inner_values}
        for inner in _nested_ops(ir_op):  # what its regions read from outside must be b's too
            for v in inner.operands:
                if id(v) not in visible:
                    raise BuilderError(f"{inner.name} (in {ir_op.name}'s region) reads {v.name}, which "
                                       f"is not a value of builder '{self.name}'")
        # results are unique; a region's names may repeat in a sibling region (a while's cond
        # and body both name their arguments %arg0: the parser checked each region's scope)
        seen: set[str] = set()
        results = {id(v) for v in ir_op.results}
        for v in list(ir_op.results) + inner_values:
            n = v.name[1:]
            clash = n in self._taken or (n in seen and id(v) in results)
            if not _NAME_RE.fullmatch(n.split("#")[0]) or clash:
                raise BuilderError(f"{ir_op.name}: the name {v.name} is already in use" if clash
                                   else f"{ir_op.name}: invalid SSA name {v.name}")
            seen.add(n)
        for inner in ir_op.walk():
            inner.record = None
            verify_op(inner)
            for name in _callees(inner):
                if name not in self._funcs:
                    raise BuilderError(f"{inner.name}: no function @{name} in builder '{self.name}'")
        return self._add_op(ir_op)

    def check_func(self, func: Func) -> None:
        """BuilderError if ``func`` cannot join this module's functions."""
        have = self._funcs.get(func.name)
        if have is not None and have != func:
            raise BuilderError(f"two different functions named @{func.name}")
        if func.name == self.name:
            raise BuilderError(f"a called function cannot be named @{self.name} like the builder's own")

    def add_func(self, func: Func) -> None:
        """A private function of the module (a Call's target); equal redefinitions are fine."""
        self.check_func(func)
        if func.name in self._funcs:
            return
        self._funcs[func.name] = func
        self._log.append(_Entry("func", func.name))

    # --- undo ------------------------------------------------------------------
    def mark(self) -> tuple[int, int]:
        """A point to come back to with ``truncate``."""
        return (len(self._log), self._counter)

    def truncate(self, mark: tuple[int, int]) -> None:
        """Undo every parameter, op, rename and function added after ``mark``."""
        size, counter = mark
        if size > len(self._log):
            raise BuilderError("truncate: this mark is newer than the builder's state")
        while len(self._log) > size:
            e = self._log.pop()
            if e.kind == "op":
                op, inner = e.data
                self._ops.remove(op)
                for r in op.results:
                    self._taken.discard(r.name[1:])
                    self._values.pop(r.name[1:], None)
                self._taken.difference_update(inner)
            elif e.kind == "param":
                v = self._params.pop(e.data)
                self._taken.discard(v.name[1:])
                self._values.pop(v.name[1:], None)
            elif e.kind == "rename":
                v, old = e.data
                self._rename(v, old)
            elif e.kind == "func":
                self._funcs.pop(e.data)
        self._counter = counter

    # --- building ------------------------------------------------------------------
    def build(self, root: XlaOp | Sequence[XlaOp] | None = None) -> XlaComputation:
        """A verified computation returning ``root`` (an XlaOp, a list of them, or by
        default every result of the last op added)."""
        numbers = sorted(self._params)
        if numbers != list(range(len(numbers))):
            missing = sorted(set(range(max(numbers) + 1)) - set(numbers))
            raise BuilderError(f"build: parameters must be numbered 0..n-1; missing {missing}")
        if root is None:
            if self._ops:
                roots = list(self._ops[-1].results)
                if not roots:
                    raise BuilderError("build: the last op has no result; give root=")
            elif self._params:
                roots = [self._params[numbers[-1]]]
            else:
                raise BuilderError(f"build: builder '{self.name}' is empty")
        elif isinstance(root, XlaOp):
            roots = [self._own(root, "build")]
        else:
            roots = [self._own(r, "build") for r in root]
        vmap: dict[int, Value] = {}
        args = [_clone_value(self._params[k], vmap) for k in numbers]
        block = Block(args=args, arg_locs=[None] * len(args))
        for op in self._ops:
            block.ops.append(_clone_op(op, vmap, block))
        ret = Op("func.return", operands=[vmap[id(r)] for r in roots])
        ret.parent = block
        block.ops.append(ret)
        main = Func(self.name, args, [v.type for v in ret.operands], Region([block]))
        for a in args:
            a.owner = block
        funcs = [main] + [clone_func(f) for f in self._funcs.values()]
        module = Module(funcs=funcs, implicit=False)
        verify_module(module)
        return XlaComputation(module, self.name)


def _clone_value(v: Value, vmap: dict[int, Value], name: str | None = None) -> Value:
    nv = Value(name or v.name, v.type, None, v.index)
    vmap[id(v)] = nv
    return nv


def _clone_op(op: Op, vmap: dict[int, Value], parent: Block | None,
              rename: Callable[[str], str] | None = None) -> Op:
    """A copy of ``op`` (regions included) whose operands go through ``vmap``;
    ``rename`` gives new names to every value it defines."""
    new = Op(op.name, operands=[vmap.get(id(v), v) for v in op.operands],
             attributes=dict(op.attributes), loc=op.loc, mlir_loc=op.mlir_loc,
             result_groups=list(op.result_groups), prop_names=set(op.prop_names), parent=parent)
    for r in op.results:
        nv = _clone_value(r, vmap, "%" + rename(r.name) if rename else None)
        nv.owner = new
        new.results.append(nv)
    if rename is not None:
        new.result_groups = [(r.name, 1) for r in new.results]
    for region in op.regions:
        new.regions.append(_clone_region(region, vmap, rename))
    return new


def _clone_region(region: Region, vmap: dict[int, Value],
                  rename: Callable[[str], str] | None = None) -> Region:
    out = Region()
    for b in region.blocks:
        nb = Block(label=b.label, arg_locs=list(b.arg_locs))
        for a in b.args:
            na = _clone_value(a, vmap, "%" + rename(a.name) if rename else None)
            na.owner = nb
            nb.args.append(na)
        for op in b.ops:
            nb.ops.append(_clone_op(op, vmap, nb, rename))
        out.blocks.append(nb)
    return out


def clone_func(f: Func) -> Func:
    vmap: dict[int, Value] = {}
    assert f.body is not None
    body = _clone_region(f.body, vmap)
    args = list(body.blocks[0].args)
    return Func(f.name, args, list(f.result_types), body, f.visibility,
                list(f.arg_attrs), list(f.result_attrs), dict(f.attributes))


def _inner_values(op: Op) -> list[Value]:
    """Block arguments and results defined inside ``op``'s regions."""
    out: list[Value] = []
    for region in op.regions:
        for b in region.blocks:
            out.extend(b.args)
            for inner in b.ops:
                out.extend(inner.results)
                out.extend(_inner_values(inner))
    return out


def _callees(op: Op) -> list[str]:
    from hlolab.ir.attrs import SymbolRefAttr

    a = op.attributes.get("callee")
    return [a.name] if isinstance(a, SymbolRefAttr) else []


# --- computations -------------------------------------------------------------------

class XlaComputation:
    """A built, verified module whose entry function is ``@<name>``."""

    def __init__(self, module: Module, name: str):
        self.module = module
        self.name = name

    @property
    def func(self) -> Func:
        f = self.module.func(self.name)
        assert f is not None
        return f

    @property
    def parameter_types(self) -> list[Type]:
        return [a.type for a in self.func.args]

    @property
    def result_types(self) -> list[Type]:
        return list(self.func.result_types)

    def program_shape(self) -> tuple[list[Shape], list[Shape]]:
        """(parameter shapes, result shapes)."""
        return ([Shape.from_type(t) for t in self.parameter_types],
                [Shape.from_type(t) for t in self.result_types])

    def as_text(self, generic: bool = False) -> str:
        """The module as MLIR text that ``parse_module`` reads back."""
        from hlolab.ir.printer import print_module

        return print_module(self.module, generic=generic)

    def run(self, *args: Any, grid: tuple[int, int] | None = None,
            infeed: Sequence[Any] | None = None) -> Any:
        """Execute with hlolab's interpreter; one array per result. With ``grid=(R, P)``
        of more than one process: one such list per process, in process order (an
        argument with a leading dim of R * P is split across the processes)."""
        from hlolab.interp.engine import Interpreter, drain
        from hlolab.interp.processes import grid_args, run_grid

        interp = Interpreter(self.module)
        interp.state["infeed"] = list(infeed or [])
        if grid is None or grid[0] * grid[1] == 1:
            return interp.run(self.name, list(args))
        func = interp.entry(self.name)
        if len(args) != len(func.args):  # grid_args would make the missing ones up
            raise BuilderError(f"run: @{self.name} takes {len(func.args)} arguments, got {len(args)}")
        return drain(run_grid(interp, func, grid_args(func, list(args), grid, 0), grid))

    def session(self, args: Sequence[Any] | None = None, grid: tuple[int, int] | None = None) -> Any:
        """A ``hlolab.session.Session`` on this computation (on a process ``grid``), ``args`` bound."""
        from hlolab.session import Session

        s = Session(self.module, entry=self.name, grid=grid)
        if args is not None:
            s.bind(list(args))
        return s

    def __repr__(self) -> str:
        f = self.func
        ins = ", ".join(str(a.type) for a in f.args)
        outs = ", ".join(str(t) for t in f.result_types)
        return f"XlaComputation(@{self.name}: ({ins}) -> ({outs}))"


# --- making ops ---------------------------------------------------------------------

def builder_of(operands: Sequence[Any], what: str) -> XlaBuilder:
    """The one builder all XlaOps among ``operands`` belong to."""
    b: XlaBuilder | None = None
    for o in operands:
        if isinstance(o, XlaOp):
            if b is None:
                b = o.builder
            elif o.builder is not b:
                raise BuilderError(f"{what}: %{o.name} belongs to builder '{o.builder.name}', "
                                   f"the other operands to '{b.name}' (values of two builders "
                                   "cannot be mixed)")
        elif o is not None:
            raise BuilderError(f"{what}: expected an XlaOp operand, got {type(o).__name__} {o!r}")
    if b is None:
        raise BuilderError(f"{what}: needs at least one XlaOp operand")
    return b


def _norm(v: Any) -> Any:
    if isinstance(v, list):
        return tuple(_norm(x) for x in v)
    if isinstance(v, np.integer):
        return int(v)
    return v


def emit(name: str, operands: Sequence[XlaOp], fields: dict[str, Any] | None = None, *,
         results: Sequence[Type] | None = None, computations: Sequence[Any] = (),
         builder: XlaBuilder | None = None, what: str | None = None,
         funcs: Sequence[Func] = (), elements: Sequence[Any] | None = None) -> list[XlaOp]:
    """Make one op ``name`` of XlaOps ``operands`` and attribute record ``fields``.

    Result types come from the op's ``infer``; where it leaves a result's element type
    open (dot, reduce, ...) that is ``elements[i]`` or the first operand's, and where it
    leaves more open ``results`` gives the types (verification still checks them).
    ``computations`` become its regions (a ``(computation, values)`` pair: a region whose
    parameters stand for those values), ``funcs`` functions of the module (a call's
    callee). The op is verified before the builder changes. One XlaOp per result."""
    what = what or name
    b = builder if builder is not None else builder_of(operands, what)
    values = [b._own(o, what) for o in operands]
    opdef = lookup(name)
    if opdef is None:
        raise BuilderError(f"{what}: no op definition for {name}")
    try:
        rec = opdef.attrs(**{k: _norm(v) for k, v in (fields or {}).items()})
        attributes = rec.to_ir()
    except (TypeError, ValueError) as e:  # a value of the wrong kind for an attribute
        raise BuilderError(f"{what}: bad attribute value: {e}") from None

    def error(constraint: str | None, message: str) -> VerificationError:
        return VerificationError(name, constraint, message)

    types = [v.type for v in values]
    if results is None:
        if opdef.infer is None:
            raise BuilderError(f"{what}: {name} does not infer its result types; give them")
        inferred = infer_with(opdef.infer, rec, types, error)
        if isinstance(inferred, AsDeclared):
            raise BuilderError(f"{what}: {name}'s result types must be given")
        result_types = []
        for i, t in enumerate(inferred_for(inferred, [])):
            if isinstance(t, Partial):
                t = _complete(t, elements[i] if elements is not None else _first_element(types))
                if t is None:
                    raise BuilderError(f"{what}: {name} leaves result #{i}'s type open; give it")
            result_types.append(t)
    else:
        result_types = list(results)
    regions = []
    new_funcs = list(funcs)
    for comp in computations:
        captures = None
        if isinstance(comp, tuple):  # (computation, values its parameters stand for)
            comp, captured = comp
            captures = [b._own(c, what) for c in captured]
        region, called = region_of(comp, what, captures)
        regions.append(region)
        new_funcs.extend(called)
    for f in new_funcs:
        b.check_func(f)
    op = Op(name, operands=values, attributes=attributes, regions=regions)
    inner = _inner_values(op)
    names = b._fresh_names(len(result_types) + len(inner))
    for i, t in enumerate(result_types):
        op.results.append(Value("%" + names[i], t, op, i))
    op.result_groups = [(r.name, 1) for r in op.results]
    for v, nm in zip(inner, names[len(result_types):], strict=True):
        v.name = "%" + nm
    for o in _nested_ops(op):
        o.result_groups = [(r.name, 1) for r in o.results]
    verify_op(op)
    for f in new_funcs:
        b.add_func(f)
    return b._add_op(op)


def _first_element(types: Sequence[Type]) -> Any:
    for t in types:
        if isinstance(t, TensorType):
            return t.element
    return None


def _complete(p: Partial, element: Any) -> Type | None:
    """The type a Partial admits with its open parts filled: its shape must be static."""
    if p.shape is None or any(d is None for d in p.shape):
        return None
    el = p.element if p.element is not None else element
    if el is None:
        return None
    t = TensorType(tuple(int(d) for d in p.shape), el)  # type: ignore[arg-type]
    return t  # a check the Partial holds is verify_op's to report, with its (Cn)


def _nested_ops(op: Op) -> list[Op]:
    return [o for o in op.walk() if o is not op]


def region_of(comp: XlaComputation, what: str,
              captures: Sequence[Value] | None = None) -> tuple[Region, list[Func]]:
    """``comp``'s entry function as a region of an op: its parameters become the block
    arguments (or, with ``captures``, stand for those enclosing values, and the block
    has no arguments: if/case branches), its ``func.return`` a ``stablehlo.return``.
    ``emit`` gives every value in it a fresh number of the builder (no clash with the
    enclosing function). Also returns the functions ``comp`` calls."""
    if not isinstance(comp, XlaComputation):
        raise BuilderError(f"{what}: expected an XlaComputation, got {type(comp).__name__} {comp!r}")
    f = comp.func
    assert f.body is not None
    if captures is None:
        region = _clone_region(f.body, {})
    else:
        if len(captures) != len(f.args):
            raise BuilderError(f"{what}: computation @{comp.name} has {len(f.args)} parameters, "
                               f"given {len(captures)} operands")
        for a, c in zip(f.args, captures, strict=True):
            if a.type != c.type:
                raise BuilderError(f"{what}: computation @{comp.name}'s parameter {a.name} is {a.type}, "
                                   f"its operand {c.name} is {c.type}")
        vmap = {id(a): c for a, c in zip(f.args, captures, strict=True)}
        block = Block()
        for op in f.body.blocks[0].ops:
            block.ops.append(_clone_op(op, vmap, block))
        region = Region([block])
    block = region.blocks[-1]
    last = block.ops[-1]
    block.ops[-1] = Op("stablehlo.return", operands=list(last.operands), parent=block)
    return region, [clone_func(g) for g in comp.module.funcs if g is not f]
