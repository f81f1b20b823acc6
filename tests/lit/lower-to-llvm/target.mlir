// RUN: rlx-opt %s -p 'plan-memory,lower-to-llvm{threads=1 target=x86-64-v4}' | filecheck %s --check-prefix=V4
// RUN: rlx-opt %s -p 'plan-memory,lower-to-llvm{threads=1 target=x86-64-v3}' | filecheck %s --check-prefix=V3
// RUN: rlx-opt %s -p 'plan-memory,lower-to-llvm{threads=1 target=x86-64-v3 tuning="region_block=8"}' | filecheck %s --check-prefix=KNOB
// RUN: not rlx-opt %s -p 'plan-memory,lower-to-llvm{target=pentium9}' 2>&1 | filecheck %s --check-prefix=BAD-TARGET
// RUN: not rlx-opt %s -p 'plan-memory,lower-to-llvm{tuning="tile_rows=4"}' 2>&1 | filecheck %s --check-prefix=BAD-KNOB
// RUN: not rlx-opt %s -p 'plan-memory,lower-to-llvm{tuning="region_block"}' 2>&1 | filecheck %s --check-prefix=BAD-VALUE

// The target chooses the kernels' vectors (rlx_mlir/target.py, tuning.py). A
// row sum keeps one vector register of f32 lane accumulators, plus the total
// and its compensation: 16 + 2 stack slots with AVX-512 (x86-64-v4), 8 + 2
// with AVX2 (x86-64-v3). The lanes are flushed into the total every
// `region_block` lane steps (64 by default), which an explicit override
// changes.

// V4-LABEL: llvm.func internal @row_sum_k0(
// V4-NEXT: [[SLOTS:%[0-9]+]] = llvm.mlir.constant(18) : i64
// V4-NEXT: {{%[0-9]+}} = llvm.alloca [[SLOTS]] x f32 {alignment = 64 : i64}

// V3-LABEL: llvm.func internal @row_sum_k0(
// V3-NEXT: [[SLOTS:%[0-9]+]] = llvm.mlir.constant(10) : i64
// V3-NEXT: {{%[0-9]+}} = llvm.alloca [[SLOTS]] x f32 {alignment = 64 : i64}
// The 512 lane steps of a row (4096 / 8 lanes) are 8 blocks of 64: block b
// runs steps [b * 64, b * 64 + 64).
// V3: [[SIZE:%[0-9]+]] = llvm.mlir.constant(64) : i64
// V3-NEXT: [[FIRST:%[0-9]+]] = llvm.mul {{%[0-9]+}}, [[SIZE]] : i64
// V3-NEXT: [[SIZE2:%[0-9]+]] = llvm.mlir.constant(64) : i64
// V3-NEXT: llvm.add [[FIRST]], [[SIZE2]] : i64

// With region_block=8 they are 64 blocks of 8.
// KNOB-LABEL: llvm.func internal @row_sum_k0(
// KNOB-NEXT: [[SLOTS:%[0-9]+]] = llvm.mlir.constant(10) : i64
// KNOB: llvm.mlir.constant(64) : i64
// KNOB: [[SIZE:%[0-9]+]] = llvm.mlir.constant(8) : i64
// KNOB-NEXT: [[FIRST:%[0-9]+]] = llvm.mul {{%[0-9]+}}, [[SIZE]] : i64
// KNOB-NEXT: [[SIZE2:%[0-9]+]] = llvm.mlir.constant(8) : i64
// KNOB-NEXT: llvm.add [[FIRST]], [[SIZE2]] : i64

// BAD-TARGET: rlx-opt: error: lower-to-llvm: unknown target 'pentium9': not native, x86-64-v3, x86-64-v4 or an LLVM x86 CPU name
// BAD-KNOB: rlx-opt: error: lower-to-llvm: unknown tuning knob 'tile_rows' (known: accumulators,
// BAD-VALUE: rlx-opt: error: lower-to-llvm: bad tuning override 'region_block': expected name=integer

func.func @row_sum(%x: tensor<8x4096xf32>) -> tensor<8xf32> {
  %s = rlx.reduce_sum %x {axes = array<i64: 1>} : (tensor<8x4096xf32>) -> tensor<8xf32>
  func.return %s : tensor<8xf32>
}
