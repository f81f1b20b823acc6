// Hostile types, dimensions and signatures: element types rlx has no kernel for,
// dynamic, unranked, huge or malformed shapes, functions compile() cannot run.
// Each case: `// expect: <error type>: <message fragment>` (tests/test_corpus.py).

// A negative dimension after a zero.
// expect: ParseError: Expected shape type.
func.func @f(%x: tensor<0x-1xf32>) -> tensor<0x-1xf32> {
  %r = rlx.neg %x : (tensor<0x-1xf32>) -> tensor<0x-1xf32>
  func.return %r : tensor<0x-1xf32>
}

// -----

// A dimension beyond i64.
// expect: VerificationError: 'rlx.neg' operand #0 tensor<99999999999999999999xf32> is too large (399999999999999999996
func.func @f(%x: tensor<99999999999999999999xf32>) -> tensor<99999999999999999999xf32> {
  %r = rlx.neg %x : (tensor<99999999999999999999xf32>) -> tensor<99999999999999999999xf32>
  func.return %r : tensor<99999999999999999999xf32>
}

// -----

// An element count beyond 2^63.
// expect: VerificationError: 'rlx.neg' operand #0 tensor<4611686018427387904x4xf32> is too large (73786976294838206464
func.func @f(%x: tensor<4611686018427387904x4xf32>) -> tensor<4611686018427387904x4xf32> {
  %r = rlx.neg %x : (tensor<4611686018427387904x4xf32>) -> tensor<4611686018427387904x4xf32>
  func.return %r : tensor<4611686018427387904x4xf32>
}

// -----

// An unknown float type.
// expect: ParseError: Expected shape type.
func.func @f(%x: tensor<4xf33>) -> tensor<4xf33> {
  %r = rlx.neg %x : (tensor<4xf33>) -> tensor<4xf33>
  func.return %r : tensor<4xf33>
}

// -----

// A complex of integers.
// expect: VerificationError: 'rlx.neg' operand #0 has unsupported element type complex<i32> (supported: f16, bf16,
func.func @f(%x: tensor<4xcomplex<i32>>) -> tensor<4xcomplex<i32>> {
  %r = rlx.neg %x : (tensor<4xcomplex<i32>>) -> tensor<4xcomplex<i32>>
  func.return %r : tensor<4xcomplex<i32>>
}

// -----

// A vector element.
// expect: VerificationError: 'rlx.neg' operand #0 has unsupported element type vector<4xf32> (supported: f16, bf16,
func.func @f(%x: tensor<4xvector<4xf32>>) -> tensor<4xvector<4xf32>> {
  %r = rlx.neg %x : (tensor<4xvector<4xf32>>) -> tensor<4xvector<4xf32>>
  func.return %r : tensor<4xvector<4xf32>>
}

// -----

// A tensor of tensors.
// expect: VerificationError: 'rlx.neg' operand #0 has unsupported element type tensor<2xf32> (supported: f16, bf16,
func.func @f(%x: tensor<4xtensor<2xf32>>) -> tensor<4xtensor<2xf32>> {
  %r = rlx.neg %x : (tensor<4xtensor<2xf32>>) -> tensor<4xtensor<2xf32>>
  func.return %r : tensor<4xtensor<2xf32>>
}

// -----

// A memref argument.
// expect: VerificationError: 'rlx.neg' has a value of type memref<4xf32>; rlx ops take ranked tensors or scalars
func.func @f(%x: memref<4xf32>) -> memref<4xf32> {
  %r = rlx.neg %x : (memref<4xf32>) -> memref<4xf32>
  func.return %r : memref<4xf32>
}

// -----

// A vector argument.
// expect: VerificationError: 'rlx.neg' has a value of type vector<4xf32>; rlx ops take ranked tensors or scalars
func.func @f(%x: vector<4xf32>) -> vector<4xf32> {
  %r = rlx.neg %x : (vector<4xf32>) -> vector<4xf32>
  func.return %r : vector<4xf32>
}

// -----

// A dynamic dimension.
// expect: VerificationError: 'rlx.neg' operand #0 has a dynamic shape tensor<4x?xf32>; rlx needs static shapes
func.func @f(%x: tensor<4x?xf32>) -> tensor<4x?xf32> {
  %r = rlx.neg %x : (tensor<4x?xf32>) -> tensor<4x?xf32>
  func.return %r : tensor<4x?xf32>
}

// -----

// An unranked tensor.
// expect: VerificationError: 'rlx.neg' has a value of type tensor<*xf32>; rlx ops take ranked tensors or scalars
func.func @f(%x: tensor<*xf32>) -> tensor<*xf32> {
  %r = rlx.neg %x : (tensor<*xf32>) -> tensor<*xf32>
  func.return %r : tensor<*xf32>
}

// -----

// A 128-bit integer.
// expect: VerificationError: 'rlx.neg' operand #0 has unsupported element type i128 (supported: f16, bf16, f32, f64,
func.func @f(%x: tensor<4xi128>) -> tensor<4xi128> {
  %r = rlx.neg %x : (tensor<4xi128>) -> tensor<4xi128>
  func.return %r : tensor<4xi128>
}

// -----

// A signed integer type.
// expect: VerificationError: 'rlx.neg' operand #0 has unsupported element type si32 (supported: f16, bf16, f32, f64,
func.func @f(%x: tensor<4xsi32>) -> tensor<4xsi32> {
  %r = rlx.neg %x : (tensor<4xsi32>) -> tensor<4xsi32>
  func.return %r : tensor<4xsi32>
}

// -----

// Ui2, not an rlx type (ui4 is the narrowest unsigned one).
// expect: VerificationError: 'rlx.neg' operand #0 has unsupported element type ui2 (supported: f16, bf16, f32, f64,
func.func @f(%x: tensor<4xui2>) -> tensor<4xui2> {
  %r = rlx.neg %x : (tensor<4xui2>) -> tensor<4xui2>
  func.return %r : tensor<4xui2>
}

// -----

// Ui16 is an rlx type, but neg takes no unsigned integers.
// expect: VerificationError: 'rlx.neg' operand must be complex or float or int, got ui16
func.func @f(%x: tensor<4xui16>) -> tensor<4xui16> {
  %r = rlx.neg %x : (tensor<4xui16>) -> tensor<4xui16>
  func.return %r : tensor<4xui16>
}

// -----

// An fp8 type rlx lacks (E8M0, a scale-only format).
// expect: VerificationError: 'rlx.neg' operand #0 has unsupported element type f8E8M0FNU (supported: f16, bf16, f32,
func.func @f(%x: tensor<4xf8E8M0FNU>) -> tensor<4xf8E8M0FNU> {
  %r = rlx.neg %x : (tensor<4xf8E8M0FNU>) -> tensor<4xf8E8M0FNU>
  func.return %r : tensor<4xf8E8M0FNU>
}

// -----

// Tf32.
// expect: VerificationError: 'rlx.neg' operand #0 has unsupported element type tf32 (supported: f16, bf16, f32, f64,
func.func @f(%x: tensor<4xtf32>) -> tensor<4xtf32> {
  %r = rlx.neg %x : (tensor<4xtf32>) -> tensor<4xtf32>
  func.return %r : tensor<4xtf32>
}

// -----

// An unbalanced parenthesis.
// expect: ParseError: Could not parse entire input!
func.func @f(%x: tensor<4xf32>)) -> tensor<4xf32>) {
  %r = rlx.neg %x : (tensor<4xf32>)) -> tensor<4xf32>)
  func.return %r : tensor<4xf32>)
}

// -----

// An unterminated type.
// expect: ParseError: Expected '>' after builtin parameter list
func.func @f(%x: tensor<4xf32) -> tensor<4xf32 {
  %r = rlx.neg %x : (tensor<4xf32) -> tensor<4xf32
  func.return %r : tensor<4xf32
}

// -----

// A missing element type.
// expect: ParseError: Expected shape type.
func.func @f(%x: tensor<4x>) -> tensor<4x> {
  %r = rlx.neg %x : (tensor<4x>) -> tensor<4x>
  func.return %r : tensor<4x>
}

// -----

// A fractional dimension.
// expect: ParseError: Expected shape type.
func.func @f(%x: tensor<4.5xf32>) -> tensor<4.5xf32> {
  %r = rlx.neg %x : (tensor<4.5xf32>) -> tensor<4.5xf32>
  func.return %r : tensor<4.5xf32>
}

// -----

// Rank 65.
// expect: VerificationError: 'rlx.neg' operand #0 has rank 65; rlx tensors have at most 64 dimensions
func.func @f(%x: tensor<0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0xf32>) -> tensor<0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0xf32> {
  %r = rlx.neg %x : (tensor<0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0xf32>) -> tensor<0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0xf32>
  func.return %r : tensor<0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0x0xf32>
}

// -----

// The function returns another type than it declares.
// expect: VerificationError: Expected arguments to have the same types as the function output types: expected
func.func @f(%x: tensor<4xf32>) -> tensor<4xf64> {
  %r = rlx.neg %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----

// The function returns fewer values than it declares.
// expect: VerificationError: Expected arguments to have the same types as the function output types: expected
func.func @f(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r = rlx.neg %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----

// The block arguments differ from the signature.
// expect: ParseError: invalid block name in region with named arguments
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
^bb0(%y: tensor<4xf64>):
  func.return %x : tensor<4xf32>
}

// -----

// A function with two blocks.
// expect: CompileError: 'func.func' @f has 2 blocks; rlx functions are one block of ops
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  cf.br ^bb1
^bb1:
  func.return %x : tensor<4xf32>
}

// -----

// An op of another dialect in an rlx function.
// expect: CompileError: 'arith.addf' in @f is not an rlx op; rlx_mlir.compile runs rlx functions
func.func @f(%x: f32) -> f32 {
  %r = arith.addf %x, %x : f32
  func.return %r : f32
}

// -----

// No function at all.
// expect: CompileError: expected exactly one function to compile (found []); pass entry=
builtin.module {
}

// -----

// Two functions and no entry.
// expect: CompileError: expected exactly one function to compile (found ['f', 'g']); pass entry=
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}
func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}

// -----

// A function name that is an LLVM intrinsic.
// expect: CompileError: function name 'llvm.foo' cannot be a JIT symbol (use letters, digits, _; not
func.func @llvm.foo(%x: tensor<4xf32>) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}

// -----

// A function name that is a libc symbol prefix.
// expect: CompileError: function name 'pthread_create' cannot be a JIT symbol (use letters, digits, _; not
func.func @pthread_create(%x: tensor<4xf32>) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}

// -----

// A function name with a dot.
// expect: CompileError: function name 'a b' cannot be a JIT symbol (use letters, digits, _; not
func.func @"a b"(%x: tensor<4xf32>) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}
