// RUN: rlx-opt %s --split-input-file -p 'plan-memory,lower-to-llvm{threads=2}' | filecheck %s
// RUN: rlx-opt %s --split-input-file -p 'plan-memory,lower-to-llvm{threads=1}' | filecheck %s --check-prefix=SERIAL

// A large kernel (2^20 elements) with threads=2 gets a parallel launcher: it
// spawns pthreads running a worker that calls the thunk on a chunk, runs
// chunk 0 itself, then joins (running a chunk inline if its thread failed).

// CHECK-LABEL: builtin.module
// CHECK-NEXT: llvm.func @pthread_create(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
// CHECK-NEXT: llvm.func @pthread_join(i64, !llvm.ptr) -> i32
// CHECK-LABEL: llvm.func internal @big_k0(
// CHECK-SAME: !llvm.ptr {llvm.noalias}
// CHECK-LABEL: llvm.func internal @big_k0_thunk(
// CHECK-LABEL: llvm.func internal @big_k0_parallel_worker(
// CHECK-SAME: [[TASK:%[0-9]+]]: !llvm.ptr) -> !llvm.ptr {
// CHECK: llvm.call @big_k0_thunk(
// CHECK: llvm.return %{{[0-9]+}} : !llvm.ptr
// CHECK-LABEL: llvm.func internal @big_k0_parallel(
// CHECK-SAME: [[ARGS:%[0-9]+]]: !llvm.ptr, [[N:%[0-9]+]]: i64) {
// CHECK: [[WORKER:%[0-9]+]] = llvm.mlir.addressof @big_k0_parallel_worker : !llvm.ptr
// CHECK: llvm.call @pthread_create(%{{[0-9]+}}, %{{[0-9]+}}, [[WORKER]], %{{[0-9]+}}) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
// CHECK: llvm.call @big_k0_thunk([[ARGS]], %{{[0-9]+}}, %{{[0-9]+}}) : (!llvm.ptr, i64, i64) -> ()
// CHECK: llvm.call @pthread_join(%{{[0-9]+}}, %{{[0-9]+}}) : (i64, !llvm.ptr) -> i32
// CHECK: llvm.call @big_k0_thunk([[ARGS]], %{{[0-9]+}}, %{{[0-9]+}}) : (!llvm.ptr, i64, i64) -> ()
// CHECK: llvm.return
// CHECK-LABEL: llvm.func @big(
// CHECK: [[EXTENT:%[0-9]+]] = llvm.mlir.constant(1048576) : i64
// CHECK-NEXT: llvm.call @big_k0_parallel(%{{[0-9]+}}, [[EXTENT]]) : (!llvm.ptr, i64) -> ()
// CHECK-NOT: @big_k0_thunk

// With one thread the same kernel is called directly, no pthreads at all.

// SERIAL-LABEL: builtin.module
// SERIAL-NOT: pthread
// SERIAL-NOT: _parallel
// SERIAL: llvm.func @big(
// SERIAL: llvm.call @big_k0_thunk(%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}) : (!llvm.ptr, i64, i64) -> ()
func.func @big(%a: tensor<1048576xf32>, %b: tensor<1048576xf32>) -> tensor<1048576xf32> {
  %s = rlx.add %a, %b : (tensor<1048576xf32>, tensor<1048576xf32>) -> tensor<1048576xf32>
  func.return %s : tensor<1048576xf32>
}

// -----

// A small kernel stays on the calling thread even with threads=2.

// CHECK-LABEL: builtin.module
// CHECK-NOT: pthread
// CHECK-NOT: _parallel
// CHECK: llvm.func @small(
// CHECK: llvm.call @small_k0_thunk(

// SERIAL-LABEL: builtin.module
// SERIAL-NOT: pthread
// SERIAL: llvm.call @small_k0_thunk(
func.func @small(%a: tensor<1024xf32>) -> tensor<1024xf32> {
  %s = rlx.exp %a : (tensor<1024xf32>) -> tensor<1024xf32>
  func.return %s : tensor<1024xf32>
}
