// Malformed text: misspelt ops, operand and result counts, broken punctuation,
// terminators.
// Each case: `// expect: <error type>: <message fragment>` (tests/test_corpus.py).

// A misspelt func.func.
// expect: ParseError: Operation func.fun is not registered
func.fun @f(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %s = rlx.add %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %t = rlx.tanh %s : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %t : tensor<4x3xf32>
}

// -----

// A trailing comma between operands.
// expect: ParseError: operand expected
func.func @f(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %s = rlx.add %a, %b, : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %t = rlx.tanh %s : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %t : tensor<4x3xf32>
}

// -----

// One operand for a binary op.
// expect: ParseError: Expected 2 operands, but got 1
func.func @f(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %s = rlx.add %a : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %t = rlx.tanh %s : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %t : tensor<4x3xf32>
}

// -----

// Three operands for a binary op.
// expect: ParseError: Expected 2 operands, but got 3
func.func @f(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %s = rlx.add %a, %b, %a : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %t = rlx.tanh %s : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %t : tensor<4x3xf32>
}

// -----

// Two result types for a binary op.
// expect: ParseError: Expected 1 result type, but got 2
func.func @f(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %s = rlx.add %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>)
  %t = rlx.tanh %s : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %t : tensor<4x3xf32>
}

// -----

// No operand.
// expect: ParseError: Expected 1 operand, but got 0
func.func @f(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %s = rlx.add %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %t = rlx.tanh : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %t : tensor<4x3xf32>
}

// -----

// No type.
// expect: ParseError: Expected ':'
func.func @f(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %s = rlx.add %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %t = rlx.tanh %s (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %t : tensor<4x3xf32>
}

// -----

// Returns two values for one result.
// expect: ParseError: expected 1 operand types but had 2
func.func @f(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %s = rlx.add %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %t = rlx.tanh %s : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %s, %t : tensor<4x3xf32>
}

// -----

// Returns nothing.
// expect: VerificationError: Expected arguments to have the same types as the function output types: expected
func.func @f(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %s = rlx.add %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %t = rlx.tanh %s : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

// Binds two results of a one-result op.
// expect: ParseError: Operation has 1 results, but was given 2 to bind.
func.func @f(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %s, %q = rlx.add %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %t = rlx.tanh %s : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %t : tensor<4x3xf32>
}

// -----

// An empty function name.
// expect: ParseError: @ identifier expected to start with letter, '_', or '"'.
func.func @(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %s = rlx.add %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %t = rlx.tanh %s : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %t : tensor<4x3xf32>
}

// -----

// A dangling assignment.
// expect: ParseError: operation name expected
func.func @f(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %s = 
  %s = rlx.add %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %t = rlx.tanh %s : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %t : tensor<4x3xf32>
}

// -----

// A repeated argument name.
// expect: ParseError: type expected
func.func @f(%a: tensor<4x3xf32>, %a: %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %s = rlx.add %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %t = rlx.tanh %s : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %t : tensor<4x3xf32>
}

// -----

// An attribute without a value.
// expect: ParseError: attribute expected
func.func @f(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %s = rlx.add %a, %b {axis = } : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %t = rlx.tanh %s : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %t : tensor<4x3xf32>
}

// -----

// An unclosed attribute dictionary.
// expect: ParseError: Expected bare-id or string-literal here as part of attribute entry!
func.func @f(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %s = rlx.add %a, %b { : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %t = rlx.tanh %s : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %t : tensor<4x3xf32>
}

// -----

// No closing brace.
// expect: ParseError: in block definition
func.func @f(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %s = rlx.add %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %t = rlx.tanh %s : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %t : tensor<4x3xf32>


// -----

// An extra brace.
// expect: ParseError: in block definition
func.func @f(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {{
  %s = rlx.add %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %t = rlx.tanh %s : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %t : tensor<4x3xf32>
}

// -----

// A non-ASCII op name.
// expect: ParseError: Operation rlx. is not registered
func.func @f(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %s = rlx.ädd %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %t = rlx.tanh %s : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %t : tensor<4x3xf32>
}

// -----

// A malformed SSA name.
// expect: ParseError: Expected '=' after operation result list
func.func @f(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %0s = rlx.add %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %t = rlx.tanh %s : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %t : tensor<4x3xf32>
}

// -----

// Two terminators.
// expect: VerificationError: 'func.return' must be the last operation in its parent block
func.func @f(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %s = rlx.add %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %t = rlx.tanh %s : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %t : tensor<4x3xf32>
  func.return %t : tensor<4x3xf32>
}

// -----

// No terminator.
// expect: VerificationError: Operation rlx.tanh terminates block in single-block region but is not a terminator
func.func @f(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %s = rlx.add %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %t = rlx.tanh %s : (tensor<4x3xf32>) -> tensor<4x3xf32>
}
