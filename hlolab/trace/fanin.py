"""Provenance of fan-in ops: every result element reads a *window* of inputs.

reduce, reduce_window, select_and_scatter, dot_general, convolution and the
linear-algebra ops combine many input elements into one output element.
Storing their index maps densely would cost O(output x window) memory, so a
``FanInProvenance`` stores only a function, ``fans(result, ridx)``, that
computes the windows of any batch of result elements on demand:

- ``ridx`` is a tuple of int64 arrays, one per result dimension, all of one
  shape ``S`` (``S == ()`` for a single element, ``(M,)`` for a batch);
- it returns a list of ``Fan`` records, one per (operand, role) group; each
  holds one index array per operand dimension, broadcastable to ``S + W``
  (``W`` the window shape of that group, leading axes aligned with ``S``),
  and an optional ``valid`` mask of the same broadcast shape. Give
  ``window=W`` when some arrays hold window offsets only (shape ``W``): they
  then broadcast against the trailing axes whatever the rank of ``S``.

Element queries (``sources``, ``window``) evaluate one element: memory
O(window). The set forms (``back``, ``fwd``) evaluate result elements in
chunks, so memory stays bounded by ``chunk_elements`` whatever the op size.

Order: ``sources`` lists each fan's positions in row-major window order, fans
in the order ``fans`` returns them. That order is the op's documented
*schedule* (``schedule`` says what it is), which animations replay; fans that
share a window shape pair up position by position (a dot product's lhs and
rhs elements, a convolution's input window and kernel).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from hlolab.messages import Msg
from hlolab.trace.provenance import (
    ROLES,
    Provenance,
    Shape,
    Source,
    Target,
    _check_mask,
    _merge,
    check_index,
)


@dataclass(frozen=True, eq=False)
class Fan:
    """The inputs one group of window positions reads, for a batch of result elements.

    ``index`` has one array per dimension of the operand (of ``frame`` when
    ``operand`` is None: an implicit value such as a convolution's zero
    padding). ``position`` optionally gives each window position's
    coordinates in the frame the op draws its window in (the padded and
    dilated base of reduce_window / convolution), for renderers and explain.
    """

    operand: int | None
    role: str
    index: tuple[np.ndarray, ...]
    valid: np.ndarray | None = None
    frame: Shape | None = None
    position: tuple[np.ndarray, ...] | None = None
    window: Shape | None = None


@dataclass(frozen=True, eq=False)
class FanView:
    """One fan of one result element, broadcast to its window shape ``W``.

    ``index`` is int64 ``W + (rank,)``; ``valid`` bool ``W``; ``position``
    int64 ``W + (frame rank,)`` or None.
    """

    operand: int | None
    role: str
    index: np.ndarray
    valid: np.ndarray
    frame: Shape | None
    position: np.ndarray | None

    def sources(self) -> list[Source]:
        """The valid positions as Sources, row-major over the window."""
        pts = self.index[self.valid]
        return [Source(self.operand, tuple(int(i) for i in p), self.role) for p in pts]


FanFn = Callable[[int, tuple[np.ndarray, ...]], Sequence[Fan]]


def expand(a: np.ndarray | int, n_window_dims: int) -> np.ndarray:
    """``a`` (a result-index array of shape S) with ``n_window_dims`` trailing unit
    axes, so it broadcasts against window offsets of shape W: S + (1,) * len(W)."""
    arr = np.asarray(a, dtype=np.int64)
    return arr.reshape(arr.shape + (1,) * n_window_dims)


@dataclass(frozen=True)
class Projection:
    """A fan whose every operand dim either takes one result dim's index or spans
    the whole dim: ``dims[d]`` is that result dim, or None for "all of dim d".

    reduce (kept dims / reduced dims) and dot_general (batch and free dims /
    contracting dims) have this shape. It lets the set forms work on masks
    directly, in O(operand + result) instead of O(result x window).
    """

    operand: int
    role: str
    dims: tuple[int | None, ...]


ProjectFn = Callable[[int], "list[Projection]"]


class FanInProvenance(Provenance):
    """Provenance computed on demand from a fan function (see the module doc).

    ``project(result)``, when given, describes the same fans as Projections;
    ``back`` and ``fwd`` then use it (it must agree with ``fans``: tests check).
    """

    def __init__(self, result_shapes: Sequence[Shape | None], operand_shapes: Sequence[Shape | None],
                 fans: FanFn, schedule: Msg | None = None,
                 chunk_elements: int = 1 << 22, project: ProjectFn | None = None):
        super().__init__(result_shapes, operand_shapes)
        self._fans = fans
        # the order an animation walks the fans in: a hlolab.messages.Msg (None: row-major)
        self.schedule = schedule
        self.chunk_elements = chunk_elements
        self._project = project

    # --- projections: mask algebra for separable fans -----------------------------------
    def _project_back(self, result: int, mask: np.ndarray) -> dict[tuple[int | None, str], np.ndarray]:
        assert self._project is not None
        out: dict[tuple[int | None, str], np.ndarray] = {}
        for p in self._project(result):
            oshape = self.operand_shapes[p.operand]
            assert oshape is not None
            if any(d is None and n == 0 for d, n in zip(p.dims, oshape, strict=True)):
                continue  # an empty window reads nothing
            used = [k for k in p.dims if k is not None]
            m = mask.any(axis=tuple(k for k in range(mask.ndim) if k not in used)) if mask.size \
                else np.zeros([mask.shape[k] for k in sorted(used)], dtype=bool)
            order = sorted(used)
            m = np.transpose(m, [order.index(k) for k in used])
            m = m.reshape([mask.shape[k] if k is not None else 1 for k in p.dims])
            _merge(out, (p.operand, p.role), np.array(np.broadcast_to(m, oshape)))
        return out

    def _project_fwd(self, operand: int, mask: np.ndarray) -> dict[tuple[int, str], np.ndarray]:
        assert self._project is not None
        out: dict[tuple[int, str], np.ndarray] = {}
        for r, rshape in enumerate(self.result_shapes):
            if rshape is None:
                continue
            for p in self._project(r):
                if p.operand != operand:
                    continue
                if any(d is None and n == 0 for d, n in zip(p.dims, mask.shape, strict=True)):
                    continue
                m = mask.any(axis=tuple(d for d, k in enumerate(p.dims) if k is None))
                used = [k for k in p.dims if k is not None]
                order = sorted(used)
                m = np.transpose(m, [used.index(k) for k in order])
                m = m.reshape([rshape[k] if k in used else 1 for k in range(len(rshape))])
                _merge(out, (r, p.role), np.array(np.broadcast_to(m, rshape)))
        return out

    # --- evaluating fans ------------------------------------------------------------
    def _target_shape(self, fan: Fan) -> Shape:
        if fan.operand is None:
            if fan.frame is None:
                raise ValueError("a fan with operand None needs a frame")
            return fan.frame
        shape = self.operand_shapes[fan.operand]
        if shape is None:
            raise ValueError(f"fan of operand #{fan.operand}: the operand is not a tensor")
        return shape

    def _evaluate(self, result: int, ridx: tuple[np.ndarray, ...],
                  windows: Sequence[Shape] | None = None) -> list[tuple[Fan, np.ndarray]]:
        """Each fan with its flat operand indices, shape ``S + W`` (-1 where not valid).

        ``windows`` are the fans' window shapes ``W`` (from a single-element
        evaluation, where ``S == ()`` makes them unambiguous); without them a
        batch of elements must carry its ``S`` axes in some array of each fan.
        """
        s = ridx[0].shape if ridx else ()
        out = []
        fans = list(self._fans(result, ridx))
        if windows is not None and len(windows) != len(fans):
            raise ValueError(f"result #{result}: the fan function returned {len(fans)} fans for a "
                             f"batch and {len(windows)} for one element")
        for k, fan in enumerate(fans):
            if fan.role not in ROLES:
                raise ValueError(f"unknown provenance role {fan.role!r}; roles are {ROLES}")
            target = self._target_shape(fan)
            if len(fan.index) != len(target):
                raise ValueError(f"fan of operand #{fan.operand}: {len(fan.index)} index arrays "
                                 f"for rank {len(target)}")
            arrays = [np.asarray(a, dtype=np.int64) for a in fan.index]
            parts = [a.shape for a in arrays] + ([np.shape(fan.valid)] if fan.valid is not None else [])
            inner = np.broadcast_shapes(*parts) if parts else ()
            if fan.window is not None or windows is not None:
                w = tuple(fan.window) if fan.window is not None else tuple(windows[k])
                full = np.broadcast_shapes(s + w, inner)
            else:  # window-only arrays (offsets of shape W) broadcast against the trailing axes
                full = np.broadcast_shapes(s + (1,) * max(0, len(inner) - len(s)), inner)
            if full[:len(s)] != s:
                raise ValueError(f"fan of operand #{fan.operand}: window arrays of shape {full} "
                                 f"do not start with the result batch shape {s}")
            ok = (np.broadcast_to(np.asarray(fan.valid, dtype=bool), full) if fan.valid is not None
                  else np.ones(full, dtype=bool))
            if 0 in target:
                flat = np.full(full, -1, dtype=np.int64)
            elif arrays:
                safe = tuple(np.where(ok, np.broadcast_to(a, full), 0) for a in arrays)
                for a, d in zip(safe, target, strict=True):
                    if a.size and (int(a.min()) < 0 or int(a.max()) >= d):
                        raise ValueError(f"fan of operand #{fan.operand}: index out of range "
                                         f"for shape {target}")
                flat = np.where(ok, np.ravel_multi_index(safe, target), -1).astype(np.int64)
            else:  # a rank-0 operand: flat index 0
                flat = np.where(ok, 0, -1).astype(np.int64)
            out.append((fan, flat))
        return out

    def _chunks(self, result: int, flat_results: np.ndarray):
        """``flat_results`` in chunks sized so a chunk's windows fit ``chunk_elements``."""
        shape = self.result_shapes[result]
        assert shape is not None
        if flat_results.size == 0:
            return
        one = self._evaluate(result, tuple(np.zeros((), np.int64) for _ in shape))
        windows = [f.shape for _, f in one]
        window = max(1, sum(int(f.size) for _, f in one))
        step = max(1, self.chunk_elements // window)
        for start in range(0, flat_results.size, step):
            part = flat_results[start:start + step]
            ridx = (tuple(np.asarray(a, dtype=np.int64) for a in np.unravel_index(part, shape))
                    if shape else ())  # a rank-0 result: one element, no index arrays
            yield part, self._evaluate(result, ridx, windows)

    # --- element queries ------------------------------------------------------------
    def window(self, result: int, index: tuple[int, ...]) -> list[FanView]:
        """The fans of one result element, broadcast to their window shapes."""
        idx = check_index(self._result_shape(result), index, f"result #{result} index")
        ridx = tuple(np.asarray(i, dtype=np.int64) for i in idx)
        views = []
        for fan, flat in self._evaluate(result, ridx):
            target = self._target_shape(fan)
            valid = flat >= 0
            coords = np.stack(np.unravel_index(np.where(valid, flat, 0), target), axis=-1) \
                if target else np.zeros(flat.shape + (0,), np.int64)
            pos = None
            if fan.position is not None:  # a rank-0 frame: positions with no coordinates
                pos = (np.stack([np.broadcast_to(np.asarray(p, np.int64), flat.shape)
                                 for p in fan.position], axis=-1) if fan.position
                       else np.zeros(flat.shape + (0,), np.int64))
            views.append(FanView(fan.operand, fan.role, coords.astype(np.int64), valid,
                                 fan.frame, pos))
        return views

    def sources(self, result: int, index: tuple[int, ...]) -> list[Source]:
        out: list[Source] = []
        seen: set[Source] = set()
        for view in self.window(result, index):
            for s in view.sources():
                if s not in seen:  # e.g. every padded position reads the same rank-0 value
                    seen.add(s)
                    out.append(s)
        return out

    def targets(self, operand: int, index: tuple[int, ...]) -> list[Target]:
        return self.targets_via_fwd(operand, index)

    # --- set forms --------------------------------------------------------------------
    def back(self, result: int, mask: np.ndarray) -> dict[tuple[int | None, str], np.ndarray]:
        m = _check_mask(self._result_shape(result), mask, f"back(result #{result})")
        if self._project is not None:
            return self._project_back(result, m)
        hits: dict[tuple[int | None, str], np.ndarray] = {}
        for _, evaluated in self._chunks(result, np.flatnonzero(m)):
            for fan, flat in evaluated:
                target = self._target_shape(fan)
                key = (fan.operand, fan.role)
                if key not in hits:
                    hits[key] = np.zeros(int(np.prod(target, dtype=np.int64)), dtype=bool)
                picked = flat[flat >= 0]
                hits[key][picked] = True
        out: dict[tuple[int | None, str], np.ndarray] = {}
        for (operand, role), hit in hits.items():
            shape = (self.operand_shapes[operand] if operand is not None
                     else self._frame_of(result, role))
            _merge(out, (operand, role), hit.reshape(shape))
        return out

    def _frame_of(self, result: int, role: str) -> Shape:
        shape = self.result_shapes[result]
        assert shape is not None
        zero = tuple(np.zeros((), np.int64) for _ in shape)
        for fan in self._fans(result, zero):
            if fan.operand is None and fan.role == role and fan.frame is not None:
                return fan.frame
        raise ValueError(f"no frame for implicit {role} sources")

    def fwd(self, operand: int, mask: np.ndarray) -> dict[tuple[int, str], np.ndarray]:
        full = _check_mask(self._operand_shape(operand), mask, f"fwd(operand #{operand})")
        if self._project is not None:
            return self._project_fwd(operand, full)
        m = full.reshape(-1)
        out: dict[tuple[int, str], np.ndarray] = {}
        if not m.any():
            return out
        for r, shape in enumerate(self.result_shapes):
            if shape is None:
                continue
            size = int(np.prod(shape, dtype=np.int64))
            hits: dict[str, np.ndarray] = {}
            for part, evaluated in self._chunks(r, np.arange(size, dtype=np.int64)):
                for fan, flat in evaluated:
                    if fan.operand != operand:
                        continue
                    read = np.where(flat >= 0, m[np.maximum(flat, 0)], False)
                    reached = read.reshape(part.size, -1).any(axis=1)
                    if fan.role not in hits:
                        hits[fan.role] = np.zeros(size, dtype=bool)
                    hits[fan.role][part[reached]] = True
            for role, hit in hits.items():
                _merge(out, (r, role), hit.reshape(shape))
        return out
