// RUN: rlx-opt %s --split-input-file | filecheck %s
// RUN: rlx-opt %s --split-input-file | rlx-opt --split-input-file | filecheck %s
// RUN: rlx-opt %s --split-input-file --print-op-generic | rlx-opt --split-input-file | filecheck %s

// rlx.conv prints back in its custom form whether it was written custom or
// generic (third RUN line). The bias operand is optional; strides,
// dilations and the pads are always printed, groups only when it is not 1.

// 1-D with bias and groups, 2-D without bias (strided, dilated, asymmetric
// pads), depthwise causal 1-D (left padding only), 3-D.

// CHECK-LABEL: func.func @forms(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<2x4x9xf32>, [[W:%[a-zA-Z0-9_]+]]: tensor<6x2x3xf32>, [[B:%[a-zA-Z0-9_]+]]: tensor<6xf32>, [[X2:%[a-zA-Z0-9_]+]]: tensor<1x3x8x8xbf16>, [[W2:%[a-zA-Z0-9_]+]]: tensor<5x3x3x2xbf16>, [[WD:%[a-zA-Z0-9_]+]]: tensor<4x1x4xf32>, [[X3:%[a-zA-Z0-9_]+]]: tensor<1x2x4x4x4xf64>, [[W3:%[a-zA-Z0-9_]+]]: tensor<2x2x2x2x2xf64>
// CHECK-NEXT: {{%[a-zA-Z0-9_]+}} = rlx.conv [[X]], [[W]], [[B]] {strides = array<i64: 1>, dilations = array<i64: 1>, pad_before = array<i64: 1>, pad_after = array<i64: 1>, groups = 2 : i64} : (tensor<2x4x9xf32>, tensor<6x2x3xf32>, tensor<6xf32>) -> tensor<2x6x9xf32>
// CHECK-NEXT: {{%[a-zA-Z0-9_]+}} = rlx.conv [[X2]], [[W2]] {strides = array<i64: 2, 1>, dilations = array<i64: 1, 2>, pad_before = array<i64: 1, 0>, pad_after = array<i64: 0, 2>} : (tensor<1x3x8x8xbf16>, tensor<5x3x3x2xbf16>) -> tensor<1x5x4x8xbf16>
// CHECK-NEXT: {{%[a-zA-Z0-9_]+}} = rlx.conv [[X]], [[WD]] {strides = array<i64: 1>, dilations = array<i64: 1>, pad_before = array<i64: 3>, pad_after = array<i64: 0>, groups = 4 : i64} : (tensor<2x4x9xf32>, tensor<4x1x4xf32>) -> tensor<2x4x9xf32>
// CHECK-NEXT: {{%[a-zA-Z0-9_]+}} = rlx.conv [[X3]], [[W3]] {strides = array<i64: 1, 1, 1>, dilations = array<i64: 1, 1, 1>, pad_before = array<i64: 0, 0, 0>, pad_after = array<i64: 0, 0, 0>} : (tensor<1x2x4x4x4xf64>, tensor<2x2x2x2x2xf64>) -> tensor<1x2x3x3x3xf64>
// CHECK-NEXT: func.return
func.func @forms(%x: tensor<2x4x9xf32>, %w: tensor<6x2x3xf32>, %b: tensor<6xf32>, %x2: tensor<1x3x8x8xbf16>, %w2: tensor<5x3x3x2xbf16>, %wd: tensor<4x1x4xf32>, %x3: tensor<1x2x4x4x4xf64>, %w3: tensor<2x2x2x2x2xf64>) {
  %a = rlx.conv %x, %w, %b {strides = array<i64: 1>, dilations = array<i64: 1>, pad_before = array<i64: 1>, pad_after = array<i64: 1>, groups = 2 : i64} : (tensor<2x4x9xf32>, tensor<6x2x3xf32>, tensor<6xf32>) -> tensor<2x6x9xf32>
  %c = rlx.conv %x2, %w2 {strides = array<i64: 2, 1>, dilations = array<i64: 1, 2>, pad_before = array<i64: 1, 0>, pad_after = array<i64: 0, 2>, groups = 1 : i64} : (tensor<1x3x8x8xbf16>, tensor<5x3x3x2xbf16>) -> tensor<1x5x4x8xbf16>
  %d = rlx.conv %x, %wd {strides = array<i64: 1>, dilations = array<i64: 1>, pad_before = array<i64: 3>, pad_after = array<i64: 0>, groups = 4 : i64} : (tensor<2x4x9xf32>, tensor<4x1x4xf32>) -> tensor<2x4x9xf32>
  %e = rlx.conv %x3, %w3 {strides = array<i64: 1, 1, 1>, dilations = array<i64: 1, 1, 1>, pad_before = array<i64: 0, 0, 0>, pad_after = array<i64: 0, 0, 0>} : (tensor<1x2x4x4x4xf64>, tensor<2x2x2x2x2xf64>) -> tensor<1x2x3x3x3xf64>
  func.return
}

// -----

// rlx.max_pool: 1-D and 2-D windows; every attribute is printed.

// CHECK-LABEL: func.func @pools(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<2x4x9xf32>, [[Y:%[a-zA-Z0-9_]+]]: tensor<1x3x8x8xf16>
// CHECK-NEXT: {{%[a-zA-Z0-9_]+}} = rlx.max_pool [[X]] {kernel_shape = array<i64: 3>, strides = array<i64: 2>, dilations = array<i64: 1>, pad_before = array<i64: 1>, pad_after = array<i64: 1>} : (tensor<2x4x9xf32>) -> tensor<2x4x5xf32>
// CHECK-NEXT: {{%[a-zA-Z0-9_]+}} = rlx.max_pool [[Y]] {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 2>, pad_before = array<i64: 1, 1>, pad_after = array<i64: 0, 1>} : (tensor<1x3x8x8xf16>) -> tensor<1x3x4x3xf16>
// CHECK-NEXT: func.return
func.func @pools(%x: tensor<2x4x9xf32>, %y: tensor<1x3x8x8xf16>) {
  %a = rlx.max_pool %x {kernel_shape = array<i64: 3>, strides = array<i64: 2>, dilations = array<i64: 1>, pad_before = array<i64: 1>, pad_after = array<i64: 1>} : (tensor<2x4x9xf32>) -> tensor<2x4x5xf32>
  %b = rlx.max_pool %y {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 2>, pad_before = array<i64: 1, 1>, pad_after = array<i64: 0, 1>} : (tensor<1x3x8x8xf16>) -> tensor<1x3x4x3xf16>
  func.return
}

// -----

// A packed weight: weight_lanes is printed when present, and the result's channels
// are M/L · L (here 2 · 8 = 16 output channels, in 2 groups of 8).

// CHECK-LABEL: func.func @packed(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<1x4x7x7xf32>, [[W:%[a-zA-Z0-9_]+]]: tensor<2x2x3x3x8xf32>
// CHECK-NEXT: {{%[a-zA-Z0-9_]+}} = rlx.conv [[X]], [[W]] {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_before = array<i64: 1, 1>, pad_after = array<i64: 1, 1>, groups = 2 : i64, weight_lanes = 8 : i64} : (tensor<1x4x7x7xf32>, tensor<2x2x3x3x8xf32>) -> tensor<1x16x7x7xf32>
func.func @packed(%x: tensor<1x4x7x7xf32>, %w: tensor<2x2x3x3x8xf32>) {
  %y = rlx.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_before = array<i64: 1, 1>, pad_after = array<i64: 1, 1>, groups = 2 : i64, weight_lanes = 8 : i64} : (tensor<1x4x7x7xf32>, tensor<2x2x3x3x8xf32>) -> tensor<1x16x7x7xf32>
  func.return
}

// -----

// A Winograd weight: 16 points x M/L x C x L (here 16 output channels in 2 blocks
// of 8 lanes, 4 input channels); `winograd` is a unit property, printed bare.

// CHECK-LABEL: func.func @winograd(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<1x4x7x7xf32>, [[W:%[a-zA-Z0-9_]+]]: tensor<16x2x4x8xf32>
// CHECK-NEXT: {{%[a-zA-Z0-9_]+}} = rlx.conv [[X]], [[W]] {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_before = array<i64: 1, 1>, pad_after = array<i64: 1, 1>, weight_lanes = 8 : i64, winograd} : (tensor<1x4x7x7xf32>, tensor<16x2x4x8xf32>) -> tensor<1x16x7x7xf32>
func.func @winograd(%x: tensor<1x4x7x7xf32>, %w: tensor<16x2x4x8xf32>) {
  %y = rlx.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_before = array<i64: 1, 1>, pad_after = array<i64: 1, 1>, weight_lanes = 8 : i64, winograd} : (tensor<1x4x7x7xf32>, tensor<16x2x4x8xf32>) -> tensor<1x16x7x7xf32>
  func.return
}
