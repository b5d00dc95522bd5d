"""Run the modules of MLIR files and classify each as PASS / FAIL / ERROR / OK.

This is what ``hlolab run`` and the conformance tests use: one bad module
never stops the others, and every failure becomes a one-line message.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hlolab.errors import CheckFailure, HloLabError, ParseError
from hlolab.interp.engine import Interpreter
from hlolab.interp.inputs import random_args
from hlolab.ir.attrs import ArrayAttr, DenseElementsAttr
from hlolab.ir.module import Module
from hlolab.limits import ELEMENT_BUDGET, STEP_BUDGET
from hlolab.ops.registry import Token
from hlolab.types import TensorType, TupleType, element_type_of_dtype


@dataclass
class ModuleResult:
    label: str  # "abs.mlir#3"
    status: str  # "PASS" | "FAIL" | "ERROR" | "OK" (ran, had no checks)
    message: str = ""
    outputs: list[Any] | None = None
    output_types: list[Any] = field(default_factory=list)
    printed: list[str] = field(default_factory=list)  # interpreter.print output
    checks: int = 0
    error: HloLabError | None = None
    # a process grid run (more than one process): each process's results, in process order
    process_outputs: list[list[Any]] | None = None
    grid: tuple[int, int] = (1, 1)
    outfeed: list[tuple[int, list[Any]]] = field(default_factory=list)  # (process, values)

    @property
    def ok(self) -> bool:
        return self.status in ("PASS", "OK")

    def line(self) -> str:
        return f"{self.label}: {self.status}" + (f": {self.message}" if self.message else "")


CHECK_PREFIXES = ("check.",)


def is_check(op_name: str, attrs: dict[str, Any]) -> bool:
    if op_name.startswith(CHECK_PREFIXES):
        return True
    if op_name == "stablehlo.custom_call":
        target = attrs.get("call_target_name")
        return target is not None and str(getattr(target, "value", "")).startswith("check.")
    return False


@dataclass(frozen=True)
class Budgets:
    """Resource limits of one run: elements per tensor (literals, results, padded frames) and
    executed ops (a runaway while loop)."""
    elements: int = ELEMENT_BUDGET
    steps: int = STEP_BUDGET

    def interpreter(self, module: Module) -> Interpreter:
        return Interpreter(module, element_budget=self.elements, step_budget=self.steps)


def run_module(module: Module, label: str, entry: str | None = None,
               args: list[Any] | None = None, seed: int | None = None,
               budgets: Budgets = Budgets(), grid: tuple[int, int] | None = None,
               infeed: list[Any] | None = None) -> ModuleResult:
    """Run ``module``'s entry function and classify the outcome. ``grid`` (replicas,
    partitions; default: the module's ``mhlo.num_replicas`` / ``mhlo.num_partitions``, else
    1x1) runs it as every process of a grid (``hlolab.interp.processes.grid_args`` says how
    ``args`` reach each process); ``infeed`` fills the infeed queue."""
    from hlolab.interp.processes import grid_args, module_grid, run_grid

    try:
        interp = budgets.interpreter(module)
        func = interp.entry(entry)
        grid = grid or module_grid(module)
        if infeed:
            interp.state["infeed"] = list(infeed)
        checks = 0
        if grid[0] * grid[1] > 1:
            per = grid_args(func, args or [], grid, seed, budgets.elements)
            gen = run_grid(interp, func, per, grid)
        else:
            # given arguments first, the rest random from the seed, each within the element budget
            args = random_args(func, args or [], seed, budgets.elements)
            gen = interp.steps(func.name, args)
        while True:
            try:
                event = next(gen)
            except StopIteration as stop:
                outputs = stop.value
                break
            if is_check(event.op.name, event.op.attributes):
                checks += 1
        printed = list(interp.state.get("output", []))
        status = "PASS" if checks else "OK"
        per_process = None
        if grid[0] * grid[1] > 1:
            per_process, outputs = outputs, outputs[0]
            from hlolab.interp.processes import global_view, same_results

            if global_view(func) and same_results(per_process):  # one global result
                per_process = None
        from hlolab.interp.refine import value_types  # `?` sizes: the values' own

        return ModuleResult(label, status, outputs=outputs,
                            output_types=value_types(func.result_types, outputs),
                            printed=printed, checks=checks, process_outputs=per_process, grid=grid,
                            outfeed=list(interp.state.get("outfeed", [])))
    except CheckFailure as e:
        where = f" at line {e.loc.line}" if e.loc else ""
        return ModuleResult(label, "FAIL", f"{e.check}{where}: {e.detail}", error=e)
    except HloLabError as e:
        return ModuleResult(label, "ERROR", e.short(), error=e)
    except RecursionError:
        return ModuleResult(label, "ERROR", "recursion too deep while running the program")


def parse_args_literal(text: str) -> list[np.ndarray]:
    """``--args "[dense<1> : tensor<2xi32>, ...]"`` → arrays (as stablehlo-translate)."""
    from hlolab.ir.parser import parse_attribute

    attr = parse_attribute(text, "<--args>")
    if not isinstance(attr, ArrayAttr):
        raise ParseError("expected an array attribute for --args, "
                         "i.e. --args=[dense<1> : tensor<2xi32>, ...]")
    out = []
    for a in attr.items:
        if not isinstance(a, DenseElementsAttr):
            raise ParseError("expected dense elements attributes in --args, "
                             "i.e. --args=[dense<1> : tensor<2xi32>, ...]")
        out.append(np.array(a.array))
    return out


def format_value(value: Any, type_: Any = None) -> str:
    """A value as MLIR text that parses back: ``dense<…> : tensor<…>``."""
    if isinstance(value, np.ndarray):
        t = type_ if isinstance(type_, TensorType) else TensorType(
            value.shape, element_type_of_dtype(value.dtype))
        return str(DenseElementsAttr(t, value))
    if isinstance(value, tuple):
        types = type_.types if isinstance(type_, TupleType) else [None] * len(value)
        return "(" + ", ".join(format_value(v, t) for v, t in zip(value, types)) + ")"
    if isinstance(value, Token):
        return "!stablehlo.token"
    return repr(value)


def run_file(path: str | Path, split: bool = False, entry: str | None = None,
             args: list[Any] | None = None, seed: int | None = None,
             budgets: Budgets = Budgets(), grid: tuple[int, int] | None = None,
             infeed: list[Any] | None = None) -> list[ModuleResult]:
    """Parse and run every module of a file; parse errors become ERROR results."""
    from hlolab.ir.parser import parse_module, split_source

    path = Path(path)
    name = path.name
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as e:
        return [ModuleResult(f"{name}#1", "ERROR", f"cannot read {path}: {e}")]
    chunks = split_source(text) if split else [(1, text)]
    results = []
    for n, (first_line, chunk) in enumerate(chunks, start=1):
        label = f"{name}#{n}"
        try:
            module = parse_module(chunk, str(path), first_line, budgets.elements)
        except HloLabError as e:
            results.append(ModuleResult(label, "ERROR", e.short(), error=e))
            continue
        except RecursionError:
            results.append(ModuleResult(label, "ERROR", "nesting too deep to parse"))
            continue
        if not module.funcs:
            continue  # a chunk holding only comments
        results.append(run_module(module, label, entry, args, seed, budgets, grid, infeed))
    if not results:  # nothing to run is an error, not a silent success
        results.append(ModuleResult(f"{name}#1", "ERROR", f"{path} holds no module (no func.func to run)"))
    return results
