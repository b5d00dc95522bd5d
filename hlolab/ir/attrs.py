"""Attribute values of the IR.

Each class prints itself back in MLIR syntax (``str(attr)``) so that the
printer never needs to know which op an attribute belongs to. Equality is
structural: ``parse(print(m)) == m`` compares these objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hlolab.types import TensorType, Type


@dataclass(frozen=True)
class IntegerAttr:
    """``5 : i64``; ``type`` is None for a bare integer."""

    value: int
    type: Type | None = None

    def __str__(self) -> str:
        return f"{self.value} : {self.type}" if self.type is not None else str(self.value)


@dataclass(frozen=True)
class FloatAttr:
    """``1.0e-4 : f32``; ``text`` is the literal as written (kept for printing)."""

    value: float
    type: Type | None = None
    text: str | None = field(default=None, compare=False)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FloatAttr):
            return NotImplemented
        same = self.value == other.value or (self.value != self.value and other.value != other.value)
        return same and self.type == other.type

    def __hash__(self) -> int:
        return hash((repr(self.value), self.type))

    def __str__(self) -> str:
        text = self.text if self.text is not None else repr(float(self.value))
        return f"{text} : {self.type}" if self.type is not None else text


@dataclass(frozen=True)
class BoolAttr:
    value: bool

    def __str__(self) -> str:
        return "true" if self.value else "false"


@dataclass(frozen=True)
class StringAttr:
    value: str

    def __str__(self) -> str:
        return '"' + escape_string(self.value) + '"'


@dataclass(frozen=True)
class UnitAttr:
    def __str__(self) -> str:
        return "unit"


@dataclass(frozen=True)
class SymbolRefAttr:
    """``@name`` or ``@outer::@inner``."""

    names: tuple[str, ...]

    @property
    def name(self) -> str:
        return self.names[-1]

    def __str__(self) -> str:
        return "::".join("@" + format_symbol(n) for n in self.names)


@dataclass(frozen=True)
class ArrayAttr:
    """``[a, b, c]`` of attributes."""

    items: tuple[Any, ...]

    def __str__(self) -> str:
        return "[" + ", ".join(str(a) for a in self.items) + "]"


@dataclass(frozen=True)
class DenseArrayAttr:
    """``array<i64: 1, 2>``; ``element`` is the spelled element type."""

    element: str
    values: tuple[Any, ...]

    def __str__(self) -> str:
        if not self.values:
            return f"array<{self.element}>"
        if self.element == "i1":
            vals = ", ".join("true" if v else "false" for v in self.values)
        else:
            vals = ", ".join(str(v) for v in self.values)
        return f"array<{self.element}: {vals}>"


@dataclass(frozen=True, eq=False)
class DenseElementsAttr:
    """``dense<...> : tensor<...>``: a numpy array of the exact element type."""

    type: TensorType
    array: np.ndarray

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DenseElementsAttr):
            return NotImplemented
        return (self.type == other.type and self.array.shape == other.array.shape
                and self.array.dtype == other.array.dtype
                and self.array.tobytes() == other.array.tobytes())

    def __hash__(self) -> int:
        return hash((self.type, self.array.tobytes()))

    def __str__(self) -> str:
        from hlolab.ir.dense import format_dense  # local: dense imports attrs' types only

        return f"dense<{format_dense(self.array, self.type)}> : {self.type}"

    def body(self) -> str:
        """The text between ``dense<`` and ``>``."""
        from hlolab.ir.dense import format_dense

        return format_dense(self.array, self.type)


@dataclass(frozen=True)
class DictAttr:
    """``{a = 1, b}``: insertion-ordered entries."""

    entries: tuple[tuple[str, Any], ...]

    def get(self, key: str, default: Any = None) -> Any:
        for k, v in self.entries:
            if k == key:
                return v
        return default

    def __str__(self) -> str:
        return format_attr_dict(dict(self.entries))


@dataclass(frozen=True)
class TypeAttr:
    type: Type

    def __str__(self) -> str:
        return str(self.type)


@dataclass(frozen=True)
class EnumAttr:
    """``#stablehlo<comparison_direction GT>``: dialect, kind and case."""

    dialect: str
    kind: str
    value: str

    def __str__(self) -> str:
        return f"#{self.dialect}<{self.kind} {self.value}>"


@dataclass(frozen=True)
class StructAttr:
    """``#stablehlo.gather<offset_dims = [1], ...>``: named fields in order.

    Field values are Python ints, bools, tuples of ints, strings, types or
    nested attributes; ``str()`` prints them in the MLIR struct syntax.
    """

    name: str  # e.g. "stablehlo.gather"
    fields: tuple[tuple[str, Any], ...]

    def get(self, key: str, default: Any = None) -> Any:
        for k, v in self.fields:
            if k == key:
                return v
        return default

    def __str__(self) -> str:
        parts = [f"{k} = {_struct_value(v)}" for k, v in self.fields]
        return f"#{self.name}<" + ", ".join(parts) + ">"


def _struct_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, tuple):
        return "[" + ", ".join(_struct_value(x) for x in v) + "]"
    return str(v)


@dataclass(frozen=True)
class OpaqueAttr:
    """An attribute hlolab does not model, kept as its exact text."""

    text: str

    def __str__(self) -> str:
        return self.text


Attr = (IntegerAttr | FloatAttr | BoolAttr | StringAttr | UnitAttr | SymbolRefAttr | ArrayAttr
        | DenseArrayAttr | DenseElementsAttr | DictAttr | TypeAttr | EnumAttr | StructAttr | OpaqueAttr)


def escape_string(s: str) -> str:
    out = []
    for ch in s:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\{ord(ch):02X}")
        else:
            out.append(ch)
    return "".join(out)


def format_symbol(name: str) -> str:
    """A symbol name, quoted when it is not a bare identifier."""
    import re

    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$.]*", name):
        return name
    return '"' + escape_string(name) + '"'


def format_attr_dict(d: dict[str, Any]) -> str:
    if not d:
        return "{}"
    parts = []
    for k, v in d.items():
        key = k if _is_bare_key(k) else '"' + escape_string(k) + '"'
        parts.append(key if isinstance(v, UnitAttr) else f"{key} = {v}")
    return "{" + ", ".join(parts) + "}"


def _is_bare_key(k: str) -> bool:
    import re

    return re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$.]*", k) is not None
