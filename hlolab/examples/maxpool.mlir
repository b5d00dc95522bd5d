// A 3x3 max-pool with stride 2 and padding 1, as jax.jit(lax.reduce_window).lower(...) prints it
module @jit_pool attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1x6x6x1xf32>) -> (tensor<1x3x3x1xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %1 = "stablehlo.reduce_window"(%arg0, %cst) <{base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<[[0, 0], [1, 1], [1, 1], [0, 0]]> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 3, 3, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %2 = stablehlo.maximum %arg1, %arg2 : tensor<f32>
      stablehlo.return %2 : tensor<f32>
    }) : (tensor<1x6x6x1xf32>, tensor<f32>) -> tensor<1x3x3x1xf32>
    return %1 : tensor<1x3x3x1xf32>
  }
}
