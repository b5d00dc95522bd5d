"""chlo.scan: run a body along one dimension of the inputs, threading carries.

``%out..., %carry... = chlo.scan(%in...) inits(%init...) dimension=d {body}``: with
``N = dim(in, d)`` steps, step ``s`` reads position ``i = s`` (``i = N - 1 - s`` with
``is_reverse``) of every input: the body takes the input slices ``in[..., i, ...]`` (dim ``d``
removed) first, then the carries (the inits at step 0), and returns the per-step outputs
first, then the new carries. ``out[..., i, ...]`` is step ``s``'s output; the results are the
outputs, then the carries after the last step (the inits when ``N = 0``).
``is_associative`` is a hint for compilers (the body may be re-associated); we always run
the steps in order, which is a valid evaluation of any body.

The body steps op by op, one loop iteration per scan step (``steps=True``, as
``stablehlo.while``): the carries' definitions flow from step to step, the input slices are
fresh values (no definition: a trace inside the body stops at them).

Provenance (the op's, used by program traces): the rule true for ANY body, since the body is
arbitrary code: ``out[..., i, ...]`` derives from every element of the input slices the
steps up to and including step ``s`` read (positions ``0..i`` along ``d``, or ``i..N-1``
reversed; every position of the other dims, since a body may mix a slice freely; role
``combine``) and from every init element (role ``init``); the final carries derive from all
input and init elements. Values the body captures from outside the op are not operands and
are not listed (the body's own op events still read them).

Constraint labels (ChloOps.td numbers none; ours): (I1) inputs and inits are tensors;
(C1) there are as many carry results as inits (resultSegmentSizes agrees with the operands);
(C2) ``0 <= dimension < rank`` of every input and output; (C3) every input and output has
the same size ``N`` along ``dimension``, and with neither inputs nor outputs ``N`` is unknown
(refused); (C4) the body takes the input slice types (``dimension`` removed) then the init
types; (C5) the body returns one value per output, of the output's type with ``dimension``
removed, then one per carry, of the init's type; (C6) the carry results have the init types.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np

from hlolab.errors import ExecutionError
from hlolab.ir.attrs import DenseArrayAttr
from hlolab.messages import Msg
from hlolab.ops.record import AsDeclared, Attrs, attr, boolean, integer, raw, record
from hlolab.ops.registry import OpCall, op
from hlolab.trace.explain import Explanation, Step
from hlolab.trace.provenance import (
    Provenance,
    Source,
    Target,
    _check_mask,
    _merge,
    check_index,
    value_shape,
)
from hlolab.types import TensorType, Type


@record
class ScanAttrs(Attrs):
    """chlo.scan's attributes (upstream's names); the segment sizes split operands and results."""

    dimension: int = attr(integer("dimension"))
    is_reverse: bool = attr(boolean("is_reverse"), default=False)
    is_associative: bool = attr(boolean("is_associative"), default=False)
    operand_segment_sizes: DenseArrayAttr = attr(raw("operandSegmentSizes", DenseArrayAttr,
                                                     what="array<i32: inputs, inits>"))
    result_segment_sizes: DenseArrayAttr | None = attr(raw("resultSegmentSizes", DenseArrayAttr,
                                                           what="array<i32: outputs, carries>"),
                                                       default=None)

    def split(self, n_operands: int) -> tuple[int, int]:
        """(number of inputs, number of inits)."""
        v = self.operand_segment_sizes.values
        return (int(v[0]), int(v[1])) if len(v) == 2 else (n_operands, 0)


def infer_scan(a: ScanAttrs, types: list[Type]) -> AsDeclared:
    """The outputs' types come from the body (only the region fixes them) and the carries are
    the inits' types (C6): verify checks both against the declared results."""
    return AsDeclared()


def _slice_type(t: TensorType, d: int) -> TensorType:
    return TensorType(t.shape[:d] + t.shape[d + 1:], t.element)


def _types(ts: list[Any]) -> str:
    return "(" + ", ".join(str(t) for t in ts) + ")"


def _verify_scan(ctx: OpCall) -> None:
    rec: ScanAttrs = ctx.attrs
    n_in, n_init = rec.split(len(ctx.operand_types))
    if n_in + n_init != len(ctx.operand_types) or n_in < 0 or n_init < 0:
        raise ctx.error(None, f"operandSegmentSizes = {list(rec.operand_segment_sizes.values)} does not "
                        f"split the {len(ctx.operand_types)} operands")
    for i, t in enumerate(ctx.operand_types):
        if not isinstance(t, TensorType):
            raise ctx.error("I1", f"operand #{i} must be a tensor, got {t}")
    inputs, inits = ctx.operand_types[:n_in], ctx.operand_types[n_in:]
    n_out = len(ctx.result_types) - n_init
    seg = rec.result_segment_sizes
    if n_out < 0 or (seg is not None and tuple(seg.values) != (n_out, n_init)):
        raise ctx.error("C1", f"there must be one carry result per init ({n_init}), got "
                        f"{len(ctx.result_types)} results"
                        + (f" with resultSegmentSizes = {list(seg.values)}" if seg is not None else ""))
    outputs, carries = ctx.result_types[:n_out], ctx.result_types[n_out:]
    d = rec.dimension
    n = None
    for what, ts in (("input", inputs), ("output", outputs)):
        for k, t in enumerate(ts):
            if not isinstance(t, TensorType) or not 0 <= d < t.rank:
                raise ctx.error("C2", f"0 <= dimension < rank({what} #{k}) does not hold: dimension = {d}, "
                                f"{what} #{k} is {t}")
            if n is None:
                n = t.shape[d]
            elif t.shape[d] is not None and n is not None and t.shape[d] != n:
                raise ctx.error("C3", f"dim({what} #{k}, {d}) = {t.shape[d]} must equal the scan length {n}")
    if not inputs and not outputs:
        raise ctx.error("C3", "a scan with neither inputs nor outputs has no length along dimension")
    if len(ctx.op.regions) != 1 or not ctx.op.regions[0].blocks:
        raise ctx.error(None, "expects one body region")
    body = ctx.op.regions[0].entry
    want = [_slice_type(t, d) for t in inputs] + list(inits)
    got = [a.type for a in body.args]
    if got != want:
        raise ctx.error("C4", f"the body must take the input slices then the carries {_types(want)}, "
                        f"takes {_types(got)}")
    ret = body.ops[-1] if body.ops else None
    if ret is not None and ret.name in ("stablehlo.return", "func.return", "return"):
        rtypes = [v.type for v in ret.operands]
        want = [_slice_type(t, d) for t in outputs] + list(inits)
        if rtypes != want:
            raise ctx.error("C5", f"the body must return the output slices then the carries "
                            f"{_types(want)}, returns {_types(rtypes)}")
    if list(carries) != list(inits):
        raise ctx.error("C6", f"the carry results {_types(list(carries))} must have the init types "
                        f"{_types(list(inits))}")


# --- evaluation ------------------------------------------------------------------------------------

def scan_positions(n: int, reverse: bool) -> list[int]:
    """The position along ``dimension`` that each step reads, in step order."""
    return list(range(n - 1, -1, -1)) if reverse else list(range(n))


def _setup(ctx: Any, operands: tuple[Any, ...]) -> tuple[int, list[Any], list[Any], int, int]:
    rec: ScanAttrs = ctx.attrs
    n_in, n_init = rec.split(len(operands))
    n_out = len(ctx.result_types) - n_init
    d = rec.dimension
    n = ctx.operand_types[0].shape[d] if n_in else ctx.result_types[0].shape[d]
    return d, list(operands[:n_in]), list(operands[n_in:]), n_out, int(n)


def _stack(ctx: Any, per_step: list[list[Any]], n_out: int, d: int) -> list[np.ndarray]:
    outs = []
    for k in range(n_out):
        t = ctx.result_tensor(k)
        out = np.empty(t.static_shape(), dtype=t.dtype)
        for i, v in enumerate(per_step[k]):
            out[(slice(None),) * d + (i,)] = v
        outs.append(out)
    return outs


@op("chlo.scan", verify=_verify_scan, attrs=ScanAttrs, infer=infer_scan, family="control", steps=True,
    provenance=lambda *a: _provenance(*a), explain=lambda *a: _explain(*a))
def scan(ctx: Any, *operands: Any) -> Generator[Any, None, list[Any]]:
    """Step the body along ``dimension`` (reversed with is_reverse); outputs stacked, final carries."""
    d, inputs, carries, n_out, n = _setup(ctx, operands)
    defs = list(ctx.operand_defs[len(inputs):])  # carries flow from the inits through the steps
    per_step: list[list[Any]] = [[None] * n for _ in range(n_out)]
    for s, i in enumerate(scan_positions(n, ctx.attrs.is_reverse)):
        slices = [np.asarray(np.take(x, i, axis=d)) for x in inputs]
        res = yield from ctx.step_region(0, slices + carries, iteration=s,
                                         arg_defs=[None] * len(slices) + defs)
        for k in range(n_out):
            per_step[k][i] = res[k]
        carries = list(res[n_out:])
        defs = list(ctx.last_defs[n_out:])
        ctx.count_step()
    # results: the op's provenance (below) covers outputs and carries alike
    ctx.result_defs = None
    return _stack(ctx, per_step, n_out, d) + carries


def replay(ctx: OpCall, inputs: list[Any]) -> list[tuple[int, list[Any], list[Any], list[Any]]]:
    """Each step as (position, input slices, carries in, body results), by re-running the body
    (not stepped): what explain shows."""
    d, xs, carries, n_out, n = _setup(ctx, tuple(inputs))
    out = []
    for i in scan_positions(n, ctx.attrs.is_reverse):
        slices = [np.asarray(np.take(x, i, axis=d)) for x in xs]
        res = ctx.run_region(0, slices + carries)
        out.append((i, slices, carries, res))
        carries = list(res[n_out:])
    return out


# --- provenance ------------------------------------------------------------------------------------

class ScanProvenance(Provenance):
    """The rule true for any body (module doc): output position i reads the input slices of
    the steps up to it (``combine``) and the inits (``init``); the carries read everything."""

    def __init__(self, result_shapes: list[Any], operand_shapes: list[Any], n_in: int, n_out: int,
                 d: int, reverse: bool):
        super().__init__(result_shapes, operand_shapes)
        self.n_in, self.n_out, self.d, self.reverse = n_in, n_out, d, reverse

    def _reached(self, shape: tuple[int, ...], positions: np.ndarray) -> np.ndarray:
        """A mask of ``shape`` true at the given positions along ``d``, every other dim."""
        m = np.zeros(shape[self.d], dtype=bool)
        m[positions] = True
        return np.broadcast_to(m.reshape([-1 if k == self.d else 1 for k in range(len(shape))]),
                               shape).copy()

    def back(self, result: int, mask: np.ndarray) -> dict[tuple[int | None, str], np.ndarray]:
        m = _check_mask(self._result_shape(result), mask, f"back(result #{result})")
        out: dict[tuple[int | None, str], np.ndarray] = {}
        if not m.any():
            return out
        for k, shape in enumerate(self.operand_shapes):
            assert shape is not None
            if k >= self.n_in:
                _merge(out, (k, "init"), np.ones(shape, dtype=bool))
                continue
            n = shape[self.d]
            if result < self.n_out:  # the positions up to (reversed: from) the queried ones
                hit = np.flatnonzero(m.any(axis=tuple(a for a in range(m.ndim) if a != self.d)))
                lo, hi = (int(hit.min()), n) if self.reverse else (0, int(hit.max()) + 1)
            else:
                lo, hi = 0, n
            _merge(out, (k, "combine"), self._reached(shape, np.arange(lo, hi)))
        return out

    def fwd(self, operand: int, mask: np.ndarray) -> dict[tuple[int, str], np.ndarray]:
        m = _check_mask(self._operand_shape(operand), mask, f"fwd(operand #{operand})")
        out: dict[tuple[int, str], np.ndarray] = {}
        if not m.any():
            return out
        role = "init" if operand >= self.n_in else "combine"
        for r, shape in enumerate(self.result_shapes):
            assert shape is not None
            if r >= self.n_out or operand >= self.n_in:
                _merge(out, (r, role), np.ones(shape, dtype=bool))
                continue
            hit = np.flatnonzero(m.any(axis=tuple(a for a in range(m.ndim) if a != self.d)))
            n = shape[self.d]
            lo, hi = (0, int(hit.max()) + 1) if self.reverse else (int(hit.min()), n)
            _merge(out, (r, role), self._reached(shape, np.arange(lo, hi)))
        return out

    def sources(self, result: int, index: tuple[int, ...]) -> list[Source]:
        return self.sources_via_back(result, index)

    def targets(self, operand: int, index: tuple[int, ...]) -> list[Target]:
        return self.targets_via_fwd(operand, index)


def _provenance(ctx: OpCall, inputs: list[Any], outputs: list[Any]) -> ScanProvenance:
    rec: ScanAttrs = ctx.attrs
    n_in, n_init = rec.split(len(inputs))
    return ScanProvenance([value_shape(v) for v in outputs], [value_shape(v) for v in inputs],
                          n_in, len(outputs) - n_init, rec.dimension, rec.is_reverse)


# --- explain -----------------------------------------------------------------------------------------

def _explain(ctx: OpCall, inputs: list[Any], outputs: list[Any], result: int,
             index: tuple) -> Explanation:
    if not 0 <= result < len(outputs):
        raise ExecutionError(f"result #{result} does not exist (the op has {len(outputs)} results)")
    idx = check_index(value_shape(outputs[result]), index, f"result #{result} index")
    rec: ScanAttrs = ctx.attrs
    d, xs, inits, n_out, n = _setup(ctx, tuple(inputs))
    steps_run = replay(ctx, inputs)
    key = "chlo_scan."
    is_output = result < n_out
    last = next(s for s, st in enumerate(steps_run) if st[0] == idx[d]) if is_output else len(steps_run) - 1
    order = tuple(st[0] for st in steps_run)
    steps = [Step("positions", Msg(key + ("positions.reverse" if rec.is_reverse else "positions.forward"),
                                   dimension=d, n=n), order)]
    children = []
    for s, (i, slices, carries, res) in enumerate(steps_run[:last + 1]):
        children.append(Step(f"step {s}", Msg(key + "step.formula", position=i), tuple(res),
                             substituted=Msg(key + "step.substituted", slices=tuple(slices),
                                             carries=tuple(carries))))
    steps.append(Step("body", Msg(key + "body.formula", inputs=len(xs), carries=len(inits)), len(children),
                      children=children))
    value = outputs[result][idx]
    if is_output:
        sub = idx[:d] + idx[d + 1:]
        steps.append(Step(f"outputs[{result}]", Msg(key + "output.formula", k=result, step=last,
                                                     position=idx[d]), value,
                          substituted=Msg(key + "output.substituted", k=result, step=last,
                                          index=", ".join(str(i) for i in sub))))
    else:
        steps.append(Step(f"carries[{result - n_out}]", Msg(key + "carry.formula", k=result - n_out,
                                                             n=n), value))
    notes = [Msg(key + "note.rule")]
    if rec.is_associative:
        notes.append(Msg(key + "note.associative"))
    return Explanation(ctx.op.name, idx, steps, value, notes, result)


# --- parameter schema (hlolab.ops.examples) ----------------------------------------------------------

BODIES = ("cumsum", "cumprod", "cummax")


def _scan_schema() -> None:
    from hlolab.ops.examples import (
        Operand,
        OpParts,
        OpSchema,
        bool_param,
        dtype_param,
        enum_param,
        int_param,
        register_schema,
        shape_param,
        ttype,
    )

    def build(p: dict[str, Any]) -> OpParts:
        shape, d, et = tuple(p["shape"]), p["dimension"], p["dtype"]
        t = ttype(shape, et)
        s = ttype(shape[:d] + shape[d + 1:], et) if 0 <= d < len(shape) else ttype((), et)
        fn = {"cumsum": "add", "cumprod": "multiply", "cummax": "maximum"}[p["body"]]
        body = "\n".join([
            f"^bb0(%x: {s}, %acc: {s}):",
            f'  %r = "stablehlo.{fn}"(%acc, %x) : ({s}, {s}) -> {s}',
            f'  "stablehlo.return"(%r, %r) : ({s}, {s}) -> ()'])
        rec = ScanAttrs(dimension=d, is_reverse=p["is_reverse"],
                        operand_segment_sizes=DenseArrayAttr("i32", (1, 1)),
                        result_segment_sizes=DenseArrayAttr("i32", (1, 1)))
        operands = [Operand("input", t), Operand("init", s)]
        return OpParts(operands, [t, s], rec, regions=[body])

    register_schema(OpSchema("chlo.scan", (
        enum_param("body", BODIES, "cumsum", "what the body combines: carry + x, carry * x, max(carry, x)"),
        shape_param("shape", (2, 4), "shape of the input and of the stacked output"),
        int_param("dimension", 1, "the dimension the scan walks"),
        bool_param("is_reverse", False, "walk from the last position to the first"),
        dtype_param("f32", "element type of the input, init and results"),
    ), {"default": {"index": (1, 2)},
        "reverse": {"is_reverse": True, "index": (0, 1)},
        # the conformance program's cumulative sum: [1, 2, 3, 4] -> [1, 3, 6, 10]
        "cumsum": {"shape": (4,), "dimension": 0, "dtype": "i32", "index": (2,),
                   "inputs": {"input": [1, 2, 3, 4], "init": 0}}},
        build, doc="run a body along a dimension with carries (cumulative sum, product, max)"))


_scan_schema()
