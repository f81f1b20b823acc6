// RUN: rlx-opt %s -p 'plan-memory,lower-to-llvm{threads=1}' | filecheck %s
// RUN: rlx-opt %s -p 'plan-memory,lower-to-llvm{threads=1}' -t llvm | filecheck %s --check-prefix=LLVM
// RUN: rlx-opt %s -p 'plan-memory,lower-to-llvm{threads=1 tuning="unroll_min_work=0"}' | filecheck %s --check-prefix=ALL

// A kernel launched with less work than `unroll_min_work` (2^15 by default)
// is marked `rlx.keep_loops_rolled`, and its translation puts a loop ID with
// `llvm.loop.unroll.disable` on each loop's back edge (lowering/core/translate.py);
// a larger kernel's loops are left to LLVM's unroller, and so is every
// kernel's with `unroll_min_work=0`.

// CHECK-LABEL: llvm.func internal @two_sizes_k0(
// CHECK-SAME: rlx.keep_loops_rolled
// CHECK-LABEL: llvm.func internal @two_sizes_k1(
// CHECK-NOT: rlx.keep_loops_rolled
// CHECK: llvm.return

// LLVM: define internal void @"two_sizes_k0"(
// LLVM: br label %{{b[0-9]+}}, !llvm.loop [[LOOP:![0-9]+]]
// LLVM: define internal void @"two_sizes_k1"(
// LLVM-NOT: !llvm.loop
// LLVM: ret void
// LLVM: [[UNROLL:![0-9]+]] = !{ !"llvm.loop.unroll.disable" }
// LLVM: [[LOOP]] = !{ [[LOOP]], [[UNROLL]] }

// ALL-NOT: rlx.keep_loops_rolled
func.func @two_sizes(%a: tensor<7x13xf32>, %b: tensor<64x1024xf32>) -> (tensor<7x13xf32>, tensor<64x1024xf32>) {
  %s = rlx.tanh %a : (tensor<7x13xf32>) -> tensor<7x13xf32>
  %t = rlx.tanh %b : (tensor<64x1024xf32>) -> tensor<64x1024xf32>
  func.return %s, %t : tensor<7x13xf32>, tensor<64x1024xf32>
}
