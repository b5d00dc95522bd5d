"""dynamic_slice / dynamic_update_slice against jax.lax on XLA:CPU (bit-exact), clamping included."""

from __future__ import annotations

import numpy as np
import pytest

from hlolab.interp.single import apply_op
from hlolab.ir.attrs import DenseArrayAttr
from hlolab.types import element_type_of_dtype, tensor_type
from tests.conftest import require_oracle

if require_oracle():
    import jax
else:
    jax = pytest.importorskip("jax", reason="SKIPPED LOUDLY: jax is not installed; the XLA oracle "
                                            "tests need it (pip install -e '.[oracle]')")
from jax import lax  # noqa: E402

jax.config.update("jax_enable_x64", True)
CPU = jax.devices("cpu")[0]

# jax wraps negative start indices (Python style) before lowering, so only the high side of
# the clamp is compared here; the negative side is tested against the spec in test_slicing.py
CASES = [((5, 6), (2, 3), (1, 2)), ((5, 6), (2, 3), (4, 9)), ((4,), (4,), (7,)),
         ((3, 4, 2), (1, 4, 2), (2, 0, 5)), ((3, 3), (0, 2), (1, 1))]


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.uint16])
@pytest.mark.parametrize("shape, window, starts", CASES)
def test_dynamic_slice_and_update_match_xla(shape, window, starts, dtype):
    x = (np.arange(int(np.prod(shape))) * 3 - 7).astype(dtype).reshape(shape)
    s = [np.array(v, np.int32) for v in starts]
    with jax.default_device(CPU):
        want = np.asarray(jax.jit(lambda a, *i: lax.dynamic_slice(a, i, window))(x, *s))
    (got,) = apply_op("stablehlo.dynamic_slice", [x, *s],
                      {"slice_sizes": DenseArrayAttr("i64", window)},
                      [tensor_type(window, element_type_of_dtype(x.dtype))])
    assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
    u = (100 - np.arange(int(np.prod(window)))).astype(dtype).reshape(window)
    with jax.default_device(CPU):
        want = np.asarray(jax.jit(lambda a, b, *i: lax.dynamic_update_slice(a, b, i))(x, u, *s))
    (got,) = apply_op("stablehlo.dynamic_update_slice", [x, u, *s], None,
                      [tensor_type(shape, element_type_of_dtype(x.dtype))])
    assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
