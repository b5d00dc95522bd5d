"""The explorer's parameter panel, generated from an op's schema (no per-op code).

One field per ``Param``: a Select for enums, a Switch for bools, an Input for
everything else, checked on every keystroke by the parameter's own ``parse``
(a bad field turns red with the expected form in its tooltip). Above them the
preset selector, below them the input fill (iota / random) and its seed.

The panel posts ``ParamPanel.Changed`` with the texts of every field; typing
is debounced (``DEBOUNCE`` seconds after the last key), Enter, a Select or a
Switch post at once. Whether the parameters make a valid op is decided by the
op's verification (the explorer shows that message).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.message import Message
from textual.timer import Timer
from textual.validation import ValidationResult, Validator
from textual.widgets import Input, Label, Select, Switch

from hlolab.errors import HloLabError
from hlolab.ops.examples import OpSchema, Param

FILLS = ("iota", "random")


class ParamValidator(Validator):
    """A field's text is valid when its Param parses it."""

    def __init__(self, param: Param):
        super().__init__()
        self.param = param

    def validate(self, value: str) -> ValidationResult:
        try:
            self.param.parse(value)
        except HloLabError as e:
            return self.failure(e.message)
        return self.success()


class SeedValidator(Validator):
    def validate(self, value: str) -> ValidationResult:
        try:
            int(value)
        except ValueError:
            return self.failure("the seed is an integer")
        return self.success()


@dataclass(frozen=True)
class Request:
    """What the explorer builds: op, preset, parameter texts, fill and seed."""

    op: str
    preset: str
    params: dict[str, str]
    fill: str
    seed: int


class ParamPanel(VerticalScroll):
    """Fields for every parameter of ``schema``, the preset, the fill and the seed."""

    DEBOUNCE: ClassVar[float] = 0.35

    DEFAULT_CSS = """
    ParamPanel { padding: 0 1; }
    ParamPanel Label { margin-top: 1; color: $text-muted; width: 1fr; }
    ParamPanel Label.first { margin-top: 0; }
    ParamPanel Input.-invalid { color: $error; }
    ParamPanel Switch { border: none; padding: 0; height: 1; }
    ParamPanel #fill-row { height: auto; }
    """

    class Changed(Message):
        """The fields changed; ``request`` is None when a field does not parse."""

        def __init__(self, panel: ParamPanel, request: Request | None, problem: str = ""):
            super().__init__()
            self.panel = panel
            self.request = request
            self.problem = problem

        @property
        def control(self) -> ParamPanel:
            return self.panel

    def __init__(self, schema: OpSchema, preset: str = "default", *, params: dict[str, str] | None = None,
                 fill: str = "iota", seed: int = 0, id: str | None = None, classes: str | None = None):
        super().__init__(id=id, classes=classes)
        self.schema = schema
        self.initial = dict(params or {})
        self.preset = preset if preset in schema.presets else "default"
        self._fill = fill
        self._seed = seed
        self._timer: Timer | None = None

    # --- fields ---------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        try:
            values = self.schema.resolve(self.preset, self.initial)
        except HloLabError:  # shown when the first build reports it
            values = self.schema.resolve(self.preset)
        yield Label("preset", classes="first")
        yield Select([(p, p) for p in self.schema.presets], value=self.preset, allow_blank=False,
                     id="preset", compact=True, tooltip="a named set of parameter values")
        for p in self.schema.params:
            yield Label(p.name)
            yield self._field(p, values[p.name])
        yield Label("fill")
        yield Select([(f, f) for f in FILLS], value=self._fill, allow_blank=False, id="fill", compact=True,
                     tooltip="input values: iota counts 0, 1, 2, ... across operands; random is seeded")
        yield Label("seed")
        yield Input(str(self._seed), id="seed", compact=True, validators=[SeedValidator()],
                    tooltip="seed of the random fill")

    def _field(self, p: Param, value: Any) -> Input | Select | Switch:
        tip = f"{p.doc}\n({p.expected()})"
        wid = f"param-{p.name}"
        if p.kind == "enum":
            return Select([(c, c) for c in p.choices], value=p.format(value), allow_blank=False, id=wid,
                          compact=True, tooltip=tip)
        if p.kind == "bool":
            return Switch(bool(value), id=wid, tooltip=tip, animate=False)
        hint = {"ints": "none", "pairs": "none", "shape": "scalar", "number": "identity"}.get(p.kind, "")
        return Input(p.format(value), placeholder=hint, id=wid, compact=True, tooltip=tip,
                     validators=[ParamValidator(p)])

    def field(self, name: str) -> Input | Select | Switch:
        """The widget of parameter ``name``."""
        return self.query_one(f"#param-{name}")  # type: ignore[return-value]

    def texts(self) -> dict[str, str]:
        """Every parameter as the text its Param parses."""
        out: dict[str, str] = {}
        for p in self.schema.params:
            w = self.field(p.name)
            if isinstance(w, Switch):
                out[p.name] = "true" if w.value else "false"
            elif isinstance(w, Select):
                out[p.name] = str(w.value)
            else:
                out[p.name] = w.value
        return out

    def request(self) -> tuple[Request | None, str]:
        """The current request, or (None, why) when a field does not parse."""
        texts = self.texts()
        for p in self.schema.params:
            try:
                p.parse(texts[p.name])
            except HloLabError as e:
                return None, e.message
        seed_text = self.query_one("#seed", Input).value
        try:
            seed = int(seed_text)
        except ValueError:
            return None, f"seed: cannot read {seed_text!r}: expected an integer"
        fill = str(self.query_one("#fill", Select).value)
        preset = str(self.query_one("#preset", Select).value)
        return Request(self.schema.op, preset, texts, fill, seed), ""

    def set_preset(self, preset: str) -> None:
        """Show the values of ``preset`` in every field (no Changed for each)."""
        values = self.schema.resolve(preset)
        self.preset = preset
        with self.prevent(Input.Changed, Select.Changed, Switch.Changed):
            for p in self.schema.params:
                w = self.field(p.name)
                if isinstance(w, Switch):
                    w.value = bool(values[p.name])
                elif isinstance(w, Select):
                    w.value = p.format(values[p.name])
                else:
                    w.value = p.format(values[p.name])
            sel = self.query_one("#preset", Select)
            if sel.value != preset:
                sel.value = preset

    def set_field(self, name: str, text: str) -> None:
        """Set one field's text (as typing would, without the debounce)."""
        w = self.field(name)
        p = self.schema.param(name)
        with self.prevent(Input.Changed, Select.Changed, Switch.Changed):
            if isinstance(w, Switch):
                w.value = bool(p.parse(text))
            else:
                w.value = text
        if isinstance(w, Input):
            w.validate(w.value)
        self.post_changed()

    # --- events ---------------------------------------------------------------------
    def post_changed(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        request, problem = self.request()
        self.post_message(self.Changed(self, request, problem))

    @on(Input.Changed)
    def _typed(self, event: Input.Changed) -> None:
        event.stop()
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(self.DEBOUNCE, self.post_changed)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.post_changed()

    @on(Select.Changed)
    def _selected(self, event: Select.Changed) -> None:
        event.stop()
        if event.select.id == "preset" and event.value != self.preset:
            self.set_preset(str(event.value))
        self.post_changed()

    @on(Switch.Changed)
    def _switched(self, event: Switch.Changed) -> None:
        event.stop()
        self.post_changed()
