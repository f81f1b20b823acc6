// RUN: rlx-opt %s --split-input-file -p fuse-attention | filecheck %s

// The attention pattern of exported transformers becomes one rlx.attention:
// the scores, their scale, mask, softmax and the product with v are gone.

// BERT's, DistilBERT's and BART's TorchScript export (torch's SDPA written
// out): the scale split as sqrt(scale) onto q and onto k^T, k^T one transpose
// from [B, S, H, D] (perm [0, 2, 3, 1]). k is read as [B, H, S, D] by one
// transpose of the source; the scale is the product of the two factors.
// CHECK-LABEL: func.func @split_scale(
// CHECK-SAME: [[Q:%[a-zA-Z0-9_]+]]: tensor<2x4x5x8xf32>, [[K:%[a-zA-Z0-9_]+]]: tensor<2x5x4x8xf32>, [[V:%[a-zA-Z0-9_]+]]: tensor<2x4x5x8xf32>
// CHECK-NEXT: [[KT:%[a-zA-Z0-9_]+]] = rlx.transpose [[K]] {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x5x4x8xf32>) -> tensor<2x4x5x8xf32>
// CHECK-NEXT: [[O:%[a-zA-Z0-9_]+]] = rlx.attention [[Q]], [[KT]], [[V]] {scale = 2.500000e-01 : f64} : (tensor<2x4x5x8xf32>, tensor<2x4x5x8xf32>, tensor<2x4x5x8xf32>) -> tensor<2x4x5x8xf32>
// CHECK-NEXT: func.return [[O]]
func.func @split_scale(%q: tensor<2x4x5x8xf32>, %k: tensor<2x5x4x8xf32>, %v: tensor<2x4x5x8xf32>) -> tensor<2x4x5x8xf32> {
  %kt = rlx.transpose %k {perm = array<i64: 0, 2, 3, 1>} : (tensor<2x5x4x8xf32>) -> tensor<2x4x8x5xf32>
  %a = rlx.constant dense<5.000000e-01> : tensor<f32>
  %qa = rlx.mul %q, %a : (tensor<2x4x5x8xf32>, tensor<f32>) -> tensor<2x4x5x8xf32>
  %b = rlx.constant dense<5.000000e-01> : tensor<f32>
  %kb = rlx.mul %kt, %b : (tensor<2x4x8x5xf32>, tensor<f32>) -> tensor<2x4x8x5xf32>
  %s = rlx.matmul %qa, %kb : (tensor<2x4x5x8xf32>, tensor<2x4x8x5xf32>) -> tensor<2x4x5x5xf32>
  %p = rlx.softmax %s : (tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %o = rlx.matmul %p, %v : (tensor<2x4x5x5xf32>, tensor<2x4x5x8xf32>) -> tensor<2x4x5x8xf32>
  func.return %o : tensor<2x4x5x8xf32>
}

// -----

// The dynamo export of the same: k^T as a reshape to [B*H, S, D], a
// transpose and a reshape back (read as k itself), an all-zero constant mask
// (dropped) and the NaN guard after the softmax (the kernel's own rule for
// fully masked rows).
// CHECK-LABEL: func.func @dynamo_round_trip(
// CHECK-SAME: [[Q:%[a-zA-Z0-9_]+]]: tensor<2x4x5x8xf32>, [[K:%[a-zA-Z0-9_]+]]: tensor<2x4x5x8xf32>, [[V:%[a-zA-Z0-9_]+]]: tensor<2x4x5x8xf32>
// CHECK-NEXT: [[O:%[a-zA-Z0-9_]+]] = rlx.attention [[Q]], [[K]], [[V]] {scale = 2.500000e-01 : f64}
// CHECK-NEXT: func.return [[O]]
func.func @dynamo_round_trip(%q: tensor<2x4x5x8xf32>, %k: tensor<2x4x5x8xf32>, %v: tensor<2x4x5x8xf32>) -> tensor<2x4x5x8xf32> {
  %k3 = rlx.reshape %k : (tensor<2x4x5x8xf32>) -> tensor<8x5x8xf32>
  %kt3 = rlx.transpose %k3 {perm = array<i64: 0, 2, 1>} : (tensor<8x5x8xf32>) -> tensor<8x8x5xf32>
  %kt = rlx.reshape %kt3 : (tensor<8x8x5xf32>) -> tensor<2x4x8x5xf32>
  %a = rlx.constant dense<5.000000e-01> : tensor<f32>
  %qa = rlx.mul %q, %a : (tensor<2x4x5x8xf32>, tensor<f32>) -> tensor<2x4x5x8xf32>
  %kb = rlx.mul %kt, %a : (tensor<2x4x8x5xf32>, tensor<f32>) -> tensor<2x4x8x5xf32>
  %s = rlx.matmul %qa, %kb : (tensor<2x4x5x8xf32>, tensor<2x4x8x5xf32>) -> tensor<2x4x5x5xf32>
  %zero = rlx.constant dense<0.000000e+00> : tensor<2x1x5x5xf32>
  %m = rlx.add %s, %zero : (tensor<2x4x5x5xf32>, tensor<2x1x5x5xf32>) -> tensor<2x4x5x5xf32>
  %p = rlx.softmax %m : (tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %nan = rlx.ne %p, %p : (tensor<2x4x5x5xf32>, tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xi1>
  %z = rlx.constant dense<0.000000e+00> : tensor<f32>
  %g = rlx.where %nan, %z, %p : (tensor<2x4x5x5xi1>, tensor<f32>, tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %o = rlx.matmul %g, %v : (tensor<2x4x5x5xf32>, tensor<2x4x5x8xf32>) -> tensor<2x4x5x8xf32>
  func.return %o : tensor<2x4x5x8xf32>
}

// -----

// Llama's and Qwen2's eager attention: k^T as the matmul flag, the scale on
// the scores, a constant causal mask (0 on and below the diagonal, the
// lowest f32 above) and repeat_kv (reshape, expand, reshape) on k and v:
// causal = true with no mask, and k, v read with their 2 heads for q's 4.
// CHECK-LABEL: func.func @grouped_causal(
// CHECK-SAME: [[Q:%[a-zA-Z0-9_]+]]: tensor<1x4x3x8xf32>, [[K:%[a-zA-Z0-9_]+]]: tensor<1x2x3x8xf32>, [[V:%[a-zA-Z0-9_]+]]: tensor<1x2x3x8xf32>
// CHECK-NEXT: [[O:%[a-zA-Z0-9_]+]] = rlx.attention [[Q]], [[K]], [[V]] {scale = 0.35355338454246521 : f64, causal = true} : (tensor<1x4x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x4x3x8xf32>
// CHECK-NEXT: func.return [[O]]
func.func @grouped_causal(%q: tensor<1x4x3x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x8xf32>) -> tensor<1x4x3x8xf32> {
  %k5 = rlx.reshape %k : (tensor<1x2x3x8xf32>) -> tensor<1x2x1x3x8xf32>
  %ke = rlx.expand %k5 : (tensor<1x2x1x3x8xf32>) -> tensor<1x2x2x3x8xf32>
  %kr = rlx.reshape %ke : (tensor<1x2x2x3x8xf32>) -> tensor<1x4x3x8xf32>
  %v5 = rlx.reshape %v : (tensor<1x2x3x8xf32>) -> tensor<1x2x1x3x8xf32>
  %ve = rlx.expand %v5 : (tensor<1x2x1x3x8xf32>) -> tensor<1x2x2x3x8xf32>
  %vr = rlx.reshape %ve : (tensor<1x2x2x3x8xf32>) -> tensor<1x4x3x8xf32>
  %s = rlx.matmul %q, %kr {transpose_rhs = true} : (tensor<1x4x3x8xf32>, tensor<1x4x3x8xf32>) -> tensor<1x4x3x3xf32>
  %c = rlx.constant dense<0.353553385> : tensor<f32>
  %sc = rlx.mul %s, %c : (tensor<1x4x3x3xf32>, tensor<f32>) -> tensor<1x4x3x3xf32>
  %mask = rlx.constant dense<[[[[0.0, -3.40282347e+38, -3.40282347e+38], [0.0, 0.0, -3.40282347e+38], [0.0, 0.0, 0.0]]]]> : tensor<1x1x3x3xf32>
  %m = rlx.add %sc, %mask : (tensor<1x4x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x4x3x3xf32>
  %p = rlx.softmax %m : (tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  %o = rlx.matmul %p, %vr : (tensor<1x4x3x3xf32>, tensor<1x4x3x8xf32>) -> tensor<1x4x3x8xf32>
  func.return %o : tensor<1x4x3x8xf32>
}

// -----

// A decode step with a cache: the constant mask is causal from the bottom
// right (query i sees keys j <= i + 2), not torch's top-left is_causal, so it
// stays an additive mask. The scale is a division by a constant.
// CHECK-LABEL: func.func @offset_causal_mask(
// CHECK-SAME: [[Q:%[a-zA-Z0-9_]+]]: tensor<1x2x2x4xf32>, [[K:%[a-zA-Z0-9_]+]]: tensor<1x2x4x4xf32>, [[V:%[a-zA-Z0-9_]+]]: tensor<1x2x4x4xf32>
// CHECK: [[M:%[a-zA-Z0-9_]+]] = rlx.constant
// CHECK-NEXT: [[O:%[a-zA-Z0-9_]+]] = rlx.attention [[Q]], [[K]], [[V]], [[M]] {scale = 5.000000e-01 : f64} : (tensor<1x2x2x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<2x4xf32>) -> tensor<1x2x2x4xf32>
// CHECK-NEXT: func.return [[O]]
func.func @offset_causal_mask(%q: tensor<1x2x2x4xf32>, %k: tensor<1x2x4x4xf32>, %v: tensor<1x2x4x4xf32>) -> tensor<1x2x2x4xf32> {
  %s = rlx.matmul %q, %k {transpose_rhs = true} : (tensor<1x2x2x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x2x4xf32>
  %c = rlx.constant dense<2.000000e+00> : tensor<f32>
  %sc = rlx.div %s, %c : (tensor<1x2x2x4xf32>, tensor<f32>) -> tensor<1x2x2x4xf32>
  %mask = rlx.constant dense<[[0.0, 0.0, 0.0, -3.40282347e+38], [0.0, 0.0, 0.0, 0.0]]> : tensor<2x4xf32>
  %m = rlx.add %sc, %mask : (tensor<1x2x2x4xf32>, tensor<2x4xf32>) -> tensor<1x2x2x4xf32>
  %p = rlx.softmax %m : (tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
  %o = rlx.matmul %p, %v : (tensor<1x2x2x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x2x4xf32>
  func.return %o : tensor<1x2x2x4xf32>
}

// -----

// T5: no scale (1.0) and a run-time position bias as the mask, given first
// to the add; an explicit broadcast of the mask is read from its source.
// CHECK-LABEL: func.func @position_bias(
// CHECK-SAME: [[Q:%[a-zA-Z0-9_]+]]: tensor<2x4x5x8xf32>, [[K:%[a-zA-Z0-9_]+]]: tensor<2x4x5x8xf32>, [[V:%[a-zA-Z0-9_]+]]: tensor<2x4x5x8xf32>, [[B:%[a-zA-Z0-9_]+]]: tensor<1x4x5x5xf32>
// CHECK-NEXT: [[O:%[a-zA-Z0-9_]+]] = rlx.attention [[Q]], [[K]], [[V]], [[B]] {scale = 1.000000e+00 : f64} : (tensor<2x4x5x8xf32>, tensor<2x4x5x8xf32>, tensor<2x4x5x8xf32>, tensor<1x4x5x5xf32>) -> tensor<2x4x5x8xf32>
// CHECK-NEXT: func.return [[O]]
func.func @position_bias(%q: tensor<2x4x5x8xf32>, %k: tensor<2x4x5x8xf32>, %v: tensor<2x4x5x8xf32>, %bias: tensor<1x4x5x5xf32>) -> tensor<2x4x5x8xf32> {
  %s = rlx.matmul %q, %k {transpose_rhs = true} : (tensor<2x4x5x8xf32>, tensor<2x4x5x8xf32>) -> tensor<2x4x5x5xf32>
  %b = rlx.expand %bias : (tensor<1x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %m = rlx.add %b, %s : (tensor<2x4x5x5xf32>, tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %p = rlx.softmax %m : (tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %o = rlx.matmul %p, %v : (tensor<2x4x5x5xf32>, tensor<2x4x5x8xf32>) -> tensor<2x4x5x8xf32>
  func.return %o : tensor<2x4x5x8xf32>
}

// -----

// Attention over [B*H, S, D] (no head axis): one batch of 6 heads, through
// reshapes; f64, a [S, S] run-time mask and a transposed k given as the
// matmul's plain rhs (one transpose back).
// CHECK-LABEL: func.func @rank_three(
// CHECK-SAME: [[Q:%[a-zA-Z0-9_]+]]: tensor<6x5x8xf64>, [[KT:%[a-zA-Z0-9_]+]]: tensor<6x8x7xf64>, [[V:%[a-zA-Z0-9_]+]]: tensor<6x7x3xf64>, [[M:%[a-zA-Z0-9_]+]]: tensor<5x7xf64>
// CHECK-NEXT: [[K:%[a-zA-Z0-9_]+]] = rlx.transpose [[KT]] {perm = array<i64: 0, 2, 1>} : (tensor<6x8x7xf64>) -> tensor<6x7x8xf64>
// CHECK-NEXT: [[Q4:%[a-zA-Z0-9_]+]] = rlx.reshape [[Q]] : (tensor<6x5x8xf64>) -> tensor<1x6x5x8xf64>
// CHECK-NEXT: [[K4:%[a-zA-Z0-9_]+]] = rlx.reshape [[K]] : (tensor<6x7x8xf64>) -> tensor<1x6x7x8xf64>
// CHECK-NEXT: [[V4:%[a-zA-Z0-9_]+]] = rlx.reshape [[V]] : (tensor<6x7x3xf64>) -> tensor<1x6x7x3xf64>
// CHECK-NEXT: [[O4:%[a-zA-Z0-9_]+]] = rlx.attention [[Q4]], [[K4]], [[V4]], [[M]] {scale = 1.250000e-01 : f64} : (tensor<1x6x5x8xf64>, tensor<1x6x7x8xf64>, tensor<1x6x7x3xf64>, tensor<5x7xf64>) -> tensor<1x6x5x3xf64>
// CHECK-NEXT: [[O:%[a-zA-Z0-9_]+]] = rlx.reshape [[O4]] : (tensor<1x6x5x3xf64>) -> tensor<6x5x3xf64>
// CHECK-NEXT: func.return [[O]]
func.func @rank_three(%q: tensor<6x5x8xf64>, %kt: tensor<6x8x7xf64>, %v: tensor<6x7x3xf64>, %mask: tensor<5x7xf64>) -> tensor<6x5x3xf64> {
  %s = rlx.matmul %q, %kt : (tensor<6x5x8xf64>, tensor<6x8x7xf64>) -> tensor<6x5x7xf64>
  %c = rlx.constant dense<1.250000e-01> : tensor<f64>
  %sc = rlx.mul %c, %s : (tensor<f64>, tensor<6x5x7xf64>) -> tensor<6x5x7xf64>
  %m = rlx.add %sc, %mask : (tensor<6x5x7xf64>, tensor<5x7xf64>) -> tensor<6x5x7xf64>
  %p = rlx.softmax %m {axis = 2 : i64} : (tensor<6x5x7xf64>) -> tensor<6x5x7xf64>
  %o = rlx.matmul %p, %v : (tensor<6x5x7xf64>, tensor<6x7x3xf64>) -> tensor<6x5x3xf64>
  func.return %o : tensor<6x5x3xf64>
}
