// RUN: rlx-opt %s --split-input-file -p fuse-elementwise | filecheck %s

// A producer -> consumer chain of one shape becomes one region; the body
// holds the scalar ops in program order, an input broadcast along the leading
// axis reads `(d0, d1) -> (d1)`.

// CHECK-LABEL: func.func @chain(
// CHECK-SAME: [[A:%[a-zA-Z0-9_]+]]: tensor<4x3xf32>, [[B:%[a-zA-Z0-9_]+]]: tensor<3xf32>
// CHECK-NEXT: [[R:%[a-zA-Z0-9_]+]] = rlx.elementwise_region ins([[A]], [[B]] : tensor<4x3xf32>, tensor<3xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>]} -> tensor<4x3xf32> {
// CHECK-NEXT: ^{{.*}}([[X:%[a-zA-Z0-9_]+]]: f32, [[Y:%[a-zA-Z0-9_]+]]: f32):
// CHECK-NEXT: [[S:%[a-zA-Z0-9_]+]] = rlx.add [[X]], [[Y]] : (f32, f32) -> f32
// CHECK-NEXT: [[T:%[a-zA-Z0-9_]+]] = rlx.tanh [[S]] : (f32) -> f32
// CHECK-NEXT: [[U:%[a-zA-Z0-9_]+]] = rlx.mul [[T]], [[X]] : (f32, f32) -> f32
// CHECK-NEXT: rlx.yield [[U]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return [[R]] : tensor<4x3xf32>
// CHECK-NOT: rlx.add
// CHECK-NOT: rlx.tanh
func.func @chain(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %s = rlx.add %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %t = rlx.tanh %s : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %u = rlx.mul %t, %a : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %u : tensor<4x3xf32>
}

// -----

// A one-element input read at every iteration has the map `(d0) -> (0)`.

// CHECK-LABEL: func.func @scalar_input(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<8xf32>, [[S:%[a-zA-Z0-9_]+]]: tensor<1xf32>
// CHECK-NEXT: [[R:%[a-zA-Z0-9_]+]] = rlx.elementwise_region ins([[X]], [[S]] : tensor<8xf32>, tensor<1xf32>) {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (0)>]} -> tensor<8xf32> {
// CHECK-NEXT: ^{{.*}}([[P:%[a-zA-Z0-9_]+]]: f32, [[Q:%[a-zA-Z0-9_]+]]: f32):
// CHECK-NEXT: [[M:%[a-zA-Z0-9_]+]] = rlx.mul [[P]], [[Q]] : (f32, f32) -> f32
// CHECK-NEXT: [[G:%[a-zA-Z0-9_]+]] = rlx.sigmoid [[M]] : (f32) -> f32
// CHECK-NEXT: rlx.yield [[G]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return [[R]]
func.func @scalar_input(%x: tensor<8xf32>, %s: tensor<1xf32>) -> tensor<8xf32> {
  %a = rlx.mul %x, %s : (tensor<8xf32>, tensor<1xf32>) -> tensor<8xf32>
  %b = rlx.sigmoid %a : (tensor<8xf32>) -> tensor<8xf32>
  func.return %b : tensor<8xf32>
}

// -----

// A value also used outside the chain becomes an extra region result: it is
// computed once, inside, and materialized for its outside user.

// CHECK-LABEL: func.func @extra_result(
// CHECK-SAME: [[A:%[a-zA-Z0-9_]+]]: tensor<8xf32>
// CHECK-NEXT: [[E:%[a-zA-Z0-9_]+]], [[N:%[a-zA-Z0-9_]+]] = rlx.elementwise_region ins([[A]] : tensor<8xf32>) {indexing_maps = [affine_map<(d0) -> (d0)>]} -> (tensor<8xf32>, tensor<8xf32>) {
// CHECK-NEXT: ^{{.*}}([[X:%[a-zA-Z0-9_]+]]: f32):
// CHECK-NEXT: [[SE:%[a-zA-Z0-9_]+]] = rlx.exp [[X]] : (f32) -> f32
// CHECK-NEXT: [[SN:%[a-zA-Z0-9_]+]] = rlx.neg [[SE]] : (f32) -> f32
// CHECK-NEXT: rlx.yield [[SE]], [[SN]] : f32, f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return [[E]], [[N]] : tensor<8xf32>, tensor<8xf32>
func.func @extra_result(%a: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = rlx.exp %a : (tensor<8xf32>) -> tensor<8xf32>
  %n = rlx.neg %e : (tensor<8xf32>) -> tensor<8xf32>
  func.return %e, %n : tensor<8xf32>, tensor<8xf32>
}

// -----

// The outside user may be a non-fusible op (a reshape view): the region
// yields the value it needs and the reshape reads that result.

// CHECK-LABEL: func.func @extra_result_for_reshape(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<2x4xf32>
// CHECK-NEXT: [[A:%[a-zA-Z0-9_]+]], [[B:%[a-zA-Z0-9_]+]] = rlx.elementwise_region ins([[X]] : tensor<2x4xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>]} -> (tensor<2x4xf32>, tensor<2x4xf32>) {
// CHECK-NEXT: ^{{.*}}([[P:%[a-zA-Z0-9_]+]]: f32):
// CHECK-NEXT: [[SA:%[a-zA-Z0-9_]+]] = rlx.exp [[P]] : (f32) -> f32
// CHECK-NEXT: [[SB:%[a-zA-Z0-9_]+]] = rlx.neg [[SA]] : (f32) -> f32
// CHECK-NEXT: rlx.yield [[SA]], [[SB]] : f32, f32
// CHECK-NEXT: }
// CHECK-NEXT: [[R:%[a-zA-Z0-9_]+]] = rlx.reshape [[A]] : (tensor<2x4xf32>) -> tensor<8xf32>
// CHECK-NEXT: func.return [[B]], [[R]]
func.func @extra_result_for_reshape(%x: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<8xf32>) {
  %a = rlx.exp %x : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %b = rlx.neg %a : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %r = rlx.reshape %a : (tensor<2x4xf32>) -> tensor<8xf32>
  func.return %b, %r : tensor<2x4xf32>, tensor<8xf32>
}

// -----

// Two independent chains (of different shapes) become two regions.

// CHECK-LABEL: func.func @two_chains(
// CHECK-SAME: [[A:%[a-zA-Z0-9_]+]]: tensor<8xf32>, [[B:%[a-zA-Z0-9_]+]]: tensor<2x3xf32>
// CHECK-NEXT: [[N:%[a-zA-Z0-9_]+]] = rlx.elementwise_region ins([[A]] : tensor<8xf32>) {indexing_maps = [affine_map<(d0) -> (d0)>]} -> tensor<8xf32> {
// CHECK-NEXT: ^{{.*}}([[X:%[a-zA-Z0-9_]+]]: f32):
// CHECK-NEXT: [[E:%[a-zA-Z0-9_]+]] = rlx.exp [[X]] : (f32) -> f32
// CHECK-NEXT: [[NN:%[a-zA-Z0-9_]+]] = rlx.neg [[E]] : (f32) -> f32
// CHECK-NEXT: rlx.yield [[NN]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: [[G:%[a-zA-Z0-9_]+]] = rlx.elementwise_region ins([[B]] : tensor<2x3xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>]} -> tensor<2x3xf32> {
// CHECK-NEXT: ^{{.*}}([[Y:%[a-zA-Z0-9_]+]]: f32):
// CHECK-NEXT: [[F:%[a-zA-Z0-9_]+]] = rlx.exp [[Y]] : (f32) -> f32
// CHECK-NEXT: [[GG:%[a-zA-Z0-9_]+]] = rlx.sqrt [[F]] : (f32) -> f32
// CHECK-NEXT: rlx.yield [[GG]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return [[N]], [[G]]
func.func @two_chains(%a: tensor<8xf32>, %b: tensor<2x3xf32>) -> (tensor<8xf32>, tensor<2x3xf32>) {
  %e = rlx.exp %a : (tensor<8xf32>) -> tensor<8xf32>
  %f = rlx.exp %b : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %n = rlx.neg %e : (tensor<8xf32>) -> tensor<8xf32>
  %g = rlx.sqrt %f : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %n, %g : tensor<8xf32>, tensor<2x3xf32>
}

// -----

// Diamond: %a feeds two ops that meet again; all four fuse and %a is
// computed once inside the region (not a region result).

// CHECK-LABEL: func.func @diamond(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<8xf32>
// CHECK-NEXT: [[R:%[a-zA-Z0-9_]+]] = rlx.elementwise_region ins([[X]] : tensor<8xf32>) {indexing_maps = [affine_map<(d0) -> (d0)>]} -> tensor<8xf32> {
// CHECK-NEXT: ^{{.*}}([[P:%[a-zA-Z0-9_]+]]: f32):
// CHECK-NEXT: [[A:%[a-zA-Z0-9_]+]] = rlx.exp [[P]] : (f32) -> f32
// CHECK-NEXT: [[B:%[a-zA-Z0-9_]+]] = rlx.sin [[A]] : (f32) -> f32
// CHECK-NEXT: [[C:%[a-zA-Z0-9_]+]] = rlx.cos [[A]] : (f32) -> f32
// CHECK-NEXT: [[D:%[a-zA-Z0-9_]+]] = rlx.add [[B]], [[C]] : (f32, f32) -> f32
// CHECK-NEXT: rlx.yield [[D]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return [[R]] : tensor<8xf32>
func.func @diamond(%x: tensor<8xf32>) -> tensor<8xf32> {
  %a = rlx.exp %x : (tensor<8xf32>) -> tensor<8xf32>
  %b = rlx.sin %a : (tensor<8xf32>) -> tensor<8xf32>
  %c = rlx.cos %a : (tensor<8xf32>) -> tensor<8xf32>
  %d = rlx.add %b, %c : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  func.return %d : tensor<8xf32>
}

// -----

// Two producers joined by one consumer: both fuse into it, one block
// argument per distinct input.

// CHECK-LABEL: func.func @join(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<4xf32>, [[Y:%[a-zA-Z0-9_]+]]: tensor<4xf32>
// CHECK-NEXT: [[R:%[a-zA-Z0-9_]+]] = rlx.elementwise_region ins([[X]], [[Y]] : tensor<4xf32>, tensor<4xf32>) {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>]} -> tensor<4xf32> {
// CHECK-NEXT: ^{{.*}}([[P:%[a-zA-Z0-9_]+]]: f32, [[Q:%[a-zA-Z0-9_]+]]: f32):
// CHECK-NEXT: [[A:%[a-zA-Z0-9_]+]] = rlx.exp [[P]] : (f32) -> f32
// CHECK-NEXT: [[B:%[a-zA-Z0-9_]+]] = rlx.log [[Q]] : (f32) -> f32
// CHECK-NEXT: [[C:%[a-zA-Z0-9_]+]] = rlx.sub [[A]], [[B]] : (f32, f32) -> f32
// CHECK-NEXT: rlx.yield [[C]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return [[R]]
func.func @join(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %a = rlx.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %b = rlx.log %y : (tensor<4xf32>) -> tensor<4xf32>
  %c = rlx.sub %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %c : tensor<4xf32>
}

// -----

// compare, where and cast mix i1, f32 and i32 inside one region; the
// one-element input of the where reads `(d0, d1) -> (0)`.

// CHECK-LABEL: func.func @compare_where_cast(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<4x3xf32>, [[Y:%[a-zA-Z0-9_]+]]: tensor<3xf32>, [[S:%[a-zA-Z0-9_]+]]: tensor<1xf32>
// CHECK-NEXT: [[R:%[a-zA-Z0-9_]+]] = rlx.elementwise_region ins([[X]], [[Y]], [[S]] : tensor<4x3xf32>, tensor<3xf32>, tensor<1xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (0)>]} -> tensor<4x3xi32> {
// CHECK-NEXT: ^{{.*}}([[P:%[a-zA-Z0-9_]+]]: f32, [[Q:%[a-zA-Z0-9_]+]]: f32, [[Z:%[a-zA-Z0-9_]+]]: f32):
// CHECK-NEXT: [[C:%[a-zA-Z0-9_]+]] = rlx.gt [[P]], [[Q]] : (f32, f32) -> i1
// CHECK-NEXT: [[W:%[a-zA-Z0-9_]+]] = rlx.where [[C]], [[P]], [[Z]] : (i1, f32, f32) -> f32
// CHECK-NEXT: [[I:%[a-zA-Z0-9_]+]] = rlx.cast [[W]] : (f32) -> i32
// CHECK-NEXT: rlx.yield [[I]] : i32
// CHECK-NEXT: }
// CHECK-NEXT: func.return [[R]] : tensor<4x3xi32>
func.func @compare_where_cast(%x: tensor<4x3xf32>, %y: tensor<3xf32>, %s: tensor<1xf32>) -> tensor<4x3xi32> {
  %p = rlx.gt %x, %y : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xi1>
  %w = rlx.where %p, %x, %s : (tensor<4x3xi1>, tensor<4x3xf32>, tensor<1xf32>) -> tensor<4x3xf32>
  %c = rlx.cast %w : (tensor<4x3xf32>) -> tensor<4x3xi32>
  func.return %c : tensor<4x3xi32>
}
