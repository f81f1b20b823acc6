// RUN: rlx-opt %s --split-input-file --verify-diagnostics | filecheck %s

// One case per verifier rule of the data-movement ops (and the activation
// gradients). xDSL's --verify-diagnostics prints each diagnostic with the
// offending op annotated and exits 0; each CHECK pins the exact message to
// the case it comes from.

// ===-------------------------------------------------------------------=== //
// transpose
// ===-------------------------------------------------------------------=== //

// The result shape is the input shape permuted; the message shows both.
// CHECK-LABEL: sym_name = "transpose_result_shape"
// CHECK: Operation does not verify: 'rlx.transpose' result shape [3, 4] does not match the expected shape [4, 3]
func.func @transpose_result_shape(%x: tensor<3x4xf32>) {
  %t = rlx.transpose %x {perm = array<i64: 1, 0>} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  func.return
}

// -----

// perm must list every axis exactly once.
// CHECK-LABEL: sym_name = "transpose_not_a_permutation"
// CHECK: Operation does not verify: 'rlx.transpose' perm [0, 0] is not a permutation of 0..1
func.func @transpose_not_a_permutation(%x: tensor<3x4xf32>) {
  %t = rlx.transpose %x {perm = array<i64: 0, 0>} : (tensor<3x4xf32>) -> tensor<3x3xf32>
  func.return
}

// -----

// perm entries outside 0..rank-1 are not a permutation either.
// CHECK-LABEL: sym_name = "transpose_perm_out_of_range"
// CHECK: Operation does not verify: 'rlx.transpose' perm [2, 0] is not a permutation of 0..1
func.func @transpose_perm_out_of_range(%x: tensor<3x4xf32>) {
  %t = rlx.transpose %x {perm = array<i64: 2, 0>} : (tensor<3x4xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

// perm has one entry per input axis.
// CHECK-LABEL: sym_name = "transpose_perm_length"
// CHECK: Operation does not verify: 'rlx.transpose' perm has 3 entries, expected 2 (one per axis)
func.func @transpose_perm_length(%x: tensor<3x4xf32>) {
  %t = rlx.transpose %x {perm = array<i64: 1, 0, 2>} : (tensor<3x4xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

// Array properties hold i64 entries.
// CHECK-LABEL: sym_name = "transpose_perm_i32"
// CHECK: Operation does not verify: 'rlx.transpose' perm must be array<i64: ...>, got array<i32: 1, 0>
func.func @transpose_perm_i32(%x: tensor<3x4xf32>) {
  %t = rlx.transpose %x {perm = array<i32: 1, 0>} : (tensor<3x4xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

// A float array is not an i64 array either.
// CHECK-LABEL: sym_name = "transpose_perm_f32"
// CHECK: Operation does not verify: 'rlx.transpose' perm must be array<i64: ...>, got array<f32: 1.000000e+00, 0.000000e+00>
func.func @transpose_perm_f32(%x: tensor<3x4xf32>) {
  %t = rlx.transpose %x {perm = array<f32: 1.0, 0.0>} : (tensor<3x4xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

// A negative perm entry does not count from the end.
// CHECK-LABEL: sym_name = "transpose_perm_negative"
// CHECK: Operation does not verify: 'rlx.transpose' perm [-1, 0] is not a permutation of 0..1
func.func @transpose_perm_negative(%x: tensor<3x4xf32>) {
  %t = rlx.transpose %x {perm = array<i64: -1, 0>} : (tensor<3x4xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

// INT64_MAX is out of range too (the check does not overflow).
// CHECK-LABEL: sym_name = "transpose_perm_int64_max"
// CHECK: Operation does not verify: 'rlx.transpose' perm [9223372036854775807, 0] is not a permutation of 0..1
func.func @transpose_perm_int64_max(%x: tensor<3x4xf32>) {
  %t = rlx.transpose %x {perm = array<i64: 9223372036854775807, 0>} : (tensor<3x4xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

// perm has no default.
// CHECK-LABEL: sym_name = "transpose_missing_perm"
// CHECK: Operation does not verify: property 'perm' expected in operation 'rlx.transpose'
func.func @transpose_missing_perm(%x: tensor<3x4xf32>) {
  %t = rlx.transpose %x : (tensor<3x4xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

// Movement ops keep the element type.
// CHECK-LABEL: sym_name = "transpose_element_type"
// CHECK: Operation does not verify: 'rlx.transpose' result element type f64 must equal f32
func.func @transpose_element_type(%x: tensor<3x4xf32>) {
  %t = rlx.transpose %x {perm = array<i64: 1, 0>} : (tensor<3x4xf32>) -> tensor<4x3xf64>
  func.return
}

// -----

// Operands need static shapes.
// CHECK-LABEL: sym_name = "transpose_dynamic_shape"
// CHECK: Operation does not verify: 'rlx.transpose' operand #0 has a dynamic shape tensor<?x4xf32>; rlx needs static shapes
func.func @transpose_dynamic_shape(%x: tensor<?x4xf32>) {
  %t = rlx.transpose %x {perm = array<i64: 1, 0>} : (tensor<?x4xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

// ===-------------------------------------------------------------------=== //
// slice
// ===-------------------------------------------------------------------=== //

// starts has one entry per input axis.
// CHECK-LABEL: sym_name = "slice_starts_length"
// CHECK: Operation does not verify: 'rlx.slice' starts has 1 entries, expected 2 (one per axis)
func.func @slice_starts_length(%x: tensor<4x6xf32>) {
  %s = rlx.slice %x {starts = array<i64: 0>, steps = array<i64: 1, 1>} : (tensor<4x6xf32>) -> tensor<2x2xf32>
  func.return
}

// -----

// steps has one entry per input axis.
// CHECK-LABEL: sym_name = "slice_steps_length"
// CHECK: Operation does not verify: 'rlx.slice' steps has 3 entries, expected 2 (one per axis)
func.func @slice_steps_length(%x: tensor<4x6xf32>) {
  %s = rlx.slice %x {starts = array<i64: 0, 0>, steps = array<i64: 1, 1, 1>} : (tensor<4x6xf32>) -> tensor<2x2xf32>
  func.return
}

// -----

// A step of 0 would read one element forever.
// CHECK-LABEL: sym_name = "slice_zero_step"
// CHECK: Operation does not verify: 'rlx.slice' step on axis 1 must not be 0
func.func @slice_zero_step(%x: tensor<4x6xf32>) {
  %s = rlx.slice %x {starts = array<i64: 0, 0>, steps = array<i64: 1, 0>} : (tensor<4x6xf32>) -> tensor<2x2xf32>
  func.return
}

// -----

// The result type gives the lengths, and its rank is the input's (this is
// slice's form of the result-shape rule).
// CHECK-LABEL: sym_name = "slice_result_rank"
// CHECK: Operation does not verify: 'rlx.slice' result rank 1 must equal the input rank 2
func.func @slice_result_rank(%x: tensor<4x6xf32>) {
  %s = rlx.slice %x {starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : (tensor<4x6xf32>) -> tensor<2xf32>
  func.return
}

// -----

// The last index read (start + step * (length - 1)) is past the end.
// CHECK-LABEL: sym_name = "slice_past_end"
// CHECK: Operation does not verify: 'rlx.slice' axis 1 reads indices 2..8 (step 2) of a dimension of size 6
func.func @slice_past_end(%x: tensor<4x6xf32>) {
  %s = rlx.slice %x {starts = array<i64: 0, 2>, steps = array<i64: 1, 2>} : (tensor<4x6xf32>) -> tensor<4x4xf32>
  func.return
}

// -----

// A negative step walks below 0; a negative start counts from the end (-2 is 2).
// CHECK-LABEL: sym_name = "slice_negative_step_below_zero"
// CHECK: Operation does not verify: 'rlx.slice' axis 0 reads indices 2..-1 (step -1) of a dimension of size 4
func.func @slice_negative_step_below_zero(%x: tensor<4x6xf32>) {
  %s = rlx.slice %x {starts = array<i64: -2, 0>, steps = array<i64: -1, 1>} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  func.return
}

// -----

// A start that is out of range even after counting from the end.
// CHECK-LABEL: sym_name = "slice_start_out_of_range"
// CHECK: Operation does not verify: 'rlx.slice' axis 0 reads indices 4..4 (step 1) of a dimension of size 4
func.func @slice_start_out_of_range(%x: tensor<4x6xf32>) {
  %s = rlx.slice %x {starts = array<i64: 4, 0>, steps = array<i64: 1, 1>} : (tensor<4x6xf32>) -> tensor<1x6xf32>
  func.return
}

// -----

// A negative start counts from the end once; further out it is out of range.
// CHECK-LABEL: sym_name = "slice_start_far_negative"
// CHECK: Operation does not verify: 'rlx.slice' axis 0 reads indices -97..-97 (step 1) of a dimension of size 3
func.func @slice_start_far_negative(%x: tensor<3x4xf32>) {
  %s = rlx.slice %x {starts = array<i64: -100, 0>, steps = array<i64: 1, 1>} : (tensor<3x4xf32>) -> tensor<1x4xf32>
  func.return
}

// -----

// Extreme steps are range-checked without overflow.
// CHECK-LABEL: sym_name = "slice_step_int64_max"
// CHECK: Operation does not verify: 'rlx.slice' axis 0 reads indices 0..9223372036854775807 (step 9223372036854775807) of a dimension of size 3
func.func @slice_step_int64_max(%x: tensor<3x4xf32>) {
  %s = rlx.slice %x {starts = array<i64: 0, 0>, steps = array<i64: 9223372036854775807, 1>} : (tensor<3x4xf32>) -> tensor<2x4xf32>
  func.return
}

// -----

// The same for the most negative step.
// CHECK-LABEL: sym_name = "slice_step_int64_min"
// CHECK: Operation does not verify: 'rlx.slice' axis 0 reads indices 2..-9223372036854775806 (step -9223372036854775808) of a dimension of size 3
func.func @slice_step_int64_min(%x: tensor<3x4xf32>) {
  %s = rlx.slice %x {starts = array<i64: 2, 0>, steps = array<i64: -9223372036854775808, 1>} : (tensor<3x4xf32>) -> tensor<2x4xf32>
  func.return
}

// -----

// CHECK-LABEL: sym_name = "slice_element_type"
// CHECK: Operation does not verify: 'rlx.slice' result element type i32 must equal f32
func.func @slice_element_type(%x: tensor<4x6xf32>) {
  %s = rlx.slice %x {starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : (tensor<4x6xf32>) -> tensor<2x2xi32>
  func.return
}

// -----

// ===-------------------------------------------------------------------=== //
// narrow
// ===-------------------------------------------------------------------=== //

// CHECK-LABEL: sym_name = "narrow_result_shape"
// CHECK: Operation does not verify: 'rlx.narrow' result shape [4, 3] does not match the expected shape [4, 2]
func.func @narrow_result_shape(%x: tensor<4x6xf32>) {
  %n = rlx.narrow %x {axis = 1 : i64, start = 1 : i64, length = 2 : i64} : (tensor<4x6xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

// start + length runs past the axis.
// CHECK-LABEL: sym_name = "narrow_past_end"
// CHECK: Operation does not verify: 'rlx.narrow' start 5 and length 2 do not fit axis 1 of size 6
func.func @narrow_past_end(%x: tensor<4x6xf32>) {
  %n = rlx.narrow %x {axis = -1 : i64, start = 5 : i64, length = 2 : i64} : (tensor<4x6xf32>) -> tensor<4x2xf32>
  func.return
}

// -----

// narrow's start does not count from the end.
// CHECK-LABEL: sym_name = "narrow_negative_start"
// CHECK: Operation does not verify: 'rlx.narrow' start -1 and length 1 do not fit axis 0 of size 4
func.func @narrow_negative_start(%x: tensor<4x6xf32>) {
  %n = rlx.narrow %x {axis = 0 : i64, start = -1 : i64, length = 1 : i64} : (tensor<4x6xf32>) -> tensor<1x6xf32>
  func.return
}

// -----

// CHECK-LABEL: sym_name = "narrow_negative_length"
// CHECK: Operation does not verify: 'rlx.narrow' start 0 and length -1 do not fit axis 0 of size 4
func.func @narrow_negative_length(%x: tensor<4x6xf32>) {
  %n = rlx.narrow %x {axis = 0 : i64, start = 0 : i64, length = -1 : i64} : (tensor<4x6xf32>) -> tensor<1x6xf32>
  func.return
}

// -----

// The axis is NumPy-style, in [-rank, rank).
// CHECK-LABEL: sym_name = "narrow_axis_out_of_range"
// CHECK: Operation does not verify: 'rlx.narrow' axis 2 is out of range for rank 2
func.func @narrow_axis_out_of_range(%x: tensor<4x6xf32>) {
  %n = rlx.narrow %x {axis = 2 : i64, start = 0 : i64, length = 1 : i64} : (tensor<4x6xf32>) -> tensor<4x1xf32>
  func.return
}

// -----

// A negative axis counts from the end, down to -rank.
// CHECK-LABEL: sym_name = "narrow_axis_negative"
// CHECK: Operation does not verify: 'rlx.narrow' axis -3 is out of range for rank 2
func.func @narrow_axis_negative(%x: tensor<3x4xf32>) {
  %n = rlx.narrow %x {axis = -3 : i64, start = 0 : i64, length = 2 : i64} : (tensor<3x4xf32>) -> tensor<2x4xf32>
  func.return
}

// -----

// INT64_MIN is not normalized into range (no overflow of axis + rank).
// CHECK-LABEL: sym_name = "narrow_axis_int64_min"
// CHECK: Operation does not verify: 'rlx.narrow' axis -9223372036854775808 is out of range for rank 2
func.func @narrow_axis_int64_min(%x: tensor<3x4xf32>) {
  %n = rlx.narrow %x {axis = -9223372036854775808 : i64, start = 0 : i64, length = 2 : i64} : (tensor<3x4xf32>) -> tensor<2x4xf32>
  func.return
}

// -----

// start + length is checked without overflow.
// CHECK-LABEL: sym_name = "narrow_start_int64_max"
// CHECK: Operation does not verify: 'rlx.narrow' start 9223372036854775807 and length 1 do not fit axis 0 of size 3
func.func @narrow_start_int64_max(%x: tensor<3x4xf32>) {
  %n = rlx.narrow %x {axis = 0 : i64, start = 9223372036854775807 : i64, length = 1 : i64} : (tensor<3x4xf32>) -> tensor<1x4xf32>
  func.return
}

// -----

// A rank-0 tensor has no axis to narrow.
// CHECK-LABEL: sym_name = "narrow_rank_0"
// CHECK: Operation does not verify: 'rlx.narrow' axis 0 is out of range for rank 0
func.func @narrow_rank_0(%x: tensor<f32>) {
  %n = rlx.narrow %x {axis = 0 : i64, start = 0 : i64, length = 1 : i64} : (tensor<f32>) -> tensor<f32>
  func.return
}

// -----

// start has no default.
// CHECK-LABEL: sym_name = "narrow_missing_start"
// CHECK: Operation does not verify: property 'start' expected in operation 'rlx.narrow'
func.func @narrow_missing_start(%x: tensor<3x4xf32>) {
  %n = rlx.narrow %x {axis = 0 : i64} : (tensor<3x4xf32>) -> tensor<0x4xf32>
  func.return
}

// -----

// CHECK-LABEL: sym_name = "narrow_element_type"
// CHECK: Operation does not verify: 'rlx.narrow' result element type f16 must equal f32
func.func @narrow_element_type(%x: tensor<4x6xf32>) {
  %n = rlx.narrow %x {axis = 0 : i64, start = 0 : i64, length = 1 : i64} : (tensor<4x6xf32>) -> tensor<1x6xf16>
  func.return
}

// -----

// ===-------------------------------------------------------------------=== //
// reverse
// ===-------------------------------------------------------------------=== //

// CHECK-LABEL: sym_name = "reverse_result_shape"
// CHECK: Operation does not verify: 'rlx.reverse' result shape [6, 4] does not match the expected shape [4, 6]
func.func @reverse_result_shape(%x: tensor<4x6xf32>) {
  %r = rlx.reverse %x {axes = array<i64: 0>} : (tensor<4x6xf32>) -> tensor<6x4xf32>
  func.return
}

// -----

// An axis named twice (here as 1 and -1) is rejected.
// CHECK-LABEL: sym_name = "reverse_repeated_axis"
// CHECK: Operation does not verify: 'rlx.reverse' axes [1, -1] repeat an axis
func.func @reverse_repeated_axis(%x: tensor<4x6xf32>) {
  %r = rlx.reverse %x {axes = array<i64: 1, -1>} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  func.return
}

// -----

// CHECK-LABEL: sym_name = "reverse_axis_out_of_range"
// CHECK: Operation does not verify: 'rlx.reverse' axis -3 is out of range for rank 2
func.func @reverse_axis_out_of_range(%x: tensor<4x6xf32>) {
  %r = rlx.reverse %x {axes = array<i64: -3>} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  func.return
}

// -----

// Axes run up to rank - 1.
// CHECK-LABEL: sym_name = "reverse_axis_too_large"
// CHECK: Operation does not verify: 'rlx.reverse' axis 2 is out of range for rank 2
func.func @reverse_axis_too_large(%x: tensor<4x6xf32>) {
  %r = rlx.reverse %x {axes = array<i64: 2>} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  func.return
}

// -----

// CHECK-LABEL: sym_name = "reverse_axes_i32"
// CHECK: Operation does not verify: 'rlx.reverse' axes must be array<i64: ...>, got array<i32: 0>
func.func @reverse_axes_i32(%x: tensor<4x6xf32>) {
  %r = rlx.reverse %x {axes = array<i32: 0>} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  func.return
}

// -----

// ===-------------------------------------------------------------------=== //
// pad
// ===-------------------------------------------------------------------=== //

// The result is the input grown by before + after on each axis.
// CHECK-LABEL: sym_name = "pad_result_shape"
// CHECK: Operation does not verify: 'rlx.pad' result shape [5, 4] does not match the expected shape [5, 6]
func.func @pad_result_shape(%x: tensor<3x4xf32>) {
  %p = rlx.pad %x {before = array<i64: 1, 0>, after = array<i64: 1, 2>} : (tensor<3x4xf32>) -> tensor<5x4xf32>
  func.return
}

// -----

// CHECK-LABEL: sym_name = "pad_before_length"
// CHECK: Operation does not verify: 'rlx.pad' before has 1 entries, expected 2 (one per axis)
func.func @pad_before_length(%x: tensor<3x4xf32>) {
  %p = rlx.pad %x {before = array<i64: 1>, after = array<i64: 1, 2>} : (tensor<3x4xf32>) -> tensor<5x6xf32>
  func.return
}

// -----

// CHECK-LABEL: sym_name = "pad_after_length"
// CHECK: Operation does not verify: 'rlx.pad' after has 3 entries, expected 2 (one per axis)
func.func @pad_after_length(%x: tensor<3x4xf32>) {
  %p = rlx.pad %x {before = array<i64: 1, 0>, after = array<i64: 1, 2, 0>} : (tensor<3x4xf32>) -> tensor<5x6xf32>
  func.return
}

// -----

// The mode is one of np.pad's four (by their torch names).
// CHECK-LABEL: sym_name = "pad_bad_mode"
// CHECK: Operation does not verify: 'rlx.pad' mode "edge" is not one of constant, replicate, circular, reflect
func.func @pad_bad_mode(%x: tensor<3x4xf32>) {
  %p = rlx.pad %x {before = array<i64: 1, 0>, after = array<i64: 1, 2>, mode = "edge"} : (tensor<3x4xf32>) -> tensor<5x6xf32>
  func.return
}

// -----

// Pad widths are never negative (cropping is a slice).
// CHECK-LABEL: sym_name = "pad_negative_width"
// CHECK: Operation does not verify: 'rlx.pad' pad widths must be >= 0 (axis 1 has 0, -1)
func.func @pad_negative_width(%x: tensor<3x4xf32>) {
  %p = rlx.pad %x {before = array<i64: 1, 0>, after = array<i64: 1, -1>} : (tensor<3x4xf32>) -> tensor<5x3xf32>
  func.return
}

// -----

// reflect needs two elements on a padded axis (it mirrors around the edge).
// CHECK-LABEL: sym_name = "pad_reflect_size_one"
// CHECK: Operation does not verify: 'rlx.pad' mode "reflect" cannot pad axis 0 of size 1
func.func @pad_reflect_size_one(%x: tensor<1x4xf32>) {
  %p = rlx.pad %x {before = array<i64: 1, 0>, after = array<i64: 0, 0>, mode = "reflect"} : (tensor<1x4xf32>) -> tensor<2x4xf32>
  func.return
}

// -----

// replicate and circular need one element on a padded axis.
// CHECK-LABEL: sym_name = "pad_replicate_empty_axis"
// CHECK: Operation does not verify: 'rlx.pad' mode "replicate" cannot pad axis 1 of size 0
func.func @pad_replicate_empty_axis(%x: tensor<3x0xf32>) {
  %p = rlx.pad %x {before = array<i64: 0, 1>, after = array<i64: 0, 0>, mode = "replicate"} : (tensor<3x0xf32>) -> tensor<3x1xf32>
  func.return
}

// -----

// circular padding wraps around the axis, so it needs a non-empty one.
// CHECK-LABEL: sym_name = "pad_circular_empty_axis"
// CHECK: Operation does not verify: 'rlx.pad' mode "circular" cannot pad axis 0 of size 0
func.func @pad_circular_empty_axis(%x: tensor<0xf32>) {
  %p = rlx.pad %x {before = array<i64: 1>, after = array<i64: 0>, mode = "circular"} : (tensor<0xf32>) -> tensor<1xf32>
  func.return
}

// -----

// Huge widths give a huge expected shape, computed without overflow.
// CHECK-LABEL: sym_name = "pad_width_int64_max"
// CHECK: Operation does not verify: 'rlx.pad' result shape [3, 4] does not match the expected shape [9223372036854775811, 4]
func.func @pad_width_int64_max(%x: tensor<3x4xf32>) {
  %p = rlx.pad %x {before = array<i64: 9223372036854775807, 0>, after = array<i64: 1, 0>} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  func.return
}

// -----

// CHECK-LABEL: sym_name = "pad_element_type"
// CHECK: Operation does not verify: 'rlx.pad' result element type f64 must equal f32
func.func @pad_element_type(%x: tensor<3x4xf32>) {
  %p = rlx.pad %x {before = array<i64: 1, 0>, after = array<i64: 1, 2>} : (tensor<3x4xf32>) -> tensor<5x6xf64>
  func.return
}

// -----

// ===-------------------------------------------------------------------=== //
// concat
// ===-------------------------------------------------------------------=== //

// The inputs' extents on the axis must add up to the result's.
// CHECK-LABEL: sym_name = "concat_total_mismatch"
// CHECK: Operation does not verify: 'rlx.concat' inputs fill 5 positions on axis 0, the result has 6
func.func @concat_total_mismatch(%a: tensor<3x4xf32>, %b: tensor<2x4xf32>) {
  %c = rlx.concat %a, %b {axis = 0 : i64} : (tensor<3x4xf32>, tensor<2x4xf32>) -> tensor<6x4xf32>
  func.return
}

// -----

// A lower-rank input without the axis fills one position: 4 + 1 != 6.
// CHECK-LABEL: sym_name = "concat_broadcast_total"
// CHECK: Operation does not verify: 'rlx.concat' inputs fill 4 positions on axis 0, the result has 5
func.func @concat_broadcast_total(%a: tensor<3x4xf32>, %b: tensor<4xf32>) {
  %c = rlx.concat %a, %b {axis = 0 : i64} : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<5x4xf32>
  func.return
}

// -----

// All inputs share the result's element type.
// CHECK-LABEL: sym_name = "concat_element_type"
// CHECK: Operation does not verify: 'rlx.concat' input #1 element type f64 must equal f32
func.func @concat_element_type(%a: tensor<3x4xf32>, %b: tensor<2x4xf64>) {
  %c = rlx.concat %a, %b {axis = 0 : i64} : (tensor<3x4xf32>, tensor<2x4xf64>) -> tensor<5x4xf32>
  func.return
}

// -----

// An input may not have more axes than the result.
// CHECK-LABEL: sym_name = "concat_rank_too_high"
// CHECK: Operation does not verify: 'rlx.concat' input #1 has rank 3 above the result's 2
func.func @concat_rank_too_high(%a: tensor<3x4xf32>, %b: tensor<1x2x4xf32>) {
  %c = rlx.concat %a, %b {axis = 0 : i64} : (tensor<3x4xf32>, tensor<1x2x4xf32>) -> tensor<5x4xf32>
  func.return
}

// -----

// Off the concat axis, an input must broadcast to the result.
// CHECK-LABEL: sym_name = "concat_shape_mismatch"
// CHECK: Operation does not verify: 'rlx.concat' input #1 of shape [2, 3] does not fit the result [5, 4] on axis 0
func.func @concat_shape_mismatch(%a: tensor<3x4xf32>, %b: tensor<2x3xf32>) {
  %c = rlx.concat %a, %b {axis = 0 : i64} : (tensor<3x4xf32>, tensor<2x3xf32>) -> tensor<5x4xf32>
  func.return
}

// -----

// concat needs at least one input.
// CHECK-LABEL: sym_name = "concat_no_inputs"
// CHECK: Operation does not verify: 'rlx.concat' needs at least one input
func.func @concat_no_inputs() {
  %c = rlx.concat {axis = 0 : i64} : () -> tensor<0x4xf32>
  func.return
}

// -----

// The axis is checked against the result rank.
// CHECK-LABEL: sym_name = "concat_axis_out_of_range"
// CHECK: Operation does not verify: 'rlx.concat' axis 2 is out of range for rank 2
func.func @concat_axis_out_of_range(%a: tensor<3x4xf32>, %b: tensor<2x4xf32>) {
  %c = rlx.concat %a, %b {axis = 2 : i64} : (tensor<3x4xf32>, tensor<2x4xf32>) -> tensor<5x4xf32>
  func.return
}

// -----

// A negative axis counts from the end, down to -rank.
// CHECK-LABEL: sym_name = "concat_axis_negative"
// CHECK: Operation does not verify: 'rlx.concat' axis -3 is out of range for rank 2
func.func @concat_axis_negative(%x: tensor<3x4xf32>) {
  %c = rlx.concat %x, %x {axis = -3 : i64} : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<6x4xf32>
  func.return
}

// -----

// Rank-0 inputs have no axis to join along.
// CHECK-LABEL: sym_name = "concat_rank_0"
// CHECK: Operation does not verify: 'rlx.concat' axis 0 is out of range for rank 0
func.func @concat_rank_0(%x: tensor<f32>) {
  %c = rlx.concat %x, %x {axis = 0 : i64} : (tensor<f32>, tensor<f32>) -> tensor<f32>
  func.return
}

// -----

// axis has no default.
// CHECK-LABEL: sym_name = "concat_missing_axis"
// CHECK: Operation does not verify: property 'axis' expected in operation 'rlx.concat'
func.func @concat_missing_axis(%x: tensor<3x4xf32>) {
  %c = rlx.concat %x, %x : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<6x4xf32>
  func.return
}

// -----

// ===-------------------------------------------------------------------=== //
// gather
// ===-------------------------------------------------------------------=== //

// data[:axis] + indices.shape + data[axis+1:].
// CHECK-LABEL: sym_name = "gather_result_shape"
// CHECK: Operation does not verify: 'rlx.gather' result shape [3, 4] does not match the expected shape [5, 3]
func.func @gather_result_shape(%d: tensor<5x4xf32>, %i: tensor<3xi64>) {
  %g = rlx.gather %d, %i {axis = 1 : i64} : (tensor<5x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  func.return
}

// -----

// Float indices are not truncated implicitly.
// CHECK-LABEL: sym_name = "gather_float_indices"
// CHECK: Operation does not verify: 'rlx.gather' indices must have element type i32 or i64, got f32 (insert rlx.cast)
func.func @gather_float_indices(%d: tensor<5x4xf32>, %i: tensor<3xf32>) {
  %g = rlx.gather %d, %i : (tensor<5x4xf32>, tensor<3xf32>) -> tensor<3x4xf32>
  func.return
}

// -----

// Narrower integers are not indices either.
// CHECK-LABEL: sym_name = "gather_i16_indices"
// CHECK: Operation does not verify: 'rlx.gather' indices must have element type i32 or i64, got i16 (insert rlx.cast)
func.func @gather_i16_indices(%d: tensor<5x4xf32>, %i: tensor<3xi16>) {
  %g = rlx.gather %d, %i : (tensor<5x4xf32>, tensor<3xi16>) -> tensor<3x4xf32>
  func.return
}

// -----

// Unsigned indices are not accepted either.
// CHECK-LABEL: sym_name = "gather_ui32_indices"
// CHECK: Operation does not verify: 'rlx.gather' indices must have element type i32 or i64, got ui32 (insert rlx.cast)
func.func @gather_ui32_indices(%d: tensor<5x4xf32>, %i: tensor<3xui32>) {
  %g = rlx.gather %d, %i : (tensor<5x4xf32>, tensor<3xui32>) -> tensor<3x4xf32>
  func.return
}

// -----

// CHECK-LABEL: sym_name = "gather_axis_out_of_range"
// CHECK: Operation does not verify: 'rlx.gather' axis -3 is out of range for rank 2
func.func @gather_axis_out_of_range(%d: tensor<5x4xf32>, %i: tensor<3xi64>) {
  %g = rlx.gather %d, %i {axis = -3 : i64} : (tensor<5x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  func.return
}

// -----

// Axes run up to rank - 1.
// CHECK-LABEL: sym_name = "gather_axis_too_large"
// CHECK: Operation does not verify: 'rlx.gather' axis 2 is out of range for rank 2
func.func @gather_axis_too_large(%d: tensor<4x3xf32>, %i: tensor<2xi64>) {
  %g = rlx.gather %d, %i {axis = 2 : i64} : (tensor<4x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  func.return
}

// -----

// A rank-0 tensor has no axis to gather along.
// CHECK-LABEL: sym_name = "gather_rank_0_data"
// CHECK: Operation does not verify: 'rlx.gather' axis 0 is out of range for rank 0
func.func @gather_rank_0_data(%d: tensor<f32>, %i: tensor<2xi64>) {
  %g = rlx.gather %d, %i {axis = 0 : i64} : (tensor<f32>, tensor<2xi64>) -> tensor<2xf32>
  func.return
}

// -----

// CHECK-LABEL: sym_name = "gather_element_type"
// CHECK: Operation does not verify: 'rlx.gather' result element type i64 must equal f32
func.func @gather_element_type(%d: tensor<5x4xf32>, %i: tensor<3xi64>) {
  %g = rlx.gather %d, %i : (tensor<5x4xf32>, tensor<3xi64>) -> tensor<3x4xi64>
  func.return
}

// -----

// ===-------------------------------------------------------------------=== //
// gather_elements
// ===-------------------------------------------------------------------=== //

// The result has the indices' shape.
// CHECK-LABEL: sym_name = "gather_elements_result_shape"
// CHECK: Operation does not verify: 'rlx.gather_elements' result shape [5, 4] does not match the expected shape [5, 2]
func.func @gather_elements_result_shape(%d: tensor<5x4xf32>, %i: tensor<5x2xi32>) {
  %g = rlx.gather_elements %d, %i {axis = 1 : i64} : (tensor<5x4xf32>, tensor<5x2xi32>) -> tensor<5x4xf32>
  func.return
}

// -----

// CHECK-LABEL: sym_name = "gather_elements_rank"
// CHECK: Operation does not verify: 'rlx.gather_elements' indices rank 1 must equal the data rank 2
func.func @gather_elements_rank(%d: tensor<5x4xf32>, %i: tensor<5xi32>) {
  %g = rlx.gather_elements %d, %i : (tensor<5x4xf32>, tensor<5xi32>) -> tensor<5xf32>
  func.return
}

// -----

// Off the gather axis, indices cannot be larger than data (on it they can).
// CHECK-LABEL: sym_name = "gather_elements_extent"
// CHECK: Operation does not verify: 'rlx.gather_elements' indices extent 6 on axis 0 exceeds the data's 5
func.func @gather_elements_extent(%d: tensor<5x4xf32>, %i: tensor<6x9xi32>) {
  %g = rlx.gather_elements %d, %i {axis = 1 : i64} : (tensor<5x4xf32>, tensor<6x9xi32>) -> tensor<6x9xf32>
  func.return
}

// -----

// CHECK-LABEL: sym_name = "gather_elements_float_indices"
// CHECK: Operation does not verify: 'rlx.gather_elements' indices must have element type i32 or i64, got f64 (insert rlx.cast)
func.func @gather_elements_float_indices(%d: tensor<5x4xf32>, %i: tensor<5x2xf64>) {
  %g = rlx.gather_elements %d, %i {axis = 1 : i64} : (tensor<5x4xf32>, tensor<5x2xf64>) -> tensor<5x2xf32>
  func.return
}

// -----

// CHECK-LABEL: sym_name = "gather_elements_axis_out_of_range"
// CHECK: Operation does not verify: 'rlx.gather_elements' axis 2 is out of range for rank 2
func.func @gather_elements_axis_out_of_range(%d: tensor<5x4xf32>, %i: tensor<5x2xi32>) {
  %g = rlx.gather_elements %d, %i {axis = 2 : i64} : (tensor<5x4xf32>, tensor<5x2xi32>) -> tensor<5x2xf32>
  func.return
}

// -----

// ===-------------------------------------------------------------------=== //
// gather_nd
// ===-------------------------------------------------------------------=== //

// indices.shape[:-1] + data.shape[batch_dims + k:].
// CHECK-LABEL: sym_name = "gather_nd_result_shape"
// CHECK: Operation does not verify: 'rlx.gather_nd' result shape [3] does not match the expected shape [3, 4]
func.func @gather_nd_result_shape(%d: tensor<5x4xf32>, %i: tensor<3x1xi64>) {
  %g = rlx.gather_nd %d, %i : (tensor<5x4xf32>, tensor<3x1xi64>) -> tensor<3xf32>
  func.return
}

// -----

// The last indices axis holds the coordinates, so indices have rank >= 1.
// CHECK-LABEL: sym_name = "gather_nd_scalar_indices"
// CHECK: Operation does not verify: 'rlx.gather_nd' indices must have rank >= 1
func.func @gather_nd_scalar_indices(%d: tensor<5x4xf32>, %i: tensor<i64>) {
  %g = rlx.gather_nd %d, %i : (tensor<5x4xf32>, tensor<i64>) -> tensor<4xf32>
  func.return
}

// -----

// batch_dims must leave the coordinate axis of indices.
// CHECK-LABEL: sym_name = "gather_nd_batch_dims_range"
// CHECK: Operation does not verify: 'rlx.gather_nd' batch_dims 2 is out of range
func.func @gather_nd_batch_dims_range(%d: tensor<5x4xf32>, %i: tensor<5x1xi64>) {
  %g = rlx.gather_nd %d, %i {batch_dims = 2 : i64} : (tensor<5x4xf32>, tensor<5x1xi64>) -> tensor<5xf32>
  func.return
}

// -----

// CHECK-LABEL: sym_name = "gather_nd_negative_batch_dims"
// CHECK: Operation does not verify: 'rlx.gather_nd' batch_dims -1 is out of range
func.func @gather_nd_negative_batch_dims(%d: tensor<5x4xf32>, %i: tensor<5x1xi64>) {
  %g = rlx.gather_nd %d, %i {batch_dims = -1 : i64} : (tensor<5x4xf32>, tensor<5x1xi64>) -> tensor<5xf32>
  func.return
}

// -----

// The leading batch_dims axes of indices and data must agree.
// CHECK-LABEL: sym_name = "gather_nd_batch_dims_differ"
// CHECK: Operation does not verify: 'rlx.gather_nd' batch dims of indices [3] and data [5] differ
func.func @gather_nd_batch_dims_differ(%d: tensor<5x4xf32>, %i: tensor<3x1xi64>) {
  %g = rlx.gather_nd %d, %i {batch_dims = 1 : i64} : (tensor<5x4xf32>, tensor<3x1xi64>) -> tensor<3xf32>
  func.return
}

// -----

// More coordinates than data axes.
// CHECK-LABEL: sym_name = "gather_nd_too_many_coordinates"
// CHECK: Operation does not verify: 'rlx.gather_nd' 3 coordinates per index do not fit data of rank 2 after 0 batch dims
func.func @gather_nd_too_many_coordinates(%d: tensor<5x4xf32>, %i: tensor<2x3xi64>) {
  %g = rlx.gather_nd %d, %i : (tensor<5x4xf32>, tensor<2x3xi64>) -> tensor<2xf32>
  func.return
}

// -----

// Coordinates that do fit without batch dims, but not after one.
// CHECK-LABEL: sym_name = "gather_nd_coordinates_after_batch"
// CHECK: Operation does not verify: 'rlx.gather_nd' 2 coordinates per index do not fit data of rank 2 after 1 batch dims
func.func @gather_nd_coordinates_after_batch(%d: tensor<5x4xf32>, %i: tensor<5x2xi64>) {
  %g = rlx.gather_nd %d, %i {batch_dims = 1 : i64} : (tensor<5x4xf32>, tensor<5x2xi64>) -> tensor<5xf32>
  func.return
}

// -----

// Zero coordinates per index are rejected.
// CHECK-LABEL: sym_name = "gather_nd_zero_coordinates"
// CHECK: Operation does not verify: 'rlx.gather_nd' 0 coordinates per index do not fit data of rank 2 after 0 batch dims
func.func @gather_nd_zero_coordinates(%d: tensor<5x4xf32>, %i: tensor<2x0xi64>) {
  %g = rlx.gather_nd %d, %i : (tensor<5x4xf32>, tensor<2x0xi64>) -> tensor<2x5x4xf32>
  func.return
}

// -----

// CHECK-LABEL: sym_name = "gather_nd_bool_indices"
// CHECK: Operation does not verify: 'rlx.gather_nd' indices must have element type i32 or i64, got i1 (insert rlx.cast)
func.func @gather_nd_bool_indices(%d: tensor<5x4xf32>, %i: tensor<2x2xi1>) {
  %g = rlx.gather_nd %d, %i : (tensor<5x4xf32>, tensor<2x2xi1>) -> tensor<2xf32>
  func.return
}

// -----

// ===-------------------------------------------------------------------=== //
// gather_backward
// ===-------------------------------------------------------------------=== //

// dy has the shape of the forward gather's result.
// CHECK-LABEL: sym_name = "gather_backward_dy_shape"
// CHECK: Operation does not verify: 'rlx.gather_backward' dy shape [3, 4] does not match the expected shape [5, 3]
func.func @gather_backward_dy_shape(%dy: tensor<3x4xf32>, %i: tensor<3xi64>) {
  %g = rlx.gather_backward %dy, %i {axis = 1 : i64} : (tensor<3x4xf32>, tensor<3xi64>) -> tensor<5x4xf32>
  func.return
}

// -----

// The axis is checked against the result (the forward data) rank.
// CHECK-LABEL: sym_name = "gather_backward_axis_out_of_range"
// CHECK: Operation does not verify: 'rlx.gather_backward' axis 2 is out of range for rank 2
func.func @gather_backward_axis_out_of_range(%dy: tensor<3x4xf32>, %i: tensor<3xi64>) {
  %g = rlx.gather_backward %dy, %i {axis = 2 : i64} : (tensor<3x4xf32>, tensor<3xi64>) -> tensor<5x4xf32>
  func.return
}

// -----

// CHECK-LABEL: sym_name = "gather_backward_element_type"
// CHECK: Operation does not verify: 'rlx.gather_backward' result element type f64 must equal f32
func.func @gather_backward_element_type(%dy: tensor<3x4xf32>, %i: tensor<3xi64>) {
  %g = rlx.gather_backward %dy, %i : (tensor<3x4xf32>, tensor<3xi64>) -> tensor<5x4xf64>
  func.return
}

// -----

// CHECK-LABEL: sym_name = "gather_backward_float_indices"
// CHECK: Operation does not verify: 'rlx.gather_backward' indices must have element type i32 or i64, got f32 (insert rlx.cast)
func.func @gather_backward_float_indices(%dy: tensor<3x4xf32>, %i: tensor<3xf32>) {
  %g = rlx.gather_backward %dy, %i : (tensor<3x4xf32>, tensor<3xf32>) -> tensor<5x4xf32>
  func.return
}

// -----

// ===-------------------------------------------------------------------=== //
// scatter_add
// ===-------------------------------------------------------------------=== //

// indices are [N] for updates [N, ...].
// CHECK-LABEL: sym_name = "scatter_add_indices_rank"
// CHECK: Operation does not verify: 'rlx.scatter_add' needs indices [N] for updates [N, ...], got [3, 1] and [3, 4]
func.func @scatter_add_indices_rank(%u: tensor<3x4xf32>, %i: tensor<3x1xi64>) {
  %s = rlx.scatter_add %u, %i : (tensor<3x4xf32>, tensor<3x1xi64>) -> tensor<7x4xf32>
  func.return
}

// -----

// CHECK-LABEL: sym_name = "scatter_add_count_mismatch"
// CHECK: Operation does not verify: 'rlx.scatter_add' needs indices [N] for updates [N, ...], got [2] and [3, 4]
func.func @scatter_add_count_mismatch(%u: tensor<3x4xf32>, %i: tensor<2xi64>) {
  %s = rlx.scatter_add %u, %i : (tensor<3x4xf32>, tensor<2xi64>) -> tensor<7x4xf32>
  func.return
}

// -----

// Scalar updates have no row axis.
// CHECK-LABEL: sym_name = "scatter_add_scalar_updates"
// CHECK: Operation does not verify: 'rlx.scatter_add' needs indices [N] for updates [N, ...], got [1] and []
func.func @scatter_add_scalar_updates(%u: tensor<f32>, %i: tensor<1xi64>) {
  %s = rlx.scatter_add %u, %i : (tensor<f32>, tensor<1xi64>) -> tensor<7xf32>
  func.return
}

// -----

// The result rows have the update rows' shape.
// CHECK-LABEL: sym_name = "scatter_add_result_shape"
// CHECK: Operation does not verify: 'rlx.scatter_add' result shape [7, 3] must be [M] + [4]
func.func @scatter_add_result_shape(%u: tensor<3x4xf32>, %i: tensor<3xi64>) {
  %s = rlx.scatter_add %u, %i : (tensor<3x4xf32>, tensor<3xi64>) -> tensor<7x3xf32>
  func.return
}

// -----

// The result has the leading axis M the indices address.
// CHECK-LABEL: sym_name = "scatter_add_rank_0_result"
// CHECK: Operation does not verify: 'rlx.scatter_add' result shape [] must be [M] + []
func.func @scatter_add_rank_0_result(%u: tensor<2xf32>, %i: tensor<2xi64>) {
  %s = rlx.scatter_add %u, %i : (tensor<2xf32>, tensor<2xi64>) -> tensor<f32>
  func.return
}

// -----

// CHECK-LABEL: sym_name = "scatter_add_element_type"
// CHECK: Operation does not verify: 'rlx.scatter_add' result element type f64 must equal f32
func.func @scatter_add_element_type(%u: tensor<3x4xf32>, %i: tensor<3xi64>) {
  %s = rlx.scatter_add %u, %i : (tensor<3x4xf32>, tensor<3xi64>) -> tensor<7x4xf64>
  func.return
}

// -----

// CHECK-LABEL: sym_name = "scatter_add_float_indices"
// CHECK: Operation does not verify: 'rlx.scatter_add' indices must have element type i32 or i64, got f32 (insert rlx.cast)
func.func @scatter_add_float_indices(%u: tensor<3x4xf32>, %i: tensor<3xf32>) {
  %s = rlx.scatter_add %u, %i : (tensor<3x4xf32>, tensor<3xf32>) -> tensor<7x4xf32>
  func.return
}

// -----

// ===-------------------------------------------------------------------=== //
// scatter_nd
// ===-------------------------------------------------------------------=== //

// The result is data, so it has data's shape.
// CHECK-LABEL: sym_name = "scatter_nd_result_shape"
// CHECK: Operation does not verify: 'rlx.scatter_nd' result shape [4, 5] does not match the expected shape [5, 4]
func.func @scatter_nd_result_shape(%d: tensor<5x4xf32>, %i: tensor<2x2xi64>, %u: tensor<2xf32>) {
  %s = rlx.scatter_nd %d, %i, %u : (tensor<5x4xf32>, tensor<2x2xi64>, tensor<2xf32>) -> tensor<4x5xf32>
  func.return
}

// -----

// updates are indices.shape[:-1] + data.shape[k:].
// CHECK-LABEL: sym_name = "scatter_nd_updates_shape"
// CHECK: Operation does not verify: 'rlx.scatter_nd' updates shape [2] does not match the expected shape [2, 4]
func.func @scatter_nd_updates_shape(%d: tensor<5x4xf32>, %i: tensor<2x1xi64>, %u: tensor<2xf32>) {
  %s = rlx.scatter_nd %d, %i, %u : (tensor<5x4xf32>, tensor<2x1xi64>, tensor<2xf32>) -> tensor<5x4xf32>
  func.return
}

// -----

// The coordinate count is 1..rank(data).
// CHECK-LABEL: sym_name = "scatter_nd_coordinates"
// CHECK: Operation does not verify: 'rlx.scatter_nd' indices [2, 3] must end in 1..2 coordinates
func.func @scatter_nd_coordinates(%d: tensor<5x4xf32>, %i: tensor<2x3xi64>, %u: tensor<2xf32>) {
  %s = rlx.scatter_nd %d, %i, %u : (tensor<5x4xf32>, tensor<2x3xi64>, tensor<2xf32>) -> tensor<5x4xf32>
  func.return
}

// -----

// An index needs at least one coordinate.
// CHECK-LABEL: sym_name = "scatter_nd_zero_coordinates"
// CHECK: Operation does not verify: 'rlx.scatter_nd' indices [2, 0] must end in 1..2 coordinates
func.func @scatter_nd_zero_coordinates(%d: tensor<4x3xf32>, %i: tensor<2x0xi64>, %u: tensor<2x4x3xf32>) {
  %s = rlx.scatter_nd %d, %i, %u : (tensor<4x3xf32>, tensor<2x0xi64>, tensor<2x4x3xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

// CHECK-LABEL: sym_name = "scatter_nd_scalar_indices"
// CHECK: Operation does not verify: 'rlx.scatter_nd' indices [] must end in 1..2 coordinates
func.func @scatter_nd_scalar_indices(%d: tensor<5x4xf32>, %i: tensor<i64>, %u: tensor<2xf32>) {
  %s = rlx.scatter_nd %d, %i, %u : (tensor<5x4xf32>, tensor<i64>, tensor<2xf32>) -> tensor<5x4xf32>
  func.return
}

// -----

// CHECK-LABEL: sym_name = "scatter_nd_updates_element_type"
// CHECK: Operation does not verify: 'rlx.scatter_nd' updates element type f64 must equal f32
func.func @scatter_nd_updates_element_type(%d: tensor<5x4xf32>, %i: tensor<2x2xi64>, %u: tensor<2xf64>) {
  %s = rlx.scatter_nd %d, %i, %u : (tensor<5x4xf32>, tensor<2x2xi64>, tensor<2xf64>) -> tensor<5x4xf32>
  func.return
}

// -----

// The reduction is one of none, add, mul, max, min.
// CHECK-LABEL: sym_name = "scatter_nd_bad_reduction"
// CHECK: Operation does not verify: 'rlx.scatter_nd' reduction "sum" is not one of none, add, mul, max, min
func.func @scatter_nd_bad_reduction(%d: tensor<5x4xf32>, %i: tensor<2x2xi64>, %u: tensor<2xf32>) {
  %s = rlx.scatter_nd %d, %i, %u {reduction = "sum"} : (tensor<5x4xf32>, tensor<2x2xi64>, tensor<2xf32>) -> tensor<5x4xf32>
  func.return
}

// -----

// A reduction follows the kind rule of the rlx op of that name: no add on i1.
// CHECK-LABEL: sym_name = "scatter_nd_add_on_bool"
// CHECK: Operation does not verify: 'rlx.scatter_nd' reduction "add" data must be complex or float or int or uint, got i1
func.func @scatter_nd_add_on_bool(%d: tensor<5x4xi1>, %i: tensor<2x2xi64>, %u: tensor<2xi1>) {
  %s = rlx.scatter_nd %d, %i, %u {reduction = "add"} : (tensor<5x4xi1>, tensor<2x2xi64>, tensor<2xi1>) -> tensor<5x4xi1>
  func.return
}

// -----

// ... and no max on complex numbers (they are not ordered).
// CHECK-LABEL: sym_name = "scatter_nd_max_on_complex"
// CHECK: Operation does not verify: 'rlx.scatter_nd' reduction "max" data must be float or int or uint, got complex<f32>
func.func @scatter_nd_max_on_complex(%d: tensor<5x4xcomplex<f32>>, %i: tensor<2x2xi64>, %u: tensor<2xcomplex<f32>>) {
  %s = rlx.scatter_nd %d, %i, %u {reduction = "max"} : (tensor<5x4xcomplex<f32>>, tensor<2x2xi64>, tensor<2xcomplex<f32>>) -> tensor<5x4xcomplex<f32>>
  func.return
}

// -----

// CHECK-LABEL: sym_name = "scatter_nd_float_indices"
// CHECK: Operation does not verify: 'rlx.scatter_nd' indices must have element type i32 or i64, got f32 (insert rlx.cast)
func.func @scatter_nd_float_indices(%d: tensor<5x4xf32>, %i: tensor<2x2xf32>, %u: tensor<2xf32>) {
  %s = rlx.scatter_nd %d, %i, %u : (tensor<5x4xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<5x4xf32>
  func.return
}

// -----

// ===-------------------------------------------------------------------=== //
// scatter_elements
// ===-------------------------------------------------------------------=== //

// CHECK-LABEL: sym_name = "scatter_elements_result_shape"
// CHECK: Operation does not verify: 'rlx.scatter_elements' result shape [5, 2] does not match the expected shape [5, 4]
func.func @scatter_elements_result_shape(%d: tensor<5x4xf32>, %i: tensor<5x2xi32>, %u: tensor<5x2xf32>) {
  %s = rlx.scatter_elements %d, %i, %u {axis = 1 : i64} : (tensor<5x4xf32>, tensor<5x2xi32>, tensor<5x2xf32>) -> tensor<5x2xf32>
  func.return
}

// -----

// indices and updates share one shape...
// CHECK-LABEL: sym_name = "scatter_elements_shapes_differ"
// CHECK: Operation does not verify: 'rlx.scatter_elements' indices [5, 2] and updates [5, 3] must share a shape of rank 2
func.func @scatter_elements_shapes_differ(%d: tensor<5x4xf32>, %i: tensor<5x2xi32>, %u: tensor<5x3xf32>) {
  %s = rlx.scatter_elements %d, %i, %u {axis = 1 : i64} : (tensor<5x4xf32>, tensor<5x2xi32>, tensor<5x3xf32>) -> tensor<5x4xf32>
  func.return
}

// -----

// ... of data's rank.
// CHECK-LABEL: sym_name = "scatter_elements_rank"
// CHECK: Operation does not verify: 'rlx.scatter_elements' indices [5] and updates [5] must share a shape of rank 2
func.func @scatter_elements_rank(%d: tensor<5x4xf32>, %i: tensor<5xi32>, %u: tensor<5xf32>) {
  %s = rlx.scatter_elements %d, %i, %u : (tensor<5x4xf32>, tensor<5xi32>, tensor<5xf32>) -> tensor<5x4xf32>
  func.return
}

// -----

// Off the scatter axis, indices cannot be larger than data.
// CHECK-LABEL: sym_name = "scatter_elements_extent"
// CHECK: Operation does not verify: 'rlx.scatter_elements' indices extent 6 on axis 0 exceeds the data's 5
func.func @scatter_elements_extent(%d: tensor<5x4xf32>, %i: tensor<6x2xi32>, %u: tensor<6x2xf32>) {
  %s = rlx.scatter_elements %d, %i, %u {axis = 1 : i64} : (tensor<5x4xf32>, tensor<6x2xi32>, tensor<6x2xf32>) -> tensor<5x4xf32>
  func.return
}

// -----

// CHECK-LABEL: sym_name = "scatter_elements_axis_out_of_range"
// CHECK: Operation does not verify: 'rlx.scatter_elements' axis -3 is out of range for rank 2
func.func @scatter_elements_axis_out_of_range(%d: tensor<5x4xf32>, %i: tensor<5x2xi32>, %u: tensor<5x2xf32>) {
  %s = rlx.scatter_elements %d, %i, %u {axis = -3 : i64} : (tensor<5x4xf32>, tensor<5x2xi32>, tensor<5x2xf32>) -> tensor<5x4xf32>
  func.return
}

// -----

// CHECK-LABEL: sym_name = "scatter_elements_bad_reduction"
// CHECK: Operation does not verify: 'rlx.scatter_elements' reduction "replace" is not one of none, add, mul, max, min
func.func @scatter_elements_bad_reduction(%d: tensor<5x4xf32>, %i: tensor<5x2xi32>, %u: tensor<5x2xf32>) {
  %s = rlx.scatter_elements %d, %i, %u {axis = 1 : i64, reduction = "replace"} : (tensor<5x4xf32>, tensor<5x2xi32>, tensor<5x2xf32>) -> tensor<5x4xf32>
  func.return
}

// -----

// CHECK-LABEL: sym_name = "scatter_elements_mul_on_bool"
// CHECK: Operation does not verify: 'rlx.scatter_elements' reduction "mul" data must be complex or float or int or uint, got i1
func.func @scatter_elements_mul_on_bool(%d: tensor<5x4xi1>, %i: tensor<5x2xi32>, %u: tensor<5x2xi1>) {
  %s = rlx.scatter_elements %d, %i, %u {axis = 1 : i64, reduction = "mul"} : (tensor<5x4xi1>, tensor<5x2xi32>, tensor<5x2xi1>) -> tensor<5x4xi1>
  func.return
}

// -----

// CHECK-LABEL: sym_name = "scatter_elements_min_on_complex"
// CHECK: Operation does not verify: 'rlx.scatter_elements' reduction "min" data must be float or int or uint, got complex<f64>
func.func @scatter_elements_min_on_complex(%d: tensor<5x4xcomplex<f64>>, %i: tensor<5x2xi32>, %u: tensor<5x2xcomplex<f64>>) {
  %s = rlx.scatter_elements %d, %i, %u {axis = 1 : i64, reduction = "min"} : (tensor<5x4xcomplex<f64>>, tensor<5x2xi32>, tensor<5x2xcomplex<f64>>) -> tensor<5x4xcomplex<f64>>
  func.return
}

// -----

// CHECK-LABEL: sym_name = "scatter_elements_updates_element_type"
// CHECK: Operation does not verify: 'rlx.scatter_elements' updates element type f16 must equal f32
func.func @scatter_elements_updates_element_type(%d: tensor<5x4xf32>, %i: tensor<5x2xi32>, %u: tensor<5x2xf16>) {
  %s = rlx.scatter_elements %d, %i, %u {axis = 1 : i64} : (tensor<5x4xf32>, tensor<5x2xi32>, tensor<5x2xf16>) -> tensor<5x4xf32>
  func.return
}

// -----

// CHECK-LABEL: sym_name = "scatter_elements_float_indices"
// CHECK: Operation does not verify: 'rlx.scatter_elements' indices must have element type i32 or i64, got bf16 (insert rlx.cast)
func.func @scatter_elements_float_indices(%d: tensor<5x4xf32>, %i: tensor<5x2xbf16>, %u: tensor<5x2xf32>) {
  %s = rlx.scatter_elements %d, %i, %u {axis = 1 : i64} : (tensor<5x4xf32>, tensor<5x2xbf16>, tensor<5x2xf32>) -> tensor<5x4xf32>
  func.return
}

// -----

// ===-------------------------------------------------------------------=== //
// relu_backward / activation_backward
// ===-------------------------------------------------------------------=== //

// kind names a unary rlx op.
// CHECK-LABEL: sym_name = "activation_backward_unknown_kind"
// CHECK: Operation does not verify: 'rlx.activation_backward' kind "swish" is not a unary rlx op
func.func @activation_backward_unknown_kind(%x: tensor<4xf32>, %dy: tensor<4xf32>) {
  %g = rlx.activation_backward %x, %dy {kind = "swish"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// Gradients are defined on floats only.
// CHECK-LABEL: sym_name = "relu_backward_int"
// CHECK: Operation does not verify: 'rlx.relu_backward' operands must be float, got i32
func.func @relu_backward_int(%x: tensor<4xi32>, %dy: tensor<4xi32>) {
  %g = rlx.relu_backward %x, %dy : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  func.return
}

// -----

// x, dy and the result share one element type.
// CHECK-LABEL: sym_name = "activation_backward_mixed_types"
// CHECK: Operation does not verify: 'rlx.activation_backward' x, dy and the result must share one element type
func.func @activation_backward_mixed_types(%x: tensor<4xf32>, %dy: tensor<4xf64>) {
  %g = rlx.activation_backward %x, %dy {kind = "tanh"} : (tensor<4xf32>, tensor<4xf64>) -> tensor<4xf32>
  func.return
}

// -----

// They broadcast like any elementwise op; the result must be the broadcast shape.
// CHECK-LABEL: sym_name = "relu_backward_result_shape"
// CHECK: Operation does not verify: 'rlx.relu_backward' result shape [4] does not match the broadcast shape [3, 4]
func.func @relu_backward_result_shape(%x: tensor<3x4xf32>, %dy: tensor<4xf32>) {
  %g = rlx.relu_backward %x, %dy : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// Accumulating ops add like rlx.add, which has no bool form.
// CHECK-LABEL: sym_name = "scatter_add_bool"
// CHECK: Operation does not verify: 'rlx.scatter_add' updates must be complex or float or int or uint, got i1
func.func @scatter_add_bool(%u: tensor<2xi1>, %i: tensor<2xi64>) {
  %r = rlx.scatter_add %u, %i : (tensor<2xi1>, tensor<2xi64>) -> tensor<1xi1>
  func.return
}

// -----

// CHECK-LABEL: sym_name = "gather_backward_bool"
// CHECK: Operation does not verify: 'rlx.gather_backward' dy must be complex or float or int or uint, got i1
func.func @gather_backward_bool(%u: tensor<2xi1>, %i: tensor<2xi64>) {
  %r = rlx.gather_backward %u, %i {axis = 0 : i64} : (tensor<2xi1>, tensor<2xi64>) -> tensor<1xi1>
  func.return
}
