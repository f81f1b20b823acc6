"""Data movement: rlx_mlir vs NumPy on the same inputs, one process.

    python benchmarks/movement.py [--repeat 7]

transpose of a 4096x4096 f32, gather of 1M rows of width 64 (f32, i64
indices), concat of two [4096, 2048] f32 along the last axis, and a
reflect pad of a [2048, 2048] f32 by 16 on each side. Prints median times and
ratios peer / rlx (> 1 means rlx is faster), and each kernel's ratio to its
bound: a plain copy of as many bytes as its output, the faster of rlx's own
one-in/one-out elementwise kernel over an array of the output's shape (`neg`:
the same loads and stores, threads and non-temporal stores as any rlx copy) and
`np.copyto`. rlx and its bound are timed interleaved, best of the rounds; the
CPU ratio (all threads) is the kernel's against rlx's copy.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from machine import add_target_argument, use_target  # this script's folder is on sys.path
from timing import interleaved_ms, median_ms

import rlx_mlir as rlx


def single_op(inputs: list[str], op: str, result: str) -> str:
    args = ", ".join(f"%a{k}: {t}" for k, t in enumerate(inputs))
    operands = ", ".join(f"%a{k}" for k in range(len(inputs)))
    return (
        f"func.func @bench({args}) -> {result} {{\n"
        f"  %r = {op.format(operands=operands)} : ({', '.join(inputs)}) -> {result}\n"
        f"  func.return %r : {result}\n}}"
    )


def cases(rng: np.random.Generator) -> list[tuple[str, str, list[np.ndarray], Callable[..., np.ndarray]]]:
    n = 4096
    square = rng.standard_normal((n, n)).astype(np.float32)
    rows, width, lookups = 1 << 16, 64, 1 << 20
    table = rng.standard_normal((rows, width)).astype(np.float32)
    ids = rng.integers(0, rows, lookups).astype(np.int64)
    left, right = (rng.standard_normal((4096, 2048)).astype(np.float32) for _ in range(2))
    image = rng.standard_normal((2048, 2048)).astype(np.float32)
    f = "xf32>"
    return [
        (
            "transpose 4096x4096 f32",
            single_op(
                [f"tensor<{n}x{n}{f}"], "rlx.transpose {operands} {{perm = array<i64: 1, 0>}}", f"tensor<{n}x{n}{f}"
            ),
            [square],
            lambda x: np.ascontiguousarray(x.T),
        ),
        (
            "gather 1M rows x 64 f32",
            single_op(
                [f"tensor<{rows}x{width}{f}", f"tensor<{lookups}xi64>"],
                "rlx.gather {operands} {{axis = 0 : i64}}",
                f"tensor<{lookups}x{width}{f}",
            ),
            [table, ids],
            lambda t, i: np.take(t, i, axis=0),
        ),
        (
            "concat 2 x [4096, 2048] f32, axis 1",
            single_op([f"tensor<4096x2048{f}"] * 2, "rlx.concat {operands} {{axis = 1 : i64}}", f"tensor<4096x4096{f}"),
            [left, right],
            lambda a, b: np.concatenate([a, b], axis=1),
        ),
        (
            "reflect pad [2048, 2048] f32 by 16",
            single_op(
                [f"tensor<2048x2048{f}"],
                'rlx.pad {operands} {{before = array<i64: 16, 16>, after = array<i64: 16, 16>, mode = "reflect"}}',
                f"tensor<2080x2080{f}",
            ),
            [image],
            lambda x: np.pad(x, 16, mode="reflect"),
        ),
    ]


def with_copy_bound(shape: tuple[int, ...], repeat: int, kernel: Callable[[], object]) -> tuple[float, float, float]:
    """(kernel ms, bound ms, kernel CPU / rlx copy CPU) for a kernel with an f32 output of `shape`,
    timed interleaved with the two copies of that many bytes. The CPU-time ratio compares the
    kernel with rlx's copy on the same threads; it holds up when the machine is oversubscribed."""
    t = f"tensor<{'x'.join(map(str, shape))}xf32>"
    source = np.ones(shape, np.float32)  # written: untouched zeros would all read one page
    target = np.empty_like(source)
    neg = rlx.compile(single_op([t], "rlx.neg {operands}", t))
    best = interleaved_ms(
        {"kernel": kernel, "rlx": lambda: neg(source, out=(target,)), "numpy": lambda: np.copyto(target, source)},
        repeat,
    )
    bound = min(best["rlx"].wall, best["numpy"].wall)
    return best["kernel"].wall, bound, best["kernel"].cpu / best["rlx"].cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=7)
    add_target_argument(parser)
    options = parser.parse_args()
    print(use_target(options.target))
    rng = np.random.default_rng(0)
    for title, text, arrays, numpy_fn in cases(rng):
        exe = rlx.compile(text)
        expected = numpy_fn(*arrays)
        out = np.empty_like(expected)
        exe(*arrays, out=(out,))
        assert np.array_equal(out, expected), title
        assert expected.dtype == np.float32, "the copy bound moves f32 words"
        rlx_ms, bound_ms, cpu_ratio = with_copy_bound(expected.shape, options.repeat, lambda: exe(*arrays, out=(out,)))
        numpy_ms = median_ms(lambda: numpy_fn(*arrays), options.repeat)
        print(
            f"{title:<36} rlx {rlx_ms:6.2f} ms = {rlx_ms / bound_ms:4.2f}x a copy ({bound_ms:5.2f} ms; "
            f"CPU {cpu_ratio:4.2f}x)   numpy {numpy_ms:7.2f} ms   numpy/rlx = {numpy_ms / rlx_ms:5.2f}x"
        )


if __name__ == "__main__":
    main()
