// RUN: rlx-opt %s --split-input-file | filecheck %s
// RUN: rlx-opt %s --split-input-file | rlx-opt --split-input-file | filecheck %s
// RUN: rlx-opt %s --split-input-file --print-op-generic | rlx-opt --split-input-file | filecheck %s

// Every reduction prints back in its custom form, from the custom and from the
// generic form (`"rlx.reduce_sum"(%x) <{axes = ..., keepdims = false}>`).
// Properties at their default value (keepdims and select_last_index false, an
// argmax axis of 0, a softmax axis of -1) are left out of the printout; axes
// are kept as written (negative, unsorted).

// CHECK-LABEL: func.func @reduce(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<4x3x2xf32>, [[I:%[a-zA-Z0-9_]+]]: tensor<5xi32>, [[Z:%[a-zA-Z0-9_]+]]: tensor<2xcomplex<f64>>
// CHECK-NEXT: %{{.*}} = rlx.reduce_sum [[X]] {axes = array<i64: 1>} : (tensor<4x3x2xf32>) -> tensor<4x2xf32>
// CHECK-NEXT: %{{.*}} = rlx.reduce_sum [[X]] {axes = array<i64: -1, 0>, keepdims = true} : (tensor<4x3x2xf32>) -> tensor<1x3x1xf32>
// CHECK-NEXT: %{{.*}} = rlx.reduce_sum [[X]] {axes = array<i64>} : (tensor<4x3x2xf32>) -> tensor<4x3x2xf32>
// CHECK-NEXT: %{{.*}} = rlx.reduce_mean [[Z]] {axes = array<i64: 0>} : (tensor<2xcomplex<f64>>) -> tensor<complex<f64>>
// CHECK-NEXT: %{{.*}} = rlx.reduce_prod [[I]] {axes = array<i64: 0>} : (tensor<5xi32>) -> tensor<i32>
// CHECK-NEXT: %{{.*}} = rlx.reduce_max [[X]] {axes = array<i64: 0, 1, 2>} : (tensor<4x3x2xf32>) -> tensor<f32>
// CHECK-NEXT: %{{.*}} = rlx.reduce_min [[I]] {axes = array<i64: -1>, keepdims = true} : (tensor<5xi32>) -> tensor<1xi32>
// CHECK-NEXT: func.return
func.func @reduce(%x: tensor<4x3x2xf32>, %i: tensor<5xi32>, %z: tensor<2xcomplex<f64>>) {
  %s = rlx.reduce_sum %x {axes = array<i64: 1>, keepdims = false} : (tensor<4x3x2xf32>) -> tensor<4x2xf32>
  %k = "rlx.reduce_sum"(%x) <{axes = array<i64: -1, 0>, keepdims = true}> : (tensor<4x3x2xf32>) -> tensor<1x3x1xf32>
  %n = rlx.reduce_sum %x {axes = array<i64>} : (tensor<4x3x2xf32>) -> tensor<4x3x2xf32>
  %m = rlx.reduce_mean %z {axes = array<i64: 0>} : (tensor<2xcomplex<f64>>) -> tensor<complex<f64>>
  %p = "rlx.reduce_prod"(%i) <{axes = array<i64: 0>, keepdims = false}> : (tensor<5xi32>) -> tensor<i32>
  %a = rlx.reduce_max %x {axes = array<i64: 0, 1, 2>} : (tensor<4x3x2xf32>) -> tensor<f32>
  %b = rlx.reduce_min %i {axes = array<i64: -1>, keepdims = true} : (tensor<5xi32>) -> tensor<1xi32>
  func.return
}

// -----

// argmax/argmin give i64 indices; softmax/log_softmax keep the shape and type.

// CHECK-LABEL: func.func @indices_and_softmax(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<4x3xf16>
// CHECK-NEXT: %{{.*}} = rlx.argmax [[X]] {axis = 1 : i64, keepdims = true, select_last_index = true} : (tensor<4x3xf16>) -> tensor<4x1xi64>
// CHECK-NEXT: %{{.*}} = rlx.argmin [[X]] : (tensor<4x3xf16>) -> tensor<3xi64>
// CHECK-NEXT: %{{.*}} = rlx.argmin [[X]] {axis = -1 : i64} : (tensor<4x3xf16>) -> tensor<4xi64>
// CHECK-NEXT: %{{.*}} = rlx.softmax [[X]] : (tensor<4x3xf16>) -> tensor<4x3xf16>
// CHECK-NEXT: %{{.*}} = rlx.log_softmax [[X]] {axis = 0 : i64} : (tensor<4x3xf16>) -> tensor<4x3xf16>
// CHECK-NEXT: func.return
func.func @indices_and_softmax(%x: tensor<4x3xf16>) {
  %a = rlx.argmax %x {axis = 1 : i64, keepdims = true, select_last_index = true} : (tensor<4x3xf16>) -> tensor<4x1xi64>
  %b = "rlx.argmin"(%x) <{axis = 0 : i64, keepdims = false, select_last_index = false}> : (tensor<4x3xf16>) -> tensor<3xi64>
  %c = rlx.argmin %x {axis = -1 : i64} : (tensor<4x3xf16>) -> tensor<4xi64>
  %p = rlx.softmax %x {axis = -1 : i64} : (tensor<4x3xf16>) -> tensor<4x3xf16>
  %l = "rlx.log_softmax"(%x) <{axis = 0 : i64}> : (tensor<4x3xf16>) -> tensor<4x3xf16>
  func.return
}
