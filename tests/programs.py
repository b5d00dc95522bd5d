"""Small StableHLO programs that several test files run (the interpreter, the session, the
TUI stepper, the CLI): one copy each, so a change of syntax is made once."""

from __future__ import annotations

# while (i < n) { i += 1; v = v * v }, then reverse: loops, regions and stepping (reverse: line 13)
SQUARING_WHILE = """\
func.func @main(%n: tensor<i64>, %x: tensor<8xf32>) -> (tensor<i64>, tensor<8xf32>) {
  %zero = stablehlo.constant dense<0> : tensor<i64>
  %one = stablehlo.constant dense<1> : tensor<i64>
  %i, %y = stablehlo.while(%a = %zero, %v = %x) : tensor<i64>, tensor<8xf32>
  cond {
    %c = stablehlo.compare LT, %a, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %a1 = stablehlo.add %a, %one : tensor<i64>
    %v1 = stablehlo.multiply %v, %v : tensor<8xf32>
    stablehlo.return %a1, %v1 : tensor<i64>, tensor<8xf32>
  }
  %s = stablehlo.reverse %y, dims = [0] : tensor<8xf32>
  func.return %i, %s : tensor<i64>, tensor<8xf32>
}
"""

# a while that never ends and runs no op in its regions (only the step budget or an interrupt
# inside the interpreter stops it)
ENDLESS_WHILE = """\
func.func @main() -> tensor<i64> {
  %t = stablehlo.constant dense<true> : tensor<i1>
  %z = stablehlo.constant dense<0> : tensor<i64>
  %r = stablehlo.while(%a = %z) : tensor<i64>
  cond { stablehlo.return %t : tensor<i1> } do { stablehlo.return %a : tensor<i64> }
  func.return %r : tensor<i64>
}
"""

# a while that never ends and steps an add every iteration
RUNAWAY_WHILE = """\
func.func @main() -> tensor<i64> {
  %t = stablehlo.constant dense<true> : tensor<i1>
  %z = stablehlo.constant dense<0> : tensor<i64>
  %one = stablehlo.constant dense<1> : tensor<i64>
  %r = stablehlo.while(%a = %z) : tensor<i64>
  cond { stablehlo.return %t : tensor<i1> } do {
    %a1 = stablehlo.add %a, %one : tensor<i64>
    stablehlo.return %a1 : tensor<i64>
  }
  func.return %r : tensor<i64>
}
"""
