"""Shapes, element types and the dimension-number records of the XLA builder API.

XLA spells element types ``pred s32 u8 f32 bf16 c64 f8e5m2 …`` and shapes
``f32[2,3]`` / ``(f32[2], s32[])``; hlolab's IR uses the MLIR spellings
(``i1 i32 ui8 … complex<f32> f8E5M2``). Both are accepted everywhere a builder
function takes an element type, and so are numpy dtypes and hlolab
``ElementType`` objects.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hlolab.errors import HloLabError
from hlolab.types import (
    ALL_ELEMENT_TYPE_NAMES,
    ElementType,
    TensorType,
    TokenType,
    TupleType,
    Type,
    element_type,
    element_type_of_dtype,
)

# XLA's PrimitiveType spellings -> MLIR element type names
_XLA_NAMES: dict[str, str] = {
    "pred": "i1",
    "s2": "i2", "s4": "i4", "s8": "i8", "s16": "i16", "s32": "i32", "s64": "i64",
    "u2": "ui2", "u4": "ui4", "u8": "ui8", "u16": "ui16", "u32": "ui32", "u64": "ui64",
    "f16": "f16", "bf16": "bf16", "f32": "f32", "f64": "f64",
    "c64": "complex<f32>", "c128": "complex<f64>",
}
for _n in ALL_ELEMENT_TYPE_NAMES:  # the narrow floats: f8e5m2 -> f8E5M2 ...
    if _n.startswith(("f4", "f6", "f8")):
        _XLA_NAMES[_n.lower()] = _n

# the MLIR name -> XLA's spelling (for printing shapes the XLA way)
_TO_XLA: dict[str, str] = {v: k for k, v in _XLA_NAMES.items()}
_TO_XLA.update({"si8": "s8", "si16": "s16", "si32": "s32", "si64": "s64", "si4": "s4", "si2": "s2"})

ElementLike = str | ElementType | np.dtype | type


class ShapeError(HloLabError):
    """A malformed shape or element type given to the builder."""


def to_element_type(x: ElementLike) -> ElementType:
    """An element type from XLA's spelling (``s32``, ``pred``, ``c64``), the MLIR one
    (``i32``, ``i1``, ``complex<f32>``), a numpy dtype or an ``ElementType``."""
    if isinstance(x, ElementType):
        return x
    if isinstance(x, str):
        name = x.strip()
        low = name.lower()
        if low in _XLA_NAMES:
            return element_type(_XLA_NAMES[low])
        for n in ALL_ELEMENT_TYPE_NAMES:
            if n == name or n.lower() == low:
                return element_type(n)
        for si in ("si2", "si4", "si8", "si16", "si32", "si64"):
            if low == si:
                return element_type(si)
        try:  # numpy's names: "float32", "int8", "bool"
            return element_type_of_dtype(np.dtype(name))
        except (TypeError, HloLabError):
            pass
        raise ShapeError(f"unknown element type '{x}' (XLA spellings: {', '.join(sorted(_XLA_NAMES))})")
    try:
        return element_type_of_dtype(np.dtype(x))
    except TypeError:
        raise ShapeError(f"not an element type: {x!r}") from None


def xla_name(et: ElementType) -> str:
    """XLA's spelling of an element type (``s32`` for i32)."""
    return _TO_XLA.get(et.name, et.name)


_ARRAY_RE = re.compile(r"\s*([A-Za-z][A-Za-z0-9<>]*)\s*\[\s*([0-9,\s]*)\]\s*(\{[0-9,\s]*\})?\s*")


@dataclass(frozen=True)
class Shape:
    """An XLA shape: an array (element type + dimensions), a tuple of shapes, or a token."""

    element_type: ElementType | None = None  # None for tuples and tokens
    dimensions: tuple[int, ...] = ()
    tuple_shapes: tuple[Shape, ...] | None = None
    token: bool = False

    # --- constructors ------------------------------------------------------
    @staticmethod
    def array_shape(dtype: ElementLike, dims: Sequence[int]) -> Shape:
        """An array shape: ``Shape.array_shape('f32', [2, 3])``."""
        dims_t = tuple(int(d) for d in dims)
        if any(d < 0 for d in dims_t):
            raise ShapeError(f"negative dimension in {list(dims_t)}")
        return Shape(to_element_type(dtype), dims_t)

    @staticmethod
    def scalar(dtype: ElementLike) -> Shape:
        """A rank-0 array shape."""
        return Shape(to_element_type(dtype), ())

    @staticmethod
    def tuple_shape(shapes: Sequence[Shape]) -> Shape:
        return Shape(None, (), tuple(shapes))

    @staticmethod
    def token_shape() -> Shape:
        return Shape(None, (), None, True)

    @staticmethod
    def parse(text: str) -> Shape:
        """``"f32[2,3]"``, ``"s32[]"``, ``"(f32[2], pred[])"``, ``"token[]"``; a trailing
        layout like ``{1,0}`` is accepted and ignored (hlolab has no layouts)."""
        shape, rest = _parse_shape(text, 0)
        if text[rest:].strip():
            raise ShapeError(f"cannot read shape {text!r}: unexpected {text[rest:].strip()!r}")
        return shape

    @staticmethod
    def from_type(t: Type) -> Shape:
        if isinstance(t, TensorType):
            if not isinstance(t.element, ElementType):
                raise ShapeError(f"no XLA shape for quantized type {t}")
            return Shape(t.element, t.static_shape())
        if isinstance(t, TupleType):
            return Shape.tuple_shape([Shape.from_type(x) for x in t.types])
        if isinstance(t, TokenType):
            return Shape.token_shape()
        raise ShapeError(f"no XLA shape for type {t}")

    # --- queries -----------------------------------------------------------
    def is_tuple(self) -> bool:
        return self.tuple_shapes is not None

    def is_array(self) -> bool:
        return self.element_type is not None

    def is_token(self) -> bool:
        return self.token

    @property
    def rank(self) -> int:
        return len(self.dimensions)

    def dimensions_size(self) -> int:
        return len(self.dimensions)

    def dimension(self, i: int) -> int:
        return self.dimensions[i]

    @property
    def dtype(self) -> np.dtype:
        if self.element_type is None:
            raise ShapeError(f"{self} has no element type")
        return self.element_type.dtype

    def to_type(self) -> Type:
        """The hlolab IR type of this shape."""
        if self.token:
            return TokenType()
        if self.tuple_shapes is not None:
            return TupleType(tuple(s.to_type() for s in self.tuple_shapes))
        assert self.element_type is not None
        return TensorType(self.dimensions, self.element_type)

    def __str__(self) -> str:
        if self.token:
            return "token[]"
        if self.tuple_shapes is not None:
            return "(" + ", ".join(str(s) for s in self.tuple_shapes) + ")"
        assert self.element_type is not None
        return f"{xla_name(self.element_type)}[{','.join(map(str, self.dimensions))}]"


def _parse_shape(text: str, pos: int) -> tuple[Shape, int]:
    m = re.compile(r"\s*\(").match(text, pos)
    if m:
        pos = m.end()
        parts: list[Shape] = []
        if re.compile(r"\s*\)").match(text, pos):
            return Shape.tuple_shape(()), re.compile(r"\s*\)").match(text, pos).end()  # type: ignore[union-attr]
        while True:
            s, pos = _parse_shape(text, pos)
            parts.append(s)
            m = re.compile(r"\s*([,)])").match(text, pos)
            if not m:
                raise ShapeError(f"cannot read shape {text!r}: expected ',' or ')' at column {pos + 1}")
            pos = m.end()
            if m.group(1) == ")":
                return Shape.tuple_shape(parts), pos
    m = _ARRAY_RE.match(text, pos)
    if not m:
        raise ShapeError(f"cannot read shape {text!r}: expected like f32[2,3] at column {pos + 1}")
    name, dims_text = m.group(1), m.group(2).strip()
    dims = tuple(int(d) for d in dims_text.split(",") if d.strip()) if dims_text else ()
    if name.lower() == "token":
        if dims:
            raise ShapeError(f"a token shape has no dimensions: {text!r}")
        return Shape.token_shape(), m.end()
    return Shape.array_shape(name, dims), m.end()


def as_shape(x: Shape | str | Type) -> Shape:
    """A Shape from a Shape, its text or an IR type."""
    if isinstance(x, Shape):
        return x
    if isinstance(x, str):
        return Shape.parse(x)
    return Shape.from_type(x)


# --- records XLA passes to ops ---------------------------------------------------------

@dataclass(frozen=True)
class PaddingDimension:
    edge_padding_low: int = 0
    edge_padding_high: int = 0
    interior_padding: int = 0


@dataclass
class PaddingConfig:
    """Per dimension: low edge, high edge and interior padding (negative edges crop)."""

    dimensions: list[PaddingDimension] = field(default_factory=list)

    @staticmethod
    def make(pads: Sequence[tuple[int, int, int]]) -> PaddingConfig:
        """From ``[(low, high, interior), ...]``, one per dimension."""
        return PaddingConfig([PaddingDimension(int(lo), int(hi), int(i)) for lo, hi, i in pads])

    def add_dimensions(self, low: int = 0, high: int = 0, interior: int = 0) -> PaddingDimension:
        d = PaddingDimension(int(low), int(high), int(interior))
        self.dimensions.append(d)
        return d

    @property
    def low(self) -> tuple[int, ...]:
        return tuple(d.edge_padding_low for d in self.dimensions)

    @property
    def high(self) -> tuple[int, ...]:
        return tuple(d.edge_padding_high for d in self.dimensions)

    @property
    def interior(self) -> tuple[int, ...]:
        return tuple(d.interior_padding for d in self.dimensions)


def _ints(xs: Sequence[int], name: str = "dimension numbers") -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in xs)
    except (TypeError, ValueError):
        raise ShapeError(f"{name} must be a list of integers, got {xs!r}") from None


def _record_fields(rec: Any, rename: dict[str, str] | None = None) -> dict[str, Any]:
    """A dimension-numbers record as the op's attribute fields (ints and int lists checked)."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(rec):
        v = getattr(rec, f.name)
        key = (rename or {}).get(f.name, f.name)
        out[key] = _int(v, f.name) if isinstance(f.default, int) else _ints(v, f.name)
    return out


def _int(x: int, name: str) -> int:
    try:
        return int(x)
    except (TypeError, ValueError):
        raise ShapeError(f"{name} must be an integer, got {x!r}") from None


@dataclass(frozen=True)
class GatherDimensionNumbers:
    """XLA's gather dimension numbers (the spec's names)."""

    offset_dims: Sequence[int] = ()
    collapsed_slice_dims: Sequence[int] = ()
    start_index_map: Sequence[int] = ()
    index_vector_dim: int = 0
    operand_batching_dims: Sequence[int] = ()
    start_indices_batching_dims: Sequence[int] = ()

    def fields(self) -> dict[str, Any]:
        return _record_fields(self)


@dataclass(frozen=True)
class ScatterDimensionNumbers:
    """XLA's scatter dimension numbers (the spec's names)."""

    update_window_dims: Sequence[int] = ()
    inserted_window_dims: Sequence[int] = ()
    scatter_dims_to_operand_dims: Sequence[int] = ()
    index_vector_dim: int = 0
    input_batching_dims: Sequence[int] = ()
    scatter_indices_batching_dims: Sequence[int] = ()

    def fields(self) -> dict[str, Any]:
        return _record_fields(self)


@dataclass(frozen=True)
class DotDimensionNumbers:
    """XLA's dot dimension numbers."""

    lhs_contracting_dimensions: Sequence[int] = ()
    rhs_contracting_dimensions: Sequence[int] = ()
    lhs_batch_dimensions: Sequence[int] = ()
    rhs_batch_dimensions: Sequence[int] = ()

    def fields(self) -> dict[str, Any]:
        return _record_fields(self, {"lhs_batch_dimensions": "lhs_batching_dimensions",
                                     "rhs_batch_dimensions": "rhs_batching_dimensions"})


@dataclass(frozen=True)
class ConvolutionDimensionNumbers:
    """XLA's convolution dimension numbers (input = lhs, kernel = rhs)."""

    input_batch_dimension: int = 0
    input_feature_dimension: int = 1
    input_spatial_dimensions: Sequence[int] = ()
    kernel_input_feature_dimension: int = 1
    kernel_output_feature_dimension: int = 0
    kernel_spatial_dimensions: Sequence[int] = ()
    output_batch_dimension: int = 0
    output_feature_dimension: int = 1
    output_spatial_dimensions: Sequence[int] = ()

    @staticmethod
    def default(num_spatial: int) -> ConvolutionDimensionNumbers:
        """XLA's default layout: input [b, f, s...], kernel [o, i, s...], output [b, f, s...]."""
        sp = tuple(range(2, 2 + num_spatial))
        return ConvolutionDimensionNumbers(0, 1, sp, 1, 0, sp, 0, 1, sp)

    def fields(self) -> dict[str, Any]:
        return _record_fields(self)


# XLA's PrimitiveType names as element types (``ConvertElementType(x, F32)``)
PRED = element_type("i1")
S8, S16, S32, S64 = (element_type(f"i{b}") for b in (8, 16, 32, 64))
U8, U16, U32, U64 = (element_type(f"ui{b}") for b in (8, 16, 32, 64))
F16, BF16, F32, F64 = (element_type(n) for n in ("f16", "bf16", "f32", "f64"))
C64, C128 = element_type("complex<f32>"), element_type("complex<f64>")
