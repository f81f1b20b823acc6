// RUN: rlx-opt %s -p canonicalize | filecheck %s

// Patterns that read a constant's value read a resource's as a literal's
// (`ConstantOp.values()`): a squared x is a product with either exponent.
// CHECK-LABEL: func.func @square
// CHECK-NEXT:    %[[P:.*]] = rlx.mul %x, %x : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT:    func.return %[[P]]
func.func @square(%x: tensor<8xf32>) -> tensor<8xf32> {
  %two = rlx.constant dense_resource<two> : tensor<f32>
  %y = rlx.pow %x, %two : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  func.return %y : tensor<8xf32>
}

{-#
  dialect_resources: {
    builtin: {
      two: "0x0400000000000040"
    }
  }
#-}
