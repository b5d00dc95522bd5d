"""Print the IR back as MLIR text.

The pretty form is used for every op whose syntax table entry fits it (see
``hlolab.ir.syntax``), the generic form for the others or when asked.
Functions and modules always print in their usual ``func.func`` / ``module``
form. ``parse_module(print_module(m)) == m`` in both modes.
"""

from __future__ import annotations

from hlolab.ir import syntax
from hlolab.ir.attrs import format_attr_dict, format_symbol
from hlolab.ir.module import Block, Func, Module, Op, Region, Value
from hlolab.ir.syntax_sdy import print_mesh
from hlolab.types import FunctionType

INDENT = "  "


def print_module(m: Module, generic: bool = False) -> str:
    """The module as text (pretty ops by default), ending with a newline."""
    return Printer(generic).module(m)


def print_op(op: Op, generic: bool = False) -> str:
    """One op (with its regions) as text, without a trailing newline."""
    return Printer(generic).op(op, "")


class Printer:
    def __init__(self, generic: bool = False):
        self.generic = generic

    # --- module and functions -----------------------------------------------
    def module(self, m: Module) -> str:
        funcs = [self.func(f, INDENT if not m.implicit else "") for f in m.funcs]
        if m.implicit:
            text = "\n".join(funcs) + ("\n" if funcs else "")
        else:
            head = "module"
            if m.name is not None:
                head += " @" + format_symbol(m.name)
            if m.attributes:
                head += " attributes " + format_attr_dict(m.attributes)
            syms = [INDENT + print_mesh(op) if op.name == "sdy.mesh" else self.op(op, INDENT)
                    for op in m.symbols]
            text = head + " {\n" + "".join(f + "\n" for f in syms + funcs) + "}"
            if m.mlir_loc:
                text += " " + m.mlir_loc
            text += "\n"
        for name, loc in m.loc_aliases.items():
            text += f"{name} = {loc}\n"
        return text

    def func(self, f: Func, indent: str) -> str:
        head = indent + "func.func "
        if f.visibility:
            head += f.visibility + " "
        head += "@" + format_symbol(f.name) + "("
        entry = f.body.blocks[0] if f.body is not None and f.body.blocks else None
        args = []
        for i, a in enumerate(f.args):
            text = f"{a.name}: {a.type}"
            if f.arg_attrs and i < len(f.arg_attrs) and f.arg_attrs[i]:
                text += " " + format_attr_dict(f.arg_attrs[i])
            loc = entry.arg_locs[i] if entry is not None and i < len(entry.arg_locs) else None
            if loc:
                text += " " + loc
            args.append(text)
        head += ", ".join(args) + ")"
        if f.result_types:
            attrs = f.result_attrs if any(f.result_attrs) else []
            if len(f.result_types) == 1 and not attrs and not isinstance(f.result_types[0], FunctionType):
                head += f" -> {f.result_types[0]}"
            else:
                outs = []
                for i, t in enumerate(f.result_types):
                    text = str(t)
                    if i < len(attrs) and attrs[i]:
                        text += " " + format_attr_dict(attrs[i])
                    outs.append(text)
                head += " -> (" + ", ".join(outs) + ")"
        if f.attributes:
            head += " attributes " + format_attr_dict(f.attributes)
        if f.body is not None:
            head += " " + self.region(f.body, indent, entry_args=False, func_body=True)
        if f.mlir_loc:
            head += " " + f.mlir_loc
        return head

    # --- regions ------------------------------------------------------------
    def region(self, region: Region, indent: str, entry_args: bool = True, func_body: bool = False) -> str:
        """``{ ... }`` with ops indented one level more than ``indent``.

        ``entry_args=False`` leaves out the entry block's label when the op's
        syntax names its arguments (functions, while, reduce)."""
        if not region.blocks:
            return "{\n" + indent + "}"
        out = ["{"]
        for i, block in enumerate(region.blocks):
            label = self._label(block, i, region, entry_args)
            if label:
                out.append(indent + label)
            for op in block.ops:
                out.append(self.op(op, indent + INDENT, func_body))
        out.append(indent + "}")
        return "\n".join(out)

    def _label(self, block: Block, i: int, region: Region, entry_args: bool) -> str:
        if i == 0 and not entry_args:
            return ""  # the op's syntax names the entry block's arguments
        if i == 0 and not block.args and block.label is None:
            return ""
        name = block.label or f"^bb{i}"
        if block.args:
            name += "(" + ", ".join(self.block_arg(block, j) for j in range(len(block.args))) + ")"
        return name + ":"

    def block_arg(self, block: Block, i: int) -> str:
        a = block.args[i]
        loc = block.arg_locs[i] if i < len(block.arg_locs) else None
        return f"{a.name}: {a.type}" + (f" {loc}" if loc else "")

    # --- operations ---------------------------------------------------------
    def op(self, op: Op, indent: str, func_body: bool = False) -> str:
        """``op`` at ``indent``; directly in a function body, func ops drop their
        ``func.`` prefix (the default dialect there), as MLIR prints them."""
        text = indent + _results(op)
        fmt = None if self.generic else syntax.lookup(op.name)
        if fmt is not None and fmt.fits(op):
            name = op.name[5:] if func_body and op.name in ("func.return", "func.call") else op.name
            text += name + fmt.print(op, self, indent)
        else:
            text += self.generic_body(op, indent)
        if op.mlir_loc:
            text += " " + op.mlir_loc
        return text

    def generic_body(self, op: Op, indent: str) -> str:
        text = '"' + op.name.replace("\\", "\\\\").replace('"', '\\"') + '"('
        text += ", ".join(v.name for v in op.operands) + ")"
        props = {k: v for k, v in op.attributes.items() if k in op.prop_names}
        attrs = {k: v for k, v in op.attributes.items() if k not in op.prop_names}
        if props:
            text += " <" + format_attr_dict(props) + ">"
        if op.regions:
            text += " (" + ", ".join(self.region(r, indent, entry_args=True) for r in op.regions) + ")"
        if attrs:
            text += " " + format_attr_dict(attrs)
        text += " : " + str(FunctionType(tuple(op.operand_types), tuple(op.result_types)))
        return text


def _results(op: Op) -> str:
    """``%a, %b:2 = `` for the op's results (empty when it has none)."""
    if not op.results:
        return ""
    groups = op.result_groups
    if sum(c for _, c in groups) != len(op.results):
        groups = _groups_from_names(op.results)
    parts = [name if count == 1 else f"{name}:{count}" for name, count in groups]
    return ", ".join(parts) + " = "


def _groups_from_names(results: list[Value]) -> list[tuple[str, int]]:
    """Result groups recovered from value names (``%r#0, %r#1`` -> ``%r:2``)."""
    groups: list[tuple[str, int]] = []
    for v in results:
        base, sep, num = v.name.partition("#")
        if sep and groups and groups[-1][0] == base and num == str(groups[-1][1]):
            groups[-1] = (base, groups[-1][1] + 1)
        else:
            groups.append((base, 1))
    return groups
