// RUN: rlx-opt %s | filecheck %s
// RUN: rlx-opt %s | rlx-opt | filecheck %s
// Constants, ops and casts of all 21 element types parse, verify and print back.

// CHECK-LABEL: func.func @constants
// CHECK-NEXT:    rlx.constant dense<1.500000e+00> : tensor<2xf16>
// CHECK-NEXT:    rlx.constant dense<-2.500000e+00> : tensor<2xbf16>
// CHECK-NEXT:    rlx.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    rlx.constant dense<3.000000e+00> : tensor<2xf64>
// CHECK-NEXT:    rlx.constant dense<[true, false]> : tensor<2xi1>
// CHECK-NEXT:    rlx.constant dense<-128> : tensor<2xi8>
// CHECK-NEXT:    rlx.constant dense<[1, -1]> : tensor<2xi16>
// CHECK-NEXT:    rlx.constant dense<7> : tensor<2xi32>
// CHECK-NEXT:    rlx.constant dense<-9223372036854775808> : tensor<2xi64>
// CHECK-NEXT:    rlx.constant dense<255> : tensor<2xui8>
// CHECK-NEXT:    rlx.constant dense<4294967295> : tensor<2xui32>
// CHECK-NEXT:    rlx.constant dense<(1.000000e+00,-2.000000e+00)> : tensor<2xcomplex<f32>>
// CHECK-NEXT:    rlx.constant dense<[(1.000000e+00,2.000000e+00), (3.000000e+00,4.000000e+00)]> : tensor<2xcomplex<f64>>
func.func @constants() {
  %0 = rlx.constant dense<1.5> : tensor<2xf16>
  %1 = rlx.constant dense<-2.5> : tensor<2xbf16>
  %2 = rlx.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %3 = rlx.constant dense<3.0> : tensor<2xf64>
  %4 = rlx.constant dense<[true, false]> : tensor<2xi1>
  %5 = rlx.constant dense<-128> : tensor<2xi8>
  %6 = rlx.constant dense<[1, -1]> : tensor<2xi16>
  %7 = rlx.constant dense<7> : tensor<2xi32>
  %8 = rlx.constant dense<-9223372036854775808> : tensor<2xi64>
  %9 = rlx.constant dense<255> : tensor<2xui8>
  %10 = rlx.constant dense<4294967295> : tensor<2xui32>
  %11 = rlx.constant dense<(1.0, -2.0)> : tensor<2xcomplex<f32>>
  %12 = rlx.constant dense<[(1.0, 2.0), (3.0, 4.0)]> : tensor<2xcomplex<f64>>
  func.return
}

// CHECK-LABEL: func.func @ops
// CHECK:         rlx.add %{{.*}} : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>
// CHECK:         rlx.shr %{{.*}} : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
// CHECK:         rlx.div %{{.*}} : (tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>) -> tensor<4xcomplex<f64>>
// CHECK:         rlx.sqrt %{{.*}} : (tensor<4xcomplex<f64>>) -> tensor<4xcomplex<f64>>
// CHECK:         rlx.ne %{{.*}} : (tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>) -> tensor<4xi1>
// CHECK:         rlx.cast %{{.*}} : (tensor<4xcomplex<f64>>) -> tensor<4xf16>
// CHECK:         rlx.cast %{{.*}} : (tensor<4xf16>) -> tensor<4xui8>
func.func @ops(%b: tensor<4xbf16>, %u: tensor<4xui32>, %z: tensor<4xcomplex<f64>>) -> tensor<4xui8> {
  %0 = rlx.add %b, %b : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>
  %1 = rlx.shr %u, %u : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
  %2 = rlx.div %z, %z : (tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>) -> tensor<4xcomplex<f64>>
  %3 = rlx.sqrt %2 : (tensor<4xcomplex<f64>>) -> tensor<4xcomplex<f64>>
  %4 = rlx.ne %3, %z : (tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>) -> tensor<4xi1>
  %5 = rlx.cast %3 : (tensor<4xcomplex<f64>>) -> tensor<4xf16>
  %6 = rlx.cast %5 : (tensor<4xf16>) -> tensor<4xui8>
  func.return %6 : tensor<4xui8>
}

// The ONNX-only types: float8 (four formats), i4/ui4, ui16, ui64. A cast's
// saturate flag prints only when it is not the default (true).
// CHECK-LABEL: func.func @onnx_types
// CHECK-NEXT:    rlx.constant dense<-3.000000e+00> : tensor<2xf8E4M3FN>
// CHECK-NEXT:    rlx.constant dense<2.400000e+02> : tensor<2xf8E4M3FNUZ>
// CHECK-NEXT:    rlx.constant dense<5.734400e+04> : tensor<2xf8E5M2>
// CHECK-NEXT:    rlx.constant dense<1.250000e-01> : tensor<2xf8E5M2FNUZ>
// CHECK-NEXT:    rlx.constant dense<-8> : tensor<2xi4>
// CHECK-NEXT:    rlx.constant dense<15> : tensor<2xui4>
// CHECK-NEXT:    rlx.constant dense<65535> : tensor<2xui16>
// CHECK-NEXT:    rlx.constant dense<18446744073709551615> : tensor<2xui64>
// CHECK:         rlx.cast %{{.*}} : (tensor<4xf32>) -> tensor<4xf8E4M3FN>
// CHECK:         rlx.cast %{{.*}} {saturate = false} : (tensor<4xf32>) -> tensor<4xf8E5M2>
// CHECK:         rlx.add %{{.*}} : (tensor<4xf8E4M3FN>, tensor<4xf8E4M3FN>) -> tensor<4xf8E4M3FN>
// CHECK:         rlx.shr %{{.*}} : (tensor<4xi4>, tensor<4xi4>) -> tensor<4xi4>
// CHECK:         rlx.mul %{{.*}} : (tensor<4xui64>, tensor<4xui64>) -> tensor<4xui64>
func.func @onnx_types(%x: tensor<4xf32>, %n: tensor<4xi4>, %u: tensor<4xui64>) {
  %0 = rlx.constant dense<-3.0> : tensor<2xf8E4M3FN>
  %1 = rlx.constant dense<240.0> : tensor<2xf8E4M3FNUZ>
  %2 = rlx.constant dense<57344.0> : tensor<2xf8E5M2>
  %3 = rlx.constant dense<0.125> : tensor<2xf8E5M2FNUZ>
  %4 = rlx.constant dense<-8> : tensor<2xi4>
  %5 = rlx.constant dense<15> : tensor<2xui4>
  %6 = rlx.constant dense<65535> : tensor<2xui16>
  %7 = rlx.constant dense<18446744073709551615> : tensor<2xui64>
  %c = rlx.cast %x : (tensor<4xf32>) -> tensor<4xf8E4M3FN>
  %d = rlx.cast %x {saturate = false} : (tensor<4xf32>) -> tensor<4xf8E5M2>
  %s = rlx.add %c, %c : (tensor<4xf8E4M3FN>, tensor<4xf8E4M3FN>) -> tensor<4xf8E4M3FN>
  %h = rlx.shr %n, %n : (tensor<4xi4>, tensor<4xi4>) -> tensor<4xi4>
  %m = rlx.mul %u, %u : (tensor<4xui64>, tensor<4xui64>) -> tensor<4xui64>
  func.return
}
