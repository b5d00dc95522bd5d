"""dot_general / dot / convolution / dynamic_conv: spec, XLA-doc and conformance
examples, numerics (bf16 rounded once, integer wrap, algorithm), constraints,
provenance checked against the values under hypothesis, and explain."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hlolab.errors import HloLabError, NotImplementedOpError, VerificationError
from hlolab.interp.engine import Interpreter
from hlolab.ir.parser import parse_module
from hlolab.messages import Msg, text
from hlolab.ops.contraction import _round_tf32
from hlolab.ops.registry import lookup
from hlolab.trace.explain import DimRole, format_explanation, format_value
from hlolab.trace.provenance import Source
from tests.conftest import shared_dir

# --- building programs -----------------------------------------------------------------


def ttype(shape, e: str) -> str:
    return f"tensor<{'x'.join(str(d) for d in shape)}{'x' if len(shape) else ''}{e}>"


def dot_program(ls, rs, le, oe, lb=(), rb=(), lc=(), rc=(), extra: str = "") -> str:
    from hlolab.ops.contraction import DotGeneralAttrs
    d = DotGeneralAttrs(lhs_batching_dimensions=tuple(lb), rhs_batching_dimensions=tuple(rb),
                        lhs_contracting_dimensions=tuple(lc), rhs_contracting_dimensions=tuple(rc))
    out = ([ls[x] for x in lb] + [ls[x] for x in d.lhs_result_dimensions(len(ls))]
           + [rs[x] for x in d.rhs_result_dimensions(len(rs))])
    lt, rt, ot = ttype(ls, le), ttype(rs, le), ttype(out, oe)
    return (f"func.func @main(%a: {lt}, %b: {rt}) -> {ot} {{\n"
            f"  %r = \"stablehlo.dot_general\"(%a, %b) {{dot_dimension_numbers = #stablehlo.dot<"
            f"lhs_batching_dimensions = {list(lb)}, rhs_batching_dimensions = {list(rb)}, "
            f"lhs_contracting_dimensions = {list(lc)}, rhs_contracting_dimensions = {list(rc)}>"
            f"{extra}}} : ({lt}, {rt}) -> {ot}\n  return %r : {ot}\n}}")


def conv_program(ls, ks, le, oe, out_shape, dims: str, strides, padding, lhs_dil, rhs_dil,
                 reversal, fgc=1, bgc=1, dynamic=False) -> str:
    lt, kt, ot = ttype(ls, le), ttype(ks, le), ttype(out_shape, oe)
    s = len(strides)
    attrs = (f"window_strides = array<i64: {', '.join(map(str, strides))}>, "
             f"lhs_dilation = array<i64: {', '.join(map(str, lhs_dil))}>, "
             f"rhs_dilation = array<i64: {', '.join(map(str, rhs_dil))}>, "
             f"window_reversal = array<i1: {', '.join('true' if r else 'false' for r in reversal)}>, "
             f"dimension_numbers = #stablehlo.conv<{dims}>, feature_group_count = {fgc} : i64, "
             f"batch_group_count = {bgc} : i64")
    if s == 0:
        attrs = attrs.replace("array<i64: >", "array<i64>").replace("array<i1: >", "array<i1>")
    if dynamic:
        pt = ttype((s, 2), "i64")
        return (f"func.func @main(%a: {lt}, %b: {kt}, %p: {pt}) -> {ot} {{\n"
                f"  %r = \"stablehlo.dynamic_conv\"(%a, %b, %p) {{{attrs}}} : ({lt}, {kt}, {pt}) -> {ot}"
                f"\n  return %r : {ot}\n}}")
    pad = "[" + ", ".join(f"[{lo}, {hi}]" for lo, hi in padding) + "]"
    attrs += f", padding = dense<{pad if padding else '[]'}> : tensor<{len(padding)}x2xi64>"
    return (f"func.func @main(%a: {lt}, %b: {kt}) -> {ot} {{\n"
            f"  %r = \"stablehlo.convolution\"(%a, %b) {{{attrs}}} : ({lt}, {kt}) -> {ot}\n"
            f"  return %r : {ot}\n}}")


def run(text: str, args: list[np.ndarray], name: str | None = None):
    events = list(Interpreter(parse_module(text)).events(None, args))
    return next(e for e in events if name is None and e.op.name.startswith("stablehlo.")
                and e.op.name != "stablehlo.return" or e.op.name == name)


def explain(ev, index):
    return lookup(ev.op.name).explain(ev.call, ev.inputs, ev.outputs, 0, index)


# --- dot_general values -----------------------------------------------------------------

def test_spec_example_dot_general():
    lhs = np.array([[[1, 2], [3, 4]], [[5, 6], [7, 8]]], np.int64)
    rhs = np.array([[[1, 0], [0, 1]], [[1, 0], [0, 1]]], np.int64)
    ev = run(dot_program((2, 2, 2), (2, 2, 2), "i64", "i64", [0], [0], [2], [1]), [lhs, rhs])
    assert ev.outputs[0].tolist() == lhs.tolist()


def test_xla_doc_dot_general_contracting_example():
    lhs = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    rhs = np.array([[1, 1, 1], [2, 2, 2]], np.float32)
    ev = run(dot_program((2, 3), (2, 3), "f32", "f32", lc=[1], rc=[1]), [lhs, rhs])
    assert ev.outputs[0].tolist() == [[6.0, 12.0], [15.0, 30.0]]


@pytest.mark.parametrize("ls,rs", [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 2)), ((2, 3), (3, 4))])
def test_legacy_dot_shapes(ls, rs):
    rng = np.random.default_rng(1)
    a = rng.integers(-9, 9, ls).astype(np.int32)
    b = rng.integers(-9, 9, rs).astype(np.int32)
    out = np.dot(a, b)
    text = (f"func.func @main(%a: {ttype(ls, 'i32')}, %b: {ttype(rs, 'i32')}) -> "
            f"{ttype(out.shape, 'i32')} {{\n  %r = stablehlo.dot %a, %b : ({ttype(ls, 'i32')}, "
            f"{ttype(rs, 'i32')}) -> {ttype(out.shape, 'i32')}\n  return %r : {ttype(out.shape, 'i32')}\n}}")
    ev = run(text, [a, b])
    assert ev.outputs[0].tolist() == out.tolist()
    assert len(ev.provenance().sources(0, (0,) * out.ndim)) == 6  # 3 lhs + 3 rhs


def test_legacy_dot_rejects_rank_3():
    text = ("func.func @main(%a: tensor<1x2x3xi32>, %b: tensor<3xi32>) -> tensor<1x2xi32> {\n"
            "  %r = stablehlo.dot %a, %b : (tensor<1x2x3xi32>, tensor<3xi32>) -> tensor<1x2xi32>\n"
            "  return %r : tensor<1x2xi32>\n}")
    with pytest.raises(VerificationError, match="rank-1 or rank-2"):
        Interpreter(parse_module(text)).run(None, [np.zeros((1, 2, 3), np.int32),
                                                    np.zeros(3, np.int32)])


def test_integer_products_wrap_and_i8_to_i32_is_exact():
    a = np.full((1, 300), 127, np.int8)
    b = np.full((300, 1), -128, np.int8)
    ev = run(dot_program((1, 300), (300, 1), "i8", "i32", lc=[1], rc=[0]), [a, b])
    assert ev.outputs[0].tolist() == [[127 * -128 * 300]]
    ev = run(dot_program((1, 300), (300, 1), "i8", "i8", lc=[1], rc=[0]), [a, b])
    assert ev.outputs[0].tolist() == [[np.int64(127 * -128 * 300).astype(np.int8)]]
    big = np.array([2**62, 3], np.int64)
    ev = run(dot_program((2,), (2,), "i64", "i64", lc=[0], rc=[0]), [big, np.array([4, 1], np.int64)])
    assert ev.outputs[0][()] == np.int64(3)  # 2^64 wraps to 0


def test_booleans_are_and_or():
    a = np.array([[True, False], [False, False]])
    b = np.array([[True, True], [False, True]])
    ev = run(dot_program((2, 2), (2, 2), "i1", "i1", lc=[1], rc=[0]), [a, b])
    assert ev.outputs[0].tolist() == [[True, True], [False, False]]


def test_bf16_is_summed_in_f32_and_rounded_once():
    # 1 + 256 * 2^-9: each partial bf16 sum would stay 1.0; the f32 sum is 1.5
    a = np.array([1.0] + [2.0 ** -9] * 256, ml_dtypes.bfloat16)
    b = np.ones(257, ml_dtypes.bfloat16)
    ev = run(dot_program((257,), (257,), "bf16", "bf16", lc=[0], rc=[0]), [a, b])
    assert ev.outputs[0].dtype == ml_dtypes.bfloat16 and float(ev.outputs[0]) == 1.5
    ev = run(dot_program((257,), (257,), "bf16", "f32", lc=[0], rc=[0]), [a, b])
    assert ev.outputs[0].dtype == np.float32 and float(ev.outputs[0]) == 1.5


def test_f32_to_f64_result_computes_in_f64():
    a = np.array([1.0, 2.0 ** -30], np.float32)
    ev = run(dot_program((2,), (2,), "f32", "f64", lc=[0], rc=[0]), [a, np.ones(2, np.float32)])
    assert ev.outputs[0][()] == 1.0 + 2.0 ** -30


def test_complex_dot():
    a = np.array([1 + 2j, 3 - 1j], np.complex64)
    b = np.array([2 - 1j, 1j], np.complex64)
    ev = run(dot_program((2,), (2,), "complex<f32>", "complex<f32>", lc=[0], rc=[0]), [a, b])
    assert ev.outputs[0][()] == np.complex64((1 + 2j) * (2 - 1j) + (3 - 1j) * 1j)


ALG = ("algorithm = #stablehlo.dot_algorithm<lhs_precision_type = {p}, rhs_precision_type = {p}, "
       "accumulation_type = {acc}, lhs_component_count = {n}, rhs_component_count = {n}, "
       "num_primitive_operations = {m}, allow_imprecise_accumulation = false>")


def test_algorithm_tf32_rounds_operands():
    x = np.float32(1 + 2.0 ** -12)
    assert _round_tf32(np.array([x]))[0] == 1.0
    assert _round_tf32(np.array([1 + 2.0 ** -10 + 2.0 ** -11]))[0] == 1 + 2.0 ** -9  # tie -> even
    a = np.array([x, x], np.float32)
    text = dot_program((2,), (2,), "f32", "f32", lc=[0], rc=[0],
                       extra=", " + ALG.format(p="tf32", acc="f32", n=1, m=1))
    assert run(text, [a, np.ones(2, np.float32)]).outputs[0][()] == 2.0
    plain = dot_program((2,), (2,), "f32", "f32", lc=[0], rc=[0])
    assert run(plain, [a, np.ones(2, np.float32)]).outputs[0][()] == np.float32(2 * x)


def test_algorithm_narrow_accumulation_rounds_each_partial_sum():
    a = np.array([1.0] + [2.0 ** -9] * 4, np.float32)
    text = dot_program((5,), (5,), "f32", "f32", lc=[0], rc=[0],
                       extra=", " + ALG.format(p="bf16", acc="bf16", n=1, m=1))
    assert run(text, [a, np.ones(5, np.float32)]).outputs[0][()] == 1.0  # 1 + 2^-9 rounds to 1


def test_algorithm_decomposed_is_not_implemented_and_constraints():
    text = dot_program((2,), (2,), "f32", "f32", lc=[0], rc=[0],
                       extra=", " + ALG.format(p="bf16", acc="f32", n=3, m=6))
    with pytest.raises(NotImplementedOpError, match="decomposed"):
        Interpreter(parse_module(text)).run(None, [np.ones(2, np.float32)] * 2)
    text = dot_program((2,), (2,), "f32", "f32", lc=[0], rc=[0],
                       extra=", " + ALG.format(p="bf16", acc="f32", n=0, m=1))
    with pytest.raises(VerificationError, match=r"\(C22\)"):
        Interpreter(parse_module(text)).run(None, [np.ones(2, np.float32)] * 2)
    text = dot_program((2,), (2,), "f32", "f32", lc=[0], rc=[0], extra=(
        ", precision_config = [#stablehlo<precision HIGH>, #stablehlo<precision DEFAULT>], "
        + ALG.format(p="bf16", acc="f32", n=1, m=1)))
    with pytest.raises(VerificationError, match=r"\(C21\)"):
        Interpreter(parse_module(text)).run(None, [np.ones(2, np.float32)] * 2)


@pytest.mark.parametrize("ls,rs,lb,rb,lc,rc,label", [
    ((2, 3), (2, 3), [0], [], [1], [1], "C1"),
    ((2, 3), (2, 3), [], [], [1], [], "C2"),
    ((2, 3), (2, 3), [0], [0], [0], [1], "C3"),
    ((2, 3), (2, 3), [0], [0], [1], [0], "C4"),
    ((2, 3), (2, 3), [2], [0], [1], [1], "C5"),
    ((2, 3), (2, 3), [0], [0], [5], [1], "C6"),
    ((2, 3), (2, 3), [0], [-1], [1], [1], "C7"),
    ((2, 3), (2, 3), [0], [0], [1], [3], "C8"),
    ((2, 3), (3, 3), [0], [0], [1], [1], "C9"),
    ((2, 3), (2, 4), [0], [0], [1], [1], "C10"),
])
def test_dot_general_constraints(ls, rs, lb, rb, lc, rc, label):
    text = (f"func.func @main(%a: {ttype(ls, 'f32')}, %b: {ttype(rs, 'f32')}) -> tensor<2xf32> {{\n"
            f"  %r = \"stablehlo.dot_general\"(%a, %b) {{dot_dimension_numbers = #stablehlo.dot<"
            f"lhs_batching_dimensions = {lb}, rhs_batching_dimensions = {rb}, "
            f"lhs_contracting_dimensions = {lc}, rhs_contracting_dimensions = {rc}>}} : "
            f"({ttype(ls, 'f32')}, {ttype(rs, 'f32')}) -> tensor<2xf32>\n  return %r : tensor<2xf32>\n}}")
    with pytest.raises(VerificationError, match=rf"\({label}\)"):
        Interpreter(parse_module(text)).run(None, [np.zeros(ls, np.float32), np.zeros(rs, np.float32)])


def test_dot_general_result_and_element_constraints():
    text = dot_program((2, 3), (3, 4), "f32", "f32", lc=[1], rc=[0]).replace("-> tensor<2x4xf32>",
                                                                             "-> tensor<4x2xf32>")
    text = text.replace("return %r : tensor<2x4xf32>", "return %r : tensor<4x2xf32>")
    with pytest.raises(VerificationError, match=r"\(C12\)"):
        Interpreter(parse_module(text)).run(None, [np.zeros((2, 3), np.float32),
                                                    np.zeros((3, 4), np.float32)])
    text = dot_program((2,), (2,), "f32", "f32", lc=[0], rc=[0]).replace(
        "(tensor<2xf32>, tensor<2xf32>) ->", "(tensor<2xf32>, tensor<2xf16>) ->").replace(
        "%b: tensor<2xf32>", "%b: tensor<2xf16>")
    with pytest.raises(VerificationError, match=r"\(C13\)"):
        Interpreter(parse_module(text)).run(None, [np.zeros(2, np.float32), np.zeros(2, np.float16)])
    text = dot_program((2,), (2,), "f32", "i32", lc=[0], rc=[0])
    with pytest.raises(VerificationError, match=r"\(C13\)"):
        Interpreter(parse_module(text)).run(None, [np.zeros(2, np.float32)] * 2)
    text = dot_program((2,), (2,), "f32", "f32", lc=[0], rc=[0], extra=(
        ", precision_config = [#stablehlo<precision DEFAULT>]"))
    with pytest.raises(VerificationError, match=r"\(C11\)"):
        Interpreter(parse_module(text)).run(None, [np.zeros(2, np.float32)] * 2)


def test_quantized_dot_dequantizes_computes_and_quantizes():
    q = "!quant.uniform<i8:f32, 0.5>"
    text = (f"func.func @main(%a: tensor<2x{q}>, %b: tensor<2x{q}>) -> tensor<{q}> {{\n"
            f"  %r = stablehlo.dot_general %a, %b, contracting_dims = [0] x [0] : "
            f"(tensor<2x{q}>, tensor<2x{q}>) -> tensor<{q}>\n  return %r : tensor<{q}>\n}}")
    # [1, 2] . [3, 1] = 5 -> 5 / 0.5 = 10 (the storage dot would be 20)
    (r,) = Interpreter(parse_module(text)).run(None, [np.array([2, 4], np.int8), np.array([6, 2], np.int8)])
    assert r.dtype == np.int8 and int(r) == 10


# --- dot_general provenance and explain --------------------------------------------------

@st.composite
def dot_cases(draw):
    """Random batching / contracting / free dims, permuted into random operand layouts."""
    nb, nc = draw(st.integers(0, 2)), draw(st.integers(0, 2))
    nl, nr = draw(st.integers(0, 2)), draw(st.integers(0, 2))
    sizes = st.integers(1, 3)
    bs = [draw(sizes) for _ in range(nb)]
    cs = [draw(sizes) for _ in range(nc)]
    lf = [draw(sizes) for _ in range(nl)]
    rf = [draw(sizes) for _ in range(nr)]
    lperm = draw(st.permutations(range(nb + nc + nl)))
    rperm = draw(st.permutations(range(nb + nc + nr)))
    lroles = [("b", i, s) for i, s in enumerate(bs)] + [("c", i, s) for i, s in enumerate(cs)] + \
        [("f", i, s) for i, s in enumerate(lf)]
    rroles = [("b", i, s) for i, s in enumerate(bs)] + [("c", i, s) for i, s in enumerate(cs)] + \
        [("f", i, s) for i, s in enumerate(rf)]
    lay_l = [lroles[p] for p in lperm]
    lay_r = [rroles[p] for p in rperm]
    ls = tuple(s for _, _, s in lay_l)
    rs = tuple(s for _, _, s in lay_r)

    def where(lay, kind):
        return [next(k for k, (r, i, _) in enumerate(lay) if r == kind and i == j)
                for j in range(len(bs) if kind == "b" else len(cs))]

    return ls, rs, where(lay_l, "b"), where(lay_r, "b"), where(lay_l, "c"), where(lay_r, "c"), \
        draw(st.integers(0, 2**32 - 1))


@given(dot_cases())
def test_dot_provenance_agrees_with_values(case):
    ls, rs, lb, rb, lc, rc, seed = case
    rng = np.random.default_rng(seed)
    a = rng.integers(-50, 50, ls).astype(np.int32)
    b = rng.integers(-50, 50, rs).astype(np.int32)
    ev = run(dot_program(ls, rs, "i32", "i32", lb, rb, lc, rc), [a, b])
    out = ev.outputs[0]
    # the spec formula, written with einsum as an independent reference
    letters = "abcdefghij"
    lsub, rsub = [""] * len(ls), [""] * len(rs)
    k = 0
    for x, y in zip(lb + lc, rb + rc, strict=True):
        lsub[x] = rsub[y] = letters[k]
        k += 1
    outsub = "".join(lsub[x] for x in lb)
    for x in range(len(ls)):
        if not lsub[x]:
            lsub[x] = letters[k]
            outsub += letters[k]
            k += 1
    for y in range(len(rs)):
        if not rsub[y]:
            rsub[y] = letters[k]
            outsub += letters[k]
            k += 1
    want = np.einsum(f"{''.join(lsub)},{''.join(rsub)}->{outsub}", a.astype(np.int64), b.astype(np.int64))
    assert out.tolist() == want.astype(np.int32).tolist()
    prov = ev.provenance()
    for idx in list(np.ndindex(out.shape))[:6]:
        wl, wr = prov.window(0, idx)
        assert wl.index.shape[:-1] == wr.index.shape[:-1]  # paired position by position
        n = wl.valid.size
        total = sum(int(a[tuple(p)]) * int(b[tuple(q)]) for p, q in
                    zip(wl.index.reshape(n, a.ndim), wr.index.reshape(n, b.ndim), strict=True))
        assert out[idx] == total
        src = prov.sources(0, idx)
        assert [s.role for s in src] == ["window"] * wl.valid.size + ["kernel"] * wr.valid.size
    if out.size:
        mask = np.zeros(out.shape, bool)
        mask.reshape(-1)[0] = True
        back = prov.back(0, mask)
        first = tuple(int(i) for i in np.unravel_index(0, out.shape))
        srcs = prov.sources(0, first)
        for (operand, role), m in back.items():
            assert sorted(map(tuple, np.argwhere(m))) == sorted(
                {s.index for s in srcs if s.operand == operand and s.role == role})
        if a.size:
            am = np.zeros(a.shape, bool)
            am.reshape(-1)[0] = True
            ai = tuple(int(i) for i in np.unravel_index(0, a.shape))
            fwd = prov.fwd(0, am)
            hit = {t.index for t in prov.targets(0, ai)}
            assert {tuple(map(int, p)) for m in fwd.values() for p in np.argwhere(m)} == hit
            for t in prov.targets(0, ai):  # targets is the inverse of sources
                assert Source(0, ai, t.role) in prov.sources(0, t.index)


def _walk(step):
    yield step
    for c in step.children:
        yield from _walk(c)


def _steps(e) -> dict:
    return {s.name: s for s in e.steps}


def check_steps(e) -> None:
    """Every step: a spec-like symbol or a Msg as name, DimRoles keyed by dimensions, and a
    substituted form wherever there is a formula."""
    for top in e.steps:
        for s in _walk(top):
            assert isinstance(s.name, Msg) or " " not in s.name.split("[")[0], s.name
            for d, role in (s.dim_roles or {}).items():
                assert isinstance(d, int) and isinstance(role, DimRole), (s.name, d, role)
            if s.formula is not None:
                assert isinstance(s.formula, Msg) and isinstance(s.substituted, Msg), s.name


def test_dot_explain():
    lhs = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    rhs = np.array([[1, 1, 1], [2, 2, 2]], np.float32)
    ev = run(dot_program((2, 3), (2, 3), "f32", "f32", lc=[1], rc=[1]), [lhs, rhs])
    e = explain(ev, (1, 1))
    check_steps(e)
    assert e.value == 30.0
    assert [s.name for s in e.steps] == ["result_index", "result_batching_index", "result_lhs_index",
                                         "result_rhs_index", "dot_product"]
    s = _steps(e)
    assert s["result_index"].value == (1, 1)
    assert s["result_index"].dim_roles == {0: DimRole("lhs_free"), 1: DimRole("rhs_free")}
    assert (s["result_batching_index"].value, s["result_lhs_index"].value, s["result_rhs_index"].value) == \
        ((), (1,), (1,))
    assert s["result_lhs_index"].formula.args["lhs_result_dimensions"] == [0]
    assert s["result_rhs_index"].formula.args["rhs_result_dimensions"] == [0]
    dp = s["dot_product"]
    assert dp.formula.key == "contraction.dot_general.dot_product.formula"
    assert dp.formula.args["total"] == 3 and dp.formula.args["dims"] == [3]
    assert dp.substituted.args["lhs"].tolist() == [4, 5, 6]  # reshaped_lhs_slice
    assert dp.substituted.args["rhs"].tolist() == [2, 2, 2]
    assert [c.name for c in dp.children] == ["lhs[1, 0] * rhs[1, 0]", "lhs[1, 1] * rhs[1, 1]",
                                             "lhs[1, 2] * rhs[1, 2]"]
    assert [float(c.value) for c in dp.children] == [8.0, 10.0, 12.0]
    assert text(dp.children[0].substituted) == "4.0 * 2.0"
    assert [n.key for n in e.notes] == ["contraction.note.order"]
    assert e.notes[0].args["summer"].key == "contraction.summer.blas"
    out = format_explanation(e)
    assert "lhs[1, 0] * rhs[1, 0] = 4.0 * 2.0 = 8.0" in out
    assert "result_index = result_batching_index + result_lhs_index + result_rhs_index" in out


def test_dot_explain_batch_roles_and_substituted_forms():
    lhs = np.array([[[1, 2], [3, 4]], [[5, 6], [7, 8]]], np.int64)  # the spec's example
    rhs = np.array([[[1, 0], [0, 1]], [[1, 0], [0, 1]]], np.int64)
    ev = run(dot_program((2, 2, 2), (2, 2, 2), "i64", "i64", lb=[0], rb=[0], lc=[2], rc=[1]), [lhs, rhs])
    e = explain(ev, (1, 0, 1))
    check_steps(e)
    s = _steps(e)
    assert e.value == 6 == 5 * 0 + 6 * 1
    assert s["result_index"].dim_roles == {0: DimRole("batch"), 1: DimRole("lhs_free"),
                                           2: DimRole("rhs_free")}
    assert text(s["result_index"].substituted) == "(1,) + (0,) + (1,)"
    assert text(s["result_batching_index"].substituted) == "(1, 0, 1)[0:1]"
    assert text(s["result_lhs_index"].substituted) == "(1, 0, 1)[1:2]"
    assert text(s["result_rhs_index"].substituted) == "(1, 0, 1)[2:]"
    assert (s["result_batching_index"].value, s["result_lhs_index"].value, s["result_rhs_index"].value) == \
        ((1,), (0,), (1,))
    assert text(s["dot_product"].substituted) == "reduce(multiply([5, 6], [0, 1]), init 0, add)"
    assert [c.name for c in s["dot_product"].children] == ["lhs[1, 0, 0] * rhs[1, 0, 1]",
                                                           "lhs[1, 0, 1] * rhs[1, 1, 1]"]
    assert [n.key for n in e.notes] == ["contraction.note.wrap"]
    assert e.notes[0].args == {"result_type": "i64"}


def test_dot_explain_notes_narrow_types_more_products_and_algorithm():
    a = np.array([1.0] + [2.0 ** -9] * 256, ml_dtypes.bfloat16)
    ev = run(dot_program((257,), (257,), "bf16", "bf16", lc=[0], rc=[0]),
             [a, np.ones(257, ml_dtypes.bfloat16)])
    e = explain(ev, ())
    assert [n.key for n in e.notes] == ["contraction.note.order", "contraction.note.narrow",
                                        "contraction.note.more"]
    assert e.notes[1].args == {"lhs_type": "bf16", "result_type": "bf16"}
    assert e.notes[2].args == {"count": 1} and len(e.steps[-1].children) == 256
    assert e.steps[-1].formula.args["total"] == 257
    x = np.float32(1 + 2.0 ** -12)
    text_ = dot_program((2,), (2,), "f32", "f32", lc=[0], rc=[0],
                        extra=", " + ALG.format(p="tf32", acc="f32", n=1, m=1))
    e = explain(run(text_, [np.array([x, x], np.float32), np.ones(2, np.float32)]), ())
    alg = e.notes[-1]
    assert alg.key == "contraction.note.algorithm"
    assert (alg.args["lhs_precision_type"], alg.args["accumulation_type"], alg.args["result_type"],
            alg.args["num_primitive_operations"]) == ("tf32", "f32", "f32", 1)
    assert "algorithm <tf32 x tf32 -> f32, components 1/1, 1 primitive op(s)>" in text(alg)


# --- convolution values -----------------------------------------------------------------

SPEC_LHS = np.array([[[[1], [2], [5], [6]], [[3], [4], [7], [8]], [[10], [11], [14], [15]],
                      [[12], [13], [16], [17]]]], np.int64)
NHWC = "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]"


def test_spec_example_convolution():
    text = conv_program((1, 4, 4, 1), (3, 3, 1, 1), "i64", "i64", (1, 2, 2, 1), NHWC, (4, 4),
                        ((0, 0), (0, 0)), (2, 2), (1, 1), (False, False))
    ev = run(text, [SPEC_LHS, np.ones((3, 3, 1, 1), np.int64)])
    assert ev.outputs[0].reshape(2, 2).tolist() == [[10, 26], [46, 62]]


def test_dynamic_conv_takes_padding_from_its_operand():
    text = conv_program((1, 4, 4, 1), (3, 3, 1, 1), "i64", "i64", (1, 2, 2, 1), NHWC, (4, 4),
                        None, (2, 2), (1, 1), (False, False), dynamic=True)
    ev = run(text, [SPEC_LHS, np.ones((3, 3, 1, 1), np.int64), np.ones((2, 2), np.int64)])
    assert ev.outputs[0].reshape(2, 2).tolist() == [[1, 5], [10, 14]]
    srcs = ev.provenance().sources(0, (0, 0, 0, 0))
    assert {s.index for s in srcs if s.role == "index_read"} == {(0, 0), (0, 1), (1, 0), (1, 1)}
    with pytest.raises(VerificationError, match=r"\(C25\)"):  # the result shape needs padding 1
        run(text, [SPEC_LHS, np.ones((3, 3, 1, 1), np.int64), np.full((2, 2), 5, np.int64)])


@pytest.mark.parametrize("name", ["convolution", "dot_general", "dynamic_conv"])
def test_conformance_modules_pass(name):
    from hlolab.runner import run_file  # noqa: F401  (fails loudly if the runner moves)
    path = shared_dir("conformance", "interpret") / f"{name}.mlir"
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-m", "hlolab", "run", "--split-input-file", str(path)],
                         capture_output=True, text=True, timeout=120)
    lines = [x for x in out.stdout.splitlines() if x.startswith(f"{name}.mlir#")]
    assert lines and all(x.endswith("PASS") for x in lines), out.stdout + out.stderr


def test_xla_doc_style_negative_padding_and_reversal_1d():
    x = np.arange(1, 7, dtype=np.int32).reshape(1, 1, 6)  # NCW
    k = np.array([1, 10, 100], np.int32).reshape(1, 1, 3)  # OIW
    dims = "[b, f, 0]x[o, i, 0]->[b, f, 0]"
    # padding (-1, 0): the frame is x[1:] = 2..6; windows [2,3,4], [3,4,5], [4,5,6]
    text = conv_program((1, 1, 6), (1, 1, 3), "i32", "i32", (1, 1, 3), dims, (1,), ((-1, 0),), (1,),
                        (1,), (False,))
    assert run(text, [x, k]).outputs[0].reshape(-1).tolist() == [432, 543, 654]
    text = conv_program((1, 1, 6), (1, 1, 3), "i32", "i32", (1, 1, 3), dims, (1,), ((-1, 0),), (1,),
                        (1,), (True,))
    assert run(text, [x, k]).outputs[0].reshape(-1).tolist() == [234, 345, 456]


def test_conv_bf16_rounds_once_and_i8_to_i32():
    x = np.array([1.0] + [2.0 ** -9] * 256, ml_dtypes.bfloat16).reshape(1, 257, 1)
    w = np.ones((1, 257, 1), ml_dtypes.bfloat16)
    dims = "[b, f, 0]x[o, i, 0]->[b, f, 0]"
    text = conv_program((1, 257, 1), (1, 257, 1), "bf16", "bf16", (1, 1, 1), dims, (1,), ((0, 0),),
                        (1,), (1,), (False,))
    assert float(run(text, [x, w]).outputs[0].reshape(())) == 1.5


@pytest.mark.parametrize("change,label", [
    ({"strides": (0, 1)}, "C3"), ({"strides": (1,)}, "C2"), ({"lhs_dil": (0, 1)}, "C6"),
    ({"rhs_dil": (1, 1, 1)}, "C7"), ({"reversal": (False,)}, "C9"), ({"fgc": 0}, "C21"),
    ({"bgc": 0}, "C22"), ({"fgc": 2}, "C11"), ({"dims": "[b, 0, 0, f]x[0, 1, i, o]->[b, 0, 1, f]"},
                                               None), ({"out": (1, 3, 3, 1)}, "C25"),
    ({"padding": ((0, 0),)}, "C4"),
])
def test_conv_constraints(change, label):
    kw = dict(strides=(1, 1), padding=((0, 0), (0, 0)), lhs_dil=(1, 1), rhs_dil=(1, 1),
              reversal=(False, False), fgc=1, bgc=1, dims=NHWC, out=(1, 2, 2, 1))
    kw.update(change)
    text = conv_program((1, 4, 4, 1), (3, 3, 1, 1), "i64", "i64", kw["out"], kw["dims"], kw["strides"],
                        kw["padding"], kw["lhs_dil"], kw["rhs_dil"], kw["reversal"], kw["fgc"], kw["bgc"])
    with pytest.raises(HloLabError, match=rf"\({label}\)" if label else "duplicate"):
        Interpreter(parse_module(text)).run(None, [SPEC_LHS, np.ones((3, 3, 1, 1), np.int64)])


def test_conv_raw_dims_constraints():
    raw = ("raw input_batch_dimension = 0, input_feature_dimension = 3, input_spatial_dimensions = "
           "[0, 1], kernel_input_feature_dimension = 2, kernel_output_feature_dimension = 3, "
           "kernel_spatial_dimensions = [0, 1], output_batch_dimension = 0, output_feature_dimension "
           "= 3, output_spatial_dimensions = [1, 2]")
    text = conv_program((1, 4, 4, 1), (3, 3, 1, 1), "i64", "i64", (1, 2, 2, 1), raw, (4, 4),
                        ((1, 1), (1, 1)), (2, 2), (1, 1), (False, False))
    with pytest.raises(VerificationError, match=r"\(C13\)"):  # as in the spec's dynamic_conv example
        Interpreter(parse_module(text)).run(None, [SPEC_LHS, np.ones((3, 3, 1, 1), np.int64)])
    for bad, label in (("kernel_output_feature_dimension = 3", "kernel_output_feature_dimension = 2"),
                       ("output_feature_dimension = 3", "output_feature_dimension = 1")):
        t = text.replace("input_spatial_dimensions = [0, 1]", "input_spatial_dimensions = [1, 2]")
        t = t.replace(bad, label)
        with pytest.raises(VerificationError, match=r"\(C18\)|\(C20\)"):
            Interpreter(parse_module(t)).run(None, [SPEC_LHS, np.ones((3, 3, 1, 1), np.int64)])


# --- convolution: a slow spec-formula reference, provenance and explain ------------------

def conv_reference(x, w, strides, padding, lhs_dil, rhs_dil, reversal, fgc, bgc):
    """The spec's formula, element by element, on canonical NC... x OI... -> NO...
    (a loop over output elements: a slow, independent reference for small cases)."""
    N, C = x.shape[0], x.shape[1]
    O, Ci = w.shape[0], w.shape[1]
    ks = w.shape[2:]
    s = len(ks)
    # padded_lhs = pad(lhs, 0, lo, hi, lhs_dilation - 1)
    dil = [(n - 1) * d + 1 if n else 0 for n, d in zip(x.shape[2:], lhs_dil, strict=True)]
    big = np.zeros((N, C, *[max(lo, 0) + n + max(hi, 0) for n, (lo, hi) in zip(dil, padding, strict=True)]),
                   np.int64)
    big[(slice(None), slice(None), *[slice(max(lo, 0), max(lo, 0) + n, d) for n, (lo, _), d
                                     in zip(dil, padding, lhs_dil, strict=True)])] = x
    padded = big[(slice(None), slice(None), *[slice(-min(lo, 0), big.shape[2 + j] - (-min(hi, 0)))
                                             for j, (lo, hi) in enumerate(padding)])]
    dk = [(k - 1) * r + 1 for k, r in zip(ks, rhs_dil, strict=True)]
    outs = [max(0, (padded.shape[2 + j] - dk[j]) // strides[j] + 1) if padded.shape[2 + j] >= dk[j]
            else 0 for j in range(s)]
    Nb, Og = N // bgc, O // (fgc * bgc)
    res = np.zeros((Nb, O, *outs), np.int64)
    for n in range(Nb):
        for o in range(O):
            grp = o // Og
            bg = grp if bgc > 1 else 0
            fg = grp if fgc > 1 else 0
            for pos in np.ndindex(*outs):
                st_ = [pos[j] * strides[j] for j in range(s)]
                win = padded[(bg * Nb + n, slice(fg * Ci, (fg + 1) * Ci),
                              *[slice(st_[j], st_[j] + dk[j], rhs_dil[j]) for j in range(s)])]
                win = np.flip(win, axis=tuple(1 + j for j in range(s) if reversal[j]))
                res[(n, o, *pos)] = int(np.sum(win * w[o]))
    return res


@st.composite
def conv_cases(draw, max_spatial=2):
    s = draw(st.integers(1, max_spatial))
    fgc, bgc = draw(st.sampled_from([(1, 1), (2, 1), (1, 2), (3, 1), (1, 3)]))
    N = bgc * draw(st.integers(1, 2))
    Ci = draw(st.integers(1, 2))
    C = fgc * Ci
    O = fgc * bgc * draw(st.integers(1, 2))
    xs = [draw(st.integers(1, 5)) for _ in range(s)]
    ks = [draw(st.integers(1, 3)) for _ in range(s)]
    strides = [draw(st.integers(1, 3)) for _ in range(s)]
    lhs_dil = [draw(st.integers(1, 3)) for _ in range(s)]
    rhs_dil = [draw(st.integers(1, 2)) for _ in range(s)]
    padding = [(draw(st.integers(-2, 3)), draw(st.integers(-2, 3))) for _ in range(s)]
    reversal = [draw(st.booleans()) for _ in range(s)]
    layouts = (draw(st.permutations(range(s + 2))), draw(st.permutations(range(s + 2))),
               draw(st.permutations(range(s + 2))))
    return (N, C, O, Ci, xs, ks, strides, padding, lhs_dil, rhs_dil, reversal, fgc, bgc, layouts,
            draw(st.integers(0, 2**32 - 1)))


def labels_for(perm, first, second):
    """Dim labels of a layout: canonical axis k (first, second, spatial 0..) sits at perm[k]."""
    names = [first, second] + [str(j) for j in range(len(perm) - 2)]
    out = [""] * len(perm)
    for k, pos in enumerate(perm):
        out[pos] = names[k]
    return "[" + ", ".join(out) + "]"


def build_conv_case(case, dynamic=False):
    (N, C, O, Ci, xs, ks, strides, padding, lhs_dil, rhs_dil, reversal, fgc, bgc, layouts, seed) = case
    rng = np.random.default_rng(seed)
    xc = rng.integers(-20, 20, (N, C, *xs)).astype(np.int32)  # canonical N C spatial
    wc = rng.integers(-20, 20, (O, Ci, *ks)).astype(np.int32)  # canonical O I spatial
    want = conv_reference(xc, wc, strides, padding, lhs_dil, rhs_dil, reversal, fgc, bgc)
    lp, kp, op_ = layouts
    x = np.moveaxis(xc, list(range(len(lp))), lp)
    w = np.moveaxis(wc, list(range(len(kp))), kp)
    dims = f"{labels_for(lp, 'b', 'f')}x{labels_for(kp, 'o', 'i')}->{labels_for(op_, 'b', 'f')}"
    out_shape = tuple(np.moveaxis(want, list(range(len(op_))), op_).shape)
    text = conv_program(x.shape, w.shape, "i32", "i32", out_shape, dims, strides, padding, lhs_dil,
                        rhs_dil, reversal, fgc, bgc, dynamic=dynamic)
    args = [x, w] + ([np.array(padding, np.int64).reshape(len(xs), 2)] if dynamic else [])
    return text, args, np.moveaxis(want, list(range(len(op_))), op_).astype(np.int32)


@given(conv_cases(), st.booleans())
def test_conv_matches_the_spec_formula_and_provenance_agrees(case, dynamic):
    text, args, want = build_conv_case(case, dynamic)
    ev = run(text, args)
    out = ev.outputs[0]
    assert out.tolist() == want.tolist()
    x, w = args[0], args[1]
    prov = ev.provenance()
    for idx in list(np.ndindex(out.shape))[:: max(1, out.size // 5)]:
        views = prov.window(0, idx)
        win, pad, kern = views[0], views[1], views[2]
        assert win.index.shape[:-1] == kern.index.shape[:-1] == pad.index.shape[:-1]
        assert (win.valid ^ pad.valid).all()  # every position is an element or padding
        wi, ki = win.index.reshape(-1, x.ndim), kern.index.reshape(-1, w.ndim)
        ok = win.valid.reshape(-1)
        total = sum(int(x[tuple(p)]) * int(w[tuple(q)]) for p, q, v in zip(wi, ki, ok, strict=True) if v)
        assert int(out[idx]) == total  # int32 result == sum of paired window * kernel products
        assert (win.position == pad.position).all()
    if out.size:
        idx = tuple(int(i) for i in np.unravel_index(out.size // 2, out.shape))
        mask = np.zeros(out.shape, bool)
        mask[idx] = True
        srcs = prov.sources(0, idx)
        for (operand, role), m in prov.back(0, mask).items():
            assert {tuple(map(int, p)) for p in np.argwhere(m)} == \
                {s.index for s in srcs if s.operand == operand and s.role == role}
        xi = tuple(int(i) for i in np.unravel_index(x.size // 2, x.shape))
        xm = np.zeros(x.shape, bool)
        xm[xi] = True
        tg = prov.targets(0, xi)
        assert {tuple(map(int, p)) for m in prov.fwd(0, xm).values() for p in np.argwhere(m)} == \
            {t.index for t in tg}
        for t in tg:
            assert Source(0, xi, "window") in prov.sources(0, t.index)


def test_interior_source_count_and_padding_sources():
    rng = np.random.default_rng(3)
    x = rng.integers(-5, 5, (1, 6, 6, 4)).astype(np.int32)
    w = rng.integers(-5, 5, (3, 3, 2, 6)).astype(np.int32)  # feature_group_count 2: Cg = 2
    text = conv_program((1, 6, 6, 4), (3, 3, 2, 6), "i32", "i32", (1, 6, 6, 6), NHWC, (1, 1),
                        ((1, 1), (1, 1)), (1, 1), (1, 1), (False, False), fgc=2)
    ev = run(text, [x, w])
    prov = ev.provenance()
    src = prov.sources(0, (0, 2, 3, 4))  # interior
    assert len(src) == 2 * 9 * 2
    assert {s.role for s in src} == {"window", "kernel"}
    assert {s.index[3] for s in src if s.role == "window"} == {2, 3}  # feature group 1
    corner = prov.sources(0, (0, 0, 0, 0))
    pads = [s for s in corner if s.role == "pad_value"]
    assert len(pads) == 5 * 2 and all(s.operand is None for s in pads)
    assert (0, 0, 0, 0) in {s.index for s in pads}  # frame coordinates in the padded input
    back = prov.back(0, np.ones(ev.outputs[0].shape, bool))
    assert back[(None, "pad_value")].shape == (1, 8, 8, 4)


def _conv_spec_like(reversal=(False, False)):
    """The spec example's lhs with padding 1 and a 0..8 kernel: windows over padding, holes and elements."""
    text_ = conv_program((1, 4, 4, 1), (3, 3, 1, 1), "i64", "i64", (1, 2, 2, 1), NHWC, (4, 4),
                         ((1, 1), (1, 1)), (2, 2), (1, 1), reversal)
    return run(text_, [SPEC_LHS, np.arange(9, dtype=np.int64).reshape(3, 3, 1, 1)])


def test_conv_explain():
    ev = _conv_spec_like()
    e = explain(ev, (0, 1, 0, 0))
    check_steps(e)
    text_out = format_explanation(e, max_children=20)
    assert e.value == ev.outputs[0][0, 1, 0, 0] == 10 * 4
    assert [s.name for s in e.steps] == ["result_index", "output_spatial_index", "lhs_batch_index",
                                         "lhs_feature_indices", "lhs_window_start", "lhs_window_dimensions",
                                         "lhs_window_positions", "dot_product"]
    s = _steps(e)
    assert s["result_index"].dim_roles == {0: DimRole("output_batch"), 3: DimRole("output_feature"),
                                           1: DimRole("spatial", k=0), 2: DimRole("spatial", k=1)}
    assert text(s["result_index"].substituted) == "result_shape(0, (1, 0), 0)"
    assert s["output_spatial_index"].value == (1, 0)
    assert text(s["output_spatial_index"].substituted) == "(0, 1, 0, 0)[1, 2]"
    assert s["lhs_batch_index"].value == 0 and s["lhs_window_dimensions"].value == (3, 3)
    assert "lhs_window_start = output_spatial_index * window_strides = (1, 0) * [4, 4] = (4, 0)" in text_out
    assert s["lhs_window_start"].value == (4, 0)
    assert s["lhs_window_start"].substituted.args == {"output_spatial_index": (1, 0),
                                                      "window_strides": [4, 4]}
    dp = s["dot_product"]
    assert [float(c.value) for c in dp.children] == [0] * 4 + [40] + [0] * 4
    assert "lhs[0, 2, 0, 0] * rhs[1, 1, 0, 0] = 10 * 4 = 40" in text_out
    assert "padding at padded_lhs[0, 4, 0, 0] * rhs[0, 0, 0, 0] = 0 * 0 = 0" in text_out
    assert dp.substituted.args["lhs_window"].tolist() == [[[0, 0, 0], [0, 10, 0], [0, 0, 0]]]
    assert dp.substituted.args["rhs"].tolist() == [np.arange(9).reshape(3, 3).tolist()]
    assert [n.key for n in e.notes] == ["contraction.note.wrap"]


def test_conv_window_positions_are_position_tuples_per_spatial_dim():
    e = explain(_conv_spec_like(), (0, 1, 0, 0))
    pos = _steps(e)["lhs_window_positions"]
    # padded_lhs positions along each spatial dim, not the number of spatial dims
    assert pos.value == ((4, 5, 6), (0, 1, 2))
    assert pos.dim_roles == {0: DimRole("spatial", k=0), 1: DimRole("spatial", k=1)}
    assert [c.name for c in pos.children] == ["lhs_window_positions[0]", "lhs_window_positions[1]"]
    assert [c.value for c in pos.children] == list(pos.value)
    assert text(pos.children[0].substituted) == "4 + (0, 1, 2) * 1"
    assert pos.substituted.args["padding"] == [[1, 1], [1, 1]] and pos.substituted.args["shape"] == (9, 9)
    assert [len(c.children) for c in pos.children] == [3, 3]
    # window_reversal: kernel index k reads window offset 2 - k
    rev = _steps(explain(_conv_spec_like((True, False)), (0, 1, 0, 0)))["lhs_window_positions"]
    assert rev.value == ((6, 5, 4), (0, 1, 2))
    assert rev.children[0].formula.key == "contraction.convolution.positions.dim_formula_reversed"
    assert rev.children[1].formula.key == "contraction.convolution.positions.dim_formula"
    assert text(rev.children[0].substituted) == "4 + (2, 1, 0) * 1"


def test_conv_positions_are_operand_padding_or_hole():
    e = explain(_conv_spec_like(), (0, 1, 0, 0))
    check_steps(e)
    dims = _steps(e)["lhs_window_positions"].children
    # dim 0: positions 4, 5, 6 - padding_low 1 = 3, 4, 5 on lhs_dilation 2: hole, lhs 2, hole
    # dim 1: positions 0, 1, 2 - 1 = -1, 0, 1: padding, lhs 0, hole
    want = [[("hole", None), ("operand", 2), ("hole", None)],
            [("padding", None), ("operand", 0), ("hole", None)]]
    for j, (dim, kinds) in enumerate(zip(dims, want, strict=True)):
        for k, (c, (kind, at)) in enumerate(zip(dim.children, kinds, strict=True)):
            assert c.dim_roles == {j: DimRole(kind)}  # a dimension key, never {"is": ...}
            assert c.value.key == f"contraction.convolution.position.{kind}"
            assert c.value.args == ({"index": at} if at is not None else {})
            assert c.name.args == {"k": k, "position": dim.value[k]}
            assert c.substituted.args == {"position": dim.value[k], "padding_low": 1, "lhs_dilation": 2}
    assert text(dims[0].children[0].value) == "lhs_dilation hole"
    assert text(dims[1].children[0].value) == "padding"
    assert text(dims[0].children[1].value) == "lhs spatial index 2"
    # the products: 3 on padding (dim 1 at position 0), 5 on holes, 1 on an lhs element
    dp = _steps(e)["dot_product"]
    assert {k: dp.formula.args[k] for k in ("total", "operand", "padding", "holes")} == \
        {"total": 9, "operand": 1, "padding": 3, "holes": 5}
    names = [c.name.key if isinstance(c.name, Msg) else c.name for c in dp.children]
    pad, hole = "contraction.convolution.product.padding", "contraction.convolution.product.hole"
    assert names == [pad, hole, hole, pad, "lhs[0, 2, 0, 0] * rhs[1, 1, 0, 0]", hole, pad, hole, hole]
    assert dp.children[1].name.args == {"position": "0, 4, 1, 0", "rhs": "0, 1, 0, 0"}
    out = format_explanation(e, max_children=20)
    assert "lhs_dilation hole at padded_lhs[0, 4, 1, 0] * rhs[0, 1, 0, 0] = 0 * 1 = 0" in out
    assert "1 on lhs elements, 3 on padding, 5 on lhs_dilation holes" in out
    assert "is: padding" not in out


def test_conv_feature_groups_and_input_features_as_a_set():
    rng = np.random.default_rng(3)
    x = rng.integers(-5, 5, (1, 6, 6, 4)).astype(np.int32)
    w = rng.integers(-5, 5, (3, 3, 2, 6)).astype(np.int32)  # feature_group_count 2: Cg = 2, Og = 3
    text_ = conv_program((1, 6, 6, 4), (3, 3, 2, 6), "i32", "i32", (1, 6, 6, 6), NHWC, (1, 1),
                         ((1, 1), (1, 1)), (1, 1), (1, 1), (False, False), fgc=2)
    ev = run(text_, [x, w])
    e = explain(ev, (0, 2, 3, 4))
    check_steps(e)
    s = _steps(e)
    assert s["feature_group"].value == 1 and text(s["feature_group"].substituted) == "4 // (6 / 2)"
    feats = s["lhs_feature_indices"]
    assert feats.value == range(2, 4)  # the set of input features, not a (first, last) pair
    assert format_value(feats.value) == "{2, 3}"
    assert text(feats.substituted) == "1 * 2 + range(2)"
    assert "batch_group" not in s
    dp = s["dot_product"]
    assert dp.formula.args["total"] == 18 == dp.formula.args["operand"]  # interior: no padding, no holes
    assert e.value == ev.outputs[0][0, 2, 3, 4] == sum(int(c.value) for c in dp.children)
    assert {c.name.split("] * ")[0].split(", ")[-1] for c in dp.children} == {"2", "3"}


def test_dynamic_conv_explain_reads_the_padding_operand():
    text_ = conv_program((1, 4, 4, 1), (3, 3, 1, 1), "i64", "i64", (1, 2, 2, 1), NHWC, (4, 4),
                         None, (2, 2), (1, 1), (False, False), dynamic=True)
    ev = run(text_, [SPEC_LHS, np.ones((3, 3, 1, 1), np.int64), np.ones((2, 2), np.int64)])
    e = explain(ev, (0, 1, 1, 0))
    check_steps(e)
    s = _steps(e)
    assert e.value == ev.outputs[0][0, 1, 1, 0] == 14
    assert s["lhs_window_positions"].substituted.args["padding"] == [[1, 1], [1, 1]]
    assert s["lhs_window_positions"].value == ((4, 5, 6), (4, 5, 6))
    dp = s["dot_product"]
    assert {k: dp.formula.args[k] for k in ("operand", "padding", "holes")} == \
        {"operand": 1, "padding": 0, "holes": 8}


def test_conv_quantized_dequantizes_computes_and_quantizes():
    q = "!quant.uniform<i8:f32, 0.5>"
    text = conv_program((1, 4, 4, 1), (3, 3, 1, 1), q, q, (1, 2, 2, 1), NHWC, (1, 1),
                        ((0, 0), (0, 0)), (1, 1), (1, 1), (False, False))
    # nine products 0.5 * 0.5 = 2.25 -> 2.25 / 0.5 = 4.5, a tie: round half to even gives 4
    (r,) = Interpreter(parse_module(text)).run(None, [np.ones((1, 4, 4, 1), np.int8),
                                                      np.ones((3, 3, 1, 1), np.int8)])
    assert r.dtype == np.int8 and r.reshape(-1).tolist() == [4, 4, 4, 4]


# --- records and result-type inference ----------------------------------------------------

def _op_of(text: str, name: str):
    return next(o for o in parse_module(text).funcs[0].body.blocks[0].ops if o.name == name)


def test_dot_general_record_and_infer():
    from hlolab.ops.contraction import DotAttrs, DotGeneralAttrs, infer_dot, infer_dot_general
    from hlolab.ops.record import InferError, Partial
    from hlolab.ops.registry import OpCall
    from hlolab.types import tensor_type

    text = dot_program((2, 3, 4), (2, 4, 5), "i8", "i32", lb=[0], rb=[0], lc=[2], rc=[1])
    rec = OpCall(_op_of(text, "stablehlo.dot_general")).attrs
    assert isinstance(rec, DotGeneralAttrs)
    assert (rec.lhs_batching_dimensions, rec.lhs_contracting_dimensions) == ((0,), (2,))
    assert rec.precision_config is None and rec.algorithm is None
    lhs, rhs = tensor_type((2, None, 4), "i8"), tensor_type((None, 4, 5), "i8")
    # batch + lhs free + rhs free; the element is the declared result's (i8 x i8 -> i32)
    assert infer_dot_general(rec, [lhs, rhs]) == [Partial((2, None, 5))]
    with pytest.raises(InferError) as e:
        infer_dot_general(rec.replace(lhs_contracting_dimensions=(3,)), [lhs, rhs])
    assert e.value.constraint == "C6"
    legacy = DotAttrs()
    assert infer_dot(legacy, [tensor_type((2, 3), "f32"), tensor_type((3,), "f32")]) == [Partial((2,))]
    with pytest.raises(InferError, match="rank-1 or rank-2"):
        infer_dot(legacy, [tensor_type((2, 3, 3), "f32"), tensor_type((3,), "f32")])


def test_conv_record_and_infer():
    from hlolab.ops.contraction import infer_conv
    from hlolab.ops.record import InferError, Partial
    from hlolab.ops.registry import OpCall
    from hlolab.types import tensor_type

    text = conv_program((1, 4, 4, 1), (3, 3, 1, 1), "i64", "i64", (1, 2, 2, 1), NHWC, (4, 4),
                        ((0, 0), (0, 0)), (2, 2), (1, 1), (False, False))
    rec = OpCall(_op_of(text, "stablehlo.convolution")).attrs
    assert rec.window_strides == (4, 4) and rec.padding == ((0, 0), (0, 0))
    assert rec.input_spatial_dimensions == (1, 2) and rec.kernel_output_feature_dimension == 3
    types = [tensor_type((1, 4, 4, 1), "i64"), tensor_type((3, 3, 1, 1), "i64")]
    assert infer_conv(rec, types) == [Partial((1, 2, 2, 1))]  # the spec's example
    # absent window attributes take the spec's defaults: stride 1, no padding or dilation
    bare = rec.replace(window_strides=None, padding=None, lhs_dilation=None)
    assert infer_conv(bare, types) == [Partial((1, 2, 2, 1))]
    with pytest.raises(InferError) as e:
        infer_conv(rec.replace(window_strides=(0, 1)), types)
    assert e.value.constraint == "C3"
    dyn = conv_program((1, 4, 4, 1), (3, 3, 1, 1), "i64", "i64", (1, 2, 2, 1), NHWC, (4, 4),
                       ((1, 1), (1, 1)), (2, 2), (1, 1), (False, False), dynamic=True)
    drec = OpCall(_op_of(dyn, "stablehlo.dynamic_conv")).attrs
    # the spatial sizes depend on the padding operand's value
    assert infer_conv(drec, [*types, tensor_type((2, 2), "i64")]) == [Partial((1, None, None, 1))]
