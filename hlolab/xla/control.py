"""Control flow and sub-computations: While, Conditional, Call, Sort, TopK."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hlolab.ir.module import Func
from hlolab.xla.builder import (
    BuilderError,
    XlaBuilder,
    XlaComputation,
    XlaOp,
    builder_function,
    clone_func,
    emit,
)


def _many(x: XlaOp | Sequence[XlaOp]) -> tuple[list[XlaOp], bool]:
    return ([x], True) if isinstance(x, XlaOp) else (list(x), False)


def _one_or_tuple(out: list[XlaOp], single: bool) -> Any:
    return out[0] if single and len(out) == 1 else tuple(out)


@builder_function
def While(condition: XlaComputation, body: XlaComputation, init: XlaOp | Sequence[XlaOp]) -> Any:
    """Repeat ``body`` on the loop state while ``condition`` holds, from ``init``:
    ``stablehlo.while``. A list ``init`` gives a tuple of results."""
    ops, single = _many(init)
    return _one_or_tuple(emit("stablehlo.while", ops, computations=[condition, body], what="While"), single)


def _branch(comp: Any, operand: Any, what: str) -> tuple[XlaComputation, list[XlaOp]]:
    if not isinstance(comp, XlaComputation):
        raise BuilderError(f"{what}: expected an XlaComputation branch, got {type(comp).__name__} {comp!r}")
    if operand is None:
        return comp, []
    return comp, [operand] if isinstance(operand, XlaOp) else list(operand)


@builder_function
def Conditional(predicate: XlaOp, *args: Any) -> Any:
    """``Conditional(pred, true_operand, true_computation, false_operand, false_computation)``:
    one branch runs on its operand (``stablehlo.if``); ``Conditional(branch_index,
    branch_computations, branch_operands)``: branch ``branch_index`` (out of range: the last)
    runs (``stablehlo.case``). Each branch's parameters stand for its operand(s)."""
    if len(args) == 4:
        branches = [_branch(args[1], args[0], "Conditional"), _branch(args[3], args[2], "Conditional")]
        name = "stablehlo.if"
    elif len(args) == 2:
        comps, operands = list(args[0]), list(args[1])
        if len(comps) != len(operands):
            raise BuilderError(f"Conditional: {len(comps)} branch computations but {len(operands)} "
                               "branch operands")
        branches = [_branch(c, o, "Conditional") for c, o in zip(comps, operands, strict=True)]
        name = "stablehlo.case"
    else:
        raise BuilderError("Conditional: takes (pred, true_operand, true_computation, false_operand, "
                           "false_computation) or (branch_index, branch_computations, branch_operands)")
    if not branches:
        raise BuilderError("Conditional: needs at least one branch")
    results = branches[0][0].result_types
    out = emit(name, [predicate], computations=branches, results=results, what="Conditional")
    return out[0] if len(out) == 1 else tuple(out)


@builder_function
def Call(builder: XlaBuilder, computation: XlaComputation, operands: Sequence[XlaOp] = ()) -> Any:
    """``computation`` called on ``operands``: ``func.call`` of a private function of the module
    (named after the computation). Several results give a tuple."""
    if not isinstance(computation, XlaComputation):
        raise BuilderError(f"Call: expected an XlaComputation, got {type(computation).__name__}")
    funcs: list[Func] = []
    for f in computation.module.funcs:
        g = clone_func(f)
        if f is computation.func:
            g.visibility = "private"
        funcs.append(g)
    out = emit("func.call", list(operands), {"callee": computation.name}, builder=builder,
               results=computation.result_types, funcs=funcs, what="Call")
    return out[0] if len(out) == 1 else tuple(out)


@builder_function
def Sort(operands: XlaOp | Sequence[XlaOp], comparator: XlaComputation | None = None,
         dimension: int = -1, is_stable: bool = False) -> Any:
    """``operands`` sorted together along ``dimension`` by ``comparator`` (default: ascending by
    the first operand): ``stablehlo.sort``. A list of operands gives a tuple of results."""
    ops, single = _many(operands)
    if comparator is None:
        from hlolab.xla.computations import CreateScalarLtComputation

        comparator = CreateScalarLtComputation([o.type.element for o in ops])  # type: ignore[union-attr]
    fields = {"dimension": int(dimension), "is_stable": bool(is_stable)}
    return _one_or_tuple(emit("stablehlo.sort", ops, fields, computations=[comparator], what="Sort"), single)


@builder_function
def TopK(operand: XlaOp, k: int, largest: bool = True) -> tuple[XlaOp, XlaOp]:
    """The ``k`` largest elements of the last dim and their indices: ``chlo.top_k``."""
    if not largest:
        raise BuilderError("TopK: largest=False is not supported (chlo.top_k gives the largest)")
    return tuple(emit("chlo.top_k", [operand], {"k": int(k)}, what="TopK"))  # type: ignore[return-value]
