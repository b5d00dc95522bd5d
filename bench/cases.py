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


def _op_runner(text: str, inputs: list) -> Callable[[], object]:
    """The single op of ``func.func @main`` in ``text``, evaluated on ``inputs``
    through the interpreter's region support (parsing is not timed)."""
    from hlolab.interp.engine import Interpreter
    from hlolab.ir.parser import parse_module

    interp = Interpreter(parse_module(text))
    return lambda: interp.run(None, inputs)[0]


def gather_rows():
    x = RNG.standard_normal((1000, 1000)).astype(np.float32)
    idx = RNG.integers(0, 1000, (1000, 1)).astype(np.int32)
    text = """func.func @main(%x: tensor<1000x1000xf32>, %i: tensor<1000x1xi32>) -> tensor<1000x1000xf32> {
      %r = "stablehlo.gather"(%x, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1],
          collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>,
          slice_sizes = array<i64: 1, 1000>}>
          : (tensor<1000x1000xf32>, tensor<1000x1xi32>) -> tensor<1000x1000xf32>
      func.return %r : tensor<1000x1000xf32>
    }"""
    return _case("gather rows f32 1000x1000", 10**6, _op_runner(text, [x, idx]),
                 lambda: x[np.clip(idx[:, 0], 0, 999)])


def gather_elements():
    x = RNG.standard_normal((1000, 1000)).astype(np.float32)
    idx = RNG.integers(0, 1000, (10**6, 2)).astype(np.int32)
    text = """func.func @main(%x: tensor<1000x1000xf32>, %i: tensor<1000000x2xi32>) -> tensor<1000000xf32> {
      %r = "stablehlo.gather"(%x, %i) <{dimension_numbers = #stablehlo.gather<
          collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 1>,
          slice_sizes = array<i64: 1, 1>}>
          : (tensor<1000x1000xf32>, tensor<1000000x2xi32>) -> tensor<1000000xf32>
      func.return %r : tensor<1000000xf32>
    }"""
    return _case("gather elements f32 1e6", 10**6, _op_runner(text, [x, idx]),
                 lambda: x[np.clip(idx[:, 0], 0, 999), np.clip(idx[:, 1], 0, 999)])


def scatter_add_elements():
    x = RNG.standard_normal((1000, 1000)).astype(np.float32)
    idx = RNG.integers(0, 1000, (10**6, 2)).astype(np.int32)
    upd = RNG.standard_normal(10**6).astype(np.float32)
    text = """func.func @main(%x: tensor<1000x1000xf32>, %i: tensor<1000000x2xi32>,
                         %u: tensor<1000000xf32>) -> tensor<1000x1000xf32> {
      %r = "stablehlo.scatter"(%x, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<
          inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 1>}> ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %s = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %s : tensor<f32>
      }) : (tensor<1000x1000xf32>, tensor<1000000x2xi32>, tensor<1000000xf32>) -> tensor<1000x1000xf32>
      func.return %r : tensor<1000x1000xf32>
    }"""

    def numpy_scatter_add():
        out = x.copy()
        np.add.at(out, (idx[:, 0], idx[:, 1]), upd)
        return out

    return _case("scatter-add elements f32 1e6", 10**6, _op_runner(text, [x, idx, upd]),
                 numpy_scatter_add)


def sort_rows():
    x = RNG.standard_normal((1000, 1000)).astype(np.float32)
    text = """func.func @main(%x: tensor<1000x1000xf32>) -> tensor<1000x1000xf32> {
      %r = "stablehlo.sort"(%x) <{dimension = 1 : i64, is_stable = true}> ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %c = stablehlo.compare LT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
        stablehlo.return %c : tensor<i1>
      }) : (tensor<1000x1000xf32>) -> tensor<1000x1000xf32>
      func.return %r : tensor<1000x1000xf32>
    }"""
    return _case("sort rows f32 1000x1000", 10**6, _op_runner(text, [x]),
                 lambda: np.sort(x, axis=1, kind="stable"))


CASES: list[Callable] = [add_f32, transpose_f32, pad_f32, gather_rows, gather_elements,
                         scatter_add_elements, sort_rows]

