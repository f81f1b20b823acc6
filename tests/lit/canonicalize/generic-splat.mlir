// RUN: rlx-opt %s --split-input-file | filecheck %s --check-prefix=ROUNDTRIP
// RUN: rlx-opt %s --split-input-file -p canonicalize | filecheck %s
// RUN: rlx-opt %s --split-input-file -p canonicalize,canonicalize-broadcast,fuse-elementwise,fuse-reductions,fuse-epilogues,fuse-siblings,canonicalize-broadcast,plan-memory | filecheck %s --check-prefix=PLAN

// A splat written in the generic form is read as the custom form reads it
// (rlx_mlir/dialects/parser.py): one value, the shape in the result type.
// xDSL's own parser would expand these to 10^9 and 10^12 elements (4 GB and
// 4 TB of data); here each parses, canonicalizes and plans as one f32.

// ROUNDTRIP-LABEL: func.func @generic_billion(
// ROUNDTRIP-NEXT: rlx.constant dense<1.000000e+00> : tensor<1000000000xf32>
// CHECK-LABEL: func.func @generic_billion(
// CHECK-NEXT: [[C:%[a-zA-Z0-9_]+]] = rlx.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: [[E:%[a-zA-Z0-9_]+]] = rlx.expand [[C]] : (tensor<f32>) -> tensor<1000000000xf32>
// CHECK-NEXT: rlx.reduce_sum [[E]]
// The sum reads the scalar through its index map: 64 bytes for the scalar and
// the result, and the reduction's partial sums, whatever the element count.
// PLAN-LABEL: func.func @generic_billion(
// PLAN-SAME: rlx.arena_size = [[#ARENA:]] : i64
// PLAN-NEXT: rlx.constant {rlx.constant_slot = 0 : i64} dense<1.000000e+00> : tensor<f32>
// PLAN-NEXT: rlx.reduction_region ins(%{{.*}} : tensor<f32>) {indexing_maps = [affine_map<(d0) -> ()>], iteration_shape = array<i64: 1000000000>
func.func @generic_billion() -> tensor<f32> {
  %c = "rlx.constant"() <{value = dense<1.0> : tensor<1000000000xf32>}> : () -> tensor<1000000000xf32>
  %s = rlx.reduce_sum %c {axes = array<i64: 0>} : (tensor<1000000000xf32>) -> tensor<f32>
  func.return %s : tensor<f32>
}

// -----

// 10^12 elements, the value as an attribute (the older generic spelling):
// the same arena as 10^9.
// ROUNDTRIP-LABEL: func.func @generic_trillion(
// ROUNDTRIP-NEXT: rlx.constant dense<1.000000e+00> : tensor<1000000000000xf32>
// CHECK-LABEL: func.func @generic_trillion(
// CHECK-NEXT: [[C:%[a-zA-Z0-9_]+]] = rlx.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: rlx.expand [[C]] : (tensor<f32>) -> tensor<1000000000000xf32>
// PLAN-LABEL: func.func @generic_trillion(
// PLAN-SAME: rlx.arena_size = [[#ARENA]] : i64
// PLAN-NEXT: rlx.constant {rlx.constant_slot = 0 : i64} dense<1.000000e+00> : tensor<f32>
func.func @generic_trillion() -> tensor<f32> {
  %c = "rlx.constant"() {value = dense<1.0> : tensor<1000000000000xf32>} : () -> tensor<1000000000000xf32>
  %s = rlx.reduce_sum %c {axes = array<i64: 0>} : (tensor<1000000000000xf32>) -> tensor<f32>
  func.return %s : tensor<f32>
}

// -----

// A hex literal of one element is a splat too (xDSL repeats its bytes), in
// either syntax; a discardable attribute is read and printed back.
// ROUNDTRIP-LABEL: func.func @hex(
// ROUNDTRIP-NEXT: rlx.constant {note = 1 : i64} dense<1.000000e+00> : tensor<1000000000000xf32>
// ROUNDTRIP-NEXT: rlx.constant dense<-2> : tensor<1000000000000xi32>
// CHECK-LABEL: func.func @hex(
// CHECK-NEXT: rlx.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: rlx.expand
// CHECK-NEXT: rlx.constant dense<-2> : tensor<i32>
// CHECK-NEXT: rlx.expand
func.func @hex() -> (tensor<1000000000000xf32>, tensor<1000000000000xi32>) {
  %a = "rlx.constant"() <{value = dense<"0x0000803F"> : tensor<1000000000000xf32>}> {note = 1 : i64} : () -> tensor<1000000000000xf32>
  %b = rlx.constant dense<"0xFEFFFFFF"> : tensor<1000000000000xi32>
  func.return %a, %b : tensor<1000000000000xf32>, tensor<1000000000000xi32>
}
