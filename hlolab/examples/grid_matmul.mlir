// A 4-device sharded matmul: each of 4 partitions multiplies its 2x4 row block of x by w, then all_gather joins the rows
// (x is 8x4 split by rows, one block per partition; w is replicated; hlolab open/run give each partition its own random block)
module @grid_matmul attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%x: tensor<2x4xf32>) -> tensor<8x3xf32> {
    %w = stablehlo.constant dense<[[1.0, 0.0, 2.0], [0.0, 1.0, -1.0], [1.0, 1.0, 0.0], [0.5, -2.0, 1.0]]> : tensor<4x3xf32>
    %y = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
    %all = "stablehlo.all_gather"(%y) {
      all_gather_dim = 0 : i64,
      replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>,
      channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
      use_global_device_ids
    } : (tensor<2x3xf32>) -> tensor<8x3xf32>
    return %all : tensor<8x3xf32>
  }
}
