// RUN: rlx-opt %s -p 'autodiff{wrt=x}' | filecheck %s
// RUN: rlx-opt %s -p 'autodiff{wrt=0}' | filecheck %s

// wrt by name or by position. Only x's gradient is returned: the backward of
// the second output (which does not depend on x) and of w are never built,
// and the cotangent %d_z is accepted but unused.

// CHECK-LABEL: func.func @two_outputs(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<4xf32>, [[W:%[a-zA-Z0-9_]+]]: tensor<4xf32>, [[DY:%[a-zA-Z0-9_]+]]: tensor<4xf32>, %d_z: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK-NEXT: [[S:%[a-zA-Z0-9_]+]] = rlx.sin [[X]]
// CHECK-NEXT: [[Y:%[a-zA-Z0-9_]+]] = rlx.mul [[S]], [[W]]
// CHECK-NEXT: [[Z:%[a-zA-Z0-9_]+]] = rlx.exp [[W]]
// CHECK-NEXT: [[G:%[a-zA-Z0-9_]+]] = rlx.mul [[DY]], [[W]]
// CHECK-NEXT: [[DX:%[a-zA-Z0-9_]+]] = rlx.activation_backward [[X]], [[G]] {kind = "sin"}
// CHECK-NEXT: func.return [[Y]], [[Z]], [[DX]] : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
// CHECK-NOT: "exp"
func.func @two_outputs(%x: tensor<4xf32>, %w: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %s = rlx.sin %x : (tensor<4xf32>) -> tensor<4xf32>
  %y = rlx.mul %s, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %z = rlx.exp %w : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y, %z : tensor<4xf32>, tensor<4xf32>
}
