// RUN: rlx-opt %s --split-input-file -p fuse-siblings | filecheck %s

// Two lone ops reading %x over one shape become one region with two results;
// %x is one input (one block argument) that both bodies read.

// CHECK-LABEL: func.func @pair(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<4x3xf32>, [[B:%[a-zA-Z0-9_]+]]: tensor<4x3xf32>, [[C:%[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK-NEXT: [[S:%[a-zA-Z0-9_]+]], [[L:%[a-zA-Z0-9_]+]] = rlx.elementwise_region ins([[X]], [[B]], [[C]] : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>) {{.*}} -> (tensor<4x3xf32>, tensor<4x3xi1>) {
// CHECK-NEXT: ^{{.*}}([[XS:%[a-zA-Z0-9_]+]]: f32, [[BS:%[a-zA-Z0-9_]+]]: f32, [[CS:%[a-zA-Z0-9_]+]]: f32):
// CHECK-NEXT: [[SS:%[a-zA-Z0-9_]+]] = rlx.add [[XS]], [[BS]] : (f32, f32) -> f32
// CHECK-NEXT: [[LS:%[a-zA-Z0-9_]+]] = rlx.lt [[XS]], [[CS]] : (f32, f32) -> i1
// CHECK-NEXT: rlx.yield [[SS]], [[LS]] : f32, i1
// CHECK-NEXT: }
// CHECK-NEXT: func.return [[S]], [[L]] : tensor<4x3xf32>, tensor<4x3xi1>
func.func @pair(%x: tensor<4x3xf32>, %b: tensor<4x3xf32>, %c: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xi1>) {
  %s = rlx.add %x, %b : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %l = rlx.lt %x, %c : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xi1>
  func.return %s, %l : tensor<4x3xf32>, tensor<4x3xi1>
}

// -----

// Three siblings fold into one region, results in program order; a
// broadcast input keeps its map.

// CHECK-LABEL: func.func @three(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<4x3xf32>, [[B:%[a-zA-Z0-9_]+]]: tensor<3xf32>
// CHECK-NEXT: [[N:%[a-zA-Z0-9_]+]], [[E:%[a-zA-Z0-9_]+]], [[S:%[a-zA-Z0-9_]+]] = rlx.elementwise_region ins([[X]], [[B]] : tensor<4x3xf32>, tensor<3xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>]} -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>) {
// CHECK-NEXT: ^{{.*}}([[XS:%[a-zA-Z0-9_]+]]: f32, [[BS:%[a-zA-Z0-9_]+]]: f32):
// CHECK-NEXT: rlx.neg [[XS]]
// CHECK-NEXT: rlx.exp [[XS]]
// CHECK-NEXT: rlx.sub [[XS]], [[BS]]
// CHECK-NEXT: rlx.yield
// CHECK-NEXT: }
// CHECK-NEXT: func.return [[N]], [[E]], [[S]]
// CHECK-NOT: rlx.elementwise_region
func.func @three(%x: tensor<4x3xf32>, %b: tensor<3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>) {
  %n = rlx.neg %x : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %e = rlx.exp %x : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %s = rlx.sub %x, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  func.return %n, %e, %s : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>
}

// -----

// A region (what fuse-elementwise made) and a lone op: the region's body
// comes first, then the op's.

// CHECK-LABEL: func.func @region_and_op(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<8xf32>
// CHECK-NEXT: [[T:%[a-zA-Z0-9_]+]], [[A:%[a-zA-Z0-9_]+]] = rlx.elementwise_region ins([[X]] : tensor<8xf32>) {{.*}} -> (tensor<8xf32>, tensor<8xf32>) {
// CHECK-NEXT: ^{{.*}}([[XS:%[a-zA-Z0-9_]+]]: f32):
// CHECK-NEXT: [[M:%[a-zA-Z0-9_]+]] = rlx.mul [[XS]], [[XS]]
// CHECK-NEXT: [[TS:%[a-zA-Z0-9_]+]] = rlx.tanh [[M]]
// CHECK-NEXT: [[AS:%[a-zA-Z0-9_]+]] = rlx.abs [[XS]]
// CHECK-NEXT: rlx.yield [[TS]], [[AS]] : f32, f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return [[T]], [[A]]
func.func @region_and_op(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %t = rlx.elementwise_region ins(%x : tensor<8xf32>) {indexing_maps = [affine_map<(d0) -> (d0)>]} -> tensor<8xf32> {
  ^bb0(%v: f32):
    %m = rlx.mul %v, %v : (f32, f32) -> f32
    %h = rlx.tanh %m : (f32) -> f32
    rlx.yield %h : f32
  }
  %a = rlx.abs %x : (tensor<8xf32>) -> tensor<8xf32>
  func.return %t, %a : tensor<8xf32>, tensor<8xf32>
}

// -----

// An op between the siblings that uses the first one's result moves below
// the merged region (it cannot feed the second sibling), so every value is
// still defined before its use.

// CHECK-LABEL: func.func @user_between(
// CHECK-NEXT: [[S:%[a-zA-Z0-9_]+]], [[L:%[a-zA-Z0-9_]+]] = rlx.elementwise_region
// CHECK: rlx.yield
// CHECK-NEXT: }
// CHECK-NEXT: [[R:%[a-zA-Z0-9_]+]] = rlx.reduce_sum [[S]]
// CHECK-NEXT: func.return [[R]], [[L]]
func.func @user_between(%x: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> (tensor<3xf32>, tensor<4x3xi1>) {
  %s = rlx.add %x, %b : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %r = rlx.reduce_sum %s {axes = array<i64: 0>} : (tensor<4x3xf32>) -> tensor<3xf32>
  %l = rlx.gt %x, %b : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xi1>
  func.return %r, %l : tensor<3xf32>, tensor<4x3xi1>
}
