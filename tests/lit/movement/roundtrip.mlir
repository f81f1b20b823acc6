// RUN: rlx-opt %s --split-input-file | filecheck %s
// RUN: rlx-opt %s --split-input-file | rlx-opt --split-input-file | filecheck %s
// RUN: rlx-opt %s --split-input-file --print-op-generic | rlx-opt --split-input-file | filecheck %s

// Every data-movement op prints back in its custom form. Properties are
// written in the attribute dictionary; those at their default value (pad's
// mode "constant" and value 0.0, an axis or batch_dims of 0, reduction
// "none") are left out of the printout.

// Layout ops: transpose, slice (negative start is kept as written, negative
// step), narrow, reverse (negative axis kept), pad, concat.

// CHECK-LABEL: func.func @layout(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<3x4xf32>, [[Y:%[a-zA-Z0-9_]+]]: tensor<2x4xf32>, [[Z:%[a-zA-Z0-9_]+]]: tensor<4xf32>
// CHECK-NEXT: [[T:%[a-zA-Z0-9_]+]] = rlx.transpose [[X]] {perm = array<i64: 1, 0>} : (tensor<3x4xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: [[S:%[a-zA-Z0-9_]+]] = rlx.slice [[X]] {starts = array<i64: -1, 0>, steps = array<i64: -1, 2>} : (tensor<3x4xf32>) -> tensor<3x2xf32>
// CHECK-NEXT: [[N:%[a-zA-Z0-9_]+]] = rlx.narrow [[X]] {axis = 1 : i64, start = 1 : i64, length = 2 : i64} : (tensor<3x4xf32>) -> tensor<3x2xf32>
// CHECK-NEXT: [[R:%[a-zA-Z0-9_]+]] = rlx.reverse [[X]] {axes = array<i64: 0, -1>} : (tensor<3x4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT: [[P:%[a-zA-Z0-9_]+]] = rlx.pad [[X]] {before = array<i64: 1, 0>, after = array<i64: 1, 2>, mode = "reflect"} : (tensor<3x4xf32>) -> tensor<5x6xf32>
// CHECK-NEXT: [[P2:%[a-zA-Z0-9_]+]] = rlx.pad [[X]] {before = array<i64: 1, 0>, after = array<i64: 0, 0>} : (tensor<3x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: [[P3:%[a-zA-Z0-9_]+]] = rlx.pad [[Z]] {before = array<i64: 2>, after = array<i64: 1>, mode = "circular", value = 1.500000e+00 : f64} : (tensor<4xf32>) -> tensor<7xf32>
// CHECK-NEXT: [[C:%[a-zA-Z0-9_]+]] = rlx.concat [[X]], [[Y]] {axis = 0 : i64} : (tensor<3x4xf32>, tensor<2x4xf32>) -> tensor<5x4xf32>
// CHECK-NEXT: [[C2:%[a-zA-Z0-9_]+]] = rlx.concat [[Z]], [[X]] {axis = -2 : i64} : (tensor<4xf32>, tensor<3x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: func.return
func.func @layout(%x: tensor<3x4xf32>, %y: tensor<2x4xf32>, %z: tensor<4xf32>) {
  %t = rlx.transpose %x {perm = array<i64: 1, 0>} : (tensor<3x4xf32>) -> tensor<4x3xf32>
  %s = rlx.slice %x {starts = array<i64: -1, 0>, steps = array<i64: -1, 2>} : (tensor<3x4xf32>) -> tensor<3x2xf32>
  %n = rlx.narrow %x {axis = 1 : i64, start = 1 : i64, length = 2 : i64} : (tensor<3x4xf32>) -> tensor<3x2xf32>
  %r = rlx.reverse %x {axes = array<i64: 0, -1>} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %p = rlx.pad %x {before = array<i64: 1, 0>, after = array<i64: 1, 2>, mode = "reflect", value = 0.0 : f64} : (tensor<3x4xf32>) -> tensor<5x6xf32>
  %p2 = rlx.pad %x {before = array<i64: 1, 0>, after = array<i64: 0, 0>} : (tensor<3x4xf32>) -> tensor<4x4xf32>
  %p3 = rlx.pad %z {before = array<i64: 2>, after = array<i64: 1>, mode = "circular", value = 1.5 : f64} : (tensor<4xf32>) -> tensor<7xf32>
  %c = rlx.concat %x, %y {axis = 0 : i64} : (tensor<3x4xf32>, tensor<2x4xf32>) -> tensor<5x4xf32>
  %c2 = rlx.concat %z, %x {axis = -2 : i64} : (tensor<4xf32>, tensor<3x4xf32>) -> tensor<4x4xf32>
  func.return
}

// -----

// Gathers with i32 and i64 indices; a zero axis / batch_dims is elided.

// CHECK-LABEL: func.func @gathers(
// CHECK-SAME: [[D:%[a-zA-Z0-9_]+]]: tensor<5x4xf32>, [[I:%[a-zA-Z0-9_]+]]: tensor<3xi64>, [[J:%[a-zA-Z0-9_]+]]: tensor<2x3xi32>, [[E:%[a-zA-Z0-9_]+]]: tensor<5x2xi64>, [[ND:%[a-zA-Z0-9_]+]]: tensor<2x2xi64>, [[B:%[a-zA-Z0-9_]+]]: tensor<5x1xi32>, [[DY:%[a-zA-Z0-9_]+]]: tensor<3x4xf32>, [[K:%[a-zA-Z0-9_]+]]: tensor<4xi64>
// CHECK-NEXT: %{{.*}} = rlx.gather [[D]], [[I]] {axis = 1 : i64} : (tensor<5x4xf32>, tensor<3xi64>) -> tensor<5x3xf32>
// CHECK-NEXT: %{{.*}} = rlx.gather [[D]], [[J]] : (tensor<5x4xf32>, tensor<2x3xi32>) -> tensor<2x3x4xf32>
// CHECK-NEXT: %{{.*}} = rlx.gather_elements [[D]], [[E]] {axis = -1 : i64} : (tensor<5x4xf32>, tensor<5x2xi64>) -> tensor<5x2xf32>
// CHECK-NEXT: %{{.*}} = rlx.gather_nd [[D]], [[ND]] : (tensor<5x4xf32>, tensor<2x2xi64>) -> tensor<2xf32>
// CHECK-NEXT: %{{.*}} = rlx.gather_nd [[D]], [[B]] {batch_dims = 1 : i64} : (tensor<5x4xf32>, tensor<5x1xi32>) -> tensor<5xf32>
// CHECK-NEXT: %{{.*}} = rlx.gather_backward [[DY]], [[I]] : (tensor<3x4xf32>, tensor<3xi64>) -> tensor<5x4xf32>
// CHECK-NEXT: %{{.*}} = rlx.gather_backward [[DY]], [[K]] {axis = 1 : i64} : (tensor<3x4xf32>, tensor<4xi64>) -> tensor<3x9xf32>
// CHECK-NEXT: func.return
func.func @gathers(%d: tensor<5x4xf32>, %i: tensor<3xi64>, %j: tensor<2x3xi32>, %e: tensor<5x2xi64>, %nd: tensor<2x2xi64>, %b: tensor<5x1xi32>, %dy: tensor<3x4xf32>, %k: tensor<4xi64>) {
  %g = rlx.gather %d, %i {axis = 1 : i64} : (tensor<5x4xf32>, tensor<3xi64>) -> tensor<5x3xf32>
  %g0 = rlx.gather %d, %j {axis = 0 : i64} : (tensor<5x4xf32>, tensor<2x3xi32>) -> tensor<2x3x4xf32>
  %ge = rlx.gather_elements %d, %e {axis = -1 : i64} : (tensor<5x4xf32>, tensor<5x2xi64>) -> tensor<5x2xf32>
  %gn = rlx.gather_nd %d, %nd {batch_dims = 0 : i64} : (tensor<5x4xf32>, tensor<2x2xi64>) -> tensor<2xf32>
  %gb1 = rlx.gather_nd %d, %b {batch_dims = 1 : i64} : (tensor<5x4xf32>, tensor<5x1xi32>) -> tensor<5xf32>
  %gb = rlx.gather_backward %dy, %i : (tensor<3x4xf32>, tensor<3xi64>) -> tensor<5x4xf32>
  %gb2 = rlx.gather_backward %dy, %k {axis = 1 : i64} : (tensor<3x4xf32>, tensor<4xi64>) -> tensor<3x9xf32>
  func.return
}

// -----

// Scatters, with and without a reduction.

// CHECK-LABEL: func.func @scatters(
// CHECK-SAME: [[D:%[a-zA-Z0-9_]+]]: tensor<5x4xf32>, [[I:%[a-zA-Z0-9_]+]]: tensor<3xi64>, [[ND:%[a-zA-Z0-9_]+]]: tensor<2x2xi64>, [[ROWS:%[a-zA-Z0-9_]+]]: tensor<2x1xi32>, [[U:%[a-zA-Z0-9_]+]]: tensor<3x4xf32>, [[V:%[a-zA-Z0-9_]+]]: tensor<2xf32>, [[VR:%[a-zA-Z0-9_]+]]: tensor<2x4xf32>, [[E:%[a-zA-Z0-9_]+]]: tensor<5x2xi64>, [[UE:%[a-zA-Z0-9_]+]]: tensor<5x2xf32>
// CHECK-NEXT: %{{.*}} = rlx.scatter_add [[U]], [[I]] : (tensor<3x4xf32>, tensor<3xi64>) -> tensor<7x4xf32>
// CHECK-NEXT: %{{.*}} = rlx.scatter_nd [[D]], [[ND]], [[V]] : (tensor<5x4xf32>, tensor<2x2xi64>, tensor<2xf32>) -> tensor<5x4xf32>
// CHECK-NEXT: %{{.*}} = rlx.scatter_nd [[D]], [[ROWS]], [[VR]] {reduction = "add"} : (tensor<5x4xf32>, tensor<2x1xi32>, tensor<2x4xf32>) -> tensor<5x4xf32>
// CHECK-NEXT: %{{.*}} = rlx.scatter_elements [[D]], [[E]], [[UE]] {axis = 1 : i64, reduction = "max"} : (tensor<5x4xf32>, tensor<5x2xi64>, tensor<5x2xf32>) -> tensor<5x4xf32>
// CHECK-NEXT: %{{.*}} = rlx.scatter_elements [[D]], [[E]], [[UE]] : (tensor<5x4xf32>, tensor<5x2xi64>, tensor<5x2xf32>) -> tensor<5x4xf32>
// CHECK-NEXT: func.return
func.func @scatters(%d: tensor<5x4xf32>, %i: tensor<3xi64>, %nd: tensor<2x2xi64>, %rows: tensor<2x1xi32>, %u: tensor<3x4xf32>, %v: tensor<2xf32>, %vr: tensor<2x4xf32>, %e: tensor<5x2xi64>, %ue: tensor<5x2xf32>) {
  %sa = rlx.scatter_add %u, %i : (tensor<3x4xf32>, tensor<3xi64>) -> tensor<7x4xf32>
  %sn = rlx.scatter_nd %d, %nd, %v {reduction = "none"} : (tensor<5x4xf32>, tensor<2x2xi64>, tensor<2xf32>) -> tensor<5x4xf32>
  %sr = rlx.scatter_nd %d, %rows, %vr {reduction = "add"} : (tensor<5x4xf32>, tensor<2x1xi32>, tensor<2x4xf32>) -> tensor<5x4xf32>
  %se = rlx.scatter_elements %d, %e, %ue {axis = 1 : i64, reduction = "max"} : (tensor<5x4xf32>, tensor<5x2xi64>, tensor<5x2xf32>) -> tensor<5x4xf32>
  %se0 = rlx.scatter_elements %d, %e, %ue : (tensor<5x4xf32>, tensor<5x2xi64>, tensor<5x2xf32>) -> tensor<5x4xf32>
  func.return
}

// -----

// Activation gradients: relu_backward and activation_backward {kind}.

// CHECK-LABEL: func.func @backward(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<4x3xf32>, [[DY:%[a-zA-Z0-9_]+]]: tensor<4x3xf32>, [[H:%[a-zA-Z0-9_]+]]: tensor<3xf64>
// CHECK-NEXT: %{{.*}} = rlx.relu_backward [[X]], [[DY]] : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: %{{.*}} = rlx.activation_backward [[X]], [[DY]] {kind = "gelu"} : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: %{{.*}} = rlx.activation_backward [[H]], [[H]] {kind = "tanh"} : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
// CHECK-NEXT: func.return
func.func @backward(%x: tensor<4x3xf32>, %dy: tensor<4x3xf32>, %h: tensor<3xf64>) {
  %r = rlx.relu_backward %x, %dy : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %g = rlx.activation_backward %x, %dy {kind = "gelu"} : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %t = rlx.activation_backward %h, %h {kind = "tanh"} : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  func.return
}

// -----

// The generic form, properties in <{...}>, parses and prints in custom form.

// CHECK-LABEL: func.func @generic(
// CHECK-SAME: [[D:%[a-zA-Z0-9_]+]]: tensor<5x4xf32>, [[I:%[a-zA-Z0-9_]+]]: tensor<3xi32>, [[U:%[a-zA-Z0-9_]+]]: tensor<1x3xf32>
// CHECK-NEXT: [[G:%[a-zA-Z0-9_]+]] = rlx.gather [[D]], [[I]] {axis = 1 : i64} : (tensor<5x4xf32>, tensor<3xi32>) -> tensor<5x3xf32>
// CHECK-NEXT: [[T:%[a-zA-Z0-9_]+]] = rlx.transpose [[G]] {perm = array<i64: 1, 0>} : (tensor<5x3xf32>) -> tensor<3x5xf32>
// CHECK-NEXT: [[P:%[a-zA-Z0-9_]+]] = rlx.pad [[T]] {before = array<i64: 0, 1>, after = array<i64: 0, 0>, mode = "replicate"} : (tensor<3x5xf32>) -> tensor<3x6xf32>
// CHECK-NEXT: [[IX:%[a-zA-Z0-9_]+]] = rlx.reshape [[I]] : (tensor<3xi32>) -> tensor<1x3xi32>
// CHECK-NEXT: [[S:%[a-zA-Z0-9_]+]] = rlx.scatter_elements [[D]], [[IX]], [[U]] {axis = 1 : i64, reduction = "mul"} : (tensor<5x4xf32>, tensor<1x3xi32>, tensor<1x3xf32>) -> tensor<5x4xf32>
// CHECK-NEXT: func.return [[P]], [[S]] : tensor<3x6xf32>, tensor<5x4xf32>
func.func @generic(%d: tensor<5x4xf32>, %i: tensor<3xi32>, %u: tensor<1x3xf32>) -> (tensor<3x6xf32>, tensor<5x4xf32>) {
  %g = "rlx.gather"(%d, %i) <{axis = 1 : i64}> : (tensor<5x4xf32>, tensor<3xi32>) -> tensor<5x3xf32>
  %t = "rlx.transpose"(%g) <{perm = array<i64: 1, 0>}> : (tensor<5x3xf32>) -> tensor<3x5xf32>
  %p = "rlx.pad"(%t) <{before = array<i64: 0, 1>, after = array<i64: 0, 0>, mode = "replicate", value = 0.000000e+00 : f64}> : (tensor<3x5xf32>) -> tensor<3x6xf32>
  %ix = "rlx.reshape"(%i) : (tensor<3xi32>) -> tensor<1x3xi32>
  %s = "rlx.scatter_elements"(%d, %ix, %u) <{axis = 1 : i64, reduction = "mul"}> : (tensor<5x4xf32>, tensor<1x3xi32>, tensor<1x3xf32>) -> tensor<5x4xf32>
  func.return %p, %s : tensor<3x6xf32>, tensor<5x4xf32>
}
