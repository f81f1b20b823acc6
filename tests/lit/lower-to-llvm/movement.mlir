// RUN: rlx-opt %s --split-input-file -p 'plan-memory,lower-to-llvm{threads=1}' | filecheck %s

// Lowering of the data-movement ops to LLVM-dialect kernels.

// A gather kernel takes the data, indices, output and status pointers, then
// the [begin, end) range. An index outside [-n, n) writes the status record
// (1, index, axis, size) and reads nothing; the entry loads the status after
// the kernel and returns early when it is non-zero, so later kernels (the
// exp) do not run on garbage.

// CHECK-LABEL: llvm.func internal @gather_then_exp_k0(
// CHECK-SAME: [[DATA:%[0-9]+]]: !llvm.ptr {llvm.noalias}, [[IDX:%[0-9]+]]: !llvm.ptr {llvm.noalias}, [[OUT:%[0-9]+]]: !llvm.ptr {llvm.noalias}, [[ST:%[0-9]+]]: !llvm.ptr {llvm.noalias}, [[BEGIN:%[0-9]+]]: i64, [[END:%[0-9]+]]: i64)
// CHECK: [[IP:%[0-9]+]] = llvm.getelementptr inbounds [[IDX]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, i32
// CHECK-NEXT: [[I:%[0-9]+]] = llvm.load [[IP]] {alignment = 4 : i64} : !llvm.ptr -> i32
// The index is compared unsigned against the axis size 5 after wrapping negatives.
// CHECK: llvm.mlir.constant(5) : i64
// CHECK: llvm.icmp "slt"
// CHECK: llvm.select
// CHECK: [[OK:%[0-9]+]] = llvm.icmp "ult" {{%[0-9]+}}, {{%[0-9]+}} : i64
// CHECK: llvm.cond_br {{%[0-9]+}}, ^[[BAD:bb[0-9]+]], ^[[GOOD:bb[0-9]+]]
// CHECK-NEXT: ^[[BAD]]:
// CHECK: [[S0:%[0-9]+]] = llvm.getelementptr inbounds [[ST]][0] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT: llvm.store {{%[0-9]+}}, [[S0]] {alignment = 8 : i64} : i64, !llvm.ptr
// CHECK: llvm.getelementptr inbounds [[ST]][3] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK: llvm.br ^[[GOOD]]
// CHECK-NEXT: ^[[GOOD]]:
// CHECK: llvm.getelementptr inbounds [[DATA]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK: llvm.getelementptr inbounds [[OUT]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK: llvm.return

// CHECK-LABEL: llvm.func @gather_then_exp(
// CHECK-SAME: [[ARENA:%[0-9]+]]: !llvm.ptr, [[IO:%[0-9]+]]: !llvm.ptr, [[STATUS:%[0-9]+]]: !llvm.ptr, {{%[0-9]+}}: !llvm.ptr) {
// CHECK: [[N:%[0-9]+]] = llvm.mlir.constant(3) : i64
// CHECK-NEXT: [[ZERO:%[0-9]+]] = llvm.mlir.constant(0) : i64
// CHECK-NEXT: llvm.call @gather_then_exp_k0({{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, [[STATUS]], [[ZERO]], [[N]]) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64) -> ()
// CHECK-NEXT: [[CODE:%[0-9]+]] = llvm.load [[STATUS]] {alignment = 8 : i64} : !llvm.ptr -> i64
// CHECK-NEXT: [[Z:%[0-9]+]] = llvm.mlir.constant(0) : i64
// CHECK-NEXT: [[FAIL:%[0-9]+]] = llvm.icmp "ne" [[CODE]], [[Z]] : i64
// CHECK-NEXT: llvm.cond_br [[FAIL]], ^[[EARLY:bb[0-9]+]], ^[[CONT:bb[0-9]+]]
// CHECK-NEXT: ^[[EARLY]]:
// CHECK-NEXT: llvm.return
// CHECK-NEXT: ^[[CONT]]:
// CHECK: llvm.call @gather_then_exp_k1(
// CHECK-NEXT: llvm.return
// CHECK-NEXT: }
func.func @gather_then_exp(%d: tensor<5x4xf32>, %i: tensor<3xi32>) -> tensor<3x4xf32> {
  %g = rlx.gather %d, %i {axis = 0 : i64} : (tensor<5x4xf32>, tensor<3xi32>) -> tensor<3x4xf32>
  %e = rlx.exp %g : (tensor<3x4xf32>) -> tensor<3x4xf32>
  func.return %e : tensor<3x4xf32>
}

// -----

// A constant pad kernel (in, out, begin, end) over the 5 output rows: rows and
// columns are split into pad and interior ranges. The interior copies
// without a select; the borders select between the loaded element and the
// pad value (an f64 property, truncated to f32).

// CHECK-LABEL: llvm.func internal @pad_k0(
// CHECK-SAME: [[IN:%[0-9]+]]: !llvm.ptr {llvm.noalias}, [[OUT:%[0-9]+]]: !llvm.ptr {llvm.noalias}, [[BEGIN:%[0-9]+]]: i64, [[END:%[0-9]+]]: i64)
// CHECK: [[V:%[0-9]+]] = llvm.mlir.constant(1.500000e+00 : f64) : f64
// CHECK-NEXT: [[VT:%[0-9]+]] = llvm.fptrunc [[V]] : f64 to f32
// CHECK-NEXT: [[SEL:%[0-9]+]] = llvm.select {{%[0-9]+}}, {{%[0-9]+}}, [[VT]] : i1, f32
// CHECK-NEXT: [[PO:%[0-9]+]] = llvm.getelementptr inbounds [[OUT]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: llvm.store [[SEL]], [[PO]] {alignment = 4 : i64} : f32, !llvm.ptr
// The corner (pad row, pad column) is in range only if both axes are.
// CHECK: [[BOTH:%[0-9]+]] = llvm.and {{%[0-9]+}}, {{%[0-9]+}} : i1
// CHECK: llvm.select [[BOTH]], {{%[0-9]+}}, {{%[0-9]+}} : i1, f32
// The interior rows: a load stored as is.
// CHECK: [[PI:%[0-9]+]] = llvm.getelementptr inbounds [[IN]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: [[X:%[0-9]+]] = llvm.load [[PI]] {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK-NEXT: [[PO2:%[0-9]+]] = llvm.getelementptr inbounds [[OUT]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: llvm.store [[X]], [[PO2]] {alignment = 4 : i64} : f32, !llvm.ptr
// CHECK: llvm.return

// CHECK-LABEL: llvm.func @pad(
// CHECK: [[ROWS:%[0-9]+]] = llvm.mlir.constant(5) : i64
// CHECK-NEXT: [[ZERO:%[0-9]+]] = llvm.mlir.constant(0) : i64
// CHECK-NEXT: llvm.call @pad_k0({{.*}}, [[ZERO]], [[ROWS]]) : ({{.*}}i64, i64) -> ()
// CHECK-NEXT: llvm.return
func.func @pad(%x: tensor<3x4xf32>) -> tensor<5x6xf32> {
  %p = rlx.pad %x {before = array<i64: 1, 0>, after = array<i64: 1, 2>, value = 1.5 : f64} : (tensor<3x4xf32>) -> tensor<5x6xf32>
  func.return %p : tensor<5x6xf32>
}

// -----

// A concat is one copy kernel per input, each writing its block of the
// output at its own offset (0, 3 * 4, 5 * 4 elements); the rank-1 input is
// broadcast as one row.

// CHECK-LABEL: llvm.func internal @concat_k0_0(
// CHECK-SAME: {{%[0-9]+}}: !llvm.ptr {llvm.noalias}, {{%[0-9]+}}: !llvm.ptr {llvm.noalias}, {{%[0-9]+}}: i64, {{%[0-9]+}}: i64)
// CHECK-NEXT: llvm.mlir.constant(0) : i64
// CHECK-NEXT: llvm.mlir.constant(0) : i64
// CHECK-LABEL: llvm.func internal @concat_k0_1(
// CHECK-NEXT: llvm.mlir.constant(0) : i64
// CHECK-NEXT: llvm.mlir.constant(12) : i64
// CHECK-LABEL: llvm.func internal @concat_k0_2(
// CHECK-NEXT: llvm.mlir.constant(0) : i64
// CHECK-NEXT: llvm.mlir.constant(20) : i64
// CHECK-NOT: llvm.func internal @concat_k0_3(
// CHECK-LABEL: llvm.func @concat(
// CHECK: llvm.mlir.constant(12) : i64
// CHECK-NEXT: llvm.mlir.constant(0) : i64
// CHECK-NEXT: llvm.call @concat_k0_0(
// CHECK: llvm.mlir.constant(8) : i64
// CHECK-NEXT: llvm.mlir.constant(0) : i64
// CHECK-NEXT: llvm.call @concat_k0_1(
// CHECK: llvm.mlir.constant(4) : i64
// CHECK-NEXT: llvm.mlir.constant(0) : i64
// CHECK-NEXT: llvm.call @concat_k0_2(
// CHECK-NEXT: llvm.return
func.func @concat(%a: tensor<3x4xf32>, %b: tensor<2x4xf32>, %c: tensor<4xf32>) -> tensor<6x4xf32> {
  %r = rlx.concat %a, %b, %c {axis = 0 : i64} : (tensor<3x4xf32>, tensor<2x4xf32>, tensor<4xf32>) -> tensor<6x4xf32>
  func.return %r : tensor<6x4xf32>
}

// -----

// A transpose is a copy in 16x16 register blocks. The rows start on the
// input's cache lines and the columns on the output's (the elements from the
// pointer to the next 64-byte boundary); a block is 16 loads of 16 lanes, 64
// two-source shuffles (stage k exchanges bit k of the row and column indices:
// rows r and r + 1 first, r and r + 8 last) and 16 stores; the rows and
// columns outside whole blocks are copied element by element.

// CHECK-LABEL: llvm.func internal @transpose_k0(
// CHECK-SAME: [[IN:%[0-9]+]]: !llvm.ptr {llvm.noalias}, [[OUT:%[0-9]+]]: !llvm.ptr {llvm.noalias}, [[BEGIN:%[0-9]+]]: i64, [[END:%[0-9]+]]: i64)
// CHECK: llvm.ptrtoint [[IN]] : !llvm.ptr to i64
// CHECK: llvm.mlir.constant(63) : i64
// CHECK: llvm.ptrtoint [[OUT]] : !llvm.ptr to i64
// CHECK-COUNT-16: llvm.load {{%[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> vector<16xi32>
// CHECK-NEXT: llvm.shufflevector {{%[0-9]+}}, {{%[0-9]+}} [0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30] : vector<16xi32>
// CHECK-NEXT: llvm.shufflevector {{%[0-9]+}}, {{%[0-9]+}} [1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31] : vector<16xi32>
// CHECK: llvm.shufflevector {{%[0-9]+}}, {{%[0-9]+}} [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23] : vector<16xi32>
// CHECK-COUNT-16: llvm.store {{%[0-9]+}}, {{%[0-9]+}} {alignment = 4 : i64} : vector<16xi32>, !llvm.ptr
// CHECK: llvm.store {{%[0-9]+}}, {{%[0-9]+}} {alignment = 4 : i64} : f32, !llvm.ptr

// CHECK-LABEL: llvm.func @transpose(
// CHECK: [[N:%[0-9]+]] = llvm.mlir.constant(96) : i64
// CHECK-NEXT: [[ZERO:%[0-9]+]] = llvm.mlir.constant(0) : i64
// CHECK-NEXT: llvm.call @transpose_k0({{.*}}, [[ZERO]], [[N]]) : ({{.*}}i64, i64) -> ()
func.func @transpose(%x: tensor<64x96xf32>) -> tensor<96x64xf32> {
  %t = rlx.transpose %x {perm = array<i64: 1, 0>} : (tensor<64x96xf32>) -> tensor<96x64xf32>
  func.return %t : tensor<96x64xf32>
}
