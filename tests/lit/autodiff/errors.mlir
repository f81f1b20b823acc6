// RUN: not rlx-opt %s -p 'autodiff{wrt=x}' 2>&1 | filecheck %s
// RUN: not rlx-opt %s -p 'autodiff{wrt=3}' 2>&1 | filecheck %s --check-prefix=RANGE
// RUN: not rlx-opt %s -p 'autodiff{wrt=nope}' 2>&1 | filecheck %s --check-prefix=NAME
// RUN: not rlx-opt %s -p 'autodiff{wrt=ids}' 2>&1 | filecheck %s --check-prefix=INT

// A gradient that must flow through an op without an adjoint (here an integer
// cast on the way from y back to x) is one line naming the op; so is a bad wrt.

// CHECK-NOT: Traceback
// CHECK: rlx-opt: error: autodiff: 'rlx.cast' from i32 has no adjoint (only float -> float casts do); a gradient of @f flows through it
// CHECK-NOT: {{.}}

// RANGE: rlx-opt: error: autodiff: wrt position 3 is out of range: @f has 2 arguments
// NAME: rlx-opt: error: autodiff: @f has no argument named 'nope' (named arguments: 'x', 'ids')
// INT: rlx-opt: error: autodiff: cannot differentiate @f with respect to argument 1 of type tensor<4xi32> (not a float tensor)

func.func @f(%x: tensor<4xf32>, %ids: tensor<4xi32>) -> tensor<4xf32> {
  %i = rlx.cast %x : (tensor<4xf32>) -> tensor<4xi32>
  %j = rlx.add %i, %ids : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %y = rlx.cast %j : (tensor<4xi32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
