"""Every worked example with numbers in the four XLA "Operation Semantics" documents
(../shared/seeds/000 English, 001 English later revision, 002 Chinese, 004 Spanish),
written with hlolab.xla and asserting the documents' numbers exactly.

Each test is named after the document section; the docstring says which documents
carry the example. The numbers are the documents' facts; the code is ours.
"""

from __future__ import annotations

import numpy as np
import pytest

from hlolab.ir.parser import parse_module
from hlolab.xla import (
    F32,
    S32,
    Broadcast,
    Clamp,
    Collapse,
    Concatenate,
    ConcatInDim,
    ConstantLiteral,
    ConstantR0,
    ConstantR1,
    ConstantR2,
    ConvertElementType,
    CreateScalarAddComputation,
    CreateScalarGeComputation,
    CreateScalarLtComputation,
    CreateScalarMaxComputation,
    CreateScalarMinComputation,
    DotDimensionNumbers,
    DotGeneral,
    DynamicSlice,
    DynamicUpdateSlice,
    Gather,
    GatherDimensionNumbers,
    GetTupleElement,
    Iota,
    Parameter,
    Reduce,
    ReduceWindow,
    Reshape,
    Select,
    SelectAndScatter,
    Shape,
    Slice,
    Sort,
    Tuple,
    While,
    XlaBuilder,
    XlaOp,
)


def run(root, *args):
    """Build ``root`` (an XlaOp or a list), check the printed module parses back equal, run."""
    b = (root if isinstance(root, XlaOp) else root[0]).builder
    comp = b.build(root)
    assert parse_module(comp.as_text()) == comp.module
    return comp.run(*args)


def one(root, *args) -> np.ndarray:
    (out,) = run(root, *args)
    return out


def exact(got: np.ndarray, want, dtype) -> None:
    want = np.asarray(want, dtype=dtype)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


# f32[4x2x3] of the Collapse and Reshape sections (000, 001, 002, 004)
V = [[[10, 11, 12], [15, 16, 17]],
     [[20, 21, 22], [25, 26, 27]],
     [[30, 31, 32], [35, 36, 37]],
     [[40, 41, 42], [45, 46, 47]]]

# the 1-D and 2-D operands of the Slice / DynamicSlice / DynamicUpdateSlice sections
A = [0.0, 1.0, 2.0, 3.0, 4.0]
B = [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0], [9.0, 10.0, 11.0]]


def test_broadcast():
    """000/001/002/004 Broadcast: a scalar 2.0 broadcast to {2, 3}."""
    b = XlaBuilder("broadcast")
    out = one(Broadcast(ConstantR0(b, 2.0), [2, 3]))
    exact(out, np.full((2, 3), 2.0), np.float32)


@pytest.mark.parametrize("dims, want_shape", [((0, 1, 2), (24,)), ((0, 1), (8, 3)), ((1, 2), (4, 6))])
def test_collapse(dims, want_shape):
    """000/001/002/004 Collapse: v012 = f32[24], and the f32[4x6] and f32[8x3] arrays the
    documents print, all in v's row-major order. The documents label the 4x6 result {0,1}
    and the 8x3 one {1,2}, which contradicts their own rule (the collapsed dims are replaced
    by one dim, in their place, of the product size: {0,1} of [4,2,3] is [8,3]) and XLA's
    Collapse; the arrays are paired with the dims by that rule."""
    b = XlaBuilder("collapse")
    out = one(Collapse(ConstantLiteral(b, V, F32), dims))
    flat = [10, 11, 12, 15, 16, 17, 20, 21, 22, 25, 26, 27, 30, 31, 32, 35, 36, 37, 40, 41, 42, 45, 46, 47]
    exact(out, np.reshape(flat, want_shape), np.float32)


def test_concatenate_1d():
    """000/001/002/004 Concatenate: {2, 3}, {4, 5}, {6, 7} along 0 give {2, 3, 4, 5, 6, 7}."""
    b = XlaBuilder("concat")
    parts = [ConstantR1(b, p, S32) for p in ([2, 3], [4, 5], [6, 7])]
    exact(one(Concatenate(parts, 0)), [2, 3, 4, 5, 6, 7], np.int32)


def test_concatenate_2d():
    """000/001/002/004 Concatenate: a (3x2) above b (1x2)."""
    b = XlaBuilder("concat")
    x = ConstantR2(b, [[1, 2], [3, 4], [5, 6]], S32)
    y = ConstantR2(b, [[7, 8]], S32)
    exact(one(ConcatInDim(b, [x, y], 0)), [[1, 2], [3, 4], [5, 6], [7, 8]], np.int32)


def test_clamp():
    """002/004 Clamp with scalar min 0 and max 6: {-1, 5, 9} -> {0, 5, 6}."""
    b = XlaBuilder("clamp")
    out = one(Clamp(ConstantR0(b, 0, S32), ConstantR1(b, [-1, 5, 9], S32), ConstantR0(b, 6, S32)))
    exact(out, [0, 5, 6], np.int32)


def test_clamp_001():
    """001 Clamp writes the operand {1, 5, 9} but keeps the result {0, 5, 6}, an erratum: by its
    own rule min(max(0, 1), 6) = 1, so the result is {1, 5, 6}."""
    b = XlaBuilder("clamp")
    out = one(Clamp(ConstantR0(b, 0, S32), ConstantR1(b, [1, 5, 9], S32), ConstantR0(b, 6, S32)))
    exact(out, [1, 5, 6], np.int32)


def test_convert_element_type():
    """000/001/002/004 ConvertElementType: s32 {0, 1, 2} -> f32 {0.0, 1.0, 2.0}."""
    b = XlaBuilder("convert")
    exact(one(ConvertElementType(ConstantR1(b, [0, 1, 2], S32), F32)), [0.0, 1.0, 2.0], np.float32)


def test_dot_general_contracting():
    """002/004 DotGeneral: contracting dim 1 of both 2x3 operands gives {{6, 12}, {15, 30}}."""
    b = XlaBuilder("dot")
    lhs = ConstantR2(b, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], F32)
    rhs = ConstantR2(b, [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]], F32)
    dn = DotDimensionNumbers(lhs_contracting_dimensions=[1], rhs_contracting_dimensions=[1])
    exact(one(DotGeneral(lhs, rhs, dn)), [[6.0, 12.0], [15.0, 30.0]], np.float32)


def test_dot_general_batch():
    """002/004 DotGeneral with batch dims: two 2x2 matrices times the identity."""
    b = XlaBuilder("dot")
    m = [[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]]
    lhs = ConstantLiteral(b, m, F32)
    rhs = ConstantLiteral(b, [np.eye(2), np.eye(2)], F32)
    dn = DotDimensionNumbers(lhs_contracting_dimensions=[2], rhs_contracting_dimensions=[1],
                             lhs_batch_dimensions=[0], rhs_batch_dimensions=[0])
    exact(one(DotGeneral(lhs, rhs, dn)), m, np.float32)


def test_dynamic_slice_1d():
    """000/001/002/004 DynamicSlice: a at {2} size {2} -> {2.0, 3.0} (start as one rank-1 XlaOp,
    as the documents pass it, and as scalars)."""
    b = XlaBuilder("ds")
    a = ConstantR1(b, A, F32)
    exact(one(DynamicSlice(a, ConstantR1(b, [2], S32), [2])), [2.0, 3.0], np.float32)
    b = XlaBuilder("ds")
    a = ConstantR1(b, A, F32)
    exact(one(DynamicSlice(a, [ConstantR0(b, 2, S32)], [2])), [2.0, 3.0], np.float32)


def test_dynamic_slice_2d():
    """000/001/002/004 DynamicSlice: b at {2, 1} size {2, 2} -> {{7, 8}, {10, 11}}."""
    b = XlaBuilder("ds")
    x = ConstantR2(b, B, F32)
    s = Parameter(b, 0, "s32[2]", "s")
    exact(one(DynamicSlice(x, s, [2, 2]), np.array([2, 1], np.int32)), [[7.0, 8.0], [10.0, 11.0]],
          np.float32)


def test_dynamic_update_slice_1d():
    """000/001/002/004 DynamicUpdateSlice: {5, 6} written into a at {2}."""
    b = XlaBuilder("dus")
    out = one(DynamicUpdateSlice(ConstantR1(b, A, F32), ConstantR1(b, [5.0, 6.0], F32),
                                 [ConstantR0(b, 2, S32)]))
    exact(out, [0.0, 1.0, 5.0, 6.0, 4.0], np.float32)


def test_dynamic_update_slice_2d():
    """000/001/002/004 DynamicUpdateSlice: a 3x2 update written into b at {1, 1}."""
    b = XlaBuilder("dus")
    u = ConstantR2(b, [[12.0, 13.0], [14.0, 15.0], [16.0, 17.0]], F32)
    out = one(DynamicUpdateSlice(ConstantR2(b, B, F32), u, ConstantR1(b, [1, 1], S32)))
    exact(out, [[0.0, 1.0, 2.0], [3.0, 12.0, 13.0], [6.0, 14.0, 15.0], [9.0, 16.0, 17.0]], np.float32)


def test_get_tuple_element():
    """000/001/002/004 Tuple and GetTupleElement: element 1 of tuple(v, s) is s = 5."""
    b = XlaBuilder("tuple")
    v = ConstantR1(b, list(range(10)), F32)
    t = Tuple(b, [v, ConstantR0(b, 5, S32)])
    assert str(t.shape()) == "(f32[10], s32[])"
    exact(one(GetTupleElement(t, 1)), 5, np.int32)
    exact(one(GetTupleElement(t, 0)), np.arange(10), np.float32)


def test_iota():
    """004 Iota: Iota(s32[4, 8], 0) counts down the rows, Iota(s32[4, 8], 1) along them;
    002 Iota(type, size): a rank-1 count."""
    b = XlaBuilder("iota")
    exact(one(Iota(b, Shape.parse("s32[4,8]"), 0)), np.repeat(np.arange(4)[:, None], 8, 1), np.int32)
    b = XlaBuilder("iota")
    exact(one(Iota(b, "s32[4,8]", 1)), np.repeat(np.arange(8)[None, :], 4, 0), np.int32)
    b = XlaBuilder("iota")
    exact(one(Iota(b, S32, 5)), [0, 1, 2, 3, 4], np.int32)


def _cube(b: XlaBuilder) -> XlaOp:
    """The Reduce section's 3D array: 1..6 as [[1, 2, 3], [4, 5, 6]], replicated 4 times."""
    return ConstantLiteral(b, [[[1, 2, 3], [4, 5, 6]]] * 4, F32)


@pytest.mark.parametrize("dims, want", [
    ([0], [[4, 8, 12], [16, 20, 24]]),  # 001/004 (000 prints the first row twice, an erratum)
    ([2], [[6, 15]] * 4),
    ([0, 1], [20, 28, 36]),
    ([0, 1, 2], 84),
])
def test_reduce(dims, want):
    """000/001/002/004 Reduce: add-reductions of the 4x2x3 array over various dims."""
    b = XlaBuilder("reduce")
    out = one(Reduce(_cube(b), ConstantR0(b, 0.0, F32), CreateScalarAddComputation(F32), dims))
    exact(out, want, np.float32)


@pytest.mark.parametrize("padding, want", [("VALID", [100, 1]), ("SAME", [1000, 10, 1])])
def test_reduce_window(padding, want):
    """004 ReduceWindow: min over windows of 3 with stride 2 of {10000, 1000, 100, 10, 1}, init
    the largest float; VALID gives {100, 1}, SAME pads one element each side: {1000, 10, 1}."""
    b = XlaBuilder("reduce_window")
    x = ConstantR1(b, [10000, 1000, 100, 10, 1], F32)
    init = ConstantR0(b, np.finfo(np.float32).max, F32)
    out = one(ReduceWindow(x, init, CreateScalarMinComputation(F32), [3], [2], padding))
    exact(out, want, np.float32)


def test_reduce_window_max_2x3():
    """000/001/002/004 ReduceWindow: max over [2x3] windows with stride [2x3] of an f32[4x6]
    parameter, init the lowest float: a [2x2] result (the documents give its shape)."""
    b = XlaBuilder("reduce_window_2x3")
    x = Parameter(b, 0, Shape.array_shape(F32, [4, 6]), "input")
    init = ConstantR0(b, np.finfo(np.float32).min, F32)
    r = ReduceWindow(x, init, CreateScalarMaxComputation(F32), [2, 3], [2, 3], "VALID")
    assert str(r.shape()) == "f32[2,2]"
    data = np.arange(24, dtype=np.float32).reshape(4, 6)
    exact(one(r, data), [[8, 11], [20, 23]], np.float32)


@pytest.mark.parametrize("dims, sizes, want", [
    ([0, 1, 2], [24], [10, 11, 12, 15, 16, 17, 20, 21, 22, 25, 26, 27,
                       30, 31, 32, 35, 36, 37, 40, 41, 42, 45, 46, 47]),
    ([0, 1, 2], [8, 3], [[10, 11, 12], [15, 16, 17], [20, 21, 22], [25, 26, 27],
                         [30, 31, 32], [35, 36, 37], [40, 41, 42], [45, 46, 47]]),
    ([1, 2, 0], [24], [10, 20, 30, 40, 11, 21, 31, 41, 12, 22, 32, 42,
                       15, 25, 35, 45, 16, 26, 36, 46, 17, 27, 37, 47]),
    ([1, 2, 0], [8, 3], [[10, 20, 30], [40, 11, 21], [31, 41, 12], [22, 32, 42],
                         [15, 25, 35], [45, 16, 26], [36, 46, 17], [27, 37, 47]]),
    ([1, 2, 0], [2, 6, 2], [[[10, 20], [30, 40], [11, 21], [31, 41], [12, 22], [32, 42]],
                            [[15, 25], [35, 45], [16, 26], [36, 46], [17, 27], [37, 47]]]),
])
def test_reshape(dims, sizes, want):
    """000/001/002/004 Reshape: in-order and out-of-order collapses of v."""
    b = XlaBuilder("reshape")
    exact(one(Reshape(ConstantLiteral(b, V, F32), dims, sizes)), want, np.float32)


def test_reshape_scalar():
    """000/001/002/004 Reshape: f32[1x1] {{5}} to a scalar and back."""
    b = XlaBuilder("reshape")
    exact(one(Reshape(ConstantR2(b, [[5]], F32), [0, 1], [])), 5, np.float32)
    b = XlaBuilder("reshape")
    exact(one(Reshape(ConstantR0(b, 5, F32), [], [1, 1])), [[5]], np.float32)


def test_select():
    """000/001/002/004 Select with a PRED[4] and with a scalar pred."""
    b = XlaBuilder("select")
    v1, v2 = ConstantR1(b, [1, 2, 3, 4], S32), ConstantR1(b, [100, 200, 300, 400], S32)
    pred = ConstantR1(b, [True, False, False, True])
    exact(one(Select(pred, v1, v2)), [1, 200, 300, 4], np.int32)
    b = XlaBuilder("select")
    v1, v2 = ConstantR1(b, [1, 2, 3, 4], S32), ConstantR1(b, [100, 200, 300, 400], S32)
    exact(one(Select(ConstantR0(b, True), v1, v2)), [1, 2, 3, 4], np.int32)


def test_select_and_scatter():
    """000/001/002/004 SelectAndScatter: with max as select and add as scatter, an element (9)
    that two overlapping windows select receives both source values, 2 + 6 = 8."""
    b = XlaBuilder("sas")
    operand = ConstantR2(b, [[1, 9, 1], [1, 1, 1]], F32)
    source = ConstantR2(b, [[2, 6]], F32)
    ge = CreateScalarGeComputation([F32])
    out = one(SelectAndScatter(operand, ge, [2, 2], [1, 1], "VALID", source, ConstantR0(b, 0.0, F32),
                               CreateScalarAddComputation(F32)))
    exact(out, [[0, 8, 0], [0, 0, 0]], np.float32)


def test_slice():
    """000/001/002/004 Slice: a[{2}:{4}] = {2, 3}; b[{2, 1}:{4, 3}] = {{7, 8}, {10, 11}}."""
    b = XlaBuilder("slice")
    exact(one(Slice(ConstantR1(b, A, F32), [2], [4], [1])), [2.0, 3.0], np.float32)
    b = XlaBuilder("slice")
    exact(one(Slice(ConstantR2(b, B, F32), [2, 1], [4, 3], [1, 1])), [[7.0, 8.0], [10.0, 11.0]], np.float32)


def test_sort_key_value():
    """002 Sort(keys, values): keys [3, 1] and values [42, 50] give ([1, 3], [50, 42])."""
    b = XlaBuilder("sort")
    keys, values = ConstantR1(b, [3, 1], S32), ConstantR1(b, [42, 50], S32)
    k, v = Sort([keys, values], CreateScalarLtComputation([S32, S32]))
    ks, vs = run([k, v])
    exact(ks, [1, 3], np.int32)
    exact(vs, [50, 42], np.int32)


def test_sort_three_operands():
    """004 Sort with three operands compared on the first: ([1, 3], [50, 42], [1.1, -3.0])."""
    b = XlaBuilder("sort")
    ops = [ConstantR1(b, [3, 1], S32), ConstantR1(b, [42, 50], S32), ConstantR1(b, [-3.0, 1.1], F32)]
    out = run(list(Sort(ops, CreateScalarLtComputation([S32, S32, F32]))))
    exact(out[0], [1, 3], np.int32)
    exact(out[1], [50, 42], np.int32)
    exact(out[2], [1.1, -3.0], np.float32)


def _while_computations(vector_shape: str):
    cond = XlaBuilder("condition")
    i = Parameter(cond, 0, "s32[]", "i")
    Parameter(cond, 1, vector_shape, "v")
    from hlolab.xla import Lt

    cond_c = cond.build(Lt(i, ConstantR0(cond, 1000, S32)))
    body = XlaBuilder("body")
    i = Parameter(body, 0, "s32[]", "i")
    v = Parameter(body, 1, vector_shape, "v")
    body_c = body.build([i + 1, v + ConstantR1(body, [1.0] * 10, F32)])
    return cond_c, body_c


def test_while():
    """000/001/002/004 While: a counter and an f32[10] accumulator; while the counter is below
    1000 it is incremented and a constant vector (here ones) is added: (1000, 1000.0 * 10)."""
    cond_c, body_c = _while_computations("f32[10]")
    b = XlaBuilder("main")
    init = [ConstantR0(b, 0, S32), ConstantR1(b, [0.0] * 10, F32)]
    n, acc = While(cond_c, body_c, init)
    got_n, got_acc = run([n, acc])
    exact(got_n, 1000, np.int32)
    exact(got_acc, [1000.0] * 10, np.float32)


def test_gather_rows():
    """004 Gather as tf.gather_nd: slice_sizes [1, 11] make each index X pick a whole row of a
    [16, 11] operand; the output is those rows one after another."""
    b = XlaBuilder("gather")
    operand = Iota(b, "s32[16,11]", 0) * 100 + Iota(b, "s32[16,11]", 1)
    idx = ConstantR2(b, [[3], [0], [15], [7], [3]], S32)
    dn = GatherDimensionNumbers(offset_dims=[1], collapsed_slice_dims=[0], start_index_map=[0],
                                index_vector_dim=1)
    out = one(Gather(operand, idx, dn, slice_sizes=[1, 11]))
    rows = np.arange(16)[:, None] * 100 + np.arange(11)[None, :]
    exact(out, rows[[3, 0, 15, 7, 3]], np.int32)


def test_gather_batched_windows():
    """002/004 Gather: 5 slices of shape [8, 6] out of a [16, 11] operand at (X, Y) index vectors
    of an S64[5, 2] array; output[G, O0, O1] = operand[X + O0, Y + O1]."""
    b = XlaBuilder("gather")
    operand = Iota(b, "s32[16,11]", 0) * 100 + Iota(b, "s32[16,11]", 1)
    starts = [[0, 0], [8, 5], [2, 3], [4, 1], [7, 0]]
    idx = ConstantR2(b, starts, "s64")
    out = one(Gather(operand, idx, offset_dims=[1, 2], collapsed_slice_dims=[], start_index_map=[0, 1],
                     index_vector_dim=1, slice_sizes=[8, 6]))
    full = np.arange(16)[:, None] * 100 + np.arange(11)[None, :]
    want = np.stack([full[x:x + 8, y:y + 6] for x, y in starts])
    exact(out, want, np.int32)


def test_while_tuple_state():
    """000/001/002/004 While, with the loop state one tuple (s32, f32[10]) as the documents
    write it: (1000, 1000.0 * 10)."""
    state = "(s32[], f32[10])"
    cb = XlaBuilder("condition")
    t = Parameter(cb, 0, state, "t")
    from hlolab.xla import Lt

    cond = cb.build(Lt(GetTupleElement(t, 0), ConstantR0(cb, 1000, S32)))
    bb = XlaBuilder("body")
    t = Parameter(bb, 0, state, "t")
    body = bb.build(Tuple(bb, [GetTupleElement(t, 0) + 1,
                               GetTupleElement(t, 1) + ConstantR1(bb, [1.0] * 10, F32)]))
    b = XlaBuilder("main")
    result = While(cond, body, Tuple(b, [ConstantR0(b, 0, S32), ConstantR1(b, [0.0] * 10, F32)]))
    n, acc = run([GetTupleElement(result, 0), GetTupleElement(result, 1)])
    exact(n, 1000, np.int32)
    exact(acc, [1000.0] * 10, np.float32)


def test_reduce_variadic_argmax():
    """004 Reduce, variadic: f(max, argmax, value, index) keeps (value, index) when value >= max,
    applied to values V and their iota indices K gives the maximum and where it is."""
    fb = XlaBuilder("f")
    m, am = Parameter(fb, 0, "f32[]", "max"), Parameter(fb, 1, "s32[]", "argmax")
    v, k = Parameter(fb, 2, "f32[]", "value"), Parameter(fb, 3, "s32[]", "index")
    from hlolab.xla import Ge

    take = Ge(v, m)
    f = fb.build([Select(take, v, m), Select(take, k, am)])
    b = XlaBuilder("argmax")
    values = ConstantR1(b, [2.0, 9.0, -1.0, 4.0, 9.0, 0.5], F32)
    best, where = Reduce([values, Iota(b, S32, 6)],
                         [ConstantR0(b, -np.inf, F32), ConstantR0(b, 0, S32)], f, [0])
    got_best, got_where = run([best, where])
    exact(got_best, 9.0, np.float32)
    assert int(got_where) in (1, 4)  # a tie: which one the order of application decides


def _conv_operands(b: XlaBuilder):
    img = np.arange(1, 1 + 2 * 7 * 6, dtype=np.float32).reshape(1, 2, 7, 6) % 5
    ker = np.arange(3 * 2 * 2 * 3, dtype=np.float32).reshape(3, 2, 2, 3) % 3 - 1
    return img, ker, ConstantLiteral(b, img), ConstantLiteral(b, ker)


def test_conv_with_general_padding_is_padding_the_input():
    """000/001/002/004 ConvWithGeneralPadding: padding (2, 3) in a spatial dimension is the same
    as putting 2 zeros before and 3 after in the input (negative padding removes elements),
    and a stride of 3 places windows only at indices divisible by 3 (small integers: exact)."""
    from hlolab.xla import Conv, ConvWithGeneralPadding, Pad

    b = XlaBuilder("conv")
    _, _, lhs, rhs = _conv_operands(b)
    padded = one(ConvWithGeneralPadding(lhs, rhs, [1, 1], [(-1, 0), (2, 3)]))
    b = XlaBuilder("conv")
    _, _, lhs, rhs = _conv_operands(b)
    by_hand = one(Conv(Pad(lhs, 0.0, low=[0, 0, -1, 2], high=[0, 0, 0, 3]), rhs, [1, 1], "VALID"))
    exact(padded, by_hand, np.float32)
    b = XlaBuilder("conv")
    _, _, lhs, rhs = _conv_operands(b)
    strided = one(ConvWithGeneralPadding(lhs, rhs, [3, 1], [(0, 0), (0, 0)]))
    b = XlaBuilder("conv")
    _, _, lhs, rhs = _conv_operands(b)
    every = one(Conv(lhs, rhs, [1, 1], "VALID"))
    exact(strided, every[:, :, ::3, :], np.float32)


def test_conv_general_dilated_holes():
    """000/001/002/004 ConvGeneralDilated: an lhs dilation d puts d - 1 holes (zeros) between the
    input's elements; an rhs dilation does the same to the kernel."""
    from hlolab.xla import Conv, ConvGeneralDilated, Pad

    b = XlaBuilder("conv")
    _, ker, lhs, rhs = _conv_operands(b)
    dilated = one(ConvGeneralDilated(lhs, rhs, [1, 1], [(0, 0), (0, 0)], [2, 1], [1, 2]))
    b = XlaBuilder("conv")
    _, _, lhs, _ = _conv_operands(b)
    holes_in = Pad(lhs, 0.0, interior=[0, 0, 1, 0])
    holes_ker = np.zeros((3, 2, 2, 5), np.float32)
    holes_ker[..., ::2] = ker
    by_hand = one(Conv(holes_in, ConstantLiteral(b, holes_ker), [1, 1], "VALID"))
    exact(dilated, by_hand, np.float32)


OPERAND6 = (2, 2, 2, 3, 4, 5)  # dims 1, 3, 4, 5 of distinct sizes 2, 3, 4, 5


def test_gather_expand_offset_dims():
    """002/004 Gather: with 4 offset dims, operand rank 6 and collapsed_slice_dims {0, 2},
    expand_offset_dims is {0->1, 1->3, 2->4, 3->5}: the output's offset dims are operand dims
    1, 3, 4, 5 of the slice starting at the index vector."""
    b = XlaBuilder("gather")
    data = np.arange(np.prod(OPERAND6), dtype=np.int32).reshape(OPERAND6)
    out = one(Gather(ConstantLiteral(b, data), ConstantR2(b, [[1, 1]], S32), offset_dims=[1, 2, 3, 4],
                     collapsed_slice_dims=[0, 2], start_index_map=[0, 2], index_vector_dim=1,
                     slice_sizes=[1, 2, 1, 3, 4, 5]))
    exact(out, data[1, :, 1][None], np.int32)


def test_scatter_window_dims_to_operand_dims():
    """002/004 Scatter: with 4 update window dims, operand rank 6 and inserted_window_dims {0, 2},
    window_dims_to_operand_dims is {0->1, 1->3, 2->4, 3->5}: the update window lands on operand
    dims 1, 3, 4, 5 at the index vector."""
    from hlolab.xla import Scatter

    b = XlaBuilder("scatter")
    updates = np.arange(1, 1 + 2 * 3 * 4 * 5, dtype=np.int32).reshape(1, 2, 3, 4, 5)
    out = one(Scatter(ConstantLiteral(b, np.zeros(OPERAND6, np.int32)), ConstantR2(b, [[1, 0]], S32),
                      ConstantLiteral(b, updates), CreateScalarAddComputation(S32),
                      update_window_dims=[1, 2, 3, 4], inserted_window_dims=[0, 2],
                      scatter_dims_to_operand_dims=[0, 2], index_vector_dim=1))
    want = np.zeros(OPERAND6, np.int32)
    want[1, :, 0] = updates[0]
    exact(out, want, np.int32)
