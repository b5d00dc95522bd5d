"""Whole programs printed by JAX run in hlolab and give XLA's results.

jax is an oracle for tests only: it lowers a function to StableHLO text
(``jax.jit(f).lower(x).as_text()``) and runs it on XLA:CPU; hlolab parses the
text and runs it with its own numpy code.
"""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="SKIPPED LOUDLY: jax is not installed (pip install -e '.[oracle]')")
jnp = pytest.importorskip("jax.numpy")

from hlolab.interp.engine import Interpreter  # noqa: E402
from hlolab.ir.parser import parse_module  # noqa: E402
from hlolab.numerics import ulp_distance  # noqa: E402

jax.config.update("jax_enable_x64", True)


def run_both(f, *args):
    lowered = jax.jit(f).lower(*args)
    text = lowered.as_text()
    module = parse_module(text, "<jax>")
    ours = Interpreter(module).run(None, [np.asarray(a) for a in args])
    ref = jax.jit(f)(*args)
    ref = list(ref) if isinstance(ref, (tuple, list)) else [ref]
    return ours, [np.asarray(r) for r in ref], text


def assert_exact(ours, ref):
    assert len(ours) == len(ref)
    for o, r in zip(ours, ref):
        assert o.dtype == r.dtype and o.shape == r.shape
        assert o.tobytes() == r.tobytes(), f"{o} != {r}"


RNG = np.random.default_rng(0)
X32 = RNG.standard_normal((2, 3, 4)).astype(np.float32)
I32 = RNG.integers(-100, 100, (6, 4)).astype(np.int32)


EXACT_PROGRAMS = {
    "affine_transpose": (lambda x: (x * 2.0 - 1.0).reshape(6, 4).T, X32),
    "broadcast_add": (lambda x: x + x[:, :1, :] - jnp.float32(0.5), X32),
    "relu_where": (lambda x: jnp.where(x > 0, x, 0.1 * x), X32),
    "int_ops": (lambda a: ((a * 3) // 7, a % 5, -a, jnp.abs(a), a << 2, a >> 1, a & 12, a | 3, a ^ 5), I32),
    "minmax_clip": (lambda x: (jnp.maximum(x, 0.2), jnp.minimum(x, -0.2), jnp.clip(x, -1, 1)), X32),
    "rounding": (lambda x: (jnp.floor(x * 3), jnp.ceil(x * 3), jnp.round(x * 3), jnp.sign(x)), X32),
    "casts": (lambda x: (x.astype(jnp.int32), x.astype(jnp.bfloat16), x.astype(jnp.float16),
                         (x * 100).astype(jnp.int8), x > 0), X32),
    "slices_concat": (lambda x: jnp.concatenate([x[:, ::2, 1:3], x[:, 1:, :2][::-1]], axis=1), X32),
    "pad_reverse": (lambda x: jnp.flip(jnp.pad(x, ((0, 0), (1, 2), (2, 0)), constant_values=7.0), 2), X32),
    "iota_compare": (lambda a: (jnp.arange(24).reshape(6, 4) < a).astype(jnp.int32), I32),
    "f64_math": (lambda x: jnp.sqrt(jnp.abs(x)) / (1.0 + x * x), X32.astype(np.float64)),
}


@pytest.mark.parametrize("name", sorted(EXACT_PROGRAMS))
def test_exact_programs_match_xla(name):
    f, x = EXACT_PROGRAMS[name]
    ours, ref, _ = run_both(f, x)
    assert_exact(ours, ref)


TRANSCENDENTAL = {
    "softplus": lambda x: jnp.logaddexp(x, 0.0),
    "sigmoid_exp": lambda x: (jax.nn.sigmoid(x), jnp.exp(x), jnp.log1p(jnp.abs(x)), jnp.expm1(x)),
    "trig": lambda x: (jnp.sin(x), jnp.cos(x), jnp.arctan2(x, 1.5), jnp.tan(x * 0.5)),
}


@pytest.mark.parametrize("name", sorted(TRANSCENDENTAL))
def test_transcendental_programs_within_ulp(name):
    ours, ref, _ = run_both(TRANSCENDENTAL[name], X32)
    for o, r in zip(ours, ref):
        assert o.dtype == r.dtype and o.shape == r.shape
        assert int(np.max(ulp_distance(o, r))) <= 4, (name, o, r)


def test_gelu_within_conditioning_bound():
    """``1 + tanh(t)`` cancels near t = -2.3: a 1-ulp tanh difference grows to
    many ulps of the result, so the bound is absolute, k * eps * |x|."""
    def gelu(x):
        return 0.5 * x * (1 + jnp.tanh(0.7978845608 * (x + 0.044715 * x**3)))

    (o,), (r,), _ = run_both(gelu, X32)
    eps = np.finfo(np.float32).eps
    assert np.all(np.abs(o - r) <= 8 * eps * np.maximum(np.abs(X32), 1.0))
