// RUN: rlx-opt %s -p 'autodiff{wrt=0,1}' | filecheck %s
// RUN: rlx-opt %s -p 'autodiff{wrt=0,1 checkpoints=griewank}' | filecheck %s --check-prefix=GRIEWANK

// A scan's adjoint is an rlx.scan_backward whose vjp body is the body
// differentiated by the same pass. The forward is replaced by a scan that
// saves every carry (the original final carry is a view of its last row), or
// with checkpoints=segments|griewank, ceil(sqrt(length)) of them plus the
// forward body to recompute the rest.

// CHECK-LABEL: func.func @decay(
// CHECK-SAME: [[C0:%[a-zA-Z0-9_]+]]: tensor<4xf32>, [[W:%[a-zA-Z0-9_]+]]: tensor<4xf32>, [[XS:%[a-zA-Z0-9_]+]]: tensor<9x4xf32>, [[D:%[a-zA-Z0-9_]+]]: tensor<4xf32>
// CHECK-NEXT: [[SAVED:%[a-zA-Z0-9_]+]] = rlx.scan [[C0]], [[W]], [[XS]] {length = 9 : i64, num_broadcast = 1 : i64, save_trajectory = true} : (tensor<4xf32>, tensor<4xf32>, tensor<9x4xf32>) -> tensor<9x4xf32> {
// CHECK: rlx.narrow [[SAVED]] {axis = 0 : i64, start = 8 : i64, length = 1 : i64}
// CHECK: [[FINAL:%[a-zA-Z0-9_]+]] = rlx.reshape
// CHECK: [[DI:%[a-zA-Z0-9_]+]], [[DW:%[a-zA-Z0-9_]+]], [[DX:%[a-zA-Z0-9_]+]] = rlx.scan_backward [[C0]], [[SAVED]], [[D]], [[W]], [[XS]] {length = 9 : i64, num_broadcast = 1 : i64} : {{.*}} vjp {
// CHECK-NEXT: ^{{.*}}([[C:%[a-zA-Z0-9_]+]]: tensor<4xf32>, [[WW:%[a-zA-Z0-9_]+]]: tensor<4xf32>, %{{.*}}: tensor<4xf32>, [[G:%[a-zA-Z0-9_]+]]: tensor<4xf32>):
// CHECK-DAG: rlx.mul [[G]], [[WW]]
// CHECK-DAG: rlx.mul [[G]], [[C]]
// CHECK: rlx.yield
// CHECK-NOT: forward
// CHECK: func.return [[FINAL]], [[DI]], [[DW]] :

// GRIEWANK-LABEL: func.func @decay(
// GRIEWANK: rlx.scan {{.*}} {length = 9 : i64, num_broadcast = 1 : i64, save_trajectory = true, num_checkpoints = 3 : i64} : {{.*}} -> tensor<3x4xf32>
// GRIEWANK: rlx.narrow %{{.*}} {axis = 0 : i64, start = 2 : i64, length = 1 : i64}
// GRIEWANK: rlx.scan_backward {{.*}} {length = 9 : i64, num_broadcast = 1 : i64, num_checkpoints = 3 : i64, mode = "griewank"}
// GRIEWANK: } forward {
func.func @decay(%c0: tensor<4xf32>, %w: tensor<4xf32>, %xs: tensor<9x4xf32>) -> tensor<4xf32> {
  %r = rlx.scan %c0, %w, %xs {length = 9 : i64, num_broadcast = 1 : i64} : (tensor<4xf32>, tensor<4xf32>, tensor<9x4xf32>) -> tensor<4xf32> {
  ^bb0(%c: tensor<4xf32>, %ww: tensor<4xf32>, %x: tensor<4xf32>):
    %m = rlx.mul %c, %ww : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %s = rlx.add %m, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    rlx.yield %s : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}
