// One rule per op family that the lit invalid files do not already pin: bad
// element kinds, shapes, attributes and operand counts.
// Each case: `// expect: <error type>: <message fragment>` (tests/test_corpus.py).

// A unary op with a result shape that is not its operand's.
// expect: VerificationError: 'rlx.exp' result shape [3, 4] does not match the broadcast shape [4, 3]
func.func @f(%x: tensor<4x3xf32>) -> tensor<3x4xf32> {
  %r = rlx.exp %x : (tensor<4x3xf32>) -> tensor<3x4xf32>
  func.return %r : tensor<3x4xf32>
}

// -----

// A unary op changing element type.
// expect: VerificationError: 'rlx.sqrt' result element type f64 must equal the operand's f32
func.func @f(%x: tensor<4x3xf32>) -> tensor<4x3xf64> {
  %r = rlx.sqrt %x : (tensor<4x3xf32>) -> tensor<4x3xf64>
  func.return %r : tensor<4x3xf64>
}

// -----

// A float activation on integers.
// expect: VerificationError: 'rlx.gelu' operand must be float, got i32
func.func @f(%x: tensor<4xi32>) -> tensor<4xi32> {
  %r = rlx.gelu %x : (tensor<4xi32>) -> tensor<4xi32>
  func.return %r : tensor<4xi32>
}

// -----

// Sigmoid on booleans.
// expect: VerificationError: 'rlx.sigmoid' operand must be float, got i1
func.func @f(%x: tensor<4xi1>) -> tensor<4xi1> {
  %r = rlx.sigmoid %x : (tensor<4xi1>) -> tensor<4xi1>
  func.return %r : tensor<4xi1>
}

// -----

// Sin on complex.
// expect: VerificationError: 'rlx.sin' operand must be float, got complex<f32>
func.func @f(%x: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  %r = rlx.sin %x : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  func.return %r : tensor<4xcomplex<f32>>
}

// -----

// A binary op over incompatible shapes.
// expect: VerificationError: 'rlx.add' operands have incompatible broadcast shapes (4x3, 4)
func.func @f(%x: tensor<4x3xf32>, %y: tensor<4xf32>) -> tensor<4x3xf32> {
  %r = rlx.add %x, %y : (tensor<4x3xf32>, tensor<4xf32>) -> tensor<4x3xf32>
  func.return %r : tensor<4x3xf32>
}

// -----

// A binary op with mixed element types.
// expect: VerificationError: 'rlx.mul' operand element types differ (f32 vs f64); insert rlx.cast
func.func @f(%x: tensor<4x3xf32>, %y: tensor<4x3xf64>) -> tensor<4x3xf32> {
  %r = rlx.mul %x, %y : (tensor<4x3xf32>, tensor<4x3xf64>) -> tensor<4x3xf32>
  func.return %r : tensor<4x3xf32>
}

// -----

// A broadcast result of the wrong shape.
// expect: VerificationError: 'rlx.sub' result shape [3] does not match the broadcast shape [4, 3]
func.func @f(%x: tensor<4x3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
  %r = rlx.sub %x, %y : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %r : tensor<3xf32>
}

// -----

// Bit_and on floats.
// expect: VerificationError: 'rlx.bit_and' operands must be bool or int or uint, got f32
func.func @f(%x: tensor<4x3xf32>, %y: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = rlx.bit_and %x, %y : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %r : tensor<4x3xf32>
}

// -----

// Shl on floats.
// expect: VerificationError: 'rlx.shl' operands must be int or uint, got f32
func.func @f(%x: tensor<4x3xf32>, %y: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = rlx.shl %x, %y : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %r : tensor<4x3xf32>
}

// -----

// A comparison returning floats.
// expect: VerificationError: 'rlx.lt' result must have element type i1, got f32
func.func @f(%x: tensor<4x3xf32>, %y: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = rlx.lt %x, %y : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %r : tensor<4x3xf32>
}

// -----

// A comparison of mixed types.
// expect: VerificationError: 'rlx.eq' operand element types differ (f32 vs i32); insert rlx.cast
func.func @f(%x: tensor<4x3xf32>, %y: tensor<4x3xi32>) -> tensor<4x3xi1> {
  %r = rlx.eq %x, %y : (tensor<4x3xf32>, tensor<4x3xi32>) -> tensor<4x3xi1>
  func.return %r : tensor<4x3xi1>
}

// -----

// Atan2 on integers.
// expect: VerificationError: 'rlx.atan2' operands must be float, got i32
func.func @f(%x: tensor<4xi32>, %y: tensor<4xi32>) -> tensor<4xi32> {
  %r = rlx.atan2 %x, %y : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  func.return %r : tensor<4xi32>
}

// -----

// Where with a float condition.
// expect: VerificationError: 'rlx.where' condition must have element type i1, got f32
func.func @f(%c: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %r = rlx.where %c, %x, %x : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----

// Where with branches of different types.
// expect: VerificationError: 'rlx.where' branches and result must share an element type (got f32, f64 -> f32)
func.func @f(%c: tensor<4xi1>, %x: tensor<4xf32>, %y: tensor<4xf64>) -> tensor<4xf32> {
  %r = rlx.where %c, %x, %y : (tensor<4xi1>, tensor<4xf32>, tensor<4xf64>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----

// Fma with two operands.
// expect: ParseError: Expected 3 operands, but got 2
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = rlx.fma %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----

// Cast changing the shape.
// expect: VerificationError: 'rlx.cast' result shape [12] must equal the operand shape [4, 3]
func.func @f(%x: tensor<4x3xf32>) -> tensor<12xi32> {
  %r = rlx.cast %x : (tensor<4x3xf32>) -> tensor<12xi32>
  func.return %r : tensor<12xi32>
}

// -----

// Transpose without perm.
// expect: VerificationError: property 'perm' expected in operation 'rlx.transpose'
func.func @f(%x: tensor<4x3xf32>) -> tensor<3x4xf32> {
  %r = rlx.transpose %x : (tensor<4x3xf32>) -> tensor<3x4xf32>
  func.return %r : tensor<3x4xf32>
}

// -----

// Transpose with a perm of the wrong length.
// expect: VerificationError: 'rlx.transpose' perm has 3 entries, expected 2 (one per axis)
func.func @f(%x: tensor<4x3xf32>) -> tensor<3x4xf32> {
  %r = rlx.transpose %x {perm = array<i64: 1, 0, 2>} : (tensor<4x3xf32>) -> tensor<3x4xf32>
  func.return %r : tensor<3x4xf32>
}

// -----

// Transpose with perm as a list of attributes.
// expect: VerificationError: [1 : i64, 0 : i64] should be of base attribute array
func.func @f(%x: tensor<4x3xf32>) -> tensor<3x4xf32> {
  %r = rlx.transpose %x {perm = [1, 0]} : (tensor<4x3xf32>) -> tensor<3x4xf32>
  func.return %r : tensor<3x4xf32>
}

// -----

// Transpose with a string perm.
// expect: VerificationError: "10" should be of base attribute array
func.func @f(%x: tensor<4x3xf32>) -> tensor<3x4xf32> {
  %r = rlx.transpose %x {perm = "10"} : (tensor<4x3xf32>) -> tensor<3x4xf32>
  func.return %r : tensor<3x4xf32>
}

// -----

// Reshape changing the element count.
// expect: VerificationError: 'rlx.reshape' cannot reshape 12 elements into 13
func.func @f(%x: tensor<4x3xf32>) -> tensor<13xf32> {
  %r = rlx.reshape %x : (tensor<4x3xf32>) -> tensor<13xf32>
  func.return %r : tensor<13xf32>
}

// -----

// Reshape changing the element type.
// expect: VerificationError: 'rlx.reshape' result element type f64 must equal the operand's f32
func.func @f(%x: tensor<4x3xf32>) -> tensor<12xf64> {
  %r = rlx.reshape %x : (tensor<4x3xf32>) -> tensor<12xf64>
  func.return %r : tensor<12xf64>
}

// -----

// Expand to fewer dimensions.
// expect: VerificationError: 'rlx.expand' cannot broadcast shape [4, 3] to [3]
func.func @f(%x: tensor<4x3xf32>) -> tensor<3xf32> {
  %r = rlx.expand %x : (tensor<4x3xf32>) -> tensor<3xf32>
  func.return %r : tensor<3xf32>
}

// -----

// Expand of a non-1 dimension.
// expect: VerificationError: 'rlx.expand' cannot broadcast shape [4, 3] to [8, 3]
func.func @f(%x: tensor<4x3xf32>) -> tensor<8x3xf32> {
  %r = rlx.expand %x : (tensor<4x3xf32>) -> tensor<8x3xf32>
  func.return %r : tensor<8x3xf32>
}

// -----

// Reverse with an axis out of range.
// expect: VerificationError: 'rlx.reverse' axis 2 is out of range for rank 2
func.func @f(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = rlx.reverse %x {axes = array<i64: 2>} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %r : tensor<4x3xf32>
}

// -----

// Narrow past the end.
// expect: VerificationError: 'rlx.narrow' start 3 and length 2 do not fit axis 0 of size 4
func.func @f(%x: tensor<4x3xf32>) -> tensor<2x3xf32> {
  %r = rlx.narrow %x {axis = 0 : i64, start = 3 : i64, length = 2 : i64} : (tensor<4x3xf32>) -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}

// -----

// Narrow on a negative start.
// expect: VerificationError: 'rlx.narrow' start -9 and length 2 do not fit axis 0 of size 4
func.func @f(%x: tensor<4x3xf32>) -> tensor<2x3xf32> {
  %r = rlx.narrow %x {axis = 0 : i64, start = -9 : i64, length = 2 : i64} : (tensor<4x3xf32>) -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}

// -----

// Slice with step 0.
// expect: VerificationError: 'rlx.slice' step on axis 0 must not be 0
func.func @f(%x: tensor<4x3xf32>) -> tensor<2x3xf32> {
  %r = rlx.slice %x {starts = array<i64: 0, 0>, steps = array<i64: 0, 1>} : (tensor<4x3xf32>) -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}

// -----

// Pad with an unknown mode.
// expect: VerificationError: 'rlx.pad' mode "mirror" is not one of constant, replicate, circular, reflect
func.func @f(%x: tensor<4x3xf32>) -> tensor<6x3xf32> {
  %r = rlx.pad %x {before = array<i64: 1, 0>, after = array<i64: 1, 0>, mode = "mirror"} : (tensor<4x3xf32>) -> tensor<6x3xf32>
  func.return %r : tensor<6x3xf32>
}

// -----

// Pad with an odd pads list.
// expect: VerificationError: 'rlx.pad' before has 3 entries, expected 2 (one per axis)
func.func @f(%x: tensor<4x3xf32>) -> tensor<6x3xf32> {
  %r = rlx.pad %x {before = array<i64: 1, 0, 1>, after = array<i64: 1, 0>} : (tensor<4x3xf32>) -> tensor<6x3xf32>
  func.return %r : tensor<6x3xf32>
}

// -----

// Concat along an axis out of range.
// expect: VerificationError: 'rlx.concat' axis 2 is out of range for rank 2
func.func @f(%x: tensor<4x3xf32>, %y: tensor<4x3xf32>) -> tensor<8x3xf32> {
  %r = rlx.concat %x, %y {axis = 2 : i64} : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  func.return %r : tensor<8x3xf32>
}

// -----

// Concat of mismatched other axes.
// expect: VerificationError: 'rlx.concat' input #1 of shape [4, 2] does not fit the result [8, 3] on axis 0
func.func @f(%x: tensor<4x3xf32>, %y: tensor<4x2xf32>) -> tensor<8x3xf32> {
  %r = rlx.concat %x, %y {axis = 0 : i64} : (tensor<4x3xf32>, tensor<4x2xf32>) -> tensor<8x3xf32>
  func.return %r : tensor<8x3xf32>
}

// -----

// Gather with float indices.
// expect: VerificationError: 'rlx.gather' indices must have element type i32 or i64, got f32 (insert rlx.cast)
func.func @f(%x: tensor<4x3xf32>, %y: tensor<2xf32>) -> tensor<2x3xf32> {
  %r = rlx.gather %x, %y {axis = 0 : i64} : (tensor<4x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}

// -----

// Gather with an axis out of range.
// expect: VerificationError: 'rlx.gather' axis 5 is out of range for rank 2
func.func @f(%x: tensor<4x3xf32>, %y: tensor<2xi64>) -> tensor<2x3xf32> {
  %r = rlx.gather %x, %y {axis = 5 : i64} : (tensor<4x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}

// -----

// Reduce_sum over an axis out of range.
// expect: VerificationError: 'rlx.reduce_sum' axes entry 3 is out of range for rank 2
func.func @f(%x: tensor<4x3xf32>) -> tensor<4xf32> {
  %r = rlx.reduce_sum %x {axes = array<i64: 3>} : (tensor<4x3xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----

// Reduce_sum over a repeated axis.
// expect: VerificationError: 'rlx.reduce_sum' axes [1, 1] repeat an axis
func.func @f(%x: tensor<4x3xf32>) -> tensor<4xf32> {
  %r = rlx.reduce_sum %x {axes = array<i64: 1, 1>} : (tensor<4x3xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----

// Reduce_max with a wrong result shape.
// expect: VerificationError: 'rlx.reduce_max' result shape [3] does not match the expected shape [4]
func.func @f(%x: tensor<4x3xf32>) -> tensor<3xf32> {
  %r = rlx.reduce_max %x {axes = array<i64: 1>} : (tensor<4x3xf32>) -> tensor<3xf32>
  func.return %r : tensor<3xf32>
}

// -----

// Softmax over an axis out of range.
// expect: VerificationError: 'rlx.softmax' axis 7 is out of range for rank 2
func.func @f(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = rlx.softmax %x {axis = 7 : i64} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %r : tensor<4x3xf32>
}

// -----

// Argmax returning floats.
// expect: VerificationError: 'rlx.argmax' result must have element type i64, got f32
func.func @f(%x: tensor<4x3xf32>) -> tensor<4xf32> {
  %r = rlx.argmax %x {axis = 1 : i64} : (tensor<4x3xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----

// Matmul with mismatched inner dimensions.
// expect: VerificationError: 'rlx.matmul' contracting dimensions differ: lhs K = 3, rhs K = 4
func.func @f(%x: tensor<4x3xf32>, %y: tensor<4x3xf32>) -> tensor<4x4xf32> {
  %r = rlx.matmul %x, %y : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x4xf32>
  func.return %r : tensor<4x4xf32>
}

// -----

// Matmul of integers and floats.
// expect: VerificationError: 'rlx.matmul' rhs element type f32 must equal i32
func.func @f(%x: tensor<4x3xi32>, %y: tensor<3x4xf32>) -> tensor<4x4xf32> {
  %r = rlx.matmul %x, %y : (tensor<4x3xi32>, tensor<3x4xf32>) -> tensor<4x4xf32>
  func.return %r : tensor<4x4xf32>
}

// -----

// Matmul of scalars.
// expect: VerificationError: 'rlx.matmul' operands must have rank >= 1
func.func @f(%x: tensor<f32>, %y: tensor<f32>) -> tensor<f32> {
  %r = rlx.matmul %x, %y : (tensor<f32>, tensor<f32>) -> tensor<f32>
  func.return %r : tensor<f32>
}

// -----

// Matmul with a wrong result shape.
// expect: VerificationError: 'rlx.matmul' result shape [4, 4] does not match the expected shape [4, 5]
func.func @f(%x: tensor<4x3xf32>, %y: tensor<3x5xf32>) -> tensor<4x4xf32> {
  %r = rlx.matmul %x, %y : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x4xf32>
  func.return %r : tensor<4x4xf32>
}

// -----

// Activation_backward with an unknown kind.
// expect: VerificationError: 'rlx.activation_backward' kind "frobnicate" is not a unary rlx op
func.func @f(%x: tensor<4x3xf32>, %y: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = rlx.activation_backward %x, %y {kind = "frobnicate"} : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %r : tensor<4x3xf32>
}

// -----

// Relu_backward of mismatched shapes.
// expect: VerificationError: 'rlx.relu_backward' operands have incompatible broadcast shapes (4x3, 4)
func.func @f(%x: tensor<4x3xf32>, %y: tensor<4xf32>) -> tensor<4x3xf32> {
  %r = rlx.relu_backward %x, %y : (tensor<4x3xf32>, tensor<4xf32>) -> tensor<4x3xf32>
  func.return %r : tensor<4x3xf32>
}

// -----

// Rlx.yield at the top level.
// expect: VerificationError: 'rlx.yield' expects parent op 'rlx.*_region or rlx.scan'
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  rlx.yield %x : tensor<4xf32>
}

// -----

// An elementwise_region with no results.
// expect: ParseError: type expected
func.func @f(%x: tensor<4xf32>) {
  rlx.elementwise_region ins(%x : tensor<4xf32>) {indexing_maps = [affine_map<(d0) -> (d0)>]} -> () {
  ^bb0(%v: f32):
    rlx.yield
  }
  func.return
}

// -----

// An elementwise_region reading past the end of its input.
// expect: VerificationError: 'rlx.elementwise_region' indexing map #0 reads axis 0 (size 4) at indices 1..4
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = rlx.elementwise_region ins(%x : tensor<4xf32>) {indexing_maps = [affine_map<(d0) -> (d0 + 1)>]} -> tensor<4xf32> {
  ^bb0(%v: f32):
    rlx.yield %v : f32
  }
  func.return %r : tensor<4xf32>
}

// -----

// An elementwise_region with a tensor op in its body.
// expect: VerificationError: 'rlx.elementwise_region' body may only hold scalar elementwise rlx ops, found
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = rlx.elementwise_region ins(%x : tensor<4xf32>) {indexing_maps = [affine_map<(d0) -> (d0)>]} -> tensor<4xf32> {
  ^bb0(%v: f32):
    %c = rlx.constant dense<1.0> : tensor<f32>
    rlx.yield %v : f32
  }
  func.return %r : tensor<4xf32>
}

// -----

// An elementwise_region yielding the wrong type.
// expect: VerificationError: 'rlx.elementwise_region' must yield the result element types (f32)
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = rlx.elementwise_region ins(%x : tensor<4xf32>) {indexing_maps = [affine_map<(d0) -> (d0)>]} -> tensor<4xf32> {
  ^bb0(%v: f32):
    %c = rlx.lt %v, %v : (f32, f32) -> i1
    rlx.yield %c : i1
  }
  func.return %r : tensor<4xf32>
}

// -----

// Where with two operands.
// expect: ParseError: Expected 3 operands, but got 2
func.func @f(%c: tensor<4xi1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %r = rlx.where %c, %x : (tensor<4xi1>, tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----

// Matmul with one operand.
// expect: ParseError: Expected 2 operands, but got 1
func.func @f(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %r = rlx.matmul %x : (tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %r : tensor<4x4xf32>
}

// -----

// Gather with one operand.
// expect: ParseError: Expected 2 operands, but got 1
func.func @f(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = rlx.gather %x {axis = 0 : i64} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %r : tensor<4x3xf32>
}

// -----

// Reduce_sum with two operands.
// expect: ParseError: Expected 1 operand, but got 2
func.func @f(%x: tensor<4x3xf32>, %y: tensor<4x3xf32>) -> tensor<4xf32> {
  %r = rlx.reduce_sum %x, %y {axes = array<i64: 1>} : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----

// Narrow without its attributes.
// expect: VerificationError: property 'axis' expected in operation 'rlx.narrow'
func.func @f(%x: tensor<4x3xf32>) -> tensor<2x3xf32> {
  %r = rlx.narrow %x : (tensor<4x3xf32>) -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}

// -----

// Narrow with a float length.
// expect: VerificationError: 2.000000e+00 : f64 should be of base attribute integer
func.func @f(%x: tensor<4x3xf32>) -> tensor<2x3xf32> {
  %r = rlx.narrow %x {axis = 0 : i64, start = 0 : i64, length = 2.0 : f64} : (tensor<4x3xf32>) -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}

// -----

// Reduce_sum with keepdims as an integer.
// expect: VerificationError: Expected attribute i1 but got i64
func.func @f(%x: tensor<4x3xf32>) -> tensor<4xf32> {
  %r = rlx.reduce_sum %x {axes = array<i64: 1>, keepdims = 1 : i64} : (tensor<4x3xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----

// Softmax with a float axis.
// expect: VerificationError: 1.000000e+00 : f64 should be of base attribute integer
func.func @f(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = rlx.softmax %x {axis = 1.0 : f64} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %r : tensor<4x3xf32>
}

// -----

// Argmax with a string select_last_index.
// expect: VerificationError: "yes" should be of base attribute integer
func.func @f(%x: tensor<4x3xf32>) -> tensor<4xi64> {
  %r = rlx.argmax %x {axis = 1 : i64, select_last_index = "yes"} : (tensor<4x3xf32>) -> tensor<4xi64>
  func.return %r : tensor<4xi64>
}

// -----

// Reduce_sum with axes as i32.
// expect: VerificationError: 'rlx.reduce_sum' axes must be array<i64: ...>, got array<i32: 1>
func.func @f(%x: tensor<4x3xf32>) -> tensor<4xf32> {
  %r = rlx.reduce_sum %x {axes = array<i32: 1>} : (tensor<4x3xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----

// Concat with a string axis.
// expect: VerificationError: "0" should be of base attribute integer
func.func @f(%x: tensor<4x3xf32>, %y: tensor<4x3xf32>) -> tensor<8x3xf32> {
  %r = rlx.concat %x, %y {axis = "0"} : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  func.return %r : tensor<8x3xf32>
}

// -----

// Scatter_nd with an unknown reduction.
// expect: VerificationError: 'rlx.scatter_nd' reduction "avg" is not one of none, add, mul, max, min
func.func @f(%d: tensor<4x3xf32>, %i: tensor<2x1xi64>, %u: tensor<2x3xf32>) -> tensor<4x3xf32> {
  %r = rlx.scatter_nd %d, %i, %u {reduction = "avg"} : (tensor<4x3xf32>, tensor<2x1xi64>, tensor<2x3xf32>) -> tensor<4x3xf32>
  func.return %r : tensor<4x3xf32>
}

// -----

// Expand with two operands.
// expect: ParseError: Expected 1 operand, but got 2
func.func @f(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<4x3xf32> {
  %r = rlx.expand %x, %y : (tensor<3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  func.return %r : tensor<4x3xf32>
}

// -----

// Cast with no operand.
// expect: ParseError: Expected 1 operand, but got 0
func.func @f() -> tensor<4xf32> {
  %r = rlx.cast : () -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
