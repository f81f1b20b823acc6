// RUN: not rlx-opt %s 2>&1 | filecheck %s

// An op name the rlx dialect does not define is a parse error with a location.

// CHECK-NOT: Traceback
// CHECK: rlx-opt: error: {{.*}}unregistered-op.mlir:[[# @LINE + 4]]:23: Operation rlx.frobnicate is not registered
// CHECK-NOT: {{.}}

func.func @unknown(%a: tensor<4xf32>) {
  %r = rlx.frobnicate %a : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}
