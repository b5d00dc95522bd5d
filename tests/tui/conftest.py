"""TUI test helpers: isolated config dir, a way to run Pilot coroutines without an async
plugin, and ``settle`` (wait until the explorer's worker has built and been applied)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

pytest.importorskip("textual")


@pytest.fixture(autouse=True)
def _config_home(tmp_path, monkeypatch):
    """Recent files go to a temporary config dir, never the user's."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


def run(coro_fn: Callable[[], Awaitable[Any]]) -> Any:
    """Run an async test body (no pytest-asyncio needed)."""
    return asyncio.run(coro_fn())


async def settle(pilot: Any, rounds: int = 200) -> None:
    """Wait for every worker, then let the screen apply the results (no time limits asserted)."""
    app = pilot.app
    for _ in range(rounds):
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        if not getattr(screen, "busy", False) and not any(w.is_running for w in app.workers):
            await pilot.pause()
            return
    raise AssertionError("the app did not settle")
