// RUN: rlx-opt %s --split-input-file -p 'plan-memory,lower-to-llvm{threads=1}' | filecheck %s
// RUN: rlx-opt %s --split-input-file -p 'plan-memory,lower-to-llvm{threads=2}' | filecheck %s --check-prefix=THREADS

// Lowering of the reductions to LLVM-dialect kernels (lowering/reduction.py).

// A row sum over the last axis: one work item per row. The 4096 elements of a
// row are 128 rows of 32 lanes (two 64-byte vectors); the kernel keeps a lane
// accumulator and a stack of 3 levels in 64-byte aligned stack slots. Inside
// the loop over the lanes, a block of 32 rows is loaded and summed as a
// balanced tree (no serial chain; the fadds carry no fast-math flags, so LLVM
// keeps this order); the block then merges with the stack levels named by the
// trailing one bits of its index (llvm.cttz), which makes the sum pairwise
// over blocks.

// CHECK-LABEL: llvm.func internal @row_sum_k0(
// CHECK-SAME: [[SRC:%[0-9]+]]: !llvm.ptr {llvm.noalias}, [[DST:%[0-9]+]]: !llvm.ptr {llvm.noalias}, [[BEGIN:%[0-9]+]]: i64, [[END:%[0-9]+]]: i64) {
// CHECK: [[LANES:%[0-9]+]] = llvm.mlir.constant(32) : i64
// CHECK-NEXT: [[BLK:%[0-9]+]] = llvm.alloca [[LANES]] x f32 {alignment = 64 : i64}
// CHECK-NEXT: [[LEVELS:%[0-9]+]] = llvm.mlir.constant(96) : i64
// CHECK-NEXT: [[STACK:%[0-9]+]] = llvm.alloca [[LEVELS]] x f32 {alignment = 64 : i64}
// CHECK: [[L0:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK: [[L1:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK: [[L2:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK: [[L3:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK: [[L4:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK: [[L5:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK: [[L6:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK: [[L7:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK: [[L8:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK: [[L9:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK: [[L10:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK: [[L11:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK: [[L12:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK: [[L13:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK: [[L14:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK: [[L15:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK: [[L16:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK: [[L17:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK: [[L18:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK: [[L19:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK: [[L20:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK: [[L21:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK: [[L22:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK: [[L23:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK: [[L24:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK: [[L25:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK: [[L26:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK: [[L27:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK: [[L28:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK: [[L29:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK: [[L30:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK: [[L31:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK: [[T0_0:%[0-9]+]] = llvm.fadd [[L0]], [[L1]] : f32
// CHECK-NEXT: [[T0_1:%[0-9]+]] = llvm.fadd [[L2]], [[L3]] : f32
// CHECK-NEXT: [[T0_2:%[0-9]+]] = llvm.fadd [[L4]], [[L5]] : f32
// CHECK-NEXT: [[T0_3:%[0-9]+]] = llvm.fadd [[L6]], [[L7]] : f32
// CHECK-NEXT: [[T0_4:%[0-9]+]] = llvm.fadd [[L8]], [[L9]] : f32
// CHECK-NEXT: [[T0_5:%[0-9]+]] = llvm.fadd [[L10]], [[L11]] : f32
// CHECK-NEXT: [[T0_6:%[0-9]+]] = llvm.fadd [[L12]], [[L13]] : f32
// CHECK-NEXT: [[T0_7:%[0-9]+]] = llvm.fadd [[L14]], [[L15]] : f32
// CHECK-NEXT: [[T0_8:%[0-9]+]] = llvm.fadd [[L16]], [[L17]] : f32
// CHECK-NEXT: [[T0_9:%[0-9]+]] = llvm.fadd [[L18]], [[L19]] : f32
// CHECK-NEXT: [[T0_10:%[0-9]+]] = llvm.fadd [[L20]], [[L21]] : f32
// CHECK-NEXT: [[T0_11:%[0-9]+]] = llvm.fadd [[L22]], [[L23]] : f32
// CHECK-NEXT: [[T0_12:%[0-9]+]] = llvm.fadd [[L24]], [[L25]] : f32
// CHECK-NEXT: [[T0_13:%[0-9]+]] = llvm.fadd [[L26]], [[L27]] : f32
// CHECK-NEXT: [[T0_14:%[0-9]+]] = llvm.fadd [[L28]], [[L29]] : f32
// CHECK-NEXT: [[T0_15:%[0-9]+]] = llvm.fadd [[L30]], [[L31]] : f32
// CHECK-NEXT: [[T1_0:%[0-9]+]] = llvm.fadd [[T0_0]], [[T0_1]] : f32
// CHECK-NEXT: [[T1_1:%[0-9]+]] = llvm.fadd [[T0_2]], [[T0_3]] : f32
// CHECK-NEXT: [[T1_2:%[0-9]+]] = llvm.fadd [[T0_4]], [[T0_5]] : f32
// CHECK-NEXT: [[T1_3:%[0-9]+]] = llvm.fadd [[T0_6]], [[T0_7]] : f32
// CHECK-NEXT: [[T1_4:%[0-9]+]] = llvm.fadd [[T0_8]], [[T0_9]] : f32
// CHECK-NEXT: [[T1_5:%[0-9]+]] = llvm.fadd [[T0_10]], [[T0_11]] : f32
// CHECK-NEXT: [[T1_6:%[0-9]+]] = llvm.fadd [[T0_12]], [[T0_13]] : f32
// CHECK-NEXT: [[T1_7:%[0-9]+]] = llvm.fadd [[T0_14]], [[T0_15]] : f32
// CHECK-NEXT: [[T2_0:%[0-9]+]] = llvm.fadd [[T1_0]], [[T1_1]] : f32
// CHECK-NEXT: [[T2_1:%[0-9]+]] = llvm.fadd [[T1_2]], [[T1_3]] : f32
// CHECK-NEXT: [[T2_2:%[0-9]+]] = llvm.fadd [[T1_4]], [[T1_5]] : f32
// CHECK-NEXT: [[T2_3:%[0-9]+]] = llvm.fadd [[T1_6]], [[T1_7]] : f32
// CHECK-NEXT: [[T3_0:%[0-9]+]] = llvm.fadd [[T2_0]], [[T2_1]] : f32
// CHECK-NEXT: [[T3_1:%[0-9]+]] = llvm.fadd [[T2_2]], [[T2_3]] : f32
// CHECK-NEXT: [[T4_0:%[0-9]+]] = llvm.fadd [[T3_0]], [[T3_1]] : f32
// CHECK: llvm.store [[T4_0]], {{%[0-9]+}} {alignment = 4 : i64} : f32, !llvm.ptr
// CHECK: llvm.call_intrinsic "llvm.cttz.i64"
// CHECK: llvm.getelementptr inbounds [[STACK]]
// CHECK: llvm.getelementptr inbounds [[DST]]
// CHECK: llvm.return

// The entry runs the kernel over the 8 rows.
// CHECK-LABEL: llvm.func @row_sum(
// CHECK: [[ROWS:%[0-9]+]] = llvm.mlir.constant(8) : i64
// CHECK-NEXT: [[ZERO:%[0-9]+]] = llvm.mlir.constant(0) : i64
// CHECK-NEXT: llvm.call @row_sum_k0_thunk({{%[0-9]+}}, [[ZERO]], [[ROWS]])
func.func @row_sum(%x: tensor<8x4096xf32>) -> tensor<8xf32> {
  %s = rlx.reduce_sum %x {axes = array<i64: 1>} : (tensor<8x4096xf32>) -> tensor<8xf32>
  func.return %s : tensor<8xf32>
}

// -----

// A sum with one output over 2^18 elements is split into 4 parts so that it
// runs on every thread: kernel _0 (through the parallel launcher when there are
// threads to use) writes the 4 partial sums to the op's scratch buffer - the
// arena at the offset plan-memory gave it - and kernel _1 sums them.

// THREADS-LABEL: llvm.func internal @total_k0_0(
// THREADS-LABEL: llvm.func internal @total_k0_1(
// THREADS-LABEL: llvm.func @total(
// THREADS-SAME: [[ARENA:%[0-9]+]]: !llvm.ptr, [[IO:%[0-9]+]]: !llvm.ptr, [[STATUS:%[0-9]+]]: !llvm.ptr) {
// THREADS: [[X:%[0-9]+]] = llvm.load {{%[0-9]+}} : !llvm.ptr -> !llvm.ptr
// THREADS: [[SCRATCH:%[0-9]+]] = llvm.getelementptr inbounds [[ARENA]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// THREADS: [[ARGS0:%[0-9]+]] = llvm.alloca
// THREADS: llvm.store [[X]], {{%[0-9]+}}
// THREADS: llvm.store [[SCRATCH]], {{%[0-9]+}}
// THREADS: [[PARTS:%[0-9]+]] = llvm.mlir.constant(4) : i64
// THREADS-NEXT: llvm.call @total_k0_0_parallel([[ARGS0]], [[PARTS]])
// THREADS: [[SCRATCH1:%[0-9]+]] = llvm.getelementptr inbounds [[ARENA]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// THREADS: [[ARGS1:%[0-9]+]] = llvm.alloca
// THREADS: llvm.store [[SCRATCH1]], {{%[0-9]+}}
// THREADS: llvm.call @total_k0_1_thunk([[ARGS1]],
// THREADS-NEXT: llvm.return

// CHECK-LABEL: llvm.func @total(
// CHECK-NOT: _parallel
// CHECK: llvm.call @total_k0_0_thunk(
// CHECK: llvm.call @total_k0_1_thunk(
func.func @total(%x: tensor<262144xf32>) -> tensor<f32> {
  %s = rlx.reduce_sum %x {axes = array<i64: 0>} : (tensor<262144xf32>) -> tensor<f32>
  func.return %s : tensor<f32>
}

// -----

// softmax: pass 1 (the maximum) and pass 2 (exp into the output, and the sum)
// read the input, pass 3 rescales the output in place; exp is inline
// arithmetic (no call anywhere in the kernel).

// CHECK-LABEL: llvm.func internal @softmax_rows_k0(
// CHECK-SAME: [[SRC:%[0-9]+]]: !llvm.ptr {llvm.noalias}, [[DST:%[0-9]+]]: !llvm.ptr {llvm.noalias}, {{%[0-9]+}}: i64, {{%[0-9]+}}: i64) {
// CHECK-NOT: llvm.call
// CHECK: llvm.getelementptr inbounds [[SRC]]
// CHECK-NOT: llvm.call
// CHECK: llvm.getelementptr inbounds [[DST]]
// CHECK-NOT: llvm.call
// CHECK: llvm.return
// CHECK-LABEL: llvm.func internal @softmax_rows_k0_thunk(
func.func @softmax_rows(%x: tensor<4x1000xf32>) -> tensor<4x1000xf32> {
  %p = rlx.softmax %x : (tensor<4x1000xf32>) -> tensor<4x1000xf32>
  func.return %p : tensor<4x1000xf32>
}
