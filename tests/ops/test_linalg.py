"""triangular_solve, fft, cholesky: spec and conformance examples, references in f64,
constraints, provenance checked by perturbation (an element outside sources never
changes the value bit-for-bit), set forms against element queries, and explain."""

from __future__ import annotations

import itertools
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hlolab import messages
from hlolab.errors import NotImplementedOpError, VerificationError
from hlolab.interp.engine import Interpreter
from hlolab.ir.parser import parse_module, split_source
from hlolab.messages import Msg
from hlolab.ops.linalg import TriangularSolveAttrs, factorize, substitute
from hlolab.ops.registry import lookup
from hlolab.runner import run_module
from hlolab.trace.explain import format_explanation
from tests.conftest import shared_dir
from tests.test_messages import PSEUDO, check_no_english, check_structured, pseudo_catalogue

# --- building and running programs -------------------------------------------------------

DT = {"f32": np.float32, "f64": np.float64, "complex<f32>": np.complex64,
      "complex<f64>": np.complex128, "bf16": ml_dtypes.bfloat16, "f16": np.float16}


def ttype(shape, e: str) -> str:
    return f"tensor<{'x'.join(str(d) for d in shape)}{'x' if shape else ''}{e}>"


def tri_program(a_shape, b_shape, e="f32", left=True, lower=True, unit=False, tr="NO_TRANSPOSE",
                r_type=None) -> str:
    ta, tb = ttype(a_shape, e), ttype(b_shape, e)
    tr_ = r_type or tb
    return (f"func.func @main(%a: {ta}, %b: {tb}) -> {tr_} {{\n"
            f'  %r = "stablehlo.triangular_solve"(%a, %b) {{left_side = {str(left).lower()}, '
            f"lower = {str(lower).lower()}, unit_diagonal = {str(unit).lower()}, "
            f"transpose_a = #stablehlo<transpose {tr}>}} : ({ta}, {tb}) -> {tr_}\n"
            f"  return %r : {tr_}\n}}")


def fft_program(shape, e, kind, lengths, r_shape, r_e) -> str:
    to, tr = ttype(shape, e), ttype(r_shape, r_e)
    return (f"func.func @main(%x: {to}) -> {tr} {{\n"
            f"  %r = stablehlo.fft %x, type = {kind}, length = {list(lengths)} : ({to}) -> {tr}\n"
            f"  return %r : {tr}\n}}")


def chol_program(shape, e="f32", lower=True, r_type=None) -> str:
    ta = ttype(shape, e)
    tr = r_type or ta
    return (f"func.func @main(%a: {ta}) -> {tr} {{\n"
            f'  %r = "stablehlo.cholesky"(%a) {{lower = {str(lower).lower()}}} : ({ta}) -> {tr}\n'
            f"  return %r : {tr}\n}}")


def run(text: str, args: list[np.ndarray]):
    events = list(Interpreter(parse_module(text)).events(None, args))
    return next(e for e in events if e.op.name.startswith("stablehlo.")
                and e.op.name.split(".")[1] in ("triangular_solve", "fft", "cholesky"))


def explain(ev, index: tuple):
    return lookup(ev.op.name).explain(ev.call, ev.inputs, ev.outputs, 0, index)


def step(e, name: str):
    """The step named ``name``: a spec symbol, or the key of a message name."""
    return next(s for s in e.steps if s.name == name or isinstance(s.name, Msg) and s.name.key == name)


def structured(e) -> None:
    """The explanation is structured (Msg formulas and notes, keys with all their fields) and
    holds no English outside the catalogue."""
    mine = PSEUDO not in messages._catalogues  # tests/test_messages.py may have it installed
    if mine:
        messages.register(PSEUDO, pseudo_catalogue())
    try:
        where = f"{e.op} {list(e.index)}"
        check_structured(where, e)
        check_no_english(where, e)
    finally:
        if mine:
            messages._catalogues.pop(PSEUDO, None)


def conformance(name: str) -> list[str]:
    path = shared_dir("conformance", "interpret") / f"{name}.mlir"
    out = []
    for n, (first, chunk) in enumerate(split_source(path.read_text()), start=1):
        module = parse_module(chunk, str(path), first)
        if module.funcs:
            out.append(run_module(module, f"{name}#{n}").status)
    return out


# --- provenance checks shared by the three ops --------------------------------------------

def check_set_forms(prov, rng, n_masks: int = 2) -> None:
    """back/fwd agree with sources/targets; targets is the inverse of sources."""
    rshape = prov.result_shapes[0]
    all_src: dict = {}
    for ridx in np.ndindex(*rshape):
        for s in prov.sources(0, ridx):
            all_src.setdefault((s.operand, s.index), set()).add((ridx, s.role))
    for (operand, index), hits in all_src.items():
        got = {(t.index, t.role) for t in prov.targets(operand, index)}
        assert got == hits
    for _ in range(n_masks):
        mask = rng.random(rshape) < 0.3
        want: dict = {}
        for ridx in zip(*np.nonzero(mask), strict=True):
            for s in prov.sources(0, tuple(int(i) for i in ridx)):
                want.setdefault((s.operand, s.role), set()).add(s.index)
        got = {k: {tuple(int(i) for i in ix) for ix in zip(*np.nonzero(m), strict=True)}
               for k, m in prov.back(0, mask).items()}
        assert got == want
        for operand, oshape in enumerate(prov.operand_shapes):
            om = rng.random(oshape) < 0.3
            want_f: dict = {}
            for oidx in zip(*np.nonzero(om), strict=True):
                for t in prov.targets(operand, tuple(int(i) for i in oidx)):
                    want_f.setdefault((t.result, t.role), set()).add(t.index)
            got_f = {k: {tuple(int(i) for i in ix) for ix in zip(*np.nonzero(m), strict=True)}
                     for k, m in prov.fwd(operand, om).items()}
            assert got_f == want_f


def perturb_outside(evaluate, inputs, prov, ridx, rng, scale=1.0) -> None:
    """Changing every element that is not a source of ``ridx`` leaves it unchanged bit-for-bit."""
    src = {(s.operand, s.index) for s in prov.sources(0, ridx)}
    changed = []
    for k, x in enumerate(inputs):
        y = x.copy()
        for ix in np.ndindex(*x.shape):
            if (k, ix) not in src:
                y[ix] = x[ix] + x.dtype.type(scale * (1 + rng.random()))
        changed.append(y)
    before = evaluate(inputs)[ridx]
    after = evaluate(changed)[ridx]
    assert np.asarray(before).tobytes() == np.asarray(after).tobytes(), (ridx, before, after)


def perturb_each_source(evaluate, inputs, prov, ridx) -> None:
    """Each source, changed alone, changes the value (generic well-conditioned inputs)."""
    before = evaluate(inputs)[ridx]
    for s in prov.sources(0, ridx):
        changed = [x.copy() for x in inputs]
        changed[s.operand][s.index] = changed[s.operand][s.index] * 1.5 + 0.25
        assert evaluate(changed)[ridx] != before, (ridx, s)


# --- triangular_solve ---------------------------------------------------------------------

FORMS = [TriangularSolveAttrs(left_side=left, lower=lower, unit_diagonal=unit, transpose_a=tr)
         for left, lower, unit, tr in itertools.product(
             (True, False), (True, False), (False, True), ("NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"))]


def well_conditioned(rng, shape, dtype) -> np.ndarray:
    """Random matrices whose triangles are diagonally dominant (and nonzero everywhere)."""
    m = shape[-1]
    x = rng.uniform(-1, 1, shape) / m
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.uniform(-1, 1, shape) / m
    x = x + np.eye(m) * (2 + rng.random(shape[:-1]))[..., None]
    return x.astype(dtype)


def triangle_of(a: np.ndarray, f: TriangularSolveAttrs) -> np.ndarray:
    t = np.tril(a) if f.lower else np.triu(a)
    if f.unit_diagonal:
        m = a.shape[-1]
        t = t * (1 - np.eye(m)) + np.eye(m)
    return t


def tri_reference(a: np.ndarray, b: np.ndarray, f: TriangularSolveAttrs) -> np.ndarray:
    """np.linalg.solve in complex128 on the explicit triangle (the slow, obvious way)."""
    t = triangle_of(a.astype(np.complex128), f)
    op_a = {"NO_TRANSPOSE": t, "TRANSPOSE": np.swapaxes(t, -1, -2),
            "ADJOINT": np.conj(np.swapaxes(t, -1, -2))}[f.transpose_a]
    b = b.astype(np.complex128)
    if f.left_side:
        return np.linalg.solve(op_a, b)
    return np.swapaxes(np.linalg.solve(np.swapaxes(op_a, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)


def tri_run(a, b, f: TriangularSolveAttrs, e: str):
    return run(tri_program(a.shape, b.shape, e, f.left_side, f.lower, f.unit_diagonal, f.transpose_a),
               [a, b])


def test_triangular_solve_spec_example():
    a = np.array([[1, 0, 0], [2, 4, 0], [3, 5, 6]], np.float32)
    b = np.array([[2, 0, 0], [4, 8, 0], [6, 10, 12]], np.float32)
    ev = run(tri_program((3, 3), (3, 3)), [a, b])
    assert ev.outputs[0].tolist() == [[2, 0, 0], [0, 2, 0], [0, 0, 2]]
    e = explain(ev, (2, 1))
    structured(e)
    # x_2 = (b_2 - a_20 x_0 - a_21 x_1) / a_22 = (10 - 3*0 - 5*2) / 6 = 0
    m = step(e, "M")
    assert m.formula.key == "linalg.triangular_solve.M.formula_left" and m.formula.args["m"] == "a"
    assert m.substituted.args == {"m": "%a"}
    assert m.value.key == "linalg.triangular_solve.M.forward" and m.value.args == {"order": [0, 1, 2]}
    ij = step(e, "(i, j)")
    assert ij.value == (2, 1) and ij.substituted.key == "linalg.result_index_tail"
    b_i = step(e, "b_i")
    assert b_i.value == 10 and b_i.substituted.args == {"i": 2, "j": 1, "name": "%b", "index": "2, 1"}
    total = step(e, "sum_k M_ik x_k")
    assert [c.value for c in total.children] == [0, 10]
    assert [c.name for c in total.children] == ["k = 0", "k = 1"]
    assert total.value == 10 and total.formula.args == {"cmp": "<"}
    assert total.substituted.args == {"count": 2, "rows": {0, 1}, "i": 2}
    term = total.children[1]
    assert term.formula.key == "linalg.triangular_solve.term.formula"
    assert (term.formula.args["i"], term.formula.args["k"], term.formula.args["j"]) == (2, 1, 1)
    assert term.formula.args["a"].key == "explain.element"
    assert term.formula.args["a"].args == {"name": "%a", "index": "2, 1"}
    assert (term.substituted.args["lhs"], term.substituted.args["rhs"]) == (5, 2)
    assert "%a[2, 1] * X[1, 1] = 5.0 * 2.0" in format_explanation(e)
    r_i = step(e, "r_i")
    assert r_i.value == 0 and (r_i.substituted.args["lhs"], r_i.substituted.args["rhs"]) == (10, 10)
    m_ii = step(e, "M_ii")
    assert m_ii.value == 6 and m_ii.substituted.args == {"name": "%a", "index": "2, 2"}
    x_i = step(e, "x_i")
    assert x_i.value == 0 and x_i.formula.key == "linalg.triangular_solve.x_i.formula"
    assert (x_i.substituted.args["lhs"], x_i.substituted.args["rhs"]) == (0, 6) and e.value == 0
    assert [n.key for n in e.notes] == ["linalg.triangular_solve.note.xla_order"]


def test_triangular_solve_conformance_file_passes():
    assert conformance("triangular_solve") == ["PASS"] * 27


@pytest.mark.parametrize("f", FORMS, ids=lambda f: f"{'L' if f.left_side else 'R'}"
                         f"{'lo' if f.lower else 'up'}{'U' if f.unit_diagonal else ''}-{f.transpose_a}")
def test_every_attribute_combination_matches_reference(f):
    rng = np.random.default_rng(7)
    for e in ("f64", "complex<f64>", "f32"):
        a = well_conditioned(rng, (2, 4, 4), DT[e])
        b = rng.standard_normal((2, 4, 3) if f.left_side else (2, 3, 4)).astype(DT[e])
        got = tri_run(a, b, f, e).outputs[0]
        want = tri_reference(a, b, f)
        tol = 1e-12 if e != "f32" else 2e-5
        assert np.allclose(got, want, rtol=tol, atol=tol)
        # the other triangle (and the diagonal with unit_diagonal) is never read
        junk = a.copy()
        keep = triangle_of(np.ones(a.shape), f).astype(bool)
        if f.unit_diagonal:
            keep &= ~np.eye(4, dtype=bool)
        junk[~np.broadcast_to(keep, a.shape)] = np.nan
        assert tri_run(junk, b, f, e).outputs[0].tobytes() == got.tobytes()


def test_triangular_solve_bf16_is_computed_in_f32_and_rounded_once():
    rng = np.random.default_rng(3)
    a = well_conditioned(rng, (5, 5), np.float32).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((5, 2)).astype(ml_dtypes.bfloat16)
    f = TriangularSolveAttrs(left_side=True, lower=True, unit_diagonal=False, transpose_a="NO_TRANSPOSE")
    ev = tri_run(a, b, f, "bf16")
    got = ev.outputs[0]
    x = substitute(a.astype(np.float32), b.astype(np.float32), f)
    want = x.astype(ml_dtypes.bfloat16)
    assert got.dtype == ml_dtypes.bfloat16 and got.tobytes() == want.tobytes()
    e = explain(ev, (3, 1))
    structured(e)
    assert step(e, "x_i").value == x[3, 1] and step(e, "x_i").value.dtype == np.float32
    last = e.steps[-1]
    assert last.name == "result[3, 1]" and last.value == got[3, 1]
    assert last.formula.key == "linalg.rounded" and last.formula.args == {"x": "x_i", "dtype": "bfloat16"}
    assert last.substituted.args == {"x": x[3, 1], "dtype": "bfloat16"}
    assert e.notes[0].key == "linalg.note.work_type"
    assert e.notes[0].args == {"dtype": "bfloat16", "work": "float32"}


def test_zero_pivot_gives_ieee_inf_nan():
    a = np.array([[0, 0], [1, 1]], np.float32)
    b = np.array([[1], [1]], np.float32)
    out = run(tri_program((2, 2), (2, 1)), [a, b]).outputs[0]
    assert np.isinf(out[0, 0]) and np.isinf(out[1, 0])


@given(st.sampled_from(FORMS), st.integers(1, 4), st.integers(1, 3), st.booleans(),
       st.integers(0, 2**31))
def test_triangular_solve_provenance_by_perturbation(f, m, k, batched, seed):
    rng = np.random.default_rng(seed)
    bs = (2,) if batched else ()
    a = well_conditioned(rng, bs + (m, m), np.float64)
    b = rng.standard_normal(bs + ((m, k) if f.left_side else (k, m)))
    ev = tri_run(a, b, f, "f64")
    prov = ev.provenance()

    def evaluate(inputs):
        return substitute(inputs[0], inputs[1], f)

    assert np.array_equal(evaluate([a, b]), ev.outputs[0])
    for ridx in np.ndindex(*ev.outputs[0].shape):
        perturb_outside(evaluate, [a, b], prov, ridx, rng)
    ridx = tuple(int(rng.integers(0, d)) for d in ev.outputs[0].shape)
    perturb_each_source(evaluate, [a, b], prov, ridx)
    check_set_forms(prov, rng, n_masks=1)


def test_triangular_solve_sources_are_the_substitution_sets():
    # lower, left, no transpose: x[i, j] reads b[0..i, j] and a[r, c] for c <= r <= i
    a = well_conditioned(np.random.default_rng(0), (4, 4), np.float32)
    ev = run(tri_program((4, 4), (4, 2)), [a, np.ones((4, 2), np.float32)])
    src = ev.provenance().sources(0, (2, 1))
    assert [s.index for s in src if s.role == "window"] == [(0, 1), (1, 1), (2, 1)]
    assert [s.index for s in src if s.role == "kernel"] == [(0, 0), (1, 0), (1, 1), (2, 0), (2, 1),
                                                            (2, 2)]
    assert {s.operand for s in src if s.role == "kernel"} == {0}
    # upper, right side, TRANSPOSE: x op(a) = b with op(a) = a^T -> M = a (upper): back substitution
    ev = run(tri_program((4, 4), (2, 4), left=False, lower=False, tr="TRANSPOSE"),
             [a.T.copy(), np.ones((2, 4), np.float32)])
    src = ev.provenance().sources(0, (1, 2))
    assert [s.index for s in src if s.role == "window"] == [(1, 3), (1, 2)]
    assert [s.index for s in src if s.role == "kernel"] == [(3, 3), (2, 3), (2, 2)]


def test_triangular_solve_explain_replays_the_arithmetic():
    rng = np.random.default_rng(5)
    for f in FORMS:
        a = well_conditioned(rng, (2, 5, 5), np.complex64)
        b = (rng.standard_normal((2, 5, 3)) + 1j).astype(np.complex64)
        if not f.left_side:
            b = np.swapaxes(b, -1, -2).copy()
        ev = tri_run(a, b, f, "complex<f32>")
        for idx in [(1, 4, 2) if f.left_side else (1, 2, 4), (0, 0, 0), (1, 2, 1)]:
            e = explain(ev, idx)
            r = step(e, "b_i").value
            for c in step(e, "sum_k M_ik x_k").children:
                r = np.complex64(r - c.value)
            assert r == step(e, "r_i").value
            x = r if f.unit_diagonal else np.complex64(r / step(e, "M_ii").value)
            assert np.isclose(x, e.value, rtol=1e-6) and e.value == ev.outputs[0][idx]
            n_terms = len(step(e, "sum_k M_ik x_k").children)
            i = idx[1] if f.left_side else idx[2]
            assert n_terms == (i if f.forward else 4 - i)
            assert step(e, "(i, j)").value == ((idx[1], idx[2]) if f.left_side else (idx[2], idx[1]))
            assert step(e, "M").value.key == ("linalg.triangular_solve.M.forward" if f.forward
                                              else "linalg.triangular_solve.M.back")
            # ADJOINT reads conj(a): the substituted pivot says so
            if not f.unit_diagonal:
                assert step(e, "M_ii").substituted.key == ("linalg.conj_element" if f.conjugate
                                                           else "explain.element")
            structured(e)


def test_triangular_solve_explain_names_the_batch_slice_and_the_unit_diagonal():
    a = np.array([[[2, 0], [1, 2]], [[4, 0], [3, 1]]], np.float32)
    b = np.array([[[2, 1]], [[8, 5]]], np.float32)  # right side: x op(a) = b, x is 1x2
    f = TriangularSolveAttrs(left_side=False, lower=True, unit_diagonal=True, transpose_a="TRANSPOSE")
    ev = tri_run(a, b, f, "f32")
    e = explain(ev, (1, 0, 0))
    structured(e)
    m = step(e, "M")
    assert m.formula.key == "linalg.triangular_solve.M.formula_right"
    assert m.formula.args == {"m": "transpose(transpose(a))", "transpose_a": "TRANSPOSE"}
    assert m.substituted.args == {"m": "transpose(transpose(%a[1, :, :]))"}
    assert step(e, "(i, j)").substituted.key == "linalg.result_index_tail_reversed"
    # M = a (lower): forward substitution over x's columns; x_0 = b_0 / 1, x_1 = b_1 - a_10 x_0
    assert step(e, "M_ii").formula.key == "linalg.triangular_solve.M_ii.unit" and step(e, "M_ii").value == 1
    x_i = step(e, "x_i")
    # the unit diagonal does not divide, and the formula says it once (no repeated remark)
    assert x_i.formula.key == "linalg.triangular_solve.x_i.formula_unit" and x_i.substituted is None
    assert x_i.value == 8 == e.value
    e = explain(ev, (1, 0, 1))
    assert step(e, "b_i").substituted.args == {"i": 1, "j": 0, "name": "%b", "index": "1, 0, 1"}
    assert [c.value for c in step(e, "sum_k M_ik x_k").children] == [24] and e.value == 5 - 24


def test_triangular_solve_constraints():
    def bad(text, label):
        with pytest.raises(VerificationError) as ei:
            run(text, [np.zeros((3, 3), np.float32), np.zeros((3, 1), np.float32)])
        assert f"({label})" in str(ei.value), str(ei.value)

    bad(tri_program((3, 3), (3, 1), r_type="tensor<3x1xf64>"), "C4")
    bad(tri_program((3, 3), (3, 1), r_type="tensor<1x3xf32>"), "C4")
    with pytest.raises(VerificationError, match=r"\(C1\)"):
        run(tri_program((3, 3), (3, 1)).replace("%b: tensor<3x1xf32>", "%b: tensor<3x1xf64>")
            .replace("(tensor<3x3xf32>, tensor<3x1xf32>)", "(tensor<3x3xf32>, tensor<3x1xf64>)")
            .replace("-> tensor<3x1xf32>", "-> tensor<3x1xf64>").replace("%r : tensor<3x1xf32>",
                                                                         "%r : tensor<3x1xf64>"),
            [np.zeros((3, 3), np.float32), np.zeros((3, 1))])
    with pytest.raises(VerificationError, match=r"\(C2\)"):
        run(tri_program((3,), (3,)), [np.zeros(3, np.float32)] * 2)
    with pytest.raises(VerificationError, match=r"\(C3\)"):  # dim(a, -1) != dim(b, -2)
        run(tri_program((3, 3), (2, 3)), [np.zeros((3, 3), np.float32), np.zeros((2, 3), np.float32)])
    with pytest.raises(VerificationError, match=r"\(C3\)"):  # right side: dim(b, -1)
        run(tri_program((3, 3), (3, 2), left=False),
            [np.zeros((3, 3), np.float32), np.zeros((3, 2), np.float32)])
    with pytest.raises(VerificationError, match=r"\(C3\)"):  # batch dims
        run(tri_program((2, 3, 3), (4, 3, 1)),
            [np.zeros((2, 3, 3), np.float32), np.zeros((4, 3, 1), np.float32)])
    with pytest.raises(VerificationError, match=r"\(C3\)"):  # a not square
        run(tri_program((3, 2), (3, 1)), [np.zeros((3, 2), np.float32), np.zeros((3, 1), np.float32)])
    with pytest.raises(VerificationError, match=r"\(I1\)"):
        run(tri_program((3, 3), (3, 1), e="i32"), [np.zeros((3, 3), np.int32),
                                                   np.zeros((3, 1), np.int32)])


def test_triangular_solve_quantized_dequantizes_solves_and_quantizes():
    q = "!quant.uniform<i8:f32, 0.5>"
    text = tri_program((2, 2), (2, 1), e=q)
    # a = diag(2, 2), b = [1, 3] (storage * 0.5): x = [0.5, 1.5] -> storage [1, 3]
    r = run(text, [np.array([[4, 0], [0, 4]], np.int8), np.array([[2], [6]], np.int8)]).outputs[0]
    assert r.dtype == np.int8 and r.tolist() == [[1], [3]]


# --- fft ----------------------------------------------------------------------------------

def fft_case(kind: str, batch, lengths, cdt=np.complex128, rng=None):
    """(operand, operand type, result shape, result type) for a transform."""
    rng = rng or np.random.default_rng(0)
    lengths = list(lengths)
    real = np.float64 if cdt == np.complex128 else np.float32
    rname = "f64" if real == np.float64 else "f32"
    cname = f"complex<{rname}>"
    if kind == "RFFT":
        shape = tuple(batch) + tuple(lengths)
        x = rng.standard_normal(shape).astype(real)
        return x, rname, shape[:-1] + (lengths[-1] // 2 + 1,), cname
    if kind == "IRFFT":
        shape = tuple(batch) + tuple(lengths[:-1]) + (lengths[-1] // 2 + 1,)
        x = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(cdt)
        return x, cname, tuple(batch) + tuple(lengths), rname
    shape = tuple(batch) + tuple(lengths)
    x = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(cdt)
    return x, cname, shape, cname


def fft_run(kind, x, e, lengths, r_shape, r_e):
    return run(fft_program(x.shape, e, kind, lengths, r_shape, r_e), [x])


def test_fft_spec_example():
    x = np.array([1, 0, 0, 0], np.complex64)
    ev = fft_run("FFT", x, "complex<f32>", [4], (4,), "complex<f32>")
    assert ev.outputs[0].tolist() == [1, 1, 1, 1] and ev.outputs[0].dtype == np.complex64


def test_fft_conformance_file_passes():
    assert conformance("fft") == ["PASS"] * 12


@given(st.sampled_from(["FFT", "IFFT", "RFFT", "IRFFT"]), st.lists(st.integers(1, 5), min_size=1,
       max_size=3), st.lists(st.integers(1, 2), max_size=2), st.booleans(), st.integers(0, 2**31))
def test_fft_matches_numpy_in_f64_rounded_once(kind, lengths, batch, single, seed):
    rng = np.random.default_rng(seed)
    x, e, r_shape, r_e = fft_case(kind, batch, lengths, np.complex64 if single else np.complex128, rng)
    got = fft_run(kind, x, e, lengths, r_shape, r_e).outputs[0]
    axes = tuple(range(x.ndim - len(lengths), x.ndim))
    fn = {"FFT": np.fft.fftn, "IFFT": np.fft.ifftn, "RFFT": np.fft.rfftn, "IRFFT": np.fft.irfftn}[kind]
    want = fn(x.astype(np.complex128 if kind != "RFFT" else np.float64), s=lengths, axes=axes)
    assert got.shape == r_shape and got.dtype == DT[r_e]
    assert got.tobytes() == want.astype(DT[r_e]).tobytes()


def test_fft_round_trips():
    rng = np.random.default_rng(1)
    x, e, _, _ = fft_case("FFT", (2,), [3, 4], rng=rng)
    y = fft_run("FFT", x, e, [3, 4], x.shape, e).outputs[0]
    back = fft_run("IFFT", y, e, [3, 4], x.shape, e).outputs[0]
    assert np.allclose(back, x, atol=1e-13)
    r = rng.standard_normal((2, 5))
    y = fft_run("RFFT", r, "f64", [5], (2, 3), "complex<f64>").outputs[0]
    back = fft_run("IRFFT", y, "complex<f64>", [5], (2, 5), "f64").outputs[0]
    assert np.allclose(back, r, atol=1e-13)


def test_fft_empty_batch_and_zero_length():
    x = np.zeros((0, 4), np.complex64)
    assert fft_run("FFT", x, "complex<f32>", [4], (0, 4), "complex<f32>").outputs[0].shape == (0, 4)
    x = np.zeros((2, 0), np.float32)
    out = fft_run("RFFT", x, "f32", [0], (2, 0), "complex<f32>").outputs[0]
    assert out.shape == (2, 0)


def test_fft_constraints():
    c, f = "complex<f32>", "f32"

    def bad(shape, e, kind, lengths, r_shape, r_e, label):
        x = np.zeros(shape, DT[e])
        with pytest.raises(VerificationError) as ei:
            run(fft_program(shape, e, kind, lengths, r_shape, r_e), [x])
        assert f"({label})" in str(ei.value), str(ei.value)

    bad((4,), c, "FFT", [2, 2], (4,), c, "C1")
    bad((2, 2, 2, 2), c, "FFT", [2, 2, 2, 2], (2, 2, 2, 2), c, "C3")
    bad((4,), c, "FFT", [4], (4,), "complex<f64>", "C2")
    bad((4,), f, "FFT", [4], (4,), c, "C2")
    bad((4,), c, "RFFT", [4], (3,), c, "C2")
    bad((4,), f, "RFFT", [4], (3,), "complex<f64>", "C2")
    bad((3,), c, "IRFFT", [4], (4,), "f64", "C2")
    bad((4,), f, "RFFT", [5], (3,), c, "C4")
    bad((3,), c, "IRFFT", [5], (4,), f, "C4")
    bad((4,), f, "RFFT", [4], (4,), c, "C5")
    bad((4,), c, "IRFFT", [4], (4,), f, "C5")
    bad((2, 4), c, "FFT", [4], (3, 4), c, "C5")
    with pytest.raises(NotImplementedOpError, match="fft_length"):
        run(fft_program((4,), c, "FFT", [3], (4,), c), [np.zeros(4, np.complex64)])


@pytest.mark.parametrize("kind", ["FFT", "IFFT", "RFFT", "IRFFT"])
def test_fft_provenance_is_the_batch_block(kind):
    rng = np.random.default_rng(2)
    lengths = [2, 4]
    x, e, r_shape, r_e = fft_case(kind, (3,), lengths, rng=rng)
    ev = fft_run(kind, x, e, lengths, r_shape, r_e)
    prov = ev.provenance()
    src = prov.sources(0, (1, 1, 2))
    assert {s.role for s in src} == {"window"}
    assert [s.index for s in src] == [(1,) + ix for ix in np.ndindex(*x.shape[1:])]

    def evaluate(inputs):
        return fft_run(kind, inputs[0], e, lengths, r_shape, r_e).outputs[0]

    perturb_outside(evaluate, [x], prov, (1, 1, 2), rng)
    perturb_each_source(evaluate, [x], prov, (1, 0, 1))
    check_set_forms(prov, rng, n_masks=1)


@pytest.mark.parametrize("lengths", [[3, 4], [2, 5]])
@pytest.mark.parametrize("kind", ["FFT", "IFFT", "RFFT", "IRFFT"])
def test_fft_explain_direct_sum_agrees(kind, lengths):
    rng = np.random.default_rng(4)
    x, e, r_shape, r_e = fft_case(kind, (2,), lengths, rng=rng)
    ev = fft_run(kind, x, e, lengths, r_shape, r_e)
    for idx in [(1, 1, 1), (0, 0, 0), (1, 1, 2)]:
        ex = explain(ev, idx)
        n_terms = int(np.prod(x.shape[1:]))
        s = step(ex, "sum")
        assert len(s.children) == n_terms
        assert np.isclose(sum(c.value for c in s.children), s.value)
        exact = step(ex, "linalg.fft.exact.name").value if kind in ("IFFT", "IRFFT") else s.value
        assert np.isclose(exact, ev.outputs[0][idx], atol=1e-12), (kind, idx)
        assert ex.value == ev.outputs[0][idx]
        structured(ex)
    ex = explain(ev, (1, 1, 1))
    sign = "+" if kind in ("IFFT", "IRFFT") else "-"
    s = step(ex, "sum")
    assert s.formula.args["sign"] == sign and s.substituted.args["sign"] == sign
    assert s.substituted.args["phase"] == f"1 k0 / {lengths[0]} + 1 k1 / {lengths[1]}"
    assert s.substituted.args["x"].args == {"name": "%x", "index": "1, k"}
    assert step(ex, "j").value == (1, 1) and step(ex, "fft_type").formula.key == f"linalg.fft.fft_type.{kind}"
    assert step(ex, "fft_type").formula.args == {"n": 2, "fft_length": lengths}
    assert f"exp({sign}2πi" in format_explanation(ex)


def test_fft_explain_terms_phases_and_notes():
    x = np.array([[0, 1, 2, 3], [4, 5, 6, 7]], np.complex64)
    ev = fft_run("FFT", x, "complex<f32>", [4], (2, 4), "complex<f32>")
    e = explain(ev, (1, 3))
    structured(e)
    terms = step(e, "sum").children
    assert [c.name for c in terms] == ["k = (0,)", "k = (1,)", "k = (2,)", "k = (3,)"]
    # the phase j k / n in turns, exact: 3 * 1 / 4, 3 * 2 / 4 = 3/2
    assert [c.formula.args["phase"] for c in terms] == [0, Fraction(3, 4), Fraction(3, 2), Fraction(9, 4)]
    assert terms[2].formula.args["x"].args == {"name": "%x", "index": "1, 2"}
    assert terms[2].substituted.args["x"] == 6
    # the twiddle factor is parenthesized: "(6+0j) * (-1-3.67394e-16j)", never "* -1-3.67e-16j"
    assert terms[2].substituted.args["w"] == "(-1-3.67394e-16j)"
    assert np.isclose(terms[2].value, -6)
    res = e.steps[-1]
    assert res.name == "result[1, 3]" and res.formula.key == "linalg.fft.result.formula_rounded"
    assert res.formula.args == {"work": "complex128", "dtype": "complex64"}
    assert [n.key for n in e.notes] == ["linalg.fft.note.pocketfft"]
    assert e.notes[0].args["difference"] == float(f"{abs(step(e, 'sum').value - e.value):.3g}")


def test_fft_explain_lists_at_most_256_terms():
    x, e, r_shape, r_e = fft_case("FFT", (), [300])
    ev = fft_run("FFT", x, e, [300], r_shape, r_e)
    ex = explain(ev, (7,))
    structured(ex)
    assert len(step(ex, "sum").children) == 256
    assert ex.notes[-1].key == "linalg.note.more_terms" and ex.notes[-1].args == {"count": 44}


def test_fft_explain_says_no_rounding_when_the_result_is_the_work_type():
    rng = np.random.default_rng(6)
    x, e, r_shape, r_e = fft_case("IRFFT", (), [5], rng=rng)
    ex = explain(fft_run("IRFFT", x, e, [5], r_shape, r_e), (2,))
    structured(ex)
    assert ex.steps[-1].formula.key == "linalg.fft.result.formula"
    assert ex.steps[-1].formula.args["work"] == "float64"  # IRFFT is real: not complex128
    assert [c.substituted.args["c"] for c in step(ex, "sum").children] == [1, 2, 2]
    assert ex.notes[0].key == "linalg.fft.note.irfft_odd" and ex.notes[0].args == {"n": 5}
    scale = step(ex, "scale")
    assert scale.value == 0.2 and scale.substituted.args == {"lengths": "5"}
    exact = step(ex, "linalg.fft.exact.name")
    assert exact.formula.key == "linalg.fft.exact.formula_real"
    assert exact.substituted.args == {"sum": step(ex, "sum").value, "scale": 0.2}
    x, e, r_shape, r_e = fft_case("IRFFT", (), [4], np.complex64, rng=rng)
    ex = explain(fft_run("IRFFT", x, e, [4], r_shape, r_e), (1,))
    assert ex.steps[-1].formula.key == "linalg.fft.result.formula_rounded"
    assert ex.steps[-1].formula.args == {"work": "float64", "dtype": "float32"}
    assert ex.notes[0].key == "linalg.fft.note.irfft_even" and ex.notes[0].args == {"n": 4, "half": 2}
    assert [c.substituted.args["c"] for c in step(ex, "sum").children] == [1, 2, 1]


# --- cholesky -----------------------------------------------------------------------------

def pd(rng, batch, n, dtype) -> np.ndarray:
    """Random Hermitian positive-definite matrices (well conditioned)."""
    b = rng.standard_normal(batch + (n, n))
    if np.dtype(dtype).kind == "c":
        b = b + 1j * rng.standard_normal(batch + (n, n))
    a = b @ np.conj(np.swapaxes(b, -1, -2)) / n + 2 * np.eye(n)
    return a.astype(dtype)


def chol_run(a, e, lower):
    return run(chol_program(a.shape, e, lower), [a])


def test_cholesky_spec_example_with_a_consistent_result_type():
    a = np.array([[1, 2, 3], [2, 20, 26], [3, 26, 70]], np.float32)
    ev = chol_run(a, "f32", True)
    assert ev.outputs[0].tolist() == [[1, 0, 0], [2, 4, 0], [3, 5, 6]]
    # the spec's own example declares a tensor<3x3xf64> result for an f32 operand: (C1) says no
    with pytest.raises(VerificationError, match=r"\(C1\)"):
        run(chol_program((3, 3), "f32", True, r_type="tensor<3x3xf64>"), [a])
    e = explain(ev, (2, 1))
    structured(e)
    # L_21 = (a_21 - L_20 L_10) / L_11 = (26 - 3 * 2) / 4 = 5
    ij = step(e, "(i, j)")
    assert ij.value == (2, 1) and ij.formula.key == "linalg.cholesky.ij.formula_lower"
    a_ij = step(e, "a_ij")
    assert a_ij.value == 26 and a_ij.substituted.args == {"name": "%a", "index": "2, 1"}
    total = step(e, "sum_k L_ik conj(L_jk)")
    assert total.value == 6 and total.substituted.args == {"j": 1}
    assert [(c.name, c.value) for c in total.children] == [("k = 0", 6)]
    assert total.children[0].formula.args == {"i": 2, "j": 1, "k": 0}
    assert (total.children[0].substituted.args["lhs"], total.children[0].substituted.args["rhs"]) == (3, 2)
    t_ij = step(e, "t_ij")
    assert t_ij.value == 20 and (t_ij.substituted.args["lhs"], t_ij.substituted.args["rhs"]) == (26, 6)
    t_jj = step(e, "t_jj")
    assert t_jj.value == 16 and (t_jj.substituted.args["lhs"], t_jj.substituted.args["rhs"]) == (20, 4)
    assert step(e, "s_j").value == 4 and step(e, "s_j").substituted.args == {"t": 16}
    l_ij = step(e, "L_ij")
    assert l_ij.value == 5 == e.value
    assert (l_ij.substituted.args["lhs"], l_ij.substituted.args["rhs"]) == (20, 4)
    assert e.notes == []
    e = explain(ev, (2, 2))
    assert step(e, "t_ij").value == 36 and step(e, "L_jj").value == 6
    assert step(e, "L_jj").substituted.args == {"t": 36, "t_re": 36}
    assert [n.key for n in e.notes] == ["linalg.cholesky.note.pivot"]
    e = explain(ev, (0, 2))
    structured(e)
    assert e.value == 0 and e.steps[-1].formula.key == "linalg.cholesky.result.other_triangle"
    assert [n.key for n in e.notes] == ["linalg.cholesky.note.other_triangle"]


def test_cholesky_explain_upper_reads_the_upper_triangle_of_a():
    a = np.array([[1, 2, 3], [2, 20, 26], [3, 26, 70]], np.float32)
    ev = chol_run(a, "f32", False)  # result = U = transpose(L)
    e = explain(ev, (1, 2))
    structured(e)
    ij = step(e, "(i, j)")
    # wording: "the upper triangle of a is read", not "a upper triangle"
    assert ij.value == (2, 1) and ij.formula.key == "linalg.cholesky.ij.formula_upper"
    assert ij.substituted.key == "linalg.result_index_tail_reversed"
    assert step(e, "a_ij").formula.key == "linalg.cholesky.a_ij.formula_upper"
    assert step(e, "a_ij").substituted.args == {"name": "%a", "index": "1, 2"}
    assert e.value == 5


@pytest.mark.parametrize("e", ["f32", "f64", "complex<f32>", "complex<f64>"])
@pytest.mark.parametrize("lower", [True, False])
def test_cholesky_factorizes(e, lower):
    rng = np.random.default_rng(11)
    a = pd(rng, (2, 3), 5, DT[e])
    out = chol_run(a, e, lower).outputs[0]
    assert out.dtype == DT[e]
    if lower:
        assert np.array_equal(np.triu(out, 1), np.zeros_like(out))
        rebuilt = out @ np.conj(np.swapaxes(out, -1, -2))
    else:
        assert np.array_equal(np.tril(out, -1), np.zeros_like(out))
        rebuilt = np.conj(np.swapaxes(out, -1, -2)) @ out
    tol = 1e-5 if e in ("f32", "complex<f32>") else 1e-13
    assert np.allclose(rebuilt, a, rtol=tol, atol=tol)
    # the other triangle of a is never read
    junk = a.copy()
    other = ~np.tri(5, dtype=bool) if lower else ~np.tri(5, dtype=bool).T
    junk[..., other] = np.nan
    assert chol_run(junk, e, lower).outputs[0].tobytes() == out.tobytes()


def test_cholesky_not_positive_definite_is_nan_per_batch_element():
    rng = np.random.default_rng(12)
    a = pd(rng, (3,), 4, np.float32)
    a[1, 2, 2] = -50.0  # fails at column 2
    out = chol_run(a, "f32", True).outputs[0]
    assert np.isnan(out[1]).all() and np.isfinite(out[[0, 2]]).all()
    prov = run(chol_program(a.shape, "f32", True), [a]).provenance()
    src = prov.sources(0, (1, 0, 3))
    assert {s.role for s in src} == {"control"}
    assert [s.index for s in src] == [(1, 0, 0), (1, 1, 0), (1, 1, 1), (1, 2, 0), (1, 2, 1), (1, 2, 2)]
    # the failure reads only the leading 3x3 triangle: the rest cannot undo it
    b = a.copy()
    b[1, 3, :] = 7.0
    assert np.isnan(chol_run(b, "f32", True).outputs[0][1]).all()
    e = explain(run(chol_program(a.shape, "f32", True), [a]), (1, 0, 3))
    structured(e)
    assert np.isnan(e.value) and np.isnan(step(e, "s_2").value)
    t = step(e, "t_22")
    assert t.formula.args == {"j": 2} and t.value < 0
    assert t.substituted.args["lhs"] == -50 and t.value == np.float32(-50 - t.substituted.args["rhs"])
    assert step(e, "s_2").substituted.args == {"t": t.value}
    assert e.steps[-1].formula.key == "linalg.cholesky.result.failed" and e.steps[-1].formula.args == {"j": 2}
    assert [n.key for n in e.notes] == ["linalg.cholesky.note.undefined"]


def test_cholesky_bf16_is_computed_in_f32_and_rounded_once():
    a = pd(np.random.default_rng(13), (), 4, np.float32).astype(ml_dtypes.bfloat16)
    ev = chol_run(a, "bf16", True)
    out = ev.outputs[0]
    low, _ = factorize(a.astype(np.float32), True)
    assert out.tobytes() == low.astype(ml_dtypes.bfloat16).tobytes()
    e = explain(ev, (3, 1))
    structured(e)
    assert step(e, "L_ij").value == low[3, 1]
    last = e.steps[-1]
    assert last.formula.args == {"x": "L_ij", "dtype": "bfloat16"} and last.value == out[3, 1]
    assert last.substituted.args == {"x": low[3, 1], "dtype": "bfloat16"}
    assert e.notes == [e.notes[0]] and e.notes[0].args == {"dtype": "bfloat16", "work": "float32"}


@given(st.integers(1, 5), st.booleans(), st.booleans(), st.integers(0, 2**31))
def test_cholesky_provenance_by_perturbation(n, lower, batched, seed):
    rng = np.random.default_rng(seed)
    bs = (2,) if batched else ()
    a = pd(rng, bs, n, np.float64)
    ev = chol_run(a, "f64", lower)
    prov = ev.provenance()

    def evaluate(inputs):
        return chol_run(inputs[0], "f64", lower).outputs[0]

    for ridx in np.ndindex(*a.shape):
        perturb_outside(evaluate, [a], prov, ridx, rng, scale=1e-3)  # stays positive definite
    tri = [ix for ix in np.ndindex(*a.shape) if (ix[-2] >= ix[-1]) == lower or ix[-2] == ix[-1]]
    perturb_each_source(evaluate, [a], prov, tri[int(rng.integers(0, len(tri)))])
    check_set_forms(prov, rng, n_masks=1)


def test_cholesky_sources_are_the_column_algorithm_sets():
    a = pd(np.random.default_rng(14), (), 4, np.float32)
    prov = chol_run(a, "f32", True).provenance()
    # L_31 reads a[r, c] for c <= r <= 1 and a[3, 0..1]
    assert [s.index for s in prov.sources(0, (3, 1))] == [(0, 0), (1, 0), (1, 1), (3, 0), (3, 1)]
    assert prov.sources(0, (1, 3)) == []  # the zero triangle reads nothing
    prov = chol_run(a, "f32", False).provenance()  # upper: the mirror image
    assert [s.index for s in prov.sources(0, (1, 3))] == [(0, 0), (0, 1), (1, 1), (0, 3), (1, 3)]


def test_cholesky_explain_matches_the_values_bitwise():
    rng = np.random.default_rng(15)
    a = pd(rng, (2,), 6, np.complex64)
    ev = chol_run(a, "complex<f32>", True)
    for idx in [(1, 5, 2), (0, 3, 3), (1, 1, 0)]:
        e = explain(ev, idx)
        assert e.value == ev.outputs[0][idx]
        structured(e)
        if idx[1] == idx[2]:
            t = step(e, "t_ij").value
            assert step(e, "L_jj").value == np.complex64(t / np.sqrt(np.float32(t.real)))
            assert step(e, "L_jj").formula.key == "linalg.cholesky.L_jj.formula_complex"
            assert step(e, "L_jj").substituted.args == {"t": t, "t_re": t.real}
            assert [n.key for n in e.notes] == ["linalg.cholesky.note.pivot_complex"]
        else:
            assert e.value == np.complex64(step(e, "t_ij").value / step(e, "s_j").value)
        assert len(step(e, "sum_k L_ik conj(L_jk)").children) == idx[2]


def test_cholesky_constraints():
    with pytest.raises(VerificationError, match=r"\(C2\)"):
        run(chol_program((3,), "f32", True), [np.zeros(3, np.float32)])
    with pytest.raises(VerificationError, match=r"\(C3\)"):
        run(chol_program((3, 2), "f32", True), [np.zeros((3, 2), np.float32)])
    with pytest.raises(VerificationError, match=r"\(C1\)"):
        run(chol_program((3, 3), "f32", True, r_type="tensor<2x3x3xf32>"), [np.zeros((3, 3), np.float32)])
    with pytest.raises(VerificationError, match=r"\(I1\)"):
        run(chol_program((3, 3), "i32", True), [np.zeros((3, 3), np.int32)])
    # quantized: a = diag(4, 1) (storage * 0.5), L = diag(2, 1) -> storage diag(4, 2)
    r = run(chol_program((2, 2), "!quant.uniform<i8:f32, 0.5>", True),
            [np.array([[8, 0], [0, 2]], np.int8)]).outputs[0]
    assert r.dtype == np.int8 and r.tolist() == [[4, 0], [0, 2]]


# --- records and result type inference ----------------------------------------------------

def test_fft_infers_the_spec_shapes_and_elements():
    from hlolab.ops.linalg import FftAttrs, infer_fft
    from hlolab.ops.record import InferError
    from hlolab.types import tensor_type

    def infer(kind, lengths, shape, e):
        return infer_fft(FftAttrs(fft_type=kind, fft_length=lengths), [tensor_type(shape, e)])[0]

    assert infer("FFT", (4,), (2, 4), "complex<f32>") == tensor_type((2, 4), "complex<f32>")
    assert infer("RFFT", (4, 4), (4, 4), "f64") == tensor_type((4, 3), "complex<f64>")
    assert infer("RFFT", (5,), (None, 5), "f32") == tensor_type((None, 3), "complex<f32>")
    assert infer("RFFT", (0,), (0,), "f32") == tensor_type((0,), "complex<f32>")
    assert infer("IRFFT", (2, 6), (2, 2, 4), "complex<f32>") == tensor_type((2, 2, 6), "f32")
    for args, c in ((("FFT", (4,), (2, 4), "f32"), "C2"), (("RFFT", (4,), (4,), "bf16"), "C2"),
                    (("FFT", (2, 2), (2,), "complex<f32>"), "C1"), (("FFT", (), (2,), "complex<f32>"), "C3"),
                    (("IRFFT", (-2,), (0,), "complex<f32>"), "C4")):
        with pytest.raises(InferError) as info:
            infer(*args)
        assert info.value.constraint == c


def test_linalg_records_and_baseline_results():
    from hlolab.ir.parser import parse_type
    from hlolab.ops.linalg import CholeskyAttrs, infer_cholesky, infer_triangular_solve
    from hlolab.ops.record import type_admits
    from hlolab.types import tensor_type
    text = chol_program((2, 2), "f32", False).replace(" {lower = false}", "")
    ev = run(text, [np.array([[4, 2], [2, 5]], np.float32)])
    assert "lower" not in ev.op.attributes and ev.call.attrs == CholeskyAttrs(lower=False)
    assert ev.outputs[0].tolist() == [[2, 1], [0, 2]]  # lower absent: upper, a = U^H U
    t = tensor_type((None, 3, 3), "f32")
    assert infer_cholesky(CholeskyAttrs(), [t]) == [t]
    f = FORMS[-1]
    assert f.transpose_a == "ADJOINT" and f.to_ir()["transpose_a"].value == "ADJOINT"
    b = tensor_type((None, 2, 3), "f32")
    assert infer_triangular_solve(f, [t, b]) == [b]
    # quantized: the result keeps b's baseline type, its scales are its own (C4)
    q = parse_type("tensor<3x3x!quant.uniform<i8:f32, 0.5>>")
    (r,) = infer_triangular_solve(f, [q, q])
    assert type_admits(r, parse_type("tensor<3x3x!quant.uniform<i8:f32, 2.0>>"))
    assert not type_admits(r, parse_type("tensor<3x3x!quant.uniform<i16:f32, 0.5>>"))
    assert not type_admits(r, parse_type("tensor<3x4x!quant.uniform<i8:f32, 0.5>>"))
