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
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
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


def quantized_evaluate(base: Callable[..., Any]) -> Callable[..., Any]:
    """``base`` (an op's evaluate) run by the spec's rule when a type is quantized."""

    def evaluate(ctx: OpCall, *inputs: Any) -> Any:
        if not is_quantized_call(ctx):
            return base(ctx, *inputs)
        fctx = float_view(ctx)
        results = _float_results(base, fctx, float_inputs(ctx, list(inputs)), len(ctx.result_types))
        out = _quantize_results(ctx, results)
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
        # (1) the dequantized inputs: element-wise ops read the element at the same index
        stage: list[Step] = []
        for i, (v, t, x) in enumerate(zip(ctx.op.operands, ctx.operand_types, inputs, strict=False)):
            qt = quantized_element(t)
            if qt is None or not isinstance(x, np.ndarray):
                continue
            if opdef.elementwise:
                at = idx if x.ndim else ()
                stage.append(dequantize_step(_at(v.name, at), x[at], qt, at))
            else:
                stage.append(Step(v.name, Msg("quantized.dequantize.formula"), finputs[i],
                                  substituted=Msg("quantized.note.params", type=str(qt))))
        values = tuple(s.value for s in stage)
        steps = [Step(Msg("quantized.dequantize.stage"), None,
                      values if opdef.elementwise and values else "", children=stage)]
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
