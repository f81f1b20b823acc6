// RUN: not rlx-opt %s 2>&1 | filecheck %s

// Without --verify-diagnostics a verifier failure is also one line on stderr
// and a non-zero exit code.

// CHECK-NOT: Traceback
// CHECK: rlx-opt: error: 'rlx.add' operands have incompatible broadcast shapes (4x3, 4)
// CHECK-NOT: {{.}}

func.func @bad_broadcast(%a: tensor<4x3xf32>, %b: tensor<4xf32>) -> tensor<4x3xf32> {
  %r = rlx.add %a, %b : (tensor<4x3xf32>, tensor<4xf32>) -> tensor<4x3xf32>
  func.return %r : tensor<4x3xf32>
}
