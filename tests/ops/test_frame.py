"""The padded / dilated frame (hlolab.ops.frame): shapes with cropping, interior padding
and empty dims; classification against a slow per-element reference; materialize against
the spec's pad written element by element; FrameMap using the same geometry."""

from __future__ import annotations

import ast
import itertools

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hlolab.errors import ExecutionError
from hlolab.numerics import to_bits
from hlolab.ops import frame as frame_module
from hlolab.ops.frame import (
    AT_HOLE,
    AT_OPERAND,
    AT_PADDING,
    HOLE,
    OPERAND,
    PAD_KINDS,
    PADDING_HIGH,
    PADDING_LOW,
    POSITION_KINDS,
    PaddedFrame,
    dilated_size,
    is_operand,
    padded_size,
    position_kind,
)
from hlolab.trace.provenance import FrameMap
from tests.conftest import REPO

# --- slow references, one element at a time --------------------------------------------


def ref_dim_kind(p: int, n: int, low: int, interior: int) -> tuple[int | None, str]:
    """(operand index, kind) of frame position ``p`` along one dim, by looking for the
    operand element placed there (``low + j * (interior + 1)``)."""
    for j in range(n):
        if low + j * (interior + 1) == p:
            return j, "operand"
    if p < low:
        return None, "padding_low"
    if n == 0 or p > low + (n - 1) * (interior + 1):
        return None, "padding_high"
    return None, "hole"


def ref_position_kind(dims: list[str]) -> str:
    if any(k.startswith("padding") for k in dims):
        return "padding"
    return "hole" if "hole" in dims else "operand"


def ref_pad(x: np.ndarray, fill, low, high, interior) -> np.ndarray:
    """The spec's pad: every operand element at ``low + index * (interior + 1)`` when that
    position lies inside the result, ``fill`` everywhere else."""
    shape = [lo + (0 if n == 0 else (n - 1) * (i + 1) + 1) + hi
             for n, lo, hi, i in zip(x.shape, low, high, interior, strict=True)]
    out = np.full([max(0, s) for s in shape], fill, dtype=x.dtype)
    for j in itertools.product(*(range(n) for n in x.shape)):
        pos = tuple(lo + jj * (i + 1) for jj, lo, i in zip(j, low, interior, strict=True))
        if all(0 <= p < s for p, s in zip(pos, shape, strict=True)):
            out[pos] = x[j]
    return out


@st.composite
def frames(draw, max_rank: int = 3) -> PaddedFrame:
    rank = draw(st.integers(0, max_rank))
    dims = st.lists(st.integers(0, 4), min_size=rank, max_size=rank)
    pads = st.lists(st.integers(-5, 4), min_size=rank, max_size=rank)
    interior = st.lists(st.integers(0, 3), min_size=rank, max_size=rank)
    return PaddedFrame(tuple(draw(dims)), tuple(draw(pads)), tuple(draw(pads)), tuple(draw(interior)))


# --- shapes ------------------------------------------------------------------------------


def test_shape_with_interior_and_edges():
    f = PaddedFrame((3,), (1,), (2,), (1,))  # 1 + [a . b . c] + 2
    assert f.dilated_shape == (5,) and f.padded_shape == (8,) and f.shape == (8,)
    assert f.step == (2,) and f.rank == 1


def test_shape_with_negative_edges_crops():
    f = PaddedFrame((5, 3), (-2, 1), (-1, -3), (0, 1))
    assert f.dilated_shape == (5, 5)
    assert f.shape == (2, 3)  # -2 + 5 - 1; 1 + 5 - 3


def test_shape_cropped_below_zero_is_empty():
    f = PaddedFrame((2,), (-5,), (0,), (0,))
    assert f.padded_shape == (-3,)  # the spec's formula, as reduce_window's num_windows reads it
    assert f.shape == (0,)


def test_shape_of_empty_dims_and_rank_zero():
    f = PaddedFrame((0, 2), (2, 0), (1, 0), (3, 0))
    assert f.dilated_shape == (0, 2) and f.shape == (3, 2)  # an empty dim dilates to nothing
    assert dilated_size(0, 5) == 0 and padded_size(0, 1, 1, 9) == 2
    g = PaddedFrame((), (), (), ())
    assert g.shape == () and g.classify(()) == ((), ())


def test_frame_checks_its_arguments():
    with pytest.raises(ValueError, match="rank"):
        PaddedFrame((2, 2), (0,), (0, 0), (0, 0))
    with pytest.raises(ValueError, match="interior"):
        PaddedFrame((2,), (0,), (0,), (-1,))


def test_along_puts_the_frame_on_some_axes():
    f = PaddedFrame((3,), (1,), (-1,), (1,)).along((1,), (2, 3, 4))
    assert f == PaddedFrame((2, 3, 4), (0, 1, 0), (0, -1, 0), (0, 1, 0))
    assert f.shape == (2, 5, 4)


@given(frames())
def test_fitting_rebuilds_a_frame_from_its_shape(f):
    g = PaddedFrame.fitting(f.operand_shape, f.low, f.step, f.shape)
    assert g.shape == f.shape and g.low == f.low and g.interior == f.interior
    if all(s >= 0 for s in f.padded_shape):
        assert g == f


# --- classification ---------------------------------------------------------------------


def test_classify_one_dim_with_cropping_and_holes():
    f = PaddedFrame((3,), (-1,), (0,), (1,))  # [a . b . c] without its first position
    q, (kind,) = f.classify((np.arange(-2, 6),))  # positions -2..5; the frame is 0..3
    assert [PAD_KINDS[k] for k in kind] == ["padding_low", "operand", "hole", "operand", "hole",
                                            "operand", "padding_high", "padding_high"]
    assert q[0][[1, 3, 5]].tolist() == [0, 1, 2]
    assert f.shape == (4,)


def test_padding_in_any_dim_wins_over_a_hole():
    f = PaddedFrame((2, 2), (0, 0), (0, 1), (1, 0))  # rows: a . b; cols: a b +pad
    _, kinds = f.classify(np.indices(f.shape, sparse=True))
    at = position_kind(kinds)
    assert at.tolist() == [[AT_OPERAND, AT_OPERAND, AT_PADDING],
                           [AT_HOLE, AT_HOLE, AT_PADDING],
                           [AT_OPERAND, AT_OPERAND, AT_PADDING]]
    assert is_operand(kinds).tolist() == [[True, True, False], [False, False, False],
                                          [True, True, False]]


@given(frames(), st.data())
def test_classify_matches_the_per_element_reference(f, data):
    # positions inside the frame and a few outside it (windows may reach there)
    ranges = [range(-2, max(s, 0) + 2) for s in f.padded_shape]
    grid = np.indices([len(r) for r in ranges], dtype=np.int64) if ranges else []
    position = tuple(g + r.start for g, r in zip(grid, ranges, strict=True))
    q, kinds = f.classify(position)
    at = position_kind(kinds)
    for e in itertools.product(*(range(len(r)) for r in ranges)):
        p = tuple(int(position[d][e]) for d in range(f.rank))
        ref = [ref_dim_kind(p[d], f.operand_shape[d], f.low[d], f.interior[d]) for d in range(f.rank)]
        assert [PAD_KINDS[int(kinds[d][e])] for d in range(f.rank)] == [k for _, k in ref]
        for d, (j, _) in enumerate(ref):
            if j is not None:
                assert int(q[d][e]) == j
        assert POSITION_KINDS[int(at[e])] == ref_position_kind([k for _, k in ref])
        if all(j is not None for j, _ in ref):
            assert f.to_frame([j for j, _ in ref]) == p


def test_dim_kind_codes():
    assert PAD_KINDS[OPERAND] == "operand" and PAD_KINDS[PADDING_LOW] == "padding_low"
    assert PAD_KINDS[PADDING_HIGH] == "padding_high" and PAD_KINDS[HOLE] == "hole"


# --- materialize ------------------------------------------------------------------------


def test_materialize_spec_example():
    x = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int32)
    got = PaddedFrame(x.shape, (0, 1), (2, 1), (1, 2)).materialize(x, 0)
    assert got.tolist() == [[0, 1, 0, 0, 2, 0, 0, 3, 0],
                            [0, 0, 0, 0, 0, 0, 0, 0, 0],
                            [0, 4, 0, 0, 5, 0, 0, 6, 0],
                            [0, 0, 0, 0, 0, 0, 0, 0, 0],
                            [0, 0, 0, 0, 0, 0, 0, 0, 0]]


def test_materialize_negative_padding_crops():
    x = np.arange(1, 6, dtype=np.float32)
    got = PaddedFrame(x.shape, (-3,), (-2,), (1,)).materialize(x, -1)  # 1 . 2 . 3 . 4 . 5
    assert got.tolist() == [-1, 3, -1, 4]


def test_materialize_nothing_to_pad_is_the_operand_itself():
    x = np.ones((2, 3), dtype=np.float32)
    assert PaddedFrame(x.shape, (0, 0), (0, 0), (0, 0)).materialize(x, 0) is x


def test_materialize_refuses_a_frame_over_the_budget_before_allocating():
    x = np.zeros((8, 8), dtype=np.float32)
    with pytest.raises(ExecutionError) as e:
        PaddedFrame(x.shape, (1, 1), (1, 1), (0, 0)).materialize(x, 0, budget=99)
    assert "the padded input [10, 10] has 100 elements, over the budget of 99" in str(e.value)
    huge = PaddedFrame(x.shape, (2**20, 2**20), (0, 0), (0, 0))  # 2^40 elements: never allocated
    with pytest.raises(ExecutionError, match="over the budget of 268435456"):
        huge.materialize(x, 0)


@given(frames(), st.sampled_from([np.float32, np.int8, np.bool_, ml_dtypes.bfloat16]), st.data())
def test_materialize_matches_the_spec_pad(f, dtype, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    x = rng.integers(-50, 50, size=f.operand_shape).astype(dtype)
    fill = np.asarray(7).astype(dtype)[()]
    got = f.materialize(x, fill)
    want = ref_pad(x, fill, f.low, f.high, f.interior)
    assert got.dtype == want.dtype and got.shape == want.shape == f.shape
    assert np.array_equal(to_bits(got) if dtype == ml_dtypes.bfloat16 else got,
                          to_bits(want) if dtype == ml_dtypes.bfloat16 else want)


# --- FrameMap (the front end's type) uses the same geometry -----------------------------


@given(frames())
def test_frame_map_kinds_and_operand_index_agree_with_the_frame(f):
    fm = FrameMap.of(0, f)
    _, kinds = f.classify(np.indices(f.shape, sparse=True))
    assert np.array_equal(fm.kinds(f.operand_shape), np.broadcast_to(position_kind(kinds), f.shape))
    q, _ = f.classify(np.indices(f.shape))
    assert all(np.array_equal(a, b) for a, b in zip(fm.operand_index(), q, strict=True))


def test_frame_map_padding_wins_over_a_hole():
    fm = FrameMap(0, (4, 3), (1, 0), (2, 1))  # rows: pad a . b; cols: a b + pad
    assert fm.kinds((2, 2)).tolist() == [[1, 1, 1], [0, 0, 1], [2, 2, 1], [0, 0, 1]]
    assert fm.to_frame((1, 1)) == (3, 1)


def test_frame_module_is_a_leaf():
    """provenance.py imports it: it must not import hlolab.ops or hlolab.trace modules."""
    tree = ast.parse((REPO / "hlolab" / "ops" / "frame.py").read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert {m for m in imported if m and m.startswith("hlolab")} <= {"hlolab.errors", "hlolab.limits"}
    assert frame_module.__name__ == "hlolab.ops.frame"
