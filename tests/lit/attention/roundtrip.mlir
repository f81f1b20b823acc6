// RUN: rlx-opt %s --split-input-file | filecheck %s
// RUN: rlx-opt %s --split-input-file | rlx-opt --split-input-file | filecheck %s
// RUN: rlx-opt %s --split-input-file --print-op-generic | rlx-opt --split-input-file | filecheck %s

// rlx.attention prints back in its custom form whether it was written custom
// or generic (third RUN line). The mask operand is optional; scale is always
// printed, causal only when true.

// Multi-head with a 2-D mask, grouped-query causal (8 query heads on 2 kv
// heads, Dv != D, Sq != Sk), multi-query bf16 with a 4-D mask broadcast over
// the heads, f64 with a batch-broadcast mask and causal = false written out.

// CHECK-LABEL: func.func @forms(
// CHECK-SAME: [[Q:%[a-zA-Z0-9_]+]]: tensor<2x4x6x8xf32>, [[K:%[a-zA-Z0-9_]+]]: tensor<2x4x7x8xf32>, [[V:%[a-zA-Z0-9_]+]]: tensor<2x4x7x8xf32>, [[M:%[a-zA-Z0-9_]+]]: tensor<6x7xf32>, [[QG:%[a-zA-Z0-9_]+]]: tensor<1x8x5x16xf32>, [[KG:%[a-zA-Z0-9_]+]]: tensor<1x2x9x16xf32>, [[VG:%[a-zA-Z0-9_]+]]: tensor<1x2x9x4xf32>, [[QB:%[a-zA-Z0-9_]+]]: tensor<2x4x3x8xbf16>, [[KB:%[a-zA-Z0-9_]+]]: tensor<2x1x3x8xbf16>, [[MB:%[a-zA-Z0-9_]+]]: tensor<2x1x3x3xbf16>, [[QD:%[a-zA-Z0-9_]+]]: tensor<3x2x4x2xf64>, [[MD:%[a-zA-Z0-9_]+]]: tensor<1x2x4x4xf64>
// CHECK-NEXT: {{%[a-zA-Z0-9_]+}} = rlx.attention [[Q]], [[K]], [[V]], [[M]] {scale = 3.535530e-01 : f64} : (tensor<2x4x6x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<6x7xf32>) -> tensor<2x4x6x8xf32>
// CHECK-NEXT: {{%[a-zA-Z0-9_]+}} = rlx.attention [[QG]], [[KG]], [[VG]] {scale = 2.500000e-01 : f64, causal = true} : (tensor<1x8x5x16xf32>, tensor<1x2x9x16xf32>, tensor<1x2x9x4xf32>) -> tensor<1x8x5x4xf32>
// CHECK-NEXT: {{%[a-zA-Z0-9_]+}} = rlx.attention [[QB]], [[KB]], [[KB]], [[MB]] {scale = 1.000000e+00 : f64, causal = true} : (tensor<2x4x3x8xbf16>, tensor<2x1x3x8xbf16>, tensor<2x1x3x8xbf16>, tensor<2x1x3x3xbf16>) -> tensor<2x4x3x8xbf16>
// CHECK-NEXT: {{%[a-zA-Z0-9_]+}} = rlx.attention [[QD]], [[QD]], [[QD]], [[MD]] {scale = -2.000000e+00 : f64} : (tensor<3x2x4x2xf64>, tensor<3x2x4x2xf64>, tensor<3x2x4x2xf64>, tensor<1x2x4x4xf64>) -> tensor<3x2x4x2xf64>
// CHECK-NEXT: func.return
func.func @forms(%q: tensor<2x4x6x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>, %m: tensor<6x7xf32>, %qg: tensor<1x8x5x16xf32>, %kg: tensor<1x2x9x16xf32>, %vg: tensor<1x2x9x4xf32>, %qb: tensor<2x4x3x8xbf16>, %kb: tensor<2x1x3x8xbf16>, %mb: tensor<2x1x3x3xbf16>, %qd: tensor<3x2x4x2xf64>, %md: tensor<1x2x4x4xf64>) {
  %a = rlx.attention %q, %k, %v, %m {scale = 0.353553 : f64} : (tensor<2x4x6x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<6x7xf32>) -> tensor<2x4x6x8xf32>
  %b = rlx.attention %qg, %kg, %vg {scale = 0.25 : f64, causal = true} : (tensor<1x8x5x16xf32>, tensor<1x2x9x16xf32>, tensor<1x2x9x4xf32>) -> tensor<1x8x5x4xf32>
  %c = rlx.attention %qb, %kb, %kb, %mb {scale = 1.0 : f64, causal = true} : (tensor<2x4x3x8xbf16>, tensor<2x1x3x8xbf16>, tensor<2x1x3x8xbf16>, tensor<2x1x3x3xbf16>) -> tensor<2x4x3x8xbf16>
  %d = rlx.attention %qd, %qd, %qd, %md {scale = -2.0 : f64, causal = false} : (tensor<3x2x4x2xf64>, tensor<3x2x4x2xf64>, tensor<3x2x4x2xf64>, tensor<1x2x4x4xf64>) -> tensor<3x2x4x2xf64>
  func.return
}

// -----

// The generic form, as a pass that builds the op prints it with --print-op-generic.
// CHECK-LABEL: func.func @generic(
// CHECK-NEXT: {{%[a-zA-Z0-9_]+}} = rlx.attention {{%[a-zA-Z0-9_]+}}, {{%[a-zA-Z0-9_]+}}, {{%[a-zA-Z0-9_]+}} {scale = 1.250000e-01 : f64, causal = true} : (tensor<1x1x2x64xf16>, tensor<1x1x3x64xf16>, tensor<1x1x3x64xf16>) -> tensor<1x1x2x64xf16>
func.func @generic(%q: tensor<1x1x2x64xf16>, %k: tensor<1x1x3x64xf16>, %v: tensor<1x1x3x64xf16>) {
  %o = "rlx.attention"(%q, %k, %v) <{scale = 0.125 : f64, causal = true}> : (tensor<1x1x2x64xf16>, tensor<1x1x3x64xf16>, tensor<1x1x3x64xf16>) -> tensor<1x1x2x64xf16>
  func.return
}
