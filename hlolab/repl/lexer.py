"""Pygments lexers of our own for the two REPL languages (MLIR statements and the
builder language), and one that picks between them per input, as the REPL does."""

from __future__ import annotations

from typing import Any

from pygments.lexer import Lexer, RegexLexer, bygroups
from pygments.token import Comment, Keyword, Name, Number, Operator, Punctuation, String, Text

from hlolab.repl.statements import is_mlir_statement

_ETYPE_NAMES = (r"(?:pred|[su](?:2|4|8|16|32|64)|bf16|f16|f32|f64|c64|c128|i1|u?i(?:2|4|8|16|32|64)"
                r"|f8E\w+|f[46]E\w+|index)")
_ETYPES = rf"\b{_ETYPE_NAMES}\b"


class MlirLexer(RegexLexer):
    """StableHLO/CHLO MLIR statements, pretty or generic."""

    name = "MLIR (hlolab)"
    aliases = ["hlolab-mlir"]
    tokens = {
        "root": [
            (r"\s+", Text),
            (r"//.*?$", Comment.Single),
            (r'"(?:[^"\\]|\\.)*"', String),
            (r"%[\w$.\-]+(?:#\d+)?(?::\d+)?", Name.Variable),
            (r"\^[\w$.\-]+", Name.Label),
            (r"@[\w$.]+", Name.Function),
            (r"#[\w$.]+", Name.Attribute),
            (r"![\w$.]+", Keyword.Type),
            (r"\b(?:tensor|tuple|complex|dense|array|dense_resource)\b", Keyword.Type),
            # the shape and element type of tensor<2x3xf32>
            (rf"(\d+(?:x\d+|x\?)*x)({_ETYPE_NAMES}|complex|tuple)\b", bygroups(Keyword.Type, Keyword.Type)),
            (_ETYPES, Keyword.Type),
            (r"\b[a-z_]+\.[\w.]+", Name.Builtin),  # stablehlo.add, func.return
            (r"\b(?:true|false|unit)\b", Keyword.Constant),
            (r"-?\d+\.\d*(?:[eE][-+]?\d+)?|-?0x[0-9A-Fa-f]+|-?\d+", Number),
            (r"[a-zA-Z_][\w$.]*", Name),
            (r"->|[=:<>]", Operator),
            (r"[(){}\[\],]", Punctuation),
            (r".", Text),
        ],
    }


class BuilderLexer(RegexLexer):
    """The builder language: ``y = Pad(x, 0, low=[1,0])``, ``[[1,2]]:f32``, ``s32[4,8]``."""

    name = "hlolab builder language"
    aliases = ["hlolab-builder"]
    tokens = {
        "root": [
            (r"\s+", Text),
            (r"(?://|#).*?$", Comment.Single),
            (r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'', String),
            (r"\b(?:True|False|true|false|inf|nan)\b", Keyword.Constant),
            (_ETYPES + r"(?=\s*\[)", Keyword.Type),
            (r"(?<=:)\s*" + _ETYPES, Keyword.Type),
            (r"([A-Z]\w*)(\s*)(?=\()", bygroups(Name.Function, Text)),
            (r"([a-z]\w*)(\s*)(=)(?!=)", bygroups(Name.Attribute, Text, Operator)),
            (r"%?[A-Za-z]\w*(?:#\d+)?", Name.Variable),
            (r"-?(?:\d+\.\d*|\.\d+)(?:[eE][-+]?\d+)?|-?0x[0-9A-Fa-f]+|-?\d+", Number),
            (r"[=:\-]", Operator),
            (r"[()\[\],]", Punctuation),
            (r".", Text),
        ],
    }


class ReplLexer(Lexer):
    """Commands, MLIR or builder language: the one the REPL would parse the input as."""

    name = "hlolab REPL"
    aliases = ["hlolab-repl"]

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._mlir = MlirLexer(**options)
        self._builder = BuilderLexer(**options)

    def get_tokens_unprocessed(self, text: str) -> Any:
        stripped = text.lstrip()
        if stripped.startswith(":"):
            cut = len(text) - len(stripped)
            word = stripped.split(None, 1)[0] if stripped.split() else stripped
            yield 0, Text, text[:cut]
            yield cut, Keyword, word
            rest = text[cut + len(word):]
            for i, tok, val in self._mlir.get_tokens_unprocessed(rest):
                yield cut + len(word) + i, tok, val
            return
        lexer = self._mlir if is_mlir_statement(text) else self._builder
        yield from lexer.get_tokens_unprocessed(text)
