// RUN: rlx-opt %s --split-input-file | filecheck %s
// RUN: rlx-opt %s --split-input-file -p canonicalize | filecheck %s --check-prefix=CANON
// RUN: rlx-opt %s --split-input-file -p default | filecheck %s --check-prefix=LOWERED

// A scan with no per-step inputs (xs) is a loop of `length` steps: the length
// property is the step count of every rlx.scan, and xs, when there are any,
// must agree with it (dialects/scan.py). tests/test_scan_no_xs.py runs these;
// tests/lit/scan/invalid-no-xs.mlir holds what is refused.

// The carry plus a broadcast input, five times.
// CHECK-LABEL: func.func @broadcast_only(
// CHECK-NEXT: rlx.scan %{{.*}}, %{{.*}} {length = 5 : i64, num_broadcast = 1 : i64} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32> {
// CANON-LABEL: func.func @broadcast_only(
// CANON-NEXT: rlx.scan %{{.*}}, %{{.*}} {length = 5 : i64, num_broadcast = 1 : i64}
// LOWERED-LABEL: llvm.func @broadcast_only(
func.func @broadcast_only(%h0: tensor<3xf32>, %w: tensor<3xf32>) -> tensor<3xf32> {
  %h = rlx.scan %h0, %w {length = 5 : i64, num_broadcast = 1 : i64} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%c: tensor<3xf32>, %b: tensor<3xf32>):
    %n = rlx.add %c, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    rlx.yield %n : tensor<3xf32>
  }
  func.return %h : tensor<3xf32>
}

// -----

// The carry alone, with its trajectory: one row per step.
// CHECK-LABEL: func.func @carry_only(
// CHECK-NEXT: rlx.scan %{{.*}} {length = 4 : i64, save_trajectory = true} : (tensor<2xf32>) -> tensor<4x2xf32> {
// LOWERED-LABEL: llvm.func @carry_only(
func.func @carry_only(%h0: tensor<2xf32>) -> tensor<4x2xf32> {
  %h = rlx.scan %h0 {length = 4 : i64, save_trajectory = true} : (tensor<2xf32>) -> tensor<4x2xf32> {
  ^bb0(%c: tensor<2xf32>):
    %n = rlx.add %c, %c : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    rlx.yield %n : tensor<2xf32>
  }
  func.return %h : tensor<4x2xf32>
}
