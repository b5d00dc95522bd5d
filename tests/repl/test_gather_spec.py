"""The StableHLO spec's gather example built statement by statement at the REPL, once
as MLIR statements (the spec's own multi-line op text) and once in the builder
language, each printing the spec's result."""

from __future__ import annotations

import ast

import numpy as np
import pytest

from hlolab.repl.display import elements_text
from tests.conftest import shared_dir
from tests.spec.spec_examples import spec_examples


@pytest.fixture(scope="module")
def gather_example():
    seeds = shared_dir("seeds")
    spec = next(seeds.glob("003_*.txt"))
    ex = next(e for e in spec_examples(spec) if e.op == "gather")
    operand = np.array(ast.literal_eval(ex.inputs["operand"]), np.int32)
    indices = np.array(ast.literal_eval(ex.inputs["start_indices"]), np.int64)
    result = np.array(ast.literal_eval(ex.outputs["result"]), np.int32)
    return ex, operand, indices, result


def _dense(a: np.ndarray) -> str:
    return str(a.tolist()).replace(" ", "")


def _assert_prints_result(out: str, result: np.ndarray) -> None:
    head = "%result : tensor<2x2x3x2x2xi32>\n"
    assert head in out
    printed = out.split(head, 1)[1]
    assert printed.startswith(elements_text(result) + "\n")


def test_gather_as_mlir_statements(drive, gather_example):
    ex, operand, indices, result = gather_example
    assert "\n" in ex.body.strip()  # the spec's op spans lines: Enter continues it
    lines = [
        f"%operand = stablehlo.constant dense<{_dense(operand)}> : tensor<2x3x4x2xi32>",
        f"%start_indices = stablehlo.constant dense<{_dense(indices)}> : tensor<2x2x3x2xi64>",
        ex.body.strip(),
    ]
    out, repl = drive(lines)
    _assert_prints_result(out, result)
    _, value = repl.program.value("result")
    assert value.dtype == np.int32 and value.tolist() == result.tolist()
    assert [e.text for e in repl.program.entries][2] == ex.body.strip()


def test_gather_in_the_builder_language(drive, gather_example):
    _, operand, indices, result = gather_example
    lines = [
        f"operand = {_dense(operand)}:s32",
        f"start_indices = {_dense(indices)}:s64",
        "result = Gather(operand, start_indices,\n"
        "  offset_dims=[3, 4], collapsed_slice_dims=[1], operand_batching_dims=[0],\n"
        "  start_indices_batching_dims=[1], start_index_map=[2, 1], index_vector_dim=3,\n"
        "  slice_sizes=[1, 1, 2, 2])",
    ]
    out, repl = drive(lines)
    _assert_prints_result(out, result)
    assert "%start_indices : tensor<2x2x3x2xi64>" in out
    _, value = repl.program.value("%result")
    assert value.tolist() == result.tolist()


def test_both_languages_build_the_same_op(drive, gather_example):
    ex, operand, indices, _ = gather_example
    # builder names are SSA names: an MLIR statement uses the builder language's values
    lines = [f"operand = {_dense(operand)}:s32", f"start_indices = {_dense(indices)}:s64",
             ex.body.strip(), ":show %result"]
    out, repl = drive(lines)
    assert "made by: %result = \"stablehlo.gather\"" in out or "made by: %result = stablehlo.gather" in out
    assert repl.program.b.names() == ["operand", "start_indices", "result"]
