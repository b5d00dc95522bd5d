"""The process scheduler (hlolab.interp.processes): round-robin stepping, rendezvous,
deadlock and mismatch errors (never a hang), process groups from the spec's strategies,
grid runs with per-process arguments, and program tracing across processes (all_to_all
checked by hand, a sharded MLP back to each device's shards)."""

from __future__ import annotations

import numpy as np
import pytest

import hlolab
from hlolab.errors import ExecutionError, UnsupportedError, VerificationError
from hlolab.interp.engine import Interpreter, drain
from hlolab.interp.processes import (
    cross_partition,
    cross_replica,
    cross_replica_and_partition,
    flattened_ids,
    grid_args,
    module_grid,
    run_grid,
)
from hlolab.ir.parser import parse_module
from hlolab.session import Session, explain_element


def grid_module(body: str, args: str, results: str, replicas: int = 1, partitions: int = 1,
                funcs: str = "") -> str:
    return (f"module attributes {{mhlo.num_replicas = {replicas} : i32, "
            f"mhlo.num_partitions = {partitions} : i32}} {{\n"
            f"  func.func @main({args}) -> ({results}) {{\n{body}\n  }}\n{funcs}}}")


ADD = """({
      ^bb0(%a: tensor<i64>, %b: tensor<i64>):
        %s = stablehlo.add %a, %b : tensor<i64>
        stablehlo.return %s : tensor<i64>
    })"""


def all_reduce(x: str, groups: str, extra: str = "", t: str = "tensor<4xi64>") -> str:
    return (f'"stablehlo.all_reduce"({x}) {ADD} {{replica_groups = dense<{groups}> : '
            f'tensor<{_shape(groups)}xi64>{extra}}} : ({t}) -> {t}')


def _shape(groups: str) -> str:
    rows = np.array(eval(groups))
    return "x".join(str(d) for d in rows.shape)


# --- the spec's process-group strategies (the examples of "Collective ops") ---------------

def test_strategies_match_the_spec_examples():
    assert cross_replica([[0, 1], [2, 3]], (4, 2)) == [(0, 2), (1, 3), (4, 6), (5, 7)]
    # spec: [[(0, 0), (1, 0)], [(0, 1), (1, 1)], [(2, 0), (3, 0)], [(2, 1), (3, 1)]]
    assert cross_partition([[0, 1]], (4, 2)) == [(0, 1), (2, 3), (4, 5), (6, 7)]
    # spec: [[(0, 0), (1, 0), (0, 1), (1, 1)], [(2, 0), (3, 0), (2, 1), (3, 1)]]
    assert cross_replica_and_partition([[0, 1], [2, 3]], (4, 2)) == [(0, 2, 1, 3), (4, 6, 5, 7)]
    assert flattened_ids([[0, 1, 2, 3], [4, 5, 6, 7]], (4, 2)) == [(0, 1, 2, 3), (4, 5, 6, 7)]


# --- scheduling ------------------------------------------------------------------------------

def test_processes_step_round_robin_one_event_each():
    text = grid_module(f"""    %0 = stablehlo.add %x, %x : tensor<4xi64>
    %1 = stablehlo.multiply %0, %x : tensor<4xi64>
    %2 = {all_reduce('%1', '[[0, 1, 2]]')}
    return %2 : tensor<4xi64>""", "%x: tensor<4xi64>", "tensor<4xi64>", replicas=3)
    s = Session(text)
    s.bind([np.arange(12, dtype=np.int64).reshape(3, 4)])
    s.run()
    order = [(ev.op.name.split(".")[-1], ev.frame.process) for ev in s.history]
    assert order == [("add", 0), ("add", 1), ("add", 2), ("multiply", 0), ("multiply", 1),
                     ("multiply", 2), ("all_reduce", 0), ("all_reduce", 1), ("all_reduce", 2)]
    x = np.arange(12, dtype=np.int64).reshape(3, 4)
    want = (2 * x * x).sum(axis=0)
    assert [st for st, _ in s.interp.scheduler.status()] == ["finished"] * 3
    assert len(s.process_results) == 3
    for p in range(3):
        np.testing.assert_array_equal(s.process_results[p][0], want)
    np.testing.assert_array_equal(s.results[0], want)


def test_scheduler_status_says_who_waits_at_which_rendezvous():
    # process 1 works longer before the all_reduce (an if on replica_id): process 0 waits
    text = grid_module(f"""    %id = stablehlo.replica_id : tensor<ui32>
    %zero = stablehlo.constant dense<0> : tensor<ui32>
    %is0 = stablehlo.compare EQ, %id, %zero : (tensor<ui32>, tensor<ui32>) -> tensor<i1>
    %y = "stablehlo.if"(%is0) ({{
      stablehlo.return %x : tensor<4xi64>
    }}, {{
      %a = stablehlo.add %x, %x : tensor<4xi64>
      %b = stablehlo.add %a, %x : tensor<4xi64>
      %c = stablehlo.add %b, %x : tensor<4xi64>
      stablehlo.return %c : tensor<4xi64>
    }}) : (tensor<i1>) -> tensor<4xi64>
    %r = {all_reduce('%y', '[[0, 1]]')}
    return %r : tensor<4xi64>""", "%x: tensor<4xi64>", "tensor<4xi64>", replicas=2)
    s = Session(text)
    s.bind([np.ones((2, 4), np.int64)])
    seen = []
    while not s.finished:
        s.step()
        status = s.interp.scheduler.status()
        seen.append(tuple(st for st, _ in status))
        if status[0][0] == "waiting":
            rv = status[0][1]
            assert rv.op.name == "stablehlo.all_reduce" and rv.group == (0, 1)
            assert "process 0 (replica 0, partition 0) waits at stablehlo.all_reduce" in rv.describe()
    assert ("waiting", "ready") in seen
    assert seen[-1] == ("finished", "finished")
    assert s.process_results[0][0].tolist() == [5] * 4  # 1 + 4


def test_a_group_of_one_completes_without_a_scheduler():
    text = grid_module(f"""    %2 = {all_reduce('%x', '[[0]]')}
    return %2 : tensor<4xi64>""", "%x: tensor<4xi64>", "tensor<4xi64>")
    x = np.array([1, 2, 3, 4], np.int64)
    np.testing.assert_array_equal(hlolab.run(text, [x])[0], x)
    np.testing.assert_array_equal(Interpreter(parse_module(text)).run(None, [x])[0], x)


CHANNEL = ", channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>"


def test_a_collective_needing_other_processes_in_a_single_process_run_is_a_clear_error():
    text = f"""func.func @main(%x: tensor<4xi64>) -> tensor<4xi64> {{
    %2 = {all_reduce('%x', '[[0, 1]]', CHANNEL + ', use_global_device_ids')}
    return %2 : tensor<4xi64>
}}"""
    with pytest.raises(VerificationError,
                       match=r"all_reduce \(C3\): replica_groups holds 1, but there are only 1 process ids"):
        hlolab.run(text, [np.zeros(4, np.int64)])


# --- deadlock and mismatch: errors, never a hang ------------------------------------------

RUN_PARALLEL = """module {{
{funcs}
  func.func @main() {{
    %c = stablehlo.constant dense<[1, 2, 3, 4]> : tensor<4xi64>
    %r:{n} = "interpreter.run_parallel"({operands}) {{ programs = {programs} }} : ({types}) -> ({rtypes})
    func.return
  }}
}}"""


def run_parallel(funcs: str, programs: str, n: int) -> None:
    text = RUN_PARALLEL.format(funcs=funcs, programs=programs, n=n, operands=", ".join(["%c"] * n),
                               types=", ".join(["tensor<4xi64>"] * n),
                               rtypes=", ".join(["tensor<4xi64>"] * n))
    hlolab.run(text)


def test_a_process_that_never_arrives_is_a_deadlock_naming_the_waiting_process():
    funcs = f"""  func.func @reduce(%x: tensor<4xi64>) -> tensor<4xi64> {{
    %r = {all_reduce('%x', '[[0, 1]]')}
    return %r : tensor<4xi64>
  }}
  func.func @skip(%x: tensor<4xi64>) -> tensor<4xi64> {{
    return %x : tensor<4xi64>
  }}"""
    with pytest.raises(ExecutionError) as e:
        run_parallel(funcs, "[[@reduce], [@skip]]", 2)
    msg = str(e.value)
    assert "deadlock" in msg
    assert "process 0 (replica 0, partition 0) waits at stablehlo.all_reduce" in msg
    assert "[(0, 0), (1, 0)]" in msg
    assert "process 1 (replica 1, partition 0) has finished" in msg
    assert e.value.loc is not None and e.value.loc.line == 3  # the all_reduce's line


def test_processes_waiting_at_different_collectives_for_each_other_name_both():
    funcs = f"""  func.func @reduce(%x: tensor<4xi64>) -> tensor<4xi64> {{
    %r = {all_reduce('%x', '[[0, 1]]')}
    return %r : tensor<4xi64>
  }}
  func.func @gather(%x: tensor<4xi64>) -> tensor<4xi64> {{
    %g = "stablehlo.all_gather"(%x) {{all_gather_dim = 0 : i64,
        replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}} : (tensor<4xi64>) -> tensor<8xi64>
    %s = stablehlo.slice %g [0:4] : (tensor<8xi64>) -> tensor<4xi64>
    return %s : tensor<4xi64>
  }}"""
    with pytest.raises(ExecutionError) as e:
        run_parallel(funcs, "[[@reduce], [@gather]]", 2)
    msg = str(e.value)
    assert "mismatched collectives" in msg
    assert "process 1 (replica 1, partition 0) waits at stablehlo.all_gather" in msg
    assert "process 0 (replica 0, partition 0) waits at stablehlo.all_reduce" in msg


def test_mismatched_groups_name_both_processes():
    funcs = f"""  func.func @a(%x: tensor<4xi64>) -> tensor<4xi64> {{
    %r = {all_reduce('%x', '[[0, 1, 2]]')}
    return %r : tensor<4xi64>
  }}
  func.func @b(%x: tensor<4xi64>) -> tensor<4xi64> {{
    %r = {all_reduce('%x', '[[0, 1], [2, -1]]')}
    return %r : tensor<4xi64>
  }}"""
    with pytest.raises(ExecutionError) as e:
        run_parallel(funcs, "[[@a], [@b], [@a]]", 3)
    msg = str(e.value)
    assert "mismatched collectives" in msg
    assert "[(0, 0), (1, 0), (2, 0)]" in msg and "[(0, 0), (1, 0)]" in msg


def test_a_send_without_a_recv_is_a_deadlock_naming_the_channel():
    funcs = """  func.func @send(%x: tensor<4xi64>) -> tensor<4xi64> {
    %t = stablehlo.after_all : !stablehlo.token
    %r = "stablehlo.send"(%x, %t) {channel_handle = #stablehlo.channel_handle<handle = 7, type = 1>}
        : (tensor<4xi64>, !stablehlo.token) -> !stablehlo.token
    return %x : tensor<4xi64>
  }
  func.func @idle(%x: tensor<4xi64>) -> tensor<4xi64> {
    return %x : tensor<4xi64>
  }"""
    with pytest.raises(ExecutionError) as e:
        run_parallel(funcs, "[[@send], [@idle]]", 2)
    assert "process 0 (replica 0, partition 0) waits at stablehlo.send" in str(e.value)
    assert "for a recv on channel 7" in str(e.value)


def test_a_send_in_a_single_process_run_is_an_unsupported_host_transfer():
    text = """func.func @main(%x: tensor<4xi64>) -> !stablehlo.token {
    %t = stablehlo.after_all : !stablehlo.token
    %r = "stablehlo.send"(%x, %t) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 2>,
        is_host_transfer = true} : (tensor<4xi64>, !stablehlo.token) -> !stablehlo.token
    return %r : !stablehlo.token
}"""
    with pytest.raises(UnsupportedError, match="host transfers are not supported"):
        hlolab.run(text, [np.zeros(4, np.int64)])


# --- grids and per-process arguments ----------------------------------------------------

def test_module_grid_and_per_process_arguments():
    text = grid_module("    return %x : tensor<2xi32>", "%x: tensor<2xi32>", "tensor<2xi32>", 2, 2)
    m = parse_module(text)
    assert module_grid(m) == (2, 2)
    f = Interpreter(m).entry()
    same = grid_args(f, [np.array([1, 2], np.int32)], (2, 2), None)
    assert [a[0].tolist() for a in same] == [[1, 2]] * 4
    split = grid_args(f, [np.arange(8, dtype=np.int32).reshape(4, 2)], (2, 2), None)
    assert [a[0].tolist() for a in split] == [[0, 1], [2, 3], [4, 5], [6, 7]]
    with pytest.raises(ExecutionError, match=r"leading process dim of 4"):
        grid_args(f, [np.zeros((3, 2), np.int32)], (2, 2), None)
    rand = grid_args(f, [], (2, 2), 5)
    assert not np.array_equal(rand[0][0], rand[1][0])  # process p draws from seed + p
    assert hlolab.run(text, [np.arange(8, dtype=np.int32).reshape(4, 2)])[3][0].tolist() == [6, 7]
    # a scalar argument given one value per process: each process gets a rank-0 array
    scalar = grid_module("    return %x : tensor<f32>", "%x: tensor<f32>", "tensor<f32>", 2, 2)
    per = grid_args(Interpreter(parse_module(scalar)).entry(), [np.arange(4, dtype=np.float32)], (2, 2), None)
    assert [(a[0].shape, float(a[0])) for a in per] == [((), 0.0), ((), 1.0), ((), 2.0), ((), 3.0)]


def test_replica_and_partition_ids_on_a_2x3_grid():
    text = grid_module("""    %r = stablehlo.replica_id : tensor<ui32>
    %p = stablehlo.partition_id : tensor<ui32>
    return %r, %p : tensor<ui32>, tensor<ui32>""", "", "tensor<ui32>, tensor<ui32>", 2, 3)
    out = hlolab.run(text)
    assert [(int(r), int(p)) for r, p in out] == [(r, p) for r in range(2) for p in range(3)]
    assert out[0][0].dtype == np.uint32


# --- tracing across processes ------------------------------------------------------------

ALL_TO_ALL = grid_module("""    %y = "stablehlo.all_to_all"(%x) {split_dimension = 1 : i64,
        concat_dimension = 0 : i64, split_count = 2 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}
        : (tensor<2x4xi64>) -> tensor<4x2xi64>
    return %y : tensor<4x2xi64>""", "%x: tensor<2x4xi64>", "tensor<4x2xi64>", 2)


def test_trace_across_all_to_all_by_hand():
    # the spec's example: %x@(0,0) = [[1,2,3,4],[5,6,7,8]], %x@(1,0) = [[9..12],[13..16]]
    x = np.arange(1, 17, dtype=np.int64).reshape(2, 2, 4)
    s = Session(ALL_TO_ALL)
    s.bind([x])
    s.run()
    np.testing.assert_array_equal(s.process_results[0][0], [[1, 2], [5, 6], [9, 10], [13, 14]])
    np.testing.assert_array_equal(s.process_results[1][0], [[3, 4], [7, 8], [11, 12], [15, 16]])
    y1 = next(ev for ev in s.history if ev.frame.process == 1)
    # %y@(1,0)[2, 1] = 12: process 1 receives part 1 (columns 2:4) of process 1's row 0
    t = s.sources((y1.id, 0), (2, 1))
    assert [(g.label, np.argwhere(g.mask).tolist(), g.role) for g in t.groups] == \
        [("%x@(1, 0)", [[0, 3]], "copy")]
    # %y@(1,0)[1, 0] = 7: from process 0, row 1, column 2
    t = s.sources((y1.id, 0), (1, 0))
    assert [(g.label, np.argwhere(g.mask).tolist(), g.role) for g in t.groups] == \
        [("%x@(0, 0)", [[1, 2]], "copy")]
    # per-op sources name the process
    prov = y1.provenance()
    src = prov.sources(0, (1, 0))
    assert [(s_.process, s_.index, s_.role) for s_ in src] == [(0, (1, 2), "copy")]
    # forward: %x@(0,0)[0, 3] = 4 lands in %y@(1,0)[0, 1]
    t = s.targets((0, 0), (0, 3))
    assert [(g.label, np.argwhere(g.mask).tolist()) for g in t.groups] == [("%y@(1, 0)", [[0, 1]])]
    e = explain_element(s, (y1.id, 0), (1, 0))
    assert e.element == 7
    assert [(x_.label, x_.source.process, x_.source.index) for x_ in e.sources] == [("%x@(0, 0)", 0, (1, 2))]


MLP = grid_module("""    %h = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0]
        : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
    %a = stablehlo.tanh %h : tensor<2x2xf32>
    %o = stablehlo.dot_general %a, %w2, contracting_dims = [1] x [0]
        : (tensor<2x2xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    %r = "stablehlo.all_reduce"(%o) ({
      ^bb0(%p: tensor<f32>, %q: tensor<f32>):
        %s = stablehlo.add %p, %q : tensor<f32>
        stablehlo.return %s : tensor<f32>
    }) {replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>,
        channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, use_global_device_ids}
        : (tensor<2x4xf32>) -> tensor<2x4xf32>
    return %r : tensor<2x4xf32>""", "%x: tensor<2x3xf32>, %w1: tensor<3x2xf32>, %w2: tensor<2x4xf32>",
                  "tensor<2x4xf32>", 1, 4)


def test_a_sharded_mlp_output_traces_back_to_every_devices_shards():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3)).astype(np.float32)
    w1 = rng.standard_normal((3, 8)).astype(np.float32)
    w2 = rng.standard_normal((8, 4)).astype(np.float32)
    # device p holds columns 2p:2p+2 of w1 and rows 2p:2p+2 of w2 (Megatron style)
    w1s = np.stack([w1[:, 2 * p:2 * p + 2] for p in range(4)])
    w2s = np.stack([w2[2 * p:2 * p + 2] for p in range(4)])
    s = Session(MLP)
    s.bind([x, w1s, w2s])
    s.run()
    want = np.tanh(x.astype(np.float64) @ w1) @ w2
    for p in range(4):
        np.testing.assert_allclose(s.process_results[p][0], want, rtol=1e-5)
    r2 = [ev for ev in s.history if ev.op.name == "stablehlo.all_reduce" and ev.frame.process == 2][0]
    t = s.sources((r2.id, 0), (1, 3))
    got = {(g.label, g.role): np.argwhere(g.mask).tolist() for g in t.groups}
    for p in range(4):
        suffix = f"@(0, {p})"  # every process named on a grid, process 0 too
        assert got[("%x" + suffix, "window")] == [[1, 0], [1, 1], [1, 2]]  # the dot's lhs row
        assert got[("%w1" + suffix, "kernel")] == [[i, j] for i in range(3) for j in range(2)]
        assert got[("%w2" + suffix, "kernel")] == [[0, 3], [1, 3]]


def test_run_parallel_events_carry_their_process_and_trace_to_main():
    text = """module {
  func.func @f(%x: tensor<2xi64>) -> tensor<2xi64> {
    %r = "stablehlo.all_reduce"(%x) ({
      ^bb0(%a: tensor<i64>, %b: tensor<i64>):
        %s = stablehlo.add %a, %b : tensor<i64>
        stablehlo.return %s : tensor<i64>
    }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xi64>) -> tensor<2xi64>
    return %r : tensor<2xi64>
  }
  func.func @main() -> tensor<2xi64> {
    %a = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
    %b = stablehlo.constant dense<[10, 20]> : tensor<2xi64>
    %r:2 = "interpreter.run_parallel"(%a, %b) {programs = [[@f], [@f]]}
        : (tensor<2xi64>, tensor<2xi64>) -> (tensor<2xi64>, tensor<2xi64>)
    return %r#1 : tensor<2xi64>
  }
}"""
    s = Session(text)
    s.run()
    assert s.results[0].tolist() == [11, 22]
    assert [(ev.op.name, ev.frame.process) for ev in s.history if ev.frame.func == "f"] == \
        [("stablehlo.all_reduce", 0), ("stablehlo.all_reduce", 1)]
    t = s.sources("%r#1", (1,))
    assert sorted((g.label, np.argwhere(g.mask).tolist()) for g in t.groups) == \
        [("%a", [[1]]), ("%b", [[1]])]


def test_drain_of_a_grid_run_returns_every_process():
    m = parse_module(ALL_TO_ALL)
    interp = Interpreter(m)
    f = interp.entry()
    out = drain(run_grid(interp, f, [[np.zeros((2, 4), np.int64)], [np.ones((2, 4), np.int64)]], (2, 1)))
    assert [o[0].tolist() for o in out] == [[[0, 0], [0, 0], [1, 1], [1, 1]]] * 2
