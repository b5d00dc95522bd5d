"""The explorer's parameter panel, generated from an op's schema (no per-op code).

One field per ``Param``: a Select for enums, a Switch for bools, an Input for
everything else, checked on every keystroke by the parameter's own ``parse``
(a bad field turns red with the expected form in its tooltip). Above them the
preset selector, below them the input fill (iota / random / custom) and its seed.
The custom fill takes an operand's values as a dense literal body (``[[1, 2], [3, 4]]``,
``dense<…>``, a scalar that broadcasts), parsed by ``hlolab.ir.dense`` against the
operand's type; the operands it does not name are iota-filled.

A verification error that names parameters (``index_vector_dim = 7 …``) gives those
fields the ``-error`` style (``mark_errors``) until the parameters build again.

The panel posts ``ParamPanel.Changed`` with the texts of every field; typing
is debounced (``DEBOUNCE`` seconds after the last key), Enter, a Select or a
Switch post at once. Whether the parameters make a valid op is decided by the
op's verification (the explorer shows that message).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.geometry import Size
from textual.message import Message
from textual.timer import Timer
from textual.validation import ValidationResult, Validator
from textual.widgets import Input, Label, Select, Switch

from hlolab.errors import HloLabError
from hlolab.interp.inputs import LITERAL_HINT
from hlolab.ops.examples import OpSchema, Param, ParamError
from hlolab.tui.widgets.fields import Field
from hlolab.types import TensorType

FILLS = ("iota", "random", "custom")


# --- custom input values -------------------------------------------------------------------

def parse_values(text: str, t: TensorType, operand: str = "") -> np.ndarray:
    """Values for an operand of type ``t`` from a literal (``hlolab.interp.inputs.parse_literal``:
    a dense literal, a bare body or one number); ParamError says why not."""
    from hlolab.interp.inputs import parse_literal

    who = f"custom values for %{operand}" if operand else "custom values"
    try:
        return parse_literal(text, t, who)
    except HloLabError as e:
        raise ParamError(e.message) from None


def operand_types(schema: OpSchema, preset: str, params: dict[str, str]) -> list[tuple[str, TensorType]]:
    """(name, type) of the ``@main`` arguments the op's example takes, for these parameters."""
    parts = schema.build(schema.resolve(preset, dict(params)))
    return [(o.name, o.type) for o in [*parts.operands, *getattr(parts, "captures", [])]]


def named_params(message: str, names: Sequence[str]) -> set[str]:
    """The parameters an error message is about: those it gives a value (``name = …``),
    else those it mentions as words. A message naming every parameter names none."""
    def found(pattern: str) -> set[str]:
        return {n for n in names if re.search(pattern.format(re.escape(n)), message)}

    hits = found(r"(?<![\w%]){}\s*=(?!=)") or found(r"(?<![\w%]){}(?!\w)")
    return set() if len(names) > 1 and len(hits) == len(names) else hits


def wrap_name(name: str, width: int) -> str:
    """``name`` on lines of at most ``width`` columns, broken after an underscore
    ("start_indices_batching_" / "dims"), never inside a word unless it alone is wider."""
    if width <= 0 or len(name) <= width:
        return name
    lines = [""]
    for part in re.findall(r"[^_]*_|[^_]+", name):
        while len(part) > width:  # a word wider than the field: cut it (nothing else fits)
            if lines[-1]:
                lines.append("")
            lines[-1], part = part[:width], part[width:]
            lines.append("")
        if len(lines[-1]) + len(part) > width:
            lines.append("")
        lines[-1] += part
    return "\n".join(line for line in lines if line)


class NameLabel(Label):
    """A parameter's name, wrapped at underscores to the panel's width (80 columns)."""

    def __init__(self, name: str, **kw: Any):
        super().__init__(name, markup=False, **kw)
        self.param_name = name

    def render(self) -> Text:
        return Text(wrap_name(self.param_name, self.content_size.width))

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return wrap_name(self.param_name, width).count("\n") + 1


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
    custom: tuple[tuple[str, str], ...] = ()  # (operand name, values text) for the custom fill


class ParamPanel(VerticalScroll, can_focus=False):
    """Fields for every parameter of ``schema``, the preset, the fill and the seed.
    The panel itself is no Tab stop (a focused field scrolls into view)."""

    DEBOUNCE: ClassVar[float] = 0.35

    DEFAULT_CSS = """
    ParamPanel { padding: 0 1; }
    ParamPanel Label { margin-top: 1; color: $text-muted; width: 1fr; }
    ParamPanel Label.first { margin-top: 0; }
    ParamPanel Input.-invalid { color: $error; }
    ParamPanel Input:focus, ParamPanel Select:focus > SelectCurrent, ParamPanel Switch:focus {
        background: $accent 30%;
    }
    ParamPanel Input.-error, ParamPanel Switch.-error { background: $error 35%; }
    ParamPanel Select.-error > SelectCurrent { background: $error 35%; }
    ParamPanel Switch { border: none; padding: 0; height: 1; }
    ParamPanel #fill-row { height: auto; }
    ParamPanel #custom-box { height: auto; display: none; }
    ParamPanel #custom-box.-shown { display: block; }
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
        self.custom_texts: dict[str, str] = {}  # operand name -> its custom values text
        self.operands: list[tuple[str, TensorType]] = []
        self.marked: set[str] = set()  # parameters the last error names

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
            yield NameLabel(p.name)
            yield self._field(p, values[p.name])
        yield Label("fill")
        yield Select([(f, f) for f in FILLS], value=self._fill, allow_blank=False, id="fill", compact=True,
                     tooltip="input values: iota counts 0, 1, 2, ... across operands; random is seeded; "
                             "custom: type an operand's values")
        try:
            self.operands = operand_types(self.schema, self.preset, self.initial)
        except Exception:  # noqa: BLE001 - bad parameters: the operand list comes with a good build
            self.operands = []
        names = [n for n, _ in self.operands]
        with Vertical(id="custom-box", classes="-shown" if self._fill == "custom" else ""):
            yield Label("custom values for")
            first: dict[str, Any] = {"value": names[0]} if names else {}
            yield Select([(f"%{n}", n) for n in names], allow_blank=True,  # an op may take none
                         id="custom-operand", compact=True, tooltip="the operand the values below are for",
                         **first)
            yield Field("", placeholder=LITERAL_HINT, id="custom-values", compact=True,
                        tooltip=self._custom_tip(names[0] if names else None))
        yield Label("seed")
        yield Field(str(self._seed), id="seed", compact=True, validators=[SeedValidator()],
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
        return Field(p.format(value), placeholder=hint, id=wid, compact=True, tooltip=tip,
                     validators=[ParamValidator(p)])

    def _custom_tip(self, name: str | None) -> str:
        t = dict(self.operands).get(name) if name else None
        return (f"values of %{name} : {t}: a dense literal body like {LITERAL_HINT.split(' · ')[0]}, "
                "dense<…>, or one number for every element; Enter applies" if t is not None else
                "the op's operands appear once its parameters build")

    def set_operands(self, operands: list[tuple[str, TensorType]]) -> None:
        """The operands of the last good build (their names feed the custom operand choice)."""
        if [n for n, _ in operands] == [n for n, _ in self.operands]:
            self.operands = list(operands)
            self._sync_custom_tip()
            return
        self.operands = list(operands)
        sel = self.query_one("#custom-operand", Select)
        keep = sel.value
        names = [n for n, _ in operands]
        with self.prevent(Select.Changed):
            sel.set_options([(f"%{n}", n) for n in names])
            if names:
                sel.value = keep if keep in names else names[0]
        self._show_custom_text()

    @property
    def custom_operand(self) -> str | None:
        value = self.query_one("#custom-operand", Select).value
        return value if isinstance(value, str) else None

    def set_custom(self, operand: str, text: str) -> None:
        """Choose the custom fill and give ``operand`` the values ``text`` (as typing would)."""
        self.custom_texts[operand] = text
        with self.prevent(Select.Changed, Input.Changed):
            self.query_one("#fill", Select).value = "custom"
            self.query_one("#custom-operand", Select).value = operand
        self._show_custom_text()
        self.query_one("#custom-box").set_class(True, "-shown")
        self.post_changed()

    def _show_custom_text(self) -> None:
        name = self.custom_operand
        with self.prevent(Input.Changed):
            self.query_one("#custom-values", Input).value = self.custom_texts.get(name, "") if name else ""
        self._sync_custom_tip()

    def _sync_custom_tip(self) -> None:
        self.query_one("#custom-values", Input).tooltip = self._custom_tip(self.custom_operand)

    def mark_errors(self, message: str) -> set[str]:
        """Error style on the fields ``message`` names (none when it is ""); returns their names."""
        custom = message.startswith("custom values")
        params = [p.name for p in self.schema.params]
        names = set() if custom or not message else named_params(message, params)
        for p in self.schema.params:
            self.field(p.name).set_class(p.name in names, "-error")
        self.query_one("#custom-values", Input).set_class(custom, "-error")
        self.marked = names | ({"custom-values"} if custom else set())
        return names

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
        custom = tuple((k, v) for k, v in self.custom_texts.items() if v.strip()) if fill == "custom" else ()
        return Request(self.schema.op, preset, texts, fill, seed, custom), ""

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
        if event.input.id == "custom-values":
            name = self.custom_operand
            if name is None:
                return
            self.custom_texts[name] = event.value
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
        if event.select.id == "custom-operand":  # another operand's text: nothing to rebuild
            self._show_custom_text()
            return
        if event.select.id == "fill":
            self.query_one("#custom-box").set_class(event.value == "custom", "-shown")
        if event.select.id == "preset" and event.value != self.preset:
            self.set_preset(str(event.value))
        self.post_changed()

    @on(Switch.Changed)
    def _switched(self, event: Switch.Changed) -> None:
        event.stop()
        self.post_changed()
