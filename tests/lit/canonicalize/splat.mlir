// RUN: rlx-opt %s --split-input-file | filecheck %s --check-prefix=ROUNDTRIP
// RUN: rlx-opt %s -p canonicalize --split-input-file | filecheck %s

// A splat constant is parsed as its one value (xDSL's parser would expand it
// to every element) and prints back as a splat; `canonicalize` makes it a
// rank-0 constant and an rlx.expand, which canonicalize-broadcast then folds
// into its users' index maps, so the splat never takes more than one element.

// ROUNDTRIP-LABEL: func.func @huge(
// ROUNDTRIP-NEXT: rlx.constant dense<2.500000e+00> : tensor<1000000000000xf32>
// CHECK-LABEL: func.func @huge(
// CHECK-NEXT: [[C:%[a-zA-Z0-9_]+]] = rlx.constant dense<2.500000e+00> : tensor<f32>
// CHECK-NEXT: [[E:%[a-zA-Z0-9_]+]] = rlx.expand [[C]] : (tensor<f32>) -> tensor<1000000000000xf32>
// CHECK-NEXT: rlx.neg [[E]]
func.func @huge() -> tensor<1000000000000xf32> {
  %c = rlx.constant dense<2.5> : tensor<1000000000000xf32>
  %n = rlx.neg %c : (tensor<1000000000000xf32>) -> tensor<1000000000000xf32>
  func.return %n : tensor<1000000000000xf32>
}

// -----

// Integer and boolean splats too; a rank-0 constant is no splat and stays.
// CHECK-LABEL: func.func @kinds(
// CHECK-NEXT: rlx.constant dense<-7> : tensor<i16>
// CHECK-NEXT: rlx.expand %{{.*}} : (tensor<i16>) -> tensor<3x4xi16>
// CHECK-NEXT: rlx.constant dense<true> : tensor<i1>
// CHECK-NEXT: rlx.expand %{{.*}} : (tensor<i1>) -> tensor<5xi1>
// CHECK-NEXT: rlx.constant dense<1.000000e+00> : tensor<f64>
// CHECK-NEXT: func.return
func.func @kinds() -> (tensor<3x4xi16>, tensor<5xi1>, tensor<f64>) {
  %a = rlx.constant dense<-7> : tensor<3x4xi16>
  %b = rlx.constant dense<true> : tensor<5xi1>
  %c = rlx.constant dense<1.0> : tensor<f64>
  func.return %a, %b, %c : tensor<3x4xi16>, tensor<5xi1>, tensor<f64>
}
