// RUN: rlx-opt %s -p default | filecheck %s
// RUN: rlx-opt %s -p default -t llvm | filecheck %s --check-prefix=IR
// RUN: rlx-opt %s -p default | filecheck %s --check-prefix=GONE

// The whole pipeline (canonicalize-broadcast, fuse-elementwise, plan-memory,
// lower-to-llvm) under one pass name: the expand folds into the add, the
// add -> relu -> mul chain fuses into one kernel, and the result is written
// straight into the output buffer (no arena, no copy); too small to split
// across threads, it is called directly, with no thunk. No rlx op is left (the
// kernel's `rlx.keep_loops_rolled` is an attribute of its llvm.func).

// GONE-NOT: {{ rlx\.}}
// GONE-NOT: func.func

// CHECK-LABEL: llvm.func internal @bias_relu_k0(
// CHECK-SAME: [[X:%[0-9]+]]: !llvm.ptr {llvm.noalias}, [[B:%[0-9]+]]: !llvm.ptr {llvm.noalias}, [[OUT:%[0-9]+]]: !llvm.ptr {llvm.noalias}, %{{[0-9]+}}: i64, %{{[0-9]+}}: i64)
// CHECK: [[VX:%[0-9]+]] = llvm.load %{{[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK: [[VB:%[0-9]+]] = llvm.load %{{[0-9]+}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK-NEXT: [[S:%[0-9]+]] = llvm.fadd [[VX]], [[VB]] : f32
// CHECK: [[R:%[0-9]+]] = llvm.select %{{[0-9]+}}, %{{[0-9]+}}, [[S]] : i1, f32
// CHECK-NEXT: [[M:%[0-9]+]] = llvm.fmul [[R]], [[VX]] : f32
// CHECK: llvm.store [[M]], %{{[0-9]+}} {alignment = 4 : i64} : f32, !llvm.ptr
// CHECK-NOT: _thunk
// CHECK-LABEL: llvm.func @bias_relu(
// CHECK-SAME: !llvm.ptr, %{{[0-9]+}}: !llvm.ptr, %{{[0-9]+}}: !llvm.ptr, %{{[0-9]+}}: !llvm.ptr) {
// CHECK: llvm.call @bias_relu_k0(
// CHECK-NOT: llvm.call
// CHECK: llvm.return

// IR-NOT: @"bias_relu_k1"
// IR: define internal void @"bias_relu_k0"(ptr noalias {{%v[0-9]+}}, ptr noalias {{%v[0-9]+}}, ptr noalias {{%v[0-9]+}}, i64 {{%v[0-9]+}}, i64 {{%v[0-9]+}})
// IR: [[S:%v[0-9]+]] = fadd float
// IR: [[M:%v[0-9]+]] = fmul float
// IR: store float [[M]]
// IR: define void @"bias_relu"(ptr {{%v[0-9]+}}, ptr {{%v[0-9]+}}, ptr {{%v[0-9]+}}, ptr {{%v[0-9]+}})
// IR: call void @"bias_relu_k0"(ptr {{%v[0-9]+}}, ptr {{%v[0-9]+}}, ptr {{%v[0-9]+}}, i64 0, i64 4)
// IR-NOT: memcpy
// IR-NOT: @"bias_relu_k1"
func.func @bias_relu(%x: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %e = rlx.expand %b : (tensor<3xf32>) -> tensor<4x3xf32>
  %s = rlx.add %x, %e : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %r = rlx.relu %s : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %m = rlx.mul %r, %x : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %m : tensor<4x3xf32>
}
