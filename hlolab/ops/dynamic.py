"""Dynamic-shape ops: dynamic_broadcast_in_dim, dynamic_iota, dynamic_pad,
dynamic_reshape, real_dynamic_slice (and set_dimension_size, refused).

Each is "functionally identical" (the spec's words) to a static op of
``hlolab.ops.shape`` whose attributes it takes as operand values. So each op
here reads its shape operands at run time (``shape_values``), builds the static
op's attribute record and result type from them, and runs the static op's own
verify, evaluate, provenance and explain on that *static view* of itself
(``static_view``): the semantics are written once, in shape.py. What is added
here: the shape operands' types and the constraints on them, the check that the
run-time result shape fits the declared result type (a ``?`` takes the run-time
size, a static size that disagrees is an error naming the op), the element budget
before anything is allocated, and provenance links marking every shape-operand
element ``index_read`` (it decides where each result element comes from, or
whether it exists).

``real_dynamic_slice`` is not in the spec: it is an op of the StableHLO dialect
(``RealDynamicSliceOp``) that JAX's shape-polymorphic lowering has used; hlolab runs
it as ``slice`` with ``start_indices``, ``limit_indices`` and ``strides`` given as
values, and its errors name the slice constraint they come from.
``set_dimension_size`` is not a StableHLO op at all (XLA's SetDimensionSize, for
bounded dynamic dimensions): it parses and is refused with a clear error.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from hlolab.errors import ExecutionError, UnsupportedError
from hlolab.ir.refined import VALUE_SHAPES, retyped, runtime_type
from hlolab.messages import Msg
from hlolab.ops import shape as static
from hlolab.ops.common import operand_tensor, same_element, shapes_compatible
from hlolab.ops.record import Attrs, InferError, Inferred, Partial, attr, integer, ints, record
from hlolab.ops.registry import OpCall, lookup, op
from hlolab.trace.explain import Explanation, Step
from hlolab.trace.provenance import IndexMapProvenance, Link, Provenance
from hlolab.types import ElementType, TensorType

# --- shared helpers ------------------------------------------------------------------------


def static_view(ctx: OpCall, rec: Any, inputs: Sequence[Any], result_shape: Sequence[int]) -> OpCall:
    """``ctx`` seen as its static op: attribute record ``rec`` (built from the shape
    operands), operand types of the run-time shapes, result of ``result_shape``."""
    result = ctx.result_tensor(0)
    view = copy.copy(ctx)
    view.op = retyped(ctx.op, [runtime_type(t, x) for t, x in zip(ctx.operand_types, inputs, strict=False)]
                      + list(ctx.operand_types[len(inputs):]),
                      [result.refined(tuple(int(n) for n in result_shape))], rec)
    return view


def _integer_vector(ctx: OpCall, i: int, label: str, what: str) -> TensorType:
    """Operand ``i``: a 1-dimensional tensor of integer type (the spec's type of every
    shape operand)."""
    t = operand_tensor(ctx, i, label, what)
    if t.rank != 1 or not (isinstance(t.element, ElementType) and t.element.is_int):
        raise ctx.error(label, f"{what} must be a 1-dimensional tensor of integer type, got {t}")
    return t


def _infer_vector(types: Sequence[Any], i: int, label: str, what: str) -> TensorType:
    t = types[i] if i < len(types) else None
    if not (isinstance(t, TensorType) and t.rank == 1 and isinstance(t.element, ElementType)
            and t.element.is_int):
        raise InferError(label, f"{what} must be a 1-dimensional tensor of integer type, got {t}")
    return t


def shape_values(ctx: OpCall, value: Any, label: str, what: str, sizes: bool = True) -> tuple[int, ...]:
    """A shape operand's values as ints; with ``sizes`` each must be a size (>= 0)."""
    v = np.asarray(value)
    if v.ndim != 1:
        raise ctx.error(label, f"{what} must be 1-dimensional, got a value of shape {v.shape}")
    if v.dtype.kind == "u" and v.size and int(v.max()) > np.iinfo(np.int64).max:
        raise ctx.error(label, f"{what} = {v.tolist()} holds a value above the int64 range")
    out = tuple(int(x) for x in v.astype(np.int64))
    if sizes and any(n < 0 for n in out):
        raise ctx.error(label, f"{what} = {list(out)} must hold sizes (>= 0)")
    return out


def check_result_shape(ctx: OpCall, shape: Sequence[int], how: str, label: str | None = None) -> None:
    """The run-time result shape must fit the declared result type (``?`` fits any size)
    and the element budget."""
    declared = ctx.result_tensor(0)
    if len(shape) != declared.rank or not shapes_compatible(declared.shape, tuple(shape)):
        bad = [d for d, (n, m) in enumerate(zip(declared.shape, shape, strict=False)) if m is not None
               and n is not None and n != m]
        where = f" (dim {bad[0]})" if bad else ""
        raise ctx.error(label, f"shape(result) = {list(shape)} ({how}) does not fit the declared "
                        f"result type {declared}{where}")
    check_budget(ctx, shape)


def check_budget(ctx: OpCall, shape: Sequence[int]) -> None:
    """A result of ``shape`` must fit the element budget: refused before it is allocated
    (the count in Python integers: an int64 product of sizes can wrap)."""
    n = math.prod(int(d) for d in shape)
    if n > ctx.element_budget:
        raise ExecutionError(f"{ctx.name}: a result of shape {tuple(int(d) for d in shape)} has {n:,} "
                             f"elements, over the element budget of {ctx.element_budget:,}", ctx.loc)


def _shape_links(inputs: Sequence[Any], operands: Sequence[int], shape: tuple[int, ...]) -> list[Link]:
    """Every element of each shape operand, read by every result element (``index_read``):
    its values decide which element lands where (and which exist)."""
    links: list[Link] = []
    for i in operands:
        links += [Link(i, "index_read", np.full(shape, k, dtype=np.int64))
                  for k in range(int(np.asarray(inputs[i]).size))]
    return links


def _with_shape_links(prov: Provenance, inputs: Sequence[Any], outputs: Sequence[Any],
                      operands: Sequence[int]) -> Provenance:
    assert isinstance(prov, IndexMapProvenance)
    shape = tuple(int(d) for d in outputs[0].shape)
    if outputs[0].size:
        for link in _shape_links(inputs, operands, shape):
            prov._validate(0, link)
            prov.links[0].append(link)
    return prov


def _with_shape_step(ctx: OpCall, e: Explanation, inputs: Sequence[Any],
                     operands: Sequence[tuple[int, str]]) -> Explanation:
    """The static op's explanation, led by the shape operands' run-time values."""
    lead = [Step(name, Msg("dynamic.shape_operand.formula", operand=ctx.op.operands[i].name),
                 tuple(int(x) for x in np.asarray(inputs[i]).reshape(-1)))
            for i, name in operands]
    e.steps[:0] = lead
    e.notes.append(Msg("dynamic.note", op=ctx.name.removeprefix("stablehlo."),
                       static=_STATIC[ctx.name].removeprefix("stablehlo.")))
    return e


def dynamic_op(name: str, static_name: str, view: Callable[[OpCall, Sequence[Any]], OpCall],
               static_operands: int, shape_operands: Sequence[tuple[int, str]],
               links: Sequence[int] | None = None, **kw: Any) -> None:
    """Register dynamic op ``name`` as its static op ``static_name`` run on ``view`` (the op
    seen with the shape operands' run-time values as attributes): the static op's evaluate
    (on the first ``static_operands`` inputs), provenance and explain, the shape operands
    added as ``index_read`` sources (``links``: those that decide where an element comes
    from; default all) and as leading explain steps. The static op is looked up at run time,
    so its quantized rule (``hlolab.ops.quantized``) applies too."""
    reads = [i for i, _ in shape_operands] if links is None else list(links)

    def static() -> Any:
        d = lookup(static_name)
        assert d is not None and d.provenance is not None and d.explain is not None
        return d

    def evaluate(ctx: OpCall, *inputs: Any) -> Any:
        return static().evaluate(view(ctx, inputs), *inputs[:static_operands])

    def provenance(ctx: OpCall, inputs: list[Any], outputs: list[Any]) -> Provenance:
        return _with_shape_links(static().provenance(view(ctx, inputs), inputs, outputs), inputs, outputs,
                                 reads)

    def explain(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
                index: tuple) -> Explanation:
        e = static().explain(view(ctx, inputs), inputs, outputs, result, index)
        return _with_shape_step(ctx, e, inputs, shape_operands)

    given = ", ".join(n for _, n in shape_operands)
    evaluate.__doc__ = f"{static_name.removeprefix('stablehlo.')} with {given} given as values"
    op(name, family="shape", provenance=provenance, explain=explain, **kw)(evaluate)


_STATIC = {"stablehlo.dynamic_broadcast_in_dim": "stablehlo.broadcast_in_dim",
           "stablehlo.dynamic_iota": "stablehlo.iota", "stablehlo.dynamic_pad": "stablehlo.pad",
           "stablehlo.dynamic_reshape": "stablehlo.reshape",
           "stablehlo.real_dynamic_slice": "stablehlo.slice"}


# --- dynamic_broadcast_in_dim --------------------------------------------------------------

@record
class DynamicBroadcastInDimAttrs(Attrs):
    broadcast_dimensions: tuple[int, ...] = attr(ints("broadcast_dimensions"))
    known_expanding_dimensions: tuple[int, ...] = attr(ints("known_expanding_dimensions"), default=())
    known_nonexpanding_dimensions: tuple[int, ...] = attr(ints("known_nonexpanding_dimensions"), default=())


def _known_dims_error(a: DynamicBroadcastInDimAttrs, rank: int) -> tuple[str, str] | None:
    """(C8)-(C10) as (label, message)."""
    exp, non = a.known_expanding_dimensions, a.known_nonexpanding_dimensions
    both = list(exp) + list(non)
    if len(set(both)) != len(both):
        return "C8", (f"known_expanding_dimensions = {list(exp)} and known_nonexpanding_dimensions = "
                      f"{list(non)} must hold unique dims")
    if any(not 0 <= d < rank for d in exp):
        return "C9", f"known_expanding_dimensions = {list(exp)} must be in [0, {rank}) (rank(operand))"
    if any(not 0 <= d < rank for d in non):
        return "C10", f"known_nonexpanding_dimensions = {list(non)} must be in [0, {rank}) (rank(operand))"
    return None


def infer_dynamic_broadcast_in_dim(a: DynamicBroadcastInDimAttrs, types: list[Any]) -> list[Inferred]:
    """broadcast_in_dim's result (C1)-(C5), of rank size(output_dimensions) (C7); the sizes
    are output_dimensions' values, known at run time."""
    rec = static.BroadcastInDimAttrs(broadcast_dimensions=a.broadcast_dimensions)
    (part,) = static.infer_broadcast_in_dim(rec, types)
    operand = types[0]
    out = _infer_vector(types, 1, "I2", "output_dimensions")
    bad = _known_dims_error(a, operand.rank)
    if bad:
        raise InferError(*bad)
    n = out.shape[0]
    fits = part.check
    assert isinstance(part, Partial) and fits is not None
    return [Partial(None if n is None else (None,) * n, part.element,
                    check=lambda t: fits(t) and (n is None or t.rank == n),
                    what=part.what + ("" if n is None else f", of rank {n} (size(output_dimensions))"))]


def _verify_dynamic_broadcast_in_dim(ctx: OpCall) -> None:
    static._verify_broadcast_in_dim(ctx)  # (C1)-(C6): the attribute has broadcast_in_dim's name
    out = _integer_vector(ctx, 1, "I2", "output_dimensions")
    result = ctx.result_tensor(0)
    if out.shape[0] is not None and out.shape[0] != result.rank:
        raise ctx.error("C7", f"size(output_dimensions) = {out.shape[0]} must equal rank(result) = "
                        f"{result.rank}")
    bad = _known_dims_error(ctx.attrs, ctx.operand_types[0].rank)
    if bad:
        raise ctx.error(*bad)


def _broadcast_view(ctx: OpCall, inputs: Sequence[Any]) -> OpCall:
    operand = np.asarray(inputs[0])
    sizes = shape_values(ctx, inputs[1], "I2", "output_dimensions")
    a = ctx.attrs
    if len(sizes) != ctx.result_tensor(0).rank:
        raise ctx.error("C7", f"size(output_dimensions) = {len(sizes)} must equal rank(result) = "
                        f"{ctx.result_tensor(0).rank}")
    check_result_shape(ctx, sizes, f"output_dimensions = {list(sizes)}")
    rec = static.BroadcastInDimAttrs(broadcast_dimensions=a.broadcast_dimensions)
    view = static_view(ctx, rec, inputs, sizes)
    static._verify_broadcast_in_dim(view)  # (C5) on the run-time sizes
    # the known_* attributes are promises about the run-time sizes: a broken one is an error
    for d in a.known_expanding_dimensions:
        if operand.shape[d] != 1:
            raise ctx.error(None, f"known_expanding_dimensions holds {d}, but dim(operand, {d}) = "
                            f"{operand.shape[d]}: only a size-1 dim can expand")
    for d in a.known_nonexpanding_dimensions:
        m = sizes[a.broadcast_dimensions[d]]
        if operand.shape[d] != m:
            raise ctx.error(None, f"known_nonexpanding_dimensions holds {d}, but dim(operand, {d}) = "
                            f"{operand.shape[d]} expands to dim(result, {a.broadcast_dimensions[d]}) = {m}")
    return view


dynamic_op("stablehlo.dynamic_broadcast_in_dim", "stablehlo.broadcast_in_dim", _broadcast_view, 1,
           [(1, "output_dimensions")], verify=_verify_dynamic_broadcast_in_dim,
           attrs=DynamicBroadcastInDimAttrs, infer=infer_dynamic_broadcast_in_dim)


# --- dynamic_iota --------------------------------------------------------------------------

def infer_dynamic_iota(a: static.IotaAttrs, types: list[Any]) -> list[Inferred]:
    """A result of rank size(output_shape) (C2) holding iota_dimension (C1)."""
    out = _infer_vector(types, 0, "I1", "output_shape")
    d, n = a.iota_dimension, out.shape[0]
    if d < 0 or (n is not None and d >= n):
        raise InferError("C1", f"iota_dimension = {d} must be in [0, {'?' if n is None else n}) "
                         "(size(output_shape))")
    (part,) = static.infer_iota(a, [])
    fits = part.check
    assert isinstance(part, Partial) and fits is not None
    return [Partial(None if n is None else (None,) * n, check=fits, what=part.what)]


def _verify_dynamic_iota(ctx: OpCall) -> None:
    out = _integer_vector(ctx, 0, "I1", "output_shape")
    result = static._result(ctx, "result", per_tensor_only=True)
    if not static._iota_element(result.element):
        raise ctx.error(None, f"result must be a tensor of integer, floating-point or complex type or a "
                        f"per-tensor quantized tensor, got {result}")
    d, n = ctx.attrs.iota_dimension, out.shape[0]
    if d < 0 or (n is not None and d >= n):
        raise ctx.error("C1", f"iota_dimension = {d} must be in [0, {'?' if n is None else n}) "
                        "(size(output_shape))")
    if n is not None and n != result.rank:
        raise ctx.error("C2", f"rank(result) = {result.rank} must equal size(output_shape) = {n}")


def _iota_view(ctx: OpCall, inputs: Sequence[Any]) -> OpCall:
    sizes = shape_values(ctx, inputs[0], "I1", "output_shape")
    if len(sizes) != ctx.result_tensor(0).rank:
        raise ctx.error("C2", f"rank(result) = {ctx.result_tensor(0).rank} must equal size(output_shape) = "
                        f"{len(sizes)}")
    check_result_shape(ctx, sizes, f"output_shape = {list(sizes)}")
    view = static_view(ctx, static.IotaAttrs(iota_dimension=ctx.attrs.iota_dimension), inputs, sizes)
    static._verify_iota(view)
    return view


dynamic_op("stablehlo.dynamic_iota", "stablehlo.iota", _iota_view, 0, [(0, "output_shape")],
           verify=_verify_dynamic_iota, attrs=static.IotaAttrs, infer=infer_dynamic_iota)


# --- dynamic_pad ---------------------------------------------------------------------------

_PAD_OPERANDS = ((2, "I3", "edge_padding_low"), (3, "I4", "edge_padding_high"), (4, "I5", "interior_padding"))


def _pad_types(err: Callable[[str | None, str], Exception], types: Sequence[Any],
               vector: Callable[[int, str, str], TensorType]) -> TensorType:
    """(I1)-(I5), (C1) on operand and padding_value, (C2) where the sizes are static."""
    operand, pv = types[0], types[1]
    for i, (t, what) in enumerate(((operand, "operand"), (pv, "padding_value"))):
        if not isinstance(t, TensorType) or t.is_quantized and t.element.is_per_axis:
            raise err(f"I{i + 1}", f"{what} must be a tensor or per-tensor quantized tensor, got {t}")
    if pv.rank != 0:
        raise err("I2", f"padding_value must be a 0-dimensional tensor, got {pv}")
    if not same_element(operand.element, pv.element):
        raise err("C1", f"element_type(operand) = {operand.element} and element_type(padding_value) = "
                  f"{pv.element} must be equal")
    for i, label, what in _PAD_OPERANDS:
        n = vector(i, label, what).shape[0]
        if n is not None and n != operand.rank:
            raise err("C2", f"size({what}) = {n} must equal rank(operand) = {operand.rank}")
    return operand


def infer_dynamic_pad(a: Attrs, types: list[Any]) -> list[Inferred]:
    """The operand's rank and element type; the sizes come from the padding values (C4)."""
    operand = _pad_types(InferError, types, lambda i, label, what: _infer_vector(types, i, label, what))
    return [Partial((None,) * operand.rank, operand.element)]


def _verify_dynamic_pad(ctx: OpCall) -> None:
    operand = _pad_types(ctx.error, ctx.operand_types,
                         lambda i, label, what: _integer_vector(ctx, i, label, what))
    result = static._result(ctx, per_tensor_only=True)
    if not same_element(operand.element, result.element):
        raise ctx.error("C1", f"element_type(operand) = {operand.element} and element_type(result) = "
                        f"{result.element} must be equal")
    if result.rank != operand.rank:
        raise ctx.error("C4", f"rank(result) = {result.rank} must equal rank(operand) = {operand.rank}")


def _pad_view(ctx: OpCall, inputs: Sequence[Any]) -> OpCall:
    low, high, interior = (shape_values(ctx, inputs[i], label, what, sizes=False)
                           for i, label, what in _PAD_OPERANDS)
    rec = static.PadAttrs(edge_padding_low=low, edge_padding_high=high, interior_padding=interior)
    operand = runtime_type(ctx.operand_types[0], np.asarray(inputs[0]))
    shape = static._pad_shape(ctx.error, operand, rec)  # (C2), (C3)
    if any(n < 0 for n in shape):
        raise ctx.error("C4", f"shape(result) = {list(shape)} would have a negative size: negative edge "
                        "padding removes more than the padded operand")
    check_result_shape(ctx, shape, "shape(operand) + edge_padding_low + max(shape(operand) - 1, 0) * "
                       f"interior_padding + edge_padding_high with {list(low)}, {list(high)}, "
                       f"{list(interior)}", "C4")
    return static_view(ctx, rec, inputs, shape)


dynamic_op("stablehlo.dynamic_pad", "stablehlo.pad", _pad_view, 2,
           [(i, what) for i, _, what in _PAD_OPERANDS], verify=_verify_dynamic_pad, infer=infer_dynamic_pad)


# --- dynamic_reshape -----------------------------------------------------------------------

def infer_dynamic_reshape(a: Attrs, types: list[Any]) -> list[Inferred]:
    """reshape's (C1)-(C3), of rank size(output_shape) (C4)."""
    (part,) = static.infer_reshape(a, types)
    n = _infer_vector(types, 1, "I2", "output_shape").shape[0]
    fits = part.check
    assert isinstance(part, Partial) and fits is not None
    return [Partial(None if n is None else (None,) * n, part.element,
                    check=lambda t: fits(t) and (n is None or t.rank == n), what=part.what)]


def _verify_dynamic_reshape(ctx: OpCall) -> None:
    static._verify_reshape(ctx)  # (C1)-(C3) where the sizes are static
    n = _integer_vector(ctx, 1, "I2", "output_shape").shape[0]
    rank = ctx.result_tensor(0).rank
    if n is not None and n != rank:
        raise ctx.error("C4", f"size(output_shape) = {n} must equal rank(result) = {rank}")


def _reshape_view(ctx: OpCall, inputs: Sequence[Any]) -> OpCall:
    sizes = shape_values(ctx, inputs[1], "I2", "output_shape")
    if len(sizes) != ctx.result_tensor(0).rank:
        raise ctx.error("C4", f"size(output_shape) = {len(sizes)} must equal rank(result) = "
                        f"{ctx.result_tensor(0).rank}")
    check_result_shape(ctx, sizes, f"output_shape = {list(sizes)}")
    view = static_view(ctx, Attrs(), inputs, sizes)
    static._verify_reshape(view)  # (C2), (C3) on the run-time sizes
    return view


dynamic_op("stablehlo.dynamic_reshape", "stablehlo.reshape", _reshape_view, 1, [(1, "output_shape")],
           verify=_verify_dynamic_reshape, infer=infer_dynamic_reshape)


# --- real_dynamic_slice (not in the spec: StableHLO's RealDynamicSliceOp) --------------------

_SLICE_OPERANDS = ((1, "I2", "start_indices"), (2, "I3", "limit_indices"), (3, "I4", "strides"))


def _as_slice(ctx_error: Callable[[str | None, str], Exception]) -> Callable[[str | None, str], Exception]:
    """Errors of slice's constraints, named as slice's (real_dynamic_slice has no spec section)."""
    return lambda label, msg: ctx_error(None, f"as slice ({label}) requires: {msg}" if label else msg)


def infer_real_dynamic_slice(a: Attrs, types: list[Any]) -> list[Inferred]:
    operand = static._input(types, 0, "I1", "operand", per_tensor_only=True)
    for i, label, what in _SLICE_OPERANDS:
        n = _infer_vector(types, i, label, what).shape[0]
        if n is not None and n != operand.rank:
            raise InferError(None, f"as slice (C2) requires: size({what}) = {n} must equal rank(operand) = "
                             f"{operand.rank}")
    return [Partial((None,) * operand.rank, operand.element)]


def _verify_real_dynamic_slice(ctx: OpCall) -> None:
    operand = static._operand(ctx, per_tensor_only=True)
    result = static._result(ctx, per_tensor_only=True)
    err = _as_slice(ctx.error)
    if not same_element(operand.element, result.element):
        raise err("C1", f"element_type(operand) = {operand.element} must equal element_type(result) = "
                  f"{result.element}")
    for i, label, what in _SLICE_OPERANDS:
        n = _integer_vector(ctx, i, label, what).shape[0]
        if n is not None and n != operand.rank:
            raise err("C2", f"size({what}) = {n} must equal rank(operand) = {operand.rank}")
    if result.rank != operand.rank:
        raise err("C5", f"rank(result) = {result.rank} must equal rank(operand) = {operand.rank}")


def _slice_view(ctx: OpCall, inputs: Sequence[Any]) -> OpCall:
    start, limit, strides = (shape_values(ctx, inputs[i], label, what, sizes=False)
                             for i, label, what in _SLICE_OPERANDS)
    rec = static.SliceAttrs(start_indices=start, limit_indices=limit, strides=strides)
    operand = runtime_type(ctx.operand_types[0], np.asarray(inputs[0]))
    shape = static._slice_shape(_as_slice(ctx.error), operand, rec)  # (C2)-(C4) on the values
    check_result_shape(ctx, shape, f"ceil((limit_indices - start_indices) / strides) with {list(limit)}, "
                       f"{list(start)}, {list(strides)}")
    return static_view(ctx, rec, inputs, shape)


# start_indices and strides decide where each element comes from; limit_indices only the shape
dynamic_op("stablehlo.real_dynamic_slice", "stablehlo.slice", _slice_view, 1,
           [(i, what) for i, _, what in _SLICE_OPERANDS], links=[1, 3], verify=_verify_real_dynamic_slice,
           infer=infer_real_dynamic_slice)


# --- set_dimension_size (not a StableHLO op) -----------------------------------------------

@record
class SetDimensionSizeAttrs(Attrs):
    dimension: int = attr(integer("dimension"))


def _refuse_set_dimension_size(ctx: OpCall, *args: Any) -> Any:
    """Refused: not in the StableHLO spec (XLA's SetDimensionSize, bounded dynamism); the op
    never runs, so it has no provenance or explanation either."""
    raise UnsupportedError("stablehlo.set_dimension_size is not in the StableHLO spec (it is XLA's "
                           "SetDimensionSize, which marks a bounded dimension's run-time size): hlolab "
                           "does not run it; use tensor<?x...> values and the dynamic_* ops", ctx.loc)


def _infer_set_dimension_size(a: SetDimensionSizeAttrs, types: list[Any]) -> list[Inferred]:
    """The declared result type, whatever it is: the op parses and verifies so a program
    holding it loads, and stops where it would run."""
    return [Partial(check=lambda t: isinstance(t, TensorType), what="a tensor")]


@op("stablehlo.set_dimension_size", attrs=SetDimensionSizeAttrs, family="shape",
    infer=_infer_set_dimension_size,
    provenance=_refuse_set_dimension_size, explain=_refuse_set_dimension_size)
def set_dimension_size(ctx: OpCall, *operands: Any) -> np.ndarray:
    """Refused: not in the StableHLO spec (XLA's SetDimensionSize, bounded dynamism)."""
    return _refuse_set_dimension_size(ctx)


# --- custom_call @shape_assertion (JAX's shape-polymorphic export) ---------------------------

def shape_assertion(ctx: OpCall, assert_what: Any = None, *error_message_inputs: Any) -> None:
    """JAX's check that the run-time sizes meet the symbolic shapes the program was exported
    for: ``assert_what`` (a boolean scalar) false stops the run with the program's own
    ``error_message``, its ``{0}``, ``{1}``, ... replaced by ``error_message_inputs``."""
    from hlolab.ir.attrs import StringAttr

    cond = None if assert_what is None else np.asarray(assert_what)
    if cond is None or cond.shape != () or cond.dtype != np.bool_:
        raise ctx.error(None, "@shape_assertion takes a tensor<i1> first (the condition), got "
                        f"{', '.join(str(t) for t in ctx.operand_types) or 'no operand'}")
    if bool(assert_what):
        return None
    message = ctx.op.attributes.get("error_message")
    text = message.value if isinstance(message, StringAttr) else "shape assertion failed"
    values = [np.asarray(v).item() for v in error_message_inputs]
    try:
        text = text.format(*values)
    except (IndexError, KeyError, ValueError):
        pass  # a message whose placeholders do not fit the inputs is shown as written
    raise ExecutionError(f"@shape_assertion failed: {text}", ctx.loc)


def _register_call_targets() -> None:
    from hlolab.ops.check import CALL_TARGETS

    CALL_TARGETS["shape_assertion"] = shape_assertion


_register_call_targets()


# --- result shapes that operand *values* decide, for ops defined elsewhere ------------------
# (hlolab.interp.refine fills a `?` result size from these before the op runs; the op then
# runs on static types. The ops above handle a `?` result themselves.)

def _gather_shape(ctx: OpCall, inputs: Sequence[Any]) -> list[tuple[int | None, ...] | None]:
    from hlolab.ops.gather import expected_result_shape

    sizes = shape_values(ctx, inputs[2], "I3", "slice_sizes", sizes=False)
    shape = expected_result_shape(np.shape(inputs[1]), sizes, ctx.attrs, ctx.result_tensor(0).rank)
    return [None if shape is None else tuple(shape)]


def _conv_shape(ctx: OpCall, inputs: Sequence[Any]) -> list[tuple[int | None, ...] | None]:
    from hlolab.ops.contraction import _runtime_padding, conv_params, conv_result_shape

    p = conv_params(ctx.attrs)
    padding = _runtime_padding(ctx, p, inputs)
    return [tuple(conv_result_shape(np.shape(inputs[0]), np.shape(inputs[1]), p, padding))]


VALUE_SHAPES["stablehlo.dynamic_gather"] = _gather_shape
VALUE_SHAPES["stablehlo.dynamic_conv"] = _conv_shape


# --- parameter schemas (hlolab.ops.examples): the shape operands' values are parameters ------

def _dynamic_schemas() -> None:
    from hlolab.ops.examples import (
        Operand,
        OpParts,
        OpSchema,
        Param,
        dtype_param,
        int_param,
        ints_param,
        register_schema,
        scalar,
        shape_param,
        ttype,
    )

    def vector(name: str, values: Sequence[int], et: str) -> Operand:
        v = np.array(values, dtype=np.int64)
        return Operand(name, ttype(v.shape, et), v.astype(ttype(v.shape, et).dtype))

    def result(shape: Callable[[], Sequence[int]], et: str) -> list[TensorType]:
        """The result type the values give; a placeholder scalar where they give none
        (verification then names the constraint they break)."""
        try:
            return [ttype(shape(), et)]
        except (ValueError, InferError, TypeError, IndexError):
            return [ttype((), et)]

    def one(name: str, params: tuple[Param, ...], build: Any, spec: dict[str, Any], doc: str) -> None:
        register_schema(OpSchema(name, params, {"default": {}, "spec-example": spec}, build, doc=doc))

    def broadcast_build(p: dict[str, Any]) -> OpParts:
        rec = DynamicBroadcastInDimAttrs(broadcast_dimensions=p["broadcast_dimensions"],
                                         known_expanding_dimensions=p["known_expanding_dimensions"],
                                         known_nonexpanding_dimensions=p["known_nonexpanding_dimensions"])
        return OpParts([Operand("operand", ttype(p["operand"], p["dtype"])),
                        vector("output_dimensions", p["output_dimensions"], p["index_dtype"])],
                       result(lambda: p["output_dimensions"], p["dtype"]), rec)

    one("stablehlo.dynamic_broadcast_in_dim", (
        shape_param("operand", (3,), "the tensor broadcast"),
        ints_param("output_dimensions", (2, 3), "the output_dimensions operand's value: the result shape"),
        ints_param("broadcast_dimensions", (1,), "result dim of each operand dim"),
        ints_param("known_expanding_dimensions", (), "operand dims known to expand (size 1)"),
        ints_param("known_nonexpanding_dimensions", (), "operand dims known not to expand"),
        dtype_param("f32"),
        dtype_param("i64", "element type of output_dimensions", "index_dtype"),
    ), broadcast_build, {"operand": (1, 3), "output_dimensions": (2, 3, 2), "broadcast_dimensions": (2, 1),
                         "known_expanding_dimensions": (0,), "known_nonexpanding_dimensions": (1,),
                         "dtype": "i64", "inputs": {"operand": [[1, 2, 3]]}, "index": (1, 2, 0)},
        "broadcast_in_dim with the result shape given as an operand's value")

    def iota_build(p: dict[str, Any]) -> OpParts:
        return OpParts([vector("output_shape", p["output_shape"], p["index_dtype"])],
                       result(lambda: p["output_shape"], p["dtype"]),
                       static.IotaAttrs(iota_dimension=p["iota_dimension"]))

    one("stablehlo.dynamic_iota", (
        ints_param("output_shape", (3, 4), "the output_shape operand's value: the result shape"),
        int_param("iota_dimension", 1, "the dim counted along"),
        dtype_param("i32", "element type of the result"),
        dtype_param("i64", "element type of output_shape", "index_dtype"),
    ), iota_build, {"output_shape": (4, 5), "iota_dimension": 0, "dtype": "i64", "index": (2, 3)},
        "iota with the result shape given as an operand's value")

    def pad_build(p: dict[str, Any]) -> OpParts:
        rec = static.PadAttrs(edge_padding_low=p["edge_padding_low"],
                              edge_padding_high=p["edge_padding_high"],
                              interior_padding=p["interior_padding"])
        operand = ttype(p["operand"], p["dtype"])
        return OpParts([Operand("operand", operand),
                        Operand("padding_value", ttype((), p["dtype"]),
                                scalar(p["padding_value"], p["dtype"])),
                        vector("edge_padding_low", p["edge_padding_low"], p["index_dtype"]),
                        vector("edge_padding_high", p["edge_padding_high"], p["index_dtype"]),
                        vector("interior_padding", p["interior_padding"], p["index_dtype"])],
                       result(lambda: static._pad_shape(InferError, operand, rec), p["dtype"]), Attrs())

    one("stablehlo.dynamic_pad", (
        shape_param("operand", (2, 3), "the tensor padded"),
        Param("padding_value", "number", -1, "the value written into the padding"),
        ints_param("edge_padding_low", (0, 1), "the edge_padding_low operand's value"),
        ints_param("edge_padding_high", (1, 1), "the edge_padding_high operand's value"),
        ints_param("interior_padding", (1, 0), "the interior_padding operand's value"),
        dtype_param("f32"),
        dtype_param("i64", "element type of the padding operands", "index_dtype"),
    ), pad_build, {"operand": (2, 3), "padding_value": 0, "edge_padding_low": (0, 1),
                   "edge_padding_high": (2, 1),
                   "interior_padding": (1, 2), "dtype": "i64", "inputs": {"operand": [[1, 2, 3], [4, 5, 6]]},
                   "index": (2, 4)},
        "pad with the paddings given as operands' values")

    def reshape_build(p: dict[str, Any]) -> OpParts:
        return OpParts([Operand("operand", ttype(p["operand"], p["dtype"])),
                        vector("output_shape", p["output_shape"], p["index_dtype"])],
                       result(lambda: p["output_shape"], p["dtype"]), Attrs())

    one("stablehlo.dynamic_reshape", (
        shape_param("operand", (2, 3), "the tensor reshaped"),
        ints_param("output_shape", (3, 2), "the output_shape operand's value (same element count)"),
        dtype_param("f32"),
        dtype_param("i64", "element type of output_shape", "index_dtype"),
    ), reshape_build, {"operand": (2, 3), "output_shape": (3, 2), "dtype": "i64",
                       "inputs": {"operand": [[1, 2, 3], [4, 5, 6]]}, "index": (1, 1)},
        "reshape with the result shape given as an operand's value")

    def slice_build(p: dict[str, Any]) -> OpParts:
        rec = static.SliceAttrs(start_indices=p["start_indices"], limit_indices=p["limit_indices"],
                                strides=p["strides"])
        operand = ttype(p["operand"], p["dtype"])
        return OpParts([Operand("operand", operand),
                        vector("start_indices", p["start_indices"], p["index_dtype"]),
                        vector("limit_indices", p["limit_indices"], p["index_dtype"]),
                        vector("strides", p["strides"], p["index_dtype"])],
                       result(lambda: static._slice_shape(InferError, operand, rec), p["dtype"]), Attrs())

    # not in the spec: its example is slice's, with the attributes as values
    one("stablehlo.real_dynamic_slice", (
        shape_param("operand", (3, 5), "the tensor sliced"),
        ints_param("start_indices", (1, 0), "the start_indices operand's value"),
        ints_param("limit_indices", (3, 5), "the limit_indices operand's value (exclusive)"),
        ints_param("strides", (1, 2), "the strides operand's value"),
        dtype_param("f32"),
        dtype_param("i64", "element type of the index operands", "index_dtype"),
    ), slice_build, {"operand": (3, 4), "start_indices": (1, 2), "limit_indices": (3, 4), "strides": (1, 1),
                     "dtype": "i64", "inputs": {"operand": [[0, 0, 0, 0], [0, 0, 1, 1], [0, 0, 1, 1]]},
                     "index": (1, 1)},
        "slice with start, limit and strides given as operands' values (StableHLO dialect, not in the spec)")


_dynamic_schemas()


# --- dynamic_gather, dynamic_conv: the element budget before they allocate ------------------
#
# Both are defined with their static ops (gather.py, contraction.py), where one evaluate
# serves both; their result size comes from an operand's value (slice_sizes, padding): the
# budget is checked from the shape those values give (VALUE_SHAPES) before their evaluate
# allocates anything.

def _budget_first(name: str) -> None:
    """Wrap ``name``'s evaluate: the result shape its operand values ask for
    (``VALUE_SHAPES[name]``) is checked against the element budget first."""
    from hlolab.ops.registry import REGISTRY

    d = REGISTRY.get(name)
    if d is None or getattr(d.evaluate, "budget_first", False):
        return
    base = d.evaluate

    def evaluate(ctx: OpCall, *inputs: Any) -> Any:
        (shape,) = VALUE_SHAPES[name](ctx, inputs)
        if shape is not None and all(n is not None and n >= 0 for n in shape):
            check_budget(ctx, [int(n) for n in shape if n is not None])
        return base(ctx, *inputs)

    evaluate.__doc__ = base.__doc__
    evaluate.__wrapped__ = base  # type: ignore[attr-defined]
    evaluate.budget_first = True  # type: ignore[attr-defined]
    d.evaluate = evaluate


def _install_budgets() -> None:
    import hlolab.ops.contraction  # noqa: F401  (registers dynamic_conv)
    import hlolab.ops.gather  # noqa: F401  (registers dynamic_gather)

    for name in VALUE_SHAPES:
        _budget_first(name)


_install_budgets()
