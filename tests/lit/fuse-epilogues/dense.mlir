// RUN: rlx-opt %s --split-input-file -p fuse-elementwise,fuse-epilogues,canonicalize-broadcast | filecheck %s

// bias + gelu after a matmul become its epilogue: one contraction region whose
// body takes the product's element first, then the bias read through (d1).

// CHECK-LABEL: func.func @dense_gelu(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<64x32xf32>, [[W:%[a-zA-Z0-9_]+]]: tensor<32x16xf32>, [[B:%[a-zA-Z0-9_]+]]: tensor<16xf32>
// CHECK-NOT: rlx.matmul
// CHECK-NEXT: [[Y:%[a-zA-Z0-9_]+]] = rlx.contraction_region ins([[X]], [[W]], [[B]] : tensor<64x32xf32>, tensor<32x16xf32>, tensor<16xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d1)>], transpose_lhs = false, transpose_rhs = false} -> tensor<64x16xf32> {
// CHECK-NEXT: ^{{.*}}([[ACC:%[a-zA-Z0-9_]+]]: f32, [[BIAS:%[a-zA-Z0-9_]+]]: f32):
// CHECK-NEXT: [[S:%[a-zA-Z0-9_]+]] = rlx.add [[ACC]], [[BIAS]] : (f32, f32) -> f32
// CHECK-NEXT: [[G:%[a-zA-Z0-9_]+]] = rlx.gelu [[S]] : (f32) -> f32
// CHECK-NEXT: rlx.yield [[G]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return [[Y]] : tensor<64x16xf32>
func.func @dense_gelu(%x: tensor<64x32xf32>, %w: tensor<32x16xf32>, %b: tensor<16xf32>) -> tensor<64x16xf32> {
  %m = rlx.matmul %x, %w : (tensor<64x32xf32>, tensor<32x16xf32>) -> tensor<64x16xf32>
  %s = rlx.add %m, %b : (tensor<64x16xf32>, tensor<16xf32>) -> tensor<64x16xf32>
  %g = rlx.gelu %s : (tensor<64x16xf32>) -> tensor<64x16xf32>
  func.return %g : tensor<64x16xf32>
}

// -----

// A residual read as the second operand: the product still comes first in the
// body, the residual keeps its identity map; the transpose flag carries over.

// CHECK-LABEL: func.func @residual(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<8x4xf64>, [[W:%[a-zA-Z0-9_]+]]: tensor<8x4xf64>, [[R:%[a-zA-Z0-9_]+]]: tensor<8x8xf64>
// CHECK-NEXT: [[Y:%[a-zA-Z0-9_]+]] = rlx.contraction_region ins([[X]], [[W]], [[R]] : tensor<8x4xf64>, tensor<8x4xf64>, tensor<8x8xf64>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], transpose_lhs = false, transpose_rhs = true} -> tensor<8x8xf64> {
// CHECK-NEXT: ^{{.*}}([[ACC:%[a-zA-Z0-9_]+]]: f64, [[RES:%[a-zA-Z0-9_]+]]: f64):
// CHECK-NEXT: [[S:%[a-zA-Z0-9_]+]] = rlx.sub [[RES]], [[ACC]] : (f64, f64) -> f64
// CHECK-NEXT: rlx.yield [[S]] : f64
func.func @residual(%x: tensor<8x4xf64>, %w: tensor<8x4xf64>, %r: tensor<8x8xf64>) -> tensor<8x8xf64> {
  %m = rlx.matmul %x, %w {transpose_rhs = true} : (tensor<8x4xf64>, tensor<8x4xf64>) -> tensor<8x8xf64>
  %e = rlx.exp %r : (tensor<8x8xf64>) -> tensor<8x8xf64>
  %s = rlx.sub %r, %m : (tensor<8x8xf64>, tensor<8x8xf64>) -> tensor<8x8xf64>
  func.return %s : tensor<8x8xf64>
}

// -----

// A batched lhs times a 2-D rhs is one GEMM over its rows: the product and its
// epilogue become one [rows, N] contraction region between reshapes (views), the
// bias read through (d1) as before, the residual reshaped to rows as well.

// CHECK-LABEL: func.func @rows(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<2x8x32xf32>, [[W:%[a-zA-Z0-9_]+]]: tensor<32x16xf32>, [[B:%[a-zA-Z0-9_]+]]: tensor<16xf32>, [[R:%[a-zA-Z0-9_]+]]: tensor<2x8x16xf32>
// CHECK-NEXT: [[R2:%[a-zA-Z0-9_]+]] = rlx.reshape [[R]] : (tensor<2x8x16xf32>) -> tensor<16x16xf32>
// CHECK-NEXT: [[X2:%[a-zA-Z0-9_]+]] = rlx.reshape [[X]] : (tensor<2x8x32xf32>) -> tensor<16x32xf32>
// CHECK-NEXT: [[Y:%[a-zA-Z0-9_]+]] = rlx.contraction_region ins([[X2]], [[W]], [[B]], [[R2]] : tensor<16x32xf32>, tensor<32x16xf32>, tensor<16xf32>, tensor<16x16xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], transpose_lhs = false, transpose_rhs = false} -> tensor<16x16xf32> {
// CHECK-NEXT: ^{{.*}}([[ACC:%[a-zA-Z0-9_]+]]: f32, [[BIAS:%[a-zA-Z0-9_]+]]: f32, [[RES:%[a-zA-Z0-9_]+]]: f32):
// CHECK-NEXT: [[S:%[a-zA-Z0-9_]+]] = rlx.add [[ACC]], [[BIAS]] : (f32, f32) -> f32
// CHECK-NEXT: [[T:%[a-zA-Z0-9_]+]] = rlx.add [[S]], [[RES]] : (f32, f32) -> f32
// CHECK-NEXT: rlx.yield [[T]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: [[Y3:%[a-zA-Z0-9_]+]] = rlx.reshape [[Y]] : (tensor<16x16xf32>) -> tensor<2x8x16xf32>
// CHECK-NEXT: func.return [[Y3]] : tensor<2x8x16xf32>
func.func @rows(%x: tensor<2x8x32xf32>, %w: tensor<32x16xf32>, %b: tensor<16xf32>, %r: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  %m = rlx.matmul %x, %w : (tensor<2x8x32xf32>, tensor<32x16xf32>) -> tensor<2x8x16xf32>
  %s = rlx.add %m, %b : (tensor<2x8x16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
  %t = rlx.add %s, %r : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  func.return %t : tensor<2x8x16xf32>
}

// -----

// Left alone: the product has a second user (it must be materialized anyway),
// a batched matmul, and an epilogue that changes the element type.

// CHECK-LABEL: func.func @leave_alone(
// CHECK-NOT: rlx.contraction_region
// CHECK: rlx.matmul
// CHECK: rlx.matmul
// CHECK: rlx.matmul
// CHECK-NOT: rlx.contraction_region
// CHECK: func.return
func.func @leave_alone(%x: tensor<4x3xf32>, %w: tensor<3x5xf32>, %bx: tensor<2x4x3xf32>, %bw: tensor<2x3x5xf32>) -> (tensor<4x5xf32>, tensor<4x5xf32>, tensor<2x4x5xf32>, tensor<4x5xf16>) {
  %m = rlx.matmul %x, %w : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  %t = rlx.tanh %m : (tensor<4x5xf32>) -> tensor<4x5xf32>
  %bm = rlx.matmul %bx, %bw : (tensor<2x4x3xf32>, tensor<2x3x5xf32>) -> tensor<2x4x5xf32>
  %bt = rlx.tanh %bm : (tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %c = rlx.matmul %x, %w : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  %h = rlx.cast %c : (tensor<4x5xf32>) -> tensor<4x5xf16>
  func.return %m, %t, %bt, %h : tensor<4x5xf32>, tensor<4x5xf32>, tensor<2x4x5xf32>, tensor<4x5xf16>
}

// -----

// Left alone too, as products over rows: an epilogue input that reads the rows
// otherwise than the result ([1, 8, 16] broadcast over the batch: a position
// table), a transposed lhs, and a batched rhs.

// CHECK-LABEL: func.func @rows_left_alone(
// CHECK-NOT: rlx.contraction_region
// CHECK-NOT: rlx.reshape
// CHECK: func.return
func.func @rows_left_alone(%x: tensor<2x8x32xf32>, %w: tensor<32x16xf32>, %p: tensor<1x8x16xf32>, %xt: tensor<2x32x8xf32>, %bw: tensor<2x32x16xf32>) -> (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>) {
  %m = rlx.matmul %x, %w : (tensor<2x8x32xf32>, tensor<32x16xf32>) -> tensor<2x8x16xf32>
  %s = rlx.add %m, %p : (tensor<2x8x16xf32>, tensor<1x8x16xf32>) -> tensor<2x8x16xf32>
  %mt = rlx.matmul %xt, %w {transpose_lhs = true} : (tensor<2x32x8xf32>, tensor<32x16xf32>) -> tensor<2x8x16xf32>
  %st = rlx.tanh %mt : (tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %mb = rlx.matmul %x, %bw : (tensor<2x8x32xf32>, tensor<2x32x16xf32>) -> tensor<2x8x16xf32>
  %sb = rlx.tanh %mb : (tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  func.return %s, %st, %sb : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>
}
