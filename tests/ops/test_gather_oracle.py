"""gather and dynamic_gather against XLA:CPU (through jax), bit-exact.

Two oracles:

* ``jax.lax.gather`` with ``GatherDimensionNumbers`` (batching dims included)
  in ``mode=clip`` and ``mode=promise_in_bounds``; jax always keeps the index
  vector last, so start_indices are moved to that layout first (which keeps
  the batch order, and so the result).
* The StableHLO text of exactly the op under test, compiled by XLA:CPU:
  any ``index_vector_dim`` (incl. ``rank(start_indices)``) and every start
  index type, with out-of-range starts that XLA clamps as the spec says.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

from hlolab.types import element_type_of_dtype, tensor_type
from tests.ops.test_gather import dynamic_gather, gather, gather_cases
from tests.xla_oracle import jax, run_xla  # skips this file without jax

lax = jax.lax


def tt(a_shape, dtype) -> str:
    return str(tensor_type(tuple(a_shape), element_type_of_dtype(np.dtype(dtype))))


def lst(xs) -> str:
    return "[" + ", ".join(str(x) for x in xs) + "]"


def gather_text(operand, idx, rshape, sizes, dims, dynamic: bool = False) -> str:
    dn = (f"#stablehlo.gather<offset_dims = {lst(dims['offset_dims'])}, collapsed_slice_dims = "
          f"{lst(dims['collapsed_slice_dims'])}, operand_batching_dims = "
          f"{lst(dims['operand_batching_dims'])}, start_indices_batching_dims = "
          f"{lst(dims['start_indices_batching_dims'])}, start_index_map = "
          f"{lst(dims['start_index_map'])}, index_vector_dim = {dims['index_vector_dim']}>")
    a0, a1, r = tt(operand.shape, operand.dtype), tt(idx.shape, idx.dtype), tt(rshape, operand.dtype)
    if dynamic:
        # XLA translates dynamic_gather only with constant slice_sizes
        a2 = tt((len(sizes),), np.int64)
        const = f"%a2 = stablehlo.constant dense<{lst(sizes)}> : {a2}\n  "
        op = (const + f'%r = "stablehlo.dynamic_gather"(%a0, %a1, %a2) {{dimension_numbers = {dn}, '
              f"indices_are_sorted = false}} : ({a0}, {a1}, {a2}) -> {r}")
        params = f"%a0: {a0}, %a1: {a1}"
    else:
        ss = "array<i64" + (": " + ", ".join(str(z) for z in sizes) if sizes else "") + ">"
        op = (f'%r = "stablehlo.gather"(%a0, %a1) {{dimension_numbers = {dn}, slice_sizes = {ss}, '
              f"indices_are_sorted = false}} : ({a0}, {a1}) -> {r}")
        params = f"%a0: {a0}, %a1: {a1}"
    return (f"func.func public @main({params}) -> ({r}) {{\n  {op}\n"
            f"  return %r : {r}\n}}")


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@settings(max_examples=60)
@given(gather_cases())
def test_stablehlo_text_on_xla(case):
    operand, idx, rshape, sizes, dims = case
    ours = gather(operand, idx, rshape, sizes, **dims).out
    (ref,) = run_xla(gather_text(operand, idx, rshape, sizes, dims), operand, idx)
    assert same_bits(ours, ref), (ours, ref)


@settings(max_examples=25)
@given(gather_cases())
def test_dynamic_gather_text_on_xla(case):
    operand, idx, rshape, sizes, dims = case
    ours = dynamic_gather(operand, idx, sizes, rshape, **dims).out
    (ref,) = run_xla(gather_text(operand, idx, rshape, sizes, dims, dynamic=True), operand, idx)
    assert same_bits(ours, ref), (ours, ref)


def lax_layout(idx: np.ndarray, dims: dict) -> tuple[np.ndarray, tuple[int, ...]]:
    """start_indices with the index vector last, and the batching dims renumbered."""
    ivd = dims["index_vector_dim"]
    if ivd == idx.ndim:
        return idx[..., None], dims["start_indices_batching_dims"]
    moved = np.moveaxis(idx, ivd, -1)
    return moved, tuple(d if d < ivd else d - 1 for d in dims["start_indices_batching_dims"])


@settings(max_examples=60)
@given(gather_cases())
def test_lax_gather_clip_and_promise_in_bounds(case):
    operand, idx, rshape, sizes, dims = case
    ours = gather(operand, idx, rshape, sizes, **dims).out
    lax_idx, sib = lax_layout(idx.astype(np.int64), dims)
    dn = lax.GatherDimensionNumbers(offset_dims=dims["offset_dims"],
                                    collapsed_slice_dims=dims["collapsed_slice_dims"],
                                    start_index_map=dims["start_index_map"],
                                    operand_batching_dims=dims["operand_batching_dims"],
                                    start_indices_batching_dims=sib)
    for mode in (lax.GatherScatterMode.CLIP, lax.GatherScatterMode.PROMISE_IN_BOUNDS):
        ref = np.asarray(lax.gather(operand, lax_idx, dn, sizes, mode=mode))
        assert same_bits(ours, ref), (mode, ours, ref)


def test_lax_spec_example_batching():
    from tests.ops.test_gather import SPEC_DIMS, SPEC_INDICES, SPEC_OPERAND, spec_run

    dn = lax.GatherDimensionNumbers(offset_dims=(3, 4), collapsed_slice_dims=(1,),
                                    start_index_map=(2, 1), operand_batching_dims=(0,),
                                    start_indices_batching_dims=(1,))
    ref = np.asarray(lax.gather(SPEC_OPERAND, SPEC_INDICES, dn, (1, 1, 2, 2),
                                mode=lax.GatherScatterMode.CLIP))
    assert same_bits(spec_run().out, ref)
    assert SPEC_DIMS["index_vector_dim"] == 3


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16", "int8", "uint64", "complex64",
                                   "bool", "float8_e4m3fn"])
def test_operand_types_on_xla(dtype):
    import ml_dtypes

    dt = np.dtype(getattr(ml_dtypes, dtype, None) or dtype)
    raw = np.random.default_rng(7).integers(0, 256, size=(5, 6, 4), dtype=np.uint8)
    operand = (raw % 2).astype(dt) if dt == np.bool_ else raw.astype(dt)
    if dt == np.float32:
        operand.reshape(-1)[:3] = np.array([0x7FC00001, 0x80000000, 0x00000001],
                                           np.uint32).view(np.float32)
    idx = np.array([[[0, 4], [9, -1]], [[2, 2], [-7, 3]]], np.int32)
    dims = dict(offset_dims=(2, 3), collapsed_slice_dims=(0,), operand_batching_dims=(),
                start_indices_batching_dims=(), start_index_map=(0, 2), index_vector_dim=2)
    rshape, sizes = (2, 2, 3, 2), (1, 3, 2)
    ours = gather(operand, idx, rshape, sizes, **dims).out
    (ref,) = run_xla(gather_text(operand, idx, rshape, sizes, dims), operand, idx)
    assert same_bits(ours, ref)
