// RUN: rlx-opt %s | rlx-opt | filecheck %s
// RUN: rlx-opt %s --print-op-generic | rlx-opt | filecheck %s

// A contraction region round-trips in its custom and generic forms.

// CHECK-LABEL: func.func @dense(
// CHECK: rlx.contraction_region ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d1)>], transpose_lhs = false, transpose_rhs = true} -> tensor<8x8xf32> {
// CHECK: rlx.add
// CHECK: rlx.yield
func.func @dense(%x: tensor<8x4xf32>, %w: tensor<8x4xf32>, %b: tensor<8xf32>) -> tensor<8x8xf32> {
  %y = rlx.contraction_region ins(%x, %w, %b : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d1)>], transpose_lhs = false, transpose_rhs = true} -> tensor<8x8xf32> {
  ^bb0(%acc: f32, %bias: f32):
    %s = rlx.add %acc, %bias : (f32, f32) -> f32
    rlx.yield %s : f32
  }
  func.return %y : tensor<8x8xf32>
}
