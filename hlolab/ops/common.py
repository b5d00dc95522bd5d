"""Small checks and integer helpers shared by the op families."""

from __future__ import annotations

from typing import Any

import numpy as np

from hlolab.errors import ExecutionError, NotImplementedOpError
from hlolab.ops.registry import OpCall
from hlolab.types import ElementType, TensorType, Type


def reject_quantized(ctx: OpCall) -> None:
    """Quantized operands or results are not executed yet (a clear error, never a guess)."""
    for t in (*ctx.operand_types, *ctx.result_types):
        if isinstance(t, TensorType) and t.is_quantized:
            raise NotImplementedOpError(ctx.name, ctx.loc, detail="quantized operands")


def shapes_compatible(a: tuple[int | None, ...], b: tuple[int | None, ...]) -> bool:
    """Equal ranks and equal sizes wherever both are static (``?`` matches anything)."""
    return len(a) == len(b) and all(x is None or y is None or x == y for x, y in zip(a, b, strict=False))


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
