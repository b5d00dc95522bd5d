"""A view block as text, for plain mode and the REPL: the value as a grid, one element's
explanation (the text ``hlolab explain`` prints), its trace (``hlolab trace``), or, in
place of an animation, the explanation the animation would play."""

from __future__ import annotations

from typing import Any

from hlolab.errors import HloLabError
from hlolab.lessons.check import Run, Runner, _ref, instance_text
from hlolab.lessons.model import Exercise, Program, View
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


def view_def(run: Run, view: View) -> Any:
    """The definition (``Def``) a view shows: its value's instance (iteration, process)."""
    return run.find(view.value, view.iteration, view.process)


def view_label(view: View) -> str:
    """The view's value as shown: ``@f:%x (iteration 2, process 1)``."""
    return _ref(view.value) + instance_text(view.iteration, view.process)


def resolve(runner: Runner, view: View, ex: Exercise | None = None) -> tuple[Run, Any]:
    """The run a view shows and its value; an error names what is missing."""
    run = runner.view_program(ex, view.program)
    value = run.session.value_of(view_def(run, view))
    if view.element is not None:
        from hlolab.trace.provenance import check_index, value_shape

        check_index(value_shape(value), tuple(view.element), f"{_ref(view.value)} index")
    return run, value


def explanation(run: Run, view: View) -> Any:
    """The ElementExplanation of the view's element (hlolab.session.explain_element)."""
    from hlolab.session import explain_element

    return explain_element(run.session, view_def(run, view), view.element or ())


def view_text(runner: Runner, view: View, ex: Exercise | None = None, lang: str | None = None) -> str:
    """The view as plain text in ``lang``."""
    run, value = resolve(runner, view, ex)
    if view.mode == "value":
        lines = [binding_text(view_label(view), value,
                              run.declared_type(view.value, view.iteration, view.process))]
        if view.element is not None:
            lines.append(_element_text(run, view, lang, with_formula=False))
        return "\n".join(lines)
    if view.mode == "trace":
        from hlolab.trace.format import format_trace

        trace = run.session.sources(view_def(run, view), view.element or ())
        return format_trace(run.session, trace)
    # explain, and animation in a terminal: the steps the animation would play
    return _element_text(run, view, lang, with_formula=True)


def _element_text(run: Run, view: View, lang: str | None, with_formula: bool) -> str:
    from hlolab.trace.explain import format_explanation

    e = explanation(run, view)
    idx = "[" + ", ".join(map(str, e.index)) + "]"
    name = _ref(view.value)
    where = instance_text(view.iteration, view.process)
    if e.event is None:
        return f"{name}{idx} = {e.element}{where}"
    lines = [f"{name}{idx} = {e.element}  ({e.event.op.name}){where}"]
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


def binding_text(name: str, value: Any, type_: Any = None) -> str:
    """``name : type`` then the elements (as the REPL prints a binding); ``name`` is shown as
    given, so ``@f:%x`` and ``%x (iteration 2)`` stay readable."""
    from hlolab.repl.display import elements_text, type_text

    return f"{name} : {type_text(value, type_)}\n{elements_text(value)}"


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


# --- what a program block prints, and what of it would give an answer away -----------------

GIVEAWAY_KINDS = ("predict-value", "predict-shape", "predict-type")


def printed_results(runner: Runner, p: Program) -> list[tuple[str, Any, Any]]:
    """What a program block prints after it runs: ``(label, value, Def)`` per result, the
    ``results`` it names or else what ``@main`` returns (on a grid: process 0's)."""
    run = runner.program(p.name)
    if p.results is not None:
        return [(n, run.value(n), run.find(n)) for n in p.results]
    s = run.session
    defs: list[Any] = s.result_defs()
    per_process = getattr(s.interp, "process_return_defs", None)
    if s.n_processes > 1 and per_process:
        defs = list(per_process[0])
    values = run.results()
    defs = defs + [None] * (len(values) - len(defs))
    return [(s.label(d) if d is not None else f"#{i}", v, d) for i, (v, d) in enumerate(zip(values, defs))]


def exercise_def(runner: Runner, ex: Exercise) -> Any:
    """The definition an exercise asks about (predict-*/pick-sources), or None."""
    if not ex.program or not ex.value:
        return None
    return runner.program(ex.program).find(ex.value, ex.iteration, ex.process)


def giveaways(runner: Runner) -> dict[str, dict[str, list[str]]]:
    """Per program block, the printed results that answer a later predict-value/shape/type
    exercise on that program: ``{program: {result label: [exercise ids]}}``. A front end hides
    those results until the exercises are answered (``hidden_results``)."""
    out: dict[str, dict[str, list[str]]] = {}
    lesson = runner.lesson
    for ex in lesson.exercises:
        if ex.kind not in GIVEAWAY_KINDS:
            continue
        p = lesson.programs.get(ex.program)
        if p is None or p.hidden:
            continue
        try:
            want = exercise_def(runner, ex)
            printed = printed_results(runner, p)
        except HloLabError:
            continue  # a program or value that does not exist: the linter reports it elsewhere
        for label, _, d in printed:
            if d is not None and d == want:
                out.setdefault(p.name, {}).setdefault(label, []).append(ex.id)
    return out


def hidden_results(runner: Runner, program: str, done: Any = ()) -> dict[str, list[str]]:
    """The printed results of ``program`` to hide now: ``{label: [unanswered exercise ids]}``.
    ``done``: the ids of the exercises answered (or skipped) so far, e.g. from
    ``Progress.is_done``; a result shows again once every exercise it answers is done."""
    out: dict[str, list[str]] = {}
    for label, ids in giveaways(runner).get(program, {}).items():
        open_ids = [i for i in ids if i not in done]
        if open_ids:
            out[label] = open_ids
    return out


def views_giving_away(runner: Runner) -> list[tuple[View, Exercise]]:
    """Views placed before an exercise that show all it asks to predict: a value view (the
    value, its shape and type) or, for one element, that element's explanation. (One element
    of a value whose whole is asked is a worked step, not the answer.)"""
    out: list[tuple[View, Exercise]] = []
    lesson = runner.lesson
    seen: list[View] = []
    for b in lesson.blocks:
        if isinstance(b, View):
            seen.append(b)
            continue
        if not isinstance(b, Exercise) or b.kind not in GIVEAWAY_KINDS:
            continue
        try:
            want = exercise_def(runner, b)
        except HloLabError:
            continue
        for v in seen:
            if v.program != b.program:
                continue
            shows = v.mode == "value" or (b.kind == "predict-value" and b.element is not None
                                          and v.element is not None and tuple(b.element) == tuple(v.element))
            if not shows:
                continue
            try:
                if view_def(runner.program(v.program), v) == want:
                    out.append((v, b))
            except HloLabError:
                continue
    return out


def hidden_views(runner: Runner, done: Any = ()) -> dict[int, list[str]]:
    """The view blocks to hold back now, by their line: ``{line: [unanswered exercise ids]}``
    (views that show what a later exercise asks; shown once it is answered or skipped)."""
    out: dict[int, list[str]] = {}
    for v, ex in views_giving_away(runner):
        if ex.id not in done:
            out.setdefault(v.line, []).append(ex.id)
    return out


def literal_giveaways(runner: Runner) -> list[Exercise]:
    """predict-value exercises about a constant: its value is in the program text, which no
    front end can hide (the linter reports them)."""
    out = []
    for ex in runner.lesson.exercises:
        if ex.kind != "predict-value":
            continue
        try:
            d = exercise_def(runner, ex)
        except HloLabError:
            continue
        if d is None or d[0] <= 0:
            continue
        if runner.program(ex.program).session.event(d[0]).op.name == "stablehlo.constant":
            out.append(ex)
    return out
