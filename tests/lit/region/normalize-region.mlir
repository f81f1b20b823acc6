// RUN: rlx-opt %s --split-input-file | filecheck %s
// RUN: rlx-opt %s --split-input-file --print-op-generic | rlx-opt --split-input-file | filecheck %s

// rlx.normalize_region prints back in its custom form (the prologue body,
// then `epilogue` and its body), whether written custom or generic.

// CHECK-LABEL: func.func @scaled_masked(
// CHECK-NEXT: {{%[a-zA-Z0-9_]+}} = rlx.normalize_region ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<2x16xf16>, tensor<f16>, tensor<2x16xf16>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], axis = 1 : i64, normalization = "log_softmax"} -> tensor<2x16xf16> {
// CHECK-NEXT: ^{{.*}}([[A:%[a-zA-Z0-9_]+]]: f16, [[B:%[a-zA-Z0-9_]+]]: f16):
// CHECK-NEXT: [[M:%[a-zA-Z0-9_]+]] = rlx.mul [[A]], [[B]] : (f16, f16) -> f16
// CHECK-NEXT: rlx.yield [[M]] : f16
// CHECK-NEXT: } epilogue {
// CHECK-NEXT: ^{{.*}}([[P:%[a-zA-Z0-9_]+]]: f16, [[Q:%[a-zA-Z0-9_]+]]: f16):
// CHECK-NEXT: [[T:%[a-zA-Z0-9_]+]] = rlx.mul [[P]], [[Q]] : (f16, f16) -> f16
// CHECK-NEXT: rlx.yield [[T]] : f16
// CHECK-NEXT: }
func.func @scaled_masked(%x: tensor<2x16xf16>, %s: tensor<f16>, %m: tensor<2x16xf16>) -> tensor<2x16xf16> {
  %p = rlx.normalize_region ins(%x, %s, %m : tensor<2x16xf16>, tensor<f16>, tensor<2x16xf16>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], axis = 1 : i64, normalization = "log_softmax"} -> tensor<2x16xf16> {
  ^bb0(%a: f16, %b: f16):
    %t = rlx.mul %a, %b : (f16, f16) -> f16
    rlx.yield %t : f16
  } epilogue {
  ^bb0(%v: f16, %w: f16):
    %u = rlx.mul %v, %w : (f16, f16) -> f16
    rlx.yield %u : f16
  }
  func.return %p : tensor<2x16xf16>
}
