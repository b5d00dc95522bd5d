"""sort against jax.lax.sort on XLA:CPU (bit-exact): the exact StableHLO jax emits
(num_keys 1 and 2, is_stable, NaN/-0.0 canonicalization) run by hlolab's interpreter."""

from __future__ import annotations

import numpy as np
import pytest

from hlolab.interp.engine import Interpreter
from hlolab.ir.parser import parse_module
from tests.conftest import require_oracle

if require_oracle():
    import jax
else:
    jax = pytest.importorskip("jax", reason="SKIPPED LOUDLY: jax is not installed; the XLA oracle "
                                            "tests need it (pip install -e '.[oracle]')")
from jax import lax  # noqa: E402

jax.config.update("jax_enable_x64", True)
CPU = jax.devices("cpu")[0]


def both(fn, *args):
    with jax.default_device(CPU):
        want = jax.jit(fn)(*args)
        text = jax.jit(fn).lower(*args).as_text()
    want = [np.asarray(w) for w in (want if isinstance(want, (tuple, list)) else [want])]
    got = Interpreter(parse_module(text)).run(None, list(args))
    return got, want


def same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape and g.tobytes() == w.tobytes(), (g, w)


SPECIAL = np.array([np.nan, -0.0, 0.0, -np.nan, np.inf, -np.inf, 1.5, -1.5, 0.0, np.nan, 3.0, -0.0],
                   np.float32)


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8])
def test_one_key_stable(dim, dtype):
    rng = np.random.default_rng(3)
    x = (SPECIAL.reshape(3, 4) if dtype == np.float32 else
         rng.integers(0, 9, (3, 4)).astype(dtype))
    vals = np.arange(12, dtype=np.int32).reshape(3, 4)
    same(*both(lambda a, b: lax.sort((a, b), dimension=dim, num_keys=1, is_stable=True), x, vals))
    same(*both(lambda a: lax.sort(a, dimension=dim), x))


def test_unstable_with_unique_keys():
    x = np.random.default_rng(4).permutation(40).astype(np.float32).reshape(5, 8)
    same(*both(lambda a, b: lax.sort((a, b), num_keys=1, is_stable=False), x, -x))


def test_two_keys_lexicographic():
    rng = np.random.default_rng(5)
    k1, k2 = rng.integers(0, 3, (4, 9)).astype(np.int32), rng.integers(0, 3, (4, 9)).astype(np.float32)
    v = np.arange(36, dtype=np.int32).reshape(4, 9)
    got, want = both(lambda a, b, c: lax.sort((a, b, c), num_keys=2, is_stable=True), k1, k2, v)
    same(got, want)
