"""Collective, point-to-point and streaming ops of the builder API.

Each function keeps XLA's signature and makes the StableHLO op its docstring names
(``hlolab/ops/collective.py``, ``collective_p2p.py`` define them). Where XLA's builder
derives a result shape the op's ``infer`` leaves open (all_gather's grown dim, the
all_reduce combiner's element type), it is computed here from the same arguments XLA
takes (``shard_count``, the computation).

``replica_groups`` is a list of lists of ids (ragged groups are padded with -1, as
StableHLO writes them; empty: one group of every process). ``channel_id`` (an int > 0)
makes the op cross-partition / cross replica-and-partition per the spec's modes;
``channel_handle`` of Send/Recv is an int (a device-to-device handle) or a
``(handle, type)`` pair. A computation runs on a process grid with
``XlaComputation.run(*args, grid=(R, P))``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hlolab.ir.attrs import StructAttr
from hlolab.types import TensorType, TokenType, Type
from hlolab.xla.builder import BuilderError, XlaBuilder, XlaComputation, XlaOp, builder_function, emit
from hlolab.xla.shapes import Shape, as_shape

__all__ = ["DEVICE_TO_DEVICE", "DEVICE_TO_HOST", "HOST_TO_DEVICE"]

DEVICE_TO_DEVICE, DEVICE_TO_HOST, HOST_TO_DEVICE = 1, 2, 3


# --- arguments --------------------------------------------------------------------------

def _groups(groups: Any, what: str, name: str = "replica_groups") -> tuple[tuple[int, ...], ...]:
    """Lists of ids as StableHLO's rectangular ``replica_groups`` (-1 pads short rows)."""
    if groups is None:
        return ()
    try:
        rows = [[int(v) for v in row] for row in groups]
    except (TypeError, ValueError):
        raise BuilderError(f"{what}: {name} must be a list of lists of integers, got {groups!r}") from None
    width = max((len(r) for r in rows), default=0)
    if width == 0:
        return ()
    return tuple(tuple(r + [-1] * (width - len(r))) for r in rows)


def _channel(channel: Any, what: str, default_type: int = DEVICE_TO_DEVICE) -> StructAttr | None:
    """``#stablehlo.channel_handle<handle = h, type = t>`` of an int or a (handle, type) pair."""
    if channel is None:
        return None
    if isinstance(channel, (tuple, list)):
        if len(channel) != 2:
            raise BuilderError(f"{what}: a channel handle is an id or (id, type), got {channel!r}")
        handle, kind = int(channel[0]), int(channel[1])
    else:
        handle, kind = int(channel), default_type
    return StructAttr("stablehlo.channel_handle", (("handle", handle), ("type", kind)))


def _many(x: XlaOp | Sequence[XlaOp]) -> tuple[list[XlaOp], bool]:
    return ([x], True) if isinstance(x, XlaOp) else (list(x), False)


def _tensor(x: XlaOp, what: str) -> TensorType:
    if not isinstance(x, XlaOp) or not isinstance(x.type, TensorType):
        raise BuilderError(f"{what}: expected a tensor XlaOp, got {x!r}")
    return x.type


def _group_fields(replica_groups: Any, channel_id: int | None, use_global_device_ids: bool | None,
                  what: str) -> dict[str, Any]:
    fields: dict[str, Any] = {"replica_groups": _groups(replica_groups, what)}
    if channel_id is not None:
        fields["channel_handle"] = _channel(channel_id, what)
    if use_global_device_ids:
        fields["use_global_device_ids"] = True
    return fields


def _check_shard_count(groups: tuple[tuple[int, ...], ...], shard_count: int, what: str) -> int:
    n = int(shard_count)
    if n < 1:
        raise BuilderError(f"{what}: shard_count must be >= 1, got {shard_count}")
    sizes = {sum(1 for v in row if v >= 0) for row in groups}
    if groups and sizes != {n}:
        raise BuilderError(f"{what}: shard_count {n} must be the size of every replica group, "
                           f"the groups have sizes {sorted(sizes)}")
    return n


def _combiner_element(computation: XlaComputation, what: str) -> Any:
    if not isinstance(computation, XlaComputation):
        raise BuilderError(f"{what}: expected an XlaComputation, got {type(computation).__name__}")
    rt = computation.result_types
    if len(rt) != 1 or not isinstance(rt[0], TensorType):
        raise BuilderError(f"{what}: the computation must return one scalar, returns {rt}")
    return rt[0].element


# --- process ids ------------------------------------------------------------------------

@builder_function
def ReplicaId(builder: XlaBuilder) -> XlaOp:
    """This process's replica id, a ``u32`` scalar: ``stablehlo.replica_id``."""
    return emit("stablehlo.replica_id", [], builder=builder, what="ReplicaId")[0]


@builder_function
def PartitionId(builder: XlaBuilder) -> XlaOp:
    """This process's partition id, a ``u32`` scalar: ``stablehlo.partition_id``."""
    return emit("stablehlo.partition_id", [], builder=builder, what="PartitionId")[0]


# --- collectives ------------------------------------------------------------------------

@builder_function
def AllGather(operand: XlaOp | Sequence[XlaOp], all_gather_dimension: int, shard_count: int,
              replica_groups: Sequence[Sequence[int]] = (), channel_id: int | None = None,
              layout: Any = None, use_global_device_ids: bool | None = None) -> Any:
    """The operands of every process of the group concatenated along
    ``all_gather_dimension`` in group order: ``stablehlo.all_gather``. ``shard_count`` is
    the group size (the result's dim is ``shard_count`` times the operand's). A list of
    operands gives a tuple of results."""
    ops, single = _many(operand)
    fields = _group_fields(replica_groups, channel_id, use_global_device_ids, "AllGather")
    n = _check_shard_count(fields["replica_groups"], shard_count, "AllGather")
    dim = int(all_gather_dimension)
    results: list[Type] = []
    for x in ops:
        t = _tensor(x, "AllGather")
        if not 0 <= dim < t.rank:
            raise BuilderError(f"AllGather: all_gather_dimension {dim} is not a dim of %{x.name} ({t})")
        shape = list(t.shape)
        shape[dim] = shape[dim] * n
        results.append(TensorType(tuple(shape), t.element))
    fields["all_gather_dim"] = dim
    out = emit("stablehlo.all_gather", ops, fields, results=results, what="AllGather")
    return out[0] if single else tuple(out)


@builder_function
def AllReduce(operand: XlaOp | Sequence[XlaOp], computation: XlaComputation,
              replica_groups: Sequence[Sequence[int]] = (), channel_id: int | None = None,
              shape_with_layout: Any = None, use_global_device_ids: bool | None = None) -> Any:
    """The operands of every process of the group combined element by element with
    ``computation``: ``stablehlo.all_reduce``. A list of operands gives a tuple."""
    ops, single = _many(operand)
    el = _combiner_element(computation, "AllReduce")
    results = [TensorType(_tensor(x, "AllReduce").shape, el) for x in ops]
    out = emit("stablehlo.all_reduce", ops,
               _group_fields(replica_groups, channel_id, use_global_device_ids, "AllReduce"),
               results=results, computations=[computation], what="AllReduce")
    return out[0] if single else tuple(out)


@builder_function
def CrossReplicaSum(operand: XlaOp | Sequence[XlaOp],
                    replica_groups: Sequence[Sequence[int]] = ()) -> Any:
    """The sum over the replicas of the group: ``stablehlo.all_reduce`` with an add
    computation."""
    from hlolab.xla.computations import CreateScalarAddComputation

    ops, _ = _many(operand)
    el = _tensor(ops[0], "CrossReplicaSum").element
    return AllReduce(operand, CreateScalarAddComputation(el), replica_groups)


@builder_function
def ReduceScatter(operand: XlaOp | Sequence[XlaOp], computation: XlaComputation, scatter_dimension: int,
                  shard_count: int, replica_groups: Sequence[Sequence[int]] = (),
                  channel_id: int | None = None, layout: Any = None,
                  use_global_device_ids: bool | None = None) -> Any:
    """An AllReduce whose result is split into ``shard_count`` blocks along
    ``scatter_dimension``, the i-th member of the group keeping block i:
    ``stablehlo.reduce_scatter``. A list of operands gives a tuple of results."""
    ops, single = _many(operand)
    fields = _group_fields(replica_groups, channel_id, use_global_device_ids, "ReduceScatter")
    n = _check_shard_count(fields["replica_groups"], shard_count, "ReduceScatter")
    el = _combiner_element(computation, "ReduceScatter")
    dim = int(scatter_dimension)
    out = []
    # stablehlo.reduce_scatter takes one operand: a tuple is one op per element, as XLA does
    for x in ops:
        t = _tensor(x, "ReduceScatter")
        if not 0 <= dim < t.rank:
            raise BuilderError(f"ReduceScatter: scatter_dimension {dim} is not a dim of %{x.name} ({t})")
        if t.shape[dim] % n:
            raise BuilderError(f"ReduceScatter: dim {dim} of %{x.name} ({t.shape[dim]}) is not "
                               f"divisible by shard_count {n}")
        shape = list(t.shape)
        shape[dim] //= n
        out.append(emit("stablehlo.reduce_scatter", [x], {**fields, "scatter_dimension": dim},
                        results=[TensorType(tuple(shape), el)], computations=[computation],
                        what="ReduceScatter")[0])
    return out[0] if single else tuple(out)


@builder_function
def AllToAll(operand: XlaOp | Sequence[XlaOp], split_dimension: int, concat_dimension: int,
             split_count: int, replica_groups: Sequence[Sequence[int]] = (), layout: Any = None,
             channel_id: int | None = None) -> Any:
    """Each process splits its operand into ``split_count`` blocks along
    ``split_dimension`` and sends block i to the group's i-th member, which concatenates
    what it receives along ``concat_dimension`` in group order: ``stablehlo.all_to_all``
    (a list of operands: the variadic form, a tuple of results)."""
    ops, single = _many(operand)
    fields: dict[str, Any] = {"split_dimension": int(split_dimension),
                              "concat_dimension": int(concat_dimension),
                              "split_count": int(split_count),
                              "replica_groups": _groups(replica_groups, "AllToAll")}
    if channel_id is not None:
        fields["channel_handle"] = _channel(channel_id, "AllToAll")
    out = emit("stablehlo.all_to_all", ops, fields, what="AllToAll")
    return out[0] if single else tuple(out)


@builder_function
def CollectivePermute(operand: XlaOp, source_target_pairs: Sequence[Sequence[int]],
                      channel_id: int | None = None) -> XlaOp:
    """The operand of each pair's source process becomes the result on its target; a
    process no pair targets gets zeros: ``stablehlo.collective_permute``."""
    pairs = _groups(source_target_pairs, "CollectivePermute", "source_target_pairs")
    if any(len(p) != 2 for p in pairs):
        raise BuilderError(f"CollectivePermute: source_target_pairs must be (source, target) pairs, "
                           f"got {source_target_pairs!r}")
    fields: dict[str, Any] = {"source_target_pairs": pairs}
    if channel_id is not None:
        fields["channel_handle"] = _channel(channel_id, "CollectivePermute")
    return emit("stablehlo.collective_permute", [operand], fields, what="CollectivePermute")[0]


@builder_function
def CollectiveBroadcast(operand: XlaOp, replica_groups: Sequence[Sequence[int]],
                        channel_id: int | None = None) -> XlaOp:
    """The operand of each group's first process, on every process of the group (zeros
    on a process in no group): ``stablehlo.collective_broadcast``."""
    fields: dict[str, Any] = {"replica_groups": _groups(replica_groups, "CollectiveBroadcast")}
    if channel_id is not None:
        fields["channel_handle"] = _channel(channel_id, "CollectiveBroadcast")
    return emit("stablehlo.collective_broadcast", [operand], fields, what="CollectiveBroadcast")[0]


# --- send / recv ----------------------------------------------------------------------------

def _data_types(shape: Shape | str | Type, what: str) -> tuple[list[Type], bool]:
    """The tensor types a (tuple) shape stands for, and whether it is a single array."""
    s = as_shape(shape)
    if s.is_array():
        return [s.to_type()], True
    if s.is_tuple() and s.tuple_shapes and all(x.is_array() for x in s.tuple_shapes):
        return [x.to_type() for x in s.tuple_shapes], False
    raise BuilderError(f"{what}: needs an array shape or a tuple of array shapes, got {s}")


def _token(x: XlaOp, what: str) -> XlaOp:
    if not isinstance(x, XlaOp) or not isinstance(x.type, TokenType):
        raise BuilderError(f"{what}: expected a token XlaOp, got {x!r}")
    return x


@builder_function
def SendWithToken(operand: XlaOp | Sequence[XlaOp], token: XlaOp, channel_handle: Any) -> XlaOp:
    """Send ``operand`` on channel ``channel_handle`` after ``token``; returns the send's
    token: ``stablehlo.send``. The recv on the same channel (another process) gets it."""
    ops, _ = _many(operand)
    return emit("stablehlo.send", [*ops, _token(token, "SendWithToken")],
                {"channel_handle": _channel(channel_handle, "SendWithToken")}, results=[TokenType()],
                what="SendWithToken")[0]


@builder_function
def Send(operand: XlaOp | Sequence[XlaOp], channel_handle: Any) -> XlaOp:
    """SendWithToken after a fresh token: ``stablehlo.create_token``, ``stablehlo.send``;
    returns the send's token."""
    from hlolab.xla.sources import CreateToken

    ops, _ = _many(operand)
    return SendWithToken(operand, CreateToken(ops[0].builder), channel_handle)


@builder_function
def RecvWithToken(token: XlaOp, shape: Shape | str | Type, channel_handle: Any) -> tuple[XlaOp, ...]:
    """Receive a value of ``shape`` on channel ``channel_handle`` after ``token``:
    ``stablehlo.recv``; returns (data..., token), one data result per tuple element."""
    types, _ = _data_types(shape, "RecvWithToken")
    return tuple(emit("stablehlo.recv", [_token(token, "RecvWithToken")],
                      {"channel_handle": _channel(channel_handle, "RecvWithToken")},
                      results=[*types, TokenType()], what="RecvWithToken"))


@builder_function
def Recv(builder: XlaBuilder, shape: Shape | str | Type, channel_handle: Any) -> Any:
    """RecvWithToken after a fresh token (``stablehlo.create_token``, ``stablehlo.recv``);
    the data (a tuple of them for a tuple shape)."""
    from hlolab.xla.sources import CreateToken

    _, single = _data_types(shape, "Recv")
    out = RecvWithToken(CreateToken(builder), shape, channel_handle)[:-1]
    return out[0] if single else out


# --- infeed / outfeed --------------------------------------------------------------------

@builder_function
def InfeedWithToken(token: XlaOp, shape: Shape | str | Type, config: str = "") -> tuple[XlaOp, ...]:
    """The next value(s) of ``shape`` from the run's infeed, after ``token``:
    ``stablehlo.infeed``; returns (data..., token)."""
    types, _ = _data_types(shape, "InfeedWithToken")
    return tuple(emit("stablehlo.infeed", [_token(token, "InfeedWithToken")],
                      {"infeed_config": str(config)}, results=[*types, TokenType()],
                      what="InfeedWithToken"))


@builder_function
def Infeed(builder: XlaBuilder, shape: Shape | str | Type, config: str = "") -> Any:
    """InfeedWithToken after a fresh token (``stablehlo.create_token``,
    ``stablehlo.infeed``); the data (a tuple of them for a tuple shape). Feed it with
    ``XlaComputation.run(..., infeed=[...])``."""
    from hlolab.xla.sources import CreateToken

    _, single = _data_types(shape, "Infeed")
    out = InfeedWithToken(CreateToken(builder), shape, config)[:-1]
    return out[0] if single else out


@builder_function
def OutfeedWithToken(operand: XlaOp | Sequence[XlaOp], token: XlaOp, shape_with_layout: Any = None,
                     outfeed_config: str = "") -> XlaOp:
    """Write ``operand`` to the run's outfeed after ``token``: ``stablehlo.outfeed``;
    returns its token. ``shape_with_layout``, when given, must be the operand's shape."""
    ops, _ = _many(operand)
    if shape_with_layout is not None:
        want = as_shape(shape_with_layout)
        have = Shape.from_type(ops[0].type) if len(ops) == 1 else \
            Shape.tuple_shape([Shape.from_type(x.type) for x in ops])
        if want != have:
            raise BuilderError(f"OutfeedWithToken: shape_with_layout {want} is not the operand's {have}")
    return emit("stablehlo.outfeed", [*ops, _token(token, "OutfeedWithToken")],
                {"outfeed_config": str(outfeed_config)}, results=[TokenType()],
                what="OutfeedWithToken")[0]


@builder_function
def Outfeed(operand: XlaOp | Sequence[XlaOp], shape_with_layout: Any = None,
            outfeed_config: str = "") -> XlaOp:
    """OutfeedWithToken after a fresh token (``stablehlo.create_token``,
    ``stablehlo.outfeed``); returns the outfeed's token."""
    from hlolab.xla.sources import CreateToken

    ops, _ = _many(operand)
    return OutfeedWithToken(operand, CreateToken(ops[0].builder), shape_with_layout, outfeed_config)
