// RUN: rlx-opt %s --split-input-file --verify-diagnostics | filecheck %s

// One case per verifier rule of rlx.attention. xDSL's --verify-diagnostics
// prints each diagnostic and exits 0; each CHECK pins the exact message to its case.

// Only float types: f16, bf16 (both computed in f32), f32, f64.
// CHECK-LABEL: sym_name = "element_type_not_allowed"
// CHECK: Operation does not verify: 'rlx.attention' element type i32 is not one of f16, bf16, f32, f64
func.func @element_type_not_allowed(%q: tensor<1x2x3x4xi32>, %k: tensor<1x2x5x4xi32>, %v: tensor<1x2x5x4xi32>) {
  %o = rlx.attention %q, %k, %v {scale = 0.5 : f64} : (tensor<1x2x3x4xi32>, tensor<1x2x5x4xi32>, tensor<1x2x5x4xi32>) -> tensor<1x2x3x4xi32>
  func.return
}

// -----

// Key, value, mask and result share the query's element type (no implicit promotion) ...
// CHECK-LABEL: sym_name = "mixed_key_type"
// CHECK: Operation does not verify: 'rlx.attention' key element type f64 must equal f32
func.func @mixed_key_type(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x5x4xf64>, %v: tensor<1x2x5x4xf32>) {
  %o = rlx.attention %q, %k, %v {scale = 0.5 : f64} : (tensor<1x2x3x4xf32>, tensor<1x2x5x4xf64>, tensor<1x2x5x4xf32>) -> tensor<1x2x3x4xf32>
  func.return
}

// -----

// CHECK-LABEL: sym_name = "mixed_value_type"
// CHECK: Operation does not verify: 'rlx.attention' value element type bf16 must equal f32
func.func @mixed_value_type(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<1x2x5x4xbf16>) {
  %o = rlx.attention %q, %k, %v {scale = 0.5 : f64} : (tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xbf16>) -> tensor<1x2x3x4xf32>
  func.return
}

// -----

// ... the mask too: a boolean mask is converted to an additive one (0 / -inf) first ...
// CHECK-LABEL: sym_name = "boolean_mask"
// CHECK: Operation does not verify: 'rlx.attention' mask element type i1 must equal f32
func.func @boolean_mask(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<1x2x5x4xf32>, %m: tensor<3x5xi1>) {
  %o = rlx.attention %q, %k, %v, %m {scale = 0.5 : f64} : (tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>, tensor<3x5xi1>) -> tensor<1x2x3x4xf32>
  func.return
}

// -----

// ... and the result.
// CHECK-LABEL: sym_name = "mixed_result_type"
// CHECK: Operation does not verify: 'rlx.attention' result element type f16 must equal f32
func.func @mixed_result_type(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<1x2x5x4xf32>) {
  %o = rlx.attention %q, %k, %v {scale = 0.5 : f64} : (tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>) -> tensor<1x2x3x4xf16>
  func.return
}

// -----

// The scale is a finite number.
// CHECK-LABEL: sym_name = "scale_not_finite"
// CHECK: Operation does not verify: 'rlx.attention' scale must be finite, got inf
func.func @scale_not_finite(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<1x2x5x4xf32>) {
  %o = rlx.attention %q, %k, %v {scale = 0x7FF0000000000000 : f64} : (tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>) -> tensor<1x2x3x4xf32>
  func.return
}

// -----

// Query, key and value are [B, H, S, D]: rank 4 (a rank-3 input needs an rlx.reshape to one head).
// CHECK-LABEL: sym_name = "query_rank"
// CHECK: Operation does not verify: 'rlx.attention' query must have rank 4 ([B, H, S, D]), got [2, 3, 4]
func.func @query_rank(%q: tensor<2x3x4xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<1x2x5x4xf32>) {
  %o = rlx.attention %q, %k, %v {scale = 0.5 : f64} : (tensor<2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>) -> tensor<1x2x3x4xf32>
  func.return
}

// -----

// CHECK-LABEL: sym_name = "value_rank"
// CHECK: Operation does not verify: 'rlx.attention' value must have rank 4 ([B, H, S, D]), got [2, 5, 4]
func.func @value_rank(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<2x5x4xf32>) {
  %o = rlx.attention %q, %k, %v {scale = 0.5 : f64} : (tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<2x5x4xf32>) -> tensor<1x2x3x4xf32>
  func.return
}

// -----

// One batch size for all three (broadcast a shared key with rlx.expand).
// CHECK-LABEL: sym_name = "batch_sizes"
// CHECK: Operation does not verify: 'rlx.attention' query, key and value batch sizes must be equal, got 2, 1 and 1
func.func @batch_sizes(%q: tensor<2x2x3x4xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<1x2x5x4xf32>) {
  %o = rlx.attention %q, %k, %v {scale = 0.5 : f64} : (tensor<2x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>) -> tensor<2x2x3x4xf32>
  func.return
}

// -----

// Key and value come in pairs: as many heads ...
// CHECK-LABEL: sym_name = "key_value_heads"
// CHECK: Operation does not verify: 'rlx.attention' key and value head counts must be equal, got 2 and 1
func.func @key_value_heads(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<1x1x5x4xf32>) {
  %o = rlx.attention %q, %k, %v {scale = 0.5 : f64} : (tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x1x5x4xf32>) -> tensor<1x2x3x4xf32>
  func.return
}

// -----

// ... and as many positions.
// CHECK-LABEL: sym_name = "key_value_lengths"
// CHECK: Operation does not verify: 'rlx.attention' key and value sequence lengths must be equal, got 5 and 6
func.func @key_value_lengths(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<1x2x6x4xf32>) {
  %o = rlx.attention %q, %k, %v {scale = 0.5 : f64} : (tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x6x4xf32>) -> tensor<1x2x3x4xf32>
  func.return
}

// -----

// q @ k^T contracts the head size D (the value's Dv may differ).
// CHECK-LABEL: sym_name = "head_size"
// CHECK: Operation does not verify: 'rlx.attention' key head size 8 must equal the query's 4
func.func @head_size(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x5x8xf32>, %v: tensor<1x2x5x4xf32>) {
  %o = rlx.attention %q, %k, %v {scale = 0.5 : f64} : (tensor<1x2x3x4xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x4xf32>) -> tensor<1x2x3x4xf32>
  func.return
}

// -----

// Grouped-query attention: Hkv divides Hq (query head h reads kv head h // (Hq / Hkv)).
// CHECK-LABEL: sym_name = "heads_not_grouped"
// CHECK: Operation does not verify: 'rlx.attention' key/value head count 3 must divide the query head count 8
func.func @heads_not_grouped(%q: tensor<1x8x3x4xf32>, %k: tensor<1x3x5x4xf32>, %v: tensor<1x3x5x4xf32>) {
  %o = rlx.attention %q, %k, %v {scale = 0.5 : f64} : (tensor<1x8x3x4xf32>, tensor<1x3x5x4xf32>, tensor<1x3x5x4xf32>) -> tensor<1x8x3x4xf32>
  func.return
}

// -----

// No kv heads at all has no grouping either.
// CHECK-LABEL: sym_name = "no_kv_heads"
// CHECK: Operation does not verify: 'rlx.attention' key/value head count 0 must divide the query head count 2
func.func @no_kv_heads(%q: tensor<1x2x3x4xf32>, %k: tensor<1x0x5x4xf32>, %v: tensor<1x0x5x4xf32>) {
  %o = rlx.attention %q, %k, %v {scale = 0.5 : f64} : (tensor<1x2x3x4xf32>, tensor<1x0x5x4xf32>, tensor<1x0x5x4xf32>) -> tensor<1x2x3x4xf32>
  func.return
}

// -----

// The mask broadcasts (NumPy rules) to the scores [B, Hq, Sq, Sk] = [1, 2, 3, 5] ...
// CHECK-LABEL: sym_name = "mask_not_broadcastable"
// CHECK: Operation does not verify: 'rlx.attention' mask shape [3, 4] does not broadcast to the scores' [1, 2, 3, 5]
func.func @mask_not_broadcastable(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<1x2x5x4xf32>, %m: tensor<3x4xf32>) {
  %o = rlx.attention %q, %k, %v, %m {scale = 0.5 : f64} : (tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>, tensor<3x4xf32>) -> tensor<1x2x3x4xf32>
  func.return
}

// -----

// ... without growing them: rank at most 4.
// CHECK-LABEL: sym_name = "mask_rank"
// CHECK: Operation does not verify: 'rlx.attention' mask shape [1, 1, 2, 3, 5] does not broadcast to the scores' [1, 2, 3, 5]
func.func @mask_rank(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<1x2x5x4xf32>, %m: tensor<1x1x2x3x5xf32>) {
  %o = rlx.attention %q, %k, %v, %m {scale = 0.5 : f64} : (tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>, tensor<1x1x2x3x5xf32>) -> tensor<1x2x3x4xf32>
  func.return
}

// -----

// The result is [B, Hq, Sq, Dv].
// CHECK-LABEL: sym_name = "wrong_result_shape"
// CHECK: Operation does not verify: 'rlx.attention' result shape [1, 2, 3, 4] does not match the expected shape [1, 2, 3, 6]
func.func @wrong_result_shape(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<1x2x5x6xf32>) {
  %o = rlx.attention %q, %k, %v {scale = 0.5 : f64} : (tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x6xf32>) -> tensor<1x2x3x4xf32>
  func.return
}

// -----

// The scale is required (its usual value 1/sqrt(D) is written out by whoever makes the op) ...
// CHECK-LABEL: sym_name = "scale_missing"
// CHECK: Operation does not verify: property 'scale' expected in operation 'rlx.attention'
func.func @scale_missing(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<1x2x5x4xf32>) {
  %o = rlx.attention %q, %k, %v : (tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>) -> tensor<1x2x3x4xf32>
  func.return
}

// -----

// ... and an f64 attribute (a parse error: the diagnostic names no function).
// CHECK: f32 should be of base attribute f64
func.func @scale_f32(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<1x2x5x4xf32>) {
  %o = rlx.attention %q, %k, %v {scale = 0.5 : f32} : (tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>) -> tensor<1x2x3x4xf32>
  func.return
}

// -----

// causal is a bool.
// CHECK: Expected attribute i1 but got i64
func.func @causal_not_bool(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<1x2x5x4xf32>) {
  %o = rlx.attention %q, %k, %v {scale = 0.5 : f64, causal = 2 : i64} : (tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>) -> tensor<1x2x3x4xf32>
  func.return
}
