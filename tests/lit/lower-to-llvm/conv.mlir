// RUN: rlx-opt %s --split-input-file -p 'plan-memory,lower-to-llvm{threads=2 tuning="conv_min_units=1,cores=1,conv_tiled_max_padded_percent=0"}' | filecheck %s

// Lowering of rlx.conv: the direct kernel and the im2col + GEMM form (the tiled
// form, which conv-tiled.mlir tests, is off: conv_tiled_max_padded_percent = 0).

// A depthwise causal conv1d runs the direct kernel: pointers to x, w, bias
// and the result, then [begin, end) over the (n, m) units. A unit fills its
// plane with the bias, loads one weight per tap, and the innermost loop runs
// over the tap's valid outputs only (bounds from selects, no branch per
// element): load x, load the output, one FMA, store.

// CHECK-LABEL: llvm.func internal @depthwise_k0(
// CHECK-SAME: [[XP:%[0-9]+]]: !llvm.ptr {llvm.noalias}, [[WP:%[0-9]+]]: !llvm.ptr {llvm.noalias}, [[BP:%[0-9]+]]: !llvm.ptr {llvm.noalias}, [[YP:%[0-9]+]]: !llvm.ptr {llvm.noalias}, {{%[0-9]+}}: i64, {{%[0-9]+}}: i64)
// CHECK: llvm.getelementptr inbounds [[BP]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK: llvm.getelementptr inbounds [[WP]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: [[WV:%[0-9]+]] = llvm.load
// CHECK: [[LO:%[0-9]+]] = llvm.select
// CHECK: = llvm.select
// CHECK-NEXT: [[HI:%[0-9]+]] = llvm.select
// CHECK-NEXT: llvm.mlir.constant
// CHECK-NEXT: llvm.mul
// CHECK-NEXT: llvm.add
// CHECK-NEXT: llvm.br ^[[HEAD:bb[0-9]+]]([[LO]] : i64)
// CHECK-NEXT: ^[[HEAD]]([[OUT:%[0-9]+]]: i64):
// CHECK-NEXT: llvm.icmp "slt" [[OUT]], [[HI]] : i64
// CHECK: llvm.getelementptr inbounds [[XP]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: [[XV:%[0-9]+]] = llvm.load
// CHECK-NEXT: llvm.getelementptr inbounds [[YP]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: [[YV:%[0-9]+]] = llvm.load
// CHECK-NEXT: [[SUM:%[0-9]+]] = llvm.intr.fma([[WV]], [[XV]], [[YV]]) : (f32, f32, f32) -> f32
// CHECK-NEXT: [[AT:%[0-9]+]] = llvm.getelementptr inbounds [[YP]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: llvm.store [[SUM]], [[AT]]
// CHECK-NOT: sgemm
// CHECK: llvm.return
func.func @depthwise(%x: tensor<2x4x9xf32>, %w: tensor<4x1x3xf32>, %b: tensor<4xf32>) -> tensor<2x4x9xf32> {
  %y = rlx.conv %x, %w, %b {strides = array<i64: 1>, dilations = array<i64: 1>, pad_before = array<i64: 2>, pad_after = array<i64: 0>, groups = 4 : i64} : (tensor<2x4x9xf32>, tensor<4x1x3xf32>, tensor<4xf32>) -> tensor<2x4x9xf32>
  func.return %y : tensor<2x4x9xf32>
}

// -----

// 8 output and 4·9 input channels·taps: the GEMM form. A kernel first sets
// OpenBLAS to one thread, then the units (image, group, block of output rows;
// here one block per image, as conv_min_units = 1 does not cut the work for
// the cores) run in parallel over x, w and the result, each
// writing its im2col block [36, 36] into a 64-byte aligned stack buffer and
// calling sgemm with M = 8, N = 36, K = 36 (row-major, no transposes).

// CHECK: llvm.func @scipy_cblas_sgemm(
// CHECK-LABEL: llvm.func internal @gemm_form_k0_blas(
// CHECK: llvm.call @scipy_openblas_set_num_threads
// CHECK-LABEL: llvm.func internal @gemm_form_k0(
// CHECK-SAME: {{%[0-9]+}}: !llvm.ptr {llvm.noalias}, {{%[0-9]+}}: !llvm.ptr {llvm.noalias}, {{%[0-9]+}}: !llvm.ptr {llvm.noalias}, {{%[0-9]+}}: i64, {{%[0-9]+}}: i64)
// CHECK: llvm.alloca {{%[0-9]+}} x f32 {alignment = 64 : i64}
// CHECK: [[ROW:%[0-9]+]] = llvm.mlir.constant(101 : i32) : i32
// CHECK-NEXT: [[NT:%[0-9]+]] = llvm.mlir.constant(111 : i32) : i32
// CHECK-NEXT: [[NT2:%[0-9]+]] = llvm.mlir.constant(111 : i32) : i32
// CHECK-NEXT: [[MM:%[0-9]+]] = llvm.mlir.constant(8 : i32) : i32
// CHECK-NEXT: [[NN:%[0-9]+]] = llvm.mlir.constant(36 : i32) : i32
// CHECK-NEXT: [[KK:%[0-9]+]] = llvm.mlir.constant(36 : i32) : i32
// CHECK: llvm.call @scipy_cblas_sgemm([[ROW]], [[NT]], [[NT2]], [[MM]], [[NN]], [[KK]],
// CHECK-LABEL: llvm.func @gemm_form(
// CHECK: llvm.call @gemm_form_k0_blas(
// CHECK: llvm.call @gemm_form_k0(
func.func @gemm_form(%x: tensor<2x4x6x6xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<2x8x6x6xf32> {
  %y = rlx.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_before = array<i64: 1, 1>, pad_after = array<i64: 1, 1>} : (tensor<2x4x6x6xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x6x6xf32>
  func.return %y : tensor<2x8x6x6xf32>
}

// -----

// A conv region: the same GEMM, then its epilogue (the bias add and ReLU of
// the body) over the unit's block, loading the bias of each output channel.

// CHECK-LABEL: llvm.func internal @gemm_epilogue_k0(
// CHECK: llvm.call @scipy_cblas_sgemm(
// CHECK: [[ACC:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK-NEXT: {{%[0-9]+}} = llvm.getelementptr
// CHECK-NEXT: [[BIAS:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK-NEXT: [[SUM:%[0-9]+]] = llvm.fadd [[ACC]], [[BIAS]] : f32
// CHECK: llvm.fcmp "olt" [[SUM]]
// CHECK-LABEL: llvm.func @gemm_epilogue(
func.func @gemm_epilogue(%x: tensor<2x4x6x6xf32>, %w: tensor<8x4x3x3xf32>, %b: tensor<8xf32>) -> tensor<2x8x6x6xf32> {
  %y = rlx.conv_region ins(%x, %w, %b : tensor<2x4x6x6xf32>, tensor<8x4x3x3xf32>, tensor<8xf32>) {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1)>], strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_before = array<i64: 1, 1>, pad_after = array<i64: 1, 1>, groups = 1 : i64} -> tensor<2x8x6x6xf32> {
  ^bb0(%acc: f32, %bias: f32):
    %s = rlx.add %acc, %bias : (f32, f32) -> f32
    %r = rlx.relu %s : (f32) -> f32
    rlx.yield %r : f32
  }
  func.return %y : tensor<2x8x6x6xf32>
}
