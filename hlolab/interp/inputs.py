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

LITERAL_HINT = "[[1, 2], [3, 4]] · dense<…> · 7"


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
    if not t.is_static:  # a `?` size is the input's to choose: no default size is made up
        raise UnsupportedError(f"{what} has dynamic shape {t}: a random input needs every size; give "
                               "the value with --args (dense<…> : tensor<…> with its sizes) or "
                               "--input FILE.npy")
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
    """``given`` arguments (a prefix; ``None`` marks one to make), the others of ``func``
    random from ``seed``, drawn in argument order (each checked against the budget before
    it is made)."""
    if len(given) > len(func.args):
        raise ExecutionError(f"@{func.name} takes {len(func.args)} arguments, got {len(given)}")
    values = list(given) + [None] * (len(func.args) - len(given))
    missing = [i for i, v in enumerate(values) if v is None]
    if missing and seed is None:
        n = len(values) - len(missing)
        got = f", got {n}: give the others" if n else ": give them"
        raise ExecutionError(f"@{func.name} takes {len(func.args)} arguments{got} with --args, "
                             "--input FILE.npy, or --seed N for random values")
    rng = np.random.default_rng(seed) if missing else None
    for i in missing:
        values[i] = random_value(func.args[i].type, rng, budget, f"argument #{i} of @{func.name}")
    return values


def parse_literal(text: str, t: TensorType, who: str = "the value",
                  budget: int | None = ELEMENT_BUDGET) -> np.ndarray:
    """A value of type ``t`` from a dense literal (``dense<[[1, 2]]>``, with or without
    ``: tensor<…>``), a bare body (``[[1, 2]]``) or one number for every element: MLIR's own
    literal rules (``hlolab.ir.dense``), exact element type. A HloLabError says why not."""
    from hlolab.ir.dense import DenseSyntaxError, parse_dense
    from hlolab.ir.parser import parse_type

    body = text.strip()
    if not body:
        raise HloLabError(f"{who}: empty; e.g. {LITERAL_HINT}")
    if body.startswith("dense<"):
        head, colon, typ = body.rpartition(":") if ":" in body else (body, "", "")
        head = head.strip()
        if not head.endswith(">"):
            raise HloLabError(f"{who}: a dense literal ends with '>', as in dense<[1, 2]>")
        if colon:
            try:
                declared = parse_type(typ.strip(), "<literal>")
            except HloLabError as e:
                raise HloLabError(f"{who}: cannot read the type {typ.strip()!r}: {e.message}") from None
            # a `?` size of the argument takes the literal's size
            fits = (isinstance(declared, TensorType) and declared.is_static and declared.rank == t.rank
                    and all(d is None or d == n for d, n in zip(t.shape, declared.shape)))
            if not fits:
                raise HloLabError(f"{who}: the literal's type {typ.strip()} does not have the shape of "
                                  f"{t}")
            t = TensorType(declared.shape, t.element, t.encoding)
        elif not t.is_static:
            raise HloLabError(f"{who}: the argument's type {t} has a dynamic size: write the literal with "
                              "its type, dense<…> : tensor<…>, to give the sizes")
        body = head[len("dense<"):-1]
    elif not t.is_static:
        raise HloLabError(f"{who}: the argument's type {t} has a dynamic size: write a dense literal with "
                          "its type, dense<…> : tensor<…>, to give the sizes")
    check_budget(t.static_shape(who), budget, who)  # one number fills every element
    try:
        return parse_dense(body, t)
    except DenseSyntaxError as e:
        raise HloLabError(f"{who}: {e.message} (at character {e.offset + 1} of the values; "
                          f"the type is {t})") from None


def input_value(text: str, t: Type, who: str, budget: int | None = ELEMENT_BUDGET) -> np.ndarray:
    """One argument typed by a user: a ``.npy`` path, else a literal of type ``t``."""
    body = text.strip()
    if body.endswith(".npy"):
        return load_npy(Path(body).expanduser(), budget)
    if not isinstance(t, TensorType):
        raise HloLabError(f"{who}: a literal gives a tensor, the argument is {t}")
    return parse_literal(body, t, who, budget)


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
