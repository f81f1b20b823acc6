// RUN: not rlx-opt %s -p no-such-pass 2>&1 | filecheck %s
// RUN: not rlx-opt %s -p 'plan-memory{no_such_option=1}' 2>&1 | filecheck %s --check-prefix=OPTION

// An unknown pass name or pass option is rejected with one line, not a traceback.

// CHECK-NOT: Traceback
// CHECK: rlx-opt: error: Unrecognized passes: ['no-such-pass']
// CHECK-NOT: {{.}}

// OPTION-NOT: Traceback
// OPTION: rlx-opt: error: Provided arguments ["no_such_option"] not found in expected arguments []
// OPTION-NOT: {{.}}

func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = rlx.exp %a : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
