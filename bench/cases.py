"""Benchmark cases: each builds its inputs once and returns a bench.run.Case."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from hlolab.interp.single import build_op, evaluate_op
from hlolab.ir.attrs import DenseArrayAttr
from hlolab.types import TensorType, element_type

RNG = np.random.default_rng(0)


def _jax():
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None, None
    return jax, jnp


def _case(name: str, elements: int, hlolab: Callable, numpy: Callable, jax: Callable | None = None):
    from bench.run import Case

    return Case(name, elements, hlolab, numpy, jax)


def _runner(name: str, inputs: list, attrs: dict, result_types: list) -> Callable[[], object]:
    op = build_op(name, inputs, attrs, result_types)
    return lambda: evaluate_op(op, inputs)[0]


def add_f32():
    x = RNG.standard_normal((1024, 1024)).astype(np.float32)
    t = TensorType(x.shape, element_type("f32"))
    jax, jnp = _jax()
    jf = jax.jit(jnp.add) if jax else None
    return _case("add f32 1024x1024", x.size, _runner("stablehlo.add", [x, x], {}, [t]),
                 lambda: np.add(x, x), (lambda: jf(x, x).block_until_ready()) if jf else None)


def transpose_f32():
    x = RNG.standard_normal((1024, 1024)).astype(np.float32)
    t = TensorType((1024, 1024), element_type("f32"))
    attrs = {"permutation": DenseArrayAttr("i64", (1, 0))}
    return _case("transpose f32 1024x1024", x.size, _runner("stablehlo.transpose", [x], attrs, [t]),
                 lambda: np.ascontiguousarray(x.T))


def pad_f32():
    x = RNG.standard_normal((1000, 1000)).astype(np.float32)
    pv = np.array(0, np.float32)
    attrs = {"edge_padding_low": DenseArrayAttr("i64", (2, 3)),
             "edge_padding_high": DenseArrayAttr("i64", (4, 5)),
             "interior_padding": DenseArrayAttr("i64", (0, 0))}
    t = TensorType((1006, 1008), element_type("f32"))
    return _case("pad f32 1000x1000", 1006 * 1008, _runner("stablehlo.pad", [x, pv], attrs, [t]),
                 lambda: np.pad(x, ((2, 4), (3, 5))))


CASES: list[Callable] = [add_f32, transpose_f32, pad_f32]

