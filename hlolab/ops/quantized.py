"""Ops on quantized tensors, by the spec's rules, written once for every op.

The spec gives most ops one rule for quantized types (Notation, "dequantize_op_quantize"
and friends): dequantize every quantized operand to its expressed type, run the op on
those floats, quantize every result whose type is quantized. ``install`` wraps the
evaluate and explain of each op the spec gives such a rule (``RULES``); the op's own code
then runs unchanged on a *float view* of the call, whose quantized types read as their
expressed types. The variants are the same three stages:

- ``dequantize_op_quantize``: element-wise ops, clamp, dot_general, convolution,
  batch_norm_inference, cholesky, triangular_solve, reduce_precision, iota (whose output
  is ``quantize(output_index[iota_dimension])``),
- ``dequantize_batch_norm_grad_or_training_quantize``: each of the three results
  quantized by its own type,
- ``dequantize_compare``: the float comparison, ``compare_type`` FLOAT, an i1 result,
- ``dequantize_select_quantize``: ``pred`` is read as is,
- ``hybrid_dequantize_then_op`` (dot_general, convolution with a float lhs and a quantized
  rhs): the same stages without the last, the result stays float.

Ops that move data (reshape, transpose, slice, gather, pad, concatenate, bitcast_convert,
…) carry the storage integers unchanged, as their constraints keep the quantized type, and
are not wrapped. Provenance is the op's own: which elements an op reads does not change.

Ops with a region (reduce, reduce_window, scatter, select_and_scatter, sort) have no rule
of their own: the region runs on the stored integers and each quantized op in it applies
its rule at every body call (so every intermediate value is rounded to storage). Their
explain() (``quantized_region_explain``) runs the body calls that made the chosen element,
in the op's own schedule, with the wrapped ops recording (``recording``) what they computed:
the dequantized elements read, each body call in real values, the float result of the
last call and its rounding to storage.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from hlolab.interp.single import normalize_outputs
from hlolab.ir.module import Value
from hlolab.messages import Msg
from hlolab.ops.quant_ops import (
    dequantize,
    dequantize_step,
    expressed_tensor,
    quantize,
    quantize_steps,
    quantized_element,
)
from hlolab.ops.registry import OpCall, OpDef
from hlolab.trace.explain import Explanation, Step, elementwise_explain

_ELEMENTWISE = (
    "abs add atan2 cbrt ceil clamp cosine divide exponential exponential_minus_one floor log "
    "log_plus_one logistic maximum minimum multiply negate power remainder round_nearest_afz "
    "round_nearest_even rsqrt sign sine sqrt subtract tan tanh").split()

# op -> the spec's rule for quantized types (the name its Notation section gives it)
RULES: dict[str, str] = {
    **{f"stablehlo.{n}": "dequantize_op_quantize" for n in _ELEMENTWISE},
    **{f"stablehlo.{n}": "dequantize_op_quantize" for n in (
        "dot_general", "dot", "convolution", "batch_norm_inference", "cholesky", "triangular_solve",
        "reduce_precision", "iota")},
    "stablehlo.batch_norm_grad": "dequantize_batch_norm_grad_or_training_quantize",
    "stablehlo.batch_norm_training": "dequantize_batch_norm_grad_or_training_quantize",
    "stablehlo.compare": "dequantize_compare",
    "stablehlo.select": "dequantize_select_quantize",
}
HYBRID = frozenset({"stablehlo.dot_general", "stablehlo.dot", "stablehlo.convolution"})


def is_quantized_call(ctx: OpCall) -> bool:
    """Some operand or result of the op has a quantized tensor type."""
    return any(quantized_element(t) is not None for t in (*ctx.operand_types, *ctx.result_types))


def rule_of(ctx: OpCall) -> str:
    """The spec's rule name for this call (``hybrid_dequantize_then_op`` for a float lhs)."""
    rule = RULES[ctx.name]
    if ctx.name in HYBRID and quantized_element(ctx.operand_types[0]) is None:
        return "hybrid_dequantize_then_op"
    return rule


def float_view(ctx: OpCall) -> OpCall:
    """The call as the op sees it on dequantized values: every quantized tensor type read
    as the tensor of its expressed type (same value names, attributes and regions)."""
    rec = ctx.attrs  # read the record once, on the original op
    fop = copy.copy(ctx.op)
    fop.operands = [Value(v.name, expressed_tensor(v.type), v.owner, v.index) for v in ctx.op.operands]
    fop.results = [Value(v.name, expressed_tensor(v.type), fop, v.index) for v in ctx.op.results]
    if ctx.name == "stablehlo.compare":  # dequantize_compare: compare(…, FLOAT)
        rec = dataclasses.replace(rec, compare_type="FLOAT")
    fop.record = rec
    fctx = copy.copy(ctx)
    fctx.op = fop
    return fctx


def float_inputs(ctx: OpCall, inputs: list[Any]) -> list[Any]:
    """Quantized operands dequantized to their expressed type; the others as they are."""
    batch = len(ctx.batch_shape)
    out = []
    for t, x in zip(ctx.operand_types, inputs, strict=False):
        qt = quantized_element(t)
        out.append(dequantize(x, qt, batch) if qt is not None and isinstance(x, np.ndarray) else x)
    out.extend(inputs[len(ctx.operand_types):])
    return out


def _float_results(base: Callable[..., Any], fctx: OpCall, finputs: list[Any], n: int) -> list[Any]:
    with np.errstate(all="ignore"):
        return normalize_outputs(base(fctx, *finputs), n)


def _quantize_results(ctx: OpCall, results: list[Any]) -> list[Any]:
    batch = len(ctx.batch_shape)
    out = []
    for t, y in zip(ctx.result_types, results, strict=True):
        qt = quantized_element(t)
        out.append(quantize(y, qt, batch) if qt is not None else y)
    return out


@dataclasses.dataclass
class Record:
    """One run of a wrapped op on quantized values: the original op, its operands
    dequantized, its float results and the stored (quantized) results."""

    op: Any
    finputs: list[Any]
    floats: list[Any]
    stored: list[Any]


_RECORDING = threading.local()


@contextlib.contextmanager
def recording() -> Iterator[list[Record]]:
    """Collect a ``Record`` of every wrapped op that runs on quantized values inside the
    block (this thread only): what a region's quantized ops computed, for explain()."""
    saved = getattr(_RECORDING, "calls", None)
    _RECORDING.calls = calls = []
    try:
        yield calls
    finally:
        _RECORDING.calls = saved


def quantized_evaluate(base: Callable[..., Any]) -> Callable[..., Any]:
    """``base`` (an op's evaluate) run by the spec's rule when a type is quantized."""

    def evaluate(ctx: OpCall, *inputs: Any) -> Any:
        if not is_quantized_call(ctx):
            return base(ctx, *inputs)
        fctx = float_view(ctx)
        finputs = float_inputs(ctx, list(inputs))
        results = _float_results(base, fctx, finputs, len(ctx.result_types))
        out = _quantize_results(ctx, results)
        calls = getattr(_RECORDING, "calls", None)
        if calls is not None:
            calls.append(Record(ctx.op, finputs, results, out))
        return out if len(out) != 1 else out[0]

    evaluate.__doc__ = base.__doc__
    evaluate.__name__ = getattr(base, "__name__", "evaluate")
    evaluate.__wrapped__ = base  # type: ignore[attr-defined]
    return evaluate


def _at(name: str, idx: tuple[int, ...]) -> str:
    return f"{name}[{', '.join(map(str, idx))}]" if idx else name


def quantized_explain(opdef: OpDef, base_evaluate: Callable[..., Any],
                      base_explain: Callable[..., Any] | None) -> Callable[..., Any]:
    """The op's explanation on the dequantized values between the dequantize and quantize
    stages: (1) the dequantized inputs, (2) the op's own steps in the expressed type,
    (3) the scaling, clamping and rounding back to storage."""

    def explain(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int, index: tuple) -> Explanation:
        if not is_quantized_call(ctx):
            if base_explain is None:
                return elementwise_explain(ctx, inputs, outputs, result, index)
            return base_explain(ctx, inputs, outputs, result, index)
        fctx = float_view(ctx)
        finputs = float_inputs(ctx, list(inputs))
        fouts = _float_results(base_evaluate, fctx, finputs, len(ctx.result_types))
        inner = (base_explain or elementwise_explain)(fctx, finputs, fouts, result, index)
        idx = inner.index
        # (1) the dequantized inputs: element-wise ops read the element at the same index,
        # other ops the elements their provenance lists for this one
        read = None if opdef.elementwise else _sources_read(opdef, ctx, inputs, outputs, result, idx)
        stage: list[Step] = []
        more = 0
        for i, (v, t, x) in enumerate(zip(ctx.op.operands, ctx.operand_types, inputs, strict=False)):
            qt = quantized_element(t)
            if qt is None or not isinstance(x, np.ndarray):
                continue
            if opdef.elementwise:
                at = idx if x.ndim else ()
                stage.append(dequantize_step(_at(v.name, at), x[at], qt, at))
            elif read is not None:
                mine = read.get(i, [])
                room = max(SHOWN_CALLS - len(stage), 0)
                stage += [dequantize_step(_at(v.name, at), x[at], qt, at) for at in mine[:room]]
                more += max(len(mine) - room, 0)
            else:
                stage.append(Step(v.name, Msg("quantized.dequantize.formula"), finputs[i],
                                  substituted=Msg("quantized.note.params", type=str(qt))))
        values = tuple(s.value for s in stage)
        steps = [Step(Msg("quantized.dequantize.stage"), None,
                      values if opdef.elementwise and values else "", children=stage,
                      substituted=Msg("quantized.region.more", count=more) if more else None)]
        # (2) the op's own steps on the floats, and the float result
        expressed = fouts[result].dtype
        steps.extend(inner.steps)
        steps.append(Step(Msg("quantized.stage.float"),
                          Msg("quantized.stage.float_formula", op=ctx.name.removeprefix("stablehlo."),
                              expressed=str(expressed_tensor(ctx.result_types[result]))),
                          fouts[result][idx]))
        # (3) back to storage, where the result is quantized
        rq = quantized_element(ctx.result_types[result])
        if rq is not None:
            qsteps = quantize_steps(fouts[result][idx], rq, idx)
            steps.append(Step(Msg("quantized.stage.quantize"), None, qsteps[-1].value, children=qsteps))
        rule = rule_of(ctx)
        if rule == "hybrid_dequantize_then_op":
            note = Msg("quantized.note.hybrid", op=ctx.name.removeprefix("stablehlo."),
                       expressed=str(expressed))
        else:
            note = Msg("quantized.note.rule", op=ctx.name.removeprefix("stablehlo."), rule=rule)
        return Explanation(ctx.op.name, idx, steps, outputs[result][idx], [note, *inner.notes], result,
                           index_roles=inner.result_roles(), bits=inner.bits)

    return explain


def _sources_read(opdef: OpDef, ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
                  idx: tuple[int, ...]) -> dict[int, list[tuple[int, ...]]] | None:
    """Per operand, the indices of the elements result element ``idx`` reads (its
    provenance's sources, in their order, each once); None without provenance."""
    if opdef.provenance is None:
        return None
    try:
        srcs = opdef.provenance(ctx, inputs, outputs).sources(result, idx)
    except NotImplementedError:
        return None
    out: dict[int, list[tuple[int, ...]]] = {}
    for src in srcs:
        if src.operand is not None:
            at = tuple(int(i) for i in src.index)
            if at not in out.setdefault(src.operand, []):
                out[src.operand].append(at)
    return out


_INSTALLED: set[int] = set()


def install(registry: dict[str, OpDef]) -> None:
    """Wrap the evaluate and explain of every op in ``RULES`` (once per OpDef)."""
    for name in RULES:
        d = registry.get(name)
        if d is None or id(d) in _INSTALLED:
            continue
        base = d.evaluate
        d.explain = quantized_explain(d, base, d.explain)
        d.evaluate = quantized_evaluate(base)
        _INSTALLED.add(id(d))
    for name in REGION_OPS:
        d = registry.get(name)
        if d is None or id(d) in _INSTALLED or d.explain is None:
            continue
        d.explain = quantized_region_explain(d.explain)
        _INSTALLED.add(id(d))


# --- region ops on quantized tensors ---------------------------------------------------------
#
# reduce, reduce_window, scatter, select_and_scatter and sort have no rule of their own: their
# region runs on the stored integers and every op in it applies its quantized rule, once per
# body call. Their explain() shows the stages for the chosen element by running the body calls
# that made it (in the op's own schedule) with the wrapped ops recording what they computed.

REGION_OPS = ("stablehlo.reduce", "stablehlo.reduce_window", "stablehlo.scatter",
              "stablehlo.select_and_scatter", "stablehlo.sort")
SHOWN_CALLS = 32  # body calls listed (the first ones and the last); the rest are counted


@dataclasses.dataclass
class BodyCall:
    """One application of a region for the chosen element: the stored values it read and
    returned, and the quantized ops that ran in it (values at this call)."""

    args: list[Any]
    results: list[Any]
    records: list[Record]


@dataclasses.dataclass
class RegionPlan:
    """What the chosen element read (label, stored value, quantized type) and the body
    calls that made it, in application order, from region ``region``."""

    sources: list[tuple[str, Any, Any]]
    calls: list[BodyCall]
    region: int = 0
    unlisted: int = 0  # elements read but not in ``sources`` (a long slice)


def _pick(x: Any, j: int | None) -> Any:
    a = np.asarray(x)
    return a[()] if j is None or a.ndim == 0 else a[j]


def run_body(ctx: OpCall, region: int, args: list[Any], batch: int | None = None) -> list[BodyCall]:
    """Region ``region`` applied to ``args`` (0-d, or with one leading dim of ``batch`` body
    calls at once), one ``BodyCall`` per call with the records of its quantized ops."""
    with recording() as recs:
        outs = ctx.run_region(region, [np.asarray(a) for a in args])
    positions: list[int | None] = [None] if batch is None else list(range(batch))
    return [BodyCall([_pick(a, j) for a in args], [_pick(o, j) for o in outs],
                     [Record(r.op, [_pick(x, j) if isinstance(x, np.ndarray) else x for x in r.finputs],
                             [_pick(x, j) for x in r.floats], [_pick(x, j) for x in r.stored])
                      for r in recs])
            for j in positions]


def _fold(ctx: OpCall, region: int, start: list[Any], items: list[list[Any]]) -> list[BodyCall]:
    """acc = body(acc..., item...) over ``items`` in order, from ``start``."""
    calls: list[BodyCall] = []
    acc = list(start)
    for item in items:
        calls.extend(run_body(ctx, region, acc + item))
        acc = calls[-1].results
    return calls


def _names(ctx: OpCall, k: int) -> str:
    return ctx.op.operands[k].name if k < len(ctx.op.operands) else f"operand{k}"


def _plan_reduce(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
                 idx: tuple[int, ...]) -> RegionPlan:
    """The slice of every input at ``idx`` (reduced dims last, ascending, row-major), the
    pairwise tree over it (one batched call per round, the odd element carried over),
    then body(init, tree): the op's own schedule."""
    n = len(inputs) // 2
    dims = list(ctx.attrs.dimensions)
    flats = []
    for x in inputs[:n]:
        a = np.asarray(x)
        moved = np.moveaxis(a, dims, list(range(a.ndim - len(dims), a.ndim)))
        flats.append(np.asarray(moved[idx]).reshape(-1))
    inits = [np.asarray(v)[()] for v in inputs[n:]]
    sources = []
    for k in range(n):
        qt = quantized_element(ctx.operand_types[k])
        sources.append((_names(ctx, n + k), inits[k], quantized_element(ctx.operand_types[n + k])))
        kept = [d for d in range(np.ndim(inputs[k])) if d not in dims]
        for p in range(min(flats[k].size, SHOWN_CALLS)):  # labels for those shown; the rest counted
            pos = dict(zip(kept, idx, strict=True))
            pos.update(zip(dims, np.unravel_index(p, [np.shape(inputs[k])[d] for d in dims]), strict=True))
            at = tuple(int(pos[d]) for d in range(np.ndim(inputs[k])))
            sources.append((_at(_names(ctx, k), at), flats[k][p], qt))
    calls: list[BodyCall] = []
    vals = flats
    while vals[0].size > 1:
        pairs = vals[0].size // 2
        round_calls = run_body(ctx, 0, [v[0:2 * pairs:2] for v in vals] + [v[1:2 * pairs:2] for v in vals],
                               batch=pairs)
        calls.extend(round_calls)
        outs = [np.array([c.results[k] for c in round_calls], dtype=v.dtype) for k, v in enumerate(vals)]
        vals = [np.concatenate([o, v[-1:]]) if v.size % 2 else o for o, v in zip(outs, vals, strict=True)]
    if vals[0].size:
        calls.extend(run_body(ctx, 0, inits + [v[0] for v in vals]))
    return RegionPlan(sources, calls, unlisted=sum(max(f.size - SHOWN_CALLS, 0) for f in flats))


def _plan_reduce_window(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
                        idx: tuple[int, ...]) -> RegionPlan:
    """acc = init, then body(acc, window element) over the window positions in row-major
    order (padding and dilation holes read init), as reduce_window folds."""
    from hlolab.ops.window import window_params

    n = len(inputs) // 2
    p = window_params(ctx.attrs, np.shape(inputs[0]))
    out_shape = p.num_windows
    bases = [p.frame.materialize(np.asarray(x), np.asarray(v), ctx.element_budget)
             for x, v in zip(inputs[:n], inputs[n:], strict=True)]
    inits = [np.asarray(v)[()] for v in inputs[n:]]
    items = [[np.asarray(b[p.window_slices(w, out_shape)])[idx] for b in bases] for w in p.positions()]
    sources = [(_names(ctx, n + k), inits[k], quantized_element(ctx.operand_types[n + k])) for k in range(n)]
    for w, item in zip(p.positions(), items, strict=True):
        for k in range(n):
            sources.append((f"windows[{k}][{', '.join(map(str, w))}]", item[k],
                            quantized_element(ctx.operand_types[k])))
    return RegionPlan(sources, _fold(ctx, 0, inits, items))


def _plan_scatter(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
                  idx: tuple[int, ...]) -> RegionPlan:
    """acc = inputs[idx], then update_computation(acc, update) over the update elements
    that land on ``idx``, in the op's application order (row-major over updates)."""
    from hlolab.ops import registry

    n = len(ctx.result_types)
    prov = registry.lookup(ctx.name).provenance(ctx, inputs, outputs)  # type: ignore[union-attr]
    ps = prov.update_positions(result, idx)
    updates = [np.asarray(u).reshape(-1) for u in inputs[n + 1:]]
    ushape = np.shape(inputs[n + 1])
    start = [np.asarray(x)[idx] for x in inputs[:n]]
    sources = [(_at(_names(ctx, k), idx), start[k], quantized_element(ctx.operand_types[k]))
               for k in range(n)]
    items = []
    for q in ps:
        ui = tuple(int(i) for i in np.unravel_index(int(q), ushape))
        items.append([u[q] for u in updates])
        sources.extend((_at(_names(ctx, n + 1 + k), ui), updates[k][q],
                        quantized_element(ctx.operand_types[n + 1 + k])) for k in range(n))
    return RegionPlan(sources, _fold(ctx, 0, start, items))


def _plan_select_and_scatter(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
                             idx: tuple[int, ...]) -> RegionPlan:
    """acc = init_value, then scatter(acc, source element) over the source elements whose
    window selected ``idx`` (row-major over source), as the op combines them."""
    from hlolab.ops import registry

    prov = registry.lookup(ctx.name).provenance(ctx, inputs, outputs)  # type: ignore[union-attr]
    chosen = [s for s in prov.sources(result, idx) if s.operand == 1 and s.role != "control"]
    init = np.asarray(inputs[2])[()]
    sources = [(_names(ctx, 2), init, quantized_element(ctx.operand_types[2]))]
    items = []
    for s in sorted(chosen, key=lambda s: s.index):
        v = np.asarray(inputs[1])[s.index]
        items.append([v])
        sources.append((_at(_names(ctx, 1), s.index), v, quantized_element(ctx.operand_types[1])))
    return RegionPlan(sources, _fold(ctx, 1, [init], items), region=1)


def _plan_sort(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
               idx: tuple[int, ...]) -> RegionPlan:
    """sort moves stored integers: the chosen element and nothing rounded (the comparator's
    compares dequantize, dequantize_compare)."""
    qt = quantized_element(ctx.result_types[result])
    name = _at(ctx.op.results[result].name, idx)
    return RegionPlan([(name, np.asarray(outputs[result])[idx], qt)] if qt is not None else [], [])


PLANS: dict[str, Callable[..., RegionPlan]] = {
    "stablehlo.reduce": _plan_reduce, "stablehlo.reduce_window": _plan_reduce_window,
    "stablehlo.scatter": _plan_scatter, "stablehlo.select_and_scatter": _plan_select_and_scatter,
    "stablehlo.sort": _plan_sort,
}


def _real(x: Any, qt: Any) -> Any:
    return dequantize(np.asarray(x).reshape(1), qt)[0] if qt is not None else x


def _csv_values(values: list[Any]) -> str:
    return ", ".join(str(v) for v in values)


def _call_step(ctx: OpCall, region: int, k: int, call: BodyCall, result: int) -> Step:
    """``body call k``: its arguments and result in real values, one child per quantized op
    that ran in it (dequantized operands, float result, stored result)."""
    block = ctx.op.regions[region].blocks[0]
    arg_q = [quantized_element(a.type) for a in block.args]
    real_args = [_real(a, q) for a, q in zip(call.args, arg_q, strict=False)]
    ret = block.ops[-1].operands
    rq = quantized_element(ret[result].type) if result < len(ret) else None
    value = _real(call.results[result], rq) if result < len(call.results) else None
    children = []
    for rec in call.records:
        name = rec.op.name.removeprefix("stablehlo.")
        for r, (f, q) in enumerate(zip(rec.floats, rec.stored, strict=True)):
            qt = quantized_element(rec.op.results[r].type)
            children.append(Step(rec.op.results[r].name,
                                 Msg("quantized.region.op", op=name),
                                 q, substituted=Msg("quantized.region.op_substituted", op=name,
                                                    args=_csv_values([x for x in rec.finputs
                                                                      if not isinstance(x, list)]),
                                                    float=f, stored=q, real=_real(q, qt))))
    return Step(Msg("quantized.region.call", k=k), Msg("quantized.region.call_formula"), value,
                children=children,
                substituted=Msg("quantized.region.call_substituted", args=_csv_values(real_args)))


def quantized_region_explain(base_explain: Callable[..., Any]) -> Callable[..., Any]:
    """A region op's explanation with the three stages for a quantized call: (1) the
    dequantized elements it read, (2) the body calls in real values (each quantized op in
    them dequantizes, computes in the expressed type and quantizes back), the float result
    of the last, (3) its scaling, clamping and rounding to the stored result."""

    def explain(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int, index: tuple) -> Explanation:
        inner = base_explain(ctx, inputs, outputs, result, index)
        if not is_quantized_call(ctx):
            return inner
        idx = inner.index
        plan = PLANS[ctx.name](ctx, inputs, outputs, result, idx)
        op = ctx.name.removeprefix("stablehlo.")
        shown = plan.sources[:SHOWN_CALLS]
        more = len(plan.sources) - len(shown) + plan.unlisted
        stage = [dequantize_step(label, q, qt, ()) if qt is not None else Step(label, None, q)
                 for label, q, qt in shown]
        steps = [Step(Msg("quantized.dequantize.stage"), None, "", children=stage,
                      substituted=Msg("quantized.region.more", count=more) if more else None)]
        steps.extend(inner.steps)
        notes = [Msg("quantized.note.region_sort") if ctx.name == "stablehlo.sort"
                 else Msg("quantized.note.region", op=op)]
        calls = plan.calls
        if calls:
            keep = list(range(min(len(calls), SHOWN_CALLS - 1)))
            if len(calls) >= SHOWN_CALLS:  # the last call made the value: always shown
                keep.append(len(calls) - 1)
            children = [_call_step(ctx, plan.region, k + 1, calls[k], result) for k in keep]
            steps.append(Step(Msg("quantized.region.calls", count=len(calls)), None,
                              children[-1].value, children=children))
            last = calls[-1]
            ret = ctx.op.regions[plan.region].blocks[0].ops[-1].operands
            v = ret[result] if result < len(ret) else None
            rec = next((r for r in reversed(last.records) if v is not None and r.op is v.owner), None)
            if rec is not None:
                f = rec.floats[v.index]
                rq = quantized_element(rec.op.results[v.index].type)
                steps.append(Step(Msg("quantized.stage.float"),
                                  Msg("quantized.region.float_formula",
                                      op=rec.op.name.removeprefix("stablehlo."),
                                      expressed=str(np.asarray(f).dtype)), f))
                if rq is not None:
                    qsteps = quantize_steps(f, rq, ())
                    steps.append(Step(Msg("quantized.stage.quantize"), None, qsteps[-1].value,
                                      children=qsteps))
            else:
                notes.append(Msg("quantized.note.region_carried", op=op))
        return Explanation(ctx.op.name, idx, steps, outputs[result][idx], [*notes, *inner.notes], result,
                           index_roles=inner.result_roles(), bits=inner.bits)

    return explain
