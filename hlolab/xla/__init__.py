"""The XlaBuilder-style API: build a verified StableHLO module op by op.

::

    from hlolab.xla import *
    b = XlaBuilder("main")
    x = Parameter(b, 0, Shape.parse("f32[2,3]"), "x")
    y = Add(x, ConstantR0(b, 1.0))
    comp = b.build(y)
    comp.as_text(); comp.run(np.ones((2, 3), np.float32))

``FUNCTIONS`` maps every builder name to its function. Each builds one
StableHLO/CHLO op (or a short composition its docstring names), verified at
the call, collectives (AllGather, AllReduce, ...) included; ``run(..., grid=(R, P))``
runs a computation on a process grid.
"""

from __future__ import annotations

from hlolab.xla import (  # noqa: F401  (they register their functions in FUNCTIONS)
    collectives,
    computations,
    contractions,
    control,
    elementwise,
    indexing,
    misc,
    reductions,
    shape_ops,
    sources,
)
from hlolab.xla.builder import FUNCTIONS, BuilderError, XlaBuilder, XlaComputation, XlaOp
from hlolab.xla.shapes import (
    BF16,
    C64,
    C128,
    F16,
    F32,
    F64,
    PRED,
    S8,
    S16,
    S32,
    S64,
    U8,
    U16,
    U32,
    U64,
    ConvolutionDimensionNumbers,
    DotDimensionNumbers,
    GatherDimensionNumbers,
    PaddingConfig,
    ScatterDimensionNumbers,
    Shape,
    to_element_type,
)

globals().update(FUNCTIONS)

__all__ = ["XlaBuilder", "XlaOp", "XlaComputation", "Shape", "FUNCTIONS", "BuilderError",
           "PaddingConfig", "GatherDimensionNumbers", "ScatterDimensionNumbers", "DotDimensionNumbers",
           "ConvolutionDimensionNumbers", "to_element_type",
           "PRED", "S8", "S16", "S32", "S64", "U8", "U16", "U32", "U64", "F16", "BF16", "F32", "F64",
           "C64", "C128", *FUNCTIONS]
