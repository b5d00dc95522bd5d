// softplus, transpose and a broadcast bias, in the form jax.jit(f).lower(x).as_text() prints
module @jit_softplus attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main() -> (tensor<3x2xf32> {jax.result_info = "result"}) {
    %x = stablehlo.constant dense<[[-2.0, -1.0, 0.0], [1.0, 2.0, 3.0]]> : tensor<2x3xf32>
    %0 = call @softplus_t(%x) : (tensor<2x3xf32>) -> tensor<3x2xf32>
    return %0 : tensor<3x2xf32>
  }
  func.func private @softplus_t(%arg0: tensor<2x3xf32>) -> tensor<3x2xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
    %1 = stablehlo.maximum %arg0, %0 : tensor<2x3xf32>
    %2 = stablehlo.abs %arg0 : tensor<2x3xf32>
    %3 = stablehlo.negate %2 : tensor<2x3xf32>
    %4 = stablehlo.exponential %3 : tensor<2x3xf32>
    %5 = stablehlo.log_plus_one %4 : tensor<2x3xf32>
    %6 = stablehlo.add %1, %5 : tensor<2x3xf32>
    %7 = stablehlo.transpose %6, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
    %bias = stablehlo.constant dense<[1.0, -1.0]> : tensor<2xf32>
    %8 = stablehlo.broadcast_in_dim %bias, dims = [1] : (tensor<2xf32>) -> tensor<3x2xf32>
    %9 = stablehlo.add %7, %8 : tensor<3x2xf32>
    return %9 : tensor<3x2xf32>
  }
}
