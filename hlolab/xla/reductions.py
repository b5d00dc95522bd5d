"""Reductions, windows, Map and batch normalization."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hlolab.xla.builder import BuilderError, XlaBuilder, XlaComputation, XlaOp, builder_function, emit
from hlolab.xla.shape_ops import dims_of, ints


def make_padding(input_dims: Sequence[int], window_dims: Sequence[int], strides: Sequence[int],
                 padding: str | Sequence[Sequence[int]], what: str) -> tuple[tuple[int, int], ...]:
    """XLA's padding: ``"VALID"`` (none), ``"SAME"`` (output size ceil(input / stride), the
    extra split low = total // 2, high = the rest) or explicit (low, high) pairs."""
    n = len(input_dims)
    if isinstance(padding, str):
        kind = padding.upper()
        if kind == "VALID":
            return ((0, 0),) * n
        if kind != "SAME":
            raise BuilderError(f"{what}: padding must be 'SAME', 'VALID' or (low, high) pairs, "
                               f"got {padding!r}")
        if len(window_dims) != n or len(strides) != n:
            raise BuilderError(f"{what}: 'SAME' padding needs one window size and stride per dim")
        out = []
        for size, w, s in zip(input_dims, window_dims, strides, strict=True):
            if s <= 0:
                raise BuilderError(f"{what}: strides must be positive for 'SAME' padding, "
                                   f"got {list(strides)}")
            total = max((-(-size // s) - 1) * s + w - size, 0)
            out.append((total // 2, total - total // 2))
        return tuple(out)
    try:
        pairs = tuple((int(lo), int(hi)) for lo, hi in padding)
    except (TypeError, ValueError):
        raise BuilderError(f"{what}: padding must be 'SAME', 'VALID' or (low, high) pairs, "
                           f"got {padding!r}") from None
    return pairs


def _elements(comp: XlaComputation, what: str) -> list[Any]:
    if not isinstance(comp, XlaComputation):
        raise BuilderError(f"{what}: expected an XlaComputation, got {type(comp).__name__} {comp!r}")
    return [getattr(t, "element", None) for t in comp.result_types]


def _many(x: XlaOp | Sequence[XlaOp]) -> tuple[list[XlaOp], bool]:
    return ([x], True) if isinstance(x, XlaOp) else (list(x), False)


@builder_function
def Reduce(operand: XlaOp | Sequence[XlaOp], init_value: XlaOp | Sequence[XlaOp],
           computation: XlaComputation, dimensions_to_reduce: Sequence[int]) -> Any:
    """``dimensions_to_reduce`` folded with ``computation`` from ``init_value``:
    ``stablehlo.reduce``. Lists of operands and inits give a tuple of results."""
    ops, single = _many(operand)
    inits, _ = _many(init_value)
    out = emit("stablehlo.reduce", [*ops, *inits],
               {"dimensions": ints(dimensions_to_reduce, "Reduce", "dimensions_to_reduce")},
               computations=[computation], elements=_elements(computation, "Reduce"), what="Reduce")
    return out[0] if single else tuple(out)


def _reduce_window(what: str, operand: Any, init_value: Any, computation: XlaComputation,
                   window_dimensions: Sequence[int], window_strides: Sequence[int] | None,
                   base_dilations: Sequence[int] | None, window_dilations: Sequence[int] | None,
                   padding: Any) -> Any:
    ops, single = _many(operand)
    inits, _ = _many(init_value)
    wd = ints(window_dimensions, what, "window_dimensions")
    ws = ints(window_strides, what, "window_strides") if window_strides is not None else (1,) * len(wd)
    fields: dict[str, Any] = {"window_dimensions": wd, "window_strides": ws}
    if base_dilations is not None:
        fields["base_dilations"] = ints(base_dilations, what, "base_dilations")
    if window_dilations is not None:
        fields["window_dilations"] = ints(window_dilations, what, "window_dilations")
    if padding is not None:
        fields["padding"] = make_padding(dims_of(ops[0], what), wd, ws, padding, what)
    out = emit("stablehlo.reduce_window", [*ops, *inits], fields, computations=[computation],
               elements=_elements(computation, what), what=what)
    return out[0] if single else tuple(out)


@builder_function
def ReduceWindow(operand: XlaOp | Sequence[XlaOp], init_value: XlaOp | Sequence[XlaOp],
                 computation: XlaComputation, window_dimensions: Sequence[int],
                 window_strides: Sequence[int] | None = None,
                 padding: str | Sequence[Sequence[int]] = "VALID", *,
                 base_dilations: Sequence[int] | None = None,
                 window_dilations: Sequence[int] | None = None) -> Any:
    """Each window of ``operand`` folded with ``computation``: ``stablehlo.reduce_window``;
    ``padding`` is "VALID", "SAME" or (low, high) pairs."""
    return _reduce_window("ReduceWindow", operand, init_value, computation, window_dimensions,
                          window_strides, base_dilations, window_dilations, padding)


@builder_function
def ReduceWindowWithGeneralPadding(operand: XlaOp | Sequence[XlaOp], init_value: XlaOp | Sequence[XlaOp],
                                   computation: XlaComputation, window_dimensions: Sequence[int],
                                   window_strides: Sequence[int], base_dilations: Sequence[int],
                                   window_dilations: Sequence[int],
                                   padding: Sequence[Sequence[int]]) -> Any:
    """ReduceWindow with dilations and explicit (low, high) padding: ``stablehlo.reduce_window``."""
    return _reduce_window("ReduceWindowWithGeneralPadding", operand, init_value, computation,
                          window_dimensions, window_strides, base_dilations, window_dilations, padding)


@builder_function
def SelectAndScatter(operand: XlaOp, select: XlaComputation, window_dimensions: Sequence[int],
                     window_strides: Sequence[int], padding: str | Sequence[Sequence[int]],
                     source: XlaOp, init_value: XlaOp, scatter: XlaComputation) -> XlaOp:
    """Per window, ``select`` picks one element of ``operand`` and the window's ``source`` value
    is combined into it with ``scatter``: ``stablehlo.select_and_scatter``."""
    wd = ints(window_dimensions, "SelectAndScatter", "window_dimensions")
    ws = ints(window_strides, "SelectAndScatter", "window_strides")
    pads = make_padding(dims_of(operand, "SelectAndScatter"), wd, ws, padding, "SelectAndScatter")
    return emit("stablehlo.select_and_scatter", [operand, source, init_value],
                {"window_dimensions": wd, "window_strides": ws, "padding": pads},
                computations=[select, scatter], what="SelectAndScatter")[0]


@builder_function
def SelectAndScatterWithGeneralPadding(operand: XlaOp, select: XlaComputation,
                                       window_dimensions: Sequence[int], window_strides: Sequence[int],
                                       padding: Sequence[Sequence[int]], source: XlaOp,
                                       init_value: XlaOp, scatter: XlaComputation) -> XlaOp:
    """SelectAndScatter with explicit (low, high) padding: ``stablehlo.select_and_scatter``."""
    return SelectAndScatter(operand, select, window_dimensions, window_strides, padding, source,
                            init_value, scatter)


@builder_function
def Map(builder: XlaBuilder, operands: Sequence[XlaOp], computation: XlaComputation,
        dimensions: Sequence[int], static_operands: Sequence[XlaOp] = ()) -> XlaOp:
    """``computation`` applied element by element across ``operands``: ``stablehlo.map``."""
    if static_operands:
        raise BuilderError("Map: static_operands are not supported (stablehlo.map has none)")
    return emit("stablehlo.map", list(operands), {"dimensions": ints(dimensions, "Map", "dimensions")},
                computations=[computation], elements=_elements(computation, "Map"), builder=builder,
                what="Map")[0]


@builder_function
def BatchNormTraining(operand: XlaOp, scale: XlaOp, offset: XlaOp, epsilon: float,
                      feature_index: int) -> tuple[XlaOp, XlaOp, XlaOp]:
    """Normalize over every dim but ``feature_index``, returning (output, batch_mean,
    batch_var): ``stablehlo.batch_norm_training``."""
    return tuple(emit("stablehlo.batch_norm_training", [operand, scale, offset],  # type: ignore[return-value]
                      {"epsilon": float(epsilon), "feature_index": int(feature_index)},
                      what="BatchNormTraining"))


@builder_function
def BatchNormInference(operand: XlaOp, scale: XlaOp, offset: XlaOp, mean: XlaOp, variance: XlaOp,
                       epsilon: float, feature_index: int) -> XlaOp:
    """Normalize with the given ``mean`` and ``variance`` per feature:
    ``stablehlo.batch_norm_inference``."""
    return emit("stablehlo.batch_norm_inference", [operand, scale, offset, mean, variance],
                {"epsilon": float(epsilon), "feature_index": int(feature_index)},
                what="BatchNormInference")[0]


@builder_function
def BatchNormGrad(operand: XlaOp, scale: XlaOp, batch_mean: XlaOp, batch_var: XlaOp, grad_output: XlaOp,
                  epsilon: float, feature_index: int) -> tuple[XlaOp, XlaOp, XlaOp]:
    """Gradients of batch normalization, returning (grad_operand, grad_scale, grad_offset):
    ``stablehlo.batch_norm_grad``."""
    return tuple(emit("stablehlo.batch_norm_grad",  # type: ignore[return-value]
                      [operand, scale, batch_mean, batch_var, grad_output],
                      {"epsilon": float(epsilon), "feature_index": int(feature_index)},
                      what="BatchNormGrad"))
