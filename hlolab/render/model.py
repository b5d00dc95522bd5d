"""What a diagram shows, worked out before anything is drawn.

For each chosen result element, from the op's own provenance (``OpCells``) and
explanation, with no per-op code:

- ``Outline``: boxes around what the element reads. A window read in a padded
  frame (convolution, reduce_window, select_and_scatter) is boxed over every
  window position, so padding and dilation holes inside it show; an operand fan
  with no frame (a kernel, a dot product's lhs row / rhs column) is boxed over
  its cells. Ops whose result dims are split into fixed dims and spanned
  ("offset") dims (gather, dynamic_slice, slice) box the block of the result the
  element belongs to and the slice of the operand that block copies; when a
  start index was clamped, a dashed ghost box marks where the unclamped start
  would have put the slice.
- ``Pair``: when two operand fans of one window shape meet position by position
  (a convolution's window and kernel, a dot product's lhs and rhs), the pairs in
  the order the derivation writes its terms; the renderer numbers both cells of
  pair k with k, so window reversal and reordered contracting dims show.
- ``Derivation``: the arithmetic written out: the terms and the total.

Tests check these data against hand computations; ``diagram.draw_diagram`` draws them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hlolab.messages import Msg, text
from hlolab.trace.explain import Explanation, format_value
from hlolab.trace.provenance import value_shape
from hlolab.trace.roles import DIM_KINDS
from hlolab.trace.view import OpCells

MAX_TERMS = 64  # products written out in a dot-product line; past it: the count and the total

Index = tuple[int, ...]


@dataclass(frozen=True)
class Outline:
    """A box around cells ``lo <= index < hi`` (per dim, drawn coordinates) of tensor ``key``.

    ``kind``: ``window`` (a window in its padded frame), ``fan`` (the cells one operand fan
    reads, e.g. a kernel or an lhs row), ``slice`` (the operand slice a result block copies),
    ``block`` (that result block), ``unclamped`` (where a clamped start would have put the
    slice: drawn dashed). ``element`` is the chosen element's number (its colour).
    """

    key: str
    kind: str
    lo: Index
    hi: Index
    element: int = 0

    @property
    def dashed(self) -> bool:
        return self.kind == "unclamped"

    @property
    def size(self) -> Index:
        return tuple(h - lo for lo, h in zip(self.lo, self.hi, strict=True))


@dataclass(frozen=True)
class Pair:
    """Term ``number`` (1-based) of a dot product: cell ``a`` of tensor ``a_key`` times cell
    ``b`` of tensor ``b_key`` (drawn coordinates), with their values."""

    number: int
    a_key: str
    a: Index
    b_key: str
    b: Index
    a_value: Any
    b_value: Any


@dataclass
class Derivation:
    """An element's arithmetic: ``terms`` (all of them up to ``MAX_TERMS``) summed to
    ``value``; ``more`` terms not written, ``skipped`` window positions on padding/holes."""

    terms: list[str]
    value: str
    more: int = 0
    skipped: int = 0

    def text(self) -> str:
        out = " + ".join(self.terms) if self.terms else "0"
        if self.more:
            out += " " + text(Msg("render.more_terms", count=self.more))
        if self.skipped:
            out += " " + text(Msg("render.skipped_terms", count=self.skipped))
        return f"{out} = {self.value}"


@dataclass
class ElementModel:
    """What the diagram shows for one chosen element."""

    result: int
    index: Index
    outlines: list[Outline] = field(default_factory=list)
    pairs: list[Pair] = field(default_factory=list)
    derivation: Derivation | None = None
    marks: list[tuple[str, Index, str]] = field(default_factory=list)  # (key, drawn index, "winner")


# --- pairs and the dot product ----------------------------------------------------------------

def _paired_fans(cells: OpCells, result: int, index: Index) -> tuple[Any, Any, list[Any]] | None:
    """The two operand fans of one window shape that pair up, and all the element's fans."""
    prov = cells.prov
    if prov is None or not hasattr(prov, "window"):
        return None
    views = prov.window(result, index)
    fans = [f for f in views
            if f.operand is not None and f.role != "init" and value_shape(cells.inputs[f.operand])]
    if len(fans) != 2 or fans[0].valid.shape != fans[1].valid.shape or fans[0].operand == fans[1].operand:
        return None
    return fans[0], fans[1], views


def _drawn_rows(cells: OpCells, fan: Any, mask: np.ndarray) -> np.ndarray:
    """The drawn coordinates of the fan's cells under ``mask``: frame positions when the
    operand is drawn in its frame, else operand indices."""
    fm = cells.frames.get(fan.operand) if fan.operand is not None else None
    if fm is not None and fan.position is not None:
        return np.asarray(fan.position)[mask].reshape(int(mask.sum()), -1)
    rank = fan.index.shape[-1]
    return np.asarray(fan.index)[mask].reshape(int(mask.sum()), rank)


def pairs_and_derivation(cells: OpCells, result: int, index: Index
                         ) -> tuple[list[Pair], Derivation | None]:
    """The numbered pairs and the written-out dot product, or ([], None) when no two fans pair."""
    got = _paired_fans(cells, result, index)
    if got is None:
        return [], None
    a, b, views = got
    both = np.asarray(a.valid & b.valid, bool)
    va = _values(cells, f"operand{a.operand}")[tuple(np.asarray(a.index)[both].T)]
    vb = _values(cells, f"operand{b.operand}")[tuple(np.asarray(b.index)[both].T)]
    ra, rb = _drawn_rows(cells, a, both), _drawn_rows(cells, b, both)
    pairs = [Pair(k + 1, f"operand{a.operand}", tuple(int(i) for i in ra[k]), f"operand{b.operand}",
                  tuple(int(i) for i in rb[k]), va[k], vb[k]) for k in range(min(len(va), MAX_TERMS))]
    terms = [f"{format_value(x)}·{format_value(y)}" for x, y in zip(va[:MAX_TERMS], vb[:MAX_TERMS],
                                                                    strict=True)]
    # window positions on padding or holes (a convolution's pad_value fan): their kernel
    # weights meet a constant zero, so neither side lists them as a source
    skipped = sum(int(np.asarray(f.valid).sum()) for f in views if f.operand is None)
    value = format_value(_values(cells, f"result{result}")[index])
    return pairs, Derivation(terms, value, max(0, len(va) - MAX_TERMS), skipped)


def _values(cells: OpCells, key: str) -> np.ndarray:
    """A tensor's values as the op computes with them: a quantized tensor's real values (its
    dequantized storage; the op multiplies those, not the stored integers)."""
    reals = cells.reals_of(key)
    if reals is not None:
        return reals
    kind, k = key.rstrip("0123456789"), int(key[len(key.rstrip("0123456789")):])
    return np.asarray((cells.outputs if kind == "result" else cells.inputs)[k])


# --- outlines ---------------------------------------------------------------------------------

def _bbox(rows: np.ndarray) -> tuple[Index, Index] | None:
    if rows.size == 0 or rows.ndim != 2 or rows.shape[1] == 0:
        return None
    return tuple(int(v) for v in rows.min(axis=0)), tuple(int(v) + 1 for v in rows.max(axis=0))


def _fan_outlines(cells: OpCells, result: int, index: Index, element: int) -> list[Outline]:
    """Windows in padded frames (every position, holes and padding included) and the
    bounding box of every other operand fan with more than one cell."""
    out: list[Outline] = []
    framed: dict[int, list[np.ndarray]] = {}
    for f in cells.prov.window(result, index):
        fm = cells.framed(f.operand)
        if fm is not None and f.position is not None:
            pos = np.asarray(f.position)
            framed.setdefault(fm.operand, []).append(pos.reshape(-1, pos.shape[-1]))
            continue
        if f.operand is None or f.role == "init" or value_shape(cells.inputs[f.operand]) is None:
            continue
        valid = np.asarray(f.valid, bool)
        rows = np.asarray(f.index)[valid].reshape(int(valid.sum()), -1)
        box = _bbox(rows)
        if box is not None and len(np.unique(rows, axis=0)) > 1:
            out.append(Outline(f"operand{f.operand}", "fan", *box, element=element))
    for operand, parts in framed.items():
        box = _bbox(np.concatenate(parts))
        if box is not None:
            out.insert(0, Outline(f"operand{operand}", "window", *box, element=element))
    return out


def _block_outlines(cells: OpCells, e: Explanation | None, result: int, index: Index,
                    element: int) -> list[Outline]:
    """The result block of the element (its spanned "offset" dims) and the operand slices
    that block copies; a dashed ghost where a clamped start would have put the slice."""
    roles = e.result_roles() if e is not None else None
    shape = value_shape(cells.outputs[result])
    if not roles or shape is None or len(roles) != len(shape):
        return []
    spanned = [d for d, r in roles.items() if DIM_KINDS.get(r.kind, "offset") == "offset"]
    if not spanned:
        return []
    lo = list(index)
    hi = [i + 1 for i in index]
    for d in spanned:
        lo[d], hi[d] = 0, shape[d]
    block = np.zeros(shape, bool)
    block[tuple(slice(a, b) for a, b in zip(lo, hi, strict=True))] = True
    out: list[Outline] = []
    if 1 < block.sum() < block.size:  # the whole result needs no box
        out.append(Outline(f"result{result}", "block", tuple(lo), tuple(hi), element))
    for (operand, role), mask in cells.prov.back(result, block).items():
        if operand is None or role in ("index_read", "init") or not np.any(mask):
            continue
        if value_shape(cells.inputs[operand]) is None or cells.frames.get(operand) is not None:
            continue
        box = _bbox(np.argwhere(mask))
        if box is None or int(mask.sum()) < 2 or int(mask.sum()) == mask.size:
            continue  # one cell is painted anyway; the whole operand needs no box
        out.append(Outline(f"operand{operand}", "slice", *box, element=element))
        ghost = _unclamped(e, box)
        if ghost is not None:
            out.append(Outline(f"operand{operand}", "unclamped", *ghost, element=element))
    return out


def _unclamped(e: Explanation | None, box: tuple[Index, Index]) -> tuple[Index, Index] | None:
    """The slice box moved back by the clamp of the first clamped start index of the
    operand's rank (None when no start was clamped)."""
    if e is None:
        return None
    rank = len(box[0])
    for s in e.steps:
        if s.before_clamp is None or not isinstance(s.value, tuple) or len(s.value) != rank:
            continue
        before = tuple(int(v) for v in np.asarray(s.before_clamp).reshape(-1))
        if len(before) != rank:
            continue
        shift = [b - int(a) for a, b in zip(s.value, before, strict=True)]
        if any(shift):
            return (tuple(lo + d for lo, d in zip(box[0], shift, strict=True)),
                    tuple(hi + d for hi, d in zip(box[1], shift, strict=True)))
    return None


def element_model(cells: OpCells, e: Explanation | None, result: int, index: Sequence[int],
                  element: int = 0) -> ElementModel:
    """Outlines, pairs and derivation of one chosen element (see the module doc)."""
    idx = tuple(int(i) for i in index)
    model = ElementModel(result, idx)
    if cells.prov is None:
        return model
    if hasattr(cells.prov, "outlines"):  # the op names its windows (select_and_scatter)
        model.outlines = [Outline(f"operand{op}", kind, tuple(lo), tuple(hi), element)
                          for op, kind, lo, hi in cells.prov.outlines(result, idx)]
    elif hasattr(cells.prov, "window"):
        model.outlines = _fan_outlines(cells, result, idx, element)
        model.pairs, model.derivation = pairs_and_derivation(cells, result, idx)
    else:
        model.outlines = _block_outlines(cells, e, result, idx, element)
    if hasattr(cells.prov, "marks"):  # the element a select / max / min chose
        for op, at, label in cells.prov.marks(result, idx):
            fm = cells.frames.get(op)
            drawn = tuple(int(i) for i in fm.to_frame(at)) if fm is not None else tuple(at)
            model.marks.append((f"operand{op}", drawn, label))
    return model
