"""The program stepper: a StableHLO program run op by op, with tracing.

Left, the program text (``SourceView``: the current op's line marked,
breakpoints in the gutter, the ops of a trace tinted). Right, the current op
instance: where it ran (function, region, iteration, call stack), its inputs
and outputs as grids; a tab with the entry arguments and the last trace; a
tab with the results once the program has returned.

Everything goes through ``hlolab.session.Session`` (the same stepper the CLI
and the REPL use) and ``Session.sources`` (program provenance): the screen has
no per-op code. Commands that execute ops run in a thread worker, so a long
``continue`` never blocks the UI and ``escape`` interrupts it (``Session.interrupt``:
after the current op, so the run can go on). Errors are shown in the screen; the
session stays usable (step back, restart, fix inputs).

Breakpoints: ``t`` toggles one on the cursor's line (shown in the gutter); ``B``
opens a dialog for every kind the session has (op name, SSA name, line, the first
NaN/Inf). Text typed into the open/paste dialog is autosaved as a draft
(``hlolab.tui.drafts``) until it loads, so quitting never loses it.

A program on a process grid (``mhlo.num_replicas`` x ``mhlo.num_partitions``) shows a
panel with every process (``ProcessPanel``: its current op, ready / waits at which
collective for whom / finished) and marks each process's current line in the source. One
process is in focus (``p``/``P``): the op header and the value tabs show its op instance
and values (``%x@(0,1)``). ``m`` switches the stepping mode: lockstep (a step runs every
ready process's next op) or one process (a step runs the focused process's next op; when
it waits at a collective the screen says for whom, ``w`` runs the others to it).
"""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Group
from rich.text import Text
from textual import events, on, work
from textual.actions import SkipAction
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.timer import Timer
from textual.widgets import (
    Button,
    Checkbox,
    Input,
    Label,
    LoadingIndicator,
    OptionList,
    Static,
    TabbedContent,
    TabPane,
    TextArea,
)

from hlolab.errors import HloLabError
from hlolab.interp.engine import ARGS_NODE, RETURN_OPS, Def, OpRun, args_node
from hlolab.interp.inputs import LITERAL_HINT, input_value
from hlolab.interp.processes import process_name
from hlolab.session import Breakpoint, Session, Stop
from hlolab.trace.program import Trace
from hlolab.trace.roles import ROLE_ORDER
from hlolab.tui.drafts import clear_draft, load_draft, save_draft
from hlolab.tui.widgets.explain import legend_entries, legend_renderable
from hlolab.tui.widgets.fields import Editor, Field
from hlolab.tui.widgets.footer import FittingFooter
from hlolab.tui.widgets.grid import TensorGrid
from hlolab.tui.widgets.processes import ProcessPanel, ProcessSourceView
from hlolab.tui.widgets.source import SourceView
from hlolab.tui.widgets.values import ValueEntry, ValueList

PASTED = "<pasted>"
Then = Callable[[Stop], None] | None  # what a command does once the screen shows its stop
TRACE_SCROLLBAR = 2  # columns of the trace pane's vertical scrollbar (StepperScreen CSS)
QUEUE_LIMIT = 64  # stepping keys remembered while a command runs
DRAFT_DEBOUNCE = 0.5  # seconds after the last edit of the paste box before the draft is saved


def _guarded(method: Callable[..., Any]) -> Callable[..., Any]:
    """Run an action or handler so that no exception escapes: hlolab errors are
    shown as the screen's message, anything else as an error notification."""

    @functools.wraps(method)
    async def wrapper(self: StepperScreen, *args: Any, **kw: Any) -> Any:
        try:
            result = method(self, *args, **kw)
            if hasattr(result, "__await__"):
                result = await result
            return result
        except SkipAction:
            raise
        except HloLabError as e:
            self.show_message(str(e), error=True)
        except Exception as e:  # noqa: BLE001 - the app must keep running
            self.notify(f"internal error: {type(e).__name__}: {e}", severity="error", timeout=10)
        return None

    return wrapper


@dataclass
class Loaded:
    """What the open/paste dialog returns: the program text, its path, the parsed session."""

    text: str
    path: str | None
    session: Session | None  # None when the dialog was cancelled (text kept as a draft)


class _PathInput(Field):
    """The one-line path box: a multi-line paste (a program) goes to the text box instead."""

    def _on_paste(self, event: events.Paste) -> None:
        if "\n" in event.text.strip():  # (prevent_default: Input's own handler takes line 1)
            event.stop()
            event.prevent_default()
            area = self.screen.query_one("#dialog-text", TextArea)
            area.text = event.text
            area.focus()


class ProgramDialog(ModalScreen[Loaded]):
    """Open an ``.mlir`` path or paste MLIR text (e.g. ``jax.jit(f).lower(x).as_text()``).

    The program is parsed here, so a parse error shows inline (``file:line:col``
    with the caret) and the text stays in the box to be fixed. The box's text is
    the draft: saved (debounced) as it changes, on cancel and on quit, and cleared
    once it loads."""

    DEFAULT_CSS = """
    ProgramDialog { align: center middle; }
    ProgramDialog > Vertical { width: 90%; height: 90%; border: thick $primary; background: $surface;
                               padding: 0 1; }
    ProgramDialog TextArea { height: 1fr; min-height: 3; }
    ProgramDialog #dialog-error { color: $error; height: auto; max-height: 8; }
    ProgramDialog Horizontal { height: auto; }
    ProgramDialog Button { margin-right: 2; }
    """
    BINDINGS = [Binding("escape", "cancel", "cancel"), Binding("ctrl+s", "load", "load")]

    def __init__(self, text: str = "", path: str = ""):
        super().__init__()
        self._text = text
        self._path = path
        self._save_timer: Timer | None = None
        self._saved = text  # the text the draft holds (given text: the draft or a file's)
        self._loaded = False  # the text loaded: nothing left to save

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Paste MLIR text, e.g. from jax.jit(f).lower(x).as_text():")
            yield Editor(self._text, id="dialog-text", show_line_numbers=True)
            yield Label("…or the path of an .mlir file (used when given):")
            yield _PathInput(self._path, placeholder="model.mlir", id="dialog-path")
            yield Static("", id="dialog-error", markup=False)
            with Horizontal():
                yield Button("Load (ctrl+s)", variant="primary", id="dialog-load")
                yield Button("Cancel (esc)", id="dialog-cancel")

    def on_mount(self) -> None:
        self.query_one("#dialog-path" if self._path else "#dialog-text").focus()

    # --- the draft -------------------------------------------------------------------------
    @on(TextArea.Changed, "#dialog-text")
    def _edited(self, event: TextArea.Changed) -> None:
        self._text = event.text_area.text
        if self._save_timer is not None:
            self._save_timer.stop()
        self._save_timer = self.set_timer(DRAFT_DEBOUNCE, self.flush_unsaved)

    def flush_unsaved(self) -> None:
        """Write the draft now (debounce expired, cancel, quit, unmount)."""
        if self._save_timer is not None:
            self._save_timer.stop()
            self._save_timer = None
        if not self._loaded and self._text != self._saved and save_draft(self._text):
            self._saved = self._text

    def on_unmount(self) -> None:
        self.flush_unsaved()  # an edit younger than the debounce is not lost either

    def unsaved_text(self) -> str | None:
        """After a flush: text the draft file could not take (asked about on quit)."""
        if not self._loaded and self._text.strip() and self._text != self._saved:
            return "pasted program text (the draft could not be saved)"
        return None

    @on(Button.Pressed, "#dialog-load")
    @on(Input.Submitted, "#dialog-path")
    def action_load(self) -> None:
        path = self.query_one("#dialog-path", Input).value.strip()
        text = self.query_one("#dialog-text", TextArea).text
        error = self.query_one("#dialog-error", Static)
        try:
            if path:
                p = Path(path).expanduser()
                session = Session.open(p)
                self.flush_unsaved()  # the pasted text (if any) did not load: it stays a draft
                self.dismiss(Loaded(p.read_text(), str(p), session))
            elif text.strip():
                session = Session(text, filename=PASTED)
                self._loaded = True
                if self._save_timer is not None:
                    self._save_timer.stop()
                clear_draft()
                self.dismiss(Loaded(text, None, session))
            else:
                error.update("Give a path or paste a program.")
        except HloLabError as e:
            error.update(str(e))
            loc = e.loc
            if loc is not None and not path:  # put the text cursor on the error
                self.query_one("#dialog-text", TextArea).move_cursor((loc.line - 1, loc.col - 1))

    @on(Button.Pressed, "#dialog-cancel")
    def action_cancel(self) -> None:
        self.flush_unsaved()
        self.dismiss(Loaded(self.query_one("#dialog-text", TextArea).text,
                            self.query_one("#dialog-path", Input).value, None))


class InputsDialog(ModalScreen[bool]):
    """Bind the entry arguments one by one: a literal (``[[1, 2], [3, 4]]``, ``dense<…>``, one
    number for every element) or a ``.npy`` path; an empty field keeps the value given on
    the command line, else makes one at random from the seed."""

    DEFAULT_CSS = """
    InputsDialog { align: center middle; }
    InputsDialog > VerticalScroll { width: 90%; height: auto; max-height: 90%; border: thick $primary;
                                    background: $surface; padding: 0 1; }
    InputsDialog #inputs-error { color: $error; height: auto; }
    InputsDialog .inputs-arg { color: $text-muted; margin-top: 1; }
    InputsDialog Input:focus { background: $accent 30%; }
    InputsDialog Horizontal { height: auto; margin-top: 1; }
    InputsDialog Button { margin-right: 2; }
    """
    BINDINGS = [Binding("escape", "cancel", "cancel")]

    def __init__(self, func: str, args: list[tuple[str, str]], texts: list[str], given: list[bool],
                 seed: int, apply: Callable[[list[str], int], None]):
        super().__init__()
        self._func = func
        self._args = args  # (name, type text)
        self._texts = [*texts, *[""] * (len(args) - len(texts))][:len(args)]
        self._given = given
        self._seed = seed
        self._apply = apply

    def compose(self) -> ComposeResult:
        with VerticalScroll(can_focus=False):  # the first field has the focus, Tab goes field to field
            yield Static(f"@{self._func}: type each argument as a literal ({LITERAL_HINT}) or a .npy "
                         "path; an empty field is random from the seed", markup=False)
            for i, (name, type_text) in enumerate(self._args):
                yield Label(f"{name} : {type_text}", classes="inputs-arg", markup=False)
                hint = "given on the command line" if i < len(self._given) and self._given[i] else "random"
                yield Field(self._texts[i], placeholder=hint, id=f"inputs-arg{i}", compact=True)
            yield Label("Seed for the random ones:", classes="inputs-arg")
            yield Field(str(self._seed), id="inputs-seed", type="integer", compact=True)
            yield Static("", id="inputs-error", markup=False)
            with Horizontal():
                yield Button("Bind", variant="primary", id="inputs-ok")
                yield Button("Cancel (esc)", id="inputs-cancel")

    def on_mount(self) -> None:
        self.query_one("#inputs-arg0" if self._args else "#inputs-seed", Input).focus()

    def texts(self) -> list[str]:
        return [self.query_one(f"#inputs-arg{i}", Input).value for i in range(len(self._args))]

    @on(Button.Pressed, "#inputs-ok")
    @on(Input.Submitted)
    def action_ok(self) -> None:
        seed_text = self.query_one("#inputs-seed", Input).value.strip() or "0"
        try:
            self._apply(self.texts(), int(seed_text))
        except ValueError:
            self.query_one("#inputs-error", Static).update(f"the seed must be an integer, got {seed_text!r}")
            return
        except HloLabError as e:
            self.query_one("#inputs-error", Static).update(str(e))
            return
        self.dismiss(True)

    @on(Button.Pressed, "#inputs-cancel")
    def action_cancel(self) -> None:
        self.dismiss(False)

    def unsaved_text(self) -> str | None:
        """Inputs typed but not bound (asked about on quit)."""
        seed = self.query_one("#inputs-seed", Input).value.strip()
        if self.texts() != self._texts or seed != str(self._seed):
            return "argument values / seed typed but not bound"
        return None


BREAKPOINT_HELP = "op NAME · name %x · line N · nan (the first NaN/Inf) · Enter adds"


def describe_breakpoint(bp: Breakpoint) -> str:
    """One line of the breakpoints list."""
    if bp.kind == "nonfinite":
        return "first NaN/Inf produced"
    if bp.kind == "name":
        v = str(bp.value)
        return f"name {v if v.startswith('%') else '%' + v}"
    return f"{bp.kind} {bp.value}"


def parse_breakpoint(text: str, session: Session, op_lines: set[int]) -> tuple[str, Any]:
    """``op NAME`` / ``name %x`` / ``line N`` / ``nan`` (bare ``%x``, ``N`` and op names too)
    -> (kind, value) for ``Session.add_breakpoint``; a HloLabError says what is wrong."""
    words = text.split()
    if not words:
        raise HloLabError("type a breakpoint: " + BREAKPOINT_HELP)
    head = words[0].lower()
    if head in ("nan", "inf", "nonfinite", "non-finite"):
        if len(words) > 1:
            raise HloLabError(f"'{head}' takes no value: it stops at the first NaN/Inf produced")
        return "nonfinite", None
    if head in ("op", "name", "line"):
        if len(words) != 2:
            raise HloLabError(f"'{head}' takes one value, e.g. "
                              + {"op": "op dot_general", "name": "name %x", "line": "line 12"}[head])
        kind, value = head, words[1]
    elif len(words) == 1:  # a bare value: its form says the kind
        value = words[0]
        kind = "name" if value.startswith("%") else "line" if value.isdigit() else "op"
    else:
        raise HloLabError(f"cannot read {text.strip()!r}: " + BREAKPOINT_HELP)
    if kind == "line":
        try:
            line = int(value)
        except ValueError:
            raise HloLabError(f"line: expected a line number, got {value!r}") from None
        if line not in op_lines:
            raise HloLabError(f"no op starts on line {line} (lines with ops: {_ranges(sorted(op_lines))})")
        return kind, line
    if kind == "name":
        name = value if value.startswith("%") else "%" + value
        if not any(r.name == name for op in session.module.walk() for r in op.results):
            raise HloLabError(f"no op result is named {name} in this program")
        return kind, name
    return kind, value


class BreakpointsDialog(ModalScreen[None]):
    """Every breakpoint kind the session has: list, add (typed), remove, the NaN/Inf switch.

    Changes apply at once (``on_change`` redraws the gutter); bad input is shown here."""

    DEFAULT_CSS = """
    BreakpointsDialog { align: center middle; }
    BreakpointsDialog > Vertical { width: 76; max-width: 95%; height: auto; max-height: 90%;
                                   border: thick $primary; background: $surface; padding: 0 1; }
    BreakpointsDialog OptionList { height: auto; max-height: 10; min-height: 3; }
    BreakpointsDialog #bp-error { color: $error; height: auto; }
    BreakpointsDialog Horizontal { height: auto; }
    BreakpointsDialog Checkbox { margin: 1 0 0 0; }
    BreakpointsDialog Button { margin-right: 2; }
    BreakpointsDialog .dim { color: $text-muted; }
    """
    BINDINGS = [Binding("escape", "close", "close"),
                Binding("delete,ctrl+d", "remove", "remove selected")]

    def __init__(self, session: Session, op_lines: set[int], on_change: Callable[[], None]):
        super().__init__()
        self.session = session
        self.op_lines = set(op_lines)
        self.on_change = on_change

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Breakpoints: the run stops after a matching op")
            yield OptionList(id="bp-list")
            yield Label(BREAKPOINT_HELP, classes="dim")
            yield Field(placeholder="e.g. op dot_general", id="bp-input")
            yield Checkbox("stop at the first NaN/Inf produced", self._has_nonfinite(), id="bp-nonfinite",
                           compact=True)
            yield Static("", id="bp-error", markup=False)
            with Horizontal():
                yield Button("Remove selected (del)", id="bp-remove")
                yield Button("Close (esc)", id="bp-close")

    def on_mount(self) -> None:
        self._refill()
        self.query_one("#bp-input", Input).focus()

    def _has_nonfinite(self) -> bool:
        return any(b.kind == "nonfinite" for b in self.session.breakpoints)

    def _refill(self) -> None:
        ol = self.query_one("#bp-list", OptionList)
        ol.clear_options()
        if self.session.breakpoints:
            ol.add_options([describe_breakpoint(b) for b in self.session.breakpoints])
            ol.highlighted = ol.option_count - 1
        with self.prevent(Checkbox.Changed):
            self.query_one("#bp-nonfinite", Checkbox).value = self._has_nonfinite()

    def _changed(self, error: str = "") -> None:
        self.query_one("#bp-error", Static).update(error)
        self._refill()
        self.on_change()

    @on(Input.Submitted, "#bp-input")
    def add(self) -> None:
        """Add the typed breakpoint (the text stays when it is wrong, to be fixed)."""
        box = self.query_one("#bp-input", Input)
        try:
            kind, value = parse_breakpoint(box.value, self.session, self.op_lines)
            self.session.add_breakpoint(kind, value)
        except HloLabError as e:
            self.query_one("#bp-error", Static).update(e.message)
            return
        box.value = ""
        self._changed()

    @on(Checkbox.Changed, "#bp-nonfinite")
    def _toggle_nonfinite(self, event: Checkbox.Changed) -> None:
        for b in [b for b in self.session.breakpoints if b.kind == "nonfinite"]:
            self.session.remove_breakpoint(b)
        if event.value:
            self.session.add_breakpoint("nonfinite")
        self._changed()

    @on(Button.Pressed, "#bp-remove")
    def action_remove(self) -> None:
        ol = self.query_one("#bp-list", OptionList)
        if ol.highlighted is None or not self.session.breakpoints:
            self.query_one("#bp-error", Static).update("no breakpoint selected")
            return
        self.session.remove_breakpoint(self.session.breakpoints[ol.highlighted])
        self._changed()

    @on(Button.Pressed, "#bp-close")
    def action_close(self) -> None:
        self.dismiss(None)

    def unsaved_text(self) -> str | None:
        """A typed breakpoint not added yet (asked about on quit)."""
        text = self.query_one("#bp-input", Input).value.strip()
        return f"the breakpoint {text!r} typed but not added" if text else None


class StepperScreen(Screen):
    """Step a program, look at each op instance's values, trace output elements."""

    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]
    DEFAULT_CSS = """
    StepperScreen #stepper-body { height: 1fr; }
    StepperScreen #stepper-source { width: 1fr; border: round $primary 50%; }
    StepperScreen #stepper-source:focus { border: heavy $accent; }
    StepperScreen #stepper-trace-scroll:focus { background: $accent 8%; }
    StepperScreen #stepper-side { width: 1fr; }
    StepperScreen.-narrow #stepper-body { layout: vertical; }
    StepperScreen.-narrow #stepper-source { height: 1fr; width: 100%; }
    StepperScreen.-narrow #stepper-side { height: 1fr; width: 100%; }
    StepperScreen #stepper-op { height: auto; padding: 0 1; background: $boost; }
    StepperScreen #stepper-message { height: auto; max-height: 10; padding: 0 1; display: none; }
    StepperScreen #stepper-message.-shown { display: block; }
    StepperScreen #stepper-message.-error { color: $error; background: $error 10%; }
    StepperScreen #stepper-tabs { height: 1fr; }
    StepperScreen TabPane { padding: 0; }
    StepperScreen .stepper-heading { color: $text-muted; text-style: bold; padding: 0 1; }
    StepperScreen #stepper-trace { padding: 0 1; height: auto; }
    StepperScreen #stepper-trace-scroll { scrollbar-size-vertical: 2; }
    StepperScreen TensorGrid { max-height: 16; }
    StepperScreen #stepper-status { height: 1; background: $panel; }
    StepperScreen #stepper-busy { width: 8; height: 1; display: none; }
    StepperScreen #stepper-busy.-shown { display: block; }
    StepperScreen #stepper-status-text { width: 1fr; padding: 0 1; text-wrap: nowrap;
                                         text-overflow: ellipsis; }
    """
    BINDINGS = [
        Binding("n,f10", "step", "step", id="stepper.step"),
        Binding("s", "step", "step in", show=False, id="stepper.step_in"),
        Binding("b", "back", "back", id="stepper.back"),
        Binding("o", "step_over", "over", id="stepper.over"),
        Binding("f", "finish", "finish", id="stepper.finish"),
        Binding("c", "run", "cont", id="stepper.continue"),
        Binding("g", "run_to_cursor", "to line", id="stepper.to_cursor"),
        Binding("t,f9", "toggle_breakpoint", "break", id="stepper.breakpoint"),
        Binding("B", "breakpoints", "breakpoints", show=False, id="stepper.breakpoints"),
        Binding("e", "trace", "trace", id="stepper.trace"),
        Binding("r", "restart", "restart", show=False, id="stepper.restart"),
        Binding("i", "inputs", "inputs", show=False, id="stepper.inputs"),
        Binding("p", "next_process(1)", "process", id="stepper.next_process"),
        Binding("P", "next_process(-1)", "previous process", show=False, id="stepper.prev_process"),
        Binding("m", "toggle_mode", "mode", id="stepper.mode"),
        Binding("w", "run_others", "run others to it", show=False, id="stepper.run_others"),
        Binding("ctrl+o", "open", "open", id="stepper.open"),
        Binding("escape", "escape", "stop/clear", show=False, id="stepper.escape"),
        Binding("1", "show_tab('tab-op')", "op tab", show=False, id="stepper.tab_op"),
        Binding("2", "show_tab('tab-trace')", "args & trace tab", show=False, id="stepper.tab_trace"),
        Binding("3", "show_tab('tab-results')", "results tab", show=False, id="stepper.tab_results"),
    ]

    def __init__(self, source: str, *, path: str | None = None, seed: int = 0,
                 inputs: list[np.ndarray] | None = None, name: str | None = None,
                 id: str | None = None, classes: str | None = None):
        super().__init__(name=name, id=id, classes=classes)
        self.source = source
        self.path = path
        self.seed = seed
        self.inputs = list(inputs) if inputs is not None else None  # given for the first arguments
        self.arg_texts: list[str] = []  # per argument: a literal or a .npy path typed in the dialog
        self.session: Session | None = None
        self.load_error: HloLabError | None = None
        self.trace: Trace | None = None
        self.trace_lines: set[int] = set()
        self.last_stop: Stop | None = None
        self.busy: str | None = None  # the label of the command running in the worker
        self._draft = ""  # text in the paste dialog that did not load (also saved on disk)
        self._queue: deque[tuple[str, Callable[[Session], Stop], Then]] = deque()  # keys typed while busy
        # a process grid: the process whose op and values are shown (p/P), and whether a step
        # runs only it (one process) or every ready process (lockstep, m switches)
        self.selected = 0
        self.one_process = False

    # --- layout ----------------------------------------------------------------
    def compose(self) -> ComposeResult:
        with Horizontal(id="stepper-body"):
            yield ProcessSourceView(id="stepper-source")
            with Vertical(id="stepper-side"):
                yield Static(id="stepper-op", markup=False)
                yield Static(id="stepper-message", markup=False)
                with TabbedContent(id="stepper-tabs"):
                    with TabPane("Op", id="tab-op"):
                        with VerticalScroll(id="stepper-op-scroll", can_focus=False):  # Tab: grid to grid
                            yield Static("inputs", classes="stepper-heading", id="stepper-inputs-heading")
                            yield ValueList(id="stepper-inputs")
                            yield Static("outputs", classes="stepper-heading", id="stepper-outputs-heading")
                            yield ValueList(id="stepper-outputs")
                    with TabPane("Args & trace", id="tab-trace"):
                        with VerticalScroll(id="stepper-trace-scroll"):
                            yield Static(id="stepper-trace")
                            yield Static("entry arguments", classes="stepper-heading",
                                         id="stepper-args-heading")
                            yield ValueList(id="stepper-args")
                    with TabPane("Results", id="tab-results"):
                        with VerticalScroll(id="stepper-results-scroll", can_focus=False):
                            yield Static("", id="stepper-results-note", markup=False)
                            yield ValueList(id="stepper-results")
        yield ProcessPanel(id="stepper-processes")
        with Horizontal(id="stepper-status"):
            yield LoadingIndicator(id="stepper-busy")
            yield Static(id="stepper-status-text", markup=False)
        yield FittingFooter()

    @_guarded
    async def on_mount(self) -> None:
        await self.load(self.source, self.path, inputs=self.inputs)
        self.query_one(SourceView).focus()

    # --- loading -----------------------------------------------------------------
    @property
    def filename(self) -> str:
        return self.path or PASTED

    async def load(self, text: str, path: str | None, session: Session | None = None,
                   inputs: list[np.ndarray] | None = None) -> None:
        """Show ``text`` and start a session on it (parsed here unless given).
        A parse or binding error is shown with its location; the text stays."""
        self.source, self.path = text, path
        self.session, self.load_error, self.last_stop = None, None, None
        self.trace, self.trace_lines = None, set()
        source = self.query_one(SourceView)
        source.set_text(text)
        self.sub_title = self.filename
        source.border_title = Path(self.filename).name if path else self.filename
        try:
            s = session if session is not None else Session(text, filename=self.filename)
            ops = [op for op in s.module.walk() if op.loc is not None and op.name not in RETURN_OPS]
            source.set_op_spans([(op.loc.line, op.end_line or op.loc.line) for op in ops])
            self.session = s
            self.selected, self.one_process = 0, False
            s.lockstep, s.focus, s.process = True, None, 0  # a grid steps in lockstep first
            self._bind(self.seed, self.arg_texts, inputs)
        except HloLabError as e:
            self.load_error = e
            if e.loc is not None and (e.loc.file == self.filename):
                source.error_line = e.loc.line
            self.show_message(str(e) + "\n(ctrl+o: open or paste a fixed program; the text is kept)",
                              error=True)
        else:
            self.show_message("")
        self.refresh_bindings()  # the process keys show for a grid program only
        await self.refresh_state()

    def _bind(self, seed: int, texts: list[str] | None = None, given: list[np.ndarray] | None = None) -> None:
        """Bind the entry arguments: per argument its typed text (a literal or a ``.npy``
        path), else the array ``given`` for it (command line), else random from ``seed``."""
        s = self.session
        assert s is not None
        texts = list(texts if texts is not None else self.arg_texts)
        given = list(given if given is not None else self.inputs or [])
        values: list[Any] = []
        for i, a in enumerate(s.func.args):
            text = texts[i].strip() if i < len(texts) else ""
            if text:
                values.append(input_value(text, a.type, f"{a.name} (argument #{i} of @{s.func.name})",
                                          s.element_budget))
            else:
                values.append(given[i] if i < len(given) else None)
        s.bind(values, seed=seed)
        self.seed, self.arg_texts, self.inputs = seed, texts, given
        self.trace, self.trace_lines = None, set()
        self.last_stop = None

    def describe_inputs(self) -> str:
        if self.session is None:
            return ""
        n = len(self.session.func.args)
        if n == 0:
            return "no inputs"
        texts = [t.strip() for t in self.arg_texts] + [""] * n
        given = sum(1 for i in range(min(n, len(self.inputs or []))) if not texts[i])
        files = [Path(t).name for t in texts[:n] if t.endswith(".npy")]
        typed = sum(1 for t in texts[:n] if t and not t.endswith(".npy"))
        parts = [f"{given} given"] if given else []
        parts += files
        if typed:
            parts.append(f"{typed} typed")
        if given + len(files) + typed < n:
            parts.append(f"random seed {self.seed}")
        return "inputs: " + " + ".join(parts)

    # --- showing state ---------------------------------------------------------------
    def show_message(self, text: str, error: bool = False) -> None:
        """The line(s) under the op header: why stepping stopped, or an error in full."""
        msg = self.query_one("#stepper-message", Static)
        msg.update(text)
        msg.set_class(bool(text), "-shown")
        msg.set_class(error, "-error")

    async def refresh_state(self) -> None:
        """Redraw everything from the session: marks, op header, value grids, status."""
        source = self.query_one(ProcessSourceView)
        s = self.session
        ev = self.shown_event()
        source.current_line = ev.op.loc.line if ev is not None and ev.op.loc is not None else None
        self._show_processes()
        if s is not None:
            source.set_breakpoints({int(b.value) for b in s.breakpoints if b.kind == "line"})
            err = s.error if s.finished else None
            source.error_line = err.loc.line if err is not None and err.loc is not None \
                and err.loc.file == self.filename else None
        source.set_trace_lines(self.trace_lines)
        self.query_one("#stepper-op", Static).update(self._op_header())
        await self._show_values()
        self._show_status()

    # --- a process grid ------------------------------------------------------------------
    @property
    def on_grid(self) -> bool:
        return self.session is not None and self.session.n_processes > 1

    def shown_event(self) -> OpRun | None:
        """The op instance the screen shows: the focused process's current one on a grid."""
        s = self.session
        if s is None:
            return None
        return s.current_of(self.selected) if self.on_grid else s.current

    def mode_text(self) -> str:
        if not self.on_grid:
            return ""
        return f"one process: {self.selected}" if self.one_process else "lockstep"

    def _show_processes(self) -> None:
        s = self.session
        panel = self.query_one(ProcessPanel)
        source = self.query_one(ProcessSourceView)
        if s is None or not self.on_grid:
            panel.show_states([], 0, "")
            source.set_process_marks({})
            return
        states = s.process_states()
        panel.show_states(states, self.selected, self.mode_text())
        marks: dict[int, list[int]] = {}
        for ps in states:
            ev = ps.rendezvous.op if ps.rendezvous is not None else \
                ps.event.op if ps.event is not None else None
            if ev is not None and ev.loc is not None:
                marks.setdefault(ev.loc.line, []).append(ps.process)
        source.set_process_marks(marks)

    def _apply_mode(self) -> None:
        s = self.session
        if s is None:
            return
        s.lockstep = True
        s.focus = self.selected if self.one_process and self.on_grid else None
        s.process = self.selected if self.on_grid else 0

    def _op_header(self) -> str:
        s = self.session
        if s is None:
            return "no program loaded"
        ev = self.shown_event()
        if ev is None and self.on_grid:
            return (f"@{s.func.name}: {process_name(self.selected, s.grid)} has not run an op yet · "
                    "n steps, c runs")
        if ev is None:
            return f"@{s.func.name}: before the first op · n steps, c runs"
        names = ", ".join(v.name for v in ev.op.results)
        line = f"  line {ev.op.loc.line}" if ev.op.loc else ""
        head = f"#{ev.id}  {names + ' = ' if names else ''}{ev.op.name}{line}"
        # outermost first: "@main: %i, %y = stablehlo.while line 4, region 1, iteration 2 › @main"
        where = [entry.describe() for entry in s.call_stack(ev)] + [f"@{ev.frame.func}"]
        if self.on_grid:  # whose op this is (the panel below says where every process is)
            head += f"  · {process_name(ev.frame.process, s.grid)}"
        return head + "\n" + " › ".join(where)

    def _at(self) -> str:
        """``@(0, 1)``: the shown process, after value names on a grid (the spec's notation)."""
        s = self.session
        return f"@{divmod(self.selected, s.grid[1])}" if s is not None and self.on_grid else ""

    async def _show_values(self) -> None:
        s = self.session
        ev = self.shown_event()
        at = self._at()
        ins: list[ValueEntry] = []
        outs: list[ValueEntry] = []
        if ev is not None:
            for i, x in enumerate(ev.inputs):
                v = ev.op.operands[i] if i < len(ev.op.operands) else None
                title = f"{v.name}{at} : {v.type}" if v is not None else f"captured value #{i}"
                ins.append(ValueEntry(("in", i), title, x))
            for k, x in enumerate(ev.outputs):
                r = ev.op.results[k] if k < len(ev.op.results) else None
                outs.append(ValueEntry(("out", k), f"{r.name}{at} : {r.type}" if r else f"#{k}", x))
        self.query_one("#stepper-inputs-heading", Static).update(
            f"inputs ({len(ins)})" if ins else "inputs: none" if ev is not None else
            "before the first op · n steps · the entry arguments are on tab 2")
        self.query_one("#stepper-outputs-heading", Static).update(
            (f"outputs ({len(outs)}) · enter/e on an element traces it" if outs else "outputs: none")
            if ev is not None else "")
        await self.query_one("#stepper-inputs", ValueList).set_entries(ins)
        await self.query_one("#stepper-outputs", ValueList).set_entries(outs)
        # entry arguments, highlighted by the trace
        args: list[ValueEntry] = []
        if s is not None and s.args is not None:
            values = s.process_args[self.selected] if self.on_grid and s.process_args else s.args
            args = [ValueEntry(("arg", i), f"{a.name}{at} : {a.type}", x)
                    for i, (a, x) in enumerate(zip(s.func.args, values))]
        await self.query_one("#stepper-args", ValueList).set_entries(args)
        self._show_trace()
        # results
        results: list[ValueEntry] = []
        note = "not returned yet · c runs to the end"
        if s is not None and s.results is not None:
            values = s.process_results[self.selected] if self.on_grid and s.process_results else s.results
            whose = f" on {process_name(self.selected, s.grid)}" if self.on_grid else ""
            note = f"@{s.func.name} returned {len(values)} value{'s' if len(values) != 1 else ''}" \
                   f"{whose} · enter/e on an element traces it"
            results = [ValueEntry(("result", k), f"result #{k}{at} : {t}", x)
                       for k, (x, t) in enumerate(zip(values, s.func.result_types))]
        elif s is not None and s.error is not None:
            note = "the program failed: " + s.error.short()
        self.query_one("#stepper-results-note", Static).update(note)
        await self.query_one("#stepper-results", ValueList).set_entries(results)
        self._apply_highlights()

    def _apply_highlights(self) -> None:
        """Colour the grids by the current trace: argument elements by role, the traced
        element wherever its value is on screen (role ``result``)."""
        t = self.trace
        for lst in self.query(ValueList):
            for key, _ in lst.grids():
                d = self._def_of(key)
                if t is None:
                    lst.mark(key, None, dict)
                elif lst.id == "stepper-args":
                    lst.mark(key, ("args", id(t)), functools.partial(_highlights, t, d, t.query, t.index))
                elif d == t.query:
                    lst.mark(key, ("result", id(t)), lambda t=t: {t.index: "result"})
                else:
                    lst.mark(key, None, dict)

    def _show_trace(self) -> None:
        text = self.query_one("#stepper-trace", Static)
        if self.trace is None or self.session is None:
            text.update(Text("No trace: on an output element, press enter or e to trace it back "
                             "through the program.", style="italic"))
            return
        from hlolab.trace.format import format_trace, wrap_tree

        t = self.trace
        roles = {g.role for g in t.groups} | {"result"}
        lines = sorted(self.trace_lines)
        tree = format_trace(self.session, t)
        # the tabs' width (the trace pane may be hidden still): minus its padding and scrollbar
        width = self.query_one(TabbedContent).size.width - 2 - TRACE_SCROLLBAR
        body = Text(wrap_tree(tree, width) if width > 0 else tree, no_wrap=True, overflow="ellipsis")
        legend = legend_renderable([Text("roles:"), *legend_entries(roles)])  # wraps between entries
        text.update(Group(legend, Text(f"ops on the path: lines {_ranges(lines)}"), body))

    def on_resize(self) -> None:
        if self.trace is not None:  # the tree is wrapped to the pane's width
            self.call_after_refresh(self._show_trace)

    def _show_status(self) -> None:
        s = self.session
        parts = [Path(self.filename).name if self.path else self.filename]  # the whole path: the title
        if s is not None:
            parts.append(f"@{s.func.name}")
            if self.on_grid:  # before the rest: at 80 columns the line's end is cut
                parts.append(f"{self.mode_text()} (m)")
            parts.append(self.describe_inputs())
            parts.append(f"op {s.cursor}/{len(s.history)}" + (" (end)" if s.finished else ""))
            if s.breakpoints:
                parts.append(f"{len(s.breakpoints)} breakpoint{'s' if len(s.breakpoints) != 1 else ''}")
        if self.busy:
            n = len(s.history) if s is not None else 0
            parts.append(f"{self.busy}… {n} ops · esc interrupts")
        self.query_one("#stepper-status-text", Static).update(" · ".join(p for p in parts if p))
        self.query_one("#stepper-busy").set_class(self.busy is not None, "-shown")

    # --- running commands ---------------------------------------------------------------
    def _command(self, label: str, fn: Callable[[Session], Stop], then: Then = None) -> None:
        """Run a session command in a worker thread (one at a time); ``then(stop)`` runs
        after the screen shows where it stopped."""
        if self.session is None:
            self.show_message(str(self.load_error or "no program loaded") +
                              "\n(ctrl+o: open or paste a program)", error=True)
            return
        if self.busy is not None:  # keys typed ahead run in order (esc drops them)
            if len(self._queue) < QUEUE_LIMIT:
                self._queue.append((label, fn, then))
            return
        self.busy = label
        self._show_status()
        self._ticker = self.set_interval(0.25, self._show_status)
        self._run_worker(label, fn, then)

    @work(thread=True, group="stepper", exit_on_error=False)
    def _run_worker(self, label: str, fn: Callable[[Session], Stop], then: Then) -> None:
        stop: Stop | None = None
        error: BaseException | None = None
        try:
            assert self.session is not None
            stop = fn(self.session)
        except Exception as e:  # noqa: BLE001 - shown to the user, the worker never dies silently
            error = e
        self.app.call_from_thread(self._command_done, label, stop, error, then)

    @_guarded
    async def _command_done(self, label: str, stop: Stop | None, error: BaseException | None,
                            then: Then = None) -> None:
        self.busy = None
        self._ticker.stop()
        if error is not None:
            if isinstance(error, HloLabError):
                self.show_message(str(error), error=True)
            else:
                self.notify(f"internal error: {type(error).__name__}: {error}", severity="error",
                            timeout=10)
        elif stop is not None:
            self.last_stop = stop
            if self.on_grid and not self.one_process and stop.reason == "breakpoint" \
                    and stop.event is not None:  # show the process that hit it
                self.selected = stop.event.frame.process
                self._apply_mode()
            self._report_stop(stop)
        if error is not None or stop is None or stop.reason not in ("step", "start"):
            self._queue.clear()  # an error, a breakpoint or the end: do not run past it
        await self.refresh_state()
        if stop is not None and stop.reason == "end":
            self.show_tab("tab-results")
        if then is not None and stop is not None:
            then(stop)
        if self._queue and self.busy is None:
            self._command(*self._queue.popleft())

    def action_show_tab(self, tab_id: str) -> None:
        self.show_tab(tab_id)

    def show_tab(self, tab_id: str) -> None:
        """Switch the value tabs; focus in a pane being hidden goes to the source view
        (TabbedContent would otherwise switch back to the pane holding the focus)."""
        tabs = self.query_one(TabbedContent)
        focused = self.focused
        if focused is not None and tabs in focused.ancestors and \
                not any(a.id == tab_id for a in focused.ancestors):
            self.set_focus(self.query_one(SourceView))  # now, not deferred like Widget.focus
        tabs.active = tab_id

    def _report_stop(self, stop: Stop) -> None:
        s = self.session
        assert s is not None
        if stop.reason == "error" and stop.error is not None:
            self.show_message(f"{stop.error}\n(the run stopped here: b steps back, r restarts)", error=True)
        elif stop.reason == "end":
            self.show_message(f"@{s.func.name} returned: see Results")
        elif stop.reason == "breakpoint":
            self.show_message(f"breakpoint ({stop.breakpoint})")
        elif stop.reason == "budget":
            self.show_message(f"paused after {s.run_budget:,} ops (run budget) · c goes on")
        elif stop.reason == "interrupted" and s.finished:
            self.show_message("interrupted inside an op: this run cannot go on · b steps back through "
                              "the history, r restarts", error=True)
        elif stop.reason == "interrupted":
            self.show_message("interrupted · c goes on")
        elif stop.reason == "start":
            self.show_message("at the start")
        elif stop.reason == "waiting":
            self.show_message(f"{stop.detail} · w: run the others to it · p/P: another process · "
                              "m: lockstep")
        elif stop.reason == "finished":
            self.show_message(f"{stop.detail} · p/P: another process · m: lockstep")
        else:
            self.show_message(stop.detail)

    # --- actions ----------------------------------------------------------------------------
    @_guarded
    def action_step(self) -> None:
        """One op instance forward, into while/if/case/call bodies."""
        self._command("stepping", lambda s: s.step())

    @_guarded
    def action_back(self) -> None:
        self._command("stepping back", lambda s: s.step_back())

    @_guarded
    def action_step_over(self) -> None:
        self._command("stepping over", lambda s: s.step_over())

    @_guarded
    def action_finish(self) -> None:
        self._command("finishing", lambda s: s.finish())

    @_guarded
    def action_run(self) -> None:
        """Continue to a breakpoint, the end or the session's run budget (esc stops it)."""
        self._command("running", lambda s: s.run())

    @_guarded
    def action_run_to_cursor(self) -> None:
        line = self._op_line(self.query_one(SourceView).cursor_line)
        if line is None:
            return
        self._command(f"running to line {line}", lambda s: s.run_to(line=line))

    @_guarded
    async def action_restart(self) -> None:
        if self.busy is not None or self.session is None:
            self.notify("busy: esc interrupts" if self.busy else "no program loaded", severity="warning")
            return
        self.session.restart()
        self.trace, self.trace_lines, self.last_stop = None, set(), None
        self.show_message("restarted (breakpoints kept)")
        await self.refresh_state()

    @_guarded
    async def action_toggle_breakpoint(self, line: int | None = None) -> None:
        await self._toggle_breakpoint(self.query_one(SourceView).cursor_line if line is None else line)

    async def _toggle_breakpoint(self, line: int) -> None:
        s = self.session
        if s is None:
            self.notify("no program loaded", severity="warning")
            return
        first = self._op_line(line)
        if first is None:
            return
        line = first
        bp = next((b for b in s.breakpoints if b.kind == "line" and int(b.value) == line), None)
        if bp is not None:
            s.remove_breakpoint(bp)
        else:
            s.add_breakpoint("line", line)
        self.query_one(SourceView).set_breakpoints({int(b.value) for b in s.breakpoints if b.kind == "line"})
        self._show_status()

    @_guarded
    def action_breakpoints(self) -> None:
        """The breakpoints dialog: op names, SSA names, lines, the first NaN/Inf."""
        if self.session is None:
            self.notify("no program loaded", severity="warning")
            return
        if self.busy is not None:  # the worker reads the breakpoints while it runs
            self.notify("busy: esc interrupts", severity="warning")
            return
        self.app.push_screen(BreakpointsDialog(self.session, set(self.query_one(SourceView).op_lines),
                                               self._breakpoints_changed))

    def _breakpoints_changed(self) -> None:
        s = self.session
        if s is not None:
            self.query_one(SourceView).set_breakpoints({int(b.value) for b in s.breakpoints
                                                        if b.kind == "line"})
        self._show_status()

    def _op_line(self, line: int) -> int | None:
        """The line an op starts on, for a cursor on any line of its text (None: no op there);
        says so when there is none."""
        first = self.query_one(SourceView).op_at(line)
        if first is None:
            self.notify(f"no op on line {line}", severity="warning")
        return first

    @_guarded
    def action_escape(self) -> None:
        if self.busy is not None and self.session is not None:
            self._queue.clear()
            self.session.interrupt()  # after the current op: the run can go on
            return
        if self.trace is not None:
            self.clear_trace()
            return
        raise SkipAction()

    def clear_trace(self) -> None:
        self.trace, self.trace_lines = None, set()
        self.query_one(SourceView).set_trace_lines(set())
        self._apply_highlights()
        self._show_trace()

    # --- a process grid ---------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The process keys only on a grid (hidden from the footer otherwise)."""
        if action in ("next_process", "toggle_mode", "run_others"):
            return self.on_grid
        return True

    @_guarded
    async def action_next_process(self, delta: int) -> None:
        """Focus the next (previous) process: its op and values are shown, and in one-process
        mode the step keys run it."""
        s = self.session
        if s is None or not self.on_grid:
            return
        if self.busy is not None:
            self.notify("busy: esc interrupts", severity="warning")
            return
        self.selected = (self.selected + delta) % s.n_processes
        self._apply_mode()
        self.clear_trace()
        ps = s.process_states()[self.selected]
        self.show_message(f"showing {ps.name}: {ps.describe()}")
        await self.refresh_state()

    @_guarded
    async def action_toggle_mode(self) -> None:
        """Lockstep (every ready process steps) <-> one process (only the focused one)."""
        if self.session is None or not self.on_grid:
            return
        if self.busy is not None:
            self.notify("busy: esc interrupts", severity="warning")
            return
        self.one_process = not self.one_process
        self._apply_mode()
        self.show_message(f"stepping one process: n/o/f/c run only process {self.selected} (p/P picks it)"
                          if self.one_process else
                          "stepping in lockstep: n runs the next op of every process that is ready")
        await self.refresh_state()

    @_guarded
    def action_run_others(self) -> None:
        """Run the other processes until the focused one's rendezvous completes."""
        if self.session is None or not self.on_grid:
            return
        p = self.selected
        self._command(f"running the others to process {p}'s rendezvous", lambda s: s.run_others(p))

    # --- tracing ------------------------------------------------------------------------------
    @_guarded
    def action_trace(self) -> None:
        """Trace the element under the cursor of the focused grid (else the first output)."""
        focused = self.focused
        grid: TensorGrid | None = focused if isinstance(focused, TensorGrid) else None
        if grid is None:  # the first result on the Results tab, else the first output
            lists = ["#stepper-outputs"]
            if self.query_one(TabbedContent).active == "tab-results":
                lists.insert(0, "#stepper-results")
            found = [g for sel in lists for _, g in self.query_one(sel, ValueList).grids()]
            grid = found[0] if found else None
        if grid is None:
            self.notify("no output to trace: step to an op first", severity="warning")
            return
        self.trace_grid(grid, grid.index)

    @on(TensorGrid.Activated)
    @_guarded
    def on_grid_activated(self, message: TensorGrid.Activated) -> None:
        self.trace_grid(message.grid, tuple(message.index))

    def trace_grid(self, grid: TensorGrid, index: tuple[int, ...]) -> None:
        """Trace ``index`` of the value a grid shows back through the program."""
        key: Hashable | None = None
        for lst in self.query(ValueList):
            key = lst.key_of(grid)
            if key is not None:
                break
        d = self._def_of(key)
        if d is None:
            self.notify("this value cannot be traced", severity="warning")
            return
        self.trace_element(d, index)

    def _def_of(self, key: Hashable | None) -> Def | None:
        s = self.session
        if s is None or not isinstance(key, tuple):
            return None
        kind, k = key
        ev = self.shown_event()
        if kind == "out" and ev is not None:
            return (ev.id, k)
        if kind == "in" and ev is not None and k < len(ev.operand_defs):
            return ev.operand_defs[k]
        if kind == "arg":
            return (args_node(self.selected), k) if self.on_grid else (ARGS_NODE, k)
        if kind == "result":
            defs = s.result_defs()
            if self.on_grid and s.results is not None:
                defs = list(s.interp.process_return_defs[self.selected])
            return defs[k] if k < len(defs) else None
        return None

    def trace_element(self, d: Def, index: tuple[int, ...]) -> None:
        """Trace value ``d`` at ``index`` (in a worker: a long program takes a moment)."""
        if self.busy is not None or self.session is None:
            self.notify("busy: esc interrupts" if self.busy else "no program loaded", severity="warning")
            return
        self.busy = "tracing"
        self._show_status()
        self._ticker = self.set_interval(0.25, self._show_status)
        self._trace_worker(d, index)

    @work(thread=True, group="stepper", exit_on_error=False)
    def _trace_worker(self, d: Def, index: tuple[int, ...]) -> None:
        trace: Trace | None = None
        error: BaseException | None = None
        try:
            assert self.session is not None
            trace = self.session.sources(d, index)
        except Exception as e:  # noqa: BLE001 - shown to the user
            error = e
        self.app.call_from_thread(self._trace_done, d, index, trace, error)

    @_guarded
    async def _trace_done(self, d: Def, index: tuple[int, ...], trace: Trace | None,
                          error: BaseException | None) -> None:
        self.busy = None
        self._ticker.stop()
        if error is not None or trace is None:
            await self._command_done("tracing", None, error)
            return
        self.trace = trace
        self.trace_lines = trace_lines(self.session, trace)
        where = f"[{', '.join(map(str, trace.index))}]" if trace.index else ""
        n = trace.count()
        self.show_message(f"traced {trace.label}{where}: {n} source element{'s' if n != 1 else ''} · "
                          "esc clears · 1/2/3 switch tabs")
        await self.refresh_state()
        for key, grid in self.query_one("#stepper-args", ValueList).grids():
            mask = trace.mask(value=self._def_of(key))
            if mask is not None and mask.any():  # show a slice that holds sources
                grid.move_cursor(tuple(int(i) for i in np.argwhere(mask)[0]))
        self.show_tab("tab-trace")

    # --- dialogs ------------------------------------------------------------------------------
    @_guarded
    def action_open(self) -> None:
        if self.busy is not None:
            self.notify("busy: esc interrupts", severity="warning")
            return
        # the draft (saved on disk: also one from an earlier run), else the text to fix
        text = load_draft() or self._draft or (self.source if self.load_error is not None else "")
        path = self.path if self.load_error is not None and self.path else ""
        self.app.push_screen(ProgramDialog(text, path or ""), self._opened)

    @_guarded
    async def _opened(self, result: Loaded | None) -> None:
        if result is None:
            return
        if result.session is None:
            self._draft = result.text
            return
        if result.path is None:  # the pasted text loaded: no draft left (a path leaves it)
            self._draft = ""
        self.arg_texts, self.inputs = [], None  # another program: its own arguments
        await self.load(result.text, result.path, result.session)

    def unsaved_text(self) -> str | None:
        """The paste draft when it could not be saved on disk (asked about on quit)."""
        if self._draft.strip() and not load_draft():
            return "pasted program text (the draft could not be saved)"
        return None

    @_guarded
    def action_inputs(self) -> None:
        s = self.session
        if self.busy is not None or s is None:
            self.notify("busy: esc interrupts" if self.busy else "no program loaded", severity="warning")
            return
        given = [i < len(self.inputs or []) for i in range(len(s.func.args))]
        self.app.push_screen(InputsDialog(s.func.name, [(a.name, str(a.type)) for a in s.func.args],
                                          self.arg_texts, given, self.seed,
                                          lambda texts, seed: self._bind(seed, texts)), self._bound)

    @_guarded
    async def _bound(self, changed: bool | None) -> None:
        if changed:
            self.show_message(self.describe_inputs() + " · restarted")
            await self.refresh_state()

    # --- source view events -------------------------------------------------------------------
    @on(SourceView.LineSelected)
    @_guarded
    def on_line_selected(self, message: SourceView.LineSelected) -> None:
        """Enter on a line: go to the op there (back to its latest instance, else forward to
        its next) and put the cursor on its first result, where Enter traces an element."""
        line = self._op_line(message.line)
        if line is None:
            return

        def focus_result(stop: Stop) -> None:
            ev = self.session.current if self.session is not None else None
            if ev is not None and self.on_grid and not self.one_process:
                self.selected = ev.frame.process  # show the process that got there
                self._apply_mode()
            if ev is None or ev.op.loc is None or ev.op.loc.line != line:
                return  # stopped elsewhere (a breakpoint, an error): the message says why
            self.show_tab("tab-op")
            grids = self.query_one("#stepper-outputs", ValueList).grids()
            if grids:
                grids[0][1].focus()
            else:
                self.notify(f"line {line}: {ev.op.name} has no result value", severity="information")

        self._command(f"going to line {line}", lambda s: s.goto_line(line), focus_result)

    @on(SourceView.GutterClicked)
    @_guarded
    async def on_gutter_clicked(self, message: SourceView.GutterClicked) -> None:
        await self._toggle_breakpoint(message.line)


def trace_lines(session: Session | None, trace: Trace) -> set[int]:
    """Source lines of the op instances on the trace's paths, of the traced value's op, and
    of the constants (values made from nothing) among the sources."""
    lines = {h.line for g in trace.groups for h in g.path if h.line is not None}
    if session is not None:
        for d in {trace.query} | {g.value for g in trace.groups}:
            if d[0] != ARGS_NODE:
                op = session.event(d[0]).op
                if op.loc is not None:
                    lines.add(op.loc.line)
    return lines


def _highlights(trace: Trace, d: Def | None, query: Def | None = None,
                index: tuple[int, ...] = ()) -> dict[tuple[int, ...], str]:
    """``{index: role}`` of the elements of value ``d`` in a trace; where an element has
    several roles the most specific one (trace.roles.ROLE_ORDER) wins. When ``d`` is the
    traced value itself, its element is marked ``result``."""
    out: dict[tuple[int, ...], str] = {}
    if d is None:
        return out
    groups = [g for g in trace.groups if g.value == d]
    rank = {r: i for i, r in enumerate(ROLE_ORDER)}
    for g in sorted(groups, key=lambda g: -rank.get(g.role, len(ROLE_ORDER))):
        out.update(dict.fromkeys(map(tuple, np.argwhere(g.mask).tolist()), g.role))
    if d == query:
        out[index] = "result"
    return out


def _ranges(lines: list[int]) -> str:
    """``[3, 4, 5, 9]`` -> ``3-5, 9``."""
    out: list[str] = []
    for n in lines:
        if out and out[-1].split("-")[-1] == str(n - 1):
            out[-1] = f"{out[-1].split('-')[0]}-{n}"
        else:
            out.append(str(n))
    return ", ".join(out) or "none"

