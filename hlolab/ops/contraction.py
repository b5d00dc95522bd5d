"""Contractions: ``stablehlo.dot_general`` (XLA ``DotGeneral``), the legacy
``stablehlo.dot`` (XLA ``Dot``), ``stablehlo.convolution`` (XLA ``Conv``,
``ConvWithGeneralPadding``, ``ConvGeneralDilated``) and ``stablehlo.dynamic_conv``.

dot_general follows the spec's pieces: ``lhs_result_dimensions``,
``transposed_lhs`` (batching + result + contracting dims) and so on; the whole
op is one matmul on ``(batch, M, K) @ (batch, K, N)`` views of the transposed
operands. convolution builds ``padded_lhs`` (padding, possibly negative, and
``lhs_dilation`` holes) once, takes every ``lhs_window`` with
``sliding_windows`` (``rhs_dilation`` by strided slicing, ``window_reversal``
by flipping the kernel, which gives the same dot products) and contracts the
windows with the kernel as one matmul per feature/batch group (im2col).

Numerical choices the spec leaves open (DESIGN.md "Numerics"; we match XLA:CPU):

* Floats narrower than f32 (bf16, f16, f8*, ...) are multiplied and summed in
  f32 and rounded once to the result type, as XLA:CPU does. f32 stays f32 (BLAS
  sgemm), f64 and complex compute in their own precision (complex<f32> in f32
  parts); when the result type is wider than the operands (f32 x f32 -> f64)
  the operands are converted to it first (exact) and everything is computed there.
* The summation order: complex dot_general and f64 / complex convolution sum in
  XLA:CPU's own order (the section "XLA:CPU's summation orders": Eigen's kernels,
  XLA's loop nests and rewrites), bit-exact with it; the others in BLAS's order
  (blocked / pairwise). Neither is the row-major schedule that provenance and
  explain show; explain says which order summed the element.
* Integers are exact: products and sums in int64 (uint64 for unsigned types),
  i.e. mod 2^64, then wrapped to the result width (i8 x i8 -> i32 is exact).
  i1 operands: multiply is ``and``, add is ``or`` (the spec's boolean add/mul).
* The result element type may differ from the operands' only within one kind
  (int -> int, float -> float, complex -> complex, i1 -> i1). The spec's
  convolution (C27) asks for equal types, but its own conformance programs
  (and the StableHLO verifier) accept i8 x i8 -> i32, so convolution follows
  dot_general here.
* ``precision_config`` is accepted and has no effect (as on XLA:CPU).
* ``algorithm`` (dot_general) is honoured: operands are rounded to
  ``lhs/rhs_precision_type`` (tf32 = 10 stored significand bits, f32's
  exponent range), products are accumulated in ``accumulation_type`` (f32/f64
  by matmul; narrower types step by step in row-major contracting order, each
  partial sum rounded) and the sum is converted to the result type.
  Decomposed algorithms (component counts or num_primitive_operations > 1,
  e.g. bf16_6x) raise NotImplementedOpError. Integer operands go to float
  through f64 (exact below 2^53). ``allow_imprecise_accumulation`` is accepted;
  we accumulate precisely, which it permits.

Quantized operands and dynamic shapes raise NotImplementedOpError.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from hlolab.errors import ExecutionError, NotImplementedOpError
from hlolab.ir.attrs import ArrayAttr, EnumAttr, StructAttr
from hlolab.ir.structs import CONV_FIELDS
from hlolab.messages import Msg
from hlolab.numerics import round_float64
from hlolab.ops.common import (
    check_value,
    contiguous,
    dims_fit,
    operand_tensor,
    sliding_windows,
    wrap_int,
)
from hlolab.ops.conversion import convert_array
from hlolab.ops.frame import (
    AT_PADDING,
    OPERAND,
    POSITION_KINDS,
    PaddedFrame,
    dilated_size,
    dim_position_kind,
    padded_size,
    position_kind,
)
from hlolab.ops.record import (
    Attrs,
    ErrorFn,
    InferError,
    Inferred,
    Partial,
    attr,
    bools,
    integer,
    ints,
    member,
    pairs,
    raw,
    record,
)
from hlolab.ops.registry import OpCall, op
from hlolab.trace.explain import DimRole, Explanation, Step
from hlolab.trace.fanin import Fan, FanInProvenance, Projection, expand
from hlolab.trace.provenance import FrameMap, check_index, value_shape
from hlolab.types import ElementType, OpaqueType, QuantizedElementType, TensorType, Type, element_type

EXPLAIN_MAX_PAIRS = 256  # explain lists at most this many products (the formatter elides more)


# --- shared helpers --------------------------------------------------------------------

def _is_unique(xs: Sequence[int]) -> bool:
    return len(set(xs)) == len(xs)


def _kind(e: Any) -> str:
    """int / float / complex / bool: the kinds a result type may change within."""
    if not isinstance(e, ElementType):
        return "quant"
    return "int" if e.is_int else e.kind


def _check_precision_config(ctx: OpCall, label: str) -> tuple[str, ...]:
    """(Cn) size(precision_config) = 2 when present; the enums are DEFAULT/HIGH/HIGHEST."""
    a = ctx.attrs.precision_config
    if a is None:
        return ()
    if not all(isinstance(x, EnumAttr) for x in a.items):
        raise ctx.error(label, f"precision_config must be a list of precision enums, got {a}")
    values = tuple(x.value for x in a.items)
    if len(values) != 2:
        raise ctx.error(label, f"size(precision_config) = {len(values)} must be 2: {list(values)}")
    bad = [v for v in values if v not in ("DEFAULT", "HIGH", "HIGHEST")]
    if bad:
        raise ctx.error(label, f"precision_config values must be DEFAULT, HIGH or HIGHEST, got {bad}")
    return values


def _check_result_kind(ctx: OpCall, lhs: TensorType, result: TensorType, label: str) -> None:
    le, re = lhs.element, result.element
    if isinstance(le, QuantizedElementType) or isinstance(re, QuantizedElementType):
        return
    if _kind(le) != _kind(re):
        raise ctx.error(label, f"element_type(result) = {re} must be of the operands' kind "
                        f"({le}): an integer, float, complex or i1 result for such operands")


def _reject_dynamic(ctx: OpCall) -> None:
    for t in (*ctx.operand_types, *ctx.result_types):
        if isinstance(t, TensorType) and not t.is_static:
            raise NotImplementedOpError(ctx.name, ctx.loc, detail="dynamic shapes")


def compute_dtype(lhs: ElementType, result: ElementType) -> np.dtype:
    """The dtype products and sums are computed in (see the module doc)."""
    if lhs.is_bool or lhs.is_int:
        return np.dtype(np.uint64 if lhs.is_unsigned else np.int64)
    if lhs.is_complex or result.is_complex:  # complex<f32> stays complex64 (XLA sums in its parts' f32)
        wide = any(t.is_complex and t.component.bits == 64 for t in (lhs, result))
        return np.dtype(np.complex128 if wide else np.complex64)
    return np.dtype(np.float64 if lhs.bits == 64 or result.bits == 64 else np.float32)


def to_compute(x: np.ndarray, dt: np.dtype) -> np.ndarray:
    """Operand values in the compute dtype (exact: it is at least as wide)."""
    return x if x.dtype == dt else x.astype(dt)


def from_compute(v: np.ndarray, lhs: ElementType, result: ElementType) -> np.ndarray:
    """Sums in the compute dtype -> the result type: integers wrap, floats round once."""
    v = np.asarray(v)
    if lhs.is_bool:
        return v != 0
    if lhs.is_int:
        return wrap_int(v, result)
    if v.dtype == result.dtype:
        return v  # already the result type: nothing to round
    src = element_type("f64" if v.dtype == np.float64 else "f32" if v.dtype == np.float32 else
                       "complex<f64>" if v.dtype == np.complex128 else "complex<f32>")
    with np.errstate(all="ignore"):
        return convert_array(v, src, result)


def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(B, M, K) @ (B, K, N) in the dtype of a and b; booleans are handled by the caller."""
    with np.errstate(all="ignore"):
        if a.shape[-1] == 0:
            return np.zeros(a.shape[:-1] + b.shape[-1:], dtype=a.dtype)
        if a.shape[0] == 1:  # one batch: a plain 2-D matmul (BLAS gemm, no batch loop)
            return np.matmul(a[0], b[0])[None]
        return np.matmul(a, b)


# --- XLA:CPU's summation orders --------------------------------------------------------------
#
# The spec leaves a contraction's summation order to the implementation ("an implementation-
# defined ... binary tree"). Where XLA:CPU (x86-64 jaxlib) sums in an order that can be written
# down, hlolab sums the same way and its results are bit-exact with XLA's; the rule below was read
# from XLA's and Eigen's sources and confirmed by measurement (tests/ops/test_contraction_order.py,
# tests/oracle/differential/test_diff_contraction.py).
#
# complex dot_general. Per batch element, with (M, K) x (K, N) the canonical matmul (lhs free dims
# flattened to M, rhs free dims to N, contracting dims to K, as XLA's DotDecomposer does):
# * K == 1: XLA rewrites the dot to a multiply. LLVM contracts a multiply feeding an add into one
#   fused multiply-add, so re = fma(a.re, b.re, -(a.im*b.im)), im = fma(a.im, b.re, a.re*b.im)
#   (the other product rounded) -- "the fused complex product"; where N == 1 < M (a column times
#   one value) LLVM fuses a.re*b.im instead.
# * M == N == 1 (two vectors): multiply + reduce. K <= 32: one unrolled loop from 0,
#   re += fused re-product; im = fma(a.im, b.re, fma(a.re, b.im, im)). K > 32: the fused complex
#   products summed by XLA's tree reduction: windows of 32 over the K values padded evenly on both
#   sides, each window summed in order from 0, then the window sums the same way. Operands not laid
#   out as (batch, contracting) dims make XLA transpose inside the fusion, and LLVM's choice of the
#   first fused imaginary product follows its code (``vector_dot_flipped``, measured; not guaranteed,
#   ``xla_dot_guaranteed``).
# * M == 1: Eigen's matrix-vector kernel (gemv): each complex product rounded part by part
#   (re = a.re*b.re - a.im*b.im, every product and the difference rounded), added in k order from 0;
#   for K >= 128 in blocks of 16 k (4 when N elements exceed 32 KiB), each block added to the result;
#   complex<f32>'s last row of an odd N runs Eigen's scalar code (C's complex multiply, whose
#   C11 Annex G recovery turns some NaN results of infinite operands into infinities, ``c_multiply``).
# * otherwise Eigen's matrix kernel (gebp, built for AVX without FMA: every product is rounded before
#   it is added) with Eigen's rows = N and columns = M (XLA swaps the operands of a row-major
#   product). The complex kernel keeps four real sums, S1 = sum a.re*b.re, S2 = sum a.re*b.im,
#   S3 = sum a.im*b.re, S4 = sum a.im*b.im, and returns re = S1 - S4, im = S2 + S3. How each sum
#   runs over k depends on the register block the element falls in (``gebp_regions``): rows in
#   blocks of 2 packets (c64: 8 rows, c128: 4) one running sum; then single packets and half
#   packets: for columns in groups of 4, even and odd k in two sums over the first K & ~7 k, added,
#   then the rest; for the last M % 4 columns one sum; c64's last odd row: columns in groups of 4
#   keep four sums (k mod 4) over the first K & ~3 k, combined (s0 + s1) + (s2 + s3), then the rest;
#   the last columns there use the scalar complex product (C's, as gemv's last row). Every block
#   ends with Eigen's res += alpha * sum, alpha = 1: a complex product by (1, 0) (no -0 survives).
#   Above Eigen's cache block
#   (K > 336 c64 / 248 c128 with a 32 KiB L1) the sum runs in k blocks of Eigen's single-threaded
#   blocking, each added to the result; when Eigen's cost model runs a larger product on several
#   threads (it depends on the thread pool) the blocks are 320 / 248 k instead (measured), so there
#   the order is not guaranteed.
#
# f64 and complex convolution: XLA:CPU runs Eigen's convolution for f16 / f32 only; the others are
# its own loop nest: per output element one running sum from 0 over the kernel positions (row-major
# over the kernel spatial dims) and, inside, the group's input features, each product fused into
# the add (f64: fma(x, w, sum); complex: sum + the fused complex product); a position on padding or
# on an lhs_dilation hole is skipped. Where the kernel has more positions than the input, XLA's
# algebraic simplifier swaps the operands and the loop visits the swapped dims backwards
# (``xla_swapped_dims``). Bit-exact where the loop tests no positions; padding, holes and groups
# (XLA turns a group of more than one input feature, and batch groups, into an lhs-dilated spatial
# dim) let LLVM hoist a product out of its fused add now and then (``xla_conv_conditional``, 7 of
# 6946 elements measured); for complex, LLVM fuses either imaginary product depending on the loop's
# shape, so complex convolution is XLA's order but not guaranteed bit-exact.
#
# Other types keep numpy/BLAS (XLA:CPU sums real dots in YNNPACK / oneDNN kernels and f32
# convolutions in Eigen's, whose orders are not modelled).

XLA_TREE_WINDOW = 32  # XLA:CPU's tree reduction window (and the unrolled vector-dot limit)
EIGEN_L1_BYTES = 32 * 1024  # the L1 data cache Eigen's blocking assumes (its default; x86-64 parts)
EIGEN_GEMV_BLOCK_MIN_K = 128  # gemv sums K >= this in blocks of columns
_SUM_CHUNK = 1 << 22  # products materialized at once by _running_sum


def fma(a: Any, b: Any, c: Any) -> np.ndarray:
    """a * b + c rounded once (IEEE-754 fusedMultiplyAdd) on f32 / f64 values, as XLA:CPU's
    contracted multiply-adds compute it. f32: the product is exact in f64, the sum is rounded to
    odd there and then to f32 (one correct rounding: f64 has more than two extra bits). f64:
    Dekker's exact product p + e, Knuth's two-sum of c + p, the small parts' sum rounded to odd,
    one final rounding (Boldo and Melquiond's emulated FMA). Exact for |a*b| in [2^-960, 2^960]
    and |a|, |b| < 2^995; beyond that, and for non-finite values, a*b + c rounded twice."""
    a, b, c = np.broadcast_arrays(np.asarray(a), np.asarray(b), np.asarray(c))
    with np.errstate(all="ignore"):
        if a.dtype == np.float32:
            p = a.astype(np.float64) * b.astype(np.float64)
            s, e = _two_sum(p, c.astype(np.float64))
            return _round_to_odd(s, e).astype(np.float32)
        split = 134217729.0  # 2^27 + 1: Veltkamp's split into 26-bit halves
        p = a * b
        ah = a * split - (a * split - a)
        bh = b * split - (b * split - b)
        al, bl = a - ah, b - bh
        e = ((ah * bh - p) + ah * bl + al * bh) + al * bl  # a*b = p + e exactly
        s, t = _two_sum(c, p)
        u, v = _two_sum(t, e)
        fused = s + _round_to_odd(u, v)
        ap = np.abs(p)
        ok = (np.isfinite(fused) & (ap <= 2.0 ** 960) & (ap >= 2.0 ** -960) & (np.abs(a) < 2.0 ** 995)
              & (np.abs(b) < 2.0 ** 995))
        return np.where(ok, fused, p + c)


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """s = a + b rounded and the exact error: a + b = s + e (Knuth)."""
    s = a + b
    v = s - a
    return s, (a - (s - v)) + (b - v)


def _round_to_odd(s: np.ndarray, e: np.ndarray) -> np.ndarray:
    """The exact s + e (s = round(s + e)) rounded to odd: s when exact or odd, else its
    neighbour towards e."""
    bits = s.view(np.uint64 if s.dtype == np.float64 else np.uint32)
    toward = np.nextafter(s, np.where(e > 0, np.inf, -np.inf).astype(s.dtype))
    return np.where((e != 0) & ((bits & 1) == 0) & np.isfinite(s), toward, s)


def fused_complex_product(ar: np.ndarray, ai: np.ndarray, br: np.ndarray, bi: np.ndarray,
                          fuse_re_im: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """XLA:CPU's complex a * b once LLVM fuses it: (fma(a.re, b.re, -(a.im*b.im)),
    fma(a.im, b.re, a.re*b.im)); ``fuse_re_im``: the imaginary part fuses the other product,
    fma(a.re, b.im, a.im*b.re) (LLVM's choice where b is one value broadcast along a column)."""
    with np.errstate(all="ignore"):
        im = fma(ar, bi, ai * br) if fuse_re_im else fma(ai, br, ar * bi)
        return fma(ar, br, -(ai * bi)), im


def _complex_of(re: np.ndarray, im: np.ndarray, dt: np.dtype) -> np.ndarray:
    out = np.empty(re.shape, dt)
    out.real, out.imag = re, im
    return out


def _running_sum(terms: Any, ks: np.ndarray, carry: np.ndarray) -> np.ndarray:
    """carry + t[ks[0]] + t[ks[1]] + ..., added left to right; ``terms(ks)`` gives the terms of
    some k stacked on a leading axis (np.add.accumulate adds them in order)."""
    step = max(1, _SUM_CHUNK // max(carry.size, 1))
    with np.errstate(all="ignore"):
        for i in range(0, len(ks), step):
            t = terms(ks[i:i + step])
            t[0] = carry + t[0]
            carry = np.add.accumulate(t, axis=0, out=t)[-1].copy()
    return carry


def _outer_terms(x: np.ndarray, y: np.ndarray) -> Any:
    """k -> x[:, :, k] (outer) y[:, k, :] for x (B, m, K), y (B, K, n): terms (c, B, m, n)."""
    def terms(ks: np.ndarray) -> np.ndarray:
        return np.moveaxis(x[:, :, ks], 2, 0)[..., None] * np.moveaxis(y[:, ks, :], 1, 0)[:, :, None, :]
    return terms


# Eigen's register blocking for complex on AVX: complex elements per packet, full and half
_EIGEN_COMPLEX_PACKET = {np.dtype(np.complex64): (4, 2), np.dtype(np.complex128): (2, 1)}
EIGEN_NR = 4  # columns per register block

# how one of gebp's real sums runs over k (see the section comment)
SEQUENTIAL, PAIRS, QUADS, SCALAR = "sequential", "pairs", "quads", "scalar"


def gebp_regions(M: int, N: int, dt: np.dtype) -> list[tuple[slice, slice, str]]:
    """Eigen gebp's blocks of a (M, N) complex product in (columns = m, rows = n), each with the
    pattern of its sums; empty blocks included."""
    lp, hp = _EIGEN_COMPLEX_PACKET[np.dtype(dt)]
    two = N // (2 * lp) * (2 * lp)  # rows in blocks of 2 packets
    one = two + (N - two) // lp * lp  # then single packets
    half = one + (N - one) // hp * hp  # then half packets; c64 may leave one row
    c4 = M // EIGEN_NR * EIGEN_NR
    return [(slice(0, M), slice(0, two), SEQUENTIAL),
            (slice(0, c4), slice(two, half), PAIRS), (slice(c4, M), slice(two, half), SEQUENTIAL),
            (slice(0, c4), slice(half, N), QUADS), (slice(c4, M), slice(half, N), SCALAR)]


def eigen_kc(K: int, M: int, N: int, dt: np.dtype) -> int:
    """Eigen's single-threaded k block (evaluateProductBlockingSizesHeuristic) for a complex
    product, L1 = EIGEN_L1_BYTES; K itself when the product is not blocked."""
    size = np.dtype(dt).itemsize
    mr = 2 * _EIGEN_COMPLEX_PACKET[np.dtype(dt)][0]
    if max(K, M, N) < 48:
        return K
    max_kc = max(((EIGEN_L1_BYTES - mr * EIGEN_NR * size) // (mr * size + EIGEN_NR * size)) & ~7, 1)
    if K <= max_kc:
        return K
    if K % max_kc == 0:
        return max_kc
    return max_kc - 8 * ((max_kc - 1 - K % max_kc) // (8 * (K // max_kc + 1)))


def eigen_kc_threaded(dt: np.dtype) -> int:
    """Eigen's k block when it runs a product on several threads (its cost model decides, by the
    product's size and the thread pool's): 320 complex<f32>, 248 complex<f64> (measured)."""
    size = np.dtype(dt).itemsize
    mr = 2 * _EIGEN_COMPLEX_PACKET[np.dtype(dt)][0]
    k = min((EIGEN_L1_BYTES - mr * EIGEN_NR * size) // (mr * size + EIGEN_NR * size), 320)
    return max(8, k - k % 8)


def _pattern_sum(terms: Any, K: int, pattern: str, zero: np.ndarray) -> np.ndarray:
    ks = np.arange(K)
    if pattern == SEQUENTIAL:
        return _running_sum(terms, ks, zero)
    if pattern == PAIRS:  # even / odd k apart over the loop peeled by 8
        pk = K & ~7
        both = _running_sum(terms, ks[0:pk:2], zero) + _running_sum(terms, ks[1:pk:2], zero)
        return _running_sum(terms, ks[pk:], both)
    e4 = K // 4 * 4  # QUADS: k mod 4 apart
    s = [_running_sum(terms, ks[j:e4:4], zero) for j in range(4)]
    return _running_sum(terms, ks[e4:], (s[0] + s[1]) + (s[2] + s[3]))


def _store(acc_re: np.ndarray, acc_im: np.ndarray, tr: np.ndarray,
           ti: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigen's ``res += alpha * t`` with alpha = 1: a complex product by (1, 0), then the add."""
    one, zero = tr.dtype.type(1), tr.dtype.type(0)
    with np.errstate(all="ignore"):
        return acc_re + (tr * one - ti * zero), acc_im + (tr * zero + ti * one)


def c_multiply(xr: Any, xi: Any, yr: Any, yi: Any) -> tuple[np.ndarray, np.ndarray]:
    """x * y as C's complex multiply (std::complex, clang's __mulsc3 / __muldc3): (x.re*y.re -
    x.im*y.im, x.re*y.im + x.im*y.re), every product rounded; where both parts come out NaN while
    an operand or a product is infinite, recomputed as C11 Annex G says (an infinite result)."""
    xr, xi, yr, yi = np.broadcast_arrays(*(np.asarray(v) for v in (xr, xi, yr, yi)))
    with np.errstate(all="ignore"):
        ac, bd, ad, bc = xr * yr, xi * yi, xr * yi, xi * yr
        re, im = ac - bd, ad + bc
        bad = np.isnan(re) & np.isnan(im)
        if not bad.any():
            return re, im
        a, b, c, d = xr.copy(), xi.copy(), yr.copy(), yi.copy()

        def box(v: np.ndarray, where: np.ndarray) -> np.ndarray:  # +-1 for an infinity, else +-0
            return np.where(where, np.copysign(np.where(np.isinf(v), 1, 0).astype(v.dtype), v), v)

        def unnan(v: np.ndarray, where: np.ndarray) -> np.ndarray:  # a NaN becomes +-0
            return np.where(where & np.isnan(v), np.copysign(np.zeros_like(v), v), v)

        first = bad & (np.isinf(a) | np.isinf(b))
        a, b, c, d = box(a, first), box(b, first), unnan(c, first), unnan(d, first)
        second = bad & (np.isinf(c) | np.isinf(d))
        c, d, a, b = box(c, second), box(d, second), unnan(a, second), unnan(b, second)
        third = bad & ~first & ~second & (np.isinf(ac) | np.isinf(bd) | np.isinf(ad) | np.isinf(bc))
        a, b, c, d = (unnan(v, third) for v in (a, b, c, d))
        again = first | second | third
        inf = re.dtype.type(np.inf)
        return (np.where(again, inf * (a * c - b * d), re), np.where(again, inf * (a * d + b * c), im))


def _scalar_terms(xr: np.ndarray, xi: np.ndarray, yr: np.ndarray, yi: np.ndarray) -> Any:
    """k -> the complex outer product of x[:, :, k] and y[:, k, :] as Eigen's scalar path computes
    it (y's element times x's, C's complex multiply), re and im stacked: (c, 2, B, m, n)."""
    def terms(ks: np.ndarray) -> np.ndarray:
        xs = [np.moveaxis(v[:, :, ks], 2, 0)[..., None] for v in (xr, xi)]
        ys = [np.moveaxis(v[:, ks, :], 1, 0)[:, :, None, :] for v in (yr, yi)]
        return np.stack(c_multiply(ys[0], ys[1], xs[0], xs[1]), axis=1)
    return terms


def _store_scalar(acc_re: np.ndarray, acc_im: np.ndarray, tr: np.ndarray,
                  ti: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigen's scalar ``res += alpha * t`` with alpha = 1 (C's complex multiply), then the add."""
    one, zero = (np.full_like(tr, v) for v in (1, 0))
    pr, pi = c_multiply(one, zero, tr, ti)
    with np.errstate(all="ignore"):
        return acc_re + pr, acc_im + pi


def _gebp(ar: np.ndarray, ai: np.ndarray, br: np.ndarray, bi: np.ndarray,
          dt: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    B, M, K = ar.shape
    N = br.shape[2]
    re = np.zeros((B, M, N), ar.dtype)
    im = np.zeros((B, M, N), ar.dtype)
    kc = eigen_kc(K, M, N, dt)
    for k0 in range(0, K, kc):
        kk = slice(k0, min(k0 + kc, K))
        for ms, ns, pattern in gebp_regions(M, N, dt):
            if ms.start >= ms.stop or ns.start >= ns.stop:
                continue
            xr, xi = ar[:, ms, kk], ai[:, ms, kk]
            yr, yi = br[:, kk, ns], bi[:, kk, ns]
            zero = np.zeros((B, ms.stop - ms.start, ns.stop - ns.start), ar.dtype)
            n = kk.stop - kk.start
            if pattern == SCALAR:
                tr, ti = _running_sum(_scalar_terms(xr, xi, yr, yi), np.arange(n),
                                      np.zeros((2,) + zero.shape, zero.dtype))
                re[:, ms, ns], im[:, ms, ns] = _store_scalar(re[:, ms, ns], im[:, ms, ns], tr, ti)
                continue
            else:
                s1, s2, s3, s4 = (_pattern_sum(_outer_terms(p, q), n, pattern, zero)
                                  for p, q in ((xr, yr), (xr, yi), (xi, yr), (xi, yi)))
                with np.errstate(all="ignore"):
                    tr, ti = s1 - s4, s2 + s3
            re[:, ms, ns], im[:, ms, ns] = _store(re[:, ms, ns], im[:, ms, ns], tr, ti)
    return re, im


def gemv_block(K: int, N: int, dt: np.dtype) -> int:
    """Eigen gemv's k block: all of K below EIGEN_GEMV_BLOCK_MIN_K, else 16 (4 when a column of
    N elements does not fit in L1)."""
    if K < EIGEN_GEMV_BLOCK_MIN_K:
        return max(K, 1)
    return 16 if N * np.dtype(dt).itemsize < EIGEN_L1_BYTES else 4


def _gemv(ar: np.ndarray, ai: np.ndarray, br: np.ndarray, bi: np.ndarray,
          dt: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """a (B, 1, K) times b (B, K, N): complex products rounded part by part, added in k order;
    complex<f32>'s last row of an odd N is Eigen's scalar path (C's complex multiply)."""
    B, _, K = ar.shape
    N = br.shape[2]
    xr, xi = ar[:, 0, :], ai[:, 0, :]

    def packet_terms(ks: np.ndarray) -> np.ndarray:  # (c, 2, B, N)
        a_re, a_im = xr[:, ks, None], xi[:, ks, None]
        b_re, b_im = br[:, ks, :], bi[:, ks, :]
        with np.errstate(all="ignore"):
            parts = (b_re * a_re - b_im * a_im, b_re * a_im + b_im * a_re)
        return np.moveaxis(np.stack(parts, axis=0), 2, 0)

    def scalar_terms(ks: np.ndarray) -> np.ndarray:  # the last row only: (c, 2, B)
        parts = c_multiply(br[:, ks, -1], bi[:, ks, -1], xr[:, ks], xi[:, ks])
        return np.moveaxis(np.stack(parts, axis=0), 2, 0)

    # the packets cover rows in 2s at least; complex<f32>'s odd last row takes the scalar path
    scalar_row = np.dtype(dt) == np.dtype(np.complex64) and N % 2 == 1
    re = np.zeros((B, N), ar.dtype)
    im = np.zeros((B, N), ar.dtype)
    block = gemv_block(K, N, dt)
    for k0 in range(0, K, block):
        ks = np.arange(k0, min(k0 + block, K))
        last = re[:, -1].copy(), im[:, -1].copy()
        cr, ci = _running_sum(packet_terms, ks, np.zeros((2, B, N), ar.dtype))
        re, im = _store(re, im, cr, ci)
        if scalar_row:
            sr, si = _running_sum(scalar_terms, ks, np.zeros((2, B), ar.dtype))
            re[:, -1], im[:, -1] = _store_scalar(*last, sr, si)
    return re[:, None, :], im[:, None, :]


def tree_sum(v: np.ndarray) -> np.ndarray:
    """XLA:CPU's reduction of the last axis: in order from 0 up to XLA_TREE_WINDOW values, else
    windows of that many over the values padded evenly on both sides (padding adds +0, which a
    sum from +0 never notices), each summed in order, then the window sums the same way."""
    w = XLA_TREE_WINDOW
    with np.errstate(all="ignore"):
        while v.shape[-1] > w:
            n = v.shape[-1]
            windows = -(-n // w)
            low = (windows * w - n) // 2
            padded = np.zeros(v.shape[:-1] + (windows * w,), v.dtype)
            padded[..., low:low + n] = v
            padded = padded.reshape(v.shape[:-1] + (windows, w))
            s = np.zeros(padded.shape[:-1], v.dtype)
            for j in range(w):
                s = s + padded[..., j]
            v = s
        s = np.zeros(v.shape[:-1], v.dtype)
        for j in range(v.shape[-1]):
            s = s + v[..., j]
    return s


def _vector_dot(ar: np.ndarray, ai: np.ndarray, br: np.ndarray, bi: np.ndarray,
                flipped: bool) -> tuple[np.ndarray, np.ndarray]:
    """a (B, 1, K) times b (B, K, 1): XLA's multiply + reduce (see the section comment);
    ``flipped``: LLVM fuses the imaginary part's products the other way round (vector_dot_flipped)."""
    xr, xi, yr, yi = ar[:, 0, :], ai[:, 0, :], br[:, :, 0], bi[:, :, 0]
    K = xr.shape[1]
    if K > XLA_TREE_WINDOW:
        pr, pi = fused_complex_product(xr, xi, yr, yi, fuse_re_im=flipped)
        re, im = tree_sum(pr), tree_sum(pi)
    else:  # one unrolled loop: the products fused into the running sums
        re = np.zeros(xr.shape[:1], xr.dtype)
        im = np.zeros(xr.shape[:1], xr.dtype)
        first, second = ((xi, yr), (xr, yi)) if flipped else ((xr, yi), (xi, yr))
        with np.errstate(all="ignore"):
            for k in range(K):
                re = re + fma(xr[:, k], yr[:, k], -(xi[:, k] * yi[:, k]))
                im = fma(second[0][:, k], second[1][:, k], fma(first[0][:, k], first[1][:, k], im))
    return re[:, None, None], im[:, None, None]


def _in_order(shape: Sequence[int], batch: Sequence[int], contracting: Sequence[int]) -> bool:
    """An operand laid out as (batch, contracting) dims, size-1 dims aside (no transpose needed)."""
    want = [x for x in (*batch, *contracting) if shape[x] != 1]
    return want == sorted(want)


def vector_dot_flipped(lhs_shape: Sequence[int], rhs_shape: Sequence[int], d: DotGeneralAttrs) -> bool:
    """Whether XLA's multiply + reduce for a dot of two vectors (M = N = 1) fuses the imaginary part
    the other way round: measured where the lhs is laid out as (batch, contracting) and the rhs is
    not (its multiply operand is then a transposed copy). Size-1 dims do not count."""
    return (_in_order(lhs_shape, d.lhs_batching_dimensions, d.lhs_contracting_dimensions)
            and not _in_order(rhs_shape, d.rhs_batching_dimensions, d.rhs_contracting_dimensions))


def xla_dot_guaranteed(lhs_shape: Sequence[int], rhs_shape: Sequence[int], d: DotGeneralAttrs,
                       dt: np.dtype) -> bool:
    """Whether hlolab's complex dot_general is bit-exact with XLA:CPU by the rule (section comment),
    not only by measurement: all but a k-blocked Eigen product (XLA may run it on several threads,
    blocked differently) and a dot of two vectors whose operands are not laid out as (batch,
    contracting) dims: XLA then transposes or reorders the terms in its multiply + reduce, and
    LLVM's choice of fused imaginary products depends on how XLA fuses that (hlolab applies
    vector_dot_flipped, exact in ~90 % of random layouts measured)."""
    lr = d.lhs_result_dimensions(len(lhs_shape))
    rr = d.rhs_result_dimensions(len(rhs_shape))
    B, M, K, N = (int(np.prod([shape[x] for x in dims], dtype=np.int64)) for shape, dims in (
        (lhs_shape, d.lhs_batching_dimensions), (lhs_shape, lr), (lhs_shape, d.lhs_contracting_dimensions),
        (rhs_shape, rr)))
    path = xla_dot_path(B, M, K, N)
    if path == "gebp":
        return eigen_kc(K, M, N, dt) == K
    if path == "vector":
        return (_in_order(lhs_shape, d.lhs_batching_dimensions, d.lhs_contracting_dimensions)
                and _in_order(rhs_shape, d.rhs_batching_dimensions, d.rhs_contracting_dimensions))
    return True


def xla_dot_path(B: int, M: int, K: int, N: int) -> str:
    """Which of XLA:CPU's implementations computes a complex (B, M, K) x (B, K, N) product:
    "empty", "multiply" (K = 1), "vector" (M = N = 1), "gemv" (M = 1) or "gebp"."""
    if B * M * N == 0 or K == 0:
        return "empty"
    if K == 1:
        return "multiply"
    if M == 1 and N == 1:
        return "vector"
    return "gemv" if M == 1 else "gebp"


def xla_complex_matmul(a: np.ndarray, b: np.ndarray, flipped: bool = False) -> np.ndarray:
    """(B, M, K) @ (B, K, N) of complex values summed in XLA:CPU's order (section comment);
    ``flipped``: vector_dot_flipped of the dot_general."""
    dt = a.dtype
    B, M, K = a.shape
    N = b.shape[2]
    path = xla_dot_path(B, M, K, N)
    if path == "empty":
        return np.zeros((B, M, N), dt)
    ar, ai = contiguous(a.real), contiguous(a.imag)
    br, bi = contiguous(b.real), contiguous(b.imag)
    if path == "multiply":  # (B, M, 1) * (B, 1, N); a column times one value fuses a.re*b.im
        re, im = fused_complex_product(ar, ai, br, bi, fuse_re_im=N == 1 and M > 1)
    elif path == "vector":
        re, im = _vector_dot(ar, ai, br, bi, flipped)
    elif path == "gemv":
        re, im = _gemv(ar, ai, br, bi, dt)
    else:
        re, im = _gebp(ar, ai, br, bi, dt)
    return _complex_of(re, im, dt)


def xla_conv_loop(dt: np.dtype) -> bool:
    """XLA:CPU evaluates a convolution computed in ``dt`` with its own loop nest (f64, complex)."""
    return np.dtype(dt) in (np.dtype(np.float64), np.dtype(np.complex64), np.dtype(np.complex128))


def _idx(xs: Sequence[Any]) -> str:
    return ", ".join(str(int(x)) for x in xs)


class _FanIn(FanInProvenance):
    """FanInProvenance that also answers the set forms for a rank-0 result
    (``np.unravel_index(part, ())`` fails in the base class's chunking)."""

    def _chunks(self, result: int, flat_results: np.ndarray):
        if self.result_shapes[result] == () and flat_results.size:
            yield flat_results[:1], self._evaluate(result, ())
            return
        yield from super()._chunks(result, flat_results)


# --- dot_general: attributes, result type and verification -----------------------------

def _dot_dn() -> Any:
    return attr(member("dot_dimension_numbers", "stablehlo.dot"))


def _precision_config() -> Any:
    return attr(raw("precision_config", ArrayAttr, what="a list of precision enums"), default=None)


@record
class DotGeneralAttrs(Attrs):
    """dot_general's attributes: the fields of ``#stablehlo.dot<...>`` (the spec's names),
    ``precision_config`` and ``algorithm`` (``#stablehlo.dot_algorithm<...>``), kept as written."""

    lhs_batching_dimensions: tuple[int, ...] = _dot_dn()
    rhs_batching_dimensions: tuple[int, ...] = _dot_dn()
    lhs_contracting_dimensions: tuple[int, ...] = _dot_dn()
    rhs_contracting_dimensions: tuple[int, ...] = _dot_dn()
    precision_config: ArrayAttr | None = _precision_config()
    algorithm: StructAttr | None = attr(raw("algorithm", StructAttr, what="a #stablehlo.dot_algorithm"),
                                        default=None)

    def lhs_result_dimensions(self, rank: int) -> list[int]:
        return [d for d in range(rank) if d not in self.lhs_batching_dimensions
                and d not in self.lhs_contracting_dimensions]

    def rhs_result_dimensions(self, rank: int) -> list[int]:
        return [d for d in range(rank) if d not in self.rhs_batching_dimensions
                and d not in self.rhs_contracting_dimensions]


@record
class DotAttrs(Attrs):
    """The legacy dot's attributes: only ``precision_config``."""

    precision_config: ArrayAttr | None = _precision_config()


def legacy_dot_dims(rec: DotAttrs, lhs_rank: int) -> DotGeneralAttrs:
    """The legacy dot as a dot_general: lhs's last dim contracted with rhs's first."""
    return DotGeneralAttrs(lhs_batching_dimensions=(), rhs_batching_dimensions=(),
                           lhs_contracting_dimensions=(lhs_rank - 1,), rhs_contracting_dimensions=(0,),
                           precision_config=rec.precision_config)


def dot_dims(ctx: OpCall) -> DotGeneralAttrs:
    """The dimension numbers of a dot_general, or of a legacy dot (from its lhs's rank)."""
    rec = ctx.attrs
    if isinstance(rec, DotGeneralAttrs):
        return rec
    t = ctx.operand_types[0]
    return legacy_dot_dims(rec, t.rank if isinstance(t, TensorType) else 1)


@dataclass(frozen=True)
class DotAlgorithm:
    lhs_precision_type: Any
    rhs_precision_type: Any
    accumulation_type: Any
    lhs_component_count: int
    rhs_component_count: int
    num_primitive_operations: int
    allow_imprecise_accumulation: bool

    def __str__(self) -> str:
        return (f"<{self.lhs_precision_type} x {self.rhs_precision_type} -> "
                f"{self.accumulation_type}, components {self.lhs_component_count}/"
                f"{self.rhs_component_count}, {self.num_primitive_operations} primitive op(s)"
                f"{', imprecise accumulation allowed' if self.allow_imprecise_accumulation else ''}>")


@lru_cache(maxsize=256)
def dot_algorithm(rec: DotGeneralAttrs | DotAttrs) -> DotAlgorithm | None:
    """The ``algorithm`` attribute, or None when absent (or the empty algorithm)."""
    a = getattr(rec, "algorithm", None)  # the legacy dot has none
    if a is None:
        return None
    alg = DotAlgorithm(*(a.get(n) for n in (
        "lhs_precision_type", "rhs_precision_type", "accumulation_type", "lhs_component_count",
        "rhs_component_count", "num_primitive_operations", "allow_imprecise_accumulation")))
    if all(getattr(alg, f) is None for f in alg.__dataclass_fields__):
        return None  # is_empty_algorithm
    return alg


def _float_type_name(t: Any) -> str | None:
    """The name of a FloatType or tf32 (the precision types), else None."""
    if isinstance(t, OpaqueType) and t.text == "tf32":
        return "tf32"
    if isinstance(t, ElementType) and t.is_float:
        return t.name
    return None


def dot_result_shape(err: ErrorFn, lhs: TensorType, rhs: TensorType, d: DotGeneralAttrs,
                     legacy: bool = False) -> list[int | None]:
    """(C1-C10) on the dimension numbers, then the (C12) shape: dim(lhs, lhs_batching_dimensions)
    + dim(lhs, lhs_result_dimensions) + dim(rhs, rhs_result_dimensions); ``err(label, message)``
    builds the error (a VerificationError, or an InferError)."""
    lb, rb = d.lhs_batching_dimensions, d.rhs_batching_dimensions
    lc, rc = d.lhs_contracting_dimensions, d.rhs_contracting_dimensions
    if len(lb) != len(rb):
        raise err("C1", f"size(lhs_batching_dimensions) = {len(lb)} must equal "
                  f"size(rhs_batching_dimensions) = {len(rb)}")
    if len(lc) != len(rc):
        raise err("C2", f"size(lhs_contracting_dimensions) = {len(lc)} must equal "
                  f"size(rhs_contracting_dimensions) = {len(rc)}")
    if not _is_unique(lb + lc):
        raise err("C3", f"lhs_batching_dimensions + lhs_contracting_dimensions = "
                  f"{list(lb + lc)} must be unique")
    if not _is_unique(rb + rc):
        raise err("C4", f"rhs_batching_dimensions + rhs_contracting_dimensions = "
                  f"{list(rb + rc)} must be unique")
    for label, name, dims, t in (("C5", "lhs_batching_dimensions", lb, lhs),
                                 ("C6", "lhs_contracting_dimensions", lc, lhs),
                                 ("C7", "rhs_batching_dimensions", rb, rhs),
                                 ("C8", "rhs_contracting_dimensions", rc, rhs)):
        if any(not 0 <= x < t.rank for x in dims):
            raise err(label, f"{name} = {list(dims)} must be in [0, {t.rank}) (rank of {t})")
    a, b = [lhs.shape[x] for x in lb], [rhs.shape[x] for x in rb]
    if not all(dims_fit(x, y) for x, y in zip(a, b, strict=True)):
        raise err("C9", f"dim(lhs, lhs_batching_dimensions...) = {a} must equal "
                  f"dim(rhs, rhs_batching_dimensions...) = {b}")
    a, b = [lhs.shape[x] for x in lc], [rhs.shape[x] for x in rc]
    if not all(dims_fit(x, y) for x, y in zip(a, b, strict=True)):
        raise err("C10" if not legacy else None,
                  f"dim(lhs, lhs_contracting_dimensions...) = {a} must equal "
                  f"dim(rhs, rhs_contracting_dimensions...) = {b}")
    # a dynamic batching dim takes the other side's size when that one is static
    batch = [x if x is not None else rhs.shape[y] for x, y in zip([lhs.shape[x] for x in lb], rb,
                                                                  strict=True)]
    return (batch + [lhs.shape[x] for x in d.lhs_result_dimensions(lhs.rank)]
            + [rhs.shape[x] for x in d.rhs_result_dimensions(rhs.rank)])


def _operand_tensors(operand_types: Sequence[Any], n: int) -> list[TensorType]:
    if len(operand_types) != n:
        raise InferError(None, f"takes {n} operands, got {len(operand_types)}")
    for i, t in enumerate(operand_types):
        if not isinstance(t, TensorType):
            raise InferError(f"I{i + 1}", f"operand #{i} must be a tensor, got {t}")
    return list(operand_types)


def _check_legacy_ranks(err: ErrorFn, lhs: TensorType, rhs: TensorType) -> None:
    if lhs.rank not in (1, 2) or rhs.rank not in (1, 2):
        raise err(None, f"dot takes rank-1 or rank-2 operands, got {lhs} and {rhs}")


def infer_dot_general(rec: DotGeneralAttrs, operand_types: list[Type]) -> list[Inferred]:
    """The (C12) shape; the element type is the declared result's (it may differ from the
    operands' within one kind, e.g. i8 x i8 -> i32, and quantized results have their own)."""
    lhs, rhs = _operand_tensors(operand_types, 2)
    return [Partial(tuple(dot_result_shape(InferError, lhs, rhs, rec)))]


def infer_dot(rec: DotAttrs, operand_types: list[Type]) -> list[Inferred]:
    """dot_general's shape with lhs's last dim contracted with rhs's first."""
    lhs, rhs = _operand_tensors(operand_types, 2)
    _check_legacy_ranks(InferError, lhs, rhs)
    d = legacy_dot_dims(rec, lhs.rank)
    return [Partial(tuple(dot_result_shape(InferError, lhs, rhs, d, legacy=True)))]


def _verify_dot_general(ctx: OpCall) -> None:
    legacy = ctx.name == "stablehlo.dot"
    if len(ctx.operand_types) != 2 or len(ctx.result_types) != 1:
        raise ctx.error(None, f"{ctx.name} takes 2 operands and has 1 result, got "
                        f"{len(ctx.operand_types)} and {len(ctx.result_types)}")
    lhs = operand_tensor(ctx, 0, "I1", "lhs")
    rhs = operand_tensor(ctx, 1, "I2", "rhs")
    res = ctx.result_tensor()
    if legacy:
        _check_legacy_ranks(ctx.error, lhs, rhs)
    d = dot_dims(ctx)
    rc = d.rhs_contracting_dimensions
    want = dot_result_shape(ctx.error, lhs, rhs, d, legacy)
    precision = _check_precision_config(ctx, "C11")
    if res.rank != len(want) or not all(dims_fit(x, y) for x, y in zip(res.shape, want, strict=True)):
        raise ctx.error("C12", f"shape(result) = {list(res.shape)} must be dim(lhs, "
                        f"lhs_batching_dimensions) + dim(lhs, lhs_result_dimensions) + "
                        f"dim(rhs, rhs_result_dimensions) = {want}")
    _verify_element_types(ctx, lhs, rhs, res, quantized_labels=("C13", "C14", "C17", "C18",
                                                                "C19", "C20"))
    if any(isinstance(t.element, QuantizedElementType) for t in (lhs, rhs, res)):
        q = rhs.element
        if isinstance(q, QuantizedElementType):
            if any(z != 0 for z in q.zero_points):
                raise ctx.error("C15", f"zero_points(rhs) = {list(q.zero_points)} must be 0")
            if q.is_per_axis and q.axis in rc:
                raise ctx.error("C16", f"quantization_dimension(rhs) = {q.axis} must not be in "
                                f"rhs_contracting_dimensions = {list(rc)}")
    else:
        _check_result_kind(ctx, lhs, res, "C13")
    alg = dot_algorithm(ctx.attrs)
    if alg is not None:
        if any(p != "DEFAULT" for p in precision):
            raise ctx.error("C21", f"with an algorithm, precision_config must be DEFAULT, got "
                            f"{list(precision)}")
        for label, name in (("C22", "lhs_component_count"), ("C23", "rhs_component_count"),
                            ("C24", "num_primitive_operations")):
            v = getattr(alg, name)
            if not isinstance(v, int) or v <= 0:
                raise ctx.error(label, f"{name} = {v} must be > 0")
        for name in ("lhs_precision_type", "rhs_precision_type", "accumulation_type"):
            if _float_type_name(getattr(alg, name)) is None:
                raise ctx.error("I8", f"{name} = {getattr(alg, name)} must be a FloatType or tf32")


def _verify_element_types(ctx: OpCall, lhs: TensorType, rhs: TensorType, res: TensorType,
                          quantized_labels: tuple[str, ...]) -> None:
    """dot_general (C13-C14, C17-C18, C20) / convolution (C27-C28, C31-C32, C34)."""
    same, is_q, storage, expressed, per_tensor, hybrid = quantized_labels
    le, re_, oe = lhs.element, rhs.element, res.element
    ql, qr, qo = (isinstance(e, QuantizedElementType) for e in (le, re_, oe))
    if not (ql or qr or qo):
        if le != re_:
            raise ctx.error(same, f"element_type(lhs) = {le} must equal element_type(rhs) = {re_}")
        return
    if ql != (qo and qr):
        raise ctx.error(is_q, f"is_quantized(lhs) = is_quantized(result) and is_quantized(rhs) "
                        f"does not hold: lhs {le}, rhs {re_}, result {oe}")
    if ql:
        assert isinstance(le, QuantizedElementType) and isinstance(re_, QuantizedElementType)
        if le.storage != re_.storage:
            raise ctx.error(storage, f"storage_type(lhs) = {le.storage} must equal "
                            f"storage_type(rhs) = {re_.storage}")
        exp = oe.expressed if isinstance(oe, QuantizedElementType) else oe
        if not (le.expressed == re_.expressed == exp):
            raise ctx.error(expressed, f"expressed_type(lhs) = {le.expressed}, expressed_type(rhs)"
                            f" = {re_.expressed} and expressed_type(result) = {exp} must be equal")
        if not re_.is_per_axis and isinstance(oe, QuantizedElementType) and oe.is_per_axis:
            raise ctx.error(per_tensor, f"rhs is per-tensor quantized, so the result must be too, "
                            f"got {oe}")
    else:
        exp = re_.expressed if isinstance(re_, QuantizedElementType) else re_
        if not (le == exp == oe):
            raise ctx.error(hybrid, f"element_type(lhs) = {le} = expressed_type(rhs) = {exp} = "
                            f"element_type(result) = {oe} does not hold")


# --- dot_general: evaluation -------------------------------------------------------------

def _operand_elements(ctx: OpCall) -> tuple[ElementType, ElementType]:
    lt, rt = ctx.operand_types[0], ctx.result_types[0]
    assert isinstance(lt, TensorType) and isinstance(rt, TensorType)
    assert isinstance(lt.element, ElementType) and isinstance(rt.element, ElementType)
    return lt.element, rt.element


def _bmk(lhs: np.ndarray, rhs: np.ndarray,
         d: DotGeneralAttrs) -> tuple[np.ndarray, np.ndarray, tuple[int, ...]]:
    """transposed_lhs as (B, M, K), transposed_rhs as (B, K, N), and the result shape."""
    lr = d.lhs_result_dimensions(lhs.ndim)
    rr = d.rhs_result_dimensions(rhs.ndim)
    lb, rb = d.lhs_batching_dimensions, d.rhs_batching_dimensions
    lc, rc = d.lhs_contracting_dimensions, d.rhs_contracting_dimensions
    bs = [lhs.shape[x] for x in lb]
    ms = [lhs.shape[x] for x in lr]
    ks = [lhs.shape[x] for x in lc]
    ns = [rhs.shape[x] for x in rr]
    B, M, K, N = (int(np.prod(s, dtype=np.int64)) for s in (bs, ms, ks, ns))
    a = lhs.transpose(list(lb) + lr + list(lc)).reshape(B, M, K)
    b = rhs.transpose(list(rb) + list(rc) + rr).reshape(B, K, N)
    return a, b, tuple(bs + ms + ns)


def _round_tf32(x: np.ndarray) -> np.ndarray:
    """Values (float64) rounded to tf32: 11 significand bits, f32's exponent range,
    nearest-even; beyond tf32's largest finite value -> inf. Result as float64."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        _, e = np.frexp(x)  # |x| = m * 2^e, m in [0.5, 1)
        quantum = np.ldexp(1.0, np.maximum(e, -125) - 11)  # f32's min normal is 2^-126 = 0.5*2^-125
        r = np.rint(x / quantum) * quantum  # both steps exact: quantum is a power of two
        big = (2.0 - 2.0 ** -10) * 2.0 ** 127
        r = np.where(np.abs(r) > big, np.copysign(np.inf, x), r)
        return np.where(np.isfinite(x), r, x)


def _round_to(x: np.ndarray, name: str) -> np.ndarray:
    """float64 values rounded once to precision type ``name``, returned as float64."""
    if name == "tf32":
        return _round_tf32(x)
    if name == "f64":
        return x
    with np.errstate(all="ignore"):
        return round_float64(x, element_type(name).dtype).astype(np.float64)


def _algorithm_dot(ctx: OpCall, alg: DotAlgorithm, a: np.ndarray, b: np.ndarray,
                   le: ElementType, oe: ElementType) -> np.ndarray:
    """(B, M, N) sums following ``algorithm`` (see the module doc), in the result type."""
    if (alg.lhs_component_count, alg.rhs_component_count, alg.num_primitive_operations) != (1, 1, 1):
        raise NotImplementedOpError(ctx.name, ctx.loc, detail=f"dot algorithm {alg}: decomposed "
                                    "(multi-component) algorithms are not supported")
    if le.is_complex or le.is_bool:
        raise NotImplementedOpError(ctx.name, ctx.loc, detail=f"dot algorithm {alg} on {le} operands")
    lp, rp = _float_type_name(alg.lhs_precision_type), _float_type_name(alg.rhs_precision_type)
    acc = _float_type_name(alg.accumulation_type)
    assert lp and rp and acc
    with np.errstate(all="ignore"):
        a64 = _round_to(a.astype(np.float64), lp)
        b64 = _round_to(b.astype(np.float64), rp)
    if acc in ("f32", "f64"):
        if acc == "f32" and "f64" in (lp, rp):
            raise NotImplementedOpError(ctx.name, ctx.loc, detail=f"dot algorithm {alg}: f64 "
                                        "operands accumulated in f32")
        dt = np.float32 if acc == "f32" else np.float64
        s = matmul(a64.astype(dt), b64.astype(dt))  # exact conversions: rounded values fit
    else:  # a narrow accumulator: every partial sum rounded, row-major contracting order
        s = np.zeros((a.shape[0], a.shape[1], b.shape[2]), dtype=np.float64)
        with np.errstate(all="ignore"):
            for k in range(a.shape[2]):
                s = _round_to(s + a64[:, :, k, None] * b64[:, None, k, :], acc)
    v = np.asarray(s)
    src = element_type("f32" if v.dtype == np.float32 else "f64")
    with np.errstate(all="ignore"):
        return convert_array(v, src, oe)


def dot_general_values(ctx: OpCall, lhs: np.ndarray, rhs: np.ndarray, d: DotGeneralAttrs,
                       le: ElementType, oe: ElementType,
                       alg: DotAlgorithm | None = None) -> np.ndarray:
    """The result of dot_general (shape: batch + lhs free + rhs free dims)."""
    a, b, shape = _bmk(lhs, rhs, d)
    if alg is not None:
        return _algorithm_dot(ctx, alg, a, b, le, oe).reshape(shape)
    dt = compute_dtype(le, oe)
    if le.is_bool:  # and / or: count the true products, exact in int64
        s = matmul(a.astype(np.int64), b.astype(np.int64)) != 0
        return s.reshape(shape)
    if dt.kind == "c":  # XLA:CPU's order (the section on summation orders)
        s = xla_complex_matmul(to_compute(a, dt), to_compute(b, dt),
                               vector_dot_flipped(lhs.shape, rhs.shape, d))
    else:
        s = matmul(to_compute(a, dt), to_compute(b, dt))
    return from_compute(s, le, oe).reshape(shape)


def _check_operands(ctx: OpCall, values: Sequence[Any], names: Sequence[str]) -> None:
    for i, (v, n) in enumerate(zip(values, names, strict=True)):
        check_value(ctx, v, ctx.operand_types[i], n)


def _dot_general_provenance(ctx: OpCall, inputs: list[Any], outputs: list[Any]) -> FanInProvenance:
    lhs, rhs = inputs[0], inputs[1]
    d = dot_dims(ctx)
    lr = d.lhs_result_dimensions(lhs.ndim)
    rr = d.rhs_result_dimensions(rhs.ndim)
    nb = len(d.lhs_batching_dimensions)
    W = tuple(int(lhs.shape[x]) for x in d.lhs_contracting_dimensions)
    nw = len(W)
    offsets = np.indices(W, dtype=np.int64) if nw else np.zeros((0,), np.int64)

    def fans(result: int, ridx: tuple[np.ndarray, ...]) -> list[Fan]:
        li: list[Any] = [None] * lhs.ndim
        ri: list[Any] = [None] * rhs.ndim
        for k, (x, y) in enumerate(zip(d.lhs_batching_dimensions, d.rhs_batching_dimensions,
                                       strict=True)):
            li[x] = ri[y] = expand(ridx[k], nw)
        for k, x in enumerate(lr):
            li[x] = expand(ridx[nb + k], nw)
        for k, y in enumerate(rr):
            ri[y] = expand(ridx[nb + len(lr) + k], nw)
        # offsets carry the batch axes too (S + W): FanInProvenance needs them leading
        zero = expand(np.zeros_like(ridx[0]), nw) if ridx else 0
        for j, (x, y) in enumerate(zip(d.lhs_contracting_dimensions, d.rhs_contracting_dimensions,
                                       strict=True)):
            li[x] = ri[y] = offsets[j] + zero
        return [Fan(0, "window", tuple(li)), Fan(1, "kernel", tuple(ri))]

    # result dims: batch, lhs free, rhs free; contracting dims span their whole range
    lp: list[int | None] = [None] * lhs.ndim
    rp: list[int | None] = [None] * rhs.ndim
    for k, (x, y) in enumerate(zip(d.lhs_batching_dimensions, d.rhs_batching_dimensions, strict=True)):
        lp[x] = rp[y] = k
    for k, x in enumerate(lr):
        lp[x] = nb + k
    for k, y in enumerate(rr):
        rp[y] = nb + len(lr) + k
    projections = [Projection(0, "window", tuple(lp)), Projection(1, "kernel", tuple(rp))]

    prov = _FanIn([value_shape(outputs[0])], [value_shape(v) for v in inputs], fans,
                  schedule=Msg("contraction.schedule.dot_general"), project=lambda r: projections)
    # for front ends: a dot product's roles are its lhs and rhs, and each dim says what it is
    prov.role_labels = {"window": Msg("contraction.role.lhs"), "kernel": Msg("contraction.role.rhs")}

    def dims_note(kinds: list[str]) -> Msg:
        return Msg("contraction.label.dims", dims=", ".join(f"{k}: {w}" for k, w in enumerate(kinds)))

    lk = ["free"] * lhs.ndim
    rk = ["free"] * rhs.ndim
    for x, y in zip(d.lhs_batching_dimensions, d.rhs_batching_dimensions, strict=True):
        lk[x] = rk[y] = "batch"
    for x, y in zip(d.lhs_contracting_dimensions, d.rhs_contracting_dimensions, strict=True):
        lk[x] = rk[y] = "contracting"
    prov.operand_notes = {0: dims_note(lk), 1: dims_note(rk)}
    prov.result_notes = {0: dims_note(["batch"] * nb + ["lhs free"] * len(lr) + ["rhs free"] * len(rr))}
    return prov


def _sum_notes(le: ElementType, oe: ElementType, total: int, order: Msg, summer: Msg) -> list[Msg]:
    """The explain notes on how a dot product's terms are really summed (``order``: the order
    the products are listed in, ``summer``: what really sums them)."""
    notes = []
    if total > 1 and (le.is_float or le.is_complex):
        notes.append(Msg("contraction.note.order", order=order, summer=summer))
    if le.is_float and le.bits < 32:
        notes.append(Msg("contraction.note.narrow", lhs_type=str(le), result_type=str(oe)))
    if le.is_int:
        notes.append(Msg("contraction.note.wrap", result_type=str(oe)))
    return notes


def xla_dot_notes(lhs_shape: Sequence[int], rhs_shape: Sequence[int], d: DotGeneralAttrs, idx: tuple,
                  dt: np.dtype) -> list[Msg]:
    """The explain notes on how XLA:CPU (and so hlolab) sums the complex dot product at ``idx``:
    which implementation, and for Eigen's matrix kernel the pattern of this element's sums."""
    lr = d.lhs_result_dimensions(len(lhs_shape))
    rr = d.rhs_result_dimensions(len(rhs_shape))
    nb = len(d.lhs_batching_dimensions)
    def size(shape: Sequence[int], dims: Sequence[int]) -> int:
        return int(np.prod([shape[x] for x in dims], dtype=np.int64))

    B, M, K = (size(lhs_shape, x) for x in (d.lhs_batching_dimensions, lr, d.lhs_contracting_dimensions))
    N = size(rhs_shape, rr)
    path = xla_dot_path(B, M, K, N)
    key = "contraction.xla."
    order = Msg("contraction.order.dot_general")
    if path == "empty":
        return []
    if path == "multiply":
        im = "fma(a.re, b.im, a.im*b.re)" if N == 1 and M > 1 else "fma(a.im, b.re, a.re*b.im)"
        return [Msg("contraction.note.xla", how=Msg(key + "multiply", im=im), order=order)]
    if path == "vector":
        flipped = vector_dot_flipped(lhs_shape, rhs_shape, d)
        if K <= XLA_TREE_WINDOW:
            im = "fma(a.re, b.im, fma(a.im, b.re, im))" if flipped else "fma(a.im, b.re, fma(a.re, b.im, im))"
            how = Msg(key + "vector_unrolled", k=K, im=im)
        else:
            im = "fma(a.re, b.im, a.im*b.re)" if flipped else "fma(a.im, b.re, a.re*b.im)"
            how = Msg(key + "vector_tree", k=K, window=XLA_TREE_WINDOW, windows=-(-K // XLA_TREE_WINDOW),
                      im=im)
        return _xla_note(how, xla_dot_guaranteed(lhs_shape, rhs_shape, d, dt))
    if path == "gemv":
        block = gemv_block(K, N, dt)
        how = Msg(key + "gemv") if block >= K else Msg(key + "gemv_blocks", block=block)
        return [Msg("contraction.note.xla", how=how, order=order)]
    m = int(np.ravel_multi_index(idx[nb:nb + len(lr)], [lhs_shape[x] for x in lr])) if lr else 0
    n = int(np.ravel_multi_index(idx[nb + len(lr):], [rhs_shape[x] for x in rr])) if rr else 0
    kc = eigen_kc(K, M, N, dt)
    pattern = next(pt for ms, ns, pt in gebp_regions(M, N, dt)
                   if ms.start <= m < ms.stop and ns.start <= n < ns.stop)
    if pattern == SCALAR:
        how = Msg(key + "gebp_scalar")
    else:
        how = Msg(key + "gebp", pattern=Msg(key + "pattern." + pattern, last=kc - 1, peeled=kc & ~7,
                                            split=kc // 4 * 4))
    notes = [Msg("contraction.note.xla", how=how, order=order)]
    if kc < K:
        notes.append(Msg("contraction.note.xla_blocks", k=K, kc=kc, threaded=eigen_kc_threaded(dt)))
    return notes


def _xla_note(how: Msg, guaranteed: bool) -> list[Msg]:
    notes = [Msg("contraction.note.xla", how=how, order=Msg("contraction.order.dot_general"))]
    if not guaranteed:  # a dot of two vectors with a transposed operand
        notes.append(Msg("contraction.note.xla_vector_layout"))
    return notes


def xla_conv_notes(g: ConvGeometry, p: ConvParams, dt: np.dtype) -> list[Msg]:
    """The explain notes on how XLA:CPU's loop nest (and so hlolab) sums a convolution in ``dt``."""
    key = "contraction.xla."
    backwards = xla_swapped_dims(g, p)
    if backwards is None or not any(backwards):
        direction = Msg(key + "kernel_order")
    else:
        direction = Msg(key + "kernel_order_swapped", dims=[j for j, b in enumerate(backwards) if b])
    how = Msg(key + ("conv_loop_complex" if dt.kind == "c" else "conv_loop"), direction=direction)
    notes = [Msg("contraction.note.xla", how=how, order=Msg("contraction.order.convolution"))]
    if dt.kind == "c":
        notes.append(Msg("contraction.note.xla_complex_conv"))
    elif xla_conv_conditional(g, p):
        notes.append(Msg("contraction.note.xla_conditional"))
    return notes


def xla_conv_conditional(g: ConvGeometry, p: ConvParams) -> bool:
    """Whether XLA's loop nest for this convolution tests positions (padding, lhs_dilation holes,
    or groups, which XLA turns into an lhs-dilated spatial dim unless a feature group has one input
    feature); LLVM may then hoist a product out of its fused multiply-add."""
    return (any(g.frame.low) or any(g.frame.high) or any(g.frame.interior) or p.batch_group_count > 1
            or (p.feature_group_count > 1 and g.Cg > 1))


def _algorithm_note(alg: DotAlgorithm, oe: ElementType) -> Msg:
    """The note on a dot_general ``algorithm``: its fields, then what it does to the sum."""
    key = "contraction.note.algorithm_imprecise" if alg.allow_imprecise_accumulation else \
        "contraction.note.algorithm"
    return Msg(key, lhs_precision_type=str(alg.lhs_precision_type),
               rhs_precision_type=str(alg.rhs_precision_type),
               accumulation_type=str(alg.accumulation_type),
               lhs_component_count=alg.lhs_component_count, rhs_component_count=alg.rhs_component_count,
               num_primitive_operations=alg.num_primitive_operations, result_type=str(oe))


def product_steps(lhs: np.ndarray, rhs: np.ndarray, pos_l: np.ndarray, pos_r: np.ndarray,
                  le: ElementType, dt: np.dtype) -> list[Step]:
    """``lhs[i] * rhs[j] = product`` for the first ``EXPLAIN_MAX_PAIRS`` paired positions
    (rows of ``pos_l`` / ``pos_r``), each product in the compute type ``dt`` (i1: and)."""
    children = []
    for p in range(min(pos_l.shape[0], EXPLAIN_MAX_PAIRS)):
        x, y = lhs[tuple(pos_l[p])], rhs[tuple(pos_r[p])]
        with np.errstate(all="ignore"):
            prod = (bool(x) and bool(y)) if le.is_bool else (np.asarray(x).astype(dt)
                                                             * np.asarray(y).astype(dt))
        children.append(Step(f"lhs[{_idx(pos_l[p])}] * rhs[{_idx(pos_r[p])}]", None, prod,
                             substituted=Msg("contraction.product", lhs=x, rhs=y)))
    return children


def _dot_general_explain(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
                         index: tuple) -> Explanation:
    if result != 0:
        raise ExecutionError(f"result #{result} does not exist (the op has 1 result)")
    lhs, rhs = inputs[0], inputs[1]
    idx = check_index(value_shape(outputs[0]), index, "result #0 index")
    d = dot_dims(ctx)
    le, oe = _operand_elements(ctx)
    lr = d.lhs_result_dimensions(lhs.ndim)
    rr = d.rhs_result_dimensions(rhs.ndim)
    nb = len(d.lhs_batching_dimensions)
    nl = nb + len(lr)
    rbi, rli, rri = idx[:nb], idx[nb:nl], idx[nl:]
    roles = {k: DimRole("batch" if k < nb else "lhs_free" if k < nl else "rhs_free")
             for k in range(len(idx))}
    key = "contraction.dot_general."
    steps = [
        Step("result_index", Msg(key + "result_index.formula"), idx, dim_roles=roles,
             substituted=Msg(key + "result_index.substituted", batching=rbi, lhs=rli, rhs=rri)),
        Step("result_batching_index", Msg(key + "result_batching_index.formula", hi=nb,
                                          lhs_batching_dimensions=list(d.lhs_batching_dimensions)),
             rbi, substituted=Msg(key + "slice", result_index=idx, lo=0, hi=nb)),
        Step("result_lhs_index",
             Msg(key + "result_lhs_index.formula", lo=nb, hi=nl, lhs_result_dimensions=lr), rli,
             substituted=Msg(key + "slice", result_index=idx, lo=nb, hi=nl)),
        Step("result_rhs_index", Msg(key + "result_rhs_index.formula", lo=nl, rhs_result_dimensions=rr),
             rri, substituted=Msg(key + "slice_from", result_index=idx, lo=nl)),
    ]
    prov = _dot_general_provenance(ctx, inputs, outputs)
    wl, wr = prov.window(0, idx)
    pos_l = wl.index.reshape(-1, lhs.ndim)
    pos_r = wr.index.reshape(-1, rhs.ndim)
    dt = compute_dtype(le, oe)
    total = pos_l.shape[0]
    children = product_steps(lhs, rhs, pos_l, pos_r, le, dt)
    value = outputs[0][idx]
    W = tuple(int(lhs.shape[x]) for x in d.lhs_contracting_dimensions)
    # reshaped_lhs_slice / reshaped_rhs_slice: the paired positions are row-major over W
    lhs_slice = lhs[tuple(pos_l.T)].reshape(W)
    rhs_slice = rhs[tuple(pos_r.T)].reshape(W)
    steps.append(Step("dot_product", Msg(key + "dot_product.formula", dims=list(W), total=total), value,
                      children=children,
                      substituted=Msg(key + "dot_product.substituted", lhs=lhs_slice, rhs=rhs_slice)))
    alg = dot_algorithm(ctx.attrs)
    if alg is None and dt.kind == "c":
        notes = xla_dot_notes(lhs.shape, rhs.shape, d, idx, dt)
    else:
        notes = _sum_notes(le, oe, total, Msg("contraction.order.dot_general"),
                           Msg("contraction.summer.blas"))
    if alg is not None:
        notes.append(_algorithm_note(alg, oe))
    if total > EXPLAIN_MAX_PAIRS:
        notes.append(Msg("contraction.note.more", count=total - EXPLAIN_MAX_PAIRS))
    return Explanation(ctx.op.name, idx, steps, value, notes, 0)


@op("stablehlo.dot", aliases=("Dot",), verify=_verify_dot_general, attrs=DotAttrs, infer=infer_dot,
    family="contraction", provenance=_dot_general_provenance, explain=_dot_general_explain)
@op("stablehlo.dot_general", aliases=("DotGeneral",), verify=_verify_dot_general, attrs=DotGeneralAttrs,
    infer=infer_dot_general, family="contraction", provenance=_dot_general_provenance,
    explain=_dot_general_explain)
def dot_general(ctx: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """result[result_index] = sum over the contracting positions of lhs * rhs slices."""
    _reject_dynamic(ctx)
    _check_operands(ctx, [lhs, rhs], ["lhs", "rhs"])
    le, oe = _operand_elements(ctx)
    return dot_general_values(ctx, lhs, rhs, dot_dims(ctx), le, oe, dot_algorithm(ctx.attrs))


# --- convolution: attributes and verification ---------------------------------------------

def _cdn() -> Any:
    return attr(member("dimension_numbers", "stablehlo.conv"))


def _window(codec: Any) -> Any:
    """An optional window attribute: None when absent (the spec's default depends on the rank)."""
    return attr(codec, default=None)


@record
class DynamicConvAttrs(Attrs):
    """dynamic_conv's attributes (the spec's names): convolution's without ``padding``
    (an operand here): the fields of ``#stablehlo.conv<...>``, the window attributes
    (None when absent), the group counts and ``precision_config``."""

    input_batch_dimension: int = _cdn()
    input_feature_dimension: int = _cdn()
    input_spatial_dimensions: tuple[int, ...] = _cdn()
    kernel_input_feature_dimension: int = _cdn()
    kernel_output_feature_dimension: int = _cdn()
    kernel_spatial_dimensions: tuple[int, ...] = _cdn()
    output_batch_dimension: int = _cdn()
    output_feature_dimension: int = _cdn()
    output_spatial_dimensions: tuple[int, ...] = _cdn()
    window_strides: tuple[int, ...] | None = _window(ints("window_strides"))
    lhs_dilation: tuple[int, ...] | None = _window(ints("lhs_dilation"))
    rhs_dilation: tuple[int, ...] | None = _window(ints("rhs_dilation"))
    window_reversal: tuple[bool, ...] | None = _window(bools("window_reversal"))
    batch_group_count: int = attr(integer("batch_group_count"), default=1, always=True)
    feature_group_count: int = attr(integer("feature_group_count"), default=1, always=True)
    precision_config: ArrayAttr | None = _precision_config()


@record
class ConvolutionAttrs(DynamicConvAttrs):
    """convolution's attributes: dynamic_conv's and the ``padding`` attribute."""

    padding: tuple[tuple[int, int], ...] | None = _window(pairs("padding"))


ConvAttrs = ConvolutionAttrs | DynamicConvAttrs


@dataclass(frozen=True)
class ConvDims:
    """The dimension numbers of ``#stablehlo.conv<...>`` (the spec's names)."""

    input_batch_dimension: int
    input_feature_dimension: int
    input_spatial_dimensions: tuple[int, ...]
    kernel_input_feature_dimension: int
    kernel_output_feature_dimension: int
    kernel_spatial_dimensions: tuple[int, ...]
    output_batch_dimension: int
    output_feature_dimension: int
    output_spatial_dimensions: tuple[int, ...]


@dataclass(frozen=True)
class ConvParams:
    """Every convolution attribute, defaults filled in (padding may come from an operand)."""

    window_strides: tuple[int, ...]
    padding: tuple[tuple[int, int], ...] | None
    lhs_dilation: tuple[int, ...]
    rhs_dilation: tuple[int, ...]
    window_reversal: tuple[bool, ...]
    dims: ConvDims
    feature_group_count: int
    batch_group_count: int


@lru_cache(maxsize=256)
def conv_params(rec: ConvAttrs) -> ConvParams:
    """The record with the spec's defaults for absent window attributes (strides and
    dilations 1, no padding, no reversal); ``padding`` None for dynamic_conv."""
    dims = ConvDims(**{k: getattr(rec, k) for k in CONV_FIELDS})
    n = len(dims.input_spatial_dimensions)

    def ones(v: tuple[int, ...] | None) -> tuple[int, ...]:
        return v if v is not None else (1,) * n

    padding = None
    if isinstance(rec, ConvolutionAttrs):
        padding = rec.padding if rec.padding is not None else ((0, 0),) * n
    reversal = rec.window_reversal if rec.window_reversal is not None else (False,) * n
    return ConvParams(ones(rec.window_strides), padding, ones(rec.lhs_dilation), ones(rec.rhs_dilation),
                      reversal, dims, rec.feature_group_count, rec.batch_group_count)


def _num_windows(in_size: int, lhs_dilation: int, lo: int, hi: int, k: int, rhs_dilation: int,
                 stride: int) -> int:
    """(C25) num_windows of one spatial dimension."""
    padded_input = padded_size(in_size, lo, hi, lhs_dilation - 1)
    dilated_window = dilated_size(k, rhs_dilation - 1)
    if padded_input <= 0 or dilated_window > padded_input:  # is_empty_window
        return 0
    return (padded_input - dilated_window) // stride + 1


def conv_result_shape(lhs_shape: Sequence[int | None], rhs_shape: Sequence[int | None], p: ConvParams,
                      padding: Sequence[tuple[int, int]] | None) -> list[int | None]:
    """(C25) the result shape, in the output layout; None for a size a dynamic operand size
    (or dynamic_conv's padding operand, ``padding`` None) leaves open."""
    d = p.dims
    out: list[int | None] = [None] * len(lhs_shape)
    nb = lhs_shape[d.input_batch_dimension]
    out[d.output_batch_dimension] = None if nb is None else nb // p.batch_group_count
    out[d.output_feature_dimension] = rhs_shape[d.kernel_output_feature_dimension]
    for j, od in enumerate(d.output_spatial_dimensions):
        n, k = lhs_shape[d.input_spatial_dimensions[j]], rhs_shape[d.kernel_spatial_dimensions[j]]
        if n is not None and k is not None and padding is not None:
            out[od] = _num_windows(n, p.lhs_dilation[j], padding[j][0], padding[j][1], k,
                                   p.rhs_dilation[j], p.window_strides[j])
    return out


def check_conv(err: ErrorFn, p: ConvParams, lhs: TensorType, rhs: TensorType,
               padding_type: TensorType | None) -> None:
    """(C1-C23) on the operand types and attributes, in the order the result shape needs
    them; ``padding_type`` is dynamic_conv's padding operand (None for convolution).
    ``err(label, message)`` builds the error (a VerificationError, or an InferError)."""
    d = p.dims
    N = lhs.rank
    if rhs.rank != N:
        raise err("C1", f"N = rank(lhs) = rank(rhs) does not hold: rank(lhs) = {N}, "
                  f"rank(rhs) = {rhs.rank}")
    s = N - 2
    for label, name, v in (("C2", "window_strides", p.window_strides),
                           ("C5", "lhs_dilation", p.lhs_dilation),
                           ("C7", "rhs_dilation", p.rhs_dilation)):
        if len(v) != s:
            raise err(label, f"size({name}) = {len(v)} must be N - 2 = {s}")
        if any(x <= 0 for x in v):
            raise err({"C2": "C3", "C5": "C6", "C7": "C8"}[label], f"{name} = {list(v)} must be > 0")
    if padding_type is not None:
        pt = padding_type
        if pt.rank != 2 or not (isinstance(pt.element, ElementType) and pt.element.is_int):
            raise err("I3", f"padding must be a 2-dimensional tensor of integer type, got {pt}")
        if not (dims_fit(pt.shape[0], s) and dims_fit(pt.shape[1], 2)):
            raise err("C4", f"shape(padding) = {list(pt.shape)} must be [N - 2, 2] = [{s}, 2]")
    else:
        assert p.padding is not None
        if len(p.padding) != s:
            raise err("C4", f"shape(padding) = [{len(p.padding)}, 2] must be [N - 2, 2] = [{s}, 2]")
    if len(p.window_reversal) != s:
        raise err("C9", f"size(window_reversal) = {len(p.window_reversal)} must be N - 2 = {s}")
    fgc, bgc = p.feature_group_count, p.batch_group_count
    if fgc <= 0:
        raise err("C21", f"feature_group_count = {fgc} must be > 0")
    if bgc <= 0:
        raise err("C22", f"batch_group_count = {bgc} must be > 0")
    if len(d.input_spatial_dimensions) != s:
        raise err("C12", f"size(input_spatial_dimensions) = {len(d.input_spatial_dimensions)}"
                  f" must be N - 2 = {s}")
    input_dimensions = [d.input_batch_dimension, *d.input_spatial_dimensions, d.input_feature_dimension]
    if not _is_unique(input_dimensions) or any(not 0 <= x < N for x in input_dimensions):
        raise err("C13", f"input_dimensions = {input_dimensions} must be unique and in [0, {N})")
    if len(d.kernel_spatial_dimensions) != s:
        raise err("C17", f"size(kernel_spatial_dimensions) = "
                  f"{len(d.kernel_spatial_dimensions)} must be N - 2 = {s}")
    kernel_dimensions = [*d.kernel_spatial_dimensions, d.kernel_input_feature_dimension,
                         d.kernel_output_feature_dimension]
    if not _is_unique(kernel_dimensions) or any(not 0 <= x < N for x in kernel_dimensions):
        raise err("C18", f"kernel_dimensions = {kernel_dimensions} must be unique and in [0, {N})")
    if len(d.output_spatial_dimensions) != s:
        raise err("C19", f"size(output_spatial_dimensions) = "
                  f"{len(d.output_spatial_dimensions)} must be N - 2 = {s}")
    output_dimensions = [d.output_batch_dimension, *d.output_spatial_dimensions,
                         d.output_feature_dimension]
    if not _is_unique(output_dimensions) or any(not 0 <= x < N for x in output_dimensions):
        raise err("C20", f"output_dimensions = {output_dimensions} must be unique and in [0, {N})")
    nb = lhs.shape[d.input_batch_dimension]
    if nb is not None and nb % bgc:
        raise err("C10", f"dim(lhs, input_batch_dimension) = {nb} must be a multiple of "
                  f"batch_group_count = {bgc}")
    nf = lhs.shape[d.input_feature_dimension]
    if nf is not None and nf % fgc:
        raise err("C11", f"dim(lhs, input_feature_dimension) = {nf} must be a multiple of "
                  f"feature_group_count = {fgc}")
    ki = rhs.shape[d.kernel_input_feature_dimension]
    if nf is not None and ki is not None and ki != nf // fgc:
        raise err("C14", f"dim(rhs, kernel_input_feature_dimension) = {ki} must be "
                  f"dim(lhs, input_feature_dimension) / feature_group_count = {nf} / {fgc}")
    ko = rhs.shape[d.kernel_output_feature_dimension]
    if ko is not None and ko % bgc:
        raise err("C15", f"dim(rhs, kernel_output_feature_dimension) = {ko} must be a "
                  f"multiple of batch_group_count = {bgc}")
    if ko is not None and ko % fgc:
        raise err("C16", f"dim(rhs, kernel_output_feature_dimension) = {ko} must be a "
                  f"multiple of feature_group_count = {fgc}")
    if fgc != 1 and bgc != 1:
        raise err("C23", f"feature_group_count = {fgc} or batch_group_count = {bgc} must be 1")


def infer_conv(rec: ConvAttrs, operand_types: list[Type]) -> list[Inferred]:
    """The (C25) shape (dynamic_conv: the spatial sizes depend on the padding operand's
    value, so they are left open); the element type is the declared result's (i8 x i8 ->
    i32 is allowed, quantized results have their own)."""
    dynamic = not isinstance(rec, ConvolutionAttrs)  # the padding is an operand
    lhs, rhs, *rest = _operand_tensors(operand_types, 3 if dynamic else 2)
    p = conv_params(rec)
    check_conv(InferError, p, lhs, rhs, rest[0] if dynamic else None)
    return [Partial(tuple(conv_result_shape(lhs.shape, rhs.shape, p, p.padding)))]


def _verify_conv(ctx: OpCall) -> None:
    dynamic = ctx.name == "stablehlo.dynamic_conv"
    want_ops = 3 if dynamic else 2
    if len(ctx.operand_types) != want_ops or len(ctx.result_types) != 1:
        raise ctx.error(None, f"{ctx.name} takes {want_ops} operands and has 1 result, got "
                        f"{len(ctx.operand_types)} and {len(ctx.result_types)}")
    lhs = operand_tensor(ctx, 0, "I1", "lhs")
    rhs = operand_tensor(ctx, 1, "I2", "rhs")
    res = ctx.result_tensor()
    if isinstance(lhs.element, QuantizedElementType) and lhs.element.is_per_axis:
        raise ctx.error("I1", f"lhs must be a tensor or per-tensor quantized tensor, got {lhs}")
    p = conv_params(ctx.attrs)
    d = p.dims
    N = lhs.rank
    check_conv(ctx.error, p, lhs, rhs, operand_tensor(ctx, 2, "I3", "padding") if dynamic else None)
    _check_precision_config(ctx, "C24")
    if res.rank != N:
        raise ctx.error("C26", f"rank(result) = {res.rank} must be N = {N}")
    if p.padding is not None and lhs.is_static and rhs.is_static:
        want = conv_result_shape(lhs.shape, rhs.shape, p, p.padding)  # type: ignore[arg-type]
        if not all(dims_fit(x, y) for x, y in zip(res.shape, want, strict=True)):
            raise ctx.error("C25", f"shape(result) = {list(res.shape)} must be {want} (batch "
                            f"dim(lhs, input_batch_dimension) / batch_group_count, feature "
                            f"dim(rhs, kernel_output_feature_dimension), num_windows per "
                            f"spatial dim)")
    off = 1 if dynamic else 0  # dynamic_conv numbers its quantized constraints one lower
    labels = tuple(f"C{n - off}" for n in (27, 28, 31, 32, 33, 34))
    _verify_element_types(ctx, lhs, rhs, res, labels)
    q = rhs.element
    if isinstance(q, QuantizedElementType) and q.is_per_axis and q.axis != d.kernel_output_feature_dimension:
        raise ctx.error(f"C{29 - off}", f"quantization_dimension(rhs) = {q.axis} must be "
                        f"kernel_output_feature_dimension = {d.kernel_output_feature_dimension}")
    qo = res.element
    if isinstance(qo, QuantizedElementType) and qo.is_per_axis and qo.axis != d.output_feature_dimension:
        raise ctx.error(f"C{30 - off}", f"quantization_dimension(result) = {qo.axis} must be "
                        f"output_feature_dimension = {d.output_feature_dimension}")
    if not any(isinstance(t.element, QuantizedElementType) for t in (lhs, rhs, res)):
        _check_result_kind(ctx, lhs, res, labels[0])


# --- convolution: evaluation --------------------------------------------------------------

@dataclass(frozen=True)
class ConvGeometry:
    """Sizes of one convolution in the canonical layouts: lhs (N, spatial..., C),
    rhs (spatial..., I, O), result (N / batch_group_count, spatial..., O)."""

    lhs_spatial: tuple[int, ...]
    kernel_spatial: tuple[int, ...]
    out_spatial: tuple[int, ...]
    frame: PaddedFrame  # padded_lhs's spatial geometry: pad(lhs, 0, low, high, lhs_dilation - 1)
    C: int
    Cg: int  # input features per feature group
    O: int
    Og: int  # output features per (feature or batch) group
    Nb: int  # lhs batch per batch group

    @property
    def padding(self) -> tuple[tuple[int, int], ...]:
        return tuple(zip(self.frame.low, self.frame.high, strict=True))

    @property
    def padded_input(self) -> tuple[int, ...]:
        """The frame's spatial sizes (max 0)."""
        return self.frame.shape


def conv_geometry(lhs_shape: Sequence[int], rhs_shape: Sequence[int], p: ConvParams,
                  padding: Sequence[tuple[int, int]]) -> ConvGeometry:
    d = p.dims
    ls = tuple(int(lhs_shape[x]) for x in d.input_spatial_dimensions)
    ks = tuple(int(rhs_shape[x]) for x in d.kernel_spatial_dimensions)
    pad = tuple((int(lo), int(hi)) for lo, hi in padding)
    frame = PaddedFrame(ls, tuple(lo for lo, _ in pad), tuple(hi for _, hi in pad),
                        tuple(ld - 1 for ld in p.lhs_dilation))
    out = tuple(_num_windows(n, ld, lo, hi, k, rd, st) for n, ld, (lo, hi), k, rd, st in zip(
        ls, p.lhs_dilation, pad, ks, p.rhs_dilation, p.window_strides, strict=True))
    C = int(lhs_shape[d.input_feature_dimension])
    O = int(rhs_shape[d.kernel_output_feature_dimension])
    groups = p.feature_group_count * p.batch_group_count
    return ConvGeometry(ls, ks, out, frame, C, C // p.feature_group_count, O,
                        O // groups, int(lhs_shape[d.input_batch_dimension]) // p.batch_group_count)


def _windows(padded: np.ndarray, g: ConvGeometry, p: ConvParams) -> np.ndarray:
    """Every lhs_window, as a view (N, out_spatial..., k..., C)."""
    s = len(g.kernel_spatial)
    dk = tuple((k - 1) * rd + 1 for k, rd in zip(g.kernel_spatial, p.rhs_dilation, strict=True))
    v = sliding_windows(padded, dk, axis=tuple(range(1, 1 + s)))  # (N, pos..., C, dk...)
    sel = ((slice(None),)
           + tuple(slice(0, o * st, st) for o, st in zip(g.out_spatial, p.window_strides, strict=True))
           + (slice(None),)
           + tuple(slice(None, None, rd) for rd in p.rhs_dilation))
    v = v[sel]
    return np.moveaxis(v, 1 + s, -1)  # channels last: (N, out..., k..., C)


def _window_valid(g: ConvGeometry, p: ConvParams, budget: int | None) -> np.ndarray | None:
    """(out..., k...): True where the window position holds an lhs element (not padding, not an
    lhs_dilation hole); None when every position does."""
    if not any(g.frame.low) and not any(g.frame.high) and not any(g.frame.interior):
        return None
    s = len(g.lhs_spatial)
    ones = np.ones((1, *g.lhs_spatial, 1), np.bool_)
    padded = g.frame.along(range(1, 1 + s), ones.shape).materialize(ones, False, budget)
    valid = _windows(padded, g, p)[0, ..., 0]
    return None if valid.all() else valid


def xla_swapped_dims(g: ConvGeometry, p: ConvParams) -> tuple[bool, ...] | None:
    """Where XLA's algebraic simplifier swaps a convolution's operands (SwapConvOperands: no
    groups, and the kernel's positions outnumber the input's), the spatial dims whose positions its
    loop then visits backwards (the input becomes a reversed kernel); None when it does not swap."""
    kernel_product = swapped_product = 1
    backwards = []
    for j, (k, n) in enumerate(zip(g.kernel_spatial, g.lhs_spatial, strict=True)):
        (lo, hi), st = g.padding[j], p.window_strides[j]
        ld, rd, rev = p.lhs_dilation[j], p.rhs_dilation[j], p.window_reversal[j]
        plain = not rev and lo == 0 and hi == 0 and rd == 1
        group_dim = plain and ld == k and st == k - 1
        contraction_dim = plain and k == n and ld == 1 and st == 1
        if group_dim or contraction_dim:  # kept as they are
            backwards.append(False)
            continue
        kernel_product *= k
        swapped_product *= k if (n == 1 and st == 1 and rd == 1 and lo == k - 1 and hi == k - 1) else n
        backwards.append(True)
    return tuple(backwards) if kernel_product > swapped_product else None


def _conv_loop(cols: np.ndarray, w: np.ndarray, valid: np.ndarray | None,
               backwards: tuple[bool, ...] | None = None) -> np.ndarray:
    """One group of a convolution in XLA:CPU's loop order: a running sum from 0 over the kernel
    positions (outer, row-major) and the input features (inner), each product fused into the add,
    padding and holes skipped. ``cols`` (N, out..., k..., Cg) the windows, ``w`` (k..., Cg, Og) the
    kernel (window_reversal applied), ``valid`` from _window_valid; result (N, out..., Og)."""
    s = w.ndim - 2
    lead = cols.shape[:cols.ndim - s - 1]  # (N, out...)
    dt = cols.dtype
    if dt.kind == "c":
        acc_re = np.zeros(lead + w.shape[-1:], dt.type(0).real.dtype)
        acc_im = np.zeros_like(acc_re)
    else:
        acc = np.zeros(lead + w.shape[-1:], dt)
    for index in np.ndindex(*w.shape[:s]):
        tap = index if backwards is None else tuple(
            k - 1 - t if b else t for t, k, b in zip(index, w.shape[:s], backwards, strict=True))
        x = cols[(Ellipsis, *tap, slice(None))]  # (N, out..., Cg)
        keep = None if valid is None else valid[(Ellipsis, *tap)][None, ..., None]
        if keep is not None and not keep.any():
            continue
        for c in range(w.shape[s]):
            xv, wv = x[..., c:c + 1], w[(*tap, c)]
            if dt.kind == "c":
                pr, pi = fused_complex_product(xv.real, xv.imag, wv.real, wv.imag)
                with np.errstate(all="ignore"):
                    new_re, new_im = acc_re + pr, acc_im + pi
                acc_re = new_re if keep is None else np.where(keep, new_re, acc_re)
                acc_im = new_im if keep is None else np.where(keep, new_im, acc_im)
            else:
                new = fma(xv, wv, acc)
                acc = new if keep is None else np.where(keep, new, acc)
    return _complex_of(acc_re, acc_im, dt) if dt.kind == "c" else acc


def conv_values(ctx: OpCall, lhs: np.ndarray, rhs: np.ndarray, p: ConvParams,
                padding: Sequence[tuple[int, int]], le: ElementType, oe: ElementType) -> np.ndarray:
    """The convolution result in the output layout."""
    d = p.dims
    g = conv_geometry(lhs.shape, rhs.shape, p, padding)
    s = len(g.lhs_spatial)
    x = lhs.transpose([d.input_batch_dimension, *d.input_spatial_dimensions, d.input_feature_dimension])
    w = rhs.transpose([*d.kernel_spatial_dimensions, d.kernel_input_feature_dimension,
                       d.kernel_output_feature_dimension])
    flip = tuple(j for j in range(s) if p.window_reversal[j])
    if flip:  # reversing each window == reversing the kernel on those spatial dims
        w = np.flip(w, axis=flip)
    dt = np.dtype(np.int64) if le.is_bool else compute_dtype(le, oe)
    x = to_compute(x, dt)
    w = to_compute(w, dt)
    Nout = g.Nb
    out = np.zeros((Nout, *g.out_spatial, g.O), dtype=dt)
    K = int(np.prod(g.kernel_spatial, dtype=np.int64)) * g.Cg
    P = int(np.prod(g.out_spatial, dtype=np.int64))
    if Nout * P * g.O and K:
        # padded_lhs = pad(lhs, 0, low, high, lhs_dilation - 1) on the canonical (N, spatial..., C)
        padded_lhs = g.frame.along(range(1, 1 + s), x.shape).materialize(x, 0, ctx.element_budget)
        win = _windows(padded_lhs, g, p)  # (N, out..., k..., C)
        loop = xla_conv_loop(dt)  # XLA:CPU's own loop nest (the section on summation orders)
        valid = _window_valid(g, p, ctx.element_budget) if loop else None
        backwards = xla_swapped_dims(g, p) if loop else None
        for fg in range(p.feature_group_count):
            for bg in range(p.batch_group_count):
                grp = fg + bg  # one of them is 0 (C23)
                o0 = grp * g.Og
                cols = win[bg * g.Nb:(bg + 1) * g.Nb, ..., fg * g.Cg:(fg + 1) * g.Cg]
                if loop:
                    out[..., o0:o0 + g.Og] = _conv_loop(cols, w[..., o0:o0 + g.Og], valid, backwards)
                    continue
                a = cols.reshape(Nout * P, K)  # im2col (one copy), rows: (n, out...), cols: (k..., c)
                b = w[..., o0:o0 + g.Og].reshape(K, g.Og)
                with np.errstate(all="ignore"):
                    out[..., o0:o0 + g.Og] = (a @ b).reshape(Nout, *g.out_spatial, g.Og)
    if le.is_bool:
        res = out != 0
    else:
        res = from_compute(out, le, oe)
    perm = [d.output_batch_dimension, *d.output_spatial_dimensions, d.output_feature_dimension]
    return contiguous(res.transpose(np.argsort(perm)))


def _runtime_padding(ctx: OpCall, p: ConvParams, inputs: Sequence[Any]) -> tuple[tuple[int, int], ...]:
    if p.padding is not None:
        return p.padding
    pv = np.asarray(inputs[2])
    s = len(p.dims.input_spatial_dimensions)
    if pv.shape != (s, 2):
        raise ctx.error("C4", f"shape(padding) = {list(pv.shape)} must be [N - 2, 2] = [{s}, 2]")
    wide = pv.astype(np.int64)
    if pv.dtype == np.uint64 and np.any(pv > np.uint64(2**62)):
        raise ExecutionError(f"{ctx.name}: padding {pv.tolist()} is too large", ctx.loc)
    return tuple((int(lo), int(hi)) for lo, hi in wide)


def _conv_le_oe(ctx: OpCall) -> tuple[ElementType, ElementType]:
    return _operand_elements(ctx)


def _conv_evaluate(ctx: OpCall, *inputs: np.ndarray) -> np.ndarray:
    _reject_dynamic(ctx)
    names = ["lhs", "rhs", "padding"][:len(inputs)]
    _check_operands(ctx, list(inputs), names)
    p = conv_params(ctx.attrs)
    padding = _runtime_padding(ctx, p, inputs)
    want = conv_result_shape(inputs[0].shape, inputs[1].shape, p, padding)
    res = ctx.result_tensor()
    if list(res.shape) != want:
        raise ctx.error("C25", f"shape(result) = {list(res.shape)} must be {want} for padding "
                        f"{[list(x) for x in padding]}")
    le, oe = _conv_le_oe(ctx)
    return conv_values(ctx, inputs[0], inputs[1], p, padding, le, oe)


# --- convolution: provenance ----------------------------------------------------------------

@dataclass
class ConvWindow:
    """For a batch of result indices (arrays of shape S): the spec's quantities,
    broadcastable to S + W, W = (Cg, k...)."""

    lhs_batch: np.ndarray  # S + (1,)*|W|
    feature_group: np.ndarray
    batch_group: np.ndarray
    features: np.ndarray  # input features c = feature_group * Cg + i
    kernel_in: np.ndarray  # i
    kernel_pos: list[np.ndarray]  # kernel spatial index per spatial dim
    positions: list[np.ndarray]  # coordinates in the padded / dilated frame per spatial dim
    lhs_spatial: list[np.ndarray]  # lhs spatial index (valid only where inside)
    inside: np.ndarray  # a real lhs element (not padding, not a hole)
    out_feature: np.ndarray
    lhs_window_start: list[np.ndarray]


def conv_window(ridx: Sequence[np.ndarray], g: ConvGeometry, p: ConvParams) -> ConvWindow:
    d = p.dims
    s = len(g.kernel_spatial)
    W = (g.Cg, *g.kernel_spatial)
    nw = len(W)
    grid = np.indices(W, dtype=np.int64) if all(W) else [np.zeros(W, np.int64) for _ in W]
    b = expand(ridx[d.output_batch_dimension], nw)
    f = expand(ridx[d.output_feature_dimension], nw)
    og = max(g.Og, 1)
    bg = f // og if p.batch_group_count > 1 else np.zeros_like(f)
    fg = f // og if p.feature_group_count > 1 else np.zeros_like(f)
    lhs_batch = bg * g.Nb + b
    i = grid[0]
    features = fg * g.Cg + i
    starts, positions, lhs_sp, kpos = [], [], [], []
    inside = np.ones((), dtype=bool)
    for j in range(s):
        o = expand(ridx[d.output_spatial_dimensions[j]], nw)
        k = grid[1 + j]
        start = o * p.window_strides[j]  # lhs_window_start
        # window position w pairs with kernel index w, or k - 1 - w when reversed
        w = (g.kernel_spatial[j] - 1 - k) if p.window_reversal[j] else k
        pos = start + w * p.rhs_dilation[j]
        q, kind = g.frame.classify_dim(j, pos)
        ok = kind == OPERAND
        starts.append(start)
        positions.append(pos)
        lhs_sp.append(np.where(ok, q, 0))
        kpos.append(k)
        inside = inside & ok
    return ConvWindow(lhs_batch, fg, bg, features, i, kpos, positions, lhs_sp, inside, f, starts)


def _conv_provenance(ctx: OpCall, inputs: list[Any], outputs: list[Any]) -> FanInProvenance:
    lhs, rhs = inputs[0], inputs[1]
    p = conv_params(ctx.attrs)
    padding = _runtime_padding(ctx, p, inputs)
    g = conv_geometry(lhs.shape, rhs.shape, p, padding)
    d = p.dims
    lhs_frame = g.frame.along(d.input_spatial_dimensions, lhs.shape)  # in the lhs's own layout
    frame_t = lhs_frame.shape
    dynamic = len(inputs) == 3

    def fans(result: int, ridx: tuple[np.ndarray, ...]) -> list[Fan]:
        cw = conv_window(ridx, g, p)
        li: list[Any] = [None] * lhs.ndim
        fi: list[Any] = [None] * lhs.ndim
        li[d.input_batch_dimension] = fi[d.input_batch_dimension] = cw.lhs_batch
        li[d.input_feature_dimension] = fi[d.input_feature_dimension] = cw.features
        for j, x in enumerate(d.input_spatial_dimensions):
            li[x] = cw.lhs_spatial[j]
            fi[x] = cw.positions[j]
        ki: list[Any] = [None] * rhs.ndim
        ki[d.kernel_input_feature_dimension] = cw.kernel_in
        ki[d.kernel_output_feature_dimension] = cw.out_feature
        for j, x in enumerate(d.kernel_spatial_dimensions):
            ki[x] = cw.kernel_pos[j]
        pos = tuple(fi)
        out = [Fan(0, "window", tuple(li), valid=cw.inside, position=pos),
               Fan(None, "pad_value", pos, valid=~cw.inside, frame=frame_t, position=pos),
               # a kernel weight that meets padding or a hole multiplies a constant zero:
               # no value of it changes this element, so it is not a source (explain still
               # lists the product as meeting padding)
               Fan(1, "kernel", tuple(ki), valid=cw.inside)]
        if dynamic:  # the padding operand decides where every window lies
            rows, cols = np.indices(inputs[2].shape, dtype=np.int64)
            n0 = ridx[0].ndim
            out.append(Fan(2, "index_read", (rows.reshape((1,) * n0 + rows.shape),
                                             cols.reshape((1,) * n0 + cols.shape))))
        return out

    prov = _FanIn([value_shape(outputs[0])], [value_shape(v) for v in inputs], fans,
                  schedule=Msg("contraction.schedule.dynamic_conv" if dynamic
                              else "contraction.schedule.convolution"))
    prov.frames = {0: FrameMap.of(0, lhs_frame, (None,))}
    if len(d.input_spatial_dimensions) == 2:  # draw images and kernels as height x width grids
        prov.grid_axes = {"operand0": tuple(d.input_spatial_dimensions),
                          "operand1": tuple(d.kernel_spatial_dimensions),
                          "result0": tuple(d.output_spatial_dimensions)}
    return prov


# --- convolution: explain ---------------------------------------------------------------

def _position_steps(j: int, start: int, g: ConvGeometry, p: ConvParams) -> Step:
    """The padded_lhs positions of the window along spatial dim ``j`` (in kernel index order),
    each with what it holds: an lhs element, padding or an lhs_dilation hole."""
    key = "contraction.convolution."
    K, rd = g.kernel_spatial[j], p.rhs_dilation[j]
    rev = bool(p.window_reversal[j])
    offsets = tuple((K - 1 - k) if rev else k for k in range(K))  # kernel index k reads window offset w
    positions = tuple(start + w * rd for w in offsets)
    kids = []
    for k, pos in enumerate(positions):
        # what padded_lhs holds there: an lhs element, padding (outside the dilated lhs) or a hole
        at, dim_kind = g.frame.classify_dim(j, pos)
        kind = POSITION_KINDS[int(dim_position_kind(dim_kind))]
        what = Msg(key + "position." + kind, **({"index": int(at)} if kind == "operand" else {}))
        kids.append(Step(Msg(key + "position.name", k=k, position=pos), Msg(key + "position.formula", j=j),
                         what, dim_roles={j: DimRole(kind)},
                         substituted=Msg(key + "position.substituted", position=pos,
                                         padding_low=g.padding[j][0], lhs_dilation=p.lhs_dilation[j])))
    formula = key + ("positions.dim_formula_reversed" if rev else "positions.dim_formula")
    return Step(f"lhs_window_positions[{j}]", Msg(formula, j=j), positions, children=kids,
                substituted=Msg(key + "positions.dim_substituted", start=start, offsets=offsets,
                                rhs_dilation=rd))


def _conv_explain(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
                  index: tuple) -> Explanation:
    if result != 0:
        raise ExecutionError(f"result #{result} does not exist (the op has 1 result)")
    lhs, rhs = inputs[0], inputs[1]
    idx = check_index(value_shape(outputs[0]), index, "result #0 index")
    p = conv_params(ctx.attrs)
    padding = _runtime_padding(ctx, p, inputs)
    g = conv_geometry(lhs.shape, rhs.shape, p, padding)
    d = p.dims
    le, oe = _conv_le_oe(ctx)
    s = len(g.kernel_spatial)
    key = "contraction.convolution."
    roles = {d.output_batch_dimension: DimRole("output_batch"),
             d.output_feature_dimension: DimRole("output_feature")}
    roles.update({x: DimRole("spatial", k=j) for j, x in enumerate(d.output_spatial_dimensions)})
    spatial = {j: DimRole("spatial", k=j) for j in range(s)} or None
    ridx = tuple(np.asarray(v, dtype=np.int64) for v in idx)
    cw = conv_window(ridx, g, p)
    osi = tuple(idx[x] for x in d.output_spatial_dimensions)
    f = idx[d.output_feature_dimension]
    b = idx[d.output_batch_dimension]
    start = tuple(int(np.asarray(v).reshape(-1)[0]) for v in cw.lhs_window_start)
    steps = [
        Step("result_index", Msg(key + "result_index.formula"), idx, dim_roles=roles,
             substituted=Msg(key + "result_index.substituted", batch=b, output_spatial_index=osi,
                             output_feature=f)),
        Step("output_spatial_index", Msg(key + "output_spatial_index.formula",
                                         output_spatial_dimensions=list(d.output_spatial_dimensions)),
             osi, dim_roles=spatial,
             substituted=Msg("explain.element", name=idx, index=_idx(d.output_spatial_dimensions))),
    ]
    fg = int(np.asarray(cw.feature_group).reshape(-1)[0])
    bg = int(np.asarray(cw.batch_group).reshape(-1)[0])
    for name, count, group in (("feature_group", p.feature_group_count, fg),
                               ("batch_group", p.batch_group_count, bg)):
        if count > 1:
            steps.append(Step(name, Msg(key + name + ".formula"), group,
                              substituted=Msg(key + "group_substituted", output_feature=f, features=g.O,
                                              count=count)))
    steps.append(Step("lhs_batch_index", Msg(key + "lhs_batch_index.formula"), bg * g.Nb + b,
                      substituted=Msg(key + "lhs_batch_index.substituted", batch_group=bg,
                                      batch=int(lhs.shape[d.input_batch_dimension]),
                                      batch_group_count=p.batch_group_count, result_batch=b)))
    steps.append(Step("lhs_feature_indices", Msg(key + "lhs_feature_indices.formula"),
                      range(fg * g.Cg, fg * g.Cg + g.Cg),
                      substituted=Msg(key + "lhs_feature_indices.substituted", feature_group=fg,
                                      features=g.Cg)))
    steps.append(Step("lhs_window_start", Msg(key + "lhs_window_start.formula"), start, dim_roles=spatial,
                      substituted=Msg(key + "lhs_window_start.substituted", output_spatial_index=osi,
                                      window_strides=list(p.window_strides))))
    steps.append(Step("lhs_window_dimensions", Msg(key + "lhs_window_dimensions.formula", features=g.Cg),
                      g.kernel_spatial, dim_roles=spatial,
                      substituted=Msg(key + "lhs_window_dimensions.substituted",
                                      kernel_spatial_dimensions=list(d.kernel_spatial_dimensions))))
    pos_children = [_position_steps(j, start[j], g, p) for j in range(s)]
    steps.append(Step("lhs_window_positions", Msg(key + "positions.formula"),
                      tuple(c.value for c in pos_children), dim_roles=spatial, children=pos_children,
                      substituted=Msg(key + "positions.substituted", lhs_window_start=start,
                                      rhs_dilation=list(p.rhs_dilation), padding=[list(x) for x in g.padding],
                                      lhs_dilation=list(p.lhs_dilation), shape=g.padded_input)))
    prov = _conv_provenance(ctx, inputs, outputs)
    views = prov.window(0, idx)
    win = views[0]
    dt = np.dtype(np.int64) if le.is_bool else compute_dtype(le, oe)
    W = win.valid.shape  # (input features of the group, kernel spatial...)
    total = int(win.valid.size)
    li = win.index.reshape(-1, lhs.ndim)
    ok = win.valid.reshape(-1)
    fpos = win.position.reshape(-1, lhs.ndim) if win.position is not None else li
    # every kernel weight of the window, those meeting padding included (the kernel fan
    # leaves those out: they are not sources)
    kparts: list[Any] = [None] * rhs.ndim
    kparts[d.kernel_input_feature_dimension] = cw.kernel_in
    kparts[d.kernel_output_feature_dimension] = cw.out_feature
    for j, x in enumerate(d.kernel_spatial_dimensions):
        kparts[x] = cw.kernel_pos[j]
    ki = np.stack([np.broadcast_to(a, W).reshape(-1) for a in kparts], axis=-1)
    # a position off an lhs element is padding when outside the dilated lhs in some dim, else a hole
    at = position_kind(g.frame.classify(tuple(fpos[:, x] for x in d.input_spatial_dimensions))[1])
    on_padding = ~ok & (at == AT_PADDING)
    on_hole = ~ok & (at != AT_PADDING)
    zero = np.zeros((), lhs.dtype)
    lhs_window = np.where(ok, lhs[tuple(li.T)], zero).reshape(W)  # reversed_lhs_window, this group
    rhs_slice = rhs[tuple(ki.T)].reshape(W)
    children = []
    for t in range(min(total, EXPLAIN_MAX_PAIRS)):
        y = rhs[tuple(ki[t])]
        if ok[t]:
            x = lhs[tuple(li[t])]
            name: Msg | str = f"lhs[{_idx(li[t])}] * rhs[{_idx(ki[t])}]"
        else:
            x = zero[()]
            what = "product.padding" if on_padding[t] else "product.hole"
            name = Msg(key + what, position=_idx(fpos[t]), rhs=_idx(ki[t]))
        with np.errstate(all="ignore"):
            prod = np.asarray(x).astype(dt) * np.asarray(y).astype(dt)
        children.append(Step(name, None, prod, substituted=Msg("contraction.product", lhs=x, rhs=y)))
    value = outputs[0][idx]
    steps.append(Step("dot_product", Msg(key + "dot_product.formula", total=total, operand=int(ok.sum()),
                                         padding=int(on_padding.sum()), holes=int(on_hole.sum())),
                      value, children=children,
                      substituted=Msg(key + "dot_product.substituted", lhs_window=lhs_window, rhs=rhs_slice)))
    if xla_conv_loop(dt):
        notes = xla_conv_notes(g, p, dt)
    else:
        notes = _sum_notes(le, oe, total, Msg("contraction.order.convolution"),
                           Msg("contraction.summer.im2col"))
    if total > EXPLAIN_MAX_PAIRS:
        notes.append(Msg("contraction.note.more", count=total - EXPLAIN_MAX_PAIRS))
    return Explanation(ctx.op.name, idx, steps, value, notes, 0)


@op("stablehlo.convolution", aliases=("Conv", "ConvWithGeneralPadding", "ConvGeneralDilated"),
    verify=_verify_conv, attrs=ConvolutionAttrs, infer=infer_conv, family="contraction",
    provenance=_conv_provenance, explain=_conv_explain)
def convolution(ctx: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """Dot products between windows of the padded, dilated lhs and the kernel."""
    return _conv_evaluate(ctx, lhs, rhs)


@op("stablehlo.dynamic_conv", aliases=("DynamicConv",), verify=_verify_conv, attrs=DynamicConvAttrs,
    infer=infer_conv, family="contraction", provenance=_conv_provenance, explain=_conv_explain)
def dynamic_conv(ctx: OpCall, lhs: np.ndarray, rhs: np.ndarray, padding: np.ndarray) -> np.ndarray:
    """convolution with the padding taken from the ``padding`` operand's value."""
    return _conv_evaluate(ctx, lhs, rhs, padding)


# --- parameter schemas (hlolab.ops.examples) ------------------------------------------------

def _parse_conv_letters(text: str) -> ConvDims:
    """``b01f,01io->b01f`` -> ConvDims (ParamError when malformed)."""
    import re

    from hlolab.ops.examples import ParamError

    m = re.fullmatch(r"\s*([bf0-9]+)\s*[,x]\s*([io0-9]+)\s*->\s*([bf0-9]+)\s*", text)
    groups = list(m.groups()) if m else []
    n = len(groups[0]) - 2 if groups else -1
    want = [sorted("bf" + "".join(map(str, range(n)))), sorted("io" + "".join(map(str, range(n))))]
    if not m or n < 0 or n > 9 or [sorted(groups[0]), sorted(groups[1]), sorted(groups[2])] != \
            [want[0], want[1], want[0]]:
        raise ParamError(f"parameter 'dimension_numbers': cannot read {text!r}: expected input, kernel and "
                         "output layouts like b01f,01io->b01f (b/f batch/feature, i/o kernel input/output "
                         "feature, 0,1,... spatial dims, every letter once)")
    i, k, o = groups
    sp = [str(j) for j in range(n)]
    return ConvDims(i.index("b"), i.index("f"), tuple(i.index(c) for c in sp),
                    k.index("i"), k.index("o"), tuple(k.index(c) for c in sp),
                    o.index("b"), o.index("f"), tuple(o.index(c) for c in sp))


def _conv_example_params(padding_doc: str, padding_default: Any) -> tuple[Any, ...]:
    """The parameters convolution and dynamic_conv share (the padding differs only in where it goes)."""
    from hlolab.ops.examples import Param, dtype_param, int_param, ints_param, shape_param

    return (
        shape_param("lhs", (1, 5, 5, 1), "the input (layout per dimension_numbers)"),
        shape_param("rhs", (3, 3, 1, 1), "the kernel (layout per dimension_numbers)"),
        ints_param("stride", (1,), "window_strides: one value for every spatial dim, or one per dim"),
        Param("padding", "pairs", padding_default, padding_doc),
        ints_param("lhs_dilation", (1,), "base dilation of lhs: holes between input elements"),
        ints_param("rhs_dilation", (1,), "kernel dilation: holes between kernel elements"),
        ints_param("window_reversal", (0,), "1 reverses the kernel in that spatial dim"),
        int_param("feature_group_count", 1, "feature groups (depthwise when = input features)"),
        int_param("batch_group_count", 1, "batch groups"),
        Param("dimension_numbers", "text", "b01f,01io->b01f", "input, kernel, output layouts"),
        dtype_param("f32"),
    )


def _result_types(infer: Any, rec: Any, operand_types: list[Any], dtype: str,
                  shape: Any = None) -> list[TensorType]:
    """A schema-built op's result type: ``dtype`` with the shape ``infer`` fixes (or
    ``shape()``, computed once ``infer`` accepts the parameters); a placeholder scalar when
    they admit no result (verification then names the broken constraint). Contractions
    leave the element type to the declared type, so the schema chooses it."""
    from hlolab.ops.examples import ttype

    try:
        inferred = infer(rec, operand_types)
    except InferError:
        return [ttype((), dtype)]
    return [ttype(shape() if shape is not None else t.shape, dtype) for t in inferred]


def _conv_example_parts(p: dict[str, Any], padding_operand: bool) -> Any:
    """One convolution (or dynamic_conv, whose padding is a [N - 2, 2] operand (C4)) from ``p``."""
    from hlolab.ops.examples import Operand, OpParts, broadcast_ints, broadcast_pairs, ttype

    dims = _parse_conv_letters(p["dimension_numbers"])
    n = len(dims.input_spatial_dimensions)
    padding = broadcast_pairs(p["padding"], n)
    fields = {k: getattr(dims, k) for k in CONV_FIELDS} | {
        "window_strides": broadcast_ints(p["stride"], n),
        "lhs_dilation": broadcast_ints(p["lhs_dilation"], n),
        "rhs_dilation": broadcast_ints(p["rhs_dilation"], n),
        "window_reversal": tuple(bool(v) for v in broadcast_ints(p["window_reversal"], n)),
        "feature_group_count": p["feature_group_count"], "batch_group_count": p["batch_group_count"]}
    rec: ConvAttrs = (DynamicConvAttrs(**fields) if padding_operand
                      else ConvolutionAttrs(padding=padding, **fields))
    operands = [Operand("lhs", ttype(p["lhs"], p["dtype"])),
                Operand("rhs", ttype(p["rhs"], p["dtype"]), restart=True)]
    if padding_operand:
        pad = np.array(padding, dtype=np.int64).reshape(len(padding), 2)
        operands.append(Operand("padding", ttype(pad.shape, p["padding_dtype"]), pad))
    results = _result_types(infer_conv, rec, [o.type for o in operands], p["dtype"],
                            lambda: conv_result_shape(p["lhs"], p["rhs"], conv_params(rec), padding))
    return OpParts(operands, results, rec)


def _contraction_schemas() -> None:
    from hlolab.ops.examples import (
        Operand,
        OpParts,
        OpSchema,
        dtype_param,
        ints_param,
        register_schema,
        shape_param,
        ttype,
    )

    keys = ("lhs_batching_dimensions", "rhs_batching_dimensions", "lhs_contracting_dimensions",
            "rhs_contracting_dimensions")

    def dot_build(p: dict[str, Any]) -> OpParts:
        rec = DotGeneralAttrs(**{k: p[k] for k in keys})
        operands = [Operand("lhs", ttype(p["lhs"], p["dtype"])),
                    Operand("rhs", ttype(p["rhs"], p["dtype"]), restart=True)]
        return OpParts(operands, _result_types(infer_dot_general, rec, [o.type for o in operands],
                                               p["dtype"]), rec)

    register_schema(OpSchema("stablehlo.dot_general", (
        shape_param("lhs", (2, 3), "the left-hand side"),
        shape_param("rhs", (3, 2), "the right-hand side"),
        ints_param("lhs_batching_dimensions", (), "lhs dims that are batch dims"),
        ints_param("rhs_batching_dimensions", (), "rhs dims that are batch dims"),
        ints_param("lhs_contracting_dimensions", (1,), "lhs dims summed over"),
        ints_param("rhs_contracting_dimensions", (0,), "rhs dims summed over"),
        dtype_param("f32"),
    ), {"default": {},
        "spec-example": {"lhs": (2, 2, 2), "rhs": (2, 2, 2), "lhs_batching_dimensions": (0,),
                         "rhs_batching_dimensions": (0,), "lhs_contracting_dimensions": (2,),
                         "rhs_contracting_dimensions": (1,), "dtype": "i64", "index": (1, 0, 1),
                         "inputs": {"lhs": [[[1, 2], [3, 4]], [[5, 6], [7, 8]]],
                                    "rhs": [[[1, 0], [0, 1]], [[1, 0], [0, 1]]]}},
        # the spec example's shapes and dims with distinct rhs values: the spec's identity rhs
        # makes every result equal an lhs value, which hides the pairing (the gallery uses this)
        "gallery": {"lhs": (2, 2, 2), "rhs": (2, 2, 2), "lhs_batching_dimensions": (0,),
                    "rhs_batching_dimensions": (0,), "lhs_contracting_dimensions": (2,),
                    "rhs_contracting_dimensions": (1,), "dtype": "i64", "index": (1, 0, 1),
                    "inputs": {"lhs": [[[1, 2], [3, 4]], [[5, 6], [7, 8]]],
                               "rhs": [[[1, 2], [3, 4]], [[5, 6], [7, 8]]]}}},
        dot_build, doc="general dot product: batch, contract, outer product of the rest"))

    # the default pads the 5x5 image by 1 (a 7x7 frame), so the explorer shows padding at once
    register_schema(OpSchema("stablehlo.convolution", _conv_example_params(
        "low,high padding per spatial dim, or one int for all", 1,
    ), {"default": {},
        "spec-example": {"lhs": (1, 4, 4, 1), "rhs": (3, 3, 1, 1), "stride": (4, 4), "padding": 0,
                         "lhs_dilation": (2, 2), "rhs_dilation": (1, 1), "window_reversal": (0, 0),
                         "feature_group_count": 1, "batch_group_count": 1,
                         "dimension_numbers": "b01f,01io->b01f", "dtype": "i64", "index": (0, 1, 1, 0),
                         "inputs": {"lhs": [[[[1], [2], [5], [6]], [[3], [4], [7], [8]],
                                             [[10], [11], [14], [15]], [[12], [13], [16], [17]]]],
                                    "rhs": [[[[1]], [[1]], [[1]]]] * 3}}},
        lambda p: _conv_example_parts(p, padding_operand=False),
        doc="convolution: windows of lhs times the kernel rhs, summed"))


_contraction_schemas()


# --- more parameter schemas: dot, dynamic_conv ----------------------------------------------

def _contraction_more_schemas() -> None:
    from hlolab.ops.examples import (
        Operand,
        OpParts,
        OpSchema,
        dtype_param,
        enum_param,
        register_schema,
        shape_param,
        ttype,
    )

    precisions = ("DEFAULT", "HIGH", "HIGHEST")

    def dot_build(p: dict[str, Any]) -> OpParts:
        prec = EnumAttr("stablehlo", "precision", p["precision_config"])
        rec = DotAttrs(precision_config=ArrayAttr((prec, prec)))
        operands = [Operand("lhs", ttype(p["lhs"], p["dtype"])),
                    Operand("rhs", ttype(p["rhs"], p["dtype"]), restart=True)]
        return OpParts(operands, _result_types(infer_dot, rec, [o.type for o in operands], p["dtype"]),
                       rec)

    register_schema(OpSchema("stablehlo.dot", (
        shape_param("lhs", (2, 3), "the left-hand side: a vector or a matrix"),
        shape_param("rhs", (3, 2), "the right-hand side: a vector or a matrix"),
        enum_param("precision_config", precisions, "DEFAULT", "precision of both operands (a hint)"),
        dtype_param("f32"),
    ), {"default": {},
        "vector": {"lhs": (3,), "rhs": (3,), "index": ()}},
        dot_build, doc="the legacy dot: lhs's last dim contracted with rhs's first"))

    register_schema(OpSchema("stablehlo.dynamic_conv", (
        *_conv_example_params("the padding operand's value: low,high per spatial dim, or one int", 1),
        dtype_param("i64", "element type of the padding operand (an integer type)", "padding_dtype"),
    ), {"default": {"lhs": (1, 4, 4, 1)},
        "spec-example": {"lhs": (1, 4, 4, 1), "rhs": (3, 3, 1, 1), "padding": ((1, 1), (1, 1)),
                         "stride": (4, 4), "lhs_dilation": (2, 2), "rhs_dilation": (1, 1),
                         "window_reversal": (0, 0), "feature_group_count": 1, "batch_group_count": 1,
                         "dimension_numbers": "b01f,01io->b01f", "dtype": "i64", "padding_dtype": "i64",
                         "index": (0, 1, 1, 0),
                         "inputs": {"lhs": [[[[1], [2], [5], [6]], [[3], [4], [7], [8]],
                                             [[10], [11], [14], [15]], [[12], [13], [16], [17]]]],
                                    "rhs": [[[[1]], [[1]], [[1]]]] * 3}}},
        lambda p: _conv_example_parts(p, padding_operand=True),
        doc="convolution whose padding is an operand's value"))


_contraction_more_schemas()
