"""Find one element of a program value: ``[@func:]%name[#k]`` plus an index.

Shared by every command that targets an element (explain and trace; export
and the TUI later; ``Session.find`` resolves the reference), so the
addressing rules live in one place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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


def defined_names(func: Any) -> list[str]:
    """Every value name ``func`` defines, in program order: its arguments, then op
    results and region arguments (nested regions included)."""
    names = [a.name for a in func.args]
    for op in func.walk():
        for region in op.regions:
            for block in region.blocks:
                names += [a.name for a in block.args]
        names += [v.name for v in op.results]
    return list(dict.fromkeys(names))


def _summary(names: list[str]) -> str:
    if not names:
        return "it defines none"
    if len(names) <= 10:
        return "values are " + ", ".join(names)
    return f"values are {names[0]} … {names[-1]} ({len(names)} in all)"


def resolve(module: Any, entry: Any, ref: ValueRef) -> ValueRef:
    """``ref`` with its function made explicit: an unqualified name is the entry
    function's; otherwise the one function defining it. A name no function (or
    the named function) defines, or one several functions define and the entry
    does not, is an error naming the candidates."""
    if ref.func is not None:
        f = module.func(ref.func)
        if f is None:
            funcs = ", ".join("@" + g.name for g in module.funcs)
            raise ExecutionError(f"no function @{ref.func} (functions: {funcs})")
        names = defined_names(f)
        if ref.name not in names:
            raise ExecutionError(f"no value {ref.name} in @{f.name}; {_summary(names)}")
        return ref
    names = defined_names(entry)
    if ref.name in names:
        return ValueRef(ref.name, entry.name)
    holders = [f for f in module.funcs if f is not entry and ref.name in defined_names(f)]
    if len(holders) == 1:
        return ValueRef(ref.name, holders[0].name)
    if holders:
        cands = ", ".join(f"@{f.name}:{ref.name}" for f in holders)
        raise ExecutionError(f"{ref.name} is not a value of the entry function @{entry.name} and several "
                             f"functions define it: {cands}; name one")
    raise ExecutionError(f"no value {ref.name} in @{entry.name}; {_summary(names)}")
