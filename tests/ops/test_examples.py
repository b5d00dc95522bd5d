"""Op parameter schemas (hlolab.ops.examples): every default builds and runs, spec-example
presets give the spec's listed results, parameter text round-trips, bad parameters fail
cleanly, and inferred result types match what the ops compute for random valid parameters."""

from __future__ import annotations

import numpy as np
import pytest

from hlolab.errors import VerificationError
from hlolab.ops.examples import Param, ParamError, make_example, schema_for, schema_ops
from hlolab.session import Session


def run(ex) -> list[np.ndarray]:
    s = Session(ex.text)
    s.bind(ex.inputs)
    stop = s.run()
    assert stop.reason == "end", stop
    return [np.asarray(r) for r in s.results]


def check_types(ex, results: list[np.ndarray]) -> None:
    """The results have exactly the inferred types (shape and dtype)."""
    inferred = schema_for(ex.op).infer(ex.params)
    assert [r.shape for r in results] == [t.static_shape() for t in inferred]
    assert [r.dtype for r in results] == [t.dtype for t in inferred]


# --- every op with a schema --------------------------------------------------------------

STRUCTURED = ["stablehlo.gather", "stablehlo.scatter", "stablehlo.pad", "stablehlo.convolution",
              "stablehlo.reduce_window", "stablehlo.select_and_scatter", "stablehlo.dot_general",
              "stablehlo.transpose", "stablehlo.broadcast_in_dim", "stablehlo.reshape",
              "stablehlo.concatenate", "stablehlo.slice", "stablehlo.dynamic_slice",
              "stablehlo.dynamic_update_slice", "stablehlo.reverse", "stablehlo.reduce", "stablehlo.iota",
              "stablehlo.sort"]


def test_schema_ops_cover_the_structured_and_elementwise_ops():
    ops = schema_ops()
    assert ops == sorted(ops)
    for name in STRUCTURED + ["stablehlo.add", "stablehlo.exponential", "stablehlo.select",
                              "stablehlo.clamp", "stablehlo.compare", "stablehlo.shift_left"]:
        assert name in ops, name
    assert "stablehlo.constant" not in ops and "stablehlo.tuple" not in ops


@pytest.mark.parametrize("name", schema_ops())
def test_default_builds_verifies_and_runs(name):
    ex = make_example(name)
    assert ex.op == name and ex.preset == "default"
    assert f'"{name}"' in ex.text
    # a collective's example carries its process grid as the module's attributes
    grid = f"mhlo.num_replicas = {ex.grid[0]} : i32, mhlo.num_partitions = {ex.grid[1]} : i32"
    head = "func.func @main(" if ex.grid == (1, 1) else f"module attributes {{{grid}}}"
    assert ex.text.startswith(head)
    results = run(ex)
    check_types(ex, results)
    schema = schema_for(name)
    assert set(ex.params) == {p.name for p in schema.params}
    if ex.index is not None:  # the default element exists in result 0
        assert len(ex.index) == results[0].ndim
        assert all(0 <= i < n for i, n in zip(ex.index, results[0].shape, strict=True))


@pytest.mark.parametrize("name", STRUCTURED)
def test_default_presets_are_small(name):
    ex = make_example(name)
    assert sum(x.size for x in ex.inputs) <= 50
    assert 0 < sum(t.num_elements for t in schema_for(name).infer(ex.params)) <= 30


@pytest.mark.parametrize("spelling,full", [
    ("stablehlo.gather", "stablehlo.gather"), ("gather", "stablehlo.gather"), ("Gather", "stablehlo.gather"),
    ("GATHER", "stablehlo.gather"), ("conv", "stablehlo.convolution"), ("Conv", "stablehlo.convolution"),
    ("DotGeneral", "stablehlo.dot_general"), ("add", "stablehlo.add"),
    ("exponential", "stablehlo.exponential"),
    ("Rev", "stablehlo.reverse"), ("DynamicUpdateSlice", "stablehlo.dynamic_update_slice"),
])
def test_schema_lookup_by_any_spelling(spelling, full):
    schema = schema_for(spelling)
    assert schema is not None and schema.op == full


def test_no_schema_for_unknown_or_unsupported_ops():
    assert schema_for("no_such_op") is None
    assert schema_for("tuple") is None  # the explorer draws tensors: a tuple result has no grid
    with pytest.raises(ParamError, match="no parameter schema for op 'tuple'"):
        make_example("tuple")


# --- spec examples: the results the spec lists --------------------------------------------

SPEC_RESULTS = {
    "gather": [[[[[[1, 2], [3, 4]], [[3, 4], [5, 6]], [[13, 14], [15, 16]]],
                 [[[33, 34], [35, 36]], [[35, 36], [37, 38]], [[41, 42], [43, 44]]]],
                [[[[1, 2], [3, 4]], [[13, 14], [15, 16]], [[21, 22], [23, 24]]],
                 [[[43, 44], [45, 46]], [[33, 34], [35, 36]], [[27, 28], [29, 30]]]]]],
    "scatter": [[[[[3, 4], [6, 7], [6, 7], [7, 8]], [[9, 10], [11, 12], [15, 16], [17, 18]],
                  [[17, 18], [19, 20], [22, 23], [24, 25]]],
                 [[[25, 26], [28, 29], [30, 31], [31, 32]], [[35, 36], [38, 39], [38, 39], [39, 40]],
                  [[41, 42], [44, 45], [46, 47], [47, 48]]]]],
    "pad": [[[0, 1, 0, 0, 2, 0, 0, 3, 0], [0, 0, 0, 0, 0, 0, 0, 0, 0], [0, 4, 0, 0, 5, 0, 0, 6, 0],
             [0, 0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0, 0]]],
    "convolution": [[[[[10], [26]], [[46], [62]]]]],
    "reduce_window": [[[0, 0], [3, 4]]],
    "select_and_scatter": [[[0, 0], [0, 0], [5, 14], [7, 0]]],
    "dot_general": [[[[1, 2], [3, 4]], [[5, 6], [7, 8]]]],
    "transpose": [[[[1, 7], [3, 9], [5, 11]], [[2, 8], [4, 10], [6, 12]]]],
    "broadcast_in_dim": [[[[1, 1], [2, 2], [3, 3]], [[1, 1], [2, 2], [3, 3]]]],
    "reshape": [[[1, 2], [3, 4], [5, 6]]],
    "concatenate": [[[1, 2], [3, 4], [5, 6], [7, 8]]],
    "slice": [[[1, 1], [1, 1]]],
    "dynamic_slice": [[[1, 1], [1, 1]]],
    "dynamic_update_slice": [[[1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1]]],
    "reverse": [[[2, 1], [4, 3], [6, 5]]],
    "reduce": [[15]],
    "iota": [[[0, 0, 0, 0, 0], [1, 1, 1, 1, 1], [2, 2, 2, 2, 2], [3, 3, 3, 3, 3]]],
    "sort": [[[3, 2, 3], [1, 2, 1]], [[1, 2, 1], [3, 2, 3]]],
}
SPEC_DTYPES = {"gather": np.int32, "scatter": np.int64, "pad": np.int32, "convolution": np.int64,
               "reduce_window": np.int64, "select_and_scatter": np.int64, "dot_general": np.int64,
               "transpose": np.int32, "broadcast_in_dim": np.int32, "reshape": np.int32,
               "concatenate": np.int64, "slice": np.int64, "dynamic_slice": np.int32,
               "dynamic_update_slice": np.int32, "reverse": np.int32, "reduce": np.int64, "iota": np.int32,
               "sort": np.int64}


def test_every_structured_op_has_a_spec_example():
    assert sorted(f"stablehlo.{n}" for n in SPEC_RESULTS) == sorted(STRUCTURED)
    for name in STRUCTURED:
        assert list(schema_for(name).presets)[:2] == ["default", "spec-example"]


@pytest.mark.parametrize("name", sorted(SPEC_RESULTS))
def test_spec_example_gives_the_spec_result(name):
    ex = make_example(name, "spec-example")
    results = run(ex)
    check_types(ex, results)
    assert len(results) == len(SPEC_RESULTS[name])
    for got, want in zip(results, SPEC_RESULTS[name], strict=True):
        assert got.dtype == SPEC_DTYPES[name]
        np.testing.assert_array_equal(got, np.asarray(want, SPEC_DTYPES[name]))


def test_spec_example_attributes_are_the_specs():
    g = make_example("gather", "spec-example")
    assert "offset_dims = [3, 4], collapsed_slice_dims = [1], operand_batching_dims = [0]" in g.text
    assert "start_index_map = [2, 1], index_vector_dim = 3>" in g.text
    assert "slice_sizes = array<i64: 1, 1, 2, 2>" in g.text
    assert g.inputs[1][0, 1, 2].tolist() == [0, 9]  # the spec's out-of-range start, clamped by gather
    c = make_example("conv", "spec-example")
    assert "window_strides = array<i64: 4, 4>" in c.text and "lhs_dilation = array<i64: 2, 2>" in c.text
    assert "#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>" in c.text
    rw = make_example("reduce_window", "spec-example")
    assert "padding = dense<[[2, 1], [0, 0]]> : tensor<2x2xi64>" in rw.text
    assert "base_dilations = array<i64: 2, 1>" in rw.text and "window_dilations = array<i64: 3, 1>" in rw.text
    ds = make_example("dynamic_slice", "spec-example")
    assert [int(x) for x in ds.inputs[1:]] == [-1, 3]


def test_iota_second_spec_example():
    ex = make_example("iota", "spec-example-2")
    np.testing.assert_array_equal(run(ex)[0], np.asarray([[0, 1, 2, 3, 4]] * 4, np.int32))


# --- parameter overrides -----------------------------------------------------------------

def test_override_text_and_python_values_agree():
    a = make_example("gather", params={"slice_sizes": "1,3", "operand": "4x5"})
    b = make_example("gather", params={"slice_sizes": (1, 3), "operand": [4, 5]})
    assert a.text == b.text and a.params["slice_sizes"] == (1, 3)
    assert run(a)[0].shape == (2, 1, 3)


def test_override_reaches_the_text_and_the_result():
    ex = make_example("reduce_window", params={"body": "add", "window": "2,1", "stride": "1", "init": "10"})
    out = run(ex)[0]
    # window 2x1 stride 1 on iota 4x4 (from 1) plus init 10: x[i, j] + x[i + 1, j] + 10
    x = np.arange(1, 17, dtype=np.float32).reshape(4, 4)
    np.testing.assert_array_equal(out, x[:-1] + x[1:] + 10)
    assert '"stablehlo.add"' in ex.text


def test_gather_index_vector_dim_out_of_range_is_the_spec_constraint():
    with pytest.raises(VerificationError) as e:
        make_example("gather", params={"index_vector_dim": "5"})
    assert e.value.op == "stablehlo.gather" and e.value.constraint == "C2"
    assert "gather (C2)" in str(e.value)


def test_conv_bad_group_count_is_the_spec_constraint():
    with pytest.raises(VerificationError) as e:
        make_example("conv", params={"feature_group_count": "2"})
    assert e.value.op == "stablehlo.convolution" and e.value.constraint and e.value.constraint.startswith("C")


def test_bad_shape_text_names_the_param():
    with pytest.raises(ParamError, match=r"parameter 'operand': cannot read '2xx3'.*2x3x4"):
        make_example("gather", params={"operand": "2xx3"})


def test_unknown_param_lists_the_valid_names():
    with pytest.raises(ParamError) as e:
        make_example("pad", params={"paddng": "1"})
    msg = str(e.value)
    assert "'paddng'" in msg
    for name in ("operand", "padding_value", "edge_padding_low", "edge_padding_high", "interior_padding"):
        assert name in msg


def test_unknown_preset_lists_the_presets():
    with pytest.raises(ParamError, match="no preset 'fancy'; presets: default, spec-example"):
        make_example("slice", "fancy")


def test_bad_enum_and_dtype_and_conv_layout():
    with pytest.raises(ParamError, match="parameter 'body'.*one of add, max"):
        make_example("reduce", params={"body": "median"})
    with pytest.raises(ParamError, match="parameter 'dtype'"):
        make_example("add", params={"dtype": "f99"})
    with pytest.raises(ParamError, match="parameter 'dimension_numbers'"):
        make_example("conv", params={"dimension_numbers": "b01f,01io->b0f"})


def test_unknown_fill_is_a_param_error():
    with pytest.raises(ParamError, match="fill"):
        make_example("add", fill="zeros")


# --- fills and defaults ------------------------------------------------------------------

def test_iota_fill_counts_on_across_operands():
    ex = make_example("add", params={"shape": "2x2", "dtype": "i32"})
    # from 1: a real 0 is never mistaken for zero padding
    assert [x.tolist() for x in ex.inputs] == [[[1, 2], [3, 4]], [[5, 6], [7, 8]]]
    assert all(x.dtype == np.int32 for x in ex.inputs)
    np.testing.assert_array_equal(run(ex)[0], [[6, 8], [10, 12]])


def test_random_fill_is_seeded_and_small():
    a = make_example("multiply", fill="random", seed=3)
    b = make_example("multiply", fill="random", seed=3)
    c = make_example("multiply", fill="random", seed=4)
    assert all(np.array_equal(x, y) for x, y in zip(a.inputs, b.inputs, strict=True))
    assert not all(np.array_equal(x, y) for x, y in zip(a.inputs, c.inputs, strict=True))
    assert all(np.abs(x).max() <= 5 for x in a.inputs)


def test_preset_inputs_win_over_the_fill():
    ex = make_example("pad", "spec-example", fill="random", seed=1)
    assert ex.inputs[0].tolist() == [[1, 2, 3], [4, 5, 6]] and int(ex.inputs[1]) == 0


@pytest.mark.parametrize("name", ["gather", "scatter", "dynamic_slice"])
@pytest.mark.parametrize("fill", ["iota", "random"])
def test_default_indices_are_in_range(name, fill):
    ex = make_example(name, fill=fill)
    p = ex.params
    if name == "gather":
        starts = ex.inputs[1]
        assert (starts >= 0).all() and (starts[:, 0] <= 4 - 2).all() and (starts[:, 1] <= 5 - 2).all()
    elif name == "scatter":
        assert ((ex.inputs[1] >= 0) & (ex.inputs[1] < p["input"][0])).all()
    else:
        assert [int(x) for x in ex.inputs[1:]] == list(p["start_indices"])


def test_elementwise_default_dtypes_fit_the_op():
    assert make_example("select").text.count("tensor<2x3xi1>") >= 2
    assert "i32" in make_example("shift_left").text and "i32" in make_example("popcnt").text
    assert "-> tensor<2x3xi1>" in make_example("compare").text
    assert "-> tensor<2x3xf32>" in make_example("real").text
    lo, x, hi = make_example("clamp").inputs
    out = run(make_example("clamp"))[0]
    np.testing.assert_array_equal(out, np.clip(x, lo, hi))
    assert (out == lo).any() and (out == hi).any()


# --- Param parse/format round trips -------------------------------------------------------

ROUND_TRIPS = [
    (Param("s", "shape", (2, 3), ""), ["2x3x4", "7", "scalar", "0x3"], [(2, 3, 4), (7,), (), (0, 3)]),
    (Param("d", "dtype", "f32", ""), ["f32", "bf16", "i32", "ui8", "i1", "complex<f32>"],
     ["f32", "bf16", "i32", "ui8", "i1", "complex<f32>"]),
    (Param("i", "int", 0, ""), ["3", "-2", "0"], [3, -2, 0]),
    (Param("l", "ints", (), ""), ["1,2,3", "", "-1", "4, 5"], [(1, 2, 3), (), (-1,), (4, 5)]),
    (Param("p", "pairs", 0, ""), ["1,1;0,2", "3", "-1,2", ""], [((1, 1), (0, 2)), 3, ((-1, 2),), ()]),
    (Param("e", "enum", "add", "", ("add", "max")), ["add", "max", "MAX"], ["add", "max", "max"]),
    (Param("b", "bool", False, ""), ["true", "false", "1", "no"], [True, False, True, False]),
    (Param("n", "number", None, ""), ["0", "1.5", "-inf", "identity", "-3"],
     [0, 1.5, float("-inf"), None, -3]),
    (Param("t", "text", "", ""), ["b01f,01io->b01f"], ["b01f,01io->b01f"]),
]


@pytest.mark.parametrize("param,texts,values", ROUND_TRIPS, ids=[p.kind for p, _, _ in ROUND_TRIPS])
def test_param_parse_format_round_trip(param, texts, values):
    for text, want in zip(texts, values, strict=True):
        got = param.parse(text)
        assert got == want, text
        assert param.parse(param.format(got)) == got
    assert param.parse(param.format(param.default)) == param.default


@pytest.mark.parametrize("param,bad", [
    (Param("s", "shape", (), ""), "2xx3"), (Param("s", "shape", (), ""), "2x-1"),
    (Param("d", "dtype", "f32", ""), "float"), (Param("i", "int", 0, ""), "1.5"),
    (Param("l", "ints", (), ""), "1,,2"), (Param("p", "pairs", 0, ""), "1,2,3"),
    (Param("e", "enum", "a", "", ("a", "b")), "c"), (Param("b", "bool", False, ""), "maybe"),
    (Param("n", "number", None, ""), "lots"),
])
def test_param_parse_rejects_bad_text(param, bad):
    with pytest.raises(ParamError, match=f"parameter '{param.name}'"):
        param.parse(bad)


def test_every_schema_default_round_trips():
    for name in schema_ops():
        for p in schema_for(name).params:
            assert p.parse(p.format(p.default)) == p.default, (name, p.name)
            assert p.doc


# --- random valid parameters: inferred type == computed ---------------------------------

def _num_windows(size, lhs_dil, lo, hi, k, rhs_dil, stride):
    padded = lo + (size - 1) * lhs_dil + 1 + hi
    window = (k - 1) * rhs_dil + 1
    return 0 if window > padded else (padded - window) // stride + 1


def test_random_convolutions_infer_what_they_compute():
    rng = np.random.default_rng(7)
    for _ in range(30):
        fgc = int(rng.integers(1, 3))
        sizes = [int(x) for x in rng.integers(3, 7, 2)]
        ks = [int(x) for x in rng.integers(1, 4, 2)]
        stride = [int(x) for x in rng.integers(1, 4, 2)]
        pad = [(int(a), int(b)) for a, b in rng.integers(0, 3, (2, 2))]
        lhs_dil, rhs_dil = [int(x) for x in rng.integers(1, 3, 2)], [int(x) for x in rng.integers(1, 3, 2)]
        batch = int(rng.integers(1, 3))
        in_f, out_f = fgc * int(rng.integers(1, 3)), fgc * int(rng.integers(1, 3))
        layout = ["b01f,01io->b01f", "bf01,oi01->bf01"][int(rng.integers(2))]
        if layout.startswith("b01f"):
            lhs, rhs = (batch, *sizes, in_f), (*ks, in_f // fgc, out_f)
        else:
            lhs, rhs = (batch, in_f, *sizes), (out_f, in_f // fgc, *ks)
        params = {"lhs": lhs, "rhs": rhs, "stride": stride, "padding": pad, "lhs_dilation": lhs_dil,
                  "rhs_dilation": rhs_dil, "feature_group_count": fgc, "dimension_numbers": layout}
        ex = make_example("conv", params=params, fill="random", seed=1)
        out = run(ex)[0]
        check_types(ex, [out])
        spatial = [_num_windows(sizes[j], lhs_dil[j], *pad[j], ks[j], rhs_dil[j], stride[j])
                   for j in range(2)]
        want = (batch, *spatial, out_f) if layout.startswith("b01f") else (batch, out_f, *spatial)
        assert out.shape == want, params


def test_random_reduce_windows_infer_what_they_compute():
    rng = np.random.default_rng(11)
    for _ in range(30):
        rank = int(rng.integers(1, 4))
        shape = [int(x) for x in rng.integers(1, 5, rank)]
        window = [int(x) for x in rng.integers(1, 4, rank)]
        stride = [int(x) for x in rng.integers(1, 3, rank)]
        base, wdil = [int(x) for x in rng.integers(1, 3, rank)], [int(x) for x in rng.integers(1, 3, rank)]
        pad = [(int(a), int(b)) for a, b in rng.integers(0, 3, (rank, 2))]
        body = ["add", "max", "min", "mul"][int(rng.integers(4))]
        params = {"input": shape, "window": window, "stride": stride, "base_dilation": base,
                  "window_dilation": wdil, "padding": pad, "body": body}
        ex = make_example("reduce_window", params=params, fill="random", seed=2)
        out = run(ex)[0]
        check_types(ex, [out])
        want = tuple(_num_windows(shape[d], base[d], *pad[d], window[d], wdil[d], stride[d])
                     for d in range(rank))
        assert out.shape == want, params


def test_random_gathers_infer_what_they_compute():
    rng = np.random.default_rng(5)
    for _ in range(30):
        rank = int(rng.integers(1, 4))
        operand = [int(x) for x in rng.integers(2, 5, rank)]
        k = int(rng.integers(1, rank + 1))  # index vector size
        start_index_map = [int(x) for x in rng.permutation(rank)[:k]]
        collapsed = sorted(d for d in start_index_map if rng.integers(2))
        slice_sizes = [1 if d in collapsed else int(rng.integers(1, operand[d] + 1)) for d in range(rank)]
        batch = [int(x) for x in rng.integers(1, 4, int(rng.integers(0, 3)))]
        ivd = int(rng.integers(0, len(batch) + 1))
        start_indices = batch[:ivd] + [k] + batch[ivd:]
        n_offset = rank - len(collapsed)
        result_rank = len(batch) + n_offset
        offset_dims = sorted(int(x) for x in rng.permutation(result_rank)[:n_offset])
        params = {"operand": operand, "start_indices": start_indices, "offset_dims": offset_dims,
                  "collapsed_slice_dims": collapsed, "start_index_map": start_index_map,
                  "index_vector_dim": ivd, "slice_sizes": slice_sizes}
        ex = make_example("gather", params=params)
        out = run(ex)[0]
        check_types(ex, [out])
        offsets = iter(s for d, s in enumerate(slice_sizes) if d not in collapsed)
        batches = iter(batch)
        want = tuple(next(offsets) if d in offset_dims else next(batches) for d in range(result_rank))
        assert out.shape == want, params
        # the generated start indices are in range: no clamping was needed
        starts = np.moveaxis(ex.inputs[1], ivd, -1).reshape(-1, k)
        for c, d in enumerate(start_index_map):
            assert ((starts[:, c] >= 0) & (starts[:, c] <= operand[d] - slice_sizes[d])).all()


# Ops that cannot be shown alone in the explorer, each with the reason; every other op in the
# registry must have a schema (so a new op shows up in the TUI, export and gallery).
NOT_EXPLORABLE = {
    "call": "calls another function", "func.call": "calls another function",
    "stablehlo.composite": "calls another function",
    "stablehlo.custom_call": "needs a call target hlolab knows",
    "stablehlo.after_all": "tokens only", "stablehlo.create_token": "tokens only",
    "stablehlo.tuple": "a tuple result has no grid", "stablehlo.get_tuple_element": "reads a tuple",
    "stablehlo.constant": "no operands: the literal is the whole story",
    "chlo.constant": "no operands: the literal is the whole story",
    "chlo.constant_like": "reads only its operand's shape: the literal is the whole story",
    "stablehlo.get_dimension_size": "reads only its operand's shape: one number, no element",
    "stablehlo.set_dimension_size": "not in the spec: refused with a clear error",
    "interpreter.print": "test harness", "interpreter.probe": "test harness",
    # a pair of ops on two processes (a send and its recv by channel): a program shows them
    "stablehlo.send": "one half of a send/recv pair", "stablehlo.recv": "one half of a send/recv pair",
    "stablehlo.infeed": "reads the run's infeed", "stablehlo.outfeed": "writes the run's outfeed",
    "interpreter.run_parallel": "test harness (runs a process grid)",
    # sharded programs (hlolab/ops/sharding.py): parts of a global program on a mesh and a grid
    **{n: "part of a sharded program (a mesh and a process grid)" for n in (
        "sdy.manual_computation", "sdy.manual_computation.shard", "sdy.sharding_constraint", "sdy.reshard")},
    **{f"check.{n}": "test harness" for n in ("expect_almost_eq", "expect_almost_eq_const", "expect_close",
                                              "expect_eq", "expect_eq_const", "expect_serialized_eq")},
}


def test_every_registry_op_has_a_schema_or_a_reason_it_cannot_be_explored():
    from hlolab.ops.registry import all_ops

    missing = {n for n in all_ops() if schema_for(n) is None}
    assert missing == set(NOT_EXPLORABLE)


@pytest.mark.parametrize("value, message", [("nan", "value nan is not an integer, as i8 needs"),
                                            ("2.5", "value 2.5 is not an integer, as i8 needs"),
                                            ("1e3", r"value 1000 does not fit i8 \(\[-128, 127\]\)")])
def test_scalar_for_an_integer_type_is_an_integer_that_fits(value, message):
    # found by the fuzz campaign: a float cast to int8 used to warn and give an arbitrary value
    with pytest.raises(ParamError, match=message):
        make_example("pad", params={"dtype": "i8", "padding_value": value})
    assert make_example("pad", params={"dtype": "i8", "padding_value": "7.0"}) is not None


@pytest.mark.parametrize("value", ["", "1"])
def test_parameters_without_a_result_name_the_constraint_infer_breaks(value):
    # slice_sizes of the wrong length: the cause is gather (C20), not a result the schema could
    # not type (issue 24: it used to blame offset_dims (C5), or leak "expected an integer, got '>'")
    with pytest.raises(VerificationError) as e:
        make_example("gather", params={"slice_sizes": value})
    msg = str(e.value)
    assert "gather (C20): size(slice_sizes) = " in msg and "must equal rank(operand) = 2" in msg
