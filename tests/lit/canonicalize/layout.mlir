// RUN: rlx-opt %s -p canonicalize --split-input-file | filecheck %s

// Canonicalization patterns of the rlx layout ops, run by xDSL's
// `canonicalize` (which also erases the pure ops left without users).

// transpose(transpose(x)) is one transpose by the composed permutation:
// np.transpose(np.transpose(x, p), q) == np.transpose(x, [p[k] for k in q]).
// Here p = q = [1, 2, 0], so the result is x transposed by [2, 0, 1].

// CHECK-LABEL: func.func @transpose_chain(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<2x3x4xf32>
// CHECK-NEXT: [[T:%[a-zA-Z0-9_]+]] = rlx.transpose [[X]] {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
// CHECK-NEXT: func.return [[T]] : tensor<4x2x3xf32>
func.func @transpose_chain(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %a = rlx.transpose %x {perm = array<i64: 1, 2, 0>} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  %b = rlx.transpose %a {perm = array<i64: 1, 2, 0>} : (tensor<3x4x2xf32>) -> tensor<4x2x3xf32>
  func.return %b : tensor<4x2x3xf32>
}

// -----

// Three transposes fold to one as well.

// CHECK-LABEL: func.func @transpose_chain_of_three(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<2x3x4xf32>
// CHECK-NEXT: [[T:%[a-zA-Z0-9_]+]] = rlx.transpose [[X]] {perm = array<i64: 1, 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
// CHECK-NEXT: func.return [[T]] : tensor<3x2x4xf32>
func.func @transpose_chain_of_three(%x: tensor<2x3x4xf32>) -> tensor<3x2x4xf32> {
  %a = rlx.transpose %x {perm = array<i64: 1, 2, 0>} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  %b = rlx.transpose %a {perm = array<i64: 0, 2, 1>} : (tensor<3x4x2xf32>) -> tensor<3x2x4xf32>
  %c = rlx.transpose %b {perm = array<i64: 0, 1, 2>} : (tensor<3x2x4xf32>) -> tensor<3x2x4xf32>
  func.return %c : tensor<3x2x4xf32>
}

// -----

// Inverse permutations cancel: [1, 2, 0] then [2, 0, 1] is x itself.

// CHECK-LABEL: func.func @transpose_cancel(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<2x3x4xf32>
// CHECK-NOT: rlx.transpose
// CHECK-NEXT: [[N:%[a-zA-Z0-9_]+]] = rlx.neg [[X]]
// CHECK-NEXT: func.return [[N]] : tensor<2x3x4xf32>
func.func @transpose_cancel(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %a = rlx.transpose %x {perm = array<i64: 1, 2, 0>} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  %b = rlx.transpose %a {perm = array<i64: 2, 0, 1>} : (tensor<3x4x2xf32>) -> tensor<2x3x4xf32>
  %n = rlx.neg %b : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  func.return %n : tensor<2x3x4xf32>
}

// -----

// A 2-D transpose applied twice cancels; the inner transpose stays for its
// other user.

// CHECK-LABEL: func.func @transpose_cancel_shared_inner(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<3x4xf32>
// CHECK-NEXT: [[T:%[a-zA-Z0-9_]+]] = rlx.transpose [[X]] {perm = array<i64: 1, 0>} : (tensor<3x4xf32>) -> tensor<4x3xf32>
// CHECK-NOT: rlx.transpose
// CHECK-NEXT: func.return [[X]], [[T]] : tensor<3x4xf32>, tensor<4x3xf32>
func.func @transpose_cancel_shared_inner(%x: tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<4x3xf32>) {
  %a = rlx.transpose %x {perm = array<i64: 1, 0>} : (tensor<3x4xf32>) -> tensor<4x3xf32>
  %b = rlx.transpose %a {perm = array<i64: 1, 0>} : (tensor<4x3xf32>) -> tensor<3x4xf32>
  func.return %b, %a : tensor<3x4xf32>, tensor<4x3xf32>
}

// -----

// reverse(reverse(x)) reverses the symmetric difference of the axes (after
// normalizing negative axes): {0, 1} ^ {1, 2} = {0, 2}.

// CHECK-LABEL: func.func @reverse_chain(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<2x3x4xf32>
// CHECK-NEXT: [[R:%[a-zA-Z0-9_]+]] = rlx.reverse [[X]] {axes = array<i64: 0, 2>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT: func.return [[R]] : tensor<2x3x4xf32>
func.func @reverse_chain(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %a = rlx.reverse %x {axes = array<i64: 0, 1>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %b = rlx.reverse %a {axes = array<i64: -2, 2>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  func.return %b : tensor<2x3x4xf32>
}

// -----

// Reversing the same axes twice is x (axis -1 is axis 1 here).

// CHECK-LABEL: func.func @reverse_cancel(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<3x4xf32>
// CHECK-NOT: rlx.reverse
// CHECK-NEXT: func.return [[X]] : tensor<3x4xf32>
func.func @reverse_cancel(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %a = rlx.reverse %x {axes = array<i64: 0, 1>} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %b = rlx.reverse %a {axes = array<i64: -1, 0>} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  func.return %b : tensor<3x4xf32>
}

// -----

// Identity layout ops are their input: a transpose by the identity, a
// unit-step full slice (any step on a size-1 axis), a full narrow, a zero
// pad (whatever its mode), a reverse of only size-1 axes and of no axes.

// CHECK-LABEL: func.func @identities(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<1x3x4xf32>
// CHECK-NOT: rlx.transpose
// CHECK-NOT: rlx.slice
// CHECK-NOT: rlx.narrow
// CHECK-NOT: rlx.pad
// CHECK-NOT: rlx.reverse
// CHECK-NEXT: func.return [[X]] : tensor<1x3x4xf32>
func.func @identities(%x: tensor<1x3x4xf32>) -> tensor<1x3x4xf32> {
  %a = rlx.transpose %x {perm = array<i64: 0, 1, 2>} : (tensor<1x3x4xf32>) -> tensor<1x3x4xf32>
  %b = rlx.slice %a {starts = array<i64: 0, 0, 0>, steps = array<i64: 5, 1, 1>} : (tensor<1x3x4xf32>) -> tensor<1x3x4xf32>
  %c = rlx.narrow %b {axis = 1 : i64, start = 0 : i64, length = 3 : i64} : (tensor<1x3x4xf32>) -> tensor<1x3x4xf32>
  %d = rlx.pad %c {before = array<i64: 0, 0, 0>, after = array<i64: 0, 0, 0>, mode = "reflect"} : (tensor<1x3x4xf32>) -> tensor<1x3x4xf32>
  %e = rlx.reverse %d {axes = array<i64: 0>} : (tensor<1x3x4xf32>) -> tensor<1x3x4xf32>
  %f = rlx.reverse %e {axes = array<i64>} : (tensor<1x3x4xf32>) -> tensor<1x3x4xf32>
  func.return %f : tensor<1x3x4xf32>
}

// -----

// A full slice written with negative starts (counting from the end) is still
// the identity: -3 on an axis of size 3 is 0.

// CHECK-LABEL: func.func @identity_slice_negative_start(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<3x4xf32>
// CHECK-NOT: rlx.slice
// CHECK-NEXT: func.return [[X]] : tensor<3x4xf32>
func.func @identity_slice_negative_start(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %s = rlx.slice %x {starts = array<i64: -3, 0>, steps = array<i64: 1, 1>} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  func.return %s : tensor<3x4xf32>
}

// -----

// Ops that move data stay: a single transpose, a slice that skips or
// reverses (same type as the input, yet not the identity), a narrow that is
// a strict part, a pad of non-zero width, a reverse of a size > 1 axis.

// CHECK-LABEL: func.func @must_stay(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<4x4xf32>
// CHECK-NEXT: [[T:%[a-zA-Z0-9_]+]] = rlx.transpose [[X]] {perm = array<i64: 1, 0>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: [[S:%[a-zA-Z0-9_]+]] = rlx.slice [[T]] {starts = array<i64: 0, 3>, steps = array<i64: 1, -1>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: [[S2:%[a-zA-Z0-9_]+]] = rlx.slice [[S]] {starts = array<i64: 0, 0>, steps = array<i64: 2, 1>} : (tensor<4x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: [[N:%[a-zA-Z0-9_]+]] = rlx.narrow [[S2]] {axis = 1 : i64, start = 1 : i64, length = 3 : i64} : (tensor<2x4xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: [[P:%[a-zA-Z0-9_]+]] = rlx.pad [[N]] {before = array<i64: 0, 0>, after = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: [[R:%[a-zA-Z0-9_]+]] = rlx.reverse [[P]] {axes = array<i64: 0>} : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: func.return [[R]] : tensor<2x4xf32>
func.func @must_stay(%x: tensor<4x4xf32>) -> tensor<2x4xf32> {
  %t = rlx.transpose %x {perm = array<i64: 1, 0>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = rlx.slice %t {starts = array<i64: 0, 3>, steps = array<i64: 1, -1>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %s2 = rlx.slice %s {starts = array<i64: 0, 0>, steps = array<i64: 2, 1>} : (tensor<4x4xf32>) -> tensor<2x4xf32>
  %n = rlx.narrow %s2 {axis = 1 : i64, start = 1 : i64, length = 3 : i64} : (tensor<2x4xf32>) -> tensor<2x3xf32>
  %p = rlx.pad %n {before = array<i64: 0, 0>, after = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<2x4xf32>
  %r = rlx.reverse %p {axes = array<i64: 0>} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %r : tensor<2x4xf32>
}

// -----

// A transpose of another op's result is not a chain; a reverse after a
// transpose is not a reverse chain. Nothing folds.

// CHECK-LABEL: func.func @not_chains(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<3x4xf32>
// CHECK-NEXT: [[R:%[a-zA-Z0-9_]+]] = rlx.reverse [[X]] {axes = array<i64: 1>}
// CHECK-NEXT: [[T:%[a-zA-Z0-9_]+]] = rlx.transpose [[R]] {perm = array<i64: 1, 0>}
// CHECK-NEXT: [[R2:%[a-zA-Z0-9_]+]] = rlx.reverse [[T]] {axes = array<i64: 0>}
// CHECK-NEXT: func.return [[R2]] : tensor<4x3xf32>
func.func @not_chains(%x: tensor<3x4xf32>) -> tensor<4x3xf32> {
  %r = rlx.reverse %x {axes = array<i64: 1>} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %t = rlx.transpose %r {perm = array<i64: 1, 0>} : (tensor<3x4xf32>) -> tensor<4x3xf32>
  %r2 = rlx.reverse %t {axes = array<i64: 0>} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %r2 : tensor<4x3xf32>
}
