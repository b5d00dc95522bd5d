"""Animations: frames that show, step by step, how an op's results are derived.

Which frames (``plan_frames``, before anything is drawn):

- when the op's provenance has ``animation_steps(call, inputs, outputs, elements,
  limit)`` (scatter: updates in application order, dropped ones included;
  select_and_scatter: select then scatter per window; reduce: the reduction
  schedule), its steps, in the op's real order;
- otherwise the plain walk: one frame per result element, row-major (or the
  chosen ones). For convolution and reduce_window the operand is drawn in its
  padded / dilated frame, so the walk *is* the window sliding over the padded
  input, with the kernel beside it.

Each frame's caption carries its arithmetic (the explanation's formulas with
the numbers substituted, or the op's own step caption). Result cells fill in
progressively: a cell not yet computed is blank. When there are more elements
(steps) than ``max_frames``, frames are spread over the whole range (first,
last, evenly between; never two of one element), so the last row, batch or
update is always shown, and the caption says which. A start index a clamp
moved (dynamic_slice, gather) gets a frame of its own before its slice, and so
does a dropped out-of-bounds scatter update. Nothing here knows an op by name.

How frames are written (``Animation``): the board is drawn once with Agg and
kept as pixels; per frame only what changed is drawn on a copy of it (the
result cells whose value appeared or changed, the painted cells, the caption),
and every frame is mapped to one palette: the style colours and their
antialiasing shades (``gif_palette``), completed with the static board's own
colours (``board_palette``), so the GIF needs no per-frame quantization; pixels
unchanged since the previous frame are written transparent. Output is
byte-identical run to run.
"""

from __future__ import annotations

import subprocess
import textwrap
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from hlolab.errors import HloLabError
from hlolab.messages import Msg, text
from hlolab.render import style
from hlolab.render.diagram import dot_terms, explanation_of
from hlolab.render.layout import Board, format_cell
from hlolab.render.opview import CellGroup, OpView
from hlolab.trace.explain import Explanation, Step, format_value

Element = tuple[int, tuple[int, ...]]
Elements = Sequence[tuple[int, Sequence[int]]]
CAPTION_CHARS = 110     # caption lines are wrapped at this many characters
CAPTION_CHAR_W = 0.2    # board units per character of the 9 pt monospaced caption
LEGEND_W = 7.5          # board units reserved right of the tensors for the legend
ARITH_STEPS = 3         # explanation steps (before the last) written out per element frame
PART_LINES = 2          # wrapped lines per formula / substituted formula before eliding
FOCUS = 4               # frames at each end whose cells stay visible when tensors are elided
# animation steps asked of an op at once (about a second of work); an op with more gets
# the steps of result elements spread over its result instead
STEP_BUDGET = 20_000
# a quantized cell's real value: its text key (the tensor key + REAL), its anchor in the cell
# (as render.layout draws it) and its size where no cell has one to copy
REAL = "~real"
REAL_Y = 0.76
REAL_FONT = 5.5


# --- frame plans ------------------------------------------------------------------------

@dataclass(frozen=True)
class Pending:
    """Result cells not computed yet at a frame: ``order[done:]`` (flat row-major indices;
    ``order`` None: every cell in row-major order)."""

    order: np.ndarray | None
    done: int

    def mask(self, shape: tuple[int, ...]) -> np.ndarray:
        """A boolean mask of ``shape``: True where the cell is still blank."""
        n = int(np.prod(shape, dtype=np.int64))
        out = np.zeros(n, dtype=bool)
        if self.order is None:
            out[self.done:] = True
        else:
            out[self.order[self.done:]] = True
        return out.reshape(shape)


@dataclass
class FramePlan:
    """What one frame shows: its caption (lines), the cells to paint (with roles), the
    values the result cells show when they run (scatter, reduce; None: the final values)
    and the result cells still blank. ``kind``: ``element`` (the walk), ``step`` (the op's
    own steps), ``clamped`` (a start index a clamp moved), ``dropped`` (an update the op
    discards), ``empty`` (nothing to animate, the caption says why)."""

    caption: str
    paint: list[CellGroup] = field(default_factory=list)
    result_values: dict[str, np.ndarray] | None = None
    pending: dict[str, Pending] = field(default_factory=dict)
    kind: str = "element"
    element: Element | None = None  # the result element the frame is about (walk frames)


def spread(n: int, k: int) -> np.ndarray:
    """``min(n, k)`` distinct positions of ``range(n)``: all of them, or the first, the last
    and evenly between (integer arithmetic, so the choice is the same everywhere)."""
    if k >= n:
        return np.arange(n, dtype=np.int64)
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    if k == 1:
        return np.array([n - 1], dtype=np.int64)  # the last: every result is computed there
    j = np.arange(k, dtype=np.int64)
    return (j * (n - 1) + (k - 1) // 2) // (k - 1)


def _wrap(line: str, max_lines: int | None = PART_LINES) -> list[str]:
    """``line`` wrapped at CAPTION_CHARS, continuation lines indented past its own indent;
    past ``max_lines`` the rest is elided."""
    indent = " " * (len(line) - len(line.lstrip(" ")))
    out = textwrap.wrap(line, CAPTION_CHARS, subsequent_indent=indent + "    ",
                        break_on_hyphens=False) or [""]
    if max_lines is not None and len(out) > max_lines:
        out = out[:max_lines]
        out[-1] = out[-1][:CAPTION_CHARS - 1] + "…"
    return out


def _index_text(idx: Sequence[int]) -> str:
    return ", ".join(str(int(i)) for i in idx)


def _first_tensor_result(event: Any) -> tuple[int, tuple[int, ...]] | None:
    """(result number, shape) of the first tensor result, None when there is none."""
    for r, v in enumerate(event.outputs):
        if isinstance(v, np.ndarray):
            return r, tuple(int(d) for d in v.shape)
    return None


def _empty_plan(event: Any) -> FramePlan:
    """The one frame of an animation with nothing to show, saying why."""
    first = _first_tensor_result(event)
    if first is None or int(np.prod(first[1], dtype=np.int64)) == 0:
        shape = "x".join(str(d) for d in first[1]) if first is not None else "none"
        caption = text(Msg("animate.empty", count=0, shape=shape))
    else:
        caption = text(Msg("animate.no_steps", op=event.op.name))
    return FramePlan(caption, kind="empty")


def _step_lines(s: Step) -> list[str]:
    """``name = formula`` and ``= substituted = value`` of one explanation step, wrapped."""
    formula, substituted = text(s.formula), text(s.substituted)
    value = format_value(s.value)
    clamp = "   " + text(Msg("render.clamped_from", value=format_value(s.before_clamp))) \
        if s.before_clamp is not None else ""
    name = text(s.name)
    if not formula:
        return _wrap(f"  {name} = {substituted} = {value}{clamp}")
    lines = _wrap(f"  {name} = {formula}")
    if substituted and substituted != formula:
        return lines + _wrap(f"      = {substituted} = {value}{clamp}")
    return lines + _wrap(f"      = {value}{clamp}")


def _arithmetic(e: Explanation | None) -> list[Step]:
    """The steps written under an element's first caption line: the last ARITH_STEPS steps
    before the final one that carry this element's numbers (a substituted formula)."""
    if e is None or len(e.steps) < 2:
        return []
    worked = [s for s in e.steps[:-1]
              if s.substituted is not None and text(s.substituted) != text(s.formula)]
    return worked[-ARITH_STEPS:]


def _element_caption(event: Any, view: OpView, r: int, idx: tuple[int, ...], e: Explanation | None,
                     groups: list[CellGroup]) -> list[str]:
    """``result[i] = <the derivation> = value  (from: roles)``, then the arithmetic steps."""
    where = f"{view.result_name(r)}[{_index_text(idx)}]"
    value = format_value(np.asarray(event.outputs[r])[idx])
    roles = ", ".join(dict.fromkeys(style.ROLE_LABELS.get(g.role, g.role) for g in groups))
    source = text(Msg("render.from_roles", roles=roles) if roles else Msg("render.from_nothing"))
    terms = dot_terms(view, r, idx)  # a dot product / convolution window written as its terms
    last = e.steps[-1] if e is not None and e.steps else None
    qt = view.quant_type(f"result{r}")
    if qt is not None:  # a quantized result: its real value beside the stored integer
        stored = np.asarray(event.outputs[r])[idx]
        real = format_value(_real_at(stored, qt, idx))
        value = text(Msg("quantized.render.value", stored=value, real=real))
    if terms is not None:  # written out in real values (what the op multiplies), then stored
        head = f"{where} = {terms}"
        if qt is not None:
            head += " " + text(Msg("quantized.render.stored", stored=format_value(stored)))
    elif last is not None and (last.substituted or last.formula):
        head = f"{where} = {text(last.substituted or last.formula)} = {value}"
    else:
        head = f"{where} = {value}"
    lines = _wrap(f"{head}   {source}", max_lines=3)
    for s in _arithmetic(e):
        lines += _step_lines(s)
    return lines


def _real_at(stored: Any, qt: Any, idx: tuple[int, ...]) -> Any:
    from hlolab.ops.quant_ops import real_at  # the ops package imports the render package lazily

    return real_at(stored, qt, idx)


def _running_reals(view: OpView, step: Any) -> list[str]:
    """For a step that changes a quantized result element: its running value as stored
    integer and real value (the caption the op writes speaks of stored integers)."""
    lines = []
    for r, idx, value in step.running:
        qt = view.quant_type(f"result{r}")
        if qt is not None:
            at = tuple(int(i) for i in idx)
            lines.append(text(Msg("quantized.render.running", name=view.result_name(r), index=_index_text(at),
                                  stored=format_value(value), real=format_value(_real_at(value, qt, at)))))
    return lines[:2]


def _clamp_of(e: Explanation | None) -> Step | None:
    """The step of ``e`` whose value a clamp moved (a clamped start index), if any."""
    if e is None:
        return None
    return next((s for s in e.steps if s.before_clamp is not None), None)


def _cells(view: OpView, masks: dict[tuple[int | None, str], np.ndarray]) -> list[CellGroup]:
    """Cell groups of (operand, role) -> mask, in drawn coordinates."""
    out: list[CellGroup] = []
    for (operand, role), m in masks.items():
        rows = [tuple(int(i) for i in row) for row in np.argwhere(np.asarray(m))]
        if rows:
            out += view.source_cells(operand, role, rows)
    return [g for g in out if len(g.indices)]


def _slice_cells(view: OpView, r: int, idx: tuple[int, ...], groups: list[CellGroup]) -> list[CellGroup]:
    """The cells a clamped start moves: the start indices the element reads, every result
    element that reads them (its slice of the result) and what those read (its slice of
    the operand), from the provenance's set queries; the element's own cells when the
    op has no set queries."""
    prov = view.prov
    reads = [g for g in groups if g.role == "index_read" and g.key.startswith("operand")]
    own = groups + [CellGroup(f"result{r}", "result", np.asarray([idx], dtype=np.int64))]
    if not reads or not hasattr(prov, "fwd") or not hasattr(prov, "back"):
        return own
    shape = np.asarray(view.outputs[r]).shape
    block = np.zeros(shape, dtype=bool)
    try:
        for g in reads:
            operand = int(g.key.removeprefix("operand"))
            m = np.zeros(np.asarray(view.inputs[operand]).shape, dtype=bool)
            m[tuple(g.indices.T)] = True
            for (res, role), hit in prov.fwd(operand, m).items():
                if res == r and role == "index_read":
                    block |= hit
        if not block[idx]:
            return own
        back = {k: v for k, v in prov.back(r, block).items() if k[1] != "index_read"}
    except (HloLabError, NotImplementedError):
        return own
    rows = np.argwhere(block)
    return reads + _cells(view, back) + [CellGroup(f"result{r}", "result", rows.astype(np.int64))]


# --- the plain walk ---------------------------------------------------------------------

class _Walk:
    """The result elements the plain walk visits: every element of the first tensor result
    row-major, or the chosen ones in their order (of any results)."""

    def __init__(self, event: Any, elements: Elements | None):
        self.shapes = {r: tuple(int(d) for d in v.shape) for r, v in enumerate(event.outputs)
                       if isinstance(v, np.ndarray)}
        self.chosen: list[Element] | None = None
        if elements:
            self.chosen = [(int(r), tuple(int(i) for i in idx)) for r, idx in elements]
            for r, idx in self.chosen:
                shape = self.shapes.get(r)
                if shape is None:
                    raise HloLabError(f"animate: result #{r} is not a tensor result of {event.op.name}")
                if len(idx) != len(shape) or any(not 0 <= i < d for i, d in zip(idx, shape, strict=True)):
                    raise HloLabError(f"animate: index {list(idx)} is outside result #{r} "
                                      f"of shape {list(shape)}")
            self.total = len(self.chosen)
            # per result: the flat indices of its chosen elements, in the walk's order
            self.orders = {r: np.asarray([_flat(i, self.shapes[r]) for q, i in self.chosen if q == r],
                                         dtype=np.int64)
                           for r in dict.fromkeys(q for q, _ in self.chosen)}
        else:
            first = _first_tensor_result(event)
            self.result = first[0] if first is not None else 0
            self.total = int(np.prod(first[1], dtype=np.int64)) if first is not None else 0

    def element(self, p: int) -> Element:
        if self.chosen is not None:
            return self.chosen[p]
        shape = self.shapes[self.result]
        return self.result, tuple(int(i) for i in np.unravel_index(p, shape)) if shape else ()

    def pending(self, p: int) -> dict[str, Pending]:
        """The result cells still blank once elements 0..p-1 of the walk are computed."""
        if self.chosen is None:
            return {f"result{self.result}": Pending(None, p)}
        before = self.chosen[:p]
        return {f"result{r}": Pending(order, sum(1 for q, _ in before if q == r))
                for r, order in self.orders.items()}


def _flat(idx: tuple[int, ...], shape: tuple[int, ...]) -> int:
    return int(np.ravel_multi_index(idx, shape)) if shape else 0


def _walk_frames(event: Any, view: OpView, elements: Elements | None, max_frames: int) -> list[FramePlan]:
    walk = _Walk(event, elements)
    total = walk.total
    if total == 0:
        return [_empty_plan(event)]
    cache: dict[int, tuple[Element, Explanation | None, list[CellGroup]]] = {}

    def item(p: int) -> tuple[Element, Explanation | None, list[CellGroup]]:
        if p not in cache:
            r, idx = walk.element(p)
            cache[p] = (r, idx), explanation_of(event, r, idx), view.element_cells(r, idx)
        return cache[p]

    def clamp_key(p: int) -> tuple[Any, ...] | None:
        (r, _), e, groups = item(p)
        s = _clamp_of(e)
        reads = tuple(sorted((g.key, tuple(map(tuple, g.indices.tolist()))) for g in groups
                             if g.role == "index_read"))
        if s is None or not reads:  # an element that reads no start index is not moved by its clamp
            return None
        return r, text(s.name), repr(s.before_clamp), repr(s.value), reads

    # a clamped start takes a frame of its own: fewer elements when they would not fit
    budget = max_frames
    while True:
        picks = [int(p) for p in spread(total, budget)]
        keys = list(dict.fromkeys(k for k in map(clamp_key, picks) if k is not None))
        if len(picks) + len(keys) <= max_frames or budget <= 1:
            break
        budget = max(1, min(budget - 1, max_frames - len(keys)))
    with_clamps = len(picks) + len(keys) <= max_frames
    sampled = len(picks) < total
    n_frames = len(picks) + (len(keys) if with_clamps else 0)
    plans: list[FramePlan] = []
    seen: set[tuple[Any, ...]] = set()

    def position(lines: list[str], p: int) -> str:
        if sampled:
            lines = lines + [text(Msg("animate.sampled", frame=len(plans) + 1, frames=n_frames,
                                      element=p + 1, total=total))]
        return "\n".join(lines)

    for p in picks:
        (r, idx), e, groups = item(p)
        ck = clamp_key(p)
        if with_clamps and ck is not None and ck not in seen:
            seen.add(ck)
            s = _clamp_of(e)
            assert s is not None
            cells = _slice_cells(view, r, idx, groups)
            count = sum(len(g.indices) for g in cells if g.role == "result")
            lines = _wrap(text(Msg("animate.clamp", name=text(s.name), before=format_value(s.before_clamp),
                                   after=format_value(s.value), count=count)), max_lines=3)
            lines += _step_lines(s)
            plans.append(FramePlan(position(lines, p), cells, None, walk.pending(p), "clamped", (r, idx)))
        lines = _element_caption(event, view, r, idx, e, groups)
        paint = groups + [CellGroup(f"result{r}", "result", np.asarray([idx], dtype=np.int64))]
        plans.append(FramePlan(position(lines, p), paint, None, walk.pending(p + 1), "element", (r, idx)))
    return plans


# --- the op's own steps -----------------------------------------------------------------

def _units(steps: list[Any]) -> list[list[int]]:
    """Steps grouped into what one sampled frame may stand for: a step that writes no result
    cell (select_and_scatter's select phase) goes with the step after it; a dropped step
    stands alone."""
    units: list[list[int]] = []
    open_: list[int] = []
    for i, s in enumerate(steps):
        open_.append(i)
        if s.results or getattr(s, "kind", "step") != "step":
            units.append(open_)
            open_ = []
    if open_:
        units.append(open_)
    return units


def _choose_steps(steps: list[Any], max_frames: int) -> list[int]:
    """The steps shown: all when they fit; else dropped steps (up to half the frames when
    there are others) and the other units spread over the whole range."""
    if len(steps) <= max_frames:
        return list(range(len(steps)))
    units = _units(steps)
    special = [u for u in units if getattr(steps[u[0]], "kind", "step") != "step"]
    plain = [u for u in units if getattr(steps[u[0]], "kind", "step") == "step"]
    room = max_frames // 2 if plain else max_frames
    keep = [special[int(k)] for k in spread(len(special), room)]
    left = max_frames - sum(len(u) for u in keep)
    size = max((len(u) for u in plain), default=1)
    keep += [plain[int(k)] for k in spread(len(plain), left // size)]
    chosen = sorted(i for u in keep for i in u)
    if not chosen:  # a unit longer than max_frames: its last steps
        chosen = units[-1][-max_frames:]
    return chosen


def _step_frames(event: Any, view: OpView, steps_of: Callable[..., list[Any]], elements: Elements | None,
                 max_frames: int) -> list[FramePlan]:
    chosen = None if not elements else [(int(r), tuple(int(i) for i in idx)) for r, idx in elements]
    call, inputs, outputs = event.call, list(event.inputs), list(event.outputs)
    steps = steps_of(call, inputs, outputs, chosen, STEP_BUDGET)
    notes: list[str] = []
    first = _first_tensor_result(event)
    if len(steps) >= STEP_BUDGET and chosen is None and first is not None:
        r, shape = first
        n = int(np.prod(shape, dtype=np.int64))
        picks = spread(n, max_frames)
        chosen = [(r, tuple(int(i) for i in np.unravel_index(int(p), shape))) for p in picks]
        steps = steps_of(call, inputs, outputs, chosen, STEP_BUDGET)
        notes.append(text(Msg("animate.sampled_elements", shown=len(chosen), total=n, budget=STEP_BUDGET)))
    if len(steps) >= STEP_BUDGET:
        notes.append(text(Msg("animate.cut", count=len(steps))))
    if not steps:
        return [_empty_plan(event)]
    shown = _choose_steps(steps, max_frames)
    wanted = set(shown)
    runs = any(s.running for s in steps)
    state = {f"result{r}": np.array(v) for r, v in enumerate(outputs) if isinstance(v, np.ndarray)}
    # without a start state, a cell some step computes is blank until its first step
    blank = {k: np.zeros(v.shape, dtype=bool) for k, v in state.items()}
    if runs and steps[0].start is None:
        for s in steps:
            for r, idx, _ in s.running:
                blank[f"result{r}"][tuple(idx)] = True
    plans: list[FramePlan] = []
    for i, step in enumerate(steps):
        if step.start is not None:
            for r, v in step.start.items():
                state[f"result{r}"] = np.array(v)
                blank[f"result{r}"][...] = False
        for r, idx, value in step.running:
            state[f"result{r}"][tuple(idx)] = value
            blank[f"result{r}"][tuple(idx)] = False
        if i not in wanted:
            continue
        by: dict[tuple[int | None, str], list[tuple[int, ...]]] = {}
        for s in step.sources:
            by.setdefault((s.operand, s.role), []).append(tuple(s.index))
        groups: list[CellGroup] = []
        for (operand, role), rows in by.items():
            groups += view.source_cells(operand, role, rows)
        for r, idx in step.results:
            groups.append(CellGroup(f"result{r}", "result", np.asarray([idx], dtype=np.int64)))
        lines = _wrap(text(step.caption), max_lines=4) + _running_reals(view, step) + notes
        if len(shown) < len(steps):
            lines.append(text(Msg("animate.sampled_step", frame=len(plans) + 1, frames=len(shown),
                                  step=i + 1, total=len(steps))))
        values = {k: v.copy() for k, v in state.items()} if runs else None
        pending = {k: Pending(np.flatnonzero(m), 0) for k, m in blank.items() if m.any()}
        kind = "dropped" if getattr(step, "kind", "step") == "dropped" else "step"
        paint = [g for g in groups if len(g.indices)]
        plans.append(FramePlan("\n".join(lines), paint, values, pending, kind))
    return plans


def plan_frames(event: Any, elements: Elements | None = None, *,
                max_frames: int = 400, view: OpView | None = None) -> list[FramePlan]:
    """The frames of ``event``: the op's own steps when its provenance lists them
    (``animation_steps``), else one frame per result element (or per chosen element); at
    most ``max_frames``, spread over the whole range when there are more. Never empty: an
    empty result gives one frame that says so."""
    if max_frames < 1:
        raise HloLabError(f"animate: max_frames must be at least 1, got {max_frames}")
    view = view or OpView(event)
    steps_of = getattr(view.prov, "animation_steps", None) if view.prov is not None else None
    if steps_of is not None:
        return _step_frames(event, view, steps_of, elements, max_frames)
    return _walk_frames(event, view, elements, max_frames)


# --- one palette for every frame ----------------------------------------------------------

BLEND_LEVELS = 5  # antialiasing steps between a fill and the ink drawn on it
GREYS = 32         # an even grey ramp: text in black, ink and grey on white
PALETTE_SIZE = 255  # colours; the 256th index is the GIF's "unchanged" (transparent) pixel
BOARD_COLORS_MIN_GAP = 6.0  # a board colour this far from every palette colour gets its own entry


def _style_colors() -> list[str]:
    """Every colour the style module names (its ``#RRGGBB`` constants, alone or in tuples)."""
    out = []
    for v in vars(style).values():
        for c in (v if isinstance(v, tuple) else (v,)):
            if isinstance(c, str) and len(c) == 7 and c.startswith("#"):
                try:
                    style.hex_to_rgb(c)
                except ValueError:
                    continue
                out.append(c.upper())
    return out


@lru_cache(maxsize=1)
def gif_palette() -> np.ndarray:
    """The fixed part of every GIF palette, [n, 3] uint8: the style's colours, a grey ramp,
    and between each fill and each ink drawn on it (cell values, edges, labels)
    BLEND_LEVELS antialiasing shades. ``board_palette`` completes it per animation."""
    from hlolab.trace.roles import ROLE_COLORS

    ink = "#222222"  # the style sheet's text colour: titles, labels, captions
    light = [style.CELL_FILL, style.PADDING_FILL, style.HOLE_FILL]
    roles = list(dict.fromkeys(ROLE_COLORS.values()))
    colors = ["#FFFFFF", "#000000", ink, style.MUTED_TEXT, style.CELL_EDGE, style.ACCENT, *light, *roles,
              *_style_colors()]
    pairs = [(f, i) for f in light for i in ("#000000", ink, style.MUTED_TEXT, style.CELL_EDGE)]
    pairs += [(f, i) for f in roles for i in (style.text_color(f), style.CELL_EDGE)]
    pairs += [(style.CELL_FILL, style.ACCENT)]
    rgb = [style.hex_to_rgb(c) for c in colors]
    rgb += [(g, g, g) for g in np.linspace(0, 255, GREYS).round().astype(int).tolist()]
    for f, i in pairs:
        a, b = np.asarray(style.hex_to_rgb(f), float), np.asarray(style.hex_to_rgb(i), float)
        for k in range(1, BLEND_LEVELS + 1):
            t = k / (BLEND_LEVELS + 1)
            rgb.append(tuple(int(round(v)) for v in a + (b - a) * t))
    out = np.asarray(list(dict.fromkeys(rgb)), dtype=np.uint8)
    assert len(out) <= PALETTE_SIZE, len(out)
    return out


def board_palette(pixels: np.ndarray) -> np.ndarray:
    """The palette of one animation: ``gif_palette`` and, in its free entries, the colours
    of the static board (``pixels``, [h, w, 3+]) farthest from it, most frequent first, so
    whatever else the board draws keeps its colour in every frame."""
    base = gif_palette()
    room = PALETTE_SIZE - len(base)
    rgb = pixels[..., :3].reshape(-1, 3)
    packed = rgb[:, 0].astype(np.int64) << 16 | rgb[:, 1].astype(np.int64) << 8 | rgb[:, 2]
    colors, counts = np.unique(packed, return_counts=True)
    cand = np.stack([colors >> 16, (colors >> 8) & 255, colors & 255], axis=-1).astype(np.int64)
    far = np.sqrt(((cand[:, None, :] - base[None, :, :].astype(np.int64)) ** 2).sum(-1).min(axis=1))
    keep = far > BOARD_COLORS_MIN_GAP
    cand, counts = cand[keep], counts[keep]
    order = np.lexsort((colors[keep], -counts))  # most frequent first; ties by colour: deterministic
    extra: list[np.ndarray] = []
    for c in cand[order]:
        if len(extra) >= room:
            break
        if all(np.sqrt(((c - e) ** 2).sum()) > BOARD_COLORS_MIN_GAP for e in extra):
            extra.append(c)
    return np.concatenate([base, np.asarray(extra, dtype=np.uint8).reshape(-1, 3)]) if extra else base


class _Quantizer:
    """RGB -> palette index, exactly the nearest palette colour (squared RGB distance),
    through a 2^24-entry table filled the first time a colour is seen."""

    def __init__(self, palette: np.ndarray):
        self.palette = palette.astype(np.int32)
        self.lut = np.zeros(1 << 24, dtype=np.uint8)
        self.known = np.zeros(1 << 24, dtype=bool)

    def __call__(self, rgba: np.ndarray) -> np.ndarray:
        """``rgba``: [h, w] little-endian uint32 RGBA pixels -> [h, w] uint8 indices."""
        key = rgba & np.uint32(0xFFFFFF)
        new = ~self.known[key]
        if new.any():
            u = np.unique(key[new])
            rgb = np.stack([u & 255, (u >> 8) & 255, (u >> 16) & 255], axis=-1).astype(np.int32)
            d = ((rgb[:, None, :] - self.palette[None, :, :]) ** 2).sum(axis=-1)
            self.lut[u] = np.argmin(d, axis=1).astype(np.uint8)
            self.known[u] = True
        return self.lut[key]


@lru_cache(maxsize=2)
def _quantizer_for(palette: bytes) -> _Quantizer:
    return _Quantizer(np.frombuffer(palette, dtype=np.uint8).reshape(-1, 3))


def _quantizer(palette: np.ndarray | None = None) -> _Quantizer:
    """The quantizer of ``palette`` (default ``gif_palette``), its table kept between GIFs."""
    return _quantizer_for((gif_palette() if palette is None else palette).tobytes())


# --- drawing the frames -----------------------------------------------------------------

Box = tuple[int, int, int, int]  # x0, y0, x1, y1 pixels, rows from the top, end exclusive
CAPTION_PT = 9.0
CAPTION_SPACING = 1.3
CAPTION_INK = "#222222"


@lru_cache(maxsize=64)
def _ink(color: str) -> np.ndarray:
    """A matplotlib colour as int32 RGB 0..255."""
    from matplotlib.colors import to_rgb

    return np.asarray([int(round(v * 255)) for v in to_rgb(color)], dtype=np.int32)


class _Glyphs:
    """Text drawn straight from FreeType (matplotlib's FT2Font) into a pixel array: one C
    call renders a whole string, and a string seen before is not rendered again. Agg
    draws text glyph by glyph from Python, which made text the largest cost per frame;
    every value and caption of an animation is drawn this way, so they all look alike."""

    def __init__(self, family: str, size_pt: float, dpi: float):
        from matplotlib.backends.backend_agg import get_hinting_flag
        from matplotlib.font_manager import FontProperties, findfont, get_font

        self.font = get_font(findfont(FontProperties(family=family)))
        self.size, self.dpi = size_pt, dpi
        self.flags = get_hinting_flag()
        self.px = size_pt * dpi / 72
        self.ascent = int(round(self.px * self.font.ascender / self.font.units_per_EM))
        self.cache: dict[str, tuple[np.ndarray, int, int, float]] = {}
        self.alpha: dict[str, np.ndarray] = {}  # coverage as int32 [h, w, 1], for blending

    def glyphs(self, s: str) -> tuple[np.ndarray, int, int, float]:
        """(coverage [h, w] uint8, x of its first column from the pen, rows below the
        baseline, advance width in pixels)."""
        got = self.cache.get(s)
        if got is None:
            f = self.font
            f.clear()
            f.set_size(self.size, self.dpi)
            f.set_text(s, 0.0, flags=self.flags)
            f.draw_glyphs_to_bitmap(antialiased=True)
            xo, _ = f.get_bitmap_offset()
            got = (np.array(f.get_image(), dtype=np.uint8), int(round(xo / 64)),
                   int(round(f.get_descent() / 64)), f.get_width_height()[0] / 64)
            if len(self.cache) > 4096:
                self.cache.clear()
                self.alpha.clear()
            self.cache[s] = got
        return got

    def draw(self, px: np.ndarray, s: str, x: float, baseline: int, color: str) -> Box | None:
        """``s`` with its pen starting at column ``x`` on row ``baseline``, every pixel
        blended toward ``color`` by the glyph coverage; the box drawn (None: nothing)."""
        cov, xo, below, _ = self.glyphs(s)
        y1 = baseline + below
        y0, x0 = y1 - cov.shape[0], int(round(x)) + xo
        h, w = px.shape[:2]
        cy0, cx0 = max(y0, 0), max(x0, 0)
        cy1, cx1 = min(y1, h), min(x0 + cov.shape[1], w)
        if cy1 <= cy0 or cx1 <= cx0:
            return None
        alpha = self.alpha.get(s)
        if alpha is None:
            alpha = self.alpha[s] = cov[:, :, None].astype(np.int32)
        ink = _ink(color)
        a = alpha[cy0 - y0:cy1 - y0, cx0 - x0:cx1 - x0]
        bg = px[cy0:cy1, cx0:cx1, :3].astype(np.int32)
        px[cy0:cy1, cx0:cx1, :3] = bg + ((ink - bg) * a + 127) // 255
        return cx0, cy0, cx1, cy1


MONO_ADVANCE = 1233 / 2048  # DejaVu Sans Mono's advance, in ems


def caption_size(dpi: float) -> tuple[float, int]:
    """(points, pixels per character) of the caption font: about CAPTION_PT, made so one
    character advances a whole number of pixels, so a glyph looks the same wherever it is."""
    advance = max(1, int(round(CAPTION_PT * dpi / 72 * MONO_ADVANCE)))
    return advance * 72 / (dpi * MONO_ADVANCE), advance


class _MonoGlyphs(_Glyphs):
    """Monospaced lines put together from glyphs rendered once each: every character sits
    on a whole pixel (``caption_size``), so a line is its characters' bitmaps side by side."""

    PAD = 3  # columns a glyph may reach left or right of its advance

    def __init__(self, dpi: float):
        size, self.advance = caption_size(dpi)
        super().__init__("DejaVu Sans Mono", size, dpi)
        self.above = int(np.ceil(self.px * self.font.ascender / self.font.units_per_EM)) + 1
        self.below = int(np.ceil(-self.px * self.font.descender / self.font.units_per_EM)) + 1
        self.cells: dict[str, int] = {}
        self.atlas = np.zeros((0, self.above + self.below, self.advance + 2 * self.PAD), dtype=np.uint16)

    def _cell(self, c: str) -> int:
        k = self.cells.get(c)
        if k is None:
            cov, xo, below, _ = super().glyphs(c)
            cell = np.zeros(self.atlas.shape[1:], dtype=np.uint16)
            h, w = cov.shape
            y1 = self.above + below
            x0 = self.PAD + xo
            ys, xs = max(y1 - h, 0), max(x0, 0)
            ye, xe = min(y1, cell.shape[0]), min(x0 + w, cell.shape[1])
            if ye > ys and xe > xs:
                cell[ys:ye, xs:xe] = cov[ys - (y1 - h):ye - (y1 - h), xs - x0:xe - x0]
            k = self.cells[c] = len(self.atlas)
            self.atlas = np.concatenate([self.atlas, cell[None]])
        return k

    def glyphs(self, s: str) -> tuple[np.ndarray, int, int, float]:
        got = self.cache.get(s)
        if got is None:
            which = [self._cell(c) for c in s]  # first: it may add glyphs to the atlas
            g = self.atlas[which]  # [n, h, w]
            n, adv = len(s), self.advance
            out = np.zeros((self.atlas.shape[1], n * adv + self.atlas.shape[2]), dtype=np.uint16)
            for c in range(self.atlas.shape[2]):  # per column of a glyph cell, every glyph at once
                out[:, c:c + n * adv:adv] += g[:, :, c].T
            got = (np.minimum(out, 255).astype(np.uint8), -self.PAD, self.below, float(n * adv))
            if len(self.cache) > 4096:
                self.cache.clear()
                self.alpha.clear()
            self.cache[s] = got
        return got


class _Canvas:
    """The board as pixels: the static figure drawn once with Agg, then per frame only what
    differs from it drawn into the same pixel buffer, and the boxes that changed reported,
    so only those are mapped to the palette again.

    Three images: ``pristine`` (the board with every result value blank), ``base`` (plus
    the result values shown so far) and the canvas itself (plus this frame's painted cells
    and caption). Cell values and the caption are drawn by ``_Glyphs``."""

    def __init__(self, board: Board, caption_at: tuple[float, float], caption_lines: int):
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.patches import Rectangle

        self.board = board
        fig = board.fig
        self.canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
        self.cell = Rectangle((0.0, 0.0), 1.0, 1.0, edgecolor=style.CELL_EDGE, linewidth=0.6, zorder=2,
                              visible=False)
        board.ax.add_patch(self.cell)
        # per drawn tensor its values; a quantized tensor's real values under them are a
        # second text key (``key + REAL``, None where a cell has none), drawn the same way
        texts: dict[str, list[Any]] = {k: v.texts for k, v in board.views.items() if v.texts}
        for k, v in board.views.items():
            if v.texts and v.real_texts:
                texts[k + REAL] = v.real_texts
        self.texts = texts
        # the result cells' values change (running values, progressive fill): drawn per frame
        self.dynamic = [k for k in texts if k.startswith("result")]
        was = {k: [t is not None and t.get_visible() for t in ts] for k, ts in texts.items()}
        for ts in texts.values():
            for t in ts:
                if t is not None:
                    t.set_visible(False)
        try:
            self.canvas.draw()
        finally:
            for k, ts in texts.items():
                for t, v in zip(ts, was[k], strict=True):
                    if t is not None:
                        t.set_visible(v)
        self.renderer = self.canvas.get_renderer()
        dpi = float(fig.dpi)
        self.pristine = self.pixels().copy()
        self.height, self.width = self.pristine.shape[:2]
        # per tensor: the glyph renderer of its values and each value's pen anchor
        self.values: dict[str, tuple[_Glyphs, np.ndarray]] = {}
        for k, ts in texts.items():
            if k.endswith(REAL):  # under the storage value, where layout puts it (also where none is)
                corners = np.asarray(board.views[k.removesuffix(REAL)].corners, dtype=float)
                anchors = self._pixel(corners + np.array([0.5, REAL_Y]) if len(corners) else corners)
            else:
                anchors = self._pixel(np.asarray([t.get_position() for t in ts], dtype=float))
            size = next(float(t.get_fontsize()) for t in ts if t is not None) if any(
                t is not None for t in ts) else REAL_FONT
            self.values[k] = (_glyphs("DejaVu Sans", size, dpi), anchors)
        # the static values (operands), with the boxes they cover: a painted neighbour redraws them
        self.value_boxes: dict[str, np.ndarray] = {}
        for k, ts in texts.items():
            if k not in self.dynamic:
                boxes = np.zeros((len(ts), 4), dtype=np.int64)
                for s, t in enumerate(ts):
                    if t is not None and t.get_text():
                        got = self._value(self.pristine, k, s, t.get_text(), str(t.get_color()))
                        boxes[s] = got if got is not None else 0
                self.value_boxes[k] = boxes
        self.base = self.pristine.copy()
        self.pixels()[...] = self.base
        self.shown = {k: [None] * len(texts[k]) for k in self.dynamic}
        self.extents = {k: np.zeros((len(texts[k]), 4), dtype=np.int64) for k in self.dynamic}
        self.boxes = {k: self._cell_boxes(k) for k in board.views}
        for k in texts:
            if k.endswith(REAL):
                self.boxes[k] = self.boxes[k.removesuffix(REAL)]
        self.text = _mono(dpi)
        self.line_px = int(round(self.text.px * CAPTION_SPACING))
        x, y = self._pixel(np.asarray([caption_at], dtype=float))[0]
        self.caption_xy = float(x), int(round(y))
        self.caption_box = self._clip((x - 4, y - 2, self.width, y + (caption_lines + 1) * self.line_px))
        self.last: list[Box] = []  # what the previous frame drew over the base

    def pixels(self) -> np.ndarray:
        """The canvas's RGBA pixels, [h, w, 4] uint8, shared with Agg (writes go to the canvas)."""
        return np.asarray(self.canvas.buffer_rgba())

    def _pixel(self, xy: np.ndarray) -> np.ndarray:
        """Board units -> pixel (column, row from the top), float [n, 2]."""
        if not len(xy):
            return np.zeros((0, 2))
        p = self.board.ax.transData.transform(xy)
        return np.stack([p[:, 0], self.height - p[:, 1]], axis=-1)

    def _clip(self, box: Sequence[float]) -> Box:
        return (max(int(box[0]), 0), max(int(box[1]), 0), min(int(box[2]), self.width),
                min(int(box[3]), self.height))

    def _cell_boxes(self, key: str) -> np.ndarray:
        """Per drawn cell, its pixel box with the edge line around it."""
        view = self.board.views[key]
        if not len(view.corners):
            return np.zeros((0, 4), dtype=np.int64)
        a, b = self._pixel(view.corners), self._pixel(view.corners + 1.0)
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        return np.concatenate([np.floor(lo) - 1, np.ceil(hi) + 2], axis=-1).astype(np.int64)

    def _value(self, px: np.ndarray, key: str, s: int, value: str, color: str) -> Box | None:
        """Cell ``s``'s value, centred on its anchor as the board's text artist would be."""
        if not value or key not in self.values:
            return None
        glyphs, anchors = self.values[key]
        _, _, _, advance = glyphs.glyphs(value)
        x, y = anchors[s]
        # va=center on a line of digits: the digit height (0.73 em) centred on the anchor
        baseline = int(round(y + 0.365 * glyphs.px))
        return glyphs.draw(px, value, x - advance / 2, baseline, color)

    def _shown(self, key: str, s: int) -> str:
        """The value cell ``s`` of tensor ``key`` shows now ("" when blank or without one)."""
        ts = self.texts.get(key, [])
        if s >= len(ts):
            return ""
        if key in self.shown:
            return self.shown[key][s] or ""
        return ts[s].get_text() if ts[s] is not None else ""

    def _color(self, key: str, s: int) -> str:
        """The colour the board gives cell ``s``'s value of ``key`` (muted on padding)."""
        t = self.texts[key][s]
        return str(t.get_color()) if t is not None else style.MUTED_TEXT

    def _partner(self, key: str) -> str | None:
        """The other text key of the same cells (storage <-> real value), if drawn."""
        other = key.removesuffix(REAL) if key.endswith(REAL) else key + REAL
        return other if other in self.texts else None

    def undo(self) -> list[Box]:
        """The base image back where the previous frame drew; those boxes."""
        px = self.pixels()
        for x0, y0, x1, y1 in self.last:
            px[y0:y1, x0:x1] = self.base[y0:y1, x0:x1]
        done, self.last = self.last, []
        return done

    def update_results(self, want: dict[str, list[str | None]]) -> list[Box]:
        """Bring the result cells to ``want`` (text per drawn cell, None: blank) in the base
        image: each changed cell is restored from the blank board and its value drawn. A
        value wider than its cell is restored with it, and every value the restored area
        cuts into is restored and drawn again, so no pixel is drawn twice. The boxes changed."""
        px = self.pixels()
        changed: list[Box] = []
        for key in self.dynamic:
            if key.endswith(REAL):
                continue  # with its storage key: both values share the cells they restore
            keys = [k for k in (key, self._partner(key)) if k is not None and k in self.shown]
            todo = [(k, s) for k in keys
                    for s, (a, b) in enumerate(zip(self.shown[k], want[k], strict=True)) if a != b]
            done: set[tuple[str, int]] = set()
            while todo:
                k, s = todo.pop()
                if (k, s) in done:
                    continue
                done.add((k, s))
                ext = self.extents[k]
                box = np.asarray(self.boxes[k][s]).copy()
                if ext[s].any():  # the value drawn now may reach past its cell
                    box[:2] = np.minimum(box[:2], ext[s][:2])
                    box[2:] = np.maximum(box[2:], ext[s][2:])
                x0, y0, x1, y1 = self._clip(box)
                px[y0:y1, x0:x1] = self.pristine[y0:y1, x0:x1]
                changed.append((x0, y0, x1, y1))
                for k2 in keys:  # every value the restored area cuts into, of either key
                    e2 = self.extents[k2]
                    hit = (e2[:, 0] < x1) & (e2[:, 2] > x0) & (e2[:, 1] < y1) & (e2[:, 3] > y0)
                    hit[s] |= k2 != k  # the cell's other value was erased with it
                    todo += [(k2, int(i)) for i in np.flatnonzero(hit) if (k2, int(i)) not in done]
            for k, s in sorted(done):
                value = self.shown[k][s] = want[k][s]
                drawn = self._value(px, k, s, value, self._color(k, s)) if value else None
                self.extents[k][s] = drawn if drawn is not None else 0
                if drawn is not None:
                    changed.append(drawn)
        for x0, y0, x1, y1 in changed:
            self.base[y0:y1, x0:x1] = px[y0:y1, x0:x1]
        return changed

    def paint(self, cells: list[tuple[str, int, str]], caption: list[str]) -> list[Box]:
        """Cells painted over the base ((tensor, drawn cell, colour), in drawing order) and
        the caption; the boxes drawn."""
        px = self.pixels()
        drawn: list[Box] = []
        painted: dict[str, list[int]] = {}
        for key, s, color in cells:
            view = self.board.views[key]
            x, y = view.corners[s]
            hole = view.kinds is not None and view.index.shape[1] > 0 and \
                int(view.kinds[view.layout.local(view.index[s:s + 1])][0]) == 2
            self.cell.set_xy((float(x), float(y)))
            self.cell.set_facecolor(color)
            self.cell.set_linestyle((0, (2, 2)) if hole else "solid")
            self.cell.set_visible(True)
            self.cell.draw(self.renderer)
            self.cell.set_visible(False)
            drawn.append(self._clip(self.boxes[key][s]))
            painted.setdefault(key, []).append(s)
        for key, s, color in cells:
            for k in (key, self._partner(key)):  # the stored value, and a real value under it
                if k is None:
                    continue
                box = self._value(px, k, s, self._shown(k, s), style.text_color(color))
                if box is not None:
                    drawn.append(box)
        # a value wider than its cell that a painted neighbour covered is drawn again on top
        for key, slots in painted.items():
            cb = self.boxes[key][slots]
            for k in (key, self._partner(key)):
                ext = self.extents.get(k, self.value_boxes.get(k)) if k is not None else None
                if ext is None or not len(ext):
                    continue
                hit = ((ext[:, None, 0] < cb[None, :, 2]) & (ext[:, None, 2] > cb[None, :, 0])
                       & (ext[:, None, 1] < cb[None, :, 3]) & (ext[:, None, 3] > cb[None, :, 1])).any(axis=1)
                hit[slots] = False
                for s in np.flatnonzero(hit & ext.any(axis=1)):
                    box = self._value(px, k, int(s), self._shown(k, int(s)), self._color(k, int(s)))
                    if box is not None:
                        drawn.append(box)
        x, top = self.caption_xy
        for n, line in enumerate(caption):
            if line.strip():
                self.text.draw(px, line, x, top + self.text.ascent + n * self.line_px, CAPTION_INK)
        drawn.append(self.caption_box)
        self.last = drawn
        return drawn


def _dequantized(stored: np.ndarray, qt: Any) -> np.ndarray:
    """Stored integers (a whole tensor: per-axis parameters follow its dims) -> real values."""
    from hlolab.ops.quant_ops import dequantize  # the ops package imports the render package lazily

    return dequantize(np.asarray(stored), qt)


@lru_cache(maxsize=16)
def _glyphs(family: str, size_pt: float, dpi: float) -> _Glyphs:
    return _Glyphs(family, size_pt, dpi)


@lru_cache(maxsize=4)
def _mono(dpi: float) -> _MonoGlyphs:
    return _MonoGlyphs(dpi)


class Animation:
    """Frames of one op instance, drawn on one board; save as GIF, MP4 or PNG frames."""

    def __init__(self, event: Any, plans: list[FramePlan], view: OpView, progress: bool = False):
        self.event = event
        self.plans = plans or [_empty_plan(event)]
        self.view = view
        self.progress = progress
        short = event.op.name.removeprefix("stablehlo.")
        self.board: Board = view.build(board=Board(f"{short}: how each result element is derived"))
        self.board.clear_operand_labels(gap=1.0)
        self._lines = [p.caption.split("\n") for p in self.plans]
        self._caption_lines = max(len(w) for w in self._lines)
        longest = max((len(line) for w in self._lines for line in w), default=0)
        self.roles = self._roles()
        tensors_w = self.board.width
        # the caption's character advance and line height, in board units
        with style.styled():
            import matplotlib

            dpi = float(matplotlib.rcParams["figure.dpi"])
        size, advance = caption_size(dpi)
        char_w = advance / dpi / self.board.cell_inches
        self.board.width = max(tensors_w + LEGEND_W, view.x + longest * char_w)
        # the cell kinds drawn (padding, holes, cropped cells) join the roles in the legend
        self.cell_kinds = sorted({int(k) for b in self.board.views.values() if b.kinds is not None
                                  for k in np.unique(b.kinds)} - {0})
        self.legend_labels = {r: view.role_label(r) for r in self.roles}
        longest_label = max((len(t) for t in self.legend_labels.values()), default=0)
        self.board.width = max(self.board.width, tensors_w + 2.0 + longest_label * 0.2)
        legend_h = 0.9 * (len(self.roles) + len(self.cell_kinds)) + 0.6
        self.board.height = max(self.board.height, view.y + legend_h)
        self.caption_y = self.board.height + 0.7
        line_h = size / 72 * CAPTION_SPACING / self.board.cell_inches
        self.board.height = self.caption_y + line_h * (self._caption_lines + 0.5)
        with style.styled():
            self.board.draw()
            self.board.legend(self.roles, tensors_w + 1.0, view.y, self.cell_kinds, self.legend_labels)
        self.figure = self.board.fig
        self._canvas: _Canvas | None = None
        self._index: np.ndarray | None = None  # the previous GIF frame, as palette indices
        self._palette: np.ndarray | None = None
        self._dirty: list[Box] = []  # boxes drawn since the last gif_frame

    def _roles(self) -> list[str]:
        """The roles any frame paints, in the style's precedence order (the legend)."""
        used = {g.role for p in self.plans for g in p.paint}
        return [r for r in style.ROLE_ORDER if r in used]

    @property
    def n_frames(self) -> int:
        return len(self.plans)

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) of every frame in pixels."""
        c = self._board_canvas()
        return c.width, c.height

    def _board_canvas(self) -> _Canvas:
        if self._canvas is None:
            with style.styled():
                self._canvas = _Canvas(self.board, (self.view.x, self.caption_y), self._caption_lines)
        return self._canvas

    # --- frames -------------------------------------------------------------------------
    def _result_text(self, plan: FramePlan) -> dict[str, list[str | None]]:
        """What each drawn result cell shows at ``plan``: its (running) value, None when blank."""
        out: dict[str, list[str | None]] = {}
        for key in self._board_canvas().dynamic:
            real = key.endswith(REAL)
            base = key.removesuffix(REAL)
            view = self.board.views[base]
            arr = plan.result_values.get(base) if plan.result_values is not None else None
            arr = np.asarray(view.values if arr is None else arr)
            at = tuple(view.index.T) if view.index.shape[1] else ()
            cells = arr[at] if view.index.shape[1] else arr.reshape(1)
            if real:  # the running stored values' real values (per-axis: on the whole tensor)
                qt = self.view.quant_type(base)
                full = _dequantized(arr, qt) if qt is not None else np.full(arr.shape, np.nan)
                reals = full[at] if view.index.shape[1] else full.reshape(1)
                shown: list[str | None] = [format_cell(v) if np.isfinite(v) else None for v in reals]
            else:
                shown = [format_cell(v) for v in cells]
            pend = plan.pending.get(base)
            if pend is not None:
                m = pend.mask(arr.shape)
                blank = m[at] if view.index.shape[1] else m.reshape(1)
                shown = [None if b else s for s, b in zip(shown, blank.tolist(), strict=True)]
            out[key] = shown
        return out

    def _paint(self, plan: FramePlan) -> list[tuple[str, int, str]]:
        """(tensor, drawn cell, colour) per painted cell, each cell once, in its most
        specific role's colour."""
        order = {r: i for i, r in enumerate(style.ROLE_ORDER)}
        color: dict[tuple[str, int], str] = {}
        for g in sorted(plan.paint, key=lambda g: -order.get(g.role, len(order))):
            if g.key in self.board.views:
                for s in self.board.slots(g.key, g.indices):
                    color[(g.key, s)] = style.role_color(g.role)
        return [(k, s, c) for (k, s), c in color.items()]

    def draw_frame(self, k: int) -> np.ndarray:
        """Draw frame ``k`` (in any order; fastest in order): the canvas's RGBA pixels
        ([h, w, 4] uint8, the canvas itself: copy to keep)."""
        canvas = self._board_canvas()
        plan = self.plans[k]
        with style.styled():
            self._dirty += canvas.undo()
            self._dirty += canvas.update_results(self._result_text(plan))
            self._dirty += canvas.paint(self._paint(plan), self._lines[k])
        return canvas.pixels()

    def frame_pixels(self, k: int) -> np.ndarray:
        """Frame ``k`` as RGB pixels, [h, w, 3] uint8 (a copy)."""
        return np.ascontiguousarray(self.draw_frame(k)[..., :3])

    @property
    def palette(self) -> np.ndarray:
        """The GIF palette of this animation, [n <= 255, 3] uint8 (``board_palette``)."""
        if self._palette is None:
            self._palette = board_palette(self._board_canvas().pristine)
        return self._palette

    def gif_frame(self, k: int) -> np.ndarray:
        """Frame ``k`` as indices into ``palette``, [h, w] uint8; only the boxes drawn since
        the last call are mapped again."""
        quantize = _quantizer(self.palette)
        rgba = self.draw_frame(k).view("<u4")[..., 0]
        if self._index is None:
            self._index = quantize(rgba)
        else:
            for x0, y0, x1, y1 in _spans(self._dirty, rgba.shape[0]):
                self._index[y0:y1, x0:x1] = quantize(rgba[y0:y1, x0:x1])
        self._dirty = []
        return self._index.copy()

    def _frames(self) -> Iterator[int]:
        if not self.progress:
            yield from range(self.n_frames)
            return
        from rich.console import Console
        from rich.progress import Progress

        with Progress(console=Console(stderr=True), transient=True) as bar:
            task = bar.add_task("rendering frames", total=self.n_frames)
            for k in range(self.n_frames):
                yield k
                bar.advance(task)

    # --- writing ------------------------------------------------------------------------
    def save_gif(self, path: str | Path, fps: float = 2.0) -> Path:
        """All frames as one GIF: every frame mapped to the one style palette, all written
        by Pillow in one call (same input -> same bytes)."""
        from PIL import Image

        pal = self.palette
        unchanged = len(pal)  # the transparent index: "as in the frame before"
        palette = np.concatenate([pal, [[255, 255, 255]]]).astype(np.uint8).reshape(-1).tobytes()
        w, h = self.size
        images = []
        previous: np.ndarray | None = None
        for k in self._frames():
            idx = self.gif_frame(k)
            shown = idx
            if previous is not None:
                # pixels that did not change are transparent over the previous frame (which stays:
                # disposal 1), so a frame costs what changed, not its bounding box
                shown = np.where(idx == previous, np.uint8(unchanged), idx)
            previous = idx
            im = Image.frombuffer("P", (w, h), np.ascontiguousarray(shown), "raw", "P", 0, 1)
            im.putpalette(palette)
            images.append(im)
        return _atomic(Path(path), lambda tmp: images[0].save(
            tmp, format="GIF", save_all=True, append_images=images[1:], duration=int(1000 / fps),
            loop=0, optimize=False, transparency=unchanged, disposal=1))

    def save_frames(self, directory: str | Path, fmt: str = "png") -> list[Path]:
        """Every frame as its own PNG: DIR/frame_000.png, ... (RGB, same input -> same bytes)."""
        from PIL import Image

        if fmt != "png":
            raise HloLabError(f"animation frames are written as png, not {fmt}")
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        paths = []
        for k in self._frames():
            im = Image.fromarray(self.frame_pixels(k), "RGB")
            paths.append(_atomic(out / f"frame_{k:03d}.png", lambda tmp, im=im: im.save(tmp, format="PNG")))
        return paths

    def save_mp4(self, path: str | Path, fps: float = 2.0) -> Path:
        """All frames as an H.264 MP4 through ffmpeg (a clean HloLabError without it)."""
        from matplotlib import animation

        if not animation.writers.is_available("ffmpeg"):
            raise HloLabError("MP4 needs ffmpeg, which is not installed; use --format gif")
        w, h = self.size
        ew, eh = w + w % 2, h + h % 2  # yuv420p needs even sizes: pad with the white background

        def write(tmp: Path) -> None:
            cmd = [animation.FFMpegWriter.bin_path(), "-y", "-loglevel", "error", "-f", "rawvideo",
                   "-pix_fmt", "rgb24", "-s", f"{ew}x{eh}", "-r", f"{fps:g}", "-i", "pipe:0",
                   "-an", "-vcodec", "libx264", "-pix_fmt", "yuv420p", "-f", "mp4", str(tmp)]
            proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stderr=subprocess.PIPE)
            assert proc.stdin is not None and proc.stderr is not None
            frame = np.full((eh, ew, 3), 255, dtype=np.uint8)
            try:
                for k in self._frames():
                    frame[:h, :w] = self.draw_frame(k)[..., :3]
                    proc.stdin.write(frame.tobytes())
            finally:
                proc.stdin.close()
                err = proc.stderr.read()
                code = proc.wait()
            if code != 0:
                raise HloLabError(f"ffmpeg failed ({code}): {err.decode(errors='replace').strip()}")

        return _atomic(Path(path), write)

    def close(self) -> None:
        import matplotlib.pyplot as plt

        plt.close(self.figure)


TILE = 32  # rows per band when changed boxes are gathered for mapping to the palette
GAP = 64   # columns between two changed stretches of a band that are mapped separately


def _spans(boxes: list[Box], height: int) -> list[Box]:
    """The changed ``boxes`` gathered into few boxes to map to the palette: per band of
    TILE rows, the stretches of columns they cover (stretches less than GAP apart merged),
    so a frame is a few dozen numpy calls however many cells changed."""
    bands: dict[int, list[tuple[int, int]]] = {}
    for x0, y0, x1, y1 in boxes:
        if x1 > x0 and y1 > y0:
            for band in range(y0 // TILE, (y1 - 1) // TILE + 1):
                bands.setdefault(band, []).append((x0, x1))
    out: list[Box] = []
    for band, runs in sorted(bands.items()):
        runs.sort()
        lo, hi = runs[0]
        for a, b in runs[1:] + [(1 << 30, 1 << 30)]:
            if a - hi > GAP:
                out.append((lo, band * TILE, hi, min((band + 1) * TILE, height)))
                lo, hi = a, b
            else:
                hi = max(hi, b)
    return out


def _atomic(path: Path, write: Callable[[Path], Any]) -> Path:
    """``write`` to a temporary file beside ``path``, then rename it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.tmp{path.suffix}")
    try:
        write(tmp)
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def _focus(plans: list[FramePlan]) -> list[Element]:
    """Result cells the board must keep visible: those of the first and last frames."""
    out: list[Element] = []
    for p in plans[:FOCUS] + plans[-FOCUS:]:
        for g in p.paint:
            if g.role == "result" and g.key.startswith("result") and len(g.indices):
                out.append((int(g.key.removeprefix("result")), tuple(int(i) for i in g.indices[0])))
    return list(dict.fromkeys(out))[:2 * FOCUS]


def animate(event: Any, elements: Elements | None = None, *,
            max_frames: int = 400, progress: bool = False) -> Animation:
    """The animation of ``event`` (frames: see ``plan_frames``)."""
    plans = plan_frames(event, elements, max_frames=max_frames, view=OpView(event))
    view = OpView(event, focus=_focus(plans))
    return Animation(event, plans, view, progress)
