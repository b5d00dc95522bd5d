"""Reductions: ``reduce``, ``map``, ``reduce_precision`` and the three ``batch_norm_*`` ops.

Each op follows its StableHLO spec section and keeps the spec's names
(``input_slices``, ``init_values``, ``centered_operand``, ``stddev``, ``i1``..``i6``).

Choices the spec leaves to the implementation (DESIGN.md "Numerics"), listed here:

* reduce ``schedule``: the init value is the leftmost leaf, the reduced
  elements follow in row-major order of the reduced dimensions (ascending
  dimension numbers): ``exec = body(init, tree(elements))``. Provenance
  records exactly this order. A recognized body (a lone add / multiply /
  maximum / minimum / and / or / xor per output, or keep / replace) runs as a
  numpy reduction over the reduced axes, combined once with the init value:

  - integers: computed in int64/uint64 and wrapped to the bit width (exact for
    + * and or xor, whatever the order); i1: add = or, multiply = and;
  - float maximum/minimum: bit-exact whatever the order: the first NaN of the
    chain (init first) propagates, -0.0 < +0.0;
  - float add/multiply: numpy's pairwise order; bf16/f16/f8 accumulate in f32
    and round once at the end (f32 and f64 stay themselves). XLA:CPU on a raw
    bf16/f16 ``reduce`` rounds its partial sums to the element type in an order
    of its own (checked with the oracle; jax's ``jnp.sum`` converts to f32
    first, which is what hlolab's choice matches up to summation order). The
    oracle tests bound |delta| <= k * n * eps * sum|terms| (k written there);
  - keep gives the init value, replace the last element (the init value when
    nothing is reduced), as the schedule says.

  Any other body runs through the interpreter as a pairwise tree: adjacent
  pairs of the reduced elements are combined in one batched region call per
  round (~log2(K) calls), the odd element carries over, then the init value is
  folded in once: ``body(init, tree)``.
* reduce_precision: bit-exact XLA:CPU behaviour on the bit pattern: round to
  nearest even at ``mantissa_bits``, exponents above the reduced range become
  +-inf, exponents at or below the reduced minimum normal exponent flush to
  +-0 (the reduced format has no denormals), NaN inputs are returned unchanged
  (payload and sign kept), except with ``mantissa_bits = 0``: the spec
  truncates the mantissa to nothing, which leaves an infinity (a format with
  no mantissa bits has no NaN), and the StableHLO conformance program
  reduce_precision.mlir#2 expects inf. XLA:CPU keeps the NaN there; this is
  the one documented difference from XLA. f16, f32, f64 work on their
  own bits; bf16 too, but a NaN becomes the quiet NaN 0x7FC0 with its sign (XLA
  computes bf16 in f32) unless the format is no narrower than f32 (e >= 8 and
  m >= 23: XLA keeps the value as is); f8 and smaller types are computed in f16 and converted
  back, as XLA:CPU does (every f8 type checked bit for bit with the oracle).
* batch_norm_*: the spec's decompositions, computed in f32 for bf16/f16/f8 and
  rounded once at the end (f32 and f64 in themselves); ``epsilon`` (an f32
  attribute) becomes ``constant(epsilon, element_type(operand))`` as the spec
  writes; sums over a feature use numpy's pairwise order.

Quantized tensors: the values are storage integers; the region runs on them (no numpy
path), so its ops apply their quantized rules (hlolab.ops.quantized).
batch_norm_* and reduce_precision follow their dequantize/quantize rules there too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hlolab.errors import ExecutionError
from hlolab.messages import Msg
from hlolab.numerics import extremum_key, float_format, from_bits, to_bits, uint_dtype
from hlolab.ops.common import (
    check_value,
    dims_fit,
    per_tensor_type,
    same_element,
    shapes_compatible,
    wrap_int,
)
from hlolab.ops.record import Attrs, InferError, Inferred, Partial, attr, floating, integer, ints, record
from hlolab.ops.regions import (
    BOOL_UFUNCS,
    INT_UFUNCS,
    can_combine_at,
    check_combiner_types,
    check_inputs_and_inits,
    recognize_binary_each,
)
from hlolab.ops.registry import OpCall, op
from hlolab.ops.scatter import _running_values
from hlolab.trace.bits import reduce_precision_panel
from hlolab.trace.explain import DimRole, Explanation, Step, elementwise_explain
from hlolab.trace.fanin import Fan, FanInProvenance, Projection, expand
from hlolab.trace.provenance import (
    AnimationStep,
    Source,
    check_index,
    elementwise_provenance,
    unary_copy_provenance,
    value_shape,
)
from hlolab.types import ElementType, QuantizedElementType, TensorType, Type

EXPLAIN_MAX_ELEMENTS = 256  # explain lists at most this many reduced elements as children


# --- shared helpers --------------------------------------------------------------------

BASELINE = ("scales", "zero_points")  # baseline_element_type: quantized types without these


def _is_float(e: Any) -> bool:
    if isinstance(e, QuantizedElementType):
        return True  # per-tensor quantized: allowed by the type tables (run by hlolab.ops.quantized)
    return isinstance(e, ElementType) and e.is_float


def _block_types(ctx: OpCall, index: int = 0) -> tuple[list[Any], list[Any] | None]:
    """(block argument types, returned types or None when the block has no return)."""
    region = ctx.op.regions[index]
    block = region.entry
    ret = block.ops[-1] if block.ops else None
    rtypes = list(ret.operand_types) if ret is not None and ret.name.endswith("return") else None
    return [a.type for a in block.args], rtypes


def _signature(args: Sequence[Any], rets: Sequence[Any] | None) -> str:
    r = "no return" if rets is None else f"({', '.join(str(t) for t in rets)})"
    return f"({', '.join(str(t) for t in args)}) -> {r}"


# bf16, f16, f8*, f6*, f4: computed in f32 and rounded once (XLA:CPU)
def _compute_dtype(dt: np.dtype) -> np.dtype:
    if dt.kind in "fc" and dt.itemsize >= 4:
        return dt
    return np.dtype(np.float32)


def _ints(xs: Sequence[Any]) -> tuple[int, ...]:
    return tuple(int(x) for x in xs)


# --- attribute records and result types ----------------------------------------------------

@record
class ReduceAttrs(Attrs):
    dimensions: tuple[int, ...] = attr(ints("dimensions"))


@record
class MapAttrs(Attrs):
    dimensions: tuple[int, ...] = attr(ints("dimensions"))


@record
class ReducePrecisionAttrs(Attrs):
    exponent_bits: int = attr(integer("exponent_bits", "i32"))
    mantissa_bits: int = attr(integer("mantissa_bits", "i32"))


@record
class BatchNormAttrs(Attrs):
    """The three batch_norm_* ops' attributes."""

    epsilon: float = attr(floating("epsilon", "f32"))
    feature_index: int = attr(integer("feature_index"))


def _tensor_of(t: Any, label: str | None, what: str) -> TensorType:
    if not isinstance(t, TensorType):
        raise InferError(label, f"{what} must be a tensor, got {t}")
    return t


def _baseline_of(t: TensorType, shape: Sequence[int | None] | None = None) -> Inferred:
    """A result type whose baseline_type is ``t``'s (with ``shape``): ``t`` itself, or
    for a quantized ``t`` its shape and any scales and zero points."""
    shape = t.shape if shape is None else tuple(shape)
    e = t.element
    if not isinstance(e, QuantizedElementType):
        return TensorType(shape, e)
    dims = "".join("?x" if d is None else f"{d}x" for d in shape)
    return Partial(shape, None, check=lambda d: isinstance(d, TensorType)
                   and same_element(d.element, e, BASELINE),
                   what=f"tensor<{dims}{e}> up to scales and zero points")


def infer_reduce(a: ReduceAttrs, types: list[Type]) -> list[Inferred]:
    """shape(inputs...) without ``dimensions`` (C7); each element type is the body's
    Ei (C8), which only the region fixes: left to the declared type (verify checks it)."""
    n = len(types) // 2
    if n == 0 or len(types) % 2:
        raise InferError("C3", f"0 < size(inputs) = size(init_values) does not hold: {len(types)} "
                         "operands (inputs..., init_values...)")
    shape = _tensor_of(types[0], "I1", "inputs[0]").shape
    dims = a.dimensions
    if any(not 0 <= d < len(shape) for d in dims):
        raise InferError("C4", f"dimensions = {list(dims)} must be in [0, {len(shape)}) (rank(inputs[0]))")
    if len(set(dims)) != len(dims):
        raise InferError("C5", f"dimensions = {list(dims)} must be unique")
    kept = tuple(x for k, x in enumerate(shape) if k not in dims)
    return [Partial(kept) for _ in range(n)]


def infer_map(a: MapAttrs, types: list[Type]) -> list[Inferred]:
    """shape(inputs...) (C1); the element type is the computation's result (C4), which
    only the region fixes: left to the declared type (verify checks it)."""
    if not types:
        raise InferError("C2", "0 < size(inputs) = N does not hold: map has no inputs")
    return [Partial(_tensor_of(types[0], "I1", "inputs[0]").shape)]


def infer_reduce_precision(a: ReducePrecisionAttrs, types: list[Type]) -> list[Inferred]:
    """baseline_type(output) = baseline_type(operand) (C1)."""
    if len(types) != 1:
        raise InferError(None, f"reduce_precision takes one operand, got {len(types)}")
    return [_baseline_of(_tensor_of(types[0], "I1", "operand"))]


def _bn_operand(a: BatchNormAttrs, types: list[Type], n: int) -> TensorType:
    """The operand of a batch_norm op with ``n`` operands, after (C1)."""
    if len(types) != n:
        raise InferError(None, f"takes {n} operands, got {len(types)}")
    operand = _tensor_of(types[0], "I1", "operand")
    fi = a.feature_index
    if not 0 <= fi < operand.rank:
        raise InferError("C1", f"0 <= feature_index < rank(operand) does not hold: feature_index = "
                         f"{fi}, rank(operand) = {operand.rank}")
    return operand


def infer_batch_norm_inference(a: BatchNormAttrs, types: list[Type]) -> list[Inferred]:
    """result: baseline_type(operand) (C7)."""
    return [_baseline_of(_bn_operand(a, types, 5))]


def infer_batch_norm_training(a: BatchNormAttrs, types: list[Type]) -> list[Inferred]:
    """output: baseline_type(operand) (C7); batch_mean, batch_var: dim(operand,
    feature_index) elements (C5, C6) of the operand's baseline element type (C2)."""
    operand = _bn_operand(a, types, 3)
    vec = _baseline_of(operand, (operand.shape[a.feature_index],))
    return [_baseline_of(operand), vec, vec]


def infer_batch_norm_grad(a: BatchNormAttrs, types: list[Type]) -> list[Inferred]:
    """grad_operand: shape(operand) (C3); grad_scale, grad_offset: shape(scale) (C4) =
    dim(operand, feature_index) (C5); all of the operand's baseline element type (C2)."""
    operand = _bn_operand(a, types, 5)
    size = operand.shape[a.feature_index]
    scale = types[1]
    if size is None and isinstance(scale, TensorType) and scale.rank == 1:
        size = scale.shape[0]  # a dynamic feature dim: scale may still fix it
    vec = _baseline_of(operand, (size,))
    return [_baseline_of(operand), vec, vec]


# --- reduce: verification -----------------------------------------------------------------

def _reduce_n(ctx: OpCall) -> int:
    return len(ctx.operand_types) // 2


def _verify_reduce(ctx: OpCall) -> None:
    inputs, _ = check_inputs_and_inits(ctx, "C3", "C1", "C2")
    dims = ctx.attrs.dimensions
    rank = inputs[0].rank
    for d in dims:
        if not 0 <= d < rank:
            raise ctx.error("C4", f"dimensions = {list(dims)} must be in [0, {rank}) "
                            f"(rank(inputs[0]))")
    if len(set(dims)) != len(dims):
        raise ctx.error("C5", f"dimensions = {list(dims)} must be unique")
    es = check_combiner_types(ctx, inputs, "C6")
    kept = [x for k, x in enumerate(inputs[0].shape) if k not in dims]
    for i, t in enumerate(ctx.result_types):
        rt = per_tensor_type(ctx, t, "C7", f"results[{i}]")
        if not shapes_compatible(rt.shape, kept):
            raise ctx.error("C7", f"shape(results[{i}]) = {list(rt.shape)} must be shape(inputs...) "
                            f"= {list(inputs[0].shape)} without dimensions {list(dims)}: {kept}")
        if not same_element(rt.element, es[i]):
            raise ctx.error("C8", f"element_type(results[{i}]) = {rt.element} must be E{i} = {es[i]} "
                            "(the body's element type)")


# --- reduce: evaluation --------------------------------------------------------------------

def _body_elements(ctx: OpCall) -> list[Any]:
    return [a.type.element for a in ctx.op.regions[0].entry.args[:_reduce_n(ctx)]]


def _reduced_last(x: np.ndarray, dims: Sequence[int]) -> np.ndarray:
    """``x`` with the reduced dims moved to the end (ascending) and flattened:
    shape ``result_shape + (K,)``, K elements in row-major order of the reduced dims."""
    kept = [d for d in range(x.ndim) if d not in dims]
    red = sorted(dims)
    moved = np.transpose(x, kept + red)
    k = int(np.prod([x.shape[d] for d in red], dtype=np.int64))
    return moved.reshape(tuple(x.shape[d] for d in kept) + (k,))


def reduce_numpy(name: str, flat: np.ndarray, init: np.ndarray, et: ElementType) -> np.ndarray:
    """``body(init, tree(flat[..., 0..K-1]))`` for a recognized ``body`` named ``name``;
    ``flat`` has the reduced elements on its last axis (``_reduced_last``)."""
    dt = et.dtype
    rshape = flat.shape[:-1]
    k = flat.shape[-1]
    init_b = np.broadcast_to(np.asarray(init, dtype=dt), rshape)
    if name == "keep" or k == 0:
        return np.array(init_b, dtype=dt)
    if name == "replace":
        return np.array(flat[..., -1], dtype=dt)
    if et.is_bool:
        f = BOOL_UFUNCS[name]
        return f(init_b, f.reduce(flat, axis=-1)).astype(dt)
    if et.is_int:
        wide = np.int64 if et.is_signed else np.uint64
        f = INT_UFUNCS[name]
        # mod 2^64 arithmetic keeps the low bits exact for + * and or xor
        return wrap_int(f(init_b.astype(wide), f.reduce(flat.astype(wide), axis=-1)), et)
    if name in ("add", "multiply"):
        ct = _compute_dtype(np.dtype(dt))
        f = np.add if name == "add" else np.multiply
        return f(init_b.astype(ct), f.reduce(flat.astype(ct), axis=-1)).astype(dt)
    # float maximum/minimum (numerics.extremum_key): the first position of the best key along
    # the chain [init, flat...] is its first NaN if any (bit-exact, as the element-wise op keeps
    # a NaN lhs and takes a NaN rhs), else the extremum with -0.0 < +0.0
    is_max = name == "maximum"
    chain = np.concatenate([init_b[..., None], flat], axis=-1)
    key = extremum_key(chain, is_max)
    pick = key.argmax(axis=-1) if is_max else key.argmin(axis=-1)  # the first best position
    return np.array(np.take_along_axis(chain, pick[..., None], axis=-1)[..., 0], dtype=dt)


def _run_tree(ctx: OpCall, flats: list[np.ndarray], inits: list[np.ndarray]) -> list[np.ndarray]:
    """Any body: ``body(init, tree)``, tree = pairwise over the last axis, one batched
    region call per round (the odd element carries over)."""
    rshape = flats[0].shape[:-1]
    n = len(flats)
    vals = list(flats)
    while vals[0].shape[-1] > 1:
        k = vals[0].shape[-1]
        pairs = k // 2
        outs = ctx.run_region(0, [v[..., 0:2 * pairs:2] for v in vals]
                              + [v[..., 1:2 * pairs:2] for v in vals])
        outs = [np.broadcast_to(np.asarray(o), rshape + (pairs,)) for o in outs]
        if k % 2:
            outs = [np.concatenate([o, v[..., -1:]], axis=-1) for o, v in zip(outs, vals, strict=True)]
        vals = outs
    init_b = [np.array(np.broadcast_to(i, rshape)) for i in inits]
    if vals[0].shape[-1] == 0:
        return [np.array(i) for i in init_b]
    res = ctx.run_region(0, init_b + [v[..., 0] for v in vals])
    return [np.array(np.broadcast_to(np.asarray(r), rshape)) for r in res[:n]]


@op("stablehlo.reduce", aliases=("Reduce",), verify=_verify_reduce, attrs=ReduceAttrs,
    infer=infer_reduce, family="reduction",
    provenance=lambda ctx, inputs, outputs: reduce_provenance(ctx, inputs, outputs),
    explain=lambda ctx, inputs, outputs, result, index: reduce_explain(ctx, inputs, outputs,
                                                                       result, index))
def reduce(ctx: OpCall, *operands: np.ndarray) -> list[np.ndarray]:
    """results...[j0, ..., jR-1] = exec(schedule) over input_slices_converted, with the
    init value folded in once: body(init, pairwise tree of the slice in row-major order)."""
    n = _reduce_n(ctx)
    for i, v in enumerate(operands):
        what = f"inputs[{i}]" if i < n else f"init_values[{i - n}]"
        check_value(ctx, v, ctx.operand_types[i], what)
    dims = ctx.attrs.dimensions
    es = _body_elements(ctx)
    # to_destination_type: Ei may be wider than the inputs (is_promotable)
    flats = [_reduced_last(np.asarray(x).astype(e.dtype, copy=False), dims)
             for x, e in zip(operands[:n], es, strict=True)]
    inits = [np.asarray(v).astype(e.dtype, copy=False) for v, e in zip(operands[n:], es, strict=True)]
    kinds = recognize_binary_each(ctx.op.regions[0])
    if kinds is not None and all(can_combine_at(k, e) for k, e in zip(kinds, es, strict=True)):
        return [np.asarray(reduce_numpy(k, f, i, e), dtype=e.dtype)
                for k, f, i, e in zip(kinds, flats, inits, es, strict=True)]
    if 0 in flats[0].shape[:-1]:
        return [np.zeros(f.shape[:-1], dtype=e.dtype) for f, e in zip(flats, es, strict=True)]
    outs = _run_tree(ctx, flats, inits)
    return [np.asarray(o, dtype=e.dtype) for o, e in zip(outs, es, strict=True)]


# --- reduce: provenance ---------------------------------------------------------------------

def slice_fan_index(rank: int, dims: Sequence[int], ridx: tuple[np.ndarray, ...],
                    input_shape: Sequence[int]) -> tuple[np.ndarray, ...]:
    """Index arrays of ``inputs[j0, ..., :, ..., jR-1]`` (``:`` at ``dims``) for a batch of
    result indices: shape S + W, W = the reduced dim sizes in ascending dim order."""
    red = sorted(dims)
    nw = len(red)
    kept_pos = 0
    out = []
    for d in range(rank):
        if d in red:
            j = red.index(d)
            shape = [1] * nw
            shape[j] = int(input_shape[d])
            out.append(np.arange(int(input_shape[d]), dtype=np.int64).reshape(shape))
        else:
            out.append(expand(ridx[kept_pos], nw))
            kept_pos += 1
    return tuple(out)


def reduce_provenance(ctx: OpCall, inputs: list[Any], outputs: list[Any]) -> FanInProvenance:
    """result r element j: init_values[r] (``init``), then every element of
    inputs[k][j0, ..., :, ..., jR-1] (``window``), for k = r only when the body combines
    each pair on its own (recognized), else for every input (the body may mix them)."""
    n = _reduce_n(ctx)
    dims = ctx.attrs.dimensions
    shape = value_shape(inputs[0]) or ()
    rank = len(shape)
    per_output = recognize_binary_each(ctx.op.regions[0]) is not None

    def fans(result: int, ridx: tuple[np.ndarray, ...]) -> list[Fan]:
        which = [result] if per_output else list(range(n))
        index = slice_fan_index(rank, dims, ridx, shape)
        return ([Fan(n + k, "init", ()) for k in which]
                + [Fan(k, "window", index) for k in which])

    kept = [d for d in range(rank) if d not in dims]
    window_dims = tuple(kept.index(d) if d in kept else None for d in range(rank))

    def project(result: int) -> list[Projection]:
        which = [result] if per_output else list(range(n))
        return ([Projection(n + k, "init", ()) for k in which]
                + [Projection(k, "window", window_dims) for k in which])

    return ReduceProvenance([value_shape(v) for v in outputs], [value_shape(v) for v in inputs], fans,
                            schedule=Msg("reduction.schedule.reduce"), project=project)


class ReduceProvenance(FanInProvenance):
    """reduce's fan-in provenance, plus its schedule as animation steps."""

    def animation_steps(self, call: OpCall, inputs: list[Any], outputs: list[Any],
                        elements: Sequence[tuple[int, tuple[int, ...]]] | None = None,
                        limit: int | None = None) -> list[AnimationStep]:
        """The documented schedule of each result element (``elements``, or every element
        of result 0 row-major): init, then each reduced element in row-major order of the
        reduced dims, with the running accumulated value (a sequential chain: for float
        add/multiply it may round differently from the pairwise evaluation)."""
        n = _reduce_n(call)
        dims = call.attrs.dimensions
        shape = tuple(np.asarray(inputs[0]).shape)
        es = _body_elements(call)
        kinds = recognize_binary_each(call.op.regions[0])
        names = [v.name for v in call.op.operands]
        rnames = [v.name for v in call.op.results]
        if elements is None:
            rshape = np.asarray(outputs[0]).shape
            flat = np.arange(min(int(np.prod(rshape, dtype=np.int64)), limit or 1 << 62))
            elements = [(0, tuple(int(i) for i in row)) for row in
                        (np.stack(np.unravel_index(flat, rshape), axis=-1) if rshape
                         else np.zeros((min(1, flat.size), 0), np.int64))]
        red = sorted(dims)
        window = tuple(int(shape[d]) for d in red)
        steps: list[AnimationStep] = []
        for r, idx in elements:  # a loop over frames: stops at ``limit``
            which = [r] if kinds is not None else list(range(n))
            arrays = slice_fan_index(len(shape), dims, tuple(np.asarray(i, np.int64) for i in idx), shape)
            full = np.stack([np.broadcast_to(a, window).reshape(-1) for a in arrays], axis=-1) \
                if shape else np.zeros((1, 0), np.int64)
            acc = [np.asarray(inputs[n + k]).astype(e.dtype)[()] for k, e in enumerate(es)]
            where = Msg("explain.element", name=rnames[r], index=_csv(idx))
            body = kinds[r] if kinds is not None else "body"
            steps.append(AnimationStep(Msg("reduction.reduce.animation.start", where=where, count=len(full),
                                           init_name=names[n + r], init=acc[r]),
                                       [Source(n + k, (), "init") for k in which], [(r, tuple(idx))],
                                       [(r, tuple(idx), acc[r])]))
            for p, pos in enumerate(full):
                if limit is not None and len(steps) >= limit:
                    return steps
                q = tuple(int(i) for i in pos)
                vals = [np.asarray(inputs[k])[q] for k in range(n)]
                run = _running_values(call, kinds, es, acc, [vals])
                before, acc = acc[r], (run[0] if run is not None else vals)
                caption = Msg("reduction.reduce.animation.element", where=where, position=p + 1,
                              count=len(full), body=body, before=before,
                              element=Msg("explain.element", name=names[r], index=_csv(q)),
                              value=vals[r], after=acc[r])
                steps.append(AnimationStep(caption, [Source(k, q, "window") for k in which],
                                           [(r, tuple(idx))], [(r, tuple(idx), acc[r])]))
            # the op combines in a pairwise tree (XLA:CPU's order): where rounding (or a
            # quantized body's saturation) makes the chain end elsewhere, the last frame says
            # so and writes the value the op computed, so no animation ends on a wrong number
            got = np.asarray(outputs[r])[tuple(idx)]
            if not _same_bits(got, acc[r]):
                if limit is not None and len(steps) >= limit:
                    return steps
                steps.append(AnimationStep(Msg("reduction.reduce.animation.tree", where=where, chain=acc[r],
                                               value=got),
                                           [], [(r, tuple(idx))], [(r, tuple(idx), got)]))
            if limit is not None and len(steps) >= limit:
                return steps[:limit]
        return steps


def _same_bits(a: Any, b: Any) -> bool:
    """The same value to the bit (a chain and a tree that both give the same NaN agree)."""
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.tobytes() == b.tobytes()


# --- reduce: explain -------------------------------------------------------------------------

def _csv(xs: Sequence[Any]) -> str:
    """``1, 2``: an index written inside brackets (``%arg0[1, 2]``)."""
    return ", ".join(str(int(x)) for x in xs)


def _slice_text(rank: int, dims: Sequence[int], idx: tuple[int, ...]) -> str:
    parts, k = [], 0
    for d in range(rank):
        if d in dims:
            parts.append(":")
        else:
            parts.append(str(idx[k]))
            k += 1
    return ", ".join(parts)


def reduce_explain(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
                   index: tuple) -> Explanation:
    n = _reduce_n(ctx)
    if not 0 <= result < len(outputs):
        raise ExecutionError(f"result #{result} does not exist (the op has {len(outputs)} results)")
    idx = check_index(value_shape(outputs[result]), index, f"result #{result} index")
    dims = ctx.attrs.dimensions
    shape = tuple(inputs[0].shape)
    rank = len(shape)
    kinds = recognize_binary_each(ctx.op.regions[0])
    which = [result] if kinds is not None else list(range(n))
    names = [v.name for v in ctx.op.operands]
    red = sorted(dims)
    steps = [Step("dimensions", Msg("reduction.reduce.dimensions.formula"), list(red),
                  dim_roles={d: DimRole("reduced") if d in dims else DimRole("kept") for d in range(rank)})]
    window = tuple(int(shape[d]) for d in red)
    count = int(np.prod(window, dtype=np.int64))
    ridx = tuple(np.asarray(i, dtype=np.int64) for i in idx)
    index_arrays = slice_fan_index(rank, dims, ridx, shape)
    full = [np.broadcast_to(a, window).reshape(-1) for a in index_arrays] if rank else []
    shown = min(count, EXPLAIN_MAX_ELEMENTS)
    slices = {}
    for k in which:
        text = _slice_text(rank, dims, idx)
        children = []
        for p in range(shown):
            pos = tuple(int(a[p]) for a in full)
            children.append(Step(f"inputs[{k}][{_csv(pos)}]", None, inputs[k][pos]))
        slices[k] = np.asarray(inputs[k][tuple(np.broadcast_to(a, window) for a in index_arrays)] if rank
                               else inputs[k])
        steps.append(Step(f"input_slices[{k}]", Msg("reduction.reduce.input_slices.formula", k=k), slices[k],
                          children=children,
                          substituted=Msg("reduction.reduce.input_slices.substituted",
                                          name=names[k] if k < len(names) else "inputs", slice=text,
                                          count=count)))
    for k in which:
        steps.append(Step(f"init_values[{k}]",
                          Msg("reduction.symbol", name=names[n + k] if n + k < len(names) else "init"),
                          inputs[n + k][()]))
    body = (kinds[result] if kinds is not None else "body")
    es = _body_elements(ctx)
    # a recognized body on quantized types still runs as a region (its ops dequantize)
    numpy_path = kinds is not None and all(can_combine_at(k, e) for k, e in zip(kinds, es, strict=True))
    how = "reduction.reduce.body.numpy" if numpy_path else "reduction.reduce.body.tree"
    value = outputs[result][idx]
    steps.append(Step("body", Msg(how), body))
    steps.append(Step(f"results[{result}][{_csv(idx)}]",
                      Msg("reduction.reduce.result.formula", body=body, k=result), value,
                      substituted=Msg("reduction.reduce.result.substituted", body=body,
                                      init=inputs[n + result][()], slice=slices[result])))
    notes = [Msg("reduction.reduce.note.schedule", count=count, dimensions=red)]
    e = es[result]
    float_like = isinstance(e, ElementType) and (e.is_float or e.is_complex)
    if float_like and count > 1 and (kinds is None or kinds[result] in ("add", "multiply")):
        notes.append(Msg("reduction.reduce.note.order_numpy" if kinds is not None
                         else "reduction.reduce.note.order_tree"))
    if float_like and kinds is not None and kinds[result] in ("add", "multiply") \
            and np.dtype(e.dtype).itemsize < 4:
        notes.append(Msg("reduction.reduce.note.f32", element_type=str(e)))
    if count > shown:
        notes.append(Msg("reduction.reduce.note.more", count=count - shown))
    return Explanation(ctx.op.name, idx, steps, value, notes, result)


# --- map ------------------------------------------------------------------------------------

def _verify_map(ctx: OpCall) -> None:
    types = ctx.operand_types
    if not types:
        raise ctx.error("C2", "0 < size(inputs) = N does not hold: map has no inputs")
    inputs = [per_tensor_type(ctx, t, "I1", f"inputs[{i}]") for i, t in enumerate(types)]
    if len(ctx.result_types) != 1:
        raise ctx.error(None, f"map has one result, got {len(ctx.result_types)}")
    rt = per_tensor_type(ctx, ctx.result_types[0], "C1", "result")
    for i, t in enumerate(inputs):
        if not shapes_compatible(t.shape, rt.shape):
            raise ctx.error("C1", f"shape(inputs...) = shape(result) does not hold: inputs[{i}] is "
                            f"{t}, result is {rt}")
    dims = ctx.attrs.dimensions
    if list(dims) != list(range(inputs[0].rank)):
        raise ctx.error("C3", f"dimensions = {list(dims)} must be range(rank(inputs[0])) = "
                        f"{list(range(inputs[0].rank))}")
    if len(ctx.op.regions) != 1 or not ctx.op.regions[0].blocks:
        raise ctx.error("C4", "map needs one computation region")
    args, rets = _block_types(ctx)
    have = _signature(args, rets)
    want = (f"({', '.join(f'tensor<{t.element}>' for t in inputs)}) -> tensor<{rt.element}>")
    ok = (len(args) == len(inputs)
          and all(isinstance(a, TensorType) and a.rank == 0 and same_element(a.element, t.element)
                  for a, t in zip(args, inputs, strict=True))
          and rets is not None and len(rets) == 1 and isinstance(rets[0], TensorType)
          and rets[0].rank == 0 and same_element(rets[0].element, rt.element))
    if not ok:
        raise ctx.error("C4", f"computation must have type {want}, got {have}")


@op("stablehlo.map", aliases=("Map",), verify=_verify_map, attrs=MapAttrs, infer=infer_map,
    family="reduction", provenance=elementwise_provenance, explain=elementwise_explain)
def map_(ctx: OpCall, *inputs: np.ndarray) -> np.ndarray:
    """result[result_index] = computation(inputs...[result_index]): one batched region call."""
    for i, v in enumerate(inputs):
        check_value(ctx, v, ctx.operand_types[i], f"inputs[{i}]")
    rdt = ctx.result_dtype()
    shape = inputs[0].shape
    if 0 in shape:
        return np.zeros(shape, dtype=rdt)
    (out,) = ctx.run_region(0, list(inputs))
    return np.array(np.broadcast_to(np.asarray(out), shape), dtype=rdt)


# --- reduce_precision --------------------------------------------------------------------------

def _verify_reduce_precision(ctx: OpCall) -> None:
    if len(ctx.operand_types) != 1 or len(ctx.result_types) != 1:
        raise ctx.error(None, "reduce_precision takes one operand and has one result")
    t = per_tensor_type(ctx, ctx.operand_types[0], "I1", "operand")
    r = per_tensor_type(ctx, ctx.result_types[0], "C1", "output")
    if not _is_float(t.element):
        raise ctx.error("I1", f"operand must be a tensor of floating-point type or per-tensor "
                        f"quantized tensor, got {t}")
    if not shapes_compatible(t.shape, r.shape) or not same_element(t.element, r.element, BASELINE):
        raise ctx.error("C1", f"baseline_type(operand) = {t} must equal baseline_type(output) = {r}")
    e, m = ctx.attrs.exponent_bits, ctx.attrs.mantissa_bits
    if e < 1:
        raise ctx.error("C2", f"1 <= exponent_bits does not hold: exponent_bits = {e}")
    if m < 0:
        raise ctx.error("C3", f"0 <= mantissa_bits does not hold: mantissa_bits = {m}")


def _ieee_layout(dt: np.dtype) -> tuple[int, int] | None:
    """(exponent bits, mantissa bits) of a type laid out as IEEE 754 (sign, biased
    exponent with bias 2^(e-1)-1, all-ones exponent for inf/NaN), else None."""
    fmt = float_format(dt)
    mbits = fmt.precision - 1
    ebits = fmt.bits - 1 - mbits
    if not (fmt.has_inf and fmt.has_nan and fmt.signed and fmt.has_neg_zero):
        return None
    if ebits < 1 or fmt.min_exp != 2 - (1 << (ebits - 1)):
        return None
    return ebits, mbits


def reduce_precision_bits(x: np.ndarray, exponent_bits: int, mantissa_bits: int) -> np.ndarray:
    """XLA's reduce_precision on an IEEE-layout float array, on its bit pattern."""
    dt = x.dtype
    layout = _ieee_layout(dt)
    assert layout is not None
    src_e, src_m = layout
    u = uint_dtype(dt).type
    nbits = float_format(dt).bits
    bits = to_bits(x).astype(uint_dtype(dt))
    if mantissa_bits < src_m:
        # round to nearest, ties to even: add half an ulp minus one plus the last kept bit
        shift = src_m - mantissa_bits
        bias = u((1 << (shift - 1)) - 1)
        kept_bit = (bits >> u(shift)) & u(1)
        bits = (bits + bias + kept_bit) & ~u((1 << shift) - 1)
    if exponent_bits < src_e:
        exp_mask = u(((1 << src_e) - 1) << src_m)
        sign_mask = u(1 << (nbits - 1))
        src_bias = (1 << (src_e - 1)) - 1
        red_bias = (1 << (exponent_bits - 1)) - 1
        max_exp = src_bias + red_bias  # biased, in the source format
        min_exp = src_bias - red_bias  # at or below: below the reduced min normal
        exponent = bits & exp_mask
        over = exponent > u(max_exp << src_m)
        under = exponent <= u(min_exp << src_m)
        signed_zero = bits & sign_mask
        bits = np.where(over, signed_zero | exp_mask, np.where(under, signed_zero, bits))
    out = from_bits(np.asarray(bits, dtype=uint_dtype(dt)), dt).reshape(x.shape)
    return np.where(np.isnan(x.astype(np.float32) if dt.itemsize < 4 else x), x, out).astype(dt)


def reduce_precision_values(x: np.ndarray, exponent_bits: int, mantissa_bits: int) -> np.ndarray:
    """reduce_precision on any float array, as XLA:CPU computes it (checked bit for bit
    with the oracle): f16/f32/f64 on their own bits; bf16 on its bits with a NaN made
    the canonical quiet NaN of its sign (XLA goes through f32 and back); f8 and
    smaller floats in f16 and converted back."""
    dt = x.dtype
    if dt.itemsize >= 2 and dt.name != "bfloat16":
        return reduce_precision_bits(x, exponent_bits, mantissa_bits)
    if dt.name == "bfloat16":
        out = reduce_precision_bits(x, exponent_bits, mantissa_bits)
        if exponent_bits >= 8 and mantissa_bits >= 23:  # a no-op in f32: XLA keeps x as is
            return out
        nan = np.isnan(x.astype(np.float32))
        canonical = from_bits((to_bits(x) & np.uint16(0x8000)) | np.uint16(0x7FC0), dt)
        return np.where(nan, canonical, out).astype(dt)
    return reduce_precision_bits(x.astype(np.float16), exponent_bits, mantissa_bits).astype(dt)


@op("stablehlo.reduce_precision", aliases=("ReducePrecision",), verify=_verify_reduce_precision,
    attrs=ReducePrecisionAttrs, infer=infer_reduce_precision, family="reduction",
    provenance=unary_copy_provenance,
    explain=lambda ctx, inputs, outputs, result, index: reduce_precision_explain(
        ctx, inputs, outputs, result, index))
def reduce_precision(ctx: OpCall, operand: np.ndarray) -> np.ndarray:
    """operand rounded to a float format with exponent_bits and mantissa_bits and back."""
    check_value(ctx, operand, ctx.operand_types[0], "operand")
    return reduce_precision_op_values(operand, ctx.attrs.exponent_bits, ctx.attrs.mantissa_bits)


def reduce_precision_op_values(operand: np.ndarray, exponent_bits: int, mantissa_bits: int) -> np.ndarray:
    """``reduce_precision_values`` with the spec's rule for ``mantissa_bits = 0``: no mantissa
    bits left, a NaN truncates to +-inf (module doc)."""
    out = reduce_precision_values(operand, exponent_bits, mantissa_bits)
    if mantissa_bits == 0:
        nan = np.isnan(operand.astype(np.float32) if operand.dtype.itemsize < 4 else operand)
        inf = np.where(np.signbit(operand.astype(np.float32) if operand.dtype.itemsize < 4 else operand),
                       -np.inf, np.inf).astype(operand.dtype)
        out = np.where(nan, inf, out).astype(operand.dtype)
    return out


def _fields(v: Any, dt: np.dtype) -> str:
    """sign | exponent | mantissa bits of one value."""
    layout = _ieee_layout(dt) or (5, 10)
    if _ieee_layout(dt) is None:
        v = np.float16(v)
        dt = np.dtype(np.float16)
    ebits, mbits = layout
    b = int(to_bits(np.array(v, dtype=dt)))
    s = f"{b:0{1 + ebits + mbits}b}"
    return f"{s[0]} {s[1:1 + ebits]} {s[1 + ebits:]}"


def reduce_precision_explain(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
                             index: tuple) -> Explanation:
    idx = check_index(value_shape(outputs[0]), index, "result #0 index")
    x = inputs[0][idx]
    y = outputs[0][idx]
    dt = inputs[0].dtype
    e, m = ctx.attrs.exponent_bits, ctx.attrs.mantissa_bits
    et = str(ctx.operand_types[0].element)
    notes = []
    if dt.itemsize == 1:
        notes.append(Msg("reduction.reduce_precision.note.f16", element_type=et))
    if _ieee_layout(dt) is None:
        notes.append(Msg("reduction.reduce_precision.note.not_ieee", element_type=et))
    name = ctx.op.operands[0].name if ctx.op.operands else "operand"
    steps = [
        Step("operand", Msg("reduction.reduce_precision.operand.formula"),
             Msg("reduction.reduce_precision.bits", value=x, bits=_fields(x, dt)),
             substituted=Msg("reduction.reduce_precision.operand.substituted", name=name, index=_csv(idx))),
        # attributes: their values are the step's value, nothing to substitute
        Step("format", Msg("reduction.reduce_precision.format.formula"), (e, m)),
        Step("output", Msg("reduction.reduce_precision.output.formula"),
             Msg("reduction.reduce_precision.bits", value=y, bits=_fields(y, dt)),
             substituted=Msg("reduction.reduce_precision.output.substituted", value=x, exponent_bits=e,
                             mantissa_bits=m)),
    ]
    # the bits: the rounding decision, the range check (f8 and smaller: in f16, as computed)
    via = None
    if dt.itemsize == 1:
        x16 = np.asarray(x).astype(np.float32).astype(np.float16).reshape(1)
        via = (x16[0], reduce_precision_op_values(x16, e, m)[0])
    where = f"[{_csv(idx)}]"
    out_name = ctx.op.results[0].name if ctx.op.results else "output"
    bits = reduce_precision_panel(x, y, ctx.operand_types[0].element, e, m, (name + where, out_name + where),
                                  via)
    return Explanation(ctx.op.name, idx, steps, y, notes, 0, bits=[bits])


# --- batch norm: verification ------------------------------------------------------------------

def _verify_bn(ctx: OpCall, in_names: Sequence[str], out_names: Sequence[str], full: set[str],
               feature: set[str], checks: dict[str, str]) -> dict[str, TensorType]:
    """Types of every named operand/result, checking (C1), same baseline element
    types, shapes of full-size and feature-size values (labels per ``checks``)."""
    if len(ctx.operand_types) != len(in_names) or len(ctx.result_types) != len(out_names):
        raise ctx.error(None, f"{ctx.name.removeprefix('stablehlo.')} takes {len(in_names)} operands "
                        f"({', '.join(in_names)}) and has {len(out_names)} results "
                        f"({', '.join(out_names)})")
    ts: dict[str, TensorType] = {}
    for i, (name, t) in enumerate(zip(in_names, ctx.operand_types, strict=True)):
        ts[name] = per_tensor_type(ctx, t, f"I{i + 1}", name)
    for name, t in zip(out_names, ctx.result_types, strict=True):
        ts[name] = per_tensor_type(ctx, t, None, name)
    for name, t in ts.items():
        if not _is_float(t.element):
            raise ctx.error(None, f"{name} must be a tensor of floating-point type or per-tensor "
                            f"quantized tensor, got {t}")
        if name in feature and t.rank != 1:
            raise ctx.error(None, f"{name} must be a 1-dimensional tensor, got {t}")
    operand = ts["operand"]
    fi = ctx.attrs.feature_index
    if not 0 <= fi < operand.rank:
        raise ctx.error("C1", f"0 <= feature_index < rank(operand) does not hold: feature_index = "
                        f"{fi}, rank(operand) = {operand.rank}")
    for name, t in ts.items():
        if not same_element(t.element, operand.element, BASELINE):
            raise ctx.error(checks["element"], f"{', '.join(ts)} must have the same "
                            f"baseline_element_type: operand is {operand.element}, {name} is {t.element}")
    for name in full:
        if not shapes_compatible(ts[name].shape, operand.shape):
            raise ctx.error(checks[name], f"shape({name}) = {list(ts[name].shape)} must equal "
                            f"shape(operand) = {list(operand.shape)}")
    dim = operand.shape[fi]
    for name in feature:
        if not dims_fit(ts[name].shape[0], dim):
            raise ctx.error(checks[name], f"size({name}) = {ts[name].shape[0]} must equal "
                            f"dim(operand, feature_index) = dim(operand, {fi}) = {dim}")
    return ts


def _verify_bn_inference(ctx: OpCall) -> None:
    _verify_bn(ctx, ("operand", "scale", "offset", "mean", "variance"), ("result",), {"result"},
               {"scale", "offset", "mean", "variance"},
               {"element": "C2", "scale": "C3", "offset": "C4", "mean": "C5", "variance": "C6",
                "result": "C7"})


def _verify_bn_training(ctx: OpCall) -> None:
    _verify_bn(ctx, ("operand", "scale", "offset"), ("output", "batch_mean", "batch_var"), {"output"},
               {"scale", "offset", "batch_mean", "batch_var"},
               {"element": "C2", "scale": "C3", "offset": "C4", "batch_mean": "C5", "batch_var": "C6",
                "output": "C7"})


def _verify_bn_grad(ctx: OpCall) -> None:
    # (C4): scale, mean, variance, grad_scale, grad_offset have one shape; (C5) size(scale)
    ts = _verify_bn(ctx, ("operand", "scale", "mean", "variance", "grad_output"),
                    ("grad_operand", "grad_scale", "grad_offset"), {"grad_output", "grad_operand"},
                    {"scale"}, {"element": "C2", "grad_output": "C3", "grad_operand": "C3",
                                "scale": "C5"})
    for name in ("mean", "variance", "grad_scale", "grad_offset"):
        if ts[name].rank != 1 or not dims_fit(ts[name].shape[0], ts["scale"].shape[0]):
            raise ctx.error("C4", f"scale, mean, variance, grad_scale and grad_offset must have the "
                            f"same shape: scale is {ts['scale']}, {name} is {ts[name]}")


# --- batch norm: evaluation --------------------------------------------------------------------

class _BN:
    """The spec's intermediate values for one batch-norm op, in the compute type."""

    def __init__(self, ctx: OpCall, operand: np.ndarray):
        self.fi = ctx.attrs.feature_index
        self.dt = operand.dtype
        self.ct = _compute_dtype(self.dt)
        # constant(epsilon, element_type(operand)): the f32 attribute in the element type
        self.epsilon = np.float32(ctx.attrs.epsilon).astype(self.dt).astype(self.ct)
        self.rank = operand.ndim
        self.axes = tuple(d for d in range(self.rank) if d != self.fi)
        # divisor = size(operand) / dim(operand, feature_index), in the element type
        n = operand.size // operand.shape[self.fi] if operand.shape[self.fi] else 0
        self.divisor = np.asarray(n, dtype=np.float64).astype(self.dt).astype(self.ct)

    def bcast(self, v: np.ndarray) -> np.ndarray:
        """broadcast_in_dim(v, [feature_index], type(operand))."""
        shape = [1] * self.rank
        shape[self.fi] = v.shape[0]
        return np.asarray(v, dtype=self.ct).reshape(shape)

    def compute_sum(self, x: np.ndarray) -> np.ndarray:
        return np.add.reduce(x, axis=self.axes, dtype=self.ct) if self.axes else x.astype(self.ct)

    def compute_mean(self, x: np.ndarray) -> np.ndarray:
        return self.compute_sum(x) / self.divisor

    def out(self, v: np.ndarray) -> np.ndarray:
        return np.asarray(v).astype(self.dt)


def _check_all(ctx: OpCall, values: Sequence[np.ndarray], names: Sequence[str]) -> None:
    for i, (v, name) in enumerate(zip(values, names, strict=True)):
        check_value(ctx, v, ctx.operand_types[i], name)


def _inference_values(bn: _BN, operand, scale, offset, mean, variance) -> dict[str, np.ndarray]:
    x = np.asarray(operand, dtype=bn.ct)
    centered_operand = x - bn.bcast(mean)
    stddev = np.sqrt(bn.bcast(variance) + bn.epsilon)
    normalized_operand = centered_operand / stddev
    result = bn.bcast(scale) * normalized_operand + bn.bcast(offset)
    return {"centered_operand": centered_operand, "stddev": stddev,
            "normalized_operand": normalized_operand, "result": result}


@op("stablehlo.batch_norm_inference", aliases=("BatchNormInference",), verify=_verify_bn_inference,
    attrs=BatchNormAttrs, infer=infer_batch_norm_inference, family="reduction",
    provenance=lambda ctx, inputs, outputs: batch_norm_provenance(ctx, inputs, outputs),
    explain=lambda ctx, inputs, outputs, result, index: batch_norm_explain(ctx, inputs, outputs,
                                                                           result, index))
def batch_norm_inference(ctx: OpCall, operand: np.ndarray, scale: np.ndarray, offset: np.ndarray,
                         mean: np.ndarray, variance: np.ndarray) -> np.ndarray:
    """scale * (operand - mean) / sqrt(variance + epsilon) + offset, per feature."""
    _check_all(ctx, [operand, scale, offset, mean, variance],
               ["operand", "scale", "offset", "mean", "variance"])
    bn = _BN(ctx, operand)
    return bn.out(_inference_values(bn, operand, scale, offset, mean, variance)["result"])


def _training_values(bn: _BN, operand, scale, offset) -> dict[str, np.ndarray]:
    x = np.asarray(operand, dtype=bn.ct)
    mean = bn.compute_mean(x)
    centered = x - bn.bcast(mean)
    variance = bn.compute_mean(centered * centered)
    vals = _inference_values(bn, operand, scale, offset, mean, variance)
    vals.update({"mean": mean, "variance": variance})
    return vals


@op("stablehlo.batch_norm_training", aliases=("BatchNormTraining",), verify=_verify_bn_training,
    attrs=BatchNormAttrs, infer=infer_batch_norm_training, family="reduction",
    provenance=lambda ctx, inputs, outputs: batch_norm_provenance(ctx, inputs, outputs),
    explain=lambda ctx, inputs, outputs, result, index: batch_norm_explain(ctx, inputs, outputs,
                                                                           result, index))
def batch_norm_training(ctx: OpCall, operand: np.ndarray, scale: np.ndarray,
                        offset: np.ndarray) -> list[np.ndarray]:
    """mean and variance per feature over every other dim, then batch_norm_inference."""
    _check_all(ctx, [operand, scale, offset], ["operand", "scale", "offset"])
    bn = _BN(ctx, operand)
    v = _training_values(bn, operand, scale, offset)
    return [bn.out(v["result"]), bn.out(v["mean"]), bn.out(v["variance"])]


def _grad_values(bn: _BN, operand, scale, mean, variance, grad_output) -> dict[str, np.ndarray]:
    x = np.asarray(operand, dtype=bn.ct)
    g = np.asarray(grad_output, dtype=bn.ct)
    var_eps = bn.bcast(variance) + bn.epsilon
    centered_operand = x - bn.bcast(mean)
    stddev = np.sqrt(var_eps)
    normalized_operand = centered_operand / stddev
    elements_per_feature = bn.divisor
    i1 = g * elements_per_feature
    i2 = bn.bcast(bn.compute_sum(g))
    i3 = bn.bcast(bn.compute_sum(g * centered_operand))
    i4 = i3 * centered_operand
    i5 = i4 / var_eps
    i6 = (i1 - i2) - i5
    grad_operand = bn.bcast(scale) / stddev / elements_per_feature * i6
    grad_scale = bn.compute_sum(g * normalized_operand)
    grad_offset = bn.compute_sum(g)
    return {"centered_operand": centered_operand, "stddev": stddev,
            "normalized_operand": normalized_operand, "elements_per_feature": elements_per_feature,
            "i1": i1, "i2": i2, "i3": i3, "i4": i4, "i5": i5, "i6": i6,
            "grad_operand": grad_operand, "grad_scale": grad_scale, "grad_offset": grad_offset}


@op("stablehlo.batch_norm_grad", aliases=("BatchNormGrad",), verify=_verify_bn_grad,
    attrs=BatchNormAttrs, infer=infer_batch_norm_grad, family="reduction",
    provenance=lambda ctx, inputs, outputs: batch_norm_provenance(ctx, inputs, outputs),
    explain=lambda ctx, inputs, outputs, result, index: batch_norm_explain(ctx, inputs, outputs,
                                                                           result, index))
def batch_norm_grad(ctx: OpCall, operand: np.ndarray, scale: np.ndarray, mean: np.ndarray,
                    variance: np.ndarray, grad_output: np.ndarray) -> list[np.ndarray]:
    """grad_operand, grad_scale, grad_offset as the spec's decomposition (batchnorm_expander)."""
    _check_all(ctx, [operand, scale, mean, variance, grad_output],
               ["operand", "scale", "mean", "variance", "grad_output"])
    bn = _BN(ctx, operand)
    v = _grad_values(bn, operand, scale, mean, variance, grad_output)
    return [bn.out(v["grad_operand"]), bn.out(v["grad_scale"]), bn.out(v["grad_offset"])]


# --- batch norm: provenance --------------------------------------------------------------------

# per op: result -> (per-element operands read at the same index, per-feature operands
# read at [f], operands whose whole feature slice is read)
_BN_LAYOUT: dict[str, list[tuple[list[int], list[int], list[int]]]] = {
    # operand 0, scale 1, offset 2, mean 3, variance 4
    "stablehlo.batch_norm_inference": [([0], [1, 2, 3, 4], [])],
    # operand 0, scale 1, offset 2 -> output, batch_mean, batch_var
    "stablehlo.batch_norm_training": [([0], [1, 2], [0]), ([], [], [0]), ([], [], [0])],
    # operand 0, scale 1, mean 2, variance 3, grad_output 4 -> grad_operand, grad_scale, grad_offset
    "stablehlo.batch_norm_grad": [([0, 4], [1, 2, 3], [0, 4]), ([], [2, 3], [0, 4]), ([], [], [4])],
}


def _feature_slice(shape: Sequence[int], fi: int, f: np.ndarray) -> tuple[np.ndarray, ...]:
    """operand[..., f, ...] (every index with feature f) for a batch of features, S + W."""
    others = [d for d in range(len(shape)) if d != fi]
    nw = len(others)
    out = []
    for d in range(len(shape)):
        if d == fi:
            out.append(expand(f, nw))
        else:
            j = others.index(d)
            s = [1] * nw
            s[j] = int(shape[d])
            out.append(np.arange(int(shape[d]), dtype=np.int64).reshape(s))
    return tuple(out)


def batch_norm_provenance(ctx: OpCall, inputs: list[Any], outputs: list[Any]) -> FanInProvenance:
    """Full-size results read their operands' element at the same index and the
    per-feature operands at [f] (``combine``) and, where the op computes statistics,
    every operand element of feature f (``window``); per-feature results read [f]
    operands (``combine``) and the feature's elements (``window``)."""
    layout = _BN_LAYOUT[ctx.name]
    fi = ctx.attrs.feature_index
    shape = value_shape(inputs[0]) or ()

    def fans(result: int, ridx: tuple[np.ndarray, ...]) -> list[Fan]:
        same, per_feature, window = layout[result]
        full = len(ridx) == len(shape)
        f = ridx[fi] if full else ridx[0]
        out = [Fan(k, "combine", ridx) for k in same]
        out += [Fan(k, "combine", (f,)) for k in per_feature]
        if window:
            index = _feature_slice(shape, fi, f)
            out += [Fan(k, "window", index) for k in window]
        return out

    return FanInProvenance([value_shape(v) for v in outputs], [value_shape(v) for v in inputs], fans,
                           schedule=Msg("reduction.schedule.batch_norm"))


# --- batch norm: explain -----------------------------------------------------------------------

def batch_norm_explain(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
                       index: tuple) -> Explanation:
    """The spec's decomposition for one element: each named intermediate at this
    element's feature f, its formula and the formula with this element's numbers."""
    if not 0 <= result < len(outputs):
        raise ExecutionError(f"result #{result} does not exist (the op has {len(outputs)} results)")
    idx = check_index(value_shape(outputs[result]), index, f"result #{result} index")
    bn = _BN(ctx, inputs[0])
    full = len(idx) == inputs[0].ndim
    f = idx[bn.fi] if full else idx[0]
    where = _csv(idx)
    operand = inputs[0]
    names = [v.name for v in ctx.op.operands]
    fidx = _feature_slice(operand.shape, bn.fi, np.asarray(f, dtype=np.int64))
    wshape = tuple(s for d, s in enumerate(operand.shape) if d != bn.fi)
    count = int(np.prod(wshape, dtype=np.int64))
    positions = [np.broadcast_to(a, wshape).reshape(-1)[:EXPLAIN_MAX_ELEMENTS] for a in fidx]
    children = [Step(f"operand[{_csv(int(a[p]) for a in positions)}]", None,
                     operand[tuple(int(a[p]) for a in positions)])
                for p in range(positions[0].size)]
    feature = ", ".join(":" if d != bn.fi else str(f) for d in range(operand.ndim))  # operand[:, f, :]
    steps = [Step("feature_index", Msg("reduction.batch_norm.feature_index.formula"), bn.fi),
             Step("f", Msg("reduction.batch_norm.f.formula" + ("" if full else "_feature")), f,
                  substituted=Msg("reduction.batch_norm.f.substituted", index=idx,
                                     position=bn.fi if full else 0)),
             Step("epsilon", Msg("reduction.batch_norm.epsilon.formula"), bn.epsilon,
                  substituted=Msg("reduction.batch_norm.epsilon.substituted", epsilon=ctx.attrs.epsilon,
                                  element_type=str(ctx.operand_types[0].element)))]
    value = outputs[result][idx]
    notes = []
    if np.dtype(bn.dt).itemsize < 4:
        notes.append(Msg("reduction.batch_norm.note.f32", element_type=str(ctx.operand_types[0].element)))

    def at(arr: Any) -> Any:
        """``arr`` at this element: full-size arrays at the index, per-feature ones at f."""
        a = np.asarray(arr)
        if a.ndim == len(idx) and full and a.shape == operand.shape:
            return a[idx]
        if a.ndim and a.size == operand.shape[bn.fi]:
            return a.reshape(-1)[f]
        return a[tuple(0 if d != bn.fi else f for d in range(a.ndim))] if a.ndim else a[()]

    def v(name: str, arr: Any, kids: list[Step] | None = None, **numbers: Any) -> None:
        """Step ``name`` (formula ``reduction.batch_norm.<name>``, substituted with ``numbers``)."""
        key = f"reduction.batch_norm.{name}"
        steps.append(Step(name, Msg(f"{key}.formula"), at(arr), children=kids or [],
                          substituted=Msg(f"{key}.substituted", **numbers)))

    def read(name: str, k: int, arr: np.ndarray, element: bool = False) -> None:
        """Operand ``k`` (spec name ``name``) read at this element or at [f]."""
        at_ = where if element else str(f)
        steps.append(Step(name, Msg("explain.element", name=name, index="result_index" if element else "f"),
                          arr[idx] if element else arr[f],
                          substituted=Msg("explain.element", name=names[k] if k < len(names) else name,
                                          index=at_)))

    def inference_steps(vals: dict[str, np.ndarray], mean: Any, variance: Any, scale: Any, offset: Any,
                        out_name: str, first: int) -> None:
        """centered_operand .. the output, as batch_norm_inference computes it (scale and
        offset are operands first, first + 1)."""
        c = vals["centered_operand"]
        v("centered_operand", c, operand=at(operand.astype(bn.ct)), mean=at(mean))
        v("stddev", vals["stddev"], variance=at(variance), epsilon=bn.epsilon)
        v("normalized_operand", vals["normalized_operand"], centered_operand=at(c),
          stddev=at(vals["stddev"]))
        read("scale", first, scale)
        read("offset", first + 1, offset)
        steps.append(Step(out_name, Msg("reduction.batch_norm.output.formula"), value,
                          substituted=Msg("reduction.batch_norm.output.substituted", scale=at(scale),
                                          normalized_operand=at(vals["normalized_operand"]),
                                          offset=at(offset))))

    name = ctx.name
    order = Msg("reduction.batch_norm.note.order")
    if name == "stablehlo.batch_norm_inference":
        _, scale, offset, mean, variance = inputs
        vals = _inference_values(bn, operand, scale, offset, mean, variance)
        read("operand", 0, operand, element=True)
        read("mean", 3, mean)
        read("variance", 4, variance)
        inference_steps(vals, mean, variance, scale, offset, "result", 1)
    elif name == "stablehlo.batch_norm_training":
        _, scale, offset = inputs
        vals = _training_values(bn, operand, scale, offset)
        x = np.asarray(operand, dtype=bn.ct)
        centered = vals["centered_operand"]
        v("mean", vals["mean"], children, sum=at(bn.compute_sum(x)), divisor=bn.divisor, count=count)
        v("variance", vals["variance"], sum=at(bn.compute_sum(centered * centered)), divisor=bn.divisor)
        if result == 0:
            read("operand", 0, operand, element=True)
            inference_steps(vals, vals["mean"], vals["variance"], scale, offset, "output", 1)
        else:
            steps.append(Step(["output", "batch_mean", "batch_var"][result],
                              Msg("reduction.symbol", name="mean" if result == 1 else "variance"), value))
        notes.append(order)
    else:
        _, scale, mean, variance, grad_output = inputs
        vals = _grad_values(bn, operand, scale, mean, variance, grad_output)
        g_name = names[4] if len(names) > 4 else "grad_output"
        read("mean", 2, mean)
        read("variance", 3, variance)
        v("elements_per_feature", bn.divisor, size=operand.size, dim=operand.shape[bn.fi])
        if result == 0:
            read("operand", 0, operand, element=True)
            read("grad_output", 4, grad_output, element=True)
            c, i = vals["centered_operand"], {k: at(vals[k]) for k in ("i1", "i2", "i3", "i4", "i5", "i6")}
            v("centered_operand", c, operand=at(operand.astype(bn.ct)), mean=at(mean))
            v("stddev", vals["stddev"], variance=at(variance), epsilon=bn.epsilon)
            v("i1", vals["i1"], grad_output=at(grad_output.astype(bn.ct)), elements_per_feature=bn.divisor)
            v("i2", vals["i2"], grad_output=g_name, slice=feature)
            v("i3", vals["i3"], grad_output=g_name, slice=feature)
            v("i4", vals["i4"], i3=i["i3"], centered_operand=at(c))
            v("i5", vals["i5"], i4=i["i4"], variance=at(variance), epsilon=bn.epsilon)
            v("i6", vals["i6"], i1=i["i1"], i2=i["i2"], i5=i["i5"])
            read("scale", 1, scale)
            steps.append(Step("grad_operand", Msg("reduction.batch_norm.grad_operand.formula"), value,
                              substituted=Msg("reduction.batch_norm.grad_operand.substituted",
                                              scale=at(scale), stddev=at(vals["stddev"]),
                                              elements_per_feature=bn.divisor, i6=i["i6"])))
        else:
            key = "grad_scale" if result == 1 else "grad_offset"
            steps.append(Step(key, Msg(f"reduction.batch_norm.{key}.formula"), value,
                              children=children if result == 1 else [],
                              substituted=Msg(f"reduction.batch_norm.{key}.substituted", grad_output=g_name,
                                              slice=feature)))
        notes.append(order)
    return Explanation(ctx.op.name, idx, steps, value, notes, result)


__all__ = ["reduce", "map_", "reduce_precision", "batch_norm_inference", "batch_norm_training",
           "batch_norm_grad", "reduce_provenance", "reduce_explain", "reduce_numpy",
           "reduce_precision_values", "reduce_precision_bits", "reduce_precision_op_values",
           "batch_norm_provenance", "batch_norm_explain", "slice_fan_index"]


# --- parameter schemas (hlolab.ops.examples): reduce, map, reduce_precision, batch norm ---

def _reduction_schemas() -> None:
    from hlolab.ops.examples import (
        BODIES,
        Operand,
        OpParts,
        OpSchema,
        Param,
        combiner_region,
        dtype_param,
        enum_param,
        identity_of,
        inferred_results,
        int_param,
        ints_param,
        register_schema,
        scalar,
        shape_param,
        ttype,
    )
    from hlolab.types import element_type

    def reduce_build(p: dict[str, Any]) -> OpParts:
        init = p["init"] if p["init"] is not None else identity_of(p["body"], element_type(p["dtype"]))
        kept = [n for d, n in enumerate(p["input"]) if d not in p["dimensions"]]
        return OpParts([Operand("input", ttype(p["input"], p["dtype"])),
                        Operand("init_value", ttype((), p["dtype"]), scalar(init, p["dtype"]))],
                       # the result element is the body's: infer leaves it to the schema
                       [ttype(kept, p["dtype"])], ReduceAttrs(dimensions=p["dimensions"]),
                       [combiner_region(p["body"], p["dtype"])])

    register_schema(OpSchema("stablehlo.reduce", (
        shape_param("input", (3, 4), "the tensor reduced"),
        ints_param("dimensions", (1,), "the dims reduced away"),
        enum_param("body", tuple(BODIES), "add", "the reduction function"),
        Param("init", "number", None, "init_value (identity: the body's identity)"),
        dtype_param("f32"),
    ), {"default": {},
        "spec-example": {"input": (1, 6), "dimensions": (1,), "body": "add", "init": 0, "dtype": "i64",
                         "index": (0,), "inputs": {"input": [[0, 1, 2, 3, 4, 5]]}}},
        reduce_build, doc="reduce input along dimensions with the body"))

    def map_build(p: dict[str, Any]) -> OpParts:
        t = ttype(p["shape"], p["dtype"])
        # the result element is the computation's: infer leaves it to the schema
        return OpParts([Operand("input0", t), Operand("input1", t)], [t],
                       MapAttrs(dimensions=p["dimensions"]), [combiner_region(p["body"], p["dtype"])])

    register_schema(OpSchema("stablehlo.map", (
        shape_param("shape", (2, 3), "shape of both inputs and of the result"),
        ints_param("dimensions", (0, 1), "must be every dim of the inputs in order, 0..rank-1 (C3)"),
        enum_param("body", tuple(BODIES), "mul", "the computation applied to each pair of elements"),
        dtype_param("f32"),
    ), {"default": {},
        "spec-example": {"shape": (2, 2), "dimensions": (0, 1), "body": "mul", "dtype": "i64",
                         "index": (1, 1),
                         "inputs": {"input0": [[0, 1], [2, 3]], "input1": [[4, 5], [6, 7]]}}},
        map_build, doc="apply the computation to the inputs element by element"))

    def rp_build(p: dict[str, Any]) -> OpParts:
        t = ttype(p["shape"], p["dtype"])
        n = int(np.prod(p["shape"], dtype=np.int64))
        # thirds: values that no short mantissa holds exactly, so the rounding shows
        value = (1 + np.arange(n, dtype=np.float64) / 3).reshape(p["shape"])
        rec = ReducePrecisionAttrs(exponent_bits=p["exponent_bits"], mantissa_bits=p["mantissa_bits"])
        return OpParts([Operand("operand", t, value)],
                       inferred_results("stablehlo.reduce_precision", rec, [t], p["dtype"]), rec)

    # the spec's operand bit patterns: +inf, a NaN, the smallest denormal, 0, 65519, 65520
    spec_bits = np.array([0x7FF0000000000000, 0x7FFFFFFFFFFFFFFF, 0x1, 0, 0, 0], dtype=np.uint64)
    spec_operand = spec_bits.view(np.float64).copy()
    spec_operand[4:] = [65519.0, 65520.0]
    register_schema(OpSchema("stablehlo.reduce_precision", (
        shape_param("shape", (2, 3), "shape of the operand and of the output"),
        int_param("exponent_bits", 5, "exponent bits of the narrower float format (>= 1)"),
        int_param("mantissa_bits", 10, "mantissa bits of the narrower float format (>= 0)"),
        dtype_param("f32", "element type of the operand and the output (a float type)"),
    ), {"default": {},
        "spec-example": {"shape": (6,), "exponent_bits": 5, "mantissa_bits": 10, "dtype": "f64",
                         "index": (5,), "inputs": {"operand": spec_operand}},
        "bf16": {"exponent_bits": 8, "mantissa_bits": 7}},
        rp_build, doc="round to a float format with fewer exponent and mantissa bits and back"))

    def features(p: dict[str, Any]) -> int:
        """dim(operand, feature_index); 1 when feature_index is out of range (verify names (C1))."""
        shape, fi = p["operand"], p["feature_index"]
        return shape[fi] if 0 <= fi < len(shape) else 1

    def bn_attrs(p: dict[str, Any]) -> BatchNormAttrs:
        eps = float(p["epsilon"])
        if not np.isfinite(eps):
            raise ValueError(f"{eps} has no decimal float literal")
        return BatchNormAttrs(epsilon=eps, feature_index=p["feature_index"])

    def per_feature(p: dict[str, Any]) -> dict[str, np.ndarray]:
        """scale, offset, mean, variance values: distinct per feature, variance > 0."""
        f = np.arange(features(p), dtype=np.float64)
        return {"scale": 1 + f / 2, "offset": f, "mean": f, "variance": 1 + f}

    def iota_stats(p: dict[str, Any]) -> tuple[np.ndarray, np.ndarray] | None:
        """Mean and variance per feature of the iota-filled operand (None if feature_index is bad)."""
        shape, fi = p["operand"], p["feature_index"]
        if not 0 <= fi < len(shape) or 0 in shape:
            return None
        x = np.arange(1, int(np.prod(shape, dtype=np.int64)) + 1, dtype=np.float64).reshape(shape)
        axes = tuple(d for d in range(len(shape)) if d != fi)
        return x.mean(axis=axes), x.var(axis=axes)

    def bn_params(default_eps: float) -> tuple[Param, ...]:
        return (
            shape_param("operand", (2, 2, 3), "the tensor normalized"),
            int_param("feature_index", 2, "the feature dim: statistics are per index of this dim"),
            Param("epsilon", "number", default_eps, "added to the variance before the square root"),
            dtype_param("f32", "element type of every operand and result (a float type)"),
        )

    spec_operand_bn = [[[1.0, 2.0], [3.0, 4.0]], [[3.0, 4.0], [1.0, 2.0]]]
    spec_bn = {"operand": (2, 2, 2), "feature_index": 2, "epsilon": 0.0, "dtype": "f64", "index": (0, 1, 0)}

    def inference_build(p: dict[str, Any]) -> OpParts:
        et, k, v = p["dtype"], features(p), per_feature(p)
        vec = ttype((k,), et)
        operands = [Operand("operand", ttype(p["operand"], et)),
                    *(Operand(n, vec, v[n]) for n in ("scale", "offset", "mean", "variance"))]
        rec = bn_attrs(p)
        return OpParts(operands, inferred_results("stablehlo.batch_norm_inference", rec,
                                                  [o.type for o in operands], et), rec)

    register_schema(OpSchema("stablehlo.batch_norm_inference", bn_params(0.001), {
        "default": {},
        "spec-example": spec_bn | {"inputs": {"operand": spec_operand_bn, "scale": [1.0, 1.0],
                                              "offset": [1.0, 1.0], "mean": [2.0, 3.0],
                                              "variance": [1.0, 1.0]}}},
        inference_build, doc="normalize each feature with a given mean and variance"))

    def training_build(p: dict[str, Any]) -> OpParts:
        et, k, v = p["dtype"], features(p), per_feature(p)
        vec = ttype((k,), et)
        # three results even for a feature_index out of range, so verify names (C1)
        # (inferred_results would give one placeholder)
        return OpParts([Operand("operand", ttype(p["operand"], et)), Operand("scale", vec, v["scale"]),
                        Operand("offset", vec, v["offset"])],
                       [ttype(p["operand"], et), vec, vec], bn_attrs(p))

    register_schema(OpSchema("stablehlo.batch_norm_training", bn_params(0.001), {
        "default": {},
        "spec-example": spec_bn | {"inputs": {"operand": spec_operand_bn, "scale": [1.0, 1.0],
                                              "offset": [1.0, 1.0]}}},
        training_build, doc="normalize each feature with its batch mean and variance"))

    def grad_build(p: dict[str, Any]) -> OpParts:
        et, k, v = p["dtype"], features(p), per_feature(p)
        vec, full = ttype((k,), et), ttype(p["operand"], et)
        # the batch statistics of the (iota) operand, as batch_norm_training would give them
        stats = iota_stats(p)
        mean, var = stats if stats is not None else (v["mean"], v["variance"])
        # a gradient that is not a multiple of the operand (that one would give ~0 everywhere)
        n = int(np.prod(p["operand"], dtype=np.int64))
        grad = (((np.arange(n) * 3) % 5 - 2) / 2).reshape(p["operand"])
        return OpParts([Operand("operand", full), Operand("scale", vec, v["scale"]),
                        Operand("mean", vec, mean), Operand("variance", vec, var),
                        Operand("grad_output", full, grad)],
                       [full, vec, vec], bn_attrs(p))  # three results: as batch_norm_training's

    register_schema(OpSchema("stablehlo.batch_norm_grad", bn_params(0.001), {
        "default": {},
        "spec-example": spec_bn | {"inputs": {"operand": spec_operand_bn, "scale": [1.0, 1.0],
                                              "mean": [2.0, 3.0], "variance": [1.0, 1.0],
                                              "grad_output": np.full((2, 2, 2), 0.1)}}},
        grad_build, doc="gradients of batch_norm_training's inputs from the output's gradient"))


_reduction_schemas()
