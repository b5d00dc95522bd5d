"""The prompt_toolkit session of the REPL: threaded completion, our pygments lexers,
history under the XDG data dir with auto-suggestion, multi-line statements (Enter
submits a complete one), Ctrl-C drops the line, Ctrl-D on an empty line quits."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from prompt_toolkit import PromptSession
from prompt_toolkit.auto_suggest import AutoSuggestFromHistory
from prompt_toolkit.completion import ThreadedCompleter
from prompt_toolkit.filters import Condition
from prompt_toolkit.history import FileHistory, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.lexers import PygmentsLexer
from prompt_toolkit.styles import style_from_pygments_cls
from pygments.styles import get_style_by_name

from hlolab.repl.completion import ReplCompleter
from hlolab.repl.lexer import ReplLexer

if TYPE_CHECKING:
    from hlolab.repl.app import Repl


def key_bindings() -> KeyBindings:
    from hlolab.repl.app import is_complete_input

    kb = KeyBindings()

    @kb.add("enter", filter=Condition(lambda: True))
    def _enter(event: Any) -> None:
        buf = event.current_buffer
        state = buf.complete_state
        if state is not None and state.current_completion is not None:
            buf.apply_completion(state.current_completion)  # Enter takes the chosen completion
            return
        if is_complete_input(buf.text):
            buf.validate_and_handle()
        else:
            buf.insert_text("\n")

    @kb.add("escape", "enter")  # Alt-Enter: a new line even where Enter would submit
    def _newline(event: Any) -> None:
        event.current_buffer.insert_text("\n")

    return kb


def make_prompt_session(repl: Repl) -> PromptSession[str]:
    try:
        repl.dir.mkdir(parents=True, exist_ok=True)
        history: Any = FileHistory(str(repl.dir / "repl-history"))
    except OSError:  # a read-only home: history for this session only
        history = InMemoryHistory()
    return PromptSession(
        history=history,
        auto_suggest=AutoSuggestFromHistory(),
        completer=ThreadedCompleter(ReplCompleter(repl)),
        complete_while_typing=True,
        lexer=PygmentsLexer(ReplLexer),
        style=style_from_pygments_cls(get_style_by_name("monokai")),
        include_default_pygments_style=False,
        multiline=True,
        prompt_continuation=lambda width, line, wrap: " " * max(0, width - 4) + "..> ",
        key_bindings=key_bindings(),
        enable_history_search=False,
    )
