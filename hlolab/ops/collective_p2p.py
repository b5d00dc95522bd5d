"""Point-to-point and streaming ops: send, recv, infeed, outfeed.

``send`` and ``recv`` meet by channel id between processes of the grid (the scheduler
pairs the n-th send on a channel with the n-th recv on it); the recv's results are the
send's inputs (provenance: ``copy`` of the sending process's element). A send or recv
with no peer process (a host transfer in XLA: jax's host callbacks) is a clear
unsupported error: hlolab has no host side. ``is_host_transfer`` / ``channel_type`` are
checked against each other (C1) but do not change where the data goes, as in the
reference interpreter, whose send/recv tests pass values between processes with
``is_host_transfer = true``.

``infeed`` reads its tensor results from the run's infeed queue (``interp.state
["infeed"]``, a flat list of arrays taken in order, shared by the processes in the order
they run: ``interpreter.run_parallel``'s ``infeed`` functions, ``Session``/``run``
``infeed=[...]``, ``hlolab run --infeed FILE.npy``). ``outfeed`` appends
``(process, [values])`` to ``interp.state["outfeed"]``.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np

from hlolab.errors import ExecutionError
from hlolab.interp.processes import Arrival, Rendezvous
from hlolab.ir.attrs import StructAttr
from hlolab.ops.collective import ChannelMixin, _collective_provenance_p2p, _explain_p2p, no_links
from hlolab.ops.record import AsDeclared, Attrs, Inferred, attr, boolean, raw, record, string
from hlolab.ops.registry import TOKEN, OpCall, op
from hlolab.types import TensorType, TokenType, Type

DEVICE_TO_DEVICE, DEVICE_TO_HOST, HOST_TO_DEVICE = 1, 2, 3


@record
class ChannelAttrs(ChannelMixin, Attrs):
    channel_handle: StructAttr | None = attr(raw("channel_handle", StructAttr,
                                                 what="a #stablehlo.channel_handle"), default=None)
    is_host_transfer: bool = attr(boolean("is_host_transfer"), default=False)


@record
class InfeedAttrs(Attrs):
    infeed_config: str = attr(string("infeed_config"), default="")


@record
class OutfeedAttrs(Attrs):
    outfeed_config: str = attr(string("outfeed_config"), default="")


def _check_channel_type(ctx: OpCall, host: int) -> None:
    a = ctx.attrs
    want = host if a.is_host_transfer else DEVICE_TO_DEVICE
    if a.channel_type not in (0, want):  # 0: unset (the generic form may omit it)
        raise ctx.error("C1", f"channel_type must be {want} with is_host_transfer = "
                        f"{str(a.is_host_transfer).lower()}, got {a.channel_type}")


def _tensors_then_token(ctx: OpCall) -> None:
    """send and outfeed: tensors (I1), then a token (I2), as operands."""
    ts = ctx.operand_types
    if not ts or not isinstance(ts[-1], TokenType):
        raise ctx.error("I2", "the last operand must be a !stablehlo.token")
    for i, t in enumerate(ts[:-1]):
        if not isinstance(t, TensorType):
            raise ctx.error("I1", f"input #{i} must be a tensor, got {t}")


def _verify_send(ctx: OpCall) -> None:
    _tensors_then_token(ctx)
    _check_channel_type(ctx, DEVICE_TO_HOST)


def _token_in_tensors_out(ctx: OpCall, some: str, tensors: str, token: str) -> None:
    """recv and infeed: one token operand; tensors, then a token, as results (their
    constraints: at least one result, tensors, the last a token)."""
    ts = ctx.operand_types
    if len(ts) != 1 or not isinstance(ts[0], TokenType):
        raise ctx.error("I1", "expects one !stablehlo.token operand")
    rs = ctx.result_types
    if not rs:
        raise ctx.error(some, "expects at least one result")
    if not isinstance(rs[-1], TokenType):
        raise ctx.error(token, f"the last result must be a !stablehlo.token, got {rs[-1]}")
    for i, t in enumerate(rs[:-1]):
        if not isinstance(t, TensorType):
            raise ctx.error(tensors, f"result #{i} must be a tensor, got {t}")


def _verify_recv(ctx: OpCall) -> None:
    _token_in_tensors_out(ctx, "C2", "C3", "C4")
    _check_channel_type(ctx, HOST_TO_DEVICE)


def _infer_token(a: Attrs, types: list[Type]) -> list[Inferred]:
    from hlolab.ops.control import TOKEN_RESULT

    return [TOKEN_RESULT]


def _meet_channel(ctx: Any, kind: str, operands: list[Any]) -> Generator[Rendezvous, Arrival, Any]:
    prev = getattr(ctx, "arrival", None)
    if prev is not None:
        return prev.result
    a = ctx.attrs
    frame = ctx.frame
    rv = Rendezvous(frame.process, ctx.op, ("channel", a.channel_id), (), list(operands), None,
                    frame.grid, ctx, list(ctx.operand_defs), kind=kind, channel=a.channel_id)
    arrival = yield rv
    ctx.arrival = arrival
    ctx.members = arrival.members
    ctx.peer_defs = [d for m in arrival.members for d in m.operand_defs]
    return arrival.result


def send(ctx: Any, *inputs: Any) -> Generator[Rendezvous, Arrival, Any]:
    """Sends ``inputs`` on channel ``channel_id``; returns a token once a recv took them."""
    yield from _meet_channel(ctx, "send", list(inputs))
    return TOKEN


def recv(ctx: Any, token: Any) -> Generator[Rendezvous, Arrival, Any]:
    """Receives the inputs of the matching send on channel ``channel_id``, then a token."""
    sent = yield from _meet_channel(ctx, "recv", [token])
    data = [x for x in sent if isinstance(x, np.ndarray)]  # the send's inputs, not its token
    want = ctx.result_types[:-1]
    sender = ctx.members[0]
    if len(data) != len(want) or any(
            not isinstance(x, np.ndarray) or x.shape != t.static_shape() or x.dtype != t.dtype
            for x, t in zip(data, want)):
        raise ExecutionError(
            f"{ctx.op.name} on channel {ctx.attrs.channel_id} expects "
            f"({', '.join(str(t) for t in want)}) but process {sender.process} sent "
            f"({', '.join(f'{x.dtype}{list(x.shape)}' for x in data)})", ctx.op.loc)
    return [np.array(x, copy=True) for x in data] + [TOKEN]


op("stablehlo.send", aliases=("Send",), attrs=ChannelAttrs, verify=_verify_send, infer=_infer_token,
   steps=True, provenance=_collective_provenance_p2p, explain=_explain_p2p,
   family="collective")(send)
op("stablehlo.recv", aliases=("Recv",), attrs=ChannelAttrs, verify=_verify_recv,
   infer=lambda a, types: AsDeclared(), steps=True, provenance=_collective_provenance_p2p,
   explain=_explain_p2p, family="collective")(recv)


# --- infeed / outfeed -------------------------------------------------------------------------

def _verify_infeed(ctx: OpCall) -> None:
    _token_in_tensors_out(ctx, "C1", "C2", "C3")


@op("stablehlo.infeed", aliases=("Infeed",), attrs=InfeedAttrs, verify=_verify_infeed,
    infer=lambda a, types: AsDeclared(), family="collective", provenance=no_links)
def infeed(ctx: Any, token: Any) -> list[Any]:
    """Reads one value per tensor result from the run's infeed queue, then a token."""
    queue = ctx.state.setdefault("infeed", [])
    want = ctx.result_types[:-1]
    if len(queue) < len(want):
        raise ExecutionError(f"{ctx.op.name} reads {len(want)} values, the infeed holds {len(queue)} "
                             "(feed it: Session/run infeed=[...], hlolab run --infeed FILE.npy, or "
                             "interpreter.run_parallel's infeed functions)", ctx.op.loc)
    out = []
    for t in want:
        x = np.asarray(queue.pop(0))
        if x.shape != t.static_shape() or x.dtype != t.dtype:
            raise ExecutionError(f"{ctx.op.name} expects {t}, the infeed's next value is "
                                 f"{x.dtype}{list(x.shape)}", ctx.op.loc)
        out.append(np.array(x, copy=True))
    return out + [TOKEN]


def _verify_outfeed(ctx: OpCall) -> None:
    _tensors_then_token(ctx)


@op("stablehlo.outfeed", aliases=("Outfeed",), attrs=OutfeedAttrs, verify=_verify_outfeed,
    infer=_infer_token, family="collective", provenance=no_links)
def outfeed(ctx: Any, *inputs: Any) -> Any:
    """Writes ``inputs`` to the run's outfeed (``state["outfeed"]``: (process, values))."""
    ctx.state.setdefault("outfeed", []).append((ctx.frame.process, [np.array(x) for x in inputs[:-1]]))
    return TOKEN
