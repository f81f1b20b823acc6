// RUN: rlx-opt %s --split-input-file --verify-diagnostics | filecheck %s

// xDSL's own checks of functions and symbols, as rlx-opt reports them with
// --verify-diagnostics (the rlx rules are in elementwise/ and movement/).

// A function body must end in func.return (a parse-time check, so no annotated
// op is printed and there is no sym_name to label the case with).
// CHECK: Operation rlx.tanh terminates block in single-block region but is not a terminator
func.func @func_without_return(%a: tensor<4xf32>) -> tensor<4xf32> {
  %t = rlx.tanh %a : (tensor<4xf32>) -> tensor<4xf32>
}

// -----

// func.return gives the declared result types.
// CHECK-LABEL: sym_name = "return_type_mismatch"
// CHECK: Operation does not verify: Expected arguments to have the same types as the function output types: expected [tensor<4x4xf32>], got [tensor<4x3xf32>]
func.func @return_type_mismatch(%a: tensor<4x3xf32>) -> tensor<4x4xf32> {
  func.return %a : tensor<4x3xf32>
}

// -----

// ... and as many values as the function declares.
// CHECK-LABEL: sym_name = "return_count_mismatch"
// CHECK: Operation does not verify: Expected arguments to have the same types as the function output types: expected [tensor<4x3xf32>], got []
func.func @return_count_mismatch(%a: tensor<4x3xf32>) -> tensor<4x3xf32> {
  func.return
}

// -----

// Function names are unique in a module. The annotated op is the module, which
// is printed before the functions, so the case has no sym_name label either.
// CHECK: Operation does not verify: Redefinition of symbol "f"
func.func @f(%a: tensor<4xf32>) {
  func.return
}
func.func @f(%a: tensor<4xf32>) {
  func.return
}
