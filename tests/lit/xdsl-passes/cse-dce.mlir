// RUN: rlx-opt %s -p cse,dce --split-input-file | filecheck %s
// xDSL's standard passes work on rlx IR: rlx ops are Pure, so equal ops are
// merged and unused ones removed.

// CHECK-LABEL: func.func @duplicate_ops_merged
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: tensor<8xf32>)
// CHECK-NEXT:    %[[E:[a-zA-Z0-9_]+]] = rlx.exp %[[A]]
// CHECK-NEXT:    %[[S:[a-zA-Z0-9_]+]] = rlx.add %[[E]], %[[E]]
// CHECK-NEXT:    func.return %[[S]]
func.func @duplicate_ops_merged(%a: tensor<8xf32>) -> tensor<8xf32> {
  %e1 = rlx.exp %a : (tensor<8xf32>) -> tensor<8xf32>
  %e2 = rlx.exp %a : (tensor<8xf32>) -> tensor<8xf32>
  %s = rlx.add %e1, %e2 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  func.return %s : tensor<8xf32>
}

// -----

// CHECK-LABEL: func.func @dead_ops_removed
// CHECK-NOT:     rlx.tanh
// CHECK-NOT:     rlx.constant
// CHECK:         func.return
func.func @dead_ops_removed(%a: tensor<8xf32>) -> tensor<8xf32> {
  %c = rlx.constant dense<1.0> : tensor<8xf32>
  %t = rlx.tanh %a : (tensor<8xf32>) -> tensor<8xf32>
  func.return %a : tensor<8xf32>
}
