"""Program generators for program-level tracing tests and benchmarks (issue 7).

* ``chain_program``: one long function over two AxB f32 arguments mixing
  element-wise, movement, reduction and contraction ops — the tracer's
  benchmark and a deep chain to walk back through.
* ``random_movement_program``: a small random program made only of ops whose
  every output element is a copy of one input element or of a padding /
  constant value, so a tracer's answer can be checked by value.

Both are deterministic in their arguments and print the pretty forms jax
prints (hlolab's parser reads them; XLA compiles them).
"""

from __future__ import annotations

import itertools

import numpy as np

F32 = "f32"


def _t(shape: tuple[int, ...], et: str = F32) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + et + ">"


def _lst(xs) -> str:
    return "[" + ", ".join(str(int(x)) for x in xs) + "]"


def _f32_literal(v: float) -> str:
    return f"{float(np.float32(v)):.6e}"


class _Emitter:
    """Numbers SSA values and collects body lines; constants are hoisted to the top."""

    def __init__(self) -> None:
        self.consts: list[str] = []
        self.lines: list[str] = []
        self.n = 0
        self._const_names: dict[tuple[str, str], str] = {}

    def const(self, literal: str, ty: str, prefix: str = "cst") -> str:
        key = (literal + ty, prefix)
        if key not in self._const_names:
            name = f"%{prefix}_{len(self.consts)}"
            self.consts.append(f"    {name} = stablehlo.constant dense<{literal}> : {ty}")
            self._const_names[key] = name
        return self._const_names[key]

    def op(self, text: str) -> str:
        name = f"%{self.n}"
        self.n += 1
        self.lines.append(f"    {name} = {text}")
        return name

    def module(self, name: str, params: list[str], result: str, result_ty: str) -> str:
        body = "\n".join(self.consts + self.lines)
        return (f"module @{name} {{\n  func.func public @main({', '.join(params)}) -> ({result_ty}) {{\n"
                f"{body}\n    return {result} : {result_ty}\n  }}\n}}\n")


# ---------------------------------------------------------------------------------------------
# chain_program


def _factor(elements: int) -> tuple[int, int]:
    """A x B == elements with A <= B and A as close to sqrt(elements) as possible."""
    a = max(d for d in range(1, int(np.sqrt(elements)) + 1) if elements % d == 0)
    return a, elements // a


_LIMIT = 1e4  # bound on |value| the generator keeps (for inputs with |x| <= 1): no inf, no NaN
_MAX_DOTS = 5


def chain_program(n_ops: int = 200, elements: int = 100_000, seed: int = 0) -> str:
    """StableHLO text of one ``@main(%arg0, %arg1: tensor<AxBxf32>) -> tensor<AxBxf32>``.

    Exactly ``n_ops`` non-constant ops (constants are extra, hoisted to the top), drawn
    deterministically from element-wise binary/unary ops, transpose there and back,
    reverse, (strided) slice + pad back, concatenate of two halves, compare + select,
    reduce + broadcast_in_dim, at most 5 dot_generals with an AxA weight sliced from
    an earlier value, and reshape to rank 1 and back. Each op reads earlier values
    (the first operand is usually the latest value, so the chain is deep) and the
    function returns the last value. A static bound per value keeps every value
    within 1e4 for inputs in [-1, 1]: an op that would exceed it becomes a tanh.
    """
    if elements < 2:
        raise ValueError("chain_program needs at least 2 elements")
    rng = np.random.default_rng(seed)
    a, b = _factor(elements)
    shape = (a, b)
    t = _t(shape)
    e = _Emitter()
    vals: list[tuple[str, float]] = [("%arg0", 1.0), ("%arg1", 1.0)]  # (name, bound on |value|)
    dots = 0
    split_dims = [d for d in (0, 1) if shape[d] >= 2]

    def pick_prev() -> tuple[str, float]:
        # mostly recent values, sometimes an argument or an old value: fan-in from far back
        if rng.random() < 0.15:
            return vals[int(rng.integers(0, len(vals)))]
        return vals[max(0, len(vals) - 1 - int(rng.integers(1, 4)))]

    kinds = ["binary", "unary", "transpose", "reverse", "slice_pad", "concat", "select",
             "reduce_bcast", "dot", "reshape"]
    weights = np.array([6, 4, 1, 2, 2, 1, 1, 1, 0.5, 1], dtype=float)
    cost = {"binary": 1, "unary": 1, "transpose": 2, "reverse": 1, "slice_pad": 2, "concat": 3,
            "select": 2, "reduce_bcast": 2, "dot": 2, "reshape": 2}
    while e.n < n_ops:
        left = n_ops - e.n
        ok = [k for k in kinds if cost[k] <= left and (k != "dot" or dots < _MAX_DOTS)
              and (k != "concat" or split_dims)]
        w = np.array([weights[kinds.index(k)] for k in ok])
        kind = ok[int(rng.choice(len(ok), p=w / w.sum()))]
        x, bx = vals[-1]
        if kind == "binary":
            y, by = pick_prev()
            opname = ["add", "subtract", "multiply", "maximum"][int(rng.integers(0, 4))]
            bound = {"add": bx + by, "subtract": bx + by, "multiply": bx * by, "maximum": max(bx, by)}[opname]
            if bound > _LIMIT:
                opname, y, bound = "tanh", None, 1.0
            operands = f"{x}, {y}" if y else x
            vals.append((e.op(f"stablehlo.{opname} {operands} : {t}"), bound))
        elif kind == "unary":
            opname = ["negate", "exponential", "tanh"][int(rng.integers(0, 3))]
            bound = {"negate": bx, "exponential": float(np.exp(min(bx, 50.0))), "tanh": 1.0}[opname]
            if bound > _LIMIT:
                opname, bound = "tanh", 1.0
            vals.append((e.op(f"stablehlo.{opname} {x} : {t}"), bound))
        elif kind == "transpose":
            tt = _t((b, a))
            y = e.op(f"stablehlo.transpose {x}, dims = [1, 0] : ({t}) -> {tt}")
            vals.append((e.op(f"stablehlo.transpose {y}, dims = [1, 0] : ({tt}) -> {t}"), bx))
        elif kind == "reverse":
            dims = [[0], [1], [0, 1]][int(rng.integers(0, 3))]
            vals.append((e.op(f"stablehlo.reverse {x}, dims = {_lst(dims)} : {t}"), bx))
        elif kind == "slice_pad":
            # slice [lo : size - hi : stride] per dim, then pad low = lo, interior = stride - 1 and
            # whatever high restores the size: the kept elements return to their own positions
            starts, limits, strides, lows, highs, interiors, sshape = [], [], [], [], [], [], []
            for d in shape:
                lo = int(rng.integers(0, min(3, d)))
                hi = int(rng.integers(0, min(3, d - lo)))
                s = int(rng.integers(1, 3))
                n = -(-(d - hi - lo) // s)
                starts.append(lo), limits.append(d - hi), strides.append(s)
                lows.append(lo), interiors.append(s - 1), sshape.append(n)
                highs.append(d - lo - (n + (n - 1) * (s - 1)))
            sl = ", ".join(f"{s0}:{l0}" + (f":{st}" if st != 1 else "")
                           for s0, l0, st in zip(starts, limits, strides))
            st = _t(tuple(sshape))
            y = e.op(f"stablehlo.slice {x} [{sl}] : ({t}) -> {st}")
            pv = float(rng.integers(-3, 4)) / 2
            c = e.const(_f32_literal(pv), _t(()))
            vals.append((e.op(f"stablehlo.pad {y}, {c}, low = {_lst(lows)}, high = {_lst(highs)}, "
                              f"interior = {_lst(interiors)} : ({st}, {_t(())}) -> {t}"), max(bx, abs(pv))))
        elif kind == "concat":
            # first k rows/columns of x behind the last ones of another value: a rotation-like shuffle
            y, by = pick_prev()
            d = split_dims[int(rng.integers(0, len(split_dims)))]
            k = int(rng.integers(1, shape[d]))
            s1 = list(shape)
            s1[d] = shape[d] - k
            s2 = list(shape)
            s2[d] = k
            r1 = ", ".join(f"{k}:{n}" if i == d else f"0:{n}" for i, n in enumerate(shape))
            r2 = ", ".join(f"0:{k}" if i == d else f"0:{n}" for i, n in enumerate(shape))
            t1, t2 = _t(tuple(s1)), _t(tuple(s2))
            p = e.op(f"stablehlo.slice {y} [{r1}] : ({t}) -> {t1}")
            q = e.op(f"stablehlo.slice {x} [{r2}] : ({t}) -> {t2}")
            vals.append((e.op(f"stablehlo.concatenate {p}, {q}, dim = {d} : ({t1}, {t2}) -> {t}"),
                         max(bx, by)))
        elif kind == "select":
            y, by = pick_prev()
            z, bz = pick_prev()
            direction = ["GT", "LT", "GE"][int(rng.integers(0, 3))]
            pt = _t(shape, "i1")
            p = e.op(f"stablehlo.compare {direction}, {x}, {y}, FLOAT : ({t}, {t}) -> {pt}")
            vals.append((e.op(f"stablehlo.select {p}, {z}, {x} : {pt}, {t}"), max(bx, bz)))
        elif kind == "reduce_bcast":
            d = int(rng.integers(0, 2))
            keep = 1 - d
            opname = "add" if bx * shape[d] <= _LIMIT and rng.random() < 0.5 else "maximum"
            bound = bx * shape[d] if opname == "add" else bx
            init = e.const("0.000000e+00" if opname == "add" else "0xFF800000", _t(()))
            rt = _t((shape[keep],))
            r = e.op(f"stablehlo.reduce({x} init: {init}) applies stablehlo.{opname} across "
                     f"dimensions = [{d}] : ({t}, {_t(())}) -> {rt}")
            vals.append((e.op(f"stablehlo.broadcast_in_dim {r}, dims = [{keep}] : ({rt}) -> {t}"), bound))
        elif kind == "dot":
            dots += 1
            wsrc, bw = pick_prev()
            wt = _t((a, a))
            w = e.op(f"stablehlo.slice {wsrc} [0:{a}, 0:{a}] : ({t}) -> {wt}")
            bound = a * bw * bx
            vals.append((e.op(f"stablehlo.dot_general {w}, {x}, contracting_dims = [1] x [0], "
                              f"precision = [DEFAULT, DEFAULT] : ({wt}, {t}) -> {t}"), bound))
            if bound > _LIMIT and e.n < n_ops:
                vals.append((e.op(f"stablehlo.tanh {vals[-1][0]} : {t}"), 1.0))
        elif kind == "reshape":
            ft = _t((elements,))
            y = e.op(f"stablehlo.reshape {x} : ({t}) -> {ft}")
            vals.append((e.op(f"stablehlo.reshape {y} : ({ft}) -> {t}"), bx))
    # a dot's bound may exceed the limit only as the very last op; the value is still finite
    return e.module("chain", [f"%arg0: {t}", f"%arg1: {t}"], vals[-1][0], t)


# ---------------------------------------------------------------------------------------------
# random_movement_program


def _reshapes(n: int) -> list[tuple[int, ...]]:
    """Every shape of rank 1..3 with n elements."""
    out = [(n,)]
    divs = [d for d in range(1, n + 1) if n % d == 0]
    out += [(d, n // d) for d in divs]
    out += [(d1, d2, n // (d1 * d2)) for d1, d2 in itertools.product(divs, divs) if n % (d1 * d2) == 0]
    return out


def random_movement_program(rng: np.random.Generator, max_ops: int = 6) -> tuple[str, list[np.ndarray]]:
    """A random small program of data-movement ops; returns (text, args).

    ``@main(%arg0: S, %arg1: S, %arg2: tensor<f32>)`` with S of rank 1..3, dims 1..5.
    The arguments hold a permutation of 1..N (distinct positive integers as f32), and
    every constant that can reach the output is a distinct negative integer named
    ``%pad_k`` (threshold constants, read only by compare, are ``%thr_k``). So every
    output element equals an argument element or a ``%pad_k`` value. Ops: transpose,
    reverse, (strided) slice, pad (value ``%arg2`` or a constant, low/high may be
    negative, interior 0..1), concatenate, reshape, broadcast_in_dim, gather (take
    along an axis with a constant index tensor), dynamic_slice (constant starts, some
    out of range so they clamp) and select on a compare with a constant threshold.
    Between 1 and ``max_ops`` movement steps (a step may emit a helper op such as a
    compare or a slice).
    """
    rank = int(rng.integers(1, 4))
    shape0 = tuple(int(d) for d in rng.integers(1, 6, size=rank))
    size0 = int(np.prod(shape0))
    perm = rng.permutation(2 * size0 + 1).astype(np.float32) + 1
    args = [perm[:size0].reshape(shape0), perm[size0:2 * size0].reshape(shape0), perm[2 * size0:].reshape(())]
    e = _Emitter()
    pads = iter(range(1, 10_000))
    vals: list[tuple[str, tuple[int, ...]]] = [("%arg0", shape0), ("%arg1", shape0)]
    cur, shape = vals[int(rng.integers(0, 2))]

    def pad_scalar() -> str:
        if rng.random() < 0.4:
            return "%arg2"
        return e.const(_f32_literal(-next(pads)), _t(()), "pad")

    def i32(v: int) -> str:
        return e.const(str(int(v)), _t((), "i32"), "c")

    kinds = ["transpose", "reverse", "slice", "pad", "concatenate", "reshape", "broadcast_in_dim",
             "gather", "dynamic_slice", "select"]
    for _ in range(int(rng.integers(1, max_ops + 1))):
        kind = kinds[int(rng.integers(0, len(kinds)))]
        r = len(shape)
        t = _t(shape)
        if kind == "broadcast_in_dim" and r == 3 and 1 not in shape:
            kind = "transpose"
        if kind in ("pad", "broadcast_in_dim") and int(np.prod(shape)) > 150:
            kind = "slice"  # keep shapes small
        if kind == "transpose":
            p = [int(i) for i in rng.permutation(r)]
            ns = tuple(shape[i] for i in p)
            cur = e.op(f"stablehlo.transpose {cur}, dims = {_lst(p)} : ({t}) -> {_t(ns)}")
        elif kind == "reverse":
            dims = [d for d in range(r) if rng.random() < 0.6] or [int(rng.integers(0, r))]
            cur = e.op(f"stablehlo.reverse {cur}, dims = {_lst(dims)} : {t}")
            ns = shape
        elif kind == "slice":
            spec, ns = [], []
            for d in shape:
                s0 = int(rng.integers(0, d))
                l0 = int(rng.integers(s0 + 1, d + 1))
                st = int(rng.integers(1, 4))
                spec.append(f"{s0}:{l0}" + (f":{st}" if st != 1 else ""))
                ns.append(-(-(l0 - s0) // st))
            ns = tuple(ns)
            cur = e.op(f"stablehlo.slice {cur} [{', '.join(spec)}] : ({t}) -> {_t(ns)}")
        elif kind == "pad":
            lows, highs, ints, ns = [], [], [], []
            for d in shape:
                it = int(rng.integers(0, 2))
                full = d + (d - 1) * it
                lo = int(rng.integers(-1 if full > 1 else 0, 3))
                hi = int(rng.integers(-1 if full + lo > 1 else 0, 3))
                lows.append(lo), highs.append(hi), ints.append(it), ns.append(full + lo + hi)
            ns = tuple(ns)
            pv = pad_scalar()
            cur = e.op(f"stablehlo.pad {cur}, {pv}, low = {_lst(lows)}, high = {_lst(highs)}, "
                       f"interior = {_lst(ints)} : ({t}, {_t(())}) -> {_t(ns)}")
        elif kind == "concatenate":
            d = int(rng.integers(0, r))
            partners = [(v, s) for v, s in vals if len(s) == r and v != cur
                        and all(s[i] == shape[i] for i in range(r) if i != d)]
            if partners and rng.random() < 0.7:
                other, os_ = partners[int(rng.integers(0, len(partners)))]
            else:  # a slice of the current value along d
                k = int(rng.integers(1, shape[d] + 1))
                os_ = tuple(k if i == d else n for i, n in enumerate(shape))
                spec = ", ".join(f"0:{k}" if i == d else f"0:{n}" for i, n in enumerate(shape))
                other = e.op(f"stablehlo.slice {cur} [{spec}] : ({t}) -> {_t(os_)}")
            ns = tuple(shape[i] + os_[i] if i == d else shape[i] for i in range(r))
            first, second = (cur, other) if rng.random() < 0.5 else (other, cur)
            ft, st_ = (t, _t(os_)) if first == cur else (_t(os_), t)
            cur = e.op(f"stablehlo.concatenate {first}, {second}, dim = {d} : ({ft}, {st_}) -> {_t(ns)}")
        elif kind == "reshape":
            options = _reshapes(int(np.prod(shape)))
            ns = options[int(rng.integers(0, len(options)))]
            cur = e.op(f"stablehlo.reshape {cur} : ({t}) -> {_t(ns)}")
        elif kind == "broadcast_in_dim":
            dims, ns = list(range(r)), list(shape)
            if r < 3:  # insert one new dim of size 1..3
                pos = int(rng.integers(0, r + 1))
                dims = [i if i < pos else i + 1 for i in range(r)]
                ns.insert(pos, int(rng.integers(1, 4)))
            for i, d in enumerate(dims):  # size-1 operand dims may expand
                if shape[i] == 1 and rng.random() < 0.5:
                    ns[d] = int(rng.integers(1, 4))
            ns = tuple(ns)
            cur = e.op(f"stablehlo.broadcast_in_dim {cur}, dims = {_lst(dims)} : ({t}) -> {_t(ns)}")
        elif kind == "gather":
            # jnp.take(cur, idx, axis=a): collapse a, one start index per batch row
            a = int(rng.integers(0, r))
            k = int(rng.integers(1, 5))
            idx = rng.integers(0, shape[a], size=k)
            ci = e.const("[" + ", ".join(f"[{int(i)}]" for i in idx) + "]", _t((k, 1), "i32"), "idx")
            ns = tuple(k if i == a else n for i, n in enumerate(shape))
            offset = [i for i in range(r) if i != a]
            sizes = ", ".join(str(1 if i == a else n) for i, n in enumerate(shape))
            cur = e.op(f'"stablehlo.gather"({cur}, {ci}) <{{dimension_numbers = #stablehlo.gather<'
                       f"offset_dims = {_lst(offset)}, collapsed_slice_dims = [{a}], start_index_map = "
                       f"[{a}], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = "
                       f"array<i64: {sizes}>}}> : ({t}, {_t((k, 1), 'i32')}) -> {_t(ns)}")
        elif kind == "dynamic_slice":
            ns = tuple(int(rng.integers(1, d + 1)) for d in shape)
            starts = [i32(int(rng.integers(-1, d + 2))) for d in shape]  # some clamp
            cur = e.op(f"stablehlo.dynamic_slice {cur}, {', '.join(starts)}, sizes = {_lst(ns)} : "
                       f"({t}, {', '.join([_t((), 'i32')] * r)}) -> {_t(ns)}")
        elif kind == "select":
            thr = e.const(_f32_literal(float(rng.integers(0, 2 * size0 + 1)) + 0.5), _t(()), "thr")
            tb = e.op(f"stablehlo.broadcast_in_dim {thr}, dims = [] : ({_t(())}) -> {t}")
            pt = _t(shape, "i1")
            direction = ["GT", "LT", "GE", "LE"][int(rng.integers(0, 4))]
            p = e.op(f"stablehlo.compare {direction}, {cur}, {tb}, FLOAT : ({t}, {t}) -> {pt}")
            partners = [v for v, s in vals if s == shape and v != cur]
            if partners and rng.random() < 0.7:
                other = partners[int(rng.integers(0, len(partners)))]
            else:
                other = e.op(f"stablehlo.broadcast_in_dim {pad_scalar()}, dims = [] : ({_t(())}) -> {t}")
            a_, b_ = (cur, other) if rng.random() < 0.5 else (other, cur)
            cur = e.op(f"stablehlo.select {p}, {a_}, {b_} : {pt}, {t}")
            ns = shape
        shape = ns
        vals.append((cur, shape))
    params = [f"%arg0: {_t(shape0)}", f"%arg1: {_t(shape0)}", f"%arg2: {_t(())}"]
    return e.module("movement", params, cur, _t(shape)), args
