// RUN: rlx-opt %s --split-input-file -p 'plan-memory,lower-to-llvm{threads=2}' | filecheck %s

// Lowering of rlx.lstm / rlx.gru / rlx.rnn (lowering/rnn.py). Per layer, a
// prepare kernel packs W_ih and W_hh into column panels and runs the input
// projections of all B·S rows as register tiles (vector FMAs, no BLAS call);
// then the time loops: per step the product h·W_hhᵀ (register tiles) and the fused gate
// pass, which calls no function (polynomial sigmoid/tanh; only intrinsics
// such as fabs).

// One LSTM layer, B2 S3 I4 H8, f32, no state: the entry runs the two
// kernels in order; the steps kernel walks t = s forward (direction 0) or
// S-1-s (direction 1) and computes the product inside the time loop.

// CHECK-LABEL: llvm.func internal @lstm_k0_l0_prepare(
// CHECK: llvm.intr.fma({{.*}}) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// CHECK-LABEL: llvm.func internal @lstm_k0_l0_steps(
// CHECK: [[SEQ:%[0-9]+]] = llvm.mlir.constant(3) : i64
// CHECK-NEXT: llvm.br ^[[STEP:bb[0-9]+]](
// CHECK-NEXT: ^[[STEP]]([[TIME:%[0-9]+]]: i64):
// CHECK-NEXT: {{%[0-9]+}} = llvm.icmp "slt" [[TIME]], [[SEQ]] : i64
// CHECK: llvm.select {{%[0-9]+}}, [[TIME]], {{%[0-9]+}} : i1, i64
// CHECK: llvm.intr.fma({{.*}}) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// CHECK-NOT: llvm.call @
// CHECK: llvm.br ^[[STEP]](
// CHECK: llvm.return
// CHECK-LABEL: llvm.func @lstm(
// CHECK-NOT: scipy_cblas
// CHECK: llvm.call @lstm_k0_l0_prepare(
// CHECK: llvm.call @lstm_k0_l0_steps(
// CHECK-NEXT: llvm.return
func.func @lstm(%x: tensor<2x3x4xf32>, %wi: tensor<32x4xf32>, %wh: tensor<32x8xf32>, %b: tensor<32xf32>) -> tensor<2x3x8xf32> {
  %y = rlx.lstm %x, %wi, %wh, %b {hidden_size = 8 : i64} : (tensor<2x3x4xf32>, tensor<32x4xf32>, tensor<32x8xf32>, tensor<32xf32>) -> tensor<2x3x8xf32>
  func.return %y : tensor<2x3x8xf32>
}

// -----

// Two bidirectional GRU layers, f64, with h0 and hn: layer 1 runs after
// layer 0 (it reads its output) and the tiles are <8 x double>.

// CHECK-LABEL: llvm.func internal @gru_k0_l0_steps(
// CHECK: llvm.intr.fma({{.*}}) : (vector<8xf64>, vector<8xf64>, vector<8xf64>) -> vector<8xf64>
// CHECK-LABEL: llvm.func @gru(
// CHECK: llvm.call @gru_k0_l0_prepare(
// CHECK: llvm.call @gru_k0_l0_steps(
// CHECK: llvm.call @gru_k0_l1_prepare(
// CHECK: llvm.call @gru_k0_l1_steps(
func.func @gru(%x: tensor<2x3x4xf64>, %wi: tensor<288xf64>, %wh: tensor<192xf64>, %bi: tensor<48xf64>, %bh: tensor<48xf64>, %h0: tensor<4x2x4xf64>) -> (tensor<2x3x8xf64>, tensor<4x2x4xf64>) {
  %y, %hn = rlx.gru %x, %wi, %wh, %bi, %bh, %h0 {hidden_size = 4 : i64, num_layers = 2 : i64, bidirectional = true} : (tensor<2x3x4xf64>, tensor<288xf64>, tensor<192xf64>, tensor<48xf64>, tensor<48xf64>, tensor<4x2x4xf64>) -> (tensor<2x3x8xf64>, tensor<4x2x4xf64>)
  func.return %y, %hn : tensor<2x3x8xf64>, tensor<4x2x4xf64>
}

// -----

// A relu RNN large enough to split: its time loops run as units (batch
// halves, one per thread) through the thread pool's launcher.

// CHECK-LABEL: llvm.func @rnn(
// CHECK: llvm.call @rnn_k0_l0_prepare_parallel(
// CHECK: llvm.call @rnn_k0_l0_steps_parallel(
func.func @rnn(%x: tensor<8x128x64xf32>, %wi: tensor<128x64xf32>, %wh: tensor<128x128xf32>, %b: tensor<128xf32>) -> tensor<8x128x128xf32> {
  %y = rlx.rnn %x, %wi, %wh, %b {hidden_size = 128 : i64, nonlinearity = "relu"} : (tensor<8x128x64xf32>, tensor<128x64xf32>, tensor<128x128xf32>, tensor<128xf32>) -> tensor<8x128x128xf32>
  func.return %y : tensor<8x128x128xf32>
}
