"""``hlolab repl``: build and step programs interactively (see ``hlolab.repl.app``).

Importing this package imports nothing heavy; prompt_toolkit, numpy and the
parser are imported when the REPL starts.
"""

from __future__ import annotations


def main(argv: list[str] | None = None) -> int:
    from hlolab.repl.app import main as _main

    return _main(argv)
