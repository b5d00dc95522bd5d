"""What a lesson file holds once parsed (the format: ``lessons/README.md``).

A ``Lesson`` is its front matter and a list of blocks in file order: prose,
programs, views and exercises. Every block keeps the line it starts on, so the
linter and the loader can say ``file:line``. The records are plain data: running
and checking them is ``hlolab.lessons.check``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

LANGUAGES = ("en", "zh", "es")

EXERCISE_KINDS = ("predict-value", "predict-shape", "predict-type", "pick-sources",
                  "fill-attributes", "fix-program")
VIEW_MODES = ("value", "explain", "trace", "animation")
PROGRAM_LANGS = ("mlir", "builder")

# keys whose text differs between translations; every other key is checked, so it must be equal
TRANSLATABLE = frozenset({"title", "prompt", "hints", "explanation", "caption"})


@dataclass
class Prose:
    """Markdown between special blocks (translated freely)."""

    text: str
    line: int


@dataclass
class Program:
    """A program the lesson runs and shows."""

    name: str
    lang: str
    text: str
    line: int
    args: list[str] | None = None
    seed: int = 0
    results: list[str] | None = None
    caption: str = ""
    hidden: bool = False
    file: str = ""  # the program was read from this file next to the lesson (``file = "mlp.mlir"``)
    text_line: int = 1  # the lesson file's line of the program's first line (errors point there)


@dataclass
class View:
    """A value (or one element of it) shown: grid, explanation, trace or animation."""

    value: str
    line: int
    program: str = ""  # resolved by the loader to the program above when not given
    element: tuple[int, ...] | None = None
    mode: str = "value"
    highlight: str = "sources"
    caption: str = ""
    iteration: int | None = None  # which instance of a value inside a while body (default: the last)
    process: int | None = None  # on a process grid: whose value (default: process 0)


@dataclass
class Exercise:
    """A question checked by executing programs (kinds: ``EXERCISE_KINDS``)."""

    id: str
    kind: str
    line: int
    answer: Any
    wrong: list[Any]
    hints: list[str]
    show: View
    prompt: str = ""
    explanation: str = ""
    program: str = ""  # the program asked about (predict-*, pick-sources)
    value: str = ""
    element: tuple[int, ...] | None = None
    operand: str = ""  # pick-sources
    roles: list[str] | None = None  # pick-sources
    rtol: float = 1e-3
    atol: float = 1e-6
    lang: str = "mlir"  # of template / broken
    template: str = ""  # fill-attributes
    blanks: list[str] = field(default_factory=list)
    broken: str = ""  # fix-program
    expect_error: str = ""
    target: Any = None
    target_program: str = ""
    target_value: str = ""  # which value of target_program to compare with (default: its first result)
    target_result: int | None = None  # or which of its results (0-based)
    iteration: int | None = None  # predict-*/pick-sources: the instance of ``value`` in a while body
    process: int | None = None  # predict-*/pick-sources on a process grid: whose value (default 0)
    # the block's raw TOML table: the linter compares translations on it
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


Block = Prose | Program | View | Exercise


@dataclass
class Lesson:
    """One lesson file in one language."""

    path: Path
    lang: str
    id: str
    title: str
    order: int
    ops: list[str]
    prerequisites: list[str]
    blocks: list[Block]
    minutes: int | None = None
    front: dict[str, Any] = field(default_factory=dict, repr=False)
    # raw TOML of each special block in order, with its kind: translations are compared on it
    raw_blocks: list[tuple[str, int, dict[str, Any]]] = field(default_factory=list, repr=False)

    @property
    def programs(self) -> dict[str, Program]:
        return {b.name: b for b in self.blocks if isinstance(b, Program)}

    @property
    def exercises(self) -> list[Exercise]:
        return [b for b in self.blocks if isinstance(b, Exercise)]

    @property
    def views(self) -> list[View]:
        return [b for b in self.blocks if isinstance(b, View)]

    def exercise(self, ex_id: str) -> Exercise:
        for e in self.exercises:
            if e.id == ex_id:
                return e
        raise KeyError(ex_id)

    def where(self, line: int) -> str:
        return f"{self.path}:{line}"


@dataclass
class LessonFolder:
    """A lesson's folder: ``NN-slug`` with one Markdown file per language."""

    path: Path
    number: int
    slug: str
    files: dict[str, Path]  # language -> file

    @property
    def languages(self) -> list[str]:
        return [lang for lang in LANGUAGES if lang in self.files]
