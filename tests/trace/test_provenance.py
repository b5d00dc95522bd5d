"""The provenance data model (element and set queries) and the explain structure."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hlolab.errors import ExecutionError
from hlolab.interp.single import build_op, evaluate_op
from hlolab.ir.attrs import DenseArrayAttr, IntegerAttr
from hlolab.messages import Msg, text
from hlolab.ops.registry import TOKEN, OpCall, lookup
from hlolab.trace.explain import (
    DimRole,
    Explanation,
    Step,
    elementwise_explain,
    format_explanation,
    format_value,
)
from hlolab.trace.provenance import (
    ROLES,
    IndexMapProvenance,
    LazyProvenance,
    Link,
    Source,
    Target,
    broadcast_link,
    elementwise_provenance,
    index_link,
    unary_copy_provenance,
)
from hlolab.types import element_type, tensor_type


def mask(shape, *indices):
    m = np.zeros(shape, bool)
    for ix in indices:
        m[ix] = True
    return m


def lists(d: dict) -> dict:
    return {k: v.tolist() for k, v in d.items()}


def test_roles_are_the_design_roles():
    assert ROLES == ("copy", "combine", "window", "kernel", "pad_value", "init", "index_read", "update",
                     "selected", "control")


# --- IndexMapProvenance --------------------------------------------------------------

def transpose_like() -> IndexMapProvenance:
    """result (2, 3) = operand0 (3, 2) transposed, except result[1, 2] = operand1 () as padding."""
    rows, cols = np.indices((2, 3))
    copy_valid = ~((rows == 1) & (cols == 2))
    links = [index_link(0, "copy", (3, 2), (cols, rows), valid=copy_valid),
             index_link(1, "pad_value", (), (), valid=~copy_valid)]
    return IndexMapProvenance([(2, 3)], [(3, 2), ()], [links])


def test_index_map_sources_targets():
    p = transpose_like()
    assert p.sources(0, (0, 2)) == [Source(0, (2, 0), "copy")]
    assert p.sources(0, (1, 2)) == [Source(1, (), "pad_value")]
    assert p.targets(0, (1, 0)) == [Target(0, (0, 1), "copy")]
    assert p.targets(0, (2, 1)) == []  # its place holds the padding value
    assert p.targets(1, ()) == [Target(0, (1, 2), "pad_value")]


def test_index_map_back_fwd():
    p = transpose_like()
    back = p.back(0, mask((2, 3), (0, 1), (1, 2)))
    assert set(back) == {(0, "copy"), (1, "pad_value")}
    assert np.argwhere(back[(0, "copy")]).tolist() == [[1, 0]]
    assert back[(1, "pad_value")].shape == () and bool(back[(1, "pad_value")])
    assert p.back(0, mask((2, 3))) == {}  # nothing asked, nothing returned
    fwd = p.fwd(0, mask((3, 2), (2, 0), (2, 1)))
    assert list(fwd) == [(0, "copy")]
    assert np.argwhere(fwd[(0, "copy")]).tolist() == [[0, 2]]
    assert np.argwhere(p.fwd(1, np.array(True))[(0, "pad_value")]).tolist() == [[1, 2]]


def test_several_links_with_one_key_are_merged():
    flat_a = np.array([0, 1, -1], np.int64)
    flat_b = np.array([-1, 0, 2], np.int64)
    p = IndexMapProvenance([(3,)], [(3,)], [[Link(0, "window", flat_a), Link(0, "window", flat_b)]])
    assert p.sources(0, (1,)) == [Source(0, (1,), "window"), Source(0, (0,), "window")]
    assert p.back(0, mask((3,), 1))[(0, "window")].tolist() == [True, True, False]
    assert p.fwd(0, mask((3,), 0))[(0, "window")].tolist() == [True, True, False]
    assert p.targets(0, (0,)) == [Target(0, (0,), "window"), Target(0, (1,), "window")]


def test_implicit_operand_uses_its_frame():
    # conv-like: result element k reads implicit zero padding at frame position k+1 of a (4,) frame
    link = Link(None, "pad_value", np.array([1, -1, 3], np.int64), frame=(4,))
    p = IndexMapProvenance([(3,)], [(2,)], [[link]])
    assert p.sources(0, (2,)) == [Source(None, (3,), "pad_value")]
    assert p.back(0, np.ones(3, bool))[(None, "pad_value")].tolist() == [False, True, False, True]


def test_multiple_results_and_non_tensor_values():
    a = np.arange(6).reshape(2, 3)
    p = unary_copy_provenance(None, [a, TOKEN, np.zeros(4)], [a, TOKEN, np.zeros(4)])
    assert p.result_shapes == [(2, 3), None, (4,)] and p.operand_shapes == [(2, 3), None, (4,)]
    assert p.sources(2, (3,)) == [Source(2, (3,), "copy")]
    assert p.targets(0, (1, 1)) == [Target(0, (1, 1), "copy")]
    with pytest.raises(ExecutionError, match="not a tensor"):
        p.sources(1, ())
    with pytest.raises(ExecutionError, match="not a tensor"):
        p.back(1, np.array(True))
    p = unary_copy_provenance(None, [a], [a.astype(np.float32)])  # convert-like
    assert lists(p.fwd(0, mask((2, 3), (0, 2)))) == {(0, "copy"): mask((2, 3), (0, 2)).tolist()}


def test_elementwise_provenance_with_scalar_operand():
    x, lo = np.arange(6.0).reshape(2, 3), np.array(1.0)
    out = np.clip(x, lo, 4.0)
    p = elementwise_provenance(None, [lo, x, np.array(4.0)], [out])
    assert p.sources(0, (1, 2)) == [Source(0, (), "combine"), Source(1, (1, 2), "combine"),
                                    Source(2, (), "combine")]
    assert len(p.targets(0, ())) == 6 and p.targets(1, (0, 1)) == [Target(0, (0, 1), "combine")]
    back = p.back(0, mask((2, 3), (1, 0)))
    assert back[(1, "combine")].tolist() == mask((2, 3), (1, 0)).tolist()
    assert bool(back[(0, "combine")]) and bool(back[(2, "combine")])
    assert p.fwd(0, np.array(True))[(0, "combine")].all()


def test_elementwise_provenance_rejects_shapes_that_do_not_match():
    with pytest.raises(ExecutionError, match="does not map element-wise"):
        elementwise_provenance(None, [np.zeros(3), np.zeros(2)], [np.zeros(3)])


def test_index_link_forms():
    link = index_link(0, "copy", (4,), (np.array([3, 0, 9]),), valid=np.array([True, True, False]))
    assert link.flat_index.tolist() == [3, 0, -1] and link.flat_index.dtype == np.int64
    link = index_link(1, "init", (), (), result_shape=(2, 2))
    assert link.flat_index.tolist() == [[0, 0], [0, 0]]
    link = index_link(0, "copy", (0, 3), (np.zeros(2, np.int64), np.zeros(2, np.int64)),
                      valid=np.zeros(2, bool))
    assert link.flat_index.tolist() == [-1, -1]
    rows, cols = np.indices((2, 3), sparse=True)
    link = index_link(0, "copy", (3,), (cols,), result_shape=(2, 3))  # broadcast over rows
    assert link.flat_index.tolist() == [[0, 1, 2], [0, 1, 2]]
    assert broadcast_link(0, (3,), (2, 3), "combine").flat_index.tolist() == [[0, 1, 2], [0, 1, 2]]


def test_construction_is_validated():
    flat = np.zeros(3, np.int64)
    with pytest.raises(ValueError, match="unknown provenance role 'dilation'"):
        IndexMapProvenance([(3,)], [(3,)], [[Link(0, "dilation", flat)]])
    with pytest.raises(ValueError, match="int64 of shape"):
        IndexMapProvenance([(3,)], [(3,)], [[Link(0, "copy", flat.astype(np.int32))]])
    with pytest.raises(ValueError, match="outside"):
        IndexMapProvenance([(3,)], [(2,)], [[Link(0, "copy", np.array([0, 1, 2]))]])
    with pytest.raises(ValueError, match="links for 2 results"):
        IndexMapProvenance([(3,)], [(3,)], [[], []])


def test_bad_queries_are_hlolab_errors():
    p = transpose_like()
    for call, msg in [(lambda: p.sources(0, (2, 0)), r"index \(2, 0\) is out of range for shape \(2, 3\)"),
                      (lambda: p.sources(0, (-1, 0)), "out of range"),
                      (lambda: p.sources(0, (1,)), "out of range"),
                      (lambda: p.sources(3, (0, 0)), "result #3 does not exist"),
                      (lambda: p.targets(2, ()), "operand #2 does not exist"),
                      (lambda: p.back(0, np.ones((3, 2), bool)), "boolean mask of shape"),
                      (lambda: p.fwd(0, np.ones((3, 2), np.int8)), "boolean mask of shape")]:
        with pytest.raises(ExecutionError, match=msg):
            call()


# --- LazyProvenance ------------------------------------------------------------------

class RowSum(LazyProvenance):
    """result[i] = init + sum_j operand[i, j]: a toy fan-in op."""

    def sources(self, result, index):
        (i,) = index
        return [Source(0, (i, j), "window") for j in range(self.operand_shapes[0][1])] + \
               [Source(1, (), "init")]


def test_lazy_provenance_generic_queries():
    p = RowSum([(2,)], [(2, 3), ()])
    assert p.targets(0, (1, 2)) == [Target(0, (1,), "window")]
    assert p.targets(1, ()) == [Target(0, (0,), "init"), Target(0, (1,), "init")]
    back = p.back(0, mask((2,), 1))
    assert back[(0, "window")].tolist() == [[False] * 3, [True] * 3] and bool(back[(1, "init")])
    fwd = p.fwd(0, mask((2, 3), (0, 1)))
    assert lists(fwd) == {(0, "window"): [True, False]}
    assert p.fwd(1, np.array(True))[(0, "init")].tolist() == [True, True]
    with pytest.raises(ExecutionError):
        p.targets(0, (2, 0))


# --- shape ops: every query agrees with sources() and with the values -----------------

def arr(*v):
    return DenseArrayAttr("i64", tuple(v))


@st.composite
def shape_op_case(draw):
    """A random shape op on a small int32 tensor: (name, inputs, attrs, result shape)."""
    rank = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank)))
    x = np.arange(1, 1 + int(np.prod(shape)), dtype=np.int32).reshape(shape)
    kind = draw(st.sampled_from(["pad", "slice", "transpose", "reverse", "broadcast", "concat"]))
    dims = st.lists(st.integers(-2, 2), min_size=rank, max_size=rank)
    if kind == "pad":
        low, high = draw(dims), draw(dims)
        interior = draw(st.lists(st.integers(0, 2), min_size=rank, max_size=rank))
        def padded(low, high):
            return tuple(n + lo + max(n - 1, 0) * i + hi
                         for n, lo, hi, i in zip(shape, low, high, interior, strict=True))
        out = padded(low, high)
        if min(out) < 0:  # cropped below nothing: keep only the positive padding
            low, high = [max(v, 0) for v in low], [max(v, 0) for v in high]
            out = padded(low, high)
        return "stablehlo.pad", [x, np.array(-7, np.int32)], dict(
            edge_padding_low=arr(*low), edge_padding_high=arr(*high), interior_padding=arr(*interior)), out
    if kind == "slice":
        start = [draw(st.integers(0, n)) for n in shape]
        limit = [draw(st.integers(s, n)) for s, n in zip(start, shape, strict=True)]
        strides = draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank))
        out = tuple(-((s - lim) // k) for s, lim, k in zip(start, limit, strides, strict=True))
        return "stablehlo.slice", [x], dict(start_indices=arr(*start), limit_indices=arr(*limit),
                                            strides=arr(*strides)), out
    if kind == "transpose":
        perm = draw(st.permutations(range(rank)))
        return "stablehlo.transpose", [x], dict(permutation=arr(*perm)), tuple(shape[p] for p in perm)
    if kind == "reverse":
        d = draw(st.lists(st.integers(0, rank - 1), unique=True))
        return "stablehlo.reverse", [x], dict(dimensions=arr(*d)), shape
    if kind == "broadcast":
        out_rank = rank + draw(st.integers(0, 1))
        bdims = sorted(draw(st.permutations(range(out_rank)))[:rank])
        out = [2] * out_rank
        for d, rd in enumerate(bdims):
            out[rd] = shape[d] if shape[d] != 1 else draw(st.integers(1, 3))
        return "stablehlo.broadcast_in_dim", [x], dict(broadcast_dimensions=arr(*bdims)), tuple(out)
    d = draw(st.integers(0, rank - 1))
    y = -np.arange(1, 1 + int(np.prod(shape)), dtype=np.int32).reshape(shape)
    out = shape[:d] + (2 * shape[d],) + shape[d + 1:]
    return "stablehlo.concatenate", [x, y], dict(dimension=IntegerAttr(d, element_type("i64"))), out


@given(shape_op_case(), st.data())
def test_shape_op_queries_agree(case, data):
    name, inputs, attrs, out_shape = case
    op = build_op(name, inputs, attrs, [tensor_type(out_shape, "i32")])
    call = OpCall(op)
    outputs = evaluate_op(op, inputs, call)
    p = lookup(name).provenance(call, inputs, outputs)
    out = outputs[0]
    assert out.shape == out_shape
    sources = {ix: p.sources(0, ix) for ix in np.ndindex(*out.shape)}
    for ix, srcs in sources.items():  # one source each, holding the result's value
        (s,) = srcs
        assert out[ix] == inputs[s.operand][s.index]
        assert s.role == ("pad_value" if s.operand == 1 and name == "stablehlo.pad" else "copy")
    m = data.draw(st.lists(st.booleans(), min_size=out.size, max_size=out.size)) if out.size else []
    m = np.array(m, bool).reshape(out.shape)
    want: dict = {}
    for ix in np.argwhere(m):
        for s in sources[tuple(int(i) for i in ix)]:
            want.setdefault((s.operand, s.role), np.zeros(inputs[s.operand].shape, bool))[s.index] = True
    got = p.back(0, m)
    assert set(got) == set(want) and all(np.array_equal(got[k], want[k]) for k in want)
    for k, v in enumerate(inputs):  # fwd and targets are the inverse of sources
        om = np.ones(v.shape, bool)
        fwd = p.fwd(k, om)
        hit = np.zeros(out.shape, bool)
        for ix, srcs in sources.items():
            hit[ix] = any(s.operand == k for s in srcs)
        assert np.array_equal(sum(fwd.values(), np.zeros(out.shape, bool)), hit)
        for ix in list(np.ndindex(*v.shape))[:4]:
            want_t = sorted(r for r, srcs in sources.items() for s in srcs
                            if s.operand == k and s.index == ix)
            assert sorted(t.index for t in p.targets(k, ix)) == want_t


# --- explain -------------------------------------------------------------------------

def test_format_explanation_tree_and_elision():
    # a step reads: name = formula = the formula with numbers = value; children are elided
    children = [Step(f"update[{i}]", Msg("explain.element", name="scatter_indices", index="i"), i,
                     substituted=Msg("explain.element", name="%idx", index=str(i))) for i in range(11)]
    e = Explanation("stablehlo.scatter", (1, 0), [
        Step("update_scatter_dims", None, (0,), dim_roles={0: DimRole("batch"), 1: DimRole("window")}),
        Step("full_start_index", Msg("explain.apply", op="clamp", args="start_index"), (2, 0),
             before_clamp=(5, 0), children=children,
             substituted=Msg("explain.apply", op="clamp", args="5, 0")),
    ], np.float32(3.5), [Msg("explain.more", count=2)])
    out = format_explanation(e, max_children=3)
    assert out.splitlines() == [
        "scatter result[1, 0] = 3.5",
        "  1. update_scatter_dims = (0,)",
        "      dims: 0: batch, 1: window",
        "  2. full_start_index = clamp(start_index) = clamp(5, 0) = (2, 0)  (before clamp: (5, 0))",
        "    update[0] = scatter_indices[i] = %idx[0] = 0",
        "    update[1] = scatter_indices[i] = %idx[1] = 1",
        "    update[2] = scatter_indices[i] = %idx[2] = 2",
        "    … 8 more",
        "  note: … 2 more",
    ]
    assert e.result == 0 and Step("a", None, 1).children == []
    long = Step("x", Msg("explain.apply", op="f", args="a" * 60), 1, substituted=Msg("explain.apply", op="f",
                                                                                     args="1" * 60))
    lines = format_explanation(Explanation("stablehlo.add", (), [long], 1)).splitlines()
    assert lines[1:] == ["  1. x = f(" + "a" * 60 + ")", "       = f(" + "1" * 60 + ")", "       = 1"]


def test_format_value_forms():
    assert format_value(np.arange(3)) == "[0, 1, 2]"
    assert format_value(np.zeros((20, 20), np.float32)) == "<20x20 float32 tensor>"
    assert format_value((np.array(1), (2, 3))) == "(1, (2, 3))"
    assert format_value(np.array(2.5, np.float32)) == "2.5"


def test_elementwise_explain():
    x, y = np.array([[1, 2], [3, 4]], np.int32), np.array(10, np.int32)
    op = build_op("stablehlo.add", [x, y], None, [tensor_type((2, 2), "i32")])
    e = elementwise_explain(OpCall(op), [x, y], [x + y], 0, (1, 0))
    assert e.value == 13 and e.index == (1, 0) and e.op == "stablehlo.add"
    assert [(s.name, text(s.formula), text(s.substituted), int(s.value)) for s in e.steps] == [
        ("%arg0", "%arg0[1, 0]", "", 3), ("%arg1", "%arg1[]", "", 10),
        ("result[1, 0]", "add(%arg0, %arg1)", "add(3, 10)", 13)]
    with pytest.raises(ExecutionError, match="out of range"):
        elementwise_explain(OpCall(op), [x, y], [x + y], 0, (2, 0))
