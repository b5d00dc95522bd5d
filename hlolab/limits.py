"""Default resource budgets (DESIGN.md, "Errors"), in a module without imports so the command
line can show them in ``--help`` without loading numpy."""

ELEMENT_BUDGET = 2**28  # elements per tensor, literal or padded frame; refused before allocation
STEP_BUDGET = 10_000_000  # executed ops per run (guards runaway while loops)
MAX_CALL_DEPTH = 100  # nested calls; each costs ~7 Python frames of the default 1000
