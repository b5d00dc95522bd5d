"""Layout snapshots (pytest-textual-snapshot) of home and the explorer at 80x24 and 120x40.

Deterministic: iota fills, no clock in the header, cursor blink off, every worker
finished, no animation running. Regenerate with ``--snapshot-update`` and look at
the SVGs in ``__snapshots__/`` before committing them.
"""

from __future__ import annotations

import pytest
from textual.widgets import Input

from hlolab.tui.app import HloLabApp

from .conftest import settle

SIZES = [(80, 24), (120, 40)]


async def _steady(pilot) -> None:
    await settle(pilot)
    for inp in pilot.app.screen.query(Input):
        inp.cursor_blink = False
    await pilot.pause()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_home(snap_compare, size):
    assert snap_compare(HloLabApp(), terminal_size=size, run_before=_steady)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_explorer_gather(snap_compare, size):
    assert snap_compare(HloLabApp(open_op="gather"), terminal_size=size, run_before=_steady)


def test_explorer_gather_operand_cursor(snap_compare):
    """Forward provenance: the cursor on an operand cell colours the result cells it feeds."""

    async def before(pilot) -> None:
        await _steady(pilot)
        grid = pilot.app.screen.grid("operand0")
        grid.focus()
        grid.move_cursor((1, 1))
        await pilot.pause()

    assert snap_compare(HloLabApp(open_op="gather"), terminal_size=(120, 40), run_before=before)


def test_explorer_invalid_parameter(snap_compare):
    async def before(pilot) -> None:
        await _steady(pilot)
        pilot.app.screen.query_one("#params").set_field("index_vector_dim", "7")
        await settle(pilot)
        pilot.app.screen.grid("result0").focus()
        await pilot.pause()

    assert snap_compare(HloLabApp(open_op="gather"), terminal_size=(120, 40), run_before=before)


def test_explorer_reduce_window_padding(snap_compare):
    assert snap_compare(HloLabApp(open_op="reduce_window"), terminal_size=(120, 40), run_before=_steady)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_explorer_convolution_spatial_planes(snap_compare, size):
    """The NHWC input as its 5x5 image padded to a 7x7 frame, the 3x3 kernel plane, the
    channel as the slice selector."""
    assert snap_compare(HloLabApp(open_op="convolution"), terminal_size=size, run_before=_steady)
