// RUN: rlx-opt %s | rlx-opt | filecheck %s
// RUN: rlx-opt %s --print-op-generic | rlx-opt | filecheck %s

// A non-finite element of a dense list prints as its hex bit pattern, as in
// MLIR, and reads back as the same bits (a causal mask's -inf), never as the
// integer the hex spells (0xff800000 is not 4286578688.0).

// CHECK-LABEL: func.func @f32_mask(
// CHECK: rlx.constant dense<[0.000000e+00, 0xff800000, 0x7f800000, 0x7fc00000]> : tensor<4xf32>
func.func @f32_mask() -> tensor<4xf32> {
  %c = rlx.constant dense<[0.0, 0xff800000, 0x7f800000, 0x7fc00000]> : tensor<4xf32>
  func.return %c : tensor<4xf32>
}

// CHECK-LABEL: func.func @f16_mask(
// CHECK: rlx.constant dense<[0.000000e+00, 0xfc00]> : tensor<2xf16>
func.func @f16_mask() -> tensor<2xf16> {
  %c = rlx.constant dense<[0.0, 0xfc00]> : tensor<2xf16>
  func.return %c : tensor<2xf16>
}

// CHECK-LABEL: func.func @f64_mask(
// CHECK: rlx.constant dense<[1.000000e+00, 0xfff0000000000000]> : tensor<2xf64>
func.func @f64_mask() -> tensor<2xf64> {
  %c = rlx.constant dense<[1.0, 0xfff0000000000000]> : tensor<2xf64>
  func.return %c : tensor<2xf64>
}
