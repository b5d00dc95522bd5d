"""Run one op on numpy inputs without a program: for tests and the op explorer."""

from __future__ import annotations

from typing import Any

import numpy as np

from hlolab.errors import ExecutionError, NotImplementedOpError
from hlolab.ir.attrs import Attr
from hlolab.ir.module import Op, Value
from hlolab.ops.registry import OpCall, lookup
from hlolab.types import TensorType, Type, element_type_of_dtype


def value_type(v: Any) -> Type:
    """The tensor type of a numpy value (tuples and tokens need explicit types)."""
    a = np.asarray(v)
    return TensorType(tuple(a.shape), element_type_of_dtype(a.dtype))


def build_op(name: str, inputs: list[Any], attributes: dict[str, Attr] | None = None,
             result_types: list[Type] | None = None,
             operand_types: list[Type] | None = None) -> Op:
    """An IR op with fresh operand/result values, as if parsed from text."""
    operand_types = operand_types or [value_type(v) for v in inputs]
    operands = [Value(f"%arg{i}", t) for i, t in enumerate(operand_types)]
    op = Op(name, operands=operands, attributes=dict(attributes or {}))
    op.results = [Value(f"%{i}", t, op, i) for i, t in enumerate(result_types or [])]
    return op


def apply_op(name: str, inputs: list[Any], attributes: dict[str, Attr] | None = None,
             result_types: list[Type] | None = None,
             operand_types: list[Type] | None = None) -> list[Any]:
    """Verify and evaluate op ``name`` on ``inputs``; returns the list of results.

    ``result_types`` must be given (as in MLIR text, results are typed).
    Region-carrying ops need the interpreter and are not supported here.
    """
    op = build_op(name, inputs, attributes, result_types, operand_types)
    return evaluate_op(op, inputs)


def evaluate_op(op: Op, inputs: list[Any], call: OpCall | None = None) -> list[Any]:
    opdef = lookup(op.name)
    if opdef is None:
        raise NotImplementedOpError(op.name, op.loc)
    call = call or OpCall(op)
    if opdef.verify is not None:
        opdef.verify(call)
    out = opdef.evaluate(call, *inputs)
    if opdef.steps:  # a generator (custom_call): run alone, its collectives within one process
        from hlolab.interp.engine import drain

        out = drain(out)
    return normalize_outputs(out, len(op.results))


def normalize_outputs(out: Any, n_results: int) -> list[Any]:
    """An evaluator's return value as one value per result of the op."""
    if n_results == 1 and not isinstance(out, list):
        return [out]
    try:
        values = [] if out is None else list(out)
    except TypeError:  # one value (a token) where the op declares several results
        values = [out]
    if len(values) != n_results:
        raise ExecutionError(f"the op produced {len(values)} values for its {n_results} results")
    return values
