// RUN: rlx-opt %s --split-input-file -p canonicalize-broadcast | filecheck %s

// An expand feeding an elementwise op is redundant: the op broadcasts anyway.

// CHECK-LABEL: func.func @fold_into_add(
// CHECK-SAME: [[A:%[a-zA-Z0-9_]+]]: tensor<4x3xf32>, [[B:%[a-zA-Z0-9_]+]]: tensor<3xf32>
// CHECK-NOT: rlx.expand
// CHECK-NEXT: [[R:%[a-zA-Z0-9_]+]] = rlx.add [[A]], [[B]] : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: func.return [[R]] : tensor<4x3xf32>
func.func @fold_into_add(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %e = rlx.expand %b : (tensor<3xf32>) -> tensor<4x3xf32>
  %r = rlx.add %a, %e : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %r : tensor<4x3xf32>
}

// -----

// A size-1 axis stretched by the expand is stretched by the consumer instead;
// where takes the folded condition as well.

// CHECK-LABEL: func.func @fold_into_where(
// CHECK-SAME: [[C:%[a-zA-Z0-9_]+]]: tensor<4x1xi1>, [[A:%[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK-NOT: rlx.expand
// CHECK-NEXT: [[R:%[a-zA-Z0-9_]+]] = rlx.where [[C]], [[A]], [[A]] : (tensor<4x1xi1>, tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: func.return [[R]]
func.func @fold_into_where(%c: tensor<4x1xi1>, %a: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %e = rlx.expand %c : (tensor<4x1xi1>) -> tensor<4x3xi1>
  %r = rlx.where %e, %a, %a : (tensor<4x3xi1>, tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %r : tensor<4x3xf32>
}

// -----

// One expand with two elementwise users: both read the source, the expand goes.

// CHECK-LABEL: func.func @fold_into_two_users(
// CHECK-SAME: [[A:%[a-zA-Z0-9_]+]]: tensor<4x3xf32>, [[B:%[a-zA-Z0-9_]+]]: tensor<3xf32>
// CHECK-NOT: rlx.expand
// CHECK-NEXT: [[R:%[a-zA-Z0-9_]+]] = rlx.add [[A]], [[B]] : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: [[S:%[a-zA-Z0-9_]+]] = rlx.mul [[B]], [[A]] : (tensor<3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: func.return [[R]], [[S]]
func.func @fold_into_two_users(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  %e = rlx.expand %b : (tensor<3xf32>) -> tensor<4x3xf32>
  %r = rlx.add %a, %e : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %s = rlx.mul %e, %a : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %r, %s : tensor<4x3xf32>, tensor<4x3xf32>
}

// -----

// An expand feeding a region input is folded into that input's indexing map:
// the stretched axis reads index 0, the new leading axis is dropped.

// CHECK-LABEL: func.func @fold_into_region(
// CHECK-SAME: [[A:%[a-zA-Z0-9_]+]]: tensor<4x3xf32>, [[B:%[a-zA-Z0-9_]+]]: tensor<4x1xf32>
// CHECK-NOT: rlx.expand
// CHECK-NEXT: [[R:%[a-zA-Z0-9_]+]] = rlx.elementwise_region ins([[B]], [[A]] : tensor<4x1xf32>, tensor<4x3xf32>) {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, 0)>, affine_map<(d0, d1, d2) -> (d1, d2)>]} -> tensor<2x4x3xf32> {
// CHECK-NEXT: ^{{.*}}([[X:%[a-zA-Z0-9_]+]]: f32, [[Y:%[a-zA-Z0-9_]+]]: f32):
// CHECK-NEXT: [[S:%[a-zA-Z0-9_]+]] = rlx.add [[X]], [[Y]] : (f32, f32) -> f32
// CHECK-NEXT: rlx.yield [[S]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return [[R]]
func.func @fold_into_region(%a: tensor<4x3xf32>, %b: tensor<4x1xf32>) -> tensor<2x4x3xf32> {
  %e = rlx.expand %b : (tensor<4x1xf32>) -> tensor<2x4x3xf32>
  %r = rlx.elementwise_region ins(%e, %a : tensor<2x4x3xf32>, tensor<4x3xf32>) {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>]} -> tensor<2x4x3xf32> {
  ^bb0(%x: f32, %y: f32):
    %s = rlx.add %x, %y : (f32, f32) -> f32
    rlx.yield %s : f32
  }
  func.return %r : tensor<2x4x3xf32>
}

// -----

// The fold composes with a non-identity map: the kept axis keeps the dim the
// original map read it with (here d0 of a transposed read).

// CHECK-LABEL: func.func @fold_into_region_transposed(
// CHECK-SAME: [[A:%[a-zA-Z0-9_]+]]: tensor<3x4xf32>, [[B:%[a-zA-Z0-9_]+]]: tensor<1x4xf32>
// CHECK-NOT: rlx.expand
// CHECK-NEXT: rlx.elementwise_region ins([[B]], [[A]] : tensor<1x4xf32>, tensor<3x4xf32>) {indexing_maps = [affine_map<(d0, d1) -> (0, d0)>, affine_map<(d0, d1) -> (d1, d0)>]} -> tensor<4x3xf32> {
func.func @fold_into_region_transposed(%a: tensor<3x4xf32>, %b: tensor<1x4xf32>) -> tensor<4x3xf32> {
  %e = rlx.expand %b : (tensor<1x4xf32>) -> tensor<3x4xf32>
  %r = rlx.elementwise_region ins(%e, %a : tensor<3x4xf32>, tensor<3x4xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d1, d0)>]} -> tensor<4x3xf32> {
  ^bb0(%x: f32, %y: f32):
    %s = rlx.add %x, %y : (f32, f32) -> f32
    rlx.yield %s : f32
  }
  func.return %r : tensor<4x3xf32>
}

// -----

// Leave alone: both operands are expanded to the result shape. Dropping the
// first expand is fine (the other operand still has the full shape), but
// dropping the second too would shrink the result to tensor<3xf32>.

// CHECK-LABEL: func.func @both_operands_expanded(
// CHECK-SAME: [[A:%[a-zA-Z0-9_]+]]: tensor<3xf32>, [[B:%[a-zA-Z0-9_]+]]: tensor<3xf32>
// CHECK-NEXT: [[EB:%[a-zA-Z0-9_]+]] = rlx.expand [[B]] : (tensor<3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: [[R:%[a-zA-Z0-9_]+]] = rlx.add [[A]], [[EB]] : (tensor<3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: func.return [[R]]
func.func @both_operands_expanded(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %ea = rlx.expand %a : (tensor<3xf32>) -> tensor<4x3xf32>
  %eb = rlx.expand %b : (tensor<3xf32>) -> tensor<4x3xf32>
  %r = rlx.add %ea, %eb : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %r : tensor<4x3xf32>
}

// -----

// Leave alone: the unary op's result shape is the expanded shape.

// CHECK-LABEL: func.func @expand_into_unary(
// CHECK-SAME: [[A:%[a-zA-Z0-9_]+]]: tensor<3xf32>
// CHECK-NEXT: [[E:%[a-zA-Z0-9_]+]] = rlx.expand [[A]] : (tensor<3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: %{{.*}} = rlx.exp [[E]] : (tensor<4x3xf32>) -> tensor<4x3xf32>
func.func @expand_into_unary(%a: tensor<3xf32>) -> tensor<4x3xf32> {
  %e = rlx.expand %a : (tensor<3xf32>) -> tensor<4x3xf32>
  %r = rlx.exp %e : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %r : tensor<4x3xf32>
}

// -----

// Leave alone: an expand that is a function result must be materialized.

// CHECK-LABEL: func.func @expand_returned(
// CHECK-SAME: [[A:%[a-zA-Z0-9_]+]]: tensor<3xf32>
// CHECK-NEXT: [[E:%[a-zA-Z0-9_]+]] = rlx.expand [[A]] : (tensor<3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: func.return [[E]] : tensor<4x3xf32>
func.func @expand_returned(%a: tensor<3xf32>) -> tensor<4x3xf32> {
  %e = rlx.expand %a : (tensor<3xf32>) -> tensor<4x3xf32>
  func.return %e : tensor<4x3xf32>
}

// -----

// Leave alone: a reshape needs the expanded elements laid out in memory.

// CHECK-LABEL: func.func @expand_into_reshape(
// CHECK-SAME: [[A:%[a-zA-Z0-9_]+]]: tensor<3xf32>
// CHECK-NEXT: [[E:%[a-zA-Z0-9_]+]] = rlx.expand [[A]] : (tensor<3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: [[R:%[a-zA-Z0-9_]+]] = rlx.reshape [[E]] : (tensor<4x3xf32>) -> tensor<12xf32>
// CHECK-NEXT: func.return [[R]] : tensor<12xf32>
func.func @expand_into_reshape(%a: tensor<3xf32>) -> tensor<12xf32> {
  %e = rlx.expand %a : (tensor<3xf32>) -> tensor<4x3xf32>
  %r = rlx.reshape %e : (tensor<4x3xf32>) -> tensor<12xf32>
  func.return %r : tensor<12xf32>
}

// -----

// Leave alone: cast does not broadcast (its result shape is its operand's).

// CHECK-LABEL: func.func @expand_into_cast(
// CHECK-SAME: [[A:%[a-zA-Z0-9_]+]]: tensor<3xf32>
// CHECK-NEXT: [[E:%[a-zA-Z0-9_]+]] = rlx.expand [[A]] : (tensor<3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: %{{.*}} = rlx.cast [[E]] : (tensor<4x3xf32>) -> tensor<4x3xf64>
func.func @expand_into_cast(%a: tensor<3xf32>) -> tensor<4x3xf64> {
  %e = rlx.expand %a : (tensor<3xf32>) -> tensor<4x3xf32>
  %c = rlx.cast %e : (tensor<4x3xf32>) -> tensor<4x3xf64>
  func.return %c : tensor<4x3xf64>
}
