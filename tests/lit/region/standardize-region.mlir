// RUN: rlx-opt %s --split-input-file | filecheck %s
// RUN: rlx-opt %s --split-input-file --print-op-generic | rlx-opt --split-input-file | filecheck %s

// rlx.standardize_region prints back in its custom form (the prologue body,
// then `epilogue` and its body), whether written custom or generic.

// CHECK-LABEL: func.func @scale_bias(
// CHECK-NEXT: {{%[a-zA-Z0-9_]+}} = rlx.standardize_region ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<2x16xbf16>, tensor<16xbf16>, tensor<bf16>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> ()>], axis = 1 : i64, epsilon = 1.000000e-06 : f64, centered = false} -> tensor<2x16xbf16> {
// CHECK-NEXT: ^{{.*}}([[A:%[a-zA-Z0-9_]+]]: bf16):
// CHECK-NEXT: rlx.yield [[A]] : bf16
// CHECK-NEXT: } epilogue {
// CHECK-NEXT: ^{{.*}}([[V:%[a-zA-Z0-9_]+]]: bf16, [[G:%[a-zA-Z0-9_]+]]: bf16, [[B:%[a-zA-Z0-9_]+]]: bf16):
// CHECK-NEXT: [[M:%[a-zA-Z0-9_]+]] = rlx.mul [[V]], [[G]] : (bf16, bf16) -> bf16
// CHECK-NEXT: [[T:%[a-zA-Z0-9_]+]] = rlx.add [[M]], [[B]] : (bf16, bf16) -> bf16
// CHECK-NEXT: rlx.yield [[T]] : bf16
// CHECK-NEXT: }
func.func @scale_bias(%x: tensor<2x16xbf16>, %g: tensor<16xbf16>, %b: tensor<bf16>) -> tensor<2x16xbf16> {
  %y = rlx.standardize_region ins(%x, %g, %b : tensor<2x16xbf16>, tensor<16xbf16>, tensor<bf16>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> ()>], axis = 1 : i64, epsilon = 1.0e-06 : f64, centered = false} -> tensor<2x16xbf16> {
  ^bb0(%a: bf16):
    rlx.yield %a : bf16
  } epilogue {
  ^bb0(%v: bf16, %w: bf16, %c: bf16):
    %m = rlx.mul %v, %w : (bf16, bf16) -> bf16
    %t = rlx.add %m, %c : (bf16, bf16) -> bf16
    rlx.yield %t : bf16
  }
  func.return %y : tensor<2x16xbf16>
}
