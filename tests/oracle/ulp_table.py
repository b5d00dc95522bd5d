"""THE table of tolerances for comparing hlolab with XLA:CPU.

Every tolerance the oracle suites use comes from here (tests/oracle/differential/*
and tests/ops/test_elementwise_oracle.py read it). An entry is a ``Bound``:

* ``exact``  bit patterns equal; NaN equals NaN whatever its sign and payload (NAN_RULE).
* ``ulp``    at most ``k`` units in the last place of the result type apart.
* ``rel``    complex results: |hlolab - xla| <= k * eps * |xla|.
* ``terms``  reductions / contractions: |hlolab - xla| <= k * n * eps * sum|terms| + eps_out * |xla|,
             n the number of terms combined, eps the unit roundoff of the accumulation type.

Where XLA:CPU's result may be the one of its flush-to-zero arithmetic (``ftz=True``), XLA's
value is also accepted when it equals hlolab's result on flushed inputs with flushed
outputs (FTZ_RULE). Each entry names the spec passage (/work/shared/seeds, StableHLO
specification, section in parentheses) that leaves the result to the implementation.
"""

from __future__ import annotations

from dataclasses import dataclass

# --- spec passages (StableHLO specification, 003_*.txt) ---------------------------------------
ACCURACY = ('"At the moment, StableHLO does not provide guarantees about numerical accuracy" '
            "(Execution / Accuracy)")
FP_EXCEPTIONS = ('"Exceptions for nonstandard operations (e.g. complex arithmetic and certain '
                 'transcendental functions) are implementation-defined" (Errors / Floating-point exceptions)')
REDUCE_ORDER = ('"The order of reductions is implementation-defined" (reduce; reduce_window and '
                'dot_general/convolution are defined through reduce and a "schedule" that is '
                '"an implementation-defined ... binary tree")')
PRECISION = ('"precision_config controls the tradeoff between speed and accuracy ... the semantics of '
             'these enum values is underspecified" (dot_general)')
CONVERT_TBD = ('"if the source value can be exactly represented in the destination type, the result '
               'value is that exact representation. Otherwise, the behavior is TBD" (convert)')
IEEE = ('"floating point numbers following IEEE-754 conventions" (Types); IEEE-754 leaves NaN '
        "payloads to the implementation")

NAN_RULE = ("Two NaNs agree whatever their sign and payload bits: XLA:CPU quiets signalling NaNs and "
            "computes narrow floats through f16/f32, which changes payloads. " + IEEE)
FTZ_RULE = ("XLA:CPU runs f32/f64 (and bf16, computed in f32) arithmetic with flush-to-zero / "
            "denormals-are-zero; hlolab keeps denormals as IEEE-754 does. " + ACCURACY)


@dataclass(frozen=True)
class Bound:
    kind: str  # "exact" | "ulp" | "rel" | "terms"
    k: float = 0
    reason: str = ""
    ftz: bool = False


EXACT = Bound("exact", 0, "bit-exact: integers, booleans, data movement and exactly rounded IEEE-754 ops")
EXACT_FTZ = Bound("exact", 0, "exactly rounded IEEE-754 arithmetic; " + FTZ_RULE, ftz=True)

# ---- transcendental element-wise ops: ulps per element type ("complex": rel bound in eps) ------
# Measured maxima of |hlolab - XLA:CPU| (mostly XLA's own error: hlolab's complex results are
# within ~2 eps of the exact value except atan2, whose reference formula loses ~100 eps near
# x^2 + y^2 = 0). f8: XLA computes through f16 and rounds twice. None: not compared.
_TRANSCENDENTAL_WHY = "XLA:CPU's polynomial approximations vs numpy/libm. " + ACCURACY
ULP_BOUNDS: dict[str, dict[str, int | None]] = {
    "sine":                  dict(f32=2, f64=1, f16=1, bf16=1, f8=1, complex=16),
    "cosine":                dict(f32=2, f64=1, f16=1, bf16=1, f8=1, complex=16),
    "tan":                   dict(f32=3, f64=2, f16=1, bf16=1, f8=1, complex=16),
    "tanh":                  dict(f32=5, f64=8, f16=1, bf16=1, f8=1, complex=24),
    "exponential":           dict(f32=2, f64=1, f16=1, bf16=1, f8=1, complex=4),
    "exponential_minus_one": dict(f32=6, f64=5, f16=2, bf16=1, f8=1, complex=4),
    "log":                   dict(f32=3, f64=1, f16=1, bf16=1, f8=1, complex=80),
    "log_plus_one":          dict(f32=3, f64=3, f16=1, bf16=1, f8=1, complex=96),
    "logistic":              dict(f32=3, f64=3, f16=1, bf16=1, f8=1, complex=16),
    "rsqrt":                 dict(f32=2, f64=2, f16=1, bf16=1, f8=1, complex=4),
    "cbrt":                  dict(f32=2, f64=4, f16=1, bf16=1, f8=1, complex=None),  # no complex cbrt
    "atan2":                 dict(f32=3, f64=2, f16=1, bf16=1, f8=1, complex=192),
    "power":                 dict(f32=2, f64=2, f16=1, bf16=1, f8=1, complex=8),
    # complex arithmetic (rel, eps): numpy and XLA use different formulas
    "multiply":              dict(complex=2),
    "divide":                dict(complex=4),
    "sqrt":                  dict(complex=2),
    "sign":                  dict(complex=1),
}

# ---- reductions and contractions ---------------------------------------------------------------
REDUCE_SUM = Bound("terms", 2, "summation order (XLA: vectorized partial sums; bf16/f16 partial sums "
                   "rounded to the element type, hlolab accumulates in f32). " + REDUCE_ORDER, ftz=True)
REDUCE_PROD = Bound("terms", 2, "product order; terms = |result|. " + REDUCE_ORDER, ftz=True)
CONTRACTION = Bound("terms", 2, "summation order of the dot products; sub-f32 operands accumulate in "
                    "f32, then the result is rounded once more (the eps_out * |xla| term). "
                    + REDUCE_ORDER + "; " + PRECISION, ftz=True)
# complex dot_general and f64 convolution whose loop tests no positions: hlolab sums in XLA:CPU's own
# order (hlolab/ops/contraction.py, "XLA:CPU's summation orders"), so they are bit-exact (measured:
# tests/ops/test_contraction_order.py and the bit-exact cases of test_diff_contraction.py). Not
# covered (they keep CONTRACTION): what xla_dot_guaranteed leaves out (k-blocked products XLA may
# run on several threads, dots of two vectors with transposed operands); f64 convolutions with
# padding, lhs_dilation or groups of more than one input feature (xla_conv_conditional: LLVM may
# hoist a product out of its fused multiply-add); complex convolutions (LLVM fuses either
# imaginary product).
CONTRACTION_XLA_ORDER = Bound("exact", 0, "summed in XLA:CPU's order: Eigen's gebp / gemv kernels (AVX "
                              "without FMA) and XLA's multiply / reduce rewrites for complex dot_general, "
                              "XLA's fused loop nest for f64 convolution. " + REDUCE_ORDER + "; " + FTZ_RULE,
                              ftz=True)
WINDOW_SUM = Bound("terms", 2, "summation order within a window (XLA may fold dilated/padded windows "
                   "column by column). " + REDUCE_ORDER, ftz=True)


# not a tolerance: a documented exclusion of the differential sort cases
SORT_DAZ = ("sort keys: XLA:CPU's comparator sees f32/f64/bf16 denormals as zero (DAZ), so they tie "
            "with +-0 and each other and keep their input order; IEEE-754 orders them. " + ACCURACY)


SCATTER_WINDOW_DROP = ("scatter windows partly out of bounds: the spec skips each update element whose "
                       "result_index is out of bounds (scatter: 'If result_index is in bounds ... "
                       "Otherwise updated_results = results'); XLA:CPU skips the whole update window. "
                       "Not a tolerance: the differential cases draw windows wholly in or wholly out "
                       "of bounds (or clamp them, jax's CLIP mode); hlolab follows the spec "
                       "(tests/ops/test_scatter.py::test_oob_drops_elements_not_whole_windows).")


REDUCE_PRECISION_NAN_M0 = ("reduce_precision with mantissa_bits = 0 of a NaN: the spec truncates the "
                           "mantissa ('the mantissa bits are truncated to mantissa_bits'), which "
                           "leaves +-inf, and the StableHLO conformance program reduce_precision.mlir#2 "
                           "expects inf; XLA:CPU keeps the NaN. Not a tolerance: those inputs are left out "
                           "of the differential cases (hlolab follows the spec).")


POPCNT_I4 = ("popcnt on negative i4: XLA:CPU counts the bits of the sign-extended storage byte "
             "(popcnt(-8) = 5), the spec counts the value's 4 bits (1); an XLA bug, not a tolerance: "
             "those inputs are left out of the differential cases.")


def _entry(op: str) -> dict[str, Bound]:
    row = ULP_BOUNDS[op]
    out = {}
    for cls, k in row.items():
        if k is None:
            continue
        if cls == "complex":
            out[cls] = Bound("rel", k, "complex formulas differ (numpy vs XLA). " + FP_EXCEPTIONS, ftz=True)
        else:
            out[cls] = Bound("ulp", k, _TRANSCENDENTAL_WHY, ftz=True)
    return out


TABLE: dict[str, dict[str, Bound]] = {op: _entry(op) for op in ULP_BOUNDS}
for _op in ("multiply", "divide", "sqrt", "sign"):  # real: exactly rounded
    TABLE[_op]["*"] = EXACT_FTZ
TABLE.update({
    # exactly rounded arithmetic on floats (IEEE-754 operations named by the spec)
    **{op: {"*": EXACT_FTZ} for op in (
        "add", "subtract", "remainder", "maximum", "minimum", "negate", "abs", "floor", "ceil",
        "round_nearest_even", "round_nearest_afz", "is_finite", "clamp", "select", "compare")},
    # integer-only / bit ops
    **{op: {"*": EXACT} for op in ("and", "or", "xor", "not", "shift_left", "shift_right_arithmetic",
                                   "shift_right_logical", "popcnt", "count_leading_zeros")},
    # conversions: bit-exact; XLA's flush of denormal inputs/results accepted
    "convert": {"*": Bound("exact", 0, "round-to-nearest-even conversions; out-of-range float->int "
                           "saturates on XLA:CPU and in hlolab. " + CONVERT_TBD + "; " + FTZ_RULE, ftz=True)},
    "bitcast_convert": {"*": EXACT},
    "reduce_precision": {"*": EXACT_FTZ},
    # data movement: bit-exact, no arithmetic (XLA copies bits, no flush)
    **{op: {"*": EXACT} for op in ("pad", "slice", "dynamic_slice", "dynamic_update_slice", "concatenate",
                                   "transpose", "broadcast_in_dim", "reshape", "reverse", "iota", "gather",
                                   "sort", "select_and_scatter", "argmax")},
    # scatter: unique indices; float add/mul combine one update with the operand (exact rounding);
    # a complex multiply update is one complex multiply
    "scatter": {"*": EXACT_FTZ, "multiply complex": TABLE["multiply"]["complex"]},
    "reduce": {"sum": REDUCE_SUM, "prod": REDUCE_PROD, "*": EXACT_FTZ},  # max/min/and/or exact
    "reduce_window": {"sum": WINDOW_SUM, "prod": REDUCE_PROD, "*": EXACT_FTZ},
    # "unguaranteed": a case hlolab.ops.contraction.xla_dot_guaranteed does not claim (a k-blocked
    # product, a batched dot of two vectors with a transposed operand)
    "dot_general": {"complex": CONTRACTION_XLA_ORDER, "unguaranteed complex": CONTRACTION, "*": CONTRACTION},
    # "unpadded": a case whose convolution has no padding, no lhs_dilation, no batch groups and
    # feature groups of one input feature at most (xla_conv_conditional is False)
    # "fused": a convolution whose XLA loop keeps every product fused though it tests positions,
    # measured structurally (the issue-25 grouped 1-D shapes: the code does not depend on the values,
    # and 3 seeds of cancelling normals each are bit-exact)
    "convolution": {"unpadded f64": CONTRACTION_XLA_ORDER, "fused f64": CONTRACTION_XLA_ORDER,
                    "*": CONTRACTION},
})


# ---- linalg: cholesky, triangular_solve, fft ---------------------------------------------------
# terms per element (tests/oracle/differential/test_diff_linalg.py computes them in f64/c128);
# "worst" = measured max |hlolab - xla| / bound over 150 random programs per op. bf16/f16: hlolab
# rounds once from f32, XLA:CPU rounds every intermediate; the element type's eps covers both.
CHOLESKY_UNDEFINED = ('cholesky: "If there exists i where the input matrix is not an Hermitian '
                      'positive-definite matrix, then the behavior is undefined" and "The output values in '
                      'the opposite triangle ... are implementation-defined" (cholesky). Compared bit-exact '
                      "anyway, as hlolab's documented choices equal XLA:CPU's: only the `lower` triangle "
                      "is read (the other holds NaN/inf garbage in the cases), the other result triangle "
                      "is 0, a not-PD batch element (pivot < 0 or NaN) is all NaN, the others unaffected.")
TABLE.update({
    "cholesky": {"*": Bound("terms", 2, "(|L|·|L|ᴴ)_ij/|L_jj|, n = matrix size; XLA:CPU's "
                            "CholeskyExpander sums L·Lᴴ as a dot, hlolab pairwise; worst 0.35 (complex<f64>; "
                            "f32 0.32, bf16/f16 0.19). " + ACCURACY + "; " + CHOLESKY_UNDEFINED, ftz=True)},
    "triangular_solve": {"*": Bound("terms", 2, "|M⁻¹|·(|M|·|x| + |b|) (Higham's componentwise bound "
                                    "for substitution), n = m; XLA:CPU inverts diagonal blocks and "
                                    "multiplies, hlolab substitutes; worst 0.20 (f64; f32 0.19, complex<f32> "
                                    "0.17, bf16 0.10). Only the read triangle is used ('Input data is read "
                                    "only from the lower triangle of a, if lower is true or upper triangle "
                                    "of a, otherwise'); with unit_diagonal the spec leaves a non-1 diagonal "
                                    "undefined, hlolab and XLA:CPU do not read it (cases: garbage there). "
                                    + ACCURACY, ftz=True)},
    "fft": {"*": Bound("terms", 2, "max(1, log2 N)·Σ|x| over the transformed block (/N inverse, IRFFT "
                       "counts its doubled half twice), n = 1; XLA:CPU's DUCC FFT in the element type vs "
                       "hlolab's pocketfft in f64 rounded once; worst 0.21 (RFFT f32; complex<f32> 0.17, "
                       "complex<f64> 0.10). " + ACCURACY, ftz=True)},
})

# ---- batch_norm_*, map and control flow (while / if / case) ------------------------------------
# map and control flow need no row: their cases use the row of the (exact) ops in their bodies.
# batch_norm_*: terms bounds (tests/oracle/differential/test_diff_control.py::bn_terms); n = N, the
# elements per feature. XLA:CPU's batchnorm_expander computes Var = E[x^2] - E[x]^2 and multiplies
# by rsqrt(var + epsilon) where the spec's decomposition divides by sqrt; hlolab follows the spec
# (sub-f32 types in f32, rounded once). Measured worst |hlolab - xla| / (n * eps * terms): inference
# 1.45 (f32), training 0.28, grad 0.68, over ~2,600 random cases.
_BN_WHY = ("the spec's decomposition vs XLA's rearranged one (E[x^2] - E[x]^2, rsqrt, summation "
           "order). " + ACCURACY + "; " + REDUCE_ORDER)
TABLE.update({
    # per element: XLA's rsqrt (<= 2 ulp) and 3 roundings, hlolab's 2: k = 4 on
    # |scale| * (|x| + |mean|) / sqrt(variance + epsilon) + |offset|
    "batch_norm_inference": {"*": Bound("terms", 4, _BN_WHY, ftz=True)},
    # per-feature sums of N terms (REDUCE_SUM's k), their errors carried through rsqrt to the outputs
    "batch_norm_training": {"*": Bound("terms", 2, _BN_WHY, ftz=True)},
    "batch_norm_grad": {"*": Bound("terms", 2, _BN_WHY, ftz=True)},
})

# not tolerances: documented exclusions of the differential batch_norm cases
BN_VARIANCE_CANCELS = (
    "batch_norm_training where the variance's rounding error may exceed variance + epsilon (e.g. one "
    "element per feature with epsilon = 0, or |mean| >> spread in f16): the spec's mean((x - mean)^2) "
    "is >= 0 (exactly 0 for a constant feature, so 0 / sqrt(0) = NaN), XLA:CPU's E[x^2] - E[x]^2 is "
    "a rounding residue of either sign (finite outputs where the spec gives NaN). " + ACCURACY
    + " Those cases are rejected (bn_terms reports them).")
BN_OVERFLOW = (
    "batch_norm_* with finite operand / grad_output values whose squares or products overflow: XLA:CPU's "
    "rearranged formulas give NaN where the spec's decomposition gives +-inf or a finite value (and -inf "
    "where it gives NaN), e.g. E[x^2] - E[x]^2 = inf - inf where the spec's variance is inf. " + ACCURACY
    + " The cases turn values beyond sqrt(max) / 4 into +-inf (well defined on both sides).")
COMPLEX_ADD_CHAIN = (
    "chained complex add / subtract (in a map body, a while body or an if branch): XLA:CPU fuses them "
    "without rounding the intermediate, e.g. (x + w) - w gives x in complex<f32>, where the spec's add "
    "and subtract round each result (IEEE-754 per part, as hlolab does). " + ACCURACY + " Not a "
    "tolerance: the control-flow and map cases apply one complex add / subtract per body.")


# ---- CHLO ops: their decompositions, evaluated op by op (hlolab/ops/chlo*.py) -----------------------
# The default is check.expect_close's 3 ULP; each larger bound names its cause, measured against
# XLA:CPU (the worst values measured are in the session notes of issue 25).
CHLO_WHY = ("CHLO has no spec: an op means its legalization (ChloLegalizeToStablehlo.cpp), evaluated "
            "StableHLO op by StableHLO op; XLA:CPU's own kernels differ by ulps. " + ACCURACY)
CHLO_ULP = 3
CHLO_BOUNDS: dict[str, dict[str, tuple[int, str]]] = {
    "sinh": {"f32": (6, "XLA:CPU's expm1 (exponential_minus_one f32 = 6) for |x| < 1"),
             "f64": (5, "XLA:CPU's expm1 (exponential_minus_one f64 = 5) for |x| < 1"),
             "complex": (8, "complex exp of two terms that may cancel")},
    "cosh": {"complex": (8, "complex exp (exponential complex = 4) of two terms that may cancel")},
    "atanh": {"f64": (160, "XLA:CPU's f64 log1p is ~50 ulp off near -0.4 (log1p(-0.40922667445924565): "
                           "XLA -0.5263228790720856, exact -0.526322879072096); log1p(x) - log1p(-x) "
                           "amplifies it"),
              "complex": (96, "complex log1p (log_plus_one complex = 96)")},
    "acos": {"complex": (4, "Hull et al. in real arithmetic: log1p / atan2 / sqrt of both sides")},
    "asin": {"complex": (4, "as acos")}, "acosh": {"complex": (4, "as acos")},
    "asinh": {"complex": (4, "as asin")},
    "atan": {"complex": (192, "complex atan2 (atan2 complex = 192), compared against "
                              "eps * max(|xla|, 1): hlolab's complex atan2 has absolute error near 0")},
    "tan": {"complex": (8, "complex division by (1, -tan a tanh b) (divide complex = 4)")},
    "square": {"complex": (2, "real arithmetic; XLA flushes subnormal products to 0")},
    # near the roots of lgamma (x = 1, 2) and digamma (x ~ 1.46 and one per negative unit interval)
    # the result cancels O(1) terms: XLA:CPU's log / sin / cos (1-3 ulp from numpy's) move them
    "lgamma": {"f32": (4096, "cancellation near the roots (measured 1536)"),
               "f64": (64, "cancellation near the roots (measured 12)")},
    "digamma": {"f32": (4096, "cancellation near the roots (measured 2048)")},
    "polygamma": {"f32": (64, "n! zeta(n + 1, x < 0) sums terms of both signs (measured 18)"),
                  "f64": (64, "as f32 (measured 39)")},
}


def chlo_bound(op: str, et: str) -> Bound:
    """The tolerance of ``chlo.<op>`` on element type ``et``: ulps, or eps * |xla| for complex."""
    cls = type_class(et)
    k, why = CHLO_BOUNDS.get(op, {}).get(cls, (CHLO_ULP, ""))
    return Bound("rel" if cls == "complex" else "ulp", k, f"{why}. {CHLO_WHY}" if why else CHLO_WHY,
                 ftz=True)


def type_class(et: str) -> str:
    """The column of an element type: f32, f64, f16, bf16, f8, complex, int, bool."""
    if et.startswith("f8"):
        return "f8"
    if et.startswith("complex"):
        return "complex"
    if et == "i1":
        return "bool"
    if et.startswith(("i", "ui")):
        return "int"
    return et


def bound(op: str, et: str, variant: str | None = None) -> Bound:
    """The tolerance of ``op`` on element type ``et`` (``variant``: the body of reduce-like ops,
    "sum" / "prod" / other; a "variant class" key, e.g. "multiply complex", wins over both).
    Integers and booleans are always bit-exact."""
    cls = type_class(et)
    if cls in ("int", "bool"):
        return EXACT
    row = TABLE[op]
    for key in (variant and f"{variant} {cls}", variant, cls, "*"):
        if key is not None and key in row:
            return row[key]
    raise KeyError(f"ulp_table has no bound for {op} on {et}")
