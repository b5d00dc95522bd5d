"""Each builder function not covered by a document example, built with hlolab.xla and run
by hlolab and by XLA:CPU (jax's client compiling the printed module): the same program must
give the same values (exact for data movement and integers, close for float arithmetic)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from hlolab.errors import VerificationError
from hlolab.xla import (
    C64,
    F32,
    S32,
    U64,
    AfterAll,
    BatchNormGrad,
    BatchNormInference,
    BatchNormTraining,
    BitcastConvertType,
    BroadcastInDim,
    Call,
    Cholesky,
    Compare,
    Conditional,
    ConstantLiteral,
    ConstantR0,
    ConstantR1,
    ConstantR2,
    Conv,
    ConvertElementType,
    ConvGeneralDilated,
    ConvolutionDimensionNumbers,
    ConvWithGeneralPadding,
    CreateScalarAddComputation,
    CreateScalarGtComputation,
    CreateScalarMaxComputation,
    CreateToken,
    Dot,
    Fft,
    GetDimensionSize,
    Iota,
    Map,
    Neg,
    OptimizationBarrier,
    Pad,
    PaddingConfig,
    Parameter,
    Reduce,
    ReducePrecision,
    ReduceWindowWithGeneralPadding,
    Rev,
    RngBitGenerator,
    RngNormal,
    RngUniform,
    Scatter,
    ScatterDimensionNumbers,
    Select,
    SliceInDim,
    Sort,
    TopK,
    Transpose,
    TriangularSolve,
    While,
    XlaBuilder,
    XlaOp,
)
from hlolab.xla import FUNCTIONS as F
from tests.xla_oracle import run_xla

RNG = np.random.default_rng(26)
X24 = RNG.standard_normal((2, 4)).astype(np.float32)
IMG = RNG.standard_normal((1, 2, 5, 5)).astype(np.float32)
KER = RNG.standard_normal((3, 2, 3, 3)).astype(np.float32)


def _scalar(name: str, body: Callable[[XlaOp, XlaOp], XlaOp], t: str = "f32"):
    b = XlaBuilder(name)
    return b.build(body(Parameter(b, 0, f"{t}[]", "a"), Parameter(b, 1, f"{t}[]", "c")))


def _branch(name: str, body: Callable[[XlaOp], XlaOp]):
    b = XlaBuilder(name)
    return b.build(body(Parameter(b, 0, "f32[2,4]", "v")))


def p_pad(b, x):
    return Pad(x, ConstantR0(b, -1.0), PaddingConfig.make([(1, -1, 1), (0, 2, 2)]))


def p_pad_keywords(b, x):
    return Pad(x, 0.5, low=[0, 1], high=[1, 0], interior=[0, 1])


def p_map(b, x):
    return Map(b, [x, Neg(x)], _scalar("f", lambda a, c: a * 2.0 + c), [0, 1])


def p_conv(b, x):
    return Conv(ConstantLiteral(b, IMG), ConstantLiteral(b, KER), [1, 1], "SAME")


def p_conv_strided(b, x):
    return Conv(ConstantLiteral(b, IMG), ConstantLiteral(b, KER), [2, 2], "VALID")


def p_conv_general_padding(b, x):
    return ConvWithGeneralPadding(ConstantLiteral(b, IMG), ConstantLiteral(b, KER), [1, 2], [(2, 0), (1, 1)])


def p_conv_general_dilated(b, x):
    lhs = ConstantLiteral(b, IMG.transpose(0, 2, 3, 1))  # NHWC
    rhs = ConstantLiteral(b, KER[:2].transpose(2, 3, 1, 0))  # HWIO, 2 -> 2 features
    dn = ConvolutionDimensionNumbers(0, 3, [1, 2], 2, 3, [0, 1], 0, 3, [1, 2])
    return ConvGeneralDilated(lhs, rhs, [1, 1], [(1, 1), (0, 2)], [2, 1], [1, 2], dn)


def p_conv_groups(b, x):
    ker = ConstantLiteral(b, RNG.standard_normal((4, 1, 2, 2)).astype(np.float32))
    return Conv(ConstantLiteral(b, IMG), ker, [1, 1], "VALID", feature_group_count=2)


def p_scatter(b, x):
    idx = ConstantR2(b, [[1], [0], [1]], S32)
    upd = ConstantLiteral(b, RNG.standard_normal((3, 4)).astype(np.float32))
    dn = ScatterDimensionNumbers(update_window_dims=[1], inserted_window_dims=[0],
                                 scatter_dims_to_operand_dims=[0], index_vector_dim=1)
    return Scatter(x, idx, upd, CreateScalarAddComputation(F32), dn)


def p_if(b, x):
    pred = Compare(Reduce(x, ConstantR0(b, 0.0), CreateScalarAddComputation(F32), [0, 1]),
                   ConstantR0(b, 0.0), "GT")
    return Conditional(pred, x, _branch("t", Neg), x, _branch("e", lambda v: v * v))


def p_case(b, x):
    branches = [_branch("b0", Neg), _branch("b1", lambda v: v + 1.0), _branch("b2", lambda v: v * 3.0)]
    return Conditional(ConstantR0(b, 1, S32), branches, [x, x, x])


def p_call(b, x):
    return Call(b, _branch("helper", lambda v: v * v - 1.0), [x])


def p_while(b, x):
    cb = XlaBuilder("cond")
    i = Parameter(cb, 0, "s32[]")
    Parameter(cb, 1, "f32[2,4]")
    cond = cb.build(F["Lt"](i, ConstantR0(cb, 3, S32)))
    bb = XlaBuilder("body")
    i, v = Parameter(bb, 0, "s32[]"), Parameter(bb, 1, "f32[2,4]")
    body = bb.build([i + 1, v * 2.0])
    return While(cond, body, [ConstantR0(b, 0, S32), x])[1]


def p_sort_desc(b, x):
    return Sort(x, CreateScalarGtComputation([F32]), dimension=1, is_stable=True)


def p_topk(b, x):
    return list(TopK(x, 2))


def p_reduce_window_general(b, x):
    return ReduceWindowWithGeneralPadding(x, ConstantR0(b, -np.inf), CreateScalarMaxComputation(F32),
                                          [2, 2], [1, 2], [1, 2], [1, 1], [(0, 1), (1, 0)])


def p_select_and_scatter_same(b, x):
    src = ConstantLiteral(b, np.arange(4, dtype=np.float32).reshape(1, 4) + 1)
    return F["SelectAndScatter"](x, F["CreateScalarGeComputation"]([F32]), [2, 1], [2, 1], "SAME", src,
                                 ConstantR0(b, 0.0), CreateScalarAddComputation(F32))


def p_dot(b, x):
    return Dot(x, Transpose(x, [1, 0]), ["HIGHEST", "HIGHEST"])


def p_cholesky(b, x):
    a = ConstantR2(b, [[4.0, 2.0, 0.4], [2.0, 5.0, 1.0], [0.4, 1.0, 3.0]], F32)
    return Cholesky(a, lower=True)


def p_triangular_solve(b, x):
    a = ConstantR2(b, [[2.0, 0.0], [1.0, 3.0]], F32)
    return TriangularSolve(a, x, True, True, False, "TRANSPOSE")


def p_fft(b, x):
    return Fft(ConvertElementType(x, C64), "FFT", [4])


def p_rfft(b, x):
    return Fft(x, "RFFT", [4])


def p_batch_norm(b, x):
    scale, offset = ConstantR1(b, [1.0, 2.0], F32), ConstantR1(b, [0.5, -0.5], F32)
    out, mean, var = BatchNormTraining(x, scale, offset, 0.001, 0)
    inf = BatchNormInference(x, scale, offset, mean, var, 0.001, 0)
    grads = BatchNormGrad(x, scale, mean, var, inf, 0.001, 0)
    return [out, mean, var, inf, *grads]


def p_bitcast(b, x):
    return [BitcastConvertType(x, S32), BitcastConvertType(x, "u8"),
            BitcastConvertType(BitcastConvertType(x, "u16"), F32)]


def p_reduce_precision(b, x):
    return ReducePrecision(x, 5, 3)


def p_moves(b, x):
    return [Rev(x, [0, 1]), SliceInDim(x, 1, 4, 2, 1),
            BroadcastInDim(ConstantR1(b, [1, 2], S32), [2, 3], [0]),
            Iota(b, "f32[2,3]", 1)]


def p_compare_types(b, x):
    i = ConstantR1(b, [-1, 0, 3], S32)
    return [Compare(i, ConstantR0(b, 0, S32), "LT", compare_type="SIGNED"),
            # -0.0 < +0.0 in total order (from x, not constants: XLA's constant folding says no)
            Compare(F["Neg"](x - x), x - x, "LT", compare_type="TOTALORDER"),
            Compare(x - x, F["Neg"](x - x), "LT", compare_type="TOTALORDER")]


def p_barrier(b, x):
    return list(OptimizationBarrier([x, Neg(x)]))


def p_dimension_size(b, x):
    return GetDimensionSize(x, 1)


def p_select_scalar_broadcast(b, x):
    return Select(F["Gt"](x, ConstantR0(b, 0.0)), x, F["Mul"](x, ConstantR0(b, 0.1)))


ELEMENTWISE_UNARY = ["Abs", "Ceil", "Cos", "Exp", "Expm1", "Floor", "IsFinite", "Log1p", "Logistic", "Neg",
                     "RoundNearestAfz", "RoundNearestEven", "Sign", "Sin", "Tanh", "Cbrt", "Tan"]


def p_unary(b, x):
    return [F[n](x) for n in ELEMENTWISE_UNARY] + [F["Sqrt"](F["Abs"](x)), F["Log"](F["Abs"](x)),
                                                   F["Rsqrt"](F["Abs"](x))]


def p_binary(b, x):
    y = x * 0.5 + 0.25
    outs = [F[n](x, y) for n in ("Add", "Sub", "Mul", "Div", "Rem", "Max", "Min", "Atan2")]
    outs.append(F["Pow"](F["Abs"](x), y))
    i = ConvertElementType(x * 10.0, S32)
    j = ConstantR1(b, [1, 2, 3, 4], S32)
    outs += [F[n](i, j, broadcast_dimensions=[1]) for n in
             ("And", "Or", "Xor", "ShiftLeft", "ShiftRightArithmetic", "ShiftRightLogical")]
    outs += [F["Not"](i), F["PopulationCount"](i), F["Clz"](i)]
    outs += [F[n](x, y) for n in ("Eq", "Ne", "Ge", "Gt", "Le", "Lt")]
    return outs


PROGRAMS = {name[2:]: fn for name, fn in globals().items() if name.startswith("p_")}
INEXACT = {"conv", "conv_strided", "conv_general_padding", "conv_general_dilated", "conv_groups", "cholesky",
           "triangular_solve", "fft", "rfft", "batch_norm", "unary", "binary", "dot", "map",
           "call"}  # XLA may fuse a*b-c to an FMA


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_against_xla(name):
    b = XlaBuilder("main")
    x = Parameter(b, 0, "f32[2,4]", "x")
    root = PROGRAMS[name](b, x)
    comp = b.build(root)
    ours = comp.run(X24)
    theirs = run_xla(comp.as_text(), X24)
    assert len(ours) == len(theirs)
    for k, (o, t) in enumerate(zip(ours, theirs, strict=True)):
        assert o.shape == t.shape and o.dtype == t.dtype, (name, k)
        if name in INEXACT and o.dtype.kind in "fc":
            np.testing.assert_allclose(o, t, rtol=2e-5, atol=2e-6, err_msg=f"{name} #{k}")
        else:
            np.testing.assert_array_equal(o, t, err_msg=f"{name} #{k}")


def test_rng_ops_shapes_and_ranges():
    """stablehlo.rng's numbers are implementation-defined: shapes, types and ranges only."""
    b = XlaBuilder("main")
    u = RngUniform(ConstantR0(b, 2.0), ConstantR0(b, 3.0), "f32[3,4]")
    n = RngNormal(ConstantR0(b, 0.0), ConstantR0(b, 1.0), "f32[5]")
    state, bits = RngBitGenerator("THREE_FRY", ConstantR1(b, [1, 2], U64), "u32[2,3]")
    ou, on, ost, obits = b.build([u, n, state, bits]).run()
    assert ou.shape == (3, 4) and ou.dtype == np.float32 and np.all((ou >= 2) & (ou < 3))
    assert on.shape == (5,) and on.dtype == np.float32
    assert ost.shape == (2,) and ost.dtype == np.uint64 and obits.shape == (2, 3) and obits.dtype == np.uint32


def test_rng_bit_generator_matches_xla():
    b = XlaBuilder("main")
    state, bits = RngBitGenerator("THREE_FRY", ConstantR1(b, [1, 2], U64), "u32[2,3]")
    comp = b.build([state, bits])
    for o, t in zip(comp.run(), run_xla(comp.as_text()), strict=True):
        np.testing.assert_array_equal(o, t)


def test_tokens():
    b = XlaBuilder("main")
    t = AfterAll(b, [CreateToken(b), CreateToken(b)])
    assert str(t.type) == "!stablehlo.token"
    assert "stablehlo.after_all" in b.build(t).as_text()


def test_conditional_operand_type_must_match_branch():
    b = XlaBuilder("main")
    x = Parameter(b, 0, "f32[2]", "x")
    with pytest.raises(Exception, match="parameter"):
        Conditional(ConstantR0(b, True), x, _branch("t", Neg), x, _branch("e", Neg))


def test_topk_smallest_is_refused():
    b = XlaBuilder("main")
    with pytest.raises(Exception, match="largest=False"):
        TopK(Parameter(b, 0, "f32[4]"), 2, largest=False)


def test_transpose_rank0():
    b = XlaBuilder("main")
    x = Parameter(b, 0, "f32[]", "x")
    assert b.build(Transpose(x, [])).run(np.float32(2).reshape(()))[0].shape == ()


def test_conv_verification_error_at_call():
    b = XlaBuilder("main")
    with pytest.raises(VerificationError, match=r"convolution \(C\d+\)"):
        Conv(ConstantLiteral(b, IMG), ConstantLiteral(b, KER[:, :1]), [1, 1], "VALID")
