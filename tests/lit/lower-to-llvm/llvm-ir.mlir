// RUN: rlx-opt %s -p 'plan-memory,lower-to-llvm{threads=1}' -t llvm | filecheck %s

// `-t llvm` prints LLVM IR text (what the JIT compiles).

// CHECK: define void @"f_k0"(ptr noalias [[IN0:%"[.0-9]+"]], ptr noalias [[IN1:%"[.0-9]+"]], ptr noalias [[OUT:%"[.0-9]+"]], i64 [[BEGIN:%"[.0-9]+"]], i64 [[END:%"[.0-9]+"]])
// CHECK: phi i64 {{\[}}[[BEGIN]], {{.*}}]
// CHECK: icmp slt i64 {{.*}}, [[END]]
// CHECK: [[PA:%"[.0-9]+"]] = getelementptr inbounds float, ptr [[IN0]], i64
// CHECK-NEXT: [[VA:%"[.0-9]+"]] = load float, ptr [[PA]], align 4
// CHECK-NEXT: [[PB:%"[.0-9]+"]] = getelementptr inbounds float, ptr [[IN1]], i64
// CHECK-NEXT: [[VB:%"[.0-9]+"]] = load float, ptr [[PB]], align 4
// CHECK-NEXT: [[S:%"[.0-9]+"]] = fadd float [[VA]], [[VB]]
// CHECK-NEXT: [[PO:%"[.0-9]+"]] = getelementptr inbounds float, ptr [[OUT]], i64
// CHECK-NEXT: store float [[S]], ptr [[PO]], align 4
// CHECK: ret void

// CHECK: define void @"f_k0_thunk"(ptr {{%"[.0-9]+"}}, i64 {{%"[.0-9]+"}}, i64 {{%"[.0-9]+"}})
// CHECK: call ccc void @"f_k0"(ptr

// CHECK: define void @"f"(ptr [[ARENA:%"[.0-9]+"]], ptr [[IO:%"[.0-9]+"]], ptr [[STATUS:%"[.0-9]+"]], ptr [[CONSTANTS:%"[.0-9]+"]])
// CHECK: call ccc void @"f_k0_thunk"(ptr {{%"[.0-9]+"}}, i64 0, i64 8)
// CHECK: call void @"llvm.memcpy.p0.p0.i64"(ptr {{%"[.0-9]+"}}, ptr {{%"[.0-9]+"}}, i64 32, i1 0)
// CHECK: ret void
// CHECK: declare void @"llvm.memcpy.p0.p0.i64"(ptr
func.func @f(%a: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %s = rlx.add %a, %b : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  func.return %s, %a : tensor<8xf32>, tensor<8xf32>
}
