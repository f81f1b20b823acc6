// RUN: rlx-opt %s --split-input-file --verify-diagnostics | filecheck %s

// One case per verifier rule of rlx.matmul. xDSL's --verify-diagnostics
// prints each diagnostic with the offending op annotated and exits 0; each
// CHECK pins the exact message to the case it comes from.

// The contracting dimensions must agree; the message names both.
// CHECK-LABEL: sym_name = "k_mismatch"
// CHECK: Operation does not verify: 'rlx.matmul' contracting dimensions differ: lhs K = 4, rhs K = 5
func.func @k_mismatch(%x: tensor<3x4xf32>, %w: tensor<5x6xf32>) {
  %y = rlx.matmul %x, %w : (tensor<3x4xf32>, tensor<5x6xf32>) -> tensor<3x6xf32>
  func.return
}

// -----

// K is counted after the stored transpose: lhs [4, 3] transposed has K = 4.
// CHECK-LABEL: sym_name = "k_mismatch_after_transpose"
// CHECK: Operation does not verify: 'rlx.matmul' contracting dimensions differ: lhs K = 4, rhs K = 3
func.func @k_mismatch_after_transpose(%x: tensor<4x3xf32>, %w: tensor<3x6xf32>) {
  %y = rlx.matmul %x, %w {transpose_lhs = true} : (tensor<4x3xf32>, tensor<3x6xf32>) -> tensor<3x6xf32>
  func.return
}

// -----

// The batch axes (all but the last two) broadcast as in NumPy.
// CHECK-LABEL: sym_name = "batch_does_not_broadcast"
// CHECK: Operation does not verify: 'rlx.matmul' batch dimensions [2] and [3] do not broadcast
func.func @batch_does_not_broadcast(%x: tensor<2x3x4xf32>, %w: tensor<3x4x6xf32>) {
  %y = rlx.matmul %x, %w : (tensor<2x3x4xf32>, tensor<3x4x6xf32>) -> tensor<2x3x6xf32>
  func.return
}

// -----

// Only the types with a kernel: no i8, bool or unsigned matmul.
// CHECK-LABEL: sym_name = "element_type_not_allowed"
// CHECK: Operation does not verify: 'rlx.matmul' element type i8 is not one of f16, bf16, f32, f64, complex<f32>, complex<f64>, i32, i64
func.func @element_type_not_allowed(%x: tensor<3x4xi8>, %w: tensor<4x6xi8>) {
  %y = rlx.matmul %x, %w : (tensor<3x4xi8>, tensor<4x6xi8>) -> tensor<3x6xi8>
  func.return
}

// -----

// Operands have one element type (no implicit promotion) ...
// CHECK-LABEL: sym_name = "mixed_operand_types"
// CHECK: Operation does not verify: 'rlx.matmul' rhs element type f64 must equal f32
func.func @mixed_operand_types(%x: tensor<3x4xf32>, %w: tensor<4x6xf64>) {
  %y = rlx.matmul %x, %w : (tensor<3x4xf32>, tensor<4x6xf64>) -> tensor<3x6xf32>
  func.return
}

// -----

// ... and so does the result.
// CHECK-LABEL: sym_name = "mixed_result_type"
// CHECK: Operation does not verify: 'rlx.matmul' result element type f64 must equal f32
func.func @mixed_result_type(%x: tensor<3x4xf32>, %w: tensor<4x6xf32>) {
  %y = rlx.matmul %x, %w : (tensor<3x4xf32>, tensor<4x6xf32>) -> tensor<3x6xf64>
  func.return
}

// -----

// A 1-D operand is a row or column vector: it has no stored transpose.
// CHECK-LABEL: sym_name = "transposed_vector"
// CHECK: Operation does not verify: 'rlx.matmul' a transposed operand must have rank >= 2
func.func @transposed_vector(%x: tensor<4xf32>, %w: tensor<4x6xf32>) {
  %y = rlx.matmul %x, %w {transpose_lhs = true} : (tensor<4xf32>, tensor<4x6xf32>) -> tensor<6xf32>
  func.return
}

// -----

// A scalar (rank-0) operand is not a matrix (np.matmul rejects it too).
// CHECK-LABEL: sym_name = "scalar_operand"
// CHECK: Operation does not verify: 'rlx.matmul' operands must have rank >= 1
func.func @scalar_operand(%x: tensor<f32>, %w: tensor<4xf32>) {
  %y = rlx.matmul %x, %w : (tensor<f32>, tensor<4xf32>) -> tensor<f32>
  func.return
}

// -----

// The result shape is np.matmul's: a 1-D rhs drops its promoted axis, so
// [3, 4] @ [4] is [3], not [3, 1].
// CHECK-LABEL: sym_name = "wrong_result_shape"
// CHECK: Operation does not verify: 'rlx.matmul' result shape [3, 1] does not match the expected shape [3]
func.func @wrong_result_shape(%x: tensor<3x4xf32>, %w: tensor<4xf32>) {
  %y = rlx.matmul %x, %w : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x1xf32>
  func.return
}

// -----

// The result shape includes the broadcast batch: [2, 1, 3, 4] @ [5, 4, 6] is [2, 5, 3, 6].
// CHECK-LABEL: sym_name = "wrong_batch_shape"
// CHECK: Operation does not verify: 'rlx.matmul' result shape [2, 3, 6] does not match the expected shape [2, 5, 3, 6]
func.func @wrong_batch_shape(%x: tensor<2x1x3x4xf32>, %w: tensor<5x4x6xf32>) {
  %y = rlx.matmul %x, %w : (tensor<2x1x3x4xf32>, tensor<5x4x6xf32>) -> tensor<2x3x6xf32>
  func.return
}

// -----

// An rhs in panels (rhs_panels = W) is [ceil(N/W), K, W]: N = 20 needs 2 panels of 16.
// CHECK-LABEL: sym_name = "panels_miscounted"
// CHECK: Operation does not verify: 'rlx.matmul' rhs_panels = 16 needs the rhs as [2, K, 16] for N = 20, got [1, 4, 16]
func.func @panels_miscounted(%x: tensor<3x4xf32>, %p: tensor<1x4x16xf32>) {
  %y = rlx.matmul %x, %p {rhs_panels = 16 : i64} : (tensor<3x4xf32>, tensor<1x4x16xf32>) -> tensor<3x20xf32>
  func.return
}

// -----

// The panels' K is the contracting dimension.
// CHECK-LABEL: sym_name = "panels_k_mismatch"
// CHECK: Operation does not verify: 'rlx.matmul' contracting dimensions differ: lhs K = 4, rhs K = 5
func.func @panels_k_mismatch(%x: tensor<3x4xf32>, %p: tensor<2x5x16xf32>) {
  %y = rlx.matmul %x, %p {rhs_panels = 16 : i64} : (tensor<3x4xf32>, tensor<2x5x16xf32>) -> tensor<3x20xf32>
  func.return
}

// -----

// Panels hold B itself: a transposed rhs is stored untransposed in them.
// CHECK-LABEL: sym_name = "panels_transposed"
// CHECK: Operation does not verify: 'rlx.matmul' an rhs in panels (rhs_panels) holds B itself: transpose_rhs must be false
func.func @panels_transposed(%x: tensor<3x4xf32>, %p: tensor<2x4x16xf32>) {
  %y = rlx.matmul %x, %p {transpose_rhs = true, rhs_panels = 16 : i64} : (tensor<3x4xf32>, tensor<2x4x16xf32>) -> tensor<3x20xf32>
  func.return
}

// -----

// A panel has at least one column.
// CHECK-LABEL: sym_name = "panels_empty"
// CHECK: Operation does not verify: 'rlx.matmul' rhs_panels must be positive, got 0
func.func @panels_empty(%x: tensor<3x4xf32>, %p: tensor<2x4x16xf32>) {
  %y = rlx.matmul %x, %p {rhs_panels = 0 : i64} : (tensor<3x4xf32>, tensor<2x4x16xf32>) -> tensor<3x20xf32>
  func.return
}

// -----

// Only the f32 and f64 register tiles read panels.
// CHECK-LABEL: sym_name = "panels_f16"
// CHECK: Operation does not verify: 'rlx.matmul' rhs_panels needs an element type of f32, f64, got f16
func.func @panels_f16(%x: tensor<3x4xf16>, %p: tensor<2x4x16xf16>) {
  %y = rlx.matmul %x, %p {rhs_panels = 16 : i64} : (tensor<3x4xf16>, tensor<2x4x16xf16>) -> tensor<3x20xf16>
  func.return
}
