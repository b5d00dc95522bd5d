"""Text fields that keep every keystroke in order, however fast it arrives.

Textual's Input and TextArea insert a printable key in their own key handler,
but their bound keys (backspace, delete, arrows, home/end, ctrl+…) travel up to
the App and come back as an action. When keys arrive in one burst (paste of keys,
auto-repeat, tmux ``send-keys``, a fast typist) a character typed after a backspace
is inserted before the backspace runs: ``End BSpace BSpace BSpace 7`` on ``2,2``
gives ``""``, not ``"7"`` (Textual issue #6605). ``InlineBindings`` runs the
widget's own (non-priority) bindings in its key handler, so a bound key takes
effect before the next key is read; priority bindings were already checked by the
App before the key reached the widget, so what runs is unchanged, only when.

Every text field of the TUI is a ``Field`` or an ``Editor``.
"""

from __future__ import annotations

from textual import events
from textual.widgets import Input, TextArea


class InlineBindings:
    """Mixin for a focusable text widget: its own key bindings run in key order."""

    async def _on_key(self, event: events.Key) -> None:
        if event.is_printable:
            return  # the widget's own handler (next in the MRO) inserts it
        for binding in self._bindings.key_to_bindings.get(event.key, ()):  # type: ignore[attr-defined]
            if binding.priority:
                continue
            if await self.app.run_action(binding.action, self):  # type: ignore[attr-defined]
                event.stop()
                event.prevent_default()  # no second run by the App, no base handler
                return


class Field(InlineBindings, Input):
    """A one-line text field."""


class Editor(InlineBindings, TextArea):
    """A multi-line text editor."""
