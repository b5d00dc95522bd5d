"""An executed op as every front end shows it: its tensors (operands read through
a padded / dilated frame shown in that frame), the two grid axes each is drawn
with, and the cells each result element derives from, by role.

Everything here comes from the op's own provenance (``OpRun.provenance()``),
so any op with provenance shows, with no per-op code: fan-in ops give their
windows (``FanInProvenance.window``), the others their sources. The TUI's grids
and the renderers' boards (``hlolab.render.opview.OpView``) both read it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hlolab.trace.provenance import FrameMap, value_shape
from hlolab.types import QuantizedElementType, TensorType


@dataclass(frozen=True)
class CellGroup:
    """Cells of one drawn tensor that play one role for a result element.

    ``key`` names the drawn tensor (``operand0``, ``result0``); ``indices`` is
    int64 ``[n, rank]`` in that tensor's drawn coordinates (frame coordinates
    for an operand drawn in its frame).
    """

    key: str
    role: str
    indices: np.ndarray


def _split(key: str) -> tuple[str, int]:
    """``"operand2"`` -> ("operand", 2)."""
    kind = key.rstrip("0123456789")
    return kind, int(key[len(kind):] or 0)


def _rows(a: np.ndarray) -> np.ndarray:
    """Distinct index rows of an ``[n, rank]`` array, in first-seen order."""
    a = np.asarray(a, dtype=np.int64)
    if len(a) == 0:
        return a
    if a.shape[1] == 0:
        return a[:1]
    _, first = np.unique(a, axis=0, return_index=True)
    return a[np.sort(first)]


class OpCells:
    """The tensors of an executed op (operands ``operand<i>``, results ``result<r>``) as a
    front end shows them, and the cells each result element derives from, by role.

    ``focus`` lists (result, index) elements whose cells a front end must keep
    visible when it elides large tensors (``keep``).
    """

    def __init__(self, event: Any, focus: Sequence[tuple[int, tuple[int, ...]]] = ()):
        self.event = event
        self.op = event.op
        self.inputs = list(event.inputs)
        self.outputs = list(event.outputs)
        self.prov = event.provenance()
        self.frames: dict[int, FrameMap] = dict(getattr(self.prov, "frames", {}) or {}) \
            if self.prov is not None else {}
        keep: dict[str, list[tuple[int, ...]]] = {}
        for result, index in focus:
            keep.setdefault(f"result{result}", []).append(tuple(index))
            for g in self.element_cells(result, index):
                keep.setdefault(g.key, []).extend(tuple(int(i) for i in row) for row in g.indices)
        self.keep = keep

    # --- names and shapes ------------------------------------------------------------
    def operand_name(self, i: int) -> str:
        ops = self.op.operands
        return ops[i].name if i < len(ops) else f"operand #{i}"

    def result_name(self, r: int) -> str:
        res = self.op.results
        return res[r].name if r < len(res) else f"result #{r}"

    def declared_type(self, key: str) -> Any | None:
        """The op's own type of drawn tensor ``key`` (None: a region-captured trailing operand,
        or an event with no such value)."""
        kind, k = _split(key)
        values = self.op.results if kind == "result" else self.op.operands
        return values[k].type if k < len(values) else None

    def quant_type(self, key: str) -> QuantizedElementType | None:
        """The ``!quant.uniform`` element type of drawn tensor ``key``, None when not quantized."""
        t = self._tensor_type(key)
        return t.element if t is not None and isinstance(t.element, QuantizedElementType) else None

    def _tensor_type(self, key: str) -> TensorType | None:
        """The declared tensor type of ``key`` with its dynamic dims refined by the run's shape;
        None when it does not describe the value (no declared type, another rank or dtype)."""
        kind, k = _split(key)
        t = self.declared_type(key)
        vals = self.outputs if kind == "result" else self.inputs
        if not isinstance(t, TensorType) or k >= len(vals):
            return None
        x = np.asarray(vals[k])
        if len(t.shape) != x.ndim or any(d is not None and d != n
                                         for d, n in zip(t.shape, x.shape, strict=True)):
            return None
        try:
            if np.dtype(t.element.dtype) != x.dtype:
                return None
        except Exception:  # an element type with no numpy dtype: not this value's type
            return None
        if t.is_static:
            return t
        # refined: the run's shape; a bounds encoding describes the ?-dims it no longer has
        return TensorType(tuple(int(n) for n in x.shape), t.element)

    def _type_text(self, x: np.ndarray, key: str | None = None) -> str:
        t = self._tensor_type(key) if key is not None else None
        if t is not None:
            return str(t)
        from hlolab.types import element_type_of_dtype

        dims = "x".join(str(d) for d in x.shape)
        et = element_type_of_dtype(x.dtype)
        return f"tensor<{dims + 'x' if dims else ''}{et}>"

    def reals_of(self, key: str) -> np.ndarray | None:
        """The real (dequantized) values of quantized tensor ``key``, its own shape; None
        when it is not quantized."""
        qt = self.quant_type(key)
        if qt is None:
            return None
        from hlolab.ops.quant_ops import dequantize  # the ops package imports the trace package

        kind, k = _split(key)
        x = np.asarray((self.outputs if kind == "result" else self.inputs)[k])
        return dequantize(x, qt)

    def drawn(self, key: str) -> tuple[str, np.ndarray, np.ndarray | None]:
        """(label, values, frame kinds) of the drawn tensor ``key``."""
        kind, k = _split(key)
        own = (getattr(self.prov, "cell_kinds", None) or {}).get(key) if self.prov is not None else None
        if kind == "result":
            x = np.asarray(self.outputs[k])
            label = f"{self.result_name(k)} : {self._type_text(x, key)}"
            rnote = (getattr(self.prov, "result_notes", None) or {}).get(k) if self.prov is not None else None
            if rnote is not None:  # e.g. a dot product's result dims: batch, lhs free, rhs free
                from hlolab.messages import text

                label = f"{label}, {text(rnote)}"
            return label, x, own
        x = np.asarray(self.inputs[k])
        label = f"{self.operand_name(k)} : {self._type_text(x, key)}"
        note = (getattr(self.prov, "operand_notes", None) or {}).get(k) if self.prov is not None else None
        if note is not None:  # e.g. scatter's inputs: "input (start value)"
            from hlolab.messages import text

            label = f"{label}, {text(note)}"
        fm = self.frames.get(k)
        if fm is None:
            return label, x, own
        kinds = fm.padded_frame(x.shape).cell_kinds()  # hlolab.ops.frame.CELL_KINDS codes
        values = self._in_frame(fm, x, kinds, self._pad_value(fm, x))
        if tuple(fm.shape) == tuple(x.shape) and not np.any(kinds):
            return label, values, kinds  # no padding, no dilation: the frame is the operand
        frame = "x".join(str(d) for d in fm.shape)
        from hlolab.messages import Msg, text

        return text(Msg("explain.padded_frame", label=label, frame=frame)), values, kinds

    def role_label(self, role: str) -> str:
        """The role's name in the reader's language, as this op calls it (a dot product's
        ``window`` / ``kernel`` are its lhs and rhs: ``Provenance.role_labels``)."""
        from hlolab.messages import text
        from hlolab.trace.roles import ROLE_LABELS

        own = (getattr(self.prov, "role_labels", None) or {}).get(role) if self.prov is not None else None
        return text(own) if own is not None else ROLE_LABELS.get(role, role)

    def drawn_ring(self, key: str) -> tuple[str, np.ndarray, np.ndarray | None, tuple[int, ...] | None]:
        """``drawn(key)`` widened, for an operand read in a frame with negative padding, by the
        ring of operand elements the cropping removed (``CELL_CROPPED`` cells): (label, values,
        kinds, index of the first cell per dim, negative where the ring is; None: no frame)."""
        label, values, kinds = self.drawn(key)
        kind, k = _split(key)
        fm = self.frames.get(k) if kind == "operand" else None
        if fm is None:
            return label, values, kinds, None
        x = np.asarray(self.inputs[k])
        first, ring_kinds, index = fm.padded_frame(x.shape).ring_cells()
        if ring_kinds.shape == values.shape:
            return label, values, kinds, None  # nothing cropped
        return label, self._in_ring(x, ring_kinds, index, self._pad_value(fm, x)), ring_kinds, first

    def _in_frame(self, fm: FrameMap, x: np.ndarray, kinds: np.ndarray, fill: Any) -> np.ndarray:
        """``x`` placed in its frame: operand elements where ``kinds`` is 0, ``fill`` elsewhere."""
        values = np.full(fm.shape, fill, dtype=x.dtype)
        real = kinds == 0
        if real.any():
            oi = fm.operand_index()
            values[real] = x[tuple(o[real] for o in oi)]
        return values

    def _in_ring(self, x: np.ndarray, ring_kinds: np.ndarray, index: Sequence[np.ndarray],
                 fill: Any) -> np.ndarray:
        """``x`` placed in its frame widened by the cropped ring (``FrameMap.ring_cells``)."""
        ring = np.full(ring_kinds.shape, fill, dtype=x.dtype)
        real = index[0] >= 0 if index else np.ones(ring.shape, bool)  # an operand element
        if real.any():
            ring[real] = x[tuple(i[real] for i in index)]
        return ring

    def reals(self, key: str, ring: bool = False) -> np.ndarray | None:
        """The real value (the spec's ``dequantize``, per axis too) of every cell of quantized
        tensor ``key`` as ``drawn(key)`` (``ring``: ``drawn_ring(key)``) lays it out; NaN
        where a cell is no element of the tensor (padding, a dilation hole). None: not
        quantized."""
        rx = self.reals_of(key)
        if rx is None:
            return None
        kind, k = _split(key)
        fm = self.frames.get(k) if kind == "operand" else None
        if fm is None:
            return rx
        x = np.asarray(self.inputs[k])
        nan = np.array(np.nan, dtype=rx.dtype)[()]
        frame = fm.padded_frame(x.shape)
        if ring:
            first, ring_kinds, index = frame.ring_cells()
            if ring_kinds.shape != tuple(fm.shape):
                return self._in_ring(rx, ring_kinds, index, nan)
        return self._in_frame(fm, rx, frame.cell_kinds(), nan)

    def frame_axes(self, key: str) -> tuple[tuple[int, int, int], ...] | None:
        """Per dim (low, step, operand size) of a tensor drawn as a padded frame: frame position
        p holds operand index (p - low) / step where that is a whole number in [0, size).
        None: not a frame."""
        if self.prov is None:
            return None
        own = (getattr(self.prov, "frame_axes", None) or {}).get(key)
        if own is not None:
            return tuple(own)
        kind, k = key.rstrip("0123456789"), int(key[len(key.rstrip("0123456789")):] or 0)
        fm = self.frames.get(k) if kind == "operand" else None
        if fm is None:
            return None
        shape = value_shape(self.inputs[k]) or ()
        return tuple((int(lo), int(st), int(n)) for lo, st, n in zip(fm.low, fm.stride, shape, strict=True))

    def grid_axes(self, key: str) -> tuple[int, int] | None:
        """The two axes of tensor ``key`` the op draws as rows and columns (a convolution's
        spatial dims); None: the last two."""
        axes = getattr(self.prov, "grid_axes", None) if self.prov is not None else None
        got = (axes or {}).get(key)
        return None if got is None else (int(got[0]), int(got[1]))

    def _pad_value(self, fm: FrameMap, x: np.ndarray) -> Any:
        for po in fm.pad_operands:
            if po is not None and po < len(self.inputs):
                v = np.asarray(self.inputs[po])
                if v.ndim == 0:
                    return v[()]
        return np.zeros((), dtype=x.dtype)[()]

    def keys(self) -> list[str]:
        """Drawn tensors: every tensor operand, then every tensor result."""
        out = [f"operand{i}" for i, v in enumerate(self.inputs) if value_shape(v) is not None]
        return out + [f"result{r}" for r, v in enumerate(self.outputs) if value_shape(v) is not None]

    # --- provenance of one element -----------------------------------------------------
    def element_cells(self, result: int, index: Sequence[int]) -> list[CellGroup]:
        """The cells result element ``index`` derives from, grouped by (tensor, role)."""
        idx = tuple(int(i) for i in index)
        if self.prov is None:
            return []
        groups: list[CellGroup] = []
        if hasattr(self.prov, "window"):
            for fv in self.prov.window(result, idx):
                groups += self._fan_cells(fv)
        else:
            by: dict[tuple[int | None, str], list[tuple[int, ...]]] = {}
            for s in self.prov.sources(result, idx):
                by.setdefault((s.operand, s.role), []).append(s.index)
            for (operand, role), rows in by.items():
                groups += self.source_cells(operand, role, rows)
        return [g for g in groups if len(g.indices)]

    def framed(self, operand: int | None) -> FrameMap | None:
        """The frame an operand (or a padding-value operand) is read in, None when it has none."""
        for fm in self.frames.values():
            if operand == fm.operand or operand in fm.pad_operands:
                return fm
        return None

    def _fan_cells(self, fv: Any) -> list[CellGroup]:
        valid = np.asarray(fv.valid, dtype=bool)
        fm = self.framed(fv.operand)
        out: list[CellGroup] = []
        if fm is not None and fv.position is not None:
            pos = np.asarray(fv.position)[valid].reshape(int(valid.sum()), len(fm.shape))
            key = f"operand{fm.operand}"
            if fv.role == "pad_value":
                x = np.asarray(self.inputs[fm.operand])
                kinds = fm.kinds(x.shape)[tuple(pos.T)] if len(pos) else np.zeros(0, np.int8)
                out.append(CellGroup(key, "pad_value", _rows(pos[kinds != 2])))
                out.append(CellGroup(key, "dilation_hole", _rows(pos[kinds == 2])))
            else:
                out.append(CellGroup(key, fv.role, _rows(pos)))
            if fv.operand is None or fv.operand == fm.operand:
                return out
        if fv.operand is None or value_shape(self.inputs[fv.operand]) is None:
            return out
        index = np.asarray(fv.index)
        rank = index.shape[-1]
        rows = index[valid].reshape(-1, rank) if rank else np.zeros((int(valid.sum()), 0), np.int64)
        out.append(CellGroup(f"operand{fv.operand}", fv.role, _rows(rows)))
        return out

    def source_cells(self, operand: int | None, role: str, rows: list[tuple[int, ...]]) -> list[CellGroup]:
        fm = self.framed(operand)
        if operand is None:
            if fm is None:
                return []
            return [CellGroup(f"operand{fm.operand}", role, _rows(np.asarray(rows, dtype=np.int64)))]
        if value_shape(self.inputs[operand]) is None:
            return []
        arr = np.asarray(rows, dtype=np.int64).reshape(len(rows), -1)
        if fm is not None and fm.operand == operand:
            arr = np.asarray([fm.to_frame(r) for r in arr], dtype=np.int64).reshape(len(rows), -1)
        return [CellGroup(f"operand{operand}", role, _rows(arr))]

    # --- the board ---------------------------------------------------------------------
