"""The explain panel and the role legend: rich text drawn from ``Explanation``
structures and role names only, so every op explains itself here with no TUI code.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.columns import Columns
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from hlolab.messages import Msg, text
from hlolab.trace.explain import Explanation, Step, format_explanation, format_value, header_text, step_parts
from hlolab.trace.roles import ROLE_COLORS, ROLE_LABELS, ROLE_ORDER, dim_color, text_color

MAX_CHILDREN = 8


def role_swatch(role: str) -> Text:
    """`` role `` on its role colour."""
    fill = ROLE_COLORS.get(role, ROLE_COLORS["copy"])
    return Text(f" {role} ", style=f"{text_color(fill)} on {fill}")


def legend_entries(roles: Iterable[str]) -> list[Text]:
    """One swatch and label per role, most specific first."""
    present = set(roles)
    order = [r for r in ROLE_ORDER if r in present] + sorted(present - set(ROLE_ORDER))
    out = []
    for role in order:
        entry = role_swatch(role)
        label = ROLE_LABELS.get(role)
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
    return Group(head, table)


class ExplainPanel(VerticalScroll):
    """The derivation of the selected cell (scrolls when long)."""

    DEFAULT_CSS = """
    ExplainPanel { padding: 0 1; }
    ExplainPanel > #explain-legend { margin-bottom: 1; }
    """

    def compose(self) -> ComposeResult:
        yield Static(id="explain-legend")
        yield Static(id="explain-body")

    def show_explanation(self, e: Explanation, roles: Iterable[str] = ()) -> None:
        self.show(explanation_renderable(e), roles, plain=format_explanation(e, MAX_CHILDREN))

    def show(self, body: RenderableType, roles: Iterable[str] = (), plain: str | None = None) -> None:
        """Show ``body`` under a legend of ``roles``; ``plain`` is its text form (default: body's)."""
        entries = legend_entries(roles)
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
