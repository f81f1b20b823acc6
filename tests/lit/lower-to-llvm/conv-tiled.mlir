// RUN: rlx-opt %s --split-input-file -p 'plan-memory,lower-to-llvm{threads=2 target=x86-64-v4 tuning="conv_min_units=1,cores=1"}' | filecheck %s

// Lowering of rlx.conv to the tiled form (AVX-512: register tiles of 6 output
// channels x 4 vectors of 16 positions), and where it gives way to im2col.

// A 3x3 conv, pad 1, on 14x14: one unit (conv_min_units = 1, cores = 1) copies its 16
// channels' input, padded to 16x16, into a stack block (16 · 256 elements, then
// a tile's 64 and the last tap's reach of 2·16 + 2 as zero slack) and keeps its
// sums in a second one (16 channels x 224 positions: 14 rows of 16, of which 14
// are outputs). Each tile loads its vectors of the block per tap, splats one
// weight per channel from w as stored, and does a vector FMA per channel and
// vector, 9 taps unrolled: over 3 tiles of 4 vectors (192 positions), tiles of 6
// channels (216 FMAs) and one of the last 4 (144); then over the last 32
// positions, tiles of 2 vectors (108 and 72 FMAs). No im2col, no BLAS.

// CHECK-LABEL: llvm.func internal @tiled_k0(
// CHECK-SAME: [[XP:%[0-9]+]]: !llvm.ptr {llvm.noalias}, [[WP:%[0-9]+]]: !llvm.ptr {llvm.noalias}, [[BP:%[0-9]+]]: !llvm.ptr {llvm.noalias}, [[YP:%[0-9]+]]: !llvm.ptr {llvm.noalias}, {{%[0-9]+}}: i64, {{%[0-9]+}}: i64)
// CHECK-NEXT: [[IN:%[0-9]+]] = llvm.mlir.constant(4194) : i64
// CHECK-NEXT: [[BLOCK:%[0-9]+]] = llvm.alloca [[IN]] x f32 {alignment = 64 : i64}
// CHECK-NEXT: [[OUT:%[0-9]+]] = llvm.mlir.constant(3584) : i64
// CHECK-NEXT: [[SUMS:%[0-9]+]] = llvm.alloca [[OUT]] x f32 {alignment = 64 : i64}
// CHECK: llvm.getelementptr inbounds [[BLOCK]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK: [[XV:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> vector<16xf32>
// CHECK: llvm.getelementptr inbounds [[WP]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: [[WV:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK: [[SPLAT:%[0-9]+]] = llvm.shufflevector {{%[0-9]+}}, {{%[0-9]+}} [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0] : vector<16xf32>
// CHECK-NEXT: llvm.intr.fma([[SPLAT]], [[XV]], {{%[0-9]+}}) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// CHECK-COUNT-539: llvm.intr.fma
// CHECK-NOT: llvm.intr.fma
// CHECK: llvm.store {{%[0-9]+}}, {{%[0-9]+}} {alignment = 4 : i64} : vector<16xf32>, !llvm.ptr
// CHECK-NOT: sgemm
// CHECK-LABEL: llvm.func @tiled(
// CHECK-NOT: blas
// CHECK: llvm.call @tiled_k0(
func.func @tiled(%x: tensor<1x16x14x14xf32>, %w: tensor<16x16x3x3xf32>, %b: tensor<16xf32>) -> tensor<1x16x14x14xf32> {
  %y = rlx.conv %x, %w, %b {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_before = array<i64: 1, 1>, pad_after = array<i64: 1, 1>} : (tensor<1x16x14x14xf32>, tensor<16x16x3x3xf32>, tensor<16xf32>) -> tensor<1x16x14x14xf32>
  func.return %y : tensor<1x16x14x14xf32>
}

// -----

// The same conv on 2x2: a vector of 16 positions would compute 4 outputs
// (400 per 100, conv_tiled_max_padded_percent = 200): im2col and sgemm.

// CHECK-LABEL: llvm.func internal @too_padded_k0(
// CHECK-NOT: vector<16xf32>
// CHECK: llvm.call @scipy_cblas_sgemm(
func.func @too_padded(%x: tensor<1x16x2x2xf32>, %w: tensor<16x16x3x3xf32>) -> tensor<1x16x2x2xf32> {
  %y = rlx.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_before = array<i64: 1, 1>, pad_after = array<i64: 1, 1>} : (tensor<1x16x2x2xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x2x2xf32>
  func.return %y : tensor<1x16x2x2xf32>
}

// -----

// A strided conv (3x3 / 2, pad 1, on 17x17 -> 9x9): the block holds each channel's
// four phase planes of 10x10 places (4 · 100 · 8 channels), then a tile's 64 and
// the farthest tap's reach as slack: tap 1 reads the odd phases (2 · 100 + 100),
// not tap 2 (one place on: 10 + 1).

// CHECK-LABEL: llvm.func internal @strided_k0(
// CHECK-NEXT: [[IN:%[0-9]+]] = llvm.mlir.constant(3564) : i64
// CHECK-NEXT: llvm.alloca [[IN]] x f32 {alignment = 64 : i64}
// CHECK: llvm.intr.fma
// CHECK-NOT: sgemm
// CHECK-LABEL: llvm.func @strided(
func.func @strided(%x: tensor<1x8x17x17xf32>, %w: tensor<8x8x3x3xf32>) -> tensor<1x8x9x9xf32> {
  %y = rlx.conv %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_before = array<i64: 1, 1>, pad_after = array<i64: 1, 1>} : (tensor<1x8x17x17xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x9x9xf32>
  func.return %y : tensor<1x8x9x9xf32>
}
