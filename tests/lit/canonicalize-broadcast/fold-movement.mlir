// RUN: rlx-opt %s --split-input-file -p fuse-elementwise,canonicalize-broadcast | filecheck %s

// fuse-elementwise turns the elementwise chains into rlx.elementwise_region;
// canonicalize-broadcast then folds a transpose, slice, narrow, reverse or
// expand feeding a region input into that input's indexing map, so the region
// reads the source directly and the movement op (without other users) is gone.

// A transpose is a permuted read: result (d0, d1) reads input (d1, d0).

// CHECK-LABEL: func.func @fold_transpose(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<3x4xf32>, [[Y:%[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK-NOT: rlx.transpose
// CHECK-NEXT: [[R:%[a-zA-Z0-9_]+]] = rlx.elementwise_region ins([[X]], [[Y]] : tensor<3x4xf32>, tensor<4x3xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>]} -> tensor<4x3xf32> {
// CHECK-NEXT: ^{{.*}}([[A:%[a-zA-Z0-9_]+]]: f32, [[B:%[a-zA-Z0-9_]+]]: f32):
// CHECK-NEXT: [[S:%[a-zA-Z0-9_]+]] = rlx.add [[A]], [[B]] : (f32, f32) -> f32
// CHECK-NEXT: [[E:%[a-zA-Z0-9_]+]] = rlx.exp [[S]] : (f32) -> f32
// CHECK-NEXT: rlx.yield [[E]] : f32
// CHECK-NEXT: }
// CHECK-NOT: rlx.transpose
// CHECK-NEXT: func.return [[R]] : tensor<4x3xf32>
func.func @fold_transpose(%x: tensor<3x4xf32>, %y: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %t = rlx.transpose %x {perm = array<i64: 1, 0>} : (tensor<3x4xf32>) -> tensor<4x3xf32>
  %a = rlx.add %t, %y : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %b = rlx.exp %a : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %b : tensor<4x3xf32>
}

// -----

// A slice is a strided read; a negative start counts from the end (-1 on an
// axis of 8 is 7) and a negative step walks backwards: rows 7, 5, 3, 1 and
// columns 1, 3, 5.

// CHECK-LABEL: func.func @fold_slice_negative_step(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<8x6xf32>
// CHECK-NOT: rlx.slice
// CHECK-NEXT: [[R:%[a-zA-Z0-9_]+]] = rlx.elementwise_region ins([[X]] : tensor<8x6xf32>) {indexing_maps = [affine_map<(d0, d1) -> (((d0 * -2) + 7), ((d1 * 2) + 1))>]} -> tensor<4x3xf32> {
// CHECK: rlx.tanh
// CHECK-NEXT: rlx.exp
// CHECK-NOT: rlx.slice
// CHECK: func.return [[R]] : tensor<4x3xf32>
func.func @fold_slice_negative_step(%x: tensor<8x6xf32>) -> tensor<4x3xf32> {
  %s = rlx.slice %x {starts = array<i64: -1, 1>, steps = array<i64: -2, 2>} : (tensor<8x6xf32>) -> tensor<4x3xf32>
  %a = rlx.tanh %s : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %b = rlx.exp %a : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %b : tensor<4x3xf32>
}

// -----

// A narrow offsets its axis by start.

// CHECK-LABEL: func.func @fold_narrow(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<4x6xf32>, [[Y:%[a-zA-Z0-9_]+]]: tensor<4x2xf32>
// CHECK-NOT: rlx.narrow
// CHECK-NEXT: [[R:%[a-zA-Z0-9_]+]] = rlx.elementwise_region ins([[X]], [[Y]] : tensor<4x6xf32>, tensor<4x2xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d0, (d1 + 3))>, affine_map<(d0, d1) -> (d0, d1)>]} -> tensor<4x2xf32> {
// CHECK: rlx.mul
// CHECK-NEXT: rlx.neg
// CHECK-NOT: rlx.narrow
// CHECK: func.return [[R]] : tensor<4x2xf32>
func.func @fold_narrow(%x: tensor<4x6xf32>, %y: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %n = rlx.narrow %x {axis = -1 : i64, start = 3 : i64, length = 2 : i64} : (tensor<4x6xf32>) -> tensor<4x2xf32>
  %a = rlx.mul %n, %y : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %b = rlx.neg %a : (tensor<4x2xf32>) -> tensor<4x2xf32>
  func.return %b : tensor<4x2xf32>
}

// -----

// A reverse reads index n - 1 - d on each flipped axis.

// CHECK-LABEL: func.func @fold_reverse(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<4x6xf32>
// CHECK-NOT: rlx.reverse
// CHECK-NEXT: [[R:%[a-zA-Z0-9_]+]] = rlx.elementwise_region ins([[X]] : tensor<4x6xf32>) {indexing_maps = [affine_map<(d0, d1) -> (((d0 * -1) + 3), ((d1 * -1) + 5))>]} -> tensor<4x6xf32> {
// CHECK: rlx.sin
// CHECK-NEXT: rlx.cos
// CHECK-NOT: rlx.reverse
// CHECK: func.return [[R]] : tensor<4x6xf32>
func.func @fold_reverse(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %r = rlx.reverse %x {axes = array<i64: 0, -1>} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %a = rlx.sin %r : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %b = rlx.cos %a : (tensor<4x6xf32>) -> tensor<4x6xf32>
  func.return %b : tensor<4x6xf32>
}

// -----

// An expand reads index 0 on a stretched size-1 axis.

// CHECK-LABEL: func.func @fold_expand(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<4x1xf32>, [[Y:%[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK-NOT: rlx.expand
// CHECK-NEXT: [[R:%[a-zA-Z0-9_]+]] = rlx.elementwise_region ins([[X]], [[Y]] : tensor<4x1xf32>, tensor<4x3xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>]} -> tensor<4x3xf32> {
// CHECK-NOT: rlx.expand
// CHECK: func.return [[R]] : tensor<4x3xf32>
func.func @fold_expand(%x: tensor<4x1xf32>, %y: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %e = rlx.expand %x : (tensor<4x1xf32>) -> tensor<4x3xf32>
  %a = rlx.add %e, %y : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %b = rlx.exp %a : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %b : tensor<4x3xf32>
}

// -----

// A chain of movement ops composes into one map:
// r[i, j] = n[3 - i, j] = t[3 - i, j + 2] = x[j + 2, 3 - i].

// CHECK-LABEL: func.func @fold_chain(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<6x4xf32>
// CHECK-NOT: rlx.transpose
// CHECK-NOT: rlx.narrow
// CHECK-NOT: rlx.reverse
// CHECK-NEXT: [[R:%[a-zA-Z0-9_]+]] = rlx.elementwise_region ins([[X]] : tensor<6x4xf32>) {indexing_maps = [affine_map<(d0, d1) -> ((d1 + 2), ((d0 * -1) + 3))>]} -> tensor<4x3xf32> {
// CHECK-NOT: rlx.transpose
// CHECK-NOT: rlx.narrow
// CHECK-NOT: rlx.reverse
// CHECK: func.return [[R]] : tensor<4x3xf32>
func.func @fold_chain(%x: tensor<6x4xf32>) -> tensor<4x3xf32> {
  %t = rlx.transpose %x {perm = array<i64: 1, 0>} : (tensor<6x4xf32>) -> tensor<4x6xf32>
  %n = rlx.narrow %t {axis = 1 : i64, start = 2 : i64, length = 3 : i64} : (tensor<4x6xf32>) -> tensor<4x3xf32>
  %r = rlx.reverse %n {axes = array<i64: 0>} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %a = rlx.exp %r : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %b = rlx.neg %a : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %b : tensor<4x3xf32>
}

// -----

// An expand of a transpose: the new leading axes are dropped and the
// stretched axis reads 0: e[a, b, c] = t[0, c] = x[c, 0].

// CHECK-LABEL: func.func @fold_expand_of_transpose(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<3x1xf32>, [[Y:%[a-zA-Z0-9_]+]]: tensor<2x4x3xf32>
// CHECK-NOT: rlx.expand
// CHECK-NOT: rlx.transpose
// CHECK-NEXT: [[R:%[a-zA-Z0-9_]+]] = rlx.elementwise_region ins([[X]], [[Y]] : tensor<3x1xf32>, tensor<2x4x3xf32>) {indexing_maps = [affine_map<(d0, d1, d2) -> (d2, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>]} -> tensor<2x4x3xf32> {
// CHECK-NOT: rlx.expand
// CHECK-NOT: rlx.transpose
// CHECK: func.return [[R]] : tensor<2x4x3xf32>
func.func @fold_expand_of_transpose(%x: tensor<3x1xf32>, %y: tensor<2x4x3xf32>) -> tensor<2x4x3xf32> {
  %t = rlx.transpose %x {perm = array<i64: 1, 0>} : (tensor<3x1xf32>) -> tensor<1x3xf32>
  %e = rlx.expand %t : (tensor<1x3xf32>) -> tensor<2x4x3xf32>
  %a = rlx.add %e, %y : (tensor<2x4x3xf32>, tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
  %b = rlx.exp %a : (tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
  func.return %b : tensor<2x4x3xf32>
}

// -----

// A movement op with another, non-region user stays for that user (here the
// function result and a gather); the region still reads the source directly.

// CHECK-LABEL: func.func @shared_transpose_stays(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<3x4xf32>, [[I:%[a-zA-Z0-9_]+]]: tensor<2xi64>
// CHECK-NEXT: [[T:%[a-zA-Z0-9_]+]] = rlx.transpose [[X]] {perm = array<i64: 1, 0>} : (tensor<3x4xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: [[R:%[a-zA-Z0-9_]+]] = rlx.elementwise_region ins([[X]] : tensor<3x4xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>]} -> tensor<4x3xf32> {
// CHECK: rlx.yield
// CHECK-NEXT: }
// CHECK-NEXT: [[G:%[a-zA-Z0-9_]+]] = rlx.gather [[T]], [[I]] : (tensor<4x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
// CHECK-NEXT: func.return [[R]], [[T]], [[G]] : tensor<4x3xf32>, tensor<4x3xf32>, tensor<2x3xf32>
func.func @shared_transpose_stays(%x: tensor<3x4xf32>, %i: tensor<2xi64>) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<2x3xf32>) {
  %t = rlx.transpose %x {perm = array<i64: 1, 0>} : (tensor<3x4xf32>) -> tensor<4x3xf32>
  %a = rlx.exp %t : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %b = rlx.neg %a : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %g = rlx.gather %t, %i : (tensor<4x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  func.return %b, %t, %g : tensor<4x3xf32>, tensor<4x3xf32>, tensor<2x3xf32>
}

// -----

// A slice whose only user is not elementwise (a gather) is not folded.

// CHECK-LABEL: func.func @slice_into_gather_stays(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<8x3xf32>, [[I:%[a-zA-Z0-9_]+]]: tensor<2xi64>
// CHECK-NEXT: [[S:%[a-zA-Z0-9_]+]] = rlx.slice [[X]] {starts = array<i64: 0, 0>, steps = array<i64: 2, 1>} : (tensor<8x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: [[G:%[a-zA-Z0-9_]+]] = rlx.gather [[S]], [[I]] : (tensor<4x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
// CHECK-NEXT: func.return [[G]] : tensor<2x3xf32>
func.func @slice_into_gather_stays(%x: tensor<8x3xf32>, %i: tensor<2xi64>) -> tensor<2x3xf32> {
  %s = rlx.slice %x {starts = array<i64: 0, 0>, steps = array<i64: 2, 1>} : (tensor<8x3xf32>) -> tensor<4x3xf32>
  %g = rlx.gather %s, %i : (tensor<4x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  func.return %g : tensor<2x3xf32>
}
