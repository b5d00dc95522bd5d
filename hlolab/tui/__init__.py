"""The Textual TUI (``hlolab`` with no arguments). Importing this package does not import
textual: ``run_tui`` imports the app when called."""

from __future__ import annotations

from typing import Any


def run_tui(open_path: str | None = None, open_op: str | None = None, *,
            inputs: list[Any] | None = None, seed: int = 0, open_lesson: str | None = None,
            lessons: bool = False, lang: str | None = None) -> int:
    """Run the app; ``open_path`` opens the program stepper (its entry arguments: ``inputs``,
    the rest random from ``seed``), ``open_op`` the op explorer, ``open_lesson`` the lesson
    viewer on that lesson and ``lessons`` the lesson list (in ``lang``)."""
    from hlolab.tui.app import run_tui as _run

    return _run(open_path=open_path, open_op=open_op, inputs=inputs, seed=seed,
                open_lesson=open_lesson, lessons=lessons, lang=lang)
