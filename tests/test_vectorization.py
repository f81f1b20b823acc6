"""The fused inner loops vectorize: packed vector instructions, no libm calls.

Every check compiles for the host (`native`) and for both x86-64 ISA levels,
`x86-64-v3` (AVX2: ymm registers, never zmm) and `x86-64-v4` (AVX-512), and
reads the register names of the assembly for that target. Nothing is run, so
an AVX2 host checks its AVX-512 code too; the `x86_64` marker of conftest.py
skips the module on other machines, with the reason.
"""

from __future__ import annotations

import re

import pytest

import rlx_mlir as rlx
from rlx_mlir.runtime import Executable
from rlx_mlir.target import target

pytestmark = pytest.mark.x86_64

TARGETS = ("native", "x86-64-v3", "x86-64-v4")

WIDEST = {"x86-64-v3": "ymm", "x86-64-v4": "zmm"}
"""The widest register a target's explicit 64-byte vectors land in."""

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


def assembly(text: str, name: str, **options: object) -> tuple[str, str]:
    """(assembly of `text` compiled for target `name`, that target's widest register)."""
    exe: Executable = rlx.compile(text, target=name, **options)  # type: ignore[arg-type]
    asm = exe.assembly()
    level = exe.target.level
    assert level in WIDEST, f"{name} is {level}: these checks need AVX2 or AVX-512"
    if level == "x86-64-v3":
        assert "%zmm" not in asm, f"an AVX2 build ({name}) uses AVX-512 registers"
    return asm, WIDEST[level]


@pytest.mark.parametrize("name", TARGETS)
@pytest.mark.parametrize(("dtype", "suffix"), [("f32", "ps"), ("f64", "pd")])
def test_transcendental_chain_is_packed_and_call_free(dtype: str, suffix: str, name: str) -> None:
    asm, _ = assembly(CHAIN.replace("DT", dtype), name)
    packed = re.findall(rf"\bv\w+{suffix}\s+%[xyz]mm", asm)
    wide = [line for line in packed if "%ymm" in line or "%zmm" in line]
    assert len(wide) > 20, "the fused loop did not vectorize"
    assert not LIBM.search(asm), LIBM.search(asm)


@pytest.mark.parametrize("name", TARGETS)
def test_broadcast_bias_inner_loop_is_packed(name: str) -> None:
    asm, _ = assembly(
        """func.func @f(%a: tensor<64x1024xf32>, %b: tensor<1024xf32>) -> tensor<64x1024xf32> {
          %s = rlx.add %a, %b : (tensor<64x1024xf32>, tensor<1024xf32>) -> tensor<64x1024xf32>
          func.return %s : tensor<64x1024xf32>
        }""",
        name,
    )
    assert re.search(r"vaddps\s+.*%[yz]mm", asm)


@pytest.mark.parametrize("name", TARGETS)
def test_transposed_copy_moves_register_blocks(name: str) -> None:
    """A transpose is 16 x 16 blocks of 64-byte rows: zmm loads, two-source shuffles and
    stores with AVX-512, each row a pair of ymm registers with AVX2."""
    asm, widest = assembly(
        """func.func @f(%a: tensor<256x320xf32>) -> tensor<320x256xf32> {
          %t = rlx.transpose %a {perm = array<i64: 1, 0>} : (tensor<256x320xf32>) -> tensor<320x256xf32>
          func.return %t : tensor<320x256xf32>
        }""",
        name,
    )
    shuffles = re.findall(rf"\bv(?:permt2|perm2|unpck|shuf|blend)\w*\s+.*%{widest}", asm)
    assert len(shuffles) >= 32, "the 16 x 16 register transpose is missing"


@pytest.mark.parametrize("name", TARGETS)
def test_outputs_past_the_last_level_cache_are_stored_nontemporally(name: str) -> None:
    """Outputs larger than the last-level cache (a 64 KiB one here) leave through whole-line
    non-temporal stores, elementwise and transposed alike; smaller ones through ordinary stores."""
    small_cache = {"nontemporal_min_bytes": 1 << 16}

    def module(rows: int) -> str:
        x, t = f"tensor<{rows}x128xf32>", f"tensor<128x{rows}xf32>"
        return f"""func.func @f(%a: {x}, %b: {x}) -> ({x}, {t}) {{
          %s = rlx.add %a, %b : ({x}, {x}) -> {x}
          %t = rlx.transpose %a {{perm = array<i64: 1, 0>}} : ({x}) -> {t}
          func.return %s, %t : {x}, {t}
        }}"""

    streamed, widest = assembly(module(256), name, tuning=small_cache)  # 128 KiB outputs
    assert len(re.findall(rf"\bvmovnt\w+\s+%{widest}", streamed)) >= 2, f"no non-temporal {widest} stores"
    cached, _ = assembly(module(64), name, tuning=small_cache)
    assert not re.search(r"\bvmovnt", cached)


@pytest.mark.parametrize("name", TARGETS)
def test_small_kernels_keep_their_vector_loop_rolled(name: str) -> None:
    """A kernel under `unroll_min_work` reaches LLVM's unroller with its loops marked
    `llvm.loop.unroll.disable`, and the vectorized loop keeps one copy of its body (on a
    Zen 4's cost model the unroller would make two); with the bound at 0 nothing is marked."""
    tanh = """func.func @f(%a: tensor<64x128xf32>) -> tensor<64x128xf32> {
      %t = rlx.tanh %a : (tensor<64x128xf32>) -> tensor<64x128xf32>
      func.return %t : tensor<64x128xf32>
    }"""
    rolled = rlx.compile(tanh, target=name).optimized_llvm_ir
    assert '!"llvm.loop.unroll.disable"' in rolled
    assert len(re.findall(r"= fdiv <\d+ x float>", rolled)) == 1
    unrolled = rlx.compile(tanh, target=name, tuning={"unroll_min_work": 0}).optimized_llvm_ir
    assert "llvm.loop.unroll.disable" not in unrolled


@pytest.mark.parametrize("name", TARGETS)
def test_in_place_kernels_vectorize_without_overlap_checks(name: str) -> None:
    """Unfused, each op of the chain writes over the intermediate it reads
    (plan-memory's in-place case): the kernel reads and writes through one
    pointer, so LLVM keeps no scalar loop for overlapping pointers (which
    in-place buffers always took). 4096 elements leave no remainder loop:
    every loop left is a vector body."""
    # sin's kernel runs in 4 KiB chunks with an exact-reduction loop beside the
    # fast one (test_math_approx.py); sigmoid keeps every kernel one flat loop.
    exe = rlx.compile(CHAIN.replace("DT", "f32").replace("rlx.sin", "rlx.sigmoid"), pipeline="", target=name)
    assert any(len(set(offsets)) < len(offsets) for offsets in _in_place_offsets(exe.planned_ir))
    labels = re.findall(r"^([\w.]+):", exe.optimized_llvm_ir, re.M)
    assert labels.count("vector.body") == 6  # one per kernel
    entries_and_exits = re.compile(r"b\d+|.*\.exit")  # the printer names blocks bN
    assert [b for b in labels if b != "vector.body" and not entries_and_exits.fullmatch(b)] == []


def test_each_level_is_what_it_says() -> None:
    """The targets the checks above compile for have the vectors of their level."""
    v3, v4 = target("x86-64-v3"), target("x86-64-v4")
    assert (v3.vector_bytes, v3.vector_registers) == (32, 16)
    assert (v4.vector_bytes, v4.vector_registers) == (64, 32)


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
