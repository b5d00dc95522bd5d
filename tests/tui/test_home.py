"""The home gallery: filtering, opening an op, recent files, app-level navigation."""

from __future__ import annotations

import json

from rich.table import Table
from textual.widgets import Static

from hlolab.ops.examples import schema_ops
from hlolab.tui.app import HloLabApp
from hlolab.tui.screens.explorer import ExplorerScreen
from hlolab.tui.screens.help import HelpScreen
from hlolab.tui.screens.home import HomeScreen, gallery, recent_files, recent_path, remember_file

from .conftest import run, settle


def test_gallery_lists_every_schema_op_in_a_family():
    entries, _ = gallery()
    assert sorted(e.op for e in entries) == schema_ops()
    fams = {e.op: e.family for e in entries}
    assert fams["stablehlo.gather"] == "indexing"
    assert fams["stablehlo.add"] == "element-wise"
    assert fams["stablehlo.reduce_window"] == "windows & reductions"
    assert fams["stablehlo.dot_general"] == "contractions"
    assert "other" not in fams.values()


def test_home_starts_on_gather_and_filter_narrows_the_list():
    async def body():
        async with HloLabApp().run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            home = pilot.app.screen
            assert isinstance(home, HomeScreen)
            assert home.highlighted_id == "op:stablehlo.gather"
            assert sorted(home.shown_ops) == schema_ops()
            await pilot.press(*"scat")
            shown = home.shown_ops
            assert shown == ["stablehlo.scatter", "stablehlo.select_and_scatter", "stablehlo.reduce_scatter"]
            assert home.highlighted_id == "op:stablehlo.scatter"
            await pilot.press("down")
            assert home.highlighted_id == "op:stablehlo.select_and_scatter"
            await pilot.press("enter")
            await settle(pilot)
            screen = pilot.app.screen
            assert isinstance(screen, ExplorerScreen)
            assert screen.op == "stablehlo.select_and_scatter"
            assert screen.error == ""
            await pilot.press("escape")
            await pilot.pause()
            assert pilot.app.screen is home
            # a filter with no match says so and opens nothing
            await pilot.press("escape")
            await pilot.press(*"zzz")
            assert home.shown_ops == []
            await pilot.press("enter")
            await pilot.pause()
            assert pilot.app.screen is home

    run(body)


def test_family_words_filter_too():
    async def body():
        async with HloLabApp().run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            home = pilot.app.screen
            await pilot.press(*"contractions")
            assert set(home.shown_ops) == {"stablehlo.dot_general", "stablehlo.convolution", "stablehlo.dot",
                                           "stablehlo.dynamic_conv", "stablehlo.cholesky", "stablehlo.fft",
                                           "stablehlo.triangular_solve", "chlo.ragged_dot"}

    run(body)


def test_recent_files_round_trip_and_tolerate_a_corrupt_file(tmp_path):
    assert recent_files() == []
    recent_path().parent.mkdir(parents=True, exist_ok=True)
    recent_path().write_text("{not json")
    assert recent_files() == []
    a, b = tmp_path / "a.mlir", tmp_path / "b.mlir"
    remember_file(a)
    remember_file(b)
    remember_file(a)
    assert recent_files() == [str(a.resolve()), str(b.resolve())]
    assert json.loads(recent_path().read_text())[0] == str(a.resolve())


def test_open_path_without_a_stepper_or_with_a_missing_file_never_crashes(tmp_path):
    async def body():
        async with HloLabApp(open_path=str(tmp_path / "missing.mlir")).run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            assert isinstance(pilot.app.screen, HomeScreen)
            assert any("cannot read" in str(n.message) for n in pilot.app._notifications)

    run(body)


def test_unknown_op_is_a_notification():
    async def body():
        async with HloLabApp(open_op="no_such_op").run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            assert isinstance(pilot.app.screen, HomeScreen)
            assert any("no_such_op" in str(n.message) for n in pilot.app._notifications)

    run(body)


def test_help_theme_and_palette():
    async def body():
        async with HloLabApp(open_op="gather").run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            await pilot.press("f1")
            await pilot.pause()
            assert isinstance(pilot.app.screen, HelpScreen)
            assert ("space", "Play/pause") in pilot.app.screen.bindings
            assert pilot.app.screen.grids  # the explorer shows grids: their keys are listed
            await pilot.press("escape")
            await pilot.pause()
            assert isinstance(pilot.app.screen, ExplorerScreen)
            before = pilot.app.theme
            await pilot.press("ctrl+t")
            assert pilot.app.theme != before
            # the palette reaches an op: open it on reduce_window
            await pilot.press("ctrl+p")
            await pilot.pause()
            await pilot.press(*"Explore reduce_window")
            await pilot.pause(0.3)
            await pilot.press("enter")
            await settle(pilot)
            screen = pilot.app.screen
            assert isinstance(screen, ExplorerScreen) and screen.op == "stablehlo.reduce_window"

    run(body)


def test_importing_hlolab_and_the_tui_package_does_not_import_textual():
    import subprocess
    import sys

    code = ("import sys, hlolab, hlolab.tui; "
            "assert 'textual' not in sys.modules, 'textual imported'; print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_nothing_unbuilt_is_offered():
    # no "coming with the ... issue" sections, no family header without an op to open,
    # no palette command that only says "not yet" (issue 24)
    from hlolab.tui.commands import HloLabCommands

    async def body():
        async with HloLabApp().run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            home = pilot.app.screen
            ol = home.query_one("#ops")
            texts = [str(ol.get_option_at_index(i).prompt) for i in range(ol.option_count)]
            ids = [ol.get_option_at_index(i).id or "" for i in range(ol.option_count)]
            assert not any("coming" in t or "not yet" in t or "explorer-ready" in t for t in texts)
            families = [i for i in ids if i.startswith("family:")]
            assert families and all(  # every family shown is followed by an op of its own
                ids[ids.index(f) + 1].startswith("op:") for f in families)
            commands = HloLabCommands(pilot.app.screen)._commands()
            assert not any("not yet" in help_ or "issue" in help_ for _, _, help_ in commands)

    run(body)


async def _typed(pilot, text: str) -> HomeScreen:
    home = pilot.app.screen
    await pilot.press("escape")
    await pilot.press(*text)
    return home


def test_filter_highlights_the_op_the_name_means_before_longer_names():
    # issue 24: "conv" selected convert (alphabetical) though conv is XLA's Conv = convolution
    async def body():
        async with HloLabApp().run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            home = await _typed(pilot, "conv")
            assert home.highlighted_id == "op:stablehlo.convolution"
            assert home.shown_ops[0] == "stablehlo.convolution"  # best first in the list too
            assert {"stablehlo.convert", "stablehlo.dynamic_conv"} <= set(home.shown_ops)
            home = await _typed(pilot, "gather")
            assert home.highlighted_id == "op:stablehlo.gather"  # not dynamic_gather
            home = await _typed(pilot, "dot")
            assert home.highlighted_id == "op:stablehlo.dot"  # not dot_general
            # names only XLA uses, any case: the aliases schema_for resolves
            home = await _typed(pilot, "ConvGeneralDilated")
            assert home.shown_ops == ["stablehlo.convolution"]
            home = await _typed(pilot, "mul")
            assert home.highlighted_id == "op:stablehlo.multiply"  # XLA's Mul
            # a prefix: the op with the shortest name it begins ("conve": convert, 7 letters;
            # "con": convolution, whose XLA name Conv is shorter than convert)
            home = await _typed(pilot, "conve")
            assert home.highlighted_id == "op:stablehlo.convert"
            home = await _typed(pilot, "con")
            assert home.highlighted_id == "op:stablehlo.convolution"
            # an op's own name before another op's alias: "g" is gather, not compare (XLA's Ge)
            home = await _typed(pilot, "g")
            assert home.highlighted_id == "op:stablehlo.gather"
            home = await _typed(pilot, "condit")  # only an alias begins so: XLA's Conditional
            assert home.highlighted_id == "op:stablehlo.if"

    run(body)


def test_a_family_word_highlights_an_op_of_that_family():
    async def body():
        async with HloLabApp().run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            home = await _typed(pilot, "window")
            fams = {e.op: e.family for e in home.entries}
            best = home.highlighted_id.removeprefix("op:")
            assert fams[best] == "windows & reductions" and best == "stablehlo.reduce_window"
            # families come in the order of their best op: the windows family first
            ol = home.query_one("#ops")
            assert ol.get_option_at_index(0).id == "family:windows & reductions"

    run(body)


def test_home_and_end_choose_the_first_and_last_entry_unless_the_filter_has_text():
    async def body():
        async with HloLabApp().run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            home = pilot.app.screen
            ops = home.shown_ops
            assert recent_files() == []  # (an empty config dir): the last entry is the last op
            await pilot.press("end")
            assert home.highlighted_id == f"op:{ops[-1]}"
            await pilot.press("home")  # the first entry: the guided lessons, above the ops
            assert home.highlighted_id == "lessons:list"
            # with text in the box, Home/End edit: the cursor moves, the list stays
            await pilot.press(*"scat")
            f = home.query_one("#filter")
            assert f.cursor_position == 4 and home.highlighted_id == "op:stablehlo.scatter"
            await pilot.press("home")
            assert f.cursor_position == 0 and home.highlighted_id == "op:stablehlo.scatter"
            await pilot.press("d")
            assert f.value == "dscat"
            # in the list (tab), Home/End are the list's own
            await pilot.press("escape", "tab")
            assert home.focused is home.query_one("#ops")
            await pilot.press("end")
            assert home.highlighted_id == f"op:{ops[-1]}"
            await pilot.press("home")
            assert home.highlighted_id == "lessons:list"
            # F1 from the filter box says what its keys do here (not Input's "Scroll Up")
            await pilot.press("escape", "f1")  # esc with an empty filter: back to the box
            await pilot.pause()
            rows = dict(pilot.app.screen.bindings)
            assert rows["home"] == "Start of the text (empty box: first entry)"
            assert rows["↓"] == "Next entry" and "Scroll Up" not in rows.values()

    run(body)


def test_typing_in_the_list_filters_and_bound_keys_keep_their_meaning():
    # issue 24: "g" in the gallery did nothing visible once the list had the focus
    async def body():
        async with HloLabApp().run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            home = pilot.app.screen
            await pilot.press("tab")
            ol = home.query_one("#ops")
            assert home.focused is ol
            await pilot.press(*"gatx", "backspace", "h")
            f = home.query_one("#filter")
            assert f.value == "gath" and home.focused is ol
            assert home.highlighted_id == "op:stablehlo.gather"
            await pilot.press("question_mark")  # bound: help, not a filter character
            await pilot.pause()
            assert isinstance(pilot.app.screen, HelpScreen) and f.value == "gath"
            await pilot.press("escape")
            await pilot.pause()
            await pilot.press("enter")
            await settle(pilot)
            assert isinstance(pilot.app.screen, ExplorerScreen) and pilot.app.screen.op == "stablehlo.gather"

    run(body)


def test_help_on_the_gallery_lists_no_grid_keys():
    """The gallery has no tensor grid: F1 does not list grid keys there."""
    async def body():
        async with HloLabApp().run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            await pilot.press("f1")
            await pilot.pause()
            help_screen = pilot.app.screen
            assert isinstance(help_screen, HelpScreen) and not help_screen.grids
            titles = [w.content.title for w in help_screen.query(Static) if isinstance(w.content, Table)]
            assert titles == ["home keys", "everywhere"]

    run(body)


def test_the_family_header_of_the_highlighted_op_is_in_view():
    """At 80x24 the gallery opens on gather under its family's header; Home shows the first
    section's header above the first entry (not scrolled past it)."""
    async def body():
        async with HloLabApp().run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            await pilot.pause()
            ol = pilot.app.screen.query_one("#ops")
            top = "".join(seg.text for seg in ol.render_line(0)).strip()
            entries, _ = gallery()
            family = next(e.family for e in entries if e.op == "stablehlo.gather")
            assert top == family
            await pilot.press("home")
            await pilot.pause()
            top = "".join(seg.text for seg in ol.render_line(0)).strip()
            assert top == "learn"  # the first section's header above its entry
            assert ol.highlighted == 1  # the guided lessons, under their header

    run(body)


def test_back_from_an_explorer_typing_starts_a_new_search():
    """conv, Enter, Escape, then typing select_a: the filter holds select_a (not convselect_a)
    and the highlighted op is select_and_scatter."""
    async def body():
        async with HloLabApp().run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            await pilot.press(*"conv", "enter")
            await settle(pilot)
            assert isinstance(pilot.app.screen, ExplorerScreen)
            await pilot.press("escape")
            await pilot.pause()
            screen = pilot.app.screen
            assert isinstance(screen, HomeScreen)
            await pilot.press(*"select_a")
            await pilot.pause()
            assert screen.query_one("#filter").value == "select_a"
            assert screen.highlighted_id == "op:stablehlo.select_and_scatter"

    run(body)
