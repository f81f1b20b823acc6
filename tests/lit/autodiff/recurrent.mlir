// RUN: not rlx-opt %s -p 'autodiff{wrt=x}' 2>&1 | filecheck %s
// RUN: rlx-opt %s -p 'autodiff{wrt=bias}' | filecheck %s --check-prefix=OFF-PATH

// The recurrent ops have no adjoint: a gradient reaching x through rlx.rnn is
// an error naming it; a gradient that does not pass through it is fine.

// CHECK-NOT: Traceback
// CHECK: rlx-opt: error: autodiff: 'rlx.rnn' has no adjoint; a gradient of @f flows through it
// CHECK-NOT: {{.}}

// OFF-PATH-LABEL: func.func @f(
// OFF-PATH: rlx.rnn
// OFF-PATH-NEXT: [[Y:%[a-zA-Z0-9_]+]] = rlx.add
// OFF-PATH-NEXT: [[DB:%[a-zA-Z0-9_]+]] = rlx.reduce_sum %d_y {axes = array<i64: 0, 1>} : (tensor<1x5x4xf32>) -> tensor<4xf32>
// OFF-PATH-NEXT: func.return [[Y]], [[DB]]
func.func @f(%x: tensor<1x5x3xf32>, %wi: tensor<4x3xf32>, %wh: tensor<4x4xf32>, %b: tensor<4xf32>, %bias: tensor<4xf32>) -> tensor<1x5x4xf32> {
  %r = rlx.rnn %x, %wi, %wh, %b {hidden_size = 4 : i64} : (tensor<1x5x3xf32>, tensor<4x3xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<1x5x4xf32>
  %y = rlx.add %r, %bias : (tensor<1x5x4xf32>, tensor<4xf32>) -> tensor<1x5x4xf32>
  func.return %y : tensor<1x5x4xf32>
}
