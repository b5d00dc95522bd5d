"""The Textual TUI (``hlolab`` with no arguments). Importing this package does not import
textual: ``run_tui`` imports the app when called."""

from __future__ import annotations


def run_tui(open_path: str | None = None, open_op: str | None = None) -> int:
    """Run the app; ``open_path`` opens the program stepper, ``open_op`` the op explorer."""
    from hlolab.tui.app import run_tui as _run

    return _run(open_path=open_path, open_op=open_op)
