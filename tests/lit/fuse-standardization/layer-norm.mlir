// RUN: rlx-opt %s --split-input-file -p fuse-standardization | filecheck %s

// Layer norm and RMS norm written out become one rlx.standardize_region over
// the last axis, with identity bodies; the ops of the chain are gone.

// The layer norm of ONNX's LayerNormalization import: x − mean, its square's
// mean, + ε, rsqrt, the product. ε is the f32 constant, widened exactly.
// CHECK-LABEL: func.func @layer_norm(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<4x8xf32>
// CHECK-NEXT: [[Y:%[a-zA-Z0-9_]+]] = rlx.standardize_region ins([[X]] : tensor<4x8xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], axis = 1 : i64, epsilon = 9.9999997473787516e-06 : f64, centered = true} -> tensor<4x8xf32> {
// CHECK-NEXT: ^{{.*}}([[A:%[a-zA-Z0-9_]+]]: f32):
// CHECK-NEXT: rlx.yield [[A]] : f32
// CHECK-NEXT: } epilogue {
// CHECK-NEXT: ^{{.*}}([[V:%[a-zA-Z0-9_]+]]: f32):
// CHECK-NEXT: rlx.yield [[V]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return [[Y]] : tensor<4x8xf32>
func.func @layer_norm(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m = rlx.reduce_mean %x {axes = array<i64: -1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %c = rlx.sub %x, %m : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %s = rlx.mul %c, %c : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %v = rlx.reduce_mean %s {axes = array<i64: -1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %e = rlx.constant dense<1.000000e-05> : tensor<f32>
  %t = rlx.add %v, %e : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %r = rlx.rsqrt %t : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %y = rlx.mul %c, %r : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// -----

// RMS norm as PyTorch's exporter writes LlamaRMSNorm: x ** 2, ε + mean,
// sqrt, recip, and the product in the other order.
// CHECK-LABEL: func.func @rms_norm(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<2x3x16xf64>
// CHECK-NEXT: [[Y:%[a-zA-Z0-9_]+]] = rlx.standardize_region ins([[X]] : tensor<2x3x16xf64>) {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>], axis = 2 : i64, epsilon = 1.000000e-06 : f64, centered = false} -> tensor<2x3x16xf64> {
// CHECK: func.return [[Y]] : tensor<2x3x16xf64>
func.func @rms_norm(%x: tensor<2x3x16xf64>) -> tensor<2x3x16xf64> {
  %two = rlx.constant dense<2.000000e+00> : tensor<f64>
  %s = rlx.pow %x, %two : (tensor<2x3x16xf64>, tensor<f64>) -> tensor<2x3x16xf64>
  %v = rlx.reduce_mean %s {axes = array<i64: 2>, keepdims = true} : (tensor<2x3x16xf64>) -> tensor<2x3x1xf64>
  %e = rlx.constant dense<1.000000e-06> : tensor<f64>
  %t = rlx.add %e, %v : (tensor<f64>, tensor<2x3x1xf64>) -> tensor<2x3x1xf64>
  %q = rlx.sqrt %t : (tensor<2x3x1xf64>) -> tensor<2x3x1xf64>
  %r = rlx.recip %q : (tensor<2x3x1xf64>) -> tensor<2x3x1xf64>
  %y = rlx.mul %r, %x : (tensor<2x3x1xf64>, tensor<2x3x16xf64>) -> tensor<2x3x16xf64>
  func.return %y : tensor<2x3x16xf64>
}

// -----

// A quotient by the root is the same normalization.
// CHECK-LABEL: func.func @divided(
// CHECK-NEXT: rlx.standardize_region {{.*}} centered = false}
func.func @divided(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = rlx.mul %x, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %v = rlx.reduce_mean %s {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %e = rlx.constant dense<1.000000e-05> : tensor<f32>
  %t = rlx.add %v, %e : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %q = rlx.sqrt %t : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %y = rlx.div %x, %q : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// -----

// Over the first axis, not the last: left as it is.
// CHECK-LABEL: func.func @first_axis(
// CHECK-NOT: rlx.standardize_region
// CHECK: rlx.rsqrt
func.func @first_axis(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = rlx.mul %x, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %v = rlx.reduce_mean %s {axes = array<i64: 0>, keepdims = true} : (tensor<4x8xf32>) -> tensor<1x8xf32>
  %e = rlx.constant dense<1.000000e-05> : tensor<f32>
  %t = rlx.add %v, %e : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
  %r = rlx.rsqrt %t : (tensor<1x8xf32>) -> tensor<1x8xf32>
  %y = rlx.mul %x, %r : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// -----

// ε is an argument, not a constant: left as it is.
// CHECK-LABEL: func.func @epsilon_argument(
// CHECK-NOT: rlx.standardize_region
// CHECK: rlx.rsqrt
func.func @epsilon_argument(%x: tensor<4x8xf32>, %e: tensor<f32>) -> tensor<4x8xf32> {
  %s = rlx.mul %x, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %v = rlx.reduce_mean %s {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %t = rlx.add %v, %e : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %r = rlx.rsqrt %t : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %y = rlx.mul %x, %r : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// -----

// The variance is also a result: nothing is fused, so nothing is computed twice.
// CHECK-LABEL: func.func @variance_returned(
// CHECK-NOT: rlx.standardize_region
// CHECK: func.return
func.func @variance_returned(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>) {
  %s = rlx.mul %x, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %v = rlx.reduce_mean %s {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %e = rlx.constant dense<1.000000e-05> : tensor<f32>
  %t = rlx.add %v, %e : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %r = rlx.rsqrt %t : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %y = rlx.mul %x, %r : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  func.return %y, %v : tensor<4x8xf32>, tensor<4x1xf32>
}
