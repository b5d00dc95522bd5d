"""The one style module: role colours, the style sheet, deterministic saving.

Colours are Paul Tol's "muted" qualitative scheme, chosen to stay distinct
under the common colour-vision deficiencies; each provenance role (DESIGN.md)
has one colour everywhere (diagrams, animations, program view, and later the
TUI). Light fills keep the cell values readable; ``text_color`` picks black or
white by luminance for the dark ones.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

STYLE_SHEET = Path(__file__).with_name("hlolab.mplstyle")

# role -> fill colour; "result" is the chosen output element
ROLE_COLORS: dict[str, str] = {
    "result": "#CC6677",      # rose
    "copy": "#88CCEE",        # cyan
    "combine": "#88CCEE",
    "window": "#88CCEE",
    "kernel": "#44AA99",      # teal
    "pad_value": "#DDCC77",   # sand
    "dilation_hole": "#F2EBC9",  # light sand, dashed edge
    "init": "#AA4499",        # purple
    "index_read": "#999933",  # olive
    "update": "#117733",      # green
    "selected": "#882255",    # wine
    "control": "#BBBBBB",     # grey
}
ROLE_LABELS: dict[str, str] = {
    "result": "chosen output", "copy": "source (copy)", "combine": "combined operand",
    "window": "window element", "kernel": "kernel element", "pad_value": "padding value",
    "dilation_hole": "dilation hole", "init": "init value", "index_read": "index read",
    "update": "update", "selected": "selected", "control": "control (decides)",
}
# order of precedence when one cell has several roles: the most specific wins
ROLE_ORDER = ("result", "selected", "update", "index_read", "init", "kernel", "copy", "window",
              "combine", "pad_value", "dilation_hole", "control")

CELL_FILL = "#FFFFFF"
CELL_EDGE = "#9A9A9A"
PADDING_FILL = "#F4F4F4"  # a padding cell of a padded frame that no chosen window reads
HOLE_FILL = "#FBFBFB"
MUTED_TEXT = "#8A8A8A"
ACCENT = "#332288"  # indigo: arrows, frame outlines
PATH_FILL = "#E6E2F4"  # light tint of ACCENT: an op instance on a traced path (program view)

# one colour per chosen output element when several are shown at once (Tol "bright")
ELEMENT_COLORS = ("#4477AA", "#EE6677", "#228833", "#CCBB44", "#66CCEE", "#AA3377")


def role_color(role: str) -> str:
    return ROLE_COLORS.get(role, ROLE_COLORS["copy"])


def text_color(fill: str) -> str:
    """Black on light fills, white on dark ones (relative luminance, sRGB)."""
    h = fill.lstrip("#")
    r, g, b = (int(h[i:i + 2], 16) / 255 for i in (0, 2, 4))
    lum = 0.2126 * r + 0.7152 * g + 0.0722 * b
    return "#000000" if lum > 0.45 else "#FFFFFF"


def hex_to_rgb(color: str) -> tuple[int, int, int]:
    h = color.lstrip("#")
    return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)


@contextmanager
def styled() -> Iterator[None]:
    """Apply the hlolab style sheet for the figures made inside (Agg backend)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    with plt.style.context(str(STYLE_SHEET)):
        yield


FORMATS = ("png", "svg", "pdf")

# metadata a backend would otherwise fill with the date or version (byte-identical output)
_METADATA: dict[str, dict[str, Any]] = {
    "png": {"Software": None},
    "svg": {"Date": None, "Creator": None},
    "pdf": {"Creator": None, "Producer": None, "CreationDate": None},
}


def save_figure(fig: Any, path: str | Path, fmt: str | None = None) -> Path:
    """Save ``fig`` deterministically (same figure -> same bytes), atomically (temp + rename)."""
    p = Path(path)
    fmt = (fmt or p.suffix.lstrip(".") or "png").lower()
    if fmt not in FORMATS:
        raise ValueError(f"unknown image format {fmt!r} (one of {', '.join(FORMATS)})")
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(f".{p.name}.tmp")
    with styled():
        fig.savefig(tmp, format=fmt, metadata=_METADATA[fmt])
    tmp.replace(p)
    return p
