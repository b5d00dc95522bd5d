"""CHLO ops vs XLA:CPU: every op on every element type it takes, with the shared edge values.

Each case is one hand-written program ``%r = chlo.<op> %a ...`` (jax prints chlo only for some
of these ops) run by hlolab and by XLA:CPU (the harness's worker). Floats are compared in ULPs:
the bound is the 3 ULP of check.expect_close unless tests/oracle/ulp_table.py (CHLO_BOUNDS)
documents a larger one with the measured cause. As in tests/oracle/ulp_table.py (FTZ_RULE),
XLA's flush-to-zero result is also accepted where it equals hlolab's on flushed inputs.
``WORST`` collects the worst measured ULP per (op, type); ``test_report`` prints it (pytest -s).
"""

from __future__ import annotations

import numpy as np
import pytest

from hlolab.numerics import ulp_distance
from tests.oracle.differential.harness import WORKER, hlolab_run, same_bits
from tests.oracle.differential.strategies import ELEMENT_TYPES, float_edges, int_edges, make_values
from tests.oracle.numerics import flush
from tests.oracle.ulp_table import chlo_bound

UNARY = ["acos", "acosh", "asin", "asinh", "atan", "atanh", "cosh", "sinh", "tan", "square"]
FLOATS = ["bf16", "f16", "f32", "f64"]
COMPLEX = ["complex<f32>", "complex<f64>"]
EXTRA = [-1, 1, 0.5, -0.99, 1.01, 1e-3, -1e-3, 100, 3000, 88.5, -89.4, 1e20, -3e38]

# complex operands with a NaN or infinite part: the decompositions' last StableHLO op (complex
# atan2 / log1p / divide) meets them; hlolab's StableHLO ops follow numpy there, XLA:CPU its own
# formulas (e.g. atan(x + NaN i) = -pi/2 + NaN i on XLA, NaN + NaN i in hlolab). Left out, counted.
NONFINITE_COMPLEX_OUT = {"atan", "atanh", "tan", "cosh", "sinh", "square", "acosh", "asinh", "acos", "asin"}

# hlolab's StableHLO complex atan2(z, 1) = -i log((z + i) / sqrt(z^2 + 1)) (elementwise.py) cancels
# near z = 0: its error is ~eps absolute, not relative (measured: 1.7e7 eps * |xla| at |z| ~ 1e-9
# in complex<f32>), so atan is compared as |hlolab - xla| <= k * eps * max(|xla|, 1)
ABS_FLOOR = {"atan": 1.0}

WORST: dict[tuple[str, str], tuple[float, int]] = {}


def program(op: str, types: list[str], result: str, generic: bool = False, attrs: str = "") -> str:
    names = [f"%a{i}" for i in range(len(types))]
    sig = ", ".join(f"{n}: {t}" for n, t in zip(names, types))
    if generic:
        body = f'"chlo.{op}"({", ".join(names)}) {attrs} : ({", ".join(types)}) -> {result}'
    elif op.startswith("broadcast_"):
        body = f'chlo.{op} {", ".join(names)} {attrs} : ({", ".join(types)}) -> {result}'
    else:
        body = f'chlo.{op} {", ".join(names)} : {", ".join(types)} -> {result}'
    return f"func.func @main({sig}) -> {result} {{\n  %r = {body}\n  return %r : {result}\n}}"


def both(text: str, args: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(hlolab, XLA:CPU, hlolab on flushed inputs with flushed outputs)."""
    fut = WORKER.submit(text, args)
    try:
        ours = hlolab_run(text, args, text)[0]
        alt = flush(hlolab_run(text, [flush(a) for a in args], text)[0])
    finally:
        ref = WORKER.result(fut, text)[0]
    return ours, ref, alt


def values(et: str, n_seeds: int = 4) -> np.ndarray:
    dt = ELEMENT_TYPES[et]
    parts = [make_values(et, (128,), seed, 0.15, (-10, 10)).reshape(-1) for seed in range(n_seeds)]
    if et in FLOATS:
        with np.errstate(over="ignore"):
            parts += [float_edges(dt), np.asarray(EXTRA, np.float64).astype(dt)]
    return np.concatenate(parts)


def rel_eps(ours: np.ndarray, ref: np.ndarray, alt: np.ndarray, floor: float = 0.0) -> np.ndarray:
    """Complex results: |hlolab - xla| / (eps * |xla|) (ulp_table's "rel" measure), the better
    of hlolab on the inputs and on flushed inputs; 0 where the bits agree (NaN == NaN)."""
    eps = float(np.finfo(ref.real.dtype).eps)
    r = ref.astype(np.complex128)
    scale = eps * np.maximum(np.abs(r), max(floor, float(np.finfo(ref.real.dtype).tiny)))
    with np.errstate(invalid="ignore", over="ignore"):
        e = np.minimum(np.abs(ours.astype(np.complex128) - r), np.abs(alt.astype(np.complex128) - r)) / scale
    e = np.where(np.isnan(e), np.inf, e)
    return np.where(same_bits(ours, ref) | same_bits(alt, ref), 0.0, e)


def ulps(ours: np.ndarray, ref: np.ndarray, alt: np.ndarray) -> np.ndarray:
    d = np.minimum(ulp_distance(ours, ref), ulp_distance(alt, ref))
    return np.where(same_bits(ours, ref) | same_bits(alt, ref), np.uint64(0), d)


def record(op: str, et: str, d: np.ndarray, n: int) -> float:
    worst = float(d.max()) if d.size else 0
    WORST[(op, et)] = (worst, n)
    return worst


def report_bad(x, ours, ref, bad) -> str:
    i = np.flatnonzero(bad)[:5]
    return "; ".join(f"x={x[j]!r} hlolab={ours[j]!r} xla={ref[j]!r}" for j in i)


@pytest.mark.parametrize("et", FLOATS + COMPLEX)
@pytest.mark.parametrize("op", UNARY)
def test_decomposed_unary_matches_xla(op, et):
    x = values(et)
    t = f"tensor<{x.size}x{et}>"
    ours, ref, alt = both(program(op, [t], t), [x])
    keep = np.ones(x.shape, bool)
    if et in COMPLEX and op in NONFINITE_COMPLEX_OUT:
        keep = np.isfinite(x.real) & np.isfinite(x.imag)
        # an overflowing result has no relative error: left out, counted (both sides overflow there,
        # e.g. cosh(98.6 + 0i) = inf + finite i; atanh(-1) = -inf - 0i on XLA, -inf + NaN i in
        # hlolab, whose StableHLO log_plus_one gives NaN for the angle of 0 + 0i)
        keep &= np.isfinite(ref.real) & np.isfinite(ref.imag)
    if et in COMPLEX and op == "atan":
        # hlolab's StableHLO complex atan2 (-i log((x + iy) / sqrt(x^2 + y^2)), elementwise.py)
        # squares its operands: |z| >= sqrt(max) overflows to inf + NaN i where XLA gives pi/2
        keep &= np.abs(x) < np.sqrt(np.finfo(x.real.dtype).max)
        # on atan's branch cut (real part +-0, |imag| > 1) XLA follows the sign of the zero real
        # part (-0 + 162i: -pi/2), hlolab's complex log does not (+pi/2): left out, counted
        keep &= ~((x.real == 0) & (np.abs(x.imag) > 1))
    if op in ("asin", "acos") and et in FLOATS:
        # FTZ inside the decomposition: atan2(x, 2) of the smallest normals is subnormal and XLA
        # flushes it, so asin(+-tiny) is +-0 on XLA (the final result, not an input, is affected)
        tiny = float(np.finfo(np.float32).tiny) if et != "f64" else float(np.finfo(np.float64).tiny)
        keep &= ~((ref.astype(np.float64) == 0) & (np.abs(ours.astype(np.float64)) <= 2 * tiny))
    limit = chlo_bound(op, et)  # tests/oracle/ulp_table.py
    bound, why = limit.k, limit.reason
    if et in COMPLEX:
        d = np.ceil(rel_eps(ours, ref, alt, ABS_FLOOR.get(op, 0.0))[keep])
    else:
        d = ulps(ours, ref, alt)[keep]
    worst = record(op, et, d, int(keep.sum()))
    bad = np.zeros(x.shape, bool)
    bad[keep] = d > bound
    assert worst <= bound, (f"{op} {et}: worst {worst} (ULP, complex: eps * |xla|) > {bound} ({why}): "
                            + report_bad(x, ours, ref, bad))


@pytest.mark.parametrize("et", FLOATS)
@pytest.mark.parametrize("op", ["is_inf", "is_pos_inf", "is_neg_inf"])
def test_predicates_match_xla_bit_exactly(op, et):
    x = values(et)
    t = f"tensor<{x.size}x{et}>"
    ours, ref, _ = both(program(op, [t], f"tensor<{x.size}xi1>"), [x])
    record(op, et, np.zeros(0), x.size)
    assert np.array_equal(ours, ref), report_bad(x, ours, ref, ours != ref)


@pytest.mark.parametrize("et", COMPLEX + FLOATS[2:])
def test_conj_matches_xla(et):
    x = values(et)
    t = f"tensor<{x.size}x{et}>"
    ours, ref, _ = both(program("conj", [t], t), [x])
    record("conj", et, np.zeros(0), x.size)
    assert same_bits(ours, ref).all(), report_bad(x, ours, ref, ~same_bits(ours, ref))


@pytest.mark.parametrize("et", FLOATS)
def test_next_after_matches_xla_bit_exactly(et):
    x = values(et)
    y = np.concatenate([x[1:], x[:1]])
    y[::7] = x[::7]  # x == y cases
    t = f"tensor<{x.size}x{et}>"
    ours, ref, alt = both(program("next_after", [t, t], t), [x, y])
    # DAZ: XLA:CPU's compare x == y sees f32/f64/bf16 subnormals as 0, so two subnormals (or a
    # subnormal and a zero) are "equal" and it returns y; the decomposition's bit arithmetic
    # (hlolab) steps x one ULP toward y. Left out, counted.
    tiny = np.finfo(np.float64 if et == "f64" else np.float32).tiny
    daz = (np.abs(x.astype(np.float64)) < tiny) & (np.abs(y.astype(np.float64)) < tiny) & (et != "f16")
    d = ulps(ours, ref, alt)[~daz]
    record("next_after", et, d, int((~daz).sum()))
    assert (d == 0).all(), report_bad(x[~daz], ours[~daz], ref[~daz], d != 0)


@pytest.mark.parametrize("et", ["i8", "i16", "i32", "i64", "ui8", "ui16", "ui32", "ui64"])
def test_mulhi_matches_xla(et):
    dt = ELEMENT_TYPES[et]
    a = np.concatenate([make_values(et, (200,), 1, 0.2).reshape(-1), int_edges(dt), int_edges(dt)])
    b = np.concatenate([make_values(et, (200,), 2, 0.2).reshape(-1), int_edges(dt), int_edges(dt)[::-1]])
    t = f"tensor<{a.size}x{et}>"
    ours, ref, _ = both(program("mulhi", [t, t], t), [a, b])
    record("mulhi", et, np.zeros(0), a.size)
    assert np.array_equal(ours, ref), report_bad(a, ours, ref, ours != ref)


# broadcast_X: shapes (lhs, rhs, result, broadcast_dimensions attribute)
SHAPES = [((4, 3), (3,), (4, 3), ""), ((4, 1), (1, 5), (4, 5), ""), ((3,), (2, 3), (2, 3), ""),
          ((4, 3), (3,), (4, 3), "{broadcast_dimensions = array<i64: 1>}")]
BROADCAST = {
    "add": ["f32", "i32", "complex<f32>"], "subtract": ["f32", "i8"], "multiply": ["bf16", "i32"],
    "divide": ["f32", "i32"], "remainder": ["f32", "i16"], "power": ["f32"], "maximum": ["f32", "ui8"],
    "minimum": ["f16", "i32"], "atan2": ["f32"], "shift_left": ["i32"], "shift_right_arithmetic": ["i8"],
    "shift_right_logical": ["ui32"], "and": ["i1", "i32"], "or": ["i1", "ui16"], "xor": ["i1", "i64"],
    "next_after": ["f32"], "complex": ["f32", "f64"], "compare": ["f32", "i32"],
}
# XLA:CPU rewrites a / broadcast(b) as a * broadcast(1 / b): 1 ULP (measured) where b repeats
ULP_OPS = {"atan2": 3, "power": 2, "divide": 1}


@pytest.mark.parametrize("op, et", [(op, et) for op, ets in BROADCAST.items() for et in ets])
def test_broadcast_ops_match_xla(op, et):
    worst, n = 0, 0
    for k, (ls, rs, res, attrs) in enumerate(SHAPES):
        a = make_values(et, ls, 10 + k, 0.2, (-4, 4))
        b = make_values(et, rs, 20 + k, 0.2, (-4, 4))
        if op == "power" and et == "f32":
            b = np.round(b)
        out = {"complex": f"complex<{et}>", "compare": "i1"}.get(op, et)
        types = [f"tensor<{'x'.join(map(str, ls))}x{et}>", f"tensor<{'x'.join(map(str, rs))}x{et}>"]
        rt = f"tensor<{'x'.join(map(str, res))}x{out}>"
        generic = op == "compare"
        if generic:
            attrs = "{comparison_direction = #chlo<comparison_direction LT>" + (
                ", broadcast_dimensions = array<i64: 1>}" if attrs else "}")
        ours, ref, alt = both(program(f"broadcast_{op}", types, rt, generic, attrs), [a, b])
        n += ours.size
        if out in ("i1",) or et.startswith(("i", "ui")):
            assert np.array_equal(ours, ref), f"{op} {et} {ls} {rs}: " + str(np.argwhere(ours != ref)[:5])
            continue
        d = ulps(ours, ref, alt)
        worst = max(worst, int(d.max()))
        assert int(d.max()) <= ULP_OPS.get(op, 0), f"{op} {et} {ls} {rs}: {int(d.max())} ULP"
    record(f"broadcast_{op}", et, np.asarray([worst]), n)


def test_broadcast_select_matches_xla():
    p = np.array([[True], [False], [True]])
    a, b = make_values("f32", (3, 4), 1), make_values("f32", (4,), 2)
    types = ["tensor<3x1xi1>", "tensor<3x4xf32>", "tensor<4xf32>"]
    text = program("broadcast_select", types, "tensor<3x4xf32>")
    ours, ref, _ = both(text, [p, a, b])
    record("broadcast_select", "f32", np.zeros(0), ours.size)
    assert same_bits(ours, ref).all()


def test_report():
    """The measured worst ULP per (op, type) and the case counts (run the module with -s)."""
    for (op, et), (worst, n) in sorted(WORST.items()):
        print(f"{op:28s} {et:13s} cases={n:5d} worst={worst:g}")
