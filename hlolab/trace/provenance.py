"""Per-op provenance: which input elements every output element derives from.

One ``Provenance`` object describes one executed op instance. Element queries
(``sources``, ``targets``) serve the TUI and ``explain``; the set forms
(``back``, ``fwd``) work on boolean masks so program-level tracing can compose
them op after op without touching single elements.

Roles (DESIGN.md, "Provenance") say *how* an input element takes part:

- ``copy``: the output element is this input element, moved unchanged;
- ``combine``: an operand of an element-wise or arithmetic combination;
- ``window``: an element of a reduction or convolution window;
- ``kernel``: a convolution / dot right-hand element;
- ``pad_value``: padding or a dilation hole; ``operand`` is the padding-value
  operand, or ``None`` for an implicit zero (coordinates in the frame the op
  declares);
- ``init``: a reduction's initial value;
- ``index_read``: an index read to decide where to read or write (gather...);
- ``update``: an element written by an update (scatter, dynamic_update_slice);
- ``selected``: select_and_scatter's chosen element;
- ``control``: read only to decide (select's predicate, a sort comparison).

Tuple and token values have no elements: their shape is ``None`` and they
take part in no link.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hlolab.errors import ExecutionError

# a leaf module (numpy, hlolab.errors, hlolab.limits only): no cycle through the ops
from hlolab.ops.frame import PaddedFrame, frame_position, operand_index, position_kind

ROLES = ("copy", "combine", "window", "kernel", "pad_value", "init", "index_read", "update",
         "selected", "control")

Shape = tuple[int, ...]


@dataclass(frozen=True)
class Source:
    """One input element an output element derives from."""

    operand: int | None  # None: an implicit value (e.g. a convolution's implicit zero padding)
    index: tuple[int, ...]
    role: str
    process: int = 0  # the process whose value it is (collectives read other processes' values)


@dataclass(frozen=True)
class Target:
    """One output element an input element flows into."""

    result: int
    index: tuple[int, ...]
    role: str


# --- shapes and indices ----------------------------------------------------------

def value_shape(value: Any) -> Shape | None:
    """The shape of a tensor value; ``None`` for tuples, tokens and other non-tensors."""
    if isinstance(value, np.ndarray):
        return tuple(int(d) for d in value.shape)
    return None


def check_index(shape: Shape | None, index: Sequence[int], what: str = "index") -> tuple[int, ...]:
    """``index`` as a tuple of ints, or an ExecutionError naming what is wrong with it."""
    if shape is None:
        raise ExecutionError(f"{what} {tuple(index)}: the value is not a tensor (a tuple or token)")
    idx = tuple(int(i) for i in index)
    if len(idx) != len(shape) or any(not 0 <= i < d for i, d in zip(idx, shape, strict=True)):
        raise ExecutionError(f"{what} {idx} is out of range for shape {shape}")
    return idx


def _check_mask(shape: Shape | None, mask: np.ndarray, what: str) -> np.ndarray:
    if shape is None:
        raise ExecutionError(f"{what}: the value is not a tensor (a tuple or token)")
    m = np.asarray(mask)
    if m.dtype != np.bool_ or m.shape != shape:
        raise ExecutionError(f"{what}: expected a boolean mask of shape {shape}, "
                             f"got {m.dtype} of shape {m.shape}")
    return m


def _unravel(flat: int, shape: Shape) -> tuple[int, ...]:
    return tuple(int(i) for i in np.unravel_index(int(flat), shape)) if shape else ()


def _merge(out: dict[Any, np.ndarray], key: Any, mask: np.ndarray) -> None:
    if not mask.any():
        return
    if key in out:
        out[key] = out[key] | mask
    else:
        out[key] = mask


@dataclass(frozen=True)
class FrameMap:
    """The padded / dilated frame an op reads operand ``operand`` in (reduce_window's
    padded base, a convolution's padded and lhs-dilated input), for renderers.

    Operand element ``i`` sits at frame position ``low + i * stride`` per dim; the
    other frame positions are padding (outside the dilated operand) or dilation
    holes (between two dilated elements). Window positions of ``FanInProvenance``
    fans are frame coordinates; a fan of operand ``operand`` or of one of
    ``pad_operands`` (``None``: an implicit zero) with positions lies in this frame.
    The geometry is the ops' own (``hlolab.ops.frame.PaddedFrame``).
    """

    operand: int
    shape: Shape
    low: tuple[int, ...]
    stride: tuple[int, ...]
    pad_operands: tuple[int | None, ...] = ()

    @classmethod
    def of(cls, operand: int, frame: PaddedFrame, pad_operands: Sequence[int | None] = ()) -> FrameMap:
        """The frame map of operand ``operand`` read in ``frame``."""
        return cls(operand, frame.shape, frame.low, frame.step, tuple(pad_operands))

    def padded_frame(self, operand_shape: Shape) -> PaddedFrame:
        """This frame over an operand of ``operand_shape``."""
        return PaddedFrame.fitting(operand_shape, self.low, self.stride, self.shape)

    def kinds(self, operand_shape: Shape) -> np.ndarray:
        """int8 per frame position: 0 an operand element, 1 padding, 2 dilation hole
        (``frame.POSITION_KINDS``; padding in any dim wins over a hole)."""
        grid = np.indices(self.shape, dtype=np.int64, sparse=True)
        _, kinds = self.padded_frame(operand_shape).classify(grid)
        return np.broadcast_to(position_kind(kinds), self.shape).copy()

    def operand_index(self) -> tuple[np.ndarray, ...]:
        """Per dim, the operand index of every frame position (meaningful where kinds is 0)."""
        return operand_index(np.indices(self.shape, dtype=np.int64), self.low, self.stride)

    def to_frame(self, index: Sequence[int]) -> tuple[int, ...]:
        """The frame position of operand element ``index``."""
        return frame_position(index, self.low, self.stride)

    def to_operand(self, position: Sequence[int]) -> tuple[int, ...]:
        """The operand index at frame ``position`` (meaningful where ``kinds`` is 0)."""
        return tuple(int(i) for i in operand_index(tuple(np.asarray(p) for p in position), self.low,
                                                   self.stride))


@dataclass
class AnimationStep:
    """One step of an op's own order of work, for animations (a provenance's
    ``animation_steps``; hlolab.render.animate draws them).

    ``sources`` are the operand cells this step shows (operand coordinates, with
    roles), ``results`` the result cells it writes, ``running`` the values those
    result cells hold after the step, ``start`` (first step only) the result
    values before any step (None: show the final results). ``kind`` is ``step``, or
    ``dropped`` for work the op discards (an out-of-bounds scatter update), which
    animations keep when they sample frames.
    """

    caption: Any  # a hlolab.messages.Msg, written in the reader's language when drawn
    sources: list[Source]
    results: list[tuple[int, tuple[int, ...]]]
    running: list[tuple[int, tuple[int, ...], Any]] = field(default_factory=list)
    start: dict[int, np.ndarray] | None = None
    kind: str = "step"


# --- the interface -------------------------------------------------------------

class Provenance:
    """Provenance of one executed op instance (subclasses provide the queries).

    ``result_shapes[r]`` / ``operand_shapes[i]`` are ``None`` for tuple and
    token values. Operands a region captures from outside count as trailing
    operands.
    """

    result_shapes: list[Shape | None]
    operand_shapes: list[Shape | None]
    # operand -> the padded/dilated frame its windows are drawn in (renderers only)
    frames: dict[int, FrameMap] = {}
    # drawn tensor ("operand0", "result0") -> the two axes to draw as the grid, e.g. the
    # spatial dims of NHWC images (renderers only; default: the last two axes)
    grid_axes: dict[str, tuple[int, int]] = {}

    def __init__(self, result_shapes: Sequence[Shape | None], operand_shapes: Sequence[Shape | None]):
        self.result_shapes = [None if s is None else tuple(int(d) for d in s) for s in result_shapes]
        self.operand_shapes = [None if s is None else tuple(int(d) for d in s) for s in operand_shapes]

    def sources(self, result: int, index: tuple[int, ...]) -> list[Source]:
        """The input elements result element ``index`` of result ``result`` derives from."""
        raise NotImplementedError

    def targets(self, operand: int, index: tuple[int, ...]) -> list[Target]:
        """The result elements that element ``index`` of operand ``operand`` flows into."""
        raise NotImplementedError

    def back(self, result: int, mask: np.ndarray) -> dict[tuple[int | None, str], np.ndarray]:
        """Boolean mask over result ``result`` -> masks over the operands, keyed (operand, role).

        Only non-empty masks are returned. A key with operand ``None`` is an
        implicit value; its mask is over the frame the op declares for it.
        """
        raise NotImplementedError

    def fwd(self, operand: int, mask: np.ndarray) -> dict[tuple[int, str], np.ndarray]:
        """Boolean mask over operand ``operand`` -> masks over the results, keyed (result, role).

        Only non-empty masks are returned.
        """
        raise NotImplementedError

    # one-element queries answered by the set forms (for provenances whose masks are the
    # natural form, e.g. chlo.scan's slices and the fan-in ops' targets)
    def sources_via_back(self, result: int, index: tuple[int, ...]) -> list[Source]:
        """``sources`` from ``back`` on a one-element mask, by operand, then row-major."""
        shape = self._result_shape(result)
        mask = np.zeros(shape, dtype=bool)
        mask[check_index(shape, index, f"result #{result} index")] = True
        out: list[Source] = []
        for (k, role), hit in sorted(self.back(result, mask).items(),
                                     key=lambda kv: (kv[0][0] is None, kv[0][0] or 0)):
            out.extend(Source(k, _unravel(int(p), hit.shape), role) for p in np.flatnonzero(hit))
        return out

    def targets_via_fwd(self, operand: int, index: tuple[int, ...]) -> list[Target]:
        """``targets`` from ``fwd`` on a one-element mask, sorted by (result, index, role)."""
        shape = self._operand_shape(operand)
        mask = np.zeros(shape, dtype=bool)
        mask[check_index(shape, index, f"operand #{operand} index")] = True
        out = [Target(r, _unravel(int(p), hit.shape), role)
               for (r, role), hit in self.fwd(operand, mask).items() for p in np.flatnonzero(hit)]
        return sorted(out, key=lambda t: (t.result, t.index, ROLES.index(t.role)))

    # shared argument checks
    def _result_shape(self, result: int) -> Shape | None:
        if not 0 <= result < len(self.result_shapes):
            raise ExecutionError(f"result #{result} does not exist (the op has "
                                 f"{len(self.result_shapes)} results)")
        return self.result_shapes[result]

    def _operand_shape(self, operand: int) -> Shape | None:
        if not 0 <= operand < len(self.operand_shapes):
            raise ExecutionError(f"operand #{operand} does not exist (the op has "
                                 f"{len(self.operand_shapes)} operands)")
        return self.operand_shapes[operand]


@dataclass(frozen=True, eq=False)
class Link:
    """One input of every element of one result, vectorized.

    ``flat_index`` (int64, result-shaped) holds for each result element the
    row-major flat index into the operand, or -1 where this link does not
    apply to that element. For ``operand=None`` (an implicit value) the
    indices are into ``frame``, the shape the op declares for it (default:
    the result shape).
    """

    operand: int | None
    role: str
    flat_index: np.ndarray
    frame: Shape | None = None


class IndexMapProvenance(Provenance):
    """Provenance as dense index maps: one-to-one and one-to-few ops.

    ``links[r]`` are the Links of result ``r``; every query is a vectorized
    read of their ``flat_index`` arrays.
    """

    def __init__(self, result_shapes: Sequence[Shape | None], operand_shapes: Sequence[Shape | None],
                 links: Sequence[Sequence[Link]]):
        super().__init__(result_shapes, operand_shapes)
        if len(links) != len(self.result_shapes):
            raise ValueError(f"links for {len(links)} results, the op has {len(self.result_shapes)}")
        self.links: list[list[Link]] = [list(ls) for ls in links]
        for r, ls in enumerate(self.links):
            for link in ls:
                self._validate(r, link)

    def _validate(self, r: int, link: Link) -> None:
        if link.role not in ROLES:
            raise ValueError(f"unknown provenance role {link.role!r}; roles are {ROLES}")
        shape = self.result_shapes[r]
        if shape is None:
            raise ValueError(f"result #{r} is not a tensor: it cannot have links")
        fi = link.flat_index
        if fi.dtype != np.int64 or fi.shape != shape:
            raise ValueError(f"link of result #{r}: flat_index must be int64 of shape {shape}, "
                             f"got {fi.dtype} of shape {fi.shape}")
        target = self._link_shape(r, link)
        if target is None:
            raise ValueError(f"link of result #{r}: operand #{link.operand} is not a tensor")
        size = int(np.prod(target, dtype=np.int64))
        if fi.size and (int(fi.min()) < -1 or int(fi.max()) >= size):
            raise ValueError(f"link of result #{r}: flat indices outside [-1, {size}) for {target}")

    def _link_shape(self, r: int, link: Link) -> Shape | None:
        if link.operand is None:
            return link.frame if link.frame is not None else self.result_shapes[r]
        return self.operand_shapes[link.operand]

    def sources(self, result: int, index: tuple[int, ...]) -> list[Source]:
        idx = check_index(self._result_shape(result), index, f"result #{result} index")
        out = []
        for link in self.links[result]:
            f = int(link.flat_index[idx])
            if f >= 0:
                out.append(Source(link.operand, _unravel(f, self._link_shape(result, link)), link.role))
        return out

    def targets(self, operand: int, index: tuple[int, ...]) -> list[Target]:
        shape = self._operand_shape(operand)
        idx = check_index(shape, index, f"operand #{operand} index")
        k = int(np.ravel_multi_index(idx, shape)) if shape else 0
        out = []
        for r, ls in enumerate(self.links):
            rshape = self.result_shapes[r]
            for link in ls:
                if link.operand != operand:
                    continue
                for p in np.flatnonzero(link.flat_index.reshape(-1) == k):
                    out.append(Target(r, _unravel(int(p), rshape), link.role))
        return out

    def back(self, result: int, mask: np.ndarray) -> dict[tuple[int | None, str], np.ndarray]:
        m = _check_mask(self._result_shape(result), mask, f"back(result #{result})")
        out: dict[tuple[int | None, str], np.ndarray] = {}
        for link in self.links[result]:
            shape = self._link_shape(result, link)
            picked = link.flat_index[m]
            picked = picked[picked >= 0]
            hit = np.zeros(int(np.prod(shape, dtype=np.int64)), dtype=bool)
            hit[picked] = True
            _merge(out, (link.operand, link.role), hit.reshape(shape))
        return out

    def fwd(self, operand: int, mask: np.ndarray) -> dict[tuple[int, str], np.ndarray]:
        m = _check_mask(self._operand_shape(operand), mask, f"fwd(operand #{operand})").reshape(-1)
        out: dict[tuple[int, str], np.ndarray] = {}
        for r, ls in enumerate(self.links):
            for link in ls:
                if link.operand != operand:
                    continue
                fi = link.flat_index
                valid = fi >= 0
                hit = np.zeros(fi.shape, dtype=bool)
                hit[valid] = m[fi[valid]]
                _merge(out, (r, link.role), hit)
        return out


class LazyProvenance(Provenance):
    """Base for fan-in ops (reduce, convolution, ...) that answer ``sources`` per element.

    A subclass implements ``sources(result, index)``. ``targets``, ``back``
    and ``fwd`` here are a generic, *slow* fallback: they call ``sources``
    once per result element involved (a Python loop over elements), so a
    subclass with a vectorized way should override them.
    """

    def _all_indices(self, shape: Shape) -> Iterable[tuple[int, ...]]:
        return (tuple(int(i) for i in ix) for ix in np.ndindex(*shape))

    def targets(self, operand: int, index: tuple[int, ...]) -> list[Target]:
        idx = check_index(self._operand_shape(operand), index, f"operand #{operand} index")
        out = []
        for r, shape in enumerate(self.result_shapes):
            if shape is None:
                continue
            for ridx in self._all_indices(shape):
                for s in self.sources(r, ridx):
                    if s.operand == operand and s.index == idx:
                        out.append(Target(r, ridx, s.role))
        return out

    def back(self, result: int, mask: np.ndarray) -> dict[tuple[int | None, str], np.ndarray]:
        m = _check_mask(self._result_shape(result), mask, f"back(result #{result})")
        picked: dict[tuple[int | None, str], list[tuple[int, ...]]] = {}
        for ridx in np.argwhere(m):
            for s in self.sources(result, tuple(int(i) for i in ridx)):
                picked.setdefault((s.operand, s.role), []).append(s.index)
        out: dict[tuple[int | None, str], np.ndarray] = {}
        for (operand, role), indices in picked.items():
            shape = self.operand_shapes[operand] if operand is not None else self.implicit_frame(result)
            hit = np.zeros(shape, dtype=bool)
            hit[tuple(np.array(indices, dtype=np.int64).reshape(len(indices), len(shape)).T)] = True
            _merge(out, (operand, role), hit)
        return out

    def fwd(self, operand: int, mask: np.ndarray) -> dict[tuple[int, str], np.ndarray]:
        m = _check_mask(self._operand_shape(operand), mask, f"fwd(operand #{operand})")
        out: dict[tuple[int, str], np.ndarray] = {}
        for r, shape in enumerate(self.result_shapes):
            if shape is None:
                continue
            hits: dict[str, np.ndarray] = {}
            for ridx in self._all_indices(shape):
                for s in self.sources(r, ridx):
                    if s.operand == operand and m[s.index]:
                        hits.setdefault(s.role, np.zeros(shape, dtype=bool))[ridx] = True
            for role, hit in hits.items():
                _merge(out, (r, role), hit)
        return out

    def implicit_frame(self, result: int) -> Shape:
        """The frame of implicit (operand ``None``) sources; the result shape unless overridden."""
        shape = self.result_shapes[result]
        assert shape is not None
        return shape


# --- building links --------------------------------------------------------------

def index_link(operand: int | None, role: str, operand_shape: Shape,
               operand_index: Sequence[np.ndarray], valid: np.ndarray | None = None,
               frame: Shape | None = None, result_shape: Shape | None = None) -> Link:
    """A Link from per-dimension operand index arrays.

    The arrays (and ``valid``) broadcast to the result shape, given as
    ``result_shape`` or implied by the arrays (``np.indices(shape,
    sparse=True)`` pieces are fine). ``valid`` marks the result elements the
    link applies to; elsewhere the indices are ignored and the flat index is -1.
    """
    oshape = tuple(int(d) for d in operand_shape)
    arrays = [np.asarray(a, dtype=np.int64) for a in operand_index]
    if len(arrays) != len(oshape):
        raise ValueError(f"{len(arrays)} index arrays for an operand of rank {len(oshape)}")
    shapes = [a.shape for a in arrays] + ([np.shape(valid)] if valid is not None else [])
    rshape = np.broadcast_shapes(tuple(result_shape or ()), *shapes)
    ok = np.broadcast_to(np.asarray(valid, dtype=bool) if valid is not None else True, rshape)
    if 0 in oshape:  # an empty operand has no element to point at
        flat = np.full(rshape, -1, dtype=np.int64)
    else:
        full = [np.where(ok, np.broadcast_to(a, rshape), 0) for a in arrays]
        flat = (np.ravel_multi_index(tuple(full), oshape).astype(np.int64) if full
                else np.zeros(rshape, dtype=np.int64))
        flat = np.where(ok, flat, -1).astype(np.int64)
    return Link(operand, role, np.array(flat, dtype=np.int64, order="C"), frame)


def broadcast_link(operand: int, operand_shape: Shape, result_shape: Shape, role: str) -> Link:
    """Each result element reads the operand element at the same index, numpy-broadcast
    (equal shapes: the same index; a rank-0 operand: index ())."""
    oshape, rshape = tuple(operand_shape), tuple(result_shape)
    try:
        flat = np.broadcast_to(np.arange(int(np.prod(oshape, dtype=np.int64)),
                                         dtype=np.int64).reshape(oshape), rshape)
    except ValueError:
        raise ExecutionError(f"operand #{operand} of shape {oshape} does not map element-wise "
                             f"onto a result of shape {rshape}") from None
    return Link(operand, role, flat)


def elementwise_provenance(ctx: Any, inputs: list[Any], outputs: list[Any]) -> Provenance:
    """Every tensor operand contributes the element at the same index (rank-0 operands
    such as clamp's scalar min/max: index ()), role ``combine``."""
    return _same_index_provenance(inputs, outputs, "combine", pair=False)


def unary_copy_provenance(ctx: Any, inputs: list[Any], outputs: list[Any]) -> Provenance:
    """Result ``r`` is operand ``r`` at the same index, role ``copy`` (with one
    operand, every result copies it): convert, real/imag, optimization_barrier..."""
    return _same_index_provenance(inputs, outputs, "copy", pair=True)


def _same_index_provenance(inputs: list[Any], outputs: list[Any], role: str,
                           pair: bool) -> IndexMapProvenance:
    oshapes = [value_shape(v) for v in inputs]
    rshapes = [value_shape(v) for v in outputs]
    links: list[list[Link]] = []
    for r, rshape in enumerate(rshapes):
        if rshape is None:
            links.append([])
            continue
        if pair:
            which = [r] if len(inputs) == len(outputs) else ([0] if len(inputs) == 1 else [])
        else:
            which = list(range(len(inputs)))
        links.append([broadcast_link(i, oshapes[i], rshape, role)
                      for i in which if oshapes[i] is not None])
    return IndexMapProvenance(rshapes, oshapes, links)
