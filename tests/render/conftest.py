"""Every render test starts without open figures and closes what it opened."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    import matplotlib.pyplot as plt

    plt.close("all")
