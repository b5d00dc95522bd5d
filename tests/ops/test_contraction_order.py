"""XLA:CPU's summation orders for complex dot_general and f64 / complex convolution
(hlolab/ops/contraction.py, "XLA:CPU's summation orders"), checked on hand-built values whose
result shows the order: the sums cancel or lose low bits differently in every other order. The
comparison with XLA:CPU itself is tests/oracle/differential/test_diff_contraction.py."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from hlolab.messages import text
from hlolab.ops.contraction import (
    PAIRS,
    QUADS,
    SCALAR,
    SEQUENTIAL,
    c_multiply,
    eigen_kc,
    eigen_kc_threaded,
    fma,
    gebp_regions,
    tree_sum,
    xla_dot_path,
)
from tests.ops.test_contraction import conv_program, dot_program, explain, run

C64, C128 = np.dtype(np.complex64), np.dtype(np.complex128)
BIG = 2.0 ** 53  # adding 1 to it is lost (a tie, rounded to even)


def _exact_fma(a: float, b: float, c: float, dt: type) -> float:
    """a * b + c rounded once to dt: the exact rational, rounded by comparing neighbours."""
    exact = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
    near = dt(float(exact))  # f64 rounding of the exact value; f32 may round twice, so check
    cands = [np.nextafter(near, dt(-np.inf)), near, np.nextafter(near, dt(np.inf))]

    def key(x: np.generic) -> tuple:
        bits = np.asarray(x).view(np.uint32 if dt == np.float32 else np.uint64)
        return abs(Fraction(float(x)) - exact), int(bits) & 1
    return min(cands, key=key)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_fma_rounds_once(dt):
    rng = np.random.default_rng(0)
    n = 3000
    a, b = rng.standard_normal(n).astype(dt), rng.standard_normal(n).astype(dt)
    c = (rng.standard_normal(n) * 10.0 ** rng.integers(-6, 6, n)).astype(dt)
    c[::3] = -(a[::3] * b[::3])  # the product's rounding error is all that is left
    got = fma(a, b, c)
    assert got.dtype == dt
    for i in range(0, n, 3):
        assert got[i] == _exact_fma(a[i], b[i], c[i], dt), (a[i], b[i], c[i])
    assert np.count_nonzero(got[::3]) > n // 4  # a plain a * b + c gives 0 there
    assert np.isnan(fma(dt(np.inf), dt(0), dt(1))) and fma(dt(np.inf), dt(2), dt(1)) == np.inf


def test_c_multiply_recovers_infinities_as_c_does():
    # (inf + NaN i)(1 + 0i): the formula gives NaN + NaN i, C11 Annex G an infinite real part
    re, im = c_multiply(np.inf, np.nan, 1.0, 0.0)
    assert re == np.inf and np.isnan(im)
    re, im = c_multiply(np.array([1.5, np.nan]), np.array([2.0, 0.0]), np.array([3.0, 1.0]),
                        np.array([-1.0, 0.0]))
    assert (re[0], im[0]) == (6.5, 4.5) and np.isnan(re[1]) and np.isnan(im[1])


def test_gebp_register_blocks():
    # complex<f32>: packets of 4 rows (Eigen's rows are the result's columns n), columns in 4s
    assert gebp_regions(6, 13, C64) == [
        (slice(0, 6), slice(0, 8), SEQUENTIAL), (slice(0, 4), slice(8, 12), PAIRS),
        (slice(4, 6), slice(8, 12), SEQUENTIAL), (slice(0, 4), slice(12, 13), QUADS),
        (slice(4, 6), slice(12, 13), SCALAR)]
    # complex<f64>: packets of 2, half packets of 1 cover every row
    regions = gebp_regions(5, 7, C128)
    assert regions[0] == (slice(0, 5), slice(0, 4), SEQUENTIAL)
    assert regions[1] == (slice(0, 4), slice(4, 7), PAIRS)
    assert all(ns.start == ns.stop for _, ns, p in regions if p in (QUADS, SCALAR))


def test_eigen_k_blocks_and_paths():
    assert eigen_kc(336, 8, 5, C64) == 336 and eigen_kc(340, 8, 5, C64) == 176
    assert eigen_kc(248, 8, 5, C128) == 248 and eigen_kc(340, 8, 5, C128) == 176
    assert eigen_kc(1000, 8, 8, C128) == 208
    assert (eigen_kc_threaded(C64), eigen_kc_threaded(C128)) == (320, 248)
    assert [xla_dot_path(*s) for s in [(1, 4, 1, 6), (2, 1, 9, 1), (1, 1, 9, 5), (1, 4, 3, 6),
                                       (1, 4, 0, 6)]] == ["multiply", "vector", "gemv", "gebp", "empty"]


def _dot(lhs: np.ndarray, rhs: np.ndarray, e: str):
    return run(dot_program(lhs.shape, rhs.shape, e, e, lc=[lhs.ndim - 1], rc=[0]), [lhs, rhs])


def test_gebp_sums_even_and_odd_k_apart():
    # complex<f64>, 5 x 8 times 8 x 2: rows 0..3 (four columns of Eigen's) keep even and odd k in
    # two sums, row 4 one running sum. Column: 2^53, 1, -2^53, 1, 1, 1, 1, 1.
    col = np.array([BIG, 1, -BIG, 1, 1, 1, 1, 1])
    ev = _dot(np.ones((5, 8), C128), np.stack([col, col], axis=1).astype(C128), "complex<f64>")
    out = ev.outputs[0]
    assert out.real[:4].tolist() == [[6.0, 6.0]] * 4  # (2^53 - 2^53 + 1 + 1) + (1 + 1 + 1 + 1)
    assert out.real[4].tolist() == [5.0, 5.0]  # 2^53 + 1 loses the 1, then -2^53, then five 1s
    e = explain(ev, (0, 0))
    assert [n.key for n in e.notes] == ["contraction.note.xla"]
    how = e.notes[0].args["how"]
    assert how.key == "contraction.xla.gebp" and how.args["pattern"].key == "contraction.xla.pattern.pairs"
    assert how.args["pattern"].args["peeled"] == 8
    assert explain(ev, (4, 1)).notes[0].args["how"].args["pattern"].key == \
        "contraction.xla.pattern.sequential"


def test_gebp_keeps_the_four_real_sums_apart():
    # re = sum(a.re*b.re) - sum(a.im*b.im) with a = 1 + i, b = (2^53 + 2^53 i, 1, 1): the first sum
    # is 2^53 + 1 + 1 = 2^53 (each 1 lost), the second 2^53, so re = 0; adding the complex products
    # (0, then 1, then 1) would give 2
    a = np.full((4, 3), 1 + 1j, C128)
    b = np.array([[BIG + BIG * 1j] * 2, [1] * 2, [1] * 2], C128)
    out = _dot(a, b, "complex<f64>").outputs[0]
    assert out.real.tolist() == [[0.0] * 2] * 4 and out.imag.tolist() == [[2 * BIG] * 2] * 4


def test_vector_dot_tree_reduction():
    # two vectors, 33 terms: XLA sums windows of 32 over the terms padded 15 / 16: window 0 holds
    # k = 0..16 (2^53 then 16 ones, each lost), window 1 the other 16 ones: 2^53 + 16.
    v = np.array([BIG] + [1.0] * 32)
    out = _dot(np.ones((1, 33), C128), v.astype(C128)[:, None], "complex<f64>").outputs[0]
    assert out.real.item() == BIG + 16
    out = _dot(np.ones((1, 32), C128), v[:32].astype(C128)[:, None], "complex<f64>").outputs[0]
    assert out.real.item() == BIG  # 32 terms: one unrolled loop, every 1 lost
    assert tree_sum(np.array([[BIG] + [1.0] * 32])).tolist() == [BIG + 16]


def test_gemv_blocks_of_16_from_k_128():
    # 1 x 130 times 130 x 2: Eigen's gemv adds blocks of 16 terms; in block 0 the 15 ones after
    # 2^53 are lost, the other blocks (16 ones, 16 ones, ..., 2 ones) are added whole
    col = np.array([BIG] + [1.0] * 129)
    ev = _dot(np.ones((1, 130), C64).astype(C128), np.stack([col, col], 1).astype(C128), "complex<f64>")
    assert ev.outputs[0].real.tolist() == [[BIG + 114, BIG + 114]]
    how = explain(ev, (0, 0)).notes[0].args["how"]
    assert how.key == "contraction.xla.gemv_blocks" and how.args == {"block": 16}


def test_k_equal_one_is_a_fused_multiply():
    # (1 + 2^-27 + 0i)(1 + 2^-27 + 0i) + ... : re = fma(a.re, b.re, -(a.im*b.im)) with
    # a.im*b.im = (1 + 2^-27)^2 rounded: re = 2^-54 exactly (a separate rounding gives 0)
    x = 1 + 2.0 ** -27
    a = np.array([[x + x * 1j]], C128)
    ev = _dot(np.tile(a, (3, 1)), np.array([[x + x * 1j] * 2], C128), "complex<f64>")
    assert ev.outputs[0].real.tolist() == [[2.0 ** -54] * 2] * 3
    e = explain(ev, (0, 1))
    assert e.notes[0].args["how"].key == "contraction.xla.multiply"
    assert "fma(a.re, b.re, -(a.im*b.im))" in text(e.notes[0])


def test_real_dots_keep_the_blas_note():
    ev = _dot(np.ones((2, 3), np.float32), np.ones((3, 2), np.float32), "f32")
    assert [n.key for n in explain(ev, (0, 0)).notes] == ["contraction.note.order"]


NCW = "[b, f, 0]x[o, i, 0]->[b, f, 0]"
X = 1 + 2.0 ** -27


def _conv1d(x, w, out_w, padding=((0, 0),), dt="f64"):
    text_ = conv_program(x.shape, w.shape, dt, dt, (1, w.shape[0], out_w), NCW, (1,), padding, (1,), (1,),
                         (False,))
    return run(text_, [x, w])


def test_f64_convolution_fuses_each_product_in_kernel_order():
    # one output, taps x0*w0 then x1*w1: fma(x1, w1, x0*w0) = X^2 rounded - X^2 exactly = -2^-54;
    # the other order gives +2^-54, unfused products 0
    x = np.array([[[X, -X]]])
    w = np.array([[[X, X]]])
    ev = _conv1d(x, w, 1)
    assert ev.outputs[0].ravel().tolist() == [-(2.0 ** -54)]
    e = explain(ev, (0, 0, 0))
    assert e.notes[0].key == "contraction.note.xla"
    assert e.notes[0].args["how"].key == "contraction.xla.conv_loop"
    assert e.notes[0].args["how"].args["direction"].key == "contraction.xla.kernel_order"


def test_f64_convolution_with_swapped_operands_runs_backwards():
    # kernel of 3 over an input of 2, padded 1 / 1: XLA swaps the operands (3 > 2) and its loop then
    # visits the input backwards: output 1 = fma(x0, w0, x1*w1 rounded) = +2^-54
    x = np.array([[[X, -X]]])
    w = np.array([[[X, X, 5.0]]])
    ev = _conv1d(x, w, 2, padding=((1, 1),))
    assert ev.outputs[0].ravel()[1] == 2.0 ** -54
    notes = explain(ev, (0, 0, 1)).notes
    assert notes[0].args["how"].args["direction"].key == "contraction.xla.kernel_order_swapped"
    assert notes[0].args["how"].args["direction"].args == {"dims": [0]}
    assert notes[1].key == "contraction.note.xla_conditional"


def test_complex_convolution_note_says_best_effort():
    x = np.array([[[X + 1j, -X]]], np.complex128)
    w = np.array([[[X, X - 1j]]], np.complex128)
    e = explain(_conv1d(x, w, 1, dt="complex<f64>"), (0, 0, 0))
    assert [n.key for n in e.notes] == ["contraction.note.xla", "contraction.note.xla_complex_conv"]
    assert e.notes[0].args["how"].key == "contraction.xla.conv_loop_complex"
