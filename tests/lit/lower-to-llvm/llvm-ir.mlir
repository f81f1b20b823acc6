// RUN: rlx-opt %s -p 'plan-memory,lower-to-llvm{threads=1}' -t llvm | filecheck %s
// RUN: rlx-opt %s -p 'plan-memory,lower-to-llvm{threads=1}' | rlx-opt -t llvm | filecheck %s
// RUN: rlx-opt %s -p 'plan-memory,lower-to-llvm{threads=1}' | filecheck %s --check-prefix=ATTRS

// `-t llvm` prints LLVM IR text (what the JIT compiles): kernels internal and
// `noinline`, the entry external (lowering/core/translate.py). One thread: the
// entry calls the kernel itself, with no thunk. The text starts with the data
// layout and triple of the machine lowered for (here x86-64-v4: lit.cfg.py),
// which lower-to-llvm records as MLIR's module attributes, so `llc` compiles
// it for that machine; they survive a round trip through the text.

// ATTRS: builtin.module attributes {llvm.data_layout = "e-{{.+}}", llvm.target_triple = "{{.+}}"}

// CHECK: target datalayout = "e-{{.+}}"
// CHECK-NEXT: target triple = "{{.+}}"
// CHECK-EMPTY:

// CHECK: define internal void @"f_k0"(ptr noalias [[IN0:%v[0-9]+]], ptr noalias [[IN1:%v[0-9]+]], ptr noalias [[OUT:%v[0-9]+]], i64 [[BEGIN:%v[0-9]+]], i64 [[END:%v[0-9]+]]) noinline {
// CHECK: phi i64 {{\[}} [[BEGIN]], %b0 ]
// CHECK: icmp slt i64 {{.*}}, [[END]]
// CHECK: [[PA:%v[0-9]+]] = getelementptr inbounds float, ptr [[IN0]], i64
// CHECK-NEXT: [[VA:%v[0-9]+]] = load float, ptr [[PA]], align 4
// CHECK-NEXT: [[PB:%v[0-9]+]] = getelementptr inbounds float, ptr [[IN1]], i64
// CHECK-NEXT: [[VB:%v[0-9]+]] = load float, ptr [[PB]], align 4
// CHECK-NEXT: [[S:%v[0-9]+]] = fadd float [[VA]], [[VB]]
// CHECK-NEXT: [[PO:%v[0-9]+]] = getelementptr inbounds float, ptr [[OUT]], i64
// CHECK-NEXT: store float [[S]], ptr [[PO]], align 4
// CHECK: ret void

// CHECK: define void @"f"(ptr [[ARENA:%v[0-9]+]], ptr [[IO:%v[0-9]+]], ptr [[STATUS:%v[0-9]+]], ptr [[CONSTANTS:%v[0-9]+]])
// CHECK: call void @"f_k0"(ptr {{%v[0-9]+}}, ptr {{%v[0-9]+}}, ptr {{%v[0-9]+}}, i64 0, i64 8)
// CHECK: call void @"llvm.memcpy.p0.p0.i64"(ptr {{%v[0-9]+}}, ptr {{%v[0-9]+}}, i64 32, i1 0)
// CHECK: ret void
// CHECK: declare void @"llvm.memcpy.p0.p0.i64"(ptr
func.func @f(%a: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %s = rlx.add %a, %b : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  func.return %s, %a : tensor<8xf32>, tensor<8xf32>
}
