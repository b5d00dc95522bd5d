"""Bit views: one element's bits as the fields of its type, and what an op did to them.

The data model behind the bit pictures (``hlolab/render/bits.py`` draws it with
matplotlib, the TUI's explain panel as rich text); nothing here draws.

- ``BitView``: one value of one element type: its raw bits, its fields (sign /
  exponent / mantissa for floats, two's complement or unsigned for integers, one bit
  for i1, the real part's fields below the imaginary part's for complex), its class
  (normal, subnormal, zero, inf, NaN) and its decoding formula with this value's
  numbers. Bit positions count from the least significant bit (0); ``HIDDEN`` is a
  float's implicit leading significand bit, which the encoding does not store.
- ``Rounding``: a significand rounded at a cut: the kept bits, the guard bit (the
  first dropped bit), the sticky bits below it and the decision: below half, above
  half, an exact tie kept even or rounded up to even, a tie away from zero, or
  truncation toward zero.
- ``BitChange``: one step between two rows of a panel (round, wrap, extend, shift,
  count, regroup …) with its rounding record, its range outcome (overflow to inf,
  NaN or the largest value, underflow to zero, a subnormal result), the value the
  record predicts and the messages that say so.
- ``BitPanel``: the rows (label, view, per-bit marks) and changes of one explained
  element: what ``Explanation.bits`` holds.

Float parameters come from ``ml_dtypes.finfo`` and ``hlolab.numerics.float_format``
(never a hand-written table). The builders derive each record bit by bit with
Python integers, independently of the ops' vectorized code, from the element values
the op computed (and the intermediates it hands over); ``BitPanel.agrees`` says
whether the records predict the op's actual values, and a panel whose record does
not carries a note saying so.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import ml_dtypes
import numpy as np

from hlolab.errors import UnsupportedError
from hlolab.messages import Msg, text
from hlolab.numerics import float_format, from_bits, is_float_dtype, nan_value, round_float64, to_bits
from hlolab.types import ElementType, QuantizedElementType, element_type

HIDDEN = -1  # position of a float's implicit leading significand bit (not stored)

FIELD_KINDS = ("sign", "exponent", "mantissa", "twos_complement", "unsigned", "bool")
# what a mark on one bit says; each has a message bits.mark.<kind> and one colour
MARK_KINDS = ("kept", "guard", "sticky", "dropped", "changed", "shifted_out", "shifted_in", "fill",
              "set", "leading_zero", "first_one", "extended")

Text = Msg | str


# --- float layouts -------------------------------------------------------------------------

@dataclass(frozen=True)
class FloatLayout:
    """Where a float type keeps its sign, exponent and mantissa, and what they mean."""

    type_name: str
    width: int
    exponent_bits: int
    mantissa_bits: int
    bias: int
    min_exp: int          # exponent of the smallest normal value
    max_finite: float
    smallest_normal: float
    signed: bool
    subnormals: bool      # an all-zero exponent field holds zero and the subnormals
    encoding: str         # non-finite encodings: "ieee", "fn", "fnuz", "e8m0", "finite"
    has_inf: bool
    has_nan: bool
    has_zero: bool
    has_neg_zero: bool

    @property
    def precision(self) -> int:
        return self.mantissa_bits + 1

    @property
    def exponent_ones(self) -> int:
        return (1 << self.exponent_bits) - 1


@cache
def float_layout(type_name: str) -> FloatLayout:
    """The layout of float element type ``type_name`` (``f32``, ``f8E5M2`` …)."""
    et = element_type(type_name)
    if not et.is_float:
        raise UnsupportedError(f"float_layout: {type_name} is not a floating-point type")
    fi = ml_dtypes.finfo(et.dtype)
    fmt = float_format(et.dtype)
    nexp, nmant = int(fi.nexp), int(fi.nmant)
    subnormals = fmt.has_zero  # f8E8M0FNU: exponent 0 is the smallest value, 2^-127
    if fmt.has_inf:
        encoding = "ieee"
    elif not fmt.has_nan:
        encoding = "finite"
    elif not fmt.signed:
        encoding = "e8m0"
    elif not fmt.has_neg_zero:
        encoding = "fnuz"
    else:
        encoding = "fn"
    min_exp = int(fi.minexp)
    return FloatLayout(type_name=type_name, width=fmt.bits, exponent_bits=nexp, mantissa_bits=nmant,
                       bias=1 - min_exp if subnormals else -min_exp, min_exp=min_exp,
                       max_finite=fmt.max_finite, smallest_normal=2.0 ** min_exp, signed=fmt.signed,
                       subnormals=subnormals, encoding=encoding, has_inf=fmt.has_inf,
                       has_nan=fmt.has_nan, has_zero=fmt.has_zero, has_neg_zero=fmt.has_neg_zero)


# --- views ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class BitField:
    """Bits ``hi`` down to ``lo`` (inclusive) of a view, of one ``kind`` (FIELD_KINDS);
    ``part`` is "real" or "imag" in a complex value."""

    kind: str
    hi: int
    lo: int
    part: str | None = None

    @property
    def width(self) -> int:
        return self.hi - self.lo + 1

    def bits(self, raw: int) -> str:
        return f"{self.value(raw):0{self.width}b}"

    def value(self, raw: int) -> int:
        return (raw >> self.lo) & ((1 << self.width) - 1)

    def label(self) -> Msg:
        name = Msg(f"bits.field.{self.kind}")
        return name if self.part is None else Msg("bits.field.part", part=Msg(f"bits.part.{self.part}"),
                                                  field=name)


@dataclass(frozen=True)
class BitView:
    """One value of one element type as its bits (see the module doc)."""

    type_name: str
    width: int
    raw: int
    fields: tuple[BitField, ...]
    value: Any            # the value, a numpy scalar of the type
    category: str         # "normal" "subnormal" "zero" "inf" "nan" "integer" "bool" "complex"
    formula: Msg          # the decoding, with this value's numbers
    hidden: int | None = None   # the implicit significand bit of a finite float, else None
    parts: tuple[BitView, ...] = ()  # complex: (real, imag)

    @property
    def bits(self) -> str:
        """The raw bits, most significant first."""
        return f"{self.raw:0{self.width}b}"

    def bit(self, pos: int) -> int:
        if pos == HIDDEN:
            if self.hidden is None:
                raise ValueError(f"a {self.type_name} {self.category} value has no implicit bit")
            return self.hidden
        return (self.raw >> pos) & 1

    def field_at(self, pos: int) -> BitField | None:
        for f in self.fields:
            if f.lo <= pos <= f.hi:
                return f
        return None

    @property
    def value_text(self) -> str:
        return value_text(self.value)


def _element(et: ElementType | QuantizedElementType | str) -> ElementType:
    if isinstance(et, str):
        et = element_type(et)
    if isinstance(et, QuantizedElementType):
        raise UnsupportedError(f"bit views of quantized element types ({et}) are not supported: "
                               "view the storage type")
    return et


def value_text(v: Any) -> str:
    """The shortest decimal that reads back as ``v`` in its own type (``0.1`` for f32 0.1,
    ``0.1001`` for bf16 0.10009765625); integers and booleans as themselves."""
    a = np.asarray(v)
    if a.dtype == np.bool_:
        return "true" if bool(a) else "false"
    if a.dtype.kind == "c":
        return f"({value_text(a.real)}, {value_text(a.imag)})"
    if not is_float_dtype(a.dtype):  # integers, ml_dtypes' int2 / int4 too
        return str(int(a))
    with np.errstate(invalid="ignore"):  # ml_dtypes warn when a NaN is cast
        f = float(a.astype(np.float64))
    if math.isnan(f):
        return "-nan" if math.copysign(1.0, f) < 0 else "nan"
    if math.isinf(f):
        return "-inf" if f < 0 else "inf"
    if a.dtype in (np.float64, np.float32, np.float16):
        return str(a[()])
    for digits in range(1, 18):
        s = f"{f:.{digits}g}"
        back = round_float64(np.array(float(s)), a.dtype)
        if float(back.astype(np.float64)) == f:
            return s if any(c in s for c in ".en") else s + ".0"  # 1.0, as numpy writes floats
    return repr(f)  # pragma: no cover - 17 digits always read back


def _exact_text(f: float) -> str:
    """A float64 written so that it reads back exactly."""
    if math.isnan(f):
        return "nan"
    return repr(f)


def _float_fields(lay: FloatLayout, offset: int = 0, part: str | None = None) -> tuple[BitField, ...]:
    m, e = lay.mantissa_bits, lay.exponent_bits
    out = []
    if lay.signed:
        out.append(BitField("sign", offset + lay.width - 1, offset + lay.width - 1, part))
    out.append(BitField("exponent", offset + m + e - 1, offset + m, part))
    if m:
        out.append(BitField("mantissa", offset + m - 1, offset, part))
    return tuple(out)


def _float_category(lay: FloatLayout, raw: int) -> str:
    m_bits = lay.mantissa_bits
    s = (raw >> (lay.width - 1)) & 1 if lay.signed else 0
    e = (raw >> m_bits) & lay.exponent_ones
    m = raw & ((1 << m_bits) - 1)
    enc = lay.encoding
    if enc == "ieee" and e == lay.exponent_ones:
        return "inf" if m == 0 else "nan"
    if enc == "fn" and e == lay.exponent_ones and m == (1 << m_bits) - 1:
        return "nan"
    if enc == "fnuz" and s == 1 and e == 0 and m == 0:
        return "nan"
    if enc == "e8m0" and e == lay.exponent_ones:
        return "nan"
    if lay.subnormals and e == 0:
        return "zero" if m == 0 else "subnormal"
    return "normal"


def _float_formula(lay: FloatLayout, raw: int, category: str, value: Any) -> tuple[Msg, int | None]:
    """The decoding formula of ``raw`` and the implicit bit (None for inf / NaN)."""
    m_bits = lay.mantissa_bits
    s = (raw >> (lay.width - 1)) & 1 if lay.signed else 0
    e = (raw >> m_bits) & lay.exponent_ones
    m = raw & ((1 << m_bits) - 1)
    mbits = f"{m:0{m_bits}b}" if m_bits else ""
    sign = "-" if s else ""
    with np.errstate(invalid="ignore"):
        f = float(np.asarray(value).astype(np.float64))
    if category == "nan":
        return Msg(f"bits.formula.nan_{lay.encoding}", type=lay.type_name), None
    if category == "inf":
        return Msg("bits.formula.inf", value=_exact_text(f)), None
    if category == "zero":
        return Msg("bits.formula.zero", s=s, value=value_text(value)), 0
    if not lay.signed:  # f8E8M0FNU: a bare power of two
        return Msg("bits.formula.power", e=e, bias=lay.bias, exp=e - lay.bias, value=_exact_text(f)), 1
    significand = 1 + m / 2.0 ** m_bits if category == "normal" else m / 2.0 ** m_bits
    exp = e - lay.bias if category == "normal" else 1 - lay.bias
    key = "bits.formula.normal" if category == "normal" else "bits.formula.subnormal"
    return Msg(key, s=s, e=e, bias=lay.bias, m=mbits or "0", sign=sign, exp=exp,
               significand=repr(significand), value=_exact_text(f)), int(category == "normal")


def float_view(value: Any, et: ElementType | str) -> BitView:
    """The bit view of float ``value`` of element type ``et``."""
    et = _element(et)
    lay = float_layout(et.name)
    a = np.asarray(value)
    if a.dtype != et.dtype:
        a = a.astype(et.dtype)
    raw = int(to_bits(a.reshape(1))[0])
    category = _float_category(lay, raw)
    formula, hidden = _float_formula(lay, raw, category, a[()])
    return BitView(et.name, lay.width, raw, _float_fields(lay), a[()], category, formula, hidden)


def int_view(value: Any, et: ElementType | str) -> BitView:
    """The bit view of integer (or i1) ``value`` of element type ``et``."""
    et = _element(et)
    a = np.asarray(value)
    if a.dtype != et.dtype:
        a = a.astype(et.dtype)
    if et.is_bool:
        bit = int(bool(a))
        return BitView(et.name, 1, bit, (BitField("bool", 0, 0),), a[()], "bool",
                       Msg("bits.formula.bool", bit=bit, value=value_text(a)))
    n = et.bits
    v = int(a)
    raw = v & ((1 << n) - 1)
    if et.is_signed:
        s = raw >> (n - 1)
        formula = Msg("bits.formula.signed", s=s, top=n - 1, rest=raw & ((1 << (n - 1)) - 1), value=v)
        kind = "twos_complement"
    else:
        formula = Msg("bits.formula.unsigned", bits=f"{raw:0{n}b}", value=v)
        kind = "unsigned"
    return BitView(et.name, n, raw, (BitField(kind, n - 1, 0),), a[()], "integer", formula)


def bit_view(value: Any, et: ElementType | str) -> BitView:
    """The bit view of ``value`` (a scalar of ``et``'s dtype; others are cast) of any
    element type hlolab has: floats, integers of every width, i1, complex."""
    et = _element(et)
    if et.is_float:
        return float_view(value, et)
    if et.is_complex:
        a = np.asarray(value).astype(et.dtype)
        comp = et.component
        re, im = float_view(a.real, comp), float_view(a.imag, comp)
        w = re.width
        lay = float_layout(comp.name)
        fields = _float_fields(lay, w, "imag") + _float_fields(lay, 0, "real")
        return BitView(et.name, 2 * w, re.raw | (im.raw << w), fields, a[()], "complex",
                       Msg("bits.formula.complex", real=re.formula, imag=im.formula), None, (re, im))
    return int_view(value, et)


def view_of_bits(raw: int, et: ElementType | str) -> BitView:
    """The view of the value whose bits are ``raw`` (the low ``bits(et)`` bits)."""
    et = _element(et)
    if et.is_float:
        lay = float_layout(et.name)
        return float_view(from_bits(np.array([raw & ((1 << lay.width) - 1)]), et.dtype)[0], et)
    if et.is_bool:
        return int_view(np.bool_(raw & 1), et)
    if et.is_complex:
        w = et.component.bits
        re = view_of_bits(raw & ((1 << w) - 1), et.component)
        im = view_of_bits(raw >> w, et.component)
        return bit_view(complex(float(re.value), float(im.value)), et)
    n = et.bits
    raw &= (1 << n) - 1
    v = raw - (1 << n) if et.is_signed and raw >> (n - 1) else raw
    return int_view(np.array(v).astype(et.dtype), et)


# --- rounding ------------------------------------------------------------------------------

ROUNDING_MODES = ("nearest_even", "nearest_away", "toward_zero")


@dataclass(frozen=True)
class Rounding:
    """A significand ``sig`` of ``nsig`` bits with its ``cut`` lowest bits dropped.

    ``kept`` / ``guard`` / ``sticky`` are positions in the row that holds the bits
    (``HIDDEN`` for a float's implicit bit); ``guard`` is None when nothing is dropped
    or the guard lies above the significand (an implicit leading 0: the value is
    below half a unit of the last kept place). ``result`` is the rounded significand
    in units of that place: ``(sig >> cut) + round_up``; ``carry`` says it grew a bit
    (a float's exponent goes up by one).
    """

    mode: str
    cut: int
    kept: tuple[int, ...]
    guard: int | None
    sticky: tuple[int, ...]
    kept_bits: str
    dropped_bits: str   # the dropped bits that exist, guard first
    guard_bit: int
    sticky_bit: int     # OR of the bits below the guard
    lsb: int            # the last kept bit (0 when nothing is kept)
    decision: str       # "fits" (nothing dropped), "exact" (only zeros dropped), "below_half",
    #                     "above_half", "tie_even", "tie_odd", "tie_away", "truncate"
    round_up: bool
    carry: bool
    result: int

    @property
    def dropped(self) -> tuple[int, ...]:
        return ((self.guard,) if self.guard is not None else ()) + self.sticky

    def message(self) -> Msg:
        """The decision in words, with its bits."""
        return Msg(f"bits.decision.{self.decision}", kept=self.kept_bits or "0",
                   dropped=self.dropped_bits or "0", guard=self.guard_bit, sticky=self.sticky_bit,
                   lsb=self.lsb, count=len(self.dropped_bits),
                   result=f"{self.result:0{len(self.kept_bits) + self.carry}b}")


def round_significand(sig: int, nsig: int, cut: int, mode: str,
                      positions: Sequence[int] | None = None) -> Rounding:
    """Round ``sig`` (``nsig`` bits; bit k at row position ``positions[k]``, default k)
    by dropping its ``cut`` lowest bits, in ``mode`` (ROUNDING_MODES)."""
    if mode not in ROUNDING_MODES:
        raise ValueError(f"unknown rounding mode {mode!r}")
    pos = list(positions) if positions is not None else list(range(nsig))
    if cut <= 0:
        kept = tuple(pos[k] for k in reversed(range(nsig)))
        return Rounding(mode, 0, kept, None, (), f"{sig:0{nsig}b}" if nsig else "", "", 0, 0,
                        sig & 1, "fits", False, False, sig << -cut)
    kept_value = sig >> cut
    dropped = sig & ((1 << cut) - 1)
    g = cut - 1
    guard_bit = (sig >> g) & 1 if g < nsig else 0
    sticky_bit = int(sig & ((1 << min(g, nsig)) - 1) != 0) if g > 0 else 0
    lsb = kept_value & 1
    kept_pos = tuple(pos[k] for k in reversed(range(cut, nsig)))
    guard = pos[g] if g < nsig else None
    sticky = tuple(pos[k] for k in reversed(range(min(g, nsig))))
    present = min(cut, nsig)
    dropped_bits = f"{dropped & ((1 << present) - 1):0{present}b}" if present else ""
    kept_bits = f"{kept_value:0{nsig - cut}b}" if cut < nsig else ""
    if dropped == 0:
        decision, up = "exact", False
    elif mode == "toward_zero":
        decision, up = "truncate", False
    elif not guard_bit:
        decision, up = "below_half", False
    elif sticky_bit:
        decision, up = "above_half", True
    elif mode == "nearest_away":
        decision, up = "tie_away", True
    elif lsb:
        decision, up = "tie_odd", True
    else:
        decision, up = "tie_even", False
    result = kept_value + int(up)
    carry = up and result.bit_length() > max(nsig - cut, 0)
    return Rounding(mode, cut, kept_pos, guard, sticky, kept_bits, dropped_bits, guard_bit, sticky_bit,
                    lsb, decision, up, carry, result)


def _significand(view: BitView) -> tuple[int, int, int]:
    """(sig, nsig, q0): a finite float view's value is ``± sig · 2^q0``; bit k of ``sig``
    is mantissa bit k, bit ``nsig - 1`` the implicit one."""
    lay = float_layout(view.type_name)
    m_bits = lay.mantissa_bits
    e = (view.raw >> m_bits) & lay.exponent_ones
    m = view.raw & ((1 << m_bits) - 1)
    hidden = view.hidden or 0
    exp = e - lay.bias if hidden or not lay.subnormals else 1 - lay.bias
    return (hidden << m_bits) | m, m_bits + 1, exp - m_bits


def _scaled(m: int, e: int) -> float:
    """m · 2^e as a float64: exact below the float64 range, inf above it."""
    return math.inf if m and m.bit_length() + e > 1024 else math.ldexp(float(m), e)


def _float_positions(m_bits: int) -> list[int]:
    return list(range(m_bits)) + [HIDDEN]


def _sign(view: BitView) -> int:
    lay = float_layout(view.type_name)
    return (view.raw >> (lay.width - 1)) & 1 if lay.signed else 0


# --- panels --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Piece:
    """Piece ``index`` of a wide element in a bitcast: its bits ``lo`` .. ``hi``."""

    index: int
    lo: int
    hi: int


@dataclass
class BitRow:
    """One view as a panel shows it: a label (a spec symbol such as ``operand[0, 1]``),
    marks on bits (position -> MARK_KINDS entry), and for bitcast the pieces of a wide
    element or which piece a narrow one is."""

    label: Text
    view: BitView
    marks: dict[int, str] = field(default_factory=dict)
    pieces: tuple[Piece, ...] = ()
    piece: int | None = None
    chosen: bool = False   # the explained element (or its piece)

    @property
    def shows_implicit(self) -> bool:
        """Whether the row shows its float's implicit bit: not in a bitcast, which regroups
        the stored bits only."""
        return self.view.hidden is not None and not self.pieces and self.piece is None


@dataclass
class BitChange:
    """One step from row ``source`` to row ``target`` (see the module doc).

    ``kind``: "widen", "round", "reduce", "truncate", "wrap", "extend", "reinterpret",
    "bool", "shift", "popcnt", "clz", "bitcast", "magnitude". ``predicted`` is the value
    the record computes for the target row (None when the step predicts nothing).
    """

    kind: str
    source: int
    target: int
    messages: list[Msg] = field(default_factory=list)
    rounding: Rounding | None = None
    outcome: str | None = None
    predicted: Any = None
    amount: int | None = None
    count: int | None = None


@dataclass
class BitPanel:
    """The bit picture of one explained element: rows top to bottom, the changes between
    them (their messages go between their source and target rows), notes."""

    title: Msg
    rows: list[BitRow]
    changes: list[BitChange] = field(default_factory=list)
    notes: list[Msg] = field(default_factory=list)

    def disagreements(self) -> list[BitChange]:
        """The changes whose prediction is not the target row's value."""
        return [c for c in self.changes if c.predicted is not None
                and not same_value(c.predicted, self.rows[c.target].view)]

    @property
    def agrees(self) -> bool:
        return not self.disagreements()

    def changes_into(self, row: int) -> list[BitChange]:
        return [c for c in self.changes if c.target == row]

    def _check(self) -> BitPanel:
        """Add a note for every change whose record does not predict the op's value."""
        for c in self.disagreements():
            t = self.rows[c.target].view
            self.notes.append(Msg("bits.note.disagrees", row=self.rows[c.target].label,
                                  predicted=value_text(c.predicted), actual=t.value_text))
        return self


def same_value(predicted: Any, view: BitView) -> bool:
    """``predicted`` has ``view``'s bits; any NaN matches any NaN (payloads are not
    specified)."""
    p = bit_view(predicted, view.type_name)
    if p.category == "nan" or view.category == "nan":
        return p.category == view.category
    return p.raw == view.raw


def _changed_marks(before: BitView, after: BitView) -> dict[int, str]:
    diff = before.raw ^ after.raw
    return {p: "changed" for p in range(after.width) if (diff >> p) & 1}


def _rounding_marks(r: Rounding) -> dict[int, str]:
    marks = {p: "kept" for p in r.kept}
    if r.mode == "toward_zero":
        marks.update({p: "dropped" for p in r.dropped})
        return marks
    if r.guard is not None:
        marks[r.guard] = "guard"
    marks.update({p: "sticky" for p in r.sticky})
    return marks


def _typed(v: float | int, et: ElementType) -> Any:
    """``v`` (exactly representable, or special) as a scalar of ``et``."""
    if et.is_float:
        return round_float64(np.array(float(v)), et.dtype)[()]
    return np.array(v).astype(et.dtype)[()]


# --- float -> float ------------------------------------------------------------------------

def _past_range(lay: FloatLayout, dst: ElementType, negative: bool) -> tuple[str, Any]:
    """(outcome, value) past the largest finite value: ±inf, NaN or ±max (convert's rules)."""
    if lay.has_inf:
        return "overflow_inf", _typed(-math.inf if negative else math.inf, dst)
    if lay.has_nan:
        return "overflow_nan", nan_value(dst.dtype)[()]
    return "saturate", _typed(-lay.max_finite if negative else lay.max_finite, dst)


def float_rounding(src: BitView, dst: ElementType, mode: str = "nearest_even",
                   cast: bool = False) -> BitChange:
    """The change rounding float ``src`` to float type ``dst`` (round to nearest even,
    once, from the exact value), with hlolab's convert rules past the range: overflow
    gives inf (types with infinities), NaN (NaN-only types) or the largest value
    (finite-only types); NaN gives NaN, or -0 in a type without NaN; FNUZ types have no
    -0; f8E8M0FNU has no sign and no zero (zero and negative values give NaN, values
    below its range its smallest value). ``cast``: the rounding is ml_dtypes' cast (how
    element-wise ops round their f32 values), which differs in one place: a NaN into a
    type without NaN gives -0 for a positive NaN and +0 for a negative one. Source and
    target rows are filled in by the caller."""
    lay = float_layout(dst.name)
    s = _sign(src)
    msgs: list[Msg] = []
    rounding = None
    if src.category == "nan":
        outcome = "nan" if lay.has_nan else "nan_to_zero_cast" if cast else "nan_to_zero"
        predicted = nan_value(dst.dtype)[()] if lay.has_nan else _typed(0.0 if cast and s else -0.0, dst)
    elif src.category == "inf":
        outcome, predicted = _past_range(lay, dst, bool(s))
        outcome = {"overflow_inf": "inf", "overflow_nan": "inf_nan"}.get(outcome, outcome)
    elif not lay.signed and (s or src.category == "zero"):
        outcome = "unsigned_nan" if s else "zero_nan"
        predicted = nan_value(dst.dtype)[()]
    elif src.category == "zero":
        outcome = "zero" if (lay.has_neg_zero or not s) else "no_negative_zero"
        predicted = _typed(-0.0 if s and lay.has_neg_zero else 0.0, dst)
    else:
        sig, nsig, q0 = _significand(src)
        top = q0 + sig.bit_length() - 1
        qt = max(top, lay.min_exp) - lay.mantissa_bits
        src_lay = float_layout(src.type_name)
        rounding = round_significand(sig, nsig, qt - q0, mode, _float_positions(src_lay.mantissa_bits))
        magnitude = _scaled(rounding.result, qt)
        msgs.append(rounding.message())
        if magnitude > lay.max_finite:
            outcome, predicted = _past_range(lay, dst, bool(s))
        elif magnitude == 0:
            if not lay.has_zero:
                outcome, predicted = "underflow_min", _typed(lay.smallest_normal, dst)
            else:
                outcome = "underflow_zero"
                predicted = _typed(-0.0 if s and lay.has_neg_zero else 0.0, dst)
        else:
            outcome = "subnormal" if magnitude < lay.smallest_normal else "in_range"
            predicted = _typed(-magnitude if s else magnitude, dst)
        exp = top if rounding.result == 0 else qt + rounding.result.bit_length() - 1
        msgs.append(Msg(f"bits.outcome.{outcome}", exp=exp, min_exp=lay.min_exp,
                        max_exp=math.frexp(lay.max_finite)[1] - 1, type=dst.name,
                        value=value_text(predicted)))
        return BitChange("round", -1, -1, msgs, rounding, outcome, predicted)
    msgs.append(Msg(f"bits.outcome.{outcome}", exp=0, min_exp=lay.min_exp,
                    max_exp=math.frexp(lay.max_finite)[1] - 1, type=dst.name, value=value_text(predicted)))
    return BitChange("round", -1, -1, msgs, rounding, outcome, predicted)


def _output_marks(change: BitChange, out: BitView) -> dict[int, str]:
    """Output bits a round-up changed: a bit of the rounded significand that differs
    from the kept bit it continues (in range, same scale only)."""
    r = change.rounding
    if change.kind != "round" or r is None or not r.round_up:
        return {}
    if change.outcome not in ("in_range", "subnormal"):
        return {}
    lay = float_layout(out.type_name)
    sig, _, _ = _significand(out)
    kept = r.result - 1
    marks = {}
    for k in range(lay.mantissa_bits + 1):
        if ((sig >> k) & 1) != ((kept >> k) & 1):
            marks[k if k < lay.mantissa_bits else HIDDEN] = "changed"
    return marks


def _add_step(panel: BitPanel, change: BitChange, source: int, target: int,
              mark_source: bool = True) -> BitChange:
    change.source, change.target = source, target
    if change.rounding is not None and mark_source:
        panel.rows[source].marks.update(_rounding_marks(change.rounding))
    panel.rows[target].marks.update(_output_marks(change, panel.rows[target].view))
    panel.changes.append(change)
    return change


# --- reduce_precision ----------------------------------------------------------------------

def _ieee_parts(view: BitView) -> tuple[int, int, int, FloatLayout]:
    lay = float_layout(view.type_name)
    m_bits = lay.mantissa_bits
    return view.raw >> (lay.width - 1), (view.raw >> m_bits) & lay.exponent_ones, \
        view.raw & ((1 << m_bits) - 1), lay


def reduce_bits_change(src: BitView, exponent_bits: int, mantissa_bits: int) -> BitChange:
    """reduce_precision of an IEEE-layout value (f16, bf16, f32, f64) on its bits, as the
    spec says and hlolab computes: the mantissa rounded to ``mantissa_bits`` to nearest
    even (a carry runs into the exponent), then an exponent above the reduced range
    gives ±inf and one at or below the reduced minimum normal exponent gives ±0 (the
    reduced format has no subnormals). A NaN stays itself (with ``mantissa_bits = 0``
    it becomes ±inf: no mantissa bit is left to make a NaN)."""
    s, e, m, lay = _ieee_parts(src)
    et = element_type(src.type_name)
    m_bits, e_bits = lay.mantissa_bits, lay.exponent_bits
    fmt = Msg("bits.format", exponent_bits=exponent_bits, mantissa_bits=mantissa_bits)
    if src.category == "nan":
        if mantissa_bits == 0:
            inf = ((s << (lay.width - 1)) | (lay.exponent_ones << m_bits))
            return BitChange("reduce", -1, -1, [Msg("bits.reduce.nan_inf", format=fmt)], None, "nan_inf",
                             view_of_bits(inf, et).value)
        return BitChange("reduce", -1, -1, [Msg("bits.reduce.nan", format=fmt)], None, "nan", src.value)
    msgs: list[Msg] = []
    rounding = None
    raw = src.raw
    if mantissa_bits < m_bits:
        cut = m_bits - mantissa_bits
        if mantissa_bits:
            rounding = round_significand(m, m_bits, cut, "nearest_even")
            base = (s << (lay.width - 1)) | (e << m_bits)
        else:  # no mantissa bit is kept: the last kept bit, which decides a tie, is the exponent's lowest
            rounding = round_significand(src.raw & ((1 << (lay.width - 1)) - 1), lay.width - 1, cut,
                                         "nearest_even")
            base = s << (lay.width - 1)
            msgs.append(Msg("bits.reduce.no_mantissa", lsb=rounding.lsb))
        msgs.append(rounding.message())
        # the rounded bits back in place; a carry out of the mantissa adds one to the exponent
        raw = base + (rounding.result << cut)
        e_new = (raw >> m_bits) & lay.exponent_ones
        if e_new != e:
            msgs.append(Msg("bits.reduce.carry", exponent=e, next=e_new))
    outcome = "in_range"
    if exponent_bits < e_bits:
        e2 = (raw >> m_bits) & lay.exponent_ones
        src_bias, red_bias = lay.bias, (1 << (exponent_bits - 1)) - 1
        hi, lo = src_bias + red_bias, src_bias - red_bias
        if e2 > hi:
            outcome = "overflow_inf"
            raw = (s << (lay.width - 1)) | (lay.exponent_ones << m_bits)
        elif e2 <= lo:
            outcome = "underflow_zero"
            raw = s << (lay.width - 1)
        msgs.append(Msg(f"bits.reduce.{outcome}", exp=e2 - src_bias, max_exp=red_bias, min_exp=1 - red_bias,
                        format=fmt))
    else:
        msgs.append(Msg("bits.reduce.wide_exponent", format=fmt, type=src.type_name))
    return BitChange("reduce", -1, -1, msgs, rounding, outcome, view_of_bits(raw, et).value)


def reduce_precision_panel(x: Any, y: Any, et: ElementType | str, exponent_bits: int,
                           mantissa_bits: int, names: tuple[str, str] = ("operand", "output"),
                           via: tuple[Any, Any] | None = None) -> BitPanel:
    """reduce_precision of element ``x`` (of ``et``) giving ``y``. ``via`` = (x, y) in f16
    when the op computes in f16 (f8 and smaller types, as XLA:CPU does): the panel then
    shows the widening, the reduction in f16 and the rounding back."""
    et = _element(et)
    title = Msg("bits.title.reduce_precision", format=Msg("bits.format", exponent_bits=exponent_bits,
                                                               mantissa_bits=mantissa_bits))
    vx, vy = bit_view(x, et), bit_view(y, et)
    if via is None:
        panel = BitPanel(title, [BitRow(names[0], vx), BitRow(names[1], vy, chosen=True)])
        change = reduce_bits_change(vx, exponent_bits, mantissa_bits)
        if et.name == "bf16" and vx.category == "nan" and mantissa_bits > 0 \
                and not (exponent_bits >= 8 and mantissa_bits >= 23):
            change.messages.append(Msg("bits.reduce.bf16_nan"))
            change.predicted = nan_value(et.dtype, negative=bool(_sign(vx)))[()]
        _add_step(panel, change, 0, 1)
        panel.rows[1].marks.update(_changed_marks(vx, vy))
        return panel._check()
    f16 = element_type("f16")
    wx, wy = bit_view(via[0], f16), bit_view(via[1], f16)
    panel = BitPanel(title, [BitRow(names[0], vx), BitRow(f"f16({names[0]})", wx),
                             BitRow(f"f16({names[1]})", wy), BitRow(names[1], vy, chosen=True)],
                     notes=[Msg("bits.note.via_f16", type=et.name)])
    widen = float_rounding(vx, f16)  # exact: f16 holds every value of these types
    widen.kind, widen.rounding = "widen", None
    widen.messages = [Msg("bits.widen", type="f16")]
    _add_step(panel, widen, 0, 1, mark_source=False)
    _add_step(panel, reduce_bits_change(wx, exponent_bits, mantissa_bits), 1, 2)
    panel.rows[2].marks.update(_changed_marks(wx, wy))
    _add_step(panel, float_rounding(wy, et, cast=True), 2, 3)
    return panel._check()


# --- convert -------------------------------------------------------------------------------

def _int_magnitude_change(src: BitView, dst: ElementType) -> tuple[BitView, BitChange]:
    """An integer's magnitude rounded to float ``dst``: the magnitude row and the change."""
    v = int(src.value)
    mag = abs(v)
    n = src.width
    mag_view = int_view(np.array(mag).astype(np.uint64), element_type("ui64"))
    mag_view = BitView(f"ui{n}", n, mag, (BitField("unsigned", n - 1, 0),), mag_view.value, "integer",
                       Msg("bits.formula.unsigned", bits=f"{mag:0{n}b}", value=mag))
    lay = float_layout(dst.name)
    nsig = max(mag.bit_length(), 1)
    qt = max(nsig - 1, lay.min_exp) - lay.mantissa_bits
    rounding = round_significand(mag, nsig, qt, "nearest_even")
    magnitude = _scaled(rounding.result, qt)
    msgs = [rounding.message()]
    if magnitude > lay.max_finite:
        outcome, predicted = _past_range(lay, dst, v < 0)
    elif not lay.signed and v <= 0:
        outcome, predicted = ("unsigned_nan" if v else "zero_nan"), nan_value(dst.dtype)[()]
    else:
        outcome = "zero" if v == 0 else "in_range"
        predicted = _typed(-magnitude if v < 0 else magnitude, dst)
    msgs.append(Msg(f"bits.outcome.{outcome}", exp=nsig - 1, min_exp=lay.min_exp,
                    max_exp=math.frexp(lay.max_finite)[1] - 1, type=dst.name, value=value_text(predicted)))
    return mag_view, BitChange("round", -1, -1, msgs, rounding, outcome, predicted)


def _float_to_int_change(src: BitView, dst: ElementType) -> BitChange:
    """Truncation toward zero, then hlolab's (XLA:CPU's) rules: NaN gives 0, values past the
    range saturate to the type's minimum / maximum."""
    lo, hi = dst.min_value(), dst.max_value()
    if src.category == "nan":
        return BitChange("truncate", -1, -1, [Msg("bits.outcome.nan_int", type=dst.name)], None, "nan_int",
                         _typed(0, dst))
    s = _sign(src)
    if src.category == "inf":
        v = lo if s else hi
        return BitChange("truncate", -1, -1, [Msg("bits.outcome.saturate_int", type=dst.name, value=v)], None,
                         "saturate_int", _typed(v, dst))
    msgs: list[Msg] = []
    rounding = None
    whole = 0
    if src.category != "zero":
        sig, nsig, q0 = _significand(src)
        lay = float_layout(src.type_name)
        rounding = round_significand(sig, nsig, -q0, "toward_zero", _float_positions(lay.mantissa_bits))
        whole = rounding.result
        msgs.append(rounding.message())
    v = -whole if s else whole
    if v > hi or v < lo:
        outcome, v = "saturate_int", (hi if v > hi else lo)
    else:
        outcome = "in_range_int"
    msgs.append(Msg(f"bits.outcome.{outcome}", type=dst.name, value=v))
    return BitChange("truncate", -1, -1, msgs, rounding, outcome, _typed(v, dst))


def _int_to_int_change(src: BitView, src_et: ElementType, dst: ElementType) -> tuple[BitChange, dict, dict]:
    """Wrap (narrower: the high bits go), extend (wider: copies of the sign bit for a
    signed source, zeros for an unsigned one) or reinterpret (same width)."""
    n, n2 = src_et.bits, dst.bits
    raw = src.raw
    if n2 < n:
        out = raw & ((1 << n2) - 1)
        change = BitChange("wrap", -1, -1, [Msg("bits.int.wrap", count=n - n2, bits=n2)], outcome="wrap")
        in_marks = {p: "dropped" for p in range(n2, n)} | {p: "kept" for p in range(n2)}
        out_marks: dict[int, str] = {}
    elif n2 > n:
        top = raw >> (n - 1)
        fill = top if src_et.is_signed else 0
        out = raw | (((1 << (n2 - n)) - 1) << n if fill else 0)
        key = "bits.int.sign_extend" if src_et.is_signed else "bits.int.zero_extend"
        change = BitChange("extend", -1, -1, [Msg(key, count=n2 - n, bit=fill)], outcome="extend")
        in_marks, out_marks = {}, {p: "extended" for p in range(n, n2)}
    else:
        out = raw
        change = BitChange("reinterpret", -1, -1, [Msg("bits.int.same_bits", type=dst.name)], outcome="same")
        in_marks, out_marks = {}, {}
    change.predicted = view_of_bits(out, dst).value
    return change, in_marks, out_marks


def convert_panel(x: Any, y: Any, src: ElementType | str, dst: ElementType | str,
                  names: tuple[str, str] = ("operand", "result"),
                  via: Sequence[tuple[ElementType, Any]] = ()) -> BitPanel:
    """convert of element ``x`` (type ``src``) giving ``y`` (type ``dst``). ``via`` lists
    the intermediate (type, value) steps the op takes (XLA:CPU goes through f32 for
    f64 -> f16 / bf16 / f8E8M0FNU and for integers -> floats narrower than f32)."""
    src, dst = _element(src), _element(dst)
    title = Msg("bits.title.convert", src=src.name, dst=dst.name)
    if src.is_complex or dst.is_complex:
        return _complex_convert_panel(x, y, src, dst, names, title, via)
    vx, vy = bit_view(x, src), bit_view(y, dst)
    panel = BitPanel(title, [BitRow(names[0], vx)])
    if src.is_bool or dst.is_bool:
        panel.rows.append(BitRow(names[1], vy, chosen=True))
        if dst.is_bool:
            msg = Msg("bits.bool.to_bool", value=vx.value_text, result=vy.value_text)
            nonzero = bool(np.asarray(x).astype(np.float64) != 0) if src.is_float else vx.raw != 0
            pred = np.bool_(nonzero)  # NaN != 0 too
        else:
            msg = Msg("bits.bool.from_bool", value=vx.value_text, result=vy.value_text)
            pred = (float_rounding(float_view(np.float32(vx.raw), "f32"), dst).predicted if dst.is_float
                    else _typed(int(vx.raw), dst))  # 0 and 1 as floats: f8E8M0FNU has no 0
        panel.changes.append(BitChange("bool", 0, 1, [msg], predicted=pred))
        return panel._check()
    if src.is_int and dst.is_int:
        panel.rows.append(BitRow(names[1], vy, chosen=True))
        change, in_marks, out_marks = _int_to_int_change(vx, src, dst)
        panel.rows[0].marks.update(in_marks)
        panel.rows[1].marks.update(out_marks)
        _add_step(panel, change, 0, 1)
        return panel._check()
    if src.is_float and dst.is_int:
        panel.rows.append(BitRow(names[1], vy, chosen=True))
        _add_step(panel, _float_to_int_change(vx, dst), 0, 1)
        return panel._check()
    # -> float: from an integer (its magnitude) or a float, through the op's steps
    cur = 0
    if src.is_int:
        stages = list(via) + [(dst, y)]
        first_t, first_v = stages[0]
        mag_view, change = _int_magnitude_change(vx, first_t)
        if int(vx.value) < 0:
            panel.rows.append(BitRow(f"|{names[0]}|", mag_view))
            panel.changes.append(BitChange("magnitude", 0, 1,
                                           [Msg("bits.int.magnitude", value=int(vx.value))]))
            cur = 1
        label = names[1] if len(stages) == 1 else f"{first_t.name}({names[0]})"
        panel.rows.append(BitRow(label, bit_view(first_v, first_t), chosen=len(stages) == 1))
        _add_step(panel, change, cur, len(panel.rows) - 1)
        cur = len(panel.rows) - 1
        stages = stages[1:]
    else:
        stages = list(via) + [(dst, y)]
    for k, (t, v) in enumerate(stages):
        last = k == len(stages) - 1
        label = names[1] if last else f"{t.name}({names[0]})"
        panel.rows.append(BitRow(label, bit_view(v, t), chosen=last))
        _add_step(panel, float_rounding(panel.rows[cur].view, t), cur, len(panel.rows) - 1)
        cur = len(panel.rows) - 1
    if via:
        panel.notes.append(Msg("bits.note.via", type=via[0][0].name))
    return panel._check()


def _complex_convert_panel(x: Any, y: Any, src: ElementType, dst: ElementType, names: tuple[str, str],
                           title: Msg, via: Sequence[tuple[ElementType, Any]] = ()) -> BitPanel:
    """Part by part: real to real, imaginary to imaginary; a real destination ignores the
    imaginary part, a real source gives a zero imaginary part. ``via``: the real part's
    intermediate steps."""
    xa, ya = np.asarray(x), np.asarray(y)
    s_part = src.component if src.is_complex else src
    d_part = dst.component if dst.is_complex else dst
    parts = [("real", xa.real if src.is_complex else xa, ya.real if dst.is_complex else ya)]
    if src.is_complex and dst.is_complex:
        parts.append(("imag", xa.imag, ya.imag))
    panel = BitPanel(title, [])
    for part, px, py in parts:
        sub = convert_panel(px.astype(s_part.dtype), py.astype(d_part.dtype), s_part, d_part,
                            (f"{part}({names[0]})", f"{part}({names[1]})"), via if part == "real" else ())
        base = len(panel.rows)
        panel.rows += sub.rows
        for c in sub.changes:
            c.source += base
            c.target += base
            panel.changes.append(c)
        panel.notes += [n for n in sub.notes if n.key != "bits.note.disagrees"]
    if src.is_complex and not dst.is_complex:
        panel.notes.append(Msg("bits.note.imag_ignored"))
    elif dst.is_complex and not src.is_complex:
        panel.notes.append(Msg("bits.note.imag_zero"))
    return panel._check()


# --- round_nearest_even / round_nearest_afz ------------------------------------------------

def round_integral_panel(x: Any, y: Any, et: ElementType | str, mode: str,
                         names: tuple[str, str] = ("operand", "result")) -> BitPanel:
    """Rounding to an integral value: the bits worth less than 1 go; the guard bit is
    the one worth 1/2. ``mode`` "nearest_even" (ties to even) or "nearest_away"."""
    et = _element(et)
    vx, vy = bit_view(x, et), bit_view(y, et)
    panel = BitPanel(Msg(f"bits.title.{mode}"), [BitRow(names[0], vx), BitRow(names[1], vy, chosen=True)])
    if vx.category in ("nan", "inf", "zero"):
        change = BitChange("round", 0, 1, [Msg("bits.round.special", value=vx.value_text)],
                           predicted=vx.value)
    else:
        sig, nsig, q0 = _significand(vx)
        lay = float_layout(et.name)
        rounding = round_significand(sig, nsig, -q0, mode, _float_positions(lay.mantissa_bits))
        whole = float(rounding.result)  # in units of 2^0: the integral value
        if _sign(vx):
            whole = -whole
        msgs = [rounding.message()]
        if lay.width < 32:  # computed in f32 and rounded back: exact, except 0 in a type without one
            back = float_rounding(float_view(np.float32(whole), "f32"), et)
            predicted, outcome = back.predicted, back.outcome
            if outcome not in ("in_range", "zero", "subnormal"):
                msgs.append(back.messages[-1])
        else:
            predicted, outcome = _typed(whole, et), "in_range"
        msgs.append(Msg("bits.round.integral", value=value_text(predicted)))
        change = BitChange("round", 0, 1, msgs, rounding, outcome, predicted)
        panel.rows[0].marks.update(_rounding_marks(rounding))
    panel.changes.append(change)
    panel.rows[1].marks.update(_changed_marks(vx, vy))
    return panel._check()


# --- element-wise arithmetic in a narrow float ------------------------------------------------

def narrow_float_panel(exact: Any, y: Any, dst: ElementType | str, label: str = "result") -> BitPanel:
    """A result computed in f32 (``exact``) and rounded once to narrow float ``dst``
    (bf16, f16, f8, f6, f4), as hlolab and XLA:CPU compute those types."""
    dst = _element(dst)
    f32 = element_type("f32")
    vx, vy = bit_view(exact, f32), bit_view(y, dst)
    panel = BitPanel(Msg("bits.title.narrow", type=dst.name),
                     [BitRow(f"f32({label})", vx), BitRow(label, vy, chosen=True)],
                     notes=[Msg("bits.note.computed_in_f32", type=dst.name)])
    _add_step(panel, float_rounding(vx, dst, cast=True), 0, 1)
    return panel._check()


# --- shifts, popcnt, count_leading_zeros -----------------------------------------------------

def shift_panel(lhs: Any, rhs: Any, y: Any, et: ElementType | str, kind: str,
                names: tuple[str, str, str] = ("lhs", "rhs", "result")) -> BitPanel:
    """shift_left / shift_right_logical / shift_right_arithmetic (``kind``: "left",
    "right_logical", "right_arithmetic") of one element: the amount is read as
    unsigned; an amount of at least the bit width shifts every bit out (0, or copies
    of the sign bit for the arithmetic shift)."""
    et = _element(et)
    vl, vr, vy = bit_view(lhs, et), bit_view(rhs, et), bit_view(y, et)
    n = et.bits
    amount = vr.raw  # read as unsigned
    in_range = amount < n
    s = min(amount, n)
    fill = (vl.raw >> (n - 1)) if kind == "right_arithmetic" else 0
    mask = (1 << n) - 1
    if kind == "left":
        out_pos, in_pos = range(n - s, n), range(0, s)
        raw = (vl.raw << s) & mask
    else:
        out_pos, in_pos = range(0, s), range(n - s, n)
        raw = vl.raw >> s
        if fill:
            raw |= mask & ~(mask >> s)  # the top s bits: copies of the sign bit
    come_in = "fill" if fill else "shifted_in"
    panel = BitPanel(Msg(f"bits.title.shift_{kind}"),
                     [BitRow(names[0], vl, {p: "shifted_out" for p in out_pos}), BitRow(names[1], vr),
                      BitRow(names[2], vy, {p: come_in for p in in_pos}, chosen=True)])
    msgs = [Msg(f"bits.shift.{kind}", amount=amount, count=s, fill=fill)]
    if not in_range:
        msgs.append(Msg("bits.shift.out_of_range", amount=amount, bits=n))
    panel.changes.append(BitChange("shift", 0, 2, msgs, amount=amount, predicted=view_of_bits(raw, et).value))
    return panel._check()


def popcnt_panel(x: Any, y: Any, et: ElementType | str,
                 names: tuple[str, str] = ("operand", "result")) -> BitPanel:
    """popcnt of one element: its set bits, counted (wrapped to the type: i2 has 2 -> -2)."""
    et = _element(et)
    vx, vy = bit_view(x, et), bit_view(y, et)
    ones = [p for p in range(vx.width) if (vx.raw >> p) & 1]
    panel = BitPanel(Msg("bits.title.popcnt"), [BitRow(names[0], vx, {p: "set" for p in ones}),
                                                BitRow(names[1], vy, chosen=True)])
    msgs = [Msg("bits.count.popcnt", count=len(ones))]
    predicted = view_of_bits(len(ones), et).value
    if int(predicted) != len(ones):
        msgs.append(Msg("bits.count.wraps", count=len(ones), type=et.name, value=int(predicted)))
    panel.changes.append(BitChange("popcnt", 0, 1, msgs, count=len(ones), predicted=predicted))
    return panel._check()


def clz_panel(x: Any, y: Any, et: ElementType | str,
              names: tuple[str, str] = ("operand", "result")) -> BitPanel:
    """count_leading_zeros of one element: the run of zeros above the highest set bit."""
    et = _element(et)
    vx, vy = bit_view(x, et), bit_view(y, et)
    n = vx.width
    run = n - vx.raw.bit_length()
    marks = {p: "leading_zero" for p in range(n - run, n)}
    if run < n:
        marks[n - run - 1] = "first_one"
    panel = BitPanel(Msg("bits.title.clz"), [BitRow(names[0], vx, marks), BitRow(names[1], vy, chosen=True)])
    predicted = view_of_bits(run, et).value
    msgs = [Msg("bits.count.clz", count=run, bits=n)]
    if int(predicted) != run:
        msgs.append(Msg("bits.count.wraps", count=run, type=et.name, value=int(predicted)))
    panel.changes.append(BitChange("clz", 0, 1, msgs, count=run, predicted=predicted))
    return panel._check()


# --- bitcast_convert -------------------------------------------------------------------------

MAX_PIECES = 8  # narrow rows a bitcast panel lists before showing only the chosen one


def bitcast_panel(operand: Sequence[Any], result: Sequence[Any], src: ElementType | str,
                  dst: ElementType | str, names: tuple[Sequence[str], Sequence[str]],
                  chosen: int | None = None) -> BitPanel:
    """bitcast_convert of one element: ``operand`` and ``result`` list the elements
    involved (one wide element and its narrow pieces, or one each for equal widths),
    ``names`` their labels. Piece k of a wide element is its bits [k·w, (k+1)·w) (w the
    narrow width): the spec's little-endian order, element 0 the least significant
    bits. ``chosen`` is the piece the explained result element is (a split)."""
    src, dst = _element(src), _element(dst)
    title = Msg("bits.title.bitcast", src=src.name, dst=dst.name)
    vin = [bit_view(v, src) for v in operand]
    vout = [bit_view(v, dst) for v in result]
    b, b2 = src.bits, dst.bits
    if b == b2:
        panel = BitPanel(title, [BitRow(names[0][0], vin[0]), BitRow(names[1][0], vout[0], chosen=True)])
        panel.changes.append(BitChange("bitcast", 0, 1, [Msg("bits.bitcast.same", bits=b, type=dst.name)],
                                       predicted=view_of_bits(vin[0].raw, dst).value))
        return panel._check()
    w, n = min(b, b2), max(b, b2) // min(b, b2)
    pieces = tuple(Piece(k, k * w, (k + 1) * w - 1) for k in range(n))
    shown = [k for k in range(n) if n <= MAX_PIECES or k == chosen or (chosen is None and k in (0, n - 1))]
    if b2 < b:  # split: one operand element, n result pieces
        panel = BitPanel(title, [BitRow(names[0][0], vin[0], pieces=pieces)])
        for k in shown:
            panel.rows.append(BitRow(names[1][k], vout[k], piece=k, chosen=chosen in (None, k)))
            piece = (vin[0].raw >> (k * w)) & ((1 << w) - 1)
            panel.changes.append(BitChange("bitcast", 0, len(panel.rows) - 1,
                                           [Msg("bits.bitcast.split", k=k, lo=k * w, hi=(k + 1) * w - 1)],
                                           predicted=view_of_bits(piece, dst).value))
    else:  # join: n operand pieces, one result element
        panel = BitPanel(title, [BitRow(names[0][k], vin[k], piece=k) for k in shown])
        joined = 0
        for k in range(n):
            joined |= vin[k].raw << (k * w)
        panel.rows.append(BitRow(names[1][0], vout[0], pieces=pieces, chosen=True))
        panel.changes.append(BitChange("bitcast", 0, len(panel.rows) - 1,
                                       [Msg("bits.bitcast.join", count=n, bits=w)],
                                       predicted=view_of_bits(joined, dst).value))
    if len(shown) < n:
        panel.notes.append(Msg("bits.note.pieces_elided", count=n - len(shown)))
    return panel._check()


# --- text ------------------------------------------------------------------------------------

def field_runs(view: BitView) -> list[tuple[BitField, str]]:
    """The fields of ``view`` most significant first, each with its bits."""
    return [(f, f.bits(view.raw)) for f in sorted(view.fields, key=lambda f: -f.hi)]


def row_text(row: BitRow, lang: str | None = None) -> str:
    """``label  type  fields  = value`` on one line (fields separated by spaces)."""
    v = row.view
    parts = []
    for f, bits in field_runs(v):
        if f.kind == "mantissa" and f.part is None and row.shows_implicit:
            bits = f"({v.hidden}){bits}"
        parts.append(bits)
    return f"{text(row.label, lang)}: {v.type_name} {' '.join(parts)} = {v.value_text}"


def position_text(positions: Sequence[int]) -> str:
    """Bit positions, highest first, runs written ``19..0``; ``h`` is the implicit bit."""
    hidden = HIDDEN in positions
    ps = sorted((p for p in positions if p != HIDDEN), reverse=True)
    runs: list[list[int]] = []
    for p in ps:
        if runs and runs[-1][-1] == p + 1:
            runs[-1].append(p)
        else:
            runs.append([p])
    parts = ["h"] if hidden else []
    parts += [f"{r[0]}..{r[-1]}" if len(r) > 2 else ", ".join(map(str, r)) for r in runs]
    return ", ".join(parts)


def format_bits(panel: BitPanel, lang: str | None = None) -> str:
    """The panel as plain text: each row (label, type, fields, value), its decoding
    formula, the marks, and each change's messages before its target row."""
    lines = [text(panel.title, lang)]
    for i, row in enumerate(panel.rows):
        for c in panel.changes_into(i):
            lines += ["    " + text(m, lang) for m in c.messages]
        lines.append("  " + row_text(row, lang))
        lines.append("    " + text(row.view.formula, lang))
        if row.marks:
            by_kind: dict[str, list[int]] = {}
            for p, k in row.marks.items():
                by_kind.setdefault(k, []).append(p)
            for k in MARK_KINDS:
                if k in by_kind:
                    marked = Msg("bits.marked", mark=Msg(f"bits.mark.{k}"),
                                 positions=position_text(by_kind[k]))
                    lines.append("    " + text(marked, lang))
    for n in panel.notes:
        lines.append("  " + text(Msg("explain.note", note=n), lang))
    return "\n".join(lines)


__all__ = [
    "HIDDEN", "FIELD_KINDS", "MARK_KINDS", "FloatLayout", "float_layout", "BitField", "BitView",
    "bit_view", "float_view", "int_view", "view_of_bits", "value_text", "Rounding", "round_significand",
    "Piece", "BitRow", "BitChange", "BitPanel", "same_value", "float_rounding", "reduce_bits_change",
    "reduce_precision_panel", "convert_panel", "round_integral_panel", "narrow_float_panel", "shift_panel",
    "popcnt_panel", "clz_panel", "bitcast_panel", "MAX_PIECES", "field_runs", "row_text", "position_text",
    "format_bits",
]
