"""The REPL: a prompt_toolkit session in which a program is built statement by
statement (MLIR or the builder language) and every value is printed at once.

``Repl.handle(text)`` does one input (a statement or a ``:command``) and is what
tests drive without a terminal; ``Repl.run()`` is the interactive loop.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any, TextIO

from hlolab.errors import HloLabError
from hlolab.repl import display
from hlolab.repl.state import Program, data_dir, read_autosave

PROMPT = "hlo> "
CONTINUATION = " ..> "
AUTOSAVE_NAME = "repl-session.json"
HISTORY_NAME = "repl-history"


def is_complete_input(text: str) -> bool:
    """Enter submits: a command line, or a statement whose brackets are balanced."""
    from hlolab.repl import language, statements

    s = text.strip()
    if not s or s.startswith(":"):
        return True
    if statements.is_mlir_statement(s):
        return statements.is_complete(s)
    return language.is_complete(s)


def warm_up() -> None:
    """Import what the first statement needs (numpy, the builder, the op registry, the
    parser) in the background, so the prompt appears at once and the first value soon."""
    try:
        from hlolab.ir import parser  # noqa: F401
        from hlolab.ops.registry import all_ops
        from hlolab.xla import FUNCTIONS  # noqa: F401

        all_ops()
    except Exception:  # noqa: BLE001 - the statement that needs them reports any problem
        pass


class Repl:
    """One REPL: the program being built, the stepper on it, and where output goes."""

    def __init__(self, out: TextIO | None = None, colour: bool | None = None, seed: int = 0,
                 autosave: bool = True):
        self.out = out or sys.stdout
        self.colour = bool(getattr(self.out, "isatty", lambda: False)()) if colour is None else colour
        self.dir = data_dir()
        self.autosave_path = self.dir / AUTOSAVE_NAME
        self.program = Program(seed, self.autosave_path if autosave else None)
        from hlolab.messages import current_language

        self.lang = current_language()
        self.breakpoints: list[tuple[str, str]] = []
        self.stepper_session: Any = None
        self._stepper_version = -1
        self.line = 0  # inputs handled (the line number of a statement's errors)
        self._warm: threading.Thread | None = None
        self.quitting = False  # :quit asked to leave

    # --- output --------------------------------------------------------------------
    def say(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def paint(self, text: str, kind: str) -> str:
        return display.paint(text, kind, self.colour)

    def show_value(self, name: str, value: Any, type_: Any = None) -> None:
        self.say(display.format_binding(name, value, type_, self.colour))

    def show_error(self, e: BaseException) -> None:
        if isinstance(e, HloLabError):
            text = str(e)
        else:  # an hlolab bug: say what happened, never a traceback
            text = f"internal error: {type(e).__name__}: {e}"
        lines = text.splitlines() or [""]
        self.say("\n".join([self.paint(lines[0], "error")] + lines[1:]))

    def show_stop(self, stop: Any) -> None:
        self.say(self.paint(str(stop), "dim"))
        ev = stop.event
        if ev is None:
            return
        for v, x in zip(ev.op.results, ev.outputs):
            self.show_value(v.name, x, v.type)

    # --- the stepper ---------------------------------------------------------------
    def stepper(self) -> Any:
        """The Session ``:step``/``:back``/``:run`` drive; a new one when the program changed."""
        if self.stepper_session is None or self._stepper_version != self.program.version:
            s = self.program.session()
            for kind, value in self.breakpoints:
                if kind == "line":  # statement N: a stop at each value it defined
                    entry = self.program.entries[int(value) - 1]
                    for v in entry.values:
                        s.add_breakpoint("name", "%" + v.name)
                else:
                    s.add_breakpoint(kind, value or None)
            self.stepper_session = s
            self._stepper_version = self.program.version
        return self.stepper_session

    def stepper_is_current(self) -> bool:
        return self.stepper_session is not None and self._stepper_version == self.program.version

    # --- inputs --------------------------------------------------------------------
    def handle(self, text: str) -> None:
        """One input: a ``:command`` or a statement; errors are printed, never raised."""
        self.line += 1
        if not text.strip():
            return
        self.ready()
        try:
            if text.lstrip().startswith(":"):
                from hlolab.repl.commands import run_command

                run_command(self, text)
            else:
                self.statement(text)
        except KeyboardInterrupt:
            self.say(self.paint("interrupted", "error"))
        except HloLabError as e:
            self.show_error(e)
        except Exception as e:  # noqa: BLE001 - the REPL must survive an hlolab bug
            self.show_error(e)

    def ready(self) -> None:
        """Wait for the background imports: the op registry must load in one thread only
        (``hlolab.ops.registry`` marks itself loaded before its modules are imported)."""
        if self._warm is not None:
            self._warm.join()

    def statement(self, text: str) -> None:
        for v in self.program.execute(text.strip("\n")):
            self.show_value(v.name, self.program.cache.get(v.value), v.type)

    def offer_restore(self, ask: Any) -> None:
        """An autosaved session (the last one did not end cleanly): offered back."""
        snap = read_autosave(self.autosave_path)
        if snap is None:
            return
        self.ready()
        n = len(snap["entries"])
        answer = ask(f"restore the unsaved session ({n} statement{'s' if n != 1 else ''})? [Y/n] ")
        if answer.strip().lower() in ("", "y", "yes"):
            problems = self.program.restore(snap)
            self.say(f"restored {len(self.program.entries)} of {n} statements")
            for p in problems:
                self.say(self.paint("  not restored: " + p, "error"))
        else:
            self.autosave_path.unlink(missing_ok=True)

    def confirm_quit(self, ask: Any) -> bool:
        if not (self.program.unsaved and self.program.entries):
            return True
        answer = ask("the program is not saved (:save FILE.mlir); quit anyway? [y/N] ")
        return answer.strip().lower() in ("y", "yes")

    def quit(self) -> None:
        """A clean exit: nothing to offer back next time."""
        self.autosave_path.unlink(missing_ok=True)

    # --- the interactive loop -------------------------------------------------------
    def run(self, path: str | None = None) -> int:
        from hlolab.repl.prompt import make_prompt_session

        session = make_prompt_session(self)
        self._warm = threading.Thread(target=warm_up, daemon=True)  # while the user types
        self._warm.start()

        def ask(question: str) -> str:
            try:
                return session.prompt(question, multiline=False, completer=None, auto_suggest=None,
                                      lexer=None)
            except EOFError:
                return "y"
            except KeyboardInterrupt:
                return "n"

        self.offer_restore(ask)
        if path is not None:
            self.handle(f":load {path}")
        while True:
            try:
                text = session.prompt(PROMPT)
            except KeyboardInterrupt:  # Ctrl-C: the line is dropped, the REPL goes on
                continue
            except EOFError:  # Ctrl-D on an empty line
                if self.confirm_quit(ask):
                    self.quit()
                    return 0
                continue
            self.handle(text)
            if self.quitting:
                self.quitting = False
                if self.confirm_quit(ask):
                    self.quit()
                    return 0


def main(argv: list[str] | None = None) -> int:
    """``hlolab repl [FILE.mlir]``."""
    args = list(sys.argv[1:] if argv is None else argv)
    path = args[0] if args else None
    if len(args) > 1:
        print("usage: hlolab repl [FILE.mlir]", file=sys.stderr)
        return 2
    if path is not None and not Path(path).is_file():
        print(f"hlolab repl: no file {path}", file=sys.stderr)
        return 2
    return Repl().run(path)
