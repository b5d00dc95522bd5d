"""Scattering: ``stablehlo.scatter`` (XLA ``Scatter``).

For every ``update_index`` of ``updates[0]`` the spec builds ``result_index``
from named pieces (``update_scatter_index``, ``start_index``,
``full_start_index``, ``full_batching_index``, ``update_window_index``,
``full_window_index``). One function, ``scatter_index_pieces``, computes all of
them from update index arrays: on the whole ``np.indices`` grid it gives the
flat target of every update element (evaluate and provenance), on one index it
gives the explain steps.

Choices the spec leaves to the implementation (listed here, as DESIGN.md asks):

* ``schedule``: row-major order of ``index_space(updates[0])`` (update scatter
  dims and window dims in their plain axis order). Colliding updates combine in
  that order; provenance and explain record it. XLA:CPU applies them in the
  same order.
* Out of bounds: the spec tests ``result_index`` per update *element*: an
  element whose ``result_index`` is outside ``shape(results...)`` is dropped,
  the in-bounds elements of the same window still apply. (XLA documents
  dropping whole windows; the spec, which hlolab follows, drops elements.)
* ``indices_are_sorted`` / ``unique_indices`` are accepted and not relied on.
* ``update_computation`` element types ``Ei`` may be wider than the inputs
  (``is_promotable``): inputs and updates are converted to ``Ei`` first.

Recognized region bodies (hlolab.ops.regions) run as numpy ``ufunc.at``;
any other body runs through the interpreter in *waves*: wave k applies, as one
batched region call, the k-th update (in schedule order) of every result
element, so no two updates of one wave touch the same element.
Quantized tensors: the values are storage integers; the region runs on them (no numpy
path), so its ops apply their quantized rules (hlolab.ops.quantized).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hlolab.errors import ExecutionError
from hlolab.messages import Msg
from hlolab.ops import index_map
from hlolab.ops.common import (
    check_value,
    contiguous,
    dims_fit,
    is_promotable,
    per_tensor_type,
)
from hlolab.ops.record import Attrs, InferError, Partial, attr, boolean, member, record
from hlolab.ops.regions import (
    bool_powers,
    can_combine_at,
    check_combiner_types,
    combine_at,
    recognize_binary_each,
    region_reads,
)
from hlolab.ops.registry import OpCall, op
from hlolab.ops.shape import same_element
from hlolab.trace.explain import DimRole, Explanation, Step, format_value
from hlolab.trace.provenance import AnimationStep, Provenance, Source, Target, check_index, value_shape
from hlolab.types import ElementType, TensorType

Index = index_map.Index

_INDEX_CAP = 2**62  # start indices beyond this are out of bounds anyway; keeps sums in int64
EXPLAIN_MAX_UPDATES = 32  # explain lists at most this many updates with running values


def _dn(name: str = "") -> Any:
    return attr(member("scatter_dimension_numbers", "stablehlo.scatter", name))


@record
class ScatterAttrs(Attrs):
    """scatter's attributes: the fields of ``#stablehlo.scatter<...>`` and the two
    promises (the spec's names)."""

    update_window_dims: tuple[int, ...] = _dn()
    inserted_window_dims: tuple[int, ...] = _dn()
    input_batching_dims: tuple[int, ...] = _dn()
    scatter_indices_batching_dims: tuple[int, ...] = _dn()
    scatter_dims_to_operand_dims: tuple[int, ...] = _dn()
    index_vector_dim: int = _dn()
    indices_are_sorted: bool = attr(boolean("indices_are_sorted"), default=False)
    unique_indices: bool = attr(boolean("unique_indices"), default=False)


def update_scatter_dims_of(updates_rank: int, update_window_dims: Sequence[int]) -> list[int]:
    """update_scatter_dims = [d for d in axes(updates[0]) and d not in update_window_dims]."""
    return [d for d in range(updates_rank) if d not in update_window_dims]


def _n(ctx: OpCall) -> int:
    return (len(ctx.operand_types) - 1) // 2


# --- verification ----------------------------------------------------------------------

def _is_sorted(xs: Sequence[int]) -> bool:
    return all(a <= b for a, b in zip(xs, xs[1:], strict=False))


def _is_unique(xs: Sequence[int]) -> bool:
    return len(set(xs)) == len(xs)


def _verify_scatter(ctx: OpCall) -> None:
    types = ctx.operand_types
    if len(types) < 3 or len(types) % 2 == 0:
        raise ctx.error("C5", f"0 < size(inputs) = size(updates) does not hold: the op has "
                        f"{len(types)} operands (inputs..., scatter_indices, updates...)")
    n = _n(ctx)
    inputs = [per_tensor_type(ctx, t, "I1", f"inputs[{i}]") for i, t in enumerate(types[:n])]
    si = per_tensor_type(ctx, types[n], "I2", "scatter_indices")
    if not (isinstance(si.element, ElementType) and si.element.is_int):
        raise ctx.error("I2", f"scatter_indices must be a tensor of integer type, got {si}")
    updates = [per_tensor_type(ctx, t, "I3", f"updates[{i}]") for i, t in enumerate(types[n + 1:])]
    d = ctx.attrs
    r_in, r_si, r_up = inputs[0].rank, si.rank, updates[0].rank
    shape0 = inputs[0].shape
    for i, t in enumerate(inputs):
        if not all(dims_fit(a, b) for a, b in zip(t.shape, shape0, strict=False)) or t.rank != r_in:
            raise ctx.error("C1", f"same(shape(inputs...)) does not hold: inputs[{i}] is {t}, "
                            f"inputs[0] is {inputs[0]}")
    for i, t in enumerate(updates):
        if t.rank != r_up or not all(dims_fit(a, b) for a, b in zip(t.shape, updates[0].shape,
                                                                   strict=False)):
            raise ctx.error("C3", f"same(shape(updates...)) does not hold: updates[{i}] is {t}, "
                            f"updates[0] is {updates[0]}")
    for i, (a, b) in enumerate(zip(inputs, updates, strict=True)):
        if not same_element(a.element, b.element):
            raise ctx.error("C6", f"element_type(updates...) = element_type(inputs...) does not "
                            f"hold: inputs[{i}] is {a}, updates[{i}] is {b}")
    ivd = d.index_vector_dim
    if not 0 <= ivd <= r_si:
        raise ctx.error("C22", f"index_vector_dim = {ivd} must be in [0, {r_si}] (rank(scatter_indices))")
    uwd, iwd, ibd = d.update_window_dims, d.inserted_window_dims, d.input_batching_dims
    sibd, sdtod = d.scatter_indices_batching_dims, d.scatter_dims_to_operand_dims
    if r_in != len(uwd) + len(iwd) + len(ibd):
        raise ctx.error("C2", f"rank(inputs[0]) = {r_in} must equal size(update_window_dims) + "
                        f"size(inserted_window_dims) + size(input_batching_dims) = "
                        f"{len(uwd)} + {len(iwd)} + {len(ibd)}")
    if not (_is_unique(uwd) and _is_sorted(uwd)):
        raise ctx.error("C7", f"update_window_dims = {list(uwd)} must be unique and sorted")
    if any(not 0 <= x < r_up for x in uwd):
        raise ctx.error("C8", f"update_window_dims = {list(uwd)} must be in [0, {r_up}) "
                        f"(rank(updates[0]))")
    if not _is_unique(iwd + ibd):
        raise ctx.error("C9", f"inserted_window_dims = {list(iwd)} and input_batching_dims = "
                        f"{list(ibd)} must hold unique dims")
    if not _is_sorted(iwd):
        raise ctx.error("C10", f"inserted_window_dims = {list(iwd)} must be sorted")
    if any(not 0 <= x < r_in for x in iwd):
        raise ctx.error("C11", f"inserted_window_dims = {list(iwd)} must be in [0, {r_in}) "
                        f"(rank(inputs[0]))")
    if not _is_sorted(ibd):
        raise ctx.error("C12", f"input_batching_dims = {list(ibd)} must be sorted")
    if any(not 0 <= x < r_in for x in ibd):
        raise ctx.error("C13", f"input_batching_dims = {list(ibd)} must be in [0, {r_in}) "
                        f"(rank(inputs[0]))")
    if not _is_unique(sibd):
        raise ctx.error("C14", f"scatter_indices_batching_dims = {list(sibd)} must be unique")
    if any(not 0 <= x < r_si for x in sibd):
        raise ctx.error("C15", f"scatter_indices_batching_dims = {list(sibd)} must be in "
                        f"[0, {r_si}) (rank(scatter_indices))")
    if ivd in sibd:
        raise ctx.error("C16", f"index_vector_dim = {ivd} must not be in "
                        f"scatter_indices_batching_dims = {list(sibd)}")
    if len(ibd) != len(sibd):
        raise ctx.error("C17", f"size(input_batching_dims) = {len(ibd)} must equal "
                        f"size(scatter_indices_batching_dims) = {len(sibd)}")
    a = [shape0[x] for x in ibd]
    b = [si.shape[x] for x in sibd]
    if not all(dims_fit(x, y) for x, y in zip(a, b, strict=True)):
        raise ctx.error("C18", f"dim(inputs[0], input_batching_dims...) = {a} must equal "
                        f"dim(scatter_indices, scatter_indices_batching_dims...) = {b}")
    want = si.shape[ivd] if ivd < r_si else 1
    if want is not None and len(sdtod) != want:
        where = (f"dim(scatter_indices, {ivd})" if ivd < r_si
                 else "1 (index_vector_dim = rank(scatter_indices))")
        raise ctx.error("C19", f"size(scatter_dims_to_operand_dims) = {len(sdtod)} must equal "
                        f"{where} = {want}")
    if not _is_unique(sdtod + ibd):
        raise ctx.error("C20", f"scatter_dims_to_operand_dims = {list(sdtod)} and "
                        f"input_batching_dims = {list(ibd)} must hold unique dims")
    if any(not 0 <= x < r_in for x in sdtod):
        raise ctx.error("C21", f"scatter_dims_to_operand_dims = {list(sdtod)} must be in "
                        f"[0, {r_in}) (rank(inputs[0]))")
    _check_c4(ctx, shape0, si, updates[0], d)
    es = check_combiner_types(ctx, inputs, "C23", "update_computation")
    if len(ctx.result_types) != n:
        raise ctx.error("C24", f"scatter has {n} inputs, so it must have {n} results, got "
                        f"{len(ctx.result_types)}")
    for i, t in enumerate(ctx.result_types):
        rt = per_tensor_type(ctx, t, "C24", f"results[{i}]")
        if rt.rank != r_in or not all(dims_fit(x, y) for x, y in zip(rt.shape, inputs[i].shape,
                                                                  strict=True)):
            raise ctx.error("C24", f"shape(results[{i}]) = {list(rt.shape)} must equal "
                            f"shape(inputs[{i}]) = {list(inputs[i].shape)}")
        if not same_element(rt.element, es[i]):
            raise ctx.error("C25", f"element_type(results[{i}]) = {rt.element} must be E{i} = {es[i]} "
                            "(the update_computation's element type)")


def _check_c4(ctx: OpCall, shape0: Sequence[int | None], si: TensorType, upd: TensorType,
              d: ScatterAttrs) -> None:
    ivd = d.index_vector_dim
    update_scatter_dim_sizes = [x for k, x in enumerate(si.shape) if k != ivd]
    dropped = set(d.inserted_window_dims) | set(d.input_batching_dims)
    window_bounds = [x for k, x in enumerate(shape0) if k not in dropped]
    usd = update_scatter_dims_of(upd.rank, d.update_window_dims)
    where = (f"update_window_dims = {list(d.update_window_dims)}, shape(scatter_indices) = "
             f"{list(si.shape)}, shape(inputs[0]) = {list(shape0)}")
    if len(usd) != len(update_scatter_dim_sizes):
        raise ctx.error("C4", f"shape(updates[0]) = {list(upd.shape)} must have "
                        f"{len(update_scatter_dim_sizes) + len(d.update_window_dims)} dims: "
                        f"update_scatter_dim_sizes = {update_scatter_dim_sizes} at the dims not "
                        f"in update_window_dims, window sizes at update_window_dims ({where})")
    for k, (dim, size) in enumerate(zip(usd, update_scatter_dim_sizes, strict=True)):
        if not dims_fit(upd.shape[dim], size):
            raise ctx.error("C4", f"dim(updates[0], {dim}) = {upd.shape[dim]} must equal "
                            f"update_scatter_dim_sizes[{k}] = {size} ({where})")
    for dim, bound in zip(d.update_window_dims, window_bounds, strict=True):
        x = upd.shape[dim]
        if x is not None and (x < 0 or (bound is not None and x > bound)):
            raise ctx.error("C4", f"dim(updates[0], {dim}) = {x} must be <= the input bound "
                            f"{bound} (update_window_dim_sizes <= shape(inputs[0]) without "
                            f"inserted_window_dims and input_batching_dims; {where})")


# --- result type inference ---------------------------------------------------------------

def _promoted_from(e: Any) -> Any:
    """A check of a declared result type: element Ei with is_promotable(e, Ei) (C25, C23)."""
    return lambda t: isinstance(t, TensorType) and is_promotable(e, t.element)


def infer_scatter(a: ScatterAttrs, types: list[Any]) -> list[TensorType | Partial]:
    """One result per input with its shape (C24). Its element type is Ei, the
    update_computation's (C25), which may be wider than the input's (C23:
    is_promotable): a Partial fixing the shape and admitting those Ei."""
    if len(types) < 3 or len(types) % 2 == 0:
        raise InferError("C5", f"0 < size(inputs) = size(updates) does not hold: the op has "
                         f"{len(types)} operands (inputs..., scatter_indices, updates...)")
    n = (len(types) - 1) // 2
    out: list[TensorType | Partial] = []
    for i, t in enumerate(types[:n]):
        if not isinstance(t, TensorType):
            raise InferError("I1", f"inputs[{i}] must be a tensor, got {t}")
        shape = "x".join("?" if d is None else str(d) for d in t.shape)
        out.append(Partial(t.shape, None, check=_promoted_from(t.element),
                           what=f"tensor<{shape}{'x' if shape else ''}E{i}> with "
                                f"is_promotable({t.element}, E{i})"))
    return out


# --- the index arithmetic --------------------------------------------------------------

def scatter_indices_as_int64(scatter_indices: np.ndarray) -> np.ndarray:
    """Indices as int64, values beyond +-2**62 capped there (out of bounds either way)."""
    a = index_map.indices_as_int64(scatter_indices, _INDEX_CAP)
    if a.size and (a.min() < -_INDEX_CAP or a.max() > _INDEX_CAP):  # rare: clip only then
        a = np.clip(a, -_INDEX_CAP, _INDEX_CAP)
    return a


@dataclass
class ScatterPieces:
    """The spec's named pieces for a set of update indices (arrays broadcast together)."""

    update_scatter_dims: list[int]
    update_scatter_index: list[np.ndarray]
    start_positions: list[tuple[np.ndarray, ...]]  # where each start_index component is read
    start_index: list[np.ndarray]
    full_start_index: list[np.ndarray]
    full_batching_index: list[np.ndarray]
    update_window_index: list[np.ndarray]
    full_window_index: list[np.ndarray]
    result_index: list[np.ndarray]
    in_bounds: np.ndarray


def scatter_index_pieces(update_index: Index, scatter_indices: np.ndarray,
                         input_shape: Sequence[int], d: ScatterAttrs,
                         full_grid: bool = False) -> ScatterPieces:
    """result_index (and every piece of it) for update indices, vectorized.

    ``scatter_indices`` must already be int64 (``scatter_indices_as_int64``).
    """
    rank_in = len(input_shape)
    ivd = d.index_vector_dim
    usd = update_scatter_dims_of(len(update_index), d.update_window_dims)
    update_scatter_index = index_map.index_at(update_index, usd)
    start_positions = index_map.start_index_positions(update_scatter_index, ivd, scatter_indices.ndim,
                                                      len(d.scatter_dims_to_operand_dims))
    if full_grid:  # every update element: read start indices as copy-free views
        start_index = index_map.start_index_on_grid(scatter_indices, ivd, usd, len(update_index))
    else:
        start_index = [scatter_indices[pos] for pos in start_positions]
    full_start_index = index_map.full_start_index(start_index, d.scatter_dims_to_operand_dims, rank_in)
    full_batching_index = index_map.full_batching_index(
        update_scatter_index, d.input_batching_dims, d.scatter_indices_batching_dims, ivd, rank_in)
    update_window_index = index_map.index_at(update_index, d.update_window_dims)
    full_window_index = index_map.full_offset_index(update_window_index, d.inserted_window_dims,
                                                    d.input_batching_dims, rank_in)
    result_index = index_map.operand_index(full_start_index, full_batching_index, full_window_index)
    # scatter's own step: an update element whose result_index is out of bounds is dropped
    in_bounds = np.ones((), dtype=bool)
    for ri, n in zip(result_index, input_shape, strict=True):
        in_bounds = in_bounds & (ri >= 0) & (ri < n)
    return ScatterPieces(usd, update_scatter_index, start_positions, start_index, full_start_index,
                         full_batching_index, update_window_index, full_window_index, result_index,
                         in_bounds)


def scatter_targets(scatter_indices: np.ndarray, input_shape: Sequence[int],
                    updates_shape: Sequence[int], d: ScatterAttrs) -> np.ndarray:
    """The flat (row-major) result index every update element lands on, -1 where dropped
    (its result_index is out of bounds); int64, shaped like the updates."""
    ushape = tuple(int(x) for x in updates_shape)
    if int(np.prod(ushape, dtype=np.int64)) == 0:
        return np.zeros(ushape, dtype=np.int64)
    p = scatter_index_pieces(index_map.index_grid(ushape), scatter_indices_as_int64(scatter_indices),
                             input_shape, d, full_grid=True)
    if 0 in tuple(input_shape):
        return np.full(ushape, -1, dtype=np.int64)
    # row-major flat index as a stride sum over the (sparse, broadcasting) pieces
    flat: np.ndarray = np.zeros((), dtype=np.int64)
    stride = 1
    for ri, n in zip(reversed(p.result_index), reversed(tuple(input_shape)), strict=True):
        flat = flat + ri * stride
        stride *= int(n)
    return np.broadcast_to(np.where(p.in_bounds, flat, -1), ushape).astype(np.int64)


def _batch_positions(scatter_shape: Sequence[int], updates_shape: Sequence[int],
                     d: ScatterAttrs) -> tuple[tuple[int, ...], np.ndarray]:
    """(update_scatter dim sizes, per update element the flat index of its
    update_scatter_index in them): which index vector each update element reads."""
    ivd = d.index_vector_dim
    bshape = tuple(int(x) for k, x in enumerate(scatter_shape) if k != ivd)
    ushape = tuple(int(x) for x in updates_shape)
    usd = update_scatter_dims_of(len(ushape), d.update_window_dims)
    grid = index_map.index_grid(ushape)
    if not bshape:
        return bshape, np.zeros(ushape, dtype=np.int64)
    if 0 in ushape:
        return bshape, np.zeros(ushape, dtype=np.int64)
    flat = np.ravel_multi_index(tuple(grid[k] for k in usd), bshape)
    return bshape, contiguous(np.broadcast_to(flat, ushape)).astype(np.int64)


# --- evaluation ------------------------------------------------------------------------

def _split(ctx: OpCall, operands: Sequence[Any]) -> tuple[list[np.ndarray], np.ndarray, list[np.ndarray]]:
    n = _n(ctx)
    return list(operands[:n]), operands[n], list(operands[n + 1:])


def _elements(ctx: OpCall) -> list[Any]:
    """E0..EN-1: the update_computation's element types."""
    block = ctx.op.regions[0].entry
    return [a.type.element for a in block.args[:_n(ctx)]]


def body_kinds(ctx: OpCall) -> list[str] | None:
    """Per result, the recognized combination of the update_computation, or None."""
    return recognize_binary_each(ctx.op.regions[0])


@op("stablehlo.scatter", aliases=("Scatter",), verify=_verify_scatter, attrs=ScatterAttrs,
    infer=infer_scatter, family="indexing",
    provenance=lambda ctx, inputs, outputs: scatter_provenance(ctx, inputs, outputs),
    explain=lambda ctx, inputs, outputs, result, index: scatter_explain(ctx, inputs, outputs,
                                                                         result, index))
def scatter(ctx: OpCall, *operands: np.ndarray) -> list[np.ndarray]:
    """results = inputs with every in-bounds update element combined into
    results...[result_index] by update_computation, in row-major update order."""
    inputs, scatter_indices, updates = _split(ctx, operands)
    n = len(inputs)
    for i in range(n):
        check_value(ctx, inputs[i], ctx.operand_types[i], f"inputs[{i}]")
        check_value(ctx, updates[i], ctx.operand_types[n + 1 + i], f"updates[{i}]")
    check_value(ctx, scatter_indices, ctx.operand_types[n], "scatter_indices")
    es = _elements(ctx)
    # to_destination_type: Ei may be wider than the inputs (is_promotable)
    results = [np.array(x.astype(e.dtype, copy=False), order="C") for x, e in zip(inputs, es, strict=True)]
    target = scatter_targets(scatter_indices, inputs[0].shape, updates[0].shape, ctx.attrs)
    t = target.reshape(-1)
    p = np.flatnonzero(t >= 0)  # application order: row-major over the update elements
    if p.size == 0:
        return results
    if p.size < t.size:  # some update elements are dropped as out of bounds
        t = t[p]
        vals = [u.reshape(-1)[p].astype(e.dtype, copy=False) for u, e in zip(updates, es, strict=True)]
    else:
        vals = [u.reshape(-1).astype(e.dtype, copy=False) for u, e in zip(updates, es, strict=True)]
    flats = [r.reshape(-1) for r in results]
    kinds = body_kinds(ctx)
    if kinds is not None:
        if all(can_combine_at(k, e) for k, e in zip(kinds, es, strict=True)):
            for i in range(n):
                combine_at(kinds[i], flats[i], t, vals[i], es[i])
            return results
    _apply_in_waves(ctx, flats, t, vals)
    return results


def wave_numbers(t: np.ndarray) -> np.ndarray:
    """For targets in application order, how many earlier entries have the same target
    (the wave each update belongs to)."""
    order = np.argsort(t, kind="stable")
    st = t[order]
    pos = np.arange(t.size, dtype=np.int64)
    starts = np.ones(t.size, dtype=bool)
    starts[1:] = st[1:] != st[:-1]
    first = np.maximum.accumulate(np.where(starts, pos, 0))
    occ = np.empty(t.size, dtype=np.int64)
    occ[order] = pos - first
    return occ


def _apply_in_waves(ctx: OpCall, flats: list[np.ndarray], t: np.ndarray, vals: list[np.ndarray]) -> None:
    """Any update_computation: wave k is one batched region call on the k-th update of
    every target, so no wave touches an element twice and each element sees its
    updates in application order."""
    occ = wave_numbers(t)
    order = np.argsort(occ, kind="stable")  # keeps application order inside each wave
    bounds = np.searchsorted(occ[order], np.arange(int(occ.max()) + 2))
    for k in range(int(occ.max()) + 1):
        sel = order[bounds[k]:bounds[k + 1]]
        tw = t[sel]
        args = [f[tw] for f in flats] + [v[sel] for v in vals]
        outs = ctx.run_region(0, args)
        for f, o in zip(flats, outs, strict=True):
            f[tw] = np.broadcast_to(np.asarray(o), tw.shape)


# --- provenance ------------------------------------------------------------------------

class ScatterProvenance(Provenance):
    """Per result element: the input elements its value is computed from (``init``), then,
    in application order, each update element combined into it (``update``) and the
    scatter_indices elements read to place it (``index_read``).

    Operands are numbered as the op's: inputs 0..N-1, scatter_indices N,
    updates[i] N+1+i. What an element depends on follows the body's dataflow
    (``regions.region_reads``): ``reads[r, j]`` says the body's result r is computed
    from its argument j (current values 0..N-1, updates N..2N-1). After k updates landed on
    an element, result r depends on input j when ``(C ** k)[r, j]`` (C: current -> result)
    and on the t-th of them (1-based) when ``(C ** (k - t) @ U)[r, j]``; so ``add`` keeps
    everything, while ``set`` (the body returns the update) leaves out the input and every
    overwritten update: they cannot change the result. Only updates that the element
    depends on have their index vectors listed. Stored vectorized: ``target`` holds the
    flat result index of every update element (-1: dropped as out of bounds).
    """

    def __init__(self, result_shapes: Sequence[tuple[int, ...]], operand_shapes: Sequence[Any],
                 target: np.ndarray, batch_shape: tuple[int, ...], batch_flat: np.ndarray,
                 index_vector_dim: int, reads: np.ndarray):
        super().__init__(result_shapes, operand_shapes)
        n = self.n = len(result_shapes)
        self.target = target.reshape(-1)
        self.updates_shape = tuple(target.shape)
        self.batch_shape = batch_shape
        self.batch_flat = batch_flat.reshape(-1)
        self.ivd = index_vector_dim
        self.scatter_shape = self.operand_shapes[n]
        size = int(np.prod(self.result_shapes[0], dtype=np.int64))
        valid = self.target >= 0
        landed = np.bincount(self.target[valid], minlength=size)  # updates per element
        self.updated = landed > 0
        current, update = reads[:, :n], reads[:, n:]
        # init_dep[f, r, j]: result r at element f depends on inputs[j] there
        self.init_dep = bool_powers(current, landed)
        # the updates still to come after each one, at its element
        order = np.flatnonzero(valid)
        tgt = self.target[order]
        srt = np.argsort(tgt, kind="stable")
        first = np.searchsorted(tgt[srt], tgt[srt], side="left")
        rank = np.empty(order.size, dtype=np.int64)
        rank[srt] = np.arange(order.size) - first
        later = np.zeros(self.target.size, dtype=np.int64)
        later[order] = landed[tgt] - 1 - rank
        after = bool_powers(current, later).astype(np.int64)
        # upd_dep[p, r, j]: result r at target[p] depends on updates[j][p]
        self.upd_dep = ((after @ update.astype(np.int64)) > 0) & valid[:, None, None]

    def _index_sources(self, b: int) -> list[tuple[int, ...]]:
        """The scatter_indices elements of index vector b (flat in the batch dims)."""
        bi = list(np.unravel_index(b, self.batch_shape)) if self.batch_shape else []
        rank = len(self.scatter_shape)
        size = self.scatter_shape[self.ivd] if self.ivd < rank else 1
        return [tuple(int(x) for x in pos)
                for pos in index_map.start_index_positions(bi, self.ivd, rank, size)]

    def update_positions(self, result: int, index: tuple[int, ...]) -> np.ndarray:
        """Flat update positions combined into result element ``index``, in order."""
        shape = self._result_shape(result)
        idx = check_index(shape, index, f"result #{result} index")
        k = int(np.ravel_multi_index(idx, shape)) if shape else 0
        return np.flatnonzero(self.target == k)

    def sources(self, result: int, index: tuple[int, ...]) -> list[Source]:
        ps = self.update_positions(result, index)
        idx = tuple(int(i) for i in index)
        shape = self.result_shapes[result]
        f = int(np.ravel_multi_index(idx, shape)) if shape else 0
        out = [Source(int(j), idx, "init") for j in np.flatnonzero(self.init_dep[f, result])]
        seen: set[int] = set()
        for p in ps:
            js = np.flatnonzero(self.upd_dep[p, result])
            if not js.size:
                continue  # overwritten later: it cannot change the element
            b = int(self.batch_flat[p])
            if b not in seen:
                seen.add(b)
                out += [Source(self.n, s, "index_read") for s in self._index_sources(b)]
            uidx = tuple(int(x) for x in np.unravel_index(int(p), self.updates_shape))
            out += [Source(self.n + 1 + int(j), uidx, "update") for j in js]
        return out

    def _result_index(self, flat: int) -> tuple[int, ...]:
        return tuple(int(x) for x in np.unravel_index(flat, self.result_shapes[0]))

    def targets(self, operand: int, index: tuple[int, ...]) -> list[Target]:
        shape = self._operand_shape(operand)
        idx = check_index(shape, index, f"operand #{operand} index")
        n = self.n
        if operand < n:
            k = int(np.ravel_multi_index(idx, shape)) if shape else 0
            return [Target(int(r), idx, "init") for r in np.flatnonzero(self.init_dep[k, :, operand])]
        if operand == n:
            b_idx = idx if self.ivd >= len(shape) else idx[:self.ivd] + idx[self.ivd + 1:]
            b = int(np.ravel_multi_index(b_idx, self.batch_shape)) if self.batch_shape else 0
            out = []
            for r in range(n):
                hit = (self.batch_flat == b) & self.upd_dep[:, r, :].any(axis=1)
                ts = self.target[hit]
                _, first = np.unique(ts, return_index=True)
                out += [Target(r, self._result_index(int(f)), "index_read") for f in ts[np.sort(first)]]
            return out
        j = operand - n - 1
        p = int(np.ravel_multi_index(idx, shape)) if shape else 0
        f = int(self.target[p])
        return [Target(int(r), self._result_index(f), "update")
                for r in np.flatnonzero(self.upd_dep[p, :, j])]

    def back(self, result: int, mask: np.ndarray) -> dict[tuple[int | None, str], np.ndarray]:
        m = _mask(self._result_shape(result), mask, f"back(result #{result})").reshape(-1)
        n = self.n
        out: dict[tuple[int | None, str], np.ndarray] = {}
        for j in range(n):
            _put(out, (j, "init"), (m & self.init_dep[:, result, j]).reshape(self.result_shapes[j]))
        valid = self.target >= 0
        hit = np.zeros(self.target.shape, dtype=bool)
        hit[valid] = m[self.target[valid]]
        dep = self.upd_dep[:, result, :] & hit[:, None]
        for j in range(n):
            _put(out, (n + 1 + j, "update"), dep[:, j].reshape(self.updates_shape))
        _put(out, (n, "index_read"), self._batch_to_indices(self.batch_flat[dep.any(axis=1)]))
        return out

    def _batch_to_indices(self, batches: np.ndarray) -> np.ndarray:
        """Mask over scatter_indices: every element of the index vectors ``batches``."""
        bm = np.zeros(int(np.prod(self.batch_shape, dtype=np.int64)), dtype=bool)
        bm[batches] = True
        bm = bm.reshape(self.batch_shape)
        if self.ivd < len(self.scatter_shape):
            bm = np.expand_dims(bm, self.ivd)
        return contiguous(np.broadcast_to(bm, self.scatter_shape))

    def fwd(self, operand: int, mask: np.ndarray) -> dict[tuple[int, str], np.ndarray]:
        shape = self._operand_shape(operand)
        m = _mask(shape, mask, f"fwd(operand #{operand})")
        n = self.n
        out: dict[tuple[int, str], np.ndarray] = {}
        rshape = self.result_shapes[0]
        if operand < n:
            for r in range(n):
                _put(out, (r, "init"), (m.reshape(-1) & self.init_dep[:, r, operand]).reshape(rshape))
            return out
        if operand == n:
            bm = m if self.ivd >= m.ndim else m.any(axis=self.ivd)
            hit = bm.reshape(-1)[self.batch_flat] if bm.size else np.zeros(0, dtype=bool)
            hit = hit & (self.target >= 0)
            for r in range(n):
                _put(out, (r, "index_read"), self._landing(hit & self.upd_dep[:, r, :].any(axis=1)))
            return out
        hit = m.reshape(-1) & (self.target >= 0)
        for r in range(n):
            _put(out, (r, "update"), self._landing(hit & self.upd_dep[:, r, operand - n - 1]))
        return out

    def _landing(self, hit: np.ndarray) -> np.ndarray:
        res = np.zeros(int(np.prod(self.result_shapes[0], dtype=np.int64)), dtype=bool)
        res[self.target[hit]] = True
        return res.reshape(self.result_shapes[0])

    def animation_steps(self, call: OpCall, inputs: list[Any], outputs: list[Any],
                        elements: Sequence[tuple[int, tuple[int, ...]]] | None = None,
                        limit: int | None = None) -> list[AnimationStep]:
        """The update elements in application order (row-major over updates[0]; restricted
        to those landing on ``elements`` when given): per step the update element, the
        scatter_indices elements read to place it, the result element and its running
        value after the combination. An update whose result_index is out of bounds is a
        step of kind ``dropped`` (no result cell, its out-of-bounds result_index named)."""
        n = self.n
        ins, scatter_indices, updates = _split(call, inputs)
        es = _elements(call)
        kinds = body_kinds(call)
        order = np.arange(self.target.size)
        if elements is not None:  # a dropped update lands on no element
            shape = self.result_shapes[0]
            flats = [int(np.ravel_multi_index(tuple(i), shape)) if shape else 0 for _, i in elements]
            order = order[np.isin(self.target, flats)]
        total = int(order.size)
        order = order[:limit] if limit is not None else order
        state = [np.array(x.astype(e.dtype, copy=False)).reshape(-1) for x, e in zip(ins, es, strict=True)]
        start = {r: s.reshape(self.result_shapes[r]).copy() for r, s in enumerate(state)}
        names = [v.name for v in call.op.operands]
        rnames = [v.name for v in call.op.results]
        si64 = scatter_indices_as_int64(scatter_indices) if (self.target[order] < 0).any() else None
        steps: list[AnimationStep] = []
        for k, p in enumerate(order):  # one step per frame: the loop is capped by ``limit``
            f, b = int(self.target[p]), int(self.batch_flat[p])
            ui = tuple(int(x) for x in np.unravel_index(int(p), self.updates_shape))
            vals = [u[ui] for u in updates]
            sources = [Source(n, s, "index_read") for s in self._index_sources(b)]
            sources += [Source(n + 1 + j, ui, "update") for j in range(n)]
            if f < 0:  # out of bounds: the spec drops the update element
                pieces = scatter_index_pieces(index_map.one_index(ui), si64, ins[0].shape, call.attrs)
                caption = Msg("scatter.anim.dropped", n=k + 1, total=total, updates=names[n + 1],
                              update_index=_list(ui), value=vals[0], result=rnames[0],
                              result_index=_list(_ints(pieces.result_index)), shape=list(ins[0].shape))
                steps.append(AnimationStep(caption, sources, [], [], start if k == 0 else None,
                                           kind="dropped"))
                continue
            ri = self._result_index(f)
            before = [s[f] for s in state]
            run = _running_values(call, kinds, es, before, [vals])
            after = run[0] if run is not None else vals
            for s, v in zip(state, after, strict=True):
                s[f] = v
            body = kinds[0] if kinds is not None else "update_computation"
            caption = Msg("scatter.anim.update", n=k + 1, total=total, updates=names[n + 1],
                          update_index=_list(ui), value=vals[0], result=rnames[0], result_index=_list(ri),
                          body=body, before=before[0], after=after[0])
            steps.append(AnimationStep(caption, sources, [(r, ri) for r in range(n)],
                                       [(r, ri, after[r]) for r in range(n)],
                                       start if k == 0 else None))
        return steps


def _mask(shape: tuple[int, ...] | None, mask: np.ndarray, what: str) -> np.ndarray:
    m = np.asarray(mask)
    if shape is None or m.dtype != np.bool_ or m.shape != shape:
        raise ExecutionError(f"{what}: expected a boolean mask of shape {shape}, got {m.dtype} "
                             f"of shape {m.shape}")
    return m


def _put(out: dict[Any, np.ndarray], key: Any, mask: np.ndarray) -> None:
    if mask.any():
        out[key] = out[key] | mask if key in out else mask


def scatter_provenance(ctx: OpCall, inputs: list[Any], outputs: list[Any]) -> ScatterProvenance:
    ins, scatter_indices, updates = _split(ctx, inputs)
    d = ctx.attrs
    target = scatter_targets(scatter_indices, ins[0].shape, updates[0].shape, d)
    bshape, bflat = _batch_positions(scatter_indices.shape, updates[0].shape, d)
    prov = ScatterProvenance([value_shape(v) for v in outputs], [value_shape(v) for v in inputs],
                             target, bshape, bflat, d.index_vector_dim, region_reads(ctx.op.regions[0]))
    # for front ends: what each input is to a reader (the results start as copies of them)
    prov.operand_notes = {k: Msg("scatter.label.input") for k in range(len(ins))}
    return prov


# --- explain ---------------------------------------------------------------------------

def _ints(xs: Sequence[Any]) -> tuple[int, ...]:
    return tuple(int(x) for x in xs)


def _list(xs: Sequence[Any]) -> str:
    """``0, 1, 2``: an index written inside brackets."""
    return ", ".join(str(int(x)) for x in xs)


def _tuple_msg(parts: Sequence[str]) -> Msg:
    """A tuple written part by part (``(0, (0, 1)[1], 0)``)."""
    return Msg("scatter.tuple", parts=", ".join(parts) + ("," if len(parts) == 1 else ""))


def _window_roles(d: ScatterAttrs, rank_in: int) -> dict[int, DimRole]:
    """What each input dim of full_window_index is: an update window dim (its place in
    update_window_dims), an inserted window dim or an input batching dim (both 0)."""
    roles: dict[int, DimRole] = {}
    k = 0
    for x in range(rank_in):
        if x in d.inserted_window_dims:
            roles[x] = DimRole("inserted_window")
        elif x in d.input_batching_dims:
            roles[x] = DimRole("input_batching")
        else:
            roles[x] = DimRole("update_window", k=k)
            k += 1
    return roles


def _index_steps(ctx: OpCall, pieces: ScatterPieces, d: ScatterAttrs, rank_in: int,
                 update_index: tuple[int, ...] | None = None) -> list[Step]:
    """The spec's named pieces of one update element, from update_scatter_index to
    result_index, each with its formula, the formula with this element's numbers, and
    its value (``update_index`` is taken from the pieces when not given)."""
    si_name = ctx.op.operands[_n(ctx)].name if ctx.op.operands else "scatter_indices"
    ivd = d.index_vector_dim
    usd = pieces.update_scatter_dims
    usi = _ints(pieces.update_scatter_index)
    uwi = _ints(pieces.update_window_index)
    if update_index is None:  # rebuilt from its two halves
        ui = [0] * (len(usd) + len(d.update_window_dims))
        for k, v in zip(usd, usi, strict=True):
            ui[k] = v
        for k, v in zip(d.update_window_dims, uwi, strict=True):
            ui[k] = v
        update_index = tuple(ui)
    start = _ints(pieces.start_index)
    # start_index: each component with the scatter_indices position it is read from
    children = [Step(f"start_index[{k}]", Msg("explain.element", name=si_name, index=_list(pos)), v)
                for k, (pos, v) in enumerate(zip(pieces.start_positions, start, strict=True))]
    si_type = ctx.operand_types[_n(ctx)]
    if ivd < getattr(si_type, "rank", len(usi)):  # a vector along index_vector_dim
        at = [str(i) for i in usi]
        at.insert(ivd, ":")
        start_step = Step("start_index", Msg("scatter.start_index.formula", index_vector_dim=ivd), start,
                          substituted=Msg("explain.element", name=si_name, index=", ".join(at)),
                          children=children)
    else:
        start_step = Step("start_index", Msg("scatter.start_index.formula_scalar", index_vector_dim=ivd),
                          start, substituted=Msg("scatter.start_index.substituted_scalar", name=si_name,
                                                 update_scatter_index=_list(usi)),
                          children=children)
    fs = ["0"] * rank_in
    for d_start, d_input in enumerate(d.scatter_dims_to_operand_dims):
        fs[d_input] = f"{format_value(start)}[{d_start}]"
    fb = ["0"] * rank_in
    for d_input, d_start in zip(d.input_batching_dims, d.scatter_indices_batching_dims, strict=True):
        fb[d_input] = f"{format_value(usi)}[{d_start - (0 if d_start < ivd else 1)}]"
    fw = ["0"] * rank_in
    roles_w = _window_roles(d, rank_in)
    for x, role in roles_w.items():
        if role.kind == "update_window":
            fw[x] = f"{format_value(uwi)}[{dict(role.args)['k']}]"
    full_start = _ints(pieces.full_start_index)
    full_batching = _ints(pieces.full_batching_index)
    full_window = _ints(pieces.full_window_index)
    return [
        Step("update_scatter_index", Msg("scatter.update_scatter_index.formula",
                                         update_scatter_dims=list(usd)),
             usi, substituted=Msg("scatter.pick", index=update_index, dims=_list(usd))),
        Step("update_window_index", Msg("scatter.update_window_index.formula",
                                        update_window_dims=list(d.update_window_dims)),
             uwi, substituted=Msg("scatter.pick", index=update_index, dims=_list(d.update_window_dims))),
        start_step,
        Step("full_start_index", Msg("scatter.full_start_index.formula",
                                     scatter_dims_to_operand_dims=list(d.scatter_dims_to_operand_dims)),
             full_start, substituted=_tuple_msg(fs)),
        Step("full_batching_index", Msg("scatter.full_batching_index.formula",
                                        input_batching_dims=list(d.input_batching_dims),
                                        scatter_indices_batching_dims=list(d.scatter_indices_batching_dims)),
             full_batching, substituted=_tuple_msg(fb)),
        Step("full_window_index", Msg("scatter.full_window_index.formula",
                                      inserted_window_dims=list(d.inserted_window_dims),
                                      input_batching_dims=list(d.input_batching_dims)),
             full_window, dim_roles=roles_w, substituted=_tuple_msg(fw)),
        Step("result_index", Msg("scatter.result_index.formula"), _ints(pieces.result_index),
             substituted=Msg("scatter.result_index.substituted", start=full_start, batching=full_batching,
                             window=full_window)),
    ]


def _running_values(ctx: OpCall, kinds: list[str] | None, es: list[Any], init: list[Any],
                    ups: list[list[Any]]) -> list[list[Any]] | None:
    """The values of results...[result_index] after each update in ``ups`` (or None when
    the region cannot be run here)."""
    cur = [np.array([x], dtype=e.dtype) for x, e in zip(init, es, strict=True)]
    out = []
    zero = np.zeros(1, dtype=np.int64)
    for u in ups:
        vals = [np.array([x], dtype=e.dtype) for x, e in zip(u, es, strict=True)]
        ok = kinds is not None and all(
            combine_at(k, c, zero, v, e) for k, c, v, e in zip(kinds, [c.copy() for c in cur], vals, es,
                                                               strict=True))
        if ok:
            for k, c, v, e in zip(kinds, cur, vals, es, strict=True):
                combine_at(k, c, zero, v, e)
        else:
            try:
                res = ctx.run_region(0, [c.reshape(()) for c in cur] + [v.reshape(()) for v in vals])
            except NotImplementedError:
                return None
            cur = [np.asarray(r, dtype=e.dtype).reshape(1) for r, e in zip(res, es, strict=True)]
        out.append([c[0] for c in cur])
    return out


def _args(values: Sequence[Any]) -> str:
    """``35, 1``: numbers as a call's arguments."""
    return ", ".join(format_value(v) for v in values)


def scatter_explain(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
                    index: tuple) -> Explanation:
    """results[result][index]: the input element, then every update element landing on it
    in schedule order, each with the spec's index pieces and the running value."""
    ins, scatter_indices, updates = _split(ctx, inputs)
    if not 0 <= result < len(outputs):
        raise ExecutionError(f"result #{result} does not exist (the op has {len(outputs)} results)")
    idx = check_index(value_shape(outputs[result]), index, f"result #{result} index")
    d = ctx.attrs
    n = _n(ctx)
    es = _elements(ctx)
    kinds = body_kinds(ctx)
    prov = scatter_provenance(ctx, inputs, outputs)
    ps = prov.update_positions(result, idx)
    names = [v.name for v in ctx.op.operands] if ctx.op.operands else []
    in_name = names[result] if names else f"inputs[{result}]"
    up_name = names[n + 1 + result] if names else f"updates[{result}]"
    init = [x[idx] for x in ins]
    steps = [Step(Msg("scatter.init.name", k=result), Msg("explain.element", name=f"inputs[{result}]",
                                                         index="result_index"),
                  init[result], substituted=Msg("explain.element", name=in_name, index=_list(idx)))]
    shown = ps[:EXPLAIN_MAX_UPDATES]
    uidxs = [tuple(int(x) for x in np.unravel_index(int(p), updates[0].shape)) for p in shown]
    ups = [[u[ui] for u in updates] for ui in uidxs]
    running = _running_values(ctx, kinds, es, init, ups)
    si64 = scatter_indices_as_int64(scatter_indices)
    count = int(ps.size)
    children = []
    for j, (ui, u) in enumerate(zip(uidxs, ups, strict=True)):
        pieces = scatter_index_pieces(index_map.one_index(ui), si64, ins[0].shape, d)
        *derivation, where = _index_steps(ctx, pieces, d, len(ins[0].shape), ui)
        where.children = derivation  # result_index first: the pieces it is the sum of below it
        sub = [where]
        sub.append(Step(f"updates[{result}][update_index]", None, u[result],
                        substituted=Msg("explain.element", name=up_name, index=_list(ui))))
        if running is not None:  # results...[result_index] = update_computation(before, update)
            before = init if j == 0 else running[j - 1]
            if kinds is not None:  # recognized per result: result k reads only its own pair
                formula = Msg("scatter.running.formula", k=result)
                applied = Msg("explain.apply", op=kinds[result], args=_args([before[result], u[result]]))
            else:
                formula = (Msg("scatter.running.formula", k=result) if n == 1
                           else Msg("scatter.running.formula_all", k=result))
                applied = Msg("explain.apply", op="update_computation", args=_args([*before, *u]))
            sub.append(Step(f"results[{result}][result_index]", formula, running[j][result],
                            substituted=applied))
        children.append(Step("update_index", Msg("scatter.update_index.formula", n=j + 1, count=count), ui,
                             children=sub))
    value = outputs[result][idx]
    name = (Msg("scatter.landing.name", count=count) if count <= EXPLAIN_MAX_UPDATES
            else Msg("scatter.landing.name_first", shown=len(uidxs), count=count))
    steps.append(Step(name, Msg("scatter.landing.formula"), uidxs, children=children,
                      substituted=Msg("scatter.landing.substituted", result_index=idx)))
    steps.append(Step(f"results[{result}][result_index]", Msg("scatter.result.formula"), value))
    notes = []
    if not count:  # first: front ends show it as the headline
        notes.append(Msg("scatter.note.untouched", result_index=_list(idx), name=ctx.op.operands[result].name,
                         value=value))
    if kinds is not None:
        notes.append(Msg("scatter.note.recognized", kinds=", ".join(kinds)))
    if count > EXPLAIN_MAX_UPDATES:
        notes.append(Msg("scatter.note.more", count=count - EXPLAIN_MAX_UPDATES))
    dropped = int(np.count_nonzero(prov.target < 0))
    if dropped:
        first = int(np.flatnonzero(prov.target < 0)[0])
        ui = tuple(int(x) for x in np.unravel_index(first, updates[0].shape))
        pieces = scatter_index_pieces(index_map.one_index(ui), si64, ins[0].shape, d)
        notes.append(Msg("scatter.note.dropped", count=dropped, shape=list(ins[0].shape), update_index=ui,
                         result_index=_ints(pieces.result_index)))
    float_like = isinstance(es[result], ElementType) and (es[result].is_float or es[result].is_complex)
    if count > 1 and float_like and (kinds is None or kinds[result] in ("add", "multiply")):
        notes.append(Msg("scatter.note.order"))
    if running is None and count:
        notes.append(Msg("scatter.note.interpreter"))
    return Explanation(ctx.op.name, idx, steps, value, notes, result)


# --- parameter schema (hlolab.ops.examples) ------------------------------------------------

def _scatter_schema() -> None:
    from hlolab.ops.examples import (
        BODIES,
        Operand,
        OpParts,
        OpSchema,
        bool_param,
        combiner_region,
        dtype_param,
        enum_param,
        int_param,
        ints_param,
        register_schema,
        shape_param,
        ttype,
        valid_starts,
    )

    def window_sizes(p: dict[str, Any]) -> list[int]:
        """Per input dim: the update window size (1 for inserted and batching dims)."""
        sizes = iter(p["updates"][d] for d in p["update_window_dims"] if d < len(p["updates"]))
        dropped = set(p["inserted_window_dims"]) | set(p["input_batching_dims"])
        return [1 if d in dropped else next(sizes, 1) for d in range(len(p["input"]))]

    def build(p: dict[str, Any]) -> OpParts:
        rec = ScatterAttrs(**{k: p[k] for k in (
            "update_window_dims", "inserted_window_dims", "input_batching_dims",
            "scatter_indices_batching_dims", "scatter_dims_to_operand_dims", "index_vector_dim",
            "indices_are_sorted", "unique_indices")})
        starts = valid_starts(p["scatter_indices"], p["index_vector_dim"], p["scatter_dims_to_operand_dims"],
                              p["input"], window_sizes(p))
        input_type = ttype(p["input"], p["dtype"])
        # the body's element type is the input's, so the result type is the input's too
        # (infer leaves Ei open: a wider body would widen it)
        return OpParts([Operand("input", input_type),
                        Operand("scatter_indices", ttype(p["scatter_indices"], p["index_dtype"]), starts),
                        Operand("updates", ttype(p["updates"], p["dtype"]))],
                       [input_type], rec, [combiner_region(p["body"], p["dtype"])])

    params = (
        shape_param("input", (3, 4), "the tensor updated"),
        shape_param("scatter_indices", (2, 1), "start indices; each index vector places one window"),
        shape_param("updates", (2, 4), "the update values"),
        ints_param("update_window_dims", (1,), "dims of updates that index into an update window"),
        ints_param("inserted_window_dims", (0,), "input dims where the window has size 1 (not in updates)"),
        ints_param("input_batching_dims", (), "input dims that are batch dims"),
        ints_param("scatter_indices_batching_dims", (), "scatter_indices dims that are batch dims"),
        ints_param("scatter_dims_to_operand_dims", (0,), "input dim each index vector component starts"),
        int_param("index_vector_dim", 1, "the dim of scatter_indices holding the index vectors"),
        bool_param("indices_are_sorted", False, "the indices are sorted (a promise, unchecked)"),
        bool_param("unique_indices", False, "no two updates hit one element (a promise, unchecked)"),
        enum_param("body", (*BODIES, "replace"), "add", "update_computation: combines current and update"),
        dtype_param("f32", "element type of input, updates and result"),
        dtype_param("i64", "element type of scatter_indices", "index_dtype"),
    )
    ones = [[[[1, 1]] * 3] * 2] * 2
    spec = {
        "input": (2, 3, 4, 2), "scatter_indices": (2, 2, 3, 2), "updates": (2, 2, 3, 2, 2),
        "update_window_dims": (3, 4), "inserted_window_dims": (1,), "input_batching_dims": (0,),
        "scatter_indices_batching_dims": (1,), "scatter_dims_to_operand_dims": (2, 1), "index_vector_dim": 3,
        "body": "add", "dtype": "i64", "index_dtype": "i64",
        "inputs": {"input": np.arange(1, 49).reshape(2, 3, 4, 2),
                   "scatter_indices": [[[[0, 0], [1, 0], [2, 1]], [[0, 1], [1, 1], [0, 9]]],
                                       [[[0, 0], [2, 1], [2, 2]], [[1, 2], [0, 1], [1, 0]]]],
                   "updates": np.broadcast_to(np.asarray(ones)[..., None], (2, 2, 3, 2, 2))},
        "index": (1, 1, 1, 0),  # two updates add here
    }
    register_schema(OpSchema("stablehlo.scatter", params, {"default": {}, "spec-example": spec}, build,
                             doc="scatter updates into input at scatter_indices, combined by the body"))


_scatter_schema()
