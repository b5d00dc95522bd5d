"""stablehlo.rng_bit_generator and stablehlo.rng: the spec example, XLA:CPU's values measured
with jax 0.10.2 (bit-exact), output types, rank 0 and zero-size outputs, constraints, provenance,
explain text; rng's ranges, statistics and reproducibility."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from hlolab.errors import ExecutionError, VerificationError
from hlolab.interp.engine import Interpreter
from hlolab.interp.single import evaluate_op
from hlolab.ir.parser import parse_module
from hlolab.numerics import to_bits
from hlolab.ops.registry import OpCall, lookup
from hlolab.ops.rng import RNG_SEED, origin, philox4x32, threefry2x32, threefry_half_shape
from hlolab.ops.verify import verify_module, verify_op
from hlolab.trace.explain import format_explanation

U64 = np.uint64


def dims(shape: tuple[int, ...]) -> str:
    return "".join(f"{d}x" for d in shape)


def bits_program(alg: str, n: int, shape: tuple[int, ...], et: str, out_state: str | None = None) -> str:
    st, ot = f"tensor<{n}xui64>", f"tensor<{dims(shape)}{et}>"
    rst = out_state or st
    return (f"func.func @main(%state: {st}) -> ({rst}, {ot}) {{\n"
            f"  %output_state, %output = stablehlo.rng_bit_generator %state, algorithm = {alg} : "
            f"({st}) -> ({rst}, {ot})\n"
            f"  return %output_state, %output : {rst}, {ot}\n}}")


def the_op(text: str, name: str):
    return next(o for o in parse_module(text).walk() if o.name == name)


def run_bits(alg: str, state, shape: tuple[int, ...], et: str):
    state = np.asarray(state, U64)
    op = the_op(bits_program(alg, state.size, shape, et), "stablehlo.rng_bit_generator")
    verify_op(op)
    call = OpCall(op)
    out = evaluate_op(op, [state], call)
    d = lookup(op.name)
    return out, d.provenance(call, [state], out), lambda r, i: d.explain(call, [state], out, r, i)


# --- rng_bit_generator: values -------------------------------------------------------------

def test_spec_example():
    (new_state, output), _, _ = run_bits("THREE_FRY", [1, 2], (2, 2), "ui64")
    np.testing.assert_array_equal(new_state, np.array([1, 6], U64))
    np.testing.assert_array_equal(output, np.array([[9236835810183407956, 16087790271692313299],
                                                    [18212823393184779219, 2658481902456610144]], U64))


# XLA:CPU's values (jax 0.10.2, lax.rng_bit_generator / compiled StableHLO text), state [1, 2(, 3)]
XLA_U32_2X3 = {
    ("THREE_FRY", 2): ([1, 5], [43444564, 3979645651, 1672743891]),
    ("PHILOX", 2): ([1, 4], [2100602697, 2847456232, 2074354647]),
    ("PHILOX", 3): ([1, 4, 3], [4031113034, 1366700262, 495645701]),
    ("DEFAULT", 2): ([1, 4], [2100602697, 2847456232, 2074354647]),
    ("DEFAULT", 3): ([1, 4, 3], [4031113034, 1366700262, 495645701]),
}


@pytest.mark.parametrize("alg,n", sorted(XLA_U32_2X3))
def test_xla_values_u32(alg, n):
    (new_state, output), _, _ = run_bits(alg, np.arange(1, n + 1), (2, 3), "ui32")
    want_state, want_first = XLA_U32_2X3[(alg, n)]
    np.testing.assert_array_equal(new_state, np.array(want_state, U64))
    np.testing.assert_array_equal(output.reshape(-1)[:3], np.array(want_first, np.uint32))


@pytest.mark.parametrize("et,width,want", [
    # XLA:CPU's bits for a 2x3 output, THREE_FRY, state [1, 2]: the 32-bit words' low bits
    ("ui8", 8, [84, 211, 211, 59, 3, 97]), ("f8E5M2", 8, [84, 211, 211, 59, 3, 97]),
    ("i4", 4, [4, 3, 3, 11, 3, 1]), ("f4E2M1FN", 4, [4, 3, 3, 11, 3, 1]), ("ui2", 2, [0, 3, 3, 3, 3, 1]),
    ("i16", 16, [59732, 37587, 3027, 54587, 20483, 62049]),
    ("bf16", 16, [59732, 37587, 3027, 54587, 20483, 62049]),
])
def test_narrow_types_take_the_low_bits(et, width, want):
    (new_state, output), _, _ = run_bits("THREE_FRY", [1, 2], (2, 3), et)
    np.testing.assert_array_equal(new_state, np.array([1, 5], U64))
    assert output.shape == (2, 3)
    got = to_bits(output).reshape(-1).astype(np.int64) & ((1 << width) - 1)
    np.testing.assert_array_equal(got, want)


def test_narrow_signed_values_are_twos_complement():
    (_, out4), _, _ = run_bits("THREE_FRY", [1, 2], (2, 3), "i4")
    np.testing.assert_array_equal(out4.astype(np.int64).reshape(-1), [4, 3, 3, -5, 3, 1])
    assert out4.dtype == ml_dtypes.int4
    (_, out8), _, _ = run_bits("THREE_FRY", [1, 2], (2, 3), "i8")
    want8 = np.array([84, 211, 211, 59, 3, 97], np.uint8).view(np.int8)
    np.testing.assert_array_equal(out8.reshape(-1), want8)


@pytest.mark.parametrize("et,dtype", [("f32", np.float32), ("i32", np.int32), ("f64", np.float64),
                                      ("i64", np.int64), ("f16", np.float16)])
def test_float_and_signed_outputs_are_the_unsigned_bits(et, dtype):
    width = np.dtype(dtype).itemsize * 8
    (s_u, u), _, _ = run_bits("PHILOX", [7, 8, 9], (3, 5), f"ui{width}")
    (s_t, t), _, _ = run_bits("PHILOX", [7, 8, 9], (3, 5), et)
    assert t.dtype == dtype
    np.testing.assert_array_equal(s_u, s_t)
    np.testing.assert_array_equal(t.view(u.dtype), u)


def test_u64_three_fry_is_one_block_per_element():
    (new_state, out), _, _ = run_bits("THREE_FRY", [5, 2**64 - 2], (3,), "ui64")
    assert int(new_state[1]) == 1  # the counter wraps mod 2^64
    for i, c in enumerate([2**64 - 2, 2**64 - 1, 0]):
        y0, y1 = threefry2x32(np.array([c & 0xFFFFFFFF]), np.array([c >> 32]), (5, 0))
        assert int(out[i]) == int(y0[0]) | int(y1[0]) << 32


def test_philox_counter_carries_into_the_high_word():
    (new_state, out), _, _ = run_bits("PHILOX", [9, 2**64 - 1, 4], (8,), "ui32")
    np.testing.assert_array_equal(new_state, np.array([9, 1, 5], U64))  # 2 blocks, one carry
    y = philox4x32([np.array([0]), np.array([0]), np.array([5]), np.array([0])], (9, 0))
    np.testing.assert_array_equal(out[4:], [int(w[0]) for w in y])  # block 1: counter (0, 5)


def test_philox_two_word_state_reads_the_key_as_high_counter():
    # XLA reverses a 2-word state: counter (low, high) = (state[1], state[0])
    (new_state, out), _, _ = run_bits("PHILOX", [6, 10], (4,), "ui32")
    np.testing.assert_array_equal(new_state, np.array([6, 11], U64))
    y = philox4x32([np.array([10]), np.array([0]), np.array([6]), np.array([0])], (6, 0))
    np.testing.assert_array_equal(out, [int(w[0]) for w in y])


def test_rank0_output():
    (s, out), _, _ = run_bits("THREE_FRY", [1, 2], (), "ui32")
    assert out.shape == () and int(out) == 43444564 and list(s) == [1, 3]  # one block, its first word
    (s, out), _, explain = run_bits("PHILOX", [1, 2, 3], (), "f64")
    assert out.shape == () and out.dtype == np.float64 and list(s) == [1, 3, 3]
    assert "word 0 | word 1 << 32" in format_explanation(explain(1, ()))


@pytest.mark.parametrize("alg,n", [("THREE_FRY", 2), ("PHILOX", 3)])
@pytest.mark.parametrize("shape", [(0,), (3, 0), (0, 5, 2)])
def test_zero_size_output_uses_no_block(alg, n, shape):
    (s, out), prov, _ = run_bits(alg, np.arange(1, n + 1), shape, "f32")
    assert out.shape == shape and out.dtype == np.float32
    np.testing.assert_array_equal(s, np.arange(1, n + 1).astype(U64))
    assert prov.back(1, np.zeros(shape, bool)) == {}
    assert prov.fwd(0, np.ones(n, bool)).get((1, "combine")) is None


def test_three_fry_halves_the_first_even_dim_else_the_largest():
    assert threefry_half_shape((3, 4, 6)) == (3, 2, 6)
    assert threefry_half_shape((3, 7, 5)) == (3, 4, 5)
    assert threefry_half_shape((5, 5)) == (3, 5)
    assert threefry_half_shape(()) == (1,)
    # odd dims: (3, 5) halves dim 1 into 3 blocks per row, the last block's second word unused
    (s, out), _, _ = run_bits("THREE_FRY", [1, 2], (3, 5), "ui32")
    assert int(s[1]) == 2 + 9


@pytest.mark.parametrize("alg,n,shape,et", [
    ("THREE_FRY", 2, (3, 5), "ui32"), ("THREE_FRY", 2, (2, 3, 4), "bf16"), ("THREE_FRY", 2, (5,), "i64"),
    ("PHILOX", 3, (3, 5), "f32"), ("PHILOX", 2, (7,), "f64"), ("DEFAULT", 3, (2, 3), "ui8"),
])
def test_explain_origin_agrees_with_the_evaluation(alg, n, shape, et):
    state = np.array([0x1234_5678_9ABC_DEF0, 2**64 - 3, 77][:n], U64)
    (_, out), _, explain = run_bits(alg, state, shape, et)
    run = "PHILOX" if alg == "DEFAULT" else alg
    width = 64 if et in ("i64", "f64") else 32
    bits = to_bits(out)
    for idx in np.ndindex(*shape):
        o = origin(run, state, shape, width, idx)
        assert o.bits & ((1 << (bits.dtype.itemsize * 8)) - 1) == int(bits[idx]), idx
    e = explain(1, tuple(d - 1 for d in shape))
    assert e.value == out[tuple(d - 1 for d in shape)] or np.isnan(e.value)


# --- rng_bit_generator: constraints --------------------------------------------------------

def verify_text(text: str) -> None:
    verify_module(parse_module(text))


@pytest.mark.parametrize("alg,n,label", [("THREE_FRY", 3, "C2"), ("PHILOX", 4, "C2"), ("DEFAULT", 1, "C2"),
                                         ("PHILOX", 1, "C2")])
def test_state_size_per_algorithm(alg, n, label):
    with pytest.raises(VerificationError, match=rf"rng_bit_generator \({label}\): size\(initial_state\)"):
        verify_text(bits_program(alg, n, (2,), "ui32"))


def test_output_state_type_is_the_initial_state_type():
    with pytest.raises(VerificationError, match=r"rng_bit_generator \(C1\): type\(initial_state\) = "):
        verify_text(bits_program("PHILOX", 3, (2,), "ui32", out_state="tensor<2xui64>"))
    with pytest.raises(VerificationError, match=r"rng_bit_generator \(C1\)"):
        verify_text(bits_program("PHILOX", 2, (2,), "ui32", out_state="tensor<2xi64>"))


def test_initial_state_is_ui64_rank_1():
    text = bits_program("THREE_FRY", 2, (2,), "ui32").replace("tensor<2xui64>", "tensor<2xi64>")
    with pytest.raises(VerificationError, match=r"rng_bit_generator \(I2\): initial_state must be a "
                                                r"1-dimensional tensor of type ui64"):
        verify_text(text)


@pytest.mark.parametrize("et", ["i1", "complex<f32>"])
def test_output_is_integer_or_float(et):
    with pytest.raises(VerificationError, match="output must be a statically shaped tensor of integer or "
                                                "floating-point type"):
        verify_text(bits_program("THREE_FRY", 2, (2,), et))


def test_every_algorithm_and_size_verifies():
    for alg, sizes in (("THREE_FRY", (2,)), ("PHILOX", (2, 3)), ("DEFAULT", (2, 3))):
        for n in sizes:
            verify_text(bits_program(alg, n, (2, 3), "f16"))


# --- rng_bit_generator: provenance and explain ---------------------------------------------

def test_provenance_output_reads_the_whole_state_and_state_words_their_own():
    _, prov, _ = run_bits("PHILOX", [1, 2, 3], (2, 3), "ui32")
    assert {(s.operand, s.index, s.role) for s in prov.sources(1, (1, 2))} == \
        {(0, (0,), "combine"), (0, (1,), "combine"), (0, (2,), "combine")}
    assert prov.sources(0, (0,)) == [type(prov.sources(0, (0,))[0])(0, (0,), "copy")]
    assert [(s.index, s.role) for s in prov.sources(0, (1,))] == [((1,), "combine")]
    assert [(s.index, s.role) for s in prov.sources(0, (2,))] == [((1,), "combine"), ((2,), "combine")]
    back = prov.back(1, np.eye(2, 3, dtype=bool))
    assert set(back) == {(0, "combine")} and back[(0, "combine")].all()
    fwd = prov.fwd(0, np.array([False, False, True]))
    assert fwd[(1, "combine")].all() and fwd[(0, "combine")].tolist() == [False, False, True]
    fwd0 = prov.fwd(0, np.array([True, False, False]))
    assert fwd0[(0, "copy")].tolist() == [True, False, False] and fwd0[(1, "combine")].all()
    targets = prov.targets(0, (1,))
    assert len([t for t in targets if t.result == 1]) == 6
    assert {t.index for t in targets if t.result == 0} == {(1,), (2,)}


def test_provenance_rank0_output_and_three_fry_state():
    _, prov, _ = run_bits("THREE_FRY", [1, 2], (), "f32")
    assert len(prov.sources(1, ())) == 2
    back = prov.back(1, np.ones((), bool))
    assert back[(0, "combine")].tolist() == [True, True]
    assert prov.fwd(0, np.array([False, True]))[(1, "combine")].shape == ()
    assert [(s.index, s.role) for s in prov.sources(0, (1,))] == [((1,), "combine")]


def test_explain_three_fry_f32_names_the_words_and_the_float_fields():
    (_, out), _, explain = run_bits("THREE_FRY", [1, 2], (2, 3), "f32")
    text = format_explanation(explain(1, (1, 0)))
    o = origin("THREE_FRY", np.array([1, 2], U64), (2, 3), 32, (1, 0))
    assert o.block == 0 and o.used == (1,)  # dim 0 halved: row 1 is the second word of block 0
    assert "dim 0 halved: index 1 // 2 in half shape (1, 3)" in text
    assert "(0x00000002, 0x00000000)" in text  # counter = initial_state[1] + 0
    assert "key (0x00000001, 0x00000000)" in text
    b = int(out.view(np.uint32)[1, 0])
    assert f"= 0x{b:08X}" in text
    assert f"sign {b >> 31}, exponent field {(b >> 23) & 0xFF} (8 bits), mantissa field {b & 0x7FFFFF} " \
           "(23 bits)" in text
    assert "Threefry-2x32" in text and "XLA:CPU" in text


def test_explain_philox_default_and_narrow_type():
    (_, out), _, explain = run_bits("DEFAULT", [3, 4], (6,), "ui8")
    text = format_explanation(explain(1, (5,)))
    assert "DEFAULT runs PHILOX (XLA:CPU's choice)" in text
    assert "position of (5,) in shape (6,), divided by 4" in text
    assert "high word from initial_state[0]" in text
    assert "bits & (2^8 - 1)" in text
    assert text.rstrip().splitlines()[0].endswith(f"= {int(out[5])}")


def test_explain_output_state():
    _, _, explain = run_bits("PHILOX", [1, 2**64 - 1, 3], (9,), "ui32")
    text = format_explanation(explain(0, (2,)))
    assert "%state[2] + carry(%state[1] + 3)" in text and "= 0x0000000000000004" in text
    low = format_explanation(explain(0, (1,)))
    assert "%state[1] + 3 = 0xFFFFFFFFFFFFFFFF + 3" in low and "= 0x0000000000000002" in low
    assert "%state[0]" in format_explanation(explain(0, (0,)))
    with pytest.raises(ExecutionError, match="out of range"):
        explain(1, (9,))


# --- rng -------------------------------------------------------------------------------------

def rng_program(dist: str, et: str, shape: tuple[int, ...], rshape: tuple[int, ...] | None = None,
                bet: str | None = None, set_: str = "i64") -> str:
    rs = shape if rshape is None else rshape
    s, rt = f"tensor<{len(shape)}x{set_}>", f"tensor<{dims(rs)}{et}>"
    a, b = f"tensor<{et}>", f"tensor<{bet or et}>"
    return (f"func.func @main(%a: {a}, %b: {b}, %shape: {s}) -> {rt} {{\n"
            f"  %r = stablehlo.rng %a, %b, %shape, distribution = {dist} : ({a}, {b}, {s}) -> {rt}\n"
            f"  return %r : {rt}\n}}")


def run_rng(dist: str, et: str, a, b, shape: tuple[int, ...], dtype=None):
    text = rng_program(dist, et, shape)
    dt = np.dtype(dtype) if dtype is not None else None
    args = [np.array(a, dt), np.array(b, dt), np.array(shape, np.int64).reshape(len(shape))]
    return Interpreter(parse_module(text)).run(None, args)[0]


def test_rng_spec_example_shape_type_and_range():
    out = run_rng("UNIFORM", "i32", 0, 2, (3, 3), np.int32)
    assert out.shape == (3, 3) and out.dtype == np.int32
    assert set(np.unique(out)) <= {0, 1}
    # hlolab's documented generator: draw 0 of default_rng([RNG_SEED, 0])
    want = np.random.default_rng([RNG_SEED, 0]).integers(0, 2, size=9, dtype=np.int64)
    np.testing.assert_array_equal(out.reshape(-1), want)


def test_rng_is_reproducible_across_runs_and_differs_between_draws():
    sig = "(tensor<f32>, tensor<f32>, tensor<1xi64>) -> tensor<50xf32>"
    text = ("func.func @main(%a: tensor<f32>, %b: tensor<f32>, %s: tensor<1xi64>) -> (tensor<50xf32>, "
            "tensor<50xf32>) {\n"
            f"  %x = stablehlo.rng %a, %b, %s, distribution = UNIFORM : {sig}\n"
            f"  %y = stablehlo.rng %a, %b, %s, distribution = UNIFORM : {sig}\n"
            "  return %x, %y : tensor<50xf32>, tensor<50xf32>\n}")
    args = [np.array(0, np.float32), np.array(1, np.float32), np.array([50], np.int64)]
    x1, y1 = Interpreter(parse_module(text)).run(None, args)
    x2, y2 = Interpreter(parse_module(text)).run(None, args)
    assert x1.tobytes() == x2.tobytes() and y1.tobytes() == y2.tobytes()
    assert not np.array_equal(x1, y1)


@pytest.mark.parametrize("et,dtype,a,b", [
    ("f32", np.float32, -2.0, 3.0), ("f64", np.float64, 1e300, 1.7e308),
    ("bf16", ml_dtypes.bfloat16, 0.0, 1.0),
    ("f16", np.float16, -1.0, -0.5), ("f8E4M3FN", ml_dtypes.float8_e4m3fn, -2.0, 0.0),
])
def test_rng_uniform_floats_stay_in_a_b(et, dtype, a, b):
    out = run_rng("UNIFORM", et, a, b, (4000,), dtype)
    assert out.dtype == np.dtype(dtype)
    o = out.astype(np.float64)
    assert (o >= a).all() and (o < b).all()
    assert len(np.unique(o)) > 1
    if et == "f32":
        assert abs(o.mean() - (a + b) / 2) < 0.05 * (b - a)


def test_rng_uniform_float_rounding_never_reaches_b():
    # f8E4M3FN holds 1.0 and 1.125 and nothing between: every draw must be 1.0
    out = run_rng("UNIFORM", "f8E4M3FN", 1.0, 1.125, (500,), ml_dtypes.float8_e4m3fn)
    assert (out.astype(np.float64) == 1.0).all()


@pytest.mark.parametrize("et,dtype,a,b", [
    ("i32", np.int32, -5, 5), ("ui8", np.uint8, 250, 255), ("i64", np.int64, -2**63, 2**63 - 1),
    ("ui64", np.uint64, 2**64 - 10, 2**64 - 1), ("i4", ml_dtypes.int4, -8, 7),
])
def test_rng_uniform_integers_cover_a_to_b_minus_1(et, dtype, a, b):
    out = run_rng("UNIFORM", et, a, b, (3000,), dtype)
    assert out.dtype == np.dtype(dtype)
    o = [int(v) for v in (out.astype(np.int64) if et == "i4" else out)]
    assert min(o) >= a and max(o) < b
    if b - a <= 16:
        assert set(o) == set(range(a, b))


def test_rng_uniform_bool():
    out = run_rng("UNIFORM", "i1", False, True, (10,), np.bool_)
    assert out.dtype == np.bool_ and not out.any()


def test_rng_normal_statistics():
    out = run_rng("NORMAL", "f32", 3.0, 2.0, (20000,), np.float32)
    assert abs(float(out.mean()) - 3.0) < 0.05 and abs(float(out.std()) - 2.0) < 0.05


@pytest.mark.parametrize("shape", [(), (0,), (2, 0, 3)])
def test_rng_rank0_and_zero_size(shape):
    out = run_rng("NORMAL", "f32", 0.0, 1.0, shape, np.float32)
    assert out.shape == shape and out.dtype == np.float32


def test_rng_undefined_parameters_are_errors():
    with pytest.raises(ExecutionError, match=r"rng: UNIFORM needs a < b, got a = 3, b = 3"):
        run_rng("UNIFORM", "i32", 3, 3, (2,), np.int32)
    with pytest.raises(ExecutionError, match=r"NORMAL needs b \(the standard deviation\) >= 0"):
        run_rng("NORMAL", "f32", 0.0, -1.0, (2,), np.float32)
    with pytest.raises(ExecutionError, match="UNIFORM needs finite a and b"):
        run_rng("UNIFORM", "f32", 0.0, np.inf, (2,), np.float32)


def test_rng_constraints():
    with pytest.raises(VerificationError, match=r"rng \(C1\): element_type\(a\) = element_type\(b\)"):
        verify_text(rng_program("UNIFORM", "f32", (2,), bet="f64"))
    with pytest.raises(VerificationError, match=r"rng \(C2\): rng_distribution = NORMAL needs is_float\(a\)"):
        verify_text(rng_program("NORMAL", "i32", (2,)))
    with pytest.raises(VerificationError, match=r"rng \(C3\): shape\(result\) = shape does not hold: "
                                                r"shape has 2 elements"):
        verify_text(rng_program("UNIFORM", "f32", (2, 3), rshape=(6,)))
    with pytest.raises(VerificationError, match=r"rng \(I3\): shape must be a 1-dimensional tensor of "
                                                r"type si64"):
        verify_text(rng_program("UNIFORM", "f32", (2,), set_="i32"))
    text = rng_program("UNIFORM", "f32", (2,)).replace("-> tensor<2xf32>", "-> tensor<2xf64>")
    text = text.replace("return %r : tensor<2xf32>", "return %r : tensor<2xf64>")
    with pytest.raises(VerificationError, match=r"rng \(C1\): element_type\(a\) = element_type\(result\)"):
        verify_text(text)
    bad = rng_program("UNIFORM", "complex<f32>", (2,))
    with pytest.raises(VerificationError, match=r"rng \(I1\): a must be a 0-dimensional tensor"):
        verify_text(bad)


def test_rng_shape_values_must_be_the_result_shape():
    text = rng_program("UNIFORM", "f32", (2, 3))
    args = [np.array(0, np.float32), np.array(1, np.float32), np.array([3, 2], np.int64)]
    with pytest.raises(VerificationError, match=r"rng \(C3\): shape\(result\) = shape does not hold: "
                                                r"shape = \[3, 2\]"):
        Interpreter(parse_module(text)).run(None, args)


def test_rng_provenance_and_explain():
    text = rng_program("UNIFORM", "f32", (2, 3))
    op = the_op(text, "stablehlo.rng")
    verify_op(op)
    call = OpCall(op)
    args = [np.array(-1, np.float32), np.array(1, np.float32), np.array([2, 3], np.int64)]
    out = evaluate_op(op, args, call)
    d = lookup(op.name)
    prov = d.provenance(call, args, out)
    assert {(s.operand, s.index, s.role) for s in prov.sources(0, (1, 2))} == \
        {(0, (), "combine"), (1, (), "combine"), (2, (0,), "index_read"), (2, (1,), "index_read")}
    back = prov.back(0, np.eye(2, 3, dtype=bool))
    assert set(back) == {(0, "combine"), (1, "combine"), (2, "index_read")}
    assert prov.fwd(2, np.array([True, False]))[(0, "index_read")].all()
    assert prov.fwd(0, np.ones((), bool))[(0, "combine")].shape == (2, 3)
    assert len(prov.targets(1, ())) == 6
    e = d.explain(call, args, out, 0, (1, 2))
    text = format_explanation(e)
    u = np.random.default_rng([RNG_SEED, 0]).random(6)[5]
    assert f"default_rng([{RNG_SEED}, 0])" in text and "= 5" in text
    assert f"-1.0 + (1.0 - -1.0) * {float(u)}" in text
    assert np.float32(-1 + 2 * u) == out[0][1, 2]
