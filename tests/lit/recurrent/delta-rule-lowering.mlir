// RUN: rlx-opt %s --split-input-file -p plan-memory | filecheck %s --check-prefix=PLAN
// RUN: rlx-opt %s --split-input-file -p 'plan-memory,lower-to-llvm{threads=2}' | filecheck %s

// Lowering of rlx.gated_delta_net (lowering/delta_rule.py), sequential form:
// one kernel over the B·H (batch, head) pairs. Each pair runs its state in
// column strips held in a stack buffer (in L1) for the whole sequence, one
// sweep over the rows per step in explicit vectors along the columns. The op
// needs no arena scratch.

// Prefill, f32, one gate per key channel (the one-step sweep; head gates take
// the paired form, next case), no state operand or result: six pointers
// (q, k, v, g, beta, out). N = 32 fits one strip of 2 × 16 lanes, a
// [32 x 32] f32 buffer. The step loop carries the strip's Sᵀk; the row loop
// carries o and the next Sᵀk. Per row i it reads k_i, q_i and the next k_i
// from the inputs and its decay from the stack; per cell: the rank-1 update
// S += k_i·u, o += S·q_i, the next step's decay, then the next Sᵀk, and the
// decayed cell is stored back. 2·512·32² = 2^20 state cells: the entry splits
// the pairs across its two threads. No BLAS call.

// PLAN-LABEL: func.func @prefill(
// PLAN-NOT: rlx.scratch_offsets
// PLAN: func.return

// CHECK-LABEL: llvm.func internal @prefill_k0(
// CHECK-SAME: [[Q:%[0-9]+]]: !llvm.ptr {llvm.noalias}, [[K:%[0-9]+]]: !llvm.ptr {llvm.noalias}, %{{[0-9]+}}: !llvm.ptr {llvm.noalias}, %{{[0-9]+}}: !llvm.ptr {llvm.noalias}, %{{[0-9]+}}: !llvm.ptr {llvm.noalias}, %{{[0-9]+}}: !llvm.ptr {llvm.noalias}, %{{[0-9]+}}: i64, %{{[0-9]+}}: i64)
// CHECK-NEXT: [[SIZE:%[0-9]+]] = llvm.mlir.constant(1024) : i64
// CHECK-NEXT: [[STRIP:%[0-9]+]] = llvm.alloca [[SIZE]] x f32 {alignment = 64 : i64} : (i64) -> !llvm.ptr
// CHECK: ^bb{{[0-9]+}}(%{{[0-9]+}}: i64, %{{[0-9]+}}: vector<16xf32>, %{{[0-9]+}}: vector<16xf32>):
// CHECK: ^bb{{[0-9]+}}(%{{[0-9]+}}: i64, [[O:%[0-9]+]]: vector<16xf32>, %{{[0-9]+}}: vector<16xf32>, [[SK:%[0-9]+]]: vector<16xf32>, %{{[0-9]+}}: vector<16xf32>):
// CHECK: llvm.getelementptr inbounds [[K]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK: llvm.getelementptr inbounds [[Q]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: llvm.load
// CHECK: [[DECAY:%[0-9]+]] = llvm.load %{{[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK: llvm.getelementptr inbounds [[K]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK: [[AT:%[0-9]+]] = llvm.getelementptr inbounds [[STRIP]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: [[CELL_AT:%[0-9]+]] = llvm.getelementptr inbounds [[AT]][0] : (!llvm.ptr) -> !llvm.ptr, vector<16xf32>
// CHECK-NEXT: [[CELL:%[0-9]+]] = llvm.load [[CELL_AT]] {alignment = 4 : i64} : !llvm.ptr -> vector<16xf32>
// CHECK: [[UPDATED:%[0-9]+]] = llvm.intr.fma(%{{[0-9]+}}, %{{[0-9]+}}, [[CELL]]) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// CHECK: {{%[0-9]+}} = llvm.intr.fma([[UPDATED]], %{{[0-9]+}}, [[O]])
// CHECK: llvm.insertelement [[DECAY]]
// CHECK: [[DECAYED:%[0-9]+]] = llvm.fmul [[UPDATED]], %{{[0-9]+}} : vector<16xf32>
// CHECK: {{%[0-9]+}} = llvm.intr.fma([[DECAYED]], %{{[0-9]+}}, [[SK]])
// CHECK: [[STORE_AT:%[0-9]+]] = llvm.getelementptr inbounds [[STRIP]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: [[STORE_VEC:%[0-9]+]] = llvm.getelementptr inbounds [[STORE_AT]][0] : (!llvm.ptr) -> !llvm.ptr, vector<16xf32>
// CHECK-NEXT: llvm.store [[DECAYED]], [[STORE_VEC]] {alignment = 4 : i64} : vector<16xf32>, !llvm.ptr
// CHECK-NOT: @scipy_cblas
// CHECK-LABEL: llvm.func @prefill(
// CHECK: llvm.call @prefill_k0_parallel(
func.func @prefill(%q: tensor<1x512x2x32xf32>, %k: tensor<1x512x2x32xf32>, %v: tensor<1x512x2x32xf32>, %g: tensor<1x512x2x32xf32>, %beta: tensor<1x512x2xf32>) -> tensor<1x512x2x32xf32> {
  %o = rlx.gated_delta_net %q, %k, %v, %g, %beta {state_size = 32 : i64, gate_per_channel = true} : (tensor<1x512x2x32xf32>, tensor<1x512x2x32xf32>, tensor<1x512x2x32xf32>, tensor<1x512x2x32xf32>, tensor<1x512x2xf32>) -> tensor<1x512x2x32xf32>
  func.return %o : tensor<1x512x2x32xf32>
}

// -----

// Prefill with one gate per head: the paired form, two steps per sweep over
// the strip held divided by its decay. The pair loop carries both next
// projections (2 × 2 vectors) and the pair's two decays (D is on the stack).
// Then the sweep branches on whether D stays in the held range:
// the held sweep carries 8 accumulators (o of both steps, Sᵀk of the next
// two, per piece) and updates each cell with two FMAs and no multiply; the
// direct sweep multiplies the cell by the decays (fmul) around the updates.

// CHECK-LABEL: llvm.func internal @paired_k0(
// CHECK: ^bb{{[0-9]+}}(%{{[0-9]+}}: i64, %{{[0-9]+}}: vector<16xf32>, %{{[0-9]+}}: vector<16xf32>, %{{[0-9]+}}: vector<16xf32>, %{{[0-9]+}}: vector<16xf32>, %{{[0-9]+}}: f32, %{{[0-9]+}}: f32):
// CHECK: llvm.cond_br
// CHECK: ^bb{{[0-9]+}}(%{{[0-9]+}}: i64, [[O1:%[0-9]+]]: vector<16xf32>, %{{[0-9]+}}: vector<16xf32>, %{{[0-9]+}}: vector<16xf32>, %{{[0-9]+}}: vector<16xf32>, %{{[0-9]+}}: vector<16xf32>, %{{[0-9]+}}: vector<16xf32>, %{{[0-9]+}}: vector<16xf32>, %{{[0-9]+}}: vector<16xf32>):
// CHECK: [[CELL:%[0-9]+]] = llvm.load %{{[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> vector<16xf32>
// CHECK-NOT: llvm.fmul
// CHECK: llvm.intr.fma([[CELL]], %{{[0-9]+}}, [[O1]])
// CHECK: [[ONE:%[0-9]+]] = llvm.intr.fma(%{{[0-9]+}}, %{{[0-9]+}}, [[CELL]])
// CHECK-NOT: llvm.fmul
// CHECK: {{%[0-9]+}} = llvm.intr.fma(%{{[0-9]+}}, %{{[0-9]+}}, [[ONE]])
// CHECK: ^bb{{[0-9]+}}(%{{[0-9]+}}: i64, %{{[0-9]+}}: vector<16xf32>, %{{[0-9]+}}: vector<16xf32>, %{{[0-9]+}}: vector<16xf32>, %{{[0-9]+}}: vector<16xf32>, %{{[0-9]+}}: vector<16xf32>, %{{[0-9]+}}: vector<16xf32>, %{{[0-9]+}}: vector<16xf32>, %{{[0-9]+}}: vector<16xf32>):
// CHECK: [[RAW:%[0-9]+]] = llvm.load %{{[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> vector<16xf32>
// CHECK: llvm.fmul [[RAW]], %{{[0-9]+}} : vector<16xf32>
// CHECK-LABEL: llvm.func @paired(
// CHECK: llvm.call @paired_k0_parallel(
func.func @paired(%q: tensor<1x512x2x32xf32>, %k: tensor<1x512x2x32xf32>, %v: tensor<1x512x2x32xf32>, %g: tensor<1x512x2xf32>, %beta: tensor<1x512x2xf32>) -> tensor<1x512x2x32xf32> {
  %o = rlx.gated_delta_net %q, %k, %v, %g, %beta {state_size = 32 : i64} : (tensor<1x512x2x32xf32>, tensor<1x512x2x32xf32>, tensor<1x512x2x32xf32>, tensor<1x512x2xf32>, tensor<1x512x2xf32>) -> tensor<1x512x2x32xf32>
  func.return %o : tensor<1x512x2x32xf32>
}

// -----

// A decode step in f64 with a per-channel gate, state in and out: eight
// pointers (q, k, v, g, beta, state, out, final state). The first pass reads
// the state operand straight into the strip buffer (decayed by step 0); the
// last step's sweep, on <8 x f64> (N = 64: one strip of 8 vectors), stores
// the updated cells straight into the state result. A single step is too
// small for threads (2^14 cells): the entry calls the kernel directly.

// PLAN-LABEL: func.func @decode(
// PLAN-NOT: rlx.scratch_offsets
// PLAN: func.return

// CHECK-LABEL: llvm.func internal @decode_k0(
// CHECK-SAME: %{{[0-9]+}}: !llvm.ptr {llvm.noalias}, %{{[0-9]+}}: !llvm.ptr {llvm.noalias}, %{{[0-9]+}}: !llvm.ptr {llvm.noalias}, %{{[0-9]+}}: !llvm.ptr {llvm.noalias}, %{{[0-9]+}}: !llvm.ptr {llvm.noalias}, [[IN:%[0-9]+]]: !llvm.ptr {llvm.noalias}, %{{[0-9]+}}: !llvm.ptr {llvm.noalias}, [[FINAL:%[0-9]+]]: !llvm.ptr {llvm.noalias}, %{{[0-9]+}}: i64, %{{[0-9]+}}: i64)
// CHECK: [[STRIP:%[0-9]+]] = llvm.alloca {{%[0-9]+}} x f64
// CHECK: [[FROM:%[0-9]+]] = llvm.getelementptr inbounds [[IN]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f64
// CHECK-NEXT: [[FROM_VEC:%[0-9]+]] = llvm.getelementptr inbounds [[FROM]][0] : (!llvm.ptr) -> !llvm.ptr, vector<8xf64>
// CHECK-NEXT: {{%[0-9]+}} = llvm.load [[FROM_VEC]] {alignment = 8 : i64} : !llvm.ptr -> vector<8xf64>
// CHECK: llvm.getelementptr inbounds [[STRIP]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f64
// CHECK: [[TO:%[0-9]+]] = llvm.getelementptr inbounds [[FINAL]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f64
// CHECK-NEXT: [[TO_VEC:%[0-9]+]] = llvm.getelementptr inbounds [[TO]][0] : (!llvm.ptr) -> !llvm.ptr, vector<8xf64>
// CHECK-NEXT: llvm.store %{{[0-9]+}}, [[TO_VEC]] {alignment = 8 : i64} : vector<8xf64>, !llvm.ptr
// CHECK-LABEL: llvm.func @decode(
// CHECK-NOT: _parallel
// CHECK: llvm.call @decode_k0(
func.func @decode(%q: tensor<1x1x4x64xf64>, %k: tensor<1x1x4x64xf64>, %v: tensor<1x1x4x64xf64>, %g: tensor<1x1x4x64xf64>, %beta: tensor<1x1x4xf64>, %s: tensor<1x4x64x64xf64>) -> (tensor<1x1x4x64xf64>, tensor<1x4x64x64xf64>) {
  %o, %s1 = rlx.gated_delta_net %q, %k, %v, %g, %beta, %s {state_size = 64 : i64, gate_per_channel = true} : (tensor<1x1x4x64xf64>, tensor<1x1x4x64xf64>, tensor<1x1x4x64xf64>, tensor<1x1x4x64xf64>, tensor<1x1x4xf64>, tensor<1x4x64x64xf64>) -> (tensor<1x1x4x64xf64>, tensor<1x4x64x64xf64>)
  func.return %o, %s1 : tensor<1x1x4x64xf64>, tensor<1x4x64x64xf64>
}

// -----

// bf16 with a state result: the strip buffer is f32, and the end rounds it
// once into the bf16 result (2-byte stores of the rounded bits).

// CHECK-LABEL: llvm.func internal @rounded_state_k0(
// CHECK-SAME: [[FINAL:%[0-9]+]]: !llvm.ptr {llvm.noalias}, %{{[0-9]+}}: i64, %{{[0-9]+}}: i64)
// CHECK: llvm.alloca {{%[0-9]+}} x f32
// CHECK: [[TO:%[0-9]+]] = llvm.getelementptr inbounds [[FINAL]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, i16
// CHECK-NEXT: llvm.store %{{[0-9]+}}, [[TO]] {alignment = 2 : i64} : i16, !llvm.ptr
func.func @rounded_state(%q: tensor<2x3x1x16xbf16>, %k: tensor<2x3x1x16xbf16>, %v: tensor<2x3x1x16xbf16>, %g: tensor<2x3x1xbf16>, %beta: tensor<2x3x1xbf16>) -> (tensor<2x3x1x16xbf16>, tensor<2x1x16x16xbf16>) {
  %o, %s = rlx.gated_delta_net %q, %k, %v, %g, %beta {state_size = 16 : i64} : (tensor<2x3x1x16xbf16>, tensor<2x3x1x16xbf16>, tensor<2x3x1x16xbf16>, tensor<2x3x1xbf16>, tensor<2x3x1xbf16>) -> (tensor<2x3x1x16xbf16>, tensor<2x1x16x16xbf16>)
  func.return %o, %s : tensor<2x3x1x16xbf16>, tensor<2x1x16x16xbf16>
}
