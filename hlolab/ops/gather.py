"""Gathering: gather and dynamic_gather.

``result[result_index] = operand[operand_index]`` with ``operand_index`` built
from the spec's named pieces (``batch_index``, ``start_index``,
``full_start_index``, ``full_batching_index``, ``offset_index``,
``full_offset_index``). One index-arithmetic function, ``gather_indices``,
computes all of them from result index arrays: applied to the whole
``np.indices`` grid it drives ``evaluate`` (one fancy-index read) and the
provenance maps; applied to one index it drives ``explain``.

Start indices of every integer type are read exactly: ui64 values above 2**63
are first capped at the int64 maximum, which clamps to the same place as the
true value would. ``indices_are_sorted`` is accepted and not relied on (the
result never depends on it). A quantized operand is data like any other: its storage
integers are gathered unchanged (the result has the operand's element type).

dynamic_gather takes ``slice_sizes`` as an operand: the constraints that need
its values are checked at run time, with dynamic_gather's own ``(Cn)`` numbers.
Its spec section predates the batching dimensions; they are accepted (the op's
MLIR form has them) and their checks name gather's constraint in the message.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hlolab.errors import ExecutionError
from hlolab.messages import Msg
from hlolab.ops import index_map
from hlolab.ops.common import check_value, dims_fit, operand_tensor, sliding_windows
from hlolab.ops.record import Attrs, InferError, Partial, attr, boolean, ints, member, record
from hlolab.ops.registry import OpCall, op
from hlolab.ops.shape import same_element
from hlolab.trace.explain import DimRole, Explanation, Step
from hlolab.trace.provenance import IndexMapProvenance, Link, check_index, index_link, value_shape
from hlolab.types import ElementType, QuantizedElementType, TensorType

Index = index_map.Index

_INT64_MAX = np.iinfo(np.int64).max

# gather's constraint numbers -> dynamic_gather's (None: only gather has it, batching dims)
_DYNAMIC_LABELS: dict[int, int | None] = {
    1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 6, 8: 7, 9: 8, 10: None, 11: None, 12: None,
    13: None, 14: None, 15: None, 16: None, 17: None, 18: 9, 19: 10, 20: 11, 21: 12, 22: 13, 23: 14,
}


def _dn(name: str = "") -> Any:
    return attr(member("dimension_numbers", "stablehlo.gather", name))


@record
class GatherDims(Attrs):
    """The fields of ``#stablehlo.gather<...>`` (the spec's names) and ``indices_are_sorted``."""

    offset_dims: tuple[int, ...] = _dn()
    collapsed_slice_dims: tuple[int, ...] = _dn()
    operand_batching_dims: tuple[int, ...] = _dn()
    start_indices_batching_dims: tuple[int, ...] = _dn()
    start_index_map: tuple[int, ...] = _dn()
    index_vector_dim: int = _dn()
    indices_are_sorted: bool = attr(boolean("indices_are_sorted"), default=False)


@record
class GatherAttrs(GatherDims):
    """gather's attributes: the dimension numbers and ``slice_sizes`` (dynamic_gather's
    is an operand, so its record is ``GatherDims``)."""

    slice_sizes: tuple[int, ...] = attr(ints("slice_sizes"))


# --- verification ----------------------------------------------------------------------

def _is_sorted(xs: Sequence[int]) -> bool:
    return all(a <= b for a, b in zip(xs, xs[1:], strict=False))


def _is_unique(xs: Sequence[int]) -> bool:
    return len(set(xs)) == len(xs)


def _integer_tensor(ctx: OpCall, i: int, label: str, what: str) -> TensorType:
    t = operand_tensor(ctx, i, label, what)
    if not (isinstance(t.element, ElementType) and t.element.is_int):
        raise ctx.error(label, f"{what} must be a tensor of integer type, got {t}")
    return t


def _not_per_axis(ctx: OpCall, t: TensorType, label: str | None, what: str) -> None:
    if isinstance(t.element, QuantizedElementType) and t.element.is_per_axis:
        raise ctx.error(label, f"{what} must be a tensor or per-tensor quantized tensor, got {t}")


def batch_dims_of(result_rank: int, offset_dims: Sequence[int]) -> list[int]:
    """batch_dims = [d for d in axes(result) and d not in offset_dims]."""
    return [d for d in range(result_rank) if d not in offset_dims]


def expected_result_shape(start_indices_shape: Sequence[int | None], slice_sizes: Sequence[int],
                          dims: GatherDims, result_rank: int) -> list[int | None] | None:
    """combine(batch_dim_sizes, offset_dim_sizes) of (C22); None when the ranks cannot combine."""
    ivd = dims.index_vector_dim
    batch_dim_sizes = [n for d, n in enumerate(start_indices_shape) if d != ivd]
    dropped = set(dims.collapsed_slice_dims) | set(dims.operand_batching_dims)
    offset_dim_sizes = [z for d, z in enumerate(slice_sizes) if d not in dropped]
    if len(batch_dim_sizes) + len(offset_dim_sizes) != result_rank \
            or len(offset_dim_sizes) != len(dims.offset_dims):
        return None
    shape: list[int | None] = [None] * result_rank
    for d, n in zip(dims.offset_dims, offset_dim_sizes, strict=True):
        shape[d] = n
    for d, n in zip(batch_dims_of(result_rank, dims.offset_dims), batch_dim_sizes, strict=True):
        shape[d] = n
    return shape


def check_gather(err: Callable[[int, str], Exception], operand: TensorType,
                 start_indices: TensorType, result: TensorType, dims: GatherDims,
                 slice_sizes: Sequence[int] | None) -> None:
    """Every gather constraint; ``err(n, message)`` builds the error for gather's (Cn).

    ``slice_sizes`` is None when it is only known at run time (dynamic_gather):
    the constraints that read its values are then skipped.
    """
    r_op, r_si, r_res = operand.rank, start_indices.rank, result.rank
    ivd = dims.index_vector_dim
    if not 0 <= ivd <= r_si:
        raise err(2, f"index_vector_dim = {ivd} must be in [0, {r_si}] (rank(start_indices))")
    want = start_indices.shape[ivd] if ivd < r_si else 1
    if want is not None and len(dims.start_index_map) != want:
        where = (f"dim(start_indices, {ivd})" if ivd < r_si else "1 (index_vector_dim = "
                 "rank(start_indices))")
        raise err(3, f"size(start_index_map) = {len(dims.start_index_map)} must equal {where} = {want}")
    n = len(dims.offset_dims) + len(dims.collapsed_slice_dims) + len(dims.operand_batching_dims)
    if r_op != n:
        raise err(1, f"rank(operand) = {r_op} must equal size(offset_dims) + "
                  f"size(collapsed_slice_dims) + size(operand_batching_dims) = "
                  f"{len(dims.offset_dims)} + {len(dims.collapsed_slice_dims)} + "
                  f"{len(dims.operand_batching_dims)}")
    if not (_is_unique(dims.offset_dims) and _is_sorted(dims.offset_dims)):
        raise err(4, f"offset_dims = {list(dims.offset_dims)} must be unique and sorted")
    bad = [d for d in dims.offset_dims if not 0 <= d < r_res]
    if bad:
        raise err(5, f"offset_dims = {list(dims.offset_dims)} must be in [0, {r_res}) (rank(result))")
    both = dims.collapsed_slice_dims + dims.operand_batching_dims
    if not _is_unique(both):
        raise err(6, f"collapsed_slice_dims = {list(dims.collapsed_slice_dims)} and "
                  f"operand_batching_dims = {list(dims.operand_batching_dims)} must hold unique dims")
    if not _is_sorted(dims.collapsed_slice_dims):
        raise err(7, f"collapsed_slice_dims = {list(dims.collapsed_slice_dims)} must be sorted")
    if any(not 0 <= d < r_op for d in dims.collapsed_slice_dims):
        raise err(8, f"collapsed_slice_dims = {list(dims.collapsed_slice_dims)} must be in "
                  f"[0, {r_op}) (rank(operand))")
    if slice_sizes is not None and len(slice_sizes) != r_op:
        raise err(20, f"size(slice_sizes) = {len(slice_sizes)} must equal rank(operand) = {r_op}")
    if slice_sizes is not None:
        big = [d for d in dims.collapsed_slice_dims if slice_sizes[d] > 1]
        if big:
            raise err(9, f"slice_sizes[collapsed_slice_dims...] must be <= 1: slice_sizes = "
                      f"{list(slice_sizes)}, collapsed_slice_dims = {list(dims.collapsed_slice_dims)}")
    if not _is_sorted(dims.operand_batching_dims):
        raise err(10, f"operand_batching_dims = {list(dims.operand_batching_dims)} must be sorted")
    if any(not 0 <= d < r_op for d in dims.operand_batching_dims):
        raise err(11, f"operand_batching_dims = {list(dims.operand_batching_dims)} must be in "
                  f"[0, {r_op}) (rank(operand))")
    if slice_sizes is not None:
        big = [d for d in dims.operand_batching_dims if slice_sizes[d] > 1]
        if big:
            raise err(12, f"slice_sizes[operand_batching_dims...] must be <= 1: slice_sizes = "
                      f"{list(slice_sizes)}, operand_batching_dims = {list(dims.operand_batching_dims)}")
    sib = dims.start_indices_batching_dims
    if not _is_unique(sib):
        raise err(13, f"start_indices_batching_dims = {list(sib)} must be unique")
    if any(not 0 <= d < r_si for d in sib):
        raise err(14, f"start_indices_batching_dims = {list(sib)} must be in [0, {r_si}) "
                  f"(rank(start_indices))")
    if ivd in sib:
        raise err(15, f"index_vector_dim = {ivd} must not be in start_indices_batching_dims = "
                  f"{list(sib)}")
    if len(dims.operand_batching_dims) != len(sib):
        raise err(16, f"size(operand_batching_dims) = {len(dims.operand_batching_dims)} must equal "
                  f"size(start_indices_batching_dims) = {len(sib)}")
    a = [operand.shape[d] for d in dims.operand_batching_dims]
    b = [start_indices.shape[d] for d in sib]
    if not all(dims_fit(x, y) for x, y in zip(a, b, strict=True)):
        raise err(17, f"dim(operand, operand_batching_dims...) = {a} must equal "
                  f"dim(start_indices, start_indices_batching_dims...) = {b}")
    if not _is_unique(dims.start_index_map + dims.operand_batching_dims):
        raise err(18, f"start_index_map = {list(dims.start_index_map)} and operand_batching_dims = "
                  f"{list(dims.operand_batching_dims)} must hold unique dims")
    if any(not 0 <= d < r_op for d in dims.start_index_map):
        raise err(19, f"start_index_map = {list(dims.start_index_map)} must be in [0, {r_op}) "
                  f"(rank(operand))")
    if slice_sizes is None:
        return
    if any(z < 0 or (n is not None and z > n) for z, n in zip(slice_sizes, operand.shape, strict=True)):
        raise err(21, f"0 <= slice_sizes <= shape(operand) does not hold: slice_sizes = "
                  f"{list(slice_sizes)}, shape(operand) = {list(operand.shape)}")
    want_shape = expected_result_shape(start_indices.shape, slice_sizes, dims, r_res)
    if want_shape is None or not all(dims_fit(x, y) for x, y in zip(result.shape, want_shape, strict=True)):
        shown = "ranks that do not combine" if want_shape is None else str(want_shape)
        raise err(22, f"shape(result) = {list(result.shape)} must be combine(batch_dim_sizes, "
                  f"offset_dim_sizes) = {shown} (offset_dims = {list(dims.offset_dims)})")
    if not same_element(operand.element, result.element):
        raise err(23, f"element_type(operand) = {operand.element} must equal element_type(result) "
                  f"= {result.element}")


def _gather_err(ctx: OpCall) -> Callable[[int, str], Exception]:
    return lambda n, msg: ctx.error(f"C{n}", msg)


def _dynamic_err(ctx: OpCall) -> Callable[[int, str], Exception]:
    def err(n: int, msg: str) -> Exception:
        mine = _DYNAMIC_LABELS[n]
        if mine is None:
            return ctx.error(None, f"as gather (C{n}) requires: {msg}")
        return ctx.error(f"C{mine}", msg)
    return err


def _result_type(ctx: OpCall) -> TensorType:
    if len(ctx.result_types) != 1:
        raise ctx.error(None, f"expects one result, got {len(ctx.result_types)}")
    t = ctx.result_types[0]
    if not isinstance(t, TensorType):
        raise ctx.error(None, f"result must be a tensor, got {t}")
    _not_per_axis(ctx, t, None, "result")
    return t


def _verify_gather(ctx: OpCall) -> None:
    operand = operand_tensor(ctx, 0, "I1", "operand")
    _not_per_axis(ctx, operand, "I1", "operand")
    start_indices = _integer_tensor(ctx, 1, "I2", "start_indices")
    result = _result_type(ctx)
    check_gather(_gather_err(ctx), operand, start_indices, result, ctx.attrs, ctx.attrs.slice_sizes)


def _verify_dynamic_gather(ctx: OpCall) -> None:
    operand = operand_tensor(ctx, 0, "I1", "operand")
    _not_per_axis(ctx, operand, "I1", "operand")
    start_indices = _integer_tensor(ctx, 1, "I2", "start_indices")
    sizes = _integer_tensor(ctx, 2, "I3", "slice_sizes")
    if sizes.rank != 1:
        raise ctx.error("I3", f"slice_sizes must be a 1-dimensional tensor of integer type, got {sizes}")
    result = _result_type(ctx)
    err = _dynamic_err(ctx)
    check_gather(err, operand, start_indices, result, ctx.attrs, None)
    if sizes.shape[0] is not None and sizes.shape[0] != operand.rank:
        raise err(20, f"size(slice_sizes) = {sizes.shape[0]} must equal rank(operand) = {operand.rank}")
    if not same_element(operand.element, result.element):
        raise err(23, f"element_type(operand) = {operand.element} must equal element_type(result) "
                  f"= {result.element}")


# --- result type inference ---------------------------------------------------------------

def _infer(a: GatherDims, types: list[Any], sizes: Sequence[int | None] | None,
           dynamic: bool) -> TensorType | Partial:
    """combine(batch_dim_sizes, offset_dim_sizes) with operand's element type; the
    constraints the computation needs are checked on the way (gather's (Cn), or
    dynamic_gather's where it has one)."""
    def fail(n: int, msg: str) -> InferError:
        mine = _DYNAMIC_LABELS[n] if dynamic else n
        return InferError(f"C{mine}" if mine is not None else None,
                          msg if mine is not None else f"as gather (C{n}) requires: {msg}")

    operand, start_indices = types[0], types[1]
    if not isinstance(operand, TensorType) or not isinstance(start_indices, TensorType):
        raise InferError(None, "operand and start_indices must be tensors")
    ivd = a.index_vector_dim
    if not 0 <= ivd <= start_indices.rank:
        raise fail(2, f"index_vector_dim = {ivd} must be in [0, {start_indices.rank}] (rank(start_indices))")
    rank = start_indices.rank - (1 if ivd < start_indices.rank else 0) + len(a.offset_dims)
    if not (_is_unique(a.offset_dims) and _is_sorted(a.offset_dims)):
        raise fail(4, f"offset_dims = {list(a.offset_dims)} must be unique and sorted")
    if any(not 0 <= d < rank for d in a.offset_dims):
        raise fail(5, f"offset_dims = {list(a.offset_dims)} must be in [0, {rank}) (rank(result))")
    given = sizes if sizes is not None else [None] * operand.rank
    if len(given) != operand.rank:
        raise fail(20, f"size(slice_sizes) = {len(given)} must equal rank(operand) = {operand.rank}")
    shape = expected_result_shape(start_indices.shape, given, a, rank)
    if shape is None:
        raise fail(1, f"rank(operand) = {operand.rank} must equal size(offset_dims) + "
                   f"size(collapsed_slice_dims) + size(operand_batching_dims)")
    if sizes is None:  # dynamic_gather: the offset sizes are slice_sizes' values
        return Partial(tuple(shape), operand.element)
    return TensorType(tuple(shape), operand.element)


def infer_gather(a: GatherAttrs, types: list[Any]) -> list[TensorType | Partial]:
    return [_infer(a, types, a.slice_sizes, False)]


def infer_dynamic_gather(a: GatherDims, types: list[Any]) -> list[TensorType | Partial]:
    return [_infer(a, types, None, True)]


# --- the index arithmetic --------------------------------------------------------------

def start_indices_as_int64(start_indices: np.ndarray) -> np.ndarray:
    """The start indices as int64, exact except ui64 values above 2**63 - 1, which are
    capped there (any start that large clamps to the same place)."""
    return index_map.indices_as_int64(start_indices, _INT64_MAX)


@dataclass
class GatherIndices:
    """The spec's named pieces for a set of result indices (arrays broadcast to the result)."""

    batch_dims: list[int]
    batch_index: list[np.ndarray]
    start_positions: list[tuple[np.ndarray, ...]]  # where each start_index component is read
    start_index: list[np.ndarray]
    unclamped_start_index: list[np.ndarray]  # full_start_index before the clamp
    full_start_index: list[np.ndarray]
    full_batching_index: list[np.ndarray]
    offset_index: list[np.ndarray]
    full_offset_index: list[np.ndarray]
    operand_index: list[np.ndarray]


def gather_indices(result_index: Index, start_indices: np.ndarray, operand_shape: Sequence[int],
                   dims: GatherDims, slice_sizes: Sequence[int], full_grid: bool = False) -> GatherIndices:
    """operand_index (and every piece of it) for result indices, vectorized.

    ``start_indices`` must already be int64 (``start_indices_as_int64``).
    ``full_grid``: ``result_index`` is the whole ``index_grid`` of the result, so
    start_index is read as copy-free views.
    """
    rank = len(operand_shape)
    ivd = dims.index_vector_dim
    batch_dims = batch_dims_of(len(result_index), dims.offset_dims)
    batch_index = index_map.index_at(result_index, batch_dims)
    start_positions = index_map.start_index_positions(batch_index, ivd, start_indices.ndim,
                                                      len(dims.start_index_map))
    if full_grid:
        start_index = index_map.start_index_on_grid(start_indices, ivd, batch_dims, len(result_index))
    else:
        start_index = [start_indices[pos] for pos in start_positions]
    unclamped = index_map.full_start_index(start_index, dims.start_index_map, rank)
    # gather's own step: clamp(start_index[d_start], 0, dim(operand, d_operand) - slice_sizes[d_operand])
    full_start_index = list(unclamped)
    for d_operand in dims.start_index_map:
        hi = int(operand_shape[d_operand]) - int(slice_sizes[d_operand])
        full_start_index[d_operand] = np.clip(unclamped[d_operand], 0, hi)
    full_batching_index = index_map.full_batching_index(
        batch_index, dims.operand_batching_dims, dims.start_indices_batching_dims, ivd, rank)
    offset_index = index_map.index_at(result_index, dims.offset_dims)
    full_offset_index = index_map.full_offset_index(offset_index, dims.collapsed_slice_dims,
                                                    dims.operand_batching_dims, rank)
    operand_index = index_map.operand_index(full_start_index, full_batching_index, full_offset_index)
    return GatherIndices(batch_dims, batch_index, start_positions, start_index, unclamped,
                         full_start_index, full_batching_index, offset_index, full_offset_index,
                         operand_index)


# --- evaluation ------------------------------------------------------------------------

def _dynamic_slice_sizes(ctx: OpCall, operand: np.ndarray, start_indices: np.ndarray,
                         slice_sizes: np.ndarray) -> tuple[int, ...]:
    """The slice_sizes operand read exactly, with the constraints on its values checked."""
    check_value(ctx, slice_sizes, ctx.operand_types[2], "slice_sizes")
    sizes = tuple(int(v) for v in slice_sizes.reshape(-1))
    check_gather(_dynamic_err(ctx), ctx.operand_types[0], ctx.operand_types[1], ctx.result_tensor(0),
                 ctx.attrs, sizes)
    return sizes


def _run(ctx: OpCall, operand: np.ndarray, start_indices: np.ndarray,
         slice_sizes: Sequence[int]) -> np.ndarray:
    check_value(ctx, operand, ctx.operand_types[0], "operand")
    check_value(ctx, start_indices, ctx.operand_types[1], "start_indices")
    shape = ctx.result_tensor(0).static_shape()
    if int(np.prod(shape, dtype=np.int64)) == 0:
        return np.empty(shape, dtype=operand.dtype)
    if operand.size == 0:  # only a zero-size collapsed/batching slice gets here
        raise ExecutionError(f"{ctx.name}: the result has elements but the slices of the empty "
                             f"operand {list(operand.shape)} have none (slice_sizes = "
                             f"{list(slice_sizes)})", ctx.loc)
    return gather_windows(operand, start_indices_as_int64(start_indices), ctx.attrs,
                          slice_sizes, shape)


def gather_windows(operand: np.ndarray, start_indices: np.ndarray, dims: GatherDims,
                   slice_sizes: Sequence[int], result_shape: Sequence[int]) -> np.ndarray:
    """The result, copied window by window: ``full_start_index + full_batching_index``
    per batch position picks one window of a (copy-free) sliding-window view of the
    operand; collapsed/batching dims are dropped and offset dims put in place.

    Equivalent to indexing every result element with ``gather_indices`` (the
    tests check both against the spec's formula) but copies whole windows, not
    one element at a time.
    """
    rank = operand.ndim
    ivd = dims.index_vector_dim
    batch_shape = tuple(d for i, d in enumerate(start_indices.shape) if i != ivd)
    starts = index_map.index_vectors(start_indices, ivd)  # shape batch_shape + (n,)
    origin = []  # per operand dim: the window origin for every batch position
    for d in range(rank):
        if d in dims.start_index_map:
            hi = operand.shape[d] - int(slice_sizes[d])
            origin.append(np.clip(starts[..., dims.start_index_map.index(d)], 0, hi))
        elif d in dims.operand_batching_dims:
            b = index_map.batch_position(
                dims.start_indices_batching_dims[dims.operand_batching_dims.index(d)], ivd)
            shape = [1] * len(batch_shape)
            shape[b] = batch_shape[b]
            origin.append(np.arange(batch_shape[b], dtype=np.int64).reshape(shape))
        else:
            origin.append(np.zeros((), np.int64))
    nb = len(batch_shape)
    indexed = [d for d in range(rank) if int(slice_sizes[d]) != operand.shape[d]
               or d in dims.start_index_map or d in dims.operand_batching_dims]
    if len(indexed) == 1 and int(slice_sizes[indexed[0]]) == 1 and not dims.operand_batching_dims:
        # one dim indexed, whole slices of the others (x[i], embedding lookups): np.take
        d = indexed[0]
        taken = np.asarray(np.take(operand, np.broadcast_to(origin[d], batch_shape), axis=d))
        windows = np.moveaxis(taken, list(range(d, d + nb)), list(range(nb)))
    else:
        view = sliding_windows(operand, tuple(int(s) for s in slice_sizes))
        windows = view[tuple(np.broadcast_to(o, batch_shape) for o in origin)]  # batch + slices
    dropped = set(dims.collapsed_slice_dims) | set(dims.operand_batching_dims)
    windows = windows.reshape(batch_shape + tuple(int(slice_sizes[d]) for d in range(rank)
                                                  if d not in dropped))
    batch_axes = iter(range(nb))
    axes = [nb + dims.offset_dims.index(r) if r in dims.offset_dims else next(batch_axes)
            for r in range(len(result_shape))]
    out = windows.transpose(axes)
    if out.flags.c_contiguous:  # a view of the fresh window copy, already in result order
        return out
    # np.array, not np.ascontiguousarray: the latter turns a rank-0 result into rank 1
    return np.array(out, order="C")


def _sizes(ctx: OpCall, inputs: list[Any]) -> tuple[int, ...]:
    if ctx.name == "stablehlo.dynamic_gather":
        return tuple(int(v) for v in np.asarray(inputs[2]).reshape(-1))
    return ctx.attrs.slice_sizes


# --- provenance ------------------------------------------------------------------------

def _link(operand: int, role: str, operand_shape: Sequence[int], index: Sequence[np.ndarray],
          result_shape: tuple[int, ...]) -> Link:
    """index_link, keeping rank-0 results rank 0 (index_link's ascontiguousarray makes them (1,))."""
    link = index_link(operand, role, tuple(operand_shape), index, result_shape=result_shape)
    if link.flat_index.shape == result_shape:
        return link
    return Link(operand, role, link.flat_index.reshape(result_shape), link.frame)


def gather_provenance(ctx: OpCall, inputs: list[Any], outputs: list[Any]) -> IndexMapProvenance:
    """Each result element: one ``copy`` of an operand element, plus the start_indices
    elements read to find it (``index_read``, one link per start_index component).
    dynamic_gather also reads slice_sizes[start_index_map...] for the clamp (``index_read``)."""
    operand, start_indices = inputs[0], inputs[1]
    shape = tuple(outputs[0].shape)
    dims = ctx.attrs
    sizes = _sizes(ctx, inputs)
    links: list[Link] = []
    if outputs[0].size:
        g = gather_indices(index_map.index_grid(shape), start_indices_as_int64(start_indices),
                           operand.shape, dims, sizes, full_grid=True)
        links.append(_link(0, "copy", operand.shape, g.operand_index, shape))
        links += [_link(1, "index_read", start_indices.shape, pos, shape)
                  for pos in g.start_positions]
        if ctx.name == "stablehlo.dynamic_gather":
            links += [Link(2, "index_read", np.full(shape, d, dtype=np.int64))
                      for d in dims.start_index_map]
    return IndexMapProvenance([value_shape(v) for v in outputs], [value_shape(v) for v in inputs],
                              [links])


# --- explain ---------------------------------------------------------------------------

def _ints(xs: Sequence[Any]) -> tuple[int, ...]:
    return tuple(int(x) for x in xs)


def _list(xs: Sequence[Any]) -> str:
    """``0, 1, 2``: index components as they are written between brackets."""
    return ", ".join(str(int(x)) for x in xs)


def _offset_slot(dims: Any, d: int) -> int:
    """Which entry of offset_dims the operand dim ``d`` (neither collapsed nor batching) fills."""
    skipped = set(dims.collapsed_slice_dims) | set(dims.operand_batching_dims)
    return sum(1 for x in range(d) if x not in skipped)


def gather_explain(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
                   index: tuple) -> Explanation:
    """The spec's formula for one result element, every named piece with its numbers."""
    if result != 0:
        raise ExecutionError(f"result #{result} does not exist (the op has 1 result)")
    idx = check_index(value_shape(outputs[0]), index, "result index")
    operand, start_indices = inputs[0], inputs[1]
    dims = ctx.attrs
    sizes = _sizes(ctx, inputs)
    g = gather_indices(index_map.one_index(idx), start_indices_as_int64(start_indices), operand.shape, dims,
                       sizes)
    ivd = dims.index_vector_dim
    rank = len(idx)
    si_name = ctx.op.operands[1].name if len(ctx.op.operands) > 1 else "start_indices"
    roles = {d: (DimRole("batch") if d in g.batch_dims else DimRole("offset", k=dims.offset_dims.index(d)))
             for d in range(rank)}
    steps = [Step("batch_index", Msg("gather.batch_index.formula"), _ints(g.batch_index), dim_roles=roles,
                  substituted=Msg("gather.batch_index.substituted", result_index=idx,
                                  batch_dims=_list(g.batch_dims)))]
    # start_index, each component with the position it is read from (exact value, any int type)
    children = []
    raw = []
    for k, pos in enumerate(g.start_positions):
        p = _ints(pos)
        v = int(start_indices[p]) if start_indices.ndim else int(start_indices[()])
        raw.append(v)
        children.append(Step(f"start_index[{k}]", Msg("explain.element", name=si_name, index=_list(p)), v))
    if ivd < start_indices.ndim:
        at = [str(int(i)) for i in g.batch_index]
        at.insert(ivd, ":")
        steps.append(Step("start_index", Msg("gather.start_index.formula", index_vector_dim=ivd), tuple(raw),
                          substituted=Msg("explain.element", name=si_name, index=", ".join(at)),
                          children=children))
    else:
        steps.append(Step("start_index", Msg("gather.start_index.formula_scalar", index_vector_dim=ivd),
                          tuple(raw), substituted=Msg("gather.start_index.substituted_scalar", name=si_name,
                                                      batch_index=_list(g.batch_index)),
                          children=children))
    # full_start_index, with the clamp
    full_start = _ints(g.full_start_index)
    before = [0] * len(full_start)
    fs_roles: dict[int, DimRole] = {}
    parts: list[str] = ["0"] * len(full_start)
    for d_start, d_operand in enumerate(dims.start_index_map):
        before[d_operand] = raw[d_start]
        hi = int(operand.shape[d_operand]) - int(sizes[d_operand])
        kind = "start_clamped" if raw[d_start] != full_start[d_operand] else "start"
        fs_roles[d_operand] = DimRole(kind, k=d_start, hi=hi)
        parts[d_operand] = f"clamp({raw[d_start]}, 0, {operand.shape[d_operand]} - {sizes[d_operand]})"
    fs_roles = {d: fs_roles.get(d, DimRole("not_indexed")) for d in range(len(full_start))}
    clamped = tuple(before) != full_start
    steps.append(Step("full_start_index", Msg("gather.full_start_index.formula",
                                              start_index_map=list(dims.start_index_map)),
                      full_start, dim_roles=fs_roles,
                      before_clamp=tuple(before) if clamped else None,
                      substituted=Msg("gather.tuple", parts=", ".join(parts))))
    fb_roles = {d_op: DimRole("batching_of", d=d_st)
                for d_op, d_st in zip(dims.operand_batching_dims, dims.start_indices_batching_dims,
                                      strict=True)}
    steps.append(Step("full_batching_index",
                      Msg("gather.full_batching_index.formula",
                          operand_batching_dims=list(dims.operand_batching_dims),
                          start_indices_batching_dims=list(dims.start_indices_batching_dims)),
                      _ints(g.full_batching_index), dim_roles=fb_roles or None))
    steps.append(Step("offset_index", Msg("gather.offset_index.formula"), _ints(g.offset_index),
                      substituted=Msg("gather.batch_index.substituted", result_index=idx,
                                      batch_dims=_list(dims.offset_dims))))
    fo_roles = {}
    for d in range(operand.ndim):
        if d in dims.collapsed_slice_dims:
            fo_roles[d] = DimRole("collapsed")
        elif d in dims.operand_batching_dims:
            fo_roles[d] = DimRole("operand_batching")
        else:
            fo_roles[d] = DimRole("offset", k=_offset_slot(dims, d))
    steps.append(Step("full_offset_index",
                      Msg("gather.full_offset_index.formula",
                          collapsed_slice_dims=list(dims.collapsed_slice_dims),
                          operand_batching_dims=list(dims.operand_batching_dims)),
                      _ints(g.full_offset_index), dim_roles=fo_roles))
    operand_index = _ints(g.operand_index)
    steps.append(Step("operand_index", Msg("gather.operand_index.formula"), operand_index,
                      substituted=Msg("gather.operand_index.substituted", start=full_start,
                                      batching=_ints(g.full_batching_index),
                                      offset=_ints(g.full_offset_index))))
    value = outputs[0][idx]
    name = ctx.op.operands[0].name if ctx.op.operands else "operand"
    steps.append(Step("result[result_index]", Msg("explain.element", name="operand", index="operand_index"),
                      value, substituted=Msg("explain.element", name=name, index=_list(operand_index))))
    notes = []
    if clamped:
        notes.append(Msg("gather.note.clamped", before=tuple(before), after=full_start,
                         slice_sizes=list(sizes), shape=list(operand.shape)))
    if dims.indices_are_sorted:
        notes.append(Msg("gather.note.sorted"))
    return Explanation(ctx.op.name, idx, steps, value, notes, 0, index_roles=roles)


# --- the ops ---------------------------------------------------------------------------

@op("stablehlo.gather", aliases=("Gather",), verify=_verify_gather, attrs=GatherAttrs,
    infer=infer_gather, family="indexing", provenance=gather_provenance, explain=gather_explain)
def gather(ctx: OpCall, operand: np.ndarray, start_indices: np.ndarray) -> np.ndarray:
    """result[result_index] = operand[full_start_index + full_batching_index + full_offset_index]."""
    return _run(ctx, operand, start_indices, ctx.attrs.slice_sizes)


@op("stablehlo.dynamic_gather", verify=_verify_dynamic_gather, attrs=GatherDims,
    infer=infer_dynamic_gather, family="indexing", provenance=gather_provenance, explain=gather_explain)
def dynamic_gather(ctx: OpCall, operand: np.ndarray, start_indices: np.ndarray,
                   slice_sizes: np.ndarray) -> np.ndarray:
    """gather with slice_sizes given as a value."""
    check_value(ctx, start_indices, ctx.operand_types[1], "start_indices")
    return _run(ctx, operand, start_indices,
                _dynamic_slice_sizes(ctx, operand, start_indices, slice_sizes))


# --- parameter schema (hlolab.ops.examples) ------------------------------------------------

def _gather_schema() -> None:
    from hlolab.ops.examples import (
        Operand,
        OpParts,
        OpSchema,
        bool_param,
        dtype_param,
        inferred_results,
        int_param,
        ints_param,
        register_schema,
        shape_param,
        ttype,
        valid_starts,
    )

    def build(p: dict[str, Any]) -> OpParts:
        rec = GatherAttrs(**{k: p[k] for k in (
            "offset_dims", "collapsed_slice_dims", "operand_batching_dims", "start_indices_batching_dims",
            "start_index_map", "index_vector_dim", "slice_sizes", "indices_are_sorted")})
        starts = valid_starts(p["start_indices"], p["index_vector_dim"], p["start_index_map"],
                              p["operand"], p["slice_sizes"])
        operands = [Operand("operand", ttype(p["operand"], p["dtype"])),
                    Operand("start_indices", ttype(p["start_indices"], p["index_dtype"]), starts)]
        return OpParts(operands, inferred_results("stablehlo.gather", rec, [o.type for o in operands],
                                                  p["dtype"]), rec)

    params = (
        shape_param("operand", (4, 5), "the tensor slices are gathered from"),
        shape_param("start_indices", (2, 2), "tensor of start indices; each index vector starts one slice"),
        ints_param("offset_dims", (1, 2), "dims of the result that index into a slice"),
        ints_param("collapsed_slice_dims", (), "operand dims of size-1 slices dropped from the result"),
        ints_param("operand_batching_dims", (), "operand dims that are batch dims"),
        ints_param("start_indices_batching_dims", (), "start_indices dims that are batch dims"),
        ints_param("start_index_map", (0, 1), "operand dim each index vector component starts"),
        int_param("index_vector_dim", 1, "the dim of start_indices holding the index vectors"),
        ints_param("slice_sizes", (2, 2), "size of the slice in each operand dim"),
        bool_param("indices_are_sorted", False, "the indices are sorted (a promise, unchecked)"),
        dtype_param("f32", "element type of operand and result"),
        dtype_param("i64", "element type of start_indices", "index_dtype"),
    )
    spec = {
        "operand": (2, 3, 4, 2), "start_indices": (2, 2, 3, 2), "offset_dims": (3, 4),
        "collapsed_slice_dims": (1,), "operand_batching_dims": (0,), "start_indices_batching_dims": (1,),
        "start_index_map": (2, 1), "index_vector_dim": 3, "slice_sizes": (1, 1, 2, 2), "dtype": "i32",
        "index_dtype": "i64",
        "inputs": {"operand": np.arange(1, 49).reshape(2, 3, 4, 2),
                   "start_indices": [[[[0, 0], [1, 0], [2, 1]], [[0, 1], [1, 1], [0, 9]]],
                                     [[[0, 0], [2, 1], [2, 2]], [[1, 2], [0, 1], [1, 0]]]]},
        "index": (0, 1, 2, 1, 1),  # from the start index [0, 9], clamped
    }
    register_schema(OpSchema("stablehlo.gather", params, {"default": {}, "spec-example": spec}, build,
                             doc="gather slices of operand at start_indices"))


_gather_schema()


# --- parameter schema of dynamic_gather (hlolab.ops.examples) ------------------------------

def _dynamic_gather_schema() -> None:
    from hlolab.ops.examples import (
        Operand,
        OpParts,
        OpSchema,
        bool_param,
        dtype_param,
        int_param,
        ints_param,
        register_schema,
        shape_param,
        ttype,
        valid_starts,
    )

    def results(rec: GatherDims, operands: list[Any], p: dict[str, Any]) -> list[Any]:
        """infer's shape, its offset dims filled from slice_sizes' values (padded or cut
        to their count: a wrong length is for verification to report, C11)."""
        try:
            (part,) = infer_dynamic_gather(rec, [o.type for o in operands])
        except InferError:
            return [ttype((), p["dtype"])]  # verification names the broken constraint
        sizes = [z for d, z in enumerate(p["slice_sizes"]) if d not in rec.collapsed_slice_dims]
        offsets = iter((sizes + [1] * len(rec.offset_dims))[:len(rec.offset_dims)])
        return [ttype([next(offsets) if n is None else n for n in part.shape], p["dtype"])]

    def build(p: dict[str, Any]) -> OpParts:
        # the spec's dynamic_gather has no batching dims
        rec = GatherDims(offset_dims=p["offset_dims"], collapsed_slice_dims=p["collapsed_slice_dims"],
                         operand_batching_dims=(), start_indices_batching_dims=(),
                         start_index_map=p["start_index_map"], index_vector_dim=p["index_vector_dim"],
                         indices_are_sorted=p["indices_are_sorted"])
        starts = valid_starts(p["start_indices"], p["index_vector_dim"], p["start_index_map"],
                              p["operand"], p["slice_sizes"])
        sizes = np.array(p["slice_sizes"], dtype=np.int64)
        operands = [Operand("operand", ttype(p["operand"], p["dtype"])),
                    Operand("start_indices", ttype(p["start_indices"], p["index_dtype"]), starts),
                    Operand("slice_sizes", ttype(sizes.shape, p["index_dtype"]), sizes)]
        return OpParts(operands, results(rec, operands, p), rec)

    params = (
        shape_param("operand", (4, 5), "the tensor slices are gathered from"),
        shape_param("start_indices", (2, 2), "tensor of start indices; each index vector starts one slice"),
        ints_param("slice_sizes", (2, 2), "the slice_sizes operand's value: slice size in each operand dim"),
        ints_param("offset_dims", (1, 2), "dims of the result that index into a slice"),
        ints_param("collapsed_slice_dims", (), "operand dims of size-1 slices dropped from the result"),
        ints_param("start_index_map", (0, 1), "operand dim each index vector component starts"),
        int_param("index_vector_dim", 1, "the dim of start_indices holding the index vectors"),
        bool_param("indices_are_sorted", False, "the indices are sorted (a promise, unchecked)"),
        dtype_param("f32", "element type of operand and result"),
        dtype_param("i64", "element type of start_indices and slice_sizes", "index_dtype"),
    )
    spec = {
        "operand": (3, 4, 2), "start_indices": (2, 3, 2), "slice_sizes": (1, 2, 2), "offset_dims": (2, 3),
        "collapsed_slice_dims": (0,), "start_index_map": (1, 0), "index_vector_dim": 2, "dtype": "i64",
        "index_dtype": "i64", "index": (1, 2, 1, 1),
        "inputs": {"operand": np.arange(1, 25).reshape(3, 4, 2),
                   "start_indices": [[[0, 0], [1, 0], [2, 1]], [[0, 1], [1, 1], [0, 2]]]},
    }
    register_schema(OpSchema("stablehlo.dynamic_gather", params, {"default": {}, "spec-example": spec},
                             build, doc="gather with slice_sizes given as an operand's value"))


_dynamic_gather_schema()
