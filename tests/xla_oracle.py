"""XLA:CPU as a test oracle: compile StableHLO text with jax's client and run it.

Import this module at the top of an oracle test file: it skips the file
loudly when jax is missing, and fails instead when CI requires the oracle
(``HLOLAB_REQUIRE_ORACLE``). hlolab itself never imports jax.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import require_oracle

if require_oracle():
    import jax
else:
    jax = pytest.importorskip("jax", reason="SKIPPED LOUDLY: jax is not installed; the XLA oracle "
                                            "tests need it (pip install -e '.[oracle]')")

jax.config.update("jax_enable_x64", True)

try:
    from jax.extend import backend as _backend
    from jaxlib import xla_client as _xla_client

    CPU = _backend.get_backend("cpu")
except Exception as e:  # pragma: no cover - depends on the installed jax
    if require_oracle():
        raise
    pytest.skip(f"SKIPPED LOUDLY: cannot reach jax's XLA:CPU backend: {e}", allow_module_level=True)


def run_xla(text: str, *args: np.ndarray) -> list[np.ndarray]:
    """Compile StableHLO text with XLA:CPU and run it on ``args``.

    The compile options are built as jax builds them: the bare default of
    ``compile_and_load`` skips XLA's flag defaults (it enables fast min/max,
    which ignores NaNs)."""
    exe = CPU.compile_and_load(text, CPU.devices()[:1], _xla_client.CompileOptions())
    res = exe.execute_sharded([jax.device_put(np.asarray(a), CPU.devices()[0]) for a in args])
    return [np.asarray(o[0]) for o in res.disassemble_into_single_device_arrays()]
