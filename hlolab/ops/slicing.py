"""Dynamic slicing: dynamic_slice and dynamic_update_slice.

Both read their start indices at run time from rank-0 integer operands and
clamp them so the window always fits inside the operand
(``adjusted_start_indices = clamp(0, start_indices, shape(operand) - sizes)``),
as the spec says; XLA's older "modulo" wording is not followed.

Start indices are read as exact Python integers, so every integer type
(ui64 above 2**63 included) clamps correctly. One index-arithmetic function
per op, written with the spec's names, serves the provenance index maps
(applied to whole ``np.indices`` grids) and ``explain`` (applied to one index).
A quantized operand's storage integers move unchanged (the types keep its parameters).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hlolab.errors import ExecutionError
from hlolab.messages import Msg
from hlolab.ops.common import check_value, operand_tensor
from hlolab.ops.record import Attrs, InferError, attr, ints, record
from hlolab.ops.registry import OpCall, op
from hlolab.ops.shape import same_element, same_type
from hlolab.trace.explain import DimRole, Explanation, Step
from hlolab.trace.provenance import IndexMapProvenance, Link, check_index, index_link, value_shape
from hlolab.types import ElementType, QuantizedElementType, TensorType

Index = tuple[np.ndarray, ...]

@record
class DynamicSliceAttrs(Attrs):
    slice_sizes: tuple[int, ...] = attr(ints("slice_sizes"))


# --- shared checks ---------------------------------------------------------------------

def _result(ctx: OpCall) -> TensorType:
    if len(ctx.result_types) != 1:
        raise ctx.error(None, f"expects one result, got {len(ctx.result_types)}")
    t = ctx.result_types[0]
    if not isinstance(t, TensorType) or (isinstance(t.element, QuantizedElementType)
                                         and t.element.is_per_axis):
        raise ctx.error(None, f"result must be a tensor or per-tensor quantized tensor, got {t}")
    return t


def _start_index_types(ctx: OpCall, first: int, label: str, same_label: str) -> list[TensorType]:
    """The start_indices operands (``first``...): rank-0 integer tensors of one type."""
    types = []
    for i in range(first, len(ctx.operand_types)):
        t = ctx.operand_types[i]
        k = i - first
        ok = (isinstance(t, TensorType) and isinstance(t.element, ElementType)
              and t.element.kind in ("sint", "uint") and t.rank == 0)
        if not ok:
            raise ctx.error(label, f"start_indices[{k}] must be a 0-dimensional tensor of integer "
                            f"type, got {t}")
        types.append(t)
    for k, t in enumerate(types):
        if not same_type(t, types[0]):
            raise ctx.error(same_label, f"start_indices must all have one type: start_indices[0] is "
                            f"{types[0]}, start_indices[{k}] is {t}")
    return types


def read_start_indices(values: Sequence[np.ndarray]) -> tuple[int, ...]:
    """The start index scalars as exact Python integers (any integer type)."""
    return tuple(int(np.asarray(v).reshape(())[()]) for v in values)


def adjusted_start_indices(start_indices: Sequence[int], operand_shape: Sequence[int],
                           sizes: Sequence[int]) -> tuple[int, ...]:
    """clamp(0, start_indices, shape(operand) - sizes), per dimension."""
    return tuple(min(max(s, 0), n - z) for s, n, z in zip(start_indices, operand_shape, sizes,
                                                          strict=True))


def _indices(shape: Sequence[int]) -> Index:
    return tuple(np.indices(tuple(shape), sparse=True, dtype=np.int64))


def _one(index: tuple[int, ...]) -> Index:
    return tuple(np.asarray(i, dtype=np.int64) for i in index)


def _index_read_links(n_start: int, first: int, result_shape: tuple[int, ...],
                      valid: np.ndarray | None = None) -> list[Link]:
    """Every start index scalar (operands first...first+n_start-1, index ()) read where ``valid``."""
    flat = np.zeros(result_shape, dtype=np.int64)
    if valid is not None:
        flat = np.where(valid, flat, -1).astype(np.int64)
    return [Link(first + k, "index_read", flat.copy()) for k in range(n_start)]


def _csv(xs: Sequence[Any]) -> str:
    """``1, 2``: an index written inside brackets (``%arg0[1, 2]``)."""
    return ", ".join(str(int(x)) for x in xs)


def _start_steps(ctx: OpCall, start: tuple[int, ...], adjusted: tuple[int, ...],
                 sizes: Sequence[int], sizes_name: str, first: int) -> tuple[list[Step], list[Msg]]:
    """start_indices and the clamp that makes them adjusted_start_indices. The clamp's
    dim roles are the START's dims (which of its components the clamp moved), never the
    result index's: the result index gets its own step before these."""
    names = [v.name for v in ctx.op.operands[first:]]
    moved = [d for d, (s, a) in enumerate(zip(start, adjusted, strict=True)) if s != a]
    shape = [int(n) for n in ctx.operand_types[0].static_shape()]
    roles = {d: DimRole("clamped") if d in moved else DimRole("in_range") for d in range(len(start))}
    steps = [
        Step("start_indices", Msg("slicing.start_indices.formula", start_indices=", ".join(names)), start),
        Step("adjusted_start_indices", Msg("slicing.adjusted_start_indices.formula", sizes=sizes_name),
             adjusted, dim_roles=roles, before_clamp=start if moved else None,
             substituted=Msg("slicing.adjusted_start_indices.substituted", start_indices=list(start),
                             shape=shape, sizes=list(sizes))),
    ]
    if moved:
        notes = [Msg("slicing.note.clamped", dims=moved, before=list(start), after=list(adjusted),
                     sizes=list(sizes), shape=shape)]
    else:
        notes = [Msg("slicing.note.not_clamped")]
    return steps, notes


# --- dynamic_slice ---------------------------------------------------------------------

def _verify_dynamic_slice(ctx: OpCall) -> None:
    operand = operand_tensor(ctx, 0, "I1", "operand", per_tensor_only=True)
    result = _result(ctx)
    starts = _start_index_types(ctx, 1, "I2", "C3")
    sizes = ctx.attrs.slice_sizes
    if not same_element(operand.element, result.element):
        raise ctx.error("C1", f"element_type(operand) = {operand.element} must equal "
                        f"element_type(result) = {result.element}")
    if not len(starts) == len(sizes) == operand.rank:
        raise ctx.error("C2", f"size(start_indices) = {len(starts)}, size(slice_sizes) = {len(sizes)} "
                        f"and rank(operand) = {operand.rank} must be equal")
    for d, (z, n) in enumerate(zip(sizes, operand.shape, strict=True)):
        if z < 0 or (n is not None and z > n):
            raise ctx.error("C4", f"0 <= slice_sizes <= shape(operand) does not hold in dimension "
                            f"{d}: slice_sizes = {list(sizes)}, shape(operand) = {list(operand.shape)}")
    if result.rank != len(sizes) or any(r is not None and r != z
                                        for r, z in zip(result.shape, sizes, strict=True)):
        raise ctx.error("C5", f"shape(result) = {list(result.shape)} must equal slice_sizes = "
                        f"{list(sizes)}")


def infer_dynamic_slice(a: DynamicSliceAttrs, types: list[Any]) -> list[TensorType]:
    """shape(result) = slice_sizes (C5), element_type(result) = element_type(operand) (C1)."""
    operand = types[0] if types else None
    if not isinstance(operand, TensorType):
        raise InferError("I1", f"operand must be a tensor, got {operand}")
    sizes = a.slice_sizes
    if len(sizes) != operand.rank:
        raise InferError("C2", f"size(slice_sizes) = {len(sizes)} must equal rank(operand) = "
                         f"{operand.rank}")
    if any(z < 0 or (n is not None and z > n) for z, n in zip(sizes, operand.shape, strict=True)):
        raise InferError("C4", f"0 <= slice_sizes <= shape(operand) does not hold: slice_sizes = "
                         f"{list(sizes)}, shape(operand) = {list(operand.shape)}")
    return [TensorType(tuple(sizes), operand.element)]


def dynamic_slice_operand_index(result_index: Index, adjusted: Sequence[int]) -> Index:
    """operand_index = adjusted_start_indices + result_index."""
    return tuple(a + r for a, r in zip(adjusted, result_index, strict=True))


def _ds_adjusted(ctx: OpCall, inputs: list[Any]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    start = read_start_indices(inputs[1:])
    return start, adjusted_start_indices(start, inputs[0].shape, ctx.attrs.slice_sizes)


def _prov_dynamic_slice(ctx: OpCall, inputs: list[Any], outputs: list[Any]) -> IndexMapProvenance:
    shape = outputs[0].shape
    _, adjusted = _ds_adjusted(ctx, inputs)
    oi = dynamic_slice_operand_index(_indices(shape), adjusted)
    links = [index_link(0, "copy", inputs[0].shape, oi, result_shape=shape)]
    links += _index_read_links(len(inputs) - 1, 1, shape)
    return IndexMapProvenance([value_shape(v) for v in outputs], [value_shape(v) for v in inputs],
                              [links])


def _explain_dynamic_slice(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
                           index: tuple) -> Explanation:
    if result != 0:
        raise ExecutionError(f"result #{result} does not exist (the op has 1 result)")
    idx = check_index(value_shape(outputs[0]), index, "result index")
    start, adjusted = _ds_adjusted(ctx, inputs)
    sizes = ctx.attrs.slice_sizes
    steps, notes = _start_steps(ctx, start, adjusted, sizes, "slice_sizes", 1)
    # result dim d runs along the slice in operand dim d
    steps.insert(0, Step("result_index", None, idx,
                         dim_roles={d: DimRole("sliced") for d in range(len(idx))}))
    operand_index = tuple(int(i) for i in dynamic_slice_operand_index(_one(idx), adjusted))
    steps.append(Step("operand_index", Msg("slicing.operand_index.formula"), operand_index,
                      substituted=Msg("slicing.operand_index.substituted",
                                      adjusted_start_indices=list(adjusted), result_index=list(idx))))
    value = outputs[0][idx]
    name = ctx.op.operands[0].name
    steps.append(Step("result[result_index]", Msg("explain.element", name="operand", index="operand_index"),
                      value, substituted=Msg("explain.element", name=name, index=_csv(operand_index))))
    return Explanation(ctx.op.name, idx, steps, value, notes, 0)


@op("stablehlo.dynamic_slice", aliases=("DynamicSlice",), verify=_verify_dynamic_slice,
    attrs=DynamicSliceAttrs, infer=infer_dynamic_slice, family="slicing",
    provenance=_prov_dynamic_slice, explain=_explain_dynamic_slice)
def dynamic_slice(ctx: OpCall, operand: np.ndarray, *start_indices: np.ndarray) -> np.ndarray:
    """result[result_index] = operand[adjusted_start_indices + result_index]."""
    check_value(ctx, operand, ctx.operand_types[0], "operand")
    for k, v in enumerate(start_indices):
        check_value(ctx, v, ctx.operand_types[1 + k], f"start_indices[{k}]")
    sizes = ctx.attrs.slice_sizes
    adjusted = adjusted_start_indices(read_start_indices(start_indices), operand.shape, sizes)
    return operand[tuple(slice(a, a + z) for a, z in zip(adjusted, sizes, strict=True))].copy()


# --- dynamic_update_slice --------------------------------------------------------------

def _verify_dynamic_update_slice(ctx: OpCall) -> None:
    operand = operand_tensor(ctx, 0, "I1", "operand", per_tensor_only=True)
    update = operand_tensor(ctx, 1, "I2", "update", per_tensor_only=True)
    result = _result(ctx)
    starts = _start_index_types(ctx, 2, "I3", "C5")
    if not same_type(operand, result):
        raise ctx.error("C1", f"type(operand) = {operand} must equal type(result) = {result}")
    if not same_element(update.element, operand.element):
        raise ctx.error("C2", f"element_type(update) = {update.element} must equal "
                        f"element_type(operand) = {operand.element}")
    if update.rank != operand.rank:
        raise ctx.error("C3", f"rank(update) = {update.rank} must equal rank(operand) = {operand.rank}")
    if len(starts) != operand.rank:
        raise ctx.error("C4", f"size(start_indices) = {len(starts)} must equal rank(operand) = "
                        f"{operand.rank}")
    for d, (u, n) in enumerate(zip(update.shape, operand.shape, strict=True)):
        if u is not None and n is not None and u > n:
            raise ctx.error("C6", f"0 <= shape(update) <= shape(operand) does not hold in dimension "
                            f"{d}: shape(update) = {list(update.shape)}, shape(operand) = "
                            f"{list(operand.shape)}")


def infer_dynamic_update_slice(a: Attrs, types: list[Any]) -> list[TensorType]:
    """type(result) = type(operand) (C1)."""
    operand = types[0] if types else None
    if not isinstance(operand, TensorType):
        raise InferError("I1", f"operand must be a tensor, got {operand}")
    return [operand]


def dynamic_update_slice_update_index(result_index: Index, adjusted: Sequence[int],
                                      update_shape: Sequence[int]) -> tuple[Index, np.ndarray]:
    """(update_index, inside): update_index = result_index - adjusted_start_indices, inside
    where 0 <= update_index < shape(update)."""
    update_index = tuple(r - a for r, a in zip(result_index, adjusted, strict=True))
    inside = np.ones((), dtype=bool)
    for u, n in zip(update_index, update_shape, strict=True):
        inside = inside & (u >= 0) & (u < n)
    return update_index, inside


def _dus_adjusted(inputs: list[Any]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    start = read_start_indices(inputs[2:])
    return start, adjusted_start_indices(start, inputs[0].shape, inputs[1].shape)


def _prov_dynamic_update_slice(ctx: OpCall, inputs: list[Any],
                               outputs: list[Any]) -> IndexMapProvenance:
    shape = outputs[0].shape
    _, adjusted = _dus_adjusted(inputs)
    ri = _indices(shape)
    ui, inside = dynamic_update_slice_update_index(ri, adjusted, inputs[1].shape)
    inside = np.broadcast_to(inside, shape)
    links = [index_link(1, "copy", inputs[1].shape, ui, valid=inside, result_shape=shape),
             index_link(0, "copy", inputs[0].shape, ri, valid=~inside, result_shape=shape)]
    links += _index_read_links(len(inputs) - 2, 2, shape, valid=inside)
    return IndexMapProvenance([value_shape(v) for v in outputs], [value_shape(v) for v in inputs],
                              [links])


def _explain_dynamic_update_slice(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
                                  index: tuple) -> Explanation:
    if result != 0:
        raise ExecutionError(f"result #{result} does not exist (the op has 1 result)")
    idx = check_index(value_shape(outputs[0]), index, "result index")
    start, adjusted = _dus_adjusted(inputs)
    ushape = [int(n) for n in inputs[1].shape]
    steps, notes = _start_steps(ctx, start, adjusted, ushape, "shape(update)", 2)
    # the result index is an index of the operand (whose window the update replaces)
    steps.insert(0, Step("result_index", None, idx,
                         dim_roles={d: DimRole("operand_dim", d=d) for d in range(len(idx))}))
    ui, inside = dynamic_update_slice_update_index(_one(idx), adjusted, ushape)
    update_index = tuple(int(u) for u in ui)
    inside = bool(inside)
    steps.append(Step("update_index", Msg("slicing.update_index.formula"), update_index,
                      substituted=Msg("slicing.update_index.substituted", result_index=list(idx),
                                      adjusted_start_indices=list(adjusted))))
    steps.append(Step("0 <= update_index < shape(update)", None, inside,
                      substituted=Msg("slicing.in_update.substituted", update_index=list(update_index),
                                      shape=ushape)))
    value = outputs[0][idx]
    if inside:
        formula = Msg("explain.element", name="update", index="update_index")
        src, where = ctx.op.operands[1].name, update_index
    else:
        formula = Msg("explain.element", name="operand", index="result_index")
        src, where = ctx.op.operands[0].name, idx
        notes.append(Msg("slicing.note.outside"))
    steps.append(Step("result[result_index]", formula, value,
                      substituted=Msg("explain.element", name=src, index=_csv(where))))
    return Explanation(ctx.op.name, idx, steps, value, notes, 0)


@op("stablehlo.dynamic_update_slice", aliases=("DynamicUpdateSlice",),
    verify=_verify_dynamic_update_slice, infer=infer_dynamic_update_slice, family="slicing",
    provenance=_prov_dynamic_update_slice, explain=_explain_dynamic_update_slice)
def dynamic_update_slice(ctx: OpCall, operand: np.ndarray, update: np.ndarray,
                         *start_indices: np.ndarray) -> np.ndarray:
    """operand with the window at adjusted_start_indices replaced by update."""
    check_value(ctx, operand, ctx.operand_types[0], "operand")
    check_value(ctx, update, ctx.operand_types[1], "update")
    for k, v in enumerate(start_indices):
        check_value(ctx, v, ctx.operand_types[2 + k], f"start_indices[{k}]")
    adjusted = adjusted_start_indices(read_start_indices(start_indices), operand.shape, update.shape)
    result = operand.copy()
    result[tuple(slice(a, a + u) for a, u in zip(adjusted, update.shape, strict=True))] = update
    return result


# --- parameter schemas (hlolab.ops.examples) ------------------------------------------------

def _slicing_schemas() -> None:
    from hlolab.ops.examples import (
        Operand,
        OpParts,
        OpSchema,
        dtype_param,
        inferred_results,
        ints_param,
        register_schema,
        scalar,
        shape_param,
        ttype,
    )

    def starts(p: dict[str, Any]) -> list[Operand]:
        """One scalar operand per start index; the parameter gives its value."""
        return [Operand(f"start_indices{i}", ttype((), p["index_dtype"]), scalar(v, p["index_dtype"]))
                for i, v in enumerate(p["start_indices"])]

    def ds_build(p: dict[str, Any]) -> OpParts:
        rec = DynamicSliceAttrs(slice_sizes=p["slice_sizes"])
        operands = [Operand("operand", ttype(p["operand"], p["dtype"])), *starts(p)]
        return OpParts(operands, inferred_results("stablehlo.dynamic_slice", rec, [o.type for o in operands],
                                                  p["dtype"]), rec)

    register_schema(OpSchema("stablehlo.dynamic_slice", (
        shape_param("operand", (4, 5), "the tensor sliced"),
        ints_param("start_indices", (1, 2), "start of the slice in each dim (clamped into range)"),
        ints_param("slice_sizes", (2, 3), "size of the slice in each dim"),
        dtype_param("f32"),
        dtype_param("i64", "element type of the start indices", "index_dtype"),
    ), {"default": {},
        "spec-example": {"operand": (4, 4), "start_indices": (-1, 3), "slice_sizes": (2, 2), "dtype": "i32",
                         "index_dtype": "i64", "index": (0, 1),
                         "inputs": {"operand": [[0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 0, 0], [0, 0, 0, 0]]}}},
        ds_build, doc="a slice of operand at run-time start indices"))

    def dus_build(p: dict[str, Any]) -> OpParts:
        operands = [Operand("operand", ttype(p["operand"], p["dtype"])),
                    Operand("update", ttype(p["update"], p["dtype"])), *starts(p)]
        return OpParts(operands, inferred_results("stablehlo.dynamic_update_slice", Attrs(),
                                                  [o.type for o in operands], p["dtype"]), Attrs())

    register_schema(OpSchema("stablehlo.dynamic_update_slice", (
        shape_param("operand", (4, 5), "the tensor updated"),
        shape_param("update", (2, 2), "the values written"),
        ints_param("start_indices", (1, 2), "where update starts in each dim (clamped into range)"),
        dtype_param("f32"),
        dtype_param("i64", "element type of the start indices", "index_dtype"),
    ), {"default": {},
        "spec-example": {"operand": (4, 4), "update": (2, 2), "start_indices": (-1, 3), "dtype": "i32",
                         "index_dtype": "i64", "index": (0, 3),
                         "inputs": {"operand": [[1, 1, 0, 0], [1, 1, 0, 0], [1, 1, 1, 1], [1, 1, 1, 1]],
                                    "update": [[1, 1], [1, 1]]}}},
        dus_build, doc="operand with update written at run-time start indices"))


_slicing_schemas()
