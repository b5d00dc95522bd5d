// A strided, padded 2-D convolution (NHWC input, HWIO kernel), as jax.jit(lax.conv_general_dilated).lower(...) prints it
module @jit_conv attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main() -> (tensor<1x3x3x1xf32> {jax.result_info = "result"}) {
    %x = stablehlo.iota dim = 1 : tensor<1x5x5x2xf32>
    %w = stablehlo.constant dense<[[[[1.0], [0.0]], [[2.0], [0.0]], [[1.0], [0.0]]],
                                   [[[0.0], [1.0]], [[0.0], [2.0]], [[0.0], [1.0]]],
                                   [[[-1.0], [0.0]], [[-1.0], [0.0]], [[-1.0], [0.0]]]]> : tensor<3x3x2x1xf32>
    %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<1x5x5x2xf32>, tensor<3x3x2x1xf32>) -> tensor<1x3x3x1xf32>
    return %0 : tensor<1x3x3x1xf32>
  }
}
