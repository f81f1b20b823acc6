// RUN: not rlx-opt %s 2>&1 | filecheck %s

// A blob that does not hold its tensor's bytes is an error at the trailer's entry.

// CHECK-NOT: Traceback
// CHECK: rlx-opt: error: {{.*}}short-blob.mlir:[[# @LINE + 10]]:7: resource 'w': the blob holds 4 bytes, tensor<2xf32> needs 8
// CHECK-NOT: {{.}}

func.func @f() -> tensor<2xf32> {
  %w = rlx.constant dense_resource<w> : tensor<2xf32>
  func.return %w : tensor<2xf32>
}
{-#
  dialect_resources: {
    builtin: {
      w: "0x400000000000803F"
    }
  }
#-}
