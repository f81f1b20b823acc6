// RUN: rlx-opt %s --split-input-file -p autodiff | filecheck %s

// autodiff (no wrt: every float argument) turns each function into its VJP:
// the inputs gain one cotangent per output (%d_<name>), the outputs one
// gradient per argument, after the original outputs.

// A unary op: its adjoint is activation_backward at the op's input.
// CHECK-LABEL: func.func @tanh(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<4xf32>, [[DY:%[a-zA-Z0-9_]+]]: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
// CHECK-NEXT: [[Y:%[a-zA-Z0-9_]+]] = rlx.tanh [[X]]
// CHECK-NEXT: [[DX:%[a-zA-Z0-9_]+]] = rlx.activation_backward [[X]], [[DY]] {kind = "tanh"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: func.return [[Y]], [[DX]] : tensor<4xf32>, tensor<4xf32>
func.func @tanh(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = rlx.tanh %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

// relu has its own gradient op.
// CHECK-LABEL: func.func @relu(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<4xf32>, [[DY:%[a-zA-Z0-9_]+]]: tensor<4xf32>)
// CHECK: [[DX:%[a-zA-Z0-9_]+]] = rlx.relu_backward [[X]], [[DY]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: func.return %{{.*}}, [[DX]]
func.func @relu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = rlx.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

// Broadcasting is undone by reduce_sum: the bias gradient sums over the rows;
// x's gradient is the cotangent itself.
// CHECK-LABEL: func.func @bias(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<4x3xf32>, [[B:%[a-zA-Z0-9_]+]]: tensor<3xf32>, [[DY:%[a-zA-Z0-9_]+]]: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<3xf32>)
// CHECK-NEXT: [[Y:%[a-zA-Z0-9_]+]] = rlx.add [[X]], [[B]]
// CHECK-NEXT: [[DB:%[a-zA-Z0-9_]+]] = rlx.reduce_sum [[DY]] {axes = array<i64: 0>} : (tensor<4x3xf32>) -> tensor<3xf32>
// CHECK-NEXT: func.return [[Y]], [[DY]], [[DB]] : tensor<4x3xf32>, tensor<4x3xf32>, tensor<3xf32>
func.func @bias(%x: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %y = rlx.add %x, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  func.return %y : tensor<4x3xf32>
}

// -----

// Two uses of x: the contributions are summed with rlx.add (CSE has merged
// the two equal products dy * x).
// CHECK-LABEL: func.func @square(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<4xf32>, [[DY:%[a-zA-Z0-9_]+]]: tensor<4xf32>)
// CHECK-NEXT: [[Y:%[a-zA-Z0-9_]+]] = rlx.mul [[X]], [[X]]
// CHECK-NEXT: [[P:%[a-zA-Z0-9_]+]] = rlx.mul [[DY]], [[X]]
// CHECK-NEXT: [[DX:%[a-zA-Z0-9_]+]] = rlx.add [[P]], [[P]]
// CHECK-NEXT: func.return [[Y]], [[DX]]
func.func @square(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = rlx.mul %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

// y = x w^T: dx = dy w and dw = dy^T x, both as transpose flags of the matmul
// (no transpose op is materialized).
// CHECK-LABEL: func.func @linear(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<8x4xf32>, [[W:%[a-zA-Z0-9_]+]]: tensor<3x4xf32>, [[DY:%[a-zA-Z0-9_]+]]: tensor<8x3xf32>)
// CHECK-NEXT: [[Y:%[a-zA-Z0-9_]+]] = rlx.matmul [[X]], [[W]] {transpose_rhs = true}
// CHECK-NEXT: [[DX:%[a-zA-Z0-9_]+]] = rlx.matmul [[DY]], [[W]] : (tensor<8x3xf32>, tensor<3x4xf32>) -> tensor<8x4xf32>
// CHECK-NEXT: [[DW:%[a-zA-Z0-9_]+]] = rlx.matmul [[DY]], [[X]] {transpose_lhs = true} : (tensor<8x3xf32>, tensor<8x4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT: func.return [[Y]], [[DX]], [[DW]]
// CHECK-NOT: rlx.transpose
func.func @linear(%x: tensor<8x4xf32>, %w: tensor<3x4xf32>) -> tensor<8x3xf32> {
  %y = rlx.matmul %x, %w {transpose_rhs = true} : (tensor<8x4xf32>, tensor<3x4xf32>) -> tensor<8x3xf32>
  func.return %y : tensor<8x3xf32>
}

// -----

// softmax: dx = y (dy - sum(dy y)), reusing the forward result.
// CHECK-LABEL: func.func @softmax(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<2x5xf32>, [[DY:%[a-zA-Z0-9_]+]]: tensor<2x5xf32>)
// CHECK-NEXT: [[Y:%[a-zA-Z0-9_]+]] = rlx.softmax [[X]] {axis = 1 : i64}
// CHECK-NEXT: [[P:%[a-zA-Z0-9_]+]] = rlx.mul [[DY]], [[Y]]
// CHECK-NEXT: [[S:%[a-zA-Z0-9_]+]] = rlx.reduce_sum [[P]] {axes = array<i64: 1>, keepdims = true} : (tensor<2x5xf32>) -> tensor<2x1xf32>
// CHECK-NEXT: [[D:%[a-zA-Z0-9_]+]] = rlx.sub [[DY]], [[S]] : (tensor<2x5xf32>, tensor<2x1xf32>) -> tensor<2x5xf32>
// CHECK-NEXT: [[DX:%[a-zA-Z0-9_]+]] = rlx.mul [[Y]], [[D]]
// CHECK-NEXT: func.return [[Y]], [[DX]]
func.func @softmax(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %y = rlx.softmax %x {axis = 1 : i64} : (tensor<2x5xf32>) -> tensor<2x5xf32>
  func.return %y : tensor<2x5xf32>
}

// -----

// gather's adjoint is gather_backward with the same indices; the i64 argument
// has no gradient output (only float arguments are differentiated by default).
// CHECK-LABEL: func.func @embedding(
// CHECK-SAME: [[T:%[a-zA-Z0-9_]+]]: tensor<10x4xf32>, [[IDS:%[a-zA-Z0-9_]+]]: tensor<3xi64>, [[DY:%[a-zA-Z0-9_]+]]: tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<10x4xf32>)
// CHECK-NEXT: [[Y:%[a-zA-Z0-9_]+]] = rlx.gather [[T]], [[IDS]]
// CHECK-NEXT: [[DT:%[a-zA-Z0-9_]+]] = rlx.gather_backward [[DY]], [[IDS]] : (tensor<3x4xf32>, tensor<3xi64>) -> tensor<10x4xf32>
// CHECK-NEXT: func.return [[Y]], [[DT]]
func.func @embedding(%table: tensor<10x4xf32>, %ids: tensor<3xi64>) -> tensor<3x4xf32> {
  %y = rlx.gather %table, %ids {axis = 0 : i64} : (tensor<10x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  func.return %y : tensor<3x4xf32>
}
