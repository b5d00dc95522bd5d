"""The TUI survives seeded random keys, bursts, clicks and resizes (issue 24): a short
fixed-seed campaign (every kind of starting screen), replays of the sequences the long
campaign found, and checks that the engine itself reports what it must.

The long campaign runs outside CI: ``python -m tests.tui.tui_fuzz --cases 300 --seed 24``.
"""

from __future__ import annotations

import pytest

from hlolab.tui.app import HloLabApp

from . import tui_fuzz
from .tui_fuzz import DOORS, Start, make_case, replay, run_case

CI_SEED = 2024  # (the cases also depend on the lists of ops and examples they start on)
CI_ACTIONS = 30
# two cases on each start screen, one through each door (palette, help, gallery Enter, dialogs)
CI_CASES = [(kind, None) for kind in ("home", "explorer", "stepper") * 2] + \
    [("dialog", d) for d in range(len(DOORS))]


@pytest.mark.parametrize(("i", "kind", "door"), [(i, kind, door) for i, (kind, door) in enumerate(CI_CASES)],
                         ids=[f"{i}-{kind}" + (f"-{DOORS[d][1]}" if d is not None else "")
                              for i, (kind, d) in enumerate(CI_CASES)])
def test_short_campaign_case(i, kind, door):
    case = make_case(tui_fuzz.case_seed(CI_SEED, i), CI_ACTIONS, kind, door)
    out = run_case(case)
    assert not out.failed, out.report()
    assert out.done == len(case.actions) or out.quit_early


def test_the_vocabulary_has_every_key_the_screens_bind():
    from hlolab.tui.screens.explorer import ExplorerScreen, ExportModal
    from hlolab.tui.screens.stepper import BreakpointsDialog, ProgramDialog, StepperScreen
    from hlolab.tui.widgets.grid import TensorGrid

    single = set(tui_fuzz.vocabulary().single)
    for cls in (ExplorerScreen, ExportModal, StepperScreen, BreakpointsDialog, ProgramDialog, TensorGrid):
        for b in cls.BINDINGS:
            assert set(b.key.split(",")) <= single, (cls.__name__, b.key)


def test_a_case_is_a_function_of_its_seed():
    a, b = make_case(7, 30, "stepper"), make_case(7, 30, "stepper")
    assert (a.start, a.size, a.actions) == (b.start, b.size, b.actions)
    assert a.start.kind == "stepper" and len(a.actions) == 30
    assert make_case(8, 30, "stepper").actions != a.actions


def test_the_engine_reports_an_escaped_exception(monkeypatch):
    def boom(self):
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(HloLabApp, "action_next_theme", boom)
    out = replay([("key", "down"), ("key", "ctrl+t"), ("key", "down")])
    assert out.failed and "ZeroDivisionError: boom" in out.error
    assert out.done == 2  # the case stopped where the app died


def test_the_engine_reports_an_app_that_does_not_quit(monkeypatch):
    monkeypatch.setattr(HloLabApp, "action_quit", lambda self: None)
    monkeypatch.setattr(tui_fuzz, "QUIT_ROUNDS", 10)
    out = replay([("key", "down")])
    assert out.failed and out.error.startswith("no quit")


def test_the_engine_answers_the_quit_confirmation():
    # an invalid parameter that does not build: quitting asks, the engine says yes
    out = replay([("wait", 0), ("key", "e"), ("key", "tab"), ("type", "[[["), ("wait", 0.5), ("wait", 0)],
                 Start("explorer", "stablehlo.gather"))
    assert not out.failed, out.report()
    assert out.confirmed and not out.quit_early


# --- replays of what the long campaign found ---------------------------------------------------

# Textual 8.2.8's OptionList._move_page indexes its line map, empty until the palette's command
# list is laid out: ctrl+p and pageup in one burst raised KeyError (fixed: hlolab.tui.app.Palette)
@pytest.mark.parametrize(("start", "actions"), [
    (Start("home"), [("wait", 0), ("burst", ["ctrl+p", "pageup"])]),
    (Start("explorer", "stablehlo.gather"), [("wait", 0), ("burst", ["ctrl+p", "e", "pagedown"])]),
], ids=["home", "explorer"])
def test_replay_palette_opened_and_paged_in_one_burst(start, actions):
    out = replay(actions, start)
    assert not out.failed, out.report()


# TensorGrid._plane indexed the slice at the cursor of a rank >= 3 tensor whose leading axis is
# empty (0x2x3): IndexError while rendering (fixed there)
@pytest.mark.parametrize(("start", "actions"), [
    # the add explorer's shape field 2x3 becomes 0x2x3
    (Start("explorer", "stablehlo.add"),
     [("wait", 0), ("key", "e"), ("key", "tab"), ("key", "home"), ("type", "0x"), ("key", "enter"),
      ("wait", 0)]),
    # a pasted program with an empty rank-3 argument, its arguments tab
    (Start("stepper", "softplus"),
     [("wait", 0), ("key", "ctrl+o"), ("paste", tui_fuzz.EMPTY_PROGRAM), ("key", "ctrl+s"), ("wait", 0),
      ("key", "2"), ("wait", 0)]),
], ids=["explorer", "stepper"])
def test_replay_empty_rank3_tensor(start, actions):
    out = replay(actions, start)
    assert not out.failed, out.report()
    assert "ExplorerScreen" in out.screens or "StepperScreen" in out.screens


# ExplorerScreen._mount_grids removed the old grids without awaiting and mounted new ones with the
# same ids: DuplicateIds, no grids shown, a zombie grid-operand0 (fixed: it awaits the removal)
def test_replay_preset_switch_that_changes_the_grids():
    # case: the spec-example preset has other results than the default, and an operand0 too
    actions = [("wait", 0), ("key", "e"), ("key", "enter"), ("key", "down"), ("key", "enter"), ("wait", 0)]
    out = replay(actions, Start("explorer", "stablehlo.case"))
    assert not out.failed, out.report()
