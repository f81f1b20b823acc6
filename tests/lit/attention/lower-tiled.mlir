// RUN: rlx-opt %s -p 'plan-memory,lower-to-llvm{threads=2 tuning="attention_tiled_panel_bytes=2048"}' | filecheck %s

// The register-tiled form of rlx.attention: a Kᵀ panel of head size 8 x keys
// fits the 2048 bytes the tuning gives it (64 keys of f32; the sequence has
// 40), so Q Kᵀ and P V are emitted register tiles and no BLAS is called.
// Workspace: the [37, 64] score tile (40 keys padded to whole 32-key tiles),
// the [37, 20] accumulator, the rows' maximum and sum, and the [8, 64] panel.
// The panel is packed as 0.5 · Kᵀ (the scale folded in, one fmul per
// element) and zero up to whole tiles of keys. The scores are 8-row tiles
// of two 16-lane vectors, 8 FMAs deep; P V accumulates into the accumulator,
// whose rows of 20 are loaded as 16 + 4 lanes first. Two units (one per kv
// head) are too little work for a second thread: the entry calls the kernel.

// CHECK-NOT: sgemm
// CHECK-NOT: openblas
// CHECK-LABEL: llvm.func internal @tiled_k0(
// CHECK-NEXT: llvm.mlir.constant(2368) : i64
// CHECK-NEXT: [[SCORES:%[0-9]+]] = llvm.alloca {{%[0-9]+}} x f32 {alignment = 64 : i64}
// CHECK-NEXT: llvm.mlir.constant(740) : i64
// CHECK-NEXT: llvm.alloca {{%[0-9]+}} x f32 {alignment = 64 : i64}
// CHECK-COUNT-2: llvm.alloca
// CHECK-NEXT: llvm.mlir.constant(512) : i64
// CHECK-NEXT: [[PANEL:%[0-9]+]] = llvm.alloca {{%[0-9]+}} x f32 {alignment = 64 : i64}
// CHECK-NEXT: llvm.mlir.constant(0xff800000 : f32) : f32
// CHECK-NEXT: [[ZERO:%[0-9]+]] = llvm.mlir.constant(0.000000e+00 : f32) : f32
// CHECK: [[SCALE:%[0-9]+]] = llvm.mlir.constant(5.000000e-01 : f32) : f32
// CHECK: [[K:%[0-9]+]] = llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK-NEXT: [[SK:%[0-9]+]] = llvm.fmul [[K]], [[SCALE]] : f32
// CHECK: llvm.getelementptr inbounds [[PANEL]]
// CHECK-NEXT: llvm.store [[SK]]
// CHECK-COUNT-8: llvm.store [[ZERO]]
// CHECK: llvm.getelementptr inbounds [[PANEL]]
// CHECK-NEXT: llvm.getelementptr inbounds {{%[0-9]+}}[0] : (!llvm.ptr) -> !llvm.ptr, vector<16xf32>
// CHECK-NEXT: llvm.load {{.*}} -> vector<16xf32>
// CHECK-COUNT-16: llvm.intr.fma({{.*}}) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// CHECK: llvm.getelementptr inbounds [[SCORES]]
// CHECK: llvm.call_intrinsic "llvm.maximum.f32"
// CHECK: llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> vector<16xf32>
// CHECK: llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> vector<4xf32>
// CHECK: llvm.intr.fma({{.*}}) : (vector<4xf32>, vector<4xf32>, vector<4xf32>) -> vector<4xf32>
// CHECK-LABEL: llvm.func @tiled(
// CHECK: llvm.call @tiled_k0(
func.func @tiled(%q: tensor<1x2x37x8xf32>, %k: tensor<1x2x40x8xf32>, %v: tensor<1x2x40x20xf32>) -> tensor<1x2x37x20xf32> {
  %o = rlx.attention %q, %k, %v {scale = 0.5 : f64} : (tensor<1x2x37x8xf32>, tensor<1x2x40x8xf32>, tensor<1x2x40x20xf32>) -> tensor<1x2x37x20xf32>
  func.return %o : tensor<1x2x37x20xf32>
}
