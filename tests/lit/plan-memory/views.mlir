// RUN: rlx-opt %s --split-input-file -p plan-memory | filecheck %s

// Views: a reshape, and a narrow or unit-step slice that is a contiguous run
// of its source (every axis before the first one it keeps more than one
// index of is cut to one index, every axis after it is kept whole), gets no
// buffer of its own. Its rlx.offsets entry is its source's offset plus the
// byte offset of the run, and any use of the view keeps the source alive.

// A reshape of an intermediate shares the intermediate's offset (here 64,
// behind %k).

// CHECK-LABEL: func.func @reshape_shares_offset(
// CHECK-SAME: attributes {rlx.arena_size = 128 : i64, rlx.arena_lower_bound = 128 : i64}
// CHECK-NEXT: rlx.exp {{.*}} {rlx.offsets = array<i64: 0>}
// CHECK-NEXT: rlx.exp {{.*}} {rlx.offsets = array<i64: 64>}
// CHECK-NEXT: rlx.reshape {{.*}} {rlx.offsets = array<i64: 64>}
// CHECK-NEXT: rlx.add {{.*}} {rlx.offsets = array<i64: -1>}
// CHECK-NEXT: func.return
func.func @reshape_shares_offset(%x: tensor<16xf32>, %y: tensor<4x4xf32>) -> tensor<16xf32> {
  %k = rlx.exp %x : (tensor<16xf32>) -> tensor<16xf32>
  %a = rlx.exp %y : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %r = rlx.reshape %a : (tensor<4x4xf32>) -> tensor<16xf32>
  %c = rlx.add %k, %r : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  func.return %c : tensor<16xf32>
}

// -----

// A narrow on the outer axis is rows 5..6 of %a: offset 64 + 5 * 3 * 4 = 124
// (views need not be 64-byte aligned). A unit-step slice of the first 6
// elements of %k, and a reshape of it, sit at %k's own offset 0.

// CHECK-LABEL: func.func @narrow_outer_is_view(
// CHECK-SAME: attributes {rlx.arena_size = 192 : i64, rlx.arena_lower_bound = 192 : i64}
// CHECK-NEXT: rlx.exp {{.*}} {rlx.offsets = array<i64: 0>}
// CHECK-NEXT: rlx.exp {{.*}} {rlx.offsets = array<i64: 64>}
// CHECK-NEXT: rlx.narrow {{.*}} {rlx.offsets = array<i64: 124>, axis = 0 : i64, start = 5 : i64, length = 2 : i64}
// CHECK-NEXT: rlx.slice {{.*}} {rlx.offsets = array<i64: 0>, starts = array<i64: 0>, steps = array<i64: 1>}
// CHECK-NEXT: rlx.reshape {{.*}} {rlx.offsets = array<i64: 0>}
// CHECK-NEXT: rlx.add {{.*}} {rlx.offsets = array<i64: -1>}
// CHECK-NEXT: func.return
func.func @narrow_outer_is_view(%x: tensor<16xf32>, %y: tensor<8x3xf32>) -> tensor<2x3xf32> {
  %k = rlx.exp %x : (tensor<16xf32>) -> tensor<16xf32>
  %a = rlx.exp %y : (tensor<8x3xf32>) -> tensor<8x3xf32>
  %n = rlx.narrow %a {axis = 0 : i64, start = 5 : i64, length = 2 : i64} : (tensor<8x3xf32>) -> tensor<2x3xf32>
  %s = rlx.slice %k {starts = array<i64: 0>, steps = array<i64: 1>} : (tensor<16xf32>) -> tensor<6xf32>
  %r = rlx.reshape %s : (tensor<6xf32>) -> tensor<2x3xf32>
  %c = rlx.add %n, %r : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %c : tensor<2x3xf32>
}

// -----

// A narrow on an inner axis (columns 4..7 of every row) is not contiguous: it
// gets its own buffer after %a (512 B), so the arena is 512 + 128.

// CHECK-LABEL: func.func @narrow_inner_not_view(
// CHECK-SAME: attributes {rlx.arena_size = 640 : i64, rlx.arena_lower_bound = 640 : i64}
// CHECK-NEXT: rlx.exp {{.*}} {rlx.offsets = array<i64: 0>}
// CHECK-NEXT: rlx.narrow {{.*}} {rlx.offsets = array<i64: 512>, axis = 1 : i64, start = 4 : i64, length = 4 : i64}
// CHECK-NEXT: rlx.neg {{.*}} {rlx.offsets = array<i64: -1>}
// CHECK-NEXT: func.return
func.func @narrow_inner_not_view(%x: tensor<8x16xf32>) -> tensor<8x4xf32> {
  %a = rlx.exp %x : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %n = rlx.narrow %a {axis = 1 : i64, start = 4 : i64, length = 4 : i64} : (tensor<8x16xf32>) -> tensor<8x4xf32>
  %b = rlx.neg %n : (tensor<8x4xf32>) -> tensor<8x4xf32>
  func.return %b : tensor<8x4xf32>
}

// -----

// An inner-axis narrow under size-1 outer axes is contiguous after all:
// rows 5..7 of the single 8x4 block, at 5 * 4 * 4 = 80.

// CHECK-LABEL: func.func @narrow_under_unit_axes_is_view(
// CHECK-SAME: attributes {rlx.arena_size = 128 : i64, rlx.arena_lower_bound = 128 : i64}
// CHECK-NEXT: rlx.exp {{.*}} {rlx.offsets = array<i64: 0>}
// CHECK-NEXT: rlx.narrow {{.*}} {rlx.offsets = array<i64: 80>, axis = 1 : i64, start = 5 : i64, length = 3 : i64}
// CHECK-NEXT: rlx.neg {{.*}} {rlx.offsets = array<i64: -1>}
// CHECK-NEXT: func.return
func.func @narrow_under_unit_axes_is_view(%x: tensor<1x8x4xf32>) -> tensor<1x3x4xf32> {
  %a = rlx.exp %x : (tensor<1x8x4xf32>) -> tensor<1x8x4xf32>
  %n = rlx.narrow %a {axis = 1 : i64, start = 5 : i64, length = 3 : i64} : (tensor<1x8x4xf32>) -> tensor<1x3x4xf32>
  %b = rlx.neg %n : (tensor<1x3x4xf32>) -> tensor<1x3x4xf32>
  func.return %b : tensor<1x3x4xf32>
}

// -----

// A unit-step slice of whole rows 2..4 is a view at 2 * 16 * 4 = 128.

// CHECK-LABEL: func.func @slice_unit_step_is_view(
// CHECK-SAME: attributes {rlx.arena_size = 512 : i64, rlx.arena_lower_bound = 512 : i64}
// CHECK-NEXT: rlx.exp {{.*}} {rlx.offsets = array<i64: 0>}
// CHECK-NEXT: rlx.slice {{.*}} {rlx.offsets = array<i64: 128>, starts = array<i64: 2, 0>, steps = array<i64: 1, 1>}
// CHECK-NEXT: rlx.neg {{.*}} {rlx.offsets = array<i64: -1>}
// CHECK-NEXT: func.return
func.func @slice_unit_step_is_view(%x: tensor<8x16xf32>) -> tensor<3x16xf32> {
  %a = rlx.exp %x : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %s = rlx.slice %a {starts = array<i64: 2, 0>, steps = array<i64: 1, 1>} : (tensor<8x16xf32>) -> tensor<3x16xf32>
  %b = rlx.neg %s : (tensor<3x16xf32>) -> tensor<3x16xf32>
  func.return %b : tensor<3x16xf32>
}

// -----

// Step 2 on the outer axis skips rows: a copy with its own 192-byte buffer
// (rows 2, 4, 6 of 64 B each) after %a's 512.

// CHECK-LABEL: func.func @slice_step_two_not_view(
// CHECK-SAME: attributes {rlx.arena_size = 704 : i64, rlx.arena_lower_bound = 704 : i64}
// CHECK-NEXT: rlx.exp {{.*}} {rlx.offsets = array<i64: 0>}
// CHECK-NEXT: rlx.slice {{.*}} {rlx.offsets = array<i64: 512>, starts = array<i64: 2, 0>, steps = array<i64: 2, 1>}
// CHECK-NEXT: rlx.neg {{.*}} {rlx.offsets = array<i64: -1>}
// CHECK-NEXT: func.return
func.func @slice_step_two_not_view(%x: tensor<8x16xf32>) -> tensor<3x16xf32> {
  %a = rlx.exp %x : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %s = rlx.slice %a {starts = array<i64: 2, 0>, steps = array<i64: 2, 1>} : (tensor<8x16xf32>) -> tensor<3x16xf32>
  %b = rlx.neg %s : (tensor<3x16xf32>) -> tensor<3x16xf32>
  func.return %b : tensor<3x16xf32>
}

// -----

// A slice that keeps one row and a column range of it is contiguous:
// row 2, columns 4..7 at (2 * 16 + 4) * 4 = 144.

// CHECK-LABEL: func.func @slice_one_row_is_view(
// CHECK-SAME: attributes {rlx.arena_size = 512 : i64, rlx.arena_lower_bound = 512 : i64}
// CHECK-NEXT: rlx.exp {{.*}} {rlx.offsets = array<i64: 0>}
// CHECK-NEXT: rlx.slice {{.*}} {rlx.offsets = array<i64: 144>, starts = array<i64: 2, 4>, steps = array<i64: 1, 1>}
// CHECK-NEXT: rlx.neg {{.*}} {rlx.offsets = array<i64: -1>}
// CHECK-NEXT: func.return
func.func @slice_one_row_is_view(%x: tensor<8x16xf32>) -> tensor<1x4xf32> {
  %a = rlx.exp %x : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %s = rlx.slice %a {starts = array<i64: 2, 4>, steps = array<i64: 1, 1>} : (tensor<8x16xf32>) -> tensor<1x4xf32>
  %b = rlx.neg %s : (tensor<1x4xf32>) -> tensor<1x4xf32>
  func.return %b : tensor<1x4xf32>
}

// -----

// A view keeps its source alive: %a (256 B) is last read through %n/%r by the
// add, so %b cannot take offset 0 although %a itself has no direct use after
// the narrow. The arena is 256 + 64 (%b2 writes over %b in place).

// CHECK-LABEL: func.func @view_keeps_source_alive(
// CHECK-SAME: attributes {rlx.arena_size = 320 : i64, rlx.arena_lower_bound = 320 : i64}
// CHECK-NEXT: rlx.exp {{.*}} {rlx.offsets = array<i64: 0>}
// CHECK-NEXT: rlx.narrow {{.*}} {rlx.offsets = array<i64: 192>, axis = 0 : i64, start = 3 : i64, length = 1 : i64}
// CHECK-NEXT: rlx.reshape {{.*}} {rlx.offsets = array<i64: 192>}
// CHECK-NEXT: rlx.neg {{.*}} {rlx.offsets = array<i64: 256>}
// CHECK-NEXT: rlx.neg {{.*}} {rlx.offsets = array<i64: 256>}
// CHECK-NEXT: rlx.add {{.*}} {rlx.offsets = array<i64: -1>}
// CHECK-NEXT: func.return
func.func @view_keeps_source_alive(%x: tensor<4x16xf32>, %y: tensor<16xf32>) -> tensor<16xf32> {
  %a = rlx.exp %x : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %n = rlx.narrow %a {axis = 0 : i64, start = 3 : i64, length = 1 : i64} : (tensor<4x16xf32>) -> tensor<1x16xf32>
  %r = rlx.reshape %n : (tensor<1x16xf32>) -> tensor<16xf32>
  %b = rlx.neg %y : (tensor<16xf32>) -> tensor<16xf32>
  %b2 = rlx.neg %b : (tensor<16xf32>) -> tensor<16xf32>
  %c = rlx.add %r, %b2 : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  func.return %c : tensor<16xf32>
}

// -----

// The same ops with the view read early (by %e) instead: %a dies there and
// %b, born after, reuses its slot at 0.

// CHECK-LABEL: func.func @early_view_use_frees_source(
// CHECK-SAME: attributes {rlx.arena_size = 320 : i64, rlx.arena_lower_bound = 320 : i64}
// CHECK-NEXT: rlx.exp {{.*}} {rlx.offsets = array<i64: 0>}
// CHECK-NEXT: rlx.narrow {{.*}} {rlx.offsets = array<i64: 192>, axis = 0 : i64, start = 3 : i64, length = 1 : i64}
// CHECK-NEXT: rlx.reshape {{.*}} {rlx.offsets = array<i64: 192>}
// CHECK-NEXT: rlx.neg {{.*}} {rlx.offsets = array<i64: 256>}
// CHECK-NEXT: rlx.neg {{.*}} {rlx.offsets = array<i64: 0>}
// CHECK-NEXT: rlx.add {{.*}} {rlx.offsets = array<i64: -1>}
// CHECK-NEXT: func.return
func.func @early_view_use_frees_source(%x: tensor<4x16xf32>, %y: tensor<16xf32>) -> tensor<16xf32> {
  %a = rlx.exp %x : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %n = rlx.narrow %a {axis = 0 : i64, start = 3 : i64, length = 1 : i64} : (tensor<4x16xf32>) -> tensor<1x16xf32>
  %r = rlx.reshape %n : (tensor<1x16xf32>) -> tensor<16xf32>
  %e = rlx.neg %r : (tensor<16xf32>) -> tensor<16xf32>
  %b = rlx.neg %y : (tensor<16xf32>) -> tensor<16xf32>
  %c = rlx.add %e, %b : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  func.return %c : tensor<16xf32>
}

// -----

// A view of a function argument is bound by pointer too (-1); so is a view
// of a constant, which is read through the constant's slot (at a delta of
// 1 * 16 * 4 bytes): nothing is in the arena.

// CHECK-LABEL: func.func @views_of_argument_and_constant(
// CHECK-SAME: attributes {rlx.arena_size = 0 : i64, rlx.arena_lower_bound = 0 : i64}
// CHECK-NEXT: rlx.constant {rlx.constant_slot = 0 : i64}
// CHECK-NEXT: rlx.narrow {{.*}} {rlx.offsets = array<i64: -1>, axis = 0 : i64, start = 2 : i64, length = 2 : i64}
// CHECK-NEXT: rlx.narrow {{.*}} {rlx.offsets = array<i64: -1>, axis = 0 : i64, start = 1 : i64, length = 2 : i64}
// CHECK-NEXT: rlx.add {{.*}} {rlx.offsets = array<i64: -1>}
// CHECK-NEXT: func.return
func.func @views_of_argument_and_constant(%x: tensor<8x16xf32>) -> tensor<2x16xf32> {
  %k = rlx.constant dense<1.0> : tensor<4x16xf32>
  %n = rlx.narrow %x {axis = 0 : i64, start = 2 : i64, length = 2 : i64} : (tensor<8x16xf32>) -> tensor<2x16xf32>
  %m = rlx.narrow %k {axis = 0 : i64, start = 1 : i64, length = 2 : i64} : (tensor<4x16xf32>) -> tensor<2x16xf32>
  %c = rlx.add %n, %m : (tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  func.return %c : tensor<2x16xf32>
}

// -----

// A returned view is not bound to the output pointer (it is copied out at
// the end), so its source stays in the arena until the return: the later
// %b cannot reuse %a's slot.

// CHECK-LABEL: func.func @returned_view(
// CHECK-SAME: attributes {rlx.arena_size = 512 : i64, rlx.arena_lower_bound = 512 : i64}
// CHECK-NEXT: rlx.exp {{.*}} {rlx.offsets = array<i64: 0>}
// CHECK-NEXT: rlx.narrow {{.*}} {rlx.offsets = array<i64: 64>, axis = 0 : i64, start = 1 : i64, length = 2 : i64}
// CHECK-NEXT: rlx.exp {{.*}} {rlx.offsets = array<i64: 256>}
// CHECK-NEXT: rlx.neg {{.*}} {rlx.offsets = array<i64: -1>}
// CHECK-NEXT: func.return
func.func @returned_view(%x: tensor<4x16xf32>) -> (tensor<2x16xf32>, tensor<4x16xf32>) {
  %a = rlx.exp %x : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %n = rlx.narrow %a {axis = 0 : i64, start = 1 : i64, length = 2 : i64} : (tensor<4x16xf32>) -> tensor<2x16xf32>
  %b = rlx.exp %x : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %c = rlx.neg %b : (tensor<4x16xf32>) -> tensor<4x16xf32>
  func.return %n, %c : tensor<2x16xf32>, tensor<4x16xf32>
}

// -----

// A slice that reverses a whole inner axis is not contiguous in its source:
// it gets its own slot (and a copy kernel), not a view.

// CHECK-LABEL: func.func @reversed_inner_axis_is_not_a_view
// CHECK:         rlx.exp %{{.*}} {rlx.offsets = array<i64: 0>}
// CHECK-NEXT:    rlx.slice %{{.*}} {rlx.offsets = array<i64: -1>
func.func @reversed_inner_axis_is_not_a_view(%x: tensor<4x8xf32>) -> tensor<2x8xf32> {
  %a = rlx.exp %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = rlx.slice %a {starts = array<i64: 1, 7>, steps = array<i64: 1, -1>} : (tensor<4x8xf32>) -> tensor<2x8xf32>
  func.return %s : tensor<2x8xf32>
}
