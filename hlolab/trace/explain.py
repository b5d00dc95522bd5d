"""Explanations: the spec's formula for one result element, evaluated with numbers.

An op definition passes ``explain=`` to ``@op``; the function has the
signature ``explain(ctx, inputs, outputs, result, index) -> Explanation``.
Renderers, the TUI and the CLI only draw this structure (``format_explanation``
is the plain-text drawing).
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hlolab.messages import Msg, arg_text, language, text
from hlolab.trace.provenance import check_index, value_shape

Text = Msg | str  # a message, or a spec symbol (``full_start_index``, ``%arg0``) that is never translated


class DimRole:
    """What one dimension of an index is: a kind from ``hlolab.trace.roles.DIM_KINDS``
    (``batch``, ``offset``, ``spatial``, ``padding``, …) and the arguments of its label
    (``DimRole("offset", k=0)`` reads "offset (offset_dims[0])" in English). Front ends
    colour by ``kind`` and write ``message()``; they never parse the label."""

    __slots__ = ("kind", "args")

    def __init__(self, kind: str, /, **args: Any) -> None:
        self.kind = kind
        self.args = tuple(sorted(args.items()))

    def message(self) -> Msg:
        return Msg(f"dims.{self.kind}", **dict(self.args))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DimRole) and (self.kind, self.args) == (other.kind, other.args)

    def __hash__(self) -> int:
        return hash((self.kind, self.args))

    def __repr__(self) -> str:
        inner = "".join(f", {k}={v!r}" for k, v in self.args)
        return f"DimRole({self.kind!r}{inner})"


@dataclass
class Step:
    """One named step of the computation of an element.

    ``name`` is the spec's variable (``operand_index``, ``full_start_index``) as a
    plain symbol, or a message where the step has no spec name; ``formula`` the
    spec's expression (a message), ``substituted`` the same expression with this
    element's numbers in it, ``value`` its value. ``dim_roles`` maps each
    dimension of ``value`` to a ``DimRole``; ``before_clamp`` is the value before
    a clamp moved it, ``children`` are sub-steps (e.g. one per scatter update).
    """

    name: Text
    formula: Msg | None
    value: Any
    dim_roles: dict[int, DimRole] | None = None
    before_clamp: Any = None
    children: list[Step] = field(default_factory=list)
    substituted: Msg | None = None


@dataclass
class Explanation:
    """Why element ``index`` of result ``result`` of op ``op`` has the value ``value``."""

    op: str
    index: tuple
    steps: list[Step]
    value: Any
    notes: list[Msg] = field(default_factory=list)
    result: int = 0
    index_roles: dict[int, DimRole] | None = None  # what each dim of ``index`` is (batch, offset, …)
    bits: list[Any] = field(default_factory=list)  # hlolab.trace.bits.BitPanel, where the op is about bits

    def result_roles(self) -> dict[int, DimRole] | None:
        """What each dimension of the result index is: ``index_roles``, else the roles of
        a step named ``result_index`` that cover every dimension; None when not declared."""
        if self.index_roles is not None:
            return self.index_roles
        for s in self.steps:
            if s.name == "result_index" and s.dim_roles and set(s.dim_roles) == set(range(len(self.index))):
                return s.dim_roles
        return None


# --- text rendering ------------------------------------------------------------------

def format_value(v: Any, max_elements: int = 16) -> str:
    """A short text form of a value: scalars, index tuples, small arrays, tuples, sets
    (``{0, 1, 2}``), messages and roles (in the current language)."""
    if isinstance(v, np.ndarray):
        if v.ndim == 0:
            return str(v[()])
        if v.size <= max_elements:  # one line, whatever the rank: explanations are line-based
            return " ".join(np.array2string(v, separator=", ", max_line_width=10**6).split())
        return f"<{'x'.join(str(d) for d in v.shape)} {v.dtype} tensor>"
    if isinstance(v, tuple):
        inner = ", ".join(format_value(x, max_elements) for x in v)
        return f"({inner},)" if len(v) == 1 else f"({inner})"
    if isinstance(v, list):
        return "[" + ", ".join(format_value(x, max_elements) for x in v) + "]"
    if isinstance(v, (set, frozenset, range)):
        return "{" + ", ".join(format_value(x, max_elements) for x in sorted(v)) + "}"
    if isinstance(v, Msg) or hasattr(v, "message"):
        return arg_text(v)
    return str(v)


def step_parts(step: Step, lang: str | None = None) -> list[str]:
    """The step's name, formula, substituted formula and value, as text (empty parts
    and a substituted formula equal to the formula left out)."""
    formula = text(step.formula, lang)
    substituted = text(step.substituted, lang)
    parts = [text(step.name, lang), formula]
    if substituted and substituted != formula:
        parts.append(substituted)
    with _lang(lang):
        parts.append(format_value(step.value))
    return [p for p in parts if p]


def roles_text(roles: dict[int, DimRole], lang: str | None = None) -> list[str]:
    """``d: label`` for each dimension."""
    return [f"{d}: {text(r.message(), lang)}" for d, r in sorted(roles.items())]


def _lang(lang: str | None) -> AbstractContextManager[None]:
    """Render in ``lang`` inside the block (the current language when None)."""
    return language(lang) if lang else nullcontext()


LINE = 100  # a step longer than this puts its substituted formula and value on lines of their own


def _step_lines(step: Step, depth: int, max_children: int, number: str, lang: str | None) -> list[str]:
    pad = "  " * depth
    parts = step_parts(step, lang)
    clamp = ""
    if step.before_clamp is not None:
        with _lang(lang):
            clamp = "  " + text(Msg("explain.before_clamp", value=step.before_clamp), lang)
    one = f"{pad}{number}" + " = ".join(parts) + clamp
    if len(one) <= LINE or len(parts) <= 2:
        lines = [one]
    else:
        lines = [f"{pad}{number}" + " = ".join(parts[:2])]
        lines += [f"{pad}     = {p}" for p in parts[2:-1]]
        lines.append(f"{pad}     = {parts[-1]}{clamp}")
    if step.dim_roles:
        roles = ", ".join(roles_text(step.dim_roles, lang))
        lines.append(f"{pad}    " + text(Msg("explain.dims", roles=roles), lang))
    shown = step.children[:max_children]
    for child in shown:
        lines.extend(_step_lines(child, depth + 1, max_children, "", lang))
    hidden = len(step.children) - len(shown)
    if hidden > 0:
        lines.append(f"{pad}  " + text(Msg("explain.more", count=hidden), lang))
    return lines


def header_text(e: Explanation, lang: str | None = None) -> str:
    """``gather result[0, 1] = 5`` (``result #1[…]`` for a second result)."""
    where = ", ".join(str(i) for i in e.index)
    with _lang(lang):
        value = format_value(e.value)
    key = "explain.header_result" if e.result else "explain.header"
    return text(Msg(key, op=e.op.removeprefix("stablehlo."), result=e.result, index=where,
                    value=value), lang)


def format_explanation(e: Explanation, max_children: int = 8, lang: str | None = None) -> str:
    """The explanation as an indented text tree of numbered steps in ``lang``; child
    lists longer than ``max_children`` end with "… N more"."""
    lines = [header_text(e, lang)]
    for n, step in enumerate(e.steps, start=1):  # numbered: the derivation reads in order
        lines.extend(_step_lines(step, 1, max_children, f"{n}. ", lang))
    for note in e.notes:
        lines.append("  " + text(Msg("explain.note", note=note), lang))
    return "\n".join(lines)


# --- the generic element-wise explanation ---------------------------------------------

def element_at(value: np.ndarray, index: tuple[int, ...]) -> Any:
    """The element of ``value`` a same-index element-wise op reads at ``index``
    (index () for a rank-0 operand)."""
    return value[()] if value.ndim == 0 else value[index]


def elementwise_explain(ctx: Any, inputs: list[Any], outputs: list[Any], result: int,
                        index: tuple) -> Explanation:
    """Element-wise ops: the input values at ``index`` and the result."""
    idx = check_index(value_shape(outputs[result]), index, f"result #{result} index")
    where = ", ".join(str(i) for i in idx)
    names = [v.name for v in ctx.op.operands]
    steps = []
    symbols, values = [], []
    for i, v in enumerate(inputs):
        if not isinstance(v, np.ndarray):
            continue
        at = idx if v.ndim else ()
        name = names[i] if i < len(names) else f"#{i}"
        x = element_at(v, idx)
        steps.append(Step(name, Msg("explain.element", name=name, index=", ".join(str(j) for j in at)), x))
        symbols.append(name)
        values.append(x)
    value = outputs[result][idx]
    label = ctx.op.name.removeprefix("stablehlo.")
    steps.append(Step(f"result[{where}]", Msg("explain.apply", op=label, args=", ".join(symbols)), value,
                      substituted=Msg("explain.apply", op=label,
                                      args=", ".join(format_value(x) for x in values))))
    return Explanation(ctx.op.name, idx, steps, value, [], result)
