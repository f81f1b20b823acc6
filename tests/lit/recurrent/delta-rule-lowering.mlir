// RUN: rlx-opt %s --split-input-file -p plan-memory | filecheck %s --check-prefix=PLAN
// RUN: rlx-opt %s --split-input-file -p 'plan-memory,lower-to-llvm{threads=2}' | filecheck %s

// Lowering of rlx.gated_delta_net (lowering/delta_rule.py), sequential form:
// one kernel over the B·H (batch, head) pairs, each keeping its state in
// cache for the whole sequence and sweeping it once per step in explicit
// vectors along the value dimension j.

// Prefill, f32, one gate per head, no state operand or result. The working
// state lives in the op's scratch buffer (B·H·N·N f32 = 2·32·32·4 bytes),
// the kernel's seventh pointer. Per step it prefetches the rows of a later
// step, then one sweep over the rows i carries o and the next Sᵀk for both
// column vectors (N = 32 = 2 × 16 lanes) in registers; per cell: the rank-1
// update S += k_i·u, o += S·q_i, the next step's decay, then the next Sᵀk,
// and the decayed cell is stored back. 2·512·32² = 2^20 state cells per call:
// the entry splits the pairs across its two threads. No BLAS call.

// PLAN-LABEL: func.func @prefill(
// PLAN: rlx.gated_delta_net {{.*}}rlx.scratch_offsets = array<i64: 0>
// PLAN-SAME: state_size = 32 : i64

// CHECK-LABEL: llvm.func internal @prefill_k0(
// CHECK-SAME: %{{[0-9]+}}: !llvm.ptr {llvm.noalias}, %{{[0-9]+}}: !llvm.ptr {llvm.noalias}, %{{[0-9]+}}: !llvm.ptr {llvm.noalias}, %{{[0-9]+}}: !llvm.ptr {llvm.noalias}, %{{[0-9]+}}: !llvm.ptr {llvm.noalias}, %{{[0-9]+}}: !llvm.ptr {llvm.noalias}, [[STATE:%[0-9]+]]: !llvm.ptr {llvm.noalias}, %{{[0-9]+}}: i64, %{{[0-9]+}}: i64) {
// CHECK: llvm.call_intrinsic "llvm.prefetch.p0"
// CHECK: ^bb{{[0-9]+}}(%{{[0-9]+}}: i64, [[O:%[0-9]+]]: vector<16xf32>, %{{[0-9]+}}: vector<16xf32>, [[SK:%[0-9]+]]: vector<16xf32>, %{{[0-9]+}}: vector<16xf32>):
// CHECK: [[AT:%[0-9]+]] = llvm.getelementptr inbounds [[STATE]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: [[CELL_AT:%[0-9]+]] = llvm.getelementptr inbounds [[AT]][0] : (!llvm.ptr) -> !llvm.ptr, vector<16xf32>
// CHECK-NEXT: [[CELL:%[0-9]+]] = llvm.load [[CELL_AT]] {alignment = 4 : i64} : !llvm.ptr -> vector<16xf32>
// CHECK-NEXT: [[UPDATED:%[0-9]+]] = llvm.intr.fma(%{{[0-9]+}}, %{{[0-9]+}}, [[CELL]]) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// CHECK-NEXT: {{%[0-9]+}} = llvm.intr.fma([[UPDATED]], %{{[0-9]+}}, [[O]])
// CHECK-NEXT: [[DECAYED:%[0-9]+]] = llvm.fmul [[UPDATED]], %{{[0-9]+}} : vector<16xf32>
// CHECK-NEXT: {{%[0-9]+}} = llvm.intr.fma([[DECAYED]], %{{[0-9]+}}, [[SK]])
// CHECK: llvm.store [[DECAYED]], %{{[0-9]+}} {alignment = 4 : i64} : vector<16xf32>, !llvm.ptr
// CHECK-NOT: @scipy_cblas
// CHECK-LABEL: llvm.func @prefill(
// CHECK: llvm.call @prefill_k0_parallel(
func.func @prefill(%q: tensor<1x512x2x32xf32>, %k: tensor<1x512x2x32xf32>, %v: tensor<1x512x2x32xf32>, %g: tensor<1x512x2xf32>, %beta: tensor<1x512x2xf32>) -> tensor<1x512x2x32xf32> {
  %o = rlx.gated_delta_net %q, %k, %v, %g, %beta {state_size = 32 : i64} : (tensor<1x512x2x32xf32>, tensor<1x512x2x32xf32>, tensor<1x512x2x32xf32>, tensor<1x512x2xf32>, tensor<1x512x2xf32>) -> tensor<1x512x2x32xf32>
  func.return %o : tensor<1x512x2x32xf32>
}

// -----

// A decode step in f64 with a per-channel gate, state in and out. The state
// result is stored in the compute type, so the kernel works in it: no
// scratch, eight pointers (q, k, v, g, beta, state, out, final state). The
// first pass (decay, Sᵀk) reads the state operand and writes the result; the
// sweep then runs on <8 x f64> vectors. A single step is too small for
// threads (2^14 cells): the entry calls the kernel directly.

// PLAN-LABEL: func.func @decode(
// PLAN-NOT: rlx.scratch_offsets
// PLAN: func.return

// CHECK-LABEL: llvm.func internal @decode_k0(
// CHECK-SAME: [[Q:%[0-9]+]]: !llvm.ptr {llvm.noalias}, %{{[0-9]+}}: !llvm.ptr {llvm.noalias}, %{{[0-9]+}}: !llvm.ptr {llvm.noalias}, %{{[0-9]+}}: !llvm.ptr {llvm.noalias}, %{{[0-9]+}}: !llvm.ptr {llvm.noalias}, [[IN:%[0-9]+]]: !llvm.ptr {llvm.noalias}, %{{[0-9]+}}: !llvm.ptr {llvm.noalias}, [[FINAL:%[0-9]+]]: !llvm.ptr {llvm.noalias}, %{{[0-9]+}}: i64, %{{[0-9]+}}: i64) {
// CHECK: llvm.load %{{[0-9]+}} {alignment = 8 : i64} : !llvm.ptr -> f64
// CHECK: llvm.getelementptr inbounds [[IN]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f64
// CHECK: llvm.getelementptr inbounds [[FINAL]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f64
// CHECK: llvm.load %{{[0-9]+}} {alignment = 8 : i64} : !llvm.ptr -> vector<8xf64>
// CHECK: llvm.store %{{[0-9]+}}, %{{[0-9]+}} {alignment = 8 : i64} : vector<8xf64>, !llvm.ptr
// CHECK-LABEL: llvm.func @decode(
// CHECK-NOT: _parallel
// CHECK: llvm.call @decode_k0_thunk(
func.func @decode(%q: tensor<1x1x4x64xf64>, %k: tensor<1x1x4x64xf64>, %v: tensor<1x1x4x64xf64>, %g: tensor<1x1x4x64xf64>, %beta: tensor<1x1x4xf64>, %s: tensor<1x4x64x64xf64>) -> (tensor<1x1x4x64xf64>, tensor<1x4x64x64xf64>) {
  %o, %s1 = rlx.gated_delta_net %q, %k, %v, %g, %beta, %s {state_size = 64 : i64, gate_per_channel = true} : (tensor<1x1x4x64xf64>, tensor<1x1x4x64xf64>, tensor<1x1x4x64xf64>, tensor<1x1x4x64xf64>, tensor<1x1x4xf64>, tensor<1x4x64x64xf64>) -> (tensor<1x1x4x64xf64>, tensor<1x4x64x64xf64>)
  func.return %o, %s1 : tensor<1x1x4x64xf64>, tensor<1x4x64x64xf64>
}

// -----

// bf16 with a state result: the working state is f32 in scratch (the ninth
// pointer): the first pass writes it, each sweep loads and stores it as
// <16 x f32>, and at the end it is rounded once into the bf16 result (the
// round to nearest even of element_types, ending in a trunc to i16).

// PLAN-LABEL: func.func @rounded_state(
// PLAN: rlx.scratch_offsets = array<i64:

// CHECK-LABEL: llvm.func internal @rounded_state_k0(
// CHECK-SAME: [[FINAL:%[0-9]+]]: !llvm.ptr {llvm.noalias}, [[WORK:%[0-9]+]]: !llvm.ptr {llvm.noalias}, %{{[0-9]+}}: i64, %{{[0-9]+}}: i64) {
// CHECK: [[FIRST:%[0-9]+]] = llvm.getelementptr inbounds [[WORK]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: llvm.store %{{[0-9]+}}, [[FIRST]] {alignment = 4 : i64} : f32, !llvm.ptr
// CHECK: [[LOAD_AT:%[0-9]+]] = llvm.getelementptr inbounds [[WORK]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: llvm.getelementptr inbounds [[LOAD_AT]][0] : (!llvm.ptr) -> !llvm.ptr, vector<16xf32>
// CHECK: [[STORE_AT:%[0-9]+]] = llvm.getelementptr inbounds [[WORK]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: llvm.getelementptr inbounds [[STORE_AT]][0] : (!llvm.ptr) -> !llvm.ptr, vector<16xf32>
// CHECK: [[CELL_AT:%[0-9]+]] = llvm.getelementptr inbounds [[WORK]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: [[CELL:%[0-9]+]] = llvm.load [[CELL_AT]] {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK-NEXT: {{%[0-9]+}} = llvm.add
// CHECK-NEXT: {{%[0-9]+}} = llvm.bitcast [[CELL]] : f32 to i32
// CHECK: [[BITS:%[0-9]+]] = llvm.trunc %{{[0-9]+}} : i32 to i16
// CHECK-NEXT: [[AT:%[0-9]+]] = llvm.getelementptr inbounds [[FINAL]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, i16
// CHECK-NEXT: llvm.store [[BITS]], [[AT]] {alignment = 2 : i64} : i16, !llvm.ptr
// CHECK: llvm.return
func.func @rounded_state(%q: tensor<2x3x1x16xbf16>, %k: tensor<2x3x1x16xbf16>, %v: tensor<2x3x1x16xbf16>, %g: tensor<2x3x1xbf16>, %beta: tensor<2x3x1xbf16>) -> (tensor<2x3x1x16xbf16>, tensor<2x1x16x16xbf16>) {
  %o, %s = rlx.gated_delta_net %q, %k, %v, %g, %beta {state_size = 16 : i64} : (tensor<2x3x1x16xbf16>, tensor<2x3x1x16xbf16>, tensor<2x3x1x16xbf16>, tensor<2x3x1xbf16>, tensor<2x3x1xbf16>) -> (tensor<2x3x1x16xbf16>, tensor<2x1x16x16xbf16>)
  func.return %o, %s : tensor<2x3x1x16xbf16>, tensor<2x1x16x16xbf16>
}
