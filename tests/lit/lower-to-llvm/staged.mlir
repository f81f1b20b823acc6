// RUN: rlx-opt %s --split-input-file -p 'plan-memory,lower-to-llvm{threads=1}' | filecheck %s

// Flat elementwise kernels that go through a 4 KiB buffer on the stack.

// An output larger than the last-level cache (4 GiB here, larger than any)
// streams: each chunk starts on one of the output's cache lines (the
// elements from the pointer to the next 64-byte boundary, counted from
// ptrtoint), the body writes it into the 64-byte aligned stack buffer, and
// 64-byte vectors move it out with non-temporal stores claiming a whole line.

// CHECK-LABEL: llvm.func internal @stream_k0(
// CHECK-SAME: {{%[0-9]+}}: !llvm.ptr {llvm.noalias}, {{%[0-9]+}}: !llvm.ptr {llvm.noalias}, [[OUT:%[0-9]+]]: !llvm.ptr {llvm.noalias}, {{%[0-9]+}}: i64, {{%[0-9]+}}: i64)
// CHECK: [[STAGE:%[0-9]+]] = llvm.alloca {{%[0-9]+}} x i8 {alignment = 64 : i64} : (i64) -> !llvm.ptr
// CHECK: llvm.ptrtoint [[OUT]] : !llvm.ptr to i64
// CHECK: [[AT:%[0-9]+]] = llvm.getelementptr inbounds [[STAGE]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: llvm.store {{%[0-9]+}}, [[AT]] {alignment = 4 : i64} : f32, !llvm.ptr
// CHECK: [[LINE:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 1 : i64} : !llvm.ptr -> vector<64xi8>
// CHECK: llvm.getelementptr inbounds [[OUT]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK-NEXT: [[TO:%[0-9]+]] = llvm.getelementptr inbounds {{%[0-9]+}}[0] : (!llvm.ptr) -> !llvm.ptr, vector<64xi8>
// CHECK-NEXT: llvm.store [[LINE]], [[TO]] {alignment = 64 : i64, nontemporal} : vector<64xi8>, !llvm.ptr
func.func @stream(%a: tensor<1073741824xf32>, %b: tensor<1073741824xf32>) -> tensor<1073741824xf32> {
  %r = rlx.add %a, %b : (tensor<1073741824xf32>, tensor<1073741824xf32>) -> tensor<1073741824xf32>
  func.return %r : tensor<1073741824xf32>
}

// -----

// sin: each chunk of 512 f64 is computed with the Cody-Waite reduction alone
// while an i1 carried by the loop ORs the flags of arguments too large for it;
// only if one is set is the chunk computed again, with the exact reduction
// (the funnel shifts of the Payne-Hanek window) selected per element. The
// buffer then moves to the output with ordinary stores (a small output).

// CHECK-LABEL: llvm.func internal @sine_k0(
// CHECK: [[STAGE:%[0-9]+]] = llvm.alloca {{%[0-9]+}} x i8 {alignment = 64 : i64} : (i64) -> !llvm.ptr
// CHECK: ^[[FAST:bb[0-9]+]]([[J:%[0-9]+]]: i64, [[ANY:%[0-9]+]]: i1):
// CHECK-NEXT: llvm.mlir.constant(512) : i64
// CHECK-NOT: llvm.fshl
// CHECK: [[NEXT:%[0-9]+]] = llvm.or [[ANY]], {{%[0-9]+}} : i1
// CHECK-NEXT: llvm.br ^[[FAST]]({{%[0-9]+}}, [[NEXT]] : i64, i1)
// CHECK-NEXT: ^{{bb[0-9]+}}:
// CHECK-NEXT: llvm.cond_br [[ANY]], ^[[EXACT:bb[0-9]+]], ^[[MOVE:bb[0-9]+]]
// CHECK: llvm.call_intrinsic "llvm.fshl.i64"
// CHECK: ^[[MOVE]]:
// CHECK: llvm.load {{%[0-9]+}} {alignment = 1 : i64} : !llvm.ptr -> vector<64xi8>
// CHECK: llvm.store {{%[0-9]+}}, {{%[0-9]+}} {alignment = 1 : i64} : vector<64xi8>, !llvm.ptr
func.func @sine(%a: tensor<4096xf64>) -> tensor<4096xf64> {
  %r = rlx.sin %a : (tensor<4096xf64>) -> tensor<4096xf64>
  func.return %r : tensor<4096xf64>
}
