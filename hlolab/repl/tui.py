"""``:tui``: the program in the TUI stepper, at the REPL's current step; back on exit."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hlolab.repl.app import Repl

POLL_SECONDS = 0.05
POLL_LIMIT = 200  # 10 s for the stepper to load the program


def make_app(path: str, inputs: list[Any], seed: int, steps: int) -> Any:
    """The TUI app opening ``path`` in the stepper, moved ``steps`` ops forward once the
    stepper has loaded (the REPL's ``:step`` position)."""
    import sys

    from hlolab.tui.app import HloLabApp

    # Textual finds CSS_PATH beside the module defining the class: the TUI's own file
    here = Path(sys.modules[HloLabApp.__module__].__file__ or ".").parent

    class ReplTui(HloLabApp):
        CSS_PATH = str(here / str(HloLabApp.CSS_PATH))

        def on_mount(self) -> None:  # runs beside HloLabApp.on_mount (Textual calls both)
            self.repl_steps = steps
            self.repl_polls = 0
            if steps:
                self.repl_timer = self.set_interval(POLL_SECONDS, self.go_to_step)

        async def go_to_step(self) -> None:
            screen = self.screen
            session = getattr(screen, "session", None)
            self.repl_polls += 1
            if session is None and self.repl_polls < POLL_LIMIT:
                return
            self.repl_timer.stop()
            if session is not None:
                session.step(self.repl_steps)
                await screen.refresh_state()

    return ReplTui(open_path=path, inputs=inputs, seed=seed)


def open_in_tui(repl: Repl) -> None:
    text = repl.program.computation().as_text()
    stepper = repl.stepper_session
    steps = stepper.cursor if stepper is not None and repl.stepper_is_current() else 0
    with tempfile.TemporaryDirectory(prefix="hlolab-repl-") as d:
        path = Path(d) / "repl.mlir"
        path.write_text(text)
        app = make_app(str(path), repl.program.inputs(), repl.program.seed, steps)
        app.run()
    repl.say("back from the TUI" + (f" (it opened at op {steps})" if steps else ""))
