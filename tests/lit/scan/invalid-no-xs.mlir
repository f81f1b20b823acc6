// RUN: rlx-opt %s --split-input-file --verify-diagnostics | filecheck %s

// A scan with no per-step inputs (xs): its step count comes from the `length`
// property alone, which every rlx.scan must carry (dialects/scan.py). Without
// xs nothing else could say how many steps to run, so a missing or
// non-positive length is refused; tests/lit/scan/no-xs.mlir holds the valid form.

// No xs and no length: the step count has no source.
// CHECK-LABEL: sym_name = "no_xs_no_length"
// CHECK: Operation does not verify: property 'length' expected in operation 'rlx.scan'
func.func @no_xs_no_length(%h0: tensor<3xf32>, %w: tensor<3xf32>) {
  %r = rlx.scan %h0, %w {num_broadcast = 1 : i64} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%c: tensor<3xf32>, %b: tensor<3xf32>):
    rlx.yield %c : tensor<3xf32>
  }
  func.return
}

// -----

// No operand at all but the carry, and no length.
// CHECK-LABEL: sym_name = "carry_only_no_length"
// CHECK: Operation does not verify: property 'length' expected in operation 'rlx.scan'
func.func @carry_only_no_length(%h0: tensor<3xf32>) {
  %r = rlx.scan %h0 : (tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%c: tensor<3xf32>):
    rlx.yield %c : tensor<3xf32>
  }
  func.return
}

// -----

// No xs and a length of 0.
// CHECK-LABEL: sym_name = "no_xs_zero_length"
// CHECK: Operation does not verify: 'rlx.scan' length must be at least 1, got 0
func.func @no_xs_zero_length(%h0: tensor<3xf32>) {
  %r = rlx.scan %h0 {length = 0 : i64} : (tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%c: tensor<3xf32>):
    rlx.yield %c : tensor<3xf32>
  }
  func.return
}

// -----

// A broadcast count that claims an input as xs that is not there.
// CHECK-LABEL: sym_name = "no_xs_broadcast_count"
// CHECK: Operation does not verify: 'rlx.scan' num_broadcast 2 must be between 0 and the 1 inputs
func.func @no_xs_broadcast_count(%h0: tensor<3xf32>, %w: tensor<3xf32>) {
  %r = rlx.scan %h0, %w {length = 4 : i64, num_broadcast = 2 : i64} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%c: tensor<3xf32>, %b: tensor<3xf32>):
    rlx.yield %c : tensor<3xf32>
  }
  func.return
}
