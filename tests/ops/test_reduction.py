"""reduce, map, reduce_precision, batch_norm_*: spec and XLA-doc examples, conformance,
recognized bodies vs a slow fold, the pairwise-tree path, provenance (checked against
the values), explain and constraint errors."""

from __future__ import annotations

import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hlolab.errors import VerificationError
from hlolab.interp.engine import InterpCall, Interpreter
from hlolab.ir.parser import parse_module
from hlolab.messages import text as msg_text
from hlolab.ops.reduction import reduce_precision_values
from hlolab.ops.registry import lookup
from hlolab.trace.explain import DimRole, format_explanation
from tests.conftest import REPO, shared_dir
from tests.ops.regions_text import combiner_body

# --- building programs ---------------------------------------------------------------------


def ttype(shape, e: str) -> str:
    return f"tensor<{'x'.join(str(d) for d in shape)}{'x' if shape else ''}{e}>"


def body(kinds: list[str], es: list[str]) -> str:
    """A reduce body (see combiner_body; "add_plus_zero" runs through the interpreter)."""
    return combiner_body(kinds, es)


def reduce_program(shape, es: list[str], dims, kinds: list[str] | str,
                   region: str | None = None) -> str:
    n = len(es)
    kinds = kinds if isinstance(kinds, list) else [kinds] * n
    rshape = [d for k, d in enumerate(shape) if k not in dims]
    ins = [ttype(shape, e) for e in es]
    inits = [ttype((), e) for e in es]
    res = [ttype(rshape, e) for e in es]
    params = ", ".join([f"%x{i}: {t}" for i, t in enumerate(ins)]
                       + [f"%i{i}: {t}" for i, t in enumerate(inits)])
    names = ", ".join([f"%x{i}" for i in range(n)] + [f"%i{i}" for i in range(n)])
    lhs = f"%r:{n}" if n > 1 else "%r"
    rets = ", ".join(f"%r#{i}" for i in range(n)) if n > 1 else "%r"
    return (f"func.func @main({params}) -> ({', '.join(res)}) {{\n"
            f"  {lhs} = \"stablehlo.reduce\"({names}) ({{\n    {region or body(kinds, es)}\n  }}) "
            f"{{dimensions = array<i64{': ' if dims else ''}{', '.join(str(d) for d in dims)}>}} : "
            f"({', '.join(ins + inits)}) -> ({', '.join(res)})\n"
            f"  return {rets} : {', '.join(res)}\n}}")


def run_op(text: str, args: list, name: str):
    events = list(Interpreter(parse_module(text)).events(None, args))
    return next(e for e in events if e.op.name == name)


def run_reduce(x, init, dims, kind="add", e="i64"):
    xs = x if isinstance(x, list) else [x]
    inits = init if isinstance(init, list) else [init]
    es = e if isinstance(e, list) else [e] * len(xs)
    text = reduce_program(xs[0].shape, es, dims, kind)
    return run_op(text, xs + [np.asarray(i, dtype=a.dtype) for i, a in zip(inits, xs, strict=True)],
                  "stablehlo.reduce")


def explain(ev, result: int, index: tuple):
    return lookup(ev.op.name).explain(ev.call, ev.inputs, ev.outputs, result, index)


# --- reduce: spec, XLA-doc and conformance examples -------------------------------------------

def test_spec_example():
    ev = run_reduce(np.array([[0, 1, 2, 3, 4, 5]], np.int64), 0, [1])
    assert ev.outputs[0].tolist() == [15]


def test_xla_doc_2d_and_3d_examples():
    m = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    assert run_reduce(m, 0, [0], e="f32").outputs[0].tolist() == [5, 7, 9]
    assert run_reduce(m, 0, [1], e="f32").outputs[0].tolist() == [6, 15]
    # a 4x2x3 array with the values 1..6 replicated across dimension 0
    a = np.broadcast_to(np.arange(1, 7, dtype=np.float32).reshape(2, 3), (4, 2, 3)).copy()
    # the early XLA doc prints | 4 8 12 | twice for dims [0]; 4 copies of [[1,2,3],[4,5,6]]
    # sum to [[4, 8, 12], [16, 20, 24]] (the later revision has it right)
    assert run_reduce(a, 0, [0], e="f32").outputs[0].tolist() == [[4, 8, 12], [16, 20, 24]]
    assert run_reduce(a, 0, [2], e="f32").outputs[0].tolist() == [[6, 15]] * 4
    assert run_reduce(a, 0, [0, 1], e="f32").outputs[0].tolist() == [20, 28, 36]
    assert run_reduce(a, 0, [0, 1, 2], e="f32").outputs[0].tolist() == 84
    assert run_reduce(a, 0, [1, 0], e="f32").outputs[0].tolist() == [20, 28, 36]  # unordered dims


ARGMAX_REGION = """^bb0(%m: tensor<f32>, %k: tensor<i32>, %v: tensor<f32>, %i: tensor<i32>):
      %ge = stablehlo.compare GE, %v, %m, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %nm = stablehlo.select %ge, %v, %m : tensor<i1>, tensor<f32>
      %nk = stablehlo.select %ge, %i, %k : tensor<i1>, tensor<i32>
      stablehlo.return %nm, %nk : tensor<f32>, tensor<i32>"""


def test_xla_doc_variadic_max_argmax():
    """The XLA doc's (max, argmax) body over values and an iota (distinct values: its
    >= makes ties order-dependent)."""
    v = np.array([[3.0, 9.0, -1.0, 7.0, 2.0], [0.5, -4.0, 8.0, 8.5, 1.0]], np.float32)
    k = np.broadcast_to(np.arange(5, dtype=np.int32), (2, 5)).copy()
    text = reduce_program((2, 5), ["f32", "i32"], [1], "", region=ARGMAX_REGION)
    ev = run_op(text, [v, k, np.array(-np.inf, np.float32), np.array(-1, np.int32)], "stablehlo.reduce")
    assert ev.outputs[0].tolist() == [9.0, 8.5] and ev.outputs[1].tolist() == [1, 3]
    # the body mixes the pair: result 1 depends on both inputs and both inits
    src = ev.provenance().sources(1, (0,))
    assert {(s.operand, s.role) for s in src} == {(0, "window"), (1, "window"), (2, "init"), (3, "init")}


def test_conformance_reduce():
    path = shared_dir("conformance", "interpret") / "reduce.mlir"
    out = subprocess.run([sys.executable, "-m", "hlolab", "run", "--split-input-file", str(path)],
                         capture_output=True, text=True, cwd=REPO, timeout=120)
    assert "PASS" in out.stdout and "FAIL" not in out.stdout and "ERROR" not in out.stdout, out.stdout


# --- reduce: recognized bodies against a slow fold -----------------------------------------------

def _fold(kind: str, init, values, dt):
    """The left fold body(...body(body(init, v0), v1)..., vK-1) in Python ints / floats."""
    acc = init
    for v in values:
        if kind == "add":
            acc = acc + v
        elif kind == "multiply":
            acc = acc * v
        elif kind == "maximum":
            acc = max(acc, v)
        elif kind == "minimum":
            acc = min(acc, v)
        elif kind == "and":
            acc = acc & v
        elif kind == "or":
            acc = acc | v
        elif kind == "xor":
            acc = acc ^ v
        elif kind == "replace":
            acc = v
    bits = np.dtype(dt).itemsize * 8
    if np.dtype(dt).kind == "u":
        return acc % (1 << bits)
    acc %= 1 << bits
    return acc - (1 << bits) if acc >= 1 << (bits - 1) else acc


@st.composite
def shapes_and_dims(draw, max_rank=3):
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=1, max_size=max_rank)))
    dims = draw(st.lists(st.integers(0, len(shape) - 1), unique=True, max_size=len(shape)))
    return shape, dims


@given(shapes_and_dims(), st.sampled_from(["add", "multiply", "maximum", "minimum", "and", "or", "xor",
                                           "keep", "replace"]),
       st.sampled_from([("i8", np.int8), ("ui8", np.uint8), ("i32", np.int32), ("i64", np.int64)]),
       st.integers(0, 2**32))
def test_integer_reduce_matches_the_fold(sd, kind, et, seed):
    shape, dims = sd
    e, dt = et
    rng = np.random.default_rng(seed)
    info = np.iinfo(dt)
    x = rng.integers(info.min, int(info.max) + 1, shape, dtype=dt)
    init = dt(rng.integers(info.min, int(info.max) + 1, dtype=dt))
    ev = run_reduce(x, init, dims, kind, e)
    out = ev.outputs[0]
    red = sorted(dims)
    kept = [d for d in range(len(shape)) if d not in dims]
    count = int(np.prod([shape[d] for d in red], dtype=np.int64))
    moved = np.transpose(x, kept + red).reshape(out.shape + (count,))
    for j in np.ndindex(*out.shape):
        vals = [int(v) for v in moved[j]]
        want = int(init) if kind == "keep" else _fold(kind, int(init), vals, dt)
        assert int(out[j]) == want


def test_bool_add_is_or_and_multiply_is_and():
    x = np.array([[True, False, False], [False, False, False]])
    assert run_reduce(x, False, [1], "add", "i1").outputs[0].tolist() == [True, False]
    assert run_reduce(x, True, [1], "multiply", "i1").outputs[0].tolist() == [False, False]
    assert run_reduce(x, False, [0], "xor", "i1").outputs[0].tolist() == [True, False, False]


def test_float_maximum_nan_and_signed_zeros():
    nan_a = np.array(np.uint32(0x7FC00001)).view(np.float32)
    x = np.array([[-0.0, 0.0, -0.0], [-0.0, -0.0, -0.0], [1.0, nan_a, np.nan], [0.0, -0.0, 0.0]],
                 np.float32)
    mx = run_reduce(x, -np.inf, [1], "maximum", "f32").outputs[0]
    assert [np.signbit(v) for v in mx[:2]] == [False, True] and mx[0] == 0
    assert mx[2].view(np.uint32) == 0x7FC00001  # the first NaN of the chain
    mn = run_reduce(x, np.inf, [1], "minimum", "f32").outputs[0]
    assert np.signbit(mn[0]) and np.signbit(mn[3]) and mn[3] == 0
    # the init value is the first element of the chain
    init_nan = run_reduce(np.array([[np.nan]], np.float32), np.float32(nan_a), [1], "maximum", "f32")
    assert init_nan.outputs[0].view(np.uint32)[0] == 0x7FC00001


def test_float_add_sub_f32_types_accumulate_in_f32():
    x = np.ones(1000, ml_dtypes.bfloat16)
    ev = run_reduce(x, 0, [0], "add", "bf16")
    assert ev.outputs[0].dtype == ml_dtypes.bfloat16 and float(ev.outputs[0]) == 1000.0
    # a bf16 chain would stall at 256; f32 accumulation is exact here
    y = np.full(300, 1.0, np.float16)
    assert float(run_reduce(y, 2048, [0], "add", "f16").outputs[0]) == 2348.0


def test_complex_add_and_multiply():
    z = np.array([[1 + 2j, 3 - 1j], [0.5j, 2]], np.complex64)
    assert run_reduce(z, 0, [1], "add", "complex<f32>").outputs[0].tolist() == [4 + 1j, 2 + 0.5j]
    assert run_reduce(z, 1, [1], "multiply", "complex<f32>").outputs[0].tolist() == [(1 + 2j) * (3 - 1j), 1j]


def test_keep_and_replace_and_empty():
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    assert run_reduce(x, 7, [1], "keep", "i32").outputs[0].tolist() == [7, 7]
    assert run_reduce(x, 7, [1], "replace", "i32").outputs[0].tolist() == [2, 5]
    empty = np.zeros((2, 0), np.int32)
    assert run_reduce(empty, 7, [1], "add", "i32").outputs[0].tolist() == [7, 7]
    assert run_reduce(empty, 7, [1], "add_plus_zero", "i32").outputs[0].tolist() == [7, 7]
    assert run_reduce(x, 7, [], "add", "i32").outputs[0].tolist() == (x + 7).tolist()


# --- reduce: the pairwise tree ----------------------------------------------------------------

@given(shapes_and_dims(), st.integers(0, 2**32))
def test_tree_path_matches_numpy_for_an_unrecognized_add(sd, seed):
    shape, dims = sd
    x = np.random.default_rng(seed).integers(-1000, 1000, shape, dtype=np.int32)
    ev = run_reduce(x, 5, dims, "add_plus_zero", "i32")
    assert ev.outputs[0].tolist() == (x.sum(axis=tuple(dims), dtype=np.int32) + 5).tolist()


def test_tree_makes_log2_region_calls(monkeypatch):
    calls = []
    original = InterpCall.run_region

    def spy(self, index, args):
        calls.append(np.asarray(args[0]).shape)
        return original(self, index, args)

    monkeypatch.setattr(InterpCall, "run_region", spy)
    x = np.arange(3 * 1000, dtype=np.int64).reshape(3, 1000)
    ev = run_reduce(x, 1, [1], "add_plus_zero", "i64")
    assert ev.outputs[0].tolist() == (x.sum(axis=1) + 1).tolist()
    assert len(calls) == 11  # ceil(log2(1000)) rounds + the init fold
    assert calls[0] == (3, 500) and calls[-1] == (3,)


def test_argmax_ties_take_the_smallest_index_through_the_tree():
    """jax's argmax body (GT or NaN, ties broken by the smaller index) on a tree."""
    region = """^bb0(%a1: tensor<f32>, %a2: tensor<i32>, %b1: tensor<f32>, %b2: tensor<i32>):
      %2 = stablehlo.compare GT, %a1, %b1, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %3 = stablehlo.compare NE, %a1, %a1, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %4 = stablehlo.or %2, %3 : tensor<i1>
      %5 = stablehlo.compare EQ, %a1, %b1, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %6 = stablehlo.compare LT, %a2, %b2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %7 = stablehlo.and %5, %6 : tensor<i1>
      %8 = stablehlo.or %4, %7 : tensor<i1>
      %9 = stablehlo.select %4, %a1, %b1 : tensor<i1>, tensor<f32>
      %10 = stablehlo.select %8, %a2, %b2 : tensor<i1>, tensor<i32>
      stablehlo.return %9, %10 : tensor<f32>, tensor<i32>"""
    v = np.array([[1, 5, 5, 0, 5, 2, 5], [1, 1, 1, 1, 1, 1, 1], [0, 3, np.nan, 9, np.nan, 1, 1]],
                 np.float32)
    k = np.broadcast_to(np.arange(7, dtype=np.int32), v.shape).copy()
    text = reduce_program(v.shape, ["f32", "i32"], [1], "", region=region)
    ev = run_op(text, [v, k, np.array(-np.inf, np.float32), np.array(0, np.int32)], "stablehlo.reduce")
    assert ev.outputs[1].tolist() == [1, 0, 2]


# --- reduce: provenance and explain ----------------------------------------------------------

@given(shapes_and_dims(), st.integers(0, 2**32))
def test_provenance_window_sums_to_the_result(sd, seed):
    shape, dims = sd
    rng = np.random.default_rng(seed)
    x = rng.integers(-50, 50, shape, dtype=np.int64)
    ev = run_reduce(x, 3, dims, "add", "i64")
    prov = ev.provenance()
    out = ev.outputs[0]
    seen = np.zeros(shape, dtype=int)
    for j in np.ndindex(*out.shape):
        src = prov.sources(0, j)
        assert src[0].role == "init" and src[0].operand == 1
        window = [s.index for s in src if s.role == "window"]
        assert window == sorted(window)  # the schedule: row-major over the reduced dims
        assert int(out[j]) == 3 + sum(int(x[i]) for i in window)
        for i in window:
            seen[i] += 1
        mask = np.zeros(out.shape, dtype=bool)
        mask[j] = True
        back = prov.back(0, mask)
        want = np.zeros(shape, dtype=bool)
        for i in window:
            want[i] = True
        assert np.array_equal(back.get((0, "window"), np.zeros(shape, bool)), want)
    assert (seen == (1 if out.size else 0)).all()  # every input element reaches one result
    for i in list(np.ndindex(*shape))[:6]:
        targets = prov.targets(0, i)
        assert len(targets) == 1 and i in [s.index for s in prov.sources(0, targets[0].index)]
        m = np.zeros(shape, dtype=bool)
        m[i] = True
        fwd = prov.fwd(0, m)[(0, "window")]
        assert np.flatnonzero(fwd).tolist() == [int(np.ravel_multi_index(targets[0].index, out.shape))
                                               if out.shape else 0]


def test_explain_lists_the_slice():
    x = np.arange(24, dtype=np.int64).reshape(2, 3, 4)
    ev = run_reduce(x, 100, [0, 2], "add", "i64")
    e = explain(ev, 0, (1,))
    assert e.value == 100 + x[:, 1, :].sum()
    steps = {s.name: s for s in e.steps}
    assert list(steps) == ["dimensions", "input_slices[0]", "init_values[0]", "body", "results[0][1]"]
    assert steps["dimensions"].value == [0, 2]
    assert steps["dimensions"].dim_roles == {0: DimRole("reduced"), 1: DimRole("kept"), 2: DimRole("reduced")}
    sl = steps["input_slices[0]"]
    assert np.array_equal(sl.value, x[:, 1, :])
    assert sl.formula.args == {"k": 0}
    assert sl.substituted.args == {"name": "%x0", "slice": ":, 1, :", "count": 8}
    assert [c.name for c in sl.children][:2] == ["inputs[0][0, 1, 0]", "inputs[0][0, 1, 1]"]
    assert [c.value for c in sl.children] == x[:, 1, :].reshape(-1).tolist()
    assert steps["init_values[0]"].value == 100 and steps["init_values[0]"].formula.args == {"name": "%i0"}
    assert steps["body"].value == "add" and steps["body"].formula.key == "reduction.reduce.body.numpy"
    res = steps["results[0][1]"]
    assert res.value == e.value and res.formula.args == {"body": "add", "k": 0}
    assert res.substituted.args["init"] == 100 and np.array_equal(res.substituted.args["slice"], x[:, 1, :])
    assert [(n.key, n.args) for n in e.notes] == [("reduction.reduce.note.schedule",
                                                   {"count": 8, "dimensions": [0, 2]})]
    text = format_explanation(e)
    assert "input_slices[0]" in text and "[:, 1, :]" in text and "… 0 more" not in text
    assert "inputs[0][0, 1, 0]" in text and "… 1 more" not in text
    f = explain(run_reduce(x.astype(np.float32), 0, [2], "add", "f32"), 0, (0, 0))
    assert [n.key for n in f.notes] == ["reduction.reduce.note.schedule", "reduction.reduce.note.order_numpy"]
    assert "implementation-defined" in format_explanation(f)


def test_explain_notes_sub_f32_accumulation_and_long_slices():
    x = np.arange(300, dtype=np.float32).reshape(1, 300).astype(ml_dtypes.bfloat16)
    e = explain(run_reduce(x, 0, [1], "add", "bf16"), 0, (0,))
    notes = {n.key: n.args for n in e.notes}
    assert notes["reduction.reduce.note.f32"] == {"element_type": "bf16"}
    assert notes["reduction.reduce.note.more"] == {"count": 300 - 256}
    assert len({s.name: s for s in e.steps}["input_slices[0]"].children) == 256


def test_animation_captions_are_messages_with_the_running_values():
    x = np.array([[1, 2, 3], [4, 5, 6]], np.int64)
    ev = run_reduce(x, 10, [1], "add", "i64")
    frames = ev.provenance().animation_steps(ev.call, ev.inputs, ev.outputs, elements=[(0, (1,))])
    assert len(frames) == 4
    start = frames[0].caption
    assert start.key == "reduction.reduce.animation.start"
    assert start.args["count"] == 3 and start.args["init_name"] == "%i0" and start.args["init"] == 10
    assert start.args["where"].args == {"name": "%r", "index": "1"}
    got = [(c.caption.args["position"], c.caption.args["before"], c.caption.args["element"].args["index"],
            c.caption.args["value"], c.caption.args["after"]) for c in frames[1:]]
    assert got == [(1, 10, "1, 0", 4, 14), (2, 14, "1, 1", 5, 19), (3, 19, "1, 2", 6, 25)]
    assert all(c.caption.key == "reduction.reduce.animation.element" for c in frames[1:])
    assert msg_text(frames[3].caption) == "%r[1]: element 3/3: add(19, %x0[1, 2] = 6) = 25"


# --- reduce: constraints ---------------------------------------------------------------------

def _verify_error(text: str) -> str:
    with pytest.raises(VerificationError) as info:
        m = parse_module(text)
        Interpreter(m).run(None, [np.zeros(a.type.shape, a.type.dtype) for a in m.funcs[0].args])
    return str(info.value)


def test_reduce_constraints():
    good = reduce_program((2, 3), ["i32"], [1], "add")
    assert "(C4)" in _verify_error(good.replace("array<i64: 1>", "array<i64: 2>"))
    assert "(C5)" in _verify_error(reduce_program((2, 3), ["i32"], [1, 1], "add")
                                   .replace("tensor<2xi32>", "tensor<i32>"))
    assert "(C7)" in _verify_error(good.replace("-> (tensor<2xi32>)", "-> (tensor<3xi32>)")
                                   .replace("@main(%x0: tensor<2x3xi32>, %i0: tensor<i32>) -> "
                                            "(tensor<2xi32>)",
                                            "@main(%x0: tensor<2x3xi32>, %i0: tensor<i32>) -> "
                                            "(tensor<3xi32>)").replace("return %r : tensor<2xi32>",
                                                                       "return %r : tensor<3xi32>"))
    assert "(C2)" in _verify_error(good.replace("%i0: tensor<i32>", "%i0: tensor<i64>")
                                   .replace("tensor<2x3xi32>, tensor<i32>)", "tensor<2x3xi32>, tensor<i64>)"))
    narrow = reduce_program((2, 3), ["i16"], [1], "add")
    bad_body = narrow.replace("%x0: tensor<2x3xi16>, %i0: tensor<i16>", "%x0: tensor<2x3xi32>, "
                              "%i0: tensor<i32>").replace("(tensor<2x3xi16>, tensor<i16>)",
                                                          "(tensor<2x3xi32>, tensor<i32>)")
    assert "(C6)" in _verify_error(bad_body)  # i32 inputs are not promotable to an i16 body
    two = reduce_program((2, 3), ["i32", "i32"], [1], "add")
    assert "(C1)" in _verify_error(two.replace("%x1: tensor<2x3xi32>", "%x1: tensor<3x3xi32>")
                                   .replace("(tensor<2x3xi32>, tensor<2x3xi32>, tensor<i32>",
                                            "(tensor<2x3xi32>, tensor<3x3xi32>, tensor<i32>"))


def test_reduce_quantized_runs_the_body_by_the_quantized_rule():
    q = "!quant.uniform<i8:f32, 0.5:-3>"
    text = f"""func.func @main(%x: tensor<4x{q}>, %i: tensor<{q}>) -> tensor<{q}> {{
  %r = "stablehlo.reduce"(%x, %i) ({{
    ^bb0(%a: tensor<{q}>, %b: tensor<{q}>):
      %s = stablehlo.add %a, %b : tensor<{q}>
      stablehlo.return %s : tensor<{q}>
  }}) {{dimensions = array<i64: 0>}} : (tensor<4x{q}>, tensor<{q}>) -> tensor<{q}>
  return %r : tensor<{q}>
}}"""
    # (storage + 3) * 0.5: [2, 2.5, 3, 3.5] + init 0 = 11 -> 11 / 0.5 - 3 = 19 (storage sum: 7)
    (r,) = Interpreter(parse_module(text)).run(None, [np.array([1, 2, 3, 4], np.int8),
                                                      np.array(-3, np.int8)])
    assert r.dtype == np.int8 and int(r) == 19


# --- map --------------------------------------------------------------------------------------

MAP = """func.func @main(%a: tensor<2x2xi64>, %b: tensor<2x2xi64>) -> tensor<2x2xi64> {
  %r = "stablehlo.map"(%a, %b) ({
    ^bb0(%x: tensor<i64>, %y: tensor<i64>):
      %0 = stablehlo.multiply %x, %y : tensor<i64>
      %1 = stablehlo.add %0, %x : tensor<i64>
      stablehlo.return %1 : tensor<i64>
  }) {dimensions = array<i64: 0, 1>} : (tensor<2x2xi64>, tensor<2x2xi64>) -> tensor<2x2xi64>
  return %r : tensor<2x2xi64>
}"""


def test_map_values_provenance_explain_and_conformance():
    a = np.array([[0, 1], [2, 3]], np.int64)
    b = np.array([[4, 5], [6, 7]], np.int64)
    ev = run_op(MAP, [a, b], "stablehlo.map")
    assert ev.outputs[0].tolist() == (a * b + a).tolist()
    src = ev.provenance().sources(0, (1, 0))
    assert [(s.operand, s.index, s.role) for s in src] == [(0, (1, 0), "combine"), (1, (1, 0), "combine")]
    assert explain(ev, 0, (1, 1)).value == 24
    assert "(C3)" in _verify_error(MAP.replace("array<i64: 0, 1>", "array<i64: 1, 0>"))
    i32_body = MAP.replace("%x: tensor<i64>, %y: tensor<i64>", "%x: tensor<i32>, %y: tensor<i32>").replace(
        "%y : tensor<i64>", "%y : tensor<i32>").replace("%x : tensor<i64>", "%x : tensor<i32>").replace(
        "return %1 : tensor<i64>", "return %1 : tensor<i32>")
    assert "(C4)" in _verify_error(i32_body)
    path = shared_dir("conformance", "interpret") / "map.mlir"
    out = subprocess.run([sys.executable, "-m", "hlolab", "run", "--split-input-file", str(path)],
                         capture_output=True, text=True, cwd=REPO, timeout=120)
    assert "PASS" in out.stdout and "FAIL" not in out.stdout, out.stdout


# --- reduce_precision -------------------------------------------------------------------------

def rp_program(shape, e: str, eb: int, mb: int) -> str:
    t = ttype(shape, e)
    return (f"func.func @main(%x: {t}) -> {t} {{\n  %r = stablehlo.reduce_precision %x, "
            f"format = e{eb}m{mb} : {t}\n  return %r : {t}\n}}")


def test_reduce_precision_spec_example_and_fields():
    x = np.array([0x7FF0000000000000, 0x7FFFFFFFFFFFFFFF, 1, 0], np.uint64).view(np.float64)
    x = np.concatenate([x, [65519.0, 65520.0]])
    ev = run_op(rp_program((6,), "f64", 5, 10), [x], "stablehlo.reduce_precision")
    got = ev.outputs[0]
    assert got.view(np.uint64)[:2].tolist() == [0x7FF0000000000000, 0x7FFFFFFFFFFFFFFF]
    assert got[2:].tolist() == [0.0, 0.0, 65504.0, np.inf]
    e = explain(ev, 0, (4,))
    text = format_explanation(e)
    assert "0 10000001110 111111111101111000" in text  # 65519 before rounding
    operand, fmt, output = e.steps
    assert operand.value.args == {"value": 65519.0, "bits": "0 10000001110 " + "1111111111011110" + "0" * 36}
    assert operand.substituted.args == {"name": "%x", "index": "4"}
    assert fmt.value == (5, 10)
    assert output.value.args == {"value": 65504.0, "bits": "0 10000001110 " + "1111111111" + "0" * 42}
    assert output.substituted.args == {"value": 65519.0, "exponent_bits": 5, "mantissa_bits": 10}
    assert e.notes == []
    prov = ev.provenance()
    assert [(s.operand, s.index, s.role) for s in prov.sources(0, (3,))] == [(0, (3,), "copy")]


def test_reduce_precision_nan_truncates_to_inf_with_zero_mantissa_bits():
    """The spec truncates the mantissa to nothing: a NaN becomes +-inf (conformance
    reduce_precision.mlir#2); XLA keeps the NaN (reduce_precision_values, the XLA core)."""
    x = np.array([0x7FFFFFFFFFFFFFFF, 0xFFF8000000000000], np.uint64).view(np.float64)
    ev = run_op(rp_program((2,), "f64", 5, 0), [x], "stablehlo.reduce_precision")
    assert ev.outputs[0].tolist() == [np.inf, -np.inf]
    assert reduce_precision_values(x, 5, 0).view(np.uint64).tolist() == x.view(np.uint64).tolist()
    ev = run_op(rp_program((2,), "f64", 5, 1), [x], "stablehlo.reduce_precision")
    assert np.isnan(ev.outputs[0]).all()


def test_reduce_precision_rounding_cases():
    x = np.array([1.0 + 2**-11, 1.0 + 3 * 2**-11, 6e-5, 6.2e-5, -1e30, 2.0**-25], np.float32)
    got = run_op(rp_program((6,), "f32", 5, 10), [x], "stablehlo.reduce_precision").outputs[0]
    # ties to even: 1 + 2^-11 -> 1, 1 + 3*2^-11 -> 1 + 2^-9; below f16's min normal -> 0
    assert got.tolist() == [1.0, 1.0 + 2**-9, 0.0, np.float32(6.2e-5).item() and got[3], -np.inf, 0.0]
    assert got[3] == np.float16(6.2e-5).astype(np.float32)
    bf = np.array([1.0, 3.3], ml_dtypes.bfloat16)
    out = run_op(rp_program((2,), "bf16", 8, 1), [bf], "stablehlo.reduce_precision").outputs[0]
    assert out.astype(np.float32).tolist() == [1.0, 3.0]


def test_reduce_precision_constraints():
    assert "(C2)" in _verify_error(rp_program((2,), "f32", 5, 10).replace("e5m10", "e0m10"))
    text = ('func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n  %r = "stablehlo.reduce_precision"'
            '(%x) {exponent_bits = 5 : i32, mantissa_bits = -1 : i32} : (tensor<2xf32>) -> tensor<2xf32>\n'
            '  return %r : tensor<2xf32>\n}')
    assert "(C3)" in _verify_error(text)
    assert "(C1)" in _verify_error(text.replace("-1", "3").replace(") -> tensor<2xf32>\n  return",
                                                                   ") -> tensor<2xf16>\n  return")
                                   .replace("return %r : tensor<2xf32>", "return %r : tensor<2xf16>")
                                   .replace("-> tensor<2xf32> {", "-> tensor<2xf16> {"))


def test_conformance_reduce_precision():
    path = shared_dir("conformance", "interpret") / "reduce_precision.mlir"
    out = subprocess.run([sys.executable, "-m", "hlolab", "run", "--split-input-file", str(path)],
                         capture_output=True, text=True, cwd=REPO, timeout=120)
    assert "reduce_precision.mlir#1: PASS" in out.stdout, out.stdout
    # #2: a NaN with mantissa_bits = 0 becomes inf, as the spec says (XLA keeps the NaN)
    assert "reduce_precision.mlir#2: PASS" in out.stdout, out.stdout


# --- batch norm --------------------------------------------------------------------------------

OPERAND = np.array([[[1.0, 2.0], [3.0, 4.0]], [[3.0, 4.0], [1.0, 2.0]]])


def bn_program(kind: str, shape, e: str, fi: int, eps: float = 0.0) -> str:
    t = ttype(shape, e)
    f = ttype((shape[fi],), e)
    ins, outs = {"inference": ([t, f, f, f, f], [t]), "training": ([t, f, f], [t, f, f]),
                 "grad": ([t, f, f, f, t], [t, f, f])}[kind]
    params = ", ".join(f"%p{i}: {x}" for i, x in enumerate(ins))
    names = ", ".join(f"%p{i}" for i in range(len(ins)))
    lhs = f"%r:{len(outs)}" if len(outs) > 1 else "%r"
    rets = ", ".join(f"%r#{i}" for i in range(len(outs))) if len(outs) > 1 else "%r"
    return (f"func.func @main({params}) -> ({', '.join(outs)}) {{\n  {lhs} = "
            f"\"stablehlo.batch_norm_{kind}\"({names}) {{epsilon = {eps} : f32, feature_index = {fi} : "
            f"i64}} : ({', '.join(ins)}) -> ({', '.join(outs)})\n  return {rets} : {', '.join(outs)}\n}}")


def _ref_stats(x, fi):
    axes = tuple(d for d in range(x.ndim) if d != fi)
    return x.mean(axis=axes), ((x - np.expand_dims(x.mean(axis=axes), axes)) ** 2).mean(axis=axes)


def test_batch_norm_spec_examples():
    s = np.ones(2)
    ev = run_op(bn_program("inference", (2, 2, 2), "f64", 2), [OPERAND, s, s, np.array([2.0, 3.0]), s],
                "stablehlo.batch_norm_inference")
    assert ev.outputs[0].tolist() == [[[0, 0], [2, 2]], [[2, 2], [0, 0]]]
    ev = run_op(bn_program("training", (2, 2, 2), "f64", 2), [OPERAND, s, s],
                "stablehlo.batch_norm_training")
    assert ev.outputs[0].tolist() == [[[0, 0], [2, 2]], [[2, 2], [0, 0]]]
    assert ev.outputs[1].tolist() == [2, 3] and ev.outputs[2].tolist() == [1, 1]
    g = np.full((2, 2, 2), 0.1)
    ev = run_op(bn_program("grad", (2, 2, 2), "f64", 2), [OPERAND, s, np.array([2.0, 3.0]), s, g],
                "stablehlo.batch_norm_grad")
    assert np.allclose(ev.outputs[0], 0, atol=1e-15) and np.allclose(ev.outputs[1], 0, atol=1e-15)
    assert np.allclose(ev.outputs[2], [0.4, 0.4])


@given(st.integers(0, 2**32), st.integers(0, 2), st.sampled_from(["f32", "f64", "bf16"]))
def test_batch_norm_matches_the_formula(seed, fi, e):
    rng = np.random.default_rng(seed)
    shape = (3, 4, 5)
    dt = {"f32": np.float32, "f64": np.float64, "bf16": ml_dtypes.bfloat16}[e]
    x = rng.standard_normal(shape).astype(dt)
    c = shape[fi]
    scale, offset = rng.standard_normal(c).astype(dt), rng.standard_normal(c).astype(dt)
    eps = 1e-3
    x64 = x.astype(np.float64)
    mean, var = _ref_stats(x64, fi)
    bshape = [1, 1, 1]
    bshape[fi] = c
    eps_e = np.float64(np.float32(eps).astype(dt))
    norm = (x64 - mean.reshape(bshape)) / np.sqrt(var.reshape(bshape) + eps_e)
    want = scale.astype(np.float64).reshape(bshape) * norm + offset.astype(np.float64).reshape(bshape)
    ev = run_op(bn_program("training", shape, e, fi, eps), [x, scale, offset],
                "stablehlo.batch_norm_training")
    tol = {"f32": 1e-4, "f64": 1e-12, "bf16": 2e-2}[e]
    assert ev.outputs[0].dtype == dt
    assert np.allclose(ev.outputs[0].astype(np.float64), want, rtol=tol, atol=tol)
    assert np.allclose(ev.outputs[1].astype(np.float64), mean, rtol=tol, atol=tol)
    assert np.allclose(ev.outputs[2].astype(np.float64), var, rtol=tol, atol=tol)
    inf = run_op(bn_program("inference", shape, e, fi, eps), [x, scale, offset, ev.outputs[1],
                                                              ev.outputs[2]],
                 "stablehlo.batch_norm_inference")
    assert np.allclose(inf.outputs[0].astype(np.float64), want, rtol=4 * tol, atol=4 * tol)


def test_batch_norm_grad_matches_finite_differences_of_training():
    """grad_scale / grad_offset of the spec formula are the gradients of sum(g * output)
    w.r.t. scale and offset (output of batch_norm_training)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3))
    scale, g = rng.standard_normal(3), rng.standard_normal((4, 3))
    mean, var = _ref_stats(x, 1)
    ev = run_op(bn_program("grad", (4, 3), "f64", 1, 1e-3), [x, scale, mean, var, g],
                "stablehlo.batch_norm_grad")
    norm = (x - mean) / np.sqrt(var + np.float32(1e-3))
    assert np.allclose(ev.outputs[1], (g * norm).sum(axis=0))
    assert np.allclose(ev.outputs[2], g.sum(axis=0))

    def loss(xx):
        m, v = _ref_stats(xx, 1)
        return (g * (scale * (xx - m) / np.sqrt(v + np.float32(1e-3)))).sum()
    h = 1e-6
    num = np.zeros_like(x)
    for i in np.ndindex(*x.shape):
        d = np.zeros_like(x)
        d[i] = h
        num[i] = (loss(x + d) - loss(x - d)) / (2 * h)
    assert np.allclose(ev.outputs[0], num, atol=1e-5)


def test_batch_norm_provenance_and_explain():
    s = np.ones(2)
    ev = run_op(bn_program("training", (2, 2, 2), "f64", 2), [OPERAND, s, s],
                "stablehlo.batch_norm_training")
    prov = ev.provenance()
    src = prov.sources(0, (1, 0, 1))
    assert [(s.operand, s.index, s.role) for s in src[:3]] == [(0, (1, 0, 1), "combine"),
                                                               (1, (1,), "combine"), (2, (1,), "combine")]
    assert sorted(s.index for s in src if s.role == "window") == [(0, 0, 1), (0, 1, 1), (1, 0, 1), (1, 1, 1)]
    assert {s.index for s in prov.sources(1, (0,))} == {(0, 0, 0), (0, 1, 0), (1, 0, 0), (1, 1, 0)}
    assert {(t.result, t.index) for t in prov.targets(1, (0,))} == {
        (0, i) for i in np.ndindex(2, 2, 2) if i[2] == 0}
    e = explain(ev, 0, (0, 1, 0))
    text = format_explanation(e)
    assert "stddev" in text and "normalized_operand" in text and "mean" in text
    steps = {s.name: s for s in e.steps}
    assert list(steps) == ["feature_index", "f", "epsilon", "mean", "variance", "operand", "centered_operand",
                           "stddev", "normalized_operand", "scale", "offset", "output"]
    assert steps["f"].value == 0 and steps["f"].substituted.args == {"index": (0, 1, 0), "position": 2}
    # feature 0 holds 1, 3, 3, 1: mean 2, variance 1
    assert steps["mean"].value == 2.0 and steps["mean"].substituted.args == {"sum": 8.0, "divisor": 4.0,
                                                                              "count": 4}
    assert [c.value for c in steps["mean"].children] == [1.0, 3.0, 3.0, 1.0]
    assert steps["variance"].value == 1.0 and steps["variance"].substituted.args["sum"] == 4.0
    assert steps["operand"].value == 3.0 and steps["operand"].substituted.args == {"name": "%p0",
                                                                                    "index": "0, 1, 0"}
    assert steps["centered_operand"].value == 1.0
    assert steps["centered_operand"].substituted.args == {"operand": 3.0, "mean": 2.0}
    assert steps["stddev"].substituted.args == {"variance": 1.0, "epsilon": 0.0}
    assert steps["normalized_operand"].substituted.args == {"centered_operand": 1.0, "stddev": 1.0}
    assert steps["scale"].substituted.args == {"name": "%p1", "index": "0"}
    assert steps["output"].value == e.value == 2.0
    assert steps["output"].substituted.args == {"scale": 1.0, "normalized_operand": 1.0, "offset": 1.0}
    assert [n.key for n in e.notes] == ["reduction.batch_norm.note.order"]
    mean = explain(ev, 1, (1,))
    assert [s.name for s in mean.steps][-1] == "batch_mean" and mean.value == 3.0
    g = np.full((2, 2, 2), 0.1)
    gev = run_op(bn_program("grad", (2, 2, 2), "f64", 2), [OPERAND, s, np.array([2.0, 3.0]), s, g],
                 "stablehlo.batch_norm_grad")
    ge = explain(gev, 0, (0, 0, 0))
    assert "i6" in format_explanation(ge)
    gsteps = {s.name: s for s in ge.steps}
    assert gsteps["elements_per_feature"].substituted.args == {"size": 8, "dim": 2}
    assert gsteps["i2"].value == pytest.approx(0.4)
    assert gsteps["i2"].substituted.args == {"grad_output": "%p4", "slice": ":, :, 0"}
    i = {k: gsteps[k].value for k in ("i1", "i2", "i3", "i4", "i5", "i6")}
    assert gsteps["i6"].substituted.args == {"i1": i["i1"], "i2": i["i2"], "i5": i["i5"]}
    assert i["i6"] == pytest.approx((i["i1"] - i["i2"]) - i["i5"])
    assert gsteps["grad_operand"].value == ge.value == gev.outputs[0][0, 0, 0]
    gs = explain(gev, 1, (0,))
    assert gs.steps[-1].name == "grad_scale" and len(gs.steps[-1].children) == 4
    assert gs.steps[-1].substituted.args == {"grad_output": "%p4", "slice": ":, :, 0"}
    gsrc = gev.provenance().sources(2, (1,))
    assert {(x.operand, x.role) for x in gsrc} == {(4, "window")}
    iev = run_op(bn_program("inference", (2, 2, 2), "f64", 2), [OPERAND, s, s, np.array([2.0, 3.0]), s],
                 "stablehlo.batch_norm_inference")
    isrc = iev.provenance().sources(0, (1, 1, 0))
    assert [(x.operand, x.index) for x in isrc] == [(0, (1, 1, 0)), (1, (0,)), (2, (0,)), (3, (0,)),
                                                    (4, (0,))]
    assert explain(iev, 0, (1, 1, 0)).value == iev.outputs[0][1, 1, 0]


def test_batch_norm_constraints():
    good = bn_program("inference", (2, 2, 2), "f64", 2)
    assert "(C1)" in _verify_error(good.replace("feature_index = 2", "feature_index = 3"))
    assert "(C3)" in _verify_error(bn_program("inference", (2, 2, 3), "f64", 2)
                                   .replace("%p1: tensor<3xf64>", "%p1: tensor<2xf64>")
                                   .replace("(tensor<2x2x3xf64>, tensor<3xf64>,",
                                            "(tensor<2x2x3xf64>, tensor<2xf64>,"))
    assert "(C2)" in _verify_error(good.replace("%p1: tensor<2xf64>", "%p1: tensor<2xf32>")
                                   .replace("(tensor<2x2x2xf64>, tensor<2xf64>,",
                                            "(tensor<2x2x2xf64>, tensor<2xf32>,"))


# --- attribute records and result type inference --------------------------------------------

def _t(shape, e: str = "f32"):
    from hlolab.types import TensorType, element_type

    return TensorType(tuple(shape), element_type(e))


def _infer_error(infer, rec, types) -> tuple[str | None, str]:
    from hlolab.ops.record import InferError

    with pytest.raises(InferError) as info:
        infer(rec, types)
    return info.value.constraint, info.value.message


def test_reduce_infer_drops_the_reduced_dims_and_leaves_the_element_to_the_body():
    from hlolab.ops.record import Partial, type_admits
    from hlolab.ops.reduction import ReduceAttrs, infer_reduce

    rec = ReduceAttrs(dimensions=(1,))
    out = infer_reduce(rec, [_t((2, 3, 4)), _t((2, 3, 4), "i32"), _t(()), _t((), "i32")])
    assert out == [Partial((2, 4)), Partial((2, 4))]
    assert type_admits(out[0], _t((2, 4), "f64"))  # Ei is the body's (is_promotable)
    assert not type_admits(out[0], _t((2, 3)))
    assert infer_reduce(ReduceAttrs(dimensions=(0, 2)), [_t((None, 3, 5)), _t(())]) == [Partial((3,))]
    assert infer_reduce(ReduceAttrs(dimensions=(1,)), [_t((None, 3)), _t(())]) == [Partial((None,))]
    assert _infer_error(infer_reduce, ReduceAttrs(dimensions=(2,)), [_t((2, 3)), _t(())]) == (
        "C4", "dimensions = [2] must be in [0, 2) (rank(inputs[0]))")
    assert _infer_error(infer_reduce, ReduceAttrs(dimensions=(1, 1)), [_t((2, 3)), _t(())])[0] == "C5"
    assert _infer_error(infer_reduce, rec, [_t((2, 3))])[0] == "C3"
    assert _infer_error(infer_reduce, rec, [])[0] == "C3"


def test_reduce_and_map_records_read_dimensions_in_both_spellings():
    from hlolab.ir.attrs import DenseArrayAttr, DenseElementsAttr
    from hlolab.ops.reduction import MapAttrs, ReduceAttrs

    def err(c, m):
        return ValueError(m)

    assert ReduceAttrs.from_ir({"dimensions": DenseArrayAttr("i64", (0, 2))}, err).dimensions == (0, 2)
    dense = DenseElementsAttr(_t((1,), "i64"), np.array([1], np.int64))
    rec = MapAttrs.from_ir({"dimensions": dense}, err)
    assert rec.dimensions == (1,) and rec.to_ir() == {"dimensions": DenseArrayAttr("i64", (1,))}
    with pytest.raises(ValueError, match="missing attribute 'dimensions'"):
        ReduceAttrs.from_ir({}, err)


def test_map_infer_is_the_input_shape_with_the_computation_element():
    from hlolab.ops.record import Partial
    from hlolab.ops.reduction import MapAttrs, infer_map

    rec = MapAttrs(dimensions=(0, 1))
    assert infer_map(rec, [_t((2, None)), _t((2, 3))]) == [Partial((2, None))]
    assert _infer_error(infer_map, rec, []) == ("C2", "0 < size(inputs) = N does not hold: map has no inputs")


def test_reduce_precision_infer_keeps_the_baseline_type():
    from hlolab.ir.parser import parse_type
    from hlolab.ops.record import type_admits
    from hlolab.ops.reduction import ReducePrecisionAttrs, infer_reduce_precision

    rec = ReducePrecisionAttrs(exponent_bits=5, mantissa_bits=10)
    assert infer_reduce_precision(rec, [_t((2, None), "bf16")]) == [_t((2, None), "bf16")]
    (q,) = infer_reduce_precision(rec, [parse_type("tensor<2x!quant.uniform<i8:f32, 0.5:3>>")])
    assert type_admits(q, parse_type("tensor<2x!quant.uniform<i8:f32, 0.25:1>>"))  # other scale
    assert not type_admits(q, parse_type("tensor<2x!quant.uniform<i16:f32, 0.5:3>>"))
    assert not type_admits(q, parse_type("tensor<3x!quant.uniform<i8:f32, 0.5:3>>"))
    assert _infer_error(infer_reduce_precision, rec, [])[0] is None
    assert _infer_error(infer_reduce_precision, rec, [_t((2,)), _t((2,))])[0] is None


def test_batch_norm_infer_gives_the_operand_and_feature_vectors():
    from hlolab.ops.reduction import (
        BatchNormAttrs,
        infer_batch_norm_grad,
        infer_batch_norm_inference,
        infer_batch_norm_training,
    )

    rec = BatchNormAttrs(epsilon=0.001, feature_index=1)
    x, v = _t((2, 3, 4), "f16"), _t((3,), "f16")
    assert infer_batch_norm_inference(rec, [x, v, v, v, v]) == [x]
    assert infer_batch_norm_training(rec, [x, v, v]) == [x, v, v]
    assert infer_batch_norm_grad(rec, [x, v, v, v, x]) == [x, v, v]
    # a dynamic feature dim: the training statistics stay dynamic, grad takes size(scale) (C4, C5)
    xd = _t((2, None, 4), "f16")
    assert infer_batch_norm_training(rec, [xd, v, v])[1] == _t((None,), "f16")
    assert infer_batch_norm_grad(rec, [xd, v, v, v, xd])[1:] == [v, v]
    bad = BatchNormAttrs(epsilon=0.0, feature_index=3)
    assert _infer_error(infer_batch_norm_training, bad, [x, v, v]) == (
        "C1", "0 <= feature_index < rank(operand) does not hold: feature_index = 3, rank(operand) = 3")
    assert _infer_error(infer_batch_norm_grad, rec.replace(feature_index=-1), [x, v, v, v, x])[0] == "C1"
    assert _infer_error(infer_batch_norm_inference, rec, [x, v])[0] is None
    assert _infer_error(infer_batch_norm_training, rec, [v.element, v, v])[0] == "I1"

