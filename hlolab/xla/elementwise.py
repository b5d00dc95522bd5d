"""Element-wise builder functions: unary math, binary arithmetic with XLA's
implicit broadcasting, comparisons, Select, Clamp.

A binary op's operands may differ in shape as XLA allows: the lower-rank
operand is mapped onto the higher-rank one by ``broadcast_dimensions`` (a
scalar needs none), and dimensions of size 1 stretch to the other operand's
size. Each stretched operand becomes a ``stablehlo.broadcast_in_dim``, then
the op itself is one StableHLO (or CHLO) op on equal shapes.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence

from hlolab.types import TensorType
from hlolab.xla.builder import BuilderError, XlaOp, builder_function, builder_of, emit, lift

# XLA name -> (op, what it computes)
UNARY: dict[str, tuple[str, str]] = {
    "Abs": ("stablehlo.abs", "absolute value"),
    "Cbrt": ("stablehlo.cbrt", "cube root"),
    "Ceil": ("stablehlo.ceil", "round up to an integer"),
    "Clz": ("stablehlo.count_leading_zeros", "count of leading zero bits"),
    "Cos": ("stablehlo.cosine", "cosine"),
    "Exp": ("stablehlo.exponential", "e to the power x"),
    "Expm1": ("stablehlo.exponential_minus_one", "e^x - 1"),
    "Floor": ("stablehlo.floor", "round down to an integer"),
    "Imag": ("stablehlo.imag", "imaginary part"),
    "IsFinite": ("stablehlo.is_finite", "whether x is finite"),
    "Log": ("stablehlo.log", "natural logarithm"),
    "Log1p": ("stablehlo.log_plus_one", "log(1 + x)"),
    "Logistic": ("stablehlo.logistic", "1 / (1 + e^-x)"),
    "Neg": ("stablehlo.negate", "negation"),
    "Not": ("stablehlo.not", "logical or bitwise not"),
    "PopulationCount": ("stablehlo.popcnt", "count of set bits"),
    "Real": ("stablehlo.real", "real part"),
    "RoundNearestAfz": ("stablehlo.round_nearest_afz", "round to nearest, ties away from zero"),
    "RoundNearestEven": ("stablehlo.round_nearest_even", "round to nearest, ties to even"),
    "Rsqrt": ("stablehlo.rsqrt", "1 / sqrt(x)"),
    "Sign": ("stablehlo.sign", "sign (-1, 0 or 1)"),
    "Sin": ("stablehlo.sine", "sine"),
    "Sqrt": ("stablehlo.sqrt", "square root"),
    "Tan": ("stablehlo.tan", "tangent"),
    "Tanh": ("stablehlo.tanh", "hyperbolic tangent"),
    "Erf": ("chlo.erf", "error function"),
    "Erfc": ("chlo.erfc", "complementary error function"),
    "ErfInv": ("chlo.erf_inv", "inverse error function"),
    "Lgamma": ("chlo.lgamma", "log of the absolute value of the gamma function"),
    "Digamma": ("chlo.digamma", "digamma function"),
    "BesselI1e": ("chlo.bessel_i1e", "exponentially scaled modified Bessel function of order 1"),
}

BINARY: dict[str, tuple[str, str]] = {
    "Add": ("stablehlo.add", "sum"),
    "Sub": ("stablehlo.subtract", "difference"),
    "Mul": ("stablehlo.multiply", "product"),
    "Div": ("stablehlo.divide", "quotient"),
    "Rem": ("stablehlo.remainder", "remainder (sign of the dividend)"),
    "Max": ("stablehlo.maximum", "maximum"),
    "Min": ("stablehlo.minimum", "minimum"),
    "Pow": ("stablehlo.power", "lhs to the power rhs"),
    "Atan2": ("stablehlo.atan2", "atan(lhs / rhs) in the right quadrant"),
    "And": ("stablehlo.and", "logical or bitwise and"),
    "Or": ("stablehlo.or", "logical or bitwise or"),
    "Xor": ("stablehlo.xor", "logical or bitwise xor"),
    "ShiftLeft": ("stablehlo.shift_left", "lhs shifted left by rhs bits"),
    "ShiftRightArithmetic": ("stablehlo.shift_right_arithmetic", "lhs shifted right by rhs bits, sign fill"),
    "ShiftRightLogical": ("stablehlo.shift_right_logical", "lhs shifted right by rhs bits, zero fill"),
    "Complex": ("stablehlo.complex", "complex number lhs + i rhs"),
    "Polygamma": ("chlo.polygamma", "polygamma function of order lhs at rhs"),
    "Zeta": ("chlo.zeta", "Hurwitz zeta function"),
}

COMPARISONS: dict[str, str] = {"Eq": "EQ", "Ne": "NE", "Ge": "GE", "Gt": "GT", "Le": "LE", "Lt": "LT"}


def _dims(x: XlaOp, what: str) -> tuple[int, ...]:
    t = x.type
    if not isinstance(t, TensorType):
        raise BuilderError(f"{what}: %{x.name} is not a tensor ({t})")
    return tuple(int(d) for d in t.static_shape(f"%{x.name}"))


def broadcast_to(x: XlaOp, shape: Sequence[int], dims: Sequence[int], what: str) -> XlaOp:
    """``x`` as ``shape`` through ``stablehlo.broadcast_in_dim`` (``x`` itself if it has it)."""
    if _dims(x, what) == tuple(shape) and tuple(dims) == tuple(range(len(shape))):
        return x
    t = x.type
    assert isinstance(t, TensorType)
    return emit("stablehlo.broadcast_in_dim", [x], {"broadcast_dimensions": tuple(dims)},
                results=[TensorType(tuple(shape), t.element)], what=what)[0]


def implicit_broadcast(lhs: XlaOp, rhs: XlaOp, broadcast_dimensions: Sequence[int],
                       what: str) -> tuple[XlaOp, XlaOp]:
    """XLA's implicit broadcasting of two operands to one shape (see the module docstring)."""
    ls, rs = _dims(lhs, what), _dims(rhs, what)
    bd = tuple(int(d) for d in broadcast_dimensions)
    if len(ls) == len(rs):
        if bd and bd != tuple(range(len(ls))):
            raise BuilderError(f"{what}: broadcast_dimensions {list(bd)} given for operands of equal "
                               f"rank {len(ls)}; it must be empty or the identity")
        small, big, small_is_lhs, mapping = ls, rs, True, tuple(range(len(ls)))
    else:
        small_is_lhs = len(ls) < len(rs)
        small, big = (ls, rs) if small_is_lhs else (rs, ls)
        if not bd and len(small) == 0:
            mapping = ()
        elif len(bd) != len(small):
            raise BuilderError(f"{what}: broadcast_dimensions {list(bd)} must map each of the "
                               f"{len(small)} dims of the lower-rank operand {list(small)} onto a dim "
                               f"of {list(big)}")
        else:
            if any(not 0 <= d < len(big) for d in bd) or len(set(bd)) != len(bd) or list(bd) != sorted(bd):
                raise BuilderError(f"{what}: broadcast_dimensions {list(bd)} must be increasing dims "
                                   f"of the higher-rank shape {list(big)}")
            mapping = bd
    # the result shape: the larger operand's, where the smaller one's size-1 dims stretch
    out = list(big)
    for i, d in enumerate(mapping):
        a, b = small[i], big[d]
        if a != b:
            if a == 1:
                continue
            if b == 1 and len(small) == len(big):
                out[d] = a
                continue
            raise BuilderError(f"{what}: shapes {list(ls)} and {list(rs)} are not compatible: "
                               f"size {a} against {b} (only a size-1 dimension stretches)")
    small_op, big_op = (lhs, rhs) if small_is_lhs else (rhs, lhs)
    small_op = broadcast_to(small_op, out, mapping, what)
    big_op = broadcast_to(big_op, out, tuple(range(len(out))), what)
    return (small_op, big_op) if small_is_lhs else (big_op, small_op)


def binary(name: str, lhs: XlaOp, rhs: XlaOp, broadcast_dimensions: Sequence[int], what: str,
           fields: dict | None = None) -> XlaOp:
    # a Python number beside an XlaOp: a scalar constant of its element type
    if isinstance(lhs, XlaOp) and not isinstance(rhs, XlaOp) and isinstance(rhs, (int, float, complex)):
        rhs = lift(lhs, rhs)
    elif isinstance(rhs, XlaOp) and not isinstance(lhs, XlaOp) and isinstance(lhs, (int, float, complex)):
        lhs = lift(rhs, lhs)
    builder_of([lhs, rhs], what)
    lhs, rhs = implicit_broadcast(lhs, rhs, broadcast_dimensions, what)
    return emit(name, [lhs, rhs], fields, what=what)[0]


def _make_unary(xla: str, op: str, doc: str) -> Callable[..., XlaOp]:
    def fn(operand: XlaOp) -> XlaOp:
        return emit(op, [operand], what=xla)[0]

    fn.__name__ = fn.__qualname__ = xla
    fn.__doc__ = f"Element-wise {doc}: ``{op}``."
    fn.__module__ = __name__
    return fn


def _make_binary(xla: str, op: str, doc: str) -> Callable[..., XlaOp]:
    def fn(lhs: XlaOp, rhs: XlaOp, broadcast_dimensions: Sequence[int] = ()) -> XlaOp:
        return binary(op, lhs, rhs, broadcast_dimensions, xla)

    fn.__name__ = fn.__qualname__ = xla
    fn.__doc__ = (f"Element-wise {doc}, with XLA's implicit broadcasting: ``{op}`` "
                  "(after ``stablehlo.broadcast_in_dim`` where shapes differ).")
    fn.__module__ = __name__
    return fn


def _make_compare(xla: str, direction: str) -> Callable[..., XlaOp]:
    def fn(lhs: XlaOp, rhs: XlaOp, broadcast_dimensions: Sequence[int] = ()) -> XlaOp:
        return Compare(lhs, rhs, direction, broadcast_dimensions)

    fn.__name__ = fn.__qualname__ = xla
    fn.__doc__ = (f"Element-wise lhs {direction} rhs as booleans, with XLA's implicit broadcasting: "
                  f"``stablehlo.compare`` {direction}.")
    fn.__module__ = __name__
    return fn


@builder_function
def Compare(lhs: XlaOp, rhs: XlaOp, direction: str, broadcast_dimensions: Sequence[int] = (),
            compare_type: str | None = None) -> XlaOp:
    """Element-wise comparison in ``direction`` (EQ NE GE GT LE LT), with implicit broadcasting:
    ``stablehlo.compare``; ``compare_type`` FLOAT, TOTALORDER, SIGNED or UNSIGNED."""
    d = str(direction).upper()
    if d not in COMPARISONS.values():
        raise BuilderError(f"Compare: direction must be one of EQ NE GE GT LE LT, got {direction!r}")
    fields = {"comparison_direction": d}
    if compare_type is not None:
        fields["compare_type"] = str(compare_type).upper()
    return binary("stablehlo.compare", lhs, rhs, broadcast_dimensions, "Compare", fields)


for _name, (_op, _doc) in UNARY.items():
    globals()[_name] = builder_function(_make_unary(_name, _op, _doc))
for _name, (_op, _doc) in BINARY.items():
    globals()[_name] = builder_function(_make_binary(_name, _op, _doc))
for _name, _dir in COMPARISONS.items():
    globals()[_name] = builder_function(_make_compare(_name, _dir))


@builder_function
def Select(pred: XlaOp, on_true: XlaOp, on_false: XlaOp) -> XlaOp:
    """Element-wise ``on_true`` where ``pred`` else ``on_false`` (a scalar pred picks a whole
    operand): ``stablehlo.select``."""
    return emit("stablehlo.select", [pred, on_true, on_false], what="Select")[0]


@builder_function
def Clamp(min: XlaOp, operand: XlaOp, max: XlaOp) -> XlaOp:  # noqa: A002  (XLA's names)
    """``operand`` limited to [min, max] element-wise (scalar bounds allowed): ``stablehlo.clamp``."""
    return emit("stablehlo.clamp", [min, operand, max], what="Clamp")[0]


assert all(inspect.signature(f) for f in (Compare, Select, Clamp))
