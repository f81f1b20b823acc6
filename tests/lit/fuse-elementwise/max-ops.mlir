// RUN: rlx-opt %s --split-input-file -p 'fuse-elementwise{max-ops=2}' | filecheck %s
// RUN: not rlx-opt %s -p 'fuse-elementwise{max-ops=0}' 2>&1 | filecheck %s --check-prefix=BAD

// A chain longer than max-ops becomes several regions of at most max-ops ops,
// in order, each reading the value the one before it materialized; an op
// left alone at the end stays a plain op (lower-to-llvm wraps it).

// CHECK-LABEL: func.func @long_chain(
// CHECK-SAME: [[A:%[a-zA-Z0-9_]+]]: tensor<8xf32>
// CHECK-NEXT: [[R0:%[a-zA-Z0-9_]+]] = rlx.elementwise_region ins([[A]] : tensor<8xf32>)
// CHECK-NEXT: ^{{.*}}([[X:%[a-zA-Z0-9_]+]]: f32):
// CHECK-NEXT: [[N:%[a-zA-Z0-9_]+]] = rlx.neg [[X]]
// CHECK-NEXT: [[E:%[a-zA-Z0-9_]+]] = rlx.exp [[N]]
// CHECK-NEXT: rlx.yield [[E]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: [[R1:%[a-zA-Z0-9_]+]] = rlx.elementwise_region ins([[R0]], [[A]] : tensor<8xf32>, tensor<8xf32>)
// CHECK-NEXT: ^{{.*}}([[Y:%[a-zA-Z0-9_]+]]: f32, [[Z:%[a-zA-Z0-9_]+]]: f32):
// CHECK-NEXT: [[T:%[a-zA-Z0-9_]+]] = rlx.tanh [[Y]]
// CHECK-NEXT: [[M:%[a-zA-Z0-9_]+]] = rlx.mul [[T]], [[Z]]
// CHECK-NEXT: rlx.yield [[M]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: [[B:%[a-zA-Z0-9_]+]] = rlx.abs [[R1]] : (tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT: func.return [[B]]
func.func @long_chain(%a: tensor<8xf32>) -> tensor<8xf32> {
  %0 = rlx.neg %a : (tensor<8xf32>) -> tensor<8xf32>
  %1 = rlx.exp %0 : (tensor<8xf32>) -> tensor<8xf32>
  %2 = rlx.tanh %1 : (tensor<8xf32>) -> tensor<8xf32>
  %3 = rlx.mul %2, %a : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %4 = rlx.abs %3 : (tensor<8xf32>) -> tensor<8xf32>
  func.return %4 : tensor<8xf32>
}

// -----

// Two branches of max-ops ops each cannot join the op that combines them
// (that would make a region of five); the cap never breaks a group's
// convexity, so the add stays alone.

// CHECK-LABEL: func.func @diamond(
// CHECK: rlx.elementwise_region
// CHECK: rlx.neg
// CHECK: rlx.exp
// CHECK: rlx.elementwise_region
// CHECK: rlx.abs
// CHECK: rlx.tanh
// CHECK: }
// CHECK-NEXT: [[S:%[a-zA-Z0-9_]+]] = rlx.add
// CHECK-NEXT: func.return [[S]]
func.func @diamond(%a: tensor<8xf32>) -> tensor<8xf32> {
  %0 = rlx.neg %a : (tensor<8xf32>) -> tensor<8xf32>
  %1 = rlx.exp %0 : (tensor<8xf32>) -> tensor<8xf32>
  %2 = rlx.abs %a : (tensor<8xf32>) -> tensor<8xf32>
  %3 = rlx.tanh %2 : (tensor<8xf32>) -> tensor<8xf32>
  %4 = rlx.add %1, %3 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  func.return %4 : tensor<8xf32>
}

// BAD: fuse-elementwise: max-ops must be at least 1, got 0
