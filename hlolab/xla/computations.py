"""Ready-made scalar sub-computations (reduce bodies, comparators), built with the API."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from hlolab.xla.builder import XlaBuilder, XlaComputation, XlaOp, builder_function
from hlolab.xla.shapes import ElementLike, Shape, to_element_type


def _binary_computation(name: str, element_type: ElementLike,
                        body: Callable[[XlaOp, XlaOp], XlaOp]) -> XlaComputation:
    et = to_element_type(element_type)
    b = XlaBuilder(name)
    x = b.add_parameter(0, Shape.scalar(et), "lhs")
    y = b.add_parameter(1, Shape.scalar(et), "rhs")
    return b.build(body(x, y))


def _fn(name: str) -> Callable[..., XlaOp]:
    from hlolab.xla.builder import FUNCTIONS

    return FUNCTIONS[name]


@builder_function
def CreateScalarAddComputation(element_type: ElementLike) -> XlaComputation:
    """(x, y) -> x + y on scalars of ``element_type``: a body of ``stablehlo.add``."""
    return _binary_computation("add", element_type, _fn("Add"))


@builder_function
def CreateScalarMultiplyComputation(element_type: ElementLike) -> XlaComputation:
    """(x, y) -> x * y on scalars: a body of ``stablehlo.multiply``."""
    return _binary_computation("multiply", element_type, _fn("Mul"))


@builder_function
def CreateScalarMaxComputation(element_type: ElementLike) -> XlaComputation:
    """(x, y) -> max(x, y) on scalars: a body of ``stablehlo.maximum``."""
    return _binary_computation("max", element_type, _fn("Max"))


@builder_function
def CreateScalarMinComputation(element_type: ElementLike) -> XlaComputation:
    """(x, y) -> min(x, y) on scalars: a body of ``stablehlo.minimum``."""
    return _binary_computation("min", element_type, _fn("Min"))


@builder_function
def CreateScalarAndComputation(element_type: ElementLike = "pred") -> XlaComputation:
    """(x, y) -> x and y on scalars: a body of ``stablehlo.and``."""
    return _binary_computation("and", element_type, _fn("And"))


@builder_function
def CreateScalarOrComputation(element_type: ElementLike = "pred") -> XlaComputation:
    """(x, y) -> x or y on scalars: a body of ``stablehlo.or``."""
    return _binary_computation("or", element_type, _fn("Or"))


def _comparator(name: str, direction: str, operand_types: Sequence[ElementLike]) -> XlaComputation:
    """A sort comparator on the first operand (two scalar parameters per operand)."""
    b = XlaBuilder(name)
    params = []
    for i, t in enumerate(operand_types):
        et = to_element_type(t)
        params.append(b.add_parameter(2 * i, Shape.scalar(et), f"lhs{i}"))
        params.append(b.add_parameter(2 * i + 1, Shape.scalar(et), f"rhs{i}"))
    return b.build(_fn("Compare")(params[0], params[1], direction))


@builder_function
def CreateScalarLtComputation(operand_types: Sequence[ElementLike]) -> XlaComputation:
    """A sort comparator: first operand's lhs < rhs (ascending): ``stablehlo.compare`` LT."""
    return _comparator("lt", "LT", [operand_types] if isinstance(operand_types, str) else operand_types)


@builder_function
def CreateScalarGeComputation(operand_types: Sequence[ElementLike]) -> XlaComputation:
    """lhs >= rhs on the first operand (a select_and_scatter select picking the maximum):
    ``stablehlo.compare`` GE."""
    return _comparator("ge", "GE", [operand_types] if isinstance(operand_types, str) else operand_types)


@builder_function
def CreateScalarGtComputation(operand_types: Sequence[ElementLike]) -> XlaComputation:
    """A sort comparator: first operand's lhs > rhs (descending): ``stablehlo.compare`` GT."""
    return _comparator("gt", "GT", [operand_types] if isinstance(operand_types, str) else operand_types)
