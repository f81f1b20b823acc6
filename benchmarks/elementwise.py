"""Fused elementwise chains: rlx_mlir vs NumPy (eager and with out= buffers),
numexpr and (if installed) PyTorch eager, same inputs, one process.

    python benchmarks/elementwise.py [--log2n 24] [--repeat 15] [--threads 0]

Prints the memory-bandwidth floor, the time rlx itself takes for `a + b + c`
(the same 16 bytes per element as both chains, almost no arithmetic), with its
output stored non-temporally as rlx does for outputs larger than the last-level
cache and, for comparison, with ordinary stores; each chain's ratio to that
floor; then the peers' median times and the ratio peer / rlx (> 1 means rlx is
faster). The rlx kernels are timed interleaved, one call each per round, and
the minimum over the rounds is kept: on a shared machine, load changes then hit
all of them alike and the ratios stay comparable.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from types import ModuleType

import numpy as np
from machine import add_target_argument, use_target  # this script's folder is on sys.path
from timing import interleaved_ms, median_ms

import rlx_mlir as rlx


def chain_ir(name: str, n: int, transcendental: bool) -> str:
    t = f"tensor<{n}xf32>"
    head = (
        f"  %t = rlx.tanh %s : ({t}) -> {t}\n  %g = rlx.sigmoid %a : ({t}) -> {t}\n"
        f"  %p = rlx.mul %t, %g : ({t}, {t}) -> {t}\n"
        if transcendental
        else f"  %p = rlx.mul %s, %a : ({t}, {t}) -> {t}\n"
    )
    return (
        f"func.func @{name}(%a: {t}, %b: {t}, %c: {t}) -> {t} {{\n"
        f"  %half = rlx.constant dense<0.5> : tensor<f32>\n"
        f"  %ab = rlx.mul %a, %b : ({t}, {t}) -> {t}\n"
        f"  %s = rlx.add %ab, %c : ({t}, {t}) -> {t}\n"
        f"{head}"
        f"  %q = rlx.mul %c, %half : ({t}, tensor<f32>) -> {t}\n"
        f"  %r = rlx.sub %p, %q : ({t}, {t}) -> {t}\n"
        f"  func.return %r : {t}\n}}\n"
    )


def torch_or_none(threads: int) -> ModuleType | None:
    """PyTorch on `threads` threads, or None (its rows are skipped) without the bench extra."""
    try:
        import torch
    except ImportError:
        print("(torch is not installed: its rows are skipped; pip install -e '.[bench]')")
        return None
    torch.set_num_threads(threads)
    return torch


CACHED_STORES = {"nontemporal_min_bytes": 1 << 62}
"""Tuning that compiles ordinary stores even for outputs larger than the last-level
cache (to measure what the non-temporal stores gain)."""


def numpy_out(
    a: np.ndarray, b: np.ndarray, c: np.ndarray, t1: np.ndarray, t2: np.ndarray, transcendental: bool
) -> np.ndarray:
    np.multiply(a, b, out=t1)
    np.add(t1, c, out=t1)
    if transcendental:
        np.tanh(t1, out=t1)
        np.negative(a, out=t2)
        np.exp(t2, out=t2)
        np.add(t2, 1.0, out=t2)
        np.divide(t1, t2, out=t1)
    else:
        np.multiply(t1, a, out=t1)
    np.multiply(c, 0.5, out=t2)
    np.subtract(t1, t2, out=t1)
    return t1


def peers(a: np.ndarray, b: np.ndarray, c: np.ndarray, transcendental: bool) -> dict[str, Callable[[], object]]:
    t1, t2 = np.empty_like(a), np.empty_like(a)
    found: dict[str, Callable[[], object]] = {}
    if transcendental:
        found["numpy eager"] = lambda: np.tanh(a * b + c) * (1 / (1 + np.exp(-a))) - 0.5 * c
    else:
        found["numpy eager"] = lambda: (a * b + c) * a - 0.5 * c
    found["numpy out="] = lambda: numpy_out(a, b, c, t1, t2, transcendental)
    try:
        import numexpr

        expr = "tanh(a*b + c) * (1 / (1 + exp(-a))) - 0.5*c" if transcendental else "(a*b + c) * a - 0.5*c"
        found["numexpr"] = lambda: numexpr.evaluate(expr, local_dict={"a": a, "b": b, "c": c})
    except ImportError:
        pass
    try:
        import torch

        ta, tb, tc = (torch.from_numpy(x) for x in (a, b, c))
        if transcendental:
            found["torch eager"] = lambda: torch.tanh(ta * tb + tc) * torch.sigmoid(ta) - 0.5 * tc
        else:
            found["torch eager"] = lambda: (ta * tb + tc) * ta - 0.5 * tc
    except ImportError:
        pass
    return found


def sum3_ir(name: str, n: int) -> str:
    """`a + b + c`: 3 loads and a store per element, the floor of any 3-in/1-out chain."""
    t = f"tensor<{n}xf32>"
    return (
        f"func.func @{name}(%a: {t}, %b: {t}, %c: {t}) -> {t} {{\n"
        f"  %s = rlx.add %a, %b : ({t}, {t}) -> {t}\n  %r = rlx.add %s, %c : ({t}, {t}) -> {t}\n"
        f"  func.return %r : {t}\n}}\n"
    )


def siblings_ir(n: int) -> str:
    """`x + b` and `x < c`: two elementwise siblings reading one x (horizontal fusion)."""
    t, m = f"tensor<{n}xf32>", f"tensor<{n}xi1>"
    return (
        f"func.func @siblings(%x: {t}, %b: {t}, %c: {t}) -> ({t}, {m}) {{\n"
        f"  %s = rlx.add %x, %b : ({t}, {t}) -> {t}\n  %l = rlx.lt %x, %c : ({t}, {t}) -> {m}\n"
        f"  func.return %s, %l : {t}, {m}\n}}\n"
    )


def siblings_section(x: np.ndarray, b: np.ndarray, c: np.ndarray, repeat: int) -> None:
    """fuse-siblings on (default pipeline) vs off, and NumPy, on `x + b` and `x < c`:
    merged, x is read once (17 bytes per element instead of 21)."""
    from rlx_mlir.passes.default_pipeline import TENSOR_PASSES, spec
    from rlx_mlir.passes.fuse_siblings import FuseSiblingsPass

    without = spec(tuple(p for p in TENSOR_PASSES if not isinstance(p, FuseSiblingsPass)))
    outs = (np.empty(x.size, np.float32), np.empty(x.size, np.bool_))
    times = {}
    for name, exe in (
        ("rlx_mlir", rlx.compile(siblings_ir(x.size))),
        ("rlx, unmerged", rlx.compile(siblings_ir(x.size), pipeline=without)),
    ):
        exe(x, b, c, out=outs)
        times[name] = median_ms(lambda exe=exe: exe(x, b, c, out=outs), repeat)
    times["numpy out="] = median_ms(lambda: (np.add(x, b, out=outs[0]), np.less(x, c, out=outs[1])), repeat)
    print("\nx + b and x < c (siblings over one x)")
    for name, ms in times.items():
        print(f"  {name:<14}{ms:8.2f} ms   peer/rlx = {ms / times['rlx_mlir']:5.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log2n", type=int, default=24)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--threads", type=int, default=0, help="rlx threads (0: all CPUs)")
    add_target_argument(parser)
    options = parser.parse_args()
    print(use_target(options.target))
    n = 1 << options.log2n
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
    out = np.empty(n, np.float32)
    chains = {"tanh(a*b + c) * sigmoid(a) - 0.5*c": True, "(a*b + c) * a - 0.5*c": False}
    exes = {"floor": rlx.compile(sum3_ir("sum3", n), threads=options.threads)}
    exes["floor, cached stores"] = rlx.compile(sum3_ir("sum3", n), threads=options.threads, tuning=CACHED_STORES)
    for k, (title, transcendental) in enumerate(chains.items()):
        exes[title] = rlx.compile(chain_ir(f"chain{k}", n, transcendental), threads=options.threads)
    best = interleaved_ms(
        {name: (lambda exe: lambda: exe(a, b, c, out=(out,)))(exe) for name, exe in exes.items()}, options.repeat
    )
    floor, cached = best["floor"], best["floor, cached stores"]
    print(
        f"n = 2^{options.log2n} float32, threads = {options.threads or 'all'}; "
        f"rlx times: best of {options.repeat} interleaved rounds (CPU: of all threads)"
    )
    print(
        f"memory floor (rlx a+b+c, 16 B/element): {floor.wall:.2f} ms = {16 * n / floor.wall / 1e6:.1f} GB/s, "
        f"CPU {floor.cpu:.2f} ms (non-temporal stores; with cached stores {cached.wall:.2f} ms = "
        f"{cached.wall / floor.wall:.2f}x, CPU {cached.cpu / floor.cpu:.2f}x)"
    )
    for title, transcendental in chains.items():
        rlx_ms = best[title].wall
        print(f"\n{title}")
        print(
            f"  {'rlx_mlir':<14}{rlx_ms:8.2f} ms   ({rlx_ms / floor.wall:.2f}x the memory floor; "
            f"CPU {best[title].cpu:.2f} ms, {best[title].cpu / floor.cpu:.2f}x)"
        )
        for name, fn in peers(a, b, c, transcendental).items():
            ms = median_ms(fn, options.repeat)
            print(f"  {name:<14}{ms:8.2f} ms   peer/rlx = {ms / rlx_ms:5.2f}x")
    siblings_section(a, b, c, options.repeat)


if __name__ == "__main__":
    main()
