// RUN: rlx-opt %s --split-input-file -p plan-memory | filecheck %s

// Reductions that run in several stages (`reduction_stages`) keep the partial
// results between stages in scratch buffers of the accumulator type, which
// plan-memory places beside the op's operands for the op's lifetime and
// records in rlx.scratch_offsets; the lower bound counts them.

// A sum over 2^18 elements has one output, so it is split into 4 parts of
// 2^16 whose f32 partial sums (16 bytes, one 64-byte slot) live in scratch.
// The scratch overlaps the op's operand %e in time, so it goes after it.

// CHECK-LABEL: func.func @split_sum(
// CHECK-SAME: attributes {rlx.arena_size = 1048640 : i64, rlx.arena_lower_bound = 1048640 : i64}
// CHECK-NEXT: rlx.exp {{.*}} {rlx.offsets = array<i64: 0>}
// CHECK-NEXT: rlx.reduce_sum {{.*}} {rlx.offsets = array<i64: -1>, rlx.scratch_offsets = array<i64: 1048576>, axes = array<i64: 0>}
// CHECK-NEXT: func.return
func.func @split_sum(%x: tensor<262144xf32>) -> tensor<f32> {
  %e = rlx.exp %x : (tensor<262144xf32>) -> tensor<262144xf32>
  %s = rlx.reduce_sum %e {axes = array<i64: 0>} : (tensor<262144xf32>) -> tensor<f32>
  func.return %s : tensor<f32>
}

// -----

// Non-adjacent axes reduce one run at a time: axis 2 first, into 3x40
// partial sums, then axis 0. An f16 reduction accumulates in f32: the
// scratch is 120 x 4 = 480 bytes (512 aligned), not 240.

// CHECK-LABEL: func.func @two_runs_f16(
// CHECK-SAME: attributes {rlx.arena_size = 512 : i64, rlx.arena_lower_bound = 512 : i64}
// CHECK-NEXT: rlx.reduce_mean {{.*}} {rlx.offsets = array<i64: -1>, rlx.scratch_offsets = array<i64: 0>, axes = array<i64: 0, 2>}
// CHECK-NEXT: func.return
func.func @two_runs_f16(%x: tensor<3x40x5xf16>) -> tensor<40xf16> {
  %s = rlx.reduce_mean %x {axes = array<i64: 0, 2>} : (tensor<3x40x5xf16>) -> tensor<40xf16>
  func.return %s : tensor<40xf16>
}

// -----

// One stage needs no scratch (its lanes live in the kernel's stack), nor do
// argmax and softmax.

// CHECK-LABEL: func.func @one_stage(
// CHECK-NOT: rlx.scratch_offsets
// CHECK: func.return
func.func @one_stage(%x: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4xi64>, tensor<4x8xf32>) {
  %s = rlx.reduce_max %x {axes = array<i64: -1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  %a = rlx.argmax %x {axis = 1 : i64} : (tensor<4x8xf32>) -> tensor<4xi64>
  %p = rlx.softmax %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %s, %a, %p : tensor<4xf32>, tensor<4xi64>, tensor<4x8xf32>
}
