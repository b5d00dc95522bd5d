"""hlolab: see why every output element of a StableHLO op has its value.

Public API (imports are lazy so ``import hlolab`` stays light)::

    m = hlolab.parse(text)             # Module
    results = hlolab.run(m, [x, y])    # list of numpy arrays
    s = hlolab.Session(text)           # the stepper: step, step_back, breakpoints
    s.bind([x, y]); s.run()
    s.sources("%5", (3, 7))            # which argument elements %5[3, 7] depends on
    hlolab.example_path("mlp_step")    # a built-in example program
"""

from __future__ import annotations

from typing import Any

__all__ = ["parse", "run", "print_module", "Session", "example_path", "examples"]


def __getattr__(name: str) -> Any:
    if name == "Session":  # lazily, so `import hlolab` stays light
        from hlolab.session import Session

        return Session
    raise AttributeError(f"module 'hlolab' has no attribute {name!r}")


def parse(text: str, filename: str = "<string>") -> Any:
    """Parse one module of MLIR text (what JAX prints, or a test program)."""
    from hlolab.ir.parser import parse_module

    return parse_module(text, filename)


def print_module(module: Any, generic: bool = False) -> str:
    from hlolab.ir.printer import print_module as _print

    return _print(module, generic=generic)


def run(module: Any, args: list[Any] | None = None, entry: str | None = None, *,
        grid: tuple[int, int] | None = None, infeed: list[Any] | None = None,
        outfeed: list[Any] | None = None) -> list[Any]:
    """Run ``module``'s entry function (``@main`` or the only one) on numpy arrays.

    ``grid`` = (replicas, partitions) (default: the module's ``mhlo.num_replicas`` /
    ``mhlo.num_partitions``, else 1x1): with more than one process, the result is one list
    of results per process, and an argument with an extra leading dim of R*P is split
    across the processes (``hlolab.interp.processes.grid_args``). ``infeed``: the values
    ``stablehlo.infeed`` reads, in order; ``outfeed``: a list that receives
    ``(process, values)`` per ``stablehlo.outfeed``."""
    from hlolab.interp.engine import Interpreter
    from hlolab.interp.processes import grid_args, module_grid, run_grid

    if isinstance(module, str):
        module = parse(module)
    interp = Interpreter(module)
    if infeed is not None:
        interp.state["infeed"] = list(infeed)
    if outfeed is not None:
        interp.state["outfeed"] = outfeed
    grid = grid or module_grid(module)
    if grid[0] * grid[1] == 1:
        return interp.run(entry, args)
    from hlolab.interp.engine import drain

    func = interp.entry(entry)
    return drain(run_grid(interp, func, grid_args(func, list(args or []), grid, None), grid))


def examples() -> list[str]:
    """The names of the built-in example programs."""
    from pathlib import Path

    return sorted(p.stem for p in (Path(__file__).parent / "examples").glob("*.mlir"))


def example_path(name: str) -> Any:
    """The path of built-in example ``name`` (``examples()`` lists them)."""
    from pathlib import Path

    p = Path(__file__).parent / "examples" / f"{name}.mlir"
    if not p.is_file():
        from hlolab.errors import HloLabError

        raise HloLabError(f"no built-in example '{name}' (examples: {', '.join(examples())})")
    return p
