"""sort: variadic inputs sorted together along ``dimension`` by a comparator region.

Two ways to run it, one result:

* Recognized comparators — one key input compared LT or GT (optionally with
  compare_type TOTALORDER, optionally after JAX's canonicalization of -0.0 to
  +0.0 and of every NaN to one NaN) — are numpy's stable argsort on a key:
  the value itself (SIGNED/UNSIGNED/FLOAT) or ``total_order_key`` (TOTALORDER).
  A FLOAT comparison with a NaN in the row is no strict weak order (NaN is
  "equal" to everything), so such rows take the merge sort below with the
  same comparison done in numpy: the result is exactly what that comparator
  decides under our stable merge sort (XLA leaves it implementation-defined).
* Any other comparator runs as a stable, batched bottom-up merge sort. Each
  merge level places every element of every row by binary search in the
  other run of its pair; every binary-search step is *one* region call over
  all rows and pairs at once (``ctx.run_region``), never one call per pair.

The sort is always stable (a valid choice for ``is_stable = false`` too).
Quantized inputs sort as their storage integers, moved unchanged; the comparator's compare
dequantizes them (dequantize_compare). Values a comparator captures from outside are not
traced by the provenance.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from hlolab.errors import ExecutionError
from hlolab.ir.attrs import DenseElementsAttr
from hlolab.ir.module import Op, Value
from hlolab.messages import Msg
from hlolab.ops.common import check_value, contiguous
from hlolab.ops.compare import compare_arrays, default_compare_type, total_order_key
from hlolab.ops.record import Attrs, InferError, attr, boolean, integer, record
from hlolab.ops.registry import OpCall, op
from hlolab.ops.shape import same_type
from hlolab.trace.explain import DimRole, Explanation, Step
from hlolab.trace.provenance import (
    Provenance,
    Source,
    Target,
    _check_mask,
    _merge,
    check_index,
    value_shape,
)
from hlolab.types import ElementType, QuantizedElementType, TensorType

Less = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


@record
class SortAttrs(Attrs):
    dimension: int = attr(integer("dimension"), default=-1)
    is_stable: bool = attr(boolean("is_stable"), default=False)


def infer_sort(a: SortAttrs, types: list[Any]) -> list[TensorType]:
    """type(results...) = type(inputs...) (C2)."""
    if not types:
        raise InferError("C1", "0 < size(inputs) does not hold: no inputs")
    for i, t in enumerate(types):
        if not isinstance(t, TensorType):
            raise InferError("I1", f"inputs[{i}] must be a tensor, got {t}")
    return list(types)


# --- verify ------------------------------------------------------------------------------

def _verify_sort(ctx: OpCall) -> None:
    types = ctx.operand_types
    if not types:
        raise ctx.error("C1", "0 < size(inputs) does not hold: no inputs")
    for i, t in enumerate(types):
        if not isinstance(t, TensorType) or (isinstance(t.element, QuantizedElementType)
                                             and t.element.is_per_axis):
            raise ctx.error("I1", f"inputs[{i}] must be a tensor or per-tensor quantized tensor, got {t}")
    results = ctx.result_types
    if len(results) != len(types) or not all(same_type(a, b) for a, b in zip(types, results, strict=True)):
        raise ctx.error("C2", f"type(inputs...) = {[str(t) for t in types]} must equal "
                        f"type(results...) = {[str(t) for t in results]}")
    shape0 = types[0].shape
    for t in (*types, *results):
        if len(t.shape) != len(shape0) or any(a is not None and b is not None and a != b
                                              for a, b in zip(t.shape, shape0, strict=True)):
            raise ctx.error("C3", f"all inputs and results must have one shape: {list(shape0)} and "
                            f"{list(t.shape)} differ")
    rank = types[0].rank
    d = ctx.attrs.dimension
    if not -rank <= d < rank:
        raise ctx.error("C4", f"-R <= dimension < R does not hold: dimension = {d}, R = {rank}")
    _verify_comparator(ctx, types)


def _verify_comparator(ctx: OpCall, types: list[TensorType]) -> None:
    want = [f"tensor<{t.element}>" for t in types for _ in (0, 1)]
    if len(ctx.op.regions) != 1 or not ctx.op.regions[0].blocks:
        raise ctx.error("C5", "sort needs one comparator region")
    block = ctx.op.regions[0].entry
    got = [a.type for a in block.args]
    ok = len(got) == len(want) and all(
        isinstance(g, TensorType) and g.rank == 0 and same_type(g, TensorType((), t.element))
        for g, t in zip(got, [t for t in types for _ in (0, 1)], strict=True))
    ret = block.ops[-1] if block.ops else None
    rtypes = ret.operand_types if ret is not None and ret.name.endswith("return") else None
    ok = ok and rtypes is not None and len(rtypes) == 1 and isinstance(rtypes[0], TensorType) \
        and rtypes[0].rank == 0 and isinstance(rtypes[0].element, ElementType) \
        and rtypes[0].element.kind == "bool"
    if not ok:
        have = ", ".join(str(g) for g in got)
        ret_s = ", ".join(str(r) for r in rtypes) if rtypes is not None else "no return"
        raise ctx.error("C5", f"comparator must have type ({', '.join(want)}) -> tensor<i1>, got "
                        f"({have}) -> {ret_s}")


# --- recognizing comparators -------------------------------------------------------------

@dataclass(frozen=True)
class Recognized:
    """A comparator that is ``compare(f(inputs[key] lhs), f(inputs[key] rhs))``."""

    key: int  # which input is compared
    descending: bool  # GT (or LT with swapped arguments)
    compare_type: str  # FLOAT / TOTALORDER / SIGNED / UNSIGNED
    canon_zero: bool  # f maps -0.0 to +0.0 first
    canon_nan: np.ndarray | None  # f maps every NaN to this value
    message: Msg  # the comparison, for explain


def _const(op: Op) -> np.ndarray | None:
    if op.name != "stablehlo.constant":
        return None
    a = op.attributes.get("value")
    return np.asarray(a.array) if isinstance(a, DenseElementsAttr) and a.array.size == 1 else None


def recognize_comparator(ctx: OpCall) -> Recognized | None:
    """The comparator as a key comparison, or None when it is anything else."""
    types = ctx.operand_types
    block = ctx.op.regions[0].entry
    args = {a: i for i, a in enumerate(block.args)}
    # abstract values: ("arg", i, zero, nan) = the chain f applied to argument i
    sym: dict[Value, tuple] = {a: ("arg", i, False, None) for a, i in args.items()}
    final: tuple | None = None
    for o in block.ops:
        if o.name.endswith("return"):
            final = sym.get(o.operands[0]) if len(o.operands) == 1 else None
            break
        c = _const(o)
        if c is not None:
            sym[o.results[0]] = ("const", c)
            continue
        ins = [sym.get(v) for v in o.operands]
        if any(s is None for s in ins) or len(o.results) != 1:
            return None
        res = _step(o, ins)
        if res is None:
            return None
        sym[o.results[0]] = res
    if final is None or final[0] != "cmp":
        return None
    _, direction, ctype, lhs, rhs = final
    if lhs[0] != "arg" or rhs[0] != "arg" or lhs[2:3] != rhs[2:3] or direction not in ("LT", "GT"):
        return None
    if (lhs[3] is None) != (rhs[3] is None) or (lhs[3] is not None and lhs[3].tobytes() != rhs[3].tobytes()):
        return None
    i, j = lhs[1], rhs[1]
    if i // 2 != j // 2 or i == j:
        return None
    key = i // 2
    et = types[key].element
    if not isinstance(et, ElementType):
        return None
    allowed = ("FLOAT", "TOTALORDER") if et.kind == "float" else (default_compare_type(et),)
    ctype = ctype or default_compare_type(et)
    if ctype not in allowed or et.is_complex and ctype != "FLOAT":
        return None
    swapped = i % 2 == 1
    descending = (direction == "GT") != swapped
    side = "sort.comparator.side_canonical" if lhs[2] or lhs[3] is not None else "sort.comparator.side"
    message = Msg("sort.comparator.compare", direction=direction,
                  lhs=Msg(side, key=key, side="rhs" if swapped else "lhs"),
                  rhs=Msg(side, key=key, side="lhs" if swapped else "rhs"), compare_type=ctype)
    return Recognized(key, descending, ctype, lhs[2], lhs[3], message)


def _step(o: Op, ins: list[tuple]) -> tuple | None:
    """One op of the comparator in the abstract domain (None: not a recognized shape)."""
    if o.name == "stablehlo.compare":
        direction = o.attributes.get("comparison_direction")
        ctype = o.attributes.get("compare_type")
        direction = getattr(direction, "value", None)
        ctype = getattr(ctype, "value", None)
        a, b = ins
        if a[0] == "arg" and b[0] == "const" and direction == "EQ" and float(b[1]) == 0.0:
            return ("eq0", a)
        if a[0] == "arg" and b == a and direction == "NE" and ctype in (None, "FLOAT"):
            return ("isnan", a)
        if a[0] == "arg" and b[0] == "arg":
            return ("cmp", direction, ctype, a, b)
        return None
    if o.name == "stablehlo.select":
        p, t, f = ins
        # select(x == 0, 0.0, x): -0.0 -> +0.0 (a positive zero constant)
        if p[0] == "eq0" and t[0] == "const" and f == p[1] and float(t[1]) == 0.0 \
                and not np.signbit(np.asarray(t[1], np.float64)) and not f[2] and f[3] is None:
            return ("arg", f[1], True, None)
        # select(x != x, NaN, g(x)): every NaN -> one NaN
        if p[0] == "isnan" and t[0] == "const" and f[0] == "arg" and p[1][1] == f[1] \
                and np.isnan(np.asarray(t[1], np.float64)) and f[3] is None:
            return ("arg", f[1], f[2], t[1])
    return None


def _canonical(x: np.ndarray, rec: Recognized) -> np.ndarray:
    if rec.canon_zero:
        x = np.where(x == 0, np.zeros((), x.dtype), x)
    if rec.canon_nan is not None:
        x = np.where(np.isnan(x), np.asarray(rec.canon_nan, x.dtype).reshape(()), x)
    return x


def _argsort_key(key: np.ndarray, et: ElementType, rec: Recognized) -> np.ndarray | None:
    """Orderable values for numpy (None: the comparison is no strict weak order here)."""
    if et.is_bool:
        return key.astype(np.uint8)
    if et.is_int:
        return key.astype(np.int64 if et.is_signed else np.uint64)
    if rec.compare_type == "TOTALORDER":
        return total_order_key(key)
    if et.is_complex:
        if np.isnan(key.real).any() or np.isnan(key.imag).any():
            return None
        return key.astype(np.complex128)  # numpy orders complex lexicographically, as compare does
    wide = key.astype(np.float64)  # exact; -0.0 == +0.0 ties, as FLOAT LT decides
    return None if np.isnan(wide).any() else wide


# --- the permutation ---------------------------------------------------------------------

def _rows(x: np.ndarray, dim: int) -> np.ndarray:
    """The 1-D slices along ``dim`` as rows of a (rows, n) array."""
    # the row count explicitly: reshape(-1, 0) is ambiguous for zero-size tensors
    rows = int(np.prod(x.shape[:dim] + x.shape[dim + 1:], dtype=np.int64))
    return np.moveaxis(x, dim, -1).reshape(rows, x.shape[dim])


def _unrows(rows: np.ndarray, shape: tuple[int, ...], dim: int) -> np.ndarray:
    moved = shape[:dim] + shape[dim + 1:] + (shape[dim],)
    return np.moveaxis(rows.reshape(moved), -1, dim)


def merge_sort_permutation(less: Less, m: int, n: int) -> np.ndarray:
    """Stable bottom-up merge sort of ``m`` rows of ``n`` elements; returns perm (m, n) with
    sorted[r, k] = row r's element perm[r, k].

    ``less(rows, lhs_cols, rhs_cols)`` compares elements of equal-length flat batches. Each
    element of run A of a pair lands at i + #{B elements less than it}, each element of run B at
    j + #{A elements not greater}; both counts come from one shared binary search, one
    ``less`` call per step over all rows and pairs. The padding to a power of two is never
    compared: a pad is greater than every element and not less than anything. Positions are
    ordered with a stable argsort, so even a comparator that is no strict weak order gives a
    permutation.
    """
    n2 = 1 << max(0, (n - 1).bit_length())
    perm = np.broadcast_to(np.arange(n2, dtype=np.int64), (m, n2)).copy()
    row_ids = np.arange(m, dtype=np.int64)[:, None, None]
    w = 1
    while w < n2:
        runs = perm.reshape(m, n2 // (2 * w), 2, w)
        a, b = runs[:, :, 0, :], runs[:, :, 1, :]
        rows = np.broadcast_to(row_ids, a.shape)
        lo = np.zeros((2,) + a.shape, dtype=np.int64)  # [0]: A searching B, [1]: B searching A
        hi = np.full_like(lo, w)
        for _ in range(w.bit_length()):
            active = lo < hi
            if not active.any():
                break
            mid = np.minimum((lo + hi) // 2, w - 1)
            # the predicate is less(B[.], A[.]) for both searches
            lhs = np.stack([np.take_along_axis(b, mid[0], axis=-1), b])
            rhs = np.stack([a, np.take_along_axis(a, mid[1], axis=-1)])
            rr = np.stack([rows, rows])
            res = _less_padded(less, rr, lhs, rhs, n)
            # A: first j with not less(B[j], A[i]) -> advance while less; B: first i with less
            go_right = np.stack([res[0], ~res[1]])
            lo = np.where(active & go_right, mid + 1, lo)
            hi = np.where(active & ~go_right, mid, hi)
        idx = np.arange(w, dtype=np.int64)
        pos = np.concatenate([2 * (idx + lo[0]), 2 * (idx + lo[1]) + 1], axis=-1)  # A first on ties
        order = np.argsort(pos, axis=-1, kind="stable")
        both = np.concatenate([a, b], axis=-1)
        perm = np.take_along_axis(both, order, axis=-1).reshape(m, n2)
        w *= 2
    return perm[:, :n] if n2 != n else perm


def _less_padded(less: Less, rows: np.ndarray, lhs: np.ndarray, rhs: np.ndarray, n: int) -> np.ndarray:
    lpad, rpad = lhs >= n, rhs >= n
    out = ~lpad & rpad  # an element is less than a pad; a pad is less than nothing
    real = ~lpad & ~rpad
    if real.any():
        out[real] = np.asarray(less(rows[real], lhs[real], rhs[real]), dtype=bool).reshape(-1)
    return out


def _region_less(ctx: OpCall, rows_of: list[np.ndarray]) -> Less:
    def less(rows: np.ndarray, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
        args: list[Any] = []
        for x in rows_of:
            args += [x[rows, lhs], x[rows, rhs]]
        (res,) = ctx.run_region(0, args)
        return np.broadcast_to(np.asarray(res, dtype=bool), lhs.shape)
    return less


def _numpy_less(key: np.ndarray, et: ElementType, rec: Recognized) -> Less:
    direction = "GT" if rec.descending else "LT"

    def less(rows: np.ndarray, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            return compare_arrays(key[rows, lhs], key[rows, rhs], et, direction, rec.compare_type)
    return less


def sort_permutation(ctx: OpCall, inputs: list[np.ndarray]) -> tuple[np.ndarray, Msg]:
    """(perm, kind): perm (rows, n) over the rows of ``_rows(inputs[k], dimension)``; kind
    says how the permutation was found (for explain)."""
    dim = adjusted_dimension(ctx)
    rows_of = [_rows(x, dim) for x in inputs]
    m, n = rows_of[0].shape
    rec = recognize_comparator(ctx)
    if rec is not None:
        et = ctx.operand_types[rec.key].element
        key = _canonical(rows_of[rec.key], rec)
        sortable = _argsort_key(key, et, rec)
        if sortable is not None:
            _, ranks = np.unique(sortable, return_inverse=True)
            ranks = ranks.reshape(m, n).astype(np.int64)
            perm = np.argsort(-ranks if rec.descending else ranks, axis=-1, kind="stable")
            return perm.astype(np.int64), Msg("sort.comparator.argsort", comparator=rec.message)
        perm = merge_sort_permutation(_numpy_less(key, et, rec), m, n)
        return perm, Msg("sort.comparator.nan_merge", comparator=rec.message)
    if m == 0 or n <= 1:
        perm = np.broadcast_to(np.arange(n, dtype=np.int64), (m, n)).copy()
    else:
        perm = merge_sort_permutation(_region_less(ctx, rows_of), m, n)
    return perm, Msg("sort.comparator.general")


def adjusted_dimension(ctx: OpCall) -> int:
    """adjusted_dimension = dimension >= 0 ? dimension : rank(inputs[0]) + dimension."""
    d = ctx.attrs.dimension
    return d if d >= 0 else ctx.operand_types[0].rank + d


# --- provenance and explain ----------------------------------------------------------------

def _perm_of(ctx: OpCall, inputs: list[Any]) -> tuple[np.ndarray, Msg]:
    """The permutation the evaluation used (recomputed only if this call did not evaluate)."""
    got = getattr(ctx, "_sort_perm", None)
    if got is None:
        got = sort_permutation(ctx, list(inputs))
        ctx._sort_perm = got  # type: ignore[attr-defined]
    return got


def _control_operands(ctx: OpCall) -> list[int]:
    """The inputs the comparator reads: the key of a recognized one, else all of them."""
    rec = recognize_comparator(ctx)
    return [rec.key] if rec is not None else list(range(len(ctx.operand_types)))


class SortProvenance(Provenance):
    """Result r element i is inputs[r] at the permuted position of its row (``copy``); the
    comparator read the row's key elements to decide (``control``, kept as "the whole row"
    rather than n links per element). Queries are vectorized over (rows, n) views."""

    def __init__(self, shapes: list[tuple[int, ...]], dim: int, perm: np.ndarray, control: list[int]):
        super().__init__(shapes, shapes)
        self.shape = tuple(shapes[0])
        self.dim = dim
        self.perm = perm  # (rows, n): sorted[row, k] = row's element perm[row, k]
        self.inverse = np.empty_like(perm)
        np.put_along_axis(self.inverse, perm, np.broadcast_to(np.arange(perm.shape[1]), perm.shape),
                          axis=-1)
        self.control = control

    def _row(self, index: tuple[int, ...]) -> int:
        rest = index[:self.dim] + index[self.dim + 1:]
        rshape = self.shape[:self.dim] + self.shape[self.dim + 1:]
        return int(np.ravel_multi_index(rest, rshape)) if rshape else 0

    def _at(self, index: tuple[int, ...], pos: int) -> tuple[int, ...]:
        return index[:self.dim] + (int(pos),) + index[self.dim + 1:]

    def sources(self, result: int, index: tuple[int, ...]) -> list[Source]:
        self._result_shape(result)
        idx = check_index(self.shape, index, f"result #{result} index")
        row = self._row(idx)
        out = [Source(result, self._at(idx, self.perm[row, idx[self.dim]]), "copy")]
        for q in self.control:
            out += [Source(q, self._at(idx, p), "control") for p in range(self.shape[self.dim])]
        return out

    def targets(self, operand: int, index: tuple[int, ...]) -> list[Target]:
        self._operand_shape(operand)
        idx = check_index(self.shape, index, f"operand #{operand} index")
        row = self._row(idx)
        out = [Target(operand, self._at(idx, self.inverse[row, idx[self.dim]]), "copy")]
        if operand in self.control:
            out += [Target(r, self._at(idx, p), "control") for r in range(len(self.result_shapes))
                    for p in range(self.shape[self.dim])]
        return out

    def _rows_any(self, rows: np.ndarray) -> np.ndarray:
        return _unrows(np.broadcast_to(rows.any(axis=-1, keepdims=True), rows.shape), self.shape,
                       self.dim).copy()

    def back(self, result: int, mask: np.ndarray) -> dict[tuple[int | None, str], np.ndarray]:
        m = _rows(_check_mask(self._result_shape(result), mask, f"back(result #{result})"), self.dim)
        hit = np.zeros_like(m)
        np.put_along_axis(hit, self.perm, m, axis=-1)
        out: dict[tuple[int | None, str], np.ndarray] = {}
        _merge(out, (result, "copy"), _unrows(hit, self.shape, self.dim).copy())
        rows = self._rows_any(m)
        for q in self.control:
            _merge(out, (q, "control"), rows)
        return out

    def fwd(self, operand: int, mask: np.ndarray) -> dict[tuple[int, str], np.ndarray]:
        m = _rows(_check_mask(self._operand_shape(operand), mask, f"fwd(operand #{operand})"), self.dim)
        out: dict[tuple[int, str], np.ndarray] = {}
        _merge(out, (operand, "copy"),
               _unrows(np.take_along_axis(m, self.perm, axis=-1), self.shape, self.dim).copy())
        if operand in self.control:
            rows = self._rows_any(m)
            for r in range(len(self.result_shapes)):
                _merge(out, (r, "control"), rows)
        return out


def _prov_sort(ctx: OpCall, inputs: list[Any], outputs: list[Any]) -> SortProvenance:
    perm, _ = _perm_of(ctx, inputs)
    return SortProvenance([value_shape(v) for v in inputs], adjusted_dimension(ctx), perm,
                          _control_operands(ctx))


def _explain_sort(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
                  index: tuple) -> Explanation:
    if not 0 <= result < len(outputs):
        raise ExecutionError(f"result #{result} does not exist (the op has {len(outputs)} results)")
    idx = check_index(value_shape(outputs[result]), index, f"result #{result} index")
    perm, kind = _perm_of(ctx, inputs)
    dim = adjusted_dimension(ctx)
    prov = SortProvenance([value_shape(v) for v in inputs], dim, perm, [])
    row = prov._row(idx)
    source = prov._at(idx, perm[row, idx[dim]])
    d = ctx.attrs.dimension
    slice_text = ", ".join(":" if k == dim else str(i) for k, i in enumerate(idx))
    name = ctx.op.operands[result].name
    value = outputs[result][idx]
    pos = int(perm[row, idx[dim]])
    permutation = "sort.permutation.formula_stable" if ctx.attrs.is_stable else \
        "sort.permutation.formula_unstable"
    steps = [
        Step("adjusted_dimension", Msg("sort.adjusted_dimension.formula"), dim,
             substituted=Msg("sort.adjusted_dimension.substituted", dimension=d, rank=len(idx))),
        # the value: which row (row-major over the other dims) the slice is
        Step("result_slice", Msg("sort.result_slice.formula"), Msg("sort.result_slice.value", row=row),
             substituted=Msg("sort.result_slice.substituted", slice=slice_text)),
        Step("permutation", Msg(permutation), tuple(int(p) for p in perm[row])),
        Step(Msg("sort.source_position.name"), Msg("sort.source_position.formula"), pos,
             dim_roles={dim: DimRole("sorted")},
             substituted=Msg("sort.source_position.substituted", position=idx[dim])),
        Step("result[result_index]", Msg("sort.result.formula", result=result), value,
             substituted=Msg("explain.element", name=name, index=", ".join(str(i) for i in source))),
    ]
    return Explanation(ctx.op.name, idx, steps, value, [Msg("sort.note.comparator", comparator=kind)], result)


@op("stablehlo.sort", aliases=("Sort",), verify=_verify_sort, attrs=SortAttrs, infer=infer_sort,
    family="sort", provenance=_prov_sort, explain=_explain_sort)
def sort(ctx: OpCall, *inputs: np.ndarray) -> list[np.ndarray]:
    """results_together[result_slice] = sort(inputs_together[result_slice], comparator_together)."""
    for i, (x, t) in enumerate(zip(inputs, ctx.operand_types, strict=True)):
        check_value(ctx, x, t, f"inputs[{i}]")
    perm, kind = sort_permutation(ctx, list(inputs))
    ctx._sort_perm = (perm, kind)  # type: ignore[attr-defined]  # provenance/explain reuse it
    dim = adjusted_dimension(ctx)
    shape = inputs[0].shape
    return [contiguous(_unrows(np.take_along_axis(_rows(x, dim), perm, axis=-1), shape, dim))
            for x in inputs]


# --- parameter schema (hlolab.ops.examples) ------------------------------------------------

def _sort_schema() -> None:
    from hlolab.ops.examples import (
        Operand,
        OpParts,
        OpSchema,
        bool_param,
        compare_region,
        dtype_param,
        enum_param,
        inferred_results,
        int_param,
        register_schema,
        shape_param,
        ttype,
    )

    def build(p: dict[str, Any]) -> OpParts:
        n = max(1, p["num_operands"])
        operands = [Operand(f"input{i}", ttype(p["input"], p["dtype"])) for i in range(n)]
        rec = SortAttrs(dimension=p["dimension"], is_stable=p["is_stable"])
        return OpParts(operands, inferred_results("stablehlo.sort", rec, [o.type for o in operands],
                                                  p["dtype"]), rec,
                       [compare_region(p["direction"], [p["dtype"]] * (2 * n))])

    register_schema(OpSchema("stablehlo.sort", (
        shape_param("input", (3, 4), "shape of every input"),
        int_param("dimension", 1, "the dim sorted along"),
        bool_param("is_stable", True, "equal elements keep their order"),
        enum_param("direction", ("lt", "le", "gt", "ge"), "gt",
                   "comparator: compare(input0 lhs, input0 rhs) with this direction"),
        int_param("num_operands", 1, "inputs sorted together (the comparator reads input0)"),
        dtype_param("f32"),
    ), {"default": {},
        "spec-example": {"input": (2, 3), "dimension": 0, "is_stable": True, "direction": "gt",
                         "num_operands": 2, "dtype": "i64", "index": (0, 0),
                         "inputs": {"input0": [[1, 2, 3], [3, 2, 1]], "input1": [[3, 2, 1], [1, 2, 3]]}}},
        build, doc="sort inputs along dimension with a comparator"))


_sort_schema()
