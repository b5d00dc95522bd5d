"""``dense<...>`` literals: text ⇄ numpy arrays, bit-exact, for every element type.

The body is the text between ``dense<`` and its ``>``; the caller parses the
``: tensor<...>`` type after it. Accepted forms follow MLIR's AsmParser:

- nested lists matching the shape (``[[1, 2], [3, 4]]``), a splat scalar
  (``1.5`` fills the shape), ``[]`` / ``[[], []]`` or nothing for zero-size
  tensors, complex elements as ``(re, im)``;
- integers in decimal or hex; signless ``iN`` also takes N-bit patterns
  (``255 : i8`` is -1, as in MLIR), ``siN`` does not, ``uiN`` rejects
  negatives; ``i1`` takes ``true``/``false``/0/1;
- floats in decimal (rounded to nearest even through float64, as MLIR does),
  hex bit patterns of the element type (``0x7FC00000`` for f32), and
  leniently the words ``nan``/``inf``/``-inf``;
- a hex string ``"0x..."`` of raw little-endian element bytes: one byte per
  sub-byte element (i2, i4, f4E2M1FN, f6*), real part then imaginary part
  for complex, i1 one byte per element (current MLIR) or bit-packed (MLIR
  before 2026), a single element's bytes meaning a splat.

Parsing is vectorized: one regex pass extracts the element literals, the
remaining "skeleton" of brackets and commas is compared with the one the
type's shape demands, and the literals are converted with numpy. Only the
error path walks the text token by token, to say exactly what is wrong where.
"""

from __future__ import annotations

import math
import re
from itertools import repeat

import numpy as np

from hlolab.errors import UnsupportedError
from hlolab.limits import ELEMENT_BUDGET  # also the most elements a literal may denote (a splat)
from hlolab.numerics import float_format, from_bits, nan_value, round_float64, to_bits, uint_dtype, widen
from hlolab.types import ElementType, QuantizedElementType, TensorType

MAX_RANK = 64  # numpy's limit on array dimensions
MAX_NESTING = 1024  # list depth the error diagnosis follows (its cost grows with depth²)


class DenseSyntaxError(Exception):
    """A malformed dense literal; ``offset`` is the character offset in the body."""

    def __init__(self, message: str, offset: int):
        super().__init__(message)
        self.message = message
        self.offset = offset


class _ElementError(Exception):
    """A bad element literal, by position (turned into a DenseSyntaxError with its offset)."""

    def __init__(self, index: int, message: str):
        super().__init__(message)
        self.index = index
        self.message = message


_NUM = (r"0[xX][0-9a-fA-F]+"
        r"|(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?"
        r"|true\b|false\b|(?i:nan|inf(?:inity)?)\b")
_SCALAR = r"(?:([-+])\s*)?(" + _NUM + r")"  # starts at the sign or the digits
_COMPLEX = r"\(\s*" + _SCALAR + r"\s*,\s*" + _SCALAR + r"\s*\)"
# groups: 1-4 a complex element (re sign, re, im sign, im), 5-6 a scalar one
_ELEM = re.compile(_COMPLEX + "|" + _SCALAR)
_HEX_STRING = re.compile(r'\s*"0x([0-9a-fA-F]*)"\s*')


# --------------------------------------------------------------------------
# parsing
# --------------------------------------------------------------------------

def parse_dense(body: str, type: TensorType, max_elements: int = ELEMENT_BUDGET) -> np.ndarray:
    """The array a ``dense<body> : type`` literal denotes (exact element dtype).

    Raises DenseSyntaxError for malformed text, UnsupportedError for a type
    numpy cannot hold (rank > 64) or one over ``max_elements`` elements.
    """
    et = _element(type)
    if not type.is_static:
        raise DenseSyntaxError(f"elements literal type must have a static shape, got {type}", 0)
    shape = tuple(int(d) for d in type.shape)  # type: ignore[arg-type]
    if len(shape) > MAX_RANK:
        raise UnsupportedError(f"{type} has rank {len(shape)}; numpy arrays have at most {MAX_RANK} "
                               "dimensions")
    size = math.prod(shape)
    if size > max_elements:
        raise UnsupportedError(f"dense literal of type {type} has {size} elements, over the budget "
                               f"of {max_elements}")
    if body.lstrip().startswith('"'):
        return _parse_hex_string(body, type, et, shape)
    matches = _ELEM.findall(body)
    skeleton = "".join(_ELEM.sub("x", body).split())
    if skeleton == "":
        if size != 0:
            raise DenseSyntaxError(f"parsed zero elements, but type {type} expects {size}", 0)
        return np.zeros(shape, et.dtype)
    splat = skeleton == "x"
    if not splat and (len(matches) != size or skeleton != _expected_skeleton(shape)):
        _diagnose_structure(body, shape, type)
    try:
        flat = _convert(matches, et)
    except _ElementError as e:
        raise DenseSyntaxError(e.message, _element_offset(body, e.index)) from None
    if splat:
        return np.full(shape, flat[0], dtype=et.dtype)
    return flat.reshape(shape)


def _element(type: TensorType) -> ElementType:
    el = type.element
    return el.storage if isinstance(el, QuantizedElementType) else el


def _expected_skeleton(shape: tuple[int, ...]) -> str:
    """``[[x,x],[x,x]]`` for shape (2, 2); ``[]`` stands for any zero-size tail."""
    text = "x"
    for d in reversed(shape):
        text = "[" + ",".join(repeat(text, d)) + "]"
    return text


def _element_offset(body: str, index: int) -> int:
    for i, m in enumerate(_ELEM.finditer(body)):
        if i == index:
            return m.start()
    return 0


def _convert(matches: list[tuple[str, ...]], et: ElementType) -> np.ndarray:
    """Element literals (regex groups) → flat array of ``et``."""
    if not matches:
        return np.zeros(0, et.dtype)
    groups = list(zip(*matches, strict=True))  # one tuple per regex group

    def col(i: int) -> np.ndarray:
        return np.array(groups[i], dtype=str)

    if et.is_complex:
        if not all(groups[1]):
            k = groups[1].index("")
            raise _ElementError(k, f"expected a complex element (re, im) for {et}, "
                                f"got {_text(groups[4][k], groups[5][k])}")
        part = et.component
        out = np.empty(len(matches), et.dtype)
        out.real = _convert_real(col(0), col(1), part)
        out.imag = _convert_real(col(2), col(3), part)
        return out
    if any(groups[1]):
        k = _first(col(1) != "")
        raise _ElementError(k, f"complex element ({_text(groups[0][k], groups[1][k])}, ...) "
                            f"not valid for element type {et}")
    return _convert_real(col(4), col(5), et)


def _text(sign: str, num: str) -> str:
    return f"{sign}{num}"


def _convert_real(signs: np.ndarray, nums: np.ndarray, et: ElementType) -> np.ndarray:
    if et.is_bool:
        return _convert_bools(signs, nums, et)
    if et.is_int:
        return _convert_ints(signs, nums, et)
    return _convert_floats(signs, nums, et)


def _classify(nums: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Masks of hex, word (true/false/nan/inf) and float-looking literals."""
    is_hex = np.strings.startswith(nums, "0x") | np.strings.startswith(nums, "0X")
    is_word = np.strings.isalpha(nums)
    is_float = ~is_hex & ~is_word & ((np.strings.find(nums, ".") >= 0)
                                     | (np.strings.find(nums, "e") >= 0)
                                     | (np.strings.find(nums, "E") >= 0))
    return is_hex, is_word, is_float


def _first(mask: np.ndarray) -> int:
    return int(np.argmax(mask))


def _python_ints(nums: np.ndarray, is_hex: np.ndarray) -> np.ndarray:
    """Magnitudes as integers: int64 when short decimals, else Python ints (object array)."""
    if not is_hex.any() and np.strings.str_len(nums).max(initial=0) <= 18:
        return nums.astype(np.int64)  # < 10^18: fits, and numpy parses in C
    mags = np.empty(len(nums), dtype=object)
    dec = ~is_hex
    if dec.any():
        mags[dec] = list(map(int, nums[dec].tolist()))
    if is_hex.any():
        mags[is_hex] = list(map(int, nums[is_hex].tolist(), repeat(16)))
    return mags


def _convert_bools(signs: np.ndarray, nums: np.ndarray, et: ElementType) -> np.ndarray:
    is_true, is_false = nums == "true", nums == "false"
    is_hex, is_word, is_float = _classify(nums)
    bad_word = is_word & ~is_true & ~is_false
    if bad_word.any() or is_float.any():
        k = _first(bad_word | is_float)
        raise _ElementError(k, f"expected true, false, 0 or 1 for i1, got {_text(signs[k], nums[k])}")
    if ((signs != "") & (is_true | is_false)).any():
        k = _first((signs != "") & (is_true | is_false))
        raise _ElementError(k, f"a sign is not valid before {nums[k]}")
    ints = ~is_word
    out = is_true.copy()
    if ints.any():
        mags = np.zeros(len(nums), dtype=object)
        mags[ints] = _python_ints(nums[ints], is_hex[ints])
        bad = ints & ((mags > 1) | ((signs == "-") & (mags != 0)))
        if bad.any():
            k = _first(bad)
            raise _ElementError(k, f"integer value {_text(signs[k], nums[k])} is out of range for i1 "
                                "(expected true, false, 0 or 1)")
        out |= ints & (mags == 1)
    return out.astype(np.bool_)


def _int_range(et: ElementType) -> tuple[int, int, int]:
    """(lowest, highest signed/unsigned value, highest accepted literal) for ``et``."""
    w = et.bits
    if et.is_unsigned:
        return 0, (1 << w) - 1, (1 << w) - 1
    lo, hi = -(1 << (w - 1)), (1 << (w - 1)) - 1
    # signless iN takes any N-bit pattern, read as two's complement (MLIR)
    return lo, hi, hi if et.name.startswith("si") else (1 << w) - 1


def _convert_ints(signs: np.ndarray, nums: np.ndarray, et: ElementType) -> np.ndarray:
    is_hex, is_word, is_float = _classify(nums)
    if is_word.any():
        k = _first(is_word)
        what = "'true' or 'false' needs an i1 element type" if nums[k] in ("true", "false") \
            else f"expected integer elements, got {_text(signs[k], nums[k])}"
        raise _ElementError(k, f"{what} (element type {et})")
    if is_float.any():
        k = _first(is_float)
        raise _ElementError(k, f"expected integer elements, but parsed floating-point "
                            f"{_text(signs[k], nums[k])} for {et}")
    neg = signs == "-"
    if et.is_unsigned and neg.any():
        k = _first(neg)
        raise _ElementError(k, f"expected unsigned integer elements, but parsed negative value "
                            f"{_text(signs[k], nums[k])} for {et}")
    mags = _python_ints(nums, is_hex)
    lo, hi, top = _int_range(et)
    bad = np.where(neg, mags > -lo, mags > top)
    if bad.any():
        k = _first(bad)
        accepted = f"{lo}..{hi}" + (f", or {hi + 1}..{top} as two's complement" if top > hi else "")
        raise _ElementError(k, f"integer value {_text(signs[k], nums[k])} is out of range for "
                            f"{et} (expected {accepted})")
    values = np.where(neg, -mags, mags)
    wrap = values > hi
    if wrap.any():  # signless iN: an N-bit pattern above the signed range, two's complement
        values = np.where(wrap, values - (1 << et.bits), values)
    wide = np.uint64 if et.is_unsigned else np.int64
    return values.astype(wide).astype(et.dtype)


def _convert_floats(signs: np.ndarray, nums: np.ndarray, et: ElementType) -> np.ndarray:
    dtype = et.dtype
    fmt = float_format(dtype)
    is_hex, is_word, _ = _classify(nums)
    lower = np.strings.lower(nums) if is_word.any() else nums
    is_nan = is_word & (lower == "nan")
    is_inf = is_word & ((lower == "inf") | (lower == "infinity"))
    bad_word = is_word & ~is_nan & ~is_inf
    if bad_word.any():
        k = _first(bad_word)
        raise _ElementError(k, f"expected floating point literal for {et}, got {nums[k]}")
    neg = signs == "-"
    if not fmt.signed and neg.any():
        k = _first(neg)
        raise _ElementError(k, f"negative literal {_text(signs[k], nums[k])} not valid for {et}, "
                            "which has no sign")
    if (neg & is_hex).any():
        k = _first(neg & is_hex)
        raise _ElementError(k, f"hexadecimal float literal should not have a leading minus: "
                            f"{_text(signs[k], nums[k])}")
    if is_nan.any() and not fmt.has_nan:
        raise _ElementError(_first(is_nan), f"{et} has no NaN")
    if is_inf.any() and not fmt.has_inf:
        raise _ElementError(_first(is_inf), f"{et} has no infinity")

    out = np.empty(len(nums), dtype)
    dec = ~is_hex & ~is_word
    if dec.any():
        with np.errstate(over="ignore"):
            values = nums[dec].astype(np.float64)
        if np.isinf(values).any():
            k = int(np.flatnonzero(dec)[_first(np.isinf(values))])
            raise _ElementError(k, f"floating point value too large: {_text(signs[k], nums[k])}")
        out[dec] = round_float64(np.where(neg[dec], -values, values), dtype)
    if is_hex.any():
        bits = _python_ints(nums[is_hex], np.ones(int(is_hex.sum()), bool))
        too_wide = bits >= (1 << fmt.bits)
        if too_wide.any():
            k = int(np.flatnonzero(is_hex)[_first(too_wide)])
            raise _ElementError(k, f"hexadecimal float constant {nums[k]} out of range for {et} "
                                f"({fmt.bits} bits)")
        out[is_hex] = from_bits(bits.astype(np.uint64), dtype)
    if is_nan.any():
        out[is_nan & ~neg] = nan_value(dtype)
        out[is_nan & neg] = nan_value(dtype, negative=True)
    if is_inf.any():
        out[is_inf] = np.where(neg[is_inf], -np.inf, np.inf).astype(dtype)
    return out


def _parse_hex_string(body: str, type: TensorType, et: ElementType,
                      shape: tuple[int, ...]) -> np.ndarray:
    m = _HEX_STRING.fullmatch(body)
    start = body.index('"')
    if m is None:
        raise DenseSyntaxError("expected string containing hex digits starting with `0x`", start)
    digits = m.group(1)
    if len(digits) % 2:
        raise DenseSyntaxError(f"hex string has an odd number of digits ({len(digits)})", start)
    data = bytes.fromhex(digits)
    size = math.prod(shape)
    if et.is_bool:
        flat = _hex_bools(data, size, type, start)
    else:
        width = et.dtype.itemsize  # sub-byte types take one byte each
        if len(data) == width * size:
            flat = _hex_values(data, et)
        elif len(data) == width:
            flat = np.full(size, _hex_values(data, et)[0], et.dtype)
        else:
            raise DenseSyntaxError(f"elements hex data size is invalid for provided type: {type} "
                                   f"(got {len(data)} bytes, expected {width} for a splat or "
                                   f"{width * size})", start)
    return flat.reshape(shape)


def _hex_values(data: bytes, et: ElementType) -> np.ndarray:
    """Little-endian raw element bytes → values (sub-byte: the low bits of each byte)."""
    if et.is_complex:
        return np.frombuffer(data, dtype=et.dtype.newbyteorder("<")).astype(et.dtype)
    udt = uint_dtype(et.dtype)
    raw = np.frombuffer(data, dtype=udt.newbyteorder("<")).astype(udt)
    if et.bits < 8 * udt.itemsize:
        raw = raw & udt.type((1 << et.bits) - 1)
    return raw.view(et.dtype)


def _hex_bools(data: bytes, size: int, type: TensorType, start: int) -> np.ndarray:
    raw = np.frombuffer(data, dtype=np.uint8)
    if len(raw) == 1 and (raw[0] in (0, 1, 0xFF) or size == 1):
        return np.full(size, raw[0] != 0)
    if len(raw) == size:  # MLIR since 2026: one byte per element, 0 or 1
        if (raw > 1).any():
            raise DenseSyntaxError(f"i1 hex data byte 0x{int(raw[_first(raw > 1)]):02X} is "
                                   "neither 0 nor 1", start)
        return raw.astype(bool)
    if len(raw) == (size + 7) // 8:  # older MLIR: bit-packed, least significant bit first
        return np.unpackbits(raw, bitorder="little")[:size].astype(bool)
    raise DenseSyntaxError(f"elements hex data size is invalid for provided type: {type} "
                           f"(got {len(raw)} bytes, expected 1, {size} or {(size + 7) // 8})", start)


# --------------------------------------------------------------------------
# error diagnosis (slow path: only runs on malformed text)
# --------------------------------------------------------------------------

def _tokens(body: str) -> list[tuple[str, int, int]]:
    """(kind, start, end) with kind in '[', ']', ',', 'elem'; raises on stray text."""
    out = []
    pos, n = 0, len(body)
    while pos < n:
        ch = body[pos]
        if ch.isspace():
            pos += 1
            continue
        if ch in "[],":
            out.append((ch, pos, pos + 1))
            pos += 1
            continue
        m = _ELEM.match(body, pos)
        if m is None:
            stray = re.match(r"[^\s\[\],]+", body[pos:])
            text = stray.group(0) if stray else ch
            raise DenseSyntaxError(f"expected an element literal, '[' or ']', got '{text}'", pos)
        out.append(("elem", pos, m.end()))
        pos = m.end()
    return out


def _diagnose_structure(body: str, shape: tuple[int, ...], type: TensorType) -> None:
    """Raise the precise error for a body whose bracket structure is not ``shape``'s.

    An explicit stack of open lists (not recursion): nesting depth is unbounded.
    """
    toks = _tokens(body)
    toks.append(("end", len(body), len(body)))
    stack: list[list] = []  # per open list: [item count, shape of its items, offset]
    found: tuple[int, ...] | None = None
    want_value = True
    for kind, start, end in toks:
        got = "the end of the literal" if kind == "end" else f"'{body[start:end]}'"
        if found is not None:
            if kind == "end":
                break
            raise DenseSyntaxError(f"unexpected {got} after the literal", start)
        if want_value and kind == "[":
            if len(stack) == MAX_NESTING:
                raise DenseSyntaxError(f"lists nested deeper than {MAX_NESTING} levels", start)
            stack.append([0, None, start])
            continue
        if want_value and kind == "]" and stack and stack[-1][0] == 0:
            item, item_start = (0,), stack.pop()[2]
        elif want_value and kind == "elem":
            item, item_start = (), start
        elif want_value:
            raise DenseSyntaxError(f"expected an element literal or '[', got {got}", start)
        elif kind == "," and stack:
            want_value = True
            continue
        elif kind == "]" and stack:
            count, dims, item_start = stack.pop()
            item = (count, *dims)
        else:
            raise DenseSyntaxError(f"expected ',' or ']' in a list, got {got}", start)
        # a complete item: it joins the enclosing list, or it is the whole literal
        want_value = False
        if not stack:
            found = item
            continue
        top = stack[-1]
        if top[1] is not None and top[1] != item:
            raise DenseSyntaxError("tensor literal is invalid; ranks are not consistent between "
                                   f"elements: found shape {_dims(item)} after {_dims(top[1])}",
                                   item_start)
        top[0] += 1
        top[1] = item
    raise DenseSyntaxError(f"inferred shape of elements literal ({_dims(found or ())}) does not "
                           f"match type {type} ({_dims(shape)})", 0)


def _dims(shape: tuple[int, ...]) -> str:
    if len(shape) <= 8:
        return str(list(shape))
    return "[" + ", ".join(map(str, shape[:8])) + f", ... (rank {len(shape)})]"


# --------------------------------------------------------------------------
# formatting
# --------------------------------------------------------------------------

def format_dense(array: np.ndarray, type: TensorType) -> str:
    """The body of a ``dense<...>`` literal for ``array``; ``parse_dense`` gives it back bit-exactly.

    A splat (size > 0, all elements bitwise equal) prints as one scalar, other
    tensors as nested lists, zero-size tensors as nothing (``dense<>``, as MLIR
    prints them).
    """
    et = _element(type)
    a = np.asarray(array)
    shape = type.static_shape("a dense literal")
    if a.shape != shape:
        raise UnsupportedError(f"format_dense: array of shape {a.shape} for type {type}")
    if a.dtype != et.dtype:
        raise UnsupportedError(f"format_dense: array of dtype {a.dtype} for type {type}")
    if a.size == 0:
        return ""
    flat = a.reshape(-1)
    if is_splat(flat):
        return str(format_elements(flat[:1], et)[0])
    return nest(format_elements(flat, et), shape)


def is_splat(flat: np.ndarray) -> bool:
    """Whether every element is bitwise equal to the first (size > 0)."""
    if flat.size == 0:
        return False
    if flat.dtype.kind == "c":
        return is_splat(flat.real) and is_splat(flat.imag)
    bits = to_bits(flat) if flat.dtype.kind != "b" else flat
    return bool((bits == bits[0]).all())


def list_boundaries(n: int, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """For each of ``n`` row-major elements: how many nested lists open before
    it and how many close after it."""
    idx = np.arange(n)
    opens = np.zeros(n, np.int64)
    closes = np.zeros(n, np.int64)
    block = 1
    for d in reversed(shape):
        block *= d
        opens += idx % block == 0
        closes += (idx + 1) % block == 0
    return opens, closes


def nest(strs: np.ndarray, shape: tuple[int, ...]) -> str:
    """Flat row-major element texts → ``[[a, b], [c, d]]``."""
    opens, closes = list_boundaries(strs.size, shape)
    pieces = np.strings.add(np.strings.add(np.strings.multiply("[", opens), strs),
                            np.strings.multiply("]", closes))
    return ", ".join(pieces.tolist())


def format_elements(flat: np.ndarray, et: ElementType) -> np.ndarray:
    """Texts of the elements of a 1-d array, each parseable back bit-exactly."""
    if et.is_bool:
        return np.where(flat.astype(bool), "true", "false")
    if et.is_int:
        return flat.astype(np.uint64 if et.is_unsigned else np.int64).astype(str)
    if et.is_complex:
        re_, im = format_floats(flat.real), format_floats(flat.imag)
        return np.strings.add(np.strings.add(np.strings.add("(", re_), ","),
                              np.strings.add(im, ")"))
    return format_floats(flat)


def format_floats(x: np.ndarray) -> np.ndarray:
    """MLIR-style texts: ``%.6e`` when that round-trips (``1.000000e+00``), else the
    fewest more digits that do; NaN and ±inf as hex bit patterns (``0x7FC00000``)."""
    dtype = x.dtype
    bits = to_bits(x)
    out = np.empty(x.size, dtype=object)
    with np.errstate(invalid="ignore"):  # ml_dtypes warn on NaN inputs
        finite = np.isfinite(x)
    if (~finite).any():
        out[~finite] = np.char.mod("0x%X", bits[~finite].astype(np.uint64).astype(object))
    idx = np.flatnonzero(finite)
    wide = widen(x[finite])
    want = bits[finite]
    for digits in range(6, 16):
        if idx.size == 0:
            break
        texts = np.char.mod(f"%.{digits}e", wide)
        back = round_float64(texts.astype(np.float64), dtype)
        ok = to_bits(back) == want
        out[idx[ok]] = texts[ok]
        idx, wide, want = idx[~ok], wide[~ok], want[~ok]
    if idx.size:  # 17 significant digits identify every float64, hence every type
        out[idx] = np.char.mod("%.16e", wide)
    return out.astype(str)
