"""``:explain``, ``:trace`` and ``:targets`` on a small program whose derivations are
worked out by hand:

    x = [[1, 2], [3, 4]]
    p = pad(x, 0, low=[1, 0], high=[0, 1])      = [[0, 0, 0], [1, 2, 0], [3, 4, 0]]
    s = reduce(x, 0, add, dims=[1])             = [1 + 2, 3 + 4] = [3, 7]
"""

from __future__ import annotations

import pytest

PROGRAM = ["x = [[1, 2], [3, 4]]:f32",
           "p = Pad(x, 0, low=[1, 0], high=[0, 1], interior=[0, 0])",
           "s = Reduce(x, 0:f32, Add, dimensions_to_reduce=[1])"]


@pytest.fixture
def built(drive):
    out, repl = drive(PROGRAM)
    assert "%p : tensor<3x3xf32>\n  [[0. 0. 0.]\n   [1. 2. 0.]\n   [3. 4. 0.]]" in out
    assert "%s : tensor<2xf32>\n  [3. 7.]" in out
    return repl


def test_explain_pad_element(drive, built):
    out, _ = drive([":explain %p[2,1]"], repl=built)
    # p[2, 1]: minus edge_padding_low (1, 0) is (1, 1); no interior padding: x[1, 1] = 4
    assert "%p[2, 1] = stablehlo.pad" in out
    assert "result_index - edge_padding_low = (2, 1) - (1, 0) = (1, 1)" in out
    assert "result[result_index] = operand[operand_index] = %x[1, 1] = 4.0" in out
    assert "sources:\n  %x[1, 1]  copy" in out


def test_explain_reduce_element(drive, built):
    out, _ = drive([":explain %s[1]"], repl=built)
    # s[1] = 0 + x[1, 0] + x[1, 1] = 0 + 3 + 4 = 7
    assert "reduce result[1] = 7.0" in out
    assert "= %x[1, :] (2 element(s))" in out
    assert "= add(0.0, add over [3., 4.])" in out
    assert "  %x[1, 0]  window\n  %x[1, 1]  window" in out


def test_trace_pad_element_back_to_x(drive, built):
    out, _ = drive([":trace %p[2,1]"], repl=built)
    assert out.startswith("%p[2, 1] = stablehlo.pad\ndepends on 1 element of 1 value:\n")
    assert "└─ %x  (2x2)\n   └─ copy       %x[1, 1]\n                 via pad %p" in out


def test_trace_padding_element_is_the_padding_value(drive, built):
    out, _ = drive([":trace %p[0,0]"], repl=built)
    assert "depends on 1 element of 1 value:" in out
    assert "pad_value" in out and "%x" not in out


def test_trace_reduce_element(drive, built):
    out, _ = drive([":trace %s[1]"], repl=built)
    # the row x[1, 0:2] (window) and the init value
    assert "depends on 3 elements of 2 values:" in out
    assert "window     %x[1, 0:2]\n│                via reduce %s" in out
    assert "init" in out


def test_targets_follow_x_forward(drive, built):
    out, _ = drive([":targets %x[1,0]"], repl=built)
    # x[1, 0] = 3 lands in p[2, 0] and is summed into s[1]
    assert "flows into 2 elements of 2 values:" in out
    assert "copy       %p[2, 0]" in out and "window     %s[1]" in out


def test_explain_a_parameter_element(drive):
    out, _ = drive(["a = Parameter(s32[3])", ":args %a [7, 8, 9]", ":explain %a[2]"])
    assert "%a[2] = 9: argument #0 of @main" in out


def test_lang_switch_keeps_explanations(drive, built):
    out, repl = drive([":lang es", ":explain %p[2,1]"], repl=built)
    assert repl.lang == "es"
    assert "explanations in es" in out
    assert "= %x[1, 1] = 4.0" in out  # es falls back to English per string
