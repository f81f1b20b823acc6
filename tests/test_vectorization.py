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


def test_transposed_copy_moves_register_blocks() -> None:
    """A transpose is 16 x 16 blocks of zmm loads, two-source shuffles and zmm stores."""
    asm = rlx.compile(
        """func.func @f(%a: tensor<256x320xf32>) -> tensor<320x256xf32> {
          %t = rlx.transpose %a {perm = array<i64: 1, 0>} : (tensor<256x320xf32>) -> tensor<320x256xf32>
          func.return %t : tensor<320x256xf32>
        }"""
    ).assembly()
    shuffles = re.findall(r"\bv(?:permt2|unpck|shuf)\w*\s+.*%zmm", asm)
    assert len(shuffles) >= 32, "the 16 x 16 register transpose is missing"


def test_outputs_past_the_last_level_cache_are_stored_nontemporally(monkeypatch: pytest.MonkeyPatch) -> None:
    """Outputs larger than the last-level cache (a 64 KiB one here) leave through whole-line
    non-temporal stores, elementwise and transposed alike; smaller ones through ordinary stores."""
    from rlx_mlir.lowering import vectors

    monkeypatch.setenv("RLX_MLIR_CACHE", "0")
    monkeypatch.setattr(vectors, "last_level_cache_bytes", lambda: 1 << 16)

    def module(rows: int) -> str:
        x, t = f"tensor<{rows}x128xf32>", f"tensor<128x{rows}xf32>"
        return f"""func.func @f(%a: {x}, %b: {x}) -> ({x}, {t}) {{
          %s = rlx.add %a, %b : ({x}, {x}) -> {x}
          %t = rlx.transpose %a {{perm = array<i64: 1, 0>}} : ({x}) -> {t}
          func.return %s, %t : {x}, {t}
        }}"""

    streamed = rlx.compile(module(256)).assembly()  # 128 KiB outputs
    assert len(re.findall(r"\bvmovnt\w+\s+%zmm", streamed)) >= 2, "no non-temporal zmm stores"
    cached = rlx.compile(module(64)).assembly()
    assert not re.search(r"\bvmovnt", cached)


def test_in_place_kernels_vectorize_without_overlap_checks() -> None:
    """Unfused, each op of the chain writes over the intermediate it reads
    (plan-memory's in-place case): the kernel reads and writes through one
    pointer, so LLVM keeps no scalar loop for overlapping pointers (which
    in-place buffers always took). 4096 elements leave no remainder loop:
    every loop left is a vector body."""
    # sin's kernel runs in 4 KiB chunks with an exact-reduction loop beside the
    # fast one (test_math_approx.py); sigmoid keeps every kernel one flat loop.
    exe = rlx.compile(CHAIN.replace("DT", "f32").replace("rlx.sin", "rlx.sigmoid"), pipeline="")
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
