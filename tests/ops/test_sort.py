"""sort: spec/XLA examples, recognized and general comparators, NaN/-0.0 ordering,
constraints, provenance (checked against the values) and explain."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hlolab.errors import VerificationError
from hlolab.interp.engine import Interpreter
from hlolab.interp.single import evaluate_op
from hlolab.ir.parser import parse_module
from hlolab.ops.registry import OpCall, lookup
from hlolab.ops.sort import merge_sort_permutation, recognize_comparator
from hlolab.session import Session
from hlolab.trace.explain import DimRole, format_explanation

CMP = """
  ^bb0({args}):
    %p = stablehlo.compare {dir}, {lhs}, {rhs}{ctype} : ({et}, {et}) -> tensor<i1>
    stablehlo.return %p : tensor<i1>"""


def program(types: list[str], shape: str, body: str, dim: int = 0, stable: bool = True) -> str:
    tts = [f"tensor<{shape}x{e}>" if shape else f"tensor<{e}>" for e in types]
    params = ", ".join(f"%x{i}: {t}" for i, t in enumerate(tts))
    ins = ", ".join(f"%x{i}" for i in range(len(tts)))
    sig = ", ".join(tts)
    n = len(tts)
    res = ", ".join(f"%r#{i}" for i in range(n)) if n > 1 else "%r"
    lhs = f"%r:{n}" if n > 1 else "%r"
    return (f"func.func @main({params}) -> ({sig}) {{\n  {lhs} = \"stablehlo.sort\"({ins}) ({{{body}\n"
            f"  }}) {{dimension = {dim} : i64, is_stable = {str(stable).lower()}}} : ({sig}) -> ({sig})\n"
            f"  return {res} : {sig}\n}}")


def cmp_body(types: list[str], key: int = 0, direction: str = "LT", ctype: str = "",
             swapped: bool = False) -> str:
    args = ", ".join(f"%a{2 * i}: tensor<{e}>, %a{2 * i + 1}: tensor<{e}>" for i, e in enumerate(types))
    lhs, rhs = f"%a{2 * key}", f"%a{2 * key + 1}"
    if swapped:
        lhs, rhs = rhs, lhs
    return CMP.format(args=args, dir=direction, lhs=lhs, rhs=rhs, ctype=f", {ctype}" if ctype else "",
                      et=f"tensor<{types[key]}>")


def run_sort(text: str, inputs: list[np.ndarray]):
    """Evaluate the sort op of ``text`` directly (recognized comparators need no interpreter)."""
    module = parse_module(text)
    op = next(o for o in module.walk() if o.name == "stablehlo.sort")
    call = OpCall(op)
    out = evaluate_op(op, inputs, call)
    d = lookup("stablehlo.sort")
    return out, d.provenance(call, inputs, out), functools.partial(d.explain, call, inputs, out), call


# --- examples --------------------------------------------------------------------------

def test_spec_example():
    text = program(["i64", "i64"], "2x3", cmp_body(["i64", "i64"], 0, "GT"), dim=0)
    out, prov, explain, _ = run_sort(text, [np.array([[1, 2, 3], [3, 2, 1]]),
                                            np.array([[3, 2, 1], [1, 2, 3]])])
    assert out[0].tolist() == [[3, 2, 3], [1, 2, 1]]
    assert out[1].tolist() == [[1, 2, 1], [3, 2, 3]]
    e = explain(1, (0, 1))
    steps = {s.name: s for s in e.steps if isinstance(s.name, str)}
    assert steps["adjusted_dimension"].value == 0
    assert steps["adjusted_dimension"].substituted.args == {"dimension": 0, "rank": 2}
    assert steps["result_slice"].value.args == {"row": 1}
    assert steps["result_slice"].substituted.args == {"slice": ":, 1"}
    assert steps["permutation"].value == (0, 1)
    assert steps["permutation"].formula.key == "sort.permutation.formula_stable"
    (source,) = [s for s in e.steps if not isinstance(s.name, str)]
    assert source.name.key == "sort.source_position.name"
    assert source.value == 0 and source.substituted.args == {"position": 0}
    assert source.dim_roles == {0: DimRole("sorted")}
    result = steps["result[result_index]"]
    assert result.value == 2 and result.formula.args == {"result": 1}
    assert result.substituted.args == {"name": "%x1", "index": "0, 1"}
    (note,) = e.notes
    assert note.key == "sort.note.comparator"
    kind = note.args["comparator"]
    assert kind.key == "sort.comparator.argsort"
    cmp = kind.args["comparator"]
    assert cmp.args["direction"] == "GT" and cmp.args["compare_type"] == "SIGNED"
    assert (cmp.args["lhs"].key, cmp.args["lhs"].args) == ("sort.comparator.side", {"key": 0, "side": "lhs"})
    assert "GT(inputs[0] lhs, inputs[0] rhs)" in format_explanation(e)


def test_sorted_dim_role_is_a_dim_role():
    """Regression: the sorted dimension's role was the string "sorted"."""
    x = np.array([[3, 1, 2], [0, 5, 4]], np.int32)
    out, _, explain, _ = run_sort(program(["i32"], "2x3", cmp_body(["i32"]), dim=-1), [x])
    e = explain(0, (1, 2))
    (source,) = [s for s in e.steps if not isinstance(s.name, str)]
    assert source.dim_roles == {1: DimRole("sorted")}
    assert source.value == 1 and e.value == out[0][1, 2] == 5
    assert {s.name: s for s in e.steps if isinstance(s.name, str)}["adjusted_dimension"].substituted.args == \
        {"dimension": -1, "rank": 2}


def test_xla_key_value_example():
    text = program(["i32", "i32"], "2", cmp_body(["i32", "i32"]))
    out, *_ = run_sort(text, [np.array([3, 1], np.int32), np.array([42, 50], np.int32)])
    assert out[0].tolist() == [1, 3] and out[1].tolist() == [50, 42]


# --- recognized comparators --------------------------------------------------------------

@pytest.mark.parametrize("dim", [0, 1, 2, -1, -2, -3])
def test_every_dim_and_negative_dims(dim):
    rng = np.random.default_rng(0)
    x = rng.integers(-5, 5, (3, 4, 5)).astype(np.int32)
    text = program(["i32"], "3x4x5", cmp_body(["i32"]), dim=dim)
    out, *_ = run_sort(text, [x])
    assert out[0].tolist() == np.sort(x, axis=dim).tolist()


@pytest.mark.parametrize("shape,dim", [("0", 0), ("0x3", 1), ("2x0", 0), ("2x0", 1)])
def test_zero_size_tensors_sort(shape, dim):
    """Regression (differential suite): a zero-size operand failed with "cannot reshape array
    of size 0" (the row count of the sort was reshape(-1, 0))."""
    dims = tuple(int(d) for d in shape.split("x"))
    x = np.zeros(dims, np.int32)
    out, *_ = run_sort(program(["i32"], shape, cmp_body(["i32"]), dim=dim), [x])
    assert out[0].shape == dims and out[0].dtype == np.int32


def test_stable_ties_multi_operand_and_descending():
    keys = np.array([2, 1, 2, 1, 0, 2], np.int8)
    vals = np.arange(6, dtype=np.float32)
    text = program(["i8", "f32"], "6", cmp_body(["i8", "f32"], 0, "LT"))
    out, *_ = run_sort(text, [keys, vals])
    assert out[0].tolist() == [0, 1, 1, 2, 2, 2] and out[1].tolist() == [4, 1, 3, 0, 2, 5]
    for direction, swapped in (("GT", False), ("LT", True)):
        text = program(["i8", "f32"], "6", cmp_body(["i8", "f32"], 0, direction, swapped=swapped))
        out, *_ = run_sort(text, [keys, vals])
        assert out[0].tolist() == [2, 2, 2, 1, 1, 0] and out[1].tolist() == [0, 2, 5, 1, 3, 4]
    # the key may be any input: sort by the second
    text = program(["i8", "f32"], "6", cmp_body(["i8", "f32"], 1, "GT"))
    out, *_ = run_sort(text, [keys, vals])
    assert out[1].tolist() == [5, 4, 3, 2, 1, 0] and out[0].tolist() == keys[::-1].tolist()


def test_unsigned_and_bool_keys():
    x = np.array([2**64 - 1, 0, 2**63, 5], np.uint64)
    out, *_ = run_sort(program(["ui64"], "4", cmp_body(["ui64"])), [x])
    assert out[0].tolist() == [0, 5, 2**63, 2**64 - 1]
    b = np.array([True, False, True, False])
    out, *_ = run_sort(program(["i1"], "4", cmp_body(["i1"])), [b])
    assert out[0].tolist() == [False, False, True, True]


def bits(a: np.ndarray) -> list[int]:
    return a.view(np.uint32).tolist()


def test_totalorder_nan_and_signed_zero():
    nan, neg_nan = np.float32(np.nan), -np.float32(np.nan)
    x = np.array([1.0, -0.0, nan, 0.0, -np.inf, neg_nan, -1.0, np.inf], np.float32)
    out, *_ = run_sort(program(["f32"], "8", cmp_body(["f32"], ctype="TOTALORDER")), [x])
    want = np.array([neg_nan, -np.inf, -1.0, -0.0, 0.0, 1.0, np.inf, nan], np.float32)
    assert bits(out[0]) == bits(want)


def test_float_lt_zeros_tie_and_nan_follows_the_comparator():
    x = np.array([0.0, -0.0, 1.0, -0.0], np.float32)
    out, *_ = run_sort(program(["f32"], "4", cmp_body(["f32"])), [x])
    assert bits(out[0]) == bits(np.array([0.0, -0.0, -0.0, 1.0], np.float32))  # stable: +-0 tie
    # NaN is "equal" to everything under FLOAT LT: a NaN row takes the merge sort, whose
    # result keeps every element and orders the non-NaN runs between NaNs
    x = np.array([3.0, np.nan, 2.0, 1.0], np.float32)
    out, _, explain, _ = run_sort(program(["f32"], "4", cmp_body(["f32"])), [x])
    assert sorted(bits(out[0])) == sorted(bits(x))
    (note,) = explain(0, (0,)).notes
    assert note.args["comparator"].key == "sort.comparator.nan_merge"
    # what our stable merge sort decides under this comparator (XLA: implementation-defined)
    assert np.array_equal(out[0], np.array([np.nan, 3.0, 1.0, 2.0], np.float32), equal_nan=True)


def test_jax_canonicalizing_comparator_is_recognized():
    body = """
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.compare EQ, %a, %c, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %2 = stablehlo.select %1, %c, %a : tensor<i1>, tensor<f32>
    %3 = stablehlo.compare NE, %a, %a, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %n = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %4 = stablehlo.select %3, %n, %2 : tensor<i1>, tensor<f32>
    %5 = stablehlo.compare EQ, %b, %c, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %6 = stablehlo.select %5, %c, %b : tensor<i1>, tensor<f32>
    %7 = stablehlo.compare NE, %b, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %8 = stablehlo.select %7, %n, %6 : tensor<i1>, tensor<f32>
    %9 = stablehlo.compare LT, %4, %8, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %9 : tensor<i1>"""
    x = np.array([np.nan, 0.0, -np.nan, -0.0, -1.0, 1.0], np.float32)
    out, _, _, call = run_sort(program(["f32"], "6", body), [x])
    rec = recognize_comparator(call)
    assert rec is not None and rec.canon_zero and rec.canon_nan is not None
    assert rec.message.args["lhs"].key == "sort.comparator.side_canonical"
    assert rec.message.args["compare_type"] == "TOTALORDER"
    # -0.0 and +0.0 tie (stable), both NaNs tie after everything
    assert bits(out[0][:4]) == bits(np.array([-1.0, 0.0, -0.0, 1.0], np.float32))
    assert bits(out[0][4:]) == bits(np.array([np.nan, -np.nan], np.float32))


# --- the general merge sort ----------------------------------------------------------------

@given(st.lists(st.integers(-4, 4), min_size=0, max_size=40), st.integers(1, 3))
def test_merge_sort_is_stable_under_any_comparator(values, m):
    x = np.array(values, np.int64)
    rows = np.stack([x, -x, x * x][:m]) if len(x) else np.zeros((m, 0), np.int64)
    calls = []

    def less(r, a, b):  # compare by absolute value
        calls.append(len(a))
        return np.abs(rows[r, a]) < np.abs(rows[r, b])
    perm = merge_sort_permutation(less, m, len(x))
    for r in range(m):
        want = sorted(range(len(x)), key=lambda i: abs(rows[r, i]))  # Python's sort is stable
        assert perm[r].tolist() == want
    n = max(len(x), 1)
    assert len(calls) <= sum(range(1, (n - 1).bit_length() + 1)) + 1  # batched: O(log^2 n) calls


def test_merge_sort_lexicographic_two_keys():
    rng = np.random.default_rng(1)
    k1, k2 = rng.integers(0, 3, (2, 37)), rng.integers(0, 3, (2, 37))

    def less(r, a, b):
        return (k1[r, a] < k1[r, b]) | ((k1[r, a] == k1[r, b]) & (k2[r, a] < k2[r, b]))
    perm = merge_sort_permutation(less, 2, 37)
    for r in range(2):
        assert perm[r].tolist() == sorted(range(37), key=lambda i: (k1[r, i], k2[r, i]))


ABS_BODY = """
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
    %aa = stablehlo.abs %a : tensor<f32>
    %bb = stablehlo.abs %b : tensor<f32>
    %p = stablehlo.compare LT, %aa, %bb, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>"""


def test_general_comparator_through_the_interpreter():
    text = program(["f32", "i32"], "2x5", ABS_BODY, dim=1)
    x = np.array([[3, -1, 2, -3, 1], [0, -5, 4, -4, 5]], np.float32)
    y = np.arange(10, dtype=np.int32).reshape(2, 5)
    out = Interpreter(parse_module(text)).run(None, [x, y])
    assert out[0].tolist() == [[-1, 1, 2, 3, -3], [0, 4, -4, -5, 5]]
    assert out[1].tolist() == [[1, 4, 2, 0, 3], [5, 7, 8, 6, 9]]
    session = Session(text)
    session.bind([x, y])
    session.run()
    (ev,) = [e for e in session.history if e.op.name == "stablehlo.sort"]
    e = ev.explain(1, (1, 2))
    steps = {s.name: s for s in e.steps if isinstance(s.name, str)}
    assert steps["permutation"].value == (0, 2, 3, 1, 4) and e.value == 8
    assert steps["result[result_index]"].substituted.args == {"name": "%x1", "index": "1, 3"}
    assert [n.args["comparator"].key for n in e.notes] == ["sort.comparator.general"]


# --- constraints -----------------------------------------------------------------------

def verify_fails(constraint: str, text: str) -> None:
    module = parse_module(text)
    op = next(o for o in module.walk() if o.name == "stablehlo.sort")
    with pytest.raises(VerificationError) as info:
        lookup("stablehlo.sort").verify(OpCall(op))
    assert info.value.constraint == constraint, info.value.message
    assert info.value.message.startswith(f"sort ({constraint}): ")


def test_constraints():
    ok = program(["i32", "f32"], "2x3", cmp_body(["i32", "f32"]))
    verify_fails("C2", ok.replace("-> (tensor<2x3xi32>, tensor<2x3xf32>)",
                                  "-> (tensor<2x3xi32>, tensor<2x3xi32>)")
                 .replace(": tensor<2x3xi32>, tensor<2x3xf32>\n}", ": tensor<2x3xi32>, tensor<2x3xi32>\n}"))
    verify_fails("C3", ok.replace("tensor<2x3xf32>", "tensor<3x2xf32>"))
    verify_fails("C4", program(["i32"], "2x3", cmp_body(["i32"]), dim=2))
    verify_fails("C4", program(["i32"], "2x3", cmp_body(["i32"]), dim=-3))
    bad_args = cmp_body(["i32", "i32"])  # comparator typed for (i32, i32) while input 1 is f32
    verify_fails("C5", program(["i32", "f32"], "2x3", bad_args))
    wrong_ret = """
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    stablehlo.return %a : tensor<i32>"""
    verify_fails("C5", program(["i32"], "2x3", wrong_ret))
    verify_fails("C1", "func.func @main() -> () {\n  \"stablehlo.sort\"() ({\n  ^bb0():\n"
                 "    %t = stablehlo.constant dense<true> : tensor<i1>\n"
                 "    stablehlo.return %t : tensor<i1>\n  }) {dimension = 0 : i64} : () -> ()\n"
                 "  return\n}")


def test_quantized_sorts_by_the_dequantized_values():
    q = "!quant.uniform<i8:f32, 0.5:-1>"
    text = program([q], "3", cmp_body([q]))
    # the comparator's compare runs by dequantize_compare: (storage + 1) * 0.5 orders as storage
    (out,) = Interpreter(parse_module(text)).run(None, [np.array([3, -1, 2], np.int8)])
    assert out.dtype == np.int8 and out.tolist() == [-1, 2, 3]


def test_alias():
    assert lookup("Sort").name == "stablehlo.sort"


# --- provenance agrees with values -------------------------------------------------------

@given(st.lists(st.integers(-3, 3), min_size=12, max_size=12), st.sampled_from([0, 1, -1]),
       st.sampled_from(["LT", "GT"]))
def test_provenance_matches_values(values, dim, direction):
    keys = np.array(values, np.int32).reshape(3, 4)
    vals = np.arange(12, dtype=np.float32).reshape(3, 4)
    text = program(["i32", "f32"], "3x4", cmp_body(["i32", "f32"], 0, direction), dim=dim)
    out, prov, explain, _ = run_sort(text, [keys, vals])
    ax = dim % 2
    for r, src_arr in enumerate((keys, vals)):
        for idx in np.ndindex(3, 4):
            srcs = prov.sources(r, idx)
            (copy,) = [s for s in srcs if s.role == "copy"]
            assert copy.operand == r and out[r][idx] == src_arr[copy.index]
            control = [s for s in srcs if s.role == "control"]
            assert len(control) == keys.shape[ax] and {s.operand for s in control} == {0}
            assert all(s.index[1 - ax] == idx[1 - ax] for s in control)
            assert any(t.index == idx and t.role == "copy" for t in prov.targets(r, copy.index))
            assert explain(r, idx).value == out[r][idx]
    # set forms: back then fwd returns the same mask for copy; control covers whole rows
    mask = np.zeros((3, 4), bool)
    mask[1, 2] = True
    back = prov.back(1, mask)
    assert back[(1, "copy")].sum() == 1
    assert prov.fwd(1, back[(1, "copy")])[(1, "copy")].tolist() == mask.tolist()
    assert back[(0, "control")].sum() == keys.shape[ax]
    fwd = prov.fwd(0, mask)
    assert set(fwd) == {(0, "copy"), (0, "control"), (1, "control")}


# --- record and result type inference ----------------------------------------------------

def test_record_defaults_and_infer():
    from hlolab.ops.record import InferError
    from hlolab.ops.sort import SortAttrs, infer_sort
    from hlolab.types import tensor_type
    text = program(["i32"], "2x3", cmp_body(["i32"]), dim=1, stable=False)
    text = text.replace(" {dimension = 1 : i64, is_stable = false}", "")
    op = parse_module(text).funcs[0].body.blocks[0].ops[0]
    assert "dimension" not in op.attributes and "is_stable" not in op.attributes, text
    rec = OpCall(op).attrs
    assert rec == SortAttrs(dimension=-1, is_stable=False) and rec.to_ir() == {}
    out = Interpreter(parse_module(text)).run(None, [np.array([[3, 1, 2], [0, -1, 5]], np.int32)])
    assert np.asarray(out[0]).tolist() == [[1, 2, 3], [-1, 0, 5]]  # dimension -1: the last dim
    ts = [tensor_type((2, None), "i32"), tensor_type((2, None), "f32")]
    assert infer_sort(rec, ts) == ts
    with pytest.raises(InferError):
        infer_sort(rec, [])
