"""The irregular pieces of op syntax: custom directives (slice ranges,
convolution window, dot dimension numbers, ...) and whole-op syntaxes
(constant, while, reduce), in the style of StableHLO's AssemblyFormat.cpp."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import numpy as np

from hlolab.ir.attrs import (
    ArrayAttr,
    Attr,
    DenseArrayAttr,
    DenseElementsAttr,
    EnumAttr,
    IntegerAttr,
    StringAttr,
    StructAttr,
    format_attr_dict,
    format_symbol,
)
from hlolab.ir.lexer import BARE, INT
from hlolab.ir.module import Block, Op, Region, Value
from hlolab.ir.structs import SCHEMAS, ConvDimsAttr, DimsStructAttr, make_struct
from hlolab.ir.syntax_engine import (
    DIRECTIVES,
    Directive,
    OpSyntax,
    ParseState,
    PrintState,
    fn_type_text,
    parse_types,
)
from hlolab.types import FunctionType, TensorType, Type, element_type

if TYPE_CHECKING:
    from hlolab.ir.parser import Parser, PendingOp
    from hlolab.ir.printer import Printer


def _i64_array(a: Any) -> bool:
    return isinstance(a, DenseArrayAttr) and a.element == "i64"


class SliceRanges(Directive):
    """``[1:3, 0:8:2]`` -> start_indices, limit_indices, strides."""

    attrs = ("start_indices", "limit_indices", "strides")

    def parse(self, st: ParseState) -> None:
        p = st.p
        p.expect_punct("[", "to open the slice ranges")
        start, limit, stride = [], [], []
        if not p.accept_punct("]"):
            while True:
                start.append(p.parse_int("a slice start"))
                p.expect_punct(":", "between the slice start and limit")
                limit.append(p.parse_int("a slice limit"))
                stride.append(p.parse_int("a slice stride") if p.accept_punct(":") else 1)
                if p.accept_punct("]"):
                    break
                p.expect_punct(",", "or ']' in the slice ranges")
        for name, vals in zip(self.attrs, (start, limit, stride), strict=True):
            st.pending.attributes[name] = DenseArrayAttr("i64", tuple(vals))

    def fits(self, op: Op) -> bool:
        a = [op.attributes.get(n) for n in self.attrs]
        return all(_i64_array(x) for x in a) and len({len(x.values) for x in a}) == 1  # type: ignore

    def print(self, ps: PrintState) -> str:
        a = [ps.op.attributes[n].values for n in self.attrs]
        parts = [f"{s}:{lim}" + (f":{st}" if st != 1 else "") for s, lim, st in zip(*a, strict=True)]
        return "[" + ", ".join(parts) + "]"


class ConvDims(Directive):
    attrs = ("dimension_numbers",)

    def parse(self, st: ParseState) -> None:
        st.pending.attributes["dimension_numbers"] = st.p.parse_conv_dims()

    def fits(self, op: Op) -> bool:
        return isinstance(op.attributes.get("dimension_numbers"), ConvDimsAttr)

    def print(self, ps: PrintState) -> str:
        return ps.op.attributes["dimension_numbers"].body()


_WINDOW_KEYS = {"stride": "window_strides", "pad": "padding", "lhs_dilate": "lhs_dilation",
                "rhs_dilate": "rhs_dilation", "reverse": "window_reversal"}
_I64 = element_type("i64")


class Window(Directive):
    """``stride = [..], pad = [[..], ..], lhs_dilate = [..], rhs_dilate = [..], reverse = [..]``."""

    attrs = tuple(_WINDOW_KEYS.values())

    def parse(self, st: ParseState) -> None:
        p, attrs = st.p, st.pending.attributes
        if p.at_punct("}"):
            return
        while True:
            kt = p.expect_kind(BARE, "a window attribute (stride, pad, lhs_dilate, rhs_dilate, reverse)")
            name = _WINDOW_KEYS.get(kt.text)
            if name is None:
                raise p.error(f"unknown window attribute '{kt.text}'; expected stride, pad, lhs_dilate, "
                              "rhs_dilate or reverse", kt.start)
            if name in attrs:
                raise p.error(f"duplicate window attribute '{kt.text}'", kt.start)
            p.expect_punct("=", f"after '{kt.text}'")
            if kt.text == "pad":
                attrs[name] = self._parse_pad(p)
            elif kt.text == "reverse":
                attrs[name] = DenseArrayAttr("i1", tuple(self._parse_bools(p)))
            else:
                attrs[name] = DenseArrayAttr("i64", tuple(p.parse_int_list()))
            if not p.accept_punct(","):
                return

    @staticmethod
    def _parse_pad(p: Parser) -> DenseElementsAttr:
        p.expect_punct("[", "to open the padding")
        pairs: list[list[int]] = []
        if not p.accept_punct("]"):
            while True:
                at = p.tok.start
                pair = p.parse_int_list()
                if len(pair) != 2:
                    raise p.error(f"expected a [low, high] padding pair, got {len(pair)} values", at)
                pairs.append(pair)
                if p.accept_punct("]"):
                    break
                p.expect_punct(",", "or ']' in the padding")
        arr = np.array(pairs, dtype=np.int64).reshape(len(pairs), 2)
        return DenseElementsAttr(TensorType((len(pairs), 2), _I64), arr)

    @staticmethod
    def _parse_bools(p: Parser) -> list[bool]:
        p.expect_punct("[", "to open the window reversal")
        out: list[bool] = []
        if p.accept_punct("]"):
            return out
        while True:
            t = p.tok
            if t.kind == BARE and t.text in ("true", "false"):
                p.advance()
                out.append(t.text == "true")
            elif t.kind == INT and t.text in ("0", "1"):
                p.advance()
                out.append(t.text == "1")
            else:
                raise p.error(f"expected true or false, got {t.describe()}")
            if p.accept_punct("]"):
                return out
            p.expect_punct(",", "or ']' in the window reversal")

    def fits(self, op: Op) -> bool:
        a = op.attributes
        for key in ("window_strides", "lhs_dilation", "rhs_dilation"):
            if key in a and not _i64_array(a[key]):
                return False
        rev = a.get("window_reversal")
        if rev is not None and not (isinstance(rev, DenseArrayAttr) and rev.element == "i1"):
            return False
        pad = a.get("padding")
        if pad is not None:
            if not (isinstance(pad, DenseElementsAttr) and pad.type.encoding is None
                    and pad.type.element == _I64 and len(pad.type.shape) == 2
                    and pad.type.shape[1] == 2 and pad.array.dtype == np.int64):
                return False
        return True

    def print(self, ps: PrintState) -> str:
        a = ps.op.attributes
        parts = []
        for key, name in _WINDOW_KEYS.items():
            if name not in a:
                continue
            v = a[name]
            if key == "pad":
                text = "[" + ", ".join(f"[{int(lo)}, {int(hi)}]" for lo, hi in v.array.tolist()) + "]"
            elif key == "reverse":
                text = "[" + ", ".join("true" if b else "false" for b in v.values) + "]"
            else:
                text = "[" + ", ".join(str(x) for x in v.values) + "]"
            parts.append(f"{key} = {text}")
        return ", ".join(parts) or None  # type: ignore[return-value]


class DotDims(Directive):
    """``batching_dims = [0] x [0], contracting_dims = [2] x [1]``."""

    attrs = ("dot_dimension_numbers",)

    def parse(self, st: ParseState) -> None:
        p = st.p
        values: dict[str, tuple[int, ...]] = {}
        if p.accept_bare("batching_dims"):
            p.expect_punct("=", "after 'batching_dims'")
            values["lhs_batching_dimensions"], values["rhs_batching_dimensions"] = self._pair(p)
            p.expect_punct(",", "after the batching dimensions")
        p.expect_bare("contracting_dims", f"in {st.pending.name}")
        p.expect_punct("=", "after 'contracting_dims'")
        values["lhs_contracting_dimensions"], values["rhs_contracting_dimensions"] = self._pair(p)
        st.pending.attributes["dot_dimension_numbers"] = make_struct(SCHEMAS["stablehlo.dot"], values)

    @staticmethod
    def _pair(p: Parser) -> tuple[tuple[int, ...], tuple[int, ...]]:
        lhs = tuple(p.parse_int_list())
        p.expect_bare("x", "between the lhs and rhs dimensions")
        return lhs, tuple(p.parse_int_list())

    def fits(self, op: Op) -> bool:
        a = op.attributes.get("dot_dimension_numbers")
        return isinstance(a, DimsStructAttr) and a.name == "stablehlo.dot"

    def print(self, ps: PrintState) -> str:
        g = dict(ps.op.attributes["dot_dimension_numbers"].fields)

        def pair(a: tuple[int, ...], b: tuple[int, ...]) -> str:
            return "[" + ", ".join(map(str, a)) + "] x [" + ", ".join(map(str, b)) + "]"

        text = ""
        if g["lhs_batching_dimensions"] or g["rhs_batching_dimensions"]:
            text = f"batching_dims = {pair(g['lhs_batching_dimensions'], g['rhs_batching_dimensions'])}, "
        return text + "contracting_dims = " + pair(g["lhs_contracting_dimensions"],
                                                   g["rhs_contracting_dimensions"])


def _precision_fits(a: Any) -> bool:
    return a is None or (isinstance(a, ArrayAttr) and all(
        isinstance(x, EnumAttr) and x.dialect == "stablehlo" and x.kind == "precision" for x in a.items))


class PrecisionAlgorithm(Directive):
    """``, precision = [DEFAULT, DEFAULT], algorithm = <...>`` (each optional)."""

    def __init__(self, with_algorithm: bool = True):
        self.with_algorithm = with_algorithm
        self.attrs = ("precision_config", "algorithm") if with_algorithm else ("precision_config",)

    def parse(self, st: ParseState) -> None:
        p, attrs = st.p, st.pending.attributes
        if not (p.at_punct(",") and p.peek().kind == BARE):
            return
        p.advance()
        if self.with_algorithm and p.at_bare("algorithm"):
            self._algorithm(p, attrs)
            return
        p.expect_bare("precision", f"in {st.pending.name}")
        p.expect_punct("=", "after 'precision'")
        p.expect_punct("[", "to open the precision list")
        items = []
        if not p.accept_punct("]"):
            while True:
                t = p.expect_kind(BARE, "a precision (DEFAULT, HIGH, HIGHEST)")
                items.append(EnumAttr("stablehlo", "precision", t.text))
                if p.accept_punct("]"):
                    break
                p.expect_punct(",", "or ']' in the precision list")
        attrs["precision_config"] = ArrayAttr(tuple(items))
        if self.with_algorithm and p.at_punct(",") and p.peek().is_bare("algorithm"):
            p.advance()
            self._algorithm(p, attrs)

    @staticmethod
    def _algorithm(p: Parser, attrs: dict[str, Attr]) -> None:
        p.expect_bare("algorithm")
        p.expect_punct("=", "after 'algorithm'")
        attrs["algorithm"] = p.parse_struct(SCHEMAS["stablehlo.dot_algorithm"])

    def fits(self, op: Op) -> bool:
        alg = op.attributes.get("algorithm")
        return _precision_fits(op.attributes.get("precision_config")) and (
            alg is None or (isinstance(alg, StructAttr) and type(alg) is StructAttr
                            and alg.name == "stablehlo.dot_algorithm"))

    def print(self, ps: PrintState) -> str | None:
        a = ps.op.attributes
        text = ""
        if "precision_config" in a:
            text += ", precision = [" + ", ".join(x.value for x in a["precision_config"].items) + "]"
        if "algorithm" in a:
            text += ", algorithm = " + str(a["algorithm"])[len("#stablehlo.dot_algorithm"):]
        return text or None


class ExponentMantissa(Directive):
    """``e5m10`` -> exponent_bits = 5 : i32, mantissa_bits = 10 : i32."""

    attrs = ("exponent_bits", "mantissa_bits")

    def parse(self, st: ParseState) -> None:
        p = st.p
        t = p.tok
        m = re.fullmatch(r"e([0-9]+)m([0-9]+)", t.text) if t.kind == BARE else None
        if m is None:
            raise p.error(f"expected exponent mantissa in format e#m#, got {t.describe()}")
        p.advance()
        i32 = element_type("i32")
        st.pending.attributes["exponent_bits"] = IntegerAttr(int(m.group(1)), i32)
        st.pending.attributes["mantissa_bits"] = IntegerAttr(int(m.group(2)), i32)

    def fits(self, op: Op) -> bool:
        i32 = element_type("i32")
        return all(isinstance(op.attributes.get(n), IntegerAttr) and op.attributes[n].type == i32
                   and op.attributes[n].value >= 0 for n in self.attrs)

    def print(self, ps: PrintState) -> str:
        a = ps.op.attributes
        return f"e{a['exponent_bits'].value}m{a['mantissa_bits'].value}"


class CallTarget(Directive):
    """``@target`` -> call_target_name = "target"."""

    attrs = ("call_target_name",)

    def parse(self, st: ParseState) -> None:
        ref = st.p.parse_symbol_ref()
        if len(ref.names) != 1:
            raise st.p.error("expected a flat symbol as the custom call target")
        st.pending.attributes["call_target_name"] = StringAttr(ref.names[0])

    def fits(self, op: Op) -> bool:
        return isinstance(op.attributes.get("call_target_name"), StringAttr)

    def print(self, ps: PrintState) -> str:
        return "@" + format_symbol(ps.op.attributes["call_target_name"].value)


class BarrierOperands(Directive):
    """optimization_barrier: ``%a, %b : t1, t2`` or ``()``."""

    takes_operands = True

    def parse(self, st: ParseState) -> None:
        p, pending = st.p, st.pending
        if p.accept_punct("("):
            p.expect_punct(")", "(an optimization barrier without operands is written '()')")
            pending.operand_types, pending.result_types = [], []
            return
        pending.uses.append(p.parse_value_use())
        while p.accept_punct(","):
            pending.uses.append(p.parse_value_use())
        p.expect_punct(":", "and the operand types")
        parse_types(st, "pairwise")

    def fits(self, op: Op) -> bool:
        return op.operand_types == op.result_types

    def print(self, ps: PrintState) -> str:
        op = ps.op
        if not op.operands:
            return "()"
        return ", ".join(v.name for v in op.operands) + " : " + ", ".join(str(t) for t in op.operand_types)


class ScanOperands(Directive):
    """chlo.scan: ``(%inputs) inits (%inits)`` with operandSegmentSizes."""

    attrs = ("operandSegmentSizes",)
    takes_operands = True

    def parse(self, st: ParseState) -> None:
        p, pending = st.p, st.pending
        counts = []
        for i, what in enumerate(("inputs", "inits")):
            if i:
                p.expect_bare("inits", "after the scan inputs")
            p.expect_punct("(", f"to open the scan {what}")
            n = 0
            if not p.at_punct(")"):
                while True:
                    pending.uses.append(p.parse_value_use())
                    n += 1
                    if not p.accept_punct(","):
                        break
            p.expect_punct(")", f"to close the scan {what}")
            counts.append(n)
        st.pending.attributes["operandSegmentSizes"] = DenseArrayAttr("i32", tuple(counts))

    def fits(self, op: Op) -> bool:
        seg = op.attributes.get("operandSegmentSizes")
        return (isinstance(seg, DenseArrayAttr) and seg.element == "i32" and len(seg.values) == 2
                and all(v >= 0 for v in seg.values) and sum(seg.values) == len(op.operands))

    def print(self, ps: PrintState) -> str:
        n_in = ps.op.attributes["operandSegmentSizes"].values[0]
        names = [v.name for v in ps.op.operands]
        return f"({', '.join(names[:n_in])}) inits ({', '.join(names[n_in:])})"


def scan_derive(pending: PendingOp) -> dict[str, Attr]:
    seg = pending.attributes.get("operandSegmentSizes")
    n_init = seg.values[1] if isinstance(seg, DenseArrayAttr) and len(seg.values) == 2 else 0
    n_res = len(pending.result_types)
    return {"resultSegmentSizes": DenseArrayAttr("i32", (max(n_res - n_init, 0), n_init))}


DIRECTIVES.update({
    "slice-ranges": SliceRanges(),
    "conv-dims": ConvDims(),
    "window": Window(),
    "dot-dims": DotDims(),
    "precision-algorithm": PrecisionAlgorithm(True),
    "precision": PrecisionAlgorithm(False),
    "exp-mantissa": ExponentMantissa(),
    "call-target": CallTarget(),
    "barrier": BarrierOperands(),
    "scan-operands": ScanOperands(),
})


# --------------------------------------------------------------------------
# whole-op syntaxes
# --------------------------------------------------------------------------
class ConstantSyntax(OpSyntax):
    """``stablehlo.constant [{attrs}] dense<...> : tensor<...>``; also the
    ``stablehlo.constant() <{value = ...}> : () -> type`` spelling."""

    inherent = frozenset({"value"})

    def parse(self, p: Parser, name: str) -> PendingOp:
        from hlolab.ir.parser import PendingOp

        pending = PendingOp(name)
        if p.accept_punct("("):
            p.expect_punct(")", f"({name} has no operands)")
            if p.accept_punct("<"):
                pending.attributes.update(p.parse_attr_dict())
                p.expect_punct(">", "to close the properties")
            if p.at_punct("{"):
                pending.attributes.update(p.parse_attr_dict())
            p.expect_punct(":", f"and the type of {name}")
            at = p.tok.start
            ft = p.parse_type()
            if not (isinstance(ft, FunctionType) and not ft.inputs and len(ft.results) == 1):
                raise p.error(f"expected () -> type for {name}, got {ft}", at)
            pending.operand_types, pending.result_types = [], list(ft.results)
            if "value" not in pending.attributes:
                raise p.error(f"{name} needs a value attribute", at)
        else:
            if p.at_punct("{"):
                pending.attributes.update(p.parse_attr_dict())
            at = p.tok.start
            value = p.parse_attr()
            if not isinstance(value, DenseElementsAttr):
                raise p.error(f"expected a dense elements value for {name}, got {value}", at)
            if "value" in pending.attributes:
                raise p.error("attribute 'value' is already written in the syntax", at)
            pending.attributes["value"] = value
            pending.operand_types, pending.result_types = [], [value.type]
        self.mark_props(pending)
        return pending

    def fits(self, op: Op) -> bool:
        v = op.attributes.get("value")
        return (not op.operands and len(op.results) == 1 and not op.regions
                and isinstance(v, DenseElementsAttr) and v.type == op.results[0].type)

    def print(self, op: Op, pr: Printer, indent: str) -> str:
        rest = {k: v for k, v in op.attributes.items() if k != "value"}
        head = " " + format_attr_dict(rest) if rest else ""
        return f"{head} {op.attributes['value']}"


class WhileSyntax(OpSyntax):
    """``stablehlo.while(%it = %init, ...) : types [attributes {...}] cond {...} do {...}``."""

    def parse(self, p: Parser, name: str) -> PendingOp:
        from hlolab.ir.parser import PendingOp

        pending = PendingOp(name)
        p.expect_punct("(", f"after {name}")
        names: list[tuple[str, int]] = []
        if not p.at_punct(")"):
            while True:
                it = p.parse_value_use()
                p.expect_punct("=", f"after the loop variable {it.name}")
                pending.uses.append(p.parse_value_use())
                names.append((it.name, it.offset))
                if not p.accept_punct(","):
                    break
        p.expect_punct(")", "to close the loop variables")
        types: list[Type] = []
        if pending.uses:
            p.expect_punct(":", "and the loop variable types")
            at = p.tok.start
            types = p.parse_type_list()
            if len(types) != len(pending.uses):
                raise p.error(f"{len(pending.uses)} loop variables but {len(types)} types", at)
        pending.operand_types = list(types)
        pending.result_types = list(types)
        if p.accept_bare("attributes"):
            pending.attributes.update(p.parse_attr_dict())
        args = [(n, t, None, off) for (n, off), t in zip(names, types, strict=True)]
        p.expect_bare("cond", f"in {name}")
        pending.regions.append(p.parse_region(entry_args=args))
        p.expect_bare("do", f"in {name}")
        pending.regions.append(p.parse_region(entry_args=args))
        return pending

    def fits(self, op: Op) -> bool:
        if len(op.regions) != 2 or op.operand_types != op.result_types:
            return False
        blocks = [r.blocks[0] for r in op.regions if len(r.blocks) == 1]
        if len(blocks) != 2:
            return False
        names = [[a.name for a in b.args] for b in blocks]
        types = [[a.type for a in b.args] for b in blocks]
        return (names[0] == names[1] and types[0] == types[1] == op.operand_types
                and all(loc is None for b in blocks for loc in b.arg_locs))

    def print(self, op: Op, pr: Printer, indent: str) -> str:
        args = op.regions[0].blocks[0].args
        text = "(" + ", ".join(f"{a.name} = {v.name}" for a, v in zip(args, op.operands, strict=True)) + ")"
        if op.operands:
            text += " : " + ", ".join(str(t) for t in op.operand_types)
        if op.attributes:
            text += " attributes " + format_attr_dict(op.attributes)
        cond = pr.region(op.regions[0], indent, entry_args=False)
        body = pr.region(op.regions[1], indent, entry_args=False)
        return f"{text}\n{indent}cond {cond} do {body}"


_COMMUTATIVE = frozenset({"stablehlo.add", "stablehlo.multiply", "stablehlo.maximum", "stablehlo.minimum",
                          "stablehlo.and", "stablehlo.or", "stablehlo.xor"})


def compact_names(stem: str) -> tuple[str, str, str]:
    """The value names a compact ``applies`` reduce body gets: derived from the
    reduce's result name so that printing and parsing agree."""
    s = stem.lstrip("%")
    s = ("r" + s) if (not s or s[0].isdigit()) else s
    return f"%{s}.lhs", f"%{s}.rhs", f"%{s}.out"


class ReduceSyntax(OpSyntax):
    """``stablehlo.reduce(%x init: %c) applies stablehlo.add across dimensions = [1] : type`` or
    ``stablehlo.reduce(%x init: %c), ... across dimensions = [..] : type reducer(%a: t, %b: t) ... {...}``."""

    inherent = frozenset({"dimensions"})

    def parse(self, p: Parser, name: str) -> PendingOp:
        from hlolab.ir.parser import PendingOp

        pending = PendingOp(name)
        inputs, inits = [], []
        while True:
            p.expect_punct("(", f"to open an operand of {name}")
            inputs.append(p.parse_value_use())
            p.expect_bare("init", "after the reduce operand")
            p.expect_punct(":", "after 'init'")
            inits.append(p.parse_value_use())
            p.expect_punct(")", "to close the operand pair")
            if not p.accept_punct(","):
                break
        pending.uses = inputs + inits
        inner = None
        if p.accept_bare("applies"):
            t = p.expect_kind(BARE, "the reduction op name")
            if t.text not in _COMMUTATIVE:
                raise p.error("expected the inner-op to be a commutative binary-op from the stablehlo "
                              f"dialect, with zero region, producing single result; got {t.text}", t.start)
            inner = (t.text, t.start)
        p.expect_bare("across", f"in {name}")
        p.expect_bare("dimensions", f"in {name}")
        p.expect_punct("=", "after 'dimensions'")
        pending.attributes["dimensions"] = DenseArrayAttr("i64", tuple(p.parse_int_list()))
        if p.at_punct("{"):
            at = p.tok.start
            for k, v in p.parse_attr_dict().items():
                if k == "dimensions":
                    raise p.error("attribute 'dimensions' is already written in the syntax", at)
                pending.attributes[k] = v
        p.expect_punct(":", f"and the type of {name}")
        at = p.tok.start
        ft = p.parse_type()
        if not isinstance(ft, FunctionType):
            raise p.error(f"expected a function type, got {ft}", at)
        if len(ft.inputs) != len(pending.uses):
            raise p.error(f"{len(pending.uses)} operands present, but the type lists {len(ft.inputs)}", at)
        pending.operand_types = list(ft.inputs)
        pending.result_types = list(ft.results)
        if inner is not None:
            pending.regions.append(self._compact_body(p, inner, ft))
        else:
            pending.regions.append(self._reducer(p, len(inputs)))
        self.mark_props(pending)
        return pending

    def _reducer(self, p: Parser, n: int) -> Region:
        p.expect_bare("reducer", "(or 'applies OP') for the reduction body")
        firsts, seconds = [], []
        while p.accept_punct("("):
            for side in (firsts, seconds):
                use = p.parse_value_use()
                p.expect_punct(":", f"and the type of {use.name}")
                ty = p.parse_type()
                side.append((use.name, ty, p.parse_optional_loc(), use.offset))
                if side is firsts:
                    p.expect_punct(",", "between the reducer arguments")
            p.expect_punct(")", "to close the reducer arguments")
        if len(firsts) != n:
            raise p.error(f"the reducer has {len(firsts)} argument pairs for {n} inputs")
        return p.parse_region(entry_args=firsts + seconds)

    def _compact_body(self, p: Parser, inner: tuple[str, int], ft: FunctionType) -> Region:
        first = ft.inputs[0]
        if not isinstance(first, TensorType):
            raise p.error(f"the reduced operand must be a tensor, got {first}", inner[1])
        scalar = TensorType((), first.element)
        stem = p.pending_groups[0][0] if p.pending_groups else "%reduce"
        names = list(compact_names(stem))
        for i, n in enumerate(names):  # a clash with a visible name: pick another spelling
            k = 1
            while n in p.values:
                n = f"{names[i]}_{k}"
                k += 1
            names[i] = n
        block = Block()
        block.args = [Value(names[0], scalar, block, 0), Value(names[1], scalar, block, 1)]
        block.arg_locs = [None, None]
        op = Op(inner[0], operands=list(block.args))
        op.results = [Value(names[2], scalar, op, 0)]
        op.result_groups = [(names[2], 1)]
        op.loc = p.src_loc(inner[1])
        ret = Op("stablehlo.return", operands=[op.results[0]])
        ret.loc = op.loc
        op.parent = ret.parent = block
        block.ops = [op, ret]
        return Region([block])

    def _compact(self, op: Op) -> str | None:
        """The inner op name when the body prints as ``applies OP``."""
        body = op.regions[0]
        if len(body.blocks) != 1 or len(op.operands) != 2:
            return None
        b = body.blocks[0]
        if len(b.ops) != 2 or len(b.args) != 2 or any(b.arg_locs):
            return None
        inner, ret = b.ops
        first = op.operands[0].type
        if not isinstance(first, TensorType):
            return None
        scalar = TensorType((), first.element)
        stem = op.result_groups[0][0] if op.result_groups else (op.results[0].name if op.results else "")
        lhs, rhs, out = compact_names(stem)
        ok = (inner.name in _COMMUTATIVE and not inner.attributes and not inner.regions
              and inner.mlir_loc is None and inner.operands == b.args
              and [a.name for a in b.args] == [lhs, rhs] and all(a.type == scalar for a in b.args)
              and len(inner.results) == 1 and inner.results[0].name == out
              and inner.results[0].type == scalar
              and ret.name == "stablehlo.return" and ret.operands == inner.results
              and not ret.attributes and ret.mlir_loc is None and not ret.results)
        return inner.name if ok else None

    def fits(self, op: Op) -> bool:
        n = len(op.operands)
        if n == 0 or n % 2 or len(op.regions) != 1 or len(op.regions[0].blocks) != 1:
            return False
        if not _i64_array(op.attributes.get("dimensions")):
            return False
        return len(op.regions[0].blocks[0].args) == n

    def print(self, op: Op, pr: Printer, indent: str) -> str:
        n = len(op.operands) // 2
        pairs = ", ".join(f"({op.operands[i].name} init: {op.operands[i + n].name})" for i in range(n))
        text = pairs
        inner = self._compact(op)
        if inner is not None:
            text += f" applies {inner}"
        dims = op.attributes["dimensions"].values
        text += " across dimensions = [" + ", ".join(map(str, dims)) + "]"
        rest = {k: v for k, v in op.attributes.items() if k != "dimensions"}
        if rest:
            text += " " + format_attr_dict(rest)
        text += " : " + fn_type_text(op)
        if inner is None:
            b = op.regions[0].blocks[0]
            # spaced exactly as MLIR prints it: "reducer(%a: t, %c: t) (%b: t, %d: t)  {"
            pairs = "".join(f"({pr.block_arg(b, i)}, {pr.block_arg(b, i + n)}) " for i in range(n))
            text += f"\n{indent} reducer{pairs} " + pr.region(op.regions[0], indent, entry_args=False)
        return text
