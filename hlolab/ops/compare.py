"""Comparison and selection: compare, select, clamp.

* compare, FLOAT: the IEEE quiet predicates (a NaN is unordered: only NE is
  true). TOTALORDER: IEEE totalOrder on the bit patterns, -NaN < -inf < ... <
  -0.0 < +0.0 < ... < +inf < +NaN, and EQ/NE compare the patterns (+0.0 != -0.0,
  a NaN equals a NaN with the same bits), as XLA does. FNUZ types have one
  NaN, encoded with the sign bit (as -0.0 would be): it sorts first, like a
  -NaN (XLA); f8E8M0FNU has no sign and its NaN sorts last.
* compare on complex numbers: EQ/NE compare both parts; the orderings are
  lexicographic on (real, imag) as the spec says (XLA:CPU differs: its GE/LE
  look at the real parts only).
* clamp = minimum(maximum(operand, min), max) with the spec's maximum and
  minimum: NaN propagates and -0.0 < +0.0 for floats; OR / AND for booleans;
  lexicographic on (real, imag) for complex numbers, taking the second
  argument when the comparison is unordered (the reference interpreter).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from hlolab.errors import ExecutionError
from hlolab.numerics import float_format, takes_first, to_bits
from hlolab.ops.common import check_value, shapes_compatible
from hlolab.ops.conversion import baseline_key, count_check, plain_element, tensor_operand
from hlolab.ops.elementwise import infer_tensors, like, same_shape
from hlolab.ops.record import Attrs, InferError, Inferred, attr, enum, record
from hlolab.ops.registry import OpCall, op
from hlolab.trace.explain import elementwise_explain
from hlolab.trace.provenance import (
    IndexMapProvenance,
    Link,
    Provenance,
    elementwise_provenance,
    value_shape,
)
from hlolab.types import ElementType, QuantizedElementType, TensorType, Type, element_type

DIRECTIONS = ("EQ", "NE", "GE", "GT", "LE", "LT")
COMPARE_TYPES = ("FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED")

_PREDICATES: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "EQ": np.equal, "NE": np.not_equal, "GE": np.greater_equal,
    "GT": np.greater, "LE": np.less_equal, "LT": np.less,
}


def default_compare_type(e: Any) -> str:
    """The compare_type (C3) allows for an element type; floats also allow TOTALORDER."""
    e = e.storage if isinstance(e, QuantizedElementType) else e
    if e.kind == "sint":
        return "SIGNED"
    if e.kind in ("uint", "bool"):
        return "UNSIGNED"
    return "FLOAT"


# --- compare ---------------------------------------------------------------------------

@record
class CompareAttrs(Attrs):
    """compare's attributes; ``compare_type`` None: the default of lhs's element type (C3).
    The codecs take any case: verify names a wrong one with its own message."""

    comparison_direction: str = attr(enum("comparison_direction", "comparison_direction"))
    compare_type: str | None = attr(enum("compare_type", "comparison_type"), default=None)


def _verify_compare(ctx: OpCall) -> None:
    count_check(ctx, 2)
    lhs = tensor_operand(ctx, ctx.operand_types[0], "lhs", "I1")
    rhs = tensor_operand(ctx, ctx.operand_types[1], "rhs", "I2")
    result = tensor_operand(ctx, ctx.result_types[0], "result")
    for t, name in ((lhs, "lhs"), (rhs, "rhs")):
        if isinstance(t.element, QuantizedElementType) and t.element.is_per_axis:
            raise ctx.error("I1" if name == "lhs" else "I2",
                            f"{name} must be a tensor or per-tensor quantized tensor, got {t}")
    direction = ctx.attrs.comparison_direction
    if direction not in DIRECTIONS:
        raise ctx.error(None, f"comparison_direction must be one of {', '.join(DIRECTIONS)}, "
                              f"got {direction}")
    if baseline_key(lhs.element) != baseline_key(rhs.element):
        raise ctx.error("C1", f"baseline_element_type(lhs) = {lhs.element} must equal "
                              f"baseline_element_type(rhs) = {rhs.element}")
    if not (shapes_compatible(lhs.shape, rhs.shape) and shapes_compatible(lhs.shape, result.shape)):
        raise ctx.error("C2", f"shape(lhs) = {list(lhs.shape)}, shape(rhs) = {list(rhs.shape)} and "
                              f"shape(result) = {list(result.shape)} must be equal")
    if result.is_quantized or result.element.kind != "bool":
        raise ctx.error(None, f"result must be a tensor of boolean type (i1), got {result}")
    ctype = ctx.attrs.compare_type
    if ctype is None:
        return
    if ctype not in COMPARE_TYPES:
        raise ctx.error("C3", f"compare_type must be one of {', '.join(COMPARE_TYPES)}, got {ctype}")
    e = lhs.element.storage if isinstance(lhs.element, QuantizedElementType) else lhs.element
    allowed = ("FLOAT", "TOTALORDER") if e.kind == "float" else (default_compare_type(e),)
    if isinstance(lhs.element, QuantizedElementType):
        allowed = (*allowed, "FLOAT", "TOTALORDER")  # compared after dequantization
    if ctype not in allowed:
        raise ctx.error("C3", f"compare_type {ctype} is not allowed for element type {lhs.element}; "
                              f"it must be {' or '.join(allowed)}")


def total_order_key(x: np.ndarray) -> np.ndarray:
    """uint64 keys whose unsigned order is IEEE totalOrder of the float values ``x``."""
    fmt = float_format(x.dtype)
    bits = to_bits(x).astype(np.uint64).reshape(x.shape)  # to_bits makes rank 0 rank 1
    if not fmt.signed:
        return bits
    sign = np.uint64(fmt.sign_mask)
    # negative: flip every bit (larger magnitude sorts lower); positive: lift above all negatives
    key = np.where((bits & sign) != 0, ~bits & np.uint64(fmt.bits_mask), bits | sign)
    if fmt.has_nan and not fmt.has_neg_zero:
        # FNUZ: the one NaN has the sign bit (the -0.0 encoding); it sorts first, as a -NaN (XLA)
        key = np.where(bits == sign, np.uint64(0), key + np.uint64(1))
    return key


def _complex_compare(direction: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Lexicographic comparison of (real, imag) pairs with IEEE predicates on each part."""
    ar, ai, br, bi = a.real, a.imag, b.real, b.imag
    equal = (ar == br) & (ai == bi)
    if direction == "EQ":
        return equal
    if direction == "NE":
        return ~equal
    part = _PREDICATES[direction]  # the strict or non-strict predicate decides on equal reals
    strict = np.greater if direction in ("GE", "GT") else np.less
    return strict(ar, br) | ((ar == br) & part(ai, bi))


def compare_arrays(lhs: np.ndarray, rhs: np.ndarray, et: ElementType, direction: str,
                   compare_type: str) -> np.ndarray:
    """Element-wise ``lhs <direction> rhs`` for element type ``et`` (not quantized)."""
    if et.is_complex:
        return _complex_compare(direction, lhs, rhs)
    if et.is_bool:
        a, b = lhs.astype(np.uint8), rhs.astype(np.uint8)
    elif et.is_int:
        wide = np.int64 if et.is_signed else np.uint64
        a, b = lhs.astype(wide), rhs.astype(wide)
    elif compare_type == "TOTALORDER":
        a, b = total_order_key(lhs), total_order_key(rhs)
    else:
        a, b = lhs.astype(np.float64), rhs.astype(np.float64)  # exact; IEEE quiet predicates
    return _PREDICATES[direction](a, b)


def infer_compare(attrs: CompareAttrs, types: list[Type]) -> list[Inferred]:
    """Booleans of lhs's shape (C2)."""
    lhs, rhs = infer_tensors(types, ("lhs", "rhs"))
    if baseline_key(lhs.element) != baseline_key(rhs.element):
        raise InferError("C1", f"baseline_element_type(lhs) = {lhs.element} must equal "
                               f"baseline_element_type(rhs) = {rhs.element}")
    return [TensorType(same_shape([lhs, rhs], ("lhs", "rhs"), "C2"), element_type("i1"))]


@op("stablehlo.compare", aliases=("Compare", "Eq", "Ne", "Ge", "Gt", "Le", "Lt"),
    verify=_verify_compare, attrs=CompareAttrs, infer=infer_compare, family="compare",
    provenance=elementwise_provenance, explain=elementwise_explain, elementwise=True)
def compare(ctx: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """``lhs <comparison_direction> rhs`` per element, under ``compare_type``."""
    check_value(ctx, lhs, ctx.operand_types[0], "lhs")
    check_value(ctx, rhs, ctx.operand_types[1], "rhs")
    if lhs.shape != rhs.shape:
        raise ExecutionError(f"{ctx.name}: lhs and rhs have different shapes at run time: "
                             f"{lhs.shape} and {rhs.shape}", ctx.loc)
    et = plain_element(ctx.operand_types[0])
    direction = ctx.attrs.comparison_direction
    ctype = ctx.attrs.compare_type or default_compare_type(et)
    with np.errstate(all="ignore"):
        return np.asarray(compare_arrays(lhs, rhs, et, direction, ctype), dtype=np.bool_)


# --- select ---------------------------------------------------------------------------

def _verify_select(ctx: OpCall) -> None:
    count_check(ctx, 3)
    pred = tensor_operand(ctx, ctx.operand_types[0], "pred", "I1")
    on_true = tensor_operand(ctx, ctx.operand_types[1], "on_true", "I2")
    on_false = tensor_operand(ctx, ctx.operand_types[2], "on_false", "I3")
    result = tensor_operand(ctx, ctx.result_types[0], "result")
    if pred.is_quantized or pred.element.kind != "bool":
        raise ctx.error("I1", f"pred must be a tensor of type i1, got {pred}")
    if pred.rank != 0 and not shapes_compatible(pred.shape, on_true.shape):
        raise ctx.error("C1", f"pred must have rank 0 or shape(on_true) = {list(on_true.shape)}, "
                              f"got shape {list(pred.shape)}")
    types = (on_true, on_false, result)
    same = all(shapes_compatible(on_true.shape, t.shape) and
               baseline_key(on_true.element) == baseline_key(t.element) for t in types)
    if not same:
        raise ctx.error("C2", f"baseline_type(on_true) = {on_true}, baseline_type(on_false) = "
                              f"{on_false} and baseline_type(result) = {result} must be equal")


def select_provenance(ctx: Any, inputs: list[Any], outputs: list[Any]) -> Provenance:
    """The predicate element (role ``control``; rank-0 pred: index ()) and the chosen
    ``on_true`` / ``on_false`` element (role ``copy``, -1 where that branch was not chosen)."""
    pred, on_true, on_false = inputs
    rshape = value_shape(outputs[0])
    oshapes = [value_shape(v) for v in inputs]
    assert rshape is not None
    p = np.broadcast_to(np.asarray(pred, dtype=bool), rshape)
    size = int(np.prod(rshape, dtype=np.int64))
    same = np.arange(size, dtype=np.int64).reshape(rshape)
    pred_flat = np.zeros(rshape, np.int64) if np.ndim(pred) == 0 else same
    links = [
        Link(0, "control", np.array(pred_flat, dtype=np.int64)),
        Link(1, "copy", np.where(p, same, -1).astype(np.int64)),
        Link(2, "copy", np.where(p, -1, same).astype(np.int64)),
    ]
    return IndexMapProvenance([rshape], oshapes, [links])


def infer_select(attrs: Attrs, types: list[Type]) -> list[Inferred]:
    """on_true's type (C2), its shape refined by on_false's and a pred of rank > 0 (C1)."""
    pred, on_true, on_false = infer_tensors(types, ("pred", "on_true", "on_false"))
    if pred.is_quantized or pred.element.kind != "bool":
        raise InferError("I1", f"pred must be a tensor of type i1, got {pred}")
    if pred.rank != 0:
        same_shape([pred, on_true], ("pred", "on_true"), "C1")
    if baseline_key(on_true.element) != baseline_key(on_false.element):
        raise InferError("C2", f"baseline_type(on_true) = {on_true} must equal "
                               f"baseline_type(on_false) = {on_false}")
    # a rank-0 pred picks whole tensors: it does not take part in the shape
    shaped = {"on_true": on_true, "on_false": on_false, **({"pred": pred} if pred.rank else {})}
    shape = same_shape(list(shaped.values()), list(shaped), "C2")
    return [like(on_true, shape, on_true.element, baseline_key)]


@op("stablehlo.select", aliases=("Select",), verify=_verify_select, infer=infer_select,
    family="compare", provenance=select_provenance, explain=elementwise_explain, elementwise=True)
def select(ctx: OpCall, pred: np.ndarray, on_true: np.ndarray, on_false: np.ndarray) -> np.ndarray:
    """``on_true`` where ``pred`` is true, else ``on_false`` (a rank-0 pred picks a whole tensor)."""
    check_value(ctx, pred, ctx.operand_types[0], "pred")
    check_value(ctx, on_true, ctx.operand_types[1], "on_true")
    check_value(ctx, on_false, ctx.operand_types[2], "on_false")
    if on_true.shape != on_false.shape or (pred.ndim and pred.shape != on_true.shape):
        raise ExecutionError(f"{ctx.name}: operand shapes differ at run time: pred {pred.shape}, "
                             f"on_true {on_true.shape}, on_false {on_false.shape}", ctx.loc)
    return np.where(pred, on_true, on_false).astype(on_true.dtype, copy=False)


# --- clamp ------------------------------------------------------------------------------

def _verify_clamp(ctx: OpCall) -> None:
    count_check(ctx, 3)
    names = ("min", "operand", "max")
    mn, operand, mx = (tensor_operand(ctx, t, n, f"I{i + 1}")
                       for i, (t, n) in enumerate(zip(ctx.operand_types, names, strict=True)))
    result = tensor_operand(ctx, ctx.result_types[0], "result")
    for i, t in enumerate((mn, operand, mx)):
        if isinstance(t.element, QuantizedElementType) and t.element.is_per_axis:
            raise ctx.error(f"I{i + 1}", f"{names[i]} must be a tensor or per-tensor quantized "
                                         f"tensor, got {t}")
    for label, t, name in (("C1", mn, "min"), ("C2", mx, "max")):
        if t.rank != 0 and not shapes_compatible(t.shape, operand.shape):
            raise ctx.error(label, f"{name} must have rank 0 or shape(operand) = "
                                   f"{list(operand.shape)}, got shape {list(t.shape)}")
    keys = {baseline_key(t.element) for t in (mn, operand, mx)}
    if len(keys) != 1:
        raise ctx.error("C3", f"baseline element types of min ({mn.element}), operand "
                              f"({operand.element}) and max ({mx.element}) must be equal")
    if not (shapes_compatible(operand.shape, result.shape)
            and baseline_key(operand.element) == baseline_key(result.element)):
        raise ctx.error("C4", f"baseline_type(operand) = {operand} must equal "
                              f"baseline_type(result) = {result}")


def _maximum(a: np.ndarray, b: np.ndarray, et: ElementType) -> np.ndarray:
    """The spec's maximum (see the module notes); ``b`` broadcasts to ``a``."""
    return _extremum(a, b, et, larger=True)


def _minimum(a: np.ndarray, b: np.ndarray, et: ElementType) -> np.ndarray:
    return _extremum(a, b, et, larger=False)


def _extremum(a: np.ndarray, b: np.ndarray, et: ElementType, larger: bool) -> np.ndarray:
    b = np.broadcast_to(b, a.shape)
    if et.is_bool:
        return np.logical_or(a, b) if larger else np.logical_and(a, b)
    if et.is_int:
        wide = np.int64 if et.is_signed else np.uint64
        take_a = a.astype(wide) > b.astype(wide) if larger else a.astype(wide) < b.astype(wide)
    elif et.is_complex:
        beats = np.greater if larger else np.less
        take_a = np.where(a.real == b.real, beats(a.imag, b.imag), beats(a.real, b.real))
    else:
        take_a = takes_first(a, b, larger)
    return np.where(take_a, a, b)  # select, so the result is bit-identical to an input


def infer_clamp(attrs: Attrs, types: list[Type]) -> list[Inferred]:
    """operand's type (C4), its shape refined by a min or max of rank > 0 (C1, C2)."""
    mn, operand, mx = infer_tensors(types, ("min", "operand", "max"))
    for label, t, name in (("C1", mn, "min"), ("C2", mx, "max")):
        if t.rank != 0:
            same_shape([t, operand], (name, "operand"), label)
    if len({baseline_key(t.element) for t in (mn, operand, mx)}) != 1:
        raise InferError("C3", f"baseline element types of min ({mn.element}), operand "
                               f"({operand.element}) and max ({mx.element}) must be equal")
    # a rank-0 min or max applies to every element: it does not take part in the shape
    shaped = {"operand": operand, **{n: t for n, t in (("min", mn), ("max", mx)) if t.rank != 0}}
    shape = same_shape(list(shaped.values()), list(shaped), None)
    return [like(operand, shape, operand.element, baseline_key)]


@op("stablehlo.clamp", aliases=("Clamp",), verify=_verify_clamp, infer=infer_clamp, family="compare",
    provenance=elementwise_provenance, explain=elementwise_explain, elementwise=True)
def clamp(ctx: OpCall, min: np.ndarray, operand: np.ndarray, max: np.ndarray) -> np.ndarray:
    """``minimum(maximum(operand, min_element), max_element)``; rank-0 min/max apply everywhere."""
    for value, t, name in zip((min, operand, max), ctx.operand_types, ("min", "operand", "max"),
                              strict=True):
        check_value(ctx, value, t, name)
        if value.ndim and value.shape != operand.shape:
            raise ExecutionError(f"{ctx.name}: {name} has shape {value.shape} at run time, operand "
                                 f"{operand.shape}", ctx.loc)
    et = plain_element(ctx.operand_types[1])
    with np.errstate(all="ignore"):
        return np.asarray(_minimum(_maximum(operand, min, et), max, et), dtype=operand.dtype)
