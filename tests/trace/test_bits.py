# ruff: noqa: E501
"""Bit views (hlolab.trace.bits): fields and decodings of every element type, the rounding
record and its decision, and each op's bit panel, with values worked out by hand (written
in the comments), checked against hlolab's own results (a panel whose record does not
predict the op's value says so: ``agrees``) and, where cheap, against XLA:CPU itself."""

from __future__ import annotations

import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

from hlolab.messages import Msg, text
from hlolab.numerics import from_bits, to_bits
from hlolab.ops.conversion import conversion_stages, convert_array
from hlolab.ops.reduction import reduce_precision_op_values
from hlolab.session import Session
from hlolab.trace.bits import (
    HIDDEN,
    BitPanel,
    bit_view,
    convert_panel,
    float_layout,
    format_bits,
    position_text,
    reduce_precision_panel,
    round_significand,
    view_of_bits,
)
from hlolab.types import ALL_ELEMENT_TYPE_NAMES, element_type

F32 = np.float32
FLOATS = [n for n in ALL_ELEMENT_TYPE_NAMES if element_type(n).is_float]
REALS = [n for n in ALL_ELEMENT_TYPE_NAMES if not n.startswith("complex")]


# --- helpers ---------------------------------------------------------------------------------

def tensor(shape: tuple[int, ...], et: str) -> str:
    return f"tensor<{''.join(f'{d}x' for d in shape)}{et}>"


def run_op(op: str, operands: list[tuple[np.ndarray, str]], result: tuple[tuple[int, ...], str],
           attrs: str = "") -> tuple[Session, str]:
    """A one-op program run by hlolab; returns the session and the program text."""
    args = ", ".join(f"%a{k}: {tensor(v.shape, et)}" for k, (v, et) in enumerate(operands))
    names = ", ".join(f"%a{k}" for k in range(len(operands)))
    ins = ", ".join(tensor(v.shape, et) for v, et in operands)
    out = tensor(*result)
    prog = (f"func.func @main({args}) -> {out} {{\n"
            f"  %r = \"stablehlo.{op}\"({names}) {attrs} : ({ins}) -> {out}\n"
            f"  return %r : {out}\n}}")
    s = Session(prog)
    s.bind([v for v, _ in operands])
    s.run()
    return s, prog


def explain(s: Session, index: tuple[int, ...]):
    ev = s.history[-1]
    return ev.outputs[0], ev.explain(0, index)


def panel_of(s: Session, index: tuple[int, ...]) -> BitPanel:
    _, e = explain(s, index)
    assert len(e.bits) == 1
    return e.bits[0]


def xla(prog: str, *args: np.ndarray) -> np.ndarray:
    """XLA:CPU's value of the program (skips loudly without jax)."""
    oracle = pytest.importorskip("tests.xla_oracle")
    return oracle.run_xla(prog, *args)[0]


def reduce_precision(x: np.ndarray, e: int, m: int, et: str = "f32") -> tuple[Session, str]:
    return run_op("reduce_precision", [(x, et)], (x.shape, et),
                  f"{{exponent_bits = {e} : i32, mantissa_bits = {m} : i32}}")


def samples(name: str, n: int = 64) -> np.ndarray:
    """Every value of a type of at most 8 bits, else ``n`` spread bit patterns and the
    edges (zeros, smallest subnormals, the sign boundary)."""
    et = element_type(name)
    rng = np.random.default_rng(7)
    if et.is_bool:
        return np.array([False, True])
    if et.is_float:
        w = et.bits
        if w <= 8:
            return from_bits(np.arange(1 << w, dtype=np.uint64), et.dtype)
        raw = rng.integers(0, 1 << 63, n, dtype=np.uint64, endpoint=True) * np.uint64(2) + np.uint64(1)
        raw = raw >> np.uint64(64 - w)
        edges = np.array([0, 1, 3, 1 << (w - 1), (1 << (w - 1)) + 1, (1 << w) - 1], np.uint64)
        return from_bits(np.concatenate([raw & np.uint64((1 << w) - 1), edges]), et.dtype)
    info = ml_dtypes.iinfo(et.dtype)
    v = rng.integers(int(info.min), int(info.max), n, endpoint=True,
                     dtype=np.int64 if et.is_signed else np.uint64)
    return np.concatenate([v.astype(et.dtype), np.array([info.min, info.max, 0, 1], et.dtype)])


# --- views: fields and decoding of every type ------------------------------------------------

def decoded(view) -> float:
    """The value the fields say, computed here from the layout (an independent decoding)."""
    lay = float_layout(view.type_name)
    raw = view.raw
    m = raw & ((1 << lay.mantissa_bits) - 1)
    e = (raw >> lay.mantissa_bits) & ((1 << lay.exponent_bits) - 1)
    s = (raw >> (lay.width - 1)) & 1 if lay.signed else 0
    if lay.subnormals and e == 0:
        mag = Fraction(m, 1 << lay.mantissa_bits) * Fraction(2) ** (1 - lay.bias)
    else:
        mag = (1 + Fraction(m, 1 << lay.mantissa_bits)) * Fraction(2) ** (e - lay.bias)
    return float(-mag if s else mag)


@pytest.mark.parametrize("name", FLOATS)
def test_float_fields_decode_every_pattern(name):
    et = element_type(name)
    lay = float_layout(name)
    fi = ml_dtypes.finfo(et.dtype)
    assert (lay.exponent_bits, lay.mantissa_bits) == (fi.nexp, fi.nmant)
    assert lay.width == (1 if lay.signed else 0) + lay.exponent_bits + lay.mantissa_bits
    w = lay.width
    pats = np.arange(1 << w, dtype=np.uint64) if w <= 8 else \
        np.unique(np.concatenate([np.arange(0, 1 << w, 97, dtype=np.uint64),
                                  np.arange((1 << w) - 40, 1 << w, dtype=np.uint64),
                                  np.arange(0, 40, dtype=np.uint64)])) if w <= 16 else \
        np.concatenate([np.arange(0, 1 << 12, dtype=np.uint64) << np.uint64(w - 12),  # every sign/exponent
                        np.arange(0, 300, dtype=np.uint64)])
    inf = ((1 << lay.exponent_bits) - 1) << lay.mantissa_bits  # the inf pattern where there is one
    extra = np.array([inf, inf | (1 << (w - 1)), inf | 1], np.uint64)  # +-inf and a NaN
    pats = np.concatenate([pats, extra]) if w > 8 else pats
    values = from_bits(pats, et.dtype)
    counts: dict[str, int] = {}
    for raw, v in zip(pats, values, strict=True):
        view = bit_view(v, name)
        assert view.raw == int(raw) and view.bits == f"{int(raw):0{w}b}"
        assert "".join(f.bits(view.raw) for f in sorted(view.fields, key=lambda f: -f.hi)) == view.bits
        counts[view.category] = counts.get(view.category, 0) + 1
        with np.errstate(invalid="ignore"):
            f = float(np.asarray(v).astype(np.float64))
        if view.category == "nan":
            assert math.isnan(f)
        elif view.category == "inf":
            assert math.isinf(f)
        else:
            assert decoded(view) == f, (name, hex(int(raw)))
            assert view.hidden == (0 if view.category in ("zero", "subnormal") else 1)
            assert text(view.formula).endswith(repr(f) if view.category != "zero" else view.value_text)
    # every class the type has shows up (NaN-free and zero-free types lack some)
    assert counts.get("nan", 0) > 0 or not lay.has_nan
    assert counts.get("inf", 0) > 0 or not lay.has_inf
    if w <= 8:
        assert counts.get("nan", 0) == {"ieee": 2 * ((1 << lay.mantissa_bits) - 1), "fn": 2, "fnuz": 1,
                                        "e8m0": 1, "finite": 0}[lay.encoding]


def test_f32_0_1_fields_and_formula():
    # 0.1 f32 = 0x3DCCCCCD: sign 0, exponent 0b01111011 = 123, mantissa 0b10011001100110011001101
    v = bit_view(F32(0.1), "f32")
    assert v.raw == 0x3DCCCCCD and v.category == "normal" and v.hidden == 1
    assert [(f.kind, f.hi, f.lo, f.bits(v.raw)) for f in v.fields] == [
        ("sign", 31, 31, "0"), ("exponent", 30, 23, "01111011"), ("mantissa", 22, 0, "10011001100110011001101")]
    assert text(v.formula) == ("(-1)^0 · 2^(123 - 127) · 1.10011001100110011001101₂ = 2^-4 · 1.600000023841858"
                               " = 0.10000000149011612")
    assert v.value_text == "0.1"


@pytest.mark.parametrize(("name", "raw", "category", "formula"), [
    ("f8E4M3FN", 0x7F, "nan", "exponent and mantissa all 1: NaN (f8E4M3FN has no infinity)"),
    ("f8E4M3FN", 0x7E, "normal", "(-1)^0 · 2^(15 - 7) · 1.110₂ = 2^8 · 1.75 = 448.0"),
    ("f8E5M2FNUZ", 0x80, "nan", "sign 1, exponent and mantissa 0: NaN (f8E5M2FNUZ has no -0 and no infinity)"),
    ("f8E5M2", 0x7C, "inf", "exponent all 1, mantissa 0: inf"),
    ("f8E5M2", 0x01, "subnormal", "subnormal: (-1)^0 · 2^(1 - 15) · 0.01₂ = 2^-14 · 0.25 = 1.52587890625e-05"),
    ("f8E8M0FNU", 0x7F, "normal", "2^(127 - 127) = 2^0 = 1.0"),
    ("f8E8M0FNU", 0xFF, "nan", "all bits 1: NaN"),
    ("f4E2M1FN", 0xF, "normal", "(-1)^1 · 2^(3 - 1) · 1.1₂ = -2^2 · 1.5 = -6.0"),
    ("bf16", 0x8000, "zero", "exponent and mantissa all 0: (-1)^1 · 0 = -0.0"),
])
def test_special_encodings(name, raw, category, formula):
    v = view_of_bits(raw, name)
    assert (v.raw, v.category, text(v.formula)) == (raw, category, formula)


@pytest.mark.parametrize(("name", "value", "bits", "formula"), [
    ("i8", -123, "10000101", "-1·2^7 + 5 = -123"),
    ("i4", -8, "1000", "-1·2^3 + 0 = -8"),
    ("i2", 1, "01", "-0·2^1 + 1 = 1"),
    ("ui4", 13, "1101", "1101₂ = 13"),
    ("ui64", 2**64 - 1, "1" * 64, "1" * 64 + "₂ = 18446744073709551615"),
    ("i64", -2**63, "1" + "0" * 63, "-1·2^63 + 0 = -9223372036854775808"),
    ("i1", True, "1", "1: true"),
])
def test_integer_views(name, value, bits, formula):
    v = bit_view(np.array(value).astype(element_type(name).dtype), name)
    assert (v.bits, text(v.formula)) == (bits, formula)
    assert v.fields[0].kind == {"i": "twos_complement", "u": "unsigned"}.get(name[0], "bool") \
        if name != "i1" else v.fields[0].kind == "bool"


def test_complex_view_real_part_low_bits():
    v = bit_view(np.complex64(complex(1.0, -2.0)), "complex<f32>")
    assert v.width == 64 and v.raw == 0x3F800000 | (0xC0000000 << 32)
    assert [(f.part, f.kind, f.hi) for f in v.fields][:1] == [("imag", "sign", 63)]
    assert text(v.formula).startswith("real: (-1)^0") and "imaginary: (-1)^1" in text(v.formula)


# --- the rounding rule itself ----------------------------------------------------------------

@pytest.mark.parametrize("mode", ["nearest_even", "nearest_away", "toward_zero"])
def test_round_significand_is_the_rounding_rule(mode):
    """Every 8-bit significand at every cut against exact rational rounding."""
    for cut in range(0, 11):
        for sig in range(256):
            r = round_significand(sig, 8, cut, mode)
            q = Fraction(sig, 1 << cut)
            fl = math.floor(q)
            frac = q - fl
            if mode == "toward_zero":
                want = fl
            elif frac != Fraction(1, 2):
                want = fl + (frac > Fraction(1, 2))
            else:
                want = fl + 1 if mode == "nearest_away" or fl % 2 else fl
            assert r.result == want, (sig, cut, mode)
            assert r.round_up == (want > fl)
            assert r.decision in ("fits", "exact") or (q != fl)
            if 0 < cut <= 8:
                assert r.guard == cut - 1 and r.guard_bit == (sig >> (cut - 1)) & 1
                assert r.sticky == tuple(range(cut - 2, -1, -1))
                assert r.sticky_bit == int(sig & ((1 << (cut - 1)) - 1) != 0)
                assert r.kept_bits + r.dropped_bits == f"{sig:08b}"


def test_position_text_writes_runs():
    assert position_text([22, 21, 20]) == "22..20"
    assert position_text([HIDDEN, 22, 21, 5]) == "h, 22, 21, 5"


# --- reduce_precision ------------------------------------------------------------------------

def test_reduce_precision_0_1_to_e5m2():
    # 0.1 = 0x3DCCCCCD = 1.10011001100110011001101b x 2^-4. e5m2 keeps 2 mantissa bits: "10";
    # the 21 dropped bits 011001100110011001101 start with a 0 guard bit: below half a unit
    # of the last kept bit, round down. Exponent -4 is within e5m2's [-14, 15]: kept.
    # Result 1.10b x 2^-4 = 0.09375 = 0x3DC00000.
    x = np.array([0.1], F32)
    s, prog = reduce_precision(x, 5, 2)
    out, e = explain(s, (0,))
    assert out[0] == 0.09375 and int(to_bits(out)[0]) == 0x3DC00000
    p = e.bits[0]
    assert p.agrees and [r.label for r in p.rows] == ["%a0[0]", "%r[0]"]
    (c,) = p.changes
    r = c.rounding
    assert (r.kept_bits, r.dropped_bits) == ("10", "011001100110011001101")
    assert (r.kept, r.guard, r.sticky) == ((22, 21), 20, tuple(range(19, -1, -1)))
    assert (r.guard_bit, r.sticky_bit, r.lsb, r.decision, r.round_up) == (0, 1, 0, "below_half", False)
    assert c.outcome == "in_range" and c.predicted == F32(0.09375)
    assert p.rows[0].marks[20] == "guard" and p.rows[0].marks[22] == "kept" and p.rows[0].marks[0] == "sticky"
    # the output bits that changed: the sticky 1s that were cleared
    assert set(p.rows[1].marks) == {k for k in range(21) if (0x3DCCCCCD >> k) & 1}
    words = format_bits(p)
    assert "dropped 21 bits 011001100110011001101: guard bit 0, below half" in words
    assert "round down, keep 10" in words and "exponent -4 is within [-14, 15] of e5m2: kept" in words
    assert xla(prog, x)[0] == F32(0.09375)


@pytest.mark.parametrize(("value", "want", "decision", "lsb"), [
    # 1.125 = 1.001b: keep "00", guard 1, sticky 0: a tie; last kept bit 0 is even -> down, 1.0
    (1.125, 1.0, "tie_even", 0),
    # 1.375 = 1.011b: keep "01", guard 1, sticky 0: a tie; last kept bit 1 is odd -> up, 1.10b = 1.5
    (1.375, 1.5, "tie_odd", 1),
    # -2.625 = -1.0101b x 2: keep "01", guard 0 -> down, -1.01b x 2 = -2.5
    (-2.625, -2.5, "below_half", 1),
    # 1.4375 = 1.0111b: keep "01", guard 1, sticky 1 -> up, 1.10b = 1.5
    (1.4375, 1.5, "above_half", 1),
])
def test_reduce_precision_ties_both_ways(value, want, decision, lsb):
    x = np.array([value], F32)
    s, prog = reduce_precision(x, 5, 2)
    out, e = explain(s, (0,))
    r = e.bits[0].changes[0].rounding
    assert out[0] == want and (r.decision, r.lsb) == (decision, lsb) and e.bits[0].agrees
    assert xla(prog, x)[0] == F32(want)


def test_reduce_precision_overflow_to_inf_by_carry():
    # 61440 = 1.111b x 2^15: keep "11", guard 1, sticky 0, last kept bit 1: a tie rounded up to
    # even, 1.11b + 0.01b = 10.00b: the carry raises the exponent field 142 -> 143, i.e. 2^16,
    # above e5m2's largest exponent 15: overflow to +inf. 65536 = 2^16 overflows with nothing
    # to round.
    x = np.array([61440.0, 65536.0, -65536.0], F32)
    s, prog = reduce_precision(x, 5, 2)
    out, _ = explain(s, (0,))
    assert list(out) == [np.inf, np.inf, -np.inf]
    p = panel_of(s, (0,))
    c = p.changes[0]
    assert (c.rounding.decision, c.rounding.carry, c.outcome) == ("tie_odd", True, "overflow_inf")
    assert any(m.key == "bits.reduce.carry" and m.args == {"exponent": 142, "next": 143} for m in c.messages)
    assert "exponent 16 is above 15, the largest of e5m2: overflow to infinity" in format_bits(p)
    p2 = panel_of(s, (2,))
    assert (p2.changes[0].rounding.decision, p2.changes[0].outcome) == ("exact", "overflow_inf")
    np.testing.assert_array_equal(xla(prog, x), out)


def test_reduce_precision_underflow_and_subnormal_result():
    # 2^-15 is below e5m2's smallest normal 2^-14, and the reduced format has no subnormals:
    # flushed to +0. In f32 with (8, 22), the subnormal 0x00000003 drops its last bit: guard 1,
    # sticky 0, last kept bit 1 (odd) -> up: 0x00000004, a subnormal result.
    x = np.array([2.0 ** -15], F32)
    s, _ = reduce_precision(x, 5, 2)
    out, e = explain(s, (0,))
    assert out[0] == 0 and e.bits[0].changes[0].outcome == "underflow_zero"
    sub = from_bits(np.array([3], np.uint32), np.float32)
    s, prog = reduce_precision(sub, 8, 22)
    out, e = explain(s, (0,))
    p = e.bits[0]
    assert int(to_bits(out)[0]) == 4 and p.rows[1].view.category == "subnormal"
    assert p.rows[0].view.category == "subnormal" and p.rows[0].view.hidden == 0
    assert (p.changes[0].rounding.decision, p.changes[0].rounding.guard) == ("tie_odd", 0)
    assert p.agrees


def test_reduce_precision_nan_and_no_mantissa():
    # a NaN stays itself; with mantissa_bits = 0 no bit is left for a NaN: it becomes inf
    x = np.array([np.nan, 1.5, 2.5], F32)
    s, _ = reduce_precision(x, 8, 0)
    out, _ = explain(s, (0,))
    assert np.isinf(out[0])
    assert panel_of(s, (0,)).changes[0].outcome == "nan_inf"
    # 1.5 = 1.1b: no mantissa bit kept, a tie decided by the exponent's lowest bit (127: odd) -> 2.0
    p = panel_of(s, (1,))
    assert out[1] == 2.0 and p.changes[0].rounding.lsb == 1 and p.changes[0].rounding.decision == "tie_odd"
    # 2.5 = 1.01b x 2: guard 0 -> 2.0
    assert out[2] == 2.0 and panel_of(s, (2,)).agrees


def test_reduce_precision_f8_goes_through_f16():
    # f8E4M3FN 0.1015625 (0x1D) in f16, to e5m2: keep "10", guard 1, sticky 0, last kept bit 0
    # -> down: 1.10b x 2^-4 = 0.09375, back in f8E4M3FN exactly (0x1C)
    x = np.array([0.1015625], ml_dtypes.float8_e4m3fn)
    s, _ = reduce_precision(x, 5, 2, "f8E4M3FN")
    out, e = explain(s, (0,))
    p = e.bits[0]
    assert float(out[0]) == 0.09375 and p.agrees
    assert [r.view.type_name for r in p.rows] == ["f8E4M3FN", "f16", "f16", "f8E4M3FN"]
    assert [c.kind for c in p.changes] == ["widen", "reduce", "round"]
    assert p.changes[1].rounding.decision == "tie_even"
    assert any(n.key == "bits.note.via_f16" for n in p.notes)


@pytest.mark.parametrize("name", FLOATS)
def test_reduce_precision_records_predict_hlolab(name):
    """For every value of the small types (a sample of the others) and several formats, the
    bit record predicts hlolab's reduce_precision."""
    xs = samples(name)
    et = element_type(name)
    for e, m in [(5, 2), (4, 3), (8, 7), (5, 10), (2, 1), (1, 0), (11, 52)]:
        with np.errstate(all="ignore"):
            ys = reduce_precision_op_values(xs, e, m)
            via16 = None
            if et.dtype.itemsize == 1:
                x16 = xs.astype(np.float32).astype(np.float16)
                via16 = (x16, reduce_precision_op_values(x16, e, m))
        for k, (x, y) in enumerate(zip(xs, ys, strict=True)):
            via = (via16[0][k], via16[1][k]) if via16 else None
            p = reduce_precision_panel(x, y, name, e, m, via=via)
            assert p.agrees, (name, e, m, x, y, [text(n) for n in p.notes])


# --- convert ---------------------------------------------------------------------------------

def convert(x: np.ndarray, src: str, dst: str) -> tuple[Session, str]:
    return run_op("convert", [(x, src)], (x.shape, dst))


def test_convert_f32_to_bf16():
    # 0.1: significand 1.10011001100110011001101b; bf16 keeps 1 + 7 bits "11001100", drops
    # 16 bits 1100110011001101: guard 1, sticky 1 -> up: 11001101 -> 0x3DCD = 0.10009765625
    x = np.array([0.1, 1.00390625, 3.4e38], F32)
    s, prog = convert(x, "f32", "bf16")
    out, e = explain(s, (0,))
    p = e.bits[0]
    r = p.changes[0].rounding
    assert int(to_bits(out)[0]) == 0x3DCD and float(out[0]) == 0.10009765625
    assert (r.kept_bits, r.dropped_bits, r.decision) == ("11001100", "1100110011001101", "above_half")
    assert r.kept[0] == HIDDEN and p.rows[0].marks[HIDDEN] == "kept"
    # the round-up changed the last kept bit of the output's mantissa
    assert p.rows[1].marks == {0: "changed"}
    # 1.00390625 = 1 + 2^-8: guard 1, sticky 0, last kept 0: tie, stays 1.0
    assert float(out[1]) == 1.0 and panel_of(s, (1,)).changes[0].rounding.decision == "tie_even"
    # 3.4e38 rounds up past bf16's largest value: +inf
    assert np.isinf(float(out[2])) and panel_of(s, (2,)).changes[0].outcome == "overflow_inf"
    np.testing.assert_array_equal(xla(prog, x).view(np.uint16), out.view(np.uint16))


def test_convert_f32_to_f8e4m3fn():
    # 0.1 -> keep 1100, drop 11001100110011001101 (guard 1, sticky 1) -> 1101: 1.101b x 2^-4
    #   = 0.1015625 = 0 0011 101 = 0x1D
    # 0.005 = 2.56 x 2^-9, below the smallest normal 2^-6: the last kept place is 2^-9,
    #   keep 10, guard 1, sticky 1 -> 11: 3 x 2^-9 = 0.005859375 = 0x03, a subnormal
    # 464 = 1.1101b x 2^8: keep 1110, guard 1, sticky 0, last kept 0 -> tie, down: 448
    # 500 = 1.1111010b x 2^8 -> up, carry: 2^9 = 512 > 448, no infinity: NaN
    x = np.array([0.1, 0.005, 464.0, 500.0], F32)
    s, prog = convert(x, "f32", "f8E4M3FN")
    out, _ = explain(s, (0,))
    assert [int(b) for b in to_bits(out)[:3]] == [0x1D, 0x03, 0x7E] and np.isnan(float(out[3]))
    cases = [(0, "above_half", "in_range"), (1, "above_half", "subnormal"), (2, "tie_even", "in_range"),
             (3, "above_half", "overflow_nan")]
    for i, decision, outcome in cases:
        p = panel_of(s, (i,))
        assert (p.changes[0].rounding.decision, p.changes[0].outcome) == (decision, outcome) and p.agrees
    assert panel_of(s, (3,)).changes[0].rounding.carry
    # (0.006 is the shortest decimal that reads back as that f8E4M3FN value)
    assert "a subnormal result, 0.006" in format_bits(panel_of(s, (1,)))
    np.testing.assert_array_equal(xla(prog, x).view(np.uint8)[:3], out.view(np.uint8)[:3])


def test_convert_f32_to_i8_truncates_and_saturates():
    # -3.7 -> -3 (the fraction bits dropped, toward zero); 127.9 -> 127; 300.5 and 1e10 saturate
    # to 127, -1e10 to -128 (XLA:CPU's choice, the spec leaves it TBD); NaN -> 0; -0.5 -> 0
    x = np.array([-3.7, 127.9, 300.5, 1e10, -1e10, np.nan, -0.5], F32)
    s, _ = convert(x, "f32", "i8")
    out, _ = explain(s, (0,))
    assert list(out) == [-3, 127, 127, 127, -128, 0, 0]
    p = panel_of(s, (0,))
    r = p.changes[0].rounding
    assert r.decision == "truncate" and r.result == 3 and p.rows[0].marks[r.sticky[0]] == "dropped"
    assert [panel_of(s, (i,)).changes[0].outcome for i in range(7)] == [
        "in_range_int", "in_range_int", "saturate_int", "saturate_int", "saturate_int", "nan_int", "in_range_int"]


def test_convert_integer_wrap_and_extend():
    # i16 300 = 0x012C -> i8 keeps the low byte 0x2C = 44 (the high 8 bits dropped)
    s, _ = convert(np.array([300, -1], np.int16), "i16", "i8")
    p = panel_of(s, (0,))
    assert p.rows[1].view.value == 44 and p.changes[0].kind == "wrap" and p.rows[0].marks[8] == "dropped"
    # i8 -1 -> ui16: sign extension, 0xFFFF; ui8 255 -> i16: zero extension, 255
    s, _ = convert(np.array([-1], np.int8), "i8", "ui16")
    p = panel_of(s, (0,))
    assert int(p.rows[1].view.value) == 0xFFFF and set(p.rows[1].marks) == set(range(8, 16))
    s, _ = convert(np.array([255], np.uint8), "ui8", "i16")
    assert int(panel_of(s, (0,)).rows[1].view.value) == 255
    # i64 -(2^25 + 2^17 + 1) -> bf16 through f32 (XLA:CPU): |x| rounds to 2^25 + 2^17 in f32,
    # then that tie rounds to even in bf16: -2^25
    s, _ = convert(np.array([-(2**25 + 2**17 + 1)], np.int64), "i64", "bf16")
    p = panel_of(s, (0,))
    assert [r.label for r in p.rows] == ["%a0[0]", "|%a0[0]|", "f32(%a0[0])", "%r[0]"]
    assert float(p.rows[-1].view.value) == -2.0 ** 25 and p.agrees
    assert [c.rounding.decision for c in p.changes[1:]] == ["below_half", "tie_even"]


@pytest.mark.parametrize("src", REALS)
def test_convert_records_predict_hlolab(src):
    """Every type pair, a sample of values: the records predict hlolab's convert. The one
    exception: f32 subnormals to f8E8M0FNU, where hlolab takes ml_dtypes' cast, which does
    not round them to nearest (5.9e-39 gives 2^-126, not 2^-127); the panel says so."""
    xs = samples(src, 40)
    s_et = element_type(src)
    for dst in REALS:
        d_et = element_type(dst)
        with np.errstate(all="ignore"):
            ys = convert_array(xs, s_et, d_et)
            stages = conversion_stages(s_et, d_et)
            mids = [convert_array(xs, s_et, t) for t in stages]
            if stages:  # the stages compose to convert itself
                np.testing.assert_array_equal(to_bits(convert_array(mids[-1], stages[-1], d_et)), to_bits(ys))
        for k, (x, y) in enumerate(zip(xs, ys, strict=True)):
            with np.errstate(all="ignore"):
                p = convert_panel(x, y, s_et, d_et, via=[(t, v[k]) for t, v in zip(stages, mids, strict=True)])
            quirk = dst == "f8E8M0FNU" and bit_view(x, src).category == "subnormal"
            assert p.agrees or quirk, (src, dst, x, y, [text(n) for n in p.notes])
            if not p.agrees:
                assert p.notes[-1].key == "bits.note.disagrees"


def test_convert_f32_subnormal_to_e8m0_is_flagged():
    x = from_bits(np.array([0x403ECD], np.uint32), np.float32)  # 5.9e-39 = 1.004 x 2^-127
    y = convert_array(x, element_type("f32"), element_type("f8E8M0FNU"))
    p = convert_panel(x[0], y[0], "f32", "f8E8M0FNU")
    assert float(y[0]) == 2.0 ** -126 and not p.agrees
    # the shortest decimals that read back in f8E8M0FNU: 2^-127 and 2^-126
    assert text(p.notes[-1]) == "the bit record predicts 6e-39 for result, the op gives 1e-38"


def test_convert_complex_part_by_part():
    s, _ = convert(np.array([complex(0.1, -1.0)], np.complex64), "complex<f32>", "bf16")
    p = panel_of(s, (0,))
    assert [r.label for r in p.rows] == ["real(%a0[0])", "real(%r[0])"] and p.agrees
    assert p.notes[0].key == "bits.note.imag_ignored"


# --- bitcast_convert -------------------------------------------------------------------------

def test_bitcast_f32_to_four_i8():
    # 0x3DCCCCCD splits little-endian: [0xCD, 0xCC, 0xCC, 0x3D] = [-51, -52, -52, 61]
    x = np.array([0.1], F32)
    s, prog = run_op("bitcast_convert", [(x, "f32")], ((1, 4), "i8"))
    out, e = explain(s, (0, 2))
    assert out.tolist() == [[-51, -52, -52, 61]]
    p = e.bits[0]
    assert [r.label for r in p.rows] == ["%a0[0]", "%r[0, 0]", "%r[0, 1]", "%r[0, 2]", "%r[0, 3]"]
    assert [(q.index, q.lo, q.hi) for q in p.rows[0].pieces] == [(0, 0, 7), (1, 8, 15), (2, 16, 23), (3, 24, 31)]
    assert [r.chosen for r in p.rows] == [False, False, False, True, False] and p.agrees
    assert e.steps[1].substituted.args["bits"] == "0xCD 0xCC 0xCC 0x3D"
    np.testing.assert_array_equal(xla(prog, x), out)


def test_bitcast_two_bf16_to_f32():
    # bf16 0xCCCD (low half) and 0x3DCC (high half) join into 0x3DCCCCCD = 0.1f
    x = from_bits(np.array([[0xCCCD, 0x3DCC]], np.uint16), ml_dtypes.bfloat16)
    s, prog = run_op("bitcast_convert", [(x, "bf16")], ((1,), "f32"))
    out, e = explain(s, (0,))
    assert out[0] == F32(0.1)
    p = e.bits[0]
    assert [r.piece for r in p.rows] == [0, 1, None] and p.rows[2].view.raw == 0x3DCCCCCD and p.agrees
    assert e.steps[0].value == ["0xCCCD", "0x3DCC"]
    np.testing.assert_array_equal(xla(prog, x), out)


def test_bitcast_spec_example():
    # the spec: f64 0x0123456789ABCDEF -> 4 x f16 [0xCDEF, 0x89AB, 0x4567, 0x0123]
    x = np.array(0x0123456789ABCDEF, np.uint64).view(np.float64).reshape(())
    s, _ = run_op("bitcast_convert", [(x, "f64")], ((4,), "f16"))
    _, e = explain(s, (1,))
    assert [r.view.raw for r in e.bits[0].rows[1:]] == [0xCDEF, 0x89AB, 0x4567, 0x0123]
    assert e.bits[0].rows[0].label == "%a0"


# --- shifts, popcnt, count_leading_zeros -----------------------------------------------------

def shift(op: str, lhs: list[int], rhs: list[int]) -> tuple[Session, str, list[np.ndarray]]:
    a, b = np.array(lhs, np.int8), np.array(rhs, np.int8)
    s, prog = run_op(op, [(a, "i8"), (b, "i8")], (a.shape, "i8"))
    return s, prog, [a, b]


def test_shift_left_i8():
    # -3 = 11111101 << 2 = 11110100 = -12: bits 7, 6 go out, two zeros come in at 1, 0;
    # an amount >= 8 (and -1, read as 255) shifts everything out: 0
    s, prog, args = shift("shift_left", [-3, 5, 5], [2, 8, -1])
    out, _ = explain(s, (0,))
    assert out.tolist() == [-12, 0, 0]
    p = panel_of(s, (0,))
    assert p.rows[0].marks == {7: "shifted_out", 6: "shifted_out"}
    assert p.rows[2].marks == {1: "shifted_in", 0: "shifted_in"} and p.rows[2].view.bits == "11110100"
    p2 = panel_of(s, (2,))
    assert p2.changes[0].amount == 255 and any(m.key == "bits.shift.out_of_range" for m in p2.changes[0].messages)
    assert p.agrees and p2.agrees
    np.testing.assert_array_equal(xla(prog, *args), out)


def test_shift_right_arithmetic_and_logical_i8():
    # -100 = 10011100. Arithmetic >> 3: 11110011 = -13 (three copies of the sign bit);
    # logical >> 3: 00010011 = 19. By 9: every bit out, -1 (arithmetic) and 0 (logical).
    s, prog, args = shift("shift_right_arithmetic", [-100, -100, 100], [3, 9, 2])
    out, _ = explain(s, (0,))
    assert out.tolist() == [-13, -1, 25]
    p = panel_of(s, (0,))
    assert p.rows[0].marks == {0: "shifted_out", 1: "shifted_out", 2: "shifted_out"}
    assert p.rows[2].marks == {7: "fill", 6: "fill", 5: "fill"} and p.rows[2].view.bits == "11110011"
    assert all(panel_of(s, (i,)).agrees for i in range(3))
    np.testing.assert_array_equal(xla(prog, *args), out)
    s, prog, args = shift("shift_right_logical", [-100, -100], [3, 9])
    out, _ = explain(s, (0,))
    assert out.tolist() == [19, 0]
    p = panel_of(s, (0,))
    assert p.rows[2].marks == {7: "shifted_in", 6: "shifted_in", 5: "shifted_in"}
    assert p.rows[2].view.bits == "00010011" and p.agrees
    np.testing.assert_array_equal(xla(prog, *args), out)


def test_popcnt():
    # i8 -1 = 11111111: 8 set bits; i32 0x0F0F: 8; i2 -1 = 11: 2, which wraps to -2 in i2
    s, _ = run_op("popcnt", [(np.array([-1, 0x0F, 0], np.int8), "i8")], ((3,), "i8"))
    out, _ = explain(s, (0,))
    assert out.tolist() == [8, 4, 0]
    p = panel_of(s, (1,))
    assert p.rows[0].marks == {k: "set" for k in range(4)} and p.changes[0].count == 4 and p.agrees
    s, _ = run_op("popcnt", [(np.array([-1], ml_dtypes.int2), "i2")], ((1,), "i2"))
    out, e = explain(s, (0,))
    assert int(out[0]) == -2
    assert [m.key for m in e.bits[0].changes[0].messages] == ["bits.count.popcnt", "bits.count.wraps"]
    # the spec example: [0, 1, 2, 127] -> [0, 1, 1, 7]
    s, _ = run_op("popcnt", [(np.array([0, 1, 2, 127], np.int64), "i64")], ((4,), "i64"))
    assert explain(s, (0,))[0].tolist() == [0, 1, 1, 7] and panel_of(s, (3,)).changes[0].count == 7


def test_count_leading_zeros_i32_i4_ui4():
    # i32: 1 -> 31, 0 -> 32, -1 -> 0, 0x00F00000 -> 8
    s, _ = run_op("count_leading_zeros", [(np.array([1, 0, -1, 0x00F00000], np.int32), "i32")],
                  ((4,), "i32"))
    out, _ = explain(s, (0,))
    assert out.tolist() == [31, 32, 0, 8]
    p = panel_of(s, (3,))
    assert p.rows[0].marks == {**{k: "leading_zero" for k in range(24, 32)}, 23: "first_one"}
    assert panel_of(s, (1,)).rows[0].marks == {k: "leading_zero" for k in range(32)}
    # i4 1 = 0001 -> 3; ui4 5 = 0101 -> 1; ui4 0 -> 4
    s, _ = run_op("count_leading_zeros", [(np.array([1, -8], ml_dtypes.int4), "i4")], ((2,), "i4"))
    assert explain(s, (0,))[0].tolist() == [3, 0] and panel_of(s, (0,)).changes[0].count == 3
    s, _ = run_op("count_leading_zeros", [(np.array([5, 0], ml_dtypes.uint4), "ui4")], ((2,), "ui4"))
    out, _ = explain(s, (0,))
    assert out.tolist() == [1, 4] and panel_of(s, (1,)).agrees
    assert panel_of(s, (0,)).rows[0].marks == {3: "leading_zero", 2: "first_one"}


# --- round_nearest_even / afz ----------------------------------------------------------------

@pytest.mark.parametrize(("op", "want", "decisions"), [
    # the spec's examples: [-2.5, 0.4, 0.5, 0.6, 2.5]. 2.5 = 10.1b: keep "10" (2), guard 1
    # (the 0.5 bit), sticky 0: a tie; even keeps 2, away gives 3. 0.5: the guard is the implicit
    # bit itself and nothing is kept (0, even). 0.4: guard 0. 0.6: guard 1, sticky 1.
    ("round_nearest_even", [-2.0, 0.0, 0.0, 1.0, 2.0],
     ["tie_even", "below_half", "tie_even", "above_half", "tie_even"]),
    ("round_nearest_afz", [-3.0, 0.0, 1.0, 1.0, 3.0],
     ["tie_away", "below_half", "tie_away", "above_half", "tie_away"]),
])
def test_round_nearest(op, want, decisions):
    x = np.array([-2.5, 0.4, 0.5, 0.6, 2.5])
    s, prog = run_op(op, [(x, "f64")], ((5,), "f64"))
    out, _ = explain(s, (0,))
    assert out.tolist() == want
    panels = [panel_of(s, (i,)) for i in range(5)]
    assert [p.changes[0].rounding.decision for p in panels] == decisions
    assert all(p.agrees for p in panels)
    assert panels[2].changes[0].rounding.guard == HIDDEN and panels[2].changes[0].rounding.kept == ()
    # 2.5 = 1.01b x 2: the implicit bit is worth 2, mantissa bit 51 is worth 1, bit 50 is 1/2
    assert panels[0].rows[0].marks[50] == "guard" and panels[0].rows[0].marks[51] == "kept"
    np.testing.assert_array_equal(xla(prog, x), out)


@pytest.mark.parametrize("name", FLOATS)
def test_round_nearest_records_predict_hlolab(name):
    xs = samples(name)
    for op, mode in (("round_nearest_even", "nearest_even"), ("round_nearest_afz", "nearest_away")):
        s, _ = run_op(op, [(xs, name)], (xs.shape, name))
        for i in range(len(xs)):
            p = panel_of(s, (i,))
            assert p.agrees, (name, op, xs[i], [text(n) for n in p.notes])
            assert p.changes[0].rounding is None or p.changes[0].rounding.mode == mode


# --- narrow float arithmetic -----------------------------------------------------------------

def test_bf16_add_is_rounded_once_from_f32():
    # 0.1 + 0.2 in bf16: 0.10009765625 + 0.2001953125 = 0.30029296875 exactly in f32
    # (1.00110011100000000000000b x 2^-2); bf16 keeps 10011001, guard 1, sticky 1 -> up: 0.30078125
    a = np.array([0.1], ml_dtypes.bfloat16)
    b = np.array([0.2], ml_dtypes.bfloat16)
    s, prog = run_op("add", [(a, "bf16"), (b, "bf16")], ((1,), "bf16"))
    out, e = explain(s, (0,))
    p = e.bits[0]
    assert float(out[0]) == 0.30078125 and p.rows[0].view.value == F32(0.30029296875)
    assert p.changes[0].rounding.decision == "above_half" and p.agrees
    assert float(xla(prog, a, b)[0]) == 0.30078125


@pytest.mark.parametrize("name", ["bf16", "f16", "f8E4M3FN", "f8E5M2", "f4E2M1FN"])
def test_narrow_float_results_explain_their_rounding(name):
    """Every element-wise op computed in f32 and rounded to a narrow type: the panel starts
    from the op's own f32 value and predicts the op's result; selections round nowhere."""
    dt = element_type(name).dtype
    a = np.array([0.75, 1.5, 3.0, -2.0, 0.5, 6.0]).astype(dt)
    b = np.array([1.5, 0.5, 2.0, 3.0, -1.5, 0.75]).astype(dt)
    unary = ["sqrt", "exponential", "log", "tanh", "sine", "logistic", "cbrt", "rsqrt", "exponential_minus_one"]
    binary = ["add", "subtract", "multiply", "divide", "power", "atan2", "remainder"]
    n = 0
    for op in unary + binary:
        operands = [(a, name)] + ([(b, name)] if op in binary else [])
        with np.errstate(all="ignore"):
            s, _ = run_op(op, operands, ((6,), name))
        for i in range(6):
            _, e = explain(s, (i,))
            if not e.bits:  # the f32 value is the result: nothing rounded
                continue
            p = e.bits[0]
            assert p.rows[0].view.type_name == "f32" and p.rows[1].view.type_name == name
            assert p.agrees, (op, name, i, [text(x) for x in p.notes])
            n += 1
    assert n > 50
    s, _ = run_op("maximum", [(a, name), (b, name)], ((6,), name))
    assert explain(s, (0,))[1].bits == []


def test_ops_without_rounding_have_no_bit_panel():
    # f32 results round nowhere; a bf16 negate flips the sign bit, no rounding
    s, _ = run_op("add", [(np.array([1.0], F32), "f32"), (np.array([2.0], F32), "f32")], ((1,), "f32"))
    assert explain(s, (0,))[1].bits == []
    s, _ = run_op("negate", [(np.array([1.5], ml_dtypes.bfloat16), "bf16")], ((1,), "bf16"))
    assert explain(s, (0,))[1].bits == []


# --- messages ------------------------------------------------------------------------------

def test_bit_panels_hold_no_english_outside_the_catalogue():
    from hlolab import messages
    from tests.test_messages import PROSE, PSEUDO, TOKEN, pseudo_catalogue
    messages.register(PSEUDO, pseudo_catalogue())
    try:
        x = np.array([0.1, 61440.0, np.nan], F32)
        s, _ = reduce_precision(x, 5, 2)
        panels = [panel_of(s, (i,)) for i in range(3)]
        s, _ = convert(np.array([500.0, -3.7], F32), "f32", "f8E4M3FN")
        panels += [panel_of(s, (0,)), panel_of(s, (1,))]
        s, _, _ = shift("shift_right_arithmetic", [-100], [9])
        panels.append(panel_of(s, (0,)))
        for p in panels:
            out = format_bits(p, PSEUDO)
            hit = PROSE.search(TOKEN.sub(" ", out))
            assert hit is None, f"English outside the catalogue: {hit.group(0)!r} in\n{out}"
            assert format_bits(p)  # and English renders
    finally:
        messages._catalogues.pop(PSEUDO, None)


def test_every_bits_message_exists():
    from hlolab.messages import catalogue

    en = catalogue("en")
    for kind in ("fits", "exact", "below_half", "above_half", "tie_even", "tie_odd", "tie_away", "truncate"):
        assert f"bits.decision.{kind}" in en
    x = np.array([0.1], F32)
    s, _ = reduce_precision(x, 5, 2)
    p = panel_of(s, (0,))
    for c in p.changes:
        for m in c.messages:
            assert isinstance(m, Msg) and m.key in en
