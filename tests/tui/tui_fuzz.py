"""Key-level fuzzing of the TUI (issue 24, "TUI robustness").

A case is a starting screen (the gallery, the explorer on one op with a schema, the
stepper on one built-in example) and a seeded list of actions: single keys (every key
any screen, dialog or widget of the TUI binds, plus printable characters and the
navigation keys), bursts (keys posted at once, as a terminal delivers a paste of keys
or auto-repeat), typed words that mean something to a field (a shape, a path, a
breakpoint), pastes, clicks, double clicks and wheel scrolls at random cells, resizes
between 60x20 and 200x60 and waits (a pause, or until the workers are done).

The invariant: no exception escapes (Textual re-raises it from ``run_test``), no
handler's error is swallowed into an "internal error" notification, and at the end
the app still quits on ``ctrl+q`` (answering the quit confirmation when one shows)
within a bounded time; a case that does not finish is a hang.

Everything a case writes goes to its own temporary directory: the working directory
(exports go to ``./hlolab-export``), ``HOME`` and the XDG directories (recent files,
the paste draft, Textual's screenshot downloads) all point there.

A case is a pure function of its seed (``make_case``): ``replay(actions, start)``
reruns a recorded list. ``python -m tests.tui.tui_fuzz --cases N --seed S`` runs a
long campaign and prints the failures with their seeds; ``--shrink`` minimises each
distinct failure's action list.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import importlib
import os
import pkgutil
import random
import shutil
import string
import sys
import tempfile
import threading
import time
import traceback
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from textual import events
from textual.app import App
from textual.binding import Binding
from textual.keys import REPLACED_KEYS, _character_to_key, _get_unicode_name_from_key
from textual.pilot import OutOfBounds, Pilot, WaitForScreenTimeout
from textual.widgets import Input, TextArea

import hlolab
import hlolab.tui
from hlolab.tui.app import HloLabApp

Action = tuple[Any, ...]  # ("key", k) | ("burst", [k…]) | ("type", s) | ("paste", s) | ("click", x, y, n)
#                            | ("scroll", x, y, up) | ("resize", w, h) | ("wait", seconds; 0: workers done)

CASE_TIMEOUT = 120.0  # a case not finished by then is a hang (never a speed measure)
WORKER_WAIT = 20.0  # a ("wait", 0) gives the workers this long, then the case goes on
SCREEN_WAIT = 10.0  # Pilot's wait for every widget to process its pending messages (a stuck widget)
QUIT_ROUNDS = 400  # 50 ms rounds for the app to exit after ctrl+q (and y to the confirmation)
MIN_SIZE, MAX_SIZE = (60, 20), (200, 60)
SHRINK_REPLAYS = 80

# keys that would end the case early: ctrl+q always quits (it ends every case); q quits
# outside text fields, so it is only sent where it types or closes the help
NEVER = {"ctrl+q"}
NAV_KEYS = ["tab", "shift+tab", "enter", "escape", "up", "down", "left", "right", "home", "end",
            "pageup", "pagedown", "backspace", "delete", "space", "shift+up", "shift+down",
            "shift+left", "shift+right", "ctrl+left", "ctrl+right", "ctrl+home", "ctrl+end"]
GLOBAL_KEYS = ["ctrl+p", "f1", "question_mark", "ctrl+o", "ctrl+t", "ctrl+c", "ctrl+s", "ctrl+d",
               "f9", "f10", "B", "i", "x", "1", "2", "3"]
PRINTABLE = string.ascii_letters + string.digits + " ,,,[[]]{}()<>-+=.:%_'\"#@!*&^$;|\\?é→"
# text a field understands (or nearly): shapes, values, paths (in the case's directory), breakpoints
WORDS = ["2,2", "1,2,3", "0", "-1", "7", "99999", "1e9", "[[1, 2], [3, 4]]", "[1, 2, 3]", "dense<[1, 2]>",
         "dense<1.5> : tensor<2xf32>", "3.5", "nan", "inf", "op add", "op dot_general", "name %0", "%x",
         "line 3", "line 99", "a.mlir", "bad.mlir", "missing.mlir", "x.npy", "x.npy x.npy", "empty.mlir",
         "gather", "conv", "window", "iota", "random", "custom", "explore", "theme", "help", "home",
         "[", "]", "()", ",,", "  ", "0,0,0,0,0", "1,1,1,1,1,1,1,1", "2x3", "scalar", "0x3", "0x2x3",
         "2x0x3", "1x1x1x1", "64x64", "i32", "f64", "i1", "complex<f32>"]
# a program with an empty rank-3 argument (every element-free shape must show)
EMPTY_PROGRAM = """func.func @main(%x: tensor<0x2x3xf32>) -> tensor<0x2x3xf32> {
  %0 = stablehlo.add %x, %x : tensor<0x2x3xf32>
  return %0 : tensor<0x2x3xf32>
}
"""


# --- cases -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Start:
    """Where a case begins: ``home``, ``explorer`` on op ``target``, ``stepper`` on example ``target``."""

    kind: str
    target: str = ""

    def __str__(self) -> str:
        return f"{self.kind}:{self.target}" if self.target else self.kind


@dataclass
class Case:
    seed: int
    start: Start
    size: tuple[int, int]
    actions: list[Action]


@dataclass
class Outcome:
    case: Case
    error: str | None = None  # escaped exception, hang or no quit
    soft: list[str] = field(default_factory=list)  # errors a guard turned into a notification
    done: int = 0  # actions performed
    quit_early: bool = False  # the actions themselves quit (the palette's Quit)
    confirmed: bool = False  # quitting asked for a confirmation (answered y)
    screens: set[str] = field(default_factory=set)
    seconds: float = 0.0

    @property
    def failed(self) -> bool:
        return self.error is not None or bool(self.soft)

    def report(self) -> str:
        lines = [f"seed {self.case.seed} start {self.case.start} size {self.case.size} "
                 f"after {self.done}/{len(self.case.actions)} actions"]
        if self.error:
            lines.append(self.error.rstrip())
        lines += [f"soft: {s}" for s in self.soft]
        lines.append(f"actions: {self.case.actions[:self.done + 1]!r}")
        return "\n".join(lines)


def starts() -> list[Start]:
    """Every starting screen: the gallery, the explorer of each schema op, the stepper of each example."""
    from hlolab.ops.examples import schema_ops

    return ([Start("home")] + [Start("explorer", op) for op in schema_ops()]
            + [Start("stepper", name) for name in hlolab.examples()])


KINDS = ("home", "explorer", "stepper", "dialog")
# "dialog" cases open a modal first (once the start screen is built): the palette, the help,
# the gallery's Enter (the explorer), the export modal, the open/paste, breakpoints and inputs dialogs
DOORS = (("home", "ctrl+p"), ("home", "f1"), ("home", "enter"), ("explorer", "x"),
         ("stepper", "ctrl+o"), ("stepper", "B"), ("stepper", "i"))


def make_case(seed: int, n_actions: int, kind: str | None = None, door: int | None = None) -> Case:
    """The case of ``seed``: a start (of ``kind`` when given; for "dialog", DOORS[door] when
    given), a terminal size and the actions."""
    rng = random.Random(seed)
    opening: list[Action] = []
    if kind == "dialog":
        kind, key = rng.choice(DOORS) if door is None else DOORS[door]
        opening = [("wait", 0), ("key", key)]
    pool = [s for s in starts() if kind is None or s.kind == kind]
    start = rng.choice(pool)
    size = (rng.randint(MIN_SIZE[0], MAX_SIZE[0]), rng.randint(MIN_SIZE[1], MAX_SIZE[1]))
    vocab = vocabulary()
    rest = [random_action(rng, vocab) for _ in range(n_actions - len(opening))]
    return Case(seed, start, size, opening + rest)


# --- the vocabulary ------------------------------------------------------------------------

def _tui_classes() -> list[type]:
    """Every class the TUI's modules define or import (screens, dialogs, widgets, Textual's)."""
    found: list[type] = []
    for info in pkgutil.walk_packages(hlolab.tui.__path__, "hlolab.tui."):
        module = importlib.import_module(info.name)
        found += [v for v in vars(module).values() if isinstance(v, type)]
    from textual.command import CommandPalette
    from textual.widgets import Select, Tabs

    return found + [App, CommandPalette, Select, Tabs]


def binding_keys() -> list[str]:
    """Every key bound anywhere in the TUI (each class's whole MRO), but the quitting ones."""
    keys: set[str] = set()
    for cls in _tui_classes():
        for base in cls.__mro__:
            for b in base.__dict__.get("BINDINGS", ()):
                spec = b.key if isinstance(b, Binding) else b[0]
                keys.update(k.strip() for k in spec.split(",") if k.strip())
    return sorted(keys - NEVER)


@dataclass(frozen=True)
class Vocab:
    bound: list[str]
    single: list[str]  # keys for ("key", k): bindings, navigation, global keys, printable characters


_VOCAB: Vocab | None = None


def vocabulary() -> Vocab:
    global _VOCAB
    if _VOCAB is None:
        bound = binding_keys()
        _VOCAB = Vocab(bound, sorted(set(bound) | set(NAV_KEYS) | set(GLOBAL_KEYS) | set(PRINTABLE)))
    return _VOCAB


def _burst(rng: random.Random, vocab: Vocab) -> Action:
    keys: list[str] = []
    for _ in range(rng.randint(2, 12)):
        if rng.random() < 0.3:
            keys += list(rng.choice(WORDS))
        else:
            keys.append(rng.choice(vocab.single))
    return ("burst", [k for k in keys if k != "q"])  # (q: see NEVER)


def _paste_text(rng: random.Random) -> str:
    choices = [rng.choice(WORDS), "\n".join(rng.sample(WORDS, 3)),
               hlolab.example_path(rng.choice(hlolab.examples())).read_text(),
               "func.func @main( {\n  %0 = stablehlo.add\n}", "".join(rng.choices(PRINTABLE + "\n\t", k=40)),
               EMPTY_PROGRAM]
    return rng.choice(choices)


def random_action(rng: random.Random, vocab: Vocab) -> Action:
    """One action; the weights favour the keys screens bind."""
    r = rng.random()
    if r < 0.30:
        return ("key", rng.choice(vocab.bound))
    if r < 0.50:
        return ("key", rng.choice(NAV_KEYS))
    if r < 0.58:
        return ("key", rng.choice(GLOBAL_KEYS))
    if r < 0.66:
        return ("key", rng.choice(PRINTABLE))
    if r < 0.72:
        return ("type", rng.choice(WORDS))
    if r < 0.80:
        return _burst(rng, vocab)
    if r < 0.81:
        return ("paste", _paste_text(rng))
    if r < 0.87:
        return ("click", rng.randrange(MAX_SIZE[0]), rng.randrange(MAX_SIZE[1]), rng.choice((1, 1, 1, 2, 3)))
    if r < 0.89:
        return ("scroll", rng.randrange(MAX_SIZE[0]), rng.randrange(MAX_SIZE[1]), rng.random() < 0.5)
    if r < 0.92:
        return ("resize", rng.randint(MIN_SIZE[0], MAX_SIZE[0]), rng.randint(MIN_SIZE[1], MAX_SIZE[1]))
    return ("wait", rng.choice((0, 0, 0.1, 0.4, 0.6)))


# --- performing actions --------------------------------------------------------------------------

def key_event(key: str) -> events.Key:
    """The Key event a terminal sends for ``key`` (Textual's own mapping, as ``Pilot.press`` uses)."""
    if len(key) == 1 and not key.isalnum():
        key = _character_to_key(key)
    try:
        char: str | None = unicodedata.lookup(_get_unicode_name_from_key(REPLACED_KEYS.get(key, key)))
    except KeyError:
        char = key if len(key) == 1 else None
    return events.Key(key, char)


def _q_is_safe(app: App) -> bool:
    """q types into a text field or closes the help; elsewhere it would quit the app."""
    from hlolab.tui.screens.help import HelpScreen

    return isinstance(app.focused, (Input, TextArea)) or isinstance(app.screen, HelpScreen)


def _cell(app: App, x: int, y: int) -> tuple[int, int]:
    size = app.screen.size
    return x % max(size.width, 1), y % max(size.height, 1)


async def perform(pilot: Pilot, action: Action) -> None:
    """Do one action, as a terminal would deliver it."""
    app = pilot.app
    kind, *args = action
    if kind == "key":
        if args[0] != "q" or _q_is_safe(app):
            await pilot.press(args[0])
    elif kind in ("burst", "type"):
        for key in (args[0] if kind == "burst" else list(args[0])):
            app.post_message(key_event(key))
        await pilot.pause()
    elif kind == "paste":
        app.post_message(events.Paste(args[0]))
        await pilot.pause()
    elif kind == "click":
        with contextlib.suppress(OutOfBounds):  # (the screen shrank in between: not the app's fault)
            await pilot.click(offset=_cell(app, args[0], args[1]), times=args[2])
    elif kind == "scroll":
        x, y = _cell(app, args[0], args[1])
        cls = events.MouseScrollUp if args[2] else events.MouseScrollDown
        app.post_message(cls(None, x, y, 0, 0, 0, False, False, False, screen_x=x, screen_y=y))
        await pilot.pause()
    elif kind == "resize":
        await pilot.resize_terminal(args[0], args[1])
    elif kind == "wait":
        if args[0]:
            await pilot.pause(args[0])
        else:
            with contextlib.suppress(asyncio.TimeoutError):  # a long computation is not a hang
                await asyncio.wait_for(app.workers.wait_for_complete(), WORKER_WAIT)
            await pilot.pause()
    else:
        raise ValueError(f"unknown action {action!r}")


# --- the sandbox ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Files:
    """The case's directory: the program to start on and files the dialogs may be pointed at."""

    root: Path
    work: Path

    def program(self, name: str) -> Path:
        return self.work / f"{name}.mlir"


def _populate(work: Path) -> None:
    for name in hlolab.examples():
        shutil.copy(hlolab.example_path(name), work / f"{name}.mlir")
    shutil.copy(hlolab.example_path("softplus"), work / "a.mlir")
    (work / "bad.mlir").write_text("func.func @main(%x: tensor<2xf32>) {\n  %0 = stablehlo.nope %x\n}\n")
    (work / "empty.mlir").write_text("")
    np.save(work / "x.npy", np.arange(6, dtype=np.float32).reshape(2, 3))


@contextlib.contextmanager
def sandbox() -> Iterator[Files]:
    """A fresh directory as cwd, HOME and every XDG directory; restored afterwards."""
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    os.environ.setdefault("MPLCONFIGDIR", str(Path(tempfile.gettempdir()) / "hlolab-fuzz-mpl"))
    with tempfile.TemporaryDirectory(prefix="hlolab-tui-fuzz-") as tmp:
        root = Path(tmp)
        work = root / "work"
        for sub in ("work", "home", "config", "state", "cache", "data", "downloads"):
            (root / sub).mkdir()
        _populate(work)
        (root / "config" / "user-dirs.dirs").write_text(f'XDG_DOWNLOAD_DIR="{root / "downloads"}"\n')
        os.environ.update(HOME=str(root / "home"), XDG_CONFIG_HOME=str(root / "config"),
                          XDG_STATE_HOME=str(root / "state"), XDG_CACHE_HOME=str(root / "cache"),
                          XDG_DATA_HOME=str(root / "data"))
        os.chdir(work)
        try:
            yield Files(root, work)
        finally:
            os.chdir(saved_cwd)
            os.environ.clear()
            os.environ.update(saved_env)


def make_app(start: Start, files: Files) -> HloLabApp:
    if start.kind == "explorer":
        return HloLabApp(open_op=start.target)
    if start.kind == "stepper":
        return HloLabApp(open_path=str(files.program(start.target)))
    return HloLabApp()


# --- running a case ------------------------------------------------------------------------------

def _ended(app: App) -> bool:
    task = getattr(app, "_task", None)
    return bool(app._exit or app._exception is not None or (task is not None and task.done()))


def _record_notifications(app: App, out: Outcome) -> None:
    """Errors a handler's guard turned into a notification are bugs too (the traceback went to the log)."""
    notify = app.notify

    def recording(message: str, *, title: str = "", severity: str = "information", **kw: Any) -> None:
        text = str(message)
        if severity == "error" and ("internal error" in text or "unexpected" in f"{title} {text}"):
            out.soft.append(f"notification at action {out.done}: {title}: {text}")
        notify(message, title=title, severity=severity, **kw)

    app.notify = recording  # type: ignore[method-assign]


def _check_screen(app: App, out: Outcome) -> None:
    screen = app.screen
    out.screens.add(type(screen).__name__)
    error = getattr(screen, "error", "")  # the explorer's message (an unexpected exception in the build)
    if isinstance(error, str) and error.startswith("unexpected"):
        message = f"explorer error at action {out.done}: {error}"
        if message not in out.soft:
            out.soft.append(message)


async def quit_app(app: App, out: Outcome) -> None:
    """ctrl+q (and y when a confirmation asks); the app must exit within QUIT_ROUNDS."""
    from hlolab.tui.screens.quit import ConfirmQuit

    app.post_message(key_event("ctrl+q"))
    answered = False
    for _ in range(QUIT_ROUNDS):
        await asyncio.sleep(0.05)
        if _ended(app):
            return
        if not answered and isinstance(app.screen, ConfirmQuit):
            app.post_message(key_event("y"))
            answered = out.confirmed = True
    out.error = (f"no quit: still running {QUIT_ROUNDS * 0.05:g} s after ctrl+q"
                 f"{' and y' if answered else ''}\n{snapshot(app)}")


class FuzzPilot(Pilot):
    """Pilot whose wait for pending messages gives up after SCREEN_WAIT (not 30 s)."""

    async def _wait_for_screen(self, timeout: float = SCREEN_WAIT) -> bool:
        return await super()._wait_for_screen(min(timeout, SCREEN_WAIT))


def _stuck(app: App) -> str:
    """The widgets in the DOM that hold messages but run no message loop."""
    with contextlib.suppress(Exception):
        return ", ".join(repr(w) for w in app.screen.walk_children(with_self=True) if not w.is_running)
    return "?"


async def _drive(case: Case, files: Files, out: Outcome, holder: list[App]) -> None:
    app = make_app(case.start, files)
    holder.append(app)
    _record_notifications(app, out)
    async with app.run_test(size=case.size):
        pilot = FuzzPilot(app)
        for action in case.actions:
            if _ended(app):
                break
            try:
                await perform(pilot, action)
            except WaitForScreenTimeout:  # then still check that the app quits
                out.error = (f"stuck: widgets did not process their messages within {SCREEN_WAIT:g} s "
                             f"after action {out.done} {action!r}; not running: {_stuck(app)}")
                break
            out.done += 1
            if not _ended(app):
                _check_screen(app, out)
        if _ended(app):
            out.quit_early = app._exception is None
        else:
            await quit_app(app, out)
    if app.return_code not in (0, None) and out.error is None:
        out.error = f"the app exited with code {app.return_code}"


def snapshot(app: App | None) -> str:
    """What the app was doing: its screens, its workers and every thread's stack."""
    lines = []
    if app is not None:
        with contextlib.suppress(Exception):
            lines.append("screens: " + " > ".join(type(s).__name__ for s in app.screen_stack))
            lines.append("workers running: " + ", ".join(f"{w.name} ({w.group})" for w in app.workers
                                                          if w.is_running))
    names = {t.ident: t.name for t in threading.enumerate()}
    for ident, frame in sys._current_frames().items():
        if ident == threading.get_ident() and app is None:
            continue
        lines.append(f"--- thread {names.get(ident, ident)}")
        lines += [s.rstrip() for s in traceback.format_stack(frame)[-8:]]
    return "\n".join(lines)


async def _run(case: Case, files: Files, timeout: float) -> Outcome:
    out = Outcome(case)
    holder: list[App] = []
    task = asyncio.create_task(_drive(case, files, out, holder))
    done, _ = await asyncio.wait({task}, timeout=timeout)
    if not done:
        where = case.actions[out.done] if out.done < len(case.actions) else "quitting"
        out.error = f"hang: not finished after {timeout:g} s, at action {out.done} {where!r}\n" + \
            snapshot(holder[0] if holder else None)
        task.cancel()
        await asyncio.wait({task}, timeout=30)
        return out
    exc = task.exception()
    if exc is not None:
        text = "".join(traceback.format_exception(exc))
        out.error = text if out.error is None else f"{out.error}\n{text}"
    return out


class Hang(KeyboardInterrupt):
    """Raised into the main thread when the event loop itself is stuck."""


class _Watchdog:
    """When the event loop is stuck (asyncio cannot time that out): raise Hang in the main
    thread; when that cannot land either (stuck in C code), print the case and end the process."""

    def __init__(self, seconds: float, describe: Callable[[], str]):
        self.fired = ""
        self._describe = describe
        self._main = threading.get_ident()
        self._done = threading.Event()
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True

    def _fire(self) -> None:
        self.fired = snapshot(None)
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self._main), ctypes.py_object(Hang))
        if not self._done.wait(30):
            sys.stderr.write(f"HANG (the main thread is stuck in C code): {self._describe()}\n{self.fired}\n")
            sys.stderr.flush()
            os._exit(3)

    def __enter__(self) -> _Watchdog:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._timer.cancel()


def run_case(case: Case, timeout: float = CASE_TIMEOUT) -> Outcome:
    """Run one case in its own sandbox; never raises for a failure of the app."""
    t0 = time.monotonic()
    describe = lambda: f"seed {case.seed} start {case.start} size {case.size} actions {case.actions!r}"  # noqa: E731
    with sandbox() as files, _Watchdog(timeout + 60, describe) as dog:
        try:
            out = asyncio.run(_run(case, files, timeout))
        except Hang:
            out = Outcome(case, error=f"hang: the event loop was blocked\n{dog.fired}",
                          done=len(case.actions))  # (which action: in the stack dump)
    out.seconds = time.monotonic() - t0
    return out


def replay(actions: list[Action], start: Start = Start("home"), size: tuple[int, int] = (120, 40),
           timeout: float = CASE_TIMEOUT) -> Outcome:
    """Rerun a recorded action list (a failing case's report gives all three)."""
    return run_case(Case(-1, start, size, list(actions)), timeout)


# --- campaigns -----------------------------------------------------------------------------------

def case_seed(seed: int, i: int) -> int:
    return seed * 1_000_003 + i


def campaign_cases(seed: int, cases: int, n_actions: int) -> Iterator[Case]:
    """Case i starts on KINDS[i % 4], so every kind of start comes in any four cases (the
    dialog cases go through DOORS in turn)."""
    for i in range(cases):
        kind = KINDS[i % len(KINDS)]
        door = (i // len(KINDS)) % len(DOORS) if kind == "dialog" else None
        yield make_case(case_seed(seed, i), n_actions, kind, door)


def signature(out: Outcome) -> str:
    """What makes two failures the same: the exception's type and innermost hlolab frame."""
    text = out.error or out.soft[0]
    if text.startswith(("hang", "no quit", "stuck")):
        cause = f" after soft {out.soft[0].split('error: ', 1)[-1].split(':')[0][:60]}" if out.soft else ""
        return text.split(":")[0] + cause
    if not out.error:  # "notification at action 3: : internal error: IndexError: index 0 is out…"
        return "soft " + text.split("error: ", 1)[-1].split(":")[0][:80]
    lines = [ln for ln in text.splitlines() if ln.strip()]
    frames = [ln.strip() for ln in lines if ln.strip().startswith("File ") and "hlolab" in ln
              and "tui_fuzz" not in ln]
    last = lines[-1] if out.error else text.split(": ", 1)[-1]
    return f"{last.split(':')[0][:80]} @ {frames[-1] if frames else '?'}"


def shrink(out: Outcome, replays: int = SHRINK_REPLAYS) -> Outcome:
    """A shorter action list that fails the same way (chunks removed while it still does)."""
    want = signature(out)
    best = out
    actions = list(out.case.actions[:out.done + 1])
    chunk = max(len(actions) // 2, 1)
    while chunk >= 1 and replays > 0:
        i, changed = 0, False
        while i < len(actions) and replays > 0:
            trial = actions[:i] + actions[i + chunk:]
            replays -= 1
            got = replay(trial, out.case.start, out.case.size)
            if got.failed and signature(got) == want:
                actions, best, changed = trial, got, True
            else:
                i += chunk
        if not changed:
            chunk //= 2
    return best


def campaign(seed: int, cases: int, n_actions: int,
             progress: Callable[[int, Outcome], None] | None = None,
             deadline: float | None = None) -> list[Outcome]:
    """Run the cases in order; none starts after ``deadline`` (time.monotonic) or ctrl+c."""
    outcomes: list[Outcome] = []
    for i, case in enumerate(campaign_cases(seed, cases, n_actions)):
        if deadline is not None and time.monotonic() > deadline:
            break
        try:
            out = run_case(case)
        except KeyboardInterrupt:
            break
        outcomes.append(out)
        if progress is not None:
            progress(i, out)
    return outcomes


def apply_proposed_fixes() -> None:
    """Patch this process with the fixes proposed for known bugs outside hlolab, so that a
    long campaign looks past them (``--with-fixes``; never in CI, where the replays xfail).

    Textual 8.2: ``OptionList._move_page`` indexes ``_index_to_line``, which stays empty until
    the list has been laid out: pageup/pagedown in the same burst as ctrl+p raise KeyError."""
    from textual.widgets import OptionList

    move_page = OptionList._move_page

    def guarded(self: OptionList, direction: Any) -> None:
        if (self.highlighted or 0) in self._index_to_line:
            move_page(self, direction)

    OptionList._move_page = guarded  # type: ignore[method-assign]
    _fix_empty_slices()


def _fix_empty_slices() -> None:
    """hlolab/tui/widgets/grid.py ``TensorGrid._plane``: a rank >= 3 tensor with an empty leading
    axis has no slice to index (IndexError); its plane is empty."""
    from hlolab.tui.widgets.grid import TensorGrid

    plane = TensorGrid._plane

    def guarded(self: TensorGrid) -> np.ndarray:
        v = self._value
        if v is not None and v.ndim > 2 and 0 in v.shape[:-2]:
            return np.empty((0, v.shape[-1]), dtype=v.dtype)
        return plane(self)

    TensorGrid._plane = guarded  # type: ignore[method-assign]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="A long key-level fuzz campaign of the TUI.")
    ap.add_argument("--cases", type=int, default=100)
    ap.add_argument("--seed", type=int, default=int(time.time()) % 100_000)
    ap.add_argument("--actions", type=int, default=60)
    ap.add_argument("--minutes", type=float, help="start no case after this long")
    ap.add_argument("--shrink", action="store_true", help="minimise each distinct failure's actions")
    ap.add_argument("--with-fixes", action="store_true", help="patch known bugs outside hlolab (see "
                    "apply_proposed_fixes) to look past them")
    ns = ap.parse_args(argv)
    if ns.with_fixes:
        apply_proposed_fixes()
    print(f"TUI fuzz: {ns.cases} cases of {ns.actions} actions, seed {ns.seed}"
          f"{' (with the proposed fixes)' if ns.with_fixes else ''}", flush=True)
    t0 = time.monotonic()

    def progress(i: int, out: Outcome) -> None:
        state = "FAIL" if out.failed else "quit early" if out.quit_early else "ok"
        print(f"  [{i + 1}/{ns.cases}] {time.monotonic() - t0:6.0f} s  seed {out.case.seed} "
              f"{out.case.start}: {state} ({out.seconds:.1f} s; {' '.join(sorted(out.screens))})", flush=True)
        if out.failed:
            print(out.report(), flush=True)

    deadline = t0 + ns.minutes * 60 if ns.minutes else None
    outcomes = campaign(ns.seed, ns.cases, ns.actions, progress, deadline)
    failed = [o for o in outcomes if o.failed]
    screens = sorted({s for o in outcomes for s in o.screens})
    print(f"{len(outcomes)} cases, {sum(o.done for o in outcomes)} actions, {len(failed)} failed, "
          f"{sum(o.quit_early for o in outcomes)} quit early, {time.monotonic() - t0:.0f} s")
    print("screens reached: " + ", ".join(screens))
    distinct: dict[str, Outcome] = {}
    for o in failed:
        distinct.setdefault(signature(o), o)
        print(f"FAILED seed {o.case.seed}: {signature(o)}")
    for sig, o in distinct.items():
        if ns.shrink:
            o = shrink(o)
        print(f"\n=== {sig}\n{o.report()}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
