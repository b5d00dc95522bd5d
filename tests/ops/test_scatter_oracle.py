"""scatter vs jax.lax.scatter* on CPU, bit-exact (in-bounds windows; float adds and
multiplies with unique indices, where the combination order would otherwise matter)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import require_oracle
from tests.ops.test_scatter import program, run, scatter_cases

if not require_oracle():
    jax = pytest.importorskip("jax", reason="SKIPPED LOUDLY: jax is not installed; the scatter "
                              "oracle tests need it (pip install -e '.[oracle]')")
else:
    import jax
jax.config.update("jax_platforms", "cpu")
from jax import lax  # noqa: E402

FNS = {"add": lax.scatter_add, "multiply": lax.scatter_mul, "maximum": lax.scatter_max,
       "minimum": lax.scatter_min, "replace": lax.scatter}


def scatter_dimension_numbers(dims: dict) -> lax.ScatterDimensionNumbers:
    """jax's spelling of tests.ops.test_scatter's dimension numbers (index vector last)."""
    return lax.ScatterDimensionNumbers(
        update_window_dims=tuple(dims["update_window_dims"]),
        inserted_window_dims=tuple(dims["inserted_window_dims"]),
        scatter_dims_to_operand_dims=tuple(dims["scatter_dims_to_operand_dims"]),
        operand_batching_dims=tuple(dims["input_batching_dims"]),
        scatter_indices_batching_dims=tuple(dims["scatter_indices_batching_dims"]))


def jax_scatter(kind, x, si, u, dims, unique):
    dn = scatter_dimension_numbers(dims)
    return np.asarray(FNS[kind](x, si, u, dn, unique_indices=unique,
                                mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS))


def _unique_windows(si, dims, in_shape, up_shape) -> bool:
    """Whether no two update elements land on one result element."""
    from hlolab.ops.scatter import ScatterAttrs, scatter_targets
    t = scatter_targets(si, in_shape, up_shape, ScatterAttrs(**{k: v if isinstance(v, int) else tuple(v)
                                                                for k, v in dims.items()}))
    t = t[t >= 0]
    return len(np.unique(t)) == t.size


@given(scatter_cases(ivd_last=True, in_bounds=True),
       st.sampled_from(["add", "multiply", "maximum", "minimum"]),
       st.sampled_from(["i32", "i8"]))
def test_integer_scatter_matches_jax(case, kind, e):
    in_shape, si, up_shape, dims, seed = case
    rng = np.random.default_rng(seed)
    dt = np.dtype("int32" if e == "i32" else "int8")
    x = rng.integers(-100, 100, in_shape).astype(dt)
    u = rng.integers(-100, 100, up_shape).astype(dt)
    ev = run(program(in_shape, [e], si.shape, "i32", up_shape, dims, kind), [x, si, u])
    want = jax_scatter(kind, x, si, u, dims, False)
    assert ev.outputs[0].tobytes() == want.tobytes()


@given(scatter_cases(ivd_last=True, in_bounds=True),
       st.sampled_from(["add", "multiply", "maximum", "minimum", "replace"]))
def test_float_scatter_matches_jax(case, kind):
    in_shape, si, up_shape, dims, seed = case
    unique = _unique_windows(si, dims, in_shape, up_shape)
    if kind in ("add", "multiply", "replace") and not unique:
        return  # colliding float adds/products (and replace) depend on XLA's order
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(in_shape).astype(np.float32)
    u = rng.standard_normal(up_shape).astype(np.float32)
    ev = run(program(in_shape, ["f32"], si.shape, "i32", up_shape, dims, kind), [x, si, u])
    want = jax_scatter(kind, x, si, u, dims, unique)
    assert ev.outputs[0].tobytes() == want.tobytes()
