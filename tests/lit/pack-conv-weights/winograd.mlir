// RUN: rlx-opt %s -p 'pack-conv-weights{target=x86-64-v3 tuning="conv_winograd_min_channels=1,conv_winograd_min_tiles=0"}' | filecheck %s
// RUN: rlx-opt %s -p 'pack-conv-weights{target=x86-64-v3}' | filecheck %s --check-prefix=SMALL

// pack-conv-weights on AVX2 (vectors of 8 f32) where the Winograd form runs: a
// constant 3x3 stride-1 weight is stored as the 16 points of F(2x2, 3x3),
// [16, M/8, C, 8], stored[4a + b, j, c, l] = (G·w[8j + l, c]·Gᵀ)[a, b], and the
// conv says so (weight_lanes, winograd). Here w[m, 0] = m + 1 at its first tap
// and 0 elsewhere, so G·w·Gᵀ = (m + 1)·g·gᵀ with g = G's first column (1, 1/2,
// 1/2, 0): point 0 holds 1..8, point 1 0.5..4 (f32 0x3F800000 = 1, 0x3F000000 = 0.5).

// CHECK-LABEL: func.func @winograd
// CHECK-NEXT: [[W:%[0-9]+]] = rlx.constant dense_resource<conv_weight_winograd8> : tensor<16x1x1x8xf32>
// CHECK-NEXT: rlx.conv %x, [[W]] {{{.*}}, weight_lanes = 8 : i64, winograd} : (tensor<1x1x4x4xf32>, tensor<16x1x1x8xf32>) -> tensor<1x8x4x4xf32>
// CHECK: conv_weight_winograd8: "0x400000000000803F0000004000004040000080400000A0400000C0400000E040000000410000003F0000803F0000C03F00000040

// The conv of this test is tiny: by default (at least 32 channels in and out, 32
// tiles a plane) it runs the lane form instead, its weight only packed.

// SMALL-LABEL: func.func @winograd
// SMALL-NEXT: [[W:%[0-9]+]] = rlx.constant dense_resource<conv_weight_lanes8> : tensor<1x1x3x3x8xf32>
// SMALL-NEXT: rlx.conv %x, [[W]] {{{.*}}, weight_lanes = 8 : i64} : (tensor<1x1x4x4xf32>, tensor<1x1x3x3x8xf32>) -> tensor<1x8x4x4xf32>
func.func @winograd(%x: tensor<1x1x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %w = rlx.constant dense<[[[[1.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]], [[[2.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]], [[[3.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]], [[[4.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]], [[[5.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]], [[[6.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]], [[[7.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]], [[[8.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]]]> : tensor<8x1x3x3xf32>
  %y = rlx.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_before = array<i64: 1, 1>, pad_after = array<i64: 1, 1>} : (tensor<1x1x4x4xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x4x4xf32>
  func.return %y : tensor<1x8x4x4xf32>
}
