"""The collective picture (hlolab/render/collective.py): the processes of a group side by
side, blocks coloured by the process they come from, the chosen element's sources.

The all_to_all program is the spec's example (003, all_to_all: two processes holding
[[1, 2, 3, 4], [5, 6, 7, 8]] and [[9, 10, 11, 12], [13, 14, 15, 16]], split_dimension 1,
concat_dimension 0, split_count 2); every expected source below is worked out by hand
from the op's definition.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("matplotlib")
from PIL import Image  # noqa: E402

from hlolab.cli import main  # noqa: E402
from hlolab.errors import HloLabError  # noqa: E402
from hlolab.render import style  # noqa: E402
from hlolab.render.collective import (  # noqa: E402
    COMBINED,
    NO_SOURCE,
    _board,
    _paint,
    collective_model,
    draw_collective,
    is_collective,
)
from hlolab.session import Session  # noqa: E402

# process p holds 8p + [[1, 2, 3, 4], [5, 6, 7, 8]]: the spec's operands on processes 0 and 1
A2A = """
func.func @main() -> tensor<4x2xi64> {
  %id = stablehlo.replica_id : tensor<ui32>
  %id64 = stablehlo.convert %id : (tensor<ui32>) -> tensor<i64>
  %eight = stablehlo.constant dense<8> : tensor<i64>
  %base = stablehlo.multiply %id64, %eight : tensor<i64>
  %b = stablehlo.broadcast_in_dim %base, dims = [] : (tensor<i64>) -> tensor<2x4xi64>
  %c = stablehlo.constant dense<[[1, 2, 3, 4], [5, 6, 7, 8]]> : tensor<2x4xi64>
  %operand = stablehlo.add %c, %b : tensor<2x4xi64>
  %result = "stablehlo.all_to_all"(%operand) {
    split_dimension = 1 : i64, concat_dimension = 0 : i64, split_count = 2 : i64,
    replica_groups = dense<GROUPS> : tensor<1x2xi64>
  } : (tensor<2x4xi64>) -> tensor<4x2xi64>
  return %result : tensor<4x2xi64>
}
"""

# process p holds 10p + [[1, 2], [3, 4]]
REDUCE_GATHER = """
func.func @main() -> (tensor<2x2xi64>, tensor<4x2xi64>) {
  %id = stablehlo.replica_id : tensor<ui32>
  %id64 = stablehlo.convert %id : (tensor<ui32>) -> tensor<i64>
  %ten = stablehlo.constant dense<10> : tensor<i64>
  %base = stablehlo.multiply %id64, %ten : tensor<i64>
  %b = stablehlo.broadcast_in_dim %base, dims = [] : (tensor<i64>) -> tensor<2x2xi64>
  %c = stablehlo.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>
  %operand = stablehlo.add %c, %b : tensor<2x2xi64>
  %sum = "stablehlo.all_reduce"(%operand) ({
    ^bb0(%x: tensor<i64>, %y: tensor<i64>):
      %s = stablehlo.add %x, %y : tensor<i64>
      stablehlo.return %s : tensor<i64>
  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2x2xi64>) -> tensor<2x2xi64>
  %gathered = "stablehlo.all_gather"(%operand) {
    all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>
  } : (tensor<2x2xi64>) -> tensor<4x2xi64>
  return %sum, %gathered : tensor<2x2xi64>, tensor<4x2xi64>
}
"""


def _event(text: str, value: str, process: int, grid: tuple[int, int] = (2, 1)):
    s = Session(text, grid=grid)
    s.bind([])
    stop = s.run()
    assert stop.error is None
    return s.event(s.find(value, process=process)[0])


@pytest.fixture(scope="module")
def a2a():
    return _event(A2A.replace("GROUPS", "[[0, 1]]"), "%result", 1)


def test_all_to_all_model_one_column_per_process(a2a):
    m = collective_model(a2a, (0, (2, 1)))
    assert m.group == [0, 1]
    assert [c.title for c in m.columns] == ["process 0 (replica 0, partition 0)",
                                            "process 1 (replica 1, partition 0)"]
    np.testing.assert_array_equal(m.columns[0].operands[0].values, [[1, 2, 3, 4], [5, 6, 7, 8]])
    np.testing.assert_array_equal(m.columns[1].operands[0].values, [[9, 10, 11, 12], [13, 14, 15, 16]])
    # the spec's results
    np.testing.assert_array_equal(m.columns[0].results[0].values, [[1, 2], [5, 6], [9, 10], [13, 14]])
    np.testing.assert_array_equal(m.columns[1].results[0].values, [[3, 4], [7, 8], [11, 12], [15, 16]])
    # a distinct colour per process
    assert m.colors == {0: style.PROCESS_COLORS[0], 1: style.PROCESS_COLORS[1]}
    assert len(set(m.colors.values())) == 2


def test_all_to_all_result_blocks_coloured_by_source_process(a2a):
    m = collective_model(a2a, (0, (2, 1)))
    by_block = [[0, 0], [0, 0], [1, 1], [1, 1]]  # rows 0-1 from process 0, rows 2-3 from process 1
    for c in m.columns:
        np.testing.assert_array_equal(c.results[0].source, by_block)
        np.testing.assert_array_equal(c.operands[0].source, np.full((2, 4), c.process))
        # each operand's columns 0-1 go to process 0, columns 2-3 to process 1 (split_dimension 1)
        np.testing.assert_array_equal(c.operands[0].dest, [[0, 0, 1, 1], [0, 0, 1, 1]])


@pytest.mark.parametrize("process, index, value, source", [
    (1, (2, 1), 12, (1, (0, 3))),  # process 1's block 1 of process 1: operand [0, 2 + 1]
    (1, (0, 0), 3, (0, (0, 2))),   # block 1 of process 0
    (0, (1, 0), 5, (0, (1, 0))),   # block 0 of process 0
    (0, (3, 1), 14, (1, (1, 1))),  # block 0 of process 1, row 3 - 2 = 1
])
def test_all_to_all_chosen_source_by_hand(process, index, value, source):
    ev = _event(A2A.replace("GROUPS", "[[0, 1]]"), "%result", process)
    m = collective_model(ev, (0, index))
    assert m.process == process and m.index == index
    assert ev.outputs[0][index] == value
    assert [(s.process, s.operand, s.index, s.role) for s in m.sources] == [(source[0], 0, source[1], "copy")]
    assert m.column(source[0]).operands[0].values[source[1]] == value
    assert f"= {value} on process {process}" in m.title


def test_all_to_all_group_order_sets_columns_and_colours():
    """replica_groups [[1, 0]] (the reference interpreter's issue 2433 case): process 1 is
    slot 0, so it is drawn first, in the first colour, and its block comes first."""
    ev = _event(A2A.replace("GROUPS", "[[1, 0]]"), "%result", 0)
    m = collective_model(ev, (0, (0, 0)))
    assert m.group == [1, 0] and [c.process for c in m.columns] == [1, 0]
    assert m.colors[1] == style.PROCESS_COLORS[0]
    np.testing.assert_array_equal(m.column(0).results[0].values, [[11, 12], [15, 16], [3, 4], [7, 8]])
    np.testing.assert_array_equal(m.column(0).results[0].source, [[1, 1], [1, 1], [0, 0], [0, 0]])
    # process 0 is slot 1: it keeps block 1 (columns 2-3) of each
    assert [(s.process, s.index) for s in m.sources] == [(1, (0, 2))]


def test_all_gather_model():
    ev = _event(REDUCE_GATHER, "%gathered", 0)
    m = collective_model(ev, (0, (3, 1)))
    for c in m.columns:
        np.testing.assert_array_equal(c.results[0].source, [[0, 0], [0, 0], [1, 1], [1, 1]])
        assert (c.operands[0].dest == COMBINED).all()  # every element goes to both processes
    assert ev.outputs[0][3, 1] == 14
    assert [(s.process, s.operand, s.index, s.role) for s in m.sources] == [(1, 0, (1, 1), "copy")]


def test_all_reduce_model():
    ev = _event(REDUCE_GATHER, "%sum", 0)
    m = collective_model(ev, (0, (1, 0)))
    assert ev.outputs[0][1, 0] == 3 + 13
    for c in m.columns:
        assert (c.results[0].source == COMBINED).all()
    assert [(s.process, s.index, s.role) for s in m.sources] == [(0, (1, 0), "combine"),
                                                                 (1, (1, 0), "combine")]
    assert "combined" in m.steps[0]


def test_collective_permute_zeros_have_no_source():
    from hlolab.xla import CollectivePermute, Parameter, XlaBuilder

    b = XlaBuilder("cp")
    x = Parameter(b, 0, "f32[2]", "x")
    c = b.build(CollectivePermute(x, [(0, 1)]))
    s = c.session([np.array([[1, 2], [3, 4]], np.float32)], grid=(2, 1))
    assert s.run().error is None
    m0 = collective_model(s.event(s.find("%0", process=0)[0]), (0, (1,)))
    assert (m0.column(0).results[0].source == NO_SOURCE).all()
    np.testing.assert_array_equal(m0.column(1).results[0].source, [0, 0])
    assert m0.sources == [] and "no source" in m0.chosen


def test_board_paints_blocks_by_process_and_steps(a2a):
    import matplotlib.colors as mcolors
    import matplotlib.pyplot as plt

    m = collective_model(a2a, (0, (2, 1)))
    pic = draw_collective(m)
    try:
        view = pic.board.views["p1.result0"]
        faces = view.collection.get_facecolor()
        assert mcolors.to_hex(faces[view.slot[(2, 1)]]) == style.PROCESS_COLORS[1].lower()
        assert mcolors.to_hex(faces[view.slot[(0, 0)]]) == style.PROCESS_COLORS[0].lower()
        assert set(pic.board.views) == {"p0.operand0", "p1.operand0", "p0.result0", "p1.result0"}
        # columns side by side: process 1's right of process 0's, results below operands
        assert pic.board.views["p1.operand0"].x > pic.board.views["p0.operand0"].x + 4
        assert pic.board.views["p1.result0"].y > pic.board.views["p1.operand0"].y + 2
    finally:
        plt.close(pic.fig)
    # step 1 of 2: only process 0's elements have arrived; process 1's are blank
    pic = _board(m)
    try:
        _paint(pic, 1)
        view = pic.board.views["p1.result0"]
        faces = view.collection.get_facecolor()
        assert mcolors.to_hex(faces[view.slot[(2, 1)]]) == style.CELL_FILL.lower()
        assert not view.texts[view.slot[(2, 1)]].get_visible()
        assert view.texts[view.slot[(0, 0)]].get_visible()
    finally:
        plt.close(pic.fig)


def test_export_png_and_gif_from_the_cli_byte_identical(tmp_path, capsys):
    src = tmp_path / "a2a.mlir"
    src.write_text(A2A.replace("GROUPS", "[[0, 1]]"))
    common = ["export", str(src), "--value", "%result", "--index", "2,1", "--process", "1", "--replicas", "2"]
    outs = {}
    for fmt in ("png", "gif"):
        for k in (1, 2):
            out = tmp_path / f"{k}.{fmt}"
            assert main([*common, "--format", fmt, "--out", str(out)]) == 0
            outs[fmt, k] = out.read_bytes()
        assert outs[fmt, 1] == outs[fmt, 2]
    text = capsys.readouterr().out
    assert "diagram of stablehlo.all_to_all" in text and "3 frames of stablehlo.all_to_all" in text
    gif = Image.open(tmp_path / "1.gif")
    assert gif.n_frames == 3  # one per sending process, then the chosen element
    frames = []
    for k in range(gif.n_frames):
        gif.seek(k)
        frames.append(np.asarray(gif.convert("RGB")))
    assert not np.array_equal(frames[0], frames[1]) and not np.array_equal(frames[1], frames[2])


def test_not_a_collective_and_grid_options_on_an_op(tmp_path):
    s = Session(REDUCE_GATHER, grid=(2, 1))
    s.bind([])
    s.run()
    ev = s.event(s.find("%operand", process=0)[0])
    assert not is_collective(ev)
    with pytest.raises(HloLabError, match="not a collective"):
        collective_model(ev)
    assert main(["export", "gather", "--replicas", "2", "--out", str(tmp_path / "g.png")]) != 0
