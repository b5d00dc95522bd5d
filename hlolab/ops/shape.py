"""Shape and data-movement ops: constant, iota, reshape, transpose,
broadcast_in_dim, slice, concatenate, reverse, pad, tuple, get_tuple_element,
optimization_barrier.

Each op follows its spec section: an attribute record with the spec's field
names, ``infer`` for the result type (a ``Partial`` where the declared type
gives the shape: reshape, broadcast_in_dim, iota), ``verify`` checks every
constraint (naming its ``(Cn)``; a check both need is written once and told
how to report, ``Err``), ``evaluate`` is vectorized numpy, and one index-arithmetic
function per op (``*_operand_index``, written with the spec's names) serves
both the provenance index maps (applied to whole ``np.indices`` grids) and
``explain`` (applied to one index).

Quantized tensors hold their storage integers; these ops only move storage,
so quantized values are supported wherever the spec allows them (iota, which
must quantize its index, is run by hlolab.ops.quantized).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from hlolab.errors import ExecutionError
from hlolab.ir.attrs import DenseElementsAttr
from hlolab.messages import Msg
from hlolab.numerics import round_float64
from hlolab.ops.common import contiguous, dims_fit, same_element, shapes_compatible, tensor_type
from hlolab.ops.frame import (
    CELL_CROPPED,
    CELL_VALUE,
    HOLE,
    OPERAND,
    PAD_KINDS,
    PADDING_HIGH,
    PADDING_LOW,
    PaddedFrame,
    is_operand,
    padded_size,
)
from hlolab.ops.record import (
    Attrs,
    InferError,
    Inferred,
    Partial,
    attr,
    integer,
    ints,
    raw,
    record,
    same_types,
)
from hlolab.ops.registry import OpCall, op
from hlolab.trace.explain import DimRole, Explanation, Step, format_value
from hlolab.trace.provenance import (
    IndexMapProvenance,
    Link,
    Provenance,
    check_index,
    index_link,
    unary_copy_provenance,
    value_shape,
)
from hlolab.types import ElementType, QuantizedElementType, TensorType, TokenType, TupleType, element_type

Index = tuple[np.ndarray, ...]  # per-dimension index arrays (or 0-d arrays for one element)


# --- type helpers ------------------------------------------------------------------

def same_type(a: Any, b: Any) -> bool:
    """type(a) = type(b) as the spec means it (spelling-insensitive, recursive)."""
    if isinstance(a, TensorType) and isinstance(b, TensorType):
        return shapes_compatible(a.shape, b.shape) and same_element(a.element, b.element)
    if isinstance(a, TupleType) and isinstance(b, TupleType):
        return len(a.types) == len(b.types) and all(
            same_type(x, y) for x, y in zip(a.types, b.types, strict=True))
    if isinstance(a, TokenType) and isinstance(b, TokenType):
        return True
    return a == b


def _per_axis(t: TensorType) -> bool:
    return isinstance(t.element, QuantizedElementType) and t.element.is_per_axis


def _qdim(ctx: OpCall, t: TensorType) -> int:
    """quantization_dimension(t), checked against the rank (a malformed type otherwise)."""
    axis = t.element.axis
    if not 0 <= axis < t.rank:
        raise ctx.error(None, f"quantization_dimension {axis} is out of range for {t}")
    return axis


def _operand(ctx: OpCall, i: int = 0, label: str | None = "I1", what: str = "operand",
             per_tensor_only: bool = False) -> TensorType:
    if i >= len(ctx.operand_types):
        raise ctx.error(label, f"missing {what}: the op has {len(ctx.operand_types)} operands")
    return tensor_type(ctx, ctx.operand_types[i], label, what, per_tensor_only)


def _result(ctx: OpCall, what: str = "result", per_tensor_only: bool = False) -> TensorType:
    if len(ctx.result_types) != 1:
        raise ctx.error(None, f"expects one result, got {len(ctx.result_types)}")
    return tensor_type(ctx, ctx.result_types[0], None, what, per_tensor_only)


# A constraint check shared by verify (ctx.error) and infer (InferError): err(label, message)
Err = Callable[[str | None, str], Exception]


def _input(types: Sequence[Any], i: int, label: str, what: str,
           per_tensor_only: bool = False) -> TensorType:
    """Operand ``i`` of ``infer``'s operand types as a TensorType, else an InferError."""
    t = types[i] if i < len(types) else None
    if not isinstance(t, TensorType):
        raise InferError(label, f"{what} must be a tensor, got {t}")
    if per_tensor_only and _per_axis(t):
        raise InferError(label, f"{what} must be a tensor or per-tensor quantized tensor, got {t}")
    return t


def _prod(dims: Sequence[int | None]) -> int | None:
    n = 1
    for d in dims:
        if d is None:
            return None
        n *= d
    return n


def _static(t: TensorType) -> tuple[int, ...]:
    return t.static_shape()


def _indices(shape: Sequence[int]) -> Index:
    """Sparse index grids of a shape (broadcastable, one per dimension)."""
    return tuple(np.indices(tuple(shape), sparse=True, dtype=np.int64))


def _one(index: tuple[int, ...]) -> Index:
    return tuple(np.asarray(i, dtype=np.int64) for i in index)


def _ints(index: Index) -> tuple[int, ...]:
    return tuple(int(i) for i in index)


def _list(xs: Sequence[Any]) -> str:
    """``0, 1, 2``: index components as they are written between brackets."""
    return ", ".join(str(int(x)) for x in xs)


def _tuple(parts: Sequence[str]) -> Msg:
    """An index tuple written component by component (``(a,)`` for one, as values are)."""
    return Msg("shape.tuple", parts=", ".join(parts) + ("," if len(parts) == 1 else ""))


def _copy_map(inputs: list[Any], outputs: list[Any], links: list[Link]) -> IndexMapProvenance:
    return IndexMapProvenance([value_shape(v) for v in outputs], [value_shape(v) for v in inputs],
                              [links])


def _no_links(ctx: OpCall, inputs: list[Any], outputs: list[Any]) -> Provenance:
    """No element-level links: constant and iota read no input; tuples have no elements."""
    return IndexMapProvenance([value_shape(v) for v in outputs], [value_shape(v) for v in inputs],
                              [[] for _ in outputs])


def _copy_explain(ctx: OpCall, inputs: list[Any], outputs: list[Any], idx: tuple[int, ...],
                  steps: list[Step], operand: int, operand_index: tuple[int, ...],
                  symbol: str = "operand") -> Explanation:
    """The common tail: result[result_index] = operand[operand_index] (``symbol`` is the
    spec's name of the operand read, e.g. ``inputs[k]``)."""
    value = outputs[0][idx]
    name = ctx.op.operands[operand].name if operand < len(ctx.op.operands) else f"#{operand}"
    steps.append(Step("result[result_index]", Msg("explain.element", name=symbol, index="operand_index"),
                      value, substituted=Msg("explain.element", name=name, index=_list(operand_index))))
    return Explanation(ctx.op.name, idx, steps, value, [], 0)


def _check_result(outputs: list[Any], result: int) -> None:
    if not 0 <= result < len(outputs):
        raise ExecutionError(f"result #{result} does not exist (the op has {len(outputs)} results)")


def _result_index(outputs: list[Any], result: int, index: tuple) -> tuple[int, ...]:
    """The checked index into the result (these ops have one)."""
    _check_result(outputs, result)
    return check_index(value_shape(outputs[0]), index, "result index")


# --- constant ------------------------------------------------------------------------

@record
class ConstantAttrs(Attrs):
    value: DenseElementsAttr = attr(raw("value", DenseElementsAttr, what="a dense<...> literal"))


def _constant_fits(vt: TensorType, out: Any) -> bool:
    """(C1) type(value) = type(output); a quantized output may also be written with
    its storage type as the value's (as MLIR accepts it)."""
    if not isinstance(out, TensorType):
        return False
    storage = out.element.storage if isinstance(out.element, QuantizedElementType) else None
    elem_ok = same_element(vt.element, out.element) or (storage is not None
                                                        and same_element(vt.element, storage))
    return shapes_compatible(vt.shape, out.shape) and elem_ok


def infer_constant(a: ConstantAttrs, types: list[Any]) -> list[Inferred]:
    vt = a.value.type
    if isinstance(vt.element, ElementType) and vt.element.is_int:
        # integer values may be the storage of a quantized output: that needs the declared type
        return [Partial(vt.shape, check=lambda t: _constant_fits(vt, t),
                        what=f"{vt} (or a quantized tensor stored as {vt.element})")]
    return [vt]


def _verify_constant(ctx: OpCall) -> None:
    out = _result(ctx, "output")
    vt = ctx.attrs.value.type
    if not _constant_fits(vt, out):
        raise ctx.error("C1", f"type(value) = {vt} must equal type(output) = {out}")


def _explain_constant(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
                      index: tuple) -> Explanation:
    idx = _result_index(outputs, result, index)
    value = outputs[0][idx]
    step = Step("output[output_index]", Msg("explain.element", name="value", index="output_index"), value,
                substituted=Msg("explain.element", name="value", index=_list(idx)))
    return Explanation(ctx.op.name, idx, [step], value, [Msg("shape.constant.note")], 0)


@op("stablehlo.constant", aliases=("Constant", "ConstantLiteral"), verify=_verify_constant,
    attrs=ConstantAttrs, infer=infer_constant, family="shape", provenance=_no_links,
    explain=_explain_constant, elementwise=True)
def constant(ctx: OpCall) -> np.ndarray:
    """output = value."""
    out = ctx.result_tensor(0)
    shape = _static(out)
    arr = np.asarray(ctx.attrs.value.array)
    if arr.dtype != out.dtype:
        raise ExecutionError(f"constant value has dtype {arr.dtype}, the output needs {out.dtype}",
                             ctx.loc)
    if arr.shape != shape:
        if arr.size != 1:
            raise ExecutionError(f"constant value of shape {arr.shape} does not fit {out}", ctx.loc)
        return np.full(shape, arr.reshape(())[()], dtype=out.dtype)  # a splat
    return arr.copy()


# --- get_dimension_size -----------------------------------------------------------------

@record
class GetDimensionSizeAttrs(Attrs):
    dimension: int = attr(integer("dimension"))


def infer_get_dimension_size(a: GetDimensionSizeAttrs, types: list[Any]) -> list[Inferred]:
    """``tensor<i32>``, once ``dimension`` is a dimension of the operand (C1)."""
    t = types[0]
    if isinstance(t, TensorType) and not 0 <= a.dimension < t.rank:
        raise InferError("C1", f"dimension = {a.dimension} must be in [0, {t.rank}) (rank(operand))")
    return [TensorType((), element_type("i32"))]


def _verify_get_dimension_size(ctx: OpCall) -> None:
    t = ctx.operand_types[0]
    if not isinstance(t, TensorType):
        raise ctx.error(None, f"operand must be a tensor or quantized tensor, got {t}")


def _explain_get_dimension_size(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
                                index: tuple) -> Explanation:
    idx = _result_index(outputs, result, index)
    value = outputs[0][idx]
    d = ctx.attrs.dimension
    steps = [Step("result", Msg("shape.get_dimension_size.formula"), value, dim_roles={},
                  substituted=Msg("shape.get_dimension_size.substituted",
                                  shape=tuple(np.shape(inputs[0])), dimension=d))]
    return Explanation(ctx.op.name, idx, steps, value, [Msg("shape.get_dimension_size.note")], 0)


@op("stablehlo.get_dimension_size", aliases=("GetDimensionSize",), verify=_verify_get_dimension_size,
    attrs=GetDimensionSizeAttrs, infer=infer_get_dimension_size, family="shape", provenance=_no_links,
    explain=_explain_get_dimension_size)
def get_dimension_size(ctx: OpCall, operand: np.ndarray) -> np.ndarray:
    """result = dim(operand, dimension): the shape only, no element is read."""
    return np.array(np.shape(operand)[ctx.attrs.dimension], dtype=np.int32)


# --- iota ----------------------------------------------------------------------------

@record
class IotaAttrs(Attrs):
    iota_dimension: int = attr(integer("iota_dimension"))


def _iota_element(e: Any) -> bool:
    """An integer, floating-point or complex type, or per-tensor quantized."""
    if isinstance(e, QuantizedElementType):
        return not e.is_per_axis
    return isinstance(e, ElementType) and e.kind in ("sint", "uint", "float", "complex")


def infer_iota(a: IotaAttrs, types: list[Any]) -> list[Inferred]:
    """The output type is the declared one: its rank must hold iota_dimension (C1)."""
    d = a.iota_dimension
    if d < 0:
        raise InferError("C1", f"iota_dimension = {d} must be >= 0")
    return [Partial(check=lambda t: isinstance(t, TensorType) and t.rank > d and _iota_element(t.element),
                    what=f"a tensor of rank > {d} of integer, floating-point or complex type or a "
                    "per-tensor quantized tensor")]


def _verify_iota(ctx: OpCall) -> None:
    out = _result(ctx, "output", per_tensor_only=True)
    if not _iota_element(out.element):
        raise ctx.error(None, f"output must be a tensor of integer, floating-point or complex type "
                        f"or a per-tensor quantized tensor, got {out}")
    d = ctx.attrs.iota_dimension
    if not 0 <= d < out.rank:
        raise ctx.error("C1", f"iota_dimension = {d} must be in [0, {out.rank}) (rank(output))")


def _index_to_element(index: np.ndarray, e: ElementType) -> np.ndarray:
    """constant(index, element_type): integers wrap (two's complement), floats round
    to nearest even in one step (ml_dtypes' own cast would round twice via f32)."""
    if e.is_int:
        return index.astype(e.dtype)
    exact = index.astype(np.float64)  # exact: indices are far below 2**53
    if e.is_complex:
        return exact.astype(e.dtype)  # numpy rounds float64 -> float32 correctly
    return round_float64(exact, e.dtype)


def _explain_iota(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
                  index: tuple) -> Explanation:
    idx = _result_index(outputs, result, index)
    d = ctx.attrs.iota_dimension
    value = outputs[0][idx]
    # the step's name is the spec's whole expression: no formula beyond it
    steps = [Step("output_index[iota_dimension]", None, idx[d],
                  dim_roles={d: DimRole("iota")},
                  substituted=Msg("shape.iota.index.substituted", output_index=idx, iota_dimension=d)),
             Step("output[output_index]", Msg("shape.iota.output.formula"), value,
                  substituted=Msg("shape.iota.output.substituted", index=idx[d],
                                  element_type=str(ctx.result_tensor(0).element)))]
    return Explanation(ctx.op.name, idx, steps, value, [Msg("shape.iota.note")], 0)


@op("stablehlo.iota", aliases=("Iota",), verify=_verify_iota, attrs=IotaAttrs, infer=infer_iota,
    family="shape", provenance=_no_links, explain=_explain_iota)
def iota(ctx: OpCall) -> np.ndarray:
    """output[output_index] = constant(output_index[iota_dimension], element_type(output))."""
    out = ctx.result_tensor(0)  # a quantized output: hlolab.ops.quantized quantizes these floats
    shape = _static(out)
    d = ctx.attrs.iota_dimension
    values = _index_to_element(np.arange(shape[d], dtype=np.int64), out.element)
    along = [1] * len(shape)
    along[d] = shape[d]
    return np.broadcast_to(values.reshape(along), shape).copy()


def _c1_element_error(operand: TensorType, result: TensorType) -> tuple[str, str] | None:
    """(C1) of reshape/transpose: same element type (per-axis: up to the axis)."""
    if _per_axis(operand):  # only the quantization dimension may differ
        ok = _per_axis(result) and same_element(operand.element, result.element, ignore=("axis",))
    else:
        ok = same_element(operand.element, result.element)
    if ok:
        return None
    return "C1", (f"element_type(result) = {result.element} must be "
                  f"element_type(operand) = {operand.element}")


def _check_element_c1(ctx: OpCall, operand: TensorType, result: TensorType) -> None:
    bad = _c1_element_error(operand, result)
    if bad:
        raise ctx.error(*bad)


# --- reshape -------------------------------------------------------------------------

def _reshape_error(operand: TensorType, result: TensorType) -> tuple[str | None, str] | None:
    """The first of (C1)-(C3) ``result`` breaks, as (label, message); the result type is
    the declared one, so infer and verify both ask this."""
    bad = _c1_element_error(operand, result)
    if bad:
        return bad
    n_op, n_res = _prod(operand.shape), _prod(result.shape)
    if n_op is not None and n_res is not None and n_op != n_res:
        return "C2", (f"size(operand) = {n_op} must equal size(result) = {n_res} "
                      f"({operand} vs {result})")
    if not _per_axis(operand):
        return None
    for t in (operand, result):
        if not 0 <= t.element.axis < t.rank:
            return None, f"quantization_dimension {t.element.axis} is out of range for {t}"
    qo, qr = operand.element.axis, result.element.axis
    parts = [(operand.shape[:qo], result.shape[:qr], "dims before quantization_dimension"),
             ((operand.shape[qo],), (result.shape[qr],), "dim at quantization_dimension"),
             (operand.shape[qo + 1:], result.shape[qr + 1:], "dims after quantization_dimension")]
    for a, b, what in parts:
        pa, pb = _prod(a), _prod(b)
        if pa is not None and pb is not None and pa != pb:
            return "C3", f"product of operand {what} ({pa}) must equal that of the result ({pb})"
    return None


def infer_reshape(a: Attrs, types: list[Any]) -> list[Inferred]:
    """The shape is the declared one; (C1)-(C3) say which declared types fit."""
    operand = _input(types, 0, "I1", "operand")
    n = _prod(operand.shape)
    return [Partial(None, None if _per_axis(operand) else operand.element,
                    check=lambda t: isinstance(t, TensorType) and _reshape_error(operand, t) is None,
                    what=f"a tensor of {'?' if n is None else n} elements of {operand.element}")]


def _verify_reshape(ctx: OpCall) -> None:
    operand, result = _operand(ctx), _result(ctx)
    bad = _reshape_error(operand, result)
    if bad:
        raise ctx.error(*bad)


def _prov_reshape(ctx: OpCall, inputs: list[Any], outputs: list[Any]) -> Provenance:
    shape = outputs[0].shape
    flat = np.arange(outputs[0].size, dtype=np.int64).reshape(shape)
    return _copy_map(inputs, outputs, [Link(0, "copy", flat)])


def _strides(shape: Sequence[int]) -> list[int]:
    """Row-major strides: how far one step along each dim moves in the flat order."""
    return [int(np.prod(shape[d + 1:], dtype=np.int64)) for d in range(len(shape))]


def _explain_reshape(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
                     index: tuple) -> Explanation:
    idx = _result_index(outputs, result, index)
    rshape, oshape = outputs[0].shape, inputs[0].shape
    k = int(np.ravel_multi_index(idx, rshape)) if rshape else 0
    operand_index = tuple(int(i) for i in np.unravel_index(k, oshape)) if oshape else ()
    # the row-major position written out: sum of result_index[d] * stride[d], and back
    terms = [f"{i} * {st}" if st != 1 else str(i) for i, st in zip(idx, _strides(rshape), strict=True)]
    parts = []
    for d, (n, st) in enumerate(zip(oshape, _strides(oshape), strict=True)):
        q = f"{k} // {st}" if st != 1 else str(k)
        parts.append(q if d == 0 else f"{q} % {n}")
    # a rank-0 or rank-1 index is its position: nothing to substitute
    steps = [Step("position", Msg("shape.reshape.position.formula", shape=rshape), k,
                  substituted=Msg("shape.expr", expr=" + ".join(terms)) if len(rshape) > 1 else None),
             Step("operand_index", Msg("shape.reshape.operand_index.formula", shape=oshape), operand_index,
                  substituted=_tuple(parts) if len(oshape) > 1 else None)]
    return _copy_explain(ctx, inputs, outputs, idx, steps, 0, operand_index)


@op("stablehlo.reshape", aliases=("Reshape",), verify=_verify_reshape, infer=infer_reshape,
    family="shape", provenance=_prov_reshape, explain=_explain_reshape)
def reshape(ctx: OpCall, operand: np.ndarray) -> np.ndarray:
    """Same row-major order of elements, new shape."""
    return operand.reshape(_static(ctx.result_tensor(0))).copy()


# --- transpose -----------------------------------------------------------------------

@record
class TransposeAttrs(Attrs):
    permutation: tuple[int, ...] = attr(ints("permutation"))


def _transpose_shape(err: Err, operand: TensorType, perm: Sequence[int]) -> tuple[int | None, ...]:
    """(C3) dim(operand, permutation...), once (C2) holds."""
    if sorted(perm) != list(range(operand.rank)):
        raise err("C2", f"permutation = {list(perm)} must be a permutation of "
                  f"range({operand.rank}) (rank(operand))")
    return tuple(operand.shape[p] for p in perm)


def infer_transpose(a: TransposeAttrs, types: list[Any]) -> list[Inferred]:
    operand = _input(types, 0, "I1", "operand")
    shape = _transpose_shape(InferError, operand, a.permutation)
    e = operand.element
    if _per_axis(operand):  # (C4): the quantization dimension moves with its dim
        if not 0 <= e.axis < operand.rank:
            raise InferError(None, f"quantization_dimension {e.axis} is out of range for {operand}")
        e = dataclasses.replace(e, axis=a.permutation.index(e.axis))
    return [TensorType(shape, e)]


def _verify_transpose(ctx: OpCall) -> None:
    operand, result = _operand(ctx), _result(ctx)
    _check_element_c1(ctx, operand, result)
    perm = ctx.attrs.permutation
    want = _transpose_shape(ctx.error, operand, perm)
    if not shapes_compatible(result.shape, want):
        raise ctx.error("C3", f"shape(result) = {list(result.shape)} must be dim(operand, "
                        f"permutation...) = {list(want)}")
    if _per_axis(result):
        qr = _qdim(ctx, result)
        qo = operand.element.axis if isinstance(operand.element, QuantizedElementType) else None
        if qo != perm[qr]:
            raise ctx.error("C4", f"quantization_dimension(operand) = {qo} must be "
                            f"permutation[quantization_dimension(result) = {qr}]")


def transpose_operand_index(result_index: Index, permutation: Sequence[int]) -> Index:
    """operand_index such that result_index[d] = operand_index[permutation[d]]."""
    operand_index: list[Any] = [None] * len(permutation)
    for d, p in enumerate(permutation):
        operand_index[p] = result_index[d]
    return tuple(operand_index)


def _prov_transpose(ctx: OpCall, inputs: list[Any], outputs: list[Any]) -> Provenance:
    shape = outputs[0].shape
    oi = transpose_operand_index(_indices(shape), ctx.attrs.permutation)
    return _copy_map(inputs, outputs, [index_link(0, "copy", inputs[0].shape, oi, result_shape=shape)])


def _explain_transpose(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
                       index: tuple) -> Explanation:
    idx = _result_index(outputs, result, index)
    perm = ctx.attrs.permutation
    operand_index = _ints(transpose_operand_index(_one(idx), perm))
    roles = {d: DimRole("operand_dim", d=p) for d, p in enumerate(perm)}
    inverse = [0] * len(perm)  # operand dim p reads result dim inverse[p]
    for d, p in enumerate(perm):
        inverse[p] = d
    steps = [Step("operand_index", Msg("shape.transpose.operand_index.formula", permutation=list(perm)),
                  operand_index, dim_roles=roles,
                  substituted=Msg("shape.transpose.operand_index.substituted", result_index=idx,
                                  dims=_list(inverse)))]
    return _copy_explain(ctx, inputs, outputs, idx, steps, 0, operand_index)


@op("stablehlo.transpose", aliases=("Transpose",), verify=_verify_transpose, attrs=TransposeAttrs,
    infer=infer_transpose, family="shape", provenance=_prov_transpose, explain=_explain_transpose)
def transpose(ctx: OpCall, operand: np.ndarray) -> np.ndarray:
    """result[result_index] = operand[operand_index], result_index[d] = operand_index[permutation[d]]."""
    return contiguous(np.transpose(operand, ctx.attrs.permutation))


# --- broadcast_in_dim ----------------------------------------------------------------

@record
class BroadcastInDimAttrs(Attrs):
    broadcast_dimensions: tuple[int, ...] = attr(ints("broadcast_dimensions"))


def _broadcast_element_ok(operand: TensorType, result: TensorType) -> bool:
    """(C1): per-axis quantization parameters may differ, per-axis-ness may not."""
    if _per_axis(operand):
        return _per_axis(result) and same_element(operand.element, result.element,
                                                  ignore=("axis", "scales", "zero_points"))
    return same_element(operand.element, result.element)


def _broadcast_fits(operand: TensorType, dims: Sequence[int], result: Any) -> bool:
    """``result`` meets (C1), (C3) and (C5) (the checks that need the declared type)."""
    return (isinstance(result, TensorType) and _broadcast_element_ok(operand, result)
            and all(0 <= rd < result.rank for rd in dims)
            and all(n == 1 or dims_fit(n, result.shape[rd])
                    for n, rd in zip(operand.shape, dims, strict=True)))


def infer_broadcast_in_dim(a: BroadcastInDimAttrs, types: list[Any]) -> list[Inferred]:
    """The shape is the declared one: the operand's dims must fit where they land."""
    operand = _input(types, 0, "I1", "operand")
    dims = a.broadcast_dimensions
    if len(dims) != operand.rank:
        raise InferError("C2", f"size(broadcast_dimensions) = {len(dims)} must equal rank(operand) = "
                         f"{operand.rank}")
    if any(d < 0 for d in dims):
        raise InferError("C3", f"broadcast_dimensions = {list(dims)} must be >= 0")
    if len(set(dims)) != len(dims):
        raise InferError("C4", f"broadcast_dimensions = {list(dims)} must be unique")
    return [Partial(None, None if _per_axis(operand) else operand.element,
                    check=lambda t: _broadcast_fits(operand, dims, t),
                    what=f"a tensor of {operand.element} with {list(operand.shape)} at dims {list(dims)}")]


def _verify_broadcast_in_dim(ctx: OpCall) -> None:
    operand, result = _operand(ctx), _result(ctx)
    if not _broadcast_element_ok(operand, result):
        raise ctx.error("C1", f"element_type(result) = {result.element} must be "
                        f"element_type(operand) = {operand.element}")
    dims = ctx.attrs.broadcast_dimensions
    if len(dims) != operand.rank:
        raise ctx.error("C2", f"size(broadcast_dimensions) = {len(dims)} must equal rank(operand) = "
                        f"{operand.rank}")
    bad = [d for d in dims if not 0 <= d < result.rank]
    if bad:
        raise ctx.error("C3", f"broadcast_dimensions = {list(dims)} must be in [0, {result.rank}) "
                        f"(rank(result)); {bad} are not")
    if len(set(dims)) != len(dims):
        raise ctx.error("C4", f"broadcast_dimensions = {list(dims)} must be unique")
    for d, rd in enumerate(dims):
        n, m = operand.shape[d], result.shape[rd]
        if n is not None and n != 1 and m is not None and n != m:
            raise ctx.error("C5", f"dim(operand, {d}) = {n} must be 1 or dim(result, "
                            f"broadcast_dimensions[{d}] = {rd}) = {m}")
    if _per_axis(result):
        _verify_broadcast_per_axis(ctx, operand, result, dims)


def _verify_broadcast_per_axis(ctx: OpCall, operand: TensorType, result: TensorType,
                               dims: Sequence[int]) -> None:
    oe, res_e = operand.element, result.element
    if not isinstance(oe, QuantizedElementType) or not oe.is_per_axis:
        raise ctx.error("C6", f"a per-axis quantized result needs a per-axis quantized operand, got {oe}")
    qo, qr = _qdim(ctx, operand), _qdim(ctx, result)
    if qr != dims[qo]:
        raise ctx.error("C6", f"quantization_dimension(result) = {qr} must be "
                        f"broadcast_dimensions[quantization_dimension(operand) = {qo}] = {dims[qo]}")
    n = result.shape[qr]
    if operand.shape[qo] == 1 and n is not None:
        same_params = (len(res_e.scales) == n and all(s == oe.scales[0] for s in res_e.scales)
                       and all(z == oe.zero_points[0] for z in res_e.zero_points))
        if not same_params:
            raise ctx.error("C6", f"dim(operand, quantization_dimension) = 1, so every scale and zero "
                            f"point of the result must be the operand's ({oe.scales[0]}, "
                            f"{oe.zero_points[0]}); got {list(res_e.scales)}, {list(res_e.zero_points)}")


def broadcast_operand_index(result_index: Index, operand_shape: Sequence[int],
                            broadcast_dimensions: Sequence[int]) -> Index:
    """operand_index[d] = 0 if dim(operand, d) = 1, else result_index[broadcast_dimensions[d]]."""
    zero = np.zeros((), dtype=np.int64)
    return tuple(zero if n == 1 else result_index[broadcast_dimensions[d]]
                 for d, n in enumerate(operand_shape))


def _prov_broadcast(ctx: OpCall, inputs: list[Any], outputs: list[Any]) -> Provenance:
    shape = outputs[0].shape
    oi = broadcast_operand_index(_indices(shape), inputs[0].shape, ctx.attrs.broadcast_dimensions)
    return _copy_map(inputs, outputs, [index_link(0, "copy", inputs[0].shape, oi, result_shape=shape)])


def _explain_broadcast(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
                       index: tuple) -> Explanation:
    idx = _result_index(outputs, result, index)
    dims = ctx.attrs.broadcast_dimensions
    oshape = inputs[0].shape
    operand_index = _ints(broadcast_operand_index(_one(idx), oshape, dims))
    roles = {r: DimRole("new") for r in range(len(idx))}
    for d, rd in enumerate(dims):
        roles[rd] = DimRole("pinned", d=d) if oshape[d] == 1 else DimRole("operand_dim", d=d)
    parts = ["0" if n == 1 else f"{format_value(idx)}[{dims[d]}]" for d, n in enumerate(oshape)]
    steps = [Step("operand_index", Msg("shape.broadcast_in_dim.operand_index.formula",
                                       broadcast_dimensions=list(dims)),
                  operand_index, dim_roles=roles, substituted=_tuple(parts))]
    return _copy_explain(ctx, inputs, outputs, idx, steps, 0, operand_index)


@op("stablehlo.broadcast_in_dim", aliases=("BroadcastInDim",),
    verify=_verify_broadcast_in_dim, attrs=BroadcastInDimAttrs, infer=infer_broadcast_in_dim,
    family="shape", provenance=_prov_broadcast,
    explain=_explain_broadcast)
def broadcast_in_dim(ctx: OpCall, operand: np.ndarray) -> np.ndarray:
    """Place operand dim d at result dim broadcast_dimensions[d]; size-1 dims repeat."""
    shape = _static(ctx.result_tensor(0))
    dims = ctx.attrs.broadcast_dimensions
    order = sorted(range(len(dims)), key=lambda d: dims[d])  # operand dims by result position
    moved = np.transpose(operand, order)
    placed = [1] * len(shape)
    for d in order:
        placed[dims[d]] = operand.shape[d]
    return np.broadcast_to(moved.reshape(placed), shape).copy()


# --- slice ---------------------------------------------------------------------------

@record
class SliceAttrs(Attrs):
    start_indices: tuple[int, ...] = attr(ints("start_indices"))
    limit_indices: tuple[int, ...] = attr(ints("limit_indices"))
    strides: tuple[int, ...] = attr(ints("strides"))


def _slice_shape(err: Err, operand: TensorType, a: SliceAttrs) -> tuple[int, ...]:
    """(C5) ceil((limit_indices - start_indices) / strides), once (C2)-(C4) hold."""
    start, limit, strides = a.start_indices, a.limit_indices, a.strides
    if not len(start) == len(limit) == len(strides) == operand.rank:
        raise err("C2", f"size(start_indices) = {len(start)}, size(limit_indices) = {len(limit)} "
                  f"and size(strides) = {len(strides)} must all equal rank(operand) = {operand.rank}")
    for d, (s, lim, n) in enumerate(zip(start, limit, operand.shape, strict=True)):
        if not (0 <= s <= lim and (n is None or lim <= n)):
            raise err("C3", f"dimension {d}: 0 <= start_indices ({s}) <= limit_indices ({lim}) "
                      f"<= dim(operand) ({n}) does not hold")
    if any(st <= 0 for st in strides):
        raise err("C4", f"strides = {list(strides)} must be positive")
    return tuple(-((s - lim) // st) for s, lim, st in zip(start, limit, strides, strict=True))  # ceil


def infer_slice(a: SliceAttrs, types: list[Any]) -> list[Inferred]:
    operand = _input(types, 0, "I1", "operand", per_tensor_only=True)
    return [TensorType(_slice_shape(InferError, operand, a), operand.element)]


def _verify_slice(ctx: OpCall) -> None:
    operand = _operand(ctx, per_tensor_only=True)
    result = _result(ctx, per_tensor_only=True)
    if not same_element(operand.element, result.element):
        raise ctx.error("C1", f"element_type(operand) = {operand.element} must equal "
                        f"element_type(result) = {result.element}")
    want = _slice_shape(ctx.error, operand, ctx.attrs)
    if not shapes_compatible(result.shape, want):
        raise ctx.error("C5", f"shape(result) = {list(result.shape)} must be "
                        f"ceil((limit_indices - start_indices) / strides) = {list(want)}")


def slice_operand_index(result_index: Index, start_indices: Sequence[int],
                        strides: Sequence[int]) -> Index:
    """operand_index = start_indices + result_index * strides."""
    return tuple(s + r * st for r, s, st in zip(result_index, start_indices, strides, strict=True))


def _prov_slice(ctx: OpCall, inputs: list[Any], outputs: list[Any]) -> Provenance:
    shape = outputs[0].shape
    oi = slice_operand_index(_indices(shape), ctx.attrs.start_indices, ctx.attrs.strides)
    return _copy_map(inputs, outputs, [index_link(0, "copy", inputs[0].shape, oi, result_shape=shape)])


def _explain_slice(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
                   index: tuple) -> Explanation:
    idx = _result_index(outputs, result, index)
    start, strides = ctx.attrs.start_indices, ctx.attrs.strides
    operand_index = _ints(slice_operand_index(_one(idx), start, strides))
    steps = [Step("operand_index", Msg("shape.slice.operand_index.formula"), operand_index,
                  substituted=Msg("shape.slice.operand_index.substituted", start_indices=list(start),
                                  result_index=list(idx), strides=list(strides)))]
    return _copy_explain(ctx, inputs, outputs, idx, steps, 0, operand_index)


@op("stablehlo.slice", aliases=("Slice",), verify=_verify_slice, attrs=SliceAttrs, infer=infer_slice,
    family="shape", provenance=_prov_slice, explain=_explain_slice)
def slice_(ctx: OpCall, operand: np.ndarray) -> np.ndarray:
    """result[result_index] = operand[start_indices + result_index * strides]."""
    a = ctx.attrs
    start, limit, strides = a.start_indices, a.limit_indices, a.strides
    # np.array, not .copy(): indexing a 0-d array with () gives a numpy scalar, not an array
    index = tuple(slice(s, lim, st) for s, lim, st in zip(start, limit, strides, strict=True))
    return np.array(operand[index])


# --- concatenate ---------------------------------------------------------------------

@record
class ConcatenateAttrs(Attrs):
    dimension: int = attr(integer("dimension"))


def _concatenate_shape(err: Err, inputs: list[TensorType], d: int) -> tuple[int | None, ...]:
    """(C6) shape(inputs[0]) with dim d summed over the inputs, once (C1), (C2), (C4) hold."""
    first = inputs[0]
    for i, t in enumerate(inputs):
        if not same_element(t.element, first.element):
            raise err("C1", f"element types of inputs differ: inputs[0] is {first.element}, "
                      f"inputs[{i}] is {t.element}")
    if not 0 <= d < first.rank:
        raise err("C4", f"dimension = {d} must be in [0, {first.rank}) (rank(inputs[0]))")
    for i, t in enumerate(inputs):
        others, first_others = t.shape[:d] + t.shape[d + 1:], first.shape[:d] + first.shape[d + 1:]
        if t.rank != first.rank or not shapes_compatible(others, first_others):
            raise err("C2", f"inputs[{i}] shape {list(t.shape)} must equal inputs[0] shape "
                      f"{list(first.shape)} except in dimension {d}")
    sizes = [t.shape[d] for t in inputs]
    total = sum(sizes) if all(s is not None for s in sizes) else None
    return first.shape[:d] + (total,) + first.shape[d + 1:]


def infer_concatenate(a: ConcatenateAttrs, types: list[Any]) -> list[Inferred]:
    if not types:
        raise InferError("C3", "0 < size(inputs) does not hold: no inputs")
    inputs = [_input(types, i, "I1", f"inputs[{i}]", per_tensor_only=True) for i in range(len(types))]
    return [TensorType(_concatenate_shape(InferError, inputs, a.dimension), inputs[0].element)]


def _verify_concatenate(ctx: OpCall) -> None:
    if not ctx.operand_types:
        raise ctx.error("C3", "0 < size(inputs) does not hold: no inputs")
    inputs = [_operand(ctx, i, "I1", f"inputs[{i}]", per_tensor_only=True)
              for i in range(len(ctx.operand_types))]
    result = _result(ctx, per_tensor_only=True)
    first = inputs[0]
    d = ctx.attrs.dimension
    want = _concatenate_shape(ctx.error, inputs, d)
    if not same_element(result.element, first.element):
        raise ctx.error("C5", f"element_type(result) = {result.element} must be element_type(inputs[0]) "
                        f"= {first.element}")
    sizes = [t.shape[d] for t in inputs]
    if not shapes_compatible(result.shape, want):
        raise ctx.error("C6", f"shape(result) = {list(result.shape)} must be {list(want)} "
                        f"(dim {d} = {' + '.join(str(s) for s in sizes)})")


def concatenate_operand_index(result_index: Index, sizes: Sequence[int],
                              dimension: int) -> tuple[np.ndarray, Index]:
    """(k, index into inputs[k]): id = d0 + ... + dk-1 + kd along ``dimension``."""
    starts = np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)])
    rd = np.asarray(result_index[dimension])
    k = np.searchsorted(starts[1:], rd, side="right")
    kd = rd - starts[np.minimum(k, len(sizes) - 1)]
    index = tuple(kd if d == dimension else r for d, r in enumerate(result_index))
    return k, index


def _prov_concatenate(ctx: OpCall, inputs: list[Any], outputs: list[Any]) -> Provenance:
    shape = outputs[0].shape
    d = ctx.attrs.dimension
    k, oi = concatenate_operand_index(_indices(shape), [v.shape[d] for v in inputs], d)
    links = [index_link(i, "copy", v.shape, oi, valid=(k == i), result_shape=shape)
             for i, v in enumerate(inputs)]
    return _copy_map(inputs, outputs, links)


def _explain_concatenate(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
                         index: tuple) -> Explanation:
    idx = _result_index(outputs, result, index)
    d = ctx.attrs.dimension
    sizes = [v.shape[d] for v in inputs]
    k, oi = concatenate_operand_index(_one(idx), sizes, d)
    k, operand_index = int(k), _ints(oi)
    before = " + ".join(str(s) for s in sizes[:k]) or "0"
    low = sum(sizes[:k])
    steps = [Step("k", Msg("shape.concatenate.k.formula", dimension=d), k,
                  substituted=Msg("shape.concatenate.k.substituted", low=low, id=idx[d],
                                  high=low + sizes[k], sizes=sizes)),
             Step("kd", Msg("shape.concatenate.kd.formula"), operand_index[d],
                  substituted=Msg("shape.concatenate.kd.substituted", id=idx[d], before=before)),
             Step("operand_index", Msg("shape.concatenate.operand_index.formula", dimension=d), operand_index,
                  dim_roles={d: DimRole("concatenated")},
                  substituted=Msg("shape.concatenate.operand_index.substituted", result_index=idx, id=idx[d],
                                  dimension=d, kd=operand_index[d]))]
    return _copy_explain(ctx, inputs, outputs, idx, steps, k, operand_index, symbol="inputs[k]")


@op("stablehlo.concatenate", aliases=("ConcatInDim", "Concatenate"), verify=_verify_concatenate,
    attrs=ConcatenateAttrs, infer=infer_concatenate, family="shape", provenance=_prov_concatenate,
    explain=_explain_concatenate)
def concatenate(ctx: OpCall, *inputs: np.ndarray) -> np.ndarray:
    """The inputs one after another along ``dimension``."""
    return np.concatenate(inputs, axis=ctx.attrs.dimension)


# --- reverse -------------------------------------------------------------------------

@record
class ReverseAttrs(Attrs):
    dimensions: tuple[int, ...] = attr(ints("dimensions"))


def _check_reverse(err: Err, dims: Sequence[int], rank: int) -> None:
    """(C2), (C3); rank(result) = rank(operand) by (C1)."""
    if len(set(dims)) != len(dims):
        raise err("C2", f"dimensions = {list(dims)} must be unique")
    bad = [d for d in dims if not 0 <= d < rank]
    if bad:
        raise err("C3", f"dimensions = {list(dims)} must be in [0, {rank}) (rank(result)); "
                  f"{bad} are not")


def infer_reverse(a: ReverseAttrs, types: list[Any]) -> list[Inferred]:
    operand = _input(types, 0, "I1", "operand", per_tensor_only=True)
    _check_reverse(InferError, a.dimensions, operand.rank)
    return [operand]


def _verify_reverse(ctx: OpCall) -> None:
    operand = _operand(ctx, per_tensor_only=True)
    result = _result(ctx, per_tensor_only=True)
    if not same_type(operand, result):
        raise ctx.error("C1", f"type(operand) = {operand} must equal type(result) = {result}")
    _check_reverse(ctx.error, ctx.attrs.dimensions, result.rank)


def reverse_operand_index(result_index: Index, result_shape: Sequence[int],
                          dimensions: Sequence[int]) -> Index:
    """operand_index[d] = dim(result, d) - result_index[d] - 1 if d in dimensions."""
    return tuple(result_shape[d] - r - 1 if d in dimensions else r for d, r in enumerate(result_index))


def _prov_reverse(ctx: OpCall, inputs: list[Any], outputs: list[Any]) -> Provenance:
    shape = outputs[0].shape
    oi = reverse_operand_index(_indices(shape), shape, ctx.attrs.dimensions)
    return _copy_map(inputs, outputs, [index_link(0, "copy", inputs[0].shape, oi, result_shape=shape)])


def _explain_reverse(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
                     index: tuple) -> Explanation:
    idx = _result_index(outputs, result, index)
    dims = ctx.attrs.dimensions
    shape = outputs[0].shape
    operand_index = _ints(reverse_operand_index(_one(idx), shape, dims))
    roles = {d: DimRole("reversed") if d in dims else DimRole("kept") for d in range(len(idx))}
    parts = [f"{shape[d]} - {i} - 1" if d in dims else str(i) for d, i in enumerate(idx)]
    steps = [Step("operand_index", Msg("shape.reverse.operand_index.formula", dimensions=list(dims)),
                  operand_index, dim_roles=roles, substituted=_tuple(parts))]
    return _copy_explain(ctx, inputs, outputs, idx, steps, 0, operand_index)


@op("stablehlo.reverse", aliases=("Rev", "Reverse"), verify=_verify_reverse, attrs=ReverseAttrs,
    infer=infer_reverse, family="shape", provenance=_prov_reverse, explain=_explain_reverse)
def reverse(ctx: OpCall, operand: np.ndarray) -> np.ndarray:
    """Reverse the order of elements along ``dimensions``."""
    # np.array, not .copy(): np.flip of a 0-d array gives a numpy scalar, not an array
    return np.array(np.flip(operand, axis=tuple(ctx.attrs.dimensions)))


# --- pad -----------------------------------------------------------------------------

@record
class PadAttrs(Attrs):
    edge_padding_low: tuple[int, ...] = attr(ints("edge_padding_low"))
    edge_padding_high: tuple[int, ...] = attr(ints("edge_padding_high"))
    interior_padding: tuple[int, ...] = attr(ints("interior_padding"))


def _pad_shape(err: Err, operand: TensorType, a: PadAttrs) -> tuple[int | None, ...]:
    """(C4) shape(operand) + edge_padding_low + max(shape(operand) - 1, 0) * interior_padding
    + edge_padding_high (a dynamic size stays dynamic), once (C2), (C3) hold."""
    low, high, interior = a.edge_padding_low, a.edge_padding_high, a.interior_padding
    if not len(low) == len(high) == len(interior) == operand.rank:
        raise err("C2", f"size(edge_padding_low) = {len(low)}, size(edge_padding_high) = "
                  f"{len(high)} and size(interior_padding) = {len(interior)} must all equal "
                  f"rank(operand) = {operand.rank}")
    if any(i < 0 for i in interior):
        raise err("C3", f"interior_padding = {list(interior)} must be >= 0")
    return tuple(None if n is None else padded_size(n, lo, hi, i)
                 for n, lo, hi, i in zip(operand.shape, low, high, interior, strict=True))


def infer_pad(a: PadAttrs, types: list[Any]) -> list[Inferred]:
    operand = _input(types, 0, "I1", "operand", per_tensor_only=True)
    pv = _input(types, 1, "I2", "padding_value", per_tensor_only=True)
    if pv.rank != 0:
        raise InferError("I2", f"padding_value must be a 0-dimensional tensor, got {pv}")
    if not same_element(operand.element, pv.element):
        raise InferError("C1", f"element_type(operand) = {operand.element} and "
                         f"element_type(padding_value) = {pv.element} must be equal")
    shape = _pad_shape(InferError, operand, a)
    if any(n is not None and n < 0 for n in shape):
        raise InferError("C4", f"shape(result) = {['?' if n is None else n for n in shape]} would have "
                         "a negative size: negative edge padding removes more than the padded operand")
    return [TensorType(shape, operand.element)]


def _verify_pad(ctx: OpCall) -> None:
    operand = _operand(ctx, 0, "I1", "operand", per_tensor_only=True)
    pv = _operand(ctx, 1, "I2", "padding_value", per_tensor_only=True)
    result = _result(ctx, per_tensor_only=True)
    if pv.rank != 0:
        raise ctx.error("I2", f"padding_value must be a 0-dimensional tensor, got {pv}")
    if not (same_element(operand.element, pv.element) and same_element(operand.element, result.element)):
        raise ctx.error("C1", f"element_type(operand) = {operand.element}, element_type(padding_value) "
                        f"= {pv.element} and element_type(result) = {result.element} must be equal")
    want = _pad_shape(ctx.error, operand, ctx.attrs)
    if not shapes_compatible(result.shape, want):
        raise ctx.error("C4", f"shape(result) = {list(result.shape)} must be shape(operand) + "
                        "edge_padding_low + max(shape(operand) - 1, 0) * interior_padding + "
                        f"edge_padding_high = {list(want)}")


# what a result dimension's index is: PAD_KINDS (hlolab.ops.frame), which are DimRole kinds too
# (an operand element, edge padding before or after the operand, or an interior hole)


def pad_frame(a: PadAttrs, operand_shape: Sequence[int]) -> PaddedFrame:
    """The result's geometry: the operand spread interior_padding + 1 apart, edge padding
    around it (negative: cropped)."""
    return PaddedFrame(tuple(operand_shape), a.edge_padding_low, a.edge_padding_high, a.interior_padding)


def pad_operand_index(result_index: Index, frame: PaddedFrame) -> tuple[Index, Index]:
    """(operand_index, kind per dimension) where result_index = edge_padding_low +
    operand_index * (interior_padding + 1); kind indexes PAD_KINDS (0: an operand element)."""
    return frame.classify(result_index)


def _prov_pad(ctx: OpCall, inputs: list[Any], outputs: list[Any]) -> Provenance:
    shape = outputs[0].shape
    oi, kinds = pad_operand_index(_indices(shape), pad_frame(ctx.attrs, inputs[0].shape))
    valid = np.broadcast_to(is_operand(kinds), shape)
    links = [index_link(0, "copy", inputs[0].shape, oi, valid=valid, result_shape=shape),
             index_link(1, "pad_value", (), (), valid=~valid, result_shape=shape)]
    prov = _copy_map(inputs, outputs, links)
    # for renderers: result cells by kind (low / high edge, interior, copied), cropped operand cells
    frame = pad_frame(ctx.attrs, inputs[0].shape)
    prov.cell_kinds = {"result0": frame.cell_kinds(),
                       "operand0": np.where(frame.cropped(), CELL_CROPPED, CELL_VALUE).astype(np.int8)}
    prov.frame_axes = {"result0": tuple(zip(frame.low, frame.step, inputs[0].shape, strict=True))}
    return prov


def _explain_pad(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
                 index: tuple) -> Explanation:
    idx = _result_index(outputs, result, index)
    low, interior = ctx.attrs.edge_padding_low, ctx.attrs.interior_padding
    frame = pad_frame(ctx.attrs, inputs[0].shape)
    oi, kinds = pad_operand_index(_one(idx), frame)
    shifted = tuple(int(r - lo) for r, lo in zip(idx, low, strict=True))
    steps_ = frame.step
    roles = {d: DimRole(PAD_KINDS[int(k)]) for d, k in enumerate(kinds)}
    # an integer where an operand element sits, else why the quotient is no operand index
    why = {PADDING_LOW: "below", PADDING_HIGH: "past", HOLE: "hole"}
    shown = tuple(int(q) if int(k) == OPERAND else
                  Msg(f"shape.pad.reason.{why[int(k)]}", shifted=t, step=st, last=n - 1)
                  for q, k, t, st, n in zip(oi, kinds, shifted, steps_, inputs[0].shape, strict=True))
    steps = [Step("result_index - edge_padding_low", None, shifted,
                  substituted=Msg("shape.pad.shifted.substituted", result_index=idx,
                                  edge_padding_low=tuple(low))),
             Step("operand_index", Msg("shape.pad.operand_index.formula", interior_padding=list(interior)),
                  shown, dim_roles=roles,
                  substituted=Msg("shape.pad.operand_index.substituted", shifted=shifted, steps=steps_))]
    if all(int(k) == OPERAND for k in kinds):
        return _copy_explain(ctx, inputs, outputs, idx, steps, 0, _ints(oi))
    value = outputs[0][idx]
    name = ctx.op.operands[1].name if len(ctx.op.operands) > 1 else "padding_value"
    steps.append(Step("result[result_index]", Msg("shape.pad.value.formula"), value,
                      substituted=Msg("shape.expr", expr=name)))
    # the padded dims as one message chain (a list argument would not follow the language)
    where: Msg | None = None
    for d in reversed([d for d, r in roles.items() if r.kind != "operand"]):
        item = Msg("shape.pad.note.dim", d=d, role=roles[d])
        where = item if where is None else Msg("shape.pad.note.and", first=item, rest=where)
    return Explanation(ctx.op.name, idx, steps, value, [Msg("shape.pad.note.no_operand", dims=where)], 0)


@op("stablehlo.pad", aliases=("Pad",), verify=_verify_pad, attrs=PadAttrs, infer=infer_pad,
    family="shape", provenance=_prov_pad, explain=_explain_pad)
def pad(ctx: OpCall, operand: np.ndarray, padding_value: np.ndarray) -> np.ndarray:
    """operand[operand_index] where result_index = edge_padding_low + operand_index *
    (interior_padding + 1), padding_value elsewhere (negative edge padding crops)."""
    out = ctx.result_tensor(0)
    result = pad_frame(ctx.attrs, operand.shape).materialize(operand, padding_value[()],
                                                             ctx.element_budget)
    if result is operand:  # nothing to pad: the result is still a value of its own
        result = result.copy()
    return result.astype(out.dtype, copy=False)


# --- tuple, get_tuple_element, optimization_barrier ----------------------------------

def infer_tuple(a: Attrs, types: list[Any]) -> list[Inferred]:
    """(C1) tuple<E0, ..., EN-1> with Ei = type(val[i])."""
    return [TupleType(tuple(types))]


def _verify_tuple(ctx: OpCall) -> None:
    if len(ctx.result_types) != 1 or not isinstance(ctx.result_types[0], TupleType):
        raise ctx.error("C1", f"result must be a tuple, got {[str(t) for t in ctx.result_types]}")
    want = TupleType(tuple(ctx.operand_types))
    if not same_type(ctx.result_types[0], want):
        raise ctx.error("C1", f"result has type {ctx.result_types[0]}, must be {want}")


def _explain_tuple(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
                   index: tuple) -> Explanation:
    _check_result(outputs, result)
    if tuple(index) != ():
        raise ExecutionError(f"a tuple has no elements to index: index {tuple(index)} (use ())")
    names = [v.name for v in ctx.op.operands]
    children = [Step(f"result[{i}]", Msg("shape.tuple_op.element", i=i), v,
                     substituted=Msg("shape.expr", expr=names[i])) for i, v in enumerate(inputs)]
    steps = [Step("result", Msg("shape.tuple_op.formula"), outputs[0], children=children,
                  substituted=_tuple(names))]
    return Explanation(ctx.op.name, (), steps, outputs[0], [], 0)


@op("stablehlo.tuple", aliases=("Tuple",), verify=_verify_tuple, infer=infer_tuple, family="shape",
    provenance=_no_links, explain=_explain_tuple)
def tuple_(ctx: OpCall, *val: Any) -> tuple:
    """result = (val0, ..., valN-1)."""
    return tuple(val)


@record
class GetTupleElementAttrs(Attrs):
    index: int = attr(integer("index", type="i32"))


def _tuple_element(err: Err, types: Sequence[Any], index: int) -> Any:
    """(C2) tuple_element_types(operand)[index], once (I1) and (C1) hold."""
    operand = types[0] if types else None
    if not isinstance(operand, TupleType):
        raise err("I1", f"operand must be a tuple, got {operand}")
    if not 0 <= index < len(operand.types):
        raise err("C1", f"index = {index} must be in [0, {len(operand.types)}) (size(operand))")
    return operand.types[index]


def infer_get_tuple_element(a: GetTupleElementAttrs, types: list[Any]) -> list[Inferred]:
    return [_tuple_element(InferError, types, a.index)]


def _verify_get_tuple_element(ctx: OpCall) -> None:
    index = ctx.attrs.index
    element = _tuple_element(ctx.error, ctx.operand_types, index)
    if len(ctx.result_types) != 1 or not same_type(ctx.result_types[0], element):
        raise ctx.error("C2", f"type(result) = {', '.join(str(t) for t in ctx.result_types)} must be "
                        f"tuple_element_types(operand)[{index}] = {element}")


def _explain_get_tuple_element(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
                               index: tuple) -> Explanation:
    _check_result(outputs, result)
    k = ctx.attrs.index
    value = outputs[0]
    idx: tuple[int, ...] = ()
    if isinstance(value, np.ndarray):
        idx = check_index(value_shape(value), index, "result index")
        value = value[idx]
    elif tuple(index) != ():
        raise ExecutionError(f"result is not a tensor: index {tuple(index)} (use ())")
    name = ctx.op.operands[0].name
    steps = [Step("result", Msg("shape.get_tuple_element.formula"), outputs[0],
                  substituted=Msg("shape.get_tuple_element.substituted", name=name, index=k))]
    if idx:
        steps.append(Step("result[result_index]", Msg("shape.get_tuple_element.element"), value,
                          substituted=Msg("shape.get_tuple_element.element_substituted", name=name, index=k,
                                          result_index=_list(idx))))
    return Explanation(ctx.op.name, idx, steps, value, [Msg("shape.get_tuple_element.note")], 0)


@op("stablehlo.get_tuple_element", aliases=("GetTupleElement",), verify=_verify_get_tuple_element,
    attrs=GetTupleElementAttrs, infer=infer_get_tuple_element, family="shape", provenance=_no_links,
    explain=_explain_get_tuple_element)
def get_tuple_element(ctx: OpCall, operand: tuple) -> Any:
    """result = operand[index]."""
    return operand[ctx.attrs.index]


def _check_barrier_operands(err: Err, types: Sequence[Any]) -> None:
    for i, t in enumerate(types):
        if isinstance(t, TensorType) and _per_axis(t):
            raise err(None, f"operand #{i} must be a tensor, per-tensor quantized tensor or "
                      f"token, got {t}")


def infer_optimization_barrier(a: Attrs, types: list[Any]) -> list[Inferred]:
    """(C1) type(result...) = type(operand...)."""
    _check_barrier_operands(InferError, types)
    return same_types(types)


def _verify_optimization_barrier(ctx: OpCall) -> None:
    ops, res = ctx.operand_types, ctx.result_types
    _check_barrier_operands(ctx.error, ops)
    if len(ops) != len(res) or not all(same_type(a, b) for a, b in zip(ops, res, strict=True)):
        raise ctx.error("C1", f"type(operand...) = {[str(t) for t in ops]} must equal "
                        f"type(result...) = {[str(t) for t in res]}")


def _explain_optimization_barrier(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
                                  index: tuple) -> Explanation:
    _check_result(outputs, result)
    value = outputs[result]
    name = ctx.op.operands[result].name
    idx = check_index(value_shape(value), index, f"result #{result} index") \
        if isinstance(value, np.ndarray) else ()
    element = value[idx] if isinstance(value, np.ndarray) else value
    where = ", ".join(str(i) for i in idx)
    steps = [Step(f"result#{result}[{where}]", Msg("shape.optimization_barrier.formula", result=result),
                  element, substituted=Msg("explain.element", name=name, index=where))]
    return Explanation(ctx.op.name, idx, steps, element, [], result)


@op("stablehlo.optimization_barrier", aliases=("OptimizationBarrier",),
    verify=_verify_optimization_barrier, infer=infer_optimization_barrier, family="shape",
    provenance=unary_copy_provenance, explain=_explain_optimization_barrier)
def optimization_barrier(ctx: OpCall, *operand: Any) -> list[Any]:
    """An identity: result = operand."""
    return list(operand)


# --- parameter schemas (hlolab.ops.examples) ------------------------------------------------

def _shape_schemas() -> None:
    from hlolab.ops.examples import (
        Operand,
        OpParts,
        OpSchema,
        Param,
        dtype_param,
        inferred_results,
        int_param,
        ints_param,
        register_schema,
        scalar,
        shape_param,
        ttype,
    )

    def one(op: str, params: tuple[Param, ...], build: Any, spec: dict[str, Any] | None, doc: str,
            more: dict[str, dict[str, Any]] | None = None) -> None:
        presets = {"default": {}} | ({"spec-example": spec} if spec else {}) | (more or {})
        register_schema(OpSchema(op, params, presets, build, doc=doc))

    def parts(op: str, rec: Attrs, operands: list[Operand], dtype: str) -> OpParts:
        """The op with the result types its infer gives."""
        return OpParts(operands, inferred_results(op, rec, [o.type for o in operands], dtype), rec)

    def pad_build(p: dict[str, Any]) -> OpParts:
        rec = PadAttrs(edge_padding_low=p["edge_padding_low"], edge_padding_high=p["edge_padding_high"],
                       interior_padding=p["interior_padding"])
        value = scalar(p["padding_value"], p["dtype"])
        return parts("stablehlo.pad", rec, [Operand("operand", ttype(p["operand"], p["dtype"])),
                                            Operand("padding_value", ttype((), p["dtype"]), value)],
                     p["dtype"])

    one("stablehlo.pad", (
        shape_param("operand", (2, 3), "the tensor padded"),
        Param("padding_value", "number", -1, "the value written into the padding"),
        ints_param("edge_padding_low", (0, 1), "padding added before each dim (negative: cropped)"),
        ints_param("edge_padding_high", (1, 1), "padding added after each dim (negative: cropped)"),
        ints_param("interior_padding", (1, 0), "padding added between the elements of each dim"),
        dtype_param("f32"),
    ), pad_build, {"operand": (2, 3), "padding_value": 0, "edge_padding_low": (0, 1),
                   "edge_padding_high": (2, 1), "interior_padding": (1, 2), "dtype": "i32",
                   "inputs": {"operand": [[1, 2, 3], [4, 5, 6]]}, "index": (2, 4)},
        "pad operand with edge and interior padding")

    def transpose_build(p: dict[str, Any]) -> OpParts:
        return parts("stablehlo.transpose", TransposeAttrs(permutation=p["permutation"]),
                     [Operand("operand", ttype(p["operand"], p["dtype"]))], p["dtype"])

    one("stablehlo.transpose", (
        shape_param("operand", (2, 3), "the tensor transposed"),
        ints_param("permutation", (1, 0), "result dim d is operand dim permutation[d]"),
        dtype_param("f32"),
    ), transpose_build, {"operand": (2, 3, 2), "permutation": (2, 1, 0), "dtype": "i32",
                         "inputs": {"operand": [[[1, 2], [3, 4], [5, 6]], [[7, 8], [9, 10], [11, 12]]]},
                         "index": (1, 2, 0)},
        "permute the dims of operand")

    def broadcast_build(p: dict[str, Any]) -> OpParts:
        # the result shape is a parameter: infer leaves it to the declared type
        return OpParts([Operand("operand", ttype(p["operand"], p["dtype"]))],
                       [ttype(p["result_shape"], p["dtype"])],
                       BroadcastInDimAttrs(broadcast_dimensions=p["broadcast_dimensions"]))

    one("stablehlo.broadcast_in_dim", (
        shape_param("operand", (3,), "the tensor broadcast"),
        shape_param("result_shape", (2, 3), "the shape of the result"),
        ints_param("broadcast_dimensions", (1,), "result dim of each operand dim"),
        dtype_param("f32"),
    ), broadcast_build, {"operand": (1, 3), "result_shape": (2, 3, 2), "broadcast_dimensions": (2, 1),
                         "dtype": "i32", "inputs": {"operand": [[1, 2, 3]]}, "index": (1, 2, 0)},
        "broadcast operand into a larger shape")

    def reshape_build(p: dict[str, Any]) -> OpParts:
        return OpParts([Operand("operand", ttype(p["operand"], p["dtype"]))],
                       [ttype(p["result_shape"], p["dtype"])], Attrs())

    one("stablehlo.reshape", (
        shape_param("operand", (2, 3), "the tensor reshaped"),
        shape_param("result_shape", (3, 2), "the shape of the result (same element count)"),
        dtype_param("f32"),
    ), reshape_build, {"operand": (2, 3), "result_shape": (3, 2), "dtype": "i32",
                       "inputs": {"operand": [[1, 2, 3], [4, 5, 6]]}, "index": (1, 1)},
        "the same elements in row-major order, another shape")

    def concat_build(p: dict[str, Any]) -> OpParts:
        return parts("stablehlo.concatenate", ConcatenateAttrs(dimension=p["dimension"]),
                     [Operand("input0", ttype(p["input0"], p["dtype"])),
                      Operand("input1", ttype(p["input1"], p["dtype"]))], p["dtype"])

    one("stablehlo.concatenate", (
        shape_param("input0", (2, 3), "the first input"),
        shape_param("input1", (2, 2), "the second input"),
        int_param("dimension", 1, "the dim the inputs are joined along"),
        dtype_param("f32"),
    ), concat_build, {"input0": (3, 2), "input1": (1, 2), "dimension": 0, "dtype": "i64",
                      "inputs": {"input0": [[1, 2], [3, 4], [5, 6]], "input1": [[7, 8]]}, "index": (3, 1)},
        "join the inputs along dimension")

    def slice_build(p: dict[str, Any]) -> OpParts:
        rec = SliceAttrs(start_indices=p["start_indices"], limit_indices=p["limit_indices"],
                         strides=p["strides"])
        return parts("stablehlo.slice", rec, [Operand("operand", ttype(p["operand"], p["dtype"]))],
                     p["dtype"])

    one("stablehlo.slice", (
        shape_param("operand", (3, 5), "the tensor sliced"),
        ints_param("start_indices", (1, 0), "first index of the slice in each dim"),
        ints_param("limit_indices", (3, 5), "end (exclusive) of the slice in each dim"),
        ints_param("strides", (1, 2), "step between the indices in each dim"),
        dtype_param("f32"),
    ), slice_build, {"operand": (3, 4), "start_indices": (1, 2), "limit_indices": (3, 4), "strides": (1, 1),
                     "dtype": "i64", "inputs": {"operand": [[0, 0, 0, 0], [0, 0, 1, 1], [0, 0, 1, 1]]},
                     "index": (1, 1)},
        "a strided static slice of operand")

    def reverse_build(p: dict[str, Any]) -> OpParts:
        # type(result) = type(operand) (C1) whatever the dimensions: bad ones are then
        # reported as the (C2)/(C3) they break, not as a result of the wrong type
        t = ttype(p["operand"], p["dtype"])
        return OpParts([Operand("operand", t)], [t], ReverseAttrs(dimensions=p["dimensions"]))

    one("stablehlo.reverse", (
        shape_param("operand", (3, 4), "the tensor reversed"),
        ints_param("dimensions", (1,), "the dims reversed"),
        dtype_param("f32"),
    ), reverse_build, {"operand": (3, 2), "dimensions": (1,), "dtype": "i32",
                       "inputs": {"operand": [[1, 2], [3, 4], [5, 6]]}, "index": (1, 0)},
        "reverse operand along dimensions")

    def iota_build(p: dict[str, Any]) -> OpParts:
        # the output shape is a parameter: infer leaves it to the declared type
        return OpParts([], [ttype(p["shape"], p["dtype"])], IotaAttrs(iota_dimension=p["iota_dimension"]))

    one("stablehlo.iota", (
        shape_param("shape", (3, 4), "the shape of the output"),
        int_param("iota_dimension", 1, "the dim counted along"),
        dtype_param("i32", "element type of the output"),
    ), iota_build, {"shape": (4, 5), "iota_dimension": 0, "dtype": "i32", "index": (2, 3)},
        "0, 1, 2, ... along iota_dimension",
        {"spec-example-2": {"shape": (4, 5), "iota_dimension": 1, "dtype": "i32", "index": (2, 3)}})


_shape_schemas()


# --- parameter schema of optimization_barrier (hlolab.ops.examples) -----------------------
# tuple and get_tuple_element have none: a tuple value is no tensor, so the explorer has no
# grid for a tuple result (tuple) or a tuple operand, and make_example fills tensors only.

def _barrier_schema() -> None:
    from hlolab.ops.examples import (
        Operand,
        OpParts,
        OpSchema,
        dtype_param,
        inferred_results,
        int_param,
        register_schema,
        shape_param,
        ttype,
    )

    def build(p: dict[str, Any]) -> OpParts:
        if p["count"] < 1:
            raise ValueError("count must be >= 1: with no operand there is nothing to show")
        rec = Attrs()
        operands = [Operand(f"operand{i}", ttype(p["shape"], p["dtype"])) for i in range(p["count"])]
        return OpParts(operands, inferred_results("stablehlo.optimization_barrier", rec,
                                                  [o.type for o in operands], p["dtype"]), rec)

    register_schema(OpSchema("stablehlo.optimization_barrier", (
        int_param("count", 2, "number of operands (each passes through unchanged)"),
        shape_param("shape", (2, 3), "shape of every operand"),
        dtype_param("f32"),
    ), {"default": {},
        "spec-example": {"count": 2, "shape": (), "dtype": "f32", "index": (),
                         "inputs": {"operand0": 0.0, "operand1": 1.0}}},
        build, doc="an identity that fences compiler reordering"))


_barrier_schema()
