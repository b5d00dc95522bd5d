"""scatter: spec/conformance examples, out-of-bounds drops, variadic scatter, every
recognized body and a general one, constraints, a slow spec-loop reference under
hypothesis, provenance (checked against the values) and explain."""

from __future__ import annotations

import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hlolab.errors import VerificationError
from hlolab.interp.engine import Interpreter
from hlolab.ir.parser import parse_module
from hlolab.messages import Msg, text
from hlolab.ops.regions import combine_at, recognize_binary, recognize_binary_each
from hlolab.ops.registry import lookup
from hlolab.ops.scatter import EXPLAIN_MAX_UPDATES, scatter_index_pieces, wave_numbers
from hlolab.trace.explain import DimRole, format_explanation
from hlolab.types import element_type
from tests.conftest import REPO, shared_dir
from tests.ops.regions_text import combiner_body
from tests.test_messages import assert_substituted_everywhere

# --- building programs -----------------------------------------------------------------


def body(kind: str | list[str], es: list[str]) -> str:
    """An update_computation: per output a kind of combiner_body ("affine": a * b + 1)."""
    return combiner_body(kind if isinstance(kind, list) else [kind] * len(es), es)


def ttype(shape: tuple[int, ...], e: str) -> str:
    return f"tensor<{'x'.join(str(d) for d in shape)}{'x' if shape else ''}{e}>"


def program(in_shape, es, si_shape, si_e, up_shape, dims: dict, kind="add",
            result_es: list[str] | None = None, region_es: list[str] | None = None) -> str:
    n = len(es)
    region_es = region_es or result_es or es
    result_es = result_es or region_es
    ins = [ttype(in_shape, e) for e in es]
    ups = [ttype(up_shape, e) for e in es]
    si = ttype(si_shape, si_e)
    res = [ttype(in_shape, e) for e in result_es]
    params = ", ".join([f"%x{i}: {t}" for i, t in enumerate(ins)] + [f"%idx: {si}"]
                       + [f"%u{i}: {t}" for i, t in enumerate(ups)])
    names = ", ".join([f"%x{i}" for i in range(n)] + ["%idx"] + [f"%u{i}" for i in range(n)])
    fields = ", ".join(f"{k} = {list(v) if not isinstance(v, int) else v}" for k, v in dims.items())
    lhs = f"%r:{n}" if n > 1 else "%r"
    rets = ", ".join(f"%r#{i}" for i in range(n)) if n > 1 else "%r"
    return (f"func.func @main({params}) -> ({', '.join(res)}) {{\n"
            f"  {lhs} = \"stablehlo.scatter\"({names}) ({{\n    {body(kind, region_es)}\n  }}) {{"
            f"scatter_dimension_numbers = #stablehlo.scatter<{fields}>, indices_are_sorted = false, "
            f"unique_indices = false}} : ({', '.join(ins + [si] + ups)}) -> ({', '.join(res)})\n"
            f"  return {rets} : {', '.join(res)}\n}}")


def run(text: str, args: list[np.ndarray]):
    events = list(Interpreter(parse_module(text)).events(None, args))
    return next(e for e in events if e.op.name == "stablehlo.scatter")


def explain(ev, result: int, index: tuple):
    return lookup("stablehlo.scatter").explain(ev.call, ev.inputs, ev.outputs, result, index)


ONE_D = {"inserted_window_dims": [0], "scatter_dims_to_operand_dims": [0], "index_vector_dim": 1}


def scatter_1d(x, idx, u, kind="add", e="i32"):
    text = program(x.shape, [e], (len(idx), 1), "i32", (len(idx),), ONE_D, kind)
    return run(text, [x, np.array(idx, np.int32).reshape(-1, 1), u])


# --- the slow reference: the spec's loop, one update element at a time -------------------

def reference(inputs, si, updates, d, combine):
    res = [x.copy() for x in inputs]
    rank = len(inputs[0].shape)
    uwd, iwd, ibd = d["update_window_dims"], d["inserted_window_dims"], d["input_batching_dims"]
    sibd, sdtod, ivd = d["scatter_indices_batching_dims"], d["scatter_dims_to_operand_dims"], \
        d["index_vector_dim"]
    for update_index in np.ndindex(*updates[0].shape):
        usd = [k for k in range(updates[0].ndim) if k not in uwd]
        usi = [update_index[k] for k in usd]
        if ivd < si.ndim:
            start = [int(si[tuple(usi[:ivd] + [k] + usi[ivd:])]) for k in range(si.shape[ivd])]
        else:
            start = [int(si[tuple(usi)])]
        full_start = [0] * rank
        for ds, di in enumerate(sdtod):
            full_start[di] = start[ds]
        full_batching = [0] * rank
        for di, ds in zip(ibd, sibd, strict=True):
            full_batching[di] = usi[ds - (0 if ds < ivd else 1)]
        window = iter(update_index[k] for k in uwd)
        full_window = [0 if x in iwd or x in ibd else next(window) for x in range(rank)]
        ri = tuple(a + b + c for a, b, c in zip(full_start, full_batching, full_window, strict=True))
        if all(0 <= i < n for i, n in zip(ri, inputs[0].shape, strict=True)):
            new = combine([r[ri] for r in res], [u[update_index] for u in updates])
            for r, v in zip(res, new, strict=True):
                r[ri] = v
    return res


def same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype)
    assert got.tobytes() == want.tobytes(), f"{got} != {want}"


# --- spec / conformance / XLA examples -----------------------------------------------

SPEC_INPUT = np.arange(1, 49, dtype=np.int64).reshape(2, 3, 4, 2)
SPEC_INDICES = np.array([[[[0, 0], [1, 0], [2, 1]], [[0, 1], [1, 1], [0, 9]]],
                         [[[0, 0], [2, 1], [2, 2]], [[1, 2], [0, 1], [1, 0]]]], np.int64)
SPEC_DIMS = {"update_window_dims": [3, 4], "inserted_window_dims": [1], "input_batching_dims": [0],
             "scatter_indices_batching_dims": [1], "scatter_dims_to_operand_dims": [2, 1],
             "index_vector_dim": 3}
SPEC_RESULT = [[[[3, 4], [6, 7], [6, 7], [7, 8]], [[9, 10], [11, 12], [15, 16], [17, 18]],
                [[17, 18], [19, 20], [22, 23], [24, 25]]],
               [[[25, 26], [28, 29], [30, 31], [31, 32]], [[35, 36], [38, 39], [38, 39], [39, 40]],
                [[41, 42], [44, 45], [46, 47], [47, 48]]]]


def spec_run():
    # the spec lists %update with shape [2, 2, 3, 2] for a tensor<2x2x3x2x2xi64> (a typo in
    # the spec text); all-ones of the declared type, as the conformance test uses
    text = program((2, 3, 4, 2), ["i64"], (2, 2, 3, 2), "i64", (2, 2, 3, 2, 2), SPEC_DIMS)
    return run(text, [SPEC_INPUT, SPEC_INDICES, np.ones((2, 2, 3, 2, 2), np.int64)])


def test_spec_example():
    ev = spec_run()
    assert ev.outputs[0].tolist() == SPEC_RESULT
    want = reference([SPEC_INPUT], SPEC_INDICES, [np.ones((2, 2, 3, 2, 2), np.int64)], SPEC_DIMS,
                     lambda a, b: [a[0] + b[0]])
    same(ev.outputs[0], want[0])


def _walk(step):
    yield step
    for c in step.children:
        yield from _walk(c)


# formulas that describe rather than compute: no symbols take values in them
_DESCRIPTIVE = {"scatter.update_index.formula", "scatter.result.formula", "explain.element"}


def test_spec_example_explain():
    ev = spec_run()
    # result[1, 1, 1, 0] = 35 + 3: three updates land there
    e = explain(ev, 0, (1, 1, 1, 0))
    assert e.value == 38
    init, landing, last = e.steps
    assert init.name.key == "scatter.init.name" and init.value == 35
    assert text(init.substituted) == "%x0[1, 1, 1, 0]"
    assert landing.value == [(0, 1, 0, 1, 0), (0, 1, 1, 0, 0), (1, 1, 1, 1, 0)]
    assert text(landing.substituted).endswith("if result_index(update_index) = (1, 1, 1, 0)]")
    assert last.name == "results[0][result_index]" and last.value == 38
    ups = landing.children
    assert [c.name for c in ups] == ["update_index"] * 3 and [c.value for c in ups] == landing.value
    assert [c.formula.args for c in ups] == [{"n": 1, "count": 3}, {"n": 2, "count": 3}, {"n": 3, "count": 3}]
    where, update, running = ups[0].children
    assert where.name == "result_index" and where.value == (1, 1, 1, 0)
    assert text(where.substituted) == "(0, 1, 0, 0) + (1, 0, 0, 0) + (0, 0, 1, 0)"
    first = {s.name: s for s in where.children}
    assert list(first) == ["update_scatter_index", "update_window_index", "start_index", "full_start_index",
                           "full_batching_index", "full_window_index"]
    assert first["update_scatter_index"].value == (0, 1, 0)
    assert text(first["update_scatter_index"].substituted) == "(0, 1, 0, 1, 0)[0, 1, 2]"
    assert first["update_window_index"].value == (1, 0)
    assert text(first["update_window_index"].substituted) == "(0, 1, 0, 1, 0)[3, 4]"
    assert first["start_index"].value == (0, 1)
    assert text(first["start_index"].substituted) == "%idx[0, 1, 0, :]"
    assert [(c.name, text(c.formula), c.value) for c in first["start_index"].children] == [
        ("start_index[0]", "%idx[0, 1, 0, 0]", 0), ("start_index[1]", "%idx[0, 1, 0, 1]", 1)]
    # scatter_dims_to_operand_dims = [2, 1]: input dim 1 takes start_index[1], dim 2 start_index[0]
    assert first["full_start_index"].value == (0, 1, 0, 0)
    assert text(first["full_start_index"].substituted) == "(0, (0, 1)[1], (0, 1)[0], 0)"
    assert first["full_start_index"].formula.args == {"scatter_dims_to_operand_dims": [2, 1]}
    # input_batching_dims = [0] from scatter_indices_batching_dims = [1] (< index_vector_dim 3)
    assert first["full_batching_index"].value == (1, 0, 0, 0)
    assert text(first["full_batching_index"].substituted) == "((0, 1, 0)[1], 0, 0, 0)"
    assert first["full_window_index"].value == (0, 0, 1, 0)
    assert text(first["full_window_index"].substituted) == "(0, 0, (1, 0)[0], (1, 0)[1])"
    assert update.name == "updates[0][update_index]" and update.value == 1
    assert text(update.substituted) == "%u0[0, 1, 0, 1, 0]"
    assert [c.children[-1].value for c in ups] == [36, 37, 38]
    assert [text(c.children[-1].substituted) for c in ups] == ["add(35, 1)", "add(36, 1)", "add(37, 1)"]
    assert running.formula.key == "scatter.running.formula"
    assert [n.key for n in e.notes] == ["scatter.note.recognized", "scatter.note.dropped"]
    dropped = e.notes[1].args  # [0, 9] is out of bounds
    assert dropped == {"count": 4, "shape": [2, 3, 4, 2], "update_index": (0, 1, 2, 0, 0),
                       "result_index": (1, 9, 0, 0)}
    assert_substituted_everywhere(e, _DESCRIPTIVE)
    assert "full_start_index" in format_explanation(e)


def test_explain_update_list_is_the_update_indices_not_a_count():
    # the wording fix: the step listing the updates holds their update_index values; the
    # count is an argument of its (message) name, never the value of a spec-named step
    e = explain(spec_run(), 0, (1, 1, 1, 0))
    landing = e.steps[1]
    assert isinstance(landing.name, Msg) and landing.name.key == "scatter.landing.name"
    assert landing.name.args == {"count": 3} and len(landing.value) == 3
    for top in e.steps:
        for s in _walk(top):
            assert s.name != "updates", "a step named for the updates operand must not hold a count"
            if s.name == "update_index":
                assert isinstance(s.value, tuple) and len(s.value) == 5
    # no update lands on result[0, 1, 0, 0]: an empty list, no children
    e0 = explain(spec_run(), 0, (0, 1, 0, 0))
    assert e0.steps[1].value == [] and e0.steps[1].children == [] and e0.value == SPEC_INPUT[0, 1, 0, 0] == 9
    assert e0.steps[1].name.args == {"count": 0}


def test_explain_window_dims_are_dim_roles():
    e = explain(spec_run(), 0, (1, 1, 1, 0))
    where = e.steps[1].children[0].children[0]
    fw = next(s for s in where.children if s.name == "full_window_index")
    # inserted_window_dims = [1], input_batching_dims = [0], update_window_dims = [3, 4]
    assert fw.dim_roles == {0: DimRole("input_batching"), 1: DimRole("inserted_window"),
                            2: DimRole("update_window", k=0), 3: DimRole("update_window", k=1)}
    assert all(isinstance(r, DimRole) for r in fw.dim_roles.values())


def test_explain_scalar_index_vector_and_long_update_lists():
    # index_vector_dim = rank(scatter_indices): start_index = [scatter_indices[update_scatter_index]]
    n = EXPLAIN_MAX_UPDATES + 3
    dims = {"inserted_window_dims": [0], "scatter_dims_to_operand_dims": [0], "index_vector_dim": 1}
    text_ = program((3,), ["i32"], (n,), "i32", (n,), dims)
    ev = run(text_, [np.zeros(3, np.int32), np.ones(n, np.int32), np.arange(n, dtype=np.int32)])
    e = explain(ev, 0, (1,))
    assert e.value == ev.outputs[0][1] == n * (n - 1) // 2
    landing = e.steps[1]
    assert landing.name.key == "scatter.landing.name_first"
    assert landing.name.args == {"shown": EXPLAIN_MAX_UPDATES, "count": n}
    assert landing.value == [(i,) for i in range(EXPLAIN_MAX_UPDATES)]
    start = next(s for s in landing.children[4].children[0].children if s.name == "start_index")
    assert start.formula.key == "scatter.start_index.formula_scalar" and start.value == (1,)
    assert text(start.substituted) == "[%idx[4]]"
    assert [c.children[-1].value for c in landing.children[:4]] == [0, 1, 3, 6]
    assert any(m.key == "scatter.note.more" and m.args == {"count": 3} for m in e.notes)
    assert_substituted_everywhere(e, _DESCRIPTIVE)


def test_explain_general_variadic_body_shows_every_argument():
    x0, x1 = np.arange(4, dtype=np.float32), np.arange(4, dtype=np.int32)
    idx = np.array([[1], [3], [1], [9]], np.int32)
    u0, u1 = np.array([2, 3, 4, 5], np.float32), np.array([10, 20, 30, 40], np.int32)
    ev = run(program((4,), ["f32", "i32"], (4, 1), "i32", (4,), ONE_D, ["affine", "add"]),
             [x0, x1, idx, u0, u1])
    e = explain(ev, 0, (1,))
    runs = [c.children[-1] for c in e.steps[1].children]
    assert [r.value for r in runs] == [3.0, 13.0] == [1 * 2 + 1, 3 * 4 + 1]
    assert runs[0].formula.key == "scatter.running.formula_all"
    assert text(runs[0].substituted) == "update_computation(1.0, 1, 2.0, 10)"
    assert text(runs[1].substituted) == "update_computation(3.0, 11, 4.0, 30)"


def test_animation_captions_are_messages():
    ev = spec_run()
    steps = ev.provenance().animation_steps(ev.call, ev.inputs, ev.outputs, [(0, (1, 1, 1, 0))])
    assert [s.caption.key for s in steps] == ["scatter.anim.update"] * 3
    first = steps[0].caption.args
    assert (first["update_index"], first["value"], first["result_index"]) == ("0, 1, 0, 1, 0", 1,
                                                                              "1, 1, 1, 0")
    assert (first["before"], first["after"], first["body"]) == (35, 36, "add")
    assert text(steps[-1].caption) == "update 3/3: %u0[1, 1, 1, 1, 0] = 1 -> %r[1, 1, 1, 0] = add(37, 1) = 38"


def test_conformance_corpus_modules_pass():
    path = shared_dir("conformance", "interpret") / "scatter.mlir"
    out = subprocess.run([sys.executable, "-m", "hlolab", "run", "--split-input-file", str(path)],
                         capture_output=True, text=True, cwd=REPO, timeout=120)
    lines = [x for x in out.stdout.splitlines() if x.startswith("scatter.mlir#")]
    assert len(lines) == 2 and all(x.endswith("PASS") for x in lines), out.stdout + out.stderr


def test_xla_window_dims_to_operand_dims_example():
    # XLA docs: update_window_dims.size 4, operand rank 6, inserted_window_dims {0, 2}
    # -> window_dims_to_operand_dims is {0->1, 1->3, 2->4, 3->5}
    d = {"update_window_dims": (1, 2, 3, 4), "inserted_window_dims": (0, 2), "input_batching_dims": (),
         "scatter_indices_batching_dims": (), "scatter_dims_to_operand_dims": (0,),
         "index_vector_dim": 1}
    from hlolab.ops.scatter import ScatterAttrs
    p = scatter_index_pieces(tuple(np.asarray(i) for i in (0, 5, 6, 7, 8)), np.array([[0]]),
                             (9,) * 6, ScatterAttrs(**d))
    assert [int(x) for x in p.full_window_index] == [0, 5, 0, 6, 7, 8]


# --- out of bounds ---------------------------------------------------------------------

def test_oob_drops_elements_not_whole_windows():
    # window of 3 starting at 3 in a 5-vector: elements 3, 4 land, element 5 is dropped
    x = np.zeros(5, np.int32)
    dims = {"update_window_dims": [1], "scatter_dims_to_operand_dims": [0], "index_vector_dim": 1}
    text = program((5,), ["i32"], (2, 1), "i32", (2, 3), dims)
    ev = run(text, [x, np.array([[3], [-1]], np.int32), np.array([[1, 2, 3], [10, 20, 30]], np.int32)])
    # second window starts at -1: element -1 dropped, 0 and 1 land
    assert ev.outputs[0].tolist() == [20, 30, 0, 1, 2]
    prov = ev.provenance()
    assert prov.targets(2, (0, 2)) == [] and prov.targets(2, (1, 0)) == []
    assert [t.index for t in prov.targets(2, (0, 1))] == [(4,)]


def test_oob_huge_and_unsigned_indices():
    x = np.zeros(3, np.int32)
    text = program((3,), ["i32"], (3, 1), "ui64", (3,), ONE_D)
    idx = np.array([[2**64 - 1], [2**63], [1]], np.uint64)
    ev = run(text, [x, idx, np.array([5, 6, 7], np.int32)])
    assert ev.outputs[0].tolist() == [0, 7, 0]
    text = program((3,), ["i32"], (2, 1), "i64", (2,), ONE_D)
    ev = run(text, [x, np.array([[2**63 - 1], [-2**63]], np.int64), np.array([5, 6], np.int32)])
    assert ev.outputs[0].tolist() == [0, 0, 0]


def test_index_vector_dim_equal_to_rank():
    dims = {"inserted_window_dims": [0], "scatter_dims_to_operand_dims": [0], "index_vector_dim": 1}
    text = program((4,), ["i32"], (3,), "i32", (3,), dims)
    ev = run(text, [np.zeros(4, np.int32), np.array([3, 0, 3], np.int32), np.array([1, 2, 4], np.int32)])
    assert ev.outputs[0].tolist() == [2, 0, 0, 5]


# --- bodies ----------------------------------------------------------------------------

@pytest.mark.parametrize("kind,e,x,u,want", [
    ("add", "i32", [1, 2, 3], [10, 20, 30, 40], [81, 22, 3]),
    ("multiply", "i32", [1, 2, 3], [10, 20, 30, 40], [12000, 40, 3]),
    ("maximum", "i32", [1, 2, 3], [10, 20, 30, 40], [40, 20, 3]),
    ("minimum", "i32", [15, 2, 3], [10, 20, 30, 40], [10, 2, 3]),
    ("and", "i32", [7, 2, 3], [3, 6, 1, 5], [1, 2, 3]),
    ("or", "i32", [8, 2, 3], [1, 6, 2, 5], [15, 6, 3]),
    ("xor", "i32", [8, 2, 3], [1, 6, 2, 5], [14, 4, 3]),
    ("replace", "i32", [8, 2, 3], [1, 6, 2, 5], [5, 6, 3]),
    ("keep", "i32", [8, 2, 3], [1, 6, 2, 5], [8, 2, 3]),
    ("affine", "i32", [1, 2, 3], [2, 3, 4, 5], [66, 7, 3]),  # ((1*2+1)*4+1)*5+1
    ("swapped_add", "i32", [1, 2, 3], [10, 20, 30, 40], [81, 22, 3]),
    ("add", "i4", [7, 2, 3], [1, 1, 1, 1], [-6, 3, 3]),  # wraps: 7 + 3 = -6 in i4
    ("multiply", "ui4", [3, 2, 3], [5, 1, 1, 1], [15, 2, 3]),
    ("add", "i1", [False, True, False], [True, False, False, False], [True, True, False]),
    ("multiply", "i1", [True, True, False], [True, False, False, True], [False, False, False]),
])
def test_bodies(kind, e, x, u, want):
    et = element_type(e)
    ev = scatter_1d(np.array(x, et.dtype), [0, 1, 0, 0], np.array(u, et.dtype), kind, e)
    same(ev.outputs[0], np.array(want, et.dtype))
    expected = {"affine": None, "swapped_add": "add"}.get(kind, kind)
    assert recognize_binary(ev.op.regions[0]) == expected


def test_replace_last_in_row_major_order_wins():
    x = np.zeros((2, 2), np.float32)
    dims = {"inserted_window_dims": [0, 1], "scatter_dims_to_operand_dims": [0, 1], "index_vector_dim": 2}
    prog = program((2, 2), ["f32"], (2, 3, 2), "i32", (2, 3), dims, "replace")
    idx = np.array([[[0, 0], [1, 1], [0, 0]], [[1, 1], [0, 0], [1, 0]]], np.int32)
    u = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    ev = run(prog, [x, idx, u])
    assert ev.outputs[0].tolist() == [[5, 0], [6, 4]]
    e = explain(ev, 0, (0, 0))
    runs = [c.children[-1] for c in e.steps[1].children]
    assert [r.value for r in runs] == [1, 3, 5]
    assert [text(r.substituted) for r in runs] == ["replace(0.0, 1.0)", "replace(1.0, 3.0)",
                                                   "replace(3.0, 5.0)"]
    assert e.steps[1].value == [(0, 0), (0, 2), (1, 1)]


def test_float_maximum_nan_and_signed_zero():
    nan = np.float32(np.nan)
    x = np.array([-0.0, 0.0, 1.0, nan], np.float32)
    u = np.array([0.0, -0.0, nan, 5.0, 7.0, -0.0], np.float32)
    ev = scatter_1d(x, [0, 1, 2, 2, 3, 0], u, "maximum", "f32")
    out = ev.outputs[0]
    assert out[0] == 0 and not np.signbit(out[0])  # +0 beats -0
    assert out[1] == 0 and not np.signbit(out[1])
    assert np.isnan(out[2]) and np.isnan(out[3])
    ev = scatter_1d(x, [0, 1, 2, 2, 3, 1], u, "minimum", "f32")
    out = ev.outputs[0]
    assert np.signbit(out[0]) and np.signbit(out[1]) and np.isnan(out[2])


def test_combine_at_matches_sequential_elementwise_semantics():
    rng = np.random.default_rng(0)
    for dt in (np.float32, ml_dtypes.bfloat16, np.float16):
        vals = rng.choice(np.array([np.nan, -0.0, 0.0, 1.5, -2.0, 3.0], np.float32), 200).astype(dt)
        t = rng.integers(0, 10, 200)
        for name, f in (("maximum", _seq_max), ("minimum", _seq_min)):
            acc = rng.choice(np.array([np.nan, -0.0, 0.0, 1.0], np.float32), 10).astype(dt)
            want = acc.copy()
            for ti, v in zip(t, vals, strict=True):
                want[ti] = f(want[ti], v)
            got = acc.copy()
            assert combine_at(name, got, t, vals, element_type({np.float32: "f32", np.float16: "f16"}
                                                             .get(dt, "bf16")))
            same(got, want)


def _seq_max(a, b):
    fa, fb = np.float32(a), np.float32(b)
    if np.isnan(fa):
        return a
    if np.isnan(fb):
        return b
    if fa == fb:
        return b if (np.signbit(fa) and not np.signbit(fb)) else a
    return a if fa > fb else b


def _seq_min(a, b):
    fa, fb = np.float32(a), np.float32(b)
    if np.isnan(fa):
        return a
    if np.isnan(fb):
        return b
    if fa == fb:
        return b if (np.signbit(fb) and not np.signbit(fa)) else a
    return a if fa < fb else b


def test_bf16_add_rounds_after_every_update():
    x = np.array([1.0], ml_dtypes.bfloat16)
    u = np.full(4, 2.0**-8, ml_dtypes.bfloat16)  # each add rounds back to 1.0 (ties to even)
    ev = scatter_1d(x, [0, 0, 0, 0], u, "add", "bf16")
    assert float(ev.outputs[0][0]) == 1.0
    ev = scatter_1d(x, [0, 0, 0, 0], u, "affine", "bf16")  # via the region: same per-step rounding
    want = np.array([1.0], ml_dtypes.bfloat16)
    for v in u:
        want = (want * v + np.array(1, ml_dtypes.bfloat16)).astype(ml_dtypes.bfloat16)
    same(ev.outputs[0], want)


def test_complex_maximum_runs_the_region():
    x = np.array([1 + 1j, 0], np.complex64)
    u = np.array([1 + 2j, 3 - 1j, 1 + 0j], np.complex64)
    ev = scatter_1d(x, [0, 1, 0], u, "maximum", "complex<f32>")
    assert ev.outputs[0].tolist() == [1 + 2j, 3 - 1j]


def test_variadic_scatter_mixed_bodies_and_general_body():
    x0, x1 = np.arange(4, dtype=np.float32), np.arange(4, dtype=np.int32)
    idx = np.array([[1], [3], [1], [9]], np.int32)
    u0, u1 = np.array([2, 3, 4, 5], np.float32), np.array([10, 20, 30, 40], np.int32)
    text = program((4,), ["f32", "i32"], (4, 1), "i32", (4,), ONE_D, ["maximum", "add"])
    ev = run(text, [x0, x1, idx, u0, u1])
    assert ev.outputs[0].tolist() == [0, 4, 2, 3] and ev.outputs[1].tolist() == [0, 41, 2, 23]
    prov = ev.provenance()  # recognized per output: result 1 reads only inputs[1] / updates[1]
    assert {(s.operand, s.role) for s in prov.sources(1, (1,))} == {(1, "init"), (2, "index_read"),
                                                                    (4, "update")}
    text = program((4,), ["f32", "i32"], (4, 1), "i32", (4,), ONE_D, ["affine", "add"])
    ev = run(text, [x0, x1, idx, u0, u1])
    assert ev.outputs[0].tolist() == [0, 13, 2, 10] and ev.outputs[1].tolist() == [0, 41, 2, 23]
    prov = ev.provenance()  # general body: the body's dataflow decides; result 1 reads its pair
    assert {(s.operand, s.role) for s in prov.sources(1, (1,))} == {
        (1, "init"), (2, "index_read"), (4, "update")}
    assert {(s.operand, s.role) for s in prov.sources(0, (1,))} == {
        (0, "init"), (2, "index_read"), (3, "update")}
    assert {(s.operand, s.role) for s in prov.sources(0, (0,))} == {(0, "init")}


MIXING_SCATTER = """
func.func @main(%x0: tensor<4xf32>, %x1: tensor<4xf32>, %i: tensor<3x1xi32>, %u0: tensor<3xf32>,
                %u1: tensor<3xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = "stablehlo.scatter"(%x0, %x1, %i, %u0, %u1) <{scatter_dimension_numbers = #stablehlo.scatter<
      inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%a0: tensor<f32>, %a1: tensor<f32>, %b0: tensor<f32>, %b1: tensor<f32>):
    %s = stablehlo.add %a1, %b0 : tensor<f32>
    stablehlo.return %b0, %s : tensor<f32>, tensor<f32>
  }) : (tensor<4xf32>, tensor<4xf32>, tensor<3x1xi32>, tensor<3xf32>, tensor<3xf32>)
      -> (tensor<4xf32>, tensor<4xf32>)
  func.return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}"""


def test_scatter_provenance_follows_the_body_dataflow():
    """Result 0 = the update (``set``): the input and every overwritten update drop out.
    Result 1 = x1 + u0: it never reads x0 or u1, and every update lands in the sum."""
    x0, x1 = np.arange(4, dtype=np.float32), np.arange(10, 14, dtype=np.float32)
    idx = np.array([[2], [2], [0]], np.int32)
    u0, u1 = np.array([5, 6, 7], np.float32), np.array([50, 60, 70], np.float32)
    ev = run(MIXING_SCATTER, [x0, x1, idx, u0, u1])
    assert ev.outputs[0].tolist() == [7, 1, 6, 3] and ev.outputs[1].tolist() == [17, 11, 23, 13]
    prov = ev.provenance()
    srcs = lambda r, i: {(s.operand, s.index, s.role) for s in prov.sources(r, (i,))}  # noqa: E731
    assert srcs(0, 2) == {(2, (1, 0), "index_read"), (3, (1,), "update")}  # the second update wins
    assert srcs(1, 2) == {(1, (2,), "init"), (2, (0, 0), "index_read"), (2, (1, 0), "index_read"),
                          (3, (0,), "update"), (3, (1,), "update")}
    assert srcs(0, 1) == {(0, (1,), "init")}  # no update lands: the input is kept
    assert {(t.result, t.index, t.role) for t in prov.targets(3, (0,))} == {(1, (2,), "update")}
    assert {(t.result, t.index, t.role) for t in prov.targets(1, (2,))} == {(1, (2,), "init")}
    assert prov.targets(0, (2,)) == [] and prov.targets(4, (1,)) == []
    back = prov.back(0, np.array([False, False, True, True]))
    assert set(back) == {(0, "init"), (2, "index_read"), (3, "update")}
    assert back[(0, "init")].tolist() == [False, False, False, True]
    assert back[(3, "update")].tolist() == [False, True, False]
    fwd = prov.fwd(3, np.ones(3, bool))
    assert fwd[(0, "update")].tolist() == [True, False, True, False]
    assert fwd[(1, "update")].tolist() == [True, False, True, False]


def test_promotable_region_type_widens():
    text = program((3,), ["i8"], (2, 1), "i32", (2,), ONE_D, "add", region_es=["i32"])
    ev = run(text, [np.array([100, 0, 0], np.int8), np.array([[0], [0]], np.int32),
                    np.array([100, 100], np.int8)])
    same(ev.outputs[0], np.array([300, 0, 0], np.int32))


def test_quantized_scatter_runs_the_body_by_the_quantized_rule():
    q = "!quant.uniform<i8:f32, 0.5:-3>"
    text = program((3,), [q], (1, 1), "i32", (1,), ONE_D, "add")
    # real 0 + real (5 + 3) * 0.5 = 4 -> storage 5 (the storage add would give 2)
    ev = run(text, [np.full(3, -3, np.int8), np.zeros((1, 1), np.int32), np.array([5], np.int8)])
    same(ev.outputs[0], np.array([5, -3, -3], np.int8))


def test_wave_numbers():
    assert wave_numbers(np.array([3, 1, 3, 3, 1, 2])).tolist() == [0, 0, 1, 2, 1, 0]


def test_recognize_binary_rejects_other_bodies():
    text = program((3,), ["i32", "i32"], (1, 1), "i32", (1,), ONE_D, ["add", "maximum"])
    region = parse_module(text).funcs[0].body.blocks[0].ops[0].regions[0]
    assert recognize_binary_each(region) == ["add", "maximum"] and recognize_binary(region) is None
    text = program((3,), ["i32"], (1, 1), "i32", (1,), ONE_D, "affine")
    region = parse_module(text).funcs[0].body.blocks[0].ops[0].regions[0]
    assert recognize_binary_each(region) is None


# --- constraints -----------------------------------------------------------------------

GOOD = dict(in_shape=(3, 4), es=["i32"], si_shape=(2, 1), si_e="i32", up_shape=(2, 4),
            dims={"update_window_dims": [1], "inserted_window_dims": [0],
                  "scatter_dims_to_operand_dims": [0], "index_vector_dim": 1})


def verify_text(text: str):
    from hlolab.ops.registry import OpCall
    op = next(o for o in parse_module(text).walk() if o.name == "stablehlo.scatter")
    lookup("stablehlo.scatter").verify(OpCall(op))


def fails(constraint: str, text: str) -> str:
    with pytest.raises(VerificationError) as info:
        verify_text(text)
    assert info.value.constraint == constraint, info.value.message
    return info.value.message


def good(**changes) -> str:
    kw = {**GOOD, **changes}
    kw["dims"] = {k: v for k, v in {**GOOD["dims"], **changes.get("dims", {})}.items() if v is not None}
    return program(**kw)


def test_good_program_verifies():
    verify_text(good())


@pytest.mark.parametrize("constraint,changes", [
    ("C2", {"dims": {"inserted_window_dims": []}, "up_shape": (2, 4)}),
    ("C4", {"up_shape": (3, 4)}),
    ("C4", {"up_shape": (2, 5)}),
    ("C4", {"up_shape": (2, 4, 1)}),
    ("C7", {"in_shape": (3, 4, 5), "up_shape": (2, 4, 5), "dims": {"update_window_dims": [2, 1]}}),
    ("C8", {"dims": {"update_window_dims": [2]}}),
    ("C9", {"in_shape": (2, 3, 4), "si_shape": (2, 1), "up_shape": (2, 4),
            "dims": {"inserted_window_dims": [0], "input_batching_dims": [0],
                     "scatter_indices_batching_dims": [0]}}),
    ("C10", {"in_shape": (3, 4, 1), "dims": {"inserted_window_dims": [2, 0]}}),
    ("C11", {"dims": {"inserted_window_dims": [5]}}),
    ("C12", {"in_shape": (2, 2, 3, 4), "si_shape": (2, 2, 1), "up_shape": (2, 2, 4),
             "dims": {"update_window_dims": [2], "input_batching_dims": [1, 0],
                      "scatter_indices_batching_dims": [0, 1], "index_vector_dim": 2,
                      "inserted_window_dims": [2], "scatter_dims_to_operand_dims": [2]}}),
    ("C13", {"in_shape": (3, 4, 2), "si_shape": (2, 1), "dims": {"input_batching_dims": [7],
                                                                 "scatter_indices_batching_dims": [0]}}),
    ("C14", {"in_shape": (2, 2, 3, 4), "si_shape": (2, 1), "up_shape": (2, 4),
             "dims": {"input_batching_dims": [0, 1], "scatter_indices_batching_dims": [0, 0],
                      "inserted_window_dims": [2], "scatter_dims_to_operand_dims": [2]}}),
    ("C15", {"in_shape": (2, 3, 4), "dims": {"input_batching_dims": [0],
                                             "scatter_indices_batching_dims": [4],
                                             "inserted_window_dims": [1],
                                             "scatter_dims_to_operand_dims": [1]}}),
    ("C16", {"in_shape": (2, 3, 4), "dims": {"input_batching_dims": [0],
                                             "scatter_indices_batching_dims": [1],
                                             "inserted_window_dims": [1],
                                             "scatter_dims_to_operand_dims": [1]}}),
    ("C17", {"in_shape": (2, 3, 4), "dims": {"input_batching_dims": [0],
                                             "inserted_window_dims": [1],
                                             "scatter_dims_to_operand_dims": [1]}}),
    ("C18", {"in_shape": (5, 3, 4), "dims": {"input_batching_dims": [0],
                                             "scatter_indices_batching_dims": [0],
                                             "inserted_window_dims": [1],
                                             "scatter_dims_to_operand_dims": [1]}}),
    ("C19", {"dims": {"scatter_dims_to_operand_dims": [0, 1]}}),
    ("C20", {"in_shape": (2, 3, 4), "dims": {"input_batching_dims": [0],
                                             "scatter_indices_batching_dims": [0],
                                             "inserted_window_dims": [1],
                                             "scatter_dims_to_operand_dims": [0]}}),
    ("C21", {"dims": {"scatter_dims_to_operand_dims": [2]}}),
    ("C22", {"dims": {"index_vector_dim": 3}}),
    ("C23", {"region_es": ["i16"]}),
    ("C23", {"region_es": ["f32"]}),
    ("C25", {"region_es": ["i64"], "result_es": ["i32"]}),
])
def test_constraints(constraint, changes):
    region_es = changes.pop("region_es", None)
    result_es = changes.pop("result_es", None)
    kw = {**GOOD, **changes}
    kw["dims"] = {**GOOD["dims"], **changes.get("dims", {})}
    text = program(**kw, region_es=region_es, result_es=result_es)
    msg = fails(constraint, text)
    assert msg.startswith(f"scatter ({constraint}): ")


def test_constraints_on_operand_lists():
    text = good()
    # C1: inputs of different shapes; C3: updates of different shapes; C6: element types
    two = program((3, 4), ["i32", "i32"], (2, 1), "i32", (2, 4), GOOD["dims"])
    fails("C1", two.replace("%x1: tensor<3x4xi32>", "%x1: tensor<3x5xi32>").replace(
        "(tensor<3x4xi32>, tensor<3x4xi32>, tensor<2x1xi32>", "(tensor<3x4xi32>, tensor<3x5xi32>, "
        "tensor<2x1xi32>"))
    fails("C3", two.replace("%u1: tensor<2x4xi32>", "%u1: tensor<2x3xi32>").replace(
        "tensor<2x4xi32>, tensor<2x4xi32>)", "tensor<2x4xi32>, tensor<2x3xi32>)"))
    fails("C6", text.replace("%u0: tensor<2x4xi32>", "%u0: tensor<2x4xi16>").replace(
        "tensor<2x1xi32>, tensor<2x4xi32>)", "tensor<2x1xi32>, tensor<2x4xi16>)"))
    fails("C24", text.replace("-> (tensor<3x4xi32>)", "-> (tensor<3x5xi32>)").replace(
        "return %r : tensor<3x4xi32>", "return %r : tensor<3x5xi32>"))


# --- hypothesis: random valid dimension numbers vs the spec loop ----------------------

@st.composite
def scatter_cases(draw, ivd_last: bool = False, in_bounds: bool = False):
    rank = draw(st.integers(1, 3))
    nb = draw(st.integers(0, min(1, rank - 1)))  # batching dims
    in_shape = tuple(draw(st.lists(st.integers(1, 3), min_size=rank + nb, max_size=rank + nb)))
    dims_all = list(range(rank + nb))
    ibd = sorted(draw(st.permutations(dims_all))[:nb])
    rest = [x for x in dims_all if x not in ibd]
    iwd = sorted(x for x in rest if draw(st.booleans()))
    window = [x for x in rest if x not in iwd]
    n_idx = draw(st.integers(1, len(rest)))
    sdtod = draw(st.permutations(rest))[:n_idx]
    # scatter batch dims: extra ones plus the batching ones, in a random order
    extra = draw(st.lists(st.integers(1, 3), min_size=0, max_size=2))
    batch = [("x", s) for s in extra] + [("b", i) for i in range(nb)]
    batch = draw(st.permutations(batch))
    no_vector = n_idx == 1 and not ivd_last and draw(st.booleans())
    ivd = len(batch) if (no_vector or ivd_last) else draw(st.integers(0, len(batch)))
    si_shape = [in_shape[ibd[v]] if k == "b" else v for k, v in batch]
    sibd = [0] * nb
    for pos, (k, v) in enumerate(batch):
        if k == "b":
            sibd[v] = pos if pos < ivd else pos + 1
    if not no_vector:
        si_shape.insert(ivd, n_idx)
    up_scatter = [in_shape[ibd[v]] if k == "b" else v for k, v in batch]
    win_sizes = [draw(st.integers(1, in_shape[x])) for x in window]
    up_rank = len(up_scatter) + len(window)
    uwd = sorted(draw(st.permutations(range(up_rank)))[:len(window)])
    up_shape, it_s, it_w = [], iter(up_scatter), iter(win_sizes)
    for k in range(up_rank):
        up_shape.append(next(it_w) if k in uwd else next(it_s))
    if in_bounds:
        # every start lets its whole window fit (so element and window drops agree)
        comps = []
        for d_in in sdtod:
            w = win_sizes[window.index(d_in)] if d_in in window else 1
            comps.append(draw(st.lists(st.integers(0, in_shape[d_in] - w),
                                       min_size=int(np.prod(up_scatter, dtype=int)),
                                       max_size=int(np.prod(up_scatter, dtype=int)))))
        vec = np.array(comps, dtype=np.int32).T.reshape(tuple(up_scatter) + (n_idx,))
        si = np.moveaxis(vec, -1, ivd) if not no_vector else vec[..., 0]
    else:
        lo, hi = -1, max(in_shape) + 1
        si = np.array(draw(st.lists(st.integers(lo, hi), min_size=int(np.prod(si_shape, dtype=int)),
                                    max_size=int(np.prod(si_shape, dtype=int)))),
                      np.int32).reshape(si_shape)
    dims = {"update_window_dims": uwd, "inserted_window_dims": iwd, "input_batching_dims": ibd,
            "scatter_indices_batching_dims": sibd, "scatter_dims_to_operand_dims": sdtod,
            "index_vector_dim": ivd}
    seed = draw(st.integers(0, 2**16))
    return tuple(in_shape), si, tuple(up_shape), dims, seed


@given(scatter_cases(), st.sampled_from(["add", "replace", "affine", "maximum"]))
def test_random_dimension_numbers_match_the_spec_loop(case, kind):
    in_shape, si, up_shape, dims, seed = case
    rng = np.random.default_rng(seed)
    x = rng.integers(-50, 50, in_shape).astype(np.int32)
    u = rng.integers(-50, 50, up_shape).astype(np.int32)
    text = program(in_shape, ["i32"], si.shape, "i32", up_shape, dims, kind)
    ev = run(text, [x, si, u])
    f = {"add": lambda a, b: [a[0] + b[0]], "replace": lambda a, b: [b[0]],
         "affine": lambda a, b: [a[0] * b[0] + 1], "maximum": lambda a, b: [max(a[0], b[0])]}[kind]
    with np.errstate(over="ignore"):
        want = reference([x], si, [u], dims, f)
    same(ev.outputs[0], want[0])
    check_provenance(ev, kind)


def check_provenance(ev, kind):
    prov = ev.provenance()
    x, u, out = ev.inputs[0], ev.inputs[2], ev.outputs[0]
    n_upd = 0
    for idx in np.ndindex(*out.shape):
        src = prov.sources(0, idx)
        ups = [s.index for s in src if s.role == "update"]
        n_upd += len(ups)
        if kind == "replace" and ups:  # the last update overwrites the input and earlier ones
            assert len(ups) == 1 and all(s.role != "init" for s in src)
        else:
            assert src[0].operand == 0 and src[0].index == idx and src[0].role == "init"
        for s in src:
            if s.role == "update":
                assert (0, idx, "update") in {(t.result, t.index, t.role) for t in prov.targets(2, s.index)}
        # the values agree with the recorded chain
        val = x[idx]
        with np.errstate(over="ignore"):
            for ui in ups:
                v = u[ui]
                val = {"add": val + v, "replace": v, "affine": val * v + 1, "maximum": max(val, v)}[kind]
        assert np.int32(val) == out[idx]
        # index_read sources hold the start indices of these updates
        reads = {s.index for s in src if s.role == "index_read"}
        assert bool(ups) == bool(reads)
    # targets inverts sources: every landed update element is listed exactly once
    hit = prov.back(0, np.ones(out.shape, bool)).get((2, "update"), np.zeros(u.shape, bool))
    assert int(hit.sum()) == n_upd
    landed = prov.fwd(2, np.ones(u.shape, bool)).get((0, "update"), np.zeros(out.shape, bool))
    for idx in np.ndindex(*out.shape):
        assert landed[idx] == any(s.role == "update" for s in prov.sources(0, idx))
    for ui in np.ndindex(*u.shape):
        ts = prov.targets(2, ui)
        assert len(ts) <= 1 and hit[ui] == bool(ts)
        if ts:
            assert ui in [s.index for s in prov.sources(0, ts[0].index) if s.role == "update"]


def test_provenance_back_fwd_index_read():
    ev = spec_run()
    prov = ev.provenance()
    m = np.zeros((2, 3, 4, 2), bool)
    m[1, 1, 1, 0] = True
    back = prov.back(0, m)
    assert int(back[(2, "update")].sum()) == 3
    reads = back[(1, "index_read")]
    # each index vector read is the pair along index_vector_dim = 3
    assert reads.sum() % 2 == 0 and (reads[..., 0] == reads[..., 1]).all()
    # fwd of those index vectors reaches the element
    fwd = prov.fwd(1, reads)
    assert fwd[(0, "index_read")][1, 1, 1, 0]
    assert prov.targets(1, (0, 1, 2, 0)) == []  # [0, 9] lands nowhere


# --- record and result type inference ----------------------------------------------------

def test_record_reads_the_dimension_numbers_and_defaults_the_promises():
    text = program((3, 4), ["f32"], (2, 1), "i32", (2, 4), {
        "update_window_dims": [1], "inserted_window_dims": [0], "scatter_dims_to_operand_dims": [0],
        "index_vector_dim": 1})
    op = parse_module(text).funcs[0].body.blocks[0].ops[0]
    from hlolab.ops.registry import OpCall
    from hlolab.ops.scatter import ScatterAttrs
    rec = OpCall(op).attrs
    assert rec == ScatterAttrs(update_window_dims=(1,), inserted_window_dims=(0,), input_batching_dims=(),
                               scatter_indices_batching_dims=(), scatter_dims_to_operand_dims=(0,),
                               index_vector_dim=1)
    assert rec.indices_are_sorted is False and rec.unique_indices is False
    assert rec.replace(unique_indices=True).to_ir()["unique_indices"].value is True


def test_infer_gives_each_input_shape_and_admits_promoted_elements():
    from hlolab.ops.record import InferError, Partial, type_admits
    from hlolab.ops.scatter import ScatterAttrs, infer_scatter
    from hlolab.types import tensor_type
    rec = ScatterAttrs(update_window_dims=(), inserted_window_dims=(0,), input_batching_dims=(),
                       scatter_indices_batching_dims=(), scatter_dims_to_operand_dims=(0,),
                       index_vector_dim=1)
    x0, x1 = tensor_type((3, None), "i8"), tensor_type((3, None), "f32")
    si, u = tensor_type((2, 1), "i32"), tensor_type((2,), "i8")
    out = infer_scatter(rec, [x0, x1, si, u, u])
    assert [type(t) for t in out] == [Partial, Partial] and [t.shape for t in out] == [(3, None)] * 2
    assert type_admits(out[0], tensor_type((3, 5), "i8")) and type_admits(out[0], tensor_type((3, 5), "i32"))
    assert not type_admits(out[0], tensor_type((3, 5), "f32"))  # not promotable from i8
    assert not type_admits(out[1], tensor_type((3, 5), "f16"))  # narrower than f32
    assert not type_admits(out[0], tensor_type((4, 5), "i8"))
    with pytest.raises(InferError) as info:
        infer_scatter(rec, [x0, si, u, u])
    assert info.value.constraint == "C5"
