"""chlo.top_k: the ``k`` largest entries along the last dimension and their indices.

``%values, %indices = chlo.top_k(%x, k = 3)``: values[..., j] is the j-th largest element
of the row x[..., :] (descending), indices[..., j] its position in the row (i32).

The order is the one XLA:CPU uses (measured with jax 0.10): StableHLO's CHLO legalization
sorts the row together with an iota, stably, with ``compare GT, TOTALORDER`` on floats, and
XLA:CPU's TopK custom call (f32) / stable sort (other types) compares the same key: the
float's bits mapped to IEEE-754 totalOrder. So, descending:
+NaN > +inf > ... > +0.0 > -0.0 > ... > -inf > -NaN; denormals are ordered (no DAZ, unlike
a FLOAT sort comparator). f16/f32/f64 NaNs rank by payload too (larger first for +NaN);
XLA:CPU converts bf16 (and the f8 types) to f32 before sorting, which makes every NaN of
one sign the same NaN, so those tie. Equal keys keep the lower index first. Integers
compare SIGNED/UNSIGNED, i1 ``true > false``. Complex operands are refused (I1), as jax
refuses them (XLA's TopK has no complex order).

Evaluation is numpy's stable argsort on the bitwise complement of an order key (int64,
uint64), which turns ascending into descending without overflow and keeps ties stable.

Constraint labels (ChloOps.td numbers none): (I1) the operand is a non-quantized tensor of
boolean, integer or floating-point type; (C1) rank(operand) >= 1; (C2) 0 <= k;
(C3) k <= dim(operand, -1); the results are checked against ``infer``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hlolab.errors import ExecutionError
from hlolab.messages import Msg
from hlolab.numerics import float_format, from_bits, is_nan, to_bits
from hlolab.ops.common import check_value, contiguous, operand_tensor
from hlolab.ops.compare import total_order_key
from hlolab.ops.record import Attrs, InferError, attr, integer, record
from hlolab.ops.registry import OpCall, op
from hlolab.trace.explain import Explanation, Step
from hlolab.trace.provenance import (
    Provenance,
    Source,
    Target,
    _check_mask,
    _merge,
    check_index,
    value_shape,
)
from hlolab.types import ElementType, TensorType, element_type

_KINDS = ("bool", "sint", "uint", "float")


@record
class TopKAttrs(Attrs):
    k: int = attr(integer("k"))


# --- types ---------------------------------------------------------------------------------

def _operand_problem(t: Any) -> tuple[str, str] | None:
    """(label, message) when ``t`` cannot be top_k's operand; shared by verify and infer."""
    if not isinstance(t, TensorType):
        return "I1", f"operand must be a tensor, got {t}"
    if not isinstance(t.element, ElementType) or t.element.kind not in _KINDS:
        return "I1", f"operand must be a tensor of boolean, integer or floating-point type, got {t}"
    if t.rank < 1:
        return "C1", f"rank(operand) >= 1 does not hold: operand is {t}"
    return None


def _k_problem(k: int, t: TensorType) -> tuple[str, str] | None:
    if k < 0:
        return "C2", f"0 <= k does not hold: k = {k}"
    last = t.shape[-1]
    if last is not None and k > last:
        return "C3", f"k <= dim(operand, -1) does not hold: k = {k}, dim(operand, -1) = {last}"
    return None


def infer_top_k(a: TopKAttrs, types: list[Any]) -> list[TensorType]:
    """values: operand's shape with the last dim k; indices: the same shape, i32."""
    if len(types) != 1:
        raise InferError(None, f"expects 1 operand, got {len(types)}")
    t = types[0]
    problem = _operand_problem(t) or _k_problem(a.k, t)
    if problem is not None:
        raise InferError(*problem)
    shape = (*t.shape[:-1], a.k)
    return [TensorType(shape, t.element), TensorType(shape, element_type("i32"))]


def _verify_top_k(ctx: OpCall) -> None:
    if len(ctx.operand_types) != 1:
        raise ctx.error(None, f"expects 1 operand, got {len(ctx.operand_types)}")
    t = operand_tensor(ctx, 0, "I1", "operand")
    problem = _operand_problem(t) or _k_problem(ctx.attrs.k, t)
    if problem is not None:
        raise ctx.error(*problem)


# --- evaluation ----------------------------------------------------------------------------

# XLA:CPU compares these directly (TopK custom call for f32, a bitcast comparator for f16
# and f64); every other float type is converted to f32 first, which drops NaN payloads
_OWN_BITS = frozenset(np.dtype(d) for d in (np.float16, np.float32, np.float64))


def _as_xla_converts(x: np.ndarray) -> np.ndarray:
    """``x`` with each NaN replaced by the canonical NaN of its sign, where XLA:CPU's
    convert to f32 does that (measured on bf16: +NaNs of any payload tie, so do -NaNs)."""
    fmt = float_format(x.dtype)
    if x.dtype in _OWN_BITS or not fmt.has_nan or not fmt.has_neg_zero:
        return x  # FNUZ types have one NaN encoding
    bits = to_bits(x).reshape(x.shape)
    canonical = from_bits(np.asarray(fmt.nan_bits | (bits & fmt.sign_mask), bits.dtype), x.dtype)
    return np.where(is_nan(x), canonical.reshape(x.shape), x)


def order_key(x: np.ndarray, et: ElementType) -> np.ndarray:
    """int64/uint64 keys ordered as XLA's top_k compares: totalOrder on floats, the value
    on integers and booleans."""
    if et.is_float:
        return total_order_key(_as_xla_converts(x))
    if et.is_signed:
        return x.astype(np.int64)
    return x.astype(np.uint64)  # unsigned and i1 (true > false)


def top_k_order(x: np.ndarray, et: ElementType, k: int) -> np.ndarray:
    """Positions (..., k) of the k largest elements of each last-dim row, largest first,
    lower position first among equal keys. ``~key`` reverses the order of both int64 and
    uint64 keys exactly, so a stable ascending argsort of it is the descending order."""
    return np.argsort(~order_key(x, et), axis=-1, kind="stable")[..., :k]


def _rows(x: np.ndarray) -> np.ndarray:
    """The last-dim rows as (rows, n); the row count explicitly (zero-size shapes)."""
    rows = int(np.prod(x.shape[:-1], dtype=np.int64))
    return x.reshape(rows, x.shape[-1])


def _order_of(ctx: OpCall, x: np.ndarray) -> np.ndarray:
    """The order the evaluation used (recomputed only if this call did not evaluate)."""
    got = getattr(ctx, "_top_k_order", None)
    if got is None:
        got = top_k_order(x, ctx.operand_types[0].element, ctx.attrs.k)
        ctx._top_k_order = got  # type: ignore[attr-defined]
    return got


def top_k(ctx: OpCall, x: np.ndarray) -> list[np.ndarray]:
    """values, indices = the k largest of each last-dim row (descending; ties: lower index first)."""
    check_value(ctx, x, ctx.operand_types[0], "operand")
    order = top_k_order(x, ctx.operand_types[0].element, ctx.attrs.k)
    ctx._top_k_order = order  # type: ignore[attr-defined]  # provenance/explain reuse it
    values = contiguous(np.take_along_axis(x, order, axis=-1))
    return [values, order.astype(ctx.result_dtype(1))]


# --- provenance ----------------------------------------------------------------------------

class TopKProvenance(Provenance):
    """values[..., j] copies operand[..., order[j]] (``copy``); both results' elements are
    decided by comparing the whole row (``control``, as sort's comparator reads)."""

    def __init__(self, shape: tuple[int, ...], order: np.ndarray):
        rshape = (*shape[:-1], order.shape[-1])
        super().__init__([rshape, rshape], [shape])
        self.shape = tuple(shape)
        self.rshape = rshape
        self.k = order.shape[-1]
        self.n = shape[-1]
        self.order = _rows(order)  # (rows, k)
        # rank[row, p] = j where order[row, j] = p, or -1 outside the top k
        self.rank = np.full((self.order.shape[0], self.n), -1, dtype=np.int64)
        np.put_along_axis(self.rank, self.order,
                          np.broadcast_to(np.arange(self.k), self.order.shape), axis=-1)

    def _row(self, index: tuple[int, ...]) -> int:
        return int(np.ravel_multi_index(index[:-1], self.shape[:-1])) if len(index) > 1 else 0

    def sources(self, result: int, index: tuple[int, ...]) -> list[Source]:
        self._result_shape(result)
        idx = check_index(self.rshape, index, f"result #{result} index")
        row = self._row(idx)
        out = []
        if result == 0:
            out.append(Source(0, (*idx[:-1], int(self.order[row, idx[-1]])), "copy"))
        out += [Source(0, (*idx[:-1], p), "control") for p in range(self.n)]
        return out

    def targets(self, operand: int, index: tuple[int, ...]) -> list[Target]:
        self._operand_shape(operand)
        idx = check_index(self.shape, index, f"operand #{operand} index")
        row = self._row(idx)
        j = int(self.rank[row, idx[-1]])
        out = [Target(0, (*idx[:-1], j), "copy")] if j >= 0 else []
        out += [Target(r, (*idx[:-1], q), "control") for r in (0, 1) for q in range(self.k)]
        return out

    def back(self, result: int, mask: np.ndarray) -> dict[tuple[int | None, str], np.ndarray]:
        m = _rows(_check_mask(self._result_shape(result), mask, f"back(result #{result})"))
        out: dict[tuple[int | None, str], np.ndarray] = {}
        if result == 0:
            hit = np.zeros((m.shape[0], self.n), dtype=bool)
            np.put_along_axis(hit, self.order, m, axis=-1)
            _merge(out, (0, "copy"), hit.reshape(self.shape))
        rows = np.broadcast_to(m.any(axis=-1, keepdims=True), (m.shape[0], self.n))
        _merge(out, (0, "control"), rows.reshape(self.shape).copy())
        return out

    def fwd(self, operand: int, mask: np.ndarray) -> dict[tuple[int, str], np.ndarray]:
        m = _rows(_check_mask(self._operand_shape(operand), mask, f"fwd(operand #{operand})"))
        out: dict[tuple[int, str], np.ndarray] = {}
        _merge(out, (0, "copy"), np.take_along_axis(m, self.order, axis=-1).reshape(self.rshape))
        rows = np.broadcast_to(m.any(axis=-1, keepdims=True), self.order.shape).reshape(self.rshape)
        for r in (0, 1):
            _merge(out, (r, "control"), rows.copy())
        return out


def _prov_top_k(ctx: OpCall, inputs: list[Any], outputs: list[Any]) -> TopKProvenance:
    return TopKProvenance(value_shape(inputs[0]), _order_of(ctx, inputs[0]))


# --- explain -------------------------------------------------------------------------------

def _ties(keys: np.ndarray, p: int) -> tuple[int, ...]:
    """Positions of the row whose key equals position p's (p itself included)."""
    return tuple(int(q) for q in np.flatnonzero(keys == keys[p]))


def _explain_top_k(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
                   index: tuple) -> Explanation:
    if not 0 <= result < len(outputs):
        raise ExecutionError(f"result #{result} does not exist (the op has {len(outputs)} results)")
    idx = check_index(value_shape(outputs[result]), index, f"result #{result} index")
    x = inputs[0]
    et = ctx.operand_types[0].element
    row_index = idx[:-1]
    row = x[row_index]
    j = idx[-1]
    keys = order_key(row, et)
    full = np.argsort(~keys, kind="stable")  # the whole row's ranking
    p = int(full[j])
    ties = _ties(keys, p)
    slice_text = ", ".join([*(str(i) for i in row_index), ":"])
    name = ctx.op.operands[0].name
    value = outputs[result][idx]
    steps = [
        Step("row", Msg("chlo_topk.row.formula"), row.copy(),
             substituted=Msg("chlo_topk.row.substituted", name=name, slice=slice_text)),
        Step("ranking", Msg("chlo_topk.ranking.formula_float" if et.is_float else
                            "chlo_topk.ranking.formula_int"), tuple(int(q) for q in full)),
        Step(Msg("chlo_topk.position.name"), Msg("chlo_topk.position.formula"), p,
             substituted=Msg("chlo_topk.position.substituted", j=j, k=ctx.attrs.k)),
    ]
    if len(ties) > 1:
        steps.append(Step(Msg("chlo_topk.ties.name"), Msg("chlo_topk.ties.formula"), ties,
                          substituted=Msg("chlo_topk.ties.substituted", value=row[p], rank=ties.index(p))))
    if result == 0:
        steps.append(Step("values[result_index]", Msg("chlo_topk.values.formula"), value,
                          substituted=Msg("explain.element", name=name,
                                          index=", ".join(str(i) for i in (*row_index, p)))))
    else:
        steps.append(Step("indices[result_index]", Msg("chlo_topk.indices.formula"), value,
                          substituted=Msg("chlo_topk.indices.substituted", j=j, position=p)))
    notes = [Msg("chlo_topk.note.order_float" if et.is_float else "chlo_topk.note.order_int")]
    return Explanation(ctx.op.name, idx, steps, value, notes, result)


op("chlo.top_k", aliases=("TopK",), verify=_verify_top_k, attrs=TopKAttrs, infer=infer_top_k, family="sort",
   provenance=_prov_top_k, explain=_explain_top_k)(top_k)


# --- parameter schema (hlolab.ops.examples) ------------------------------------------------

def _top_k_schema() -> None:
    from hlolab.ops.examples import (
        Operand,
        OpParts,
        OpSchema,
        dtype_param,
        inferred_results,
        int_param,
        register_schema,
        shape_param,
        ttype,
    )

    def build(p: dict[str, Any]) -> OpParts:
        operands = [Operand("operand", ttype(p["operand"], p["dtype"]))]
        rec = TopKAttrs(k=p["k"])
        return OpParts(operands, inferred_results("chlo.top_k", rec, [o.type for o in operands],
                                                  p["dtype"]), rec)

    register_schema(OpSchema("chlo.top_k", (
        shape_param("operand", (3, 5), "shape of the operand; rows run along the last dim"),
        int_param("k", 2, "how many of the largest elements of each row"),
        dtype_param("f32"),
    ), {"default": {},
        "ties": {"operand": (2, 4), "k": 3, "dtype": "f32", "index": (0, 1),
                 "inputs": {"operand": [[1.0, 3.0, 3.0, 2.0], [0.0, -0.0, 5.0, 0.0]]}}},
        build, doc="the k largest elements of each last-dim row and their indices"))


_top_k_schema()
