// RUN: rlx-opt %s -p 'plan-memory,lower-to-llvm{threads=1}' | filecheck %s

// An op's `rlx.tuning` dictionary (set by rlx_mlir/autotune.py when it has
// measured which form is faster) overrides the compile's kernel choices for
// that op only. Two identical gated delta nets: the first is told to run the
// chunked form (its chunk products are CBLAS GEMMs), the second keeps the
// model's sequential form (no BLAS). Their kernels are not shared, although
// the ops are otherwise of one structure.

// CHECK-LABEL: llvm.func internal @two_forms_k0(
// CHECK: llvm.call @scipy_cblas_sgemm(
// CHECK: llvm.return
// CHECK-LABEL: llvm.func internal @two_forms_k1(
// CHECK-NOT: cblas_sgemm
// CHECK: llvm.return
// CHECK-LABEL: llvm.func @two_forms(
// CHECK: llvm.call @two_forms_k0(
// CHECK: llvm.call @two_forms_k1(
func.func @two_forms(%q: tensor<1x256x2x16xf32>, %g: tensor<1x256x2xf32>) -> (tensor<1x256x2x16xf32>, tensor<1x256x2x16xf32>) {
  %a = rlx.gated_delta_net %q, %q, %q, %g, %g {state_size = 16 : i64, rlx.tuning = {gdn_chunked_min_seq = 0 : i64}} : (tensor<1x256x2x16xf32>, tensor<1x256x2x16xf32>, tensor<1x256x2x16xf32>, tensor<1x256x2xf32>, tensor<1x256x2xf32>) -> tensor<1x256x2x16xf32>
  %b = rlx.gated_delta_net %q, %q, %q, %g, %g {state_size = 16 : i64} : (tensor<1x256x2x16xf32>, tensor<1x256x2x16xf32>, tensor<1x256x2x16xf32>, tensor<1x256x2xf32>, tensor<1x256x2xf32>) -> tensor<1x256x2x16xf32>
  func.return %a, %b : tensor<1x256x2x16xf32>, tensor<1x256x2x16xf32>
}

// RUN: not rlx-opt %S/Inputs/bad-tuning-attribute.mlir -p 'plan-memory,lower-to-llvm' 2>&1 | filecheck %s --check-prefix=BAD
// BAD: rlx-opt: error: rlx.gated_delta_net: unknown tuning knob 'gdn_chunked'
