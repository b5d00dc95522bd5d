"""The Session stepper: stepping, history, recomputation, breakpoints, budgets."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from hlolab.errors import ExecutionError
from hlolab.session import Session
from tests.programs import ENDLESS_WHILE, RUNAWAY_WHILE, SQUARING_WHILE

X = np.linspace(0.5, 1.2, 8, dtype=np.float32)
X2 = X * X  # the body squares: x -> x^2 -> x^4 -> x^8, rounding after each multiply
X4 = X2 * X2
X8 = X4 * X4


def session(n: int = 3, **kw) -> Session:
    s = Session(SQUARING_WHILE, **kw)
    s.bind([np.array(n, np.int64), X])
    return s


def snapshot(s: Session) -> list[tuple]:
    ev = s.current
    return [(ev.id, ev.op.name, ev.frame.iteration, [np.array(o, copy=True) for o in ev.outputs],
             [np.array(i, copy=True) for i in ev.inputs])]


def same(a: list[tuple], b: list[tuple]) -> bool:
    for (i1, n1, it1, o1, in1), (i2, n2, it2, o2, in2) in zip(a, b, strict=True):
        if (i1, n1, it1) != (i2, n2, it2):
            return False
        for p, q in zip(o1 + in1, o2 + in2, strict=True):
            if p.tobytes() != q.tobytes():
                return False
    return True


@pytest.mark.parametrize("store_limit", [16 << 20, 0])  # 0: every value is recomputed when asked for
def test_forward_then_backward_reproduces_values(store_limit):
    s = session(store_limit=store_limit)
    forward = []
    while True:
        stop = s.step()
        if stop.reason == "end":
            break
        assert stop.reason == "step"
        forward.append(snapshot(s))
    # 2 constants, 4 conds (compare), 3 iterations x 2 body ops, the while, the reverse
    assert len(forward) == 2 + 4 + 6 + 2
    assert s.finished and [r.tolist() for r in s.results][0] == 3
    np.testing.assert_array_equal(s.results[1], X8[::-1])
    backward = []
    for _ in range(len(forward)):
        backward.append(snapshot(s))
        s.step_back()
    assert s.step_back().reason == "start" and s.current is None
    assert all(same(f, b) for f, b in zip(forward, backward[::-1], strict=True))
    # and forward again replays the history without executing anything
    again = []
    for _ in range(len(forward)):
        s.step()
        again.append(snapshot(s))
    assert all(same(f, a) for f, a in zip(forward, again, strict=True))


def test_dropped_values_are_recomputed_bit_exactly():
    s = session(store_limit=0)
    s.run()
    # every tensor output was dropped from the history; values come back by recomputation
    assert not any(isinstance(o, np.ndarray) for ev in s.history for o in ev.outputs)
    np.testing.assert_array_equal(s.value("%s"), X8[::-1])
    np.testing.assert_array_equal(s.value("%v1", iteration=1), X4)
    np.testing.assert_array_equal(s.value("%y"), X8)


def test_history_budget_drops_oldest_values():
    s = session(n=20, history_bytes=200)
    s.run()
    kept = [o for ev in s.history for o in ev.outputs if isinstance(o, np.ndarray)]
    assert sum(o.nbytes for o in kept) <= 200
    np.testing.assert_array_equal(s.value("%v1", iteration=0), X2)  # recomputed from the args


def test_breakpoints_stop_where_asked():
    s = session()
    bp = s.add_breakpoint("op", "multiply")
    stops = []
    while True:
        stop = s.run()
        if stop.reason != "breakpoint":
            break
        assert stop.breakpoint == bp
        stops.append((stop.event.op.name, stop.event.frame.iteration))
    assert stops == [("stablehlo.multiply", 0), ("stablehlo.multiply", 1), ("stablehlo.multiply", 2)]
    assert stop.reason == "end"

    s.restart()
    s.breakpoints.clear()
    s.add_breakpoint("line", 13)  # the reverse
    stop = s.run()
    assert stop.reason == "breakpoint" and stop.event.op.name == "stablehlo.reverse"

    s.restart()
    s.breakpoints.clear()
    s.add_breakpoint("name", "%a1")
    assert s.run().event.op.results[0].name == "%a1"
    stop = s.run_to(op="stablehlo.reverse")  # a breakpoint on the way stops run_to too
    assert stop.reason == "breakpoint" and stop.event.frame.iteration == 1
    s.breakpoints.clear()
    assert s.run_to(op="stablehlo.reverse").event.op.name == "stablehlo.reverse"


def test_nonfinite_breakpoint_stops_at_first_nan():
    text = """
    func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
      %a = stablehlo.abs %x : tensor<3xf32>
      %l = stablehlo.log %x : tensor<3xf32>
      %e = stablehlo.exponential %l : tensor<3xf32>
      func.return %e : tensor<3xf32>
    }"""
    s = Session(text)
    s.bind([np.array([1.0, -1.0, 2.0], np.float32)])
    s.add_breakpoint("nonfinite")
    stop = s.run()
    assert stop.reason == "breakpoint" and stop.event.op.results[0].name == "%l"
    assert np.isnan(s.current.outputs[0][1])


def test_step_over_and_finish_follow_regions():
    s = session()
    s.run_to(op="stablehlo.add")  # inside the body, iteration 0
    assert s.current.frame.depth == 1
    assert [e.describe() for e in s.call_stack()] == ["@main: %i, %y = stablehlo.while line 4, region 1, "
                                                      "iteration 0"]
    assert s.step_over().event.op.name == "stablehlo.multiply"  # same depth
    stop = s.finish()
    assert stop.event.op.name == "stablehlo.while" and s.current.frame.depth == 0
    assert s.call_stack() == []
    assert s.step_over().event.op.name == "stablehlo.reverse"


def test_runaway_while_is_interrupted_by_the_run_budget_and_the_session_survives():
    text = RUNAWAY_WHILE
    s = Session(text)
    stop = s.run(max_steps=500)
    assert stop.reason == "budget" and not s.finished
    assert int(s.value("%a1")) == 500 - 3  # three constants, then one add per step
    s.step_back(10)
    assert int(s.value("%a1")) == 490 - 3
    assert s.run(max_steps=5).reason == "budget"  # replays the history, still alive
    # the interpreter's hard step budget ends the run with a clear error; the history stays
    s2 = Session(text, step_budget=300)
    stop = s2.run()
    assert stop.reason == "error" and "step budget of 300" in str(stop.error)
    assert s2.current.op.name == "stablehlo.add"
    s2.step_back()
    assert s2.current is not None


def test_interrupt_from_another_thread():
    s = Session(ENDLESS_WHILE, run_budget=10**9)
    timer = threading.Timer(0.2, s.interrupt)
    timer.start()
    stop = s.run()
    timer.join()
    assert stop.reason == "interrupted" and s.cursor > 0


def test_bind_inputs_and_errors():
    s = Session(SQUARING_WHILE)
    with pytest.raises(ExecutionError, match="bind inputs first"):
        s.step()
    with pytest.raises(ExecutionError, match="argument #1 of @main must be tensor<8xf32>"):
        s.bind([np.array(3, np.int64), np.zeros(3, np.float32)])
    args = s.bind(seed=7)
    assert args[1].shape == (8,) and args[1].dtype == np.float32
    assert s.bind(seed=7)[1].tobytes() == args[1].tobytes()  # seeded: the same inputs again
    with pytest.raises(ExecutionError, match="unknown breakpoint kind"):
        s.add_breakpoint("banana", 1)
    with pytest.raises(ExecutionError, match="no op named"):
        s.add_breakpoint("op", "stablehlo.nonexistent_op")


def test_bind_from_npy_files(tmp_path):
    p = tmp_path / "x.npy"
    np.save(p, X)
    s = Session(SQUARING_WHILE)
    s.bind([np.array(1, np.int64)], files=[p])
    s.run()
    np.testing.assert_array_equal(s.results[1], X2[::-1])


def test_program_error_keeps_the_history():
    text = """
    func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
      %a = stablehlo.abs %x : tensor<2xf32>
      %c = "stablehlo.no_such_op"(%a) : (tensor<2xf32>) -> tensor<2xf32>
      func.return %c : tensor<2xf32>
    }"""
    s = Session(text)
    s.bind(seed=0)
    stop = s.run()
    assert stop.reason == "error" and "no_such_op" in str(stop.error)
    assert s.current.op.name == "stablehlo.abs"
    assert s.step().reason == "error"


# --- interrupt: between ops when events flow, inside the interpreter only when none do --------

LONG_WHILE = """
func.func @main() -> tensor<i64> {
  %z = stablehlo.constant dense<0> : tensor<i64>
  %one = stablehlo.constant dense<1> : tensor<i64>
  %big = stablehlo.constant dense<1000000000> : tensor<i64>
  %r = stablehlo.while(%a = %z) : tensor<i64>
  cond {
    %c = stablehlo.compare LT, %a, %big : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %a1 = stablehlo.add %a, %one : tensor<i64>
    stablehlo.return %a1 : tensor<i64>
  }
  func.return %r : tensor<i64>
}"""



def interrupt_from_thread_at(s: Session, when) -> threading.Thread:
    """Hook the session's interpreter so that, at the first executed op for which
    ``when(op, count)`` holds, another thread calls ``s.interrupt()`` while the
    interpreter waits *inside* its step (the race: the interpreter checks its flag again
    before the next op, in the same step). Deterministic: a handshake, no clock."""
    interp = s.interp
    original = interp._count_step
    reached, done = threading.Event(), threading.Event()
    count = [0]

    def hooked(op):
        original(op)
        count[0] += 1
        if not reached.is_set() and when(op, count[0]):
            reached.set()
            assert done.wait(30), "the interrupting thread did not run"

    interp._count_step = hooked

    def interrupter():
        if reached.wait(30):
            s.interrupt()
        done.set()

    t = threading.Thread(target=interrupter, daemon=True)
    t.start()
    return t


@pytest.mark.parametrize("where", ["while", "add"])
def test_interrupt_during_a_run_stops_between_ops_and_the_session_goes_on(where):
    """An interrupt that lands while the interpreter is inside a step (at a while's
    iteration boundary, or in an op) stops the run after that op; nothing is lost."""
    s = Session(LONG_WHILE, run_budget=10**9)
    s.bind()
    # the while op counts an iteration, then runs the compare in the same step
    t = interrupt_from_thread_at(s, lambda op, n: n > 50 and op.name == f"stablehlo.{where}")
    stop = s.run()
    t.join()
    assert stop.reason == "interrupted" and stop.error is None
    assert not s.finished and s.error is None
    n = s.cursor
    assert n > 20
    before = s.current.op.name
    assert s.step().reason == "step" and s.cursor == n + 1
    assert (before, s.current.op.name) in {("stablehlo.compare", "stablehlo.add"),
                                           ("stablehlo.add", "stablehlo.compare")}
    assert s.run(max_steps=100).reason == "budget" and s.cursor == n + 101
    # the loop counter went on exactly: no iteration lost or repeated
    a1 = int(s.value("%a1"))
    adds = sum(1 for ev in s.history if ev.op.name == "stablehlo.add")
    assert a1 == adds


def test_interrupt_stops_a_loop_that_yields_no_op():
    s = Session(ENDLESS_WHILE, run_budget=10**9)
    t = interrupt_from_thread_at(s, lambda op, n: n > 5000)
    stop = s.run()
    t.join()
    assert stop.reason == "interrupted" and isinstance(stop.error, ExecutionError)
    assert s.finished and s.cursor == 2  # the two constants stay in the history
    s.step_back()
    assert s.current.op.name == "stablehlo.constant"


def test_a_stale_interrupt_does_not_stop_the_next_command():
    s = Session(LONG_WHILE)
    s.bind()
    s.interrupt()  # nothing runs: forgotten by the next command
    assert s.step(3).reason == "step" and s.cursor == 3
    s.interrupt()
    assert s.run(max_steps=10).reason == "budget" and s.cursor == 13


def test_values_frames_and_sources_carry_process_zero():
    # single-process programs run as process 0: the identity of a binding, a frame and a
    # provenance source all say so (collectives add other processes without new types)
    from hlolab.interp.engine import ARGS_NODE, args_node

    s = Session("""
    func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
      %0 = stablehlo.add %a, %a : tensor<2xf32>
      return %0 : tensor<2xf32>
    }""")
    s.bind([np.array([1.0, 2.0], np.float32)])
    s.run()
    assert args_node(0) == ARGS_NODE and args_node(2) == ARGS_NODE - 2
    d = s.find("%0")
    assert s.process_of(d) == 0 and s.process_of((ARGS_NODE, 0)) == 0 and s.process_of((args_node(3), 0)) == 3
    ev = s.instance(d[0])
    assert ev.frame.process == 0 and ev.frame.describe() == "@main op 0"
    assert {src.process for src in ev.provenance().sources(0, (1,))} == {0}


def test_goto_line_goes_back_to_the_latest_instance_else_forward():
    """SQUARING_WHILE: the multiply (line 10) runs once per iteration, x -> x^2 -> x^4 -> x^8."""
    s = session()
    stop = s.goto_line(10)  # not run yet: forward to its first instance
    assert stop.reason == "step" and s.current.op.name == "stablehlo.multiply"
    np.testing.assert_array_equal(s.current.outputs[0], X2)
    s.run_to(op="stablehlo.reverse")
    n = len(s.history)
    s.goto_line(10)  # run already: back to its latest instance, nothing runs
    assert len(s.history) == n and s.current.op.name == "stablehlo.multiply"
    np.testing.assert_array_equal(s.current.outputs[0], X8)
    assert s.current.frame.iteration == 2
    s.goto_line(13)  # after the cursor in the history: forward again through the history
    assert s.current.op.name == "stablehlo.reverse" and len(s.history) == n
