// A 4-device sharded matmul (shard_map, contraction dim sharded over mesh axis "x", one psum), as jax 0.10.2 prints it (Shardy, the default partitioner)
// Made by: jax.jit(shard_map(lambda x, w: jax.lax.psum(x @ w, 'x'), mesh=jax.make_mesh((4,), ('x',)), in_specs=(P(None, 'x'), P('x', None)), out_specs=P())).lower(x: f32[4,8], w: f32[8,3]).as_text()
// (python 3.11.7, XLA_FLAGS=--xla_force_host_platform_device_count=4; hlolab run gives every process the same global x and w)
module @jit_f attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=4]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}]}}
  func.func public @main(%arg0: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}, %arg1: tensor<8x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<4x3xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
    %0 = sdy.manual_computation(%arg0, %arg1) in_shardings=[<@mesh, [{}, {"x"}]>, <@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{}, {}]>] manual_axes={"x"} (%arg2: tensor<4x2xf32>, %arg3: tensor<2x3xf32>) {
      %1 = stablehlo.dot_general %arg2, %arg3, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
      %2 = "stablehlo.all_reduce"(%1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> ({
      ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
        %3 = stablehlo.add %arg4, %arg5 : tensor<f32>
        stablehlo.return %3 : tensor<f32>
      }) : (tensor<4x3xf32>) -> tensor<4x3xf32>
      sdy.return %2 : tensor<4x3xf32>
    } : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
    return %0 : tensor<4x3xf32>
  }
}
