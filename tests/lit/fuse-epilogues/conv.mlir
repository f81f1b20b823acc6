// RUN: rlx-opt %s --split-input-file -p fuse-elementwise,fuse-epilogues | filecheck %s

// A conv's bias and ReLU become its epilogue: the bias leaves the conv and is
// the body's first step, read through (d1), one value per output channel.

// CHECK-LABEL: func.func @conv_bias_relu(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<2x8x6x6xf32>, [[W:%[a-zA-Z0-9_]+]]: tensor<16x8x3x3xf32>, [[B:%[a-zA-Z0-9_]+]]: tensor<16xf32>
// CHECK-NOT: rlx.conv {{.*}}
// CHECK-NEXT: [[Y:%[a-zA-Z0-9_]+]] = rlx.conv_region ins([[X]], [[W]], [[B]] : tensor<2x8x6x6xf32>, tensor<16x8x3x3xf32>, tensor<16xf32>) {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1)>], strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_before = array<i64: 1, 1>, pad_after = array<i64: 1, 1>, groups = 1 : i64} -> tensor<2x16x6x6xf32> {
// CHECK-NEXT: ^{{.*}}([[ACC:%[a-zA-Z0-9_]+]]: f32, [[BIAS:%[a-zA-Z0-9_]+]]: f32):
// CHECK-NEXT: [[S:%[a-zA-Z0-9_]+]] = rlx.add [[ACC]], [[BIAS]] : (f32, f32) -> f32
// CHECK-NEXT: [[R:%[a-zA-Z0-9_]+]] = rlx.relu [[S]] : (f32) -> f32
// CHECK-NEXT: rlx.yield [[R]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return [[Y]] : tensor<2x16x6x6xf32>
func.func @conv_bias_relu(%x: tensor<2x8x6x6xf32>, %w: tensor<16x8x3x3xf32>, %b: tensor<16xf32>) -> tensor<2x16x6x6xf32> {
  %c = rlx.conv %x, %w, %b {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_before = array<i64: 1, 1>, pad_after = array<i64: 1, 1>, groups = 1 : i64} : (tensor<2x8x6x6xf32>, tensor<16x8x3x3xf32>, tensor<16xf32>) -> tensor<2x16x6x6xf32>
  %r = rlx.relu %c : (tensor<2x16x6x6xf32>) -> tensor<2x16x6x6xf32>
  func.return %r : tensor<2x16x6x6xf32>
}

// -----

// A ResNet block's end: residual add and ReLU after a conv without bias. The
// residual is read where the result is written (the identity map); the conv's
// element still comes first in the body.

// CHECK-LABEL: func.func @residual_relu(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<1x16x4x4xf64>, [[W:%[a-zA-Z0-9_]+]]: tensor<16x16x1x1xf64>, [[R:%[a-zA-Z0-9_]+]]: tensor<1x16x4x4xf64>
// CHECK-NEXT: [[Y:%[a-zA-Z0-9_]+]] = rlx.conv_region ins([[X]], [[W]], [[R]] : tensor<1x16x4x4xf64>, tensor<16x16x1x1xf64>, tensor<1x16x4x4xf64>) {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>]
// CHECK-NEXT: ^{{.*}}([[ACC:%[a-zA-Z0-9_]+]]: f64, [[RES:%[a-zA-Z0-9_]+]]: f64):
// CHECK-NEXT: [[S:%[a-zA-Z0-9_]+]] = rlx.add [[RES]], [[ACC]] : (f64, f64) -> f64
// CHECK-NEXT: [[M:%[a-zA-Z0-9_]+]] = rlx.relu [[S]] : (f64) -> f64
// CHECK-NEXT: rlx.yield [[M]] : f64
func.func @residual_relu(%x: tensor<1x16x4x4xf64>, %w: tensor<16x16x1x1xf64>, %r: tensor<1x16x4x4xf64>) -> tensor<1x16x4x4xf64> {
  %c = rlx.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_before = array<i64: 0, 0>, pad_after = array<i64: 0, 0>, groups = 1 : i64} : (tensor<1x16x4x4xf64>, tensor<16x16x1x1xf64>) -> tensor<1x16x4x4xf64>
  %s = rlx.add %r, %c : (tensor<1x16x4x4xf64>, tensor<1x16x4x4xf64>) -> tensor<1x16x4x4xf64>
  %m = rlx.relu %s : (tensor<1x16x4x4xf64>) -> tensor<1x16x4x4xf64>
  func.return %m : tensor<1x16x4x4xf64>
}

// -----

// Left alone: a conv with a second user, an epilogue input that broadcasts only
// some spatial axes (its reads would not advance with the plane's), and an f16
// conv with a bias (its f32 sums take the bias before their one rounding).

// CHECK-LABEL: func.func @leave_alone(
// CHECK-NOT: rlx.conv_region
// CHECK: rlx.conv
// CHECK: rlx.conv
// CHECK: rlx.conv
// CHECK-NOT: rlx.conv_region
func.func @leave_alone(%x: tensor<1x8x4x4xf32>, %w: tensor<8x8x1x1xf32>, %p: tensor<1x8x4x1xf32>, %h: tensor<1x8x4x4xf16>, %v: tensor<8x8x1x1xf16>, %b: tensor<8xf16>) -> (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>, tensor<1x8x4x4xf16>) {
  %c = rlx.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_before = array<i64: 0, 0>, pad_after = array<i64: 0, 0>, groups = 1 : i64} : (tensor<1x8x4x4xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x4x4xf32>
  %r = rlx.relu %c : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %d = rlx.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_before = array<i64: 0, 0>, pad_after = array<i64: 0, 0>, groups = 1 : i64} : (tensor<1x8x4x4xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x4x4xf32>
  %s = rlx.add %d, %p : (tensor<1x8x4x4xf32>, tensor<1x8x4x1xf32>) -> tensor<1x8x4x4xf32>
  %e = rlx.conv %h, %v, %b {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_before = array<i64: 0, 0>, pad_after = array<i64: 0, 0>, groups = 1 : i64} : (tensor<1x8x4x4xf16>, tensor<8x8x1x1xf16>, tensor<8xf16>) -> tensor<1x8x4x4xf16>
  %t = rlx.relu %e : (tensor<1x8x4x4xf16>) -> tensor<1x8x4x4xf16>
  func.return %c, %r, %s, %t : tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>, tensor<1x8x4x4xf16>
}
