"""What keeps compile time linear in graph size (timings: benchmarks/compile_time.py).

- fuse-elementwise cuts long chains into regions of at most `MAX_OPS` ops;
- ops of one structure and aliasing share a kernel, and still compute their own values;
- the JIT keeps every kernel the entry calls a function of its own;
- plan-memory's sweep places buffers exactly as comparing every pair did.
"""

from __future__ import annotations

import math
import random
import re

import numpy as np
import pytest

import rlx_mlir as rlx
from rlx_mlir.compiler import parse
from rlx_mlir.context import make_context
from rlx_mlir.dialects.region import ElementwiseRegionOp
from rlx_mlir.passes.default_pipeline import TENSOR_PASSES
from rlx_mlir.passes.fuse_elementwise import MAX_OPS
from rlx_mlir.passes.plan_memory import Buffer, _best_fit, _fits, place


def chain(n: int, ops: list[str]) -> str:
    t = "tensor<256xf32>"
    lines = [f"func.func @f(%a: {t}) -> {t} {{", f"  %v0 = rlx.neg %a : ({t}) -> {t}"]
    for k in range(1, n):
        op = ops[k % len(ops)]
        operands, types = (f"%v{k - 1}, %a", f"({t}, {t})") if op == "mul" else (f"%v{k - 1}", f"({t})")
        lines.append(f"  %v{k} = rlx.{op} {operands} : {types} -> {t}")
    lines.append(f"  func.return %v{n - 1} : {t}\n}}")
    return "\n".join(lines)


def test_a_long_chain_becomes_regions_of_at_most_max_ops() -> None:
    n = 3 * MAX_OPS + 5
    module = parse(chain(n, ["tanh", "mul", "neg"]))
    ctx = make_context()
    for p in TENSOR_PASSES:
        p.apply(ctx, module)
    regions = [op for op in module.walk() if isinstance(op, ElementwiseRegionOp)]
    sizes = [len(list(r.body.block.ops)) - 1 for r in regions]  # the yield is no op of the graph
    assert sizes == [MAX_OPS, MAX_OPS, MAX_OPS, 5]
    assert len(regions) == math.ceil(n / MAX_OPS)


def test_shared_kernels_compute_each_op_on_its_own_buffers() -> None:
    """A repeating chain (regions of one structure share a kernel) and ops that
    share a kernel only when they alias alike give NumPy's values."""
    n = 4 * MAX_OPS
    ops = ["mul", "neg", "abs", "neg"]  # a period dividing MAX_OPS: regions 1-3 have one structure
    exe = rlx.compile(chain(n, ops))
    x = np.linspace(0.5, 1.0, 256, dtype=np.float32)
    expected = -x
    for k in range(1, n):
        expected = {"mul": expected * x, "neg": -expected, "abs": np.abs(expected)}[ops[k % len(ops)]]
    (y,) = exe(x)
    np.testing.assert_array_equal(y, expected)
    kernels = re.findall(r"^define internal void @\"(f_k\d+)\"\(", exe.llvm_ir, re.M)
    # The first region's kernel, one that regions 1 and 2 share, and the last
    # region's, which writes the result rather than the arena.
    assert len(kernels) == 3, kernels


def test_a_kernel_reading_one_value_twice_is_shared_only_with_ops_that_do() -> None:
    """`x @ xᵀ` reads x at both operands; `dy @ xᵀ` has its structure but two
    values, so it must not take the first kernel rebound to (dy, dy) (found by
    autodiff's random graphs: the VJP of (x @ xᵀ) @ x was wrong)."""
    t, s = "tensor<2x3xf64>", "tensor<2x2xf64>"
    text = f"""func.func @f(%x: {t}, %dy: {t}) -> ({s}, {s}, {s}) {{
      %a = rlx.matmul %x, %x {{transpose_rhs = true}} : ({t}, {t}) -> {s}
      %b = rlx.matmul %dy, %x {{transpose_rhs = true}} : ({t}, {t}) -> {s}
      %c = rlx.matmul %dy, %dy {{transpose_rhs = true}} : ({t}, {t}) -> {s}
      func.return %a, %b, %c : {s}, {s}, {s}
    }}"""
    rng = np.random.default_rng(0)
    x, dy = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    a, b, c = rlx.compile(text)(x, dy)
    np.testing.assert_allclose(a, x @ x.T, rtol=1e-12)
    np.testing.assert_allclose(b, dy @ x.T, rtol=1e-12)
    np.testing.assert_allclose(c, dy @ dy.T, rtol=1e-12)


def test_the_entry_calls_its_kernels_out_of_line() -> None:
    """Every kernel the entry calls (directly: one thread's launches need no
    thunk) survives O3 as a function of its own, not inlined into one giant
    entry function."""
    exe = rlx.compile(chain(3 * MAX_OPS, ["tanh", "exp", "mul"]), threads=1)  # 64 % 3: three kinds of region
    optimized = exe.optimized_llvm_ir
    assert "_thunk" not in optimized
    called = set(re.findall(r"call (?:fastcc )?void @\"?(f_k\d+)\"?\(", optimized))
    assert len(called) == 3
    for kernel in called:
        assert re.search(rf"^define internal (?:fastcc )?void @\"?{kernel}\"?\(", optimized, re.M), kernel


def test_each_thunk_calls_its_kernel_out_of_line() -> None:
    """A kernel is optimized once, as a function of its own: inlined into its
    thunk (which parallel launches hand the pool), O3 ran its function passes
    over it a second time there."""
    every_launch_parallel = {"parallel_min_elements": 1}
    exe = rlx.compile(chain(3 * MAX_OPS, ["tanh", "exp", "mul"]), threads=2, tuning=every_launch_parallel)
    optimized = exe.optimized_llvm_ir
    thunks = re.findall(r"^define internal (?:fastcc )?void @\"?(f_k\d+)_thunk\"?\(", optimized, re.M)
    assert len(thunks) == 3
    for kernel in thunks:
        thunk = re.search(rf"^define [^\n]*@\"?{kernel}_thunk\"?\(.*?^}}", optimized, re.M | re.S)
        assert thunk is not None and re.search(rf"call (?:fastcc )?void @\"?{kernel}\"?\(", thunk[0]), kernel
        assert re.search(rf"^define internal (?:fastcc )?void @\"?{kernel}\"?\(", optimized, re.M), kernel


def _place_every_pair(buffers: list[Buffer]) -> int:
    """The planner's placement written the direct way: every placed buffer is
    compared with the next one (the oracle for the sweep of `place`)."""
    placed: list[Buffer] = []
    for buf in sorted(buffers, key=lambda b: (b.start, b.partner is None, -b.size)):
        live = sorted((p for p in placed if p.overlaps_in_time(buf)), key=lambda p: p.offset)
        if buf.partner is not None and _fits(buf.partner.offset, buf.size, live):
            buf.offset = buf.partner.offset
        else:
            buf.offset = _best_fit(buf.size, live)
        placed.append(buf)
    return max((b.offset + b.size for b in placed), default=0)


def _random_buffers(rng: random.Random) -> list[Buffer]:
    buffers = []
    for _ in range(rng.randrange(1, 60)):
        start = rng.randrange(0, 80)
        size = 64 * rng.choice([1, 1, 2, 3, 8, 16])
        buffers.append(Buffer(None, size, start, start + rng.randrange(0, 12)))  # type: ignore[arg-type]
    for buf in buffers:  # in-place partners: a buffer that dies when this one is born
        dying = [b for b in buffers if b.end + 1 == buf.start and b.size == buf.size and b.partner is None]
        if dying and rng.random() < 0.5:
            buf.partner = dying[0]
            dying[0].end = buf.start - 1
    return buffers


@pytest.mark.parametrize("seed", range(200))
def test_the_sweep_places_as_comparing_every_pair(seed: int) -> None:
    rng = random.Random(seed)
    buffers = _random_buffers(rng)
    twins = [Buffer(b.value, b.size, b.start, b.end) for b in buffers]
    for buf, twin in zip(buffers, twins):
        if buf.partner is not None:
            twin.partner = twins[buffers.index(buf.partner)]
    assert place(buffers) == _place_every_pair(twins)
    assert [b.offset for b in buffers] == [t.offset for t in twins]
