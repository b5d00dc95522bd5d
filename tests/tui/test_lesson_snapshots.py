"""Layout snapshots of the lesson viewer (lesson 6, its pick-sources exercise in focus with
one cell picked) at 120x40 and 80x24, and of the lesson list. Deterministic: a frozen copy
of lesson 6 (``lesson_fixtures/``, so editing the lesson does not change the layout), fresh
progress under a temporary XDG_STATE_HOME, cursor blink off, no animation. Regenerate with
``--snapshot-update`` and look at the SVGs in ``__snapshots__/`` before committing them."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, TextArea

from hlolab.tui.app import HloLabApp
from hlolab.tui.widgets.lesson_exercise import PickGrid

from .conftest import settle

SIZES = [(80, 24), (120, 40)]


FIXTURES = Path(__file__).parent / "lesson_fixtures"


@pytest.fixture(autouse=True)
def _state_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("HLOLAB_LESSONS", str(FIXTURES))


async def _pick_exercise(pilot) -> None:
    await settle(pilot)
    screen = pilot.app.screen
    for w in screen.query(Input):
        w.cursor_blink = False
    for w in screen.query(TextArea):
        w.cursor_blink = False
    box = screen.boxes[1]
    screen._focus_block(box)
    await settle(pilot)
    grid = box.query_one(PickGrid)
    grid.move_cursor((2, 2))
    grid.toggle((2, 2))
    await settle(pilot)
    box.scroll_visible(top=True, animate=False)
    await settle(pilot)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_lesson_pick_sources(snap_compare, size):
    assert snap_compare(HloLabApp(open_lesson="6", lang="en"), terminal_size=size, run_before=_pick_exercise)


def test_lesson_list(snap_compare):
    assert snap_compare(HloLabApp(lessons=True, lang="en"), terminal_size=(80, 24), run_before=settle)
