// RUN: rlx-opt %s --split-input-file | filecheck %s
// RUN: rlx-opt %s --split-input-file | rlx-opt --split-input-file | filecheck %s

// Unary ops on f64 tensors and on plain scalars (the region-body form).

// CHECK-LABEL: func.func @unary_f64_and_scalar(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<4xf64>, [[S:%[a-zA-Z0-9_]+]]: f32
// CHECK-NEXT: %{{.*}} = rlx.exp [[X]] : (tensor<4xf64>) -> tensor<4xf64>
// CHECK-NEXT: %{{.*}} = rlx.sigmoid [[S]] : (f32) -> f32
func.func @unary_f64_and_scalar(%x: tensor<4xf64>, %s: f32) {
  %0 = rlx.exp %x : (tensor<4xf64>) -> tensor<4xf64>
  %1 = rlx.sigmoid %s : (f32) -> f32
  func.return
}

// -----

// Binary ops over floats, with NumPy broadcasting of the operands.

// CHECK-LABEL: func.func @binary_float(
// CHECK-SAME: [[A:%[a-zA-Z0-9_]+]]: tensor<4x3xf32>, [[B:%[a-zA-Z0-9_]+]]: tensor<3xf32>, [[C:%[a-zA-Z0-9_]+]]: tensor<4x1xf32>
// CHECK-NEXT: %{{.*}} = rlx.add [[A]], [[B]] : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: %{{.*}} = rlx.sub [[A]], [[C]] : (tensor<4x3xf32>, tensor<4x1xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: %{{.*}} = rlx.mul [[C]], [[B]] : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: %{{.*}} = rlx.div [[A]], [[A]] : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: %{{.*}} = rlx.mod [[A]], [[B]] : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: %{{.*}} = rlx.max [[A]], [[B]] : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: %{{.*}} = rlx.min [[A]], [[B]] : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: %{{.*}} = rlx.pow [[A]], [[B]] : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: %{{.*}} = rlx.atan2 [[A]], [[B]] : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: func.return
func.func @binary_float(%a: tensor<4x3xf32>, %b: tensor<3xf32>, %c: tensor<4x1xf32>) {
  %0 = rlx.add %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %1 = rlx.sub %a, %c : (tensor<4x3xf32>, tensor<4x1xf32>) -> tensor<4x3xf32>
  %2 = rlx.mul %c, %b : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %3 = rlx.div %a, %a : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %4 = rlx.mod %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %5 = rlx.max %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %6 = rlx.min %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %7 = rlx.pow %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %8 = rlx.atan2 %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

// Arithmetic, pow, relu, shifts and bitwise ops over integers; bitwise ops also take i1.

// CHECK-LABEL: func.func @binary_int(
// CHECK-SAME: [[A:%[a-zA-Z0-9_]+]]: tensor<8xi32>, [[B:%[a-zA-Z0-9_]+]]: tensor<8xi32>, [[L:%[a-zA-Z0-9_]+]]: tensor<2x8xi64>, [[P:%[a-zA-Z0-9_]+]]: tensor<8xi1>
// CHECK-NEXT: %{{.*}} = rlx.add [[A]], [[B]] : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
// CHECK-NEXT: %{{.*}} = rlx.sub [[A]], [[B]] : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
// CHECK-NEXT: %{{.*}} = rlx.mul [[L]], [[L]] : (tensor<2x8xi64>, tensor<2x8xi64>) -> tensor<2x8xi64>
// CHECK-NEXT: %{{.*}} = rlx.div [[A]], [[B]] : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
// CHECK-NEXT: %{{.*}} = rlx.mod [[A]], [[B]] : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
// CHECK-NEXT: %{{.*}} = rlx.max [[A]], [[B]] : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
// CHECK-NEXT: %{{.*}} = rlx.min [[A]], [[B]] : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
// CHECK-NEXT: %{{.*}} = rlx.shl [[A]], [[B]] : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
// CHECK-NEXT: %{{.*}} = rlx.shr [[L]], [[L]] : (tensor<2x8xi64>, tensor<2x8xi64>) -> tensor<2x8xi64>
// CHECK-NEXT: %{{.*}} = rlx.bit_and [[A]], [[B]] : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
// CHECK-NEXT: %{{.*}} = rlx.bit_or [[A]], [[B]] : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
// CHECK-NEXT: %{{.*}} = rlx.bit_xor [[A]], [[B]] : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
// CHECK-NEXT: %{{.*}} = rlx.bit_and [[P]], [[P]] : (tensor<8xi1>, tensor<8xi1>) -> tensor<8xi1>
// CHECK-NEXT: %{{.*}} = rlx.bit_or [[P]], [[P]] : (tensor<8xi1>, tensor<8xi1>) -> tensor<8xi1>
// CHECK-NEXT: %{{.*}} = rlx.bit_xor [[P]], [[P]] : (tensor<8xi1>, tensor<8xi1>) -> tensor<8xi1>
// CHECK-NEXT: %{{.*}} = rlx.pow [[A]], [[B]] : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
// CHECK-NEXT: %{{.*}} = rlx.relu [[L]] : (tensor<2x8xi64>) -> tensor<2x8xi64>
// CHECK-NEXT: func.return
func.func @binary_int(%a: tensor<8xi32>, %b: tensor<8xi32>, %l: tensor<2x8xi64>, %p: tensor<8xi1>) {
  %0 = rlx.add %a, %b : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %1 = rlx.sub %a, %b : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %2 = rlx.mul %l, %l : (tensor<2x8xi64>, tensor<2x8xi64>) -> tensor<2x8xi64>
  %3 = rlx.div %a, %b : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %4 = rlx.mod %a, %b : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %5 = rlx.max %a, %b : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %6 = rlx.min %a, %b : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %7 = rlx.shl %a, %b : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %8 = rlx.shr %l, %l : (tensor<2x8xi64>, tensor<2x8xi64>) -> tensor<2x8xi64>
  %9 = rlx.bit_and %a, %b : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %10 = rlx.bit_or %a, %b : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %11 = rlx.bit_xor %a, %b : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %12 = rlx.bit_and %p, %p : (tensor<8xi1>, tensor<8xi1>) -> tensor<8xi1>
  %13 = rlx.bit_or %p, %p : (tensor<8xi1>, tensor<8xi1>) -> tensor<8xi1>
  %14 = rlx.bit_xor %p, %p : (tensor<8xi1>, tensor<8xi1>) -> tensor<8xi1>
  %15 = rlx.pow %a, %b : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %16 = rlx.relu %l : (tensor<2x8xi64>) -> tensor<2x8xi64>
  func.return
}

// -----

// Comparisons of any element type produce i1.

// CHECK-LABEL: func.func @compare(
// CHECK-SAME: [[A:%[a-zA-Z0-9_]+]]: tensor<4x3xf32>, [[B:%[a-zA-Z0-9_]+]]: tensor<3xf32>, [[I:%[a-zA-Z0-9_]+]]: tensor<5xi64>, [[P:%[a-zA-Z0-9_]+]]: tensor<5xi1>
// CHECK-NEXT: %{{.*}} = rlx.eq [[A]], [[B]] : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xi1>
// CHECK-NEXT: %{{.*}} = rlx.ne [[A]], [[B]] : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xi1>
// CHECK-NEXT: %{{.*}} = rlx.lt [[I]], [[I]] : (tensor<5xi64>, tensor<5xi64>) -> tensor<5xi1>
// CHECK-NEXT: %{{.*}} = rlx.le [[I]], [[I]] : (tensor<5xi64>, tensor<5xi64>) -> tensor<5xi1>
// CHECK-NEXT: %{{.*}} = rlx.gt [[A]], [[A]] : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xi1>
// CHECK-NEXT: %{{.*}} = rlx.ge [[P]], [[P]] : (tensor<5xi1>, tensor<5xi1>) -> tensor<5xi1>
// CHECK-NEXT: func.return
func.func @compare(%a: tensor<4x3xf32>, %b: tensor<3xf32>, %i: tensor<5xi64>, %p: tensor<5xi1>) {
  %0 = rlx.eq %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xi1>
  %1 = rlx.ne %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xi1>
  %2 = rlx.lt %i, %i : (tensor<5xi64>, tensor<5xi64>) -> tensor<5xi1>
  %3 = rlx.le %i, %i : (tensor<5xi64>, tensor<5xi64>) -> tensor<5xi1>
  %4 = rlx.gt %a, %a : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xi1>
  %5 = rlx.ge %p, %p : (tensor<5xi1>, tensor<5xi1>) -> tensor<5xi1>
  func.return
}

// -----

// where broadcasts all three operands; fma takes three of one float type.

// CHECK-LABEL: func.func @where_fma(
// CHECK-SAME: [[C:%[a-zA-Z0-9_]+]]: tensor<4x1xi1>, [[A:%[a-zA-Z0-9_]+]]: tensor<4x3xf32>, [[B:%[a-zA-Z0-9_]+]]: tensor<3xf32>
// CHECK-NEXT: [[W:%[a-zA-Z0-9_]+]] = rlx.where [[C]], [[A]], [[B]] : (tensor<4x1xi1>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: %{{.*}} = rlx.fma [[W]], [[B]], [[A]] : (tensor<4x3xf32>, tensor<3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: func.return
func.func @where_fma(%c: tensor<4x1xi1>, %a: tensor<4x3xf32>, %b: tensor<3xf32>) {
  %w = rlx.where %c, %a, %b : (tensor<4x1xi1>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %f = rlx.fma %w, %b, %a : (tensor<4x3xf32>, tensor<3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

// cast changes the element type only; the result type names the target.

// CHECK-LABEL: func.func @cast(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<2x2xf32>
// CHECK-NEXT: [[I:%[a-zA-Z0-9_]+]] = rlx.cast [[X]] : (tensor<2x2xf32>) -> tensor<2x2xi32>
// CHECK-NEXT: [[P:%[a-zA-Z0-9_]+]] = rlx.cast [[I]] : (tensor<2x2xi32>) -> tensor<2x2xi1>
// CHECK-NEXT: [[D:%[a-zA-Z0-9_]+]] = rlx.cast [[P]] : (tensor<2x2xi1>) -> tensor<2x2xf64>
// CHECK-NEXT: %{{.*}} = rlx.cast [[D]] : (tensor<2x2xf64>) -> tensor<2x2xi64>
// CHECK-NEXT: func.return
func.func @cast(%x: tensor<2x2xf32>) {
  %i = rlx.cast %x : (tensor<2x2xf32>) -> tensor<2x2xi32>
  %p = rlx.cast %i : (tensor<2x2xi32>) -> tensor<2x2xi1>
  %d = rlx.cast %p : (tensor<2x2xi1>) -> tensor<2x2xf64>
  %l = rlx.cast %d : (tensor<2x2xf64>) -> tensor<2x2xi64>
  func.return
}

// -----

// Shape ops: expand (np.broadcast_to) and reshape (a row-major view).

// CHECK-LABEL: func.func @shape_ops(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<3xf32>, [[Y:%[a-zA-Z0-9_]+]]: tensor<4x1xi64>
// CHECK-NEXT: [[E:%[a-zA-Z0-9_]+]] = rlx.expand [[X]] : (tensor<3xf32>) -> tensor<2x4x3xf32>
// CHECK-NEXT: %{{.*}} = rlx.expand [[Y]] : (tensor<4x1xi64>) -> tensor<4x5xi64>
// CHECK-NEXT: %{{.*}} = rlx.reshape [[E]] : (tensor<2x4x3xf32>) -> tensor<8x3xf32>
// CHECK-NEXT: %{{.*}} = rlx.reshape [[Y]] : (tensor<4x1xi64>) -> tensor<2x2xi64>
// CHECK-NEXT: func.return
func.func @shape_ops(%x: tensor<3xf32>, %y: tensor<4x1xi64>) {
  %e = rlx.expand %x : (tensor<3xf32>) -> tensor<2x4x3xf32>
  %f = rlx.expand %y : (tensor<4x1xi64>) -> tensor<4x5xi64>
  %r = rlx.reshape %e : (tensor<2x4x3xf32>) -> tensor<8x3xf32>
  %s = rlx.reshape %y : (tensor<4x1xi64>) -> tensor<2x2xi64>
  func.return
}

// -----

// Constants: a dense attribute whose type is the result type.

// CHECK-LABEL: func.func @constants(
// CHECK-NEXT: %{{.*}} = rlx.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT: %{{.*}} = rlx.constant dense<7> : tensor<2x3xi32>
// CHECK-NEXT: %{{.*}} = rlx.constant dense<true> : tensor<4xi1>
// CHECK-NEXT: %{{.*}} = rlx.constant dense<{{\[}}[1.500000e+00], [-2.500000e+00]]> : tensor<2x1xf64>
// CHECK-NEXT: func.return
func.func @constants() {
  %0 = rlx.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %1 = rlx.constant dense<7> : tensor<2x3xi32>
  %2 = rlx.constant dense<true> : tensor<4xi1>
  %3 = rlx.constant dense<[[1.5], [-2.5]]> : tensor<2x1xf64>
  func.return
}

// -----

// A fused region with one broadcast input and a scalar-read input.

// CHECK-LABEL: func.func @region(
// CHECK-SAME: [[A:%[a-zA-Z0-9_]+]]: tensor<4x3xf32>, [[B:%[a-zA-Z0-9_]+]]: tensor<3xf32>, [[C:%[a-zA-Z0-9_]+]]: tensor<1xf32>
// CHECK-NEXT: [[R:%[a-zA-Z0-9_]+]] = rlx.elementwise_region ins([[A]], [[B]], [[C]] : tensor<4x3xf32>, tensor<3xf32>, tensor<1xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (0)>]} -> tensor<4x3xf32> {
// CHECK-NEXT: ^{{.*}}([[X:%[a-zA-Z0-9_]+]]: f32, [[Y:%[a-zA-Z0-9_]+]]: f32, [[Z:%[a-zA-Z0-9_]+]]: f32):
// CHECK-NEXT: [[S:%[a-zA-Z0-9_]+]] = rlx.add [[X]], [[Y]] : (f32, f32) -> f32
// CHECK-NEXT: [[T:%[a-zA-Z0-9_]+]] = rlx.mul [[S]], [[Z]] : (f32, f32) -> f32
// CHECK-NEXT: rlx.yield [[T]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return [[R]] : tensor<4x3xf32>
func.func @region(%a: tensor<4x3xf32>, %b: tensor<3xf32>, %c: tensor<1xf32>) -> tensor<4x3xf32> {
  %r = rlx.elementwise_region ins(%a, %b, %c : tensor<4x3xf32>, tensor<3xf32>, tensor<1xf32>)
         {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (0)>]}
         -> tensor<4x3xf32> {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %s = rlx.add %x, %y : (f32, f32) -> f32
    %t = rlx.mul %s, %z : (f32, f32) -> f32
    rlx.yield %t : f32
  }
  func.return %r : tensor<4x3xf32>
}

// -----

// A region with several results of mixed element types.

// CHECK-LABEL: func.func @region_multi_result(
// CHECK-SAME: [[A:%[a-zA-Z0-9_]+]]: tensor<8xf32>, [[B:%[a-zA-Z0-9_]+]]: tensor<8xf32>
// CHECK-NEXT: [[R0:%[a-zA-Z0-9_]+]], [[R1:%[a-zA-Z0-9_]+]], [[R2:%[a-zA-Z0-9_]+]] = rlx.elementwise_region ins([[A]], [[B]] : tensor<8xf32>, tensor<8xf32>) {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>]} -> (tensor<8xf32>, tensor<8xi1>, tensor<8xf32>) {
// CHECK-NEXT: ^{{.*}}([[X:%[a-zA-Z0-9_]+]]: f32, [[Y:%[a-zA-Z0-9_]+]]: f32):
// CHECK-NEXT: [[S:%[a-zA-Z0-9_]+]] = rlx.sub [[X]], [[Y]] : (f32, f32) -> f32
// CHECK-NEXT: [[P:%[a-zA-Z0-9_]+]] = rlx.gt [[S]], [[X]] : (f32, f32) -> i1
// CHECK-NEXT: [[W:%[a-zA-Z0-9_]+]] = rlx.where [[P]], [[S]], [[Y]] : (i1, f32, f32) -> f32
// CHECK-NEXT: rlx.yield [[S]], [[P]], [[W]] : f32, i1, f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return [[R0]], [[R1]], [[R2]] : tensor<8xf32>, tensor<8xi1>, tensor<8xf32>
func.func @region_multi_result(%a: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xi1>, tensor<8xf32>) {
  %r:3 = rlx.elementwise_region ins(%a, %b : tensor<8xf32>, tensor<8xf32>)
           {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>]}
           -> (tensor<8xf32>, tensor<8xi1>, tensor<8xf32>) {
  ^bb0(%x: f32, %y: f32):
    %s = rlx.sub %x, %y : (f32, f32) -> f32
    %p = rlx.gt %s, %x : (f32, f32) -> i1
    %w = rlx.where %p, %s, %y : (i1, f32, f32) -> f32
    rlx.yield %s, %p, %w : f32, i1, f32
  }
  func.return %r#0, %r#1, %r#2 : tensor<8xf32>, tensor<8xi1>, tensor<8xf32>
}

// -----

// A region may carry extra discardable attributes; they print after the maps.

// CHECK-LABEL: func.func @region_attrs(
// CHECK: rlx.elementwise_region ins(%{{.*}} : tensor<2xi32>) {indexing_maps = [affine_map<(d0) -> (d0)>], tag = "k"} -> tensor<2xi32> {
// CHECK: rlx.yield %{{.*}} : i32
func.func @region_attrs(%a: tensor<2xi32>) -> tensor<2xi32> {
  %r = rlx.elementwise_region ins(%a : tensor<2xi32>) {indexing_maps = [affine_map<(d0) -> (d0)>], tag = "k"} -> tensor<2xi32> {
  ^bb0(%x: i32):
    %y = rlx.add %x, %x : (i32, i32) -> i32
    rlx.yield %y : i32
  }
  func.return %r : tensor<2xi32>
}
