"""chlo.top_k: worked values (ties, NaN, -0.0, k = 0, k = last dim, ranks 1 and 3, integer
and bool types), constraints, provenance against the values, explain text."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from hlolab.errors import VerificationError
from hlolab.interp.single import evaluate_op
from hlolab.ir.parser import parse_module
from hlolab.numerics import from_bits
from hlolab.ops.chlo_topk import TopKAttrs, infer_top_k
from hlolab.ops.record import InferError
from hlolab.ops.registry import OpCall, lookup
from hlolab.ops.verify import verify_op
from hlolab.trace.explain import format_explanation
from hlolab.types import TensorType, element_type


def program(shape: tuple[int, ...], et: str, k: int, rshape: tuple[int, ...] | None = None,
            iet: str = "i32") -> str:
    dims = "".join(f"{d}x" for d in shape)
    rs = (*shape[:-1], k) if rshape is None else rshape
    rdims = "".join(f"{d}x" for d in rs)
    t, v, i = f"tensor<{dims}{et}>", f"tensor<{rdims}{et}>", f"tensor<{rdims}{iet}>"
    return (f"func.func @main(%x: {t}) -> ({v}, {i}) {{\n"
            f"  %values, %indices = chlo.top_k(%x, k = {k}) : {t} -> ({v}, {i})\n"
            f"  return %values, %indices : {v}, {i}\n}}")


def the_op(text: str):
    return next(o for o in parse_module(text).walk() if o.name == "chlo.top_k")


def run(x: np.ndarray, et: str, k: int):
    op = the_op(program(x.shape, et, k))
    verify_op(op)
    call = OpCall(op)
    out = evaluate_op(op, [x], call)
    d = lookup("chlo.top_k")
    return out, d.provenance(call, [x], out), lambda r, i: d.explain(call, [x], out, r, i)


F32 = np.float32


def test_ties_keep_lower_index_first():
    x = np.array([[1, 3, 3, 2, 3], [5, 5, 5, 5, 5]], F32)
    (v, i), _, _ = run(x, "f32", 3)
    np.testing.assert_array_equal(v, [[3, 3, 3], [5, 5, 5]])
    np.testing.assert_array_equal(i, [[1, 2, 4], [0, 1, 2]])
    assert i.dtype == np.int32


def test_nan_and_signed_zero_follow_total_order():
    # +NaN above +inf, -NaN below -inf, -0.0 below +0.0 (XLA:CPU, measured)
    x = np.array([1.0, np.nan, -0.0, 0.0, 3.0, -np.nan, -np.inf, np.inf], F32)
    (v, i), _, _ = run(x, "f32", 8)
    np.testing.assert_array_equal(i, [1, 7, 4, 0, 3, 2, 6, 5])
    assert np.isnan(v[0]) and not np.signbit(v[0]) and np.isnan(v[7]) and np.signbit(v[7])
    assert list(np.signbit(v[4:6])) == [False, True]


def test_nan_payloads_rank_by_bits():
    bits = np.array([0x7FC00000, 0x7FC00001, 0xFFC00001, 0xFFC00000, 0x7F800001], np.uint32)
    x = from_bits(bits, np.float32)
    (v, i), _, _ = run(x, "f32", 5)
    np.testing.assert_array_equal(i, [1, 0, 4, 3, 2])
    np.testing.assert_array_equal(v.view(np.uint32), bits[[1, 0, 4, 3, 2]])  # bits copied


def test_denormals_are_ordered():
    x = from_bits(np.array([0x0000, 0x0001, 0x8001, 0x8000], np.uint16), ml_dtypes.bfloat16)
    (_, i), _, _ = run(x, "bf16", 4)
    np.testing.assert_array_equal(i, [1, 0, 3, 2])


def test_k_zero_and_k_last_dim():
    x = np.array([[2, 0, 1]], F32)
    (v, i), _, _ = run(x, "f32", 0)
    assert v.shape == (1, 0) and i.shape == (1, 0)
    (v, i), _, _ = run(x, "f32", 3)
    np.testing.assert_array_equal(v, [[2, 1, 0]])
    np.testing.assert_array_equal(i, [[0, 2, 1]])


def test_rank_1():
    (v, i), _, _ = run(np.array([4, 9, 1, 9], np.int32), "i32", 2)
    np.testing.assert_array_equal(v, [9, 9])
    np.testing.assert_array_equal(i, [1, 3])


def test_rank_3_values():
    x = np.arange(24, dtype=F32).reshape(2, 3, 4) % 5
    (v, i), _, _ = run(x, "f32", 2)
    assert v.shape == i.shape == (2, 3, 2)
    np.testing.assert_array_equal(v[1, 2], [3, 2])
    np.testing.assert_array_equal(i[1, 2], [3, 2])
    np.testing.assert_array_equal(v[0, 1], [4, 2])
    np.testing.assert_array_equal(i[0, 1], [0, 3])
    np.testing.assert_array_equal(np.take_along_axis(x, i, -1), v)


@pytest.mark.parametrize("et,dtype,row,want", [
    ("i8", np.int8, [-128, 127, -1, 0], [1, 3]),
    ("ui8", np.uint8, [255, 0, 128, 255], [0, 3]),
    ("i1", np.bool_, [False, True, False, True], [1, 3]),
    ("i64", np.int64, [np.iinfo(np.int64).min, np.iinfo(np.int64).max, 0, -1], [1, 2]),
    ("ui64", np.uint64, [0, np.iinfo(np.uint64).max, 1, 2], [1, 3]),
    ("f16", np.float16, [-0.0, 0.0, -np.inf, 65504], [3, 1]),
])
def test_integer_bool_and_narrow_types(et, dtype, row, want):
    x = np.array(row, dtype=dtype)
    (v, i), _, _ = run(x, et, 2)
    np.testing.assert_array_equal(i, want)
    assert v.dtype == x.dtype
    np.testing.assert_array_equal(v.view(np.uint8), x[want].view(np.uint8))


# --- constraints ---------------------------------------------------------------------------

def verify_fails(constraint: str | None, text: str, match: str) -> None:
    with pytest.raises(VerificationError) as info:
        verify_op(the_op(text))
    assert info.value.constraint == constraint, info.value.message
    assert match in info.value.message, info.value.message


def test_constraints():
    verify_fails("C3", program((2, 3), "f32", 4),
                 "chlo.top_k (C3): k <= dim(operand, -1) does not hold: k = 4, dim(operand, -1) = 3")
    verify_fails("C2", program((2, 3), "f32", -1, rshape=(2, 0)), "0 <= k does not hold: k = -1")
    verify_fails("C1", program((), "f32", 0, rshape=(0,)), "rank(operand) >= 1 does not hold")
    verify_fails("I1", program((3,), "complex<f32>", 1),
                 "operand must be a tensor of boolean, integer or floating-point type")
    verify_fails(None, program((2, 3), "f32", 2, rshape=(2, 3)),
                 "result #0 is declared tensor<2x3xf32>, its operands and attributes give tensor<2x2xf32>")
    verify_fails(None, program((2, 3), "f32", 2, iet="i64"),
                 "result #1 is declared tensor<2x2xi64>, its operands and attributes give tensor<2x2xi32>")


def test_infer():
    t = TensorType((4, 10), element_type("f32"))
    v, i = infer_top_k(TopKAttrs(k=3), [t])
    assert v == TensorType((4, 3), element_type("f32")) and i == TensorType((4, 3), element_type("i32"))
    with pytest.raises(InferError):
        infer_top_k(TopKAttrs(k=11), [t])


# --- provenance and explain ----------------------------------------------------------------

X = np.array([[1, 3, 3, 2], [0, -1, 7, 7]], F32)


def test_provenance_of_a_value_and_an_index():
    (v, i), prov, _ = run(X, "f32", 3)
    srcs = prov.sources(0, (0, 1))  # values[0, 1] = 3, the second 3 (position 2)
    assert [(s.operand, s.index, s.role) for s in srcs if s.role == "copy"] == [(0, (0, 2), "copy")]
    assert X[0, 2] == v[0, 1]
    assert sorted(s.index for s in srcs if s.role == "control") == [(0, 0), (0, 1), (0, 2), (0, 3)]
    srcs = prov.sources(1, (1, 0))  # indices[1, 0] = 2: decided by the whole row 1
    assert all(s.role == "control" for s in srcs)
    assert sorted(s.index for s in srcs) == [(1, 0), (1, 1), (1, 2), (1, 3)]
    # operand[1, 1] = -1 is not in the top 3: no copy target, but it decided row 1
    tg = prov.targets(0, (1, 1))
    assert not [t for t in tg if t.role == "copy"] and len(tg) == 6
    assert [(t.result, t.index) for t in prov.targets(0, (0, 2)) if t.role == "copy"] == [(0, (0, 1))]


def test_provenance_masks():
    (v, i), prov, _ = run(X, "f32", 3)
    mask = np.zeros((2, 3), bool)
    mask[1, 0] = True
    back = prov.back(0, mask)
    np.testing.assert_array_equal(back[(0, "copy")], [[0, 0, 0, 0], [0, 0, 1, 0]])
    np.testing.assert_array_equal(back[(0, "control")], [[0, 0, 0, 0], [1, 1, 1, 1]])
    assert set(prov.back(1, mask)) == {(0, "control")}
    omask = np.zeros((2, 4), bool)
    omask[0, 3] = True  # 2.0 at position 3 is the third largest of row 0
    fwd = prov.fwd(0, omask)
    np.testing.assert_array_equal(fwd[(0, "copy")], [[0, 0, 1], [0, 0, 0]])
    np.testing.assert_array_equal(fwd[(1, "control")], [[1, 1, 1], [0, 0, 0]])


def test_explain_names_row_ranking_and_ties():
    _, _, explain = run(X, "f32", 3)
    e = explain(0, (0, 2))
    assert e.value == 2.0
    text = format_explanation(e)
    assert "%x[0, :]" in text and "(1, 2, 3, 0)" in text
    assert "ranking[2]" in text and "%x[0, 3]" in text
    assert "tied positions" not in text
    e = explain(1, (0, 1))
    assert e.value == 2
    text = format_explanation(e)
    assert "(1, 2)" in text and "tie number 1" in text and "ranking[1]" in text
    assert "TOTALORDER" in text


def test_explain_bad_index():
    _, _, explain = run(X, "f32", 3)
    with pytest.raises(Exception, match="out of range"):
        explain(0, (0, 3))


def test_bf16_nans_tie_by_sign():
    # XLA:CPU sorts bf16 as f32: every +NaN is the same NaN (and every -NaN); measured
    bits = np.array([0x7FC1, 0xFFC1, 0x7FC0, 0xFFC0, 0x7F81, 0xFF81, 0x7F80, 0xFF80], np.uint16)
    (v, i), _, _ = run(from_bits(bits, ml_dtypes.bfloat16), "bf16", 8)
    np.testing.assert_array_equal(i, [0, 2, 4, 6, 7, 1, 3, 5])
    np.testing.assert_array_equal(v.view(np.uint16), bits[[0, 2, 4, 6, 7, 1, 3, 5]])  # bits copied


def test_f16_nans_rank_by_payload():
    bits = np.array([0x7E00, 0x7E01, 0xFE01, 0xFE00], np.uint16)
    (_, i), _, _ = run(from_bits(bits, np.float16), "f16", 4)
    np.testing.assert_array_equal(i, [1, 0, 3, 2])
