// RUN: rlx-opt %s -p 'autodiff{wrt=1}' | filecheck %s

// x [5, 2, 3] @ W [3, 4]: W is shared by the batch, so dW = Xᵀ g is one GEMM
// over the 10 rows of x (reshaped to [10, 3]), not five [3, 4] products
// summed by a reduce_sum (for a scan's hoisted input projection that
// intermediate was [steps, K, N]).

// CHECK-LABEL: func.func @projection(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<5x2x3xf32>, [[W:%[a-zA-Z0-9_]+]]: tensor<3x4xf32>, [[G:%[a-zA-Z0-9_]+]]: tensor<5x2x4xf32>
// CHECK-DAG: [[X2:%[a-zA-Z0-9_]+]] = rlx.reshape [[X]] : (tensor<5x2x3xf32>) -> tensor<10x3xf32>
// CHECK-DAG: [[G2:%[a-zA-Z0-9_]+]] = rlx.reshape [[G]] : (tensor<5x2x4xf32>) -> tensor<10x4xf32>
// CHECK: [[DW:%[a-zA-Z0-9_]+]] = rlx.matmul [[X2]], [[G2]] {transpose_lhs = true} : (tensor<10x3xf32>, tensor<10x4xf32>) -> tensor<3x4xf32>
// CHECK-NOT: rlx.reduce_sum
// CHECK: func.return %{{.*}}, [[DW]]
func.func @projection(%x: tensor<5x2x3xf32>, %w: tensor<3x4xf32>) -> tensor<5x2x4xf32> {
  %y = rlx.matmul %x, %w : (tensor<5x2x3xf32>, tensor<3x4xf32>) -> tensor<5x2x4xf32>
  func.return %y : tensor<5x2x4xf32>
}
