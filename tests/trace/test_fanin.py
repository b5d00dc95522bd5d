"""FanInProvenance: the on-demand window provenance of fan-in ops."""

import numpy as np
import pytest

from hlolab.trace.fanin import Fan, FanInProvenance, expand
from hlolab.trace.provenance import Source, Target


def _row_sum(shape=(3, 4)):
    """result[i] = init + sum_j operand[i, j]: operand 0 rows, operand 1 a rank-0 init."""
    n = shape[1]

    def fans(result, ridx):
        (i,) = ridx
        j = np.arange(n, dtype=np.int64)
        return [Fan(1, "init", ()), Fan(0, "window", (expand(i, 1), j))]

    return FanInProvenance([(shape[0],)], [shape, ()], fans, schedule="init, then j = 0..n-1")


def _padded_1d(n=5, k=3, pad=1):
    """A 1-D 'same' window sum over an operand zero-padded by `pad` on both sides."""
    frame = (n + 2 * pad,)

    def fans(result, ridx):
        (o,) = ridx
        p = expand(o, 1) + np.arange(k)  # position in the padded frame
        inside = (p >= pad) & (p < pad + n)
        return [Fan(0, "window", (p - pad,), valid=inside, position=(p,)),
                Fan(None, "pad_value", (p,), valid=~inside, frame=frame, position=(p,))]

    return FanInProvenance([(n + 2 * pad - k + 1,)], [(n,)], fans, chunk_elements=4)


def test_sources_follow_the_schedule_order():
    prov = _row_sum()
    assert prov.sources(0, (1,)) == [Source(1, (), "init")] + [Source(0, (1, j), "window") for j in range(4)]
    assert prov.schedule == "init, then j = 0..n-1"


def test_targets_and_set_forms():
    prov = _row_sum()
    assert prov.targets(0, (2, 3)) == [Target(0, (2,), "window")]
    assert prov.targets(1, ()) == [Target(0, (i,), "init") for i in range(3)]
    back = prov.back(0, np.array([True, False, True]))
    assert back[(0, "window")].tolist() == [[True] * 4, [False] * 4, [True] * 4]
    assert back[(1, "init")].shape == () and bool(back[(1, "init")])
    fwd = prov.fwd(0, np.eye(3, 4, dtype=bool))
    assert fwd[(0, "window")].tolist() == [True, True, True]


def test_padding_positions_and_implicit_frame():
    prov = _padded_1d()
    src = prov.sources(0, (0,))
    assert src == [Source(0, (0,), "window"), Source(0, (1,), "window"), Source(None, (0,), "pad_value")]
    (win, pad) = prov.window(0, (4,))
    assert win.position[:, 0].tolist() == [4, 5, 6]
    assert win.valid.tolist() == [True, True, False] and pad.valid.tolist() == [False, False, True]
    # chunked evaluation (chunk_elements=4 < output x window) agrees with one element at a time
    mask = np.ones(5, dtype=bool)
    back = prov.back(0, mask)
    assert back[(0, "window")].all()
    assert back[(None, "pad_value")].tolist() == [True, False, False, False, False, False, True]
    fwd = prov.fwd(0, np.array([False, False, False, False, True]))
    assert np.flatnonzero(fwd[(0, "window")]).tolist() == [3, 4]


def test_bad_fans_are_reported():
    def fans(result, ridx):
        return [Fan(0, "nonsense", (np.zeros((), np.int64),))]

    prov = FanInProvenance([(2,)], [(3,)], fans)
    with pytest.raises(ValueError, match="unknown provenance role"):
        prov.sources(0, (0,))


def test_rank0_result_and_window_only_offsets():
    """A full sum to a scalar: the window offsets carry no result axes (window=)."""
    def fans(result, ridx):
        i, j = np.indices((2, 3), dtype=np.int64)
        return [Fan(0, "window", (i, j), window=(2, 3)), Fan(1, "init", ())]

    prov = FanInProvenance([()], [(2, 3), ()], fans, chunk_elements=1)
    assert len(prov.sources(0, ())) == 7
    back = prov.back(0, np.array(True))
    assert back[(0, "window")].all() and bool(back[(1, "init")])
    mask = np.zeros((2, 3), bool)
    mask[1, 2] = True
    assert prov.targets(0, (1, 2)) == [Target(0, (), "window")]
    assert bool(prov.fwd(0, mask)[(0, "window")])


def test_window_shape_with_a_batch_rank_above_the_window_rank():
    def fans(result, ridx):
        i, j = ridx
        k = np.arange(3, dtype=np.int64)  # offsets only: shape W = (3,)
        return [Fan(0, "window", (expand(i, 1), expand(j, 1), k), window=(3,))]

    prov = FanInProvenance([(2, 2)], [(2, 2, 3)], fans)
    back = prov.back(0, np.array([[True, False], [False, False]]))
    assert np.argwhere(back[(0, "window")]).tolist() == [[0, 0, 0], [0, 0, 1], [0, 0, 2]]


def test_window_only_arrays_in_batches():
    """Every array of a fan is a window offset (no result axes), and the batch
    length equals the window length: the window shape comes from one element."""
    def fans(result, ridx):
        return [Fan(0, "window", (np.arange(3, dtype=np.int64),))]

    prov = FanInProvenance([(3,)], [(3,)], fans, chunk_elements=9)
    back = prov.back(0, np.array([True, False, True]))
    assert back[(0, "window")].tolist() == [True, True, True]
    fwd = prov.fwd(0, np.array([False, True, False]))
    assert fwd[(0, "window")].tolist() == [True, True, True]


def _generic(prov):
    """The same provenance without its projections: the fan-by-fan set forms."""
    from hlolab.trace.fanin import FanInProvenance

    return FanInProvenance(prov.result_shapes, prov.operand_shapes, prov._fans)


PROJECTED = {
    "reduce": ("""
    func.func @main(%x: tensor<3x4x5xf32>, %i: tensor<f32>) -> tensor<4xf32> {
      %r = stablehlo.reduce(%x init: %i) applies stablehlo.add across dimensions = [0, 2]
          : (tensor<3x4x5xf32>, tensor<f32>) -> tensor<4xf32>
      func.return %r : tensor<4xf32>
    }""", [(3, 4, 5), ()]),
    "dot_general": ("""
    func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
      %r = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1]
          : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
      func.return %r : tensor<2x3x5xf32>
    }""", [(2, 3, 4), (2, 4, 5)]),
    "dot_general_transposed": ("""
    func.func @main(%a: tensor<4x3xf32>, %b: tensor<5x4xf32>) -> tensor<3x5xf32> {
      %r = stablehlo.dot_general %a, %b, contracting_dims = [0] x [1]
          : (tensor<4x3xf32>, tensor<5x4xf32>) -> tensor<3x5xf32>
      func.return %r : tensor<3x5xf32>
    }""", [(4, 3), (5, 4)]),
}


@pytest.mark.parametrize("name", sorted(PROJECTED))
def test_projected_set_forms_agree_with_the_fans(name):
    from hlolab.interp.engine import Interpreter
    from hlolab.ir.parser import parse_module

    text, shapes = PROJECTED[name]
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    (event,) = [e for e in Interpreter(parse_module(text)).events(None, args)]
    fast = event.provenance()
    assert fast._project is not None
    slow = _generic(fast)
    rshape = fast.result_shapes[0]
    for trial in range(20):
        mask = rng.random(rshape) < [0.0, 0.1, 0.5, 1.0][trial % 4]
        a, b = fast.back(0, mask), slow.back(0, mask)
        assert a.keys() == b.keys()
        for k in a:
            np.testing.assert_array_equal(a[k], b[k])
        for op_i, oshape in enumerate(fast.operand_shapes):
            om = rng.random(oshape) < [0.0, 0.1, 0.5, 1.0][trial % 4]
            a, b = fast.fwd(op_i, om), slow.fwd(op_i, om)
            assert a.keys() == b.keys()
            for k in a:
                np.testing.assert_array_equal(a[k], b[k])
