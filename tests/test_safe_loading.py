"""Safe loading (issue 6): nothing hlolab loads can run code. Checked on the source itself:
no eval/exec, no pickle-family modules, every np.load refuses pickles."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "hlolab"
UNSAFE_MODULES = {"pickle", "cPickle", "marshal", "shelve", "dill", "cloudpickle"}


def _calls(tree: ast.AST) -> list[ast.Call]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call)]


def _name(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return f"{_name(func.value)}.{func.attr}"
    return ""


def test_no_eval_exec_or_pickle_anywhere_in_hlolab():
    problems = []
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 40
    for path in files:
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                problems += [f"{path}:{node.lineno} imports {n}" for n in names
                             if n.split(".")[0] in UNSAFE_MODULES]
        for call in _calls(tree):
            name = _name(call.func)
            if name in ("eval", "exec", "builtins.eval", "builtins.exec"):
                problems.append(f"{path}:{call.lineno} calls {name}")
            if name.endswith(".load") and name.split(".")[0] in ("np", "numpy"):
                safe = any(k.arg == "allow_pickle" and isinstance(k.value, ast.Constant)
                           and k.value.value is False for k in call.keywords)
                if not safe:
                    problems.append(f"{path}:{call.lineno} np.load without allow_pickle=False")
    assert not problems, "\n".join(problems)


def test_a_pickled_npy_input_is_refused_cleanly(tmp_path, capsys):
    import numpy as np

    from hlolab.cli import main

    bad = tmp_path / "obj.npy"
    np.save(bad, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    prog = tmp_path / "id.mlir"
    prog.write_text("func.func @main(%a: tensor<1xf32>) -> tensor<1xf32> {\n  return %a : tensor<1xf32>\n}\n")
    assert main(["run", str(prog), "--input", str(bad)]) == 1
    err = capsys.readouterr()
    text = err.out + err.err
    assert "pickle" in text.lower() and "Traceback" not in text
