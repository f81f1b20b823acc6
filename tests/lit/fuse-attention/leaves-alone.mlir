// RUN: rlx-opt %s --split-input-file -p fuse-attention | filecheck %s

// Chains that look like attention but must stay as they are: fusing them
// would compute the score matrix twice, or compute something else.

// The probabilities are also returned: the [S, S] matrix is needed anyway.
// CHECK-LABEL: func.func @probabilities_used_twice(
// CHECK-NOT: rlx.attention
// CHECK: rlx.softmax
// CHECK: rlx.matmul
func.func @probabilities_used_twice(%q: tensor<2x4x5x8xf32>, %k: tensor<2x4x5x8xf32>, %v: tensor<2x4x5x8xf32>) -> (tensor<2x4x5x8xf32>, tensor<2x4x5x5xf32>) {
  %s = rlx.matmul %q, %k {transpose_rhs = true} : (tensor<2x4x5x8xf32>, tensor<2x4x5x8xf32>) -> tensor<2x4x5x5xf32>
  %p = rlx.softmax %s : (tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %o = rlx.matmul %p, %v : (tensor<2x4x5x5xf32>, tensor<2x4x5x8xf32>) -> tensor<2x4x5x8xf32>
  func.return %o, %p : tensor<2x4x5x8xf32>, tensor<2x4x5x5xf32>
}

// -----

// The raw scores have a second user.
// CHECK-LABEL: func.func @scores_used_twice(
// CHECK-NOT: rlx.attention
// CHECK: rlx.softmax
func.func @scores_used_twice(%q: tensor<2x4x5x8xf32>, %k: tensor<2x4x5x8xf32>, %v: tensor<2x4x5x8xf32>) -> (tensor<2x4x5x8xf32>, tensor<2x4x5x5xf32>) {
  %s = rlx.matmul %q, %k {transpose_rhs = true} : (tensor<2x4x5x8xf32>, tensor<2x4x5x8xf32>) -> tensor<2x4x5x5xf32>
  %c = rlx.constant dense<1.250000e-01> : tensor<f32>
  %sc = rlx.mul %s, %c : (tensor<2x4x5x5xf32>, tensor<f32>) -> tensor<2x4x5x5xf32>
  %p = rlx.softmax %sc : (tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %o = rlx.matmul %p, %v : (tensor<2x4x5x5xf32>, tensor<2x4x5x8xf32>) -> tensor<2x4x5x8xf32>
  func.return %o, %s : tensor<2x4x5x8xf32>, tensor<2x4x5x5xf32>
}

// -----

// The softmax normalizes over the queries (axis 2), not the keys.
// CHECK-LABEL: func.func @softmax_not_last_axis(
// CHECK-NOT: rlx.attention
// CHECK: rlx.softmax
func.func @softmax_not_last_axis(%q: tensor<2x4x5x8xf32>, %k: tensor<2x4x5x8xf32>, %v: tensor<2x4x5x8xf32>) -> tensor<2x4x5x8xf32> {
  %s = rlx.matmul %q, %k {transpose_rhs = true} : (tensor<2x4x5x8xf32>, tensor<2x4x5x8xf32>) -> tensor<2x4x5x5xf32>
  %p = rlx.softmax %s {axis = 2 : i64} : (tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %o = rlx.matmul %p, %v : (tensor<2x4x5x5xf32>, tensor<2x4x5x8xf32>) -> tensor<2x4x5x8xf32>
  func.return %o : tensor<2x4x5x8xf32>
}

// -----

// A scale per key (a vector constant) is not one scalar.
// CHECK-LABEL: func.func @vector_scale(
// CHECK-NOT: rlx.attention
// CHECK: rlx.softmax
func.func @vector_scale(%q: tensor<2x4x5x8xf32>, %k: tensor<2x4x5x8xf32>, %v: tensor<2x4x5x8xf32>) -> tensor<2x4x5x8xf32> {
  %s = rlx.matmul %q, %k {transpose_rhs = true} : (tensor<2x4x5x8xf32>, tensor<2x4x5x8xf32>) -> tensor<2x4x5x5xf32>
  %c = rlx.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0]> : tensor<5xf32>
  %sc = rlx.mul %s, %c : (tensor<2x4x5x5xf32>, tensor<5xf32>) -> tensor<2x4x5x5xf32>
  %p = rlx.softmax %sc : (tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %o = rlx.matmul %p, %v : (tensor<2x4x5x5xf32>, tensor<2x4x5x8xf32>) -> tensor<2x4x5x8xf32>
  func.return %o : tensor<2x4x5x8xf32>
}

// -----

// A run-time scale is not a constant either.
// CHECK-LABEL: func.func @runtime_scale(
// CHECK-NOT: rlx.attention
// CHECK: rlx.softmax
func.func @runtime_scale(%q: tensor<2x4x5x8xf32>, %k: tensor<2x4x5x8xf32>, %v: tensor<2x4x5x8xf32>, %c: tensor<f32>) -> tensor<2x4x5x8xf32> {
  %s = rlx.matmul %q, %k {transpose_rhs = true} : (tensor<2x4x5x8xf32>, tensor<2x4x5x8xf32>) -> tensor<2x4x5x5xf32>
  %sc = rlx.mul %s, %c : (tensor<2x4x5x5xf32>, tensor<f32>) -> tensor<2x4x5x5xf32>
  %p = rlx.softmax %sc : (tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %o = rlx.matmul %p, %v : (tensor<2x4x5x5xf32>, tensor<2x4x5x8xf32>) -> tensor<2x4x5x8xf32>
  func.return %o : tensor<2x4x5x8xf32>
}

// -----

// The scale applied after the mask scales the mask too: not attention's order.
// CHECK-LABEL: func.func @scale_after_mask(
// CHECK-NOT: rlx.attention
// CHECK: rlx.softmax
func.func @scale_after_mask(%q: tensor<2x4x5x8xf32>, %k: tensor<2x4x5x8xf32>, %v: tensor<2x4x5x8xf32>, %mask: tensor<5x5xf32>) -> tensor<2x4x5x8xf32> {
  %s = rlx.matmul %q, %k {transpose_rhs = true} : (tensor<2x4x5x8xf32>, tensor<2x4x5x8xf32>) -> tensor<2x4x5x5xf32>
  %m = rlx.add %s, %mask : (tensor<2x4x5x5xf32>, tensor<5x5xf32>) -> tensor<2x4x5x5xf32>
  %c = rlx.constant dense<1.250000e-01> : tensor<f32>
  %sc = rlx.mul %m, %c : (tensor<2x4x5x5xf32>, tensor<f32>) -> tensor<2x4x5x5xf32>
  %p = rlx.softmax %sc : (tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %o = rlx.matmul %p, %v : (tensor<2x4x5x5xf32>, tensor<2x4x5x8xf32>) -> tensor<2x4x5x8xf32>
  func.return %o : tensor<2x4x5x8xf32>
}

// -----

// One k and v for both batch entries: matmul broadcasts batch axes, attention does not.
// CHECK-LABEL: func.func @broadcast_batch(
// CHECK-NOT: rlx.attention
// CHECK: rlx.softmax
func.func @broadcast_batch(%q: tensor<2x4x5x8xf32>, %k: tensor<1x4x5x8xf32>, %v: tensor<1x4x5x8xf32>) -> tensor<2x4x5x8xf32> {
  %s = rlx.matmul %q, %k {transpose_rhs = true} : (tensor<2x4x5x8xf32>, tensor<1x4x5x8xf32>) -> tensor<2x4x5x5xf32>
  %p = rlx.softmax %s : (tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %o = rlx.matmul %p, %v : (tensor<2x4x5x5xf32>, tensor<1x4x5x8xf32>) -> tensor<2x4x5x8xf32>
  func.return %o : tensor<2x4x5x8xf32>
}

// -----

// A guard that replaces NaN by 1 is not the fully-masked-row rule.
// CHECK-LABEL: func.func @other_guard(
// CHECK-NOT: rlx.attention
// CHECK: rlx.softmax
func.func @other_guard(%q: tensor<2x4x5x8xf32>, %k: tensor<2x4x5x8xf32>, %v: tensor<2x4x5x8xf32>) -> tensor<2x4x5x8xf32> {
  %s = rlx.matmul %q, %k {transpose_rhs = true} : (tensor<2x4x5x8xf32>, tensor<2x4x5x8xf32>) -> tensor<2x4x5x5xf32>
  %p = rlx.softmax %s : (tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %nan = rlx.ne %p, %p : (tensor<2x4x5x5xf32>, tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xi1>
  %one = rlx.constant dense<1.000000e+00> : tensor<f32>
  %g = rlx.where %nan, %one, %p : (tensor<2x4x5x5xi1>, tensor<f32>, tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %o = rlx.matmul %g, %v : (tensor<2x4x5x5xf32>, tensor<2x4x5x8xf32>) -> tensor<2x4x5x8xf32>
  func.return %o : tensor<2x4x5x8xf32>
}

// -----

// A log_softmax is not a softmax.
// CHECK-LABEL: func.func @log_softmax(
// CHECK-NOT: rlx.attention
// CHECK: rlx.log_softmax
func.func @log_softmax(%q: tensor<2x4x5x8xf32>, %k: tensor<2x4x5x8xf32>, %v: tensor<2x4x5x8xf32>) -> tensor<2x4x5x8xf32> {
  %s = rlx.matmul %q, %k {transpose_rhs = true} : (tensor<2x4x5x8xf32>, tensor<2x4x5x8xf32>) -> tensor<2x4x5x5xf32>
  %p = rlx.log_softmax %s : (tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %o = rlx.matmul %p, %v : (tensor<2x4x5x5xf32>, tensor<2x4x5x8xf32>) -> tensor<2x4x5x8xf32>
  func.return %o : tensor<2x4x5x8xf32>
}

// -----

// Two factors of 1e300 multiply to infinity in f64: no finite scale to give the op.
// CHECK-LABEL: func.func @infinite_scale(
// CHECK-NOT: rlx.attention
// CHECK: rlx.softmax
func.func @infinite_scale(%q: tensor<2x4x5x8xf64>, %k: tensor<2x4x5x8xf64>, %v: tensor<2x4x5x8xf64>) -> tensor<2x4x5x8xf64> {
  %s = rlx.matmul %q, %k {transpose_rhs = true} : (tensor<2x4x5x8xf64>, tensor<2x4x5x8xf64>) -> tensor<2x4x5x5xf64>
  %c = rlx.constant dense<1.000000e+300> : tensor<f64>
  %a = rlx.mul %s, %c : (tensor<2x4x5x5xf64>, tensor<f64>) -> tensor<2x4x5x5xf64>
  %b = rlx.mul %a, %c : (tensor<2x4x5x5xf64>, tensor<f64>) -> tensor<2x4x5x5xf64>
  %p = rlx.softmax %b : (tensor<2x4x5x5xf64>) -> tensor<2x4x5x5xf64>
  %o = rlx.matmul %p, %v : (tensor<2x4x5x5xf64>, tensor<2x4x5x8xf64>) -> tensor<2x4x5x8xf64>
  func.return %o : tensor<2x4x5x8xf64>
}
