"""The op registry: one ``OpDef`` per op, registered where the op is defined.

An op module defines an op like this::

    @op("stablehlo.add", aliases=("Add",), provenance=elementwise_provenance)
    def add(ctx: OpCall, lhs, rhs):
        return np.add(lhs, rhs)        # one output: return the array

An op also declares its attribute record (``attrs=``, a class of
``hlolab.ops.record``; ``ctx.attrs`` is the record, read once), its result-type
inference (``infer(attrs, operand_types) -> [Type | Partial]``), its family
(galleries and menus group by it) and its XLA builder names (``aliases``).

``evaluate`` receives the ``OpCall`` and the operand values (numpy arrays of
the exact element type; tuples for tuple values; ``Token`` for tokens) and
returns the result value, or a *list* of them for several results (a Python
tuple is a single tuple-typed value).
``verify(ctx)`` checks the spec constraints from types and attributes only
and raises ``ctx.error("C3", "...")``. ``provenance(ctx, inputs, outputs)``
returns a ``hlolab.trace.provenance.Provenance``.

Ops with ``steps=True`` (while, if, case, call) have a *generator* evaluate
that yields the events of the ops it runs and returns its results, so the
stepping engine can go op by op through their bodies.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from hlolab.errors import SourceLoc, VerificationError
from hlolab.ir.module import Op
from hlolab.limits import ELEMENT_BUDGET
from hlolab.ops.record import Attrs, Inferred
from hlolab.types import TensorType, Type


class Token:
    """The value of a ``!stablehlo.token``: no data, only ordering."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "Token"


TOKEN = Token()


@dataclass
class OpDef:
    name: str
    evaluate: Callable[..., Any]
    aliases: tuple[str, ...] = ()
    verify: Callable[[OpCall], None] | None = None
    provenance: Callable[..., Any] | None = None
    explain: Callable[..., Any] | None = None
    steps: bool = False  # evaluate is a generator (control flow)
    doc: str = ""
    # works element by element on any shape: may run inside a batched region
    # application (reduce bodies, comparators), where values carry batch dims
    elementwise: bool = False
    attrs: type[Attrs] = Attrs  # the attribute record
    infer: Callable[[Any, list[Type]], list[Inferred]] | None = None
    family: str = ""  # "elementwise", "indexing", "window", ...: what galleries group by

    @property
    def xla_names(self) -> tuple[str, ...]:
        """The XLA builder names (``Gather``, ``ConvGeneralDilated``)."""
        return self.aliases


# an op's family -> the group galleries and menus show it in (display order); families
# not listed (check ops) are not shown there
FAMILY_GROUPS: dict[str, str] = {
    "elementwise": "element-wise", "compare": "element-wise",
    "shape": "shape",
    "indexing": "indexing", "slicing": "indexing", "sort": "indexing",
    "reduction": "windows & reductions", "window": "windows & reductions",
    "contraction": "contractions", "linalg": "contractions",
    "control": "control flow",
    "collective": "collectives",
    "conversion": "types & quantization", "quantization": "types & quantization",
    "rng": "RNG",
}
GROUP_ORDER: tuple[str, ...] = tuple(dict.fromkeys(FAMILY_GROUPS.values()))
# check ops and sharding annotations (program-level, no explorer) are not in the galleries
FAMILIES: frozenset[str] = frozenset(FAMILY_GROUPS) | {"check", "sharding"}

REGISTRY: dict[str, OpDef] = {}
_ALIASES: dict[str, str] = {}


def op(name: str | tuple[str, ...], *, aliases: tuple[str, ...] = (),
       verify: Callable[[OpCall], None] | None = None,
       provenance: Callable[..., Any] | None = None,
       explain: Callable[..., Any] | None = None,
       steps: bool = False,
       elementwise: bool = False,
       attrs: type[Attrs] = Attrs,
       infer: Callable[[Any, list[Type]], list[Inferred]] | None = None,
       family: str = "") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``fn`` as the evaluator of op ``name`` (or several names)."""
    names = (name,) if isinstance(name, str) else name

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        for n in names:
            if n in REGISTRY:
                raise RuntimeError(f"op {n} registered twice")
            REGISTRY[n] = OpDef(n, fn, aliases, verify, provenance, explain, steps,
                                (fn.__doc__ or "").strip(), elementwise, attrs, infer, family)
            for a in aliases:
                _ALIASES[a] = n
        return fn

    return deco


def lookup(name: str) -> OpDef | None:
    _load_all()
    return REGISTRY.get(name) or REGISTRY.get(_ALIASES.get(name, ""))


_LOADED = False
_LOADING = threading.Lock()  # front ends load ops in a background thread (the REPL)
_LOADER: int | None = None  # the thread importing the op modules


def _load_all() -> None:
    """Import every op family module once (they register on import). A second thread
    waits for the first to finish instead of seeing a half-filled registry; the loading
    thread itself (an op module looking an op up while it loads) sees what is registered
    so far."""
    global _LOADED, _LOADER
    if _LOADED or _LOADER == threading.get_ident():
        return
    with _LOADING:
        if _LOADED:
            return
        _LOADER = threading.get_ident()
        import importlib
        import pkgutil

        import hlolab.ops as pkg

        try:
            for info in pkgutil.iter_modules(pkg.__path__):
                if info.name != "registry" and not info.name.startswith("_"):
                    importlib.import_module(f"hlolab.ops.{info.name}")
            # quantized types: the spec's dequantize/op/quantize rules wrap the ops they cover
            from hlolab.ops.quantized import install
            install(REGISTRY)
            _LOADED = True
        finally:
            _LOADER = None


def all_ops() -> dict[str, OpDef]:
    _load_all()
    return dict(REGISTRY)


class OpCall:
    """What an op definition sees: the op, its types and attribute accessors.

    The interpreter subclasses it to add ``run_region`` (batched region
    application) and ``step_region`` (generator, for control flow).
    """

    # leading dims of every value when a region runs batched (see run_region)
    batch_shape: tuple[int, ...] = ()
    # control-flow ops fill these in (see hlolab/ops/control.py); the interpreter
    # provides operand_defs and last_defs
    operand_defs: list[Any] = []
    result_defs: list[Any] | None = None
    control_defs: list[Any] = []

    def __init__(self, op: Op, state: dict[str, Any] | None = None):
        self.op = op
        # per-run state shared by all ops of one execution (probes, printed values)
        self.state: dict[str, Any] = state if state is not None else {}

    @property
    def element_budget(self) -> int:
        """Elements an op may allocate for one intermediate (the interpreter's budget)."""
        return int(self.state.get("element_budget", ELEMENT_BUDGET))

    # --- types -----------------------------------------------------------
    @property
    def name(self) -> str:
        return self.op.name

    @property
    def loc(self) -> SourceLoc | None:
        return self.op.loc

    @property
    def operand_types(self) -> list[Type]:
        return self.op.operand_types

    @property
    def result_types(self) -> list[Type]:
        return self.op.result_types

    @property
    def result_type(self) -> Type:
        return self.op.results[0].type

    def result_tensor(self, i: int = 0) -> TensorType:
        t = self.op.results[i].type
        if not isinstance(t, TensorType):
            raise self.error(None, f"result #{i} must be a tensor, got {t}")
        return t

    def result_dtype(self, i: int = 0) -> np.dtype:
        return self.result_tensor(i).dtype

    # --- errors ----------------------------------------------------------
    def error(self, constraint: str | None, message: str) -> VerificationError:
        """A VerificationError naming this op and spec constraint, e.g. ``("C2", ...)``."""
        return VerificationError(self.op.name, constraint, message, self.op.loc)

    # --- attributes ------------------------------------------------------
    @property
    def opdef(self) -> OpDef | None:
        return lookup(self.op.name)

    @property
    def attrs(self) -> Any:
        """The op's attribute record, read from the IR once per op (``Op.record``)."""
        rec = self.op.record
        if rec is None:
            d = self.opdef
            cls = d.attrs if d is not None else Attrs
            rec = cls.from_ir(self.op.attributes, self.error)
            self.op.record = rec
        return rec


    # --- regions (the interpreter provides these) ------------------------
    def run_region(self, index: int, args: list[Any]) -> list[Any]:
        raise NotImplementedError("run_region needs an interpreter")

    def step_region(self, index: int, args: list[Any], iteration: int | None = None,
                    arg_defs: list[Any] | None = None):  # generator
        raise NotImplementedError("step_region needs an interpreter")

    @property
    def last_defs(self) -> list[Any]:
        raise NotImplementedError("last_defs needs an interpreter")
