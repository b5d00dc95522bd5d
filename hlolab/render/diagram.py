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
from hlolab.render.model import ElementModel, Outline, element_model, pairs_and_derivation
from hlolab.render.opview import CellGroup, OpView
from hlolab.trace.explain import DimRole, Explanation, Step, format_value, step_parts
from hlolab.trace.provenance import value_shape
from hlolab.trace.roles import DIM_GROUP_COLORS, dim_color
from hlolab.trace.view import OpCells

EXPLAIN_WIDTH = 64    # characters per explanation line
EXPLAIN_LINES = 400   # lines of explanation before eliding (the figure grows to hold them)
MAX_CHILDREN = 64     # sub-steps of one step written out (a 64-term sum); past it, how many more
MONO = "DejaVu Sans Mono"
CHAR_PX = 6           # advance of one monospace character at the style's 100 dpi
# the size whose DejaVu Sans Mono advance (1233/2048 em) is exactly CHAR_PX: Agg rounds advances to
# whole pixels, so any other size drifts and coloured segments of one line would gap or overlap
FONT_SIZE = CHAR_PX * 72 / (100 * 1233 / 2048)
LINE_SPACING = 1.4
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
    models: list[ElementModel] = field(default_factory=list)  # per element: outlines, pairs, sum


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


def _wrapped(text: str, color: str, indent: int, width: int, max_lines: int | None = 3) -> list[Line]:
    lines = textwrap.wrap(text, width - indent, subsequent_indent="  ") or [""]
    if max_lines is not None and len(lines) > max_lines:
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


def _step_lines(n: int, s: Step, width: int, max_children: int = MAX_CHILDREN) -> list[Line]:
    """``n. name``, then the formula, the formula with the numbers substituted and the value,
    each on its own lines (index components coloured by their dims' roles), the dims' roles
    and every child (past ``max_children``, how many more)."""
    comps = _components(s.value, s.dim_roles)
    value: Line = comps if comps is not None else [(format_value(s.value), INK)]
    if s.before_clamp is not None:
        value = value + [("  " + text(Msg("render.clamped_from", value=s.before_clamp)), CLAMP)]
    head: Line = [(f"{n}. ", style.MUTED_TEXT), (text(s.name), style.ACCENT)]
    formula, substituted = text(s.formula), text(s.substituted)
    if not formula and not substituted:
        return _wrap_line(head + [(" = ", INK)] + value, width, 5)
    lines = _wrap_line(head, width, 5)
    if formula:
        lines += _wrapped(formula, style.MUTED_TEXT, 5, width, max_lines=None)
    if substituted and substituted != formula:
        lines += _wrapped("= " + substituted, INK, 5, width, max_lines=None)
    lines += _wrap_line([("     = ", INK)] + value, width, 7)
    if s.dim_roles:
        lines += _roles_lines(s.dim_roles, text(Msg("explain.dims", roles="")), 5, width)
    lines += _child_lines(s.children, 5, width, max_children)
    return lines


def _child_lines(children: list[Step], indent: int, width: int, max_children: int) -> list[Line]:
    """Sub-steps, each ``name = value   (substituted)``, their own sub-steps indented under
    them (a scatter update's index, update value and running value), none cut."""
    lines: list[Line] = []
    for c in children[:max_children]:
        parts = step_parts(c)
        line = f"{parts[0]} = {parts[-1]}" + (f"   ({parts[-2]})" if len(parts) > 2 else "")
        if c.before_clamp is not None:
            line += "  " + text(Msg("render.clamped_from", value=c.before_clamp))
        lines += _wrapped(line, INK, indent, width, max_lines=None)
        lines += _child_lines(c.children, indent + 3, width, max_children)
    if len(children) > max_children:
        lines.append([(" " * indent + text(Msg("explain.more", count=len(children) - max_children)),
                       style.MUTED_TEXT)])
    return lines


def _wrap_line(line: Line, width: int, indent: int) -> list[Line]:
    """A segment line broken at segment boundaries (a segment longer than a line is split),
    continuation lines indented by ``indent``: nothing is cut."""
    out: list[Line] = [[]]
    col = 0
    for seg, color in line:
        while seg:
            room = width - col
            if len(seg) <= room:
                out[-1].append((seg, color))
                col += len(seg)
                break
            if col > indent and len(seg) <= width - indent:
                out.append([(" " * indent, INK)])
                col = indent
                continue
            out[-1].append((seg[:room], color))
            seg = seg[room:]
            out.append([(" " * indent, INK)])
            col = indent
    return out


def single_text(e: Explanation, width: int = EXPLAIN_WIDTH, model: ElementModel | None = None) -> list[Line]:
    """One element's explanation as a step table; then, when two fans pair up, the sum over
    the numbered pairs (the numbers drawn in the cells)."""
    lines = _header(e)
    for n, s in enumerate(e.steps, start=1):
        lines += _step_lines(n, s, width)
    if model is not None and model.derivation is not None:
        lines.append([(text(Msg("render.pairs_sum")), style.ACCENT)])
        lines += _wrapped("= " + model.derivation.text(), INK, 3, width, max_lines=None)
    for note in e.notes:
        lines += _wrapped(text(Msg("explain.note", note=note)), style.MUTED_TEXT, 0, width, max_lines=None)
    return lines


def dot_terms(view: OpCells, result: int, index: tuple[int, ...]) -> str | None:
    """``a·b + c·d + … = v`` when exactly two operand fans of one window shape pair up
    position by position (a dot product's lhs and rhs, a convolution's window and kernel)."""
    _, d = pairs_and_derivation(view, result, index)
    return None if d is None else d.text()


def _derivation(view: OpCells, e: Explanation | None, result: int, index: tuple[int, ...]) -> str:
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
        wrapped = _wrapped(line, _text_of(k), 0, width, max_lines=None)
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


def headline(e: Explanation | None) -> str | None:
    """The note an op marks as the headline (key ``….untouched``: no update / no window reaches
    the element), in the reader's language; None when there is none."""
    if e is None:
        return None
    for n in e.notes:
        if getattr(n, "key", "").endswith(".untouched"):
            return text(n)
    return None


def has_elements(event: Any) -> bool:
    """Whether some tensor result has an element to explain."""
    return any(isinstance(v, np.ndarray) and v.size for v in event.outputs)


def empty_diagram(event: Any, title: str | None = None) -> Rendered:
    """An op whose every result is empty: its operands and (empty) results drawn, and a
    title that says so, e.g. "pad: %0 is empty (shape [0]): no element to explain"."""
    view = OpView(event, focus=[], y=1.2)
    shapes = [f"{view.result_name(r)} (shape {list(np.shape(v))})" for r, v in enumerate(event.outputs)
              if isinstance(v, np.ndarray)]
    board = Board(title or text(Msg("render.empty_result", op=event.op.name.removeprefix("stablehlo."),
                                     results=", ".join(shapes))))
    view.build(board=board)
    board.clear_operand_labels(gap=1.5)
    for key, v in board.views.items():
        if key.startswith("result") and v.values is not None and v.values.size == 0:
            board.add_text(v.x, v.y + 0.2, text(Msg("render.no_elements")), fontsize=9,
                           color=style.MUTED_TEXT, width=4.0)
    board.draw()
    return Rendered(board.fig, board, view, [], [], board.title, [])


def draw_diagram(event: Any, elements: Sequence[tuple[int, tuple[int, ...]]] | None = None, *,
                 title: str | None = None, explain: bool = True) -> Rendered:
    """The diagram of ``event`` for the chosen result ``elements`` (default: the middle one);
    an op with only empty results gets ``empty_diagram``."""
    if not elements and not has_elements(event):
        return empty_diagram(event, title)
    chosen = _check_elements(event, elements or [default_element(event)])
    attrs = attributes_line(event)
    lh = 0.42
    view = OpView(event, focus=chosen, y=1.2 + lh * len(attrs))
    if title is None:
        title = _title(event, *chosen[0]) if len(chosen) == 1 else \
            f"{event.op.name.removeprefix('stablehlo.')}: {len(chosen)} result elements, one colour each"
        head = headline(explanation_of(event, *chosen[0])) if len(chosen) == 1 else None
        if head:  # a degenerate element says so first: "no update lands on result[2, 0]: ..."
            title = f"{title}   ({head})"
    board = Board(title)
    found = [explanation_of(event, r, idx) for r, idx in chosen]
    models = [element_model(view, e, r, idx, k)
              for k, ((r, idx), e) in enumerate(zip(chosen, found, strict=True))]
    # a ghost slice left of its operand (a start clamped up from below 0) needs room
    view.x = max([0.0] + [float(-o.lo[-1]) for m in models for o in m.outlines
                          if o.kind == "unclamped" and o.key.startswith("operand") and o.lo])
    view.build(board=board)
    board.clear_operand_labels(gap=1.5)
    for n, line in enumerate(attrs):
        board.add_text(0.0, 0.1 + n * lh, line, fontsize=7.5, color=style.MUTED_TEXT,
                       width=len(line) * 0.16)
    single = len(chosen) == 1
    explanations = found if explain else [None] * len(chosen)
    lines: list[Line] = []
    if explain:
        if single:
            e = explanations[0]
            lines = single_text(e, model=models[0]) if e is not None else []
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
    cell_kinds = sorted({int(k) for b in board.views.values() if b.kinds is not None
                         for k in np.unique(b.kinds)} - {0})
    if single:
        board.height = max(board.height, legend_y + 0.9 * (len(roles) + len(cell_kinds)))
        labels = {r: view.role_label(r) for r in roles}
        board.width = max(board.width, 1.0 + max(len(labels[r]) for r in roles) * 0.2)
    # bit views (an op about bits: convert, reduce_precision, shifts, ...) under the legend
    bit_panels = list(getattr(explanations[0], "bits", None) or []) if single and explain else []
    bits_at: list[tuple[Any, float, float]] = []
    if bit_panels:
        from hlolab.render.bits import panel_size

        y = legend_y + 0.9 * (len(roles) + len(cell_kinds)) + 1.0
        for panel in bit_panels:
            w, h = panel_size(panel, board.cell_inches)
            bits_at.append((panel, view.x, y))
            board.width = max(board.width, view.x + w)
            y += h + 0.8
        board.height = max(board.height, y)
    board.draw()
    groups: list[list[CellGroup]] = []
    for k, (r, idx) in enumerate(chosen):
        color = None if single else style.ELEMENT_COLORS[k % len(style.ELEMENT_COLORS)]
        painted = view.paint_element(r, idx, color)
        groups.append(painted)
        _arrows(board, f"result{r}", idx, painted, color)
        _outlines(board, models[k].outlines, color)
        if not single:
            if not models[k].outlines:
                _frames(board, painted, color or style.ACCENT)
            board.outline(f"result{r}", idx, style.ACCENT, width=1.6)
    if single:
        _pair_numbers(board, models[0])
        board.legend(roles, view.x, legend_y, cell_kinds, labels)
    if lines:
        _draw_lines(board, lines, right, text_y)
    if bits_at:
        from hlolab.render.bits import draw_bit_panel
        from hlolab.trace.bits import format_bits

        for panel, x, y in bits_at:
            draw_bit_panel(board.ax, panel, x, y, board.cell_inches)
        lines = lines + [[("", INK)]] + [[(ln, INK)] for p, _, _ in bits_at
                                         for ln in format_bits(p).splitlines()]
    plain = "\n".join(_plain(ln) for ln in lines)
    return Rendered(board.fig, board, view, chosen, groups, plain, models)


OUTLINE_WIDTH = {"window": 2.2, "slice": 2.2, "block": 1.8, "fan": 1.4, "unclamped": 1.6}


def _outlines(board: Board, outlines: list[Outline], color: str | None) -> None:
    """The model's boxes: windows and slices thick, fans thin, an unclamped ghost dashed in
    the clamp colour."""
    for o in outlines:
        c = CLAMP if o.kind == "unclamped" else (color or style.ACCENT)
        board.range_box(o.key, o.lo, o.hi, c, width=OUTLINE_WIDTH.get(o.kind, 1.6), dashed=o.dashed)


def _pair_numbers(board: Board, model: ElementModel) -> None:
    """Pair k's number in the upper-left corner of both its cells."""
    for p in model.pairs:
        for key, idx in ((p.a_key, p.a), (p.b_key, p.b)):
            board.corner_mark(key, idx, str(p.number))
    for key, idx, _ in model.marks:
        board.corner_mark(key, idx, "★", color=style.ACCENT, size=8, right=True)


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
        end = (float(near[0]), float(near[1]))
        boxes = ((start[0] - 0.5, start[1] - 0.5, 1.0, 1.0), (end[0] - 0.5, end[1] - 0.5, 1.0, 1.0))
        board.arrow(start, end, color or style.ACCENT, alpha=0.55, boxes=boxes)
