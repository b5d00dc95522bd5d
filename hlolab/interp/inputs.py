"""Program inputs: seeded random values of a given type."""

from __future__ import annotations

from typing import Any

import numpy as np

from hlolab.errors import UnsupportedError
from hlolab.ops.registry import TOKEN
from hlolab.types import TensorType, TokenType, TupleType, Type


def random_value(t: Type, rng: np.random.Generator) -> Any:
    """A reproducible random value of type ``t`` (small ints, normal floats)."""
    if isinstance(t, TupleType):
        return tuple(random_value(s, rng) for s in t.types)
    if isinstance(t, TokenType):
        return TOKEN
    if not isinstance(t, TensorType):
        raise UnsupportedError(f"cannot make a random value of type {t}")
    shape = t.static_shape("a random input")
    et = t.element
    kind = getattr(et, "kind", "quant")
    if kind == "bool":
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if kind in ("sint", "uint", "quant"):
        lo, hi = (-8, 8) if kind != "uint" else (0, 16)
        if kind == "quant":
            lo, hi = int(et.storage.min_value()), int(et.storage.max_value()) + 1
        else:
            lo, hi = max(lo, int(et.min_value())), min(hi, int(et.max_value()) + 1)
        return rng.integers(lo, hi, size=shape).astype(t.dtype)
    if kind == "complex":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(t.dtype)
    return rng.standard_normal(shape).astype(t.dtype)
