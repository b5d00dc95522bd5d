"""Stepping a process grid in a Session: lockstep (every ready process's next op per step),
one process at a time (``Session.focus``: a waiting stop names the rendezvous and whom it
waits for, ``run_others`` brings the rest there), back-stepping through the recorded order,
per-process states (``Session.process_states``), and results equal to ``run_grid``'s."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hlolab.interp.engine import Interpreter
from hlolab.interp.processes import grid_args, run_grid
from hlolab.ir.parser import parse_module
from hlolab.session import Session

EXAMPLE = Path(__file__).resolve().parents[2] / "hlolab" / "examples" / "grid_matmul.mlir"
W = np.array([[1.0, 0.0, 2.0], [0.0, 1.0, -1.0], [1.0, 1.0, 0.0], [0.5, -2.0, 1.0]], np.float32)
X = np.arange(32, dtype=np.float32).reshape(4, 2, 4) / 8 - 1  # process p's row block: X[p]

# replica 0 runs two ops in the case's first branch, replica 1 none: it reaches the
# all_reduce (line 12) first and waits there for replica 0
UNEVEN = """module attributes {mhlo.num_replicas = 2 : i32, mhlo.num_partitions = 1 : i32} {
  func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    %r = stablehlo.replica_id : tensor<ui32>
    %i = stablehlo.convert %r : (tensor<ui32>) -> tensor<i32>
    %y = "stablehlo.case"(%i) ({
      %a = stablehlo.add %x, %x : tensor<2xf32>
      %b = stablehlo.multiply %a, %a : tensor<2xf32>
      stablehlo.return %b : tensor<2xf32>
    }, {
      stablehlo.return %x : tensor<2xf32>
    }) : (tensor<i32>) -> tensor<2xf32>
    %s = "stablehlo.all_reduce"(%y) ({
      ^bb0(%p: tensor<f32>, %q: tensor<f32>):
        %t = stablehlo.add %p, %q : tensor<f32>
        stablehlo.return %t : tensor<f32>
    }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xf32>) -> tensor<2xf32>
    return %s : tensor<2xf32>
  }
}"""

# replica 1 returns without the all_reduce (line 7) replica 0 waits at: a deadlock
SKIPS = """module attributes {mhlo.num_replicas = 2 : i32, mhlo.num_partitions = 1 : i32} {
  func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    %r = stablehlo.replica_id : tensor<ui32>
    %i = stablehlo.convert %r : (tensor<ui32>) -> tensor<i32>
    %y = "stablehlo.case"(%i) ({
      %s = "stablehlo.all_reduce"(%x) ({
        ^bb0(%p: tensor<f32>, %q: tensor<f32>):
          %t = stablehlo.add %p, %q : tensor<f32>
          stablehlo.return %t : tensor<f32>
      }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xf32>) -> tensor<2xf32>
      stablehlo.return %s : tensor<2xf32>
    }, {
      stablehlo.return %x : tensor<2xf32>
    }) : (tensor<i32>) -> tensor<2xf32>
    return %y : tensor<2xf32>
  }
}"""


def matmul() -> Session:
    s = Session.open(EXAMPLE)
    s.bind([X])  # a leading dim of 4: one block per process
    return s


def ops(s: Session, events=None) -> list[tuple[str, int]]:
    return [(ev.op.name.removeprefix("stablehlo."), ev.frame.process)
            for ev in (s.history if events is None else events)]


def test_lockstep_step_runs_every_ready_process_once():
    s = matmul()
    s.lockstep = True
    assert [ps.state for ps in s.process_states()] == ["not started"] * 4
    assert s.step().reason == "step"
    assert ops(s) == [("constant", p) for p in range(4)]
    assert s.step().reason == "step" and len(s.history) == 8
    assert ops(s)[4:] == [("dot_general", p) for p in range(4)]
    # the all_gather: each process arrives (the last one completes the group) and runs it
    assert s.step().reason == "step" and len(s.history) == 12
    assert ops(s)[8:] == [("all_gather", p) for p in range(4)]
    assert s.step().reason == "end" and len(s.history) == 12
    want = np.concatenate([X[p] @ W for p in range(4)])
    for p in range(4):
        np.testing.assert_allclose(s.process_results[p][0], want, rtol=1e-6)
    assert [ps.describe() for ps in s.process_states()] == ["finished"] * 4
    assert [len(ps.results) for ps in s.process_states()] == [1] * 4


def test_lockstep_leaves_a_waiting_process_where_it_waits():
    s = Session(UNEVEN)
    s.bind([np.array([[1, 2], [3, 4]], np.float32)])
    s.lockstep = True
    counts, states = [], []
    while (stop := s.step()).reason == "step":
        counts.append(len(s.history))
        states.append([ps.describe() for ps in s.process_states()])
    assert stop.reason == "end"
    # replica_id, convert; then replica 0's add and replica 1's case; replica 1 then waits
    # while replica 0 runs its multiply and its case; both run the all_reduce
    assert counts == [2, 4, 6, 7, 8, 10]
    assert states[3] == ["ready", "waits at all_reduce line 12 for 0"]
    assert states[4] == ["ready", "waits at all_reduce line 12 for 0"]
    assert ops(s)[6:8] == [("multiply", 0), ("case", 0)]
    assert ops(s)[8:] == [("all_reduce", 0), ("all_reduce", 1)]
    total = np.array([1, 2], np.float32) * 2
    total = total * total + np.array([3, 4], np.float32)
    for p in range(2):
        np.testing.assert_array_equal(s.process_results[p][0], total)


def test_one_process_steps_only_it_and_stops_at_its_rendezvous():
    s = matmul()
    s.focus = 1
    assert s.step().reason == "step"
    assert s.step().reason == "step"
    assert ops(s) == [("constant", 1), ("dot_general", 1)]
    stop = s.step()
    assert stop.reason == "waiting"
    assert stop.detail == "process 1 (replica 0, partition 1) waits at all_gather line 7 for 0, 2, 3"
    assert stop.event is s.history[1] or stop.event.id == s.history[1].id  # its current op stays
    assert len(s.history) == 2  # nobody else ran
    states = s.process_states()
    assert [ps.state for ps in states] == ["not started", "waiting", "not started", "not started"]
    assert states[1].waits_for == (0, 2, 3)
    again = s.step()  # still waiting: it says so again, and still runs nobody else
    assert again.reason == "waiting" and len(s.history) == 2
    # the others, brought to the rendezvous: the members it waits for, one at a time
    stop = s.run_others()
    assert stop.reason == "step" and "can go on" in stop.detail
    assert ops(s)[2:] == [("constant", 0), ("dot_general", 0), ("constant", 2), ("dot_general", 2),
                          ("constant", 3), ("dot_general", 3), ("all_gather", 3)]
    states = s.process_states()
    assert [ps.state for ps in states] == ["ready"] * 4
    assert states[1].describe() == "met its group at all_gather line 7; the result comes next"
    assert s.step().reason == "step"
    ev = s.history[-1]
    assert ops(s, [ev]) == [("all_gather", 1)]
    np.testing.assert_allclose(ev.outputs[0], np.concatenate([X[p] @ W for p in range(4)]), rtol=1e-6)
    stop = s.step()
    assert stop.reason == "finished" and "process 1 (replica 0, partition 1) has finished" in stop.detail
    s.focus = None  # round-robin for the rest
    assert s.run().reason == "end"
    assert ops(s)[-2:] == [("all_gather", 0), ("all_gather", 2)]


def test_run_others_needs_a_waiting_process():
    s = matmul()
    stop = s.run_others(2)
    assert stop.reason == "step"
    assert stop.detail == "process 2 (replica 0, partition 2) does not wait at a rendezvous"
    assert s.history == []
    with pytest.raises(Exception, match="process 7 is not in the 1x4 grid"):
        s.focus = 7
        s.step()


def test_back_steps_follow_the_recorded_order_and_replay_without_running():
    s = matmul()
    s.lockstep = True
    s.step(3)
    ids = [ev.id for ev in s.history]
    assert s.step_back().reason == "step" and s.cursor == 8
    assert [ps.event.op.name for ps in s.process_states()] == ["stablehlo.dot_general"] * 4
    assert s.step_back().reason == "step" and s.cursor == 4
    assert s.step_back().reason == "start" and s.cursor == 0
    assert [ps.state for ps in s.process_states()] == ["not started"] * 4
    assert s.step().reason == "step" and s.cursor == 4  # replayed: the same rounds
    assert s.step(2).reason == "step" and s.cursor == 12
    assert [ev.id for ev in s.history] == ids  # nothing ran again
    # one process: back to before its current op (everything after it undone), forward again
    s.focus = 2
    stop = s.step_back()
    assert s.cursor == 10 and stop.event.op.name == "stablehlo.dot_general"
    assert s.current_of(2).op.name == "stablehlo.dot_general"
    assert s.current_of(3).op.name == "stablehlo.dot_general"  # its all_gather ran after 2's
    assert s.current_of(1).op.name == "stablehlo.all_gather"
    assert s.step().reason == "step" and s.cursor == 11 and s.current.frame.process == 2
    assert [ev.id for ev in s.history] == ids
    # states at a past cursor are those recorded then
    s.focus = None
    s.cursor = 9
    states = s.process_states()
    assert states[0].event.op.name == "stablehlo.all_gather"
    assert [ps.state for ps in states] == ["ready"] * 4


def test_waiting_states_in_the_history_are_those_seen_then():
    s = Session(UNEVEN)
    s.bind([np.array([[1, 2], [3, 4]], np.float32)])
    s.lockstep = True
    s.step(4)  # replica 1 waits at the all_reduce
    seen = [ps.describe() for ps in s.process_states()]
    s.step(2)
    s.step_back(2)
    assert s.cursor == 7 and [ps.describe() for ps in s.process_states()] == seen


@pytest.mark.parametrize("mode", ["round-robin", "lockstep", "focus"])
def test_every_mode_gives_run_grids_results(mode):
    module = parse_module(EXAMPLE.read_text(), str(EXAMPLE))
    interp = Interpreter(module)
    func = interp.entry(None)
    args = grid_args(func, [X], (1, 4), 0)
    gen = run_grid(interp, func, args, (1, 4))
    try:
        while True:
            next(gen)
    except StopIteration as stop:
        want = stop.value
    s = matmul()
    if mode == "lockstep":
        s.lockstep = True
        while s.step().reason == "step":
            pass
    elif mode == "focus":
        for p in (3, 0, 2, 1):  # each process as far as it goes, then the others to it
            s.focus = p
            while s.step().reason == "step":
                pass
        s.focus = 1
        assert s.run_others().reason == "step"
        for p in range(4):
            s.focus = p
            while s.step().reason == "step":
                pass
    else:
        s.run()
    assert s.results is not None
    for p in range(4):
        np.testing.assert_array_equal(s.process_results[p][0], want[p][0])


def test_lockstep_reports_a_deadlock_as_an_error_stop():
    s = Session(SKIPS)
    s.bind([np.array([[1, 2], [3, 4]], np.float32)])
    s.lockstep = True
    while (stop := s.step()).reason == "step":
        pass
    assert stop.reason == "error"
    assert "deadlock" in str(stop.error) and "process 0 (replica 0, partition 0) waits at" in str(stop.error)
    s.focus = 0
    s.restart()
    while (stop := s.step()).reason == "step":
        pass
    assert stop.reason == "waiting" and "waits at stablehlo.all_reduce" not in stop.detail
    assert stop.detail == "process 0 (replica 0, partition 0) waits at all_reduce line 6 for 1"
    stop = s.run_others()
    assert stop.reason == "error" and "deadlock" in str(stop.error)


def test_a_single_process_session_keeps_stepping_one_event():
    s = Session("func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
                "  %a = stablehlo.add %x, %x : tensor<2xf32>\n"
                "  %b = stablehlo.multiply %a, %a : tensor<2xf32>\n"
                "  return %b : tensor<2xf32>\n}")
    s.bind(seed=0)
    s.lockstep, s.focus = True, 0  # no grid: the modes do not apply
    assert s.step().reason == "step" and s.cursor == 1
    assert s.step_back().reason == "start"
    assert [ps.state for ps in s.process_states()] == ["not started"]


def test_run_and_finish_in_one_process_mode_run_only_that_process():
    s = Session(UNEVEN)
    s.bind([np.array([[1, 2], [3, 4]], np.float32)])
    s.focus = 0
    s.step(3)  # replica_id, convert, then the add inside the case's first branch
    assert s.current.op.name == "stablehlo.add" and s.current.frame.depth == 1
    stop = s.finish()  # out of the case: its multiply, then the case itself
    assert stop.reason == "step" and s.current.op.name == "stablehlo.case"
    assert ops(s) == [("replica_id", 0), ("convert", 0), ("add", 0), ("multiply", 0), ("case", 0)]
    stop = s.run()  # to the all_reduce, where it waits for replica 1: nobody else ran
    assert stop.reason == "waiting" and stop.detail.endswith("waits at all_reduce line 12 for 1")
    assert {p for _, p in ops(s)} == {0}
    s.focus = 1
    assert s.run().reason == "finished"  # replica 1 completes the group and returns
    assert ops(s)[5:] == [("replica_id", 1), ("convert", 1), ("case", 1), ("all_reduce", 1)]
