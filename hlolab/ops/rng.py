"""stablehlo.rng_bit_generator and stablehlo.rng: random bits and (deprecated) random numbers.

``%output_state, %output = stablehlo.rng_bit_generator %initial_state, algorithm = THREE_FRY``
fills ``output`` with pseudo-random bits, a deterministic function of ``initial_state``, and
returns the advanced state. The spec leaves the algorithms' variants to the implementation;
hlolab's are XLA:CPU's, bit for bit (XLA's ``prng.cc`` bit generators as its
RngBitGeneratorExpander calls them; measured against jax 0.10.2):

- ``initial_state[0]`` is the key: two 32-bit words (low, high).
- THREE_FRY (state: 2 words): Threefry-2x32 with 20 rounds. 64-bit outputs: element ``i`` (row
  major) is the block of counter ``initial_state[1] + i`` (the counter's words low, high;
  the output ``y0 | y1 << 32``). Narrower outputs: the output shape is halved along its
  first even dim (none even: its largest dim, the first of equal ones), the block of counter
  ``initial_state[1] + j`` for element ``j`` of that half shape gives two 32-bit words, which
  fill positions ``2 m`` and ``2 m + 1`` along the halved dim (a rank-0 output: the first
  word). The new state is ``[initial_state[0], initial_state[1] + blocks]``.
- PHILOX (state: 2 or 3 words): Philox-4x32 with 10 rounds on a 128-bit counter (low, high):
  ``(initial_state[1], initial_state[2])``, or with 2 words ``(initial_state[1],
  initial_state[0])`` (XLA reverses the state). Block ``j`` is counter + j (carry into
  high); its four words fill elements ``4 j .. 4 j + 3`` (32-bit and narrower outputs) or
  two 64-bit elements ``2 j, 2 j + 1`` (words 0|1 and 2|3). The new state is the key, then
  the counter + blocks (only its low word with a 2-word state).
- DEFAULT is PHILOX (XLA:CPU's choice), so its state has 2 or 3 words (C2).
- Output types narrower than 32 bits take the low bits of the 32-bit word; every output
  type gets the bits as they are (a bitcast): XLA:CPU hands out integer and float outputs
  as the unsigned integer of the same width with exactly these bits. f6 types follow the
  same rule; XLA:CPU cannot compile them (so they are not measured). i1 and complex
  outputs are refused, as the spec's "integer or floating-point type" and XLA do.

``stablehlo.rng`` (deprecated in the spec, which leaves the numbers to the implementation):
hlolab draws them with numpy's ``default_rng`` seeded ``[RNG_SEED, k]``, k = how many rng ops
this interpreter has executed before (the hidden state the spec allows, as XLA's global
RNG state): a fresh run of a program gives the same numbers, two rng ops of one run (or one
in a loop) give different ones. UNIFORM: floats ``a + (b - a) * u`` with u uniform in [0, 1)
(float64, rounded once to the type, kept below b), integers uniform in [a, b) (``a < b``
needed); NORMAL: ``a + b * z`` with z standard normal (float64, rounded once; ``b >= 0``).
The undefined cases (a >= b, b < 0, non-finite UNIFORM bounds) are errors.

Constraint labels: rng_bit_generator (I2) initial_state is a 1-dimensional tensor of ui64,
(C1) type(initial_state) = type(output_state), (C2) size(initial_state) per algorithm; the
output's type ("integer or floating-point", statically shaped) is checked without a label.
rng (I1)/(I2) a and b are 0-dimensional tensors of integer, boolean or floating-point type,
(I3) shape is a 1-dimensional tensor of si64, (C1) element types agree, (C2) NORMAL needs
floats, (C3) shape(result) = shape (its rank when verifying, its values when running).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hlolab.errors import ExecutionError
from hlolab.messages import Msg
from hlolab.numerics import float_format, from_bits, round_float64, to_bits
from hlolab.ops.common import check_value, operand_tensor, same_element, shapes_compatible, wrap_int
from hlolab.ops.record import Attrs, InferError, Partial, attr, enum, record
from hlolab.ops.registry import OpCall, op
from hlolab.trace.explain import Explanation, Step
from hlolab.trace.provenance import (
    Provenance,
    Source,
    Target,
    _check_mask,
    _merge,
    _unravel,
    check_index,
    value_shape,
)
from hlolab.types import ElementType, TensorType

ALGORITHMS = ("DEFAULT", "THREE_FRY", "PHILOX")
DISTRIBUTIONS = ("UNIFORM", "NORMAL")
DEFAULT_ALGORITHM = "PHILOX"  # what XLA:CPU's RngBitGeneratorExpander runs for DEFAULT
STATE_SIZES = {"THREE_FRY": (2,), "PHILOX": (2, 3), "DEFAULT": (2, 3)}
RNG_SEED = 20240229  # stablehlo.rng's documented seed: draw k uses default_rng([RNG_SEED, k])

_U32 = np.uint32
_U64 = np.uint64


@record
class RngBitGeneratorAttrs(Attrs):
    rng_algorithm: str = attr(enum("rng_algorithm", "rng_algorithm", ALGORITHMS))


@record
class RngAttrs(Attrs):
    rng_distribution: str = attr(enum("rng_distribution", "rng_distribution", DISTRIBUTIONS))


def algorithm_run(algorithm: str) -> str:
    """The algorithm that runs: DEFAULT is XLA:CPU's PHILOX."""
    return DEFAULT_ALGORITHM if algorithm == "DEFAULT" else algorithm


# --- the counter-based generators (uint32 words, wrapping arithmetic) ----------------------

THREEFRY_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
THREEFRY_PARITY = 0x1BD11BDA
PHILOX_MULTIPLIERS = (0xD2511F53, 0xCD9E8D57)
PHILOX_KEY_STEPS = (0x9E3779B9, 0xBB67AE85)


def split64(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """uint64 values as their (low, high) uint32 words."""
    x = np.asarray(x, dtype=_U64)
    return (x & _U64(0xFFFFFFFF)).astype(_U32), (x >> _U64(32)).astype(_U32)


def join64(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    return np.asarray(low, _U32).astype(_U64) | (np.asarray(high, _U32).astype(_U64) << _U64(32))


def _rotl(v: np.ndarray, r: int) -> np.ndarray:
    return (v << _U32(r)) | (v >> _U32(32 - r))


def threefry2x32(x0: np.ndarray, x1: np.ndarray, key: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Threefry-2x32, 20 rounds (five groups of four, a key injection after each group)."""
    ks = (_U32(key[0]), _U32(key[1]), _U32(key[0] ^ key[1] ^ THREEFRY_PARITY))
    x0 = np.asarray(x0, _U32) + ks[0]
    x1 = np.asarray(x1, _U32) + ks[1]
    for group in range(5):
        for r in THREEFRY_ROTATIONS[group % 2]:
            x0 = x0 + x1
            x1 = _rotl(x1, r) ^ x0
        x0 = x0 + ks[(group + 1) % 3]
        x1 = x1 + ks[(group + 2) % 3] + _U32(group + 1)
    return x0, x1


def philox4x32(words: Sequence[np.ndarray], key: tuple[int, int]) -> list[np.ndarray]:
    """Philox-4x32, 10 rounds; the key advances by the Weyl steps after each round."""
    c = [np.asarray(w, _U32) for w in words]
    k0, k1 = _U32(key[0]), _U32(key[1])
    ma, mb = _U64(PHILOX_MULTIPLIERS[0]), _U64(PHILOX_MULTIPLIERS[1])
    for _ in range(10):
        p0 = c[0].astype(_U64) * ma
        p1 = c[2].astype(_U64) * mb
        lo0, hi0 = split64(p0)
        lo1, hi1 = split64(p1)
        c = [hi1 ^ c[1] ^ k0, lo1, hi0 ^ c[3] ^ k1, lo0]
        with np.errstate(over="ignore"):  # the key words wrap mod 2^32
            k0 = k0 + _U32(PHILOX_KEY_STEPS[0])
            k1 = k1 + _U32(PHILOX_KEY_STEPS[1])
    return c


def add128(low: int, high: int, j: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) + j as 128-bit numbers (uint64 words; the carry goes into high)."""
    with np.errstate(over="ignore"):  # 0-d operands add as scalars, which warn on wrapping
        new_low = _U64(low) + np.asarray(j, _U64)
        carry = (new_low < _U64(low)).astype(_U64)
        return new_low, _U64(high) + carry


# --- layouts: which block and word make each output element --------------------------------

def word_bits(et: ElementType) -> int:
    """The generator word an element is cut from: 64 for 64-bit types, else 32."""
    return 64 if et.bits == 64 else 32


def threefry_split(shape: tuple[int, ...]) -> int:
    """The dim XLA halves for 32-bit words: the first even one, else the largest (first of
    equal ones); -1 for rank 0."""
    if not shape:
        return -1
    for d, n in enumerate(shape):
        if n % 2 == 0:
            return d
    return int(np.argmax(shape))


def threefry_half_shape(shape: tuple[int, ...]) -> tuple[int, ...]:
    s = threefry_split(shape)
    if s < 0:
        return (1,)
    return (*shape[:s], (shape[s] + 1) // 2, *shape[s + 1:])


def blocks_needed(algorithm: str, shape: tuple[int, ...], bits: int) -> int:
    """How many generator blocks (counter values) an output of ``shape`` consumes."""
    n = int(np.prod(shape, dtype=np.int64))
    if algorithm == "THREE_FRY":
        return n if bits == 64 else int(np.prod(threefry_half_shape(shape), dtype=np.int64))
    return -(-n // 2) if bits == 64 else -(-n // 4)


@dataclass(frozen=True)
class Origin:
    """Where one output element's bits come from: generator block ``block`` (its counter
    words), the words that block produced, and which of them make the element."""

    block: int
    counter: tuple[int, ...]  # the block's input words (uint32)
    words: tuple[int, ...]  # the block's output words (uint32)
    used: tuple[int, ...]  # positions in ``words`` used, low word first
    bits: int  # the uint32/uint64 the used words make


def _state_words(algorithm: str, state: np.ndarray) -> tuple[tuple[int, int], int, int]:
    """(key words, counter low, counter high) of an initial state (high: PHILOX only)."""
    s = [int(v) for v in np.asarray(state, _U64).reshape(-1)]
    key = (s[0] & 0xFFFFFFFF, s[0] >> 32)
    if algorithm == "THREE_FRY":
        return key, s[1], 0
    return key, s[1], (s[2] if len(s) >= 3 else s[0])


def origin(algorithm: str, state: np.ndarray, shape: tuple[int, ...], bits: int,
           index: tuple[int, ...]) -> Origin:
    """The Origin of output element ``index`` (one block evaluated: explain's view)."""
    key, low, high = _state_words(algorithm, state)
    if algorithm == "THREE_FRY":
        s = threefry_split(shape)
        if bits == 64 or s < 0:
            half, h_index, word = shape, index, 0
        else:
            half = threefry_half_shape(shape)
            h_index = (*index[:s], index[s] // 2, *index[s + 1:])
            word = index[s] % 2
        block = int(np.ravel_multi_index(h_index, half)) if half else 0
        c0, c1 = split64(np.uint64((low + block) % 2**64))
        y = threefry2x32(np.array([c0]), np.array([c1]), key)
        counter, words = (int(c0), int(c1)), (int(y[0][0]), int(y[1][0]))
        used = (0, 1) if bits == 64 else (word,)
    else:
        flat = int(np.ravel_multi_index(index, shape)) if shape else 0
        per = 2 if bits == 64 else 4
        block = flat // per
        lo, hi = add128(low, high, np.array([block]))
        w = [*split64(lo), *split64(hi)]
        y = philox4x32(w, key)
        counter, words = tuple(int(v[0]) for v in w), tuple(int(v[0]) for v in y)
        used = (2 * (flat % 2), 2 * (flat % 2) + 1) if bits == 64 else (flat % 4,)
    value = words[used[0]] | (words[used[1]] << 32 if len(used) == 2 else 0)
    return Origin(block, counter, words, used, value)


def generate_bits(algorithm: str, state: np.ndarray, shape: tuple[int, ...],
                  bits: int) -> tuple[np.ndarray, np.ndarray]:
    """(uint32 or uint64 words of ``shape``, the new state) for ``algorithm`` (not DEFAULT)."""
    key, low, high = _state_words(algorithm, state)
    n = int(np.prod(shape, dtype=np.int64))
    blocks = blocks_needed(algorithm, shape, bits)
    j = np.arange(blocks, dtype=_U64)
    if algorithm == "THREE_FRY":
        y0, y1 = threefry2x32(*split64(_U64(low) + j), key)
        s = threefry_split(shape)
        if bits == 64:
            out = join64(y0, y1).reshape(shape)
        elif s < 0:
            out = y0.reshape(())
        else:
            half = threefry_half_shape(shape)
            # the two words of each block side by side along the halved dim, cut back to size
            pairs = np.stack([y0.reshape(half), y1.reshape(half)], axis=s + 1)
            out = pairs.reshape(*shape[:s], 2 * half[s], *shape[s + 1:])
            out = np.take(out, np.arange(shape[s]), axis=s)
        new_state = np.array([key[0] | key[1] << 32, (low + blocks) % 2**64], _U64)
        return np.array(out, order="C"), new_state
    lo, hi = add128(low, high, j)
    y = philox4x32([*split64(lo), *split64(hi)], key)
    if bits == 64:
        flat = np.stack([join64(y[0], y[1]), join64(y[2], y[3])], axis=1).reshape(-1)
    else:
        flat = np.stack(y, axis=1).reshape(-1)
    out = flat[:n].reshape(shape)
    new_low, new_high = add128(low, high, np.array(blocks))
    size = np.asarray(state).size
    tail = [new_low] if size == 2 else [new_low, new_high]
    new_state = np.array([_U64(key[0] | key[1] << 32), *tail], _U64)
    return np.array(out, order="C"), new_state


def bits_as(bits: np.ndarray, et: ElementType) -> np.ndarray:
    """Generator words as elements of ``et``: the low ``et.bits`` bits, bitcast."""
    if et.bits in (32, 64):
        return bits.view(et.dtype)
    low = bits & bits.dtype.type((1 << et.bits) - 1)
    out = wrap_int(low, et) if et.is_int else from_bits(low, et.dtype)
    return np.asarray(out, et.dtype).reshape(bits.shape)  # numpy makes 0-d results scalars


# --- rng_bit_generator: types --------------------------------------------------------------

def _output_ok(t: Any) -> bool:
    return (isinstance(t, TensorType) and isinstance(t.element, ElementType) and t.is_static
            and t.element.kind in ("sint", "uint", "float"))


_OUTPUT_WHAT = "a statically shaped tensor of integer or floating-point type"


def _state_problem(t: Any, algorithm: str) -> tuple[str, str] | None:
    if not (isinstance(t, TensorType) and isinstance(t.element, ElementType) and t.rank == 1
            and t.element.kind == "uint" and t.element.bits == 64):
        return "I2", f"initial_state must be a 1-dimensional tensor of type ui64, got {t}"
    size, sizes = t.shape[0], STATE_SIZES[algorithm]
    if size is not None and size not in sizes:
        want = " or ".join(str(s) for s in sizes)
        why = " (DEFAULT is PHILOX here, as on XLA:CPU)" if algorithm == "DEFAULT" else ""
        return "C2", f"size(initial_state) must be {want} for rng_algorithm = {algorithm}{why}, got {size}"
    return None


def infer_rng_bit_generator(a: RngBitGeneratorAttrs, types: list[Any]) -> list[Any]:
    """output_state has initial_state's type (C1); output is the declared type."""
    if len(types) != 1:
        raise InferError(None, f"expects 1 operand, got {len(types)}")
    problem = _state_problem(types[0], a.rng_algorithm)
    if problem is not None:
        raise InferError(*problem)
    return [types[0], Partial(check=_output_ok, what=_OUTPUT_WHAT)]


def _verify_rng_bit_generator(ctx: OpCall) -> None:
    if len(ctx.operand_types) != 1:
        raise ctx.error(None, f"expects 1 operand, got {len(ctx.operand_types)}")
    if len(ctx.result_types) != 2:
        raise ctx.error(None, f"expects 2 results (output_state, output), got {len(ctx.result_types)}")
    state = operand_tensor(ctx, 0, "I2", "initial_state")
    problem = _state_problem(state, ctx.attrs.rng_algorithm)
    if problem is not None:
        raise ctx.error(*problem)
    out_state, out = ctx.result_types
    if not (isinstance(out_state, TensorType) and same_element(out_state.element, state.element)
            and shapes_compatible(out_state.shape, state.shape)):
        raise ctx.error("C1", f"type(initial_state) = type(output_state) does not hold: "
                        f"initial_state is {state}, output_state is {out_state}")
    if not _output_ok(out):
        raise ctx.error(None, f"output must be {_OUTPUT_WHAT}, got {out}")


# --- rng_bit_generator: evaluation ---------------------------------------------------------

def rng_bit_generator(ctx: OpCall, initial_state: np.ndarray) -> list[np.ndarray]:
    """output_state, output = the algorithm's bits for output's shape and the advanced state."""
    check_value(ctx, initial_state, ctx.operand_types[0], "initial_state")
    algorithm = ctx.attrs.rng_algorithm
    if initial_state.size not in STATE_SIZES[algorithm]:  # a dynamic size, known only now
        raise ctx.error("C2", f"size(initial_state) must be "
                        f"{' or '.join(map(str, STATE_SIZES[algorithm]))} for rng_algorithm = "
                        f"{algorithm}, got {initial_state.size}")
    t = ctx.result_tensor(1)
    et = t.element
    bits, new_state = generate_bits(algorithm_run(algorithm), initial_state, t.static_shape("output"),
                                    word_bits(et))
    return [new_state, bits_as(bits, et)]


# --- provenance ----------------------------------------------------------------------------

Reads = tuple[tuple[int, str, np.ndarray], ...]  # (operand, role, mask over the operand)


class ReadsProvenance(Provenance):
    """Each result element reads a fixed set of operand elements: ``uniform[r]`` (the same
    reads for every element of result r: an output that mixes whole operands) or
    ``per_element[r]`` (one Reads per element, row-major: a few-element result such as a
    generator's state). Set queries are whole-mask operations, no loop over a large result."""

    def __init__(self, result_shapes: Sequence[tuple[int, ...]], operand_shapes: Sequence[tuple[int, ...]],
                 uniform: dict[int, Reads], per_element: dict[int, list[Reads]]):
        super().__init__(result_shapes, operand_shapes)
        self.uniform = uniform
        self.per_element = per_element

    def _reads(self, result: int, flat: int) -> Reads:
        return self.uniform[result] if result in self.uniform else self.per_element[result][flat]

    def sources(self, result: int, index: tuple[int, ...]) -> list[Source]:
        shape = self._result_shape(result)
        idx = check_index(shape, index, f"result #{result} index")
        flat = int(np.ravel_multi_index(idx, shape)) if shape else 0
        out = []
        for operand, role, m in self._reads(result, flat):
            oshape = self.operand_shapes[operand] or ()
            out += [Source(operand, _unravel(int(p), oshape), role) for p in np.flatnonzero(m)]
        return out

    def targets(self, operand: int, index: tuple[int, ...]) -> list[Target]:
        oshape = self._operand_shape(operand)
        idx = check_index(oshape, index, f"operand #{operand} index")
        out = []
        for r, rshape in enumerate(self.result_shapes):
            assert rshape is not None
            n = int(np.prod(rshape, dtype=np.int64))
            flats = range(n) if r in self.per_element else [None]
            for flat in flats:
                for o, role, m in self._reads(r, flat or 0):
                    if o != operand or not m[idx]:
                        continue
                    hits = np.arange(n) if flat is None else [flat]
                    out += [Target(r, _unravel(int(p), rshape), role) for p in hits]
        return out

    def back(self, result: int, mask: np.ndarray) -> dict[tuple[int | None, str], np.ndarray]:
        m = _check_mask(self._result_shape(result), mask, f"back(result #{result})")
        out: dict[tuple[int | None, str], np.ndarray] = {}
        flats = ([0] if m.any() else []) if result in self.uniform else np.flatnonzero(m)
        for flat in flats:
            for operand, role, reads in self._reads(result, int(flat)):
                _merge(out, (operand, role), reads.copy())
        return out

    def fwd(self, operand: int, mask: np.ndarray) -> dict[tuple[int, str], np.ndarray]:
        m = _check_mask(self._operand_shape(operand), mask, f"fwd(operand #{operand})")
        out: dict[tuple[int, str], np.ndarray] = {}
        for r, rshape in enumerate(self.result_shapes):
            assert rshape is not None
            if r in self.uniform:
                for o, role, reads in self.uniform[r]:
                    if o == operand and (reads & m).any():
                        _merge(out, (r, role), np.ones(rshape, dtype=bool))
                continue
            for flat, element_reads in enumerate(self.per_element[r]):
                for o, role, reads in element_reads:
                    if o == operand and (reads & m).any():
                        hit = np.zeros(int(np.prod(rshape, dtype=np.int64)), dtype=bool)
                        hit[flat] = True
                        _merge(out, (r, role), hit.reshape(rshape))
        return out


def _one_hot(n: int, *positions: int) -> np.ndarray:
    m = np.zeros(n, dtype=bool)
    m[list(positions)] = True
    return m


def state_reads(algorithm: str, size: int) -> list[Reads]:
    """What each output_state element reads: the key is copied; the counter words are the
    old counter plus the blocks used (a PHILOX high word also takes the low word's carry)."""
    key: Reads = ((0, "copy", _one_hot(size, 0)),)
    if size == 3:
        return [key, ((0, "combine", _one_hot(size, 1)),), ((0, "combine", _one_hot(size, 1, 2)),)]
    return [key, ((0, "combine", _one_hot(size, 1)),)]


def _prov_rng_bit_generator(ctx: OpCall, inputs: list[Any], outputs: list[Any]) -> ReadsProvenance:
    size = int(inputs[0].size)
    whole: Reads = ((0, "combine", np.ones(size, dtype=bool)),)
    return ReadsProvenance([value_shape(v) for v in outputs], [value_shape(v) for v in inputs],
                           {1: whole}, {0: state_reads(ctx.attrs.rng_algorithm, size)})


# --- explain -------------------------------------------------------------------------------

def _hex(v: int, bits: int) -> str:
    return f"0x{v:0{bits // 4}X}"


def _words(ws: Sequence[int]) -> tuple[str, ...]:
    return tuple(_hex(w, 32) for w in ws)


def _check_result(outputs: list[Any], result: int, index: tuple) -> tuple[int, ...]:
    if not 0 <= result < len(outputs):
        raise ExecutionError(f"result #{result} does not exist (the op has {len(outputs)} results)")
    return check_index(value_shape(outputs[result]), index, f"result #{result} index")


def _algorithm_step(algorithm: str) -> Step:
    run = algorithm_run(algorithm)
    if algorithm == "DEFAULT":
        return Step("rng_algorithm", Msg("rng.algorithm.formula"), run,
                    substituted=Msg("rng.algorithm.default", algorithm=run))
    return Step("rng_algorithm", Msg("rng.algorithm.formula"), run)


def _key_step(state: np.ndarray) -> Step:
    s0 = int(state[0])
    return Step("key", Msg("rng.key.formula"), _words((s0 & 0xFFFFFFFF, s0 >> 32)),
                substituted=Msg("rng.key.substituted", state0=_hex(s0, 64)))


def _value_steps(o: Origin, et: ElementType, value: Any) -> list[Step]:
    """The used words -> the element: which words, the low bits kept, the bitcast."""
    width = 64 if len(o.used) == 2 else 32
    if width == 64:
        bits_step = Step("bits", Msg("rng.bits.formula64"), _hex(o.bits, 64),
                         substituted=Msg("rng.bits.substituted64", low=o.used[0], high=o.used[1]))
    else:
        bits_step = Step("bits", Msg("rng.bits.formula32"), _hex(o.bits, 32),
                         substituted=Msg("rng.bits.substituted32", word=o.used[0]))
    steps = [bits_step]
    kept = o.bits & ((1 << et.bits) - 1)
    if et.bits < width:
        steps.append(Step(Msg("rng.low_bits.name"), Msg("rng.low_bits.formula", n=et.bits),
                          _hex(kept, max(8, et.bits + (-et.bits) % 4)),
                          substituted=Msg("rng.low_bits.substituted", n=et.bits, bits=_hex(o.bits, 32))))
    if et.is_float:
        fmt = float_format(et.dtype)
        mant = fmt.precision - 1
        exp_bits = et.bits - mant - (1 if fmt.signed else 0)
        sign = (kept >> (et.bits - 1)) & 1 if fmt.signed else 0
        exponent = (kept >> mant) & ((1 << exp_bits) - 1)
        mantissa = kept & ((1 << mant) - 1)
        steps.append(Step("output[index]", Msg("rng.float.formula", type=et.name), value,
                          substituted=Msg("rng.float.substituted", sign=sign, exponent=exponent,
                                          exponent_bits=exp_bits, mantissa=mantissa, mantissa_bits=mant)))
    else:
        steps.append(Step("output[index]", Msg("rng.int.formula", type=et.name), value,
                          substituted=Msg("rng.int.substituted", bits=_hex(kept, max(8, et.bits)),
                                          type=et.name)))
    return steps


def _explain_rng_bit_generator(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
                               index: tuple) -> Explanation:
    idx = _check_result(outputs, result, index)
    state = np.asarray(inputs[0], _U64).reshape(-1)
    algorithm = ctx.attrs.rng_algorithm
    run = algorithm_run(algorithm)
    name = ctx.op.operands[0].name
    et = ctx.result_tensor(1).element
    shape = value_shape(outputs[1]) or ()
    bits = word_bits(et)
    steps = [_algorithm_step(algorithm),
             Step("initial_state", Msg("rng.state.formula"), tuple(_hex(int(v), 64) for v in state),
                  substituted=Msg("rng.state.substituted", name=name))]
    value = outputs[result][idx]
    notes = [Msg("rng.note.xla")]
    if result == 0:
        k = idx[0]
        blocks = blocks_needed(run, shape, bits)
        if k == 0:
            steps.append(Step("output_state[0]", Msg("rng.new_state.key"), _hex(int(value), 64),
                              substituted=Msg("rng.new_state.key_substituted", name=name)))
        elif k == 1:
            steps.append(Step("output_state[1]", Msg("rng.new_state.low"), _hex(int(value), 64),
                              substituted=Msg("rng.new_state.low_substituted", name=name, blocks=blocks,
                                              old=_hex(int(state[1]), 64))))
        else:
            steps.append(Step("output_state[2]", Msg("rng.new_state.high"), _hex(int(value), 64),
                              substituted=Msg("rng.new_state.high_substituted", name=name, blocks=blocks)))
        steps.append(Step(Msg("rng.blocks.name"), Msg("rng.blocks.formula_threefry" if run == "THREE_FRY"
                                                      else "rng.blocks.formula_philox"), blocks,
                          substituted=Msg("rng.blocks.substituted", shape=shape, type=et.name)))
        return Explanation(ctx.op.name, idx, steps, value, notes, result)
    o = origin(run, state, shape, bits, idx)
    steps.append(_key_step(state))
    if run == "THREE_FRY":
        if bits == 32 and shape:
            s = threefry_split(shape)
            steps.append(Step(Msg("rng.block.name"), Msg("rng.block.formula_threefry_half"), o.block,
                              substituted=Msg("rng.block.substituted_threefry_half", dim=s, position=idx[s],
                                              half=threefry_half_shape(shape))))
        else:
            steps.append(Step(Msg("rng.block.name"), Msg("rng.block.formula_flat"), o.block,
                              substituted=Msg("rng.block.substituted_flat", index=idx, shape=shape)))
        steps.append(Step("counter", Msg("rng.counter.formula_threefry"), _words(o.counter),
                          substituted=Msg("rng.counter.substituted_threefry", low=_hex(int(state[1]), 64),
                                          block=o.block)))
        steps.append(Step(Msg("rng.words.name"), Msg("rng.words.threefry"), _words(o.words),
                          substituted=Msg("rng.words.substituted", counter=_words(o.counter),
                                          key=_words(_state_words(run, state)[0]))))
    else:
        per = 2 if bits == 64 else 4
        steps.append(Step(Msg("rng.block.name"), Msg("rng.block.formula_philox", per=per), o.block,
                          substituted=Msg("rng.block.substituted_philox", index=idx, shape=shape, per=per)))
        _, low, high = _state_words(run, state)
        high_from = "rng.counter.high_from_state2" if state.size == 3 else "rng.counter.high_from_key"
        steps.append(Step("counter", Msg("rng.counter.formula_philox"), _words(o.counter),
                          substituted=Msg("rng.counter.substituted_philox", low=_hex(low, 64),
                                          high=_hex(high, 64), block=o.block, source=Msg(high_from))))
        steps.append(Step(Msg("rng.words.name"), Msg("rng.words.philox"), _words(o.words),
                          substituted=Msg("rng.words.substituted", counter=_words(o.counter),
                                          key=_words(_state_words(run, state)[0]))))
    steps += _value_steps(o, et, value)
    return Explanation(ctx.op.name, idx, steps, value, notes, result)


op("stablehlo.rng_bit_generator", aliases=("RngBitGenerator",), verify=_verify_rng_bit_generator,
   attrs=RngBitGeneratorAttrs, infer=infer_rng_bit_generator, family="rng",
   provenance=_prov_rng_bit_generator, explain=_explain_rng_bit_generator)(rng_bit_generator)


# --- rng: types ----------------------------------------------------------------------------

_RNG_KINDS = ("bool", "sint", "uint", "float")


def _scalar_problem(t: Any, label: str, what: str) -> tuple[str, str] | None:
    if not (isinstance(t, TensorType) and isinstance(t.element, ElementType) and t.rank == 0
            and t.element.kind in _RNG_KINDS):
        return label, (f"{what} must be a 0-dimensional tensor of integer, boolean or floating-point "
                       f"type, got {t}")
    return None


def _shape_problem(t: Any) -> tuple[str, str] | None:
    if not (isinstance(t, TensorType) and isinstance(t.element, ElementType) and t.rank == 1
            and t.element.kind == "sint" and t.element.bits == 64):
        return "I3", f"shape must be a 1-dimensional tensor of type si64, got {t}"
    return None


def _rng_problem(a: RngAttrs, types: list[Any]) -> tuple[str | None, str] | None:
    if len(types) != 3:
        return None, f"expects 3 operands (a, b, shape), got {len(types)}"
    ta, tb, ts = types
    problem = _scalar_problem(ta, "I1", "a") or _scalar_problem(tb, "I2", "b") or _shape_problem(ts)
    if problem is not None:
        return problem
    if not same_element(ta.element, tb.element):
        return "C1", f"element_type(a) = element_type(b) does not hold: a is {ta}, b is {tb}"
    if a.rng_distribution == "NORMAL" and not ta.element.is_float:
        return "C2", f"rng_distribution = NORMAL needs is_float(a), got {ta}"
    return None


def infer_rng(a: RngAttrs, types: list[Any]) -> list[Any]:
    """The result has a's element type (C1) and as many dims as ``shape`` has elements (C3);
    its sizes are shape's values, known when it runs."""
    problem = _rng_problem(a, types)
    if problem is not None:
        raise InferError(*problem)
    rank = types[2].shape[0]
    element = types[0].element

    def admits(t: Any) -> bool:
        return isinstance(t, TensorType) and (rank is None or t.rank == rank)

    return [Partial(None, element, check=admits,
                    what=f"a tensor of {element}" + (f" of rank {rank}" if rank is not None else ""))]


def _verify_rng(ctx: OpCall) -> None:
    problem = _rng_problem(ctx.attrs, list(ctx.operand_types))
    if problem is not None:
        raise ctx.error(*problem)
    if len(ctx.result_types) != 1:
        raise ctx.error(None, f"expects 1 result, got {len(ctx.result_types)}")
    ta, _, ts = ctx.operand_types
    res = ctx.result_types[0]
    if not isinstance(res, TensorType) or not same_element(res.element, ta.element):
        raise ctx.error("C1", f"element_type(a) = element_type(result) does not hold: a is {ta}, "
                        f"result is {res}")
    if ts.shape[0] is not None and res.rank != ts.shape[0]:
        raise ctx.error("C3", f"shape(result) = shape does not hold: shape has {ts.shape[0]} elements, "
                        f"result is {res}")


# --- rng: evaluation -----------------------------------------------------------------------

def _below(b: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """The largest value of ``dtype`` below b (b finite)."""
    fmt = float_format(dtype)
    bits = int(to_bits(np.asarray(b, dtype)).reshape(()))
    negative = fmt.signed and bits & fmt.sign_mask
    if bits & ~fmt.sign_mask == 0 and fmt.signed:  # +-0: the negative smallest denormal
        bits = fmt.sign_mask | 1
    else:
        bits = bits + 1 if negative else bits - 1
    return from_bits(np.array(bits), dtype).reshape(())


def _draws(gen: np.random.Generator, dist: str, et: ElementType, a: Any, b: Any, n: int) -> np.ndarray:
    """The generator's raw draws: u in [0, 1) (UNIFORM floats), z ~ N(0, 1) (NORMAL) or the
    integers themselves (UNIFORM integers and booleans)."""
    if dist == "NORMAL":
        return gen.standard_normal(n)
    if et.is_float:
        return gen.random(n)
    if et.is_unsigned or et.is_bool:
        return gen.integers(np.uint64(int(a)), np.uint64(int(b)), size=n, dtype=np.uint64)
    return gen.integers(int(a), int(b), size=n, dtype=np.int64)


def _check_parameters(ctx: OpCall, dist: str, et: ElementType, a: Any, b: Any) -> None:
    if dist == "NORMAL":
        if float(b) < 0:
            raise ExecutionError(f"{ctx.name}: NORMAL needs b (the standard deviation) >= 0, got {b}"
                                 " (the spec leaves b < 0 undefined)", ctx.loc)
        return
    if et.is_float and not (np.isfinite(float(a)) and np.isfinite(float(b))):
        raise ExecutionError(f"{ctx.name}: UNIFORM needs finite a and b, got a = {a}, b = {b}", ctx.loc)
    if not (float(a) < float(b) if et.is_float else int(a) < int(b)):
        raise ExecutionError(f"{ctx.name}: UNIFORM needs a < b, got a = {a}, b = {b} "
                             "(the spec leaves a >= b undefined)", ctx.loc)


def _to_type(x: np.ndarray, et: ElementType, dist: str, a: Any, b: Any) -> np.ndarray:
    """Draws to values of ``et``: the distribution's formula, rounded once to the type."""
    if not et.is_float:
        return x.astype(np.bool_) if et.is_bool else wrap_int(x, et)
    a64, b64 = float(a), float(b)
    if dist == "NORMAL":
        wide = a64 + b64 * x
    else:
        span = b64 - a64
        wide = a64 + span * x if np.isfinite(span) else a64 * (1 - x) + b64 * x
    out = wide if et.dtype == np.float64 else round_float64(wide, et.dtype)
    out = np.asarray(out, et.dtype)
    if dist == "UNIFORM":  # rounding may reach b: keep [a, b)
        out = np.where(out.astype(np.float64) >= b64, _below(np.asarray(b), et.dtype), out).astype(et.dtype)
    return out


def rng_draw(ctx: OpCall) -> int:
    """k for this execution: rng ops this interpreter ran before (the spec's hidden state)."""
    k = int(ctx.state.get("rng.draws", 0))
    ctx.state["rng.draws"] = k + 1
    return k


def rng(ctx: OpCall, a: np.ndarray, b: np.ndarray, shape: np.ndarray) -> np.ndarray:
    """result = random numbers of ``shape``: UNIFORM in [a, b) or NORMAL(mean a, sigma b)."""
    ta, tb, ts = ctx.operand_types
    check_value(ctx, a, ta, "a")
    check_value(ctx, b, tb, "b")
    check_value(ctx, shape, ts, "shape")
    res = ctx.result_tensor(0)
    dims = tuple(int(d) for d in np.asarray(shape).reshape(-1))
    if any(d < 0 for d in dims) or not shapes_compatible(res.shape, dims):
        raise ctx.error("C3", f"shape(result) = shape does not hold: shape = {list(dims)}, result is {res}")
    n = int(np.prod(dims, dtype=np.int64))
    if n > ctx.element_budget:
        raise ExecutionError(f"{ctx.name}: a result of shape {dims} has {n} elements, over the "
                             f"budget of {ctx.element_budget}", ctx.loc)
    dist = ctx.attrs.rng_distribution
    et = res.element
    _check_parameters(ctx, dist, et, a[()], b[()])
    k = rng_draw(ctx)
    ctx._rng_draw = k  # type: ignore[attr-defined]  # explain regenerates this draw
    gen = np.random.default_rng([RNG_SEED, k])
    return _to_type(_draws(gen, dist, et, a[()], b[()], n), et, dist, a[()], b[()]).reshape(dims)


def _prov_rng(ctx: OpCall, inputs: list[Any], outputs: list[Any]) -> ReadsProvenance:
    rank = int(inputs[2].size)
    reads: Reads = ((0, "combine", np.ones((), bool)), (1, "combine", np.ones((), bool)),
                    (2, "index_read", np.ones(rank, bool)))
    return ReadsProvenance([value_shape(outputs[0])], [value_shape(v) for v in inputs], {0: reads}, {})


def _explain_rng(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
                 index: tuple) -> Explanation:
    idx = _check_result(outputs, result, index)
    k = getattr(ctx, "_rng_draw", None)
    if k is None:
        raise ExecutionError(f"{ctx.name}: explain needs the op's own run (which draw it was)")
    a, b = inputs[0][()], inputs[1][()]
    dist = ctx.attrs.rng_distribution
    et = ctx.result_tensor(0).element
    out = outputs[0]
    flat = int(np.ravel_multi_index(idx, out.shape)) if out.ndim else 0
    gen = np.random.default_rng([RNG_SEED, k])
    draw = _draws(gen, dist, et, a, b, out.size)[flat]
    value = out[idx]
    names = [o.name for o in ctx.op.operands]
    steps = [
        Step("rng_distribution", Msg("rng.distribution.formula"), dist),
        Step(Msg("rng.generator.name"), Msg("rng.generator.formula"), (RNG_SEED, k),
             substituted=Msg("rng.generator.substituted", seed=RNG_SEED, k=k)),
        Step(Msg("rng.flat.name"), Msg("rng.flat.formula"), flat,
             substituted=Msg("rng.flat.substituted", index=idx, shape=tuple(out.shape), shape_name=names[2])),
    ]
    if dist == "NORMAL":
        steps.append(Step("z", Msg("rng.draw.normal"), float(draw),
                          substituted=Msg("rng.draw.substituted", flat=flat)))
        steps.append(Step("result[index]", Msg("rng.value.normal", type=et.name), value,
                          substituted=Msg("rng.value.normal_substituted", a=a, b=b, z=float(draw))))
    elif et.is_float:
        steps.append(Step("u", Msg("rng.draw.uniform_float"), float(draw),
                          substituted=Msg("rng.draw.substituted", flat=flat)))
        steps.append(Step("result[index]", Msg("rng.value.uniform_float", type=et.name), value,
                          substituted=Msg("rng.value.uniform_float_substituted", a=a, b=b, u=float(draw))))
    else:
        steps.append(Step("result[index]", Msg("rng.value.uniform_int"), value,
                          substituted=Msg("rng.value.uniform_int_substituted", a=a, b=b, flat=flat)))
    notes = [Msg("rng.note.implementation_defined", seed=RNG_SEED)]
    return Explanation(ctx.op.name, idx, steps, value, notes, result)


op("stablehlo.rng", aliases=("RngUniform", "RngNormal"), verify=_verify_rng, attrs=RngAttrs, infer=infer_rng,
   family="rng", provenance=_prov_rng, explain=_explain_rng)(rng)


# --- parameter schemas (hlolab.ops.examples) -----------------------------------------------

def _rng_schemas() -> None:
    from hlolab.ops.examples import (
        Operand,
        OpParts,
        OpSchema,
        dtype_param,
        enum_param,
        int_param,
        register_schema,
        shape_param,
        ttype,
    )

    def bits_build(p: dict[str, Any]) -> OpParts:
        n = p["state_size"]
        state = ttype((n,), "ui64")
        # a state counting 1, 2, ... (the spec example's [1, 2])
        return OpParts([Operand("initial_state", state, value=list(range(1, n + 1)))],
                       [state, ttype(p["shape"], p["dtype"])],
                       RngBitGeneratorAttrs(rng_algorithm=p["rng_algorithm"]),
                       index=(1,))  # an index of result 0, output_state: the advanced counter

    register_schema(OpSchema("stablehlo.rng_bit_generator", (
        enum_param("rng_algorithm", ALGORITHMS, "THREE_FRY", "the generator (DEFAULT: PHILOX, as XLA:CPU)"),
        int_param("state_size", 2, "words of initial_state (2; PHILOX also 3)"),
        shape_param("shape", (3, 4), "shape of the output"),
        dtype_param("ui32", "element type of the output"),
    ), {"default": {},
        "spec-example": {"rng_algorithm": "THREE_FRY", "state_size": 2, "shape": (2, 2), "dtype": "ui64",
                         "inputs": {"initial_state": [1, 2]}},
        "philox-f32": {"rng_algorithm": "PHILOX", "state_size": 3, "shape": (2, 5), "dtype": "f32"}},
        bits_build, doc="random bits from a counter-based generator, and the advanced state"))

    def rng_build(p: dict[str, Any]) -> OpParts:
        shape = p["shape"]
        scalar = ttype((), p["dtype"])
        # a and b default to [0, 10) (UNIFORM) or mean 0, sigma 1 (NORMAL)
        lo, hi = (0, 1) if p["rng_distribution"] == "NORMAL" else (0, 10)
        return OpParts([Operand("a", scalar, value=lo), Operand("b", scalar, value=hi),
                        Operand("shape", ttype((len(shape),), "i64"), value=list(shape))],
                       [ttype(shape, p["dtype"])], RngAttrs(rng_distribution=p["rng_distribution"]))

    register_schema(OpSchema("stablehlo.rng", (
        enum_param("rng_distribution", DISTRIBUTIONS, "UNIFORM",
                   "UNIFORM in [a, b), or NORMAL(mean a, sigma b)"),
        shape_param("shape", (3, 3), "shape of the result (the shape operand's values)"),
        dtype_param("i32", "element type of a, b and the result"),
    ), {"default": {},
        "spec-example": {"rng_distribution": "UNIFORM", "shape": (3, 3), "dtype": "i32",
                         "inputs": {"a": 0, "b": 2}, "index": (1, 1)},
        "normal": {"rng_distribution": "NORMAL", "shape": (4, 5), "dtype": "f32", "index": (2, 3)}},
        rng_build, doc="random numbers of a given shape: uniform in [a, b) or normal"))


_rng_schemas()
