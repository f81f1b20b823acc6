// RUN: rlx-opt %s -p fuse-elementwise --split-input-file | filecheck %s
// Regions may mix element types through casts (the reference runtime's
// regions are single-dtype): f16 in, f32 math, bf16 and i16 out, one loop.

// CHECK-LABEL: func.func @f16_math_bf16
// CHECK-SAME:    (%[[H:[a-zA-Z0-9_]+]]: tensor<64xf16>, %[[K:[a-zA-Z0-9_]+]]: tensor<64xui8>)
// CHECK-NEXT:    %[[B:[a-zA-Z0-9_]+]], %[[I:[a-zA-Z0-9_]+]] = rlx.elementwise_region ins(%[[H]], %[[K]] : tensor<64xf16>, tensor<64xui8>)
// CHECK-SAME:      -> (tensor<64xbf16>, tensor<64xi16>) {
// CHECK-NEXT:    ^bb0(%[[SH:[a-zA-Z0-9_]+]]: f16, %[[SK:[a-zA-Z0-9_]+]]: ui8):
// CHECK-NEXT:      %[[X:[a-zA-Z0-9_]+]] = rlx.cast %[[SH]] : (f16) -> f32
// CHECK-NEXT:      %[[T:[a-zA-Z0-9_]+]] = rlx.tanh %[[X]] : (f32) -> f32
// CHECK-NEXT:      %[[KF:[a-zA-Z0-9_]+]] = rlx.cast %[[SK]] : (ui8) -> f32
// CHECK-NEXT:      %[[S:[a-zA-Z0-9_]+]] = rlx.mul %[[T]], %[[KF]] : (f32, f32) -> f32
// CHECK-NEXT:      %[[SB:[a-zA-Z0-9_]+]] = rlx.cast %[[S]] : (f32) -> bf16
// CHECK-NEXT:      %[[SI:[a-zA-Z0-9_]+]] = rlx.cast %[[S]] : (f32) -> i16
// CHECK-NEXT:      rlx.yield %[[SB]], %[[SI]] : bf16, i16
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[B]], %[[I]] : tensor<64xbf16>, tensor<64xi16>
func.func @f16_math_bf16(%h: tensor<64xf16>, %k: tensor<64xui8>) -> (tensor<64xbf16>, tensor<64xi16>) {
  %x = rlx.cast %h : (tensor<64xf16>) -> tensor<64xf32>
  %t = rlx.tanh %x : (tensor<64xf32>) -> tensor<64xf32>
  %kf = rlx.cast %k : (tensor<64xui8>) -> tensor<64xf32>
  %s = rlx.mul %t, %kf : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %b = rlx.cast %s : (tensor<64xf32>) -> tensor<64xbf16>
  %i = rlx.cast %s : (tensor<64xf32>) -> tensor<64xi16>
  func.return %b, %i : tensor<64xbf16>, tensor<64xi16>
}

// -----

// Complex ops fuse like any other; the region still has one scalar per element.
// CHECK-LABEL: func.func @complex_chain
// CHECK:         rlx.elementwise_region
// CHECK-NEXT:    ^bb0(%{{.*}}: complex<f32>, %{{.*}}: complex<f32>):
// CHECK-NEXT:      rlx.mul {{.*}} : (complex<f32>, complex<f32>) -> complex<f32>
// CHECK-NEXT:      rlx.exp {{.*}} : (complex<f32>) -> complex<f32>
// CHECK-NEXT:      rlx.cast {{.*}} : (complex<f32>) -> f64
// CHECK-NOT:     rlx.elementwise_region
func.func @complex_chain(%a: tensor<8xcomplex<f32>>, %b: tensor<8xcomplex<f32>>) -> tensor<8xf64> {
  %m = rlx.mul %a, %b : (tensor<8xcomplex<f32>>, tensor<8xcomplex<f32>>) -> tensor<8xcomplex<f32>>
  %e = rlx.exp %m : (tensor<8xcomplex<f32>>) -> tensor<8xcomplex<f32>>
  %r = rlx.cast %e : (tensor<8xcomplex<f32>>) -> tensor<8xf64>
  func.return %r : tensor<8xf64>
}
