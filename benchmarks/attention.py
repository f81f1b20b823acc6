"""rlx.attention (the fused flash-attention kernel) vs torch's
scaled_dot_product_attention and vs rlx's own unfused matmul -> softmax -> matmul.

    OMP_WAIT_POLICY=PASSIVE python benchmarks/attention.py [--repeat 15] [--threads 2]

f32, one process, every system on `--threads` threads, called alternately
round by round (`timing.interleaved_medians`), so each sees the same load.
Prints median times and ratios peer / rlx (> 1 means the fused kernel is
faster). The unfused graph is what `rlx.attention` replaces: the [Sq, Sk]
scores in memory, softmax as its own kernel, GQA by repeating the kv heads
(`rlx.expand` + `rlx.reshape`, as exported models do), causal as an additive
mask constant; it is compiled without `fuse-attention`, which would
otherwise make it one `rlx.attention` again. Set OMP_WAIT_POLICY=PASSIVE (PERF_NOTES.md: torch's spinning
threads otherwise slow everything next to them).
"""

from __future__ import annotations

import argparse
import math
import os
from dataclasses import dataclass

import numpy as np
from elementwise import torch_or_none  # this script's folder is on sys.path
from machine import add_target_argument, use_target
from timing import interleaved_medians

import rlx_mlir as rlx
from rlx_mlir.builder import Builder
from rlx_mlir.passes.default_pipeline import tensor_pipeline_without


@dataclass(frozen=True)
class Case:
    batch: int
    heads: int
    kv_heads: int
    length: int
    head_size: int
    causal: bool = False
    queries: int | None = None
    """Sq, if not `length` (a decode step: 1 query, `length` keys)."""

    def __str__(self) -> str:
        kind = "causal" if self.causal else "full"
        gqa = f" GQA {self.heads}/{self.kv_heads}" if self.kv_heads != self.heads else ""
        keys = f" x {self.length} keys" if self.queries is not None else ""
        return f"[{self.batch},{self.heads},{self.query_length},{self.head_size}]{keys}{gqa} {kind}"

    @property
    def query_length(self) -> int:
        return self.length if self.queries is None else self.queries

    @property
    def shapes(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        query = (self.batch, self.heads, self.query_length, self.head_size)
        return query, (self.batch, self.kv_heads, self.length, self.head_size)


CASES = (
    Case(8, 8, 8, 197, 32),  # ViT's encoder at batch 8 (the model suite's size)
    Case(1, 8, 8, 512, 32),  # Whisper's encoder at batch 1
    Case(1, 12, 12, 128, 64),
    Case(8, 4, 4, 128, 64),
    Case(1, 12, 12, 512, 64, causal=True),
    Case(1, 8, 2, 512, 64),
    Case(1, 8, 2, 512, 64, causal=True),
    Case(1, 8, 8, 2048, 64, causal=True),
    Case(1, 1, 1, 2048, 64, causal=True),
    Case(1, 32, 8, 4096, 128, queries=1),
)


def fused(case: Case, threads: int) -> rlx.runtime.Executable:
    q_shape, kv_shape = case.shapes
    b = Builder("fused")
    q, k, v = b.input(q_shape), b.input(kv_shape), b.input(kv_shape)
    b.output(b.attention(q, k, v, causal=case.causal))
    return rlx.compile(b.module(), threads=threads)


def unfused(case: Case, threads: int) -> rlx.runtime.Executable:
    """matmul -> scale (+ causal mask) -> softmax -> matmul, kv heads repeated for GQA."""
    q_shape, kv_shape = case.shapes
    b = Builder("unfused")
    q, k, v = b.input(q_shape), b.input(kv_shape), b.input(kv_shape)
    if case.kv_heads != case.heads:
        group = case.heads // case.kv_heads
        spread = (case.batch, case.kv_heads, group, case.length, case.head_size)
        repeated = (case.batch, case.heads, case.length, case.head_size)
        k, v = (b.reshape(b.expand(b.reshape(x, (*kv_shape[:2], 1, *kv_shape[2:])), spread), repeated) for x in (k, v))
    scores = b.mul(b.matmul(q, k, transpose_rhs=True), b.constant(np.float32(1 / math.sqrt(case.head_size))))
    if case.causal:
        allowed = np.tril(np.ones((case.query_length, case.length), bool))
        mask = np.where(allowed, 0, -np.inf).astype(np.float32)
        scores = b.add(scores, b.constant(mask))
    b.output(b.matmul(b.softmax(scores), v))
    return rlx.compile(b.module(), pipeline=tensor_pipeline_without("fuse-attention"), threads=threads)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--threads", type=int, default=2)
    add_target_argument(parser)
    options = parser.parse_args()
    print(use_target(options.target))
    print(f"threads = {options.threads}; OMP_WAIT_POLICY = {os.environ.get('OMP_WAIT_POLICY', 'unset')}")
    torch = torch_or_none(options.threads)
    rng = np.random.default_rng(0)
    for case in CASES:
        q_shape, kv_shape = case.shapes
        q, k, v = (rng.standard_normal(s, dtype=np.float32) for s in (q_shape, kv_shape, kv_shape))
        exe, base = fused(case, options.threads), unfused(case, options.threads)
        np.testing.assert_allclose(exe(q, k, v)[0], base(q, k, v)[0], rtol=1e-4, atol=1e-5)
        fns = {"rlx.attention": lambda: exe(q, k, v), "rlx unfused": lambda: base(q, k, v)}
        if torch is not None:
            import torch.nn.functional as F

            tq, tk, tv = (torch.from_numpy(x) for x in (q, k, v))
            gqa = case.kv_heads != case.heads
            fns["torch SDPA"] = lambda: F.scaled_dot_product_attention(
                tq, tk, tv, is_causal=case.causal, enable_gqa=gqa
            )
        times = interleaved_medians(fns, options.repeat)
        mine = times["rlx.attention"]
        pairs = case.query_length * case.length / (2 if case.causal else 1)
        flop = 4 * case.batch * case.heads * pairs * case.head_size
        print(f"\n{case}: rlx.attention {mine * 1e3:9.1f} us  {flop / mine / 1e6:6.1f} GFLOP/s")
        for name, ms in times.items():
            if name != "rlx.attention":
                print(f"  {name:<14}{ms * 1e3:9.1f} us   peer/rlx = {ms / mine:5.2f}x")


if __name__ == "__main__":
    main()
