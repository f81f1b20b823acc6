// RUN: rlx-opt %s --split-input-file | filecheck %s
// RUN: rlx-opt %s --split-input-file | rlx-opt --split-input-file | filecheck %s
// RUN: rlx-opt %s --split-input-file --print-op-generic | rlx-opt --split-input-file | filecheck %s

// The recurrent ops print back in their custom form whether written custom or
// generic (third RUN line). Properties sit in the attribute dictionary; one at
// its default (num_layers = 1, bidirectional = false, nonlinearity = "tanh",
// gate_per_channel = false) is left out. The state groups are variadic: no
// operandSegmentSizes, and the operand and result groups are independent.

// The issue's example, in the generic form: 2 layers, bidirectional, with
// h0/c0 in and hn/cn out.
// CHECK-LABEL: func.func @lstm_generic(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<2x5x3xf32>, [[WI:%[a-zA-Z0-9_]+]]: tensor<1216xf32>, [[WH:%[a-zA-Z0-9_]+]]: tensor<1024xf32>, [[B:%[a-zA-Z0-9_]+]]: tensor<128xf32>, [[H:%[a-zA-Z0-9_]+]]: tensor<4x2x8xf32>, [[C:%[a-zA-Z0-9_]+]]: tensor<4x2x8xf32>
// CHECK-NEXT: {{%[a-zA-Z0-9_]+}}, {{%[a-zA-Z0-9_]+}}, {{%[a-zA-Z0-9_]+}} = rlx.lstm [[X]], [[WI]], [[WH]], [[B]], [[H]], [[C]] {hidden_size = 8 : i64, num_layers = 2 : i64, bidirectional = true} : (tensor<2x5x3xf32>, tensor<1216xf32>, tensor<1024xf32>, tensor<128xf32>, tensor<4x2x8xf32>, tensor<4x2x8xf32>) -> (tensor<2x5x16xf32>, tensor<4x2x8xf32>, tensor<4x2x8xf32>)
func.func @lstm_generic(%x: tensor<2x5x3xf32>, %wi: tensor<1216xf32>, %wh: tensor<1024xf32>, %b: tensor<128xf32>, %h0: tensor<4x2x8xf32>, %c0: tensor<4x2x8xf32>) -> (tensor<2x5x16xf32>, tensor<4x2x8xf32>, tensor<4x2x8xf32>) {
  %y, %hn, %cn = "rlx.lstm"(%x, %wi, %wh, %b, %h0, %c0) <{hidden_size = 8 : i64, num_layers = 2 : i64, bidirectional = true}> : (tensor<2x5x3xf32>, tensor<1216xf32>, tensor<1024xf32>, tensor<128xf32>, tensor<4x2x8xf32>, tensor<4x2x8xf32>) -> (tensor<2x5x16xf32>, tensor<4x2x8xf32>, tensor<4x2x8xf32>)
  func.return %y, %hn, %cn : tensor<2x5x16xf32>, tensor<4x2x8xf32>, tensor<4x2x8xf32>
}

// -----

// The groups are independent: state out without state in (the first call of
// a stream), state in without state out, and neither. Weights may have any
// shape with the right element count.
// CHECK-LABEL: func.func @groups(
// CHECK: = rlx.gru %{{.*}} {hidden_size = 4 : i64} : (tensor<1x6x2xf64>, tensor<12x2xf64>, tensor<12x4xf64>, tensor<12xf64>, tensor<12xf64>) -> (tensor<1x6x4xf64>, tensor<1x1x4xf64>)
// CHECK: = rlx.rnn %{{.*}} {hidden_size = 4 : i64, nonlinearity = "relu"} : (tensor<1x6x2xf64>, tensor<4x2xf64>, tensor<4x4xf64>, tensor<4xf64>, tensor<1x1x4xf64>) -> tensor<1x6x4xf64>
// CHECK: = rlx.rnn %{{.*}} {hidden_size = 4 : i64} : (tensor<1x6x2xf64>, tensor<4x2xf64>, tensor<4x4xf64>, tensor<4xf64>) -> tensor<1x6x4xf64>
func.func @groups(%x: tensor<1x6x2xf64>, %gi: tensor<12x2xf64>, %gh: tensor<12x4xf64>, %gb: tensor<12xf64>, %ri: tensor<4x2xf64>, %rh: tensor<4x4xf64>, %rb: tensor<4xf64>) -> (tensor<1x6x4xf64>, tensor<1x6x4xf64>) {
  %y, %hn = rlx.gru %x, %gi, %gh, %gb, %gb {hidden_size = 4 : i64} : (tensor<1x6x2xf64>, tensor<12x2xf64>, tensor<12x4xf64>, tensor<12xf64>, tensor<12xf64>) -> (tensor<1x6x4xf64>, tensor<1x1x4xf64>)
  %r = "rlx.rnn"(%x, %ri, %rh, %rb, %hn) <{hidden_size = 4 : i64, nonlinearity = "relu"}> : (tensor<1x6x2xf64>, tensor<4x2xf64>, tensor<4x4xf64>, tensor<4xf64>, tensor<1x1x4xf64>) -> tensor<1x6x4xf64>
  %s = rlx.rnn %x, %ri, %rh, %rb {hidden_size = 4 : i64, nonlinearity = "tanh"} : (tensor<1x6x2xf64>, tensor<4x2xf64>, tensor<4x4xf64>, tensor<4xf64>) -> tensor<1x6x4xf64>
  func.return %r, %s : tensor<1x6x4xf64>, tensor<1x6x4xf64>
}

// -----

// The scans, f16 and bf16 among their types.
// CHECK-LABEL: func.func @scans(
// CHECK: = rlx.mamba2 %{{.*}} {head_dim = 3 : i64, state_size = 5 : i64} : (tensor<1x4x2x3xf16>, tensor<1x4x2xf16>, tensor<2xf16>, tensor<1x4x2x5xf16>, tensor<1x4x2x5xf16>, tensor<1x2x3x5xf16>) -> (tensor<1x4x2x3xf16>, tensor<1x2x3x5xf16>)
// CHECK: = rlx.selective_scan %{{.*}} {state_size = 5 : i64} : (tensor<1x4x3xbf16>, tensor<1x4x3xbf16>, tensor<3x5xbf16>, tensor<1x4x5xbf16>, tensor<1x4x5xbf16>) -> tensor<1x4x3xbf16>
// CHECK: = rlx.gated_delta_net %{{.*}} {state_size = 3 : i64, gate_per_channel = true} : (tensor<1x4x2x3xf32>, tensor<1x4x2x3xf32>, tensor<1x4x2x3xf32>, tensor<1x4x2x3xf32>, tensor<1x4x2xf32>) -> (tensor<1x4x2x3xf32>, tensor<1x2x3x3xf32>)
func.func @scans(%x: tensor<1x4x2x3xf16>, %dt: tensor<1x4x2xf16>, %a: tensor<2xf16>, %b: tensor<1x4x2x5xf16>, %s0: tensor<1x2x3x5xf16>, %u: tensor<1x4x3xbf16>, %sa: tensor<3x5xbf16>, %sb: tensor<1x4x5xbf16>, %q: tensor<1x4x2x3xf32>, %beta: tensor<1x4x2xf32>) -> (tensor<1x2x3x5xf16>, tensor<1x4x3xbf16>, tensor<1x2x3x3xf32>) {
  %y, %s1 = "rlx.mamba2"(%x, %dt, %a, %b, %b, %s0) <{head_dim = 3 : i64, state_size = 5 : i64}> : (tensor<1x4x2x3xf16>, tensor<1x4x2xf16>, tensor<2xf16>, tensor<1x4x2x5xf16>, tensor<1x4x2x5xf16>, tensor<1x2x3x5xf16>) -> (tensor<1x4x2x3xf16>, tensor<1x2x3x5xf16>)
  %z = rlx.selective_scan %u, %u, %sa, %sb, %sb {state_size = 5 : i64} : (tensor<1x4x3xbf16>, tensor<1x4x3xbf16>, tensor<3x5xbf16>, tensor<1x4x5xbf16>, tensor<1x4x5xbf16>) -> tensor<1x4x3xbf16>
  %o, %st = rlx.gated_delta_net %q, %q, %q, %q, %beta {state_size = 3 : i64, gate_per_channel = true} : (tensor<1x4x2x3xf32>, tensor<1x4x2x3xf32>, tensor<1x4x2x3xf32>, tensor<1x4x2x3xf32>, tensor<1x4x2xf32>) -> (tensor<1x4x2x3xf32>, tensor<1x2x3x3xf32>)
  func.return %s1, %z, %st : tensor<1x2x3x5xf16>, tensor<1x4x3xbf16>, tensor<1x2x3x3xf32>
}
