"""Find one element of a program value: ``[@func:]%name[#k]`` plus an index.

Shared by every command that targets an element (explain today; trace,
export and the TUI later), so the addressing rules live in one place.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from hlolab.errors import ExecutionError
from hlolab.interp.engine import OpRun


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


def find_event(events: Iterable[OpRun], ref: ValueRef,
               iteration: int | None = None) -> tuple[OpRun, int]:
    """The first op instance producing ``ref`` (in loop ``iteration`` when given)
    and the result number of the value."""
    seen_iterations: list[int | None] = []
    for event in events:
        if ref.func is not None and event.frame.func != ref.func:
            continue
        for k, v in enumerate(event.op.results):
            if v.name != ref.name:
                continue
            if iteration is None or event.frame.iteration == iteration:
                return event, k
            seen_iterations.append(event.frame.iteration)
    if seen_iterations:
        raise ExecutionError(f"{ref} was computed in iterations {seen_iterations[:10]}, "
                             f"not in iteration {iteration}")
    raise ExecutionError(f"no op computes {ref} in this run (constants and results of ops are "
                         "addressable; function arguments are not)")
