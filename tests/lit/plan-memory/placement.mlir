// RUN: rlx-opt %s --split-input-file -p plan-memory | filecheck %s

// Constants are not in the arena: each gets a slot in the table of constant
// pointers, and no offset. %k dies at the mul, yet the mul does not write
// its result over it (a constant is read-only): %a and %b take the arena.

// CHECK-LABEL: func.func @constant_pinned(
// CHECK-SAME: attributes {rlx.arena_size = 128 : i64, rlx.arena_lower_bound = 128 : i64}
// CHECK-NEXT: rlx.constant {rlx.constant_slot = 0 : i64} dense<2.000000e+00> : tensor<16xf32>
// CHECK-NEXT: rlx.mul {{.*}} {rlx.offsets = array<i64: 0>}
// CHECK-NEXT: rlx.exp {{.*}} {rlx.offsets = array<i64: 64>}
// CHECK-NEXT: rlx.add {{.*}} {rlx.offsets = array<i64: -1>}
// CHECK-NEXT: func.return
func.func @constant_pinned(%x: tensor<16xf32>) -> tensor<16xf32> {
  %k = rlx.constant dense<2.0> : tensor<16xf32>
  %a = rlx.mul %x, %k : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %b = rlx.exp %x : (tensor<16xf32>) -> tensor<16xf32>
  %c = rlx.add %a, %b : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  func.return %c : tensor<16xf32>
}

// -----

// A reshape view aliases its source's offset, and a use of the view keeps
// the source alive: %b cannot take offset 0 while %r is still to be read.

// CHECK-LABEL: func.func @reshape_view_aliases(
// CHECK-SAME: attributes {rlx.arena_size = 128 : i64, rlx.arena_lower_bound = 128 : i64}
// CHECK-NEXT: rlx.exp {{.*}} {rlx.offsets = array<i64: 0>}
// CHECK-NEXT: rlx.reshape {{.*}} {rlx.offsets = array<i64: 0>}
// CHECK-NEXT: rlx.neg {{.*}} {rlx.offsets = array<i64: 64>}
// CHECK-NEXT: rlx.add {{.*}} {rlx.offsets = array<i64: -1>}
// CHECK-NEXT: func.return
func.func @reshape_view_aliases(%x: tensor<4x4xf32>, %y: tensor<16xf32>) -> tensor<16xf32> {
  %a = rlx.exp %x : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %r = rlx.reshape %a : (tensor<4x4xf32>) -> tensor<16xf32>
  %b = rlx.neg %y : (tensor<16xf32>) -> tensor<16xf32>
  %c = rlx.add %r, %b : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  func.return %c : tensor<16xf32>
}

// -----

// Function boundary: arguments are never in the arena; a computed result is
// bound by pointer (-1), and so is a view of it. A returned constant keeps
// its slot (it is copied out at the end), so the arena is empty.

// CHECK-LABEL: func.func @results_bound_by_pointer(
// CHECK-SAME: attributes {rlx.arena_size = 0 : i64, rlx.arena_lower_bound = 0 : i64}
// CHECK-NEXT: rlx.constant {rlx.constant_slot = 0 : i64}
// CHECK-NEXT: rlx.exp {{.*}} {rlx.offsets = array<i64: -1>}
// CHECK-NEXT: rlx.reshape {{.*}} {rlx.offsets = array<i64: -1>}
// CHECK-NEXT: func.return
func.func @results_bound_by_pointer(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<4x4xf32>, tensor<16xf32>) {
  %k = rlx.constant dense<1.0> : tensor<16xf32>
  %a = rlx.exp %x : (tensor<16xf32>) -> tensor<16xf32>
  %r = rlx.reshape %a : (tensor<16xf32>) -> tensor<4x4xf32>
  func.return %a, %x, %k, %r, %a : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<4x4xf32>, tensor<16xf32>
}

// -----

// Nothing but a returned argument and a returned result: an empty arena.

// CHECK-LABEL: func.func @empty_arena(
// CHECK-SAME: attributes {rlx.arena_size = 0 : i64, rlx.arena_lower_bound = 0 : i64}
// CHECK-NEXT: rlx.exp {{.*}} {rlx.offsets = array<i64: -1>}
// CHECK-NEXT: func.return
func.func @empty_arena(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %a = rlx.exp %x : (tensor<16xf32>) -> tensor<16xf32>
  func.return %a, %x : tensor<16xf32>, tensor<16xf32>
}

// -----

// 64-byte alignment: tensor<3xf32> is 12 bytes but takes a 64-byte slot.

// CHECK-LABEL: func.func @small_tensor_alignment(
// CHECK-SAME: attributes {rlx.arena_size = 128 : i64, rlx.arena_lower_bound = 128 : i64}
// CHECK-NEXT: rlx.exp {{.*}} {rlx.offsets = array<i64: 0>}
// CHECK-NEXT: rlx.add {{.*}} {rlx.offsets = array<i64: 64>}
// CHECK-NEXT: rlx.mul {{.*}} {rlx.offsets = array<i64: -1>}
// CHECK-NEXT: func.return
func.func @small_tensor_alignment(%x: tensor<3xf32>) -> tensor<3xf32> {
  %a = rlx.exp %x : (tensor<3xf32>) -> tensor<3xf32>
  %b = rlx.add %a, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %c = rlx.mul %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %c : tensor<3xf32>
}

// -----

// i1 tensors take one byte per element: two live tensor<64xi1> fill exactly
// 128 bytes (the bit_and writes in place over %p).

// CHECK-LABEL: func.func @i1_one_byte_per_element(
// CHECK-SAME: attributes {rlx.arena_size = 128 : i64, rlx.arena_lower_bound = 128 : i64}
// CHECK-NEXT: rlx.gt {{.*}} {rlx.offsets = array<i64: 0>}
// CHECK-NEXT: rlx.lt {{.*}} {rlx.offsets = array<i64: 64>}
// CHECK-NEXT: rlx.bit_and {{.*}} {rlx.offsets = array<i64: 0>}
// CHECK-NEXT: rlx.where {{.*}} {rlx.offsets = array<i64: -1>}
// CHECK-NEXT: func.return
func.func @i1_one_byte_per_element(%x: tensor<64xf32>) -> tensor<64xf32> {
  %p = rlx.gt %x, %x : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xi1>
  %q = rlx.lt %x, %x : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xi1>
  %r = rlx.bit_and %p, %q : (tensor<64xi1>, tensor<64xi1>) -> tensor<64xi1>
  %w = rlx.where %r, %x, %x : (tensor<64xi1>, tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  func.return %w : tensor<64xf32>
}

// -----

// ... and 65 of them round up to the next 64-byte slot.

// CHECK-LABEL: func.func @i1_rounds_up(
// CHECK-SAME: attributes {rlx.arena_size = 128 : i64, rlx.arena_lower_bound = 128 : i64}
// CHECK-NEXT: rlx.gt {{.*}} {rlx.offsets = array<i64: 0>}
// CHECK-NEXT: rlx.where {{.*}} {rlx.offsets = array<i64: -1>}
func.func @i1_rounds_up(%x: tensor<65xf32>) -> tensor<65xf32> {
  %p = rlx.gt %x, %x : (tensor<65xf32>, tensor<65xf32>) -> tensor<65xi1>
  %w = rlx.where %p, %x, %x : (tensor<65xi1>, tensor<65xf32>, tensor<65xf32>) -> tensor<65xf32>
  func.return %w : tensor<65xf32>
}

// -----

// A multi-result region gets one offset per result.

// CHECK-LABEL: func.func @region_offsets_per_result(
// CHECK-SAME: attributes {rlx.arena_size = 128 : i64, rlx.arena_lower_bound = 128 : i64}
// CHECK-NEXT: rlx.elementwise_region {{.*}}, rlx.offsets = array<i64: 0, 64>} -> (tensor<16xf32>, tensor<16xf32>)
// CHECK: rlx.add {{.*}} {rlx.offsets = array<i64: -1>}
func.func @region_offsets_per_result(%x: tensor<16xf32>) -> tensor<16xf32> {
  %a, %b = rlx.elementwise_region ins(%x : tensor<16xf32>) {indexing_maps = [affine_map<(d0) -> (d0)>]} -> (tensor<16xf32>, tensor<16xf32>) {
  ^bb0(%p: f32):
    %e = rlx.exp %p : (f32) -> f32
    %n = rlx.neg %e : (f32) -> f32
    rlx.yield %e, %n : f32, f32
  }
  %c = rlx.add %a, %b : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  func.return %c : tensor<16xf32>
}
