// RUN: rlx-opt %s | filecheck %s
// RUN: rlx-opt %s | rlx-opt | filecheck %s
// RUN: rlx-opt %s --print-op-generic | rlx-opt | filecheck %s
// RUN: rlx-opt %s -t 'mlir{resources_up_to=16}' | filecheck %s --check-prefix=ELIDED
// RUN: rlx-opt %s -t 'mlir{resources_up_to=-1}' | rlx-opt | filecheck %s

// A constant's bytes stay binary: `dense_resource<handle>` in the body, the
// blob (4-byte alignment, then the data, as hex) in MLIR's file trailer,
// which rlx-opt prints (blobs up to 64 KiB unless asked) and reads back, so
// the IR round-trips.
// Two constants of one handle share one blob.

// CHECK-LABEL: func.func @weights
// CHECK-NEXT:    %[[W:.*]] = rlx.constant dense_resource<w> : tensor<2x3xf32>
// CHECK-NEXT:    %{{.*}} = rlx.constant dense_resource<w> : tensor<6xf32>
// CHECK-NEXT:    %{{.*}} = rlx.constant dense_resource<bias> : tensor<3xi32>
// CHECK:       {-#
// CHECK-NEXT:    dialect_resources: {
// CHECK-NEXT:      builtin: {
// CHECK-NEXT:        w: "0x40000000000000000000803F0000004000004040000080400000A040",
// CHECK-NEXT:        bias: "0x40000000010000000200000003000000"
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:  #-}

// Blobs over `resources_up_to` bytes are printed only when asked (a model's
// weights): here `w` (24 bytes) is left out, `bias` (12 bytes) printed.
// ELIDED:      rlx.constant dense_resource<w> : tensor<2x3xf32>
// ELIDED:      builtin: {
// ELIDED-NEXT:   bias: "0x40000000010000000200000003000000"
// ELIDED-NEXT: }

func.func @weights(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<6xf32>, tensor<3xi32>) {
  %w = rlx.constant dense_resource<w> : tensor<2x3xf32>
  %flat = rlx.constant dense_resource<w> : tensor<6xf32>
  %b = rlx.constant dense_resource<bias> : tensor<3xi32>
  %y = rlx.add %x, %w : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %y, %flat, %b : tensor<2x3xf32>, tensor<6xf32>, tensor<3xi32>
}

{-#
  dialect_resources: {
    builtin: {
      w: "0x40000000000000000000803F0000004000004040000080400000A040",
      bias: "0x40000000010000000200000003000000"
    }
  }
#-}
