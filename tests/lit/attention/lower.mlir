// RUN: rlx-opt %s --split-input-file -p 'plan-memory,lower-to-llvm{threads=2 tuning="attention_tiled_panel_bytes=0"}' | filecheck %s

// Lowering of rlx.attention in its BLAS form (the tuning turns the register
// tiles off; lower-tiled.mlir has that form): a kernel that sets OpenBLAS to
// one thread, then the flash-attention kernel over units (batch, kv head,
// block of its group's query rows).

// GQA (4 query heads on 2 kv heads), causal, a [5, 1] mask broadcast along
// the keys. Pointers to q, k, v, the mask and the result. A unit takes rows
// of one kv head's group: its 2 query heads are adjacent in q, one [10, 8]
// matrix, so the stack workspace holds one [10, 7] score tile (the blocks
// shrink to the group's rows and the keys), the [10, 4] output accumulator
// and the rows' running maximum and sum: never more than a tile of scores. S = 0.5 · Q Kᵀ is one sgemm (alpha
// = the scale, K transposed: 112); the row pass adds the mask (its key
// stride is 0: one value per row, read with no index arithmetic), stores the
// score back and takes llvm.maximum; the probabilities' sum carries reassoc;
// P V is a second sgemm accumulating (beta = 1).

// CHECK: llvm.func @scipy_cblas_sgemm(
// CHECK-LABEL: llvm.func internal @gqa_k0_blas(
// CHECK: llvm.call @scipy_openblas_set_num_threads
// CHECK-LABEL: llvm.func internal @gqa_k0(
// CHECK-SAME: {{%[0-9]+}}: !llvm.ptr {llvm.noalias}, {{%[0-9]+}}: !llvm.ptr {llvm.noalias}, {{%[0-9]+}}: !llvm.ptr {llvm.noalias}, [[MASK:%[0-9]+]]: !llvm.ptr {llvm.noalias}, {{%[0-9]+}}: !llvm.ptr {llvm.noalias}, {{%[0-9]+}}: i64, {{%[0-9]+}}: i64)
// CHECK-NEXT: llvm.mlir.constant(70) : i64
// CHECK-NEXT: [[SCORES:%[0-9]+]] = llvm.alloca {{%[0-9]+}} x f32 {alignment = 64 : i64}
// CHECK-NEXT: llvm.mlir.constant(40) : i64
// CHECK-NEXT: [[ACC:%[0-9]+]] = llvm.alloca {{%[0-9]+}} x f32 {alignment = 64 : i64}
// CHECK-NEXT: llvm.mlir.constant(10) : i64
// CHECK-NEXT: llvm.alloca
// CHECK-NEXT: llvm.mlir.constant(10) : i64
// CHECK-NEXT: llvm.alloca
// CHECK-NEXT: [[SCALE:%[0-9]+]] = llvm.mlir.constant(5.000000e-01 : f32) : f32
// CHECK-NEXT: [[ZERO:%[0-9]+]] = llvm.mlir.constant(0.000000e+00 : f32) : f32
// CHECK-NEXT: [[ROW:%[0-9]+]] = llvm.mlir.constant(101 : i32) : i32
// CHECK-NEXT: [[NT:%[0-9]+]] = llvm.mlir.constant(111 : i32) : i32
// CHECK-NEXT: [[T:%[0-9]+]] = llvm.mlir.constant(112 : i32) : i32
// CHECK-NOT: llvm.alloca
// CHECK: llvm.call @scipy_cblas_sgemm([[ROW]], [[NT]], [[T]], {{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, [[SCALE]], {{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, [[ZERO]], [[SCORES]], {{%[0-9]+}})
// CHECK: llvm.getelementptr inbounds [[SCORES]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: [[S:%[0-9]+]] = llvm.load
// CHECK-NEXT: llvm.getelementptr inbounds [[MASK]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: [[M:%[0-9]+]] = llvm.load
// CHECK-NEXT: [[SM:%[0-9]+]] = llvm.fadd [[S]], [[M]] : f32
// CHECK: llvm.store [[SM]]
// CHECK-NEXT: llvm.call_intrinsic "llvm.maximum.f32"({{%[0-9]+}}, [[SM]])
// CHECK: llvm.fadd {{%[0-9]+}}, {{%[0-9]+}} {fastmathFlags = #llvm.fastmath<reassoc>} : f32
// CHECK: llvm.call @scipy_cblas_sgemm({{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, [[SCORES]], {{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, [[ACC]], {{%[0-9]+}})
// CHECK-LABEL: llvm.func @gqa(
// CHECK: llvm.call @gqa_k0_blas(
// CHECK: llvm.call @gqa_k0(
func.func @gqa(%q: tensor<1x4x5x8xf32>, %k: tensor<1x2x7x8xf32>, %v: tensor<1x2x7x4xf32>, %m: tensor<5x1xf32>) -> tensor<1x4x5x4xf32> {
  %o = rlx.attention %q, %k, %v, %m {scale = 0.5 : f64, causal = true} : (tensor<1x4x5x8xf32>, tensor<1x2x7x8xf32>, tensor<1x2x7x4xf32>, tensor<5x1xf32>) -> tensor<1x4x5x4xf32>
  func.return %o : tensor<1x4x5x4xf32>
}

// -----

// bf16 is computed in f32: three more stack arrays receive the Q tile [3, 16]
// and a K and a V tile [6, 16] widened, and the GEMMs read those (sgemm, not
// a bf16 GEMM). No mask, not causal: the row pass has no mask load.

// CHECK-LABEL: llvm.func internal @widened_k0(
// CHECK-SAME: {{%[0-9]+}}: !llvm.ptr {llvm.noalias}, {{%[0-9]+}}: !llvm.ptr {llvm.noalias}, {{%[0-9]+}}: !llvm.ptr {llvm.noalias}, {{%[0-9]+}}: !llvm.ptr {llvm.noalias}, {{%[0-9]+}}: i64, {{%[0-9]+}}: i64)
// CHECK-COUNT-4: llvm.alloca {{%[0-9]+}} x f32
// CHECK-NEXT: llvm.mlir.constant(48) : i64
// CHECK-NEXT: [[WQ:%[0-9]+]] = llvm.alloca {{%[0-9]+}} x f32 {alignment = 64 : i64}
// CHECK-NEXT: llvm.mlir.constant(96) : i64
// CHECK-NEXT: [[WK:%[0-9]+]] = llvm.alloca {{%[0-9]+}} x f32 {alignment = 64 : i64}
// CHECK-NEXT: llvm.mlir.constant(96) : i64
// CHECK-NEXT: [[WV:%[0-9]+]] = llvm.alloca {{%[0-9]+}} x f32 {alignment = 64 : i64}
// CHECK: llvm.call @scipy_cblas_sgemm({{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, [[WQ]], {{%[0-9]+}}, [[WK]],
// CHECK: llvm.call @scipy_cblas_sgemm({{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, [[WV]],
// CHECK-NOT: bf16
// CHECK: llvm.return
func.func @widened(%q: tensor<2x2x3x16xbf16>, %k: tensor<2x2x6x16xbf16>) -> tensor<2x2x3x16xbf16> {
  %o = rlx.attention %q, %k, %k {scale = 0.25 : f64} : (tensor<2x2x3x16xbf16>, tensor<2x2x6x16xbf16>, tensor<2x2x6x16xbf16>) -> tensor<2x2x3x16xbf16>
  func.return %o : tensor<2x2x3x16xbf16>
}
