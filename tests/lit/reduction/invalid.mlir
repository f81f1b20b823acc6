// RUN: rlx-opt %s --split-input-file --verify-diagnostics | filecheck %s

// One case per verifier rule of the reductions (reduce_*, argmax/argmin,
// softmax/log_softmax). xDSL's --verify-diagnostics prints each diagnostic
// and exits 0; each CHECK pins the exact message to the case it comes from.

// An axes entry outside [-rank, rank).
// CHECK-LABEL: sym_name = "reduce_axis_out_of_range"
// CHECK: Operation does not verify: 'rlx.reduce_sum' axes entry 2 is out of range for rank 2
func.func @reduce_axis_out_of_range(%x: tensor<4x3xf32>) {
  %s = rlx.reduce_sum %x {axes = array<i64: 2>, keepdims = false} : (tensor<4x3xf32>) -> tensor<4xf32>
  func.return
}

// -----

// axes may not name an axis twice, negative spellings included.
// CHECK-LABEL: sym_name = "reduce_repeated_axes"
// CHECK: Operation does not verify: 'rlx.reduce_sum' axes [1, -1] repeat an axis
func.func @reduce_repeated_axes(%x: tensor<4x3xf32>) {
  %s = rlx.reduce_sum %x {axes = array<i64: 1, -1>, keepdims = false} : (tensor<4x3xf32>) -> tensor<4xf32>
  func.return
}

// -----

// axes is an array of i64.
// CHECK-LABEL: sym_name = "reduce_axes_i32"
// CHECK: Operation does not verify: 'rlx.reduce_sum' axes must be array<i64: ...>, got array<i32: 1>
func.func @reduce_axes_i32(%x: tensor<4x3xf32>) {
  %s = rlx.reduce_sum %x {axes = array<i32: 1>} : (tensor<4x3xf32>) -> tensor<4xf32>
  func.return
}

// -----

// max/min have no identity: reducing a zero-size axis is an error (sum and prod are not).
// CHECK-LABEL: sym_name = "reduce_max_zero_size_axis"
// CHECK: Operation does not verify: 'rlx.reduce_max' cannot reduce the zero-size axis 1: it has no identity
func.func @reduce_max_zero_size_axis(%x: tensor<4x0xf32>) {
  %s = rlx.reduce_max %x {axes = array<i64: 1>, keepdims = false} : (tensor<4x0xf32>) -> tensor<4xf32>
  func.return
}

// -----

// keepdims keeps the reduced axis with extent 1.
// CHECK-LABEL: sym_name = "reduce_keepdims_shape"
// CHECK: Operation does not verify: 'rlx.reduce_sum' result shape [4] does not match the expected shape [4, 1]
func.func @reduce_keepdims_shape(%x: tensor<4x3xf32>) {
  %s = rlx.reduce_sum %x {axes = array<i64: 1>, keepdims = true} : (tensor<4x3xf32>) -> tensor<4xf32>
  func.return
}

// -----

// The result has the operand's element type (f16 accumulates in f32 but stays f16).
// CHECK-LABEL: sym_name = "reduce_result_type"
// CHECK: Operation does not verify: 'rlx.reduce_sum' result element type f16 must equal f32
func.func @reduce_result_type(%x: tensor<4x3xf32>) {
  %s = rlx.reduce_sum %x {axes = array<i64: 1>} : (tensor<4x3xf32>) -> tensor<4xf16>
  func.return
}

// -----

// The mean is defined on floats and complex only.
// CHECK-LABEL: sym_name = "reduce_mean_of_ints"
// CHECK: Operation does not verify: 'rlx.reduce_mean' operand must be complex or float, got i32
func.func @reduce_mean_of_ints(%x: tensor<4x3xi32>) {
  %s = rlx.reduce_mean %x {axes = array<i64: 1>} : (tensor<4x3xi32>) -> tensor<4xi32>
  func.return
}

// -----

// Sums and products take numbers, not i1.
// CHECK-LABEL: sym_name = "reduce_sum_of_bool"
// CHECK: Operation does not verify: 'rlx.reduce_sum' operand must be complex or float or int or uint, got i1
func.func @reduce_sum_of_bool(%x: tensor<4x3xi1>) {
  %s = rlx.reduce_sum %x {axes = array<i64: 1>} : (tensor<4x3xi1>) -> tensor<4xi1>
  func.return
}

// -----

// Complex numbers have no order: no max/min.
// CHECK-LABEL: sym_name = "reduce_max_of_complex"
// CHECK: Operation does not verify: 'rlx.reduce_max' operand must be float or int or uint, got complex<f32>
func.func @reduce_max_of_complex(%x: tensor<4x3xcomplex<f32>>) {
  %s = rlx.reduce_max %x {axes = array<i64: 1>} : (tensor<4x3xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  func.return
}

// -----

// argmax/argmin take one axis in [-rank, rank).
// CHECK-LABEL: sym_name = "argmax_axis_out_of_range"
// CHECK: Operation does not verify: 'rlx.argmax' axis 2 is out of range for rank 2
func.func @argmax_axis_out_of_range(%x: tensor<4x3xf32>) {
  %s = rlx.argmax %x {axis = 2 : i64} : (tensor<4x3xf32>) -> tensor<4xi64>
  func.return
}

// -----

// The index of the extreme of nothing does not exist.
// CHECK-LABEL: sym_name = "argmin_zero_size_axis"
// CHECK: Operation does not verify: 'rlx.argmin' cannot reduce the zero-size axis 0: it has no identity
func.func @argmin_zero_size_axis(%x: tensor<0x3xf32>) {
  %s = rlx.argmin %x {axis = 0 : i64} : (tensor<0x3xf32>) -> tensor<3xi64>
  func.return
}

// -----

// Indices are i64.
// CHECK-LABEL: sym_name = "argmax_result_i32"
// CHECK: Operation does not verify: 'rlx.argmax' result must have element type i64, got i32
func.func @argmax_result_i32(%x: tensor<4x3xf32>) {
  %s = rlx.argmax %x {axis = 1 : i64} : (tensor<4x3xf32>) -> tensor<4xi32>
  func.return
}

// -----

// keepdims keeps the axis with extent 1.
// CHECK-LABEL: sym_name = "argmax_keepdims_shape"
// CHECK: Operation does not verify: 'rlx.argmax' result shape [4] does not match the expected shape [4, 1]
func.func @argmax_keepdims_shape(%x: tensor<4x3xf32>) {
  %s = rlx.argmax %x {axis = 1 : i64, keepdims = true} : (tensor<4x3xf32>) -> tensor<4xi64>
  func.return
}

// -----

// softmax and log_softmax are defined on floats only.
// CHECK-LABEL: sym_name = "softmax_of_ints"
// CHECK: Operation does not verify: 'rlx.softmax' operand must be float, got i32
func.func @softmax_of_ints(%x: tensor<4x3xi32>) {
  %s = rlx.softmax %x {axis = 1 : i64} : (tensor<4x3xi32>) -> tensor<4x3xi32>
  func.return
}

// -----

// The softmax axis is in [-rank, rank).
// CHECK-LABEL: sym_name = "softmax_axis_out_of_range"
// CHECK: Operation does not verify: 'rlx.softmax' axis -3 is out of range for rank 2
func.func @softmax_axis_out_of_range(%x: tensor<4x3xf32>) {
  %s = rlx.softmax %x {axis = -3 : i64} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

// The result has the operand's shape...
// CHECK-LABEL: sym_name = "log_softmax_result_shape"
// CHECK: Operation does not verify: 'rlx.log_softmax' result shape [3, 4] does not match the expected shape [4, 3]
func.func @log_softmax_result_shape(%x: tensor<4x3xf32>) {
  %s = rlx.log_softmax %x {axis = 1 : i64} : (tensor<4x3xf32>) -> tensor<3x4xf32>
  func.return
}

// -----

// ...and its element type.
// CHECK-LABEL: sym_name = "softmax_result_type"
// CHECK: Operation does not verify: 'rlx.softmax' result element type f16 must equal f32
func.func @softmax_result_type(%x: tensor<4x3xf32>) {
  %s = rlx.softmax %x {axis = 1 : i64} : (tensor<4x3xf32>) -> tensor<4x3xf16>
  func.return
}
