"""Element-wise ops against XLA:CPU (jax is the oracle; tests only).

Each case prints a one-op StableHLO module, compiles it with XLA:CPU through
jax's client and runs it on the same inputs as hlolab. Integer and boolean
ops must agree bit for bit; exactly rounded float ops too; transcendental ops
within the ULP bounds of ``ULP_BOUNDS`` in tests/oracle/ulp_table.py.

Known XLA:CPU behaviours the comparison accounts for (hlolab follows the spec):

* XLA:CPU flushes subnormals to zero (FTZ/DAZ) in f32/f64 arithmetic (so in
  bf16 too, which it computes in f32); the spec and the StableHLO reference
  interpreter keep them. Inputs here are normal numbers, and hlolab's results
  are flushed before comparing (``xla_view``).
* XLA computes f8 types through f16 and rounds twice; hlolab rounds the f32
  result once. Exactly rounded ops agree anyway (f16 has more than 2p+2 bits
  of every f8 format); transcendental ones may differ by 1 ulp in f8.
* ``popcnt`` on negative i2/i4 values: XLA:CPU counts the bits of the 8-bit
  sign-extended storage (popcnt(i4 -1) = 8 -> -8); the spec counts the bits of
  the value's own width (4). Those values are left out of the comparison.
* ``power`` on integers: XLA gives 0^64 = 1 (it only looks at the exponent's
  low 6 bits); hlolab gives 0, the exact value. Those inputs are left out.
* f8E3M4 has 5 significand bits, more than f16 can round twice without harm:
  XLA's result there may be the f16-then-f8 double rounding of the exact value;
  that value is accepted besides hlolab's correctly rounded one.
* XLA:CPU's own complex ``maximum``/``minimum`` compare the real parts only,
  not lexicographically as the spec says; jax.lax.max/min lower to the spec's
  comparison, so complex max/min are compared with those.
* NaN payloads are not compared (both sides NaN is agreement).
"""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="SKIPPED LOUDLY: jax is not installed (pip install -e '.[oracle]'); "
                          "the XLA oracle tests for element-wise ops did not run")

from hlolab.interp.single import apply_op, value_type  # noqa: E402
from hlolab.numerics import to_bits, ulp_distance  # noqa: E402
from hlolab.types import TensorType, element_type, element_type_of_dtype  # noqa: E402
from tests.oracle.ulp_table import ULP_BOUNDS  # noqa: E402

jax.config.update("jax_enable_x64", True)

# the transcendental bounds: tests/oracle/ulp_table.py (the one table of every oracle tolerance)


# ---- running one op on XLA:CPU ------------------------------------------------------


def _client():
    try:
        from jax.extend import backend
        from jaxlib import _jax as xc

        client = backend.get_backend("cpu")
        return client, xc.DeviceList(tuple(client.local_devices()[:1])), xc.CompileOptions
    except (ImportError, AttributeError) as e:  # pragma: no cover - depends on the jax version
        pytest.skip(f"SKIPPED LOUDLY: this jax ({jax.__version__}) cannot compile StableHLO text: {e}")


def _type_text(shape: tuple[int, ...], et_name: str) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + et_name + ">"


def xla(name: str, inputs: list[np.ndarray], result: str | None = None) -> np.ndarray:
    """``stablehlo.<name>`` on XLA:CPU."""
    client, devices, options = _client()
    types = [_type_text(a.shape, element_type_of_dtype(a.dtype).name) for a in inputs]
    rt = _type_text(inputs[0].shape, result or element_type_of_dtype(inputs[0].dtype).name)
    params = ", ".join(f"%a{i}: {t}" for i, t in enumerate(types))
    args = ", ".join(f"%a{i}" for i in range(len(inputs)))
    text = (f"func.func public @main({params}) -> {rt} {{\n"
            f'  %0 = "stablehlo.{name}"({args}) : ({", ".join(types)}) -> {rt}\n'
            f"  return %0 : {rt}\n}}\n")
    exe = client.compile_and_load(text, devices, options())
    (out,) = exe.execute([jax.device_put(a) for a in inputs])
    return np.asarray(out)


def ours(name: str, inputs: list[np.ndarray], result: str | None = None) -> np.ndarray:
    first = value_type(inputs[0])
    et = element_type(result) if result else first.element
    (out,) = apply_op(f"stablehlo.{name}", inputs, result_types=[TensorType(first.shape, et)])
    return out


# ---- inputs -------------------------------------------------------------------------

RNG_SEED = 20240601
N = 3000


def _int_inputs(et: str, n_operands: int) -> list[np.ndarray]:
    t = element_type(et)
    lo, hi = t.min_value(), t.max_value()
    if t.bits <= 8:  # every pair
        values = np.arange(lo, hi + 1)
        grid = np.meshgrid(*([values] * n_operands), indexing="ij")
        return [g.reshape(-1).astype(t.dtype) for g in grid]
    rng = np.random.default_rng(RNG_SEED)
    edges = [lo, lo + 1, -1, 0, 1, 2, 3, t.bits - 1, t.bits, t.bits + 1, hi - 1, hi] if t.is_signed \
        else [0, 1, 2, 3, t.bits - 1, t.bits, t.bits + 1, hi - 1, hi]
    out = []
    for k in range(n_operands):
        wide = rng.integers(lo, hi, N, endpoint=True, dtype=np.int64 if t.is_signed else np.uint64)
        small = rng.integers(-70 if t.is_signed else 0, 70, N)  # shift amounts, exponents
        grid = np.asarray(edges, dtype=wide.dtype)
        col = np.concatenate([wide, small.astype(wide.dtype),
                              np.repeat(grid, len(edges)) if k == 0 else np.tile(grid, len(edges))])
        out.append(col.astype(t.dtype))
    return out


SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, 3.0]


def _float_values(dtype: np.dtype, rng: np.random.Generator, lo: float, hi: float, n: int = N,
                  positive: bool = False) -> np.ndarray:
    x = rng.standard_normal(n) * np.exp2(rng.uniform(lo, hi, n))
    x = np.concatenate([np.abs(x) if positive else x, SPECIALS])
    # no subnormal inputs: XLA:CPU treats them as zero (DAZ)
    tiny = np.finfo(np.float64 if dtype == np.float64 else np.float32).tiny
    x = np.where(np.abs(x) < tiny, 0.0, x)
    with np.errstate(all="ignore"):
        return x.astype(np.float32 if dtype != np.float64 else np.float64).astype(dtype)


def xla_view(a: np.ndarray) -> np.ndarray:
    """``a`` as XLA:CPU would hold it: subnormals of f32/f64 arithmetic flushed to signed zero."""
    if a.dtype.kind == "c":
        out = np.empty_like(a)
        out.real, out.imag = xla_view(a.real), xla_view(a.imag)
        return out
    wide = a.astype(np.float64)
    tiny = np.finfo(np.float64 if a.dtype == np.float64 else np.float32).tiny
    sub = (np.abs(wide) < tiny) & (wide != 0)
    return np.where(sub, np.copysign(np.zeros_like(a), a), a).astype(a.dtype)


def assert_bits_equal(name: str, got: np.ndarray, want: np.ndarray, inputs: list[np.ndarray]) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype)
    if element_type_of_dtype(got.dtype).kind in ("bool", "sint", "uint"):
        wide = np.uint64 if got.dtype == np.uint64 else np.int64
        bad = got.astype(wide) != want.astype(wide)
    else:
        bad = ~same_bits(xla_view(got), want)
    report(name, bad, got, want, inputs, "differ from XLA")


def same_bits(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Bit-identical (so -0.0 != +0.0), or both NaN (payloads are not compared)."""
    with np.errstate(invalid="ignore"):
        return (to_bits(a) == to_bits(b)) | (np.isnan(a) & np.isnan(b))


def report(name: str, bad: np.ndarray, got: np.ndarray, want: np.ndarray, inputs: list[np.ndarray],
           what: str) -> None:
    if bad.any():
        i = np.flatnonzero(bad)[:6]
        shown = [a[i].tolist() for a in inputs]
        raise AssertionError(f"{name}: {bad.sum()} of {bad.size} {what}; inputs {shown} "
                             f"hlolab {got[i].tolist()} xla {want[i].tolist()}")


# ---- integers and booleans: bit-exact -------------------------------------------------

INT_BINARY = ["add", "subtract", "multiply", "divide", "remainder", "power", "maximum", "minimum",
              "and", "or", "xor", "shift_left", "shift_right_arithmetic", "shift_right_logical"]
INT_UNARY = ["negate", "not", "popcnt", "count_leading_zeros"]
SIGNED_UNARY = ["abs", "sign"]
INT_TYPES = ["i2", "i4", "i8", "i16", "i32", "i64", "ui2", "ui4", "ui8", "ui16", "ui32", "ui64"]


@pytest.mark.parametrize("et", INT_TYPES)
@pytest.mark.parametrize("name", INT_BINARY)
def test_integer_binary_ops_bit_exact(name, et):
    inputs = _int_inputs(et, 2)
    if name == "power":  # XLA: 0^64 = 1 (module docstring)
        base, exponent = (a.astype(np.int64 if element_type(et).is_signed else np.uint64) for a in inputs)
        keep = ~((base == 0) & (exponent >= 64) & (exponent % 64 == 0))
        inputs = [a[keep] for a in inputs]
    assert_bits_equal(f"{name} {et}", ours(name, inputs), xla(name, inputs), inputs)


@pytest.mark.parametrize("name,et", [(n, t) for n in INT_UNARY + SIGNED_UNARY for t in INT_TYPES
                                     if n in INT_UNARY or t.startswith("i")])  # abs, sign: signed only
def test_integer_unary_ops_bit_exact(name, et):
    t = element_type(et)
    (x,) = _int_inputs(et, 1)
    if name == "popcnt" and t.bits < 8 and t.is_signed:
        x = x[x.astype(np.int64) >= 0]  # XLA counts the sign-extended storage byte (module docstring)
    assert_bits_equal(f"{name} {et}", ours(name, [x]), xla(name, [x]), [x])


@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "minimum", "and", "or", "xor", "not"])
def test_boolean_ops_bit_exact(name):
    lhs, rhs = np.array([False, False, True, True]), np.array([False, True, False, True])
    inputs = [lhs] if name == "not" else [lhs, rhs]
    assert_bits_equal(name, ours(name, inputs), xla(name, inputs), inputs)


# ---- floats: exactly rounded ops, bit-exact ------------------------------------------

FLOAT_TYPES = {name: element_type(name).dtype for name in (
    "f32", "f64", "f16", "bf16", "f8E4M3FN", "f8E5M2", "f8E4M3FNUZ", "f8E5M2FNUZ", "f8E4M3B11FNUZ",
    "f8E4M3", "f8E3M4")}
EXACT_BINARY = ["add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum"]
EXACT_UNARY = ["negate", "abs", "sign", "floor", "ceil", "round_nearest_even", "round_nearest_afz", "sqrt"]


def _class(et: str) -> str:
    return "f8" if et.startswith("f8") else et


@pytest.mark.parametrize("et", sorted(FLOAT_TYPES))
@pytest.mark.parametrize("name", EXACT_BINARY + EXACT_UNARY)
def test_exactly_rounded_float_ops_bit_exact(name, et):
    rng = np.random.default_rng(RNG_SEED)
    dtype = FLOAT_TYPES[et]
    lhs = _float_values(dtype, rng, -8, 8)
    rhs = rng.permutation(_float_values(dtype, rng, -8, 8))
    # every pair of special values too (signed zeros, infinities, NaN)
    special = lhs[-len(SPECIALS):]
    lhs = np.concatenate([lhs, np.repeat(special, len(special))])
    rhs = np.concatenate([rhs, np.tile(special, len(special))])
    inputs = [lhs, rhs] if name in EXACT_BINARY else [lhs]
    got, want = ours(name, inputs), xla(name, inputs)
    if et.startswith("f8"):
        # XLA rounds the exact value to f16, then to f8 (module docstring): accept that too
        exact = ours(name, [a.astype(np.float32) for a in inputs])
        with np.errstate(over="ignore"):
            twice = exact.astype(np.float16).astype(np.float32).astype(dtype)
        got = np.where(same_bits(want, twice), want, got)
    assert_bits_equal(f"{name} {et}", got, want, inputs)


@pytest.mark.parametrize("et", sorted(FLOAT_TYPES))
def test_is_finite_exact(et):
    x = _float_values(FLOAT_TYPES[et], np.random.default_rng(RNG_SEED), -8, 8)
    assert_bits_equal(f"is_finite {et}", ours("is_finite", [x], "i1"), xla("is_finite", [x], "i1"), [x])


# ---- floats: transcendental ops within ULP_BOUNDS ------------------------------------

# (lo, hi) exponent range of the random inputs and whether they are positive
DOMAINS = {
    "sine": (-20, 8, False), "cosine": (-20, 8, False), "tan": (-20, 8, False), "tanh": (-10, 5, False),
    "exponential": (-8, 6, False), "exponential_minus_one": (-8, 6, False), "logistic": (-8, 6, False),
    "log": (-30, 30, True), "log_plus_one": (-30, 30, True), "rsqrt": (-30, 30, True),
    "cbrt": (-30, 30, False), "atan2": (-10, 10, False), "power": (-4, 4, True),
}
TRANSCENDENTAL_TYPES = ["f32", "f64", "f16", "bf16", "f8E4M3FN", "f8E5M2"]


def _within_ulps(name: str, got: np.ndarray, want: np.ndarray, bound: int, inputs: list[np.ndarray]) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    got = xla_view(got)
    dist = ulp_distance(got, want)
    # at the underflow threshold XLA's flushes happen a little earlier or later
    tiny = np.finfo(np.float64 if got.dtype == np.float64 else np.float32).tiny
    with np.errstate(invalid="ignore"):
        near_zero = np.abs(got.astype(np.float64) - want.astype(np.float64)) <= tiny
    bad = (dist > bound) & ~near_zero
    report(name, bad, got, want, inputs, f"beyond {bound} ulp (max {dist[bad].max() if bad.any() else 0})")


@pytest.mark.parametrize("et", TRANSCENDENTAL_TYPES)
@pytest.mark.parametrize("name", sorted(DOMAINS))
def test_transcendental_ops_within_ulp_bounds(name, et):
    rng = np.random.default_rng(RNG_SEED)
    dtype = FLOAT_TYPES[et]
    lo, hi, positive = DOMAINS[name]
    x = _float_values(dtype, rng, lo, hi, positive=positive)
    inputs = [x]
    if name in ("atan2", "power"):
        y = rng.permutation(_float_values(dtype, rng, lo, hi, positive=False))
        inputs = [x, y]
    bound = ULP_BOUNDS[name][_class(et)]
    assert bound is not None
    _within_ulps(f"{name} {et}", ours(name, inputs), xla(name, inputs), bound, inputs)


# ---- complex ------------------------------------------------------------------------

COMPLEX_TYPES = {"complex<f32>": np.dtype(np.complex64), "complex<f64>": np.dtype(np.complex128)}


def _complex_values(dtype: np.dtype, rng: np.random.Generator, scale: float = 2.0) -> np.ndarray:
    z = scale * (rng.standard_normal(N) + 1j * rng.standard_normal(N))
    return z.astype(dtype)


def _relative_close(name: str, got: np.ndarray, want: np.ndarray, k: int, inputs: list[np.ndarray]) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    eps = np.finfo(got.real.dtype).eps
    err = np.abs(got.astype(np.complex128) - want.astype(np.complex128))
    scale = np.abs(want.astype(np.complex128))
    bad = ~((err <= k * eps * scale) | (np.isnan(got) & np.isnan(want)))  # isnan: a NaN part
    report(name, bad, got, want, inputs, f"beyond {k} eps")


@pytest.mark.parametrize("et", sorted(COMPLEX_TYPES))
@pytest.mark.parametrize("name", sorted(n for n, b in ULP_BOUNDS.items() if b["complex"] is not None))
def test_complex_ops_relative_bound(name, et):
    rng = np.random.default_rng(RNG_SEED)
    dtype = COMPLEX_TYPES[et]
    x = _complex_values(dtype, rng)
    inputs = [x, _complex_values(dtype, rng)] if name in ("atan2", "power", "multiply", "divide") else [x]
    if name == "power":  # keep |x^y| in range: small exponents; zero bases
        inputs[1] = (inputs[1] / 4).astype(dtype)
        inputs[0][:40] = 0
        inputs[1][:10] = inputs[1][:10].real
        inputs[1][10:15] = 0
    bound = ULP_BOUNDS[name]["complex"]
    _relative_close(f"{name} {et}", ours(name, inputs), xla(name, inputs), bound, inputs)


def _same_complex(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Bit-equal parts, or NaN in the same parts."""
    def part_same(g: np.ndarray, w: np.ndarray) -> np.ndarray:
        u = f"u{g.dtype.itemsize}"
        return (g.view(u) == w.view(u)) | (np.isnan(g) & np.isnan(w))

    return part_same(got.real, want.real) & part_same(got.imag, want.imag)


@pytest.mark.parametrize("et", sorted(COMPLEX_TYPES))
@pytest.mark.parametrize("name", ["add", "subtract", "negate"])
def test_complex_exact_ops(name, et):
    rng = np.random.default_rng(RNG_SEED)
    dtype = COMPLEX_TYPES[et]
    x, y = _complex_values(dtype, rng), _complex_values(dtype, rng)
    inputs = [x] if name == "negate" else [x, y]
    got, want = ours(name, inputs), xla(name, inputs)
    assert got.dtype == want.dtype
    report(f"{name} {et}", ~_same_complex(got, want), got, want, inputs, "differ from XLA")


@pytest.mark.parametrize("et", sorted(COMPLEX_TYPES))
@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_complex_maximum_minimum_match_jax_lax(name, et):
    rng = np.random.default_rng(RNG_SEED)
    dtype = COMPLEX_TYPES[et]
    x, y = _complex_values(dtype, rng), _complex_values(dtype, rng)
    # equal real parts, NaN parts and signed zeros exercise the lexicographic ties
    special = np.array([complex(0.0, 1.0), complex(-0.0, 1.0), complex(1.0, np.nan), complex(1.0, 2.0),
                        complex(np.nan, 0.0), 0j, complex(1.0, -0.0), complex(1.0, 0.0)], dtype)
    x = np.concatenate([x, special, special, x[:50]])
    y = np.concatenate([y, special[::-1], special, (x[:50].real + 1j * y[:50].imag).astype(dtype)])
    lax_fn = jax.lax.max if name == "maximum" else jax.lax.min
    got, want = ours(name, [x, y]), np.asarray(jax.jit(lax_fn)(x, y))
    report(f"{name} {et}", ~_same_complex(got, want), got, want, [x, y], "differ from jax.lax")


@pytest.mark.parametrize("et,real", [("complex<f32>", "f32"), ("complex<f64>", "f64")])
def test_complex_abs(et, real):
    x = _complex_values(COMPLEX_TYPES[et], np.random.default_rng(RNG_SEED))
    got, want = ours("abs", [x], real), xla("abs", [x], real)
    _within_ulps(f"abs {et}", got, want, 1, [x])
