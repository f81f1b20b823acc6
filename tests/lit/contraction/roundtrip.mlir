// RUN: rlx-opt %s --split-input-file | filecheck %s
// RUN: rlx-opt %s --split-input-file | rlx-opt --split-input-file | filecheck %s
// RUN: rlx-opt %s --split-input-file --print-op-generic | rlx-opt --split-input-file | filecheck %s

// rlx.matmul prints back in its custom form whether it was written custom or
// generic (third RUN line). The transpose flags are properties in the
// attribute dictionary; a flag at its default (false) is left out.

// Plain, flagged, batch-broadcast and 1-D forms.

// CHECK-LABEL: func.func @forms(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<3x4xf32>, [[W:%[a-zA-Z0-9_]+]]: tensor<4x5xf32>, [[WT:%[a-zA-Z0-9_]+]]: tensor<5x4xf32>, [[B:%[a-zA-Z0-9_]+]]: tensor<2x1x3x4xf32>, [[C:%[a-zA-Z0-9_]+]]: tensor<6x4x5xf32>, [[V:%[a-zA-Z0-9_]+]]: tensor<4xf32>
// CHECK-NEXT: {{%[a-zA-Z0-9_]+}} = rlx.matmul [[X]], [[W]] : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT: {{%[a-zA-Z0-9_]+}} = rlx.matmul [[X]], [[WT]] {transpose_rhs = true} : (tensor<3x4xf32>, tensor<5x4xf32>) -> tensor<3x5xf32>
// CHECK-NEXT: {{%[a-zA-Z0-9_]+}} = rlx.matmul [[W]], [[WT]] {transpose_lhs = true, transpose_rhs = true} : (tensor<4x5xf32>, tensor<5x4xf32>) -> tensor<5x5xf32>
// CHECK-NEXT: {{%[a-zA-Z0-9_]+}} = rlx.matmul [[B]], [[C]] : (tensor<2x1x3x4xf32>, tensor<6x4x5xf32>) -> tensor<2x6x3x5xf32>
// CHECK-NEXT: {{%[a-zA-Z0-9_]+}} = rlx.matmul [[V]], [[W]] : (tensor<4xf32>, tensor<4x5xf32>) -> tensor<5xf32>
// CHECK-NEXT: {{%[a-zA-Z0-9_]+}} = rlx.matmul [[X]], [[V]] : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3xf32>
// CHECK-NEXT: {{%[a-zA-Z0-9_]+}} = rlx.matmul [[V]], [[V]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
// CHECK-NEXT: {{%[a-zA-Z0-9_]+}} = rlx.matmul [[V]], [[C]] : (tensor<4xf32>, tensor<6x4x5xf32>) -> tensor<6x5xf32>
// CHECK-NEXT: func.return
func.func @forms(%x: tensor<3x4xf32>, %w: tensor<4x5xf32>, %wt: tensor<5x4xf32>, %b: tensor<2x1x3x4xf32>, %c: tensor<6x4x5xf32>, %v: tensor<4xf32>) {
  %0 = rlx.matmul %x, %w : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  %1 = rlx.matmul %x, %wt {transpose_rhs = true} : (tensor<3x4xf32>, tensor<5x4xf32>) -> tensor<3x5xf32>
  %2 = rlx.matmul %w, %wt {transpose_lhs = true, transpose_rhs = true} : (tensor<4x5xf32>, tensor<5x4xf32>) -> tensor<5x5xf32>
  %3 = rlx.matmul %b, %c : (tensor<2x1x3x4xf32>, tensor<6x4x5xf32>) -> tensor<2x6x3x5xf32>
  %4 = rlx.matmul %v, %w : (tensor<4xf32>, tensor<4x5xf32>) -> tensor<5xf32>
  %5 = rlx.matmul %x, %v : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3xf32>
  %6 = rlx.matmul %v, %v : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  %7 = rlx.matmul %v, %c : (tensor<4xf32>, tensor<6x4x5xf32>) -> tensor<6x5xf32>
  func.return
}

// -----

// The generic form with explicit false flags parses; the printout drops them.

// CHECK-LABEL: func.func @generic(
// CHECK-NEXT: {{%[a-zA-Z0-9_]+}} = rlx.matmul {{%[a-zA-Z0-9_]+}}, {{%[a-zA-Z0-9_]+}} {transpose_lhs = true} : (tensor<4x3xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT: {{%[a-zA-Z0-9_]+}} = rlx.matmul {{%[a-zA-Z0-9_]+}}, {{%[a-zA-Z0-9_]+}} : (tensor<4x3xf32>, tensor<3x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: func.return
func.func @generic(%x: tensor<4x3xf32>, %w: tensor<4x5xf32>, %u: tensor<3x4xf32>) {
  %0 = "rlx.matmul"(%x, %w) <{transpose_lhs = true, transpose_rhs = false}> : (tensor<4x3xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  %1 = "rlx.matmul"(%x, %u) <{transpose_lhs = false, transpose_rhs = false}> : (tensor<4x3xf32>, tensor<3x4xf32>) -> tensor<4x4xf32>
  func.return
}

// -----

// Every element type the op accepts, and a zero-size K.

// CHECK-LABEL: func.func @element_types(
// CHECK-NEXT: rlx.matmul {{.*}} : (tensor<2x3xf16>, tensor<3x2xf16>) -> tensor<2x2xf16>
// CHECK-NEXT: rlx.matmul {{.*}} : (tensor<2x3xbf16>, tensor<3x2xbf16>) -> tensor<2x2xbf16>
// CHECK-NEXT: rlx.matmul {{.*}} : (tensor<2x3xf64>, tensor<3x2xf64>) -> tensor<2x2xf64>
// CHECK-NEXT: rlx.matmul {{.*}} : (tensor<2x3xcomplex<f32>>, tensor<3x2xcomplex<f32>>) -> tensor<2x2xcomplex<f32>>
// CHECK-NEXT: rlx.matmul {{.*}} {transpose_rhs = true} : (tensor<2x3xcomplex<f64>>, tensor<2x3xcomplex<f64>>) -> tensor<2x2xcomplex<f64>>
// CHECK-NEXT: rlx.matmul {{.*}} : (tensor<2x3xi32>, tensor<3x2xi32>) -> tensor<2x2xi32>
// CHECK-NEXT: rlx.matmul {{.*}} : (tensor<2x3xi64>, tensor<3x2xi64>) -> tensor<2x2xi64>
// CHECK-NEXT: rlx.matmul {{.*}} : (tensor<2x0xf32>, tensor<0x2xf32>) -> tensor<2x2xf32>
// CHECK-NEXT: func.return
func.func @element_types(%a: tensor<2x3xf16>, %b: tensor<3x2xf16>, %c: tensor<2x3xbf16>, %d: tensor<3x2xbf16>,
                         %e: tensor<2x3xf64>, %f: tensor<3x2xf64>, %g: tensor<2x3xcomplex<f32>>, %h: tensor<3x2xcomplex<f32>>,
                         %i: tensor<2x3xcomplex<f64>>, %j: tensor<2x3xi32>, %k: tensor<3x2xi32>, %l: tensor<2x3xi64>,
                         %m: tensor<3x2xi64>, %n: tensor<2x0xf32>, %o: tensor<0x2xf32>) {
  %0 = rlx.matmul %a, %b : (tensor<2x3xf16>, tensor<3x2xf16>) -> tensor<2x2xf16>
  %1 = rlx.matmul %c, %d : (tensor<2x3xbf16>, tensor<3x2xbf16>) -> tensor<2x2xbf16>
  %2 = rlx.matmul %e, %f : (tensor<2x3xf64>, tensor<3x2xf64>) -> tensor<2x2xf64>
  %3 = rlx.matmul %g, %h : (tensor<2x3xcomplex<f32>>, tensor<3x2xcomplex<f32>>) -> tensor<2x2xcomplex<f32>>
  %4 = rlx.matmul %i, %i {transpose_rhs = true} : (tensor<2x3xcomplex<f64>>, tensor<2x3xcomplex<f64>>) -> tensor<2x2xcomplex<f64>>
  %5 = rlx.matmul %j, %k : (tensor<2x3xi32>, tensor<3x2xi32>) -> tensor<2x2xi32>
  %6 = rlx.matmul %l, %m : (tensor<2x3xi64>, tensor<3x2xi64>) -> tensor<2x2xi64>
  %7 = rlx.matmul %n, %o : (tensor<2x0xf32>, tensor<0x2xf32>) -> tensor<2x2xf32>
  func.return
}
