// RUN: rlx-opt %s | rlx-opt | filecheck %s
// RUN: rlx-opt %s --print-op-generic | rlx-opt | filecheck %s

// A conv region round-trips in its custom and generic forms, its geometry with it.

// CHECK-LABEL: func.func @conv_bias_relu(
// CHECK: rlx.conv_region ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<1x8x6x6xf32>, tensor<16x4x3x3xf32>, tensor<16xf32>) {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1)>], strides = array<i64: 2, 1>, dilations = array<i64: 1, 2>, pad_before = array<i64: 1, 2>, pad_after = array<i64: 0, 2>, groups = 2 : i64} -> tensor<1x16x3x6xf32> {
// CHECK: rlx.add
// CHECK: rlx.relu
// CHECK: rlx.yield
func.func @conv_bias_relu(%x: tensor<1x8x6x6xf32>, %w: tensor<16x4x3x3xf32>, %b: tensor<16xf32>) -> tensor<1x16x3x6xf32> {
  %y = rlx.conv_region ins(%x, %w, %b : tensor<1x8x6x6xf32>, tensor<16x4x3x3xf32>, tensor<16xf32>) {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1)>], strides = array<i64: 2, 1>, dilations = array<i64: 1, 2>, pad_before = array<i64: 1, 2>, pad_after = array<i64: 0, 2>, groups = 2 : i64} -> tensor<1x16x3x6xf32> {
  ^bb0(%acc: f32, %bias: f32):
    %s = rlx.add %acc, %bias : (f32, f32) -> f32
    %r = rlx.relu %s : (f32) -> f32
    rlx.yield %r : f32
  }
  func.return %y : tensor<1x16x3x6xf32>
}
