module @jit_mlp attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32>) -> (tensor<2x2xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<[[1.000000e+00, -1.000000e+00, 5.000000e-01, 2.000000e+00], [0.000000e+00, 1.000000e+00, -5.000000e-01, 1.000000e+00], [2.000000e+00, 0.000000e+00, 1.000000e+00, -1.000000e+00]]> : tensor<3x4xf32>
    %cst_0 = stablehlo.constant dense<[0.000000e+00, 5.000000e-01, -1.000000e+00, 0.000000e+00]> : tensor<4xf32>
    %cst_1 = stablehlo.constant dense<[[1.000000e+00, 0.000000e+00], [-1.000000e+00, 2.000000e+00], [5.000000e-01, 1.000000e+00], [0.000000e+00, -1.000000e+00]]> : tensor<4x2xf32>
    %cst_2 = stablehlo.constant dense<[2.500000e-01, -5.000000e-01]> : tensor<2xf32>
    %0 = stablehlo.dot_general %arg0, %cst, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
    %1 = stablehlo.broadcast_in_dim %cst_0, dims = [1] : (tensor<4xf32>) -> tensor<1x4xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<1x4xf32>) -> tensor<2x4xf32>
    %3 = stablehlo.add %0, %2 : tensor<2x4xf32>
    %4 = call @relu(%3) : (tensor<2x4xf32>) -> tensor<2x4xf32>
    %5 = stablehlo.dot_general %4, %cst_1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x4xf32>, tensor<4x2xf32>) -> tensor<2x2xf32>
    %6 = stablehlo.broadcast_in_dim %cst_2, dims = [1] : (tensor<2xf32>) -> tensor<1x2xf32>
    %7 = stablehlo.broadcast_in_dim %6, dims = [0, 1] : (tensor<1x2xf32>) -> tensor<2x2xf32>
    %8 = stablehlo.add %5, %7 : tensor<2x2xf32>
    return %8 : tensor<2x2xf32>
  }
  func.func private @relu(%arg0: tensor<2x4xf32>) -> tensor<2x4xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x4xf32>
    %1 = stablehlo.maximum %arg0, %0 : tensor<2x4xf32>
    return %1 : tensor<2x4xf32>
  }
}
