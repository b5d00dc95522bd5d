"""The IR: Module > Func > Region > Block > Op, with SSA Values.

Equality is structural (names, types, attributes, nesting), ignoring source
locations, so ``parse(print(m)) == m`` is a meaningful round-trip test.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from hlolab.errors import SourceLoc
from hlolab.ir.attrs import Attr
from hlolab.types import Type


class Value:
    """An SSA value: an op result or a block argument.

    ``name`` is the spelling users see (``%0``, ``%arg1``, ``%26#1``);
    identity is object identity, equality of whole modules compares names.
    """

    __slots__ = ("name", "type", "owner", "index")

    def __init__(self, name: str, type: Type, owner: Op | Block | None = None, index: int = 0):
        self.name = name
        self.type = type
        self.owner = owner
        self.index = index

    def __repr__(self) -> str:
        return f"Value({self.name}: {self.type})"


@dataclass(eq=False)
class Op:
    """One operation. ``attributes`` holds properties and discardable attributes
    alike (``prop_names`` remembers which were written as ``<{...}>``)."""

    name: str
    operands: list[Value] = field(default_factory=list)
    results: list[Value] = field(default_factory=list)
    attributes: dict[str, Attr] = field(default_factory=dict)
    regions: list[Region] = field(default_factory=list)
    loc: SourceLoc | None = None
    end_line: int | None = field(default=None, compare=False)  # the source line the op's text ends on
    mlir_loc: str | None = None  # the text of a trailing loc(...), kept for printing
    result_groups: list[tuple[str, int]] = field(default_factory=list)  # ("%r", 2) for %r:2
    prop_names: set[str] = field(default_factory=set)
    parent: Block | None = None
    # the typed attribute record (hlolab.ops.record), read from ``attributes`` once
    # by verification; whoever changes ``attributes`` afterwards resets it to None
    record: Any = field(default=None, compare=False, repr=False)

    @property
    def operand_types(self) -> list[Type]:
        return [v.type for v in self.operands]

    @property
    def result_types(self) -> list[Type]:
        return [v.type for v in self.results]

    def attr(self, key: str, default: Any = None) -> Any:
        return self.attributes.get(key, default)

    def walk(self) -> Iterator[Op]:
        """This op and every op nested in its regions, in program order."""
        yield self
        for region in self.regions:
            for block in region.blocks:
                for op in block.ops:
                    yield from op.walk()

    def __repr__(self) -> str:
        return f"Op({self.name}, {[v.name for v in self.results]} <- {[v.name for v in self.operands]})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Op):
            return NotImplemented
        return _op_key(self) == _op_key(other) and self.regions == other.regions

    __hash__ = None  # type: ignore[assignment]


def _op_key(op: Op) -> tuple:
    return (
        op.name,
        tuple((v.name, v.type) for v in op.operands),
        tuple((v.name, v.type) for v in op.results),
        tuple(sorted(op.attributes.items(), key=lambda kv: kv[0])),
    )


@dataclass(eq=False)
class Block:
    args: list[Value] = field(default_factory=list)
    ops: list[Op] = field(default_factory=list)
    label: str | None = None  # "^bb0" when written
    arg_locs: list[str | None] = field(default_factory=list)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Block):
            return NotImplemented
        return ([(a.name, a.type) for a in self.args] == [(a.name, a.type) for a in other.args]
                and self.ops == other.ops)

    __hash__ = None  # type: ignore[assignment]


@dataclass(eq=False)
class Region:
    blocks: list[Block] = field(default_factory=list)

    @property
    def entry(self) -> Block:
        return self.blocks[0]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Region):
            return NotImplemented
        return self.blocks == other.blocks

    __hash__ = None  # type: ignore[assignment]


@dataclass(eq=False)
class Func:
    """``func.func [visibility] @name(args) -> results attributes {...} { body }``."""

    name: str
    args: list[Value]
    result_types: list[Type]
    body: Region | None  # None for a declaration
    visibility: str | None = None  # "public" | "private" | None
    arg_attrs: list[dict[str, Attr]] = field(default_factory=list)
    result_attrs: list[dict[str, Attr]] = field(default_factory=list)
    attributes: dict[str, Attr] = field(default_factory=dict)
    loc: SourceLoc | None = None
    mlir_loc: str | None = None

    def walk(self) -> Iterator[Op]:
        if self.body is None:
            return
        for block in self.body.blocks:
            for op in block.ops:
                yield from op.walk()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Func):
            return NotImplemented
        return (self.name == other.name and self.visibility == other.visibility
                and [(a.name, a.type) for a in self.args] == [(a.name, a.type) for a in other.args]
                and self.result_types == other.result_types
                and self.arg_attrs == other.arg_attrs and self.result_attrs == other.result_attrs
                and self.attributes == other.attributes and self.body == other.body)

    __hash__ = None  # type: ignore[assignment]


@dataclass(eq=False)
class Module:
    """A module: named or implicit (bare top-level funcs)."""

    funcs: list[Func] = field(default_factory=list)
    name: str | None = None
    attributes: dict[str, Attr] = field(default_factory=dict)
    implicit: bool = False  # True when the text had no `module { }` wrapper
    loc: SourceLoc | None = None
    source_name: str = "<string>"
    first_line: int = 1  # line of this module's text in its file (split files)
    mlir_loc: str | None = None  # the text of a trailing loc(...) after `module {...}`
    loc_aliases: dict[str, str] = field(default_factory=dict)  # "#loc3" -> "loc(...)" definitions
    verified: bool = field(default=False, compare=False)  # hlolab.ops.verify passed
    # module-level ops other than functions, in order (``sdy.mesh @mesh = <...>``)
    symbols: list[Op] = field(default_factory=list)

    def symbol(self, name: str) -> Op | None:
        """The module-level op (not function) whose ``sym_name`` is ``name``."""
        for op in self.symbols:
            a = op.attributes.get("sym_name")
            if getattr(a, "value", None) == name:
                return op
        return None

    def func(self, name: str) -> Func | None:
        for f in self.funcs:
            if f.name == name:
                return f
        return None

    def walk(self) -> Iterator[Op]:
        for f in self.funcs:
            yield from f.walk()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Module):
            return NotImplemented
        return (self.name == other.name and self.attributes == other.attributes
                and self.funcs == other.funcs and self.symbols == other.symbols)

    __hash__ = None  # type: ignore[assignment]
