"""Sharded JAX programs run whole: Shardy (``sdy``) and GSPMD (``mhlo.sharding``) annotations.

``jax.jit(f).lower(x).as_text()`` prints a *global-view* ``@main`` for a module grid of
``mhlo.num_replicas x mhlo.num_partitions`` processes. hlolab runs that ``@main`` on every
process of the grid (``hlolab.interp.processes.run_grid``); device id = partition id (the
mesh's ``device_ids`` permute the mesh positions over the devices), each replica runs the
partitioned program on its own.

- **Annotations** (``sdy.sharding_constraint``, ``sdy.reshard``, ``custom_call @Sharding``)
  do not change values: identity, provenance ``copy``; explain says which device holds which
  block of the value under the annotation.
- **Manual computation** (``sdy.manual_computation``; GSPMD's
  ``@SPMDFullToShardShape`` ... ``@SPMDShardToFullShape``): each process takes its shard of
  the global operand (the dims sharded by the *manual* axes, sliced by the process's
  coordinates in the mesh; other axes stay global), runs the body (its collectives meet as
  usual), and the global result is assembled per ``out_shardings``: the blocks of the dims
  sharded over manual axes come from the processes holding them (a rendezvous of the
  replica's processes). A manual axis the out sharding does not use (replication) takes the
  process's *own* block, as XLA does (the JAX contract is that the copies are equal; explain
  says when they are not).

GSPMD's manual tiling is the one of the ``@Sharding`` custom_call next to the shard
conversion (the operand of @SPMDFullToShardShape, the result sharding of
@SPMDShardToFullShape); their own sharding is ``{manual}`` or, for a shard_map over a subset
of the mesh axes, a manual subgroup over whole data dims (``{devices=[1,1,4,2]...
last_tile_dims={manual, replicated}}``, jax's spelling, whose @Sharding then tiles only the
manual axes and replicates over the others).

Provenance: a body argument element <- the global operand element (same process; the
synthetic op ``sdy.manual_computation.shard`` is that step, one event per operand); a
result element <- the body result element of the process that holds it
(``Source.process``); an output of ``@main`` thus traces back to argument elements through
every device.

Constraint labels (Shardy numbers none; these are ours): manual_computation
(C1) one in_sharding per operand and one out_sharding per result, of their ranks;
(C2) the shardings name a mesh of the module and axes of that mesh; (C3) the body
arguments / results are the operand / result shapes divided by the manual axes sharding
each dim (which must divide them); (C4) the mesh has num_partitions devices;
(C5) the manual axes are axes of the mesh, not repeated. sharding_constraint / reshard:
(C1) the sharding's rank is the operand's; (C2) its axes are the mesh's. custom_call
@SPMDFullToShardShape / @SPMDShardToFullShape: (C1) the operand (the result) is annotated by a
``@Sharding`` custom_call; (C2) the sharding's tiles divide the shape; (C3) the shard shape
is the full shape divided by the tiles.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Generator
from typing import Any

import numpy as np

from hlolab.errors import ExecutionError, UnsupportedError
from hlolab.interp.processes import Arrival, Rendezvous, process_name
from hlolab.ir.attrs import OpaqueAttr, StringAttr
from hlolab.ir.module import Op
from hlolab.messages import Msg
from hlolab.ops.collective import CollectiveProvenance
from hlolab.ops.record import AttrKindError, Attrs, Codec, Inferred, attr, record
from hlolab.ops.registry import OpCall, op
from hlolab.trace.explain import Explanation, Step
from hlolab.trace.provenance import (
    IndexMapProvenance,
    Link,
    check_index,
    index_link,
    unary_copy_provenance,
    value_shape,
)
from hlolab.types import TensorType, Type

# --- the sdy attribute syntax -------------------------------------------------------------

_TOKEN = re.compile(r'\s*(?:(?P<str>"(?:[^"\\]|\\.)*")|(?P<sym>@[\w.$-]+)|(?P<int>-?\d+)|'
                    r'(?P<word>[A-Za-z_][\w.]*)|(?P<punct>[\[\]{}<>(),:=?]))')


class SyntaxErr(ValueError):
    """The text of an sdy attribute does not read (reported as the attribute's error)."""


class _Scan:
    def __init__(self, text: str):
        self.text = text
        self.toks: list[tuple[str, str]] = []
        pos = 0
        while pos < len(text):
            if text[pos:].strip() == "":
                break
            m = _TOKEN.match(text, pos)
            if m is None:
                raise SyntaxErr(f"unexpected {text[pos:].strip()[:12]!r} in {text!r}")
            kind = m.lastgroup or ""
            self.toks.append((kind, m.group(kind)))
            pos = m.end()
        self.i = 0

    def peek(self) -> tuple[str, str]:
        return self.toks[self.i] if self.i < len(self.toks) else ("end", "")

    def take(self, kind: str | None = None, text: str | None = None) -> str:
        k, t = self.peek()
        if (kind is not None and k != kind) or (text is not None and t != text):
            raise SyntaxErr(f"expected {text or kind} in {self.text!r}, got {t or 'the end'!r}")
        self.i += 1
        return t

    def accept(self, text: str) -> bool:
        if self.peek()[1] == text and self.peek()[0] != "str":
            self.i += 1
            return True
        return False

    def done(self) -> None:
        if self.i != len(self.toks):
            raise SyntaxErr(f"unexpected {self.peek()[1]!r} in {self.text!r}")


def _name(s: _Scan) -> str:
    return s.take("str")[1:-1]


@dataclasses.dataclass(frozen=True)
class AxisRef:
    """A mesh axis, or its sub-axis ``"x":(pre)size`` (coordinate ``(c // pre) % size``)."""

    name: str
    pre: int = 1
    size: int | None = None

    def __str__(self) -> str:
        return f'"{self.name}"' + (f":({self.pre}){self.size}" if self.size is not None else "")


def _axis_ref(s: _Scan) -> AxisRef:
    name = _name(s)
    if s.accept(":"):
        s.take(text="(")
        pre = int(s.take("int"))
        s.take(text=")")
        return AxisRef(name, pre, int(s.take("int")))
    return AxisRef(name)


def _axis_set(s: _Scan) -> tuple[AxisRef, ...]:
    s.take(text="{")
    out: list[AxisRef] = []
    while not s.accept("}"):
        out.append(_axis_ref(s))
        if not s.accept(","):
            s.take(text="}")
            break
    return tuple(out)


@dataclasses.dataclass(frozen=True)
class Mesh:
    """``<["x"=2, "y"=2], device_ids=[...]>``: named axes (major to minor) and the device at
    each mesh position (row-major), iota when not given."""

    name: str
    axes: tuple[tuple[str, int], ...]
    device_ids: tuple[int, ...] | None = None

    @property
    def size(self) -> int:
        return int(np.prod([n for _, n in self.axes], dtype=np.int64))

    def axis_size(self, name: str) -> int:
        for a, n in self.axes:
            if a == name:
                return n
        raise KeyError(name)

    def devices(self) -> tuple[int, ...]:
        return self.device_ids if self.device_ids is not None else tuple(range(self.size))

    def coords(self, device: int) -> dict[str, int]:
        """The device's coordinate on each axis."""
        pos = self.devices().index(device)
        idx = np.unravel_index(pos, [n for _, n in self.axes]) if self.axes else ()
        return {a: int(c) for (a, _), c in zip(self.axes, idx, strict=True)}

    def describe(self) -> str:
        axes = ", ".join(f'"{a}"={n}' for a, n in self.axes)
        ids = f", device_ids={list(self.device_ids)}" if self.device_ids is not None else ""
        return f"@{self.name} = <[{axes}]{ids}>"


def parse_mesh(name: str, text: str) -> Mesh:
    """The body of ``#sdy.mesh<...>``."""
    s = _Scan(text)
    axes: list[tuple[str, int]] = []
    ids = None
    if s.accept("["):
        while not s.accept("]"):
            a = _name(s)
            s.take(text="=")
            axes.append((a, int(s.take("int"))))
            if not s.accept(","):
                s.take(text="]")
                break
        s.accept(",")
    if s.accept("device_ids"):
        s.take(text="=")
        s.take(text="[")
        vals: list[int] = []
        while not s.accept("]"):
            vals.append(int(s.take("int")))
            s.accept(",")
        ids = tuple(vals)
    s.done()
    mesh = Mesh(name, tuple(axes), ids)
    if len({a for a, _ in axes}) != len(axes):
        raise SyntaxErr(f"mesh @{name} repeats an axis name: {text!r}")
    if any(n <= 0 for _, n in axes):
        raise SyntaxErr(f"mesh @{name} has an axis of size <= 0: {text!r}")
    if ids is not None and (len(ids) != mesh.size or sorted(ids) != list(range(mesh.size))):
        raise SyntaxErr(f"mesh @{name}: device_ids {list(ids)} must be a permutation of "
                        f"0..{mesh.size - 1}")
    return mesh


@dataclasses.dataclass(frozen=True)
class Sharding:
    """``@mesh, [{"x"}, {}], replicated={"y"}``: per dim, the axes sharding it, major first
    (``open``: ``?``, the partitioner may add more; ``priority``: ``p<N>``)."""

    mesh: str
    dims: tuple[tuple[AxisRef, ...], ...]
    replicated: tuple[AxisRef, ...] = ()
    text: str = ""

    def __str__(self) -> str:
        return f"<{self.text}>"

    def axes(self) -> list[AxisRef]:
        return [r for d in self.dims for r in d] + list(self.replicated)


def parse_sharding(text: str) -> Sharding:
    """The body of ``#sdy.sharding<...>``."""
    s = _Scan(text)
    k, t = s.peek()
    if k != "sym":
        raise UnsupportedError(f"sdy sharding {text!r}: only a mesh named by symbol (@mesh) is "
                               "supported, not an inline mesh")
    s.take("sym")
    s.take(text=",")
    s.take(text="[")
    dims: list[tuple[AxisRef, ...]] = []
    while not s.accept("]"):
        s.take(text="{")
        refs: list[AxisRef] = []
        while not s.accept("}"):
            if s.accept("?"):
                s.accept(",")
                continue
            refs.append(_axis_ref(s))
            s.accept(",")
        if s.peek()[0] == "word" and re.fullmatch(r"p\d+", s.peek()[1]):
            s.take("word")
        dims.append(tuple(refs))
        s.accept(",")
    replicated: tuple[AxisRef, ...] = ()
    while s.accept(","):
        key = s.take("word")
        s.take(text="=")
        refs_ = _axis_set(s)
        if key == "replicated":
            replicated = refs_
        elif key == "unreduced":
            if refs_:
                raise UnsupportedError(f"sdy sharding {text!r}: unreduced axes are not supported")
        else:
            raise SyntaxErr(f"unknown sharding part {key!r} in {text!r}")
    s.done()
    return Sharding(t[1:], tuple(dims), replicated, text)


def _per_value(text: str) -> tuple[Sharding, ...]:
    """``[<@mesh, [...]>, <@mesh, [...]>]``: split at the top-level ``<...>`` items."""
    body = text.strip()
    if not (body.startswith("[") and body.endswith("]")):
        raise SyntaxErr(f"expected [<sharding>, ...], got {text!r}")
    out, depth, start = [], 0, None
    in_str = False
    for i, ch in enumerate(body[1:-1]):
        if ch == '"':
            in_str = not in_str
        if in_str:
            continue
        if ch == "<":
            depth += 1
            if depth == 1:
                start = i + 1
        elif ch == ">":
            depth -= 1
            if depth == 0 and start is not None:
                out.append(parse_sharding(body[1:-1][start:i]))
    return tuple(out)


def _inner(a: Any, prefix: str) -> str:
    if not (isinstance(a, OpaqueAttr) and a.text.startswith(prefix) and a.text.endswith(">")):
        raise AttrKindError
    return a.text[len(prefix):-1]


@dataclasses.dataclass(frozen=True)
class ShardingCodec(Codec):
    what: str = 'an sdy sharding #sdy.sharding<@mesh, [{"x"}, {}]>'

    def read(self, a: Any) -> Sharding:
        try:
            return parse_sharding(_inner(a, "#sdy.sharding<"))
        except SyntaxErr:
            raise AttrKindError from None

    def write(self, v: Sharding) -> OpaqueAttr:
        return OpaqueAttr(f"#sdy.sharding<{v.text}>")


@dataclasses.dataclass(frozen=True)
class PerValueCodec(Codec):
    what: str = "a list of sdy shardings [<@mesh, [...]>, ...]"

    def read(self, a: Any) -> tuple[Sharding, ...]:
        try:
            return _per_value(_inner(a, "#sdy.sharding_per_value<"))
        except SyntaxErr:
            raise AttrKindError from None

    def write(self, v: tuple[Sharding, ...]) -> OpaqueAttr:
        return OpaqueAttr("#sdy.sharding_per_value<[" + ", ".join(str(x) for x in v) + "]>")


@dataclasses.dataclass(frozen=True)
class ManualAxesCodec(Codec):
    what: str = 'manual axes {"x", "y"}'

    def read(self, a: Any) -> tuple[str, ...]:
        try:
            s = _Scan(_inner(a, "#sdy<manual_axes"))
            refs = _axis_set(s)
            s.done()
        except SyntaxErr:
            raise AttrKindError from None
        if any(r.size is not None for r in refs):
            raise AttrKindError
        return tuple(r.name for r in refs)

    def write(self, v: tuple[str, ...]) -> OpaqueAttr:
        return OpaqueAttr("#sdy<manual_axes{" + ", ".join(f'"{n}"' for n in v) + "}>")


# --- GSPMD's HloSharding strings ----------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class HloSharding:
    """``{replicated}``, ``{manual}``, ``{maximal device=d}`` or a tiled sharding: the tile
    assignment (device per tile, data dims first, then ``subgroups`` trailing dims, e.g.
    ``last_tile_dim_replicate``)."""

    kind: str  # "replicated" | "manual" | "maximal" | "tiled"
    text: str
    assignment: np.ndarray | None = None
    subgroups: tuple[str, ...] = ()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HloSharding) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)


_HLO_TILED = re.compile(r"devices=\[([\d,\s]+)\]\s*"  # tile shape, then iota (reshape, transpose) or ids
                        r"(?:<=\[([\d,\s]+)\](?:T\(([\d,\s]+)\))?|([\d,\s]+))\s*(.*)")


def parse_hlo_sharding(text: str) -> HloSharding:
    """An ``mhlo.sharding`` string; tuple shardings and unreduced ones are unsupported."""
    body = text.strip()
    if not (body.startswith("{") and body.endswith("}")):
        raise UnsupportedError(f"mhlo.sharding {text!r}: expected {{...}}")
    inner = body[1:-1].strip()
    if inner.startswith("{") or inner == "":
        raise UnsupportedError(f"mhlo.sharding {text!r}: tuple shardings are not supported")
    meta = re.sub(r"\s*metadata=\{.*\}", "", inner).strip()
    if meta in ("replicated", "manual"):
        return HloSharding(meta, text)
    if meta.startswith("maximal"):
        return HloSharding("maximal", text)
    m = _HLO_TILED.fullmatch(meta)
    if m is None:
        raise UnsupportedError(f"mhlo.sharding {text!r} is not supported (replicated, manual, maximal "
                               "or devices=[...] are)")
    dims = [int(v) for v in m.group(1).replace(" ", "").split(",") if v]
    if m.group(2) is not None:
        reshape = [int(v) for v in m.group(2).replace(" ", "").split(",") if v]
        ids = np.arange(int(np.prod(reshape)), dtype=np.int64).reshape(reshape)
        if m.group(3):
            ids = ids.transpose([int(v) for v in m.group(3).replace(" ", "").split(",") if v])
        ids = ids.reshape(dims)
    else:
        flat = [int(v) for v in m.group(4).replace(" ", "").split(",") if v]
        if len(flat) != int(np.prod(dims)):
            raise UnsupportedError(f"mhlo.sharding {text!r}: {len(flat)} devices for tiles {dims}")
        ids = np.asarray(flat, dtype=np.int64).reshape(dims)
    rest = m.group(5).strip()
    subgroups: tuple[str, ...] = ()
    if rest == "last_tile_dim_replicate":
        subgroups = ("replicated",)
    elif rest.startswith("last_tile_dims="):
        sub = re.fullmatch(r"last_tile_dims=\{([\w,\s]*)\}", rest)
        if sub is None:
            raise UnsupportedError(f"mhlo.sharding {text!r}: cannot read {rest!r}")
        subgroups = tuple(v.strip() for v in sub.group(1).split(",") if v.strip())
    elif rest:
        raise UnsupportedError(f"mhlo.sharding {text!r}: {rest!r} is not supported")
    return HloSharding("tiled", text, ids, subgroups)


# --- tilings: which block of a value each device holds ------------------------------------

@dataclasses.dataclass(frozen=True)
class Tiling:
    """Per dim the number of blocks; per device its block and its *replica key* (what
    tells apart devices holding the same block: the mesh coordinates the sharding does not
    use). ``what`` describes the sharding for explanations."""

    counts: tuple[int, ...]
    blocks: dict[int, tuple[tuple[int, ...], tuple[int, ...]]]
    what: str

    def block_shape(self, shape: tuple[int, ...], who: str) -> tuple[int, ...]:
        out = []
        for d, (n, c) in enumerate(zip(shape, self.counts, strict=True)):
            if n % c:
                raise ExecutionError(f"{who}: dim {d} of size {n} does not split into {c} shards "
                                     f"({self.what})")
            out.append(n // c)
        return tuple(out)


def sdy_tiling(mesh: Mesh, sharding: Sharding, axes: set[str] | None, label: str) -> Tiling:
    """The tiling of ``sharding`` over the mesh axes ``axes`` (None: all of them); the
    other axes leave a dim whole (they are part of every device's replica key)."""
    blocks: dict[int, tuple[tuple[int, ...], tuple[int, ...]]] = {}
    counts: list[int] = []
    for dim in sharding.dims:
        c = 1
        for r in dim:
            if axes is None or r.name in axes:
                c *= r.size if r.size is not None else mesh.axis_size(r.name)
        counts.append(c)
    for device in mesh.devices():
        coords = mesh.coords(device)
        used = dict(coords)  # per axis, the coordinate with the used sub-axes' digits removed
        index = []
        for dim in sharding.dims:
            i = 0
            for r in dim:
                if axes is not None and r.name not in axes:
                    continue
                size = r.size if r.size is not None else mesh.axis_size(r.name)
                digit = (coords[r.name] // r.pre) % size
                i = i * size + digit
                used[r.name] -= digit * r.pre
            index.append(i)
        key = tuple(used[a] for a, _ in mesh.axes)
        blocks[device] = (tuple(index), key)
    what = f"{label} <{sharding.text}> on mesh {mesh.describe()}"
    return Tiling(tuple(counts), blocks, what)


def hlo_tiling(s: HloSharding, rank: int, n_devices: int, label: str) -> Tiling:
    """The tiling of an HloSharding of a rank-``rank`` value on ``n_devices`` devices."""
    if s.kind in ("replicated", "manual"):
        return Tiling((1,) * rank, {d: ((0,) * rank, (d,)) for d in range(n_devices)},
                      f"{label} {s.text}")
    if s.kind == "maximal":
        raise UnsupportedError(f"{label} {s.text}: a maximal (single-device) sharding is not supported")
    assert s.assignment is not None
    a = s.assignment
    if a.ndim != rank + len(s.subgroups):
        raise ExecutionError(f"{label} {s.text} has {a.ndim} tile dims for a rank-{rank} value")
    if a.size != n_devices or sorted(a.reshape(-1).tolist()) != list(range(n_devices)):
        raise ExecutionError(f"{label} {s.text} assigns devices {sorted(a.reshape(-1).tolist())}, "
                             f"the grid has {n_devices} partitions")
    blocks = {}
    for pos in np.ndindex(*a.shape):
        blocks[int(a[pos])] = (tuple(int(v) for v in pos[:rank]), tuple(int(v) for v in pos[rank:]))
    return Tiling(tuple(int(v) for v in a.shape[:rank]), blocks, f"{label} {s.text}")


def shard_of(x: np.ndarray, tiling: Tiling, device: int, who: str) -> tuple[np.ndarray, tuple[int, ...]]:
    """The block of ``x`` that ``device`` holds, and its start index."""
    bs = tiling.block_shape(x.shape, who)
    block = tiling.blocks[device][0]
    start = tuple(b * s for b, s in zip(block, bs, strict=True))
    sl = tuple(slice(a, a + s) for a, s in zip(start, bs, strict=True))
    return np.ascontiguousarray(x[sl]), start


def _owner(tiling: Tiling, block: tuple[int, ...], me: int, devices: list[int]) -> int | None:
    """The device whose block ``block`` the assembled value takes on device ``me``: the one
    holding it with ``me``'s replica key (``me`` itself where it holds it)."""
    key = tiling.blocks[me][1]
    for d in devices:
        b, k = tiling.blocks[d]
        if b == block and k == key:
            return d
    return None


def assemble(values: list[np.ndarray], devices: list[int], tiling: Tiling, me: int,
             who: str) -> tuple[np.ndarray, list[tuple[int, tuple[int, ...], tuple[int, ...]]]]:
    """The global value seen by device ``me`` from the members' blocks (``values[k]`` held
    by ``devices[k]``), and per block (member slot, start, block shape)."""
    bs = tuple(int(n) for n in values[0].shape)
    shape = tuple(b * c for b, c in zip(bs, tiling.counts, strict=True))
    out = np.empty(shape, dtype=values[0].dtype)
    placed = []
    for block in np.ndindex(*tiling.counts):
        d = _owner(tiling, tuple(block), me, devices)
        if d is None:
            raise ExecutionError(f"{who}: no process holds block {tuple(block)} of {tiling.what}")
        k = devices.index(d)
        start = tuple(b * s for b, s in zip(block, bs, strict=True))
        out[tuple(slice(a, a + s) for a, s in zip(start, bs, strict=True))] = values[k]
        placed.append((k, start, bs))
    return out, placed


# --- where the mesh and the grid meet ------------------------------------------------------

def module_mesh(ctx: Any, name: str, label: str) -> Mesh:
    """The module's ``sdy.mesh @name``."""
    module = ctx.interp.module
    sym = module.symbol(name)
    if sym is None or sym.name != "sdy.mesh":
        meshes = [getattr(o.attributes.get("sym_name"), "value", "?") for o in module.symbols
                  if o.name == "sdy.mesh"]
        raise ctx.error(label, f"the sharding names mesh @{name}, which the module does not define "
                        f"(meshes: {', '.join('@' + m for m in meshes) or 'none'})")
    try:
        return parse_mesh(name, _inner(sym.attributes.get("mesh"), "#sdy.mesh<"))
    except (SyntaxErr, AttrKindError) as e:
        raise ctx.error(label, f"cannot read mesh @{name}: {e}") from None


def _check_axes(ctx: Any, mesh: Mesh, sharding: Sharding, label: str) -> None:
    names = {a for a, _ in mesh.axes}
    for r in sharding.axes():
        if r.name not in names:
            raise ctx.error(label, f"sharding <{sharding.text}> names axis \"{r.name}\", which mesh "
                            f"{mesh.describe()} does not have")
        if r.size is not None:
            n = mesh.axis_size(r.name)
            if r.pre * r.size > n or n % (r.pre * r.size):
                raise ctx.error(label, f"sub-axis {r} does not fit axis \"{r.name}\" of size {n}")


def _device(ctx: Any, mesh_size: int, label: str) -> int:
    """The running process's device (its partition id); the mesh must span the partitions."""
    n_rep, n_part = ctx.frame.grid
    if mesh_size != n_part:
        raise ctx.error(label, f"the mesh has {mesh_size} devices but the process grid has {n_part} "
                        f"partitions ({n_rep}x{n_part}; the module's mhlo.num_partitions, or "
                        "--partitions)")
    return int(ctx.frame.partition_id)


def _replica_processes(ctx: Any) -> tuple[int, ...]:
    n_part = ctx.frame.grid[1]
    r = ctx.frame.replica_id
    return tuple(r * n_part + q for q in range(n_part))


# --- annotations: sdy.sharding_constraint, sdy.reshard ------------------------------------

@record
class ShardingAttrs(Attrs):
    sharding: Sharding = attr(ShardingCodec("sharding"))


def _verify_annotation(ctx: OpCall) -> None:
    if len(ctx.operand_types) != 1 or len(ctx.result_types) != 1:
        raise ctx.error("C1", f"takes one operand and gives one result, got {len(ctx.operand_types)} "
                        f"and {len(ctx.result_types)}")
    t = ctx.operand_types[0]
    s = ctx.attrs.sharding
    if isinstance(t, TensorType) and len(s.dims) != t.rank:
        raise ctx.error("C1", f"sharding <{s.text}> has {len(s.dims)} dims, the operand {t} has rank "
                        f"{t.rank}")


def _infer_same(a: Attrs, types: list[Type]) -> list[Inferred]:
    return list(types)


def _annotation(ctx: OpCall, x: np.ndarray) -> np.ndarray:
    """The value, unchanged (the sharding only says where its blocks live); its mesh and axes
    are checked against the module."""
    s = ctx.attrs.sharding
    if hasattr(ctx, "interp"):
        _check_axes(ctx, module_mesh(ctx, s.mesh, "C2"), s, "C2")
    return x


def _holders(tiling: Tiling, shape: tuple[int, ...],
             index: tuple[int, ...]) -> tuple[list[int], tuple[int, ...]]:
    # an annotation may shard unevenly (XLA pads the last block): blocks of ceil(n / count)
    bs = tuple(max(1, -(-n // c)) for n, c in zip(shape, tiling.counts, strict=True))
    block = tuple(i // b for i, b in zip(index, bs, strict=True))
    return sorted(d for d, (b, _) in tiling.blocks.items() if b == block), block


def _explain_annotation(ctx: Any, inputs: list[Any], outputs: list[Any], result: int,
                        index: tuple[int, ...], tiling: Tiling | None = None) -> Explanation:
    """Which devices hold the element's block under the annotation (``tiling``: given for
    @Sharding, else the sdy sharding's over the whole mesh)."""
    x = outputs[0]
    idx = check_index(value_shape(x), index, "result index")
    if tiling is None:
        s = ctx.attrs.sharding
        tiling = sdy_tiling(module_mesh(ctx, s.mesh, "C2"), s, None, ctx.name.split(".")[-1])
    holders, block = _holders(tiling, x.shape, idx)
    steps = [Step("sharding", Msg("sharding.annotation.formula"), tiling.what,
                  substituted=Msg("sharding.annotation.holders", block=block, counts=tiling.counts,
                                  devices=holders)),
             Step("result", Msg("sharding.annotation.identity"), x[idx])]
    return Explanation(ctx.name, idx, steps, x[idx], [Msg("sharding.note.identity")], result)


for _name_ in ("sdy.sharding_constraint", "sdy.reshard"):
    op(_name_, attrs=ShardingAttrs, verify=_verify_annotation, infer=_infer_same, family="sharding",
       provenance=unary_copy_provenance, explain=_explain_annotation, elementwise=True)(_annotation)


# --- sdy.manual_computation ---------------------------------------------------------------

@record
class ManualAttrs(Attrs):
    in_shardings: tuple[Sharding, ...] = attr(PerValueCodec("in_shardings"))
    out_shardings: tuple[Sharding, ...] = attr(PerValueCodec("out_shardings"))
    manual_axes: tuple[str, ...] = attr(ManualAxesCodec("manual_axes"))


def _manual_counts(s: Sharding, manual: tuple[str, ...], mesh: Mesh | None) -> list[int] | None:
    """Per dim, how many blocks the manual axes make (None without a mesh to size them)."""
    if mesh is None:
        return None
    out = []
    for dim in s.dims:
        c = 1
        for r in dim:
            if r.name in manual:
                c *= r.size if r.size is not None else mesh.axis_size(r.name)
        out.append(c)
    return out


def _verify_manual(ctx: OpCall) -> None:
    a = ctx.attrs
    if len(a.in_shardings) != len(ctx.operand_types):
        raise ctx.error("C1", f"{len(a.in_shardings)} in_shardings for {len(ctx.operand_types)} operands")
    if len(a.out_shardings) != len(ctx.result_types):
        raise ctx.error("C1", f"{len(a.out_shardings)} out_shardings for {len(ctx.result_types)} results")
    for what, shardings, types in (("operand", a.in_shardings, ctx.operand_types),
                                   ("result", a.out_shardings, ctx.result_types)):
        for i, (s, t) in enumerate(zip(shardings, types, strict=True)):
            if not isinstance(t, TensorType):
                raise ctx.error("C1", f"{what} #{i} must be a tensor, got {t}")
            if len(s.dims) != t.rank:
                raise ctx.error("C1", f"{what} #{i} {t} has rank {t.rank}, its sharding <{s.text}> "
                                f"has {len(s.dims)} dims")
    if len(set(a.manual_axes)) != len(a.manual_axes):
        raise ctx.error("C5", f"manual_axes {list(a.manual_axes)} repeats an axis")
    if len(ctx.op.regions) != 1 or len(ctx.op.regions[0].blocks) != 1:
        raise ctx.error("C3", "expects one body region of one block")
    block = ctx.op.regions[0].blocks[0]
    if len(block.args) != len(ctx.operand_types):
        raise ctx.error("C3", f"the body takes {len(block.args)} arguments for {len(ctx.operand_types)} "
                        "operands")
    ret = block.ops[-1] if block.ops else None
    if ret is None or ret.name != "sdy.return":
        raise ctx.error("C3", "the body must end with sdy.return")
    if len(ret.operands) != len(ctx.result_types):
        raise ctx.error("C3", f"the body returns {len(ret.operands)} values for {len(ctx.result_types)} "
                        "results")


def _check_local_types(ctx: Any, mesh: Mesh) -> None:
    """(C3) with the mesh known: body types = global types / manual blocks per dim."""
    a = ctx.attrs
    block = ctx.op.regions[0].blocks[0]
    ret = block.ops[-1]
    pairs = [("operand", i, s, ctx.operand_types[i], block.args[i].type)
             for i, s in enumerate(a.in_shardings)]
    pairs += [("result", i, s, ctx.result_types[i], ret.operands[i].type)
              for i, s in enumerate(a.out_shardings)]
    for what, i, s, full, local in pairs:
        counts = _manual_counts(s, a.manual_axes, mesh)
        assert counts is not None
        if not isinstance(local, TensorType) or local.element != full.element:
            raise ctx.error("C3", f"{what} #{i}: the body's {local} must have element type {full.element}")
        for d, (n, c) in enumerate(zip(full.shape, counts, strict=True)):
            if isinstance(n, int) and n % c:
                raise ctx.error("C3", f"{what} #{i} {full}: dim {d} of size {n} does not split over "
                                f"the manual axes of <{s.text}> ({c} blocks)")
        want = tuple(n // c if isinstance(n, int) else n for n, c in zip(full.shape, counts, strict=True))
        if local.shape != want:
            raise ctx.error("C3", f"{what} #{i} {full} sharded <{s.text}> over manual axes "
                            f"{list(a.manual_axes)} gives a body {what} of shape {list(want)}, the body "
                            f"has {local}")


def _manual_setup(ctx: Any) -> tuple[Mesh, int]:
    a = ctx.attrs
    meshes = {s.mesh for s in a.in_shardings + a.out_shardings}
    if not meshes:
        raise ctx.error("C2", "no sharding names a mesh")
    if len(meshes) > 1:
        raise ctx.error("C2", f"the shardings name several meshes: {sorted(meshes)}")
    mesh = module_mesh(ctx, next(iter(meshes)), "C2")
    names = [a_ for a_, _ in mesh.axes]
    for m in a.manual_axes:
        if m not in names:
            raise ctx.error("C5", f"manual axis \"{m}\" is not an axis of mesh {mesh.describe()}")
    for s in a.in_shardings + a.out_shardings:
        _check_axes(ctx, mesh, s, "C2")
    _check_local_types(ctx, mesh)
    return mesh, _device(ctx, mesh.size, "C4")


def _shard_ops(ctx: Any) -> list[Op]:
    """One ``sdy.manual_computation.shard`` op per operand (made once per op): operand ``i`` in,
    body argument ``i`` out, so the shard step is an event of its own in the trace."""
    made = getattr(ctx.op, "_shard_ops", None)
    if made is None:
        a = ctx.op.attributes
        block = ctx.op.regions[0].blocks[0]
        made = []
        for i, (v, arg) in enumerate(zip(ctx.op.operands, block.args, strict=True)):
            s = ctx.attrs.in_shardings[i]
            made.append(Op("sdy.manual_computation.shard", operands=[v], results=[arg],
                           attributes={"sharding": OpaqueAttr(f"#sdy.sharding<{s.text}>"),
                                       "manual_axes": a["manual_axes"]},
                           loc=ctx.op.loc))
        ctx.op._shard_ops = made  # type: ignore[attr-defined]
    return made


def manual_computation(ctx: Any, *operands: np.ndarray) -> Generator[Any, Any, list[np.ndarray]]:
    """Each process runs the body on its shard of the operands (by the manual axes); the
    results are assembled from the processes' blocks per out_shardings."""
    prev = getattr(ctx, "arrival", None)
    if prev is not None:  # re-run by a stepper that dropped the value: the same result
        return list(prev.result)
    mesh, device = _manual_setup(ctx)
    shards, defs = [], []
    for i, (x, shard_op) in enumerate(zip(operands, _shard_ops(ctx), strict=True)):
        event = yield from ctx.interp._exec_op(shard_op, [x], ctx.env, ctx.frame, (), ctx.denv,
                                               [ctx.operand_defs[i]])
        yield event
        shards.append(event.outputs[0])
        defs.append((event.id, 0))
    out = yield from ctx.step_region(0, shards, arg_defs=defs)
    group = _replica_processes(ctx)
    rv = Rendezvous(ctx.frame.process, ctx.op, (ctx.op.name, id(ctx.op), group), group, list(out),
                    _compute_manual, ctx.frame.grid, ctx, list(ctx.last_defs))
    arrival: Arrival = yield rv
    ctx.arrival = arrival
    ctx.members = arrival.members
    ctx.peer_defs = [d for m in arrival.members for d in m.operand_defs]
    ctx.result_defs = None
    return list(arrival.result)


def _out_tilings(ctx: Any) -> list[Tiling]:
    a = ctx.attrs
    mesh = module_mesh(ctx, a.out_shardings[0].mesh if a.out_shardings else a.in_shardings[0].mesh, "C2")
    return [sdy_tiling(mesh, s, set(a.manual_axes), "out_sharding") for s in a.out_shardings]


def _compute_manual(members: list[Rendezvous]) -> list[Any]:
    ctx = members[0].ctx
    n_part = ctx.frame.grid[1]
    devices = [m.process % n_part for m in members]
    tilings = _out_tilings(ctx)
    out = []
    for m in members:
        vals = []
        for r, tiling in enumerate(tilings):
            v, _ = assemble([x.operands[r] for x in members], devices, tiling, m.process % n_part,
                            ctx.name)
            vals.append(v)
        out.append(vals)
    return out


def _assembled_provenance(ctx: Any, outputs: list[Any], tilings: list[Tiling]) -> CollectiveProvenance:
    """Result ``r`` <- result ``r`` of the body (or the operand) of the member holding each
    block; operand ``j = slot * n + r`` is the member's value ``r``."""
    members = ctx.members
    n = len(members[0].operands)
    n_part = ctx.frame.grid[1]
    devices = [m.process % n_part for m in members]
    me = ctx.frame.partition_id
    oshapes = [value_shape(x) for m in members for x in m.operands]
    rshapes = [value_shape(x) for x in outputs]
    links: list[list[Link]] = []
    for r, (rshape, tiling) in enumerate(zip(rshapes, tilings, strict=True)):
        assert rshape is not None
        bs = tiling.block_shape(rshape, ctx.name)
        grid = list(np.indices(rshape, dtype=np.int64, sparse=True)) if rshape else []
        ls = []
        for block in np.ndindex(*tiling.counts):
            d = _owner(tiling, tuple(block), me, devices)
            assert d is not None
            k = devices.index(d)
            start = [b * s for b, s in zip(block, bs, strict=True)]
            valid = np.ones(rshape, dtype=bool)
            idx = []
            for g, s0, s in zip(grid, start, bs, strict=True):
                valid = valid & (g >= s0) & (g < s0 + s)
                idx.append(g - s0)
            ls.append(index_link(k * n + r, "copy", oshapes[k * n + r], idx, valid, result_shape=rshape))
        links.append(ls)
    return CollectiveProvenance(rshapes, oshapes, links, [m.process for m in members for _ in m.operands],
                                [i for _ in members for i in range(n)])


def _manual_provenance(ctx: Any, inputs: list[Any], outputs: list[Any]) -> CollectiveProvenance:
    if getattr(ctx, "members", None) is None:
        raise ExecutionError(f"{ctx.op.name}: no provenance before the results were assembled")
    return _assembled_provenance(ctx, outputs, _out_tilings(ctx))


def _explain_assembled(ctx: Any, outputs: list[Any], result: int, index: tuple[int, ...],
                       tilings: list[Tiling]) -> Explanation:
    grid = ctx.frame.grid
    x = outputs[result]
    idx = check_index(value_shape(x), index, f"result #{result} index")
    tiling = tilings[result]
    bs = tiling.block_shape(x.shape, ctx.name)
    block = tuple(i // b for i, b in zip(idx, bs, strict=True))
    local = tuple(i % b for i, b in zip(idx, bs, strict=True))
    members = ctx.members
    n_part = grid[1]
    devices = [m.process % n_part for m in members]
    me = ctx.frame.partition_id
    d = _owner(tiling, block, me, devices)
    assert d is not None
    k = devices.index(d)
    holders = [devices[j] for j in range(len(members)) if tiling.blocks[devices[j]][0] == block]
    source = members[k]
    value = x[idx]
    steps = [Step("out_sharding", Msg("sharding.assemble.tiling"), tiling.what,
                  substituted=Msg("sharding.assemble.block", block=block, counts=tiling.counts,
                                  devices=holders)),
             Step("block_index", Msg("sharding.assemble.local"), local),
             Step(f"result{result}@{process_name(source.process, grid)}", Msg("sharding.assemble.formula"),
                  value, substituted=Msg("sharding.assemble.source",
                                         process=process_name(source.process, grid), index=local))]
    notes = [Msg("sharding.note.own")] if len(holders) > 1 else []
    differ = [devices[j] for j in range(len(members)) if devices[j] in holders and
              not np.array_equal(members[j].operands[result], source.operands[result], equal_nan=True)] \
        if len(holders) > 1 else []
    if differ:
        notes.append(Msg("sharding.note.differ", devices=differ, device=d))
    return Explanation(ctx.name, idx, steps, value, notes, result)


def _explain_manual(ctx: Any, inputs: list[Any], outputs: list[Any], result: int,
                    index: tuple[int, ...]) -> Explanation:
    return _explain_assembled(ctx, outputs, result, index, _out_tilings(ctx))


op("sdy.manual_computation", attrs=ManualAttrs, verify=_verify_manual, infer=lambda a, types: _as_declared(),
   steps=True, family="sharding", provenance=_manual_provenance, explain=_explain_manual)(manual_computation)


def _as_declared() -> Any:
    from hlolab.ops.record import AsDeclared

    return AsDeclared()


# --- the shard step (one per operand of a manual_computation) -----------------------------

@record
class ShardAttrs(Attrs):
    sharding: Sharding = attr(ShardingCodec("sharding"))
    manual_axes: tuple[str, ...] = attr(ManualAxesCodec("manual_axes"))


def _shard_tiling(ctx: Any) -> tuple[Tiling, int]:
    a = ctx.attrs
    mesh = module_mesh(ctx, a.sharding.mesh, "C2")
    return sdy_tiling(mesh, a.sharding, set(a.manual_axes), "in_sharding"), _device(ctx, mesh.size, "C4")


def shard(ctx: Any, x: np.ndarray) -> np.ndarray:
    """This process's block of the global operand (the dims its manual axes shard)."""
    tiling, device = _shard_tiling(ctx)
    return shard_of(x, tiling, device, "sdy.manual_computation (C3)")[0]


def _shard_start(ctx: Any, x_shape: tuple[int, ...]) -> tuple[Tiling, int, tuple[int, ...]]:
    if ctx.name == "stablehlo.custom_call":
        tiling = _full_to_shard_tiling(ctx)
        device = int(ctx.frame.partition_id)
    else:
        tiling, device = _shard_tiling(ctx)
    bs = tiling.block_shape(x_shape, ctx.name)
    return tiling, device, tuple(b * s for b, s in zip(tiling.blocks[device][0], bs, strict=True))


def _shard_provenance(ctx: Any, inputs: list[Any], outputs: list[Any]) -> IndexMapProvenance:
    oshape, rshape = value_shape(inputs[0]), value_shape(outputs[0])
    assert oshape is not None and rshape is not None
    _, _, start = _shard_start(ctx, oshape)
    grid = list(np.indices(rshape, dtype=np.int64, sparse=True)) if rshape else []
    link = index_link(0, "copy", oshape, [g + s for g, s in zip(grid, start, strict=True)],
                      result_shape=rshape)
    return IndexMapProvenance([rshape], [oshape], [[link]])


def _explain_shard(ctx: Any, inputs: list[Any], outputs: list[Any], result: int,
                   index: tuple[int, ...]) -> Explanation:
    x = outputs[0]
    idx = check_index(value_shape(x), index, "result index")
    tiling, device, start = _shard_start(ctx, value_shape(inputs[0]) or ())
    operand_index = tuple(i + s for i, s in zip(idx, start, strict=True))
    grid = ctx.frame.grid
    steps = [Step("sharding", Msg("sharding.shard.tiling"), tiling.what,
                  substituted=Msg("sharding.shard.block", process=process_name(ctx.frame.process, grid),
                                  device=device, block=tiling.blocks[device][0], counts=tiling.counts)),
             Step("shard_start", Msg("sharding.shard.start"), start),
             Step("operand_index", Msg("sharding.shard.index"), operand_index),
             Step("result", Msg("sharding.shard.formula"), x[idx])]
    return Explanation(ctx.name, idx, steps, x[idx], [], result)


op("sdy.manual_computation.shard", attrs=ShardAttrs, infer=lambda a, types: _as_declared(),
   family="sharding", provenance=_shard_provenance, explain=_explain_shard)(shard)


# --- GSPMD: custom_call @Sharding, @SPMDFullToShardShape, @SPMDShardToFullShape --------------

def _mhlo_sharding(ctx: Any, the_op: Op, label: str) -> HloSharding:
    a = the_op.attributes.get("mhlo.sharding")
    if not isinstance(a, StringAttr):
        raise ctx.error(label, f"{the_op.name} @{_target(the_op)} needs an mhlo.sharding string attribute")
    return parse_hlo_sharding(a.value)


def _target(the_op: Op) -> str:
    a = the_op.attributes.get("call_target_name")
    return getattr(a, "value", "")


def _annotating(ctx: Any, label: str) -> HloSharding:
    """The sharding of the ``@Sharding`` custom_call that defines this op's operand."""
    v = ctx.op.operands[0] if ctx.op.operands else None
    owner = getattr(v, "owner", None)
    if not (isinstance(owner, Op) and owner.name == "stablehlo.custom_call" and _target(owner) == "Sharding"):
        raise ctx.error(label, f"the operand of @{ctx.attrs.call_target_name} must be the result of a "
                        "custom_call @Sharding (which says how the value is tiled)")
    return _mhlo_sharding(ctx, owner, label)


def _sharding_target(ctx: Any, *operands: np.ndarray) -> np.ndarray:
    """@Sharding: the value, unchanged (the sharding says where its blocks live)."""
    if len(operands) != 1:
        raise ctx.error("C1", f"@Sharding takes one operand, got {len(operands)}")
    _mhlo_sharding(ctx, ctx.op, "C1")
    return operands[0]


def _manual(s: HloSharding) -> bool:
    """``{manual}``, or a partially manual sharding whose data dims are whole (one tile each):
    ``{devices=[1,1,4,2]... last_tile_dims={manual, replicated}}``, as jax prints a shard_map
    over a subset of the mesh axes; the manual tiling is then the neighbouring @Sharding's."""
    if s.kind == "manual":
        return True
    if s.kind != "tiled" or "manual" not in s.subgroups:
        return False
    assert s.assignment is not None
    return all(n == 1 for n in s.assignment.shape[:s.assignment.ndim - len(s.subgroups)])


def _full_to_shard_tiling(ctx: Any) -> Tiling:
    own = _mhlo_sharding(ctx, ctx.op, "C1")
    if not _manual(own):
        raise UnsupportedError(f"custom_call @SPMDFullToShardShape with mhlo.sharding {own.text}: only "
                               "{manual} or a manual subgroup over whole data dims is supported", ctx.loc)
    s = _annotating(ctx, "C1")
    t = ctx.operand_types[0]
    assert isinstance(t, TensorType)
    return hlo_tiling(s, t.rank, ctx.frame.grid[1], "@Sharding")


def _full_to_shard(ctx: Any, *operands: np.ndarray) -> np.ndarray:
    """@SPMDFullToShardShape: this process's tile of the global operand."""
    tiling = _full_to_shard_tiling(ctx)
    x = operands[0]
    got, _ = shard_of(x, tiling, int(ctx.frame.partition_id), "custom_call @SPMDFullToShardShape (C2)")
    r = ctx.result_tensor(0)
    if got.shape != r.static_shape():
        raise ctx.error("C3", f"the shard of {list(x.shape)} under {tiling.what} is {list(got.shape)}, the "
                        f"result is {r}")
    return got


def _shard_to_full_tiling(ctx: Any) -> Tiling:
    s = _annotating(ctx, "C1")
    if not _manual(s):
        raise UnsupportedError(f"custom_call @SPMDShardToFullShape of a value annotated {s.text}: only "
                               "{manual} or a manual subgroup over whole data dims is supported", ctx.loc)
    own = _mhlo_sharding(ctx, ctx.op, "C1")
    r = ctx.result_tensor(0)
    return hlo_tiling(own, r.rank, ctx.frame.grid[1], "mhlo.sharding")


def _shard_to_full(ctx: Any, *operands: np.ndarray) -> Generator[Any, Any, np.ndarray]:
    """@SPMDShardToFullShape: the global value assembled from the processes' tiles (a
    rendezvous of the replica's processes)."""
    prev = getattr(ctx, "arrival", None)
    if prev is not None:
        return prev.result[0]
    tiling = _shard_to_full_tiling(ctx)
    x = operands[0]
    r = ctx.result_tensor(0)
    want = tuple(n * c for n, c in zip(x.shape, tiling.counts, strict=True))
    if want != r.static_shape():
        raise ctx.error("C3", f"{tiling.counts} tiles of {list(x.shape)} make {list(want)}, the result "
                        f"is {r}")
    group = _replica_processes(ctx)
    rv = Rendezvous(ctx.frame.process, ctx.op, (ctx.op.name, id(ctx.op), group), group, [x],
                    _compute_shard_to_full, ctx.frame.grid, ctx, list(ctx.operand_defs))
    arrival: Arrival = yield rv
    ctx.arrival = arrival
    ctx.members = arrival.members
    ctx.peer_defs = [d for m in arrival.members for d in m.operand_defs]
    return arrival.result[0]


def _compute_shard_to_full(members: list[Rendezvous]) -> list[Any]:
    ctx = members[0].ctx
    n_part = ctx.frame.grid[1]
    devices = [m.process % n_part for m in members]
    tiling = _shard_to_full_tiling(ctx)
    return [[assemble([x.operands[0] for x in members], devices, tiling, m.process % n_part,
                      "custom_call @SPMDShardToFullShape")[0]] for m in members]


def _custom_provenance(ctx: Any, inputs: list[Any], outputs: list[Any]) -> Any:
    target = ctx.attrs.call_target_name
    if target == "Sharding":
        return unary_copy_provenance(ctx, inputs, outputs)
    if target == "SPMDFullToShardShape":
        return _shard_provenance(ctx, inputs, outputs)
    return _assembled_provenance(ctx, outputs, [_shard_to_full_tiling(ctx)])


def _custom_explain(ctx: Any, inputs: list[Any], outputs: list[Any], result: int,
                    index: tuple[int, ...]) -> Explanation:
    target = ctx.attrs.call_target_name
    if target == "Sharding":
        hs = _mhlo_sharding(ctx, ctx.op, "C1")
        tiling = hlo_tiling(hs, np.ndim(outputs[0]), ctx.frame.grid[1], "@Sharding")
        return _explain_annotation(ctx, inputs, outputs, result, index, tiling)
    if target == "SPMDFullToShardShape":
        return _explain_shard(ctx, inputs, outputs, result, index)
    return _explain_assembled(ctx, outputs, result, index, [_shard_to_full_tiling(ctx)])


def _register_targets() -> None:
    from hlolab.ops.check import (
        CALL_TARGET_EXPLAIN,
        CALL_TARGET_PROVENANCE,
        CALL_TARGETS,
        ELEMENTWISE_TARGETS,
    )

    ELEMENTWISE_TARGETS.add("Sharding")

    for target, fn in (("Sharding", _sharding_target), ("SPMDFullToShardShape", _full_to_shard),
                       ("SPMDShardToFullShape", _shard_to_full)):
        CALL_TARGETS[target] = fn
        CALL_TARGET_PROVENANCE[target] = _custom_provenance
        CALL_TARGET_EXPLAIN[target] = _custom_explain


_register_targets()
