// RUN: rlx-opt %s --split-input-file --verify-diagnostics | filecheck %s

// One case per rule of rlx.reduction_region (the rules it shares with
// rlx.elementwise_region are tested in elementwise/invalid.mlir).

// CHECK-LABEL: sym_name = "bad_iterator_type"
// CHECK: Operation does not verify: 'rlx.reduction_region' iterator_types must give 'parallel' or 'reduction' for each of the 2 dims
func.func @bad_iterator_type(%x: tensor<4x3xf32>) {
  %s = rlx.reduction_region ins(%x : tensor<4x3xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iteration_shape = array<i64: 4, 3>, iterator_types = ["parallel", "window"], reduction = "reduce_sum"} -> tensor<4xf32> {
  ^bb0(%a: f32):
    rlx.yield %a : f32
  }
  func.return
}

// -----

// CHECK-LABEL: sym_name = "iterator_count"
// CHECK: Operation does not verify: 'rlx.reduction_region' iterator_types must give 'parallel' or 'reduction' for each of the 2 dims
func.func @iterator_count(%x: tensor<4x3xf32>) {
  %s = rlx.reduction_region ins(%x : tensor<4x3xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iteration_shape = array<i64: 4, 3>, iterator_types = ["parallel"], reduction = "reduce_sum"} -> tensor<4xf32> {
  ^bb0(%a: f32):
    rlx.yield %a : f32
  }
  func.return
}

// -----

// CHECK-LABEL: sym_name = "unknown_reduction"
// CHECK: Operation does not verify: 'rlx.reduction_region' reduction "reduce_median" is not one of reduce_sum, reduce_mean, reduce_prod, reduce_max, reduce_min
func.func @unknown_reduction(%x: tensor<4x3xf32>) {
  %s = rlx.reduction_region ins(%x : tensor<4x3xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iteration_shape = array<i64: 4, 3>, iterator_types = ["parallel", "reduction"], reduction = "reduce_median"} -> tensor<4xf32> {
  ^bb0(%a: f32):
    rlx.yield %a : f32
  }
  func.return
}

// -----

// CHECK-LABEL: sym_name = "result_not_parallel_extents"
// CHECK: Operation does not verify: 'rlx.reduction_region' result shape [3] must be the parallel extents [4] (or [4, 1], keeping the reduced dims)
func.func @result_not_parallel_extents(%x: tensor<4x3xf32>) {
  %s = rlx.reduction_region ins(%x : tensor<4x3xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iteration_shape = array<i64: 4, 3>, iterator_types = ["parallel", "reduction"], reduction = "reduce_sum"} -> tensor<3xf32> {
  ^bb0(%a: f32):
    rlx.yield %a : f32
  }
  func.return
}

// -----

// CHECK-LABEL: sym_name = "negative_extent"
// CHECK: Operation does not verify: 'rlx.reduction_region' iteration_shape [4, -3] has a negative extent
func.func @negative_extent(%x: tensor<4x3xf32>) {
  %s = rlx.reduction_region ins(%x : tensor<4x3xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iteration_shape = array<i64: 4, -3>, iterator_types = ["parallel", "reduction"], reduction = "reduce_sum"} -> tensor<4xf32> {
  ^bb0(%a: f32):
    rlx.yield %a : f32
  }
  func.return
}

// -----

// The map reads past the input: the iteration space is larger than x.
// CHECK-LABEL: sym_name = "space_past_input"
// CHECK: Operation does not verify: 'rlx.reduction_region' indexing map #0 reads axis 1 (size 3) at indices 0..4
func.func @space_past_input(%x: tensor<4x3xf32>) {
  %s = rlx.reduction_region ins(%x : tensor<4x3xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iteration_shape = array<i64: 4, 5>, iterator_types = ["parallel", "reduction"], reduction = "reduce_sum"} -> tensor<4xf32> {
  ^bb0(%a: f32):
    rlx.yield %a : f32
  }
  func.return
}

// -----

// CHECK-LABEL: sym_name = "yield_type"
// CHECK: Operation does not verify: 'rlx.reduction_region' must yield the result element types (f32)
func.func @yield_type(%x: tensor<4x3xf32>) {
  %s = rlx.reduction_region ins(%x : tensor<4x3xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iteration_shape = array<i64: 4, 3>, iterator_types = ["parallel", "reduction"], reduction = "reduce_sum"} -> tensor<4xf32> {
  ^bb0(%a: f32):
    %c = rlx.cast %a : (f32) -> f64
    rlx.yield %c : f64
  }
  func.return
}
