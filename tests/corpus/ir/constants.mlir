// Hostile constants: values their element type cannot hold, literals of the wrong
// shape or kind, attribute kinds rlx.constant does not take.
// Each case: `// expect: <error type>: <message fragment>` (tests/test_corpus.py).

// 128 does not fit i8.
// expect: ParseError: 128 is out of range for i8 (-128..127)
func.func @f() -> tensor<2xi8> {
  %c = rlx.constant dense<128> : tensor<2xi8>
  func.return %c : tensor<2xi8>
}

// -----

// -129 does not fit i8.
// expect: ParseError: -129 is out of range for i8 (-128..127)
func.func @f() -> tensor<2xi8> {
  %c = rlx.constant dense<-129> : tensor<2xi8>
  func.return %c : tensor<2xi8>
}

// -----

// 40000 does not fit i16.
// expect: ParseError: 40000 is out of range for i16 (-32768..32767)
func.func @f() -> tensor<2xi16> {
  %c = rlx.constant dense<40000> : tensor<2xi16>
  func.return %c : tensor<2xi16>
}

// -----

// 2^31 does not fit i32.
// expect: ParseError: 2147483648 is out of range for i32 (-2147483648..2147483647)
func.func @f() -> tensor<2xi32> {
  %c = rlx.constant dense<2147483648> : tensor<2xi32>
  func.return %c : tensor<2xi32>
}

// -----

// 2^63 does not fit i64.
// expect: ParseError: 9223372036854775808 is out of range for i64 (-9223372036854775808..9223372036854775807)
func.func @f() -> tensor<2xi64> {
  %c = rlx.constant dense<9223372036854775808> : tensor<2xi64>
  func.return %c : tensor<2xi64>
}

// -----

// A negative number for an unsigned type.
// expect: ParseError: -1 is out of range for ui8 (0..255)
func.func @f() -> tensor<2xui8> {
  %c = rlx.constant dense<-1> : tensor<2xui8>
  func.return %c : tensor<2xui8>
}

// -----

// 256 does not fit ui8.
// expect: ParseError: 256 is out of range for ui8 (0..255)
func.func @f() -> tensor<2xui8> {
  %c = rlx.constant dense<256> : tensor<2xui8>
  func.return %c : tensor<2xui8>
}

// -----

// 2^32 does not fit ui32.
// expect: ParseError: 4294967296 is out of range for ui32 (0..4294967295)
func.func @f() -> tensor<2xui32> {
  %c = rlx.constant dense<4294967296> : tensor<2xui32>
  func.return %c : tensor<2xui32>
}

// -----

// -1 for a boolean.
// expect: ParseError: -1 is out of range for i1 (0..1)
func.func @f() -> tensor<2xi1> {
  %c = rlx.constant dense<-1> : tensor<2xi1>
  func.return %c : tensor<2xi1>
}

// -----

// Beyond f32's largest finite value.
// expect: ParseError: 3.5e+38 is out of range for f32 (largest finite value 3.40282e+38)
func.func @f() -> tensor<2xf32> {
  %c = rlx.constant dense<3.5e38> : tensor<2xf32>
  func.return %c : tensor<2xf32>
}

// -----

// Beyond f64's range.
// expect: ParseError: a literal beyond f64's range is out of range for f64
func.func @f() -> tensor<2xf64> {
  %c = rlx.constant dense<1.0e309> : tensor<2xf64>
  func.return %c : tensor<2xf64>
}

// -----

// Beyond bf16's range.
// expect: ParseError: 1e+39 is out of range for bf16 (largest finite value 3.38953e+38)
func.func @f() -> tensor<2xbf16> {
  %c = rlx.constant dense<1.0e39> : tensor<2xbf16>
  func.return %c : tensor<2xbf16>
}

// -----

// Rounds to inf in f16.
// expect: ParseError: 65520.0 is out of range for f16 (largest finite value 65504)
func.func @f() -> tensor<2xf16> {
  %c = rlx.constant dense<65520.0> : tensor<2xf16>
  func.return %c : tensor<2xf16>
}

// -----

// An out-of-range element in a list.
// expect: ParseError: a value of the dense literal does not fit its element type (float too large to pack with
func.func @f() -> tensor<2xf32> {
  %c = rlx.constant dense<[1.0, 1.0e39]> : tensor<2xf32>
  func.return %c : tensor<2xf32>
}

// -----

// Three elements for two.
// expect: ParseError: Shape mismatch in dense literal. Expected [2] shape from the type, but got [3] shape.
func.func @f() -> tensor<2xf32> {
  %c = rlx.constant dense<[1, 2, 3]> : tensor<2xf32>
  func.return %c : tensor<2xf32>
}

// -----

// A nested list for a 1-d type.
// expect: ParseError: Shape mismatch in dense literal. Expected [2] shape from the type, but got [1, 2] shape.
func.func @f() -> tensor<2xf32> {
  %c = rlx.constant dense<[[1.0, 2.0]]> : tensor<2xf32>
  func.return %c : tensor<2xf32>
}

// -----

// A flat list for a 2-d type.
// expect: ParseError: Shape mismatch in dense literal. Expected [2, 2] shape from the type, but got [2] shape.
func.func @f() -> tensor<2x2xf32> {
  %c = rlx.constant dense<[1.0, 2.0]> : tensor<2x2xf32>
  func.return %c : tensor<2x2xf32>
}

// -----

// A string literal.
// expect: ParseError: Hex string in denseAttr is invalid
func.func @f() -> tensor<2xf32> {
  %c = rlx.constant dense<"abc"> : tensor<2xf32>
  func.return %c : tensor<2xf32>
}

// -----

// A hex float pattern too wide for i8.
// expect: ParseError: 2143289344 is out of range for i8 (-128..127)
func.func @f() -> tensor<2xi8> {
  %c = rlx.constant dense<0x7FC00000> : tensor<2xi8>
  func.return %c : tensor<2xi8>
}

// -----

// A fraction for an integer type.
// expect: ParseError: 1.5 is not an integer, as i8 needs
func.func @f() -> tensor<2xi8> {
  %c = rlx.constant dense<1.5> : tensor<2xi8>
  func.return %c : tensor<2xi8>
}

// -----

// A complex literal for a real type.
// expect: ParseError: No conversion from complex to float
func.func @f() -> tensor<2xf32> {
  %c = rlx.constant dense<(1.0, 2.0)> : tensor<2xf32>
  func.return %c : tensor<2xf32>
}

// -----

// Nan is not an MLIR literal.
// expect: ParseError: Expected either a float, integer, or complex literal
func.func @f() -> tensor<2xf32> {
  %c = rlx.constant dense<nan> : tensor<2xf32>
  func.return %c : tensor<2xf32>
}

// -----

// An empty literal.
// expect: ParseError: Expected at least one element in the dense literal, but got None
func.func @f() -> tensor<2xf32> {
  %c = rlx.constant dense<> : tensor<2xf32>
  func.return %c : tensor<2xf32>
}

// -----

// An empty list for two elements.
// expect: ParseError: Shape mismatch in dense literal. Expected [2] shape from the type, but got [0] shape.
func.func @f() -> tensor<2xf32> {
  %c = rlx.constant dense<[]> : tensor<2xf32>
  func.return %c : tensor<2xf32>
}

// -----

// A dynamic shape.
// expect: VerificationError: 'rlx.constant' result has a dynamic shape tensor<?xf32>; rlx needs static shapes
func.func @f() -> tensor<?xf32> {
  %c = rlx.constant dense<1.0> : tensor<?xf32>
  func.return %c : tensor<?xf32>
}

// -----

// An unranked tensor.
// expect: ParseError: rlx.constant takes a tensor type, got tensor<*xf32>
func.func @f() -> tensor<*xf32> {
  %c = rlx.constant dense<1.0> : tensor<*xf32>
  func.return %c : tensor<*xf32>
}

// -----

// The attribute's type and the result type differ.
// expect: ParseError: operand is used with type tensor<3xf32>, but has been previously used or defined with
func.func @f() -> tensor<3xf32> {
  %c = rlx.constant dense<1.0> : tensor<2xf32>
  func.return %c : tensor<3xf32>
}

// -----

// Typed attribute of another element type.
// expect: ParseError: in block definition
func.func @f() -> tensor<2xf32> {
  %c = rlx.constant dense<[1.0, 2.0]> : tensor<2xf64> : tensor<2xf32>
  func.return %c : tensor<2xf32>
}

// -----

// A sparse attribute.
// expect: ParseError: attribute expected
func.func @f() -> tensor<2xf32> {
  %c = rlx.constant sparse<[[0]], [1.0]> : tensor<2xf32>
  func.return %c : tensor<2xf32>
}

// -----

// A bare float.
// expect: ParseError: Invalid type given for integer or float attribute.
func.func @f() -> tensor<2xf32> {
  %c = rlx.constant 1.0 : tensor<2xf32>
  func.return %c : tensor<2xf32>
}

// -----

// An index element type.
// expect: VerificationError: 'rlx.constant' result has unsupported element type index (supported: f16, bf16, f32, f64,
func.func @f() -> tensor<2xindex> {
  %c = rlx.constant dense<1> : tensor<2xindex>
  func.return %c : tensor<2xindex>
}

// -----

// An odd-width integer.
// expect: VerificationError: 'rlx.constant' result has unsupported element type i7 (supported: f16, bf16, f32, f64,
func.func @f() -> tensor<2xi7> {
  %c = rlx.constant dense<1> : tensor<2xi7>
  func.return %c : tensor<2xi7>
}

// -----

// An f80 element.
// expect: ParseError: unsupported syntax: a type or literal xDSL cannot represent
func.func @f() -> tensor<2xf80> {
  %c = rlx.constant dense<1.0> : tensor<2xf80>
  func.return %c : tensor<2xf80>
}

// -----

// Issue 22: a splat rlx does not keep as one value (here another dialect's
// constant) would be expanded by xDSL's parser (4 GB, minutes): refused.
// expect: ParseError: a splat dense literal of 4000000000 bytes: only the value of an rlx.constant is kept as one value
func.func @f() -> tensor<1000000000xf32> {
  %c = arith.constant dense<1.0> : tensor<1000000000xf32>
  func.return %c : tensor<1000000000xf32>
}

// -----

// Issue 22: a complex splat of 10^9 elements (rlx keeps real and integer splats only).
// expect: ParseError: a splat dense literal of 8000000000 bytes
func.func @f() -> tensor<1000000000xcomplex<f32>> {
  %c = rlx.constant dense<(1.0, 2.0)> : tensor<1000000000xcomplex<f32>>
  func.return %c : tensor<1000000000xcomplex<f32>>
}

// -----

// Issue 22: a generic splat whose declared type is not the result type, so
// it is no rlx.constant splat; 10^9 elements are refused, not expanded.
// expect: ParseError: a splat dense literal of 4000000000 bytes
func.func @f() -> tensor<1000000001xf32> {
  %c = "rlx.constant"() <{value = dense<1.0> : tensor<1000000000xf32>}> : () -> tensor<1000000001xf32>
  func.return %c : tensor<1000000001xf32>
}

// -----

// Issue 22: a hex splat of 10^9 elements in another dialect (xDSL repeats its bytes).
// expect: ParseError: a splat dense literal of 4000000000 bytes
func.func @f() -> tensor<1000000000xf32> {
  %c = arith.constant dense<"0x0000803F"> : tensor<1000000000xf32>
  func.return %c : tensor<1000000000xf32>
}

// -----

// Issue 22: the generic form checks the literal's range as the custom form does.
// expect: ParseError: 1e+39 is out of range for f32 (largest finite value 3.40282e+38)
func.func @f() -> tensor<1000000000xf32> {
  %c = "rlx.constant"() <{value = dense<1.0e39> : tensor<1000000000xf32>}> : () -> tensor<1000000000xf32>
  func.return %c : tensor<1000000000xf32>
}

// -----

// A decimal beyond f64 in a list: an infinity is written as its bits.
// expect: ParseError: a literal beyond f64's range; an infinity is written as its bits (0xff800000 is -inf in f32)
func.func @f() -> tensor<2xf64> {
  %c = rlx.constant dense<[1.0, 1.0e309]> : tensor<2xf64>
  func.return %c : tensor<2xf64>
}

// -----

// A hex element wider than the float type it gives the bits of.
// expect: ParseError: hexadecimal float 0x1ff800000 does not fit in f16
func.func @f() -> tensor<2xf16> {
  %c = rlx.constant dense<[1.0, 0x1ff800000]> : tensor<2xf16>
  func.return %c : tensor<2xf16>
}
