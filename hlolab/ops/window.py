"""Windowed reductions: ``stablehlo.reduce_window`` (XLA ``ReduceWindow``) and
``stablehlo.select_and_scatter`` (XLA ``SelectAndScatter``).

reduce_window follows the spec line by line: ``padded_inputs = pad(inputs...,
init_values..., padding[:, 0], padding[:, 1], base_dilations - 1)``; the window
of ``result_index`` starts at ``window_start = result_index * window_strides``
and reads every ``window_dilations``-th position of ``padded_inputs``; each
window is reduced with ``body``. Evaluation builds ``padded_inputs`` once and
then folds over the K = prod(window_dimensions) window positions: step w reads
one strided view of ``padded_inputs`` (one element per result element) and
combines it into the accumulators, as numpy ufuncs for recognized bodies, as
ONE batched region application otherwise.

Choices the spec leaves to the implementation (listed here, as DESIGN.md asks):

* reduce_window ``schedule``: ``init_values`` first, then the window positions
  in row-major order, a left fold ``acc = body(acc, windows[w])``. XLA:CPU uses
  the same order when there is no padding or dilation (float sums bit-identical,
  tested); with padding it may reorder (a bf16 window summed column by column
  was measured), so oracle tests bound the difference there.
* Sub-f32 floats (bf16, f16, f8): every body application rounds to the element
  type, as the body's type says and as XLA:CPU does for reduce_window (measured
  against XLA:CPU: it does *not* accumulate bf16/f16 sums in f32 here).
* Padding and base-dilation holes hold ``init_values`` and take part in the
  fold (the spec's ``pad``). XLA:CPU skips those positions instead; the two
  agree whenever ``init_values`` is an identity of ``body`` (0 for add, -inf
  for max, ...), and explain() says so when a window touches padding.
* select_and_scatter: padded positions are never selected (as the reference
  interpreter and XLA); the first real element of a window starts the fold and
  a candidate replaces the current one when ``select(current, candidate)`` is
  false. A window without a real element selects nothing (the spec leaves this
  open, issue #731). Source elements are scattered in row-major order with
  ``scatter(result[selected_index], source[source_index])``, ``init_value``
  written once per result element (as XLA:CPU).
* Integers wrap at their bit width; float maximum/minimum propagate NaN and
  order -0.0 < +0.0, exactly as the element-wise ops.

Quantized tensors: the values are storage integers; the region runs on them (no numpy
path), so its ops apply their quantized rules (hlolab.ops.quantized).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any

import numpy as np

from hlolab.errors import ExecutionError
from hlolab.ir.module import Region
from hlolab.messages import Msg
from hlolab.numerics import is_float_dtype, takes_first
from hlolab.ops.common import (
    check_value,
    contiguous,
    dims_fit,
    per_tensor_type,
    shapes_compatible,
    wrap_int,
)
from hlolab.ops.compare import compare_arrays, default_compare_type
from hlolab.ops.elementwise import _NARROW_FLOATS, _compute, _wide
from hlolab.ops.frame import (
    AT_HOLE,
    AT_OPERAND,
    AT_PADDING,
    POSITION_KINDS,
    PaddedFrame,
    dim_position_kind,
    is_operand,
    position_kind,
)
from hlolab.ops.record import (
    Attrs,
    ErrorFn,
    InferError,
    Inferred,
    Partial,
    attr,
    ints,
    pairs,
    record,
)
from hlolab.ops.regions import (
    BOOL_UFUNCS,
    INT_UFUNCS,
    can_combine_at,
    check_combiner_types,
    check_inputs_and_inits,
    combine_at,
    recognize_binary,
    recognize_binary_each,
)
from hlolab.ops.registry import OpCall, op
from hlolab.ops.scatter import wave_numbers
from hlolab.ops.shape import same_element
from hlolab.trace.explain import DimRole, Explanation, Step, format_value
from hlolab.trace.fanin import Fan, FanInProvenance, expand
from hlolab.trace.provenance import (
    AnimationStep,
    FrameMap,
    Provenance,
    Source,
    Target,
    _check_mask,
    _merge,
    check_index,
    value_shape,
)
from hlolab.types import ElementType, QuantizedElementType, TensorType, Type

EXPLAIN_MAX_WINDOWS = 32  # select_and_scatter explain lists at most this many windows


# --- window geometry --------------------------------------------------------------------

@dataclass(frozen=True)
class WindowParams:
    """The window attributes of one op instance and the shapes the spec derives."""

    input_shape: tuple[int, ...]
    window_dimensions: tuple[int, ...]
    window_strides: tuple[int, ...]
    base_dilations: tuple[int, ...]
    window_dilations: tuple[int, ...]
    padding: tuple[tuple[int, int], ...]

    @property
    def rank(self) -> int:
        return len(self.input_shape)

    @property
    def padding_low(self) -> tuple[int, ...]:
        return tuple(p[0] for p in self.padding)

    @property
    def padding_high(self) -> tuple[int, ...]:
        return tuple(p[1] for p in self.padding)

    @cached_property
    def frame(self) -> PaddedFrame:
        """``padded_inputs``' geometry: pad(inputs, ·, padding[:, 0], padding[:, 1],
        base_dilations - 1)."""
        return PaddedFrame(self.input_shape, self.padding_low, self.padding_high,
                           tuple(b - 1 for b in self.base_dilations))

    @property
    def dilated_input_shape(self) -> tuple[int, ...]:
        return self.frame.dilated_shape

    @property
    def padded_input_shape(self) -> tuple[int, ...]:
        """The spec's padded shape (a size cropped below 0 stays negative here)."""
        return self.frame.padded_shape

    @property
    def dilated_window_shape(self) -> tuple[int, ...]:
        return tuple((w - 1) * d + 1 for w, d in zip(self.window_dimensions, self.window_dilations,
                                                     strict=True))

    @property
    def num_windows(self) -> tuple[int, ...]:
        out = []
        for p, w, s in zip(self.padded_input_shape, self.dilated_window_shape, self.window_strides,
                           strict=True):
            is_empty_window = p <= 0 or w > p  # p < 0: negative padding cropped everything
            out.append(0 if is_empty_window else (p - w) // s + 1)
        return tuple(out)

    def window_slices(self, w: Sequence[int], result_shape: Sequence[int]) -> tuple[slice, ...]:
        """Window position ``w`` of every result element: one strided view of padded_inputs."""
        return tuple(slice(wd * dil, wd * dil + (n - 1) * st + 1, st)
                     for wd, dil, n, st in zip(w, self.window_dilations, result_shape,
                                               self.window_strides, strict=True)) + (Ellipsis,)
        # (the Ellipsis keeps rank-0 reads arrays, not numpy scalars)

    def positions(self) -> list[tuple[int, ...]]:
        """The window positions w in row-major order (the schedule)."""
        return list(np.ndindex(*self.window_dimensions))


def _optional(codec: Any) -> Any:
    """A window attribute the op may leave out: None when absent (the default, ones or
    zero padding, depends on the rank)."""
    return attr(codec, default=None)


@record
class ReduceWindowAttrs(Attrs):
    """reduce_window's attributes (the spec's names), in the order MLIR prints them."""

    base_dilations: tuple[int, ...] | None = _optional(ints("base_dilations"))
    padding: tuple[tuple[int, int], ...] | None = _optional(pairs("padding"))
    window_dilations: tuple[int, ...] | None = _optional(ints("window_dilations"))
    window_dimensions: tuple[int, ...] = attr(ints("window_dimensions"))
    window_strides: tuple[int, ...] | None = _optional(ints("window_strides"))


@record
class SelectAndScatterAttrs(Attrs):
    """select_and_scatter's attributes (the spec's names; no dilations). The reference
    interpreter lets every one default: window 1, stride 1, padding 0."""

    window_dimensions: tuple[int, ...] | None = _optional(ints("window_dimensions"))
    window_strides: tuple[int, ...] | None = _optional(ints("window_strides"))
    padding: tuple[tuple[int, int], ...] | None = _optional(pairs("padding"))


WindowAttrs = ReduceWindowAttrs | SelectAndScatterAttrs


@lru_cache(maxsize=256)
def window_params(rec: WindowAttrs, input_shape: tuple[int, ...]) -> WindowParams:
    """The window of ``rec`` over an input of ``input_shape``, absent attributes at the
    spec's defaults (strides and dilations 1, padding 0). The sizes are checked by verify
    (or ``check_window``) first."""
    ones = (1,) * len(input_shape)

    def given(v: Any, default: Any) -> Any:
        return v if v is not None else default

    dilations = (rec.base_dilations, rec.window_dilations) if isinstance(rec, ReduceWindowAttrs) \
        else (None, None)
    return WindowParams(tuple(int(s) for s in input_shape), given(rec.window_dimensions, ones),
                        given(rec.window_strides, ones), given(dilations[0], ones),
                        given(dilations[1], ones), given(rec.padding, ((0, 0),) * len(input_shape)))


def _check_sizes(err: ErrorFn, rank: int, name: str, values: Sequence[int], c_size: str,
                 c_positive: str | None, what: str) -> None:
    if len(values) != rank:
        raise err(c_size, f"size({name}) = {len(values)} must equal rank({what}) = {rank} "
                  f"({name} = {list(values)})")
    if c_positive is not None and any(v <= 0 for v in values):
        raise err(c_positive, f"{name} = {list(values)} must be positive (0 < {name})")


def check_window(err: ErrorFn, p: WindowParams, labels: dict[str, tuple[str, str]], what: str) -> None:
    """The sizes (and signs) of the window attributes against the input's rank, with the
    op's constraint labels: ``labels[name] = (size label, positive label)``, in order."""
    for name, (c_size, c_positive) in labels.items():
        _check_sizes(err, p.rank, name, getattr(p, name), c_size, c_positive, what)


def check_padding(err: ErrorFn, p: WindowParams, label: str, what: str) -> None:
    if len(p.padding) != p.rank:
        raise err(label, f"shape(padding) = [{len(p.padding)}, 2] must be [rank({what}), 2] = "
                  f"[{p.rank}, 2]")


_RW_LABELS = {"window_dimensions": ("C4", "C5"), "window_strides": ("C6", "C7"),
              "base_dilations": ("C8", "C9"), "window_dilations": ("C10", "C11")}
_SAS_LABELS = {"window_dimensions": ("C4", "C5"), "window_strides": ("C6", "C7")}


def infer_reduce_window(rec: ReduceWindowAttrs, operand_types: list[Type]) -> list[Inferred]:
    """One result per input, of the (C15) shape num_windows; the element types are the
    body's (C16), which may be wider than the inputs' (is_promotable), so left open here."""
    n = len(operand_types) // 2
    if n == 0 or len(operand_types) != 2 * n:
        raise InferError("C1", f"0 < size(inputs) = size(init_values) does not hold: "
                         f"{len(operand_types)} operands")
    if not all(isinstance(t, TensorType) for t in operand_types):
        raise InferError("I1", "inputs and init_values must be tensors")
    shape0 = operand_types[0].shape  # type: ignore[union-attr]
    for t in operand_types[1:n]:
        if not shapes_compatible(t.shape, shape0):  # type: ignore[union-attr]
            raise InferError("C2", f"same(shape(inputs...)) does not hold: {t} and {operand_types[0]}")
    known = tuple(0 if d is None else d for d in shape0)  # sizes stand in for ? (result ? there)
    p = window_params(rec, known)
    check_window(InferError, p, _RW_LABELS, "inputs[0]")
    check_padding(InferError, p, "C12", "inputs[0]")
    shape = tuple(None if d is None else w for d, w in zip(shape0, p.num_windows, strict=True))
    return [Partial(shape) for _ in range(n)]


def infer_select_and_scatter(rec: SelectAndScatterAttrs, operand_types: list[Type]) -> list[Inferred]:
    """The operand's shape (C11); the element type is the scatter region's (C12), which may
    be wider than the operand's (is_promotable), so left open here."""
    if len(operand_types) != 3:
        raise InferError(None, f"select_and_scatter takes (operand, source, init_value), got "
                         f"{len(operand_types)} operands")
    operand = operand_types[0]
    if not isinstance(operand, TensorType):
        raise InferError("I1", f"operand must be a tensor, got {operand}")
    return [Partial(operand.shape)]


def source_shape(rec: SelectAndScatterAttrs, operand_shape: Sequence[int]) -> tuple[int, ...]:
    """The (C2) shape of select_and_scatter's source: num_windows of the operand; InferError
    when the window attributes do not fit the operand's rank."""
    p = window_params(rec, tuple(operand_shape))
    check_window(InferError, p, _SAS_LABELS, "operand")
    check_padding(InferError, p, "C8", "operand")
    return p.num_windows


def window_layout(params: WindowParams | OpCall, result_index: Sequence[int],
                  input_shape: Sequence[int] | None = None) -> np.ndarray:
    """What each window position of result element ``result_index`` falls on in the
    padded/dilated base: an array of shape ``window_dimensions`` holding "operand" (a
    real input element), "padding" (outside the dilated input) or "hole" (between two
    dilated input elements). ``params`` may be an op call (with ``input_shape``, or the
    static shape of its first operand)."""
    if isinstance(params, OpCall):
        if input_shape is None:
            t = params.operand_types[0]
            assert isinstance(t, TensorType)
            input_shape = t.shape  # type: ignore[assignment]
        assert input_shape is not None
        params = window_params(params.attrs, tuple(input_shape))
    kinds = _position_kinds(params, tuple(np.asarray(i, np.int64) for i in result_index))
    return np.array(POSITION_KINDS)[kinds]


def _window_positions(p: WindowParams, ridx: tuple[np.ndarray, ...]) -> list[np.ndarray]:
    """position = window_start + w * window_dilations for result indices ``ridx`` (shape S)
    and every window offset w: arrays of shape S + window_dimensions."""
    r = p.rank
    offsets = np.indices(p.window_dimensions, dtype=np.int64) if r else []
    return [expand(ridx[d], r) * p.window_strides[d] + offsets[d] * p.window_dilations[d]
            for d in range(r)]


def _position_kinds(p: WindowParams, ridx: tuple[np.ndarray, ...]) -> np.ndarray:
    """``frame.AT_*`` (0 operand, 1 padding, 2 hole) per window position (shape S +
    window_dimensions). A position outside the dilated input in any dim is padding."""
    return position_kind(p.frame.classify(_window_positions(p, ridx))[1])


# --- per-step combination (exact element-wise semantics) --------------------------------

def combine_step(kind: str, et: ElementType, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``body(a, b)`` for a recognized body ``kind``, exactly the element-wise op's value."""
    a, b = np.asarray(a), np.asarray(b)
    if kind == "keep":
        return a
    if kind == "replace":
        return b
    if et.is_bool:
        return BOOL_UFUNCS[kind](a, b)
    if et.is_int:
        return wrap_int(INT_UFUNCS[kind](_wide(a, et), _wide(b, et)), et)
    if kind in ("maximum", "minimum") and et.is_float:
        # selected from the operands themselves: bit-identical to one of them (NaN payloads too)
        return np.where(takes_first(a, b, kind == "maximum"), a, b)
    uf = np.add if kind == "add" else np.multiply
    with np.errstate(all="ignore"):
        return np.asarray(uf(_compute(a), _compute(b))).astype(et.dtype)


# --- reduce_window: verification ---------------------------------------------------------

def _region_signature(region: Region) -> tuple[list[Any], list[Any] | None, str]:
    block = region.entry
    got = [a.type for a in block.args]
    ret = block.ops[-1] if block.ops else None
    rtypes = list(ret.operand_types) if ret is not None and ret.name.endswith("return") else None
    have = f"({', '.join(str(g) for g in got)}) -> " + (
        f"({', '.join(str(r) for r in rtypes)})" if rtypes is not None else "no return")
    return got, rtypes, have


def _verify_reduce_window(ctx: OpCall) -> None:
    inputs, _ = check_inputs_and_inits(ctx, "C1", "C2", "C3")
    shape0 = inputs[0].shape
    r = len(shape0)
    p = window_params(ctx.attrs, tuple(0 if d is None else d for d in shape0))
    check_window(ctx.error, p, _RW_LABELS, "inputs[0]")
    es = check_combiner_types(ctx, inputs, "C13")
    check_padding(ctx.error, p, "C12", "inputs[0]")
    results = [per_tensor_type(ctx, t, "C14", f"results[{i}]") for i, t in enumerate(ctx.result_types)]
    for i, t in enumerate(results):
        if not shapes_compatible(t.shape, results[0].shape):
            raise ctx.error("C14", f"same(shape(results...)) does not hold: results[{i}] is {t}, "
                            f"results[0] is {results[0]}")
    if all(s is not None for s in shape0):
        want_shape = p.num_windows
        if results[0].rank != r or not all(dims_fit(a, b) for a, b in zip(results[0].shape, want_shape,
                                                                       strict=True)):
            raise ctx.error("C15", f"shape(results[0]) = {list(results[0].shape)} must be num_windows "
                            f"= {list(want_shape)} (padded_input_shape = {list(p.padded_input_shape)}, "
                            f"dilated_window_shape = {list(p.dilated_window_shape)}, window_strides = "
                            f"{list(p.window_strides)})")
    elif results[0].rank != r:
        raise ctx.error("C15", f"rank(results[0]) = {results[0].rank} must be rank(inputs[0]) = {r}")
    for i, (t, e) in enumerate(zip(results, es, strict=True)):
        if not same_element(t.element, e):
            raise ctx.error("C16", f"element_type(results[{i}]) = {t.element} must be E{i} = {e} "
                            "(the body's element type)")


# --- reduce_window: evaluation -----------------------------------------------------------

def _body_elements(ctx: OpCall, region: int = 0) -> list[Any]:
    block = ctx.op.regions[region].entry
    n = len(block.args) // 2
    return [a.type.element for a in block.args[:n]]


def _has_neg_zero(*arrays: np.ndarray) -> bool:
    return any(bool(np.any((a == 0) & np.signbit(a))) for a in arrays)


def _fold_recognized(kind: str, et: ElementType, base: np.ndarray, init: np.ndarray,
                     p: WindowParams, out_shape: tuple[int, ...]) -> np.ndarray:
    """The left fold acc = body(acc, windows[w]) over w in row-major order, with in-place
    numpy ufuncs: one vectorized step per window position."""
    positions = p.positions()
    dt = et.dtype
    if kind == "keep":
        return np.full(out_shape, init, dtype=dt)
    if kind == "replace":
        return np.array(base[p.window_slices(positions[-1], out_shape)], dtype=dt)
    slices = [p.window_slices(w, out_shape) for w in positions]
    if et.is_bool:
        uf = BOOL_UFUNCS[kind]
        acc = np.full(out_shape, init, dtype=np.bool_)
        for sl in slices:
            uf(acc, base[sl], out=acc)
        return acc
    if et.is_int:
        uf = INT_UFUNCS[kind]
        if np.dtype(dt).kind in "iu":  # numpy integer arithmetic wraps at the bit width
            acc = np.full(out_shape, init, dtype=dt)
            for sl in slices:
                uf(acc, base[sl], out=acc)
            return acc
        wb = _wide(base, et)  # int2/int4...: compute in 64 bits, wrap once (exact mod 2^64)
        acc = np.full(out_shape, _wide(np.asarray(init), et), dtype=wb.dtype)
        for sl in slices:
            uf(acc, wb[sl], out=acc)
        return wrap_int(acc, et)
    with np.errstate(all="ignore"):
        if kind in ("add", "multiply"):
            uf = np.add if kind == "add" else np.multiply
            if dt in _NARROW_FLOATS:
                # computed in f32, rounded to the element type after every step (XLA:CPU)
                cb = base.astype(np.float32)
                acc = np.full(out_shape, np.float32(init.astype(np.float32)), dtype=np.float32)
                for sl in slices:
                    uf(acc, cb[sl], out=acc)
                    acc[...] = acc.astype(dt)
                return acc.astype(dt)
            acc = np.full(out_shape, init, dtype=dt)
            for sl in slices:
                uf(acc, base[sl], out=acc)
            return acc
        # float maximum/minimum: np.maximum is exact unless NaN or -0.0 takes part
        cb, ci = _compute(base), _compute(np.asarray(init))
        uf = np.maximum if kind == "maximum" else np.minimum
        acc = np.full(out_shape, ci, dtype=cb.dtype)
        for sl in slices:
            uf(acc, cb[sl], out=acc)
        # one probe pass: min |acc| is NaN when a NaN took part, 0 when some result is +-0
        probe = np.abs(acc).min() if acc.size else np.float32(1)
        if not (np.isnan(probe) or (probe == 0 and _has_neg_zero(cb, ci))):
            return acc.astype(dt, copy=False)
        res = np.full(out_shape, init, dtype=dt)  # the exact element-wise formula, step by step
        for sl in slices:
            step = base[sl]
            res = np.where(takes_first(res, step, kind == "maximum"), res, step)
        return res


def _split_rw(operands: Sequence[Any]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    n = len(operands) // 2
    return list(operands[:n]), list(operands[n:])


def _reduce_window_inputs(ctx: OpCall, operands: Sequence[Any]):
    inputs, inits = _split_rw(operands)
    n = len(inputs)
    for i in range(n):
        check_value(ctx, inputs[i], ctx.operand_types[i], f"inputs[{i}]")
        check_value(ctx, inits[i], ctx.operand_types[n + i], f"init_values[{i}]")
    for i, x in enumerate(inputs):
        if x.shape != inputs[0].shape:
            raise ExecutionError(f"{ctx.name}: inputs[{i}] has shape {x.shape} at run time, "
                                 f"inputs[0] has {inputs[0].shape}", ctx.loc)
    es = _body_elements(ctx)
    # to_destination_type: the body's Ei may be wider than the inputs (is_promotable)
    inputs = [x.astype(e.dtype, copy=False) for x, e in zip(inputs, es, strict=True)]
    inits = [np.asarray(v).astype(e.dtype) for v, e in zip(inits, es, strict=True)]
    return inputs, inits, es


@op("stablehlo.reduce_window", aliases=("ReduceWindow",), verify=_verify_reduce_window,
    attrs=ReduceWindowAttrs, infer=infer_reduce_window, family="window",
    provenance=lambda ctx, inputs, outputs: reduce_window_provenance(ctx, inputs, outputs),
    explain=lambda ctx, inputs, outputs, result, index: reduce_window_explain(
        ctx, inputs, outputs, result, index))
def reduce_window(ctx: OpCall, *operands: np.ndarray) -> list[np.ndarray]:
    """results...[result_index] = reduce(windows, init_values, body): each window of the
    padded/dilated inputs folded with body, init_values first, positions in row-major order."""
    inputs, inits, es = _reduce_window_inputs(ctx, operands)
    p = window_params(ctx.attrs, inputs[0].shape)
    out_shape = p.num_windows
    if 0 in out_shape:
        return [np.zeros(out_shape, dtype=e.dtype) for e in es]
    bases = [p.frame.materialize(x, v, ctx.element_budget) for x, v in zip(inputs, inits, strict=True)]
    kinds = recognize_binary_each(ctx.op.regions[0])
    if kinds is not None and all(can_combine_at(k, e) for k, e in zip(kinds, es, strict=True)):
        return [_fold_recognized(k, e, b, v, p, out_shape)
                for k, e, b, v in zip(kinds, es, bases, inits, strict=True)]
    # any other body: one batched region application per window position
    accs = [np.full(out_shape, v, dtype=e.dtype) for v, e in zip(inits, es, strict=True)]
    for w in p.positions():
        sl = p.window_slices(w, out_shape)
        outs = ctx.run_region(0, accs + [b[sl] for b in bases])
        accs = [np.broadcast_to(np.asarray(o, dtype=e.dtype), out_shape)
                for o, e in zip(outs, es, strict=True)]
    return [np.array(a) for a in accs]


# --- reduce_window: provenance -----------------------------------------------------------

SCHEDULE_REDUCE_WINDOW = Msg("window.schedule.reduce_window")


def reduce_window_provenance(ctx: OpCall, inputs: list[Any], outputs: list[Any]) -> FanInProvenance:
    """Per result element: init_values[k] (``init``), then the window positions of
    inputs[k] (``window``, real elements) and of the padding / dilation holes
    (``pad_value``, read from init_values[k]). With a recognized body result k depends
    on input k only; any other body may mix all inputs."""
    n = len(inputs) // 2
    p = window_params(ctx.attrs, inputs[0].shape)
    kinds = recognize_binary_each(ctx.op.regions[0])
    frame = p.frame.shape
    r = p.rank

    def fans(result: int, ridx: tuple[np.ndarray, ...]) -> list[Fan]:
        pos = _window_positions(p, ridx)
        q, dim_kinds = p.frame.classify(pos)  # q: operand_index (meaningful where real)
        real = is_operand(dim_kinds)
        if r == 0:
            real = np.ones(ridx[0].shape if ridx else (), dtype=bool)
        ks = [result] if kinds is not None else list(range(n))
        # rank 0: no position arrays (fanin's FanView cannot stack an empty position tuple)
        position = tuple(pos) if r else None
        out = [Fan(n + k, "init", ()) for k in ks]
        for k in ks:
            out.append(Fan(k, "window", tuple(q), valid=real, frame=frame, position=position))
            out.append(Fan(n + k, "pad_value", (), valid=~real, frame=frame, position=position))
        return out

    prov = FanInProvenance([value_shape(v) for v in outputs], [value_shape(v) for v in inputs], fans,
                           schedule=SCHEDULE_REDUCE_WINDOW)
    prov.frames = {k: FrameMap.of(k, p.frame, (n + k,)) for k in range(n)}
    if kinds is not None and kinds[0] in ("maximum", "minimum") and r:
        prov.marks = _winner_marks(prov, inputs, outputs, n)
    windowed = [d for d in range(r) if p.window_dimensions[d] > 1 or p.padding[d] != (0, 0)]
    if r > 2 and len(windowed) == 2:  # e.g. NHWC pooling: draw the pooled dims as the grid
        prov.grid_axes = {f"{kind}{k}": (windowed[0], windowed[1])
                          for k in range(n) for kind in ("operand", "result")}
    return prov


def _winner_marks(prov: FanInProvenance, inputs: list[Any], outputs: list[Any], n: int) -> Any:
    """For renderers, a max / min pool's winner: the first real window element (row-major)
    equal to the result (NaN: the first NaN); none when the init value won."""

    def marks(result: int, index: tuple[int, ...]) -> list[tuple[int, tuple[int, ...], str]]:
        want = np.asarray(outputs[result])[tuple(index)]
        for fv in prov.window(result, tuple(index)):
            if fv.operand != result or fv.role != "window":
                continue
            vals = np.asarray(inputs[result])[tuple(np.moveaxis(fv.index, -1, 0))]
            hit = fv.valid & ((vals == want) | (np.isnan(vals) & np.isnan(want))
                              if vals.dtype.kind in "fc" else fv.valid & (vals == want))
            if hit.any():
                first = np.argwhere(hit)[0]
                return [(result, tuple(int(i) for i in fv.index[tuple(first)]), "winner")]
        return []

    return marks


# --- reduce_window: explain --------------------------------------------------------------

def _t(xs: Any) -> tuple[int, ...]:
    return tuple(int(x) for x in xs)


def _mul(a: Sequence[int], b: Sequence[int]) -> tuple[int, ...]:
    return tuple(int(x) * int(y) for x, y in zip(a, b, strict=True))


def _list(xs: Sequence[int]) -> str:
    """``0, 1``: an index written inside brackets."""
    return ", ".join(str(int(x)) for x in xs)


def _args(values: Sequence[Any]) -> str:
    """``3, 0``: numbers as a call's arguments."""
    return ", ".join(format_value(v) for v in values)


def reduce_window_explain(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
                          index: tuple) -> Explanation:
    """results[result][index]: the window's geometry, each window element with where it
    falls (operand element, padding or base-dilation hole), and the fold step by step."""
    if not 0 <= result < len(outputs):
        raise ExecutionError(f"result #{result} does not exist (the op has {len(outputs)} results)")
    idx = check_index(value_shape(outputs[result]), index, f"result #{result} index")
    xs, inits, es = _reduce_window_inputs(ctx, inputs)
    n = len(xs)
    p = window_params(ctx.attrs, xs[0].shape)
    kinds = recognize_binary_each(ctx.op.regions[0])
    ks = [result] if kinds is not None else list(range(n))
    names = [v.name for v in ctx.op.operands]
    window_start = _mul(idx, p.window_strides)
    window_end = tuple(s + (w - 1) * d + 1 for s, w, d in zip(window_start, p.window_dimensions,
                                                             p.window_dilations, strict=True))
    steps = [
        Step("dilated_input_shape", Msg("window.rw.dilated_input_shape.formula"), p.dilated_input_shape,
             substituted=Msg("window.rw.dilated_input_shape.substituted", shape=list(p.input_shape),
                             base_dilations=list(p.base_dilations))),
        Step("padded_input_shape", Msg("window.rw.padded_input_shape.formula"), p.padded_input_shape,
             substituted=Msg("window.rw.padded_input_shape.substituted", low=list(p.padding_low),
                             dilated_input_shape=list(p.dilated_input_shape), high=list(p.padding_high))),
        Step("window_start", Msg("window.rw.window_start.formula"), window_start,
             substituted=Msg("window.rw.window_start.substituted", result_index=idx,
                             window_strides=p.window_strides)),
        Step("window_end", Msg("window.rw.window_end.formula"), window_end,
             substituted=Msg("window.rw.window_end.substituted", window_start=window_start,
                             window_dimensions=p.window_dimensions, window_dilations=p.window_dilations)),
    ]
    positions = p.positions()
    window_vals: dict[int, list[Any]] = {k: [] for k in ks}
    counts = {AT_PADDING: 0, AT_HOLE: 0}  # padding positions, base-dilation holes
    # every window position in the frame: its operand index and, per dim, what it falls on
    window_q, window_kinds = p.frame.classify(_window_positions(p, tuple(np.asarray(i, np.int64)
                                                                         for i in idx)))
    layout = position_kind(window_kinds)
    low = p.padding_low
    for k in ks:
        children = []
        for w in positions:
            pos = tuple(s + wi * d for s, wi, d in zip(window_start, w, p.window_dilations, strict=True))
            rel = tuple(x - lo for x, lo in zip(pos, low, strict=True))
            # per dim: outside the dilated input is padding, between two input elements a hole
            roles = {d: DimRole(POSITION_KINDS[int(dim_position_kind(window_kinds[d][w]))])
                     for d in range(p.rank)}
            kind = int(layout[w])
            sub = [Step("position", Msg("window.rw.position.formula"), pos,
                        substituted=Msg("window.rw.position.substituted", window_start=window_start, w=w,
                                        window_dilations=p.window_dilations))]
            if kind == AT_OPERAND:
                q = tuple(int(window_q[d][w]) for d in range(p.rank))
                v = xs[k][q]
                sub.append(Step("operand_index", Msg("window.rw.operand_index.formula"), q,
                                substituted=Msg("window.rw.operand_index.substituted", position=pos, low=low,
                                                base_dilations=p.base_dilations)))
                sub.append(Step(f"inputs[{k}][operand_index]", None, v,
                                substituted=Msg("explain.element", name=names[k], index=_list(q))))
            else:
                counts[kind] += k == result
                v = inits[k][()]
                if kind == AT_PADDING:
                    sub.append(Step(f"init_values[{k}]", Msg("window.rw.padding.formula"), v,
                                    substituted=Msg("window.rw.padding.substituted", position=pos, low=low,
                                                    rel=rel, dilated_input_shape=p.dilated_input_shape)))
                else:
                    rem = tuple(x % b for x, b in zip(rel, p.base_dilations, strict=True))
                    sub.append(Step(f"init_values[{k}]", Msg("window.rw.hole.formula"), v,
                                    substituted=Msg("window.rw.hole.substituted", position=pos, low=low,
                                                    base_dilations=p.base_dilations, remainder=rem)))
            window_vals[k].append(v)
            children.append(Step(f"windows[{k}][{_list(w)}]", Msg("window.rw.element.formula", k=k), v,
                                 dim_roles=roles, children=sub,
                                 substituted=Msg("window.rw.element.substituted", k=k, position=pos)))
        arr = np.array(window_vals[k], dtype=es[k].dtype).reshape(p.window_dimensions)
        steps.append(Step(f"windows[{k}]", Msg("window.rw.windows.formula", k=k), arr, children=children,
                          substituted=Msg("window.rw.windows.substituted", k=k, window_start=window_start,
                                          window_end=window_end, window_dilations=p.window_dilations)))
    # the fold, step by step
    accs = [inits[k].copy() for k in range(n)]
    fold_children = []
    body = kinds[result] if kinds is not None else "body"
    running_ok = True
    for j, w in enumerate(positions):
        elems = [np.asarray(window_vals[k][j], dtype=es[k].dtype) if k in window_vals else None
                 for k in range(n)]
        before = [a[()] for a in accs]
        if kinds is not None and can_combine_at(kinds[result], es[result]):
            accs[result] = combine_step(kinds[result], es[result], accs[result], elems[result])
        else:
            try:
                outs = ctx.run_region(0, accs + elems)
            except NotImplementedError:
                running_ok = False
                break
            accs = [np.asarray(o, dtype=e.dtype).reshape(()) for o, e in zip(outs, es, strict=True)]
        if kinds is None and n > 1:  # a general body reads every accumulator and window element
            formula = Msg("window.rw.acc.formula_all", k=result)
            args = [*before, *(e[()] for e in elems)]
        else:
            formula = Msg("window.rw.acc.formula", k=result)
            args = [before[result], elems[result][()]]
        fold_children.append(Step(Msg("window.rw.acc.name", w=w), formula,
                                  np.asarray(accs[result]).astype(es[result].dtype)[()],
                                  substituted=Msg("explain.apply", op=body, args=_args(args))))
    value = outputs[result][idx]
    steps.append(Step(f"results[{result}][result_index]", Msg("window.rw.result.formula"), value,
                      children=fold_children,
                      substituted=Msg("window.rw.result.substituted", k=result, init=inits[result][()],
                                      axes=list(range(p.rank)), body=body)))
    notes = []
    if kinds is not None:
        notes.append(Msg("window.rw.note.recognized", kinds=", ".join(kinds)))
    else:
        notes.append(Msg("window.rw.note.general"))
    et = es[result]
    if isinstance(et, ElementType) and et.is_float and et.dtype in _NARROW_FLOATS:
        notes.append(Msg("window.rw.note.narrow", type=str(et)))
    if counts[AT_PADDING] or counts[AT_HOLE]:
        notes.append(Msg("window.rw.note.pad_value", padding=counts[AT_PADDING], holes=counts[AT_HOLE]))
    if isinstance(et, ElementType) and (et.is_float or et.is_complex) and len(positions) > 1:
        notes.append(Msg("window.rw.note.order"))
    if not running_ok:
        notes.append(Msg("window.rw.note.interpreter"))
    return Explanation(ctx.op.name, idx, steps, value, notes, result)


# --- select_and_scatter: verification ----------------------------------------------------

def _verify_select_and_scatter(ctx: OpCall) -> None:
    types = ctx.operand_types
    if len(types) != 3 or len(ctx.result_types) != 1:
        raise ctx.error(None, f"select_and_scatter takes (operand, source, init_value) and has one "
                        f"result, got {len(types)} operands and {len(ctx.result_types)} results")
    operand = per_tensor_type(ctx, types[0], "I1", "operand")
    source = per_tensor_type(ctx, types[1], "I2", "source")
    init = per_tensor_type(ctx, types[2], "I3", "init_value")
    if init.rank != 0:
        raise ctx.error("I3", f"init_value must be a 0-dimensional tensor, got {init}")
    if not same_element(operand.element, source.element):
        raise ctx.error("C1", f"element_type(operand) = {operand.element} must equal "
                        f"element_type(source) = {source.element}")
    if not same_element(init.element, operand.element):
        raise ctx.error("C3", f"element_type(init_value) = {init.element} must equal "
                        f"element_type(operand) = {operand.element}")
    r = operand.rank
    p = window_params(ctx.attrs, tuple(0 if d is None else d for d in operand.shape))
    check_window(ctx.error, p, _SAS_LABELS, "operand")
    check_padding(ctx.error, p, "C8", "operand")
    if all(s is not None for s in operand.shape):
        want = p.num_windows
        if source.rank != r or not all(dims_fit(a, b) for a, b in zip(source.shape, want, strict=True)):
            raise ctx.error("C2", f"shape(source) = {list(source.shape)} must be num_windows = "
                            f"{list(want)} (padded_operand_shape = {list(p.padded_input_shape)}, "
                            f"window_dimensions = {list(p.window_dimensions)}, window_strides = "
                            f"{list(p.window_strides)})")
    elif source.rank != r:
        raise ctx.error("C2", f"rank(source) = {source.rank} must be rank(operand) = {r}")
    if len(ctx.op.regions) != 2 or not all(rg.blocks for rg in ctx.op.regions):
        raise ctx.error("C9", "select_and_scatter needs two regions: select and scatter")
    got, rtypes, have = _region_signature(ctx.op.regions[0])
    e = operand.element
    ok = (len(got) == 2 and all(isinstance(g, TensorType) and g.rank == 0 and same_element(g.element, e)
                                for g in got)
          and rtypes is not None and len(rtypes) == 1 and isinstance(rtypes[0], TensorType)
          and rtypes[0].rank == 0 and isinstance(rtypes[0].element, ElementType)
          and rtypes[0].element.is_bool)
    if not ok:
        raise ctx.error("C9", f"select must have type (tensor<{e}>, tensor<{e}>) -> tensor<i1>, "
                        f"got {have}")
    (es,) = check_combiner_types(ctx, [operand], "C10", "scatter", region=1)
    result = per_tensor_type(ctx, ctx.result_types[0], "C11", "result")
    if result.rank != r or not all(dims_fit(a, b) for a, b in zip(result.shape, operand.shape, strict=True)):
        raise ctx.error("C11", f"shape(result) = {list(result.shape)} must equal shape(operand) = "
                        f"{list(operand.shape)}")
    if not same_element(result.element, es):
        raise ctx.error("C12", f"element_type(result) = {result.element} must be E = {es} (the "
                        "scatter region's element type)")


# --- select_and_scatter: evaluation ------------------------------------------------------

def _select_floor(region: Region, dtype: np.dtype) -> float | None:
    """The value a recognized float select never prefers to a finite one: -inf for GE/GT
    (max-like), +inf for LE/LT; None for other selects and types."""
    rec = _recognized_select(region)
    if rec is None or not is_float_dtype(dtype):
        return None
    return {"GE": -np.inf, "GT": -np.inf, "LE": np.inf, "LT": np.inf}.get(rec[0])


def _recognized_select(region: Region) -> tuple[str, str | None] | None:
    """(direction, compare_type) when select is one compare of (arg0, arg1) (or of
    (arg1, arg0): the direction is mirrored), else None."""
    block = region.entry
    if len(block.ops) != 2 or len(block.args) != 2:
        return None
    if isinstance(block.args[0].type, TensorType) and block.args[0].type.is_quantized:
        return None  # dequantize_compare: the region runs (hlolab.ops.quantized)
    cmp, ret = block.ops
    if cmp.name != "stablehlo.compare" or ret.name not in ("stablehlo.return", "func.return", "return"):
        return None
    if len(ret.operands) != 1 or ret.operands[0] is not cmp.results[0] or len(cmp.operands) != 2:
        return None
    rec = OpCall(cmp).attrs
    # compare's record; without one (not yet typed) select just runs as a region
    direction = getattr(rec, "comparison_direction", None)
    ctype = getattr(rec, "compare_type", None)
    if direction is None:
        return None
    a0, a1 = block.args
    if cmp.operands[0] is a0 and cmp.operands[1] is a1:
        return direction, ctype
    if cmp.operands[0] is a1 and cmp.operands[1] is a0:
        mirror = {"GE": "LE", "LE": "GE", "GT": "LT", "LT": "GT", "EQ": "EQ", "NE": "NE"}
        return mirror[direction], ctype
    return None


def select_positions(ctx: OpCall, operand: np.ndarray, p: WindowParams,
                     source_shape: tuple[int, ...], exclude: np.ndarray | None = None) -> np.ndarray:
    """selected_index(source_index) for every source element, as the flat (row-major)
    operand index, -1 when the window holds no operand element. One batched select per
    window position (numpy for a lone compare). ``exclude`` (flat operand index per
    source element) leaves one element out of each window: the runner-up."""
    if 0 in source_shape:
        return np.zeros(source_shape, dtype=np.int64)
    # the padded operand (select_and_scatter has no base dilation) and, in the same frame,
    # each position's flat operand index (-1: padding)
    values = p.frame.materialize(operand, np.zeros((), operand.dtype), ctx.element_budget)
    flat = np.arange(operand.size, dtype=np.int64).reshape(operand.shape)
    index = p.frame.materialize(flat, -1, ctx.element_budget)
    et = _plain(ctx.operand_types[0])
    recognized = _recognized_select(ctx.op.regions[0])
    cur_val = np.zeros(source_shape, dtype=operand.dtype)
    cur_idx = np.full(source_shape, -1, dtype=np.int64)
    for w in p.positions():
        sl = p.window_slices(w, source_shape)
        cand, cidx = values[sl], index[sl]
        valid = (cidx >= 0) if exclude is None else (cidx >= 0) & (cidx != exclude)
        if not valid.any():
            continue
        if recognized is not None:
            direction, ctype = recognized
            with np.errstate(all="ignore"):
                s = compare_arrays(cur_val, cand, et, direction, ctype or default_compare_type(et))
        else:
            s = np.broadcast_to(np.asarray(ctx.run_region(0, [cur_val, contiguous(cand)])[0],
                                           dtype=bool), source_shape)
        # the first real element starts the fold; later ones win when select(current, candidate) is false
        take = valid & ((cur_idx < 0) | ~s)
        cur_val = np.where(take, cand, cur_val)
        cur_idx = np.where(take, cidx, cur_idx)
    return cur_idx


def _plain(t: Any) -> ElementType:
    """The element type; a quantized operand's storage type (its select runs as a region)."""
    assert isinstance(t, TensorType)
    return t.element.storage if isinstance(t.element, QuantizedElementType) else t.element


def _scatter_in_order(ctx: OpCall, result: np.ndarray, t: np.ndarray, v: np.ndarray,
                      et: ElementType) -> None:
    """result[t[j]] = scatter(result[t[j]], v[j]) for j in order, in place (result flat)."""
    kind = recognize_binary(ctx.op.regions[1])
    if kind is not None and can_combine_at(kind, et) and combine_at(kind, result, t, v, et):
        return
    if t.size == 0:
        return
    # any scatter body: wave k applies, in one batched call, the k-th update of every target
    occ = wave_numbers(t)
    order = np.argsort(occ, kind="stable")
    bounds = np.searchsorted(occ[order], np.arange(int(occ.max()) + 2))
    for k in range(int(occ.max()) + 1):
        sel = order[bounds[k]:bounds[k + 1]]
        tw = t[sel]
        out = ctx.run_region(1, [result[tw], v[sel]])[0]
        result[tw] = np.broadcast_to(np.asarray(out, dtype=et.dtype), tw.shape)


def _sas_inputs(ctx: OpCall, operands: Sequence[Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    operand, source, init_value = operands
    check_value(ctx, operand, ctx.operand_types[0], "operand")
    check_value(ctx, source, ctx.operand_types[1], "source")
    check_value(ctx, init_value, ctx.operand_types[2], "init_value")
    return operand, source, init_value


def _check_source_shape(ctx: OpCall, p: WindowParams, source: np.ndarray) -> None:
    if tuple(source.shape) != p.num_windows:
        raise ExecutionError(f"{ctx.name}: source has shape {source.shape} at run time; the windows "
                             f"of the operand need {p.num_windows}", ctx.loc)


@op("stablehlo.select_and_scatter", aliases=("SelectAndScatter",), verify=_verify_select_and_scatter,
    attrs=SelectAndScatterAttrs, infer=infer_select_and_scatter, family="window",
    provenance=lambda ctx, inputs, outputs: select_and_scatter_provenance(ctx, inputs, outputs),
    explain=lambda ctx, inputs, outputs, result, index: select_and_scatter_explain(
        ctx, inputs, outputs, result, index))
def select_and_scatter(ctx: OpCall, *operands: np.ndarray) -> np.ndarray:
    """result = init_value everywhere, then each source element combined with scatter
    into the operand element select chose in its window (row-major source order)."""
    operand, source, init_value = _sas_inputs(ctx, operands)
    p = window_params(ctx.attrs, operand.shape)
    _check_source_shape(ctx, p, source)
    es = _body_elements(ctx, 1)[0]
    sel = select_positions(ctx, operand, p, tuple(source.shape)).reshape(-1)
    result = np.full(operand.size, np.asarray(init_value).astype(es.dtype), dtype=es.dtype)
    keep = np.flatnonzero(sel >= 0)  # row-major source order
    _scatter_in_order(ctx, result, sel[keep], source.reshape(-1)[keep].astype(es.dtype), es)
    return result.reshape(operand.shape)


# --- select_and_scatter: provenance ------------------------------------------------------

class SelectAndScatterProvenance(Provenance):
    """Result element i: ``init`` (init_value); per window that selected operand element i,
    in row-major source order, the source element (``update``); and the operand elements
    whose value alone can change which windows select i (i itself as ``selected`` when
    some window selected it, else ``control``; others ``control``). For a window w that
    contains i, with winner sel(w) and runner-up run(w) (the winner without sel(w)):

    * sel(w) = i and w has another real element: every real element of w (any of them
      could take w from i, or i could lose it);
    * sel(w) != i: i itself (i could win w) and, when run(w) = i, sel(w) (by losing, it
      would hand w to i).

    An element that cannot change the selection (a window's sole real element, a window's
    winner when i is not its runner-up) is not a source. Stored as ``selected`` and
    ``runner``: per source element the flat operand index of the winner and of the
    runner-up (-1: none); windows are recomputed from the geometry on demand."""

    def __init__(self, result_shapes: Sequence[Any], operand_shapes: Sequence[Any],
                 params: WindowParams, selected: np.ndarray, runner: np.ndarray):
        super().__init__(result_shapes, operand_shapes)
        self.params = params
        self.selected = selected.reshape(-1).astype(np.int64)
        self.runner = runner.reshape(-1).astype(np.int64)
        self.source_shape = tuple(selected.shape)
        self.shape = tuple(params.input_shape)
        size = int(np.prod(self.shape, dtype=np.int64))
        self.any_selected = np.zeros(size, dtype=bool)
        self.any_selected[self.selected[self.selected >= 0]] = True

    def outlines(self, result: int, index: tuple[int, ...]
                 ) -> list[tuple[int, str, tuple[int, ...], tuple[int, ...]]]:
        """For renderers: (operand, "window", lo, hi) in the padded frame of every window that
        selected result element ``index``, in source order."""
        p = self.params
        out = []
        for pf in self.windows_of(tuple(index)):
            s = _unravel(int(pf), self.source_shape)
            lo = tuple(int(a * st) for a, st in zip(s, p.window_strides, strict=True))
            out.append((0, "window", lo, tuple(a + w for a, w in zip(lo, p.window_dimensions, strict=True))))
        return out

    def marks(self, result: int, index: tuple[int, ...]) -> list[tuple[int, tuple[int, ...], str]]:
        """For renderers: the operand element the windows selected (the winner), when some did."""
        f = int(np.ravel_multi_index(index, self.shape)) if self.shape else 0
        return [(0, tuple(int(i) for i in index), "winner")] if self.any_selected[f] else []

    def windows_of(self, result_index: tuple[int, ...]) -> np.ndarray:
        """The flat source positions whose window selected ``result_index``, in order."""
        f = int(np.ravel_multi_index(result_index, self.shape)) if self.shape else 0
        return np.flatnonzero(self.selected == f)

    def _own_role(self, f: int) -> str:
        return "selected" if self.any_selected[f] else "control"

    def window_elements(self, source_flat: int) -> list[tuple[int, ...]]:
        """The real operand elements of one window, row-major."""
        p = self.params
        s = np.unravel_index(source_flat, self.source_shape) if self.source_shape else ()
        q, kinds = p.frame.classify(_window_positions(p, tuple(np.asarray(i, np.int64) for i in s)))
        real = np.broadcast_to(is_operand(kinds), p.window_dimensions)
        return [tuple(int(a[tuple(w)]) for a in q) for w in np.argwhere(real)]  # row-major

    def sources(self, result: int, index: tuple[int, ...]) -> list[Source]:
        idx = check_index(self._result_shape(result), index, f"result #{result} index")
        f = int(np.ravel_multi_index(idx, self.shape)) if self.shape else 0
        out = [Source(2, (), "init")]
        ws = self._containing_windows(idx)
        sel, run = self.selected[ws], self.runner[ws]
        mine = sel == f
        if ((mine & (run >= 0)) | ~mine).any():
            out.append(Source(0, idx, self._own_role(f)))
        out += [Source(1, _unravel(int(pf), self.source_shape), "update") for pf in ws[mine]]
        seen: set[tuple[int, ...]] = {idx}
        controls: list[tuple[int, ...]] = []
        for pf, s_, r in zip(ws, sel, run):
            if s_ == f and r >= 0:
                controls += self.window_elements(int(pf))
            elif s_ != f and r == f:
                controls.append(_unravel(int(s_), self.shape))
        for q in controls:
            if q not in seen:
                seen.add(q)
                out.append(Source(0, q, "control"))
        return out

    def _containing_windows(self, q: tuple[int, ...]) -> np.ndarray:
        """Flat source positions whose window contains operand element q."""
        p = self.params
        ranges = []
        for d, x in enumerate(q):
            # source index s with s * stride + w - lo = x for some 0 <= w < window_dimensions
            top = x + p.padding_low[d]
            lo_s = max(0, -(-(top - p.window_dimensions[d] + 1) // p.window_strides[d]))
            hi_s = min(self.source_shape[d] - 1, top // p.window_strides[d])
            ranges.append(np.arange(lo_s, hi_s + 1, dtype=np.int64))
        if any(r.size == 0 for r in ranges):
            return np.zeros(0, dtype=np.int64)
        grid = np.meshgrid(*ranges, indexing="ij")
        return np.ravel_multi_index(tuple(g.reshape(-1) for g in grid), self.source_shape) \
            if self.source_shape else np.zeros(1, dtype=np.int64)

    def targets(self, operand: int, index: tuple[int, ...]) -> list[Target]:
        shape = self._operand_shape(operand)
        idx = check_index(shape, index, f"operand #{operand} index")
        if operand == 2:
            return [Target(0, _unravel(f, self.shape), "init") for f in range(self.any_selected.size)]
        if operand == 1:
            pf = int(np.ravel_multi_index(idx, self.source_shape)) if self.source_shape else 0
            f = int(self.selected[pf])
            return [] if f < 0 else [Target(0, _unravel(f, self.shape), "update")]
        j = int(np.ravel_multi_index(idx, self.shape)) if self.shape else 0
        ws = self._containing_windows(idx)
        sel, run = self.selected[ws], self.runner[ws]
        out = []
        if ((sel != j) | (run >= 0)).any():
            out.append(Target(0, idx, self._own_role(j)))
        others = np.concatenate([sel[(sel != j) & (sel >= 0)], run[(sel == j) & (run >= 0)]])
        for g in np.unique(others):
            out.append(Target(0, _unravel(int(g), self.shape), "control"))
        return out

    def _window_sweep(self):
        """Per window position: (source flat positions with a real element there, that
        element's flat operand index)."""
        p = self.params
        src = np.indices(self.source_shape, dtype=np.int64).reshape(len(self.source_shape), -1)
        for w in p.positions():
            q = [src[d] * p.window_strides[d] + w[d] - p.padding_low[d] for d in range(p.rank)]
            ok = np.ones(src.shape[1], dtype=bool)
            for d in range(p.rank):
                ok &= (q[d] >= 0) & (q[d] < self.shape[d])
            pos = np.flatnonzero(ok)
            flat = (np.ravel_multi_index(tuple(x[pos] for x in q), self.shape) if self.shape
                    else np.zeros(pos.size, dtype=np.int64))
            yield pos, flat

    def back(self, result: int, mask: np.ndarray) -> dict[tuple[int | None, str], np.ndarray]:
        m = _check_mask(self._result_shape(result), mask, f"back(result #{result})").reshape(-1)
        out: dict[tuple[int | None, str], np.ndarray] = {}
        if not m.any():
            return out
        out[(2, "init")] = np.ones((), dtype=bool)
        sel, run = self.selected, self.runner
        hit = np.zeros(sel.shape, dtype=bool)  # windows whose winner is in the mask
        hit[sel >= 0] = m[sel[sel >= 0]]
        _merge(out, (1, "update"), hit.reshape(self.source_shape))
        own = np.zeros(m.size, dtype=bool)  # i can change out[i]
        control = np.zeros(m.size, dtype=bool)
        for pos, flat in self._window_sweep():
            s_, r = sel[pos], run[pos]
            own[flat[(s_ != flat) | (r >= 0)]] = True
            steal = s_ != flat  # another real element: it could take the window from the winner
            control[flat[steal & m[s_]]] = True
        hands = (run >= 0) & m[np.where(run >= 0, run, 0)]  # the winner could hand it to the runner-up
        control[sel[hands]] = True
        own &= m
        _merge(out, (0, "selected"), (own & self.any_selected).reshape(self.shape))
        _merge(out, (0, "control"), (control | (own & ~self.any_selected)).reshape(self.shape))
        return out

    def fwd(self, operand: int, mask: np.ndarray) -> dict[tuple[int, str], np.ndarray]:
        m = _check_mask(self._operand_shape(operand), mask, f"fwd(operand #{operand})").reshape(-1)
        out: dict[tuple[int, str], np.ndarray] = {}
        if not m.any():
            return out
        res = np.zeros(self.any_selected.size, dtype=bool)
        if operand == 2:
            _merge(out, (0, "init"), np.ones(self.shape, dtype=bool))
            return out
        sel, run = self.selected, self.runner
        if operand == 1:
            ok = m & (sel >= 0)
            res[sel[ok]] = True
            _merge(out, (0, "update"), res.reshape(self.shape))
            return out
        own = np.zeros(m.size, dtype=bool)
        for pos, flat in self._window_sweep():
            s_, r = sel[pos], run[pos]
            mine = m[flat]
            own[flat[mine & ((s_ != flat) | (r >= 0))]] = True
            res[s_[mine & (s_ != flat)]] = True
        hands = (run >= 0) & m[np.where(sel >= 0, sel, 0)] & (sel >= 0)
        res[run[hands]] = True
        _merge(out, (0, "selected"), (own & self.any_selected).reshape(self.shape))
        _merge(out, (0, "control"), (res | (own & ~self.any_selected)).reshape(self.shape))
        return out

    def animation_steps(self, call: OpCall, inputs: list[Any], outputs: list[Any],
                        elements: Sequence[tuple[int, tuple[int, ...]]] | None = None,
                        limit: int | None = None) -> list[AnimationStep]:
        """Per source element in row-major order (the op's scatter order), two steps: the
        select phase (its window on the operand, the selected element) and the scatter
        phase (the source element combined into the result at the selected position,
        with the running value). ``elements`` keeps the windows that select them."""
        operand, source, init = inputs
        es = _body_elements(call, 1)[0]
        state = np.full(self.any_selected.size, np.asarray(init).astype(es.dtype), dtype=es.dtype)
        order = np.flatnonzero(self.selected >= 0)
        if elements is not None:
            flats = [int(np.ravel_multi_index(tuple(i), self.shape)) if self.shape else 0
                     for _, i in elements]
            order = order[np.isin(self.selected[order], flats)]
        total = int(order.size)
        if limit is not None:
            order = order[:max(1, limit // 2)]
        names = [v.name for v in call.op.operands]
        rname = call.op.results[0].name
        body = recognize_binary(call.op.regions[1]) or "scatter"
        steps: list[AnimationStep] = []
        for k, pf in enumerate(order):  # one window per two frames: capped by ``limit``
            f = int(self.selected[pf])
            q, si = _unravel(f, self.shape), _unravel(int(pf), self.source_shape)
            window = [Source(0, w, "window") for w in self.window_elements(int(pf)) if w != q]
            sw, qw = _list(si), _list(q)
            steps.append(AnimationStep(
                Msg("window.sas.anim.select", n=k + 1, total=total, source=names[1], source_index=sw,
                    operand=names[0], selected_index=qw, value=operand[q]),
                window + [Source(0, q, "selected")], [],
                start={0: state.reshape(self.shape).copy()} if k == 0 else None))
            before = state[f]
            after = _scatter_once(call, es, before, source[si])
            state[f] = after if after is not None else source[si]
            steps.append(AnimationStep(
                Msg("window.sas.anim.scatter", n=k + 1, total=total, source=names[1], source_index=sw,
                    value=source[si], result=rname, selected_index=qw, body=body, before=before,
                    after=state[f]),
                [Source(1, si, "update"), Source(0, q, "selected")], [(0, q)], [(0, q, state[f])]))
        return steps


def _unravel(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(int(i) for i in np.unravel_index(int(flat), shape)) if shape else ()


def select_and_scatter_provenance(ctx: OpCall, inputs: list[Any],
                                  outputs: list[Any]) -> SelectAndScatterProvenance:
    operand, source, _ = inputs
    p = window_params(ctx.attrs, operand.shape)
    # recomputed here: O(window positions x source elements), one batched select per position
    sel = select_positions(ctx, operand, p, tuple(source.shape))
    runner = select_positions(ctx, operand, p, tuple(source.shape), exclude=sel)
    # a max-like select (GE/GT) never hands a window to a -inf runner-up, whatever finite
    # value the winner takes (min-like: +inf); JAX pads a SAME max pool's operand with -inf
    floor = _select_floor(ctx.op.regions[0], operand.dtype)
    if floor is not None:
        flat = operand.reshape(-1)
        has = runner >= 0
        at_floor = np.zeros(runner.shape, dtype=bool)
        at_floor[has] = flat[runner[has]] == floor
        runner = np.where(at_floor, -1, runner)
    prov = SelectAndScatterProvenance([value_shape(v) for v in outputs], [value_shape(v) for v in inputs],
                                      p, sel, runner)
    # drawn in its padded frame: a window with padding covers cells the operand lacks
    prov.frames = {0: FrameMap.of(0, p.frame)}
    return prov


# --- select_and_scatter: explain ---------------------------------------------------------

def _select_once(ctx: OpCall, et: ElementType, a: Any, b: Any) -> bool | None:
    recognized = _recognized_select(ctx.op.regions[0])
    x, y = np.asarray(a), np.asarray(b)
    if recognized is not None:
        direction, ctype = recognized
        with np.errstate(all="ignore"):
            return bool(compare_arrays(x, y, et, direction, ctype or default_compare_type(et)))
    try:
        return bool(np.asarray(ctx.run_region(0, [x, y])[0]))
    except NotImplementedError:
        return None


def _scatter_once(ctx: OpCall, es: ElementType, acc: Any, v: Any) -> Any:
    kind = recognize_binary(ctx.op.regions[1])
    a = np.asarray(acc, dtype=es.dtype)
    b = np.asarray(v).astype(es.dtype)
    if kind is not None and can_combine_at(kind, es):
        return np.asarray(combine_step(kind, es, a, b)).astype(es.dtype)[()]
    try:
        return np.asarray(ctx.run_region(1, [a, b])[0], dtype=es.dtype)[()]
    except NotImplementedError:
        return None


def _select_steps(ctx: OpCall, operand: np.ndarray, et: ElementType, p: WindowParams,
                  window_start: tuple[int, ...], name: str) -> tuple[tuple[int, ...] | None, list[Step]]:
    """The select fold over one window (the spec's reduce_window_without_init with body
    ``select(arg0, arg1) ? arg0 : arg1``): per window position its place, and for an
    operand element the candidate, select's answer and the current operand index."""
    steps = []
    cur_idx: tuple[int, ...] | None = None
    cur_val: Any = None
    for w in p.positions():
        pos = tuple(s + wi for s, wi in zip(window_start, w, strict=True))
        q = tuple(x - lo for x, lo in zip(pos, p.padding_low, strict=True))
        inside = [0 <= x < m for x, m in zip(q, operand.shape, strict=True)]
        roles = {d: DimRole("operand") if ok else DimRole("padding") for d, ok in enumerate(inside)}
        sub: list[Step] = []
        if not all(inside):
            sub.append(Step(Msg("window.sas.padding.name"), None, Msg("window.sas.padding.value")))
        else:
            cand = operand[q]
            sub.append(Step("operand_index", Msg("window.sas.operand_index.formula"), q,
                            substituted=Msg("window.sas.operand_index.substituted", position=pos,
                                            low=p.padding_low)))
            sub.append(Step(Msg("window.sas.candidate.name"), Msg("explain.element", name="operand",
                                                                 index="operand_index"), cand,
                            substituted=Msg("explain.element", name=name, index=_list(q))))
            if cur_idx is None:  # the first operand element starts the fold (no init value)
                cur_idx, cur_val = q, cand
                sub.append(Step(Msg("window.sas.current.name"), Msg("window.sas.candidate.first"), cur_idx))
            else:
                s = _select_once(ctx, et, cur_val, cand)
                before = cur_idx
                if s is False:
                    cur_idx, cur_val = q, cand
                sub.append(Step(Msg("window.sas.select.name"), None, s,
                                substituted=Msg("explain.apply", op="select",
                                                args=_args([operand[before], cand]))))
                sub.append(Step(Msg("window.sas.current.name"), Msg("window.sas.current.formula"), cur_idx,
                                substituted=Msg("window.sas.current.substituted", select=s, current=before,
                                                candidate=q)))
        steps.append(Step(Msg("window.sas.position.name", w=w), Msg("window.sas.position.formula"), pos,
                          dim_roles=roles, children=sub,
                          substituted=Msg("window.sas.position.substituted", window_start=window_start, w=w)))
    return cur_idx, steps


def select_and_scatter_explain(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
                               index: tuple) -> Explanation:
    """result[index]: init_value, then per window that selects this element (source_indices)
    the select fold over the window, the selected operand element, the source element and
    the running value of the result element, each under its own name."""
    if result != 0:
        raise ExecutionError(f"result #{result} does not exist (the op has 1 result)")
    idx = check_index(value_shape(outputs[0]), index, "result #0 index")
    operand, source, init_value = inputs
    et = _plain(ctx.operand_types[0])
    es = _body_elements(ctx, 1)[0]
    prov = select_and_scatter_provenance(ctx, inputs, outputs)
    p = prov.params
    ps = prov.windows_of(idx)
    names = [v.name for v in ctx.op.operands]
    body = recognize_binary(ctx.op.regions[1]) or "scatter"
    acc = np.asarray(init_value).astype(es.dtype)[()]
    init = acc
    steps = [Step("init_value", Msg("window.sas.init_value.formula", name=names[2]), acc)]
    source_indices = [_unravel(int(pf), prov.source_shape) for pf in ps]
    count = len(source_indices)
    children = []
    for j, sidx in enumerate(source_indices[:EXPLAIN_MAX_WINDOWS]):
        window_start = _mul(sidx, p.window_strides)
        sel, fold = _select_steps(ctx, operand, et, p, window_start, names[0])
        fold.insert(0, Step("window_start", Msg("window.sas.window_start.formula"), window_start,
                            substituted=Msg("window.sas.window_start.substituted", source_index=sidx,
                                            window_strides=p.window_strides)))
        v = source[sidx]
        sub = [Step("selected_index", Msg("window.sas.selected_index.formula"), sel, children=fold)]
        if sel is not None:  # always, for a window that selects this element
            sub.append(Step("selected_values[source_index]",
                            Msg("explain.element", name="operand", index="selected_index"), operand[sel],
                            substituted=Msg("explain.element", name=names[0], index=_list(sel))))
        sub.append(Step("source[source_index]", None, v,
                        substituted=Msg("explain.element", name=names[1], index=_list(sidx))))
        after = _scatter_once(ctx, es, acc, v) if acc is not None else None
        if after is not None:
            sub.append(Step(Msg("window.sas.scatter.name", n=j + 1), Msg("window.sas.scatter.formula"), after,
                            substituted=Msg("explain.apply", op=body, args=_args([acc, v]))))
        children.append(Step("source_index", Msg("window.sas.window.formula", n=j + 1, count=count), sidx,
                             children=sub))
        acc = after
    value = outputs[0][idx]
    steps.append(Step("source_indices", Msg("window.sas.source_indices.formula"), source_indices,
                      children=children, substituted=Msg("window.sas.source_indices.substituted",
                                                         result_index=idx)))
    source_values = [source[s] for s in source_indices]
    items = ", ".join(f"{names[1]}[{_list(s)}]" for s in source_indices)  # spec notation, not prose
    steps.append(Step("source_values", Msg("window.sas.source_values.formula"), source_values,
                      substituted=Msg("window.sas.source_values.substituted", items=items)))
    steps.append(Step("result[result_index]", Msg("window.sas.result.formula"), value,
                      substituted=Msg("window.sas.result.substituted", source_values=source_values,
                                      init_value=init, scatter=body)))
    notes = []
    if count:
        notes.append(Msg("window.sas.note.count", count=count))
    else:  # first: front ends show it as the headline
        notes.append(Msg("window.sas.note.untouched", result_index=_list(idx), value=value))
    if _recognized_select(ctx.op.regions[0]) is not None:
        notes.append(Msg("window.sas.note.select"))
    kind = recognize_binary(ctx.op.regions[1])
    if kind is not None:
        notes.append(Msg("window.sas.note.scatter", kind=kind))
    if count > EXPLAIN_MAX_WINDOWS:
        notes.append(Msg("window.sas.note.more", count=count - EXPLAIN_MAX_WINDOWS))
    empty = int(np.count_nonzero(prov.selected < 0))
    if empty:
        notes.append(Msg("window.sas.note.empty", count=empty))
    # a quantized element type is neither float nor complex (its body's ops round)
    if count > 1 and (getattr(es, "is_float", False) or getattr(es, "is_complex", False)):
        notes.append(Msg("window.sas.note.order"))
    if count and acc is None:
        notes.append(Msg("window.sas.note.interpreter"))
    return Explanation(ctx.op.name, idx, steps, value, notes, 0)


# --- parameter schemas (hlolab.ops.examples) ------------------------------------------------

def _window_schemas() -> None:
    from hlolab.ops.examples import (
        BODIES,
        Operand,
        OpParts,
        OpSchema,
        Param,
        broadcast_ints,
        broadcast_pairs,
        combiner_region,
        compare_region,
        dtype_param,
        enum_param,
        identity_of,
        ints_param,
        register_schema,
        scalar,
        shape_param,
        ttype,
    )
    from hlolab.types import element_type

    def window(p: dict[str, Any], shape_key: str) -> dict[str, Any]:
        n = len(p[shape_key])
        return {"window_dimensions": broadcast_ints(p["window"], n),
                "window_strides": broadcast_ints(p["stride"], n), "padding": broadcast_pairs(p["padding"], n)}

    def init_operand(p: dict[str, Any]) -> Operand:
        init = p["init"] if p["init"] is not None else identity_of(p["body"], element_type(p["dtype"]))
        return Operand("init_value", ttype((), p["dtype"]), scalar(init, p["dtype"]))

    def rw_build(p: dict[str, Any]) -> OpParts:
        n = len(p["input"])
        rec = ReduceWindowAttrs(base_dilations=broadcast_ints(p["base_dilation"], n),
                                window_dilations=broadcast_ints(p["window_dilation"], n),
                                **window(p, "input"))
        operands = [Operand("input", ttype(p["input"], p["dtype"])), init_operand(p)]
        try:  # the body keeps the element type: only the shape is inferred
            inferred = infer_reduce_window(rec, [o.type for o in operands])
            results = [ttype(t.shape, p["dtype"]) for t in inferred]
        except InferError:  # a placeholder: verification names the broken constraint
            results = [ttype((), p["dtype"])]
        return OpParts(operands, results, rec, [combiner_region(p["body"], p["dtype"])])

    common = (
        ints_param("window", (2,), "window_dimensions: one size for every dim, or one per dim"),
        ints_param("stride", (2,), "window_strides: one value for every dim, or one per dim"),
        Param("padding", "pairs", 0, "low,high padding per dim, or one int for all"),
    )
    init = Param("init", "number", None, "init_value (identity: the body's identity)")
    register_schema(OpSchema("stablehlo.reduce_window", (
        shape_param("input", (4, 4), "the tensor reduced window by window"),
        *common,
        ints_param("base_dilation", (1,), "base_dilations: holes between input elements"),
        ints_param("window_dilation", (1,), "window_dilations: holes between window elements"),
        enum_param("body", tuple(BODIES), "max", "the reduction applied in each window"),
        init,
        dtype_param("f32"),
    ), {"default": {},
        "spec-example": {"input": (3, 2), "window": (2, 1), "stride": (4, 1), "padding": ((2, 1), (0, 0)),
                         "base_dilation": (2, 1), "window_dilation": (3, 1), "body": "add", "init": 0,
                         "dtype": "i64", "index": (1, 0), "inputs": {"input": [[1, 2], [3, 4], [5, 6]]}}},
        rw_build, doc="reduce each window of input with the body"))

    def sas_build(p: dict[str, Any]) -> OpParts:
        rec = SelectAndScatterAttrs(**window(p, "operand"))
        operand = ttype(p["operand"], p["dtype"])
        try:
            source = ttype(source_shape(rec, p["operand"]), p["dtype"])
        except InferError:  # a placeholder: verification names the broken constraint
            source = ttype((), p["dtype"])
        regions = [compare_region(p["select"], [p["dtype"], p["dtype"]]),
                   combiner_region(p["body"], p["dtype"])]
        return OpParts([Operand("operand", operand), Operand("source", source), init_operand(p)], [operand],
                       rec, regions)

    register_schema(OpSchema("stablehlo.select_and_scatter", (
        shape_param("operand", (4, 4), "the tensor windows select from"),
        *common,
        enum_param("select", ("ge", "gt", "le", "lt"), "ge", "select: compare(current, candidate) keeps it"),
        enum_param("body", tuple(BODIES), "add", "scatter: combines source values at the selected element"),
        Param("init", "number", 0, "init_value of every result element"),
        dtype_param("f32"),
    ), {"default": {"index": (1, 1)},  # a selected element
        "spec-example": {"operand": (4, 2), "window": (3, 1), "stride": (2, 1), "padding": ((0, 1), (0, 0)),
                         "select": "ge", "body": "add", "init": 0, "dtype": "i64", "index": (2, 0),
                         "inputs": {"operand": [[1, 5], [2, 5], [3, 6], [4, 4]],
                                    "source": [[5, 6], [7, 8]]}}},
        sas_build, doc="scatter source to the element each window selects"))


_window_schemas()
