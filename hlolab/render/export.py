"""``hlolab export``: the diagram or animation of the op that made a value
of a program, written as PNG/SVG/PDF/GIF/MP4 files or PNG frames.

Nothing here knows any op: the drawing comes from the op's provenance and
explanation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hlolab.errors import HloLabError

STATIC = ("png", "svg", "pdf")
MOVING = ("gif", "mp4", "frames")
FORMATS = STATIC + MOVING

@dataclass
class Target:
    """The op instance to draw and the result elements to focus on."""

    event: Any
    elements: list[tuple[int, tuple[int, ...]]] | None
    label: str       # file stem, e.g. "gather"
    command: str     # the command line that reproduces it (for the gallery page)


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


def write(target: Target, fmt: str, out: str | Path | None = None, *, max_frames: int = 400,
          fps: float = 2.0, progress: bool = False) -> tuple[Path, int]:
    """Render ``target`` as ``fmt`` to ``out``; returns (path, frames written)."""
    fmt = fmt.lower()
    if fmt not in FORMATS:
        raise HloLabError(f"unknown format '{fmt}' (one of {', '.join(FORMATS)})")
    default = f"{target.label}_frames" if fmt == "frames" else f"{target.label}.{fmt}"
    path = Path(out) if out else Path(default)
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

    anim = animate(target.event, target.elements, max_frames=max_frames, progress=progress)
    if fmt == "gif":
        return anim.save_gif(path, fps=fps), anim.n_frames
    if fmt == "mp4":
        return anim.save_mp4(path, fps=fps), anim.n_frames
    frames = anim.save_frames(path)
    return path, len(frames)


def _close(fig: Any) -> None:
    import matplotlib.pyplot as plt

    plt.close(fig)
