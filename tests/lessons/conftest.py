"""Lessons tests: progress goes to a fresh XDG state dir, never the user's."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(autouse=True)
def state_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(d))
    monkeypatch.delenv("HLOLAB_LESSONS", raising=False)
    monkeypatch.delenv("HLOLAB_LANG", raising=False)
    return d
