// RUN: rlx-opt %s -p fuse-elementwise | filecheck %s

// Two groups that are each convex can still feed each other: {neg, tanh, add}
// (rank 0) would feed {mul, mul, add} ([2, 3]) through %t, which would feed it
// back through the reduce_sum of %q. Convexity is checked with other groups
// as the one region each becomes, so the add %u joins no group, and every
// value is defined before it is used (rlx-opt verifies after the pass). A
// reproducer from autodiff's random graphs.

// CHECK-LABEL: func.func @cycle(
// CHECK-NEXT: [[T:%[a-zA-Z0-9_]+]] = rlx.elementwise_region ins(%{{.*}} : tensor<f32>)
// CHECK: rlx.neg
// CHECK-NEXT: rlx.tanh
// CHECK: [[Q:%[a-zA-Z0-9_]+]], [[R:%[a-zA-Z0-9_]+]] = rlx.elementwise_region ins(%{{.*}}, [[T]], %{{.*}} :
// CHECK: [[SUM:%[a-zA-Z0-9_]+]] = rlx.reduce_sum [[Q]]
// CHECK-NEXT: [[U:%[a-zA-Z0-9_]+]] = rlx.add [[T]], [[SUM]] : (tensor<f32>, tensor<f32>) -> tensor<f32>
// CHECK-NEXT: func.return [[R]], [[U]]
func.func @cycle(%s: tensor<f32>, %g: tensor<2x3xf32>, %x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<f32>) {
  %n = rlx.neg %s : (tensor<f32>) -> tensor<f32>
  %t = rlx.tanh %n : (tensor<f32>) -> tensor<f32>
  %p = rlx.mul %g, %t : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %q = rlx.mul %g, %x : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %r = rlx.add %p, %q : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %sum = rlx.reduce_sum %q {axes = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<f32>
  %u = rlx.add %t, %sum : (tensor<f32>, tensor<f32>) -> tensor<f32>
  func.return %r, %u : tensor<2x3xf32>, tensor<f32>
}
