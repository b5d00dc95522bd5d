"""Recognizing region bodies that numpy can run directly.

Ops that apply a region to many elements (scatter, later reduce and
reduce_window) first ask ``recognize_binary``: a body that is one lone
``add``/``multiply``/``maximum``/``minimum``/``and``/``or``/``xor`` of its
``(lhs_i, rhs_i)`` pair per output, or that returns ``rhs_i`` (replace) or
``lhs_i`` (keep), is applied with numpy ufuncs (``combine_at``) instead of
the interpreter. Any other body runs through the interpreter, batched.

The numpy paths give exactly the element-wise ops' values (hlolab.ops.elementwise):

* integers wrap at their bit width: computed in int64/uint64 and wrapped back,
  which is exact for +, *, and, or, xor (arithmetic mod 2^64 keeps the low bits);
* i1: add is OR, multiply is AND, maximum is OR, minimum is AND;
* floats: ``ufunc.at`` applies the updates one by one in the order given
  (numpy's unbuffered ``at``), each rounded to the element type as one
  element-wise add/multiply would (bf16/f16/f8: computed in f32, rounded once);
* float maximum/minimum: NaN propagates (the first NaN of the chain stays, as
  the element-wise op keeps a NaN ``lhs``) and -0.0 < +0.0, which
  ``np.maximum.at`` alone gets wrong (it keeps whichever zero came first).

Complex maximum/minimum have no numpy path here (``combine_at`` returns False
and the caller runs the region).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hlolab.ir.module import Region, Value
from hlolab.numerics import extremum_key, is_nan_key, key_value
from hlolab.ops.common import is_promotable, per_tensor_type, same_element, shapes_compatible, wrap_int
from hlolab.ops.elementwise import _wide
from hlolab.ops.registry import OpCall
from hlolab.types import ElementType, TensorType

BINARY_OPS: dict[str, str] = {
    "stablehlo.add": "add",
    "stablehlo.multiply": "multiply",
    "stablehlo.maximum": "maximum",
    "stablehlo.minimum": "minimum",
    "stablehlo.and": "and",
    "stablehlo.or": "or",
    "stablehlo.xor": "xor",
}

_RETURNS = ("stablehlo.return", "func.return", "return")


def recognize_binary_each(region: Region) -> list[str] | None:
    """Per output ``i``, the name of the body's combination of ``(lhs_i, rhs_i)``
    ("add", ..., "replace", "keep"), or None when the body is anything else.

    The block must have 2N rank-0 tensor arguments ``lhs_0..lhs_{N-1},
    rhs_0..rhs_{N-1}`` and return N values; every op in it must feed the return.
    """
    if len(region.blocks) != 1:
        return None
    block = region.entry
    args = block.args
    if not args or len(args) % 2 or not block.ops:
        return None
    if not all(isinstance(a.type, TensorType) and a.type.rank == 0 for a in args):
        return None
    n = len(args) // 2
    ret = block.ops[-1]
    if ret.name not in _RETURNS or len(ret.operands) != n:
        return None
    produced: dict[Value, tuple[str, int]] = {}  # op result -> (name, pair it combines)
    for o in block.ops[:-1]:
        name = BINARY_OPS.get(o.name)
        if name is None or len(o.operands) != 2 or len(o.results) != 1 or o.regions:
            return None
        pair = _pair_of(args, n, o.operands[0], o.operands[1])
        if pair is None or o.results[0].type != args[pair].type:
            return None
        produced[o.results[0]] = (name, pair)
    names: list[str] = []
    used: set[Value] = set()
    for i, v in enumerate(ret.operands):
        if v is args[i]:
            names.append("keep")
        elif v is args[n + i]:
            names.append("replace")
        elif v in produced and produced[v][1] == i:
            names.append(produced[v][0])
            used.add(v)
        else:
            return None
    if len(used) != len(produced):  # an op whose value is never returned
        return None
    return names


def recognize_binary(region: Region) -> str | None:
    """The one combination every output of the body uses ("add", "maximum",
    "replace", ...), or None (not recognized, or outputs combined differently)."""
    names = recognize_binary_each(region)
    if not names or any(n != names[0] for n in names):
        return None
    return names[0]


def region_reads(region: Region) -> np.ndarray:
    """Which block arguments each returned value is computed from: bool
    ``(returns, arguments)``, by dataflow through the body (an op's results read all of
    its operands; an op with regions also reads every value those regions use). A body
    that returns its update argument unchanged (``x.at[i].set(u)``) does not read the
    current value: scatter's provenance uses this to leave overwritten elements out."""
    block = region.entry
    index = {a: i for i, a in enumerate(block.args)}
    reads: dict[Value, np.ndarray] = {}
    none = np.zeros(len(block.args), dtype=bool)

    def of(v: Value) -> np.ndarray:
        if v in index:
            m = none.copy()
            m[index[v]] = True
            return m
        return reads.get(v, none)  # a constant or a value captured from outside

    for o in block.ops:
        used = list(o.operands)
        for inner in o.walk():
            if inner is not o:
                used += inner.operands
        m = none.copy()
        for v in used:
            m |= of(v)
        if o.name in _RETURNS:
            rows = [of(v) for v in o.operands]
            return np.stack(rows) if rows else np.zeros((0, len(block.args)), dtype=bool)
        for r in o.results:
            reads[r] = m
    return np.zeros((0, len(block.args)), dtype=bool)


def bool_powers(m: np.ndarray, exponents: np.ndarray) -> np.ndarray:
    """``m ** e`` in boolean matrix algebra for every e of ``exponents``: shape
    ``exponents.shape + m.shape``. Powers of a boolean matrix repeat with some period, so
    only the powers up to the first repeat are computed, however large ``e`` is."""
    n = m.shape[0]
    powers = [np.eye(n, dtype=bool)]
    seen = {powers[0].tobytes(): 0}
    top = int(exponents.max()) if exponents.size else 0
    start = period = None
    while len(powers) <= top:
        nxt = (powers[-1].astype(np.int64) @ m.astype(np.int64)) > 0
        key = nxt.tobytes()
        if key in seen:
            start = seen[key]
            period = len(powers) - start
            break
        seen[key] = len(powers)
        powers.append(nxt)
    table = np.stack(powers)
    e = np.asarray(exponents, dtype=np.int64)
    if start is not None and period is not None:
        e = np.where(e >= start, start + (e - start) % period, e)
    return table[e]


def check_inputs_and_inits(ctx: OpCall, count: str, shape: str,
                           element: str) -> tuple[list[TensorType], list[TensorType]]:
    """The operands ``inputs..., init_values...`` of reduce and reduce_window with their
    shared constraints (constraint labels differ per op): ``0 < size(inputs) =
    size(init_values) = size(results)``, rank-0 init values (I2), ``same(shape(inputs...))``
    and ``element_type(inputs[i]) = element_type(init_values[i])``."""
    types = ctx.operand_types
    n = len(types) // 2
    if n == 0 or len(types) % 2 or len(ctx.result_types) != n:
        raise ctx.error(count, f"0 < size(inputs) = size(init_values) = size(results) does not hold: "
                        f"{len(types)} operands (inputs..., init_values...) and "
                        f"{len(ctx.result_types)} results")
    inputs = [per_tensor_type(ctx, t, "I1", f"inputs[{i}]") for i, t in enumerate(types[:n])]
    inits = [per_tensor_type(ctx, t, "I2", f"init_values[{i}]") for i, t in enumerate(types[n:])]
    for i, t in enumerate(inits):
        if t.rank != 0:
            raise ctx.error("I2", f"init_values[{i}] must be a 0-dimensional tensor, got {t}")
    for i, t in enumerate(inputs):
        if not shapes_compatible(t.shape, inputs[0].shape):
            raise ctx.error(shape, f"same(shape(inputs...)) does not hold: inputs[{i}] is {t}, "
                            f"inputs[0] is {inputs[0]}")
    for i, (a, b) in enumerate(zip(inputs, inits, strict=True)):
        if not same_element(a.element, b.element):
            raise ctx.error(element, f"element_type(inputs[{i}]) = {a.element} must equal "
                            f"element_type(init_values[{i}]) = {b.element}")
    return inputs, inits


def check_combiner_types(ctx: OpCall, inputs: list[TensorType], constraint: str,
                         what: str = "body", region: int = 0) -> list[Any]:
    """The spec's combiner signature (reduce C6, reduce_window C13, scatter C23):
    ``what`` has type ``(tensor<E0>, ..., tensor<EN-1>, tensor<E0>, ..., tensor<EN-1>) ->
    (tensor<E0>, ..., tensor<EN-1>)`` with ``is_promotable(element_type(inputs[i]), Ei)``.
    Returns the ``Ei``; a violation is ``ctx.error(constraint, ...)``."""
    n = len(inputs)
    if len(ctx.op.regions) <= region or not ctx.op.regions[region].blocks:
        raise ctx.error(constraint, f"{ctx.name.removeprefix('stablehlo.')} needs a {what} region")
    block = ctx.op.regions[region].entry
    got = [a.type for a in block.args]
    ret = block.ops[-1] if block.ops else None
    rtypes = list(ret.operand_types) if ret is not None and ret.name in _RETURNS else None
    have = f"({', '.join(str(g) for g in got)}) -> " + (
        f"({', '.join(str(r) for r in rtypes)})" if rtypes is not None else "no return")
    if len(got) != 2 * n or not all(isinstance(g, TensorType) and g.rank == 0 for g in got):
        raise ctx.error(constraint, f"{what} must take 2 * {n} rank-0 tensors (tensor<E0>, ..., "
                        f"tensor<E{n - 1}>, tensor<E0>, ...), got {have}")
    es = [got[i].element for i in range(n)]
    for i in range(n):
        if not same_element(got[n + i].element, es[i]):
            raise ctx.error(constraint, f"{what} arguments {i} and {n + i} must both be tensor<E{i}>, "
                            f"got {got[i]} and {got[n + i]}: {have}")
        if not is_promotable(inputs[i].element, es[i]):
            raise ctx.error(constraint, f"is_promotable(element_type(inputs[{i}]) = {inputs[i].element}, "
                            f"E{i} = {es[i]}) does not hold: {have}")
    if rtypes is None or len(rtypes) != n or not all(
            isinstance(r, TensorType) and r.rank == 0 and same_element(r.element, e)
            for r, e in zip(rtypes, es, strict=True)):
        want = ", ".join(f"tensor<{e}>" for e in es)
        raise ctx.error(constraint, f"{what} must return ({want}), got {have}")
    return es


def _pair_of(args: list[Value], n: int, a: Value, b: Value) -> int | None:
    """i when {a, b} is {lhs_i, rhs_i} (either order), else None."""
    for i in range(n):
        if (a is args[i] and b is args[n + i]) or (a is args[n + i] and b is args[i]):
            return i
    return None


# --- applying a recognized combination ---------------------------------------------------

# the numpy ufunc of each recognized combination (i1: add is or, multiply is and, ...)

BOOL_UFUNCS = {"add": np.logical_or, "or": np.logical_or, "maximum": np.logical_or,
                "multiply": np.logical_and, "and": np.logical_and, "minimum": np.logical_and,
                "xor": np.logical_xor}
INT_UFUNCS = {"add": np.add, "multiply": np.multiply, "maximum": np.maximum, "minimum": np.minimum,
               "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}


def can_combine_at(name: str, et: Any) -> bool:
    """Whether a recognized combination ``name`` has an exact numpy path on element type
    ``et`` (``combine_at`` here, the reductions of reduce and reduce_window)."""
    if name in ("keep", "replace"):
        return True
    if not isinstance(et, ElementType):
        return False
    if et.is_bool or et.is_int:
        return True
    if et.is_float:
        return name in ("add", "multiply", "maximum", "minimum")
    if et.is_complex:
        return name in ("add", "multiply")
    return False


def combine_at(name: str, acc: np.ndarray, targets: np.ndarray, values: np.ndarray,
               et: ElementType) -> bool:
    """``acc[targets[j]] = name(acc[targets[j]], values[j])`` for j = 0, 1, ... in order,
    in place (``acc`` flat). Returns False (acc untouched) when there is no exact
    numpy path; the caller then runs the region."""
    if not can_combine_at(name, et):
        return False
    t = np.asarray(targets, dtype=np.int64).reshape(-1)
    v = np.asarray(values).reshape(-1)
    if name == "keep" or t.size == 0:
        return True
    if name == "replace":  # the last write in order wins
        uniq, first_from_end = np.unique(t[::-1], return_index=True)
        acc[uniq] = v[::-1][first_from_end]
        return True
    if et.is_bool:
        BOOL_UFUNCS[name].at(acc, t, v)
        return True
    if et.is_int:
        wide = _wide(acc, et)
        INT_UFUNCS[name].at(wide, t, _wide(v, et))
        acc[...] = wrap_int(wide, et)
        return True
    if name in ("add", "multiply"):
        (np.add if name == "add" else np.multiply).at(acc, t, v.astype(acc.dtype))
        return True
    _float_extremum_at(acc, t, v, name == "maximum")
    return True


def _float_extremum_at(acc: np.ndarray, t: np.ndarray, v: np.ndarray, is_max: bool) -> None:
    """Sequential element-wise maximum/minimum of each target's chain [acc, v_1, v_2, ...],
    vectorized on ``numerics.extremum_key``: the chain's largest key wins, and among NaN keys
    the first NaN of the chain (the running max keeps a NaN lhs and takes a NaN rhs)."""
    ka = extremum_key(acc, is_max)
    kv = extremum_key(v, is_max)
    best = ka.copy()
    (np.maximum if is_max else np.minimum).at(best, t, kv)
    out = acc.copy()
    number = ~is_nan_key(best, is_max) & (best != ka)  # an update's number won: its exact value
    out[number] = key_value(best[number]).astype(acc.dtype)
    # a NaN won and acc is not NaN: the first NaN update of the target, by position
    nan_upd = is_nan_key(best, is_max) & ~is_nan_key(ka, is_max)
    if nan_upd.any():
        vnan = is_nan_key(kv, is_max)
        first = np.full(acc.shape, v.size, dtype=np.int64)
        np.minimum.at(first, t[vnan], np.arange(v.size, dtype=np.int64)[vnan])
        out[nan_upd] = v[first[nan_upd]]
    acc[...] = out  # a NaN acc stays as it is
