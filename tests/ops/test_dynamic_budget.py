"""The element budget for dynamic-shape ops: a shape operand (or a padding / slice-size
operand) that asks for a result over the budget is refused with the budget error before
anything is allocated, for every dynamic op; products past int64 are not wrapped."""

from __future__ import annotations

import numpy as np
import pytest

from hlolab.errors import ExecutionError
from hlolab.interp.engine import Interpreter
from hlolab.ir.parser import parse_module

I64 = np.int64
HUGE = [2**20, 2**20]  # 2^40 elements: far over the default budget of 2^28
WRAPS = [2**32, 2**32]  # 2^64 elements: an int64 product is 0


def run(text: str, args: list[np.ndarray], budget: int | None = None) -> list[np.ndarray]:
    kw = {} if budget is None else {"element_budget": budget}
    return Interpreter(parse_module(text), **kw).run(None, args)


def refused(text: str, args: list[np.ndarray], op: str, budget: int | None = None) -> str:
    with pytest.raises(ExecutionError, match="budget") as info:
        run(text, args, budget)
    msg = str(info.value)
    assert op in msg, msg
    return msg


def fn(args: str, ret: str, body: str) -> str:
    return f"func.func @main({args}) -> {ret} {{\n{body}\n  return %r : {ret}\n}}"


IOTA = fn("%s: tensor<2xi64>", "tensor<?x?xf32>",
          "  %r = stablehlo.dynamic_iota %s, dim = 0 : (tensor<2xi64>) -> tensor<?x?xf32>")
BROADCAST = fn("%x: tensor<1xf32>, %s: tensor<2xi64>", "tensor<?x?xf32>",
               '  %r = "stablehlo.dynamic_broadcast_in_dim"(%x, %s) {broadcast_dimensions = array<i64: 1>}'
               " : (tensor<1xf32>, tensor<2xi64>) -> tensor<?x?xf32>")
PAD = fn("%x: tensor<2x2xf32>, %v: tensor<f32>, %lo: tensor<2xi64>, %hi: tensor<2xi64>, %in: tensor<2xi64>",
         "tensor<?x?xf32>",
         "  %r = stablehlo.dynamic_pad %x, %v, %lo, %hi, %in : (tensor<2x2xf32>, tensor<f32>, tensor<2xi64>, "
         "tensor<2xi64>, tensor<2xi64>) -> tensor<?x?xf32>")
RESHAPE = fn("%x: tensor<?xf32>, %s: tensor<2xi64>", "tensor<?x?xf32>",
             "  %r = stablehlo.dynamic_reshape %x, %s : (tensor<?xf32>, tensor<2xi64>) -> tensor<?x?xf32>")
SLICE = fn("%x: tensor<?x?xf32>, %a: tensor<2xi64>, %b: tensor<2xi64>, %c: tensor<2xi64>", "tensor<?x?xf32>",
           "  %r = stablehlo.real_dynamic_slice %x, %a, %b, %c : (tensor<?x?xf32>, tensor<2xi64>, "
           "tensor<2xi64>, tensor<2xi64>) -> tensor<?x?xf32>")
GATHER = fn("%x: tensor<?x?xf32>, %i: tensor<?x1xi64>, %s: tensor<2xi64>", "tensor<?x?x?xf32>",
            '  %r = "stablehlo.dynamic_gather"(%x, %i, %s) {dimension_numbers = #stablehlo.gather<'
            "offset_dims = [1, 2], start_index_map = [0], index_vector_dim = 1>} : "
            "(tensor<?x?xf32>, tensor<?x1xi64>, tensor<2xi64>) -> tensor<?x?x?xf32>")
CONV = fn("%a: tensor<1x2x2x1xf32>, %b: tensor<1x1x1x1xf32>, %p: tensor<2x2xi64>", "tensor<1x?x?x1xf32>",
          '  %r = "stablehlo.dynamic_conv"(%a, %b, %p) {dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x'
          "[0, 1, i, o]->[b, 0, 1, f]>, feature_group_count = 1 : i64, batch_group_count = 1 : i64} : "
          "(tensor<1x2x2x1xf32>, tensor<1x1x1x1xf32>, tensor<2x2xi64>) -> tensor<1x?x?x1xf32>")


@pytest.mark.parametrize("sizes", [HUGE, WRAPS])
def test_dynamic_iota(sizes):
    msg = refused(IOTA, [np.array(sizes, I64)], "dynamic_iota")
    assert f"{sizes[0] * sizes[1]:,}" in msg


def test_dynamic_iota_under_the_budget_runs():
    (r,) = run(IOTA, [np.array([3, 2], I64)])
    assert r.tolist() == [[0, 0], [1, 1], [2, 2]]


@pytest.mark.parametrize("sizes", [HUGE, WRAPS])
def test_dynamic_broadcast_in_dim(sizes):
    refused(BROADCAST, [np.ones(1, np.float32), np.array(sizes, I64)], "dynamic_broadcast_in_dim")


@pytest.mark.parametrize("lo, hi, interior", [([2**20, 0], [0, 2**20], [0, 0]),  # 2^20 + 2 squared
                                              ([0, 0], [0, 0], [2**40, 2**40]),  # interior padding
                                              ([2**62, 0], [2**62, 0], [0, 0])])  # past int64 as a size
def test_dynamic_pad(lo, hi, interior):
    args = [np.ones((2, 2), np.float32), np.array(0, np.float32), np.array(lo, I64), np.array(hi, I64),
            np.array(interior, I64)]
    refused(PAD, args, "dynamic_pad")


def test_dynamic_reshape_over_the_budget_is_the_budget_error_not_a_size_mismatch():
    # the operand has 6 elements, the shape asks for 2^40: the budget error comes first
    refused(RESHAPE, [np.ones(6, np.float32), np.array(HUGE, I64)], "dynamic_reshape")


def test_real_dynamic_slice_under_a_small_budget():
    x = np.ones((40, 40), np.float32)
    args = [x, np.array([0, 0], I64), np.array([40, 40], I64), np.array([1, 1], I64)]
    refused(SLICE, args, "real_dynamic_slice", budget=1000)
    (r,) = run(SLICE, [x, np.array([0, 0], I64), np.array([40, 40], I64), np.array([2, 2], I64)], budget=1000)
    assert r.shape == (20, 20)


def test_dynamic_gather_slice_sizes_times_batch_over_the_budget():
    x = np.ones((8, 64), np.float32)
    idx = np.zeros((64, 1), I64)
    refused(GATHER, [x, idx, np.array([8, 64], I64)], "dynamic_gather", budget=4096)  # 64 * 8 * 64
    (r,) = run(GATHER, [x, idx, np.array([1, 64], I64)], budget=4096)  # 64 * 1 * 64 = 4096
    assert r.shape == (64, 1, 64)


@pytest.mark.parametrize("pad", [[[2**20, 2**20], [2**20, 2**20]], [[2**40, 0], [2**40, 0]]])
def test_dynamic_conv_padding_over_the_budget(pad):
    args = [np.ones((1, 2, 2, 1), np.float32), np.ones((1, 1, 1, 1), np.float32), np.array(pad, I64)]
    refused(CONV, args, "dynamic_conv")
