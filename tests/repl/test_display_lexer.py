"""Value printing (dtype-aware, elided, coloured only on request) and our pygments lexers."""

from __future__ import annotations

import ml_dtypes
import numpy as np
from pygments.token import Comment, Keyword, Name, Number, String

from hlolab.repl.display import format_binding, type_text
from hlolab.repl.lexer import BuilderLexer, MlirLexer, ReplLexer


def test_types_and_elements_of_narrow_and_complex_values():
    f8 = np.array([0.5, -1.75, 448.0], ml_dtypes.float8_e4m3fn)
    assert format_binding("a", f8) == "%a : tensor<3xf8E4M3FN>\n  [0.5 -1.75 448]"
    i4 = np.array([[-8, 7]], ml_dtypes.int4)
    assert format_binding("b", i4) == "%b : tensor<1x2xi4>\n  [[-8 7]]"
    c = np.array([1 + 2j, -0.5j], np.complex64)
    assert format_binding("c", c) == "%c : tensor<2xcomplex<f32>>\n  [ 1.+2.j , -0.-0.5j]"
    assert format_binding("d", np.array(True)) == "%d : tensor<i1>\n  True"
    assert type_text(np.zeros((2, 0), ml_dtypes.bfloat16)) == "tensor<2x0xbf16>"


def test_large_tensors_are_elided():
    text = format_binding("big", np.arange(10000, dtype=np.int32).reshape(100, 100))
    lines = text.splitlines()
    assert lines[0] == "%big : tensor<100x100xi32>"
    assert lines[1] == "  [[   0    1    2 ...   97   98   99]"
    assert lines[-1] == "   [9900 9901 9902 ... 9997 9998 9999]]"
    assert len(lines) == 8  # 3 rows, the ellipsis row, 3 rows, the header


def test_colour_only_when_asked():
    plain = format_binding("x", np.zeros(2, np.float32))
    coloured = format_binding("x", np.zeros(2, np.float32), colour=True)
    assert "\x1b[" not in plain and "\x1b[" in coloured
    assert coloured.replace("\x1b[1;33m", "").replace("\x1b[36m", "").replace("\x1b[0m", "") == plain


def _kinds(lexer, text):
    return [(tok, val) for tok, val in lexer.get_tokens(text) if val.strip()]


def test_mlir_lexer():
    toks = dict((v, t) for t, v in _kinds(MlirLexer(), '%z = stablehlo.add %x, %y : tensor<4xf32> // sum'))
    assert toks["%z"] is Name.Variable and toks["stablehlo.add"] is Name.Builtin
    assert toks["tensor"] in Keyword.Type and toks["f32"] in Keyword.Type
    assert toks["// sum"] in Comment
    generic = dict((v, t) for t, v in _kinds(MlirLexer(), '"stablehlo.gather"(%a) {x = 1}'))
    assert generic['"stablehlo.gather"'] in String and generic["1"] in Number


def test_builder_lexer_and_the_repl_lexer_choosing():
    toks = dict((v, t) for t, v in _kinds(BuilderLexer(), 'z = Pad(x, 0, low=[1,0]) # note'))
    assert toks["Pad"] is Name.Function and toks["low"] is Name.Attribute and toks["0"] in Number
    assert toks["# note"] in Comment
    shape = dict((v, t) for t, v in _kinds(BuilderLexer(), "i = Iota(s32[4,8], 1)"))
    assert shape["s32"] in Keyword.Type
    repl = ReplLexer()
    assert dict((v, t) for t, v in _kinds(repl, "%z = stablehlo.add %x, %y : tensor<f32>"))["stablehlo.add"] \
        is Name.Builtin
    assert dict((v, t) for t, v in _kinds(repl, "z = Add(x, y)"))["Add"] is Name.Function
    assert dict((v, t) for t, v in _kinds(repl, ":trace %x[1,2]"))[":trace"] is Keyword
