"""Find one element of a program value: ``[@func:]%name[#k]`` plus an index.

Shared by every command that targets an element (explain and trace; export
and the TUI later; ``Session.find`` resolves the reference), so the
addressing rules live in one place.
"""

from __future__ import annotations

from dataclasses import dataclass

from hlolab.errors import ExecutionError


@dataclass(frozen=True)
class ValueRef:
    name: str  # "%5" or "%r#1"
    func: str | None = None

    @classmethod
    def parse(cls, text: str) -> ValueRef:
        func = None
        if text.startswith("@") and ":" in text:
            func, text = text[1:].split(":", 1)
        if not text.startswith("%"):
            text = "%" + text
        return cls(text, func)

    def __str__(self) -> str:
        return (f"@{self.func}:" if self.func else "") + self.name


def parse_index(text: str) -> tuple[int, ...]:
    """``"1,2"`` → (1, 2); ``""`` → () for a scalar."""
    text = text.strip().strip("[]()")
    if not text:
        return ()
    try:
        return tuple(int(p) for p in text.split(","))
    except ValueError:
        raise ExecutionError(f"--index must be comma-separated integers, got '{text}'") from None
