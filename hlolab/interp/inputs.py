"""Program inputs: seeded random values of a given type and ``.npy`` files, each
refused before it is allocated when a tensor is over the element budget."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from hlolab.errors import ExecutionError, HloLabError, UnsupportedError
from hlolab.limits import ELEMENT_BUDGET
from hlolab.ops.registry import TOKEN
from hlolab.types import TensorType, TokenType, TupleType, Type


def check_budget(shape: tuple[int, ...], budget: int | None, what: str) -> None:
    """Refuse a tensor of ``shape`` over ``budget`` elements, before anything allocates it."""
    n = math.prod(int(d) for d in shape)
    if budget is not None and n > budget:
        dims = "x".join(str(d) for d in shape)
        raise ExecutionError(f"{what}: a {dims} tensor has {n:,} elements, over the element budget of "
                             f"{budget:,} (--max-elements)")


def random_value(t: Type, rng: np.random.Generator, budget: int | None = ELEMENT_BUDGET,
                 what: str = "a random input") -> Any:
    """A reproducible random value of type ``t`` (small ints, normal floats)."""
    if isinstance(t, TupleType):
        return tuple(random_value(s, rng, budget, what) for s in t.types)
    if isinstance(t, TokenType):
        return TOKEN
    if not isinstance(t, TensorType):
        raise UnsupportedError(f"cannot make a random value of type {t}")
    shape = t.static_shape("a random input")
    check_budget(shape, budget, what)
    et = t.element
    kind = getattr(et, "kind", "quant")
    if kind == "bool":
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if kind in ("sint", "uint", "quant"):
        lo, hi = (-8, 8) if kind != "uint" else (0, 16)
        if kind == "quant":
            lo, hi = int(et.storage.min_value()), int(et.storage.max_value()) + 1
        else:
            lo, hi = max(lo, int(et.min_value())), min(hi, int(et.max_value()) + 1)
        return rng.integers(lo, hi, size=shape).astype(t.dtype)
    if kind == "complex":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(t.dtype)
    return rng.standard_normal(shape).astype(t.dtype)


def random_args(func: Any, given: list[Any], seed: int | None,
                budget: int | None = ELEMENT_BUDGET) -> list[Any]:
    """``given`` arguments, then the rest of ``func``'s random from ``seed`` (each checked
    against the budget before it is made)."""
    values = list(given)
    if len(values) > len(func.args):
        raise ExecutionError(f"@{func.name} takes {len(func.args)} arguments, got {len(values)}")
    if len(values) < len(func.args):
        if seed is None:
            got = f", got {len(values)}: give the others" if values else ": give them"
            raise ExecutionError(f"@{func.name} takes {len(func.args)} arguments{got} with --args, "
                                 "--input FILE.npy, or --seed N for random values")
        rng = np.random.default_rng(seed)
        for i, a in enumerate(func.args[len(values):], start=len(values)):
            values.append(random_value(a.type, rng, budget, f"argument #{i} of @{func.name}"))
    return values


def load_npy(path: str | Path, budget: int | None = ELEMENT_BUDGET) -> np.ndarray:
    """The array in a ``.npy`` file, read only when it is one, holds numbers and fits the
    budget (its header says so before the data is read)."""
    where = f"input {path}"
    try:
        with open(path, "rb") as f:
            try:
                version = np.lib.format.read_magic(f)
            except ValueError:
                f.seek(0)
                head = f.read(16)
                raise HloLabError(f"cannot load {where}: not a .npy file (it starts with {head!r}); "
                                  "save arrays with numpy.save") from None
            read = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                    else np.lib.format.read_array_header_2_0)
            shape, _, dtype = read(f)
    except (OSError, ValueError) as e:
        raise HloLabError(f"cannot load {where}: {e}") from None
    if dtype.hasobject:
        raise HloLabError(f"cannot load {where}: it holds Python objects (pickled), not numbers; "
                          "save a numeric array, e.g. numpy.save(path, numpy.asarray(x, numpy.float32))")
    check_budget(tuple(shape), budget, where)
    try:
        return np.load(path, allow_pickle=False)
    except (OSError, ValueError) as e:
        raise HloLabError(f"cannot load {where}: {e}") from None
