"""reduce_window and select_and_scatter: spec and XLA-doc examples, a slow spec-loop
reference under hypothesis (recognized and general bodies, padding incl. negative,
base/window dilations), exact float/int numerics, constraints, provenance checked
against the values, window_layout and explain."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hlolab.errors import VerificationError
from hlolab.interp.engine import Interpreter
from hlolab.ir.parser import parse_module
from hlolab.messages import text
from hlolab.ops.registry import OpCall, lookup
from hlolab.ops.window import combine_step, window_layout
from hlolab.trace.explain import DimRole
from hlolab.trace.fanin import FanInProvenance
from hlolab.trace.provenance import Source
from hlolab.types import element_type
from tests.ops.regions_text import combiner_body
from tests.test_messages import assert_substituted_everywhere

# --- building programs -----------------------------------------------------------------


def ttype(shape, e: str) -> str:
    return f"tensor<{'x'.join(str(d) for d in shape)}{'x' if shape else ''}{e}>"


def rw_body(kinds: list[str], es: list[str]) -> str:
    """A body per output (see combiner_body: "affine", "mix", "keep", op names...)."""
    return combiner_body(kinds, es)


def arr(xs) -> str:
    return f"array<i64: {', '.join(str(int(x)) for x in xs)}>" if len(xs) else "array<i64>"


def rw_program(shape, es, out_shape, kinds, wd, ws=None, bd=None, wdil=None, pad=None,
               body_es=None) -> str:
    n = len(es)
    body_es = body_es or es
    ins = [ttype(shape, e) for e in es] + [ttype((), e) for e in es]
    res = [ttype(out_shape, e) for e in body_es]
    attrs = [f"window_dimensions = {arr(wd)}"]
    if ws is not None:
        attrs.append(f"window_strides = {arr(ws)}")
    if bd is not None:
        attrs.append(f"base_dilations = {arr(bd)}")
    if wdil is not None:
        attrs.append(f"window_dilations = {arr(wdil)}")
    if pad is not None:
        rows = ", ".join(f"[{lo}, {hi}]" for lo, hi in pad)
        attrs.append(f"padding = dense<[{rows}]> : tensor<{len(pad)}x2xi64>")
    params = ", ".join(f"%p{i}: {t}" for i, t in enumerate(ins))
    names = ", ".join(f"%p{i}" for i in range(2 * n))
    lhs = f"%r:{n}" if n > 1 else "%r"
    rets = ", ".join(f"%r#{i}" for i in range(n)) if n > 1 else "%r"
    return (f"func.func @main({params}) -> ({', '.join(res)}) {{\n"
            f"  {lhs} = \"stablehlo.reduce_window\"({names}) ({{\n    {rw_body(kinds, body_es)}\n  }}) "
            f"{{{', '.join(attrs)}}} : ({', '.join(ins)}) -> ({', '.join(res)})\n"
            f"  return {rets} : {', '.join(res)}\n}}")


def run(text: str, args: list[np.ndarray], name: str):
    events = list(Interpreter(parse_module(text)).events(None, args))
    return next(e for e in events if e.op.name == name)


def explain(ev, result: int, index: tuple):
    return lookup(ev.op.name).explain(ev.call, ev.inputs, ev.outputs, result, index)


def provenance(ev):
    return lookup(ev.op.name).provenance(ev.call, ev.inputs, ev.outputs)


def out_shape_of(shape, wd, ws, bd, wdil, pad):
    out = []
    for s, w, st_, b, d, (lo, hi) in zip(shape, wd, ws, bd, wdil, pad, strict=True):
        padded = lo + (0 if s == 0 else (s - 1) * b + 1) + hi
        dw = (w - 1) * d + 1
        out.append(0 if padded <= 0 or dw > padded else (padded - dw) // st_ + 1)
    return tuple(out)


def reduce_window(xs, inits, kinds, wd, ws=None, bd=None, wdil=None, pad=None, es=None):
    r = xs[0].ndim
    ws_, bd_, wdil_ = ws or (1,) * r, bd or (1,) * r, wdil or (1,) * r
    pad_ = pad or [(0, 0)] * r
    es = es or [str(element_type_name(x.dtype)) for x in xs]
    out = out_shape_of(xs[0].shape, wd, ws_, bd_, wdil_, pad_)
    text = rw_program(xs[0].shape, es, out, kinds, wd, ws, bd, wdil, pad)
    return run(text, list(xs) + [np.asarray(v, dtype=x.dtype) for v, x in zip(inits, xs, strict=True)],
               "stablehlo.reduce_window")


_NAMES = {np.dtype(np.int32): "i32", np.dtype(np.int64): "i64", np.dtype(np.int8): "i8",
          np.dtype(np.float32): "f32", np.dtype(np.float64): "f64", np.dtype(np.bool_): "i1",
          np.dtype(np.float16): "f16", np.dtype(ml_dtypes.bfloat16): "bf16",
          np.dtype(np.uint8): "ui8", np.dtype(ml_dtypes.int4): "i4"}


def element_type_name(dt) -> str:
    return _NAMES[np.dtype(dt)]


# --- the slow reference: the spec's definition, one result element at a time ---------

def spec_pad(x, v, lo, hi, interior):
    """stablehlo.pad, element by element (negative lo/hi crop)."""
    shape = [lo_ + (0 if n == 0 else (n - 1) * (i + 1) + 1) + hi_
             for lo_, n, i, hi_ in zip(lo, x.shape, interior, hi, strict=True)]
    out = np.full([max(0, s) for s in shape], v, dtype=x.dtype)
    for idx in np.ndindex(*x.shape):
        pos = tuple(lo_ + j * (i + 1) for lo_, j, i in zip(lo, idx, interior, strict=True))
        if all(0 <= p < s for p, s in zip(pos, shape, strict=True)):
            out[pos] = x[idx]
    return out


def reference_reduce_window(xs, inits, body, wd, ws, bd, wdil, pad):
    """results[result_index] = fold of body over init then the window, row-major."""
    r = xs[0].ndim
    padded = [spec_pad(x, v, [p[0] for p in pad], [p[1] for p in pad], [b - 1 for b in bd])
              for x, v in zip(xs, inits, strict=True)]
    out_shape = out_shape_of(xs[0].shape, wd, ws, bd, wdil, pad)
    res = [np.zeros(out_shape, dtype=x.dtype) for x in xs]
    for ri in np.ndindex(*out_shape):
        acc = [np.asarray(v, dtype=x.dtype) for v, x in zip(inits, xs, strict=True)]
        for w in np.ndindex(*wd):
            pos = tuple(ri[d] * ws[d] + w[d] * wdil[d] for d in range(r))
            acc = body(acc, [p[pos] for p in padded])
        for k in range(len(xs)):
            res[k][ri] = acc[k]
    return res


def int_body(kind):
    def f(acc, el):
        a, b = int(acc[0]), int(el[0])
        v = {"add": a + b, "maximum": max(a, b), "minimum": min(a, b), "multiply": a * b,
             "affine": a * b + 1}[kind]
        return [np.asarray(v).astype(np.int64).astype(np.int32)]  # wraps like i32
    return f


@st.composite
def window_cases(draw, max_rank=3, negative=True):
    """(shape, window_dimensions, window_strides, base_dilations, window_dilations, padding)
    with at least one window."""
    r = draw(st.integers(1, max_rank))
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=r, max_size=r)))
    wd = tuple(draw(st.lists(st.integers(1, 3), min_size=r, max_size=r)))
    ws = tuple(draw(st.lists(st.integers(1, 3), min_size=r, max_size=r)))
    bd = tuple(draw(st.lists(st.integers(1, 3), min_size=r, max_size=r)))
    wdil = tuple(draw(st.lists(st.integers(1, 2), min_size=r, max_size=r)))
    low = -2 if negative else 0
    pad = [tuple(draw(st.lists(st.integers(low, 2), min_size=2, max_size=2))) for _ in range(r)]
    out = out_shape_of(shape, wd, ws, bd, wdil, pad)
    if 0 in out:  # move the padding up until there is a window
        pad = [(max(lo, 0), max(hi, 0) + (w - 1) * d) for (lo, hi), w, d in zip(pad, wd, wdil,
                                                                                 strict=True)]
    return shape, wd, ws, bd, wdil, pad, draw(st.integers(0, 2**31 - 1))


# --- examples --------------------------------------------------------------------------

def test_spec_example():
    x = np.array([[1, 2], [3, 4], [5, 6]], np.int64)
    ev = reduce_window([x], [0], ["add"], (2, 1), (4, 1), (2, 1), (3, 1), [(2, 1), (0, 0)])
    assert ev.outputs[0].tolist() == [[0, 0], [3, 4]]


def test_xla_doc_1d_min_valid_and_same():
    # min, window 3, stride 2, init MAX_FLOAT over [10000, 1000, 100, 10, 1]
    x = np.array([10000, 1000, 100, 10, 1], np.float32)
    big = np.finfo(np.float32).max
    assert reduce_window([x], [big], ["minimum"], (3,), (2,)).outputs[0].tolist() == [100, 1]
    ev = reduce_window([x], [big], ["minimum"], (3,), (2,), pad=[(1, 1)])
    assert ev.outputs[0].tolist() == [1000, 10, 1]


def test_xla_doc_2d_max_2x3_stride_2x3():
    x = np.arange(24, dtype=np.float32).reshape(4, 6) * np.float32(1.5) - 7
    x[1, 4] = 100
    ev = reduce_window([x], [np.finfo(np.float32).min], ["maximum"], (2, 3), (2, 3))
    want = x.reshape(2, 2, 2, 3).max(axis=(1, 3))
    assert ev.outputs[0].tolist() == want.tolist() and ev.outputs[0][0, 1] == 100


def test_padding_holes_and_init_count():
    # init 1 with add: every padding/hole position contributes init once (the spec's pad)
    x = np.array([1, 2, 3], np.int32)
    assert reduce_window([x], [1], ["add"], (3,), pad=[(1, 1)]).outputs[0].tolist() == [5, 7, 7]
    assert reduce_window([x], [1], ["add"], (3,), bd=(2,)).outputs[0].tolist() == [5, 5, 7]


def test_negative_padding_crops():
    x = np.arange(6, dtype=np.int32)
    ev = reduce_window([x], [0], ["add"], (2,), pad=[(-2, -1)])  # [2, 3, 4]
    assert ev.outputs[0].tolist() == [5, 7]
    ev = reduce_window([x], [0], ["add"], (1,), bd=(2,), pad=[(-1, 0)])  # hole, 1, hole, 2, ...
    assert ev.outputs[0].tolist() == [0, 1, 0, 2, 0, 3, 0, 4, 0, 5]


def test_empty_result():
    x = np.arange(3, dtype=np.int32)
    ev = reduce_window([x], [0], ["add"], (2,), pad=[(-3, 0)])
    assert ev.outputs[0].shape == (0,)


def test_variadic_argmax_style_general_body():
    # a general body mixing outputs: out_i = a_i + b_{i+1}
    x0 = np.arange(6, dtype=np.int32)
    x1 = np.arange(6, dtype=np.int32) * 10
    ev = reduce_window([x0, x1], [0, 0], ["mix", "mix"], (2,), (2,))
    # fold: acc0 = acc0 + x1, acc1 = acc1 + x0
    assert ev.outputs[0].tolist() == [10, 50, 90] and ev.outputs[1].tolist() == [1, 5, 9]


def test_keep_and_replace_bodies():
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    assert reduce_window([x], [7], ["keep"], (1, 2)).outputs[0].tolist() == [[7, 7], [7, 7]]
    assert reduce_window([x], [7], ["replace"], (2, 2)).outputs[0].tolist() == [[4, 5]]


@given(window_cases(), st.sampled_from(["add", "maximum", "minimum", "multiply", "affine"]))
def test_matches_spec_reference_i32(case, kind):
    shape, wd, ws, bd, wdil, pad, seed = case
    rng = np.random.default_rng(seed)
    x = rng.integers(-2**31, 2**31, shape, dtype=np.int64).astype(np.int32)  # overflows wrap
    init = int(rng.integers(-5, 5))
    ev = reduce_window([x], [init], [kind], wd, ws, bd, wdil, pad)
    want = reference_reduce_window([x], [init], int_body(kind), wd, ws, bd, wdil, pad)
    assert ev.outputs[0].tolist() == want[0].tolist()


@given(window_cases(max_rank=2), st.sampled_from(["add", "maximum", "minimum", "multiply"]),
       st.sampled_from(["f32", "bf16", "f16"]))
def test_float_matches_stepwise_reference(case, kind, e):
    """Bit-exact against the fold with the element-wise op semantics (NaN, -0.0, rounding
    to the element type after every step)."""
    shape, wd, ws, bd, wdil, pad, seed = case
    rng = np.random.default_rng(seed)
    dt = element_type(e).dtype
    pool = np.array([0.0, -0.0, 1.5, -2.25, np.nan, np.inf, -np.inf, 3e-3, 7.0, -0.5])
    x = rng.choice(pool, shape).astype(dt) if seed % 2 else rng.standard_normal(shape).astype(dt)
    init = np.asarray(rng.choice(pool)).astype(dt)
    et = element_type(e)
    ev = reduce_window([x], [init], [kind], wd, ws, bd, wdil, pad, es=[e])

    def body(acc, el):
        return [combine_step(kind, et, acc[0], np.asarray(el[0]))]

    want = reference_reduce_window([x], [init], body, wd, ws, bd, wdil, pad)[0]
    assert ev.outputs[0].dtype == dt
    assert ev.outputs[0].tobytes() == want.astype(dt).tobytes()


def test_float_max_nan_and_signed_zero():
    f = np.float32
    x = np.array([-0.0, 0.0, -0.0, -0.0, np.nan, 1.0], f)
    ev = reduce_window([x], [f(-np.inf)], ["maximum"], (2,), (2,))
    out = ev.outputs[0]
    assert np.signbit(out[0]) == False and np.signbit(out[1]) == True and np.isnan(out[2])  # noqa: E712
    ev = reduce_window([x], [f(np.inf)], ["minimum"], (2,), (2,))
    assert np.signbit(ev.outputs[0][0]) and np.isnan(ev.outputs[0][2])


def test_bf16_add_rounds_every_step():
    bf = ml_dtypes.bfloat16
    x = np.array([1, 2**-8, 2**-8], bf)  # in f32 then rounded once it would be 1 + 2**-7
    ev = reduce_window([x], [bf(0)], ["add"], (3,), es=["bf16"])
    assert ev.outputs[0].tolist() == [1.0]


def test_promoted_body_type():
    x = np.array([100, 100, 100], np.int8)
    text = rw_program((3,), ["i8"], (1,), ["add"], (3,), body_es=["i32"])
    ev = run(text, [x, np.array(0, np.int8)], "stablehlo.reduce_window")
    assert ev.outputs[0].dtype == np.int32 and ev.outputs[0].tolist() == [300]


def test_int4_and_i1():
    x = np.array([7, 7, 7, -8], ml_dtypes.int4)
    ev = reduce_window([x], [0], ["add"], (2,), es=["i4"])
    assert [int(v) for v in ev.outputs[0]] == [-2, -2, -1]  # 14 and -1 wrapped to int4
    b = np.array([True, False, False, False])
    assert reduce_window([b], [False], ["add"], (2,), es=["i1"]).outputs[0].tolist() == [True, False,
                                                                                           False]


def test_general_body_matches_recognized():
    rng = np.random.default_rng(3)
    x = rng.integers(-50, 50, (5, 6)).astype(np.int32)
    a = reduce_window([x], [2], ["affine"], (2, 3), (1, 2), pad=[(1, 0), (0, 2)])
    want = reference_reduce_window([x], [2], int_body("affine"), (2, 3), (1, 2), (1, 1), (1, 1),
                                   [(1, 0), (0, 2)])
    assert a.outputs[0].tolist() == want[0].tolist()


# --- constraints -------------------------------------------------------------------------

def _expect(text: str, constraint: str):
    with pytest.raises(VerificationError, match=rf"\({constraint}\)"):
        Interpreter(parse_module(text)).run(None, [np.zeros((4,), np.int32), np.array(0, np.int32)])


@pytest.mark.parametrize("change, constraint", [
    (dict(wd=(2, 1)), "C4"), (dict(wd=(0,)), "C5"), (dict(ws=(1, 1)), "C6"), (dict(ws=(0,)), "C7"),
    (dict(bd=(1, 1)), "C8"), (dict(bd=(0,)), "C9"), (dict(wdil=(1, 1)), "C10"),
    (dict(wdil=(-1,)), "C11"), (dict(pad=[(0, 0), (0, 0)]), "C12"), (dict(out=(2,)), "C15"),
])
def test_constraints(change, constraint):
    kw = dict(wd=(2,), ws=None, bd=None, wdil=None, pad=None, out=(3,))
    kw.update(change)
    out = kw.pop("out")
    _expect(rw_program((4,), ["i32"], out, ["add"], **kw), constraint)


def test_body_and_result_type_constraints():
    t = rw_program((4,), ["i32"], (3,), ["add"], (2,)).replace("tensor<3xi32>", "tensor<3xf32>")
    _expect(t, "C16")
    t = rw_program((4,), ["i32"], (3,), ["add"], (2,), body_es=["i16"])
    _expect(t, "C13")
    t = rw_program((4,), ["i32"], (3,), ["add"], (2,)).replace("%p1: tensor<i32>", "%p1: tensor<i64>")
    t = t.replace("(tensor<4xi32>, tensor<i32>) ->", "(tensor<4xi32>, tensor<i64>) ->")
    with pytest.raises(VerificationError, match=r"\(C3\)"):
        Interpreter(parse_module(t)).run(None, [np.zeros((4,), np.int32), np.array(0, np.int64)])


def test_quantized_reduce_window_runs_the_body_by_the_quantized_rule():
    q = "!quant.uniform<i8:f32, 0.5:1>"
    text = f"""func.func @main(%x: tensor<4x{q}>, %i: tensor<{q}>) -> tensor<3x{q}> {{
  %r = "stablehlo.reduce_window"(%x, %i) ({{
    ^bb0(%a: tensor<{q}>, %b: tensor<{q}>):
      %s = stablehlo.add %a, %b : tensor<{q}>
      stablehlo.return %s : tensor<{q}>
  }}) {{window_dimensions = array<i64: 2>}} : (tensor<4x{q}>, tensor<{q}>) -> tensor<3x{q}>
  return %r : tensor<3x{q}>
}}"""
    # (storage - 1) * 0.5 = [0, 1, 2, 3], init 0: window sums [1, 3, 5] -> storage [3, 7, 11]
    (r,) = Interpreter(parse_module(text)).run(None, [np.array([1, 3, 5, 7], np.int8), np.array(1, np.int8)])
    assert r.dtype == np.int8 and r.tolist() == [3, 7, 11]


# --- provenance ----------------------------------------------------------------------------

@given(window_cases(), st.sampled_from(["add", "affine"]))
def test_provenance_agrees_with_values(case, kind):
    shape, wd, ws, bd, wdil, pad, seed = case
    rng = np.random.default_rng(seed)
    x = rng.integers(-1000, 1000, shape).astype(np.int64)
    init = int(rng.integers(-3, 4))
    ev = reduce_window([x], [init], [kind], wd, ws, bd, wdil, pad, es=["i64"])
    prov = provenance(ev)
    assert isinstance(prov, FanInProvenance)
    out = ev.outputs[0]
    k = int(np.prod(wd))
    mask = np.zeros(out.shape, dtype=bool)
    for ri in list(np.ndindex(*out.shape))[:6]:
        src = prov.sources(0, ri)
        assert src[0] == Source(1, (), "init")
        views = prov.window(0, ri)
        win = next(v for v in views if v.role == "window")
        pv = next(v for v in views if v.role == "pad_value")
        assert (win.valid ^ pv.valid).all() and win.valid.size == k
        vals = [x[tuple(i)] for i in win.index[win.valid]]
        assert all(0 <= i < n for s in src if s.role == "window" for i, n in zip(s.index, shape,
                                                                                 strict=True))
        if kind == "add":  # result == init + sum(window sources) + (#pad positions) * init
            assert out[ri] == init + sum(vals) + int(pv.valid.sum()) * init
        kinds = window_layout(ev.call, ri, x.shape)
        assert ((kinds == "operand") == win.valid.reshape(wd)).all()
        # targets is the inverse of sources
        for s in src:
            if s.role == "window":
                assert any(t.index == ri and t.role == "window" for t in prov.targets(0, s.index))
        mask[ri] = True
    # back / fwd agree with the element queries
    back = prov.back(0, mask)
    want = np.zeros(shape, dtype=bool)
    for ri in zip(*np.nonzero(mask)):
        for s in prov.sources(0, tuple(int(i) for i in ri)):
            if s.role == "window":
                want[s.index] = True
    got = back.get((0, "window"), np.zeros(shape, dtype=bool))
    assert (got == want).all()
    if want.any():
        q = tuple(int(i) for i in np.argwhere(want)[0])
        m = np.zeros(shape, dtype=bool)
        m[q] = True
        fwd = prov.fwd(0, m)[(0, "window")]
        assert sorted(map(tuple, np.argwhere(fwd).tolist())) == sorted(
            t.index for t in prov.targets(0, q) if t.role == "window")


def test_general_variadic_body_reads_every_input():
    x0 = np.arange(4, dtype=np.int32)
    ev = reduce_window([x0, x0 * 2], [0, 0], ["mix", "mix"], (2,))
    roles = {(s.operand, s.role) for s in provenance(ev).sources(0, (1,))}
    assert roles == {(2, "init"), (3, "init"), (0, "window"), (1, "window")}
    ev = reduce_window([x0, x0 * 2], [0, 0], ["add", "add"], (2,))
    roles = {(s.operand, s.role) for s in provenance(ev).sources(1, (1,))}
    assert roles == {(3, "init"), (1, "window")}


def test_window_layout_padding_and_holes():
    x = np.arange(3, dtype=np.int32)
    ev = reduce_window([x], [0], ["add"], (4,), bd=(2,), pad=[(1, 0)])  # p 0 h 1 h 2
    assert window_layout(ev.call, (0,), x.shape).tolist() == ["padding", "operand", "hole", "operand"]
    pv = next(v for v in provenance(ev).window(0, (0,)) if v.role == "pad_value")
    assert pv.position[:, 0].tolist() == [0, 1, 2, 3] and pv.frame == (6,)


# --- explain ---------------------------------------------------------------------------

def _walk(step):
    yield step
    for c in step.children:
        yield from _walk(c)


# formulas that describe rather than compute: no symbols take values in them
_DESCRIPTIVE = {"window.sas.init_value.formula", "window.sas.window.formula",
                "window.sas.selected_index.formula", "window.sas.candidate.first"}


def _key(step):
    """A step's name: its spec symbol, or its message key."""
    return step.name if isinstance(step.name, str) else step.name.key


def test_explain_spec_example():
    x = np.array([[1, 2], [3, 4], [5, 6]], np.int64)
    ev = reduce_window([x], [0], ["add"], (2, 1), (4, 1), (2, 1), (3, 1), [(2, 1), (0, 0)])
    e = explain(ev, 0, (1, 0))
    assert e.value == 3
    steps = {s.name: s for s in e.steps}
    assert steps["dilated_input_shape"].value == (5, 2)
    assert text(steps["dilated_input_shape"].substituted) == "([3, 2] - 1) * [2, 1] + 1"
    assert steps["padded_input_shape"].value == (8, 2)
    assert text(steps["padded_input_shape"].substituted) == "[2, 0] + [5, 2] + [1, 0]"
    assert steps["window_start"].value == (4, 0)
    assert text(steps["window_start"].substituted) == "(1, 0) * (4, 1)"
    assert steps["window_end"].value == (8, 1)
    assert text(steps["window_end"].substituted) == "(4, 0) + ((2, 1) - 1) * (3, 1) + 1"
    win = steps["windows[0]"]
    assert win.value.tolist() == [[3], [0]]
    assert text(win.substituted) == "slice(padded_inputs[0], (4, 0), (8, 1), (3, 1))"
    real, pad = win.children
    assert real.name == "windows[0][0, 0]" and real.value == 3
    assert text(real.substituted) == "padded_inputs[0][(4, 0)]"
    assert real.dim_roles == {0: DimRole("operand"), 1: DimRole("operand")}
    assert [(c.name, c.value) for c in real.children] == [("position", (4, 0)), ("operand_index", (1, 0)),
                                                          ("inputs[0][operand_index]", 3)]
    assert text(real.children[0].substituted) == "(4, 0) + (0, 0) * (3, 1)"
    assert text(real.children[1].substituted) == "((4, 0) - (2, 0)) / (2, 1)"
    assert text(real.children[2].substituted) == "%p0[1, 0]"
    # (7, 0) is below the dilated input (rows 2..6): padding in dim 0 only
    assert pad.dim_roles == {0: DimRole("padding"), 1: DimRole("operand")}
    position, value = pad.children
    assert position.value == (7, 0)
    assert value.name == "init_values[0]" and value.value == 0
    assert value.formula.key == "window.rw.padding.formula"
    assert value.substituted.args["rel"] == (5, 0) and value.substituted.args["dilated_input_shape"] == (5, 2)
    fold = steps["results[0][result_index]"]
    assert text(fold.substituted) == "reduce(windows[0], 0, [0, 1], add)"
    assert [c.name.args["w"] for c in fold.children] == [(0, 0), (1, 0)]
    assert [(text(c.substituted), c.value) for c in fold.children] == [("add(0, 3)", 3), ("add(3, 0)", 3)]
    assert [n.key for n in e.notes] == ["window.rw.note.recognized", "window.rw.note.pad_value"]
    assert e.notes[1].args == {"padding": 1, "holes": 0}
    assert_substituted_everywhere(e, _DESCRIPTIVE)


def test_explain_hole_and_general_body():
    x = np.array([1, 2, 3], np.int32)
    ev = reduce_window([x], [2], ["affine"], (3,), bd=(2,))
    e = explain(ev, 0, (1,))  # positions 1 (hole), 2 (x[1]), 3 (hole)
    win = next(s for s in e.steps if s.name == "windows[0]")
    assert [c.dim_roles for c in win.children] == [{0: DimRole("hole")}, {0: DimRole("operand")},
                                                   {0: DimRole("hole")}]
    hole = win.children[0].children[-1]
    assert hole.name == "init_values[0]" and hole.value == 2 and hole.formula.key == "window.rw.hole.formula"
    assert hole.substituted.args["remainder"] == (1,)
    fold = e.steps[-1]
    assert [c.value for c in fold.children] == [5, 11, 23] and e.value == ev.outputs[0][1] == 23
    assert [text(c.substituted) for c in fold.children] == ["body(2, 2)", "body(5, 2)", "body(11, 2)"]
    notes = {n.key: n.args for n in e.notes}
    assert notes["window.rw.note.pad_value"] == {"padding": 0, "holes": 2}
    assert "window.rw.note.general" in notes
    assert_substituted_everywhere(e, _DESCRIPTIVE)


def test_explain_classifies_operand_padding_and_hole_apart():
    # the wording fix: a base-dilation hole is a hole, never padding (per position and per dim)
    x = np.arange(3, dtype=np.int32)
    ev = reduce_window([x], [0], ["add"], (4,), bd=(2,), pad=[(1, 0)])  # p 0 h 1 h 2
    e = explain(ev, 0, (0,))
    win = next(s for s in e.steps if s.name == "windows[0]")
    assert [c.dim_roles[0] for c in win.children] == [DimRole("padding"), DimRole("operand"), DimRole("hole"),
                                                      DimRole("operand")]
    assert window_layout(ev.call, (0,), x.shape).tolist() == ["padding", "operand", "hole", "operand"]
    assert [c.children[-1].formula.key if c.children[-1].formula else None for c in win.children] == [
        "window.rw.padding.formula", None, "window.rw.hole.formula", None]
    assert {n.key: n.args for n in e.notes}["window.rw.note.pad_value"] == {"padding": 1, "holes": 1}
    # 2-D: a position outside the input in dim 0 and between two inputs in dim 1 is padding,
    # and its dims say which is which
    x2 = np.arange(6, dtype=np.int32).reshape(2, 3)
    ev = reduce_window([x2], [0], ["add"], (2, 2), bd=(1, 2), pad=[(1, 0), (0, 0)])
    e = explain(ev, 0, (0, 0))
    win = next(s for s in e.steps if s.name == "windows[0]")
    by_w = {c.name: c for c in win.children}
    assert by_w["windows[0][0, 1]"].dim_roles == {0: DimRole("padding"), 1: DimRole("hole")}
    assert by_w["windows[0][0, 1]"].children[-1].formula.key == "window.rw.padding.formula"
    assert by_w["windows[0][1, 1]"].dim_roles == {0: DimRole("operand"), 1: DimRole("hole")}
    assert by_w["windows[0][1, 1]"].children[-1].formula.key == "window.rw.hole.formula"
    assert by_w["windows[0][1, 0]"].dim_roles == {0: DimRole("operand"), 1: DimRole("operand")}
    for c in win.children:
        kinds = {r.kind for r in c.dim_roles.values()}
        assert kinds <= {"operand", "padding", "hole"}


@given(window_cases(max_rank=2), st.data())
def test_explain_agrees_with_the_padded_input(case, data):
    shape, wd, ws, bd, wdil, pad, seed = case
    x = np.random.default_rng(seed).integers(-9, 9, size=shape).astype(np.int32)
    ev = reduce_window([x], [100], ["add"], wd, ws, bd, wdil, pad)
    out = ev.outputs[0]
    ri = tuple(data.draw(st.integers(0, n - 1)) for n in out.shape)
    e = explain(ev, 0, ri)
    padded = spec_pad(x, 100, [p[0] for p in pad], [p[1] for p in pad], [b - 1 for b in bd])
    layout = window_layout(ev.call, ri, x.shape)
    win = next(s for s in e.steps if s.name == "windows[0]")
    for c, w in zip(win.children, np.ndindex(*wd), strict=True):
        position = c.children[0].value
        assert c.value == padded[position]
        kind = layout[w]
        roles = {r.kind for r in c.dim_roles.values()}
        if kind == "operand":
            assert roles == {"operand"} and c.children[-1].name == "inputs[0][operand_index]"
        elif kind == "padding":
            assert "padding" in roles and c.children[-1].formula.key == "window.rw.padding.formula"
        else:
            assert "padding" not in roles and "hole" in roles
            assert c.children[-1].formula.key == "window.rw.hole.formula"
    assert e.value == out[ri] == e.steps[-1].children[-1].value


# --- select_and_scatter ------------------------------------------------------------------

def sas_program(shape, src_shape, e, wd=None, ws=None, pad=None, select="GE", scatter="add",
                result_e=None) -> str:
    result_e = result_e or e
    attrs = []
    if wd is not None:
        attrs.append(f"window_dimensions = {arr(wd)}")
    if ws is not None:
        attrs.append(f"window_strides = {arr(ws)}")
    if pad is not None:
        rows = ", ".join(f"[{lo}, {hi}]" for lo, hi in pad)
        attrs.append(f"padding = dense<[{rows}]> : tensor<{len(pad)}x2xi64>")
    if select == "general":  # GE written as not(LT): not recognized, same values
        sel = (f"%c = stablehlo.compare LT, %a, %b : (tensor<{e}>, tensor<{e}>) -> tensor<i1>\n"
               f"      %s = stablehlo.not %c : tensor<i1>\n      stablehlo.return %s : tensor<i1>")
    else:
        sel = (f"%s = stablehlo.compare {select}, %a, %b : (tensor<{e}>, tensor<{e}>) -> tensor<i1>\n"
               f"      stablehlo.return %s : tensor<i1>")
    if scatter == "affine":
        sc = (f"%m = stablehlo.multiply %a, %b : tensor<{result_e}>\n"
              f"      %one = stablehlo.constant dense<1> : tensor<{result_e}>\n"
              f"      %s = stablehlo.add %m, %one : tensor<{result_e}>\n"
              f"      stablehlo.return %s : tensor<{result_e}>")
    else:
        sc = (f"%s = stablehlo.{scatter} %a, %b : tensor<{result_e}>\n"
              f"      stablehlo.return %s : tensor<{result_e}>")
    t_op, t_src, t_init = ttype(shape, e), ttype(src_shape, e), ttype((), e)
    t_res = ttype(shape, result_e)
    return (f"func.func @main(%x: {t_op}, %src: {t_src}, %i: {t_init}) -> {t_res} {{\n"
            f"  %r = \"stablehlo.select_and_scatter\"(%x, %src, %i) ({{\n"
            f"    ^bb0(%a: tensor<{e}>, %b: tensor<{e}>):\n      {sel}\n  }}, {{\n"
            f"    ^bb0(%a: tensor<{result_e}>, %b: tensor<{result_e}>):\n      {sc}\n  }}) "
            f"{{{', '.join(attrs)}}} : ({t_op}, {t_src}, {t_init}) -> {t_res}\n"
            f"  return %r : {t_res}\n}}")


def sas(x, source, init, wd, ws=None, pad=None, select="GE", scatter="add"):
    e = element_type_name(x.dtype)
    text = sas_program(x.shape, source.shape, e, wd, ws, pad, select, scatter)
    return run(text, [x, source, np.asarray(init, x.dtype)], "stablehlo.select_and_scatter")


def reference_sas(x, source, init, wd, ws, pad, select, scatter):
    """The reference interpreter's loop, one source element at a time."""
    res = np.full(x.shape, init, dtype=x.dtype)
    for si in np.ndindex(*source.shape):
        cur = None
        for w in np.ndindex(*wd):
            q = tuple(si[d] * ws[d] + w[d] - pad[d][0] for d in range(x.ndim))
            if not all(0 <= a < n for a, n in zip(q, x.shape, strict=True)):
                continue
            if cur is None or not select(x[cur], x[q]):
                cur = q
        if cur is not None:
            res[cur] = scatter(res[cur], source[si])
    return res


def test_sas_spec_example():
    x = np.array([[1, 5], [2, 5], [3, 6], [4, 4]], np.int64)
    s = np.array([[5, 6], [7, 8]], np.int64)
    ev = sas(x, s, 0, (3, 1), (2, 1), [(0, 1), (0, 0)])
    assert ev.outputs[0].tolist() == [[0, 0], [0, 0], [5, 14], [7, 0]]


def test_sas_provenance_is_what_can_change_the_element():
    """Spec example: windows (rows 0-2 | 2-3 with padding) per column; GE selects.
    out[2, 0] = 5: window (0, 0) chose it (rows 0-2 could take it away); window (1, 0)
    chose row 3 but row 2 is its runner-up, so a smaller operand[3, 0] hands it over.
    out[1, 1] = 0: no window chose it, but a larger operand[1, 1] would win window (0, 1).
    out[3, 1] = 0: the runner-up of window (1, 1), whose winner operand[2, 1] could lose."""
    x = np.array([[1, 5], [2, 5], [3, 6], [4, 4]], np.int64)
    s = np.array([[5, 6], [7, 8]], np.int64)
    prov = provenance(sas(x, s, 0, (3, 1), (2, 1), [(0, 1), (0, 0)]))
    src = lambda i: {(q.operand, q.index, q.role) for q in prov.sources(0, i)}  # noqa: E731
    assert src((2, 0)) == {(2, (), "init"), (0, (2, 0), "selected"), (1, (0, 0), "update"),
                           (0, (0, 0), "control"), (0, (1, 0), "control"), (0, (3, 0), "control")}
    assert src((1, 1)) == {(2, (), "init"), (0, (1, 1), "control")}
    assert src((3, 1)) == {(2, (), "init"), (0, (3, 1), "control"), (0, (2, 1), "control")}
    # targets, back and fwd say the same
    for j in np.ndindex(*x.shape):
        want = {(0, i, role) for i in np.ndindex(*x.shape) for (o, q, role) in src(i) if o == 0 and q == j}
        assert {(t.result, t.index, t.role) for t in prov.targets(0, j)} == want
        m = np.zeros(x.shape, bool)
        m[j] = True
        fwd = prov.fwd(0, m)
        assert {(0, tuple(int(v) for v in i), role) for (_, role), mk in fwd.items()
                for i in np.argwhere(mk)} == want
    for i in np.ndindex(*x.shape):
        m = np.zeros(x.shape, bool)
        m[i] = True
        back = prov.back(0, m)
        got = {(o, tuple(int(v) for v in q), role) for (o, role), mk in back.items() for q in np.argwhere(mk)}
        assert got == src(i)


def test_sas_overlapping_windows_xla_doc_style():
    # the XLA doc's figure (2): the 9 is the max of two overlapping windows, 2 + 6 = 8
    x = np.array([[7, 2, 5, 3], [3, 9, 1, 1]], np.int32)
    s = np.array([[2, 6, 3]], np.int32)
    ev = sas(x, s, 0, (2, 2), (1, 1))
    assert ev.outputs[0].tolist() == [[0, 0, 3, 0], [0, 8, 0, 0]]
    want = reference_sas(x, s, 0, (2, 2), (1, 1), [(0, 0), (0, 0)], lambda a, b: a >= b,
                         lambda a, b: a + b)
    assert ev.outputs[0].tolist() == want.tolist()


def test_sas_padding_is_never_selected():
    x = np.array([-5, -7], np.int32)
    s = np.array([1, 2, 3], np.int32)
    ev = sas(x, s, 10, (2,), (1,), [(1, 1)])  # windows [pad,-5], [-5,-7], [-7,pad]
    assert ev.outputs[0].tolist() == [13, 13]
    ev = sas(x, np.array([1, 2, 3, 4], np.int32), 0, (1,), (1,), [(1, 1)])  # padding-only windows
    assert ev.outputs[0].tolist() == [2, 3]


@given(window_cases(max_rank=2), st.sampled_from(["GE", "GT", "LE", "LT", "general"]),
       st.sampled_from(["add", "affine", "maximum"]))
def test_sas_matches_reference(case, select, scatter):
    shape, wd, ws, _, _, pad, seed = case
    pad = [(max(0, lo), max(0, hi)) for lo, hi in pad]
    src_shape = out_shape_of(shape, wd, ws, (1,) * len(shape), (1,) * len(shape), pad)
    if 0 in src_shape:
        return
    rng = np.random.default_rng(seed)
    x = rng.integers(-3, 4, shape).astype(np.int32)  # ties exercise the select order
    s = rng.integers(-9, 10, src_shape).astype(np.int32)
    ev = sas(x, s, 1, wd, ws, pad, select, scatter)
    cmp = {"GE": np.greater_equal, "GT": np.greater, "LE": np.less_equal, "LT": np.less,
           "general": np.greater_equal}[select]
    comb = {"add": lambda a, b: a + b, "affine": lambda a, b: a * b + 1, "maximum": max}[scatter]
    want = reference_sas(x, s, 1, wd, ws, pad, lambda a, b: bool(cmp(a, b)), comb)
    assert ev.outputs[0].tolist() == want.tolist()
    # provenance: back/fwd agree with sources/targets
    prov = provenance(ev)
    for ri in list(np.ndindex(*shape))[:5]:
        src = prov.sources(0, ri)
        ups = [t for t in src if t.role == "update"]
        if scatter == "add":
            assert ev.outputs[0][ri] == 1 + sum(int(s[u.index]) for u in ups)
        for so in src:
            if so.operand in (0, 1):
                assert any(t.index == ri and t.role == so.role for t in prov.targets(so.operand, so.index))
        m = np.zeros(shape, dtype=bool)
        m[ri] = True
        back = prov.back(0, m)
        for role in ("update", "selected", "control"):
            op_ = 1 if role == "update" else 0
            want_m = np.zeros(s.shape if op_ == 1 else shape, dtype=bool)
            for so in src:
                if so.role == role:
                    want_m[so.index] = True
            got = back.get((op_, role), np.zeros_like(want_m))
            assert (got == want_m).all(), role
    q = tuple(int(v) for v in rng.integers(0, shape))
    m = np.zeros(shape, dtype=bool)
    m[q] = True
    fwd = prov.fwd(0, m)
    for role in ("selected", "control"):
        got = sorted(map(tuple, np.argwhere(fwd.get((0, role), np.zeros(shape, bool))).tolist()))
        assert got == sorted(t.index for t in prov.targets(0, q) if t.role == role)


def test_sas_float_with_nan_and_distinct_values():
    x = np.array([1.0, np.nan, 3.0, 2.0], np.float32)
    s = np.array([10.0, 20.0, 30.0], np.float32)
    ev = sas(x, s, 0.0, (2,), (1,))
    # GE(1, nan) is false -> nan taken; GE(nan, 3) false -> 3; GE(3, 2) true -> 3
    assert ev.outputs[0].tolist() == [0.0, 10.0, 50.0, 0.0]


def test_sas_constraints():
    good = sas_program((4,), (2,), "i32", (2,), (2,))
    Interpreter(parse_module(good))
    cases = [
        (sas_program((4,), (3,), "i32", (2,), (2,)), "C2"),
        (sas_program((4,), (2,), "i32", (2, 1), (2,)), "C4"),
        (sas_program((4,), (2,), "i32", (0,), (2,)), "C5"),
        (sas_program((4,), (2,), "i32", (2,), (2, 2)), "C6"),
        (sas_program((4,), (2,), "i32", (2,), (0,)), "C7"),
        (sas_program((4,), (2,), "i32", (2,), (2,), pad=[(0, 0), (0, 0)]), "C8"),
        (sas_program((4,), (2,), "i32", (2,), (2,), result_e="i16"), "C10"),
    ]
    for prog, c in cases:
        op_ = parse_module(prog).funcs[0].body.blocks[0].ops[0]
        with pytest.raises(VerificationError, match=rf"\({c}\)"):
            lookup(op_.name).verify(OpCall(op_))
    wide = sas_program((4,), (2,), "i32", (2,), (2,), result_e="i64")
    ev = run(wide, [np.array([1, 2, 3, 4], np.int32), np.array([5, 6], np.int32), np.array(1, np.int32)],
             "stablehlo.select_and_scatter")
    assert ev.outputs[0].dtype == np.int64 and ev.outputs[0].tolist() == [1, 6, 1, 7]


def test_sas_explain():
    x = np.array([[1, 5], [2, 5], [3, 6], [4, 4]], np.int64)
    s = np.array([[5, 6], [7, 8]], np.int64)
    ev = sas(x, s, 0, (3, 1), (2, 1), [(0, 1), (0, 0)])
    e = explain(ev, 0, (2, 1))
    assert e.value == 14
    assert [st_.name for st_ in e.steps] == ["init_value", "source_indices", "source_values",
                                             "result[result_index]"]
    init, indices, values, res = e.steps
    assert init.value == 0
    assert indices.value == [(0, 1), (1, 1)]
    assert text(indices.substituted).endswith("selected_index(source_index) = (2, 1)]")
    assert values.value == [6, 8] and text(values.substituted) == "[%src[0, 1], %src[1, 1]]"
    assert text(res.substituted) == "reduce([[6, 8]], [0], [0], add)" and res.value == 14
    assert [(c.name, c.value) for c in indices.children] == [("source_index", (0, 1)),
                                                             ("source_index", (1, 1))]
    first = indices.children[0]
    sel, selected, source, running = first.children
    assert (sel.name, sel.value) == ("selected_index", (2, 1))
    assert (selected.name, selected.value) == ("selected_values[source_index]", 6)
    assert text(selected.substituted) == "%x[2, 1]"
    assert (source.name, source.value) == ("source[source_index]", 6)
    assert text(source.substituted) == "%src[0, 1]"
    assert running.name.key == "window.sas.scatter.name" and running.value == 6
    assert text(running.substituted) == "add(0, 6)"
    start, *positions = sel.children
    assert start.value == (0, 1) and text(start.substituted) == "(0, 1) * (2, 1)"
    assert [p.value for p in positions] == [(0, 1), (1, 1), (2, 1)]
    w1 = {_key(c): c for c in positions[1].children}
    assert w1["operand_index"].value == (1, 1) and text(w1["operand_index"].substituted) == "(1, 1) - (0, 0)"
    assert w1["window.sas.candidate.name"].value == 5
    assert text(w1["window.sas.candidate.name"].substituted) == "%x[1, 1]"
    assert w1["window.sas.select.name"].value is True
    assert text(w1["window.sas.select.name"].substituted) == "select(5, 5)"
    assert w1["window.sas.current.name"].value == (0, 1)
    assert text(w1["window.sas.current.name"].substituted) == "True ? (0, 1) : (1, 1)"
    w2 = {_key(c): c for c in positions[2].children}
    assert w2["window.sas.select.name"].value is False
    assert text(w2["window.sas.current.name"].substituted) == "False ? (0, 1) : (2, 1)"
    # the second window: (4, 1) is padding (below the operand), never selected
    second = indices.children[1]
    assert [c.value for c in second.children[1:]] == [6, 8, 14]
    assert text(second.children[-1].substituted) == "add(6, 8)"
    last = second.children[0].children[-1]
    assert last.value == (4, 1) and last.dim_roles == {0: DimRole("padding"), 1: DimRole("operand")}
    assert [c.value.key for c in last.children] == ["window.sas.padding.value"]
    assert [n.key for n in e.notes] == ["window.sas.note.count", "window.sas.note.select",
                                        "window.sas.note.scatter"]
    assert e.notes[0].args == {"count": 2} and e.notes[2].args == {"kind": "add"}
    assert_substituted_everywhere(e, _DESCRIPTIVE)
    e0 = explain(ev, 0, (0, 0))
    assert e0.value == 0 and e0.steps[1].value == [] and e0.steps[1].children == []
    # no window selects x[0, 0]: the headline note comes first, then the select note
    assert [n.key for n in e0.notes[:2]] == ["window.sas.note.untouched", "window.sas.note.select"]
    assert e0.notes[0].args == {"result_index": "0, 0", "value": e0.value}


def test_sas_explain_names_operand_source_and_running_value_apart():
    # the wording fix: "window selects operand[(1, 1)] = 16" showed the source value (and a
    # running total) as if it were the operand element. Each number now has its own step.
    x = np.arange(16, dtype=np.float32).reshape(4, 4)
    src = np.array([[16, 1], [2, 3]], np.float32)
    ev = sas(x, src, 0, (2, 2), (2, 2))
    e = explain(ev, 0, (1, 1))
    (window,) = e.steps[1].children
    assert (window.name, window.value) == ("source_index", (0, 0))  # an index, not a number
    by = {_key(c): c for c in window.children}
    assert by["selected_index"].value == (1, 1)
    assert by["selected_values[source_index]"].value == x[1, 1] == 5
    assert by["source[source_index]"].value == src[0, 0] == 16
    assert by["window.sas.scatter.name"].value == 16 and text(by["window.sas.scatter.name"].substituted) == \
        "add(0.0, 16.0)"
    assert e.steps[1].value == [(0, 0)]  # source_indices holds the source indices, not their count
    for top in e.steps:
        for s in _walk(top):
            if s.name in ("source_indices", "source_index"):
                assert not isinstance(s.value, (int, np.integer))


def test_sas_explain_accumulates_overlapping_windows():
    x = np.array([[7, 2, 5, 3], [3, 9, 1, 1]], np.int32)
    s = np.array([[2, 6, 3]], np.int32)
    ev = sas(x, s, 0, (2, 2), (1, 1))
    e = explain(ev, 0, (1, 1))
    assert e.steps[1].value == [(0, 0), (0, 1)]
    runs = [w.children[-1] for w in e.steps[1].children]
    assert [(r.name.args["n"], text(r.substituted), r.value) for r in runs] == [(1, "add(0, 2)", 2),
                                                                               (2, "add(2, 6)", 8)]
    assert [w.children[1].value for w in e.steps[1].children] == [9, 9]  # the operand element each time
    assert [w.children[2].value for w in e.steps[1].children] == [2, 6]  # the source elements
    assert e.value == 8


def test_sas_animation_captions_are_messages():
    x = np.array([[1, 5], [2, 5], [3, 6], [4, 4]], np.int64)
    s = np.array([[5, 6], [7, 8]], np.int64)
    ev = sas(x, s, 0, (3, 1), (2, 1), [(0, 1), (0, 0)])
    steps = provenance(ev).animation_steps(ev.call, ev.inputs, ev.outputs, [(0, (2, 1))])
    assert [st_.caption.key for st_ in steps] == ["window.sas.anim.select", "window.sas.anim.scatter"] * 2
    select, scatter = steps[2].caption.args, steps[3].caption.args
    assert (select["source_index"], select["selected_index"], select["value"]) == ("1, 1", "2, 1", 6)
    assert (scatter["value"], scatter["before"], scatter["after"]) == (8, 6, 14)
    assert text(steps[3].caption) == "window 2/2: scatter %src[1, 1] = 8 -> %r[2, 1] = add(6, 8) = 14"


def test_rank0_reduce_window_and_sas():
    x = np.array(5, np.int32)
    text = rw_program((), ["i32"], (), ["add"], ())
    ev = run(text, [x, np.array(2, np.int32)], "stablehlo.reduce_window")
    assert ev.outputs[0].tolist() == 7
    assert provenance(ev).sources(0, ()) == [Source(1, (), "init"), Source(0, (), "window")]
    assert explain(ev, 0, ()).value == 7
    text = rw_program((), ["i32"], (), ["affine"], ())
    assert run(text, [x, np.array(2, np.int32)], "stablehlo.reduce_window").outputs[0].tolist() == 11
    ev = sas(x, np.array(4, np.int32), 1, ())
    assert ev.outputs[0].tolist() == 5
    # the window's sole element is selected whatever its value: it is not a source
    assert {s.role for s in provenance(ev).sources(0, ())} == {"init", "update"}


# --- records and result-type inference ----------------------------------------------------

def test_records_and_infer():
    from hlolab.ops.record import InferError, Partial
    from hlolab.ops.window import infer_reduce_window, infer_select_and_scatter, source_shape
    from hlolab.types import tensor_type

    text = rw_program((3, 2), ["i64"], (2, 2), ["add"], (2, 1), ws=(4, 1), bd=(2, 1), wdil=(3, 1),
                      pad=[(2, 1), (0, 0)])
    op_ = parse_module(text).funcs[0].body.blocks[0].ops[0]
    rec = OpCall(op_).attrs
    assert rec.window_dimensions == (2, 1) and rec.padding == ((2, 1), (0, 0))
    types = [tensor_type((3, 2), "i64"), tensor_type((), "i64")]
    assert infer_reduce_window(rec, types) == [Partial((2, 2))]  # the spec's example
    assert infer_reduce_window(rec, [tensor_type((3, None), "i64"), types[1]]) == [Partial((2, None))]
    # absent attributes: stride and dilations 1, no padding
    bare = rec.replace(window_strides=None, base_dilations=None, window_dilations=None, padding=None)
    assert infer_reduce_window(bare, types) == [Partial((2, 2))]
    with pytest.raises(InferError) as e:
        infer_reduce_window(rec.replace(window_dimensions=(2,)), types)
    assert e.value.constraint == "C4"
    text = sas_program((4, 2), (2, 2), "i64", (3, 1), (2, 1), pad=[(0, 1), (0, 0)])
    sas_rec = OpCall(parse_module(text).funcs[0].body.blocks[0].ops[0]).attrs
    assert source_shape(sas_rec, (4, 2)) == (2, 2)
    operand = tensor_type((4, 2), "i64")
    assert infer_select_and_scatter(sas_rec, [operand, tensor_type((2, 2), "i64"), types[1]]) == [
        Partial((4, 2))]
