"""Control flow: while, if, case, call, composite, and the token ops.

Their evaluators are generators (``steps=True``): they yield the events of
the ops in their bodies so the stepper goes op by op through them, and
return the op's results. They also say where each result comes from
(``ctx.result_defs``: the value a body or branch returned) and which values
decided it (``ctx.control_defs``: a while's conditions, an if's predicate),
which is their provenance in a program trace.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np

from hlolab.ops.registry import TOKEN, OpCall, op
from hlolab.types import TensorType, TokenType


def _scalar(ctx: OpCall, value: Any, what: str) -> Any:
    if not isinstance(value, np.ndarray) or value.shape != ():
        raise ctx.error(None, f"{what} must be a rank-0 tensor, got {value!r}")
    return value.item()


def _verify_while(ctx: OpCall) -> None:
    if len(ctx.op.regions) != 2:
        raise ctx.error(None, "expects a cond and a body region")
    cond, body = (r.entry for r in ctx.op.regions)
    types = ctx.operand_types
    if [a.type for a in cond.args] != types:
        raise ctx.error("C1", "cond region arguments must have the operand types "
                        f"{[str(t) for t in types]}")
    if [a.type for a in body.args] != types:
        raise ctx.error("C2", "body region arguments must have the operand types "
                        f"{[str(t) for t in types]}")
    if ctx.result_types != types:
        raise ctx.error("C3", "result types must equal the operand types")


@op("stablehlo.while", aliases=("While",), verify=_verify_while, steps=True)
def while_(ctx: Any, *operands: Any) -> Generator[Any, None, list[Any]]:
    """Run ``body`` while ``cond`` returns true; iterations are numbered from 0."""
    values, defs = list(operands), list(ctx.operand_defs)
    iteration = 0
    while True:
        (pred,) = yield from ctx.step_region(0, values, iteration=iteration, arg_defs=defs)
        ctx.control_defs += [d for d in ctx.last_defs if d is not None]
        if not _scalar(ctx, pred, "the while condition"):
            ctx.result_defs = defs
            return values
        values = yield from ctx.step_region(1, values, iteration=iteration, arg_defs=defs)
        defs = list(ctx.last_defs)
        iteration += 1
        ctx.count_step()


def _verify_if(ctx: OpCall) -> None:
    if len(ctx.op.regions) != 2:
        raise ctx.error(None, "expects a true branch and a false branch")
    pred = ctx.operand_types[0]
    if not (isinstance(pred, TensorType) and pred.shape == () and str(pred.element) == "i1"):
        raise ctx.error(None, f"pred must be tensor<i1>, got {pred}")


@op("stablehlo.if", aliases=("Conditional",), verify=_verify_if, steps=True)
def if_(ctx: Any, pred: np.ndarray) -> Generator[Any, None, list[Any]]:
    """The true branch (region 0) when ``pred``, else the false branch (region 1)."""
    branch = 0 if _scalar(ctx, pred, "pred") else 1
    out = yield from ctx.step_region(branch, [])
    _branch_defs(ctx)
    return out


def _branch_defs(ctx: Any) -> None:
    """The results are the branch's returns; the selector decided which branch."""
    ctx.result_defs = list(ctx.last_defs)
    ctx.control_defs = [d for d in ctx.operand_defs[:1] if d is not None]


def _verify_case(ctx: OpCall) -> None:
    if not ctx.op.regions:
        raise ctx.error("C1", "case needs at least one branch")
    index = ctx.operand_types[0]
    if not (isinstance(index, TensorType) and index.shape == () and str(index.element) in ("i32", "si32")):
        raise ctx.error(None, f"index must be tensor<i32>, got {index}")


@op("stablehlo.case", verify=_verify_case, steps=True)
def case(ctx: Any, index: np.ndarray) -> Generator[Any, None, list[Any]]:
    """Branch ``index``; an index out of [0, N) selects the last branch (spec)."""
    n = len(ctx.op.regions)
    i = int(_scalar(ctx, index, "index"))
    branch = i if 0 <= i < n else n - 1
    out = yield from ctx.step_region(branch, [])
    _branch_defs(ctx)
    return out


@op(("func.call", "call"), aliases=("Call",), steps=True)
def call(ctx: Any, *args: Any) -> Generator[Any, None, list[Any]]:
    """Call the function named by ``callee``."""
    out = yield from ctx.call_function(ctx.symbol("callee"), list(args))
    ctx.result_defs = list(ctx.last_defs)
    return out


@op("stablehlo.composite", steps=True)
def composite(ctx: Any, *args: Any) -> Generator[Any, None, list[Any]]:
    """A composite runs its ``decomposition`` function (the spec's semantics)."""
    out = yield from ctx.call_function(ctx.symbol("decomposition"), list(args))
    ctx.result_defs = list(ctx.last_defs)
    return out


def _verify_tokens(ctx: OpCall) -> None:
    for t in ctx.operand_types:
        if not isinstance(t, TokenType):
            raise ctx.error(None, f"operands must be tokens, got {t}")


@op("stablehlo.after_all", aliases=("AfterAll",), verify=_verify_tokens)
def after_all(ctx: OpCall, *tokens: Any) -> Any:
    """A token that orders after all input tokens; tokens carry no data."""
    return TOKEN


@op("stablehlo.create_token", aliases=("CreateToken",))
def create_token(ctx: OpCall) -> Any:
    return TOKEN
