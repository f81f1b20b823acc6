// RUN: rlx-opt %s --split-input-file --verify-diagnostics | filecheck %s

// One case per verifier rule of the recurrent ops (dialects/recurrent.py).
// Each CHECK pins the exact message to the case it comes from.

// A state group is all of its tensors or none: LSTM takes h0 and c0 together.
// CHECK-LABEL: sym_name = "lstm_half_state"
// CHECK: Operation does not verify: 'rlx.lstm' takes all 2 state operands (h0, c0) or none, got 1
func.func @lstm_half_state(%a0: tensor<2x5x3xf32>, %a1: tensor<48xf32>, %a2: tensor<64xf32>, %a3: tensor<16xf32>, %a4: tensor<1x2x4xf32>) {
  %r0 = rlx.lstm %a0, %a1, %a2, %a3, %a4 {hidden_size = 4 : i64} : (tensor<2x5x3xf32>, tensor<48xf32>, tensor<64xf32>, tensor<16xf32>, tensor<1x2x4xf32>) -> tensor<2x5x4xf32>
  func.return
}

// -----

// The same for the state results.
// CHECK-LABEL: sym_name = "lstm_half_state_results"
// CHECK: Operation does not verify: 'rlx.lstm' takes all 2 state results (hn, cn) or none, got 1
func.func @lstm_half_state_results(%a0: tensor<2x5x3xf32>, %a1: tensor<48xf32>, %a2: tensor<64xf32>, %a3: tensor<16xf32>) {
  %r0, %r1 = rlx.lstm %a0, %a1, %a2, %a3 {hidden_size = 4 : i64} : (tensor<2x5x3xf32>, tensor<48xf32>, tensor<64xf32>, tensor<16xf32>) -> (tensor<2x5x4xf32>, tensor<1x2x4xf32>)
  func.return
}

// -----

// The RNN family computes on f32 and f64 only.
// CHECK-LABEL: sym_name = "lstm_integer"
// CHECK: Operation does not verify: 'rlx.lstm' element type i32 is not one of f32, f64
func.func @lstm_integer(%a0: tensor<2x5x3xi32>, %a1: tensor<48xi32>, %a2: tensor<64xi32>, %a3: tensor<16xi32>) {
  %r0 = rlx.lstm %a0, %a1, %a2, %a3 {hidden_size = 4 : i64} : (tensor<2x5x3xi32>, tensor<48xi32>, tensor<64xi32>, tensor<16xi32>) -> tensor<2x5x4xi32>
  func.return
}

// -----

// f16 is a scan type, not an RNN-family one.
// CHECK-LABEL: sym_name = "lstm_f16"
// CHECK: Operation does not verify: 'rlx.lstm' element type f16 is not one of f32, f64
func.func @lstm_f16(%a0: tensor<2x5x3xf16>, %a1: tensor<48xf16>, %a2: tensor<64xf16>, %a3: tensor<16xf16>) {
  %r0 = rlx.lstm %a0, %a1, %a2, %a3 {hidden_size = 4 : i64} : (tensor<2x5x3xf16>, tensor<48xf16>, tensor<64xf16>, tensor<16xf16>) -> tensor<2x5x4xf16>
  func.return
}

// -----

// Every operand has x's element type; the message names the operand.
// CHECK-LABEL: sym_name = "lstm_mixed_types"
// CHECK: Operation does not verify: 'rlx.lstm' operand 'w_hh' element type f64 must equal f32
func.func @lstm_mixed_types(%a0: tensor<2x5x3xf32>, %a1: tensor<48xf32>, %a2: tensor<64xf64>, %a3: tensor<16xf32>) {
  %r0 = rlx.lstm %a0, %a1, %a2, %a3 {hidden_size = 4 : i64} : (tensor<2x5x3xf32>, tensor<48xf32>, tensor<64xf64>, tensor<16xf32>) -> tensor<2x5x4xf32>
  func.return
}

// -----

// State operands too.
// CHECK-LABEL: sym_name = "lstm_mixed_state_type"
// CHECK: Operation does not verify: 'rlx.lstm' state operand 'c0' element type f64 must equal f32
func.func @lstm_mixed_state_type(%a0: tensor<2x5x3xf32>, %a1: tensor<48xf32>, %a2: tensor<64xf32>, %a3: tensor<16xf32>, %a4: tensor<1x2x4xf32>, %a5: tensor<1x2x4xf64>) {
  %r0 = rlx.lstm %a0, %a1, %a2, %a3, %a4, %a5 {hidden_size = 4 : i64} : (tensor<2x5x3xf32>, tensor<48xf32>, tensor<64xf32>, tensor<16xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf64>) -> tensor<2x5x4xf32>
  func.return
}

// -----

// And the results.
// CHECK-LABEL: sym_name = "lstm_result_type"
// CHECK: Operation does not verify: 'rlx.lstm' result #0 element type f64 must equal f32
func.func @lstm_result_type(%a0: tensor<2x5x3xf32>, %a1: tensor<48xf32>, %a2: tensor<64xf32>, %a3: tensor<16xf32>) {
  %r0 = rlx.lstm %a0, %a1, %a2, %a3 {hidden_size = 4 : i64} : (tensor<2x5x3xf32>, tensor<48xf32>, tensor<64xf32>, tensor<16xf32>) -> tensor<2x5x4xf64>
  func.return
}

// -----

// hidden_size and num_layers are positive.
// CHECK-LABEL: sym_name = "lstm_hidden_zero"
// CHECK: Operation does not verify: 'rlx.lstm' hidden_size must be at least 1, got 0
func.func @lstm_hidden_zero(%a0: tensor<2x5x3xf32>, %a1: tensor<48xf32>, %a2: tensor<64xf32>, %a3: tensor<16xf32>) {
  %r0 = rlx.lstm %a0, %a1, %a2, %a3 {hidden_size = 0 : i64} : (tensor<2x5x3xf32>, tensor<48xf32>, tensor<64xf32>, tensor<16xf32>) -> tensor<2x5x4xf32>
  func.return
}

// -----

// 
// CHECK-LABEL: sym_name = "lstm_layers_zero"
// CHECK: Operation does not verify: 'rlx.lstm' num_layers must be at least 1, got 0
func.func @lstm_layers_zero(%a0: tensor<2x5x3xf32>, %a1: tensor<48xf32>, %a2: tensor<64xf32>, %a3: tensor<16xf32>) {
  %r0 = rlx.lstm %a0, %a1, %a2, %a3 {hidden_size = 4 : i64, num_layers = 0 : i64} : (tensor<2x5x3xf32>, tensor<48xf32>, tensor<64xf32>, tensor<16xf32>) -> tensor<2x5x4xf32>
  func.return
}

// -----

// x is [B, S, I] (batch first).
// CHECK-LABEL: sym_name = "lstm_x_rank"
// CHECK: Operation does not verify: 'rlx.lstm' operand 'x' must have rank 3, got [10, 3]
func.func @lstm_x_rank(%a0: tensor<10x3xf32>, %a1: tensor<48xf32>, %a2: tensor<64xf32>, %a3: tensor<16xf32>) {
  %r0 = rlx.lstm %a0, %a1, %a2, %a3 {hidden_size = 4 : i64} : (tensor<10x3xf32>, tensor<48xf32>, tensor<64xf32>, tensor<16xf32>) -> tensor<2x5x4xf32>
  func.return
}

// -----

// Weights are checked by element count against the packing (rnn_expected_lens): 4 gates x H 4 x I 3 = 48.
// CHECK-LABEL: sym_name = "lstm_w_ih_count"
// CHECK: Operation does not verify: 'rlx.lstm' operand 'w_ih' has 36 elements, expected 48
func.func @lstm_w_ih_count(%a0: tensor<2x5x3xf32>, %a1: tensor<36xf32>, %a2: tensor<64xf32>, %a3: tensor<16xf32>) {
  %r0 = rlx.lstm %a0, %a1, %a2, %a3 {hidden_size = 4 : i64} : (tensor<2x5x3xf32>, tensor<36xf32>, tensor<64xf32>, tensor<16xf32>) -> tensor<2x5x4xf32>
  func.return
}

// -----

// Layer 1 reads layer 0's D*H outputs: 4*4*3 + 4*4*4 = 112.
// CHECK-LABEL: sym_name = "lstm_w_ih_two_layers"
// CHECK: Operation does not verify: 'rlx.lstm' operand 'w_ih' has 96 elements, expected 112
func.func @lstm_w_ih_two_layers(%a0: tensor<2x5x3xf32>, %a1: tensor<96xf32>, %a2: tensor<128xf32>, %a3: tensor<32xf32>) {
  %r0 = rlx.lstm %a0, %a1, %a2, %a3 {hidden_size = 4 : i64, num_layers = 2 : i64} : (tensor<2x5x3xf32>, tensor<96xf32>, tensor<128xf32>, tensor<32xf32>) -> tensor<2x5x4xf32>
  func.return
}

// -----

// 
// CHECK-LABEL: sym_name = "lstm_w_hh_count"
// CHECK: Operation does not verify: 'rlx.lstm' operand 'w_hh' has 48 elements, expected 64
func.func @lstm_w_hh_count(%a0: tensor<2x5x3xf32>, %a1: tensor<48xf32>, %a2: tensor<48xf32>, %a3: tensor<16xf32>) {
  %r0 = rlx.lstm %a0, %a1, %a2, %a3 {hidden_size = 4 : i64} : (tensor<2x5x3xf32>, tensor<48xf32>, tensor<48xf32>, tensor<16xf32>) -> tensor<2x5x4xf32>
  func.return
}

// -----

// LSTM takes one merged bias (b_ih + b_hh), not both.
// CHECK-LABEL: sym_name = "lstm_bias_count"
// CHECK: Operation does not verify: 'rlx.lstm' operand 'bias' has 32 elements, expected 16
func.func @lstm_bias_count(%a0: tensor<2x5x3xf32>, %a1: tensor<48xf32>, %a2: tensor<64xf32>, %a3: tensor<32xf32>) {
  %r0 = rlx.lstm %a0, %a1, %a2, %a3 {hidden_size = 4 : i64} : (tensor<2x5x3xf32>, tensor<48xf32>, tensor<64xf32>, tensor<32xf32>) -> tensor<2x5x4xf32>
  func.return
}

// -----

// Bidirectional doubles every weight count.
// CHECK-LABEL: sym_name = "lstm_bidirectional_counts"
// CHECK: Operation does not verify: 'rlx.lstm' operand 'w_ih' has 48 elements, expected 96
func.func @lstm_bidirectional_counts(%a0: tensor<2x5x3xf32>, %a1: tensor<48xf32>, %a2: tensor<64xf32>, %a3: tensor<16xf32>) {
  %r0 = rlx.lstm %a0, %a1, %a2, %a3 {hidden_size = 4 : i64, bidirectional = true} : (tensor<2x5x3xf32>, tensor<48xf32>, tensor<64xf32>, tensor<16xf32>) -> tensor<2x5x8xf32>
  func.return
}

// -----

// y is [B, S, D*H].
// CHECK-LABEL: sym_name = "lstm_y_shape"
// CHECK: Operation does not verify: 'rlx.lstm' result 'y' has shape [2, 5, 4], expected [2, 5, 8]
func.func @lstm_y_shape(%a0: tensor<2x5x3xf32>, %a1: tensor<96xf32>, %a2: tensor<128xf32>, %a3: tensor<32xf32>) {
  %r0 = rlx.lstm %a0, %a1, %a2, %a3 {hidden_size = 4 : i64, bidirectional = true} : (tensor<2x5x3xf32>, tensor<96xf32>, tensor<128xf32>, tensor<32xf32>) -> tensor<2x5x4xf32>
  func.return
}

// -----

// States are [L*D, B, H].
// CHECK-LABEL: sym_name = "lstm_state_shape"
// CHECK: Operation does not verify: 'rlx.lstm' state operand 'h0' has shape [2, 2, 4], expected [1, 2, 4]
func.func @lstm_state_shape(%a0: tensor<2x5x3xf32>, %a1: tensor<48xf32>, %a2: tensor<64xf32>, %a3: tensor<16xf32>, %a4: tensor<2x2x4xf32>, %a5: tensor<2x2x4xf32>) {
  %r0 = rlx.lstm %a0, %a1, %a2, %a3, %a4, %a5 {hidden_size = 4 : i64} : (tensor<2x5x3xf32>, tensor<48xf32>, tensor<64xf32>, tensor<16xf32>, tensor<2x2x4xf32>, tensor<2x2x4xf32>) -> tensor<2x5x4xf32>
  func.return
}

// -----

// 
// CHECK-LABEL: sym_name = "lstm_state_result_shape"
// CHECK: Operation does not verify: 'rlx.lstm' state result 'hn' has shape [1, 4, 2], expected [1, 2, 4]
func.func @lstm_state_result_shape(%a0: tensor<2x5x3xf32>, %a1: tensor<48xf32>, %a2: tensor<64xf32>, %a3: tensor<16xf32>) {
  %r0, %r1, %r2 = rlx.lstm %a0, %a1, %a2, %a3 {hidden_size = 4 : i64} : (tensor<2x5x3xf32>, tensor<48xf32>, tensor<64xf32>, tensor<16xf32>) -> (tensor<2x5x4xf32>, tensor<1x4x2xf32>, tensor<1x4x2xf32>)
  func.return
}

// -----

// GRU keeps b_ih and b_hh apart (3 gates x H 4 = 12 each).
// CHECK-LABEL: sym_name = "gru_b_hh_count"
// CHECK: Operation does not verify: 'rlx.gru' operand 'b_hh' has 16 elements, expected 12
func.func @gru_b_hh_count(%a0: tensor<2x5x3xf32>, %a1: tensor<36xf32>, %a2: tensor<48xf32>, %a3: tensor<12xf32>, %a4: tensor<16xf32>) {
  %r0 = rlx.gru %a0, %a1, %a2, %a3, %a4 {hidden_size = 4 : i64} : (tensor<2x5x3xf32>, tensor<36xf32>, tensor<48xf32>, tensor<12xf32>, tensor<16xf32>) -> tensor<2x5x4xf32>
  func.return
}

// -----

// GRU has one state tensor.
// CHECK-LABEL: sym_name = "gru_two_states"
// CHECK: Operation does not verify: 'rlx.gru' takes all 1 state operands (h0) or none, got 2
func.func @gru_two_states(%a0: tensor<2x5x3xf32>, %a1: tensor<36xf32>, %a2: tensor<48xf32>, %a3: tensor<12xf32>, %a4: tensor<12xf32>, %a5: tensor<1x2x4xf32>, %a6: tensor<1x2x4xf32>) {
  %r0 = rlx.gru %a0, %a1, %a2, %a3, %a4, %a5, %a6 {hidden_size = 4 : i64} : (tensor<2x5x3xf32>, tensor<36xf32>, tensor<48xf32>, tensor<12xf32>, tensor<12xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> tensor<2x5x4xf32>
  func.return
}

// -----

// nonlinearity is tanh or relu.
// CHECK-LABEL: sym_name = "rnn_nonlinearity"
// CHECK: Operation does not verify: 'rlx.rnn' nonlinearity must be one of tanh, relu, got 'gelu'
func.func @rnn_nonlinearity(%a0: tensor<2x5x3xf32>, %a1: tensor<12xf32>, %a2: tensor<16xf32>, %a3: tensor<4xf32>) {
  %r0 = rlx.rnn %a0, %a1, %a2, %a3 {hidden_size = 4 : i64, nonlinearity = "gelu"} : (tensor<2x5x3xf32>, tensor<12xf32>, tensor<16xf32>, tensor<4xf32>) -> tensor<2x5x4xf32>
  func.return
}

// -----

// hidden_size has no default.
// CHECK-LABEL: sym_name = "rnn_missing_hidden_size"
// CHECK: Operation does not verify: property 'hidden_size' expected in operation 'rlx.rnn'
func.func @rnn_missing_hidden_size(%a0: tensor<2x5x3xf32>, %a1: tensor<12xf32>, %a2: tensor<16xf32>, %a3: tensor<4xf32>) {
  %r0 = rlx.rnn %a0, %a1, %a2, %a3 {} : (tensor<2x5x3xf32>, tensor<12xf32>, tensor<16xf32>, tensor<4xf32>) -> tensor<2x5x4xf32>
  func.return
}

// -----

// The scans take f16, bf16, f32 and f64.
// CHECK-LABEL: sym_name = "mamba2_integer"
// CHECK: Operation does not verify: 'rlx.mamba2' element type i32 is not one of f16, bf16, f32, f64
func.func @mamba2_integer(%a0: tensor<1x4x2x3xi32>, %a1: tensor<1x4x2xi32>, %a2: tensor<2xi32>, %a3: tensor<1x4x2x5xi32>, %a4: tensor<1x4x2x5xi32>) {
  %r0 = rlx.mamba2 %a0, %a1, %a2, %a3, %a4 {head_dim = 3 : i64, state_size = 5 : i64} : (tensor<1x4x2x3xi32>, tensor<1x4x2xi32>, tensor<2xi32>, tensor<1x4x2x5xi32>, tensor<1x4x2x5xi32>) -> tensor<1x4x2x3xi32>
  func.return
}

// -----

// x is [B, S, H, P].
// CHECK-LABEL: sym_name = "mamba2_x_rank"
// CHECK: Operation does not verify: 'rlx.mamba2' operand 'x' must have rank 4, got [4, 2, 3]
func.func @mamba2_x_rank(%a0: tensor<4x2x3xf32>, %a1: tensor<1x4x2xf32>, %a2: tensor<2xf32>, %a3: tensor<1x4x2x5xf32>, %a4: tensor<1x4x2x5xf32>) {
  %r0 = rlx.mamba2 %a0, %a1, %a2, %a3, %a4 {head_dim = 3 : i64, state_size = 5 : i64} : (tensor<4x2x3xf32>, tensor<1x4x2xf32>, tensor<2xf32>, tensor<1x4x2x5xf32>, tensor<1x4x2x5xf32>) -> tensor<4x2x3xf32>
  func.return
}

// -----

// Properties agree with the operand shapes.
// CHECK-LABEL: sym_name = "mamba2_head_dim"
// CHECK: Operation does not verify: 'rlx.mamba2' head_dim 4 disagrees with the last dimension of x 3
func.func @mamba2_head_dim(%a0: tensor<1x4x2x3xf32>, %a1: tensor<1x4x2xf32>, %a2: tensor<2xf32>, %a3: tensor<1x4x2x5xf32>, %a4: tensor<1x4x2x5xf32>) {
  %r0 = rlx.mamba2 %a0, %a1, %a2, %a3, %a4 {head_dim = 4 : i64, state_size = 5 : i64} : (tensor<1x4x2x3xf32>, tensor<1x4x2xf32>, tensor<2xf32>, tensor<1x4x2x5xf32>, tensor<1x4x2x5xf32>) -> tensor<1x4x2x3xf32>
  func.return
}

// -----

// 
// CHECK-LABEL: sym_name = "mamba2_state_size"
// CHECK: Operation does not verify: 'rlx.mamba2' state_size 6 disagrees with the last dimension of b 5
func.func @mamba2_state_size(%a0: tensor<1x4x2x3xf32>, %a1: tensor<1x4x2xf32>, %a2: tensor<2xf32>, %a3: tensor<1x4x2x5xf32>, %a4: tensor<1x4x2x5xf32>) {
  %r0 = rlx.mamba2 %a0, %a1, %a2, %a3, %a4 {head_dim = 3 : i64, state_size = 6 : i64} : (tensor<1x4x2x3xf32>, tensor<1x4x2xf32>, tensor<2xf32>, tensor<1x4x2x5xf32>, tensor<1x4x2x5xf32>) -> tensor<1x4x2x3xf32>
  func.return
}

// -----

// dt is [B, S, H].
// CHECK-LABEL: sym_name = "mamba2_dt_shape"
// CHECK: Operation does not verify: 'rlx.mamba2' operand 'dt' has shape [1, 4], expected [1, 4, 2]
func.func @mamba2_dt_shape(%a0: tensor<1x4x2x3xf32>, %a1: tensor<1x4xf32>, %a2: tensor<2xf32>, %a3: tensor<1x4x2x5xf32>, %a4: tensor<1x4x2x5xf32>) {
  %r0 = rlx.mamba2 %a0, %a1, %a2, %a3, %a4 {head_dim = 3 : i64, state_size = 5 : i64} : (tensor<1x4x2x3xf32>, tensor<1x4xf32>, tensor<2xf32>, tensor<1x4x2x5xf32>, tensor<1x4x2x5xf32>) -> tensor<1x4x2x3xf32>
  func.return
}

// -----

// a is one decay rate per head.
// CHECK-LABEL: sym_name = "mamba2_a_shape"
// CHECK: Operation does not verify: 'rlx.mamba2' operand 'a' has shape [3], expected [2]
func.func @mamba2_a_shape(%a0: tensor<1x4x2x3xf32>, %a1: tensor<1x4x2xf32>, %a2: tensor<3xf32>, %a3: tensor<1x4x2x5xf32>, %a4: tensor<1x4x2x5xf32>) {
  %r0 = rlx.mamba2 %a0, %a1, %a2, %a3, %a4 {head_dim = 3 : i64, state_size = 5 : i64} : (tensor<1x4x2x3xf32>, tensor<1x4x2xf32>, tensor<3xf32>, tensor<1x4x2x5xf32>, tensor<1x4x2x5xf32>) -> tensor<1x4x2x3xf32>
  func.return
}

// -----

// b and c are [B, S, H, N].
// CHECK-LABEL: sym_name = "mamba2_c_shape"
// CHECK: Operation does not verify: 'rlx.mamba2' operand 'c' has shape [1, 4, 1, 5], expected [1, 4, 2, 5]
func.func @mamba2_c_shape(%a0: tensor<1x4x2x3xf32>, %a1: tensor<1x4x2xf32>, %a2: tensor<2xf32>, %a3: tensor<1x4x2x5xf32>, %a4: tensor<1x4x1x5xf32>) {
  %r0 = rlx.mamba2 %a0, %a1, %a2, %a3, %a4 {head_dim = 3 : i64, state_size = 5 : i64} : (tensor<1x4x2x3xf32>, tensor<1x4x2xf32>, tensor<2xf32>, tensor<1x4x2x5xf32>, tensor<1x4x1x5xf32>) -> tensor<1x4x2x3xf32>
  func.return
}

// -----

// y has x's shape.
// CHECK-LABEL: sym_name = "mamba2_y_shape"
// CHECK: Operation does not verify: 'rlx.mamba2' result 'y' has shape [1, 4, 2, 5], expected [1, 4, 2, 3]
func.func @mamba2_y_shape(%a0: tensor<1x4x2x3xf32>, %a1: tensor<1x4x2xf32>, %a2: tensor<2xf32>, %a3: tensor<1x4x2x5xf32>, %a4: tensor<1x4x2x5xf32>) {
  %r0 = rlx.mamba2 %a0, %a1, %a2, %a3, %a4 {head_dim = 3 : i64, state_size = 5 : i64} : (tensor<1x4x2x3xf32>, tensor<1x4x2xf32>, tensor<2xf32>, tensor<1x4x2x5xf32>, tensor<1x4x2x5xf32>) -> tensor<1x4x2x5xf32>
  func.return
}

// -----

// The state is [B, H, P, N].
// CHECK-LABEL: sym_name = "mamba2_state_shape"
// CHECK: Operation does not verify: 'rlx.mamba2' state operand 'state' has shape [1, 2, 5, 3], expected [1, 2, 3, 5]
func.func @mamba2_state_shape(%a0: tensor<1x4x2x3xf32>, %a1: tensor<1x4x2xf32>, %a2: tensor<2xf32>, %a3: tensor<1x4x2x5xf32>, %a4: tensor<1x4x2x5xf32>, %a5: tensor<1x2x5x3xf32>) {
  %r0 = rlx.mamba2 %a0, %a1, %a2, %a3, %a4, %a5 {head_dim = 3 : i64, state_size = 5 : i64} : (tensor<1x4x2x3xf32>, tensor<1x4x2xf32>, tensor<2xf32>, tensor<1x4x2x5xf32>, tensor<1x4x2x5xf32>, tensor<1x2x5x3xf32>) -> tensor<1x4x2x3xf32>
  func.return
}

// -----

// One state tensor or none.
// CHECK-LABEL: sym_name = "mamba2_two_states"
// CHECK: Operation does not verify: 'rlx.mamba2' takes all 1 state results (state) or none, got 2
func.func @mamba2_two_states(%a0: tensor<1x4x2x3xf32>, %a1: tensor<1x4x2xf32>, %a2: tensor<2xf32>, %a3: tensor<1x4x2x5xf32>, %a4: tensor<1x4x2x5xf32>) {
  %r0, %r1, %r2 = rlx.mamba2 %a0, %a1, %a2, %a3, %a4 {head_dim = 3 : i64, state_size = 5 : i64} : (tensor<1x4x2x3xf32>, tensor<1x4x2xf32>, tensor<2xf32>, tensor<1x4x2x5xf32>, tensor<1x4x2x5xf32>) -> (tensor<1x4x2x3xf32>, tensor<1x2x3x5xf32>, tensor<1x2x3x5xf32>)
  func.return
}

// -----

// x and delta are [B, S, D].
// CHECK-LABEL: sym_name = "scan_x_rank"
// CHECK: Operation does not verify: 'rlx.selective_scan' operand 'x' must have rank 3, got [4, 3]
func.func @scan_x_rank(%a0: tensor<4x3xf32>, %a1: tensor<4x3xf32>, %a2: tensor<3x5xf32>, %a3: tensor<1x4x5xf32>, %a4: tensor<1x4x5xf32>) {
  %r0 = rlx.selective_scan %a0, %a1, %a2, %a3, %a4 {state_size = 5 : i64} : (tensor<4x3xf32>, tensor<4x3xf32>, tensor<3x5xf32>, tensor<1x4x5xf32>, tensor<1x4x5xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

// a is [D, N].
// CHECK-LABEL: sym_name = "scan_a_rank"
// CHECK: Operation does not verify: 'rlx.selective_scan' operand 'a' must have rank 2, got [15]
func.func @scan_a_rank(%a0: tensor<1x4x3xf32>, %a1: tensor<1x4x3xf32>, %a2: tensor<15xf32>, %a3: tensor<1x4x5xf32>, %a4: tensor<1x4x5xf32>) {
  %r0 = rlx.selective_scan %a0, %a1, %a2, %a3, %a4 {state_size = 5 : i64} : (tensor<1x4x3xf32>, tensor<1x4x3xf32>, tensor<15xf32>, tensor<1x4x5xf32>, tensor<1x4x5xf32>) -> tensor<1x4x3xf32>
  func.return
}

// -----

// 
// CHECK-LABEL: sym_name = "scan_state_size"
// CHECK: Operation does not verify: 'rlx.selective_scan' state_size 4 disagrees with the last dimension of a 5
func.func @scan_state_size(%a0: tensor<1x4x3xf32>, %a1: tensor<1x4x3xf32>, %a2: tensor<3x5xf32>, %a3: tensor<1x4x5xf32>, %a4: tensor<1x4x5xf32>) {
  %r0 = rlx.selective_scan %a0, %a1, %a2, %a3, %a4 {state_size = 4 : i64} : (tensor<1x4x3xf32>, tensor<1x4x3xf32>, tensor<3x5xf32>, tensor<1x4x5xf32>, tensor<1x4x5xf32>) -> tensor<1x4x3xf32>
  func.return
}

// -----

// 
// CHECK-LABEL: sym_name = "scan_delta_shape"
// CHECK: Operation does not verify: 'rlx.selective_scan' operand 'delta' has shape [1, 4, 2], expected [1, 4, 3]
func.func @scan_delta_shape(%a0: tensor<1x4x3xf32>, %a1: tensor<1x4x2xf32>, %a2: tensor<3x5xf32>, %a3: tensor<1x4x5xf32>, %a4: tensor<1x4x5xf32>) {
  %r0 = rlx.selective_scan %a0, %a1, %a2, %a3, %a4 {state_size = 5 : i64} : (tensor<1x4x3xf32>, tensor<1x4x2xf32>, tensor<3x5xf32>, tensor<1x4x5xf32>, tensor<1x4x5xf32>) -> tensor<1x4x3xf32>
  func.return
}

// -----

// a has one row per channel.
// CHECK-LABEL: sym_name = "scan_a_channels"
// CHECK: Operation does not verify: 'rlx.selective_scan' operand 'a' has shape [2, 5], expected [3, 5]
func.func @scan_a_channels(%a0: tensor<1x4x3xf32>, %a1: tensor<1x4x3xf32>, %a2: tensor<2x5xf32>, %a3: tensor<1x4x5xf32>, %a4: tensor<1x4x5xf32>) {
  %r0 = rlx.selective_scan %a0, %a1, %a2, %a3, %a4 {state_size = 5 : i64} : (tensor<1x4x3xf32>, tensor<1x4x3xf32>, tensor<2x5xf32>, tensor<1x4x5xf32>, tensor<1x4x5xf32>) -> tensor<1x4x3xf32>
  func.return
}

// -----

// b and c are [B, S, N], shared by the channels.
// CHECK-LABEL: sym_name = "scan_b_shape"
// CHECK: Operation does not verify: 'rlx.selective_scan' operand 'b' has shape [1, 4, 3, 5], expected [1, 4, 5]
func.func @scan_b_shape(%a0: tensor<1x4x3xf32>, %a1: tensor<1x4x3xf32>, %a2: tensor<3x5xf32>, %a3: tensor<1x4x3x5xf32>, %a4: tensor<1x4x5xf32>) {
  %r0 = rlx.selective_scan %a0, %a1, %a2, %a3, %a4 {state_size = 5 : i64} : (tensor<1x4x3xf32>, tensor<1x4x3xf32>, tensor<3x5xf32>, tensor<1x4x3x5xf32>, tensor<1x4x5xf32>) -> tensor<1x4x3xf32>
  func.return
}

// -----

// The state is [B, D, N].
// CHECK-LABEL: sym_name = "scan_state_result_shape"
// CHECK: Operation does not verify: 'rlx.selective_scan' state result 'state' has shape [1, 5, 3], expected [1, 3, 5]
func.func @scan_state_result_shape(%a0: tensor<1x4x3xf32>, %a1: tensor<1x4x3xf32>, %a2: tensor<3x5xf32>, %a3: tensor<1x4x5xf32>, %a4: tensor<1x4x5xf32>) {
  %r0, %r1 = rlx.selective_scan %a0, %a1, %a2, %a3, %a4 {state_size = 5 : i64} : (tensor<1x4x3xf32>, tensor<1x4x3xf32>, tensor<3x5xf32>, tensor<1x4x5xf32>, tensor<1x4x5xf32>) -> (tensor<1x4x3xf32>, tensor<1x5x3xf32>)
  func.return
}

// -----

// q, k and v are [B, S, H, N].
// CHECK-LABEL: sym_name = "gdn_q_rank"
// CHECK: Operation does not verify: 'rlx.gated_delta_net' operand 'q' must have rank 4, got [4, 2, 3]
func.func @gdn_q_rank(%a0: tensor<4x2x3xf32>, %a1: tensor<4x2x3xf32>, %a2: tensor<4x2x3xf32>, %a3: tensor<4x2xf32>, %a4: tensor<4x2xf32>) {
  %r0 = rlx.gated_delta_net %a0, %a1, %a2, %a3, %a4 {state_size = 3 : i64} : (tensor<4x2x3xf32>, tensor<4x2x3xf32>, tensor<4x2x3xf32>, tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2x3xf32>
  func.return
}

// -----

// 
// CHECK-LABEL: sym_name = "gdn_state_size"
// CHECK: Operation does not verify: 'rlx.gated_delta_net' state_size 4 disagrees with the last dimension of q 3
func.func @gdn_state_size(%a0: tensor<1x4x2x3xf32>, %a1: tensor<1x4x2x3xf32>, %a2: tensor<1x4x2x3xf32>, %a3: tensor<1x4x2xf32>, %a4: tensor<1x4x2xf32>) {
  %r0 = rlx.gated_delta_net %a0, %a1, %a2, %a3, %a4 {state_size = 4 : i64} : (tensor<1x4x2x3xf32>, tensor<1x4x2x3xf32>, tensor<1x4x2x3xf32>, tensor<1x4x2xf32>, tensor<1x4x2xf32>) -> tensor<1x4x2x3xf32>
  func.return
}

// -----

// 
// CHECK-LABEL: sym_name = "gdn_v_shape"
// CHECK: Operation does not verify: 'rlx.gated_delta_net' operand 'v' has shape [1, 4, 2, 2], expected [1, 4, 2, 3]
func.func @gdn_v_shape(%a0: tensor<1x4x2x3xf32>, %a1: tensor<1x4x2x3xf32>, %a2: tensor<1x4x2x2xf32>, %a3: tensor<1x4x2xf32>, %a4: tensor<1x4x2xf32>) {
  %r0 = rlx.gated_delta_net %a0, %a1, %a2, %a3, %a4 {state_size = 3 : i64} : (tensor<1x4x2x3xf32>, tensor<1x4x2x3xf32>, tensor<1x4x2x2xf32>, tensor<1x4x2xf32>, tensor<1x4x2xf32>) -> tensor<1x4x2x3xf32>
  func.return
}

// -----

// Without gate_per_channel the gate is one value per head and step.
// CHECK-LABEL: sym_name = "gdn_gate_per_head"
// CHECK: Operation does not verify: 'rlx.gated_delta_net' operand 'g' has shape [1, 4, 2, 3], expected [1, 4, 2]
func.func @gdn_gate_per_head(%a0: tensor<1x4x2x3xf32>, %a1: tensor<1x4x2x3xf32>, %a2: tensor<1x4x2x3xf32>, %a3: tensor<1x4x2x3xf32>, %a4: tensor<1x4x2xf32>) {
  %r0 = rlx.gated_delta_net %a0, %a1, %a2, %a3, %a4 {state_size = 3 : i64} : (tensor<1x4x2x3xf32>, tensor<1x4x2x3xf32>, tensor<1x4x2x3xf32>, tensor<1x4x2x3xf32>, tensor<1x4x2xf32>) -> tensor<1x4x2x3xf32>
  func.return
}

// -----

// With gate_per_channel it is [B, S, H, N].
// CHECK-LABEL: sym_name = "gdn_gate_per_channel"
// CHECK: Operation does not verify: 'rlx.gated_delta_net' operand 'g' has shape [1, 4, 2], expected [1, 4, 2, 3]
func.func @gdn_gate_per_channel(%a0: tensor<1x4x2x3xf32>, %a1: tensor<1x4x2x3xf32>, %a2: tensor<1x4x2x3xf32>, %a3: tensor<1x4x2xf32>, %a4: tensor<1x4x2xf32>) {
  %r0 = rlx.gated_delta_net %a0, %a1, %a2, %a3, %a4 {state_size = 3 : i64, gate_per_channel = true} : (tensor<1x4x2x3xf32>, tensor<1x4x2x3xf32>, tensor<1x4x2x3xf32>, tensor<1x4x2xf32>, tensor<1x4x2xf32>) -> tensor<1x4x2x3xf32>
  func.return
}

// -----

// 
// CHECK-LABEL: sym_name = "gdn_beta_shape"
// CHECK: Operation does not verify: 'rlx.gated_delta_net' operand 'beta' has shape [1, 4, 2, 3], expected [1, 4, 2]
func.func @gdn_beta_shape(%a0: tensor<1x4x2x3xf32>, %a1: tensor<1x4x2x3xf32>, %a2: tensor<1x4x2x3xf32>, %a3: tensor<1x4x2xf32>, %a4: tensor<1x4x2x3xf32>) {
  %r0 = rlx.gated_delta_net %a0, %a1, %a2, %a3, %a4 {state_size = 3 : i64} : (tensor<1x4x2x3xf32>, tensor<1x4x2x3xf32>, tensor<1x4x2x3xf32>, tensor<1x4x2xf32>, tensor<1x4x2x3xf32>) -> tensor<1x4x2x3xf32>
  func.return
}

// -----

// 
// CHECK-LABEL: sym_name = "gdn_out_shape"
// CHECK: Operation does not verify: 'rlx.gated_delta_net' result 'out' has shape [1, 4, 2, 2], expected [1, 4, 2, 3]
func.func @gdn_out_shape(%a0: tensor<1x4x2x3xf32>, %a1: tensor<1x4x2x3xf32>, %a2: tensor<1x4x2x3xf32>, %a3: tensor<1x4x2xf32>, %a4: tensor<1x4x2xf32>) {
  %r0 = rlx.gated_delta_net %a0, %a1, %a2, %a3, %a4 {state_size = 3 : i64} : (tensor<1x4x2x3xf32>, tensor<1x4x2x3xf32>, tensor<1x4x2x3xf32>, tensor<1x4x2xf32>, tensor<1x4x2xf32>) -> tensor<1x4x2x2xf32>
  func.return
}

// -----

// The state is [B, H, N, N].
// CHECK-LABEL: sym_name = "gdn_state_shape"
// CHECK: Operation does not verify: 'rlx.gated_delta_net' state operand 'state' has shape [1, 2, 3], expected [1, 2, 3, 3]
func.func @gdn_state_shape(%a0: tensor<1x4x2x3xf32>, %a1: tensor<1x4x2x3xf32>, %a2: tensor<1x4x2x3xf32>, %a3: tensor<1x4x2xf32>, %a4: tensor<1x4x2xf32>, %a5: tensor<1x2x3xf32>) {
  %r0 = rlx.gated_delta_net %a0, %a1, %a2, %a3, %a4, %a5 {state_size = 3 : i64} : (tensor<1x4x2x3xf32>, tensor<1x4x2x3xf32>, tensor<1x4x2x3xf32>, tensor<1x4x2xf32>, tensor<1x4x2xf32>, tensor<1x2x3xf32>) -> tensor<1x4x2x3xf32>
  func.return
}
