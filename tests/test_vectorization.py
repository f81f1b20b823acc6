"""The fused inner loops vectorize: packed vector instructions, no libm calls.

The checks read x86 AVX register names (%ymm/%zmm) in the assembly compiled for
the host, so the module only runs on an x86-64 host with AVX (the `x86_64_avx`
marker of conftest.py skips it elsewhere, with the reason).
"""

from __future__ import annotations

import re

import pytest

import rlx_mlir as rlx

pytestmark = pytest.mark.x86_64_avx

CHAIN = """
func.func @f(%a: tensor<4096xDT>, %b: tensor<4096xDT>) -> tensor<4096xDT> {
  %t = rlx.tanh %a : (tensor<4096xDT>) -> tensor<4096xDT>
  %g = rlx.gelu %b : (tensor<4096xDT>) -> tensor<4096xDT>
  %e = rlx.exp %t : (tensor<4096xDT>) -> tensor<4096xDT>
  %l = rlx.log %g : (tensor<4096xDT>) -> tensor<4096xDT>
  %s = rlx.sin %e : (tensor<4096xDT>) -> tensor<4096xDT>
  %r = rlx.add %s, %l : (tensor<4096xDT>, tensor<4096xDT>) -> tensor<4096xDT>
  func.return %r : tensor<4096xDT>
}
"""
LIBM = re.compile(r"call\w*\s+\w*(exp|log|tanh|sin|cos|erf|pow)f?\b")


@pytest.mark.parametrize(("dtype", "suffix"), [("f32", "ps"), ("f64", "pd")])
def test_transcendental_chain_is_packed_and_call_free(dtype: str, suffix: str) -> None:
    asm = rlx.compile(CHAIN.replace("DT", dtype)).assembly()
    packed = re.findall(rf"\bv\w+{suffix}\s+%[xyz]mm", asm)
    wide = [line for line in packed if "%ymm" in line or "%zmm" in line]
    assert len(wide) > 20, "the fused loop did not vectorize"
    assert not LIBM.search(asm), LIBM.search(asm)


def test_broadcast_bias_inner_loop_is_packed() -> None:
    asm = rlx.compile(
        """func.func @f(%a: tensor<64x1024xf32>, %b: tensor<1024xf32>) -> tensor<64x1024xf32> {
          %s = rlx.add %a, %b : (tensor<64x1024xf32>, tensor<1024xf32>) -> tensor<64x1024xf32>
          func.return %s : tensor<64x1024xf32>
        }"""
    ).assembly()
    assert re.search(r"vaddps\s+.*%[yz]mm", asm)


def test_in_place_kernels_vectorize_without_overlap_checks() -> None:
    """Unfused, each op of the chain writes over the intermediate it reads
    (plan-memory's in-place case): the kernel reads and writes through one
    pointer, so LLVM keeps no scalar loop for overlapping pointers (which
    in-place buffers always took). 4096 elements leave no remainder loop:
    every loop left is a vector body."""
    exe = rlx.compile(CHAIN.replace("DT", "f32"), pipeline="")
    assert any(len(set(offsets)) < len(offsets) for offsets in _in_place_offsets(exe.planned_ir))
    labels = re.findall(r"^([\w.]+):", exe.optimized_llvm_ir, re.M)
    assert labels.count("vector.body") == 6  # one per kernel
    entries_and_exits = re.compile(r"\.\d+|.*\.exit")
    assert [b for b in labels if b != "vector.body" and not entries_and_exits.fullmatch(b)] == []


def _in_place_offsets(planned_ir: str) -> list[list[int]]:
    """Per op of the planned IR, the arena offsets of its operands and result
    (a repeated offset: the op writes over an operand)."""
    offsets: dict[str, int] = {}
    found = []
    planned = re.findall(r"(%\w+) = rlx\.\w+ ([^:{]*).*rlx\.offsets = array<i64: (-?\d+)>", planned_ir)
    for name, operands, offset in planned:
        offsets[name] = int(offset)
        reads = [offsets[v] for v in re.findall(r"%\w+", operands) if v in offsets]
        found.append([*reads, int(offset)] if int(offset) >= 0 else reads)
    return found
