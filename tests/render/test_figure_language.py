"""Figures are written in the reader's language where the figure fonts have its glyphs, and
in English otherwise (zh: DejaVu has no CJK glyphs; empty boxes would teach nothing)."""

from __future__ import annotations

import warnings

from hlolab import messages
from hlolab.messages import language
from hlolab.render import style
from hlolab.render.export import op_target, write


def test_spanish_figures_stay_spanish_and_chinese_fall_back_to_english():
    with language("es"):
        assert style.figure_language() == "es"
    with language("zh"):
        assert style.figure_language() == "en"
    messages.register("x-cjk", {"explain.more": "更多 {count}"})
    try:
        assert not style.fonts_cover("x-cjk")
    finally:
        messages._catalogues.pop("x-cjk", None)
        style._coverage.pop("x-cjk", None)


def test_a_chinese_export_draws_no_missing_glyph(tmp_path):
    target = op_target("pad")
    with language("zh"), warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib warns "Glyph ... missing from font(s)"
        path, n = write(target, "png", tmp_path / "pad.png")
        assert n == 1 and path.stat().st_size > 0
        # the caller's language is untouched
        assert messages.current_language() == "zh"
