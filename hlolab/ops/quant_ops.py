"""Quantized values and ``stablehlo.uniform_quantize`` / ``stablehlo.uniform_dequantize``.

A quantized tensor's value is a numpy array of its storage type (int8, uint8, ml_dtypes
int4, …); its ``!quant.uniform`` type carries the quantization parameters (one scale and
zero point, or one pair per slice of ``quantization_dimension``). The spec's helpers, as
written in its Notation section, vectorized:

- ``dequantize(x)``: ``(x_storage - zero_points) * scales`` in the expressed type,
- ``quantize(x, type)``: ``x / scales + zero_points``, clamped to
  ``[storage_min, storage_max]`` (converted to the expressed type), rounded half to even,
  converted to the storage type.

Choices where the spec's formula leaves one (listed here, used by every quantized op):

- ``x_storage - zero_points`` is computed exactly, not in the storage type, where it could
  wrap (i8 127 - (-128), i64 and ui64 extremes); the difference, and the zero points and
  storage bounds ``quantize`` converts, become the expressed type by ``convert``: rounded
  once, to nearest even. Where the expressed type cannot hold every such integer (i64 /
  ui64 / i32 in f32, i16 in bf16) this is done in integer arithmetic on the magnitude
  (numpy's int64 -> f32 cast is exact, but int -> bf16 goes through f32 and rounds twice,
  and ui64 does not fit int64).
- NaN converts to storage 0 (as ``convert`` does, XLA:CPU); after rounding, a value the
  expressed type could not bound exactly (``storage_max`` of i16 is 32768 in f16, of i64
  2^63 in f32) is converted exactly and clamped to ``[storage_min, storage_max]`` in
  integers, so a result always lies in range (the spec's ``convert`` of 2^63 to i64 is out
  of range: it leaves that case open).
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from hlolab.messages import Msg
from hlolab.ops.common import tensor_type
from hlolab.ops.record import Attrs, InferError, Inferred, Partial
from hlolab.ops.registry import OpCall, op
from hlolab.trace.explain import Explanation, Step
from hlolab.trace.provenance import check_index, elementwise_provenance, value_shape
from hlolab.types import ElementType, QuantizedElementType, TensorType, Type

# --- quantization parameters ------------------------------------------------------------


def storage_range(qt: QuantizedElementType) -> tuple[int, int]:
    """``storage_min`` and ``storage_max`` (defaults: the storage type's range)."""
    lo = qt.storage_min if qt.storage_min is not None else int(qt.storage.min_value())
    hi = qt.storage_max if qt.storage_max is not None else int(qt.storage.max_value())
    return int(lo), int(hi)


def _along(values: np.ndarray, qt: QuantizedElementType, ndim: int, batch: int) -> np.ndarray:
    """Per-tensor: the one value; per-axis: shaped to broadcast along
    ``quantization_dimension`` (shifted by ``batch`` leading batch dims) of a rank-``ndim``
    value (the spec's compute_scales / compute_zero_points)."""
    if qt.axis is None:
        return values.reshape(())
    shape = [1] * ndim
    shape[batch + qt.axis] = values.size
    return values.reshape(shape)


def scales_for(qt: QuantizedElementType, ndim: int, batch: int = 0) -> np.ndarray:
    """The scales as the expressed type, broadcastable against a value (compute_scales)."""
    return _along(np.asarray(qt.scales, dtype=np.float64).astype(qt.expressed.dtype), qt, ndim, batch)


def zero_points_for(qt: QuantizedElementType, ndim: int, batch: int = 0) -> np.ndarray:
    """The zero points as int64, broadcastable against a value (compute_zero_points)."""
    return _along(np.asarray(qt.zero_points, dtype=np.int64), qt, ndim, batch)


def quantized_element(t: Any) -> QuantizedElementType | None:
    """The quantized element type of tensor type ``t``, None for any other type."""
    if isinstance(t, TensorType) and isinstance(t.element, QuantizedElementType):
        return t.element
    return None


def expressed_tensor(t: Type) -> Type:
    """A quantized tensor type as the tensor of its expressed type (other types unchanged)."""
    qt = quantized_element(t)
    if qt is None:
        return t
    assert isinstance(t, TensorType)
    return TensorType(t.shape, qt.expressed, t.encoding)


# --- the spec's dequantize and quantize ------------------------------------------------


_TWO63 = np.uint64(1 << 63)


def _wide(qt: QuantizedElementType) -> type:
    """The 64-bit integer type holding every value of the storage type."""
    return np.uint64 if qt.storage.kind == "uint" else np.int64


def _biased(v: np.ndarray, wide: type) -> np.ndarray:
    """Integers as uint64 in the same order (signed ones offset by 2^63): differences of two
    of them are exact in uint64 when taken larger minus smaller."""
    if wide is np.uint64:
        return np.asarray(v).astype(np.uint64)
    return np.asarray(v).astype(np.int64).view(np.uint64) ^ _TWO63


def _mantissa_bits(dt: np.dtype) -> int:
    return int(ml_dtypes.finfo(dt).nmant) + 1


def _exact_in(qt: QuantizedElementType) -> bool:
    """Every difference of two storage values is an integer the expressed type holds exactly
    (and fits int64): then a plain cast is ``convert``."""
    span = int(qt.storage.max_value()) - int(qt.storage.min_value())
    return span < 2 ** min(_mantissa_bits(qt.expressed.dtype), 62)


def round_to_float(mag: np.ndarray, neg: np.ndarray, dt: np.dtype) -> np.ndarray:
    """The integers ``(-1 if neg else 1) * mag`` (``mag`` uint64) in float type ``dt``,
    rounded once to nearest even (``convert``), by integer arithmetic on the magnitude:
    keep its top p bits (p: the significand bits of ``dt``), round on the rest, scale."""
    mag = np.asarray(mag, dtype=np.uint64)
    p = _mantissa_bits(dt)
    _, e = np.frexp(mag.astype(np.float64))  # bit length, or one more where the f64 rounded up
    e = e.astype(np.int64)
    probe = np.clip(e - 1, 0, 63).astype(np.uint64)
    over = (e - 1 >= 64) | ((e >= 1) & ((mag >> probe) == 0))
    length = np.where(over, e - 1, e)
    shift = np.maximum(length - p, 0).astype(np.uint64)
    q = mag >> shift
    rem = mag - (q << shift)
    half = np.where(shift > 0, np.uint64(1) << (np.maximum(shift, np.uint64(1)) - np.uint64(1)), np.uint64(0))
    up = (shift > 0) & ((rem > half) | ((rem == half) & ((q & np.uint64(1)) == 1)))
    m = q + up.astype(np.uint64)  # <= 2^p: exact in f64, and so is m * 2^shift
    with np.errstate(over="ignore"):
        val = np.ldexp(m.astype(np.float64), shift.astype(np.int64))
        return np.where(neg, -val, val).astype(dt)  # exact, or beyond dt's range: inf


def to_expressed(values: Any, qt: QuantizedElementType) -> np.ndarray:
    """Integers of the storage type's range -> the expressed type, rounded once (``convert``)."""
    wide = _wide(qt)
    v = np.asarray(values, dtype=wide)
    if _exact_in(qt):
        return v.astype(np.int64).astype(qt.expressed.dtype)
    b, zero = _biased(v, wide), _biased(np.zeros((), wide), wide)
    neg = b < zero
    return round_to_float(np.where(neg, zero - b, b - zero), neg, qt.expressed.dtype)


def dequantize(x: np.ndarray, qt: QuantizedElementType, batch: int = 0) -> np.ndarray:
    """``dequantize``: storage values -> expressed-type values."""
    x = np.asarray(x)
    wide = _wide(qt)
    zero_points = _along(np.asarray(qt.zero_points, dtype=wide), qt, x.ndim, batch)
    with np.errstate(all="ignore"):
        if _exact_in(qt):  # x_storage - zero_points exact in int64 and in the expressed type
            x_storage_sub = x.astype(np.int64) - zero_points.astype(np.int64)
            x_expressed_sub = x_storage_sub.astype(qt.expressed.dtype)
        else:  # the exact difference as sign and uint64 magnitude, rounded once
            xb, zb = _biased(x, wide), _biased(zero_points, wide)
            neg = xb < zb
            x_expressed_sub = round_to_float(np.where(neg, zb - xb, xb - zb), neg, qt.expressed.dtype)
        return np.asarray(x_expressed_sub * scales_for(qt, x.ndim, batch), dtype=qt.expressed.dtype)


def quantize_stages(x: np.ndarray, qt: QuantizedElementType,
                    batch: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``quantize``'s intermediate values: ``x_scaled_add_zp``, ``x_clamped``, ``x_rounded``
    (all in the expressed type) and the storage result."""
    et = qt.expressed.dtype
    x = np.asarray(x).astype(et)
    lo, hi = storage_range(qt)
    with np.errstate(all="ignore"):  # a bound or zero point beyond a narrow float is inf, as convert gives
        converted_zero_points = _along(to_expressed(list(qt.zero_points), qt), qt, x.ndim, batch)
        converted_min, converted_max = to_expressed([lo, hi], qt)
        x_scaled = np.asarray(x / scales_for(qt, x.ndim, batch), dtype=et)
        x_scaled_add_zp = np.asarray(x_scaled + converted_zero_points, dtype=et)
        # clamp(min, x, max) = min(max(x, min), max); NaN stays NaN
        x_clamped = np.asarray(np.minimum(np.maximum(x_scaled_add_zp, converted_min), converted_max),
                               dtype=et)
        x_rounded = np.asarray(np.rint(x_clamped), dtype=et)
    return x_scaled_add_zp, x_clamped, x_rounded, _to_storage(x_rounded, qt, lo, hi)


def _to_storage(x_rounded: np.ndarray, qt: QuantizedElementType, lo: int, hi: int) -> np.ndarray:
    """Whole-valued floats -> storage integers, exactly: NaN -> 0; a value beyond the 64-bit
    range (only where the expressed type rounded a bound outwards, or inf) saturates; then
    clamped to ``[storage_min, storage_max]`` in integers."""
    w = np.asarray(x_rounded).astype(np.float64)  # every float type is exact in f64
    nan = np.isnan(w)
    wide = _wide(qt)
    # the 64-bit range as f64 bounds, both powers of two (exact): [-2^63, 2^63) / [0, 2^64)
    wmin, wmax = (0.0, 2.0 ** 64) if wide is np.uint64 else (-(2.0 ** 63), 2.0 ** 63)
    over, under = w >= wmax, w < wmin
    n = np.where(nan | over | under, 0.0, w).astype(wide)  # whole and in range: exact
    lo_w, hi_w = np.array(lo, wide), np.array(hi, wide)
    n = np.where(over, hi_w, np.where(under, lo_w, n))
    out = np.minimum(np.maximum(n, lo_w), hi_w)
    out = np.where(nan, np.array(0 if lo <= 0 <= hi else lo, wide), out)
    return np.asarray(out).astype(qt.storage.dtype)


def quantize(x: np.ndarray, qt: QuantizedElementType, batch: int = 0) -> np.ndarray:
    """``quantize``: expressed-type values -> storage values of ``qt``."""
    return quantize_stages(x, qt, batch)[-1]


# --- explain: the stages of one element ------------------------------------------------


def param_at(qt: QuantizedElementType, index: tuple[int, ...]) -> tuple[Any, int]:
    """The scale (expressed type) and zero point of the element at ``index``."""
    k = index[qt.axis] if qt.axis is not None else 0
    return qt.expressed.dtype.type(qt.scales[k]), int(qt.zero_points[k])


def real_at(q: Any, qt: QuantizedElementType, index: tuple[int, ...]) -> Any:
    """The real value of one stored integer ``q`` at ``index`` (``dequantize`` of it)."""
    return dequantize(np.asarray(q).reshape(1), _single(qt, index))[0]


def _single(qt: QuantizedElementType, index: tuple[int, ...]) -> QuantizedElementType:
    """The per-tensor type holding the parameters of the element at ``index``."""
    k = index[qt.axis] if qt.axis is not None else 0
    return QuantizedElementType(qt.storage, qt.expressed, (qt.scales[k],), (qt.zero_points[k],), None,
                                qt.storage_min, qt.storage_max)


def _operand(v: Any) -> Any:
    """A number written after a minus or plus sign: ``(-1)``, so a formula never reads ``5 - -1``."""
    return f"({v})" if np.ndim(v) == 0 and v < 0 else v


def dequantize_step(name: str, q: Any, qt: QuantizedElementType, index: tuple[int, ...]) -> Step:
    """``name = (q - zero_point) * scale`` with this element's numbers."""
    scale, zp = param_at(qt, index)
    value = dequantize(np.asarray(q).reshape(1), _single(qt, index))[0]
    return Step(name, Msg("quantized.dequantize.formula"), value,
                substituted=Msg("quantized.dequantize.substituted", q=q, zero_point=_operand(zp),
                                scale=scale))


def quantize_steps(x: Any, qt: QuantizedElementType, index: tuple[int, ...]) -> list[Step]:
    """``x / scale + zero_point``, the clamp to the storage range and the rounding, with
    this element's numbers."""
    scale, zp = param_at(qt, index)
    add_zp, clamped, rounded, stored = (v[0] for v in quantize_stages(np.asarray(x).reshape(1),
                                                                      _single(qt, index)))
    lo, hi = storage_range(qt)
    moved = not (np.isnan(add_zp) or add_zp == clamped)
    return [
        Step("x_scaled_add_zp", Msg("quantized.quantize.scale.formula"), add_zp,
             substituted=Msg("quantized.quantize.scale.substituted", x=x, scale=scale,
                             zero_point=_operand(zp))),
        Step("x_clamped", Msg("quantized.quantize.clamp.formula"), clamped,
             before_clamp=add_zp if moved else None,
             substituted=Msg("quantized.quantize.clamp.substituted", x=add_zp, storage_min=lo,
                             storage_max=hi)),
        Step("x_rounded", Msg("quantized.quantize.round.formula"), rounded),
        Step("result", Msg("quantized.quantize.store.formula", storage=str(qt.storage)), stored),
    ]


def _explain_uniform(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
                     index: tuple) -> Explanation:
    idx = check_index(value_shape(outputs[0]), index, "result #0 index")
    x = np.asarray(inputs[0])[idx]
    name = ctx.op.operands[0].name + (f"[{', '.join(map(str, idx))}]" if idx else "")
    oq, rq = quantized_element(ctx.operand_types[0]), quantized_element(ctx.result_types[0])
    steps: list[Step] = []
    if oq is not None:
        steps.append(dequantize_step(name, x, oq, idx))
        x = steps[-1].value
    else:
        steps.append(Step("operand", Msg("explain.element", name=ctx.op.operands[0].name,
                                         index=", ".join(map(str, idx))), x))
    if rq is not None:
        steps.extend(quantize_steps(x, rq, idx))
    notes = [Msg("quantized.note.params", type=str(t)) for t in (oq, rq) if t is not None]
    return Explanation(ctx.op.name, idx, steps, outputs[0][idx], notes, 0)


# --- uniform_quantize / uniform_dequantize ------------------------------------------------


def _float_type(t: TensorType) -> ElementType | None:
    e = t.element
    return e if isinstance(e, ElementType) and e.is_float else None


def infer_uniform_dequantize(attrs: Attrs, types: list[Type]) -> list[Inferred]:
    """A tensor of the operand's shape (C1) and expressed type (C2)."""
    if len(types) != 1:
        raise InferError(None, f"uniform_dequantize takes 1 operand, got {len(types)}")
    qt = quantized_element(types[0])
    if qt is None:
        raise InferError("I1", f"operand must be a quantized tensor, got {types[0]}")
    return [expressed_tensor(types[0])]


def infer_uniform_quantize(attrs: Attrs, types: list[Type]) -> list[Inferred]:
    """A quantized tensor of the operand's shape (C1) whose expressed type is the operand's
    float type or expressed type (C2); the parameters are the declared type's."""
    if len(types) != 1:
        raise InferError(None, f"uniform_quantize takes 1 operand, got {len(types)}")
    t = types[0]
    if not isinstance(t, TensorType) or (quantized_element(t) is None and _float_type(t) is None):
        raise InferError("I1", f"operand must be a tensor of floating-point or quantized type, got {t}")
    qt = quantized_element(t)
    expressed = qt.expressed if qt is not None else t.element

    def admits(d: Any) -> bool:
        rq = quantized_element(d)
        return rq is not None and rq.expressed == expressed

    return [Partial(t.shape, None, check=admits,
                    what=f"a quantized tensor of shape {list(t.shape)} with expressed type {expressed}")]


def _verify_uniform_dequantize(ctx: OpCall) -> None:
    if len(ctx.operand_types) != 1 or len(ctx.result_types) != 1:
        raise ctx.error(None, "takes 1 operand and gives 1 result")
    operand = tensor_type(ctx, ctx.operand_types[0], "I1", "operand")
    result = tensor_type(ctx, ctx.result_types[0], None, "result")
    qt = quantized_element(operand)
    if qt is None:
        raise ctx.error("I1", f"operand must be a quantized tensor, got {operand}")
    if _float_type(result) is None:
        raise ctx.error(None, f"result must be a tensor of floating-point type, got {result}")
    if tuple(operand.shape) != tuple(result.shape):
        raise ctx.error("C1", f"shape(operand) = {list(operand.shape)} must equal shape(result) = "
                              f"{list(result.shape)}")
    if result.element != qt.expressed:
        raise ctx.error("C2", f"element_type(result) = {result.element} must equal "
                              f"expressed_type(operand) = {qt.expressed}")


def _verify_uniform_quantize(ctx: OpCall) -> None:
    if len(ctx.operand_types) != 1 or len(ctx.result_types) != 1:
        raise ctx.error(None, "takes 1 operand and gives 1 result")
    operand = tensor_type(ctx, ctx.operand_types[0], "I1", "operand")
    result = tensor_type(ctx, ctx.result_types[0], None, "result")
    oq, rq = quantized_element(operand), quantized_element(result)
    if oq is None and _float_type(operand) is None:
        raise ctx.error("I1", f"operand must be a tensor of floating-point or quantized type, got {operand}")
    if rq is None:
        raise ctx.error(None, f"result must be a quantized tensor, got {result}")
    if tuple(operand.shape) != tuple(result.shape):
        raise ctx.error("C1", f"shape(operand) = {list(operand.shape)} must equal shape(result) = "
                              f"{list(result.shape)}")
    want = oq.expressed if oq is not None else operand.element
    if rq.expressed != want:
        what = "expressed_type(operand)" if oq is not None else "element_type(operand)"
        raise ctx.error("C2", f"expressed_type(result) = {rq.expressed} must equal {what} = {want}")


@op("stablehlo.uniform_dequantize", aliases=("UniformDequantize",), verify=_verify_uniform_dequantize,
    infer=infer_uniform_dequantize, family="quantization", provenance=elementwise_provenance,
    explain=_explain_uniform, elementwise=True)
def uniform_dequantize(ctx: OpCall, operand: np.ndarray) -> np.ndarray:
    """``result = dequantize(operand)``: (storage - zero_point) * scale, per slice of
    ``quantization_dimension`` for per-axis types."""
    qt = quantized_element(ctx.operand_types[0])
    assert qt is not None
    return dequantize(operand, qt, len(ctx.batch_shape))


@op("stablehlo.uniform_quantize", aliases=("UniformQuantize",), verify=_verify_uniform_quantize,
    infer=infer_uniform_quantize, family="quantization", provenance=elementwise_provenance,
    explain=_explain_uniform, elementwise=True)
def uniform_quantize(ctx: OpCall, operand: np.ndarray) -> np.ndarray:
    """``result = quantize(operand, type(result))``; a quantized operand is dequantized
    first (requantization)."""
    rq = quantized_element(ctx.result_types[0])
    assert rq is not None
    batch = len(ctx.batch_shape)
    oq = quantized_element(ctx.operand_types[0])
    float_operand = dequantize(operand, oq, batch) if oq is not None else operand
    return quantize(float_operand, rq, batch)


# --- parameter schemas (hlolab.ops.examples) ------------------------------------------------

def _schemas() -> None:
    from hlolab.ops.examples import (
        Operand,
        OpParts,
        OpSchema,
        Param,
        dtype_param,
        int_param,
        ints_param,
        register_schema,
        shape_param,
        ttype,
    )
    from hlolab.types import element_type

    def qtype(p: dict[str, Any]) -> QuantizedElementType:
        storage, expressed = element_type(p["storage"]), element_type(p["expressed"])
        if not storage.is_int or not expressed.is_float:
            raise ValueError("storage must be an integer type and expressed a floating-point type")
        scales = tuple(float(s) for s in str(p["scales"]).split(","))
        zero_points = tuple(int(z) for z in p["zero_points"])
        axis = None if p["axis"] < 0 else int(p["axis"])
        n = 1 if axis is None else p["operand"][axis]
        if len(scales) != n or len(zero_points) != n or not all(s > 0 for s in scales):
            raise ValueError(f"{n} positive scale(s) and zero point(s) needed")
        return QuantizedElementType(storage, expressed, scales, zero_points, axis)

    params = (
        shape_param("operand", (2, 3), "shape of the operand"),
        dtype_param("i8", "storage type of the quantized values", "storage"),
        dtype_param("f32", "expressed (floating-point) type", "expressed"),
        Param("scales", "text", "0.5", "scale(s), comma-separated: one, or one per slice of axis"),
        ints_param("zero_points", (-3,), "zero point(s): one, or one per slice of axis"),
        int_param("axis", -1, "quantization_dimension for per-axis parameters (-1: per-tensor)"),
    )
    spec = {"operand": (2,), "scales": "0.1,0.5", "zero_points": (-30, -20), "axis": 0}

    def build_quantize(p: dict[str, Any]) -> OpParts:
        qt = qtype(p)
        shape = tuple(p["operand"])
        return OpParts([Operand("operand", ttype(shape, p["expressed"]))], [TensorType(shape, qt)])

    def build_dequantize(p: dict[str, Any]) -> OpParts:
        qt = qtype(p)
        shape = tuple(p["operand"])
        return OpParts([Operand("operand", TensorType(shape, qt))], [ttype(shape, p["expressed"])])

    register_schema(OpSchema("stablehlo.uniform_quantize", params, {
        "default": {}, "spec-example": {**spec, "inputs": {"operand": [4.0, 15.0]}, "index": (0,)}},
        build_quantize,
        doc="float -> storage integers: x / scale + zero_point, clamped, rounded half to even"))
    register_schema(OpSchema("stablehlo.uniform_dequantize", params, {
        "default": {}, "spec-example": {**spec, "inputs": {"operand": [10, 10]}, "index": (0,)}},
        build_dequantize, doc="storage integers -> float: (storage - zero_point) * scale"))


_schemas()
