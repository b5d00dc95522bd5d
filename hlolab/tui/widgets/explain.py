"""The explain panel and the role legend: rich text drawn from ``Explanation``
structures and role names only, so every op explains itself here with no TUI code.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.columns import Columns
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from hlolab.messages import Msg, text
from hlolab.trace.bits import HIDDEN, MARK_KINDS, BitPanel, BitRow, field_runs, format_bits
from hlolab.trace.explain import Explanation, Step, format_explanation, format_value, header_text, step_parts
from hlolab.trace.roles import (
    BIT_FIELD_COLORS,
    BIT_MARK_COLORS,
    ROLE_COLORS,
    ROLE_LABELS,
    ROLE_ORDER,
    dim_color,
    text_color,
)

MAX_CHILDREN = 8

# the bit views: one symbol per mark on the line under the bits (the legend names them), and
# the style a marked bit takes: changed underlined, the guard reversed, dropped bits struck
BIT_MARK_SYMBOLS = {"kept": "=", "guard": "g", "sticky": "s", "dropped": "x", "changed": "^",
                    "shifted_out": "<", "shifted_in": ">", "fill": "f", "set": "*", "leading_zero": "z",
                    "first_one": "!", "extended": "+"}
BIT_MARK_STYLES = {"changed": "bold underline", "guard": "bold reverse", "sticky": "strike",
                   "dropped": "strike", "shifted_out": "strike", "leading_zero": "strike",
                   "shifted_in": "underline", "fill": "underline", "extended": "underline",
                   "set": "bold", "first_one": "bold"}


def role_swatch(role: str) -> Text:
    """`` role `` on its role colour."""
    fill = ROLE_COLORS.get(role, ROLE_COLORS["copy"])
    return Text(f" {role} ", style=f"{text_color(fill)} on {fill}")


def legend_entries(roles: Iterable[str], labels: dict[str, str] | None = None) -> list[Text]:
    """One swatch and label per role, most specific first (``labels``: the op's own names,
    e.g. a dot product's lhs / rhs for ``window`` / ``kernel``)."""
    present = set(roles)
    order = [r for r in ROLE_ORDER if r in present] + sorted(present - set(ROLE_ORDER))
    out = []
    for role in order:
        entry = role_swatch(role)
        label = (labels or {}).get(role) or ROLE_LABELS.get(role)
        if label and label != role:
            entry.append(f" {label}", style="dim")
        out.append(entry)
    return out


def legend_renderable(entries: list[Text]) -> Columns:
    """The entries in flowing columns: a narrow panel wraps between entries, never inside one."""
    return Columns(entries, padding=(0, 2))


def _step_rows(table: Table, step: Step, depth: int, number: str) -> None:
    """One row per step: the number (right-aligned) and the text, so long formulas wrap
    under their own step instead of at the left edge. The text reads name = formula =
    substituted formula = value; each dimension role in its kind's colour."""
    line = Text()
    parts = step_parts(step)
    line.append(parts[0], style="bold")
    # name = formula, then "= numbers" and "= value" on lines of their own once there are numbers
    for k, part in enumerate(parts[1:], start=1):
        last = k == len(parts) - 1
        line.append("\n= " if k > 1 and len(parts) > 3 else " = ")
        line.append(part, style="bold" if last else "dim" if k == 1 else "")
    if step.before_clamp is not None:
        line.append("  " + text(Msg("explain.before_clamp", value=step.before_clamp)), style="italic")
    if step.dim_roles:
        line.append("\n" + text(Msg("explain.dims", roles="")), style="dim")
        for k, (d, role) in enumerate(sorted(step.dim_roles.items())):
            if k:
                line.append(", ", style="dim")
            line.append(f"{d}: {text(role.message())}", style=dim_color(role.kind))
    table.add_row(Text("  " * depth + number, style="dim"), line)
    shown = step.children[:MAX_CHILDREN]
    for child in shown:
        _step_rows(table, child, depth + 1, "·")
    hidden = len(step.children) - len(shown)
    if hidden > 0:
        table.add_row("", Text(text(Msg("explain.more", count=hidden)), style="dim"))


def explanation_renderable(e: Explanation) -> Group:
    """The explanation as numbered steps: name, the spec's formula (dim), the numbers
    substituted, the value (bold)."""
    head = Text()
    head_text = header_text(e)
    value = format_value(e.value)
    head.append(head_text.removesuffix(value), style="bold")
    head.append(value, style=f"bold {text_color(ROLE_COLORS['result'])} on {ROLE_COLORS['result']}")
    table = Table.grid(padding=(0, 1))
    table.add_column(justify="right", no_wrap=True)
    table.add_column(ratio=1)
    for n, step in enumerate(e.steps, start=1):
        _step_rows(table, step, 0, f"{n}.")
    for note in e.notes:
        table.add_row(Text(text(Msg("explain.note_label")), style="italic dim"),
                      Text(text(note), style="italic"))
    bits: list[RenderableType] = []
    for panel in e.bits:  # the element's bits, where the op is about bits
        bits += [Text(""), bit_panel_renderable(panel)]
    return Group(head, table, *bits)


Cell = tuple[str, str, str | None]  # (character, style, mark kind)


def bit_cells(row: BitRow) -> list[Cell]:
    """The bits of a row as characters, most significant first, each in its field's colour
    and its mark's style, with its mark; a space between fields, the implicit bit in
    parentheses before the mantissa."""
    v = row.view
    cells: list[Cell] = []
    for k, (f, _) in enumerate(field_runs(v)):
        if k:
            cells.append((" ", "", None))
        fill = BIT_FIELD_COLORS[f.kind]
        # a float's implicit bit, except in a bitcast (which regroups the stored bits only)
        if f.kind == "mantissa" and f.part is None and row.shows_implicit:
            mark = row.marks.get(HIDDEN)
            style = f"dim #000000 on {fill} {BIT_MARK_STYLES.get(mark, '')}".strip()
            cells += [("(", "dim", None), (str(v.hidden), style, mark), (")", "dim", None)]
        for p in range(f.hi, f.lo - 1, -1):
            mark = row.marks.get(p)
            # a two's complement's top bit (worth -2^(n-1)) in the sign's colour
            on = BIT_FIELD_COLORS["sign"] if f.kind == "twos_complement" and p == f.hi and p > 0 else fill
            cells.append((str(v.bit(p)), f"#000000 on {on} {BIT_MARK_STYLES.get(mark, '')}".strip(), mark))
    return cells


class BitLines:
    """A row's bits with the marker line under them, cut into chunks the width allows
    (so the markers stay under their bits however narrow the panel is)."""

    def __init__(self, row: BitRow, indent: int = 2):
        self.cells = bit_cells(row)
        self.marked = bool(row.marks)
        self.indent = indent

    def __rich_console__(self, console: Any, options: Any) -> Any:
        width = max(8, options.max_width - self.indent)
        for start in range(0, len(self.cells), width):
            chunk = self.cells[start:start + width]
            bits = Text(" " * self.indent)
            for ch, style, _ in chunk:
                bits.append(ch, style=style)
            yield bits
            if self.marked:
                marks = Text(" " * self.indent)
                for _, _, mark in chunk:
                    if mark is None:
                        marks.append(" ")
                    else:
                        marks.append(BIT_MARK_SYMBOLS[mark], style=f"bold {BIT_MARK_COLORS[mark]}")
                yield marks


def bit_panel_renderable(panel: BitPanel) -> Group:
    """A BitPanel as rich text: title, field colour key, each row (label, type, value,
    bits with their marks, decoding formula), the steps between rows, notes, marker key."""
    parts: list[RenderableType] = [Text(text(panel.title), style="bold")]
    kinds = list(dict.fromkeys(f.kind for r in panel.rows for f in r.view.fields))
    key = Text("  ")
    for k in kinds:
        key.append(f" {text(Msg(f'bits.field.{k}'))} ", style=f"#000000 on {BIT_FIELD_COLORS[k]}")
        key.append(" ")
    parts.append(key)
    for i, row in enumerate(panel.rows):
        for c in panel.changes_into(i):
            for m in c.messages:
                parts.append(Text("↓ " + text(m), style="italic"))
        head = Text()
        head.append(text(row.label), style="bold" if row.chosen else "")
        head.append(f"  {row.view.type_name}", style="dim")
        result = ROLE_COLORS["result"]
        value_style = f"bold {text_color(result)} on {result}" if row.chosen else "bold"
        head.append("  = ")
        head.append(row.view.value_text, style=value_style)
        parts += [head, BitLines(row), Text("  " + text(row.view.formula), style="dim")]
    for n in panel.notes:
        parts.append(Text(text(Msg("explain.note", note=n)), style="italic dim"))
    present = [k for k in MARK_KINDS if any(k in r.marks.values() for r in panel.rows)]
    if present:
        legend = Text()
        for k in present:
            legend.append(BIT_MARK_SYMBOLS[k], style=f"bold {BIT_MARK_COLORS[k]}")
            legend.append(f" {text(Msg(f'bits.mark.{k}'))}  ")
        parts.append(legend)
    return Group(*parts)


class ExplainPanel(VerticalScroll):
    """The derivation of the selected cell (scrolls when long)."""

    DEFAULT_CSS = """
    ExplainPanel { padding: 0 1; }
    ExplainPanel > #explain-legend { margin-bottom: 1; }
    """

    def compose(self) -> ComposeResult:
        yield Static(id="explain-legend")
        yield Static(id="explain-body")

    def show_explanation(self, e: Explanation, roles: Iterable[str] = (),
                         labels: dict[str, str] | None = None) -> None:
        plain = "\n".join([format_explanation(e, MAX_CHILDREN)] + [format_bits(p) for p in e.bits])
        self.show(explanation_renderable(e), roles, plain=plain, labels=labels)

    def show(self, body: RenderableType, roles: Iterable[str] = (), plain: str | None = None,
             labels: dict[str, str] | None = None) -> None:
        """Show ``body`` under a legend of ``roles`` (named by ``labels`` where given); ``plain``
        is its text form (default: body's)."""
        entries = legend_entries(roles, labels)
        leg = self.query_one("#explain-legend", Static)
        leg.update(legend_renderable(entries))
        leg.display = bool(entries)
        self.query_one("#explain-body", Static).update(body)
        self._plain = plain if plain is not None else body.plain if isinstance(body, Text) else str(body)
        self._legend = "  ".join(e.plain for e in entries)

    @property
    def text(self) -> str:
        """The plain text shown (tests, screen readers)."""
        return getattr(self, "_plain", "")

    @property
    def legend(self) -> str:
        return getattr(self, "_legend", "")
