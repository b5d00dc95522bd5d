"""Footer key descriptions in the reader's language."""

from __future__ import annotations

from dataclasses import replace

from hlolab.messages import Msg, catalogue, text


class LocalizedBindings:
    """Mixed into a screen or widget whose key descriptions the catalogue translates
    (``lessons.tui.bind.<binding id>``); keys the catalogue lacks keep their description."""

    def localize_bindings(self, lang: str) -> None:
        """Rewrite this node's copy of its class's bindings (others are not touched)."""
        known = catalogue("en")
        table = self._bindings.key_to_bindings  # type: ignore[attr-defined]
        for key, bindings in table.items():
            table[key] = [replace(b, description=text(Msg(f"lessons.tui.bind.{b.id}"), lang))
                          if b.id and f"lessons.tui.bind.{b.id}" in known else b for b in bindings]
