"""The live side of the lesson viewer: one value of a lesson program as a grid, the grids
of the operands its op reads with the cursor element's sources marked, and the op's
explanation of that element (the explorer's panel). Moving the cursor re-explains; ``play``
walks the value element by element, as the explorer's animation does.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.timer import Timer
from textual.widgets import Static

from hlolab.errors import HloLabError
from hlolab.messages import Msg, language, text
from hlolab.tui.widgets.explain import ExplainPanel
from hlolab.tui.widgets.grid import TensorGrid

ANIMATION_STEP = 0.5  # seconds per element while playing


def _ref(name: str) -> str:
    name = name.strip()
    return name if name.startswith("%") else "%" + name


class LivePane(Vertical):
    """Grids and explanation of the block in focus (``show_value``, ``show_operands``,
    ``show_target``); the main grid's cursor drives the highlights and the explanation."""

    DEFAULT_CSS = """
    LivePane { width: 1fr; height: 1fr; }
    LivePane > #live-title { height: auto; max-height: 3; padding: 0 1; color: $text-muted; }
    LivePane > #live-grids { height: 1fr; padding: 0 0 0 1; }
    LivePane > #live-grids > TensorGrid { max-height: 16; margin-bottom: 0; }
    LivePane > #live-explain { height: 45%; min-height: 5; border-top: hkey $foreground 20%; }
    """

    def __init__(self, lang: str = "en", *, id: str | None = None, classes: str | None = None):
        super().__init__(id=id, classes=classes)
        self.lang = lang
        self.run: Any = None  # hlolab.lessons.check.Run shown
        self.ref_shown: Any = None  # the Def of the value whose elements are explained
        self.name_shown = ""  # its label ("" when none is explained)
        self.mode = "explain"
        self._main: TensorGrid | None = None
        self._grids: dict[int, TensorGrid] = {}  # operand number of the op -> its grid
        self._timer: Timer | None = None
        self.title_text = ""

    def compose(self) -> ComposeResult:
        yield Static(text(Msg("lessons.tui.live_empty"), self.lang), id="live-title")
        yield VerticalScroll(id="live-grids", can_focus=False)
        yield ExplainPanel(id="live-explain")

    # --- what is shown ---------------------------------------------------------------------
    @property
    def main_grid(self) -> TensorGrid | None:
        return self._main

    @property
    def explain_text(self) -> str:
        return self.query_one(ExplainPanel).text

    @property
    def playing(self) -> bool:
        return self._timer is not None

    def _title(self, s: str) -> None:
        self.title_text = s
        self.query_one("#live-title", Static).update(Text(s))

    async def _mount_grids(self, entries: list[tuple[Any, Any, str]]) -> list[TensorGrid]:
        """Replace the grids by one per (key, value, title); values that are not arrays are skipped."""
        self.stop()
        box = self.query_one("#live-grids", VerticalScroll)
        await box.remove_children()
        grids = []
        for _key, value, title in entries:
            if not isinstance(value, np.ndarray):
                continue
            grids.append(TensorGrid(value, title=title))
        if grids:
            await box.mount_all(grids)
        return grids

    @staticmethod
    def _def(run: Any, ref: Any) -> Any:
        """A value's definition: ``ref`` itself (a ``Def``) or the name looked up in ``run``."""
        return ref if isinstance(ref, tuple) else run.find(_ref(ref))

    def _operands(self, run: Any, d: Any) -> list[tuple[list[int], Any, str]]:
        """(operand numbers, value, title) of each distinct operand of the op instance that
        made the value ``d`` (operands of that iteration / process)."""
        from hlolab.session import explain_element

        s = run.session
        value = s.value_of(d)
        e = explain_element(s, d, tuple(0 for _ in np.shape(value)))
        if e.event is None:
            return []
        defs = list(e.event.operand_defs)
        names = [o.name for o in e.event.op.operands]
        out: dict[Any, tuple[list[int], Any, str]] = {}
        for i, od in enumerate(defs):
            if od is None:
                continue
            if od in out:
                out[od][0].append(i)
                continue
            try:
                v = s.value_of(od)
            except HloLabError:
                continue
            label = _ref(names[i]) if i < len(names) else s.label(od)
            out[od] = ([i], v, f"{label} : {_type_text(v)}")
        return list(out.values())

    async def show_value(self, run: Any, ref: Any, element: tuple[int, ...] | None = None, *,
                         mode: str = "explain", title: str = "", operands: bool = True,
                         hide_value: bool = False) -> None:
        """The value ``ref`` (a name or a ``Def``) of ``run`` as the main grid, cursor on
        ``element``, the operands of its op under it; the explanation (``mode`` "explain" /
        "animation" / "value") or the trace ("trace") of the cursor's element."""

        d = self._def(run, ref)
        label = _ref(ref) if isinstance(ref, str) else run.session.label(d)
        self.run, self.ref_shown, self.name_shown, self.mode = run, d, label, mode
        value = run.session.value_of(d)
        entries: list[tuple[list[int], Any, str]] = [] if hide_value else \
            [([], value, f"{label} : {_type_text(value)}")]
        if operands or hide_value:
            entries += self._operands(run, d)
        grids = await self._mount_grids([(k, v, t) for k, v, t in entries])
        self._main = grids[0] if grids and not hide_value and grids[0].value is value else None
        self._grids = {}
        rest = grids[1:] if self._main is not None else grids
        arrays = [e for e in entries[0 if hide_value else 1:] if isinstance(e[1], np.ndarray)]
        for (numbers, _, _), g in zip(arrays, rest):
            for i in numbers:
                self._grids[i] = g
        self._title(title or label)
        if hide_value:
            if element is not None:
                self.explain(tuple(element))
            else:
                self.query_one(ExplainPanel).show(Text(""))
            return
        if self._main is None:
            self.query_one(ExplainPanel).show(Text(f"{label} = {value}"))
            return
        if element is not None and len(element) == self._main.value.ndim:
            self._main.move_cursor(tuple(element))
        self.explain(self._main.index)

    async def show_operands(self, run: Any, ref: Any, note: str, exclude: str = "") -> None:
        """The operands of the op that made ``ref`` (but ``exclude``), not the value itself:
        the answer to predict."""
        self.run, self.ref_shown, self.name_shown = run, None, ""
        shown = [x for x in self._operands(run, self._def(run, ref))
                 if x[2].split(" : ")[0] != _ref(exclude or "%")]
        await self._mount_grids(shown)
        self._main, self._grids = None, {}
        self._title(note)
        self.query_one(ExplainPanel).show(Text(""))

    async def show_tensors(self, entries: list[tuple[str, Any]], note: str, body: Any = None) -> None:
        """Plain tensors with titles (a target), or only ``note`` (a message)."""
        self.run, self.ref_shown, self.name_shown = None, None, ""
        await self._mount_grids([(t, np.asarray(v), t) for t, v in entries])
        self._main, self._grids = None, {}
        self._title(note)
        self.query_one(ExplainPanel).show(body if body is not None else Text(""))

    # --- the cursor's element ------------------------------------------------------------------
    def on_tensor_grid_cursor_moved(self, event: TensorGrid.CursorMoved) -> None:
        if self._main is not None and event.grid is self._main:
            event.stop()
            self.explain(event.index)

    def explain(self, index: tuple[int, ...]) -> None:
        """Mark the sources of ``name_shown[index]`` and explain it in the panel."""
        from hlolab.session import explain_element

        panel = self.query_one(ExplainPanel)
        if self.run is None or self.ref_shown is None:
            return
        idx = "[" + ", ".join(map(str, index)) + "]"
        try:
            e = explain_element(self.run.session, self.ref_shown, index)
        except HloLabError as err:
            panel.show(Text(err.short(), style="bold red"))
            return
        if self._main is not None:
            self._main.set_highlights({tuple(index): "result"})
        cells: dict[int, dict[tuple[int, ...], str]] = {id(g): {} for g in self._grids.values()}
        roles = set()
        # a collective reads other processes' values: those are not the operand grids shown
        own = e.event is not None and e.event.source_defs is e.event.operand_defs
        for s in e.sources if own else []:
            g = self._grids.get(s.source.operand) if s.source.operand is not None else None
            if g is not None:
                cells[id(g)][tuple(int(i) for i in s.source.index)] = s.source.role
                roles.add(s.source.role)
        for g in set(self._grids.values()):
            g.set_highlights(cells[id(g)])
        with language(self.lang):
            if self.mode == "trace":
                from hlolab.trace.format import format_trace

                body = Text(text(Msg("lessons.tui.trace_title", value=self.name_shown, index=idx)) + "\n",
                            style="bold")
                body.append(format_trace(self.run.session, self.run.session.sources(self.ref_shown, index)))
                panel.show(body, plain=body.plain)
            elif e.event is None:
                panel.show(Text(text(Msg("lessons.tui.argument", value=self.name_shown, index=idx,
                                         element=e.element))))
            elif e.explanation is not None:
                panel.show_explanation(e.explanation, roles | {"result"})
            else:
                body = Text(f"{self.name_shown}{idx} = {e.element}  ({e.event.op.name})\n", style="bold")
                for s in e.sources:
                    body.append(f"  {s.label or '(implicit)'}[{', '.join(map(str, s.source.index))}]"
                                f"  {s.source.role}\n")
                panel.show(body, roles)

    # --- animation ---------------------------------------------------------------------------------
    def step(self, direction: int = 1) -> None:
        """The main grid's cursor to the next element in row-major order (wraps)."""
        g = self._main
        if g is None or g.value is None or not g.has_cells:
            return
        shape = g.value.shape
        size = int(np.prod(shape, dtype=np.int64))
        flat = int(np.ravel_multi_index(g.index, shape)) if shape else 0
        flat = (flat + direction) % size
        g.move_cursor(tuple(int(i) for i in np.unravel_index(flat, shape)) if shape else ())

    def play(self) -> None:
        """Start or stop walking the main grid's elements."""
        if self._timer is not None:
            self.stop()
        elif self._main is not None:
            self._timer = self.set_interval(ANIMATION_STEP, self.step)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None


def _type_text(value: Any) -> str:
    """``tensor<2x3xf32>``: the type a grid's title names."""
    import numpy as np

    from hlolab.types import TensorType, element_type_of_dtype

    a = np.asarray(value)
    return str(TensorType(tuple(a.shape), element_type_of_dtype(a.dtype)))
