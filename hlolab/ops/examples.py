"""Op parameter schemas, defaults and presets: one small runnable program per op.

An implemented op declares, in its own module, the parameters a user may set
(``Param``), named presets (``default``, ``spec-example``) and a ``build``
function turning resolved parameters into the pieces of one op (``OpParts``:
operand types, attribute texts, regions, the inferred result types). Front
ends (``hlolab export OP --param k=v``, the gallery, the TUI explorer) only
call ``schema_for`` / ``make_example`` here, so no front end knows any op::

    ex = make_example("gather", "default", {"slice_sizes": "1,2"})
    Session(ex.text).bind(ex.inputs)

The generic machinery lives here: parameter text parsing, the text of a
one-op ``@main`` in generic form, input fills, preset merging, lookup, and
one generic schema shared by every element-wise op.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hlolab.errors import HloLabError, UnsupportedError
from hlolab.limits import ELEMENT_BUDGET
from hlolab.types import ElementType, TensorType, element_type, tensor_type


class ParamError(HloLabError):
    """A bad op parameter: unknown name, malformed text or an impossible value."""


KINDS = ("shape", "dtype", "int", "ints", "pairs", "enum", "bool", "text", "number")
_FORMS = {
    "shape": "dims joined by 'x' like 2x3x4 ('scalar' or '' for rank 0)",
    "dtype": "an element type like f32, bf16, i32, ui8, i1",
    "int": "an integer like 3",
    "ints": "integers separated by commas like 1,2,3 ('' for none)",
    "pairs": "low,high pairs per dim separated by ';' like 1,1;0,2, or one int for every dim",
    "bool": "true or false",
    "text": "text",
    "number": "a number like 0, 1.5 or -inf ('identity' for the body's identity)",
}


# --- parameters ------------------------------------------------------------------------

# an example's integers size or index its tensors: beyond the interpreter's element budget is a typo
INT_LIMIT = ELEMENT_BUDGET


def _int(text: str) -> int:
    v = int(text)
    if abs(v) > INT_LIMIT:
        raise ValueError(f"{v} is out of range")
    return v


def _split_ints(text: str) -> tuple[int, ...]:
    body = text.strip().strip("[]()").strip()
    if not body:
        return ()
    return tuple(_int(p) for p in re.split(r"\s*,\s*|\s+", body))


@dataclass(frozen=True)
class Param:
    """One op parameter: its kind decides the text form ``parse`` accepts."""

    name: str
    kind: str
    default: Any
    doc: str
    choices: tuple[str, ...] = ()

    def expected(self) -> str:
        if self.kind == "enum":
            return "one of " + ", ".join(self.choices)
        return _FORMS[self.kind]

    def error(self, text: Any) -> ParamError:
        return ParamError(f"parameter '{self.name}': cannot read {text!r}: expected {self.expected()}")

    def parse(self, text: str) -> Any:
        """CLI/TUI text -> value; ParamError naming this parameter on bad text."""
        if not isinstance(text, str):
            return self.check(text)
        t = text.strip()
        try:
            value = self._parse(t)
        except (ValueError, UnsupportedError):
            raise self.error(text) from None
        return value

    def _parse(self, t: str) -> Any:
        k = self.kind
        if k == "shape":
            if t in ("", "scalar", "()", "[]"):
                return ()
            dims = tuple(_int(p) for p in t.lower().split("x"))
            if any(d < 0 for d in dims):
                raise ValueError(t)
            return dims
        if k == "dtype":
            element_type(t)  # raises UnsupportedError for unknown names
            return t
        if k == "int":
            return _int(t)
        if k == "ints":
            return _split_ints(t)
        if k == "pairs":
            if ";" not in t and "," not in t and t.lstrip("-").isdigit():
                return _int(t)  # one int: every dim, both sides (the builder broadcasts)
            if not t:
                return ()
            pairs = tuple(_split_ints(p) for p in t.split(";"))
            if any(len(p) != 2 for p in pairs):
                raise ValueError(t)
            return tuple((int(a), int(b)) for a, b in pairs)
        if k == "enum":
            if t not in self.choices:
                low = {c.lower(): c for c in self.choices}
                if t.lower() not in low:
                    raise ValueError(t)
                return low[t.lower()]
            return t
        if k == "bool":
            low = t.lower()
            if low in ("true", "1", "yes", "on"):
                return True
            if low in ("false", "0", "no", "off"):
                return False
            raise ValueError(t)
        if k == "number":
            if t.lower() in ("", "identity", "none", "auto"):
                return None
            v = float(t)
            return int(v) if re.fullmatch(r"[+-]?\d+", t) else v
        return t  # text

    def check(self, value: Any) -> Any:
        """A python value given directly: normalized to what ``parse`` returns (ParamError if wrong)."""
        try:
            return self.parse(self.format(value))
        except (TypeError, ValueError, AttributeError):
            raise self.error(value) from None

    def format(self, value: Any) -> str:
        """value -> the text ``parse`` accepts (round-trips)."""
        k = self.kind
        if k == "shape":
            return "x".join(str(int(d)) for d in value) if len(value) else "scalar"
        if k == "ints":
            return ",".join(str(int(v)) for v in value)
        if k == "pairs":
            if isinstance(value, (int, np.integer)):
                return str(int(value))
            return ";".join(f"{int(a)},{int(b)}" for a, b in value)
        if k == "bool":
            return "true" if value else "false"
        if k == "int":
            return str(int(value))
        if k == "number":
            if value is None:
                return "identity"
            return str(int(value)) if isinstance(value, (int, np.integer)) else repr(float(value))
        return str(value)


def shape_param(name: str, default: Sequence[int], doc: str) -> Param:
    return Param(name, "shape", tuple(default), doc)


def dtype_param(default: str = "f32", doc: str = "element type of the operands",
                name: str = "dtype") -> Param:
    return Param(name, "dtype", default, doc)


def ints_param(name: str, default: Sequence[int], doc: str) -> Param:
    return Param(name, "ints", tuple(default), doc)


def int_param(name: str, default: int, doc: str) -> Param:
    return Param(name, "int", default, doc)


def enum_param(name: str, choices: Sequence[str], default: str, doc: str) -> Param:
    return Param(name, "enum", default, doc, tuple(choices))


def bool_param(name: str, default: bool, doc: str) -> Param:
    return Param(name, "bool", default, doc)


# --- what a schema builds --------------------------------------------------------------

@dataclass
class Operand:
    """One operand of the op = one ``@main`` argument; ``value``: a default input (e.g. valid indices)."""

    name: str
    type: TensorType
    value: Any = None
    restart: bool = False  # an iota fill starts again at 1 (small kernels keep products readable)


@dataclass
class OpParts:
    """One op instance before it becomes text: the op's schema ``build`` returns this."""

    operands: list[Operand]
    results: list[TensorType]  # inferred by the op's shape formulas
    # the op's attribute record (hlolab.ops.record), or name -> generic-form attribute text
    attrs: Any = field(default_factory=dict)
    regions: list[str] = field(default_factory=list)  # region bodies ("^bb0(...): ...")
    index: tuple[int, ...] | None = None  # an interesting result element
    # more ``@main`` arguments, after the operands, that the op's regions read directly
    # (an if/case branch or a while body may use values defined above the op)
    captures: list[Operand] = field(default_factory=list)
    # a collective runs on a process grid (replicas, partitions): the text carries it as the
    # module's mhlo.num_replicas / mhlo.num_partitions and every process gets its own inputs
    grid: tuple[int, int] | None = None


@dataclass(frozen=True)
class OpSchema:
    op: str
    params: tuple[Param, ...]
    presets: dict[str, dict[str, Any]]  # name -> param values (+ "inputs": {operand: values}, "index")
    build: Callable[[dict[str, Any]], OpParts] = field(compare=False, repr=False)
    doc: str = ""

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise ParamError(f"{self.op} has no parameter '{name}'; parameters: "
                         + ", ".join(p.name for p in self.params))

    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}

    def resolve(self, preset: str = "default", params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Defaults, then the preset, then ``params`` (text is parsed), every value normalized."""
        if preset not in self.presets:
            raise ParamError(f"{self.op} has no preset '{preset}'; presets: " + ", ".join(self.presets))
        values = self.defaults()
        for source in (self.presets[preset], params or {}):
            for k, v in source.items():
                if k in PRESET_KEYS and source is self.presets[preset]:
                    continue
                p = self.param(k)
                values[k] = p.parse(v) if isinstance(v, str) else p.check(v)
        return values

    def infer(self, params: dict[str, Any]) -> list[TensorType]:
        """The result types of the op built from (resolved) ``params``."""
        return self.build(params).results


# preset entries that are not parameters; "process_inputs": {operand: [values of process 0, 1, ...]},
# "process": the process whose ``index`` element is the interesting one (on a grid)
PRESET_KEYS = ("inputs", "index", "process_inputs", "process")


@dataclass
class OpExample:
    """One verified one-op program. ``inputs`` is what ``Session.bind`` takes: per operand its
    values, or on a process grid (``grid`` of more than one process) per operand the values of
    every process stacked on a leading dim (process ``p = replica * partitions + partition``),
    which bind splits; ``process_inputs[p]`` are process ``p``'s operand values."""

    op: str
    preset: str
    params: dict[str, Any]
    text: str
    inputs: list[np.ndarray]
    index: tuple[int, ...] | None
    grid: tuple[int, int] = (1, 1)
    process_inputs: list[list[np.ndarray]] | None = None
    process: int = 0  # on a grid: the process of the interesting element ``index``

    @property
    def n_processes(self) -> int:
        return self.grid[0] * self.grid[1]


# --- registration and lookup -----------------------------------------------------------

_SCHEMAS: dict[str, OpSchema] = {}


def register_schema(schema: OpSchema) -> OpSchema:
    """Called by op modules at import; one schema per op name."""
    if schema.op in _SCHEMAS:
        raise RuntimeError(f"schema for {schema.op} registered twice")
    _SCHEMAS[schema.op] = schema
    return schema


def _names() -> dict[str, str]:
    """Every spelling (full, short, XLA alias; lower case) -> op name with a schema."""
    from hlolab.ops.registry import all_ops

    out: dict[str, str] = {}
    ready = [(name, d) for name, d in all_ops().items()
             if name in _SCHEMAS or _elementwise_spec(name, d) is not None]
    # an op's own names before any alias: one OpDef registered under two names (dot_general
    # and dot) shares its aliases, and "dot" must still mean stablehlo.dot
    for name, _ in ready:
        for n in (name, name.split(".", 1)[-1]):
            out.setdefault(n.lower(), name)
    for name, d in ready:
        for n in d.aliases:
            out.setdefault(n.lower(), name)
    return out


def schema_for(name: str) -> OpSchema | None:
    """The schema of op ``name`` ("stablehlo.gather", "gather", "Gather", "conv"); None if it has none."""
    full = _names().get(name.strip().lower())
    if full is None:
        return None
    return _SCHEMAS.get(full) or _elementwise_schema(full)


def schema_ops() -> list[str]:
    return sorted(set(_names().values()))


# --- text of one op --------------------------------------------------------------------

def array_i64(xs: Sequence[int]) -> str:
    return "array<i64" + (": " + ", ".join(str(int(x)) for x in xs) if len(xs) else "") + ">"


def array_i1(xs: Sequence[bool]) -> str:
    return "array<i1" + (": " + ", ".join("true" if x else "false" for x in xs) if len(xs) else "") + ">"


def dense_pairs(pairs: Sequence[tuple[int, int]]) -> str:
    body = "[" + ", ".join(f"[{int(a)}, {int(b)}]" for a, b in pairs) + "]"
    return f"dense<{body}> : tensor<{len(pairs)}x2xi64>"


def float_attr(value: float, et: str = "f32") -> str:
    """A float attribute in generic form (``0.001 : f32``); ValueError for inf/NaN, which
    have no decimal spelling."""
    v = float(value)
    if not np.isfinite(v):
        raise ValueError(f"{v} has no decimal float literal")
    return f"{v!r} : {et}"


def int_list(xs: Sequence[int]) -> str:
    return "[" + ", ".join(str(int(x)) for x in xs) + "]"


def broadcast_ints(value: Sequence[int], n: int) -> tuple[int, ...]:
    """One value for every dim ("2" -> 2,2,...), else the list as given (verify checks its size)."""
    return tuple(value) * n if len(value) == 1 and n != 1 else tuple(value)


def broadcast_pairs(value: Any, n: int) -> tuple[tuple[int, int], ...]:
    if isinstance(value, int):
        return ((value, value),) * n
    return tuple(value)


BODIES = {"add": "add", "max": "maximum", "min": "minimum", "mul": "multiply", "and": "and", "or": "or"}


def combiner_region(body: str, et: str, n: int = 1) -> str:
    """``^bb0(%a.., %b..)`` returning ``body(a_i, b_i)`` for each of n inputs (scalar tensors of ``et``);
    ``body`` is a key of BODIES or "replace" (returns b)."""
    t = f"tensor<{et}>"
    args = ", ".join([f"%a{i}: {t}" for i in range(n)] + [f"%b{i}: {t}" for i in range(n)])
    lines = [f"^bb0({args}):"]
    if body == "replace":  # the update replaces the current value
        rets = ", ".join(f"%b{i}" for i in range(n))
        return "\n".join(lines + [f'  "stablehlo.return"({rets}) : ({", ".join([t] * n)}) -> ()'])
    for i in range(n):
        lines.append(f'  %r{i} = "stablehlo.{BODIES[body]}"(%a{i}, %b{i}) : ({t}, {t}) -> {t}')
    rets = ", ".join(f"%r{i}" for i in range(n))
    lines.append(f'  "stablehlo.return"({rets}) : ({", ".join([t] * n)}) -> ()')
    return "\n".join(lines)


def compare_region(direction: str, ets: Sequence[str], lhs: int = 0, rhs: int = 1) -> str:
    """``^bb0`` over pairs of scalars of ``ets`` returning compare(arg lhs, arg rhs) (sort, select)."""
    types = [f"tensor<{e}>" for e in ets]
    args = ", ".join(f"%arg{i}: {t}" for i, t in enumerate(types))
    t = types[lhs]
    return (f"^bb0({args}):\n"
            f'  %p = "stablehlo.compare"(%arg{lhs}, %arg{rhs}) {{comparison_direction = '
            f"#stablehlo<comparison_direction {direction.upper()}>}} : ({t}, {t}) -> tensor<i1>\n"
            f'  "stablehlo.return"(%p) : (tensor<i1>) -> ()')


def identity_of(body: str, et: ElementType) -> float | int | bool:
    """The init value that leaves a reduction with ``body`` unchanged."""
    if body in ("add", "or"):
        return 0
    if body == "mul":
        return 1
    if body == "and":
        return 1 if et.is_bool else -1 if et.is_signed else int(et.max_value())
    if et.is_float:
        return float("-inf") if body == "max" else float("inf")
    return et.min_value() if body == "max" else et.max_value()


def scalar(value: Any, et: str) -> np.ndarray:
    """``value`` as a scalar of ``et``; an integer that does not fit is an error, not a wrap."""
    t = element_type(et)
    if isinstance(value, (float, np.floating)) and getattr(t, "is_int", False):
        if not float(value).is_integer():  # nan, inf, 2.5: no integer to give
            raise ParamError(f"value {value} is not an integer, as {et} needs")
        value = int(value)
    integral = isinstance(value, (int, np.integer)) and not isinstance(value, bool)
    if integral and getattr(t, "is_int", False):
        lo, hi = int(t.min_value()), int(t.max_value())
        if not lo <= int(value) <= hi:
            raise ParamError(f"value {value} does not fit {et} ([{lo}, {hi}])")
    return np.asarray(value).astype(t.dtype)


def inferred_results(op: str, rec: Any, operand_types: Sequence[Any], et: str) -> list[TensorType]:
    """The result types the op's ``infer`` gives for ``rec`` and ``operand_types``; a
    placeholder scalar of ``et`` when they admit none (verification then names the
    constraint the parameters break). A result type the op leaves open (``Partial``)
    cannot come from here: such a schema gives its result types itself."""
    from hlolab.ops.record import AsDeclared, InferError, Partial
    from hlolab.ops.registry import lookup

    d = lookup(op)
    assert d is not None and d.infer is not None, op
    try:
        out = d.infer(rec, list(operand_types))
    except InferError:
        return [tensor_type((), et)]
    if isinstance(out, AsDeclared) or any(isinstance(t, Partial) for t in out):
        raise RuntimeError(f"{op}: infer leaves a result type open; its schema must give it")
    return list(out)


def ttype(shape: Sequence[int], et: str) -> TensorType:
    if any(int(d) < 0 for d in shape):
        raise ValueError("negative dimension")
    return tensor_type(tuple(int(d) for d in shape), et)


def module_text(op: str, parts: OpParts) -> str:
    """``func.func @main(operands..., captures...) -> results { one generic op; return }``."""
    args = ", ".join(f"%{o.name}: {o.type}" for o in [*parts.operands, *parts.captures])
    res = [str(t) for t in parts.results]
    rsig = res[0] if len(res) == 1 else "(" + ", ".join(res) + ")"
    head = "%result" if len(res) == 1 else f"%result:{len(res)}"
    names = ["%result"] if len(res) == 1 else [f"%result#{i}" for i in range(len(res))]
    regions = ""
    if parts.regions:
        regions = " (" + ", ".join("{\n" + _indent(r, 4) + "\n  }" for r in parts.regions) + ")"
    attrs = ""
    texts = parts.attrs
    if not isinstance(texts, dict):  # a record writes its own IR attributes
        texts = {k: str(v) for k, v in texts.to_ir().items()}
    if texts:
        attrs = " {\n" + ",\n".join(f"    {k} = {v}" for k, v in texts.items()) + "\n  }"
    operands = ", ".join(f"%{o.name}" for o in parts.operands)
    in_sig = ", ".join(str(o.type) for o in parts.operands)
    func = (f"func.func @main({args}) -> {rsig} {{\n"
            f'  {head} = "{op}"({operands}){regions}{attrs} : ({in_sig}) -> {rsig}\n'
            f"  return {', '.join(names)} : {', '.join(res)}\n"
            "}\n")
    if parts.grid is None:
        return func
    r, p = parts.grid
    head = f"mhlo.num_replicas = {int(r)} : i32, mhlo.num_partitions = {int(p)} : i32"
    return f"module attributes {{{head}}} {{\n" + _indent(func, 2) + "\n}\n"


def _indent(text: str, n: int) -> str:
    return "\n".join(" " * n + ln for ln in text.splitlines())


# --- inputs ------------------------------------------------------------------------------

def fill_value(t: TensorType, fill: str, rng: np.random.Generator, offset: int = 0) -> np.ndarray:
    """``iota``: offset, offset + 1, ... in the element type (wrapping small types);
    ``random``: small values, readable in a cell."""
    shape = t.static_shape()
    et = t.element
    n = int(np.prod(shape, dtype=np.int64))
    kind = getattr(et, "kind", "")
    if fill == "iota":
        flat = np.arange(offset, offset + n, dtype=np.int64)
        if kind == "bool":
            flat = flat % 2
        elif kind in ("sint", "uint"):
            lo, hi = int(et.min_value()), int(et.max_value())
            flat = (flat - lo) % (hi - lo + 1) + lo if n and flat[-1] > hi else flat
        elif kind == "float" and n and flat[-1] > float(et.max_value()):
            flat = flat % int(et.max_value())
    elif fill == "random":
        if kind == "bool":
            flat = rng.integers(0, 2, size=n)
        elif kind == "uint":
            flat = rng.integers(0, min(10, int(et.max_value()) + 1), size=n)
        elif kind == "sint":
            flat = rng.integers(max(-5, int(et.min_value())), min(6, int(et.max_value()) + 1), size=n)
        else:
            flat = rng.integers(-5, 6, size=n) / (2 if kind == "float" else 1)
    else:
        raise ParamError(f"fill must be 'iota' or 'random', got {fill!r}")
    wide = np.float64 if kind in ("float", "complex") else np.int64
    return flat.astype(wide).astype(t.dtype).reshape(shape)


def _input(o: Operand, given: Any, fill: str, rng: np.random.Generator, offset: int = 0) -> np.ndarray:
    value = given if given is not None else o.value
    if value is None:
        return fill_value(o.type, fill, rng, offset)
    shape = o.type.static_shape()
    try:
        arr = np.asarray(value).astype(o.type.dtype)
        return arr.reshape(shape) if arr.size == int(np.prod(shape, dtype=np.int64)) else \
            np.broadcast_to(arr, shape).copy()
    except (ValueError, TypeError):
        raise ParamError(f"input %{o.name}: cannot make a {o.type} from {value!r}") from None


# --- make_example ------------------------------------------------------------------------

def build_parts(schema: OpSchema, values: dict[str, Any]) -> OpParts:
    """The op ``schema`` builds from resolved ``values``; a ParamError naming the values when
    they make no op (a schema's shape formula met values it did not expect)."""
    try:
        return schema.build(values)
    except (ValueError, IndexError, KeyError, TypeError, ZeroDivisionError) as e:
        raise ParamError(f"{schema.op}: these parameters do not make a valid op ({e}): "
                         + ", ".join(f"{k}={schema.param(k).format(v)}" for k, v in values.items())) from None


def make_example(name: str, preset: str = "default", params: dict[str, str | Any] | None = None,
                 fill: str = "iota", seed: int = 0, inputs: dict[str, Any] | None = None) -> OpExample:
    """Op ``name`` as a verified one-op program: the preset's values overridden by ``params``.
    ``inputs`` (operand name -> values, a scalar broadcasts) overrides the preset's inputs and
    the fill for those operands (the explorer's custom fill)."""
    schema = schema_for(name)
    if schema is None:
        raise ParamError(f"no parameter schema for op '{name}'; ops with one: " + ", ".join(schema_ops()))
    values = schema.resolve(preset, params)
    parts = build_parts(schema, values)
    for o in [*parts.operands, *parts.captures]:  # refuse before the fill allocates
        n = math.prod(int(d) for d in o.type.static_shape())
        if n > ELEMENT_BUDGET:
            raise ParamError(f"{schema.op}: operand %{o.name} : {o.type} has {n} elements, over the "
                             f"budget of {ELEMENT_BUDGET}")
    text = module_text(schema.op, parts)
    _verify(schema.op, text)
    given = {**schema.presets[preset].get("inputs", {}), **(inputs or {})}
    rng = np.random.default_rng(seed)
    if parts.grid is not None:
        per_process = {**schema.presets[preset].get("process_inputs", {})}
        for k in (inputs or {}):  # a value given now wins over the preset's per-process ones
            per_process.pop(k, None)
        process_inputs = _grid_inputs(parts, given, per_process, fill, rng)
        inputs = [np.stack([pv[i] for pv in process_inputs]) for i in range(len(process_inputs[0]))] \
            if process_inputs and process_inputs[0] else []
    else:
        process_inputs = None
        # iota fills start at 1, so a real 0 is never mistaken for zero padding, and continue
        # counting from operand to operand, so a diagram tells them apart
        inputs, offset = [], 1
        for o in [*parts.operands, *parts.captures]:
            inputs.append(_input(o, given.get(o.name), fill, rng, 1 if o.restart else offset))
            offset += int(inputs[-1].size) if given.get(o.name) is None and o.value is None else 0
            offset = 1 if o.restart else offset
    index = schema.presets[preset].get("index", parts.index)
    if index is None and parts.results and parts.results[0].rank:
        shape = parts.results[0].static_shape()
        index = tuple(d // 2 for d in shape) if all(shape) else None
    elif index is None and parts.results:
        index = ()
    return OpExample(schema.op, preset, values, text, inputs, None if index is None else tuple(index),
                     parts.grid or (1, 1), process_inputs, int(schema.presets[preset].get("process", 0)))


def _grid_inputs(parts: OpParts, given: dict[str, Any], per_process: dict[str, Any], fill: str,
                 rng: np.random.Generator) -> list[list[np.ndarray]]:
    """Every process's operand values: ``per_process`` (operand -> one value per process), else a
    ``given`` value (the same on every process, or stacked on a leading dim of one per process),
    else the fill, counting on from process to process within an operand, so every process
    sends different numbers and the exchange shows."""
    assert parts.grid is not None
    n = parts.grid[0] * parts.grid[1]
    out: list[list[np.ndarray]] = [[] for _ in range(n)]
    offset = 1
    for o in [*parts.operands, *parts.captures]:
        values = per_process.get(o.name)
        if values is not None and len(values) != n:
            raise ParamError(f"input %{o.name}: {len(values)} per-process values for {n} processes")
        g = given.get(o.name)
        if values is None and g is not None:
            arr = np.asarray(g)
            shape = tuple(o.type.static_shape())
            values = list(arr) if arr.shape == (n, *shape) and arr.shape != shape else [g] * n
        for p in range(n):
            if values is not None:
                out[p].append(_input(o, values[p], fill, rng))
                continue
            out[p].append(_input(o, None, fill, rng, 1 if o.restart else offset))
            offset += int(out[p][-1].size) if o.value is None else 0
        offset = 1 if o.restart else offset
    return out


def _verify(op_name: str, text: str) -> None:
    """Parse the module and run the op's verify (VerificationError names the op and its (Cn))."""
    from hlolab.ir.parser import parse_module
    from hlolab.ops.record import InferError
    from hlolab.ops.registry import OpCall, lookup

    module = parse_module(text, f"<{op_name} example>")
    for op in module.walk():
        d = lookup(op.name)
        if op.name != op_name or d is None:
            continue
        call = OpCall(op)
        if d.infer is not None:
            # parameters that admit no result type: the constraint infer names is the cause (the
            # placeholder result the schema wrote would only make verify blame the result)
            try:
                d.infer(call.attrs, list(call.operand_types))
            except InferError as e:
                raise call.error(e.constraint, str(e)) from None
        if d.verify is not None:
            d.verify(call)


# --- one generic schema for every element-wise op ---------------------------------------

@dataclass(frozen=True)
class _Elementwise:
    """How the generic schema types one element-wise op."""

    arity: int
    dtype: str = "f32"
    result: str | None = None  # result element type when it is not the operand's
    names: tuple[str, ...] = ()


_SPECIAL: dict[str, _Elementwise] = {
    "select": _Elementwise(3, "f32", names=("pred", "on_true", "on_false")),
    "clamp": _Elementwise(3, "f32", names=("min", "operand", "max")),
    "compare": _Elementwise(2, "f32", "i1", ("lhs", "rhs")),
    "is_finite": _Elementwise(1, "f32", "i1", ("x",)),
    "complex": _Elementwise(2, "f32", "complex", ("lhs", "rhs")),
    "real": _Elementwise(1, "complex<f32>", "part", ("operand",)),
    "imag": _Elementwise(1, "complex<f32>", "part", ("operand",)),
    "convert": _Elementwise(1, "i32", "f32", ("operand",)),
}
_INT_OPS = ("and", "or", "xor", "not", "popcnt", "count_leading_zeros", "shift_left",
            "shift_right_logical", "shift_right_arithmetic", "remainder")
_BINARY = ("add", "subtract", "multiply", "divide", "remainder", "power", "maximum", "minimum", "atan2",
           "and", "or", "xor", "shift_left", "shift_right_logical", "shift_right_arithmetic")
_DIRECTIONS = ("EQ", "NE", "GE", "GT", "LE", "LT")


def _elementwise_spec(name: str, d: Any) -> _Elementwise | None:
    short = name.removeprefix("stablehlo.")
    if not name.startswith("stablehlo.") or not getattr(d, "elementwise", False) or short == "constant":
        return None
    if short in _SPECIAL:
        return _SPECIAL[short]
    dtype = "i32" if short in _INT_OPS else "f32"
    return _Elementwise(2 if short in _BINARY else 1, dtype,
                        names=("lhs", "rhs") if short in _BINARY else ("operand",))


_EW_CACHE: dict[str, OpSchema] = {}


def _elementwise_schema(name: str) -> OpSchema | None:
    from hlolab.ops.registry import lookup

    if name in _EW_CACHE:
        return _EW_CACHE[name]
    spec = _elementwise_spec(name, lookup(name))
    if spec is None:
        return None
    params = [shape_param("shape", (2, 3), "shape of every operand and of the result"),
              dtype_param(spec.dtype, "element type of the operands")]
    short = name.removeprefix("stablehlo.")
    if short == "compare":
        params.append(enum_param("comparison_direction", _DIRECTIONS, "LT", "the comparison performed"))
    if short == "convert":
        params.append(dtype_param("f32", "element type of the result", "result_dtype"))

    def build(p: dict[str, Any]) -> OpParts:
        return _build_elementwise(short, spec, p)

    schema = OpSchema(name, tuple(params), {"default": {}}, build,
                      doc=f"{short}: the generic element-wise schema")
    _EW_CACHE[name] = schema
    return schema


def _build_elementwise(short: str, spec: _Elementwise, p: dict[str, Any]) -> OpParts:
    shape, et = p["shape"], p["dtype"]
    operands = [Operand(n, ttype(shape, et)) for n in spec.names]
    if short == "select":
        operands[0] = Operand("pred", ttype(shape, "i1"))
    res_et = et
    if spec.result == "i1":
        res_et = "i1"
    elif spec.result == "complex":
        res_et = f"complex<{et}>"
    elif spec.result == "part":
        res_et = et[len("complex<"):-1] if et.startswith("complex<") else et
    elif short == "convert":
        res_et = p["result_dtype"]
    rec: Any = {}  # the element-wise ops but compare have no attributes
    if short == "compare":
        from hlolab.ops.compare import CompareAttrs

        rec = CompareAttrs(comparison_direction=p["comparison_direction"])
    n = int(np.prod(shape, dtype=np.int64))
    if short == "compare":  # against the middle value, so some elements compare true and some false
        operands[1].value = np.full(shape, n // 2)
    if short == "clamp":  # min <= max so the diagram shows clamping on both sides
        operands[0].value = np.full(shape, max(1, n // 4))
        operands[2].value = np.full(shape, max(2, (3 * n) // 4))
    return OpParts(operands, [ttype(shape, res_et)], rec)


def valid_starts(indices_shape: Sequence[int], index_vector_dim: int, index_map: Sequence[int],
                 operand_shape: Sequence[int], window: Sequence[int]) -> np.ndarray | None:
    """In-range start indices for gather/scatter: component k of every index vector is in
    [0, dim(operand, index_map[k]) - window[index_map[k]]], varied so the windows differ.
    None when the parameters are inconsistent (verification reports that)."""
    try:
        shape = tuple(indices_shape)
        has_vec = index_vector_dim < len(shape)
        batch = tuple(n for d, n in enumerate(shape) if d != index_vector_dim)
        comps = shape[index_vector_dim] if has_vec else 1
        pos = np.arange(int(np.prod(batch, dtype=np.int64)), dtype=np.int64).reshape(batch)
        cols = []
        for k in range(comps):
            d = index_map[k]
            hi = max(0, operand_shape[d] - window[d])
            cols.append((pos * (2 * k + 1) + k) % (hi + 1))
        return np.stack(cols, axis=index_vector_dim) if has_vec else cols[0]
    except (IndexError, ValueError, TypeError):
        return None
