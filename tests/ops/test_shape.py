"""Shape and data-movement ops: spec examples, constraints, provenance, explain, jax oracle."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import replace as dataclass_replace
from typing import Any

import ml_dtypes
import numpy as np
import pytest

from hlolab.errors import ExecutionError, VerificationError
from hlolab.interp.single import apply_op, build_op, evaluate_op
from hlolab.ir.attrs import DenseArrayAttr, DenseElementsAttr, IntegerAttr
from hlolab.messages import Msg, text
from hlolab.ops.record import Attrs as Attrs_
from hlolab.ops.registry import TOKEN, OpCall, lookup
from hlolab.ops.shape import PAD_KINDS
from hlolab.trace.explain import DimRole, format_explanation
from hlolab.trace.provenance import Source, Target
from hlolab.types import QuantizedElementType, TokenType, TupleType, element_type, tensor_type
from tests.conftest import require_oracle


def arr(*values: int) -> DenseArrayAttr:
    return DenseArrayAttr("i64", tuple(values))


def i64(v: int) -> IntegerAttr:
    return IntegerAttr(v, element_type("i64"))


def t(shape: tuple[int, ...], elem: Any = "i32"):
    return tensor_type(shape, elem)


@dataclass
class Ran:
    """One executed op with its provenance and explain at hand."""

    call: OpCall
    inputs: list[Any]
    outputs: list[Any]

    @property
    def out(self) -> Any:
        return self.outputs[0]

    def prov(self):
        return lookup(self.call.name).provenance(self.call, self.inputs, self.outputs)

    def explain(self, index: tuple, result: int = 0):
        return lookup(self.call.name).explain(self.call, self.inputs, self.outputs, result, index)


def run(name: str, inputs: list[Any], attrs: dict | None, result_types: list, operand_types=None) -> Ran:
    op = build_op(name, inputs, attrs, result_types, operand_types)
    call = OpCall(op)
    return Ran(call, inputs, evaluate_op(op, inputs, call))


def fails(constraint: str, name: str, inputs, attrs, result_types, operand_types=None) -> VerificationError:
    with pytest.raises(VerificationError) as info:
        apply_op(name, inputs, attrs, result_types, operand_types)
    e = info.value
    assert e.constraint == constraint, e.message
    assert e.message.startswith(f"{name.removeprefix('stablehlo.')} ({constraint}): ")
    return e


def same(got: np.ndarray, want: Any, dtype: Any) -> None:
    want = np.asarray(want, dtype=dtype)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes(), f"{got} != {want}"


I32 = np.int32


# --- spec examples -------------------------------------------------------------------

def test_spec_broadcast_in_dim():
    r = apply_op("stablehlo.broadcast_in_dim", [np.array([[1, 2, 3]], I32)],
                 {"broadcast_dimensions": arr(2, 1)}, [t((2, 3, 2))])
    same(r[0], [[[1, 1], [2, 2], [3, 3]], [[1, 1], [2, 2], [3, 3]]], I32)


def test_spec_concatenate():
    r = apply_op("stablehlo.concatenate", [np.array([[1, 2], [3, 4], [5, 6]]), np.array([[7, 8]])],
                 {"dimension": i64(0)}, [t((4, 2), "i64")])
    same(r[0], [[1, 2], [3, 4], [5, 6], [7, 8]], np.int64)


def test_spec_constant():
    value = np.array([[0.0, 1.0], [2.0, 3.0]], np.float32)
    attr = DenseElementsAttr(t((2, 2), "f32"), value)
    r = apply_op("stablehlo.constant", [], {"value": attr}, [t((2, 2), "f32")])
    same(r[0], [[0.0, 1.0], [2.0, 3.0]], np.float32)
    assert r[0] is not value  # a copy: later ops cannot change the program's literal


def test_spec_get_tuple_element_and_tuple():
    val0, val1 = np.array([1.0, 2.0]), (np.array(3, np.int64),)
    inner = TupleType((t((), "i64"),))
    tt = TupleType((t((2,), "f64"), inner))
    (tup,) = apply_op("stablehlo.tuple", [val0, val1], None, [tt], [t((2,), "f64"), inner])
    assert isinstance(tup, tuple) and tup[0] is val0 and tup[1] is val1
    (res,) = apply_op("stablehlo.get_tuple_element", [tup], {"index": IntegerAttr(0, element_type("i32"))},
                      [t((2,), "f64")], [tt])
    same(res, [1.0, 2.0], np.float64)
    (res,) = apply_op("stablehlo.get_tuple_element", [tup], {"index": IntegerAttr(1, element_type("i32"))},
                      [inner], [tt])
    assert res == (np.array(3),)


@pytest.mark.parametrize("dim, want", [
    (0, [[0] * 5, [1] * 5, [2] * 5, [3] * 5]),
    (1, [[0, 1, 2, 3, 4]] * 4),
])
def test_spec_iota(dim, want):
    (r,) = apply_op("stablehlo.iota", [], {"iota_dimension": i64(dim)}, [t((4, 5))])
    same(r, want, I32)


def test_spec_optimization_barrier():
    a, b = np.array(0.0, np.float32), np.array(1.0, np.float32)
    r = apply_op("stablehlo.optimization_barrier", [a, b], None, [t((), "f32"), t((), "f32")])
    same(r[0], 0.0, np.float32)
    same(r[1], 1.0, np.float32)


PAD_SPEC = dict(edge_padding_low=arr(0, 1), edge_padding_high=arr(2, 1), interior_padding=arr(1, 2))
PAD_SPEC_OUT = [[0, 1, 0, 0, 2, 0, 0, 3, 0], [0] * 9, [0, 4, 0, 0, 5, 0, 0, 6, 0], [0] * 9, [0] * 9]


def test_spec_pad():
    r = apply_op("stablehlo.pad", [np.array([[1, 2, 3], [4, 5, 6]], I32), np.array(0, I32)], PAD_SPEC,
                 [t((5, 9))])
    same(r[0], PAD_SPEC_OUT, I32)


def test_spec_reshape():
    (r,) = apply_op("stablehlo.reshape", [np.array([[1, 2, 3], [4, 5, 6]], I32)], None, [t((3, 2))])
    same(r, [[1, 2], [3, 4], [5, 6]], I32)


def test_spec_reverse():
    (r,) = apply_op("stablehlo.reverse", [np.array([[1, 2], [3, 4], [5, 6]], I32)],
                    {"dimensions": arr(1)}, [t((3, 2))])
    same(r, [[2, 1], [4, 3], [6, 5]], I32)


def test_spec_slice():
    x = np.array([[0, 0, 0, 0], [0, 0, 1, 1], [0, 0, 1, 1]], np.int64)
    (r,) = apply_op("stablehlo.slice", [x], {"start_indices": arr(1, 2), "limit_indices": arr(3, 4),
                                             "strides": arr(1, 1)}, [t((2, 2), "i64")])
    same(r, [[1, 1], [1, 1]], np.int64)


X232 = np.array([[[1, 2], [3, 4], [5, 6]], [[7, 8], [9, 10], [11, 12]]], I32)


def test_spec_transpose():
    (r,) = apply_op("stablehlo.transpose", [X232], {"permutation": arr(2, 1, 0)}, [t((2, 3, 2))])
    same(r, [[[1, 7], [3, 9], [5, 11]], [[2, 8], [4, 10], [6, 12]]], I32)


# --- more cases (from the StableHLO interpreter tests and by hand) -----------------------

NEG_PAD_IN = np.array([[0, 0, 0, 0], [0, 1, 2, 0], [0, 3, 4, 0], [0, 5, 6, 0], [0, 0, 0, 0]], np.int64)
NEG_PAD = dict(edge_padding_low=arr(1, -1), edge_padding_high=arr(1, -1), interior_padding=arr(0, 1))


def test_pad_negative_edges_crop_interior_padded_operand():
    r = run("stablehlo.pad", [NEG_PAD_IN, np.array(-1, np.int64)], NEG_PAD, [t((7, 5), "i64")])
    same(r.out, [[-1] * 5, [-1, 0, -1, 0, -1], [-1, 1, -1, 2, -1], [-1, 3, -1, 4, -1],
                 [-1, 5, -1, 6, -1], [-1, 0, -1, 0, -1], [-1] * 5], np.int64)


@pytest.mark.parametrize("low, high, interior, want", [
    ((-1,), (0,), (0,), [2, 3]),
    ((0,), (-2,), (1,), [1, 9, 2]),           # interior, then the high edge crops into it
    ((-2,), (-2,), (2,), [9, 2, 9]),
    ((-5,), (3,), (0,), [9]),                 # everything cropped, then padded again
    ((2,), (-6,), (1,), [9]),                 # only low padding survives
    ((-2,), (-1,), (0,), []),
])
def test_pad_negative_and_interior(low, high, interior, want):
    (r,) = apply_op("stablehlo.pad", [np.array([1, 2, 3], I32), np.array(9, I32)],
                    dict(edge_padding_low=arr(*low), edge_padding_high=arr(*high),
                         interior_padding=arr(*interior)), [t((len(want),))])
    same(r, want, I32)


def test_pad_empty_operand_and_bf16():
    bf16 = ml_dtypes.bfloat16
    (r,) = apply_op("stablehlo.pad", [np.zeros((0, 2), bf16), np.array(1.5, bf16)],
                    dict(edge_padding_low=arr(1, 0), edge_padding_high=arr(1, 1), interior_padding=arr(3, 0)),
                    [t((2, 3), "bf16")])
    same(r, np.full((2, 3), 1.5), ml_dtypes.bfloat16)


def test_slice_strided():
    x = np.array([[0, 0, 1, 0, 0, 1], [0, 0, 0, 0, 0, 0], [0, 0, 1, 0, 0, 1]], np.int64)
    (r,) = apply_op("stablehlo.slice", [x], {"start_indices": arr(0, 2), "limit_indices": arr(3, 6),
                                             "strides": arr(2, 3)}, [t((2, 2), "i64")])
    same(r, [[1, 1], [1, 1]], np.int64)


def test_slice_and_reverse_of_a_rank_0_tensor_are_tensors():
    """Regression (differential suite): slice and reverse of a 0-d tensor returned a numpy
    scalar, which the executor refused ("stablehlo.slice produced bool")."""
    for x, et in ((np.array(True), "i1"), (np.array(7, np.int8), "i8"),
                  (np.array(1.5, ml_dtypes.bfloat16), "bf16")):
        (r,) = apply_op("stablehlo.slice", [x], {"start_indices": arr(), "limit_indices": arr(),
                                                 "strides": arr()}, [t((), et)])
        (v,) = apply_op("stablehlo.reverse", [x], {"dimensions": arr()}, [t((), et)])
        for out in (r, v):
            assert isinstance(out, np.ndarray) and out.shape == () and out.dtype == x.dtype and out == x


def test_transpose_other_permutation():
    (r,) = apply_op("stablehlo.transpose", [X232], {"permutation": arr(1, 0, 2)}, [t((3, 2, 2))])
    same(r, [[[1, 2], [7, 8]], [[3, 4], [9, 10]], [[5, 6], [11, 12]]], I32)


def test_broadcast_in_dim_expands_size_one_and_adds_dims():
    x = np.array([[1], [2]], I32)
    (r,) = apply_op("stablehlo.broadcast_in_dim", [x], {"broadcast_dimensions": arr(0, 2)}, [t((2, 2, 3))])
    same(r, [[[1, 1, 1]] * 2, [[2, 2, 2]] * 2], I32)
    (r,) = apply_op("stablehlo.broadcast_in_dim", [np.array(7, I32)], {"broadcast_dimensions": arr()},
                    [t((2,))])
    same(r, [7, 7], I32)


def test_reverse_several_dims_and_none():
    (r,) = apply_op("stablehlo.reverse", [X232], {"dimensions": arr(0, 2)}, [t((2, 3, 2))])
    same(r, X232[::-1, :, ::-1], I32)
    (r,) = apply_op("stablehlo.reverse", [X232], {"dimensions": arr()}, [t((2, 3, 2))])
    same(r, X232, I32)


def test_concatenate_three_inputs_middle_dim():
    a, b, c = np.zeros((2, 1), I32), np.ones((2, 2), I32), np.full((2, 0), 5, I32)
    (r,) = apply_op("stablehlo.concatenate", [a, b, c], {"dimension": i64(1)}, [t((2, 3))])
    same(r, [[0, 1, 1], [0, 1, 1]], I32)


@pytest.mark.parametrize("elem, want", [
    ("i4", [0, 1, 2, 3, 4, 5, 6, 7, -8, -7]),  # integers wrap
    ("ui2", [0, 1, 2, 3, 0, 1, 2, 3, 0, 1]),
    ("f16", list(range(10))),
    ("complex<f64>", list(range(10))),
])
def test_iota_element_types(elem, want):
    (r,) = apply_op("stablehlo.iota", [], {"iota_dimension": i64(0)}, [t((10,), elem)])
    same(r, want, element_type(elem).dtype)


def test_iota_rounds_once_to_nearest_even():
    (r,) = apply_op("stablehlo.iota", [], {"iota_dimension": i64(1)}, [t((1, 600), "bf16")])
    # bf16 spacing is 2 in [256, 512): ties go to the even significand
    assert r[0, 256:268].astype(np.float32).tolist() == [256, 256, 258, 260, 260, 260, 262, 264, 264,
                                                         264, 266, 268]
    (r,) = apply_op("stablehlo.iota", [], {"iota_dimension": i64(0)}, [t((500,), "f8E4M3FN")])
    assert r[[447, 464, 465]].astype(np.float32)[:2].tolist() == [448, 448]
    assert np.isnan(r[465].astype(np.float32))  # past the largest finite value: NaN (no inf in E4M3FN)


def test_iota_index_conversion_is_single_rounding():
    # 2**24 + 2**16 + 1 lies just above a bf16 tie; rounding through f32 first would give 2**24
    from hlolab.ops.shape import _index_to_element

    got = _index_to_element(np.array([2**24 + 2**16 + 1]), element_type("bf16"))
    assert float(got[0]) == 2**24 + 2**17


# --- quantized values move as storage ---------------------------------------------------

Q8 = QuantizedElementType(element_type("i8"), element_type("f32"), (0.5,), (3,))
QAXIS1 = QuantizedElementType(element_type("i8"), element_type("f32"), (0.5, 0.25), (0, 1), axis=1)
QAXIS0 = QuantizedElementType(element_type("i8"), element_type("f32"), (0.5, 0.25), (0, 1), axis=0)


def test_quantized_per_tensor_slice_pad_concat_reverse():
    x = np.array([[1, -2, 3], [4, 5, -6]], np.int8)
    (r,) = apply_op("stablehlo.slice", [x], {"start_indices": arr(0, 1), "limit_indices": arr(2, 3),
                                             "strides": arr(1, 2)}, [t((2, 1), Q8)], [t((2, 3), Q8)])
    same(r, [[-2], [5]], np.int8)
    (r,) = apply_op("stablehlo.pad", [x, np.array(3, np.int8)],
                    dict(edge_padding_low=arr(0, 1), edge_padding_high=arr(0, 0), interior_padding=arr(0, 0)),
                    [t((2, 4), Q8)], [t((2, 3), Q8), t((), Q8)])
    same(r, [[3, 1, -2, 3], [3, 4, 5, -6]], np.int8)
    (r,) = apply_op("stablehlo.reverse", [x], {"dimensions": arr(1)}, [t((2, 3), Q8)], [t((2, 3), Q8)])
    same(r, x[:, ::-1], np.int8)


def test_quantized_per_axis_transpose_and_reshape():
    x = np.array([[1, 2], [3, 4], [5, 6]], np.int8)
    (r,) = apply_op("stablehlo.transpose", [x], {"permutation": arr(1, 0)}, [t((2, 3), QAXIS0)],
                    [t((3, 2), QAXIS1)])
    same(r, x.T, np.int8)
    (r,) = apply_op("stablehlo.reshape", [x], None, [t((3, 1, 2), QAXIS1.__class__(
        QAXIS1.storage, QAXIS1.expressed, QAXIS1.scales, QAXIS1.zero_points, axis=2))],
        [t((3, 2), QAXIS1)])
    same(r, x.reshape(3, 1, 2), np.int8)


def test_quantized_constant_uses_storage_values():
    attr = DenseElementsAttr(t((2,), "i8"), np.array([7, -1], np.int8))
    (r,) = apply_op("stablehlo.constant", [], {"value": attr}, [t((2,), Q8)])
    same(r, [7, -1], np.int8)


def test_quantized_iota_quantizes_the_index():
    # quantize([0, 1, 2]) with scale 0.5, zero point 3: [3, 5, 7]
    (r,) = apply_op("stablehlo.iota", [], {"iota_dimension": i64(0)}, [t((3,), Q8)])
    same(r, [3, 5, 7], np.int8)


# --- constraints ---------------------------------------------------------------------

X23 = np.arange(6, dtype=I32).reshape(2, 3)


def test_constant_constraints():
    attr = DenseElementsAttr(t((2,), "f32"), np.zeros(2, np.float32))
    fails("C1", "stablehlo.constant", [], {"value": attr}, [t((3,), "f32")])
    fails("C1", "stablehlo.constant", [], {"value": attr}, [t((2,), "f16")])


def test_iota_constraints():
    fails("C1", "stablehlo.iota", [], {"iota_dimension": i64(2)}, [t((2, 3))])
    fails("C1", "stablehlo.iota", [], {"iota_dimension": i64(-1)}, [t((2, 3))])
    with pytest.raises(VerificationError, match="iota: output must be a tensor of integer"):
        apply_op("stablehlo.iota", [], {"iota_dimension": i64(0)}, [t((2,), "i1")])
    with pytest.raises(VerificationError, match="per-tensor quantized"):
        apply_op("stablehlo.iota", [], {"iota_dimension": i64(0)}, [t((2, 2), QAXIS0)])


def test_reshape_constraints():
    fails("C1", "stablehlo.reshape", [X23], None, [t((3, 2), "i64")])
    e = fails("C2", "stablehlo.reshape", [X23], None, [t((4, 2))])
    assert "size(operand) = 6 must equal size(result) = 8" in e.message
    q_res = QuantizedElementType(element_type("i8"), element_type("f32"), (0.5, 0.25), (0, 1), axis=0)
    x = np.zeros((3, 2), np.int8)
    fails("C3", "stablehlo.reshape", [x], None, [t((2, 3), q_res)], [t((3, 2), QAXIS1)])
    fails("C1", "stablehlo.reshape", [x], None, [t((6,), Q8)], [t((3, 2), QAXIS1)])


def test_transpose_constraints():
    fails("C1", "stablehlo.transpose", [X23], {"permutation": arr(1, 0)}, [t((3, 2), "f32")])
    fails("C2", "stablehlo.transpose", [X23], {"permutation": arr(0, 0)}, [t((2, 2))])
    fails("C2", "stablehlo.transpose", [X23], {"permutation": arr(1, 0, 2)}, [t((3, 2))])
    e = fails("C3", "stablehlo.transpose", [X23], {"permutation": arr(1, 0)}, [t((2, 3))])
    assert "[2, 3] must be dim(operand, permutation...) = [3, 2]" in e.message
    x = np.zeros((3, 2), np.int8)
    fails("C4", "stablehlo.transpose", [x], {"permutation": arr(1, 0)}, [t((2, 3), QAXIS1)],
          [t((3, 2), QAXIS1)])


def test_broadcast_in_dim_constraints():
    x = np.array([[1, 2, 3]], I32)
    fails("C1", "stablehlo.broadcast_in_dim", [x], {"broadcast_dimensions": arr(0, 1)}, [t((1, 3), "i64")])
    fails("C2", "stablehlo.broadcast_in_dim", [x], {"broadcast_dimensions": arr(1)}, [t((2, 3))])
    fails("C3", "stablehlo.broadcast_in_dim", [x], {"broadcast_dimensions": arr(0, 2)}, [t((2, 3))])
    fails("C4", "stablehlo.broadcast_in_dim", [x], {"broadcast_dimensions": arr(1, 1)}, [t((2, 3))])
    e = fails("C5", "stablehlo.broadcast_in_dim", [x], {"broadcast_dimensions": arr(0, 1)}, [t((2, 4))])
    assert "dim(operand, 1) = 3 must be 1 or dim(result, broadcast_dimensions[1] = 1) = 4" in e.message
    q = np.zeros((1, 2), np.int8)
    qa = QuantizedElementType(element_type("i8"), element_type("f32"), (0.5, 0.25), (0, 1), axis=1)
    fails("C6", "stablehlo.broadcast_in_dim", [q], {"broadcast_dimensions": arr(1, 2)},
          [t((3, 1, 2), qa)], [t((1, 2), QAXIS1)])  # quantization_dimension must follow to 2
    q1 = np.zeros((2, 1), np.int8)
    op1 = QuantizedElementType(element_type("i8"), element_type("f32"), (0.5,), (0,), axis=1)
    bad = QuantizedElementType(element_type("i8"), element_type("f32"), (0.5, 0.25, 0.5), (0, 0, 0), axis=1)
    fails("C6", "stablehlo.broadcast_in_dim", [q1], {"broadcast_dimensions": arr(0, 1)},
          [t((2, 3), bad)], [t((2, 1), op1)])
    good = QuantizedElementType(element_type("i8"), element_type("f32"), (0.5, 0.5, 0.5), (0, 0, 0), axis=1)
    (r,) = apply_op("stablehlo.broadcast_in_dim", [np.array([[4], [5]], np.int8)],
                    {"broadcast_dimensions": arr(0, 1)}, [t((2, 3), good)], [t((2, 1), op1)])
    same(r, [[4, 4, 4], [5, 5, 5]], np.int8)


def test_slice_constraints():
    def sl(start, limit, strides, out, operand_type=None):
        return ("stablehlo.slice", [X23], {"start_indices": arr(*start), "limit_indices": arr(*limit),
                                           "strides": arr(*strides)}, [out], operand_type)
    fails("C1", *sl((0, 0), (2, 3), (1, 1), t((2, 3), "i64")))
    fails("C2", *sl((0,), (2, 3), (1, 1), t((2, 3))))
    fails("C3", *sl((0, 2), (2, 1), (1, 1), t((2, 0))))
    e = fails("C3", *sl((0, 0), (2, 4), (1, 1), t((2, 4))))
    assert "limit_indices (4) <= dim(operand) (3)" in e.message
    fails("C3", *sl((-1, 0), (2, 3), (1, 1), t((3, 3))))
    fails("C4", *sl((0, 0), (2, 3), (1, 0), t((2, 3))))
    e = fails("C5", *sl((0, 0), (2, 3), (1, 2), t((2, 1))))
    assert "= [2, 2]" in e.message
    with pytest.raises(VerificationError, match=r"slice \(I1\): operand must be a tensor or per-tensor"):
        apply_op(*sl((0, 0), (2, 3), (1, 1), t((2, 3), QAXIS1), [t((2, 3), QAXIS1)]))


def test_concatenate_constraints():
    a, b = np.zeros((2, 2), I32), np.zeros((2, 3), I32)
    fails("C1", "stablehlo.concatenate", [a, b.astype(np.int64)], {"dimension": i64(1)}, [t((2, 5))])
    fails("C2", "stablehlo.concatenate", [a, b], {"dimension": i64(0)}, [t((4, 2))])
    fails("C2", "stablehlo.concatenate", [a, np.zeros((2, 2, 1), I32)], {"dimension": i64(1)}, [t((2, 4))])
    fails("C3", "stablehlo.concatenate", [], {"dimension": i64(0)}, [t((0,))])
    fails("C4", "stablehlo.concatenate", [a, b], {"dimension": i64(2)}, [t((2, 5))])
    fails("C5", "stablehlo.concatenate", [a, b], {"dimension": i64(1)}, [t((2, 5), "f32")])
    e = fails("C6", "stablehlo.concatenate", [a, b], {"dimension": i64(1)}, [t((2, 6))])
    assert "(dim 1 = 2 + 3)" in e.message


def test_reverse_constraints():
    fails("C1", "stablehlo.reverse", [X23], {"dimensions": arr(0)}, [t((3, 2))])
    fails("C2", "stablehlo.reverse", [X23], {"dimensions": arr(1, 1)}, [t((2, 3))])
    fails("C3", "stablehlo.reverse", [X23], {"dimensions": arr(2)}, [t((2, 3))])


def test_pad_constraints():
    pv = np.array(0, I32)

    def pad(low, high, interior, out, inputs=None):
        return ("stablehlo.pad", inputs or [X23, pv],
                dict(edge_padding_low=arr(*low), edge_padding_high=arr(*high),
                     interior_padding=arr(*interior)),
                [out])
    fails("C1", *pad((0, 0), (0, 0), (0, 0), t((2, 3)), [X23, np.array(0, np.int64)]))
    fails("C1", *pad((0, 0), (0, 0), (0, 0), t((2, 3), "f32")))
    fails("C2", *pad((0,), (0, 0), (0, 0), t((2, 3))))
    fails("C2", *pad((0, 0), (0, 0), (0, 0, 0), t((2, 3))))
    fails("C3", *pad((0, 0), (0, 0), (0, -1), t((2, 1))))
    e = fails("C4", *pad((1, -1), (0, 2), (1, 0), t((4, 3))))
    assert "= [4, 4]" in e.message
    with pytest.raises(VerificationError, match=r"pad \(I2\): padding_value must be a 0-dimensional"):
        apply_op(*pad((0, 0), (0, 0), (0, 0), t((2, 3)), [X23, np.zeros(1, I32)]))


def test_tuple_and_get_tuple_element_constraints():
    a = np.zeros(2, I32)
    fails("C1", "stablehlo.tuple", [a], None, [TupleType((t((2,), "f32"),))])
    fails("C1", "stablehlo.tuple", [a], None, [t((2,))])
    tt = TupleType((t((2,)), TokenType()))
    tup = (a, TOKEN)
    fails("C1", "stablehlo.get_tuple_element", [tup], {"index": i64(2)}, [t((2,))], [tt])
    fails("C2", "stablehlo.get_tuple_element", [tup], {"index": i64(1)}, [t((2,))], [tt])
    with pytest.raises(VerificationError, match=r"get_tuple_element \(I1\): operand must be a tuple"):
        apply_op("stablehlo.get_tuple_element", [a], {"index": i64(0)}, [t((2,))])
    (tok,) = apply_op("stablehlo.get_tuple_element", [tup], {"index": i64(1)}, [TokenType()], [tt])
    assert tok is TOKEN


def test_optimization_barrier_constraints_and_tokens():
    a = np.zeros(2, I32)
    fails("C1", "stablehlo.optimization_barrier", [a], None, [t((2,), "f32")])
    fails("C1", "stablehlo.optimization_barrier", [a, a], None, [t((2,))])
    r = apply_op("stablehlo.optimization_barrier", [a, TOKEN], None, [t((2,)), TokenType()],
                 [t((2,)), TokenType()])
    assert r[1] is TOKEN and r[0] is a


def test_aliases_resolve():
    for alias, name in [("Reshape", "reshape"), ("Transpose", "transpose"),
                        ("BroadcastInDim", "broadcast_in_dim"),
                        ("Slice", "slice"), ("ConcatInDim", "concatenate"),
                        ("Rev", "reverse"), ("Pad", "pad"), ("Iota", "iota"), ("ConstantLiteral", "constant"),
                        ("Tuple", "tuple"), ("GetTupleElement", "get_tuple_element"),
                        ("OptimizationBarrier", "optimization_barrier")]:
        assert lookup(alias).name == f"stablehlo.{name}"
    # XLA's Broadcast prepends dims: hlolab.xla composes it from broadcast_in_dim, the op's
    # alias would name different semantics
    assert lookup("Broadcast") is None
    assert lookup("TopK").name == "chlo.top_k"
    assert lookup("GetDimensionSize").name == "stablehlo.get_dimension_size"


def test_get_dimension_size_spec_example_and_c1():
    import hlolab
    from hlolab.errors import VerificationError
    text = """func.func @main(%x: tensor<2x3xi64>) -> tensor<i32> {
  %r = stablehlo.get_dimension_size %x, dim = 1 : (tensor<2x3xi64>) -> tensor<i32>
  return %r : tensor<i32>
}"""
    (r,) = hlolab.run(hlolab.parse(text), [np.array([[1, 2, 3], [4, 5, 6]], np.int64)])
    assert r.dtype == np.int32 and r.shape == () and int(r) == 3
    with pytest.raises(VerificationError, match=r"get_dimension_size \(C1\)"):
        from hlolab.ops.verify import verify_module
        verify_module(hlolab.parse(text.replace("dim = 1", "dim = 2")))


# --- provenance ----------------------------------------------------------------------

def spec_pad() -> Ran:
    return run("stablehlo.pad", [np.array([[1, 2, 3], [4, 5, 6]], I32), np.array(0, I32)], PAD_SPEC,
               [t((5, 9))])


def test_pad_provenance():
    p = spec_pad().prov()
    assert p.sources(0, (0, 1)) == [Source(0, (0, 0), "copy")]
    assert p.sources(0, (2, 7)) == [Source(0, (1, 2), "copy")]
    assert p.sources(0, (0, 0)) == [Source(1, (), "pad_value")]   # low edge
    assert p.sources(0, (0, 2)) == [Source(1, (), "pad_value")]   # interior
    assert p.sources(0, (4, 4)) == [Source(1, (), "pad_value")]   # high edge
    assert p.targets(0, (1, 2)) == [Target(0, (2, 7), "copy")]
    pads = p.targets(1, ())
    assert len(pads) == 45 - 6 and {x.role for x in pads} == {"pad_value"}
    row0 = np.zeros((5, 9), bool)
    row0[0] = True
    back = p.back(0, row0)
    assert set(back) == {(0, "copy"), (1, "pad_value")}
    assert back[(0, "copy")].tolist() == [[True, True, True], [False, False, False]]
    assert back[(1, "pad_value")].tolist() is True
    m = np.zeros((2, 3), bool)
    m[1, 0] = True
    fwd = p.fwd(0, m)
    assert list(fwd) == [(0, "copy")] and np.argwhere(fwd[(0, "copy")]).tolist() == [[2, 1]]
    assert p.fwd(1, np.array(True))[(0, "pad_value")].sum() == 39


def test_negative_pad_provenance_drops_cropped_elements():
    r = run("stablehlo.pad", [NEG_PAD_IN, np.array(-1, np.int64)], NEG_PAD, [t((7, 5), "i64")])
    p = r.prov()
    assert p.sources(0, (1, 1)) == [Source(0, (0, 1), "copy")]
    assert p.sources(0, (2, 3)) == [Source(0, (1, 2), "copy")]
    assert p.targets(0, (2, 0)) == [] and p.targets(0, (2, 3)) == []  # cropped columns
    col0 = np.zeros((5, 4), bool)
    col0[:, 0] = True
    assert p.fwd(0, col0) == {}
    # every copy source holds the value the result has
    for idx in np.ndindex(7, 5):
        (s,) = p.sources(0, idx)
        src = NEG_PAD_IN[s.index] if s.operand == 0 else -1
        assert r.out[idx] == src


def test_transpose_provenance():
    p = run("stablehlo.transpose", [X232], {"permutation": arr(2, 1, 0)}, [t((2, 3, 2))]).prov()
    assert p.sources(0, (1, 2, 0)) == [Source(0, (0, 2, 1), "copy")]
    assert p.targets(0, (0, 2, 1)) == [Target(0, (1, 2, 0), "copy")]
    m = np.zeros((2, 3, 2), bool)
    m[0, 0, 1] = True
    assert np.argwhere(p.back(0, m)[(0, "copy")]).tolist() == [[1, 0, 0]]


def test_broadcast_provenance_fans_out():
    p = run("stablehlo.broadcast_in_dim", [np.array([[1, 2, 3]], I32)],
            {"broadcast_dimensions": arr(2, 1)}, [t((2, 3, 2))]).prov()
    assert p.sources(0, (1, 2, 1)) == [Source(0, (0, 2), "copy")]
    assert p.targets(0, (0, 1)) == [Target(0, ix, "copy") for ix in
                                    [(0, 1, 0), (0, 1, 1), (1, 1, 0), (1, 1, 1)]]
    m = np.zeros((1, 3), bool)
    m[0, 2] = True
    assert p.fwd(0, m)[(0, "copy")].sum() == 4


def test_slice_reverse_reshape_provenance():
    x = np.arange(12, dtype=I32).reshape(3, 4)
    p = run("stablehlo.slice", [x], {"start_indices": arr(1, 0), "limit_indices": arr(3, 4),
                                     "strides": arr(1, 3)}, [t((2, 2))]).prov()
    assert p.sources(0, (1, 1)) == [Source(0, (2, 3), "copy")]
    assert p.targets(0, (0, 0)) == [] and p.targets(0, (1, 3)) == [Target(0, (0, 1), "copy")]
    p = run("stablehlo.reverse", [x], {"dimensions": arr(1)}, [t((3, 4))]).prov()
    assert p.sources(0, (2, 0)) == [Source(0, (2, 3), "copy")]
    p = run("stablehlo.reshape", [x], None, [t((2, 6))]).prov()
    assert p.sources(0, (1, 1)) == [Source(0, (1, 3), "copy")]
    assert p.targets(0, (2, 0)) == [Target(0, (1, 2), "copy")]


def test_concatenate_provenance_picks_one_input():
    r = run("stablehlo.concatenate", [np.array([[1, 2], [3, 4], [5, 6]]), np.array([[7, 8]])],
            {"dimension": i64(0)}, [t((4, 2), "i64")])
    p = r.prov()
    assert p.sources(0, (2, 1)) == [Source(0, (2, 1), "copy")]
    assert p.sources(0, (3, 0)) == [Source(1, (0, 0), "copy")]
    assert p.targets(1, (0, 1)) == [Target(0, (3, 1), "copy")]
    back = p.back(0, np.array([[False, False], [False, True], [False, False], [True, True]]))
    assert np.argwhere(back[(0, "copy")]).tolist() == [[1, 1]]
    assert back[(1, "copy")].tolist() == [[True, True]]


def test_constant_iota_tuple_barrier_provenance():
    attr = DenseElementsAttr(t((2,), "f32"), np.zeros(2, np.float32))
    p = run("stablehlo.constant", [], {"value": attr}, [t((2,), "f32")]).prov()
    assert p.sources(0, (1,)) == [] and p.back(0, np.ones(2, bool)) == {}
    p = run("stablehlo.iota", [], {"iota_dimension": i64(0)}, [t((3,))]).prov()
    assert p.sources(0, (2,)) == []
    a = np.zeros(2, I32)
    p = run("stablehlo.tuple", [a], None, [TupleType((t((2,)),))]).prov()
    assert p.result_shapes == [None] and p.operand_shapes == [(2,)] and p.targets(0, (1,)) == []
    with pytest.raises(ExecutionError, match="not a tensor"):
        p.sources(0, ())
    p = run("stablehlo.optimization_barrier", [a, TOKEN, np.ones(3, I32)], None,
            [t((2,)), TokenType(), t((3,))], [t((2,)), TokenType(), t((3,))]).prov()
    assert p.sources(2, (1,)) == [Source(2, (1,), "copy")]
    assert p.targets(0, (0,)) == [Target(0, (0,), "copy")]
    assert p.operand_shapes == [(2,), None, (3,)]


# --- explain -------------------------------------------------------------------------

def steps(e) -> dict[str, Any]:
    return {s.name: s.value for s in e.steps}


def msg(m: Msg | None) -> tuple[str, dict[str, Any]] | None:
    """A message as (key, args), to compare (Msg has no equality of its own)."""
    return None if m is None else (m.key, m.args)


def copied(e, name: str, where: str, symbol: str = "operand") -> None:
    """The common last step: result[result_index] = operand[operand_index] = name[where]."""
    last = e.steps[-1]
    assert last.name == "result[result_index]" and last.value == e.value
    assert msg(last.formula) == ("explain.element", {"name": symbol, "index": "operand_index"})
    assert msg(last.substituted) == ("explain.element", {"name": name, "index": where})


def test_explain_pad_operand_element():
    e = spec_pad().explain((2, 4))
    assert e.value == 5 and steps(e)["operand_index"] == (1, 1) and e.notes == []
    assert e.steps[1].dim_roles == {0: DimRole("operand"), 1: DimRole("operand")}
    assert steps(e)["result_index - edge_padding_low"] == (2, 3) and e.steps[0].formula is None
    assert msg(e.steps[0].substituted) == ("shape.pad.shifted.substituted",
                                           {"result_index": (2, 4), "edge_padding_low": (0, 1)})
    assert msg(e.steps[1].formula) == ("shape.pad.operand_index.formula", {"interior_padding": [1, 2]})
    assert msg(e.steps[1].substituted) == ("shape.pad.operand_index.substituted",
                                           {"shifted": (2, 3), "steps": (2, 3)})
    copied(e, "%arg0", "1, 1")


def test_explain_pad_hole_and_low_edge():
    e = spec_pad().explain((1, 0))
    assert e.value == 0 and e.steps[1].dim_roles == {0: DimRole("hole"), 1: DimRole("padding_low")}
    assert steps(e)["result_index - edge_padding_low"] == (1, -1)
    # each quotient that is no operand index says why, with its numbers
    hole, below = steps(e)["operand_index"]
    assert msg(hole) == ("shape.pad.reason.hole", {"shifted": 1, "step": 2, "last": 1})
    assert msg(below) == ("shape.pad.reason.below", {"shifted": -1, "step": 3, "last": 2})
    last = e.steps[-1]
    assert last.name == "result[result_index]" and last.value == 0
    assert msg(last.formula) == ("shape.pad.value.formula", {})
    assert msg(last.substituted) == ("shape.expr", {"expr": "%arg1"})
    # the note lists the dims no operand element sits on, by their roles
    (note,) = e.notes
    assert note.key == "shape.pad.note.no_operand"
    chain = note.args["dims"]
    assert chain.key == "shape.pad.note.and"
    assert msg(chain.args["first"]) == ("shape.pad.note.dim", {"d": 0, "role": DimRole("hole")})
    assert msg(chain.args["rest"]) == ("shape.pad.note.dim", {"d": 1, "role": DimRole("padding_low")})
    lines = format_explanation(e).splitlines()
    assert lines[0] == "pad result[1, 0] = 0"


def test_explain_pad_calls_dilation_holes_holes():
    """A position between two operand elements is a hole (interior padding), not edge padding."""
    e = spec_pad().explain((1, 0))
    assert text(e.steps[1].dim_roles[0].message()) == "hole (between dilated elements)"
    assert text(steps(e)["operand_index"][0]) == "1/2 not an integer: a hole between two elements"
    assert text(e.notes[0]).endswith(": dim 0 is hole (between dilated elements); dim 1 is low edge padding")
    assert "dims: 0: hole (between dilated elements), 1: low edge padding" in format_explanation(e)


def test_explain_pad_high_edge():
    e = spec_pad().explain((4, 8))
    assert e.steps[1].dim_roles == {0: DimRole("padding_high"), 1: DimRole("padding_high")}
    assert [msg(v) for v in steps(e)["operand_index"]] == [
        ("shape.pad.reason.past", {"shifted": 4, "step": 2, "last": 1}),
        ("shape.pad.reason.past", {"shifted": 7, "step": 3, "last": 2})]
    assert PAD_KINDS == ("operand", "padding_low", "padding_high", "hole")


def test_explain_transpose():
    e = run("stablehlo.transpose", [X232], {"permutation": arr(2, 1, 0)}, [t((2, 3, 2))]).explain((1, 2, 0))
    assert steps(e)["operand_index"] == (0, 2, 1) and e.value == 6
    assert e.steps[0].dim_roles == {0: DimRole("operand_dim", d=2), 1: DimRole("operand_dim", d=1),
                                    2: DimRole("operand_dim", d=0)}
    assert msg(e.steps[0].formula) == ("shape.transpose.operand_index.formula", {"permutation": [2, 1, 0]})
    # operand dim p reads result dim d with permutation[d] = p
    assert msg(e.steps[0].substituted) == ("shape.transpose.operand_index.substituted",
                                           {"result_index": (1, 2, 0), "dims": "2, 1, 0"})
    copied(e, "%arg0", "0, 2, 1")
    x = np.arange(6, dtype=I32).reshape(1, 2, 3)
    e = run("stablehlo.transpose", [x], {"permutation": arr(1, 2, 0)}, [t((2, 3, 1))]).explain((1, 2, 0))
    assert steps(e)["operand_index"] == (0, 1, 2) and e.value == 5
    assert e.steps[0].substituted.args == {"result_index": (1, 2, 0), "dims": "2, 0, 1"}


def test_explain_slice():
    x = np.arange(12, dtype=I32).reshape(3, 4)
    e = run("stablehlo.slice", [x], {"start_indices": arr(1, 0), "limit_indices": arr(3, 4),
                                     "strides": arr(1, 3)}, [t((2, 2))]).explain((1, 1))
    assert steps(e)["operand_index"] == (2, 3) and e.value == 11
    assert msg(e.steps[0].formula) == ("shape.slice.operand_index.formula", {})
    assert msg(e.steps[0].substituted) == ("shape.slice.operand_index.substituted",
                                           {"start_indices": [1, 0], "result_index": [1, 1],
                                            "strides": [1, 3]})
    assert text(e.steps[0].substituted) == "[1, 0] + [1, 1] * [1, 3]"
    copied(e, "%arg0", "2, 3")


def test_explain_broadcast_in_dim():
    e = run("stablehlo.broadcast_in_dim", [np.array([[1, 2, 3]], I32)],
            {"broadcast_dimensions": arr(2, 1)}, [t((2, 3, 2))]).explain((1, 2, 1))
    assert steps(e)["operand_index"] == (0, 2) and e.value == 3
    assert e.steps[0].dim_roles == {0: DimRole("new"), 1: DimRole("operand_dim", d=1),
                                    2: DimRole("pinned", d=0)}
    assert msg(e.steps[0].formula) == ("shape.broadcast_in_dim.operand_index.formula",
                                       {"broadcast_dimensions": [2, 1]})
    # operand dim 0 has size 1: 0; operand dim 1 reads result dim broadcast_dimensions[1] = 1
    assert msg(e.steps[0].substituted) == ("shape.tuple", {"parts": "0, (1, 2, 1)[1]"})
    copied(e, "%arg0", "0, 2")
    e = run("stablehlo.broadcast_in_dim", [np.array([4, 5], I32)],
            {"broadcast_dimensions": arr(0)}, [t((2, 3))]).explain((1, 2))
    assert steps(e)["operand_index"] == (1,) and e.value == 5
    assert text(e.steps[0].substituted) == "((1, 2)[0],)"


def test_explain_reverse():
    x = np.arange(12, dtype=I32).reshape(3, 4)
    e = run("stablehlo.reverse", [x], {"dimensions": arr(1)}, [t((3, 4))]).explain((2, 0))
    assert steps(e)["operand_index"] == (2, 3) and e.value == 11
    assert e.steps[0].dim_roles == {0: DimRole("kept"), 1: DimRole("reversed")}
    assert msg(e.steps[0].formula) == ("shape.reverse.operand_index.formula", {"dimensions": [1]})
    assert msg(e.steps[0].substituted) == ("shape.tuple", {"parts": "2, 4 - 0 - 1"})
    copied(e, "%arg0", "2, 3")


def test_explain_reshape():
    x = np.arange(12, dtype=I32).reshape(3, 4)
    e = run("stablehlo.reshape", [x], None, [t((2, 6))]).explain((1, 1))
    assert steps(e)["position"] == 7 and steps(e)["operand_index"] == (1, 3) and e.value == 7
    assert msg(e.steps[0].formula) == ("shape.reshape.position.formula", {"shape": (2, 6)})
    assert msg(e.steps[0].substituted) == ("shape.expr", {"expr": "1 * 6 + 1"})
    assert msg(e.steps[1].formula) == ("shape.reshape.operand_index.formula", {"shape": (3, 4)})
    assert msg(e.steps[1].substituted) == ("shape.tuple", {"parts": "7 // 4, 7 % 4"})
    copied(e, "%arg0", "1, 3")
    y = np.arange(24, dtype=I32)
    e = run("stablehlo.reshape", [y], None, [t((2, 3, 4))]).explain((1, 2, 3))
    assert steps(e)["position"] == 23 and steps(e)["operand_index"] == (23,) and e.value == 23
    assert e.steps[0].substituted.args == {"expr": "1 * 12 + 2 * 4 + 3"}
    assert e.steps[1].substituted is None  # a rank-1 index is its position
    e = run("stablehlo.reshape", [np.arange(24, dtype=I32).reshape(2, 3, 4)], None, [t((24,))]).explain((23,))
    assert steps(e)["operand_index"] == (1, 2, 3) and e.steps[0].substituted is None
    assert e.steps[1].substituted.args == {"parts": "23 // 12, 23 // 4 % 3, 23 % 4"}


def test_explain_concatenate():
    r = run("stablehlo.concatenate", [np.array([[1, 2], [3, 4], [5, 6]]), np.array([[7, 8]])],
            {"dimension": i64(0)}, [t((4, 2), "i64")])
    e = r.explain((3, 1))
    assert steps(e)["k"] == 1 and steps(e)["kd"] == 0 and steps(e)["operand_index"] == (0, 1)
    assert msg(e.steps[0].formula) == ("shape.concatenate.k.formula", {"dimension": 0})
    assert msg(e.steps[0].substituted) == ("shape.concatenate.k.substituted",
                                           {"low": 3, "id": 3, "high": 4, "sizes": [3, 1]})
    assert msg(e.steps[1].substituted) == ("shape.concatenate.kd.substituted", {"id": 3, "before": "3"})
    assert e.steps[2].dim_roles == {0: DimRole("concatenated")}
    assert msg(e.steps[2].substituted) == ("shape.concatenate.operand_index.substituted",
                                           {"result_index": (3, 1), "id": 3, "dimension": 0, "kd": 0})
    copied(e, "%arg1", "0, 1", symbol="inputs[k]")
    assert e.value == 8
    e = r.explain((2, 0))
    assert steps(e)["k"] == 0 and e.steps[1].substituted.args == {"id": 2, "before": "0"}
    copied(e, "%arg0", "2, 0", symbol="inputs[k]")


def test_explain_iota_and_constant():
    e = run("stablehlo.iota", [], {"iota_dimension": i64(1)}, [t((2, 5), "f32")]).explain((1, 3))
    assert e.value == 3.0 and steps(e)["output_index[iota_dimension]"] == 3
    assert e.steps[0].dim_roles == {1: DimRole("iota")} and e.steps[0].formula is None
    assert msg(e.steps[0].substituted) == ("shape.iota.index.substituted",
                                           {"output_index": (1, 3), "iota_dimension": 1})
    assert msg(e.steps[1].formula) == ("shape.iota.output.formula", {})
    assert msg(e.steps[1].substituted) == ("shape.iota.output.substituted",
                                           {"index": 3, "element_type": "f32"})
    assert [msg(n) for n in e.notes] == [("shape.iota.note", {})]
    attr = DenseElementsAttr(t((2,), "f32"), np.array([1.5, 2.5], np.float32))
    e = run("stablehlo.constant", [], {"value": attr}, [t((2,), "f32")]).explain((1,))
    assert e.value == 2.5 and [msg(n) for n in e.notes] == [("shape.constant.note", {})]
    assert msg(e.steps[0].substituted) == ("explain.element", {"name": "value", "index": "1"})


def test_explain_tuple_and_barrier():
    a = np.zeros(2, I32)
    e = run("stablehlo.tuple", [a, a], None, [TupleType((t((2,)), t((2,))))]).explain(())
    assert msg(e.steps[0].formula) == ("shape.tuple_op.formula", {})
    assert msg(e.steps[0].substituted) == ("shape.tuple", {"parts": "%arg0, %arg1"})
    children = e.steps[0].children
    assert [c.name for c in children] == ["result[0]", "result[1]"]
    assert [msg(c.formula) for c in children] == [("shape.tuple_op.element", {"i": 0}),
                                                  ("shape.tuple_op.element", {"i": 1})]
    assert [msg(c.substituted) for c in children] == [("shape.expr", {"expr": "%arg0"}),
                                                      ("shape.expr", {"expr": "%arg1"})]
    e = run("stablehlo.optimization_barrier", [a, np.arange(3, dtype=I32)], None,
            [t((2,)), t((3,))]).explain((2,), result=1)
    assert e.value == 2 and e.result == 1 and e.steps[0].name == "result#1[2]"
    assert msg(e.steps[0].formula) == ("shape.optimization_barrier.formula", {"result": 1})
    assert msg(e.steps[0].substituted) == ("explain.element", {"name": "%arg1", "index": "2"})


def test_explain_get_tuple_element():
    a = np.array([4, 5], I32)
    tt = TupleType((t((2,)), t(())))
    r = run("stablehlo.get_tuple_element", [(a, np.array(1, I32))], {"index": i64(0)}, [t((2,))], [tt])
    e = r.explain((1,))
    assert e.value == 5 and [s.name for s in e.steps] == ["result", "result[result_index]"]
    assert [msg(s.substituted) for s in e.steps] == [
        ("shape.get_tuple_element.substituted", {"name": "%arg0", "index": 0}),
        ("shape.get_tuple_element.element_substituted", {"name": "%arg0", "index": 0, "result_index": "1"})]
    assert [text(s.substituted) for s in e.steps] == ["%arg0[0]", "%arg0[0][1]"]
    assert [msg(n) for n in e.notes] == [("shape.get_tuple_element.note", {})]
    assert "get_tuple_element result[1] = 5" in format_explanation(e)
    with pytest.raises(ExecutionError, match="out of range"):
        r.explain((2,))


def test_explain_rejects_bad_index():
    r = spec_pad()
    with pytest.raises(ExecutionError, match=r"result index \(5, 0\) is out of range for shape \(5, 9\)"):
        r.explain((5, 0))
    with pytest.raises(ExecutionError, match="out of range"):
        r.explain((1,))
    with pytest.raises(ExecutionError, match="result #1 does not exist"):
        r.explain((0, 0), result=1)


# --- records and result type inference ---------------------------------------------------

RECORDS_TEXT = """
func.func @main(%a: tensor<3x4xf32>, %p: tensor<f32>) -> tensor<2x1xf32> {
  %0 = stablehlo.slice %a [1:3, 0:4:3] : (tensor<3x4xf32>) -> tensor<2x2xf32>
  %1 = stablehlo.pad %a, %p, low = [0, 1], high = [1, -1], interior = [1, 0]
    : (tensor<3x4xf32>, tensor<f32>) -> tensor<6x4xf32>
  %2 = stablehlo.transpose %a, dims = [1, 0] : (tensor<3x4xf32>) -> tensor<4x3xf32>
  %3 = stablehlo.broadcast_in_dim %p, dims = [] : (tensor<f32>) -> tensor<2x1xf32>
  %4 = stablehlo.concatenate %a, %a, dim = 1 : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x8xf32>
  %5 = stablehlo.reverse %a, dims = [0] : tensor<3x4xf32>
  %6 = stablehlo.iota dim = 1 : tensor<2x5xi32>
  %7 = stablehlo.constant dense<[1.5, 2.0]> : tensor<2xf32>
  %8 = stablehlo.tuple %p, %a : tuple<tensor<f32>, tensor<3x4xf32>>
  %9 = stablehlo.get_tuple_element %8[1] : (tuple<tensor<f32>, tensor<3x4xf32>>) -> tensor<3x4xf32>
  return %3 : tensor<2x1xf32>
}
"""


def _records_module():
    from hlolab.ir.parser import parse_module
    return parse_module(RECORDS_TEXT)


def test_records_read_the_spec_names_and_write_them_back():
    from hlolab.ops.shape import (
        BroadcastInDimAttrs,
        ConcatenateAttrs,
        GetTupleElementAttrs,
        IotaAttrs,
        PadAttrs,
        ReverseAttrs,
        SliceAttrs,
        TransposeAttrs,
    )
    ops = {op.name.removeprefix("stablehlo."): op for op in _records_module().walk()}
    recs = {name: OpCall(op).attrs for name, op in ops.items()}
    assert recs["slice"] == SliceAttrs(start_indices=(1, 0), limit_indices=(3, 4), strides=(1, 3))
    assert recs["pad"] == PadAttrs(edge_padding_low=(0, 1), edge_padding_high=(1, -1),
                                   interior_padding=(1, 0))
    assert recs["transpose"] == TransposeAttrs(permutation=(1, 0))
    assert recs["broadcast_in_dim"] == BroadcastInDimAttrs(broadcast_dimensions=())
    assert recs["concatenate"] == ConcatenateAttrs(dimension=1)
    assert recs["reverse"] == ReverseAttrs(dimensions=(0,))
    assert recs["iota"] == IotaAttrs(iota_dimension=1)
    assert recs["get_tuple_element"] == GetTupleElementAttrs(index=1)
    assert recs["constant"].value.array.tolist() == [1.5, 2.0]
    for name, op in ops.items():
        if name != "return":
            assert recs[name].to_ir() == op.attributes, name
    # spelled as the pretty forms spell them: array<i64: ...>, an i64 dim, an i32 index
    assert recs["pad"].to_ir()["edge_padding_high"] == arr(1, -1)
    assert str(ConcatenateAttrs(dimension=1).to_ir()["dimension"]) == "1 : i64"
    assert str(GetTupleElementAttrs(index=1).to_ir()["index"]) == "1 : i32"


def test_infer_gives_each_declared_result_type_of_the_module():
    from hlolab.ops.record import type_admits
    for op in _records_module().walk():
        d = lookup(op.name)
        if d is None:
            continue
        out = d.infer(OpCall(op).attrs, op.operand_types)
        assert len(out) == len(op.result_types), op.name
        assert all(type_admits(a, b) for a, b in zip(out, op.result_types, strict=True)), op.name


def test_infer_slice_pad_concatenate_give_full_types_dynamic_sizes_kept():
    from hlolab.ops.record import InferError
    from hlolab.ops.shape import (
        ConcatenateAttrs,
        PadAttrs,
        SliceAttrs,
        infer_concatenate,
        infer_pad,
        infer_slice,
    )
    sl = SliceAttrs(start_indices=(1, 0), limit_indices=(3, 5), strides=(1, 2))
    assert infer_slice(sl, [t((3, 5))]) == [t((2, 3))]
    assert infer_slice(sl, [t((None, 5), "f32")]) == [t((2, 3), "f32")]  # limits are static
    for bad, label in [(sl.replace(strides=(1,)), "C2"), (sl.replace(limit_indices=(4, 5)), "C3"),
                       (sl.replace(start_indices=(4, 0)), "C3"), (sl.replace(strides=(0, 1)), "C4")]:
        with pytest.raises(InferError) as info:
            infer_slice(bad, [t((3, 5))])
        assert info.value.constraint == label
    pad = PadAttrs(edge_padding_low=(0, 1), edge_padding_high=(2, 1), interior_padding=(1, 2))
    assert infer_pad(pad, [t((2, 3)), t(())]) == [t((5, 9))]  # the spec's example
    assert infer_pad(pad, [t((None, 0)), t(())]) == [t((None, 2))]  # an empty dim gets no interior
    for attrs, types, label in [
            (pad.replace(edge_padding_low=(-6, 1)), [t((2, 3)), t(())], "C4"),  # 2 - 6 + 1 + 2 < 0
            (pad.replace(interior_padding=(1,)), [t((2, 3)), t(())], "C2"),
            (pad.replace(interior_padding=(-1, 0)), [t((2, 3)), t(())], "C3"),
            (pad, [t((2, 3)), t((), "f32")], "C1"), (pad, [t((2, 3)), t((1,))], "I2"),
            (pad, [t((2, 3))], "I2")]:
        with pytest.raises(InferError) as info:
            infer_pad(attrs, types)
        assert info.value.constraint == label
    cat = ConcatenateAttrs(dimension=1)
    assert infer_concatenate(cat, [t((2, 3)), t((2, 1)), t((2, 4))]) == [t((2, 8))]
    assert infer_concatenate(cat, [t((None, 3)), t((2, None))]) == [t((None, None))]
    for attrs, types, label in [(cat, [], "C3"), (cat, [t((2, 3)), t((2, 3), "f32")], "C1"),
                                (cat.replace(dimension=2), [t((2, 3))], "C4"),
                                (cat, [t((2, 3)), t((3, 3))], "C2"), (cat, [t((2, 3)), t((2,))], "C2")]:
        with pytest.raises(InferError) as info:
            infer_concatenate(attrs, types)
        assert info.value.constraint == label


def test_infer_transpose_moves_the_quantization_dimension_and_reverse_keeps_the_type():
    from hlolab.ops.record import InferError
    from hlolab.ops.shape import ReverseAttrs, TransposeAttrs, infer_reverse, infer_transpose
    perm = TransposeAttrs(permutation=(2, 0, 1))
    assert infer_transpose(perm, [t((2, None, 4))]) == [t((4, 2, None))]
    # operand dim 0 (quantized along) lands at result dim 1: permutation[1] = 0 (C4)
    assert infer_transpose(TransposeAttrs(permutation=(1, 0)), [t((3, 2), QAXIS0)]) == [t((2, 3), QAXIS1)]
    for bad in [(0, 0, 1), (0, 1), (0, 1, 3)]:
        with pytest.raises(InferError) as info:
            infer_transpose(TransposeAttrs(permutation=bad), [t((2, 3, 4))])
        assert info.value.constraint == "C2"
    rev = ReverseAttrs(dimensions=(0, 2))
    assert infer_reverse(rev, [t((2, None, 4), Q8)]) == [t((2, None, 4), Q8)]
    for bad, label in [((1, 1), "C2"), ((3,), "C3"), ((-1,), "C3")]:
        with pytest.raises(InferError) as info:
            infer_reverse(ReverseAttrs(dimensions=bad), [t((2, 3, 4))])
        assert info.value.constraint == label
    with pytest.raises(InferError, match="per-tensor") as info:
        infer_reverse(rev, [t((3, 2, 1), QAXIS0)])
    assert info.value.constraint == "I1"


def test_infer_leaves_reshape_broadcast_iota_shapes_to_the_declared_type():
    from hlolab.ops.record import Attrs, InferError, Partial, type_admits
    from hlolab.ops.shape import (
        BroadcastInDimAttrs,
        IotaAttrs,
        infer_broadcast_in_dim,
        infer_iota,
        infer_reshape,
    )
    (r,) = infer_reshape(Attrs(), [t((2, 3))])
    assert isinstance(r, Partial) and r.shape is None and r.element == element_type("i32")
    assert type_admits(r, t((6,))) and type_admits(r, t((3, 1, 2))) and type_admits(r, t((None, 2)))
    assert not type_admits(r, t((7,))) and not type_admits(r, t((6,), "f32"))
    assert str(r) == "a tensor of 6 elements of i32"
    # per-axis: the quantization dimension may move, its size and the sizes around it may not (C3)
    (q,) = infer_reshape(Attrs(), [t((3, 2), QAXIS1)])
    assert type_admits(q, t((3, 1, 2), dataclass_replace(QAXIS1, axis=2)))
    assert not type_admits(q, t((2, 3), QAXIS1))
    (b,) = infer_broadcast_in_dim(BroadcastInDimAttrs(broadcast_dimensions=(2, 0)), [t((1, 3), "f32")])
    assert isinstance(b, Partial) and b.element == element_type("f32")
    assert type_admits(b, t((3, 5, 7), "f32")) and type_admits(b, t((None, 1, 2), "f32"))
    assert not type_admits(b, t((4, 5, 7), "f32"))  # operand dim 1 (3) lands on a 4 (C5)
    assert not type_admits(b, t((3, 5), "f32"))  # no result dim 2 (C3)
    assert not type_admits(b, t((3, 5, 7), "f16"))  # (C1)
    for dims, label in [((0,), "C2"), ((-1, 0), "C3"), ((1, 1), "C4")]:
        with pytest.raises(InferError) as info:
            infer_broadcast_in_dim(BroadcastInDimAttrs(broadcast_dimensions=dims), [t((1, 3))])
        assert info.value.constraint == label
    (i,) = infer_iota(IotaAttrs(iota_dimension=1), [])
    assert isinstance(i, Partial)
    assert type_admits(i, t((4, 5), "bf16")) and type_admits(i, t((2, 2), Q8))
    assert not type_admits(i, t((4,))) and not type_admits(i, t((4, 5), "i1"))
    assert not type_admits(i, t((2, 2), QAXIS0)) and not type_admits(i, TupleType(()))
    with pytest.raises(InferError) as info:
        infer_iota(IotaAttrs(iota_dimension=-1), [])
    assert info.value.constraint == "C1"


def test_infer_constant_tuple_get_tuple_element_barrier():
    from hlolab.ops.record import InferError, Partial, type_admits
    from hlolab.ops.shape import (
        ConstantAttrs,
        GetTupleElementAttrs,
        infer_constant,
        infer_get_tuple_element,
        infer_optimization_barrier,
        infer_tuple,
    )
    f = DenseElementsAttr(t((2,), "f32"), np.zeros(2, np.float32))
    assert infer_constant(ConstantAttrs(value=f), []) == [t((2,), "f32")]
    # integer values may be the storage of a quantized output (as MLIR accepts it)
    (c,) = infer_constant(ConstantAttrs(value=DenseElementsAttr(t((2,), "i8"), np.zeros(2, np.int8))), [])
    assert isinstance(c, Partial) and c.shape == (2,)
    assert type_admits(c, t((2,), "i8")) and type_admits(c, t((2,), Q8))
    assert not type_admits(c, t((2,), "i16")) and not type_admits(c, t((3,), "i8"))
    inner = TupleType((t(()), TokenType()))
    assert infer_tuple(Attrs_(), [t((2,)), inner]) == [TupleType((t((2,)), inner))]
    assert infer_tuple(Attrs_(), []) == [TupleType(())]
    assert infer_get_tuple_element(GetTupleElementAttrs(index=1), [inner]) == [TokenType()]
    for types, index, label in [([inner], 2, "C1"), ([inner], -1, "C1"), ([t((2,))], 0, "I1"), ([], 0, "I1")]:
        with pytest.raises(InferError) as info:
            infer_get_tuple_element(GetTupleElementAttrs(index=index), types)
        assert info.value.constraint == label
    assert infer_optimization_barrier(Attrs_(), [t((2,)), TokenType()]) == [t((2,)), TokenType()]
    with pytest.raises(InferError, match="per-tensor quantized tensor or token"):
        infer_optimization_barrier(Attrs_(), [t((2, 2), QAXIS0)])


@pytest.mark.parametrize("name", ["constant", "iota", "reshape", "transpose", "broadcast_in_dim", "slice",
                                  "concatenate", "reverse", "pad", "tuple", "get_tuple_element",
                                  "optimization_barrier"])
def test_infer_raises_only_infer_error_on_operands_that_are_no_tensors(name):
    from hlolab.ops.record import InferError
    d = lookup(f"stablehlo.{name}")
    assert d.family == "shape"
    rec = RECORD_OF[name]
    for types in ([], [TokenType()], [TupleType(())], [TokenType(), TokenType()]):
        try:
            d.infer(rec, types)
        except InferError:
            pass


RECORD_OF: dict[str, Any] = {}


def _fill_records() -> None:
    from hlolab.ops import shape
    RECORD_OF.update({
        "constant": shape.ConstantAttrs(value=DenseElementsAttr(t((), "f32"), np.zeros((), np.float32))),
        "iota": shape.IotaAttrs(iota_dimension=0), "reshape": Attrs_(),
        "transpose": shape.TransposeAttrs(permutation=(0,)),
        "broadcast_in_dim": shape.BroadcastInDimAttrs(broadcast_dimensions=(0,)),
        "slice": shape.SliceAttrs(start_indices=(0,), limit_indices=(1,), strides=(1,)),
        "concatenate": shape.ConcatenateAttrs(dimension=0), "reverse": shape.ReverseAttrs(dimensions=(0,)),
        "pad": shape.PadAttrs(edge_padding_low=(0,), edge_padding_high=(0,), interior_padding=(0,)),
        "tuple": Attrs_(), "get_tuple_element": shape.GetTupleElementAttrs(index=0),
        "optimization_barrier": Attrs_()})


_fill_records()


def test_module_verification_admits_storage_typed_quantized_constant_and_moved_axis():
    from hlolab.ir.parser import parse_module
    from hlolab.ops.verify import verify_module
    q = "!quant.uniform<i8:f32, 0.5>"
    q0, q1 = "!quant.uniform<i8:f32:0, {0.5, 0.25}>", "!quant.uniform<i8:f32:1, {0.5, 0.25}>"
    m = parse_module(f"""
func.func @main(%x: tensor<2x3x{q0}>) -> tensor<3x2x{q1}> {{
  %c = "stablehlo.constant"() {{value = dense<[7, -1]> : tensor<2xi8>}} : () -> tensor<2x{q}>
  %t = stablehlo.transpose %x, dims = [1, 0] : (tensor<2x3x{q0}>) -> tensor<3x2x{q1}>
  return %t : tensor<3x2x{q1}>
}}""")
    verify_module(m)
    assert m.verified


def test_schemas_build_records_and_take_result_types_from_infer():
    from hlolab.ops.examples import make_example, schema_for
    from hlolab.ops.shape import PadAttrs, SliceAttrs
    s = schema_for("stablehlo.pad")
    parts = s.build(s.resolve("spec-example"))
    assert parts.attrs == PadAttrs(edge_padding_low=(0, 1), edge_padding_high=(2, 1), interior_padding=(1, 2))
    assert parts.results == [t((5, 9))]
    s = schema_for("stablehlo.slice")
    parts = s.build(s.resolve("default"))
    assert parts.attrs == SliceAttrs(start_indices=(1, 0), limit_indices=(3, 5), strides=(1, 2))
    assert parts.results == [t((2, 3), "f32")]
    ex = make_example("stablehlo.concatenate", params={"dimension": 0, "input1": (1, 3)})
    assert "-> tensor<3x3xf32>" in ex.text and "dimension = 0 : i64" in ex.text
    # parameters that break a constraint are reported as the constraint they break
    with pytest.raises(VerificationError, match=r"pad \(C4\)"):
        make_example("stablehlo.pad", params={"edge_padding_low": (-5, 0)})
    with pytest.raises(VerificationError, match=r"reverse \(C3\)"):
        make_example("stablehlo.reverse", params={"dimensions": (4,)})
    ex = make_example("stablehlo.optimization_barrier", params={"count": 3})
    # 3 operands and 3 results of the same type: in @main's signature, the op's and the return's
    assert ex.text.count("tensor<2x3xf32>") == 3 * 5


# --- oracle: jax.lax ------------------------------------------------------------------

def _jax():
    if require_oracle():
        import jax
    else:
        jax = pytest.importorskip("jax", reason="SKIPPED LOUDLY: jax is not installed "
                                  "(pip install -e '.[oracle]'); no oracle comparison ran")
    return jax


RNG = np.random.default_rng(7)
ORACLE_DTYPES = [np.int32, np.float32, ml_dtypes.bfloat16, np.uint8]


def _rand(shape, dtype):
    lo, hi = (0, 200) if np.dtype(dtype).kind == "u" else (-50, 50)
    return RNG.integers(lo, hi, shape).astype(dtype)


def _elem(dtype) -> str:
    return {np.dtype(np.int32): "i32", np.dtype(np.float32): "f32", np.dtype(ml_dtypes.bfloat16): "bf16",
            np.dtype(np.uint8): "ui8"}[np.dtype(dtype)]


@pytest.mark.parametrize("dtype", ORACLE_DTYPES)
def test_oracle_pad(dtype):
    jax = _jax()
    for shape, config in [((3, 4), [(1, 2, 1), (-1, 0, 2)]), ((5,), [(-2, -1, 3)]),
                          ((2, 3, 2), [(0, 0, 0), (2, -3, 1), (-1, 1, 0)]),
                          ((4, 1), [(-4, 1, 0), (0, 0, 5)])]:
        x, pv = _rand(shape, dtype), np.array(9, dtype)
        want = np.asarray(jax.lax.pad(x, pv, config))
        (got,) = apply_op("stablehlo.pad", [x, pv],
                          dict(edge_padding_low=arr(*[c[0] for c in config]),
                               edge_padding_high=arr(*[c[1] for c in config]),
                               interior_padding=arr(*[c[2] for c in config])),
                          [t(want.shape, _elem(dtype))])
        same(got, want, dtype)


@pytest.mark.parametrize("dtype", ORACLE_DTYPES)
def test_oracle_slice_transpose_reverse_reshape(dtype):
    jax = _jax()
    x = _rand((4, 5, 6), dtype)
    e = _elem(dtype)
    for start, limit, strides in [((0, 1, 2), (4, 5, 6), (1, 2, 3)), ((3, 0, 5), (4, 5, 6), (2, 4, 1)),
                                  ((1, 2, 0), (1, 5, 6), (1, 1, 7))]:
        want = np.asarray(jax.lax.slice(x, start, limit, strides))
        (got,) = apply_op("stablehlo.slice", [x], {"start_indices": arr(*start), "limit_indices": arr(*limit),
                                                   "strides": arr(*strides)}, [t(want.shape, e)])
        same(got, want, dtype)
    for perm in [(2, 0, 1), (1, 2, 0), (0, 2, 1)]:
        want = np.asarray(jax.lax.transpose(x, perm))
        (got,) = apply_op("stablehlo.transpose", [x], {"permutation": arr(*perm)}, [t(want.shape, e)])
        same(got, want, dtype)
    for dims in [(0,), (1, 2), (0, 1, 2)]:
        want = np.asarray(jax.lax.rev(x, dims))
        (got,) = apply_op("stablehlo.reverse", [x], {"dimensions": arr(*dims)}, [t(want.shape, e)])
        same(got, want, dtype)
    for shape in [(120,), (6, 20), (2, 3, 4, 5)]:
        want = np.asarray(jax.lax.reshape(x, shape))
        (got,) = apply_op("stablehlo.reshape", [x], None, [t(shape, e)])
        same(got, want, dtype)


@pytest.mark.parametrize("dtype", ORACLE_DTYPES)
def test_oracle_broadcast_concatenate(dtype):
    jax = _jax()
    e = _elem(dtype)
    for shape, out, dims in [((3, 1), (2, 3, 4), (1, 0)), ((1, 4), (3, 4, 5), (2, 1)), ((), (2, 2), ()),
                             ((2, 3), (3, 2, 5), (1, 0))]:
        x = _rand(shape, dtype)
        want = np.asarray(jax.lax.broadcast_in_dim(x, out, dims))
        (got,) = apply_op("stablehlo.broadcast_in_dim", [x], {"broadcast_dimensions": arr(*dims)},
                          [t(out, e)])
        same(got, want, dtype)
    parts = [_rand((2, n, 3), dtype) for n in (1, 4, 2)]
    want = np.asarray(jax.lax.concatenate(parts, 1))
    (got,) = apply_op("stablehlo.concatenate", parts, {"dimension": i64(1)}, [t(want.shape, e)])
    same(got, want, dtype)


@pytest.mark.parametrize("elem, n", [("bf16", 1200), ("f16", 66000), ("f8E4M3FN", 500), ("f8E5M2", 70000)])
def test_oracle_iota_float_rounding(elem, n):
    jax = _jax()
    import jax.numpy as jnp

    dtype = element_type(elem).dtype
    want = np.asarray(jax.lax.iota(jnp.dtype(dtype), n))
    (got,) = apply_op("stablehlo.iota", [], {"iota_dimension": i64(0)}, [t((n,), elem)])
    assert got.dtype == want.dtype
    same_nan = np.isnan(got.astype(np.float32)) & np.isnan(want.astype(np.float32))
    assert np.array_equal(got.astype(np.float32)[~same_nan], want.astype(np.float32)[~same_nan])
