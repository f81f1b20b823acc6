// RUN: rlx-opt %s --split-input-file -p canonicalize-broadcast | filecheck %s

// expand, reshape and cast to their operand's own type are the operand.

// CHECK-LABEL: func.func @noop_shape_ops(
// CHECK-SAME: [[A:%[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK-NOT: rlx.expand
// CHECK-NOT: rlx.reshape
// CHECK-NOT: rlx.cast
// CHECK-NEXT: [[T:%[a-zA-Z0-9_]+]] = rlx.tanh [[A]] : (tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: func.return [[T]] : tensor<4x3xf32>
func.func @noop_shape_ops(%a: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %e = rlx.expand %a : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %r = rlx.reshape %e : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %c = rlx.cast %r : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %t = rlx.tanh %c : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %t : tensor<4x3xf32>
}

// -----

// A no-op op that is returned directly is replaced by its operand.

// CHECK-LABEL: func.func @noop_returned(
// CHECK-SAME: [[A:%[a-zA-Z0-9_]+]]: tensor<2xi32>
// CHECK-NEXT: func.return [[A]], [[A]] : tensor<2xi32>, tensor<2xi32>
func.func @noop_returned(%a: tensor<2xi32>) -> (tensor<2xi32>, tensor<2xi32>) {
  %c = rlx.cast %a : (tensor<2xi32>) -> tensor<2xi32>
  %r = rlx.reshape %a : (tensor<2xi32>) -> tensor<2xi32>
  func.return %c, %r : tensor<2xi32>, tensor<2xi32>
}

// -----

// A chain of reshapes is one reshape from the first source.

// CHECK-LABEL: func.func @reshape_chain(
// CHECK-SAME: [[A:%[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK-NEXT: [[R:%[a-zA-Z0-9_]+]] = rlx.reshape [[A]] : (tensor<4x3xf32>) -> tensor<12xf32>
// CHECK-NOT: rlx.reshape
// CHECK-NEXT: func.return [[R]] : tensor<12xf32>
func.func @reshape_chain(%a: tensor<4x3xf32>) -> tensor<12xf32> {
  %r1 = rlx.reshape %a : (tensor<4x3xf32>) -> tensor<2x6xf32>
  %r2 = rlx.reshape %r1 : (tensor<2x6xf32>) -> tensor<3x4xf32>
  %r3 = rlx.reshape %r2 : (tensor<3x4xf32>) -> tensor<12xf32>
  func.return %r3 : tensor<12xf32>
}

// -----

// A reshape chain that comes back to the source type disappears entirely.

// CHECK-LABEL: func.func @reshape_round_trip(
// CHECK-SAME: [[A:%[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK-NOT: rlx.reshape
// CHECK-NEXT: [[T:%[a-zA-Z0-9_]+]] = rlx.neg [[A]]
// CHECK-NEXT: func.return [[T]]
func.func @reshape_round_trip(%a: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r1 = rlx.reshape %a : (tensor<4x3xf32>) -> tensor<12xf32>
  %r2 = rlx.reshape %r1 : (tensor<12xf32>) -> tensor<4x3xf32>
  %t = rlx.neg %r2 : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %t : tensor<4x3xf32>
}

// -----

// A chain of expands is one expand from the first source.

// CHECK-LABEL: func.func @expand_chain(
// CHECK-SAME: [[A:%[a-zA-Z0-9_]+]]: tensor<3xf32>
// CHECK-NEXT: [[E:%[a-zA-Z0-9_]+]] = rlx.expand [[A]] : (tensor<3xf32>) -> tensor<2x4x3xf32>
// CHECK-NOT: rlx.expand
// CHECK-NEXT: func.return [[E]] : tensor<2x4x3xf32>
func.func @expand_chain(%a: tensor<3xf32>) -> tensor<2x4x3xf32> {
  %e1 = rlx.expand %a : (tensor<3xf32>) -> tensor<4x3xf32>
  %e2 = rlx.expand %e1 : (tensor<4x3xf32>) -> tensor<2x4x3xf32>
  func.return %e2 : tensor<2x4x3xf32>
}

// -----

// Leave alone: a cast that changes the element type is real work.

// CHECK-LABEL: func.func @cast_f32_to_f64(
// CHECK-SAME: [[A:%[a-zA-Z0-9_]+]]: tensor<4xf32>
// CHECK-NEXT: [[C:%[a-zA-Z0-9_]+]] = rlx.cast [[A]] : (tensor<4xf32>) -> tensor<4xf64>
// CHECK-NEXT: func.return [[C]] : tensor<4xf64>
func.func @cast_f32_to_f64(%a: tensor<4xf32>) -> tensor<4xf64> {
  %c = rlx.cast %a : (tensor<4xf32>) -> tensor<4xf64>
  func.return %c : tensor<4xf64>
}

// -----

// Leave alone: a single reshape that changes the shape, and elementwise ops
// that have nothing to fold.

// CHECK-LABEL: func.func @nothing_to_do(
// CHECK-SAME: [[A:%[a-zA-Z0-9_]+]]: tensor<4x3xf32>, [[B:%[a-zA-Z0-9_]+]]: tensor<3xf32>
// CHECK-NEXT: [[S:%[a-zA-Z0-9_]+]] = rlx.add [[A]], [[B]] : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: [[R:%[a-zA-Z0-9_]+]] = rlx.reshape [[S]] : (tensor<4x3xf32>) -> tensor<12xf32>
// CHECK-NEXT: func.return [[R]] : tensor<12xf32>
func.func @nothing_to_do(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<12xf32> {
  %s = rlx.add %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %r = rlx.reshape %s : (tensor<4x3xf32>) -> tensor<12xf32>
  func.return %r : tensor<12xf32>
}
