"""Small checks and integer helpers shared by the op families."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hlolab.errors import ExecutionError, UnsupportedError
from hlolab.ops.registry import OpCall
from hlolab.types import ElementType, QuantizedElementType, TensorType, Type


def contiguous(x: Any) -> np.ndarray:
    """``x`` as a C-contiguous array of its own rank (``np.ascontiguousarray`` turns rank 0
    into rank 1)."""
    return np.require(x, requirements="C")


def reject_quantized(ctx: OpCall) -> None:
    """An op without quantized semantics (CHLO ops: the spec's dequantize/quantize rules,
    hlolab.ops.quantized, cover StableHLO ops) refuses quantized operands or results."""
    for t in (*ctx.operand_types, *ctx.result_types):
        if isinstance(t, TensorType) and t.is_quantized:
            raise UnsupportedError(f"{ctx.name} on quantized tensors is not supported: the spec "
                                   f"gives it no quantized semantics (got {t})", ctx.loc)


def dims_fit(a: int | None, b: int | None) -> bool:
    """Two dimension sizes agree: equal, or either dynamic (``?``, None)."""
    return a is None or b is None or a == b


def shapes_compatible(a: Sequence[int | None], b: Sequence[int | None]) -> bool:
    """Equal ranks and equal sizes wherever both are static (``?`` matches anything)."""
    return len(a) == len(b) and all(dims_fit(x, y) for x, y in zip(a, b, strict=True))


def tensor_type(ctx: OpCall, t: Any, label: str | None, what: str,
                per_tensor_only: bool = False) -> TensorType:
    """``t`` as a TensorType, else ``ctx.error(label, ...)``; with ``per_tensor_only``
    a per-axis quantized tensor is refused too (the spec's "or per-tensor quantized")."""
    if not isinstance(t, TensorType):
        raise ctx.error(label, f"{what} must be a tensor, got {t}")
    if per_tensor_only and isinstance(t.element, QuantizedElementType) and t.element.is_per_axis:
        raise ctx.error(label, f"{what} must be a tensor or per-tensor quantized tensor, got {t}")
    return t


def per_tensor_type(ctx: OpCall, t: Any, label: str | None, what: str) -> TensorType:
    """``tensor_type`` for the spec's "tensor or per-tensor quantized tensor"."""
    return tensor_type(ctx, t, label, what, per_tensor_only=True)


def operand_tensor(ctx: OpCall, i: int, label: str | None, what: str,
                   per_tensor_only: bool = False) -> TensorType:
    """Operand ``i``'s type through ``tensor_type``; a missing operand is ``ctx.error`` too."""
    if i >= len(ctx.operand_types):
        raise ctx.error(label, f"missing {what}: the op has {len(ctx.operand_types)} operands")
    return tensor_type(ctx, ctx.operand_types[i], label, what, per_tensor_only)


def check_value(ctx: OpCall, value: Any, t: Type, what: str) -> np.ndarray:
    """A run-time value must be an array matching its (maybe dynamic) type, with the
    batch dims of a batched region application in front."""
    if not isinstance(value, np.ndarray):
        raise ExecutionError(f"{ctx.name}: {what} must be a tensor value, got {type(value).__name__}",
                             ctx.loc)
    assert isinstance(t, TensorType)
    if not shapes_compatible(ctx.batch_shape + tuple(t.shape), value.shape) or value.dtype != t.dtype:
        raise ExecutionError(f"{ctx.name}: {what} value of shape {value.shape} and dtype {value.dtype} "
                             f"does not match its type {t}", ctx.loc)
    return value


def wrap_int(v: Any, dst: ElementType) -> np.ndarray:
    """int64/uint64 values wrapped (mod 2^bits, two's complement) to integer type ``dst``."""
    v = np.asarray(v)
    if dst.bits >= 8:
        return v.astype(dst.dtype)  # numpy's integer casts wrap
    p = v.astype(np.uint64) & np.uint64((1 << dst.bits) - 1)
    if dst.is_unsigned:
        return p.astype(dst.dtype)
    s = p.astype(np.int64)
    s = np.where(s >= (1 << (dst.bits - 1)), s - (1 << dst.bits), s)
    return s.astype(dst.dtype)


# --- element type relations ----------------------------------------------------------

def _elem_key(e: Any, ignore: tuple[str, ...] = ()) -> tuple:
    """What identifies an element type to the spec: i32 and si32 are the same type."""
    if isinstance(e, QuantizedElementType):
        lo = e.storage_min if e.storage_min is not None else e.storage.min_value()
        hi = e.storage_max if e.storage_max is not None else e.storage.max_value()
        fields = {"axis": e.axis, "scales": e.scales, "zero_points": e.zero_points}
        kept = tuple(v for k, v in fields.items() if k not in ignore)
        return ("quant", _elem_key(e.storage), _elem_key(e.expressed), lo, hi) + kept
    if isinstance(e, ElementType):
        if e.kind in ("float", "complex"):  # bf16 and f16, f8E4M3FN and f8E5M2: same width, other types
            return (e.kind, e.name)
        return (e.kind, e.bits)
    return ("other", str(e))


def same_element(a: Any, b: Any, ignore: tuple[str, ...] = ()) -> bool:
    """Equal element types (quantized: optionally ignoring ``axis``/``scales``/``zero_points``)."""
    return _elem_key(a, ignore) == _elem_key(b, ignore)


def is_promotable(x: Any, y: Any) -> bool:
    """The spec's is_promotable(x, y) on element types."""
    if isinstance(x, QuantizedElementType) or isinstance(y, QuantizedElementType):
        return (isinstance(x, QuantizedElementType) and isinstance(y, QuantizedElementType)
                and same_element(x.expressed, y.expressed) and x.storage.bits <= y.storage.bits)
    if not (isinstance(x, ElementType) and isinstance(y, ElementType)):
        return False
    if x.is_bool or y.is_bool:
        return x.is_bool and y.is_bool
    if x.is_int and y.is_int or x.is_float and y.is_float:
        return x.bits <= y.bits
    if x.is_complex and y.is_complex:
        return x.component.bits <= y.component.bits
    return False


def sliding_windows(x: np.ndarray, window_shape: Sequence[int],
                    axis: Sequence[int] | None = None) -> np.ndarray:
    """``numpy.lib.stride_tricks.sliding_window_view`` for every element type: numpy's
    stride tricks do not understand some ml_dtypes types (float8_e5m2's type string), so
    those windows are taken over the same-size unsigned bits and viewed back."""
    from numpy.lib.stride_tricks import sliding_window_view

    x = np.asarray(x)
    if x.dtype.isbuiltin != 2:  # 2: a user-defined (ml_dtypes) type
        return sliding_window_view(x, tuple(window_shape), axis=axis)
    bits = x.view(np.dtype(f"u{x.dtype.itemsize}"))
    return sliding_window_view(bits, tuple(window_shape), axis=axis).view(x.dtype)
