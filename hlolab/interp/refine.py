"""Type refinement: an op with ``?`` sizes runs on the shapes its values have.

The spec (Dynamism) lets operands and results use dynamic sizes and defers the
constraints on them to run time. Before such an op runs, ``refine`` gives it the
types its operand values have (``tensor<?x4xf32>`` bound to a 3x4 array is
``tensor<3x4xf32>``), fills the result's ``?`` sizes from the op's ``infer`` where
that fixes them, and verifies the op again with these types: every spec constraint
is then checked on the run-time sizes, and a static size that disagrees is an
error naming the op and the constraint. A result size only the op's values decide
(the dynamic_* ops) stays ``?`` until the op has run; ``settle`` then writes the
result's shape into the refined op, so provenance, explain and the front ends see
static types. The module itself is never changed: the refined op is a copy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hlolab.errors import ExecutionError, HloLabError
from hlolab.ir.module import Op, Value
from hlolab.ir.refined import VALUE_SHAPES, retyped, runtime_type
from hlolab.ops.record import Partial, infer_with, inferred_for
from hlolab.ops.registry import OpCall, lookup
from hlolab.ops.verify import verify_op
from hlolab.types import TensorType, Type


def _dynamic(t: Type) -> bool:
    return isinstance(t, TensorType) and not t.is_static


def _filled(declared: Type, inferred: Any) -> Type:
    """``declared`` with its ``?`` sizes taken from what ``infer`` fixes."""
    if not _dynamic(declared):
        return declared
    assert isinstance(declared, TensorType)
    shape = inferred.shape if isinstance(inferred, (TensorType, Partial)) else None
    if shape is None or len(shape) != declared.rank:
        return declared
    return TensorType(tuple(w if d is None else d for d, w in zip(declared.shape, shape, strict=True)),
                      declared.element, declared.encoding)


def refine(op: Op, inputs: Sequence[Any]) -> Op:
    """``op`` itself when no operand or result type has a ``?``; else a verified copy
    typed by the run-time shapes of ``inputs`` (raises the op's own constraint errors)."""
    if not any(_dynamic(t) for t in (*op.operand_types, *op.result_types)):
        return op
    for v, x in zip(op.operands, inputs, strict=False):
        check_bounds(op, v, x)
    operand_types = [runtime_type(t, x) for t, x in zip(op.operand_types, inputs, strict=False)]
    operand_types += op.operand_types[len(operand_types):]
    results = list(op.result_types)
    opdef = lookup(op.name)
    if opdef is not None and opdef.infer is not None and any(_dynamic(t) for t in results):
        call = OpCall(retyped(op, operand_types, results))
        try:
            inferred = inferred_for(infer_with(opdef.infer, call.attrs, operand_types, call.error), results)
        except HloLabError as e:
            raise e.with_loc(op.loc) from None
        if len(inferred) == len(results):
            results = [_filled(t, w) for t, w in zip(results, inferred, strict=True)]
    if op.name in VALUE_SHAPES and any(_dynamic(t) for t in results):
        call = OpCall(retyped(op, operand_types, results))
        try:
            shapes = VALUE_SHAPES[op.name](call, inputs)
        except HloLabError as e:
            raise e.with_loc(op.loc) from None
        results = [t if s is None else _filled(t, Partial(s)) for t, s in zip(results, shapes, strict=True)]
    new = retyped(op, operand_types, results)
    verify_op(new)
    return new


def check_bounds(op: Op, v: Value, x: Any) -> None:
    """A value whose type has ``#stablehlo.bounds`` must have every bounded dim within its
    bound at run time: else an error naming the value, the dim, its size and the bound."""
    t = v.type
    if not (isinstance(t, TensorType) and t.bounds is not None and isinstance(x, np.ndarray)):
        return
    over = t.bounds.exceeded(x.shape)
    if over is not None:
        d, n, b = over
        raise ExecutionError(f"{op.name}: {v.name} has size {n} in dimension {d} at run time, over its "
                             f"bound {b} ({t})", op.loc)


def settle(op: Op, outputs: Sequence[Any]) -> None:
    """Write the shapes of the results a refined op produced into its ``?`` result types
    (each first checked against its declared bounds)."""
    for v, out in zip(op.results, outputs, strict=True):
        check_bounds(op, v, out)
    op.results = [Value(v.name, runtime_type(v.type, out) if isinstance(out, np.ndarray) else v.type,
                        op, v.index) for v, out in zip(op.results, outputs, strict=True)]


def value_types(types: Sequence[Type], values: Sequence[Any]) -> list[Type]:
    """Declared types with the ``?`` sizes the values bind (what a run's results print as)."""
    return [runtime_type(t, v) for t, v in zip(types, values, strict=False)] + list(types[len(values):])
