"""Compile time by stage as graphs grow: where the time goes and how it scales.

    python benchmarks/compile_time.py [--sizes 100 300 1000 3000] [--kind elementwise|random|half|movement] [--repeat 1]

For each size, a fresh graph is parsed, run through the default pipeline
pass by pass, lowered and JIT-compiled, with Python's cyclic garbage
collector paused as `rlx_mlir.compile` pauses it; the tables give each
stage's seconds (the least over `--repeat` runs), in wall time and in the
process's CPU time, and the total, and the last line each stage's growth
exponent between the two largest sizes (1 = linear). The persistent compile
cache is turned off: every run compiles from scratch. The graphs (`--kind`):

- elementwise: a chain of unary, binary and transcendental ops over [1024]
  f32 repeating every 12 ops, so fused regions (32 ops) repeat every three
  and share their kernels (as the layers of a deep model do);
- random: the same ops in a random order, so every region is a new kernel;
- half: the random chain over f16, whose kernels convert every element;
- movement: a pad / slice / transpose chain over [64, 64].
"""

from __future__ import annotations

import argparse
import math
import os
import random
import time

from machine import add_target_argument, use_target  # this script's folder is on sys.path

from rlx_mlir import jit
from rlx_mlir.compiler import cycle_collection_paused, parse
from rlx_mlir.context import make_context
from rlx_mlir.lowering.core.translate import to_llvm_ir
from rlx_mlir.passes.default_pipeline import BACKEND_PASSES, TENSOR_PASSES
from rlx_mlir.target import target as resolve_target


def _unary_chain(ops: list[str], element: str = "f32") -> str:
    """`a + b`, then each op of `ops` on the previous value (`mul` by `a`), over [1024] `element`."""
    t = f"tensor<1024x{element}>"
    lines = [f"func.func @f(%a: {t}, %b: {t}) -> {t} {{", f"  %v0 = rlx.add %a, %b : ({t}, {t}) -> {t}"]
    for k, op in enumerate(ops, start=1):
        operands, types = (f"%v{k - 1}, %a", f"({t}, {t})") if op == "mul" else (f"%v{k - 1}", f"({t})")
        lines.append(f"  %v{k} = rlx.{op} {operands} : {types} -> {t}")
    lines.append(f"  func.return %v{len(ops)} : {t}\n}}")
    return "\n".join(lines)


def elementwise_chain(n: int) -> str:
    unary = ["tanh", "neg", "exp", "sin"]
    return _unary_chain(["mul" if k % 3 == 0 else unary[k % 4] for k in range(1, n)])


def random_chain(n: int) -> str:
    """The ops of `elementwise_chain` in a seeded random order: no stretch of it
    repeats, so no two fused regions share a kernel (the worst case)."""
    rng = random.Random(n)
    return _unary_chain([rng.choice(["mul", "tanh", "neg", "exp", "sin"]) for _ in range(1, n)])


def half_chain(n: int) -> str:
    """`random_chain` over f16: every element is widened to f32 when loaded and
    narrowed when stored, so the kernels hold several times the ops per value."""
    rng = random.Random(n)
    return _unary_chain([rng.choice(["mul", "tanh", "neg", "exp", "sin"]) for _ in range(1, n)], "f16")


def movement_chain(n: int) -> str:
    """pad by 1 on each side, narrow it back, transpose: the shape stays [64, 64]."""
    t, p = "tensor<64x64xf32>", "tensor<66x66xf32>"
    lines = [f"func.func @f(%a: {t}) -> {t} {{", f"  %v0 = rlx.neg %a : ({t}) -> {t}"]
    for k in range(1, n):
        prev = f"%v{k - 1}"
        if k % 3 == 1:
            sides = "before = array<i64: 1, 1>, after = array<i64: 1, 1>"
            lines.append(f"  %v{k} = rlx.pad {prev} {{{sides}}} : ({t}) -> {p}")
        elif k % 3 == 2:
            box = "starts = array<i64: 1, 1>, steps = array<i64: 1, 1>"
            lines.append(f"  %v{k} = rlx.slice {prev} {{{box}}} : ({p}) -> {t}")
        else:
            lines.append(f"  %v{k} = rlx.transpose {prev} {{perm = array<i64: 1, 0>}} : ({t}) -> {t}")
    last = n - 1 if (n - 1) % 3 != 1 else n - 2
    lines.append(f"  func.return %v{last} : {t}\n}}")
    return "\n".join(lines)


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
"""Wall time, and this process's CPU time, which a machine shared with other
work inflates far less (LLVM runs in the calling thread)."""


def stages(text: str) -> dict[str, dict[str, float]]:
    """Seconds per stage, by clock."""
    times: dict[str, dict[str, float]] = {clock: {} for clock in CLOCKS}

    def timed(name: str, fn):
        start = {clock: read() for clock, read in CLOCKS.items()}
        result = fn()
        for clock, read in CLOCKS.items():
            times[clock][name] = times[clock].get(name, 0.0) + read() - start[clock]
        return result

    module = timed("parse", lambda: parse(text))
    ctx = make_context()
    for p in (*TENSOR_PASSES, *BACKEND_PASSES):
        timed(p.name, lambda p=p: p.apply(ctx, module))
    machine = resolve_target()
    text = timed("to LLVM IR", lambda: to_llvm_ir(module, machine.triple))
    timed("LLVM O3 + codegen", lambda: jit.compile_text(text, machine))
    return times


def table(title: str, rows: dict[int, dict[str, float]]) -> None:
    names = list(next(iter(rows.values())))
    print(title)
    print(f"{'ops':>7} " + " ".join(f"{name[:14]:>14}" for name in names) + f" {'total':>9}")
    for n, times in rows.items():
        print(f"{n:>7} " + " ".join(f"{times[k]:>14.3f}" for k in names) + f" {sum(times.values()):>9.2f}")
    if len(rows) > 1:
        (n1, t1), (n2, t2) = list(rows.items())[-2:]
        growth = [math.log(max(t2[k], 1e-6) / max(t1[k], 1e-6)) / math.log(n2 / n1) for k in names]
        total = math.log(sum(t2.values()) / sum(t1.values())) / math.log(n2 / n1)
        print(f"{'growth':>7} " + " ".join(f"{g:>14.2f}" for g in growth) + f" {total:>9.2f}")


CHAINS = {"elementwise": elementwise_chain, "random": random_chain, "half": half_chain, "movement": movement_chain}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 300, 1000, 3000])
    parser.add_argument("--kind", choices=sorted(CHAINS), default="elementwise")
    parser.add_argument("--repeat", type=int, default=1)
    add_target_argument(parser)
    options = parser.parse_args()
    print(use_target(options.target))
    os.environ["RLX_MLIR_CACHE"] = "0"
    make = CHAINS[options.kind]
    rows: dict[str, dict[int, dict[str, float]]] = {clock: {} for clock in CLOCKS}
    for n in options.sizes:
        with cycle_collection_paused():  # as rlx_mlir.compile runs
            runs = [stages(make(n)) for _ in range(options.repeat)]
        for clock in CLOCKS:
            rows[clock][n] = {k: min(run[clock][k] for run in runs) for k in runs[0][clock]}
        print(f"({n} ops done)", flush=True)
    for clock in CLOCKS:
        table(f"{options.kind} chain: {clock} seconds per stage", rows[clock])


if __name__ == "__main__":
    main()
