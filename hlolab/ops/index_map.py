"""The index arithmetic gather and scatter share.

gather (``operand_index`` of a ``result_index``) and scatter (``result_index`` of an
``update_index``) build one index from the same spec pieces; the names below are
gather's, with scatter's in brackets:

* ``batch_index = result_index[batch_dims...]`` (``update_scatter_index``) and
  ``offset_index = result_index[offset_dims...]`` (``update_window_index``):
  ``index_at``,
* ``start_index = start_indices[bi0, ..., :, ..., biN]`` (``scatter_indices``):
  ``start_index_positions`` and ``start_index_on_grid``,
* ``full_start_index``, ``full_batching_index``, ``full_offset_index``
  (``full_window_index``) and their sum ``operand_index`` (``result_index``).

What differs stays in the ops: gather clamps ``full_start_index``, scatter drops
update elements whose ``result_index`` is out of bounds.

Every function works on index arrays that broadcast together (a sparse
``np.indices`` grid from ``index_grid``, or 0-d arrays from ``one_index``), so
the same code serves evaluation and provenance (the whole grid) and explain
(one index). Dims not named take the shared 0-d ``int64`` zero.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

Index = tuple[np.ndarray, ...]  # per-dimension index arrays (broadcastable), or 0-d arrays


def index_grid(shape: Sequence[int]) -> Index:
    """Every index of ``shape``, as a sparse (broadcasting) int64 grid."""
    return tuple(np.indices(tuple(shape), sparse=True, dtype=np.int64))


def one_index(index: Sequence[int]) -> Index:
    """One index as 0-d int64 arrays (the form ``index_grid`` gives, for one element)."""
    return tuple(np.asarray(i, dtype=np.int64) for i in index)


def indices_as_int64(indices: np.ndarray, cap: int) -> np.ndarray:
    """The index tensor as int64, ui64 values above ``cap`` lowered to ``cap`` first
    (every other integer type converts exactly). No copy when already int64."""
    a = np.asarray(indices)
    if a.dtype == np.uint64:
        a = np.minimum(a, np.uint64(cap))
    return a.astype(np.int64, copy=False)


def index_at(index: Index, dims: Sequence[int]) -> list[np.ndarray]:
    """``index[dims...]``: e.g. ``batch_index = result_index[batch_dims...]``,
    ``update_window_index = update_index[update_window_dims...]``."""
    return [np.asarray(index[d], dtype=np.int64) for d in dims]


def batch_position(d_start: int, index_vector_dim: int) -> int:
    """``d_start - (d_start < index_vector_dim ? 0 : 1)``: where dim ``d_start`` of the
    index tensor stands among its batch dims (all dims but index_vector_dim)."""
    return d_start - (0 if d_start < index_vector_dim else 1)


def start_index_positions(batch_index: Sequence[np.ndarray], index_vector_dim: int, indices_rank: int,
                          size: int) -> list[tuple[np.ndarray, ...]]:
    """Where each component of ``start_index`` is read in the index tensor: ``[bi0, ...,
    k, ..., biN]`` for k in [0, size) (k at ``index_vector_dim``) if ``index_vector_dim <
    indices_rank``, else the one position ``batch_index``."""
    if index_vector_dim >= indices_rank:
        return [tuple(batch_index)]
    positions = []
    for k in range(size):
        pos = list(batch_index)
        pos.insert(index_vector_dim, np.asarray(k, dtype=np.int64))
        positions.append(tuple(pos))
    return positions


def index_vectors(indices: np.ndarray, index_vector_dim: int) -> np.ndarray:
    """The index tensor with its index vectors along the last axis (a view): shape
    ``batch_shape + (size,)``, size 1 when ``index_vector_dim = rank(indices)``."""
    if index_vector_dim < indices.ndim:
        return np.moveaxis(indices, index_vector_dim, -1)
    return indices[..., None]


def start_index_on_grid(indices: np.ndarray, index_vector_dim: int, batch_dims: Sequence[int],
                        rank: int) -> list[np.ndarray]:
    """``start_index`` for every index of a whole grid of rank ``rank`` whose
    ``batch_dims`` (ascending, as ``batch_dims`` and ``update_scatter_dims`` are) run
    over the index tensor's batch dims in order: the values at
    ``start_index_positions`` of that grid, read as copy-free views (a reshape, no
    fancy-index gather over the grid)."""
    vectors = index_vectors(indices, index_vector_dim)
    shape = [1] * rank
    for j, d in enumerate(batch_dims):
        shape[d] = vectors.shape[j]
    return [vectors[..., k].reshape(shape) for k in range(vectors.shape[-1])]


def _placed(values: Sequence[np.ndarray], dims: Sequence[int], rank: int) -> list[np.ndarray]:
    """A rank-``rank`` index with ``values[k]`` at dim ``dims[k]`` and 0 elsewhere."""
    zero = np.zeros((), dtype=np.int64)
    out = [zero] * rank
    for d, v in zip(dims, values, strict=True):
        out[d] = v
    return out


def full_start_index(start_index: Sequence[np.ndarray], start_index_map: Sequence[int],
                     rank: int) -> list[np.ndarray]:
    """``full_start_index[d_operand] = start_index[d_start]`` if ``d_operand =
    start_index_map[d_start]`` (scatter: ``scatter_dims_to_operand_dims``), else 0.
    Unclamped: gather clamps it itself."""
    return _placed(start_index, start_index_map, rank)


def full_batching_index(batch_index: Sequence[np.ndarray], operand_batching_dims: Sequence[int],
                        start_indices_batching_dims: Sequence[int], index_vector_dim: int,
                        rank: int) -> list[np.ndarray]:
    """``full_batching_index[d_operand] = batch_index[d_start - (d_start <
    index_vector_dim ? 0 : 1)]`` if ``d_operand = operand_batching_dims[i_batching]`` and
    ``d_start = start_indices_batching_dims[i_batching]``, else 0 (scatter:
    ``update_scatter_index``, ``input_batching_dims``, ``scatter_indices_batching_dims``)."""
    values = [batch_index[batch_position(d_start, index_vector_dim)]
              for d_start in start_indices_batching_dims]
    return _placed(values, operand_batching_dims, rank)


def full_offset_index(offset_index: Sequence[np.ndarray], collapsed_slice_dims: Sequence[int],
                      operand_batching_dims: Sequence[int], rank: int) -> list[np.ndarray]:
    """``full_offset_index = [oi0, ..., 0, ..., oiN]``: ``offset_index`` with 0 inserted at
    ``collapsed_slice_dims`` and ``operand_batching_dims`` (scatter's ``full_window_index``:
    ``update_window_index``, ``inserted_window_dims``, ``input_batching_dims``)."""
    dropped = set(collapsed_slice_dims) | set(operand_batching_dims)
    return _placed(offset_index, [d for d in range(rank) if d not in dropped], rank)


def operand_index(full_start: Sequence[np.ndarray], full_batching: Sequence[np.ndarray],
                  full_offset: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``operand_index = full_start_index + full_batching_index + full_offset_index``
    (scatter: ``result_index = full_start_index + full_batching_index + full_window_index``)."""
    return [s + b + o for s, b, o in zip(full_start, full_batching, full_offset, strict=True)]
