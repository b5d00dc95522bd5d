"""Home: the op gallery (every op with a schema, grouped by family), searchable,
with recent files.

The group of an op comes from its definition's declared family
(``hlolab.ops.registry.FAMILY_GROUPS``); no op is named here.

Filtering ranks what it shows (``rank``): the op the typed name means (short or
full name, XLA alias: the names ``schema_for`` resolves, so ``conv`` is
convolution), then ops whose own name the text begins, then ops with only an
alias it begins (shortest name first in both), then ops of a family it names,
then names containing it, then docs. The best-ranked op is highlighted.

Keys: every printable key filters, wherever the focus is; Home/End choose the
first/last entry of the list, except in a filter box holding text, where they
move the cursor (text editing wins where there is text to edit).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Header, Input, OptionList, Static
from textual.widgets.input import Selection
from textual.widgets.option_list import Option

from hlolab.atomic import write_text
from hlolab.ops.registry import GROUP_ORDER
from hlolab.tui.widgets.fields import Field
from hlolab.tui.widgets.footer import FittingFooter

DEFAULT_OP = "stablehlo.gather"
HINT = "type an op, or lessons · ↑↓ choose · Enter: open · ctrl+p: commands · F1: help"  # fits 80 columns
RECENT_MAX = 12


# --- the gallery's data -------------------------------------------------------------------

@dataclass(frozen=True)
class OpEntry:
    op: str  # full name, "stablehlo.gather"
    family: str
    doc: str
    aliases: tuple[str, ...] = ()  # XLA builder names ("Conv")

    @property
    def short(self) -> str:
        return self.op.removeprefix("stablehlo.")

    @property
    def names(self) -> tuple[str, ...]:
        """Every name of the op, lower case: short, full, aliases."""
        return tuple(n.lower() for n in (self.short, self.op, *self.aliases))

    def matches(self, word: str) -> bool:
        """``word`` (lower case) is in a name, the family or the doc."""
        return any(word in n for n in self.names) or word in self.family.lower() or word in self.doc.lower()


def rank(entry: OpEntry, word: str, meant: str | None) -> tuple[int, int]:
    """Sort key of ``entry`` for the typed ``word`` (lower case); ``meant`` is the op the
    word names exactly (``schema_for``'s names and aliases), if any. Lower is better."""
    if entry.op == meant:
        return (0, 0)
    prefixed = [len(n) for n in entry.names if n.startswith(word)]
    if prefixed:
        # the op's own name first ("g": gather, not compare's alias Ge), then the shortest
        # name it begins, aliases included ("con": convolution, which XLA calls Conv)
        own = entry.short.lower().startswith(word) or entry.op.lower().startswith(word)
        return (1 if own else 2, min(prefixed))
    in_name = any(word in n for n in entry.names)
    if word in entry.family.lower():  # "window": its family, ops naming it first
        return (3, 0 if in_name else 1)
    return (4, 0) if in_name else (5, 0)


def family_of(opdef: Any) -> str | None:
    """The gallery group of an op, from its definition's family (None: not shown)."""
    from hlolab.ops.registry import FAMILY_GROUPS

    return FAMILY_GROUPS.get(opdef.family)


def gallery() -> tuple[list[OpEntry], dict[str, list[str]]]:
    """(explorer-ready ops, family -> registered ops without a schema)."""
    from hlolab.ops.examples import schema_for, schema_ops
    from hlolab.ops.registry import all_ops

    defs = all_ops()
    ready = schema_ops()
    entries = []
    for name in ready:
        d = defs.get(name)
        fam = family_of(d) if d is not None else None
        schema = schema_for(name)
        doc = (d.doc if d is not None and d.doc else (schema.doc if schema else "")).strip()
        entries.append(OpEntry(name, fam or "other", doc, d.aliases if d is not None else ()))
    waiting: dict[str, list[str]] = {}
    for name, d in defs.items():
        fam = family_of(d)
        if fam is not None and name not in ready:
            waiting.setdefault(fam, []).append(name)
    return entries, waiting


def _group_index(family: str) -> int:
    """Position of a family in the gallery (unknown families last)."""
    return GROUP_ORDER.index(family) if family in GROUP_ORDER else len(GROUP_ORDER)


# --- recent files -----------------------------------------------------------------------------

def recent_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join("~", ".config")
    return Path(base).expanduser() / "hlolab" / "recent.json"


def recent_files() -> list[str]:
    """Recently opened program files, newest first ([] when the file is absent or corrupt)."""
    try:
        data = json.loads(recent_path().read_text())
    except (OSError, ValueError):
        return []
    if not isinstance(data, list):
        return []
    return [p for p in data if isinstance(p, str)][:RECENT_MAX]


def remember_file(path: str | Path) -> None:
    """Put ``path`` first in the recent list (atomic write; failures are ignored)."""
    p = str(Path(path).resolve())
    items = [p] + [x for x in recent_files() if x != p]
    try:
        write_text(recent_path(), json.dumps(items[:RECENT_MAX], indent=1))
    except OSError:
        pass


# --- the screen --------------------------------------------------------------------------------

class FilterField(Field):
    """The filter box. Empty, it has no text for Home/End to move through: they choose the
    first/last entry of the list instead (run inline, in key order, as every Field binding)."""

    BINDINGS: ClassVar[list[BindingType]] = [  # what these keys do here, for F1 (not Input's scrolling)
        Binding("up", "screen.move(-1)", "Previous entry", show=False),
        Binding("down", "screen.move(1)", "Next entry", show=False),
        Binding("pageup", "screen.move(-10)", "Ten entries up", show=False),
        Binding("pagedown", "screen.move(10)", "Ten entries down", show=False),
        Binding("home,ctrl+a", "home", "Start of the text (empty box: first entry)", show=False),
        Binding("end,ctrl+e", "end", "End of the text (empty box: last entry)", show=False),
    ]

    def action_home(self, select: bool = False) -> None:
        if self.value or select:
            super().action_home(select)
        else:
            self.screen.query_one("#ops", OptionList).action_first()

    def action_end(self, select: bool = False) -> None:
        if self.value or select:
            super().action_end(select)
        else:
            self.screen.query_one("#ops", OptionList).action_last()


class GalleryList(OptionList):
    """The op list: scrolling to a highlighted op brings its family's header into view too
    (Home on the first op, or the first op of a filtered family, shows the header above it)."""

    def scroll_to_highlight(self, top: bool = False) -> None:
        super().scroll_to_highlight(top)
        h = self.highlighted
        if h is None or not self.is_mounted:
            return
        first = h
        while first > 0 and self.options[first - 1].disabled:  # the header(s) just above
            first -= 1
        lines = getattr(self, "_index_to_line", None)  # OptionList's own layout (y of each option)
        if first != h and lines is not None and first in lines and lines[first] < self.scroll_y:
            self.scroll_to(y=lines[first], animate=False, immediate=True)

    def show_family_on_top(self) -> None:
        """Scroll the highlighted op's family header to the top, when the op stays in view."""
        h = self.highlighted
        lines = getattr(self, "_index_to_line", None)
        if h is None or lines is None or h not in lines:
            return
        head = next((i for i in range(h, -1, -1) if self.options[i].disabled), h)
        if head in lines and lines[h] - lines[head] < self.scrollable_content_region.height:
            self.scroll_to(y=lines[head], animate=False, immediate=True)


class HomeScreen(Screen):
    """The gallery: filter box, grouped op list, details of the highlighted entry."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("down", "move(1)", "Down", show=False, id="home.down"),
        Binding("up", "move(-1)", "Up", show=False, id="home.up"),
        Binding("pagedown", "move(10)", show=False, id="home.pagedown"),
        Binding("pageup", "move(-10)", show=False, id="home.pageup"),
        Binding("escape", "clear_filter", "Clear filter", id="home.clear"),
    ]

    def __init__(self, name: str | None = None, id: str | None = None):
        super().__init__(name=name, id=id)
        self.entries, self.waiting = gallery()

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="home-body"):
            with Vertical(id="home-left"):
                yield FilterField(placeholder="filter: type an op or family (gather, conv, window…)",
                                  id="filter", compact=True)
                yield GalleryList(id="ops", compact=True)
            with VerticalScroll(id="home-detail"):
                yield Static(id="detail")
        yield Static(HINT, id="hint")
        yield FittingFooter()

    def on_mount(self) -> None:
        self.sub_title = "op gallery"
        self.refill("")
        self.query_one("#filter", Input).focus()
        ol = self.query_one("#ops", GalleryList)
        self.call_after_refresh(ol.show_family_on_top)

    def on_screen_resume(self) -> None:
        """Back from an explorer: the filter's text is selected, so typing starts a new search
        (and Enter still opens what it shows)."""
        f = self.query_one("#filter", Input)
        if f.value:
            f.focus()
            f.selection = Selection(0, len(f.value))

    # --- the list ------------------------------------------------------------------------------
    def matches(self, text: str) -> list[OpEntry]:
        """Entries matching every word of ``text``, best first (``rank`` of the first word),
        else in the gallery's group order."""
        from hlolab.ops.examples import schema_for

        words = text.lower().split()
        shown = [e for e in self.entries if all(e.matches(w) for w in words)]
        if not words:
            return sorted(shown, key=lambda e: _group_index(e.family))
        schema = schema_for(words[0])
        meant = schema.op if schema is not None else None
        return sorted(shown, key=lambda e: (rank(e, words[0], meant), _group_index(e.family)))

    def refill(self, text: str) -> None:
        """Rebuild the list for filter ``text``: with text, the best-ranked op highlighted;
        without, the highlighted entry kept."""
        ol = self.query_one("#ops", OptionList)
        keep = self.highlighted_id or f"op:{DEFAULT_OP}"
        shown = self.matches(text)
        by_family: dict[str, list[OpEntry]] = {}
        for e in shown:  # families in the order of their first (best) op
            by_family.setdefault(e.family, []).append(e)
        options: list[Option] = []
        if not text.strip():  # a newcomer sees the lessons first, above the ops
            options += [Option(Text("learn", style="bold"), id="section:learn", disabled=True),
                        Option("  Guided lessons", id="lessons:list")]
        for fam, ops in by_family.items():  # only families with an op to explore
            options.append(Option(Text(fam, style="bold"), id=f"family:{fam}", disabled=True))
            options += [Option(f"  {e.short}", id=f"op:{e.op}") for e in ops]
        # typing "lessons" (or "learn") offers the guided lessons above any op it matches
        asks_lessons = any(len(w) >= 3 and ("lessons".startswith(w) or "learn".startswith(w))
                           for w in text.lower().split())
        if not text.strip():
            options += self._extra_sections()
        elif asks_lessons:
            options.insert(0, Option("  Guided lessons", id="lessons:list"))
        elif not shown:
            options.append(Option(Text(f"no op matches '{text}'", style="italic"), disabled=True))
        ol.clear_options()
        ol.add_options(options)
        ids = [o.id for o in options]
        if text.strip():
            target = "lessons:list" if asks_lessons else f"op:{shown[0].op}" if shown else None
        else:
            target = keep if keep in ids else next((i for i in ids if i and i.startswith("op:")), None)
        if target is not None:
            ol.highlighted = ids.index(target)
        self._show_detail()

    def _extra_sections(self) -> list[Option]:
        out = [Option(Text("Recent files", style="bold"), id="section:recent", disabled=True)]
        files = recent_files()
        if not files:
            out.append(Option(Text("  none yet: `hlolab open FILE.mlir` adds one", style="dim italic"),
                              disabled=True))
        for f in files:
            out.append(Option(f"  {f}", id=f"file:{f}"))
        return out

    @property
    def highlighted_id(self) -> str | None:
        ol = self.query_one("#ops", OptionList)
        if ol.highlighted is None or ol.option_count == 0:
            return None
        return ol.get_option_at_index(ol.highlighted).id

    @property
    def shown_ops(self) -> list[str]:
        """Full names of the ops in the list (tests)."""
        ol = self.query_one("#ops", OptionList)
        return [o.id[3:] for o in (ol.get_option_at_index(i) for i in range(ol.option_count))
                if o.id and o.id.startswith("op:")]

    # --- details ---------------------------------------------------------------------------------
    def _show_detail(self) -> None:
        self.query_one("#detail", Static).update(self._detail_text(self.highlighted_id))

    def _detail_text(self, oid: str | None) -> Text:
        if oid is None:
            return Text("")
        kind, _, value = oid.partition(":")
        out = Text()
        if kind == "op":
            from hlolab.ops.examples import schema_for

            entry = next(e for e in self.entries if e.op == value)
            schema = schema_for(value)
            out.append(entry.short, style="bold")
            out.append(f"  ({entry.family})  ", style="dim")
            out.append("Enter: open the explorer\n\n", style="italic")
            if entry.doc:
                out.append(entry.doc.split("\n\n")[0].strip() + "\n\n")
            if schema is not None:
                out.append("parameters\n", style="bold")
                for p in schema.params:
                    out.append(f"  {p.name}", style="bold")
                    out.append(f" = {p.format(p.default) or 'none'}")
                    out.append(f"  {p.doc}\n", style="dim")
                out.append("\npresets: ", style="bold")
                out.append(", ".join(schema.presets) + "\n")
        elif kind == "family":
            n = sum(1 for e in self.entries if e.family == value)
            waiting = self.waiting.get(value, [])
            out.append(value, style="bold")
            out.append(f"\n\n{n} explorer-ready op{'s' if n != 1 else ''}")
            if waiting:
                names = ", ".join(w.removeprefix("stablehlo.") for w in sorted(waiting)[:12])
                out.append(f"; registered without a parameter schema: {names}", style="dim")
                out.append("\nthese run inside programs: `hlolab open FILE.mlir` steps through them",
                           style="dim")
        elif kind == "file":
            out.append(value, style="bold")
            out.append("\n\nEnter: open it in the program stepper", style="italic")
        elif kind == "lessons":
            out.append("Guided lessons", style="bold")
            out.append("\n\nEnter: the list of lessons with your progress (English, 中文, Español)\n\n",
                       style="italic")
            out.append("Each lesson explains ops with programs that run live, and asks questions "
                       "checked by running them. Also: `hlolab lesson N`, ctrl+p Lessons.")
        elif kind == "section":
            notes = {"recent": "Programs opened with `hlolab open FILE` are listed here."}
            out.append(notes.get(value, ""))
        return out

    # --- events ---------------------------------------------------------------------------------
    @on(Input.Changed, "#filter")
    def _filter(self, event: Input.Changed) -> None:
        self.refill(event.value)

    def on_key(self, event: events.Key) -> None:
        """Typing filters wherever the focus is: a key that reaches the screen unhandled came
        from the list or the details (the filter box keeps its own keys); bound keys (q, ?)
        keep their bindings. The focus stays, so the keys of a burst stay in order."""
        f = self.query_one("#filter", Input)
        if event.key in self.active_bindings:
            return
        if event.is_printable and event.character:
            f.value += event.character
        elif event.key == "backspace" and f.value:
            f.value = f.value[:-1]
        else:
            return
        f.cursor_position = len(f.value)
        event.stop()

    @on(Input.Submitted, "#filter")
    def _submit(self, event: Input.Submitted) -> None:
        self.open_highlighted()

    @on(OptionList.OptionHighlighted)
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._show_detail()

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self.open_highlighted()

    def open_highlighted(self) -> None:
        """Enter: open the highlighted op (explorer) or file (stepper)."""
        oid = self.highlighted_id
        if oid is None:
            return
        kind, _, value = oid.partition(":")
        app: Any = self.app
        if kind == "op":
            app.open_op(value)
        elif kind == "file":
            app.open_file(value)
        elif kind == "lessons":
            app.open_lessons()

    def action_move(self, step: int) -> None:
        ol = self.query_one("#ops", OptionList)
        if ol.option_count == 0:
            return
        i = ol.highlighted if ol.highlighted is not None else -1
        n = ol.option_count
        j = i
        for _ in range(n):  # skip the disabled notes
            j = min(max(j + (1 if step > 0 else -1), 0), n - 1)
            if not ol.get_option_at_index(j).disabled:
                if abs(step) == 1 or j == n - 1 or j == 0 or abs(j - i) >= abs(step):
                    break
        if not ol.get_option_at_index(j).disabled:
            ol.highlighted = j

    def action_clear_filter(self) -> None:
        f = self.query_one("#filter", Input)
        if f.value:
            f.value = ""
        else:
            f.focus()
