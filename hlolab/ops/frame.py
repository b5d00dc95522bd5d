"""The padded / dilated frame an op reads its operand in, written once.

The spec's ``pad(operand, padding_value, edge_padding_low, edge_padding_high,
interior_padding)`` builds it for ``pad`` itself, for reduce_window's and
select_and_scatter's ``padded_inputs`` (``interior = base_dilations - 1``) and
for convolution's ``padded_lhs`` (``interior = lhs_dilation - 1``): operand
element ``operand_index`` sits at frame position ``edge_padding_low +
operand_index * (interior_padding + 1)``; every other position is edge padding
(before or after the dilated operand) or an interior hole (between two operand
elements). Negative edge padding crops.

``PaddedFrame`` holds that geometry: its ``shape``, ``materialize`` (the
padded array), ``classify`` (operand index and kind of frame positions, per
dim) and ``position_kind`` (one kind per position: padding in any dim wins
over a hole, the position lies outside the dilated operand). The front end's
``FrameMap`` (``hlolab.trace.provenance``) classifies with it too, which is why
this module is a leaf: it imports numpy, ``hlolab.errors`` and
``hlolab.limits`` only, nothing from ``hlolab.ops`` or ``hlolab.trace``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hlolab.errors import ExecutionError
from hlolab.limits import ELEMENT_BUDGET

# what one dimension of a frame position is (``PaddedFrame.classify``)
OPERAND, PADDING_LOW, PADDING_HIGH, HOLE = 0, 1, 2, 3
PAD_KINDS = ("operand", "padding_low", "padding_high", "hole")

# what a whole frame position is (``position_kind``); renderers draw these codes
AT_OPERAND, AT_PADDING, AT_HOLE = 0, 1, 2
POSITION_KINDS = ("operand", "padding", "hole")
_POSITION_OF_DIM = np.array([AT_OPERAND, AT_PADDING, AT_PADDING, AT_HOLE], dtype=np.int8)

# what a drawn cell is (renderers and the TUI): an element, edge padding low / high, an
# interior hole, or an operand element negative padding removed
CELL_VALUE, CELL_PADDING, CELL_HOLE, CELL_PADDING_HIGH, CELL_CROPPED = 0, 1, 2, 3, 4
CELL_KINDS = ("value", "padding_low", "hole", "padding_high", "cropped")

Positions = Sequence[Any]  # per dim, an int array (or int) of frame positions; they broadcast


def dilated_size(n: int, interior: int) -> int:
    """The operand's extent once dilated: ``n`` elements ``interior + 1`` apart (0 stays 0)."""
    return 0 if n == 0 else (n - 1) * (interior + 1) + 1


def padded_size(n: int, low: int, high: int, interior: int) -> int:
    """The spec's padded extent ``low + dilated + high``; negative when cropping removes
    more than there is (the frame then has size 0)."""
    return low + dilated_size(n, interior) + high


def _shifted(position: Any, low: int, step: int) -> tuple[np.ndarray, np.ndarray]:
    """(position - low, (position - low) // step) along one dim, as int64."""
    t = np.asarray(position, dtype=np.int64) - low
    return t, (t if step == 1 else t // step)


def operand_index(position: Positions, low: Sequence[int], step: Sequence[int]) -> tuple[np.ndarray, ...]:
    """Per dim ``(position - low) // step``: the operand index a frame position stands for
    (an operand element only where ``classify`` says OPERAND)."""
    return tuple(_shifted(p, lo, st)[1] for p, lo, st in zip(position, low, step, strict=True))


def frame_position(index: Sequence[int], low: Sequence[int], step: Sequence[int]) -> tuple[int, ...]:
    """The frame position ``low + index * step`` of operand element ``index``."""
    return tuple(lo + int(i) * st for i, lo, st in zip(index, low, step, strict=True))


def position_kind(kinds: Sequence[np.ndarray]) -> np.ndarray:
    """int8 ``AT_*`` codes (indexing POSITION_KINDS) from the per-dim kinds ``classify``
    gives: padding in any dim wins over a hole (the position lies outside the dilated
    operand), a hole in any other dim makes a hole, else an operand element."""
    shape = np.broadcast_shapes(*(np.shape(k) for k in kinds))
    padding = np.zeros(shape, dtype=bool)
    hole = np.zeros(shape, dtype=bool)
    for k in kinds:
        at = _POSITION_OF_DIM[k]
        padding |= at == AT_PADDING
        hole |= at == AT_HOLE
    return np.where(padding, AT_PADDING, np.where(hole, AT_HOLE, AT_OPERAND)).astype(np.int8)


def dim_position_kind(kind: Any) -> Any:
    """One dim's kind as a position kind (``AT_*``): low and high padding are both padding."""
    return _POSITION_OF_DIM[kind]


def is_operand(kinds: Sequence[np.ndarray]) -> np.ndarray:
    """Where a position is an operand element in every dim (bool, broadcast shape)."""
    out: np.ndarray = np.ones((), dtype=bool)
    for k in kinds:
        out = out & (k == OPERAND)
    return out


@dataclass(frozen=True)
class PaddedFrame:
    """``pad(operand, ·, low, high, interior)``'s geometry. ``interior`` is the number of
    holes between two operand elements (a dilation minus 1); ``low``/``high`` may be
    negative (cropping)."""

    operand_shape: tuple[int, ...]
    low: tuple[int, ...]
    high: tuple[int, ...]
    interior: tuple[int, ...]
    # derived once (ops build a frame per call): the distance of two neighbouring operand
    # elements (a dilation), the dilated operand's extent, the spec's ``low + dilated + high``
    # (negative when cropping removes more than there is) and the frame's shape (that, at least 0)
    step: tuple[int, ...] = field(init=False, repr=False, compare=False)
    dilated_shape: tuple[int, ...] = field(init=False, repr=False, compare=False)
    padded_shape: tuple[int, ...] = field(init=False, repr=False, compare=False)
    shape: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        put = object.__setattr__  # frozen: fields are set once, here
        shape, low = tuple(map(int, self.operand_shape)), tuple(map(int, self.low))
        high, interior = tuple(map(int, self.high)), tuple(map(int, self.interior))
        if not len(shape) == len(low) == len(high) == len(interior):
            raise ValueError(f"frame of rank {len(shape)} with low {low}, high {high}, "
                             f"interior {interior}")
        if any(i < 0 for i in interior):
            raise ValueError(f"interior padding {interior} must be >= 0")
        dilated = tuple(dilated_size(n, i) for n, i in zip(shape, interior))
        padded = tuple(padded_size(n, lo, hi, i) for n, lo, hi, i in zip(shape, low, high, interior))
        for name, value in (("operand_shape", shape), ("low", low), ("high", high),
                            ("interior", interior), ("step", tuple(i + 1 for i in interior)),
                            ("dilated_shape", dilated), ("padded_shape", padded),
                            ("shape", tuple(max(0, p) for p in padded))):
            put(self, name, value)

    @classmethod
    def fitting(cls, operand_shape: Sequence[int], low: Sequence[int], step: Sequence[int],
                shape: Sequence[int]) -> PaddedFrame:
        """The frame of ``shape`` with operand elements ``step`` apart from ``low`` on: the
        high padding is whatever the frame holds past the dilated operand."""
        interior = tuple(int(s) - 1 for s in step)
        high = tuple(int(f) - int(lo) - dilated_size(int(n), i)
                     for f, lo, n, i in zip(shape, low, operand_shape, interior, strict=True))
        return cls(tuple(operand_shape), tuple(low), high, interior)

    @property
    def rank(self) -> int:
        return len(self.operand_shape)

    def along(self, axes: Sequence[int], shape: Sequence[int]) -> PaddedFrame:
        """This frame (over ``len(axes)`` dims) on ``axes`` of a tensor of ``shape``; the
        other dims are neither padded nor dilated (a convolution's batch and features)."""
        low, high, interior = [0] * len(shape), [0] * len(shape), [0] * len(shape)
        for j, x in enumerate(axes):
            low[x], high[x], interior[x] = self.low[j], self.high[j], self.interior[j]
        return PaddedFrame(tuple(shape), tuple(low), tuple(high), tuple(interior))

    def classify_dim(self, d: int, position: Any) -> tuple[np.ndarray, np.ndarray]:
        """(operand index, kind) of frame positions along dim ``d``: low padding before the
        dilated operand, high padding after it, a hole between two of its elements."""
        t, q = _shifted(position, self.low[d], self.step[d])
        kind = np.where(t < 0, PADDING_LOW,
                        np.where(t >= self.dilated_shape[d], PADDING_HIGH,
                                 np.where(q * self.step[d] != t, HOLE, OPERAND))).astype(np.int8)
        return q, kind

    def classify(self, position: Positions) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
        """(operand index per dim, kind per dim, ``PAD_KINDS`` codes) of frame positions
        given per dim; the operand index is meaningful where every dim is OPERAND."""
        if len(position) != self.rank:
            raise ValueError(f"{len(position)} position arrays for a frame of rank {self.rank}")
        pairs = [self.classify_dim(d, p) for d, p in enumerate(position)]
        return tuple(q for q, _ in pairs), tuple(k for _, k in pairs)

    def to_frame(self, index: Sequence[int]) -> tuple[int, ...]:
        """The frame position of operand element ``index``."""
        return frame_position(index, self.low, self.step)

    def cell_kinds(self) -> np.ndarray:
        """``CELL_KINDS`` code of every frame position: an operand element, low edge padding
        (any dim before the operand), high edge padding, or an interior hole."""
        grids = np.meshgrid(*[np.arange(n, dtype=np.int64) for n in self.shape], indexing="ij")
        _, kinds = self.classify(grids) if self.rank else ((), ())
        out = np.full(self.shape, CELL_VALUE, np.int8)
        for code, dim_kind in ((CELL_HOLE, HOLE), (CELL_PADDING_HIGH, PADDING_HIGH),
                               (CELL_PADDING, PADDING_LOW)):  # the edge padding wins over a hole
            for k in kinds:
                out[k == dim_kind] = code
        return out

    def with_ring(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """(first position, extent) per dim of the frame widened to hold what negative edge
        padding cropped: positions from ``min(0, low)`` to the end of the frame or of the
        dilated operand, whichever is later. Without cropping it is the frame itself."""
        first = tuple(min(0, lo) for lo in self.low)
        end = tuple(max(n, lo + dl) for n, lo, dl in zip(self.shape, self.low, self.dilated_shape))
        return first, tuple(e - f for e, f in zip(end, first))

    def ring_cells(self) -> tuple[tuple[int, ...], np.ndarray, tuple[np.ndarray, ...]]:
        """The widened frame (``with_ring``): its first position, the ``CELL_KINDS`` code of
        each position (``CELL_CROPPED`` outside the frame) and the operand index per dim
        (meaningful where every dim of the position is an operand element)."""
        first, extent = self.with_ring()
        grids = np.meshgrid(*[f + np.arange(n, dtype=np.int64) for f, n in zip(first, extent)],
                            indexing="ij")
        index, kinds = self.classify(grids) if self.rank else ((), ())
        out = np.full(extent, CELL_VALUE, np.int8)
        real = is_operand(kinds) if self.rank else np.ones(extent, bool)
        for code, dim_kind in ((CELL_HOLE, HOLE), (CELL_PADDING_HIGH, PADDING_HIGH),
                               (CELL_PADDING, PADDING_LOW)):
            for k in kinds:
                out[k == dim_kind] = code
        outside = np.zeros(extent, bool)
        for g, n in zip(grids, self.shape):
            outside |= (g < 0) | (g >= n)
        out[outside] = CELL_CROPPED  # whatever it holds, the op never reads it
        return first, out, tuple(np.where(real, i, -1) for i in index)

    def cropped(self) -> np.ndarray:
        """Which operand elements negative edge padding removes (no frame position)."""
        mask = np.zeros(self.operand_shape, bool)
        for d, (n, lo, st, extent) in enumerate(zip(self.operand_shape, self.low, self.step, self.shape,
                                                    strict=True)):
            pos = lo + np.arange(n, dtype=np.int64) * st
            gone = (pos < 0) | (pos >= extent)
            mask |= gone.reshape([-1 if a == d else 1 for a in range(len(self.operand_shape))])
        return mask

    def materialize(self, x: np.ndarray, fill: Any, budget: int | None = ELEMENT_BUDGET) -> np.ndarray:
        """The padded array: ``x`` spread ``step`` apart from ``low`` on, ``fill`` elsewhere,
        negative padding cropping. ``x`` itself (no copy) when there is nothing to pad; a
        frame over ``budget`` elements is refused before allocating."""
        if tuple(x.shape) != self.operand_shape:
            raise ValueError(f"an operand of shape {x.shape} in a frame for {self.operand_shape}")
        if not any(self.low) and not any(self.high) and not any(self.interior):
            return x
        shape = self.shape
        size = math.prod(shape)
        if budget is not None and size > budget:
            raise ExecutionError(f"the padded input {list(self.padded_shape)} has {size} elements, "
                                 f"over the budget of {budget}")
        out = np.full(shape, fill, dtype=x.dtype)
        dst, src = [], []
        for n, lo, st, extent in zip(x.shape, self.low, self.step, shape, strict=True):
            first = 0 if lo >= 0 else (-lo + st - 1) // st  # first element at a position >= 0
            last = min(n - 1, (extent - 1 - lo) // st)  # last one at a position < extent
            if first > last:
                return out  # negative padding cropped every element
            src.append(slice(first, last + 1))
            dst.append(slice(lo + first * st, lo + last * st + 1, st))
        out[tuple(dst)] = x[tuple(src)]
        return out
