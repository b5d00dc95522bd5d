"""Events of a run carry what the tracer needs: provenance and explain per op."""

from __future__ import annotations

import numpy as np

from hlolab.interp.engine import Interpreter
from hlolab.ir.parser import parse_module
from hlolab.ops.registry import all_ops, lookup
from hlolab.trace.explain import format_explanation

PROGRAM = """
func.func @main(%x: tensor<2x3xf32>, %p: tensor<2x3xi1>) -> tensor<4x2xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %n = stablehlo.negate %x : tensor<2x3xf32>
  %s = stablehlo.select %p, %x, %n : tensor<2x3xi1>, tensor<2x3xf32>
  %t = stablehlo.transpose %s, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %r = stablehlo.pad %t, %zero, low = [1, 0], high = [0, 0], interior = [0, 0]
      : (tensor<3x2xf32>, tensor<f32>) -> tensor<4x2xf32>
  func.return %r : tensor<4x2xf32>
}
"""


def run_events():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    p = np.array([[True, False, True], [False, True, False]])
    return list(Interpreter(parse_module(PROGRAM)).events(None, [x, p]))


def test_per_op_provenance_along_a_program():
    events = {e.op.results[0].name: e for e in run_events()}
    # pad: row 0 is padding, row 1 comes from %t[0, :]
    pad = events["%r"].provenance()
    assert {(s.operand, s.index, s.role) for s in pad.sources(0, (0, 1))} == {(1, (), "pad_value")}
    assert {(s.operand, s.index, s.role) for s in pad.sources(0, (2, 1))} == {(0, (1, 1), "copy")}
    # transpose swaps the indices
    tr = events["%t"].provenance()
    assert [(s.index, s.role) for s in tr.sources(0, (2, 1))] == [((1, 2), "copy")]
    # select: the predicate is read to decide, the chosen branch is copied
    sel = events["%s"].provenance()
    got = {(s.operand, s.index, s.role) for s in sel.sources(0, (1, 2))}
    assert got == {(0, (1, 2), "control"), (2, (1, 2), "copy")}


def test_explain_of_elementwise_and_movement_ops():
    events = {e.op.results[0].name: e for e in run_events()}
    for name, index in (("%n", (1, 2)), ("%s", (0, 0)), ("%t", (2, 1)), ("%r", (0, 0))):
        e = events[name]
        exp = lookup(e.op.name).explain(e.call, e.inputs, e.outputs, 0, index)
        assert exp.value == e.outputs[0][index]
        assert format_explanation(exp)  # renders without error
    neg = events["%n"]
    exp = lookup(neg.op.name).explain(neg.call, neg.inputs, neg.outputs, 0, (1, 2))
    assert float(exp.steps[0].value) == 5.0 and float(exp.value) == -5.0


def test_every_registered_op_has_provenance_or_is_control_or_check():
    exempt_prefixes = ("check.", "interpreter.")
    exempt = {"stablehlo.while", "stablehlo.if", "stablehlo.case", "func.call", "call",
              "stablehlo.composite", "stablehlo.after_all", "stablehlo.create_token",
              "stablehlo.custom_call"}
    missing = [n for n, d in all_ops().items()
               if d.provenance is None and n not in exempt and not n.startswith(exempt_prefixes)]
    assert not missing, missing
