"""gather and scatter vs XLA:CPU, bit-exact (scatter's float add/multiply combine each result
element with one update, so they are exactly rounded; ulp_table "scatter").

gather: random dimension numbers (batching dims included, tests.ops.test_gather.gather_cases),
every element type with edge values, every index type, out-of-range starts, in jax's three
modes: CLIP and PROMISE_IN_BOUNDS print the bare gather (starts clamped, as the spec says),
FILL_OR_DROP adds the bounds mask jax computes with compare / and / reduce / select.

scatter: add, multiply, maximum, minimum and replace bodies.

* Where the combination order matters (replace; float and complex add / multiply), every
  result element receives at most one update: a window that would land on an element an
  earlier window already reached is moved wholly out of bounds. The spec leaves the order
  ("schedule") to the implementation.
* Integer add / multiply / maximum / minimum and float maximum / minimum do not depend on
  the order, so their windows may overlap freely.
* FILL_OR_DROP prints the bare scatter. Its windows are either wholly in bounds or wholly out
  (ulp_table.SCATTER_WINDOW_DROP says why).
* CLIP prints the clamp of the starts that jax computes; its starts are drawn anywhere.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.ops.test_gather import gather_cases
from tests.ops.test_gather_oracle import lax_layout
from tests.ops.test_scatter import scatter_cases
from tests.ops.test_scatter_oracle import scatter_dimension_numbers
from tests.oracle.differential.harness import Case, lax, run_cases
from tests.oracle.differential.strategies import ALL_TYPES, COMPLEX, INTS, make_values, seeds

MODES = {"clip": lax.GatherScatterMode.CLIP, "fill_or_drop": lax.GatherScatterMode.FILL_OR_DROP,
         "promise_in_bounds": lax.GatherScatterMode.PROMISE_IN_BOUNDS}


@st.composite
def gather_case(draw, mode: str | None = None):
    iota, idx, rshape, sizes, dims = draw(gather_cases())
    et = draw(st.sampled_from(ALL_TYPES))
    seed = draw(seeds)
    x = make_values(et, iota.shape, seed, 0.3)
    mode = mode or draw(st.sampled_from(sorted(MODES)))
    lax_idx, sib = lax_layout(idx, dims)
    dn = lax.GatherDimensionNumbers(offset_dims=dims["offset_dims"],
                                    collapsed_slice_dims=dims["collapsed_slice_dims"],
                                    start_index_map=dims["start_index_map"],
                                    operand_batching_dims=dims["operand_batching_dims"],
                                    start_indices_batching_dims=sib)
    label = (f"gather {mode} {et} operand={x.shape} indices={lax_idx.shape}:{lax_idx.dtype} "
             f"sizes={sizes} {dims} seed={seed} starts={lax_idx.ravel().tolist()}")
    return Case(label, lambda a, i: lax.gather(a, i, dn, sizes, mode=MODES[mode]), [x, lax_idx], "gather")


@settings(max_examples=100, deadline=None)
@given(st.tuples(*(gather_case(m) for m in sorted(MODES)), gather_case()))
def test_gather_matches_xla(cases):
    """A program per example: one case in each mode and one more."""
    run_cases(cases)


# ---- scatter ----------------------------------------------------------------------------------

SCATTERS = {"add": lax.scatter_add, "multiply": lax.scatter_mul, "maximum": lax.scatter_max,
            "minimum": lax.scatter_min, "replace": lax.scatter}
SCATTER_INDEX_TYPES = [np.int32, np.int64, np.int8, np.uint8, np.uint32]


def order_free(body: str, et: str) -> bool:
    """Whether the result is the same for every order of applying the updates."""
    if body == "replace" or et in COMPLEX:
        return False
    return et in INTS or body in ("maximum", "minimum")


def window_targets(in_shape, si, up_shape, d, pos) -> set[tuple[int, ...]]:
    """The in-bounds result indices the update window at scatter position ``pos`` reaches
    (the spec's result_index, index vector last), written out independently of hlolab."""
    rank = len(in_shape)
    start = [0] * rank
    for k, dim in enumerate(d["scatter_dims_to_operand_dims"]):
        start[dim] = int(si[pos + (k,)])
    for od, sd in zip(d["input_batching_dims"], d["scatter_indices_batching_dims"], strict=True):
        start[od] += pos[sd]
    wsize = window_sizes(in_shape, up_shape, d)
    out = set()
    for w in np.ndindex(*wsize.values()):
        ri = list(start)
        for x, o in zip(wsize, w, strict=True):
            ri[x] += o
        if all(0 <= i < n for i, n in zip(ri, in_shape, strict=True)):
            out.add(tuple(ri))
    return out


def window_sizes(in_shape, up_shape, d) -> dict[int, int]:
    """Operand dim -> update window size, in update_window_dims order."""
    window = [x for x in range(len(in_shape))
              if x not in d["inserted_window_dims"] and x not in d["input_batching_dims"]]
    return {x: up_shape[k] for x, k in zip(window, d["update_window_dims"], strict=True)}


def push_out(si, pos, in_shape, wsize, d, draw, signed: bool) -> None:
    """Move the window at ``pos`` wholly out of bounds along one of its indexed dims."""
    k = draw(st.integers(0, si.shape[-1] - 1))
    dim = d["scatter_dims_to_operand_dims"][k]
    w = wsize.get(dim, 1)
    below = signed and draw(st.booleans())
    si[pos + (k,)] = -(w + draw(st.integers(0, 2))) if below else in_shape[dim] + draw(st.integers(0, 2))


@st.composite
def scatter_case(draw, body: str):
    in_shape, si, up_shape, d, seed = draw(scatter_cases(ivd_last=True, in_bounds=True))
    types = [t for t in ALL_TYPES if not (t == "i1" and body in ("add", "multiply"))]  # jax: no bool add
    et = draw(st.sampled_from(types))
    free = order_free(body, et)
    mode = draw(st.sampled_from(["clip", "fill_or_drop"] if free else ["fill_or_drop"]))
    idt = np.dtype(draw(st.sampled_from(SCATTER_INDEX_TYPES)))
    signed = idt.kind == "i"
    si = si.astype(np.int64)
    wsize = window_sizes(in_shape, up_shape, d)
    positions = list(np.ndindex(*si.shape[:-1]))
    if mode == "clip":
        # anywhere, partly out of bounds too: jax clamps each start so its window fits
        for pos in positions:
            if draw(st.integers(0, 3)) == 0:
                k = draw(st.integers(0, si.shape[-1] - 1))
                si[pos + (k,)] += draw(st.integers(-3 if signed else 0, 3))
        si = np.maximum(si, 0) if not signed else si
    else:
        reached: set[tuple[int, ...]] = set()
        for pos in positions:
            if draw(st.integers(0, 4)) == 0:
                push_out(si, pos, in_shape, wsize, d, draw, signed)
            t = window_targets(in_shape, si, up_shape, d, pos)
            if not free and t & reached:
                push_out(si, pos, in_shape, wsize, d, draw, signed)
                t = set()
            reached |= t
    si = si.astype(idt)
    x = make_values(et, in_shape, seed, 0.3)
    u = make_values(et, up_shape, seed + 1, 0.3)
    dn = scatter_dimension_numbers(d)
    unique = not free and draw(st.booleans())  # the unique_indices attribute, when it is true
    label = (f"scatter {body} {mode} {et} operand={in_shape} indices={si.shape}:{idt} updates={up_shape} "
             f"{d} unique={unique} seed={seed} starts={si.ravel().tolist()}")
    fn = SCATTERS[body]
    return Case(label, lambda a, i, b: fn(a, i, b, dn, unique_indices=unique, mode=MODES[mode]),
                [x, si, u], "scatter", variant=body)


@settings(max_examples=100, deadline=None)
@given(st.tuples(*(scatter_case(b) for b in sorted(SCATTERS))))
def test_scatter_matches_xla(cases):
    """A program per example: one case of each update body."""
    run_cases(cases)

