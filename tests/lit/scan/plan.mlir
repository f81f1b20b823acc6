// RUN: rlx-opt %s --split-input-file -p plan-memory | filecheck %s

// The body is planned inside the outer arena as one nested plan: its values get
// offsets inside the scan's second scratch buffer (rlx.body_arena_size bytes,
// alive while the scan runs), its next carry is written where the step's carry
// goes (not in the arena: -1), and its constants are the function's, alive for
// the whole call. The first scratch buffer is the spare carry of the
// ping-pong; with a final carry only, the result is the other one.

// CHECK-LABEL: func.func @nested_plan(
// CHECK-SAME: rlx.arena_size = 384 : i64
// The constant takes [0, 128) for the whole call, the spare carry [128, 256)
// and the body's plan [256, 384), where the mul is written over the exp.
// CHECK: rlx.scan {{.*}}rlx.body_arena_sizes = array<i64: 128>, rlx.offsets = array<i64: -1>, rlx.scratch_offsets = array<i64: 128, 256>
// CHECK: rlx.exp %{{.*}} {rlx.offsets = array<i64: 256>}
// CHECK-NEXT: rlx.constant {rlx.offsets = array<i64: 0>}
// CHECK-NEXT: rlx.mul %{{.*}} {rlx.offsets = array<i64: 256>}
// CHECK-NEXT: rlx.add %{{.*}} {rlx.offsets = array<i64: -1>}
func.func @nested_plan(%c0: tensor<32xf32>, %xs: tensor<10x32xf32>) -> tensor<32xf32> {
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

// A trajectory saves every step in the result: no spare carry (a 0-byte scratch).
// CHECK-LABEL: func.func @trajectory(
// CHECK: rlx.scan {{.*}}rlx.scratch_offsets = array<i64: 0, 0>
func.func @trajectory(%c0: tensor<32xf32>, %xs: tensor<10x32xf32>) -> tensor<10x32xf32> {
  %r = rlx.scan %c0, %xs {length = 10 : i64, save_trajectory = true} : (tensor<32xf32>, tensor<10x32xf32>) -> tensor<10x32xf32> {
  ^bb0(%c: tensor<32xf32>, %x: tensor<32xf32>):
    %s = rlx.add %c, %x : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32>
    rlx.yield %s : tensor<32xf32>
  }
  func.return %r : tensor<10x32xf32>
}
