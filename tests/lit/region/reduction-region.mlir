// RUN: rlx-opt %s | rlx-opt | filecheck %s
// RUN: rlx-opt %s --print-op-generic | rlx-opt | filecheck %s

// A reduction region round-trips in its custom and generic forms.

// CHECK-LABEL: func.func @row_sum_of_squares(
// CHECK: rlx.reduction_region ins(%{{.*}} : tensor<4x3xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iteration_shape = array<i64: 4, 3>, iterator_types = ["parallel", "reduction"], reduction = "reduce_sum"} -> tensor<4xf32> {
// CHECK: rlx.mul
// CHECK: rlx.yield
func.func @row_sum_of_squares(%x: tensor<4x3xf32>) -> tensor<4xf32> {
  %s = rlx.reduction_region ins(%x : tensor<4x3xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iteration_shape = array<i64: 4, 3>, iterator_types = ["parallel", "reduction"], reduction = "reduce_sum"} -> tensor<4xf32> {
  ^bb0(%a: f32):
    %m = rlx.mul %a, %a : (f32, f32) -> f32
    rlx.yield %m : f32
  }
  func.return %s : tensor<4xf32>
}

// CHECK-LABEL: func.func @full_max(
// CHECK: iterator_types = ["reduction", "reduction"], reduction = "reduce_max"} -> tensor<f32>
func.func @full_max(%x: tensor<4x3xf32>) -> tensor<f32> {
  %s = rlx.reduction_region ins(%x : tensor<4x3xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iteration_shape = array<i64: 4, 3>, iterator_types = ["reduction", "reduction"], reduction = "reduce_max"} -> tensor<f32> {
  ^bb0(%a: f32):
    rlx.yield %a : f32
  }
  func.return %s : tensor<f32>
}
