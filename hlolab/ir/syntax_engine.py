"""The format engine behind the pretty (custom assembly) forms of ops.

An op's pretty form is a format string in the spirit of MLIR's ODS
``assemblyFormat`` (the table is in ``hlolab.ir.syntax``); the same format
drives parsing (text -> canonical op, with the attribute names and classes of
the generic form) and printing (op -> text, when the op's attributes fit the
format; otherwise the printer falls back to the generic form). Format
elements, separated by blanks:

``$x``            one operand           ``$x*``   comma-separated operands
``$x*,``          operands, each followed by a comma (``%a, %b, dim = 0``)
``@name:kind``    an attribute; kinds: ``i64 i32 ui64 ui32 f64 bool str symref
                  dims`` (``[1, 2]`` -> ``array<i64: 1, 2>``), ``enum:DIALECT:KIND``
                  (``GT`` -> ``#stablehlo<comparison_direction GT>``) and ``attr``
``attr-dict``     remaining attributes ``{...}`` (``attr-dict-with-keyword``:
                  ``attributes {...}``)
``type:KIND``     the types: ``same functional results select tuple pairwise
                  complex all operands arrow variadic-same from-value``
``region``        a region written with its entry block
``custom:NAME``   an irregular piece (slice ranges, convolution window, ...),
                  defined in ``hlolab.ir.syntax_custom``
``(? ... ?)``     an optional group, present when its attribute (or operand
                  list) is; parsed when its first element is next
``~``             no blank here when printing
anything else     a literal keyword or punctuation
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from hlolab.ir.attrs import (
    Attr,
    BoolAttr,
    DenseArrayAttr,
    DenseElementsAttr,
    EnumAttr,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    SymbolRefAttr,
    escape_string,
    format_attr_dict,
)
from hlolab.ir.lexer import BARE, FLOAT, HASH, INT, STRING, VALUE
from hlolab.ir.module import Op, Value
from hlolab.types import ElementType, FunctionType, TensorType, TupleType, Type, element_type

if TYPE_CHECKING:
    from hlolab.ir.parser import Parser, PendingOp
    from hlolab.ir.printer import Printer

_PUNCTS = frozenset({",", ":", "=", "(", ")", "[", "]", "{", "}", "<", ">", "->", "?", "*"})
_INT_KINDS = ("i64", "i32", "ui64", "ui32")


# --------------------------------------------------------------------------
# format elements
# --------------------------------------------------------------------------
@dataclass
class Lit:
    text: str

    @property
    def is_punct(self) -> bool:
        return self.text in _PUNCTS


@dataclass
class OperandEl:
    name: str
    variadic: bool = False
    trailing_comma: bool = False


@dataclass
class AttrEl:
    name: str
    kind: str


@dataclass
class AttrDictEl:
    keyword: bool = False


@dataclass
class TypeEl:
    kind: str


@dataclass
class RegionEl:
    pass


@dataclass
class CustomEl:
    directive: Directive


@dataclass
class GroupEl:
    elements: list[Any]

    @property
    def anchor(self) -> str | None:
        """The attribute whose presence prints the group (None: the operands')."""
        for e in self.elements:
            if isinstance(e, AttrEl):
                return e.name
        return None


@dataclass
class GlueEl:
    pass


def _compile(fmt: str) -> list[Any]:
    stack: list[list[Any]] = [[]]
    for word in fmt.split():
        if word == "(?":
            stack.append([])
        elif word == "?)":
            group = GroupEl(stack.pop())
            stack[-1].append(group)
        elif word == "~":
            stack[-1].append(GlueEl())
        elif word.startswith("$"):
            trailing = word.endswith("*,")
            variadic = trailing or word.endswith("*")
            stack[-1].append(OperandEl(word[1:].rstrip("*,"), variadic, trailing))
        elif word.startswith("@") and ":" in word:
            name, kind = word[1:].split(":", 1)
            stack[-1].append(AttrEl(name, kind))
        elif word in ("attr-dict", "attr-dict-with-keyword"):
            stack[-1].append(AttrDictEl(word == "attr-dict-with-keyword"))
        elif word.startswith("type:"):
            stack[-1].append(TypeEl(word[5:]))
        elif word == "region":
            stack[-1].append(RegionEl())
        elif word.startswith("custom:"):
            stack[-1].append(CustomEl(DIRECTIVES[word[7:]]))  # registered by syntax_custom
        else:
            stack[-1].append(Lit(word))
    if len(stack) != 1:
        raise ValueError(f"unbalanced optional group in format {fmt!r}")
    return stack[0]


def _walk(elements: list[Any]) -> Any:
    for e in elements:
        if isinstance(e, GroupEl):
            yield from _walk(e.elements)
        else:
            yield e


# --------------------------------------------------------------------------
# parsing and printing state
# --------------------------------------------------------------------------
@dataclass
class ParseState:
    p: Parser
    pending: PendingOp
    n_results: int | None  # fixed result count of the op, when the format needs it


@dataclass
class PrintState:
    op: Op
    pr: Printer
    indent: str
    slots: dict[str, list[Value]]  # operand element name -> its operands


# custom:NAME directives, filled in by hlolab.ir.syntax_custom
DIRECTIVES: dict[str, Directive] = {}


class Directive:
    """An irregular piece of syntax: parses into / prints from some attributes."""

    attrs: tuple[str, ...] = ()
    takes_operands = False  # the directive parses and prints the op's operands itself

    def parse(self, st: ParseState) -> None:
        raise NotImplementedError

    def fits(self, op: Op) -> bool:
        raise NotImplementedError

    def print(self, ps: PrintState) -> str | None:
        raise NotImplementedError

    def first_is(self, p: Parser) -> bool:
        """Whether the directive's text starts here (for optional groups)."""
        return False


# --------------------------------------------------------------------------
# attribute kinds
# --------------------------------------------------------------------------
def _parse_attr_kind(p: Parser, kind: str) -> Attr:
    t = p.tok
    if kind in _INT_KINDS:
        return IntegerAttr(p.parse_int(), element_type(kind))
    if kind in ("f64", "f32"):
        neg = p.accept_punct("-")
        if p.tok.kind not in (INT, FLOAT):
            raise p.error(f"expected a number, got {p.tok.describe()}")
        nt = p.advance()
        text = ("-" if neg else "") + nt.text
        if nt.text.startswith("0x"):
            from hlolab.ir.parser import _float_from_bits

            return FloatAttr(_float_from_bits(int(nt.text, 16), element_type(kind)), element_type(kind),
                             nt.text)
        return FloatAttr(float(text), element_type(kind), text)
    if kind == "bool":
        if t.kind == BARE and t.text in ("true", "false"):
            p.advance()
            return BoolAttr(t.text == "true")
        raise p.error(f"expected true or false, got {t.describe()}")
    if kind == "str":
        if t.kind != STRING:
            raise p.error(f"expected a string, got {t.describe()}")
        p.advance()
        return StringAttr(p.string_value(t))
    if kind == "symref":
        return p.parse_symbol_ref()
    if kind == "dims":
        return DenseArrayAttr("i64", tuple(p.parse_int_list()))
    if kind.startswith("enum:"):
        _, dialect, enum_kind = kind.split(":")
        if t.kind == HASH:
            a = p.parse_attr()
            if not (isinstance(a, EnumAttr) and a.dialect == dialect and a.kind == enum_kind):
                raise p.error(f"expected a #{dialect}<{enum_kind} ...> value, got {a}", t.start)
            return a
        if t.kind != BARE:
            raise p.error(f"expected a {enum_kind} value, got {t.describe()}")
        p.advance()
        return EnumAttr(dialect, enum_kind, t.text)
    if kind == "attr":
        return p.parse_attr()
    raise AssertionError(f"unknown attribute kind {kind}")


def _attr_fits(a: Any, kind: str) -> bool:
    if kind in _INT_KINDS:
        return isinstance(a, IntegerAttr) and a.type == element_type(kind)
    if kind in ("f64", "f32"):
        return isinstance(a, FloatAttr) and a.type == element_type(kind)
    if kind == "bool":
        return isinstance(a, BoolAttr)
    if kind == "str":
        return isinstance(a, StringAttr)
    if kind == "symref":
        return isinstance(a, SymbolRefAttr)
    if kind == "dims":
        return isinstance(a, DenseArrayAttr) and a.element == "i64"
    if kind.startswith("enum:"):
        _, dialect, enum_kind = kind.split(":")
        return isinstance(a, EnumAttr) and a.dialect == dialect and a.kind == enum_kind \
            and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", a.value) is not None
    return kind == "attr"


def float_text(a: FloatAttr) -> str:
    """A float literal that parses back to the same value."""
    if a.text is not None:
        return a.text
    v = float(a.value)
    if np.isfinite(v):
        return repr(v)
    bits = np.array([v], dtype=np.float64).view(np.uint64)[0]
    return f"0x{int(bits):016X}"


def _print_attr_kind(a: Any, kind: str) -> str:
    if kind in _INT_KINDS:
        return str(a.value)
    if kind in ("f64", "f32"):
        return float_text(a)
    if kind == "bool":
        return "true" if a.value else "false"
    if kind == "str":
        return '"' + escape_string(a.value) + '"'
    if kind == "dims":
        return "[" + ", ".join(str(v) for v in a.values) + "]"
    if kind.startswith("enum:"):
        return a.value
    return str(a)


# --------------------------------------------------------------------------
# types
# --------------------------------------------------------------------------
def _real_type(t: Type) -> Type | None:
    if isinstance(t, TensorType) and isinstance(t.element, ElementType) and t.element.is_complex:
        return TensorType(t.shape, t.element.component, t.encoding)
    return None


def _assign_function(st: ParseState, ft: FunctionType, at: int) -> None:
    n = len(st.pending.uses)
    if len(ft.inputs) != n:
        raise st.p.error(f"{n} operands present, but the type lists {len(ft.inputs)}", at)
    st.pending.operand_types = list(ft.inputs)
    st.pending.result_types = list(ft.results)


def parse_types(st: ParseState, kind: str) -> None:
    p, pending = st.p, st.pending
    at = p.tok.start
    n = len(pending.uses)
    if kind == "functional":
        ft = p.parse_type()
        if not isinstance(ft, FunctionType):
            raise p.error(f"expected a function type (inputs) -> results, got {ft}", at)
        _assign_function(st, ft, at)
    elif kind in ("same", "variadic-same"):
        t = p.parse_type()
        if isinstance(t, FunctionType):
            _assign_function(st, t, at)
            if len(t.results) != 1:
                raise p.error("expected a single result type", at)
        else:
            pending.operand_types = [t] * n
            pending.result_types = [t]
    elif kind == "results":
        pending.result_types = p.parse_type_list()
    elif kind == "select":
        types = p.parse_type_list()
        if len(types) == 1 and isinstance(types[0], FunctionType):
            _assign_function(st, types[0], at)
        elif len(types) == 2 and n == 3:
            pending.operand_types = [types[0], types[1], types[1]]
            pending.result_types = [types[1]]
        else:
            raise p.error("expected a function type or two types (predicate, result)", at)
    elif kind == "tuple":
        t = p.parse_type()
        if not isinstance(t, TupleType):
            raise p.error(f"expected a tuple type, got {t}", at)
        if len(t.types) != n:
            raise p.error(f"{n} operands present, but the tuple type has {len(t.types)} elements", at)
        pending.operand_types = list(t.types)
        pending.result_types = [t]
    elif kind == "pairwise":
        types = p.parse_type_list()
        if len(types) != n:
            raise p.error(f"{n} operands present, but {len(types)} types given", at)
        pending.operand_types = list(types)
        pending.result_types = list(types)
    elif kind == "complex":
        t = p.parse_type()
        if isinstance(t, FunctionType):
            _assign_function(st, t, at)
        else:
            real = _real_type(t)
            if real is None:
                raise p.error(f"expected a tensor type with complex elements, got {t}", at)
            pending.operand_types = [real] * n
            pending.result_types = [t]
    elif kind == "all":
        t = p.parse_type()
        pending.operand_types = [t] * n
        count = st.n_results if st.n_results is not None else sum(c for _, c, _ in p.pending_groups)
        pending.result_types = [t] * count
    elif kind == "operands":
        types = p.parse_type_list()
        if len(types) != n:
            raise p.error(f"{n} operands present, but {len(types)} types given", at)
        pending.operand_types = list(types)
        pending.result_types = []
    elif kind == "arrow":
        types = p.parse_type_list()
        if len(types) != n:
            raise p.error(f"{n} operands present, but {len(types)} types given", at)
        p.expect_punct("->", "before the result types")
        pending.operand_types = list(types)
        pending.result_types = p.parse_result_types()
    elif kind == "from-value":
        value = pending.attributes.get("value")
        if isinstance(value, DenseElementsAttr):
            pending.operand_types = [value.type] + [None] * (n - 1)
    else:
        raise AssertionError(f"unknown type directive {kind}")


def _types_fit(op: Op, kind: str, n_results: int | None) -> bool:
    ins, outs = op.operand_types, op.result_types
    if kind == "functional":
        return True
    if kind in ("same", "variadic-same", "complex"):
        return len(outs) == 1
    if kind == "results":
        return len(outs) >= 1 and not ins
    if kind == "select":
        return len(ins) == 3 and len(outs) == 1
    if kind == "tuple":
        return len(outs) == 1 and isinstance(outs[0], TupleType) and list(outs[0].types) == ins
    if kind == "pairwise":
        return ins == outs and len(ins) > 0
    if kind == "all":
        return (len(ins) > 0 and all(t == ins[0] for t in ins + outs)
                and (n_results is None or len(outs) == n_results))
    if kind == "operands":
        return len(ins) > 0 and not outs
    if kind == "arrow":
        return len(ins) > 0 and len(outs) >= 1
    if kind == "from-value":
        value = op.attributes.get("value")
        return (isinstance(value, DenseElementsAttr) and len(ins) >= 1 and ins[0] == value.type
                and len(outs) == (n_results or 0))
    return False


def fn_type_text(op: Op) -> str:
    return str(FunctionType(tuple(op.operand_types), tuple(op.result_types)))


def _print_types(op: Op, kind: str) -> str | None:
    ins, outs = op.operand_types, op.result_types
    if kind == "functional":
        return fn_type_text(op)
    if kind in ("same", "variadic-same"):
        return str(outs[0]) if all(t == outs[0] for t in ins) else fn_type_text(op)
    if kind == "results":
        return ", ".join(str(t) for t in outs)
    if kind == "select":
        if ins[1] == outs[0] and ins[2] == outs[0]:
            return f"{ins[0]}, {outs[0]}"
        return fn_type_text(op)
    if kind == "tuple":
        return str(outs[0])
    if kind in ("pairwise", "operands"):
        return ", ".join(str(t) for t in ins)
    if kind == "complex":
        real = _real_type(outs[0])
        return str(outs[0]) if real is not None and all(t == real for t in ins) else fn_type_text(op)
    if kind == "all":
        return str(ins[0])
    if kind == "arrow":
        res = str(outs[0]) if len(outs) == 1 and not isinstance(outs[0], FunctionType) \
            else "(" + ", ".join(str(t) for t in outs) + ")"
        return ", ".join(str(t) for t in ins) + " -> " + res
    if kind == "from-value":
        return None
    raise AssertionError(kind)


# --------------------------------------------------------------------------
# op syntaxes
# --------------------------------------------------------------------------
class OpSyntax:
    """How one op is spelled in its pretty form.

    ``defaults`` are default-valued attributes: MLIR leaves them out of the
    pretty form, so an attribute equal to its default is dropped from the
    canonical op whichever form it was written in.
    """

    inherent: frozenset[str] = frozenset()
    defaults: dict[str, Attr] = {}

    def parse(self, p: Parser, name: str) -> PendingOp:
        raise NotImplementedError

    def fits(self, op: Op) -> bool:
        raise NotImplementedError

    def print(self, op: Op, pr: Printer, indent: str) -> str:
        """The text after the op name (with its leading blank, if any)."""
        raise NotImplementedError

    def mark_props(self, pending: PendingOp) -> None:
        pending.prop_names = {k for k in pending.attributes if k in self.inherent}


class FormatSyntax(OpSyntax):
    def __init__(self, fmt: str, inherent: tuple[str, ...] = (), n_results: int | None = None,
                 derive: Callable[[PendingOp], dict[str, Attr]] | None = None,
                 derived: tuple[str, ...] = (), defaults: dict[str, Attr] | None = None):
        self.fmt = fmt
        self.defaults = dict(defaults or {})
        self.elements = _compile(fmt)
        self.n_results = n_results
        self.derive = derive
        flat = list(_walk(self.elements))
        self.operands = [e for e in flat if isinstance(e, OperandEl)]
        self.attr_els = [e for e in flat if isinstance(e, AttrEl)]
        self.customs = [e.directive for e in flat if isinstance(e, CustomEl)]
        self.type_els = [e for e in flat if isinstance(e, TypeEl)]
        self.n_regions = sum(isinstance(e, RegionEl) for e in flat)
        consumed = {e.name for e in self.attr_els}
        for d in self.customs:
            consumed.update(d.attrs)
        self.derived_names = frozenset(derived)  # attributes ``derive`` computes
        self.consumed = frozenset(consumed) | self.derived_names
        self.inherent = frozenset(inherent) | self.consumed | frozenset(self.defaults)
        self.has_attr_dict = any(isinstance(e, AttrDictEl) for e in flat)

    # --- parsing ----------------------------------------------------------
    def parse(self, p: Parser, name: str) -> PendingOp:
        from hlolab.ir.parser import PendingOp

        st = ParseState(p, PendingOp(name), self.n_results)
        self._parse_elements(st, self.elements)
        pending = st.pending
        if not self.type_els and pending.operand_types is None:
            pending.result_types = []
        if self.derive is not None:
            pending.attributes.update(self.derive(pending))
        self.mark_props(pending)
        return pending

    def _parse_elements(self, st: ParseState, elements: list[Any]) -> None:
        for e in elements:
            self._parse_element(st, e)

    def _parse_element(self, st: ParseState, e: Any) -> None:
        p, pending = st.p, st.pending
        if isinstance(e, Lit):
            if e.is_punct:
                p.expect_punct(e.text, f"in {pending.name}")
            else:
                p.expect_bare(e.text, f"in {pending.name}")
        elif isinstance(e, OperandEl):
            if not e.variadic:
                pending.uses.append(p.parse_value_use())
            elif e.trailing_comma:
                while p.tok.kind == VALUE:
                    pending.uses.append(p.parse_value_use())
                    p.expect_punct(",", f"after the operand in {pending.name}")
            elif p.tok.kind == VALUE:
                pending.uses.append(p.parse_value_use())
                while p.at_punct(",") and p.peek().kind == VALUE:
                    p.advance()
                    pending.uses.append(p.parse_value_use())
        elif isinstance(e, AttrEl):
            at = p.tok.start
            if e.name in pending.attributes:
                raise p.error(f"attribute '{e.name}' given twice", at)
            pending.attributes[e.name] = _parse_attr_kind(p, e.kind)
        elif isinstance(e, AttrDictEl):
            if e.keyword:
                if not p.accept_bare("attributes"):
                    return
            elif not p.at_punct("{"):
                return
            at = p.tok.start
            for k, v in p.parse_attr_dict().items():
                if k in pending.attributes:
                    raise p.error(f"attribute '{k}' is already written in the syntax of "
                                  f"{pending.name}", at)
                pending.attributes[k] = v
        elif isinstance(e, TypeEl):
            parse_types(st, e.kind)
        elif isinstance(e, RegionEl):
            pending.regions.append(p.parse_region())
        elif isinstance(e, CustomEl):
            e.directive.parse(st)
        elif isinstance(e, GroupEl):
            if self._group_starts(p, e):
                self._parse_elements(st, e.elements)
        elif isinstance(e, GlueEl):
            pass
        else:
            raise AssertionError(e)

    def _group_starts(self, p: Parser, g: GroupEl) -> bool:
        first = next(e for e in g.elements if not isinstance(e, GlueEl))
        if isinstance(first, Lit):
            return p.at_punct(first.text) if first.is_punct else p.at_bare(first.text)
        if isinstance(first, OperandEl):
            return p.tok.kind == VALUE
        if isinstance(first, CustomEl):
            return first.directive.first_is(p)
        raise AssertionError(f"optional group starting with {first}")

    # --- printing ---------------------------------------------------------
    def _slots(self, op: Op) -> dict[str, list[Value]] | None:
        if any(d.takes_operands for d in self.customs):
            return {}
        singles = [e for e in self.operands if not e.variadic]
        variadic = [e for e in self.operands if e.variadic]
        n = len(op.operands)
        if len(variadic) > 1:
            return None
        if not variadic:
            if n != len(singles):
                return None
            return {e.name: [v] for e, v in zip(singles, op.operands, strict=True)}
        if n < len(singles):
            return None
        out: dict[str, list[Value]] = {}
        i = 0
        for e in self.operands:
            count = n - len(singles) if e.variadic else 1
            out[e.name] = list(op.operands[i:i + count])
            i += count
        return out

    def fits(self, op: Op) -> bool:
        if len(op.regions) != self.n_regions or self._slots(op) is None:
            return False
        if not self.has_attr_dict and any(k not in self.consumed for k in op.attributes):
            return False
        for e in self.attr_els:
            if e.name in op.attributes:
                if not _attr_fits(op.attributes[e.name], e.kind):
                    return False
            elif not self._optional(e.name):
                return False
        for d in self.customs:
            if not d.fits(op):
                return False
        if self.derive is not None and not self._derived_match(op):
            return False
        if self.n_results is not None and len(op.results) != self.n_results:
            return False
        return all(_types_fit(op, t.kind, self.n_results) for t in self._present_types(op, self.elements))

    def _present_types(self, op: Op, elements: list[Any]) -> Any:
        """The type directives that print for ``op`` (those of absent groups do not)."""
        for e in elements:
            if isinstance(e, TypeEl):
                yield e
            elif isinstance(e, GroupEl):
                anchor = e.anchor
                if (anchor in op.attributes) if anchor is not None else bool(op.operands):
                    yield from self._present_types(op, e.elements)

    def _optional(self, attr_name: str) -> bool:
        def in_group(elements: list[Any], inside: bool) -> bool | None:
            for e in elements:
                if isinstance(e, GroupEl):
                    r = in_group(e.elements, True)
                    if r is not None:
                        return r
                elif isinstance(e, AttrEl) and e.name == attr_name:
                    return inside
            return None
        return bool(in_group(self.elements, False))

    def _derived_match(self, op: Op) -> bool:
        from hlolab.ir.parser import PendingOp

        probe = PendingOp(op.name, operand_types=list(op.operand_types),
                          result_types=list(op.result_types), attributes=dict(op.attributes))
        want = self.derive(probe)  # type: ignore[misc]
        return all(op.attributes.get(k) == v for k, v in want.items())

    def print(self, op: Op, pr: Printer, indent: str) -> str:
        slots = self._slots(op)
        assert slots is not None
        ps = PrintState(op, pr, indent, slots)
        frags = self._print_elements(ps, self.elements)
        return _join(frags)

    def _print_elements(self, ps: PrintState, elements: list[Any]) -> list[str]:
        out: list[str] = []
        for e in elements:
            if isinstance(e, GroupEl):
                anchor = e.anchor
                present = (anchor in ps.op.attributes) if anchor is not None else bool(ps.op.operands)
                if present:
                    out.extend(self._print_elements(ps, e.elements))
                continue
            frag = self._print_element(ps, e)
            if frag is not None:
                out.append(frag)
        return out

    def _print_element(self, ps: PrintState, e: Any) -> str | None:
        op = ps.op
        if isinstance(e, Lit):
            return e.text
        if isinstance(e, GlueEl):
            return GLUE
        if isinstance(e, OperandEl):
            vals = ps.slots[e.name]
            if e.trailing_comma:
                return " ".join(v.name + "," for v in vals) or None
            return ", ".join(v.name for v in vals) or None
        if isinstance(e, AttrEl):
            return _print_attr_kind(op.attributes[e.name], e.kind)
        if isinstance(e, AttrDictEl):
            rest = {k: v for k, v in op.attributes.items() if k not in self.consumed}
            if not rest:
                return None
            text = format_attr_dict(rest)
            return "attributes " + text if e.keyword else text
        if isinstance(e, TypeEl):
            return _print_types(op, e.kind)
        if isinstance(e, RegionEl):
            idx = sum(isinstance(x, RegionEl) for x in self._flat_until(e))
            return ps.pr.region(op.regions[idx], ps.indent, entry_args=True)
        if isinstance(e, CustomEl):
            return e.directive.print(ps)
        raise AssertionError(e)

    def _flat_until(self, target: Any) -> list[Any]:
        out = []
        for e in _walk(self.elements):
            if e is target:
                break
            out.append(e)
        return out


GLUE = "\x00"
_NO_SPACE_BEFORE = (",", ")", "]", "}")
_NO_SPACE_AFTER = ("(", "[", "{")


def _join(frags: list[str]) -> str:
    """Fragments joined MLIR-style: blanks between, none inside brackets or
    before commas; a leading blank unless the text is glued to the op name."""
    out = ""
    glue = False
    for f in frags:
        if f == GLUE:
            glue = True
            continue
        if out and not glue and not f.startswith(_NO_SPACE_BEFORE) and not out.endswith(_NO_SPACE_AFTER):
            out += " "
        elif not out and not glue:
            out = " "
        out += f
        glue = False
    return out
