"""The check ops of StableHLO's test programs, and the interpreter's probe/print.

What each check accepts follows ../shared/conformance/README.md ("What each
check means"); attribute names follow stablehlo/tests/CheckOps.td. A failing
check raises ``CheckFailure`` with the shape, the first few mismatching
indices with expected and actual values, and how many elements differ.

``stablehlo.custom_call`` lives here too: the only call targets hlolab runs
are the checks JAX-exported test programs use (``@check.expect_close`` ...).
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

import numpy as np

from hlolab.errors import CheckFailure, NotImplementedOpError, UnsupportedError
from hlolab.ir.attrs import ArrayAttr, Attr, DenseElementsAttr
from hlolab.ir.dense import format_elements, format_floats, list_boundaries
from hlolab.numerics import is_float_dtype, is_nan, to_bits, ulp_distance, widen
from hlolab.ops.record import (
    AsDeclared,
    Attrs,
    InferError,
    Inferred,
    attr,
    boolean,
    floating,
    integer,
    raw,
    record,
    string,
)
from hlolab.ops.registry import OpCall, op
from hlolab.types import ElementType, QuantizedElementType, TensorType, Type, element_type_of_dtype

MAX_SHOWN = 3  # mismatching elements listed in a failure message
DEFAULT_TOLERANCE = 1e-4


# --------------------------------------------------------------------------
# attribute records (CheckOps.td's names) and result types
# --------------------------------------------------------------------------

def _value() -> Any:
    return attr(raw("value", DenseElementsAttr, what="a dense elements attribute"))


def _tolerance() -> Any:
    return attr(floating("tolerance", "f64"), default=DEFAULT_TOLERANCE)


@record
class ExpectEqConstAttrs(Attrs):
    value: DenseElementsAttr = _value()


@record
class ExpectAlmostEqAttrs(Attrs):
    tolerance: float = _tolerance()


@record
class ExpectAlmostEqConstAttrs(Attrs):
    value: DenseElementsAttr = _value()
    tolerance: float = _tolerance()


@record
class ExpectCloseAttrs(Attrs):
    max_ulp_difference: int = attr(integer("max_ulp_difference", "ui64"), default=1)
    min_ulp_difference: int = attr(integer("min_ulp_difference", "ui64"), default=0)


@record
class ExpectSerializedEqAttrs(Attrs):
    probe_id: str = attr(string("probe_id"))
    iteration: int = attr(integer("iteration", "ui32"), default=0)  # the probe's n-th run, from 0


@record
class ProbeAttrs(Attrs):
    probe_id: str = attr(string("probe_id"))


def _arrays(key: str, what: str, default: Any) -> Any:
    return attr(raw(key, ArrayAttr, what=what), default=default)


@record
class CustomCallAttrs(Attrs):
    """custom_call's attributes; hlolab reads only ``call_target_name``, the rest are kept
    as written (the result types are the declared ones)."""

    call_target_name: str = attr(string("call_target_name"), default="")
    has_side_effect: bool = attr(boolean("has_side_effect"), default=False)
    backend_config: Attr | None = attr(raw("backend_config"), default=None)  # a string or a dictionary
    api_version: int = attr(integer("api_version", "i32"), default=1)
    called_computations: ArrayAttr = _arrays("called_computations", "an array of symbols", ArrayAttr(()))
    operand_layouts: ArrayAttr | None = _arrays("operand_layouts", "an array of layouts", None)
    result_layouts: ArrayAttr | None = _arrays("result_layouts", "an array of layouts", None)
    output_operand_aliases: ArrayAttr = _arrays("output_operand_aliases", "an array of aliases",
                                                ArrayAttr(()))


def infer_check(a: Attrs, types: list[Type]) -> list[Inferred]:
    """The check ops have no results."""
    return []


def infer_probe(a: ProbeAttrs, types: list[Type]) -> list[Inferred]:
    """The operand passes through."""
    if len(types) != 1:
        raise InferError(None, f"takes one operand, got {len(types)}")
    return [types[0]]


def infer_print(a: Attrs, types: list[Type]) -> AsDeclared:
    """No result (current StableHLO) or, as older programs wrote it, the operand's type."""
    if len(types) != 1:
        raise InferError(None, f"takes one operand, got {len(types)}")
    return AsDeclared(types[0])


def infer_custom_call(a: CustomCallAttrs, types: list[Type]) -> AsDeclared:
    """The results are whatever the call target gives: the declared types."""
    return AsDeclared()


# --------------------------------------------------------------------------
# element comparisons (vectorized, any element type)
# --------------------------------------------------------------------------

def exactly_equal(actual: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """IEEE ``==`` for floats (NaN never equal, -0 == +0), both parts for complex."""
    with np.errstate(invalid="ignore"):
        return np.asarray(actual == expected, dtype=bool)


def almost_equal(actual: np.ndarray, expected: np.ndarray, tolerance: float) -> np.ndarray:
    """Equal values (incl. equal infinities, ±0) or two NaNs, or both finite and
    |a - b| <= tolerance; complex: real and imaginary parts separately."""
    if actual.dtype.kind == "c":
        return (almost_equal(actual.real, expected.real, tolerance)
                & almost_equal(actual.imag, expected.imag, tolerance))
    a, b = widen(actual), widen(expected)
    with np.errstate(invalid="ignore", over="ignore"):
        close = np.isfinite(a) & np.isfinite(b) & (np.abs(a - b) <= tolerance)
        return (a == b) | (np.isnan(a) & np.isnan(b)) | close


def ulp_close(actual: np.ndarray, expected: np.ndarray, max_ulp: int,
              min_ulp: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(ok, distance) for ``check.expect_close``: finite pairs need
    min_ulp <= ULP distance <= max_ulp; a pair with a non-finite value passes
    only when bitwise equal or both NaN (CheckOps.td). Complex: every part
    must pass, the distance is the worse part's."""
    if actual.dtype.kind == "c":
        ok_re, d_re = _ulp_close_part(actual.real, expected.real, max_ulp)
        ok_im, d_im = _ulp_close_part(actual.imag, expected.imag, max_ulp)
        dist = np.maximum(d_re, d_im)
        finite = (_isfinite(actual.real) & _isfinite(expected.real)) | \
                 (_isfinite(actual.imag) & _isfinite(expected.imag))
        return ok_re & ok_im & (~finite | (dist >= np.uint64(min_ulp))), dist
    ok, dist = _ulp_close_part(actual, expected, max_ulp)
    finite = _isfinite(actual) & _isfinite(expected)
    return ok & (~finite | (dist >= np.uint64(min_ulp))), dist


def _ulp_close_part(a: np.ndarray, b: np.ndarray, max_ulp: int) -> tuple[np.ndarray, np.ndarray]:
    finite = _isfinite(a) & _isfinite(b)
    dist = ulp_distance(a, b)
    same_special = (to_bits(a) == to_bits(b)) | (is_nan(a) & is_nan(b))
    ok = np.where(finite, dist <= np.uint64(max_ulp), same_special)
    return ok, np.where(finite | ~same_special, dist, np.uint64(0))


def _isfinite(a: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):  # ml_dtypes warn on NaN inputs
        return np.isfinite(a)


# --------------------------------------------------------------------------
# failure messages
# --------------------------------------------------------------------------

def show_value(value: Any) -> str:
    """One element, readable: shortest float text for its type, NaN with its bits."""
    v = np.asarray(value)
    if v.dtype.kind == "b":
        return "true" if bool(v) else "false"
    if v.dtype.kind == "c":
        return f"({show_value(v.real)}, {show_value(v.imag)})"
    if is_float_dtype(v.dtype):
        if is_nan(v):
            return f"nan (0x{int(to_bits(v)):X})"
        return str(v[()])
    return str(int(v))


def _where(index: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(i) for i in index) + "]"


def mismatch_message(ok: np.ndarray, actual: np.ndarray, expected: np.ndarray,
                     detail: np.ndarray | None = None, detail_name: str = "") -> str:
    """``3 of 8 elements differ (shape 2x4); at [0, 1]: expected 2.0, got 2.5; ...``."""
    bad = np.argwhere(~ok)
    parts = []
    for index in map(tuple, bad[:MAX_SHOWN]):
        text = f"expected {show_value(expected[index])}, got {show_value(actual[index])}"
        if detail is not None:
            text += f" ({detail_name} {show_value(detail[index])})"
        parts.append(text if actual.ndim == 0 else f"at {_where(index)}: {text}")
    if actual.ndim == 0:
        return parts[0]
    shape = "x".join(str(d) for d in actual.shape)
    head = f"{len(bad)} of {actual.size} elements differ (shape {shape})"
    more = "; ..." if len(bad) > MAX_SHOWN else ""
    return head + "; " + "; ".join(parts) + more


def _require_same(check: str, ctx: OpCall, actual: np.ndarray, expected: np.ndarray) -> None:
    if actual.shape != expected.shape:
        raise CheckFailure(check, f"shapes differ: got {_shape(actual)}, expected {_shape(expected)}",
                           ctx.loc)
    if actual.dtype != expected.dtype:
        raise CheckFailure(check, f"element types differ: got {_type_name(actual)}, "
                           f"expected {_type_name(expected)}", ctx.loc)


def _shape(a: np.ndarray) -> str:
    return "tensor<" + "".join(f"{d}x" for d in a.shape) + _type_name(a) + ">"


def _type_name(a: np.ndarray) -> str:
    try:
        return str(element_type_of_dtype(a.dtype))
    except UnsupportedError:  # a dtype without a StableHLO name: show numpy's
        return str(a.dtype)


def _fail_unless(check: str, ctx: OpCall, ok: np.ndarray, actual: np.ndarray,
                 expected: np.ndarray, detail: np.ndarray | None = None,
                 detail_name: str = "") -> None:
    if not ok.all():
        raise CheckFailure(check, mismatch_message(ok, actual, expected, detail, detail_name), ctx.loc)


def _float_or_complex(check: str, ctx: OpCall, a: np.ndarray) -> None:
    if not (a.dtype.kind == "c" or is_float_dtype(a.dtype)):
        raise ctx.error(None, f"expects floating-point or complex elements, got {_type_name(a)}")


def _const_value(ctx: OpCall) -> np.ndarray:
    return np.asarray(ctx.attrs.value.array)


# --------------------------------------------------------------------------
# check dialect
# --------------------------------------------------------------------------

@op("check.expect_eq", infer=infer_check, family="check")
def expect_eq(ctx: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> None:
    """``lhs`` (actual) equals ``rhs`` (expected) exactly; NaN never matches."""
    _expect_eq("check.expect_eq", ctx, np.asarray(lhs), np.asarray(rhs))


@op("check.expect_eq_const", attrs=ExpectEqConstAttrs, infer=infer_check, family="check")
def expect_eq_const(ctx: OpCall, lhs: np.ndarray) -> None:
    """``lhs`` equals the ``value`` attribute exactly; NaN never matches."""
    _expect_eq("check.expect_eq_const", ctx, np.asarray(lhs), _const_value(ctx))


def _expect_eq(check: str, ctx: OpCall, actual: np.ndarray, expected: np.ndarray) -> None:
    _require_same(check, ctx, actual, expected)
    _fail_unless(check, ctx, exactly_equal(actual, expected), actual, expected)


@op("check.expect_almost_eq", attrs=ExpectAlmostEqAttrs, infer=infer_check, family="check")
def expect_almost_eq(ctx: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> None:
    """``lhs`` is within ``tolerance`` (default 1e-4, absolute) of ``rhs``."""
    _expect_almost_eq("check.expect_almost_eq", ctx, np.asarray(lhs), np.asarray(rhs))


@op("check.expect_almost_eq_const", attrs=ExpectAlmostEqConstAttrs, infer=infer_check,
    family="check")
def expect_almost_eq_const(ctx: OpCall, lhs: np.ndarray) -> None:
    """``lhs`` is within ``tolerance`` (default 1e-4, absolute) of the ``value`` attribute."""
    _expect_almost_eq("check.expect_almost_eq_const", ctx, np.asarray(lhs), _const_value(ctx))


def _expect_almost_eq(check: str, ctx: OpCall, actual: np.ndarray, expected: np.ndarray) -> None:
    _float_or_complex(check, ctx, actual)
    _require_same(check, ctx, actual, expected)
    tolerance = ctx.attrs.tolerance
    _fail_unless(check, ctx, almost_equal(actual, expected, tolerance), actual, expected,
                 _abs_diff(actual, expected), f"tolerance {tolerance:g}, |difference|")


def _abs_diff(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", over="ignore"):
        return np.abs(widen(a) - widen(b))


@op("check.expect_close", attrs=ExpectCloseAttrs, infer=infer_check, family="check")
def expect_close(ctx: OpCall, actual: np.ndarray, expected: np.ndarray) -> None:
    """min_ulp_difference <= ULP distance <= max_ulp_difference (default 1 and 0)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    check = "check.expect_close"
    _float_or_complex(check, ctx, actual)
    _require_same(check, ctx, actual, expected)
    max_ulp, min_ulp = ctx.attrs.max_ulp_difference, ctx.attrs.min_ulp_difference
    ok, dist = ulp_close(actual, expected, max_ulp, min_ulp)
    _fail_unless(check, ctx, ok, actual, expected, dist,
                 f"allowed {min_ulp}..{max_ulp}, ULP distance")


@op("check.expect_serialized_eq", attrs=ExpectSerializedEqAttrs, infer=infer_check, family="check")
def expect_serialized_eq(ctx: OpCall, expected: np.ndarray) -> None:
    """The operand equals what ``interpreter.probe`` recorded under ``probe_id`` at
    ``iteration`` (its n-th run, from 0)."""
    check = "check.expect_serialized_eq"
    probe_id, iteration = ctx.attrs.probe_id, ctx.attrs.iteration
    recorded = ctx.state.get("probes", {}).get(probe_id, [])
    if iteration >= len(recorded):
        raise CheckFailure(check, f"no value recorded by probe \"{probe_id}\" at iteration {iteration} "
                           f"(the probe ran {len(recorded)} times)", ctx.loc)
    actual = recorded[iteration]
    expected = np.asarray(expected)
    _require_same(check, ctx, actual, expected)
    _fail_unless(check, ctx, exactly_equal(actual, expected), actual, expected)


# --------------------------------------------------------------------------
# interpreter dialect
# --------------------------------------------------------------------------

@op("interpreter.probe", attrs=ProbeAttrs, infer=infer_probe, family="check")
def probe(ctx: OpCall, operand: np.ndarray) -> np.ndarray:
    """Record the operand under ``probe_id`` (one entry per run) and pass it through."""
    probes = ctx.state.setdefault("probes", {})
    probes.setdefault(ctx.attrs.probe_id, []).append(np.array(operand, copy=True))
    return operand


@op("interpreter.print", infer=infer_print, family="check")
def print_(ctx: OpCall, operand: np.ndarray) -> np.ndarray | None:
    """Append ``%name = tensor<...> {...}`` to the run's output, as stablehlo-translate prints."""
    operand = np.asarray(operand)
    t = ctx.operand_types[0] if ctx.operand_types else None
    if not isinstance(t, TensorType):
        t = TensorType(operand.shape, element_type_of_dtype(operand.dtype))
    name = ctx.op.operands[0].name if ctx.op.operands else "%0"
    ctx.state.setdefault("output", []).append(f"{name} = {format_printed(operand, t)}")
    return operand if ctx.op.results else None


def format_printed(value: np.ndarray, type: TensorType) -> str:
    """A tensor the way the StableHLO interpreter prints it::

        tensor<2x2xi8> {
          [
            [1, 2],
            [3, 4]
          ]
        }

    (scalars as ``tensor<ui8> {1}``, complex elements as ``[re, im]``).
    """
    head = f"{type} {{"
    shape = tuple(value.shape)
    flat = value.reshape(-1)
    if not shape:
        return head + str(_print_elements(flat, type)[0]) + "}"
    if 0 in shape:
        # lists down to the first empty dimension; each empty list is a leaf
        z = shape.index(0)
        if z == 0:
            return head + "\n  []\n}"
        shape = shape[:z] + (1,)
        texts = np.full(int(np.prod(shape)), "", dtype=str)
    else:
        texts = _print_elements(flat, type)
    body = _layout(texts, shape)
    return head + body + "}"


def _print_elements(flat: np.ndarray, type: TensorType) -> np.ndarray:
    el = type.element
    et: ElementType = el.storage if isinstance(el, QuantizedElementType) else el
    if et.is_complex:
        re_, im = format_floats(flat.real), format_floats(flat.imag)
        return np.strings.add(np.strings.add(np.strings.add("[", re_), ", "),
                              np.strings.add(im, "]"))
    return format_elements(flat, et)


def _layout(texts: np.ndarray, shape: tuple[int, ...]) -> str:
    """Each element's prefix (the lists it opens) and suffix (the lists it closes).

    A list at depth k opens on a new line indented 2*(k+1) spaces; it closes
    with ``],`` when a sibling follows, else with a newline indented for its
    parent. Empty innermost lists are laid out as lists of one empty text.
    """
    rank = len(shape)
    opens, closes = list_boundaries(texts.size, shape)
    prefixes = np.array(["".join(f"\n{'  ' * (k + 1)}[" for k in range(first, rank))
                         for first in range(rank + 1)], dtype=str)
    suffixes = np.array([_closings(first, rank) for first in range(rank + 1)], dtype=str)
    pieces = np.strings.add(np.strings.add(prefixes[rank - opens], texts), suffixes[rank - closes])
    return "".join(pieces.tolist())


def _closings(first: int, rank: int) -> str:
    """Text after an element that closes the lists at depths rank-1 down to ``first``."""
    if first == rank:
        return ", "
    out = []
    for k in range(rank - 1, first - 1, -1):
        last_sibling = k > first or k == 0
        out.append("]" + (f"\n{'  ' * k}" if last_sibling else ","))
    return "".join(out)


# --------------------------------------------------------------------------
# stablehlo.custom_call: the check targets of JAX-exported test programs
# --------------------------------------------------------------------------

CUSTOM_CALL_ULP = 3
CUSTOM_CALL_ALMOST_EQ_TOLERANCE = 1e-3
CUSTOM_CALL_EQ_TOLERANCE = 1e-4

# call target -> evaluate(ctx, *operands), for targets defined by other op modules; an
# evaluate may be a generator (a target that meets other processes: @SPMDShardToFullShape)
CALL_TARGETS: dict[str, Callable[..., Any]] = {}
# call target -> provenance(ctx, inputs, outputs) / explain(ctx, inputs, outputs, result, index)
CALL_TARGET_PROVENANCE: dict[str, Callable[..., Any]] = {}
CALL_TARGET_EXPLAIN: dict[str, Callable[..., Any]] = {}
# targets that work element by element (an identity annotation: @Sharding), so a custom_call
# of them may run inside a per-element region (jax puts @Sharding in all_reduce bodies)
ELEMENTWISE_TARGETS: set[str] = set()


def _custom_call_provenance(ctx: Any, inputs: list[Any], outputs: list[Any]) -> Any:
    """The call target's provenance; None (every operand element may feed every result
    element) for targets that define none."""
    fn = CALL_TARGET_PROVENANCE.get(ctx.attrs.call_target_name)
    return fn(ctx, inputs, outputs) if fn is not None else None


def _custom_call_explain(ctx: Any, inputs: list[Any], outputs: list[Any], result: int,
                         index: tuple[int, ...]) -> Any:
    fn = CALL_TARGET_EXPLAIN.get(ctx.attrs.call_target_name)
    return fn(ctx, inputs, outputs, result, index) if fn is not None else None


@op("stablehlo.custom_call", aliases=("CustomCall",), attrs=CustomCallAttrs, infer=infer_custom_call,
    family="check", steps=True, provenance=_custom_call_provenance, explain=_custom_call_explain)
def custom_call(ctx: OpCall, *operands: Any) -> Generator[Any, Any, Any]:
    """Runs the check call targets (``@check.expect_close``, ``@check.expect_eq``,
    ``@check.expect_almost_eq``, ``@check.eq``) and the targets other op modules define
    (``@shape_assertion``, ``@Sharding``, ...); any other target is not implemented."""
    target = ctx.attrs.call_target_name
    if target in CALL_TARGETS:  # a target another op module defines (e.g. @shape_assertion)
        out = CALL_TARGETS[target](ctx, *operands)
        if isinstance(out, Generator):
            out = yield from out
        return out
    if target not in _CUSTOM_CHECKS:
        raise NotImplementedOpError("stablehlo.custom_call", ctx.loc, detail=f"call target @{target}")
    if len(operands) != 2:
        raise ctx.error(None, f"@{target} takes 2 operands, got {len(operands)}")
    a, b = (np.asarray(x) for x in operands)
    passed = _CUSTOM_CHECKS[target](ctx, target, a, b)
    results = ctx.result_types
    if not results:
        return None
    if len(results) != 1 or not (isinstance(results[0], TensorType) and str(results[0].element) == "i1"):
        raise ctx.error(None, f"@{target} returns nothing or one tensor<i1>, got "
                        f"{', '.join(str(t) for t in results)}")
    return np.full(results[0].static_shape(), passed, dtype=bool)


def _cc_expect_close(ctx: OpCall, check: str, actual: np.ndarray, expected: np.ndarray) -> bool:
    """ULP distance <= 3 (attributes are not read); two NaNs match; complex: worse part."""
    _float_or_complex(check, ctx, actual)
    _require_same(check, ctx, actual, expected)
    dist = ulp_distance(actual, expected)
    _fail_unless(check, ctx, dist <= np.uint64(CUSTOM_CALL_ULP), actual, expected, dist,
                 f"allowed {CUSTOM_CALL_ULP}, ULP distance")
    return True


def _cc_expect_eq(ctx: OpCall, check: str, actual: np.ndarray, expected: np.ndarray) -> bool:
    _expect_eq(check, ctx, actual, expected)
    return True


def _cc_expect_almost_eq(ctx: OpCall, check: str, actual: np.ndarray, expected: np.ndarray) -> bool:
    """|a - b| <= 1e-3 absolute; equal infinities and two NaNs match."""
    _float_or_complex(check, ctx, actual)
    _require_same(check, ctx, actual, expected)
    tol = CUSTOM_CALL_ALMOST_EQ_TOLERANCE
    _fail_unless(check, ctx, almost_equal(actual, expected, tol), actual, expected,
                 _abs_diff(actual, expected), f"tolerance {tol:g}, |difference|")
    return True


def _cc_eq(ctx: OpCall, check: str, expected: np.ndarray, actual: np.ndarray) -> bool:
    """``@check.eq(%expected, %actual)``: integers and booleans exact, else |a - b| <= 1e-4."""
    _require_same(check, ctx, actual, expected)
    if actual.dtype.kind == "c" or is_float_dtype(actual.dtype):
        tol = CUSTOM_CALL_EQ_TOLERANCE
        _fail_unless(check, ctx, almost_equal(actual, expected, tol), actual, expected,
                     _abs_diff(actual, expected), f"tolerance {tol:g}, |difference|")
    else:
        _fail_unless(check, ctx, exactly_equal(actual, expected), actual, expected)
    return True


_CUSTOM_CHECKS = {
    "check.expect_close": _cc_expect_close,
    "check.expect_eq": _cc_expect_eq,
    "check.expect_almost_eq": _cc_expect_almost_eq,
    "check.eq": _cc_eq,
}
