// RUN: rlx-opt %s --split-input-file -p fuse-elementwise | filecheck %s

// A single elementwise op is left alone (lower-to-llvm wraps it later).

// CHECK-LABEL: func.func @single_op(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<3xf32>
// CHECK-NOT: rlx.elementwise_region
// CHECK-NEXT: [[A:%[a-zA-Z0-9_]+]] = rlx.exp [[X]] : (tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT: func.return [[A]] : tensor<3xf32>
func.func @single_op(%x: tensor<3xf32>) -> tensor<3xf32> {
  %a = rlx.exp %x : (tensor<3xf32>) -> tensor<3xf32>
  func.return %a : tensor<3xf32>
}

// -----

// Different shapes: the producer's result is broadcast into a bigger
// consumer, so it stays a separate op (fusing it would recompute it per
// output element); the consumer chain still fuses and reads it via `(d1)`.

// CHECK-LABEL: func.func @broadcast_producer(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<3xf32>, [[Y:%[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK-NEXT: [[A:%[a-zA-Z0-9_]+]] = rlx.exp [[X]] : (tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT: [[R:%[a-zA-Z0-9_]+]] = rlx.elementwise_region ins([[A]], [[Y]] : tensor<3xf32>, tensor<4x3xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>]} -> tensor<4x3xf32> {
// CHECK-NEXT: ^{{.*}}([[P:%[a-zA-Z0-9_]+]]: f32, [[Q:%[a-zA-Z0-9_]+]]: f32):
// CHECK-NEXT: [[D:%[a-zA-Z0-9_]+]] = rlx.add [[P]], [[Q]] : (f32, f32) -> f32
// CHECK-NEXT: [[E:%[a-zA-Z0-9_]+]] = rlx.tanh [[D]] : (f32) -> f32
// CHECK-NEXT: rlx.yield [[E]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return [[R]]
func.func @broadcast_producer(%x: tensor<3xf32>, %y: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %a = rlx.exp %x : (tensor<3xf32>) -> tensor<3xf32>
  %d = rlx.add %a, %y : (tensor<3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %e = rlx.tanh %d : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %e : tensor<4x3xf32>
}

// -----

// Different shapes only: a broadcast producer and a single consumer stay two ops.

// CHECK-LABEL: func.func @broadcast_pair(
// CHECK-NOT: rlx.elementwise_region
// CHECK: rlx.neg %{{.*}} : (tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT: rlx.add %{{.*}} : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NOT: rlx.elementwise_region
func.func @broadcast_pair(%x: tensor<3xf32>, %y: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %a = rlx.neg %x : (tensor<3xf32>) -> tensor<3xf32>
  %d = rlx.add %a, %y : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %d : tensor<2x3xf32>
}

// -----

// Convexity: %a reaches %d directly and through two reshapes and a neg.
// Putting %a and %d in one region would make the region both feed and
// consume the reshapes, so %a stays outside; neg and add still fuse.

// CHECK-LABEL: func.func @convex_through_reshape(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<2x4xf32>
// CHECK-NEXT: [[A:%[a-zA-Z0-9_]+]] = rlx.exp [[X]] : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: [[R:%[a-zA-Z0-9_]+]] = rlx.reshape [[A]] : (tensor<2x4xf32>) -> tensor<4x2xf32>
// CHECK-NEXT: [[S:%[a-zA-Z0-9_]+]] = rlx.reshape [[R]] : (tensor<4x2xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: [[D:%[a-zA-Z0-9_]+]] = rlx.elementwise_region ins([[S]], [[A]] : tensor<2x4xf32>, tensor<2x4xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>]} -> tensor<2x4xf32> {
// CHECK-NEXT: ^{{.*}}([[P:%[a-zA-Z0-9_]+]]: f32, [[Q:%[a-zA-Z0-9_]+]]: f32):
// CHECK-NEXT: [[N:%[a-zA-Z0-9_]+]] = rlx.neg [[P]] : (f32) -> f32
// CHECK-NEXT: [[E:%[a-zA-Z0-9_]+]] = rlx.add [[Q]], [[N]] : (f32, f32) -> f32
// CHECK-NEXT: rlx.yield [[E]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return [[D]]
func.func @convex_through_reshape(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %a = rlx.exp %x : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %r = rlx.reshape %a : (tensor<2x4xf32>) -> tensor<4x2xf32>
  %s = rlx.reshape %r : (tensor<4x2xf32>) -> tensor<2x4xf32>
  %n = rlx.neg %s : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %d = rlx.add %a, %n : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %d : tensor<2x4xf32>
}

// -----

// Convexity through an expand: %a feeds %d directly and via reshape+expand,
// so the two elementwise ops must not share a region. (%d alone becomes a
// region because its input comes from an expand that canonicalize-broadcast
// can fold into the region's index map; exp stays outside.)

// CHECK-LABEL: func.func @convex_through_expand(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<1x3xf32>
// CHECK-NEXT: [[A:%[a-zA-Z0-9_]+]] = rlx.exp [[X]] : (tensor<1x3xf32>) -> tensor<1x3xf32>
// CHECK-NEXT: [[R:%[a-zA-Z0-9_]+]] = rlx.reshape [[A]] : (tensor<1x3xf32>) -> tensor<3xf32>
// CHECK-NEXT: [[E:%[a-zA-Z0-9_]+]] = rlx.expand [[R]] : (tensor<3xf32>) -> tensor<1x3xf32>
// CHECK-NEXT: [[D:%[a-zA-Z0-9_]+]] = rlx.elementwise_region ins([[A]], [[E]] : tensor<1x3xf32>, tensor<1x3xf32>)
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT:   rlx.add
// CHECK-NEXT:   rlx.yield
// CHECK-NEXT: }
// CHECK-NEXT: func.return [[D]]
func.func @convex_through_expand(%x: tensor<1x3xf32>) -> tensor<1x3xf32> {
  %a = rlx.exp %x : (tensor<1x3xf32>) -> tensor<1x3xf32>
  %r = rlx.reshape %a : (tensor<1x3xf32>) -> tensor<3xf32>
  %e = rlx.expand %r : (tensor<3xf32>) -> tensor<1x3xf32>
  %d = rlx.add %a, %e : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<1x3xf32>
  func.return %d : tensor<1x3xf32>
}

// -----

// Ops separated only by a non-fusible reshape are not fused across it.

// CHECK-LABEL: func.func @reshape_barrier(
// CHECK-NOT: rlx.elementwise_region
// CHECK: rlx.exp %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: rlx.reshape
// CHECK-NEXT: rlx.neg %{{.*}} : (tensor<6xf32>) -> tensor<6xf32>
func.func @reshape_barrier(%x: tensor<2x3xf32>) -> tensor<6xf32> {
  %a = rlx.exp %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %r = rlx.reshape %a : (tensor<2x3xf32>) -> tensor<6xf32>
  %n = rlx.neg %r : (tensor<6xf32>) -> tensor<6xf32>
  func.return %n : tensor<6xf32>
}

// -----

// An existing region is not an elementwise op: it is not fused again.

// CHECK-LABEL: func.func @existing_region(
// CHECK: rlx.elementwise_region
// CHECK: rlx.yield
// CHECK: rlx.neg %{{.*}} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NOT: rlx.elementwise_region
func.func @existing_region(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = rlx.elementwise_region ins(%x : tensor<4xf32>) {indexing_maps = [affine_map<(d0) -> (d0)>]} -> tensor<4xf32> {
  ^bb0(%p: f32):
    %e = rlx.exp %p : (f32) -> f32
    rlx.yield %e : f32
  }
  %n = rlx.neg %r : (tensor<4xf32>) -> tensor<4xf32>
  func.return %n : tensor<4xf32>
}
