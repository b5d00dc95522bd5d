"""Keys sent in one burst (as a terminal delivers a paste of keys, auto-repeat or
tmux send-keys) edit a field in the order they were typed (issue 24, defect 3)."""

from __future__ import annotations

import ast
from pathlib import Path

from textual import events
from textual.app import App, ComposeResult
from textual.widgets import Input, TextArea

import hlolab.tui
from hlolab.tui.app import HloLabApp
from hlolab.tui.screens.explorer import ExplorerScreen
from hlolab.tui.widgets.fields import Editor, Field
from hlolab.tui.widgets.params import ParamPanel

from .conftest import run, settle

# (key, character): End, three backspaces, 7, Left, 8
BURST = [("end", None), ("backspace", None), ("backspace", None), ("backspace", None), ("7", "7"),
         ("left", None), ("8", "8")]


def post_burst(app: App, keys: list[tuple[str, str | None]]) -> None:
    """Queue every key at once, without waiting in between (what the terminal driver does)."""
    for key, char in keys:
        app.post_message(events.Key(key, char))


class OneField(App):
    def __init__(self, make):
        super().__init__()
        self.make = make

    def compose(self) -> ComposeResult:
        self.widget = self.make()
        yield self.widget


def edited(make) -> str:
    """The text after BURST, in a field made by ``make()`` holding "2,2"."""
    async def body():
        app = OneField(make)
        async with app.run_test() as pilot:
            widget = app.widget
            widget.focus()
            await pilot.pause()
            post_burst(app, BURST)
            for _ in range(5):
                await pilot.pause()
            return widget.value if isinstance(widget, Input) else widget.text

    return run(body)


def test_field_applies_a_burst_in_order():
    assert edited(lambda: Field("2,2")) == "87"


def test_editor_applies_a_burst_in_order():
    assert edited(lambda: Editor("2,2")) == "87"


def test_plain_textual_input_reorders_the_burst():
    """Why Field exists: if Textual fixes #6605 this fails, and Field can go."""
    assert edited(lambda: Input("2,2")) != "87"


def test_explorer_parameter_burst_reaches_the_op():
    """`End BSpace BSpace BSpace 7` on slice_sizes = 2,2 of gather's spec example ends as
    7 in the field and the rebuild reports the constraint on slice_sizes' size."""

    async def body():
        async with HloLabApp(open_op="gather").run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            screen = pilot.app.screen
            assert isinstance(screen, ExplorerScreen)
            panel = screen.query_one(ParamPanel)
            field = panel.field("slice_sizes")
            assert field.value == "2,2"
            field.focus()
            await pilot.pause()
            post_burst(pilot.app, BURST[:5])
            await pilot.pause(ParamPanel.DEBOUNCE + 0.1)
            await settle(pilot)
            assert field.value == "7"
            assert "slice_sizes" in screen.error and "(C" in screen.error

    run(body)


def test_every_text_field_of_the_tui_keeps_key_order():
    """No screen builds a plain Input or TextArea (they reorder bursts); a subclass of
    Field / Editor is fine."""
    root = Path(hlolab.tui.__file__).parent
    plain = {Input.__name__, TextArea.__name__}
    found = []
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in plain:
                found.append(f"{path.relative_to(root)}:{node.lineno}")
            if isinstance(node, ast.ClassDef) and path.name != "fields.py":
                bases = {b.id for b in node.bases if isinstance(b, ast.Name)}
                if bases & plain:
                    found.append(f"{path.relative_to(root)}:{node.lineno} class {node.name}")
    assert found == []


def test_keys_after_a_tab_in_a_burst_go_to_the_next_field():
    """The add explorer: on shape = 2x3, `BSpace 4 Tab i 3 2` in one burst gives shape 2x4 and
    dtype i32 (the keys after Tab belong to the next field), as typed one by one."""

    async def body():
        async with HloLabApp(open_op="add").run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            panel = pilot.app.screen.query_one(ParamPanel)
            shape, dtype = panel.field("shape"), panel.field("dtype")
            assert (shape.value, dtype.value) == ("2x3", "f32")
            shape.focus()
            await pilot.pause()
            shape.cursor_position = len(shape.value)
            dtype.value = ""
            post_burst(pilot.app, [("backspace", None), ("4", "4"), ("tab", None), ("i", "i"), ("3", "3"),
                                   ("2", "2")])
            for _ in range(5):
                await pilot.pause()
            assert (shape.value, dtype.value) == ("2x4", "i32")
            assert pilot.app.screen.focused is dtype

    run(body)


def test_editor_enter_is_a_new_line_even_where_an_ancestor_binds_enter():
    class Bound(App):
        BINDINGS = [("enter", "bell", "ring")]

        def compose(self) -> ComposeResult:
            yield Editor("ab", id="ed")

    async def body():
        app = Bound()
        async with app.run_test() as pilot:
            ed = app.query_one(Editor)
            ed.focus()
            ed.move_cursor((0, 1))
            await pilot.pause()
            post_burst(app, [("enter", None), ("x", "x")])
            for _ in range(3):
                await pilot.pause()
            return ed.text

    assert run(body) == "a\nxb"
