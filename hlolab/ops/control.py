"""Control flow: while, if, case, call, composite, and the token ops.

Their evaluators are generators (``steps=True``): they yield the events of
the ops in their bodies so the stepper goes op by op through them, and
return the op's results. They also say where each result comes from
(``ctx.result_defs``: the value a body or branch returned) and which values
decided it (``ctx.control_defs``: a while's conditions, an if's predicate),
which is their provenance in a program trace.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np

from hlolab.ir.attrs import ArrayAttr, DictAttr
from hlolab.ops.record import (
    AsDeclared,
    Attrs,
    Inferred,
    Partial,
    attr,
    integer,
    raw,
    record,
    same_types,
    string,
    symbol,
    type_admits,
    unit,
)
from hlolab.ops.registry import TOKEN, OpCall, op
from hlolab.types import TensorType, TokenType, Type

# --- attribute records and result types ----------------------------------------------------

@record
class CallAttrs(Attrs):
    """func.call's attributes (the func dialect's names)."""

    callee: str = attr(symbol("callee"))
    arg_attrs: ArrayAttr | None = attr(raw("arg_attrs", ArrayAttr, what="an array of dictionaries"),
                                       default=None)
    res_attrs: ArrayAttr | None = attr(raw("res_attrs", ArrayAttr, what="an array of dictionaries"),
                                       default=None)
    no_inline: bool = attr(unit("no_inline"), default=False)


@record
class CompositeAttrs(Attrs):
    name: str = attr(string("name"))
    composite_attributes: DictAttr = attr(raw("composite_attributes", DictAttr, what="a dictionary"),
                                          default=DictAttr(()))
    decomposition: str = attr(symbol("decomposition"))
    version: int = attr(integer("version", "i32"), default=0)


TOKEN_RESULT = Partial(check=lambda t: isinstance(t, TokenType), what="!stablehlo.token")


def infer_while(a: Attrs, types: list[Type]) -> list[Inferred]:
    """The results have the operand types (C3)."""
    return same_types(types)


def infer_branches(a: Attrs, types: list[Type]) -> AsDeclared:
    """if / case: the results are the branches' returns (if C3, case C4), which only the
    regions fix; verify checks them against the declared types."""
    return AsDeclared()


def infer_call(a: CallAttrs | CompositeAttrs, types: list[Type]) -> AsDeclared:
    """func.call / composite: the results are the callee's (the decomposition's); only the
    module's function table fixes them, and the call checks them when it runs."""
    return AsDeclared()


def infer_token(a: Attrs, types: list[Type]) -> list[Inferred]:
    """after_all / create_token: one token."""
    return [TOKEN_RESULT]


def _scalar(ctx: OpCall, value: Any, what: str) -> Any:
    if not isinstance(value, np.ndarray) or value.shape != ():
        raise ctx.error(None, f"{what} must be a rank-0 tensor, got {value!r}")
    return value.item()


def _returned(block: Any) -> list[Any] | None:
    """The types a region's block returns (None when it does not end in a return)."""
    if not block.ops or block.ops[-1].name not in ("stablehlo.return", "func.return", "return"):
        return None
    return [v.type for v in block.ops[-1].operands]


def _types(ts: list[Any]) -> str:
    return "(" + ", ".join(str(t) for t in ts) + ")"


def _verify_while(ctx: OpCall) -> None:
    if len(ctx.op.regions) != 2:
        raise ctx.error(None, "expects a cond and a body region")
    cond, body = (r.entry for r in ctx.op.regions)
    types = ctx.operand_types
    if [a.type for a in cond.args] != types:
        raise ctx.error("C1", "cond region arguments must have the operand types "
                        f"{[str(t) for t in types]}")
    if [a.type for a in body.args] != types:
        raise ctx.error("C2", "body region arguments must have the operand types "
                        f"{[str(t) for t in types]}")
    cond_out = _returned(cond)
    if cond_out is not None and [str(t) for t in cond_out] != ["tensor<i1>"]:
        raise ctx.error("C1", f"cond must return tensor<i1>, returns {_types(cond_out)}")
    body_out = _returned(body)
    if body_out is not None and body_out != types:
        raise ctx.error("C2", f"body must return the operand types {_types(types)}, "
                        f"returns {_types(body_out)}")
    if ctx.result_types != types:
        raise ctx.error("C3", "result types must equal the operand types")


@op("stablehlo.while", aliases=("While",), verify=_verify_while, infer=infer_while, family="control",
    steps=True)
def while_(ctx: Any, *operands: Any) -> Generator[Any, None, list[Any]]:
    """Run ``body`` while ``cond`` returns true; iterations are numbered from 0."""
    values, defs = list(operands), list(ctx.operand_defs)
    iteration = 0
    while True:
        (pred,) = yield from ctx.step_region(0, values, iteration=iteration, arg_defs=defs)
        ctx.control_defs += [d for d in ctx.last_defs if d is not None]
        if not _scalar(ctx, pred, "the while condition"):
            ctx.result_defs = defs
            return values
        values = yield from ctx.step_region(1, values, iteration=iteration, arg_defs=defs)
        defs = list(ctx.last_defs)
        iteration += 1
        ctx.count_step()


def _admits_all(got: list[Any], want: list[Any]) -> bool:
    return len(got) == len(want) and all(type_admits(g, w) for g, w in zip(got, want, strict=True))


def _check_branches(ctx: OpCall, names: list[str], labels: tuple[str, str, str]) -> None:
    """The branches take no arguments and return the same types, which are the result
    types (``labels``: the spec's three constraints); infer cannot see the regions."""
    no_args, same, results = labels
    outs: list[tuple[str, list[Any]]] = []
    for name, region in zip(names, ctx.op.regions, strict=True):
        if not region.blocks:
            continue
        block = region.entry
        if block.args:
            raise ctx.error(no_args, f"input_types({name}) = {_types([a.type for a in block.args])} "
                            "must be ()")
        out = _returned(block)
        if out is not None:
            outs.append((name, out))
    if not outs:
        return
    first_name, first = outs[0]
    for name, out in outs[1:]:
        if not _admits_all(out, first):
            raise ctx.error(same, f"output_types({name}) = {_types(out)} must equal "
                            f"output_types({first_name}) = {_types(first)}")
    if not _admits_all(first, ctx.result_types):
        raise ctx.error(results, f"type(results...) = {_types(ctx.result_types)} must equal "
                        f"output_types({first_name}) = {_types(first)}")


def _verify_if(ctx: OpCall) -> None:
    if len(ctx.op.regions) != 2:
        raise ctx.error(None, "expects a true branch and a false branch")
    if len(ctx.operand_types) != 1:
        raise ctx.error(None, f"expects one pred operand, got {len(ctx.operand_types)}")
    pred = ctx.operand_types[0]
    if not (isinstance(pred, TensorType) and pred.shape == () and str(pred.element) == "i1"):
        raise ctx.error(None, f"pred must be tensor<i1>, got {pred}")
    _check_branches(ctx, ["true_branch", "false_branch"], ("C1", "C2", "C3"))


@op("stablehlo.if", aliases=("Conditional",), verify=_verify_if, infer=infer_branches,
    family="control", steps=True)
def if_(ctx: Any, pred: np.ndarray) -> Generator[Any, None, list[Any]]:
    """The true branch (region 0) when ``pred``, else the false branch (region 1)."""
    branch = 0 if _scalar(ctx, pred, "pred") else 1
    out = yield from ctx.step_region(branch, [])
    _branch_defs(ctx)
    return out


def _branch_defs(ctx: Any) -> None:
    """The results are the branch's returns; the selector decided which branch."""
    ctx.result_defs = list(ctx.last_defs)
    ctx.control_defs = [d for d in ctx.operand_defs[:1] if d is not None]


def _verify_case(ctx: OpCall) -> None:
    if not ctx.op.regions:
        raise ctx.error("C1", "case needs at least one branch")
    if len(ctx.operand_types) != 1:
        raise ctx.error(None, f"expects one index operand, got {len(ctx.operand_types)}")
    index = ctx.operand_types[0]
    if not (isinstance(index, TensorType) and index.shape == () and str(index.element) in ("i32", "si32")):
        raise ctx.error(None, f"index must be tensor<i32>, got {index}")
    _check_branches(ctx, [f"branches[{k}]" for k in range(len(ctx.op.regions))], ("C2", "C3", "C4"))


@op("stablehlo.case", verify=_verify_case, infer=infer_branches, family="control", steps=True)
def case(ctx: Any, index: np.ndarray) -> Generator[Any, None, list[Any]]:
    """Branch ``index``; an index out of [0, N) selects the last branch (spec)."""
    n = len(ctx.op.regions)
    i = int(_scalar(ctx, index, "index"))
    branch = i if 0 <= i < n else n - 1
    out = yield from ctx.step_region(branch, [])
    _branch_defs(ctx)
    return out


@op(("func.call", "call"), aliases=("Call",), attrs=CallAttrs, infer=infer_call, family="control",
    steps=True)
def call(ctx: Any, *args: Any) -> Generator[Any, None, list[Any]]:
    """Call the function named by ``callee``."""
    out = yield from ctx.call_function(ctx.attrs.callee, list(args))
    ctx.result_defs = list(ctx.last_defs)
    return out


@op("stablehlo.composite", attrs=CompositeAttrs, infer=infer_call, family="control", steps=True)
def composite(ctx: Any, *args: Any) -> Generator[Any, None, list[Any]]:
    """A composite runs its ``decomposition`` function (the spec's semantics)."""
    out = yield from ctx.call_function(ctx.attrs.decomposition, list(args))
    ctx.result_defs = list(ctx.last_defs)
    return out


def _verify_tokens(ctx: OpCall) -> None:
    """after_all / create_token: token operands, one token result (the spec's Inputs/Outputs)."""
    for t in ctx.operand_types:
        if not isinstance(t, TokenType):
            raise ctx.error(None, f"operands must be tokens, got {t}")
    if len(ctx.result_types) != 1 or not isinstance(ctx.result_types[0], TokenType):
        got = ", ".join(str(t) for t in ctx.result_types) or "none"
        raise ctx.error(None, f"the result must be one token, got {got}")


@op("stablehlo.after_all", aliases=("AfterAll",), verify=_verify_tokens, infer=infer_token,
    family="control")
def after_all(ctx: OpCall, *tokens: Any) -> Any:
    """A token that orders after all input tokens; tokens carry no data."""
    return TOKEN


@op("stablehlo.create_token", aliases=("CreateToken",), verify=_verify_tokens, infer=infer_token,
    family="control")
def create_token(ctx: OpCall) -> Any:
    return TOKEN


# --- parameter schemas (hlolab.ops.examples) ------------------------------------------------
# The branches and the loop body read a value ``%x`` defined above the op (a @main argument
# that is not an operand: OpParts.captures), as the spec's own examples do.

def _constant(name: str, value: int, t: TensorType) -> str:
    """``%name = constant value`` (a splat of type ``t``) as one line of a region."""
    from hlolab.ir.dense import format_dense

    body = format_dense(np.full(t.static_shape(), value).astype(t.dtype), t)
    return f'  %{name} = "stablehlo.constant"() {{value = dense<{body}> : {t}}} : () -> {t}'


def _binary(name: str, op_name: str, a: str, b: str, t: TensorType) -> str:
    return f'  %{name} = "stablehlo.{op_name}"(%{a}, %{b}) : ({t}, {t}) -> {t}'


def _return(names: list[str], types: list[TensorType]) -> str:
    return (f'  "stablehlo.return"({", ".join("%" + n for n in names)}) : '
            f'({", ".join(str(t) for t in types)}) -> ()')


# what an if branch computes from %x: the region's lines and the name it returns
BRANCHES = ("add_one", "double", "negate", "identity")


def _branch(kind: str, prefix: str, t: TensorType) -> str:
    """A no-argument branch region returning add_one: x + 1, double: x * 2, negate: -x, identity: x."""
    lines: list[str] = []
    result = "x"
    if kind in ("add_one", "double"):
        lines.append(_constant(f"{prefix}c", 1 if kind == "add_one" else 2, t))
        lines.append(_binary(f"{prefix}r", "add" if kind == "add_one" else "multiply", "x", f"{prefix}c", t))
        result = f"{prefix}r"
    elif kind == "negate":
        lines.append(f'  %{prefix}r = "stablehlo.negate"(%x) : ({t}) -> {t}')
        result = f"{prefix}r"
    return "\n".join([*lines, _return([result], [t])])


def _control_schemas() -> None:
    from hlolab.ops.examples import (
        Operand,
        OpParts,
        OpSchema,
        bool_param,
        dtype_param,
        enum_param,
        inferred_results,
        int_param,
        register_schema,
        shape_param,
        ttype,
    )

    def if_build(p: dict[str, Any]) -> OpParts:
        t = ttype(p["shape"], p["dtype"])
        return OpParts([Operand("pred", ttype((), "i1"), np.array(p["pred"]))], [t],
                       regions=[_branch(p["true_branch"], "t", t), _branch(p["false_branch"], "f", t)],
                       captures=[Operand("x", t)])

    register_schema(OpSchema("stablehlo.if", (
        bool_param("pred", True, "the predicate: true runs the true branch, false the false branch"),
        enum_param("true_branch", BRANCHES, "add_one", "what the true branch returns from %x"),
        enum_param("false_branch", BRANCHES, "double", "what the false branch returns from %x"),
        shape_param("shape", (2, 3), "shape of %x and of the result"),
        dtype_param("f32", "element type of %x and of the result"),
    ), {"default": {},
        # the spec's branches return 10 and 11: here %x = 10 and x + 1
        "spec-example": {"pred": True, "true_branch": "identity", "false_branch": "add_one", "shape": (),
                         "dtype": "i32", "index": (), "inputs": {"x": 10}}},
        if_build, doc="run the true or the false branch by a predicate"))

    def case_build(p: dict[str, Any]) -> OpParts:
        t = ttype(p["shape"], p["dtype"])
        k = p["num_results"]
        if k < 1:
            raise ValueError("the example needs at least one result")
        regions = []
        for b in range(p["branches"]):
            lines = [_constant(f"c{b}", b, t), _binary(f"r{b}", "add", "x", f"c{b}", t),
                     _return([f"r{b}"] * k, [t] * k)]
            regions.append("\n".join(lines))
        return OpParts([Operand("index", ttype((), "i32"), np.array(p["index_value"]))], [t] * k,
                       regions=regions, captures=[Operand("x", t)])

    register_schema(OpSchema("stablehlo.case", (
        # not named "index": a preset's "index" is the result element it points at
        int_param("index_value", 1, "the index operand: the branch run (out of [0, branches): the last)"),
        int_param("branches", 3, "number of branches; branch k returns x + k"),
        int_param("num_results", 1, "number of results (each branch returns its value that many times)"),
        shape_param("shape", (2, 3), "shape of %x and of every result"),
        dtype_param("f32", "element type of %x and of every result"),
    ), {"default": {},
        # the spec's branches return [0, 0] twice and [1, 1] twice: %x = [0, 0], x + 0 and x + 1
        "spec-example": {"index_value": -1, "branches": 2, "num_results": 2, "shape": (2,), "dtype": "i64",
                         "index": (1,), "inputs": {"x": [0, 0]}}},
        case_build, doc="run the branch that index selects"))

    def while_build(p: dict[str, Any]) -> OpParts:
        t, i = ttype(p["shape"], p["dtype"]), ttype((), "i64")
        limit = p["start"] + p["trip_count"]
        cond = "\n".join([
            f"^bb0(%ci: {i}, %ca: {t}):",
            _constant("limit", limit, i),
            f'  %p = "stablehlo.compare"(%ci, %limit) {{comparison_direction = '
            f"#stablehlo<comparison_direction LT>}} : ({i}, {i}) -> tensor<i1>",
            _return(["p"], [ttype((), "i1")])])
        body = "\n".join([
            f"^bb0(%bi: {i}, %ba: {t}):",
            _constant("one", 1, i),
            _binary("next_i", "add", "bi", "one", i),
            _binary("next_acc", "add", "ba", "x", t),
            _return(["next_i", "next_acc"], [i, t])])
        operands = [Operand("i", i, np.array(p["start"])), Operand("acc", t)]
        return OpParts(operands, inferred_results("stablehlo.while", Attrs(), [o.type for o in operands],
                                                  p["dtype"]),
                       regions=[cond, body], captures=[Operand("x", t)], index=())

    register_schema(OpSchema("stablehlo.while", (
        int_param("start", 0, "the counter's initial value"),
        int_param("trip_count", 3, "iterations: the loop runs while counter < start + trip_count"),
        shape_param("shape", (2, 3), "shape of the accumulator acc and of %x (acc += x each iteration)"),
        dtype_param("f32", "element type of acc and %x"),
    ), {"default": {},
        # the spec's loop: i from 1 while i < 10, sum += 1
        "spec-example": {"start": 1, "trip_count": 9, "shape": (), "dtype": "i64",
                         "inputs": {"acc": 0, "x": 1}}},
        while_build, doc="a counting loop: acc += x while the counter is below a limit"))


_control_schemas()
