// RUN: rlx-opt %s --split-input-file | filecheck %s
// RUN: rlx-opt %s --split-input-file --print-op-generic | rlx-opt --split-input-file | filecheck %s
// RUN: rlx-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

// Ops written in the generic form parse and print back in custom syntax; the
// generic printout re-parses to the same IR.

// CHECK-LABEL: func.func @elementwise(
// CHECK-SAME: [[A:%[a-zA-Z0-9_]+]]: tensor<4x3xf32>, [[B:%[a-zA-Z0-9_]+]]: tensor<3xf32>, [[I:%[a-zA-Z0-9_]+]]: tensor<3xi32>
// CHECK-NEXT: [[S:%[a-zA-Z0-9_]+]] = rlx.add [[A]], [[B]] : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: [[T:%[a-zA-Z0-9_]+]] = rlx.gelu_approx [[S]] : (tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: [[P:%[a-zA-Z0-9_]+]] = rlx.le [[T]], [[B]] : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xi1>
// CHECK-NEXT: [[W:%[a-zA-Z0-9_]+]] = rlx.where [[P]], [[T]], [[A]] : (tensor<4x3xi1>, tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: [[F:%[a-zA-Z0-9_]+]] = rlx.fma [[W]], [[W]], [[B]] : (tensor<4x3xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: [[C:%[a-zA-Z0-9_]+]] = rlx.cast [[I]] : (tensor<3xi32>) -> tensor<3xf32>
// CHECK-NEXT: [[X:%[a-zA-Z0-9_]+]] = rlx.bit_xor [[I]], [[I]] : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
// CHECK-NEXT: func.return [[F]], [[C]], [[X]] : tensor<4x3xf32>, tensor<3xf32>, tensor<3xi32>

// GENERIC-LABEL: "func.func"() <{sym_name = "elementwise"
// GENERIC: "rlx.add"(%{{.*}}, %{{.*}}) : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
// GENERIC: "rlx.gelu_approx"(%{{.*}}) : (tensor<4x3xf32>) -> tensor<4x3xf32>
// GENERIC: "rlx.le"(%{{.*}}, %{{.*}}) : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xi1>
// GENERIC: "rlx.where"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<4x3xi1>, tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
// GENERIC: "rlx.fma"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<4x3xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
// GENERIC: "rlx.cast"(%{{.*}}) <{saturate = true}> : (tensor<3xi32>) -> tensor<3xf32>
// GENERIC: "rlx.bit_xor"(%{{.*}}, %{{.*}}) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
func.func @elementwise(%a: tensor<4x3xf32>, %b: tensor<3xf32>, %i: tensor<3xi32>) -> (tensor<4x3xf32>, tensor<3xf32>, tensor<3xi32>) {
  %s = "rlx.add"(%a, %b) : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %t = "rlx.gelu_approx"(%s) : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %p = "rlx.le"(%t, %b) : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xi1>
  %w = "rlx.where"(%p, %t, %a) : (tensor<4x3xi1>, tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %f = "rlx.fma"(%w, %w, %b) : (tensor<4x3xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %c = "rlx.cast"(%i) : (tensor<3xi32>) -> tensor<3xf32>
  %x = "rlx.bit_xor"(%i, %i) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  func.return %f, %c, %x : tensor<4x3xf32>, tensor<3xf32>, tensor<3xi32>
}

// -----

// A splat keeps its one value in the generic form too: a rank-0 value, the
// result type holding the shape (dialects/parser.py).
// CHECK-LABEL: func.func @shape_and_constant(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<1x3xf64>
// CHECK-NEXT: [[C:%[a-zA-Z0-9_]+]] = rlx.constant dense<2.500000e+00> : tensor<2x3xf64>
// CHECK-NEXT: [[E:%[a-zA-Z0-9_]+]] = rlx.expand [[X]] : (tensor<1x3xf64>) -> tensor<2x3xf64>
// CHECK-NEXT: [[R:%[a-zA-Z0-9_]+]] = rlx.reshape [[C]] : (tensor<2x3xf64>) -> tensor<6xf64>
// CHECK-NEXT: func.return [[E]], [[R]] : tensor<2x3xf64>, tensor<6xf64>

// GENERIC-LABEL: "func.func"() <{sym_name = "shape_and_constant"
// GENERIC: "rlx.constant"() <{value = dense<2.500000e+00> : tensor<f64>}> : () -> tensor<2x3xf64>
// GENERIC: "rlx.expand"(%{{.*}}) : (tensor<1x3xf64>) -> tensor<2x3xf64>
// GENERIC: "rlx.reshape"(%{{.*}}) : (tensor<2x3xf64>) -> tensor<6xf64>
func.func @shape_and_constant(%x: tensor<1x3xf64>) -> (tensor<2x3xf64>, tensor<6xf64>) {
  %c = "rlx.constant"() <{value = dense<2.5> : tensor<2x3xf64>}> : () -> tensor<2x3xf64>
  %e = "rlx.expand"(%x) : (tensor<1x3xf64>) -> tensor<2x3xf64>
  %r = "rlx.reshape"(%c) : (tensor<2x3xf64>) -> tensor<6xf64>
  func.return %e, %r : tensor<2x3xf64>, tensor<6xf64>
}

// -----

// CHECK-LABEL: func.func @region(
// CHECK-SAME: [[A:%[a-zA-Z0-9_]+]]: tensor<4x3xf32>, [[B:%[a-zA-Z0-9_]+]]: tensor<4x1xf32>
// CHECK-NEXT: [[R0:%[a-zA-Z0-9_]+]], [[R1:%[a-zA-Z0-9_]+]] = rlx.elementwise_region ins([[A]], [[B]] : tensor<4x3xf32>, tensor<4x1xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>]} -> (tensor<4x3xf32>, tensor<4x3xi1>) {
// CHECK-NEXT: ^{{.*}}([[X:%[a-zA-Z0-9_]+]]: f32, [[Y:%[a-zA-Z0-9_]+]]: f32):
// CHECK-NEXT: [[T:%[a-zA-Z0-9_]+]] = rlx.tanh [[X]] : (f32) -> f32
// CHECK-NEXT: [[P:%[a-zA-Z0-9_]+]] = rlx.lt [[T]], [[Y]] : (f32, f32) -> i1
// CHECK-NEXT: rlx.yield [[T]], [[P]] : f32, i1
// CHECK-NEXT: }
// CHECK-NEXT: func.return [[R0]], [[R1]] : tensor<4x3xf32>, tensor<4x3xi1>

// GENERIC-LABEL: "func.func"() <{sym_name = "region"
// GENERIC: "rlx.elementwise_region"(%{{.*}}, %{{.*}}) <{indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>]}> ({
// GENERIC: "rlx.tanh"(%{{.*}}) : (f32) -> f32
// GENERIC: "rlx.lt"(%{{.*}}, %{{.*}}) : (f32, f32) -> i1
// GENERIC: "rlx.yield"(%{{.*}}, %{{.*}}) : (f32, i1) -> ()
// GENERIC: }) : (tensor<4x3xf32>, tensor<4x1xf32>) -> (tensor<4x3xf32>, tensor<4x3xi1>)
func.func @region(%a: tensor<4x3xf32>, %b: tensor<4x1xf32>) -> (tensor<4x3xf32>, tensor<4x3xi1>) {
  %r:2 = "rlx.elementwise_region"(%a, %b) <{indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>]}> ({
  ^bb0(%x: f32, %y: f32):
    %t = "rlx.tanh"(%x) : (f32) -> f32
    %p = "rlx.lt"(%t, %y) : (f32, f32) -> i1
    "rlx.yield"(%t, %p) : (f32, i1) -> ()
  }) : (tensor<4x3xf32>, tensor<4x1xf32>) -> (tensor<4x3xf32>, tensor<4x3xi1>)
  func.return %r#0, %r#1 : tensor<4x3xf32>, tensor<4x3xi1>
}
