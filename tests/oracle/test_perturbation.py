"""Provenance equals dependence: what ``hlolab trace`` names is what XLA's values depend on.

For random small JAX programs over the indexing, padding, slicing, window and contraction
ops, every float input element is moved by +1e3 and by -1e3, one at a time. All moved
copies, with the unmoved input as row 0, run in ONE vmapped XLA:CPU call, so every row goes
through the same kernel. An input element is a dependence of an output element when some
move changes that element by more than rounding (inputs lie in +-[0.5, 2], so a real
dependence changes it by hundreds; XLA may round rows of one call a few ulps apart). For every
output element, hlolab's backward trace (``Session.sources``) must name exactly these input
elements: nothing more (no kernel weight that only meets padding), nothing less.

Integer inputs (gather/scatter indices, dynamic_slice starts) are not moved: they pick
elements rather than feed arithmetic, and the trace names them as ``index_read``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from hlolab.interp.engine import ARGS_NODE
from hlolab.session import Session
from tests.xla_oracle import jax  # skips loudly without jax (fails under HLOLAB_REQUIRE_ORACLE)

jnp = jax.numpy
lax = jax.lax
MOVE = 1e3


@dataclass
class Program:
    name: str
    f: Callable[..., Any]
    args: list[np.ndarray]


def _f32(rng: np.random.Generator, *shape: int) -> np.ndarray:
    # values away from 0 so that no product or comparison hides a move by accident
    x = rng.uniform(0.5, 2.0, shape) * rng.choice([-1.0, 1.0], shape)
    return x.astype(np.float32)


# --- program makers: one op with random parameters, sometimes followed by a second -----------

def gather(rng: np.random.Generator) -> Program:
    x = _f32(rng, 5, 6)
    idx = rng.integers(-1, 7, (4,)).astype(np.int32)  # some out of range: clamped
    axis = int(rng.integers(0, 2))
    if rng.random() < 0.5:
        return Program("take", lambda x, i: jnp.take(x, i, axis=axis, mode="clip"), [x, idx])
    rows = rng.integers(0, 5, (3, 2)).astype(np.int32)
    return Program("gather_rows_cols", lambda x, i: x[i, 1:4], [x, rows])


def scatter(rng: np.random.Generator) -> Program:
    x = _f32(rng, 6, 3)
    kind = ["add", "set", "mul", "max", "min"][int(rng.integers(0, 5))]
    # set: unique indices (XLA leaves the order of duplicates open); others: repeats too
    idx = (rng.permutation(6)[:4] if kind == "set" else rng.integers(0, 6, 4)).astype(np.int32)
    u = _f32(rng, 4, 3)

    def f(x, i, u):
        return getattr(x.at[i], kind)(u)

    return Program(f"scatter_{kind}", f, [x, idx, u])


def pad(rng: np.random.Generator) -> Program:
    x = _f32(rng, 4, 5)
    v = _f32(rng)
    cfg = [(int(rng.integers(-2, 3)), int(rng.integers(-2, 3)), int(rng.integers(0, 3))) for _ in range(2)]
    return Program(f"pad{cfg}", lambda x, v: lax.pad(x, v, cfg), [x, v])


def slicing(rng: np.random.Generator) -> Program:
    x = _f32(rng, 6, 7)
    a, b = int(rng.integers(0, 3)), int(rng.integers(1, 3))

    def f(x):
        y = x[a::b, ::-1][:, 1:6]
        y = lax.slice(y, (0, 1), (y.shape[0], 5), (1, 2))
        return jnp.transpose(y).reshape(-1)[::3]

    return Program(f"slices{a, b}", f, [x])


def concatenate(rng: np.random.Generator) -> Program:
    x, y = _f32(rng, 4, 3), _f32(rng, 2, 3)
    axis = int(rng.integers(0, 2))
    if axis == 1:
        y = _f32(rng, 4, 2)
    def f(x, y):
        head, tail = (x[:2], x[1:]) if axis == 0 else (x[:, :2], x[:, 1:])
        return jnp.concatenate([head, y, tail], axis=axis)

    return Program(f"concat{axis}", f, [x, y])


def dynamic_slice(rng: np.random.Generator) -> Program:
    x = _f32(rng, 5, 6)
    start = rng.integers(-2, 6, (2,)).astype(np.int32)  # clamped into range
    if rng.random() < 0.5:
        return Program("dynamic_slice", lambda x, s: lax.dynamic_slice(x, (s[0], s[1]), (2, 3)), [x, start])
    u = _f32(rng, 2, 3)
    return Program("dynamic_update_slice", lambda x, s, u: lax.dynamic_update_slice(x, u, (s[0], s[1])),
                   [x, start, u])


def reduce(rng: np.random.Generator) -> Program:
    x = _f32(rng, 3, 4, 2)
    axes = [(0,), (1,), (0, 2), (1, 2)][int(rng.integers(0, 4))]
    kind = ["sum", "max", "min", "prod"][int(rng.integers(0, 4))]
    return Program(f"reduce_{kind}{axes}", lambda x: getattr(jnp, kind)(x, axis=axes), [x])


def reduce_window(rng: np.random.Generator) -> Program:
    x = _f32(rng, 5, 6)
    dims = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
    strides = (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
    padding = tuple((int(rng.integers(0, 2)), int(rng.integers(0, 2))) for _ in range(2))
    base = (int(rng.integers(1, 3)), 1)
    wdil = (1, int(rng.integers(1, 3)))
    tag = f"{dims}{strides}{padding}{base}{wdil}"
    if rng.random() < 0.5:
        return Program("reduce_window_max" + tag, lambda x: lax.reduce_window(
            x, -jnp.inf, lax.max, dims, strides, padding, base, wdil), [x])
    # jax cannot vmap a reduce_window whose init is an argument: the init is the constant 0
    return Program("reduce_window_add" + tag,
                   lambda x: lax.reduce_window(x, 0.0, lax.add, dims, strides, padding, base, wdil), [x])


def convolution(rng: np.random.Generator) -> Program:
    groups = int(rng.integers(1, 3))
    lhs = _f32(rng, 1, 2 * groups, 5, 4)  # NCHW
    rhs = _f32(rng, 2 * groups, 2, 3, 2)  # OIHW
    strides = (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
    padding = [(int(rng.integers(-1, 3)), int(rng.integers(0, 3))) for _ in range(2)]
    ldil = (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
    rdil = (int(rng.integers(1, 3)), 1)
    tag = f"g{groups}{strides}{padding}{ldil}{rdil}"
    return Program("conv" + tag, lambda a, b: lax.conv_general_dilated(
        a, b, strides, padding, ldil, rdil, feature_group_count=groups), [lhs, rhs])


def dot_general(rng: np.random.Generator) -> Program:
    a, b = _f32(rng, 2, 3, 4), _f32(rng, 2, 4, 3)
    if rng.random() < 0.5:
        dn = (((2,), (1,)), ((0,), (0,)))
    else:
        dn = (((1, 2), (2, 1)), ((0,), (0,)))
    return Program(f"dot_general{dn}", lambda a, b: lax.dot_general(a, b, dn), [a, b])


def select_and_scatter(rng: np.random.Generator) -> Program:
    """The gradient of a max pool: select_and_scatter of the cotangent onto the operand."""
    x = _f32(rng, 5, 6)
    dims = (int(rng.integers(2, 4)), int(rng.integers(1, 3)))
    strides = (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
    padding = "SAME" if rng.random() < 0.5 else "VALID"

    def pool(x):
        return lax.reduce_window(x, -jnp.inf, lax.max, dims, strides, padding)

    g = _f32(rng, *jax.eval_shape(pool, x).shape)
    return Program(f"select_and_scatter{dims}{strides}{padding}",
                   lambda x, g: jax.vjp(pool, x)[1](g)[0], [x, g])


MAKERS = [gather, scatter, pad, slicing, concatenate, dynamic_slice, reduce, reduce_window, convolution,
          dot_general, select_and_scatter]


def then(rng: np.random.Generator, p: Program) -> Program:
    """Sometimes a second op after the first: a weighted sum over rows, a flip and slice, or
    an affine map."""
    k = int(rng.integers(0, 4))
    if k == 0:
        return p
    f = p.f
    if k == 1:
        # weighted, with distinct weights: a plain sum would not see a value move between two
        # elements of a row (select_and_scatter's winner changing to its neighbour), while
        # the trace, a union over paths, names both; distinct weights make the move visible
        n = jax.eval_shape(lambda *a: jnp.atleast_2d(f(*a)), *p.args).shape[-1]
        w = (1.0 + rng.permutation(n) / n).astype(np.float32)
        return Program(p.name + "+rowdot", lambda *a: jnp.atleast_2d(f(*a)) @ w, p.args)
    if k == 2:
        return Program(p.name + "+flip", lambda *a: jnp.flip(f(*a), axis=0)[: max(1, f(*a).shape[0] - 1)],
                       p.args)
    # affine, not a square: squaring would shrink a small change below the rounding bound
    return Program(p.name + "+affine", lambda *a: 2.5 * f(*a) - 1.0, p.args)


def program(seed: int) -> Program:
    rng = np.random.default_rng(1000 + seed)
    return then(rng, MAKERS[seed % len(MAKERS)](rng))


# --- dependence measured on XLA, sources traced by hlolab --------------------------------------

def xla_dependence(p: Program) -> list[dict[int, np.ndarray]]:
    """Per output: {float argument k: bool (arg.size, out.size): moving element e changes out[j]}."""
    floats = [k for k, a in enumerate(p.args) if a.dtype.kind == "f"]
    rows: list[tuple[int, int, float]] = [(-1, -1, 0.0)]
    for k in floats:
        rows += [(k, e, s) for e in range(p.args[k].size) for s in (MOVE, -MOVE)]
    batched = []
    for k, a in enumerate(p.args):
        if k not in floats:
            batched.append(a)
            continue
        b = np.repeat(a.reshape(1, -1), len(rows), axis=0)
        for r, (kk, e, s) in enumerate(rows):
            if kk == k:
                b[r, e] += s
        batched.append(b.reshape((len(rows), *a.shape)))
    axes = tuple(0 if k in floats else None for k in range(len(p.args)))
    outs = jax.jit(jax.vmap(p.f, in_axes=axes))(*batched)
    outs = [np.asarray(o) for o in (outs if isinstance(outs, (tuple, list)) else [outs])]
    deps = []
    for o in outs:
        flat = o.reshape(len(rows), -1)
        # a real dependence moves an element by about MOVE times a value in [0.5, 2]; XLA may
        # round one element differently in different rows of one batched call (a vector lane
        # vs. the remainder loop) by a few ulps, which is not a dependence
        with np.errstate(invalid="ignore"):  # -inf - -inf where a window is all padding
            delta = np.abs(flat[1:].astype(np.float64) - flat[:1].astype(np.float64))
        changed = (delta > 1e-4 * (1.0 + np.abs(flat[:1]))) | (np.isnan(flat[1:]) != np.isnan(flat[:1]))
        per: dict[int, np.ndarray] = {}
        at = 0
        for k in floats:
            n = p.args[k].size
            per[k] = changed[at:at + 2 * n].reshape(n, 2, -1).any(axis=1)
            at += 2 * n
        deps.append(per)
    return deps


def check_program(p: Program) -> int:
    """Assert trace == dependence for every output element; return how many were checked."""
    text = jax.jit(p.f).lower(*p.args).as_text()
    deps = xla_dependence(p)
    s = Session(text, filename=f"{p.name}.mlir")
    s.bind(p.args)
    s.run()
    assert s.results is not None, p.name
    checked = 0
    for r, (d, dep) in enumerate(zip(s.result_defs(), deps)):
        shape = s.results[r].shape
        for j, idx in enumerate(np.ndindex(*shape)):
            trace = s.sources(d, idx)
            for k, moved in dep.items():
                traced = trace.mask(value=(ARGS_NODE, k))
                traced = np.zeros(p.args[k].shape, bool) if traced is None else traced
                want = moved[:, j].reshape(p.args[k].shape)
                assert np.array_equal(traced, want), (
                    f"{p.name}: result #{r}{list(idx)} from argument #{k}:\n"
                    f"traced but no dependence at {np.argwhere(traced & ~want).tolist()}\n"
                    f"dependence not traced at {np.argwhere(want & ~traced).tolist()}\n{text}")
            checked += 1
    return checked


SEEDS = range(10 * len(MAKERS))


@pytest.mark.parametrize("seed", SEEDS, ids=lambda s: f"{MAKERS[s % len(MAKERS)].__name__}-{s}")
def test_trace_names_exactly_what_xla_depends_on(seed):
    assert check_program(program(seed)) > 0
