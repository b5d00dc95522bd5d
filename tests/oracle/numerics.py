"""Numeric helpers shared by the oracle tests: XLA:CPU flushes denormals to zero."""

from __future__ import annotations

import ml_dtypes
import numpy as np

_TINY = {np.dtype(np.float32): 2.0**-126, np.dtype(np.float64): 2.0**-1022,
         np.dtype(ml_dtypes.bfloat16): 2.0**-126}


def flush(a: np.ndarray, threshold: float | None = None) -> np.ndarray:
    """``a`` with f32/f64/bf16 denormals (|x| < threshold) replaced by signed zeros."""
    if a.dtype.kind == "c":
        out = np.empty_like(a)
        out.real, out.imag = flush(np.ascontiguousarray(a.real), threshold), flush(
            np.ascontiguousarray(a.imag), threshold)
        return out
    tiny = threshold if threshold is not None else _TINY.get(a.dtype)
    if tiny is None:
        return a
    with np.errstate(invalid="ignore"):
        w = a.astype(np.float64)
    return np.where(np.abs(w) < tiny, np.copysign(0.0, w), w).astype(a.dtype)
