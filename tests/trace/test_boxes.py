"""Boxes: boolean masks as disjoint axis-aligned boxes, and their text form."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from hlolab.trace.boxes import boxes_to_mask, format_box, format_mask, mask_to_boxes


def _mask(shape, *slices):
    m = np.zeros(shape, dtype=bool)
    for s in slices:
        m[s] = True
    return m


def _hole():
    m = np.ones((6, 6), dtype=bool)
    m[2:4, 2:4] = False
    return m


def _checker(n):
    i, j = np.indices((n, n))
    return (i + j) % 2 == 0


CASES = {
    "full 784x10": (np.ones((784, 10), bool), [((0, 784), (0, 10))]),
    "empty": (np.zeros((5, 7), bool), []),
    "single element": (_mask((5, 7), (2, 3)), [((2, 3), (3, 4))]),
    "row": (_mask((5, 7), (2, slice(None))), [((2, 3), (0, 7))]),
    "column": (_mask((784, 10), (slice(None), 3)), [((0, 784), (3, 4))]),
    "rectangle": (_mask((5, 7), np.s_[1:4, 2:6]), [((1, 4), (2, 6))]),
    "rectangle with hole": (_hole(), [((0, 2), (0, 6)), ((2, 4), (0, 2)), ((2, 4), (4, 6)),
                                      ((4, 6), (0, 6))]),
    "L-shape": (_mask((6, 6), np.s_[0:5, 0:2], np.s_[3:5, 0:6]), [((0, 3), (0, 2)), ((3, 5), (0, 6))]),
    "strided columns": (_mask((4, 6), np.s_[:, ::2]), [((0, 4), (0, 1)), ((0, 4), (2, 3)),
                                                        ((0, 4), (4, 5))]),
    "strided rows": (_mask((5, 3), np.s_[::2, :]), [((0, 1), (0, 3)), ((2, 3), (0, 3)), ((4, 5), (0, 3))]),
    "checkerboard 4x4": (_checker(4), [((0, 1), (0, 1)), ((0, 1), (2, 3)), ((1, 2), (1, 2)),
                                       ((1, 2), (3, 4)), ((2, 3), (0, 1)), ((2, 3), (2, 3)),
                                       ((3, 4), (1, 2)), ((3, 4), (3, 4))]),
    # Axis-0 splitting alone gives 3 boxes (rows 0:3 twice, rows 3:6 once); the merge joins columns 0:2.
    "merge across runs": (_mask((6, 8), np.s_[0:6, 0:2], np.s_[0:3, 5:7]),
                          [((0, 6), (0, 2)), ((0, 3), (5, 7))]),
    "plus": (_mask((8, 8), np.s_[3:5, :], np.s_[:, 3:5]),
             [((0, 3), (3, 5)), ((3, 5), (0, 8)), ((5, 8), (3, 5))]),
    "rank 0 true": (np.array(True), [()]),
    "rank 0 false": (np.array(False), []),
    "rank 1": (np.array([0, 1, 1, 0, 1, 1, 1], bool), [((1, 3),), ((4, 7),)]),
    "rank 1 full": (np.ones(9, bool), [((0, 9),)]),
    "rank 3 block": (_mask((3, 4, 5), np.s_[1:3, 0:2, 2:5]), [((1, 3), (0, 2), (2, 5))]),
    "rank 3 two slabs": (_mask((4, 3, 3), np.s_[0, :, :], np.s_[3, :, :]),
                         [((0, 1), (0, 3), (0, 3)), ((3, 4), (0, 3), (0, 3))]),
    # The 3x3 window of out[1, :, 2, 3] of a stride-1 conv over an NCHW input with 3 channels.
    "rank 4 conv window": (_mask((2, 3, 8, 8), np.s_[1, :, 2:5, 3:6]), [((1, 2), (0, 3), (2, 5), (3, 6))]),
    "rank 6 full": (np.ones((2, 1, 3, 1, 2, 2), bool), [((0, 2), (0, 1), (0, 3), (0, 1), (0, 2), (0, 2))]),
    "zero-size dim": (np.zeros((0, 3), bool), []),
}


@pytest.mark.parametrize("name", list(CASES))
def test_hand_written(name):
    mask, expected = CASES[name]
    boxes, rest = mask_to_boxes(mask)
    assert boxes == expected
    assert rest == 0
    assert np.array_equal(boxes_to_mask(boxes, mask.shape), mask)


def test_dilated_conv_window_is_one_box_per_element():
    # rhs_dilation 2: the 3x3 window taps rows 2,4,6 and cols 3,5,7 -> no two taps touch.
    mask = _mask((2, 3, 8, 8), np.s_[0, 0, 2:7:2, 3:8:2])
    boxes, _ = mask_to_boxes(mask)
    assert boxes == [((0, 1), (0, 1), (r, r + 1), (c, c + 1)) for r in (2, 4, 6) for c in (3, 5, 7)]


def test_boxes_are_plain_ints_for_json():
    boxes, rest = mask_to_boxes(_mask((5, 7), np.s_[1:4, 2:6]))
    assert json.dumps({"boxes": boxes, "rest": rest}) == '{"boxes": [[[1, 4], [2, 6]]], "rest": 0}'
    back = json.loads(json.dumps(boxes))
    assert np.array_equal(boxes_to_mask(back, (5, 7)), _mask((5, 7), np.s_[1:4, 2:6]))


def test_large_block_in_large_mask():
    mask = _mask((1000, 1000), np.s_[100:400, 200:600])
    assert mask_to_boxes(mask) == ([((100, 400), (200, 600))], 0)


# -- limit ---------------------------------------------------------------------

def test_limit_cuts_in_row_major_order_and_counts_the_rest():
    mask = _hole()  # 32 True: boxes of 12, 4, 4, 12 elements
    assert mask_to_boxes(mask, limit=2) == ([((0, 2), (0, 6)), ((2, 4), (0, 2))], 16)
    assert mask_to_boxes(mask, limit=3) == ([((0, 2), (0, 6)), ((2, 4), (0, 2)), ((2, 4), (4, 6))], 12)
    assert mask_to_boxes(mask, limit=0) == ([], 32)
    assert mask_to_boxes(mask, limit=4) == (CASES["rectangle with hole"][1], 0)
    assert mask_to_boxes(mask, limit=100) == (CASES["rectangle with hole"][1], 0)


def test_limit_rank0_and_negative():
    assert mask_to_boxes(np.array(True), limit=0) == ([], 1)
    assert mask_to_boxes(np.array(True), limit=1) == ([()], 0)
    with pytest.raises(ValueError, match="limit"):
        mask_to_boxes(np.ones(3, bool), limit=-1)


def test_limit_on_large_checkerboard():
    boxes, rest = mask_to_boxes(_checker(1000), limit=3)
    assert boxes == [((0, 1), (0, 1)), ((0, 1), (2, 3)), ((0, 1), (4, 5))]
    assert rest == 500_000 - 3


# -- properties ----------------------------------------------------------------

masks = st.integers(0, 4).flatmap(
    lambda r: hnp.arrays(bool, hnp.array_shapes(min_dims=r, max_dims=r, min_side=1, max_side=6)
                         if r else st.just(())))


@given(masks)
def test_round_trip_disjoint_and_small(mask):
    boxes, rest = mask_to_boxes(mask)
    assert rest == 0
    assert np.array_equal(boxes_to_mask(boxes, mask.shape), mask)
    # Disjoint: the volumes add up to exactly the number of True elements (the union is the mask).
    assert sum(int(np.prod([b - a for a, b in box])) for box in boxes) == int(mask.sum())
    assert len(boxes) <= int(mask.sum())
    assert all(a < b for box in boxes for a, b in box)
    origins = [tuple(a for a, _ in box) for box in boxes]
    assert origins == sorted(origins)
    # Fixpoint of the merge: no two boxes agree on all dims but one and touch along it.
    for i, p in enumerate(boxes):
        for q in boxes[i + 1:]:
            diff = [d for d in range(mask.ndim) if p[d] != q[d]]
            if len(diff) == 1:
                (d,) = diff
                assert p[d][1] != q[d][0] and q[d][1] != p[d][0]


@given(masks, st.integers(0, 10))
def test_limit_is_a_prefix(mask, limit):
    full, _ = mask_to_boxes(mask)
    boxes, rest = mask_to_boxes(mask, limit=limit)
    assert boxes == full[:limit]
    assert rest == int(mask.sum()) - int(boxes_to_mask(boxes, mask.shape).sum())


# -- text ----------------------------------------------------------------------

@pytest.mark.parametrize("box, text", [
    (((0, 784), (3, 4)), "0:784, 3"),
    ((), ""),
    (((2, 3),), "2"),
    (((0, 2), (5, 6), (1, 4)), "0:2, 5, 1:4"),
])
def test_format_box(box, text):
    assert format_box(box) == text


def test_format_mask_column_full_scalar_empty():
    assert format_mask("%arg0", CASES["column"][0]) == ["%arg0[0:784, 3]"]
    assert format_mask("%arg0", np.ones((784, 10), bool)) == ["%arg0[0:784, 0:10] (all)"]
    assert format_mask("%arg0", np.array(True)) == ["%arg0"]
    assert format_mask("%arg0", np.zeros((3, 3), bool)) == ["%arg0 (no elements)"]
    assert format_mask("%w", _hole()) == ["%w[0:2, 0:6]", "%w[2:4, 0:2]", "%w[2:4, 4:6]", "%w[4:6, 0:6]"]


def test_format_mask_limit():
    assert format_mask("%x", _checker(4), limit=3) == ["%x[0, 0]", "%x[0, 2]", "%x[1, 1]",
                                                      "… and 5 more elements"]
    assert format_mask("%x", _checker(4), limit=7) == ["%x[0, 0]", "%x[0, 2]", "%x[1, 1]", "%x[1, 3]",
                                                      "%x[2, 0]", "%x[2, 2]", "%x[3, 1]",
                                                      "… and 1 more element"]
    assert len(format_mask("%x", _checker(4), limit=8)) == 8


def test_boxes_to_mask_rank_mismatch():
    with pytest.raises(ValueError, match="rank"):
        boxes_to_mask([((0, 1),)], (2, 2))
