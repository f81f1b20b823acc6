// RUN: rlx-opt %s --split-input-file -p fuse-siblings | filecheck %s

// Cases the pass must leave alone.

// The second op depends on the first through a reduction and an expand:
// merging them would make the region feed itself.

// CHECK-LABEL: func.func @dependent(
// CHECK-NOT: rlx.elementwise_region
// CHECK: rlx.add
// CHECK: rlx.reduce_sum
// CHECK: rlx.expand
// CHECK: rlx.mul
func.func @dependent(%x: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %s = rlx.add %x, %b : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %r = rlx.reduce_sum %s {axes = array<i64: 0>} : (tensor<4x3xf32>) -> tensor<3xf32>
  %e = rlx.expand %r : (tensor<3xf32>) -> tensor<4x3xf32>
  %m = rlx.mul %x, %e : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %m : tensor<4x3xf32>
}

// -----

// A direct producer -> consumer pair is fuse-elementwise's job, not a sibling pair.

// CHECK-LABEL: func.func @consumer(
// CHECK-NOT: rlx.elementwise_region
// CHECK: rlx.add
// CHECK-NEXT: rlx.mul
func.func @consumer(%x: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %s = rlx.add %x, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %m = rlx.mul %x, %s : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %m : tensor<4xf32>
}

// -----

// Different iteration shapes: the second op broadcasts %x to 2x4x3.

// CHECK-LABEL: func.func @shapes(
// CHECK-NOT: rlx.elementwise_region
// CHECK: rlx.neg
// CHECK-NEXT: rlx.add
func.func @shapes(%x: tensor<4x3xf32>, %y: tensor<2x4x3xf32>) -> (tensor<4x3xf32>, tensor<2x4x3xf32>) {
  %n = rlx.neg %x : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %a = rlx.add %x, %y : (tensor<4x3xf32>, tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
  func.return %n, %a : tensor<4x3xf32>, tensor<2x4x3xf32>
}

// -----

// The same value read through different maps (one transposed) is not a
// shared read: merging would save no traffic.

// CHECK-LABEL: func.func @maps(
// CHECK: rlx.neg
// CHECK-NEXT: rlx.elementwise_region
// CHECK-NOT: rlx.elementwise_region
func.func @maps(%x: tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3x3xf32>) {
  %n = rlx.neg %x : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %t = rlx.elementwise_region ins(%x : tensor<3x3xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>]} -> tensor<3x3xf32> {
  ^bb0(%v: f32):
    %e = rlx.exp %v : (f32) -> f32
    rlx.yield %e : f32
  }
  func.return %n, %t : tensor<3x3xf32>, tensor<3x3xf32>
}

// -----

// Ops over one shape that share no input are not siblings.

// CHECK-LABEL: func.func @no_shared_input(
// CHECK-NOT: rlx.elementwise_region
func.func @no_shared_input(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %n = rlx.neg %x : (tensor<4xf32>) -> tensor<4xf32>
  %m = rlx.neg %y : (tensor<4xf32>) -> tensor<4xf32>
  func.return %n, %m : tensor<4xf32>, tensor<4xf32>
}
