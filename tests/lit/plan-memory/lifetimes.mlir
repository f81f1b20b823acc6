// RUN: rlx-opt %s --split-input-file -p plan-memory | filecheck %s

// Offsets are 64-byte aligned; tensor<16xf32> is exactly 64 bytes. A value
// returned by the function is written straight into the caller's output
// (offset -1), so only intermediates take arena space.

// Disjoint lifetimes: %a dies at the mul, %c is born after it and reuses
// offset 0 (no in-place here: %b has a different size than %a).

// CHECK-LABEL: func.func @disjoint_lifetimes_reuse(
// CHECK-SAME: attributes {rlx.arena_size = 64 : i64, rlx.arena_lower_bound = 64 : i64}
// CHECK-NEXT: rlx.exp {{.*}} {rlx.offsets = array<i64: 0>}
// CHECK-NEXT: rlx.mul {{.*}} {rlx.offsets = array<i64: -1>}
// CHECK-NEXT: rlx.neg {{.*}} {rlx.offsets = array<i64: 0>}
// CHECK-NEXT: rlx.add {{.*}} {rlx.offsets = array<i64: -1>}
// CHECK-NEXT: func.return
func.func @disjoint_lifetimes_reuse(%x: tensor<16xf32>, %y: tensor<2x16xf32>) -> (tensor<2x16xf32>, tensor<16xf32>) {
  %a = rlx.exp %x : (tensor<16xf32>) -> tensor<16xf32>
  %b = rlx.mul %a, %y : (tensor<16xf32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  %c = rlx.neg %x : (tensor<16xf32>) -> tensor<16xf32>
  %d = rlx.add %c, %x : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  func.return %b, %d : tensor<2x16xf32>, tensor<16xf32>
}

// -----

// Overlapping lifetimes: %a and %b are both alive at the add, so they get
// distinct offsets.

// CHECK-LABEL: func.func @overlapping_lifetimes(
// CHECK-SAME: attributes {rlx.arena_size = 128 : i64, rlx.arena_lower_bound = 128 : i64}
// CHECK-NEXT: rlx.exp {{.*}} {rlx.offsets = array<i64: 0>}
// CHECK-NEXT: rlx.neg {{.*}} {rlx.offsets = array<i64: 64>}
// CHECK-NEXT: rlx.add {{.*}} {rlx.offsets = array<i64: -1>}
// CHECK-NEXT: func.return
func.func @overlapping_lifetimes(%x: tensor<16xf32>) -> tensor<16xf32> {
  %a = rlx.exp %x : (tensor<16xf32>) -> tensor<16xf32>
  %b = rlx.neg %x : (tensor<16xf32>) -> tensor<16xf32>
  %c = rlx.add %a, %b : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  func.return %c : tensor<16xf32>
}

// -----

// Best fit: once the 128-byte %b dies, the 64-byte %e goes into its hole at
// 64 rather than past the end of the arena.

// CHECK-LABEL: func.func @best_fit_into_hole(
// CHECK-SAME: attributes {rlx.arena_size = 256 : i64, rlx.arena_lower_bound = 256 : i64}
// CHECK-NEXT: rlx.exp {{.*}} {rlx.offsets = array<i64: 0>} : (tensor<16xf32>)
// CHECK-NEXT: rlx.exp {{.*}} {rlx.offsets = array<i64: 64>} : (tensor<32xf32>)
// CHECK-NEXT: rlx.exp {{.*}} {rlx.offsets = array<i64: 192>} : (tensor<16xf32>)
// CHECK-NEXT: rlx.add {{.*}} {rlx.offsets = array<i64: -1>}
// CHECK-NEXT: rlx.neg {{.*}} {rlx.offsets = array<i64: 64>}
// CHECK-NEXT: rlx.add {{.*}} {rlx.offsets = array<i64: -1>}
// CHECK-NEXT: rlx.add {{.*}} {rlx.offsets = array<i64: -1>}
// CHECK-NEXT: func.return
func.func @best_fit_into_hole(%x: tensor<16xf32>, %y: tensor<32xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<32xf32>) {
  %a = rlx.exp %x : (tensor<16xf32>) -> tensor<16xf32>
  %b = rlx.exp %y : (tensor<32xf32>) -> tensor<32xf32>
  %c = rlx.exp %x : (tensor<16xf32>) -> tensor<16xf32>
  %d = rlx.add %b, %y : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32>
  %e = rlx.neg %x : (tensor<16xf32>) -> tensor<16xf32>
  %f = rlx.add %e, %a : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %g = rlx.add %c, %x : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  func.return %f, %g, %d : tensor<16xf32>, tensor<16xf32>, tensor<32xf32>
}

// -----

// In-place elementwise chain: each op writes over the input that dies at it,
// so the whole chain lives at one offset.

// CHECK-LABEL: func.func @in_place_chain(
// CHECK-SAME: attributes {rlx.arena_size = 64 : i64, rlx.arena_lower_bound = 64 : i64}
// CHECK-NEXT: rlx.exp {{.*}} {rlx.offsets = array<i64: 0>}
// CHECK-NEXT: rlx.neg {{.*}} {rlx.offsets = array<i64: 0>}
// CHECK-NEXT: rlx.tanh {{.*}} {rlx.offsets = array<i64: 0>}
// CHECK-NEXT: rlx.sin {{.*}} {rlx.offsets = array<i64: -1>}
// CHECK-NEXT: func.return
func.func @in_place_chain(%x: tensor<16xf32>) -> tensor<16xf32> {
  %a = rlx.exp %x : (tensor<16xf32>) -> tensor<16xf32>
  %b = rlx.neg %a : (tensor<16xf32>) -> tensor<16xf32>
  %c = rlx.tanh %b : (tensor<16xf32>) -> tensor<16xf32>
  %d = rlx.sin %c : (tensor<16xf32>) -> tensor<16xf32>
  func.return %d : tensor<16xf32>
}

// -----

// In place across element types of one size (f32 -> i32), but not into a
// wider one (i32 -> f64 needs a new 128-byte buffer).

// CHECK-LABEL: func.func @in_place_needs_same_element_size(
// CHECK-SAME: attributes {rlx.arena_size = 192 : i64, rlx.arena_lower_bound = 192 : i64}
// CHECK-NEXT: rlx.exp {{.*}} {rlx.offsets = array<i64: 0>}
// CHECK-NEXT: rlx.cast {{.*}} {rlx.offsets = array<i64: 0>} : (tensor<16xf32>) -> tensor<16xi32>
// CHECK-NEXT: rlx.cast {{.*}} {rlx.offsets = array<i64: 64>} : (tensor<16xi32>) -> tensor<16xf64>
// CHECK-NEXT: rlx.exp {{.*}} {rlx.offsets = array<i64: -1>}
// CHECK-NEXT: func.return
func.func @in_place_needs_same_element_size(%x: tensor<16xf32>) -> tensor<16xf64> {
  %a = rlx.exp %x : (tensor<16xf32>) -> tensor<16xf32>
  %i = rlx.cast %a : (tensor<16xf32>) -> tensor<16xi32>
  %j = rlx.cast %i : (tensor<16xi32>) -> tensor<16xf64>
  %d = rlx.exp %j : (tensor<16xf64>) -> tensor<16xf64>
  func.return %d : tensor<16xf64>
}

// -----

// No in place through a broadcast: %a (16) and %b (1x16) have the same byte
// size, but %b's shape differs, so %a is not read at %b's own index.

// CHECK-LABEL: func.func @no_in_place_through_broadcast(
// CHECK-SAME: attributes {rlx.arena_size = 128 : i64, rlx.arena_lower_bound = 128 : i64}
// CHECK-NEXT: rlx.exp {{.*}} {rlx.offsets = array<i64: 0>}
// CHECK-NEXT: rlx.add {{.*}} {rlx.offsets = array<i64: 64>}
// CHECK-NEXT: rlx.neg {{.*}} {rlx.offsets = array<i64: -1>}
// CHECK-NEXT: func.return
func.func @no_in_place_through_broadcast(%x: tensor<16xf32>, %z: tensor<1x16xf32>) -> tensor<1x16xf32> {
  %a = rlx.exp %x : (tensor<16xf32>) -> tensor<16xf32>
  %b = rlx.add %a, %z : (tensor<16xf32>, tensor<1x16xf32>) -> tensor<1x16xf32>
  %c = rlx.neg %b : (tensor<1x16xf32>) -> tensor<1x16xf32>
  func.return %c : tensor<1x16xf32>
}

// -----

// No in place through a non-identity index map (a transposed read).

// CHECK-LABEL: func.func @no_in_place_transposed(
// CHECK-SAME: attributes {rlx.arena_size = 128 : i64, rlx.arena_lower_bound = 128 : i64}
// CHECK-NEXT: rlx.exp {{.*}} {rlx.offsets = array<i64: 0>}
// CHECK-NEXT: rlx.elementwise_region {{.*}}, rlx.offsets = array<i64: 64>}
// CHECK: rlx.sin {{.*}} {rlx.offsets = array<i64: -1>}
func.func @no_in_place_transposed(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %a = rlx.exp %x : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %t = rlx.elementwise_region ins(%a : tensor<4x4xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>]} -> tensor<4x4xf32> {
  ^bb0(%p: f32):
    %n = rlx.neg %p : (f32) -> f32
    rlx.yield %n : f32
  }
  %c = rlx.sin %t : (tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %c : tensor<4x4xf32>
}
