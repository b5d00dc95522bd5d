"""Linear algebra and Fourier transforms: triangular_solve, fft, cholesky
(XLA ``TriangularSolve``, ``Fft``, ``Cholesky``).

All three are batched over the leading dims and loop over a matrix dimension
(substitution rows, factorization columns), vectorized over the batch and the
other dimension. Provenance is a ``FanInProvenance`` for each.

Choices the spec leaves to the implementation (DESIGN.md "Numerics"), with
what XLA:CPU does:

* Working precision: f32, f64, complex64 and complex128 compute in their own
  type. Floats narrower than f32 (bf16, f16, f8) compute in f32 and are
  rounded once at the end. XLA:CPU's expanders compute in the element type and
  round every intermediate (a bf16 triangular_solve can differ by a few ulps;
  the oracle tests bound it).
* triangular_solve: column-oriented substitution (after ``x_i`` is known, its
  term ``M_ri * x_i`` is subtracted from every later row ``r``), so every
  ``x_i`` subtracts its terms one at a time in solve order; explain() replays
  exactly that order. XLA:CPU inverts the diagonal blocks and multiplies, so
  results differ by rounding (the oracle tests bound it). Only the triangle of
  ``a`` that ``lower`` names is read (the other one, even NaN, never is), and
  not the diagonal with ``unit_diagonal``. A zero pivot gives IEEE inf/NaN.
* fft: numpy's pocketfft in complex128/float64, rounded once to the result
  type (XLA:CPU runs its own FFT library in the element type). FFT/IFFT whose trailing
  operand dims differ from ``fft_length`` are refused: the spec does not
  define them and XLA:CPU reads out of bounds.
* cholesky: XLA:CPU's unblocked algorithm (``CholeskyExpander``; XLA blocks
  matrices over 128, which changes rounding only) column by column:
  ``t = a[j:, j] - L[j:, :j] . conj(L[j, :j])``, ``s = sqrt(re t_jj)``,
  ``L[j:, j] = t / s`` (so ``L_jj = t_jj / sqrt(t_jj)``, as XLA). The sums run
  over k < j with numpy's pairwise summation (XLA: a full ``L . L^H``
  product). Non-positive-definite input (the spec: undefined
  behaviour): when some ``s`` is NaN the whole matrix of that batch element is
  NaN, as XLA:CPU. The other triangle of the result is 0, as XLA:CPU.
  ``lower = false`` factorizes the plain transpose of ``a`` and transposes
  back, as XLA.

Provenance roles: triangular_solve's ``a`` elements are ``kernel`` (the
coefficient matrix, like a dot's right-hand side) and its ``b`` elements are
``window`` (the right-hand sides substitution reaches); fft reads its whole
transformed block as ``window``; cholesky reads its ``a`` triangle as
``window``, and a NaN-filled (failed) batch element reads, as ``control``, the
elements the first failing pivot depends on. (For a batch element that
factorized, the NaN-fill test that did not fire is not recorded: the spec
leaves that case undefined, and recording it would make every element depend on
the whole triangle.)

Spec text hlolab reads differently: triangular_solve (C3) writes the batch
dims as ``shape(a)[:-3] = shape(b)[:-3]``; they are ``[:-2]`` (checked). The
cholesky spec example declares an f64 result for an f32 operand, which its
own (C1) forbids; hlolab reports (C1).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from hlolab.errors import ExecutionError, NotImplementedOpError
from hlolab.messages import Msg
from hlolab.ops.common import dims_fit
from hlolab.ops.conversion import baseline_key, count_check, tensor_operand
from hlolab.ops.record import Attrs, InferError, Partial, attr, boolean, enum, ints, record
from hlolab.ops.registry import OpCall, op
from hlolab.trace.explain import Explanation, Step, format_value
from hlolab.trace.fanin import Fan, FanInProvenance, expand
from hlolab.trace.provenance import check_index, value_shape
from hlolab.types import ElementType, QuantizedElementType, TensorType, element_type, is_element_type_name

EXPLAIN_MAX_TERMS = 256  # explain lists at most this many terms as children


# --- shared helpers --------------------------------------------------------------------

def _float_or_complex(ctx: OpCall, t: Any, label: str, what: str,
                      quantized_ok: bool = True) -> TensorType:
    tt = tensor_operand(ctx, t, what, label)
    e = tt.element
    if isinstance(e, QuantizedElementType):
        if quantized_ok and not e.is_per_axis:
            return tt
        raise ctx.error(label, f"{what} must be a tensor of floating-point or complex type"
                        f"{' or per-tensor quantized tensor' if quantized_ok else ''}, got {tt}")
    if not (isinstance(e, ElementType) and (e.is_float or e.is_complex)):
        raise ctx.error(label, f"{what} must be a tensor of floating-point or complex type, got {tt}")
    return tt


def _dims(shape: Sequence[int | None]) -> str:
    return "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"


def _static(ctx: OpCall) -> None:
    """Dynamically shaped tensors are refused (clearly, never guessed); quantized ones arrive
    here as their float view (the dequantize/quantize rule, hlolab.ops.quantized)."""
    for t in (*ctx.operand_types, *ctx.result_types):
        if isinstance(t, TensorType) and not t.is_static:
            raise NotImplementedOpError(ctx.name, ctx.loc, detail="dynamic shapes")


def work_dtype(dtype: np.dtype) -> np.dtype:
    """The type hlolab computes in: the element type itself from f32 up, f32 below
    (bf16, f16, f8: rounded once at the end)."""
    dt = np.dtype(dtype)
    if dt.kind == "c" or dt in (np.dtype(np.float32), np.dtype(np.float64)):
        return dt
    return np.dtype(np.float32)


def _swap(x: np.ndarray) -> np.ndarray:
    return np.swapaxes(x, -1, -2)


def _ints(xs: Sequence[Any]) -> tuple[int, ...]:
    return tuple(int(x) for x in xs)


def _name(ctx: OpCall, i: int, default: str) -> str:
    ops = ctx.op.operands
    return ops[i].name if i < len(ops) and ops[i].name else default


def _idx(ix: Sequence[int]) -> str:
    return ", ".join(str(int(i)) for i in ix)


def _baseline_like(t: TensorType) -> TensorType | Partial:
    """A result whose baseline_type is ``t``'s: ``t`` itself, or for a quantized element
    any quantized type of that baseline (the result's scales and zero points are its own)."""
    if not isinstance(t.element, QuantizedElementType):
        return t
    key = baseline_key(t.element)
    return Partial(t.shape, None, what=f"a tensor of baseline_type({t})",
                   check=lambda d: isinstance(d, TensorType) and baseline_key(d.element) == key)


def _tensor_arg(types: list[Any], i: int, label: str, what: str) -> TensorType:
    t = types[i] if i < len(types) else None
    if not isinstance(t, TensorType):
        raise InferError(label, f"{what} must be a tensor, got {t}")
    return t


# --- triangular_solve --------------------------------------------------------------------

TRANSPOSES = ("NO_TRANSPOSE", "TRANSPOSE", "ADJOINT")


@record
class TriangularSolveAttrs(Attrs):
    """The attributes, and the canonical system ``M X = B`` they mean.

    ``x op(a) = b`` is ``op(a)^T x^T = b^T``, so every case solves ``M X = B`` with
    ``X = x`` (left side) or ``x^T`` (right side), ``M = op(a)`` or ``op(a)^T``.
    """

    left_side: bool = attr(boolean("left_side"))
    lower: bool = attr(boolean("lower"))
    unit_diagonal: bool = attr(boolean("unit_diagonal"))
    transpose_a: str = attr(enum("transpose_a", "transpose", TRANSPOSES))

    @property
    def transposed(self) -> bool:
        """M[r, c] = a[c, r] (else a[r, c])."""
        return (self.transpose_a != "NO_TRANSPOSE") == self.left_side

    @property
    def conjugate(self) -> bool:
        return self.transpose_a == "ADJOINT"

    @property
    def forward(self) -> bool:
        """M is lower triangular: forward substitution (else back substitution)."""
        return self.lower != self.transposed

    def solve_order(self, m: int) -> np.ndarray:
        return np.arange(m) if self.forward else np.arange(m - 1, -1, -1)

    def m_formula(self, a: str = "a") -> str:
        """M as an expression of ``a`` (the spec's name, or an operand such as ``%a[1, :, :]``)."""
        op_a = {"NO_TRANSPOSE": a, "TRANSPOSE": f"transpose({a})",
                "ADJOINT": f"conj(transpose({a}))"}[self.transpose_a]
        return op_a if self.left_side else f"transpose({op_a})"


def _verify_triangular_solve(ctx: OpCall) -> None:
    count_check(ctx, 2)
    a = _float_or_complex(ctx, ctx.operand_types[0], "I1", "a")
    b = _float_or_complex(ctx, ctx.operand_types[1], "I2", "b")
    result = _float_or_complex(ctx, ctx.result_types[0], None, "result")
    form = ctx.attrs
    if baseline_key(a.element) != baseline_key(b.element):
        raise ctx.error("C1", f"baseline_element_type(a) = {a.element} must equal "
                        f"baseline_element_type(b) = {b.element}")
    if not (2 <= a.rank and a.rank == b.rank):
        raise ctx.error("C2", f"2 <= rank(a) = rank(b) does not hold: rank(a) = {a.rank}, "
                        f"rank(b) = {b.rank}")
    # (C3) reads shape(a)[:-3] = shape(b)[:-3]; the batch dims are [:-2] (the
    # spec's own typo: its dims -2/-1 are the matrix dims), so hlolab checks [:-2].
    if not all(dims_fit(x, y) for x, y in zip(a.shape[:-2], b.shape[:-2], strict=True)):
        raise ctx.error("C3", f"the batch dims of a {_dims(a.shape[:-2])} must equal those of "
                        f"b {_dims(b.shape[:-2])} (shape(a) = {_dims(a.shape)}, shape(b) = "
                        f"{_dims(b.shape)})")
    bdim = b.shape[-2] if form.left_side else b.shape[-1]
    side = "-2 (left_side = true)" if form.left_side else "-1 (left_side = false)"
    m, n = a.shape[-2], a.shape[-1]
    if not (dims_fit(m, n) and dims_fit(n, bdim) and dims_fit(m, bdim)):
        raise ctx.error("C3", f"dim(a, -2) = dim(a, -1) = dim(b, {side}) does not hold: "
                        f"shape(a) = {_dims(a.shape)}, shape(b) = {_dims(b.shape)}")
    if not (baseline_key(b.element) == baseline_key(result.element) and result.rank == b.rank
            and all(dims_fit(x, y) for x, y in zip(b.shape, result.shape, strict=True))):
        raise ctx.error("C4", f"baseline_type(b) = {b} must equal baseline_type(result) = {result}")


def infer_triangular_solve(attrs: TriangularSolveAttrs, types: list[Any]) -> list[TensorType | Partial]:
    """baseline_type(result) = baseline_type(b) (C4)."""
    _tensor_arg(types, 0, "I1", "a")
    return [_baseline_like(_tensor_arg(types, 1, "I2", "b"))]


def substitute(a: np.ndarray, b: np.ndarray, form: TriangularSolveAttrs) -> np.ndarray:
    """Solve ``op(a) x = b`` / ``x op(a) = b`` in the dtype of ``a``/``b`` (the work type).

    Loops over the m rows in solve order; each step is vectorized over the batch
    and the columns of X. Reads only the triangle of a (and not its diagonal with
    unit_diagonal).
    """
    mat = _swap(a) if form.transposed else a
    if form.conjugate:
        mat = np.conj(mat)
    rhs = b if form.left_side else _swap(b)
    m = mat.shape[-1]
    x = np.zeros_like(rhs)
    residual = np.array(rhs, copy=True)
    for i in form.solve_order(m):
        xi = residual[..., i, :] if form.unit_diagonal else residual[..., i, :] / mat[..., i, i, None]
        x[..., i, :] = xi
        rest = slice(i + 1, m) if form.forward else slice(0, i)
        # column-oriented: the term M_ri * x_i leaves every row r still to solve
        residual[..., rest, :] -= mat[..., rest, i, None] * xi[..., None, :]
    return x if form.left_side else _swap(x)


@dataclass(frozen=True)
class _TriSolveFans:
    """Fans of triangular_solve: x[.., i, j] (of X) reads B[r, j] for the rows r that
    substitution solves up to i, and the triangle of M in rows solved up to i."""

    form: TriangularSolveAttrs
    m: int

    def __call__(self, result: int, ridx: tuple[np.ndarray, ...]) -> list[Fan]:
        f = self.form
        batch = ridx[:-2]
        p, q = ridx[-2], ridx[-1]
        i, j = (p, q) if f.left_side else (q, p)
        order = f.solve_order(self.m)
        # b: window position t is the t-th row in solve order
        i1, j1 = expand(i, 1), expand(j, 1)
        valid_b = (order <= i1) if f.forward else (order >= i1)
        bat1 = tuple(expand(x, 1) for x in batch)
        b_index = (*bat1, order, j1) if f.left_side else (*bat1, j1, order)
        # a: window position (t, u) is M[order[t], order[u]]
        rows, cols = order[:, None], order[None, :]
        i2 = expand(i, 2)
        tri = ((cols <= rows) & (rows <= i2)) if f.forward else ((i2 <= rows) & (rows <= cols))
        if f.unit_diagonal:
            tri = tri & (rows != cols)
        bat2 = tuple(expand(x, 2) for x in batch)
        a_index = (*bat2, cols, rows) if f.transposed else (*bat2, rows, cols)
        return [Fan(1, "window", b_index, valid_b), Fan(0, "kernel", a_index, tri)]


def _triangular_solve_provenance(ctx: OpCall, inputs: list[Any], outputs: list[Any]) -> FanInProvenance:
    a = inputs[0]
    form = ctx.attrs
    return FanInProvenance([value_shape(v) for v in outputs], [value_shape(v) for v in inputs],
                           _TriSolveFans(form, int(a.shape[-1])),
                           schedule=Msg("linalg.schedule.triangular_solve"))


def _a_element(name: str, index: Sequence[int], conjugate: bool) -> Msg:
    """``%a[1, 0]``, or ``conj(%a[1, 0])`` for an ADJOINT op(a)."""
    return Msg("linalg.conj_element" if conjugate else "explain.element", name=name, index=_idx(index))


def _rounding(wt: np.dtype, out: np.dtype, name: str, symbol: str, x: Any, value: Any) -> tuple[Step, Msg]:
    """The final rounding of a type computed in f32 (bf16, f16, f8): its step and its note."""
    step = Step(name, Msg("linalg.rounded", x=symbol, dtype=str(out)), value,
                substituted=Msg("linalg.rounded", x=x, dtype=str(out)))
    return step, Msg("linalg.note.work_type", dtype=str(out), work=str(wt))


def _explain_triangular_solve(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
                              index: tuple) -> Explanation:
    a, b = inputs
    out = outputs[0]
    if result != 0:
        raise ExecutionError(f"result #{result} does not exist (the op has 1 result)")
    idx = check_index(value_shape(out), index, "result #0 index")
    form = ctx.attrs
    aname, bname = _name(ctx, 0, "a"), _name(ctx, 1, "b")
    batch = idx[:-2]
    p, q = idx[-2:]
    i, j = (p, q) if form.left_side else (q, p)
    wt = work_dtype(out.dtype)
    a_w, b_w = a[batch].astype(wt), b[batch].astype(wt)
    with np.errstate(all="ignore"):
        x_full = substitute(a_w, b_w, form)
    x_mat = x_full if form.left_side else x_full.T
    mat = a_w.T if form.transposed else a_w
    if form.conjugate:
        mat = np.conj(mat)
    rhs = b_w if form.left_side else b_w.T
    m = mat.shape[-1]
    order = [int(k) for k in form.solve_order(m)]
    before = order[:order.index(i)]

    def a_at(r: int, c: int) -> tuple[int, ...]:
        return (*batch, c, r) if form.transposed else (*batch, r, c)

    def b_at(r: int) -> tuple[int, ...]:
        return (*batch, r, j) if form.left_side else (*batch, j, r)

    side = "left" if form.left_side else "right"
    a_slice = f"{aname}[{_idx(batch)}, :, :]" if batch else aname
    steps = [
        Step("M", Msg(f"linalg.triangular_solve.M.formula_{side}", m=form.m_formula(),
                      transpose_a=form.transpose_a),
             Msg("linalg.triangular_solve.M." + ("forward" if form.forward else "back"), order=order),
             substituted=Msg("linalg.triangular_solve.M.substituted", m=form.m_formula(a_slice))),
        Step("(i, j)", Msg(f"linalg.triangular_solve.ij.formula_{side}"), (i, j),
             substituted=Msg("linalg.result_index_tail" if form.left_side
                             else "linalg.result_index_tail_reversed", index=idx)),
        Step("b_i", Msg(f"linalg.triangular_solve.b_i.formula_{side}"), rhs[i, j],
             substituted=Msg("linalg.triangular_solve.b_i.substituted", i=i, j=j, name=bname,
                             index=_idx(b_at(i)))),
    ]
    # the terms are subtracted one at a time in solve order, as substitute() does
    residual = np.array([rhs[i, j]], dtype=wt)
    children = []
    with np.errstate(all="ignore"):
        for k in before:
            term = np.array([mat[i, k]], dtype=wt) * np.array([x_mat[k, j]], dtype=wt)
            residual = residual - term
            if len(children) < EXPLAIN_MAX_TERMS:
                children.append(Step(f"k = {k}", Msg("linalg.triangular_solve.term.formula", i=i, j=j, k=k,
                                                     a=_a_element(aname, a_at(i, k), form.conjugate)),
                                     term[0], substituted=Msg("linalg.product", lhs=mat[i, k],
                                                              rhs=x_mat[k, j])))
        total = rhs[i, j] - residual[0]
    steps.append(Step("sum_k M_ik x_k", Msg("linalg.triangular_solve.sum.formula",
                                            cmp="<" if form.forward else ">"),
                      total, children=children,
                      substituted=Msg("linalg.triangular_solve.sum.substituted", count=len(before),
                                      rows=set(before), i=i)))
    steps.append(Step("r_i", Msg("linalg.triangular_solve.r_i.formula"), residual[0],
                      substituted=Msg("linalg.difference", lhs=rhs[i, j], rhs=total)))
    if form.unit_diagonal:
        steps.append(Step("M_ii", Msg("linalg.triangular_solve.M_ii.unit"), wt.type(1)))
        steps.append(Step("x_i", Msg("linalg.triangular_solve.x_i.formula_unit"), x_mat[i, j]))
    else:
        steps.append(Step("M_ii", Msg("linalg.triangular_solve.M_ii.formula"), mat[i, i],
                          substituted=_a_element(aname, a_at(i, i), form.conjugate)))
        steps.append(Step("x_i", Msg("linalg.triangular_solve.x_i.formula"), x_mat[i, j],
                          substituted=Msg("linalg.quotient", lhs=residual[0], rhs=mat[i, i])))
    value = out[idx]
    notes = []
    if wt != out.dtype:
        step, note = _rounding(wt, out.dtype, f"result[{_idx(idx)}]", "x_i", x_mat[i, j], value)
        steps.append(step)
        notes.append(note)
    notes.append(Msg("linalg.triangular_solve.note.xla_order"))
    if len(before) > EXPLAIN_MAX_TERMS:
        notes.append(Msg("linalg.note.more_terms", count=len(before) - EXPLAIN_MAX_TERMS))
    return Explanation(ctx.op.name, idx, steps, value, notes)


@op("stablehlo.triangular_solve", aliases=("TriangularSolve",), verify=_verify_triangular_solve,
    attrs=TriangularSolveAttrs, infer=infer_triangular_solve, family="linalg",
    provenance=_triangular_solve_provenance, explain=_explain_triangular_solve)
def triangular_solve(ctx: OpCall, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """result solves op(a) * result = b (left_side) or result * op(a) = b, batched."""
    _static(ctx)
    form = ctx.attrs
    out = ctx.result_dtype()
    wt = work_dtype(out)
    with np.errstate(all="ignore"):  # a zero pivot gives inf/NaN, as IEEE division does
        x = substitute(a.astype(wt), b.astype(wt), form)
    return x.astype(out)


# --- fft -----------------------------------------------------------------------------------

FFT_TYPES = ("FFT", "IFFT", "RFFT", "IRFFT")


@record
class FftAttrs(Attrs):
    fft_type: str = attr(enum("fft_type", "fft_type", FFT_TYPES))
    fft_length: tuple[int, ...] = attr(ints("fft_length"))


def _verify_fft(ctx: OpCall) -> None:
    count_check(ctx, 1)
    operand = _float_or_complex(ctx, ctx.operand_types[0], "I1", "operand", quantized_ok=False)
    result = _float_or_complex(ctx, ctx.result_types[0], None, "result", quantized_ok=False)
    kind, lengths = ctx.attrs.fft_type, ctx.attrs.fft_length
    n = len(lengths)
    if n > operand.rank:
        raise ctx.error("C1", f"size(fft_length) = {n} must be <= rank(operand) = {operand.rank}")
    if not 1 <= n <= 3:
        raise ctx.error("C3", f"1 <= size(fft_length) <= 3 does not hold: fft_length = {list(lengths)}")
    oe, re = operand.element, result.element
    assert isinstance(oe, ElementType) and isinstance(re, ElementType)
    ok = {"FFT": oe.is_complex and re.name == oe.name,
          "IFFT": oe.is_complex and re.name == oe.name,
          "RFFT": oe.is_float and re.is_complex and re.component.name == oe.name,
          "IRFFT": oe.is_complex and re.is_float and oe.component.name == re.name}[kind]
    if not ok:
        want = {"FFT": "the same complex type", "IFFT": "the same complex type",
                "RFFT": "a floating-point operand and a complex result of the same floating-point "
                        "semantics",
                "IRFFT": "a complex operand and a floating-point result of the same floating-point "
                         "semantics"}[kind]
        raise ctx.error("C2", f"fft_type = {kind} needs {want}: element_type(operand) = {oe}, "
                        f"element_type(result) = {re}")
    real = operand if kind == "RFFT" else result if kind == "IRFFT" else None
    if real is not None and (real.rank < n or not all(
            dims_fit(x, y) for x, y in zip(real.shape[-n:], lengths, strict=True))):
        which = "operand" if kind == "RFFT" else "result"
        raise ctx.error("C4", f"shape({which})[-{n}:] = {_dims(real.shape[-n:])} must equal "
                        f"fft_length = {list(lengths)} ({which} is the real tensor)")
    if result.rank != operand.rank or not all(
            dims_fit(x, y) for x, y in zip(result.shape[:-1], operand.shape[:-1], strict=True)):
        raise ctx.error("C5", f"shape(result) = {_dims(result.shape)} must equal shape(operand) = "
                        f"{_dims(operand.shape)} (but for the last dim with RFFT/IRFFT)")
    o_last, r_last = operand.shape[-1], result.shape[-1]
    if kind == "RFFT":
        want_last = None if o_last is None else (0 if o_last == 0 else o_last // 2 + 1)
        if not dims_fit(r_last, want_last):
            raise ctx.error("C5", f"RFFT: dim(result, -1) = {r_last} must be dim(operand, -1) = 0 ? 0 "
                            f": dim(operand, -1) / 2 + 1 = {want_last}")
    elif kind == "IRFFT":
        want_last = None if r_last is None else (0 if r_last == 0 else r_last // 2 + 1)
        if not dims_fit(o_last, want_last):
            raise ctx.error("C5", f"IRFFT: dim(operand, -1) = {o_last} must be dim(result, -1) = 0 ? 0 "
                            f": dim(result, -1) / 2 + 1 = {want_last}")
    elif not dims_fit(o_last, r_last):
        raise ctx.error("C5", f"shape(result) = {_dims(result.shape)} must equal shape(operand) = "
                        f"{_dims(operand.shape)}")


def _complex_of(e: Any) -> ElementType | None:
    """complex<e> for a float element type (None when there is none, e.g. bf16)."""
    if not is_element_type_name(f"complex<{e}>"):
        return None
    return element_type(f"complex<{e}>")


def infer_fft(attrs: FftAttrs, types: list[Any]) -> list[TensorType]:
    """shape(result) = shape(operand) but the last dim with RFFT (n / 2 + 1) and IRFFT
    (fft_length[-1]) (C5, C4); the element type by fft_type (C2)."""
    operand = _tensor_arg(types, 0, "I1", "operand")
    kind, lengths = attrs.fft_type, attrs.fft_length
    n = len(lengths)
    if n > operand.rank:
        raise InferError("C1", f"size(fft_length) = {n} must be <= rank(operand) = {operand.rank}")
    if not 1 <= n <= 3:
        raise InferError("C3", f"1 <= size(fft_length) <= 3 does not hold: fft_length = {list(lengths)}")
    e = operand.element
    if not isinstance(e, ElementType) or not (e.is_complex if kind != "RFFT" else e.is_float):
        want = "a floating-point" if kind == "RFFT" else "a complex"
        raise InferError("C2", f"fft_type = {kind} needs {want} operand, got {operand}")
    *batch, last = operand.shape
    if kind in ("FFT", "IFFT"):
        return [operand]
    if kind == "RFFT":
        c = _complex_of(e)
        if c is None:
            raise InferError("C2", f"fft_type = RFFT needs a complex type of the floating-point "
                             f"semantics of {e}: there is none")
        return [TensorType((*batch, None if last is None else 0 if last == 0 else last // 2 + 1), c)]
    # IRFFT: the real result's last dim is fft_length[-1] (C4); verify checks the operand against it (C5)
    if lengths[-1] < 0:
        raise InferError("C4", f"the result's last dim would be fft_length[-1] = {lengths[-1]} < 0")
    return [TensorType((*batch, lengths[-1]), e.component)]


def dft(x: np.ndarray, fft_type: str, fft_length: Sequence[int]) -> np.ndarray:
    """The transform over the trailing ``len(fft_length)`` dims in complex128/float64."""
    n = len(fft_length)
    axes = tuple(range(x.ndim - n, x.ndim))
    s = [int(v) for v in fft_length]
    if fft_type == "FFT":
        return np.fft.fftn(x.astype(np.complex128), axes=axes)
    if fft_type == "IFFT":
        return np.fft.ifftn(x.astype(np.complex128), axes=axes)
    if fft_type == "RFFT":
        return np.fft.rfftn(x.astype(np.float64), s=s, axes=axes)
    return np.fft.irfftn(x.astype(np.complex128), s=s, axes=axes)


def _fft_fans(n: int, block: tuple[int, ...]):
    """Every result element reads the whole transformed block of its batch."""
    grids = tuple(np.indices(block, sparse=True, dtype=np.int64))

    def fans(result: int, ridx: tuple[np.ndarray, ...]) -> list[Fan]:
        batch = tuple(expand(x, n) for x in ridx[:len(ridx) - n])
        # a valid mask of shape S + (1,) * n carries the result batch shape S even when
        # every index array is window-only (no batch dims)
        valid = np.ones(np.shape(ridx[0]) + (1,) * n, dtype=bool)
        return [Fan(0, "window", batch + grids, valid)]

    return fans


def _fft_provenance(ctx: OpCall, inputs: list[Any], outputs: list[Any]) -> FanInProvenance:
    n = len(ctx.attrs.fft_length)
    block = tuple(int(d) for d in inputs[0].shape[-n:])
    return FanInProvenance([value_shape(v) for v in outputs], [value_shape(v) for v in inputs],
                           _fft_fans(n, block), schedule=Msg("linalg.schedule.fft"))


def _explain_fft(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
                 index: tuple) -> Explanation:
    operand = inputs[0]
    out = outputs[0]
    if result != 0:
        raise ExecutionError(f"result #{result} does not exist (the op has 1 result)")
    idx = check_index(value_shape(out), index, "result #0 index")
    kind = ctx.attrs.fft_type
    lengths = list(ctx.attrs.fft_length)
    n = len(lengths)
    nb = operand.ndim - n
    batch, j = idx[:nb], idx[nb:]
    xname = _name(ctx, 0, "operand")
    inverse = kind in ("IFFT", "IRFFT")
    sign = "+" if inverse else "-"
    block = operand[batch].astype(np.complex128)
    k = np.indices(block.shape, dtype=np.int64)
    phase = sum(jd * kd / nd for jd, kd, nd in zip(j, k, lengths, strict=True))  # in turns
    w = np.exp((2j if inverse else -2j) * np.pi * phase)
    weight = np.ones(block.shape)
    if kind == "IRFFT":  # the conjugate-symmetric half of the last axis counts twice
        last = np.arange(block.shape[-1])
        c = np.where((last == 0) | ((lengths[-1] % 2 == 0) & (last == lengths[-1] // 2)), 1.0, 2.0)
        weight = np.broadcast_to(c, block.shape)
    terms = weight * block * w
    total = terms.sum()
    weighted = "_weighted" if kind == "IRFFT" else ""
    at = f"{_idx(batch)}, k" if batch else "k"
    # the phase of term k in turns, exact: sum_d j_d k_d / fft_length[d]
    phase_sym = " + ".join(f"{int(j[d])} k{d} / {lengths[d]}" for d in range(n))
    children = []
    flat_k = np.stack([kk.reshape(-1) for kk in k], axis=-1)
    for f in range(min(terms.size, EXPLAIN_MAX_TERMS)):
        kk = tuple(int(v) for v in flat_k[f])
        full = (*batch, *kk)
        turns = sum((Fraction(int(j[d]) * kk[d], lengths[d]) for d in range(n)), Fraction(0))
        children.append(Step(f"k = {format_value(kk)}",
                             Msg(f"linalg.fft.term.formula{weighted}", sign=sign, phase=turns,
                                 x=Msg("explain.element", name=xname, index=_idx(full))),
                             terms[kk],
                             substituted=Msg(f"linalg.fft.term.substituted{weighted}", c=int(weight[kk]),
                                             x=operand[full], w=f"({w[kk]:.6g})")))
    steps = [
        Step("fft_type", Msg(f"linalg.fft.fft_type.{kind}", n=n, fft_length=lengths), kind),
        Step("j", Msg("linalg.fft.j.formula", n=n), tuple(int(v) for v in j),
             substituted=Msg("linalg.fft.j.substituted", index=idx, n=n)),
        Step("sum", Msg(f"linalg.fft.sum.formula{weighted}", sign=sign), total, children=children,
             substituted=Msg(f"linalg.fft.sum.substituted{weighted}", sign=sign, phase=phase_sym,
                             x=Msg("explain.element", name=xname, index=at))),
    ]
    notes = []
    if inverse:
        scale = 1.0 / float(np.prod(lengths))
        steps.append(Step("scale", Msg("linalg.fft.scale.formula"), scale,
                          substituted=Msg("linalg.fft.scale.substituted",
                                          lengths=" * ".join(str(v) for v in lengths))))
        if kind == "IRFFT":
            exact = total.real * scale
            formula = Msg("linalg.fft.exact.formula_real")
            sub = Msg("linalg.fft.exact.substituted_real", sum=total, scale=scale)
        else:
            exact = total * scale
            formula = Msg("linalg.fft.exact.formula")
            sub = Msg("linalg.product", lhs=total, rhs=scale)
        steps.append(Step(Msg("linalg.fft.exact.name"), formula, exact, substituted=sub))
    else:
        exact = total
    work = "float64" if kind == "IRFFT" else "complex128"
    rounded = "" if out.dtype == np.dtype(work) else "_rounded"
    steps.append(Step(f"result[{_idx(idx)}]",
                      Msg(f"linalg.fft.result.formula{rounded}", work=work, dtype=str(out.dtype)), out[idx]))
    if kind == "IRFFT":
        last = lengths[-1]
        notes.append(Msg("linalg.fft.note.irfft_even", n=last, half=last // 2) if last % 2 == 0
                     else Msg("linalg.fft.note.irfft_odd", n=last))
    diff = abs(complex(exact) - complex(out[idx]))
    notes.append(Msg("linalg.fft.note.pocketfft", difference=float(f"{diff:.3g}")))
    if terms.size > EXPLAIN_MAX_TERMS:
        notes.append(Msg("linalg.note.more_terms", count=terms.size - EXPLAIN_MAX_TERMS))
    return Explanation(ctx.op.name, idx, steps, out[idx], notes)


@op("stablehlo.fft", aliases=("Fft",), verify=_verify_fft, attrs=FftAttrs, infer=infer_fft,
    family="linalg", provenance=_fft_provenance, explain=_explain_fft)
def fft(ctx: OpCall, operand: np.ndarray) -> np.ndarray:
    """result = the (inverse) discrete Fourier transform over the trailing len(fft_length) dims."""
    _static(ctx)
    kind, lengths = ctx.attrs.fft_type, ctx.attrs.fft_length
    n = len(lengths)
    rt = ctx.result_tensor()
    if kind in ("FFT", "IFFT") and tuple(operand.shape[-n:]) != tuple(lengths):
        raise NotImplementedOpError(ctx.name, ctx.loc, detail=(
            f"{kind} with fft_length = {list(lengths)} and trailing operand dims "
            f"{list(operand.shape[-n:])}: the spec does not define a length that differs from the "
            "dims (XLA:CPU reads out of bounds)"))
    shape = tuple(int(d) for d in rt.shape)
    if 0 in shape:
        return np.zeros(shape, dtype=rt.dtype)
    # computed in complex128/float64 and rounded once to the result type
    return dft(operand, kind, lengths).astype(rt.dtype)


# --- cholesky -----------------------------------------------------------------------------

@record
class CholeskyAttrs(Attrs):
    lower: bool = attr(boolean("lower"), default=False)


def _verify_cholesky(ctx: OpCall) -> None:
    count_check(ctx, 1)
    a = _float_or_complex(ctx, ctx.operand_types[0], "I1", "a")
    result = _float_or_complex(ctx, ctx.result_types[0], None, "result")
    if not (baseline_key(a.element) == baseline_key(result.element) and a.rank == result.rank
            and all(dims_fit(x, y) for x, y in zip(a.shape, result.shape, strict=True))):
        raise ctx.error("C1", f"baseline_type(a) = {a} must equal baseline_type(result) = {result}")
    if a.rank < 2:
        raise ctx.error("C2", f"2 <= rank(a) does not hold: rank(a) = {a.rank}")
    if not dims_fit(a.shape[-2], a.shape[-1]):
        raise ctx.error("C3", f"dim(a, -2) = {a.shape[-2]} must equal dim(a, -1) = {a.shape[-1]}")


def infer_cholesky(attrs: CholeskyAttrs, types: list[Any]) -> list[TensorType | Partial]:
    """baseline_type(result) = baseline_type(a) (C1)."""
    return [_baseline_like(_tensor_arg(types, 0, "I1", "a"))]


def factorize(a: np.ndarray, lower: bool) -> tuple[np.ndarray, np.ndarray]:
    """XLA:CPU's unblocked Cholesky on ``a`` (in the work dtype), column by column.

    Returns ``(L, first_fail)``: ``L`` lower triangular in the frame of ``a`` (lower)
    or of ``transpose(a)`` (upper), before any NaN fill; ``first_fail`` (batch-shaped
    int64) the first column whose pivot ``sqrt(t_jj)`` is NaN, -1 if none.
    """
    mat = a if lower else _swap(a)
    n = mat.shape[-1]
    low = np.zeros_like(mat)
    first_fail = np.full(mat.shape[:-2], -1, dtype=np.int64)
    with np.errstate(all="ignore"):
        for j in range(n):
            prods = low[..., j:, :j] * np.conj(low[..., j, None, :j])
            t = mat[..., j:, j] - prods.sum(axis=-1)
            s = np.sqrt(t[..., 0].real if np.iscomplexobj(t) else t[..., 0])
            failed = np.isnan(s) & (first_fail < 0)
            first_fail[failed] = j
            low[..., j:, j] = t / s[..., None]
    return low, first_fail


@dataclass(frozen=True)
class _CholeskyFans:
    """result[i, j] (i >= j, in the lower frame) reads a[r, c] for c <= r <= j and a[i, c]
    for c <= j; a NaN-filled batch element reads (control) a[r, c], c <= r <= j0."""

    lower: bool
    n: int
    first_fail: np.ndarray

    def __call__(self, result: int, ridx: tuple[np.ndarray, ...]) -> list[Fan]:
        batch = ridx[:-2]
        p, q = ridx[-2], ridx[-1]
        i, j = (p, q) if self.lower else (q, p)
        rows = np.arange(self.n, dtype=np.int64)[:, None]
        cols = np.arange(self.n, dtype=np.int64)[None, :]
        i2, j2 = expand(i, 2), expand(j, 2)
        ff = self.first_fail[tuple(batch)] if batch else self.first_fail[()]
        ff = expand(np.broadcast_to(ff, np.shape(i)), 2)  # S + (1, 1) even without batch dims
        ok = ff < 0
        read = ((cols <= rows) & (rows <= j2)) | ((rows == i2) & (cols <= j2))
        window = ok & (i2 >= j2) & read
        control = ~ok & (cols <= rows) & (rows <= ff)
        bat = tuple(expand(x, 2) for x in batch)
        a_index = (*bat, rows, cols) if self.lower else (*bat, cols, rows)
        return [Fan(0, "window", a_index, window), Fan(0, "control", a_index, control)]


def _cholesky_provenance(ctx: OpCall, inputs: list[Any], outputs: list[Any]) -> FanInProvenance:
    a = inputs[0]
    lower = ctx.attrs.lower
    _, first_fail = factorize(a.astype(work_dtype(outputs[0].dtype)), lower)
    return FanInProvenance([value_shape(v) for v in outputs], [value_shape(v) for v in inputs],
                           _CholeskyFans(lower, int(a.shape[-1]), first_fail),
                           schedule=Msg("linalg.schedule.cholesky"))


def _explain_cholesky(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
                      index: tuple) -> Explanation:
    a = inputs[0]
    out = outputs[0]
    if result != 0:
        raise ExecutionError(f"result #{result} does not exist (the op has 1 result)")
    idx = check_index(value_shape(out), index, "result #0 index")
    lower = ctx.attrs.lower
    aname = _name(ctx, 0, "a")
    batch = idx[:-2]
    p, q = idx[-2:]
    i, j = (p, q) if lower else (q, p)
    wt = work_dtype(out.dtype)
    low, ff = factorize(a[batch].astype(wt)[None], lower)
    low, j0 = low[0], int(ff[0])
    value = out[idx]
    cplx = "_complex" if np.iscomplexobj(low) else ""

    def a_at(r: int, c: int) -> tuple[int, ...]:
        return (*batch, r, c) if lower else (*batch, c, r)

    frame = "lower" if lower else "upper"
    tail = "linalg.result_index_tail" if lower else "linalg.result_index_tail_reversed"
    steps = [Step("(i, j)", Msg(f"linalg.cholesky.ij.formula_{frame}"), (i, j),
                  substituted=Msg(tail, index=idx))]
    notes = []
    a_w = a[batch].astype(wt)
    a_local = a_w if lower else a_w.T
    if j0 >= 0:
        with np.errstate(all="ignore"):
            total = (low[j0, :j0] * np.conj(low[j0, :j0])).sum() if j0 else wt.type(0)
            t = a_local[j0, j0] - total
            s = np.sqrt(np.real(t))
        steps.append(Step(f"t_{j0}{j0}", Msg("linalg.cholesky.t_jj.formula_failing", j=j0), t,
                          substituted=Msg("linalg.difference", lhs=a_local[j0, j0], rhs=total)))
        steps.append(Step(f"s_{j0}", Msg(f"linalg.cholesky.s_j.formula_failing{cplx}"), s,
                          substituted=Msg("linalg.cholesky.s_j.substituted", t=np.real(t))))
        steps.append(Step(f"result[{_idx(idx)}]", Msg("linalg.cholesky.result.failed", j=j0), value))
        notes.append(Msg("linalg.cholesky.note.undefined"))
        return Explanation(ctx.op.name, idx, steps, value, notes)
    if i < j:
        steps.append(Step(f"result[{_idx(idx)}]", Msg("linalg.cholesky.result.other_triangle"), value))
        notes.append(Msg("linalg.cholesky.note.other_triangle"))
        return Explanation(ctx.op.name, idx, steps, value, notes)
    with np.errstate(all="ignore"):
        prods = low[i, :j] * np.conj(low[j, :j])
        total = prods.sum() if j else wt.type(0)
        t_ij = a_local[i, j] - total
        diag_prods = low[j, :j] * np.conj(low[j, :j])
        diag_total = diag_prods.sum() if j else wt.type(0)
        t_jj = a_local[j, j] - diag_total
        s_j = np.sqrt(np.real(t_jj))
    children = [Step(f"k = {k}", Msg("linalg.cholesky.term.formula", i=i, j=j, k=k), prods[k],
                     substituted=Msg("linalg.product", lhs=low[i, k], rhs=np.conj(low[j, k])))
                for k in range(min(j, EXPLAIN_MAX_TERMS))]
    steps.append(Step("a_ij", Msg(f"linalg.cholesky.a_ij.formula_{frame}"), a_local[i, j],
                      substituted=Msg("explain.element", name=aname, index=_idx(a_at(i, j)))))
    steps.append(Step("sum_k L_ik conj(L_jk)", Msg("linalg.cholesky.sum.formula"), total, children=children,
                      substituted=Msg("linalg.cholesky.sum.substituted", j=j)))
    steps.append(Step("t_ij", Msg("linalg.cholesky.t_ij.formula"), t_ij,
                      substituted=Msg("linalg.difference", lhs=a_local[i, j], rhs=total)))
    if i == j:
        steps.append(Step("L_jj", Msg(f"linalg.cholesky.L_jj.formula{cplx}"), low[j, j],
                          substituted=Msg("linalg.cholesky.L_jj.substituted", t=t_jj, t_re=np.real(t_jj))))
        notes.append(Msg(f"linalg.cholesky.note.pivot{cplx}"))
    else:
        steps.append(Step("t_jj", Msg("linalg.cholesky.t_jj.formula"), t_jj,
                          substituted=Msg("linalg.difference", lhs=a_local[j, j], rhs=diag_total)))
        steps.append(Step("s_j", Msg(f"linalg.cholesky.s_j.formula{cplx}"), s_j,
                          substituted=Msg("linalg.cholesky.s_j.substituted", t=np.real(t_jj))))
        steps.append(Step("L_ij", Msg("linalg.cholesky.L_ij.formula"), low[i, j],
                          substituted=Msg("linalg.quotient", lhs=t_ij, rhs=s_j)))
    if wt != out.dtype:
        step, note = _rounding(wt, out.dtype, f"result[{_idx(idx)}]", "L_jj" if i == j else "L_ij",
                               low[i, j], value)
        steps.append(step)
        notes.append(note)
    if j > EXPLAIN_MAX_TERMS:
        notes.append(Msg("linalg.note.more_terms", count=j - EXPLAIN_MAX_TERMS))
    return Explanation(ctx.op.name, idx, steps, value, notes)


@op("stablehlo.cholesky", aliases=("Cholesky",), verify=_verify_cholesky, attrs=CholeskyAttrs,
    infer=infer_cholesky, family="linalg", provenance=_cholesky_provenance, explain=_explain_cholesky)
def cholesky(ctx: OpCall, a: np.ndarray) -> np.ndarray:
    """result = L with a = L L^H (lower) or U with a = U^H U (upper), batched."""
    _static(ctx)
    lower = ctx.attrs.lower
    out = ctx.result_dtype()
    low, first_fail = factorize(a.astype(work_dtype(out)), lower)
    # XLA:CPU: a NaN pivot anywhere makes the whole matrix of that batch element NaN
    low = np.where((first_fail >= 0)[..., None, None], np.array(np.nan, dtype=low.dtype), low)
    return (low if lower else _swap(low)).astype(out)


# --- parameter schemas (hlolab.ops.examples) ------------------------------------------------

def _square_batch(shape: Sequence[int]) -> tuple[tuple[int, ...], int] | None:
    """(batch dims, n) of a batch of n x n matrices; None when ``shape`` is not one."""
    if len(shape) < 2 or shape[-1] != shape[-2]:
        return None
    return tuple(shape[:-2]), int(shape[-1])


def spd_example(shape: Sequence[int]) -> np.ndarray | None:
    """A symmetric positive-definite batch ``L L^T`` with the integer unit-diagonal
    ``L[i, j] = i - j + 1`` (j <= i) plus the batch position on the diagonal, so its
    Cholesky factor is ``L`` exactly (None when ``shape`` is not a batch of squares)."""
    sq = _square_batch(shape)
    if sq is None:
        return None
    batch, n = sq
    i, j = np.indices((n, n))
    low = np.where(j <= i, i - j + 1, 0).astype(np.float64)
    pos = np.arange(int(np.prod(batch, dtype=np.int64)), dtype=np.float64).reshape(*batch, 1, 1)
    low = low + pos * np.eye(n)
    return low @ np.swapaxes(low, -1, -2)


def triangular_example(shape: Sequence[int]) -> np.ndarray | None:
    """2 on the diagonal, 1 elsewhere: either triangle is well conditioned, and every
    solution is a dyadic fraction (exact in binary floats)."""
    sq = _square_batch(shape)
    if sq is None:
        return None
    batch, n = sq
    return np.broadcast_to(np.ones((n, n)) + np.eye(n), (*batch, n, n)).copy()


def _linalg_schemas() -> None:
    from hlolab.ops.examples import (
        Operand,
        OpParts,
        OpSchema,
        bool_param,
        dtype_param,
        enum_param,
        inferred_results,
        ints_param,
        register_schema,
        shape_param,
        ttype,
    )

    def chol_build(p: dict[str, Any]) -> OpParts:
        rec = CholeskyAttrs(lower=p["lower"])
        operands = [Operand("a", ttype(p["a"], p["dtype"]), spd_example(p["a"]))]
        return OpParts(operands, inferred_results("stablehlo.cholesky", rec, [o.type for o in operands],
                                                  p["dtype"]), rec)

    register_schema(OpSchema("stablehlo.cholesky", (
        shape_param("a", (3, 3), "a batch of square matrices (symmetric positive-definite by default)"),
        bool_param("lower", True, "the result is lower triangular L (a = L L^H), else upper U (a = U^H U)"),
        dtype_param("f32", "element type of a and the result (float or complex)"),
    ), {"default": {},
        "spec-example": {"a": (3, 3), "lower": True, "dtype": "f32", "index": (2, 1),
                         "inputs": {"a": [[1.0, 2.0, 3.0], [2.0, 20.0, 26.0], [3.0, 26.0, 70.0]]}}},
        chol_build, doc="Cholesky factor of a batch of Hermitian positive-definite matrices"))

    def tri_build(p: dict[str, Any]) -> OpParts:
        rec = TriangularSolveAttrs(left_side=p["left_side"], lower=p["lower"],
                                   unit_diagonal=p["unit_diagonal"], transpose_a=p["transpose_a"])
        operands = [Operand("a", ttype(p["a"], p["dtype"]), triangular_example(p["a"])),
                    Operand("b", ttype(p["b"], p["dtype"]))]
        return OpParts(operands, inferred_results("stablehlo.triangular_solve", rec,
                                                  [o.type for o in operands], p["dtype"]), rec)

    register_schema(OpSchema("stablehlo.triangular_solve", (
        shape_param("a", (3, 3), "a batch of square coefficient matrices (one triangle is read)"),
        shape_param("b", (3, 2), "the right-hand sides (same batch dims as a)"),
        bool_param("left_side", True, "solve op(a) x = b (else x op(a) = b)"),
        bool_param("lower", True, "read the lower triangle of a (else the upper)"),
        bool_param("unit_diagonal", False, "take a's diagonal as all ones (it is not read)"),
        enum_param("transpose_a", ("NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"), "NO_TRANSPOSE", "op(a)"),
        dtype_param("f32", "element type of a, b and the result (float or complex)"),
    ), {"default": {},
        "spec-example": {"a": (3, 3), "b": (3, 3), "left_side": True, "lower": True,
                         "unit_diagonal": False, "transpose_a": "NO_TRANSPOSE", "dtype": "f32",
                         "index": (1, 1),
                         "inputs": {"a": [[1.0, 0.0, 0.0], [2.0, 4.0, 0.0], [3.0, 5.0, 6.0]],
                                    "b": [[2.0, 0.0, 0.0], [4.0, 8.0, 0.0], [6.0, 10.0, 12.0]]}}},
        tri_build, doc="solve triangular systems of linear equations, batched"))

    def fft_build(p: dict[str, Any]) -> OpParts:
        kind, ft = p["fft_type"], p["dtype"]
        rec = FftAttrs(fft_type=kind, fft_length=p["fft_length"])
        operands = [Operand("operand", ttype(p["operand"], ft if kind == "RFFT" else f"complex<{ft}>"))]
        return OpParts(operands, inferred_results("stablehlo.fft", rec, [o.type for o in operands],
                                                  ft if kind == "IRFFT" else f"complex<{ft}>"), rec)

    register_schema(OpSchema("stablehlo.fft", (
        shape_param("operand", (2, 4), "shape of the operand; the trailing dims are transformed"),
        enum_param("fft_type", FFT_TYPES, "FFT", "FFT/IFFT complex to complex, RFFT real to complex, "
                   "IRFFT complex to real"),
        ints_param("fft_length", (4,), "lengths of the 1 to 3 transformed trailing dims"),
        dtype_param("f32", "the float type: the real side's element type, complex<dtype> the other's"),
    ), {"default": {},
        "spec-example": {"operand": (4,), "fft_type": "FFT", "fft_length": (4,), "dtype": "f32",
                         "index": (2,), "inputs": {"operand": [1, 0, 0, 0]}},
        "rfft": {"operand": (2, 4), "fft_type": "RFFT", "fft_length": (4,)},
        "irfft": {"operand": (2, 3), "fft_type": "IRFFT", "fft_length": (4,)},
        "fft2d": {"operand": (2, 3), "fft_type": "FFT", "fft_length": (2, 3)}},
        fft_build, doc="discrete Fourier transform over the trailing dims"))


_linalg_schemas()
