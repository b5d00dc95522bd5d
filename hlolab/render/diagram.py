"""Static diagrams: one op instance, one or more chosen result elements, the
cells they derive from (by role), arrows to them and the derivation.

Everything comes from the op's provenance (through ``OpView``) and its
``explain()``; no op is special-cased here:

- one element: sources painted by role, one arrow per (tensor, role) group, a
  legend of the roles present and the explanation as a step table (name =
  value, the formula, ``dim_roles`` colour-coded, clamps marked);
- several elements: each element and its sources in its own colour with a
  frame per source group, a table of the steps' values per element, and one
  derivation line per element (a dot product written from the window fans
  when two fans pair up, else the explanation's last formula).
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hlolab.messages import Msg, text
from hlolab.render import style
from hlolab.render.layout import Board
from hlolab.render.opview import CellGroup, OpView
from hlolab.trace.explain import DimRole, Explanation, Step, format_value, step_parts
from hlolab.trace.provenance import value_shape
from hlolab.trace.roles import DIM_GROUP_COLORS, dim_color

EXPLAIN_WIDTH = 64    # characters per explanation line
EXPLAIN_LINES = 46    # lines of explanation before eliding
MONO = "DejaVu Sans Mono"
CHAR_PX = 6           # advance of one monospace character at the style's 100 dpi
# the size whose DejaVu Sans Mono advance (1233/2048 em) is exactly CHAR_PX: Agg rounds advances to
# whole pixels, so any other size drifts and coloured segments of one line would gap or overlap
FONT_SIZE = CHAR_PX * 72 / (100 * 1233 / 2048)
LINE_SPACING = 1.4
MAX_TERMS = 8         # products written out in a dot-product line
MAX_ELEMENTS = len(style.ELEMENT_COLORS)
INK = "#222222"

CLAMP = DIM_GROUP_COLORS["clamped"]

Segment = tuple[str, str]   # (text, colour)
Line = list[Segment]


@dataclass
class Rendered:
    fig: Any
    board: Board
    view: OpView
    elements: list[tuple[int, tuple[int, ...]]]
    groups: list[list[CellGroup]] = field(default_factory=list)  # per element, the painted cells
    text: str = ""  # the derivation as drawn (plain text), for checks and the CLI


# --- choosing and explaining ----------------------------------------------------------------

def default_element(event: Any) -> tuple[int, tuple[int, ...]]:
    """The middle element of the first tensor result."""
    for r, v in enumerate(event.outputs):
        if isinstance(v, np.ndarray) and v.size:
            return r, tuple(int(d) // 2 for d in v.shape)
    return 0, ()


def explanation_of(event: Any, result: int, index: tuple[int, ...]) -> Explanation | None:
    """The op's explanation of one element, or None when it has none."""
    from hlolab.errors import HloLabError
    from hlolab.ops.registry import lookup

    try:
        opdef = lookup(event.op.name)
    except HloLabError:
        return None
    if opdef is None or getattr(opdef, "explain", None) is None:
        return None
    try:
        return opdef.explain(event.call, event.inputs, event.outputs, result, index)
    except (HloLabError, NotImplementedError):
        return None


def _check_elements(event: Any, elements: Sequence[tuple[int, Sequence[int]]]
                    ) -> list[tuple[int, tuple[int, ...]]]:
    """Normalise the chosen elements; a bad one is a clean ExecutionError."""
    from hlolab.errors import ExecutionError

    chosen: list[tuple[int, tuple[int, ...]]] = []
    for r, idx in elements:
        r = int(r)
        idx = tuple(int(i) for i in idx)
        shape = value_shape(event.outputs[r]) if 0 <= r < len(event.outputs) else None
        if shape is None:
            raise ExecutionError(f"diagram: result #{r} is not a tensor result of {event.op.name}")
        if len(idx) != len(shape) or any(not 0 <= i < d for i, d in zip(idx, shape, strict=True)):
            raise ExecutionError(f"diagram: index {list(idx)} is outside result #{r} of shape {list(shape)}")
        chosen.append((r, idx))
    if not chosen:
        raise ExecutionError("diagram: no element chosen")
    if len(chosen) > MAX_ELEMENTS:
        raise ExecutionError(f"diagram: at most {MAX_ELEMENTS} elements at once, got {len(chosen)}")
    return chosen


# --- title ----------------------------------------------------------------------------------

def _where(index: Sequence[int]) -> str:
    return f"[{', '.join(str(i) for i in index)}]" if len(index) else ""


def _title(event: Any, result: int, index: tuple[int, ...]) -> str:
    short = event.op.name.removeprefix("stablehlo.")
    out = event.outputs[result]
    value = format_value(out[index]) if isinstance(out, np.ndarray) and out.ndim == len(index) else "?"
    name = event.op.results[result].name if result < len(event.op.results) else "result"
    return f"{short}: {name}{_where(index)} = {value}"


def _attr_text(v: Any) -> str:
    """A compact form of an attribute value (duck-typed over hlolab.ir.attrs)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (tuple, list)):
        return "[" + ", ".join(_attr_text(x) for x in v) + "]"
    if isinstance(v, np.ndarray):
        return " ".join(np.array2string(v, separator=",").split())
    if hasattr(v, "values") and not callable(v.values):      # array<i64: ...>
        return _attr_text(tuple(v.values))
    if hasattr(v, "array"):                                   # dense<...>
        return _attr_text(np.asarray(v.array))
    if hasattr(v, "value") and not hasattr(v, "dialect"):    # integer / float / bool
        return _attr_text(v.value)
    if hasattr(v, "dialect") and hasattr(v, "value"):         # #stablehlo<comparison_direction GT>
        return str(v.value)
    return str(v)


def attributes_line(event: Any, width: int = 110) -> list[str]:
    """The op's attributes as short ``name=value`` items, wrapped to ``width``."""
    attrs = getattr(event.op, "attributes", None) or {}
    items: list[str] = []
    for name, v in attrs.items():
        fields = getattr(v, "fields", None) or getattr(v, "entries", None)
        pairs = list(fields) if isinstance(fields, tuple) else [(name, v)]
        for k, x in pairs:
            if isinstance(x, tuple) and not x:
                continue  # empty dim lists say nothing
            shown = _attr_text(x)
            items.append(f"{k}={shown if len(shown) <= 48 else shown[:47] + '…'}")
    return textwrap.wrap("  ".join(items), width) if items else []


# --- derivation text as coloured segments ------------------------------------------------------

def _dim_color(role: DimRole) -> str:
    return dim_color(role.kind)


def _plain(line: Line) -> str:
    return "".join(t for t, _ in line)


def _fit(line: Line, width: int) -> Line:
    """Truncate a segment line to ``width`` characters (an ellipsis marks the cut)."""
    out: Line = []
    n = 0
    for seg, color in line:
        if n + len(seg) > width:
            out.append((seg[:max(0, width - n - 1)] + "…", color))
            return out
        out.append((seg, color))
        n += len(seg)
    return out


def _wrapped(text: str, color: str, indent: int, width: int, max_lines: int = 3) -> list[Line]:
    lines = textwrap.wrap(text, width - indent, subsequent_indent="  ") or [""]
    if len(lines) > max_lines:
        lines = lines[:max_lines]
        lines[-1] = lines[-1][:width - indent - 1] + "…"
    return [[(" " * indent + s, color)] for s in lines]


def _components(value: Any, roles: dict | None) -> Line | None:
    """``value`` (an index tuple) with each component coloured by its dim's role."""
    if not isinstance(value, tuple) or not roles or not all(isinstance(k, int) for k in roles):
        return None
    if len(value) == 0 or len(roles) != len(value) or set(roles) != set(range(len(value))):
        return None
    out: Line = [("(", INK)]
    for d, x in enumerate(value):
        out.append((format_value(x), _dim_color(roles[d])))
        out.append((", " if d < len(value) - 1 else ")", INK))
    return out


def _header(e: Explanation) -> list[Line]:
    """``result[i, j] = v`` with i, j coloured by what they are, then that key."""
    roles = e.result_roles()
    comps = _components(tuple(e.index), roles)
    line: Line = [("result", INK)]
    if comps is not None:
        line += [("[", INK)] + comps[1:-1] + [("]", INK)]
    else:
        line.append((_where(e.index), INK))
    line.append((f" = {format_value(e.value)}", INK))
    out = [line]
    if roles:
        out += _roles_lines(roles, text(Msg("render.index_lead")))
    return out


def _roles_lines(roles: dict, lead: str, indent: int = 0, width: int = EXPLAIN_WIDTH) -> list[Line]:
    """``d: role`` entries, each in its role's colour, wrapped between entries."""
    lines: list[Line] = [[(" " * indent + lead, style.MUTED_TEXT)]]
    col = indent + len(lead)
    for n, (d, r) in enumerate(sorted(roles.items())):
        entry = f"{d}: {text(r.message())}" + (", " if n < len(roles) - 1 else "")
        if col + len(entry) > width and col > indent + len(lead):
            lines.append([(" " * (indent + len(lead)), INK)])
            col = indent + len(lead)
        lines[-1].append((entry, _dim_color(r)))
        col += len(entry)
    return [_fit(ln, width) for ln in lines]


def _step_lines(n: int, s: Step, width: int, max_children: int = 4) -> list[Line]:
    """``n. name = value`` (index components coloured by their dims' roles), then the
    formula and the formula with the numbers substituted, the dims' roles, a few children."""
    head: Line = [(f"{n}. ", style.MUTED_TEXT), (text(s.name), style.ACCENT), (" = ", INK)]
    comps = _components(s.value, s.dim_roles)
    head += comps if comps is not None else [(format_value(s.value), INK)]
    if s.before_clamp is not None:
        head.append(("  " + text(Msg("render.clamped_from", value=s.before_clamp)), CLAMP))
    lines = [_fit(head, width)]
    formula, substituted = text(s.formula), text(s.substituted)
    if formula:
        lines += _wrapped(formula, style.MUTED_TEXT, 5, width, max_lines=2)
    if substituted and substituted != formula:
        lines += _wrapped("= " + substituted, INK, 5, width, max_lines=2)
    if s.dim_roles:
        lines += _roles_lines(s.dim_roles, text(Msg("explain.dims", roles="")), 5, width)
    for c in s.children[:max_children]:
        # the value first: a long formula is what the width cuts, never the number
        parts = step_parts(c)
        line = f"{parts[0]} = {parts[-1]}" + (f"   ({parts[-2]})" if len(parts) > 2 else "")
        if c.before_clamp is not None:
            line += "  " + text(Msg("render.clamped_from", value=c.before_clamp))
        lines.append(_fit([("     " + line, INK)], width))
    if len(s.children) > max_children:
        lines.append([("     " + text(Msg("explain.more", count=len(s.children) - max_children)),
                       style.MUTED_TEXT)])
    return lines


def single_text(e: Explanation, width: int = EXPLAIN_WIDTH) -> list[Line]:
    """One element's explanation as a step table."""
    lines = _header(e)
    for n, s in enumerate(e.steps, start=1):
        lines += _step_lines(n, s, width)
    for note in e.notes:
        lines += _wrapped(text(Msg("explain.note", note=note)), style.MUTED_TEXT, 0, width)
    return lines


def dot_terms(view: OpView, result: int, index: tuple[int, ...]) -> str | None:
    """``a·b + c·d + … = v`` when exactly two operand fans of one window shape pair up
    position by position (a dot product's lhs and rhs, a convolution's window and kernel)."""
    prov = view.prov
    if prov is None or not hasattr(prov, "window"):
        return None
    views = prov.window(result, index)
    fans = [f for f in views
            if f.operand is not None and f.role != "init" and value_shape(view.inputs[f.operand])]
    if len(fans) != 2 or fans[0].valid.shape != fans[1].valid.shape or fans[0].operand == fans[1].operand:
        return None
    a, b = fans
    both = a.valid & b.valid
    va = np.asarray(view.inputs[a.operand])[tuple(a.index[both].T)]
    vb = np.asarray(view.inputs[b.operand])[tuple(b.index[both].T)]
    pairs = zip(va[:MAX_TERMS], vb[:MAX_TERMS], strict=True)
    terms = [f"{format_value(x)}·{format_value(y)}" for x, y in pairs]
    if len(va) > MAX_TERMS:
        terms.append(text(Msg("render.more_terms", count=len(va) - MAX_TERMS)))
    # window positions on padding or holes (a convolution's pad_value fan): their kernel
    # weights meet a constant zero, so neither side lists them as a source
    skipped = sum(int(f.valid.sum()) for f in views if f.operand is None)
    out = " + ".join(terms) if terms else "0"
    if skipped:
        out += " " + text(Msg("render.skipped_terms", count=skipped))
    return f"{out} = {format_value(np.asarray(view.outputs[result])[index])}"


def _derivation(view: OpView, e: Explanation | None, result: int, index: tuple[int, ...]) -> str:
    """One line: the dot product from the fans, else the explanation's last formula."""
    dot = dot_terms(view, result, index)
    value = format_value(np.asarray(view.outputs[result])[index])
    if dot is not None:
        return dot
    last = e.steps[-1] if e is not None and e.steps else None
    if last is not None and (last.substituted or last.formula):
        return f"{text(last.substituted or last.formula)} = {value}"
    return value


def _cell(s: Step) -> Line:
    """One table cell: an index tuple's components coloured by their dims' roles; a clamped
    value with what it was clamped from."""
    line = _components(s.value, s.dim_roles) or [(format_value(s.value), INK)]
    if s.before_clamp is not None:
        line = [(t, CLAMP) for t, _ in line] + [(f"←{format_value(s.before_clamp)}", CLAMP)]
    return line


def _pad(line: Line, width: int) -> Line:
    """``line`` cut or padded with spaces to exactly ``width`` characters."""
    n = len(_plain(line))
    return _fit(line, width) if n > width else line + [(" " * (width - n), INK)]


def multi_text(view: OpView, chosen: list[tuple[int, tuple[int, ...]]],
               explanations: list[Explanation | None], width: int = EXPLAIN_WIDTH) -> list[Line]:
    """A table (one row per step, one column per element, index components coloured by the
    role of their dim, as in the spec's gather figure) and a derivation line each."""
    lines: list[Line] = []
    first = next((e for e in explanations if e is not None), None)
    if first is not None and all(e is not None and len(e.steps) == len(first.steps) for e in explanations):
        rows = [n for n, s in enumerate(first.steps) if not (s.children and not isinstance(s.value, tuple))]
        roles = next((r for e in explanations if e is not None
                      for r in [e.result_roles()] if r), None)
        heads = []
        for k, (_, idx) in enumerate(chosen):  # the element's colour, then its index by dim role
            comps = _components(tuple(idx), roles)
            heads.append([(f"({k + 1})", _text_of(k))] + ([("[", INK), *comps[1:-1], ("]", INK)]
                                                             if comps else [(_where(idx), _text_of(k))]))
        cells = [[_cell(e.steps[n]) for e in explanations if e is not None] for n in rows]
        names = [text(s.name) for s in first.steps]
        name_w = min(22, max(len(names[n]) for n in rows) + 1) if rows else 8
        cols = [min(26, max(len(_plain(c)) for c in [heads[k], *(r[k] for r in cells)]) + 2)
                for k in range(len(chosen))]
        width = max(width, name_w + sum(cols))
        lines.append([(" " * name_w, INK)] + [seg for k, h in enumerate(heads) for seg in _pad(h, cols[k])])
        for n, row in zip(rows, cells):
            line: Line = [(names[n][:name_w - 1].ljust(name_w), style.ACCENT)]
            for k, c in enumerate(row):
                line += _pad(c, cols[k])
            lines.append(line)
        if any(s.before_clamp is not None for e in explanations if e for s in e.steps):
            lines.append([(text(Msg("render.clamp_key")), CLAMP)])
        if roles:
            lines += _roles_lines(roles, text(Msg("render.result_dims")))
        lines.append([("", INK)])
    for k, ((r, idx), e) in enumerate(zip(chosen, explanations, strict=True)):
        line = f"({k + 1}) result{_where(idx)} = {_derivation(view, e, r, idx)}"
        wrapped = _wrapped(line, _text_of(k), 0, width, max_lines=3)
        lines += wrapped
    return lines


def _text_of(k: int) -> str:
    """Element ``k``'s colour, as text: the light ones darkened so they stay readable."""
    c = style.ELEMENT_COLORS[k % len(style.ELEMENT_COLORS)]
    r, g, b = style.hex_to_rgb(c)
    lum = 0.2126 * r + 0.7152 * g + 0.0722 * b
    if lum > 150:
        r, g, b = (int(v * 0.6) for v in (r, g, b))
    return f"#{r:02X}{g:02X}{b:02X}"


def _limit(lines: list[Line], max_lines: int = EXPLAIN_LINES) -> list[Line]:
    if len(lines) <= max_lines:
        return lines
    return lines[:max_lines - 1] + [[(text(Msg("render.more_lines", count=len(lines) - max_lines + 1)),
                                       style.MUTED_TEXT)]]


# --- drawing -----------------------------------------------------------------------------------

def _char_w(board: Board) -> float:
    return CHAR_PX / 100 / board.cell_inches


def _line_h(board: Board) -> float:
    return LINE_SPACING * FONT_SIZE / 72 / board.cell_inches


def _draw_lines(board: Board, lines: list[Line], x: float, y: float) -> None:
    """Coloured segments on a monospace grid (one text artist per segment)."""
    cw, lh = _char_w(board), _line_h(board)
    for n, line in enumerate(lines):
        col = 0
        for seg, color in line:
            if seg.strip():
                board.ax.text(x + col * cw, y + n * lh, seg, fontsize=FONT_SIZE, family=MONO,
                              color=color, va="top", ha="left", zorder=7)
            col += len(seg)


def draw_diagram(event: Any, elements: Sequence[tuple[int, tuple[int, ...]]] | None = None, *,
                 title: str | None = None, explain: bool = True) -> Rendered:
    """The diagram of ``event`` for the chosen result ``elements`` (default: the middle one)."""
    chosen = _check_elements(event, elements or [default_element(event)])
    attrs = attributes_line(event)
    lh = 0.42
    view = OpView(event, focus=chosen, y=1.2 + lh * len(attrs))
    if title is None:
        title = _title(event, *chosen[0]) if len(chosen) == 1 else \
            f"{event.op.name.removeprefix('stablehlo.')}: {len(chosen)} result elements, one colour each"
    board = Board(title)
    view.build(board=board)
    board.clear_operand_labels(gap=1.5)
    for n, line in enumerate(attrs):
        board.add_text(0.0, 0.1 + n * lh, line, fontsize=7.5, color=style.MUTED_TEXT,
                       width=len(line) * 0.16)
    single = len(chosen) == 1
    explanations = [explanation_of(event, r, idx) if explain else None for r, idx in chosen]
    lines: list[Line] = []
    if explain:
        if single:
            e = explanations[0]
            lines = single_text(e) if e is not None else []
        else:
            lines = multi_text(view, chosen, explanations)
    lines = _limit(lines)
    right = board.width + 2.0  # the explanation column, right of the results
    text_y = view.y - 0.45
    if lines:
        board.width = max(board.width, right + max(len(_plain(ln)) for ln in lines) * _char_w(board))
        board.height = max(board.height, text_y + len(lines) * _line_h(board))
    present = visible_roles(view.element_cells(*chosen[0]))
    roles = ["result"] + [role for role in style.ROLE_ORDER if role in present and role != "result"]
    legend_y = max(b.y + b.layout.height for b in board.views.values()) + 1.2
    if single:
        board.height = max(board.height, legend_y + 0.9 * len(roles))
        board.width = max(board.width, 1.0 + max(len(style.ROLE_LABELS.get(r, r)) for r in roles) * 0.2)
    board.draw()
    groups: list[list[CellGroup]] = []
    for k, (r, idx) in enumerate(chosen):
        color = None if single else style.ELEMENT_COLORS[k % len(style.ELEMENT_COLORS)]
        painted = view.paint_element(r, idx, color)
        groups.append(painted)
        _arrows(board, f"result{r}", idx, painted, color)
        if not single:
            _frames(board, painted, color or style.ACCENT)
            board.outline(f"result{r}", idx, style.ACCENT, width=1.6)
    if single:
        board.legend(roles, view.x, legend_y)
    if lines:
        _draw_lines(board, lines, right, text_y)
    plain = "\n".join(_plain(ln) for ln in lines)
    return Rendered(board.fig, board, view, chosen, groups, plain)


def visible_roles(groups: list[CellGroup]) -> set[str]:
    """The roles that show on at least one cell: where a cell has several roles the most
    specific is painted (``OpView.paint_element``), so the others need no legend entry."""
    order = {r: k for k, r in enumerate(style.ROLE_ORDER)}
    out: set[str] = set()
    for key in {g.key for g in groups}:
        mine = [g for g in groups if g.key == key]
        rows = np.concatenate([g.indices for g in mine])
        rank = np.concatenate([np.full(len(g.indices), order.get(g.role, len(order))) for g in mine])
        by_rank = np.argsort(rank, kind="stable")
        _, first = np.unique(rows[by_rank], axis=0, return_index=True)
        out |= {style.ROLE_ORDER[k] if k < len(order) else "copy" for k in rank[by_rank][first].tolist()}
    return out




def _frames(board: Board, groups: list[CellGroup], color: str) -> None:
    """A frame per source group and small multiple, so overlapping windows stay visible."""
    for g in groups:
        panel_axes = board.views[g.key].layout.panel_axes
        if not panel_axes:
            board.box(g.key, g.indices, color)
            continue
        panels = g.indices[:, panel_axes]
        for p in sorted({tuple(row) for row in panels.tolist()}):
            board.box(g.key, g.indices[(panels == np.asarray(p)).all(axis=1)], color)


def _arrows(board: Board, result_key: str, index: tuple[int, ...], groups: list[CellGroup],
            color: str | None) -> None:
    """One arrow per (tensor, role) group: from the chosen cell to the group's nearest cell."""
    start = board.views[result_key].cell_center(index)
    if start is None:
        return
    for g in groups:
        view = board.views.get(g.key)
        if view is None or g.key == result_key:
            continue
        centers = [c for c in (view.cell_center(row) for row in g.indices) if c is not None]
        if not centers:
            continue
        pts = np.asarray(centers)
        near = pts[np.argmin(((pts - start) ** 2).sum(axis=1))]
        board.arrow(start, (float(near[0]), float(near[1])), color or style.ACCENT, alpha=0.55)
