"""The collectives' parameter schemas (hlolab/ops/collective_examples.py): each example runs
on its own process grid with per-process inputs; the spec-example presets give the spec's
worked examples' results on every process; the modes, groups and overrides reach the op."""

from __future__ import annotations

import numpy as np
import pytest

from hlolab.errors import VerificationError
from hlolab.ops.examples import ParamError, make_example, schema_for
from hlolab.session import Session

COLLECTIVES = ["stablehlo.all_gather", "stablehlo.all_reduce", "stablehlo.reduce_scatter",
               "stablehlo.all_to_all", "stablehlo.collective_permute", "stablehlo.collective_broadcast",
               "stablehlo.collective_reduce", "stablehlo.replica_id", "stablehlo.partition_id"]


def run_grid(ex) -> list[list[list]]:
    """Every process's results as lists (process p = replica * partitions + partition)."""
    s = Session(ex.text)
    assert s.grid == ex.grid  # the text carries the grid
    s.bind(ex.inputs)
    stop = s.run()
    assert stop.reason == "end", stop
    return [[np.asarray(r).tolist() for r in rs] for rs in s.process_results]


# --- the spec's worked examples (stablehlo spec, one section per op) --------------------------

SPEC = {
    "stablehlo.all_gather": ((2, 1), [
        [[[1, 2, 5, 6], [3, 4, 7, 8]], [[11, 12, 15, 16], [13, 14, 17, 18]]],
        [[[1, 2, 5, 6], [3, 4, 7, 8]], [[11, 12, 15, 16], [13, 14, 17, 18]]]]),
    # the spec's text passes %operand0 twice; its listed results are those of (operand0, operand1)
    "stablehlo.all_reduce": ((2, 1), [[[6, 8, 10, 12], [22, 24, 26, 28]],
                                      [[6, 8, 10, 12], [22, 24, 26, 28]]]),
    "stablehlo.reduce_scatter": ((2, 1), [[[[10, 12], [18, 20]]], [[[14, 16], [22, 24]]]]),
    "stablehlo.all_to_all": ((2, 1), [
        [[[1, 2], [5, 6], [9, 10], [13, 14]], [[17, 18], [21, 22], [25, 26], [29, 30]]],
        [[[3, 4], [7, 8], [11, 12], [15, 16]], [[19, 20], [23, 24], [27, 28], [31, 32]]]]),
    "stablehlo.collective_permute": ((3, 1), [[[[0, 0], [0, 0]]], [[[1, 2], [3, 4]]], [[[5, 6], [7, 8]]]]),
    "stablehlo.collective_broadcast": ((4, 1), [[[[0, 0]]], [[[5, 6]]], [[[5, 6]]], [[[0, 0]]]]),
}
SPEC_OPERANDS = {  # the spec's %operand@(r, p) values, per process then operand
    "stablehlo.all_gather": [[[[1, 2], [3, 4]], [[11, 12], [13, 14]]],
                             [[[5, 6], [7, 8]], [[15, 16], [17, 18]]]],
    "stablehlo.all_to_all": [[[[1, 2, 3, 4], [5, 6, 7, 8]], [[17, 18, 19, 20], [21, 22, 23, 24]]],
                             [[[9, 10, 11, 12], [13, 14, 15, 16]], [[25, 26, 27, 28], [29, 30, 31, 32]]]],
    "stablehlo.collective_broadcast": [[[[1, 2]]], [[[3, 4]]], [[[5, 6]]], [[[7, 8]]]],
}


@pytest.mark.parametrize("name", sorted(SPEC))
def test_spec_example_gives_the_spec_results_on_every_process(name):
    ex = make_example(name, "spec-example")
    grid, want = SPEC[name]
    assert ex.grid == grid and ex.n_processes == len(want)
    assert run_grid(ex) == want


@pytest.mark.parametrize("name", sorted(SPEC_OPERANDS))
def test_spec_example_inputs_are_the_specs_per_process(name):
    ex = make_example(name, "spec-example")
    assert [[x.tolist() for x in xs] for xs in ex.process_inputs] == SPEC_OPERANDS[name]
    # inputs: what Session.bind takes, every process's values stacked on a leading dim
    assert [x.shape[0] for x in ex.inputs] == [ex.n_processes] * len(ex.inputs)


def test_spec_example_attributes_are_the_specs():
    text = make_example("all_to_all", "spec-example").text
    assert text.startswith("module attributes {mhlo.num_replicas = 2 : i32, mhlo.num_partitions = 1 : i32}")
    for attr in ("split_dimension = 1 : i64", "concat_dimension = 0 : i64", "split_count = 2 : i64",
                 "replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>",
                 "(tensor<2x4xi64>, tensor<2x4xi64>) -> (tensor<4x2xi64>, tensor<4x2xi64>)"):
        assert attr in text, attr
    text = make_example("collective_broadcast", "spec-example").text
    assert "mhlo.num_replicas = 4 : i32" in text and "dense<[[2, 1]]> : tensor<1x2xi64>" in text
    text = make_example("collective_permute", "spec-example").text
    assert "dense<[[0, 1], [1, 2]]> : tensor<2x2xi64>" in text


# --- defaults ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", COLLECTIVES)
def test_default_runs_on_its_grid_with_different_inputs_per_process(name):
    ex = make_example(name)
    assert ex.n_processes > 1
    results = run_grid(ex)
    assert len(results) == ex.n_processes
    inferred = schema_for(name).infer(ex.params)
    assert [np.asarray(r).shape for r in results[0]] == [t.static_shape() for t in inferred]
    if ex.process_inputs and ex.process_inputs[0]:  # every process sends its own numbers
        flat = [np.concatenate([x.ravel() for x in xs]).tolist() for xs in ex.process_inputs]
        assert len({tuple(f) for f in flat}) == ex.n_processes
        assert len(set(sum(flat, []))) == sum(len(f) for f in flat)


def test_default_all_to_all_exchanges_blocks():
    ex = make_example("all_to_all")  # 2 replicas, 2x4 counting 1.. on process 0, 9.. on process 1
    assert run_grid(ex) == [[[[1, 2], [5, 6], [9, 10], [13, 14]]], [[[3, 4], [7, 8], [11, 12], [15, 16]]]]


def test_ids_per_process():
    assert run_grid(make_example("replica_id")) == [[0], [0], [1], [1]]  # a 2x2 grid
    assert run_grid(make_example("partition_id")) == [[0], [1], [0], [1]]
    ex = make_example("replica_id", params={"replicas": "3", "partitions": "1"})
    assert run_grid(ex) == [[0], [1], [2]]


def test_default_collective_permute_is_a_ring():
    assert run_grid(make_example("collective_permute")) == [
        [[[9, 10], [11, 12]]], [[[1, 2], [3, 4]]], [[[5, 6], [7, 8]]]]


@pytest.mark.parametrize("computation, want", [("add", [6, 8, 10, 12]), ("max", [5, 6, 7, 8]),
                                               ("min", [1, 2, 3, 4]), ("mul", [5, 12, 21, 32])])
def test_all_reduce_combiner(computation, want):
    ex = make_example("all_reduce", params={"computation": computation})
    assert run_grid(ex) == [[want], [want]]


# --- grids and modes ---------------------------------------------------------------------------

def test_grid_params_make_the_grid_and_groups():
    ex = make_example("all_gather", params={"replicas": "4", "replica_groups": "0,1;2,3", "operand": "1x2"})
    assert ex.grid == (4, 1)
    # process p holds 2p+1, 2p+2; each pair gathers its two rows' values along dim 1
    assert run_grid(ex) == [[[[1, 2, 3, 4]]]] * 2 + [[[[5, 6, 7, 8]]]] * 2


def test_empty_replica_groups_is_one_group_of_every_id():
    ex = make_example("all_reduce", params={"replicas": "3", "replica_groups": "", "operand": "2"})
    assert "dense<[[0, 1, 2]]> : tensor<1x3xi64>" in ex.text
    assert run_grid(ex) == [[[9, 12]]] * 3  # (1,2) + (3,4) + (5,6)


def test_ragged_groups_pad_with_minus_one():
    ex = make_example("all_reduce", params={"replicas": "3", "replica_groups": "0,2;1", "operand": "1"})
    assert "dense<[[0, 2], [1, -1]]> : tensor<2x2xi64>" in ex.text
    assert run_grid(ex) == [[[4]], [[2]], [[4]]]


def test_cross_replica_on_a_2x2_grid_groups_replicas_per_partition():
    ex = make_example("all_reduce", params={"partitions": "2", "operand": "1"})
    assert run_grid(ex) == [[[4]], [[6]], [[4]], [[6]]]  # (0,q) + (1,q): 1+3, 2+4


def test_cross_replica_and_partition_groups_every_partition():
    ex = make_example("all_reduce", params={"partitions": "2", "operand": "1",
                                            "mode": "cross_replica_and_partition"})
    assert "channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>" in ex.text
    assert "use_global_device_ids" not in ex.text
    assert run_grid(ex) == [[[10]]] * 4


def test_flattened_ids_takes_process_ids():
    ex = make_example("all_gather", params={"partitions": "2", "operand": "1", "all_gather_dim": "0",
                                            "mode": "flattened_ids", "replica_groups": "0,3;1,2"})
    assert "use_global_device_ids = unit" in ex.text
    assert run_grid(ex) == [[[1, 4]], [[2, 3]], [[2, 3]], [[1, 4]]]


def test_all_to_all_cross_partition():
    ex = make_example("all_to_all", params={"replicas": "1", "partitions": "2", "mode": "cross_partition",
                                            "operand": "1x2"})
    assert run_grid(ex) == [[[[1], [3]]], [[[2], [4]]]]


def test_reduce_scatter_on_four_processes():
    ex = make_example("reduce_scatter", params={"replicas": "4", "replica_groups": "0,1,2,3",
                                                "operand": "1x4", "scatter_dimension": "1"})
    # process p holds 4p+1..4p+4: the sums are 28, 32, 36, 40, one per process
    assert run_grid(ex) == [[[[28]]], [[[32]]], [[[36]]], [[[40]]]]


# --- inputs -------------------------------------------------------------------------------------

def test_a_given_input_goes_to_every_process_or_is_split_by_its_leading_dim():
    same = make_example("all_reduce", params={"operand": "2"}, inputs={"operand": [1, 2]})
    assert run_grid(same) == [[[2, 4]]] * 2
    split = make_example("all_reduce", params={"operand": "2"}, inputs={"operand": [[1, 2], [10, 20]]})
    assert [x.tolist() for xs in split.process_inputs for x in xs] == [[1, 2], [10, 20]]
    assert run_grid(split) == [[[11, 22]]] * 2


def test_a_given_input_wins_over_the_presets_per_process_values():
    ex = make_example("reduce_scatter", "spec-example", inputs={"operand": np.ones((2, 4))})
    assert run_grid(ex) == [[[[2, 2], [2, 2]]], [[[2, 2], [2, 2]]]]


def test_random_fill_differs_per_process():
    ex = make_example("all_to_all", fill="random", seed=3)
    a, b = (xs[0] for xs in ex.process_inputs)
    assert not np.array_equal(a, b)
    assert run_grid(ex)[0][0] == np.concatenate([a[:, :2], b[:, :2]]).tolist()


# --- bad parameters -----------------------------------------------------------------------------

def test_bad_replica_groups_text_names_the_parameter():
    with pytest.raises(ParamError, match="parameter 'replica_groups': cannot read '0,x'"):
        make_example("all_gather", params={"replica_groups": "0,x"})
    with pytest.raises(ParamError, match="has an empty group"):
        make_example("all_gather", params={"replica_groups": "0,1;"})


def test_repeated_ids_are_the_spec_constraint():
    with pytest.raises(VerificationError, match=r"all_gather \(C2\)"):
        make_example("all_gather", params={"replica_groups": "0,0"})


def test_split_count_must_match_the_groups():
    with pytest.raises(VerificationError, match=r"all_to_all \(C8\)"):
        make_example("all_to_all", params={"split_count": "4", "operand": "2x4"})


def test_a_grid_without_processes_is_a_param_error():
    with pytest.raises(ParamError, match="at least one replica and one partition"):
        make_example("all_reduce", params={"replicas": "0"})


def test_groups_out_of_the_grid_fail_when_run_naming_the_constraint():
    ex = make_example("all_reduce", params={"replica_groups": "0,5"})
    s = Session(ex.text)
    s.bind(ex.inputs)
    stop = s.run()
    assert stop.error is not None
    assert "all_reduce (C3): replica_groups holds 5, but there are only 2 replica ids" in str(stop.error)


def test_mode_choices_per_op():
    assert schema_for("all_gather").param("mode").choices == (
        "cross_replica", "cross_replica_and_partition", "flattened_ids")
    assert schema_for("all_to_all").param("mode").choices == ("cross_replica", "cross_partition")
    with pytest.raises(ParamError, match="one of cross_replica, cross_partition"):
        make_example("all_to_all", params={"mode": "flattened_ids"})


# --- export and the gallery -------------------------------------------------------------------

def test_op_target_draws_the_presets_process(tmp_path):
    from PIL import Image

    from hlolab.render import export

    target = export.op_target("collective_permute", "spec-example")
    assert target.event.frame.process == 1 and target.elements == [(0, (1, 0))]
    assert target.event.outputs[0].tolist() == [[1, 2], [3, 4]]
    path, frames = export.write(target, "gif", tmp_path / "cp.gif")
    assert frames == Image.open(path).n_frames == 4  # one frame per sender of the group, then the element
    default = export.op_target("all_to_all")
    assert default.event.frame.process == 0


def test_the_gallery_draws_the_collectives():
    from hlolab.render.export import gallery_ops

    stems = [stem for _, _, stem in gallery_ops()]
    for op in ("all_to_all", "all_gather", "all_reduce", "reduce_scatter", "collective_permute"):
        assert op in stems
