"""The program view: the entry function as a layered dependency graph.

Ops are boxes (``%name = op`` and the result type), values are edges (one per
use, labelled ``%name · shape``), entry arguments sit at the top and the
return at the bottom. A while/if/call is one box: its body is not expanded,
and values its body captures from outside enter it as dashed edges. With a
``Trace`` the chains of op instances that carry the traced element are
highlighted: the boxes on the paths, the edges between them (thick, in the
role the next op reads them in), and the source arguments/constants with how
many of their elements are read and in which role.

Constants are small boxes of their own (not folded into their consumer): a
constant can be a traced source (an init value, a padding value) and then
needs a box that says so.

``program_layout`` is pure geometry (inches, y downward, no matplotlib), so
it can be tested and reused (the TUI); ``draw_program`` draws it. The layout
is a small Sugiyama: layers by longest path from the arguments (a node with
no operands sits just above its first consumer), long edges broken by
virtual nodes, crossing reduction by barycenter sweeps, x by averaging
neighbours under the no-overlap constraint.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from hlolab.errors import ExecutionError
from hlolab.interp.engine import ARGS_NODE, Def, Frame, OpRun
from hlolab.render import style

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from hlolab.session import Session
    from hlolab.trace.program import Trace

# geometry, in inches (the figure is drawn at this scale, so text sizes are exact)
FONT = 8.0          # box title, points
FONT_SMALL = 6.5    # type line, edge labels, line numbers
CHAR_W = 0.6 / 72   # DejaVu Sans Mono advance per point of font size, inches
BOX_H = 0.46
CONST_H = 0.36
PAD_X = 0.14        # inside a box, each side
H_GAP = 0.3         # between boxes of one layer
LAYER_GAP = 0.62    # between layers (edge labels live here)
VIRTUAL_W = 0.08    # width a long edge takes in a layer it passes through
MARGIN = 0.3
MAX_TEXT = 44       # characters of a box line before eliding

BOX_EDGE = style.CELL_EDGE


@dataclass
class Node:
    """One box: an op instance (``op``), constant (``const``), entry argument
    (``arg``), the ``return``, a run of collapsed ops (``collapsed``) or a
    ``virtual`` point a long edge passes through (not drawn)."""

    key: str
    kind: str
    text: str = ""
    sub: str = ""          # second line: result type, or the source count and role
    line: int | None = None
    events: list[int] = field(default_factory=list)  # op instance ids shown by this box
    layer: int = 0
    x: float = 0.0          # top-left corner, inches, y downward
    y: float = 0.0
    w: float = VIRTUAL_W
    h: float = 0.0
    role: str | None = None  # a traced source: the role it is read in (its fill)
    on_path: bool = False
    query: bool = False

    @property
    def center(self) -> tuple[float, float]:
        return self.x + self.w / 2, self.y + self.h / 2


@dataclass
class Edge:
    """One use of a value: ``src`` box -> ``dst`` box. ``kind``: ``operand`` (``index``
    is the operand number), ``captured`` (read inside ``dst``'s body) or ``result``
    (``index`` is the result number of the return)."""

    src: str
    dst: str
    value: Def
    index: int
    kind: str
    label: str
    role: str | None = None  # on a traced path: the role the consumer reads it in
    points: list[tuple[float, float]] = field(default_factory=list)
    label_xy: tuple[float, float] | None = None


@dataclass
class ProgramLayout:
    nodes: list[Node]
    edges: list[Edge]
    width: float = 0.0
    height: float = 0.0
    caption: str = ""
    roles: list[str] = field(default_factory=list)  # roles present in the highlight, legend order
    key_of: dict[int, str] = field(default_factory=dict)  # op instance id -> its box
    top: float = 0.0  # y of the first layer (room for title, caption, legend above)

    def node(self, key: str) -> Node:
        for n in self.nodes:
            if n.key == key:
                return n
        raise KeyError(key)

    def node_box(self, key: str) -> tuple[float, float, float, float]:
        """(x, y, w, h) of a box in inches, y downward from the figure's top."""
        n = self.node(key)
        return n.x, n.y, n.w, n.h

    def key_of_def(self, d: Def) -> str:
        """The box that shows the value ``d``."""
        return f"arg{d[1]}" if d[0] == ARGS_NODE else self.key_of[d[0]]

    @property
    def highlighted(self) -> set[str]:
        """The boxes of op instances on a traced path."""
        return {n.key for n in self.nodes if n.on_path}

    @property
    def shown(self) -> list[Node]:
        return [n for n in self.nodes if n.kind != "virtual"]


# --- text ----------------------------------------------------------------------------------------

def _short(op_name: str) -> str:
    return op_name.split(".", 1)[1] if op_name.startswith(("stablehlo.", "mhlo.", "chlo.", "func.")) \
        else op_name


def _elide(s: str, n: int = MAX_TEXT) -> str:
    return s if len(s) <= n else s[:n - 1] + "…"


def _shape_text(t: Any) -> str:
    shape = getattr(t, "shape", None)
    if shape is None:
        return str(t)
    return "x".join("?" if d is None else str(d) for d in shape) if shape else "scalar"


def _const_text(ev: OpRun) -> str:
    """A constant's value when it is one number (a splat), else its type."""
    x = ev.outputs[0] if ev.outputs else None
    if isinstance(x, np.ndarray) and x.size and x.size <= 1 << 20:
        flat = x.reshape(-1)
        if bool((flat == flat[0]).all()) or x.size == 1:
            from hlolab.trace.explain import format_value

            return _elide(format_value(flat[0]), 14)
    return ""


def _text_w(text: str, size: float) -> float:
    return len(text) * size * CHAR_W


# --- graph ---------------------------------------------------------------------------------------

def _top_path(frame: Frame) -> tuple[int, ...]:
    """The entry-body op an event runs in (itself at depth 0)."""
    f = frame
    while f.depth > 0 and f.parent is not None:
        f = f.parent
    return f.path[:1]


class _Builder:
    def __init__(self, session: Session, trace: Trace | None, max_nodes: int):
        self.s = session
        self.trace = trace
        self.max_nodes = max_nodes
        self.nodes: dict[str, Node] = {}
        self.edges: list[Edge] = []
        self.key_of: dict[int, str] = {}

    # nodes and edges of the whole entry function
    def build_graph(self) -> None:
        s = self.s
        for k, a in enumerate(s.func.args):
            self.nodes[f"arg{k}"] = Node(f"arg{k}", "arg", _elide(f"{a.name} : {a.type}"), h=BOX_H)
        top: dict[tuple[int, ...], OpRun] = {}
        nested: list[OpRun] = []
        for ev in s.history:
            if ev.frame.depth == 0:
                top[ev.frame.path] = ev
            else:
                nested.append(ev)
        for path in sorted(top):
            self._op_node(top[path])
        for ev in nested:  # body ops show as their enclosing box (once it has run)
            outer = top.get(_top_path(ev.frame))
            if outer is not None:
                self.key_of[ev.id] = self.key_of[outer.id]
        for path in sorted(top):
            ev = top[path]
            for i, d in enumerate(ev.operand_defs):
                if d is not None and self._known(d):
                    self.edges.append(Edge(self._key(d), self.key_of[ev.id], d, i, "operand", self._label(d)))
        # a loop-carried start value is an operand already; other values a body reads are captured
        seen: set[tuple[Def, str]] = {(e.value, e.dst) for e in self.edges}
        for ev in nested:
            dst = self.key_of.get(ev.id)
            for d in ev.operand_defs:
                if dst is None or d is None or not self._known(d) or self._key(d) == dst or (d, dst) in seen:
                    continue
                seen.add((d, dst))
                self.edges.append(Edge(self._key(d), dst, d, len(self.edges), "captured", self._label(d)))
        ret = s.func.body.blocks[0].ops[-1] if s.func.body is not None and s.func.body.blocks else None
        names = ", ".join(v.name for v in ret.operands) if ret is not None else ""
        self.nodes["return"] = Node("return", "return", _elide(f"return {names}".strip()),
                                    line=ret.loc.line if ret is not None and ret.loc else None,
                                    sub=_elide(", ".join(str(t) for t in s.func.result_types)), h=BOX_H)
        for r, d in enumerate(s.result_defs()):
            if d is not None and self._known(d):
                self.edges.append(Edge(self._key(d), "return", d, r, "result", self._label(d)))

    def _op_node(self, ev: OpRun) -> None:
        key = f"op{ev.frame.path[0]}"
        names = ", ".join(v.name for v in ev.op.results)
        short = _short(ev.op.name)
        line = ev.op.loc.line if ev.op.loc else None
        types = ", ".join(str(v.type) for v in ev.op.results)
        if not ev.op.operands and ev.result_defs is None and len(ev.op.results) == 1:
            value = _const_text(ev) if ev.op.name.endswith("constant") else ""
            text = f"{names} = {short}" + (f" {value}" if value else "")
            node = Node(key, "const", _elide(text), _elide(types), line, [ev.id], h=CONST_H)
        else:
            text = f"{names} = {short}" if names else short
            node = Node(key, "op", _elide(text), _elide(types), line, [ev.id], h=BOX_H)
        self.nodes[key] = node
        self.key_of[ev.id] = key

    def _known(self, d: Def) -> bool:
        return d[0] == ARGS_NODE and f"arg{d[1]}" in self.nodes or d[0] in self.key_of

    def _key(self, d: Def) -> str:
        return f"arg{d[1]}" if d[0] == ARGS_NODE else self.key_of[d[0]]

    def _label(self, d: Def) -> str:
        if d[0] == ARGS_NODE:
            t = self.s.func.args[d[1]].type
        else:
            ev = self.s.instance(d[0])
            t = ev.op.results[d[1]].type if d[1] < len(ev.op.results) else ""
        return f"{self.s.label(d)} · {_shape_text(t)}"

    # the trace: which boxes and edges it runs through
    def apply_trace(self) -> list[str]:
        t = self.trace
        if t is None:
            return []
        roles: set[str] = set()
        on_edge: dict[tuple[str, str, str], str] = {}  # (src, dst, value label) -> role
        for g in t.groups:
            for h in g.path:
                if h.node not in self.key_of:
                    raise ExecutionError(f"the trace names op instance #{h.node}, which this session "
                                         "has not run (a trace of another session?)")
            start = g.value if t.direction == "back" else t.query
            prev_key, prev_name = self._key(start) if self._known(start) else None, self.s.label(start)
            for h in g.path:
                key = self.key_of[h.node]
                self.nodes[key].on_path = True
                if prev_key is not None and prev_key != key:
                    k = (prev_key, key, prev_name)
                    on_edge[k] = _stronger(on_edge.get(k), h.role)
                    roles.add(h.role)
                prev_key, prev_name = key, h.name
        for e in self.edges:
            e.role = on_edge.get((e.src, e.dst, self.s.label(e.value)))
        if t.direction == "back":
            roles |= self._mark_sources()
        if self._known(t.query):
            self.nodes[self._key(t.query)].query = True
        return [r for r in style.ROLE_ORDER if r in roles and r != "result"]

    def _mark_sources(self) -> set[str]:
        """Source arguments / constants: fill by role, say how many elements are read."""
        assert self.trace is not None
        by_value: dict[Def, list[Any]] = {}
        for g in self.trace.groups:
            if self._known(g.value) and self.nodes[self._key(g.value)].kind in ("arg", "const"):
                by_value.setdefault(g.value, []).append(g)
        for d, groups in by_value.items():
            node = self.nodes[self._key(d)]
            union = np.zeros(groups[0].mask.shape, bool)
            for g in groups:
                union |= g.mask
            rs = [r for r in style.ROLE_ORDER if r in {g.role for g in groups}]
            node.role = rs[0]
            node.sub = _elide(f"{int(union.sum())} of {union.size} · {', '.join(rs)}")
        return {g.role for gs in by_value.values() for g in gs}

    # too many boxes: collapse runs of ops that no path goes through
    def collapse(self) -> None:
        ops = [n for n in self.nodes.values() if n.kind in ("op", "const")]
        if len(self.nodes) <= self.max_nodes:
            return
        keep = {n.key for n in ops if n.on_path or n.role is not None or n.query}
        runs: list[list[Node]] = [[]]
        for n in sorted(ops, key=lambda n: int(n.key[2:])):
            if n.key in keep:
                runs.append([])
            else:
                runs[-1].append(n)
        runs = [r for r in runs if r]
        budget = self.max_nodes - (len(self.nodes) - sum(len(r) for r in runs)) - len(runs)
        heads = [0] * len(runs)  # ops shown before / after the collapsed middle of each run
        tails = [0] * len(runs)
        for i in sorted(range(len(runs)), key=lambda i: len(runs[i])):  # short runs in full first
            if len(runs[i]) - 1 <= budget:
                budget -= len(runs[i]) - 1
                heads[i] = len(runs[i])
        grew = True
        while budget > 0 and grew:  # the rest of the budget: the ends of the long runs
            grew = False
            for i, r in enumerate(runs):
                if budget > 0 and heads[i] + tails[i] + 1 < len(r):
                    if heads[i] <= tails[i]:
                        heads[i] += 1
                    else:
                        tails[i] += 1
                    budget -= 1
                    grew = True
        for i, r in enumerate(runs):
            middle = r[heads[i]:len(r) - tails[i]]
            if len(middle) > 1:  # one op is one box either way: show it
                self._merge(middle)

    def _merge(self, members: list[Node]) -> None:
        key = f"ops{members[0].key[2:]}-{members[-1].key[2:]}"
        lines = [n.line for n in members if n.line is not None]
        sub = f"lines {min(lines)}–{max(lines)}" if lines else ""
        box = Node(key, "collapsed", f"… {len(members)} ops", sub, None,
                   [e for n in members for e in n.events], h=BOX_H)
        gone = {n.key for n in members}
        for n in members:
            del self.nodes[n.key]
        self.nodes[key] = box
        for ev, k in self.key_of.items():
            if k in gone:
                self.key_of[ev] = key
        merged: dict[tuple[str, str, Def], Edge] = {}
        for e in self.edges:
            e.src = key if e.src in gone else e.src
            e.dst = key if e.dst in gone else e.dst
            if e.src != e.dst:
                merged.setdefault((e.src, e.dst, e.value), e)
        self.edges = list(merged.values())


def _stronger(a: str | None, b: str) -> str:
    """Of two roles on one edge, the more specific (style.ROLE_ORDER)."""
    if a is None:
        return b
    order = {r: i for i, r in enumerate(style.ROLE_ORDER)}
    return a if order.get(a, 99) <= order.get(b, 99) else b


# --- layout --------------------------------------------------------------------------------------

def _layers(nodes: dict[str, Node], edges: list[Edge]) -> None:
    """Longest path from the arguments; operand-less nodes just above their first consumer."""
    preds: dict[str, list[str]] = {k: [] for k in nodes}
    succs: dict[str, list[str]] = {k: [] for k in nodes}
    for e in edges:
        preds[e.dst].append(e.src)
        succs[e.src].append(e.dst)
    order = _topo(nodes, succs, preds)
    for k in order:
        n = nodes[k]
        n.layer = 0 if n.kind == "arg" or not preds[k] else 1 + max(nodes[p].layer for p in preds[k])
    for k in reversed(order):  # sink the operand-less ops (constants) next to their consumers
        n = nodes[k]
        if n.kind not in ("arg", "return") and not preds[k]:
            n.layer = max(0, min((nodes[c].layer for c in succs[k]), default=1) - 1)
    last = max((n.layer for k, n in nodes.items() if k != "return"), default=0)
    nodes["return"].layer = last + 1


def _topo(nodes: dict[str, Node], succs: dict[str, list[str]], preds: dict[str, list[str]]) -> list[str]:
    indeg = {k: len(v) for k, v in preds.items()}
    ready = [k for k in nodes if indeg[k] == 0]
    out: list[str] = []
    while ready:
        k = ready.pop(0)
        out.append(k)
        for c in succs[k]:
            indeg[c] -= 1
            if indeg[c] == 0:
                ready.append(c)
    if len(out) != len(nodes):
        raise ExecutionError("internal error: the program graph has a cycle")
    return out


def _split_long_edges(nodes: dict[str, Node], edges: list[Edge]) -> dict[int, list[str]]:
    """Virtual nodes where an edge crosses a layer; returns per edge its chain of keys."""
    chains: dict[int, list[str]] = {}
    for i, e in enumerate(edges):
        a, b = nodes[e.src].layer, nodes[e.dst].layer
        chain = [e.src]
        for layer in range(a + 1, b):
            key = f"v{i}.{layer}"
            nodes[key] = Node(key, "virtual", layer=layer)
            chain.append(key)
        chains[i] = chain + [e.dst]
    return chains


def _crossings(rows: list[list[str]], links: list[tuple[str, str]], pos: dict[str, int],
               layer: dict[str, int]) -> int:
    total = 0
    for lay in range(len(rows) - 1):
        seg = np.array([(pos[a], pos[b]) for a, b in links if layer[a] == lay], dtype=np.int64)
        if len(seg) < 2:
            continue
        da = seg[:, 0][:, None] - seg[:, 0][None, :]
        db = seg[:, 1][:, None] - seg[:, 1][None, :]
        total += int(((da * db) < 0).sum()) // 2
    return total


def _order(nodes: dict[str, Node], chains: dict[int, list[str]]) -> list[list[str]]:
    """Nodes per layer, ordered by barycenter sweeps (the order with the fewest crossings)."""
    n_layers = max(n.layer for n in nodes.values()) + 1
    rows: list[list[str]] = [[] for _ in range(n_layers)]
    for k, n in nodes.items():  # insertion order: arguments, ops in program order, virtuals
        rows[n.layer].append(k)
    links = sorted({(c[j], c[j + 1]) for c in chains.values() for j in range(len(c) - 1)})
    up: dict[str, list[str]] = {k: [] for k in nodes}
    down: dict[str, list[str]] = {k: [] for k in nodes}
    for a, b in links:
        down[a].append(b)
        up[b].append(a)
    layer = {k: n.layer for k, n in nodes.items()}

    def positions(rs: list[list[str]]) -> dict[str, int]:
        return {k: i for r in rs for i, k in enumerate(r)}

    best = [list(r) for r in rows]
    best_x = _crossings(rows, links, positions(rows), layer)
    for sweep in range(8):
        downward = sweep % 2 == 0
        pos = positions(rows)
        for lay in (range(1, n_layers) if downward else range(n_layers - 2, -1, -1)):
            nb = up if downward else down
            bary = {k: (float(np.mean([pos[m] for m in nb[k]])) if nb[k] else float(pos[k]))
                    for k in rows[lay]}
            rows[lay].sort(key=lambda k: (bary[k], pos[k]))
            pos.update({k: i for i, k in enumerate(rows[lay])})
        crossings = _crossings(rows, links, pos, layer)
        if crossings < best_x:
            best, best_x = [list(r) for r in rows], crossings
    return best


def _pack(desired: np.ndarray, widths: np.ndarray) -> np.ndarray:
    """Centres as close to ``desired`` as the no-overlap constraint allows (order kept)."""
    n = len(desired)
    if n == 0:
        return desired
    sep = (widths[:-1] + widths[1:]) / 2 + H_GAP
    left = desired.astype(float).copy()
    for i in range(1, n):
        left[i] = max(left[i], left[i - 1] + sep[i - 1])
    right = desired.astype(float).copy()
    for i in range(n - 2, -1, -1):
        right[i] = min(right[i], right[i + 1] - sep[i])
    return (left + right) / 2  # both satisfy the separations, so their mean does too


def _place_x(nodes: dict[str, Node], rows: list[list[str]], chains: dict[int, list[str]]) -> None:
    nb: dict[str, list[str]] = {k: [] for k in nodes}
    for c in chains.values():
        for a, b in zip(c, c[1:]):
            nb[a].append(b)
            nb[b].append(a)
    cx: dict[str, float] = {}
    for r in rows:  # start packed and centred
        w = np.array([nodes[k].w for k in r])
        xs = _pack(np.zeros(len(r)), w)
        cx.update(zip(r, xs))
    for sweep in range(12):
        order = rows if sweep % 2 == 0 else rows[::-1]
        for r in order:
            want = np.array([float(np.mean([cx[m] for m in nb[k]])) if nb[k] else cx[k] for k in r])
            xs = _pack(want, np.array([nodes[k].w for k in r]))
            cx.update(zip(r, xs))
    lo = min(cx[k] - nodes[k].w / 2 for k in nodes)
    for k, n in nodes.items():
        n.x = float(cx[k] - n.w / 2 - lo + MARGIN)


def _place_y(nodes: dict[str, Node], rows: list[list[str]], top: float) -> list[float]:
    """Tops of the layers; a box is vertically centred in its layer's band."""
    tops, y = [], top
    for r in rows:
        band = max((nodes[k].h for k in r), default=0.0) or BOX_H
        for k in r:
            n = nodes[k]
            n.y = y + (band - n.h) / 2 if n.kind != "virtual" else y
            if n.kind == "virtual":
                n.h = band
        tops.append(y)
        y += band + LAYER_GAP
    return tops


def _route(nodes: dict[str, Node], edges: list[Edge], chains: dict[int, list[str]]) -> None:
    """Polyline of each edge: source bottom, through its virtual nodes, destination top port."""
    n_in: dict[str, int] = {}
    for e in edges:
        n_in[e.dst] = max(n_in.get(e.dst, 0), e.index + 1 if e.kind != "captured" else 0)
    captured = {k: [e for e in edges if e.dst == k and e.kind == "captured"] for k in nodes}
    for i, e in enumerate(edges):
        src, dst = nodes[e.src], nodes[e.dst]
        if e.kind == "captured":
            slots = n_in.get(e.dst, 0) + len(captured[e.dst])
            port = n_in.get(e.dst, 0) + captured[e.dst].index(e)
        else:
            slots, port = max(n_in.get(e.dst, 1), 1) + len(captured[e.dst]), e.index
        pts = [(src.x + src.w / 2, src.y + src.h)]
        for k in chains[i][1:-1]:
            v = nodes[k]
            pts += [(v.x + v.w / 2, v.y), (v.x + v.w / 2, v.y + v.h)]
        pts.append((dst.x + dst.w * (port + 1) / (slots + 1), dst.y))
        e.points = pts


def _place_labels(edges: list[Edge]) -> None:
    """Each label on its edge's last segment (in a gap between layers), staggered so
    labels in one gap do not overlap."""
    placed: list[tuple[float, float, float, float]] = []
    for e in sorted(edges, key=lambda e: (e.points[-1][1], e.points[-1][0])):
        (x0, y0), (x1, y1) = e.points[-2], e.points[-1]
        w, h = _text_w(e.label, FONT_SMALL) + 0.14, FONT_SMALL / 72 + 0.06
        choice = None
        for f in (0.5, 0.3, 0.7, 0.15, 0.85):
            y = y1 - LAYER_GAP * (1 - f) if y1 - y0 > LAYER_GAP else y0 + (y1 - y0) * f
            t = (y - y0) / (y1 - y0) if y1 != y0 else 0.0
            x = x0 + (x1 - x0) * t
            rect = (x - w / 2, y - h / 2, x + w / 2, y + h / 2)
            if not any(rect[0] < r[2] and r[0] < rect[2] and rect[1] < r[3] and r[1] < rect[3]
                       for r in placed):
                choice = (x, y, rect)
                break
        if choice is None:
            e.label_xy = None  # no room: the box above already names the value
            continue
        placed.append(choice[2])
        e.label_xy = (choice[0], choice[1])


def _size(n: Node) -> None:
    if n.kind == "virtual":
        return
    size = FONT if n.kind != "const" else FONT_SMALL + 0.5
    line = _text_w(f"L{n.line}", FONT_SMALL) + 0.08 if n.line is not None else 0.0
    n.w = max(_text_w(n.text, size) + 2 * line, _text_w(n.sub, FONT_SMALL)) + 2 * PAD_X


def _legend_items(roles: list[str], trace: Trace | None) -> list[tuple[str, str, str]]:
    """(fill, edge, text) per legend entry."""
    if trace is None:
        return []
    items = [(style.PATH_FILL, style.ACCENT, "op on a traced path"),
             ("#FFFFFF", style.ROLE_COLORS["result"], "queried value")]
    by_color: dict[str, list[str]] = {}  # roles sharing a colour share an entry
    for r in roles:
        by_color.setdefault(style.role_color(r), []).append(style.ROLE_LABELS.get(r, r))
    return items + [(c, c, " / ".join(labels)) for c, labels in by_color.items()]


def _caption(session: Session, trace: Trace | None) -> str:
    if trace is None:
        return f"@{session.func.name}"
    word = "sources" if trace.direction == "back" else "targets"
    return f"{word} of {trace.label}[{', '.join(str(i) for i in trace.index)}]"


def program_layout(session: Session, trace: Trace | None = None, max_nodes: int = 60,
                   title: str = "") -> ProgramLayout:
    """The geometry of the program view of ``session``'s run so far (see the module doc)."""
    if max_nodes < 1:
        raise ExecutionError(f"max_nodes must be positive, got {max_nodes}")
    b = _Builder(session, trace, max_nodes)
    b.build_graph()
    roles = b.apply_trace()
    b.collapse()
    nodes, edges = b.nodes, b.edges
    for n in nodes.values():
        _size(n)
    _layers(nodes, edges)
    chains = _split_long_edges(nodes, edges)
    rows = _order(nodes, chains)
    _place_x(nodes, rows, chains)
    caption = _caption(session, trace)
    legend = _legend_items(roles, trace)
    head = MARGIN + (0.3 if title else 0.0) + 0.28 + (0.3 if legend else 0.0)
    _place_y(nodes, rows, head + 0.15)
    _route(nodes, edges, chains)
    _place_labels(edges)
    width = max(n.x + n.w for n in nodes.values()) + MARGIN
    legend_w = sum(_text_w(t, FONT) + 0.45 for _, _, t in legend) + 2 * MARGIN
    width = max(width, legend_w, _text_w(caption, 9) + 2 * MARGIN, _text_w(title, 11) + 2 * MARGIN)
    height = max(n.y + n.h for n in nodes.values()) + MARGIN
    ordered = [nodes[k] for r in rows for k in r]
    return ProgramLayout(ordered, edges, width, height, caption, roles, dict(b.key_of), head + 0.15)


# --- drawing -------------------------------------------------------------------------------------

def draw_program(session: Session, trace: Trace | None = None, *, title: str = "",
                 max_nodes: int = 60) -> Figure:
    """The program view of ``session`` (after ``run()``), with ``trace`` highlighted."""
    lay = program_layout(session, trace, max_nodes, title)
    return draw_layout(lay, trace, title=title)


def draw_layout(lay: ProgramLayout, trace: Trace | None = None, *, title: str = "") -> Figure:
    """Draw a ``ProgramLayout`` (1 axes unit = 1 inch, y downward)."""
    import matplotlib.pyplot as plt

    with style.styled():
        fig = plt.figure(figsize=(lay.width, lay.height))
        ax = fig.add_axes((0, 0, 1, 1))
        ax.set_xlim(0, lay.width)
        ax.set_ylim(lay.height, 0)
        ax.set_axis_off()
        y = MARGIN
        if title:
            ax.text(MARGIN, y, title, fontsize=11, fontweight="bold", va="top", ha="left")
            y += 0.3
        ax.text(MARGIN, y, lay.caption, fontsize=9, va="top", ha="left", color="#222222")
        y += 0.28
        _draw_legend(ax, _legend_items(lay.roles, trace), y)
        for e in sorted(lay.edges, key=lambda e: e.role is not None):  # traced edges on top
            _draw_edge(ax, e)
        for n in lay.shown:
            _draw_node(ax, n)
        for e in lay.edges:
            if e.label_xy is not None:
                ax.text(*e.label_xy, e.label, fontsize=FONT_SMALL, family="DejaVu Sans Mono", ha="center",
                        va="center", color="#555555", zorder=4,
                        bbox={"boxstyle": "square,pad=0.08", "fc": "white", "ec": "none", "alpha": 0.85})
    return fig


def _draw_legend(ax: Any, items: list[tuple[str, str, str]], y: float) -> None:
    from matplotlib.patches import Rectangle

    x = MARGIN
    for fill, edge, text in items:
        ax.add_patch(Rectangle((x, y + 0.02), 0.22, 0.15, fc=fill, ec=edge, lw=1.6))
        ax.text(x + 0.3, y + 0.095, text, fontsize=FONT, va="center", ha="left")
        x += 0.45 + _text_w(text, FONT)


def _draw_edge(ax: Any, e: Edge) -> None:
    xs, ys = zip(*e.points)
    color = style.role_color(e.role) if e.role is not None else "#A0A0A0"
    lw = 2.6 if e.role is not None else 0.9
    ls = (0, (3, 2)) if e.kind == "captured" else "solid"
    z = 2 if e.role is not None else 1
    ax.plot(xs[:-1] + (xs[-1],), ys[:-1] + (ys[-1] - 0.05,), color=color, lw=lw, ls=ls, zorder=z,
            solid_capstyle="butt")
    ax.annotate("", xy=e.points[-1], xytext=(xs[-1], ys[-1] - 0.12), zorder=z,
                arrowprops={"arrowstyle": "-|>", "color": color, "lw": lw * 0.6, "shrinkA": 0,
                            "shrinkB": 0, "mutation_scale": 8 + 2 * lw})


def _draw_node(ax: Any, n: Node) -> None:
    from matplotlib.patches import FancyBboxPatch

    fill, edge, lw = "#FFFFFF", BOX_EDGE, 0.9
    if n.kind == "collapsed":
        fill = style.PADDING_FILL
    if n.on_path:
        fill, edge, lw = style.PATH_FILL, style.ACCENT, 1.6
    if n.role is not None:
        fill, edge, lw = style.role_color(n.role), style.ACCENT, 1.6
    if n.query:
        edge, lw = style.ROLE_COLORS["result"], 3.0
    ls = (0, (3, 2)) if n.kind == "collapsed" else "solid"
    rnd = 0.12 if n.kind in ("arg", "return") else 0.04
    ax.add_patch(FancyBboxPatch((n.x, n.y), n.w, n.h, boxstyle=f"round,pad=0,rounding_size={rnd}",
                                fc=fill, ec=edge, lw=lw, ls=ls, zorder=3))
    ink = style.text_color(fill)
    cx = n.x + n.w / 2
    size = FONT if n.kind != "const" else FONT_SMALL + 0.5
    one = not n.sub
    ax.text(cx, n.y + (n.h / 2 if one else n.h * 0.34), n.text, fontsize=size, family="DejaVu Sans Mono",
            ha="center", va="center", color=ink, zorder=5,
            fontweight="bold" if n.kind in ("op", "arg") else "normal")
    if n.sub:
        ax.text(cx, n.y + n.h * 0.72, n.sub, fontsize=FONT_SMALL, family="DejaVu Sans Mono", ha="center",
                va="center", color=ink if n.role is not None else "#555555", zorder=5)
    if n.line is not None:
        ax.text(n.x + n.w - 0.05, n.y + 0.04, f"L{n.line}", fontsize=FONT_SMALL - 1, ha="right", va="top",
                color=style.MUTED_TEXT if n.role is None else ink, zorder=5)
