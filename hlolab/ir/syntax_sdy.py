"""The Shardy (``sdy``) dialect's pretty forms, as jax prints sharded programs.

``sdy.mesh @mesh = <["x"=4]>`` is a module-level symbol (``Parser.parse_mesh``); the ops
here are ``sdy.manual_computation`` (operands, in/out shardings, manual axes, a body with
named arguments), ``sdy.sharding_constraint`` / ``sdy.reshard`` (an operand and a
sharding) and ``sdy.return``. Shardings are kept as their exact text in ``OpaqueAttr``s
spelled as the generic form writes them (``#sdy.sharding<@mesh, [{}, {"x"}]>``,
``#sdy.sharding_per_value<[...]>``, ``#sdy<manual_axes{"x"}>``); ``hlolab.ops.sharding``
reads their meaning.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hlolab.ir.attrs import OpaqueAttr, format_attr_dict
from hlolab.ir.lexer import VALUE
from hlolab.ir.module import Op
from hlolab.ir.syntax_engine import OpSyntax
from hlolab.types import FunctionType, Type

if TYPE_CHECKING:
    from hlolab.ir.parser import Parser, PendingOp
    from hlolab.ir.printer import Printer

SHARDING = "#sdy.sharding<"
PER_VALUE = "#sdy.sharding_per_value<"
MANUAL_AXES = "#sdy<manual_axes"


def balanced(p: Parser, open_: str, close: str, what: str) -> str:
    """The text between the current ``open_`` token and its matching ``close`` (consumed)."""
    if not p.at_punct(open_):
        raise p.error(f"expected '{open_}' to open {what}, got {p.tok.describe()}")
    body = p.lx.lex_balanced(p.tok.end, open_, close, what)
    p.tok = p.lx.lex(body.end)
    return body.text


def _inner(a: object, prefix: str, suffix: str) -> str | None:
    text = a.text if isinstance(a, OpaqueAttr) else None
    if text is None or not (text.startswith(prefix) and text.endswith(suffix)):
        return None
    return text[len(prefix):len(text) - len(suffix)]


class ManualComputationSyntax(OpSyntax):
    """``sdy.manual_computation(%a, %b) in_shardings=[<@mesh, [...]>, ...]
    out_shardings=[...] manual_axes={"x"} (%arg2: t, %arg3: t) { ... } : (ts) -> ts``."""

    inherent = frozenset({"in_shardings", "out_shardings", "manual_axes"})

    def parse(self, p: Parser, name: str) -> PendingOp:
        from hlolab.ir.parser import PendingOp

        pending = PendingOp(name)
        p.expect_punct("(", f"after {name}")
        if not p.at_punct(")"):
            while True:
                pending.uses.append(p.parse_value_use())
                if not p.accept_punct(","):
                    break
        p.expect_punct(")", "to close the operands")
        for key in ("in_shardings", "out_shardings"):
            p.expect_bare(key, f"in {name}")
            p.expect_punct("=", f"after {key}")
            pending.attributes[key] = OpaqueAttr(PER_VALUE + "[" + balanced(p, "[", "]", key) + "]>")
        p.expect_bare("manual_axes", f"in {name}")
        p.expect_punct("=", "after manual_axes")
        axes = balanced(p, "{", "}", "manual_axes")
        pending.attributes["manual_axes"] = OpaqueAttr(MANUAL_AXES + "{" + axes + "}>")
        p.expect_punct("(", "to open the body arguments")
        args: list[tuple[str, Type, str | None, int]] = []
        if not p.at_punct(")"):
            while True:
                if p.tok.kind != VALUE:
                    raise p.error(f"expected a body argument, got {p.tok.describe()}")
                use = p.parse_value_use()
                p.expect_punct(":", f"and the type of body argument {use.name}")
                ty = p.parse_type()
                args.append((use.name, ty, p.parse_optional_loc(), use.offset))
                if not p.accept_punct(","):
                    break
        p.expect_punct(")", "to close the body arguments")
        pending.regions.append(p.parse_region(entry_args=args))
        if p.at_punct("{"):
            pending.attributes.update(p.parse_attr_dict())
        p.expect_punct(":", f"and the type of {name}")
        at = p.tok.start
        ft = p.parse_type()
        if not isinstance(ft, FunctionType):
            raise p.error(f"expected a function type (inputs) -> results, got {ft}", at)
        if len(ft.inputs) != len(pending.uses):
            raise p.error(f"{name} has {len(pending.uses)} operands but its type lists {len(ft.inputs)}", at)
        pending.operand_types = list(ft.inputs)
        pending.result_types = list(ft.results)
        self.mark_props(pending)
        return pending

    def fits(self, op: Op) -> bool:
        a = op.attributes
        return (len(op.regions) == 1 and len(op.regions[0].blocks) == 1
                and _inner(a.get("in_shardings"), PER_VALUE, ">") is not None
                and _inner(a.get("out_shardings"), PER_VALUE, ">") is not None
                and _inner(a.get("manual_axes"), MANUAL_AXES, ">") is not None)

    def print(self, op: Op, pr: Printer, indent: str) -> str:
        a = op.attributes
        text = "(" + ", ".join(v.name for v in op.operands) + ")"
        text += f" in_shardings={_inner(a['in_shardings'], PER_VALUE, '>')}"
        text += f" out_shardings={_inner(a['out_shardings'], PER_VALUE, '>')}"
        text += f" manual_axes={_inner(a['manual_axes'], MANUAL_AXES, '>')}"
        block = op.regions[0].blocks[0]
        text += " (" + ", ".join(pr.block_arg(block, i) for i in range(len(block.args))) + ") "
        text += pr.region(op.regions[0], indent, entry_args=False)
        rest = {k: v for k, v in a.items() if k not in ("in_shardings", "out_shardings", "manual_axes")}
        if rest:
            text += " " + format_attr_dict(rest)
        return text + " : " + str(FunctionType(tuple(op.operand_types), tuple(op.result_types)))


class ShardingOperandSyntax(OpSyntax):
    """``sdy.sharding_constraint %x <@mesh, [{}, {"y"}]> : tensor<...>`` (and sdy.reshard)."""

    inherent = frozenset({"sharding"})

    def parse(self, p: Parser, name: str) -> PendingOp:
        from hlolab.ir.parser import PendingOp

        pending = PendingOp(name)
        pending.uses.append(p.parse_value_use())
        pending.attributes["sharding"] = OpaqueAttr(SHARDING + balanced(p, "<", ">", "the sharding") + ">")
        if p.at_punct("{"):
            pending.attributes.update(p.parse_attr_dict())
        p.expect_punct(":", f"and the type of {name}")
        t = p.parse_type()
        pending.operand_types, pending.result_types = [t], [t]
        self.mark_props(pending)
        return pending

    def fits(self, op: Op) -> bool:
        return (len(op.operands) == 1 and len(op.results) == 1 and op.operand_types == op.result_types
                and not op.regions and _inner(op.attributes.get("sharding"), SHARDING, ">") is not None)

    def print(self, op: Op, pr: Printer, indent: str) -> str:
        text = f" {op.operands[0].name} <{_inner(op.attributes['sharding'], SHARDING, '>')}>"
        rest = {k: v for k, v in op.attributes.items() if k != "sharding"}
        if rest:
            text += " " + format_attr_dict(rest)
        return text + f" : {op.result_types[0]}"


def parse_mesh(p: Parser) -> Op:
    """``sdy.mesh @name = <["x"=4, "y"=2], device_ids=[...]> [{attrs}]``: an ``Op`` named
    ``sdy.mesh`` with ``sym_name`` and ``mesh`` (``#sdy.mesh<...>``) attributes."""
    from hlolab.ir.attrs import StringAttr
    from hlolab.ir.lexer import AT

    start = p.advance().start  # 'sdy.mesh'
    if p.tok.kind != AT:
        raise p.error(f"expected the mesh's @name after sdy.mesh, got {p.tok.describe()}")
    name = p._symbol_name(p.advance())
    p.expect_punct("=", f"after sdy.mesh @{name}")
    body = balanced(p, "<", ">", f"mesh @{name}")
    attrs = {"sym_name": StringAttr(name), "mesh": OpaqueAttr("#sdy.mesh<" + body + ">")}
    if p.at_punct("{"):
        attrs.update(p.parse_attr_dict())
    op = Op("sdy.mesh", attributes=attrs, prop_names={"sym_name", "mesh"})
    op.loc = p.src_loc(start)
    return op


def print_mesh(op: Op) -> str:
    from hlolab.ir.attrs import format_symbol

    name = op.attributes["sym_name"].value  # type: ignore[union-attr]
    body = _inner(op.attributes["mesh"], "#sdy.mesh<", ">")
    rest = {k: v for k, v in op.attributes.items() if k not in ("sym_name", "mesh")}
    return f"sdy.mesh @{format_symbol(name)} = <{body}>" + (" " + format_attr_dict(rest) if rest else "")
