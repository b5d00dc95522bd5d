"""Property: a program built with hlolab.xla (random small compositions of ops on random
shapes) and the module parsed back from its printed text are equal, print the same, and
give bit-identical results on the same inputs."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hlolab.interp.engine import Interpreter
from hlolab.ir.parser import parse_module
from hlolab.ir.printer import print_module
from hlolab.xla import (
    F16,
    F32,
    S32,
    Abs,
    Add,
    Broadcast,
    Concatenate,
    ConstantR0,
    ConvertElementType,
    CreateScalarAddComputation,
    CreateScalarMaxComputation,
    DotGeneral,
    Gt,
    Iota,
    Max,
    Mul,
    Neg,
    Pad,
    Parameter,
    Reduce,
    ReduceWindow,
    Reshape,
    Rev,
    Select,
    Slice,
    Sort,
    Sub,
    Transpose,
    XlaBuilder,
    XlaOp,
)

DTYPES = {"f32": F32, "s32": S32}
NUMERIC = (F32, S32, F16)


def dims(x: XlaOp) -> tuple[int, ...]:
    return tuple(x.type.shape)  # type: ignore[union-attr]


def elem(x: XlaOp):
    return x.type.element  # type: ignore[union-attr]


def step(data, b: XlaBuilder, values: list[XlaOp]) -> XlaOp:
    """One random op on values built so far."""
    x = data.draw(st.sampled_from([v for v in values if elem(v) in NUMERIC]))  # not pred
    shape, rank = dims(x), len(dims(x))
    kind = data.draw(st.sampled_from([
        "unary", "binary", "scalar", "transpose", "rev", "slice", "reshape", "reduce", "broadcast",
        "pad", "concat", "convert", "iota", "select", "dot", "reduce_window", "sort"]))
    if kind == "unary":
        return data.draw(st.sampled_from([Neg, Abs]))(x)
    if kind == "binary":
        same = [v for v in values if dims(v) == shape and elem(v) == elem(x)]
        y = data.draw(st.sampled_from(same))
        return data.draw(st.sampled_from([Add, Sub, Mul, Max]))(x, y)
    if kind == "scalar":  # implicit broadcasting of a scalar constant
        c = ConstantR0(b, data.draw(st.integers(-3, 3)), elem(x))
        return Add(c, x) if data.draw(st.booleans()) else Mul(x, c)
    if kind == "transpose" and rank:  # rank 0: see test_transpose_rank0 in test_builder_ops.py
        return Transpose(x, data.draw(st.permutations(range(rank))))
    if kind == "rev":
        ds = data.draw(st.sets(st.integers(0, rank - 1), max_size=rank)) if rank else set()
        return Rev(x, sorted(ds))
    if kind == "slice" and rank:
        start = [data.draw(st.integers(0, d - 1)) for d in shape]
        limit = [data.draw(st.integers(s + 1, d)) for s, d in zip(start, shape)]
        strides = [data.draw(st.integers(1, 2)) for _ in shape]
        return Slice(x, start, limit, strides)
    if kind == "reshape":
        n = int(np.prod(shape))
        return Reshape(x, [n] if data.draw(st.booleans()) else [1, n])
    if kind == "reduce" and rank:
        d = data.draw(st.integers(0, rank - 1))
        body = data.draw(st.sampled_from([CreateScalarAddComputation, CreateScalarMaxComputation]))
        init = -1000 if body is CreateScalarMaxComputation else 0
        return Reduce(x, ConstantR0(b, init, elem(x)), body(elem(x)), [d])
    if kind == "broadcast":
        return Broadcast(x, [data.draw(st.integers(1, 2))])
    if kind == "pad":
        lo = [data.draw(st.integers(-1 if d > 1 else 0, 2)) for d in shape]
        hi = [data.draw(st.integers(0, 2)) for _ in shape]
        inner = [data.draw(st.integers(0, 1)) for _ in shape]
        return Pad(x, ConstantR0(b, 7, elem(x)), low=lo, high=hi, interior=inner)
    if kind == "concat" and rank:
        return Concatenate([x, x], data.draw(st.integers(0, rank - 1)))
    if kind == "convert":
        return ConvertElementType(x, data.draw(st.sampled_from(["f32", "s32", "f16", "pred"])))
    if kind == "iota" and rank:
        return Add(x, Iota(b, f"s32[{','.join(map(str, shape))}]", data.draw(st.integers(0, rank - 1)))) \
            if elem(x) == S32 else ConvertElementType(x, "s32")
    if kind == "select" and elem(x) in (F32, S32):
        return Select(Gt(x, ConstantR0(b, 0, elem(x))), x, Neg(x))
    if kind == "dot" and rank == 2 and elem(x) in (F32, S32):
        return DotGeneral(x, x, lhs_contracting_dimensions=[1], rhs_contracting_dimensions=[1])
    if kind == "reduce_window" and rank and elem(x) in (F32, S32):
        w = [data.draw(st.integers(1, d)) for d in shape]
        return ReduceWindow(x, ConstantR0(b, 0, elem(x)), CreateScalarAddComputation(elem(x)), w,
                            [1] * rank, data.draw(st.sampled_from(["VALID", "SAME"])))
    if kind == "sort" and rank and elem(x) in (F32, S32):
        return Sort(x, dimension=data.draw(st.integers(0, rank - 1)))
    return Neg(x) if elem(x) in (F32, S32) else x


@settings(max_examples=100)
@given(st.data())
def test_built_program_and_its_text_agree(data):
    b = XlaBuilder("main")
    n_params = data.draw(st.integers(1, 2))
    values = []
    for i in range(n_params):
        shape = data.draw(st.lists(st.integers(1, 4), max_size=3))
        dt = data.draw(st.sampled_from(sorted(DTYPES)))
        values.append(Parameter(b, i, f"{dt}[{','.join(map(str, shape))}]",
                                data.draw(st.sampled_from([None, f"p{i}"]))))
    for _ in range(data.draw(st.integers(1, 6))):
        values.append(step(data, b, values))
    if data.draw(st.booleans()):
        b.set_name(values[-1], "out")
    comp = b.build(values[-1])
    text = comp.as_text()
    parsed = parse_module(text)
    assert parsed == comp.module
    assert print_module(parsed) == text
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    args = []
    for p in b.parameters():
        t = p.type
        a = rng.integers(-5, 6, size=t.shape) if t.element == S32 else rng.standard_normal(t.shape)
        args.append(np.asarray(a, dtype=t.dtype))
    want = comp.run(*args)
    got = Interpreter(parsed).run("main", args)
    assert len(want) == len(got)
    for w, g in zip(want, got):
        assert w.dtype == g.dtype and w.shape == g.shape
        assert w.tobytes() == g.tobytes()
