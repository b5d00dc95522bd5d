"""Completion for the REPL (run in a thread by ``ThreadedCompleter``): commands, op and
builder names, the attributes of the op being typed with their types (inside
``stablehlo.gather(`` / ``Gather(``), SSA names, and file paths after ``:load``,
``:save``, ``:export`` and ``:args``."""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from prompt_toolkit.completion import CompleteEvent, Completer, Completion, PathCompleter
from prompt_toolkit.document import Document

from hlolab.repl.statements import is_mlir_statement

if TYPE_CHECKING:
    from hlolab.repl.app import Repl

_WORD_RE = re.compile(r"[%\w.$#\-]*$")
_MLIR_OP_RE = re.compile(r"\"?\b([a-z_]+\.[a-z_0-9.]+)\"?")
_BREAK_KINDS = ("op", "line", "name", "nan", "clear")


def op_attributes(name: str) -> list[tuple[str, str]]:
    """(field, type) of op ``name``'s attribute record (``gather`` or ``stablehlo.gather``)."""
    from hlolab.ops.registry import lookup
    from hlolab.repl.commands import attribute_fields

    opdef = lookup(name) or lookup("stablehlo." + name)
    if opdef is None:
        return []
    return [(f, t) for f, t, _ in attribute_fields(opdef)]


def builder_keywords(func: str) -> list[tuple[str, str]]:
    """(keyword, type) a builder call takes: its parameters, record fields flattened."""
    from hlolab.repl.calls import param_kind, record_keywords
    from hlolab.xla import FUNCTIONS

    fn = FUNCTIONS.get(func)
    if fn is None:
        return []
    records = record_keywords()
    out: list[tuple[str, str]] = []
    for i, p in enumerate(inspect.signature(fn).parameters.values()):
        if (i == 0 and p.name == "builder") or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        ann = p.annotation if isinstance(p.annotation, str) else getattr(p.annotation, "__name__", "")
        out.append((p.name, str(ann)))
        kind = param_kind(p, records)
        if kind.startswith("record:"):
            rk = records[kind[7:]]
            hints = getattr(rk.record, "__annotations__", {})
            for k in rk.keywords:
                out.append((k, f"{kind[7:]}: {hints.get(k, 'list[int]')}"))
    return out


def open_call(text: str) -> str | None:
    """The name of the innermost call whose parenthesis is still open at the end of ``text``."""
    stack: list[str | None] = []
    for m in re.finditer(r"\"(?:[^\"\\\n]|\\.)*\"|([\w.]+)?\s*(\()|[\[{]|[)\]}]", text):
        s = m.group()
        if m.group(2):
            stack.append(m.group(1))
        elif s in "[{":
            stack.append(None)
        elif s in ")]}" and stack:
            stack.pop()
    for name in reversed(stack):
        if name is not None:
            return name
    return None


class ReplCompleter(Completer):
    def __init__(self, repl: Repl):
        self.repl = repl
        self.paths = PathCompleter(expanduser=True)

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        self.repl.ready()
        text = document.text_before_cursor
        word = _WORD_RE.search(text).group()  # type: ignore[union-attr]
        stripped = text.lstrip()
        if stripped.startswith(":"):
            yield from self._command(stripped, word, document, complete_event)
            return
        if is_mlir_statement(stripped) or stripped.startswith("%"):
            yield from self._mlir(stripped, word)
            return
        yield from self._builder(stripped, word)

    # --- candidates ------------------------------------------------------------------
    def _values(self, word: str, percent: bool) -> Iterable[Completion]:
        for name in self.repl.program.b.names():
            if not percent and not name[:1].isalpha():
                continue  # %0 has no builder-language spelling (0 is a number there)
            shown = ("%" if percent else "") + name
            if shown.startswith(word):
                op = self.repl.program.b.lookup(name)
                yield Completion(shown, -len(word), display_meta=str(op.type))

    @staticmethod
    def _from(items: Iterable[tuple[str, str]], word: str, suffix: str = "") -> Iterable[Completion]:
        seen = set()
        for name, meta in items:
            if name.startswith(word) and name not in seen:
                seen.add(name)
                yield Completion(name + suffix, -len(word), display=name, display_meta=meta)

    def _command(self, text: str, word: str, document: Document,
                 event: CompleteEvent) -> Iterable[Completion]:
        from hlolab.repl.commands import COMMANDS

        head, sep, rest = text.partition(" ")
        if not sep:
            yield from self._from(((":" + c.name, c.summary) for c in COMMANDS.values()), head)
            return
        cmd = COMMANDS.get(head[1:])
        kind = cmd.completes if cmd is not None else ""
        if kind == "path" or (kind == "value" and head == ":export" and rest.count(" ") >= 2):
            last = rest.split(" ")[-1]
            yield from self.paths.get_completions(Document(last, len(last)), event)
        elif kind == "value":
            yield from self._values(word, percent=True)
        elif kind == "lang":
            yield from self._from((("en", "English"), ("zh", "Chinese"), ("es", "Spanish")), word)
        elif kind == "break":
            if " " not in rest:
                yield from self._from(((k, "") for k in _BREAK_KINDS), word)
            elif rest.startswith("name "):
                yield from self._values(word, percent=True)
            elif rest.startswith("op "):
                yield from self._ops(word)
        elif kind == "topic":
            yield from self._from(((c.name, "command") for c in COMMANDS.values()), word)
            yield from self._builder_names(word)
            yield from self._ops(word)

    def _ops(self, word: str) -> Iterable[Completion]:
        from hlolab.ops.registry import all_ops

        for name, d in sorted(all_ops().items()):
            short = name.removeprefix("stablehlo.")
            for shown in (name, short):
                if shown.startswith(word) and (shown == name or "." not in word):
                    yield Completion(shown, -len(word), display_meta=", ".join(d.aliases))
                    break

    def _builder_names(self, word: str) -> Iterable[Completion]:
        from hlolab.xla import FUNCTIONS

        for name in sorted(FUNCTIONS):
            if name.startswith(word):
                doc = (inspect.getdoc(FUNCTIONS[name]) or "").split("\n")[0]
                yield Completion(name, -len(word), display_meta=doc[:60])

    def _mlir(self, text: str, word: str) -> Iterable[Completion]:
        if word.startswith("%"):
            yield from self._values(word, percent=True)
            return
        ops = list(_MLIR_OP_RE.finditer(text))
        if ops:  # past the op name, in its operands or attributes: the op's attribute fields
            after = text[ops[-1].end():]
            if any(c in after for c in "({<"):
                yield from self._from(op_attributes(ops[-1].group(1)), word, " = ")
                return
        yield from self._ops(word)

    def _builder(self, text: str, word: str) -> Iterable[Completion]:
        func = open_call(text)
        if func is not None:
            before = text[:len(text) - len(word)].rstrip()
            if before.endswith(("(", ",")):
                yield from self._from(builder_keywords(func), word, "=")
            yield from self._values(word, percent=False)
            if word[:1].isupper():
                yield from self._builder_names(word)
            return
        if "=" in text:
            yield from self._builder_names(word)
            yield from self._values(word, percent=False)
        else:
            yield from self._values(word, percent=False)
            yield from self._builder_names(word)


def completions(repl: Repl, text: str) -> list[Completion]:
    """The completions offered at the end of ``text`` (for tests and scripts)."""
    c = ReplCompleter(repl)
    return list(c.get_completions(Document(text, len(text)), CompleteEvent(completion_requested=True)))
