"""The MLIR lexer: token kinds, the re-scanned pieces, positions and errors."""

from __future__ import annotations

import pytest

from hlolab.errors import ParseError
from hlolab.ir.lexer import (
    AT,
    BANG,
    BARE,
    CARET,
    DIMS,
    EOF,
    FLOAT,
    HASH,
    INT,
    PUNCT,
    STRING,
    VALUE,
    Lexer,
    blank_comments,
    unescape_string,
)


def tokens(text: str) -> list[tuple[str, str]]:
    lx = Lexer(text)
    out = []
    t = lx.lex(0)
    while t.kind != EOF:
        out.append((t.kind, t.text))
        t = lx.lex(t.end)
    return out


def test_identifiers_and_sigils():
    assert tokens("%0 %arg_1 %iterArg.2 %$x-y %r#3 ^bb0 @main @\"jit(f)\" #loc12 #stablehlo.gather "
                  "!stablehlo.token func.func e5m10") == [
        (VALUE, "%0"), (VALUE, "%arg_1"), (VALUE, "%iterArg.2"), (VALUE, "%$x-y"), (VALUE, "%r#3"),
        (CARET, "^bb0"), (AT, "@main"), (AT, '@"jit(f)"'), (HASH, "#loc12"), (HASH, "#stablehlo.gather"),
        (BANG, "!stablehlo.token"), (BARE, "func.func"), (BARE, "e5m10")]


def test_numbers_strings_and_punctuation():
    assert tokens('12 0x7FC00000 1.5 2.0e-3 3. "a\\"b" -> :: ( ) { } [ ] < > , : = ? * - +') == [
        (INT, "12"), (INT, "0x7FC00000"), (FLOAT, "1.5"), (FLOAT, "2.0e-3"), (FLOAT, "3."),
        (STRING, '"a\\"b"'), (PUNCT, "->"), (PUNCT, "::"), (PUNCT, "("), (PUNCT, ")"), (PUNCT, "{"),
        (PUNCT, "}"), (PUNCT, "["), (PUNCT, "]"), (PUNCT, "<"), (PUNCT, ">"), (PUNCT, ","), (PUNCT, ":"),
        (PUNCT, "="), (PUNCT, "?"), (PUNCT, "*"), (PUNCT, "-"), (PUNCT, "+")]


def test_comments_and_blank_lines_are_skipped():
    assert tokens("// a comment\n  %a // trailing\n\n// -----\n%b") == [(VALUE, "%a"), (VALUE, "%b")]


def test_conv_labels_lex_x_as_a_keyword():
    # `]x[` must not be taken for a hex number
    assert tokens("[b, 0]x[0, i]->[b, f]")[4:7] == [(PUNCT, "]"), (BARE, "x"), (PUNCT, "[")]


def test_dims_are_rescanned_from_a_position():
    text = "tensor<2x?x30xf32>"
    lx = Lexer(text)
    t = lx.lex_dims(text.index("<") + 1)
    assert (t.kind, t.text) == (DIMS, "2x?x30x")
    assert lx.lex(t.end).text == "f32"
    assert lx.lex_dims(text.index("f32")).text == ""  # a scalar tensor has no dims


def test_balanced_scan_skips_strings_and_arrows():
    text = 'dense<"0x>>00">, #x<(d0) -> (d0 <1>)> tail'
    lx = Lexer(text)
    body = lx.lex_balanced(text.index("<") + 1, "<", ">", "dense")
    assert body.text == '"0x>>00"'
    body2 = lx.lex_balanced(text.index("#x<") + 3, "<", ">", "attr")
    assert body2.text == "(d0) -> (d0 <1>)"
    assert lx.lex(body2.end).text == "tail"
    commented = "dense<[1, // a > b\n 2]> x"
    body3 = Lexer(commented).lex_balanced(6, "<", ">", "dense")
    assert body3.text == "[1, // a > b\n 2]"
    assert blank_comments(body3.text) == "[1, " + " " * len("// a > b") + "\n 2]"
    assert blank_comments('"//kept" // gone') == '"//kept"        '


def test_unbalanced_scan_is_an_error_at_the_opening_bracket():
    lx = Lexer("x = dense<[1, 2]")
    with pytest.raises(ParseError) as e:
        lx.lex_balanced(10, "<", ">", "dense literal")
    assert e.value.message == "unbalanced '<' in dense literal: no matching '>'"
    assert (e.value.loc.line, e.value.loc.col) == (1, 10)


def test_unexpected_character_and_unterminated_string():
    lx = Lexer("%a = \n  $oops", "f.mlir", first_line=7)
    with pytest.raises(ParseError) as e:
        lx.lex(5)
    assert str(e.value) == "f.mlir:8:3: error: unexpected character '$'\n  $oops\n  ^"
    with pytest.raises(ParseError, match="unterminated string literal"):
        Lexer('"abc\n"').lex(0)


def test_locations_count_lines_from_the_chunk_start():
    lx = Lexer("a\nbb\n\tccc", "x.mlir", first_line=10)
    assert [(lx.loc(o).line, lx.loc(o).col) for o in (0, 2, 3, 6, 8)] == [
        (10, 1), (11, 1), (11, 2), (12, 2), (12, 4)]
    assert lx.loc(3).source_line == "bb"


def test_unescape_string():
    assert unescape_string(r'"a\"b\\c\n\t\0A"') == 'a"b\\c\n\t\n'
    with pytest.raises(ValueError, match="unknown escape"):
        unescape_string(r'"\q"')
