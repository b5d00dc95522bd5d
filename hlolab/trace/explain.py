"""Explanations: the spec's formula for one result element, evaluated with numbers.

An op definition passes ``explain=`` to ``@op``; the function has the
signature ``explain(ctx, inputs, outputs, result, index) -> Explanation``.
Renderers, the TUI and the CLI only draw this structure (``format_explanation``
is the plain-text drawing).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hlolab.trace.provenance import check_index, value_shape


@dataclass
class Step:
    """One named step of the computation of an element.

    ``name`` is the spec's variable (``operand_index``, ``full_start_index``),
    ``formula`` the spec's expression, ``value`` its value for this element.
    ``dim_roles`` maps dimensions to what they are (batch, offset, padding...),
    ``before_clamp`` is the value before a clamp moved it, ``children`` are
    sub-steps (e.g. one per scatter update).
    """

    name: str
    formula: str
    value: Any
    dim_roles: dict | None = None
    before_clamp: Any = None
    children: list[Step] = field(default_factory=list)


@dataclass
class Explanation:
    """Why element ``index`` of result ``result`` of op ``op`` has the value ``value``."""

    op: str
    index: tuple
    steps: list[Step]
    value: Any
    notes: list[str] = field(default_factory=list)
    result: int = 0


# --- text rendering ------------------------------------------------------------------

def format_value(v: Any, max_elements: int = 16) -> str:
    """A short text form of a value: scalars, index tuples, small arrays, tuples."""
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
    if isinstance(v, np.generic):
        return str(v)
    return str(v)


def _step_lines(step: Step, depth: int, max_children: int, number: str = "") -> list[str]:
    pad = "  " * depth
    line = f"{pad}{number}{step.name}"
    if step.formula:
        line += f" = {step.formula}"
    line += f" = {format_value(step.value)}"
    if step.before_clamp is not None:
        line += f"  (before clamp: {format_value(step.before_clamp)})"
    lines = [line]
    if step.dim_roles:
        roles = ", ".join(f"{d}: {r}" for d, r in step.dim_roles.items())
        lines.append(f"{pad}    dims: {roles}")
    shown = step.children[:max_children]
    for child in shown:
        lines.extend(_step_lines(child, depth + 1, max_children))
    hidden = len(step.children) - len(shown)
    if hidden > 0:
        lines.append(f"{pad}  … {hidden} more")
    return lines


def format_explanation(e: Explanation, max_children: int = 8) -> str:
    """The explanation as an indented text tree of numbered steps; child lists
    longer than ``max_children`` end with "… N more"."""
    where = ", ".join(str(i) for i in e.index)
    result = f" #{e.result}" if e.result else ""
    lines = [f"{e.op} result{result}[{where}] = {format_value(e.value)}"]
    for n, step in enumerate(e.steps, start=1):  # numbered: the derivation reads in order
        lines.extend(_step_lines(step, 1, max_children, f"{n}. "))
    for note in e.notes:
        lines.append(f"  note: {note}")
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
    args = []
    for i, v in enumerate(inputs):
        if not isinstance(v, np.ndarray):
            continue
        at = idx if v.ndim else ()
        name = names[i] if i < len(names) else f"operand #{i}"
        x = element_at(v, idx)
        steps.append(Step(name, f"{name}[{', '.join(str(j) for j in at)}]", x))
        args.append(format_value(x))
    value = outputs[result][idx]
    label = ctx.op.name.removeprefix("stablehlo.")
    steps.append(Step(f"result[{where}]", f"{label}({', '.join(args)})", value))
    return Explanation(ctx.op.name, idx, steps, value, [], result)
