"""stablehlo.rng_bit_generator vs XLA:CPU, output and output state bit-exact.

- ``jax.lax.rng_bit_generator(key, shape, dtype, algorithm)`` for THREE_FRY, PHILOX and DEFAULT,
  every dtype jax accepts there (uint8/16/32/64), shapes of rank 0..3 with odd, even, unit and
  zero sizes, states whose counter is near 2^64 (wraps and carries).
- Hand-written StableHLO for the types jax refuses but XLA:CPU compiles (signed integers, ui2/ui4,
  every float type but the f6 ones) and for PHILOX's 3-word state (jax takes 2 words only).
  XLA:CPU returns such an output as the unsigned integer of the same width: the bits are compared.
- ``jax.random.bits / uniform / normal / bernoulli`` under the ``rbg`` and ``unsafe_rbg`` PRNGs:
  the lowered program (rng_bit_generator, then shifts, bitcasts, arithmetic, erf_inv) runs in
  hlolab and on XLA:CPU, every output bit-exact but a uniform on [-2, 3), where XLA:CPU fuses a
  multiply and an add (FUSED).
"""

from __future__ import annotations

import numpy as np
import pytest

from hlolab.numerics import to_bits
from tests.oracle.differential.harness import WORKER, Case, hlolab_run, jax, lax, run_cases
from tests.oracle.differential.harness import same_bits as _same_bits

ALGORITHMS = {"THREE_FRY": lax.RandomAlgorithm.RNG_THREE_FRY, "PHILOX": lax.RandomAlgorithm.RNG_PHILOX,
              "DEFAULT": lax.RandomAlgorithm.RNG_DEFAULT}
JAX_DTYPES = [np.uint8, np.uint16, np.uint32, np.uint64]
# rank 0..3; odd, even, unit and zero sizes; an odd-only shape (THREE_FRY halves its largest dim)
SHAPES = [(), (0,), (1,), (2,), (7,), (3, 5), (2, 4), (4, 0), (1, 1, 9), (3, 5, 7), (2, 3, 4), (6, 1, 3)]
# the types XLA:CPU compiles that jax's rng_bit_generator refuses (f6E2M3FN/f6E3M2FN: XLA has no
# primitive type for them; i1 and complex: not integer or floating-point)
TEXT_TYPES = ["i2", "i4", "i8", "i16", "i32", "i64", "ui2", "ui4", "f4E2M1FN", "f8E3M4", "f8E4M3",
              "f8E4M3FN", "f8E4M3FNUZ", "f8E4M3B11FNUZ", "f8E5M2", "f8E5M2FNUZ", "f8E8M0FNU", "bf16",
              "f16", "f32", "f64"]
TEXT_STATES = [("THREE_FRY", 2), ("PHILOX", 2), ("PHILOX", 3), ("DEFAULT", 2), ("DEFAULT", 3)]
TEXT_SHAPES = [(), (0, 3), (1,), (5,), (3, 5), (2, 4), (5, 3, 7), (2, 1, 6)]


def state(n: int, seed: int) -> np.ndarray:
    """A random state; every third one's counter word sits 3 below 2^64 (wrap, carry)."""
    s = np.random.default_rng(seed).integers(0, 2**64, n, dtype=np.uint64, endpoint=False)
    if seed % 3 == 0:
        s[1] = np.uint64(2**64 - 3)
    return s


# --- jax.lax.rng_bit_generator ------------------------------------------------------------------

@pytest.mark.parametrize("algorithm", sorted(ALGORITHMS))
@pytest.mark.parametrize("dtype", JAX_DTYPES, ids=lambda d: np.dtype(d).name)
def test_lax_rng_bit_generator(algorithm, dtype):
    cases = []
    for s, shape in enumerate(SHAPES):
        def fn(k, shape=shape):
            return lax.rng_bit_generator(k, shape, dtype=dtype, algorithm=ALGORITHMS[algorithm])
        # integer outputs: ulp_table makes every integer comparison bit-exact
        label = f"{algorithm} {np.dtype(dtype).name} {shape}"
        cases.append(Case(label, fn, [state(2, s)], "rng_bit_generator"))
    assert run_cases(cases) == len(cases) == len(SHAPES)


# --- hand-written text: every other output type, 3-word PHILOX states ---------------------------

def _dims(shape: tuple[int, ...]) -> str:
    return "".join(f"{d}x" for d in shape)


def text_program(algorithm: str, n: int, et: str, shapes: list[tuple[int, ...]]) -> str:
    """@main(state per shape) -> (output_state, output) per shape."""
    st = f"tensor<{n}xui64>"
    outs = [f"tensor<{_dims(s)}{et}>" for s in shapes]
    args = ", ".join(f"%s{i}: {st}" for i in range(len(shapes)))
    results = ", ".join(f"{st}, {o}" for o in outs)
    body = [f"    %st{i}, %out{i} = stablehlo.rng_bit_generator %s{i}, algorithm = {algorithm} : "
            f"({st}) -> ({st}, {o})" for i, o in enumerate(outs)]
    ret = ", ".join(f"%st{i}, %out{i}" for i in range(len(shapes)))
    return (f"module @rng {{\n  func.func public @main({args}) -> ({results}) {{\n" + "\n".join(body)
            + f"\n    return {ret} : {results}\n  }}\n}}")


def _bits(a: np.ndarray, width: int) -> np.ndarray:
    """An array's bit patterns as uint64, masked to the type's width (sub-byte types)."""
    return to_bits(a).astype(np.uint64) & np.uint64((1 << width) - 1)


@pytest.mark.parametrize("algorithm,n", TEXT_STATES)
@pytest.mark.parametrize("et", TEXT_TYPES)
def test_text_rng_bit_generator_types(algorithm, n, et):
    from hlolab.types import element_type

    width = element_type(et).bits
    text = text_program(algorithm, n, et, TEXT_SHAPES)
    args = [state(n, 10 * k + len(et)) for k in range(len(TEXT_SHAPES))]
    fut = WORKER.submit(text, args)
    try:
        ours = hlolab_run(text, args, f"{algorithm} {et}")
    finally:
        ref = WORKER.result(fut, f"{algorithm} {et}\n{text}")
    assert len(ours) == len(ref) == 2 * len(TEXT_SHAPES)
    for i, shape in enumerate(TEXT_SHAPES):
        st, out = ours[2 * i], ours[2 * i + 1]
        xst, xout = ref[2 * i], np.asarray(ref[2 * i + 1])
        np.testing.assert_array_equal(st, xst, err_msg=f"{algorithm} {et} {shape}: output_state")
        assert out.shape == xout.shape == shape and out.dtype == element_type(et).dtype
        # XLA's array: the unsigned integer type of the output's width, holding the bits
        xbits = xout.astype(np.uint64) & np.uint64((1 << width) - 1)
        np.testing.assert_array_equal(_bits(out, width), xbits, err_msg=f"{algorithm} {et} {shape}: output")


# --- jax.random under the rbg PRNGs ---------------------------------------------------------------

def draws(key):
    """Random bits, uniform, normal and bernoulli draws of several shapes and types from one key;
    output 7 is output 3's draw mapped to [-2, 3) (see FUSED)."""
    k = jax.random.split(key, 7)
    return (jax.random.bits(k[0], (3, 5), np.uint32), jax.random.bits(k[1], (7,), np.uint8),
            jax.random.bits(k[2], (2, 3), np.uint64), jax.random.uniform(k[3], (4, 6), np.float32),
            jax.random.uniform(k[4], (5,), np.float64), jax.random.normal(k[5], (3, 5), np.float32),
            jax.random.bernoulli(k[6], 0.3, (4, 4)), jax.random.uniform(k[3], (4, 6), np.float32, -2.0, 3.0))


# uniform(minval=-2, maxval=3) is u * 5 + -2 (u: output 3, bit-exact): XLA:CPU contracts the
# multiply and add into one fused multiply-add (one rounding; measured: XLA's values are exactly
# fl(u * 5 - 2) from float64), hlolab rounds each StableHLO op as the spec says. Near 0 the sum
# cancels, so the two differ by up to one rounding of the terms: |delta| <= eps * (|5 u| + 2).
FUSED = 7


@pytest.mark.parametrize("impl", ["rbg", "unsafe_rbg"])
@pytest.mark.parametrize("seed", [0, 1, 12345])
def test_jax_random_under_rbg(impl, seed):
    old = jax.config.jax_default_prng_impl
    jax.config.update("jax_default_prng_impl", impl)
    try:
        key = np.asarray(jax.random.key_data(jax.random.PRNGKey(seed)))
        text = jax.jit(draws).lower(key).as_text()
    finally:
        jax.config.update("jax_default_prng_impl", old)
    assert "stablehlo.rng_bit_generator" in text
    fut = WORKER.submit(text, [key])
    try:
        ours = hlolab_run(text, [key], f"{impl} seed {seed}")
    finally:
        ref = WORKER.result(fut, f"{impl} seed {seed}\n{text}")
    assert len(ours) == len(ref) == 8
    for j, (o, r) in enumerate(zip(ours, ref)):
        assert o.dtype == r.dtype and o.shape == r.shape, (impl, seed, j)
        ok = _same_bits(o, r)
        if j == FUSED:
            terms = np.abs(ours[3].astype(np.float64) * 5) + 2
            ok |= np.abs(o.astype(np.float64) - r.astype(np.float64)) <= np.finfo(np.float32).eps * terms
        assert ok.all(), f"{impl} seed {seed} output {j}: {int((~ok).sum())} of {ok.size} differ\n{text}"
