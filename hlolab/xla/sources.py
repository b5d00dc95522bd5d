"""Builder functions that make values from nothing: parameters, constants, iota, tokens."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hlolab.ir.attrs import DenseElementsAttr
from hlolab.limits import ELEMENT_BUDGET
from hlolab.types import ElementType, TensorType, TokenType
from hlolab.xla.builder import BuilderError, XlaBuilder, XlaOp, builder_function, emit
from hlolab.xla.shapes import ElementLike, Shape, ShapeError, as_shape, to_element_type


@builder_function
def Parameter(builder: XlaBuilder, parameter_number: int, shape: Shape | str,
              name: str | None = None) -> XlaOp:
    """Argument number ``parameter_number`` of the function being built (no op)."""
    return builder.add_parameter(parameter_number, shape, name)


def _default_element(a: np.ndarray) -> ElementType:
    """XLA-like defaults for Python literals: ints s32, floats f32, complex c64, bools pred."""
    kind = a.dtype.kind
    if kind == "b":
        return to_element_type("pred")
    if kind in "iu":
        return to_element_type("s32")
    if kind == "f":
        return to_element_type("f32")
    if kind == "c":
        return to_element_type("c64")
    raise BuilderError(f"ConstantLiteral: cannot make a constant of {a.dtype} values")


def literal_array(value: Any, dtype: ElementLike | None = None, what: str = "ConstantLiteral") -> np.ndarray:
    """``value`` as an array of the exact element type: ``dtype`` if given, else the dtype of
    a numpy value, else XLA's default for Python numbers (s32, f32, c64, pred). An integer
    that does not fit the type is an error, not a wrap."""
    is_numpy = isinstance(value, (np.ndarray, np.generic))
    a = np.asarray(value)
    if a.dtype == object or a.dtype.kind in "USV":
        raise BuilderError(f"{what}: not a numeric literal: {value!r}")
    if a.size > ELEMENT_BUDGET:
        raise BuilderError(f"{what}: {a.size} elements is over the element budget ({ELEMENT_BUDGET})")
    try:
        et = to_element_type(dtype) if dtype is not None else (
            to_element_type(a.dtype) if is_numpy else _default_element(a))
    except ShapeError as e:
        raise BuilderError(f"{what}: {e.message}") from None
    if et.is_int and a.dtype.kind in "iub":
        lo, hi = int(et.min_value()), int(et.max_value())
        if a.size and (int(a.min()) < lo or int(a.max()) > hi):
            raise BuilderError(f"{what}: values outside {et} ([{lo}, {hi}])")
    if (et.is_int or et.is_bool) and a.dtype.kind in "fc":
        if not np.all(np.isfinite(a)) or not np.all(np.asarray(a) == np.round(np.real(a))):
            raise BuilderError(f"{what}: non-integer values for {et}")
    if et.is_bool and a.dtype.kind != "b" and a.size and not np.all((a == 0) | (a == 1)):
        raise BuilderError(f"{what}: pred values must be 0/1 or booleans")
    return a.astype(et.dtype)


@builder_function
def ConstantLiteral(builder: XlaBuilder, literal: Any, dtype: ElementLike | None = None) -> XlaOp:
    """A constant array from a numpy array or nested lists: ``stablehlo.constant``."""
    a = literal_array(literal, dtype)
    et = to_element_type(dtype) if dtype is not None else to_element_type(a.dtype)
    t = TensorType(tuple(a.shape), et)
    return emit("stablehlo.constant", [], {"value": DenseElementsAttr(t, a)}, results=[t], builder=builder,
                what="ConstantLiteral")[0]


def _ranked(builder: XlaBuilder, value: Any, dtype: ElementLike | None, rank: int, what: str) -> XlaOp:
    a = np.asarray(value)
    if a.ndim != rank:
        raise BuilderError(f"{what}: expected a rank-{rank} value, got shape {list(a.shape)}")
    return ConstantLiteral(builder, value, dtype)


@builder_function
def ConstantR0(builder: XlaBuilder, value: Any, dtype: ElementLike | None = None) -> XlaOp:
    """A scalar constant: ``stablehlo.constant``."""
    return _ranked(builder, value, dtype, 0, "ConstantR0")


@builder_function
def ConstantR1(builder: XlaBuilder, values: Sequence[Any], dtype: ElementLike | None = None) -> XlaOp:
    """A rank-1 constant: ``stablehlo.constant``."""
    return _ranked(builder, values, dtype, 1, "ConstantR1")


@builder_function
def ConstantR2(builder: XlaBuilder, values: Sequence[Sequence[Any]],
               dtype: ElementLike | None = None) -> XlaOp:
    """A rank-2 constant: ``stablehlo.constant``."""
    return _ranked(builder, values, dtype, 2, "ConstantR2")


@builder_function
def Iota(builder: XlaBuilder, shape: Shape | str | ElementLike, iota_dimension: int = 0) -> XlaOp:
    """0, 1, 2, ... along ``iota_dimension`` of ``shape``: ``stablehlo.iota``. With an element
    type instead of a shape, ``Iota(b, S32, n)`` is the rank-1 iota of size n (XLA's overload)."""
    if isinstance(shape, str) and "[" not in shape or not isinstance(shape, (Shape, str)):
        et = to_element_type(shape)  # type: ignore[arg-type]
        s = Shape.array_shape(et, [int(iota_dimension)])
        iota_dimension = 0
    else:
        s = as_shape(shape)
    if not s.is_array():
        raise BuilderError(f"Iota: needs an array shape, got {s}")
    return emit("stablehlo.iota", [], {"iota_dimension": int(iota_dimension)}, results=[s.to_type()],
                builder=builder, what="Iota")[0]


@builder_function
def CreateToken(builder: XlaBuilder) -> XlaOp:
    """A fresh token: ``stablehlo.create_token``."""
    return emit("stablehlo.create_token", [], builder=builder, what="CreateToken",
                results=[TokenType()])[0]


@builder_function
def AfterAll(builder: XlaBuilder, tokens: Sequence[XlaOp] = ()) -> XlaOp:
    """A token after all ``tokens``: ``stablehlo.after_all``."""
    return emit("stablehlo.after_all", list(tokens), builder=builder, what="AfterAll",
                results=[TokenType()])[0]
