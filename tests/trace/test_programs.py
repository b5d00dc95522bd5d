"""The tracing example programs and generators parse, run in hlolab and give XLA's results.

Without jax: hand-computed values for the shipped examples, and structural /
by-value checks of the generators. With jax (oracle tests, skipped loudly
without it): the examples against jax's own compiled functions, and the
movement programs against XLA:CPU bit for bit.
"""

from __future__ import annotations

import collections
import re
from pathlib import Path

import numpy as np
import pytest

from hlolab.interp.engine import Interpreter
from hlolab.ir.parser import parse_module
from tests.trace.programs import chain_program, random_movement_program

EXAMPLES = Path(__file__).resolve().parents[2] / "hlolab" / "examples"
EPS = float(np.finfo(np.float32).eps)
MLP_SHAPES = [(4, 8), (8, 16), (16,), (16, 3), (3,)]
CONV_SHAPES = [(1, 8, 8, 1), (3, 3, 1, 2)]


def run(text: str, args: list[np.ndarray]) -> list[np.ndarray]:
    return Interpreter(parse_module(text, "<test>")).run(None, args)


def example(name: str) -> str:
    return (EXAMPLES / f"{name}.mlir").read_text()


def ops_of(text: str) -> list[str]:
    return re.findall(r'= "?stablehlo\.(\w+)', text)


def oracle():
    return pytest.importorskip("jax", reason="SKIPPED LOUDLY: jax is not installed; the XLA oracle "
                                             "tests need it (pip install -e '.[oracle]')")


# --- numpy references, written independently of hlolab -------------------------------------------


def conv_same_nhwc(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """3x3 SAME cross-correlation, NHWC x HWIO, as a sum of 9 shifted products (float64)."""
    xp = np.pad(x.astype(np.float64), ((0, 0), (1, 1), (1, 1), (0, 0)))
    h, wd = x.shape[1:3]
    return sum(np.einsum("nhwi,io->nhwo", xp[:, dy:dy + h, dx:dx + wd, :], w[dy, dx].astype(np.float64))
               for dy in range(3) for dx in range(3))


def maxpool2(y: np.ndarray) -> np.ndarray:
    n, h, w, c = y.shape
    return y.reshape(n, h // 2, 2, w // 2, 2, c).max(axis=(2, 4))


# --- shipped examples -----------------------------------------------------------------------------


@pytest.mark.parametrize("name, kinds", [
    ("mlp_step", {"dot_general", "add", "broadcast_in_dim", "maximum", "reduce", "multiply", "divide"}),
    ("conv_maxpool", {"convolution", "reduce_window"}),
])
def test_examples_are_listed_jax_text_with_arguments(name, kinds):
    text = example(name)
    first = text.splitlines()[0]
    assert first.startswith("// ") and len(first) > 20  # `hlolab examples` prints this line
    assert "jax 0." in text.splitlines()[1] and "make_examples.py" in text.splitlines()[1]
    assert kinds <= set(ops_of(text))
    n_args = len(MLP_SHAPES if name == "mlp_step" else CONV_SHAPES)
    sig = re.search(r"@main\((.*?)\) ->", text).group(1)
    assert re.findall(r"%arg\d+", sig) == [f"%arg{i}" for i in range(n_args)]


def test_mlp_step_hand_computed():
    # all ones: x @ w1 + b1 = 8 + 1 = 9 -> relu 9; h @ w2 + b2 = 16 * 9 + 1 = 145;
    # loss = 12 * 145**2 / 4 = 63075. Then one negative pre-activation to see relu cut it.
    args = [np.ones(s, np.float32) for s in MLP_SHAPES]
    loss, logits = run(example("mlp_step"), args)
    assert loss.shape == () and loss == np.float32(63075.0)
    assert np.array_equal(logits, np.full((4, 3), 145.0, np.float32))
    args[2] = np.full(16, -10.0, np.float32)  # b1 = -10: every hidden unit is 8 - 10 < 0 -> 0
    args[4] = np.array([1.0, -2.0, 3.0], np.float32)
    loss, logits = run(example("mlp_step"), args)
    assert np.array_equal(logits, np.tile(np.float32([1.0, -2.0, 3.0]), (4, 1)))
    assert loss == np.float32(4 * (1 + 4 + 9) / 4)


def test_conv_maxpool_hand_computed():
    # channel 0 has a centre-tap kernel (identity): the pool is each 2x2 block's max, the
    # bottom-right x[2i+1, 2j+1] = 8(2i+1) + 2j+1 since x = arange increases right and down.
    # channel 1 sums the 3x3 neighbourhood (zero padded): checked against the numpy reference.
    x = np.arange(64, dtype=np.float32).reshape(1, 8, 8, 1)
    w = np.zeros((3, 3, 1, 2), np.float32)
    w[1, 1, 0, 0] = 1.0
    w[:, :, 0, 1] = 1.0
    (out,) = run(example("conv_maxpool"), [x, w])
    i, j = np.meshgrid(np.arange(4), np.arange(4), indexing="ij")
    assert np.array_equal(out[0, :, :, 0], (8 * (2 * i + 1) + 2 * j + 1).astype(np.float32))
    assert out[0, 0, 0, 1] == 0 + 1 + 2 + 8 + 9 + 10 + 16 + 17 + 18  # box around (1, 1)
    # integers below 2**24: every order of summation is exact
    assert np.array_equal(out, maxpool2(conv_same_nhwc(x, w)).astype(np.float32))


# --- chain_program --------------------------------------------------------------------------------


def test_chain_program_small_runs_finite_and_deterministic():
    text = chain_program(20, 1000)
    assert text == chain_program(20, 1000) and text != chain_program(20, 1000, seed=1)
    assert "func.func public @main(%arg0: tensor<25x40xf32>, %arg1: tensor<25x40xf32>)" in text
    assert len([k for k in ops_of(text) if k != "constant"]) == 20
    rng = np.random.default_rng(0)
    args = [rng.uniform(-1, 1, (25, 40)).astype(np.float32) for _ in range(2)]
    (out,) = run(text, args)
    assert out.shape == (25, 40) and out.dtype == np.float32 and np.isfinite(out).all()


def test_chain_program_mixes_every_kind():
    kinds = collections.Counter()
    for seed in range(3):
        text = chain_program(200, 1000, seed)
        ops = ops_of(text)
        assert len([k for k in ops if k != "constant"]) == 200
        assert ops.count("dot_general") <= 5
        kinds.update(ops)
    assert {"add", "subtract", "multiply", "maximum", "negate", "exponential", "tanh", "transpose",
            "reverse", "slice", "pad", "concatenate", "compare", "select", "reduce", "broadcast_in_dim",
            "dot_general", "reshape"} <= set(kinds)


def test_chain_program_benchmark_size_runs_and_stays_finite():
    # 200 ops x 10**5 elements: the size bench/trace.py times (no timing asserted here)
    text = chain_program(200, 100_000)
    rng = np.random.default_rng(1)
    args = [rng.uniform(-1, 1, (250, 400)).astype(np.float32) for _ in range(2)]
    (out,) = run(text, args)
    assert out.shape == (250, 400) and np.isfinite(out).all()


# --- random_movement_program ----------------------------------------------------------------------


def pad_constants(text: str) -> set[float]:
    return {float(v) for v in re.findall(r"%pad_\d+ = stablehlo.constant dense<([^>]*)>", text)}


@pytest.mark.parametrize("seed", range(30))
def test_movement_program_outputs_copy_inputs_or_padding(seed):
    text, args = random_movement_program(np.random.default_rng(seed))
    text2, args2 = random_movement_program(np.random.default_rng(seed))
    assert text == text2 and all(np.array_equal(a, b) for a, b in zip(args, args2))
    inputs = np.concatenate([a.ravel() for a in args])
    assert len(np.unique(inputs)) == inputs.size and (inputs > 0).all()  # distinct, positive
    pads = pad_constants(text)
    assert all(p < 0 for p in pads)
    (out,) = run(text, args)
    assert out.dtype == np.float32
    assert np.isin(out, np.concatenate([inputs, np.float32(sorted(pads))])).all(), (text, out)


def test_movement_programs_cover_every_op():
    kinds, padded = collections.Counter(), 0
    for seed in range(30):
        text, args = random_movement_program(np.random.default_rng(seed))
        kinds.update(ops_of(text))
        (out,) = run(text, args)
        padded += bool((out < 0).any() or np.isin(out, args[2]).any())
    assert {"transpose", "reverse", "slice", "pad", "concatenate", "reshape", "broadcast_in_dim",
            "gather", "dynamic_slice", "select", "compare"} <= set(kinds)
    assert padded >= 3  # padding values do reach outputs


# --- oracles (jax) --------------------------------------------------------------------------------


def load_specs():
    oracle()
    from tests.fixtures.make_examples import SPECS, render

    return SPECS, render


@pytest.mark.parametrize("name", ["mlp_step", "conv_maxpool"])
def test_example_file_is_what_this_jax_prints(name):
    jax = oracle()
    _, render = load_specs()
    text = example(name)
    if f"jax {jax.__version__}," not in text.splitlines()[1]:
        pytest.skip(f"SKIPPED LOUDLY: {name}.mlir was made by another jax than {jax.__version__}")
    assert text == render(name)


def test_mlp_step_matches_jax():
    """Float sums differ by order between XLA and numpy; both stay within the forward error
    bound |delta| <= 2 * n * eps * sum|terms| (n = the number of roundings on the longest
    path), evaluated with |x|, |w| through the same network."""
    jax = oracle()
    specs, _ = load_specs()
    rng = np.random.default_rng(7)
    for _ in range(3):
        args = [rng.standard_normal(s).astype(np.float32) for s in MLP_SHAPES]
        ours = run(example("mlp_step"), args)
        ref = [np.asarray(r) for r in jax.jit(specs["mlp_step"][0])(*args)]
        x, w1, b1, w2, b2 = (np.abs(a).astype(np.float64) for a in args)
        abs_logits = (x @ w1 + b1) @ w2 + b2
        n = 8 + 16 + 2  # two dot chains and two adds
        assert np.all(np.abs(ours[1] - ref[1]) <= 2 * n * EPS * abs_logits)
        assert abs(float(ours[0]) - float(ref[0])) <= 2 * (n + 12 + 2) * EPS * np.sum(abs_logits**2) / 4
        assert ours[1].shape == ref[1].shape == (4, 3) and ours[0].shape == ref[0].shape == ()


def test_conv_maxpool_matches_jax():
    """Each conv output sums 9 products: |delta| <= 2 * 9 * eps * sum|x w|; max pooling moves
    a result by at most the largest error in its window."""
    jax = oracle()
    specs, _ = load_specs()
    rng = np.random.default_rng(8)
    for _ in range(3):
        args = [rng.standard_normal(s).astype(np.float32) for s in CONV_SHAPES]
        (ours,) = run(example("conv_maxpool"), args)
        ref = np.asarray(jax.jit(specs["conv_maxpool"][0])(*args))
        bound = maxpool2(2 * 9 * EPS * conv_same_nhwc(np.abs(args[0]), np.abs(args[1])))
        assert ours.shape == ref.shape == (1, 4, 4, 2)
        assert np.all(np.abs(ours - ref) <= bound)
        # and both agree with the float64 reference within the same bound
        assert np.all(np.abs(ours - maxpool2(conv_same_nhwc(*args))) <= bound)


@pytest.mark.parametrize("seed", range(30))
def test_movement_program_matches_xla_exactly(seed):
    oracle()
    from tests.xla_oracle import run_xla

    text, args = random_movement_program(np.random.default_rng(seed))
    (ours,) = run(text, args)
    (ref,) = run_xla(text, *args)
    assert ours.dtype == ref.dtype and ours.shape == ref.shape and ours.tobytes() == ref.tobytes()
