"""Ops retyped by their run-time shapes: the IR helpers the interpreter's type refinement
(``hlolab.interp.refine``) and the dynamic-shape ops (``hlolab.ops.dynamic``) share.

``VALUE_SHAPES`` is filled by op modules: for an op whose result sizes only its operand
*values* decide (dynamic_gather's slice_sizes, dynamic_conv's padding), a function giving
the result shapes before the op runs. It lives here so the interpreter does not import an
op module to read it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from hlolab.ir.module import Op, Value
from hlolab.types import TensorType, Type

# op name -> (call, operand values) -> per result its shape (None: not known before it runs)
VALUE_SHAPES: dict[str, Callable[[Any, Sequence[Any]], list[tuple[int | None, ...] | None]]] = {}


def retyped(o: Op, operand_types: Sequence[Type], result_types: Sequence[Type],
            rec: Any = None) -> Op:
    """A copy of ``o`` whose operands and results have the given types (same names, same
    regions), with attribute record ``rec`` when given: how an op runs on the shapes its
    values have at run time."""
    new = copy.copy(o)
    new.operands = [Value(v.name, t, v.owner, v.index)
                    for v, t in zip(o.operands, operand_types, strict=True)]
    new.results = [Value(v.name, t, new, v.index) for v, t in zip(o.results, result_types, strict=True)]
    if rec is not None:
        new.record = rec
    return new


def runtime_type(t: Type, value: Any) -> Type:
    """``t`` with the shape ``value`` has (``?`` sizes filled, a bounds encoding dropped);
    other types unchanged."""
    if isinstance(t, TensorType) and isinstance(value, np.ndarray) and value.ndim == t.rank:
        return t.refined(value.shape)
    return t
