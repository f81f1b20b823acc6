// RUN: rlx-opt %s --split-input-file --verify-diagnostics --allow-unregistered-dialect | filecheck %s

// One case per rule of rlx.normalize_region (the rules it shares with the other
// region ops - block arguments, yield types, map bounds - are tested in
// elementwise/invalid.mlir and region/invalid.mlir).

// normalization names softmax or log_softmax.
// CHECK-LABEL: sym_name = "unknown_normalization"
// CHECK: Operation does not verify: 'rlx.normalize_region' normalization "sparsemax" is not one of softmax, log_softmax
func.func @unknown_normalization(%i0: tensor<4x8xf32>) {
  %r = rlx.normalize_region ins(%i0 : tensor<4x8xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], axis = 1 : i64, normalization = "sparsemax"} -> tensor<4x8xf32> {
  ^bb0(%a: f32):
    rlx.yield %a : f32
  } epilogue {
  ^bb0(%v: f32):
    rlx.yield %v : f32
  }
  func.return
}

// -----

// 
// CHECK-LABEL: sym_name = "axis_out_of_range"
// CHECK: Operation does not verify: 'rlx.normalize_region' axis 2 is out of range for rank 2
func.func @axis_out_of_range(%i0: tensor<4x8xf32>) {
  %r = rlx.normalize_region ins(%i0 : tensor<4x8xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], axis = 2 : i64, normalization = "softmax"} -> tensor<4x8xf32> {
  ^bb0(%a: f32):
    rlx.yield %a : f32
  } epilogue {
  ^bb0(%v: f32):
    rlx.yield %v : f32
  }
  func.return
}

// -----

// softmax is defined on floats.
// CHECK-LABEL: sym_name = "integer_result"
// CHECK: Operation does not verify: 'rlx.normalize_region' result must be a float tensor, got i32
func.func @integer_result(%i0: tensor<4x8xi32>) {
  %r = rlx.normalize_region ins(%i0 : tensor<4x8xi32>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], axis = 1 : i64, normalization = "softmax"} -> tensor<4x8xi32> {
  ^bb0(%a: i32):
    rlx.yield %a : i32
  } epilogue {
  ^bb0(%v: i32):
    rlx.yield %v : i32
  }
  func.return
}

// -----

// Every input is read at the point itself or is a rank-0 scalar.
// CHECK-LABEL: sym_name = "broadcast_input"
// CHECK: Operation does not verify: 'rlx.normalize_region' input #1 must be read at the point itself (identity map over [4, 8]) or be a rank-0 scalar
func.func @broadcast_input(%i0: tensor<4x8xf32>, %i1: tensor<8xf32>) {
  %r = rlx.normalize_region ins(%i0, %i1 : tensor<4x8xf32>, tensor<8xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], axis = 1 : i64, normalization = "softmax"} -> tensor<4x8xf32> {
  ^bb0(%a: f32, %b: f32):
    %s = rlx.add %a, %b : (f32, f32) -> f32
    rlx.yield %s : f32
  } epilogue {
  ^bb0(%v: f32):
    rlx.yield %v : f32
  }
  func.return
}

// -----

// The epilogue takes the normalized value, then the remaining inputs.
// CHECK-LABEL: sym_name = "epilogue_argument_types"
// CHECK: Operation does not verify: 'rlx.normalize_region' epilogue arguments must be the result element type, then the epilogue inputs' element types (f32)
func.func @epilogue_argument_types(%i0: tensor<4x8xf32>) {
  %r = rlx.normalize_region ins(%i0 : tensor<4x8xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], axis = 1 : i64, normalization = "softmax"} -> tensor<4x8xf32> {
  ^bb0(%a: f32):
    rlx.yield %a : f32
  } epilogue {
  ^bb0(%v: f64):
    rlx.yield %v : f64
  }
  func.return
}

// -----

// 
// CHECK-LABEL: sym_name = "epilogue_too_many_arguments"
// CHECK: Operation does not verify: 'rlx.normalize_region' epilogue takes the normalized value and some of the 1 inputs
func.func @epilogue_too_many_arguments(%i0: tensor<4x8xf32>) {
  %r = rlx.normalize_region ins(%i0 : tensor<4x8xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], axis = 1 : i64, normalization = "softmax"} -> tensor<4x8xf32> {
  ^bb0(%a: f32):
    rlx.yield %a : f32
  } epilogue {
  ^bb0(%v: f32, %w: f32, %z: f32):
    rlx.yield %v : f32
  }
  func.return
}

// -----

// 
// CHECK-LABEL: sym_name = "epilogue_yield"
// CHECK: Operation does not verify: 'rlx.normalize_region' epilogue must end with rlx.yield of one f32
func.func @epilogue_yield(%i0: tensor<4x8xf32>) {
  %r = rlx.normalize_region ins(%i0 : tensor<4x8xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], axis = 1 : i64, normalization = "softmax"} -> tensor<4x8xf32> {
  ^bb0(%a: f32):
    rlx.yield %a : f32
  } epilogue {
  ^bb0(%v: f32):
    rlx.yield %v, %v : f32, f32
  }
  func.return
}

// -----

// 
// CHECK-LABEL: sym_name = "epilogue_non_scalar_op"
// CHECK: Operation does not verify: 'rlx.normalize_region' epilogue may only hold scalar elementwise rlx ops, found 'test.op'
func.func @epilogue_non_scalar_op(%i0: tensor<4x8xf32>) {
  %r = rlx.normalize_region ins(%i0 : tensor<4x8xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], axis = 1 : i64, normalization = "softmax"} -> tensor<4x8xf32> {
  ^bb0(%a: f32):
    rlx.yield %a : f32
  } epilogue {
  ^bb0(%v: f32):
    %z = "test.op"() : () -> f32
    rlx.yield %v : f32
  }
  func.return
}
