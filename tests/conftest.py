"""Shared test setup: hypothesis profiles and the location of ../shared."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"

# CI must not go red by chance: fixed example generation, no deadlines.
settings.register_profile("ci", derandomize=True, deadline=None, max_examples=100,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", deadline=None, max_examples=200)
# The README's test command is deterministic everywhere; HYPOTHESIS_PROFILE=dev explores new examples.
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def shared_dir(*parts: str) -> Path:
    """A folder of ../shared, or a loud skip when it is absent."""
    p = SHARED.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"SKIPPED LOUDLY: {p} is missing; these tests need the ../shared folder "
                    "beside the repo")
    return p


def require_oracle() -> bool:
    """Whether a missing jax must fail the run (CI) rather than skip."""
    return bool(os.environ.get("HLOLAB_REQUIRE_ORACLE"))


if require_oracle():
    import importlib.util

    if importlib.util.find_spec("jax") is None:
        raise RuntimeError("HLOLAB_REQUIRE_ORACLE is set but jax is not installed: "
                           "pip install -e '.[oracle]'")
