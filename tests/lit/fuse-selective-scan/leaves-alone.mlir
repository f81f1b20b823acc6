// RUN: rlx-opt %s --split-input-file -p fuse-selective-scan | filecheck %s

// Unrolled recurrences that are not exactly the selective scan stay as they are.

// Step 1 reads slice 2 of dA and dBu, step 2 slice 1: not the steps in order.
// CHECK-LABEL: func.func @step_reads_another_index(
// CHECK-NOT: rlx.selective_scan
// CHECK: rlx.concat
func.func @step_reads_another_index(%x: tensor<2x4x3xf32>, %dt: tensor<2x4x3xf32>, %a: tensor<4x5xf32>, %b: tensor<2x3x5xf32>, %c: tensor<2x3x5xf32>) -> tensor<2x4x3xf32> {
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
  %i1 = rlx.constant dense<2> : tensor<i64>
  %da1 = rlx.gather %da, %i1 {axis = 2 : i64} : (tensor<2x4x3x5xf32>, tensor<i64>) -> tensor<2x4x5xf32>
  %p1 = rlx.mul %da1, %h0 : (tensor<2x4x5xf32>, tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %dbu1 = rlx.gather %dbu, %i1 {axis = 2 : i64} : (tensor<2x4x3x5xf32>, tensor<i64>) -> tensor<2x4x5xf32>
  %h1 = rlx.add %p1, %dbu1 : (tensor<2x4x5xf32>, tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %c1 = rlx.gather %c, %i1 {axis = 1 : i64} : (tensor<2x3x5xf32>, tensor<i64>) -> tensor<2x5xf32>
  %cc1 = rlx.reshape %c1 : (tensor<2x5xf32>) -> tensor<2x5x1xf32>
  %y1 = rlx.matmul %h1, %cc1 : (tensor<2x4x5xf32>, tensor<2x5x1xf32>) -> tensor<2x4x1xf32>
  %i2 = rlx.constant dense<1> : tensor<i64>
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

// An intermediate state is also returned: the op has no such result.
// CHECK-LABEL: func.func @state_read_elsewhere(
// CHECK-NOT: rlx.selective_scan
// CHECK: rlx.concat
func.func @state_read_elsewhere(%x: tensor<2x4x3xf32>, %dt: tensor<2x4x3xf32>, %a: tensor<4x5xf32>, %b: tensor<2x3x5xf32>, %c: tensor<2x3x5xf32>) -> (tensor<2x4x3xf32>, tensor<2x4x5xf32>) {
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
  func.return %y, %h1 : tensor<2x4x3xf32>, tensor<2x4x5xf32>
}

// -----

// Only two of the three steps are stacked.
// CHECK-LABEL: func.func @step_missing(
// CHECK-NOT: rlx.selective_scan
// CHECK: rlx.concat
func.func @step_missing(%x: tensor<2x4x3xf32>, %dt: tensor<2x4x3xf32>, %a: tensor<4x5xf32>, %b: tensor<2x3x5xf32>, %c: tensor<2x3x5xf32>) -> tensor<2x4x2xf32> {
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
  %y = rlx.concat %y0, %y1 {axis = -1 : i64} : (tensor<2x4x1xf32>, tensor<2x4x1xf32>) -> tensor<2x4x2xf32>
  func.return %y : tensor<2x4x2xf32>
}

// -----

// The last step's drive is a slice of another tensor.
// CHECK-LABEL: func.func @step_reads_another_tensor(
// CHECK-NOT: rlx.selective_scan
// CHECK: rlx.concat
func.func @step_reads_another_tensor(%x: tensor<2x4x3xf32>, %dt: tensor<2x4x3xf32>, %a: tensor<4x5xf32>, %b: tensor<2x3x5xf32>, %c: tensor<2x3x5xf32>, %other: tensor<2x4x3x5xf32>) -> tensor<2x4x3xf32> {
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
  %dbu2 = rlx.gather %other, %i2 {axis = 2 : i64} : (tensor<2x4x3x5xf32>, tensor<i64>) -> tensor<2x4x5xf32>
  %h2 = rlx.add %p2, %dbu2 : (tensor<2x4x5xf32>, tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %c2 = rlx.gather %c, %i2 {axis = 1 : i64} : (tensor<2x3x5xf32>, tensor<i64>) -> tensor<2x5xf32>
  %cc2 = rlx.reshape %c2 : (tensor<2x5xf32>) -> tensor<2x5x1xf32>
  %y2 = rlx.matmul %h2, %cc2 : (tensor<2x4x5xf32>, tensor<2x5x1xf32>) -> tensor<2x4x1xf32>
  %y = rlx.concat %y0, %y1, %y2 {axis = -1 : i64} : (tensor<2x4x1xf32>, tensor<2x4x1xf32>, tensor<2x4x1xf32>) -> tensor<2x4x3xf32>
  func.return %y : tensor<2x4x3xf32>
}

// -----

// The decay is sigmoid(A·Δ), not exp(A·Δ).
// CHECK-LABEL: func.func @decay_not_exp(
// CHECK-NOT: rlx.selective_scan
// CHECK: rlx.concat
func.func @decay_not_exp(%x: tensor<2x4x3xf32>, %dt: tensor<2x4x3xf32>, %a: tensor<4x5xf32>, %b: tensor<2x3x5xf32>, %c: tensor<2x3x5xf32>) -> tensor<2x4x3xf32> {
  %a4 = rlx.reshape %a : (tensor<4x5xf32>) -> tensor<1x4x1x5xf32>
  %dt4 = rlx.reshape %dt : (tensor<2x4x3xf32>) -> tensor<2x4x3x1xf32>
  %dadt = rlx.mul %a4, %dt4 : (tensor<1x4x1x5xf32>, tensor<2x4x3x1xf32>) -> tensor<2x4x3x5xf32>
  %da = rlx.sigmoid %dadt : (tensor<2x4x3x5xf32>) -> tensor<2x4x3x5xf32>
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
