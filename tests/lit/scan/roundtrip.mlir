// RUN: rlx-opt %s --split-input-file | filecheck %s
// RUN: rlx-opt %s --split-input-file --print-op-generic | rlx-opt --split-input-file | filecheck %s

// rlx.scan prints back in its custom form whether written custom or generic.
// Properties at their defaults (num_broadcast = 0, save_trajectory = false,
// num_checkpoints = 0) are left out.

// CHECK-LABEL: func.func @elman(
// CHECK-NEXT: {{%[a-zA-Z0-9_]+}} = rlx.scan %{{.*}}, %{{.*}}, %{{.*}} {length = 5 : i64, num_broadcast = 1 : i64} : (tensor<2x4xf32>, tensor<4x4xf32>, tensor<5x2x4xf32>) -> tensor<2x4xf32> {
// CHECK-NEXT: ^{{.*}}([[C:%[a-zA-Z0-9_]+]]: tensor<2x4xf32>, [[W:%[a-zA-Z0-9_]+]]: tensor<4x4xf32>, [[X:%[a-zA-Z0-9_]+]]: tensor<2x4xf32>):
// CHECK-NEXT: [[P:%[a-zA-Z0-9_]+]] = rlx.matmul [[C]], [[W]]
// CHECK-NEXT: [[S:%[a-zA-Z0-9_]+]] = rlx.add [[P]], [[X]]
// CHECK-NEXT: rlx.yield [[S]] : tensor<2x4xf32>
// CHECK-NEXT: }
func.func @elman(%h0: tensor<2x4xf32>, %w: tensor<4x4xf32>, %xs: tensor<5x2x4xf32>) -> tensor<2x4xf32> {
  %h = "rlx.scan"(%h0, %w, %xs) <{length = 5 : i64, num_broadcast = 1 : i64}> ({
  ^bb0(%c: tensor<2x4xf32>, %ww: tensor<4x4xf32>, %x: tensor<2x4xf32>):
    %p = rlx.matmul %c, %ww : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    %s = rlx.add %p, %x : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    rlx.yield %s : tensor<2x4xf32>
  }) : (tensor<2x4xf32>, tensor<4x4xf32>, tensor<5x2x4xf32>) -> tensor<2x4xf32>
  func.return %h : tensor<2x4xf32>
}

// -----

// Checkpoints: K = 2 rows of the carry after steps 2 and 5 (ceil((k+1)·6/2) - 1).
// CHECK-LABEL: func.func @checkpoints(
// CHECK-NEXT: rlx.scan %{{.*}}, %{{.*}} {length = 6 : i64, save_trajectory = true, num_checkpoints = 2 : i64} : (tensor<3xf64>, tensor<6x3xf64>) -> tensor<2x3xf64> {
func.func @checkpoints(%c0: tensor<3xf64>, %xs: tensor<6x3xf64>) -> tensor<2x3xf64> {
  %r = rlx.scan %c0, %xs {length = 6 : i64, save_trajectory = true, num_checkpoints = 2 : i64} : (tensor<3xf64>, tensor<6x3xf64>) -> tensor<2x3xf64> {
  ^bb0(%c: tensor<3xf64>, %x: tensor<3xf64>):
    %s = rlx.mul %c, %x : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
    rlx.yield %s : tensor<3xf64>
  }
  func.return %r : tensor<2x3xf64>
}

// -----

// rlx.scan_backward: the vjp body, then (checkpoints only) the forward body.
// CHECK-LABEL: func.func @backward(
// CHECK-NEXT: {{%[a-zA-Z0-9_]+}}, {{%[a-zA-Z0-9_]+}}, {{%[a-zA-Z0-9_]+}} = rlx.scan_backward %{{.*}} {length = 4 : i64, num_broadcast = 1 : i64, num_checkpoints = 2 : i64, mode = "griewank"} : (tensor<3xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<4x3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<4x3xf32>) vjp {
// CHECK-NEXT: ^{{.*}}(%{{.*}}: tensor<3xf32>, %{{.*}}: tensor<3xf32>, %{{.*}}: tensor<3xf32>, [[G:%[a-zA-Z0-9_]+]]: tensor<3xf32>):
// CHECK-NEXT: rlx.yield [[G]], [[G]], [[G]] : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
// CHECK-NEXT: } forward {
// CHECK-NEXT: ^{{.*}}([[C:%[a-zA-Z0-9_]+]]: tensor<3xf32>, %{{.*}}: tensor<3xf32>, %{{.*}}: tensor<3xf32>):
// CHECK-NEXT: rlx.yield [[C]] : tensor<3xf32>
// CHECK-NEXT: }
func.func @backward(%c0: tensor<3xf32>, %saved: tensor<2x3xf32>, %d: tensor<3xf32>, %w: tensor<3xf32>, %xs: tensor<4x3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<4x3xf32>) {
  %di, %dw, %dx = rlx.scan_backward %c0, %saved, %d, %w, %xs {length = 4 : i64, num_broadcast = 1 : i64, num_checkpoints = 2 : i64, mode = "griewank"} : (tensor<3xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<4x3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<4x3xf32>) vjp {
  ^bb0(%c: tensor<3xf32>, %ww: tensor<3xf32>, %x: tensor<3xf32>, %g: tensor<3xf32>):
    rlx.yield %g, %g, %g : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
  } forward {
  ^bb0(%c: tensor<3xf32>, %ww: tensor<3xf32>, %x: tensor<3xf32>):
    rlx.yield %c : tensor<3xf32>
  }
  func.return %di, %dw, %dx : tensor<3xf32>, tensor<3xf32>, tensor<4x3xf32>
}
