# ruff: noqa: E501  (MLIR programs keep the one-op-per-line form jax prints)
"""Sharded programs run whole (hlolab/ops/sharding.py): sdy.manual_computation, sharding
annotations and GSPMD's @Sharding / @SPMDFullToShardShape / @SPMDShardToFullShape, checked
by hand on 2 and 4 processes; the syntax round trip; provenance across processes; errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hlolab.errors import HloLabError, NotImplementedOpError, ParseError, UnsupportedError
from hlolab.interp.engine import Interpreter, drain
from hlolab.interp.processes import global_view, grid_args, module_grid, run_grid
from hlolab.ir.parser import parse_module
from hlolab.ir.printer import print_module
from hlolab.ops.sharding import AxisRef, parse_hlo_sharding, parse_mesh, parse_sharding
from hlolab.session import Session, explain_element

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "hlolab" / "examples" / "sharded_matmul.mlir"


def run(text: str, args: list[np.ndarray]) -> list[list[np.ndarray]]:
    """``@main`` on the module's grid, every process on the same global arguments."""
    m = parse_module(text)
    interp = Interpreter(m)
    grid = module_grid(m)
    return drain(run_grid(interp, interp.entry(), [list(args)] * (grid[0] * grid[1]), grid))


def module(n: int, mesh: str, body: str) -> str:
    return (f"module @m attributes {{mhlo.num_partitions = {n} : i32, mhlo.num_replicas = 1 : i32}} {{\n"
            f"  sdy.mesh @mesh = <{mesh}>\n{body}\n}}\n")


def i32(x) -> np.ndarray:
    return np.array(x, dtype=np.int32)


# --- hand-checked programs ----------------------------------------------------------------

ROWS_MATMUL = module(2, '["x"=2]', """
  func.func public @main(%x: tensor<4x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                         %w: tensor<3x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) -> tensor<4x2xf32> {
    %0 = sdy.manual_computation(%x, %w) in_shardings=[<@mesh, [{"x"}, {}]>, <@mesh, [{}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) {
      %1 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
      sdy.return %1 : tensor<2x2xf32>
    } : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
    return %0 : tensor<4x2xf32>
  }""")


def test_rows_sharded_matmul_on_2_processes():
    x = np.array([[1, 2, 3], [0, 1, 0], [2, 0, 1], [1, 1, 1]], dtype=np.float32)
    w = np.array([[1, 0], [0, 1], [1, -1]], dtype=np.float32)
    want = np.array([[4, -1], [0, 1], [3, -1], [2, 0]], dtype=np.float32)  # by hand
    for p, (out,) in enumerate(run(ROWS_MATMUL, [x, w])):
        np.testing.assert_array_equal(out, want, err_msg=f"process {p}")


def test_each_process_multiplies_its_own_rows():
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    w = np.ones((3, 2), dtype=np.float32)
    s = Session(ROWS_MATMUL)
    s.bind([x, w])
    assert s.run().reason == "end"
    shards = [ev for ev in s.history if ev.op.name == "sdy.manual_computation.shard"]
    assert len(shards) == 4  # 2 operands x 2 processes
    by = {(ev.frame.process, ev.op.results[0].name): ev.outputs[0] for ev in shards}
    np.testing.assert_array_equal(by[(0, "%a")], x[0:2])
    np.testing.assert_array_equal(by[(1, "%a")], x[2:4])
    np.testing.assert_array_equal(by[(1, "%b")], w)
    dots = {ev.frame.process: ev.outputs[0] for ev in s.history if ev.op.name == "stablehlo.dot_general"}
    np.testing.assert_array_equal(dots[1], [[21, 21], [30, 30]])  # rows 2, 3: 6+7+8, 9+10+11


def test_fixture_contraction_sharded_matmul_with_psum():
    """hlolab/examples/sharded_matmul.mlir: what jax prints by default (Shardy)."""
    text = FIXTURE.read_text()
    assert "// A 4-device sharded matmul" in text and "jax 0.10.2" in text
    x = np.array([[1, 2, 3, 4, 5, 6, 7, 8], [0] * 7 + [1], [1] * 8, [2] + [0] * 6 + [-2]], dtype=np.float32)
    w = np.array([[1, 0, k] for k in range(1, 9)], dtype=np.float32)
    w[7, 1] = 1
    # by hand: column 0 sums the row, column 1 is the row's last entry, column 2 is sum(k * x_k)
    want = np.array([[36, 8, 204], [1, 1, 8], [8, 1, 36], [0, -2, -14]], dtype=np.float32)
    for p, (out,) in enumerate(run(text, [x, w])):
        np.testing.assert_array_equal(out, want, err_msg=f"process {p}")


def test_cli_runs_the_fixture_and_prints_one_global_result():
    args = ("[dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0], "
            "[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -2.0]]> : tensor<4x8xf32>, "
            "dense<[[1.0, 0.0, 1.0], [1.0, 0.0, 2.0], [1.0, 0.0, 3.0], [1.0, 0.0, 4.0], [1.0, 0.0, 5.0], "
            "[1.0, 0.0, 6.0], [1.0, 0.0, 7.0], [1.0, 1.0, 8.0]]> : tensor<8x3xf32>]")
    r = subprocess.run([sys.executable, "-m", "hlolab", "run", str(FIXTURE), "--args", args],
                       capture_output=True, text=True, timeout=120, cwd=REPO)
    assert r.returncode == 0, r.stdout + r.stderr
    assert ("result #0: dense<[[3.600000e+01, 8.000000e+00, 2.040000e+02], [1.000000e+00, 1.000000e+00, "
            "8.000000e+00], [8.000000e+00, 1.000000e+00, 3.600000e+01], [0.000000e+00, -2.000000e+00, "
            "-1.400000e+01]]> : tensor<4x3xf32>") in r.stdout
    assert "process 1" not in r.stdout  # every process holds the same global result: printed once


def test_random_arguments_are_the_same_global_values_on_every_process():
    m = parse_module(FIXTURE.read_text())
    func = Interpreter(m).entry()
    assert global_view(func)
    per = grid_args(func, [], (1, 4), seed=3)
    for p in range(1, 4):
        for a, b in zip(per[0], per[p], strict=True):
            np.testing.assert_array_equal(a, b)
    assert not np.array_equal(per[0][0], grid_args(func, [], (1, 4), seed=4)[0][0])


PARTIAL = module(4, '["x"=2, "y"=2]', """
  func.func public @main(%x: tensor<4x2xi32>) -> tensor<4x2xi32> {
    %0 = sdy.manual_computation(%x) in_shardings=[<@mesh, [{"x", ?}, {"y"}]>] out_shardings=[<@mesh, [{"x"}, {"y"}]>] manual_axes={"y"} (%a: tensor<4x1xi32>) {
      %p = stablehlo.partition_id : tensor<ui32>
      %q = stablehlo.convert %p : (tensor<ui32>) -> tensor<i32>
      %b = stablehlo.broadcast_in_dim %q, dims = [] : (tensor<i32>) -> tensor<4x1xi32>
      %1 = stablehlo.add %a, %b : tensor<4x1xi32>
      sdy.return %1 : tensor<4x1xi32>
    } : (tensor<4x2xi32>) -> tensor<4x2xi32>
    return %0 : tensor<4x2xi32>
  }""")


def test_partially_manual_2d_mesh_slices_only_the_manual_axis():
    # manual "y" shards dim 1; "x" (free) leaves dim 0 whole in the body. Process p is mesh
    # (x, y) = (p // 2, p % 2); column y of the result comes from the device of the same x
    # row with that y: process 0 gets [col0 + 0, col1 + 1], process 2 [col0 + 2, col1 + 3]
    x = i32([[10, 20], [30, 40], [50, 60], [70, 80]])
    out = [r[0] for r in run(PARTIAL, [x])]
    for p in range(4):
        base = 2 * (p // 2)
        np.testing.assert_array_equal(out[p], x + i32([base, base + 1]), err_msg=f"process {p}")


def test_sub_axes_and_replicated_blocks_take_the_own_copy():
    text = module(4, '["x"=4]', """
  func.func public @main(%x: tensor<4xi32>) -> tensor<4xi32> {
    %0 = sdy.manual_computation(%x) in_shardings=[<@mesh, [{"x":(2)2}]>] out_shardings=[<@mesh, [{"x":(1)2}]>] manual_axes={"x"} (%a: tensor<2xi32>) {
      %p = stablehlo.partition_id : tensor<ui32>
      %q = stablehlo.convert %p : (tensor<ui32>) -> tensor<i32>
      %b = stablehlo.broadcast_in_dim %q, dims = [] : (tensor<i32>) -> tensor<2xi32>
      %1 = stablehlo.add %a, %b : tensor<2xi32>
      sdy.return %1 : tensor<2xi32>
    } : (tensor<4xi32>) -> tensor<4xi32>
    return %0 : tensor<4xi32>
  }""")
    x = i32([100, 200, 300, 400])
    out = [r[0] for r in run(text, [x])]
    # in: device d holds block (d // 2) % 2; out: block d % 2, taken from the device that
    # shares d's other digit (d // 2): process 0 <- devices 0, 1; process 2 <- devices 2, 3
    np.testing.assert_array_equal(out[0], [100, 200, 101, 201])
    np.testing.assert_array_equal(out[1], [100, 200, 101, 201])
    np.testing.assert_array_equal(out[2], [302, 402, 303, 403])
    np.testing.assert_array_equal(out[3], [302, 402, 303, 403])


def test_mesh_device_ids_permute_the_blocks():
    text = module(2, '["x"=2], device_ids=[1, 0]', """
  func.func public @main(%x: tensor<4xi32>) -> tensor<4xi32> {
    %0 = sdy.manual_computation(%x) in_shardings=[<@mesh, [{"x"}]>] out_shardings=[<@mesh, [{"x"}]>] manual_axes={"x"} (%a: tensor<2xi32>) {
      %p = stablehlo.partition_id : tensor<ui32>
      %q = stablehlo.convert %p : (tensor<ui32>) -> tensor<i32>
      %b = stablehlo.broadcast_in_dim %q, dims = [] : (tensor<i32>) -> tensor<2xi32>
      %1 = stablehlo.add %a, %b : tensor<2xi32>
      sdy.return %1 : tensor<2xi32>
    } : (tensor<4xi32>) -> tensor<4xi32>
    return %0 : tensor<4xi32>
  }""")
    out = [r[0] for r in run(text, [i32([1, 2, 3, 4])])]
    # device 1 is mesh position 0 (block 0), device 0 position 1 (block 1)
    for o in out:
        np.testing.assert_array_equal(o, [2, 3, 3, 4])


GSPMD = """module @g attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%x: tensor<4x2xi32> {mhlo.sharding = "{devices=[2,1]<=[2]}"}) -> tensor<4x2xi32> {
    %0 = stablehlo.custom_call @Sharding(%x) {mhlo.sharding = "{devices=[2,1]<=[2]}"} : (tensor<4x2xi32>) -> tensor<4x2xi32>
    %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) {mhlo.sharding = "{manual}"} : (tensor<4x2xi32>) -> tensor<2x2xi32>
    %2 = call @body(%1) : (tensor<2x2xi32>) -> tensor<2x2xi32>
    %3 = stablehlo.custom_call @Sharding(%2) {mhlo.sharding = "{manual}"} : (tensor<2x2xi32>) -> tensor<2x2xi32>
    %4 = stablehlo.custom_call @SPMDShardToFullShape(%3) {mhlo.sharding = "{devices=[1,2]<=[2]}"} : (tensor<2x2xi32>) -> tensor<2x4xi32>
    return %4 : tensor<2x4xi32>
  }
  func.func private @body(%a: tensor<2x2xi32>) -> tensor<2x2xi32> {
    %0 = stablehlo.multiply %a, %a : tensor<2x2xi32>
    return %0 : tensor<2x2xi32>
  }
}"""


def test_gspmd_full_to_shard_and_back_assembles_by_the_result_sharding():
    text = GSPMD.replace("-> tensor<4x2xi32> {\n", "-> tensor<2x4xi32> {\n", 1)
    x = i32([[1, 2], [3, 4], [5, 6], [7, 8]])
    out = [r[0] for r in run(text, [x])]
    # rows 0:2 squared on partition 0, rows 2:4 on partition 1, placed side by side (dim 1)
    for o in out:
        np.testing.assert_array_equal(o, [[1, 4, 25, 36], [9, 16, 49, 64]])


def test_hlo_sharding_strings():
    s = parse_hlo_sharding("{devices=[2,2]<=[2,2]T(1,0)}")
    np.testing.assert_array_equal(s.assignment, [[0, 2], [1, 3]])
    s = parse_hlo_sharding("{devices=[2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}")
    assert s.subgroups == ("replicated",) and s.assignment.shape == (2, 1, 2)
    s = parse_hlo_sharding("{devices=[2,2]3,1,2,0}")
    np.testing.assert_array_equal(s.assignment, [[3, 1], [2, 0]])
    assert parse_hlo_sharding("{replicated}").kind == "replicated"
    with pytest.raises(UnsupportedError, match="tuple shardings"):
        parse_hlo_sharding("{{replicated}, {manual}}")


def test_sdy_attribute_syntax():
    s = parse_sharding('@mesh, [{"x", "y":(2)2, ?}p1, {?}, {}], replicated={"z"}')
    assert s.mesh == "mesh"
    assert s.dims == ((AxisRef("x"), AxisRef("y", 2, 2)), (), ())
    assert s.replicated == (AxisRef("z"),)
    m = parse_mesh("mesh", '["x"=2, "y"=4], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]')
    assert m.size == 8 and m.coords(7) == {"x": 0, "y": 0} and m.coords(2) == {"x": 1, "y": 1}


# --- annotations -----------------------------------------------------------------------------

ANNOTATED = module(4, '["x"=2, "y"=2]', """
  func.func public @main(%x: tensor<4x4xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<4x4xi32> {
    %0 = stablehlo.add %x, %x : tensor<4x4xi32>
    %1 = sdy.sharding_constraint %0 <@mesh, [{}, {"y"}]> : tensor<4x4xi32>
    %2 = sdy.reshard %1 <@mesh, [{"x", "y"}, {}]> : tensor<4x4xi32>
    return %2 : tensor<4x4xi32>
  }""")


def test_annotations_are_identity_and_explain_who_holds_the_element():
    x = np.arange(16, dtype=np.int32).reshape(4, 4)
    for (out,) in run(ANNOTATED, [x]):
        np.testing.assert_array_equal(out, 2 * x)
    s = Session(ANNOTATED)
    s.bind([x])
    s.run()
    e = explain_element(s, "%1", (3, 3))
    step = e.explanation.steps[0]
    # [{}, {"y"}]: column block 1 of 2, held by the devices with y = 1 (1 and 3)
    assert step.substituted.args == {"block": (0, 1), "counts": (1, 2), "devices": [1, 3]}
    e = explain_element(s, "%2", (2, 0))
    # [{"x", "y"}, {}]: 4 row blocks, x major: rows 2:3 are block 2 = (x=1, y=0) = device 2
    assert e.explanation.steps[0].substituted.args["devices"] == [2]
    assert [src.source.index for src in e.sources] == [(2, 0)]


# --- syntax ---------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [ROWS_MATMUL, PARTIAL, ANNOTATED, FIXTURE.read_text()])
def test_parse_print_round_trip(text):
    m = parse_module(text)
    for generic in (False, True):
        again = parse_module(print_module(m, generic=generic))
        assert again == m
    printed = print_module(m)
    assert "sdy.mesh @mesh = <" in printed
    if "manual_computation" in text:
        assert "sdy.manual_computation(" in printed and "manual_axes={" in printed
        assert '"sdy.manual_computation"' in print_module(m, generic=True)


def test_unknown_sdy_ops_are_clear_errors():
    bad = ANNOTATED.replace("sdy.reshard %1", "sdy.all_slice %1")
    with pytest.raises(ParseError, match="unknown operation 'sdy.all_slice'"):
        parse_module(bad)
    generic = ANNOTATED.replace(
        'sdy.reshard %1 <@mesh, [{"x", "y"}, {}]> : tensor<4x4xi32>',
        '"sdy.all_slice"(%1) : (tensor<4x4xi32>) -> tensor<4x4xi32>')
    with pytest.raises(NotImplementedOpError, match="sdy.all_slice is not implemented"):
        run(generic, [np.zeros((4, 4), np.int32)])


# --- provenance -------------------------------------------------------------------------------

def test_an_output_element_traces_back_to_each_devices_argument_shard():
    s = Session(FIXTURE.read_text())
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    w = np.arange(24, dtype=np.float32).reshape(8, 3)
    s.bind([x, w])
    assert s.run().reason == "end"
    np.testing.assert_array_equal(s.process_results[0][0], x @ w)
    trace = s.sources(s.result_defs()[0], (1, 2))
    got = {(s.process_of(g.value), s.label(g.value).split("@")[0]): np.argwhere(g.mask).tolist()
           for g in trace.groups}
    for p in range(4):  # device p multiplies x[:, 2p:2p+2] by w[2p:2p+2, :]
        assert got[(p, "%arg0")] == [[1, 2 * p], [1, 2 * p + 1]], got
        assert got[(p, "%arg1")] == [[2 * p, 2], [2 * p + 1, 2]], got
    assert len(got) == 8
    # the result element of process 0 is its own body result (replicated out sharding)
    e = explain_element(s, s.result_defs()[0], (1, 2))
    assert [(src.source.process, src.source.index) for src in e.sources] == [(0, (1, 2))]
    assert float(e.explanation.value) == float((x @ w)[1, 2])
    assert any(n.key == "sharding.note.own" for n in e.explanation.notes)


def test_a_body_argument_element_comes_from_the_global_operand():
    s = Session(FIXTURE.read_text())
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    s.bind([x, np.ones((8, 3), np.float32)])
    s.run()
    d = s.find("%arg2", process=3)
    e = explain_element(s, d, (2, 1))
    assert float(e.element) == x[2, 7]
    assert [src.source.index for src in e.sources] == [(2, 7)]
    assert [st.name for st in e.explanation.steps] == ["sharding", "shard_start", "operand_index", "result"]
    assert e.explanation.steps[1].value == (0, 6)


def test_differing_replicated_copies_are_noted():
    text = module(2, '["x"=2]', """
  func.func public @main(%x: tensor<2xi32>) -> tensor<2xi32> {
    %0 = sdy.manual_computation(%x) in_shardings=[<@mesh, [{}]>] out_shardings=[<@mesh, [{}]>] manual_axes={"x"} (%a: tensor<2xi32>) {
      %p = stablehlo.partition_id : tensor<ui32>
      %q = stablehlo.convert %p : (tensor<ui32>) -> tensor<i32>
      %b = stablehlo.broadcast_in_dim %q, dims = [] : (tensor<i32>) -> tensor<2xi32>
      %1 = stablehlo.add %a, %b : tensor<2xi32>
      sdy.return %1 : tensor<2xi32>
    } : (tensor<2xi32>) -> tensor<2xi32>
    return %0 : tensor<2xi32>
  }""")
    out = [r[0] for r in run(text, [i32([5, 6])])]
    np.testing.assert_array_equal(out[0], [5, 6])  # each process keeps its own copy
    np.testing.assert_array_equal(out[1], [6, 7])
    s = Session(text)
    s.bind([i32([5, 6])])
    s.run()
    e = explain_element(s, s.find("%0", process=1), (0,))
    notes = {n.key: n.args for n in e.explanation.notes}
    assert notes["sharding.note.differ"] == {"devices": [0], "device": 1}


# --- errors -----------------------------------------------------------------------------------

def _err(text: str, args: list[np.ndarray], exc: type = HloLabError) -> str:
    with pytest.raises(exc) as info:
        run(text, args)
    return str(info.value)


def test_error_shard_shape_does_not_divide():
    text = ROWS_MATMUL.replace("tensor<4x3xf32>", "tensor<5x3xf32>")
    msg = _err(text, [np.zeros((5, 3), np.float32), np.zeros((3, 2), np.float32)])
    assert "manual_computation (C3)" in msg and "dim 0 of size 5 does not split" in msg


def test_error_unknown_mesh_axis():
    text = ROWS_MATMUL.replace('in_shardings=[<@mesh, [{"x"}, {}]>', 'in_shardings=[<@mesh, [{"z"}, {}]>')
    msg = _err(text, [np.zeros((4, 3), np.float32), np.zeros((3, 2), np.float32)])
    assert "manual_computation (C2)" in msg and 'names axis "z"' in msg


def test_error_unknown_manual_axis_and_mesh():
    text = ROWS_MATMUL.replace('manual_axes={"x"}', 'manual_axes={"q"}')
    msg = _err(text, [np.zeros((4, 3), np.float32), np.zeros((3, 2), np.float32)])
    assert "manual_computation (C5)" in msg and 'manual axis "q"' in msg
    text = ROWS_MATMUL.replace("<@mesh, [{}, {}]>]", "<@other, [{}, {}]>]")
    msg = _err(text, [np.zeros((4, 3), np.float32), np.zeros((3, 2), np.float32)])
    assert "manual_computation (C2)" in msg and "several meshes" in msg


def test_error_mesh_does_not_match_the_grid():
    text = ROWS_MATMUL.replace("mhlo.num_partitions = 2", "mhlo.num_partitions = 4")
    msg = _err(text, [np.zeros((4, 3), np.float32), np.zeros((3, 2), np.float32)])
    assert "manual_computation (C4)" in msg and "the mesh has 2 devices but the process grid has 4" in msg


def test_error_body_types_and_counts():
    text = ROWS_MATMUL.replace("(%a: tensor<2x3xf32>", "(%a: tensor<4x3xf32>").replace(
        "(tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>", "(tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>"
    ).replace("sdy.return %1 : tensor<2x2xf32>", "sdy.return %1 : tensor<4x2xf32>")
    msg = _err(text, [np.zeros((4, 3), np.float32), np.zeros((3, 2), np.float32)])
    assert "manual_computation (C3)" in msg and "gives a body operand of shape [2, 3]" in msg
    text = ROWS_MATMUL.replace(', <@mesh, [{}, {}]>] out_shardings', '] out_shardings')
    with pytest.raises(HloLabError, match=r"manual_computation \(C1\): 1 in_shardings for 2 operands"):
        Interpreter(parse_module(text))


def test_error_gspmd_full_to_shard_needs_a_sharding_annotation():
    text = GSPMD.replace("-> tensor<4x2xi32> {\n", "-> tensor<2x4xi32> {\n", 1).replace(
        "@SPMDFullToShardShape(%0)", "@SPMDFullToShardShape(%x)")
    msg = _err(text, [np.zeros((4, 2), np.int32)])
    assert "custom_call (C1)" in msg and "must be the result of a custom_call @Sharding" in msg


# --- stepping ---------------------------------------------------------------------------------

def test_the_stepper_steps_shards_then_the_body_then_the_assembly():
    s = Session(FIXTURE.read_text())
    s.bind(seed=0)
    names = []
    while (stop := s.step()).reason == "step":
        names.append((stop.event.frame.process, stop.event.op.name))
    assert stop.reason == "end"
    ops = [n for _, n in names]
    assert ops == (["sdy.manual_computation.shard"] * 8 + ["stablehlo.dot_general"] * 4
                   + ["stablehlo.all_reduce"] * 4 + ["sdy.manual_computation"] * 4)
    assert sorted(p for p, n in names if n == "sdy.manual_computation") == [0, 1, 2, 3]
    # focus on one process: it runs until its collective waits for the others
    s.bind(seed=0)
    s.focus = 2
    stop = s.run()
    assert stop.reason == "waiting" and "all_reduce" in stop.detail


def test_gspmd_sharding_annotation_explains_its_tiles():
    s = Session(GSPMD.replace("-> tensor<4x2xi32> {\n", "-> tensor<2x4xi32> {\n", 1))
    s.bind([i32([[1, 2], [3, 4], [5, 6], [7, 8]])])
    assert s.run().reason == "end"
    e = explain_element(s, "%0", (3, 1))
    assert e.explanation.steps[0].substituted.args == {"block": (1, 0), "counts": (2, 1), "devices": [1]}
    assert [src.source.index for src in e.sources] == [(3, 1)]
    # the assembled result: element (1, 3) is column 1 of partition 1's block
    e = explain_element(s, s.result_defs()[0], (1, 3))
    assert [(src.source.process, src.source.index) for src in e.sources] == [(1, (1, 1))]
    assert int(e.element) == 64


def test_each_replica_assembles_its_own_partitions():
    text = module(2, '["x"=2]', """
  func.func public @main(%x: tensor<4xi32>) -> tensor<4xi32> {
    %0 = sdy.manual_computation(%x) in_shardings=[<@mesh, [{"x"}]>] out_shardings=[<@mesh, [{"x"}]>] manual_axes={"x"} (%a: tensor<2xi32>) {
      %r = stablehlo.replica_id : tensor<ui32>
      %p = stablehlo.partition_id : tensor<ui32>
      %ten = stablehlo.constant dense<10> : tensor<ui32>
      %r10 = stablehlo.multiply %r, %ten : tensor<ui32>
      %id = stablehlo.add %r10, %p : tensor<ui32>
      %q = stablehlo.convert %id : (tensor<ui32>) -> tensor<i32>
      %b = stablehlo.broadcast_in_dim %q, dims = [] : (tensor<i32>) -> tensor<2xi32>
      %1 = stablehlo.add %a, %b : tensor<2xi32>
      sdy.return %1 : tensor<2xi32>
    } : (tensor<4xi32>) -> tensor<4xi32>
    return %0 : tensor<4xi32>
  }""").replace("mhlo.num_replicas = 1", "mhlo.num_replicas = 2")
    out = [r[0] for r in run(text, [i32([100, 200, 300, 400])])]
    assert len(out) == 4  # 2 replicas x 2 partitions; each replica is one mesh of 2 devices
    for p, o in enumerate(out):
        r = p // 2  # replica r's blocks come from its own partitions only: + 10 r
        np.testing.assert_array_equal(o, [100 + 10 * r, 200 + 10 * r, 301 + 10 * r, 401 + 10 * r])


def test_annotation_errors_name_the_op_and_constraint():
    bad_axis = ANNOTATED.replace('sdy.sharding_constraint %0 <@mesh, [{}, {"y"}]>',
                                 'sdy.sharding_constraint %0 <@mesh, [{}, {"w"}]>')
    msg = _err(bad_axis, [np.zeros((4, 4), np.int32)])
    assert "sdy.sharding_constraint (C2)" in msg and 'names axis "w"' in msg
    bad_rank = ANNOTATED.replace('sdy.reshard %1 <@mesh, [{"x", "y"}, {}]>', 'sdy.reshard %1 <@mesh, [{"x"}]>')
    with pytest.raises(HloLabError, match=r"sdy.reshard \(C1\): sharding <@mesh, \[\{\"x\"\}\]> has 1 dims"):
        Interpreter(parse_module(bad_rank))
    bad_mesh = ANNOTATED.replace("<@mesh, [{}, {\"y\"}]>", "<@nomesh, [{}, {\"y\"}]>")
    msg = _err(bad_mesh, [np.zeros((4, 4), np.int32)])
    assert "names mesh @nomesh, which the module does not define (meshes: @mesh)" in msg
