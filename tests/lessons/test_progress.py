"""Progress is saved atomically: a crash between writing and renaming leaves the old
file; a corrupt file is set aside with a warning, never a crash."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hlolab.lessons import progress as prog
from hlolab.lessons.progress import Progress
from hlolab.messages import text


def test_default_location_follows_xdg(state_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert prog.default_path() == state_home / "hlolab" / "lessons.json"
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.setenv("HOME", "/home/learner")
    assert prog.default_path() == Path("/home/learner/.local/state/hlolab/lessons.json")


def test_round_trip_per_language(state_home: Path) -> None:
    p = Progress.load()
    assert p.current("en") is None and p.completed("en", "gather") == []
    p.set_current("en", "gather")
    p.complete("en", "gather", "rows-value")
    p.complete("en", "gather", "rows-value")
    p.complete("zh", "tensors", "read-index")
    p.save()
    q = Progress.load()
    assert q.current("en") == "gather" and q.current("zh") is None
    assert q.completed("en", "gather") == ["rows-value"]
    assert q.is_done("zh", "tensors", "read-index") and not q.is_done("en", "tensors", "read-index")
    assert not q.warnings
    assert json.loads(prog.default_path().read_text())["version"] == prog.VERSION


def _saved(path: Path) -> Progress:
    p = Progress(path)
    p.complete("en", "gather", "old")
    p.save()
    return p


def test_crash_between_write_and_replace_keeps_the_old_file(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "lessons.json"
    p = _saved(path)
    before = path.read_bytes()
    p.complete("en", "gather", "new")

    def boom(src: str, dst: str) -> None:
        assert Path(src).read_text().count("new") == 1  # the new text was fully written first
        raise KeyboardInterrupt  # Ctrl-C (or a kill) right before the rename

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(KeyboardInterrupt):
        p.save()
    assert path.read_bytes() == before
    assert [f.name for f in tmp_path.iterdir()] == ["lessons.json"]  # no temp file left behind
    monkeypatch.undo()
    assert Progress.load(path).completed("en", "gather") == ["old"]


def test_a_process_killed_mid_save_leaves_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "lessons.json"
    _saved(path)
    before = path.read_bytes()
    # a child process that dies (no cleanup, no finally) between write and rename
    code = f"""
import os
from pathlib import Path
from hlolab.lessons.progress import Progress
p = Progress.load(Path({str(path)!r}))
p.complete("en", "gather", "new")
os.replace = lambda src, dst: os._exit(9)
p.save()
"""
    r = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[2])
    assert r.returncode == 9
    assert path.read_bytes() == before
    q = Progress.load(path)
    assert q.completed("en", "gather") == ["old"] and not q.warnings


@pytest.mark.parametrize("content", ["{not json", "", '{"version": 99}', '[1, 2]',
                                     '{"version": 1, "languages": {"en": {"completed": {"x": [1]}}}}'])
def test_corrupt_file_is_set_aside(tmp_path: Path, content: str) -> None:
    path = tmp_path / "lessons.json"
    path.write_text(content)
    p = Progress.load(path)
    assert p.completed("en", "gather") == []
    assert len(p.warnings) == 1
    msg = text(p.warnings[0], "en")
    assert "could not be read" in msg and "set aside" in msg
    aside = [f for f in tmp_path.iterdir() if f.name.startswith("lessons.json.corrupt-")]
    assert len(aside) == 1 and aside[0].read_text() == content
    assert not path.exists()
    p.complete("en", "gather", "a")
    p.save()
    assert Progress.load(path).completed("en", "gather") == ["a"]
