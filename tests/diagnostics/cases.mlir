// lexer: a character MLIR does not use
func.func @main() -> tensor<f32> {
  %0 = stablehlo.constant dense<1.0> : tensor<f32> ¤
  return %0 : tensor<f32>
}
// -----
// lexer: an unterminated string
func.func @main() -> tensor<f32> {
  %0 = stablehlo.custom_call @foo() {backend_config = "abc} : () -> tensor<f32>
  return %0 : tensor<f32>
}
// -----
// parser: a missing closing brace
func.func @main(%a: tensor<f32>) -> tensor<f32> {
  return %a : tensor<f32>
// -----
// parser: an unknown element type
func.func @main(%a: tensor<2xf33>) -> tensor<2xf33> {
  return %a : tensor<2xf33>
}
// -----
// parser: a malformed tensor type
func.func @main(%a: tensor<2x>) -> tensor<2xf32> {
  return %a : tensor<2xf32>
}
// -----
// parser: a use of an undefined value
func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %a, %b : tensor<2xf32>
  return %0 : tensor<2xf32>
}
// -----
// parser: a value defined twice
func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %a, %a : tensor<2xf32>
  %0 = stablehlo.add %a, %a : tensor<2xf32>
  return %0 : tensor<2xf32>
}
// -----
// parser: a dense literal with the wrong number of elements
func.func @main() -> tensor<2x2xf32> {
  %0 = stablehlo.constant dense<[[1.0, 2.0], [3.0]]> : tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}
// -----
// parser: a dense literal whose value does not fit its type
func.func @main() -> tensor<i8> {
  %0 = stablehlo.constant dense<300> : tensor<i8>
  return %0 : tensor<i8>
}
// -----
// parser: a dense literal over the element budget
func.func @main() -> tensor<100000x100000xf32> {
  %0 = stablehlo.constant dense<1.0> : tensor<100000x100000xf32>
  return %0 : tensor<100000x100000xf32>
}
// -----
// parser: an op hlolab does not know
func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.frobnicate %a : tensor<2xf32>
  return %0 : tensor<2xf32>
}
// -----
// parser: a missing type after the colon
func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %a, %a :
  return %0 : tensor<2xf32>
}
// -----
// parser: a bad comparison direction
func.func @main(%a: tensor<2xf32>) -> tensor<2xi1> {
  %0 = stablehlo.compare XX, %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  return %0 : tensor<2xi1>
}
// -----
// parser: an attribute dictionary that is not closed
func.func @main(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = "stablehlo.transpose"(%a) {permutation = array<i64: 1, 0> : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
// -----
// verify: add with operands of different shapes
func.func @main(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %a, %b : (tensor<2xf32>, tensor<3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
// -----
// verify: and on floats
func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.and %a, %a : tensor<2xf32>
  return %0 : tensor<2xf32>
}
// -----
// module: a return whose type differs from the function's
func.func @main(%a: tensor<2xf32>) -> tensor<3xf32> {
  return %a : tensor<2xf32>
}
// -----
// verify: transpose with a permutation that is not one
func.func @main(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = stablehlo.transpose %a, dims = [0, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
// -----
// verify: transpose with a wrong result shape
func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = stablehlo.transpose %a, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
// -----
// verify: broadcast_in_dim with too few dims
func.func @main(%a: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = stablehlo.broadcast_in_dim %a, dims = [] : (tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
// -----
// verify: broadcast_in_dim onto a dim of another size
func.func @main(%a: tensor<3xf32>) -> tensor<2x4xf32> {
  %0 = stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<3xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
// -----
// verify: reshape that changes the element count
func.func @main(%a: tensor<2x3xf32>) -> tensor<7xf32> {
  %0 = stablehlo.reshape %a : (tensor<2x3xf32>) -> tensor<7xf32>
  return %0 : tensor<7xf32>
}
// -----
// verify: concatenate along a dim the operands do not have
func.func @main(%a: tensor<2xf32>) -> tensor<4xf32> {
  %0 = stablehlo.concatenate %a, %a, dim = 1 : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
// -----
// verify: concatenate of operands that differ in another dim
func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) -> tensor<4x3xf32> {
  %0 = stablehlo.concatenate %a, %b, dim = 0 : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
// -----
// verify: slice past the end
func.func @main(%a: tensor<4xf32>) -> tensor<3xf32> {
  %0 = stablehlo.slice %a [2:5] : (tensor<4xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
// -----
// verify: slice with a zero stride
func.func @main(%a: tensor<4xf32>) -> tensor<2xf32> {
  %0 = stablehlo.slice %a [0:4:0] : (tensor<4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
// -----
// verify: pad with negative interior padding
func.func @main(%a: tensor<3xf32>, %p: tensor<f32>) -> tensor<3xf32> {
  %0 = stablehlo.pad %a, %p, low = [0], high = [0], interior = [-1] : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
// -----
// verify: pad with a padding value that is not a scalar
func.func @main(%a: tensor<3xf32>, %p: tensor<1xf32>) -> tensor<5xf32> {
  %0 = "stablehlo.pad"(%a, %p) {edge_padding_low = array<i64: 1>, edge_padding_high = array<i64: 1>, interior_padding = array<i64: 0>} : (tensor<3xf32>, tensor<1xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}
// -----
// verify: iota along a dim the result does not have
func.func @main() -> tensor<4xi32> {
  %0 = stablehlo.iota dim = 1 : tensor<4xi32>
  return %0 : tensor<4xi32>
}
// -----
// verify: gather with index_vector_dim out of range
func.func @main(%a: tensor<4x5xf32>, %i: tensor<2x2xi64>) -> tensor<2x2x2xf32> {
  %0 = "stablehlo.gather"(%a, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [1, 2], start_index_map = [0, 1], index_vector_dim = 7>, slice_sizes = array<i64: 2, 2>} : (tensor<4x5xf32>, tensor<2x2xi64>) -> tensor<2x2x2xf32>
  return %0 : tensor<2x2x2xf32>
}
// -----
// verify: gather with a slice larger than the operand
func.func @main(%a: tensor<4x5xf32>, %i: tensor<2x2xi64>) -> tensor<2x2x9xf32> {
  %0 = "stablehlo.gather"(%a, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [1, 2], start_index_map = [0, 1], index_vector_dim = 1>, slice_sizes = array<i64: 2, 9>} : (tensor<4x5xf32>, tensor<2x2xi64>) -> tensor<2x2x9xf32>
  return %0 : tensor<2x2x9xf32>
}
// -----
// verify: gather collapsing a dim whose slice size is not 1
func.func @main(%a: tensor<4x5xf32>, %i: tensor<2x2xi64>) -> tensor<2x2xf32> {
  %0 = "stablehlo.gather"(%a, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0, 1], index_vector_dim = 1>, slice_sizes = array<i64: 2, 2>} : (tensor<4x5xf32>, tensor<2x2xi64>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}
// -----
// verify: gather with float start indices
func.func @main(%a: tensor<4x5xf32>, %i: tensor<2x2xf32>) -> tensor<2x2x2xf32> {
  %0 = "stablehlo.gather"(%a, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [1, 2], start_index_map = [0, 1], index_vector_dim = 1>, slice_sizes = array<i64: 2, 2>} : (tensor<4x5xf32>, tensor<2x2xf32>) -> tensor<2x2x2xf32>
  return %0 : tensor<2x2x2xf32>
}
// -----
// verify: scatter with an update window larger than the input
func.func @main(%a: tensor<3xf32>, %i: tensor<1x1xi64>, %u: tensor<1x5xf32>) -> tensor<3xf32> {
  %0 = "stablehlo.scatter"(%a, %i, %u) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    stablehlo.return %y : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>} : (tensor<3xf32>, tensor<1x1xi64>, tensor<1x5xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
// -----
// verify: a scatter body returning the wrong type
func.func @main(%a: tensor<3xf32>, %i: tensor<1x1xi64>, %u: tensor<1x1xf32>) -> tensor<3xf32> {
  %0 = "stablehlo.scatter"(%a, %i, %u) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %c = stablehlo.constant dense<1> : tensor<i32>
    stablehlo.return %c : tensor<i32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>} : (tensor<3xf32>, tensor<1x1xi64>, tensor<1x1xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
// -----
// verify: dot_general contracting dims of different sizes
func.func @main(%a: tensor<2x3xf32>, %b: tensor<4x2xf32>) -> tensor<2x2xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<4x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}
// -----
// verify: dot_general with a contracting dim out of range
func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<2x2xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [2] x [0] : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}
// -----
// verify: convolution with input features that do not match the kernel
func.func @main(%x: tensor<1x5x5x2xf32>, %w: tensor<3x3x1x1xf32>) -> tensor<1x3x3x1xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x5x5x2xf32>, tensor<3x3x1x1xf32>) -> tensor<1x3x3x1xf32>
  return %0 : tensor<1x3x3x1xf32>
}
// -----
// verify: convolution with a zero stride
func.func @main(%x: tensor<1x5x5x1xf32>, %w: tensor<3x3x1x1xf32>) -> tensor<1x3x3x1xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [0, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x5x5x1xf32>, tensor<3x3x1x1xf32>) -> tensor<1x3x3x1xf32>
  return %0 : tensor<1x3x3x1xf32>
}
// -----
// verify: reduce_window with a window of the wrong rank
func.func @main(%a: tensor<4x4xf32>, %z: tensor<f32>) -> tensor<2x2xf32> {
  %0 = "stablehlo.reduce_window"(%a, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {window_dimensions = array<i64: 2>, window_strides = array<i64: 2, 2>} : (tensor<4x4xf32>, tensor<f32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}
// -----
// verify: reduce over a dim the input does not have
func.func @main(%a: tensor<4xf32>, %z: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [1] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
// -----
// verify: select with a predicate of another shape
func.func @main(%p: tensor<3xi1>, %a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.select %p, %a, %a : (tensor<3xi1>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
// -----
// verify: sort along a dim the input does not have
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "stablehlo.sort"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %c = stablehlo.compare LT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) {dimension = 3 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
// -----
// verify: a while condition that does not return a boolean
func.func @main(%a: tensor<i32>) -> tensor<i32> {
  %0 = stablehlo.while(%x = %a) : tensor<i32>
  cond {
    stablehlo.return %x : tensor<i32>
  } do {
    stablehlo.return %x : tensor<i32>
  }
  return %0 : tensor<i32>
}
// -----
// verify: dynamic_slice with a slice larger than the operand
func.func @main(%a: tensor<4xf32>, %i: tensor<i64>) -> tensor<5xf32> {
  %0 = stablehlo.dynamic_slice %a, %i, sizes = [5] : (tensor<4xf32>, tensor<i64>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}
// -----
// verify: convert to a shape that differs
func.func @main(%a: tensor<2xf32>) -> tensor<3xi32> {
  %0 = stablehlo.convert %a : (tensor<2xf32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}
// -----
// verify: reverse along a dim twice
func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = stablehlo.reverse %a, dims = [1, 1] : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
// -----
// module: a call to a function that does not exist
func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = func.call @nowhere(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
// -----
// execution: a while loop over the step budget
func.func @main() -> tensor<i64> {
  %c0 = stablehlo.constant dense<0> : tensor<i64>
  %0 = stablehlo.while(%x = %c0) : tensor<i64>
  cond {
    %t = stablehlo.constant dense<true> : tensor<i1>
    stablehlo.return %t : tensor<i1>
  } do {
    stablehlo.return %x : tensor<i64>
  }
  return %0 : tensor<i64>
}
// -----
// execution: a custom_call hlolab cannot run
func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.custom_call @my_kernel(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
// -----
// execution: an integer division by zero is defined, a check that fails is a FAIL
func.func @main() -> tensor<i32> {
  %a = stablehlo.constant dense<7> : tensor<i32>
  %b = stablehlo.constant dense<0> : tensor<i32>
  %0 = stablehlo.divide %a, %b : tensor<i32>
  check.expect_eq_const %0, dense<1> : tensor<i32>
  return %0 : tensor<i32>
}
// -----
// execution: a function that calls itself without end
func.func @main(%a: tensor<i32>) -> tensor<i32> {
  %0 = func.call @main(%a) : (tensor<i32>) -> tensor<i32>
  return %0 : tensor<i32>
}
// -----
// verify: an invalid transpose in the branch of an if that is never taken
func.func @main() -> tensor<2x3xf32> {
  %pred = stablehlo.constant dense<true> : tensor<i1>
  %x = stablehlo.constant dense<1.0> : tensor<2x3xf32>
  %0 = "stablehlo.if"(%pred) ({
    stablehlo.return %x : tensor<2x3xf32>
  }, {
    %t = stablehlo.transpose %x, dims = [0, 0] : (tensor<2x3xf32>) -> tensor<2x3xf32>
    stablehlo.return %t : tensor<2x3xf32>
  }) : (tensor<i1>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
// -----
// verify: an invalid op in a function that is never called
func.func private @unused(%a: tensor<4xf32>) -> tensor<2xf32> {
  %0 = stablehlo.slice %a [0:5] : (tensor<4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}
