// RUN: rlx-opt %s --split-input-file -p 'pack-matmul-weights{target=x86-64-v3}' | filecheck %s

// pack-matmul-weights on AVX2 (register tiles two vectors of 8 f32 wide): a
// constant rhs of a product the emitted GEMM kernels run (the tiles, or the
// packed panels for larger ones) is stored as their column panels,
// [ceil(N/16), K, 16], panels[p, k, c] = B[k, 16·p + c], zero past N, and the
// product says so (rhs_panels). Here B[k, n] = k: panel 0 is 16 zeros then 16
// ones, panel 1 four zeros, twelve zeros of padding, four ones, twelve zeros
// (f32 1.0 is 0000803F little-endian, after MLIR's 4-byte alignment 40000000).

// CHECK-LABEL: func.func @packed
// CHECK-NEXT: [[P:%w_panels16]] = rlx.constant dense_resource<matmul_weight_panels16> : tensor<2x2x16xf32>
// CHECK-NEXT: rlx.matmul %x, [[P]] {rhs_panels = 16 : i64} : (tensor<4x2xf32>, tensor<2x2x16xf32>) -> tensor<4x20xf32>
// CHECK: matmul_weight_panels16: "0x40000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000803F0000803F0000803F0000803F000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
func.func @packed(%x: tensor<4x2xf32>) -> tensor<4x20xf32> {
  %w = rlx.constant dense<[[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]]> : tensor<2x20xf32>
  %y = rlx.matmul %x, %w : (tensor<4x2xf32>, tensor<2x20xf32>) -> tensor<4x20xf32>
  func.return %y : tensor<4x20xf32>
}

// -----

// A transposed weight (stored [N, K]) is stored untransposed in its panels: the
// same panels as above, and transpose_rhs is false.

// CHECK-LABEL: func.func @transposed
// CHECK-NEXT: [[P:%w_panels16]] = rlx.constant dense_resource<matmul_weight_panels16> : tensor<2x2x16xf32>
// CHECK-NEXT: rlx.matmul %x, [[P]] {rhs_panels = 16 : i64} : (tensor<4x2xf32>, tensor<2x2x16xf32>) -> tensor<4x20xf32>
// CHECK: matmul_weight_panels16: "0x40000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000803F0000803F0000803F0000803F000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
func.func @transposed(%x: tensor<4x2xf32>) -> tensor<4x20xf32> {
  %w = rlx.constant dense<[[0.0, 1.0], [0.0, 1.0], [0.0, 1.0], [0.0, 1.0], [0.0, 1.0], [0.0, 1.0], [0.0, 1.0], [0.0, 1.0], [0.0, 1.0], [0.0, 1.0], [0.0, 1.0], [0.0, 1.0], [0.0, 1.0], [0.0, 1.0], [0.0, 1.0], [0.0, 1.0], [0.0, 1.0], [0.0, 1.0], [0.0, 1.0], [0.0, 1.0]]> : tensor<20x2xf32>
  %y = rlx.matmul %x, %w {transpose_rhs = true} : (tensor<4x2xf32>, tensor<20x2xf32>) -> tensor<4x20xf32>
  func.return %y : tensor<4x20xf32>
}

// -----

// A matmul and a contraction region that read one constant share its panels, and
// the constant as it was is gone; a batch of lhs rows (one GEMM of 2·4 rows) is
// packed alike.

// CHECK-LABEL: func.func @shared
// CHECK-NEXT: [[P:%w_panels16]] = rlx.constant dense_resource<matmul_weight_panels16> : tensor<2x2x16xf32>
// CHECK-NOT: rlx.constant
// CHECK-NEXT: rlx.matmul %x, [[P]] {rhs_panels = 16 : i64} : (tensor<2x4x2xf32>, tensor<2x2x16xf32>) -> tensor<2x4x20xf32>
// CHECK-NEXT: rlx.contraction_region ins(%v, [[P]] : tensor<4x2xf32>, tensor<2x2x16xf32>) {indexing_maps = [], {{.*}}rhs_panels = 16 : i64} -> tensor<4x20xf32>
func.func @shared(%x: tensor<2x4x2xf32>, %v: tensor<4x2xf32>) -> (tensor<2x4x20xf32>, tensor<4x20xf32>) {
  %w = rlx.constant dense<[[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]]> : tensor<2x20xf32>
  %y = rlx.matmul %x, %w : (tensor<2x4x2xf32>, tensor<2x20xf32>) -> tensor<2x4x20xf32>
  %z = rlx.contraction_region ins(%v, %w : tensor<4x2xf32>, tensor<2x20xf32>) {indexing_maps = []} -> tensor<4x20xf32> {
  ^bb0(%acc: f32):
    %r = rlx.relu %acc : (f32) -> f32
    rlx.yield %r : f32
  }
  func.return %y, %z : tensor<2x4x20xf32>, tensor<4x20xf32>
}

// -----

// A constant also read as it is stays beside its panels.

// CHECK-LABEL: func.func @also_read_as_it_is
// CHECK-NEXT: [[W:%[0-9a-z_]+]] = rlx.constant dense<{{.*}}> : tensor<2x20xf32>
// CHECK-NEXT: [[P:%w_panels16]] = rlx.constant dense_resource<matmul_weight_panels16> : tensor<2x2x16xf32>
// CHECK-NEXT: rlx.matmul %x, [[P]] {rhs_panels = 16 : i64}
// CHECK-NEXT: func.return %{{.*}}, [[W]]
func.func @also_read_as_it_is(%x: tensor<4x2xf32>) -> (tensor<4x20xf32>, tensor<2x20xf32>) {
  %w = rlx.constant dense<[[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]]> : tensor<2x20xf32>
  %y = rlx.matmul %x, %w : (tensor<4x2xf32>, tensor<2x20xf32>) -> tensor<4x20xf32>
  func.return %y, %w : tensor<4x20xf32>, tensor<2x20xf32>
}

// -----

// Left as they are: a weight computed at run time (each call packs it), a
// product of f16 (computed by the f32 GEMM on widened copies) and a 1-D rhs.

// CHECK-LABEL: func.func @left
// CHECK-NOT: rhs_panels
// CHECK: func.return
func.func @left(%x: tensor<4x2xf32>, %w: tensor<2x20xf32>, %h: tensor<4x2xf16>, %v: tensor<2xf32>) -> (tensor<4x20xf32>, tensor<4x20xf16>, tensor<4xf32>) {
  %y = rlx.matmul %x, %w : (tensor<4x2xf32>, tensor<2x20xf32>) -> tensor<4x20xf32>
  %c = rlx.constant dense<[[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]]> : tensor<2x20xf16>
  %z = rlx.matmul %h, %c : (tensor<4x2xf16>, tensor<2x20xf16>) -> tensor<4x20xf16>
  %u = rlx.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %t = rlx.matmul %x, %u : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4xf32>
  func.return %y, %z, %t : tensor<4x20xf32>, tensor<4x20xf16>, tensor<4xf32>
}

// -----

// A product's own rlx.tuning decides for it (autotune's measured choice of the
// BLAS, here): its weight stays as it is, while the same product without it
// reads panels.

// CHECK-LABEL: func.func @own_tuning
// CHECK: rlx.matmul %x, %w {rlx.tuning = {gemm_tiled_max_mnk = 0 : i64, gemm_panel_max_mnk = 0 : i64}} : (tensor<4x2xf32>, tensor<2x20xf32>) -> tensor<4x20xf32>
// CHECK-NEXT: rlx.matmul %x, %{{.*}} {rhs_panels = 16 : i64} : (tensor<4x2xf32>, tensor<2x2x16xf32>) -> tensor<4x20xf32>
func.func @own_tuning(%x: tensor<4x2xf32>) -> (tensor<4x20xf32>, tensor<4x20xf32>) {
  %w = rlx.constant dense<[[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]]> : tensor<2x20xf32>
  %b = rlx.matmul %x, %w {rlx.tuning = {gemm_tiled_max_mnk = 0 : i64, gemm_panel_max_mnk = 0 : i64}} : (tensor<4x2xf32>, tensor<2x20xf32>) -> tensor<4x20xf32>
  %y = rlx.matmul %x, %w : (tensor<4x2xf32>, tensor<2x20xf32>) -> tensor<4x20xf32>
  func.return %b, %y : tensor<4x20xf32>, tensor<4x20xf32>
}
