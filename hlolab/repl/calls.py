"""Builder-language statements applied to an ``XlaBuilder``: each call is bound to its
``hlolab.xla.FUNCTIONS`` entry through ``inspect.signature`` (never ``eval``).

What a parameter accepts follows its type hint: an ``XlaOp`` takes a value name, a
typed literal (``[[1,2]]:f32``) or a bare number (a constant of the other operands'
element type when that is one type), a ``Shape`` takes ``f32[2,3]``, an element type
takes ``f32``/``s32``, an ``XlaComputation`` takes a builder function's name
(``Add``: a scalar computation of the operands' element type), and a record
(``PaddingConfig``, ``GatherDimensionNumbers`` ...) may be written flat, its fields
as keywords (``RECORD_KEYWORDS``, the one table of them).
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable
from dataclasses import dataclass, fields, is_dataclass
from typing import Any

from hlolab.errors import HloLabError, ParseError
from hlolab.repl.language import (
    Bool,
    Call,
    ListLit,
    Node,
    Number,
    Ref,
    ShapeLit,
    Statement,
    String,
    error_at,
    literal_value,
    mlir_element_name,
)


@dataclass
class RecordKeywords:
    """The flat keywords of one record and how they make the record."""

    record: type
    keywords: tuple[str, ...]
    make: Callable[[dict[str, Any]], Any]


def _padding_config(kw: dict[str, Any]) -> Any:
    from hlolab.xla.shapes import PaddingConfig

    n = max((len(v) for v in kw.values()), default=0)
    lists = {}
    for k in ("low", "high", "interior"):
        v = list(kw.get(k, [0] * n))
        if len(v) != n:
            raise HloLabError(f"low=, high= and interior= need one entry per dimension: got lengths "
                              f"{ {k: len(v) for k, v in kw.items()} }")
        lists[k] = v
    return PaddingConfig.make(list(zip(lists["low"], lists["high"], lists["interior"])))


def record_keywords() -> dict[str, RecordKeywords]:
    """Record class name -> its flat keywords: the dataclass fields of each record in
    ``hlolab.xla.shapes``; ``PaddingConfig`` (a list of per-dimension records) takes
    ``low=``/``high=``/``interior=``, one list each, as XLA's text format does."""
    from hlolab.xla import shapes

    table: dict[str, RecordKeywords] = {}
    for name, cls in vars(shapes).items():
        if not (isinstance(cls, type) and is_dataclass(cls) and hasattr(cls, "fields")):
            continue
        keys = tuple(f.name for f in fields(cls))
        table[name] = RecordKeywords(cls, keys, lambda kw, cls=cls: cls(**kw))
    table["PaddingConfig"] = RecordKeywords(shapes.PaddingConfig, ("low", "high", "interior"),
                                            _padding_config)
    return table


def _annotation(p: inspect.Parameter) -> str:
    a = p.annotation
    if a is inspect.Parameter.empty:
        return ""
    return a if isinstance(a, str) else getattr(a, "__name__", str(a))


def param_kind(p: inspect.Parameter, records: dict[str, RecordKeywords]) -> str:
    """What a builder parameter takes: op, ops, computation, shape, etype, record:NAME, value."""
    a = _annotation(p)
    for name in records:
        if name in a:
            return f"record:{name}"
    if "XlaComputation" in a:
        return "computation"
    if "XlaOp" in a:
        return "ops" if ("Sequence" in a or "list" in a) and not a.startswith("XlaOp") else "op"
    if "Shape" in a:
        return "shape"
    if "Element" in a or "PrimitiveType" in a or "dtype" in a.lower():
        return "etype"
    return "value"


def describe_params(fn: Callable[..., Any], records: dict[str, RecordKeywords] | None = None) -> list[str]:
    """The parameters a user writes (the builder excluded), records with their flat keywords."""
    records = records if records is not None else record_keywords()
    out = []
    names = set(inspect.signature(fn).parameters)
    for i, p in enumerate(inspect.signature(fn).parameters.values()):
        if i == 0 and p.name == "builder":
            continue
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            out.append(("*" if p.kind == p.VAR_POSITIONAL else "**") + p.name)
            continue
        kind = param_kind(p, records)
        text = p.name
        flat = records[kind[7:]].keywords if kind.startswith("record:") else ()
        if flat and not set(flat) <= names:  # fields the function does not take itself
            text += " (or " + ", ".join(k + "=" for k in flat) + ")"
        out.append(text)
    return out


class Evaluator:
    """Applies builder-language statements to builder ``b``; ``functions`` is FUNCTIONS."""

    def __init__(self, b: Any, functions: dict[str, Callable[..., Any]], text: str):
        from hlolab.xla import XlaOp

        self.b = b
        self.functions = functions
        self.text = text
        self.records = record_keywords()
        self.XlaOp = XlaOp

    def error(self, col: int, message: str) -> ParseError:
        return error_at(self.text, col - 1, message)

    # --- values --------------------------------------------------------------------
    def lookup(self, node: Ref) -> Any:
        try:
            return self.b.lookup(node.name)
        except HloLabError:
            names = self.b.names()
            near = difflib.get_close_matches(node.name, names, 3)
            hint = f" (did you mean {', '.join(near)}?)" if near else \
                (f" (defined: {', '.join(names[:12])})" if names else " (nothing is defined yet)")
            raise self.error(node.col, f"no value named '{node.name}'{hint}") from None

    def constant(self, node: Node, etype: Any) -> Any:
        """A constant XlaOp of element type ``etype`` (an ElementType) from a literal; the
        builder checks that the values fit the type."""
        from hlolab.xla import FUNCTIONS

        plain = ListLit(node.col, node.items) if isinstance(node, ListLit) else node
        value = literal_value(plain)
        if value is None:
            raise self.error(node.col, "expected a number or a list of numbers")
        return FUNCTIONS["ConstantLiteral"](self.b, value, etype)

    def typed_literal(self, node: ListLit | Number) -> Any:
        from hlolab.xla.shapes import to_element_type

        et = to_element_type(mlir_element_name(node.etype) or node.etype)  # type: ignore[arg-type]
        return self.constant(node, et)

    def expr(self, node: Node, kind: str = "value") -> Any:
        """The value of ``node`` for a parameter of ``kind`` (see ``param_kind``)."""
        try:
            if isinstance(node, Call):
                return self.call(node)
            if isinstance(node, (ListLit, Number)) and node.etype is not None:
                return self.typed_literal(node)
        except HloLabError as e:  # a builder or verification error: at the call's column
            if e.loc is None:
                e.loc = error_at(self.text, node.col - 1, "").loc
            raise
        if kind == "shape":
            if not isinstance(node, ShapeLit):
                raise self.error(node.col, "expected a shape like f32[2,3]")
            from hlolab.xla import Shape

            return Shape.parse(node.text())
        if kind == "etype":
            if isinstance(node, Ref) and mlir_element_name(node.name):
                return node.name
            if isinstance(node, String):
                return node.value
            raise self.error(node.col, "expected an element type (f32, s32, pred, bf16, ...)")
        if isinstance(node, ShapeLit):
            from hlolab.xla import Shape

            return Shape.parse(node.text())
        if isinstance(node, Ref):
            if kind == "computation":
                return node  # resolved against the operands' element type by ``call``
            return self.lookup(node)
        if isinstance(node, ListLit):
            if kind == "ops":
                return [self.expr(i, "op") for i in node.items]
            items = [self.expr(i) for i in node.items]
            return items
        if isinstance(node, (Number, String, Bool)):
            return node.value
        raise self.error(node.col, "unexpected expression")

    # --- calls ---------------------------------------------------------------------
    def call(self, node: Call) -> Any:
        fn = self.functions.get(node.func)
        if fn is None:
            near = difflib.get_close_matches(node.func, list(self.functions), 3)
            hint = f" (did you mean {', '.join(near)}?)" if near else " (:ops lists them)"
            raise self.error(node.col, f"unknown builder function '{node.func}'{hint}")
        params = list(inspect.signature(fn).parameters.values())
        inject = bool(params) and params[0].name == "builder"
        if inject:
            params = params[1:]
        if node.func == "Parameter":
            return self.parameter(fn, node, params)
        positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        var_pos = next((p for p in params if p.kind == p.VAR_POSITIONAL), None)
        by_name = {p.name: p for p in params if p.kind != p.VAR_POSITIONAL}
        kinds = {p.name: param_kind(p, self.records) for p in params}
        bound: dict[str, Node] = {}
        extra: list[Node] = []
        for i, a in enumerate(node.args):
            if i < len(positional):
                bound[positional[i].name] = a
            elif var_pos is not None:
                extra.append(a)
            else:
                raise self.error(a.col, f"{node.func} takes {len(positional)} positional argument"
                                 f"{'s' if len(positional) != 1 else ''}: "
                                 f"{', '.join(describe_params(fn, self.records))}")
        flat: dict[str, dict[str, tuple[Node, int]]] = {}
        for kw in node.kwargs:
            if kw.name in by_name:
                if kw.name in bound:
                    raise self.error(kw.col, f"{node.func}: '{kw.name}' is given twice")
                bound[kw.name] = kw.value
                continue
            owner = next((n for n, k in kinds.items() if k.startswith("record:")
                          and kw.name in self.records[k[7:]].keywords), None)
            if owner is None:
                raise self.error(kw.col, f"{node.func} has no parameter '{kw.name}'; its parameters: "
                                 f"{', '.join(describe_params(fn, self.records))}")
            flat.setdefault(owner, {})[kw.name] = (kw.value, kw.col)
        # operands first: bare numbers take the element type the operands agree on
        values: dict[str, Any] = {}
        pending: list[str] = []
        for name, n in bound.items():
            k = kinds[name]
            if k == "op" and (isinstance(n, (Number, Bool)) or (isinstance(n, ListLit) and n.etype is None)):
                pending.append(name)
            elif k != "computation":
                values[name] = self.expr(n, k)
        extras = [self.expr(a, kinds[var_pos.name]) for a in extra] if var_pos is not None else []
        ops = [v for v in list(values.values()) + extras if isinstance(v, self.XlaOp)]
        ops += [o for v in values.values() if isinstance(v, list) for o in v if isinstance(o, self.XlaOp)]
        etypes = {str(o.type.element): o.type.element for o in ops if hasattr(o.type, "element")}
        if len(etypes) > 1:  # a predicate (select's, clamp's bounds are typed) does not decide
            etypes = {k: v for k, v in etypes.items() if k != "i1"}
        for name in pending:
            n = bound[name]
            if len(etypes) != 1:
                why = "no other operand has one" if not etypes else \
                    f"the operands have {', '.join(sorted(etypes))}"
                raise self.error(n.col, f"{node.func}: the element type of the constant for '{name}' is "
                                 f"ambiguous ({why}): write it typed, e.g. [[1,2]]:f32 or 0:f32")
            values[name] = self.constant(n, next(iter(etypes.values())))
        for name, n in bound.items():
            if kinds[name] == "computation":
                values[name] = self.computation(n, etypes, node.func)
        for owner, kws in flat.items():
            if owner in values:
                col = next(iter(kws.values()))[1]
                raise self.error(col, f"{node.func}: give '{owner}' or its fields, not both")
            rk = self.records[kinds[owner][7:]]
            try:
                values[owner] = rk.make({k: self.plain(v) for k, (v, _) in kws.items()})
            except (TypeError, HloLabError) as e:
                col = next(iter(kws.values()))[1]
                raise self.error(col, f"{node.func}: {getattr(e, 'message', e)}") from None
        missing = [p.name for p in params if p.default is inspect.Parameter.empty
                   and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.name not in values]
        if missing:
            raise self.error(node.end - 1 if node.end else node.col,
                             f"{node.func} needs {', '.join(missing)}; its parameters: "
                             f"{', '.join(describe_params(fn, self.records))}")
        # by keyword, except what must go by position: positional-only parameters, and all
        # positional ones when a *args parameter takes the extra arguments
        if extras:
            args = [values.pop(p.name, p.default) for p in positional] + extras
        else:
            args = [values.pop(p.name, p.default) for p in positional if p.kind == p.POSITIONAL_ONLY]
        if inject:
            args = [self.b] + args
        return fn(*args, **values)

    def plain(self, node: Node) -> Any:
        v = literal_value(node)
        if v is None:
            raise self.error(node.col, "expected a number or a list of numbers")
        return v

    def computation(self, node: Node, etypes: dict[str, Any], func: str) -> Any:
        """A scalar computation from a builder function's name (``Add``, ``Max``): two
        parameters of the operands' element type combined by it."""
        if not isinstance(node, Ref) or node.name not in self.functions:
            raise self.error(node.col, f"{func}: give the computation as a binary builder function "
                             "name, e.g. Add, Max, Min, Mul, And, Or")
        if len(etypes) != 1:
            raise self.error(node.col, f"{func}: cannot tell the element type of the computation "
                             f"{node.name} (operand types: {', '.join(sorted(etypes)) or 'none'})")
        from hlolab.xla import FUNCTIONS, Shape, XlaBuilder

        et = next(iter(etypes.values()))
        sub = XlaBuilder(node.name.lower())
        shape = Shape(et, ())
        x = FUNCTIONS["Parameter"](sub, 0, shape, "lhs")
        y = FUNCTIONS["Parameter"](sub, 1, shape, "rhs")
        root = self.functions[node.name](x, y)
        return sub.build(root)

    def parameter(self, fn: Callable[..., Any], node: Call, params: list[inspect.Parameter]) -> Any:
        """``Parameter(f32[2,3])``: the parameter number is the next free one; also
        ``Parameter(0, f32[2,3])`` and ``name=``."""
        args = list(node.args)
        kw = {k.name: k.value for k in node.kwargs}
        unknown = [k for k in node.kwargs if k.name not in {p.name for p in params}]
        if unknown:
            raise self.error(unknown[0].col, f"Parameter has no parameter '{unknown[0].name}'; its "
                             f"parameters: {', '.join(p.name for p in params)}")
        if args and isinstance(args[0], Number):
            number = args.pop(0).value
        else:
            number = kw.pop("parameter_number", None)
            number = self.plain(number) if number is not None else self.next_parameter()
        shape_node = args.pop(0) if args else kw.pop("shape", None)
        if shape_node is None:
            raise self.error(node.end - 1 if node.end else node.col, "Parameter needs a shape, e.g. "
                             "Parameter(f32[2,3])")
        shape = self.expr(shape_node, "shape")
        name_node = args.pop(0) if args else kw.pop("name", None)
        name = self.expr(name_node) if name_node is not None else None
        if args:
            raise self.error(args[0].col, "Parameter takes (shape), (number, shape) or (number, shape, name)")
        return fn(self.b, int(number), shape, name) if name is not None else fn(self.b, int(number), shape)

    def next_parameter(self) -> int:
        return getattr(self.b, "parameter_count", lambda: len(self.b.parameters()))()


def run_statement(b: Any, stmt: Statement, functions: dict[str, Callable[..., Any]]) -> list[Any]:
    """Apply a builder-language statement; the XlaOps it defines (named as its targets)."""
    ev = Evaluator(b, functions, stmt.text)
    result = ev.expr(stmt.expr, "op")
    if isinstance(stmt.expr, (Number, ListLit)) and stmt.expr.etype is None:
        raise ev.error(stmt.expr.col, "a constant needs its element type: write e.g. 1.5:f32 or "
                       "[[1,2],[3,4]]:s32")
    values = list(result) if isinstance(result, (list, tuple)) else [result]
    if not all(isinstance(v, ev.XlaOp) for v in values):
        raise ev.error(stmt.expr.col, "the statement makes no value of the program")
    if stmt.targets:
        if len(stmt.targets) != len(values):
            raise ev.error(stmt.targets[0][1], f"{len(stmt.targets)} name"
                           f"{'s' if len(stmt.targets) != 1 else ''} for {len(values)} value"
                           f"{'s' if len(values) != 1 else ''}")
        for (name, col), v in zip(stmt.targets, values):
            try:
                b.set_name(v, name)
            except HloLabError as e:
                raise ev.error(col, e.message) from None
    return values
