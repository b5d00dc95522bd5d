"""80×24 layouts show whole names and numbers (issue 24, defect 4): parameter names
break after an underscore, the footer shows only whole keys (help always), grids never
show part of a number, trace trees wrap under their own guides."""

from __future__ import annotations

import re

import numpy as np
import pytest
from textual.app import App, ComposeResult

import hlolab
from hlolab.ops.examples import schema_for, schema_ops
from hlolab.trace.format import wrap_tree
from hlolab.tui.app import HloLabApp
from hlolab.tui.screens.explorer import ExplorerScreen
from hlolab.tui.widgets.footer import FittingFooter, key_width
from hlolab.tui.widgets.grid import TensorGrid, format_row
from hlolab.tui.widgets.params import NameLabel, wrap_name

from .conftest import run, settle

PARAM_NAMES = sorted({p.name for op in schema_ops() for p in schema_for(op).params})


@pytest.mark.parametrize("width", [8, 12, 16, 19, 20, 24, 40])
def test_parameter_names_break_after_underscores_only(width):
    for name in PARAM_NAMES:
        lines = wrap_name(name, width).split("\n")
        assert "".join(lines) == name
        for line in lines[:-1]:
            words = line.split("_")
            # a line ends after an underscore, unless one word alone is wider than the field
            assert line.endswith("_") or len(line) == width and len(words) == 1, (name, width, lines)
        assert all(len(line) <= width for line in lines), (name, width, lines)


def test_wrap_name_keeps_short_names_and_packs_words():
    assert wrap_name("slice_sizes", 20) == "slice_sizes"
    assert wrap_name("scatter_indices_batching_dims", 19) == "scatter_indices_\nbatching_dims"
    assert wrap_name("lhs_contracting_dimensions", 19) == "lhs_contracting_\ndimensions"


def footer_fits(screen) -> tuple[list[str], int]:
    footer = screen.query_one(FittingFooter)
    shown = [k for k in footer.query("FooterKey") if k.display]
    return [k.description for k in shown], sum(key_width(k) for k in shown)


@pytest.mark.parametrize("op", ["gather", "scatter", "dot_general"])
def test_explorer_at_80x24_names_whole_and_footer_fits(op):
    async def body():
        async with HloLabApp(open_op=op).run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            screen = pilot.app.screen
            assert isinstance(screen, ExplorerScreen)
            for label in screen.query(NameLabel):
                width = label.content_size.width
                assert width > 0
                lines = str(label.render()).split("\n")
                assert "".join(lines) == label.param_name
                assert all(len(line) <= width for line in lines)
                assert all(line.endswith("_") for line in lines[:-1])
            shown, used = footer_fits(screen)
            assert "Help" in shown and used <= 80
            # the keys kept are the first ones of the row, in order
            everything = [k.description for k in screen.query_one(FittingFooter).query("FooterKey")]
            kept = [d for d in everything if d in shown and d not in ("Help", "palette")]
            assert kept == [d for d in everything if d not in ("Help", "palette")][:len(kept)]

    run(body)


def test_footer_shows_every_key_when_there_is_room():
    async def body():
        async with HloLabApp(open_op="gather").run_test(size=(200, 40)) as pilot:
            await settle(pilot)
            footer = pilot.app.screen.query_one(FittingFooter)
            assert all(k.display for k in footer.query("FooterKey"))
            await pilot.resize_terminal(60, 24)
            await settle(pilot)
            shown, used = footer_fits(pilot.app.screen)
            assert "Help" in shown and used <= 60
            assert not all(k.display for k in footer.query("FooterKey"))

    run(body)


class OneGrid(App):
    CSS = "TensorGrid { width: 34; max-width: 34; }"

    def __init__(self, value):
        super().__init__()
        self.value = value

    def compose(self) -> ComposeResult:
        yield TensorGrid(self.value, title="x")


def test_grid_never_shows_part_of_a_number():
    """A row of 10-character numbers in a 34-column grid: each visible cell is whole,
    at every horizontal scroll position."""
    value = np.array([[-0.5016229, 1.2345678, -3.1415927, 2.7182817, -1.4142135, 0.5772157]],
                     np.float32)
    whole = set(format_row(value[0])) | {str(c) for c in range(value.shape[1])}

    async def body():
        app = OneGrid(value)
        async with app.run_test(size=(60, 10)) as pilot:
            grid = app.query_one(TensorGrid)
            await pilot.pause()
            seen = set()
            for x in range(0, int(grid.virtual_size.width)):
                grid.scroll_to(x, 0, animate=False, immediate=True)
                await pilot.pause()
                for y in (0, 1):  # the column labels and the row
                    line = "".join(seg.text for seg in grid.render_line(y))
                    tokens = [t for t in (line.split()[1:] if y == 1 else line.split()) if t != "…"]
                    assert set(tokens) <= whole, (x, line)
                    seen |= set(tokens)
                    # a marker at each edge past which there are more columns
                    assert line.rstrip().endswith("…") == (x + grid.scrollable_content_region.width
                                                          < grid.virtual_size.width), (x, line)
                    assert ("…" in line[:3]) == (x > 0), (x, line)
            assert seen >= set(format_row(value[0]))  # scrolling shows every number once whole

    run(body)


def mlp_trace() -> str:
    s = hlolab.Session.open(hlolab.example_path("mlp_step"))
    s.bind(seed=0)
    s.run()
    return str(s.sources("%9", (1, 2)))


@pytest.mark.parametrize("width", [40, 50, 60, 80])
def test_trace_tree_wraps_under_its_guides(width):
    tree = mlp_trace()
    wrapped = wrap_tree(tree, width).split("\n")
    assert all(len(line) <= width for line in wrapped)
    guides = re.compile(r"[│├└─ ]*")
    out = iter(wrapped)
    for line in tree.split("\n"):
        first = next(out)
        lead = guides.match(line).group()
        assert first.startswith(lead)
        text = [first[len(lead):]]
        if len(line) > width:  # continuation lines: the guides of the line, then its text
            cont = lead.replace("├", "│").replace("└", " ").replace("─", " ") + "  "
            for more in out:
                if not more.startswith(cont) or more[len(cont)] == " ":
                    out = iter([more, *out])
                    break
                text.append(more[len(cont):])
        assert " ".join(text) == line[len(lead):]  # no word lost or reordered
    assert next(out, None) is None
    # a path breaks between hops, never inside one ("add %3"): every piece is a whole hop
    for w in wrapped:
        body = guides.sub("", w, count=1).removeprefix("via ")
        if "→" in w or w.strip().startswith("via "):
            pieces = [p.strip() for p in body.split("→") if p.strip()]
            assert all(re.fullmatch(r"\w+ %\w+", p) for p in pieces), w


def test_short_trace_lines_are_left_alone():
    tree = mlp_trace()
    assert wrap_tree(tree, 500) == tree


def test_status_lines_elide_with_a_marker_at_80_columns():
    """The explorer's status line never wraps into the grids: one row, elided with "…", the
    cursor's element before the animation state (what is cut first)."""
    async def body():
        async with HloLabApp(open_op="convolution").run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            status = pilot.app.screen.query_one("#status")
            assert status.size.height == 1
            assert status.styles.text_wrap == "nowrap" and status.styles.text_overflow == "ellipsis"
            line = "".join(seg.text for seg in status.render_line(0)).rstrip()
            assert line.strip().startswith("convolution · cursor %result[") and line.endswith("…")
            assert len(line) <= status.size.width

    run(body)
