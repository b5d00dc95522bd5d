"""chlo.ragged_dot: the conformance values, the three modes against XLA:CPU (jax's
ragged_dot_general), group sizes summing to less or more than the ragged dim, the
constraints, infer, provenance against the values and explain."""

from __future__ import annotations

import numpy as np
import pytest

from hlolab.errors import VerificationError
from hlolab.interp.single import evaluate_op
from hlolab.ir.parser import parse_module
from hlolab.ops.chlo_ragged import RaggedDotAttrs, infer_ragged_dot
from hlolab.ops.record import InferError, Partial
from hlolab.ops.registry import OpCall, lookup
from hlolab.ops.verify import verify_op
from hlolab.trace.explain import format_explanation
from hlolab.types import TensorType, element_type


def ttext(shape, et):
    return "tensor<" + "".join(f"{d}x" for d in shape) + et + ">"


def program(ls, rs, gs, out, dims, et="f32", get="i64", oet=None, precision=True):
    lb, rb, lc, rc, lr, rg = dims
    lt, rt, gt, ot = ttext(ls, et), ttext(rs, et), ttext(gs, get), ttext(out, oet or et)
    prec = (", precision_config = [#chlo<precision DEFAULT>, #chlo<precision DEFAULT>]"
            if precision else "")
    return (f"func.func @main(%lhs: {lt}, %rhs: {rt}, %gs: {gt}) -> {ot} {{\n"
            f'  %r = "chlo.ragged_dot"(%lhs, %rhs, %gs) {{ragged_dot_dimension_numbers = #chlo.ragged_dot<'
            f"lhs_batching_dimensions = {list(lb)}, rhs_batching_dimensions = {list(rb)}, "
            f"lhs_contracting_dimensions = {list(lc)}, rhs_contracting_dimensions = {list(rc)}, "
            f"lhs_ragged_dimensions = {list(lr)}, rhs_group_dimensions = {list(rg)}>{prec}}} "
            f": ({lt}, {rt}, {gt}) -> {ot}\n"
            f"  return %r : {ot}\n}}")


def the_op(text):
    return next(o for o in parse_module(text).walk() if o.name == "chlo.ragged_dot")


def run(lhs, rhs, gs, out, dims, **kw):
    et = {np.dtype(np.float32): "f32", np.dtype(np.int32): "i32", np.dtype(np.float64): "f64"}[lhs.dtype]
    op = the_op(program(lhs.shape, rhs.shape, gs.shape, out, dims, et=et, **kw))
    verify_op(op)
    call = OpCall(op)
    (res,) = evaluate_op(op, [lhs, rhs, gs], call)
    d = lookup("chlo.ragged_dot")
    prov = d.provenance(call, [lhs, rhs, gs], [res])
    return res, prov, lambda i: d.explain(call, [lhs, rhs, gs], [res], 0, i)


MODE1 = ((), (), (1,), (1,), (0,), (0,))  # [m,k] x [g,k,n] -> [m,n]


def test_mode1_worked_values_rows_beyond_the_sum_are_zero():
    lhs = np.arange(12, dtype=np.int32).reshape(6, 2)
    rhs = np.array([[[1, 0], [0, 1]], [[2, 0], [0, 2]], [[0, 1], [1, 0]]], np.int32)
    res, _, _ = run(lhs, rhs, np.array([2, 1, 2], np.int64), (6, 2), MODE1)
    want = np.array([[0, 1], [2, 3], [8, 10], [7, 6], [9, 8], [0, 0]], np.int32)
    np.testing.assert_array_equal(res, want)
    # sizes summing past the dim cut the last group short
    res, _, _ = run(lhs, rhs, np.array([1, 2, 9], np.int64), (6, 2), MODE1)
    np.testing.assert_array_equal(res, [[0, 1], [4, 6], [8, 10], [7, 6], [9, 8], [11, 10]])


def test_mode1_another_groups_inf_does_not_leak():
    lhs = np.ones((3, 2), np.float32)
    rhs = np.array([[[1.0], [2.0]], [[np.inf], [1.0]]], np.float32)
    res, _, _ = run(lhs, rhs, np.array([2, 1], np.int64), (3, 1), MODE1)
    np.testing.assert_array_equal(res, [[3.0], [3.0], [np.inf]])


def test_mode1_negative_size_makes_groups_overlap_and_add():
    lhs = np.ones((4, 1), np.int32)
    rhs = np.array([[[1]], [[10]], [[100]]], np.int32)
    # ends 3, 1, 4; starts 0, 3, 1: rows 1 and 2 are in groups 0 and 2
    res, _, _ = run(lhs, rhs, np.array([3, -2, 3], np.int64), (4, 1), MODE1)
    np.testing.assert_array_equal(res[:, 0], [1, 101, 101, 100])


def test_mode2_worked_values():
    lhs = np.arange(10, dtype=np.int32).reshape(2, 5)
    rhs = np.ones((5, 3), np.int32)
    dims = ((), (), (1,), (0,), (1,), ())
    res, _, _ = run(lhs, rhs, np.array([2, 2, 0], np.int64), (3, 2, 3), dims)
    np.testing.assert_array_equal(res[:, :, 0], [[1, 11], [5, 15], [0, 0]])


def test_mode3_ignores_group_sizes_like_xla():
    lhs = np.arange(12, dtype=np.int32).reshape(3, 2, 2)
    rhs = np.ones((3, 2, 1), np.int32)
    dims = ((0,), (0,), (2,), (1,), (0,), ())
    res, prov, explain = run(lhs, rhs, np.array([1, 1], np.int64), (3, 2, 1), dims)
    np.testing.assert_array_equal(res[..., 0], lhs.sum(-1))
    assert {s.role for s in prov.sources(0, (2, 1, 0))} == {"window", "kernel"}
    assert "group_sizes is checked but changes no value" in format_explanation(explain((2, 1, 0)))


def test_batched_group_sizes_pick_their_row():
    # [b, m, k] x [g, b, k, n] with group_sizes [b, g]: each batch row has its own groups
    lhs = np.ones((2, 4, 1), np.int32)
    rhs = np.array([[[[1]], [[1]]], [[[10]], [[10]]]], np.int32)  # [g=2, b=2, k=1, n=1]
    dims = ((0,), (1,), (2,), (2,), (1,), (0,))
    gs = np.array([[1, 3], [3, 0]], np.int64)
    res, prov, _ = run(lhs, rhs, gs, (2, 4, 1), dims)
    np.testing.assert_array_equal(res[..., 0], [[1, 10, 10, 10], [1, 1, 1, 0]])
    got = {(s.operand, s.index, s.role) for s in prov.sources(0, (1, 2, 0))}
    assert got == {(0, (1, 2, 0), "window"), (1, (0, 1, 0, 0), "kernel"),
                   (2, (1, 0), "index_read"), (2, (1, 1), "index_read")}


CONF = "/work/shared/conformance/interpret/chlo/ragged_dot.mlir"


def test_conformance_programs_pass():
    from tests.conformance.test_interpret_corpus import corpus_results

    results, _ = corpus_results()
    mine = [r for r, _ in results if r.label.startswith("chlo/ragged_dot.mlir")]
    if not mine:
        pytest.skip(f"LOUD: {CONF} is absent")
    assert len(mine) == 2 and all(r.status == "PASS" for r in mine), [r.line() for r in mine]


# --- constraints and infer ---------------------------------------------------------------------

def verify_fails(label, text, match):
    with pytest.raises(VerificationError) as info:
        verify_op(the_op(text))
    assert info.value.constraint == label, info.value.message
    assert match in str(info.value), str(info.value)


def test_constraints():
    ok = ((4, 2), (3, 2, 5), (3,), (4, 5))
    verify_op(the_op(program(*ok, MODE1)))
    verify_fails("C12", program(*ok, ((), (), (1,), (1,), (), (0,))),
                 "chlo.ragged_dot (C12): there must be exactly one lhs ragged dimension")
    verify_fails("C13", program(*ok, ((), (), (1,), (1,), (2,), (0,))), "lhs_ragged_dimensions = [2]")
    verify_fails("C18", program(*ok, ((), (), (1,), (1,), (0,), ())), "exactly one rhs group dimension")
    verify_fails("C18", program((4, 2), (3, 2, 5), (2,), (4, 5), MODE1), "must be the number of groups 2")
    verify_fails("C16", program(*ok, ((), (), (1,), (1,), (0,), (1,))), "must be disjoint")
    verify_fails("C15", program(*ok, ((), (), (1,), (1,), (0,), (3,))), "rhs_group_dimensions = [3]")
    verify_fails("C17", program((4, 6), (2, 6, 5), (3,), (3, 4, 5), ((), (), (1,), (1,), (1,), (0,))),
                 "no rhs group dimension")
    verify_fails("C14", program((2, 4, 2), (3, 2, 2, 5), (3, 3), (2, 4, 5),
                                ((0,), (1,), (2,), (2,), (1,), (0,))), "group_sizes must have shape [2, 3]")
    verify_fails("C14", program((2, 4, 2), (3, 2, 2, 5), (2, 1, 3), (2, 4, 5),
                                ((0,), (1,), (2,), (2,), (1,), (0,))), "group_sizes must have rank 1 or 2")
    verify_fails("C19", program((4, 2), (3, 2, 5), (3,), (4, 4), MODE1), "must be the inferred shape [4, 5]")
    verify_fails("C10", program((4, 2), (3, 3, 5), (3,), (4, 5), MODE1), "dim(lhs, lhs_contracting")
    verify_fails("C20", program(*ok, MODE1, oet="i32"), "of the operands' kind")
    verify_fails("I3", program(*ok, MODE1, get="f32"), "group_sizes must be a tensor of integer type")


def test_precision_config_is_checked():
    text = program((4, 2), (3, 2, 5), (3,), (4, 5), MODE1).replace(
        "#chlo<precision DEFAULT>, #chlo<precision DEFAULT>", "#chlo<precision DEFAULT>")
    verify_fails("C11", text, "size(precision_config) = 1 must be 2")
    verify_op(the_op(program((4, 2), (3, 2, 5), (3,), (4, 5), MODE1, precision=False)))


def test_infer():
    f32 = element_type("f32")
    rec = RaggedDotAttrs(lhs_batching_dimensions=(), rhs_batching_dimensions=(),
                         lhs_contracting_dimensions=(1,), rhs_contracting_dimensions=(0,),
                         lhs_ragged_dimensions=(1,), rhs_group_dimensions=())
    types = [TensorType((4, 6), f32), TensorType((6, 5), f32), TensorType((3,), element_type("i32"))]
    assert infer_ragged_dot(rec, types) == [Partial((3, 4, 5))]
    with pytest.raises(InferError) as info:
        infer_ragged_dot(rec.replace(rhs_group_dimensions=(0,)), types)
    assert info.value.constraint in ("C16", "C17")


# --- provenance and explain --------------------------------------------------------------------

def test_provenance_pairs_the_products_of_the_element_and_reads_group_sizes():
    rng = np.random.default_rng(0)
    lhs = rng.integers(-3, 4, (5, 3)).astype(np.int32)
    rhs = rng.integers(-3, 4, (2, 3, 4)).astype(np.int32)
    res, prov, explain = run(lhs, rhs, np.array([2, 2], np.int64), (5, 4), MODE1)
    src = prov.sources(0, (3, 1))  # row 3 is in group 1
    assert [s.index for s in src if s.role == "window"] == [(3, 0), (3, 1), (3, 2)]
    assert [s.index for s in src if s.role == "kernel"] == [(1, 0, 1), (1, 1, 1), (1, 2, 1)]
    assert [s.index for s in src if s.role == "index_read"] == [(0,), (1,)]
    assert res[3, 1] == sum(lhs[3, k] * rhs[1, k, 1] for k in range(3))
    # row 4 is in no group: only the group sizes decide it
    assert {s.role for s in prov.sources(0, (4, 0))} == {"index_read"}
    mask = np.zeros((5, 4), bool)
    mask[1, 2] = True
    back = prov.back(0, mask)
    np.testing.assert_array_equal(back[(1, "kernel")][0, :, 2], [1, 1, 1])
    assert not back[(1, "kernel")][1].any()
    omask = np.zeros((2, 3, 4), bool)
    omask[1, 0, 3] = True  # rhs group 1 reaches rows 2, 3 only
    fwd = prov.fwd(1, omask)
    assert sorted(map(tuple, np.argwhere(fwd[(0, "kernel")]))) == [(2, 3), (3, 3)]
    text = format_explanation(explain((3, 1)))
    assert "position 3 lies in 1 group(s)" in text and "(1,)" in text and "3 products" in text
    text = format_explanation(explain((4, 1)))
    assert "is in no group (the group sizes sum to 4)" in text


def test_mode2_provenance_limits_the_window_to_the_group():
    lhs = np.arange(10, dtype=np.int32).reshape(2, 5)
    rhs = np.ones((5, 3), np.int32)
    dims = ((), (), (1,), (0,), (1,), ())
    _, prov, explain = run(lhs, rhs, np.array([2, 3], np.int64), (2, 2, 3), dims)
    src = prov.sources(0, (1, 0, 2))
    assert [s.index for s in src if s.role == "window"] == [(0, 2), (0, 3), (0, 4)]
    assert [s.index for s in src if s.role == "kernel"] == [(2, 2), (3, 2), (4, 2)]
    assert "group 1: [2, 5)" in format_explanation(explain((1, 0, 2)))


# --- XLA:CPU through jax -----------------------------------------------------------------------

jax = pytest.importorskip("jax")


def xla_ragged(lhs, rhs, gs, dims):
    from jax.lax import RaggedDotDimensionNumbers

    lb, rb, lc, rc, lr, rg = dims
    dn = RaggedDotDimensionNumbers(dot_dimension_numbers=((list(lc), list(rc)), (list(lb), list(rb))),
                                   lhs_ragged_dimensions=list(lr), rhs_group_dimensions=list(rg))
    return np.asarray(jax.jit(lambda a, b, g: jax.lax.ragged_dot_general(a, b, g, dn))(lhs, rhs, gs))


CASES = [
    ("mode1", (11, 5), (3, 5, 7), [4, 4, 3], MODE1),
    ("mode1 short", (11, 5), (3, 5, 7), [2, 0, 5], MODE1),
    ("mode1 long", (11, 5), (3, 5, 7), [6, 6, 6], MODE1),
    ("mode1 batched", (2, 6, 4), (3, 2, 4, 5), [1, 3, 1], ((0,), (1,), (2,), (2,), (1,), (0,))),
    ("mode1 rhs group last", (6, 4), (4, 5, 3), [2, 2, 2], ((), (), (1,), (0,), (0,), (2,))),
    ("mode2", (6, 8), (8, 5), [3, 1, 4], ((), (), (1,), (0,), (1,), ())),
    ("mode2 short", (6, 8), (8, 5), [3, 1, 1], ((), (), (1,), (0,), (1,), ())),
    ("mode2 batched", (2, 3, 8), (2, 8, 4), [5, 3], ((0,), (0,), (2,), (1,), (2,), ())),
    ("mode3", (4, 3, 2), (4, 2, 5), [1, 2], ((0,), (0,), (2,), (1,), (0,), ())),
]


@pytest.mark.parametrize("name, ls, rs, sizes, dims", CASES, ids=[c[0] for c in CASES])
def test_matches_xla_cpu(name, ls, rs, sizes, dims):
    rng = np.random.default_rng(len(name))
    lhs = rng.standard_normal(ls).astype(np.float32)
    rhs = rng.standard_normal(rs).astype(np.float32)
    gs = np.array(sizes, np.int32)
    want = xla_ragged(lhs, rhs, gs, dims)
    op = the_op(program(ls, rs, gs.shape, want.shape, dims, get="i32"))
    verify_op(op)
    (got,) = evaluate_op(op, [lhs, rhs, gs], OpCall(op))
    k = int(np.prod([ls[d] for d in dims[2]]))
    bound = 2 * k * np.finfo(np.float32).eps * np.einsum("...->...", np.abs(want) + 1)
    assert np.all(np.abs(got - want) <= bound), (got, want)
    np.testing.assert_array_equal(got == 0, want == 0)  # the zero rows / empty groups agree


def test_integer_mode1_is_bit_exact_with_xla():
    rng = np.random.default_rng(7)
    lhs = rng.integers(-100, 100, (9, 4)).astype(np.int32)
    rhs = rng.integers(-100, 100, (3, 4, 2)).astype(np.int32)
    gs = np.array([3, 0, 4], np.int32)
    want = xla_ragged(lhs, rhs, gs, MODE1)
    op = the_op(program(lhs.shape, rhs.shape, gs.shape, want.shape, MODE1, et="i32", get="i32"))
    (got,) = evaluate_op(op, [lhs, rhs, gs], OpCall(op))
    np.testing.assert_array_equal(got, want)
