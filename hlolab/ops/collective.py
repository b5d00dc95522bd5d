"""Collective ops: replica_id, partition_id, all_gather, all_reduce, reduce_scatter,
all_to_all, collective_permute, collective_broadcast (and collective_reduce), and
``interpreter.run_parallel``, which runs a process grid inside a program.

Each collective's evaluate is a generator (``steps=True``) that computes its process
group from the spec's strategies (``hlolab.interp.processes``), yields one
``Rendezvous`` and receives its result back: the scheduler computes every member's
result at once, vectorized over the gathered operands (``_compute_*``; loops run over
group members, never over elements). A process is ``replica_id * num_partitions +
partition_id`` (the spec's flattened id).

Provenance crosses processes: a collective's provenance numbers the operands of every
group member (member ``slot`` in group order, operand ``i``: ``slot * n + i``, with
``operand_processes`` naming each one's process), and a ``Source`` carries the process
whose element it is. all_reduce / reduce_scatter: the same element on every member,
role ``combine``; all_gather, all_to_all, collective_permute, collective_broadcast:
``copy`` of the named process's element.

Choices where the spec leaves one (listed as DESIGN.md asks):
- all_reduce / reduce_scatter combine the members left to right in group order
  (``((x0 + x1) + x2) + ...``), one vectorized region application per member; XLA:CPU's
  order may differ for floats (the oracle test bounds it).
- An empty ``replica_groups`` means one group of every replica (every process with
  ``flattened_ids``), as XLA reads it; ``-1`` entries pad ragged groups and are dropped.
- ``collective_reduce`` (not in the spec; the reference interpreter's test set has it):
  the group's reduction lands on the group's first process, the others get zeros.
- ``collective_broadcast`` with ``has_dynamic_root`` (not in the spec): the last operand
  holds, per data operand, the index in the group of the process it comes from.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Generator
from typing import Any

import numpy as np

from hlolab.errors import ExecutionError
from hlolab.interp.processes import STRATEGIES, Arrival, Rendezvous, group_of, process_name
from hlolab.ir.attrs import ArrayAttr, DenseElementsAttr, StructAttr, SymbolRefAttr
from hlolab.messages import Msg
from hlolab.ops.record import (
    AsDeclared,
    Attrs,
    Codec,
    InferError,
    Inferred,
    attr,
    integer,
    raw,
    record,
    unit,
)
from hlolab.ops.registry import OpCall, op
from hlolab.trace.explain import Explanation, Step
from hlolab.trace.provenance import (
    IndexMapProvenance,
    Link,
    Source,
    check_index,
    index_link,
    value_shape,
)
from hlolab.types import TensorType, Type, tensor_type

# --- attributes -----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Groups(Codec):
    """``dense<[[0, 1], [2, -1]]> : tensor<2x2xi64>``: the rows as written (-1 pads)."""

    what: str = "a 2-dimensional integer tensor"

    def read(self, a: Any) -> tuple[tuple[int, ...], ...]:
        from hlolab.ops.record import AttrKindError

        if not (isinstance(a, DenseElementsAttr) and a.type.element.kind in ("sint", "uint")):
            raise AttrKindError
        arr = np.asarray(a.array)
        if arr.ndim != 2:
            if arr.size == 0:
                return ()
            raise AttrKindError
        return tuple(tuple(int(v) for v in row) for row in arr.tolist())

    def write(self, v: tuple[tuple[int, ...], ...]) -> Any:
        width = len(v[0]) if v else 0
        arr = np.asarray(v, dtype=np.int64).reshape(len(v), width)
        return DenseElementsAttr(tensor_type((len(v), width), "i64"), arr)


def groups_codec(key: str) -> Groups:
    return Groups(key)


def _channel() -> Any:
    """``#stablehlo.channel_handle<handle = h, type = t>``, kept whole (it writes back as read)."""
    return attr(raw("channel_handle", StructAttr, what="a #stablehlo.channel_handle"), default=None)


class ChannelMixin:
    """``channel_id`` (the spec's name) and ``channel_type`` read from ``channel_handle``."""

    channel_handle: StructAttr | None

    @property
    def channel_id(self) -> int:
        return int(self.channel_handle.get("handle", 0)) if self.channel_handle is not None else 0

    @property
    def channel_type(self) -> int:
        return int(self.channel_handle.get("type", 0)) if self.channel_handle is not None else 0


@record
class GroupAttrs(ChannelMixin, Attrs):
    """all_reduce, collective_reduce."""

    replica_groups: tuple[tuple[int, ...], ...] = attr(groups_codec("replica_groups"))
    channel_handle: StructAttr | None = _channel()
    use_global_device_ids: bool = attr(unit("use_global_device_ids"), default=False)


@record
class AllGatherAttrs(GroupAttrs):
    all_gather_dim: int = attr(integer("all_gather_dim"))


@record
class ReduceScatterAttrs(GroupAttrs):
    scatter_dimension: int = attr(integer("scatter_dimension"))


@record
class AllToAllAttrs(ChannelMixin, Attrs):
    split_dimension: int = attr(integer("split_dimension"))
    concat_dimension: int = attr(integer("concat_dimension"))
    split_count: int = attr(integer("split_count"))
    replica_groups: tuple[tuple[int, ...], ...] = attr(groups_codec("replica_groups"))
    channel_handle: StructAttr | None = _channel()


@record
class PermuteAttrs(ChannelMixin, Attrs):
    source_target_pairs: tuple[tuple[int, ...], ...] = attr(groups_codec("source_target_pairs"))
    channel_handle: StructAttr | None = _channel()


@record
class BroadcastAttrs(ChannelMixin, Attrs):
    replica_groups: tuple[tuple[int, ...], ...] = attr(groups_codec("replica_groups"))
    channel_handle: StructAttr | None = _channel()
    has_dynamic_root: bool = attr(unit("has_dynamic_root"), default=False)


# --- process groups ---------------------------------------------------------------------------

def _rows(groups: tuple[tuple[int, ...], ...]) -> list[list[int]]:
    """The groups without their -1 padding."""
    return [[v for v in row if v >= 0] for row in groups]


def _unique(ctx: OpCall, groups: tuple[tuple[int, ...], ...], label: str, what: str) -> None:
    flat = [v for row in _rows(groups) for v in row]
    if len(flat) != len(set(flat)):
        raise ctx.error(label, f"{what} must be unique, got {[list(r) for r in groups]}")
    bad = [v for row in groups for v in row if v < -1]
    if bad:
        raise ctx.error(label, f"{what} must be >= 0 (-1 pads a ragged row), got {bad[0]}")


def _mode(a: Any, global_ids: bool = True) -> str:
    """The process-group strategy of all_gather / all_reduce / reduce_scatter (``global_ids``)
    or of all_to_all / collective_permute / collective_broadcast."""
    if not global_ids:
        return "cross_replica" if a.channel_id <= 0 else "cross_partition"
    if a.channel_id <= 0:
        return "cross_replica"
    return "flattened_ids" if a.use_global_device_ids else "cross_replica_and_partition"


def process_groups(ctx: OpCall, groups: tuple[tuple[int, ...], ...], mode: str, size_label: str | None,
                   range_label: str) -> list[tuple[int, ...]]:
    """The process groups of ``mode`` on the running grid. Every id must be in range (the
    spec's ``0 <= replica_groups < size``, constraint ``range_label``); with ``size_label``
    the groups must also hold every id once (``size(replica_groups)``)."""
    n_rep, n_part = ctx.frame.grid
    size = {"cross_replica": n_rep, "cross_replica_and_partition": n_rep,
            "cross_partition": n_part, "flattened_ids": n_rep * n_part}[mode]
    rows = _rows(groups)
    if not rows or not any(rows):  # XLA: no groups means every id in one group
        rows = [list(range(size))]
    flat = [v for row in rows for v in row]
    out_of_range = [v for v in flat if v >= size]
    if out_of_range:
        raise ctx.error(range_label, f"replica_groups holds {out_of_range[0]}, but there are only {size} "
                        f"{_ids(mode)} ({mode} on a {n_rep}x{n_part} grid)")
    if size_label is not None and sorted(flat) != list(range(size)):
        raise ctx.error(size_label, f"replica_groups {[list(r) for r in groups]} must hold each of the "
                        f"{size} {_ids(mode)} of the {n_rep}x{n_part} grid once ({mode})")
    return STRATEGIES[mode](rows, ctx.frame.grid)


def _ids(mode: str) -> str:
    return {"cross_replica": "replica ids", "cross_replica_and_partition": "replica ids",
            "cross_partition": "partition ids", "flattened_ids": "process ids"}[mode]


def _meet(ctx: OpCall, group: tuple[int, ...], key: Any, compute: Any,
          operands: list[Any]) -> Generator[Rendezvous, Arrival, Any]:
    """Yield this process's rendezvous; keep what the group did (provenance, explain)."""
    prev = getattr(ctx, "arrival", None)
    if prev is not None:  # re-run by a stepper that dropped the value: the same result
        return prev.result
    frame = ctx.frame
    rv = Rendezvous(frame.process, ctx.op, key, group, list(operands), compute, frame.grid, ctx,
                    list(ctx.operand_defs))
    arrival = yield rv
    ctx.arrival = arrival  # type: ignore[attr-defined]
    ctx.members = arrival.members  # type: ignore[attr-defined]
    ctx.peer_defs = [d for m in arrival.members for d in m.operand_defs]  # type: ignore[attr-defined]
    return arrival.result


def _own_group(ctx: OpCall, mode: str, constraint: str, unique: str) -> tuple[int, ...]:
    """The process group of the running process, from the op's replica_groups in ``mode``;
    a process in no group is an error naming ``constraint`` (the op's replica_groups one)."""
    groups = process_groups(ctx, ctx.attrs.replica_groups, mode, constraint, unique)
    group = group_of(ctx.frame.process, groups)
    if group is None:
        who = process_name(ctx.frame.process, ctx.frame.grid)
        raise ctx.error(constraint, f"{who} is in no process group")
    return group


def _key(ctx: OpCall, group: tuple[int, ...], channel: int) -> tuple[Any, ...]:
    return (ctx.op.name, channel, group)


def _results(values: list[np.ndarray]) -> Any:
    return values[0] if len(values) == 1 else list(values)


def _same_types(members: list[Rendezvous]) -> None:
    first = members[0]
    for m in members[1:]:
        for i, (a, b) in enumerate(zip(first.operands, m.operands, strict=True)):
            if isinstance(a, np.ndarray) and (a.shape != b.shape or a.dtype != b.dtype):
                raise ExecutionError(
                    f"{first.op.name}: operand #{i} is {a.dtype}{list(a.shape)} on "
                    f"{process_name(first.process, first.grid)} but {b.dtype}{list(b.shape)} on "
                    f"{process_name(m.process, m.grid)}", m.op.loc)


# --- replica_id / partition_id ---------------------------------------------------------------

def _infer_id(a: Attrs, types: list[Type]) -> list[Inferred]:
    return [tensor_type((), "ui32")]


def no_links(ctx: Any, inputs: list[Any], outputs: list[Any]) -> IndexMapProvenance:
    """replica_id, partition_id, infeed, outfeed: results made from no operand element."""
    return IndexMapProvenance([value_shape(x) for x in outputs], [value_shape(x) for x in inputs],
                              [[] for _ in outputs])


def _explain_id(ctx: Any, inputs: list[Any], outputs: list[Any], result: int,
                index: tuple[int, ...]) -> Explanation:
    grid = ctx.frame.grid
    which = ctx.op.name.split(".")[-1]
    value = outputs[0][()]
    step = Step(which, Msg(f"collective.{which}.formula"), value,
                substituted=Msg("collective.id", grid=f"{grid[0]}x{grid[1]}", process=ctx.frame.process,
                                replica=ctx.frame.replica_id, partition=ctx.frame.partition_id))
    return Explanation(ctx.op.name, (), [step], value, [], result)


@op("stablehlo.replica_id", aliases=("ReplicaId",), infer=_infer_id, family="collective",
    provenance=no_links, explain=_explain_id)
def replica_id(ctx: OpCall) -> np.ndarray:
    """``replica_id`` of the running process, ui32."""
    return np.array(ctx.frame.replica_id, dtype=np.uint32)


@op("stablehlo.partition_id", aliases=("PartitionId",), infer=_infer_id, family="collective",
    provenance=no_links, explain=_explain_id)
def partition_id(ctx: OpCall) -> np.ndarray:
    """``partition_id`` of the running process, ui32."""
    return np.array(ctx.frame.partition_id, dtype=np.uint32)


# --- shared verification ----------------------------------------------------------------------

def _tensor_operands(ctx: OpCall, label: str) -> list[TensorType]:
    ts = ctx.operand_types
    if not ts:
        raise ctx.error(label, "expects at least one operand")
    for i, t in enumerate(ts):
        if not isinstance(t, TensorType):
            raise ctx.error(label, f"operand #{i} must be a tensor, got {t}")
    return ts  # type: ignore[return-value]


def _check_global_ids(ctx: OpCall, a: Any, label: str) -> None:
    if a.use_global_device_ids and a.channel_id <= 0:
        raise ctx.error(label, "use_global_device_ids needs channel_id > 0, got "
                        f"channel_id = {a.channel_id}")


def _check_dim(ctx: OpCall, dim: int, rank: int, label: str, name: str) -> None:
    if not 0 <= dim < rank:
        raise ctx.error(label, f"{name} = {dim} must be in [0, {rank}) (the operands' rank)")


def _combiner_type(ctx: OpCall, label: str) -> TensorType:
    """all_reduce (C5) / reduce_scatter (C7): computation is (tensor<E>, tensor<E>) -> tensor<E>."""
    if len(ctx.op.regions) != 1:
        raise ctx.error(label, "expects one computation region")
    block = ctx.op.regions[0].entry
    types = [a.type for a in block.args]
    if len(types) != 2 or not all(isinstance(t, TensorType) and t.rank == 0 for t in types) \
            or types[0] != types[1]:
        raise ctx.error(label, "computation must have type (tensor<E>, tensor<E>) -> tensor<E>, "
                        f"has arguments ({', '.join(str(t) for t in types)})")
    ret = block.ops[-1] if block.ops else None
    if ret is not None and ret.name in ("stablehlo.return", "func.return", "return"):
        if [v.type for v in ret.operands] != [types[0]]:
            raise ctx.error(label, f"computation must return {types[0]}, returns "
                            f"({', '.join(str(v.type) for v in ret.operands)})")
    for i, t in enumerate(ctx.operand_types):
        assert isinstance(t, TensorType)
        if not _promotable(t, types[0]):
            raise ctx.error(label, f"operand #{i} element type {t.element} is not promotable to "
                            f"the computation's {types[0].element}")
    return types[0]  # type: ignore[return-value]


def _promotable(t: TensorType, e: TensorType) -> bool:
    a, b = t.element, e.element
    if a == b:
        return True
    if getattr(a, "kind", None) != getattr(b, "kind", None):
        return False
    return bool(getattr(a, "bits", 0) <= getattr(b, "bits", 0))


# --- all_reduce -------------------------------------------------------------------------------

def _verify_all_reduce(ctx: OpCall) -> None:
    a = ctx.attrs
    _tensor_operands(ctx, "I1")
    _unique(ctx, a.replica_groups, "C1", "replica_groups")
    _check_global_ids(ctx, a, "C4")
    e = _combiner_type(ctx, "C5")
    for i, (t, r) in enumerate(zip(ctx.operand_types, ctx.result_types, strict=True)):
        assert isinstance(t, TensorType)
        if not isinstance(r, TensorType) or r.shape != t.shape:
            raise ctx.error("C6", f"result #{i} must have the shape of operand #{i} {t}, got {r}")
        if r.element != e.element:
            raise ctx.error("C7", f"result #{i} element type must be the computation's "
                            f"{e.element}, got {r.element}")


def _infer_all_reduce(a: Attrs, types: list[Type]) -> AsDeclared:
    """The results have the operands' shapes and the computation's element type, which
    only the region fixes (verify checks C6/C7)."""
    return AsDeclared()


def _reduce_members(ctx: Any, values: list[np.ndarray], dtype: np.dtype) -> np.ndarray:
    """``computation`` folded over the members' values left to right, one batched region
    application per member."""
    acc = np.asarray(values[0]).astype(dtype, copy=True)
    for v in values[1:]:
        acc = np.asarray(ctx.run_region(0, [acc, np.asarray(v).astype(dtype, copy=False)])[0])
    return acc


def _compute_all_reduce(members: list[Rendezvous]) -> list[Any]:
    _same_types(members)
    ctx = members[0].ctx
    out = []
    for i in range(len(members[0].operands)):
        dtype = ctx.result_dtype(i)
        out.append(_reduce_members(ctx, [m.operands[i] for m in members], dtype))
    return [_results(out)] * len(members)


def all_reduce(ctx: OpCall, *operands: np.ndarray) -> Generator[Rendezvous, Arrival, Any]:
    """Within each process group, every process gets ``computation`` applied across the
    group's operands."""
    a = ctx.attrs
    group = _own_group(ctx, _mode(a), "C2", "C3")
    return (yield from _meet(ctx, group, _key(ctx, group, a.channel_id), _compute_all_reduce,
                             list(operands)))


# --- collective_reduce (the reference interpreter's; not in the spec) -------------------------

def _compute_collective_reduce(members: list[Rendezvous]) -> list[Any]:
    _same_types(members)
    ctx = members[0].ctx
    reduced = []
    for i in range(len(members[0].operands)):
        reduced.append(_reduce_members(ctx, [m.operands[i] for m in members], ctx.result_dtype(i)))
    zeros = [np.zeros_like(r) for r in reduced]
    return [_results(reduced)] + [_results(zeros)] * (len(members) - 1)


def collective_reduce(ctx: OpCall, *operands: np.ndarray) -> Generator[Rendezvous, Arrival, Any]:
    """all_reduce whose result lands on the group's first process only (zeros elsewhere)."""
    a = ctx.attrs
    group = _own_group(ctx, _mode(a), "C2", "C3")
    return (yield from _meet(ctx, group, _key(ctx, group, a.channel_id), _compute_collective_reduce,
                             list(operands)))


# --- all_gather -------------------------------------------------------------------------------

def _verify_all_gather(ctx: OpCall) -> None:
    a = ctx.attrs
    ts = _tensor_operands(ctx, "I1")
    for t in ts:
        _check_dim(ctx, a.all_gather_dim, t.rank, "C1", "all_gather_dim")
    _unique(ctx, a.replica_groups, "C2", "replica_groups")
    _check_global_ids(ctx, a, "C5")
    for i, (t, r) in enumerate(zip(ts, ctx.result_types, strict=True)):
        if not isinstance(r, TensorType) or r.element != t.element or r.rank != t.rank or any(
                x != y for d, (x, y) in enumerate(zip(t.shape, r.shape)) if d != a.all_gather_dim):
            raise ctx.error("C6", f"result #{i} must be operand #{i}'s type {t} except along "
                            f"all_gather_dim {a.all_gather_dim}, got {r}")
        n = t.shape[a.all_gather_dim]
        if isinstance(n, int) and isinstance(r.shape[a.all_gather_dim], int) and n and \
                r.shape[a.all_gather_dim] % n:
            raise ctx.error("C6", f"result #{i} dim {a.all_gather_dim} ({r.shape[a.all_gather_dim]}) "
                            f"must be the operand's ({n}) times the group size")


def _compute_all_gather(members: list[Rendezvous]) -> list[Any]:
    _same_types(members)
    dim = members[0].ctx.attrs.all_gather_dim
    out = [np.concatenate([m.operands[i] for m in members], axis=dim)
           for i in range(len(members[0].operands))]
    return [_results(out)] * len(members)


def all_gather(ctx: OpCall, *operands: np.ndarray) -> Generator[Rendezvous, Arrival, Any]:
    """Within each process group, concatenates the group's operands along all_gather_dim."""
    a = ctx.attrs
    group = _own_group(ctx, _mode(a), "C3", "C4")
    for i, (x, r) in enumerate(zip(operands, ctx.result_types, strict=True)):
        assert isinstance(r, TensorType)
        if r.shape[a.all_gather_dim] != x.shape[a.all_gather_dim] * len(group):
            raise ctx.error("C6", f"result #{i} dim {a.all_gather_dim} is {r.shape[a.all_gather_dim]}, "
                            f"but the process group {list(group)} gathers "
                            f"{x.shape[a.all_gather_dim]} x {len(group)}")
    return (yield from _meet(ctx, group, _key(ctx, group, a.channel_id), _compute_all_gather,
                             list(operands)))


# --- reduce_scatter ---------------------------------------------------------------------------

def _verify_reduce_scatter(ctx: OpCall) -> None:
    a = ctx.attrs
    ts = _tensor_operands(ctx, "I1")
    if len(ts) != 1 or len(ctx.result_types) != 1:
        raise ctx.error("I1", "expects one operand and one result")
    t, r = ts[0], ctx.result_types[0]
    _check_dim(ctx, a.scatter_dimension, t.rank, "C2", "scatter_dimension")
    _unique(ctx, a.replica_groups, "C3", "replica_groups")
    _check_global_ids(ctx, a, "C6")
    e = _combiner_type(ctx, "C7")
    sd = a.scatter_dimension
    if not isinstance(r, TensorType) or r.rank != t.rank or any(
            x != y for d, (x, y) in enumerate(zip(t.shape, r.shape)) if d != sd):
        raise ctx.error("C8", f"result must be the operand's shape {t} except along "
                        f"scatter_dimension {sd}, got {r}")
    if r.element != e.element:
        raise ctx.error("C9", f"result element type must be the computation's {e.element}, got "
                        f"{r.element}")
    n, m = t.shape[sd], r.shape[sd]
    if isinstance(n, int) and isinstance(m, int) and (m == 0 and n != 0 or m and n % m):
        raise ctx.error("C1", f"dim(operand, {sd}) = {n} must split evenly into the results "
                        f"({m} each)")


def _compute_reduce_scatter(members: list[Rendezvous]) -> list[Any]:
    _same_types(members)
    ctx = members[0].ctx
    sd = ctx.attrs.scatter_dimension
    reduced = _reduce_members(ctx, [m.operands[0] for m in members], ctx.result_dtype(0))
    return [np.ascontiguousarray(part) for part in np.split(reduced, len(members), axis=sd)]


def reduce_scatter(ctx: OpCall, operand: np.ndarray) -> Generator[Rendezvous, Arrival, Any]:
    """Within each process group, reduces the group's operands and gives process k the
    k-th part along scatter_dimension."""
    a = ctx.attrs
    group = _own_group(ctx, _mode(a), "C4", "C5")
    sd = a.scatter_dimension
    r = ctx.result_tensor(0)
    if operand.shape[sd] % len(group) or r.shape[sd] != operand.shape[sd] // len(group):
        raise ctx.error("C1", f"dim(operand, {sd}) = {operand.shape[sd]} must be the result's "
                        f"({r.shape[sd]}) times the group size {len(group)}")
    return (yield from _meet(ctx, group, _key(ctx, group, a.channel_id), _compute_reduce_scatter,
                             [operand]))


# --- all_to_all -------------------------------------------------------------------------------

def _verify_all_to_all(ctx: OpCall) -> None:
    a = ctx.attrs
    ts = _tensor_operands(ctx, "I1")
    for t in ts:
        _check_dim(ctx, a.split_dimension, t.rank, "C1", "split_dimension")
        _check_dim(ctx, a.concat_dimension, t.rank, "C3", "concat_dimension")
    if a.split_count <= 0:
        raise ctx.error("C4", f"split_count must be > 0, got {a.split_count}")
    for i, t in enumerate(ts):
        n = t.shape[a.split_dimension]
        if isinstance(n, int) and n % a.split_count:
            raise ctx.error("C2", f"dim(operand #{i}, {a.split_dimension}) = {n} must be a multiple "
                            f"of split_count {a.split_count}")
    _unique(ctx, a.replica_groups, "C5", "replica_groups")
    rows = _rows(a.replica_groups)
    if rows and any(rows) and any(len(row) != a.split_count for row in rows):
        raise ctx.error("C8", f"each replica group must have split_count = {a.split_count} "
                        f"processes, got {[list(r) for r in a.replica_groups]}")
    inferred = _infer_all_to_all(a, list(ts))
    for i, (want, got) in enumerate(zip(inferred, ctx.result_types, strict=True)):
        if want != got:
            raise ctx.error("C9", f"result #{i} must be {want}, got {got}")


def _infer_all_to_all(a: AllToAllAttrs, types: list[Type]) -> list[Inferred]:
    out: list[Inferred] = []
    for t in types:
        if not isinstance(t, TensorType):
            raise InferError("I1", f"operands must be tensors, got {t}")
        shape = list(t.shape)
        if a.split_dimension != a.concat_dimension and 0 <= a.split_dimension < t.rank \
                and 0 <= a.concat_dimension < t.rank and a.split_count > 0:
            s, c = shape[a.split_dimension], shape[a.concat_dimension]
            shape[a.split_dimension] = s // a.split_count if isinstance(s, int) else s
            shape[a.concat_dimension] = c * a.split_count if isinstance(c, int) else c
        out.append(dataclasses.replace(t, shape=tuple(shape)))
    return out


def _compute_all_to_all(members: list[Rendezvous]) -> list[Any]:
    _same_types(members)
    a = members[0].ctx.attrs
    n = len(members)
    per_member: list[list[np.ndarray]] = [[] for _ in members]
    for i in range(len(members[0].operands)):
        split_parts = [np.split(m.operands[i], a.split_count, axis=a.split_dimension) for m in members]
        for receiver_index in range(n):
            scattered = [split_parts[s][receiver_index] for s in range(n)]
            per_member[receiver_index].append(np.concatenate(scattered, axis=a.concat_dimension))
    return [_results(vals) for vals in per_member]


def all_to_all(ctx: OpCall, *operands: np.ndarray) -> Generator[Rendezvous, Arrival, Any]:
    """Within each process group, splits each operand into split_count parts along
    split_dimension, sends part k to the group's k-th process, and concatenates what each
    receives along concat_dimension."""
    a = ctx.attrs
    group = _own_group(ctx, _mode(a, global_ids=False), "C6", "C7")
    if len(group) != a.split_count:
        raise ctx.error("C8", f"the process group {list(group)} has {len(group)} processes, "
                        f"split_count is {a.split_count}")
    return (yield from _meet(ctx, group, _key(ctx, group, a.channel_id), _compute_all_to_all,
                             list(operands)))


# --- collective_permute -----------------------------------------------------------------------

def _verify_collective_permute(ctx: OpCall) -> None:
    a = ctx.attrs
    ts = _tensor_operands(ctx, "I1")
    pairs = a.source_target_pairs
    if pairs and any(len(p) != 2 for p in pairs):
        raise ctx.error("C1", f"source_target_pairs must be Nx2, got {[list(p) for p in pairs]}")
    sources = [p[0] for p in pairs]
    targets = [p[1] for p in pairs]
    if len(set(sources)) != len(sources):
        raise ctx.error("C2", f"the sources source_target_pairs[:, 0] must be unique, got {sources}")
    if len(set(targets)) != len(targets):
        raise ctx.error("C3", f"the targets source_target_pairs[:, 1] must be unique, got {targets}")
    if any(v < 0 for v in sources + targets):
        raise ctx.error("C4", f"source_target_pairs must be >= 0, got {[list(p) for p in pairs]}")
    for i, (t, r) in enumerate(zip(ts, ctx.result_types, strict=True)):
        if t != r:
            raise ctx.error("C5", f"result #{i} must have the operand's type {t}, got {r}")


def _line(ctx: OpCall, mode: str) -> tuple[int, ...]:
    """The processes a cross_replica (same partition) / cross_partition (same replica)
    permutation runs among, by id within the line."""
    n_rep, n_part = ctx.frame.grid
    r, q = ctx.frame.replica_id, ctx.frame.partition_id
    if mode == "cross_replica":
        return tuple(k * n_part + q for k in range(n_rep))
    return tuple(r * n_part + k for k in range(n_part))


def _compute_collective_permute(members: list[Rendezvous]) -> list[Any]:
    _same_types(members)
    pairs = members[0].ctx.attrs.source_target_pairs
    source_of = {t: s for s, t in pairs}
    out = []
    for k, m in enumerate(members):
        s = source_of.get(k)
        vals = [members[s].operands[i] if s is not None else np.zeros_like(x)
                for i, x in enumerate(m.operands)]
        out.append(_results(vals))
    return out


def collective_permute(ctx: OpCall, *operands: np.ndarray) -> Generator[Rendezvous, Arrival, Any]:
    """Each target process gets its source's operand (source_target_pairs); a process that is
    no target gets zeros."""
    a = ctx.attrs
    mode = _mode(a, global_ids=False)
    line = _line(ctx, mode)
    for pair in a.source_target_pairs:
        for v in pair:
            if v >= len(line):
                raise ctx.error("C4", f"source_target_pairs holds {v}, but there are only {len(line)} "
                                f"{_ids(mode)} ({mode} on a {ctx.frame.grid[0]}x{ctx.frame.grid[1]} grid)")
    return (yield from _meet(ctx, line, _key(ctx, line, a.channel_id), _compute_collective_permute,
                             list(operands)))


# --- collective_broadcast ---------------------------------------------------------------------

def _n_data(ctx: OpCall) -> int:
    """Data operands (the last operand is the root with has_dynamic_root)."""
    return len(ctx.operand_types) - (1 if ctx.attrs.has_dynamic_root else 0)


def _verify_collective_broadcast(ctx: OpCall) -> None:
    a = ctx.attrs
    ts = _tensor_operands(ctx, "I1")
    n = _n_data(ctx)
    if n < 1:
        raise ctx.error("I1", "expects a data operand")
    _unique(ctx, a.replica_groups, "C1", "replica_groups")
    if a.has_dynamic_root:
        root = ts[-1]
        if root.rank != 1 or root.element.kind not in ("sint", "uint") or root.shape[0] != n:
            raise ctx.error("I1", f"with has_dynamic_root the last operand must be a tensor<{n}xi32> of "
                            f"root indices (one per data operand), got {root}")
    if len(ctx.result_types) != n:
        raise ctx.error("C3", f"expects {n} results, got {len(ctx.result_types)}")
    for i, (t, r) in enumerate(zip(ts[:n], ctx.result_types, strict=True)):
        if t != r:
            raise ctx.error("C3", f"result #{i} must have the operand's type {t}, got {r}")


def _compute_collective_broadcast(members: list[Rendezvous]) -> list[Any]:
    _same_types(members)
    ctx = members[0].ctx
    n = _n_data(ctx)
    if ctx.attrs.has_dynamic_root:
        roots = [tuple(int(v) for v in m.operands[n]) for m in members]
        if len(set(roots)) != 1:
            named = ", ".join(f"process {m.process}: {list(r)}" for m, r in zip(members, roots))
            raise ExecutionError(f"{ctx.name}: the processes of the group name different roots: {named}",
                                 ctx.loc)
        root = roots[0]
        if any(not 0 <= k < len(members) for k in root):
            raise ExecutionError(f"{ctx.name}: root {list(root)} is outside the group of "
                                 f"{len(members)} processes", ctx.loc)
    else:
        root = (0,) * n
    vals = [members[root[i]].operands[i] for i in range(n)]
    return [_results(vals)] * len(members)


def collective_broadcast(ctx: OpCall, *operands: np.ndarray) -> Generator[Rendezvous, Arrival, Any]:
    """Within each process group, every process gets the operand of the group's first
    process; a process in no group gets zeros."""
    a = ctx.attrs
    mode = _mode(a, global_ids=False)
    groups = process_groups(ctx, a.replica_groups, mode, None, "C2")
    p = ctx.frame.process
    group = group_of(p, groups)
    n = _n_data(ctx)
    if group is None:
        group = (p,)
        zeros = [np.zeros_like(x) for x in operands[:n]]
        return (yield from _meet(ctx, group, _key(ctx, group, a.channel_id),
                                 lambda members: [_results(zeros)], list(operands)))
    return (yield from _meet(ctx, group, _key(ctx, group, a.channel_id), _compute_collective_broadcast,
                             list(operands)))


# --- provenance -------------------------------------------------------------------------------

class CollectiveProvenance(IndexMapProvenance):
    """Index maps over the operands of every group member, in group order: operand ``j``
    is operand ``operand_numbers[j]`` of the member on process ``operand_processes[j]``
    (for n-operand collectives ``j = slot * n + i``). ``sources`` name that process."""

    def __init__(self, result_shapes: list[Any], operand_shapes: list[Any], links: list[list[Link]],
                 operand_processes: list[int], operand_numbers: list[int]):
        super().__init__(result_shapes, operand_shapes, links)
        self.operand_processes = operand_processes
        self.operand_numbers = operand_numbers

    def sources(self, result: int, index: tuple[int, ...]) -> list[Source]:
        return [dataclasses.replace(s, process=self.operand_processes[s.operand])
                if s.operand is not None else s for s in super().sources(result, index)]


def _members(ctx: Any) -> list[Rendezvous]:
    members = getattr(ctx, "members", None)
    if members is None:
        raise ExecutionError(f"{ctx.op.name}: no provenance before the collective completed")
    return members


def _collective_provenance(ctx: Any, inputs: list[Any], outputs: list[Any]) -> CollectiveProvenance:
    members = _members(ctx)
    n = len(members[0].operands)
    me = ctx.frame.process
    slot = next(k for k, m in enumerate(members) if m.process == me)
    oshapes = [value_shape(x) for m in members for x in m.operands]
    procs = [m.process for m in members for _ in m.operands]
    rshapes = [value_shape(x) for x in outputs]
    name = ctx.op.name
    a = ctx.attrs
    links: list[list[Link]] = []
    for r, rshape in enumerate(rshapes):
        if rshape is None:
            links.append([])
            continue
        grid = np.indices(rshape, dtype=np.int64, sparse=True) if rshape else ()
        ls: list[Link] = []
        if name in ("stablehlo.all_reduce", "stablehlo.collective_reduce"):
            if name == "stablehlo.all_reduce" or slot == 0:
                ls = [index_link(k * n + r, "combine", oshapes[k * n + r], list(grid), result_shape=rshape)
                      for k in range(len(members))]
        elif name == "stablehlo.reduce_scatter":
            sd = a.scatter_dimension
            idx = list(grid)
            idx[sd] = idx[sd] + slot * rshape[sd]
            ls = [index_link(k * n, "combine", oshapes[k * n], idx, result_shape=rshape)
                  for k in range(len(members))]
        elif name == "stablehlo.all_gather":
            d = a.all_gather_dim
            size = oshapes[r][d] if oshapes[r] is not None else 0
            for k in range(len(members)):
                idx = list(grid)
                idx[d] = idx[d] - k * size
                valid = (grid[d] >= k * size) & (grid[d] < (k + 1) * size)
                ls.append(index_link(k * n + r, "copy", oshapes[k * n + r], idx, valid, result_shape=rshape))
        elif name == "stablehlo.all_to_all":
            sd, cd = a.split_dimension, a.concat_dimension
            oshape = oshapes[r]
            assert oshape is not None
            part = list(oshape)
            part[sd] //= a.split_count
            for s in range(len(members)):
                idx = list(grid)
                valid = (grid[cd] >= s * part[cd]) & (grid[cd] < (s + 1) * part[cd])
                idx[cd] = idx[cd] - s * part[cd]
                idx[sd] = idx[sd] + slot * part[sd]
                ls.append(index_link(s * n + r, "copy", oshapes[s * n + r], idx, valid, result_shape=rshape))
        elif name == "stablehlo.collective_permute":
            source_of = {t: s for s, t in a.source_target_pairs}
            s = source_of.get(slot)
            if s is not None:
                ls = [index_link(s * n + r, "copy", oshapes[s * n + r], list(grid), result_shape=rshape)]
        elif name == "stablehlo.collective_broadcast":
            if len(members) > 1 or group_of(me, process_groups(ctx, a.replica_groups, _mode(
                    a, global_ids=False), None, "C2")) is not None:
                nd = _n_data(ctx)
                root = (tuple(int(v) for v in members[0].operands[nd]) if a.has_dynamic_root
                        else (0,) * nd)
                k = root[r]
                ls = [index_link(k * n + r, "copy", oshapes[k * n + r], list(grid), result_shape=rshape)]
        links.append(ls)
    return CollectiveProvenance(rshapes, oshapes, links, procs, [i for m in members for i in range(n)])


def _collective_provenance_p2p(ctx: Any, inputs: list[Any], outputs: list[Any]) -> CollectiveProvenance:
    """send / recv: members [send, recv]; recv's result ``i`` copies the send's input ``i``."""
    members = _members(ctx)
    oshapes = [value_shape(x) for m in members for x in m.operands]
    procs = [m.process for m in members for _ in m.operands]
    numbers = [i for m in members for i in range(len(m.operands))]
    rshapes = [value_shape(x) for x in outputs]
    links: list[list[Link]] = []
    for r, rshape in enumerate(rshapes):
        if rshape is None or ctx.op.name != "stablehlo.recv":
            links.append([])
            continue
        grid = list(np.indices(rshape, dtype=np.int64, sparse=True)) if rshape else []
        links.append([index_link(r, "copy", oshapes[r], grid, result_shape=rshape)])
    return CollectiveProvenance(rshapes, oshapes, links, procs, numbers)


def _explain_p2p(ctx: Any, inputs: list[Any], outputs: list[Any], result: int,
                 index: tuple[int, ...]) -> Explanation:
    return _explain_collective(ctx, inputs, outputs, result, index, _collective_provenance_p2p)


# --- explain ----------------------------------------------------------------------------------

def _explain_collective(ctx: Any, inputs: list[Any], outputs: list[Any], result: int,
                        index: tuple[int, ...],
                        provenance: Callable[..., CollectiveProvenance] | None = None) -> Explanation:
    """The group, then the result element from its sources; ``provenance`` is the op's own
    (send / recv pair by channel, not by group)."""
    members = _members(ctx)
    grid = ctx.frame.grid
    idx = check_index(value_shape(outputs[result]), index, f"result #{result} index")
    value = outputs[result][idx]
    prov = (provenance or _collective_provenance)(ctx, inputs, outputs)
    group = [divmod(m.process, grid[1]) for m in members]
    key = ctx.op.name.split(".")[-1]
    steps = [Step("process_group", Msg(f"collective.{key}.group"), group,
                  substituted=Msg("collective.group", grid=f"{grid[0]}x{grid[1]}",
                                  process=divmod(ctx.frame.process, grid[1]), group=group))]
    children = []
    values = [x for m in members for x in m.operands]
    # the value names as the member's program spells them (send's operand for a recv)
    names = [_operand_name(m.op, i) for m in members for i in range(len(m.operands))]
    for s in prov.sources(result, idx):
        i = prov.operand_numbers[s.operand]
        children.append(Step(f"operand{i}@{divmod(s.process, grid[1])}",
                             Msg(f"collective.role.{s.role}"), values[s.operand][s.index],
                             substituted=Msg("collective.source", operand=names[s.operand],
                                             process=divmod(s.process, grid[1]),
                                             index="[" + ", ".join(str(int(v)) for v in s.index) + "]")))
    steps.append(Step(f"results[{result}]@{divmod(ctx.frame.process, grid[1])}",
                      Msg(f"collective.{key}.formula"), value, children=children))
    notes = [Msg("collective.note.order")] if key in ("all_reduce", "reduce_scatter", "collective_reduce") \
        else []
    if not children:
        notes.append(Msg("collective.note.zero"))
    return Explanation(ctx.op.name, idx, steps, value, notes, result)


def _operand_name(op: Any, i: int) -> str:
    """``%x``: operand ``i`` of ``op`` as its program names it (``operand #i`` when unnamed)."""
    ops = getattr(op, "operands", [])
    name = getattr(ops[i], "name", None) if i < len(ops) else None
    return name or f"operand #{i}"


def _infer_same(a: Attrs, types: list[Type]) -> list[Inferred]:
    return list(types)


def _infer_reduce_like(a: Attrs, types: list[Type]) -> AsDeclared:
    """The results' element type is the computation's (only the region fixes it)."""
    return AsDeclared()


def _infer_gather(a: AllGatherAttrs, types: list[Type]) -> AsDeclared:
    """dim all_gather_dim depends on the process group size, known only on a grid."""
    return AsDeclared()


def _infer_broadcast(a: BroadcastAttrs, types: list[Type]) -> list[Inferred]:
    return list(types[:-1] if a.has_dynamic_root else types)


_COMMON = dict(steps=True, provenance=_collective_provenance, explain=_explain_collective,
               family="collective")
op("stablehlo.all_reduce", aliases=("AllReduce", "CrossReplicaSum"), attrs=GroupAttrs,
   verify=_verify_all_reduce, infer=_infer_all_reduce, **_COMMON)(all_reduce)
op("stablehlo.collective_reduce", attrs=GroupAttrs, verify=_verify_all_reduce, infer=_infer_all_reduce,
   **_COMMON)(collective_reduce)
op("stablehlo.all_gather", aliases=("AllGather",), attrs=AllGatherAttrs, verify=_verify_all_gather,
   infer=_infer_gather, **_COMMON)(all_gather)
op("stablehlo.reduce_scatter", aliases=("ReduceScatter",), attrs=ReduceScatterAttrs,
   verify=_verify_reduce_scatter, infer=_infer_reduce_like, **_COMMON)(reduce_scatter)
op("stablehlo.all_to_all", aliases=("AllToAll",), attrs=AllToAllAttrs, verify=_verify_all_to_all,
   infer=_infer_all_to_all, **_COMMON)(all_to_all)
op("stablehlo.collective_permute", aliases=("CollectivePermute",), attrs=PermuteAttrs,
   verify=_verify_collective_permute, infer=_infer_same, **_COMMON)(collective_permute)
op("stablehlo.collective_broadcast", aliases=("CollectiveBroadcast",), attrs=BroadcastAttrs,
   verify=_verify_collective_broadcast, infer=_infer_broadcast, **_COMMON)(collective_broadcast)


# --- interpreter.run_parallel -----------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Programs(Codec):
    """``[[@f, @g], [@h, @k]]``: replicas x partitions of function names."""

    what: str = "a list of lists of function symbols"

    def read(self, a: Any) -> tuple[tuple[str, ...], ...]:
        from hlolab.ops.record import AttrKindError

        if not isinstance(a, ArrayAttr) or not all(
                isinstance(row, ArrayAttr) and all(isinstance(f, SymbolRefAttr) for f in row.items)
                for row in a.items):
            raise AttrKindError
        return tuple(tuple(f.name for f in row.items) for row in a.items)

    def write(self, v: tuple[tuple[str, ...], ...]) -> Any:
        return ArrayAttr(tuple(ArrayAttr(tuple(SymbolRefAttr((f,)) for f in row)) for row in v))


@dataclasses.dataclass(frozen=True)
class Symbols(Codec):
    """``[@f, @g]``."""

    what: str = "a list of function symbols"

    def read(self, a: Any) -> tuple[str, ...]:
        from hlolab.ops.record import AttrKindError

        if not isinstance(a, ArrayAttr) or not all(isinstance(f, SymbolRefAttr) for f in a.items):
            raise AttrKindError
        return tuple(f.name for f in a.items)

    def write(self, v: tuple[str, ...]) -> Any:
        return ArrayAttr(tuple(SymbolRefAttr((f,)) for f in v))


@record
class RunParallelAttrs(Attrs):
    programs: tuple[tuple[str, ...], ...] = attr(Programs("programs"))
    infeed: tuple[str, ...] = attr(Symbols("infeed"), default=())


def _verify_run_parallel(ctx: OpCall) -> None:
    progs = ctx.attrs.programs
    if not progs or not progs[0]:
        raise ctx.error(None, "programs must be a non-empty list of lists (replicas x partitions)")
    if any(len(row) != len(progs[0]) for row in progs):
        raise ctx.error(None, "every row of programs (a replica) must name the same number of "
                        f"functions (partitions), got {[len(r) for r in progs]}")


def run_parallel(ctx: Any, *operands: Any) -> Generator[Any, Any, list[Any]]:
    """Run ``programs`` as a replicas x partitions grid of processes; the operands are split
    in order across the programs' arguments, the results concatenated in order."""
    from hlolab.interp.engine import RegionRun
    from hlolab.interp.processes import Scheduler

    a = ctx.attrs
    interp = ctx.interp
    grid = (len(a.programs), len(a.programs[0]))
    funcs = []
    for name in (f for row in a.programs for f in row):
        f = interp.module.func(name)
        if f is None or f.body is None:
            raise ctx.error(None, f"programs names @{name}, which is not a function of the module")
        funcs.append(f)
    need = sum(len(f.args) for f in funcs)
    if need != len(operands):
        raise ctx.error(None, f"the programs take {need} arguments in all, run_parallel has "
                        f"{len(operands)} operands")
    if a.infeed:
        queue = interp.state.setdefault("infeed", [])
        for name in a.infeed:
            f = interp.module.func(name)
            if f is None or f.body is None:
                raise ctx.error(None, f"infeed names @{name}, which is not a function of the module")
            from hlolab.interp.engine import drain

            queue.extend(drain(interp._exec_region(f.body, [], {}, ctx.frame.call(name), quiet=True)))
    gens = []
    runs: list[RegionRun] = []
    at = 0
    for p, f in enumerate(funcs):
        args = list(operands[at:at + len(f.args)])
        defs = list(ctx.operand_defs[at:at + len(f.args)])
        at += len(f.args)
        run = RegionRun(-1, None, defs, [])
        runs.append(run)
        frame = dataclasses.replace(ctx.frame.call(f.name), process=p, grid=grid)
        from hlolab.interp.engine import check_args

        check_args(f, args, ctx.op)
        gens.append(interp._invoke(f, args, ctx.op, frame, defs, run.return_defs, top=True))
    results = yield from Scheduler(gens, grid).run()
    ctx.region_runs.extend(runs)
    ctx.result_defs = [d for run in runs for d in run.return_defs]
    out = [x for r in results for x in r]
    if len(out) != len(ctx.op.results):
        raise ctx.error(None, f"the programs return {len(out)} values, run_parallel has "
                        f"{len(ctx.op.results)} results")
    return out


op("interpreter.run_parallel", attrs=RunParallelAttrs, verify=_verify_run_parallel,
   infer=lambda a, types: AsDeclared(), steps=True, family="check")(run_parallel)

