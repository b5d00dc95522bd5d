"""Element type conversions: convert, bitcast_convert, complex, real, imag.

Numerical choices where the spec leaves the result TBD (its issue #180:
values the destination type cannot represent exactly). We match XLA:CPU,
checked bit for bit against jax/XLA in tests/ops/test_conversion_oracle.py:

* int -> int wraps (two's complement truncation), 2- and 4-bit types too.
* float -> int truncates toward zero; NaN gives 0; values past the range
  saturate to the type's min/max (sub-byte types included).
* int -> float and float -> float round to nearest, ties to even, once, except
  where XLA:CPU goes through f32 and rounds twice: f64 -> f16 / bf16 /
  f8E8M0FNU and int -> bf16 (e.g. i64 2^25 + 2^17 + 1 -> bf16 2^25). Every
  int -> float narrower than f32 goes through f32 here (for the other types
  the f32 step is exact or the value overflows either way).
* Overflow: types with infinities give +-inf, NaN-only types (f8E4M3FN, the
  FNUZ types) give NaN, finite-only types (f4E2M1FN, f6*) saturate to +-max.
  NaN -> f4E2M1FN gives -0.0 (XLA's encoding 0x8); the f6 types, which
  XLA:CPU cannot run, follow the same rule. f8E8M0FNU follows XLA (0, -0 and
  negative values give NaN).
* -> i1 is ``x != 0`` (NaN -> true); complex -> non-complex uses the real part
  only (the spec: the imaginary part is ignored).
* f4E2M1FN +-6.0 -> integer gives +-6 (exact, so the spec fixes it; XLA:CPU
  saturates it to the integer type's min/max).
* NaN payloads and NaN signs are left unspecified (XLA:CPU quiets signalling
  NaNs, and its f16 -> f8E5M2 gives +NaN for every NaN).
* Denormals are kept (IEEE gradual underflow), as the spec demands for values
  the destination represents exactly. XLA:CPU runs with flush-to-zero /
  denormals-are-zero and differs there (e.g. f32 1e-45 -> f64 gives 0.0, and
  f32 1e-45 -> i1 gives false); the oracle tests list those cases.

bitcast_convert reads every element as its bit pattern (i1 is one bit) and
splits or joins the patterns little-endian: a narrower result element ``k``
holds bits ``[k*w, (k+1)*w)`` of the wider element, as XLA does. Complex
values are their real part's bits followed by their imaginary part's.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from hlolab.errors import ExecutionError, UnsupportedError
from hlolab.messages import Msg
from hlolab.numerics import float_format, from_bits, round_float64, to_bits
from hlolab.ops.common import check_value, shapes_compatible, wrap_int
from hlolab.ops.elementwise import infer_tensors, same_shape
from hlolab.ops.record import Attrs, InferError, Inferred, Partial
from hlolab.ops.registry import OpCall, op
from hlolab.trace.bits import bit_view, bitcast_panel, convert_panel
from hlolab.trace.explain import Explanation, Step, element_at, elementwise_explain
from hlolab.trace.provenance import (
    IndexMapProvenance,
    Link,
    Provenance,
    check_index,
    elementwise_provenance,
    unary_copy_provenance,
    value_shape,
)
from hlolab.types import ElementType, QuantizedElementType, TensorType, Type, element_type

_F64_DT = np.dtype(np.float64)
_F32_DT = np.dtype(np.float32)
_F16_DT = np.dtype(np.float16)
_BF16_DT = np.dtype(ml_dtypes.bfloat16)
_E8M0_DT = np.dtype(ml_dtypes.float8_e8m0fnu)

# destinations XLA:CPU reaches from f64 through f32 (rounding twice)
_VIA_F32_FROM_F64 = frozenset({_F16_DT, _BF16_DT, _E8M0_DT})


# --- shared type checks ------------------------------------------------------------

def tensor_operand(ctx: OpCall, t: Type, what: str, label: str | None = None) -> TensorType:
    """``t`` as a TensorType, or the op's VerificationError naming ``what``."""
    if not isinstance(t, TensorType):
        raise ctx.error(label, f"{what} must be a tensor, got {t}")
    return t


def baseline_key(e: Any) -> tuple:
    """What ``baseline_element_type`` keeps: the type without quantization scales and
    zero points; ``i32`` and ``si32`` are the same type."""
    if isinstance(e, QuantizedElementType):
        return ("quant", baseline_key(e.storage), e.storage_min, e.storage_max,
                baseline_key(e.expressed))
    return (e.kind, np.dtype(e.dtype).name)


def count_check(ctx: OpCall, n_operands: int, n_results: int = 1) -> None:
    if len(ctx.operand_types) != n_operands:
        raise ctx.error(None, f"expects {n_operands} operand(s), got {len(ctx.operand_types)}")
    if len(ctx.result_types) != n_results:
        raise ctx.error(None, f"expects {n_results} result(s), got {len(ctx.result_types)}")


def plain_element(t: Type) -> ElementType:
    """The (non-quantized) element type of a tensor type."""
    assert isinstance(t, TensorType) and isinstance(t.element, ElementType)
    return t.element


# --- element helpers ---------------------------------------------------------------

def _int_wide(x: np.ndarray, et: ElementType) -> np.ndarray:
    """Integer values as int64 (signed) or uint64 (unsigned), exactly."""
    return np.asarray(x).astype(np.int64 if et.is_signed else np.uint64)


def _float_to_int(x: np.ndarray, dst: ElementType) -> np.ndarray:
    """Truncate toward zero; NaN -> 0; out of range -> the type's min/max (XLA:CPU)."""
    w = np.asarray(x).astype(np.float64)  # every float type is exact in f64, trunc is exact
    nan = np.isnan(w)
    t = np.trunc(np.where(nan, 0.0, w))
    lo, hi = int(ml_dtypes.iinfo(dst.dtype).min), int(ml_dtypes.iinfo(dst.dtype).max)
    over = t >= float(hi + 1)  # hi + 1 is a power of two: exact in f64
    under = t < float(lo)
    mid = np.where(over | under, 0.0, t)
    wide = mid.astype(np.uint64 if dst.is_unsigned else np.int64)
    wide = np.where(over, np.array(hi, wide.dtype), np.where(under, np.array(lo, wide.dtype), wide))
    return wide.astype(dst.dtype)


def _finite_only_nan(out: np.ndarray, nan: np.ndarray, dst: np.dtype) -> np.ndarray:
    """NaN into a type without NaN: -0.0, XLA's choice for f4E2M1FN."""
    if not nan.any():
        return out
    neg_zero = from_bits(np.array(float_format(dst).sign_mask), dst)
    return np.where(nan, neg_zero, out).astype(dst)


def float_to_float(x: np.ndarray, dst: np.dtype) -> np.ndarray:
    """Real float array -> float dtype ``dst`` with XLA:CPU's rounding path."""
    x = np.asarray(x)
    dst = np.dtype(dst)
    if x.dtype == dst:
        return x.copy()
    if dst == _F64_DT:
        return x.astype(np.float64)  # exact
    if x.dtype == _F64_DT and dst in _VIA_F32_FROM_F64:
        x = x.astype(np.float32)  # XLA:CPU's first rounding
    with np.errstate(all="ignore"):
        if dst in (_F32_DT, _F16_DT):
            if x.dtype not in (_F64_DT, _F32_DT):
                x = x.astype(np.float32)  # exact
            return x.astype(dst)  # IEEE round to nearest even
        if dst in (_BF16_DT, _E8M0_DT):
            return x.astype(np.float32).astype(dst)  # exact to f32, then one ml_dtypes rounding
        # f8 / f6 / f4: one correct rounding from the exact f64 value
        w = x.astype(np.float64)
        fmt = float_format(dst)
        nan = np.isnan(w)
        if fmt.has_nan:
            return round_float64(w, dst)
        return _finite_only_nan(round_float64(np.where(nan, 0.0, w), dst), nan, dst)


def _int_to_float(x: np.ndarray, src: ElementType, dst: np.dtype) -> np.ndarray:
    """Integers -> float: nearest even from the exact value; through f32 below f32 (XLA:CPU)."""
    w = _int_wide(x, src)
    dst = np.dtype(dst)
    if dst in (_F64_DT, _F32_DT):
        return w.astype(dst)
    return float_to_float(w.astype(np.float32), dst)


def conversion_stages(src: ElementType, dst: ElementType) -> tuple[ElementType, ...]:
    """The types ``convert_array`` rounds through on the way from ``src`` to ``dst`` (real
    types; complex parts follow their component types): f32 for f64 -> f16 / bf16 /
    f8E8M0FNU and for integers -> floats narrower than f32, as XLA:CPU does; the bit
    view of convert shows each rounding (tests hold this in step with convert_array)."""
    f32 = element_type("f32")
    if src.is_float and dst.is_float and src.dtype == _F64_DT and dst.dtype in _VIA_F32_FROM_F64:
        return (f32,)
    if src.is_int and dst.is_float and dst.dtype not in (_F64_DT, _F32_DT):
        return (f32,)
    return ()


def convert_array(x: np.ndarray, src: ElementType, dst: ElementType) -> np.ndarray:
    """``x`` of element type ``src`` converted to ``dst`` as stablehlo.convert does."""
    x = np.asarray(x)
    if src.is_complex and not dst.is_complex:
        return convert_array(x.real.copy(), src.component, dst)  # imag ignored
    if dst.is_complex:
        if src.is_complex:
            re = float_to_float(x.real, dst.component.dtype)
            im = float_to_float(x.imag, dst.component.dtype)
        else:
            re = convert_array(x, src, dst.component)
            im = np.zeros(x.shape, dst.component.dtype)
        out = np.empty(x.shape, dst.dtype)
        out.real, out.imag = re, im
        return out
    if dst.is_bool:
        return x.astype(np.float64) != 0 if src.is_float else _int_wide(x, src) != 0
    if src.is_bool:
        x, src = x.astype(np.int64), element_type("i64")
    if src.is_float:
        return _float_to_int(x, dst) if dst.is_int else float_to_float(x, dst.dtype)
    # src is an integer
    return wrap_int(_int_wide(x, src), dst) if dst.is_int else _int_to_float(x, src, dst.dtype)


# --- convert -------------------------------------------------------------------------

def _verify_convert(ctx: OpCall) -> None:
    count_check(ctx, 1)
    operand = tensor_operand(ctx, ctx.operand_types[0], "operand", "I1")
    result = tensor_operand(ctx, ctx.result_types[0], "result")
    for label, what, t in (("I1", "operand", operand), (None, "result", result)):
        if t.is_quantized:  # the spec keeps these conversions to uniform_(de)quantize
            raise ctx.error(label, f"{what} must be a tensor, got the quantized {t}: use "
                                   "stablehlo.uniform_quantize / uniform_dequantize")
    if not shapes_compatible(operand.shape, result.shape):
        raise ctx.error("C1", f"shape(operand) = {list(operand.shape)} must equal "
                              f"shape(result) = {list(result.shape)}")


def infer_convert(attrs: Attrs, types: list[Type]) -> list[Inferred]:
    """The operand's shape (C1); the element type is the declared result's."""
    (operand,) = infer_tensors(types, ("operand",))
    return [Partial(operand.shape, None)]


def _labels(ctx: OpCall, idx: tuple[int, ...]) -> tuple[str, str]:
    """``%x[i, j]`` labels of the operand and result elements (spec symbols, not prose)."""
    operand = ctx.op.operands[0].name if ctx.op.operands else "operand"
    result = ctx.op.results[0].name if ctx.op.results else "result"
    where = f"[{', '.join(map(str, idx))}]" if idx else ""
    return operand + where, result + where


def convert_explain(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
                    index: tuple) -> Explanation:
    """The element-wise explanation and the element's bits: how each rounding, truncation,
    wrap or extension on the way to the result type went (``conversion_stages``)."""
    e = elementwise_explain(ctx, inputs, outputs, result, index)
    src, dst = plain_element(ctx.operand_types[0]), plain_element(ctx.result_types[0])
    x = element_at(inputs[0], e.index)
    # a complex value converts part by part; only a real part can take an intermediate step
    s_part, d_part = src.component, dst.component
    real = np.asarray(x).real.reshape(1).copy() if src.is_complex else np.asarray(x).reshape(1)
    with np.errstate(all="ignore"):
        via = [(t, convert_array(real, s_part, t)[0]) for t in conversion_stages(s_part, d_part)]
    e.bits.append(convert_panel(x, outputs[result][e.index], src, dst, _labels(ctx, e.index), via))
    return e


@op("stablehlo.convert", aliases=("ConvertElementType",), verify=_verify_convert, infer=infer_convert,
    family="conversion", provenance=unary_copy_provenance, explain=convert_explain,
    elementwise=True)
def convert(ctx: OpCall, operand: np.ndarray) -> np.ndarray:
    """Element-wise conversion to the result's element type (see the module notes)."""
    check_value(ctx, operand, ctx.operand_types[0], "operand")
    src, dst = plain_element(ctx.operand_types[0]), plain_element(ctx.result_types[0])
    with np.errstate(all="ignore"):
        return np.asarray(convert_array(operand, src, dst), dtype=dst.dtype)


# --- bitcast_convert -------------------------------------------------------------------

def _storage(e: Any) -> ElementType:
    """The spec's ``E``: a quantized element's storage type (its value is the storage bits)."""
    return e.storage if isinstance(e, QuantizedElementType) else e


def bitcast_problem(operand: TensorType, result: TensorType) -> tuple[str, str] | None:
    """The constraint (label, message) a bitcast of ``operand`` to ``result`` breaks, or None."""
    e, e2 = _storage(operand.element), _storage(result.element)
    if e.is_complex != e2.is_complex:
        return "C2", (f"operand element type {e} and result element type {e2} must both be "
                      "complex or both not complex")
    r, b, b2 = operand.rank, e.bits, e2.bits
    shape, rshape = list(operand.shape), list(result.shape)
    if b2 == b:
        if not shapes_compatible(operand.shape, result.shape):
            return "C1", (f"equal bit widths ({b}) need shape(result) = shape(operand), got "
                          f"{rshape} and {shape}")
        return None
    if b2 < b:
        ok = (result.rank == r + 1 and shapes_compatible(operand.shape, result.shape[:r])
              and (result.shape[r] is None or result.shape[r] * b2 == b))
        if not ok:
            return "C1", (f"a {b}-bit operand {e} bitcast to {b2}-bit {e2} needs shape "
                          f"{shape + [b // b2 if b % b2 == 0 else f'{b}/{b2}']}, got {rshape}")
        return None
    ok = (r >= 1 and result.rank == r - 1 and shapes_compatible(operand.shape[:r - 1], result.shape)
          and (operand.shape[r - 1] is None or operand.shape[r - 1] * b == b2))
    if not ok:
        return "C1", (f"a {b}-bit operand {e} bitcast to {b2}-bit {e2} needs an operand shape "
                      f"[..., {b2 // b if b2 % b == 0 else f'{b2}/{b}'}] and the result shape "
                      f"without its last dimension, got operand {shape} and result {rshape}")
    return None


def _verify_bitcast(ctx: OpCall) -> None:
    count_check(ctx, 1)
    operand = tensor_operand(ctx, ctx.operand_types[0], "operand", "I1")
    result = tensor_operand(ctx, ctx.result_types[0], "result")
    problem = bitcast_problem(operand, result)
    if problem is not None:
        raise ctx.error(*problem)


def bitcast_shape(shape: tuple[int, ...], b: int, b2: int) -> tuple[int, ...] | None:
    """(C1) for static shapes: equal widths keep the shape, a narrower result adds a last
    dim of b / b2, a wider one drops the operand's last dim (which must hold b2 / b
    elements); None when the widths do not divide so."""
    if b2 == b:
        return shape
    if b2 < b:
        return (*shape, b // b2) if b % b2 == 0 else None
    return shape[:-1] if shape and shape[-1] * b == b2 else None


def infer_bitcast_convert(attrs: Attrs, types: list[Type]) -> list[Inferred]:
    """The result's shape follows from its element type's bit width (C1), which only the
    declared type gives: a Partial that admits what (C1) and (C2) allow."""
    (operand,) = infer_tensors(types, ("operand",))
    return [Partial(None, None, what=f"a bitcast of {operand} (C1, C2)",
                    check=lambda d: isinstance(d, TensorType) and bitcast_problem(operand, d) is None)]


def _bit_patterns(x: np.ndarray, et: ElementType) -> np.ndarray:
    """Each element's bit pattern as uint64 (upper bits zero); not for complex."""
    if et.is_bool:
        return x.astype(np.uint64)
    if et.is_int:
        w = _int_wide(x, et)
        p = w.view(np.uint64) if w.dtype == np.int64 else w
        return p & np.uint64((1 << et.bits) - 1) if et.bits < 64 else p
    return to_bits(x).astype(np.uint64).reshape(x.shape)  # to_bits makes rank 0 rank 1


def _from_patterns(p: np.ndarray, et: ElementType) -> np.ndarray:
    """Values of type ``et`` with bit patterns ``p`` (uint64 with upper bits zero)."""
    if et.is_bool:
        return p != 0
    if et.is_int:
        if et.is_unsigned:
            return p.astype(et.dtype)
        if et.bits == 64:
            return p.view(np.int64).copy()
        s = p.astype(np.int64)
        return np.where(s >= (1 << (et.bits - 1)), s - (1 << et.bits), s).astype(et.dtype)
    return from_bits(p, et.dtype)


def bitcast_array(x: np.ndarray, src: ElementType, dst: ElementType,
                  result_shape: tuple[int, ...]) -> np.ndarray:
    """Reinterpret the bits of ``x`` as ``dst`` elements (little-endian split / join)."""
    b, b2 = src.bits, dst.bits
    byte_exact = all(t.bits == 8 * t.dtype.itemsize and not t.is_bool for t in (src, dst))
    if byte_exact:  # every element is whole bytes: numpy's little-endian memory view
        raw = np.array(x, order="C").reshape(-1).view(np.uint8)
        if np.little_endian:
            return raw.view(dst.dtype).reshape(result_shape).copy()
        raise UnsupportedError("bitcast_convert needs a little-endian host")  # pragma: no cover
    p = _bit_patterns(np.array(x, order="C"), src)
    if b2 == b:
        out = p
    elif b2 < b:  # split: piece k is bits [k*b2, (k+1)*b2)
        n, mask = b // b2, np.uint64((1 << b2) - 1)
        out = np.stack([(p >> np.uint64(k * b2)) & mask for k in range(n)], axis=-1)
    else:  # join the last dimension, element k at bit k*b
        n = b2 // b
        out = np.zeros(p.shape[:-1], np.uint64)
        for k in range(n):
            out |= p[..., k] << np.uint64(k * b)
    return _from_patterns(out, dst).reshape(result_shape)


def bitcast_provenance(ctx: Any, inputs: list[Any], outputs: list[Any]) -> Provenance:
    """Role ``copy``: a split result element comes from the operand element it is a piece of;
    a joined result element from each of the operand elements it joins (one Link per piece)."""
    oshape, rshape = value_shape(inputs[0]), value_shape(outputs[0])
    if oshape is None or rshape is None or len(oshape) == len(rshape):
        return unary_copy_provenance(ctx, inputs, outputs)
    flat = np.arange(int(np.prod(oshape, dtype=np.int64)), dtype=np.int64).reshape(oshape)
    if len(rshape) == len(oshape) + 1:  # split: every piece along the new last dim shares a source
        links = [Link(0, "copy", np.array(np.broadcast_to(flat[..., None], rshape)))]
    else:  # join: piece k of result element i is operand element (i, k)
        links = [Link(0, "copy", np.array(flat[..., k])) for k in range(oshape[-1])]
    return IndexMapProvenance([rshape], [oshape], [links])


def bitcast_explain(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
                    index: tuple) -> Explanation:
    """The spec's ``bits(result[...]) = bits(operand[...])`` for one result element, with
    the bit patterns, and the bits regrouped into the result type's fields."""
    x, y = inputs[0], outputs[0]
    idx = check_index(value_shape(y), index, "result #0 index")
    src, dst = _storage(ctx.operand_types[0].element), _storage(ctx.result_types[0].element)
    operand, res = ctx.op.operands[0].name, ctx.op.results[0].name

    def at(name: str, i: tuple[Any, ...]) -> str:
        return f"{name}[{', '.join(map(str, i))}]" if i else name

    def hexbits(views: list[Any]) -> list[str]:
        return [f"0x{v.raw:0{(v.width + 3) // 4}X}" for v in views]

    if dst.bits < src.bits:  # split: result[i..., :] holds the bits of operand[i...]
        k, n = idx[-1], src.bits // dst.bits
        elems = [idx[:-1] + (j,) for j in range(n)]
        operand_vals, result_vals = [x[idx[:-1]]], [y[q] for q in elems]
        names = ([at(operand, idx[:-1])], [at(res, q) for q in elems])
        panel = bitcast_panel(operand_vals, result_vals, src, dst, names, chosen=k)
        kind, where = "split", {"operand": names[0][0], "result": at(res, idx[:-1] + (":",))}
    elif dst.bits > src.bits:  # join: result[i...] holds the bits of operand[i..., :]
        n = dst.bits // src.bits
        elems = [idx + (j,) for j in range(n)]
        operand_vals, result_vals = [x[q] for q in elems], [y[idx]]
        names = ([at(operand, q) for q in elems], [at(res, idx)])
        panel = bitcast_panel(operand_vals, result_vals, src, dst, names)
        kind, where = "join", {"operand": at(operand, idx + (":",)), "result": names[1][0]}
    else:
        operand_vals, result_vals = [x[idx]], [y[idx]]
        names = ([at(operand, idx)], [at(res, idx)])
        panel = bitcast_panel(operand_vals, result_vals, src, dst, names)
        kind, where = "same", {"operand": names[0][0], "result": names[1][0]}
    ins = [bit_view(v, src) for v in operand_vals]
    outs = [bit_view(v, dst) for v in result_vals]
    steps = [Step("operand", Msg("conversion.bitcast.operand.formula"), hexbits(ins) if len(ins) > 1
                  else hexbits(ins)[0],
                  substituted=Msg("conversion.bitcast.operand.substituted", operand=where["operand"])),
             Step("result", Msg(f"conversion.bitcast.{kind}.formula"), y[idx],
                  substituted=Msg(f"conversion.bitcast.{kind}.substituted", **where,
                                  bits=" ".join(hexbits(outs))))]
    return Explanation(ctx.op.name, idx, steps, y[idx], [Msg("conversion.bitcast.note.order")], 0,
                       bits=[panel])


@op("stablehlo.bitcast_convert", aliases=("BitcastConvertType",), verify=_verify_bitcast,
    infer=infer_bitcast_convert, family="conversion", provenance=bitcast_provenance,
    explain=bitcast_explain)
def bitcast_convert(ctx: OpCall, operand: np.ndarray) -> np.ndarray:
    """The operand's bits read as the result type; the last dimension splits or joins when
    the element bit widths differ."""
    check_value(ctx, operand, ctx.operand_types[0], "operand")
    src, dst = _storage(ctx.operand_types[0].element), _storage(ctx.result_types[0].element)
    if src.bits == dst.bits:
        shape = operand.shape
    elif dst.bits < src.bits:
        shape = operand.shape + (src.bits // dst.bits,)
    else:
        shape = operand.shape[:-1]
    return np.asarray(bitcast_array(operand, src, dst, shape), dtype=dst.dtype)


# --- complex, real, imag -----------------------------------------------------------------

def _verify_complex(ctx: OpCall) -> None:
    count_check(ctx, 2)
    lhs = tensor_operand(ctx, ctx.operand_types[0], "lhs", "I1")
    rhs = tensor_operand(ctx, ctx.operand_types[1], "rhs", "I2")
    result = tensor_operand(ctx, ctx.result_types[0], "result")
    if lhs.is_quantized or lhs.element.kind != "float" or lhs.dtype not in (_F32_DT, _F64_DT):
        raise ctx.error("I1", f"lhs must be a tensor of type f32 or f64, got {lhs}")
    same = baseline_key(lhs.element) == baseline_key(rhs.element)
    if not (same and shapes_compatible(lhs.shape, rhs.shape)):
        raise ctx.error("C1", f"type(lhs) = {lhs} must equal type(rhs) = {rhs}")
    if not shapes_compatible(result.shape, lhs.shape):
        raise ctx.error("C2", f"shape(result) = {list(result.shape)} must equal "
                              f"shape(lhs) = {list(lhs.shape)}")
    want = element_type("complex<f32>" if lhs.dtype == _F32_DT else "complex<f64>")
    if result.is_quantized or baseline_key(result.element) != baseline_key(want):
        raise ctx.error("C3", f"element_type(result) must be {want} for lhs of type {lhs.element}, "
                              f"got {result.element}")


def infer_complex(attrs: Attrs, types: list[Type]) -> list[Inferred]:
    """complex<E> of lhs's E (C3), of lhs's shape (C2)."""
    lhs, rhs = infer_tensors(types, ("lhs", "rhs"))
    if lhs.is_quantized or lhs.element.kind != "float" or lhs.dtype not in (_F32_DT, _F64_DT):
        raise InferError("I1", f"lhs must be a tensor of type f32 or f64, got {lhs}")
    shape = same_shape([lhs, rhs], ("lhs", "rhs"))
    if baseline_key(lhs.element) != baseline_key(rhs.element):
        raise InferError("C1", f"type(lhs) = {lhs} must equal type(rhs) = {rhs}")
    return [TensorType(shape, element_type(f"complex<{lhs.element}>"))]


@op("stablehlo.complex", aliases=("Complex",), verify=_verify_complex, infer=infer_complex,
    family="conversion", provenance=elementwise_provenance, explain=elementwise_explain,
    elementwise=True)
def complex_(ctx: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """``(lhs, rhs)`` as ``(real, imaginary)`` pairs; the parts keep their exact bits."""
    check_value(ctx, lhs, ctx.operand_types[0], "lhs")
    check_value(ctx, rhs, ctx.operand_types[1], "rhs")
    if lhs.shape != rhs.shape:
        raise ExecutionError(f"{ctx.name}: lhs and rhs have different shapes at run time: "
                             f"{lhs.shape} and {rhs.shape}", ctx.loc)
    out = np.empty(lhs.shape, ctx.result_dtype())
    out.real, out.imag = lhs, rhs
    return out


def _verify_part(ctx: OpCall) -> None:
    count_check(ctx, 1)
    operand = tensor_operand(ctx, ctx.operand_types[0], "operand", "I1")
    result = tensor_operand(ctx, ctx.result_types[0], "result")
    e = operand.element
    if operand.is_quantized or e.kind not in ("float", "complex"):
        raise ctx.error("I1", f"operand must be a tensor of floating-point or complex type, got {operand}")
    if not shapes_compatible(result.shape, operand.shape):
        raise ctx.error("C1", f"shape(result) = {list(result.shape)} must equal "
                              f"shape(operand) = {list(operand.shape)}")
    want = e.component if e.is_complex else e
    if result.is_quantized or baseline_key(result.element) != baseline_key(want):
        raise ctx.error("C2", f"element_type(result) must be {want} for an operand of type {e}, "
                              f"got {result.element}")


def infer_part(attrs: Attrs, types: list[Type]) -> list[Inferred]:
    """The operand's shape (C1); a complex operand's component type, a float operand's own (C2)."""
    (operand,) = infer_tensors(types, ("operand",))
    e = operand.element
    if operand.is_quantized or e.kind not in ("float", "complex"):
        raise InferError("I1", f"operand must be a tensor of floating-point or complex type, got {operand}")
    return [TensorType(operand.shape, e.component if e.is_complex else e)]


@op("stablehlo.real", aliases=("Real",), verify=_verify_part, infer=infer_part, family="conversion",
    provenance=unary_copy_provenance, explain=elementwise_explain, elementwise=True)
def real(ctx: OpCall, operand: np.ndarray) -> np.ndarray:
    """The real part of complex elements; a float operand is returned unchanged."""
    check_value(ctx, operand, ctx.operand_types[0], "operand")
    return operand.real.copy() if operand.dtype.kind == "c" else operand.copy()


@op("stablehlo.imag", aliases=("Imag",), verify=_verify_part, infer=infer_part, family="conversion",
    provenance=unary_copy_provenance, explain=elementwise_explain, elementwise=True)
def imag(ctx: OpCall, operand: np.ndarray) -> np.ndarray:
    """The imaginary part of complex elements; zeros for a float operand."""
    check_value(ctx, operand, ctx.operand_types[0], "operand")
    if operand.dtype.kind == "c":
        return operand.imag.copy()
    if not float_format(operand.dtype).has_zero:
        raise UnsupportedError(f"stablehlo.imag of {ctx.operand_types[0]}: the result is "
                               f"constant(0, {plain_element(ctx.operand_types[0])}), and that "
                               "type has no zero")
    return np.zeros(operand.shape, operand.dtype)


# --- parameter schemas (hlolab.ops.examples) ------------------------------------------------

def _conversion_schemas() -> None:
    from hlolab.ops.examples import (
        Operand,
        OpParts,
        OpSchema,
        dtype_param,
        register_schema,
        shape_param,
        ttype,
    )

    def build(p: dict[str, Any]) -> OpParts:
        # infer leaves the result open (its shape depends on the result's bit width): the
        # schema knows the result element type, so it computes the shape (C1) itself;
        # widths that do not fit give a placeholder scalar and verification names (C1)
        shape = bitcast_shape(p["operand"], element_type(p["dtype"]).bits,
                              element_type(p["result_dtype"]).bits)
        return OpParts([Operand("operand", ttype(p["operand"], p["dtype"]))],
                       [ttype(() if shape is None else shape, p["result_dtype"])])

    # the spec's operand: the f64 whose bits are 0x0123456789ABCDEF
    spec_operand = np.array(0x0123456789ABCDEF, dtype=np.uint64).view(np.float64)
    register_schema(OpSchema("stablehlo.bitcast_convert", (
        shape_param("operand", (3,), "shape of the operand (a wider result joins its last dim)"),
        dtype_param("f32", "element type of the operand"),
        dtype_param("ui8", "element type of the result: its bits are the operand's", "result_dtype"),
    ), {"default": {},
        "spec-example": {"operand": (), "dtype": "f64", "result_dtype": "f16", "index": (0,),
                         "inputs": {"operand": spec_operand}},
        "join": {"operand": (2, 4), "dtype": "ui8", "result_dtype": "f32", "index": (1,)}},
        build, doc="reinterpret the operand's bits as another element type"))


_conversion_schemas()
