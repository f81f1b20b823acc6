// RUN: rlx-opt %s --split-input-file -p fuse-selective-scan | filecheck %s

// Mamba's selective scan as transformers' CPU path writes it and both of
// torch's exporters unroll it (B 2, D 4 channels, L 3 steps, N 5 states):
// dA = exp(A·Δ), dBu = Δ·B·x over all steps, then per step i
// h = dA[:, :, i]·h + dBu[:, :, i] and y_i = h @ C[:, i, :, None], the
// readouts stacked on the last axis. It becomes one rlx.selective_scan on
// x and Δ by time ([B, L, D]), A, B and C; its output is transposed back.
// CHECK-LABEL: func.func @mamba(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<2x4x3xf32>, [[DT:%[a-zA-Z0-9_]+]]: tensor<2x4x3xf32>, [[A:%[a-zA-Z0-9_]+]]: tensor<4x5xf32>, [[B:%[a-zA-Z0-9_]+]]: tensor<2x3x5xf32>, [[C:%[a-zA-Z0-9_]+]]: tensor<2x3x5xf32>
// CHECK-NEXT: [[XT:%[a-zA-Z0-9_]+]] = rlx.transpose [[X]] {perm = array<i64: 0, 2, 1>} : (tensor<2x4x3xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT: [[DTT:%[a-zA-Z0-9_]+]] = rlx.transpose [[DT]] {perm = array<i64: 0, 2, 1>} : (tensor<2x4x3xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT: [[S:%[a-zA-Z0-9_]+]] = rlx.selective_scan [[XT]], [[DTT]], [[A]], [[B]], [[C]] {state_size = 5 : i64} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<4x5xf32>, tensor<2x3x5xf32>, tensor<2x3x5xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT: [[Y:%[a-zA-Z0-9_]+]] = rlx.transpose [[S]] {perm = array<i64: 0, 2, 1>} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
// CHECK-NEXT: func.return [[Y]]
// CHECK-NOT: rlx.gather
func.func @mamba(%x: tensor<2x4x3xf32>, %dt: tensor<2x4x3xf32>, %a: tensor<4x5xf32>, %b: tensor<2x3x5xf32>, %c: tensor<2x3x5xf32>) -> tensor<2x4x3xf32> {
  %a4 = rlx.reshape %a : (tensor<4x5xf32>) -> tensor<1x4x1x5xf32>
  %dt4 = rlx.reshape %dt : (tensor<2x4x3xf32>) -> tensor<2x4x3x1xf32>
  %dadt = rlx.mul %a4, %dt4 : (tensor<1x4x1x5xf32>, tensor<2x4x3x1xf32>) -> tensor<2x4x3x5xf32>
  %da = rlx.exp %dadt : (tensor<2x4x3x5xf32>) -> tensor<2x4x3x5xf32>
  %b4 = rlx.reshape %b : (tensor<2x3x5xf32>) -> tensor<2x1x3x5xf32>
  %x4 = rlx.reshape %x : (tensor<2x4x3xf32>) -> tensor<2x4x3x1xf32>
  %db = rlx.mul %dt4, %b4 : (tensor<2x4x3x1xf32>, tensor<2x1x3x5xf32>) -> tensor<2x4x3x5xf32>
  %dbu = rlx.mul %db, %x4 : (tensor<2x4x3x5xf32>, tensor<2x4x3x1xf32>) -> tensor<2x4x3x5xf32>
  %h = rlx.constant dense<0.000000e+00> : tensor<2x4x5xf32>
  %i0 = rlx.constant dense<0> : tensor<i64>
  %da0 = rlx.gather %da, %i0 {axis = 2 : i64} : (tensor<2x4x3x5xf32>, tensor<i64>) -> tensor<2x4x5xf32>
  %p0 = rlx.mul %da0, %h : (tensor<2x4x5xf32>, tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %dbu0 = rlx.gather %dbu, %i0 {axis = 2 : i64} : (tensor<2x4x3x5xf32>, tensor<i64>) -> tensor<2x4x5xf32>
  %h0 = rlx.add %p0, %dbu0 : (tensor<2x4x5xf32>, tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %c0 = rlx.gather %c, %i0 {axis = 1 : i64} : (tensor<2x3x5xf32>, tensor<i64>) -> tensor<2x5xf32>
  %cc0 = rlx.reshape %c0 : (tensor<2x5xf32>) -> tensor<2x5x1xf32>
  %y0 = rlx.matmul %h0, %cc0 : (tensor<2x4x5xf32>, tensor<2x5x1xf32>) -> tensor<2x4x1xf32>
  %i1 = rlx.constant dense<1> : tensor<i64>
  %da1 = rlx.gather %da, %i1 {axis = 2 : i64} : (tensor<2x4x3x5xf32>, tensor<i64>) -> tensor<2x4x5xf32>
  %p1 = rlx.mul %da1, %h0 : (tensor<2x4x5xf32>, tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %dbu1 = rlx.gather %dbu, %i1 {axis = 2 : i64} : (tensor<2x4x3x5xf32>, tensor<i64>) -> tensor<2x4x5xf32>
  %h1 = rlx.add %p1, %dbu1 : (tensor<2x4x5xf32>, tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %c1 = rlx.gather %c, %i1 {axis = 1 : i64} : (tensor<2x3x5xf32>, tensor<i64>) -> tensor<2x5xf32>
  %cc1 = rlx.reshape %c1 : (tensor<2x5xf32>) -> tensor<2x5x1xf32>
  %y1 = rlx.matmul %h1, %cc1 : (tensor<2x4x5xf32>, tensor<2x5x1xf32>) -> tensor<2x4x1xf32>
  %i2 = rlx.constant dense<2> : tensor<i64>
  %da2 = rlx.gather %da, %i2 {axis = 2 : i64} : (tensor<2x4x3x5xf32>, tensor<i64>) -> tensor<2x4x5xf32>
  %p2 = rlx.mul %da2, %h1 : (tensor<2x4x5xf32>, tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %dbu2 = rlx.gather %dbu, %i2 {axis = 2 : i64} : (tensor<2x4x3x5xf32>, tensor<i64>) -> tensor<2x4x5xf32>
  %h2 = rlx.add %p2, %dbu2 : (tensor<2x4x5xf32>, tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %c2 = rlx.gather %c, %i2 {axis = 1 : i64} : (tensor<2x3x5xf32>, tensor<i64>) -> tensor<2x5xf32>
  %cc2 = rlx.reshape %c2 : (tensor<2x5xf32>) -> tensor<2x5x1xf32>
  %y2 = rlx.matmul %h2, %cc2 : (tensor<2x4x5xf32>, tensor<2x5x1xf32>) -> tensor<2x4x1xf32>
  %y = rlx.concat %y0, %y1, %y2 {axis = -1 : i64} : (tensor<2x4x1xf32>, tensor<2x4x1xf32>, tensor<2x4x1xf32>) -> tensor<2x4x3xf32>
  func.return %y : tensor<2x4x3xf32>
}

// -----

// A carried initial state (an argument, not zeros) is the op's state operand;
// the last state, also returned, is the op's state result. dBu is grouped
// x·(B·Δ) here: any order and grouping of the three factors is the same.
// CHECK-LABEL: func.func @carried_and_final_state(
// CHECK-SAME: [[C:%[a-zA-Z0-9_]+]]: tensor<2x3x5xf32>, [[H:%[a-zA-Z0-9_]+]]: tensor<2x4x5xf32>
// CHECK: [[S:%[a-zA-Z0-9_]+]], [[HN:%[a-zA-Z0-9_]+]] = rlx.selective_scan {{.*}}, [[C]], [[H]] {state_size = 5 : i64} : ({{.*}}, tensor<2x4x5xf32>) -> (tensor<2x3x4xf32>, tensor<2x4x5xf32>)
// CHECK-NEXT: [[Y:%[a-zA-Z0-9_]+]] = rlx.transpose [[S]]
// CHECK-NEXT: func.return [[Y]], [[HN]]
func.func @carried_and_final_state(%x: tensor<2x4x3xf32>, %dt: tensor<2x4x3xf32>, %a: tensor<4x5xf32>, %b: tensor<2x3x5xf32>, %c: tensor<2x3x5xf32>, %h: tensor<2x4x5xf32>) -> (tensor<2x4x3xf32>, tensor<2x4x5xf32>) {
  %a4 = rlx.reshape %a : (tensor<4x5xf32>) -> tensor<1x4x1x5xf32>
  %dt4 = rlx.reshape %dt : (tensor<2x4x3xf32>) -> tensor<2x4x3x1xf32>
  %dadt = rlx.mul %a4, %dt4 : (tensor<1x4x1x5xf32>, tensor<2x4x3x1xf32>) -> tensor<2x4x3x5xf32>
  %da = rlx.exp %dadt : (tensor<2x4x3x5xf32>) -> tensor<2x4x3x5xf32>
  %b4 = rlx.reshape %b : (tensor<2x3x5xf32>) -> tensor<2x1x3x5xf32>
  %x4 = rlx.reshape %x : (tensor<2x4x3xf32>) -> tensor<2x4x3x1xf32>
  %bd = rlx.mul %b4, %dt4 : (tensor<2x1x3x5xf32>, tensor<2x4x3x1xf32>) -> tensor<2x4x3x5xf32>
  %dbu = rlx.mul %x4, %bd : (tensor<2x4x3x1xf32>, tensor<2x4x3x5xf32>) -> tensor<2x4x3x5xf32>
  %i0 = rlx.constant dense<0> : tensor<i64>
  %da0 = rlx.gather %da, %i0 {axis = 2 : i64} : (tensor<2x4x3x5xf32>, tensor<i64>) -> tensor<2x4x5xf32>
  %p0 = rlx.mul %da0, %h : (tensor<2x4x5xf32>, tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %dbu0 = rlx.gather %dbu, %i0 {axis = 2 : i64} : (tensor<2x4x3x5xf32>, tensor<i64>) -> tensor<2x4x5xf32>
  %h0 = rlx.add %p0, %dbu0 : (tensor<2x4x5xf32>, tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %c0 = rlx.gather %c, %i0 {axis = 1 : i64} : (tensor<2x3x5xf32>, tensor<i64>) -> tensor<2x5xf32>
  %cc0 = rlx.reshape %c0 : (tensor<2x5xf32>) -> tensor<2x5x1xf32>
  %y0 = rlx.matmul %h0, %cc0 : (tensor<2x4x5xf32>, tensor<2x5x1xf32>) -> tensor<2x4x1xf32>
  %i1 = rlx.constant dense<1> : tensor<i64>
  %da1 = rlx.gather %da, %i1 {axis = 2 : i64} : (tensor<2x4x3x5xf32>, tensor<i64>) -> tensor<2x4x5xf32>
  %p1 = rlx.mul %da1, %h0 : (tensor<2x4x5xf32>, tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %dbu1 = rlx.gather %dbu, %i1 {axis = 2 : i64} : (tensor<2x4x3x5xf32>, tensor<i64>) -> tensor<2x4x5xf32>
  %h1 = rlx.add %p1, %dbu1 : (tensor<2x4x5xf32>, tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %c1 = rlx.gather %c, %i1 {axis = 1 : i64} : (tensor<2x3x5xf32>, tensor<i64>) -> tensor<2x5xf32>
  %cc1 = rlx.reshape %c1 : (tensor<2x5xf32>) -> tensor<2x5x1xf32>
  %y1 = rlx.matmul %h1, %cc1 : (tensor<2x4x5xf32>, tensor<2x5x1xf32>) -> tensor<2x4x1xf32>
  %i2 = rlx.constant dense<2> : tensor<i64>
  %da2 = rlx.gather %da, %i2 {axis = 2 : i64} : (tensor<2x4x3x5xf32>, tensor<i64>) -> tensor<2x4x5xf32>
  %p2 = rlx.mul %da2, %h1 : (tensor<2x4x5xf32>, tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %dbu2 = rlx.gather %dbu, %i2 {axis = 2 : i64} : (tensor<2x4x3x5xf32>, tensor<i64>) -> tensor<2x4x5xf32>
  %h2 = rlx.add %p2, %dbu2 : (tensor<2x4x5xf32>, tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %c2 = rlx.gather %c, %i2 {axis = 1 : i64} : (tensor<2x3x5xf32>, tensor<i64>) -> tensor<2x5xf32>
  %cc2 = rlx.reshape %c2 : (tensor<2x5xf32>) -> tensor<2x5x1xf32>
  %y2 = rlx.matmul %h2, %cc2 : (tensor<2x4x5xf32>, tensor<2x5x1xf32>) -> tensor<2x4x1xf32>
  %y = rlx.concat %y0, %y1, %y2 {axis = -1 : i64} : (tensor<2x4x1xf32>, tensor<2x4x1xf32>, tensor<2x4x1xf32>) -> tensor<2x4x3xf32>
  func.return %y, %h2 : tensor<2x4x3xf32>, tensor<2x4x5xf32>
}

// -----

// Readouts stacked by time ([B, 1, D] pieces on axis 1): the op's output as it is.
// CHECK-LABEL: func.func @channels_last(
// CHECK: [[S:%[a-zA-Z0-9_]+]] = rlx.selective_scan
// CHECK-NEXT: func.return [[S]] : tensor<2x3x4xf32>
func.func @channels_last(%x: tensor<2x4x3xf32>, %dt: tensor<2x4x3xf32>, %a: tensor<4x5xf32>, %b: tensor<2x3x5xf32>, %c: tensor<2x3x5xf32>) -> tensor<2x3x4xf32> {
  %a4 = rlx.reshape %a : (tensor<4x5xf32>) -> tensor<1x4x1x5xf32>
  %dt4 = rlx.reshape %dt : (tensor<2x4x3xf32>) -> tensor<2x4x3x1xf32>
  %dadt = rlx.mul %a4, %dt4 : (tensor<1x4x1x5xf32>, tensor<2x4x3x1xf32>) -> tensor<2x4x3x5xf32>
  %da = rlx.exp %dadt : (tensor<2x4x3x5xf32>) -> tensor<2x4x3x5xf32>
  %b4 = rlx.reshape %b : (tensor<2x3x5xf32>) -> tensor<2x1x3x5xf32>
  %x4 = rlx.reshape %x : (tensor<2x4x3xf32>) -> tensor<2x4x3x1xf32>
  %db = rlx.mul %dt4, %b4 : (tensor<2x4x3x1xf32>, tensor<2x1x3x5xf32>) -> tensor<2x4x3x5xf32>
  %dbu = rlx.mul %db, %x4 : (tensor<2x4x3x5xf32>, tensor<2x4x3x1xf32>) -> tensor<2x4x3x5xf32>
  %h = rlx.constant dense<0.000000e+00> : tensor<2x4x5xf32>
  %i0 = rlx.constant dense<0> : tensor<i64>
  %da0 = rlx.gather %da, %i0 {axis = 2 : i64} : (tensor<2x4x3x5xf32>, tensor<i64>) -> tensor<2x4x5xf32>
  %p0 = rlx.mul %da0, %h : (tensor<2x4x5xf32>, tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %dbu0 = rlx.gather %dbu, %i0 {axis = 2 : i64} : (tensor<2x4x3x5xf32>, tensor<i64>) -> tensor<2x4x5xf32>
  %h0 = rlx.add %p0, %dbu0 : (tensor<2x4x5xf32>, tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %c0 = rlx.gather %c, %i0 {axis = 1 : i64} : (tensor<2x3x5xf32>, tensor<i64>) -> tensor<2x5xf32>
  %cc0 = rlx.reshape %c0 : (tensor<2x5xf32>) -> tensor<2x5x1xf32>
  %y0 = rlx.matmul %h0, %cc0 : (tensor<2x4x5xf32>, tensor<2x5x1xf32>) -> tensor<2x4x1xf32>
  %r0 = rlx.reshape %y0 : (tensor<2x4x1xf32>) -> tensor<2x1x4xf32>
  %i1 = rlx.constant dense<1> : tensor<i64>
  %da1 = rlx.gather %da, %i1 {axis = 2 : i64} : (tensor<2x4x3x5xf32>, tensor<i64>) -> tensor<2x4x5xf32>
  %p1 = rlx.mul %da1, %h0 : (tensor<2x4x5xf32>, tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %dbu1 = rlx.gather %dbu, %i1 {axis = 2 : i64} : (tensor<2x4x3x5xf32>, tensor<i64>) -> tensor<2x4x5xf32>
  %h1 = rlx.add %p1, %dbu1 : (tensor<2x4x5xf32>, tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %c1 = rlx.gather %c, %i1 {axis = 1 : i64} : (tensor<2x3x5xf32>, tensor<i64>) -> tensor<2x5xf32>
  %cc1 = rlx.reshape %c1 : (tensor<2x5xf32>) -> tensor<2x5x1xf32>
  %y1 = rlx.matmul %h1, %cc1 : (tensor<2x4x5xf32>, tensor<2x5x1xf32>) -> tensor<2x4x1xf32>
  %r1 = rlx.reshape %y1 : (tensor<2x4x1xf32>) -> tensor<2x1x4xf32>
  %i2 = rlx.constant dense<2> : tensor<i64>
  %da2 = rlx.gather %da, %i2 {axis = 2 : i64} : (tensor<2x4x3x5xf32>, tensor<i64>) -> tensor<2x4x5xf32>
  %p2 = rlx.mul %da2, %h1 : (tensor<2x4x5xf32>, tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %dbu2 = rlx.gather %dbu, %i2 {axis = 2 : i64} : (tensor<2x4x3x5xf32>, tensor<i64>) -> tensor<2x4x5xf32>
  %h2 = rlx.add %p2, %dbu2 : (tensor<2x4x5xf32>, tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %c2 = rlx.gather %c, %i2 {axis = 1 : i64} : (tensor<2x3x5xf32>, tensor<i64>) -> tensor<2x5xf32>
  %cc2 = rlx.reshape %c2 : (tensor<2x5xf32>) -> tensor<2x5x1xf32>
  %y2 = rlx.matmul %h2, %cc2 : (tensor<2x4x5xf32>, tensor<2x5x1xf32>) -> tensor<2x4x1xf32>
  %r2 = rlx.reshape %y2 : (tensor<2x4x1xf32>) -> tensor<2x1x4xf32>
  %y = rlx.concat %r0, %r1, %r2 {axis = 1 : i64} : (tensor<2x1x4xf32>, tensor<2x1x4xf32>, tensor<2x1x4xf32>) -> tensor<2x3x4xf32>
  func.return %y : tensor<2x3x4xf32>
}

// -----

// The zero initial state as the exports after canonicalize-broadcast may
// spell it: a rank-0 constant the first product broadcasts. No state operand.
// CHECK-LABEL: func.func @broadcast_zero_state(
// CHECK: rlx.selective_scan {{%[a-zA-Z0-9_]+}}, {{%[a-zA-Z0-9_]+}}, {{%[a-zA-Z0-9_]+}}, {{%[a-zA-Z0-9_]+}}, {{%[a-zA-Z0-9_]+}} {state_size = 5 : i64}
// CHECK-NOT: rlx.constant
func.func @broadcast_zero_state(%x: tensor<2x4x3xf32>, %dt: tensor<2x4x3xf32>, %a: tensor<4x5xf32>, %b: tensor<2x3x5xf32>, %c: tensor<2x3x5xf32>) -> tensor<2x4x3xf32> {
  %a4 = rlx.reshape %a : (tensor<4x5xf32>) -> tensor<1x4x1x5xf32>
  %dt4 = rlx.reshape %dt : (tensor<2x4x3xf32>) -> tensor<2x4x3x1xf32>
  %dadt = rlx.mul %a4, %dt4 : (tensor<1x4x1x5xf32>, tensor<2x4x3x1xf32>) -> tensor<2x4x3x5xf32>
  %da = rlx.exp %dadt : (tensor<2x4x3x5xf32>) -> tensor<2x4x3x5xf32>
  %b4 = rlx.reshape %b : (tensor<2x3x5xf32>) -> tensor<2x1x3x5xf32>
  %x4 = rlx.reshape %x : (tensor<2x4x3xf32>) -> tensor<2x4x3x1xf32>
  %db = rlx.mul %dt4, %b4 : (tensor<2x4x3x1xf32>, tensor<2x1x3x5xf32>) -> tensor<2x4x3x5xf32>
  %dbu = rlx.mul %db, %x4 : (tensor<2x4x3x5xf32>, tensor<2x4x3x1xf32>) -> tensor<2x4x3x5xf32>
  %h = rlx.constant dense<0.000000e+00> : tensor<f32>
  %i0 = rlx.constant dense<0> : tensor<i64>
  %da0 = rlx.gather %da, %i0 {axis = 2 : i64} : (tensor<2x4x3x5xf32>, tensor<i64>) -> tensor<2x4x5xf32>
  %p0 = rlx.mul %da0, %h : (tensor<2x4x5xf32>, tensor<f32>) -> tensor<2x4x5xf32>
  %dbu0 = rlx.gather %dbu, %i0 {axis = 2 : i64} : (tensor<2x4x3x5xf32>, tensor<i64>) -> tensor<2x4x5xf32>
  %h0 = rlx.add %p0, %dbu0 : (tensor<2x4x5xf32>, tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %c0 = rlx.gather %c, %i0 {axis = 1 : i64} : (tensor<2x3x5xf32>, tensor<i64>) -> tensor<2x5xf32>
  %cc0 = rlx.reshape %c0 : (tensor<2x5xf32>) -> tensor<2x5x1xf32>
  %y0 = rlx.matmul %h0, %cc0 : (tensor<2x4x5xf32>, tensor<2x5x1xf32>) -> tensor<2x4x1xf32>
  %i1 = rlx.constant dense<1> : tensor<i64>
  %da1 = rlx.gather %da, %i1 {axis = 2 : i64} : (tensor<2x4x3x5xf32>, tensor<i64>) -> tensor<2x4x5xf32>
  %p1 = rlx.mul %da1, %h0 : (tensor<2x4x5xf32>, tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %dbu1 = rlx.gather %dbu, %i1 {axis = 2 : i64} : (tensor<2x4x3x5xf32>, tensor<i64>) -> tensor<2x4x5xf32>
  %h1 = rlx.add %p1, %dbu1 : (tensor<2x4x5xf32>, tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %c1 = rlx.gather %c, %i1 {axis = 1 : i64} : (tensor<2x3x5xf32>, tensor<i64>) -> tensor<2x5xf32>
  %cc1 = rlx.reshape %c1 : (tensor<2x5xf32>) -> tensor<2x5x1xf32>
  %y1 = rlx.matmul %h1, %cc1 : (tensor<2x4x5xf32>, tensor<2x5x1xf32>) -> tensor<2x4x1xf32>
  %i2 = rlx.constant dense<2> : tensor<i64>
  %da2 = rlx.gather %da, %i2 {axis = 2 : i64} : (tensor<2x4x3x5xf32>, tensor<i64>) -> tensor<2x4x5xf32>
  %p2 = rlx.mul %da2, %h1 : (tensor<2x4x5xf32>, tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %dbu2 = rlx.gather %dbu, %i2 {axis = 2 : i64} : (tensor<2x4x3x5xf32>, tensor<i64>) -> tensor<2x4x5xf32>
  %h2 = rlx.add %p2, %dbu2 : (tensor<2x4x5xf32>, tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %c2 = rlx.gather %c, %i2 {axis = 1 : i64} : (tensor<2x3x5xf32>, tensor<i64>) -> tensor<2x5xf32>
  %cc2 = rlx.reshape %c2 : (tensor<2x5xf32>) -> tensor<2x5x1xf32>
  %y2 = rlx.matmul %h2, %cc2 : (tensor<2x4x5xf32>, tensor<2x5x1xf32>) -> tensor<2x4x1xf32>
  %y = rlx.concat %y0, %y1, %y2 {axis = -1 : i64} : (tensor<2x4x1xf32>, tensor<2x4x1xf32>, tensor<2x4x1xf32>) -> tensor<2x4x3xf32>
  func.return %y : tensor<2x4x3xf32>
}
