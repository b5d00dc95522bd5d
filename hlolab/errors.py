"""The only exception types a user ever sees.

Every error carries an optional source location and prints in one format:
``file:line:col: error: message``, then the source line and a caret.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SourceLoc:
    """A position in a source text (1-based line and column)."""

    file: str
    line: int
    col: int
    source_line: str = ""

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"

    def caret_block(self) -> str:
        if not self.source_line:
            return ""
        text = self.source_line.rstrip("\n").expandtabs(1)
        return f"\n{text}\n{' ' * (self.col - 1)}^"


class HloLabError(Exception):
    """Base class: a message plus an optional source location."""

    kind = "error"

    def __init__(self, message: str, loc: SourceLoc | None = None):
        super().__init__(message)
        self.message = message
        self.loc = loc

    def with_loc(self, loc: SourceLoc | None) -> HloLabError:
        if self.loc is None and loc is not None:
            self.loc = loc
        return self

    def __str__(self) -> str:
        prefix = f"{self.loc}: " if self.loc else ""
        tail = self.loc.caret_block() if self.loc else ""
        return f"{prefix}{self.kind}: {self.message}{tail}"

    def short(self) -> str:
        """One line: the location and the message, no caret block."""
        prefix = f"{self.loc}: " if self.loc else ""
        return f"{prefix}{self.message}"


class ParseError(HloLabError):
    """Malformed MLIR text."""


class VerificationError(HloLabError):
    """An op violates a spec constraint; names the op and the constraint."""

    def __init__(self, op: str, constraint: str | None, message: str,
                 loc: SourceLoc | None = None):
        label = op.removeprefix("stablehlo.")
        head = f"{label} ({constraint})" if constraint else label
        super().__init__(f"{head}: {message}", loc)
        self.op = op
        self.constraint = constraint


class ExecutionError(HloLabError):
    """A failure while running a program (bad input, budget exceeded, ...)."""


class RunInterrupted(ExecutionError):
    """The user interrupted a running program (Ctrl-C in a front end, Session.interrupt)."""


class NotImplementedOpError(ExecutionError):
    """The op parses but hlolab cannot execute it yet."""

    def __init__(self, op: str, loc: SourceLoc | None = None, detail: str = ""):
        msg = f"{op} is not implemented yet" + (f" ({detail})" if detail else "")
        super().__init__(msg, loc)
        self.op = op


class UnsupportedError(ExecutionError):
    """A case the spec allows but hlolab does not handle; never approximated."""


class CheckFailure(ExecutionError):
    """A ``check.*`` op of a test program did not hold."""

    def __init__(self, check: str, message: str, loc: SourceLoc | None = None):
        super().__init__(f"{check}: {message}", loc)
        self.check = check
        self.detail = message
