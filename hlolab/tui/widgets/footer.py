"""A footer that shows only whole keys.

Textual's Footer lays its keys out in one row and cuts the row at the screen's
edge, so at 80 columns the last key reads "e tra". ``FittingFooter`` hides the
keys that do not fit whole, from the end of the row (a key's place says how
much it matters: screen keys come first), and always keeps the help key, where
every key is listed, and the command palette key.
"""

from __future__ import annotations

from typing import ClassVar

from textual.widget import Widget
from textual.widgets import Footer

PALETTE = "-command-palette"


def key_width(key: Widget) -> int:
    """Columns a key takes in the row (its text with padding, and its margin)."""
    return key.render().cell_len + key.styles.margin.width


class FittingFooter(Footer):
    """Footer keys that fit whole; the rest are hidden from the end of the row."""

    KEEP: ClassVar[frozenset[str]] = frozenset({"help", "app.help"})

    async def recompose(self) -> None:
        await super().recompose()
        self.call_after_refresh(self.fit)

    def on_resize(self) -> None:
        self.call_after_refresh(self.fit)

    def fit(self) -> None:
        """Show the keys that fit in the footer's width, in order, help always."""
        keys = list(self.query("FooterKey"))  # by type name: Textual does not export the class
        if not keys or self.size.width <= 0:
            return
        palette = [k for k in keys if k.has_class(PALETTE)]
        row = [k for k in keys if not k.has_class(PALETTE)]
        used = sum(key_width(k) + 1 for k in palette)  # + its left border
        used += sum(key_width(k) for k in row if k.action in self.KEEP)
        full = False
        for k in row:
            if k.action in self.KEEP:
                k.display = True
                continue
            w = key_width(k)
            full = full or used + w > self.size.width
            k.display = not full
            if not full:
                used += w
