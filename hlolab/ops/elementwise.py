"""Element-wise math, logic and bit ops: abs, add, and, atan2, ... xor.

Every op is one function following its spec section, vectorized over the
whole tensor. Numerical choices (the spec leaves them to the implementation;
we match XLA:CPU):

* Floats narrower than f32 (bf16, f16, f8*, f6*, f4) are computed in f32 and
  rounded once to the element type, as XLA:CPU does. For + - * / sqrt fmod
  and the rounding ops this gives the correctly rounded result (f32 holds more
  than 2p+2 bits of every narrower format). f32 stays f32 and f64 stays f64.
* Integers wrap (two's complement) at their bit width, 2- and 4-bit included:
  values are computed in int64/uint64 (mod 2^64) and wrapped to the width.
* divide/remainder on integers truncate toward zero; x / 0 = -1 (all ones for
  unsigned), x % 0 = x, INT_MIN / -1 = INT_MIN, INT_MIN % -1 = 0 (XLA).
* power on integers is exact while it does not overflow; on overflow (which the
  spec leaves implementation-defined) it gives XLA's value: only the exponent's
  low 6 bits count. A negative exponent gives 1 for base 1, +-1 for base -1,
  0 otherwise (XLA).
* shift amounts are read as unsigned; amounts >= bit width give 0 for
  shift_left / shift_right_logical and sign fill for shift_right_arithmetic
  (XLA); shift_right_arithmetic fills with the top bit for unsigned types too.
* maximum/minimum on floats propagate NaN and order -0.0 < +0.0 (XLA). On
  complex numbers they compare (real, imag) lexicographically as the spec says
  and pick ``rhs`` on ties and unordered (NaN) comparisons, as the reference
  interpreter and jax.lax.max/min do (XLA:CPU's own complex maximum compares
  the real parts only).
* remainder on floats is fmod (sign of the dividend); on complex numbers the
  spec leaves it TBD, so it is an UnsupportedError.

Where hlolab follows the spec rather than XLA:CPU (the oracle tests say so too):
subnormals are kept (XLA:CPU flushes them to zero); f8 values are rounded once
from f32 (XLA rounds to f16 first, which can differ by 1 ulp, e.g. sqrt in
f8E3M4); abs(inf + nan i) is inf as C99 hypot says (XLA: NaN); sign(0 + 0i)
is (0.0, 0.0) as the spec writes (XLA keeps the signs of the zero parts);
0^64 = 0 (XLA: 1). f4E2M1FN and f6 types have no NaN: a NaN result (sqrt(-1))
becomes whatever ml_dtypes' conversion gives.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from hlolab.errors import ExecutionError, UnsupportedError
from hlolab.numerics import takes_first
from hlolab.ops.common import tensor_type, wrap_int
from hlolab.ops.record import Attrs, InferError, Inferred, Partial
from hlolab.ops.registry import OpCall, op
from hlolab.trace.bits import (
    BitPanel,
    clz_panel,
    narrow_float_panel,
    popcnt_panel,
    round_integral_panel,
    shift_panel,
)
from hlolab.trace.explain import Explanation, element_at, elementwise_explain
from hlolab.trace.provenance import elementwise_provenance
from hlolab.types import (
    ALL_ELEMENT_TYPE_NAMES,
    ElementType,
    QuantizedElementType,
    TensorType,
    Type,
    element_type,
)

# --- element kinds an op accepts --------------------------------------------

_Q = "quant"  # per-tensor quantized
_QA = "quant_axis"  # per-axis quantized


class Kinds:
    """The element kinds an operand may have, with the spec's wording of them."""

    def __init__(self, kinds: set[str], phrase: str):
        self.kinds = frozenset(kinds)
        self.phrase = phrase


BOOL_OR_INT = Kinds({"bool", "sint", "uint"}, "tensor of boolean or integer type")
INT = Kinds({"sint", "uint"}, "tensor of integer type")
FLOAT_Q = Kinds({"float", _Q}, "tensor of floating-point type or per-tensor quantized tensor")
FLOAT_COMPLEX_Q = Kinds({"float", "complex", _Q},
                        "tensor of floating-point or complex type or per-tensor quantized tensor")
NUMERIC_Q = Kinds({"sint", "uint", "float", "complex", _Q},
                  "tensor of integer, floating-point or complex type or per-tensor quantized tensor")
SIGNED_NUMERIC_Q = Kinds({"sint", "float", "complex", _Q},
                         "tensor of signed integer, floating-point, or complex type or per-tensor "
                         "quantized tensor")
ANY_Q = Kinds({"bool", "sint", "uint", "float", "complex", _Q}, "tensor or per-tensor quantized tensor")
ANY_QA = Kinds({"bool", "sint", "uint", "float", "complex", _Q, _QA}, "tensor or quantized tensor")


def _kind(t: TensorType) -> str:
    e = t.element
    if isinstance(e, QuantizedElementType):
        return _QA if e.is_per_axis else _Q
    return e.kind


# --- verification -------------------------------------------------------------


def _element_key(e: Any) -> tuple:
    """What makes two element types the same type (``i32`` and ``si32`` are)."""
    if isinstance(e, QuantizedElementType):
        lo = e.storage_min if e.storage_min is not None else e.storage.min_value()
        hi = e.storage_max if e.storage_max is not None else e.storage.max_value()
        # baseline_type: scales and zero points may differ, everything else must match
        return ("quant", _element_key(e.storage), _element_key(e.expressed), lo, hi, e.axis)
    if e.kind in ("sint", "uint", "bool"):
        return (e.kind, e.bits)
    return (e.kind, e.name)


def _shapes_compatible(a: Sequence[int | None], b: Sequence[int | None]) -> bool:
    return len(a) == len(b) and all(x is None or y is None or x == y for x, y in zip(a, b, strict=True))


def _same_baseline(a: TensorType, b: TensorType) -> bool:
    return _shapes_compatible(a.shape, b.shape) and _element_key(a.element) == _element_key(b.element)


def _operand_tensors(ctx: OpCall, names: Sequence[str], kinds: Kinds) -> list[TensorType]:
    """Check the operand count and each operand's element kind (the spec's (I1), (I2))."""
    types = ctx.operand_types
    if len(types) != len(names):
        raise ctx.error(None, f"expects {len(names)} operand(s) ({', '.join(names)}), got {len(types)}")
    if len(ctx.result_types) != 1:
        raise ctx.error(None, f"expects 1 result, got {len(ctx.result_types)}")
    out = []
    for i, (name, t) in enumerate(zip(names, types, strict=True)):
        label = f"I{i + 1}"
        tt = tensor_type(ctx, t, label, f"{name}")
        if _kind(tt) not in kinds.kinds:
            raise ctx.error(label, f"{name} must be a {kinds.phrase}, got {tt}")
        out.append(tt)
    return out


def _signature(types: Sequence[Type], result: Type) -> str:
    return f"({', '.join(str(t) for t in types)}) -> {result}"


def same_type_verifier(kinds: Kinds, names: Sequence[str] = ("lhs", "rhs"), *,
                       relation: str = "baseline_type") -> Callable[[OpCall], None]:
    """Verify an op whose operands and result share one (baseline) type: (I*) and (C1)."""
    names = tuple(names)
    equation = " = ".join(f"{relation}({n})" for n in (*names, "result"))

    def verify(ctx: OpCall) -> None:
        operands = _operand_tensors(ctx, names, kinds)
        result = tensor_type(ctx, ctx.result_types[0], "C1", "result")
        if not all(_same_baseline(t, result) for t in operands):
            raise ctx.error("C1", f"{equation} must hold, got {_signature(operands, result)}")

    return verify


def _verify_abs(ctx: OpCall) -> None:
    (operand,) = _operand_tensors(ctx, ("operand",), SIGNED_NUMERIC_Q)
    result = tensor_type(ctx, ctx.result_types[0], "C1", "result")
    if not _shapes_compatible(operand.shape, result.shape):
        raise ctx.error("C1", "shape(result) = shape(operand) must hold, got "
                        f"{_signature([operand], result)}")
    want = operand.element
    if not isinstance(want, QuantizedElementType) and want.is_complex:
        want = want.component
    if _element_key(result.element) != _element_key(want):
        raise ctx.error("C2", f"baseline_element_type(result) must be {want}, got "
                        f"{_signature([operand], result)}")


def _verify_is_finite(ctx: OpCall) -> None:
    (x,) = _operand_tensors(ctx, ("x",), FLOAT_Q)
    y = tensor_type(ctx, ctx.result_types[0], "C1", "y")
    if not _shapes_compatible(x.shape, y.shape):
        raise ctx.error("C1", f"shape(x) = shape(y) must hold, got {_signature([x], y)}")
    if isinstance(y.element, QuantizedElementType) or not y.element.is_bool:
        raise ctx.error(None, f"y must be a tensor of boolean type, got {y}")


def _verify_add(ctx: OpCall) -> None:
    lhs, rhs = _operand_tensors(ctx, ("lhs", "rhs"), ANY_QA)
    result = tensor_type(ctx, ctx.result_types[0], "C1", "result")
    types = (lhs, rhs, result)
    quantized = [t.is_quantized for t in types]
    if not any(quantized):
        if not (_same_baseline(lhs, result) and _same_baseline(rhs, result)):
            raise ctx.error("C1", f"type(lhs) = type(rhs) = type(result) must hold, got "
                            f"{_signature([lhs, rhs], result)}")
        return
    sig = _signature([lhs, rhs], result)
    if not all(quantized):
        raise ctx.error("C2", f"lhs, rhs and result must all be quantized, got {sig}")
    if not (_shapes_compatible(lhs.shape, result.shape) and _shapes_compatible(rhs.shape, result.shape)):
        raise ctx.error("C1", f"lhs, rhs and result must have the same shape, got {sig}")
    els: list[QuantizedElementType] = [t.element for t in types]  # type: ignore[misc]
    if len({_element_key(e.storage) for e in els}) != 1:
        raise ctx.error("C3", "storage_type(lhs) = storage_type(rhs) = storage_type(result) "
                        f"must hold, got {sig}")
    if len({_element_key(e.expressed) for e in els}) != 1:
        raise ctx.error("C4", "expressed_type(lhs) = expressed_type(rhs) = expressed_type(result) "
                        f"must hold, got {sig}")
    if (els[0].is_per_axis or els[1].is_per_axis) != els[2].is_per_axis:
        raise ctx.error("C5", "(is_per_axis_quantized(lhs) or is_per_axis_quantized(rhs)) = "
                        f"is_per_axis_quantized(result) must hold, got {sig}")
    for label, name, e in (("C6", "lhs", els[0]), ("C7", "rhs", els[1])):
        if e.is_per_axis and e.axis != els[2].axis:
            raise ctx.error(label, f"quantization_dimension({name}) = quantization_dimension(result) "
                            f"must hold, got {sig}")


# --- result type inference ------------------------------------------------------

InferFn = Callable[[Attrs, list[Type]], list[Inferred]]


def infer_tensors(types: Sequence[Type], names: Sequence[str]) -> list[TensorType]:
    """The operand types of an op with operands ``names``, each a tensor (the spec's (I*))."""
    if len(types) != len(names):
        raise InferError(None, f"expects {len(names)} operand(s) ({', '.join(names)}), got {len(types)}")
    out: list[TensorType] = []
    for i, (name, t) in enumerate(zip(names, types, strict=True)):
        if not isinstance(t, TensorType):
            raise InferError(f"I{i + 1}", f"{name} must be a tensor, got {t}")
        out.append(t)
    return out


def joined_shape(shapes: Sequence[Sequence[int | None]]) -> tuple[int | None, ...] | None:
    """The one shape equal shapes can have: each size where some shape has it static
    (``?`` where all are dynamic); None when ranks or static sizes differ."""
    if not shapes or any(len(s) != len(shapes[0]) for s in shapes):
        return None
    out: list[int | None] = []
    for dims in zip(*shapes, strict=True):
        static = {d for d in dims if d is not None}
        if len(static) > 1:
            return None
        out.append(static.pop() if static else None)
    return tuple(out)


def same_shape(operands: Sequence[TensorType], names: Sequence[str],
               label: str | None = "C1") -> tuple[int | None, ...]:
    """``joined_shape`` of the operands, or InferError(``label``) naming them."""
    shape = joined_shape([t.shape for t in operands])
    if shape is None:
        shown = ", ".join(f"shape({n}) = {list(t.shape)}" for n, t in zip(names, operands, strict=True))
        raise InferError(label, f"{shown} must be equal")
    return shape


def like(t: TensorType, shape: tuple[int | None, ...], element: Any,
         key: Callable[[Any], tuple]) -> Inferred:
    """A tensor of ``shape`` and ``element`` (``t``'s encoding kept). A quantized element is
    only fixed up to its scales and zero points (the spec relates baseline types): a
    Partial that admits any element with the same ``key``."""
    if isinstance(element, QuantizedElementType):
        want = key(element)
        return Partial(shape, None, what=f"{TensorType(shape, element)} up to scales and zero points",
                       check=lambda d: isinstance(d, TensorType) and key(d.element) == want)
    return replace(t, shape=shape, element=element)


def _names(n: int) -> tuple[str, ...]:
    return ("operand",) if n == 1 else ("lhs", "rhs")


def infer_same_type(n: int) -> InferFn:
    """infer of an op whose ``n`` operands and result share one (baseline) type: (C1)."""
    names = _names(n)

    def infer(attrs: Attrs, types: list[Type]) -> list[Inferred]:
        operands = infer_tensors(types, names)
        shape = same_shape(operands, names)
        first = operands[0]
        if any(_element_key(t.element) != _element_key(first.element) for t in operands):
            shown = ", ".join(f"{n} = {t.element}" for n, t in zip(names, operands, strict=True))
            raise InferError("C1", f"the element types must be equal, got {shown}")
        return [like(first, shape, first.element, _element_key)]

    return infer


_infer_binary = infer_same_type(2)


def _infer_abs(attrs: Attrs, types: list[Type]) -> list[Inferred]:
    (operand,) = infer_tensors(types, ("operand",))
    e = operand.element
    # (C2): the modulus of a complex number is its component type
    want = e.component if isinstance(e, ElementType) and e.is_complex else e
    return [like(operand, operand.shape, want, _element_key)]


def _infer_is_finite(attrs: Attrs, types: list[Type]) -> list[Inferred]:
    (x,) = infer_tensors(types, ("x",))
    return [TensorType(x.shape, element_type("i1"))]


def _infer_add(attrs: Attrs, types: list[Type]) -> list[Inferred]:
    """lhs's type; quantized: a quantized tensor with their storage and expressed types
    (C2-C4), its scales and quantization dimension left to the declared type."""
    lhs, rhs = infer_tensors(types, ("lhs", "rhs"))
    e, e2 = lhs.element, rhs.element
    if not (isinstance(e, QuantizedElementType) or isinstance(e2, QuantizedElementType)):
        return _infer_binary(attrs, types)
    shape = same_shape([lhs, rhs], ("lhs", "rhs"))
    if not (isinstance(e, QuantizedElementType) and isinstance(e2, QuantizedElementType)):
        raise InferError("C2", f"lhs, rhs and result must all be quantized, got {e} and {e2}")
    parts = (_element_key(e.storage), _element_key(e.expressed))
    if parts != (_element_key(e2.storage), _element_key(e2.expressed)):
        raise InferError("C3", f"lhs and rhs must have the same storage and expressed types, "
                         f"got {e} and {e2}")

    def admits(d: Any) -> bool:
        q = getattr(d, "element", None)
        return isinstance(q, QuantizedElementType) and (
            _element_key(q.storage), _element_key(q.expressed)) == parts

    return [Partial(shape, None, check=admits, what=f"a quantized tensor of shape "
                    f"{list(shape)} with storage type {e.storage} and expressed type {e.expressed}")]


# --- registration -------------------------------------------------------------


def _check_runtime_shapes(ctx: OpCall, args: Sequence[Any]) -> None:
    """Dynamic (``?``) types pass verification; the values must still agree (numpy would broadcast)."""
    shapes = {np.shape(a) for a in args}
    if len(shapes) > 1:
        raise ExecutionError(f"{ctx.name}: operands have different shapes at run time: "
                             f"{', '.join(str(np.shape(a)) for a in args)}", ctx.loc)


# the bit view of one element: (ctx, operand elements, result element, labels) -> panel
BitsFn = Callable[[OpCall, list[Any], Any, list[str]], BitPanel | None]


def _element_labels(ctx: OpCall, idx: tuple[int, ...], inputs: list[Any]) -> list[str]:
    """``%x[i, j]`` for each operand element and the result element (spec symbols)."""
    where = f"[{', '.join(map(str, idx))}]" if idx else ""
    names = [(v.name + (where if np.ndim(x) else "")) for v, x in zip(ctx.op.operands, inputs, strict=False)]
    return names + [(ctx.op.results[0].name if ctx.op.results else "result") + where]


def _narrow_float_bits(fn: Callable[..., Any]) -> BitsFn:
    """A result of a float type narrower than f32 that ``fn`` computes in f32: its rounding
    to the result type (None when no rounding happens: sign-bit ops, selections)."""

    def bits(ctx: OpCall, xs: list[Any], y: Any, labels: list[str]) -> BitPanel | None:
        t = ctx.result_types[0]
        if not (isinstance(t, TensorType) and isinstance(t.element, ElementType)
                and t.element.is_float and t.dtype in _NARROW_FLOATS):
            return None
        with np.errstate(all="ignore"):
            exact = np.asarray(fn(ctx, *[np.asarray(x).reshape(1) for x in xs]))
        if exact.dtype != np.float32:
            return None
        return narrow_float_panel(exact.reshape(-1)[0], y, t.element, labels[-1])

    return bits


def _bits_explainer(bits: BitsFn) -> Callable[..., Explanation]:
    """The generic element-wise explanation with the element's bit view attached."""

    def explain(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int, index: tuple) -> Explanation:
        e = elementwise_explain(ctx, inputs, outputs, result, index)
        xs = [element_at(v, e.index) for v in inputs if isinstance(v, np.ndarray)]
        panel = bits(ctx, xs, outputs[result][e.index], _element_labels(ctx, e.index, inputs))
        if panel is not None:
            e.bits.append(panel)
        return e

    return explain


def elementwise_op(name: str, alias: str, verify: Callable[[OpCall], None],
                   infer: InferFn | None = None,
                   bits: BitsFn | None = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register an element-wise op; ``fn(ctx, *operands)`` computes the values.

    ``fn`` may return values in a wider compute type (f32 for bf16 operands):
    they are rounded once, here, to the result element type. ``infer`` defaults
    to the operands' common type (``fn``'s operand count). ``bits`` gives the bit
    view explain() attaches (default: the rounding of an f32 result to a narrower
    float result type).
    """

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        def evaluate(ctx: OpCall, *args: Any) -> np.ndarray:
            _check_runtime_shapes(ctx, args)
            with np.errstate(all="ignore"):
                out = np.asarray(fn(ctx, *args))
                want = ctx.result_dtype()
                if out.dtype != want:
                    out = out.astype(want)
            return out

        evaluate.__doc__ = fn.__doc__
        evaluate.__name__ = fn.__name__
        arity = fn.__code__.co_argcount - 1  # the operands after ctx
        op(name, aliases=(alias,), verify=verify, provenance=elementwise_provenance, elementwise=True,
           explain=_bits_explainer(bits or _narrow_float_bits(fn)), infer=infer or infer_same_type(arity),
           family="elementwise")(evaluate)
        return evaluate

    return deco


# --- value helpers --------------------------------------------------------------


def _et(ctx: OpCall, i: int = 0) -> ElementType:
    """The element type of operand ``i`` (not quantized: those are rejected before)."""
    t = ctx.operand_types[i]
    assert isinstance(t, TensorType) and isinstance(t.element, ElementType)
    return t.element


# bf16, f16, f8*, f6*, f4 (ml_dtypes types have numpy kind "V", so list them by name)
_NARROW_FLOATS = frozenset(element_type(n).dtype for n in ALL_ELEMENT_TYPE_NAMES
                           if element_type(n).is_float and n not in ("f32", "f64"))


def _compute(x: np.ndarray) -> np.ndarray:
    """Floats narrower than f32 are computed in f32 (XLA:CPU); every other type stays."""
    return x.astype(np.float32) if x.dtype in _NARROW_FLOATS else x


def _mask(bits: int) -> np.uint64:
    return np.uint64((1 << bits) - 1)


def _wide(x: np.ndarray, et: ElementType) -> np.ndarray:
    """Integer values as int64 (signed types) or uint64 (unsigned types)."""
    return x.astype(np.int64 if et.is_signed else np.uint64)


def _bits(x: np.ndarray, et: ElementType) -> np.ndarray:
    """The two's complement bit pattern of each element, as uint64 (upper bits zero)."""
    w = np.asarray(_wide(x, et))
    p = w.view(np.uint64) if w.dtype == np.int64 else w
    return p & _mask(et.bits)




def _signed_bits(p: np.ndarray, bits: int) -> np.ndarray:
    """A bit pattern read as a signed ``bits``-wide integer, as int64."""
    if bits == 64:
        return p.view(np.int64)
    s = p.astype(np.int64)
    return np.where(s >= (1 << (bits - 1)), s - (1 << bits), s)


# Float formats with a sign bit and a negative zero: negate/abs are sign-bit
# operations there (IEEE negate/abs, NaN payloads kept). FNUZ formats and
# f8E8M0FNU have no negative zero, so they go through f32 arithmetic instead.
_NO_SIGNED_ZERO = {"f8E4M3FNUZ", "f8E5M2FNUZ", "f8E4M3B11FNUZ", "f8E8M0FNU"}


def _sign_bit_op(x: np.ndarray, et: ElementType, negate: bool) -> np.ndarray:
    uint = np.dtype(f"u{x.dtype.itemsize}")
    sign = np.array(1 << (et.bits - 1), dtype=uint)
    raw = x.view(uint)
    return (raw ^ sign if negate else raw & ~sign).view(x.dtype)


def as_complex(re: np.ndarray, im: np.ndarray, dtype: np.dtype) -> np.ndarray:
    out = np.empty(np.shape(re), dtype=dtype)
    out.real = re
    out.imag = im
    return out


def _times_i(z: np.ndarray) -> np.ndarray:
    """i * z, done on the parts so infinities do not turn into NaN (0 * inf)."""
    return as_complex(-z.imag, z.real, z.dtype)


def _times_minus_i(z: np.ndarray) -> np.ndarray:
    return as_complex(z.imag, -z.real, z.dtype)


def _per_kind(ctx: OpCall, x: np.ndarray, real: Callable[[np.ndarray], np.ndarray],
              cplx: Callable[[np.ndarray], np.ndarray] | None = None) -> np.ndarray:
    """A unary float/complex function: complex values use ``cplx`` (default ``real``)."""
    if _et(ctx).is_complex:
        return (cplx or real)(x)
    return real(_compute(x))


# --- arithmetic -------------------------------------------------------------------


@elementwise_op("stablehlo.add", "Add", _verify_add, infer=_infer_add)
def add(ctx: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """lhs + rhs: logical OR for booleans, wrapping for integers, IEEE addition for floats."""
    et = _et(ctx)
    if et.is_bool:
        return np.logical_or(lhs, rhs)
    if et.is_int:
        return wrap_int(_wide(lhs, et) + _wide(rhs, et), et)
    return _compute(lhs) + _compute(rhs)


@elementwise_op("stablehlo.subtract", "Sub", same_type_verifier(NUMERIC_Q))
def subtract(ctx: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """lhs - rhs: wrapping for integers, IEEE subtraction for floats."""
    et = _et(ctx)
    if et.is_int:
        return wrap_int(_wide(lhs, et) - _wide(rhs, et), et)
    return _compute(lhs) - _compute(rhs)


@elementwise_op("stablehlo.multiply", "Mul", same_type_verifier(ANY_Q))
def multiply(ctx: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """lhs * rhs: logical AND for booleans, wrapping for integers, IEEE multiplication for floats."""
    et = _et(ctx)
    if et.is_bool:
        return np.logical_and(lhs, rhs)
    if et.is_int:
        return wrap_int(_wide(lhs, et) * _wide(rhs, et), et)
    return _compute(lhs) * _compute(rhs)


def _int_divmod(lhs: np.ndarray, rhs: np.ndarray, et: ElementType) -> tuple[np.ndarray, np.ndarray]:
    """Quotient truncated toward zero and remainder with the dividend's sign (C semantics),
    with XLA's answers where C is undefined: x / 0 = -1 (all ones), x % 0 = x,
    INT_MIN / -1 = INT_MIN, INT_MIN % -1 = 0."""
    a, b = _wide(lhs, et), _wide(rhs, et)
    zero = b == 0
    overflow = (a == et.min_value()) & (b == -1) if et.is_signed else np.zeros(a.shape, bool)
    safe_b = np.where(zero | overflow, np.ones_like(b), b)
    q = a // safe_b  # floor division; turned into truncation below
    r = a - q * safe_b
    fix = (r != 0) & ((a < 0) != (safe_b < 0))  # floor and truncation differ here
    q = np.where(fix, q + 1, q)
    r = np.where(fix, r - safe_b, r)
    q = np.where(zero, np.full_like(q, -1) if et.is_signed else np.full_like(q, _mask(et.bits)), q)
    r = np.where(zero, a, r)
    return wrap_int(q, et), wrap_int(r, et)


@elementwise_op("stablehlo.divide", "Div", same_type_verifier(NUMERIC_Q))
def divide(ctx: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """lhs / rhs: integer quotient truncated toward zero; IEEE division for floats."""
    et = _et(ctx)
    if et.is_int:
        return _int_divmod(lhs, rhs, et)[0]
    return _compute(lhs) / _compute(rhs)


@elementwise_op("stablehlo.remainder", "Rem", same_type_verifier(NUMERIC_Q))
def remainder(ctx: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """lhs - d * rhs with d = lhs / rhs rounded toward zero: the result has the sign of lhs."""
    et = _et(ctx)
    if et.is_int:
        return _int_divmod(lhs, rhs, et)[1]
    if et.is_complex:
        raise UnsupportedError("remainder of complex numbers is not defined by the spec yet "
                               "(TBD, openxla/stablehlo#997)", ctx.loc)
    return np.fmod(_compute(lhs), _compute(rhs))  # exact: no rounding happens


def _int_power(base: np.ndarray, exponent: np.ndarray, et: ElementType) -> np.ndarray:
    """Exponentiation by squaring, wrapping; overflow (implementation-defined) as XLA:CPU.

    XLA squares six times, so only the exponent's low 6 bits count (any base
    with |base| >= 2 overflows every width at exponents >= 64), and an exponent
    whose top bit is set (negative; XLA reads unsigned ones of 8 bits and more
    the same way) gives 1 for base 1, +-1 for base -1 and 0 otherwise. Base 0
    gives 0 for every positive exponent (XLA: 0^64 = 1).
    """
    a = _wide(base, et)
    a_bits, e_bits = _bits(base, et), _bits(exponent, et)
    low = e_bits & np.uint64(63)
    result = np.ones_like(a)
    square = a.copy()
    for i in range(6):
        result = np.where((low >> np.uint64(i)) & np.uint64(1) == 1, result * square, result)
        square = square * square
    result = np.where(a == 0, (e_bits == 0).astype(a.dtype), result)
    # XLA tests the sign of the exponent's storage: i2/i4 live sign-extended in a byte,
    # ui2/ui4 zero-extended (never negative), wider unsigned types by their top bit
    negative = ((e_bits >> np.uint64(et.bits - 1)) == 1) & (et.is_signed or et.bits >= 8)
    odd = (e_bits & np.uint64(1)) == 1
    small = np.where(a_bits == 1, 1, np.where(a_bits == _mask(et.bits), np.where(odd, -1, 1), 0))
    return wrap_int(np.where(negative, small.astype(np.int64), result.astype(np.int64)), et)


@elementwise_op("stablehlo.power", "Pow", same_type_verifier(NUMERIC_Q))
def power(ctx: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """lhs ** rhs: integer exponentiation, IEEE pow for floats, complex exponentiation."""
    et = _et(ctx)
    if et.is_int:
        return _int_power(lhs, rhs, et)
    result = np.power(_compute(lhs), _compute(rhs))
    if et.is_complex:
        # 0^z: 1 for z = 0, 0 for real z > 0, NaN otherwise (XLA; the spec leaves
        # complex special cases to the implementation, numpy gives 0 for Re z > 0)
        nan = np.array(complex(np.nan, np.nan), dtype=result.dtype)
        result = np.where((lhs == 0) & (rhs.imag != 0), nan, result)
    return result


@elementwise_op("stablehlo.negate", "Neg", same_type_verifier(NUMERIC_Q, ("operand",)))
def negate(ctx: OpCall, operand: np.ndarray) -> np.ndarray:
    """-operand: wrapping for integers (unsigned: negate the bit pattern), IEEE negate for floats."""
    et = _et(ctx)
    if et.is_int:
        return wrap_int(np.zeros_like(_wide(operand, et)) - _wide(operand, et), et)
    if et.is_float and et.name not in _NO_SIGNED_ZERO:
        return _sign_bit_op(operand, et, negate=True)
    return np.negative(_compute(operand))


@elementwise_op("stablehlo.abs", "Abs", _verify_abs, infer=_infer_abs)
def abs_(ctx: OpCall, operand: np.ndarray) -> np.ndarray:
    """|operand|: abs(INT_MIN) = INT_MIN (wraps); the modulus (a real) for complex numbers."""
    et = _et(ctx)
    if et.is_int:
        return wrap_int(np.abs(_wide(operand, et)), et)
    if et.is_float and et.name not in _NO_SIGNED_ZERO:
        return _sign_bit_op(operand, et, negate=False)
    return np.abs(_compute(operand))


@elementwise_op("stablehlo.sign", "Sign", same_type_verifier(SIGNED_NUMERIC_Q, ("operand",)))
def sign(ctx: OpCall, operand: np.ndarray) -> np.ndarray:
    """-1, 0 or 1; floats keep NaN and signed zeros as they are; complex x gives x / |x|."""
    et = _et(ctx)
    if et.is_int:
        return wrap_int(np.sign(_wide(operand, et)), et)
    if et.is_complex:
        re, im = operand.real, operand.imag
        modulus = np.abs(operand)
        part_nan = np.isnan(re) | np.isnan(im)
        zero = (re == 0) & (im == 0)
        nan = np.full_like(re, np.nan)
        out_re = np.where(part_nan, nan, np.where(zero, 0, re / modulus))
        out_im = np.where(part_nan, nan, np.where(zero, 0, im / modulus))
        return as_complex(out_re, out_im, operand.dtype)
    x = _compute(operand)
    keep = np.isnan(x) | (x == 0)  # NaN and +-0 are their own sign
    one, minus_one = np.array(1, operand.dtype), np.array(-1, operand.dtype)
    return np.where(keep, operand, np.where(x > 0, one, minus_one))


def _float_select(lhs: np.ndarray, rhs: np.ndarray, take_lhs: np.ndarray) -> np.ndarray:
    # select from the operands themselves: the result is bit-identical to one of them
    return np.where(take_lhs, lhs, rhs)


def _extremum(ctx: OpCall, lhs: np.ndarray, rhs: np.ndarray, is_max: bool) -> np.ndarray:
    """The spec's maximum / minimum: OR / AND on booleans; the float policy of
    ``numerics.takes_first`` (NaN propagates, -0.0 < +0.0); lexicographic on (real, imag)
    for complex, lhs unless rhs is greater (ties and NaN comparisons too), as the reference
    interpreter and jax.lax.max/min do (XLA's own complex max ignores the imaginary parts)."""
    et = _et(ctx)
    if et.is_bool:
        return np.logical_or(lhs, rhs) if is_max else np.logical_and(lhs, rhs)
    if et.is_int:
        f = np.maximum if is_max else np.minimum
        return f(lhs, rhs) if et.bits >= 8 else wrap_int(f(_wide(lhs, et), _wide(rhs, et)), et)
    if et.is_complex:
        beats = np.greater if is_max else np.less
        take = np.where(lhs.real == rhs.real, beats(lhs.imag, rhs.imag), beats(lhs.real, rhs.real))
        return _float_select(lhs, rhs, take)
    return _float_select(lhs, rhs, takes_first(lhs, rhs, is_max))


@elementwise_op("stablehlo.maximum", "Max", same_type_verifier(ANY_Q))
def maximum(ctx: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """IEEE maximum (NaN propagates, -0.0 < +0.0); lexicographic on (real, imag) for complex."""
    return _extremum(ctx, lhs, rhs, True)


@elementwise_op("stablehlo.minimum", "Min", same_type_verifier(ANY_Q))
def minimum(ctx: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """IEEE minimum (NaN propagates, -0.0 < +0.0); lexicographic on (real, imag) for complex."""
    return _extremum(ctx, lhs, rhs, False)


# --- rounding -----------------------------------------------------------------------


@elementwise_op("stablehlo.floor", "Floor", same_type_verifier(FLOAT_Q, ("operand",)))
def floor(ctx: OpCall, operand: np.ndarray) -> np.ndarray:
    """roundToIntegralTowardNegative."""
    return np.floor(_compute(operand))


@elementwise_op("stablehlo.ceil", "Ceil", same_type_verifier(FLOAT_Q, ("operand",)))
def ceil(ctx: OpCall, operand: np.ndarray) -> np.ndarray:
    """roundToIntegralTowardPositive."""
    return np.ceil(_compute(operand))


@elementwise_op("stablehlo.round_nearest_even", "RoundNearestEven",
                same_type_verifier(FLOAT_Q, ("operand",)),
                bits=lambda ctx, xs, y, labels: round_integral_panel(xs[0], y, _et(ctx), "nearest_even",
                                                                     (labels[0], labels[-1])))
def round_nearest_even(ctx: OpCall, operand: np.ndarray) -> np.ndarray:
    """roundToIntegralTiesToEven: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2."""
    return np.rint(_compute(operand))


@elementwise_op("stablehlo.round_nearest_afz", "RoundNearestAfz",
                same_type_verifier(FLOAT_Q, ("operand",)),
                bits=lambda ctx, xs, y, labels: round_integral_panel(xs[0], y, _et(ctx), "nearest_away",
                                                                     (labels[0], labels[-1])))
def round_nearest_afz(ctx: OpCall, operand: np.ndarray) -> np.ndarray:
    """roundToIntegralTiesToAway: 0.5 -> 1, -2.5 -> -3."""
    x = _compute(operand)
    whole = np.trunc(x)
    # x - trunc(x) is exact; adding 0.5 first would round 0.49999997 up to 1
    fraction = x - whole
    return np.where(np.abs(fraction) >= 0.5, whole + np.copysign(np.ones_like(x), x), whole)


# --- transcendental -----------------------------------------------------------------

_FC = same_type_verifier(FLOAT_COMPLEX_Q, ("operand",))


@elementwise_op("stablehlo.sqrt", "Sqrt", _FC)
def sqrt(ctx: OpCall, operand: np.ndarray) -> np.ndarray:
    """squareRoot; the principal square root for complex numbers."""
    return _per_kind(ctx, operand, np.sqrt)


@elementwise_op("stablehlo.rsqrt", "Rsqrt", _FC)
def rsqrt(ctx: OpCall, operand: np.ndarray) -> np.ndarray:
    """rSqrt: 1 / sqrt(operand)."""
    return _per_kind(ctx, operand, lambda x: np.ones_like(x) / np.sqrt(x))


def _complex_cbrt(z: np.ndarray) -> np.ndarray:
    # the principal cube root: |z|^(1/3) * e^(i * arg(z) / 3)
    r = np.cbrt(np.abs(z))
    theta = np.arctan2(z.imag, z.real) / 3
    return as_complex(r * np.cos(theta), r * np.sin(theta), z.dtype)


def _real_cbrt(x: np.ndarray) -> np.ndarray:
    # numpy's float32 cbrt is 1 ulp off on exact cubes (cbrt(27) = 2.9999998); XLA gives 3.
    # The f64 cube root rounded once to f32 is the correctly rounded value in all but rare ties.
    return np.cbrt(x.astype(np.float64)).astype(np.float32) if x.dtype == np.float32 else np.cbrt(x)


@elementwise_op("stablehlo.cbrt", "Cbrt", _FC)
def cbrt(ctx: OpCall, operand: np.ndarray) -> np.ndarray:
    """rootn(x, 3); the principal cube root for complex numbers."""
    return _per_kind(ctx, operand, _real_cbrt, _complex_cbrt)


@elementwise_op("stablehlo.exponential", "Exp", _FC)
def exponential(ctx: OpCall, operand: np.ndarray) -> np.ndarray:
    """exp."""
    return _per_kind(ctx, operand, np.exp)


def _complex_expm1(z: np.ndarray) -> np.ndarray:
    # e^(x+iy) - 1 = (expm1(x) cos y - 2 sin^2(y/2)) + i e^x sin y, accurate near 0
    x, y = z.real, z.imag
    half = np.sin(y / 2)
    return as_complex(np.expm1(x) * np.cos(y) - 2 * half * half, np.exp(x) * np.sin(y), z.dtype)


@elementwise_op("stablehlo.exponential_minus_one", "Expm1", _FC)
def exponential_minus_one(ctx: OpCall, operand: np.ndarray) -> np.ndarray:
    """expm1: exp(x) - 1, accurate for small x."""
    return _per_kind(ctx, operand, np.expm1, _complex_expm1)


@elementwise_op("stablehlo.log", "Log", _FC)
def log(ctx: OpCall, operand: np.ndarray) -> np.ndarray:
    """log; the principal logarithm for complex numbers."""
    return _per_kind(ctx, operand, np.log)


def complex_log1p(z: np.ndarray) -> np.ndarray:
    # spec: complex(log(hypot(x + 1, y)), atan2(y, x + 1)). log|1+z| = 0.5*log1p(s) with
    # s = x(x+2) + y^2 keeps precision where |1+z| is near 1; elsewhere hypot is accurate.
    x, y = z.real, z.imag
    s = x * (x + 2) + y * y
    re = np.where(np.abs(s) < 0.5, 0.5 * np.log1p(s), np.log(np.hypot(x + 1, y)))
    return as_complex(re, np.arctan2(y, x + 1), z.dtype)


@elementwise_op("stablehlo.log_plus_one", "Log1p", _FC)
def log_plus_one(ctx: OpCall, operand: np.ndarray) -> np.ndarray:
    """logp1: log(1 + x), accurate for small x."""
    return _per_kind(ctx, operand, np.log1p, complex_log1p)


@elementwise_op("stablehlo.logistic", "Logistic", _FC)
def logistic(ctx: OpCall, operand: np.ndarray) -> np.ndarray:
    """division(1, addition(1, exp(-x))).

    f16 evaluates the spec's three IEEE operations each rounded to f16, as
    XLA:CPU does (it expands logistic before widening f16): exp(-x) overflows
    f16 for x < -11.1 and the result is 0. Other narrow types (bf16, f8, ...)
    are computed in f32 and rounded once, as XLA:CPU does for bf16.
    """
    if _et(ctx).is_complex:
        return 1 / (1 + np.exp(-operand))
    x = _compute(operand)
    one = np.ones_like(x)
    if operand.dtype != np.float16:
        return one / (one + np.exp(-x))
    f16 = np.float16
    e = np.exp(-x).astype(f16).astype(np.float32)
    return one / (one + e).astype(f16).astype(np.float32)


@elementwise_op("stablehlo.sine", "Sin", _FC)
def sine(ctx: OpCall, operand: np.ndarray) -> np.ndarray:
    """sin."""
    return _per_kind(ctx, operand, np.sin)


@elementwise_op("stablehlo.cosine", "Cos", _FC)
def cosine(ctx: OpCall, operand: np.ndarray) -> np.ndarray:
    """cos."""
    return _per_kind(ctx, operand, np.cos)


@elementwise_op("stablehlo.tan", "Tan", _FC)
def tan(ctx: OpCall, operand: np.ndarray) -> np.ndarray:
    """tan."""
    return _per_kind(ctx, operand, np.tan)


@elementwise_op("stablehlo.tanh", "Tanh", _FC)
def tanh(ctx: OpCall, operand: np.ndarray) -> np.ndarray:
    """tanh."""
    return _per_kind(ctx, operand, np.tanh)


def complex_atan2(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    # atan2(y, x) = -i * log((x + i*y) / sqrt(x^2 + y^2)), as the reference interpreter
    return _times_minus_i(np.log((x + _times_i(y)) / np.sqrt(x * x + y * y)))


@elementwise_op("stablehlo.atan2", "Atan2", same_type_verifier(FLOAT_COMPLEX_Q))
def atan2(ctx: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """atan2(lhs, rhs): the angle of the point (rhs, lhs)."""
    if _et(ctx).is_complex:
        return complex_atan2(lhs, rhs)
    return np.arctan2(_compute(lhs), _compute(rhs))


@elementwise_op("stablehlo.is_finite", "IsFinite", _verify_is_finite,
                infer=_infer_is_finite)
def is_finite(ctx: OpCall, x: np.ndarray) -> np.ndarray:
    """isFinite: neither +Inf, -Inf nor NaN (always true for quantized values)."""
    t = ctx.operand_types[0]
    if isinstance(t, TensorType) and t.is_quantized:
        return np.ones(np.shape(x), dtype=np.bool_)
    return np.isfinite(_compute(x))


# --- logic and bits -----------------------------------------------------------------

_BI = same_type_verifier(BOOL_OR_INT, relation="type")


@elementwise_op("stablehlo.and", "And", _BI)
def and_(ctx: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """Logical AND for booleans, bitwise AND for integers."""
    et = _et(ctx)
    if et.is_bool:
        return np.logical_and(lhs, rhs)
    return wrap_int(_bits(lhs, et) & _bits(rhs, et), et)


@elementwise_op("stablehlo.or", "Or", _BI)
def or_(ctx: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """Logical OR for booleans, bitwise OR for integers."""
    et = _et(ctx)
    if et.is_bool:
        return np.logical_or(lhs, rhs)
    return wrap_int(_bits(lhs, et) | _bits(rhs, et), et)


@elementwise_op("stablehlo.xor", "Xor", _BI)
def xor(ctx: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """Logical XOR for booleans, bitwise XOR for integers."""
    et = _et(ctx)
    if et.is_bool:
        return np.logical_xor(lhs, rhs)
    return wrap_int(_bits(lhs, et) ^ _bits(rhs, et), et)


@elementwise_op("stablehlo.not", "Not", same_type_verifier(BOOL_OR_INT, ("operand",), relation="type"))
def not_(ctx: OpCall, operand: np.ndarray) -> np.ndarray:
    """Logical NOT for booleans, bitwise NOT for integers."""
    et = _et(ctx)
    if et.is_bool:
        return np.logical_not(operand)
    return wrap_int(~_bits(operand, et), et)


_INT1 = same_type_verifier(INT, ("operand",), relation="type")


@elementwise_op("stablehlo.popcnt", "PopulationCount", _INT1,
                bits=lambda ctx, xs, y, labels: popcnt_panel(xs[0], y, _et(ctx), (labels[0], labels[-1])))
def popcnt(ctx: OpCall, operand: np.ndarray) -> np.ndarray:
    """The number of bits set in the operand's bit pattern (wrapped to the type: i2 has 2 -> -2)."""
    et = _et(ctx)
    return wrap_int(np.bitwise_count(_bits(operand, et)).astype(np.uint64), et)


def _bit_length(p: np.ndarray) -> np.ndarray:
    """Position of the highest set bit plus one (0 for 0), by binary search over 64 bits."""
    length = np.zeros(p.shape, dtype=np.uint64)
    for step in (32, 16, 8, 4, 2, 1):
        high = (p >> np.uint64(step)) != 0
        length = np.where(high, length + np.uint64(step), length)
        p = np.where(high, p >> np.uint64(step), p)
    return length + (p != 0).astype(np.uint64)


@elementwise_op("stablehlo.count_leading_zeros", "Clz", _INT1,
                bits=lambda ctx, xs, y, labels: clz_panel(xs[0], y, _et(ctx), (labels[0], labels[-1])))
def count_leading_zeros(ctx: OpCall, operand: np.ndarray) -> np.ndarray:
    """The number of leading zero bits in the operand's bit-width pattern."""
    et = _et(ctx)
    return wrap_int(np.uint64(et.bits) - _bit_length(_bits(operand, et)), et)


_SHIFT = same_type_verifier(INT, relation="type")


def _shift_bits(kind: str) -> BitsFn:
    def bits(ctx: OpCall, xs: list[Any], y: Any, labels: list[str]) -> BitPanel:
        return shift_panel(xs[0], xs[1], y, _et(ctx), kind, (labels[0], labels[1], labels[-1]))

    return bits


def _shift_amount(rhs: np.ndarray, et: ElementType) -> tuple[np.ndarray, np.ndarray]:
    """(in_range, amount): the amount read as unsigned, clipped to bits - 1 where out of range."""
    amount = _bits(rhs, et)
    in_range = amount < np.uint64(et.bits)
    return in_range, np.where(in_range, amount, np.uint64(et.bits - 1))


@elementwise_op("stablehlo.shift_left", "ShiftLeft", _SHIFT, bits=_shift_bits("left"))
def shift_left(ctx: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """lhs << rhs; 0 when rhs is negative or >= the bit width."""
    et = _et(ctx)
    in_range, amount = _shift_amount(rhs, et)
    return wrap_int(np.where(in_range, _bits(lhs, et) << amount, np.uint64(0)), et)


@elementwise_op("stablehlo.shift_right_logical", "ShiftRightLogical", _SHIFT,
                bits=_shift_bits("right_logical"))
def shift_right_logical(ctx: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """lhs >> rhs filling with zeros; 0 when rhs is negative or >= the bit width."""
    et = _et(ctx)
    in_range, amount = _shift_amount(rhs, et)
    return wrap_int(np.where(in_range, _bits(lhs, et) >> amount, np.uint64(0)), et)


@elementwise_op("stablehlo.shift_right_arithmetic", "ShiftRightArithmetic", _SHIFT,
                bits=_shift_bits("right_arithmetic"))
def shift_right_arithmetic(ctx: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """lhs >> rhs filling with the top bit; all top bits when rhs is negative or >= the bit width."""
    et = _et(ctx)
    _, amount = _shift_amount(rhs, et)  # shifting by bits - 1 is the sign fill
    value = _signed_bits(_bits(lhs, et), et.bits)
    return wrap_int(value >> amount.astype(np.int64), et)
