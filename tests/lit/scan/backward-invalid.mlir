// RUN: rlx-opt %s --split-input-file --verify-diagnostics | filecheck %s

// One case per verifier rule of rlx.scan_backward (dialects/scan.py).

// The rules rlx.scan has: a length of at least 1, ...
// CHECK-LABEL: sym_name = "zero_length"
// CHECK: Operation does not verify: 'rlx.scan_backward' length must be at least 1, got 0
func.func @zero_length(%i0: tensor<3xf32>, %i1: tensor<0x3xf32>, %i2: tensor<3xf32>, %i3: tensor<0x3xf32>) {
  %r0, %r1 = rlx.scan_backward %i0, %i1, %i2, %i3 {length = 0 : i64} : (tensor<3xf32>, tensor<0x3xf32>, tensor<3xf32>, tensor<0x3xf32>) -> (tensor<3xf32>, tensor<0x3xf32>) vjp {
  ^bb0(%c: tensor<3xf32>, %x: tensor<3xf32>, %g: tensor<3xf32>):
    rlx.yield %g, %g : tensor<3xf32>, tensor<3xf32>
  }
  func.return
}

// -----

// ... xs with a leading axis of the length.
// CHECK-LABEL: sym_name = "xs_leading_axis"
// CHECK: Operation does not verify: 'rlx.scan_backward' per-step input #0 has shape [5, 3], whose leading axis must be the length 4
func.func @xs_leading_axis(%i0: tensor<3xf32>, %i1: tensor<4x3xf32>, %i2: tensor<3xf32>, %i3: tensor<5x3xf32>) {
  %r0, %r1 = rlx.scan_backward %i0, %i1, %i2, %i3 {length = 4 : i64} : (tensor<3xf32>, tensor<4x3xf32>, tensor<3xf32>, tensor<5x3xf32>) -> (tensor<3xf32>, tensor<5x3xf32>) vjp {
  ^bb0(%c: tensor<3xf32>, %x: tensor<3xf32>, %g: tensor<3xf32>):
    rlx.yield %g, %g : tensor<3xf32>, tensor<3xf32>
  }
  func.return
}

// -----

// K <= length.
// CHECK-LABEL: sym_name = "too_many_checkpoints"
// CHECK: Operation does not verify: 'rlx.scan_backward' num_checkpoints 5 must be between 0 and length 4
func.func @too_many_checkpoints(%i0: tensor<3xf32>, %i1: tensor<4x3xf32>, %i2: tensor<3xf32>, %i3: tensor<4x3xf32>) {
  %r0, %r1 = rlx.scan_backward %i0, %i1, %i2, %i3 {length = 4 : i64, num_checkpoints = 5 : i64} : (tensor<3xf32>, tensor<4x3xf32>, tensor<3xf32>, tensor<4x3xf32>) -> (tensor<3xf32>, tensor<4x3xf32>) vjp {
  ^bb0(%c: tensor<3xf32>, %x: tensor<3xf32>, %g: tensor<3xf32>):
    rlx.yield %g, %g : tensor<3xf32>, tensor<3xf32>
  }
  func.return
}

// -----

// The checkpoint modes.
// CHECK-LABEL: sym_name = "unknown_mode"
// CHECK: Operation does not verify: 'rlx.scan_backward' mode "revolve" is not one of segments, griewank
func.func @unknown_mode(%i0: tensor<3xf32>, %i1: tensor<4x3xf32>, %i2: tensor<3xf32>, %i3: tensor<4x3xf32>) {
  %r0, %r1 = rlx.scan_backward %i0, %i1, %i2, %i3 {length = 4 : i64, mode = "revolve"} : (tensor<3xf32>, tensor<4x3xf32>, tensor<3xf32>, tensor<4x3xf32>) -> (tensor<3xf32>, tensor<4x3xf32>) vjp {
  ^bb0(%c: tensor<3xf32>, %x: tensor<3xf32>, %g: tensor<3xf32>):
    rlx.yield %g, %g : tensor<3xf32>, tensor<3xf32>
  }
  func.return
}

// -----

// Without checkpoints, every step's carry is saved.
// CHECK-LABEL: sym_name = "saved_rows"
// CHECK: Operation does not verify: 'rlx.scan_backward' saved carries tensor<2x3xf32> must have shape [4, 3]
func.func @saved_rows(%i0: tensor<3xf32>, %i1: tensor<2x3xf32>, %i2: tensor<3xf32>, %i3: tensor<4x3xf32>) {
  %r0, %r1 = rlx.scan_backward %i0, %i1, %i2, %i3 {length = 4 : i64} : (tensor<3xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<4x3xf32>) -> (tensor<3xf32>, tensor<4x3xf32>) vjp {
  ^bb0(%c: tensor<3xf32>, %x: tensor<3xf32>, %g: tensor<3xf32>):
    rlx.yield %g, %g : tensor<3xf32>, tensor<3xf32>
  }
  func.return
}

// -----

// With K checkpoints, K carries.
// CHECK-LABEL: sym_name = "checkpoint_rows"
// CHECK: Operation does not verify: 'rlx.scan_backward' saved carries tensor<4x3xf32> must have shape [2, 3]
func.func @checkpoint_rows(%i0: tensor<3xf32>, %i1: tensor<4x3xf32>, %i2: tensor<3xf32>, %i3: tensor<4x3xf32>) {
  %r0, %r1 = rlx.scan_backward %i0, %i1, %i2, %i3 {length = 4 : i64, num_checkpoints = 2 : i64} : (tensor<3xf32>, tensor<4x3xf32>, tensor<3xf32>, tensor<4x3xf32>) -> (tensor<3xf32>, tensor<4x3xf32>) vjp {
  ^bb0(%c: tensor<3xf32>, %x: tensor<3xf32>, %g: tensor<3xf32>):
    rlx.yield %g, %g : tensor<3xf32>, tensor<3xf32>
  } forward {
  ^bb0(%c: tensor<3xf32>, %x: tensor<3xf32>):
    rlx.yield %c : tensor<3xf32>
  }
  func.return
}

// -----

// cotangent_rows is at most the length.
// CHECK-LABEL: sym_name = "cotangent_rows"
// CHECK: Operation does not verify: 'rlx.scan_backward' cotangent_rows 5 must be between 0 and length 4
func.func @cotangent_rows(%i0: tensor<3xf32>, %i1: tensor<4x3xf32>, %i2: tensor<3xf32>, %i3: tensor<4x3xf32>) {
  %r0, %r1 = rlx.scan_backward %i0, %i1, %i2, %i3 {length = 4 : i64, cotangent_rows = 5 : i64} : (tensor<3xf32>, tensor<4x3xf32>, tensor<3xf32>, tensor<4x3xf32>) -> (tensor<3xf32>, tensor<4x3xf32>) vjp {
  ^bb0(%c: tensor<3xf32>, %x: tensor<3xf32>, %g: tensor<3xf32>):
    rlx.yield %g, %g : tensor<3xf32>, tensor<3xf32>
  }
  func.return
}

// -----

// The cotangent of the final carry has the carry's shape ...
// CHECK-LABEL: sym_name = "cotangent_shape"
// CHECK: Operation does not verify: 'rlx.scan_backward' d_result tensor<4x3xf32> must have shape [3]
func.func @cotangent_shape(%i0: tensor<3xf32>, %i1: tensor<4x3xf32>, %i2: tensor<4x3xf32>, %i3: tensor<4x3xf32>) {
  %r0, %r1 = rlx.scan_backward %i0, %i1, %i2, %i3 {length = 4 : i64} : (tensor<3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>) -> (tensor<3xf32>, tensor<4x3xf32>) vjp {
  ^bb0(%c: tensor<3xf32>, %x: tensor<3xf32>, %g: tensor<3xf32>):
    rlx.yield %g, %g : tensor<3xf32>, tensor<3xf32>
  }
  func.return
}

// -----

// ... that of R rows is [R, *carry].
// CHECK-LABEL: sym_name = "trajectory_cotangent_shape"
// CHECK: Operation does not verify: 'rlx.scan_backward' d_result tensor<3xf32> must have shape [4, 3]
func.func @trajectory_cotangent_shape(%i0: tensor<3xf32>, %i1: tensor<4x3xf32>, %i2: tensor<3xf32>, %i3: tensor<4x3xf32>) {
  %r0, %r1 = rlx.scan_backward %i0, %i1, %i2, %i3 {length = 4 : i64, cotangent_rows = 4 : i64} : (tensor<3xf32>, tensor<4x3xf32>, tensor<3xf32>, tensor<4x3xf32>) -> (tensor<3xf32>, tensor<4x3xf32>) vjp {
  ^bb0(%c: tensor<3xf32>, %x: tensor<3xf32>, %g: tensor<3xf32>):
    rlx.yield %g, %g : tensor<3xf32>, tensor<3xf32>
  }
  func.return
}

// -----

// The vjp body takes (carry, broadcast..., x_t..., d_next).
// CHECK-LABEL: sym_name = "vjp_arguments"
// CHECK: Operation does not verify: 'rlx.scan_backward' vjp body arguments must be (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
func.func @vjp_arguments(%i0: tensor<3xf32>, %i1: tensor<4x3xf32>, %i2: tensor<3xf32>, %i3: tensor<4x3xf32>) {
  %r0, %r1 = rlx.scan_backward %i0, %i1, %i2, %i3 {length = 4 : i64} : (tensor<3xf32>, tensor<4x3xf32>, tensor<3xf32>, tensor<4x3xf32>) -> (tensor<3xf32>, tensor<4x3xf32>) vjp {
  ^bb0(%c: tensor<3xf32>, %g: tensor<3xf32>):
    rlx.yield %g, %g : tensor<3xf32>, tensor<3xf32>
  }
  func.return
}

// -----

// It yields (d_carry, d_broadcast..., d_x_t...).
// CHECK-LABEL: sym_name = "vjp_yields"
// CHECK: Operation does not verify: 'rlx.scan_backward' vjp body must yield (tensor<3xf32>, tensor<3xf32>)
func.func @vjp_yields(%i0: tensor<3xf32>, %i1: tensor<4x3xf32>, %i2: tensor<3xf32>, %i3: tensor<4x3xf32>) {
  %r0, %r1 = rlx.scan_backward %i0, %i1, %i2, %i3 {length = 4 : i64} : (tensor<3xf32>, tensor<4x3xf32>, tensor<3xf32>, tensor<4x3xf32>) -> (tensor<3xf32>, tensor<4x3xf32>) vjp {
  ^bb0(%c: tensor<3xf32>, %x: tensor<3xf32>, %g: tensor<3xf32>):
    rlx.yield %g : tensor<3xf32>
  }
  func.return
}

// -----

// Checkpoints need the forward body to recompute carries.
// CHECK-LABEL: sym_name = "missing_forward"
// CHECK: Operation does not verify: 'rlx.scan_backward' with 2 saved carries of 4 needs a forward body to recompute carries
func.func @missing_forward(%i0: tensor<3xf32>, %i1: tensor<2x3xf32>, %i2: tensor<3xf32>, %i3: tensor<4x3xf32>) {
  %r0, %r1 = rlx.scan_backward %i0, %i1, %i2, %i3 {length = 4 : i64, num_checkpoints = 2 : i64} : (tensor<3xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<4x3xf32>) -> (tensor<3xf32>, tensor<4x3xf32>) vjp {
  ^bb0(%c: tensor<3xf32>, %x: tensor<3xf32>, %g: tensor<3xf32>):
    rlx.yield %g, %g : tensor<3xf32>, tensor<3xf32>
  }
  func.return
}

// -----

// Every carry saved: no forward body.
// CHECK-LABEL: sym_name = "extra_forward"
// CHECK: Operation does not verify: 'rlx.scan_backward' with 4 saved carries of 4 takes no forward body
func.func @extra_forward(%i0: tensor<3xf32>, %i1: tensor<4x3xf32>, %i2: tensor<3xf32>, %i3: tensor<4x3xf32>) {
  %r0, %r1 = rlx.scan_backward %i0, %i1, %i2, %i3 {length = 4 : i64} : (tensor<3xf32>, tensor<4x3xf32>, tensor<3xf32>, tensor<4x3xf32>) -> (tensor<3xf32>, tensor<4x3xf32>) vjp {
  ^bb0(%c: tensor<3xf32>, %x: tensor<3xf32>, %g: tensor<3xf32>):
    rlx.yield %g, %g : tensor<3xf32>, tensor<3xf32>
  } forward {
  ^bb0(%c: tensor<3xf32>, %x: tensor<3xf32>):
    rlx.yield %c : tensor<3xf32>
  }
  func.return
}

// -----

// The forward body is the scan's: it yields the next carry.
// CHECK-LABEL: sym_name = "forward_yield"
// CHECK: Operation does not verify: 'rlx.scan_backward' forward body must yield (tensor<3xf32>)
func.func @forward_yield(%i0: tensor<3xf32>, %i1: tensor<2x3xf32>, %i2: tensor<3xf32>, %i3: tensor<4x3xf32>) {
  %r0, %r1 = rlx.scan_backward %i0, %i1, %i2, %i3 {length = 4 : i64, num_checkpoints = 2 : i64} : (tensor<3xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<4x3xf32>) -> (tensor<3xf32>, tensor<4x3xf32>) vjp {
  ^bb0(%c: tensor<3xf32>, %x: tensor<3xf32>, %g: tensor<3xf32>):
    rlx.yield %g, %g : tensor<3xf32>, tensor<3xf32>
  } forward {
  ^bb0(%c: tensor<3xf32>, %x: tensor<3xf32>):
    rlx.yield %c, %x : tensor<3xf32>, tensor<3xf32>
  }
  func.return
}

// -----

// Results: d_init, then one gradient per input typed like it.
// CHECK-LABEL: sym_name = "results"
// CHECK: Operation does not verify: 'rlx.scan_backward' results must be d_init and one gradient per input, typed like them (tensor<3xf32>, tensor<4x3xf32>)
func.func @results(%i0: tensor<3xf32>, %i1: tensor<4x3xf32>, %i2: tensor<3xf32>, %i3: tensor<4x3xf32>) {
  %r0, %r1 = rlx.scan_backward %i0, %i1, %i2, %i3 {length = 4 : i64} : (tensor<3xf32>, tensor<4x3xf32>, tensor<3xf32>, tensor<4x3xf32>) -> (tensor<3xf32>, tensor<3xf32>) vjp {
  ^bb0(%c: tensor<3xf32>, %x: tensor<3xf32>, %g: tensor<3xf32>):
    rlx.yield %g, %g : tensor<3xf32>, tensor<3xf32>
  }
  func.return
}
