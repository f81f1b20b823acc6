// RUN: rlx-opt %s --split-input-file -p 'plan-memory,lower-to-llvm{threads=1}' | filecheck %s

// One elementwise op becomes a kernel `(ptr in..., ptr out..., i64 begin,
// i64 end)` with noalias pointers and a counted loop, and the entry
// `(ptr arena, ptr io)`, which calls it over the whole range: one thread
// needs no thunk (tests/lit/lower-to-llvm/parallel.mlir has one). The returned argument
// %a is copied into its output with llvm.memcpy.

// CHECK-LABEL: llvm.func internal @add_k0(
// CHECK-SAME: [[IN0:%[0-9]+]]: !llvm.ptr {llvm.noalias}, [[IN1:%[0-9]+]]: !llvm.ptr {llvm.noalias}, [[OUT:%[0-9]+]]: !llvm.ptr {llvm.noalias}, [[BEGIN:%[0-9]+]]: i64, [[END:%[0-9]+]]: i64)
// CHECK: llvm.br ^[[HEAD:bb[0-9]+]]([[BEGIN]] : i64)
// CHECK-NEXT: ^[[HEAD]]([[I:%[0-9]+]]: i64):
// CHECK-NEXT: [[CMP:%[0-9]+]] = llvm.icmp "slt" [[I]], [[END]] : i64
// CHECK-NEXT: llvm.cond_br [[CMP]], ^[[BODY:bb[0-9]+]], ^[[EXIT:bb[0-9]+]]
// CHECK-NEXT: ^[[BODY]]:
// CHECK: [[PA:%[0-9]+]] = llvm.getelementptr inbounds [[IN0]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: [[VA:%[0-9]+]] = llvm.load [[PA]] {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK-NEXT: [[PB:%[0-9]+]] = llvm.getelementptr inbounds [[IN1]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: [[VB:%[0-9]+]] = llvm.load [[PB]] {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK-NEXT: [[SUM:%[0-9]+]] = llvm.fadd [[VA]], [[VB]] : f32
// CHECK-NEXT: [[PO:%[0-9]+]] = llvm.getelementptr inbounds [[OUT]][{{%[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: llvm.store [[SUM]], [[PO]] {alignment = 4 : i64} : f32, !llvm.ptr
// CHECK-NEXT: [[ONE:%[0-9]+]] = llvm.mlir.constant(1) : i64
// CHECK-NEXT: [[NEXT:%[0-9]+]] = llvm.add [[I]], [[ONE]] : i64
// CHECK-NEXT: llvm.br ^[[HEAD]]([[NEXT]] : i64)
// CHECK-NEXT: ^[[EXIT]]:
// CHECK-NEXT: llvm.return

// CHECK-LABEL: llvm.func @add(
// CHECK-SAME: [[ARENA:%[0-9]+]]: !llvm.ptr, [[IO:%[0-9]+]]: !llvm.ptr, [[STATUS:%[0-9]+]]: !llvm.ptr, [[CONSTANTS:%[0-9]+]]: !llvm.ptr) {
// CHECK-NEXT: [[IO0:%[0-9]+]] = llvm.getelementptr inbounds [[IO]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT: [[A:%[0-9]+]] = llvm.load [[IO0]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: [[IO1:%[0-9]+]] = llvm.getelementptr inbounds [[IO]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT: [[B:%[0-9]+]] = llvm.load [[IO1]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: [[IO2:%[0-9]+]] = llvm.getelementptr inbounds [[IO]][2] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT: [[R:%[0-9]+]] = llvm.load [[IO2]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: [[EXTENT:%[0-9]+]] = llvm.mlir.constant(8) : i64
// CHECK-NEXT: [[ZERO:%[0-9]+]] = llvm.mlir.constant(0) : i64
// CHECK-NEXT: llvm.call @add_k0([[A]], [[B]], [[R]], [[ZERO]], [[EXTENT]]) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64) -> ()
// CHECK-NEXT: [[BYTES:%[0-9]+]] = llvm.mlir.constant(32) : i64
// CHECK-NEXT: [[IO3:%[0-9]+]] = llvm.getelementptr inbounds [[IO]][3] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT: [[DST:%[0-9]+]] = llvm.load [[IO3]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: [[VOLATILE:%[0-9]+]] = llvm.mlir.constant(false) : i1
// CHECK-NEXT: llvm.call_intrinsic "llvm.memcpy.p0.p0.i64"([[DST]], [[A]], [[BYTES]], [[VOLATILE]]) : (!llvm.ptr, !llvm.ptr, i64, i1) -> ()
// CHECK-NEXT: llvm.return
// CHECK-NOT: func.func
// CHECK-NOT: rlx.
func.func @add(%a: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %s = rlx.add %a, %b : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  func.return %s, %a : tensor<8xf32>, tensor<8xf32>
}

// -----

// A 2-D kernel with a broadcast input is a loop nest: the outer loop over
// [begin, end) rows (the launch extent is 4), the inner one over 3 columns.

// CHECK-LABEL: llvm.func internal @bias_k0(
// CHECK-SAME: !llvm.ptr {llvm.noalias}, %{{[0-9]+}}: !llvm.ptr {llvm.noalias}, %{{[0-9]+}}: !llvm.ptr {llvm.noalias}, %{{[0-9]+}}: i64, [[END:%[0-9]+]]: i64)
// CHECK: ^[[OUTER:bb[0-9]+]]([[I:%[0-9]+]]: i64):
// CHECK-NEXT: llvm.icmp "slt" [[I]], [[END]] : i64
// CHECK: llvm.mul [[I]], %{{[0-9]+}} : i64
// CHECK: llvm.br ^[[INNER:bb[0-9]+]](%{{[0-9]+}} : i64)
// CHECK-NEXT: ^[[INNER]]([[J:%[0-9]+]]: i64):
// CHECK-NEXT: llvm.icmp "slt" [[J]], %{{[0-9]+}} : i64
// CHECK: llvm.fadd
// CHECK: llvm.br ^[[INNER]]
// CHECK: llvm.br ^[[OUTER]]
// CHECK-LABEL: llvm.func @bias(
// CHECK: [[ROWS:%[0-9]+]] = llvm.mlir.constant(4) : i64
// CHECK-NEXT: [[ZERO:%[0-9]+]] = llvm.mlir.constant(0) : i64
// CHECK-NEXT: llvm.call @bias_k0({{.*}}, [[ZERO]], [[ROWS]])
func.func @bias(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %s = rlx.add %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  func.return %s : tensor<4x3xf32>
}

// -----

// Intermediates live in the arena at their planned offsets (0 and 64 here):
// the entry passes `arena + offset` to the kernels, offsets as i64 values
// (a constant GEP index would be 32 bits).

// CHECK-LABEL: llvm.func @arena_offsets(
// CHECK-SAME: [[ARENA:%[0-9]+]]: !llvm.ptr, [[IO:%[0-9]+]]: !llvm.ptr, [[STATUS:%[0-9]+]]: !llvm.ptr, [[CONSTANTS:%[0-9]+]]: !llvm.ptr) {
// CHECK: [[ZERO:%[0-9]+]] = llvm.mlir.constant(0) : i64
// CHECK-NEXT: [[A:%[0-9]+]] = llvm.getelementptr inbounds [[ARENA]][[[ZERO]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK: llvm.call @arena_offsets_k0({{%[0-9]+}}, [[A]], {{%[0-9]+}}, {{%[0-9]+}})
// CHECK: [[SIXTY_FOUR:%[0-9]+]] = llvm.mlir.constant(64) : i64
// CHECK-NEXT: [[B:%[0-9]+]] = llvm.getelementptr inbounds [[ARENA]][[[SIXTY_FOUR]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK: llvm.call @arena_offsets_k1({{%[0-9]+}}, [[B]], {{%[0-9]+}}, {{%[0-9]+}})
// CHECK: llvm.call @arena_offsets_k2([[A]], [[B]], {{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}})
// CHECK-NOT: memcpy
func.func @arena_offsets(%x: tensor<16xf32>) -> tensor<16xf32> {
  %a = rlx.exp %x : (tensor<16xf32>) -> tensor<16xf32>
  %b = rlx.neg %x : (tensor<16xf32>) -> tensor<16xf32>
  %c = rlx.add %a, %b : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  func.return %c : tensor<16xf32>
}

// -----

// An expand that canonicalization could not fold is lowered as a copy kernel
// reading its source through the broadcast index (inner index only).

// CHECK-LABEL: llvm.func internal @expand_k0(
// CHECK-SAME: [[SRC:%[0-9]+]]: !llvm.ptr {llvm.noalias}, [[DST:%[0-9]+]]: !llvm.ptr {llvm.noalias}, %{{[0-9]+}}: i64, %{{[0-9]+}}: i64)
// CHECK: [[V:%[0-9]+]] = llvm.load %{{[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK-NEXT: [[P:%[0-9]+]] = llvm.getelementptr inbounds [[DST]][%{{[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: llvm.store [[V]], [[P]] {alignment = 4 : i64} : f32, !llvm.ptr
// CHECK-LABEL: llvm.func @expand(
// CHECK-NOT: rlx.expand
func.func @expand(%x: tensor<3xf32>) -> tensor<4x3xf32> {
  %e = rlx.expand %x : (tensor<3xf32>) -> tensor<4x3xf32>
  func.return %e : tensor<4x3xf32>
}

// -----

// i1 elements are stored as one byte (zext to i8).

// CHECK-LABEL: llvm.func internal @compare_k0(
// CHECK: [[C:%[0-9]+]] = llvm.fcmp "ogt" %{{[0-9]+}}, %{{[0-9]+}} : f32
// CHECK-NEXT: [[Z:%[0-9]+]] = llvm.zext [[C]] : i1 to i8
// CHECK-NEXT: [[P:%[0-9]+]] = llvm.getelementptr inbounds %{{[0-9]+}}[%{{[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK-NEXT: llvm.store [[Z]], [[P]] {alignment = 1 : i64} : i8, !llvm.ptr
func.func @compare(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xi1> {
  %p = rlx.gt %x, %y : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
  func.return %p : tensor<8xi1>
}

// -----

// Two kernel parameters bound to the same buffer (an input and a reshape view
// of it): the kernel reads both operands through the first one and the second
// is unused, so all stay noalias.

// CHECK-LABEL: llvm.func internal @shared_input_k1(
// CHECK-SAME: [[IN:%[0-9]+]]: !llvm.ptr {llvm.noalias}, [[UNUSED:%[0-9]+]]: !llvm.ptr {llvm.noalias}, %{{[0-9]+}}: !llvm.ptr {llvm.noalias}, %{{[0-9]+}}: i64, %{{[0-9]+}}: i64)
// CHECK-NOT: [[UNUSED]]{{[^0-9]}}
// CHECK: llvm.getelementptr inbounds [[IN]]
// CHECK: llvm.getelementptr inbounds [[IN]]
// CHECK-NOT: [[UNUSED]]{{[^0-9]}}
// CHECK-LABEL: llvm.func @shared_input(
// CHECK: [[X:%[0-9]+]] = llvm.load
// CHECK: llvm.call @shared_input_k1([[X]], [[X]], %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}})
func.func @shared_input(%x: tensor<16xf32>) -> tensor<1x16xf32> {
  %r = rlx.reshape %x : (tensor<16xf32>) -> tensor<1x16xf32>
  %s = rlx.add %x, %r : (tensor<16xf32>, tensor<1x16xf32>) -> tensor<1x16xf32>
  func.return %s : tensor<1x16xf32>
}
