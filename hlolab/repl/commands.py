"""The REPL's ``:commands``. Each is a function ``(repl, argument text)`` registered
with its usage line and what its argument completes to; they print through the
REPL and reuse the CLI's building blocks (Session, explain_element, format_trace,
the exporters)."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hlolab.errors import HloLabError
from hlolab.messages import Msg
from hlolab.messages import text as msg_text

if TYPE_CHECKING:
    from hlolab.repl.app import Repl


@dataclass
class Command:
    name: str
    fn: Callable[[Repl, str], None]
    usage: str
    summary: str
    completes: str = ""  # "path", "value", "op", "topic", "lang", "break": what the argument is


COMMANDS: dict[str, Command] = {}


def command(usage: str, summary: str, completes: str = "") -> Callable[[Callable[[Repl, str], None]],
                                                                      Callable[[Repl, str], None]]:
    def register(fn: Callable[[Repl, str], None]) -> Callable[[Repl, str], None]:
        name = fn.__name__.removeprefix("cmd_")
        COMMANDS[name] = Command(name, fn, usage, summary, completes)
        return fn
    return register


class CommandError(HloLabError):
    """A command used wrongly: the message says how to use it."""


def run_command(repl: Repl, line: str) -> None:
    word, _, rest = line.strip()[1:].partition(" ")
    cmd = COMMANDS.get(word)
    if cmd is None:
        import difflib

        near = difflib.get_close_matches(word, list(COMMANDS), 3)
        hint = f" (did you mean {', '.join(':' + n for n in near)}?)" if near else ""
        raise CommandError(f"unknown command :{word}{hint}; :help lists them")
    cmd.fn(repl, rest.strip())


_ELEMENT_RE = re.compile(r"^\s*(@[\w$.]+:)?%?([\w$.\-]+(?:#\d+)?)\s*(?:\[([^\]]*)\])?\s*(.*)$")


def parse_element(text: str, usage: str) -> tuple[str, tuple[int, ...], str]:
    """``%x[1,2] rest`` -> ("%x", (1, 2), "rest")."""
    from hlolab.trace.locate import parse_index

    m = _ELEMENT_RE.match(text)
    if not text.strip() or m is None:
        raise CommandError(f"usage: {usage}")
    return (m.group(1) or "") + "%" + m.group(2), parse_index(m.group(3) or ""), m.group(4).strip()


# --- help ------------------------------------------------------------------------------
LANGUAGE_HELP = """\
Two languages, one namespace (the builder name x is the SSA value %x):
  MLIR      %z = stablehlo.add %x, %y : tensor<2x3xf32>      (pretty or generic; regions
            continue over lines until the brackets balance)
  builder   x = Parameter(f32[2,3])        an input (numbered automatically)
            i = Iota(s32[4,8], 1)          a shape literal: element type [dims]
            c = [[1,2],[3,4]]:f32          a constant; 0.5:f32 a scalar one
            z = Pad(x, 0, low=[1,0], high=[0,2], interior=[1,0])
                                           a bare 0 takes x's element type; record
                                           fields (PaddingConfig, GatherDimensionNumbers,
                                           ...) may be given flat as keywords
            s = Reduce(x, 0:f32, Add, dimensions_to_reduce=[1])
                                           a computation: a binary builder function's name
Each statement is verified, run, and its value printed. Enter submits a complete
statement; an open bracket continues on the next line. Ctrl-C drops the line,
Ctrl-D on an empty line quits.
:help OP (Gather, stablehlo.gather, pad) shows an op; :help COMMAND a command."""


@command(":help [COMMAND|OP]", "this help; an op's attributes and builder signature", "topic")
def cmd_help(repl: Repl, arg: str) -> None:
    if not arg:
        repl.say(LANGUAGE_HELP)
        repl.say("\ncommands:")
        for c in COMMANDS.values():
            long = len(c.usage) > 34  # on its own line, the summary under it
            repl.say(f"  {c.usage}\n  {'':34s} {c.summary}" if long else f"  {c.usage:34s} {c.summary}")
        return
    name = arg.lstrip(":")
    if name in COMMANDS and not _op_help(repl, name, quiet=True):
        c = COMMANDS[name]
        repl.say(f"{c.usage}\n  {c.summary}")
        return
    if not _op_help(repl, arg):
        raise CommandError(f"no command or op named '{arg}' (:ops lists the ops)")


def _op_help(repl: Repl, name: str, quiet: bool = False) -> bool:
    """The op definition's doc and attribute record, and the builder function's signature."""
    from hlolab.ops.registry import all_ops, lookup
    from hlolab.xla import FUNCTIONS

    fn = FUNCTIONS.get(name)
    opdef = lookup(name) or lookup("stablehlo." + name)
    if opdef is None and fn is not None:
        for d in all_ops().values():
            if name in d.aliases:
                opdef = d
                break
    if opdef is None and fn is None:
        return False
    if opdef is not None:
        alias = f"  (builder: {', '.join(opdef.aliases)})" if opdef.aliases else ""
        repl.say(repl.paint(opdef.name, "name") + alias)
        if opdef.doc:
            repl.say("  " + opdef.doc.strip().replace("\n", "\n  "))
        fields = attribute_fields(opdef)
        if fields:
            repl.say("attributes:")
            for fname, ftype, default in fields:
                d = "" if default is None else f" = {default}"
                repl.say(f"  {fname}: {ftype}{d}")
    if fn is None and opdef is not None:
        fn = next((FUNCTIONS[a] for a in opdef.aliases if a in FUNCTIONS), None)
    if fn is not None:
        from hlolab.repl.calls import describe_params

        repl.say(f"builder: {fn.__name__}({', '.join(describe_params(fn))})")
        doc = inspect.getdoc(fn)
        if doc:
            repl.say("  " + doc.splitlines()[0])
    return True


def attribute_fields(opdef: Any) -> list[tuple[str, str, Any]]:
    """(name, type, default or None) of an op's attribute record."""
    import dataclasses

    attrs = getattr(opdef, "attrs", None)
    if attrs is None or not dataclasses.is_dataclass(attrs):
        return []
    out = []
    for f in dataclasses.fields(attrs):
        t = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
        default = f.default if f.default is not dataclasses.MISSING else None
        out.append((f.name, t, default))
    return out


@command(":ops", "the builder functions and the StableHLO/CHLO ops")
def cmd_ops(repl: Repl, arg: str) -> None:
    import textwrap

    from hlolab.ops.registry import all_ops
    from hlolab.xla import FUNCTIONS

    names = sorted(FUNCTIONS)
    repl.say(f"builder functions ({len(names)}):")
    repl.say(textwrap.fill(" ".join(names), 100, initial_indent="  ", subsequent_indent="  "))
    ops = sorted(all_ops())
    repl.say(f"ops ({len(ops)}; MLIR statements, :help OP):")
    repl.say(textwrap.fill(" ".join(ops), 100, initial_indent="  ", subsequent_indent="  "))


# --- values ----------------------------------------------------------------------------
@command(":show %x", "a value, its type and the op that made it", "value")
def cmd_show(repl: Repl, arg: str) -> None:
    from hlolab.ir.printer import print_op

    name, index, rest = parse_element(arg, ":show %x")
    if rest:
        raise CommandError("usage: :show %x")
    op, value = repl.program.value(name)
    repl.show_value(op.name, value, op.type)
    producer = repl.program.producer(name)
    if producer is None:
        number = [p.value for p in repl.program.b.parameters()].index(op.value)
        given = "bound with :args" if number in repl.program.bound else f"random, seed {repl.program.seed}"
        repl.say(f"made by: parameter {number} of @{repl.program.b.name} ({given})")
    else:
        repl.say("made by: " + print_op(producer).strip().replace("\n", "\n  "))


def _ran_session(repl: Repl) -> Any:
    s = repl.program.session()
    stop = s.run(max_steps=10**12)
    if stop.error is not None:
        raise stop.error
    return s


@command(":explain %x[i,j]", "how one element was computed (the op's formula, its sources)", "value")
def cmd_explain(repl: Repl, arg: str) -> None:
    from hlolab.session import explain_element
    from hlolab.trace.explain import format_explanation

    name, index, _ = parse_element(arg, ":explain %x[i,j]")
    s = _ran_session(repl)
    e = explain_element(s, name, index)
    if e.event is None:
        repl.say(msg_text(Msg("explain.argument_element", name=name, index=list(e.index), element=e.element,
                              k=e.value[1], func=s.func.name), repl.lang))
        return
    repl.say(f"{name}{list(e.index)} = {e.event.op.name}")
    if e.explanation is not None:
        repl.say(format_explanation(e.explanation, lang=repl.lang))
    if e.sources:
        repl.say(msg_text(Msg("explain.sources"), repl.lang))
        implicit = msg_text(Msg("explain.implicit"), repl.lang)
        for src in e.sources:
            repl.say(f"  {src.label or implicit}[{', '.join(map(str, src.source.index))}]  "
                     f"{src.source.role}")


def _trace(repl: Repl, arg: str, forward: bool) -> None:
    from hlolab.trace.format import format_trace

    usage = ":targets %a[i,j]" if forward else ":trace %x[i,j]"
    name, index, _ = parse_element(arg, usage)
    s = _ran_session(repl)
    trace = (s.targets if forward else s.sources)(name, index)
    repl.say(format_trace(s, trace))


@command(":trace %x[i,j]", "every input element an element depends on, and how", "value")
def cmd_trace(repl: Repl, arg: str) -> None:
    _trace(repl, arg, forward=False)


@command(":targets %a[i,j]", "every element an element flows into", "value")
def cmd_targets(repl: Repl, arg: str) -> None:
    _trace(repl, arg, forward=True)


# --- stepping ---------------------------------------------------------------------------
@command(":step [N]", "run the program one op (N ops) further and show it")
def cmd_step(repl: Repl, arg: str) -> None:
    s = repl.stepper()
    n = _count(arg, ":step [N]")
    repl.show_stop(s.step(n))


@command(":back [N]", "one op (N ops) back")
def cmd_back(repl: Repl, arg: str) -> None:
    s = repl.stepper()
    repl.show_stop(s.step_back(_count(arg, ":back [N]")))


@command(":run", "run to the next breakpoint or the end")
def cmd_run(repl: Repl, arg: str) -> None:
    repl.show_stop(repl.stepper().run())


def _count(arg: str, usage: str) -> int:
    if not arg:
        return 1
    if not arg.isdigit() or int(arg) < 1:
        raise CommandError(f"usage: {usage} (N a whole number >= 1)")
    return int(arg)


BREAK_USAGE = ":break op NAME | line N | name %x | nan | clear"


@command(BREAK_USAGE, "stop :run at an op, a statement number, a value, the first NaN/Inf", "break")
def cmd_break(repl: Repl, arg: str) -> None:
    kind, _, value = arg.partition(" ")
    value = value.strip()
    if not kind:
        if not repl.breakpoints:
            repl.say("no breakpoints")
        for k, v in repl.breakpoints:
            repl.say(f"  {k} {v}".rstrip())
        return
    if kind == "clear":
        repl.breakpoints.clear()
        repl.stepper_session = None
        repl.say("breakpoints cleared")
        return
    if kind in ("nan", "inf", "nonfinite"):
        kind, value = "nonfinite", ""
    elif kind not in ("op", "line", "name") or not value:
        raise CommandError(f"usage: {BREAK_USAGE}")
    if kind == "line":  # statements are the REPL's lines: statement N's values
        if not value.isdigit() or not 1 <= int(value) <= len(repl.program.entries):
            raise CommandError(f"line {value}: the program has statements 1..{len(repl.program.entries)}")
    repl.breakpoints.append((kind, value))
    repl.stepper_session = None  # the next :step/:run starts over with the new set
    repl.say(f"breakpoint: {kind} {value}".rstrip())


# --- the program --------------------------------------------------------------------------
@command(":undo", "remove the last statement")
def cmd_undo(repl: Repl, arg: str) -> None:
    e = repl.program.undo()
    if e is None:
        repl.say("nothing to undo")
        return
    first = e.text.strip().splitlines()[0] if e.kind == "statement" else f":load {e.path}"
    repl.say(f"undone: {first}")


@command(":reset", "start a new, empty program")
def cmd_reset(repl: Repl, arg: str) -> None:
    repl.program.reset()
    repl.breakpoints.clear()
    repl.say("the program is empty")


@command(":load FILE.mlir", "add a module's entry function (its args become parameters)", "path")
def cmd_load(repl: Repl, arg: str) -> None:
    if not arg:
        raise CommandError("usage: :load FILE.mlir")
    values = repl.program.load(Path(arg).expanduser())
    repl.say(f"loaded {arg}: {len(values)} value{'s' if len(values) != 1 else ''}")
    for v in values[-1:]:
        repl.show_value(v.name, repl.program.cache.get(v.value), v.type)


@command(":save FILE.mlir", "write the program as MLIR (hlolab run FILE reads it)", "path")
def cmd_save(repl: Repl, arg: str) -> None:
    if not arg:
        raise CommandError("usage: :save FILE.mlir")
    p = repl.program.save(Path(arg).expanduser())
    root = ", ".join("%" + v.name for v in repl.program.root())
    repl.say(f"saved {p} (returns {root or 'the last value'})")


@command(":args [N|%x VALUE | seed N]", "show or bind inputs: a .npy file, a literal, or a seed", "path")
def cmd_args(repl: Repl, arg: str) -> None:
    prog = repl.program
    if not arg:
        params = prog.b.parameters()
        if not params:
            repl.say("the program has no parameters (x = Parameter(f32[2,3]) declares one)")
        for i, p in enumerate(params):
            how = "bound" if i in prog.bound else f"random, seed {prog.seed}"
            repl.say(f"  {i}: %{p.name} : {p.type}  ({how})")
        return
    head, _, rest = arg.partition(" ")
    rest = rest.strip()
    if head == "seed":
        if not re.fullmatch(r"-?\d+", rest):
            raise CommandError("usage: :args seed N")
        prog.reseed(int(rest))
        repl.say(f"inputs: random, seed {rest}")
        return
    params = prog.b.parameters()
    if head.isdigit():
        number = int(head)
    else:
        names = ["%" + p.name for p in params]
        want = head if head.startswith("%") else "%" + head
        if want not in names:
            raise CommandError(f"no parameter {want} (parameters: {', '.join(names) or 'none'})")
        number = names.index(want)
    if not rest:
        raise CommandError("usage: :args N|%x FILE.npy | LITERAL ([[1,2],[3,4]] or dense<...> : tensor<...>)")
    if number >= len(params):
        raise CommandError(f"no parameter {number} (the program has {len(params)})")
    value = input_literal(rest, params[number].type)
    prog.bind(number, value)
    p = params[number]
    repl.show_value(p.name, prog.cache.get(p.value), p.type)


def input_literal(text: str, t: Any) -> Any:
    """A value for a parameter of type ``t``: a ``.npy`` file, a ``dense<...>`` literal, or
    a builder-language list literal / number."""
    import numpy as np

    from hlolab.interp.inputs import input_value, load_npy

    if text.endswith(".npy"):
        return load_npy(Path(text).expanduser())
    if text.startswith("dense<"):
        return input_value(text, t, "the value")
    from hlolab.repl.language import literal_value, parse_expression

    node = parse_expression(text)
    v = literal_value(node)
    if v is None:
        raise CommandError("expected a .npy file, a dense<...> literal, or a list of numbers")
    try:
        arr = np.array(v).astype(t.element.dtype)
    except (ValueError, TypeError, AttributeError) as e:
        raise CommandError(f"cannot make a {t} from {text}: {e}") from None
    if arr.shape != tuple(t.shape):
        raise CommandError(f"the value has shape {list(arr.shape)}; the parameter is {t}")
    return arr


@command(":export %x[i,j] png|svg|gif [PATH]", "draw the op that made an element", "value")
def cmd_export(repl: Repl, arg: str) -> None:
    from hlolab.render import export

    name, index, rest = parse_element(arg, ":export %x[i,j] png|svg|gif [PATH]")
    words = rest.split()
    fmt = words[0].lower() if words else "png"
    if fmt not in export.FORMATS:
        raise CommandError(f"unknown format '{fmt}' (one of {', '.join(export.FORMATS)})")
    path = words[1] if len(words) > 1 else f"{name.lstrip('%').split('#')[0]}.{fmt}"
    s = _ran_session(repl)
    target = export.program_target(s, name, [index] if index else [])
    written, frames = export.write(target, fmt, Path(path).expanduser())
    repl.say(f"wrote {written}" + (f" ({frames} frames)" if frames > 1 else ""))


@command(":tui", "open the program in the TUI stepper at the current step (back here on exit)")
def cmd_tui(repl: Repl, arg: str) -> None:
    from hlolab.repl.tui import open_in_tui

    open_in_tui(repl)


@command(":quit", "leave (as Ctrl-D on an empty line; asks when the program is not saved)")
def cmd_quit(repl: Repl, arg: str) -> None:
    repl.quitting = True


@command(":lesson N", "follow lesson N here (answer, hint, show, skip, quit); :lang sets its language")
def cmd_lesson(repl: Repl, arg: str) -> None:
    from prompt_toolkit import PromptSession
    from rich.console import Console

    from hlolab.lessons.plain import follow

    if not arg:
        raise CommandError("usage: :lesson N (hlolab lessons lists them)")
    console = Console(file=repl.out, force_terminal=repl.colour, no_color=not repl.colour,
                      highlight=False, soft_wrap=True)
    session: PromptSession[str] = PromptSession()
    follow(arg, repl.lang, console=console, ask=lambda q: session.prompt(q))


@command(":lang en|zh|es", "the language of explanations", "lang")
def cmd_lang(repl: Repl, arg: str) -> None:
    from hlolab.messages import languages

    if not arg:
        repl.say(f"language: {repl.lang} (available: en, zh, es; catalogues: {', '.join(languages())})")
        return
    if arg not in ("en", "zh", "es"):
        raise CommandError("usage: :lang en|zh|es")
    repl.lang = arg
    missing = "" if arg in languages() else " (no catalogue yet: each text falls back to English)"
    repl.say(f"explanations in {arg}{missing}")
