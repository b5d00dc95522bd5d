"""What ``hlolab trace`` prints: a trace as a text tree (shared by the CLI and the TUI)."""

from __future__ import annotations

import copy
import re
import textwrap
from typing import Any

from hlolab.messages import Msg
from hlolab.messages import text as _t
from hlolab.trace.boxes import format_mask

_GUIDES = re.compile(r"[│├└─ ]*")
NBSP = "\xa0"
_MIN_TEXT = 12  # narrower than this after the guides: leave the line whole (the view cuts it)


def describe_query(session: Any, d: Any) -> str:
    """``= stablehlo.add (line 5)``, or ``= argument #0 of @main``: what value ``d`` is."""
    if d[0] > 0:  # an op instance; nodes <= 0 hold a process's arguments
        ev = session.instance(d[0])
        loc = _t(Msg("trace.line", line=ev.op.loc.line)) if ev.op.loc else ""
        return f"= {ev.op.name}{loc}"
    return _t(Msg("trace.argument", k=d[1], func=session.func.name))


def format_trace(session: Any, trace: Any, limit: int | None = None) -> str:
    """A trace as a readable tree: per value, per role, the elements as boxes and the shortest path."""
    what = trace.what or (describe_query(session, trace.query) if session is not None else "")
    head = f"{trace.label}[{', '.join(map(str, trace.index))}] {what}".rstrip()
    if not trace.groups:
        none = "trace.no_sources" if trace.direction == "back" else "trace.no_targets"
        return head + "\n  " + _t(Msg(none))
    by_value: dict[str, list[Any]] = {}
    # arguments in order, then the other values in program order; a value written once but
    # made once per call of its function (a constant in a callee) is one entry per role,
    # its elements and path counts merged, the shortest path shown
    merged: dict[tuple[str, str], Any] = {}
    for g in sorted(trace.groups, key=lambda g: (g.value[0] != 0, g.value)):
        key = (g.label, g.role)
        if key not in merged:
            merged[key] = copy.copy(g)
            by_value.setdefault(g.label, []).append(merged[key])
            continue
        m = merged[key]
        if m.mask.shape == g.mask.shape:
            m.mask = m.mask | g.mask
        m.n_paths += g.n_paths
        if len(g.path) < len(m.path):
            m.path = g.path
    n = trace.count()
    counts = dict(elements=Msg("trace.element_one" if n == 1 else "trace.elements", n=n),
                  values=Msg("trace.value_one" if len(by_value) == 1 else "trace.values", n=len(by_value)))
    verb = Msg("trace.depends" if trace.direction == "back" else "trace.flows", **counts)
    lines = [f"{head}\n{_t(verb)}"]
    values = list(by_value.items())
    for vi, (label, groups) in enumerate(values):
        last_v = vi == len(values) - 1
        shape = groups[0].mask.shape
        dims = "x".join(map(str, shape)) or _t(Msg("trace.scalar"))
        lines.append(f"{'└─' if last_v else '├─'} {label}  ({dims})")
        pad = "   " if last_v else "│  "
        for gi, g in enumerate(groups):
            last_g = gi == len(groups) - 1
            boxes = format_mask(label, g.mask, limit=limit or 8)
            lines.append(f"{pad}{'└─' if last_g else '├─'} {g.role:10s} {boxes[0]}")
            sub = pad + ("   " if last_g else "│  ")
            lines += [f"{sub}{' ' * 11}{b}" for b in boxes[1:]]
            hops = " → ".join(f"{h.op.split('.', 1)[-1]} {h.name}"
                              + (_t(Msg("trace.iteration", k=h.frame.iteration)) if h.frame is not None
                                 and h.frame.iteration is not None else "") for h in g.path)
            paths = _t(Msg("trace.paths", n=g.n_paths)) if g.n_paths != 1 else ""
            via = _t(Msg("trace.via", path=hops or _t(Msg("trace.itself"))))
            lines.append(f"{sub}{' ' * 11}{via}{paths}")
    return "\n".join(lines)


def _via_prefix() -> str:
    """How a path line starts in the current language (``via ``)."""
    return _t(Msg("trace.via", path="\0")).split("\0")[0]


def wrap_tree(text: str, width: int) -> str:
    """Wrap a text tree (``format_trace``) to ``width`` columns keeping its guides: a
    continuation line repeats the line's vertical guides (``├─``/``└─`` become ``│``/blank)
    and is indented two more columns than the line's text."""
    out: list[str] = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
            continue
        lead = _GUIDES.match(line).group()
        body = line[len(lead):]
        cont = lead.replace("├", "│").replace("└", " ").replace("─", " ") + "  "
        if width - len(cont) < _MIN_TEXT:
            out.append(line)
            continue
        # a path breaks between hops, never inside "add %3"
        if body.startswith(_via_prefix()):
            body = body.replace(" → ", "\0").replace(" ", NBSP).replace("\0", " → ")
        wrapped = textwrap.wrap(body, width, initial_indent=lead, subsequent_indent=cont,
                                break_on_hyphens=False) or [line]
        out += [w.replace(NBSP, " ") for w in wrapped]
    return "\n".join(out)
