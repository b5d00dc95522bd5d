"""An invalid statement prints the op's (Cn) message with a caret and leaves the program
as it was; nothing typed is evaluated as Python."""

from __future__ import annotations

from pathlib import Path

import pytest


def _snapshot(repl):
    p = repl.program
    return (list(p.b.names()), [e.text for e in p.entries], len(p.b.ops), p.version)


@pytest.mark.parametrize("bad, caret_col, message", [
    ("%t = stablehlo.transpose %x, dims = [0, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>", 1,
     "transpose (C2): permutation = [0, 0] must be a permutation of range(2)"),
    ("t = Transpose(x, [0, 0])", 5, "transpose (C2): permutation = [0, 0] must be a permutation of range(2)"),
    ("p = Add(x, Pad(x, 0.5, low=[1], high=[0, 2], interior=[0, 0]))", 12, "pad (C2)"),
])
def test_invalid_statement_prints_cn_with_caret_and_changes_nothing(drive, bad, caret_col, message):
    out, repl = drive(["x = [[1, 2, 3], [4, 5, 6]]:f32", "y = Mul(x, 2)"])
    before = _snapshot(repl)
    out, repl = drive([bad], repl=repl)
    lines = out.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.startswith("<repl>:"))
    assert lines[head].startswith(f"<repl>:1:{caret_col}: error: ")
    assert message in lines[head]
    assert lines[head + 1] == bad
    assert lines[head + 2] == " " * (caret_col - 1) + "^"
    assert _snapshot(repl) == before
    # and the program goes on from where it was
    out, repl = drive(["z = Add(y, x)"], repl=repl)
    assert "%z : tensor<2x3xf32>\n  [[ 3.  6.  9.]\n   [12. 15. 18.]]" in out


def test_a_failing_nested_call_undoes_the_calls_before_it(drive):
    out, repl = drive(["x = [1, 2]:f32"])
    n_ops = len(repl.program.b.ops)
    out, repl = drive(["y = Add(Mul(x, 3), Transpose(x, [1]))"], repl=repl)
    assert "transpose (C2)" in out
    assert len(repl.program.b.ops) == n_ops  # the Mul made before the failing Transpose is gone
    assert repl.program.b.names() == ["x"]


def test_unknown_keyword_names_the_parameters(drive):
    out, _ = drive(["x = [1, 2]:f32", "y = Pad(x, 0, lo=[1])"])
    assert "<repl>:1:15: error: Pad has no parameter 'lo'; its parameters: operand, padding_value, " \
        "padding_config, low, high, interior" in out


def test_nothing_is_evaluated_as_python(drive, tmp_path: Path):
    marker = tmp_path / "pwned"
    attempts = [f'__import__("os").system("touch {marker}")',
                f'x = exec("open(\'{marker}\', \'w\')")',
                f'x = eval("open(\'{marker}\', \'w\')")',
                'x = globals()']
    out, repl = drive(attempts)
    assert not marker.exists()
    assert out.count("error:") == len(attempts)
    assert "<repl>:1:1: error: unexpected character '_'" in out
    assert "unknown builder function 'exec'" in out and "unknown builder function 'eval'" in out
    assert repl.program.entries == []
