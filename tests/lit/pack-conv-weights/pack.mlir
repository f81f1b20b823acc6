// RUN: rlx-opt %s --split-input-file -p 'pack-conv-weights{target=x86-64-v3}' | filecheck %s

// pack-conv-weights on AVX2 (vectors of 8 f32): a constant weight whose conv runs
// the lane form is stored as [M/8, C/groups, K..., 8], packed[b, c, k, l] =
// w[8·b + l, c, k], and the conv says so (weight_lanes). A 3x3 conv on a 7x7
// plane computes 64 places (7 rows of 9, rounded to whole vectors) for its 49
// outputs in positions, so its 8 channels x 4 inputs x 9 taps run in lanes.
// w[m, c, k] = (36·m + 9·c + k) / 64 - 2.25: the blob starts with w[0..7, 0, 0] =
// -2.25, -1.6875, -1.125, ... (little-endian f32 after MLIR's 4-byte alignment).

// CHECK-LABEL: func.func @seven_by_seven
// CHECK-NEXT: [[W:%[0-9]+]] = rlx.constant dense_resource<w_lanes8> : tensor<1x4x3x3x8xf32>
// CHECK-NEXT: rlx.conv %x, [[W]] {{{.*}}, weight_lanes = 8 : i64} : (tensor<1x4x7x7xf32>, tensor<1x4x3x3x8xf32>) -> tensor<1x8x7x7xf32>
// CHECK: w_lanes8: "0x40000000000010C00000D8BF000090BF000010BF000000000000103F0000903F0000D83F00000FC0
func.func @seven_by_seven(%x: tensor<1x4x7x7xf32>) -> tensor<1x8x7x7xf32> {
  %w = rlx.constant dense_resource<w> : tensor<8x4x3x3xf32>
  %y = rlx.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_before = array<i64: 1, 1>, pad_after = array<i64: 1, 1>} : (tensor<1x4x7x7xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x7x7xf32>
  func.return %y : tensor<1x8x7x7xf32>
}

{-#
  dialect_resources: {
    builtin: {
      w: "0x40000000000010C000000FC000000EC000000DC000000CC000000BC000000AC0000009C0000008C0000007C0000006C0000005C0000004C0000003C0000002C0000001C0000000C00000FEBF0000FCBF0000FABF0000F8BF0000F6BF0000F4BF0000F2BF0000F0BF0000EEBF0000ECBF0000EABF0000E8BF0000E6BF0000E4BF0000E2BF0000E0BF0000DEBF0000DCBF0000DABF0000D8BF0000D6BF0000D4BF0000D2BF0000D0BF0000CEBF0000CCBF0000CABF0000C8BF0000C6BF0000C4BF0000C2BF0000C0BF0000BEBF0000BCBF0000BABF0000B8BF0000B6BF0000B4BF0000B2BF0000B0BF0000AEBF0000ACBF0000AABF0000A8BF0000A6BF0000A4BF0000A2BF0000A0BF00009EBF00009CBF00009ABF000098BF000096BF000094BF000092BF000090BF00008EBF00008CBF00008ABF000088BF000086BF000084BF000082BF000080BF00007CBF000078BF000074BF000070BF00006CBF000068BF000064BF000060BF00005CBF000058BF000054BF000050BF00004CBF000048BF000044BF000040BF00003CBF000038BF000034BF000030BF00002CBF000028BF000024BF000020BF00001CBF000018BF000014BF000010BF00000CBF000008BF000004BF000000BF0000F8BE0000F0BE0000E8BE0000E0BE0000D8BE0000D0BE0000C8BE0000C0BE0000B8BE0000B0BE0000A8BE0000A0BE000098BE000090BE000088BE000080BE000070BE000060BE000050BE000040BE000030BE000020BE000010BE000000BE0000E0BD0000C0BD0000A0BD000080BD000040BD000000BD000080BC000000000000803C0000003D0000403D0000803D0000A03D0000C03D0000E03D0000003E0000103E0000203E0000303E0000403E0000503E0000603E0000703E0000803E0000883E0000903E0000983E0000A03E0000A83E0000B03E0000B83E0000C03E0000C83E0000D03E0000D83E0000E03E0000E83E0000F03E0000F83E0000003F0000043F0000083F00000C3F0000103F0000143F0000183F00001C3F0000203F0000243F0000283F00002C3F0000303F0000343F0000383F00003C3F0000403F0000443F0000483F00004C3F0000503F0000543F0000583F00005C3F0000603F0000643F0000683F00006C3F0000703F0000743F0000783F00007C3F0000803F0000823F0000843F0000863F0000883F00008A3F00008C3F00008E3F0000903F0000923F0000943F0000963F0000983F00009A3F00009C3F00009E3F0000A03F0000A23F0000A43F0000A63F0000A83F0000AA3F0000AC3F0000AE3F0000B03F0000B23F0000B43F0000B63F0000B83F0000BA3F0000BC3F0000BE3F0000C03F0000C23F0000C43F0000C63F0000C83F0000CA3F0000CC3F0000CE3F0000D03F0000D23F0000D43F0000D63F0000D83F0000DA3F0000DC3F0000DE3F0000E03F0000E23F0000E43F0000E63F0000E83F0000EA3F0000EC3F0000EE3F0000F03F0000F23F0000F43F0000F63F0000F83F0000FA3F0000FC3F0000FE3F0000004000000140000002400000034000000440000005400000064000000740000008400000094000000A4000000B4000000C4000000D4000000E4000000F40"
    }
  }
#-}

// -----

// Two convs (one with its epilogue) that read one constant share its packed copy,
// and the unpacked one is gone.

// CHECK-LABEL: func.func @shared
// CHECK-NEXT: [[W:%[0-9]+]] = rlx.constant dense_resource<conv_weight_lanes8> : tensor<1x4x3x3x8xf32>
// CHECK-NOT: rlx.constant
// CHECK-NEXT: rlx.conv %x, [[W]] {{{.*}}, weight_lanes = 8 : i64}
// CHECK-NEXT: rlx.conv_region ins(%x, [[W]] : tensor<1x4x7x7xf32>, tensor<1x4x3x3x8xf32>) {{{.*}}, weight_lanes = 8 : i64} -> tensor<1x8x7x7xf32>
func.func @shared(%x: tensor<1x4x7x7xf32>) -> (tensor<1x8x7x7xf32>, tensor<1x8x7x7xf32>) {
  %w = rlx.constant dense<[[[[-2.25, -2.234375, -2.21875], [-2.203125, -2.1875, -2.171875], [-2.15625, -2.140625, -2.125]], [[-2.109375, -2.09375, -2.078125], [-2.0625, -2.046875, -2.03125], [-2.015625, -2.0, -1.984375]], [[-1.96875, -1.953125, -1.9375], [-1.921875, -1.90625, -1.890625], [-1.875, -1.859375, -1.84375]], [[-1.828125, -1.8125, -1.796875], [-1.78125, -1.765625, -1.75], [-1.734375, -1.71875, -1.703125]]], [[[-1.6875, -1.671875, -1.65625], [-1.640625, -1.625, -1.609375], [-1.59375, -1.578125, -1.5625]], [[-1.546875, -1.53125, -1.515625], [-1.5, -1.484375, -1.46875], [-1.453125, -1.4375, -1.421875]], [[-1.40625, -1.390625, -1.375], [-1.359375, -1.34375, -1.328125], [-1.3125, -1.296875, -1.28125]], [[-1.265625, -1.25, -1.234375], [-1.21875, -1.203125, -1.1875], [-1.171875, -1.15625, -1.140625]]], [[[-1.125, -1.109375, -1.09375], [-1.078125, -1.0625, -1.046875], [-1.03125, -1.015625, -1.0]], [[-0.984375, -0.96875, -0.953125], [-0.9375, -0.921875, -0.90625], [-0.890625, -0.875, -0.859375]], [[-0.84375, -0.828125, -0.8125], [-0.796875, -0.78125, -0.765625], [-0.75, -0.734375, -0.71875]], [[-0.703125, -0.6875, -0.671875], [-0.65625, -0.640625, -0.625], [-0.609375, -0.59375, -0.578125]]], [[[-0.5625, -0.546875, -0.53125], [-0.515625, -0.5, -0.484375], [-0.46875, -0.453125, -0.4375]], [[-0.421875, -0.40625, -0.390625], [-0.375, -0.359375, -0.34375], [-0.328125, -0.3125, -0.296875]], [[-0.28125, -0.265625, -0.25], [-0.234375, -0.21875, -0.203125], [-0.1875, -0.171875, -0.15625]], [[-0.140625, -0.125, -0.109375], [-0.09375, -0.078125, -0.0625], [-0.046875, -0.03125, -0.015625]]], [[[0.0, 0.015625, 0.03125], [0.046875, 0.0625, 0.078125], [0.09375, 0.109375, 0.125]], [[0.140625, 0.15625, 0.171875], [0.1875, 0.203125, 0.21875], [0.234375, 0.25, 0.265625]], [[0.28125, 0.296875, 0.3125], [0.328125, 0.34375, 0.359375], [0.375, 0.390625, 0.40625]], [[0.421875, 0.4375, 0.453125], [0.46875, 0.484375, 0.5], [0.515625, 0.53125, 0.546875]]], [[[0.5625, 0.578125, 0.59375], [0.609375, 0.625, 0.640625], [0.65625, 0.671875, 0.6875]], [[0.703125, 0.71875, 0.734375], [0.75, 0.765625, 0.78125], [0.796875, 0.8125, 0.828125]], [[0.84375, 0.859375, 0.875], [0.890625, 0.90625, 0.921875], [0.9375, 0.953125, 0.96875]], [[0.984375, 1.0, 1.015625], [1.03125, 1.046875, 1.0625], [1.078125, 1.09375, 1.109375]]], [[[1.125, 1.140625, 1.15625], [1.171875, 1.1875, 1.203125], [1.21875, 1.234375, 1.25]], [[1.265625, 1.28125, 1.296875], [1.3125, 1.328125, 1.34375], [1.359375, 1.375, 1.390625]], [[1.40625, 1.421875, 1.4375], [1.453125, 1.46875, 1.484375], [1.5, 1.515625, 1.53125]], [[1.546875, 1.5625, 1.578125], [1.59375, 1.609375, 1.625], [1.640625, 1.65625, 1.671875]]], [[[1.6875, 1.703125, 1.71875], [1.734375, 1.75, 1.765625], [1.78125, 1.796875, 1.8125]], [[1.828125, 1.84375, 1.859375], [1.875, 1.890625, 1.90625], [1.921875, 1.9375, 1.953125]], [[1.96875, 1.984375, 2.0], [2.015625, 2.03125, 2.046875], [2.0625, 2.078125, 2.09375]], [[2.109375, 2.125, 2.140625], [2.15625, 2.171875, 2.1875], [2.203125, 2.21875, 2.234375]]]]> : tensor<8x4x3x3xf32>
  %y = rlx.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_before = array<i64: 1, 1>, pad_after = array<i64: 1, 1>} : (tensor<1x4x7x7xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x7x7xf32>
  %z = rlx.conv_region ins(%x, %w : tensor<1x4x7x7xf32>, tensor<8x4x3x3xf32>) {indexing_maps = [], strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_before = array<i64: 1, 1>, pad_after = array<i64: 1, 1>, groups = 1 : i64} -> tensor<1x8x7x7xf32> {
  ^bb0(%acc: f32):
    %r = rlx.relu %acc : (f32) -> f32
    rlx.yield %r : f32
  }
  func.return %y, %z : tensor<1x8x7x7xf32>, tensor<1x8x7x7xf32>
}

// -----

// Left as they are: a weight given at run time (packing it would cost a copy per
// call), a splat, and a 1-d conv whose blocks are whole vectors of real outputs
// (64 of 64 places): the lane form would compute nothing less.

// CHECK-LABEL: func.func @unpacked
// CHECK-NOT: weight_lanes
// CHECK: func.return
func.func @unpacked(%x: tensor<1x4x7x7xf32>, %w: tensor<8x4x3x3xf32>, %x1: tensor<1x4x66xf32>) -> (tensor<1x8x7x7xf32>, tensor<1x8x7x7xf32>, tensor<1x8x64xf32>) {
  %y = rlx.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_before = array<i64: 1, 1>, pad_after = array<i64: 1, 1>} : (tensor<1x4x7x7xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x7x7xf32>
  %s = rlx.constant dense<0.5> : tensor<8x4x3x3xf32>
  %z = rlx.conv %x, %s {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_before = array<i64: 1, 1>, pad_after = array<i64: 1, 1>} : (tensor<1x4x7x7xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x7x7xf32>
  %t = rlx.constant dense<[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0], [1.0, 2.0, 3.0]], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0], [1.0, 2.0, 3.0]], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0], [1.0, 2.0, 3.0]], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0], [1.0, 2.0, 3.0]], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0], [1.0, 2.0, 3.0]], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0], [1.0, 2.0, 3.0]], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0], [1.0, 2.0, 3.0]], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0], [1.0, 2.0, 3.0]]]> : tensor<8x4x3xf32>
  %u = rlx.conv %x1, %t {strides = array<i64: 1>, dilations = array<i64: 1>, pad_before = array<i64: 0>, pad_after = array<i64: 0>} : (tensor<1x4x66xf32>, tensor<8x4x3xf32>) -> tensor<1x8x64xf32>
  func.return %y, %z, %u : tensor<1x8x7x7xf32>, tensor<1x8x7x7xf32>, tensor<1x8x64xf32>
}
