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


def _case(name: str, elements: int, hlolab: Callable, numpy: Callable, jax: Callable | None = None,
          rtol: float = 0.0):
    from bench.run import Case

    return Case(name, elements, hlolab, numpy, jax, rtol)


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


def dot_general_f32():
    a = RNG.standard_normal((512, 512)).astype(np.float32)
    b = RNG.standard_normal((512, 512)).astype(np.float32)
    text = """func.func @main(%a: tensor<512x512xf32>, %b: tensor<512x512xf32>) -> tensor<512x512xf32> {
      %r = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0]
          : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
      func.return %r : tensor<512x512xf32>
    }"""
    jax, jnp = _jax()
    jf = jax.jit(jnp.matmul) if jax else None
    return _case("dot_general f32 512x512x512", 512 * 512, _op_runner(text, [a, b]),
                 lambda: np.matmul(a, b), (lambda: jf(a, b).block_until_ready()) if jf else None,
                 rtol=1e-5)


def conv2d_f32():
    """NHWC 1x64x64x32 input, HWIO 3x3x32x32 kernel, stride 1, SAME padding."""
    x = RNG.standard_normal((1, 64, 64, 32)).astype(np.float32)
    w = RNG.standard_normal((3, 3, 32, 32)).astype(np.float32)
    text = """func.func @main(%x: tensor<1x64x64x32xf32>,
                         %w: tensor<3x3x32x32xf32>) -> tensor<1x64x64x32xf32> {
      %r = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
          window = {stride = [1, 1], pad = [[1, 1], [1, 1]]}
          {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
          : (tensor<1x64x64x32xf32>, tensor<3x3x32x32xf32>) -> tensor<1x64x64x32xf32>
      func.return %r : tensor<1x64x64x32xf32>
    }"""

    def im2col():  # the best direct numpy formulation: pad, strided window view, one copy, one matmul
        xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
        n, h, w_, c = xp.strides
        cols = np.lib.stride_tricks.as_strided(xp, (1, 64, 64, 3, 3, 32), (n, h, w_, h, w_, c))
        return (cols.reshape(64 * 64, 3 * 3 * 32) @ w.reshape(3 * 3 * 32, 32)).reshape(1, 64, 64, 32)

    jax, _ = _jax()
    jf = None
    if jax:
        from jax import lax

        jf = jax.jit(lambda x, w: lax.conv_general_dilated(
            x, w, (1, 1), ((1, 1), (1, 1)), dimension_numbers=("NHWC", "HWIO", "NHWC")))
    return _case("conv2d f32 1x64x64x32 3x3x32x32", 64 * 64 * 32, _op_runner(text, [x, w]), im2col,
                 (lambda: jf(x, w).block_until_ready()) if jf else None, rtol=1e-5)


def _reduce_window_text(body: str, init_dtype: str, window: str, strides: str, out: str) -> str:
    return f"""func.func @main(%x: tensor<256x256xf32>, %i: tensor<f32>) -> tensor<{out}xf32> {{
      %r = "stablehlo.reduce_window"(%x, %i) <{{window_dimensions = array<i64: {window}>,
          window_strides = array<i64: {strides}>}}> ({{
      ^bb0(%a: tensor<{init_dtype}>, %b: tensor<{init_dtype}>):
        %s = {body} %a, %b : tensor<{init_dtype}>
        stablehlo.return %s : tensor<{init_dtype}>
      }}) : (tensor<256x256xf32>, tensor<f32>) -> tensor<{out}xf32>
      func.return %r : tensor<{out}xf32>
    }}"""


def _reduce_window_max(n: int):
    """3x3 max, stride 1 (a max-pool without padding) over n x n f32."""
    x = RNG.standard_normal((n, n)).astype(np.float32)
    init = np.array(-np.inf, np.float32)
    m = n - 2
    text = _reduce_window_text("stablehlo.maximum", "f32", "3, 3", "1, 1", f"{m}x{m}")
    text = text.replace("256x256", f"{n}x{n}")

    def shifted_max():  # the fastest numpy formulation: one maximum per window offset
        out = x[0:m, 0:m].copy()
        for i in range(3):
            for j in range(3):
                np.maximum(out, x[i:i + m, j:j + m], out=out)
        return out

    return _case(f"reduce_window max 3x3 {n}x{n}", m * m, _op_runner(text, [x, init]), shifted_max)


def reduce_window_max():
    return _reduce_window_max(256)


def reduce_window_max_large():
    """The same at 1024x1024, where the per-op overhead (~50 us) no longer dominates."""
    return _reduce_window_max(1024)


def reduce_window_sum():
    """2x2 sum, stride 2 (an average-pool numerator) over 256x256 f32."""
    x = RNG.standard_normal((256, 256)).astype(np.float32)
    init = np.array(0, np.float32)
    text = _reduce_window_text("stablehlo.add", "f32", "2, 2", "2, 2", "128x128")

    def shifted_sum():  # the fastest numpy formulation: one add per window offset
        return x[0::2, 0::2] + x[0::2, 1::2] + x[1::2, 0::2] + x[1::2, 1::2]

    return _case("reduce_window sum 2x2/2 256x256", 128 * 128, _op_runner(text, [x, init]), shifted_sum,
                 rtol=1e-6)


CASES: list[Callable] = [add_f32, transpose_f32, pad_f32, gather_rows, gather_elements,
                         scatter_add_elements, sort_rows, dot_general_f32, conv2d_f32,
                         reduce_window_max, reduce_window_max_large, reduce_window_sum]

