// RUN: rlx-opt %s --split-input-file -p 'plan-memory,lower-to-llvm{threads=1}' | filecheck %s
// RUN: rlx-opt %s --split-input-file -p 'plan-memory,lower-to-llvm{threads=2}' | filecheck %s --check-prefix=THREADS

// Lowering of the reductions to LLVM-dialect kernels (lowering/reduction.py).

// A row sum over the last axis: reduce ops run on the reduction engine
// (lowering/reduction_region.py). One work item per row; the kernel's 16
// f32 lane accumulators, the total and its Kahan compensation are 18 stack
// slots; a flush adds the pairwise-combined lanes into the total with the
// compensated update t = total + (v - c), c = (t - total) - (v - c) (0 once
// t is infinite).

// CHECK-LABEL: llvm.func internal @row_sum_k0(
// CHECK-SAME: [[SRC:%[0-9]+]]: !llvm.ptr {llvm.noalias}, [[DST:%[0-9]+]]: !llvm.ptr {llvm.noalias}, [[BEGIN:%[0-9]+]]: i64, [[END:%[0-9]+]]: i64)
// CHECK-NEXT: [[SLOTS:%[0-9]+]] = llvm.mlir.constant(18) : i64
// CHECK-NEXT: {{%[0-9]+}} = llvm.alloca [[SLOTS]] x f32 {alignment = 64 : i64}
// CHECK: [[Y:%[0-9]+]] = llvm.fsub [[V:%[0-9]+]], [[C:%[0-9]+]] : f32
// CHECK-NEXT: [[T:%[0-9]+]] = llvm.fadd [[TOTAL:%[0-9]+]], [[Y]] : f32
// CHECK-NEXT: [[D:%[0-9]+]] = llvm.fsub [[T]], [[TOTAL]] : f32
// CHECK-NEXT: {{%[0-9]+}} = llvm.fsub [[D]], [[Y]] : f32
// CHECK: llvm.return

// The entry calls it over the 8 rows.
// CHECK-LABEL: llvm.func @row_sum(
// CHECK: [[ROWS:%[0-9]+]] = llvm.mlir.constant(8) : i64
// CHECK: llvm.call @row_sum_k0({{.*}}, {{%[0-9]+}}, [[ROWS]])

// THREADS-LABEL: llvm.func @row_sum(
func.func @row_sum(%x: tensor<8x4096xf32>) -> tensor<8xf32> {
  %s = rlx.reduce_sum %x {axes = array<i64: 1>} : (tensor<8x4096xf32>) -> tensor<8xf32>
  func.return %s : tensor<8xf32>
}

// -----

// softmax: pass 1 (the maximum) and pass 2 (exp into the output, and the sum)
// read the input, pass 3 rescales the output in place; exp is inline
// arithmetic (no call anywhere in the kernel).

// CHECK-LABEL: llvm.func internal @softmax_rows_k0(
// CHECK-SAME: [[SRC:%[0-9]+]]: !llvm.ptr {llvm.noalias}, [[DST:%[0-9]+]]: !llvm.ptr {llvm.noalias}, {{%[0-9]+}}: i64, {{%[0-9]+}}: i64)
// CHECK-NOT: llvm.call
// CHECK: llvm.getelementptr inbounds [[SRC]]
// CHECK-NOT: llvm.call
// CHECK: llvm.getelementptr inbounds [[DST]]
// CHECK-NOT: llvm.call
// CHECK: llvm.return
// CHECK-LABEL: llvm.func @softmax_rows(
func.func @softmax_rows(%x: tensor<4x1000xf32>) -> tensor<4x1000xf32> {
  %p = rlx.softmax %x : (tensor<4x1000xf32>) -> tensor<4x1000xf32>
  func.return %p : tensor<4x1000xf32>
}
