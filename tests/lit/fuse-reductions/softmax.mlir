// RUN: rlx-opt %s --split-input-file -p fuse-elementwise,fuse-reductions,canonicalize-broadcast | filecheck %s

// softmax and log_softmax take the elementwise chains on both sides: the chain
// feeding one is the prologue body of an rlx.normalize_region, a chain that is
// its only user the epilogue body, so neither reaches memory.

// tanh(x * s) before, * r + s after: one region. The scalar s is read by both
// bodies; inputs are the prologue's, then the epilogue's.
// CHECK-LABEL: func.func @both_sides(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<4x8xf32>, [[S:%[a-zA-Z0-9_]+]]: tensor<f32>, [[R:%[a-zA-Z0-9_]+]]: tensor<4x8xf32>
// CHECK-NEXT: [[P:%[a-zA-Z0-9_]+]] = rlx.normalize_region ins([[X]], [[S]], [[R]], [[S]] : tensor<4x8xf32>, tensor<f32>, tensor<4x8xf32>, tensor<f32>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], axis = 1 : i64, normalization = "softmax"} -> tensor<4x8xf32> {
// CHECK-NEXT: ^{{.*}}([[A:%[a-zA-Z0-9_]+]]: f32, [[B:%[a-zA-Z0-9_]+]]: f32):
// CHECK-NEXT: [[M:%[a-zA-Z0-9_]+]] = rlx.mul [[A]], [[B]] : (f32, f32) -> f32
// CHECK-NEXT: [[T:%[a-zA-Z0-9_]+]] = rlx.tanh [[M]] : (f32) -> f32
// CHECK-NEXT: rlx.yield [[T]] : f32
// CHECK-NEXT: } epilogue {
// CHECK-NEXT: ^{{.*}}([[V:%[a-zA-Z0-9_]+]]: f32, [[C:%[a-zA-Z0-9_]+]]: f32, [[D:%[a-zA-Z0-9_]+]]: f32):
// CHECK-NEXT: [[Q:%[a-zA-Z0-9_]+]] = rlx.mul [[V]], [[C]] : (f32, f32) -> f32
// CHECK-NEXT: [[U:%[a-zA-Z0-9_]+]] = rlx.add [[Q]], [[D]] : (f32, f32) -> f32
// CHECK-NEXT: rlx.yield [[U]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return [[P]] : tensor<4x8xf32>
func.func @both_sides(%x: tensor<4x8xf32>, %s: tensor<f32>, %r: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %a = rlx.mul %x, %s : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %b = rlx.tanh %a : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %p = rlx.softmax %b {axis = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %q = rlx.mul %p, %r : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %t = rlx.add %q, %s : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  func.return %t : tensor<4x8xf32>
}

// -----

// An epilogue alone: the prologue is the identity, the axis normalized.
// CHECK-LABEL: func.func @epilogue_only(
// CHECK-NEXT: rlx.normalize_region ins(%{{.*}}, %{{.*}} : tensor<3x5xf64>, tensor<3x5xf64>) {{.*}} axis = 0 : i64, normalization = "log_softmax"} -> tensor<3x5xf64> {
// CHECK-NEXT: ^{{.*}}([[A:%[a-zA-Z0-9_]+]]: f64):
// CHECK-NEXT: rlx.yield [[A]] : f64
// CHECK-NEXT: } epilogue {
// CHECK-NEXT: ^{{.*}}([[V:%[a-zA-Z0-9_]+]]: f64, [[W:%[a-zA-Z0-9_]+]]: f64):
// CHECK-NEXT: rlx.sub [[V]], [[W]]
func.func @epilogue_only(%x: tensor<3x5xf64>, %y: tensor<3x5xf64>) -> tensor<3x5xf64> {
  %p = rlx.log_softmax %x {axis = -2 : i64} : (tensor<3x5xf64>) -> tensor<3x5xf64>
  %d = rlx.sub %p, %y : (tensor<3x5xf64>, tensor<3x5xf64>) -> tensor<3x5xf64>
  func.return %d : tensor<3x5xf64>
}

// -----

// A broadcast input (a bias along the rows) is not read at the point: that
// chain keeps its own kernel and the softmax stays an op.
// CHECK-LABEL: func.func @broadcast_bias_stays(
// CHECK: rlx.add
// CHECK: rlx.softmax
// CHECK-NOT: rlx.normalize_region
func.func @broadcast_bias_stays(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %a = rlx.add %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %p = rlx.softmax %a {axis = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %p : tensor<4x8xf32>
}

// -----

// A chain whose value is also used elsewhere is computed once, as a region of
// its own; a consumer that changes the element type (a cast) is not fused.
// CHECK-LABEL: func.func @shared_and_cast(
// CHECK: rlx.exp
// CHECK: rlx.softmax
// CHECK: rlx.cast
// CHECK-NOT: rlx.normalize_region
func.func @shared_and_cast(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf16>) {
  %a = rlx.exp %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %p = rlx.softmax %a {axis = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %c = rlx.cast %p : (tensor<4x8xf32>) -> tensor<4x8xf16>
  func.return %a, %c : tensor<4x8xf32>, tensor<4x8xf16>
}

// -----

// canonicalize-broadcast folds a transpose into a region's index map, but a
// normalize region reads only point-wise: the transpose stays a kernel of its
// own (found by the differential fuzzer: the folded map failed the verifier).
// CHECK-LABEL: func.func @transposed_input(
// CHECK: [[T:%[a-zA-Z0-9_]+]] = rlx.transpose
// CHECK-NEXT: rlx.normalize_region ins([[T]] : tensor<4x3xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>]
func.func @transposed_input(%x: tensor<3x4xf32>) -> tensor<4x3xf32> {
  %t = rlx.transpose %x {perm = array<i64: 1, 0>} : (tensor<3x4xf32>) -> tensor<4x3xf32>
  %e = rlx.exp %t : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %p = rlx.softmax %e {axis = 1 : i64} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %p : tensor<4x3xf32>
}
