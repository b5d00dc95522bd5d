"""Data movement vs XLA:CPU, bit-exact: pad (negative and interior), slice, dynamic_slice,
dynamic_update_slice, concatenate, transpose, broadcast_in_dim, reshape, reverse, iota."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.oracle.differential.harness import Case, lax, run_cases
from tests.oracle.differential.strategies import (
    ALL_TYPES,
    ELEMENT_TYPES,
    make_values,
    pad_configs,
    permutations_of,
    seeds,
    shapes,
    slice_configs,
)

CASES_PER_PROGRAM = 4
OPS = ["pad", "slice", "dynamic_slice", "dynamic_update_slice", "concatenate", "transpose",
       "broadcast_in_dim", "reshape", "reverse", "iota"]


@st.composite
def shape_case(draw):
    op = draw(st.sampled_from(OPS))
    et = draw(st.sampled_from(ALL_TYPES))
    # rank >= 1 for dynamic_slice: XLA's parser refuses the rank-0 text jax prints ("expected 'sizes'")
    shape = draw(shapes(min_rank=1 if op in ("concatenate", "dynamic_slice") else 0, max_rank=3))
    seed = draw(seeds)
    x = make_values(et, shape, seed, 0.3)
    r = len(shape)
    label = f"{op} {et} {shape} seed={seed}"
    if op == "pad":
        cfg = draw(pad_configs(shape))
        v = make_values(et, (), seed + 1, 0.5)
        return Case(f"{label} {cfg}", lambda a, p, c=cfg: lax.pad(a, p, c), [x, v], op)
    if op == "slice":
        s, e, st_ = draw(slice_configs(shape))
        return Case(f"{label} {s} {e} {st_}", lambda a: lax.slice(a, s, e, st_), [x], op)
    if op in ("dynamic_slice", "dynamic_update_slice"):
        idt = draw(st.sampled_from([np.int32, np.int64, np.uint8, np.int8]))
        # start indices beyond either end are clamped (spec and XLA)
        starts = [np.asarray(draw(st.integers(-2 if np.dtype(idt).kind == "i" else 0, d + 2)), idt)
                  for d in shape]
        if op == "dynamic_slice":
            sizes = [draw(st.integers(0, d)) for d in shape]
            return Case(f"{label} starts={[int(i) for i in starts]} sizes={sizes}",
                        lambda a, *i, z=sizes: lax.dynamic_slice(a, i, z), [x, *starts], op)
        ushape = tuple(draw(st.integers(0, d)) for d in shape)
        u = make_values(et, ushape, seed + 2, 0.3)
        return Case(f"{label} starts={[int(i) for i in starts]} update={ushape}",
                    lambda a, b, *i: lax.dynamic_update_slice(a, b, i), [x, u, *starts], op)
    if op == "concatenate":
        dim = draw(st.integers(0, r - 1))
        others = []
        for k in range(draw(st.integers(0, 2))):
            s2 = list(shape)
            s2[dim] = draw(st.integers(0, 3))
            others.append(make_values(et, tuple(s2), seed + 3 + k, 0.3))
        return Case(f"{label} dim={dim} + {[o.shape for o in others]}",
                    lambda *a, d=dim: lax.concatenate(a, d), [x, *others], op)
    if op == "transpose":
        perm = draw(permutations_of(r))
        return Case(f"{label} perm={perm}", lambda a: lax.transpose(a, perm), [x], op)
    if op == "broadcast_in_dim":
        extra = draw(st.integers(0, 2))
        dims = tuple(sorted(draw(st.permutations(range(r + extra)))[:r]))
        out = [draw(st.integers(0, 3)) for _ in range(r + extra)]
        for i, d in enumerate(dims):
            out[d] = shape[i] if shape[i] != 1 else draw(st.sampled_from([1, out[d]]))
        return Case(f"{label} out={out} dims={dims}",
                    lambda a: lax.broadcast_in_dim(a, tuple(out), dims), [x], op)
    if op == "reshape":
        flat = [d for d in shape]
        new = list(reversed(flat)) if draw(st.booleans()) else [int(np.prod(shape, dtype=int))]
        return Case(f"{label} -> {new}", lambda a: lax.reshape(a, tuple(new)), [x], op)
    if op == "reverse":
        dims = tuple(sorted(set(draw(st.lists(st.integers(0, max(r - 1, 0)), max_size=r))))) if r else ()
        return Case(f"{label} dims={dims}", lambda a: lax.rev(a, dims), [x], op)
    dim = draw(st.integers(0, r - 1)) if r else 0
    shp = shape if r else (3,)
    ety = et if et not in ("i1", "complex<f32>", "complex<f64>", "i4", "ui4") else "i32"
    return Case(f"iota {ety} {shp} dim={dim}",
                lambda a: (a, lax.broadcasted_iota(ELEMENT_TYPES[ety], shp, dim)), [x], op)


@settings(max_examples=80)
@given(st.lists(shape_case(), min_size=CASES_PER_PROGRAM, max_size=CASES_PER_PROGRAM))
def test_data_movement_matches_xla(cases):
    run_cases(cases)
