"""Parameter schemas of the collectives (issue 27, "Seeing it"): each builds its op on a
process grid, so ``make_example`` gives a module with ``mhlo.num_replicas`` /
``mhlo.num_partitions`` and every process its own operand values.

Parameters shared by the group collectives: the grid (``replicas``, ``partitions``),
``replica_groups`` as text (``0,1;2,3``: one group per ``;``, ``''``: every id in one
group, a shorter row is padded with -1 as XLA pads ragged groups) and ``mode``, the
spec's process-group strategy, written into the op as the spec derives it:
``cross_replica`` (no channel), ``cross_replica_and_partition`` (channel_id 1),
``flattened_ids`` (channel_id 1 and use_global_device_ids) for all_gather / all_reduce /
reduce_scatter; ``cross_replica`` / ``cross_partition`` (channel_id 1) for all_to_all,
collective_permute and collective_broadcast.

The ``spec-example`` presets are the spec's worked examples with their values per
process. One deviation: the spec's all_reduce example passes ``%operand0`` twice while
listing ``%operand1``'s values and results; the preset passes both operands, which gives
exactly the listed results.

send / recv need two ops on two processes (a pair program) and infeed / outfeed the run's
queues: they have no one-op schema (``hlolab run`` programs show them).
"""

from __future__ import annotations

from typing import Any

from hlolab.interp.processes import STRATEGIES
from hlolab.ops.examples import (
    Operand,
    OpParts,
    OpSchema,
    Param,
    ParamError,
    combiner_region,
    dense_pairs,
    dtype_param,
    enum_param,
    int_param,
    register_schema,
    shape_param,
    ttype,
)

# the modes of all_gather, all_reduce, reduce_scatter
GROUP_MODES = ("cross_replica", "cross_replica_and_partition", "flattened_ids")
LINE_MODES = ("cross_replica", "cross_partition")  # all_to_all, collective_permute, collective_broadcast
COMBINERS = ("add", "max", "min", "mul")


def _grid_params(replicas: int, partitions: int = 1) -> list[Param]:
    return [int_param("replicas", replicas, "num_replicas of the process grid"),
            int_param("partitions", partitions, "num_partitions of the process grid")]


def _groups_param(default: str) -> Param:
    return Param("replica_groups", "text", default,
                 "process groups: ids separated by ',', groups by ';' like 0,1;2,3 ('' for one group "
                 "of every id)")


def parse_groups(text: str) -> list[list[int]]:
    """``0,1;2,3`` -> [[0, 1], [2, 3]]; '' -> []; a ParamError naming replica_groups otherwise."""
    t = text.strip().strip("[]")
    if not t:
        return []
    try:
        rows = [[int(v) for v in row.replace(" ", ",").split(",") if v.strip()] for row in t.split(";")]
    except ValueError:
        raise ParamError(f"parameter 'replica_groups': cannot read {text!r}: expected ids separated by ',' "
                         "and groups by ';' like 0,1;2,3") from None
    if any(not row for row in rows):
        raise ParamError(f"parameter 'replica_groups': {text!r} has an empty group")
    return rows


def _grid(p: dict[str, Any]) -> tuple[int, int]:
    r, q = int(p["replicas"]), int(p["partitions"])
    if r < 1 or q < 1:
        raise ValueError(f"the grid must have at least one replica and one partition, got {r}x{q}")
    if r * q > 64:
        raise ValueError(f"a {r}x{q} grid has {r * q} processes; the explorer shows at most 64")
    return r, q


def _id_count(mode: str, grid: tuple[int, int]) -> int:
    return {"cross_replica": grid[0], "cross_replica_and_partition": grid[0],
            "cross_partition": grid[1], "flattened_ids": grid[0] * grid[1]}[mode]


def _groups(p: dict[str, Any], mode: str, grid: tuple[int, int]) -> tuple[str, int]:
    """The replica_groups attribute text and the size of the process groups it makes (for the
    result shapes; verification and the run check the groups themselves)."""
    rows = parse_groups(p["replica_groups"]) or [list(range(_id_count(mode, grid)))]
    width = max(len(r) for r in rows)
    padded = [r + [-1] * (width - len(r)) for r in rows]
    body = "[" + ", ".join("[" + ", ".join(str(v) for v in r) + "]" for r in padded) + "]"
    text = f"dense<{body}> : tensor<{len(padded)}x{width}xi64>"
    groups = STRATEGIES[mode]([[v for v in r if v >= 0] for r in rows], grid)
    return text, len(groups[0]) if groups else 0


def _channel(attrs: dict[str, str], mode: str) -> None:
    """The channel / use_global_device_ids that select ``mode`` (the spec's derivation)."""
    if mode != "cross_replica":
        attrs["channel_handle"] = "#stablehlo.channel_handle<handle = 1, type = 1>"
    if mode == "flattened_ids":
        attrs["use_global_device_ids"] = "unit"


def _operands(p: dict[str, Any]) -> list[Operand]:
    n = int(p["operands"])
    if not 1 <= n <= 4:
        raise ValueError(f"operands must be 1 to 4, got {n}")
    return [Operand(f"operand{i}" if n > 1 else "operand", ttype(p["operand"], p["dtype"])) for i in range(n)]


def _common(p: dict[str, Any], modes: tuple[str, ...]) -> tuple[tuple[int, int], str, dict[str, str], int]:
    grid = _grid(p)
    mode = p["mode"]
    if mode not in modes:
        raise ValueError(f"mode {mode}")
    groups, size = _groups(p, mode, grid)
    attrs = {"replica_groups": groups}
    _channel(attrs, mode)
    return grid, mode, attrs, size


def _with_dim(shape: tuple[int, ...], dim: int, n: int) -> tuple[int, ...]:
    """``shape`` with dim ``dim`` set to ``n`` (unchanged when dim is out of range: verify names it)."""
    out = list(shape)
    if 0 <= dim < len(out):
        out[dim] = n
    return tuple(out)


# --- all_gather / all_reduce / reduce_scatter / collective_reduce ------------------------------

def _build_all_gather(p: dict[str, Any]) -> OpParts:
    grid, _, attrs, size = _common(p, GROUP_MODES)
    d = int(p["all_gather_dim"])
    attrs["all_gather_dim"] = f"{d} : i64"
    ops = _operands(p)
    shape = tuple(p["operand"])
    res = [ttype(_with_dim(shape, d, shape[d] * size if 0 <= d < len(shape) else 0), p["dtype"])
           for _ in ops]
    return OpParts(ops, res, attrs, grid=grid)


def _build_all_reduce(p: dict[str, Any]) -> OpParts:
    grid, _, attrs, _ = _common(p, GROUP_MODES)
    ops = _operands(p)
    region = combiner_region(p["computation"], p["dtype"])
    return OpParts(ops, [o.type for o in ops], attrs, [region], grid=grid)


def _build_reduce_scatter(p: dict[str, Any]) -> OpParts:
    grid, _, attrs, size = _common(p, GROUP_MODES)
    d = int(p["scatter_dimension"])
    attrs["scatter_dimension"] = f"{d} : i64"
    shape = tuple(p["operand"])
    op = Operand("operand", ttype(shape, p["dtype"]))
    n = shape[d] // size if 0 <= d < len(shape) and size else 0
    region = combiner_region(p["computation"], p["dtype"])
    return OpParts([op], [ttype(_with_dim(shape, d, n), p["dtype"])], attrs, [region], grid=grid)


# --- all_to_all / collective_permute / collective_broadcast -------------------------------------

def _build_all_to_all(p: dict[str, Any]) -> OpParts:
    grid, _, attrs, size = _common(p, LINE_MODES)
    sd, cd = int(p["split_dimension"]), int(p["concat_dimension"])
    count = int(p["split_count"]) or size  # 0: the group size
    attrs.update({"split_dimension": f"{sd} : i64", "concat_dimension": f"{cd} : i64",
                  "split_count": f"{count} : i64"})
    ops = _operands(p)
    shape = tuple(p["operand"])
    out = list(shape)
    if 0 <= sd < len(out) and 0 <= cd < len(out) and count > 0:
        out[sd] //= count
        out[cd] *= count
    return OpParts(ops, [ttype(out, p["dtype"]) for _ in ops], attrs, grid=grid)


def _build_collective_permute(p: dict[str, Any]) -> OpParts:
    grid = _grid(p)
    mode = p["mode"]
    pairs = p["source_target_pairs"]
    if isinstance(pairs, int):
        raise ValueError("source_target_pairs must be source,target pairs like 0,1;1,2")
    attrs = {"source_target_pairs": dense_pairs(pairs)}
    _channel(attrs, mode)
    op = Operand("operand", ttype(p["operand"], p["dtype"]))
    return OpParts([op], [op.type], attrs, grid=grid)


def _build_collective_broadcast(p: dict[str, Any]) -> OpParts:
    grid, _, attrs, _ = _common(p, LINE_MODES)
    op = Operand("operand", ttype(p["operand"], p["dtype"]))
    return OpParts([op], [op.type], attrs, grid=grid)


def _build_id(p: dict[str, Any]) -> OpParts:
    return OpParts([], [ttype((), "ui32")], {}, grid=_grid(p))


# --- registration -------------------------------------------------------------------------------

def _mode_param(modes: tuple[str, ...]) -> Param:
    return enum_param("mode", modes, "cross_replica",
                      "the spec's process-group strategy (sets channel_handle / use_global_device_ids)")


def _combiner() -> Param:
    return enum_param("computation", COMBINERS, "add", "the region combining the processes' elements")


def _count() -> Param:
    return int_param("operands", 1, "how many operands (the op is variadic)")


SPEC_2x4 = {0: [[1, 2, 3, 4], [5, 6, 7, 8]], 1: [[9, 10, 11, 12], [13, 14, 15, 16]]}


def _register() -> None:
    # default: one group of every id, so a new grid size needs no new groups
    group_common = [_groups_param(""), _mode_param(GROUP_MODES)]
    line_common = [_groups_param(""), _mode_param(LINE_MODES)]

    register_schema(OpSchema("stablehlo.all_gather", (
        *_grid_params(2), *group_common,
        int_param("all_gather_dim", 1, "the dim along which the group's operands are concatenated"),
        shape_param("operand", (2, 2), "shape of each operand on each process"),
        _count(), dtype_param("i64"),
    ), {"default": {},
        "spec-example": {"replica_groups": "0,1", "operands": 2, "operand": (2, 2), "dtype": "i64",
                         "index": (1, 2),
                         "process_inputs": {"operand0": [[[1, 2], [3, 4]], [[5, 6], [7, 8]]],
                                            "operand1": [[[11, 12], [13, 14]], [[15, 16], [17, 18]]]}}},
        _build_all_gather, doc="every process of a group gets the group's operands concatenated"))

    register_schema(OpSchema("stablehlo.all_reduce", (
        *_grid_params(2), *group_common, _combiner(),
        shape_param("operand", (4,), "shape of each operand on each process"),
        _count(), dtype_param("i64"),
    ), {"default": {},
        "spec-example": {"replica_groups": "0,1", "operands": 2, "operand": (4,), "dtype": "i64",
                         "computation": "add", "index": (1,),
                         "process_inputs": {"operand0": [[1, 2, 3, 4], [5, 6, 7, 8]],
                                            "operand1": [[9, 10, 11, 12], [13, 14, 15, 16]]}}},
        _build_all_reduce,
        doc="every process of a group gets the group's operands combined element by element"))

    register_schema(OpSchema("stablehlo.collective_reduce", (
        *_grid_params(2), *group_common, _combiner(),
        shape_param("operand", (4,), "shape of each operand on each process"),
        _count(), dtype_param("i64"),
    ), {"default": {}},
        _build_all_reduce, doc="the group's operands combined onto its first process (not in the spec)"))

    register_schema(OpSchema("stablehlo.reduce_scatter", (
        *_grid_params(2), *group_common, _combiner(),
        int_param("scatter_dimension", 1, "the dim the combined tensor is split along, one part per process"),
        shape_param("operand", (2, 4), "shape of the operand on each process"),
        dtype_param("i64"),
    ), {"default": {},
        "spec-example": {"replica_groups": "0,1", "operand": (2, 4), "dtype": "i64", "computation": "add",
                         "index": (1, 0),
                         "process_inputs": {"operand": [SPEC_2x4[0], SPEC_2x4[1]]}}},
        _build_reduce_scatter, doc="the group's operands combined, then split: process k gets part k"))

    register_schema(OpSchema("stablehlo.all_to_all", (
        *_grid_params(2), *line_common,
        int_param("split_dimension", 1, "the dim each operand is split along, one part per process"),
        int_param("concat_dimension", 0, "the dim the received parts are concatenated along"),
        int_param("split_count", 0, "parts per operand: the group size (0: the group size)"),
        shape_param("operand", (2, 4), "shape of each operand on each process"),
        _count(), dtype_param("i64"),
    ), {"default": {},
        "spec-example": {"replica_groups": "0,1", "operands": 2, "operand": (2, 4), "dtype": "i64",
                         "split_count": 2, "index": (1, 1), "process": 1,
                         "process_inputs": {
                             "operand0": [SPEC_2x4[0], SPEC_2x4[1]],
                             "operand1": [[[17, 18, 19, 20], [21, 22, 23, 24]],
                                          [[25, 26, 27, 28], [29, 30, 31, 32]]]}}},
        _build_all_to_all,
        doc="each process splits its operands and sends part k to the group's k-th process"))

    register_schema(OpSchema("stablehlo.collective_permute", (
        *_grid_params(3), _mode_param(LINE_MODES),
        Param("source_target_pairs", "pairs", ((0, 1), (1, 2), (2, 0)),
              "source,target process pairs like 0,1;1,2 (a process no pair targets gets zeros)"),
        shape_param("operand", (2, 2), "shape of the operand on each process"),
        dtype_param("i64"),
    ), {"default": {},
        "spec-example": {"replicas": 3, "source_target_pairs": ((0, 1), (1, 2)), "operand": (2, 2),
                         "dtype": "i64", "index": (1, 0), "process": 1,
                         "process_inputs": {"operand": [[[1, 2], [3, 4]], [[5, 6], [7, 8]],
                                                        [[9, 10], [11, 12]]]}}},
        _build_collective_permute, doc="each target process gets its source process's operand"))

    register_schema(OpSchema("stablehlo.collective_broadcast", (
        *_grid_params(3), *line_common[:1], _mode_param(LINE_MODES),
        shape_param("operand", (2, 2), "shape of the operand on each process"),
        dtype_param("i64"),
    ), {"default": {"replica_groups": "1,0,2"},
        "spec-example": {"replicas": 4, "replica_groups": "2,1", "operand": (1, 2), "dtype": "i64",
                         "index": (0, 1), "process": 1,
                         "process_inputs": {"operand": [[[1, 2]], [[3, 4]], [[5, 6]], [[7, 8]]]}}},
        _build_collective_broadcast,
        doc="every process of a group gets the operand of the group's first process"))

    for which in ("replica_id", "partition_id"):
        register_schema(OpSchema(f"stablehlo.{which}", tuple(_grid_params(2, 2)), {"default": {}},
                                 _build_id, doc=f"the {which} of the running process: one per process"))


_register()
