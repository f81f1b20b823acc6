// RUN: rlx-opt %s --split-input-file -p 'plan-memory,lower-to-llvm{threads=1}' | filecheck %s

// The time loop runs in the entry: one loop over t in [0, length) whose body
// picks the step's carry pointers with selects (no copy of the carry) and
// calls the body's kernels, one per body op that computes (the constant has
// none), then branches back.

// CHECK-LABEL: llvm.func @scan_loop(
// CHECK: [[LENGTH:%[0-9]+]] = llvm.mlir.constant(10) : i64
// CHECK: llvm.br ^[[HEADER:bb[0-9]+]](
// CHECK: ^[[HEADER]]([[T:%[0-9]+]]: i64):
// CHECK-NEXT: [[MORE:%[0-9]+]] = llvm.icmp "slt" [[T]], [[LENGTH]] : i64
// CHECK-NEXT: llvm.cond_br [[MORE]], ^[[STEP:bb[0-9]+]], ^[[DONE:bb[0-9]+]]
// CHECK: ^[[STEP]]:
// CHECK: llvm.select
// CHECK-NOT: llvm.memcpy
// CHECK: llvm.call @scan_loop_k0_k0(
// CHECK-NOT: llvm.memcpy
// CHECK: llvm.call @scan_loop_k0_k2(
// CHECK: llvm.call @scan_loop_k0_k3(
// CHECK: llvm.br ^[[HEADER]](
// CHECK: ^[[DONE]]:
// CHECK-NEXT: llvm.return
func.func @scan_loop(%c0: tensor<32xf32>, %xs: tensor<10x32xf32>) -> tensor<32xf32> {
  %r = rlx.scan %c0, %xs {length = 10 : i64} : (tensor<32xf32>, tensor<10x32xf32>) -> tensor<32xf32> {
  ^bb0(%c: tensor<32xf32>, %x: tensor<32xf32>):
    %e = rlx.exp %x : (tensor<32xf32>) -> tensor<32xf32>
    %k = rlx.constant dense<0.5> : tensor<32xf32>
    %m = rlx.mul %e, %k : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32>
    %s = rlx.add %c, %m : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32>
    rlx.yield %s : tensor<32xf32>
  }
  func.return %r : tensor<32xf32>
}

// -----

// A weight the body's matmuls read as their rhs is packed before the time loop,
// once per way it is read (plain, then transposed: one packing kernel per
// scratch buffer); the body's GEMMs are register tiles over the panels, with
// no BLAS call (which would repack the weight at every step). The kernels'
// argument slots are allocated in the entry block, never in the loop (where
// each step would grow the stack).

// CHECK-LABEL: llvm.func internal @packed_weight_k0_k0(
// CHECK: vector<16xf32>
// CHECK-NOT: sgemm
// CHECK-LABEL: llvm.func @packed_weight(
// CHECK: llvm.call @packed_weight_k0_pack1(
// CHECK: llvm.call @packed_weight_k0_pack2(
// CHECK: llvm.br ^[[HEADER:bb[0-9]+]](
// CHECK: ^[[HEADER]]({{.*}}: i64):
// CHECK-NOT: {{_pack|llvm.alloca}}
// CHECK: llvm.call @packed_weight_k0_k0(
// CHECK-NOT: llvm.alloca
// CHECK: llvm.call @packed_weight_k0_k1(
// CHECK-NOT: llvm.alloca
// CHECK: llvm.call @packed_weight_k0_k2(
// CHECK-NOT: llvm.alloca
// CHECK: llvm.br ^[[HEADER]](
func.func @packed_weight(%h0: tensor<8x16xf32>, %w: tensor<16x16xf32>, %xs: tensor<10x8x16xf32>) -> tensor<8x16xf32> {
  %r = rlx.scan %h0, %w, %xs {length = 10 : i64, num_broadcast = 1 : i64} : (tensor<8x16xf32>, tensor<16x16xf32>, tensor<10x8x16xf32>) -> tensor<8x16xf32> {
  ^bb0(%h: tensor<8x16xf32>, %wb: tensor<16x16xf32>, %x: tensor<8x16xf32>):
    %p = rlx.matmul %h, %wb {transpose_rhs = true} : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
    %q = rlx.matmul %p, %wb : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
    %s = rlx.add %q, %x : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
    rlx.yield %s : tensor<8x16xf32>
  }
  func.return %r : tensor<8x16xf32>
}
