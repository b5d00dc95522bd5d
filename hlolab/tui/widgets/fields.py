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
The same goes for the bindings of the screen and the App (Tab moves the focus in
key order), and a key of a burst that reaches the field after the focus moved on
is passed to the widget that has the focus now (the App handed it to the field
because the field had the focus when the key was read).

Every text field of the TUI is a ``Field`` or an ``Editor``.
"""

from __future__ import annotations

from textual import events
from textual.widgets import Input, TextArea


class InlineBindings:
    """Mixin for a focusable text widget: its bound keys run in key order."""

    def inserts(self, key: str) -> bool:
        """A non-printable key the widget's own key handler inserts as text (no binding)."""
        return False

    async def _on_key(self, event: events.Key) -> None:
        focused = self.screen.focused  # type: ignore[attr-defined]
        if focused is not None and focused is not self:
            # typed before a key of the same burst (tab) moved the focus on: it is meant
            # for the widget that has the focus now
            event.stop()
            event.prevent_default()
            focused.post_message(events.Key(event.key, event.character))
            return
        if event.is_printable or self.inserts(event.key):
            return  # the widget's own handler (next in the MRO) inserts it
        # the binding the App would run for this key (the screen's active bindings: this
        # widget's, then its ancestors'); priority ones ran already, before the key came here
        active = self.screen.active_bindings.get(event.key)  # type: ignore[attr-defined]
        if active is None or active.binding.priority or not active.enabled:
            return
        if await self.app.run_action(active.binding.action, active.node):  # type: ignore[attr-defined]
            event.stop()
            event.prevent_default()  # no second run by the App, no base handler


class Field(InlineBindings, Input):
    """A one-line text field."""


class Editor(InlineBindings, TextArea):
    """A multi-line text editor."""

    def inserts(self, key: str) -> bool:
        # TextArea's own handler: enter is a new line; tab indents (escape leaves) in indent mode
        return key == "enter" or (self.tab_behavior == "indent" and key in ("tab", "escape"))
