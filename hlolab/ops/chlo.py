"""CHLO ops: the client-level ops JAX prints (``chlo.acos``, ``chlo.square``, ``chlo.broadcast_add``...).

CHLO has no specification of its own: an op means what StableHLO's CHLO legalization
(``stablehlo/transforms/ChloLegalizeToStablehlo.cpp`` and the patterns of
``ChloDecompositionPatterns*.td``) rewrites it into. Each decomposed op here is that
rewrite, evaluated one StableHLO op at a time, each step rounded to its element type
as hlolab's StableHLO ops round (narrow floats computed in f32 and rounded once per
op). ``cosh`` and ``sinh`` upcast f16/bf16 (every float narrower than f32) to f32 for
the whole decomposition and round once at the end, as the legalization does
(``materializeWithUpcast``). ``explain`` replays the decomposition on one element and
shows every step with its numbers.

Constraint labels: ChloOps.td numbers no constraints, so hlolab uses the labels of the
StableHLO op each CHLO op lowers to: (I1)/(I2) for an operand's element kind, (C1) for
the type relation of operands and result; the broadcasting ops add (C2) for
``broadcast_dimensions``, (C3) for shapes that do not broadcast and (C4) for the result shape.

Broadcasting (``chlo.broadcast_*``): without ``broadcast_dimensions`` numpy's rule
(the lower-rank operand is aligned with the trailing result dims, size-1 dims
repeat). With it, dim d of the lower-rank operand lands on result dim
``broadcast_dimensions[d]`` (XLA's explicit rank broadcast); operands of equal rank
need no map, and ``broadcast_dimensions`` must then be the identity.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from hlolab.errors import ExecutionError, UnsupportedError
from hlolab.ir.attrs import Attr, DenseElementsAttr, FloatAttr, IntegerAttr
from hlolab.messages import Msg
from hlolab.numerics import float_format, from_bits, takes_first, to_bits
from hlolab.ops.common import contiguous, reject_quantized, same_element, tensor_type, wrap_int
from hlolab.ops.compare import COMPARE_TYPES, DIRECTIONS, compare_arrays, default_compare_type
from hlolab.ops.elementwise import as_complex, complex_atan2, complex_log1p
from hlolab.ops.record import Attrs, InferError, Inferred, attr, enum, ints, raw, record
from hlolab.ops.registry import OpCall, lookup, op
from hlolab.ops.shape import ConstantAttrs, infer_constant
from hlolab.ops.shape import constant as _stablehlo_constant
from hlolab.trace.explain import Explanation, Step, element_at, format_value
from hlolab.trace.provenance import (
    IndexMapProvenance,
    Provenance,
    check_index,
    elementwise_provenance,
    index_link,
    value_shape,
)
from hlolab.types import ALL_ELEMENT_TYPE_NAMES, ElementType, TensorType, Type, element_type

# --- element types ---------------------------------------------------------------------

_NARROW = frozenset(element_type(n).dtype for n in ALL_ELEMENT_TYPE_NAMES
                    if element_type(n).is_float and n not in ("f32", "f64"))
FLOAT = ("float",)
FLOAT_COMPLEX = ("float", "complex")
INT = ("sint", "uint")
PRED_INT = ("bool", "sint", "uint")
ANY = ("bool", "sint", "uint", "float", "complex")
_PHRASES = {FLOAT: "floating-point", FLOAT_COMPLEX: "floating-point or complex", INT: "integer",
            PRED_INT: "boolean or integer", ANY: "boolean, integer, floating-point or complex"}


def _plain(ctx: OpCall, i: int, what: str, kinds: tuple[str, ...]) -> TensorType:
    """Operand ``i`` as a tensor of one of ``kinds`` (I<i+1>); quantized tensors are refused."""
    label = f"I{i + 1}"
    if i >= len(ctx.operand_types):
        raise ctx.error(None, f"expects {what} as operand #{i}, the op has {len(ctx.operand_types)} operands")
    t = tensor_type(ctx, ctx.operand_types[i], label, what)
    if t.is_quantized or t.element.kind not in kinds:
        raise ctx.error(label, f"{what} must be a tensor of {_PHRASES[kinds]} type, got {t}")
    return t


def _count(ctx: OpCall, names: Sequence[str]) -> None:
    if len(ctx.operand_types) != len(names):
        raise ctx.error(None, f"expects {len(names)} operand(s) ({', '.join(names)}), "
                              f"got {len(ctx.operand_types)}")
    if len(ctx.result_types) != 1:
        raise ctx.error(None, f"expects 1 result, got {len(ctx.result_types)}")


def _result(ctx: OpCall) -> TensorType:
    return tensor_type(ctx, ctx.result_types[0], "C1", "result")


def _infer_operands(types: list[Type], names: Sequence[str]) -> list[TensorType]:
    if len(types) != len(names):
        raise InferError(None, f"expects {len(names)} operand(s) ({', '.join(names)}), got {len(types)}")
    for i, t in enumerate(types):
        if not isinstance(t, TensorType):
            raise InferError(f"I{i + 1}", f"{names[i]} must be a tensor, got {t}")
    return list(types)  # type: ignore[arg-type]


def _dims_agree(a: Sequence[int | None], b: Sequence[int | None]) -> bool:
    return len(a) == len(b) and all(x is None or y is None or x == y for x, y in zip(a, b, strict=True))


# --- a decomposition, one StableHLO op at a time ---------------------------------------

def _op_table() -> dict[str, Callable[..., np.ndarray]]:
    def sign(x: np.ndarray) -> np.ndarray:  # stablehlo.sign: NaN and +-0 are their own sign
        keep = np.isnan(x) | (x == 0)
        return np.where(keep, x, np.where(x > 0, 1, -1).astype(x.dtype))

    def extremum(is_max: bool) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
        return lambda a, b: np.where(takes_first(a, b, is_max), a, b)

    def per_kind(real: Callable, cplx: Callable) -> Callable[..., np.ndarray]:
        return lambda *a: cplx(*a) if a[0].dtype.kind == "c" else real(*a)

    return {
        "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
        "negate": np.negative, "abs": np.abs, "sqrt": np.sqrt, "log": np.log, "exponential": np.exp,
        "log_plus_one": per_kind(np.log1p, complex_log1p), "exponential_minus_one": np.expm1,
        "atan2": per_kind(np.arctan2, complex_atan2), "sine": np.sin, "cosine": np.cos,
        "tanh": np.tanh, "sign": sign, "maximum": extremum(True), "minimum": extremum(False),
        "real": np.real, "imag": np.imag, "and": np.logical_and, "or": np.logical_or,
        "not": np.logical_not, "select": np.where,
        **{d.lower(): getattr(np, f) for d, f in (("EQ", "equal"), ("NE", "not_equal"), ("LT", "less"),
                                                   ("LE", "less_equal"), ("GT", "greater"),
                                                   ("GE", "greater_equal"))},
    }


_OPS = _op_table()


class Decomposition:
    """Values of one decomposition by name, each step a StableHLO op rounded to its type.

    ``step_dtype`` is the element type the steps are rounded to (f32 where the
    legalization upcasts); reals narrower than f32 are computed in f32 between steps.
    With ``record``, every step is kept as (name, op, argument names, value) for explain.
    """

    def __init__(self, step_dtype: np.dtype, record: bool = False):
        self.dtype = np.dtype(step_dtype)
        self.real = np.dtype(self.dtype.type(0).real.dtype) if self.dtype.kind == "c" else self.dtype
        self.complex = self.dtype if self.dtype.kind == "c" else None
        self.record = record
        self.values: dict[str, np.ndarray] = {}
        self.steps: list[tuple[str, str, tuple[str, ...], np.ndarray]] = []

    def input(self, name: str, x: np.ndarray) -> str:
        self.values[name] = np.asarray(x).astype(self.dtype)
        return name

    def const(self, text: str, value: complex | float, cplx: bool = False) -> str:
        """constant_like(value, x): named by its text so formulas read ``1 - x``."""
        dt = self.complex if cplx and self.complex is not None else self.real
        with np.errstate(all="ignore"):
            self.values[text] = np.asarray(value).astype(dt)
        return text

    def _arg(self, name: str) -> np.ndarray:
        v = self.values[name]
        return v.astype(np.float32) if v.dtype in _NARROW else v

    def __call__(self, kind: str, name: str, *args: str) -> str:
        with np.errstate(all="ignore"):
            out = np.asarray(_OPS[kind](*(self._arg(a) for a in args)))
            if out.dtype != np.bool_:
                if kind == "select":
                    out = out.astype(self.values[args[1]].dtype)
                else:
                    out = out.astype(self.complex if out.dtype.kind == "c" else self.real)
        self.values[name] = out
        if self.record:
            self.steps.append((name, kind, args, out))
        return name

    def complex_of(self, name: str, re: str, im: str) -> str:
        """stablehlo.complex(re, im): the parts keep their bits."""
        assert self.complex is not None
        out = as_complex(*np.broadcast_arrays(self.values[re], self.values[im]), self.complex)
        self.values[name] = out
        if self.record:
            self.steps.append((name, "complex", (re, im), out))
        return name


# --- the decompositions (ChloDecompositionPatterns*.td, ChloLegalizeToStablehlo.cpp) ----

def _acos_real(d: Decomposition) -> str:
    """acos(x) = 2 * atan2(sqrt(1 - x * x), 1 + x) if x != -1, else pi (the legalization XLA:CPU
    runs; StableHLO's newer pattern writes (1 - x) * (1 + x) and drops the x = -1 case)."""
    one, two = d.const("1", 1), d.const("2", 2)
    d.const("-1", -1)
    d.const("pi", np.pi)
    d("multiply", "x_squared", "x", "x")
    d("subtract", "one_minus_x2", one, "x_squared")
    d("sqrt", "root", "one_minus_x2")
    d("add", "one_plus_x", one, "x")
    d("atan2", "half_angle", "root", "one_plus_x")
    d("multiply", "angle", two, "half_angle")
    d("ne", "not_minus_one", "x", "-1")
    return d("select", "result", "not_minus_one", "angle", "pi")


def _asin_real(d: Decomposition) -> str:
    """asin(x) = 2 * atan2(x, 1 + sqrt((1 - x) * (1 + x)))."""
    one, two = d.const("1", 1), d.const("2", 2)
    d("subtract", "one_minus_x", one, "x")
    d("add", "one_plus_x", one, "x")
    d("multiply", "product", "one_minus_x", "one_plus_x")
    d("sqrt", "root", "product")
    d("add", "denominator", one, "root")
    d("atan2", "half_angle", "x", "denominator")
    return d("multiply", "result", two, "half_angle")


def _hypot(d: Decomposition, p: str, a: str, b: str) -> str:
    """The decomposition's overflow-safe hypot(a, b) (a, b >= 0), steps prefixed ``p``."""
    d("maximum", f"{p}_mx", a, b)
    d("minimum", f"{p}_mn", a, b)
    d("eq", f"{p}_equal", f"{p}_mx", f"{p}_mn")
    d("multiply", f"{p}_sqrt2_mx", "sqrt_two", f"{p}_mx")
    d("divide", f"{p}_mn_over_mx", f"{p}_mn", f"{p}_mx")
    d("multiply", f"{p}_r", f"{p}_mn_over_mx", f"{p}_mn_over_mx")
    d("add", f"{p}_one_plus_r", "1", f"{p}_r")
    d("sqrt", f"{p}_sqa", f"{p}_one_plus_r")
    d("eq", f"{p}_sqa_is_one", f"{p}_sqa", "1")
    d("gt", f"{p}_r_positive", f"{p}_r", "0")
    d("and", f"{p}_tiny_r", f"{p}_sqa_is_one", f"{p}_r_positive")
    d("multiply", f"{p}_mx_r", f"{p}_mx", f"{p}_r")
    d("divide", f"{p}_mx_r_half", f"{p}_mx_r", "2")
    d("add", f"{p}_series", f"{p}_mx", f"{p}_mx_r_half")
    d("multiply", f"{p}_mx_sqa", f"{p}_mx", f"{p}_sqa")
    d("select", f"{p}_inner", f"{p}_tiny_r", f"{p}_series", f"{p}_mx_sqa")
    return d("select", p, f"{p}_equal", f"{p}_sqrt2_mx", f"{p}_inner")


def _asin_acos_parts(d: Decomposition, z: str) -> tuple[str, str, str]:
    """The modified Hull et al. algorithm shared by complex asin and acos: returns the names
    of (q, p, imag) where real(asin z) = atan2(p, q), real(acos z) = atan2(q, p) and imag is
    |imag(asin z)| (the sign is applied by the caller)."""
    d("real", "signed_x", z)
    d("imag", "signed_y", z)
    d("abs", "ax", "signed_x")
    d("abs", "ay", "signed_y")
    for text, value in (("0", 0), ("1", 1), ("2", 2), ("0.5", 0.5), ("8", 8), ("4", 4), ("1.5", 1.5),
                        ("1e12", 1e12), ("1e-6", 1e-6), ("100", 100), ("inf", np.inf)):
        d.const(text, value)
    d.const("max", float_format(d.real).max_finite)
    d.const("tiny", 2.0 ** float_format(d.real).min_exp)
    d("sqrt", "sqrt_max", "max")
    d("divide", "safe_max", "sqrt_max", "8")
    d("sqrt", "sqrt_two", "2")
    d("add", "xp1", "ax", "1")
    d("abs", "abs_xp1", "xp1")
    r = _hypot(d, "r", "abs_xp1", "ay")
    d("subtract", "xm1", "ax", "1")
    d("abs", "abs_xm1", "xm1")
    s = _hypot(d, "s", "abs_xm1", "ay")
    d("add", "r_plus_s", r, s)
    d("multiply", "a", "0.5", "r_plus_s")
    d("add", "a_plus_x", "a", "ax")
    d("multiply", "half_apx", "0.5", "a_plus_x")
    d("multiply", "yy", "ay", "ay")
    d("add", "rpxp1", r, "xp1")
    d("subtract", "smxm1", s, "xm1")
    d("add", "spxm1", s, "xm1")
    # real part: q in atan2(x, q)
    d("maximum", "max_xy", "ax", "ay")
    d("ge", "huge", "max_xy", "safe_max")
    d("le", "x_le_one", "ax", "1")
    d("divide", "yy_over_rpxp1", "yy", "rpxp1")
    d("add", "q_sum", "yy_over_rpxp1", "smxm1")
    d("multiply", "q_product", "half_apx", "q_sum")
    d("sqrt", "q_small_x", "q_product")
    d("divide", "h_over_rpxp1", "half_apx", "rpxp1")
    d("divide", "h_over_spxm1", "half_apx", "spxm1")
    d("add", "q_terms", "h_over_rpxp1", "h_over_spxm1")
    d("sqrt", "q_root", "q_terms")
    d("multiply", "q_large_x", "ay", "q_root")
    d("select", "q_finite", "x_le_one", "q_small_x", "q_large_x")
    q = d("select", "q", "huge", "ay", "q_finite")
    # imaginary part
    d("multiply", "safe_max_e12", "safe_max", "1e12")
    d("lt", "x_moderate", "ax", "safe_max_e12")
    d("multiply", "safe_max_small", "safe_max", "1e-6")
    d("multiply", "safe_max_large", "safe_max", "100")
    d("select", "safe_max_opt", "x_moderate", "safe_max_small", "safe_max_large")
    d("ge", "y_gt_safe_max_opt", "ay", "safe_max_opt")
    d("select", "mx", "y_gt_safe_max_opt", "ay", "ax")
    d("select", "threshold", "y_gt_safe_max_opt", "safe_max_opt", "safe_max")
    d("eq", "y_is_inf", "ay", "inf")
    d("not", "y_finite", "y_is_inf")
    d("and", "use_xoy", "y_gt_safe_max_opt", "y_finite")
    d("divide", "x_over_y", "ax", "ay")
    d("select", "xoy", "use_xoy", "x_over_y", "0")
    d("multiply", "xoy2", "xoy", "xoy")
    d("log_plus_one", "log1p_xoy2", "xoy2")
    d("multiply", "half_log1p_xoy2", "0.5", "log1p_xoy2")
    d("log", "log_two", "2")
    d("log", "log_mx", "mx")
    d("add", "log_two_mx", "log_two", "log_mx")
    d("add", "imag_huge", "log_two_mx", "half_log1p_xoy2")
    d("sqrt", "sqrt_tiny", "tiny")
    d("multiply", "safe_min", "sqrt_tiny", "4")
    d("lt", "y_tiny", "ay", "safe_min")
    d("lt", "x_lt_one", "ax", "1")
    d("and", "small", "y_tiny", "x_lt_one")
    d("add", "ap1", "a", "1")
    d("multiply", "xp1_xm1", "xp1", "xm1")
    d("divide", "ratio", "xp1_xm1", "ap1")
    d("negate", "am1_small", "ratio")
    d("multiply", "half_yy", "0.5", "yy")
    d("divide", "half_yy_over_rpxp1", "half_yy", "rpxp1")
    d("multiply", "half_spxm1", "0.5", "spxm1")
    d("add", "am1_x_ge_one", "half_yy_over_rpxp1", "half_spxm1")
    d("divide", "half_yy_over_smxm1", "half_yy", "smxm1")
    d("add", "am1_near", "half_yy_over_rpxp1", "half_yy_over_smxm1")
    d("subtract", "a_minus_one", "a", "1")
    d("le", "a_le_1.5", "a", "1.5")
    d("select", "am1_x_lt_one", "a_le_1.5", "am1_near", "a_minus_one")
    d("ge", "x_ge_one", "ax", "1")
    d("select", "am1_general", "x_ge_one", "am1_x_ge_one", "am1_x_lt_one")
    d("select", "am1", "small", "am1_small", "am1_general")
    d("multiply", "am1_ap1", "am1", "ap1")
    d("sqrt", "sq", "am1_ap1")
    d("divide", "imag_small", "ay", "sq")
    d("add", "am1_plus_sq", "am1", "sq")
    d("log_plus_one", "imag_safe", "am1_plus_sq")
    d("select", "imag_moderate", "small", "imag_small", "imag_safe")
    d("ge", "use_huge", "mx", "threshold")
    imag = d("select", "imag", "use_huge", "imag_huge", "imag_moderate")
    d("lt", "y_negative", "signed_y", "0")
    return q, "signed_x", imag


def _asin_complex(d: Decomposition, z: str = "x") -> str:
    """asin(z) = complex(atan2(x, q), +-imag) by the modified Hull et al. algorithm."""
    q, p, imag = _asin_acos_parts(d, z)
    d("atan2", "asin_real", p, q)
    d("negate", "minus_imag", imag)
    d("select", "asin_imag", "y_negative", "minus_imag", imag)
    return d.complex_of("asin", "asin_real", "asin_imag")


def _acos_complex(d: Decomposition, z: str = "x") -> str:
    """acos(z) = complex(atan2(q, x), -+imag) by the modified Hull et al. algorithm."""
    q, p, imag = _asin_acos_parts(d, z)
    d("atan2", "acos_real", q, p)
    d("negate", "minus_imag", imag)
    d("select", "acos_imag", "y_negative", imag, "minus_imag")
    return d.complex_of("acos", "acos_real", "acos_imag")


def _acosh_real(d: Decomposition) -> str:
    """acosh(x) = log(2) + log(x) if x >= max / 2, else log1p(sqrt(x - 1) * (sqrt(x + 1) + sqrt(x - 1)))."""
    d.const("max", float_format(d.real).max_finite)
    two, one = d.const("2", 2), d.const("1", 1)
    d("divide", "half_max", "max", two)
    d("ge", "large", "x", "half_max")
    d("log", "log_two", two)
    d("log", "log_x", "x")
    d("add", "large_result", "log_two", "log_x")
    d("subtract", "x_minus_one", "x", one)
    d("sqrt", "sqrt_x_minus_one", "x_minus_one")
    d("add", "x_plus_one", "x", one)
    d("sqrt", "sqrt_x_plus_one", "x_plus_one")
    d("add", "sqrt_sum", "sqrt_x_plus_one", "sqrt_x_minus_one")
    d("multiply", "product", "sqrt_x_minus_one", "sqrt_sum")
    d("log_plus_one", "small_result", "product")
    return d("select", "result", "large", "large_result", "small_result")


def _acosh_complex(d: Decomposition) -> str:
    """acosh(z) = i * acos(z) when imag(z) >= 0, else -i * acos(z)."""
    _acos_complex(d)
    d("negate", "minus_acos_imag", "acos_imag")
    d.complex_of("i_acos", "minus_acos_imag", "acos_real")
    d("negate", "minus_i_acos", "i_acos")
    return d("select", "result", "y_negative", "minus_i_acos", "i_acos")


def _asinh_real(d: Decomposition) -> str:
    """asinh(x) = sign(x) * (log(2) + log|x| if |x| >= sqrt(max), else
    log1p(|x| + |x|^2 / (1 + sqrt(1 + |x|^2))))."""
    d.const("max", float_format(d.real).max_finite)
    two, one = d.const("2", 2), d.const("1", 1)
    d("abs", "ax", "x")
    d("sqrt", "sqrt_max", "max")
    d("ge", "large", "ax", "sqrt_max")
    d("log", "log_two", two)
    d("log", "log_ax", "ax")
    d("add", "large_result", "log_two", "log_ax")
    d("multiply", "ax2", "ax", "ax")
    d("add", "one_plus_ax2", one, "ax2")
    d("sqrt", "hypot", "one_plus_ax2")
    d("add", "one_plus_hypot", one, "hypot")
    d("divide", "quotient", "ax2", "one_plus_hypot")
    d("add", "sum", "ax", "quotient")
    d("log_plus_one", "small_result", "sum")
    d("select", "magnitude", "large", "large_result", "small_result")
    d("sign", "sign_x", "x")
    return d("multiply", "result", "sign_x", "magnitude")


def _asinh_complex(d: Decomposition) -> str:
    """asinh(z) = -i * asin(i * z)."""
    d("real", "re", "x")
    d("imag", "im", "x")
    d("negate", "minus_im", "im")
    d.complex_of("iz", "minus_im", "re")
    _asin_complex(d, "iz")
    d("negate", "minus_asin_real", "asin_real")
    return d.complex_of("result", "asin_imag", "minus_asin_real")


def _atan(d: Decomposition) -> str:
    """atan(x) = atan2(x, 1)."""
    one = d.const("1", 1, cplx=True)
    return d("atan2", "result", "x", one)


def _atanh(d: Decomposition) -> str:
    """atanh(x) = (log1p(x) - log1p(-x)) * 0.5, NaN where |x| > 1 (real x)."""
    half = d.const("0.5", 0.5, cplx=True)
    d("log_plus_one", "log1p_x", "x")
    d("negate", "minus_x", "x")
    d("log_plus_one", "log1p_minus_x", "minus_x")
    d("subtract", "difference", "log1p_x", "log1p_minus_x")
    out = d("multiply", "product", "difference", half)
    if d.complex is not None:
        return out
    d.const("1", 1)
    d.const("nan", np.nan)
    d("abs", "ax", "x")
    d("gt", "outside", "ax", "1")
    return d("select", "result", "outside", "nan", out)


def _cosh(d: Decomposition) -> str:
    """cosh(x) = exp(x + log(1/2)) + exp(log(1/2) - x)."""
    d.const("0.5", 0.5, cplx=True)
    d("log", "log_half", "0.5")
    d("add", "x_plus", "x", "log_half")
    d("exponential", "exp_plus", "x_plus")
    d("subtract", "minus_x_plus", "log_half", "x")
    d("exponential", "exp_minus", "minus_x_plus")
    return d("add", "result", "exp_plus", "exp_minus")


def _sinh_large(d: Decomposition) -> str:
    d.const("0.5", 0.5, cplx=True)
    d("log", "log_half", "0.5")
    d("add", "x_plus", "x", "log_half")
    d("exponential", "exp_plus", "x_plus")
    d("subtract", "minus_x_plus", "log_half", "x")
    d("exponential", "exp_minus", "minus_x_plus")
    return d("subtract", "large_result", "exp_plus", "exp_minus")


def _sinh(d: Decomposition) -> str:
    """sinh(x) = 0.5 * (expm1(x) + expm1(x) / (expm1(x) + 1)) if |x| < 1, else
    exp(x + log(1/2)) - exp(log(1/2) - x) (complex: always the second form)."""
    large = _sinh_large(d)
    if d.complex is not None:
        return large
    one = d.const("1", 1)
    d("exponential_minus_one", "expm1", "x")
    d("add", "expm1_plus_one", "expm1", one)
    d("divide", "ratio", "expm1", "expm1_plus_one")
    d("add", "sum", "expm1", "ratio")
    d("multiply", "small_result", "0.5", "sum")
    d("abs", "ax", "x")
    d("lt", "small", "ax", one)
    return d("select", "result", "small", "small_result", large)


def _tan(d: Decomposition) -> str:
    """tan(x) = sin(x) / cos(x); complex a + bi: (tan(a) + i tanh(b)) / (1 - i tan(a) tanh(b))."""
    if d.complex is None:
        d("sine", "sin_x", "x")
        d("cosine", "cos_x", "x")
        return d("divide", "result", "sin_x", "cos_x")
    d("real", "a", "x")
    d("imag", "b", "x")
    d("sine", "sin_a", "a")
    d("cosine", "cos_a", "a")
    d("divide", "tan_a", "sin_a", "cos_a")
    d("tanh", "tanh_b", "b")
    d.complex_of("numerator", "tan_a", "tanh_b")
    d.const("1", 1)
    d("multiply", "tan_tanh", "tan_a", "tanh_b")
    d("negate", "minus_tan_tanh", "tan_tanh")
    d.complex_of("denominator", "1", "minus_tan_tanh")
    return d("divide", "result", "numerator", "denominator")


def _square(d: Decomposition) -> str:
    """square(x) = x * x; complex x + yi: complex((x - y) * (x + y), 2 * (x * y)), with a
    real part of exactly 0 where |x| = |y| and x is finite."""
    if d.complex is None:
        return d("multiply", "result", "x", "x")
    d("real", "re", "x")
    d("imag", "im", "x")
    d.const("0", 0)
    d.const("2", 2)
    d("subtract", "re_minus_im", "re", "im")
    d("add", "re_plus_im", "re", "im")
    d("multiply", "difference_of_squares", "re_minus_im", "re_plus_im")
    d("abs", "abs_re", "re")
    d("abs", "abs_im", "im")
    d.const("inf", np.inf)
    d("eq", "equal_magnitudes", "abs_re", "abs_im")
    d("lt", "re_finite", "abs_re", "inf")
    d("and", "exact_zero", "re_finite", "equal_magnitudes")
    d("select", "real_part", "exact_zero", "0", "difference_of_squares")
    d("multiply", "re_im", "re", "im")
    d("multiply", "imag_part", "2", "re_im")
    return d.complex_of("result", "real_part", "imag_part")


# --- registration: unary decomposed ops --------------------------------------------------

# op -> (decomposition of real operands, of complex operands or None, upcast narrow floats to f32)
DecompFn = Callable[[Decomposition], str]
UNARY: dict[str, tuple[DecompFn, DecompFn | None, bool]] = {
    "acos": (_acos_real, _acos_complex, False),
    "acosh": (_acosh_real, _acosh_complex, False),
    "asin": (_asin_real, _asin_complex, False),
    "asinh": (_asinh_real, _asinh_complex, False),
    "atan": (_atan, _atan, False),
    "atanh": (_atanh, _atanh, False),
    "cosh": (_cosh, _cosh, True),
    "sinh": (_sinh, _sinh, True),
    "tan": (_tan, _tan, False),
    "square": (_square, _square, False),
}


def decompose(short: str, x: np.ndarray, record: bool = False) -> tuple[np.ndarray, Decomposition]:
    """Evaluate chlo.``short`` on ``x`` by its legalization: (result in x's type, the steps)."""
    real_fn, complex_fn, upcast = UNARY[short]
    is_complex = x.dtype.kind == "c"
    fn = complex_fn if is_complex else real_fn
    if fn is None:
        raise UnsupportedError(f"chlo.{short} of complex numbers has no decomposition")
    step = np.dtype(np.float32) if upcast and not is_complex and x.dtype in _NARROW else x.dtype
    d = Decomposition(step, record)
    d.input("x", x)
    out = fn(d)
    return d.values[out].astype(x.dtype), d


def _verify_unary(kinds: tuple[str, ...]) -> Callable[[OpCall], None]:
    def verify(ctx: OpCall) -> None:
        _count(ctx, ("operand",))
        operand = _plain(ctx, 0, "operand", kinds)
        result = _result(ctx)
        if not (_dims_agree(operand.shape, result.shape) and same_element(operand.element, result.element)):
            raise ctx.error("C1", f"type(result) = {result} must equal type(operand) = {operand}")

    return verify


def _infer_same(n: int) -> Callable[[Attrs, list[Type]], list[Inferred]]:
    names = ("operand",) if n == 1 else ("lhs", "rhs")

    def infer(attrs: Attrs, types: list[Type]) -> list[Inferred]:
        ts = _infer_operands(types, names)
        if n == 2 and not (_dims_agree(ts[0].shape, ts[1].shape)
                           and same_element(ts[0].element, ts[1].element)):
            raise InferError("C1", f"type(lhs) = {ts[0]} must equal type(rhs) = {ts[1]}")
        return [ts[0]]

    return infer


def _explain_decomposed(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
                        index: tuple) -> Explanation:
    short = ctx.name.removeprefix("chlo.")
    idx = check_index(value_shape(outputs[result]), index, f"result #{result} index")
    x = np.asarray(element_at(inputs[0], idx))
    value, d = decompose(short, x, record=True)
    where = ", ".join(str(i) for i in idx)
    name = ctx.op.operands[0].name if ctx.op.operands else "operand"
    steps = [Step("x", Msg("explain.element", name=name, index=where), x)]
    for step_name, kind, args, v in d.steps:
        steps.append(Step(step_name, Msg(f"chlo.op.{kind}", **_arg_fields(args)), v,
                          substituted=Msg(f"chlo.op.{kind}",
                                          **_arg_fields([format_value(d.values[a]) for a in args]))))
    out = outputs[result][idx]
    steps.append(Step(f"result[{where}]", Msg("chlo.explain.rounded", type=str(_element(ctx, 0))), out))
    notes = [Msg(f"chlo.{short}.formula")]
    if d.dtype != x.dtype:
        notes.append(Msg("chlo.explain.upcast", type=str(_element(ctx, 0)), step=str(d.dtype)))
    return Explanation(ctx.op.name, idx, steps, out, notes, result)


def _arg_fields(args: Sequence[Any]) -> dict[str, Any]:
    return {f"a{i}": a for i, a in enumerate(args)}


def _element(ctx: OpCall, i: int) -> Any:
    t = ctx.operand_types[i]
    return t.element if isinstance(t, TensorType) else t


def unary_schema(name: str, dtype: str, inputs: Any, kinds_doc: str) -> None:
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
        o = Operand("operand", ttype(p["shape"], p["dtype"]))
        res = ttype(p["shape"], "i1" if name.startswith("chlo.is_") else p["dtype"])
        return OpParts([o], [res], {})

    presets: dict[str, dict[str, Any]] = {"default": {"inputs": {"operand": inputs}}}
    register_schema(OpSchema(name, (shape_param("shape", (2, 3), "shape of the operand and the result"),
                                    dtype_param(dtype, kinds_doc)), presets, build,
                             doc=f"{name.removeprefix('chlo.')}: CHLO element-wise"))


def _register_unary(short: str) -> None:
    name = f"chlo.{short}"

    def evaluate(ctx: OpCall, operand: np.ndarray) -> np.ndarray:
        reject_quantized(ctx)
        return decompose(short, np.asarray(operand))[0]

    evaluate.__doc__ = UNARY[short][0].__doc__
    evaluate.__name__ = short
    op(name, verify=_verify_unary(FLOAT_COMPLEX), provenance=elementwise_provenance,
       explain=_explain_decomposed, elementwise=True, infer=_infer_same(1), family="elementwise")(evaluate)


_INPUTS = {"acos": [[-1, -0.5, 0], [0.25, 0.5, 1]], "asin": [[-1, -0.5, 0], [0.25, 0.5, 1]],
           "atanh": [[-0.9, -0.5, 0], [0.25, 0.5, 0.99]], "acosh": [[1, 1.5, 2], [4, 10, 100]]}
for _short in UNARY:
    _register_unary(_short)
    unary_schema(f"chlo.{_short}", "f32", _INPUTS.get(_short, [[-2, -1, -0.5], [0, 0.5, 2]]),
                  "element type (float or complex)")


# --- conj, is_inf, is_neg_inf, is_pos_inf -------------------------------------------------

def _explain_pointwise(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
                       index: tuple) -> Explanation:
    """The operand elements and the op's formula (ops that are one StableHLO op or a bit trick)."""
    from hlolab.trace.explain import elementwise_explain

    e = elementwise_explain(ctx, inputs, outputs, result, index)
    e.notes.append(Msg(f"chlo.{ctx.name.removeprefix('chlo.')}.formula"))
    return e


@op("chlo.conj", verify=_verify_unary(FLOAT_COMPLEX), provenance=elementwise_provenance,
    explain=_explain_pointwise, elementwise=True, infer=_infer_same(1), family="elementwise")
def conj(ctx: OpCall, operand: np.ndarray) -> np.ndarray:
    """conj(x) = complex(real(x), -imag(x)); a real x is its own conjugate."""
    reject_quantized(ctx)
    if operand.dtype.kind != "c":
        return operand.copy()
    return as_complex(operand.real, -operand.imag, operand.dtype)


def _verify_predicate(ctx: OpCall) -> None:
    _count(ctx, ("operand",))
    operand = _plain(ctx, 0, "operand", FLOAT)
    result = _result(ctx)
    if result.is_quantized or not result.element.is_bool or not _dims_agree(operand.shape, result.shape):
        raise ctx.error("C1", f"result must be a tensor of i1 with shape(operand) = {list(operand.shape)}, "
                              f"got {result}")


def _infer_predicate(attrs: Attrs, types: list[Type]) -> list[Inferred]:
    (operand,) = _infer_operands(types, ("operand",))
    return [TensorType(operand.shape, element_type("i1"))]


_PREDICATE_FNS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "is_inf": lambda x: np.abs(x) == np.inf,  # is_pos_inf(|x|)
    "is_pos_inf": lambda x: x == np.inf,
    "is_neg_inf": lambda x: x == -np.inf,
}


def _register_predicate(short: str) -> None:
    def evaluate(ctx: OpCall, operand: np.ndarray) -> np.ndarray:
        reject_quantized(ctx)
        x = operand.astype(np.float32) if operand.dtype in _NARROW else operand
        with np.errstate(all="ignore"):
            return np.asarray(_PREDICATE_FNS[short](x), dtype=np.bool_)

    evaluate.__doc__ = {"is_inf": "is_inf(x) = is_pos_inf(abs(x)) = (abs(x) == +inf).",
                        "is_pos_inf": "is_pos_inf(x) = (x == +inf).",
                        "is_neg_inf": "is_neg_inf(x) = (x == -inf)."}[short]
    evaluate.__name__ = short
    op(f"chlo.{short}", verify=_verify_predicate, provenance=elementwise_provenance,
       explain=_explain_pointwise, elementwise=True, infer=_infer_predicate, family="elementwise")(evaluate)


for _short in _PREDICATE_FNS:
    _register_predicate(_short)
    unary_schema(f"chlo.{_short}", "f32", [[-np.inf, -1, 0], [1, np.inf, np.nan]], "float element type")
unary_schema("chlo.conj", "complex<f32>", [[1 + 2j, -1 - 1j, 0], [3j, 2, -2 + 0.5j]],
              "element type (complex or float)")


# --- next_after, mulhi ----------------------------------------------------------------------

def next_after_values(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The legalization's bit-level nextafter: y when x == y (or both are zero), the smallest
    subnormal signed like y when x is zero, x's bits +-1 toward y otherwise, NaN on NaN."""
    fmt = float_format(x.dtype)
    xb, yb = to_bits(x).astype(np.uint64), to_bits(y).astype(np.uint64)
    sign = np.uint64(fmt.sign_mask)
    with np.errstate(invalid="ignore"):
        wx = x.astype(np.float32) if x.dtype in _NARROW else x
        wy = y.astype(np.float32) if y.dtype in _NARROW else y
        nan_in = np.isnan(wx) | np.isnan(wy)
        equal = wx == wy
    x_abs, y_abs = xb & ~sign, yb & ~sign
    toward_zero = (x_abs > y_abs) | ((xb & sign) != (yb & sign))
    out = np.where(toward_zero, xb - np.uint64(1), xb + np.uint64(1))
    out = np.where(x_abs == 0, np.where(y_abs == 0, yb, (yb & sign) | np.uint64(1)), out)
    out = np.where(equal, yb, out)
    nan_bits = to_bits(np.asarray([np.nan]).astype(x.dtype)).astype(np.uint64)[0]
    out = np.where(nan_in, nan_bits, out)
    return from_bits(out & np.uint64(fmt.bits_mask), x.dtype).reshape(x.shape)


def _verify_same_binary(kinds: tuple[str, ...]) -> Callable[[OpCall], None]:
    def verify(ctx: OpCall) -> None:
        _count(ctx, ("lhs", "rhs"))
        lhs = _plain(ctx, 0, "lhs", kinds)
        rhs = _plain(ctx, 1, "rhs", kinds)
        result = _result(ctx)
        ok = all(_dims_agree(lhs.shape, t.shape) and same_element(lhs.element, t.element)
                 for t in (rhs, result))
        if not ok:
            raise ctx.error("C1", "type(lhs) = type(rhs) = type(result) must hold, got "
                                  f"({lhs}, {rhs}) -> {result}")

    return verify


def _same_shapes(ctx: OpCall, *args: np.ndarray) -> None:
    if len({a.shape for a in args}) > 1:
        raise ExecutionError(f"{ctx.name}: operands have different shapes at run time: "
                             f"{', '.join(str(a.shape) for a in args)}", ctx.loc)


@op("chlo.next_after", verify=_verify_same_binary(FLOAT), provenance=elementwise_provenance,
    explain=_explain_pointwise, elementwise=True, infer=_infer_same(2), family="elementwise")
def next_after(ctx: OpCall, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The next representable value after x in the direction of y (C++ std::nextafter)."""
    reject_quantized(ctx)
    _same_shapes(ctx, x, y)
    return next_after_values(x, y)


def mulhi_values(lhs: np.ndarray, rhs: np.ndarray, et: ElementType) -> np.ndarray:
    """The high half of the double-width product lhs * rhs, in lhs's type."""
    bits = et.bits
    if bits <= 32:  # the product fits 64 bits: the legalization's upcast, multiply, shift
        wide = np.int64 if et.is_signed else np.uint64
        product = lhs.astype(wide) * rhs.astype(wide)
        return wrap_int(product >> wide(bits), et)
    a, b = lhs.astype(np.uint64), rhs.astype(np.uint64)  # 64 bits: 32-bit limbs
    mask = np.uint64(0xFFFFFFFF)
    half = np.uint64(32)
    a_lo, a_hi, b_lo, b_hi = a & mask, a >> half, b & mask, b >> half
    lo_lo, hi_lo, lo_hi, hi_hi = a_lo * b_lo, a_hi * b_lo, a_lo * b_hi, a_hi * b_hi
    middle = (lo_lo >> half) + (hi_lo & mask) + (lo_hi & mask)
    high = hi_hi + (hi_lo >> half) + (lo_hi >> half) + (middle >> half)
    if et.is_signed:  # signed high half = unsigned high half - (a < 0 ? b : 0) - (b < 0 ? a : 0)
        high = high - np.where(lhs < 0, b, np.uint64(0)) - np.where(rhs < 0, a, np.uint64(0))
    return high.astype(lhs.dtype)


@op("chlo.mulhi", verify=_verify_same_binary(INT), provenance=elementwise_provenance,
    explain=_explain_pointwise, elementwise=True, infer=_infer_same(2), family="elementwise")
def mulhi(ctx: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """The high bits of the double-width product: (lhs * rhs) >> bitwidth."""
    reject_quantized(ctx)
    _same_shapes(ctx, lhs, rhs)
    et = _element(ctx, 0)
    with np.errstate(over="ignore"):
        return mulhi_values(lhs, rhs, et)


def binary_schema(name: str, dtype: str, lhs: Any, rhs: Any, doc: str) -> None:
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
        ops = [Operand(n, ttype(p["shape"], p["dtype"])) for n in ("lhs", "rhs")]
        return OpParts(ops, [ttype(p["shape"], p["dtype"])], {})

    register_schema(OpSchema(name, (shape_param("shape", (2, 3), "shape of the operands and the result"),
                                    dtype_param(dtype, doc)),
                             {"default": {"inputs": {"lhs": lhs, "rhs": rhs}}}, build,
                             doc=f"{name.removeprefix('chlo.')}: CHLO element-wise"))


binary_schema("chlo.next_after", "f32", [[0, 1, -1], [1, 0, -0.0]], [[1, 2, -2], [0, -1, 1]],
               "float element type")
binary_schema("chlo.mulhi", "i8", [[64, -64, 100], [127, -128, 3]], [[4, 4, -100], [127, -128, 5]],
               "integer element type")


# --- constant, constant_like ------------------------------------------------------------------

def _verify_chlo_constant(ctx: OpCall) -> None:
    if ctx.operand_types or len(ctx.result_types) != 1:
        raise ctx.error(None, "expects no operands and 1 result")
    vt = ctx.attrs.value.type
    out = ctx.result_types[0]
    if not (isinstance(out, TensorType) and _dims_agree(vt.shape, out.shape)
            and same_element(vt.element, out.element)):
        raise ctx.error("C1", f"type(value) = {vt} must equal type(output) = {out}")


def _explain_constant(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
                      index: tuple) -> Explanation:
    idx = check_index(value_shape(outputs[0]), index, "result index")
    v = outputs[0][idx]
    where = ", ".join(str(i) for i in idx)
    step = Step(f"output[{where}]", Msg("explain.element", name="value", index=where), v)
    return Explanation(ctx.op.name, idx, [step], v, [Msg("chlo.constant.formula")], 0)


def _no_links(ctx: OpCall, inputs: list[Any], outputs: list[Any]) -> Provenance:
    return IndexMapProvenance([value_shape(o) for o in outputs], [value_shape(i) for i in inputs],
                              [[] for _ in outputs])


op("chlo.constant", verify=_verify_chlo_constant, attrs=ConstantAttrs, infer=infer_constant,
   family="shape", provenance=_no_links, explain=_explain_constant, elementwise=True)(_stablehlo_constant)


@record
class ConstantLikeAttrs(Attrs):
    value: Attr = attr(raw("value", FloatAttr, IntegerAttr, DenseElementsAttr, what="a typed scalar"))


def _value_element(a: ConstantLikeAttrs) -> Any:
    v = a.value
    return v.type.element if isinstance(v, DenseElementsAttr) else v.type


def _verify_constant_like(ctx: OpCall) -> None:
    _count(ctx, ("operand",))
    operand = tensor_type(ctx, ctx.operand_types[0], "I1", "operand")
    result = _result(ctx)
    e = _value_element(ctx.attrs)
    if e is None:
        raise ctx.error("C1", f"value {ctx.attrs.value} must carry its type (e.g. 1.0 : f32)")
    if isinstance(ctx.attrs.value, DenseElementsAttr) and ctx.attrs.value.type.rank != 0:
        raise ctx.error("C1", f"value must be a scalar, got {ctx.attrs.value.type}")
    if not (_dims_agree(operand.shape, result.shape) and same_element(e, result.element)):
        raise ctx.error("C1", f"result must have shape(operand) = {list(operand.shape)} and the value's "
                              f"type {e}, got {result}")


def _infer_constant_like(a: ConstantLikeAttrs, types: list[Type]) -> list[Inferred]:
    (operand,) = _infer_operands(types, ("operand",))
    e = _value_element(a)
    if e is None:
        raise InferError("C1", f"value {a.value} must carry its type")
    return [TensorType(operand.shape, e)]


@op("chlo.constant_like", verify=_verify_constant_like, attrs=ConstantLikeAttrs, infer=_infer_constant_like,
    family="shape", provenance=_no_links, explain=_explain_constant, elementwise=True)
def constant_like(ctx: OpCall, operand: np.ndarray) -> np.ndarray:
    """A splat of ``value`` with the operand's shape (the operand's values are not read)."""
    v = ctx.attrs.value
    scalar = np.asarray(v.array).reshape(()) if isinstance(v, DenseElementsAttr) else np.asarray(v.value)
    with np.errstate(all="ignore"):
        return np.full(np.shape(operand), scalar.astype(ctx.result_dtype()), dtype=ctx.result_dtype())


# --- broadcasting binary ops -------------------------------------------------------------------

@record
class BroadcastAttrs(Attrs):
    broadcast_dimensions: tuple[int, ...] | None = attr(ints("broadcast_dimensions"), default=None)


@record
class BroadcastCompareAttrs(Attrs):
    broadcast_dimensions: tuple[int, ...] | None = attr(ints("broadcast_dimensions"), default=None)
    comparison_direction: str = attr(enum("comparison_direction", "comparison_direction", DIRECTIONS,
                                          dialect="chlo"))
    compare_type: str | None = attr(enum("compare_type", "comparison_type", ("NOTYPE", *COMPARE_TYPES),
                                         dialect="chlo"), default=None)


Shape = tuple[int | None, ...]


def broadcast_maps(shapes: Sequence[Shape], dims: Sequence[int] | None,
                   err: Callable[[str | None, str], Exception]) -> tuple[Shape, list[tuple[int, ...]]]:
    """The result shape and, per operand, the result dim each operand dim lands on."""
    rank = max(len(s) for s in shapes)
    maps: list[tuple[int, ...]] = []
    for i, s in enumerate(shapes):
        if dims is not None and len(s) < rank:
            m = tuple(dims)
            if len(m) != len(s):
                raise err("C2", f"size(broadcast_dimensions) = {len(m)} must equal the rank {len(s)} of "
                                f"the lower-rank operand #{i}")
            if any(not 0 <= d < rank for d in m) or list(m) != sorted(set(m)):
                raise err("C2", f"broadcast_dimensions = {list(m)} must be increasing dims in [0, {rank})")
        else:
            m = tuple(range(rank - len(s), rank))
        maps.append(m)
    equal_ranks = len({len(s) for s in shapes}) == 1
    if dims is not None and equal_ranks and tuple(dims) not in ((), tuple(range(rank))):
        raise err("C2", f"operands of equal rank {rank} need no broadcast_dimensions; "
                        f"got {list(dims)}, only the identity is allowed")
    out: list[int | None] = [1] * rank
    seen_dynamic = [False] * rank
    for i, (s, m) in enumerate(zip(shapes, maps, strict=True)):
        for n, rd in zip(s, m, strict=True):
            if n is None:
                seen_dynamic[rd] = True
            elif n != 1:
                if out[rd] not in (1, n):
                    raise err("C3", f"operand shapes {[list(x) for x in shapes]} do not broadcast: "
                                    f"result dim {rd} would be both {out[rd]} and {n} (operand #{i})")
                out[rd] = n
    shape = tuple(None if seen_dynamic[d] and out[d] == 1 else out[d] for d in range(rank))
    return shape, maps


def _place(x: np.ndarray, m: Sequence[int], shape: Sequence[int]) -> np.ndarray:
    """``x`` with its dim d at result dim m[d], broadcast to ``shape``."""
    order = sorted(range(len(m)), key=lambda d: m[d])
    placed = [1] * len(shape)
    for d in order:
        placed[m[d]] = x.shape[d]
    return np.broadcast_to(np.transpose(x, order).reshape(placed), tuple(shape))


def _operand_index(result_index: Sequence[Any], oshape: Sequence[int], m: Sequence[int]) -> tuple:
    """operand_index[d] = 0 if dim(operand, d) = 1 else result_index[m[d]]."""
    return tuple(0 if n == 1 else result_index[m[d]] for d, n in enumerate(oshape))


def _runtime_maps(ctx: OpCall, values: Sequence[np.ndarray]) -> tuple[tuple[int, ...], list[tuple[int, ...]]]:
    dims = getattr(ctx.attrs, "broadcast_dimensions", None)

    def err(label: str | None, msg: str) -> Exception:
        return ExecutionError(f"{ctx.name}: {msg}", ctx.loc)

    shape, maps = broadcast_maps([v.shape for v in values], dims, err)
    return tuple(int(n) for n in shape), maps  # type: ignore[arg-type]


def broadcast_operands(ctx: OpCall, values: Sequence[np.ndarray]) -> list[np.ndarray]:
    shape, maps = _runtime_maps(ctx, values)
    return [_place(v, m, shape) for v, m in zip(values, maps, strict=True)]


def _broadcast_provenance(roles: Sequence[str]) -> Callable[..., Provenance]:
    def provenance(ctx: OpCall, inputs: list[Any], outputs: list[Any]) -> Provenance:
        rshape = tuple(outputs[0].shape)
        _, maps = _runtime_maps(ctx, inputs)
        ri = np.indices(rshape, sparse=True) if rshape else ()
        links = [index_link(i, roles[i], v.shape, _operand_index(ri, v.shape, m), result_shape=rshape)
                 for i, (v, m) in enumerate(zip(inputs, maps, strict=True))]
        if roles[0] == "control":  # select: the chosen branch only
            pred = np.broadcast_to(_place(inputs[0], maps[0], rshape), rshape)
            for link, take in ((links[1], pred), (links[2], ~pred)):
                object.__setattr__(link, "flat_index", np.where(take, link.flat_index, -1).astype(np.int64))
        return IndexMapProvenance([rshape], [v.shape for v in inputs], [links])

    return provenance


def _explain_broadcast(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
                       index: tuple) -> Explanation:
    idx = check_index(value_shape(outputs[0]), index, "result index")
    _, maps = _runtime_maps(ctx, inputs)
    names = [v.name for v in ctx.op.operands]
    steps, values = [], []
    for name, v, m in zip(names, inputs, maps, strict=True):
        oi = tuple(int(i) for i in _operand_index(idx, v.shape, m))
        steps.append(Step(f"{name}_index", Msg("chlo.broadcast.index", dims=list(m)), oi))
        values.append(v[oi])
        steps.append(Step(name, Msg("explain.element", name=name, index=", ".join(map(str, oi))), v[oi]))
    out = outputs[0][idx]
    label = ctx.name.removeprefix("chlo.broadcast_")
    steps.append(Step("result[{}]".format(", ".join(map(str, idx))),
                      Msg("explain.apply", op=label, args=", ".join(names)), out,
                      substituted=Msg("explain.apply", op=label,
                                      args=", ".join(format_value(x) for x in values))))
    return Explanation(ctx.op.name, idx, steps, out, [Msg("chlo.broadcast.note")], 0)


def _verify_broadcast(kinds: tuple[str, ...], result_kind: str, n: int = 2) -> Callable[[OpCall], None]:
    names = ("lhs", "rhs") if n == 2 else ("pred", "on_true", "on_false")

    def verify(ctx: OpCall) -> None:
        _count(ctx, names)
        ts = [_plain(ctx, i, names[i], ("bool",) if names[i] == "pred" else kinds) for i in range(n)]
        values = ts[-2:]
        if not same_element(values[0].element, values[1].element):
            raise ctx.error("C1", f"element_type({names[-2]}) = {values[0].element} must equal "
                                  f"element_type({names[-1]}) = {values[1].element}")
        result = _result(ctx)
        want = _broadcast_result(ctx.attrs, ts, result_kind, ctx.error)
        if not (_dims_agree(want.shape, result.shape) and same_element(want.element, result.element)):
            raise ctx.error("C4", f"the result must be {want}, got {result}")

    return verify


def _broadcast_result(a: Any, ts: Sequence[TensorType], result_kind: str,
                      err: Callable[[str | None, str], Exception]) -> TensorType:
    shape, _ = broadcast_maps([t.shape for t in ts], getattr(a, "broadcast_dimensions", None), err)
    e = ts[-1].element
    if result_kind == "i1":
        e = element_type("i1")
    elif result_kind == "complex":
        e = element_type(f"complex<{e}>")
    return TensorType(shape, e)


def _infer_broadcast(result_kind: str, n: int = 2) -> Callable[[Attrs, list[Type]], list[Inferred]]:
    names = ("lhs", "rhs") if n == 2 else ("pred", "on_true", "on_false")

    def infer(a: Attrs, types: list[Type]) -> list[Inferred]:
        ts = _infer_operands(types, names)
        if not same_element(ts[-2].element, ts[-1].element):
            raise InferError("C1", f"element types {ts[-2].element} and {ts[-1].element} must be equal")
        return [_broadcast_result(a, ts, result_kind, InferError)]

    return infer


# chlo.broadcast_X -> (the op it applies after broadcasting, operand kinds, result kind)
BROADCAST: dict[str, tuple[str, tuple[str, ...], str]] = {
    "add": ("stablehlo.add", ANY, "same"), "subtract": ("stablehlo.subtract", ANY, "same"),
    "multiply": ("stablehlo.multiply", ANY, "same"), "divide": ("stablehlo.divide", ANY, "same"),
    "remainder": ("stablehlo.remainder", ANY, "same"), "power": ("stablehlo.power", ANY, "same"),
    "maximum": ("stablehlo.maximum", ANY, "same"), "minimum": ("stablehlo.minimum", ANY, "same"),
    "atan2": ("stablehlo.atan2", FLOAT_COMPLEX, "same"),
    "shift_left": ("stablehlo.shift_left", INT, "same"),
    "shift_right_arithmetic": ("stablehlo.shift_right_arithmetic", INT, "same"),
    "shift_right_logical": ("stablehlo.shift_right_logical", INT, "same"),
    "and": ("stablehlo.and", PRED_INT, "same"), "or": ("stablehlo.or", PRED_INT, "same"),
    "xor": ("stablehlo.xor", PRED_INT, "same"), "next_after": ("chlo.next_after", FLOAT, "same"),
    "complex": ("stablehlo.complex", FLOAT, "complex"),
    # hlolab/ops/chlo_special.py's evaluators, called on the broadcast operands
    "polygamma": ("chlo.polygamma", FLOAT, "same"), "zeta": ("chlo.zeta", FLOAT, "same"),
}


def _register_broadcast(short: str) -> None:
    target, kinds, result_kind = BROADCAST[short]

    def evaluate(ctx: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
        reject_quantized(ctx)
        lhs, rhs = broadcast_operands(ctx, [lhs, rhs])
        if short == "complex":
            return as_complex(lhs, rhs, ctx.result_dtype())
        if short == "next_after":
            return next_after_values(contiguous(lhs), contiguous(rhs))
        d = lookup(target)
        assert d is not None, target
        return d.evaluate(ctx, contiguous(lhs), contiguous(rhs))

    evaluate.__doc__ = f"{target} after broadcasting lhs and rhs to the result shape."
    evaluate.__name__ = f"broadcast_{short}"
    op(f"chlo.broadcast_{short}", verify=_verify_broadcast(kinds, result_kind), attrs=BroadcastAttrs,
       infer=_infer_broadcast(result_kind), family="conversion" if short == "complex" else "elementwise",
       provenance=_broadcast_provenance(("combine", "combine")), explain=_explain_broadcast)(evaluate)


@op("chlo.broadcast_compare", verify=_verify_broadcast(ANY, "i1"), attrs=BroadcastCompareAttrs,
    infer=_infer_broadcast("i1"), family="compare", provenance=_broadcast_provenance(("combine", "combine")),
    explain=_explain_broadcast)
def broadcast_compare(ctx: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """stablehlo.compare after broadcasting; compare_type NOTYPE or absent: the element type's default."""
    reject_quantized(ctx)
    lhs, rhs = broadcast_operands(ctx, [lhs, rhs])
    et = _element(ctx, 0)
    ctype = ctx.attrs.compare_type
    ctype = default_compare_type(et) if ctype in (None, "NOTYPE") else ctype
    with np.errstate(all="ignore"):
        return np.asarray(compare_arrays(lhs, rhs, et, ctx.attrs.comparison_direction, ctype), dtype=np.bool_)


@op("chlo.broadcast_select", verify=_verify_broadcast(ANY, "same", 3), infer=_infer_broadcast("same", 3),
    family="compare", provenance=_broadcast_provenance(("control", "copy", "copy")),
    explain=_explain_broadcast)
def broadcast_select(ctx: OpCall, pred: np.ndarray, on_true: np.ndarray, on_false: np.ndarray) -> np.ndarray:
    """stablehlo.select after numpy-broadcasting pred, on_true and on_false to the result shape."""
    reject_quantized(ctx)
    pred, on_true, on_false = broadcast_operands(ctx, [pred, on_true, on_false])
    return np.where(pred, on_true, on_false).astype(on_true.dtype, copy=False)


def _broadcast_schemas() -> None:
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

    def make(short: str, dtype: str) -> None:
        name = f"chlo.broadcast_{short}"

        def build(p: dict[str, Any]) -> OpParts:
            names = ("pred", "on_true", "on_false") if short == "select" else ("lhs", "rhs")
            shapes = (p["rhs"], p["lhs"], p["rhs"]) if short == "select" else (p["lhs"], p["rhs"])
            ops = [Operand(n, ttype(s, "i1" if n == "pred" else p["dtype"])) for n, s in zip(names, shapes)]
            attrs: dict[str, str] = {}
            if p.get("broadcast_dimensions"):
                dims = ", ".join(map(str, p["broadcast_dimensions"]))
                attrs["broadcast_dimensions"] = f"array<i64: {dims}>"
            if short == "compare":
                attrs["comparison_direction"] = "#chlo<comparison_direction LT>"
            rec = BroadcastAttrs(broadcast_dimensions=tuple(p["broadcast_dimensions"]) or None) \
                if short not in ("select", "compare") else Attrs()
            infer = lookup(name).infer  # type: ignore[union-attr]
            try:
                res = infer(rec if short != "compare" else BroadcastCompareAttrs(
                    broadcast_dimensions=tuple(p["broadcast_dimensions"]) or None, comparison_direction="LT"),
                    [o.type for o in ops])
            except InferError:
                res = [ttype((), p["dtype"])]
            return OpParts(ops, list(res), attrs)

        params = [shape_param("lhs", (2, 3), "shape of lhs"), shape_param("rhs", (3,), "shape of rhs"),
                  dtype_param(dtype, "element type of the operands")]
        if short != "select":
            params.append(ints_param("broadcast_dimensions", (), "result dim of each dim of the lower-rank "
                                                                 "operand ('' for numpy-style)"))
        register_schema(OpSchema(name, tuple(params), {"default": {}}, build,
                                 doc=f"{short} with CHLO broadcasting"))

    for short, (_, kinds, _) in BROADCAST.items():
        make(short, "i32" if kinds in (INT, PRED_INT) else "f32")
    make("compare", "f32")
    make("select", "f32")


for _short in BROADCAST:
    _register_broadcast(_short)
_broadcast_schemas()
