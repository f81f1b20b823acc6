// RUN: rlx-opt %s -p plan-memory | filecheck %s --check-prefix=PLAN
// RUN: rlx-opt %s -p 'plan-memory,lower-to-llvm{threads=1}' | filecheck %s

// An RNN-family op whose W_ih and W_hh are constants packs them on the first
// call only: its packed scratch (#2) holds every layer's panels and a flag
// element after them (here 4·5·(5 + 4) = 180 floats, the flag at 180), and the
// plan keeps it for the whole call, so no other buffer
// reuses its bytes between calls. The same op on input weights packs on every
// call into an ordinary scratch, here over the first op's projections.

// PLAN-LABEL: func.func @packed
// PLAN: %cwi = rlx.constant {rlx.constant_slot = 0 : i64}
// PLAN: %y = rlx.lstm {{.*}} {rlx.offsets = array<i64: -1>, rlx.scratch_offsets = array<i64: [[PROJ:[0-9]+]], {{[0-9]+}}, 0, 0, 0,
// PLAN: %z = rlx.lstm {{.*}} {rlx.offsets = array<i64: -1>, rlx.scratch_offsets = array<i64: {{[0-9]+}}, {{[0-9]+}}, [[PROJ]], 0, 0,

// The prepare kernel packs only while the flag is 0; a kernel after the last
// layer's steps sets it. The op on input weights has neither.

// CHECK-LABEL: llvm.func internal @packed_k3_l0_prepare(
// CHECK-SAME: {{%[0-9]+}}: !llvm.ptr {llvm.noalias}, {{%[0-9]+}}: !llvm.ptr {llvm.noalias}, {{%[0-9]+}}: !llvm.ptr {llvm.noalias}, [[PACKED:%[0-9]+]]: !llvm.ptr {llvm.noalias},
// CHECK: [[AT:%[0-9]+]] = llvm.mlir.constant(180) : i64
// CHECK-NEXT: [[SLOT:%[0-9]+]] = llvm.getelementptr inbounds [[PACKED]][[[AT]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: [[FLAG:%[0-9]+]] = llvm.load [[SLOT]] {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK-NEXT: [[ZERO:%[0-9]+]] = llvm.mlir.constant(0.000000e+00 : f32) : f32
// CHECK-NEXT: [[UNPACKED:%[0-9]+]] = llvm.fcmp "oeq" [[FLAG]], [[ZERO]] : f32
// CHECK-NEXT: llvm.cond_br [[UNPACKED]]
// CHECK-LABEL: llvm.func internal @packed_k3_packed(
// CHECK-SAME: [[SCRATCH:%[0-9]+]]: !llvm.ptr {llvm.noalias}
// CHECK-NEXT: [[ONE:%[0-9]+]] = llvm.mlir.constant(1.000000e+00 : f32) : f32
// CHECK-NEXT: [[AT2:%[0-9]+]] = llvm.mlir.constant(180) : i64
// CHECK-NEXT: [[SLOT2:%[0-9]+]] = llvm.getelementptr inbounds [[SCRATCH]][[[AT2]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: llvm.store [[ONE]], [[SLOT2]] {alignment = 4 : i64} : f32, !llvm.ptr
// CHECK-LABEL: llvm.func internal @packed_k4_l0_prepare(
// CHECK-NOT: llvm.fcmp "oeq"
// CHECK-LABEL: llvm.func internal @packed_k4_l0_steps(
// CHECK-NOT: @packed_k4_packed
// CHECK-LABEL: llvm.func @packed(
// CHECK: llvm.call @packed_k3_l0_prepare(
// CHECK: llvm.call @packed_k3_l0_steps(
// CHECK: llvm.call @packed_k3_packed(
// CHECK: llvm.call @packed_k4_l0_prepare(
// CHECK: llvm.call @packed_k4_l0_steps(
func.func @packed(%x: tensor<2x3x4xf32>, %wi: tensor<80xf32>, %wh: tensor<100xf32>) -> (tensor<2x3x5xf32>, tensor<2x3x5xf32>) {
  %cwi = rlx.constant dense<0.5> : tensor<80xf32>
  %cwh = rlx.constant dense<0.25> : tensor<100xf32>
  %b = rlx.constant dense<0.0> : tensor<20xf32>
  %y = rlx.lstm %x, %cwi, %cwh, %b {hidden_size = 5 : i64} : (tensor<2x3x4xf32>, tensor<80xf32>, tensor<100xf32>, tensor<20xf32>) -> tensor<2x3x5xf32>
  %z = rlx.lstm %x, %wi, %wh, %b {hidden_size = 5 : i64} : (tensor<2x3x4xf32>, tensor<80xf32>, tensor<100xf32>, tensor<20xf32>) -> tensor<2x3x5xf32>
  func.return %y, %z : tensor<2x3x5xf32>, tensor<2x3x5xf32>
}
