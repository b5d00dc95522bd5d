"""Compact index sets: a boolean mask as a few disjoint axis-aligned boxes.

Program tracing yields masks such as "these 10^5 elements of %arg0"; text output
prints them as boxes (``%arg0[0:784, 3]``) so a reader sees the structure. A box
is a tuple of half-open ``(start, stop)`` pairs, one per dim; the scalar box is ``()``.

Decomposition (see ``mask_to_boxes``) is vectorized per axis and recursive over
axes, then a merge pass joins boxes that touch along any dim (the axis-0 split
alone would cut a column band wherever the rows beside it change). Greedy, so
small but not always minimal.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

Box = tuple[tuple[int, int], ...]

__all__ = ["Box", "mask_to_boxes", "format_box", "format_mask", "boxes_to_mask"]


def _runs_1d(row: np.ndarray) -> np.ndarray:
    """Maximal runs of True in a 1-D mask as an (n, 1, 2) array of [start, stop)."""
    edges = np.diff(row.astype(np.int8), prepend=np.int8(0), append=np.int8(0))
    starts = np.flatnonzero(edges == 1)
    stops = np.flatnonzero(edges == -1)
    return np.stack([starts, stops], axis=-1).reshape(-1, 1, 2)


def _split(mask: np.ndarray) -> np.ndarray:
    """Boxes of ``mask`` (rank >= 1, non-empty) as an (n, rank, 2) int array, axis 0 split first.

    Axis 0 is cut into maximal runs of identical sub-masks (one vectorized
    neighbour comparison); each non-empty run contributes the boxes of its
    first sub-mask, prefixed with the run's range. The Python loop is over
    runs, never over elements.
    """
    if mask.ndim == 1:
        return _runs_1d(mask)
    rest = tuple(range(1, mask.ndim))
    differs = ~np.all(mask[1:] == mask[:-1], axis=rest)
    starts = np.concatenate([[0], np.flatnonzero(differs) + 1])
    stops = np.append(starts[1:], mask.shape[0])
    nonempty = np.any(mask, axis=rest)[starts]
    parts = []
    for a, b in zip(starts[nonempty].tolist(), stops[nonempty].tolist()):
        sub = _split(mask[a])
        head = np.broadcast_to(np.array([[a, b]]), (len(sub), 1, 2))
        parts.append(np.concatenate([head, sub], axis=1))
    if not parts:
        return np.zeros((0, mask.ndim, 2), dtype=np.int64)
    return np.concatenate(parts, axis=0)


def _merge_along(boxes: np.ndarray, d: int) -> np.ndarray:
    """Join boxes whose other dims agree and that touch along dim ``d`` (chains included)."""
    n, rank, _ = boxes.shape
    if n < 2:
        return boxes
    others = np.delete(boxes, d, axis=1).reshape(n, -1)
    # lexsort: last key is primary -> group by the other dims, then order by start along d.
    order = np.lexsort((boxes[:, d, 0],) + tuple(others[:, k] for k in range(others.shape[1] - 1, -1, -1)))
    b = boxes[order]
    o = others[order]
    joins = np.all(o[1:] == o[:-1], axis=1) & (b[:-1, d, 1] == b[1:, d, 0])
    if not joins.any():
        return boxes
    first = np.flatnonzero(np.concatenate([[True], ~joins]))
    last = np.append(first[1:], n) - 1
    out = b[first].copy()
    out[:, d, 1] = b[last, d, 1]
    return out


def _merge(boxes: np.ndarray) -> np.ndarray:
    """Merge touching boxes along every dim until nothing changes (the count only falls)."""
    while True:
        n = len(boxes)
        for d in range(boxes.shape[1]):
            boxes = _merge_along(boxes, d)
        if len(boxes) == n:
            return boxes


def mask_to_boxes(mask: np.ndarray, limit: int | None = None) -> tuple[list[Box], int]:
    """Decompose a boolean mask into disjoint axis-aligned boxes.

    Returns ``(boxes, uncovered)``: boxes in row-major order of their origins,
    each a tuple of half-open ``(start, stop)`` per dim; ``uncovered`` is the
    number of True elements left out because only the first ``limit`` boxes
    were kept (0 without a limit). A True rank-0 mask is the one box ``()``.

    Guarantees: boxes are disjoint, their union is the mask, and there are never
    more boxes than True elements. A full block of any shape is one box; a mask
    with a rectangular hole gives 4 boxes; rows, columns and conv windows are one
    box each. Not optimal in general: a strided pattern (``mask[:, ::2]``, a
    dilated or strided conv window) gives one box per contiguous run, e.g. one
    box per column of ``mask[:, ::2]`` and one per element of ``mask[::2, ::2]``.
    """
    mask = np.asarray(mask, dtype=bool)
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be >= 0, got {limit}")
    if mask.ndim == 0:
        return ([()], 0) if bool(mask) and limit != 0 else ([], int(bool(mask)))
    if mask.size == 0:
        return [], 0
    arr = _merge(_split(mask))
    # Disjoint boxes have distinct origins, so sorting by origin is a total order.
    arr = arr[np.lexsort(tuple(arr[:, k, 0] for k in range(arr.shape[1] - 1, -1, -1)))]
    uncovered = 0
    if limit is not None and len(arr) > limit:
        kept = arr[:limit]
        uncovered = int(np.count_nonzero(mask)) - int(np.prod(kept[:, :, 1] - kept[:, :, 0], axis=1).sum())
        arr = kept
    # Column-wise zip builds the tuples ~5x faster than converting row by row.
    pairs = [zip(arr[:, k, 0].tolist(), arr[:, k, 1].tolist()) for k in range(arr.shape[1])]
    return list(zip(*pairs)), uncovered


def format_box(box: Box) -> str:
    """A box as index text: ``a`` for a single index, ``a:b`` for a range, joined by ", "."""
    return ", ".join(str(a) if b == a + 1 else f"{a}:{b}" for a, b in box)


def format_mask(name: str, mask: np.ndarray, limit: int = 8) -> list[str]:
    """Lines naming the True elements of ``mask`` as boxes of value ``name``.

    One line per box (``%arg0[0:784, 3]``); a full tensor is the single line
    ``%arg0[0:784, 0:10] (all)``; a True scalar is ``%arg0``. When more than
    ``limit`` boxes would be needed, a last line says ``… and N more elements``.
    An all-False mask gives the single line ``%arg0 (no elements)`` so callers
    can always print ``lines[0]``.
    """
    mask = np.asarray(mask, dtype=bool)
    if not mask.any():
        return [f"{name} (no elements)"]
    if mask.ndim == 0:
        return [name]
    if mask.all():
        return [f"{name}[{format_box(tuple((0, n) for n in mask.shape))}] (all)"]
    boxes, rest = mask_to_boxes(mask, limit)
    lines = [f"{name}[{format_box(b)}]" for b in boxes]
    if rest:
        lines.append(f"… and {rest} more element{'s' if rest != 1 else ''}")
    return lines


def boxes_to_mask(boxes: Iterable[Sequence[Sequence[int]]], shape: Sequence[int]) -> np.ndarray:
    """The boolean mask of ``shape`` that is True exactly inside the given boxes (inverse of
    ``mask_to_boxes``); accepts lists as well as tuples, e.g. boxes read back from JSON."""
    shape = tuple(int(n) for n in shape)
    out = np.zeros(shape, dtype=bool)
    for box in boxes:
        if len(box) != len(shape):
            raise ValueError(f"box {box!r} has rank {len(box)}, mask has rank {len(shape)}")
        out[tuple(slice(int(a), int(b)) for a, b in box)] = True
    return out
