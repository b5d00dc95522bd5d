"""Linear algebra, FFT and random numbers."""

from __future__ import annotations

from typing import Any

from hlolab.types import TensorType
from hlolab.xla.builder import BuilderError, XlaOp, builder_function, emit
from hlolab.xla.shape_ops import tensor
from hlolab.xla.shapes import Shape, as_shape


@builder_function
def Cholesky(a: XlaOp, lower: bool = True) -> XlaOp:
    """The Cholesky factor of each (batched) positive-definite matrix, lower or upper:
    ``stablehlo.cholesky``."""
    return emit("stablehlo.cholesky", [a], {"lower": bool(lower)}, what="Cholesky")[0]


@builder_function
def TriangularSolve(a: XlaOp, b: XlaOp, left_side: bool, lower: bool, unit_diagonal: bool,
                    transpose_a: str = "NO_TRANSPOSE") -> XlaOp:
    """x solving op(a) x = b (``left_side``) or x op(a) = b for triangular ``a``, op from
    ``transpose_a`` (NO_TRANSPOSE, TRANSPOSE, ADJOINT): ``stablehlo.triangular_solve``."""
    return emit("stablehlo.triangular_solve", [a, b],
                {"left_side": bool(left_side), "lower": bool(lower), "unit_diagonal": bool(unit_diagonal),
                 "transpose_a": str(transpose_a).upper()}, what="TriangularSolve")[0]


@builder_function
def Fft(operand: XlaOp, fft_type: str, fft_length: list[int]) -> XlaOp:
    """The discrete Fourier transform over the last ``len(fft_length)`` dims, ``fft_type`` one of
    FFT, IFFT, RFFT, IRFFT: ``stablehlo.fft``."""
    return emit("stablehlo.fft", [operand], {"fft_type": str(fft_type).upper(),
                                             "fft_length": tuple(int(n) for n in fft_length)},
                what="Fft")[0]


def _rng(distribution: str, a: XlaOp, b: XlaOp, shape: Shape | str, what: str) -> XlaOp:
    from hlolab.xla.sources import ConstantR1

    s = as_shape(shape)
    if not s.is_array():
        raise BuilderError(f"{what}: needs an array shape, got {s}")
    t = tensor(a, what)
    if s.element_type != t.element:
        raise BuilderError(f"{what}: shape {s} has another element type than the parameters ({t.element})")
    dims = ConstantR1(a.builder, list(s.dimensions), dtype="s64") if s.dimensions else \
        _empty_shape(a)
    return emit("stablehlo.rng", [a, b, dims], {"rng_distribution": distribution},
                results=[TensorType(s.dimensions, t.element)], what=what)[0]


def _empty_shape(a: XlaOp) -> XlaOp:
    import numpy as np

    from hlolab.xla.sources import ConstantLiteral

    return ConstantLiteral(a.builder, np.zeros((0,), np.int64))


@builder_function
def RngUniform(a: XlaOp, b: XlaOp, shape: Shape | str) -> XlaOp:
    """Pseudo-random numbers uniform in [a, b) of ``shape``: ``stablehlo.rng`` UNIFORM (after a
    ``stablehlo.constant`` of the shape)."""
    return _rng("UNIFORM", a, b, shape, "RngUniform")


@builder_function
def RngNormal(mu: XlaOp, sigma: XlaOp, shape: Shape | str) -> XlaOp:
    """Pseudo-random numbers from N(mu, sigma^2) of ``shape``: ``stablehlo.rng`` NORMAL (after a
    ``stablehlo.constant`` of the shape)."""
    return _rng("NORMAL", mu, sigma, shape, "RngNormal")


@builder_function
def RngBitGenerator(algorithm: str, initial_state: XlaOp, shape: Shape | str) -> tuple[XlaOp, XlaOp]:
    """Random bits of ``shape`` and the next generator state, ``algorithm`` DEFAULT, THREE_FRY or
    PHILOX: ``stablehlo.rng_bit_generator``; returns (new_state, output)."""
    s = as_shape(shape)
    out: Any = emit("stablehlo.rng_bit_generator", [initial_state],
                    {"rng_algorithm": str(algorithm).upper().replace("RNG_", "")},
                    results=[initial_state.type, s.to_type()], what="RngBitGenerator")
    return tuple(out)  # type: ignore[return-value]
