"""Dot products and convolutions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hlolab.ir.attrs import ArrayAttr, EnumAttr
from hlolab.xla.builder import BuilderError, XlaOp, builder_function, emit
from hlolab.xla.reductions import make_padding
from hlolab.xla.shape_ops import dims_of, ints
from hlolab.xla.shapes import ConvolutionDimensionNumbers, DotDimensionNumbers, ElementLike, to_element_type

PRECISIONS = ("DEFAULT", "HIGH", "HIGHEST")


def precision_attr(precision_config: Sequence[str] | str | None, what: str) -> ArrayAttr | None:
    """``["DEFAULT", "HIGHEST"]`` (one per operand; one value for both) as the IR attribute."""
    if precision_config is None:
        return None
    values = [precision_config] * 2 if isinstance(precision_config, str) else list(precision_config)
    out = []
    for v in values:
        p = str(v).upper().removeprefix("PRECISION.")
        if p not in PRECISIONS:
            raise BuilderError(f"{what}: precision must be DEFAULT, HIGH or HIGHEST, got {v!r}")
        out.append(EnumAttr("stablehlo", "precision", p))
    return ArrayAttr(tuple(out))


def _elements(preferred_element_type: ElementLike | None) -> list[Any] | None:
    return None if preferred_element_type is None else [to_element_type(preferred_element_type)]


@builder_function
def Dot(lhs: XlaOp, rhs: XlaOp, precision_config: Sequence[str] | None = None,
        preferred_element_type: ElementLike | None = None) -> XlaOp:
    """Vector/matrix product contracting lhs's last dim with rhs's first (rank 1 or 2):
    ``stablehlo.dot``."""
    fields: dict[str, Any] = {}
    pc = precision_attr(precision_config, "Dot")
    if pc is not None:
        fields["precision_config"] = pc
    return emit("stablehlo.dot", [lhs, rhs], fields, elements=_elements(preferred_element_type),
                what="Dot")[0]


@builder_function
def DotGeneral(lhs: XlaOp, rhs: XlaOp, dimension_numbers: DotDimensionNumbers | None = None,
               precision_config: Sequence[str] | None = None,
               preferred_element_type: ElementLike | None = None, *,
               lhs_contracting_dimensions: Sequence[int] | None = None,
               rhs_contracting_dimensions: Sequence[int] | None = None,
               lhs_batch_dimensions: Sequence[int] | None = None,
               rhs_batch_dimensions: Sequence[int] | None = None) -> XlaOp:
    """Sum of products over the contracting dims, batched over the batch dims:
    ``stablehlo.dot_general``. Dimension numbers as a ``DotDimensionNumbers`` or keywords."""
    what = "DotGeneral"
    given = {k: v for k, v in {"lhs_contracting_dimensions": lhs_contracting_dimensions,
                               "rhs_contracting_dimensions": rhs_contracting_dimensions,
                               "lhs_batch_dimensions": lhs_batch_dimensions,
                               "rhs_batch_dimensions": rhs_batch_dimensions}.items() if v is not None}
    if dimension_numbers is not None and given:
        raise BuilderError(f"{what}: give dimension_numbers or {', '.join(given)}, not both")
    dn = dimension_numbers if dimension_numbers is not None else DotDimensionNumbers(**given)
    fields: dict[str, Any] = dn.fields()
    pc = precision_attr(precision_config, what)
    if pc is not None:
        fields["precision_config"] = pc
    return emit("stablehlo.dot_general", [lhs, rhs], fields, elements=_elements(preferred_element_type),
                what=what)[0]


def _conv(what: str, lhs: XlaOp, rhs: XlaOp, window_strides: Sequence[int] | None,
          padding: Any, lhs_dilation: Sequence[int] | None, rhs_dilation: Sequence[int] | None,
          dimension_numbers: ConvolutionDimensionNumbers | None, feature_group_count: int,
          batch_group_count: int, precision_config: Any, preferred_element_type: Any) -> XlaOp:
    lshape, rshape = dims_of(lhs, what), dims_of(rhs, what)
    if len(lshape) < 2:
        raise BuilderError(f"{what}: lhs must have rank >= 2 (batch, feature, spatial...), "
                           f"got {list(lshape)}")
    dn = dimension_numbers or ConvolutionDimensionNumbers.default(len(lshape) - 2)
    fields: dict[str, Any] = dn.fields()
    n = len(dn.input_spatial_dimensions)
    strides = ints(window_strides, what, "window_strides") if window_strides is not None else (1,) * n
    fields["window_strides"] = strides
    ld = ints(lhs_dilation, what, "lhs_dilation") if lhs_dilation is not None else None
    rd = ints(rhs_dilation, what, "rhs_dilation") if rhs_dilation is not None else None
    if ld is not None:
        fields["lhs_dilation"] = ld
    if rd is not None:
        fields["rhs_dilation"] = rd
    if padding is not None:
        try:
            size = [lshape[d] for d in dn.input_spatial_dimensions]
            win = [rshape[d] for d in dn.kernel_spatial_dimensions]
        except IndexError:
            raise BuilderError(f"{what}: dimension numbers name dims the operands do not have") from None
        if ld is not None and len(ld) == n:  # 'SAME' sizes are those of the dilated frames
            size = [(s - 1) * d + 1 if s else 0 for s, d in zip(size, ld, strict=True)]
        if rd is not None and len(rd) == n:
            win = [(w - 1) * d + 1 if w else 0 for w, d in zip(win, rd, strict=True)]
        fields["padding"] = make_padding(size, win, strides if len(strides) == n else (1,) * n, padding, what)
    fields["feature_group_count"] = int(feature_group_count)
    fields["batch_group_count"] = int(batch_group_count)
    pc = precision_attr(precision_config, what)
    if pc is not None:
        fields["precision_config"] = pc
    return emit("stablehlo.convolution", [lhs, rhs], fields, elements=_elements(preferred_element_type),
                what=what)[0]


@builder_function
def Conv(lhs: XlaOp, rhs: XlaOp, window_strides: Sequence[int], padding: str = "VALID",
         feature_group_count: int = 1, batch_group_count: int = 1,
         precision_config: Sequence[str] | None = None,
         preferred_element_type: ElementLike | None = None) -> XlaOp:
    """Convolution in XLA's default layout (lhs [b, f, spatial], kernel [o, i, spatial]) with
    "SAME"/"VALID" padding: ``stablehlo.convolution``."""
    return _conv("Conv", lhs, rhs, window_strides, padding, None, None, None, feature_group_count,
                 batch_group_count, precision_config, preferred_element_type)


@builder_function
def ConvWithGeneralPadding(lhs: XlaOp, rhs: XlaOp, window_strides: Sequence[int],
                           padding: Sequence[Sequence[int]], feature_group_count: int = 1,
                           batch_group_count: int = 1, precision_config: Sequence[str] | None = None,
                           preferred_element_type: ElementLike | None = None) -> XlaOp:
    """Convolution in XLA's default layout with explicit (low, high) padding:
    ``stablehlo.convolution``."""
    return _conv("ConvWithGeneralPadding", lhs, rhs, window_strides, padding, None, None, None,
                 feature_group_count, batch_group_count, precision_config, preferred_element_type)


@builder_function
def ConvGeneralDilated(lhs: XlaOp, rhs: XlaOp, window_strides: Sequence[int],
                       padding: str | Sequence[Sequence[int]], lhs_dilation: Sequence[int] | None = None,
                       rhs_dilation: Sequence[int] | None = None,
                       dimension_numbers: ConvolutionDimensionNumbers | None = None,
                       feature_group_count: int = 1, batch_group_count: int = 1,
                       precision_config: Sequence[str] | None = None,
                       preferred_element_type: ElementLike | None = None) -> XlaOp:
    """Convolution with any layout, dilations, padding and groups: ``stablehlo.convolution``."""
    return _conv("ConvGeneralDilated", lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                 dimension_numbers, feature_group_count, batch_group_count, precision_config,
                 preferred_element_type)
