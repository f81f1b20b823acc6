// RUN: rlx-opt %s --split-input-file -p fuse-elementwise,fuse-reductions,canonicalize-broadcast | filecheck %s

// An rlx.standardize_region takes the chains on both sides: a residual add
// before it becomes its prologue, the scale and bias after it its epilogue,
// read as vectors along the last axis.

// CHECK-LABEL: func.func @residual_scale_bias(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<4x8xf32>, [[R:%[a-zA-Z0-9_]+]]: tensor<4x8xf32>, [[G:%[a-zA-Z0-9_]+]]: tensor<8xf32>, [[B:%[a-zA-Z0-9_]+]]: tensor<8xf32>
// CHECK-NEXT: [[Y:%[a-zA-Z0-9_]+]] = rlx.standardize_region ins([[X]], [[R]], [[G]], [[B]] : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1)>], axis = 1 : i64, epsilon = 1.000000e-05 : f64, centered = true} -> tensor<4x8xf32> {
// CHECK-NEXT: ^{{.*}}([[A:%[a-zA-Z0-9_]+]]: f32, [[C:%[a-zA-Z0-9_]+]]: f32):
// CHECK-NEXT: [[S:%[a-zA-Z0-9_]+]] = rlx.add [[A]], [[C]] : (f32, f32) -> f32
// CHECK-NEXT: rlx.yield [[S]] : f32
// CHECK-NEXT: } epilogue {
// CHECK-NEXT: ^{{.*}}([[V:%[a-zA-Z0-9_]+]]: f32, [[P:%[a-zA-Z0-9_]+]]: f32, [[Q:%[a-zA-Z0-9_]+]]: f32):
// CHECK-NEXT: [[M:%[a-zA-Z0-9_]+]] = rlx.mul [[V]], [[P]] : (f32, f32) -> f32
// CHECK-NEXT: [[T:%[a-zA-Z0-9_]+]] = rlx.add [[M]], [[Q]] : (f32, f32) -> f32
// CHECK-NEXT: rlx.yield [[T]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return [[Y]] : tensor<4x8xf32>
func.func @residual_scale_bias(%x: tensor<4x8xf32>, %r: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %h = rlx.add %x, %r : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %n = rlx.standardize_region ins(%h : tensor<4x8xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], axis = 1 : i64, epsilon = 1.0e-05 : f64, centered = true} -> tensor<4x8xf32> {
  ^bb0(%a: f32):
    rlx.yield %a : f32
  } epilogue {
  ^bb0(%v: f32):
    rlx.yield %v : f32
  }
  %s = rlx.mul %n, %g : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %y = rlx.add %s, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// -----

// The residual sum is also a result (the next block's input): it stays an op
// of its own and the normalization reads it.
// CHECK-LABEL: func.func @residual_kept(
// CHECK: [[H:%[a-zA-Z0-9_]+]] = rlx.add
// CHECK: rlx.standardize_region ins([[H]] : tensor<4x8xf32>)
func.func @residual_kept(%x: tensor<4x8xf32>, %r: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %h = rlx.add %x, %r : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %n = rlx.standardize_region ins(%h : tensor<4x8xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], axis = 1 : i64, epsilon = 1.0e-05 : f64, centered = false} -> tensor<4x8xf32> {
  ^bb0(%a: f32):
    rlx.yield %a : f32
  } epilogue {
  ^bb0(%v: f32):
    rlx.yield %v : f32
  }
  func.return %n, %h : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A scale along the first axis is not a vector of the last: its product
// keeps its own kernel.
// CHECK-LABEL: func.func @scale_along_rows(
// CHECK: [[N:%[a-zA-Z0-9_]+]] = rlx.standardize_region
// CHECK: rlx.mul [[N]], %{{.*}} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
func.func @scale_along_rows(%x: tensor<4x8xf32>, %g: tensor<4x1xf32>) -> tensor<4x8xf32> {
  %n = rlx.standardize_region ins(%x : tensor<4x8xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], axis = 1 : i64, epsilon = 1.0e-05 : f64, centered = true} -> tensor<4x8xf32> {
  ^bb0(%a: f32):
    rlx.yield %a : f32
  } epilogue {
  ^bb0(%v: f32):
    rlx.yield %v : f32
  }
  %y = rlx.mul %n, %g : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}
