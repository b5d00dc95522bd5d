"""``hlolab export``: the diagram or animation of the op that made a value
of a program, written as PNG/SVG/PDF/GIF/MP4 files or PNG frames.

Nothing here knows any op: the drawing comes from the op's provenance and
explanation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hlolab.errors import HloLabError
from hlolab.render.style import in_figure_language

STATIC = ("png", "svg", "pdf")
MOVING = ("gif", "mp4", "frames")
FORMATS = STATIC + MOVING

@dataclass
class Target:
    """The op instance to draw and the result elements to focus on."""

    event: Any
    elements: list[tuple[int, tuple[int, ...]]] | None
    label: str       # default file stem: the op as the user named it ("conv", not "convolution")
    command: str     # the command line that reproduces it (for the gallery page)
    walk_all: bool = False  # ``elements`` is only a default focus: animations walk the whole result


def program_target(session: Any, value: str | None, indices: Sequence[tuple[int, ...]] = (),
                   iteration: int | None = None) -> Target:
    """The op instance of a run program that made ``value`` (default: the entry's first result)."""
    if value is None:
        defs = [d for d in session.result_defs() if d is not None and d[0] != 0]
        if not defs:
            raise HloLabError("the entry function returns no value made by an op: give --value")
        d = defs[0]
    else:
        d = session.find(value, iteration)
    if d[0] == 0:
        raise HloLabError(f"{value} is an argument of @{session.func.name}: no op made it")
    event = session.event(d[0])
    chosen = [(d[1], tuple(i)) for i in indices] or None
    return Target(event, chosen, event.op.name.removeprefix("stablehlo."), "")


def op_target(name: str, preset: str = "default", params: dict[str, str] | None = None,
              indices: Sequence[tuple[int, ...]] = (), fill: str = "iota", seed: int = 0) -> Target:
    """Op ``name`` built from its parameter schema (preset, then ``params``) and run on
    ``fill`` inputs; the chosen ``indices`` (default: the preset's interesting element)."""
    from hlolab.ops.examples import make_example
    from hlolab.session import Session

    ex = make_example(name, preset, params, fill=fill, seed=seed)
    session = Session(ex.text, filename=f"<{ex.op} {preset}>")
    session.bind(ex.inputs)
    stop = session.run()
    if stop.error is not None:
        raise stop.error
    if ex.n_processes > 1:  # a collective: its instance on the preset's process
        runs = [e for e in session.history if e.op.name == ex.op and e.frame.process == ex.process]
        target = Target(session.event(runs[-1].id), [(0, tuple(i)) for i in indices] or None, "", "")
    else:
        target = program_target(session, None, indices)
    if not indices and ex.index is not None:
        target.elements, target.walk_all = [(0, ex.index)], True
    short = ex.op.removeprefix("stablehlo.")
    words = [f"hlolab export {short}"]
    if preset != "default":
        words.append(f"--preset {preset}")
    words += [f"--param {k}={v}" for k, v in (params or {}).items()]
    if fill != "iota":
        words.append(f"--fill {fill} --seed {seed}")
    words += [f"--index {','.join(map(str, i))}" for i in indices]
    target.label, target.command = name.strip(), " ".join(words)
    return target


@in_figure_language
def write(target: Target, fmt: str, out: str | Path | None = None, *, max_frames: int = 400,
          fps: float = 2.0, progress: bool = False) -> tuple[Path, int]:
    """Render ``target`` as ``fmt`` to ``out``; returns (path, frames written)."""
    fmt = fmt.lower()
    if fmt not in FORMATS:
        raise HloLabError(f"unknown format '{fmt}' (one of {', '.join(FORMATS)})")
    default = f"{target.label}_frames" if fmt == "frames" else f"{target.label}.{fmt}"
    path = Path(out) if out else Path(default)
    from hlolab.render.collective import is_collective, write_collective

    if fmt in (*STATIC, "gif") and is_collective(target.event):  # the processes side by side
        return write_collective(target.event, target.elements[0] if target.elements else None, fmt, path,
                                fps=fps)
    if fmt in STATIC:
        from hlolab.render.diagram import draw_diagram
        from hlolab.render.style import save_figure

        rendered = draw_diagram(target.event, target.elements)
        try:
            save_figure(rendered.fig, path, fmt)
        finally:
            _close(rendered.fig)
        return path, 1
    from hlolab.render.animate import animate

    walk = None if target.walk_all else target.elements
    anim = animate(target.event, walk, max_frames=max_frames, progress=progress)
    try:
        if fmt == "gif":
            return anim.save_gif(path, fps=fps), anim.n_frames
        if fmt == "mp4":
            return anim.save_mp4(path, fps=fps), anim.n_frames
        return path, len(anim.save_frames(path))
    finally:
        anim.close()


def _close(fig: Any) -> None:
    import matplotlib.pyplot as plt

    plt.close(fig)


@in_figure_language
def write_program(session: Any, trace: Any, fmt: str, out: str | Path | None, label: str) -> Path:
    """The program view (dependency graph, ``trace`` highlighted) of a run ``session``."""
    from hlolab.render.program import draw_program
    from hlolab.render.style import save_figure

    if fmt not in STATIC:
        raise HloLabError(f"the program view is a still picture: --format one of {', '.join(STATIC)}")
    path = Path(out) if out else Path(f"{label}_program.{fmt}")
    fig = draw_program(session, trace)
    try:
        save_figure(fig, path, fmt)
    finally:
        _close(fig)
    return path


# --- the gallery ------------------------------------------------------------------------

# (op, parameters over its spec example / default, file stem): one diagram and one animation each
# the op families the gallery draws (ops that move or combine elements), in the TUI's group order
GALLERY_FAMILIES = ("shape", "indexing", "slicing", "sort", "window", "reduction", "contraction")
# instances beyond each op's default / spec example: (op, parameters, file stem)
GALLERY_EXTRA: tuple[tuple[str, dict[str, str], str], ...] = (
    ("convolution", {"lhs": "1x5x5x1", "rhs": "3x3x1x1", "stride": "2", "padding": "1"},
     "convolution_padded_strided"),
)


# collectives drawn as the spec draws them (render/collective.py: the processes side by side),
# each on its spec example's process grid
GALLERY_COLLECTIVES = ("all_to_all", "all_gather", "all_reduce", "reduce_scatter", "collective_permute")


def gallery_ops() -> tuple[tuple[str, dict[str, str], str], ...]:
    """What the gallery draws: every op with a parameter schema and provenance whose declared
    family moves or combines elements (grouped as the TUI groups them), the collectives of
    GALLERY_COLLECTIVES, then GALLERY_EXTRA."""
    from hlolab.ops.examples import schema_ops
    from hlolab.ops.registry import FAMILY_GROUPS, GROUP_ORDER, all_ops

    defs = all_ops()
    names = [n for n in schema_ops() if defs[n].family in GALLERY_FAMILIES and defs[n].provenance is not None]
    names.sort(key=lambda n: (GROUP_ORDER.index(FAMILY_GROUPS[defs[n].family]), n))
    short = [n.removeprefix("stablehlo.") for n in names]
    return tuple((n, {}, n) for n in short) + tuple((n, {}, n) for n in GALLERY_COLLECTIVES) + GALLERY_EXTRA


GALLERY_FRAMES = 36
GALLERY_PROGRAM = ("conv_maxpool", "%2", (0, 1, 1, 0))  # built-in example, value, element to trace


ProgressHook = Callable[[int, int, str], None]
"""Called after each gallery item: (items written, items in all, stem of the one just written)."""


def write_gallery(directory: str | Path, ops: Sequence[tuple[str, dict[str, str], str]] | None = None, *,
                  progress: bool = False, on_item: ProgressHook | None = None,
                  program: bool = True) -> list[Path]:
    """One diagram (PNG) and one animation (GIF) per op, the spec example where the spec has one,
    plus a traced program view; ``index.md`` lists each with the command that makes it.
    ``progress``: a progress bar on stderr (for a terminal); ``on_item``: called per item."""
    from hlolab.ops.examples import schema_for

    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    items = list(ops if ops is not None else gallery_ops())
    total = len(items) + int(program)
    written: list[Path] = []
    rows = []
    with _progress_bar("gallery", total) if progress else nullcontext() as bar:
        hooks = [h for h in (bar, on_item) if h is not None]
        for count, (name, params, stem) in enumerate(items, start=1):
            schema = schema_for(name)
            if schema is None:
                raise HloLabError(f"gallery: no parameter schema for '{name}'")
            # a "gallery" preset (the spec example with values that show more) wins
            preset = next((p for p in ("gallery", "spec-example") if p in schema.presets and not params),
                          "default")
            target = op_target(name, preset, params)
            png, _ = write(target, "png", out / f"{stem}.png")
            # no frame bar per GIF: one live display at a time, and the gallery's bar is the one
            gif, n = write(target, "gif", out / f"{stem}.gif", max_frames=GALLERY_FRAMES, fps=2.0)
            written += [png, gif]
            where = "the spec's example" if preset == "spec-example" else \
                "the spec's example with distinct values" if preset == "gallery" else \
                ", ".join(f"{k}={v}" for k, v in params.items()) or "default parameters"
            rows.append(f"## {stem}\n\n{schema.doc.capitalize()} ({where}).\n\n"
                        f"![{stem}]({png.name})\n\n"
                        f"Animation ({n} frames): [{gif.name}]({gif.name})\n\n"
                        f"```\n{target.command} --format png\n"
                        f"{target.command} --format gif --max-frames {GALLERY_FRAMES}\n```\n")
            for hook in hooks:
                hook(count, total, stem)
        if program:
            written.append(_gallery_program(out, rows))
            for hook in hooks:
                hook(total, total, written[-1].stem)
    text = ("# hlolab gallery\n\nGenerated by `hlolab export --gallery assets/gallery`; every picture "
            "is drawn from the op's own provenance and explain(), nothing is drawn by hand. Each "
            "section gives the command that makes it; change `--param` values to draw any other "
            "instance (`hlolab export OP --help-params` lists them).\n\n" + "\n".join(rows))
    written.append(_write_text(out / "index.md", text))
    return written


@contextmanager
def _progress_bar(what: str, total: int) -> Iterator[ProgressHook]:
    """rich's progress bar on stderr, gone when done; the hook moves it."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(what, total=total)
        yield lambda k, n, stem: bar.update(task, completed=k, total=n, description=f"{what} · wrote {stem}")


def _gallery_program(out: Path, rows: list[str]) -> Path:
    from hlolab.session import Session

    example, value, index = GALLERY_PROGRAM
    path = Path(__file__).resolve().parent.parent / "examples" / f"{example}.mlir"
    session = Session.open(path)
    session.bind(None, seed=0)
    stop = session.run()
    if stop.error is not None:
        raise stop.error
    trace = session.sources(value, index)
    png = write_program(session, trace, "png", out / f"program_{example}.png", example)
    at = ",".join(map(str, index))
    rows.append(f"## program view\n\nThe `{example}` example with the sources of {value}[{at}] traced "
                f"back through every op.\n\n![program]({png.name})\n\n"
                f"```\nhlolab export --example {example} --program --value {value} --index {at}\n```\n")
    return png


def _write_text(path: Path, text: str) -> Path:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)
    return path
