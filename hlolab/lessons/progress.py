"""A learner's progress: completed exercises and the current lesson, per language.

Stored as JSON in ``$XDG_STATE_HOME/hlolab/lessons.json`` (default
``~/.local/state/hlolab/``). Every save writes a temporary file beside it, flushes
and fsyncs it, then renames it over the old one, so a crash or Ctrl-C at any moment
leaves the old progress or the new one, never a torn file. A file that cannot be
read is renamed aside (``lessons.json.corrupt-<time>``) with a warning; learning
goes on with fresh progress, never a crash.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hlolab.atomic import write_text as write_atomic
from hlolab.messages import Msg

VERSION = 1
FILENAME = "lessons.json"


def state_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "hlolab"


def default_path() -> Path:
    return state_dir() / FILENAME


@dataclass
class Progress:
    """Progress of every language, loaded from and saved to ``path``."""

    path: Path
    # lang -> {"current": lesson id or None, "completed": {lesson id: [exercise ids]}}
    data: dict[str, Any] = field(default_factory=dict)
    warnings: list[Msg] = field(default_factory=list)

    @classmethod
    def load(cls, path: Path | None = None) -> Progress:
        path = path or default_path()
        p = cls(path, {})
        try:
            raw = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return p
        except OSError as e:
            p.warnings.append(Msg("lessons.ui.progress_unsaved", why=str(e)))
            return p
        try:
            doc = json.loads(raw)
            p.data = _validated(doc)
        except (ValueError, TypeError) as e:
            backup = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}")
            try:
                os.replace(path, backup)
            except OSError:
                backup = path  # could not move it: it is left as it is, and not overwritten below
            p.warnings.append(Msg("lessons.ui.progress_corrupt", path=str(path),
                                  why=str(e) or type(e).__name__, backup=str(backup)))
            if backup == path:
                p.path = path.with_name(path.name + ".new")
        return p

    def _lang(self, lang: str) -> dict[str, Any]:
        return self.data.setdefault(lang, {"current": None, "completed": {}})

    def completed(self, lang: str, lesson_id: str) -> list[str]:
        return list(self._lang(lang)["completed"].get(lesson_id, []))

    def is_done(self, lang: str, lesson_id: str, exercise_id: str) -> bool:
        return exercise_id in self._lang(lang)["completed"].get(lesson_id, [])

    def current(self, lang: str) -> str | None:
        return self._lang(lang)["current"]

    def set_current(self, lang: str, lesson_id: str) -> None:
        self._lang(lang)["current"] = lesson_id

    def complete(self, lang: str, lesson_id: str, exercise_id: str) -> None:
        done = self._lang(lang)["completed"].setdefault(lesson_id, [])
        if exercise_id not in done:
            done.append(exercise_id)

    def save(self) -> None:
        doc = {"version": VERSION, "languages": self.data}
        write_atomic(self.path, json.dumps(doc, indent=1, ensure_ascii=False, sort_keys=True) + "\n")


def _validated(doc: Any) -> dict[str, Any]:
    """The languages table of a progress document; ValueError/TypeError when malformed."""
    if not isinstance(doc, dict) or doc.get("version") != VERSION:
        raise ValueError(f"not a version-{VERSION} progress document")
    langs = doc.get("languages")
    if not isinstance(langs, dict):
        raise ValueError("no 'languages' table")
    out: dict[str, Any] = {}
    for lang, entry in langs.items():
        if not isinstance(entry, dict):
            raise TypeError(f"languages.{lang} is not a table")
        cur = entry.get("current")
        comp = entry.get("completed", {})
        if cur is not None and not isinstance(cur, str):
            raise TypeError(f"languages.{lang}.current is not a lesson id")
        if not isinstance(comp, dict) or not all(
                isinstance(v, list) and all(isinstance(x, str) for x in v) for v in comp.values()):
            raise TypeError(f"languages.{lang}.completed is not a table of exercise id lists")
        out[lang] = {"current": cur, "completed": {k: list(v) for k, v in comp.items()}}
    return out
