// RUN: not rlx-opt %s 2>&1 | filecheck %s

// A value used with a type other than its definition's is a parse error.

// CHECK-NOT: Traceback
// CHECK: rlx-opt: error: {{.*}}type-mismatch-use.mlir:[[# @LINE + 4]]:16: operand is used with type tensor<4xi32>, but has been previously used or defined with type tensor<4xf32>
// CHECK-NOT: {{.}}

func.func @wrong_use(%a: tensor<4xf32>) {
  %r = rlx.exp %a : (tensor<4xi32>) -> tensor<4xi32>
  func.return
}
