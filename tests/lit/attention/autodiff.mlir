// RUN: rlx-opt %s --split-input-file -p 'autodiff{wrt=k}' | filecheck %s

// The adjoint of rlx.attention is composed of rlx ops (passes/autodiff.py).
// GQA, 4 query heads on 2 kv heads, with a mask: k is repeated per query
// head (reshape, expand, reshape), the probabilities are recomputed (scores
// scaled, masked, softmax; a row whose maximum is -inf set to 0),
// dS = P ⊙ (dO Vᵀ − rowsum(dO ⊙ O)), dK = dSᵀ Q · scale, summed back over the
// two query heads of each kv head. wrt=k: no dQ, dV or mask gradient.

// CHECK-LABEL: func.func @gqa(
// CHECK-SAME: [[Q:%[a-zA-Z0-9_]+]]: tensor<1x4x3x8xf32>, [[K:%[a-zA-Z0-9_]+]]: tensor<1x2x5x8xf32>, [[V:%[a-zA-Z0-9_]+]]: tensor<1x2x5x6xf32>, [[M:%[a-zA-Z0-9_]+]]: tensor<3x5xf32>, [[DO:%[a-zA-Z0-9_]+]]: tensor<1x4x3x6xf32>) -> (tensor<1x4x3x6xf32>, tensor<1x2x5x8xf32>)
// CHECK-NEXT: [[O:%[a-zA-Z0-9_]+]] = rlx.attention [[Q]], [[K]], [[V]], [[M]]
// CHECK-NEXT: [[K1:%[0-9]+]] = rlx.reshape [[K]] : (tensor<1x2x5x8xf32>) -> tensor<1x2x1x5x8xf32>
// CHECK-NEXT: [[K2:%[0-9]+]] = rlx.expand [[K1]] : (tensor<1x2x1x5x8xf32>) -> tensor<1x2x2x5x8xf32>
// CHECK-NEXT: [[KX:%[0-9]+]] = rlx.reshape [[K2]] : (tensor<1x2x2x5x8xf32>) -> tensor<1x4x5x8xf32>
// CHECK: [[VX:%[0-9]+]] = rlx.reshape {{%[0-9]+}} : (tensor<1x2x2x5x6xf32>) -> tensor<1x4x5x6xf32>
// CHECK-NEXT: [[QK:%[0-9]+]] = rlx.matmul [[Q]], [[KX]] {transpose_rhs = true}
// CHECK-NEXT: [[SCALE:%[0-9]+]] = rlx.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT: [[S:%[0-9]+]] = rlx.mul [[QK]], [[SCALE]]
// CHECK-NEXT: [[SM:%[0-9]+]] = rlx.add [[S]], [[M]]
// CHECK-NEXT: [[P:%[0-9]+]] = rlx.softmax [[SM]]
// CHECK-NEXT: [[TOP:%[0-9]+]] = rlx.reduce_max [[SM]] {axes = array<i64: 3>, keepdims = true}
// CHECK-NEXT: [[NEG_INF:%[0-9]+]] = rlx.constant dense<0xff800000> : tensor<f32>
// CHECK-NEXT: [[ALL_MASKED:%[0-9]+]] = rlx.eq [[TOP]], [[NEG_INF]]
// CHECK-NEXT: [[ZEROS:%[0-9]+]] = rlx.constant dense<0.000000e+00> : tensor<1x4x3x5xf32>
// CHECK-NEXT: [[PZ:%[0-9]+]] = rlx.where [[ALL_MASKED]], [[ZEROS]], [[P]]
// CHECK-NEXT: [[DOO:%[0-9]+]] = rlx.mul [[DO]], [[O]]
// CHECK-NEXT: [[ROW:%[0-9]+]] = rlx.reduce_sum [[DOO]] {axes = array<i64: 3>, keepdims = true}
// CHECK-NEXT: [[DP:%[0-9]+]] = rlx.matmul [[DO]], [[VX]] {transpose_rhs = true}
// CHECK-NEXT: [[DIFF:%[0-9]+]] = rlx.sub [[DP]], [[ROW]]
// CHECK-NEXT: [[DS:%[0-9]+]] = rlx.mul [[PZ]], [[DIFF]]
// CHECK-NEXT: [[DSQ:%[0-9]+]] = rlx.matmul [[DS]], [[Q]] {transpose_lhs = true}
// CHECK-NEXT: [[DKX:%[0-9]+]] = rlx.mul [[DSQ]], [[SCALE]]
// CHECK-NEXT: [[DKG:%[0-9]+]] = rlx.reshape [[DKX]] : (tensor<1x4x5x8xf32>) -> tensor<1x2x2x5x8xf32>
// CHECK-NEXT: [[DK:%[0-9]+]] = rlx.reduce_sum [[DKG]] {axes = array<i64: 2>}
// CHECK-NEXT: func.return [[O]], [[DK]]
func.func @gqa(%q: tensor<1x4x3x8xf32>, %k: tensor<1x2x5x8xf32>, %v: tensor<1x2x5x6xf32>, %m: tensor<3x5xf32>) -> tensor<1x4x3x6xf32> {
  %o = rlx.attention %q, %k, %v, %m {scale = 0.5 : f64} : (tensor<1x4x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x6xf32>, tensor<3x5xf32>) -> tensor<1x4x3x6xf32>
  func.return %o : tensor<1x4x3x6xf32>
}

// -----

// Causal without a mask: the causal -inf mask is a constant added to the
// scores, and no row can be all -inf (each query sees key 0), so P is the
// softmax as it is.

// CHECK-LABEL: func.func @causal(
// CHECK: [[S:%[0-9]+]] = rlx.mul
// CHECK-NEXT: [[CAUSAL:%[0-9]+]] = rlx.constant dense<{{\[\[}}0.000000e+00, 0xfff0000000000000, 0xfff0000000000000], [0.000000e+00, 0.000000e+00, 0xfff0000000000000]]> : tensor<2x3xf64>
// CHECK-NEXT: [[SC:%[0-9]+]] = rlx.add [[S]], [[CAUSAL]]
// CHECK-NEXT: [[P:%[0-9]+]] = rlx.softmax [[SC]]
// CHECK-NOT: rlx.reduce_max
// CHECK: func.return
func.func @causal(%q: tensor<1x1x2x4xf64>, %k: tensor<1x1x3x4xf64>) -> tensor<1x1x2x4xf64> {
  %o = rlx.attention %q, %k, %k {scale = 0.5 : f64, causal = true} : (tensor<1x1x2x4xf64>, tensor<1x1x3x4xf64>, tensor<1x1x3x4xf64>) -> tensor<1x1x2x4xf64>
  func.return %o : tensor<1x1x2x4xf64>
}
