"""The provenance roles as every front end shows them: colour, label, precedence.

Colours are Paul Tol's "muted" qualitative scheme, chosen to stay distinct
under the common colour-vision deficiencies; each role (DESIGN.md) has one
colour everywhere (diagrams, animations, program view, TUI). Light fills keep
cell values readable; ``text_color`` picks black or white by luminance.
Kept apart from the renderers so the TUI needs no matplotlib-side module.
"""

from __future__ import annotations

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
