// RUN: rlx-opt %s --split-input-file --verify-diagnostics | filecheck %s

// One case per verifier rule of rlx.scan (dialects/scan.py).

// A scan runs at least one step.
// CHECK-LABEL: sym_name = "zero_length"
// CHECK: Operation does not verify: 'rlx.scan' length must be at least 1, got 0
func.func @zero_length(%i0: tensor<3xf32>, %i1: tensor<0x3xf32>) {
  %r = rlx.scan %i0, %i1 {length = 0 : i64} : (tensor<3xf32>, tensor<0x3xf32>) -> tensor<3xf32> {
  ^bb0(%c: tensor<3xf32>, %x: tensor<3xf32>):
    rlx.yield %c : tensor<3xf32>
  }
  func.return
}

// -----

// num_broadcast counts operands after init.
// CHECK-LABEL: sym_name = "broadcast_count"
// CHECK: Operation does not verify: 'rlx.scan' num_broadcast 2 must be between 0 and the 1 inputs
func.func @broadcast_count(%i0: tensor<3xf32>, %i1: tensor<4x3xf32>) {
  %r = rlx.scan %i0, %i1 {length = 4 : i64, num_broadcast = 2 : i64} : (tensor<3xf32>, tensor<4x3xf32>) -> tensor<3xf32> {
  ^bb0(%c: tensor<3xf32>, %x: tensor<3xf32>):
    rlx.yield %c : tensor<3xf32>
  }
  func.return
}

// -----

// K <= length (the seed's condition).
// CHECK-LABEL: sym_name = "too_many_checkpoints"
// CHECK: Operation does not verify: 'rlx.scan' num_checkpoints 5 must be between 0 and length 4
func.func @too_many_checkpoints(%i0: tensor<3xf32>, %i1: tensor<4x3xf32>) {
  %r = rlx.scan %i0, %i1 {length = 4 : i64, save_trajectory = true, num_checkpoints = 5 : i64} : (tensor<3xf32>, tensor<4x3xf32>) -> tensor<5x3xf32> {
  ^bb0(%c: tensor<3xf32>, %x: tensor<3xf32>):
    rlx.yield %c : tensor<3xf32>
  }
  func.return
}

// -----

// Checkpoints only with a trajectory (the seed's condition).
// CHECK-LABEL: sym_name = "checkpoints_without_trajectory"
// CHECK: Operation does not verify: 'rlx.scan' num_checkpoints needs save_trajectory = true
func.func @checkpoints_without_trajectory(%i0: tensor<3xf32>, %i1: tensor<4x3xf32>) {
  %r = rlx.scan %i0, %i1 {length = 4 : i64, num_checkpoints = 2 : i64} : (tensor<3xf32>, tensor<4x3xf32>) -> tensor<2x3xf32> {
  ^bb0(%c: tensor<3xf32>, %x: tensor<3xf32>):
    rlx.yield %c : tensor<3xf32>
  }
  func.return
}

// -----

// Each per-step input has a leading axis of the length.
// CHECK-LABEL: sym_name = "xs_leading_axis"
// CHECK: Operation does not verify: 'rlx.scan' per-step input #0 has shape [5, 3], whose leading axis must be the length 4
func.func @xs_leading_axis(%i0: tensor<3xf32>, %i1: tensor<5x3xf32>) {
  %r = rlx.scan %i0, %i1 {length = 4 : i64} : (tensor<3xf32>, tensor<5x3xf32>) -> tensor<3xf32> {
  ^bb0(%c: tensor<3xf32>, %x: tensor<3xf32>):
    rlx.yield %c : tensor<3xf32>
  }
  func.return
}

// -----

// Body arguments are (carry, broadcast..., x_t...): one row of each xs.
// CHECK-LABEL: sym_name = "body_arguments"
// CHECK: Operation does not verify: 'rlx.scan' body arguments must be (tensor<3xf32>, tensor<3xf32>)
func.func @body_arguments(%i0: tensor<3xf32>, %i1: tensor<4x3xf32>) {
  %r = rlx.scan %i0, %i1 {length = 4 : i64} : (tensor<3xf32>, tensor<4x3xf32>) -> tensor<3xf32> {
  ^bb0(%c: tensor<3xf32>, %x: tensor<4x3xf32>):
    rlx.yield %c : tensor<3xf32>
  }
  func.return
}

// -----

// A broadcast input is passed whole.
// CHECK-LABEL: sym_name = "broadcast_argument"
// CHECK: Operation does not verify: 'rlx.scan' body arguments must be (tensor<3xf32>, tensor<2x3xf32>, tensor<3xf32>)
func.func @broadcast_argument(%i0: tensor<3xf32>, %i1: tensor<2x3xf32>, %i2: tensor<4x3xf32>) {
  %r = rlx.scan %i0, %i1, %i2 {length = 4 : i64, num_broadcast = 1 : i64} : (tensor<3xf32>, tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<3xf32> {
  ^bb0(%c: tensor<3xf32>, %w: tensor<3xf32>, %x: tensor<3xf32>):
    rlx.yield %c : tensor<3xf32>
  }
  func.return
}

// -----

// The body yields the next carry, of the carry's type.
// CHECK-LABEL: sym_name = "yield_type"
// CHECK: Operation does not verify: 'rlx.scan' body must yield (tensor<3xf32>)
func.func @yield_type(%i0: tensor<3xf32>, %i1: tensor<4x3xf32>) {
  %r = rlx.scan %i0, %i1 {length = 4 : i64} : (tensor<3xf32>, tensor<4x3xf32>) -> tensor<3xf32> {
  ^bb0(%c: tensor<3xf32>, %x: tensor<3xf32>):
    %d = rlx.cast %c : (tensor<3xf32>) -> tensor<3xf64>
    rlx.yield %d : tensor<3xf64>
  }
  func.return
}

// -----

// A trajectory is [length, *carry].
// CHECK-LABEL: sym_name = "trajectory_shape"
// CHECK: Operation does not verify: 'rlx.scan' result type tensor<3xf32> must be f32 with shape [4, 3]
func.func @trajectory_shape(%i0: tensor<3xf32>, %i1: tensor<4x3xf32>) {
  %r = rlx.scan %i0, %i1 {length = 4 : i64, save_trajectory = true} : (tensor<3xf32>, tensor<4x3xf32>) -> tensor<3xf32> {
  ^bb0(%c: tensor<3xf32>, %x: tensor<3xf32>):
    rlx.yield %c : tensor<3xf32>
  }
  func.return
}

// -----

// Checkpoints are [K, *carry].
// CHECK-LABEL: sym_name = "checkpoint_shape"
// CHECK: Operation does not verify: 'rlx.scan' result type tensor<4x3xf32> must be f32 with shape [2, 3]
func.func @checkpoint_shape(%i0: tensor<3xf32>, %i1: tensor<4x3xf32>) {
  %r = rlx.scan %i0, %i1 {length = 4 : i64, save_trajectory = true, num_checkpoints = 2 : i64} : (tensor<3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32> {
  ^bb0(%c: tensor<3xf32>, %x: tensor<3xf32>):
    rlx.yield %c : tensor<3xf32>
  }
  func.return
}

// -----

// The body is isolated from above: outer values come in as broadcast inputs.
// CHECK-LABEL: sym_name = "uses_outer_value"
// CHECK: Operation does not verify: Operation using value defined out of its IsolatedFromAbove parent
func.func @uses_outer_value(%i0: tensor<3xf32>, %i1: tensor<4x3xf32>) {
  %r = rlx.scan %i0, %i1 {length = 4 : i64} : (tensor<3xf32>, tensor<4x3xf32>) -> tensor<3xf32> {
  ^bb0(%c: tensor<3xf32>, %x: tensor<3xf32>):
    %d = rlx.add %c, %i0 : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    rlx.yield %d : tensor<3xf32>
  }
  func.return
}
