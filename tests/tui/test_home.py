"""The home gallery: filtering, opening an op, recent files, app-level navigation."""

from __future__ import annotations

import json

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
            assert shown == ["stablehlo.scatter", "stablehlo.select_and_scatter"]
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
                                           "stablehlo.triangular_solve"}

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
