// RUN: rlx-opt %s --split-input-file -p 'plan-memory,lower-to-llvm{threads=1}' | filecheck %s

// Ops of the same structure share one kernel when their buffers alias the
// same way: %3 (exp of %a into a fresh buffer) is launched on @shared_k0,
// the kernel of %0, with its own pointers; %2 (exp of %1 written over %1,
// which dies there) gets a kernel of its own, which reads and writes through
// its first parameter. No @shared_k3 is emitted.

// CHECK-LABEL: llvm.func internal @shared_k0(
// CHECK-SAME: !llvm.ptr {llvm.noalias}, %{{[0-9]+}}: !llvm.ptr {llvm.noalias}, %{{[0-9]+}}: i64, %{{[0-9]+}}: i64)
// CHECK-LABEL: llvm.func internal @shared_k2(
// CHECK-SAME: [[P:%[0-9]+]]: !llvm.ptr {llvm.noalias}, [[UNUSED:%[0-9]+]]: !llvm.ptr {llvm.noalias}, %{{[0-9]+}}: i64, %{{[0-9]+}}: i64)
// CHECK-NOT: [[UNUSED]]{{[^0-9]}}
// CHECK: llvm.store %{{[0-9]+}}, %{{[0-9]+}}
// CHECK-NOT: [[UNUSED]]{{[^0-9]}}
// CHECK-NOT: llvm.func internal @shared_k3
// CHECK-LABEL: llvm.func @shared(
// CHECK: llvm.call @shared_k0(
// CHECK: llvm.call @shared_k1(
// CHECK: llvm.call @shared_k2(
// CHECK: llvm.call @shared_k0(
// CHECK: llvm.call @shared_k4(
// CHECK-NEXT: llvm.return
func.func @shared(%a: tensor<8xf32>) -> tensor<8xf32> {
  %0 = rlx.exp %a : (tensor<8xf32>) -> tensor<8xf32>
  %1 = rlx.tanh %0 : (tensor<8xf32>) -> tensor<8xf32>
  %2 = rlx.exp %1 : (tensor<8xf32>) -> tensor<8xf32>
  %3 = rlx.exp %a : (tensor<8xf32>) -> tensor<8xf32>
  %4 = rlx.add %2, %3 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  func.return %4 : tensor<8xf32>
}

// -----

// Same op, different shapes: different kernels.

// CHECK-LABEL: llvm.func @shapes(
// CHECK: llvm.call @shapes_k0(
// CHECK: llvm.call @shapes_k1(
func.func @shapes(%a: tensor<8xf32>, %b: tensor<4xf32>) -> (tensor<8xf32>, tensor<4xf32>) {
  %0 = rlx.neg %a : (tensor<8xf32>) -> tensor<8xf32>
  %1 = rlx.neg %b : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0, %1 : tensor<8xf32>, tensor<4xf32>
}

// -----

// A pad, a transpose and a slice, then the same pad and transpose again:
// the repeats launch the first two kernels.

// CHECK-LABEL: llvm.func @movement(
// CHECK: llvm.call @movement_k0(
// CHECK: llvm.call @movement_k1(
// CHECK: llvm.call @movement_k2(
// CHECK: llvm.call @movement_k0(
// CHECK: llvm.call @movement_k1(
// CHECK-NOT: @movement_k3
// CHECK-NOT: @movement_k4
func.func @movement(%a: tensor<4x4xf32>) -> tensor<6x6xf32> {
  %0 = rlx.pad %a {before = array<i64: 1, 1>, after = array<i64: 1, 1>} : (tensor<4x4xf32>) -> tensor<6x6xf32>
  %1 = rlx.transpose %0 {perm = array<i64: 1, 0>} : (tensor<6x6xf32>) -> tensor<6x6xf32>
  %2 = rlx.slice %1 {starts = array<i64: 1, 1>, steps = array<i64: 1, 1>} : (tensor<6x6xf32>) -> tensor<4x4xf32>
  %3 = rlx.pad %2 {before = array<i64: 1, 1>, after = array<i64: 1, 1>} : (tensor<4x4xf32>) -> tensor<6x6xf32>
  %4 = rlx.transpose %3 {perm = array<i64: 1, 0>} : (tensor<6x6xf32>) -> tensor<6x6xf32>
  func.return %4 : tensor<6x6xf32>
}
