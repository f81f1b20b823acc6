// RUN: rlx-opt %s --split-input-file -p fuse-elementwise,fuse-reductions,canonicalize-broadcast | filecheck %s

// reduce_sum(x * x): the square is the reduction region's prologue; x is read
// once and x * x never materialized.

// CHECK-LABEL: func.func @sum_of_squares(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<64x128xf32>
// CHECK-NOT: rlx.reduce_sum
// CHECK-NEXT: [[S:%[a-zA-Z0-9_]+]] = rlx.reduction_region ins([[X]] : tensor<64x128xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iteration_shape = array<i64: 64, 128>, iterator_types = ["parallel", "reduction"], reduction = "reduce_sum"} -> tensor<64xf32> {
// CHECK-NEXT: ^{{.*}}([[A:%[a-zA-Z0-9_]+]]: f32):
// CHECK-NEXT: [[M:%[a-zA-Z0-9_]+]] = rlx.mul [[A]], [[A]] : (f32, f32) -> f32
// CHECK-NEXT: rlx.yield [[M]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return [[S]] : tensor<64xf32>
func.func @sum_of_squares(%x: tensor<64x128xf32>) -> tensor<64xf32> {
  %m = rlx.mul %x, %x : (tensor<64x128xf32>, tensor<64x128xf32>) -> tensor<64x128xf32>
  %s = rlx.reduce_sum %m {axes = array<i64: 1>} : (tensor<64x128xf32>) -> tensor<64xf32>
  func.return %s : tensor<64xf32>
}

// -----

// A fused chain with a broadcast bias becomes the prologue, the bias read
// through its (d1) map; with keepdims the region's result keeps the reduced
// dims as 1 (the same elements in the same order).

// CHECK-LABEL: func.func @chain_keepdims(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<64x128xf32>, [[B:%[a-zA-Z0-9_]+]]: tensor<128xf32>
// CHECK-NEXT: [[R:%[a-zA-Z0-9_]+]] = rlx.reduction_region ins([[X]], [[B]] : tensor<64x128xf32>, tensor<128xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iteration_shape = array<i64: 64, 128>, iterator_types = ["parallel", "reduction"], reduction = "reduce_max"} -> tensor<64x1xf32> {
// CHECK-NEXT: ^{{.*}}([[P:%[a-zA-Z0-9_]+]]: f32, [[Q:%[a-zA-Z0-9_]+]]: f32):
// CHECK-NEXT: [[A:%[a-zA-Z0-9_]+]] = rlx.add [[P]], [[Q]] : (f32, f32) -> f32
// CHECK-NEXT: [[T:%[a-zA-Z0-9_]+]] = rlx.tanh [[A]] : (f32) -> f32
// CHECK-NEXT: rlx.yield [[T]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return [[R]] : tensor<64x1xf32>
func.func @chain_keepdims(%x: tensor<64x128xf32>, %b: tensor<128xf32>) -> tensor<64x1xf32> {
  %a = rlx.add %x, %b : (tensor<64x128xf32>, tensor<128xf32>) -> tensor<64x128xf32>
  %t = rlx.tanh %a : (tensor<64x128xf32>) -> tensor<64x128xf32>
  %k = rlx.reduce_max %t {axes = array<i64: -1>, keepdims = true} : (tensor<64x128xf32>) -> tensor<64x1xf32>
  func.return %k : tensor<64x1xf32>
}

// -----

// A transpose feeding the prologue folds into the region's index map, and
// reducing the leading axis marks d0 as the reduction dimension.

// CHECK-LABEL: func.func @transposed_column_mean(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<8x4xf32>
// CHECK-NEXT: [[R:%[a-zA-Z0-9_]+]] = rlx.reduction_region ins([[X]] : tensor<8x4xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>], iteration_shape = array<i64: 4, 8>, iterator_types = ["reduction", "parallel"], reduction = "reduce_mean"} -> tensor<8xf32> {
// CHECK: rlx.exp
// CHECK: func.return [[R]] : tensor<8xf32>
func.func @transposed_column_mean(%x: tensor<8x4xf32>) -> tensor<8xf32> {
  %t = rlx.transpose %x {perm = array<i64: 1, 0>} : (tensor<8x4xf32>) -> tensor<4x8xf32>
  %e = rlx.exp %t : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = rlx.reduce_mean %e {axes = array<i64: 0>} : (tensor<4x8xf32>) -> tensor<8xf32>
  func.return %m : tensor<8xf32>
}

// -----

// Left alone: the producer has another user (fusing would compute it twice),
// and a reduction of a function argument has no prologue.

// CHECK-LABEL: func.func @shared_producer(
// CHECK-NOT: rlx.reduction_region
// CHECK: rlx.reduce_sum
// CHECK: rlx.reduce_prod
// CHECK-NOT: rlx.reduction_region
// CHECK: func.return
func.func @shared_producer(%x: tensor<4x3xf32>) -> (tensor<4xf32>, tensor<4x3xf32>, tensor<4xf32>) {
  %e = rlx.exp %x : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %s = rlx.reduce_sum %e {axes = array<i64: 1>} : (tensor<4x3xf32>) -> tensor<4xf32>
  %p = rlx.reduce_prod %x {axes = array<i64: 1>} : (tensor<4x3xf32>) -> tensor<4xf32>
  func.return %s, %e, %p : tensor<4xf32>, tensor<4x3xf32>, tensor<4xf32>
}

// -----

// A reduction of a broadcast: the reduce becomes a region of its input as it
// is, and canonicalize-broadcast folds the expand into the region's map, so
// the broadcast is never materialized (a splat constant stays one value).

// CHECK-LABEL: func.func @sum_of_a_broadcast(
// CHECK-SAME: [[C:%[a-zA-Z0-9_]+]]: tensor<f32>
// CHECK-NOT: rlx.expand
// CHECK-NEXT: [[S:%[a-zA-Z0-9_]+]] = rlx.reduction_region ins([[C]] : tensor<f32>) {indexing_maps = [affine_map<(d0, d1) -> ()>], iteration_shape = array<i64: 1000, 1000>, iterator_types = ["reduction", "reduction"], reduction = "reduce_sum"} -> tensor<f32> {
// CHECK: func.return [[S]] : tensor<f32>
func.func @sum_of_a_broadcast(%c: tensor<f32>) -> tensor<f32> {
  %e = rlx.expand %c : (tensor<f32>) -> tensor<1000x1000xf32>
  %s = rlx.reduce_sum %e {axes = array<i64: 0, 1>} : (tensor<1000x1000xf32>) -> tensor<f32>
  func.return %s : tensor<f32>
}
