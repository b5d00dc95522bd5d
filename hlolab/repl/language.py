"""The REPL's builder language: XlaBuilder calls written as statements, parsed by
hlolab itself (never Python ``eval``).

Grammar (one statement per input)::

    stmt    := [target (',' target)* '='] expr
    target  := NAME | %NAME
    expr    := '-'? atom
    atom    := NUMBER | STRING | 'True' | 'False' | ref
             | NAME '(' [arg (',' arg)* [',']] ')'          a builder call
             | ETYPE '[' [INT (',' INT)*] ']'               a shape: f32[2,3], s32[]
             | '[' [expr (',' expr)*] ']' [':' ETYPE]       a list; with a type: a constant
    arg     := NAME '=' expr | expr
    ref     := NAME | %NAME | %NAME#k                       a value of the program

Names start with a letter (so ``__import__`` is not a name), there is no
attribute access, indexing or operator: anything else is a ``ParseError``
``<repl>:1:col`` with the line and a caret.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from hlolab.errors import ParseError, SourceLoc

FILENAME = "<repl>"

# XLA's element type names and the MLIR ones hlolab uses; MLIR names are accepted too
XLA_ELEMENT_TYPES = {
    "pred": "i1", "s2": "i2", "s4": "i4", "s8": "i8", "s16": "i16", "s32": "i32", "s64": "i64",
    "u2": "ui2", "u4": "ui4", "u8": "ui8", "u16": "ui16", "u32": "ui32", "u64": "ui64",
    "f16": "f16", "bf16": "bf16", "f32": "f32", "f64": "f64", "c64": "complex<f32>",
    "c128": "complex<f64>", "f4e2m1fn": "f4E2M1FN", "f6e2m3fn": "f6E2M3FN", "f6e3m2fn": "f6E3M2FN",
    "f8e3m4": "f8E3M4", "f8e4m3": "f8E4M3", "f8e4m3fn": "f8E4M3FN", "f8e4m3fnuz": "f8E4M3FNUZ",
    "f8e4m3b11fnuz": "f8E4M3B11FNUZ", "f8e5m2": "f8E5M2", "f8e5m2fnuz": "f8E5M2FNUZ",
    "f8e8m0fnu": "f8E8M0FNU",
}
_MLIR_INT_RE = re.compile(r"(?:i|ui|si)(?:1|2|4|8|16|32|64)")


def mlir_element_name(name: str) -> str | None:
    """The MLIR spelling of element type ``name`` (``s32`` -> ``i32``), or None."""
    low = name.lower()
    if low in XLA_ELEMENT_TYPES:
        return XLA_ELEMENT_TYPES[low]
    if _MLIR_INT_RE.fullmatch(name):
        return name
    return None


def xla_element_name(mlir: str) -> str:
    """The XLA spelling of an MLIR element type (``i32`` -> ``s32``)."""
    for k, v in XLA_ELEMENT_TYPES.items():
        if v == mlir and not k.startswith("f8") and not k.startswith("f4") and not k.startswith("f6"):
            return k
    for k, v in XLA_ELEMENT_TYPES.items():
        if v == mlir:
            return k
    return mlir


# --- the syntax tree ---------------------------------------------------------------
@dataclass
class Node:
    col: int  # 1-based column where the node starts


@dataclass
class Number(Node):
    value: int | float
    text: str = ""
    etype: str | None = None  # ``0:f32`` is a scalar constant of that type


@dataclass
class String(Node):
    value: str


@dataclass
class Bool(Node):
    value: bool


@dataclass
class Ref(Node):
    name: str  # without the leading %


@dataclass
class ShapeLit(Node):
    etype: str  # as written (s32, f32, i1, ...)
    dims: list[int]

    @property
    def mlir_element(self) -> str:
        name = mlir_element_name(self.etype)
        assert name is not None
        return name

    def text(self) -> str:
        return f"{self.etype}[{','.join(map(str, self.dims))}]"


@dataclass
class ListLit(Node):
    items: list[Node]
    etype: str | None = None  # ``[[1,2]]:f32`` is a constant of that type


@dataclass
class Keyword:
    name: str
    value: Node
    col: int


@dataclass
class Call(Node):
    func: str
    args: list[Node] = field(default_factory=list)
    kwargs: list[Keyword] = field(default_factory=list)
    end: int = 0  # column just after the closing parenthesis


@dataclass
class Statement:
    targets: list[tuple[str, int]]  # (name, column)
    expr: Node
    text: str


# --- tokens ------------------------------------------------------------------------
_TOKEN_RE = re.compile(
    r"(?P<ws>[ \t\r\n]+)"
    r"|(?P<comment>(?://|#)[^\n]*)"
    r"|(?P<number>(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|[0-9]+[eE][-+]?[0-9]+|0x[0-9A-Fa-f]+|[0-9]+)"
    r"|(?P<name>[A-Za-z][A-Za-z0-9_]*)"
    r"|(?P<ref>%[A-Za-z0-9_$.\-]+(?:#[0-9]+)?)"
    r"|(?P<string>\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*')"
    r"|(?P<punct>[()\[\],=:\-])"
)
_SPECIAL_FLOATS = {"inf": float("inf"), "nan": float("nan")}


@dataclass
class Tok:
    kind: str  # number name ref string punct eof
    text: str
    pos: int  # 0-based offset


def error_at(text: str, pos: int, message: str, line: int = 1) -> ParseError:
    """A ``<repl>:line:col: error:`` with the line and a caret under offset ``pos``."""
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    src = text[start:] if end < 0 else text[start:end]
    ln = line + text.count("\n", 0, start)
    return ParseError(message, SourceLoc(FILENAME, ln, pos - start + 1, src))


def tokenize(text: str) -> list[Tok]:
    out: list[Tok] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN_RE.match(text, pos)
        if m is None:
            ch = text[pos]
            hint = ""
            if ch == "_":
                hint = " (names start with a letter)"
            elif ch in ".+*/@{}":
                hint = " (the builder language has calls, names, numbers, lists and shapes only)"
            raise error_at(text, pos, f"unexpected character {ch!r}{hint}")
        kind = m.lastgroup or ""
        if kind not in ("ws", "comment"):
            out.append(Tok(kind, m.group(), pos))
        pos = m.end()
    out.append(Tok("eof", "", len(text)))
    return out


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.toks = tokenize(text)
        self.i = 0

    @property
    def tok(self) -> Tok:
        return self.toks[self.i]

    def col(self, t: Tok | None = None) -> int:
        t = t or self.tok
        return t.pos - (self.text.rfind("\n", 0, t.pos) + 1) + 1

    def advance(self) -> Tok:
        t = self.toks[self.i]
        if t.kind != "eof":
            self.i += 1
        return t

    def at(self, text: str) -> bool:
        return self.tok.kind == "punct" and self.tok.text == text

    def accept(self, text: str) -> bool:
        if self.at(text):
            self.advance()
            return True
        return False

    def describe(self, t: Tok) -> str:
        return "the end of the statement" if t.kind == "eof" else f"'{t.text}'"

    def error(self, message: str, t: Tok | None = None) -> ParseError:
        return error_at(self.text, (t or self.tok).pos, message)

    def expect(self, text: str, context: str) -> Tok:
        if not self.at(text):
            raise self.error(f"expected '{text}' {context}, got {self.describe(self.tok)}")
        return self.advance()

    # --- statements -------------------------------------------------------------
    def statement(self) -> Statement:
        targets: list[tuple[str, int]] = []
        if self._at_assignment():
            while True:
                t = self.advance()
                targets.append((t.text.lstrip("%"), self.col(t)))
                if not self.accept(","):
                    break
            self.expect("=", "after the names being defined")
        expr = self.expr()
        if self.tok.kind != "eof":
            raise self.error(f"unexpected {self.describe(self.tok)} after the expression")
        return Statement(targets, expr, self.text)

    def _at_assignment(self) -> bool:
        """``a = ...`` or ``a, b = ...``: names, commas, then '=' (not a keyword of a call)."""
        j = self.i
        while True:
            if self.toks[j].kind not in ("name", "ref") or "#" in self.toks[j].text:
                return False
            j += 1
            t = self.toks[j]
            if t.kind == "punct" and t.text == "=":
                return True
            if not (t.kind == "punct" and t.text == ","):
                return False
            j += 1

    # --- expressions --------------------------------------------------------------
    def expr(self) -> Node:
        if self.at("-"):
            minus = self.advance()
            if self.tok.kind == "number" or (self.tok.kind == "name" and self.tok.text in _SPECIAL_FLOATS):
                n = self.atom()
                assert isinstance(n, Number)
                return Number(self.col(minus), -n.value, "-" + n.text, n.etype)
            raise self.error("'-' applies to a number only", minus)
        return self.atom()

    def atom(self) -> Node:
        t = self.tok
        col = self.col(t)
        if t.kind == "number":
            self.advance()
            return Number(col, _number(t.text), t.text, self.optional_etype())
        if t.kind == "string":
            self.advance()
            return String(col, _unquote(t.text))
        if t.kind == "ref":
            self.advance()
            return Ref(col, t.text[1:])
        if t.kind == "name":
            self.advance()
            if t.text in ("True", "False", "true", "false"):
                return Bool(col, t.text in ("True", "true"))
            if t.text in _SPECIAL_FLOATS and not self.at("("):
                return Number(col, _SPECIAL_FLOATS[t.text], t.text, self.optional_etype())
            if self.at("("):
                return self.call(t)
            if self.at("["):
                if mlir_element_name(t.text) is None:
                    raise self.error(f"'{t.text}[...]': the builder language has no indexing (a shape starts "
                                     "with an element type: s32[4], f32[2,3], pred[])")
                return self.shape(t)
            return Ref(col, t.text)
        if self.at("["):
            return self.list_literal()
        if t.kind == "eof":
            raise self.error("expected an expression, got the end of the statement")
        raise self.error(f"expected an expression, got {self.describe(t)}")

    def call(self, name: Tok) -> Call:
        call = Call(self.col(name), name.text)
        self.expect("(", "to open the arguments")
        while not self.at(")"):
            if self.tok.kind == "name" and self.toks[self.i + 1].kind == "punct" \
                    and self.toks[self.i + 1].text == "=":
                kw = self.advance()
                self.advance()
                if any(k.name == kw.text for k in call.kwargs):
                    raise self.error(f"keyword '{kw.text}' given twice", kw)
                call.kwargs.append(Keyword(kw.text, self.expr(), self.col(kw)))
            else:
                if call.kwargs:
                    raise self.error("a positional argument after keyword arguments")
                call.args.append(self.expr())
            if not self.accept(","):
                break
        close = self.expect(")", f"to close the arguments of {name.text}")
        call.end = self.col(close) + 1
        return call

    def shape(self, name: Tok) -> ShapeLit:
        self.expect("[", "")
        dims: list[int] = []
        while not self.at("]"):
            t = self.tok
            if t.kind != "number" or not t.text.isdigit():
                raise self.error(f"expected a dimension size (a whole number), got {self.describe(t)}")
            self.advance()
            dims.append(int(t.text))
            if not self.accept(","):
                break
        self.expect("]", "to close the shape")
        return ShapeLit(self.col(name), name.text, dims)

    def list_literal(self) -> ListLit:
        open_ = self.expect("[", "")
        lit = ListLit(self.col(open_), [])
        while not self.at("]"):
            lit.items.append(self.expr())
            if not self.accept(","):
                break
        self.expect("]", "to close the list")
        lit.etype = self.optional_etype()
        return lit

    def optional_etype(self) -> str | None:
        """``:f32`` after a literal: its element type."""
        if not self.at(":"):
            return None
        self.advance()
        t = self.tok
        if t.kind != "name" or mlir_element_name(t.text) is None:
            raise self.error(f"expected an element type after ':' (f32, s32, pred, ...), "
                             f"got {self.describe(t)}")
        self.advance()
        return t.text


def _number(text: str) -> int | float:
    if text.startswith("0x"):
        return int(text, 16)
    if any(c in text for c in ".eE"):
        return float(text)
    return int(text)


def _unquote(text: str) -> str:
    body = text[1:-1]
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), body)


def parse_statement(text: str) -> Statement:
    """Parse one builder-language statement; ``ParseError`` with ``<repl>:1:col``."""
    if not text.strip():
        raise error_at(text, 0, "empty statement")
    return _Parser(text).statement()


def parse_expression(text: str) -> Node:
    p = _Parser(text)
    node = p.expr()
    if p.tok.kind != "eof":
        raise p.error(f"unexpected {p.describe(p.tok)} after the expression")
    return node


def literal_value(node: Node) -> Any:
    """A plain Python value of a literal (numbers, strings, bools, nested lists)."""
    if isinstance(node, (Number, String, Bool)):
        return node.value
    if isinstance(node, ListLit) and node.etype is None:
        items = [literal_value(i) for i in node.items]
        return None if any(i is None for i in items) else items
    return None


def is_complete(text: str) -> bool:
    """Brackets balance outside strings: Enter submits, else a new line continues."""
    depth = 0
    for m in re.finditer(r"\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'|[()\[\]]", text):
        s = m.group()
        if s in "([":
            depth += 1
        elif s in ")]":
            depth -= 1
    return depth <= 0 and not text.rstrip().endswith((",", "=", "("))
