// RUN: rlx-opt %s --split-input-file -p plan-memory | filecheck %s --check-prefix=PLAN
// RUN: rlx-opt %s --split-input-file -p 'plan-memory,lower-to-llvm{threads=2}' | filecheck %s
// RUN: rlx-opt %s --split-input-file -p 'plan-memory,lower-to-llvm{threads=1}' | filecheck %s --check-prefix=ONE

// A reduction to one value of at least 2^17 elements is split
// (lowering/reduction_region.py, `_split_kernels`): 1000x300 f32 is cut
// along axis 0 into parts of 65536 // 300 = 218 rows, 5 parts (the last of
// 128 rows). The reduce op declares the scratch of the 5 (total,
// compensation) f32 pairs, 40 bytes, which plan-memory places.

// PLAN-LABEL: func.func @full_sum(
// PLAN-SAME: attributes {rlx.arena_size = 64 : i64, rlx.arena_lower_bound = 64 : i64}
// PLAN-NEXT: rlx.reduce_sum {{.*}} {rlx.offsets = array<i64: -1>, rlx.scratch_offsets = array<i64: 0>, axes = array<i64: 0, 1>}

// `partials` reduces part p into pair p of the scratch, choosing the short
// last part's loops when p = 4; `combine`, one work item, folds the 5 pairs.
// CHECK-LABEL: llvm.func internal @full_sum_k0_partials(
// CHECK-SAME: {{%[0-9]+}}: !llvm.ptr {llvm.noalias}, [[PARTIALS:%[0-9]+]]: !llvm.ptr {llvm.noalias}, {{%[0-9]+}}: i64, {{%[0-9]+}}: i64)
// CHECK: [[LAST:%[0-9]+]] = llvm.mlir.constant(4) : i64
// CHECK-NEXT: {{%[0-9]+}} = llvm.icmp "eq" {{%[0-9]+}}, [[LAST]] : i64
// CHECK: llvm.getelementptr inbounds [[PARTIALS]]
// CHECK: llvm.return
// CHECK-LABEL: llvm.func internal @full_sum_k0_combine(
// CHECK-SAME: [[PARTIALS:%[0-9]+]]: !llvm.ptr {llvm.noalias}, [[DST:%[0-9]+]]: !llvm.ptr {llvm.noalias}, {{%[0-9]+}}: i64, {{%[0-9]+}}: i64)
// CHECK: [[PARTS:%[0-9]+]] = llvm.mlir.constant(5) : i64
// CHECK: llvm.icmp "slt" {{%[0-9]+}}, [[PARTS]] : i64

// The entry splits the 5 parts across the threads, then combines on the
// calling thread; with one thread, it calls `partials` over [0, 5).
// CHECK-LABEL: llvm.func @full_sum(
// CHECK: [[FIVE:%[0-9]+]] = llvm.mlir.constant(5) : i64
// CHECK-NEXT: llvm.call @full_sum_k0_partials_parallel({{%[0-9]+}}, [[FIVE]])
// CHECK: [[SINGLE:%[0-9]+]] = llvm.mlir.constant(1) : i64
// CHECK: llvm.call @full_sum_k0_combine({{.*}}, {{%[0-9]+}}, [[SINGLE]])

// ONE-LABEL: llvm.func @full_sum(
// ONE: [[FIVE:%[0-9]+]] = llvm.mlir.constant(5) : i64
// ONE: llvm.call @full_sum_k0_partials({{.*}}, {{%[0-9]+}}, [[FIVE]])
// ONE: llvm.call @full_sum_k0_combine(
func.func @full_sum(%x: tensor<1000x300xf32>) -> tensor<f32> {
  %s = rlx.reduce_sum %x {axes = array<i64: 0, 1>} : (tensor<1000x300xf32>) -> tensor<f32>
  func.return %s : tensor<f32>
}

// -----

// A fused region declares the same scratch: sum(x * x) of 1024x256 f64 is 4
// parts of 256 rows (no short one), 4 pairs of f64, 64 bytes.

// PLAN-LABEL: func.func @fused_sum_of_squares(
// PLAN-SAME: attributes {rlx.arena_size = 64 : i64, rlx.arena_lower_bound = 64 : i64}
// PLAN-NEXT: rlx.reduction_region {{.*}}rlx.scratch_offsets = array<i64: 0>

// CHECK-LABEL: llvm.func internal @fused_sum_of_squares_k0_partials(
// CHECK-NOT: llvm.icmp "eq"
// CHECK: llvm.fmul {{.*}} : f64
// CHECK: llvm.return
// CHECK-LABEL: llvm.func @fused_sum_of_squares(
// CHECK: [[FOUR:%[0-9]+]] = llvm.mlir.constant(4) : i64
// CHECK-NEXT: llvm.call @fused_sum_of_squares_k0_partials_parallel({{%[0-9]+}}, [[FOUR]])
// CHECK: llvm.call @fused_sum_of_squares_k0_combine(

// ONE-LABEL: llvm.func @fused_sum_of_squares(
func.func @fused_sum_of_squares(%x: tensor<1024x256xf64>) -> tensor<f64> {
  %s = rlx.reduction_region ins(%x : tensor<1024x256xf64>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>],
         iteration_shape = array<i64: 1024, 256>, iterator_types = ["reduction", "reduction"],
         reduction = "reduce_sum"} -> tensor<f64> {
  ^bb0(%a: f64):
    %m = rlx.mul %a, %a : (f64, f64) -> f64
    rlx.yield %m : f64
  }
  func.return %s : tensor<f64>
}

// -----

// Just below the threshold (2^17 - 1 elements): one work item, no scratch.

// PLAN-LABEL: func.func @below_threshold(
// PLAN-SAME: attributes {rlx.arena_size = 0 : i64, rlx.arena_lower_bound = 0 : i64}
// PLAN-NOT: rlx.scratch_offsets
// PLAN: func.return

// CHECK-NOT: partials
// CHECK-LABEL: llvm.func @below_threshold(
// CHECK: llvm.call @below_threshold_k0(

// ONE-LABEL: llvm.func @below_threshold(
func.func @below_threshold(%x: tensor<131071xf32>) -> tensor<f32> {
  %s = rlx.reduce_sum %x {axes = array<i64: 0>} : (tensor<131071xf32>) -> tensor<f32>
  func.return %s : tensor<f32>
}
