"""MLIR statements typed at the REPL, parsed by hlolab's own parser in the scope of
the program being built (the builder's values are the SSA names in scope)."""

from __future__ import annotations

import re
from typing import Any

from hlolab.repl.language import FILENAME

# [%r, %s:2 =] then a generic op ("stablehlo.add") or a dialect-qualified pretty one
_MLIR_RE = re.compile(r"\s*(?:%[\w$.\-]+(?::\d+)?\s*(?:,\s*%[\w$.\-]+(?::\d+)?\s*)*=\s*)?"
                      r"(?:\"|[A-Za-z_][\w$]*\.[A-Za-z_])")
_BRACKETS = {"(": ")", "[": "]", "{": "}"}
_SKIP_RE = re.compile(r"\"(?:[^\"\\\n]|\\.)*\"|//[^\n]*|->|::|[()\[\]{}<>=:]")


def is_mlir_statement(text: str) -> bool:
    """An MLIR statement (``%z = stablehlo.add ...``, ``"stablehlo.add"(...)``), not the
    builder language (``z = Add(x, y)``) or a command."""
    return _MLIR_RE.match(text) is not None


def is_complete(text: str) -> bool:
    """Brackets (regions, attribute dicts, operand lists, ``tensor<...>``) balance, the
    op's type has begun (a ``:`` outside brackets after the result names) and the text
    does not end where more must follow: Enter submits, else it continues. An empty
    last line submits whatever there is (the parser then says what is missing)."""
    if text.endswith("\n") and text.strip():
        return True
    depth = 0
    assigned = not re.match(r"\s*%", text)  # no result names: the op starts at once
    typed = False
    for m in _SKIP_RE.finditer(text):
        s = m.group()
        if s in ("(", "[", "{", "<"):
            depth += 1
        elif s in (")", "]", "}", ">"):
            depth -= 1
        elif depth == 0 and s == "=":
            assigned = True
        elif depth == 0 and s == ":" and assigned:
            typed = True
    tail = re.sub(r"//[^\n]*", "", text).rstrip()
    return depth <= 0 and typed and not tail.endswith((",", "=", ":", "->", "(", "{", "["))


def parse_in_scope(text: str, scope: dict[str, Any], line: int = 1) -> Any:
    """One op parsed from ``text`` with ``scope`` (``%name`` -> Value) as the SSA values
    already defined; a ``ParseError`` at ``<repl>:line:col`` otherwise."""
    from hlolab.ir.parser import Parser

    p = Parser(text, FILENAME, line)
    p.values = dict(scope)
    p.push_scope()
    try:
        op = p.parse_statement()
    except RecursionError:
        raise p.error("nesting too deep to parse") from None
    p.expect_end("after the statement (one statement at a time)")
    return op
