// RUN: not rlx-opt %s -p 'autodiff{wrt=x}' 2>&1 | filecheck %s

// A product reading its rhs in panels (what pack-matmul-weights, a backend pass,
// leaves) has no adjoint: differentiate first, then pack. One line names it.

// CHECK-NOT: Traceback
// CHECK: rlx-opt: error: autodiff: 'rlx.matmul' with an rhs in panels has no adjoint (differentiate before pack-matmul-weights); a gradient of @f flows through it
// CHECK-NOT: {{.}}

func.func @f(%x: tensor<4x8xf32>, %p: tensor<2x8x16xf32>) -> tensor<4x20xf32> {
  %y = rlx.matmul %x, %p {rhs_panels = 16 : i64} : (tensor<4x8xf32>, tensor<2x8x16xf32>) -> tensor<4x20xf32>
  func.return %y : tensor<4x20xf32>
}
