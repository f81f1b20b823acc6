// RUN: rlx-opt %s --split-input-file -p canonicalize-broadcast | filecheck %s

// An rlx.transpose that swaps only the last two axes of a matmul operand
// becomes that operand's transpose flag: the matmul reads the untransposed
// value (BLAS gets CblasTrans) and no copy is made. The transpose is erased
// when the matmul was its only user, and kept for any other user.

// The lhs of a 2-D matmul: perm [1, 0] sets transpose_lhs.

// CHECK-LABEL: func.func @fold_lhs(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<5x3xf32>, [[W:%[a-zA-Z0-9_]+]]: tensor<5x4xf32>
// CHECK-NOT: rlx.transpose
// CHECK-NEXT: [[Y:%[a-zA-Z0-9_]+]] = rlx.matmul [[X]], [[W]] {transpose_lhs = true} : (tensor<5x3xf32>, tensor<5x4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT: func.return [[Y]] : tensor<3x4xf32>
func.func @fold_lhs(%x: tensor<5x3xf32>, %w: tensor<5x4xf32>) -> tensor<3x4xf32> {
  %t = rlx.transpose %x {perm = array<i64: 1, 0>} : (tensor<5x3xf32>) -> tensor<3x5xf32>
  %y = rlx.matmul %t, %w : (tensor<3x5xf32>, tensor<5x4xf32>) -> tensor<3x4xf32>
  func.return %y : tensor<3x4xf32>
}

// -----

// A batched rhs: perm [0, 2, 1] keeps the batch axis and swaps the matrix
// axes, so it sets transpose_rhs (the x @ w.T of an attention score).

// CHECK-LABEL: func.func @fold_batched_rhs(
// CHECK-SAME: [[Q:%[a-zA-Z0-9_]+]]: tensor<2x3x8xf32>, [[K:%[a-zA-Z0-9_]+]]: tensor<2x6x8xf32>
// CHECK-NOT: rlx.transpose
// CHECK-NEXT: [[S:%[a-zA-Z0-9_]+]] = rlx.matmul [[Q]], [[K]] {transpose_rhs = true} : (tensor<2x3x8xf32>, tensor<2x6x8xf32>) -> tensor<2x3x6xf32>
// CHECK-NEXT: func.return [[S]] : tensor<2x3x6xf32>
func.func @fold_batched_rhs(%q: tensor<2x3x8xf32>, %k: tensor<2x6x8xf32>) -> tensor<2x3x6xf32> {
  %kt = rlx.transpose %k {perm = array<i64: 0, 2, 1>} : (tensor<2x6x8xf32>) -> tensor<2x8x6xf32>
  %s = rlx.matmul %q, %kt : (tensor<2x3x8xf32>, tensor<2x8x6xf32>) -> tensor<2x3x6xf32>
  func.return %s : tensor<2x3x6xf32>
}

// -----

// Both operands at once; a flag already set flips back: transposing a stored
// transpose is the plain operand, so transpose_rhs ends false (not printed).

// CHECK-LABEL: func.func @fold_both_and_flip(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<5x3xf32>, [[W:%[a-zA-Z0-9_]+]]: tensor<5x4xf32>
// CHECK-NOT: rlx.transpose
// CHECK-NEXT: [[Y:%[a-zA-Z0-9_]+]] = rlx.matmul [[X]], [[W]] {transpose_lhs = true} : (tensor<5x3xf32>, tensor<5x4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT: func.return [[Y]] : tensor<3x4xf32>
func.func @fold_both_and_flip(%x: tensor<5x3xf32>, %w: tensor<5x4xf32>) -> tensor<3x4xf32> {
  %xt = rlx.transpose %x {perm = array<i64: 1, 0>} : (tensor<5x3xf32>) -> tensor<3x5xf32>
  %wt = rlx.transpose %w {perm = array<i64: 1, 0>} : (tensor<5x4xf32>) -> tensor<4x5xf32>
  %y = rlx.matmul %xt, %wt {transpose_rhs = true} : (tensor<3x5xf32>, tensor<4x5xf32>) -> tensor<3x4xf32>
  func.return %y : tensor<3x4xf32>
}

// -----

// The transpose has another user (it is returned): the matmul still reads
// the source with the flag set, and the transpose stays for the return.

// CHECK-LABEL: func.func @other_user_keeps_transpose(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<5x3xf32>, [[W:%[a-zA-Z0-9_]+]]: tensor<5x4xf32>
// CHECK-NEXT: [[T:%[a-zA-Z0-9_]+]] = rlx.transpose [[X]] {perm = array<i64: 1, 0>}
// CHECK-NEXT: [[Y:%[a-zA-Z0-9_]+]] = rlx.matmul [[X]], [[W]] {transpose_lhs = true}
// CHECK-NEXT: func.return [[Y]], [[T]] : tensor<3x4xf32>, tensor<3x5xf32>
func.func @other_user_keeps_transpose(%x: tensor<5x3xf32>, %w: tensor<5x4xf32>) -> (tensor<3x4xf32>, tensor<3x5xf32>) {
  %t = rlx.transpose %x {perm = array<i64: 1, 0>} : (tensor<5x3xf32>) -> tensor<3x5xf32>
  %y = rlx.matmul %t, %w : (tensor<3x5xf32>, tensor<5x4xf32>) -> tensor<3x4xf32>
  func.return %y, %t : tensor<3x4xf32>, tensor<3x5xf32>
}

// -----

// Left alone: perm [1, 0, 2] moves a batch axis, which no BLAS flag can
// express, so the transpose and the matmul stay as they are.

// CHECK-LABEL: func.func @batch_permutation_left_alone(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<3x2x5xf32>, [[W:%[a-zA-Z0-9_]+]]: tensor<5x4xf32>
// CHECK-NEXT: [[T:%[a-zA-Z0-9_]+]] = rlx.transpose [[X]] {perm = array<i64: 1, 0, 2>} : (tensor<3x2x5xf32>) -> tensor<2x3x5xf32>
// CHECK-NEXT: [[Y:%[a-zA-Z0-9_]+]] = rlx.matmul [[T]], [[W]] : (tensor<2x3x5xf32>, tensor<5x4xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT: func.return [[Y]] : tensor<2x3x4xf32>
func.func @batch_permutation_left_alone(%x: tensor<3x2x5xf32>, %w: tensor<5x4xf32>) -> tensor<2x3x4xf32> {
  %t = rlx.transpose %x {perm = array<i64: 1, 0, 2>} : (tensor<3x2x5xf32>) -> tensor<2x3x5xf32>
  %y = rlx.matmul %t, %w : (tensor<2x3x5xf32>, tensor<5x4xf32>) -> tensor<2x3x4xf32>
  func.return %y : tensor<2x3x4xf32>
}

// -----

// Left alone: a full reversal [2, 1, 0] of a rank-3 operand also moves the
// batch axis.

// CHECK-LABEL: func.func @reversal_left_alone(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<3x4x5xf32>, [[W:%[a-zA-Z0-9_]+]]: tensor<2x5x3xf32>
// CHECK-NEXT: [[T:%[a-zA-Z0-9_]+]] = rlx.transpose [[W]] {perm = array<i64: 2, 1, 0>}
// CHECK-NEXT: rlx.matmul [[X]], [[T]] : (tensor<3x4x5xf32>, tensor<3x5x2xf32>) -> tensor<3x4x2xf32>
func.func @reversal_left_alone(%x: tensor<3x4x5xf32>, %w: tensor<2x5x3xf32>) -> tensor<3x4x2xf32> {
  %t = rlx.transpose %w {perm = array<i64: 2, 1, 0>} : (tensor<2x5x3xf32>) -> tensor<3x5x2xf32>
  %y = rlx.matmul %x, %t : (tensor<3x4x5xf32>, tensor<3x5x2xf32>) -> tensor<3x4x2xf32>
  func.return %y : tensor<3x4x2xf32>
}
