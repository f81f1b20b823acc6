// RUN: not rlx-opt %s 2>&1 | filecheck %s

// A syntax error is reported as one `file:line:col: message` line on stderr
// with a non-zero exit code, never a Python traceback.

// CHECK-NOT: Traceback
// CHECK: rlx-opt: error: {{.*}}parse-error.mlir:[[# @LINE + 4]]:16: Expected 2 operands, but got 1
// CHECK-NOT: {{.}}

func.func @missing_operand(%a: tensor<4xf32>) {
  %r = rlx.add %a : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}
