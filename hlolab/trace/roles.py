"""The provenance roles as every front end shows them: colour, label, precedence.

Colours are Paul Tol's "muted" qualitative scheme, chosen to stay distinct
under the common colour-vision deficiencies; each role (DESIGN.md) has one
colour everywhere (diagrams, animations, program view, TUI). Light fills keep
cell values readable; ``text_color`` picks black or white by luminance.
Kept apart from the renderers so the TUI needs no matplotlib-side module.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

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
    "selected": "#EE7733",    # orange (Tol vibrant): apart from the rose result and purple init
    "control": "#BBBBBB",     # grey
}


class _Labels(Mapping[str, str]):
    """Role -> label in the current language (hlolab/messages/<lang>/roles.toml)."""

    def __getitem__(self, role: str) -> str:
        if role not in ROLE_COLORS:
            raise KeyError(role)
        from hlolab.messages import Msg, text
        return text(Msg(f"roles.{role}"))

    def __iter__(self) -> Iterator[str]:
        return iter(ROLE_COLORS)

    def __len__(self) -> int:
        return len(ROLE_COLORS)


ROLE_LABELS: Mapping[str, str] = _Labels()
# order of precedence when one cell has several roles: the most specific wins
ROLE_ORDER = ("result", "selected", "update", "index_read", "init", "kernel", "copy", "window",
              "combine", "pad_value", "dilation_hole", "control")

# dimension roles (hlolab.trace.explain.DimRole): kind -> colour group, one table for the TUI
# and the renderers, so a dimension has one colour everywhere. Colours read as text on a light
# and a dark background.
DIM_GROUP_COLORS: dict[str, str] = {
    "batch": "#4477AA",     # blue: batch dimensions, whatever the op
    "offset": "#228833",    # green: dims that run along a slice, window or operand
    "index": "#AA6600",     # amber: dims whose value comes from an index or a permutation
    "clamped": "#CC3355",   # red: a value a clamp moved
    "spatial": "#009988",   # teal: convolution spatial dims
    "feature": "#AA3377",   # purple: features, contracting and reduced dims
    "padding": "#997700",   # olive: padding, dilation holes, cropped positions
    "absent": "#888888",    # grey: dims that contribute 0 (collapsed, not indexed)
}
DIM_KINDS: dict[str, str] = {
    # gather / scatter
    "batch": "batch", "offset": "offset", "collapsed": "absent", "operand_batching": "absent",
    "start": "index", "start_clamped": "clamped", "not_indexed": "absent",
    "batching_of": "batch", "update_scatter": "index", "update_window": "offset",
    "inserted_window": "absent", "input_batching": "absent",
    # dot_general / convolution
    "lhs_free": "offset", "rhs_free": "index", "contracting": "feature",
    "spatial": "spatial", "input_feature": "feature", "output_feature": "feature",
    "input_batch": "batch", "output_batch": "batch", "kernel_spatial": "spatial",
    "kernel_input_feature": "feature", "kernel_output_feature": "feature",
    # reductions, windows, padding
    "reduced": "feature", "kept": "offset", "window": "offset", "operand": "offset",
    "padding": "padding", "padding_low": "padding", "padding_high": "padding", "hole": "padding",
    "cropped": "padding",
    # shape and data movement
    "iota": "index", "operand_dim": "index", "pinned": "absent", "new": "absent",
    "concatenated": "index", "reversed": "index", "sorted": "index",
    "clamped": "clamped", "in_range": "offset", "sliced": "offset",
}

# bit views (hlolab.trace.bits): a fill per field kind (Tol "light", text stays black on them)
# and an ink per bit mark, one table for the TUI and the renderers
BIT_FIELD_COLORS: dict[str, str] = {
    "sign": "#FFAABB",            # pink
    "exponent": "#EEDD88",        # light yellow
    "mantissa": "#99DDFF",        # light cyan
    "twos_complement": "#BBCC33",  # pear
    "unsigned": "#BBCC33",
    "bool": "#BBCC33",
}
BIT_MARK_COLORS: dict[str, str] = {
    "kept": "#117733", "guard": "#CC3311", "sticky": "#EE7733", "dropped": "#777777",
    "changed": "#AA3377", "shifted_out": "#777777", "shifted_in": "#0077BB", "fill": "#0077BB",
    "set": "#117733", "leading_zero": "#777777", "first_one": "#117733", "extended": "#0077BB",
}


def dim_color(kind: str) -> str:
    """The text colour of a dimension role's kind."""
    return DIM_GROUP_COLORS[DIM_KINDS.get(kind, "offset")]


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
