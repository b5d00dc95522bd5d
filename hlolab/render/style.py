"""The one style module: role colours, the style sheet, deterministic saving.

Colours are Paul Tol's "muted" qualitative scheme, chosen to stay distinct
under the common colour-vision deficiencies; each provenance role (DESIGN.md)
has one colour everywhere (diagrams, animations, program view, and later the
TUI). Light fills keep the cell values readable; ``text_color`` picks black or
white by luminance for the dark ones.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from hlolab.trace.roles import (  # noqa: F401 - the renderers' one import for colours
    BIT_FIELD_COLORS,
    BIT_MARK_COLORS,
    ROLE_COLORS,
    ROLE_LABELS,
    ROLE_ORDER,
    hex_to_rgb,
    role_color,
    text_color,
)

T = TypeVar("T")
STYLE_SHEET = Path(__file__).with_name("hlolab.mplstyle")

CELL_FILL = "#FFFFFF"
CELL_EDGE = "#9A9A9A"
PADDING_FILL = "#F4F4F4"  # a padding cell of a padded frame that no chosen window reads
PADDING_HIGH_FILL = "#E9EEF4"  # high edge padding: a cool grey, apart from the low edge
HOLE_FILL = "#FBFBFB"     # an interior hole (hatched)
CROPPED_FILL = "#D9D9D9"  # an operand element negative padding removes (hatched)
HATCH_EDGE = "#C9C9C9"
# fill and hatch of each hlolab.ops.frame.CELL_KINDS code
CELL_KIND_FILLS = (CELL_FILL, PADDING_FILL, HOLE_FILL, PADDING_HIGH_FILL, CROPPED_FILL)
CELL_KIND_HATCHED = (False, False, True, False, True)
MUTED_TEXT = "#8A8A8A"
ACCENT = "#332288"  # indigo: arrows, frame outlines
PATH_FILL = "#E6E2F4"  # light tint of ACCENT: an op instance on a traced path (program view)

# one colour per chosen output element when several are shown at once (Tol "bright")
ELEMENT_COLORS = ("#4477AA", "#EE6677", "#228833", "#CCBB44", "#66CCEE", "#AA3377")

# one colour per process of a collective's group, by group slot (Tol "light": light enough for
# the cell values); elements combined from every process (all_reduce) get COMBINED_FILL
PROCESS_COLORS = ("#77AADD", "#EE8866", "#EEDD88", "#FFAABB", "#44BB99", "#BBCC33", "#AAAA00",
                  "#99DDFF")
COMBINED_FILL = "#DDDDDD"


# the fonts every figure draws with (the style sheet's family, labels and GIF captions)
FIGURE_FONTS = ("DejaVu Sans", "DejaVu Sans Mono")
_coverage: dict[str, bool] = {}


def fonts_cover(lang: str) -> bool:
    """Whether FIGURE_FONTS have a glyph for every character of ``lang``'s catalogue.
    Figures lay text out on a monospaced grid, so a font fallback would not do: a language
    the fonts cannot write (zh: CJK) is drawn in English rather than as empty boxes."""
    if lang not in _coverage:
        from matplotlib.font_manager import FontProperties, findfont, get_font

        from hlolab.messages import catalogue

        chars = {ord(c) for t in catalogue(lang).values() for c in t if not c.isspace()}
        _coverage[lang] = all(chars <= set(get_font(findfont(FontProperties(family=f))).get_charmap())
                              for f in FIGURE_FONTS)
    return _coverage[lang]


def figure_language() -> str:
    """The language figures are written in: the reader's, or English where the figure
    fonts lack its glyphs (front ends say so: ``figure_language() != current_language()``)."""
    from hlolab.messages import DEFAULT, current_language

    lang = current_language()
    return lang if lang == DEFAULT or fonts_cover(lang) else DEFAULT


def in_figure_language(fn: Callable[..., T]) -> Callable[..., T]:
    """Run a figure writer with every message written in ``figure_language()`` (the texts of
    a figure are made before it is drawn, outside ``styled``)."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kw: Any) -> T:
        from hlolab.messages import language

        with language(figure_language()):
            return fn(*args, **kw)
    return wrapper


@contextmanager
def styled() -> Iterator[None]:
    """Apply the hlolab style sheet for the figures made inside (Agg backend), in the
    language the figure fonts can write (``figure_language``)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    from hlolab.messages import language

    with plt.style.context(str(STYLE_SHEET)), language(figure_language()):
        yield


FORMATS = ("png", "svg", "pdf")
# PNGs are written at twice the figures' 100 dpi, so the smallest text (7 pt index labels at
# 100 dpi) has the pixels of 14 pt on a 96-dpi screen; animations stay at the figure's dpi
EXPORT_DPI = 200

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
        fig.savefig(tmp, format=fmt, metadata=_METADATA[fmt], dpi=EXPORT_DPI)
    tmp.replace(p)
    return p
