"""The collective builder functions (hlolab/xla/collectives.py), run on process grids.

The XLA "Operation Semantics" documents' examples with numbers (../shared/seeds/000 and
001 CrossReplicaSum, 002 AllToAll, 004 AllGather / AllReduce / AllToAll /
ReduceScatter / CollectivePermute) are asserted per process; the rest checks what the
documents state in words (replica_groups order, CollectivePermute's zeros) with our
own numbers.
"""

from __future__ import annotations

import numpy as np
import pytest

from hlolab.errors import ExecutionError, HloLabError
from hlolab.ir.parser import parse_module
from hlolab.xla import (
    F32,
    S32,
    AllGather,
    AllReduce,
    AllToAll,
    BuilderError,
    CollectiveBroadcast,
    CollectivePermute,
    Compare,
    ConstantR0,
    CreateScalarAddComputation,
    CreateScalarMaxComputation,
    CrossReplicaSum,
    Infeed,
    Outfeed,
    Parameter,
    PartitionId,
    Recv,
    ReduceScatter,
    ReplicaId,
    Send,
    XlaBuilder,
)
from hlolab.xla.control import Conditional


def _one(name: str, shape: str, make):  # a computation of one parameter
    b = XlaBuilder(name)
    x = Parameter(b, 0, shape, "x")
    return b.build(make(x))


def _per_process(outs: list[list[np.ndarray]]) -> list[np.ndarray]:
    assert all(len(o) == 1 for o in outs)
    return [o[0] for o in outs]


def test_all_gather_doc_example():
    """004 AllGather: two replicas holding [1.0, 2.5] and [3.0, 5.25], all_gather_dim 0:
    [1.0, 2.5, 3.0, 5.25] on both."""
    c = _one("ag", "f32[2]", lambda x: AllGather(x, 0, 2))
    assert str(c.result_types[0]) == "tensor<4xf32>"
    outs = _per_process(c.run(np.array([[1.0, 2.5], [3.0, 5.25]], np.float32), grid=(2, 1)))
    for o in outs:
        np.testing.assert_array_equal(o, np.array([1.0, 2.5, 3.0, 5.25], np.float32))


def test_all_gather_replica_groups_order():
    """004: replica_groups {0, 2}, {1, 3} gathers replicas 0 and 2, and 1 and 3, in group order."""
    c = _one("ag", "s32[1,2]", lambda x: AllGather(x, 1, 2, [[2, 0], [1, 3]]))
    assert str(c.result_types[0]) == "tensor<1x4xi32>"
    xs = np.array([[[0, 1]], [[10, 11]], [[20, 21]], [[30, 31]]], np.int32)
    outs = _per_process(c.run(xs, grid=(4, 1)))
    np.testing.assert_array_equal(outs[0], [[20, 21, 0, 1]])
    np.testing.assert_array_equal(outs[2], [[20, 21, 0, 1]])
    np.testing.assert_array_equal(outs[1], [[10, 11, 30, 31]])
    np.testing.assert_array_equal(outs[3], [[10, 11, 30, 31]])


def test_all_reduce_doc_example():
    """004 AllReduce: [1.0, 2.5] and [3.0, 5.25] with an add computation: [4.0, 7.75] on both."""
    c = _one("ar", "f32[2]", lambda x: AllReduce(x, CreateScalarAddComputation(F32)))
    outs = _per_process(c.run(np.array([[1.0, 2.5], [3.0, 5.25]], np.float32), grid=(2, 1)))
    for o in outs:
        np.testing.assert_array_equal(o, np.array([4.0, 7.75], np.float32))


def test_all_reduce_groups_and_max():
    c = _one("ar", "s32[2]", lambda x: AllReduce(x, CreateScalarMaxComputation(S32), [[0, 2], [1, 3]]))
    xs = np.array([[1, 9], [5, 2], [7, 3], [4, 6]], np.int32)
    outs = _per_process(c.run(xs, grid=(4, 1)))
    for p, want in enumerate([[7, 9], [5, 6], [7, 9], [5, 6]]):
        np.testing.assert_array_equal(outs[p], want)


def test_all_reduce_tuple_operand():
    """004: a tuple operand reduces each element; the result is a tuple."""
    b = XlaBuilder("art")
    x = Parameter(b, 0, "f32[2]", "x")
    y = Parameter(b, 1, "f32[1]", "y")
    r = AllReduce([x, y], CreateScalarAddComputation(F32))
    assert isinstance(r, tuple) and len(r) == 2
    c = b.build(list(r))
    outs = c.run(np.array([[1, 2], [3, 4]], np.float32), np.array([[10], [20]], np.float32), grid=(2, 1))
    for o in outs:
        np.testing.assert_array_equal(o[0], [4, 6])
        np.testing.assert_array_equal(o[1], [30])


@pytest.mark.parametrize("doc_sum", [(2.5, 5.1)])
def test_cross_replica_sum_doc_example(doc_sum):
    """000/001/002 CrossReplicaSum: (1.0, 2.5) and (3.0, 5.1) on two replicas: (4.0, 7.6) on both."""
    c = _one("crs", "f32[2]", CrossReplicaSum)
    assert "stablehlo.add" in c.as_text() and "stablehlo.all_reduce" in c.as_text()
    outs = _per_process(c.run(np.array([[1.0, doc_sum[0]], [3.0, doc_sum[1]]], np.float32), grid=(2, 1)))
    for o in outs:
        np.testing.assert_allclose(o, [4.0, 7.6], rtol=1e-6)
        assert o[0] == np.float32(4.0)


def test_all_to_all_doc_example():
    """002/004 AllToAll: f32[4,16] on 4 cores, split_dimension 1, concat_dimension 0,
    split_count 4: each block is f32[4,4] and the result on each core is f32[16,4], the
    blocks concatenated in core order 0..3."""
    c = _one("alltoall", "f32[4,16]", lambda x: AllToAll(x, 1, 0, 4))
    assert str(c.result_types[0]) == "tensor<16x4xf32>"
    xs = (np.arange(4)[:, None, None] * 1000 + np.arange(64).reshape(4, 16)).astype(np.float32)
    outs = _per_process(c.run(xs, grid=(4, 1)))
    for j in range(4):
        assert outs[j].shape == (16, 4)
        for i in range(4):  # rows 4i..4i+3 on core j: core i's block j (columns 4j..4j+3)
            np.testing.assert_array_equal(outs[j][4 * i:4 * i + 4], xs[i][:, 4 * j:4 * j + 4])
    # one element by hand: core 2, row 5 (core 1's block), column 3 -> core 1's x[1, 2*4 + 3]
    assert outs[2][5, 3] == 1000 + 1 * 16 + 11


def test_all_to_all_replica_groups_order():
    """002/004: replica groups {1, 2, 3}, {4, 5, 0}: blocks concatenate in the group's order."""
    c = _one("a2a", "s32[3]", lambda x: AllToAll(x, 0, 0, 3, [[1, 2, 3], [4, 5, 0]]))
    xs = np.arange(18, dtype=np.int32).reshape(6, 3) + 100 * np.arange(6, dtype=np.int32)[:, None]
    outs = _per_process(c.run(xs, grid=(6, 1)))
    # replica 4 is slot 0 of {4, 5, 0}: it gets block 0 of replicas 4, 5, 0 in that order
    np.testing.assert_array_equal(outs[4], [xs[4][0], xs[5][0], xs[0][0]])
    # replica 0 is slot 2: block 2 of each
    np.testing.assert_array_equal(outs[0], [xs[4][2], xs[5][2], xs[0][2]])
    np.testing.assert_array_equal(outs[2], [xs[1][1], xs[2][1], xs[3][1]])


def test_all_to_all_variadic():
    b = XlaBuilder("a2av")
    x = Parameter(b, 0, "s32[2]", "x")
    y = Parameter(b, 1, "f32[2]", "y")
    r = AllToAll([x, y], 0, 0, 2)
    c = b.build(list(r))
    outs = c.run(np.array([[1, 2], [3, 4]], np.int32), np.array([[5, 6], [7, 8]], np.float32), grid=(2, 1))
    np.testing.assert_array_equal(outs[0][0], [1, 3])
    np.testing.assert_array_equal(outs[1][0], [2, 4])
    np.testing.assert_array_equal(outs[1][1], [6, 8])


def test_reduce_scatter_doc_example():
    """004 ReduceScatter: [1.0, 2.25] and [3.0, 5.25], scatter_dim 0: [4.0] on the first
    replica, [7.5] on the second."""
    c = _one("rs", "f32[2]", lambda x: ReduceScatter(x, CreateScalarAddComputation(F32), 0, 2))
    assert str(c.result_types[0]) == "tensor<1xf32>"
    outs = _per_process(c.run(np.array([[1.0, 2.25], [3.0, 5.25]], np.float32), grid=(2, 1)))
    np.testing.assert_array_equal(outs[0], [4.0])
    np.testing.assert_array_equal(outs[1], [7.5])


def test_collective_permute_zeros_where_no_source():
    """004 CollectivePermute: each pair sends source's operand to target; a replica that is
    no pair's target gets zeros."""
    c = _one("cp", "f32[2]", lambda x: CollectivePermute(x, [(0, 1), (1, 2)]))
    xs = np.array([[1, 2], [3, 4], [5, 6]], np.float32)
    outs = _per_process(c.run(xs, grid=(3, 1)))
    np.testing.assert_array_equal(outs[0], [0, 0])
    np.testing.assert_array_equal(outs[1], [1, 2])
    np.testing.assert_array_equal(outs[2], [3, 4])


def test_collective_broadcast():
    c = _one("cb", "f32[2]", lambda x: CollectiveBroadcast(x, [[1, 0]]))
    outs = _per_process(c.run(np.array([[1, 2], [3, 4], [5, 6]], np.float32), grid=(3, 1)))
    np.testing.assert_array_equal(outs[0], [3, 4])
    np.testing.assert_array_equal(outs[1], [3, 4])
    np.testing.assert_array_equal(outs[2], [0, 0])  # in no group


def test_replica_and_partition_ids_on_a_grid():
    b = XlaBuilder("ids")
    c = b.build([ReplicaId(b), PartitionId(b)])
    outs = c.run(grid=(2, 3))
    assert [(int(r), int(p)) for r, p in outs] == [(r, p) for r in range(2) for p in range(3)]
    assert outs[0][0].dtype == np.uint32


def test_channel_id_makes_all_reduce_cross_replica_and_partition():
    """The spec's modes: no channel_id is cross_replica (replicas {0, 1} of each partition:
    processes {0, 2} and {1, 3}); channel_id > 0 without use_global_device_ids is
    cross_replica_and_partition (replicas {0, 1} of every partition: all four)."""
    xs = np.array([[1], [2], [30], [40]], np.int32)
    plain = _one("ar", "s32[1]", lambda x: AllReduce(x, CreateScalarAddComputation(S32), [[0, 1]]))
    assert [int(o[0]) for o in _per_process(plain.run(xs, grid=(2, 2)))] == [31, 42, 31, 42]
    c = _one("arp", "s32[1]", lambda x: AllReduce(x, CreateScalarAddComputation(S32), [[0, 1]], channel_id=1))
    assert "channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>" in c.as_text()
    assert [int(o[0]) for o in _per_process(c.run(xs, grid=(2, 2)))] == [73, 73, 73, 73]
    flat = _one("arf", "s32[1]", lambda x: AllReduce(x, CreateScalarAddComputation(S32), [[0, 3], [1, 2]],
                                                      channel_id=1, use_global_device_ids=True))
    assert [int(o[0]) for o in _per_process(flat.run(xs, grid=(2, 2)))] == [41, 32, 32, 41]


def test_send_recv_between_replicas():
    """Replica 0 sends its operand on channel 5, replica 1 receives it (a Conditional on
    ReplicaId picks the side)."""
    sender = XlaBuilder("sender")
    v = Parameter(sender, 0, "f32[2]", "v")
    Send(v, 5)
    sender_c = sender.build(v)
    receiver = XlaBuilder("receiver")
    Parameter(receiver, 0, "f32[2]", "v")
    receiver_c = receiver.build(Recv(receiver, "f32[2]", 5))
    b = XlaBuilder("p2p")
    x = Parameter(b, 0, "f32[2]", "x")
    first = Compare(ReplicaId(b), ConstantR0(b, 0, dtype="u32"), "EQ")
    c = b.build(Conditional(first, x, sender_c, x, receiver_c))
    assert "stablehlo.send" in c.as_text() and "stablehlo.recv" in c.as_text()
    outs = _per_process(c.run(np.array([[1, 2], [3, 4]], np.float32), grid=(2, 1)))
    np.testing.assert_array_equal(outs[0], [1, 2])
    np.testing.assert_array_equal(outs[1], [1, 2])


def test_send_without_peer_is_a_deadlock_error():
    b = XlaBuilder("both_send")
    x = Parameter(b, 0, "f32[2]", "x")
    Send(x, 1)
    c = b.build(Recv(b, "f32[2]", 1))
    with pytest.raises(ExecutionError, match="deadlock.*\n.*process 0.*send"):
        c.run(np.zeros((2, 2), np.float32), grid=(2, 1))


def test_infeed_outfeed():
    b = XlaBuilder("feed")
    d, n = Infeed(b, "(f32[2], s32[])")
    Outfeed(d)
    c = b.build([d, n])
    out = c.run(infeed=[np.array([1.5, 2.5], np.float32), np.array(7, np.int32)])
    np.testing.assert_array_equal(out[0], [1.5, 2.5])
    assert int(out[1]) == 7
    with pytest.raises(ExecutionError, match="infeed holds 0"):
        c.run()


def test_built_text_reparses_and_verifies():
    c = _one("ag", "f32[2,3]",
             lambda x: AllGather(x, 1, 2, [[0, 1]], channel_id=2, use_global_device_ids=True))
    m = parse_module(c.as_text())
    assert "use_global_device_ids" in c.as_text()
    assert m.funcs[0].result_types == c.result_types


@pytest.mark.parametrize("call, match", [
    (lambda x: AllGather(x, 0, 3, [[0, 1]]), "shard_count 3 must be the size"),
    (lambda x: AllGather(x, 2, 2), "all_gather_dimension 2"),
    (lambda x: ReduceScatter(x, CreateScalarAddComputation(F32), 0, 3), "not divisible"),
    (lambda x: AllToAll(x, 0, 0, 3), r"all_to_all \(C\d\)"),
    (lambda x: AllReduce(x, CreateScalarAddComputation(F32), [[0, 0]]), r"all_reduce \(C1\)"),
    (lambda x: CollectivePermute(x, [(0, 1, 2)]), "pairs"),
    (lambda x: CollectivePermute(x, [(0, 1), (0, 2)]), r"collective_permute \(C\d\)"),
])
def test_errors_name_the_function_or_constraint(call, match):
    b = XlaBuilder("bad")
    x = Parameter(b, 0, "f32[2]", "x")
    before = b.names()
    with pytest.raises(HloLabError, match=match):
        call(x)
    assert b.names() == before  # the builder is unchanged


def test_run_on_grid_needs_every_argument():
    c = _one("ag", "f32[2]", lambda x: AllGather(x, 0, 2))
    with pytest.raises(BuilderError, match="takes 1 arguments, got 0"):
        c.run(grid=(2, 1))
