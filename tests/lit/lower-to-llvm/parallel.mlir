// RUN: rlx-opt %s --split-input-file -p 'plan-memory,lower-to-llvm{threads=2}' | filecheck %s
// RUN: rlx-opt %s --split-input-file -p 'plan-memory,lower-to-llvm{threads=1}' | filecheck %s --check-prefix=SERIAL

// A large kernel (2^20 elements) with threads=2 gets a parallel launcher: it
// hands the kernel's thunk and outer extent to the process's thread pool
// (rlx_mlir/thread_pool.py), declared as an external function, with the
// thread count the module is lowered for.

// CHECK-LABEL: builtin.module
// CHECK-NEXT: llvm.func @rlx_pool_parallel_for(!llvm.ptr, !llvm.ptr, i64, i64)
// CHECK-NOT: pthread
// CHECK-LABEL: llvm.func internal @big_k0(
// CHECK-SAME: !llvm.ptr {llvm.noalias}
// CHECK-LABEL: llvm.func internal @big_k0_thunk(
// CHECK-LABEL: llvm.func internal @big_k0_parallel(
// CHECK-SAME: [[ARGS:%[0-9]+]]: !llvm.ptr, [[N:%[0-9]+]]: i64) {
// CHECK-NEXT: [[THUNK:%[0-9]+]] = llvm.mlir.addressof @big_k0_thunk : !llvm.ptr
// CHECK-NEXT: [[THREADS:%[0-9]+]] = llvm.mlir.constant(2) : i64
// CHECK-NEXT: llvm.call @rlx_pool_parallel_for([[THUNK]], [[ARGS]], [[N]], [[THREADS]]) : (!llvm.ptr, !llvm.ptr, i64, i64) -> ()
// CHECK-NEXT: llvm.return
// CHECK-LABEL: llvm.func @big(
// CHECK: [[EXTENT:%[0-9]+]] = llvm.mlir.constant(1048576) : i64
// CHECK-NEXT: llvm.call @big_k0_parallel(%{{[0-9]+}}, [[EXTENT]]) : (!llvm.ptr, i64) -> ()
// CHECK-NOT: @big_k0_thunk

// With one thread the same kernel is called directly, on its buffers' pointers:
// neither the pool nor a thunk.

// SERIAL-LABEL: builtin.module
// SERIAL-NOT: rlx_pool
// SERIAL-NOT: _parallel
// SERIAL-NOT: _thunk
// SERIAL: llvm.func @big(
// SERIAL: llvm.call @big_k0(%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64) -> ()
func.func @big(%a: tensor<1048576xf32>, %b: tensor<1048576xf32>) -> tensor<1048576xf32> {
  %s = rlx.add %a, %b : (tensor<1048576xf32>, tensor<1048576xf32>) -> tensor<1048576xf32>
  func.return %s : tensor<1048576xf32>
}

// -----

// A small kernel stays on the calling thread even with threads=2.

// CHECK-LABEL: builtin.module
// CHECK-NOT: rlx_pool
// CHECK-NOT: {{_parallel|_thunk}}
// CHECK: llvm.func @small(
// CHECK: llvm.call @small_k0(

// SERIAL-LABEL: builtin.module
// SERIAL-NOT: rlx_pool
// SERIAL: llvm.call @small_k0(
func.func @small(%a: tensor<1024xf32>) -> tensor<1024xf32> {
  %s = rlx.exp %a : (tensor<1024xf32>) -> tensor<1024xf32>
  func.return %s : tensor<1024xf32>
}
