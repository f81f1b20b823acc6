// RUN: rlx-opt %s -p fuse-mamba2 | filecheck %s

// The chunked scan of tests/lit/fuse-mamba2/chunked-scan.mlir returning its final
// state too (transformers' `new_states[:, -1]`, with a cache): the gather of the
// last state reads the op's state result, and no chunked op is left. The padded
// step leaves the state as it was (its dt·x and a·dt are zero), so the state
// after the real steps is the graph's.

// CHECK-LABEL: func.func @final_state(
// CHECK-NEXT: %[[Y:.*]], %[[STATE:.*]] = rlx.mamba2 %x, %dt, %a, %b, %c {head_dim = 2 : i64, state_size = 2 : i64} : ({{.*}}) -> (tensor<1x3x1x2xf32>, tensor<1x1x2x2xf32>)
// CHECK-NOT: rlx.scan
// CHECK-NOT: rlx.gather
// CHECK: func.return %{{.*}}, %[[STATE]] : tensor<1x3x1x2xf32>, tensor<1x1x2x2xf32>
func.func @final_state(%x: tensor<1x3x1x2xf32>, %dt: tensor<1x3x1xf32>, %a: tensor<1xf32>, %b: tensor<1x3x1x2xf32>, %c: tensor<1x3x1x2xf32>) -> (tensor<1x3x1x2xf32>, tensor<1x1x2x2xf32>) {
  %dt4 = rlx.reshape %dt : (tensor<1x3x1xf32>) -> tensor<1x3x1x1xf32>
  %xdt = rlx.mul %x, %dt4 : (tensor<1x3x1x2xf32>, tensor<1x3x1x1xf32>) -> tensor<1x3x1x2xf32>
  %adt = rlx.mul %a, %dt : (tensor<1xf32>, tensor<1x3x1xf32>) -> tensor<1x3x1xf32>
  %xdt_padded = rlx.pad %xdt {before = array<i64: 0, 0, 0, 0>, after = array<i64: 0, 1, 0, 0>} : (tensor<1x3x1x2xf32>) -> tensor<1x4x1x2xf32>
  %x_chunks = rlx.reshape %xdt_padded : (tensor<1x4x1x2xf32>) -> tensor<1x2x2x1x2xf32>
  %adt_padded = rlx.pad %adt {before = array<i64: 0, 0, 0>, after = array<i64: 0, 1, 0>} : (tensor<1x3x1xf32>) -> tensor<1x4x1xf32>
  %a_chunks = rlx.reshape %adt_padded : (tensor<1x4x1xf32>) -> tensor<1x2x2x1xf32>
  %b_padded = rlx.pad %b {before = array<i64: 0, 0, 0, 0>, after = array<i64: 0, 1, 0, 0>} : (tensor<1x3x1x2xf32>) -> tensor<1x4x1x2xf32>
  %b_chunks = rlx.reshape %b_padded : (tensor<1x4x1x2xf32>) -> tensor<1x2x2x1x2xf32>
  %c_padded = rlx.pad %c {before = array<i64: 0, 0, 0, 0>, after = array<i64: 0, 1, 0, 0>} : (tensor<1x3x1x2xf32>) -> tensor<1x4x1x2xf32>
  %c_chunks = rlx.reshape %c_padded : (tensor<1x4x1x2xf32>) -> tensor<1x2x2x1x2xf32>
  %Transpose.4 = rlx.transpose %a_chunks {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x2x2x1xf32>) -> tensor<1x1x2x2xf32>
  %CumSum.op1 = rlx.transpose %a_chunks {perm = array<i64: 2, 0, 3, 1>} : (tensor<1x2x2x1xf32>) -> tensor<2x1x1x2xf32>
  %CumSum.op2 = rlx.constant dense<0.000000e+00> : tensor<1x1x2xf32>
  %CumSum.op3 = rlx.scan %CumSum.op2, %CumSum.op1 {length = 2 : i64, save_trajectory = true} : (tensor<1x1x2xf32>, tensor<2x1x1x2xf32>) -> tensor<2x1x1x2xf32> {
  ^bb0(%0: tensor<1x1x2xf32>, %1: tensor<1x1x2xf32>):
    %2 = rlx.add %0, %1 : (tensor<1x1x2xf32>, tensor<1x1x2xf32>) -> tensor<1x1x2xf32>
    rlx.yield %2 : tensor<1x1x2xf32>
  }
  %CumSum = rlx.transpose %CumSum.op3 {perm = array<i64: 1, 2, 3, 0>} : (tensor<2x1x1x2xf32>) -> tensor<1x1x2x2xf32>
  %Unsqueeze.22 = rlx.reshape %Transpose.4 : (tensor<1x1x2x2xf32>) -> tensor<1x1x2x2x1xf32>
  %Where.1.op1 = rlx.constant dense<[[true, true], [false, true]]> : tensor<2x2xi1>
  %Where.1.op2 = rlx.constant dense<0.000000e+00> : tensor<f32>
  %Where.1 = rlx.where %Where.1.op1, %Where.1.op2, %Unsqueeze.22 : (tensor<2x2xi1>, tensor<f32>, tensor<1x1x2x2x1xf32>) -> tensor<1x1x2x2x2xf32>
  %CumSum.1.op1 = rlx.transpose %Where.1 {perm = array<i64: 3, 0, 1, 2, 4>} : (tensor<1x1x2x2x2xf32>) -> tensor<2x1x1x2x2xf32>
  %CumSum.1.op2 = rlx.constant dense<0.000000e+00> : tensor<1x1x2x2xf32>
  %CumSum.1.op3 = rlx.scan %CumSum.1.op2, %CumSum.1.op1 {length = 2 : i64, save_trajectory = true} : (tensor<1x1x2x2xf32>, tensor<2x1x1x2x2xf32>) -> tensor<2x1x1x2x2xf32> {
  ^bb0(%0: tensor<1x1x2x2xf32>, %1: tensor<1x1x2x2xf32>):
    %2 = rlx.add %0, %1 : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
    rlx.yield %2 : tensor<1x1x2x2xf32>
  }
  %CumSum.1 = rlx.transpose %CumSum.1.op3 {perm = array<i64: 1, 2, 3, 0, 4>} : (tensor<2x1x1x2x2xf32>) -> tensor<1x1x2x2x2xf32>
  %Where.2.op1 = rlx.constant dense<[[false, true], [false, false]]> : tensor<2x2xi1>
  %Where.2.op2 = rlx.constant dense<0xff800000> : tensor<f32>
  %Where.2 = rlx.where %Where.2.op1, %Where.2.op2, %CumSum.1 : (tensor<2x2xi1>, tensor<f32>, tensor<1x1x2x2x2xf32>) -> tensor<1x1x2x2x2xf32>
  %Exp = rlx.exp %Where.2 : (tensor<1x1x2x2x2xf32>) -> tensor<1x1x2x2x2xf32>
  %Einsum.op1 = rlx.transpose %c_chunks {perm = array<i64: 0, 1, 3, 2, 4>} : (tensor<1x2x2x1x2xf32>) -> tensor<1x2x1x2x2xf32>
  %Einsum.op2 = rlx.transpose %b_chunks {perm = array<i64: 0, 1, 3, 4, 2>} : (tensor<1x2x2x1x2xf32>) -> tensor<1x2x1x2x2xf32>
  %Einsum.op3 = rlx.matmul %Einsum.op1, %Einsum.op2 : (tensor<1x2x1x2x2xf32>, tensor<1x2x1x2x2xf32>) -> tensor<1x2x1x2x2xf32>
  %Einsum = rlx.transpose %Einsum.op3 {perm = array<i64: 0, 1, 3, 4, 2>} : (tensor<1x2x1x2x2xf32>) -> tensor<1x2x2x2x1xf32>
  %Transpose.5 = rlx.transpose %Exp {perm = array<i64: 0, 2, 3, 4, 1>} : (tensor<1x1x2x2x2xf32>) -> tensor<1x2x2x2x1xf32>
  %Mul.3 = rlx.mul %Einsum, %Transpose.5 : (tensor<1x2x2x2x1xf32>, tensor<1x2x2x2x1xf32>) -> tensor<1x2x2x2x1xf32>
  %Einsum.1.op1 = rlx.transpose %Mul.3 {perm = array<i64: 0, 1, 4, 2, 3>} : (tensor<1x2x2x2x1xf32>) -> tensor<1x2x1x2x2xf32>
  %Einsum.1.op2 = rlx.transpose %x_chunks {perm = array<i64: 0, 1, 3, 2, 4>} : (tensor<1x2x2x1x2xf32>) -> tensor<1x2x1x2x2xf32>
  %Einsum.1.op3 = rlx.matmul %Einsum.1.op1, %Einsum.1.op2 : (tensor<1x2x1x2x2xf32>, tensor<1x2x1x2x2xf32>) -> tensor<1x2x1x2x2xf32>
  %Einsum.1 = rlx.transpose %Einsum.1.op3 {perm = array<i64: 0, 1, 3, 2, 4>} : (tensor<1x2x1x2x2xf32>) -> tensor<1x2x2x1x2xf32>
  %Slice.9 = rlx.slice %CumSum {starts = array<i64: 0, 0, 0, 1>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x1x2x2xf32>) -> tensor<1x1x2x1xf32>
  %Sub.5 = rlx.sub %Slice.9, %CumSum : (tensor<1x1x2x1xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %Exp.1 = rlx.exp %Sub.5 : (tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %Transpose.6 = rlx.transpose %Exp.1 {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x1x2x2xf32>) -> tensor<1x2x2x1xf32>
  %Unsqueeze.30 = rlx.reshape %Transpose.6 : (tensor<1x2x2x1xf32>) -> tensor<1x2x2x1x1xf32>
  %Mul.4 = rlx.mul %b_chunks, %Unsqueeze.30 : (tensor<1x2x2x1x2xf32>, tensor<1x2x2x1x1xf32>) -> tensor<1x2x2x1x2xf32>
  %Einsum.2.op1 = rlx.transpose %Mul.4 {perm = array<i64: 0, 1, 3, 4, 2>} : (tensor<1x2x2x1x2xf32>) -> tensor<1x2x1x2x2xf32>
  %Einsum.2.op2 = rlx.transpose %x_chunks {perm = array<i64: 0, 1, 3, 2, 4>} : (tensor<1x2x2x1x2xf32>) -> tensor<1x2x1x2x2xf32>
  %Einsum.2.op3 = rlx.matmul %Einsum.2.op1, %Einsum.2.op2 : (tensor<1x2x1x2x2xf32>, tensor<1x2x1x2x2xf32>) -> tensor<1x2x1x2x2xf32>
  %Einsum.2 = rlx.transpose %Einsum.2.op3 {perm = array<i64: 0, 1, 2, 4, 3>} : (tensor<1x2x1x2x2xf32>) -> tensor<1x2x1x2x2xf32>
  %Concat.20.op1 = rlx.constant dense<0.000000e+00> : tensor<1x1x1x2x2xf32>
  %Concat.20 = rlx.concat %Concat.20.op1, %Einsum.2 {axis = 1 : i64} : (tensor<1x1x1x2x2xf32>, tensor<1x2x1x2x2xf32>) -> tensor<1x3x1x2x2xf32>
  %Gather.19.op1 = rlx.constant dense<-1> : tensor<i64>
  %Gather.19 = rlx.gather %CumSum, %Gather.19.op1 {axis = 3 : i64} : (tensor<1x1x2x2xf32>, tensor<i64>) -> tensor<1x1x2xf32>
  %Pad.4 = rlx.pad %Gather.19 {before = array<i64: 0, 0, 1>, after = array<i64: 0, 0, 0>} : (tensor<1x1x2xf32>) -> tensor<1x1x3xf32>
  %Unsqueeze.31 = rlx.reshape %Pad.4 : (tensor<1x1x3xf32>) -> tensor<1x1x3x1xf32>
  %Where.4.op1 = rlx.constant dense<[[true, true, true], [false, true, true], [false, false, true]]> : tensor<3x3xi1>
  %Where.4.op2 = rlx.constant dense<0.000000e+00> : tensor<f32>
  %Where.4 = rlx.where %Where.4.op1, %Where.4.op2, %Unsqueeze.31 : (tensor<3x3xi1>, tensor<f32>, tensor<1x1x3x1xf32>) -> tensor<1x1x3x3xf32>
  %CumSum.2.op1 = rlx.transpose %Where.4 {perm = array<i64: 2, 0, 1, 3>} : (tensor<1x1x3x3xf32>) -> tensor<3x1x1x3xf32>
  %CumSum.2.op2 = rlx.constant dense<0.000000e+00> : tensor<1x1x3xf32>
  %CumSum.2.op3 = rlx.scan %CumSum.2.op2, %CumSum.2.op1 {length = 3 : i64, save_trajectory = true} : (tensor<1x1x3xf32>, tensor<3x1x1x3xf32>) -> tensor<3x1x1x3xf32> {
  ^bb0(%0: tensor<1x1x3xf32>, %1: tensor<1x1x3xf32>):
    %2 = rlx.add %0, %1 : (tensor<1x1x3xf32>, tensor<1x1x3xf32>) -> tensor<1x1x3xf32>
    rlx.yield %2 : tensor<1x1x3xf32>
  }
  %CumSum.2 = rlx.transpose %CumSum.2.op3 {perm = array<i64: 1, 2, 0, 3>} : (tensor<3x1x1x3xf32>) -> tensor<1x1x3x3xf32>
  %Where.5.op1 = rlx.constant dense<[[false, true, true], [false, false, true], [false, false, false]]> : tensor<3x3xi1>
  %Where.5.op2 = rlx.constant dense<0xff800000> : tensor<f32>
  %Where.5 = rlx.where %Where.5.op1, %Where.5.op2, %CumSum.2 : (tensor<3x3xi1>, tensor<f32>, tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
  %Exp.2 = rlx.exp %Where.5 : (tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
  %Einsum.3.op2 = rlx.transpose %Concat.20 {perm = array<i64: 0, 2, 1, 3, 4>} : (tensor<1x3x1x2x2xf32>) -> tensor<1x1x3x2x2xf32>
  %Einsum.3.op3 = rlx.reshape %Einsum.3.op2 : (tensor<1x1x3x2x2xf32>) -> tensor<1x1x3x4xf32>
  %Einsum.3.op4 = rlx.matmul %Exp.2, %Einsum.3.op3 : (tensor<1x1x3x3xf32>, tensor<1x1x3x4xf32>) -> tensor<1x1x3x4xf32>
  %Einsum.3.op5 = rlx.reshape %Einsum.3.op4 : (tensor<1x1x3x4xf32>) -> tensor<1x1x3x2x2xf32>
  %Einsum.3 = rlx.transpose %Einsum.3.op5 {perm = array<i64: 0, 2, 1, 3, 4>} : (tensor<1x1x3x2x2xf32>) -> tensor<1x3x1x2x2xf32>
  %last = rlx.constant dense<-1> : tensor<i64>
  %final = rlx.gather %Einsum.3, %last {axis = 1 : i64} : (tensor<1x3x1x2x2xf32>, tensor<i64>) -> tensor<1x1x2x2xf32>
  %Slice.13 = rlx.slice %Einsum.3 {starts = array<i64: 0, 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1, 1>} : (tensor<1x3x1x2x2xf32>) -> tensor<1x2x1x2x2xf32>
  %Exp.3 = rlx.exp %CumSum : (tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %Einsum.4.op1 = rlx.transpose %c_chunks {perm = array<i64: 0, 1, 3, 2, 4>} : (tensor<1x2x2x1x2xf32>) -> tensor<1x2x1x2x2xf32>
  %Einsum.4.op2 = rlx.matmul %Einsum.4.op1, %Slice.13 {transpose_rhs = true} : (tensor<1x2x1x2x2xf32>, tensor<1x2x1x2x2xf32>) -> tensor<1x2x1x2x2xf32>
  %Einsum.4 = rlx.transpose %Einsum.4.op2 {perm = array<i64: 0, 1, 3, 2, 4>} : (tensor<1x2x1x2x2xf32>) -> tensor<1x2x2x1x2xf32>
  %Transpose.9 = rlx.transpose %Exp.3 {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x1x2x2xf32>) -> tensor<1x2x2x1xf32>
  %Unsqueeze.38 = rlx.reshape %Transpose.9 : (tensor<1x2x2x1xf32>) -> tensor<1x2x2x1x1xf32>
  %Mul.6 = rlx.mul %Einsum.4, %Unsqueeze.38 : (tensor<1x2x2x1x2xf32>, tensor<1x2x2x1x1xf32>) -> tensor<1x2x2x1x2xf32>
  %y = rlx.add %Einsum.1, %Mul.6 : (tensor<1x2x2x1x2xf32>, tensor<1x2x2x1x2xf32>) -> tensor<1x2x2x1x2xf32>
  %y_steps = rlx.reshape %y : (tensor<1x2x2x1x2xf32>) -> tensor<1x4x1x2xf32>
  %out = rlx.slice %y_steps {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x4x1x2xf32>) -> tensor<1x3x1x2xf32>
  func.return %out, %final : tensor<1x3x1x2xf32>, tensor<1x1x2x2xf32>
}
