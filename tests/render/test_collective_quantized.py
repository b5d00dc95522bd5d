"""The collective picture (hlolab/render/collective.py) of quantized operands: each block
carries the real values of its stored integers, drawn under them as on every other board."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from hlolab.render.collective import collective_model, draw_collective  # noqa: E402
from tests.render.test_collective_render import _event  # noqa: E402

Q = "!quant.uniform<i8:f32, 0.5:-1>"  # real = (stored + 1) / 2
# process p holds stored [2p + 1, 2p + 3] (reals p + 1, p + 2); all_gather carries storage
GATHER = f"""
func.func @main() -> tensor<4x{Q}> {{
  %id = stablehlo.replica_id : tensor<ui32>
  %id8 = stablehlo.convert %id : (tensor<ui32>) -> tensor<i8>
  %two = stablehlo.constant dense<2> : tensor<i8>
  %b = stablehlo.multiply %id8, %two : tensor<i8>
  %bb = stablehlo.broadcast_in_dim %b, dims = [] : (tensor<i8>) -> tensor<2xi8>
  %c = stablehlo.constant dense<[1, 3]> : tensor<2xi8>
  %s = stablehlo.add %c, %bb : tensor<2xi8>
  %q = stablehlo.bitcast_convert %s : (tensor<2xi8>) -> tensor<2x{Q}>
  %g = "stablehlo.all_gather"(%q) {{
    all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>
  }} : (tensor<2x{Q}>) -> tensor<4x{Q}>
  return %g : tensor<4x{Q}>
}}
"""


def test_quantized_blocks_carry_and_draw_their_real_values():
    ev = _event(GATHER, "%g", 1)
    m = collective_model(ev, (0, (3,)))
    c0, c1 = m.columns
    np.testing.assert_array_equal(c1.operands[0].values, [3, 5])
    np.testing.assert_array_equal(c1.operands[0].reals, [2.0, 3.0])
    np.testing.assert_array_equal(c0.results[0].values, [1, 3, 3, 5])
    np.testing.assert_array_equal(c0.results[0].reals, [1.0, 2.0, 2.0, 3.0])
    pic = draw_collective(m)
    view = pic.board.views["p1.result0"]
    assert [t.get_text() for t in view.texts] == ["1", "3", "3", "5"]
    assert [t.get_text() for t in view.real_texts] == ["1", "2", "2", "3"]


def test_float_blocks_have_no_real_values():
    from tests.render.test_collective_render import REDUCE_GATHER

    m = collective_model(_event(REDUCE_GATHER, "%gathered", 0), (0, (0, 0)))
    assert all(b.reals is None for c in m.columns for b in (*c.operands, *c.results))
