"""Control flow (while / if / case), map and batch_norm_* vs XLA:CPU.

* while / case: random jax programs (fori_loop and while_loop with trip counts from data, 0 and
  negative included; nested loops; cond and switch inside and around loops) whose loop-carried
  tuples mix element types and whose bodies use exact element-wise ops, dynamic_update_slice
  (start indices from the loop counter, clamped), concatenate and max reductions; results
  compare bit-exactly. jax prints lax.cond as a 2-branch ``case`` and clamps switch indices: the
  ``if`` variant rewrites the text to ``stablehlo.if`` and drops the clamps (``raw_if_and_case``).
* map: hand-written text, random element-wise bodies over 1-3 inputs of several types.
* batch_norm_inference / training / grad: hand-written text; floats within ulp_table's BATCH_NORM
  bound with sum|terms| from ``bn_terms``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import ml_dtypes
import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests.oracle.differential.harness import Case, lax, run_cases, run_text
from tests.oracle.differential.strategies import ELEMENT_TYPES, kind, make_values, seeds, shapes

CASES_PER_PROGRAM = 3


# ---- while / if / case through jax ---------------------------------------------------------------

CF_TYPES = ["i1", "i8", "i32", "i64", "ui8", "ui32", "f32", "f64", "bf16", "f16", "complex<f32>"]
# per kind: exact ops only (no float multiply: its denormal intermediates would be flushed by
# XLA:CPU inside the loop, where FTZ_RULE's flushed-input rerun cannot follow)
STEPS = {
    "int": ["add", "mul", "xor", "add_i", "max", "select", "dus", "roll", "reduce"],
    "float": ["add", "sub", "double", "add_i", "max", "min", "select", "neg", "dus", "roll", "reduce"],
    "complex": ["add", "sub", "neg", "dus", "roll"],
    "bool": ["xor", "or", "and", "not", "select", "dus", "roll"],
}


def _identity_max(dt: np.dtype) -> np.ndarray:
    if dt.kind in "iu":
        return np.array(np.iinfo(dt).min, dt)
    return np.array(-np.inf, dt)


def _step(name: str, i, v, w):
    """One update of a carried value ``v`` with the loop counter ``i`` and a captured ``w``."""
    dt = np.dtype(v.dtype)
    if name == "add":
        return v + w
    if name == "sub":
        return v - w
    if name == "mul":
        return v * w
    if name == "double":
        return v + v
    if name == "xor":
        return lax.bitwise_xor(v, w)
    if name == "or":
        return lax.bitwise_or(v, w)
    if name == "and":
        return lax.bitwise_and(v, w)
    if name == "not":
        return lax.bitwise_not(v)
    if name == "neg":
        return lax.neg(v)
    if name == "add_i":
        return v + lax.broadcast(lax.convert_element_type(i, dt), v.shape)
    if name == "max":
        return lax.max(v, w)
    if name == "min":
        return lax.min(v, w)
    if name == "select":
        return lax.select(w, v, lax.bitwise_not(v)) if dt == np.bool_ else lax.select(lax.lt(v, w), w, v)
    if name == "dus":  # a one-element corner of w at (i, i - 1, ...): out-of-range starts clamp
        if v.ndim == 0:
            return w
        upd = lax.slice(w, (0,) * w.ndim, tuple(min(d, 1) for d in w.shape))
        return lax.dynamic_update_slice(v, upd, [i - k for k in range(v.ndim)])
    if name == "roll":
        if v.ndim == 0 or v.shape[0] == 0:
            return v
        return lax.concatenate([lax.slice_in_dim(v, 1, v.shape[0]), lax.slice_in_dim(v, 0, 1)], 0)
    if name == "reduce":
        r = lax.reduce(w, _identity_max(dt), lax.max, tuple(range(w.ndim)))
        return v + lax.broadcast(r, v.shape)
    raise AssertionError(name)


def _body(steps: list[list[str]]) -> Callable:
    def body(i, cs, ws):
        out = []
        for v, w, names in zip(cs, ws, steps, strict=True):
            for name in names:
                v = _step(name, i, v, w)
            out.append(v)
        return tuple(out)
    return body


STRUCTURES = ["fori", "while", "nested", "cond_in_loop", "switch_in_loop", "cond", "loop_in_cond", "switch"]


def _max_below(c, thr):
    """max(c) < thr: a data-dependent loop predicate (NaN stops the loop)."""
    m = lax.reduce(c, _identity_max(np.dtype(c.dtype)), lax.max, tuple(range(c.ndim)))
    return lax.lt(m, thr)


@st.composite
def control_case(draw) -> Case:
    nc = draw(st.integers(1, 3))
    ets = [draw(st.sampled_from(CF_TYPES)) for _ in range(nc)]
    shps = [draw(shapes(max_rank=2, max_side=4)) for _ in range(nc)]
    seed = draw(seeds)
    special = draw(st.sampled_from([0.0, 0.2]))
    pairs = list(enumerate(zip(ets, shps, strict=True)))
    cs = [make_values(e, s, seed + 3 * j, special) for j, (e, s) in pairs]
    ws = [make_values(e, s, seed + 3 * j + 1, special) for j, (e, s) in pairs]
    # complex: one step per body (ulp_table.COMPLEX_ADD_CHAIN)
    steps = [draw(st.lists(st.sampled_from(STEPS[kind(e)]), min_size=1, max_size=1 if kind(e) == "complex"
                           else 3)) for e in ets]
    steps2 = [draw(st.lists(st.sampled_from(STEPS[kind(e)]), min_size=1, max_size=1 if kind(e) == "complex"
                            else 2)) for e in ets]
    struct = draw(st.sampled_from(STRUCTURES))
    off = draw(st.integers(-2, 2))
    n, m = np.int32(draw(st.integers(-2, 6))), np.int32(draw(st.integers(-1, 3)))
    p = np.bool_(draw(st.booleans()))
    k = np.int32(draw(st.integers(-3, 4)))
    real0 = kind(ets[0]) in ("int", "float")
    thr = make_values(ets[0], (), seed + 99, special) if real0 else np.bool_(True)
    body, body2 = _body(steps), _body(steps2)

    def fn(n, m, p, k, thr, *flat):
        # jax.jit drops unused arguments (the XLA side would then get too many): every input is
        # also an output
        return (*program(n, m, p, k, thr, tuple(flat[:nc]), tuple(flat[nc:])), n, m, p, k, thr, *flat[nc:])

    def program(n, m, p, k, thr, cs, ws):

        def pred(c):  # data-dependent predicate on the first carried value
            return _max_below(c[0], thr) if real0 else thr

        def b(i, c):
            return body(i, c, ws)

        def b2(i, c):
            return body2(i, c, ws)

        if struct == "fori":
            return lax.fori_loop(0, n, b, cs)
        if struct == "while":  # trip count from the data; the counter is an output too
            count, out = lax.while_loop(lambda s: lax.bitwise_and(s[0] < n, pred(s[1])),
                                        lambda s: (s[0] + 1, b(s[0], s[1])), (np.int32(0), cs))
            return (count, *out)
        if struct == "nested":  # the inner trip count depends on the outer counter
            return lax.fori_loop(0, n, lambda i, c: lax.fori_loop(0, m + lax.rem(i, np.int32(2)),
                                                                  lambda j, c2: b(i * 4 + j, c2), c), cs)
        if struct == "cond_in_loop":
            return lax.fori_loop(0, n, lambda i, c: lax.cond(
                lax.bitwise_xor(lax.rem(i, np.int32(2)) == 0, pred(c)),
                lambda c: b(i, c), lambda c: b2(i, c), c), cs)
        if struct == "switch_in_loop":
            return lax.fori_loop(0, n, lambda i, c: lax.switch(
                i + off, [lambda c: b(i, c), lambda c: b2(i, c), lambda c: c], c), cs)
        if struct == "cond":
            return lax.cond(p, lambda c: b(np.int32(off), c), lambda c: b2(np.int32(off), c), cs)
        if struct == "loop_in_cond":
            return lax.cond(pred(cs), lambda c: lax.fori_loop(0, n, b, c), lambda c: b2(m, c), cs)
        return lax.switch(k, [lambda c: b(k, c), lambda c: b2(k, c), lambda c: c], cs)  # "switch"

    label = (f"{struct} types={ets} shapes={shps} steps={steps}/{steps2} n={n} m={m} p={p} k={k} off={off} "
             f"seed={seed} special={special}")
    # every op in the bodies is exact on both sides (ints wrap): "add" is EXACT / EXACT_FTZ
    return Case(label, fn, [n, m, p, k, np.asarray(thr), *cs, *ws], "add")


def _defs(text: str, name: str, before: int) -> re.Match | None:
    """The last textual definition of ``name`` before ``before`` (MLIR names are unique in scope)."""
    found = None
    for mt in re.finditer(rf"{re.escape(name)} = stablehlo\.(convert|clamp) (.*)\n", text[:before]):
        found = mt
    return found


def raw_if_and_case(text: str) -> str:
    """jax's lowering edited so that both sides run ``stablehlo.if`` and unclamped ``case``:
    ``case(convert(pred))`` becomes ``if(pred)`` with the same regions (so the first region, jax's
    false branch, runs when pred holds), ``case(clamp(lo, index, hi))`` becomes ``case(index)``."""
    out, pos = [], 0
    for mt in re.finditer(r'"stablehlo\.case"\((%[\w#]+)\)', text):
        d = _defs(text, mt.group(1), mt.start())
        if d is None:
            continue
        if d.group(1) == "convert" and "(tensor<i1>) -> tensor<i32>" in d.group(2):
            pred = d.group(2).split(" ")[0]
            # the op's type follows the regions: find the parenthesis closing them
            j, depth = mt.end() + 1, 0
            while True:
                depth += {"(": 1, ")": -1}.get(text[j], 0)
                j += 1
                if depth == 0:
                    break
            assert text.startswith(" : (tensor<i32>)", j), text[j:j + 40]
            out += [text[pos:mt.start()], f'"stablehlo.if"({pred})', text[mt.end():j], " : (tensor<i1>)"]
            pos = j + len(" : (tensor<i32>)")
        elif d.group(1) == "clamp":
            index = d.group(2).split(", ")[1]
            out += [text[pos:mt.start()], f'"stablehlo.case"({index})']
            pos = mt.end()
    out.append(text[pos:])
    return "".join(out)


@settings(max_examples=80)
@given(st.lists(control_case(), min_size=CASES_PER_PROGRAM, max_size=CASES_PER_PROGRAM), st.booleans())
def test_control_flow_matches_xla(cases, raw):
    run_cases(cases, raw_if_and_case if raw else None)


def test_raw_if_and_case_rewrite():
    """The rewrite yields if and out-of-range case indices (the spec's last-branch rule)."""
    def fn(p, k, x):
        return (lax.cond(p, lambda v: v + 1, lambda v: v - 1, x),
                lax.switch(k, [lambda v: v * 2, lambda v: v * 3, lambda v: v * 5], x))
    texts: list[str] = []

    def rewrite(t: str) -> str:
        texts.append(raw_if_and_case(t))
        return texts[-1]

    for p, k in [(True, -1), (False, 7), (True, 1)]:
        x = np.arange(3, dtype=np.int32)
        run_cases([Case(f"if/case p={p} k={k}", fn, [np.bool_(p), np.int32(k), x], "add")], rewrite)
        assert '"stablehlo.if"(%arg0)' in texts[-1] and "stablehlo.clamp" in texts[-1]
        assert '"stablehlo.case"(%arg1)' in texts[-1]


# ---- map: hand-written text ------------------------------------------------------------------------

MAP_TYPES = ["i1", "i8", "i32", "i64", "ui16", "ui64", "f32", "f64", "bf16", "f16", "complex<f32>",
             "complex<f64>"]
MAP_OPS = {
    "int": ["add", "subtract", "multiply", "maximum", "minimum", "and", "or", "xor", "negate", "abs",
            "select"],
    "float": ["add", "subtract", "multiply", "maximum", "minimum", "negate", "abs", "select"],
    "complex": ["add", "subtract", "negate"],
    "bool": ["and", "or", "xor", "not", "select", "maximum"],
}


def ttype(shape: tuple[int, ...], et: str) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + et + ">"


def _signed(et: str) -> str:
    return "UNSIGNED" if et.startswith("ui") or et == "i1" else "FLOAT" if kind(et) == "float" else "SIGNED"


@st.composite
def map_body(draw, et: str, nargs: int, convert_from: str | None) -> tuple[list[str], str, str]:
    """(lines, result name, result element type) of a random element-wise body over %a0..."""
    t = ttype((), et)
    lines, names, counter = [], [f"%a{j}" for j in range(nargs)], [0]
    if convert_from is not None:  # the last input has another element type
        lines.append(f"%c = stablehlo.convert %a{nargs - 1} : ({ttype((), convert_from)}) -> {t}")
        names[-1] = "%c"

    def fresh() -> str:
        counter[0] += 1
        return f"%t{counter[0]}"

    def expr(depth: int) -> str:
        if depth == 0 or draw(st.integers(0, 3)) == 0:
            return draw(st.sampled_from(names))
        ops = [o for o in MAP_OPS[kind(et)] if not (o == "abs" and et.startswith("ui"))]  # abs: signed only
        opn = draw(st.sampled_from(ops))
        r = fresh()
        if opn in ("negate", "abs", "not"):
            a = expr(depth - 1)
            lines.append(f"{r} = stablehlo.{opn} {a} : {t}")
        elif opn == "select":
            a, b = expr(depth - 1), expr(depth - 1)
            pr = fresh()
            if kind(et) == "bool":
                lines.append(f"{pr} = stablehlo.xor {a}, {b} : {t}")
            else:
                lines.append(f"{pr} = stablehlo.compare LT, {a}, {b}, {_signed(et)} : ({t}, {t}) -> "
                             "tensor<i1>")
            lines.append(f"{r} = stablehlo.select {pr}, {b}, {a} : tensor<i1>, {t}")
        else:
            a, b = expr(depth - 1), expr(depth - 1)
            lines.append(f"{r} = stablehlo.{opn} {a}, {b} : {t}")
        return r

    res = expr(1 if kind(et) == "complex" else 3)  # complex: one op (ulp_table.COMPLEX_ADD_CHAIN)
    if kind(et) in ("int", "float") and draw(st.integers(0, 4)) == 0:  # an i1 result
        r = fresh()
        other = draw(st.sampled_from(names))
        d = draw(st.sampled_from(["EQ", "NE", "LT", "GE"]))
        lines.append(f"{r} = stablehlo.compare {d}, {res}, {other}, {_signed(et)} : ({t}, {t}) -> tensor<i1>")
        return lines, r, "i1"
    return lines, res, et


@st.composite
def map_program(draw) -> tuple[Case, str]:
    """CASES_PER_PROGRAM independent maps in one module."""
    params, body_lines, rets, args, labels = [], [], [], [], []
    for q in range(CASES_PER_PROGRAM):
        et = draw(st.sampled_from(MAP_TYPES))
        shape = draw(shapes(max_rank=3, max_side=4))
        nargs = draw(st.integers(1, 3))
        conv = None
        if kind(et) in ("int", "float") and nargs > 1 and draw(st.booleans()):
            conv = draw(st.sampled_from(["i8", "i16", "ui8"]))
        seed = draw(seeds)
        ets = [et] * nargs if conv is None else [et] * (nargs - 1) + [conv]
        vals = [make_values(e, shape, seed + j, draw(st.sampled_from([0.0, 0.3]))) for j, e in enumerate(ets)]
        lines, res, ret = draw(map_body(et, nargs, conv))
        first = len(args)
        args += vals
        params += [f"%p{first + j}: {ttype(shape, e)}" for j, e in enumerate(ets)]
        blk = ", ".join(f"%a{j}: {ttype((), e)}" for j, e in enumerate(ets))
        ins = ", ".join(f"%p{first + j}" for j in range(nargs))
        dims = ", ".join(str(d) for d in range(len(shape)))
        body = "\n".join(f"      {ln}" for ln in lines)
        body_lines.append(
            f'    %m{q} = "stablehlo.map"({ins}) ({{\n    ^bb0({blk}):\n{body}\n'
            f"      stablehlo.return {res} : {ttype((), ret)}\n    }}) "
            f"{{dimensions = array<i64{': ' if dims else ''}{dims}>}} : "
            f"({', '.join(ttype(shape, e) for e in ets)}) -> {ttype(shape, ret)}")
        rets.append((f"%m{q}", ttype(shape, ret)))
        labels.append(f"map {ets}->{ret} {shape} seed={seed}")
    text = (f"func.func @main({', '.join(params)}) -> ({', '.join(t for _, t in rets)}) {{\n"
            + "\n".join(body_lines) + f"\n    return {', '.join(r for r, _ in rets)} : "
            f"{', '.join(t for _, t in rets)}\n}}\n")
    # every body op is exactly rounded (no complex multiply): "add" is EXACT / EXACT_FTZ
    return Case("; ".join(labels), None, args, "add"), text


@settings(max_examples=80)
@given(map_program())
def test_map_matches_xla(prog):
    case, text = prog
    run_text(case, text)


# ---- batch_norm_*: hand-written text ---------------------------------------------------------------

BN_TYPES = ["f32", "f64", "bf16", "f16"]
BN_INS = {"inference": "xsomv", "training": "xso", "grad": "xsmvg"}


def bn_text(op: str, shape: tuple[int, ...], et: str, fi: int, epsilon: float) -> str:
    t, f = ttype(shape, et), ttype((shape[fi],), et)
    ins = [t if c in "xg" else f for c in BN_INS[op]]
    outs = [t] if op == "inference" else [t, f, f]
    params = ", ".join(f"%p{i}: {x}" for i, x in enumerate(ins))
    lhs = "%r" if len(outs) == 1 else f"%r:{len(outs)}"
    rets = "%r" if len(outs) == 1 else ", ".join(f"%r#{i}" for i in range(len(outs)))
    return (f"func.func @main({params}) -> ({', '.join(outs)}) {{\n  {lhs} = \"stablehlo.batch_norm_{op}\""
            f"({', '.join(f'%p{i}' for i in range(len(ins)))}) {{epsilon = {epsilon:e} : f32, "
            f"feature_index = {fi} : i64}} : ({', '.join(ins)}) -> ({', '.join(outs)})\n"
            f"  return {rets} : {', '.join(outs)}\n}}\n")


def bn_terms(op: str, args: list[np.ndarray], fi: int, epsilon: float) -> tuple[list[np.ndarray], int, bool]:
    """(sum|terms| per output, n, well-conditioned) for ulp_table's BATCH_NORM bound, in float64
    from the inputs.

    The spec's decomposition (and XLA's batchnorm_expander, which computes E[x^2] - E[x]^2 and
    multiplies by rsqrt) rounds: per-feature sums of N = size / dim(feature) terms, and O(1)
    element-wise ops. A sum's error is ~ N eps sum|terms|; an element-wise op's ~ eps |operands|.
    n = N for every output, so element-wise magnitudes are divided by N here. The error of
    1 / sqrt(v + epsilon) under an error dv of v is bounded with r_lo = 1 / sqrt(v + eps - dv);
    v + eps - dv <= 0 (the variance cancels) is not well-conditioned."""
    f64 = [np.asarray(a, np.float64) for a in args]
    x = f64[0]
    rank = x.ndim
    axes = tuple(d for d in range(rank) if d != fi)
    nn = max(x.size // x.shape[fi], 1) if x.shape[fi] else 1
    eps_t = float(ml_dtypes.finfo(args[0].dtype).eps)
    ep = float(np.float32(epsilon).astype(args[0].dtype))

    def b(v):  # per feature -> broadcast against x
        shape = [1] * rank
        shape[fi] = -1
        return np.asarray(v).reshape(shape)

    def mean(v):
        return v.sum(axis=axes) / nn if axes else v

    with np.errstate(all="ignore"):
        ax = np.abs(x)
        if op == "training":
            s, o = f64[1], f64[2]
            m = mean(x)
            tm = mean(ax)                                   # mean: N-term sum of |x|
            tv = mean(x * x) + 2 * np.abs(m) * tm           # E[x^2] - E[x]^2 (and the spec's form)
            v = np.maximum(mean((x - b(m)) ** 2), 0.0)
            dv = 2 * nn * eps_t * tv
            r = 1 / np.sqrt(v + ep)
            low = v + ep - dv  # NaN (a NaN or inf operand): no bound, both sides must give NaN
            r_lo = np.where(low > 0, 1 / np.sqrt(np.maximum(low, 0)), np.where(np.isnan(low), np.nan, np.inf))
            ty = (np.abs(b(s)) * b(r_lo) * (b(tm) + (ax + b(np.abs(m))) / nn)
                  + 0.5 * np.abs(b(s)) * np.abs(x - b(m)) * b(r_lo) ** 3 * b(tv) + np.abs(b(o)) / nn)
            return [ty, tm, tv], nn, not bool(np.any(low <= 0))
        if op == "inference":
            s, o, m, v = f64[1], f64[2], f64[3], f64[4]
            r = 1 / np.sqrt(np.where(v + ep >= 0, v + ep, np.nan))
            return [np.abs(b(s)) * b(r) * (ax + b(np.abs(m))) + np.abs(b(o))], 1, True
        s, m, v, g = f64[1], f64[2], f64[3], f64[4]
        r = 1 / np.sqrt(np.where(v + ep >= 0, v + ep, np.nan))
        ag, c = np.abs(g), ax + b(np.abs(m))               # |x - mean| with its rounding
        sg = ag.sum(axis=axes) if axes else ag
        sgc = (ag * c).sum(axis=axes) if axes else ag * c
        tgo = np.abs(b(s)) * b(r) / nn * (nn * ag + b(sg) + b(sgc) * c * b(r) ** 2)
        return [tgo, sgc * r, sg], nn, True


@st.composite
def bn_case(draw) -> tuple[Case, str]:
    op = draw(st.sampled_from(sorted(BN_INS)))
    et = draw(st.sampled_from(BN_TYPES))
    shape = draw(shapes(min_rank=1, max_rank=4, max_side=5))
    fi = draw(st.integers(0, len(shape) - 1))
    epsilon = draw(st.sampled_from([0.0, 1e-5, 1e-3, 0.1, 1.0]))
    seed = draw(seeds)
    # |mean| > spread: E[x^2] - E[x]^2 cancels (in f16/bf16 all digits: BN_VARIANCE_CANCELS)
    shift = draw(st.sampled_from([0.0, 0.0, 3.0, -20.0] if et in ("f32", "f64") else [0.0, 0.0, 1.0]))
    special = draw(st.sampled_from([0.0, 0.0, 0.05]))  # NaN, inf, max, denormals in operand/grad_output
    c = shape[fi]
    dt = ELEMENT_TYPES[et]
    args = []
    for j, ch in enumerate(BN_INS[op]):
        shp = shape if ch in "xg" else (c,)
        v = make_values(et, shp, seed + j, special if ch in "xg" else 0.0, scale=(-3, 3)).astype(np.float64)
        if ch in "xg":
            # ulp_table.BN_OVERFLOW: finite values whose squares or products overflow become inf
            v = np.where(np.isfinite(v) & (np.abs(v) > float(ml_dtypes.finfo(dt).max) ** 0.5 / 4),
                         np.copysign(np.inf, v), v + (shift if ch == "x" else 0.0))
        if ch == "v":
            v = np.abs(v)
        args.append(v.astype(dt))
    terms, n, ok = bn_terms(op, args, fi, epsilon)
    assume(ok)  # ulp_table.BN_VARIANCE_CANCELS: the variance's error may exceed variance + epsilon
    label = (f"batch_norm_{op} {et} {shape} fi={fi} epsilon={epsilon} shift={shift} special={special} "
             f"seed={seed}")
    return Case(label, None, args, f"batch_norm_{op}", terms=terms, n=n), bn_text(op, shape, et, fi, epsilon)


@settings(max_examples=250)
@given(bn_case())
def test_batch_norm_matches_xla(case_text):
    case, text = case_text
    run_text(case, text)
