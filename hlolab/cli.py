"""``hlolab`` command line. Front ends (TUI, renderers) are imported lazily."""

from __future__ import annotations

import argparse
import shutil
import sys
import traceback
from pathlib import Path
from typing import Any

from hlolab.errors import HloLabError
from hlolab.messages import Msg
from hlolab.messages import text as msg_text

EXAMPLES_DIR = Path(__file__).parent / "examples"


def _example_path(name: str) -> Path:
    p = EXAMPLES_DIR / (name if name.endswith(".mlir") else name + ".mlir")
    if not p.is_file():
        names = ", ".join(sorted(q.stem for q in EXAMPLES_DIR.glob("*.mlir")))
        raise HloLabError(f"no built-in example '{name}' (examples: {names})")
    return p


def _load_inputs(ns: argparse.Namespace) -> list[Any] | None:
    from hlolab.interp.inputs import load_npy
    from hlolab.limits import ELEMENT_BUDGET
    from hlolab.runner import parse_args_literal

    args: list[Any] | None = None
    if ns.args is not None:
        args = parse_args_literal(ns.args)
    budget = getattr(ns, "max_elements", ELEMENT_BUDGET)
    for f in ns.input or []:
        args = (args or []) + [load_npy(f, budget)]
    return args


def cmd_run(ns: argparse.Namespace) -> int:
    from hlolab.runner import Budgets, format_value, run_file

    files = [str(_example_path(ns.example))] if ns.example else []
    files += ns.files
    if not files:
        print("hlolab run: give one or more FILE.mlir, or --example NAME", file=sys.stderr)
        return 2
    inputs = _load_inputs(ns)
    from hlolab.interp.inputs import load_npy

    infeed = [load_npy(f, ns.max_elements) for f in ns.infeed or []]
    all_ok = True
    for f in files:
        for r in run_file(f, split=ns.split_input_file, entry=ns.entry, args=inputs, seed=ns.seed,
                          budgets=Budgets(ns.max_elements, ns.max_steps), grid=_grid(ns),
                          infeed=infeed):
            print(r.line())
            for line in r.printed:
                print(line)
            if r.process_outputs is not None and not r.checks:
                for p, outs in enumerate(r.process_outputs):
                    where = f"process {p} (replica {p // r.grid[1]}, partition {p % r.grid[1]})"
                    for i, (v, t) in enumerate(zip(outs, r.output_types or [None] * len(outs))):
                        print(f"  {where} result #{i}: {format_value(v, t)}")
                    if ns.output:
                        _save_outputs(Path(ns.output), f"{r.label}.p{p}", outs)
            elif r.outputs and not r.checks:
                for i, (v, t) in enumerate(zip(r.outputs, r.output_types or [None] * len(r.outputs))):
                    print(f"  result #{i}: {format_value(v, t)}")
                if ns.output:
                    _save_outputs(Path(ns.output), r.label, r.outputs)
            for p, values in r.outfeed:
                for v in values:
                    print(f"  outfeed (process {p}): {format_value(v)}")
            if r.error is not None and r.error.loc is not None:
                print(_indent(r.error.loc.caret_block().lstrip("\n")))  # source line + caret
            cause = _internal_cause(r.error) if ns.verbose and r.error is not None else None
            if cause is not None:
                print(_indent("".join(traceback.format_exception(cause))))
            all_ok &= r.ok
    return 0 if all_ok else 1


def _grid(ns: argparse.Namespace) -> tuple[int, int] | None:
    """--replicas / --partitions (either alone: the other is 1); None: the module's own."""
    replicas, partitions = getattr(ns, "replicas", None), getattr(ns, "partitions", None)
    if replicas is None and partitions is None:
        return None
    return (replicas or 1, partitions or 1)


def _grid_options(p: argparse.ArgumentParser, process: bool = False) -> None:
    p.add_argument("--replicas", type=_positive, metavar="R",
                   help="run on a grid of R replicas (default: the module's mhlo.num_replicas, "
                   "else 1); each process runs the entry function; an --args/--input value of the "
                   "argument's type goes to every process, one with an extra leading dim of "
                   "R*P is split across them (process p = replica * P + partition gets arg[p])")
    p.add_argument("--partitions", type=_positive, metavar="P",
                   help="... and P partitions (default: mhlo.num_partitions, else 1)")
    if process:
        p.add_argument("--process", type=int, metavar="N", default=0,
                       help="on a grid: the process whose value --value names (default 0)")


def _internal_cause(e: BaseException) -> BaseException | None:
    """The Python exception behind an "op failed" error (an hlolab bug worth reporting)."""
    cause = e.__cause__
    return cause if cause is not None and not isinstance(cause, HloLabError) else None


def _budget(text: str) -> int:
    try:
        n = int(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {n}")
    return n


_positive = _budget  # a whole number >= 1


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())


def _save_outputs(out_dir: Path, label: str, outputs: list[Any]) -> None:
    import os
    import tempfile

    import numpy as np

    out_dir.mkdir(parents=True, exist_ok=True)
    stem = label.replace(".mlir", "").replace("#", "_")
    for i, v in enumerate(outputs):
        if not isinstance(v, np.ndarray):
            continue
        target = out_dir / f"{stem}_result{i}.npy"
        fd, tmp = tempfile.mkstemp(dir=out_dir, suffix=".npy.tmp")
        with os.fdopen(fd, "wb") as fh:  # write then rename: never a half-written file
            np.save(fh, v, allow_pickle=False)
        os.replace(tmp, target)


class UsageError(HloLabError):
    """A command line that lacks what the command needs (printed like argparse's errors)."""


def _verified_modules(ns: argparse.Namespace, f: str) -> list[tuple[str, Any]]:
    """(label, module or the HloLabError that stopped it) of each module of file ``f``,
    parsed and verified (every op of every function and region)."""
    from hlolab.ir.parser import parse_module, split_source
    from hlolab.ops.verify import verify_module

    try:
        text = Path(f).read_text()
    except (OSError, UnicodeDecodeError) as e:
        return [(f, HloLabError(f"{f}: cannot read: {e}"))]
    chunks = split_source(text) if ns.split_input_file else [(1, text)]
    out: list[tuple[str, Any]] = []
    for k, (first_line, chunk) in enumerate(chunks):
        label = f"{Path(f).name}#{k + 1}" if len(chunks) > 1 else Path(f).name
        try:
            m = parse_module(chunk, f, first_line)
            verify_module(m)
        except HloLabError as e:
            out.append((label, e))
            continue
        out.append((label, m))
    return out


def cmd_print(ns: argparse.Namespace) -> int:
    from hlolab.ir.printer import print_module

    status = 0
    for f in ns.files:
        outs = []
        for _, m in _verified_modules(ns, f):
            if isinstance(m, HloLabError):
                print(str(m), file=sys.stderr)
                status = 1
                continue
            outs.append(print_module(m, generic=ns.generic))
        if outs:
            print("\n// -----\n\n".join(o.rstrip("\n") + "\n" for o in outs), end="")
    return status


def cmd_verify(ns: argparse.Namespace) -> int:
    status = 0
    for f in ns.files:
        for label, m in _verified_modules(ns, f):
            if isinstance(m, HloLabError):
                print(str(m), file=sys.stderr)
                status = 1
            elif not ns.quiet:
                print(f"{label}: verified")
    return status


def _session(ns: argparse.Namespace) -> Any:
    """A Session on FILE / --example with inputs from --args, --input and --seed, run to the end."""
    from hlolab.session import Session

    path = str(_example_path(ns.example)) if ns.example else ns.file
    if path is None:
        raise HloLabError(f"hlolab {ns.command}: give FILE.mlir or --example NAME")
    session = Session.open(path, entry=ns.entry, grid=_grid(ns))
    session.process = getattr(ns, "process", None) or 0
    args = _load_inputs(ns)
    if args is None and session.func.args and ns.seed is None:
        raise HloLabError(f"@{session.func.name} takes {len(session.func.args)} arguments: give them "
                          "with --args, --input FILE.npy, or --seed N for random values")
    session.bind(args, seed=ns.seed)
    stop = session.run(max_steps=10**12)
    if stop.error is not None:
        raise stop.error
    return session


def _require_index(session: Any, ns: argparse.Namespace) -> None:
    """A non-scalar value needs --index: say so as argparse would, naming the shape."""
    if ns.index.strip():
        return
    from hlolab.trace.provenance import value_shape

    d = session.find(ns.value, ns.iteration)
    shape = value_shape(session.value_of(d))
    if shape:
        dims = "x".join(map(str, shape))
        raise UsageError(f"the following argument is required for {ns.value} (shape {dims}): "
                         f"--index i,j,... with {len(shape)} integer{'s' if len(shape) > 1 else ''}")


def cmd_explain(ns: argparse.Namespace) -> int:
    from hlolab.session import explain_element
    from hlolab.trace.explain import format_explanation
    from hlolab.trace.locate import parse_index

    if not ns.example and ns.file and _is_op_name(ns.file):
        return _explain_op(ns)
    if ns.extra or ns.param or ns.preset:
        given = ns.extra or ns.param or [f"--preset {ns.preset}"]
        raise UsageError("--param/--preset build an op (hlolab explain OP --preset NAME --param K=V); "
                         f"for a program they do not apply: {' '.join(given)}")
    if ns.value is None:
        raise UsageError("the following argument is required for a program: --value")
    session = _session(ns)
    _require_index(session, ns)
    e = explain_element(session, ns.value, parse_index(ns.index), ns.iteration)
    if e.event is None:
        print(msg_text(Msg("explain.argument_element", name=ns.value, index=list(e.index), element=e.element,
                           k=e.value[1], func=session.func.name)))
        return 0
    loc = f" (line {e.event.op.loc.line})" if e.event.op.loc else ""
    print(f"{ns.value}{list(e.index)} = {e.event.op.name}{loc}, {e.event.frame.describe()}")
    if e.explanation is not None:
        print(format_explanation(e.explanation))
        _print_bits(e.explanation)
    if e.sources:
        print(msg_text(Msg("explain.sources")))
        implicit = msg_text(Msg("explain.implicit"))
        for s in e.sources:
            print(f"  {s.label or implicit}[{', '.join(map(str, s.source.index))}]  {s.source.role}")
        print(msg_text(Msg("explain.next_back")))
        for label, producer in dict.fromkeys((s.label, s.producer) for s in e.sources if s.label):
            print(f"  {label} = {producer}")
    return 0


def _print_bits(explanation: Any) -> None:
    """The bit views of an op about bits (convert, reduce_precision, shifts, ...)."""
    from hlolab.trace.bits import format_bits

    for panel in getattr(explanation, "bits", None) or []:
        print()
        print(format_bits(panel))


def _is_op_name(word: str) -> bool:
    """An op with a parameter schema, not a file (``gather``, ``stablehlo.pad``)."""
    from hlolab.ops.examples import schema_for

    return not word.endswith(".mlir") and not Path(word).exists() and schema_for(word) is not None


def _explain_op(ns: argparse.Namespace) -> int:
    """``hlolab explain OP [--preset P] [--param K=V] [--index i,j]``: the op built from its
    parameters, run on iota (or random) inputs, and one result element explained in full."""
    from hlolab.ops.registry import lookup
    from hlolab.render import export
    from hlolab.trace.explain import format_explanation
    from hlolab.trace.locate import parse_index

    if ns.value is not None:
        raise UsageError(f"--value names a value of a program; {ns.file} is an op: choose its element "
                         "with --index")
    _reject_program_options(ns, ns.file)
    params = _op_params(ns.file, ns.param or [], ns.extra or [])
    indices = [parse_index(ns.index)] if ns.index.strip() else []
    target = export.op_target(ns.file, ns.preset or "default", params, indices, ns.fill,
                              ns.seed if ns.seed is not None else 0)
    event = target.event
    r, idx = (target.elements or [(0, tuple(d // 2 for d in event.outputs[0].shape))])[0]
    print(f"{target.command.replace('hlolab export', 'hlolab explain', 1)}")
    print(f"{event.op.results[r].name}{list(idx)} = {event.op.name}")
    opdef = lookup(event.op.name)
    if opdef is not None and opdef.explain is not None:
        explanation = opdef.explain(event.call, event.inputs, event.outputs, r, idx)
        print(format_explanation(explanation))
        _print_bits(explanation)
    prov = event.provenance()
    if prov is not None:
        print(msg_text(Msg("explain.sources")))
        for src in prov.sources(r, idx):
            name = event.op.operands[src.operand].name if src.operand is not None else msg_text(
                Msg("explain.implicit"))
            print(f"  {name}[{', '.join(map(str, src.index))}]  {src.role}")
    return 0


# global options of a program run; given with an op target they would be silently ignored
PROGRAM_OPTIONS = {"input": "a program's inputs from .npy files", "args": "a program's input literals",
                   "entry": "a program's entry function", "iteration": "a value inside a loop body"}


def _reject_program_options(ns: argparse.Namespace, op: str) -> None:
    """A program-only option given with an op target is an error, never swallowed: when the op
    has a parameter of that name (scatter's ``input``), say how to set the parameter."""
    from hlolab.ops.examples import schema_for

    schema = schema_for(op)
    names = {p.name for p in schema.params} if schema is not None else set()
    for opt, what in PROGRAM_OPTIONS.items():
        if getattr(ns, opt, None) in (None, [], ""):
            continue
        if opt in names:
            raise UsageError(f"--{opt} is hlolab's option for {what}; to set {op}'s parameter "
                             f"'{opt}' write --param {opt}=VALUE")
        raise UsageError(f"--{opt} ({what}) applies to a program file, not to the op {op}")


def cmd_trace(ns: argparse.Namespace) -> int:
    import json

    from hlolab.trace.locate import parse_index

    session = _session(ns)
    _require_index(session, ns)
    index = parse_index(ns.index)
    trace = (session.targets if ns.forward else session.sources)(ns.value, index, ns.iteration)
    if ns.json:  # one source per line: readable, and still one JSON document
        js = trace.as_json(limit=ns.limit)
        key = "sources" if "sources" in js else "targets"
        items = js.pop(key)
        head = json.dumps(js)[:-1]
        body = ",\n  ".join(json.dumps(e) for e in items)
        print(f"{head}, \"{key}\": [\n  {body}\n]}}" if items else f"{head}, \"{key}\": []}}")
        return 0
    from hlolab.trace.format import format_trace, wrap_tree

    tree = format_trace(session, trace, ns.limit)
    print(wrap_tree(tree, shutil.get_terminal_size().columns) if sys.stdout.isatty() else tree)
    return 0


def cmd_ops(ns: argparse.Namespace) -> int:
    from hlolab.ops.registry import all_ops

    for name, d in sorted(all_ops().items()):
        alias = f"  ({', '.join(d.aliases)})" if d.aliases else ""
        print(f"{name}{alias}")
    return 0


def cmd_examples(ns: argparse.Namespace) -> int:
    for p in sorted(EXAMPLES_DIR.glob("*.mlir")):
        first = p.read_text().splitlines()[0].lstrip("/ ").strip()
        print(f"{p.stem:20s} {first}")
    return 0


def cmd_export(ns: argparse.Namespace) -> int:
    from hlolab.render import export
    from hlolab.trace.locate import parse_index

    progress = sys.stderr.isatty()
    if ns.gallery:
        if ns.target or ns.example:
            raise HloLabError("hlolab export --gallery DIR takes no op or file")
        paths = export.write_gallery(ns.gallery, progress=progress)
        print(f"wrote {len(paths)} files to {ns.gallery} (index: {Path(ns.gallery) / 'index.md'})")
        return 0
    if not ns.target and not ns.example:
        raise HloLabError("hlolab export: give an op name (e.g. gather), FILE.mlir or --example NAME")
    indices = [parse_index(i) for i in ns.index or []]
    fmt = ns.format or (Path(ns.out).suffix.lstrip(".") if ns.out and Path(ns.out).suffix else "png")
    is_file = bool(ns.example) or ns.target.endswith(".mlir") or Path(ns.target).is_file()
    if is_file:
        if ns.extra or ns.param or ns.preset or ns.help_params:
            given = ns.extra or ns.param or [ns.preset or "--help-params"]
            raise HloLabError("hlolab export FILE: --param/--preset/--help-params describe an op; "
                              f"unexpected: {' '.join(given)}")
        ns.file = ns.target
        session = _session(_with_seed(ns))
        if ns.program:
            trace = session.sources(ns.value, indices[0], ns.iteration) if ns.value and indices else None
            label = Path(ns.example or ns.target).stem
            path = export.write_program(session, trace, fmt, ns.out, label)
            print(f"wrote {path} (program view of @{session.func.name})")
            return 0
        target = export.program_target(session, ns.value, indices, ns.iteration)
    else:
        if ns.help_params:
            print(_params_help(ns.target))
            return 0
        if ns.program or ns.value:
            raise HloLabError("--program and --value apply to a program file, not to an op")
        _reject_program_options(ns, ns.target)
        if _grid(ns) is not None or ns.process:
            raise UsageError("--replicas/--partitions/--process apply to a program file, not to the op "
                             f"{ns.target}")
        params = _op_params(ns.target, ns.param or [], ns.extra or [])
        target = export.op_target(ns.target, ns.preset or "default", params, indices, ns.fill,
                                  ns.seed if ns.seed is not None else 0)
    path, frames = export.write(target, fmt, ns.out, max_frames=ns.max_frames, fps=ns.fps, progress=progress)
    what = f"{frames} frames" if fmt in export.MOVING else "diagram"
    print(f"wrote {path} ({what} of {target.event.op.name})")
    return 0


def _op_params(op: str, pairs: list[str], extra: list[str]) -> dict[str, str]:
    """``--param k=v`` and the shorthand ``--k v`` / ``--k=v`` -> {k: v} (names checked by the schema)."""
    from hlolab.ops.examples import ParamError, schema_for

    schema = schema_for(op)
    if schema is None:
        from hlolab.ops.examples import schema_ops

        names = ", ".join(n.removeprefix("stablehlo.") for n in schema_ops())
        raise ParamError(f"hlolab export {op}: not an op with a parameter schema nor a file; ops: {names}")
    out: dict[str, str] = {}
    for p in pairs:
        if "=" not in p:
            raise ParamError(f"--param {p}: expected key=value")
        k, v = p.split("=", 1)
        out[k.strip()] = v
    i = 0
    while i < len(extra):
        word = extra[i]
        if not word.startswith("--"):
            raise ParamError(f"hlolab export {op}: unexpected argument '{word}'")
        key = word[2:]
        if "=" in key:
            key, value = key.split("=", 1)
            i += 1
        elif i + 1 < len(extra):
            value = extra[i + 1]
            i += 2
        else:
            raise ParamError(f"{word}: give a value")
        out[key.replace("-", "_")] = value
    for k in out:
        schema.param(k)  # unknown names: an error listing the op's parameters
    return out


def _params_help(op: str) -> str:
    from hlolab.ops.examples import ParamError, schema_for

    schema = schema_for(op)
    if schema is None:
        raise ParamError(f"no parameter schema for op '{op}'")
    lines = [f"{schema.op}: {schema.doc}", "", "parameters (--param NAME=VALUE or --NAME VALUE):"]
    width = max(len(p.name) for p in schema.params)
    for p in schema.params:
        lines.append(f"  {p.name:<{width}}  = {p.format(p.default):<16} {p.doc}")
        lines.append(f"  {'':<{width}}    {p.expected()}")
    lines += ["", "presets (--preset NAME): " + ", ".join(schema.presets)]
    return "\n".join(lines)


def cmd_open(ns: argparse.Namespace) -> int:
    from hlolab.tui import run_tui

    path = ns.file
    if not Path(path).is_file():
        raise HloLabError(f"hlolab open: no such file: {path}")
    inputs = _load_inputs(ns)  # read now: a bad file is a clean error before the TUI starts
    return run_tui(open_path=path, inputs=inputs, seed=ns.seed if ns.seed is not None else 0)


def cmd_repl(ns: argparse.Namespace) -> int:
    from hlolab.repl import main as repl_main

    return repl_main([ns.file] if ns.file else [])


def cmd_explore(ns: argparse.Namespace) -> int:
    from hlolab.ops.examples import schema_for, schema_ops
    from hlolab.tui import run_tui

    if schema_for(ns.op) is None:
        names = ", ".join(n.removeprefix("stablehlo.") for n in schema_ops())
        raise HloLabError(f"hlolab explore: no op '{ns.op}' with a parameter schema; ops: {names}")
    return run_tui(open_op=ns.op)


def _lesson_lang(ns: argparse.Namespace) -> str:
    from hlolab.messages import current_language

    return ns.lang or current_language()


def cmd_lessons(ns: argparse.Namespace) -> int:
    """``hlolab lessons``: the lessons with the learner's progress in one language."""
    from hlolab.lessons.loader import folders, lessons_dir, parse_lesson
    from hlolab.lessons.progress import Progress
    from hlolab.messages import Msg, text

    lang = _lesson_lang(ns)
    if getattr(ns, "tui", False):
        from hlolab.tui import run_tui

        return run_tui(lessons=True, lang=lang)
    progress = Progress.load()
    for w in progress.warnings:
        print(text(w, lang), file=sys.stderr)
    found = folders()
    if not found:
        print(text(Msg("lessons.list.none", path=str(lessons_dir())), lang))
        return 0
    print(text(Msg("lessons.list.heading", lang=lang), lang))
    current = progress.current(lang)
    for f in found:
        path = f.files.get(lang) or f.files.get("en")
        if path is None:
            continue
        les = parse_lesson(path)
        done = len([e for e in les.exercises if progress.is_done(lang, les.id, e.id)])
        row = text(Msg("lessons.list.row", order=les.order, title=les.title, done=done,
                       total=len(les.exercises)), lang)
        if les.id == current:
            row += "  <- " + text(Msg("lessons.list.current"), lang)
        print(row)
    return 0


def cmd_lessons_check(ns: argparse.Namespace) -> int:
    """``hlolab lessons check``: run every lesson's programs and exercises (exit 1 on failure)."""
    from hlolab.lessons.lint import lint

    langs = ["en", ns.lang] if ns.lang and ns.lang != "en" else None
    report = lint(only=ns.lessons or None, langs=langs)
    print(report.format(ns.strict))
    return 0 if report.ok(ns.strict) else 1


def cmd_lesson(ns: argparse.Namespace) -> int:
    """``hlolab lesson N``: the TUI lesson viewer in a terminal; ``--plain`` (or output that is
    not a terminal) follows it with plain text and prompts."""
    from hlolab.lessons.plain import follow
    from hlolab.messages import Msg

    if not ns.plain and sys.stdout.isatty() and sys.stdin.isatty():
        from hlolab.lessons.loader import find_folder
        from hlolab.tui import run_tui

        find_folder(ns.lesson)  # an unknown lesson is an error here, not a notification in the TUI
        return run_tui(open_lesson=ns.lesson, lang=_lesson_lang(ns))
    notice = None if ns.plain else Msg("lessons.ui.plain_notice")
    return follow(ns.lesson, _lesson_lang(ns), notice=notice)


def _with_seed(ns: argparse.Namespace) -> argparse.Namespace:
    if ns.seed is None and not ns.args and not ns.input:
        ns.seed = 0  # a picture needs inputs: random by default, as documented
    return ns


def _element_options(p: argparse.ArgumentParser, value_required: bool = True) -> None:
    """The options every command that targets one element shares (DESIGN.md, "Addressing")."""
    p.add_argument("file", nargs="?", metavar="FILE.mlir" if value_required else "FILE.mlir|OP")
    p.add_argument("--example", metavar="NAME", help="use a built-in example")
    p.add_argument("--value", required=value_required, metavar="[@func:]%name[#k]",
                   help="the value, e.g. %%3")
    _grid_options(p, process=True)
    p.add_argument("--index", default="", metavar="i,j,...", help="the element (empty for a scalar)")
    p.add_argument("--iteration", type=int, help="loop iteration, for values inside a while body")
    p.add_argument("--entry", metavar="NAME")
    p.add_argument("--args", metavar="LITERAL")
    p.add_argument("--input", action="append", metavar="FILE.npy")
    p.add_argument("--seed", type=int)


def build_parser() -> argparse.ArgumentParser:
    from hlolab.limits import ELEMENT_BUDGET, STEP_BUDGET

    ap = argparse.ArgumentParser(prog="hlolab", description="Execute StableHLO programs and see "
                                 "where every output element comes from.")
    sub = ap.add_subparsers(dest="command")

    run = sub.add_parser("run", help="run MLIR programs, evaluate their checks, print results")
    run.add_argument("files", nargs="*", metavar="FILE.mlir")
    run.add_argument("--example", metavar="NAME", help="run a built-in example (see `hlolab examples`)")
    run.add_argument("--split-input-file", action="store_true", help="split files at `// -----`")
    run.add_argument("--entry", metavar="NAME", help="function to run (default @main or the only one)")
    run.add_argument("--args", metavar="LITERAL", help='inputs: "[dense<…> : tensor<…>, …]"')
    run.add_argument("--input", action="append", metavar="FILE.npy", help="an input from a .npy file")
    run.add_argument("--seed", type=int, help="random inputs with this seed where none are given "
                     "(process p of a grid: seed + p)")
    _grid_options(run)
    run.add_argument("--infeed", action="append", metavar="FILE.npy",
                     help="a value for stablehlo.infeed to read (in order; repeat the flag)")
    run.add_argument("--output", metavar="DIR", help="save results as .npy files in DIR")
    run.add_argument("--max-elements", type=_budget, metavar="N", default=ELEMENT_BUDGET,
                     help=f"refuse a tensor of more than N elements (default {ELEMENT_BUDGET:,})")
    run.add_argument("--max-steps", type=_budget, metavar="N", default=STEP_BUDGET,
                     help=f"stop after N executed ops: an endless while (default {STEP_BUDGET:,})")
    run.add_argument("-v", "--verbose", action="store_true",
                     help="with an internal op failure, show the Python traceback behind it")
    run.set_defaults(fn=cmd_run)

    pr = sub.add_parser("print", help="parse and print modules back")
    pr.add_argument("files", nargs="+", metavar="FILE.mlir")
    pr.add_argument("--split-input-file", action="store_true")
    pr.add_argument("--generic", action="store_true", help="print the generic op form")
    pr.set_defaults(fn=cmd_print, parser=pr)

    ve = sub.add_parser("verify", help="parse and verify modules without running them (exit 1 on an error)")
    ve.add_argument("files", nargs="+", metavar="FILE.mlir")
    ve.add_argument("--split-input-file", action="store_true", help="split files at `// -----`")
    ve.add_argument("-q", "--quiet", action="store_true", help="print only errors")
    ve.set_defaults(fn=cmd_verify, parser=ve)

    ex = sub.add_parser("explain", help="explain one element of a value, or of an op built from its "
                        "parameters (hlolab explain gather --preset spec-example --index 0,1,1,1)")
    _element_options(ex, value_required=False)
    ex.add_argument("--preset", metavar="NAME", help="for an op: parameters from a preset")
    ex.add_argument("--param", action="append", metavar="KEY=VALUE", help="for an op: a parameter")
    ex.add_argument("--fill", choices=("iota", "random"), default="iota", help="for an op: its inputs")
    ex.set_defaults(fn=cmd_explain, parser=ex)

    tr = sub.add_parser("trace", help="trace one element back (or forward) through the whole program")
    _element_options(tr)
    tr.add_argument("--forward", action="store_true", help="where the element flows to, not from")
    tr.add_argument("--json", action="store_true", help="print JSON for tools (each element once per role)")
    tr.add_argument("--limit", type=int, help="at most N boxes per line group / N JSON elements")
    tr.set_defaults(fn=cmd_trace, parser=tr)

    xp = sub.add_parser("export", help="draw an op (from its parameters) or the op that made a program "
                        "value: diagram (png/svg/pdf) or animation (gif/mp4/frames)",
                        epilog="Op parameters may also be given as --NAME VALUE, e.g. "
                        "hlolab export conv --lhs 1x5x5x1 --stride 2 --padding 1 --format gif")
    xp.add_argument("target", nargs="?", metavar="OP_OR_FILE",
                    help="an op name (gather, conv, ...) or FILE.mlir")
    xp.add_argument("--preset", metavar="NAME", help="op parameters from a preset: default, spec-example")
    xp.add_argument("--param", action="append", metavar="KEY=VALUE", help="an op parameter (repeatable)")
    xp.add_argument("--help-params", action="store_true", help="list the op's parameters and presets")
    xp.add_argument("--fill", choices=("iota", "random"), default="iota",
                    help="op inputs: 0,1,2,... or random (with --seed)")
    xp.add_argument("--gallery", metavar="DIR", help="write the gallery: every data-moving op, index.md")
    xp.add_argument("--program", action="store_true",
                    help="draw the program's dependency graph (with --value/--index: the traced sources)")
    xp.add_argument("--example", metavar="NAME", help="a built-in example program")
    xp.add_argument("--index", action="append", metavar="i,j,...",
                    help="a result element to explain (repeat for several)")
    xp.add_argument("--value", metavar="%name", help="in a program: the value whose op to draw")
    xp.add_argument("--iteration", type=int)
    xp.add_argument("--format", choices=("png", "svg", "pdf", "gif", "mp4", "frames"))
    xp.add_argument("--out", metavar="PATH", help="output file (a directory for --format frames)")
    xp.add_argument("--seed", type=int)
    xp.add_argument("--fps", type=float, default=2.0)
    xp.add_argument("--max-frames", type=int, default=400)
    xp.add_argument("--entry", metavar="NAME")
    xp.add_argument("--args", metavar="LITERAL")
    xp.add_argument("--input", action="append", metavar="FILE.npy")
    _grid_options(xp, process=True)  # a collective of a program on a grid: its processes side by side
    xp.set_defaults(fn=cmd_export, parser=xp)

    op_ = sub.add_parser("open", help="open a program in the TUI's stepper")
    op_.add_argument("file", metavar="FILE.mlir")
    op_.add_argument("--args", metavar="LITERAL", help='entry arguments: "[dense<…> : tensor<…>, …]"')
    op_.add_argument("--input", action="append", metavar="FILE.npy",
                     help="an entry argument from a .npy file")
    op_.add_argument("--seed", type=int,
                     help="random values (this seed) for the arguments not given (default 0)")
    op_.set_defaults(fn=cmd_open)
    rp = sub.add_parser("repl", help="build and step a program interactively (MLIR or XlaBuilder calls)")
    rp.add_argument("file", nargs="?", metavar="FILE.mlir", help="start from this program")
    rp.set_defaults(fn=cmd_repl)
    xo = sub.add_parser("explore", help="open an op in the TUI's explorer, e.g. hlolab explore gather")
    xo.add_argument("op", metavar="OP")
    xo.set_defaults(fn=cmd_explore)

    ls = sub.add_parser("lessons", help="the guided lessons with your progress; `lessons check` checks "
                        "them by running every program and exercise")
    ls.add_argument("--lang", choices=("en", "zh", "es"), help="language (default: $HLOLAB_LANG or en)")
    ls.add_argument("--tui", action="store_true", help="the list in the TUI (open a lesson with Enter)")
    ls.set_defaults(fn=cmd_lessons)
    ls_sub = ls.add_subparsers(dest="lessons_command")
    lc = ls_sub.add_parser("check", help="run every lesson's programs, views and exercises "
                           "(exit 1 on failure)")
    lc.add_argument("lessons", nargs="*", metavar="N", help="only these lessons (number or slug)")
    lc.add_argument("--lang", choices=("en", "zh", "es"), help="compare only this translation")
    lc.add_argument("--strict", action="store_true", help="fail on missing translations too")
    lc.set_defaults(fn=cmd_lessons_check)
    le = sub.add_parser("lesson", help="follow lesson N in the terminal: prose, live programs, exercises")
    le.add_argument("lesson", metavar="N", help="the lesson's number or slug (hlolab lessons lists them)")
    le.add_argument("--lang", choices=("en", "zh", "es"), help="language (default: $HLOLAB_LANG or en)")
    le.add_argument("--plain", action="store_true", help="plain-terminal mode (rich text and prompts)")
    le.set_defaults(fn=cmd_lesson)
    sub.add_parser("ops", help="list the ops hlolab can execute").set_defaults(fn=cmd_ops)
    sub.add_parser("examples", help="list the built-in examples").set_defaults(fn=cmd_examples)
    return ap


def main(argv: list[str] | None = None) -> int:
    ap = build_parser()
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] in (["export"], ["explain"]):  # op parameters as --NAME VALUE: the schema checks them
        ns, extra = ap.parse_known_args(args)
        ns.extra = extra
    else:
        ns = ap.parse_args(args)
    if not getattr(ns, "fn", None):
        if args or not (sys.stdin.isatty() and sys.stdout.isatty()):
            ap.print_help()  # not a terminal: a TUI cannot run, say what hlolab does instead
            return 0
        from hlolab.tui import run_tui

        return run_tui()
    try:
        return ns.fn(ns)
    except UsageError as e:
        parser = getattr(ns, "parser", ap)
        parser.print_usage(sys.stderr)
        print(f"{parser.prog}: error: {e.message}", file=sys.stderr)
        return 2
    except HloLabError as e:
        print(str(e), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into e.g. `head`, which stopped reading
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
