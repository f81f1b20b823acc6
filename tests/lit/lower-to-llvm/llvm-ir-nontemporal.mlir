// RUN: rlx-opt %s -p 'plan-memory,lower-to-llvm{threads=1 tuning="nontemporal_min_bytes=33554432"}' -t llvm | filecheck %s

// An output larger than `nontemporal_min_bytes` (by default the cores' share of
// the last-level cache, a host fact: pinned here to 32 MiB) is stored non-temporally, in
// whole 64-byte lines from a stack buffer; `-t llvm` prints the IR the JIT
// compiles, `!nontemporal` metadata included (lowering/core/translate.py).

// CHECK: define internal void @"big_k0"(
// CHECK: store <64 x i8> {{%v[0-9]+}}, ptr {{%v[0-9]+}}, align 64, !nontemporal [[NT:![0-9]+]]
// CHECK: [[NT]] = !{ i32 1 }
func.func @big(%a: tensor<16777216xf32>, %b: tensor<16777216xf32>) -> tensor<16777216xf32> {
  %s = rlx.add %a, %b : (tensor<16777216xf32>, tensor<16777216xf32>) -> tensor<16777216xf32>
  func.return %s : tensor<16777216xf32>
}
