"""Builder functions that move elements without computing: broadcast, reshape,
transpose, reverse, slices, concatenation, padding, conversions, tuples."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hlolab.types import TensorType, TupleType
from hlolab.xla.builder import BuilderError, XlaBuilder, XlaOp, builder_function, emit
from hlolab.xla.shapes import ElementLike, PaddingConfig, to_element_type


def tensor(x: XlaOp, what: str) -> TensorType:
    if not isinstance(x, XlaOp):
        raise BuilderError(f"{what}: expected an XlaOp, got {type(x).__name__} {x!r}")
    t = x.type
    if not isinstance(t, TensorType):
        raise BuilderError(f"{what}: %{x.name} is not a tensor ({t})")
    return t


def dims_of(x: XlaOp, what: str) -> tuple[int, ...]:
    return tuple(int(d) for d in tensor(x, what).static_shape(f"%{x.name}"))


def ints(xs: Any, what: str, name: str) -> tuple[int, ...]:
    try:
        return tuple(int(v) for v in xs)
    except (TypeError, ValueError):
        raise BuilderError(f"{what}: {name} must be a list of integers, got {xs!r}") from None


def scalar_like(x: XlaOp, value: Any, what: str) -> XlaOp:
    """A Python number where an XlaOp scalar is expected: a constant of ``x``'s element type."""
    if isinstance(value, XlaOp):
        return value
    from hlolab.xla.sources import ConstantR0

    return ConstantR0(x.builder, value, dtype=tensor(x, what).element)


@builder_function
def BroadcastInDim(operand: XlaOp, out_dim_size: Sequence[int],
                   broadcast_dimensions: Sequence[int]) -> XlaOp:
    """``operand`` spread to shape ``out_dim_size``, its dim i on ``broadcast_dimensions[i]``:
    ``stablehlo.broadcast_in_dim``."""
    t = tensor(operand, "BroadcastInDim")
    shape = ints(out_dim_size, "BroadcastInDim", "out_dim_size")
    return emit("stablehlo.broadcast_in_dim", [operand],
                {"broadcast_dimensions": ints(broadcast_dimensions, "BroadcastInDim",
                                              "broadcast_dimensions")},
                results=[TensorType(shape, t.element)], what="BroadcastInDim")[0]


@builder_function
def Broadcast(operand: XlaOp, broadcast_sizes: Sequence[int]) -> XlaOp:
    """New leading dims of ``broadcast_sizes`` in front of ``operand``'s:
    ``stablehlo.broadcast_in_dim`` onto the trailing dims."""
    t = tensor(operand, "Broadcast")
    sizes = ints(broadcast_sizes, "Broadcast", "broadcast_sizes")
    shape = sizes + dims_of(operand, "Broadcast")
    return emit("stablehlo.broadcast_in_dim", [operand],
                {"broadcast_dimensions": tuple(range(len(sizes), len(shape)))},
                results=[TensorType(shape, t.element)], what="Broadcast")[0]


def _reshape(operand: XlaOp, new_sizes: Sequence[int], what: str) -> XlaOp:
    t = tensor(operand, what)
    shape = ints(new_sizes, what, "new_sizes")
    if any(d < 0 for d in shape):
        raise BuilderError(f"{what}: negative size in new_sizes {list(shape)}")
    return emit("stablehlo.reshape", [operand], results=[TensorType(shape, t.element)], what=what)[0]


@builder_function
def Reshape(operand: XlaOp, *args: Sequence[int], dimensions: Sequence[int] | None = None,
            new_sizes: Sequence[int] | None = None) -> XlaOp:
    """``operand``'s elements in row-major order as shape ``new_sizes``: ``stablehlo.reshape``.
    ``Reshape(x, new_sizes)`` or XLA's ``Reshape(x, dimensions, new_sizes)``, where the dims are
    first put in the order ``dimensions`` (``stablehlo.transpose`` then ``stablehlo.reshape``)."""
    if len(args) > 2:
        raise BuilderError("Reshape: takes (operand, new_sizes) or (operand, dimensions, new_sizes)")
    if len(args) == 2:
        if dimensions is not None or new_sizes is not None:
            raise BuilderError("Reshape: dimensions/new_sizes given twice")
        dimensions, new_sizes = args
    elif len(args) == 1:
        if new_sizes is not None:
            if dimensions is not None:
                raise BuilderError("Reshape: dimensions/new_sizes given twice")
            dimensions = args[0]
        else:
            new_sizes = args[0]
    if new_sizes is None:
        raise BuilderError("Reshape: new_sizes is required")
    x = operand
    if dimensions is not None:
        perm = ints(dimensions, "Reshape", "dimensions")
        if perm != tuple(range(len(perm))) or len(perm) != len(dims_of(operand, "Reshape")):
            x = Transpose(operand, perm)
    return _reshape(x, new_sizes, "Reshape")


@builder_function
def Collapse(operand: XlaOp, dimensions: Sequence[int]) -> XlaOp:
    """Consecutive, in-order ``dimensions`` merged into one: ``stablehlo.reshape``."""
    shape = dims_of(operand, "Collapse")
    ds = ints(dimensions, "Collapse", "dimensions")
    if not ds:
        return _reshape(operand, shape, "Collapse")
    if list(ds) != list(range(ds[0], ds[0] + len(ds))) or not (0 <= ds[0] and ds[-1] < len(shape)):
        raise BuilderError(f"Collapse: dimensions {list(ds)} must be consecutive, in order, and dims of "
                           f"the rank-{len(shape)} operand")
    merged = int(np.prod([shape[d] for d in ds], dtype=np.int64))
    return _reshape(operand, shape[:ds[0]] + (merged,) + shape[ds[-1] + 1:], "Collapse")


@builder_function
def Transpose(operand: XlaOp, permutation: Sequence[int]) -> XlaOp:
    """Dims permuted: result dim i is operand dim ``permutation[i]``: ``stablehlo.transpose``."""
    return emit("stablehlo.transpose", [operand],
                {"permutation": ints(permutation, "Transpose", "permutation")}, what="Transpose")[0]


@builder_function
def Rev(operand: XlaOp, dimensions: Sequence[int]) -> XlaOp:
    """The order of elements reversed along ``dimensions``: ``stablehlo.reverse``."""
    return emit("stablehlo.reverse", [operand], {"dimensions": ints(dimensions, "Rev", "dimensions")},
                what="Rev")[0]


@builder_function
def Slice(operand: XlaOp, start_indices: Sequence[int], limit_indices: Sequence[int],
          strides: Sequence[int] | None = None) -> XlaOp:
    """The box [start, limit) taking every stride-th element: ``stablehlo.slice``."""
    start = ints(start_indices, "Slice", "start_indices")
    return emit("stablehlo.slice", [operand],
                {"start_indices": start, "limit_indices": ints(limit_indices, "Slice", "limit_indices"),
                 "strides": ints(strides, "Slice", "strides") if strides is not None else (1,) * len(start)},
                what="Slice")[0]


@builder_function
def SliceInDim(operand: XlaOp, start_index: int, limit_index: int, stride: int, dimno: int) -> XlaOp:
    """A slice along dimension ``dimno`` only: ``stablehlo.slice``."""
    shape = dims_of(operand, "SliceInDim")
    if not 0 <= int(dimno) < len(shape):
        raise BuilderError(f"SliceInDim: dimno {dimno} is not a dim of the rank-{len(shape)} operand")
    start, limit, strides = [0] * len(shape), list(shape), [1] * len(shape)
    start[dimno], limit[dimno], strides[dimno] = int(start_index), int(limit_index), int(stride)
    return emit("stablehlo.slice", [operand],
                {"start_indices": tuple(start), "limit_indices": tuple(limit), "strides": tuple(strides)},
                what="SliceInDim")[0]


def _start_scalars(start_indices: Any, what: str) -> list[XlaOp]:
    """Start indices as scalars: a list of scalar XlaOps, or (the older API) one rank-1
    XlaOp, split with ``stablehlo.slice`` + ``stablehlo.reshape`` per element."""
    if isinstance(start_indices, XlaOp):
        shape = dims_of(start_indices, what)
        if len(shape) != 1:
            raise BuilderError(f"{what}: start indices as one XlaOp must be rank 1, got shape {list(shape)}")
        return [_reshape(Slice(start_indices, [i], [i + 1], [1]), (), what) for i in range(shape[0])]
    return list(start_indices)


@builder_function
def DynamicSlice(operand: XlaOp, start_indices: Sequence[XlaOp] | XlaOp,
                 slice_sizes: Sequence[int]) -> XlaOp:
    """A ``slice_sizes`` box at run-time start indices (clamped to fit): ``stablehlo.dynamic_slice``.
    Start indices as scalar XlaOps, or one rank-1 XlaOp (split by ``stablehlo.slice`` and
    ``stablehlo.reshape``, as the older API passed them)."""
    starts = _start_scalars(start_indices, "DynamicSlice")
    return emit("stablehlo.dynamic_slice", [operand, *starts],
                {"slice_sizes": ints(slice_sizes, "DynamicSlice", "slice_sizes")}, what="DynamicSlice")[0]


@builder_function
def DynamicUpdateSlice(operand: XlaOp, update: XlaOp, start_indices: Sequence[XlaOp] | XlaOp) -> XlaOp:
    """``operand`` with ``update`` written at run-time start indices (clamped to fit):
    ``stablehlo.dynamic_update_slice``. Start indices as in ``DynamicSlice``."""
    starts = _start_scalars(start_indices, "DynamicUpdateSlice")
    return emit("stablehlo.dynamic_update_slice", [operand, update, *starts], what="DynamicUpdateSlice")[0]


@builder_function
def ConcatInDim(builder: XlaBuilder, operands: Sequence[XlaOp], dimension: int) -> XlaOp:
    """``operands`` joined along ``dimension``: ``stablehlo.concatenate``."""
    return emit("stablehlo.concatenate", list(operands), {"dimension": int(dimension)}, builder=builder,
                what="ConcatInDim")[0]


@builder_function
def Concatenate(operands: Sequence[XlaOp], dimension: int) -> XlaOp:
    """``operands`` joined along ``dimension``: ``stablehlo.concatenate``."""
    return emit("stablehlo.concatenate", list(operands), {"dimension": int(dimension)},
                what="Concatenate")[0]


@builder_function
def Pad(operand: XlaOp, padding_value: XlaOp | float, padding_config: PaddingConfig | None = None, *,
        low: Sequence[int] | None = None, high: Sequence[int] | None = None,
        interior: Sequence[int] | None = None) -> XlaOp:
    """Edges (negative: cropped) and interior padding per dim, filled with ``padding_value``:
    ``stablehlo.pad``. Give a ``PaddingConfig`` or ``low``/``high``/``interior`` lists; a number
    as ``padding_value`` is a ``stablehlo.constant`` of the operand's element type."""
    rank = len(dims_of(operand, "Pad"))
    if padding_config is not None:
        if low is not None or high is not None or interior is not None:
            raise BuilderError("Pad: give padding_config or low/high/interior, not both")
        lo, hi, inner = padding_config.low, padding_config.high, padding_config.interior
    else:
        lo = ints(low, "Pad", "low") if low is not None else (0,) * rank
        hi = ints(high, "Pad", "high") if high is not None else (0,) * rank
        inner = ints(interior, "Pad", "interior") if interior is not None else (0,) * rank
    value = scalar_like(operand, padding_value, "Pad")
    return emit("stablehlo.pad", [operand, value],
                {"edge_padding_low": lo, "edge_padding_high": hi, "interior_padding": inner}, what="Pad")[0]


@builder_function
def ConvertElementType(operand: XlaOp, new_element_type: ElementLike) -> XlaOp:
    """Each element converted to ``new_element_type``: ``stablehlo.convert``."""
    t = tensor(operand, "ConvertElementType")
    result = TensorType(t.shape, to_element_type(new_element_type))
    return emit("stablehlo.convert", [operand], results=[result], what="ConvertElementType")[0]


@builder_function
def BitcastConvertType(operand: XlaOp, new_element_type: ElementLike) -> XlaOp:
    """The bits of each element read as ``new_element_type`` (a narrower type adds a last dim,
    a wider one consumes it): ``stablehlo.bitcast_convert``."""
    t = tensor(operand, "BitcastConvertType")
    et = to_element_type(new_element_type)
    shape = dims_of(operand, "BitcastConvertType")
    src_bits, dst_bits = t.element.bits, et.bits  # type: ignore[union-attr]
    if dst_bits < src_bits:
        shape = shape + (src_bits // dst_bits,)
    elif dst_bits > src_bits:
        if not shape:
            raise BuilderError(f"BitcastConvertType: a scalar {t.element} cannot become the wider {et}")
        shape = shape[:-1]
    return emit("stablehlo.bitcast_convert", [operand], results=[TensorType(shape, et)],
                what="BitcastConvertType")[0]


@builder_function
def ReducePrecision(operand: XlaOp, exponent_bits: int, mantissa_bits: int) -> XlaOp:
    """Each float rounded to ``exponent_bits``/``mantissa_bits`` and back:
    ``stablehlo.reduce_precision``."""
    return emit("stablehlo.reduce_precision", [operand],
                {"exponent_bits": int(exponent_bits), "mantissa_bits": int(mantissa_bits)},
                what="ReducePrecision")[0]


@builder_function
def Tuple(builder: XlaBuilder, elements: Sequence[XlaOp]) -> XlaOp:
    """One tuple value of ``elements``: ``stablehlo.tuple``."""
    return emit("stablehlo.tuple", list(elements), builder=builder, what="Tuple",
                results=[TupleType(tuple(e.type for e in elements))])[0]


@builder_function
def GetTupleElement(tuple_data: XlaOp | Sequence[XlaOp], index: int) -> XlaOp:
    """Element ``index`` of a tuple value (``stablehlo.get_tuple_element``); of the Python
    tuple a multi-result builder function returns, simply that result (no op)."""
    if isinstance(tuple_data, (tuple, list)):
        if not 0 <= int(index) < len(tuple_data):
            raise BuilderError(f"GetTupleElement: index {index} out of range for {len(tuple_data)} results")
        return tuple_data[int(index)]
    return emit("stablehlo.get_tuple_element", [tuple_data], {"index": int(index)},
                what="GetTupleElement")[0]


@builder_function
def OptimizationBarrier(operand: XlaOp | Sequence[XlaOp]) -> Any:
    """The operand(s) unchanged, a barrier to reordering: ``stablehlo.optimization_barrier``.
    A list of operands gives a tuple of results."""
    if isinstance(operand, XlaOp):
        return emit("stablehlo.optimization_barrier", [operand], what="OptimizationBarrier")[0]
    return tuple(emit("stablehlo.optimization_barrier", list(operand), what="OptimizationBarrier"))


@builder_function
def GetDimensionSize(operand: XlaOp, dimension: int) -> XlaOp:
    """The size of ``dimension`` as an s32 scalar: ``stablehlo.get_dimension_size``."""
    tensor(operand, "GetDimensionSize")
    return emit("stablehlo.get_dimension_size", [operand], {"dimension": int(dimension)},
                what="GetDimensionSize")[0]
