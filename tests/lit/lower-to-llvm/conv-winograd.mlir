// RUN: rlx-opt %s -p 'plan-memory,lower-to-llvm{threads=1 target=x86-64-v4 tuning="conv_min_units=1,cores=1"}' | filecheck %s

// Lowering of rlx.conv with a Winograd weight (F(2x2, 3x3), AVX-512: vectors of 16).
// 16 channels in and out, pad 1, on 6x6: one unit (conv_min_units = 1, cores = 1) of
// 3x3 tiles of 2x2 outputs. Its stack: the input block as the tiled form pads it (16
// channels of 8x8 places, then a tile's 64 and the last tap's reach of 2·8 + 2 as
// zero slack: 1106), the points (16 points x 16 channels x 9 tiles and a vector's
// slack: 6400), the products (16 x 16 x 9: 2304), the outputs (16 x 36) and their
// transposed rows (16 rows of 48).
// The input transform reads each input row of 16 tiles as two pairs of vectors two
// places apart and splits each pair into its even and odd places (columns 2j and
// 2j + 1, then 2j + 2 and 2j + 3), then Bᵀ·d·B takes adds and subtracts only. Per
// point, the products are register tiles of 6 tiles (then the last 3) x 1 vector of
// channels, the weight a vector load, each point splat: one FMA each. The output
// transform Aᵀ·m·A adds the bias and subtracts; nothing multiplies but the FMAs.

// CHECK-LABEL: llvm.func internal @winograd_k0(
// CHECK-SAME: [[XP:%[0-9]+]]: !llvm.ptr {llvm.noalias}, [[WP:%[0-9]+]]: !llvm.ptr {llvm.noalias}, [[BP:%[0-9]+]]: !llvm.ptr {llvm.noalias}, [[YP:%[0-9]+]]: !llvm.ptr {llvm.noalias}, {{%[0-9]+}}: i64,
// CHECK-NEXT: [[IN:%[0-9]+]] = llvm.mlir.constant(1106) : i64
// CHECK-NEXT: [[BLOCK:%[0-9]+]] = llvm.alloca [[IN]] x f32 {alignment = 64 : i64}
// CHECK-NEXT: [[NPOINTS:%[0-9]+]] = llvm.mlir.constant(6400) : i64
// CHECK-NEXT: [[POINTS:%[0-9]+]] = llvm.alloca [[NPOINTS]] x f32 {alignment = 64 : i64}
// CHECK-NEXT: [[NPRODUCTS:%[0-9]+]] = llvm.mlir.constant(2304) : i64
// CHECK-NEXT: [[PRODUCTS:%[0-9]+]] = llvm.alloca [[NPRODUCTS]] x f32 {alignment = 64 : i64}
// CHECK-NEXT: [[NSUMS:%[0-9]+]] = llvm.mlir.constant(576) : i64
// CHECK-NEXT: llvm.alloca [[NSUMS]] x f32 {alignment = 64 : i64}
// CHECK-NEXT: [[NROWS:%[0-9]+]] = llvm.mlir.constant(768) : i64
// CHECK-NEXT: llvm.alloca [[NROWS]] x f32 {alignment = 64 : i64}
// CHECK-NOT: llvm.fmul

// The input transform: one input row of the tile row.
// CHECK: [[A:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> vector<16xf32>
// CHECK: [[B:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> vector<16xf32>
// CHECK: [[C:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> vector<16xf32>
// CHECK: [[D:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> vector<16xf32>
// CHECK-NEXT: [[D0:%[0-9]+]] = llvm.shufflevector [[A]], [[B]] [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30] : vector<16xf32>
// CHECK-NEXT: [[D1:%[0-9]+]] = llvm.shufflevector [[A]], [[B]] [1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31] : vector<16xf32>
// CHECK-NEXT: [[D2:%[0-9]+]] = llvm.shufflevector [[C]], [[D]] [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30] : vector<16xf32>
// CHECK-NEXT: [[D3:%[0-9]+]] = llvm.shufflevector [[C]], [[D]] [1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31] : vector<16xf32>
// CHECK-NEXT: llvm.fsub [[D0]], [[D2]] : vector<16xf32>
// CHECK-NEXT: llvm.fadd [[D1]], [[D2]] : vector<16xf32>
// CHECK-NEXT: llvm.fsub [[D2]], [[D1]] : vector<16xf32>
// CHECK-NEXT: llvm.fsub [[D1]], [[D3]] : vector<16xf32>
// CHECK-NOT: llvm.fmul

// The products: 6 tiles, then 3, of one vector of channels.
// CHECK: llvm.getelementptr inbounds [[WP]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK: [[WV:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> vector<16xf32>
// CHECK: llvm.getelementptr inbounds [[POINTS]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK: llvm.intr.fma([[WV]], {{%[0-9]+}}, {{%[0-9]+}}) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// CHECK-COUNT-5: llvm.intr.fma([[WV]], {{%[0-9]+}}, {{%[0-9]+}})
// CHECK-NOT: llvm.intr.fma
// CHECK: llvm.getelementptr inbounds [[PRODUCTS]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK: [[WV3:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> vector<16xf32>
// CHECK-COUNT-3: llvm.intr.fma([[WV3]], {{%[0-9]+}}, {{%[0-9]+}})
// CHECK-NOT: llvm.intr.fma
// CHECK-NOT: llvm.fmul

// The output transform starts from the bias.
// CHECK: llvm.getelementptr inbounds [[BP]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-COUNT-16: llvm.getelementptr inbounds [[PRODUCTS]]
// CHECK-NOT: llvm.fmul
// CHECK: llvm.func @winograd(
func.func @winograd(%x: tensor<1x16x6x6xf32>, %w: tensor<16x1x16x16xf32>, %b: tensor<16xf32>) -> tensor<1x16x6x6xf32> {
  %y = rlx.conv %x, %w, %b {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_before = array<i64: 1, 1>, pad_after = array<i64: 1, 1>, weight_lanes = 16 : i64, winograd} : (tensor<1x16x6x6xf32>, tensor<16x1x16x16xf32>, tensor<16xf32>) -> tensor<1x16x6x6xf32>
  func.return %y : tensor<1x16x6x6xf32>
}
