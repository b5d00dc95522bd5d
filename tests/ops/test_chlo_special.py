"""CHLO special functions: known values, edge values, verification errors and explain steps."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

from hlolab.errors import UnsupportedError, VerificationError
from hlolab.interp.single import build_op, evaluate_op, value_type
from hlolab.messages import text
from hlolab.ops.registry import OpCall, lookup
from hlolab.trace.explain import format_explanation
from hlolab.types import TensorType, element_type

FLOATS = {"bf16": ml_dtypes.bfloat16, "f16": np.float16, "f32": np.float32, "f64": np.float64}
EPS = {"bf16": 2.0**-7, "f16": 2.0**-10, "f32": 2.0**-23, "f64": 2.0**-52}
EULER_GAMMA = 0.5772156649015329


def run(name: str, *inputs: np.ndarray, result: str | None = None) -> np.ndarray:
    t = value_type(inputs[0])
    rt = TensorType(t.shape, element_type(result)) if result else t
    (out,) = evaluate_op(build_op(f"chlo.{name}", list(inputs), result_types=[rt]), list(inputs))
    return out


def explain(name: str, *inputs: np.ndarray, index: tuple = (0,)) -> str:
    op = build_op(f"chlo.{name}", list(inputs), result_types=[value_type(inputs[0])])
    call = OpCall(op)
    out = evaluate_op(op, list(inputs), call)
    return format_explanation(lookup(op.name).explain(call, list(inputs), out, 0, index))


def close(got: np.ndarray, want: list[float], et: str, ulps: float = 4) -> None:
    got64 = np.asarray(got).astype(np.float64)
    want64 = np.asarray(want, np.float64)
    assert got.dtype == np.dtype(FLOATS[et])
    np.testing.assert_allclose(got64, want64, rtol=ulps * EPS[et], atol=0)


def i1e(x: float) -> float:
    """exp(-|x|) I1(x) from the power series (exact enough for moderate x)."""
    s = math.fsum((x / 2) ** (2 * k + 1) / (math.factorial(k) * math.factorial(k + 1)) for k in range(60))
    return math.exp(-abs(x)) * s


# --- known values -----------------------------------------------------------------------------

@pytest.mark.parametrize("et", FLOATS)
def test_erf_and_erfc_known_values(et):
    xs = [0.5, -0.5, 1.0, 2.0, -3.0, 0.1]
    x = np.array(xs, FLOATS[et])
    exact = [float(v) for v in x.astype(np.float64)]  # the values the type can hold
    close(run("erf", x), [math.erf(v) for v in exact], et)
    close(run("erfc", x), [math.erfc(v) for v in exact], et, ulps=8)


def test_erf_half_is_0_5205_in_every_type():
    for et, dt in FLOATS.items():
        assert abs(float(run("erf", np.array([0.5], dt))[0]) - math.erf(0.5)) <= EPS[et]


@pytest.mark.parametrize("et", FLOATS)
def test_lgamma_of_small_integers_and_half_integers(et):
    xs = [1.0, 2.0, 3.0, 4.0, 5.0, 0.5, 1.5, 2.5, -0.5, -1.5]
    want = [0.0, 0.0, math.log(2), math.log(6), math.log(24), math.log(math.sqrt(math.pi)),
            math.log(math.sqrt(math.pi) / 2), math.log(3 * math.sqrt(math.pi) / 4),
            math.log(2 * math.sqrt(math.pi)), math.log(4 * math.sqrt(math.pi) / 3)]
    got = run("lgamma", np.array(xs, FLOATS[et])).astype(np.float64)
    # absolute error near the roots (lgamma(1) = lgamma(2) = 0), relative elsewhere
    np.testing.assert_allclose(got, want, rtol=8 * EPS[et], atol=8 * EPS[et])


@pytest.mark.parametrize("et", FLOATS)
def test_digamma_polygamma_and_zeta_known_values(et):
    dt = FLOATS[et]
    close(run("digamma", np.array([1.0, 0.5, 2.0], dt)),
          [-EULER_GAMMA, -EULER_GAMMA - 2 * math.log(2), 1 - EULER_GAMMA], et, ulps=8)
    pi2_6 = math.pi**2 / 6
    close(run("zeta", np.array([2.0, 4.0], dt), np.array([1.0, 1.0], dt)), [pi2_6, math.pi**4 / 90], et)
    close(run("polygamma", np.array([1.0, 0.0, 2.0], dt), np.array([1.0, 1.0, 1.0], dt)),
          [pi2_6, -EULER_GAMMA, -2 * 1.2020569031595942], et, ulps=8)


@pytest.mark.parametrize("et", FLOATS)
def test_bessel_i1e_known_points(et):
    xs = [0.5, 1.0, -1.0, 3.0, 7.9, 8.5, 20.0]
    x = np.array(xs, FLOATS[et])
    close(run("bessel_i1e", x), [i1e(float(v)) for v in x.astype(np.float64)], et, ulps=8)


@pytest.mark.parametrize("et", FLOATS)
def test_erf_inv_inverts_erf(et):
    ys = np.array([-0.9, -0.5, 0.0, 0.25, 0.75, 0.99], np.float64)
    got = run("erf_inv", ys.astype(FLOATS[et])).astype(np.float64)
    back = np.array([math.erf(v) for v in got])
    np.testing.assert_allclose(back, ys.astype(FLOATS[et]).astype(np.float64), rtol=0, atol=4 * EPS[et])


# --- edge values --------------------------------------------------------------------------------

def test_edges_of_erf_erfc_and_erf_inv():
    x = np.float32([0.0, -0.0, np.inf, -np.inf, np.nan])
    erf = run("erf", x)
    assert erf[:4].tolist() == [0.0, 0.0, 1.0, -1.0] and np.signbit(erf[1]) and np.isnan(erf[4])
    erfc = run("erfc", x)
    assert erfc[:4].tolist() == [1.0, 1.0, 0.0, 2.0] and np.isnan(erfc[4])
    inv = run("erf_inv", np.float64([1.0, -1.0, 0.0, 1.5, np.nan]))
    assert inv[:3].tolist() == [np.inf, -np.inf, 0.0] and np.isnan(inv[3]) and np.isnan(inv[4])


@pytest.mark.parametrize("et", FLOATS)
def test_poles_of_lgamma_and_digamma(et):
    x = np.array([0.0, -1.0, -2.0, np.inf, -np.inf, np.nan], FLOATS[et])
    lg = run("lgamma", x).astype(np.float64)
    assert lg[:5].tolist() == [np.inf] * 5 and np.isnan(lg[5])
    dg = run("digamma", x).astype(np.float64)
    assert np.isnan(dg[0]) and np.isnan(dg[1]) and np.isnan(dg[2]) and np.isnan(dg[5])


def test_zeta_and_polygamma_domains():
    x = np.float32([1.0, 0.5, 2.0, 3.0, 2.5])
    q = np.float32([1.0, 1.0, -2.0, -2.0, -0.5])
    z = run("zeta", x, q)
    assert z[0] == np.inf and np.isnan(z[1]) and z[2] == np.inf and np.isnan(z[3]) and np.isnan(z[4])
    pg = run("polygamma", np.float32([-1.0, 0.5]), np.float32([1.0, 1.0]))
    assert np.isnan(pg).all()


def test_bessel_i1e_is_odd_with_signed_zero():
    out = run("bessel_i1e", np.float64([0.0, -0.0, 2.0, -2.0, np.nan]))
    assert out[0] == 0 and np.signbit(out[1]) and out[2] == -out[3] and np.isnan(out[4])


# --- types and verification ----------------------------------------------------------------------

def test_narrow_types_round_once_from_the_f32_value():
    x = np.array([0.3, 1.7, -2.2], ml_dtypes.bfloat16)
    f32 = run("erfc", x.astype(np.float32))
    assert run("erfc", x).tolist() == f32.astype(ml_dtypes.bfloat16).tolist()


def test_verification_names_the_constraints():
    with pytest.raises(VerificationError, match=r"\(I1\).*floating-point"):
        run("erf", np.int32([1, 2]))
    with pytest.raises(VerificationError, match=r"\(C1\)"):
        run("lgamma", np.float32([1, 2]), result="f64")
    with pytest.raises(VerificationError, match=r"\(C1\)"):
        run("zeta", np.float32([2.0]), np.float64([1.0]))
    with pytest.raises(VerificationError, match="2 operand"):
        run("polygamma", np.float32([1.0]))


def test_types_the_legalization_lacks_are_a_clear_error():
    x = np.array([0.5], ml_dtypes.float8_e4m3fn)
    with pytest.raises(UnsupportedError, match="chlo.erf on f8E4M3FN is not supported"):
        run("erf", x)
    assert float(run("lgamma", np.array([3.0], ml_dtypes.float8_e4m3fn))[0]) == pytest.approx(0.6875)


def test_infer_names_operands():
    d = lookup("chlo.zeta")
    t32, t64 = TensorType((2,), element_type("f32")), TensorType((2,), element_type("f64"))
    assert d.infer(None, [t32, t32]) == [t32]
    with pytest.raises(ValueError, match="x = f32, q = f64"):
        d.infer(None, [t32, t64])


# --- explain ----------------------------------------------------------------------------------

def test_explain_erf_shows_branch_polynomials_and_combination():
    e = explain("erf", np.float32([0.5]))
    assert "|x| = 0.5 < 3.8325" in e
    assert "5 coefficients" in e and "7 coefficients" in e
    assert "0.58896005 / 1.1315277 = 0.5204999" in e  # x·P(x²) / Q(x²)
    big = explain("erf", np.float32([4.0]))
    assert "≥ 3.8325" in big and "P(x²)" not in big


def test_explain_f64_erf_takes_the_erfc_branch_with_numbers():
    e = explain("erf", np.float64([4.0]))
    assert "|x| = 4.0 ≥ 1" in e and "|x| = 4.0 < 8" in e
    assert "1 - 1.541725790028" in e


def test_explain_bf16_erfc_upcasts_and_rounds():
    e = explain("erfc", np.array([-1.5], ml_dtypes.bfloat16))
    assert "computed in f32" in e and "2 - 0.033894856 = 1.9661051" in e
    assert "round_to_bf16(1.9661051) = 1.96875" in e


def test_explain_lgamma_reflection_and_polygamma_children():
    e = explain("lgamma", np.float32([-2.5]))
    assert "x = -2.5 < 0.5: reflection" in e and "= -0.056243896" in e
    p = explain("polygamma", np.float32([1.0]), np.float32([1.0]))
    assert "Hurwitz zeta at (2.0, 1.0)" in p and "1.0 · 1.0 · 1.644934 = 1.644934" in p
    assert "S + integral + tail" in p  # the nested zeta steps


def test_explain_messages_have_english_text():
    op = build_op("chlo.digamma", [np.float32([-3.0])], result_types=[value_type(np.float32([-3.0]))])
    call = OpCall(op)
    out = evaluate_op(op, [np.float32([-3.0])], call)
    ex = lookup("chlo.digamma").explain(call, [np.float32([-3.0])], out, 0, (0,))
    assert all(text(s.formula) for s in ex.steps)
    assert np.isnan(ex.value) and "a pole: NaN" in format_explanation(ex)
