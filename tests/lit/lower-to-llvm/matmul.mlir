// RUN: rlx-opt %s --split-input-file -p plan-memory | filecheck %s --check-prefix=PLAN
// RUN: rlx-opt %s --split-input-file -p 'plan-memory,lower-to-llvm{threads=2}' | filecheck %s

// Lowering of rlx.matmul (lowering/contraction.py). The BLAS is the CBLAS of
// scipy-openblas32, whose symbols carry the prefix scipy_; the module
// declares the functions it calls and the JIT resolves them in the library.

// A GEMM whose K is beyond the packed panels (2100 · 128 bytes > 32 KiB):
// OpenBLAS, always on one thread. A first kernel sets its thread count to 1;
// the GEMM's 64 rows (M >= N) are cut into 4 blocks of 16 (the fewest rows a
// block gets), units the entry splits across its threads. A unit calls sgemm
// row-major (101) with the rhs flag CblasTrans (112) and the lhs CblasNoTrans
// (111) on its rows: M = the block's rows, N = 64, K = 2100, lda = ldb =
// 2100, ldc = 64, alpha 1, beta 0, A and C advanced by 16 rows per block.

// CHECK-LABEL: llvm.func @scipy_cblas_sgemm(i32, i32, i32, i32, i32, i32, f32, !llvm.ptr, i32, !llvm.ptr, i32, f32, !llvm.ptr, i32)
// CHECK-NEXT: llvm.func @scipy_openblas_set_num_threads(i32)
// CHECK-LABEL: llvm.func internal @blas_k0_blas1(
// CHECK-NEXT: [[ONE:%[0-9]+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: llvm.call @scipy_openblas_set_num_threads([[ONE]]) : (i32) -> ()
// CHECK-LABEL: llvm.func internal @blas_k0(
// CHECK-SAME: [[A:%[0-9]+]]: !llvm.ptr {llvm.noalias}, [[B:%[0-9]+]]: !llvm.ptr {llvm.noalias}, [[C:%[0-9]+]]: !llvm.ptr {llvm.noalias}, {{%[0-9]+}}: i64, {{%[0-9]+}}: i64)
// CHECK-NEXT: [[ALPHA:%[0-9]+]] = llvm.mlir.constant(1.000000e+00 : f32) : f32
// CHECK-NEXT: [[BETA:%[0-9]+]] = llvm.mlir.constant(0.000000e+00 : f32) : f32
// CHECK-NEXT: [[ORDER:%[0-9]+]] = llvm.mlir.constant(101 : i32) : i32
// CHECK-NEXT: [[TA:%[0-9]+]] = llvm.mlir.constant(111 : i32) : i32
// CHECK-NEXT: [[TB:%[0-9]+]] = llvm.mlir.constant(112 : i32) : i32
// CHECK-NEXT: llvm.mlir.constant(64 : i32) : i32
// CHECK-NEXT: [[N:%[0-9]+]] = llvm.mlir.constant(64 : i32) : i32
// CHECK-NEXT: [[K:%[0-9]+]] = llvm.mlir.constant(2100 : i32) : i32
// CHECK-NEXT: [[LDA:%[0-9]+]] = llvm.mlir.constant(2100 : i32) : i32
// CHECK-NEXT: [[LDB:%[0-9]+]] = llvm.mlir.constant(2100 : i32) : i32
// CHECK-NEXT: [[LDC:%[0-9]+]] = llvm.mlir.constant(64 : i32) : i32
// CHECK: [[BLOCK:%[0-9]+]] = llvm.mlir.constant(16) : i64
// CHECK-NEXT: [[FIRST:%[0-9]+]] = llvm.mul {{%[0-9]+}}, [[BLOCK]] : i64
// CHECK: [[ROWS:%[0-9]+]] = llvm.trunc {{%[0-9]+}} : i64 to i32
// CHECK: [[PA:%[0-9]+]] = llvm.getelementptr inbounds [[A]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK: [[PB:%[0-9]+]] = llvm.getelementptr inbounds [[B]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK: [[PC:%[0-9]+]] = llvm.getelementptr inbounds [[C]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK-NEXT: llvm.call @scipy_cblas_sgemm([[ORDER]], [[TA]], [[TB]], [[ROWS]], [[N]], [[K]], [[ALPHA]], [[PA]], [[LDA]], [[PB]], [[LDB]], [[BETA]], [[PC]], [[LDC]])
// CHECK-LABEL: llvm.func @blas(
// CHECK: llvm.call @blas_k0_blas1(
// CHECK: llvm.call @blas_k0_parallel({{%[0-9]+}}, {{%[0-9]+}})
func.func @blas(%x: tensor<64x2100xf32>, %w: tensor<64x2100xf32>) -> tensor<64x64xf32> {
  %y = rlx.matmul %x, %w {transpose_rhs = true} : (tensor<64x2100xf32>, tensor<64x2100xf32>) -> tensor<64x64xf32>
  func.return %y : tensor<64x64xf32>
}

// -----

// The same GEMM with K = 128 runs the packed-panel kernel: each unit packs both
// 32-column panels of op(B) (K x 32 floats each, one group) into a 64-byte
// aligned stack buffer, then runs 8-row register tiles (16-lane FMAs) across
// them; no BLAS call. One group is cut into row blocks, worth two threads:
// the entry calls the pool's launcher.

// CHECK-LABEL: llvm.func internal @panels_k0(
// CHECK: [[SIZE:%[0-9]+]] = llvm.mlir.constant(8192) : i64
// CHECK-NEXT: llvm.alloca [[SIZE]] x f32 {alignment = 64 : i64}
// CHECK: llvm.intr.fma({{.*}}) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// CHECK-NOT: sgemm
// CHECK-LABEL: llvm.func @panels(
// CHECK: llvm.call @panels_k0_parallel(
func.func @panels(%x: tensor<64x128xf32>, %w: tensor<64x128xf32>) -> tensor<64x64xf32> {
  %y = rlx.matmul %x, %w {transpose_rhs = true} : (tensor<64x128xf32>, tensor<64x128xf32>) -> tensor<64x64xf32>
  func.return %y : tensor<64x64xf32>
}

// -----

// The rhs has no batch and the lhs is not transposed: the lhs batch folds
// into M (3 · 64 = 192) and the whole matmul is one dgemm (K beyond the
// panels), cut into 8 blocks of 24 rows: one call per unit, on its rows.

// CHECK-LABEL: llvm.func internal @folded_k0(
// CHECK: [[BLOCK:%[0-9]+]] = llvm.mlir.constant(24) : i64
// CHECK: [[ROWS:%[0-9]+]] = llvm.trunc {{%[0-9]+}} : i64 to i32
// CHECK: llvm.call @scipy_cblas_dgemm({{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, [[ROWS]],
// CHECK-NOT: llvm.call @scipy_cblas_dgemm
// CHECK: llvm.return
func.func @folded(%x: tensor<3x64x2100xf64>, %w: tensor<2100x128xf64>) -> tensor<3x64x128xf64> {
  %y = rlx.matmul %x, %w : (tensor<3x64x2100xf64>, tensor<2100x128xf64>) -> tensor<3x64x128xf64>
  func.return %y : tensor<3x64x128xf64>
}

// -----

// A batch of 64 small GEMMs, enough units for every thread: one whole cgemm
// per batch entry, each operand's pointer advanced by its batch stride (1024
// elements of 8 bytes), alpha and beta passed by pointer; the entry splits
// the batch across its threads, after the kernel that sets BLAS to one thread.

// CHECK-LABEL: llvm.func @scipy_cblas_cgemm(i32, i32, i32, i32, i32, i32, !llvm.ptr, !llvm.ptr, i32, !llvm.ptr, i32, !llvm.ptr, !llvm.ptr, i32)
// CHECK: llvm.func internal @complex_batch_k0_blas1(
// CHECK: llvm.call @scipy_openblas_set_num_threads
// CHECK-LABEL: llvm.func internal @complex_batch_k0(
// CHECK-SAME: [[A:%[0-9]+]]: !llvm.ptr {llvm.noalias}, {{%[0-9]+}}: !llvm.ptr {llvm.noalias}, {{%[0-9]+}}: !llvm.ptr {llvm.noalias}, [[BEGIN:%[0-9]+]]: i64, [[END:%[0-9]+]]: i64)
// CHECK: [[ALPHA:%[0-9]+]] = llvm.alloca {{%[0-9]+}} x f32
// CHECK: [[BETA:%[0-9]+]] = llvm.alloca {{%[0-9]+}} x f32
// CHECK-NOT: scipy_openblas_set_num_threads
// CHECK: llvm.br ^[[HEAD:bb[0-9]+]]([[BEGIN]] : i64)
// CHECK-NEXT: ^[[HEAD]]([[I:%[0-9]+]]: i64):
// CHECK: [[STRIDE:%[0-9]+]] = llvm.mlir.constant(1024) : i64
// CHECK-NEXT: [[ELEMS:%[0-9]+]] = llvm.mul [[I]], [[STRIDE]] : i64
// CHECK: [[PA:%[0-9]+]] = llvm.getelementptr inbounds [[A]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK: llvm.call @scipy_cblas_cgemm({{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, [[ALPHA]], [[PA]], {{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, [[BETA]],
// CHECK-LABEL: llvm.func @complex_batch(
// CHECK: llvm.call @complex_batch_k0_parallel(
func.func @complex_batch(%x: tensor<64x32x32xcomplex<f32>>, %w: tensor<64x32x32xcomplex<f32>>) -> tensor<64x32x32xcomplex<f32>> {
  %y = rlx.matmul %x, %w {transpose_rhs = true} : (tensor<64x32x32xcomplex<f32>>, tensor<64x32x32xcomplex<f32>>) -> tensor<64x32x32xcomplex<f32>>
  func.return %y : tensor<64x32x32xcomplex<f32>>
}

// -----

// A small real GEMM (M·N·K <= 2^18, the size OpenBLAS would run on the
// calling thread) calls no BLAS: a register tile of 8 rows x 32 columns is
// two <16 x float> accumulators per row, carried through the K loop as block
// arguments and updated by vector FMAs on a broadcast lhs element.

// CHECK-NOT: scipy_cblas
// CHECK-LABEL: llvm.func internal @tiled_k0(
// CHECK: ^[[KLOOP:bb[0-9]+]]({{%[0-9]+}}: i64, [[ACC0:%[0-9]+]]: vector<16xf32>, [[ACC1:%[0-9]+]]: vector<16xf32>,
// CHECK: [[B0:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> vector<16xf32>
// CHECK: [[B1:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> vector<16xf32>
// CHECK: [[A0:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK: [[SPLAT:%[0-9]+]] = llvm.shufflevector {{%[0-9]+}}, {{%[0-9]+}} [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0] : vector<16xf32>
// CHECK-NEXT: {{%[0-9]+}} = llvm.intr.fma([[SPLAT]], [[B0]], [[ACC0]]) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// CHECK-NEXT: {{%[0-9]+}} = llvm.intr.fma([[SPLAT]], [[B1]], [[ACC1]]) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// CHECK: llvm.br ^[[KLOOP]](
// CHECK: llvm.store {{%[0-9]+}}, {{%[0-9]+}} {alignment = 4 : i64} : vector<16xf32>, !llvm.ptr
func.func @tiled(%x: tensor<6x8x16xf32>, %w: tensor<6x16x32xf32>) -> tensor<6x8x32xf32> {
  %y = rlx.matmul %x, %w : (tensor<6x8x16xf32>, tensor<6x16x32xf32>) -> tensor<6x8x32xf32>
  func.return %y : tensor<6x8x32xf32>
}

// -----

// f16 is computed in f32: the op declares three f32 scratch buffers (lhs
// 64·64·4 = 16384 B, rhs and product 64·128·4 = 32768 B each), which
// plan-memory places for the matmul's lifetime beside %e (the f16 exp, alive
// while the matmul reads it) and counts in the lower bound. The result is
// returned, so it is written in place (-1).

// PLAN-LABEL: func.func @half(
// PLAN-SAME: attributes {rlx.arena_size = 90112 : i64, rlx.arena_lower_bound = 90112 : i64}
// PLAN-NEXT: rlx.exp {{.*}} {rlx.offsets = array<i64: 0>}
// PLAN-NEXT: rlx.matmul {{.*}} {rlx.offsets = array<i64: -1>, rlx.scratch_offsets = array<i64: 73728, 8192, 40960>}
// PLAN-NEXT: func.return

// The kernels: widen each operand into its scratch (one fpext per element),
// the f32 GEMM on the scratch buffers (here the packed-panel kernel's f32
// register tiles, no sgemm call), then round the f32 product into the f16
// result once (fptrunc). The entry passes arena + scratch offset pointers;
// the GEMM (2^19 multiply-adds) goes to the thread pool.

// CHECK-LABEL: llvm.func internal @half_k1_lhs(
// CHECK: llvm.load {{%[0-9]+}} {alignment = 2 : i64} : !llvm.ptr -> f16
// CHECK-NEXT: llvm.fpext {{%[0-9]+}} : f16 to f32
// CHECK-LABEL: llvm.func internal @half_k1_rhs(
// CHECK-LABEL: llvm.func internal @half_k1_gemm(
// CHECK: llvm.intr.fma({{.*}}) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// CHECK-NOT: sgemm
// CHECK-LABEL: llvm.func internal @half_k1_round(
// CHECK: llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK-NEXT: llvm.fptrunc {{%[0-9]+}} : f32 to f16
// CHECK-LABEL: llvm.func @half(
// CHECK-SAME: [[ARENA:%[0-9]+]]: !llvm.ptr, {{%[0-9]+}}: !llvm.ptr, {{%[0-9]+}}: !llvm.ptr, {{%[0-9]+}}: !llvm.ptr) {
// CHECK: [[S0:%[0-9]+]] = llvm.mlir.constant(73728) : i64
// CHECK-NEXT: {{%[0-9]+}} = llvm.getelementptr inbounds [[ARENA]][[[S0]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK: llvm.call @half_k1_lhs(
// CHECK: [[S1:%[0-9]+]] = llvm.mlir.constant(8192) : i64
// CHECK-NEXT: {{%[0-9]+}} = llvm.getelementptr inbounds [[ARENA]][[[S1]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK: llvm.call @half_k1_rhs(
// CHECK: [[S2:%[0-9]+]] = llvm.mlir.constant(40960) : i64
// CHECK-NEXT: {{%[0-9]+}} = llvm.getelementptr inbounds [[ARENA]][[[S2]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK: llvm.call @half_k1_gemm_parallel(
// CHECK: llvm.call @half_k1_round(
func.func @half(%x: tensor<64x64xf16>, %w: tensor<64x128xf16>) -> tensor<64x128xf16> {
  %e = rlx.exp %x : (tensor<64x64xf16>) -> tensor<64x64xf16>
  %y = rlx.matmul %e, %w : (tensor<64x64xf16>, tensor<64x128xf16>) -> tensor<64x128xf16>
  func.return %y : tensor<64x128xf16>
}

// -----

// K = 0: every entry is an empty sum, and CBLAS with beta = 0 writes zeros.
// The call needs no special case, only leading dimensions of at least 1:
// M = 3, N = 5, K = 0, lda = 1 (not K), ldb = ldc = 5.

// CHECK-LABEL: llvm.func internal @empty_sum_k0(
// CHECK: [[M:%[0-9]+]] = llvm.mlir.constant(3 : i32) : i32
// CHECK-NEXT: [[N:%[0-9]+]] = llvm.mlir.constant(5 : i32) : i32
// CHECK-NEXT: [[K:%[0-9]+]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT: [[LDA:%[0-9]+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: [[LDB:%[0-9]+]] = llvm.mlir.constant(5 : i32) : i32
// CHECK-NEXT: [[LDC:%[0-9]+]] = llvm.mlir.constant(5 : i32) : i32
// CHECK: llvm.call @scipy_cblas_zgemm({{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, [[M]], [[N]], [[K]], {{%[0-9]+}}, {{%[0-9]+}}, [[LDA]], {{%[0-9]+}}, [[LDB]], {{%[0-9]+}}, {{%[0-9]+}}, [[LDC]])
func.func @empty_sum(%x: tensor<3x0xcomplex<f64>>, %w: tensor<0x5xcomplex<f64>>) -> tensor<3x5xcomplex<f64>> {
  %y = rlx.matmul %x, %w : (tensor<3x0xcomplex<f64>>, tensor<0x5xcomplex<f64>>) -> tensor<3x5xcomplex<f64>>
  func.return %y : tensor<3x5xcomplex<f64>>
}

// -----

// A decode step's GEMV, [1, 256] x [256, 1024]: 262,144 multiply-adds are 16,384
// elements' worth of arithmetic, but the tile kernel streams all of B, 262,144
// elements from L3, which two cores read at twice one's rate: its units (the
// column panels of its one row, the tail kernel of M % 8 rows) go to the pool's launcher.

// CHECK-LABEL: llvm.func @gemv(
// CHECK: llvm.call @gemv_k0_tail_parallel(
func.func @gemv(%x: tensor<1x256xf32>, %w: tensor<256x1024xf32>) -> tensor<1x1024xf32> {
  %y = rlx.matmul %x, %w : (tensor<1x256xf32>, tensor<256x1024xf32>) -> tensor<1x1024xf32>
  func.return %y : tensor<1x1024xf32>
}
