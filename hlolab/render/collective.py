"""A collective op instance drawn as the spec's figures draw it: the processes of its
group side by side, one column each, operands above and results below.

Every operand block is filled with the colour of its process (``style.PROCESS_COLORS``,
by slot in the group); every result element with the colour of the process it came
from, read from the op's own cross-process provenance (``Source.process``), so an
all_to_all reads at a glance: each result is one block from each process. Elements
combined from every member (all_reduce, reduce_scatter) are ``style.COMBINED_FILL``;
elements with no source (collective_permute's zeros) stay white.

For one chosen result element (on the event's process) its source elements are
outlined, arrows drawn from each to it, and the op's explanation written under the
picture. The GIF has one frame per exchange step (one per member of the group, in
group order: the elements that member sends reach their places), then the chosen
element's frame.

``collective_model`` computes everything drawn (columns, colours, the chosen
element's sources) before any drawing; ``draw_collective`` and ``write_collective``
draw it.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hlolab.errors import ExecutionError, HloLabError
from hlolab.messages import Msg, text
from hlolab.render import style
from hlolab.render.layout import Board, TensorLayout
from hlolab.trace.explain import format_value
from hlolab.trace.provenance import value_shape

COMBINED = -1  # a result element combined from every member of the group
NO_SOURCE = -2  # a result element no member's element reaches (zeros)

COLUMN_GAP = 2.5  # cells between two process columns
ROW_GAP = 3.0     # cells between the operands and the results (room for the arrows)
TITLE_ROOM = 1.6  # the column title above its first tensor
CAPTION_WIDTH = 90  # characters per caption line
CAPTION_LINE = 0.5  # a caption line's height in cells


@dataclass
class Block:
    """One tensor of one process's column."""

    key: str        # the board key: "p{process}.operand{i}" / "p{process}.result{i}"
    label: str
    values: np.ndarray
    source: np.ndarray  # int64, values-shaped: the process each element comes from (or COMBINED,
    # NO_SOURCE); for an operand its own process everywhere
    dest: np.ndarray | None = None  # operands: the process each element goes to (COMBINED: to
    # several, NO_SOURCE: to none)
    reals: np.ndarray | None = None  # a quantized tensor's real values (drawn under the storage)


@dataclass
class Column:
    process: int
    title: str
    operands: list[Block]
    results: list[Block]


@dataclass
class ChosenSource:
    """One source element of the chosen result element."""

    process: int
    operand: int        # the operand number on that process
    index: tuple[int, ...]
    role: str


@dataclass
class CollectiveModel:
    """Everything the collective picture draws, worked out before drawing."""

    op: str                       # the op's full name
    grid: tuple[int, int]
    group: list[int]              # the members' processes, in group order
    columns: list[Column]
    colors: dict[int, str]        # process -> fill colour
    process: int                  # the process of the chosen element
    result: int
    index: tuple[int, ...]
    sources: list[ChosenSource]
    title: str
    explain: list[Any] = field(default_factory=list)  # diagram Lines
    steps: list[str] = field(default_factory=list)    # one caption per exchange step
    chosen: str = ""                                  # the chosen element's caption

    def column(self, process: int) -> Column:
        return next(c for c in self.columns if c.process == process)


def is_collective(event: Any) -> bool:
    """Whether ``event`` is a collective that met its group (one this module can draw)."""
    return getattr(event.call, "members", None) is not None


def _tensors(values: Any) -> list[np.ndarray]:
    if values is None:
        return []
    if isinstance(values, np.ndarray):
        return [values]
    return [v for v in values if isinstance(v, np.ndarray)]


def _member_results(m: Any, event: Any) -> list[Any]:
    """A member's results: the event's own, or what its rendezvous returned."""
    if m.process == event.frame.process:
        return list(event.outputs)
    arrival = getattr(m.ctx, "arrival", None)
    if arrival is None:
        raise ExecutionError(f"{event.op.name}: {_pname(m.process, event.frame.grid)} has no result yet")
    r = arrival.result
    if r is None:
        return []
    return [r] if isinstance(r, np.ndarray) else list(r)


def _reals(x: Any, types: Sequence[Any], k: int) -> np.ndarray | None:
    """The real values of a quantized tensor (its type ``types[k]``), None when not quantized,
    as every other diagram draws them under the stored integers."""
    from hlolab.ops.quant_ops import dequantize, quantized_element  # ops import render lazily

    qt = quantized_element(types[k]) if k < len(types) else None
    if qt is None or not isinstance(x, np.ndarray) or str(x.dtype) != str(np.dtype(qt.storage.dtype)):
        return None
    return dequantize(x, qt)


def _pname(p: int, grid: tuple[int, int]) -> str:
    from hlolab.interp.processes import process_name

    return process_name(p, grid)


def _where(index: Sequence[int]) -> str:
    return f"[{', '.join(str(i) for i in index)}]" if len(index) else ""


def _source_map(prov: Any, r: int, shape: tuple[int, ...]) -> np.ndarray:
    """Per result element: the process its links read (COMBINED when several, NO_SOURCE
    when none), vectorized over the links' flat index maps."""
    src = np.full(shape, NO_SOURCE, dtype=np.int64)
    for link in prov.links[r]:
        if link.operand is None:
            continue
        hit = link.flat_index >= 0
        p = prov.operand_processes[link.operand]
        fresh = hit & (src == NO_SOURCE)
        other = hit & (src != NO_SOURCE) & (src != p)
        src[fresh] = p
        src[other] = COMBINED
    return src


def _destinations(prov: Any, receiver: int, dests: dict[tuple[int, int], np.ndarray]) -> None:
    """Mark in ``dests`` the operand elements ``receiver``'s results read (vectorized per link)."""
    for ls in prov.links:
        for link in ls:
            if link.operand is None:
                continue
            key = (prov.operand_processes[link.operand], prov.operand_numbers[link.operand])
            size = int(np.prod(prov.operand_shapes[link.operand], dtype=np.int64))
            d = dests.setdefault(key, np.full(size, NO_SOURCE, dtype=np.int64))
            flat = link.flat_index[link.flat_index >= 0]
            prev = d[flat]
            d[flat] = np.where((prev == NO_SOURCE) | (prev == receiver), receiver, COMBINED)


def collective_model(event: Any, element: tuple[int, Sequence[int]] | None = None) -> CollectiveModel:
    """The picture's model of collective op instance ``event`` (a run's OpRun on a grid) and
    the chosen result ``element`` (result number, index) on the event's process (default:
    the middle of the first tensor result)."""
    from hlolab.ops.registry import lookup
    from hlolab.render.diagram import _check_elements, default_element, explanation_of, single_text

    if not is_collective(event):
        raise HloLabError(f"{event.op.name} is not a collective that ran on a process group: "
                          "there is no exchange to draw")
    opdef = lookup(event.op.name)
    if opdef is None or opdef.provenance is None:
        raise HloLabError(f"{event.op.name} has no provenance to draw its exchange with")
    grid = event.frame.grid
    members = list(event.call.members)
    group = [m.process for m in members]
    colors = {p: style.PROCESS_COLORS[k % len(style.PROCESS_COLORS)] for k, p in enumerate(group)}
    columns = []
    dests: dict[tuple[int, int], np.ndarray] = {}  # (process, operand number) -> flat destinations
    for m in members:
        results = _member_results(m, event)
        prov = opdef.provenance(m.ctx, m.operands, results)
        _destinations(prov, m.process, dests)
        name = _pname(m.process, grid)
        ops = [Block(f"p{m.process}.operand{i}", text(Msg("render_collective.operand", number=i)), x,
                     np.full(x.shape, m.process, dtype=np.int64),
                     reals=_reals(x, m.ctx.operand_types, i))
               for i, x in enumerate(m.operands) if isinstance(x, np.ndarray)]
        res = []
        for r, y in enumerate(results):
            shape = value_shape(y)
            if shape is None:
                continue
            res.append(Block(f"p{m.process}.result{r}", text(Msg("render_collective.result", number=r)),
                             y, _source_map(prov, r, shape), reals=_reals(y, m.ctx.result_types, r)))
        columns.append(Column(m.process, text(Msg("render_collective.column", process=name)), ops, res))
    for c in columns:
        for i, b in enumerate(c.operands):
            d = dests.get((c.process, i))
            b.dest = d.reshape(b.values.shape) if d is not None else \
                np.full(b.values.shape, NO_SOURCE, dtype=np.int64)
    if element is None:
        element = default_element(event)
    (r, idx), = _check_elements(event, [element])
    prov = event.provenance()
    sources = [ChosenSource(s.process, prov.operand_numbers[s.operand], tuple(int(i) for i in s.index),
                            s.role) for s in prov.sources(r, idx) if s.operand is not None]
    me = event.frame.process
    out = event.outputs[r]
    name = event.op.results[r].name if r < len(event.op.results) else "result"
    title = text(Msg("render_collective.title", op=event.op.name.removeprefix("stablehlo."),
                     grid=f"{grid[0]}x{grid[1]}", name=name, where=_where(idx),
                     value=format_value(out[idx]), process=_pname(me, grid)))
    e = explanation_of(event, r, idx)
    explain = single_text(e) if e is not None else []
    kind = "send" if event.op.name in ("stablehlo.send", "stablehlo.recv") else \
        "combine" if any(s.role == "combine" for s in sources) or _all_combined(columns) else "copy"
    senders = group[:1] if kind == "send" else group
    steps = [text(Msg(f"render_collective.step_{kind}", step=k + 1, steps=len(senders),
                      process=_pname(p, grid))) for k, p in enumerate(senders)]
    if sources:
        listed = ", ".join(text(Msg("render_collective.source", process=_pname(s.process, grid),
                                    number=s.operand, where=_where(s.index))) for s in sources)
        chosen = text(Msg("render_collective.chosen", name=name, where=_where(idx),
                          process=_pname(me, grid), sources=listed))
    else:
        chosen = text(Msg("render_collective.chosen_none", name=name, where=_where(idx),
                          process=_pname(me, grid)))
    wrap = textwrap.TextWrapper(CAPTION_WIDTH, subsequent_indent="  ")
    return CollectiveModel(event.op.name, grid, group, columns, colors, me, r, idx, sources, title,
                           explain, [wrap.fill(t) for t in steps], wrap.fill(chosen))


def _all_combined(columns: list[Column]) -> bool:
    srcs = [b.source for c in columns for b in c.results if b.source.size]
    return bool(srcs) and all(bool((s == COMBINED).all()) for s in srcs)


# --- drawing ------------------------------------------------------------------------------

@dataclass
class CollectivePicture:
    model: CollectiveModel
    board: Board
    fig: Any
    caption: Any = None
    marks: list[Any] = field(default_factory=list)  # the chosen element's outline and arrows


def _layout(model: CollectiveModel, board: Board, chosen: dict[str, list[tuple[int, ...]]]) -> float:
    """Place every column's tensors; returns the y under the results."""
    x = 0.0
    op_h = max((sum(TensorLayout(b.values.shape).height + TITLE_ROOM for b in c.operands)
                for c in model.columns), default=0.0)
    y_res = TITLE_ROOM + 0.8 + op_h + ROW_GAP
    bottom = y_res
    for c in model.columns:
        width = len(c.title) * 0.2
        y = TITLE_ROOM + 0.8
        board.add_text(x, 0.6, c.title, fontsize=9, fontweight="bold", width=width)
        for b in c.operands:
            lay = TensorLayout(b.values.shape, keep=chosen.get(b.key, ()))
            board.add(b.key, b.label, lay, x, y, b.values, reals=b.reals)
            y += lay.height + TITLE_ROOM
            width = max(width, lay.width)
        y = y_res
        for b in c.results:
            lay = TensorLayout(b.values.shape, keep=chosen.get(b.key, ()))
            board.add(b.key, b.label, lay, x, y, b.values, reals=b.reals)
            y += lay.height + TITLE_ROOM
            width = max(width, lay.width)
        bottom = max(bottom, y)
        x += width + COLUMN_GAP
    return bottom


def draw_collective(model: CollectiveModel) -> CollectivePicture:
    """The still picture: every exchange done, the chosen element highlighted."""
    pic = _board(model)
    _paint(pic, len(model.group))
    _highlight(pic)
    return pic


def _board(model: CollectiveModel) -> CollectivePicture:
    from hlolab.render.diagram import _line_h

    board = Board(model.title)
    chosen: dict[str, list[tuple[int, ...]]] = {f"p{model.process}.result{model.result}": [model.index]}
    for s in model.sources:
        chosen.setdefault(f"p{s.process}.operand{s.operand}", []).append(s.index)
    # an elided axis keeps one element of every block, so no process's block disappears
    for c in model.columns:
        for b, by in [(b, b.dest) for b in c.operands] + [(b, b.source) for b in c.results]:
            if by is None or not b.values.ndim:
                continue
            for q in np.unique(by):
                first = np.argwhere(by == q)[0]
                chosen.setdefault(b.key, []).append(tuple(int(i) for i in first))
    bottom = _layout(model, board, chosen)
    legend_y = bottom + 0.2
    n_legend = len(model.group) + 2
    board.add_text(0, legend_y, " ", width=1.0)
    text_y = legend_y + n_legend * 0.9 + 0.8
    captions = [model.chosen, *model.steps]
    caption_lines = max(c.count("\n") + 1 for c in captions)
    explain_y = text_y + caption_lines * CAPTION_LINE + 0.4
    # room for the caption and the explanation under the legend
    board.height = max(board.height, explain_y + (len(model.explain) + 1) * _line_h(board))
    board.width = max(board.width, 0.2 * max((sum(len(s) for s, _ in line) for line in model.explain),
                                              default=0),
                      0.19 * max(len(line) for c in captions for line in c.split("\n")))
    fig = board.draw()
    _legend(board, model, legend_y)
    _split_blocks(board, model)
    caption = board.ax.text(0, text_y - 0.5, "", fontsize=9, va="top", ha="left", color=style.ACCENT)
    pic = CollectivePicture(model, board, fig, caption)
    pic.text_y = explain_y  # type: ignore[attr-defined]
    return pic


def _legend(board: Board, model: CollectiveModel, y: float) -> None:
    from matplotlib.patches import Rectangle

    present = {int(v) for c in model.columns for b in c.results for v in np.unique(b.source)}
    sending = {c.process for c in model.columns if c.operands} | present  # a recv's process sends nothing
    entries = [(model.colors[p], text(Msg("render_collective.legend_process", process=_pname(p, model.grid))))
               for p in model.group if p in sending]
    if COMBINED in present:
        entries.append((style.COMBINED_FILL, text(Msg("render_collective.legend_combined"))))
    if NO_SOURCE in present:
        entries.append((style.CELL_FILL, text(Msg("render_collective.legend_none"))))
    for k, (fill, label) in enumerate(entries):
        board.ax.add_patch(Rectangle((0, y + k * 0.9), 0.7, 0.7, facecolor=fill, edgecolor=style.CELL_EDGE,
                                     linewidth=0.6, zorder=2))
        board.ax.text(1.0, y + k * 0.9 + 0.35, label, fontsize=8, va="center", ha="left")


def _split_blocks(board: Board, model: CollectiveModel) -> None:
    """Around each block of an operand that goes to one process, a frame labelled with that
    process (all_to_all's split, collective_permute's target); operands whose elements go
    to several processes each (all_gather, all_reduce) get none."""
    for c in model.columns:
        for b in c.operands:
            if b.dest is None or (b.dest == COMBINED).any():
                continue
            for q in [int(v) for v in np.unique(b.dest) if v >= 0]:
                rect = board.box(b.key, np.argwhere(b.dest == q), "#444444", width=1.6)
                if rect is None:
                    continue
                x, y = rect.get_xy()
                board.ax.text(x + rect.get_width() / 2, y + rect.get_height() + 0.15,
                              text(Msg("render_collective.goes_to", process=q)), fontsize=7,
                              ha="center", va="top", color="#444444", zorder=6)


def _paint(pic: CollectivePicture, upto: int) -> None:
    """Operands of the first ``upto`` members and the result elements they sent; elements
    combined from every member appear when every member has sent."""
    model, board = pic.model, pic.board
    board.reset()
    sent = model.group[:upto]
    for c in model.columns:
        for b in c.operands:
            if c.process in sent:
                board.paint(b.key, np.ones(b.values.shape, bool), model.colors[c.process])
        for b in c.results:
            arrived = np.isin(b.source, sent) | (b.source == NO_SOURCE)
            for p in sent:
                if (b.source == p).any():
                    board.paint(b.key, b.source == p, model.colors[p])
            if upto >= len(model.group):
                arrived |= b.source == COMBINED
                if (b.source == COMBINED).any():
                    board.paint(b.key, b.source == COMBINED, style.COMBINED_FILL)
            # a result element shows its value once what it is made of has arrived
            texts = board.views[b.key].texts
            shown = set(board.slots(b.key, arrived))
            for k, t in enumerate(texts):
                t.set_visible(k in shown)


def _highlight(pic: CollectivePicture) -> None:
    """The chosen element outlined, its sources outlined, an arrow from each, the
    explanation under the picture."""
    from hlolab.render.diagram import _draw_lines

    model, board = pic.model, pic.board
    key = f"p{model.process}.result{model.result}"
    pic.marks.append(board.outline(key, model.index, style.ACCENT, width=2.8))
    end = board.views[key].cell_center(model.index)
    end_box = board.views[key].cell_box(model.index)
    for s in model.sources:
        skey = f"p{s.process}.operand{s.operand}"
        pic.marks.append(board.outline(skey, s.index, style.ACCENT, width=2.0, dashed=True))
        start = board.views[skey].cell_center(s.index)
        if start is not None and end is not None:
            pic.marks.append(board.arrow(start, end, style.ACCENT, alpha=0.9,
                                         boxes=(board.views[skey].cell_box(s.index), end_box)))
    _draw_lines(board, model.explain, 0, pic.text_y)  # type: ignore[attr-defined]


def write_collective(event: Any, element: tuple[int, Sequence[int]] | None, fmt: str,
                     path: str | Path, fps: float = 1.0) -> tuple[Path, int]:
    """The picture as PNG/SVG/PDF, or a GIF of one frame per exchange step then the chosen
    element's; returns (path, frames)."""
    import matplotlib.pyplot as plt

    from hlolab.render.style import save_figure

    model = collective_model(event, element)
    if fmt in style.FORMATS:
        pic = draw_collective(model)
        pic.caption.set_text(model.chosen)
        try:
            return save_figure(pic.fig, path, fmt), 1
        finally:
            plt.close(pic.fig)
    if fmt != "gif":
        raise HloLabError(f"the collective picture is written as png, svg, pdf or gif, not {fmt}")
    pic = _board(model)
    try:
        frames = []
        for k, caption in enumerate(model.steps):
            _paint(pic, k + 1 if len(model.steps) > 1 else len(model.group))
            pic.caption.set_text(caption)
            frames.append(_pixels(pic.fig))
        _highlight(pic)
        pic.caption.set_text(model.chosen)
        frames.append(_pixels(pic.fig))
    finally:
        plt.close(pic.fig)
    return _save_gif(frames, Path(path), fps), len(frames)


def _pixels(fig: Any) -> np.ndarray:
    """The figure at its own dpi as [h, w] little-endian uint32 RGBA."""
    fig.canvas.draw()
    buf = np.array(fig.canvas.buffer_rgba(), dtype=np.uint8)  # a copy: the next draw reuses it
    return buf.view("<u4")[..., 0]


def _save_gif(frames: list[np.ndarray], path: Path, fps: float) -> Path:
    """Frames mapped to the animations' palette (the style's colours, then the first
    frame's others) and written by Pillow in one call: same frames, same bytes."""
    from PIL import Image

    from hlolab.render.animate import _atomic, _quantizer, board_palette

    rgb = np.stack([frames[0] & 255, (frames[0] >> 8) & 255, (frames[0] >> 16) & 255], axis=-1)
    pal = board_palette(rgb.astype(np.uint8))
    quant = _quantizer(pal)
    palette = np.concatenate([pal, np.zeros((256 - len(pal), 3), np.uint8)]).reshape(-1).tobytes()
    h, w = frames[0].shape
    images = []
    for f in frames:
        im = Image.frombuffer("P", (w, h), np.ascontiguousarray(quant(f)), "raw", "P", 0, 1)
        im.putpalette(palette)
        images.append(im)
    path.parent.mkdir(parents=True, exist_ok=True)
    return _atomic(path, lambda tmp: images[0].save(
        tmp, format="GIF", save_all=True, append_images=images[1:], duration=int(1000 / fps),
        loop=0, optimize=False))
