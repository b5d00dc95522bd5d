"""Gather and Scatter: slices at run-time indices, with XLA's dimension numbers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hlolab.xla.builder import BuilderError, XlaComputation, XlaOp, builder_function, emit
from hlolab.xla.shapes import GatherDimensionNumbers, ScatterDimensionNumbers


def _fields(record: Any, cls: type, given: dict[str, Any], what: str) -> dict[str, Any]:
    """Dimension numbers from a record or from keyword lists (not both)."""
    given = {k: v for k, v in given.items() if v is not None}
    if record is not None:
        if given:
            raise BuilderError(f"{what}: give dimension_numbers or {', '.join(given)}, not both")
        if not isinstance(record, cls):
            raise BuilderError(f"{what}: dimension_numbers must be a {cls.__name__}")
        return record.fields()
    return cls(**given).fields()


@builder_function
def Gather(operand: XlaOp, start_indices: XlaOp, dimension_numbers: GatherDimensionNumbers | None = None,
           slice_sizes: Sequence[int] = (), indices_are_sorted: bool = False, *,
           offset_dims: Sequence[int] | None = None, collapsed_slice_dims: Sequence[int] | None = None,
           start_index_map: Sequence[int] | None = None, index_vector_dim: int | None = None,
           operand_batching_dims: Sequence[int] | None = None,
           start_indices_batching_dims: Sequence[int] | None = None) -> XlaOp:
    """Slices of ``operand`` starting at the indices in ``start_indices``: ``stablehlo.gather``.
    The dimension numbers are a ``GatherDimensionNumbers`` or the same names as keywords."""
    fields = _fields(dimension_numbers, GatherDimensionNumbers, {
        "offset_dims": offset_dims, "collapsed_slice_dims": collapsed_slice_dims,
        "start_index_map": start_index_map, "index_vector_dim": index_vector_dim,
        "operand_batching_dims": operand_batching_dims,
        "start_indices_batching_dims": start_indices_batching_dims}, "Gather")
    fields["slice_sizes"] = tuple(int(s) for s in slice_sizes)
    fields["indices_are_sorted"] = bool(indices_are_sorted)
    return emit("stablehlo.gather", [operand, start_indices], fields, what="Gather")[0]


@builder_function
def Scatter(operand: XlaOp | Sequence[XlaOp], scatter_indices: XlaOp, updates: XlaOp | Sequence[XlaOp],
            update_computation: XlaComputation,
            dimension_numbers: ScatterDimensionNumbers | None = None,
            indices_are_sorted: bool = False, unique_indices: bool = False, *,
            update_window_dims: Sequence[int] | None = None,
            inserted_window_dims: Sequence[int] | None = None,
            scatter_dims_to_operand_dims: Sequence[int] | None = None,
            index_vector_dim: int | None = None,
            input_batching_dims: Sequence[int] | None = None,
            scatter_indices_batching_dims: Sequence[int] | None = None) -> Any:
    """``operand`` with ``updates`` combined in by ``update_computation`` at the slices
    ``scatter_indices`` select: ``stablehlo.scatter``. Lists of operands and updates give a
    tuple of results."""
    fields = _fields(dimension_numbers, ScatterDimensionNumbers, {
        "update_window_dims": update_window_dims, "inserted_window_dims": inserted_window_dims,
        "scatter_dims_to_operand_dims": scatter_dims_to_operand_dims, "index_vector_dim": index_vector_dim,
        "input_batching_dims": input_batching_dims,
        "scatter_indices_batching_dims": scatter_indices_batching_dims}, "Scatter")
    fields["indices_are_sorted"] = bool(indices_are_sorted)
    fields["unique_indices"] = bool(unique_indices)
    single = isinstance(operand, XlaOp)
    inputs = [operand] if single else list(operand)
    ups = [updates] if isinstance(updates, XlaOp) else list(updates)
    out = emit("stablehlo.scatter", [*inputs, scatter_indices, *ups], fields,
               computations=[update_computation], what="Scatter")
    return out[0] if single else tuple(out)
