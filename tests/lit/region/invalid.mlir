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

// -----

// rlx.contraction_region: the product must exist and match the result.
// CHECK-LABEL: sym_name = "contraction_k_mismatch"
// CHECK: Operation does not verify: 'rlx.contraction_region' contracting dimensions differ: lhs K = 3, rhs K = 4
func.func @contraction_k_mismatch(%x: tensor<2x3xf32>, %w: tensor<4x5xf32>) {
  %y = rlx.contraction_region ins(%x, %w : tensor<2x3xf32>, tensor<4x5xf32>) {indexing_maps = []} -> tensor<2x5xf32> {
  ^bb0(%a: f32):
    rlx.yield %a : f32
  }
  func.return
}

// -----

// CHECK-LABEL: sym_name = "contraction_result_shape"
// CHECK: Operation does not verify: 'rlx.contraction_region' result shape [5, 2] must be the product's [2, 5]
func.func @contraction_result_shape(%x: tensor<2x3xf32>, %w: tensor<3x5xf32>) {
  %y = rlx.contraction_region ins(%x, %w : tensor<2x3xf32>, tensor<3x5xf32>) {indexing_maps = []} -> tensor<5x2xf32> {
  ^bb0(%a: f32):
    rlx.yield %a : f32
  }
  func.return
}

// -----

// An rhs in panels, as on rlx.matmul: [ceil(N/W), K, W], B itself.
// CHECK-LABEL: sym_name = "contraction_panels_miscounted"
// CHECK: Operation does not verify: 'rlx.contraction_region' rhs_panels = 8 needs the rhs as [1, K, 8] for N = 5, got [2, 3, 8]
func.func @contraction_panels_miscounted(%x: tensor<2x3xf32>, %p: tensor<2x3x8xf32>) {
  %y = rlx.contraction_region ins(%x, %p : tensor<2x3xf32>, tensor<2x3x8xf32>) {indexing_maps = [], rhs_panels = 8 : i64} -> tensor<2x5xf32> {
  ^bb0(%a: f32):
    rlx.yield %a : f32
  }
  func.return
}

// -----

// CHECK-LABEL: sym_name = "contraction_panels_transposed"
// CHECK: Operation does not verify: 'rlx.contraction_region' an rhs in panels (rhs_panels) holds B itself: transpose_rhs must be false
func.func @contraction_panels_transposed(%x: tensor<2x3xf32>, %p: tensor<1x3x8xf32>) {
  %y = rlx.contraction_region ins(%x, %p : tensor<2x3xf32>, tensor<1x3x8xf32>) {indexing_maps = [], transpose_rhs = true, rhs_panels = 8 : i64} -> tensor<2x5xf32> {
  ^bb0(%a: f32):
    rlx.yield %a : f32
  }
  func.return
}

// -----

// CHECK-LABEL: sym_name = "contraction_mixed_types"
// CHECK: Operation does not verify: 'rlx.contraction_region' lhs and rhs must share an element type
func.func @contraction_mixed_types(%x: tensor<2x3xf32>, %w: tensor<3x5xf64>) {
  %y = rlx.contraction_region ins(%x, %w : tensor<2x3xf32>, tensor<3x5xf64>) {indexing_maps = []} -> tensor<2x5xf32> {
  ^bb0(%a: f32):
    rlx.yield %a : f32
  }
  func.return
}

// -----

// The body takes the product's element, then one per epilogue input.
// CHECK-LABEL: sym_name = "contraction_body_arguments"
// CHECK: Operation does not verify: 'rlx.contraction_region' block arguments must be the input element types (f32, f32)
func.func @contraction_body_arguments(%x: tensor<2x3xf32>, %w: tensor<3x5xf32>, %b: tensor<5xf32>) {
  %y = rlx.contraction_region ins(%x, %w, %b : tensor<2x3xf32>, tensor<3x5xf32>, tensor<5xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d1)>]} -> tensor<2x5xf32> {
  ^bb0(%a: f32):
    rlx.yield %a : f32
  }
  func.return
}

// -----

// CHECK-LABEL: sym_name = "contraction_map_count"
// CHECK: Operation does not verify: 'rlx.contraction_region' has 1 inputs but 0 indexing maps
func.func @contraction_map_count(%x: tensor<2x3xf32>, %w: tensor<3x5xf32>, %b: tensor<5xf32>) {
  %y = rlx.contraction_region ins(%x, %w, %b : tensor<2x3xf32>, tensor<3x5xf32>, tensor<5xf32>) {indexing_maps = []} -> tensor<2x5xf32> {
  ^bb0(%a: f32, %c: f32):
    rlx.yield %a : f32
  }
  func.return
}

// -----

// rlx.conv_region: an epilogue input reads the spatial axes all broadcast or all as the result.
// CHECK-LABEL: sym_name = "conv_region_partial_plane"
// CHECK: Operation does not verify: 'rlx.conv_region' indexing map #0 (d0, d1, d2, d3) -> (d0, d1, d2, 0) must read the spatial axes all broadcast or all as the result does
func.func @conv_region_partial_plane(%x: tensor<1x8x6x6xf32>, %w: tensor<16x8x3x3xf32>, %r: tensor<1x16x4x1xf32>) {
  %y = rlx.conv_region ins(%x, %w, %r : tensor<1x8x6x6xf32>, tensor<16x8x3x3xf32>, tensor<1x16x4x1xf32>) {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>], strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_before = array<i64: 0, 0>, pad_after = array<i64: 0, 0>, groups = 1 : i64} -> tensor<1x16x4x4xf32> {
  ^bb0(%acc: f32, %res: f32):
    %s = rlx.add %acc, %res : (f32, f32) -> f32
    rlx.yield %s : f32
  }
  func.return
}

// -----

// rlx.conv_region: the conv's rules (here groups) hold for it too.
// CHECK-LABEL: sym_name = "conv_region_groups"
// CHECK: Operation does not verify: 'rlx.conv_region' groups 3 does not divide the 8 input channels
func.func @conv_region_groups(%x: tensor<1x8x6x6xf32>, %w: tensor<15x8x3x3xf32>) {
  %y = rlx.conv_region ins(%x, %w : tensor<1x8x6x6xf32>, tensor<15x8x3x3xf32>) {indexing_maps = [], strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_before = array<i64: 0, 0>, pad_after = array<i64: 0, 0>, groups = 3 : i64} -> tensor<1x15x4x4xf32> {
  ^bb0(%acc: f32):
    rlx.yield %acc : f32
  }
  func.return
}

// -----

// rlx.conv_region: its result keeps the conv's element type (the kernel finishes it in place).
// CHECK-LABEL: sym_name = "conv_region_result_type"
// CHECK: Operation does not verify: 'rlx.conv_region' result element type f64 must equal f32
func.func @conv_region_result_type(%x: tensor<1x8x6x6xf32>, %w: tensor<16x8x3x3xf32>) {
  %y = rlx.conv_region ins(%x, %w : tensor<1x8x6x6xf32>, tensor<16x8x3x3xf32>) {indexing_maps = [], strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_before = array<i64: 0, 0>, pad_after = array<i64: 0, 0>, groups = 1 : i64} -> tensor<1x16x4x4xf64> {
  ^bb0(%acc: f32):
    %c = rlx.cast %acc : (f32) -> f64
    rlx.yield %c : f64
  }
  func.return
}

// -----

// rlx.conv_region: input and weight come first.
// CHECK-LABEL: sym_name = "conv_region_no_weight"
// CHECK: Operation does not verify: 'rlx.conv_region' takes input, weight and epilogue inputs and has one result
func.func @conv_region_no_weight(%x: tensor<1x8x6x6xf32>) {
  %y = rlx.conv_region ins(%x : tensor<1x8x6x6xf32>) {indexing_maps = [], strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_before = array<i64: 0, 0>, pad_after = array<i64: 0, 0>, groups = 1 : i64} -> tensor<1x16x4x4xf32> {
  ^bb0(%acc: f32):
    rlx.yield %acc : f32
  }
  func.return
}
