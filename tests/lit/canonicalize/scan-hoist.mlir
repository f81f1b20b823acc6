// RUN: rlx-opt %s -p canonicalize --split-input-file | filecheck %s

// A scan body op that reads only rows of xs and broadcast inputs (no carry)
// computes one row of a tensor over all steps: canonicalize moves it out of
// the loop as one op on the stacked xs, whose rows come in as a new xs, and
// drops the inputs the body no longer reads. x_t @ W_ihᵀ becomes one GEMM over
// length·B rows; the carry's matmul stays in the loop.

// CHECK-LABEL: func.func @elman(
// CHECK-SAME: [[H0:%[a-zA-Z0-9_]+]]: tensor<2x4xf32>, [[WI:%[a-zA-Z0-9_]+]]: tensor<4x3xf32>, [[WH:%[a-zA-Z0-9_]+]]: tensor<4x4xf32>, [[XS:%[a-zA-Z0-9_]+]]: tensor<5x2x3xf32>
// CHECK-NEXT: [[P:%[a-zA-Z0-9_]+]] = rlx.matmul [[XS]], [[WI]] {transpose_rhs = true} : (tensor<5x2x3xf32>, tensor<4x3xf32>) -> tensor<5x2x4xf32>
// CHECK-NEXT: rlx.scan [[H0]], [[WH]], [[P]] {length = 5 : i64, num_broadcast = 1 : i64} : (tensor<2x4xf32>, tensor<4x4xf32>, tensor<5x2x4xf32>) -> tensor<2x4xf32> {
// CHECK-NEXT: ^{{.*}}([[C:%[a-zA-Z0-9_]+]]: tensor<2x4xf32>, [[W:%[a-zA-Z0-9_]+]]: tensor<4x4xf32>, [[ROW:%[a-zA-Z0-9_]+]]: tensor<2x4xf32>):
// CHECK-NEXT: [[R:%[a-zA-Z0-9_]+]] = rlx.matmul [[C]], [[W]] {transpose_rhs = true}
// CHECK-NEXT: [[S:%[a-zA-Z0-9_]+]] = rlx.add [[ROW]], [[R]]
// CHECK-NEXT: rlx.tanh [[S]]
func.func @elman(%h0: tensor<2x4xf32>, %wi: tensor<4x3xf32>, %wh: tensor<4x4xf32>, %xs: tensor<5x2x3xf32>) -> tensor<2x4xf32> {
  %h = rlx.scan %h0, %wi, %wh, %xs {length = 5 : i64, num_broadcast = 2 : i64} : (tensor<2x4xf32>, tensor<4x3xf32>, tensor<4x4xf32>, tensor<5x2x3xf32>) -> tensor<2x4xf32> {
  ^bb0(%c: tensor<2x4xf32>, %a: tensor<4x3xf32>, %b: tensor<4x4xf32>, %x: tensor<2x3xf32>):
    %p = rlx.matmul %x, %a {transpose_rhs = true} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
    %r = rlx.matmul %c, %b {transpose_rhs = true} : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    %s = rlx.add %p, %r : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    %n = rlx.tanh %s : (tensor<2x4xf32>) -> tensor<2x4xf32>
    rlx.yield %n : tensor<2x4xf32>
  }
  func.return %h : tensor<2x4xf32>
}

// -----

// A chain of stepwise ops moves out op by op; a body that reads no xs row
// keeps one xs (the scan's length is read off it).
// CHECK-LABEL: func.func @chain(
// CHECK-NEXT: [[E:%[a-zA-Z0-9_]+]] = rlx.exp %{{.*}} : (tensor<6x3xf32>) -> tensor<6x3xf32>
// CHECK-NEXT: [[M:%[a-zA-Z0-9_]+]] = rlx.mul [[E]], %{{.*}} : (tensor<6x3xf32>, tensor<3xf32>) -> tensor<6x3xf32>
// CHECK-NEXT: rlx.scan %{{.*}}, [[M]] {length = 6 : i64} : (tensor<3xf32>, tensor<6x3xf32>) -> tensor<3xf32> {
// CHECK-NEXT: ^{{.*}}([[C:%[a-zA-Z0-9_]+]]: tensor<3xf32>, [[ROW:%[a-zA-Z0-9_]+]]: tensor<3xf32>):
// CHECK-NEXT: rlx.add [[C]], [[ROW]]
func.func @chain(%c0: tensor<3xf32>, %w: tensor<3xf32>, %xs: tensor<6x3xf32>) -> tensor<3xf32> {
  %r = rlx.scan %c0, %w, %xs {length = 6 : i64, num_broadcast = 1 : i64} : (tensor<3xf32>, tensor<3xf32>, tensor<6x3xf32>) -> tensor<3xf32> {
  ^bb0(%c: tensor<3xf32>, %ww: tensor<3xf32>, %x: tensor<3xf32>):
    %e = rlx.exp %x : (tensor<3xf32>) -> tensor<3xf32>
    %m = rlx.mul %e, %ww : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %s = rlx.add %c, %m : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    rlx.yield %s : tensor<3xf32>
  }
  func.return %r : tensor<3xf32>
}
