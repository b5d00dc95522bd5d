"""Front ends speak to the public API only: no private names, no other front end.

Walks the imports and attribute reads of ``hlolab/tui``, ``hlolab/render`` and
``hlolab/cli.py``. A front end may read its own package's private names; it
may not import a private name of another package (``session._by_id``), nor
import another front end, except the CLI launching the TUI and the export
command (it is the launcher) and the entries of KNOWN below, each with why
it is still there. KNOWN stays honest: an entry that no longer occurs fails.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO

FRONT_ENDS = {"hlolab.tui": REPO / "hlolab" / "tui", "hlolab.render": REPO / "hlolab" / "render",
              "hlolab.cli": REPO / "hlolab" / "cli.py", "hlolab.repl": REPO / "hlolab" / "repl"}

# (file relative to hlolab/, imported module) -> why it is allowed for now
KNOWN: dict[tuple[str, str], str] = {
    ("tui/screens/explorer.py", "hlolab.render.export"): "the explorer's export key writes PNG/GIF",
    ("repl/commands.py", "hlolab.render"): "the REPL's :export writes PNG/SVG/GIF",
    ("repl/tui.py", "hlolab.tui.app"): "the REPL's :tui opens the stepper",
    ("tui/widgets/lesson_exercise.py", "hlolab.repl.lexer"): "lessons highlight builder-language "
    "programs with the REPL's lexer",
}
# the CLI is the launcher: it starts the TUI and runs the export command
LAUNCHER = {"hlolab.tui", "hlolab.tui.app", "hlolab.render", "hlolab.render.export", "hlolab.repl"}


def _owner(module: str) -> str | None:
    for fe in FRONT_ENDS:
        if module == fe or module.startswith(fe + "."):
            return fe
    return None


def _files() -> list[tuple[str, Path]]:
    out = []
    for fe, path in FRONT_ENDS.items():
        for f in ([path] if path.is_file() else sorted(path.rglob("*.py"))):
            out.append((fe, f))
    return out


def test_front_ends_import_no_private_name_and_no_other_front_end() -> None:
    problems, used = [], set()
    for fe, f in _files():
        rel = f.relative_to(REPO / "hlolab").as_posix()
        tree = ast.parse(f.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("hlolab"):
                owner = _owner(node.module)
                for alias in node.names:
                    if alias.name.startswith("_") and owner != fe:
                        problems.append(f"{rel}:{node.lineno}: imports private {node.module}.{alias.name}")
                if owner is not None and owner != fe:
                    if fe == "hlolab.cli" and node.module in LAUNCHER:
                        continue
                    if (rel, node.module) in KNOWN:
                        used.add((rel, node.module))
                        continue
                    problems.append(f"{rel}:{node.lineno}: front end {fe} imports {node.module}")
            if isinstance(node, ast.Attribute) and node.attr.startswith("_") \
                    and not node.attr.startswith("__"):
                if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                    continue
                problems.append(f"{rel}:{node.lineno}: reads private {ast.unparse(node)}")
    assert not problems, "\n".join(problems)
    assert used == set(KNOWN), f"KNOWN entries that no longer occur: {set(KNOWN) - used}"
