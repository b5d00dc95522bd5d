"""A view block as text, for plain mode and the REPL: the value as a grid, one element's
explanation (the text ``hlolab explain`` prints), its trace (``hlolab trace``), or, in
place of an animation, the explanation the animation would play."""

from __future__ import annotations

from typing import Any

from hlolab.errors import HloLabError
from hlolab.lessons.check import Run, Runner, _ref
from hlolab.lessons.model import Exercise, View
from hlolab.messages import Msg, text


def collect_messages(obj: Any, out: set[str] | None = None, depth: int = 0) -> set[str]:
    """Every catalogue key in an explanation (steps, notes, nested messages): what a view
    shows in the reader's language, so the linter can ask for its translations."""
    out = set() if out is None else out
    if depth > 12:
        return out
    if isinstance(obj, Msg):
        out.add(obj.key)
        for v in obj.args.values():
            collect_messages(v, out, depth + 1)
    elif hasattr(obj, "message") and callable(obj.message):
        try:
            collect_messages(obj.message(), out, depth + 1)
        except Exception:  # noqa: BLE001 - a role without a message names nothing to translate
            pass
    elif isinstance(obj, list | tuple | set):
        for v in obj:
            collect_messages(v, out, depth + 1)
    elif isinstance(obj, dict):
        for v in obj.values():
            collect_messages(v, out, depth + 1)
    elif hasattr(obj, "__dataclass_fields__"):
        for name in obj.__dataclass_fields__:
            collect_messages(getattr(obj, name, None), out, depth + 1)
    return out


def resolve(runner: Runner, view: View, ex: Exercise | None = None) -> tuple[Run, Any]:
    """The run a view shows and its value; an error names what is missing."""
    run = runner.view_program(ex, view.program)
    value = run.value(view.value)
    if view.element is not None:
        from hlolab.trace.provenance import check_index, value_shape

        check_index(value_shape(value), tuple(view.element), f"{_ref(view.value)} index")
    return run, value


def explanation(run: Run, view: View) -> Any:
    """The ElementExplanation of the view's element (hlolab.session.explain_element)."""
    from hlolab.session import explain_element

    return explain_element(run.session, _ref(view.value), view.element or ())


def view_text(runner: Runner, view: View, ex: Exercise | None = None, lang: str | None = None) -> str:
    """The view as plain text in ``lang``."""
    from hlolab.repl.display import format_binding

    run, value = resolve(runner, view, ex)
    name = _ref(view.value)
    if view.mode == "value":
        lines = [format_binding(name, value, run.declared_type(name))]
        if view.element is not None:
            lines.append(_element_text(run, view, lang, with_formula=False))
        return "\n".join(lines)
    if view.mode == "trace":
        from hlolab.trace.format import format_trace

        trace = run.session.sources(name, view.element or ())
        return format_trace(run.session, trace)
    # explain, and animation in a terminal: the steps the animation would play
    return _element_text(run, view, lang, with_formula=True)


def _element_text(run: Run, view: View, lang: str | None, with_formula: bool) -> str:
    from hlolab.trace.explain import format_explanation

    e = explanation(run, view)
    idx = "[" + ", ".join(map(str, e.index)) + "]"
    if e.event is None:
        return f"{_ref(view.value)}{idx} = {e.element}"
    lines = [f"{_ref(view.value)}{idx} = {e.element}  ({e.event.op.name})"]
    if with_formula and e.explanation is not None:
        lines.append(format_explanation(e.explanation, lang=lang))
    if e.sources and view.highlight != "none":
        lines.append(text(Msg("lessons.ui.reads"), lang))
        for s in e.sources:
            from hlolab.messages import catalogue

            role = s.source.role
            role_text = text(Msg(f"roles.{role}"), lang) if f"roles.{role}" in catalogue("en") else role
            lines.append(f"  {s.label or '(implicit)'}[{', '.join(map(str, s.source.index))}]  {role_text}")
    return "\n".join(lines)


def view_messages(runner: Runner, view: View, ex: Exercise | None = None) -> set[str]:
    """The catalogue keys a view shows (for the translation report)."""
    if view.mode == "trace":
        return set()
    run, _ = resolve(runner, view, ex)
    keys: set[str] = set()
    if view.element is not None:
        e = explanation(run, view)
        if view.mode != "value" and e.explanation is not None:
            collect_messages(e.explanation, keys)
        if e.sources and view.highlight != "none":
            keys.add("lessons.ui.reads")
            keys.update(f"roles.{s.source.role}" for s in e.sources)
    return keys


def check_view(runner: Runner, view: View, ex: Exercise | None = None) -> None:
    """Raise HloLabError unless the view can be drawn (value and element exist)."""
    run, value = resolve(runner, view, ex)
    if view.element is not None and view.mode in ("explain", "animation"):
        e = explanation(run, view)
        if e.event is None and view.mode == "animation":
            raise HloLabError(f"{_ref(view.value)} is an argument: there is no op to animate")
