// RUN: rlx-opt %s --split-input-file -p plan-memory | filecheck %s

// The body is planned inside the outer arena as one nested plan: its values get
// offsets inside the scan's second scratch buffer (rlx.body_arena_size bytes,
// alive while the scan runs), its next carry is written where the step's carry
// goes (not in the arena: -1), and its constants are slots of the function's
// table of constants, not in the arena. The first scratch buffer is the spare
// carry of the ping-pong; with a final carry only, the result is the other one.

// CHECK-LABEL: func.func @nested_plan(
// CHECK-SAME: rlx.arena_size = 256 : i64
// The spare carry takes [0, 128) and the body's plan [128, 256), where the mul
// is written over the exp (not over the constant).
// CHECK: rlx.scan {{.*}}rlx.body_arena_sizes = array<i64: 128>, rlx.offsets = array<i64: -1>, rlx.scratch_offsets = array<i64: 0, 128>
// CHECK: rlx.exp %{{.*}} {rlx.offsets = array<i64: 128>}
// CHECK-NEXT: rlx.constant {rlx.constant_slot = 0 : i64}
// CHECK-NEXT: rlx.mul %{{.*}} {rlx.offsets = array<i64: 128>}
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

// -----

// rlx.scan_backward plans each body on its own, in its last scratch buffers:
// the two cotangent buffers [192, 320), the segment cache (3 carries of the
// longest 4-step segment) [0, 192), the vjp body's plan [320, 384) and the
// forward body's [384, 448).
// CHECK-LABEL: func.func @backward_plan(
// CHECK-SAME: rlx.arena_size = 448 : i64
// CHECK: rlx.scan_backward {{.*}}rlx.body_arena_sizes = array<i64: 64, 64>, rlx.offsets = array<i64: -1, -1>, rlx.scratch_offsets = array<i64: 192, 0, 320, 384>
// CHECK: rlx.exp %{{.*}} {rlx.offsets = array<i64: 320>}
// CHECK: rlx.exp %{{.*}} {rlx.offsets = array<i64: 384>}
func.func @backward_plan(%c0: tensor<16xf32>, %saved: tensor<2x16xf32>, %d: tensor<16xf32>, %xs: tensor<8x16xf32>) -> (tensor<16xf32>, tensor<8x16xf32>) {
  %di, %dx = rlx.scan_backward %c0, %saved, %d, %xs {length = 8 : i64, num_checkpoints = 2 : i64} : (tensor<16xf32>, tensor<2x16xf32>, tensor<16xf32>, tensor<8x16xf32>) -> (tensor<16xf32>, tensor<8x16xf32>) vjp {
  ^bb0(%c: tensor<16xf32>, %x: tensor<16xf32>, %g: tensor<16xf32>):
    %e = rlx.exp %c : (tensor<16xf32>) -> tensor<16xf32>
    %dc = rlx.mul %g, %e : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
    rlx.yield %dc, %g : tensor<16xf32>, tensor<16xf32>
  } forward {
  ^bb0(%c: tensor<16xf32>, %x: tensor<16xf32>):
    %e = rlx.exp %c : (tensor<16xf32>) -> tensor<16xf32>
    %n = rlx.add %e, %x : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
    rlx.yield %n : tensor<16xf32>
  }
  func.return %di, %dx : tensor<16xf32>, tensor<8x16xf32>
}

// -----

// A broadcast weight that body matmuls read as their rhs is packed once, before
// the loop, into scratch with the scan's lifetime: one buffer of the weight's
// size (1024 B) per way it is read, here plain [0, 1024) and transposed
// [1024, 2048), between the spare carry [3072, 3584) and the body's plan
// [2048, 3072).
// CHECK-LABEL: func.func @packed_weight(
// CHECK-SAME: rlx.arena_size = 3584 : i64
// CHECK: rlx.scan {{.*}}rlx.body_arena_sizes = array<i64: 1024>, rlx.offsets = array<i64: -1>, rlx.scratch_offsets = array<i64: 3072, 0, 1024, 2048>
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

// -----

// Only 2-D f32/f64 rhs weights are packed: an f16 one (widened per call) and a
// carry-dependent rhs are not, so the scratch is the spare carry and the plan.
// CHECK-LABEL: func.func @not_packed(
// CHECK: rlx.scan {{.*}}rlx.scratch_offsets = array<i64: {{[0-9]+}}, {{[0-9]+}}>
func.func @not_packed(%h0: tensor<4x4xf16>, %w: tensor<4x4xf16>, %xs: tensor<3x4x4xf16>) -> tensor<4x4xf16> {
  %r = rlx.scan %h0, %w, %xs {length = 3 : i64, num_broadcast = 1 : i64} : (tensor<4x4xf16>, tensor<4x4xf16>, tensor<3x4x4xf16>) -> tensor<4x4xf16> {
  ^bb0(%h: tensor<4x4xf16>, %wb: tensor<4x4xf16>, %x: tensor<4x4xf16>):
    %p = rlx.matmul %h, %wb : (tensor<4x4xf16>, tensor<4x4xf16>) -> tensor<4x4xf16>
    %q = rlx.matmul %p, %h : (tensor<4x4xf16>, tensor<4x4xf16>) -> tensor<4x4xf16>
    %s = rlx.add %q, %x : (tensor<4x4xf16>, tensor<4x4xf16>) -> tensor<4x4xf16>
    rlx.yield %s : tensor<4x4xf16>
  }
  func.return %r : tensor<4x4xf16>
}
