"""gather and dynamic_gather: spec and XLA examples, conformance, clamping, every
constraint, a slow reference by the spec's formula, provenance and explain."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hlolab.errors import ExecutionError, VerificationError
from hlolab.interp.single import apply_op, build_op, evaluate_op
from hlolab.ir.attrs import BoolAttr, DenseArrayAttr
from hlolab.ir.parser import parse_attribute
from hlolab.messages import text
from hlolab.ops.registry import OpCall, lookup
from hlolab.runner import run_file
from hlolab.trace.explain import DimRole, format_explanation
from hlolab.trace.provenance import Source, Target
from hlolab.types import QuantizedElementType, element_type, element_type_of_dtype, tensor_type
from tests.conftest import shared_dir

G, DG = "stablehlo.gather", "stablehlo.dynamic_gather"


def dnums(offset_dims=(), collapsed_slice_dims=(), operand_batching_dims=(),
          start_indices_batching_dims=(), start_index_map=(), index_vector_dim=0):
    def lst(xs):
        return "[" + ", ".join(str(x) for x in xs) + "]"
    text = (f"#stablehlo.gather<offset_dims = {lst(offset_dims)}, collapsed_slice_dims = "
            f"{lst(collapsed_slice_dims)}, operand_batching_dims = {lst(operand_batching_dims)}, "
            f"start_indices_batching_dims = {lst(start_indices_batching_dims)}, start_index_map = "
            f"{lst(start_index_map)}, index_vector_dim = {index_vector_dim}>")
    return parse_attribute(text)


def attrs(slice_sizes=None, sorted_=False, **dims) -> dict:
    a = {"dimension_numbers": dnums(**dims), "indices_are_sorted": BoolAttr(sorted_)}
    if slice_sizes is not None:
        a["slice_sizes"] = DenseArrayAttr("i64", tuple(slice_sizes))
    return a


def rtype(shape, dtype) -> Any:
    return tensor_type(tuple(shape), element_type_of_dtype(np.dtype(dtype)))


@dataclass
class Ran:
    call: OpCall
    inputs: list[Any]
    outputs: list[Any]

    @property
    def out(self) -> np.ndarray:
        return self.outputs[0]

    def prov(self):
        return lookup(self.call.name).provenance(self.call, self.inputs, self.outputs)

    def explain(self, index: tuple, result: int = 0):
        return lookup(self.call.name).explain(self.call, self.inputs, self.outputs, result, index)


def gather(operand, start_indices, result_shape, slice_sizes, **dims) -> Ran:
    op = build_op(G, [operand, start_indices], attrs(slice_sizes, **dims),
                  [rtype(result_shape, operand.dtype)])
    call = OpCall(op)
    return Ran(call, [operand, start_indices], evaluate_op(op, [operand, start_indices], call))


def dynamic_gather(operand, start_indices, slice_sizes, result_shape, **dims) -> Ran:
    inputs = [operand, start_indices, np.asarray(slice_sizes, np.int64)]
    op = build_op(DG, inputs, attrs(None, **dims), [rtype(result_shape, operand.dtype)])
    call = OpCall(op)
    return Ran(call, inputs, evaluate_op(op, inputs, call))


def fails(constraint, name, inputs, a, result_types, operand_types=None) -> VerificationError:
    with pytest.raises(VerificationError) as info:
        apply_op(name, inputs, a, result_types, operand_types)
    e = info.value
    assert e.constraint == constraint, e.message
    if constraint:
        assert e.message.startswith(f"{name.removeprefix('stablehlo.')} ({constraint}): "), e.message
    return e


# --- the slow reference: the spec's formula, one element at a time ------------------------

def reference_gather(operand: np.ndarray, start_indices: np.ndarray, result_shape, slice_sizes,
                     offset_dims=(), collapsed_slice_dims=(), operand_batching_dims=(),
                     start_indices_batching_dims=(), start_index_map=(), index_vector_dim=0):
    result = np.zeros(result_shape, operand.dtype)
    sources = {}
    rank_si = start_indices.ndim
    batch_dims = [d for d in range(len(result_shape)) if d not in offset_dims]
    for result_index in np.ndindex(*result_shape):
        batch_index = [result_index[d] for d in batch_dims]
        if index_vector_dim < rank_si:
            positions = []
            for k in range(start_indices.shape[index_vector_dim]):
                p = list(batch_index)
                p.insert(index_vector_dim, k)
                positions.append(tuple(p))
        else:
            positions = [tuple(batch_index)]
        start_index = [int(start_indices[p]) for p in positions]
        full_start_index = [0] * operand.ndim
        for d_start, d_operand in enumerate(start_index_map):
            hi = operand.shape[d_operand] - slice_sizes[d_operand]
            full_start_index[d_operand] = min(max(start_index[d_start], 0), hi)
        full_batching_index = [0] * operand.ndim
        for i_b, d_operand in enumerate(operand_batching_dims):
            d_start = start_indices_batching_dims[i_b]
            full_batching_index[d_operand] = batch_index[d_start - (0 if d_start < index_vector_dim
                                                                    else 1)]
        offset_index = [result_index[d] for d in offset_dims]
        full_offset_index = []
        it = iter(offset_index)
        for d in range(operand.ndim):
            skip = d in collapsed_slice_dims or d in operand_batching_dims
            full_offset_index.append(0 if skip else next(it))
        operand_index = tuple(a + b + c for a, b, c in zip(full_start_index, full_batching_index,
                                                          full_offset_index))
        result[result_index] = operand[operand_index]
        sources[result_index] = (operand_index, positions)
    return result, sources


# --- spec examples -----------------------------------------------------------------------

SPEC_OPERAND = np.arange(1, 49, dtype=np.int32).reshape(2, 3, 4, 2)
SPEC_INDICES = np.array([[[[0, 0], [1, 0], [2, 1]], [[0, 1], [1, 1], [0, 9]]],
                         [[[0, 0], [2, 1], [2, 2]], [[1, 2], [0, 1], [1, 0]]]], np.int64)
SPEC_RESULT = [[[[[1, 2], [3, 4]], [[3, 4], [5, 6]], [[13, 14], [15, 16]]],
                [[[33, 34], [35, 36]], [[35, 36], [37, 38]], [[41, 42], [43, 44]]]],
               [[[[1, 2], [3, 4]], [[13, 14], [15, 16]], [[21, 22], [23, 24]]],
                [[[43, 44], [45, 46]], [[33, 34], [35, 36]], [[27, 28], [29, 30]]]]]
SPEC_DIMS = dict(offset_dims=(3, 4), collapsed_slice_dims=(1,), operand_batching_dims=(0,),
                 start_indices_batching_dims=(1,), start_index_map=(2, 1), index_vector_dim=3)


def spec_run() -> Ran:
    return gather(SPEC_OPERAND, SPEC_INDICES, (2, 2, 3, 2, 2), (1, 1, 2, 2), **SPEC_DIMS)


def test_spec_example_rank5():
    r = spec_run()
    assert r.out.dtype == np.int32
    assert r.out.tolist() == SPEC_RESULT
    want, _ = reference_gather(SPEC_OPERAND, SPEC_INDICES, (2, 2, 3, 2, 2), (1, 1, 2, 2), **SPEC_DIMS)
    assert np.array_equal(r.out, want)


def test_spec_example_dynamic_gather():
    operand = np.arange(1, 25, dtype=np.int32).reshape(3, 4, 2)
    idx = np.array([[[0, 0], [1, 0], [2, 1]], [[0, 1], [1, 1], [0, 2]]], np.int64)
    r = dynamic_gather(operand, idx, [1, 2, 2], (2, 3, 2, 2), offset_dims=(2, 3),
                       collapsed_slice_dims=(0,), start_index_map=(1, 0), index_vector_dim=2)
    assert r.out.tolist() == [[[[1, 2], [3, 4]], [[3, 4], [5, 6]], [[13, 14], [15, 16]]],
                              [[[9, 10], [11, 12]], [[11, 12], [13, 14]], [[17, 18], [19, 20]]]]


def test_spec_example_explain_clamped_element():
    # result[0, 1, 2, 1, 0]: batch_index (0, 1, 2) reads start_indices[0, 1, 2, :] = (0, 9);
    # start_index_map = [2, 1] puts 9 at operand dim 1, clamped to 3 - 1 = 2
    r = spec_run()
    e = r.explain((0, 1, 2, 1, 0))
    steps = {s.name: s for s in e.steps}
    assert steps["batch_index"].value == (0, 1, 2)
    assert steps["batch_index"].dim_roles == {0: DimRole("batch"), 1: DimRole("batch"), 2: DimRole("batch"),
                                              3: DimRole("offset", k=0), 4: DimRole("offset", k=1)}
    assert text(steps["batch_index"].substituted) == "(0, 1, 2, 1, 0)[0, 1, 2]"
    assert steps["start_index"].value == (0, 9)
    assert text(steps["start_index"].substituted) == "%arg1[0, 1, 2, :]"
    assert [text(c.formula) for c in steps["start_index"].children] == ["%arg1[0, 1, 2, 0]",
                                                                        "%arg1[0, 1, 2, 1]"]
    assert steps["full_start_index"].value == (0, 2, 0, 0)
    assert steps["full_start_index"].before_clamp == (0, 9, 0, 0)
    # start_index_map = [2, 1]: operand dim 1 takes start_index[1] = 9, clamped to [0, 3 - 1]
    assert steps["full_start_index"].dim_roles == {0: DimRole("not_indexed"),
                                                   1: DimRole("start_clamped", k=1, hi=2),
                                                   2: DimRole("start", k=0, hi=2), 3: DimRole("not_indexed")}
    assert text(steps["full_start_index"].substituted) == "(0, clamp(9, 0, 3 - 1), clamp(0, 0, 4 - 2), 0)"
    assert steps["full_batching_index"].value == (1, 0, 0, 0)
    assert steps["offset_index"].value == (1, 0)
    assert steps["full_offset_index"].value == (0, 0, 1, 0)
    assert steps["full_offset_index"].dim_roles == {0: DimRole("operand_batching"), 1: DimRole("collapsed"),
                                                   2: DimRole("offset", k=0), 3: DimRole("offset", k=1)}
    assert steps["operand_index"].value == (1, 2, 1, 0)
    assert text(steps["operand_index"].substituted) == "(0, 2, 0, 0) + (1, 0, 0, 0) + (0, 0, 1, 0)"
    assert text(steps["result[result_index]"].substituted) == "%arg0[1, 2, 1, 0]"
    assert e.value == SPEC_OPERAND[1, 2, 1, 0] == 43 == r.out[0, 1, 2, 1, 0]
    [note] = e.notes
    assert note.key == "gather.note.clamped"
    assert (note.args["before"], note.args["after"]) == ((0, 9, 0, 0), (0, 2, 0, 0))
    out = format_explanation(e)
    clamp_line = next(ln for ln in out.splitlines() if "(before clamp: (0, 9, 0, 0))" in ln)
    assert clamp_line.strip().startswith("= (0, 2, 0, 0)") and "full_batching_index" in out


def test_explain_unclamped_element_has_no_before_clamp():
    e = spec_run().explain((1, 0, 1, 0, 1))
    steps = {s.name: s for s in e.steps}
    assert steps["start_index"].value == (2, 1)
    assert steps["full_start_index"].value == (0, 1, 2, 0)
    assert steps["full_start_index"].before_clamp is None
    assert steps["operand_index"].value == (0, 1, 2, 1)
    assert e.value == 14
    assert e.notes == []
    with pytest.raises(ExecutionError):
        spec_run().explain((2, 0, 0, 0, 0))
    with pytest.raises(ExecutionError):
        spec_run().explain((0, 0, 0, 0, 0), result=1)


def test_spec_example_provenance():
    r = spec_run()
    p = r.prov()
    src = p.sources(0, (0, 1, 2, 1, 0))
    assert src == [Source(0, (1, 2, 1, 0), "copy"), Source(1, (0, 1, 2, 0), "index_read"),
                   Source(1, (0, 1, 2, 1), "index_read")]
    # operand[0, 0, 0, 1] = 2 sits at result[0, 0, 0, 0, 1] and result[1, 0, 0, 0, 1]
    copies = [t for t in p.targets(0, (0, 0, 0, 1)) if t.role == "copy"]
    assert copies == [Target(0, (0, 0, 0, 0, 1), "copy"), Target(0, (1, 0, 0, 0, 1), "copy")]
    # one start index vector is read by every element of its 2x2 slice
    reads = p.targets(1, (1, 1, 0, 0))
    assert {t.index for t in reads} == {(1, 1, 0, i, j) for i in range(2) for j in range(2)}
    back = p.back(0, np.ones(r.out.shape, bool))
    assert set(back) == {(0, "copy"), (1, "index_read")}
    assert back[(1, "index_read")].all()


# --- conformance -----------------------------------------------------------------------

@pytest.mark.parametrize("name", ["gather.mlir", "dynamic_gather.mlir"])
def test_conformance(name):
    path = shared_dir("conformance", "interpret") / name
    results = run_file(path, split=True)
    assert results and all(r.status == "PASS" for r in results), [r.line() for r in results]


# --- XLA document examples (operation semantics, Gather) --------------------------------

def test_xla_batched_dynamic_slice():
    # five [8, 6] slices of a [16, 11] array; out[G, O0, O1] = in[X + O0, Y + O1] (clamped)
    operand = np.arange(16 * 11, dtype=np.float32).reshape(16, 11)
    idx = np.array([[0, 0], [3, 2], [8, 5], [15, 10], [-4, 7]], np.int32)
    r = gather(operand, idx, (5, 8, 6), (8, 6), offset_dims=(1, 2), start_index_map=(0, 1),
               index_vector_dim=1)
    for g, (x, y) in enumerate(idx):
        x, y = min(max(x, 0), 8), min(max(y, 0), 5)
        assert np.array_equal(r.out[g], operand[x:x + 8, y:y + 6])


def test_xla_two_batch_dims():
    # gather indices of shape [4, 5, 2]: G0 and G1 are both batch dims, slices still [8, 6]
    rng = np.random.default_rng(1)
    operand = rng.standard_normal((16, 11)).astype(np.float32)
    idx = rng.integers(-2, 17, size=(4, 5, 2)).astype(np.int64)
    r = gather(operand, idx, (4, 5, 8, 6), (8, 6), offset_dims=(2, 3), start_index_map=(0, 1),
               index_vector_dim=2)
    for g0 in range(4):
        for g1 in range(5):
            x, y = min(max(idx[g0, g1, 0], 0), 8), min(max(idx[g0, g1, 1], 0), 5)
            assert np.array_equal(r.out[g0, g1], operand[x:x + 8, y:y + 6])


def test_xla_gather_nd():
    # tf.gather_nd: slice_sizes [1, 11], dim 0 collapsed, out[G0, G1, O0] = in[idx[G0, G1, 0], O0]
    operand = np.arange(16 * 11, dtype=np.int16).reshape(16, 11)
    idx = np.array([[[3], [0], [15]], [[7], [7], [1]]], np.int32)
    r = gather(operand, idx, (2, 3, 11), (1, 11), offset_dims=(2,), collapsed_slice_dims=(0,),
               start_index_map=(0,), index_vector_dim=2)
    assert np.array_equal(r.out, operand[idx[..., 0]])


# --- index_vector_dim and index types ----------------------------------------------------

def test_index_vector_dim_equal_to_rank():
    # scalar start index per batch element: start_indices [2, 3] -> implicit [2, 3, 1]
    operand = np.arange(10, dtype=np.int64) * 10
    idx = np.array([[0, 9, 4], [-1, 12, 5]], np.int32)
    r = gather(operand, idx, (2, 3, 2), (2,), offset_dims=(2,), start_index_map=(0,),
               index_vector_dim=2)
    starts = np.clip(idx, 0, 8)
    assert np.array_equal(r.out, np.stack([operand[starts], operand[starts + 1]], axis=-1))
    p = r.prov()
    assert p.sources(0, (1, 1, 1)) == [Source(0, (9,), "copy"), Source(1, (1, 1), "index_read")]
    e = r.explain((1, 0, 0))
    steps = {s.name: s for s in e.steps}
    assert steps["start_index"].value == (-1,)
    assert text(steps["start_index"].children[0].formula) == "%arg1[1, 0]"
    assert steps["full_start_index"].before_clamp == (-1,)


def test_index_vector_dim_leading():
    # the index vector along dim 0 of start_indices
    operand = np.arange(12, dtype=np.int32).reshape(3, 4)
    idx = np.array([[2, 0, 1], [3, 1, 0]], np.int64)  # 3 vectors (row, col) in columns
    r = gather(operand, idx, (3,), (1, 1), collapsed_slice_dims=(0, 1), start_index_map=(0, 1),
               index_vector_dim=0)
    assert r.out.tolist() == [operand[2, 3], operand[0, 1], operand[1, 0]]


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                                   np.uint32, np.uint64, ml_dtypes.int4, ml_dtypes.uint4,
                                   ml_dtypes.int2, ml_dtypes.uint2])
def test_every_index_type_clamps(dtype):
    info = ml_dtypes.iinfo(dtype)
    operand = np.arange(6, dtype=np.float32) + 0.5
    vals = [info.min, info.max, 0, 1]
    idx = np.array(vals, dtype=dtype).reshape(4, 1)
    r = gather(operand, idx, (4, 2), (2,), offset_dims=(1,), start_index_map=(0,), index_vector_dim=1)
    starts = [min(max(int(v), 0), 4) for v in vals]
    assert r.out.tolist() == [[operand[s], operand[s + 1]] for s in starts]
    e = r.explain((1, 0))
    assert {s.name: s for s in e.steps}["start_index"].value == (int(info.max),)


def test_ui64_above_int64_clamps_high():
    operand = np.arange(5, dtype=np.int8)
    idx = np.array([[2**64 - 1], [2**63], [2**63 - 1], [3]], np.uint64)
    r = gather(operand, idx, (4,), (1,), collapsed_slice_dims=(0,), start_index_map=(0,),
               index_vector_dim=1)
    assert r.out.tolist() == [4, 4, 4, 3]
    steps = {s.name: s for s in r.explain((0,)).steps}
    assert steps["full_start_index"].before_clamp == (2**64 - 1,)


@pytest.mark.parametrize("dtype", [np.bool_, np.uint8, np.int64, np.float16, ml_dtypes.bfloat16,
                                   ml_dtypes.float8_e4m3fn, np.complex64, ml_dtypes.int4, np.float64,
                                   ml_dtypes.float8_e5m2, ml_dtypes.uint4, ml_dtypes.float8_e4m3fnuz])
def test_every_operand_type_moves_bits(dtype):
    # float8_e5m2: numpy's stride tricks refused its type string (found by the differential suite)
    raw = np.arange(24, dtype=np.uint8).reshape(4, 6)
    operand = (raw % 2).astype(dtype) if dtype == np.bool_ else (raw % 7).astype(dtype)
    idx = np.array([[1, 2], [3, 5]], np.int32)
    r = gather(operand, idx, (2, 2, 2), (2, 2), offset_dims=(1, 2), start_index_map=(0, 1),
               index_vector_dim=1)
    assert r.out.dtype == operand.dtype
    assert r.out[0].tobytes() == operand[1:3, 2:4].tobytes()
    assert r.out[1].tobytes() == operand[2:4, 4:6].tobytes()  # (3, 5) clamped to (2, 4)


def test_nan_payload_and_negative_zero_kept():
    bits = np.array([0x7FC00001, 0x80000000, 0xFF800000], np.uint32)
    operand = bits.view(np.float32)
    r = gather(operand, np.array([[2], [0], [1]], np.int32), (3,), (1,), collapsed_slice_dims=(0,),
               start_index_map=(0,), index_vector_dim=1)
    assert r.out.view(np.uint32).tolist() == [0xFF800000, 0x7FC00001, 0x80000000]


def test_indices_are_sorted_accepted():
    operand = np.arange(8, dtype=np.int32)
    idx = np.array([[5], [1]], np.int32)  # not sorted: the promise is broken, values are unchanged
    r = gather(operand, idx, (2,), (1,), sorted_=True, collapsed_slice_dims=(0,), start_index_map=(0,),
               index_vector_dim=1)
    assert r.out.tolist() == [5, 1]
    assert [n.key for n in r.explain((0,)).notes] == ["gather.note.sorted"]


def test_empty_results():
    operand = np.arange(6, dtype=np.int32).reshape(2, 3)
    r = gather(operand, np.zeros((0, 2), np.int32), (0, 1, 3), (1, 3), offset_dims=(1, 2),
               start_index_map=(0, 1), index_vector_dim=1)
    assert r.out.shape == (0, 1, 3)
    assert r.prov().back(0, np.zeros((0, 1, 3), bool)) == {}
    r = gather(operand, np.array([[1, 1]], np.int32), (1, 2, 0), (2, 0), offset_dims=(1, 2),
               start_index_map=(0, 1), index_vector_dim=1)
    assert r.out.shape == (1, 2, 0)


def test_zero_size_collapsed_slice_is_an_error():
    operand = np.zeros((0, 3), np.int32)
    with pytest.raises(ExecutionError, match="have none"):
        apply_op(G, [operand, np.array([[0]], np.int32)],
                 attrs((0, 3), offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,),
                       index_vector_dim=1), [rtype((1, 3), np.int32)])


def test_dynamic_gather_with_batching_dims():
    r = SPEC_OPERAND
    d = dynamic_gather(r, SPEC_INDICES, [1, 1, 2, 2], (2, 2, 3, 2, 2), **SPEC_DIMS)
    assert d.out.tolist() == SPEC_RESULT
    p = d.prov()
    # the clamp reads slice_sizes[start_index_map...] = slice_sizes[2], slice_sizes[1]
    assert Source(2, (2,), "index_read") in p.sources(0, (0, 0, 0, 0, 0))
    assert Source(2, (1,), "index_read") in p.sources(0, (0, 0, 0, 0, 0))


def test_dynamic_gather_slice_size_values_checked_at_run_time():
    operand = np.arange(12, dtype=np.int32).reshape(3, 4)
    idx = np.array([[0, 0]], np.int32)
    base = dict(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0, 1), index_vector_dim=1)
    ins = [operand, idx, np.array([2, 2], np.int64)]
    fails("C8", DG, ins, attrs(None, **base), [rtype((1, 2), np.int32)])
    ins = [operand, idx, np.array([1, 5], np.int64)]
    fails("C12", DG, ins, attrs(None, **base), [rtype((1, 5), np.int32)])
    ins = [operand, idx, np.array([1, 3], np.int64)]
    fails("C13", DG, ins, attrs(None, **base), [rtype((1, 2), np.int32)])
    ins = [operand, idx, np.array([1, 2, 3], np.int64)]
    fails("C11", DG, ins, attrs(None, **base), [rtype((1, 2), np.int32)])
    # a batching-dims rule, which only gather's section lists
    ins = [SPEC_OPERAND, SPEC_INDICES, np.array([1, 1, 2, 2], np.int64)]
    e = fails(None, DG, ins, attrs(None, **{**SPEC_DIMS, "start_indices_batching_dims": (3,)}),
              [rtype((2, 2, 3, 2, 2), np.int32)])
    assert "gather (C15)" in e.message


def test_quantized_operand_gathers_its_storage():
    q = QuantizedElementType(element_type("i8"), element_type("f32"), (0.5,), (0,), None)
    operand = np.arange(6, dtype=np.int8)
    (r,) = apply_op(G, [operand, np.array([[1]], np.int32)],
                    attrs((2,), offset_dims=(1,), start_index_map=(0,), index_vector_dim=1),
                    [tensor_type((1, 2), q)], [tensor_type((6,), q), rtype((1, 1), np.int32)])
    assert r.dtype == np.int8 and r.tolist() == [[1, 2]]


# --- every constraint ----------------------------------------------------------------------

OP = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
IDX = np.zeros((5, 2), np.int32)
OK = dict(offset_dims=(1, 2), collapsed_slice_dims=(0,), start_index_map=(0, 1), index_vector_dim=1)


def g_fails(constraint, result_shape=(5, 2, 2), slice_sizes=(1, 2, 2), operand=OP, idx=IDX,
            result_dtype=np.int32, **changes):
    dims = {**OK, **changes}
    return fails(constraint, G, [operand, idx], attrs(slice_sizes, **dims),
                 [rtype(result_shape, result_dtype)])


def test_valid_base_config():
    r = gather(OP, IDX, (5, 2, 2), (1, 2, 2), **OK)
    assert np.array_equal(r.out, np.broadcast_to(OP[0, 0:2, 0:2], (5, 2, 2)))


def test_constraint_errors():
    g_fails("C1", offset_dims=(1,))
    g_fails("C2", index_vector_dim=3)
    g_fails("C2", index_vector_dim=-1)
    g_fails("C3", start_index_map=(0,))
    g_fails("C3", idx=np.zeros((5,), np.int32), result_shape=(5, 2, 2))  # ivd = rank: size must be 1
    g_fails("C4", offset_dims=(2, 1))
    g_fails("C4", offset_dims=(1, 1))
    g_fails("C5", offset_dims=(1, 3))
    g_fails("C6", collapsed_slice_dims=(0,), operand_batching_dims=(0,), offset_dims=(1,))
    e = g_fails("C7", collapsed_slice_dims=(1, 0), offset_dims=(1,), slice_sizes=(1, 1, 2),
                result_shape=(5, 2))
    assert "[1, 0]" in e.message
    g_fails("C8", collapsed_slice_dims=(3,))
    g_fails("C9", slice_sizes=(2, 2, 2))
    idx3 = np.zeros((2, 2), np.int32)
    bat = dict(offset_dims=(1, 2), collapsed_slice_dims=(), operand_batching_dims=(0,),
               start_indices_batching_dims=(0,), start_index_map=(1,), index_vector_dim=1)
    gather(OP, np.zeros((2, 1), np.int32), (2, 2, 2), (1, 2, 2), **bat)  # valid with batching
    op4 = np.zeros((2, 2, 3, 4), np.int32)
    g_fails("C10", operand=op4, idx=np.zeros((2, 2, 1), np.int32), slice_sizes=(1, 1, 2, 2),
            result_shape=(2, 2, 2, 2), **{**bat, "operand_batching_dims": (1, 0),
                                           "start_indices_batching_dims": (0, 1), "index_vector_dim": 2,
                                           "start_index_map": (2,)})
    g_fails("C11", idx=np.zeros((2, 1), np.int32), **{**bat, "operand_batching_dims": (3,)})
    g_fails("C12", idx=np.zeros((2, 1), np.int32), slice_sizes=(2, 2, 2), **bat)
    g_fails("C13", operand=op4, idx=np.zeros((2, 2, 1), np.int32), slice_sizes=(1, 1, 2, 2),
            result_shape=(2, 2, 2, 2), **{**bat, "operand_batching_dims": (0, 1),
                                           "start_indices_batching_dims": (0, 0), "index_vector_dim": 2,
                                           "start_index_map": (2,)})
    g_fails("C14", idx=np.zeros((2, 1), np.int32), **{**bat, "start_indices_batching_dims": (2,)})
    g_fails("C15", idx=np.zeros((2, 1), np.int32), **{**bat, "start_indices_batching_dims": (1,)})
    g_fails("C16", idx=np.zeros((2, 1), np.int32), **{**bat, "start_indices_batching_dims": ()})
    g_fails("C17", idx=np.zeros((3, 1), np.int32), result_shape=(3, 2, 2), **bat)
    g_fails("C18", idx=np.zeros((2, 1), np.int32), **{**bat, "start_index_map": (0,)})
    g_fails("C18", start_index_map=(1, 1))
    g_fails("C19", start_index_map=(0, 3))
    g_fails("C20", slice_sizes=(1, 2))
    g_fails("C21", slice_sizes=(1, 2, 5), result_shape=(5, 2, 5))
    g_fails("C21", slice_sizes=(1, -1, 2), result_shape=(5, -1, 2))
    g_fails("C22", result_shape=(5, 2, 3))
    g_fails("C22", result_shape=(5, 2, 2, 1))
    g_fails("C23", result_dtype=np.int64)
    del idx3


def test_input_type_errors():
    fails("I2", G, [OP, IDX.astype(np.float32)], attrs((1, 2, 2), **OK), [rtype((5, 2, 2), np.int32)])
    fails("I2", G, [OP, IDX.astype(np.bool_)], attrs((1, 2, 2), **OK), [rtype((5, 2, 2), np.int32)])
    fails("I3", DG, [OP, IDX, np.array([[1, 2, 2]], np.int64)], attrs(None, **OK),
          [rtype((5, 2, 2), np.int32)])
    fails("I3", DG, [OP, IDX, np.array([1.0, 2, 2], np.float32)], attrs(None, **OK),
          [rtype((5, 2, 2), np.int32)])


def test_dynamic_gather_constraint_numbers():
    def dg_fails(constraint, result_shape=(5, 2, 2), result_dtype=np.int32, sizes=(1, 2, 2), **changes):
        ins = [OP, IDX, np.array(sizes, np.int64)]
        return fails(constraint, DG, ins, attrs(None, **{**OK, **changes}),
                     [rtype(result_shape, result_dtype)])
    dg_fails("C1", offset_dims=(1,))
    dg_fails("C2", index_vector_dim=3)
    dg_fails("C3", start_index_map=(0,))
    dg_fails("C4", offset_dims=(2, 1))
    dg_fails("C5", offset_dims=(1, 3))
    dg_fails("C6", collapsed_slice_dims=(1, 0), offset_dims=(1,), result_shape=(5, 2))
    dg_fails("C7", collapsed_slice_dims=(3,))
    dg_fails("C9", start_index_map=(1, 1))
    dg_fails("C10", start_index_map=(0, 3))
    dg_fails("C14", result_dtype=np.int64)


# --- hypothesis: random valid dimension numbers ------------------------------------------

INDEX_DTYPES = [np.int8, np.int32, np.int64, np.uint8, np.uint32, np.uint64, ml_dtypes.int4,
                ml_dtypes.uint4]


@st.composite
def gather_cases(draw):
    r_op = draw(st.integers(1, 4))
    oshape = tuple(draw(st.lists(st.integers(1, 4), min_size=r_op, max_size=r_op)))
    roles = draw(st.lists(st.sampled_from(["offset", "collapsed", "batching"]), min_size=r_op,
                          max_size=r_op))
    batching = [d for d in range(r_op) if roles[d] == "batching"]
    collapsed = [d for d in range(r_op) if roles[d] == "collapsed"]
    offset_operand = [d for d in range(r_op) if roles[d] == "offset"]
    candidates = [d for d in range(r_op) if d not in batching]
    sim = draw(st.permutations(candidates))
    sim = sim[:draw(st.integers(0, len(sim)))]
    n_extra = draw(st.integers(0, 2))
    n_batch = len(batching) + n_extra
    scalar = len(sim) == 1 and draw(st.booleans())
    rank_si = n_batch + (0 if scalar else 1)
    ivd = rank_si if scalar else draw(st.integers(0, rank_si - 1))
    non_ivd = [d for d in range(rank_si) if d != ivd]
    sib = draw(st.permutations(non_ivd))[:len(batching)]
    si_shape = [0] * rank_si
    for d in non_ivd:
        si_shape[d] = draw(st.integers(1, 3))
    for od, sd in zip(batching, sib):
        si_shape[sd] = oshape[od]
    if not scalar:
        si_shape[ivd] = len(sim)
    sizes = []
    for d in range(r_op):
        if roles[d] == "offset":
            sizes.append(draw(st.integers(0, oshape[d])))
        else:
            sizes.append(1)
    n_res = n_batch + len(offset_operand)
    offset_dims = sorted(draw(st.permutations(range(n_res)))[:len(offset_operand)])
    dims = dict(offset_dims=tuple(offset_dims), collapsed_slice_dims=tuple(collapsed),
                operand_batching_dims=tuple(batching), start_indices_batching_dims=tuple(sib),
                start_index_map=tuple(sim), index_vector_dim=ivd)
    batch_sizes = [si_shape[d] for d in non_ivd]
    off_sizes = [sizes[d] for d in offset_operand]
    rshape, bi, oi = [], iter(batch_sizes), iter(off_sizes)
    for d in range(n_res):
        rshape.append(next(oi) if d in offset_dims else next(bi))
    dtype = draw(st.sampled_from(INDEX_DTYPES))
    info = ml_dtypes.iinfo(dtype)
    lo, hi = max(int(info.min), -3), min(int(info.max), max(oshape) + 3)
    seed = draw(st.integers(0, 2**32 - 1))
    idx = np.random.default_rng(seed).integers(lo, hi + 1, size=si_shape).astype(dtype)
    operand = np.arange(int(np.prod(oshape)), dtype=np.int32).reshape(oshape)
    return operand, idx, tuple(rshape), tuple(sizes), dims


@given(gather_cases())
def test_matches_reference_and_provenance(case):
    operand, idx, rshape, sizes, dims = case
    r = gather(operand, idx, rshape, sizes, **dims)
    want, sources = reference_gather(operand, idx, rshape, sizes, **dims)
    assert r.out.shape == want.shape and np.array_equal(r.out, want)
    p = r.prov()
    for result_index, (operand_index, positions) in sources.items():
        got = p.sources(0, result_index)
        assert got[0] == Source(0, operand_index, "copy")
        # copy role: the value is the operand element it names
        assert r.out[result_index] == operand[got[0].index]
        assert [s.index for s in got[1:]] == positions
        assert all(s.operand == 1 and s.role == "index_read" for s in got[1:])
    # targets is the inverse of sources
    if operand.size:
        o = tuple(int(i) for i in np.unravel_index(operand.size // 2, operand.shape))
        want_t = {ri for ri, (oi, _) in sources.items() if oi == o}
        assert {t.index for t in p.targets(0, o) if t.role == "copy"} == want_t
        m = np.zeros(operand.shape, bool)
        m[o] = True
        fwd = p.fwd(0, m).get((0, "copy"), np.zeros(rshape, bool))
        assert set(map(tuple, np.argwhere(fwd))) == want_t
    # back of everything reads exactly the operand elements the reference names
    if r.out.size:
        back = p.back(0, np.ones(rshape, bool))
        hit = np.zeros(operand.shape, bool)
        for oi, _ in sources.values():
            hit[oi] = True
        assert np.array_equal(back[(0, "copy")], hit)
    # dynamic_gather agrees
    d = dynamic_gather(operand, idx, sizes, rshape, **dims)
    assert np.array_equal(d.out, r.out)


@given(gather_cases(), st.data())
def test_explain_agrees_with_values(case, data):
    operand, idx, rshape, sizes, dims = case
    if 0 in rshape:
        return
    r = gather(operand, idx, rshape, sizes, **dims)
    _, sources = reference_gather(operand, idx, rshape, sizes, **dims)
    ri = tuple(data.draw(st.integers(0, n - 1)) for n in rshape)
    e = r.explain(ri)
    steps = {s.name: s for s in e.steps}
    assert steps["operand_index"].value == sources[ri][0]
    assert e.value == r.out[ri] == operand[sources[ri][0]]
    raw = [int(idx[p]) for p in sources[ri][1]]
    assert steps["start_index"].value == tuple(raw)
    fs = steps["full_start_index"]
    if fs.before_clamp is not None:
        assert fs.before_clamp != fs.value
