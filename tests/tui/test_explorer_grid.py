"""The explorer on a process grid (issue 27): a collective opens on its schema's grid, ``<`` /
``>`` switch the shown process (grid values, labels and title follow), a result element's
explanation names the process each source comes from, an operand element says where it
goes, the grid parameters rebuild the op, and export writes the collective picture of the
shown process."""

from __future__ import annotations

import numpy as np

from hlolab.ops.examples import make_example
from hlolab.session import Session
from hlolab.tui.app import HloLabApp
from hlolab.tui.screens.explorer import ExplorerScreen
from hlolab.tui.widgets.params import ParamPanel

from .conftest import run, settle


def per_process_results(op: str, preset: str = "default", params: dict | None = None) -> list[np.ndarray]:
    ex = make_example(op, preset, params)
    s = Session(ex.text)
    s.bind(ex.inputs)
    assert s.run().reason == "end"
    return [np.asarray(r[0]) for r in s.process_results]


def test_switching_process_shows_that_process_values_and_names_it():
    want = per_process_results("all_to_all")
    assert not np.array_equal(want[0], want[1])

    async def body():
        async with HloLabApp(open_op="all_to_all").run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            screen = pilot.app.screen
            assert isinstance(screen, ExplorerScreen)
            assert screen.process == 0
            assert screen.grid("result0").value.tolist() == want[0].tolist()
            assert screen.sub_title == "all_to_all · process 0 (replica 0, partition 0)"
            await pilot.press("greater_than_sign")
            await pilot.pause()
            assert screen.process == 1
            assert screen.grid("result0").value.tolist() == want[1].tolist()
            assert screen.grid("operand0").value.tolist() == [[9, 10, 11, 12], [13, 14, 15, 16]]
            assert screen.sub_title == "all_to_all · process 1 (replica 1, partition 0)"
            assert screen.grid("result0").title_text.startswith("%result@(1, 0) : tensor<4x2xi64>")
            assert screen.grid("operand0").title_text.startswith("%operand@(1, 0) : tensor<2x4xi64>")
            assert "process 1 (replica 1, partition 0)" in str(screen.query_one("#status").render())
            await pilot.press("greater_than_sign")  # wraps around the grid
            await pilot.pause()
            assert screen.process == 0
            await pilot.press("less_than_sign")
            await pilot.pause()
            assert screen.process == 1

    run(body)


def test_explain_names_the_source_process_and_highlights_only_local_sources():
    async def body():
        async with HloLabApp(open_op="all_to_all").run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            screen = pilot.app.screen
            await pilot.press("greater_than_sign")
            await pilot.pause()
            result = screen.grid("result0")
            # process 1's result row 0 is process 0's block: 3 = %operand@(0, 0)[0, 2]
            result.move_cursor((0, 0))
            await pilot.pause()
            text = screen.query_one("#explain").text
            assert "results[0]@(1, 0)" in text and "%operand@(0, 0)[0, 2]" in text
            assert screen.grid("operand0").highlights == {}  # the source is on another process
            # row 2 is its own block: 11 = %operand@(1, 0)[0, 2], highlighted on the shown operand
            result.move_cursor((2, 0))
            await pilot.pause()
            text = screen.query_one("#explain").text
            assert "%operand@(1, 0)[0, 2]" in text and "= 11" in text
            assert screen.grid("operand0").highlights == {(0, 2): "copy"}

    run(body)


def test_operand_element_says_which_process_it_goes_to():
    async def body():
        async with HloLabApp(open_op="all_to_all").run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            screen = pilot.app.screen
            await pilot.press("greater_than_sign")
            await pilot.pause()
            operand = screen.grid("operand0")
            operand.focus()
            operand.move_cursor((0, 1))  # the first block: process 1 sends it to process 0
            await pilot.pause()
            text = screen.query_one("#explain").text
            assert "%operand@(1, 0)[0, 1] = 10" in text
            assert "flows into no result element of this process" in text
            assert "goes to process 0 (replica 0, partition 0)" in text
            operand.move_cursor((1, 3))  # the second block stays: result[3, 1] of process 1
            await pilot.pause()
            text = screen.query_one("#explain").text
            assert "goes to process 1 (replica 1, partition 0)" in text
            assert screen.grid("result0").highlights == {(3, 1): "copy"}

    run(body)


def test_grid_parameters_rebuild_on_the_new_grid():
    want = per_process_results("all_to_all", params={"replicas": "4", "operand": "2x4"})

    async def body():
        async with HloLabApp(open_op="all_to_all").run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            screen = pilot.app.screen
            panel = screen.query_one(ParamPanel)
            panel.set_field("replicas", "4")
            panel.post_changed()
            await settle(pilot)
            assert screen.built.grid == (4, 1) and not screen.error
            for _ in range(3):
                await pilot.press("greater_than_sign")
                await pilot.pause()
            assert screen.process == 3
            assert screen.sub_title.endswith("process 3 (replica 3, partition 0)")
            assert screen.grid("result0").value.tolist() == want[3].tolist()
            # a group that is not the grid's: the spec constraint, the last view kept
            panel.set_field("replica_groups", "0,1")
            panel.post_changed()
            await settle(pilot)
            assert "all_to_all (C" in screen.error

    run(body)


def test_process_keys_only_on_a_grid():
    async def body():
        async with HloLabApp(open_op="gather").run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            screen = pilot.app.screen
            assert screen.check_action("process", (1,)) is False
            await pilot.press("greater_than_sign")
            await pilot.pause()
            assert screen.process == 0 and screen.sub_title == "gather"

    run(body)


def test_export_writes_the_collective_picture_of_the_shown_process(tmp_path, monkeypatch):
    from PIL import Image

    monkeypatch.setattr(ExplorerScreen, "EXPORT_DIR", tmp_path / "out")

    async def body():
        async with HloLabApp(open_op="all_to_all").run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            await pilot.press("greater_than_sign")
            await pilot.pause()
            await pilot.press("x")
            await pilot.pause()
            await pilot.press("p")
            for _ in range(100):  # the export runs in a worker: wait for its notification
                await settle(pilot)
                if any("wrote" in str(n.message) for n in pilot.app._notifications):
                    break
            path = tmp_path / "out" / "all_to_all_process1.png"
            assert any(f"wrote {path}" in str(n.message) for n in pilot.app._notifications)
            w, h = Image.open(path).size
            assert w > 600 and h > 600

    run(body)


def test_the_exported_picture_is_drawn_for_the_chosen_process_and_element(tmp_path):
    from hlolab.render.collective import collective_model
    from hlolab.tui.screens.explorer import build
    from hlolab.tui.widgets.params import Request

    built = build(Request("stablehlo.all_to_all", "spec-example", {}, "iota", 0), process=1)
    assert built.event.frame.process == 1
    model = collective_model(built.event, (0, (2, 1)))
    assert model.process == 1 and model.group == [0, 1]
    # %result#0@(1, 0)[2, 1] = 12 comes from process 1's %operand0[0, 3] (the spec's values)
    assert [(s.process, s.operand, s.index) for s in model.sources] == [(1, 0, (0, 3))]
    assert built.at(0).event.frame.process == 0 and built.at(2).process == 0


def test_a_preset_opens_on_its_interesting_process():
    async def body():
        async with HloLabApp().run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            pilot.app.push_screen(ExplorerScreen("collective_permute", "spec-example"))
            await settle(pilot)
            screen = pilot.app.screen
            # the spec's example: process 1 receives process 0's operand
            assert screen.process == 1
            assert screen.grid("result0").value.tolist() == [[1, 2], [3, 4]]
            assert screen.grid("result0").cursor == (1, 0)
            assert "%operand@(0, 0)[1, 0]" in screen.query_one("#explain").text

    run(body)
