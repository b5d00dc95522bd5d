"""chlo.ragged_dot: a dot_general whose lhs is cut into groups along one *ragged* dim.

``group_sizes`` (an integer tensor ``[b..., x..., g]``, or ``[g]`` broadcast to it) cuts the
lhs ragged dim into ``g`` consecutive groups: group ``j`` holds the positions
``start_j <= i < end_j`` with ``end_j = group_sizes[..., 0] + ... + group_sizes[..., j]`` and
``start_j = end_j - group_sizes[..., j]`` (the ``b...``/``x...`` prefix picks the row of
``group_sizes`` per lhs position, see (C14)). The lhs ragged dim decides the mode
(ChloOps.cpp, ``checkRaggedDotConstraints``):

1. **ragged non-contracting** (``[b,m,k] x [g,b,k,n] -> [b,m,n]``): lhs position ``m`` in
   group ``j`` is multiplied with ``rhs[j]`` (the rhs group dim at ``j``); a position in no
   group (the group sizes sum to less than the dim) gives 0. Sizes summing to more than the
   dim simply cut the last groups short (positions past the dim do not exist).
2. **ragged contracting** (``[b,m,k] x [b,k,n] -> [g,b,m,n]``): result ``[j, ...]`` sums the
   products over the contracting positions of group ``j`` only (0 for an empty group).
3. **ragged batch** (``[b,m,k] x [b,k,n] -> [b,m,n]``, ``group_sizes`` ``[g]``): the rhs has no
   group dim, so a group only says which batch rows it holds; XLA:CPU (jax 0.10's lowering,
   measured) computes the plain dot_general for every batch row whatever the sizes, and so do
   we: the group sizes are checked by type but change no value (no ``index_read``).

Evaluation is dot_general (``hlolab.ops.contraction``, one semantics, its numerics: f32
accumulation for narrow floats, integers wrap, i1 and/or) applied per group to the lhs with
the other groups' positions masked to 0 (mode 2 masks the rhs as well, as jax's lowering
does). Mode 1 then *selects* each position's group result instead of adding masked products:
a position's value is exactly the dot product with its own group's rhs, so an inf or NaN in
another group's rhs does not leak in as ``0 * inf`` (jax's lowering multiplies the masked
zeros and would give NaN there) and a ``-0.0`` dot product stays ``-0.0``. Negative group sizes
are not refused (the reference does not check values): groups are the ``[start_j, end_j)``
ranges as computed, so a position may fall in no group or, after a negative size, in two,
whose dot products are then added (group order).

Provenance: a result element reads the lhs elements and the rhs elements it multiplies
(roles ``window`` and ``kernel``, as dot_general), paired position by position over the group
axis (mode 1) and the contracting dims, plus the ``group_sizes`` row that decides its groups
(``index_read``: all ``g`` entries of the row, since every partial sum may move a boundary).

Constraint labels (ChloOps.cpp numbers none; C1-C10 are dot_general's on the
batching/contracting dims, checked by ``checkDotGeneralConstraints`` upstream):
(I1) lhs, (I2) rhs are tensors; (I3) group_sizes is an integer tensor;
(C1) size(lhs_batching_dimensions) = size(rhs_batching_dimensions);
(C2) size(lhs_contracting_dimensions) = size(rhs_contracting_dimensions);
(C3) lhs_batching_dimensions + lhs_contracting_dimensions unique; (C4) the same for rhs;
(C5)-(C8) those dims in range; (C9) batching dim sizes agree; (C10) contracting dim sizes agree;
(C11) precision_config has 2 entries of DEFAULT/HIGH/HIGHEST;
(C12) exactly one lhs_ragged_dimensions entry; (C13) it is in [0, rank(lhs));
(C14) group_sizes has rank 1, or rank size(prefix) + 1 with shape prefix + [g], where prefix =
lhs batching dims before the ragged one (mode 3), lhs batching dims + lhs contracting dims
before the ragged one (mode 2), lhs batching dims + lhs non-contracting dims before the ragged
one (mode 1); (C15) rhs_group_dimensions in [0, rank(rhs)); (C16) rhs_group_dimensions
disjoint from rhs_batching_dimensions and rhs_contracting_dimensions; (C17) modes 2 and 3: no
rhs_group_dimensions; (C18) mode 1: exactly one rhs group dim, of size g; (C19) the result
shape is the inferred one (mode 2: [g] + batch + lhs free + rhs free; else batch + lhs free +
rhs free without the group dim); (C20) element_type(lhs) = element_type(rhs) and the result
element type of the same kind (int/float/complex/i1; upstream infers lhs's type, jax's
preferred_element_type widens it). Quantized operands and dynamic shapes are not executed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hlolab.errors import ExecutionError
from hlolab.ir.attrs import ArrayAttr
from hlolab.messages import Msg
from hlolab.ops.common import check_value, dims_fit, operand_tensor, reject_quantized
from hlolab.ops.contraction import (
    EXPLAIN_MAX_PAIRS,
    DotGeneralAttrs,
    _check_precision_config,
    _check_result_kind,
    _FanIn,
    _reject_dynamic,
    _sum_notes,
    compute_dtype,
    dot_general_values,
    dot_result_shape,
    product_steps,
)
from hlolab.ops.record import Attrs, InferError, Inferred, Partial, attr, member, raw, record
from hlolab.ops.registry import OpCall, op
from hlolab.trace.explain import DimRole, Explanation, Step
from hlolab.trace.fanin import Fan, expand
from hlolab.trace.provenance import check_index, value_shape
from hlolab.types import ElementType, TensorType, Type

NON_CONTRACTING, CONTRACTING, BATCH = 1, 2, 3


def _rdn() -> Any:
    return attr(member("ragged_dot_dimension_numbers", "chlo.ragged_dot"))


@record
class RaggedDotAttrs(Attrs):
    """The fields of ``#chlo.ragged_dot<...>`` (upstream's names) and ``precision_config``."""

    lhs_batching_dimensions: tuple[int, ...] = _rdn()
    rhs_batching_dimensions: tuple[int, ...] = _rdn()
    lhs_contracting_dimensions: tuple[int, ...] = _rdn()
    rhs_contracting_dimensions: tuple[int, ...] = _rdn()
    lhs_ragged_dimensions: tuple[int, ...] = _rdn()
    rhs_group_dimensions: tuple[int, ...] = _rdn()
    precision_config: ArrayAttr | None = attr(raw("precision_config", ArrayAttr,
                                                  what="a list of precision enums"), default=None)

    def dot(self) -> DotGeneralAttrs:
        """The batching/contracting dims as a dot_general's."""
        return DotGeneralAttrs(lhs_batching_dimensions=self.lhs_batching_dimensions,
                               rhs_batching_dimensions=self.rhs_batching_dimensions,
                               lhs_contracting_dimensions=self.lhs_contracting_dimensions,
                               rhs_contracting_dimensions=self.rhs_contracting_dimensions)

    @property
    def ragged(self) -> int:
        return self.lhs_ragged_dimensions[0]

    def mode(self) -> int:
        r = self.ragged
        if r in self.lhs_batching_dimensions:
            return BATCH
        if r in self.lhs_contracting_dimensions:
            return CONTRACTING
        return NON_CONTRACTING

    def prefix_dims(self, lhs_rank: int) -> list[int]:
        """The lhs dims whose positions select the row of group_sizes (C14), in order."""
        r, lb, lc = self.ragged, list(self.lhs_batching_dimensions), list(self.lhs_contracting_dimensions)
        m = self.mode()
        if m == BATCH:
            return lb[:lb.index(r)]
        if m == CONTRACTING:
            return lb + lc[:lc.index(r)]
        return lb + [d for d in range(r) if d not in lb and d not in lc]

    def rhs_free(self, rhs_rank: int) -> list[int]:
        return [d for d in range(rhs_rank) if d not in self.rhs_batching_dimensions
                and d not in self.rhs_contracting_dimensions and d not in self.rhs_group_dimensions]


# --- types and verification -------------------------------------------------------------------

def ragged_dot_shape(err: Any, rec: RaggedDotAttrs, lhs: TensorType, rhs: TensorType,
                     gs: TensorType) -> list[int | None]:
    """(C1)-(C10) and (C12)-(C18), then the result shape; ``err(label, message)`` builds the error."""
    dot_result_shape(err, lhs, rhs, rec.dot())  # C1-C10
    if len(rec.lhs_ragged_dimensions) != 1:
        raise err("C12", f"there must be exactly one lhs ragged dimension, got "
                  f"lhs_ragged_dimensions = {list(rec.lhs_ragged_dimensions)}")
    r = rec.ragged
    if not 0 <= r < lhs.rank:
        raise err("C13", f"lhs_ragged_dimensions = [{r}] must be in [0, {lhs.rank}) (rank of {lhs})")
    mode = rec.mode()
    prefix = [lhs.shape[d] for d in rec.prefix_dims(lhs.rank)]
    if gs.rank < 1:
        raise err("C14", f"group_sizes must have rank >= 1, got {gs}")
    if gs.rank != 1:
        if gs.rank != len(prefix) + 1:
            raise err("C14", f"group_sizes must have rank 1 or {len(prefix) + 1} (prefix dims "
                      f"{rec.prefix_dims(lhs.rank)} + the groups), got {gs}")
        if not all(dims_fit(a, b) for a, b in zip(prefix, gs.shape[:-1], strict=True)):
            raise err("C14", f"group_sizes must have shape {prefix + [gs.shape[-1]]}, got {list(gs.shape)}")
    g = gs.shape[-1]
    rg = rec.rhs_group_dimensions
    if any(not 0 <= d < rhs.rank for d in rg):
        raise err("C15", f"rhs_group_dimensions = {list(rg)} must be in [0, {rhs.rank}) (rank of {rhs})")
    for name, dims in (("rhs_batching_dimensions", rec.rhs_batching_dimensions),
                       ("rhs_contracting_dimensions", rec.rhs_contracting_dimensions)):
        if set(rg) & set(dims):
            raise err("C16", f"rhs_group_dimensions = {list(rg)} and {name} = {list(dims)} must be disjoint")
    if mode != NON_CONTRACTING and rg:
        raise err("C17", f"there must be no rhs group dimension when the lhs ragged dimension is a "
                  f"{'batching' if mode == BATCH else 'contracting'} dimension, got "
                  f"rhs_group_dimensions = {list(rg)}")
    if mode == NON_CONTRACTING:
        if len(rg) != 1:
            raise err("C18", "there must be exactly one rhs group dimension when the lhs ragged "
                      f"dimension is non-contracting, got rhs_group_dimensions = {list(rg)}")
        if not dims_fit(g, rhs.shape[rg[0]]):
            raise err("C18", f"dim(rhs, {rg[0]}) = {rhs.shape[rg[0]]} must be the number of groups "
                      f"{g} (the last dim of group_sizes)")
    lb, lc = rec.lhs_batching_dimensions, rec.lhs_contracting_dimensions
    batch = [lhs.shape[d] for d in lb]
    lfree = [lhs.shape[d] for d in range(lhs.rank) if d not in lb and d not in lc]
    rfree = [rhs.shape[d] for d in rec.rhs_free(rhs.rank)]
    return ([g] if mode == CONTRACTING else []) + batch + lfree + rfree


def _operands(types: Sequence[Any]) -> tuple[TensorType, TensorType, TensorType]:
    if len(types) != 3:
        raise InferError(None, f"takes 3 operands (lhs, rhs, group_sizes), got {len(types)}")
    for i, t in enumerate(types):
        if not isinstance(t, TensorType):
            raise InferError(f"I{i + 1}", f"operand #{i} must be a tensor, got {t}")
    if not (isinstance(types[2].element, ElementType) and types[2].element.is_int):
        raise InferError("I3", f"group_sizes must be a tensor of integer type, got {types[2]}")
    return types[0], types[1], types[2]


def infer_ragged_dot(rec: RaggedDotAttrs, operand_types: list[Type]) -> list[Inferred]:
    """The (C19) shape; the element type is the declared result's (C20: lhs's kind)."""
    lhs, rhs, gs = _operands(operand_types)
    return [Partial(tuple(ragged_dot_shape(InferError, rec, lhs, rhs, gs)))]


def _verify_ragged_dot(ctx: OpCall) -> None:
    if len(ctx.operand_types) != 3 or len(ctx.result_types) != 1:
        raise ctx.error(None, f"takes 3 operands and has 1 result, got {len(ctx.operand_types)} "
                        f"and {len(ctx.result_types)}")
    lhs = operand_tensor(ctx, 0, "I1", "lhs")
    rhs = operand_tensor(ctx, 1, "I2", "rhs")
    gs = operand_tensor(ctx, 2, "I3", "group_sizes")
    if not (isinstance(gs.element, ElementType) and gs.element.is_int):
        raise ctx.error("I3", f"group_sizes must be a tensor of integer type, got {gs}")
    res = ctx.result_tensor()
    want = ragged_dot_shape(ctx.error, ctx.attrs, lhs, rhs, gs)
    _check_precision_config(ctx, "C11")
    if res.rank != len(want) or not all(dims_fit(a, b) for a, b in zip(res.shape, want, strict=True)):
        raise ctx.error("C19", f"shape(result) = {list(res.shape)} must be the inferred shape {want}")
    if lhs.element != rhs.element:
        raise ctx.error("C20", f"element_type(lhs) = {lhs.element} must equal element_type(rhs) = "
                        f"{rhs.element}")
    _check_result_kind(ctx, lhs, res, "C20")


# --- groups ------------------------------------------------------------------------------------

def group_bounds(group_sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(start, end) of every group, int64 of group_sizes' shape: end = inclusive cumsum."""
    end = np.cumsum(group_sizes.astype(np.int64), axis=-1)
    return end - group_sizes.astype(np.int64), end


def membership(rec: RaggedDotAttrs, lhs_shape: Sequence[int], group_sizes: np.ndarray) -> np.ndarray:
    """in_group[j, ...lhs] (shape (g,) + lhs broadcast: 1 on dims that do not matter): whether
    the lhs position along the ragged dim lies in group j of its group_sizes row."""
    start, end = group_bounds(group_sizes)
    rank = len(lhs_shape)
    g = group_sizes.shape[-1]
    prefix = rec.prefix_dims(rank)
    shape = [1] * rank
    if group_sizes.ndim > 1:  # the prefix dims of group_sizes go to their lhs dims
        for d in prefix:
            shape[d] = lhs_shape[d]
        order = np.argsort(prefix)  # prefix dims in lhs order for the reshape
        start = np.moveaxis(start, -1, 0).transpose([0, *(1 + order)])
        end = np.moveaxis(end, -1, 0).transpose([0, *(1 + order)])
    else:
        start, end = start.reshape(g), end.reshape(g)
    start = start.reshape([g] + shape)
    end = end.reshape([g] + shape)
    pos_shape = [1] * rank
    pos_shape[rec.ragged] = lhs_shape[rec.ragged]
    pos = np.arange(lhs_shape[rec.ragged], dtype=np.int64).reshape([1] + pos_shape)
    return (start <= pos) & (pos < end)


def _masked(x: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return np.where(np.broadcast_to(mask, x.shape), x, np.zeros((), x.dtype))


def _shifted(dims: Sequence[int]) -> tuple[int, ...]:
    return tuple(d + 1 for d in dims)


# --- evaluation ----------------------------------------------------------------------------------

def _elements(ctx: OpCall) -> tuple[ElementType, ElementType]:
    le, oe = ctx.operand_types[0].element, ctx.result_types[0].element
    assert isinstance(le, ElementType) and isinstance(oe, ElementType)
    return le, oe


@op("chlo.ragged_dot", verify=_verify_ragged_dot, attrs=RaggedDotAttrs, infer=infer_ragged_dot,
    family="contraction", provenance=lambda *a: _provenance(*a), explain=lambda *a: _explain(*a))
def ragged_dot(ctx: OpCall, lhs: np.ndarray, rhs: np.ndarray, group_sizes: np.ndarray) -> np.ndarray:
    """dot_general per group of the lhs ragged dim (see the module doc for the three modes)."""
    reject_quantized(ctx)
    _reject_dynamic(ctx)
    for i, (v, n) in enumerate(zip((lhs, rhs, group_sizes), ("lhs", "rhs", "group_sizes"), strict=True)):
        check_value(ctx, v, ctx.operand_types[i], n)
    rec: RaggedDotAttrs = ctx.attrs
    le, oe = _elements(ctx)
    d = rec.dot()
    mode = rec.mode()
    if mode == BATCH:
        return dot_general_values(ctx, lhs, rhs, d, le, oe)
    member_ = membership(rec, lhs.shape, group_sizes)
    g = group_sizes.shape[-1]
    out_shape = ctx.result_tensor().static_shape()
    if mode == CONTRACTING:
        rc = rec.rhs_contracting_dimensions
        # the rhs contracting position pairs with the lhs one: the same mask on rhs's dims
        lhs_to_rhs = dict(zip(rec.lhs_contracting_dimensions, rc, strict=True))
        lhs_to_rhs.update(zip(rec.lhs_batching_dimensions, rec.rhs_batching_dimensions, strict=True))
        parts = []
        for j in range(g):
            mj = member_[j]
            rshape = [1] * rhs.ndim
            rmask = np.ones(rshape, dtype=bool)
            keep = [ld for ld in range(lhs.ndim) if mj.shape[ld] != 1]
            if keep:
                rshape = [1] * rhs.ndim
                for ld in keep:
                    rshape[lhs_to_rhs[ld]] = mj.shape[ld]
                order = sorted(keep, key=lambda ld: lhs_to_rhs[ld])
                rmask = mj.squeeze(axis=tuple(ld for ld in range(lhs.ndim) if ld not in keep))
                rmask = rmask.transpose([sorted(keep).index(ld) for ld in order]).reshape(rshape)
            parts.append(dot_general_values(ctx, _masked(lhs, mj), _masked(rhs, rmask), d, le, oe))
        return np.stack(parts).reshape(out_shape) if g else np.zeros(out_shape, ctx.result_dtype())
    # non-contracting: each lhs position takes its own group's dot product (select, not add)
    rg = rec.rhs_group_dimensions[0]
    lr = d.lhs_result_dimensions(lhs.ndim)
    nb = len(rec.lhs_batching_dimensions)
    result = np.zeros(out_shape, ctx.result_dtype())
    taken = np.zeros(out_shape, dtype=bool)
    for j in range(g):
        mj = member_[j]
        if not mj.any():
            continue
        part = dot_general_values(ctx, _masked(lhs, mj), np.take(rhs, j, axis=rg),
                                  _without_group(d, rg), le, oe)
        # the membership mask in result coordinates: batch dims, then lhs free dims
        sel = np.transpose(mj, list(rec.lhs_batching_dimensions) + lr
                           + list(rec.lhs_contracting_dimensions))
        sel = sel.reshape(sel.shape[:nb + len(lr)] + (1,) * (len(out_shape) - nb - len(lr)))
        sel = np.broadcast_to(sel, out_shape)
        with np.errstate(all="ignore"):
            both = sel & taken  # only after a negative group size: groups overlap, sums add
            result = np.where(both, result + part, np.where(sel, part, result)).astype(result.dtype)
        taken |= sel
    return result


def _without_group(d: DotGeneralAttrs, rg: int) -> DotGeneralAttrs:
    """d on the rhs with its group dim ``rg`` taken out (later dims shift down)."""
    def fix(dims: Sequence[int]) -> tuple[int, ...]:
        return tuple(x - (x > rg) for x in dims)

    return DotGeneralAttrs(lhs_batching_dimensions=d.lhs_batching_dimensions,
                           rhs_batching_dimensions=fix(d.rhs_batching_dimensions),
                           lhs_contracting_dimensions=d.lhs_contracting_dimensions,
                           rhs_contracting_dimensions=fix(d.rhs_contracting_dimensions))


# --- provenance ----------------------------------------------------------------------------------

def _membership_of(ctx: OpCall, inputs: list[Any]) -> np.ndarray | None:
    rec: RaggedDotAttrs = ctx.attrs
    if rec.mode() == BATCH:
        return None
    return membership(rec, inputs[0].shape, np.asarray(inputs[2]))


def _fan_fn(rec: RaggedDotAttrs, lhs_shape: tuple[int, ...], rhs_shape: tuple[int, ...],
            gs_shape: tuple[int, ...], member_: np.ndarray | None) -> Any:
    """fans(result, ridx): lhs (``window``) and rhs (``kernel``) paired over the window
    ``[g] + contracting dims`` (mode 1; the group axis walks rhs's group dim) or the
    contracting dims (modes 2, 3), valid where the lhs position is in that group; and the
    group_sizes row (``index_read``)."""
    mode = rec.mode()
    lb, rb = rec.lhs_batching_dimensions, rec.rhs_batching_dimensions
    lc, rc = rec.lhs_contracting_dimensions, rec.rhs_contracting_dimensions
    lr = [x for x in range(len(lhs_shape)) if x not in lb and x not in lc]
    rr = rec.rhs_free(len(rhs_shape))
    nb = len(lb)
    g = gs_shape[-1]
    W = tuple(int(lhs_shape[x]) for x in lc)
    nw = len(W)
    gax = 1 if mode == NON_CONTRACTING else 0
    nwin = gax + nw
    window = (g,) * gax + W
    offsets = [o.reshape((1,) * gax + W) for o in np.indices(W, dtype=np.int64)] if nw else []
    groups = np.arange(g, dtype=np.int64).reshape((g,) + (1,) * nw)
    prefix = rec.prefix_dims(len(lhs_shape))

    def fans(result: int, ridx: tuple[np.ndarray, ...]) -> list[Fan]:
        first = 1 if mode == CONTRACTING else 0
        r = ridx[first:]
        zero = expand(np.zeros_like(ridx[0]), nwin) if ridx else np.zeros((), np.int64)
        li: list[Any] = [None] * len(lhs_shape)
        ri: list[Any] = [None] * len(rhs_shape)
        for k, (x, y) in enumerate(zip(lb, rb, strict=True)):
            li[x] = ri[y] = expand(r[k], nwin)
        for k, x in enumerate(lr):
            li[x] = expand(r[nb + k], nwin)
        for k, y in enumerate(rr):
            ri[y] = expand(r[nb + len(lr) + k], nwin)
        for j, (x, y) in enumerate(zip(lc, rc, strict=True)):
            li[x] = ri[y] = offsets[j] + zero
        valid = None
        if mode == NON_CONTRACTING:
            ri[rec.rhs_group_dimensions[0]] = groups + zero
        if member_ is not None:
            j = groups if mode == NON_CONTRACTING else expand(ridx[0], nwin)
            coords = tuple(np.zeros((), np.int64) if member_.shape[1 + d] == 1 else li[d]
                           for d in range(len(lhs_shape)))
            valid = member_[(j,) + coords]
        out = [Fan(0, "window", tuple(li), valid, window=window),
               Fan(1, "kernel", tuple(ri), valid, window=window)]
        if member_ is not None:  # the group_sizes row(s) that place the lhs positions
            gw = (W if mode == CONTRACTING else ()) + (g,)
            n = len(gw)
            z = expand(np.zeros_like(ridx[0]), n) if ridx else np.zeros((), np.int64)
            last = np.arange(g, dtype=np.int64).reshape((1,) * (n - 1) + (g,)) + z
            if len(gs_shape) == 1:
                index: tuple[Any, ...] = (last,)
            else:
                cs = []
                for p in prefix:
                    if p in lc:
                        cs.append(np.indices(W, dtype=np.int64)[list(lc).index(p)].reshape(W + (1,)) + z)
                    elif p in lb:
                        cs.append(expand(r[list(lb).index(p)], n) + z)
                    else:
                        cs.append(expand(r[nb + lr.index(p)], n) + z)
                index = (*cs, last)
            out.append(Fan(2, "index_read", index, window=gw))
        return out

    return fans


def _provenance(ctx: OpCall, inputs: list[Any], outputs: list[Any]) -> _FanIn:
    rec: RaggedDotAttrs = ctx.attrs
    shapes = [value_shape(v) for v in inputs]
    fans = _fan_fn(rec, shapes[0], shapes[1], shapes[2], _membership_of(ctx, inputs))
    return _FanIn([value_shape(outputs[0])], shapes, fans, schedule=Msg("chlo_ragged.schedule"))


# --- explain -------------------------------------------------------------------------------------

def _idx(xs: Sequence[Any]) -> str:
    return ", ".join(str(int(x)) for x in xs)


def _explain(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
             index: tuple) -> Explanation:
    if result != 0:
        raise ExecutionError(f"result #{result} does not exist (the op has 1 result)")
    lhs, rhs, gs = inputs
    idx = check_index(value_shape(outputs[0]), index, "result #0 index")
    rec: RaggedDotAttrs = ctx.attrs
    mode = rec.mode()
    le, oe = _elements(ctx)
    lb, lc = rec.lhs_batching_dimensions, rec.lhs_contracting_dimensions
    lr = [x for x in range(lhs.ndim) if x not in lb and x not in lc]
    nb = len(lb)
    first = 1 if mode == CONTRACTING else 0
    roles = {first + k: DimRole("batch" if k < nb else "lhs_free" if k < nb + len(lr) else "rhs_free")
             for k in range(len(idx) - first)}
    key = "chlo_ragged."
    steps = [Step("result_index", Msg(key + f"result_index.mode{mode}"), idx, dim_roles=roles)]
    notes: list[Msg] = []
    if mode != BATCH:
        # the group_sizes row: prefix coordinates known from the result index (":" for the
        # contracting ones of mode 2, which vary over the window)
        prefix = rec.prefix_dims(lhs.ndim)
        coords: list[Any] = []
        for p in prefix:
            if p in lc:
                coords.append(slice(None))
            elif p in lb:
                coords.append(idx[first + list(lb).index(p)])
            else:
                coords.append(idx[first + nb + lr.index(p)])
        row_index = tuple(coords) if gs.ndim > 1 else ()
        row = np.asarray(gs[row_index + (slice(None),)])
        start, end = group_bounds(row)
        text = ", ".join([":" if isinstance(c, slice) else str(c) for c in row_index] + [":"])
        name = ctx.op.operands[2].name
        steps.append(Step("group_sizes", Msg(key + "row.formula"), row.copy(),
                          substituted=Msg(key + "row.substituted", name=name, slice=text)))
        steps.append(Step("end", Msg(key + "end.formula"), end))
        steps.append(Step("start", Msg(key + "start.formula"), start))
        if mode == NON_CONTRACTING:
            pos = idx[first + nb + lr.index(rec.ragged)]
            hit = tuple(int(j) for j in np.flatnonzero((start <= pos) & (pos < end)))
            steps.append(Step("group", Msg(key + "group.formula_rows", dim=rec.ragged), hit,
                              substituted=Msg(key + "group.substituted_rows", position=pos,
                                              count=len(hit))))
            if not hit:
                notes.append(Msg(key + "note.no_group", position=pos, total=int(end[-1]) if end.size else 0))
        else:
            j = idx[0]
            steps.append(Step("group", Msg(key + "group.formula_cols", dim=rec.ragged), j,
                              substituted=Msg(key + "group.substituted_cols", j=j,
                                              lo=start[..., j].tolist(), hi=end[..., j].tolist())))
    else:
        notes.append(Msg(key + "note.batch_mode"))
    prov = _provenance(ctx, inputs, outputs)
    wl, wr = prov.window(0, idx)[:2]
    pos_l, pos_r = wl.index[wl.valid], wr.index[wr.valid]
    total = pos_l.shape[0]
    children = product_steps(lhs, rhs, pos_l, pos_r, le, compute_dtype(le, oe))
    value = outputs[0][idx]
    steps.append(Step("dot_product", Msg(key + "dot_product.formula", total=total), value,
                      children=children))
    notes += _sum_notes(le, oe, total, Msg("contraction.order.dot_general"), Msg("contraction.summer.blas"))
    if total > EXPLAIN_MAX_PAIRS:
        notes.append(Msg("contraction.note.more", count=total - EXPLAIN_MAX_PAIRS))
    return Explanation(ctx.op.name, idx, steps, value, notes, 0)


# --- parameter schema (hlolab.ops.examples) ------------------------------------------------------

MODES = ("non_contracting", "contracting", "batch")


def _ragged_dot_schema() -> None:
    from hlolab.ops.examples import (
        Operand,
        OpParts,
        OpSchema,
        dtype_param,
        enum_param,
        int_param,
        ints_param,
        register_schema,
        ttype,
    )

    def build(p: dict[str, Any]) -> OpParts:
        m, k, n, sizes = p["m"], p["k"], p["n"], tuple(p["group_sizes"])
        g = len(sizes)
        mode = p["mode"]
        if mode == "non_contracting":  # [m, k] x [g, k, n] -> [m, n]
            ls, rs, dims = (m, k), (g, k, n), ((), (), (1,), (1,), (0,), (0,))
        elif mode == "contracting":  # [m, k] x [k, n] -> [g, m, n]
            ls, rs, dims = (m, k), (k, n), ((), (), (1,), (0,), (1,), ())
        else:  # [b=m, 1, k] x [m, k, n] -> [m, 1, n]
            ls, rs, dims = (m, 1, k), (m, k, n), ((0,), (0,), (2,), (1,), (0,), ())
        lb, rb, lc, rc, lr, rg = dims
        rec = RaggedDotAttrs(lhs_batching_dimensions=lb, rhs_batching_dimensions=rb,
                             lhs_contracting_dimensions=lc, rhs_contracting_dimensions=rc,
                             lhs_ragged_dimensions=lr, rhs_group_dimensions=rg)
        gt = ttype((g,), "i64")
        operands = [Operand("lhs", ttype(ls, p["dtype"])),
                    Operand("rhs", ttype(rs, p["dtype"]), restart=True),
                    Operand("group_sizes", gt, np.array(sizes, np.int64))]
        try:
            shape = ragged_dot_shape(InferError, rec, operands[0].type, operands[1].type, gt)
        except InferError:
            shape = []  # verification names the constraint the parameters break
        return OpParts(operands, [ttype(shape, p["dtype"])], rec)

    register_schema(OpSchema("chlo.ragged_dot", (
        enum_param("mode", MODES, "non_contracting", "which lhs dim is ragged: a row dim (m), the "
                   "contracting dim (k) or a batch dim"),
        int_param("m", 6, "lhs rows (the ragged dim in mode non_contracting; the batch in mode batch)"),
        int_param("k", 3, "contracting size (the ragged dim in mode contracting)"),
        int_param("n", 2, "rhs columns"),
        ints_param("group_sizes", (2, 3), "the size of each group along the ragged dim"),
        dtype_param("f32"),
    ), {"default": {"index": (3, 1)},
        "short": {"group_sizes": (2, 1), "index": (5, 0)},
        "contracting": {"mode": "contracting", "k": 5, "group_sizes": (2, 3), "index": (1, 0, 1)}},
        build, doc="a dot_general per group of a ragged lhs dim (mixture-of-experts matmuls)"))


_ragged_dot_schema()
