// RUN: rlx-opt %s -p 'plan-memory,lower-to-llvm{threads=1}' | filecheck %s
// plan-memory writes %b over %a (same arena offset): the kernel computing %b
// receives one pointer twice and reads and writes through the first
// parameter alone, a same-index dependence LLVM vectorizes; every parameter
// stays noalias (the second one is unused).

// CHECK-LABEL: llvm.func internal @f_k0(
// CHECK-SAME:    !llvm.ptr {llvm.noalias}, %{{[0-9]+}}: !llvm.ptr {llvm.noalias}, %{{[0-9]+}}: i64, %{{[0-9]+}}: i64)
// CHECK-LABEL: llvm.func internal @f_k1(
// CHECK-SAME:    [[P:%[0-9]+]]: !llvm.ptr {llvm.noalias}, [[UNUSED:%[0-9]+]]: !llvm.ptr {llvm.noalias}, %{{[0-9]+}}: i64, %{{[0-9]+}}: i64)
// CHECK-NOT:     [[UNUSED]]{{[^0-9]}}
// CHECK:         [[IN:%[0-9]+]] = llvm.getelementptr inbounds [[P]][%{{[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    [[X:%[0-9]+]] = llvm.load [[IN]]
// CHECK-NEXT:    [[Y:%[0-9]+]] = llvm.fneg [[X]] : f32
// CHECK-NEXT:    [[OUT:%[0-9]+]] = llvm.getelementptr inbounds [[P]][%{{[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    llvm.store [[Y]], [[OUT]]
// CHECK-NOT:     [[UNUSED]]{{[^0-9]}}
// CHECK-LABEL: llvm.func internal @f_k2(
// CHECK-SAME:    !llvm.ptr {llvm.noalias}, %{{[0-9]+}}: !llvm.ptr {llvm.noalias}, %{{[0-9]+}}: i64, %{{[0-9]+}}: i64)
// CHECK-LABEL: llvm.func @f(
// The one arena slot %a and %b share is computed once and passed for both.
// CHECK:         llvm.getelementptr inbounds %{{[0-9]+}}[%{{[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK-NOT:     llvm.getelementptr inbounds %{{[0-9]+}}[%{{[0-9]+}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK:         llvm.return
func.func @f(%x: tensor<16xf32>) -> tensor<16xf32> {
  %a = rlx.exp %x : (tensor<16xf32>) -> tensor<16xf32>
  %b = rlx.neg %a : (tensor<16xf32>) -> tensor<16xf32>
  %c = rlx.sin %b : (tensor<16xf32>) -> tensor<16xf32>
  func.return %c : tensor<16xf32>
}
