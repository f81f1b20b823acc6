// RUN: rlx-opt %s --split-input-file --verify-diagnostics | filecheck %s

// One case per verifier rule of rlx.conv. xDSL's --verify-diagnostics prints
// each diagnostic and exits 0; each CHECK pins the exact message to its case.

// Only float types: integer convolutions have no kernel.
// CHECK-LABEL: sym_name = "element_type_not_allowed"
// CHECK: Operation does not verify: 'rlx.conv' element type i32 is not one of f16, bf16, f32, f64
func.func @element_type_not_allowed(%x: tensor<2x4x9xi32>, %w: tensor<6x4x3xi32>) {
  %y = rlx.conv %x, %w {strides = array<i64: 1>, dilations = array<i64: 1>, pad_before = array<i64: 0>, pad_after = array<i64: 0>} : (tensor<2x4x9xi32>, tensor<6x4x3xi32>) -> tensor<2x6x7xi32>
  func.return
}

// -----

// Operands have one element type (no implicit promotion) ...
// CHECK-LABEL: sym_name = "mixed_weight_type"
// CHECK: Operation does not verify: 'rlx.conv' weight element type f64 must equal f32
func.func @mixed_weight_type(%x: tensor<2x4x9xf32>, %w: tensor<6x4x3xf64>) {
  %y = rlx.conv %x, %w {strides = array<i64: 1>, dilations = array<i64: 1>, pad_before = array<i64: 0>, pad_after = array<i64: 0>} : (tensor<2x4x9xf32>, tensor<6x4x3xf64>) -> tensor<2x6x7xf32>
  func.return
}

// -----

// ... and so does the result.
// CHECK-LABEL: sym_name = "mixed_result_type"
// CHECK: Operation does not verify: 'rlx.conv' result element type f16 must equal f32
func.func @mixed_result_type(%x: tensor<2x4x9xf32>, %w: tensor<6x4x3xf32>) {
  %y = rlx.conv %x, %w {strides = array<i64: 1>, dilations = array<i64: 1>, pad_before = array<i64: 0>, pad_after = array<i64: 0>} : (tensor<2x4x9xf32>, tensor<6x4x3xf32>) -> tensor<2x6x7xf16>
  func.return
}

// -----

// The bias holds one value per output channel.
// CHECK-LABEL: sym_name = "bias_shape"
// CHECK: Operation does not verify: 'rlx.conv' bias shape [4] must be [6] (one per output channel)
func.func @bias_shape(%x: tensor<2x4x9xf32>, %w: tensor<6x4x3xf32>, %b: tensor<4xf32>) {
  %y = rlx.conv %x, %w, %b {strides = array<i64: 1>, dilations = array<i64: 1>, pad_before = array<i64: 0>, pad_after = array<i64: 0>} : (tensor<2x4x9xf32>, tensor<6x4x3xf32>, tensor<4xf32>) -> tensor<2x6x7xf32>
  func.return
}

// -----

// The input is [N, C, spatial...]: a rank-2 input has no spatial axis.
// CHECK-LABEL: sym_name = "no_spatial_axis"
// CHECK: Operation does not verify: 'rlx.conv' input must be [N, C, spatial...] with a spatial axis, got [2, 4]
func.func @no_spatial_axis(%x: tensor<2x4xf32>, %w: tensor<6x4xf32>) {
  %y = rlx.conv %x, %w {strides = array<i64>, dilations = array<i64>, pad_before = array<i64>, pad_after = array<i64>} : (tensor<2x4xf32>, tensor<6x4xf32>) -> tensor<2x6xf32>
  func.return
}

// -----

// The weight has the input's rank: [M, C/groups, kernel...].
// CHECK-LABEL: sym_name = "weight_rank"
// CHECK: Operation does not verify: 'rlx.conv' weight rank 3 must equal the input rank 4 ([M, C/groups, kernel...])
func.func @weight_rank(%x: tensor<2x4x9x9xf32>, %w: tensor<6x4x3xf32>) {
  %y = rlx.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_before = array<i64: 0, 0>, pad_after = array<i64: 0, 0>} : (tensor<2x4x9x9xf32>, tensor<6x4x3xf32>) -> tensor<2x6x7x7xf32>
  func.return
}

// -----

// Each attribute has one entry per spatial axis.
// CHECK-LABEL: sym_name = "attribute_length"
// CHECK: Operation does not verify: 'rlx.conv' strides has 2 entries, expected 1 (one per axis)
func.func @attribute_length(%x: tensor<2x4x9xf32>, %w: tensor<6x4x3xf32>) {
  %y = rlx.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1>, pad_before = array<i64: 0>, pad_after = array<i64: 0>} : (tensor<2x4x9xf32>, tensor<6x4x3xf32>) -> tensor<2x6x7xf32>
  func.return
}

// -----

// groups is at least 1.
// CHECK-LABEL: sym_name = "groups_positive"
// CHECK: Operation does not verify: 'rlx.conv' groups must be at least 1, got 0
func.func @groups_positive(%x: tensor<2x4x9xf32>, %w: tensor<6x4x3xf32>) {
  %y = rlx.conv %x, %w {strides = array<i64: 1>, dilations = array<i64: 1>, pad_before = array<i64: 0>, pad_after = array<i64: 0>, groups = 0 : i64} : (tensor<2x4x9xf32>, tensor<6x4x3xf32>) -> tensor<2x6x7xf32>
  func.return
}

// -----

// Strides are at least 1.
// CHECK-LABEL: sym_name = "stride_positive"
// CHECK: Operation does not verify: 'rlx.conv' strides must be at least 1, got [0]
func.func @stride_positive(%x: tensor<2x4x9xf32>, %w: tensor<6x4x3xf32>) {
  %y = rlx.conv %x, %w {strides = array<i64: 0>, dilations = array<i64: 1>, pad_before = array<i64: 0>, pad_after = array<i64: 0>} : (tensor<2x4x9xf32>, tensor<6x4x3xf32>) -> tensor<2x6x7xf32>
  func.return
}

// -----

// Dilations are at least 1.
// CHECK-LABEL: sym_name = "dilation_positive"
// CHECK: Operation does not verify: 'rlx.conv' dilations must be at least 1, got [-1]
func.func @dilation_positive(%x: tensor<2x4x9xf32>, %w: tensor<6x4x3xf32>) {
  %y = rlx.conv %x, %w {strides = array<i64: 1>, dilations = array<i64: -1>, pad_before = array<i64: 0>, pad_after = array<i64: 0>} : (tensor<2x4x9xf32>, tensor<6x4x3xf32>) -> tensor<2x6x7xf32>
  func.return
}

// -----

// Pads are not negative (a crop is an rlx.slice).
// CHECK-LABEL: sym_name = "negative_pad"
// CHECK: Operation does not verify: 'rlx.conv' pads must be >= 0, got pad_before [-1] and pad_after [0]
func.func @negative_pad(%x: tensor<2x4x9xf32>, %w: tensor<6x4x3xf32>) {
  %y = rlx.conv %x, %w {strides = array<i64: 1>, dilations = array<i64: 1>, pad_before = array<i64: -1>, pad_after = array<i64: 0>} : (tensor<2x4x9xf32>, tensor<6x4x3xf32>) -> tensor<2x6x6xf32>
  func.return
}

// -----

// groups divides the input channels ...
// CHECK-LABEL: sym_name = "groups_divide_input_channels"
// CHECK: Operation does not verify: 'rlx.conv' groups 3 does not divide the 4 input channels
func.func @groups_divide_input_channels(%x: tensor<2x4x9xf32>, %w: tensor<6x1x3xf32>) {
  %y = rlx.conv %x, %w {strides = array<i64: 1>, dilations = array<i64: 1>, pad_before = array<i64: 0>, pad_after = array<i64: 0>, groups = 3 : i64} : (tensor<2x4x9xf32>, tensor<6x1x3xf32>) -> tensor<2x6x7xf32>
  func.return
}

// -----

// ... and the output channels.
// CHECK-LABEL: sym_name = "groups_divide_output_channels"
// CHECK: Operation does not verify: 'rlx.conv' groups 2 does not divide the 5 output channels
func.func @groups_divide_output_channels(%x: tensor<2x4x9xf32>, %w: tensor<5x2x3xf32>) {
  %y = rlx.conv %x, %w {strides = array<i64: 1>, dilations = array<i64: 1>, pad_before = array<i64: 0>, pad_after = array<i64: 0>, groups = 2 : i64} : (tensor<2x4x9xf32>, tensor<5x2x3xf32>) -> tensor<2x5x7xf32>
  func.return
}

// -----

// The weight's second axis is C/groups.
// CHECK-LABEL: sym_name = "weight_channels_per_group"
// CHECK: Operation does not verify: 'rlx.conv' weight has 4 input channels per group, expected 2 (C/groups)
func.func @weight_channels_per_group(%x: tensor<2x4x9xf32>, %w: tensor<6x4x3xf32>) {
  %y = rlx.conv %x, %w {strides = array<i64: 1>, dilations = array<i64: 1>, pad_before = array<i64: 0>, pad_after = array<i64: 0>, groups = 2 : i64} : (tensor<2x4x9xf32>, tensor<6x4x3xf32>) -> tensor<2x6x7xf32>
  func.return
}

// -----

// Every kernel extent is at least 1.
// CHECK-LABEL: sym_name = "empty_kernel"
// CHECK: Operation does not verify: 'rlx.conv' spatial axis 0: the kernel extent must be at least 1, got 0
func.func @empty_kernel(%x: tensor<2x4x9xf32>, %w: tensor<6x4x0xf32>) {
  %y = rlx.conv %x, %w {strides = array<i64: 1>, dilations = array<i64: 1>, pad_before = array<i64: 0>, pad_after = array<i64: 0>} : (tensor<2x4x9xf32>, tensor<6x4x0xf32>) -> tensor<2x6x10xf32>
  func.return
}

// -----

// The dilated kernel fits in the padded input: 2·(3 − 1) + 1 = 5 > 2 + 1 + 1.
// CHECK-LABEL: sym_name = "kernel_larger_than_input"
// CHECK: Operation does not verify: 'rlx.conv' spatial axis 0: the dilated kernel spans 5, more than the padded input's 4
func.func @kernel_larger_than_input(%x: tensor<2x4x2xf32>, %w: tensor<6x4x3xf32>) {
  %y = rlx.conv %x, %w {strides = array<i64: 1>, dilations = array<i64: 2>, pad_before = array<i64: 1>, pad_after = array<i64: 1>} : (tensor<2x4x2xf32>, tensor<6x4x3xf32>) -> tensor<2x6x1xf32>
  func.return
}

// -----

// The result shape is (I + pads − d·(K − 1) − 1) // s + 1 per spatial axis: (9 + 1 − 2 − 1) // 2 + 1 = 4.
// CHECK-LABEL: sym_name = "wrong_result_shape"
// CHECK: Operation does not verify: 'rlx.conv' result shape [2, 6, 5] does not match the expected shape [2, 6, 4]
func.func @wrong_result_shape(%x: tensor<2x4x9xf32>, %w: tensor<6x4x3xf32>) {
  %y = rlx.conv %x, %w {strides = array<i64: 2>, dilations = array<i64: 1>, pad_before = array<i64: 1>, pad_after = array<i64: 0>} : (tensor<2x4x9xf32>, tensor<6x4x3xf32>) -> tensor<2x6x5xf32>
  func.return
}

// -----

// rlx.max_pool takes the conv's float types and the integers, not bool.
// CHECK-LABEL: sym_name = "pool_element_type"
// CHECK: Operation does not verify: 'rlx.max_pool' element type i1 is not one of f16, bf16, f32, f64, i8, i16, i32, i64, ui8, ui16, ui32, ui64
func.func @pool_element_type(%x: tensor<2x4x9xi1>) {
  %y = rlx.max_pool %x {kernel_shape = array<i64: 3>, strides = array<i64: 1>, dilations = array<i64: 1>, pad_before = array<i64: 0>, pad_after = array<i64: 0>} : (tensor<2x4x9xi1>) -> tensor<2x4x7xi1>
  func.return
}

// -----

// kernel_shape has one entry per spatial axis.
// CHECK-LABEL: sym_name = "pool_kernel_entries"
// CHECK: Operation does not verify: 'rlx.max_pool' kernel_shape has 2 entries, expected 1 (one per axis)
func.func @pool_kernel_entries(%x: tensor<2x4x9xf32>) {
  %y = rlx.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1>, dilations = array<i64: 1>, pad_before = array<i64: 0>, pad_after = array<i64: 0>} : (tensor<2x4x9xf32>) -> tensor<2x4x7xf32>
  func.return
}

// -----

// Pooling shares the conv's window rules: strides are at least 1 ...
// CHECK-LABEL: sym_name = "pool_stride_positive"
// CHECK: Operation does not verify: 'rlx.max_pool' strides must be at least 1, got [0]
func.func @pool_stride_positive(%x: tensor<2x4x9xf32>) {
  %y = rlx.max_pool %x {kernel_shape = array<i64: 3>, strides = array<i64: 0>, dilations = array<i64: 1>, pad_before = array<i64: 0>, pad_after = array<i64: 0>} : (tensor<2x4x9xf32>) -> tensor<2x4x7xf32>
  func.return
}

// -----

// ... and the dilated window fits in the padded input.
// CHECK-LABEL: sym_name = "pool_window_fits"
// CHECK: Operation does not verify: 'rlx.max_pool' spatial axis 0: the dilated kernel spans 5, more than the padded input's 4
func.func @pool_window_fits(%x: tensor<2x4x3xf32>) {
  %y = rlx.max_pool %x {kernel_shape = array<i64: 3>, strides = array<i64: 1>, dilations = array<i64: 2>, pad_before = array<i64: 1>, pad_after = array<i64: 0>} : (tensor<2x4x3xf32>) -> tensor<2x4x1xf32>
  func.return
}

// -----

// Channels are kept; (9 + 1 + 1 − 3) // 2 + 1 = 5 outputs.
// CHECK-LABEL: sym_name = "pool_result_shape"
// CHECK: Operation does not verify: 'rlx.max_pool' result shape [2, 4, 4] does not match the expected shape [2, 4, 5]
func.func @pool_result_shape(%x: tensor<2x4x9xf32>) {
  %y = rlx.max_pool %x {kernel_shape = array<i64: 3>, strides = array<i64: 2>, dilations = array<i64: 1>, pad_before = array<i64: 1>, pad_after = array<i64: 1>} : (tensor<2x4x9xf32>) -> tensor<2x4x4xf32>
  func.return
}

// -----

// A packed weight (weight_lanes = L) is [M/L, C/groups, kernel..., L] ...
// CHECK-LABEL: sym_name = "packed_weight_not_packed"
// CHECK: Operation does not verify: 'rlx.conv' weight_lanes 8 needs the weight packed as [M/8, C/groups, kernel..., 8], got [16, 4, 3, 3]
func.func @packed_weight_not_packed(%x: tensor<1x4x7x7xf32>, %w: tensor<16x4x3x3xf32>) {
  %y = rlx.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_before = array<i64: 1, 1>, pad_after = array<i64: 1, 1>, weight_lanes = 8 : i64} : (tensor<1x4x7x7xf32>, tensor<16x4x3x3xf32>) -> tensor<1x16x7x7xf32>
  func.return
}

// -----

// ... with L > 0 ...
// CHECK-LABEL: sym_name = "packed_weight_no_lanes"
// CHECK: Operation does not verify: 'rlx.conv' weight_lanes must be positive, got 0
func.func @packed_weight_no_lanes(%x: tensor<1x4x7x7xf32>, %w: tensor<2x4x3x3x0xf32>) {
  %y = rlx.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_before = array<i64: 1, 1>, pad_after = array<i64: 1, 1>, weight_lanes = 0 : i64} : (tensor<1x4x7x7xf32>, tensor<2x4x3x3x0xf32>) -> tensor<1x16x7x7xf32>
  func.return
}

// -----

// ... and whole vectors of each group's output channels.
// CHECK-LABEL: sym_name = "packed_weight_splits_a_group"
// CHECK: Operation does not verify: 'rlx.conv' weight_lanes 8 must divide the 4 output channels of a group
func.func @packed_weight_splits_a_group(%x: tensor<1x8x7x7xf32>, %w: tensor<2x2x3x3x8xf32>) {
  %y = rlx.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_before = array<i64: 1, 1>, pad_after = array<i64: 1, 1>, groups = 4 : i64, weight_lanes = 8 : i64} : (tensor<1x8x7x7xf32>, tensor<2x2x3x3x8xf32>) -> tensor<1x16x7x7xf32>
  func.return
}

// -----

// A Winograd weight (winograd) is packed in lanes ...
// CHECK-LABEL: sym_name = "winograd_without_lanes"
// CHECK: Operation does not verify: 'rlx.conv' winograd needs weight_lanes
func.func @winograd_without_lanes(%x: tensor<1x4x7x7xf32>, %w: tensor<16x4x3x3xf32>) {
  %y = rlx.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_before = array<i64: 1, 1>, pad_after = array<i64: 1, 1>, winograd} : (tensor<1x4x7x7xf32>, tensor<16x4x3x3xf32>) -> tensor<1x16x7x7xf32>
  func.return
}

// -----

// ... of a 2-d conv with one group ...
// CHECK-LABEL: sym_name = "winograd_grouped"
// CHECK: Operation does not verify: 'rlx.conv' winograd needs a 2-d conv with one group
func.func @winograd_grouped(%x: tensor<1x8x7x7xf32>, %w: tensor<16x2x4x8xf32>) {
  %y = rlx.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_before = array<i64: 1, 1>, pad_after = array<i64: 1, 1>, groups = 2 : i64, weight_lanes = 8 : i64, winograd} : (tensor<1x8x7x7xf32>, tensor<16x2x4x8xf32>) -> tensor<1x16x7x7xf32>
  func.return
}

// -----

// ... unit strides and dilations ...
// CHECK-LABEL: sym_name = "winograd_strided"
// CHECK: Operation does not verify: 'rlx.conv' winograd needs unit strides and dilations
func.func @winograd_strided(%x: tensor<1x4x7x7xf32>, %w: tensor<16x2x4x8xf32>) {
  %y = rlx.conv %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_before = array<i64: 1, 1>, pad_after = array<i64: 1, 1>, weight_lanes = 8 : i64, winograd} : (tensor<1x4x7x7xf32>, tensor<16x2x4x8xf32>) -> tensor<1x16x4x4xf32>
  func.return
}

// -----

// ... and the weight as the 16 points of each (output, input) channel pair.
// CHECK-LABEL: sym_name = "winograd_weight_not_points"
// CHECK: Operation does not verify: 'rlx.conv' winograd needs the weight as [16, M/8, C, 8], got [2, 4, 3, 3, 8]
func.func @winograd_weight_not_points(%x: tensor<1x4x7x7xf32>, %w: tensor<2x4x3x3x8xf32>) {
  %y = rlx.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_before = array<i64: 1, 1>, pad_after = array<i64: 1, 1>, weight_lanes = 8 : i64, winograd} : (tensor<1x4x7x7xf32>, tensor<2x4x3x3x8xf32>) -> tensor<1x16x7x7xf32>
  func.return
}
