// RUN: not rlx-opt %s 2>&1 | filecheck %s

// A resource the trailer does not hold is an error at its handle, not a
// module with no bytes behind a constant.

// CHECK-NOT: Traceback
// CHECK: rlx-opt: error: {{.*}}missing-blob.mlir:[[# @LINE + 4]]:36: dense_resource<w> has no blob: the file{{.*}}trailer does not hold it{{.*}}
// CHECK-NOT: {{.}}

func.func @f() -> tensor<2xf32> {
  %w = rlx.constant dense_resource<w> : tensor<2xf32>
  func.return %w : tensor<2xf32>
}
