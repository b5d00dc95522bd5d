"""A list of labelled tensors, one TensorGrid each, reused from step to step.

The stepper shows the current op's inputs and outputs, the entry arguments
and the results this way. Stepping replaces the values many times a second,
so grids are kept and given new values (``TensorGrid.set_value``) instead of
being removed and mounted again; only a change in the number of values
mounts or removes widgets. Values that are not arrays (tokens, tuples) are
shown as one line of text.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np
from textual.containers import Vertical
from textual.widget import Widget
from textual.widgets import Static

from hlolab.tui.widgets.grid import TensorGrid


@dataclass(frozen=True)
class ValueEntry:
    """One value to show: a key the owner uses to find it again, a title, the value."""

    key: Hashable
    title: str
    value: Any


class ValueList(Vertical):
    """Labelled values stacked vertically (the parent scrolls)."""

    DEFAULT_CSS = """
    ValueList { height: auto; }
    ValueList > .values--text { color: $text-muted; padding-left: 1; }
    ValueList > TensorGrid { margin-bottom: 1; }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None):
        super().__init__(id=id, classes=classes)
        self._keys: list[Hashable] = []
        self._marks: dict[Hashable, Hashable] = {}  # key -> token of the highlights it shows

    def mark(self, key: Hashable, token: Hashable, cells: Callable[[], dict[tuple[int, ...], str]]) -> None:
        """Give the grid of ``key`` the highlights ``cells()`` unless it already shows ``token``'s
        (highlights of a large trace are computed and split once, not at every step)."""
        grid = self.grid(key)
        if grid is None or self._marks.get(key) == token:
            return
        grid.set_highlights(cells())
        self._marks[key] = token

    def grid(self, key: Hashable) -> TensorGrid | None:
        """The grid showing the value with ``key`` (None for non-array values)."""
        for k, w in zip(self._keys, self._value_widgets()):
            if k == key and isinstance(w, TensorGrid):
                return w
        return None

    def key_of(self, widget: Widget) -> Hashable | None:
        """The key of the value a grid of this list shows."""
        for k, w in zip(self._keys, self._value_widgets()):
            if w is widget:
                return k
        return None

    def grids(self) -> list[tuple[Hashable, TensorGrid]]:
        return [(k, w) for k, w in zip(self._keys, self._value_widgets()) if isinstance(w, TensorGrid)]

    def _value_widgets(self) -> list[Widget]:
        return list(self.children)

    async def set_entries(self, entries: list[ValueEntry]) -> None:
        """Show ``entries`` in order, reusing the widgets already mounted where the kind matches."""
        widgets = self._value_widgets()
        new: list[Widget] = []
        for i, e in enumerate(entries):
            is_array = isinstance(e.value, np.ndarray)
            old = widgets[i] if i < len(widgets) else None
            if is_array and isinstance(old, TensorGrid):
                if old.value is not e.value or getattr(old, "title_text", None) != e.title:
                    old.clear_highlights()
                    old.set_value(e.value, title=e.title)
                    self._marks.pop(e.key, None)
                elif i >= len(self._keys) or self._keys[i] != e.key:
                    self._marks.pop(e.key, None)
                    old.clear_highlights()
                new.append(old)
            elif not is_array and isinstance(old, Static):
                old.update(f"{e.title}: {_describe(e.value)}")
                new.append(old)
            else:
                if old is not None:
                    await old.remove()
                self._marks.pop(e.key, None)
                w: Widget = TensorGrid(e.value, title=e.title) if is_array else \
                    Static(f"{e.title}: {_describe(e.value)}", classes="values--text", markup=False)
                await self.mount(w, before=widgets[i + 1] if i + 1 < len(widgets) else None)
                new.append(w)
        for w in widgets[len(entries):]:
            await w.remove()
        self._keys = [e.key for e in entries]


def _describe(value: Any) -> str:
    if isinstance(value, list | tuple):
        return "(" + ", ".join(_describe(v) for v in value) + ")"
    if value is None:
        return "none"
    name = type(value).__name__
    return "token" if "token" in name.lower() else name
