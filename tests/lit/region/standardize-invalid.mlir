// RUN: rlx-opt %s --split-input-file --verify-diagnostics --allow-unregistered-dialect | filecheck %s

// One case per rule of rlx.standardize_region (the rules it shares with
// rlx.normalize_region - epilogue arguments and ops - are tested in
// region/normalize-invalid.mlir).

// The kernel walks rows of the last axis.
// CHECK-LABEL: sym_name = "first_axis"
// CHECK: Operation does not verify: 'rlx.standardize_region' normalizes the last axis (1), got axis 0
func.func @first_axis(%x: tensor<4x8xf32>) {
  %r = rlx.standardize_region ins(%x : tensor<4x8xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], axis = 0 : i64, epsilon = 1.0e-05 : f64, centered = true} -> tensor<4x8xf32> {
  ^bb0(%a: f32):
    rlx.yield %a : f32
  } epilogue {
  ^bb0(%v: f32):
    rlx.yield %v : f32
  }
  func.return
}

// -----

// A negative ε could make σ² + ε negative and the result NaN.
// CHECK-LABEL: sym_name = "negative_epsilon"
// CHECK: Operation does not verify: 'rlx.standardize_region' epsilon must be >= 0, got -0.5
func.func @negative_epsilon(%x: tensor<4x8xf32>) {
  %r = rlx.standardize_region ins(%x : tensor<4x8xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], axis = 1 : i64, epsilon = -0.5 : f64, centered = true} -> tensor<4x8xf32> {
  ^bb0(%a: f32):
    rlx.yield %a : f32
  } epilogue {
  ^bb0(%v: f32):
    rlx.yield %v : f32
  }
  func.return
}

// -----

// A vector along the first axis is not one the row walk reads in order.
// CHECK-LABEL: sym_name = "column_vector"
// CHECK: Operation does not verify: 'rlx.standardize_region' input #1 must be read at the point itself (identity map over [4, 8]), be a rank-0 scalar or be a vector along the last axis (map (d0, ..., dk) -> (dk))
func.func @column_vector(%x: tensor<4x8xf32>, %g: tensor<4xf32>) {
  %r = rlx.standardize_region ins(%x, %g : tensor<4x8xf32>, tensor<4xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], axis = 1 : i64, epsilon = 1.0e-05 : f64, centered = true} -> tensor<4x8xf32> {
  ^bb0(%a: f32):
    rlx.yield %a : f32
  } epilogue {
  ^bb0(%v: f32, %w: f32):
    %m = rlx.mul %v, %w : (f32, f32) -> f32
    rlx.yield %m : f32
  }
  func.return
}

// -----

// Normalization is defined on floats.
// CHECK-LABEL: sym_name = "integer_result"
// CHECK: Operation does not verify: 'rlx.standardize_region' result must be a float tensor, got i32
func.func @integer_result(%x: tensor<4x8xi32>) {
  %r = rlx.standardize_region ins(%x : tensor<4x8xi32>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], axis = 1 : i64, epsilon = 1.0e-05 : f64, centered = true} -> tensor<4x8xi32> {
  ^bb0(%a: i32):
    rlx.yield %a : i32
  } epilogue {
  ^bb0(%v: i32):
    rlx.yield %v : i32
  }
  func.return
}

// -----

// A rank-0 result has no axis to normalize.
// CHECK-LABEL: sym_name = "scalar"
// CHECK: Operation does not verify: 'rlx.standardize_region' result must have an axis to normalize, got rank 0
func.func @scalar(%x: tensor<f32>) {
  %r = rlx.standardize_region ins(%x : tensor<f32>) {indexing_maps = [affine_map<() -> ()>], axis = 0 : i64, epsilon = 1.0e-05 : f64, centered = true} -> tensor<f32> {
  ^bb0(%a: f32):
    rlx.yield %a : f32
  } epilogue {
  ^bb0(%v: f32):
    rlx.yield %v : f32
  }
  func.return
}
