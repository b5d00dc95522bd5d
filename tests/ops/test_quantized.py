"""Ops on quantized tensors (hlolab.ops.quantized): the conformance programs, the spec's
rules (dequantize_op_quantize, the hybrid forms of dot_general and convolution, compare,
select, batch_norm, iota) with their numbers checked by hand or against a float
computation quantized by a slow reference, data movement that carries storage unchanged,
values printed and parsed back, explain() stages and provenance."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hlolab.errors import HloLabError, UnsupportedError, VerificationError
from hlolab.interp.engine import Interpreter
from hlolab.ir.parser import parse_module, split_source
from hlolab.ops.quantized import RULES
from hlolab.ops.registry import lookup
from hlolab.runner import format_value, parse_args_literal, run_module
from hlolab.trace.explain import format_explanation
from tests.conftest import shared_dir

Q = "!quant.uniform<i8:f32, 0.5:-3>"


def run(text: str, args: list[np.ndarray]) -> list[np.ndarray]:
    return Interpreter(parse_module(text)).run(None, args)


def ref_quantize(x: float, scale: float, zp: int, lo: int = -128, hi: int = 127) -> int:
    """The spec's quantize for one f32 value (Python's round is half to even)."""
    f = np.float32
    v = float(f(f(x) / f(scale)) + f(zp))
    return int(min(max(round(min(max(v, lo), hi)), lo), hi))


def deq(q: np.ndarray, scale: float, zp: int) -> np.ndarray:
    return (q.astype(np.float32) - np.float32(zp)) * np.float32(scale)


# --- the conformance programs ----------------------------------------------------------------

def test_quantized_ops_conformance_file_passes_every_module():
    path = shared_dir("conformance", "interpret") / "quantized_ops.mlir"
    chunks = split_source(path.read_text())
    results = [run_module(parse_module(chunk, str(path), first), f"#{n}")
               for n, (first, chunk) in enumerate(chunks, start=1)]
    assert len(results) == 5
    assert [r.status for r in results] == ["PASS"] * 5, [r.line() for r in results]
    assert sum(r.checks for r in results) == 5


def test_quantized_add_of_the_conformance_file_by_hand():
    # [1, 2] at 0.1:-30 -> [-20, -10]; [3, 4] at 0.5:-20 -> [-14, -12]; add in f32 = [4, 6]
    # -> 4 / 0.5 - 20 = -12, 6 / 0.5 - 20 = -8
    a, b = "!quant.uniform<i8:f32, 0.1:-30>", "!quant.uniform<i8:f32, 0.5:-20>"
    r = b
    text = (f"func.func @main(%x: tensor<2x{a}>, %y: tensor<2x{b}>) -> tensor<2x{r}> {{\n"
            f"  %r = stablehlo.add %x, %y : (tensor<2x{a}>, tensor<2x{b}>) -> tensor<2x{r}>\n"
            f"  return %r : tensor<2x{r}>\n}}")
    (out,) = run(text, [np.array([-20, -10], np.int8), np.array([-14, -12], np.int8)])
    assert out.dtype == np.int8 and out.tolist() == [-12, -8]


# --- element-wise ops: dequantize_op_quantize against the reference ----------------------------

UNARY = ["abs", "cbrt", "ceil", "cosine", "exponential", "exponential_minus_one", "floor", "log",
         "log_plus_one", "logistic", "negate", "round_nearest_afz", "round_nearest_even", "rsqrt",
         "sign", "sine", "sqrt", "tan", "tanh"]
BINARY = ["add", "atan2", "divide", "maximum", "minimum", "multiply", "power", "remainder", "subtract"]
NP = {"abs": np.abs, "cbrt": np.cbrt, "ceil": np.ceil, "cosine": np.cos, "exponential": np.exp,
      "exponential_minus_one": np.expm1, "floor": np.floor, "log": np.log, "log_plus_one": np.log1p,
      "logistic": lambda x: 1 / (1 + np.exp(-x)), "negate": np.negative,
      "round_nearest_afz": lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5), "round_nearest_even": np.rint,
      "rsqrt": lambda x: 1 / np.sqrt(x), "sign": np.sign, "sine": np.sin, "sqrt": np.sqrt, "tan": np.tan,
      "tanh": np.tanh, "add": np.add, "atan2": np.arctan2, "divide": np.divide, "maximum": np.maximum,
      "minimum": np.minimum, "multiply": np.multiply, "power": np.power, "remainder": np.fmod,
      "subtract": np.subtract}
RQ = "!quant.uniform<i8:f32, 0.03125:5>"
TRANSCENDENTAL = ("cbrt", "cosine", "exponential", "exponential_minus_one", "log", "log_plus_one", "logistic",
                  "sine", "tan", "tanh", "rsqrt")  # a power-of-two scale: float errors stay far from ties


def _expected(name: str, xs: list[np.ndarray], scales: list[float], zps: list[int]) -> list[int]:
    floats = [deq(x, s, z).astype(np.float64) for x, s, z in zip(xs, scales, zps, strict=True)]
    with np.errstate(all="ignore"):
        y = NP[name](*floats)
    return [0 if math.isnan(v) else ref_quantize(v, 0.03125, 5) for v in np.asarray(y).reshape(-1)]


@pytest.mark.parametrize("name", UNARY)
def test_unary_ops_dequantize_compute_quantize(name):
    x = np.array([-9, -4, -3, 0, 1, 2, 5, 17], np.int8)  # (x + 3) * 0.5: -3 .. 10
    if name in ("log", "rsqrt", "sqrt", "log_plus_one"):
        x = np.array([-2, -1, 0, 1, 2, 5, 9, 17], np.int8)  # positive reals (log1p: > -1)
    text = (f"func.func @main(%x: tensor<8x{Q}>) -> tensor<8x{RQ}> {{\n"
            f"  %r = stablehlo.{name} %x : (tensor<8x{Q}>) -> tensor<8x{RQ}>\n"
            f"  return %r : tensor<8x{RQ}>\n}}")
    (out,) = run(text, [x])
    want = _expected(name, [x], [0.5], [-3])
    got = out.tolist()
    # f32 transcendental results may differ from f64 in the last bits: a value whose
    # scaled form is within 1e-4 of a tie may round either way
    for g, w, v in zip(got, want, deq(x, 0.5, -3), strict=True):
        assert g == w or abs(g - w) == 1 and name in TRANSCENDENTAL, (name, v, g, w)


@pytest.mark.parametrize("name", BINARY)
def test_binary_ops_dequantize_compute_quantize(name):
    b = "!quant.uniform<i8:f32, 0.25:1>"
    x = np.array([-3, -1, 0, 1, 3, 5, 7, 9], np.int8)  # (x + 3) * 0.5: 0 .. 6
    y = np.array([5, 3, -3, 9, 2, 1, 13, 4], np.int8)  # (y - 1) * 0.25: 1, 0.5, -1, 2, 0.25, 0, 3, 0.75
    text = (f"func.func @main(%x: tensor<8x{Q}>, %y: tensor<8x{b}>) -> tensor<8x{RQ}> {{\n"
            f"  %r = stablehlo.{name} %x, %y : (tensor<8x{Q}>, tensor<8x{b}>) -> tensor<8x{RQ}>\n"
            f"  return %r : tensor<8x{RQ}>\n}}")
    (out,) = run(text, [x, y])
    want = _expected(name, [x, y], [0.5, 0.25], [-3, 1])
    got = out.tolist()
    for g, w in zip(got, want, strict=True):
        assert g == w or abs(g - w) == 1 and name in ("atan2", "power"), (name, got, want)


def test_per_axis_add_uses_each_slice_parameters():
    # add (C5-C7): per-axis lhs, per-tensor rhs, per-axis result on the same dimension
    a = "!quant.uniform<i8:f32:1, {0.5:0,0.25:4}>"
    r = "!quant.uniform<i8:f32:1, {0.125:0,1.0:-2}>"
    text = (f"func.func @main(%x: tensor<2x2x{a}>, %y: tensor<2x2x{Q}>) -> tensor<2x2x{r}> {{\n"
            f"  %r = stablehlo.add %x, %y : (tensor<2x2x{a}>, tensor<2x2x{Q}>) -> tensor<2x2x{r}>\n"
            f"  return %r : tensor<2x2x{r}>\n}}")
    x = np.array([[2, 8], [-2, 0]], np.int8)  # column 0: * 0.5; column 1: (x - 4) * 0.25
    y = np.array([[-1, -3], [1, 3]], np.int8)  # (y + 3) * 0.5: [[1, 0], [2, 3]]
    (out,) = run(text, [x, y])
    # reals [[1 + 1, 1 + 0], [-1 + 2, -1 + 3]] = [[2, 1], [1, 2]] -> column 0 / 0.125, column 1 / 1 - 2
    assert out.tolist() == [[16, -1], [8, 0]]


# --- dot_general and convolution: quantized, integer-accumulating and hybrid -----------------------

L8 = "!quant.uniform<i8:f32, 0.5:-1>"
W8 = "!quant.uniform<i8:f32:1, {0.25,0.5}>"  # per-axis rhs, zero points 0 (C15)
R32 = "!quant.uniform<i32:f32:1, {0.125,0.25}>"  # i32 storage: the integer-accumulation form


def _dot_text(lt: str, rt: str, res: str) -> str:
    return (f"func.func @main(%x: tensor<2x3x{lt}>, %w: tensor<3x2x{rt}>) -> tensor<2x2x{res}> {{\n"
            f"  %r = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : "
            f"(tensor<2x3x{lt}>, tensor<3x2x{rt}>) -> tensor<2x2x{res}>\n  return %r : tensor<2x2x{res}>\n}}")


X23 = np.array([[1, 2, 3], [4, -5, 127]], np.int8)
W32 = np.array([[1, 2], [3, -4], [5, 6]], np.int8)


def test_dot_general_quantized_i32_result():
    (out,) = run(_dot_text(L8, W8, R32), [X23, W32])
    lhs = deq(X23, 0.5, -1).astype(np.float64)
    rhs = W32 * np.array([0.25, 0.5])
    y = lhs @ rhs  # exact: every value a multiple of 1/8, far inside f32
    want = [[ref_quantize(y[i, j], [0.125, 0.25][j], 0, -2**31, 2**31 - 1) for j in range(2)]
            for i in range(2)]
    assert out.dtype == np.int32 and out.tolist() == want
    # row 0: [1, 1.5, 2] . [0.25, 0.75, 1.25] = 3.875 -> / 0.125; [1, 1.5, 2] . [1, -2, 3] = 4 -> / 0.25
    assert want == [[31, 16], [633, 794]]


def test_dot_general_quantized_i8_result_saturates():
    res = "!quant.uniform<i8:f32, 0.5:0>"
    (out,) = run(_dot_text(L8, "!quant.uniform<i8:f32, 0.25>", res), [X23, W32])
    lhs = deq(X23, 0.5, -1).astype(np.float64)
    y = lhs @ (W32 * 0.25)
    want = [[ref_quantize(v, 0.5, 0) for v in row] for row in y]
    assert out.tolist() == want and 127 in want[1]  # row 1 saturates


def test_dot_general_hybrid_keeps_a_float_result():
    text = (f"func.func @main(%x: tensor<2x3xf32>, %w: tensor<3x2x{W8}>) -> tensor<2x2xf32> {{\n"
            f"  %r = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : "
            f"(tensor<2x3xf32>, tensor<3x2x{W8}>) -> tensor<2x2xf32>\n  return %r : tensor<2x2xf32>\n}}")
    x = np.array([[1.5, -2.0, 0.25], [3.0, 1.0, -1.0]], np.float32)
    (out,) = run(text, [x, W32])
    want = x.astype(np.float64) @ (W32 * np.array([0.25, 0.5]))
    assert out.dtype == np.float32 and out.tolist() == want.tolist()


CONV_L = "!quant.uniform<i8:f32, 0.5:-1>"
CONV_K = "!quant.uniform<i8:f32:3, {0.25,0.5}>"
CONV_R = "!quant.uniform<i32:f32:3, {0.125,0.25}>"


def _conv_text(lt: str, kt: str, rt: str) -> str:
    """A 3x3 NHWC image, a 2x2 HWIO kernel with two output features, stride 1; ``lt``, ``kt``,
    ``rt`` are the element types."""
    x, w, r = f"tensor<1x3x3x1x{lt}>", f"tensor<2x2x1x2x{kt}>", f"tensor<1x2x2x2x{rt}>"
    return (f"func.func @main(%x: {x}, %w: {w}) -> {r} {{\n"
            f"  %r = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], "
            f"window = {{stride = [1, 1]}} {{batch_group_count = 1 : i64, feature_group_count = 1 : i64}} : "
            f"({x}, {w}) -> {r}\n  return %r : {r}\n}}")


CX = np.arange(1, 10, dtype=np.int8).reshape(1, 3, 3, 1)
CW = np.arange(1, 9, dtype=np.int8).reshape(2, 2, 1, 2)


def _conv_float(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """A direct loop over the 2x2 windows (NHWC, HWIO, stride 1, no padding)."""
    out = np.zeros((1, 2, 2, 2))
    for i in range(2):
        for j in range(2):
            for o in range(2):
                out[0, i, j, o] = sum(x[0, i + a, j + b, 0] * w[a, b, 0, o]
                                      for a in range(2) for b in range(2))
    return out


def test_convolution_quantized_per_axis_kernel_i32_result():
    (out,) = run(_conv_text(CONV_L, CONV_K, CONV_R), [CX, CW])
    y = _conv_float(deq(CX, 0.5, -1).astype(np.float64), CW * np.array([0.25, 0.5]))
    scales = [0.125, 0.25]
    want = np.array([[[[ref_quantize(y[0, i, j, o], scales[o], 0, -2**31, 2**31 - 1) for o in range(2)]
                       for j in range(2)] for i in range(2)]])
    assert out.dtype == np.int32 and out.tolist() == want.tolist()
    assert out[0, 1, 1, 1] == 174  # 43.5 / 0.25 (see the explain test)


def test_convolution_hybrid_keeps_a_float_result():
    text = _conv_text("f32", CONV_K, "f32")
    x = np.arange(1, 10, dtype=np.float32).reshape(1, 3, 3, 1)
    (out,) = run(text, [x, CW])
    want = _conv_float(x.astype(np.float64), CW * np.array([0.25, 0.5]))
    assert out.dtype == np.float32 and out.tolist() == want.tolist()
    assert out[0, 0, 0].tolist() == [15.5, 37.0]


def test_conv_quantized_ties_round_to_even():
    # nine products 0.5 * 0.5 = 2.25 -> / 0.5 = 4.5 -> 4
    q = "!quant.uniform<i8:f32, 0.5>"
    text = (f"func.func @main(%x: tensor<1x3x3x1x{q}>, %w: tensor<3x3x1x1x{q}>) -> tensor<1x1x1x1x{q}> {{\n"
            f"  %r = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], "
            f"window = {{}} {{batch_group_count = 1 : i64, feature_group_count = 1 : i64}} : "
            f"(tensor<1x3x3x1x{q}>, tensor<3x3x1x1x{q}>) -> tensor<1x1x1x1x{q}>\n"
            f"  return %r : tensor<1x1x1x1x{q}>\n}}")
    (out,) = run(text, [np.ones((1, 3, 3, 1), np.int8), np.ones((3, 3, 1, 1), np.int8)])
    assert out.reshape(-1).tolist() == [4]


# --- compare, select, clamp, batch_norm, iota ---------------------------------------------------

def test_compare_select_and_clamp():
    b = "!quant.uniform<i8:f32, 0.25:1>"
    x4, y4, s4 = f"tensor<4x{Q}>", f"tensor<4x{b}>", f"tensor<{Q}>"
    text = (f"func.func @main(%x: {x4}, %y: {y4}) -> (tensor<4xi1>, {y4}, {x4}) {{\n"
            f"  %c = stablehlo.compare GT, %x, %y : ({x4}, {y4}) -> tensor<4xi1>\n"
            f"  %s = stablehlo.select %c, %x, %y : (tensor<4xi1>, {x4}, {y4}) -> {y4}\n"
            f"  %lo = stablehlo.constant dense<-1> : {s4}\n"
            f"  %hi = stablehlo.constant dense<3> : {s4}\n"
            f"  %k = stablehlo.clamp %lo, %x, %hi : ({s4}, {x4}, {s4}) -> {x4}\n"
            f"  return %c, %s, %k : tensor<4xi1>, {y4}, {x4}\n}}")
    x = np.array([-3, 1, 5, -1], np.int8)  # reals 0, 2, 4, 1
    y = np.array([5, 5, 9, 5], np.int8)  # reals 1, 1, 2, 1
    c, s, k = run(text, [x, y])
    assert c.tolist() == [False, True, True, False]  # the storage comparison says [F, F, F, F]
    # select takes x where c: reals [1, 2, 4, 1] -> / 0.25 + 1
    assert s.tolist() == [5, 9, 17, 5]
    # clamp(1, x, 3) in reals: [1, 2, 3, 1] -> / 0.5 - 3
    assert k.tolist() == [-1, 1, 3, -1]


def test_batch_norm_inference_quantized():
    f = "!quant.uniform<i8:f32, 0.25:0>"
    text = (f"func.func @main(%x: tensor<2x2x{f}>, %s: tensor<2x{f}>, %o: tensor<2x{f}>, %m: tensor<2x{f}>, "
            f"%v: tensor<2x{f}>) -> tensor<2x2x{f}> {{\n"
            f'  %r = "stablehlo.batch_norm_inference"(%x, %s, %o, %m, %v) {{epsilon = 0.0 : f32, '
            f"feature_index = 1 : i64}} : (tensor<2x2x{f}>, tensor<2x{f}>, tensor<2x{f}>, tensor<2x{f}>, "
            f"tensor<2x{f}>) -> tensor<2x2x{f}>\n  return %r : tensor<2x2x{f}>\n}}")
    x = np.array([[4, 8], [12, 16]], np.int8)  # reals [[1, 2], [3, 4]]
    scale, offset = np.array([8, 4], np.int8), np.array([0, 4], np.int8)  # [2, 1], [0, 1]
    mean, var = np.array([8, 12], np.int8), np.array([16, 4], np.int8)  # [2, 3], [4, 1]
    (out,) = run(text, [x, scale, offset, mean, var])
    # (x - mean) / sqrt(var) * scale + offset: column 0 (x - 2) / 2 * 2, column 1 (x - 3) + 1
    assert out.tolist() == [[-4, 0], [4, 8]]


def test_batch_norm_training_quantizes_each_result_by_its_type():
    f = "!quant.uniform<i8:f32, 0.25:0>"
    g = "!quant.uniform<i8:f32, 0.5:0>"
    x, v, m = f"tensor<2x2x{f}>", f"tensor<2x{f}>", f"tensor<2x{g}>"
    text = (f"func.func @main(%x: {x}, %s: {v}, %o: {v}) -> ({x}, {m}, {v}) {{\n"
            f'  %r:3 = "stablehlo.batch_norm_training"(%x, %s, %o) {{epsilon = 0.0 : f32, '
            f"feature_index = 1 : i64}} : ({x}, {v}, {v}) -> ({x}, {m}, {v})\n"
            f"  return %r#0, %r#1, %r#2 : {x}, {m}, {v}\n}}")
    x = np.array([[4, 8], [12, 24]], np.int8)  # reals [[1, 2], [3, 6]]
    out, mean, var = run(text, [x, np.array([4, 4], np.int8), np.array([0, 0], np.int8)])
    assert mean.tolist() == [4, 8]  # means [2, 4] at scale 0.5
    assert var.tolist() == [4, 16]  # variances [1, 4] at scale 0.25
    assert out.tolist() == [[-4, -4], [4, 4]]  # normalized [[-1, -1], [1, 1]]


def test_iota_quantizes_the_index():
    text = (f"func.func @main() -> tensor<4x{Q}> {{\n  %r = stablehlo.iota dim = 0 : tensor<4x{Q}>\n"
            f"  return %r : tensor<4x{Q}>\n}}")
    (out,) = run(text, [])
    assert out.tolist() == [-3, -1, 1, 3]


# --- data movement carries storage; values print and parse back; checks -------------------------

def test_data_movement_keeps_storage_and_values_print_back():
    # transpose keeps a per-axis type (its axis moves with the dims); slice and concatenate
    # take per-tensor quantized tensors
    pa = "tensor<2x3x!quant.uniform<i8:f32:0, {0.5:-1,0.25:2}>>"
    pt = "tensor<3x2x!quant.uniform<i8:f32:1, {0.5:-1,0.25:2}>>"
    x3, x2, x5 = f"tensor<2x3x{Q}>", f"tensor<2x2x{Q}>", f"tensor<2x5x{Q}>"
    text = (f"func.func @main(%p: {pa}, %x: {x3}) -> ({pt}, {x2}, {x5}) {{\n"
            f"  %t = stablehlo.transpose %p, dims = [1, 0] : ({pa}) -> {pt}\n"
            f"  %s = stablehlo.slice %x [0:2, 1:3] : ({x3}) -> {x2}\n"
            f"  %c = stablehlo.concatenate %x, %s, dim = 1 : ({x3}, {x2}) -> {x5}\n"
            f"  return %t, %s, %c : {pt}, {x2}, {x5}\n}}")
    x = np.array([[1, -2, 3], [4, 5, -128]], np.int8)
    module = parse_module(text)
    t, s, c = Interpreter(module).run(None, [x, x])
    assert t.tolist() == x.T.tolist() and s.tolist() == x[:, 1:].tolist()
    assert c.tolist() == np.concatenate([x, x[:, 1:]], axis=1).tolist()
    types = module.func("main").result_types
    for value, ty in zip((t, s, c), types, strict=True):
        literal = format_value(value, ty)
        assert literal.endswith(f": {ty}")
        (back,) = parse_args_literal(f"[{literal}]")
        assert back.dtype == np.int8 and back.tolist() == value.tolist()


def test_check_ops_compare_quantized_storage():
    text = (f"func.func @main() {{\n  %x = stablehlo.constant dense<[1.0, 2.5]> : tensor<2xf32>\n"
            f'  %q = "stablehlo.uniform_quantize"(%x) : (tensor<2xf32>) -> tensor<2x{Q}>\n'
            f"  check.expect_eq_const %q, dense<[-1, 2]> : tensor<2x{Q}>\n  func.return\n}}")
    assert run_module(parse_module(text), "ok").status == "PASS"
    bad = text.replace("dense<[-1, 2]>", "dense<[-1, 3]>")
    assert run_module(parse_module(bad), "bad").status == "FAIL"


def test_arguments_bind_as_storage_and_must_have_the_storage_dtype():
    text = (f"func.func @main(%x: tensor<2x{Q}>) -> tensor<2xf32> {{\n"
            f'  %r = "stablehlo.uniform_dequantize"(%x) : (tensor<2x{Q}>) -> tensor<2xf32>\n'
            f"  return %r : tensor<2xf32>\n}}")
    (args,) = [parse_args_literal(f"[dense<[1, -3]> : tensor<2x{Q}>]")]
    assert run(text, args)[0].tolist() == [2.0, 0.0]
    with pytest.raises(HloLabError, match="int8"):
        run(text, [np.array([1, -3], np.int32)])


# --- ops without quantized semantics ----------------------------------------------------------

def test_an_op_without_a_quantized_rule_is_a_clear_error():
    text = (f"func.func @main(%x: tensor<2x{Q}>) -> tensor<2x{Q}> {{\n"
            f'  %r = "chlo.erf"(%x) : (tensor<2x{Q}>) -> tensor<2x{Q}>\n  return %r : tensor<2x{Q}>\n}}')
    with pytest.raises((UnsupportedError, VerificationError), match=r"chlo\.erf|erf"):
        run(text, [np.zeros(2, np.int8)])
    text = (f"func.func @main(%x: tensor<2x{Q}>) -> tensor<2x{Q}> {{\n"
            f"  %r = stablehlo.and %x, %x : tensor<2x{Q}>\n  return %r : tensor<2x{Q}>\n}}")
    with pytest.raises(VerificationError, match=r"and \(I1\)|and \(C1\)"):
        run(text, [np.zeros(2, np.int8)])


def test_the_rules_name_ops_that_exist():
    for name in RULES:
        assert lookup(name) is not None, name


# --- explain and provenance -----------------------------------------------------------------------

def test_explain_quantized_convolution_shows_the_three_stages():
    text = _conv_text(CONV_L, CONV_K, CONV_R)
    ev = list(Interpreter(parse_module(text)).events(None, [CX, CW]))[-1]
    e = ev.explain(0, (0, 1, 1, 1))
    first, last = e.steps[0], e.steps[-1]
    # (1) dequantized inputs: the elements this one reads (its provenance), each with its
    # own parameters: the window 5, 6, 8, 9 at (q + 1) * 0.5, kernel feature 1 at scale 0.5
    assert [c.name for c in first.children] == [
        "%x[0, 1, 1, 0]", "%x[0, 1, 2, 0]", "%x[0, 2, 1, 0]", "%x[0, 2, 2, 0]",
        "%w[0, 0, 0, 1]", "%w[0, 1, 0, 1]", "%w[1, 0, 0, 1]", "%w[1, 1, 0, 1]"]
    assert [float(c.value) for c in first.children] == [3.0, 3.5, 4.5, 5.0, 1.0, 2.0, 3.0, 4.0]
    assert first.children[4].substituted.args["scale"] == 0.5
    # (2) the float convolution's own steps, then the float result 43.5
    assert "dot_product" in [st.name for st in e.steps]
    assert e.steps[-2].value == 43.5
    # (3) back to storage: 43.5 / 0.25 + 0 = 174
    names = [c.name for c in last.children]
    assert names == ["x_scaled_add_zp", "x_clamped", "x_rounded", "result"]
    assert last.children[0].value == 174.0 and last.value == e.value == 174
    txt = format_explanation(e)
    assert "dequantize_op_quantize" in txt and "43.5" in txt and "174" in txt
    # provenance is the convolution's own: four lhs elements and four kernel elements
    prov = ev.provenance()
    srcs = prov.sources(0, (0, 1, 1, 1))
    assert sorted((src.operand, src.role) for src in srcs).count((0, "window")) == 4
    assert sorted((src.operand, src.role) for src in srcs).count((1, "kernel")) == 4


def test_explain_quantized_add_dequantizes_the_elements_it_reads():
    a, r = "!quant.uniform<i8:f32, 0.1:-30>", "!quant.uniform<i8:f32, 0.5:-20>"
    text = (f"func.func @main(%x: tensor<2x{a}>, %y: tensor<2x{r}>) -> tensor<2x{r}> {{\n"
            f"  %r = stablehlo.add %x, %y : (tensor<2x{a}>, tensor<2x{r}>) -> tensor<2x{r}>\n"
            f"  return %r : tensor<2x{r}>\n}}")
    args = [np.array([-20, -10], np.int8), np.array([-14, -12], np.int8)]
    e = list(Interpreter(parse_module(text)).events(None, args))[-1].explain(0, (1,))
    deqs = e.steps[0].children
    assert [c.name for c in deqs] == ["%x[1]", "%y[1]"]
    assert deqs[0].substituted.args["q"] == -10
    # a negative zero point is bracketed, so the formula never reads "-12 - -20"
    assert str(deqs[1].substituted) == "(-12 - (-20)) * 0.5"
    np.testing.assert_allclose([c.value for c in deqs], [2.0, 4.0], rtol=1e-6)
    assert e.steps[-2].value == 6.0 and e.value == -8
    assert e.steps[-1].children[0].value == -8.0  # 6 / 0.5 - 20


def test_explain_hybrid_dot_has_no_quantize_stage():
    text = (f"func.func @main(%x: tensor<2x3xf32>, %w: tensor<3x2x{W8}>) -> tensor<2x2xf32> {{\n"
            f"  %r = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : "
            f"(tensor<2x3xf32>, tensor<3x2x{W8}>) -> tensor<2x2xf32>\n  return %r : tensor<2x2xf32>\n}}")
    events = list(Interpreter(parse_module(text)).events(None, [np.ones((2, 3), np.float32), W32]))
    e = events[-1].explain(0, (0, 1))
    # the quantized rhs column the element reads, 2, -4, 6 at its axis scale 0.5 (the lhs is float)
    assert [c.name for c in e.steps[0].children] == ["%w[0, 1]", "%w[1, 1]", "%w[2, 1]"]
    assert [float(c.value) for c in e.steps[0].children] == [1.0, -2.0, 3.0]
    assert e.value == e.steps[-1].value == 0.5 * (2 - 4 + 6)
    assert "hybrid_dequantize_then_op" in format_explanation(e)


# --- the rule is the float op between dequantize and quantize: checked against the float program ---

def _float_then_quantize(text_q: str, text_f: str, args: list[np.ndarray], params: list[tuple[float, int]],
                         out_params: list[tuple[float, int]]) -> None:
    """The quantized program's results = the float program on the dequantized arguments,
    each result quantized by the reference."""
    got = run(text_q, args)
    floats = run(text_f, [deq(a, s, z) for a, (s, z) in zip(args, params, strict=True)])
    for g, f, (s, z) in zip(got, floats, out_params, strict=True):
        want = [ref_quantize(v, s, z) for v in f.reshape(-1).tolist()]
        assert g.dtype == np.int8 and g.reshape(-1).tolist() == want


def test_batch_norm_grad_quantizes_its_three_results():
    f, g = "!quant.uniform<i8:f32, 0.25:0>", "!quant.uniform<i8:f32, 0.125:3>"

    def text(e: str, e2: str) -> str:
        x, v, v2 = f"tensor<2x2x{e}>", f"tensor<2x{e}>", f"tensor<2x{e2}>"
        return (f"func.func @main(%x: {x}, %s: {v}, %m: {v}, %v: {v}, %g: {x}) -> ({x}, {v2}, {v}) {{\n"
                f'  %r:3 = "stablehlo.batch_norm_grad"(%x, %s, %m, %v, %g) {{epsilon = 0.0 : f32, '
                f"feature_index = 1 : i64}} : ({x}, {v}, {v}, {v}, {x}) -> ({x}, {v2}, {v})\n"
                f"  return %r#0, %r#1, %r#2 : {x}, {v2}, {v}\n}}")
    args = [np.array([[4, 8], [12, 24]], np.int8), np.array([4, 8], np.int8), np.array([8, 16], np.int8),
            np.array([4, 16], np.int8), np.array([[2, -4], [6, 1]], np.int8)]
    _float_then_quantize(text(f, g), text("f32", "f32"), args, [(0.25, 0)] * 5,
                         [(0.25, 0), (0.125, 3), (0.25, 0)])


def test_reduce_precision_dequantizes_rounds_and_quantizes():
    q = "!quant.uniform<i8:f32, 0.1:2>"

    def text(e: str) -> str:
        return (f"func.func @main(%x: tensor<6x{e}>) -> tensor<6x{e}> {{\n"
                f"  %r = stablehlo.reduce_precision %x, format = e5m2 : tensor<6x{e}>\n"
                f"  return %r : tensor<6x{e}>\n}}")
    _float_then_quantize(text(q), text("f32"), [np.array([-128, -40, 0, 17, 90, 127], np.int8)], [(0.1, 2)],
                         [(0.1, 2)])
