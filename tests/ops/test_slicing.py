"""dynamic_slice and dynamic_update_slice: spec/XLA examples, clamping, constraints,
provenance (checked against the values) and explain."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hlolab.errors import VerificationError
from hlolab.interp.single import apply_op, build_op, evaluate_op
from hlolab.ir.attrs import DenseArrayAttr
from hlolab.ops.registry import OpCall, lookup
from hlolab.trace.explain import DimRole, format_explanation
from hlolab.trace.provenance import Source
from hlolab.types import QuantizedElementType, element_type, tensor_type

DS, DUS = "stablehlo.dynamic_slice", "stablehlo.dynamic_update_slice"


def sizes(*v: int) -> dict:
    return {"slice_sizes": DenseArrayAttr("i64", tuple(v))}


def s(v: int, dtype: Any = np.int64) -> np.ndarray:
    return np.array(v, dtype)


def run(name: str, inputs: list, attrs: dict | None, result_shape: tuple, elem: str | None = None):
    rt = tensor_type(result_shape, elem or str(element_type_of(inputs[0])))
    op = build_op(name, inputs, attrs, [rt])
    call = OpCall(op)
    out = evaluate_op(op, inputs, call)
    d = lookup(name)
    return out[0], d.provenance(call, inputs, out), (lambda idx: d.explain(call, inputs, out, 0, idx))


def element_type_of(a: np.ndarray):
    from hlolab.types import element_type_of_dtype
    return element_type_of_dtype(a.dtype)


def fails(constraint: str, name: str, inputs, attrs, result_types, operand_types=None) -> None:
    with pytest.raises(VerificationError) as info:
        apply_op(name, inputs, attrs, result_types, operand_types)
    assert info.value.constraint == constraint, info.value.message
    assert info.value.message.startswith(f"{name.removeprefix('stablehlo.')} ({constraint}): ")


# --- examples ------------------------------------------------------------------------

def test_spec_dynamic_slice():
    operand = np.array([[0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 0, 0], [0, 0, 0, 0]], np.int32)
    out, _, explain = run(DS, [operand, s(-1), s(3)], sizes(2, 2), (2, 2))
    assert out.tolist() == [[1, 1], [1, 1]] and out.dtype == np.int32
    e = explain((1, 0))
    steps = {st.name: st for st in e.steps}
    assert [st.name for st in e.steps] == ["result_index", "start_indices", "adjusted_start_indices",
                                           "operand_index", "result[result_index]"]
    assert steps["start_indices"].value == (-1, 3)
    clamp = steps["adjusted_start_indices"]
    assert clamp.value == (0, 2) and clamp.before_clamp == (-1, 3)
    assert clamp.formula.key == "slicing.adjusted_start_indices.formula"
    assert clamp.formula.args == {"sizes": "slice_sizes"}
    assert clamp.substituted.args == {"start_indices": [-1, 3], "shape": [4, 4], "sizes": [2, 2]}
    assert steps["operand_index"].value == (1, 2)
    assert steps["operand_index"].substituted.args == {"adjusted_start_indices": [0, 2],
                                                       "result_index": [1, 0]}
    assert steps["result[result_index]"].value == 1
    assert steps["result[result_index]"].substituted.args["index"] == "1, 2"
    (note,) = e.notes
    assert note.key == "slicing.note.clamped"
    assert note.args["dims"] == [0, 1] and note.args["before"] == [-1, 3] and note.args["after"] == [0, 2]
    assert "before clamp" in format_explanation(e)


def test_clamp_roles_describe_the_start_not_the_result_index():
    """Regression (a reader): the clamp's roles read as if the result index were clamped.
    The result index has roles of its own, first; clamped / in_range sit on the clamp of
    the start, adjusted_start_indices, with before_clamp."""
    operand = np.arange(16, dtype=np.int32).reshape(4, 4)
    _, _, explain = run(DS, [operand, s(1), s(3)], sizes(2, 2), (2, 2))
    e = explain((0, 1))
    first = e.steps[0]
    assert first.name == "result_index" and first.value == (0, 1)
    assert first.dim_roles == {0: DimRole("sliced"), 1: DimRole("sliced")}
    (clamp,) = [st for st in e.steps if st.before_clamp is not None]
    assert clamp.name == "adjusted_start_indices"
    assert clamp.value == (1, 2) and clamp.before_clamp == (1, 3)
    assert clamp.dim_roles == {0: DimRole("in_range"), 1: DimRole("clamped")}
    assert e.value == operand[1, 3]
    # the same for dynamic_update_slice: the result index is an operand index
    _, _, explain = run(DUS, [operand, np.zeros((2, 2), np.int32), s(-2), s(1)], None, (4, 4))
    e = explain((0, 2))
    assert e.steps[0].name == "result_index"
    assert e.steps[0].dim_roles == {0: DimRole("operand_dim", d=0), 1: DimRole("operand_dim", d=1)}
    (clamp,) = [st for st in e.steps if st.before_clamp is not None]
    assert clamp.name == "adjusted_start_indices"
    assert clamp.value == (0, 1) and clamp.before_clamp == (-2, 1)
    assert clamp.dim_roles == {0: DimRole("clamped"), 1: DimRole("in_range")}
    assert clamp.formula.args == {"sizes": "shape(update)"}


def test_spec_dynamic_update_slice():
    operand = np.array([[1, 1, 0, 0], [1, 1, 0, 0], [1, 1, 1, 1], [1, 1, 1, 1]], np.int32)
    update = np.ones((2, 2), np.int32)
    out, prov, explain = run(DUS, [operand, update, s(-1), s(3)], None, (4, 4))
    assert out.tolist() == [[1] * 4] * 4
    assert set(prov.sources(0, (0, 3))) == {Source(1, (0, 1), "copy"), Source(2, (), "index_read"),
                                            Source(3, (), "index_read")}
    assert prov.sources(0, (3, 0)) == [Source(0, (3, 0), "copy")]
    e = explain((1, 2))
    steps = {st.name: st for st in e.steps}
    assert steps["update_index"].value == (1, 0)
    assert steps["update_index"].substituted.args == {"result_index": [1, 2],
                                                      "adjusted_start_indices": [0, 2]}
    assert steps["0 <= update_index < shape(update)"].value is True
    result = steps["result[result_index]"]
    assert result.formula.args == {"name": "update", "index": "update_index"}
    assert result.substituted.args["index"] == "1, 0" and result.value == 1
    assert [n.key for n in e.notes] == ["slicing.note.clamped"]
    e = explain((3, 0))  # outside the window: the operand's element
    steps = {st.name: st for st in e.steps}
    assert steps["update_index"].value == (3, -2)
    assert steps["0 <= update_index < shape(update)"].value is False
    assert steps["result[result_index]"].formula.args == {"name": "operand", "index": "result_index"}
    assert steps["result[result_index]"].substituted.args["index"] == "3, 0"
    assert [n.key for n in e.notes] == ["slicing.note.clamped", "slicing.note.outside"]


def test_xla_dynamic_slice_examples():
    a = np.array([0.0, 1.0, 2.0, 3.0, 4.0], np.float32)
    out, _, _ = run(DS, [a, s(2)], sizes(2), (2,))
    assert out.tolist() == [2.0, 3.0]
    b = np.arange(12, dtype=np.float32).reshape(4, 3)
    out, _, _ = run(DS, [b, s(2), s(1)], sizes(2, 2), (2, 2))
    assert out.tolist() == [[7.0, 8.0], [10.0, 11.0]]


def test_xla_dynamic_update_slice_examples():
    a = np.array([0.0, 1.0, 2.0, 3.0, 4.0], np.float32)
    out, _, _ = run(DUS, [a, np.array([5.0, 6.0], np.float32), s(2)], None, (5,))
    assert out.tolist() == [0.0, 1.0, 5.0, 6.0, 4.0]
    b = np.arange(12, dtype=np.float32).reshape(4, 3)
    u = np.arange(12, 18, dtype=np.float32).reshape(3, 2)
    out, _, _ = run(DUS, [b, u, s(1), s(1)], None, (4, 3))
    assert out.tolist() == [[0, 1, 2], [3, 12, 13], [6, 14, 15], [9, 16, 17]]


# --- clamping and index types --------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.uint32, np.int64, np.uint64])
def test_start_index_types_and_clamping(dtype):
    x = np.arange(10, dtype=np.int16)
    big = np.iinfo(dtype).max  # far past the end: clamps to 10 - 3
    out, _, _ = run(DS, [x, s(big, dtype)], sizes(3), (3,))
    assert out.tolist() == [7, 8, 9]
    low = np.iinfo(dtype).min  # negative (or 0 for unsigned): clamps to 0
    out, _, _ = run(DS, [x, s(low, dtype)], sizes(3), (3,))
    assert out.tolist() == [0, 1, 2]
    out, _, _ = run(DUS, [x, np.array([-1, -2], np.int16), s(big, dtype)], None, (10,))
    assert out.tolist() == [0, 1, 2, 3, 4, 5, 6, 7, -1, -2]


def test_zero_size_slice_and_update_and_full_size():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out, prov, _ = run(DS, [x, s(5), s(-5)], sizes(0, 3), (0, 3))
    assert out.shape == (0, 3)
    out, _, _ = run(DUS, [x, np.zeros((2, 0), np.float32), s(1), s(1)], None, (2, 3))
    assert out.tolist() == x.tolist()
    out, _, explain = run(DS, [x, s(0), s(0)], sizes(2, 3), (2, 3))
    assert out.tolist() == x.tolist()
    e = explain((1, 1))
    assert [n.key for n in e.notes] == ["slicing.note.not_clamped"]
    clamp = {st.name: st for st in e.steps}["adjusted_start_indices"]
    assert clamp.before_clamp is None and clamp.dim_roles == {0: DimRole("in_range"), 1: DimRole("in_range")}


# --- constraints ---------------------------------------------------------------------

def t(shape, elem="i32"):
    return tensor_type(shape, elem)


def test_dynamic_slice_constraints():
    x = np.zeros((4, 4), np.int32)
    fails("C1", DS, [x, s(0), s(0)], sizes(2, 2), [t((2, 2), "f32")])
    fails("C2", DS, [x, s(0)], sizes(2, 2), [t((2, 2))])
    fails("C2", DS, [x, s(0), s(0)], sizes(2), [t((2,))])
    fails("C3", DS, [x, s(0), s(0, np.int32)], sizes(2, 2), [t((2, 2))])
    fails("C4", DS, [x, s(0), s(0)], sizes(5, 2), [t((5, 2))])
    fails("C4", DS, [x, s(0), s(0)], sizes(-1, 2), [t((2, 2))])
    fails("C5", DS, [x, s(0), s(0)], sizes(2, 2), [t((2, 3))])
    fails("I2", DS, [x, np.zeros((1,), np.int64), s(0)], sizes(2, 2), [t((2, 2))])
    fails("I2", DS, [x, s(0.0, np.float32), s(0)], sizes(2, 2), [t((2, 2))])


def test_dynamic_update_slice_constraints():
    x, u = np.zeros((4, 4), np.int32), np.zeros((2, 2), np.int32)
    fails("C1", DUS, [x, u, s(0), s(0)], None, [t((4, 5))])
    fails("C2", DUS, [x, u.astype(np.float32), s(0), s(0)], None, [t((4, 4))])
    fails("C3", DUS, [x, np.zeros((2,), np.int32), s(0), s(0)], None, [t((4, 4))])
    fails("C4", DUS, [x, u, s(0)], None, [t((4, 4))])
    fails("C5", DUS, [x, u, s(0), s(0, np.uint64)], None, [t((4, 4))])
    fails("C6", DUS, [x, np.zeros((5, 1), np.int32), s(0), s(0)], None, [t((4, 4))])
    fails("I3", DUS, [x, u, s(0), np.zeros((1,), np.int64)], None, [t((4, 4))])


def test_quantized_storage_moves_unchanged():
    q = QuantizedElementType(element_type("i8"), element_type("f32"), (0.5,), (0,), None)
    qt = tensor_type((4,), q)
    x = np.arange(4, dtype=np.int8)
    (r,) = apply_op(DS, [x, s(1)], sizes(2), [tensor_type((2,), q)], [qt, t((), "i64")])
    assert r.dtype == np.int8 and r.tolist() == [1, 2]
    (r,) = apply_op(DUS, [x, np.array([9, 8], np.int8), s(1)], None, [qt],
                    [qt, tensor_type((2,), q), t((), "i64")])
    assert r.dtype == np.int8 and r.tolist() == [0, 9, 8, 3]


def test_aliases():
    assert lookup("DynamicSlice").name == DS and lookup("DynamicUpdateSlice").name == DUS


# --- provenance agrees with values ---------------------------------------------------

@st.composite
def slicing_case(draw):
    rank = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 4)) for _ in range(rank))
    window = tuple(draw(st.integers(0, n)) for n in shape)
    starts = tuple(draw(st.integers(-3, 6)) for _ in shape)
    return shape, window, starts


@given(slicing_case())
def test_dynamic_slice_provenance_matches_values(case):
    shape, window, starts = case
    x = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    out, prov, explain = run(DS, [x, *(s(v) for v in starts)], sizes(*window), window)
    for idx in np.ndindex(*window):
        srcs = prov.sources(0, idx)
        (copy,) = [src for src in srcs if src.role == "copy"]
        assert out[idx] == x[copy.index]
        assert {src.operand for src in srcs if src.role == "index_read"} == set(range(1, len(shape) + 1))
        assert any(tg.index == idx for tg in prov.targets(0, copy.index))
        assert explain(idx).value == out[idx]
    full = np.ones(window, bool)
    back = prov.back(0, full)
    if out.size:
        assert back[(0, "copy")].sum() == out.size
        assert prov.fwd(0, back[(0, "copy")])[(0, "copy")].all()


@given(slicing_case())
def test_dynamic_update_slice_provenance_matches_values(case):
    shape, window, starts = case
    x = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    u = -1 - np.arange(int(np.prod(window)), dtype=np.int32).reshape(window)
    out, prov, explain = run(DUS, [x, u, *(s(v) for v in starts)], None, shape)
    for idx in np.ndindex(*shape):
        srcs = prov.sources(0, idx)
        (copy,) = [src for src in srcs if src.role == "copy"]
        value = (x if copy.operand == 0 else u)[copy.index]
        assert out[idx] == value
        reads = [src for src in srcs if src.role == "index_read"]
        assert len(reads) == (len(shape) if copy.operand == 1 else 0)
        assert explain(idx).value == out[idx]
    # targets is the inverse of sources
    for idx in np.ndindex(*window):
        for tg in prov.targets(1, idx):
            assert Source(1, idx, "copy") in prov.sources(0, tg.index)
    assert prov.fwd(1, np.ones(window, bool)).get((0, "copy"), np.zeros(shape, bool)).sum() == u.size


# --- records and result type inference ---------------------------------------------------

def test_dynamic_slice_infers_slice_sizes_with_the_operand_element():
    from hlolab.ops.record import InferError
    from hlolab.ops.slicing import DynamicSliceAttrs, infer_dynamic_slice
    rec = DynamicSliceAttrs(slice_sizes=(2, 0))
    i64 = tensor_type((), "i64")
    got = infer_dynamic_slice(rec, [tensor_type((4, None), "bf16"), i64, i64])
    assert got == [tensor_type((2, 0), "bf16")]
    for operand, c in ((tensor_type((4,), "f32"), "C2"), (tensor_type((1, 3), "f32"), "C4")):
        with pytest.raises(InferError) as info:
            infer_dynamic_slice(rec, [operand, i64, i64])
        assert info.value.constraint == c
    assert rec.to_ir() == sizes(2, 0)


def test_dynamic_update_slice_infers_the_operand_type():
    from hlolab.ops.slicing import infer_dynamic_update_slice
    t = tensor_type((4, None), "i8")
    assert infer_dynamic_update_slice(lookup(DUS).attrs(), [t, tensor_type((2, 2), "i8")]) == [t]
