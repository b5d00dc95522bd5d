"""Collective ops: the spec's examples on their process grids, every (Cn) the verifier
checks, provenance against the values (which process's which element), explain, the
point-to-point and streaming ops, and the CLI's grid flags."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest

import hlolab
from hlolab.errors import ExecutionError, HloLabError, VerificationError
from hlolab.interp.engine import Interpreter, drain
from hlolab.interp.processes import run_grid
from hlolab.ir.parser import parse_module
from hlolab.ops.registry import lookup
from hlolab.session import Session, explain_element
from hlolab.trace.explain import format_explanation

ADD = """({
      ^bb0(%a: tensor<i64>, %b: tensor<i64>):
        %s = stablehlo.add %a, %b : tensor<i64>
        stablehlo.return %s : tensor<i64>
    })"""


def module(body: str, args: str, results: str, replicas: int, partitions: int = 1) -> str:
    return (f"module attributes {{mhlo.num_replicas = {replicas} : i32, "
            f"mhlo.num_partitions = {partitions} : i32}} {{\n"
            f"  func.func @main({args}) -> ({results}) {{\n{body}\n  }}\n}}")


def run_on_grid(text: str, per_process: list[list[np.ndarray]]) -> list[list[np.ndarray]]:
    m = parse_module(text)
    interp = Interpreter(m)
    from hlolab.interp.processes import module_grid

    return drain(run_grid(interp, interp.entry(), per_process, module_grid(m)))


def session(text: str, stacked: list[np.ndarray]) -> Session:
    s = Session(text)
    s.bind(stacked)
    stop = s.run()
    assert stop.reason == "end", stop
    return s


def i64(x) -> np.ndarray:
    return np.array(x, dtype=np.int64)


# --- the spec's examples ------------------------------------------------------------------

def test_all_gather_spec_example():
    text = module("""    %r:2 = "stablehlo.all_gather"(%x, %y) {all_gather_dim = 1 : i64,
        replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>,
        channel_handle = #stablehlo.channel_handle<handle = 0, type = 0>}
        : (tensor<2x2xi64>, tensor<2x2xi64>) -> (tensor<2x4xi64>, tensor<2x4xi64>)
    return %r#0, %r#1 : tensor<2x4xi64>, tensor<2x4xi64>""",
                  "%x: tensor<2x2xi64>, %y: tensor<2x2xi64>", "tensor<2x4xi64>, tensor<2x4xi64>", 2)
    out = run_on_grid(text, [[i64([[1, 2], [3, 4]]), i64([[11, 12], [13, 14]])],
                             [i64([[5, 6], [7, 8]]), i64([[15, 16], [17, 18]])]])
    for p in range(2):
        np.testing.assert_array_equal(out[p][0], [[1, 2, 5, 6], [3, 4, 7, 8]])
        np.testing.assert_array_equal(out[p][1], [[11, 12, 15, 16], [13, 14, 17, 18]])


def test_all_reduce_spec_example():
    text = module(f"""    %r:2 = "stablehlo.all_reduce"(%x, %x) {ADD} {{
        replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>,
        channel_handle = #stablehlo.channel_handle<handle = 0, type = 0>}}
        : (tensor<4xi64>, tensor<4xi64>) -> (tensor<4xi64>, tensor<4xi64>)
    return %r#0, %r#1 : tensor<4xi64>, tensor<4xi64>""", "%x: tensor<4xi64>",
                  "tensor<4xi64>, tensor<4xi64>", 2)
    out = run_on_grid(text, [[i64([1, 2, 3, 4])], [i64([5, 6, 7, 8])]])
    for p in range(2):
        assert [o.tolist() for o in out[p]] == [[6, 8, 10, 12]] * 2


def test_all_reduce_with_another_region_and_promoted_type():
    # max over i32 operands with an i64 computation (C5: i32 is promotable to i64)
    text = module("""    %r = "stablehlo.all_reduce"(%x) ({
      ^bb0(%a: tensor<i64>, %b: tensor<i64>):
        %m = stablehlo.maximum %a, %b : tensor<i64>
        stablehlo.return %m : tensor<i64>
    }) {replica_groups = dense<[[0, 2], [1, 3]]> : tensor<2x2xi64>} : (tensor<3xi32>) -> tensor<3xi64>
    return %r : tensor<3xi64>""", "%x: tensor<3xi32>", "tensor<3xi64>", 4)
    xs = [np.array(v, np.int32) for v in ([1, 9, -3], [4, 0, 0], [2, 2, 7], [-5, 5, 1])]
    out = run_on_grid(text, [[x] for x in xs])
    assert [o[0].tolist() for o in out] == [[2, 9, 7], [4, 5, 1], [2, 9, 7], [4, 5, 1]]
    assert out[0][0].dtype == np.int64


def test_all_to_all_spec_example_variadic():
    text = module("""    %r:2 = "stablehlo.all_to_all"(%x, %y) {split_dimension = 1 : i64,
        concat_dimension = 0 : i64, split_count = 2 : i64,
        replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}
        : (tensor<2x4xi64>, tensor<2x4xi64>) -> (tensor<4x2xi64>, tensor<4x2xi64>)
    return %r#0, %r#1 : tensor<4x2xi64>, tensor<4x2xi64>""",
                  "%x: tensor<2x4xi64>, %y: tensor<2x4xi64>", "tensor<4x2xi64>, tensor<4x2xi64>", 2)
    x = np.arange(1, 33, dtype=np.int64).reshape(2, 2, 2, 4)  # [operand][process]
    out = run_on_grid(text, [[x[0, 0], x[1, 0]], [x[0, 1], x[1, 1]]])
    assert out[0][0].tolist() == [[1, 2], [5, 6], [9, 10], [13, 14]]
    assert out[1][0].tolist() == [[3, 4], [7, 8], [11, 12], [15, 16]]
    assert out[0][1].tolist() == [[17, 18], [21, 22], [25, 26], [29, 30]]
    assert out[1][1].tolist() == [[19, 20], [23, 24], [27, 28], [31, 32]]


def test_collective_broadcast_spec_example():
    text = module("""    %r = "stablehlo.collective_broadcast"(%x) {
        replica_groups = dense<[[2, 1]]> : tensor<1x2xi64>,
        channel_handle = #stablehlo.channel_handle<handle = 0, type = 0>}
        : (tensor<1x2xi64>) -> tensor<1x2xi64>
    return %r : tensor<1x2xi64>""", "%x: tensor<1x2xi64>", "tensor<1x2xi64>", 4)
    out = run_on_grid(text, [[i64([[1, 2]])], [i64([[3, 4]])], [i64([[5, 6]])], [i64([[7, 8]])]])
    assert [o[0].tolist() for o in out] == [[[0, 0]], [[5, 6]], [[5, 6]], [[0, 0]]]


def test_collective_permute_spec_example():
    text = module("""    %r = "stablehlo.collective_permute"(%x) {
        source_target_pairs = dense<[[0, 1], [1, 2]]> : tensor<2x2xi64>,
        channel_handle = #stablehlo.channel_handle<handle = 0, type = 0>}
        : (tensor<2x2xi64>) -> tensor<2x2xi64>
    return %r : tensor<2x2xi64>""", "%x: tensor<2x2xi64>", "tensor<2x2xi64>", 3)
    x = np.arange(1, 13, dtype=np.int64).reshape(3, 2, 2)
    s = session(text, [x])
    assert [o[0].tolist() for o in s.process_results] == [[[0, 0], [0, 0]], [[1, 2], [3, 4]],
                                                          [[5, 6], [7, 8]]]
    # provenance: process 2's result copies process 1's operand; process 0's has no source
    evs = {ev.frame.process: ev for ev in s.history}
    src = evs[2].provenance().sources(0, (1, 0))
    assert [(x_.process, x_.index, x_.role) for x_ in src] == [(1, (1, 0), "copy")]
    assert evs[0].provenance().sources(0, (0, 0)) == []
    e = explain_element(s, (evs[0].id, 0), (0, 0))
    assert "no process sends to this element" in format_explanation(e.explanation)


def test_reduce_scatter_spec_example_and_provenance():
    text = module(f"""    %r = "stablehlo.reduce_scatter"(%x) {ADD} {{scatter_dimension = 1 : i64,
        replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>,
        channel_handle = #stablehlo.channel_handle<handle = 0, type = 0>}}
        : (tensor<2x4xi64>) -> tensor<2x2xi64>
    return %r : tensor<2x2xi64>""", "%x: tensor<2x4xi64>", "tensor<2x2xi64>", 2)
    x = np.arange(1, 17, dtype=np.int64).reshape(2, 2, 4)
    s = session(text, [x])
    assert s.process_results[0][0].tolist() == [[10, 12], [18, 20]]
    assert s.process_results[1][0].tolist() == [[14, 16], [22, 24]]
    ev1 = next(ev for ev in s.history if ev.frame.process == 1)
    # %r@(1,0)[1, 0] = 22 = %x@(0,0)[1, 2] + %x@(1,0)[1, 2] = 7 + 15
    src = ev1.provenance().sources(0, (1, 0))
    assert [(x_.process, x_.index, x_.role) for x_ in src] == [(0, (1, 2), "combine"), (1, (1, 2), "combine")]
    text_ = format_explanation(explain_element(s, (ev1.id, 0), (1, 0)).explanation)
    assert "= 22" in text_ and "= 7" in text_ and "= 15" in text_ and "[(0, 0), (1, 0)]" in text_


def test_all_gather_provenance_names_the_source_process():
    text = module("""    %r = "stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64,
        replica_groups = dense<[[2, 0, 1]]> : tensor<1x3xi64>} : (tensor<2xi64>) -> tensor<6xi64>
    return %r : tensor<6xi64>""", "%x: tensor<2xi64>", "tensor<6xi64>", 3)
    s = session(text, [i64([[0, 1], [10, 11], [20, 21]])])
    assert s.process_results[1][0].tolist() == [20, 21, 0, 1, 10, 11]  # group order 2, 0, 1
    ev = s.history[0]
    prov = ev.provenance()
    for j in range(6):
        (src,) = prov.sources(0, (j,))
        assert ev.outputs[0][j] == 10 * src.process + src.index[0]
    # back on a mask: one mask per member, over that member's operand
    mask = np.zeros(6, bool)
    mask[[1, 4]] = True
    back = prov.back(0, mask)
    assert {(prov.operand_processes[k], role): m.tolist() for (k, role), m in back.items()} == \
        {(2, "copy"): [False, True], (1, "copy"): [True, False]}


def test_all_reduce_in_a_while_loop_steps_every_iteration():
    text = module(f"""    %z = stablehlo.constant dense<0> : tensor<i64>
    %w:2 = stablehlo.while(%i = %z, %acc = %x) : tensor<i64>, tensor<2xi64>
      cond {{
        %n = stablehlo.constant dense<3> : tensor<i64>
        %c = stablehlo.compare LT, %i, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
        stablehlo.return %c : tensor<i1>
      }} do {{
        %one = stablehlo.constant dense<1> : tensor<i64>
        %j = stablehlo.add %i, %one : tensor<i64>
        %r = "stablehlo.all_reduce"(%acc) {ADD} {{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}}
            : (tensor<2xi64>) -> tensor<2xi64>
        stablehlo.return %j, %r : tensor<i64>, tensor<2xi64>
      }}
    return %w#1 : tensor<2xi64>""", "%x: tensor<2xi64>", "tensor<2xi64>", 2)
    s = session(text, [i64([[1, 2], [3, 4]])])
    # each iteration doubles the sum: (1+3) -> 8 -> 16 -> 32... after 3 all_reduces: 4*4=16, 6*4=24
    assert s.process_results[0][0].tolist() == [16, 24]
    assert s.process_results[1][0].tolist() == [16, 24]
    reduces = [ev for ev in s.history if ev.op.name == "stablehlo.all_reduce"]
    assert [(ev.frame.process, ev.frame.iteration) for ev in reduces] == \
        [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2), (1, 2)]
    t = s.sources(s.result_defs()[0], (0,))
    args = sorted((g.label, g.role, np.argwhere(g.mask).tolist()) for g in t.groups if "%x" in g.label)
    assert args == [("%x@(0, 0)", "combine", [[0]]), ("%x@(1, 0)", "combine", [[0]])]


# --- (Cn) --------------------------------------------------------------------------------

def verify_error(text: str) -> str:
    with pytest.raises(VerificationError) as e:
        parse_and_verify(text)
    return str(e.value)


def parse_and_verify(text: str) -> None:
    Interpreter(parse_module(text))


def fn(body: str, args: str = "%x: tensor<2x4xi64>", results: str = "tensor<2x4xi64>") -> str:
    return f"func.func @main({args}) -> ({results}) {{\n{body}\n}}"


@pytest.mark.parametrize("body, message", [
    ('%r = "stablehlo.all_gather"(%x) {all_gather_dim = 2 : i64, replica_groups = dense<[[0]]> : '
     'tensor<1x1xi64>} : (tensor<2x4xi64>) -> tensor<2x4xi64>', "all_gather (C1): all_gather_dim = 2"),
    ('%r = "stablehlo.all_gather"(%x) {all_gather_dim = 1 : i64, replica_groups = dense<[[0, 0]]> : '
     'tensor<1x2xi64>} : (tensor<2x4xi64>) -> tensor<2x8xi64>',
     "all_gather (C2): replica_groups must be unique"),
    ('%r = "stablehlo.all_gather"(%x) {all_gather_dim = 1 : i64, replica_groups = dense<[[0]]> : '
     'tensor<1x1xi64>, use_global_device_ids} : (tensor<2x4xi64>) -> tensor<2x4xi64>',
     "all_gather (C5): use_global_device_ids needs channel_id > 0"),
    ('%r = "stablehlo.all_gather"(%x) {all_gather_dim = 1 : i64, replica_groups = dense<[[0]]> : '
     'tensor<1x1xi64>} : (tensor<2x4xi64>) -> tensor<3x4xi64>', "all_gather (C6)"),
    (f'%r = "stablehlo.all_reduce"(%x) {ADD} {{replica_groups = dense<[[1, 1]]> : tensor<1x2xi64>}} '
     ': (tensor<2x4xi64>) -> tensor<2x4xi64>', "all_reduce (C1)"),
    (f'%r = "stablehlo.all_reduce"(%x) {ADD} {{replica_groups = dense<[[0]]> : tensor<1x1xi64>, '
     'use_global_device_ids} : (tensor<2x4xi64>) -> tensor<2x4xi64>', "all_reduce (C4)"),
    (f'%r = "stablehlo.all_reduce"(%x) {ADD.replace("i64", "i16")} {{replica_groups = dense<[[0]]> : '
     'tensor<1x1xi64>} : (tensor<2x4xi64>) -> tensor<2x4xi16>',
     "all_reduce (C5): operand #0 element type i64 is not promotable"),
    (f'%r = "stablehlo.all_reduce"(%x) {ADD} {{replica_groups = dense<[[0]]> : tensor<1x1xi64>}} '
     ': (tensor<2x4xi64>) -> tensor<4x2xi64>', "all_reduce (C6)"),
    (f'%r = "stablehlo.reduce_scatter"(%x) {ADD} {{scatter_dimension = 3 : i64, replica_groups = '
     'dense<[[0]]> : tensor<1x1xi64>} : (tensor<2x4xi64>) -> tensor<2x4xi64>', "reduce_scatter (C2)"),
    (f'%r = "stablehlo.reduce_scatter"(%x) {ADD} {{scatter_dimension = 1 : i64, replica_groups = '
     'dense<[[0]]> : tensor<1x1xi64>} : (tensor<2x4xi64>) -> tensor<3x2xi64>', "reduce_scatter (C8)"),
    ('%r = "stablehlo.all_to_all"(%x) {split_dimension = 1 : i64, concat_dimension = 0 : i64, '
     'split_count = 3 : i64, replica_groups = dense<[[0, 1, 2]]> : tensor<1x3xi64>} '
     ': (tensor<2x4xi64>) -> tensor<6x1xi64>', "all_to_all (C2)"),
    ('%r = "stablehlo.all_to_all"(%x) {split_dimension = 1 : i64, concat_dimension = 5 : i64, '
     'split_count = 2 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} '
     ': (tensor<2x4xi64>) -> tensor<4x2xi64>', "all_to_all (C3)"),
    ('%r = "stablehlo.all_to_all"(%x) {split_dimension = 1 : i64, concat_dimension = 0 : i64, '
     'split_count = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} '
     ': (tensor<2x4xi64>) -> tensor<4x2xi64>', "all_to_all (C4)"),
    ('%r = "stablehlo.all_to_all"(%x) {split_dimension = 1 : i64, concat_dimension = 0 : i64, '
     'split_count = 2 : i64, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>} '
     ': (tensor<2x4xi64>) -> tensor<4x2xi64>', "all_to_all (C8)"),
    ('%r = "stablehlo.all_to_all"(%x) {split_dimension = 1 : i64, concat_dimension = 0 : i64, '
     'split_count = 2 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} '
     ': (tensor<2x4xi64>) -> tensor<2x4xi64>', "all_to_all (C9): result #0 must be tensor<4x2xi64>"),
    ('%r = "stablehlo.collective_permute"(%x) {source_target_pairs = dense<[[0, 1], [0, 2]]> : '
     'tensor<2x2xi64>} : (tensor<2x4xi64>) -> tensor<2x4xi64>', "collective_permute (C2)"),
    ('%r = "stablehlo.collective_permute"(%x) {source_target_pairs = dense<[[0, 1], [2, 1]]> : '
     'tensor<2x2xi64>} : (tensor<2x4xi64>) -> tensor<2x4xi64>', "collective_permute (C3)"),
    ('%r = "stablehlo.collective_permute"(%x) {source_target_pairs = dense<[[0, 1, 2]]> : '
     'tensor<1x3xi64>} : (tensor<2x4xi64>) -> tensor<2x4xi64>', "collective_permute (C1)"),
    ('%r = "stablehlo.collective_broadcast"(%x) {replica_groups = dense<[[0, 0]]> : tensor<1x2xi64>} '
     ': (tensor<2x4xi64>) -> tensor<2x4xi64>', "collective_broadcast (C1)"),
    ('%r = "stablehlo.collective_broadcast"(%x) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} '
     ': (tensor<2x4xi64>) -> tensor<2x4xi32>', "collective_broadcast (C3)"),
])
def test_verification_names_the_constraint(body, message):
    assert message in verify_error(fn("  " + body + "\n  return %x : tensor<2x4xi64>"))


@pytest.mark.parametrize("body, message", [
    ('%r = "stablehlo.all_to_all"(%x) {split_dimension = 1 : i64, concat_dimension = 0 : i64, '
     'split_count = 2 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} '
     ': (tensor<2x4xi64>) -> tensor<4x2xi64>',
     "all_to_all (C6): replica_groups [[0, 1]] must hold each of the 3"),
    ('%r = "stablehlo.collective_permute"(%x) {source_target_pairs = dense<[[0, 5]]> : tensor<1x2xi64>} '
     ': (tensor<2x4xi64>) -> tensor<2x4xi64>', "collective_permute (C4): source_target_pairs holds 5, but "
     "there are only 3 replica ids"),
    ('%r = "stablehlo.collective_broadcast"(%x) {replica_groups = dense<[[0, 4]]> : tensor<1x2xi64>} '
     ': (tensor<2x4xi64>) -> tensor<2x4xi64>', "collective_broadcast (C2): replica_groups holds 4"),
])
def test_grid_dependent_constraints_fail_at_run_time_naming_the_grid(body, message):
    t = "tensor<2x4xi64>"
    text = module("  " + body + f"\n  return %x : {t}", f"%x: {t}", t, 3)
    with pytest.raises(HloLabError, match=re.escape(message)):
        hlolab.run(text, [np.zeros((2, 4), np.int64)])


def test_operand_shapes_that_differ_between_processes_are_an_error_naming_both():
    text = """module {
  func.func @a(%x: tensor<2xi64>) -> tensor<2xi64> {
    %r = "stablehlo.collective_broadcast"(%x) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}
        : (tensor<2xi64>) -> tensor<2xi64>
    return %r : tensor<2xi64>
  }
  func.func @b(%x: tensor<3xi64>) -> tensor<3xi64> {
    %r = "stablehlo.collective_broadcast"(%x) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}
        : (tensor<3xi64>) -> tensor<3xi64>
    return %r : tensor<3xi64>
  }
  func.func @main() {
    %a = stablehlo.constant dense<1> : tensor<2xi64>
    %b = stablehlo.constant dense<2> : tensor<3xi64>
    %r:2 = "interpreter.run_parallel"(%a, %b) {programs = [[@a], [@b]]}
        : (tensor<2xi64>, tensor<3xi64>) -> (tensor<2xi64>, tensor<3xi64>)
    func.return
  }
}"""
    with pytest.raises(ExecutionError, match=r"operand #0 is int64\[2\] on process 0 .* but int64\[3\] on "
                       r"process 1"):
        hlolab.run(text)


def test_run_parallel_operand_count_and_ragged_programs():
    bad = """module {
  func.func @f(%x: tensor<2xi64>) -> tensor<2xi64> { return %x : tensor<2xi64> }
  func.func @main() {
    %a = stablehlo.constant dense<1> : tensor<2xi64>
    %r:2 = "interpreter.run_parallel"(%a) {programs = [[@f], [@f]]}
        : (tensor<2xi64>) -> (tensor<2xi64>, tensor<2xi64>)
    func.return
  }
}"""
    with pytest.raises(HloLabError, match="the programs take 2 arguments in all, run_parallel has 1 "):
        hlolab.run(bad)
    with pytest.raises(VerificationError, match="every row of programs"):
        hlolab.run(bad.replace("[[@f], [@f]]", "[[@f, @f], [@f]]"))


# --- send / recv, infeed / outfeed --------------------------------------------------------

SEND_RECV = module("""    %t = stablehlo.after_all : !stablehlo.token
    %id = stablehlo.replica_id : tensor<ui32>
    %zero = stablehlo.constant dense<0> : tensor<ui32>
    %is0 = stablehlo.compare EQ, %id, %zero : (tensor<ui32>, tensor<ui32>) -> tensor<i1>
    %r = "stablehlo.if"(%is0) ({
      %s = "stablehlo.send"(%x, %t) {channel_handle = #stablehlo.channel_handle<handle = 3, type = 1>}
          : (tensor<2xi64>, !stablehlo.token) -> !stablehlo.token
      stablehlo.return %x : tensor<2xi64>
    }, {
      %v, %t2 = "stablehlo.recv"(%t) {channel_handle = #stablehlo.channel_handle<handle = 3, type = 1>}
          : (!stablehlo.token) -> (tensor<2xi64>, !stablehlo.token)
      stablehlo.return %v : tensor<2xi64>
    }) : (tensor<i1>) -> tensor<2xi64>
    return %r : tensor<2xi64>""", "%x: tensor<2xi64>", "tensor<2xi64>", 2)


def test_send_and_recv_between_processes_with_provenance():
    s = session(SEND_RECV, [i64([[1, 2], [30, 40]])])
    assert [o[0].tolist() for o in s.process_results] == [[1, 2], [1, 2]]
    recv = next(ev for ev in s.history if ev.op.name == "stablehlo.recv")
    assert recv.frame.process == 1
    src = recv.provenance().sources(0, (1,))
    assert [(x_.process, x_.index, x_.role) for x_ in src] == [(0, (1,), "copy")]
    t = s.sources((recv.id, 0), (1,))
    assert [(g.label, np.argwhere(g.mask).tolist()) for g in t.groups] == [("%x@(0, 0)", [[1]])]
    # explain names the sending process's element (send / recv pair by channel, not by group)
    e = recv.explain(0, (1,))
    (child,) = e.steps[-1].children
    assert child.name == "operand0@(0, 0)" and int(child.value) == 2
    assert not any("zero" in str(n) for n in e.notes)


def test_channel_type_must_agree_with_is_host_transfer():
    text = fn("""  %t = stablehlo.after_all : !stablehlo.token
  %s = "stablehlo.send"(%x, %t) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
      is_host_transfer = true} : (tensor<2x4xi64>, !stablehlo.token) -> !stablehlo.token
  return %x : tensor<2x4xi64>""")
    assert "send (C1): channel_type must be 2 with is_host_transfer = true, got 1" in verify_error(text)


INFEED = """func.func @main(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<3xi32>) {
  %t = stablehlo.after_all : !stablehlo.token
  %a, %t1 = "stablehlo.infeed"(%t) : (!stablehlo.token) -> (tensor<2xf32>, !stablehlo.token)
  %b, %t2 = "stablehlo.infeed"(%t1) {infeed_config = ""}
      : (!stablehlo.token) -> (tensor<3xi32>, !stablehlo.token)
  %s = stablehlo.add %a, %x : tensor<2xf32>
  %o = "stablehlo.outfeed"(%s, %b, %t2) : (tensor<2xf32>, tensor<3xi32>, !stablehlo.token) -> !stablehlo.token
  return %s, %b : tensor<2xf32>, tensor<3xi32>
}"""


def test_infeed_and_outfeed_through_run_and_session():
    feed = [np.array([1, 2], np.float32), np.array([7, 8, 9], np.int32)]
    sink: list = []
    out = hlolab.run(INFEED, [np.array([10, 20], np.float32)], infeed=feed, outfeed=sink)
    assert out[0].tolist() == [11, 22] and out[1].tolist() == [7, 8, 9]
    assert [(p, [v.tolist() for v in vals]) for p, vals in sink] == [(0, [[11, 22], [7, 8, 9]])]
    s = Session(INFEED, infeed=feed)
    s.bind([np.array([0, 0], np.float32)])
    s.run()
    assert s.results[1].tolist() == [7, 8, 9]
    assert [(p, [v.tolist() for v in vals]) for p, vals in s.outfeed] == [(0, [[1, 2], [7, 8, 9]])]
    s.restart()  # the queue is refilled on every run
    s.run()
    assert s.results[0].tolist() == [1, 2]
    with pytest.raises(ExecutionError, match=r"infeed reads 1 values, the infeed holds 0"):
        hlolab.run(INFEED, [np.array([10, 20], np.float32)], infeed=[])
    with pytest.raises(ExecutionError, match=r"expects tensor<3xi32>, the infeed's next value is int64\[3\]"):
        hlolab.run(INFEED, [np.array([10, 20], np.float32)], infeed=[feed[0], np.arange(3)])


# --- aliases, explain, CLI ----------------------------------------------------------------

def test_xla_aliases_and_family():
    for alias, name in [("AllGather", "all_gather"), ("AllReduce", "all_reduce"), ("AllToAll", "all_to_all"),
                        ("CollectivePermute", "collective_permute"), ("ReduceScatter", "reduce_scatter"),
                        ("ReplicaId", "replica_id"), ("PartitionId", "partition_id"),
                        ("CollectiveBroadcast", "collective_broadcast"), ("Send", "send"), ("Recv", "recv"),
                        ("Infeed", "infeed"), ("Outfeed", "outfeed"), ("CrossReplicaSum", "all_reduce")]:
        d = lookup(alias)
        assert d is not None and d.name == f"stablehlo.{name}", alias
        assert d.family == "collective"


def test_replica_id_explain_names_the_grid_position():
    text = module("""    %r = stablehlo.replica_id : tensor<ui32>
    return %r : tensor<ui32>""", "", "tensor<ui32>", 2, 3)
    s = Session(text)
    s.run()
    ev = [e for e in s.history if e.frame.process == 5][0]
    assert int(ev.outputs[0]) == 1
    out = format_explanation(ev.explain(0, ()))
    assert "process 5 of the 2x3 grid is (replica 1, partition 2)" in out


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hlolab", *args], capture_output=True, text=True,
                          timeout=120)


def test_cli_runs_a_grid_with_per_process_arguments_and_infeed(tmp_path):
    f = tmp_path / "ar.mlir"
    f.write_text(f"""func.func @main(%x: tensor<2xi64>) -> tensor<2xi64> {{
    %r = "stablehlo.all_reduce"(%x) {ADD} {{replica_groups = dense<[[0, 1, 2]]> : tensor<1x3xi64>}}
        : (tensor<2xi64>) -> tensor<2xi64>
    return %r : tensor<2xi64>
}}""")
    r = cli("run", str(f), "--replicas", "3",
            "--args", "[dense<[[1, 2], [10, 20], [100, 200]]> : tensor<3x2xi64>]")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "process 2 (replica 2, partition 0) result #0: dense<[111, 222]> : tensor<2xi64>" in r.stdout
    r = cli("run", str(f), "--args", "[dense<[1, 2]> : tensor<2xi64>]")
    assert r.returncode == 1
    assert "all_reduce (C3): replica_groups holds 1, but there are only 1 replica ids" in r.stdout
    np.save(tmp_path / "a.npy", np.array([1.5, 2.5], np.float32))
    np.save(tmp_path / "b.npy", np.array([7, 8, 9], np.int32))
    g = tmp_path / "infeed.mlir"
    g.write_text(INFEED)
    r = cli("run", str(g), "--args", "[dense<[1.0, 1.0]> : tensor<2xf32>]",
            "--infeed", str(tmp_path / "a.npy"), "--infeed", str(tmp_path / "b.npy"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "result #0: dense<[2.500000e+00, 3.500000e+00]> : tensor<2xf32>" in r.stdout
    assert "outfeed (process 0): dense<[7, 8, 9]> : tensor<3xi32>" in r.stdout


def test_cli_trace_and_explain_name_the_process(tmp_path):
    f = tmp_path / "a2a.mlir"
    f.write_text("""module attributes {mhlo.num_replicas = 2 : i32} {
  func.func @main(%x: tensor<2x4xi64>) -> tensor<4x2xi64> {
    %y = "stablehlo.all_to_all"(%x) {split_dimension = 1 : i64, concat_dimension = 0 : i64,
        split_count = 2 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}
        : (tensor<2x4xi64>) -> tensor<4x2xi64>
    return %y : tensor<4x2xi64>
  }
}""")
    np.save(tmp_path / "x.npy", np.arange(1, 17, dtype=np.int64).reshape(2, 2, 4))  # one per process
    r = cli("trace", str(f), "--value", "%y", "--index", "1,0", "--process", "1",
            "--input", str(tmp_path / "x.npy"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "%y@(1, 0)[1, 0]" in r.stdout and "copy       %x@(0, 0)[1, 2]" in r.stdout
    r = cli("explain", str(f), "--value", "%y", "--index", "2,1", "--process", "1",
            "--input", str(tmp_path / "x.npy"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "all_to_all result[2, 1] = 12" in r.stdout
    assert "%x@(1, 0)[0, 3]  copy" in r.stdout
