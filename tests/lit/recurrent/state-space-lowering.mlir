// RUN: rlx-opt %s --split-input-file -p 'plan-memory,lower-to-llvm{threads=2}' | filecheck %s

// Lowering of rlx.mamba2 and rlx.selective_scan (lowering/state_space.py):
// every kernel loops over its units [begin, end) with its state in stack
// arrays (llvm.alloca in the entry block, so one workspace per thread).

// A Mamba2 decode step (S = 1, state in and out, f32): the direct form. Its
// only stack arrays are the decoded b and c rows (N = 8 each): step 0 reads
// the state operand and writes the new state straight into the state result,
// then adds s·c into y[p] with the one reassociable add, which is what lets
// LLVM vectorize that sum. The work is too small to start threads.

// CHECK-LABEL: llvm.func internal @decode_k0(
// CHECK-SAME: {{%[0-9]+}}: !llvm.ptr {llvm.noalias}, {{%[0-9]+}}: !llvm.ptr {llvm.noalias}, {{%[0-9]+}}: !llvm.ptr {llvm.noalias}, {{%[0-9]+}}: !llvm.ptr {llvm.noalias}, {{%[0-9]+}}: !llvm.ptr {llvm.noalias}, [[S0:%[0-9]+]]: !llvm.ptr {llvm.noalias}, {{%[0-9]+}}: !llvm.ptr {llvm.noalias}, [[S1:%[0-9]+]]: !llvm.ptr {llvm.noalias}, {{%[0-9]+}}: i64, {{%[0-9]+}}: i64)
// CHECK-NEXT: [[N1:%[0-9]+]] = llvm.mlir.constant(8) : i64
// CHECK-NEXT: {{%[0-9]+}} = llvm.alloca [[N1]] x f32 {alignment = 64 : i64}
// CHECK-NEXT: [[N2:%[0-9]+]] = llvm.mlir.constant(8) : i64
// CHECK-NEXT: {{%[0-9]+}} = llvm.alloca [[N2]] x f32 {alignment = 64 : i64}
// CHECK-NOT: llvm.alloca
// CHECK:      [[OLD_AT:%[0-9]+]] = llvm.getelementptr inbounds [[S0]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: [[OLD:%[0-9]+]] = llvm.load [[OLD_AT]]
// CHECK:      [[NEW:%[0-9]+]] = llvm.intr.fma({{%[0-9]+}}, [[OLD]], {{%[0-9]+}}) : (f32, f32, f32) -> f32
// CHECK-NEXT: [[AT:%[0-9]+]] = llvm.add {{%[0-9]+}}, {{%[0-9]+}} : i64
// CHECK-NEXT: [[NEW_AT:%[0-9]+]] = llvm.getelementptr inbounds [[S1]][[[AT]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: llvm.store [[NEW]], [[NEW_AT]]
// CHECK:      [[TERM:%[0-9]+]] = llvm.fmul [[NEW]], {{%[0-9]+}} {fastmathFlags = #llvm.fastmath<contract>} : f32
// CHECK-NEXT: {{%[0-9]+}} = llvm.fadd {{%[0-9]+}}, [[TERM]] {fastmathFlags = #llvm.fastmath<reassoc,contract>} : f32
// CHECK-NOT: fastmath<reassoc
// CHECK: llvm.return
// CHECK-LABEL: llvm.func @decode(
// CHECK-NOT: _parallel
// CHECK: llvm.call @decode_k0(
func.func @decode(%x: tensor<1x1x2x4xf32>, %dt: tensor<1x1x2xf32>, %a: tensor<2xf32>, %b: tensor<1x1x2x8xf32>, %c: tensor<1x1x2x8xf32>, %s: tensor<1x2x4x8xf32>) -> (tensor<1x1x2x4xf32>, tensor<1x2x4x8xf32>) {
  %y, %s1 = rlx.mamba2 %x, %dt, %a, %b, %c, %s {head_dim = 4 : i64, state_size = 8 : i64} : (tensor<1x1x2x4xf32>, tensor<1x1x2xf32>, tensor<2xf32>, tensor<1x1x2x8xf32>, tensor<1x1x2x8xf32>, tensor<1x2x4x8xf32>) -> (tensor<1x1x2x4xf32>, tensor<1x2x4x8xf32>)
  func.return %y, %s1 : tensor<1x1x2x4xf32>, tensor<1x2x4x8xf32>
}

// -----

// Mamba2 prefill (S = 64, P = 64, N = 128, f32, no state): the blocked form.
// The whole [N, P] state (8192 f32 = 32 KiB) is one row block, held divided
// by its running decay (one f32 slot, starting at 1), beside the row arrays
// of two steps (dt·x over the decay, and y). Each pass over the block runs
// two steps: per state, s1 = (dt·x)0·b0[n] + s and s2 = (dt·x)1·b1[n] + s1,
// each followed by y += s·c[n], all FMAs; only s2 is stored back, and there
// are no fast-math flags. The entry splits the 2 (batch, head) units over 2
// threads.

// CHECK-LABEL: llvm.func internal @prefill_k0(
// CHECK-SAME: {{%[0-9]+}}: !llvm.ptr {llvm.noalias}, {{%[0-9]+}}: !llvm.ptr {llvm.noalias}, {{%[0-9]+}}: !llvm.ptr {llvm.noalias}, {{%[0-9]+}}: !llvm.ptr {llvm.noalias}, {{%[0-9]+}}: !llvm.ptr {llvm.noalias}
// CHECK-NEXT: [[SIZE:%[0-9]+]] = llvm.mlir.constant(8192) : i64
// CHECK-NEXT: [[STATE:%[0-9]+]] = llvm.alloca [[SIZE]] x f32 {alignment = 64 : i64}
// CHECK-NEXT: [[ONE:%[0-9]+]] = llvm.mlir.constant(1) : i64
// CHECK-NEXT: {{%[0-9]+}} = llvm.alloca [[ONE]] x f32 {alignment = 64 : i64}
// CHECK-NEXT: {{%[0-9]+}} = llvm.mlir.constant(1.000000e+00 : f32) : f32
// CHECK-NEXT: [[ROWS1:%[0-9]+]] = llvm.mlir.constant(128) : i64
// CHECK-NEXT: {{%[0-9]+}} = llvm.alloca [[ROWS1]] x f32 {alignment = 64 : i64}
// CHECK-NEXT: [[ROWS2:%[0-9]+]] = llvm.mlir.constant(128) : i64
// CHECK-NEXT: {{%[0-9]+}} = llvm.alloca [[ROWS2]] x f32 {alignment = 64 : i64}
// CHECK:      {{%[0-9]+}} = llvm.getelementptr inbounds [[STATE]][{{%[0-9]+}}]
// CHECK-NEXT: llvm.store
// CHECK:      [[AT:%[0-9]+]] = llvm.getelementptr inbounds [[STATE]][{{%[0-9]+}}]
// CHECK-NEXT: [[OLD:%[0-9]+]] = llvm.load [[AT]]
// CHECK-NEXT: [[S1:%[0-9]+]] = llvm.intr.fma({{%[0-9]+}}, {{%[0-9]+}}, [[OLD]]) : (f32, f32, f32) -> f32
// CHECK-NEXT: {{%[0-9]+}} = llvm.intr.fma([[S1]], {{%[0-9]+}}, {{%[0-9]+}}) : (f32, f32, f32) -> f32
// CHECK-NEXT: [[S2:%[0-9]+]] = llvm.intr.fma({{%[0-9]+}}, {{%[0-9]+}}, [[S1]]) : (f32, f32, f32) -> f32
// CHECK-NEXT: {{%[0-9]+}} = llvm.intr.fma([[S2]], {{%[0-9]+}}, {{%[0-9]+}}) : (f32, f32, f32) -> f32
// CHECK-NEXT: [[BACK:%[0-9]+]] = llvm.getelementptr inbounds [[STATE]][{{%[0-9]+}}]
// CHECK-NEXT: llvm.store [[S2]], [[BACK]]
// CHECK-NOT: fastmath
// CHECK: llvm.return
// CHECK-LABEL: llvm.func @prefill(
// CHECK: [[UNITS:%[0-9]+]] = llvm.mlir.constant(2) : i64
// CHECK-NEXT: llvm.call @prefill_k0_parallel({{%[0-9]+}}, [[UNITS]]) : (!llvm.ptr, i64) -> ()
func.func @prefill(%x: tensor<1x64x2x64xf32>, %dt: tensor<1x64x2xf32>, %a: tensor<2xf32>, %b: tensor<1x64x2x128xf32>, %c: tensor<1x64x2x128xf32>) -> tensor<1x64x2x64xf32> {
  %y = rlx.mamba2 %x, %dt, %a, %b, %c {head_dim = 64 : i64, state_size = 128 : i64} : (tensor<1x64x2x64xf32>, tensor<1x64x2xf32>, tensor<2xf32>, tensor<1x64x2x128xf32>, tensor<1x64x2x128xf32>) -> tensor<1x64x2x64xf32>
  func.return %y : tensor<1x64x2x64xf32>
}

// -----

// Selective scan, f16, D = 128 channels, N = 16: units are (batch, block of
// 64 channels), 2 here, split over 2 threads. The workspace is f32 (f16 is
// computed in f32): the block's states and A·log2e transposed ([N, 64]
// each), then Δ, Δ·x, y and the largest |A·log2e| per channel. Staging a
// step's Δ and x (widened with fpext) also ANDs |Δ|·max|A·log2e| <= 125 over
// the channels: the update then computes its decays 2^(Δ·A·log2e) with the
// fast exp2_product_in_range if that holds, with exp2_product if not. y is
// rounded once to f16 by its store.

// CHECK-LABEL: llvm.func internal @scan_k0(
// CHECK-NEXT: [[BLOCK1:%[0-9]+]] = llvm.mlir.constant(1024) : i64
// CHECK-NEXT: {{%[0-9]+}} = llvm.alloca [[BLOCK1]] x f32 {alignment = 64 : i64}
// CHECK-NEXT: [[BLOCK2:%[0-9]+]] = llvm.mlir.constant(1024) : i64
// CHECK-NEXT: {{%[0-9]+}} = llvm.alloca [[BLOCK2]] x f32 {alignment = 64 : i64}
// CHECK-COUNT-4: llvm.alloca {{%[0-9]+}} x f32 {alignment = 64 : i64}
// CHECK-NOT: llvm.alloca
// CHECK:      [[A:%[0-9]+]] = llvm.fpext {{%[0-9]+}} : f16 to f32
// CHECK-NEXT: [[LOG2E:%[0-9]+]] = llvm.mlir.constant(1.44269502 : f32) : f32
// CHECK-NEXT: {{%[0-9]+}} = llvm.fmul [[A]], [[LOG2E]] : f32
// CHECK:      [[BOUND:%[0-9]+]] = llvm.mlir.constant(1.250000e+02 : f32) : f32
// CHECK-NEXT: [[OK:%[0-9]+]] = llvm.fcmp "ole" {{%[0-9]+}}, [[BOUND]] : f32
// CHECK-NEXT: {{%[0-9]+}} = llvm.and [[ALL:%[0-9]+]], [[OK]] : i1
// CHECK:      llvm.cond_br [[ALL]], ^{{bb[0-9]+}}, ^{{bb[0-9]+}}
// CHECK: [[Y:%[0-9]+]] = llvm.fptrunc {{%[0-9]+}} : f32 to f16
// CHECK-NEXT: [[AT:%[0-9]+]] = llvm.getelementptr inbounds {{%[0-9]+}}[{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f16
// CHECK-NEXT: llvm.store [[Y]], [[AT]]
// CHECK: llvm.return
// CHECK-LABEL: llvm.func @scan(
// CHECK: [[UNITS:%[0-9]+]] = llvm.mlir.constant(2) : i64
// CHECK-NEXT: llvm.call @scan_k0_parallel({{%[0-9]+}}, [[UNITS]]) : (!llvm.ptr, i64) -> ()
func.func @scan(%x: tensor<1x16x128xf16>, %d: tensor<1x16x128xf16>, %a: tensor<128x16xf16>, %b: tensor<1x16x16xf16>, %c: tensor<1x16x16xf16>) -> tensor<1x16x128xf16> {
  %y = rlx.selective_scan %x, %d, %a, %b, %c {state_size = 16 : i64} : (tensor<1x16x128xf16>, tensor<1x16x128xf16>, tensor<128x16xf16>, tensor<1x16x16xf16>, tensor<1x16x16xf16>) -> tensor<1x16x128xf16>
  func.return %y : tensor<1x16x128xf16>
}
