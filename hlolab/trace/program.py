"""Program provenance: per-op provenance composed along an executed trace.

A run is a dataflow graph. Its nodes are the executed op instances (and node
``ARGS_NODE``, the entry arguments); a *def* ``(node, result)`` names one
value. Each op instance knows the defs of its operands, so a question about
one element of one value is answered by propagating boolean masks:

- **backward** (``sources``): from a mask over the queried value, each op's
  ``Provenance.back`` gives masks over its operands, keyed by role, until
  the masks reach *leaves*: entry arguments and values made from nothing
  (constants, iota). Control-flow ops pass a result back to the value their
  body or branch returned (role ``copy``) and add the values that decided
  it (a while's conditions, an if's predicate) with role ``control``.
- **forward** (``targets``): the same with ``Provenance.fwd``.

The walk is breadth-first and visits every (value, element, role state)
once: the cost is about one ``back`` call per op instance on the way, never
one per element or per path, so a single-element query over a long program
stays fast. Breadth-first order also gives each source the *shortest* chain
of op instances that carries it (``path``).

Roles along a path (DESIGN.md, "Trace output"): a source's role is
``control`` or ``index_read`` if any hop has that role (the one nearest the
source when both occur), otherwise the role of the first hop, the op that
read the source.

``n_paths`` counts the chains of op instances from the source's value to
the queried value that carry dependence, counted per value (two elements
of one argument report the same number), exactly and without enumerating
them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from hlolab.interp.engine import Def, Frame
from hlolab.trace.provenance import Shape, check_index

CONTROL_ROLES = ("control", "index_read")


class Graph(Protocol):
    """What a trace needs from a run (``hlolab.session.Session`` provides it)."""

    def shape(self, d: Def) -> Shape | None: ...

    def is_leaf(self, d: Def) -> bool: ...

    def back(self, d: Def, mask: np.ndarray) -> list[tuple[Def, str, np.ndarray]]: ...

    def fwd(self, d: Def, mask: np.ndarray) -> list[tuple[Def, str, np.ndarray]]: ...

    def label(self, d: Def) -> str: ...

    def hop(self, node: int, result: int, role: str) -> Hop: ...


@dataclass(frozen=True)
class Hop:
    """One op instance on a path: the op, the value it made, and the role of the
    element it read."""

    node: int
    op: str
    name: str
    role: str
    line: int | None = None
    frame: Frame | None = field(default=None, compare=False)

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"op": self.op, "name": self.name, "role": self.role}
        if self.line is not None:
            out["line"] = self.line
        if self.frame is not None and self.frame.iteration is not None:
            out["iteration"] = self.frame.iteration
        return out


@dataclass
class Group:
    """Elements of one value that reach (or are reached) in one role by one shortest path.

    ``path`` runs from the source value to the queried value for a backward
    trace, from the queried value to the target for a forward one.
    """

    value: Def
    label: str
    role: str
    mask: np.ndarray
    path: tuple[Hop, ...]
    n_paths: int = 1

    @property
    def count(self) -> int:
        return int(self.mask.sum())


@dataclass
class Trace:
    """The answer to one query: the groups found, per (value, role)."""

    query: Def
    label: str
    index: tuple[int, ...]
    direction: str  # "back" | "fwd"
    groups: list[Group]
    what: str = ""  # what the queried value is ("= stablehlo.add (line 5)"), for the text form

    def __str__(self) -> str:
        """The text ``hlolab trace`` prints: values, roles, element boxes, one path each."""
        from hlolab.trace.format import format_trace

        return format_trace(None, self)

    def mask(self, label: str | None = None, role: str | None = None,
             value: Def | None = None) -> np.ndarray | None:
        """The union of the groups of one value (by label or def), optionally one role."""
        out = None
        for g in self.groups:
            if (label is not None and g.label != label) or (value is not None and g.value != value):
                continue
            if role is not None and g.role != role:
                continue
            out = g.mask.copy() if out is None else out | g.mask
        return out

    def elements(self) -> Iterator[tuple[str, tuple[int, ...], str, Group]]:
        """(label, index, role, group) once per (value, index, role)."""
        seen: dict[tuple[str, str], np.ndarray] = {}
        for g in sorted(self.groups, key=lambda g: len(g.path)):
            key = (g.label, g.role)
            new = g.mask if key not in seen else g.mask & ~seen[key]
            seen[key] = new if key not in seen else seen[key] | new
            for ix in np.argwhere(new):
                yield g.label, tuple(int(i) for i in ix), g.role, g

    def count(self) -> int:
        return sum(1 for _ in self.elements())

    def as_json(self, limit: int | None = None) -> dict[str, Any]:
        key = "sources" if self.direction == "back" else "targets"
        items = []
        for label, index, role, g in self.elements():
            if limit is not None and len(items) >= limit:
                break
            items.append({"value": label, "index": list(index), "role": role,
                          "path": [h.as_json() for h in g.path], "n_paths": g.n_paths})
        out: dict[str, Any] = {"value": self.label, "index": list(self.index), key: items}
        total = self.count()
        if len(items) < total:
            out["truncated"] = total - len(items)
        return out


def _one(shape: Shape, index: tuple[int, ...]) -> np.ndarray:
    m = np.zeros(shape, dtype=bool)
    m[index] = True
    return m


def _novel(seen: dict[Any, np.ndarray], key: Any, mask: np.ndarray) -> np.ndarray | None:
    """The part of ``mask`` not yet in ``seen[key]`` (recorded there), or None if nothing is new."""
    prev = seen.get(key)
    new = mask if prev is None else mask & ~prev
    if not new.any():
        return None
    seen[key] = new if prev is None else prev | new
    return new


def _count_paths(edges: dict[Def, set[Def]], target: Def) -> dict[Def, int]:
    """Number of chains from each def to ``target`` along ``edges`` (def -> next defs).

    Every edge goes from a lower node id to a higher one (an op instance runs
    after the values it reads), so one pass in decreasing node order is exact.
    """
    count: dict[Def, int] = {target: 1}
    for d in sorted(edges, key=lambda d: d[0], reverse=True):
        if d == target:
            continue
        count[d] = sum(count.get(n, 0) for n in edges[d])
    return count


def backward(graph: Graph, query: Def, index: tuple[int, ...]) -> Trace:
    """The leaf elements ``query[index]`` depends on, each with role and shortest path."""
    shape = graph.shape(query)
    index = check_index(shape, index, f"{graph.label(query)} index")
    assert shape is not None
    start = _one(shape, index)
    groups: list[Group] = []
    if graph.is_leaf(query):
        groups.append(Group(query, graph.label(query), "copy", start, ()))
        return Trace(query, graph.label(query), index, "back", groups)
    seen: dict[tuple[Def, str | None], np.ndarray] = {(query, None): start}
    found: dict[tuple[Def, str], np.ndarray] = {}
    up: dict[Def, set[Def]] = {}  # producer -> consumers that carry dependence
    frontier: list[tuple[Def, str | None, np.ndarray, tuple[Hop, ...]]] = [(query, None, start, ())]
    while frontier:
        nxt = []
        for d, ctl, mask, chain in frontier:
            for pdef, role, pmask in graph.back(d, mask):
                if not pmask.any():
                    continue
                up.setdefault(pdef, set()).add(d)
                hop = graph.hop(d[0], d[1], role)
                nctl = role if role in CONTROL_ROLES else ctl
                if graph.is_leaf(pdef):
                    srole = nctl or role
                    new = _novel(found, (pdef, srole), pmask)
                    if new is not None:
                        groups.append(Group(pdef, graph.label(pdef), srole, new, (hop,) + chain))
                    continue
                new = _novel(seen, (pdef, nctl), pmask)
                if new is not None:
                    nxt.append((pdef, nctl, new, (hop,) + chain))
        frontier = nxt
    counts = _count_paths(up, query)
    for g in groups:
        g.n_paths = counts.get(g.value, 1)
    return Trace(query, graph.label(query), index, "back", groups)


def forward(graph: Graph, start_def: Def, index: tuple[int, ...]) -> Trace:
    """Every value element that ``start_def[index]`` flows into, with role and shortest path."""
    shape = graph.shape(start_def)
    index = check_index(shape, index, f"{graph.label(start_def)} index")
    assert shape is not None
    start = _one(shape, index)
    groups: list[Group] = []
    seen: dict[tuple[Def, str], np.ndarray] = {}
    down: dict[Def, set[Def]] = {}  # consumer -> producers (reversed edges, for counting)
    frontier: list[tuple[Def, str | None, np.ndarray, tuple[Hop, ...]]] = [(start_def, None, start, ())]
    while frontier:
        nxt = []
        for d, state, mask, chain in frontier:
            for cdef, role, cmask in graph.fwd(d, mask):
                if not cmask.any():
                    continue
                down.setdefault(d, set()).add(cdef)
                # the first hop's role, until a control / index_read hop decides it
                nstate = role if state is None or (state not in CONTROL_ROLES and role in CONTROL_ROLES) \
                    else state
                new = _novel(seen, (cdef, nstate), cmask)
                if new is None:
                    continue
                path = chain + (graph.hop(cdef[0], cdef[1], role),)
                groups.append(Group(cdef, graph.label(cdef), nstate, new, path))
                nxt.append((cdef, nstate, new, path))
        frontier = nxt
    # chains from the start to each value: count on the reversed graph
    rev: dict[Def, set[Def]] = {}
    for a, bs in down.items():
        for b in bs:
            rev.setdefault(b, set()).add(a)
    counts: dict[Def, int] = {start_def: 1}
    for d in sorted(rev, key=lambda d: d[0]):
        counts[d] = sum(counts.get(p, 0) for p in rev[d])
    for g in groups:
        g.n_paths = counts.get(g.value, 1)
    return Trace(start_def, graph.label(start_def), index, "fwd", groups)
