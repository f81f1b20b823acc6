// RUN: rlx-opt %s -p plan-memory | filecheck %s
// The planner sizes every element type: 1 (i1, i8, ui8), 2 (f16, bf16, i16),
// 4, 8 and 16 (complex<f64>) bytes, each buffer rounded up to 64 bytes.
// 100 x complex<f64> = 1600 B, 100 x bf16 = 200 -> 256 B, 100 x ui8 = 100 -> 128 B,
// 100 x f32 = 400 -> 448 B. The peak is at %c2: %c, %b, %u and %c2 are live
// (%c2 cannot take %c's place: different element size), 1600+256+128+448 B.

// CHECK-LABEL: func.func @sizes
// CHECK-SAME:    rlx.arena_size = 2432 : i64, rlx.arena_lower_bound = 2432 : i64
// CHECK-NEXT:    rlx.cast %{{.*}} {rlx.offsets = array<i64: 0>} : (tensor<100xf32>) -> tensor<100xcomplex<f64>>
// CHECK-NEXT:    rlx.cast %{{.*}} {rlx.offsets = array<i64: 1600>} : (tensor<100xf32>) -> tensor<100xbf16>
// CHECK-NEXT:    rlx.cast %{{.*}} {rlx.offsets = array<i64: 1856>} : (tensor<100xf32>) -> tensor<100xui8>
func.func @sizes(%a: tensor<100xf32>) -> tensor<100xf32> {
  %c = rlx.cast %a : (tensor<100xf32>) -> tensor<100xcomplex<f64>>
  %b = rlx.cast %a : (tensor<100xf32>) -> tensor<100xbf16>
  %u = rlx.cast %a : (tensor<100xf32>) -> tensor<100xui8>
  %c2 = rlx.cast %c : (tensor<100xcomplex<f64>>) -> tensor<100xf32>
  %b2 = rlx.cast %b : (tensor<100xbf16>) -> tensor<100xf32>
  %u2 = rlx.cast %u : (tensor<100xui8>) -> tensor<100xf32>
  %s = rlx.add %c2, %b2 : (tensor<100xf32>, tensor<100xf32>) -> tensor<100xf32>
  %r = rlx.add %s, %u2 : (tensor<100xf32>, tensor<100xf32>) -> tensor<100xf32>
  func.return %r : tensor<100xf32>
}
