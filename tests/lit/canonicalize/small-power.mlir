// RUN: rlx-opt %s -p canonicalize --split-input-file | filecheck %s

// A square is a product of x with itself, in any float type.
// CHECK-LABEL: func.func @square
// CHECK-NEXT:    %[[P:.*]] = rlx.mul %x, %x : (tensor<8xf16>, tensor<8xf16>) -> tensor<8xf16>
// CHECK-NEXT:    func.return %[[P]]
func.func @square(%x: tensor<8xf16>) -> tensor<8xf16> {
  %two = rlx.constant dense<2.0> : tensor<f16>
  %y = rlx.pow %x, %two : (tensor<8xf16>, tensor<f16>) -> tensor<8xf16>
  func.return %y : tensor<8xf16>
}

// -----

// A cube below f64 is two f64 products, rounded back once; a splat exponent counts.
// CHECK-LABEL: func.func @cube
// CHECK-NEXT:    %[[W:.*]] = rlx.cast %x : (tensor<4x8xf32>) -> tensor<4x8xf64>
// CHECK-NEXT:    %[[S:.*]] = rlx.mul %[[W]], %[[W]] : (tensor<4x8xf64>, tensor<4x8xf64>) -> tensor<4x8xf64>
// CHECK-NEXT:    %[[C:.*]] = rlx.mul %[[S]], %[[W]] : (tensor<4x8xf64>, tensor<4x8xf64>) -> tensor<4x8xf64>
// CHECK-NEXT:    %[[R:.*]] = rlx.cast %[[C]] : (tensor<4x8xf64>) -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %[[R]]
func.func @cube(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %three = rlx.constant dense<3.0> : tensor<4x8xf32>
  %y = rlx.pow %x, %three : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// -----

// Kept: an f64 cube (pow rounds once), another exponent, an integer pow, and an
// exponent that broadcasts x.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-4: rlx.pow
// CHECK-NOT:     rlx.mul
func.func @kept(%d: tensor<8xf64>, %x: tensor<8xf32>, %i: tensor<8xi32>, %s: tensor<f32>) -> (tensor<8xf64>, tensor<8xf32>, tensor<8xi32>, tensor<8xf32>) {
  %three = rlx.constant dense<3.0> : tensor<f64>
  %a = rlx.pow %d, %three : (tensor<8xf64>, tensor<f64>) -> tensor<8xf64>
  %half = rlx.constant dense<0.5> : tensor<f32>
  %b = rlx.pow %x, %half : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %two = rlx.constant dense<2> : tensor<i32>
  %c = rlx.pow %i, %two : (tensor<8xi32>, tensor<i32>) -> tensor<8xi32>
  %twos = rlx.constant dense<2.0> : tensor<8xf32>
  %e = rlx.pow %s, %twos : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  func.return %a, %b, %c, %e : tensor<8xf64>, tensor<8xf32>, tensor<8xi32>, tensor<8xf32>
}
