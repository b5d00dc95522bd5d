"""One verified module: every op of every function and region, before anything runs.

Branches that are never taken and functions that are never called are
verified like the rest, with the op's own ``op (Cn): ...`` messages. For each
op with a definition: its attribute record is read (``Op.record``), its
``verify`` checks the spec's constraints, and its ``infer`` must admit the
declared result types. Ops hlolab does not implement are left to run time
(``not implemented yet``), so a module that only parses still prints.
"""

from __future__ import annotations

from hlolab.errors import ExecutionError, HloLabError, VerificationError
from hlolab.ir.module import Module, Op
from hlolab.ops.record import AsDeclared, Inferred, infer_with, inferred_for, type_admits
from hlolab.ops.registry import OpCall, lookup


def verify_op(op: Op) -> None:
    """Verify one op (not the ops of its regions); raises a located HloLabError."""
    opdef = lookup(op.name)
    if opdef is None:
        return
    call = OpCall(op)
    try:
        rec = call.attrs
        if opdef.verify is not None:
            opdef.verify(call)
        if opdef.infer is not None:
            check_inferred(call, infer_with(opdef.infer, rec, op.operand_types, call.error))
    except HloLabError as e:
        raise e.with_loc(op.loc) from None
    except (KeyboardInterrupt, RecursionError, MemoryError):
        raise
    except Exception as e:  # a verifier bug still reaches the user as a clear error
        raise ExecutionError(f"{op.name}: internal error while verifying: {type(e).__name__}: {e}",
                             op.loc) from e


def check_inferred(call: OpCall, inferred: list[Inferred] | AsDeclared) -> None:
    """The declared result types must be the inferred ones (up to ``?`` sizes)."""
    declared = call.result_types
    inferred = inferred_for(inferred, declared)
    if len(inferred) != len(declared):
        raise call.error(None, f"has {len(declared)} results, its operands and attributes give "
                         f"{len(inferred)}")
    for k, (want, got) in enumerate(zip(inferred, declared, strict=True)):
        if not type_admits(want, got):
            which = f"result #{k}" if len(declared) > 1 else "the result"
            raise call.error(None, f"{which} is declared {got}, its operands and attributes give {want}")


def verify_module(module: Module) -> None:
    """Verify every op of ``module`` once (a verified module remembers it)."""
    if module.verified:
        return
    for op in module.walk():
        verify_op(op)
    module.verified = True


__all__ = ["verify_module", "verify_op", "check_inferred", "VerificationError"]
