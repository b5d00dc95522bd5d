"""The op explorer: one screen for every op, generated from its schema.

Parameters (left) rebuild the op in a worker thread: ``make_example`` ->
``Session`` -> run, so the UI never blocks. Operands and results are
``TensorGrid``s; the cursor on a result highlights its sources by role
(``OpCells.element_cells``: what the renderers draw too), the cursor on an
operand highlights the result elements it flows into (the set form
``Provenance.fwd`` on a one-element mask). The explain panel draws the op's
``Explanation`` of the selected result element.

Padding: an operand an op reads through a padded / dilated frame
(``Provenance.frames``: reduce_window, convolution) is shown *in that frame*,
as the diagrams draw it, so padding and dilation-hole cells a window covers
are highlighted where they sit (roles ``pad_value`` / ``dilation_hole``);
the padding-value operand, when there is one, is highlighted too.

A collective runs on its schema's process grid (``mhlo.num_replicas`` /
``mhlo.num_partitions`` of the example): the grids show one process's operands and
results, ``<`` / ``>`` switch process without rebuilding (the run holds every process's
instance), the grid labels and the title name the process (``%result@(1, 0)``,
``process 1 (replica 1, partition 0)``), a result element highlights the sources on the
shown process and its explanation names every source's process, an operand element says
which processes its value goes to, and export draws the collective picture for the shown
process and element.

Invalid parameters show the violated constraint in red above the grids and
keep the last good view; the fields of the parameters the message names get an
error style until the parameters build again. The custom fill's values are parsed
here (in the worker) against the operand types of the requested parameters and
reach ``make_example`` as ``inputs=``; bad values are an error like any other.
Nothing here raises into Textual.
"""

from __future__ import annotations

import inspect
import traceback
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import wraps
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import numpy as np
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.timer import Timer
from textual.widgets import Button, Header, Label, Static
from textual.worker import Worker, WorkerState

from hlolab.errors import HloLabError
from hlolab.ops.examples import OpExample, OpSchema, ParamError, build_parts, make_example, schema_for
from hlolab.trace.roles import ROLE_ORDER
from hlolab.tui.widgets.explain import ExplainPanel
from hlolab.tui.widgets.footer import FittingFooter
from hlolab.tui.widgets.grid import TensorGrid
from hlolab.tui.widgets.params import ParamPanel, Request, operand_types, parse_values

# the explorer refuses ops whose tensors hold more elements than this (typed shapes can be huge)
ELEMENT_LIMIT = 1 << 22
SPEEDS = (1.0, 0.5, 0.25, 0.12, 0.06)  # seconds per animation step
MAX_LISTED = 16
F = TypeVar("F", bound=Callable[..., Any])


# --- the model: built off the UI thread ------------------------------------------------

@dataclass
class Built:
    """One executed op instance and everything the screen draws from it."""

    request: Request
    example: OpExample
    session: Any  # hlolab.session.Session
    event: Any  # hlolab.interp.engine.OpRun
    view: Any  # hlolab.trace.view.OpCells
    generation: int = 0
    operands: list[tuple[str, Any]] | None = None  # (name, TensorType) of the @main arguments
    process: int = 0  # the process whose instance ``event`` is (a grid of several processes)
    runs: list[Any] | None = None  # the op's instance on every process, by process

    @property
    def grid(self) -> tuple[int, int]:
        return self.example.grid

    @property
    def n_processes(self) -> int:
        return self.grid[0] * self.grid[1]

    def at(self, process: int) -> Built:
        """The same run viewed on ``process`` (wraps around the grid)."""
        from hlolab.trace.view import OpCells

        if not self.runs:
            return self
        p = process % len(self.runs)
        event = self.session.event(self.runs[p].id)
        return replace(self, event=event, view=OpCells(event), process=p)


@dataclass
class Failed:
    request: Request
    message: str
    generation: int = 0


def _elements(types: list[Any]) -> int:
    total = 0
    for t in types:
        shape = getattr(t, "static_shape", None)
        if shape is not None:
            total += int(np.prod(shape(), dtype=np.int64))
    return total


def build(request: Request, process: int = 0) -> Built:
    """Make, run and view the op of ``request`` on ``process`` of its grid (raises
    HloLabError with the user message)."""
    from hlolab.session import Session
    from hlolab.trace.view import OpCells

    schema = schema_for(request.op)
    if schema is None:
        raise ParamError(f"no parameter schema for op '{request.op}'")
    _check_size(schema, request)
    operands = operand_types(schema, request.preset, dict(request.params))
    fill, given = request.fill, None
    if fill == "custom":  # the operands given values use them, the rest count up (iota)
        types = dict(operands)
        given = {}
        for name, text in request.custom:
            if name not in types:
                raise ParamError(f"custom values for %{name}: these parameters make no operand %{name} "
                                 "(operands: " + ", ".join("%" + n for n, _ in operands) + ")")
            given[name] = parse_values(text, types[name], name)
        fill = "iota"
    ex = make_example(request.op, request.preset, dict(request.params), fill, request.seed, inputs=given)
    session = Session(ex.text, filename=f"<{ex.op} example>")
    session.bind(ex.inputs)
    stop = session.run()
    if stop.error is not None:
        raise stop.error
    runs = [e for e in session.history if e.op.name == ex.op]
    if not runs:
        raise HloLabError(f"the example program ran no {ex.op}")
    if ex.n_processes > 1:  # one instance per process, in process order
        by = {e.frame.process: e for e in runs}
        per = [by[p] for p in range(ex.n_processes) if p in by]
        if len(per) != ex.n_processes:
            raise HloLabError(f"the example program ran {ex.op} on {len(per)} of {ex.n_processes} processes")
        event = session.event(per[process % len(per)].id)
        return Built(request, ex, session, event, OpCells(event), operands=operands,
                     process=process % len(per), runs=per)
    event = session.event(runs[-1].id)
    return Built(request, ex, session, event, OpCells(event), operands=operands)


def process_title(built: Built) -> str:
    """``process 1 (replica 1, partition 0)`` on a grid of several processes, else ''."""
    from hlolab.interp.processes import process_name

    return process_name(built.process, built.grid) if built.n_processes > 1 else ""


def _at_process(label: str, name: str, built: Built) -> str:
    """``%result : tensor<..>`` -> ``%result@(1, 0) : tensor<..>`` on a grid (the spec's naming)."""
    if built.n_processes <= 1 or not label.startswith(name):
        return label
    return f"{name}@{divmod(built.process, built.grid[1])}" + label[len(name):]


def collective_cells(built: Built, r: int, index: tuple[int, ...]) -> dict[str, list[tuple[np.ndarray, str]]]:
    """Result element ``index`` of a collective: its sources on the shown process, by
    operand key (the sources on other processes are in the explanation)."""
    prov = built.view.prov
    out: dict[str, list[tuple[np.ndarray, str]]] = {}
    for s in prov.sources(r, index):
        if s.operand is None or s.process != built.process:
            continue
        key = f"operand{prov.operand_numbers[s.operand]}"
        out.setdefault(key, []).append((np.asarray([s.index], dtype=np.int64).reshape(1, -1), s.role))
    return out


def is_grid_collective(built: Built) -> bool:
    return hasattr(built.view.prov, "operand_processes")


def _check_size(schema: OpSchema, request: Request) -> None:
    parts = build_parts(schema, schema.resolve(request.preset, dict(request.params)))
    n = _elements([o.type for o in parts.operands] + list(parts.results))
    if n > ELEMENT_LIMIT:
        raise ParamError(f"these parameters make tensors of {n:,} elements in all; the explorer "
                         f"shows at most {ELEMENT_LIMIT:,} (use `hlolab export` for larger ones)")


def _by_precedence(groups: list[tuple[np.ndarray, str]]) -> dict[tuple[int, ...], str]:
    """index rows + role -> {index: role}, the most specific role winning (ROLE_ORDER)."""
    order = {r: k for k, r in enumerate(ROLE_ORDER)}
    out: dict[tuple[int, ...], str] = {}
    for rows, role in sorted(groups, key=lambda g: -order.get(g[1], len(order))):
        out.update(dict.fromkeys(map(tuple, np.asarray(rows, dtype=np.int64).tolist()), role))
    return out


def split_key(key: str) -> tuple[str, int]:
    """"operand2" -> ("operand", 2)."""
    kind = key.rstrip("0123456789")
    return kind, int(key[len(kind):])


def guarded(fn: F) -> F:
    """Screen handlers (plain or async): an unexpected exception becomes an error
    notification (traceback to the log)."""

    def report(self: Screen, e: Exception) -> None:
        if isinstance(e, HloLabError):
            self.notify(e.message, severity="error", title="error")
        else:
            self.log.error(traceback.format_exc())
            self.notify(f"{type(e).__name__}: {e}", severity="error", title="unexpected error")

    if inspect.iscoroutinefunction(fn):
        @wraps(fn)
        async def run_async(self: Screen, *args: Any, **kw: Any) -> Any:
            try:
                return await fn(self, *args, **kw)
            except Exception as e:  # noqa: BLE001 - the app keeps running
                report(self, e)
            return None

        return run_async  # type: ignore[return-value]

    @wraps(fn)
    def wrapper(self: Screen, *args: Any, **kw: Any) -> Any:
        try:
            return fn(self, *args, **kw)
        except Exception as e:  # noqa: BLE001 - the app keeps running
            report(self, e)
        return None

    return wrapper  # type: ignore[return-value]


# --- export modal ----------------------------------------------------------------------

class ExportModal(ModalScreen[str | None]):
    """Ask the image format: png, svg or gif."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("p", "pick('png')", "PNG", id="export.png"),
        Binding("s", "pick('svg')", "SVG", id="export.svg"),
        Binding("g", "pick('gif')", "GIF", id="export.gif"),
        Binding("escape", "pick('')", "Cancel", id="export.cancel"),
    ]

    def compose(self) -> ComposeResult:
        with Vertical(id="export-box"):
            yield Label("Export the current view as")
            with Horizontal(id="export-buttons"):
                yield Button("PNG (p)", id="png", compact=True)
                yield Button("SVG (s)", id="svg", compact=True)
                yield Button("GIF (g)", id="gif", compact=True)
            yield Label("to ./hlolab-export/ · esc cancels", classes="dim")

    def action_pick(self, fmt: str) -> None:
        self.dismiss(fmt or None)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id)


# --- the screen ------------------------------------------------------------------------

class ExplorerScreen(Screen):
    """Parameters, grids, explain panel for one op."""

    HORIZONTAL_BREAKPOINTS: ClassVar[list[tuple[int, str]] | None] = [(0, "-narrow"), (110, "-wide")]
    EXPORT_DIR: ClassVar[Path] = Path("hlolab-export")

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("space", "play", "Play/pause", id="explorer.play"),
        Binding("n", "step(1)", "Step", id="explorer.next"),
        Binding("p", "step(-1)", "Back", show=False, id="explorer.prev"),
        Binding("plus,equals_sign", "speed(1)", "Faster", show=False, id="explorer.faster"),
        Binding("minus", "speed(-1)", "Slower", show=False, id="explorer.slower"),
        Binding("less_than_sign", "process(-1)", "Prev process", id="explorer.prev-process"),
        Binding("greater_than_sign", "process(1)", "Next process", id="explorer.next-process"),
        Binding("x", "export", "Export", id="explorer.export"),
        Binding("e", "focus_params", "Params", id="explorer.params"),
        Binding("g", "focus_grid", "Grids", show=False, id="explorer.grids"),
        Binding("escape", "home", "Back", id="explorer.home"),
    ]

    def __init__(self, op: str, preset: str = "default", *, params: dict[str, str] | None = None,
                 fill: str = "iota", seed: int = 0, name: str | None = None, id: str | None = None):
        schema = schema_for(op)
        if schema is None:
            raise ParamError(f"no parameter schema for op '{op}'")
        super().__init__(name=name, id=id)
        self.schema = schema
        self.op = schema.op
        self._preset, self._fill, self._seed = preset, fill, seed
        self._params = dict(params or {})
        self.built: Built | None = None
        self.error: str = ""
        self.busy = False
        self._generation = 0
        self._grids: dict[str, TensorGrid] = {}
        self._driver: str = "result0"
        self._timer: Timer | None = None
        self._speed = 1
        self._last_preset: str | None = None
        self._process = 0

    # --- layout ------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="explorer-body"):
            yield ParamPanel(self.schema, self._preset, params=self._params, fill=self._fill, seed=self._seed,
                             id="params")
            with Vertical(id="centre"):
                yield Static(id="status")
                yield Static(id="error")
                with Horizontal(id="grids"):  # results first: on top when stacked (80 columns)
                    # no Tab stop on the scrolling boxes: Tab goes from grid to grid
                    yield VerticalScroll(id="results", can_focus=False)
                    yield VerticalScroll(id="operands", can_focus=False)
                yield ExplainPanel(id="explain")
        yield FittingFooter()

    def on_mount(self) -> None:
        self.sub_title = self.op.removeprefix("stablehlo.")
        self.query_one("#error", Static).display = False
        self._status("computing…")
        request, problem = self.query_one(ParamPanel).request()
        if request is None:
            self._show_error(problem)
        else:
            self.rebuild(request)

    # --- building ------------------------------------------------------------------------
    def rebuild(self, request: Request) -> None:
        """Build ``request`` in a worker; the result (or error) is applied when it arrives."""
        self._generation += 1
        self.busy = True
        self._status("computing…")
        self._build_worker(request, self._generation)

    @work(thread=True, exclusive=True, group="build", exit_on_error=False)
    def _build_worker(self, request: Request, generation: int) -> Built | Failed:
        try:
            built = build(request, self._process)
            built.generation = generation
            return built
        except HloLabError as e:
            return Failed(request, e.message, generation)
        except MemoryError:
            return Failed(request, "out of memory: choose smaller shapes", generation)
        except Exception as e:  # noqa: BLE001 - shown, logged, never a crash
            self.log.error(traceback.format_exc())
            return Failed(request, f"unexpected {type(e).__name__}: {e}", generation)

    async def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "export":
            self._export_done(event)
            return
        if event.worker.group != "build" or event.state != WorkerState.SUCCESS:
            return
        outcome = event.worker.result
        if getattr(outcome, "generation", -1) != self._generation:
            return  # a newer request is on its way
        self.busy = False
        if isinstance(outcome, Failed):
            self._show_error(outcome.message)
            self._status("")
        elif isinstance(outcome, Built):
            self._process = outcome.process
            self.refresh_bindings()  # the process keys show on a grid only
            await self._apply(outcome)

    @guarded
    async def _apply(self, built: Built) -> None:
        self._show_error("")
        if built.operands is not None:
            self.query_one(ParamPanel).set_operands(built.operands)
        view = built.view
        keys = view.keys()
        first = self.built is None
        if (first or built.request.preset != self._last_preset) and built.example.process != built.process:
            built = built.at(built.example.process)  # the preset's interesting process
            self._process = built.process
            keys = built.view.keys()
        if list(self._grids) != keys:
            await self._mount_grids(keys)
        self._fill_grids(built)
        preset_changed = built.request.preset != self._last_preset
        self._last_preset = built.request.preset
        self.built = built
        if self._driver not in self._grids:
            self._driver = next((k for k in keys if k.startswith("result")), keys[0] if keys else "")
        results = [k for k in keys if k.startswith("result")]
        if (first or preset_changed) and results and built.example.index is not None:
            grid = self._grids[results[0]]
            if grid.value is not None and len(built.example.index) == grid.value.ndim:
                grid.move_cursor(built.example.index)
            self._driver = results[0]
        if first and results:
            self._grids[results[0]].focus()
        self._refresh_driver()
        self._status("")

    def _fill_grids(self, built: Built) -> None:
        view = built.view
        for key in view.keys():
            label, values, kinds = view.drawn(key)
            kind, n = split_key(key)
            name = view.result_name(n) if kind == "result" else view.operand_name(n)
            self._grids[key].set_value(values, _at_process(label, name, built), kinds=kinds,
                                       grid_axes=view.grid_axes(key), reals=view.reals(key))
        title = process_title(built)
        short = self.op.removeprefix("stablehlo.")
        self.sub_title = f"{short} · {title}" if title else short

    # --- the process grid ------------------------------------------------------------------
    @property
    def process(self) -> int:
        """The process whose instance the grids show (0 off a grid)."""
        return self._process

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "process":  # only on a grid of several processes (hidden otherwise)
            return self.built is not None and self.built.n_processes > 1
        return True

    @guarded
    def action_process(self, step: int) -> None:
        """Show the next / previous process of the grid (the same run, no rebuild)."""
        built = self.built
        if built is None or built.n_processes <= 1:
            return
        self.show_process(built.process + step)

    def show_process(self, process: int) -> None:
        built = self.built
        if built is None or not built.runs:
            return
        built = built.at(process)
        self._process = built.process
        self.built = built
        self._fill_grids(built)
        self._refresh_driver()
        self._status("")

    async def _mount_grids(self, keys: list[str]) -> None:
        """New grids for ``keys``; the old ones are gone before the new ones (same ids) mount."""
        ops, res = self.query_one("#operands"), self.query_one("#results")
        await ops.remove_children()
        await res.remove_children()
        self._grids = {key: TensorGrid(id=f"grid-{key}") for key in keys}
        await ops.mount_all([g for k, g in self._grids.items() if not k.startswith("result")])
        await res.mount_all([g for k, g in self._grids.items() if k.startswith("result")])

    # --- highlights ------------------------------------------------------------------------
    def grid(self, key: str) -> TensorGrid:
        """The grid of drawn tensor ``key`` ("operand0", "result0")."""
        return self._grids[key]

    @property
    def grid_keys(self) -> list[str]:
        return list(self._grids)

    @on(TensorGrid.CursorMoved)
    def _cursor_moved(self, event: TensorGrid.CursorMoved) -> None:
        event.stop()
        key = self._key_of(event.grid)
        if key is None:
            return
        if event.grid.has_focus or key == self._driver:
            self._driver = key
            self._refresh_driver()

    def on_descendant_focus(self, event: Any) -> None:
        widget = getattr(event, "widget", None)
        if isinstance(widget, TensorGrid):
            key = self._key_of(widget)
            if key is not None and key != self._driver:
                self._driver = key
                self._refresh_driver()

    def _key_of(self, grid: TensorGrid) -> str | None:
        for k, g in self._grids.items():
            if g is grid:
                return k
        return None

    @guarded
    def _refresh_driver(self) -> None:
        """Highlights and explanation for the cursor of the driving grid."""
        if self.built is None or self._driver not in self._grids:
            return
        grid = self._grids[self._driver]
        if grid.value is None or not grid.has_cells:
            for g in self._grids.values():
                g.clear_highlights()
            self.query_one(ExplainPanel).show("(no elements)")
            return
        index = grid.index
        kind, n = split_key(self._driver)
        if kind == "result":
            self._show_sources(n, index)
        else:
            self._show_targets(n, index)
        self._status("computing…" if self.busy else "")

    def _show_sources(self, r: int, index: tuple[int, ...]) -> None:
        built = self.built
        assert built is not None
        view = built.view
        groups: dict[str, list[tuple[np.ndarray, str]]] = {}
        if is_grid_collective(built):
            groups = collective_cells(built, r, index)
        else:
            for g in view.element_cells(r, index):
                groups.setdefault(g.key, []).append((g.indices, g.role))
        roles = {role for gs in groups.values() for _, role in gs} | {"result"}
        for key, grid in self._grids.items():
            if key == f"result{r}":
                grid.set_highlights({index: "result"})
            else:
                grid.set_highlights(_by_precedence(groups.get(key, [])))
        panel = self.query_one(ExplainPanel)
        explanation = self._explanation(r, index)
        labels = {role: view.role_label(role) for role in roles}  # the op's names for its roles
        if isinstance(explanation, Text):
            panel.show(explanation, roles, labels=labels)
        else:
            panel.show_explanation(explanation, roles, labels)

    def _explanation(self, r: int, index: tuple[int, ...]) -> Any:
        """The op's Explanation of result ``r`` at ``index``, or a Text saying why there is none."""
        from hlolab.session import explain_element

        built = self.built
        assert built is not None
        try:
            ee = explain_element(built.session, (built.event.id, r), index)
        except HloLabError as e:
            return Text(e.message, style="bold red")
        if ee.explanation is not None:
            return ee.explanation
        out = Text(f"{ee.label}[{', '.join(map(str, index))}] = {ee.element}\n", style="bold")
        out.append("this op defines no explanation; its sources:\n", style="dim")
        for s in ee.sources[:MAX_LISTED]:
            out.append(f"  {s.label or 'implicit'}[{', '.join(map(str, s.source.index))}] {s.source.role}\n")
        return out

    def _show_targets(self, i: int, position: tuple[int, ...]) -> None:
        """Operand ``i`` at ``position`` (frame coordinates when drawn in a frame)."""
        built = self.built
        assert built is not None
        view, panel = built.view, self.query_one(ExplainPanel)
        x = np.asarray(view.inputs[i])
        name = view.operand_name(i)
        index = position
        fm = view.frames.get(i)
        if fm is not None:
            kind = int(fm.kinds(x.shape)[position])
            if kind != 0:
                what = "padding" if kind == 1 else "a dilation hole"
                for grid in self._grids.values():
                    grid.clear_highlights()
                panel.show(Text(f"{name} frame position {list(position)} is {what}: not an element of "
                                f"{name}; a window over it reads the padding value (pad_value role).",
                                style="italic"))
                return
            index = fm.to_operand(position)
        prov = view.prov
        per_result: dict[str, list[tuple[np.ndarray, str]]] = {}
        collective = is_grid_collective(built)
        if prov is not None:
            mask = np.zeros(x.shape, dtype=bool)
            mask[index] = True
            j = i
            if collective:  # this process's operand i among every member's operands
                j = next(k for k, (p, n) in enumerate(zip(prov.operand_processes, prov.operand_numbers,
                                                          strict=True)) if p == built.process and n == i)
            for (r, role), m in prov.fwd(j, mask).items():
                per_result.setdefault(f"result{r}", []).append((np.argwhere(m), role))
        roles = set()
        for key, grid in self._grids.items():
            hl = _by_precedence(per_result.get(key, []))
            roles |= set(hl.values())
            grid.set_highlights(hl)
        if collective:  # this process's element; where else it goes follows
            name += f"@{divmod(built.process, built.grid[1])}"
        out = self._targets_text(name, index, x, per_result, prov is None,
                                 " of this process" if collective else "")
        if collective:
            out.append(self._destinations_text(i, index))
        panel.show(out, roles)

    def _destinations_text(self, i: int, index: tuple[int, ...]) -> Text:
        """Which processes operand ``i``'s element ``index`` on the shown process goes to: the
        op's result elements a forward trace reaches, by the process they are on."""
        from hlolab.interp.processes import process_name

        built = self.built
        assert built is not None
        s = built.session
        ops = {r.id for r in built.runs or [built.event]}
        d = s.find(built.event.op.operands[i].name, process=built.process)
        where = sorted({s.process_of(g.value) for g in s.targets(d, index).groups
                        if g.value[0] in ops})
        if not where:
            return Text("\ngoes to no process", style="dim")
        if len(where) > 1:
            return Text("\ngoes to several processes of the group "
                        f"{[divmod(p, built.grid[1]) for p in where]}", style="")
        return Text(f"\ngoes to {process_name(where[0], built.grid)}", style="")

    def _targets_text(self, name: str, index: tuple[int, ...], x: np.ndarray,
                      per_result: dict[str, list[tuple[np.ndarray, str]]], no_prov: bool,
                      here: str = "") -> Text:
        built = self.built
        assert built is not None
        where = ", ".join(map(str, index))
        out = Text()
        out.append(f"{name}[{where}] = {x[index] if x.ndim else x[()]}", style="bold")
        if no_prov:
            out.append("\nthis op defines no provenance", style="dim")
            return out
        total = sum(len(rows) for gs in per_result.values() for rows, _ in gs)
        if total == 0:
            out.append(f"\nflows into no result element{here}", style="dim")
            return out
        for key, gs in per_result.items():
            r = int(key.removeprefix("result"))
            rname = built.view.result_name(r)
            for rows, role in gs:
                out.append(f"\nflows into {len(rows)} element{'s' if len(rows) != 1 else ''} of {rname} "
                           f"as {role}:", style="")
                shown = [f"[{', '.join(map(str, row))}]" for row in rows[:MAX_LISTED].tolist()]
                out.append("\n  " + " ".join(shown), style="dim")
                if len(rows) > MAX_LISTED:
                    out.append(f" … {len(rows) - MAX_LISTED} more", style="dim")
        return out

    # --- parameters ------------------------------------------------------------------------
    @on(ParamPanel.Changed)
    def _params_changed(self, event: ParamPanel.Changed) -> None:
        event.stop()
        if event.request is None:
            self._show_error(event.problem)
            return
        self.rebuild(event.request)

    def _show_error(self, message: str) -> None:
        self.error = message
        err = self.query_one("#error", Static)
        err.update(Text(message, style="bold"))
        err.display = bool(message)
        self.query_one(ParamPanel).mark_errors(message)
        self._status("")

    def unsaved_text(self) -> str | None:
        """Parameter edits that do not build (asked about on quit: the view shows older ones)."""
        request, problem = self.query_one(ParamPanel).request()
        if request is None or self.error:
            first = (problem or self.error).splitlines()[0] if (problem or self.error) else ""
            return f"{self.op.removeprefix('stablehlo.')} explorer: parameter edits that do not build" + \
                (f" ({first[:60]})" if first else "")
        return None

    def _status(self, busy: str) -> None:
        """op · what is happening or where the cursor is · the animation state (last: it is
        what an 80-column status line elides)."""
        state = "▶ playing" if self._timer is not None else "paused"
        parts = [self.op.removeprefix("stablehlo.")]
        if self.built is not None and self.built.n_processes > 1:
            parts.append(process_title(self.built))
        if busy:
            parts.append(busy)
        if self.error and self.built is not None:
            parts.append("showing the last valid parameters")
        elif not busy and self.built is not None and self._driver in self._grids:
            g = self._grids[self._driver]
            kind, n = split_key(self._driver)
            view = self.built.view
            name = view.result_name(n) if kind == "result" else view.operand_name(n)
            if self.built.n_processes > 1:
                name += f"@{divmod(self.built.process, self.built.grid[1])}"
            parts.append(f"cursor {name}[{', '.join(map(str, g.index))}]")
        parts.append(f"{state} {SPEEDS[self._speed]:g} s/step")
        self.query_one("#status", Static).update(" · ".join(parts))

    # --- animation ------------------------------------------------------------------------
    def _animated(self) -> TensorGrid | None:
        key = self._driver if self._driver.startswith("result") else "result0"
        return self._grids.get(key)

    @guarded
    def action_step(self, direction: int) -> None:
        """Move the result cursor one element in row-major order (wraps)."""
        grid = self._animated()
        if grid is None or grid.value is None or not grid.has_cells:
            return
        shape = grid.value.shape
        size = int(np.prod(shape, dtype=np.int64))
        flat = int(np.ravel_multi_index(grid.index, shape)) if shape else 0
        flat = (flat + direction) % size
        key = self._key_of(grid)
        if key is not None:
            self._driver = key
        grid.move_cursor(tuple(int(i) for i in np.unravel_index(flat, shape)) if shape else ())
        self._status("")

    def action_play(self) -> None:
        if self._timer is not None:
            self._stop_timer()
        else:
            self._timer = self.set_interval(SPEEDS[self._speed], lambda: self.action_step(1))
        self._status("")

    def _stop_timer(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    def action_speed(self, step: int) -> None:
        self._speed = min(max(self._speed + step, 0), len(SPEEDS) - 1)
        if self._timer is not None:
            self._stop_timer()
            self.action_play()
        self._status("")

    @property
    def playing(self) -> bool:
        return self._timer is not None

    # --- other actions --------------------------------------------------------------------
    def action_focus_params(self) -> None:
        self.query_one("#preset").focus()

    def action_focus_grid(self) -> None:
        grid = self._grids.get(self._driver)
        if grid is not None:
            grid.focus()

    def action_home(self) -> None:
        """Escape: from a parameter field back to the grids; from the grids back home."""
        focused = self.focused
        if focused is not None and not isinstance(focused, TensorGrid) and self._grids:
            self.action_focus_grid()
            return
        self._stop_timer()
        self.app.pop_screen()

    def on_unmount(self) -> None:
        self._stop_timer()

    def action_export(self) -> None:
        if self.built is None:
            self.notify("nothing to export yet", severity="warning")
            return
        self.app.push_screen(ExportModal(), self._export_chosen)

    def _export_chosen(self, fmt: str | None) -> None:
        if fmt:
            self.export(fmt)

    def export(self, fmt: str) -> None:
        """Write the current op and result element as ``fmt`` (worker)."""
        built = self.built
        if built is None:
            return
        grid = self._animated()
        r = int(self._key_of(grid).removeprefix("result")) if grid is not None else 0  # type: ignore[union-attr]
        index = grid.index if grid is not None else ()
        label = self.op.removeprefix("stablehlo.")
        if built.n_processes > 1:  # the collective picture drawn for the shown process
            label += f"_process{built.process}"
        out = self.EXPORT_DIR / f"{label}.{fmt}"
        self.notify(f"exporting {out} …")
        self._export_worker(built.event, r, index, label, fmt, out)

    @work(thread=True, group="export", exit_on_error=False)
    def _export_worker(self, event: Any, r: int, index: tuple[int, ...], label: str, fmt: str,
                       out: Path) -> str:
        from hlolab.render.export import Target, write

        try:
            # a still shows the cursor's element; an animation walks the whole result
            path, _ = write(Target(event, [(r, index)], label, "", walk_all=True), fmt, out)
        except HloLabError as e:
            return "error: " + e.message
        except Exception as e:  # noqa: BLE001
            self.log.error(traceback.format_exc())
            return f"error: {type(e).__name__}: {e}"
        return str(path)

    def _export_done(self, event: Worker.StateChanged) -> None:
        if event.state != WorkerState.SUCCESS:
            if event.state == WorkerState.ERROR:
                self.notify(f"export failed: {event.worker.error}", severity="error")
            return
        result = str(event.worker.result)
        if result.startswith("error: "):
            self.notify(result.removeprefix("error: "), severity="error", title="export failed")
        else:
            self.notify(f"wrote {result}", title="export")
