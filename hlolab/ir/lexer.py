"""Tokens of the MLIR text format, produced on demand from a position.

The lexer is pull-based: ``Lexer.lex(pos)`` returns the token starting at or
after ``pos`` (skipping blanks and ``//`` comments). The parser keeps the
current token and asks for the next one from its end, which lets it re-scan
the few places where MLIR is not context free: the shape of a ``tensor<...>``
(``2x?x3x``), the raw body of ``dense<...>`` and the balanced text of
``loc(...)`` and unknown ``#dialect<...>`` attributes.
"""

from __future__ import annotations

import bisect
import re

from hlolab.errors import ParseError, SourceLoc

# token kinds
EOF = "eof"
BARE = "bare"  # bare identifier / keyword: func.func, tensor, f32, e5m10, x
VALUE = "value"  # %name or %name#3
CARET = "caret"  # ^bb0
AT = "at"  # @name or @"quoted"
HASH = "hash"  # #stablehlo, #stablehlo.gather, #loc3
BANG = "bang"  # !stablehlo.token, !quant.uniform
INT = "int"  # 12 or 0x1F
FLOAT = "float"  # 1.5, 2.0e-3
STRING = "string"  # "text" (token text keeps the quotes)
PUNCT = "punct"  # ( ) { } [ ] < > , : = ? * + - -> ::
DIMS = "dims"  # the dimension prefix of a shaped type: "2x?x3x" (re-scanned on demand)
BODY = "body"  # the raw text between "dense<" and its ">" (re-scanned on demand)

_SUFFIX = r"(?:[0-9]+|[A-Za-z$._\-][A-Za-z0-9$._\-]*)"
_TOKEN_RE = re.compile(
    r"(?P<float>[0-9]+\.[0-9]*(?:[eE][-+]?[0-9]+)?|[0-9]+[eE][-+]?[0-9]+)"
    r"|(?P<int>0x[0-9A-Fa-f]+|[0-9]+)"
    r"|(?P<bare>[A-Za-z_][A-Za-z0-9_$.]*)"
    rf"|(?P<value>%{_SUFFIX}(?:#[0-9]+)?)"
    rf"|(?P<caret>\^{_SUFFIX})"
    r"|(?P<at>@(?:[A-Za-z_][A-Za-z0-9_$.]*|\"(?:[^\"\\\n]|\\.)*\"))"
    rf"|(?P<hash>#{_SUFFIX})"
    rf"|(?P<bang>!{_SUFFIX})"
    r"|(?P<string>\"(?:[^\"\\\n]|\\.)*\")"
    r"|(?P<punct>->|::|[(){}\[\]<>,:=?*+\-|])"
)
_STRING_RE = re.compile(r"\"(?:[^\"\\\n]|\\.)*\"")
_STRING_OR_COMMENT_RE = re.compile(r"\"(?:[^\"\\\n]|\\.)*\"|//[^\n]*")
BLANK_RE = re.compile(r"(?:\s+|//[^\n]*)*")
_DIMS_RE = re.compile(r"(?:(?:[0-9]+|\?)x)*")
_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}


class Token:
    """One token: its kind, its exact text and its [start, end) offsets."""

    __slots__ = ("kind", "text", "start", "end")

    def __init__(self, kind: str, text: str, start: int, end: int):
        self.kind = kind
        self.text = text
        self.start = start
        self.end = end

    def is_punct(self, text: str) -> bool:
        return self.kind == PUNCT and self.text == text

    def is_bare(self, text: str) -> bool:
        return self.kind == BARE and self.text == text

    def describe(self) -> str:
        """How an error message names this token."""
        return "end of input" if self.kind == EOF else f"'{self.text}'"

    def __repr__(self) -> str:
        return f"Token({self.kind}, {self.text!r}, {self.start})"


class Lexer:
    """Scans ``text``; positions in errors are reported in ``filename`` lines
    counted from ``first_line`` (the chunk's line in its file)."""

    def __init__(self, text: str, filename: str = "<string>", first_line: int = 1):
        self.text = text
        self.filename = filename
        self.first_line = first_line
        self._line_starts = [0] + [m.end() for m in re.finditer(r"\n", text)]

    # --- tokens -------------------------------------------------------------
    def lex(self, pos: int) -> Token:
        """The token at or after offset ``pos``."""
        text = self.text
        pos = BLANK_RE.match(text, pos).end()
        if pos >= len(text):
            return Token(EOF, "", len(text), len(text))
        m = _TOKEN_RE.match(text, pos)
        if m is None:
            ch = text[pos]
            if ch == '"':
                raise self.error("unterminated string literal", pos)
            raise self.error(f"unexpected character '{ch}'", pos)
        return Token(m.lastgroup, m.group(), pos, m.end())

    def lex_dims(self, pos: int) -> Token:
        """The (possibly empty) ``2x?x3x`` prefix of a shaped type at ``pos``."""
        pos = BLANK_RE.match(self.text, pos).end()
        m = _DIMS_RE.match(self.text, pos)
        return Token(DIMS, m.group(), pos, m.end())

    def lex_balanced(self, pos: int, open_: str, close: str, what: str) -> Token:
        """The raw text from ``pos`` (just after an opening ``open_``) up to its
        matching ``close``, skipping string literals, ``//`` comments and ``->`` arrows.

        The token's text excludes the closing bracket; ``end`` is just after it.
        """
        text = self.text
        depth = 1
        i = pos
        n = len(text)
        while i < n:
            ch = text[i]
            if ch == '"':
                m = _STRING_RE.match(text, i)
                if m is None:
                    raise self.error("unterminated string literal", i)
                i = m.end()
                continue
            if ch == "-" and i + 1 < n and text[i + 1] == ">":
                i += 2
                continue
            if ch == "/" and i + 1 < n and text[i + 1] == "/":
                nl = text.find("\n", i)
                i = n if nl < 0 else nl
                continue
            if ch == open_:
                depth += 1
            elif ch == close:
                depth -= 1
                if depth == 0:
                    return Token(BODY, text[pos:i], pos, i + 1)
            i += 1
        raise self.error(f"unbalanced '{open_}' in {what}: no matching '{close}'", pos - 1)

    # --- positions ----------------------------------------------------------
    def loc(self, offset: int) -> SourceLoc:
        """The file:line:col of ``offset`` (1-based line and column)."""
        offset = max(0, min(offset, len(self.text)))
        if not self.text[offset:].strip():  # the end of input: point just past the last text
            offset = len(self.text.rstrip())
        i = bisect.bisect_right(self._line_starts, offset) - 1
        start = self._line_starts[i]
        end = self.text.find("\n", start)
        line_text = self.text[start:] if end < 0 else self.text[start:end]
        return SourceLoc(self.filename, i + self.first_line, offset - start + 1, line_text)

    def error(self, message: str, offset: int) -> ParseError:
        return ParseError(message, self.loc(offset))


def blank_comments(text: str) -> str:
    """``text`` with its ``//`` comments (outside strings) replaced by blanks,
    so that offsets into it stay the same."""
    if "//" not in text:
        return text
    return _STRING_OR_COMMENT_RE.sub(
        lambda m: m.group() if m.group().startswith('"') else " " * len(m.group()), text)


def unescape_string(token_text: str) -> str:
    """The value of a string literal (with its quotes): ``\\n``, ``\\t``,
    ``\\"``, ``\\\\`` and two-digit hex escapes ``\\0A``."""
    body = token_text[1:-1]
    if "\\" not in body:
        return body
    out = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1: i + 2]
        if nxt in _ESCAPES:
            out.append(_ESCAPES[nxt])
            i += 2
        elif re.fullmatch(r"[0-9A-Fa-f]{2}", body[i + 1: i + 3]):
            out.append(chr(int(body[i + 1: i + 3], 16)))
            i += 3
        else:
            raise ValueError(f"unknown escape sequence '\\{nxt}'")
    return "".join(out)
