"""Dynamic-shape ops (dynamic_broadcast_in_dim, dynamic_iota, dynamic_pad, dynamic_reshape,
real_dynamic_slice; set_dimension_size refused) and ``tensor<?x…>`` values: the spec's
worked examples, ``?`` result dims, run-time errors naming op and constraint, provenance
marking the shape operands ``index_read``, explain with the shape operands' values."""

from __future__ import annotations

import numpy as np
import pytest

from hlolab.errors import ExecutionError, HloLabError, UnsupportedError, VerificationError
from hlolab.interp.engine import Interpreter
from hlolab.ir.parser import parse_module
from hlolab.ops.registry import all_ops
from hlolab.session import Session
from hlolab.trace.explain import format_explanation

I64 = np.int64


def run(text: str, *args: np.ndarray) -> list[np.ndarray]:
    return Interpreter(parse_module(text)).run(None, list(args))


def events(text: str, *args: np.ndarray):
    """The run's events by op name (the last of each)."""
    return {e.op.name: e for e in Interpreter(parse_module(text)).events(None, list(args))}


def fn(args: str, ret: str, body: str, results: str) -> str:
    return f"func.func @main({args}) -> {ret} {{\n{body}\n  return {results}\n}}"


# --- dynamic_broadcast_in_dim ---------------------------------------------------------------

BROADCAST = fn("%operand: tensor<1x3xi64>, %output_dimensions: tensor<3xi64>", "tensor<{rt}>",
               '  %result = "stablehlo.dynamic_broadcast_in_dim"(%operand, %output_dimensions) {\n'
               "    broadcast_dimensions = array<i64: 2, 1>, known_expanding_dimensions = array<i64: 0>,\n"
               "    known_nonexpanding_dimensions = array<i64: 1>\n"
               "  } : (tensor<1x3xi64>, tensor<3xi64>) -> tensor<{rt}>", "%result : tensor<{rt}>")
SPEC_BROADCAST = [[[1, 1], [2, 2], [3, 3]], [[1, 1], [2, 2], [3, 3]]]


@pytest.mark.parametrize("rt", ["2x3x2xi64", "?x3x?xi64", "?x?x?xi64"])
def test_dynamic_broadcast_in_dim_spec_example_with_static_and_dynamic_result(rt):
    (out,) = run(BROADCAST.replace("{rt}", rt), np.array([[1, 2, 3]], I64), np.array([2, 3, 2], I64))
    np.testing.assert_array_equal(out, SPEC_BROADCAST)
    assert out.dtype == I64


def test_dynamic_broadcast_in_dim_static_dim_mismatch_names_the_op():
    with pytest.raises(VerificationError, match=r"dynamic_broadcast_in_dim: shape\(result\) = \[4, 3, 2\] "
                       r"\(output_dimensions = \[4, 3, 2\]\) does not fit the declared result type "
                       r"tensor<2x3x2xi64> \(dim 0\)"):
        run(BROADCAST.replace("{rt}", "2x3x2xi64"), np.array([[1, 2, 3]], I64), np.array([4, 3, 2], I64))


def test_dynamic_broadcast_in_dim_run_time_c5_and_broken_promises():
    # operand dim 1 (size 3) lands on result dim 1, which output_dimensions makes 4: (C5)
    with pytest.raises(VerificationError, match=r"dynamic_broadcast_in_dim \(C5\): dim\(operand, 1\) = 3 "
                       r"must be 1 or dim\(result, broadcast_dimensions\[1\] = 1\) = 4"):
        run(BROADCAST.replace("{rt}", "?x?x?xi64"), np.array([[1, 2, 3]], I64), np.array([2, 4, 2], I64))
    text = BROADCAST.replace("{rt}", "?x?x?xi64").replace("known_expanding_dimensions = array<i64: 0>",
                                                          "known_expanding_dimensions = array<i64>")
    text = text.replace("known_nonexpanding_dimensions = array<i64: 1>",
                        "known_nonexpanding_dimensions = array<i64: 0>")
    with pytest.raises(VerificationError, match=r"known_nonexpanding_dimensions holds 0, but "
                       r"dim\(operand, 0\) "
                       r"= 1 expands to dim\(result, 2\) = 2"):
        run(text, np.array([[1, 2, 3]], I64), np.array([2, 3, 2], I64))


def test_dynamic_broadcast_in_dim_static_constraints():
    bad = BROADCAST.replace("{rt}", "2x3x2xi64").replace("tensor<3xi64>", "tensor<2xi64>")
    with pytest.raises(VerificationError, match=r"\(C7\): size\(output_dimensions\) = 2 must equal rank"):
        run(bad)
    both = BROADCAST.replace("{rt}", "2x3x2xi64").replace("known_nonexpanding_dimensions = array<i64: 1>",
                                                          "known_nonexpanding_dimensions = array<i64: 0>")
    with pytest.raises(VerificationError, match=r"\(C8\)"):
        run(both)


def test_dynamic_broadcast_in_dim_provenance_and_explain():
    ev = events(BROADCAST.replace("{rt}", "?x3x?xi64"), np.array([[1, 2, 3]], I64),
                np.array([2, 3, 2], I64))["stablehlo.dynamic_broadcast_in_dim"]
    assert ev.call.op.result_types[0].shape == (2, 3, 2)  # the refined type, settled from the value
    srcs = {(s.operand, s.index, s.role) for s in ev.provenance().sources(0, (1, 2, 0))}
    assert srcs == {(0, (0, 2), "copy"), (1, (0,), "index_read"), (1, (1,), "index_read"),
                    (1, (2,), "index_read")}
    text = format_explanation(ev.explain(0, (1, 2, 0)))
    assert "output_dimensions = %output_dimensions, read at run time = (2, 3, 2)" in text, text
    assert "%operand[0, 2] = 3" in text, text


# --- dynamic_iota ------------------------------------------------------------------------------

IOTA = fn("%output_shape: tensor<2xi64>", "tensor<{rt}>",
          "  %result = stablehlo.dynamic_iota %output_shape, dim = {d} : (tensor<2xi64>) -> tensor<{rt}>",
          "%result : tensor<{rt}>")


@pytest.mark.parametrize("rt", ["4x5xi64", "?x5xi64", "?x?xi64"])
def test_dynamic_iota_spec_example(rt):
    (out,) = run(IOTA.replace("{rt}", rt).replace("{d}", "0"), np.array([4, 5], I64))
    np.testing.assert_array_equal(out, np.repeat(np.arange(4)[:, None], 5, axis=1))


def test_dynamic_iota_float_and_dim_1():
    (out,) = run(IOTA.replace("{rt}", "?x?xf32").replace("{d}", "1"), np.array([2, 3], I64))
    np.testing.assert_array_equal(out, [[0, 1, 2], [0, 1, 2]])
    assert out.dtype == np.float32


def test_dynamic_iota_errors():
    with pytest.raises(VerificationError, match=r"dynamic_iota: shape\(result\) = \[3, 5\] "
                       r".* tensor<4x5xi64>"):
        run(IOTA.replace("{rt}", "4x5xi64").replace("{d}", "0"), np.array([3, 5], I64))
    with pytest.raises(VerificationError, match=r"dynamic_iota \(C1\): iota_dimension = 2 "
                       r"must be in \[0, 2\)"):
        run(IOTA.replace("{rt}", "4x5xi64").replace("{d}", "2"))
    with pytest.raises(VerificationError, match=r"dynamic_iota \(I1\): output_shape = \[-1, 5\] "
                       r"must hold sizes"):
        run(IOTA.replace("{rt}", "?x5xi64").replace("{d}", "0"), np.array([-1, 5], I64))


def test_dynamic_iota_provenance_reads_only_the_shape():
    text = IOTA.replace("{rt}", "?x?xi64").replace("{d}", "0")
    ev = events(text, np.array([3, 2], I64))["stablehlo.dynamic_iota"]
    srcs = {(s.operand, s.index, s.role) for s in ev.provenance().sources(0, (2, 1))}
    assert srcs == {(0, (0,), "index_read"), (0, (1,), "index_read")}


# --- dynamic_pad -------------------------------------------------------------------------------

PAD = fn("%operand: tensor<{ot}>, %padding_value: tensor<i64>, %low: tensor<2xi64>, %high: tensor<2xi64>, "
         "%interior: tensor<2xi64>", "tensor<{rt}>",
         "  %result = stablehlo.dynamic_pad %operand, %padding_value, %low, %high, %interior\n"
         "    : (tensor<{ot}>, tensor<i64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<{rt}>",
         "%result : tensor<{rt}>")
SPEC_PAD = [[0, 1, 0, 0, 2, 0, 0, 3, 0], [0, 0, 0, 0, 0, 0, 0, 0, 0], [0, 4, 0, 0, 5, 0, 0, 6, 0],
            [0, 0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0, 0]]
PAD_ARGS = (np.array([[1, 2, 3], [4, 5, 6]], I64), np.array(0, I64), np.array([0, 1], I64),
            np.array([2, 1], I64), np.array([1, 2], I64))


@pytest.mark.parametrize("ot, rt", [("2x3xi64", "5x9xi64"), ("2x3xi64", "?x?xi64"), ("?x3xi64", "5x?xi64")])
def test_dynamic_pad_spec_example(ot, rt):
    (out,) = run(PAD.replace("{ot}", ot).replace("{rt}", rt), *PAD_ARGS)
    np.testing.assert_array_equal(out, SPEC_PAD)


def test_dynamic_pad_errors_name_the_constraint():
    with pytest.raises(VerificationError, match=r"dynamic_pad \(C4\): shape\(result\) = \[5, 9\] .* "
                       r"tensor<5x8xi64> \(dim 1\)"):
        run(PAD.replace("{ot}", "2x3xi64").replace("{rt}", "5x8xi64"), *PAD_ARGS)
    neg = list(PAD_ARGS)
    neg[4] = np.array([1, -1], I64)
    with pytest.raises(VerificationError, match=r"dynamic_pad \(C3\): interior_padding = "
                       r"\[1, -1\] must be >= 0"):
        run(PAD.replace("{ot}", "2x3xi64").replace("{rt}", "?x?xi64"), *neg)


def test_dynamic_pad_provenance_and_explain():
    ev = events(PAD.replace("{ot}", "2x3xi64").replace("{rt}", "?x?xi64"), *PAD_ARGS)["stablehlo.dynamic_pad"]
    prov = ev.provenance()
    srcs = {(s.operand, s.index, s.role) for s in prov.sources(0, (2, 4))}
    shape_reads = {(k, (d,), "index_read") for k in (2, 3, 4) for d in (0, 1)}
    assert srcs == {(0, (1, 1), "copy")} | shape_reads
    hole = {(s.operand, s.index, s.role) for s in prov.sources(0, (1, 1))}
    assert hole == {(1, (), "pad_value")} | shape_reads
    text = format_explanation(ev.explain(0, (2, 4)))
    assert "interior_padding = %interior, read at run time = (1, 2)" in text, text
    assert "%operand[1, 1] = 5" in text, text


# --- dynamic_reshape ----------------------------------------------------------------------------

RESHAPE = fn("%operand: tensor<{ot}>, %output_shape: tensor<2xi64>", "tensor<{rt}>",
             "  %result = stablehlo.dynamic_reshape %operand, %output_shape : (tensor<{ot}>, tensor<2xi64>) "
             "-> tensor<{rt}>", "%result : tensor<{rt}>")


@pytest.mark.parametrize("ot, rt", [("2x3xi64", "3x2xi64"), ("2x3xi64", "?x2xi64"), ("?x3xi64", "?x?xi64")])
def test_dynamic_reshape_spec_example(ot, rt):
    (out,) = run(RESHAPE.replace("{ot}", ot).replace("{rt}", rt), np.array([[1, 2, 3], [4, 5, 6]], I64),
                 np.array([3, 2], I64))
    np.testing.assert_array_equal(out, [[1, 2], [3, 4], [5, 6]])


def test_dynamic_reshape_errors():
    x = np.array([[1, 2, 3], [4, 5, 6]], I64)
    with pytest.raises(VerificationError, match=r"dynamic_reshape \(C2\): size\(operand\) = 6 must equal "
                       r"size\(result\) = 8"):
        run(RESHAPE.replace("{ot}", "2x3xi64").replace("{rt}", "?x?xi64"), x, np.array([4, 2], I64))
    with pytest.raises(VerificationError, match=r"dynamic_reshape: shape\(result\) = \[6, 1\] "
                       r".* tensor<3x\?xi64>"):
        run(RESHAPE.replace("{ot}", "2x3xi64").replace("{rt}", "3x?xi64"), x, np.array([6, 1], I64))


def test_dynamic_reshape_provenance():
    ev = events(RESHAPE.replace("{ot}", "2x3xi64").replace("{rt}", "?x?xi64"),
                np.array([[1, 2, 3], [4, 5, 6]], I64), np.array([3, 2], I64))["stablehlo.dynamic_reshape"]
    srcs = {(s.operand, s.index, s.role) for s in ev.provenance().sources(0, (2, 0))}
    assert srcs == {(0, (1, 1), "copy"), (1, (0,), "index_read"), (1, (1,), "index_read")}


# --- real_dynamic_slice, set_dimension_size --------------------------------------------------------

SLICE = fn("%operand: tensor<3x4xi64>, %start: tensor<2xi64>, %limit: tensor<2xi64>, %strides: tensor<2xi64>",
           "tensor<?x?xi64>",
           "  %result = stablehlo.real_dynamic_slice %operand, %start, %limit, %strides : (tensor<3x4xi64>, "
           "tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x?xi64>", "%result : tensor<?x?xi64>")


def test_real_dynamic_slice_is_slice_with_values():
    x = np.arange(12, dtype=I64).reshape(3, 4)
    (out,) = run(SLICE, x, np.array([1, 0], I64), np.array([3, 4], I64), np.array([1, 2], I64))
    np.testing.assert_array_equal(out, x[1:3, 0:4:2])
    with pytest.raises(VerificationError, match=r"real_dynamic_slice: as slice \(C3\) requires: dimension 1"):
        run(SLICE, x, np.array([1, 0], I64), np.array([3, 5], I64), np.array([1, 2], I64))


def test_set_dimension_size_is_refused_clearly():
    text = fn("%x: tensor<4xf32>, %n: tensor<i32>", "tensor<4xf32>",
              "  %0 = stablehlo.set_dimension_size %x, %n, dim = 0 : (tensor<4xf32>, tensor<i32>) "
              "-> tensor<4xf32>",
              "%0 : tensor<4xf32>")
    with pytest.raises(UnsupportedError, match="set_dimension_size is not in the StableHLO spec"):
        run(text, np.zeros(4, np.float32), np.array(2, np.int32))


def test_hlolab_ops_lists_every_dynamic_shape_op():
    ops = all_ops()
    for n in ("dynamic_broadcast_in_dim", "dynamic_iota", "dynamic_pad", "dynamic_reshape",
              "real_dynamic_slice",
              "dynamic_gather", "dynamic_conv", "get_dimension_size", "set_dimension_size"):
        assert f"stablehlo.{n}" in ops, n


# --- tensor<?x…> arguments through a program ---------------------------------------------------------

DYN = fn("%x: tensor<?x3xf32>, %y: tensor<?x3xf32>", "tensor<?x3xf32>",
         "  %0 = stablehlo.add %x, %y : tensor<?x3xf32>\n"
         "  %1 = stablehlo.transpose %0, dims = [1, 0] : (tensor<?x3xf32>) -> tensor<3x?xf32>\n"
         "  %2 = stablehlo.transpose %1, dims = [1, 0] : (tensor<3x?xf32>) -> tensor<?x3xf32>",
         "%2 : tensor<?x3xf32>")


@pytest.mark.parametrize("n", [1, 4])
def test_dynamic_arguments_bind_their_sizes_and_flow_through(n):
    x = np.arange(3 * n, dtype=np.float32).reshape(n, 3)
    (out,) = run(DYN, x, x)
    np.testing.assert_array_equal(out, 2 * x)


def test_a_run_time_size_disagreement_names_the_op():
    x, y = np.zeros((2, 3), np.float32), np.zeros((4, 3), np.float32)
    with pytest.raises(VerificationError, match=r"add"):
        run(DYN, x, y)


def test_a_static_argument_dim_mismatch_is_an_error():
    with pytest.raises(ExecutionError, match=r"argument #0 of @main must be tensor<\?x3xf32>, got array of "
                       r"shape \(2, 4\)"):
        run(DYN, np.zeros((2, 4), np.float32), np.zeros((2, 4), np.float32))


def test_session_binds_dynamic_arguments_and_random_ones_are_refused_clearly():
    s = Session(DYN)
    x = np.ones((5, 3), np.float32)
    s.bind([x, x])
    assert s.run().reason == "end"
    np.testing.assert_array_equal(s.value("%2"), 2 * x)
    with pytest.raises(HloLabError, match=r"argument #0 of @main has dynamic shape tensor<\?x3xf32>.*--args"):
        s.bind(seed=0)


def test_a_dynamic_result_prints_with_its_run_time_shape():
    from hlolab.runner import run_module

    r = run_module(parse_module(DYN), "dyn", args=[np.ones((2, 3), np.float32)] * 2)
    assert r.ok and str(r.output_types[0]) == "tensor<2x3xf32>"


def test_a_typed_literal_gives_a_dynamic_argument_its_sizes():
    from hlolab.interp.inputs import parse_literal
    from hlolab.ir.parser import parse_type

    t = parse_type("tensor<?x2xf32>", "<t>")
    v = parse_literal("dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>", t)
    np.testing.assert_array_equal(v, [[1, 2], [3, 4], [5, 6]])
    with pytest.raises(HloLabError, match=r"tensor<\?x2xf32> has a dynamic size: write the literal "
                       r"with its type"):
        parse_literal("dense<[[1.0, 2.0]]>", t)
    with pytest.raises(HloLabError, match=r"the literal's type tensor<1x3xf32> does not have the shape"):
        parse_literal("dense<[[1.0, 2.0, 3.0]]> : tensor<1x3xf32>", t)
