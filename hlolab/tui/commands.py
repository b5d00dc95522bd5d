"""The command palette (ctrl+p): every explorer-ready op, every screen and the actions of
the screen it was opened on."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from textual.command import DiscoveryHit, Hit, Hits, Provider


class HloLabCommands(Provider):
    """Ops (open the explorer), screens (home, help, lessons…) and screen actions."""

    def _commands(self) -> list[tuple[str, Callable[[], Any], str]]:
        from hlolab.ops.examples import schema_ops
        from hlolab.tui.screens.explorer import ExplorerScreen
        from hlolab.tui.screens.home import recent_files

        app: Any = self.app
        out: list[tuple[str, Callable[[], Any], str]] = [
            ("Home: op gallery", app.action_go_home, "back to the gallery of ops"),
            ("Help: keys", app.action_help, "the keys of this screen"),
            ("Theme: next", app.action_next_theme, "switch to the next theme (light and dark)"),
            ("Lessons: guided lessons", app.open_lessons, "the lessons with your progress"),
        ]
        screen = self.screen
        if isinstance(screen, ExplorerScreen):
            out += [("Play / pause the animation", screen.action_play, "animate over the result"),
                    ("Step forward", partial(screen.action_step, 1), "next result element"),
                    ("Step back", partial(screen.action_step, -1), "previous result element")]
            out += [(f"Export {fmt.upper()}", partial(screen.export, fmt), f"write ./hlolab-export/*.{fmt}")
                    for fmt in ("png", "svg", "gif")]
        if type(screen).__name__ == "StepperScreen":  # (not imported: it loads the stepper)
            stepper: Any = screen
            out += [("Breakpoints…", stepper.action_breakpoints,
                     "op names, SSA names, lines, the first NaN/Inf")]
        for op in schema_ops():
            short = op.removeprefix("stablehlo.")
            out.append((f"Explore {short}", partial(app.open_op, op), f"op explorer on {op}"))
        for path in recent_files():
            out.append((f"Open {path}", partial(app.open_file, path), "program stepper"))
        return out

    async def discover(self) -> Hits:
        for name, command, help_text in self._commands():
            yield DiscoveryHit(name, command, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, command, help_text in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), command, help=help_text)
