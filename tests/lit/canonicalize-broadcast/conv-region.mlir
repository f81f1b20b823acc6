// RUN: rlx-opt %s --split-input-file -p canonicalize-broadcast | filecheck %s

// An rlx.conv_region reads an epilogue input with the spatial axes all
// broadcast or all as its result walks them (each kernel unit finishes a plane
// in order). A transpose that keeps the spatial axes in place folds into the
// input's map; one that swaps them stays a copy of its own, instead of a map
// the region's verifier rejects (SqueezeBERT's exports put a transpose of a
// [batch, width, seq] value after a 1-d conv).

// CHECK-LABEL: func.func @fold_channel_transpose(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<1x8x4x4xf32>, [[W:%[a-zA-Z0-9_]+]]: tensor<8x8x1x1xf32>, [[R:%[a-zA-Z0-9_]+]]: tensor<8x1x4x4xf32>
// CHECK-NOT: rlx.transpose
// CHECK: rlx.conv_region ins([[X]], [[W]], [[R]] : tensor<1x8x4x4xf32>, tensor<8x8x1x1xf32>, tensor<8x1x4x4xf32>) {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1, d0, d2, d3)>]
func.func @fold_channel_transpose(%x: tensor<1x8x4x4xf32>, %w: tensor<8x8x1x1xf32>, %r: tensor<8x1x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %t = rlx.transpose %r {perm = array<i64: 1, 0, 2, 3>} : (tensor<8x1x4x4xf32>) -> tensor<1x8x4x4xf32>
  %y = rlx.conv_region ins(%x, %w, %t : tensor<1x8x4x4xf32>, tensor<8x8x1x1xf32>, tensor<1x8x4x4xf32>) {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_before = array<i64: 0, 0>, pad_after = array<i64: 0, 0>, groups = 1 : i64} -> tensor<1x8x4x4xf32> {
  ^bb0(%acc: f32, %res: f32):
    %s = rlx.add %acc, %res : (f32, f32) -> f32
    rlx.yield %s : f32
  }
  func.return %y : tensor<1x8x4x4xf32>
}

// -----

// CHECK-LABEL: func.func @keep_spatial_transpose(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<1x8x4x4xf32>, [[W:%[a-zA-Z0-9_]+]]: tensor<8x8x1x1xf32>, [[R:%[a-zA-Z0-9_]+]]: tensor<1x8x4x4xf32>
// CHECK: [[T:%[a-zA-Z0-9_]+]] = rlx.transpose [[R]] {perm = array<i64: 0, 1, 3, 2>}
// CHECK: rlx.conv_region ins([[X]], [[W]], [[T]] : tensor<1x8x4x4xf32>, tensor<8x8x1x1xf32>, tensor<1x8x4x4xf32>) {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>]
func.func @keep_spatial_transpose(%x: tensor<1x8x4x4xf32>, %w: tensor<8x8x1x1xf32>, %r: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %t = rlx.transpose %r {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %y = rlx.conv_region ins(%x, %w, %t : tensor<1x8x4x4xf32>, tensor<8x8x1x1xf32>, tensor<1x8x4x4xf32>) {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_before = array<i64: 0, 0>, pad_after = array<i64: 0, 0>, groups = 1 : i64} -> tensor<1x8x4x4xf32> {
  ^bb0(%acc: f32, %res: f32):
    %s = rlx.add %acc, %res : (f32, f32) -> f32
    rlx.yield %s : f32
  }
  func.return %y : tensor<1x8x4x4xf32>
}
