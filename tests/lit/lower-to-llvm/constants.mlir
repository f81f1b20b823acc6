// RUN: rlx-opt %s --split-input-file -p 'plan-memory,lower-to-llvm{threads=1}' | filecheck %s

// Constants are read through the entry's fourth pointer, the table of constant
// pointers: slot k's pointer is loaded once, at the entry's start, and a
// kernel gets it as it gets an input's. A view of a constant is that pointer
// plus its delta (8 floats: 32 bytes), and a returned constant is copied out
// (memcpy from the constant's bytes, which no kernel writes).

// CHECK-LABEL: llvm.func @scaled(
// CHECK-SAME: {{%[0-9]+}}: !llvm.ptr, [[IO:%[0-9]+]]: !llvm.ptr, {{%[0-9]+}}: !llvm.ptr, [[CONSTANTS:%[0-9]+]]: !llvm.ptr) {
// CHECK-NEXT: [[SLOT:%[0-9]+]] = llvm.getelementptr inbounds [[CONSTANTS]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT: [[K:%[0-9]+]] = llvm.load [[SLOT]] : !llvm.ptr -> !llvm.ptr
// CHECK: llvm.call @scaled_k1({{%[0-9]+}}, [[K]], {{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}})
// CHECK: llvm.load
// CHECK-NEXT: [[DELTA:%[0-9]+]] = llvm.mlir.constant(32) : i64
// CHECK-NEXT: [[VIEW:%[0-9]+]] = llvm.getelementptr inbounds [[K]][[[DELTA]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK-NEXT: llvm.mlir.constant(false)
// CHECK: llvm.call_intrinsic "llvm.memcpy.p0.p0.i64"({{%[0-9]+}}, [[VIEW]], {{%[0-9]+}}, {{%[0-9]+}})
// CHECK-NEXT: llvm.return
func.func @scaled(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<8xf32>) {
  %k = rlx.constant dense<2.0> : tensor<16xf32>
  %m = rlx.mul %x, %k : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %n = rlx.narrow %k {axis = 0 : i64, start = 8 : i64, length = 8 : i64} : (tensor<16xf32>) -> tensor<8xf32>
  func.return %m, %n : tensor<16xf32>, tensor<8xf32>
}

// -----

// A scan body's constant is a slot of the same table; its pointer is loaded
// at the entry's start, outside the time loop, not at every step.

// CHECK-LABEL: llvm.func @body_constant(
// CHECK-SAME: [[CONSTANTS:%[0-9]+]]: !llvm.ptr) {
// CHECK-NOT: llvm.br
// CHECK: [[SLOT:%[0-9]+]] = llvm.getelementptr inbounds [[CONSTANTS]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT: llvm.load [[SLOT]] : !llvm.ptr -> !llvm.ptr
// CHECK-NOT: llvm.getelementptr inbounds [[CONSTANTS]]
// CHECK: llvm.br
// CHECK-NOT: llvm.getelementptr inbounds [[CONSTANTS]]
// CHECK: llvm.return
func.func @body_constant(%c0: tensor<32xf32>, %xs: tensor<10x32xf32>) -> tensor<32xf32> {
  %r = rlx.scan %c0, %xs {length = 10 : i64} : (tensor<32xf32>, tensor<10x32xf32>) -> tensor<32xf32> {
  ^bb0(%c: tensor<32xf32>, %x: tensor<32xf32>):
    %k = rlx.constant dense<0.5> : tensor<32xf32>
    %m = rlx.mul %x, %k : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32>
    %s = rlx.add %c, %m : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32>
    rlx.yield %s : tensor<32xf32>
  }
  func.return %r : tensor<32xf32>
}
