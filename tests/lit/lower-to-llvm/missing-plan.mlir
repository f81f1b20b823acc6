// RUN: not rlx-opt %s -p 'lower-to-llvm{threads=1}' 2>&1 | filecheck %s

// lower-to-llvm needs the memory plan: without plan-memory an intermediate
// has no offset, reported as one line and a non-zero exit code.

// CHECK-NOT: Traceback
// CHECK: rlx-opt: error: 'rlx.elementwise_region' has no memory plan: run plan-memory before lower-to-llvm
// CHECK-NOT: {{.}}
func.func @f(%x: tensor<16xf32>) -> tensor<16xf32> {
  %a = rlx.exp %x : (tensor<16xf32>) -> tensor<16xf32>
  %b = rlx.neg %a : (tensor<16xf32>) -> tensor<16xf32>
  func.return %b : tensor<16xf32>
}
