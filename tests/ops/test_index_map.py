"""The index arithmetic gather and scatter share (hlolab.ops.index_map), on real values.

The numbers come from the spec's gather examples (start_indices 2x3x2 with
index_vector_dim = 2, and the batching example with operand_batching_dims = [0]),
XLA's scatter window example and hand-worked cases.
"""

from __future__ import annotations

import numpy as np

from hlolab.ops import index_map


def ints(xs) -> list:
    """Index arrays (or 0-d arrays) as plain Python values, for exact comparison."""
    return [np.asarray(x).tolist() for x in xs]


def test_index_grid_is_sparse_int64():
    g = index_map.index_grid((2, 3))
    assert [x.shape for x in g] == [(2, 1), (1, 3)]
    assert all(x.dtype == np.int64 for x in g)
    assert ints(g) == [[[0], [1]], [[0, 1, 2]]]


def test_one_index_is_zero_d_int64():
    one = index_map.one_index((4, 0, 7))
    assert all(x.shape == () and x.dtype == np.int64 for x in one)
    assert ints(one) == [4, 0, 7]


def test_indices_as_int64_caps_ui64_only():
    a = np.array([0, 5, 2**63, 2**64 - 1], dtype=np.uint64)
    assert index_map.indices_as_int64(a, 2**62).tolist() == [0, 5, 2**62, 2**62]
    assert index_map.indices_as_int64(a, 2**63 - 1).tolist() == [0, 5, 2**63 - 1, 2**63 - 1]
    # signed values are exact (scatter clips them itself), int64 input is not copied
    s = np.array([-7, 3], dtype=np.int8)
    got = index_map.indices_as_int64(s, 2)
    assert got.dtype == np.int64 and got.tolist() == [-7, 3]
    i64 = np.array([1, 2], dtype=np.int64)
    assert index_map.indices_as_int64(i64, 2**62) is i64


def test_index_at_picks_dims_in_order():
    result_index = index_map.one_index((1, 2, 3, 4))
    assert ints(index_map.index_at(result_index, [0, 2])) == [1, 3]   # batch_index
    assert ints(index_map.index_at(result_index, [3, 1])) == [4, 2]   # order of dims kept
    assert index_map.index_at(result_index, []) == []


def test_batch_position_skips_index_vector_dim():
    # start_indices dims 0, 1, 3 around index_vector_dim = 2 are batch dims 0, 1, 2
    assert [index_map.batch_position(d, 2) for d in (0, 1, 3)] == [0, 1, 2]
    # index_vector_dim = rank: nothing to skip
    assert [index_map.batch_position(d, 3) for d in (0, 1, 2)] == [0, 1, 2]


def test_start_index_positions_insert_index_vector_dim():
    batch_index = index_map.one_index((1, 2))
    # start_indices[1, :, 2] with index_vector_dim = 1 and two components
    pos = index_map.start_index_positions(batch_index, 1, 3, 2)
    assert [ints(p) for p in pos] == [[1, 0, 2], [1, 1, 2]]
    # index_vector_dim = rank(start_indices): [start_indices[batch_index]]
    pos = index_map.start_index_positions(batch_index, 2, 2, 1)
    assert [ints(p) for p in pos] == [[1, 2]]


def test_start_index_positions_read_the_spec_example():
    # gather spec example: start_indices 2x3x2, index_vector_dim = 2, batch_index = [1, 2]
    start_indices = np.array([[[0, 0], [1, 0], [2, 1]], [[0, 1], [1, 1], [0, 9]]])
    pos = index_map.start_index_positions(index_map.one_index((1, 2)), 2, 3, 2)
    assert [int(start_indices[p]) for p in pos] == [0, 9]


def test_index_vectors_moves_vector_dim_last():
    a = np.arange(24).reshape(2, 3, 4)
    v = index_map.index_vectors(a, 1)
    assert v.shape == (2, 4, 3) and v[1, 2].tolist() == a[1, :, 2].tolist()
    assert np.shares_memory(v, a)
    # index_vector_dim = rank: every element is a vector of one
    s = index_map.index_vectors(a, 3)
    assert s.shape == (2, 3, 4, 1) and s[1, 2, 3, 0] == a[1, 2, 3]


def test_start_index_on_grid_matches_positions():
    # a rank-3 grid whose batch dims 0 and 2 run over the index tensor's batch dims 0 and 1
    si = np.array([[[3, 7], [1, 2], [5, 6]], [[0, 4], [8, 9], [2, 2]]], dtype=np.int64)  # 2x3x2, ivd 2
    batch_dims, rank = [0, 2], 3
    grid = index_map.index_grid((2, 4, 3))
    on_grid = index_map.start_index_on_grid(si, 2, batch_dims, rank)
    positions = index_map.start_index_positions(index_map.index_at(grid, batch_dims), 2, 3, 2)
    assert len(on_grid) == 2
    for view, pos in zip(on_grid, positions, strict=True):
        assert view.shape == (2, 1, 3) and np.shares_memory(view, si)
        assert np.array_equal(np.broadcast_to(view, (2, 4, 3)), np.broadcast_to(si[pos], (2, 4, 3)))
    # result index (i, j, k) reads start_indices[i, k, :]
    assert int(on_grid[1][0, 0, 1]) == si[0, 1, 1] == 2


def test_full_start_index_places_components():
    # start_index_map = [2, 1], start_index = [0, 9] into an operand of rank 4
    got = index_map.full_start_index(list(index_map.one_index((0, 9))), (2, 1), 4)
    assert ints(got) == [0, 9, 0, 0]
    assert ints(index_map.full_start_index([], (), 2)) == [0, 0]


def test_full_batching_index_reads_batch_index():
    # operand_batching_dims = [0], start_indices_batching_dims = [1], index_vector_dim = 3:
    # full_batching_index[0] = batch_index[1 - 0]
    batch_index = list(index_map.one_index((5, 6, 7)))
    got = index_map.full_batching_index(batch_index, (0,), (1,), 3, 4)
    assert ints(got) == [6, 0, 0, 0]
    # d_start past index_vector_dim: batch_index[d_start - 1]
    got = index_map.full_batching_index(batch_index, (3, 1), (3, 0), 1, 4)
    assert ints(got) == [0, 5, 0, 7]


def test_full_offset_index_inserts_zeros():
    offset_index = list(index_map.one_index((1, 2)))
    # collapsed_slice_dims = [1], operand_batching_dims = [0]: [0, 0, oi0, oi1]
    assert ints(index_map.full_offset_index(offset_index, (1,), (0,), 4)) == [0, 0, 1, 2]
    # XLA's scatter example: window dims fill operand dims 1, 3, 4, 5 (inserted 0, 2)
    window = list(index_map.one_index((5, 6, 7, 8)))
    assert ints(index_map.full_offset_index(window, (0, 2), (), 6)) == [0, 5, 0, 6, 7, 8]


def test_operand_index_sums_and_broadcasts():
    g = index_map.index_grid((2, 3))
    start = [np.asarray(10), np.asarray(0)]
    batching = [np.asarray(0), np.asarray(0)]
    got = index_map.operand_index(start, batching, [g[0], g[1]])
    assert [np.broadcast_to(x, (2, 3)).tolist() for x in got] == [[[10] * 3, [11] * 3],
                                                                  [[0, 1, 2], [0, 1, 2]]]


def test_spec_gather_example_end_to_end():
    # the gather spec example, result_index = [1, 1, 1, 0, 1] (batching example):
    # operand 2x3x4x2, start_indices 2x2x3x2, offset_dims = [3, 4], collapsed_slice_dims = [1],
    # operand_batching_dims = [0], start_indices_batching_dims = [1], start_index_map = [2, 1],
    # index_vector_dim = 3
    start_indices = np.array([[[[0, 0], [1, 0], [2, 1]], [[0, 1], [1, 1], [0, 9]]],
                              [[[0, 0], [2, 1], [2, 2]], [[1, 2], [0, 1], [1, 0]]]])
    result_index = index_map.one_index((1, 1, 1, 0, 1))
    batch_index = index_map.index_at(result_index, [0, 1, 2])
    pos = index_map.start_index_positions(batch_index, 3, 4, 2)
    start_index = [start_indices[p] for p in pos]
    assert ints(start_index) == [0, 1]  # start_indices[1, 1, 1, :]
    fs = index_map.full_start_index(start_index, (2, 1), 4)
    fb = index_map.full_batching_index(batch_index, (0,), (1,), 3, 4)
    fo = index_map.full_offset_index(index_map.index_at(result_index, [3, 4]), (1,), (0,), 4)
    assert (ints(fs), ints(fb), ints(fo)) == ([0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 1])
    assert ints(index_map.operand_index(fs, fb, fo)) == [1, 1, 0, 1]
