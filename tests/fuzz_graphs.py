"""Differential fuzzing: random graphs compiled fused (the default pipeline)
and unfused (no tensor passes), both checked against a float64 NumPy
evaluation of the same graph.

    python tests/fuzz_graphs.py --graphs 10000 [--seed 0]   # the long mode

Each graph draws 2-3 inputs and 3-12 ops over the op families (unary
activations and transcendentals, binary ops with broadcasting, compare +
where, casts, movement: transpose, reverse, slice, pad, concat, expand,
reshape; reductions, softmax; matmul) in f32 or f64. The unary ops are
every op of tests/op_records.py whose record gives a `fuzz` range (its
input is clamped to it where finite), with the record's float64 reference,
so a new unary op is fuzzed as soon as it has a record. A case fails when
fused and unfused disagree beyond rounding, or either strays from the
float64 reference beyond the accumulated tolerance; a compile error on a
graph the Builder verified is a failure too. `tests/test_fuzz.py` runs a
bounded number in CI.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from op_records import RECORDS, reference, short_name
from pipelines import NO_GRAPH_PASSES

import rlx_mlir as rlx
from rlx_mlir.dialects import elementwise as ew

NUMPY = {"f32": np.float32, "f64": np.float64}
UNARY: list[tuple[type[ew.UnaryOp], tuple[float, float]]] = sorted(
    ((op, rec.fuzz) for op, rec in RECORDS.items() if rec.fuzz is not None), key=lambda item: item[0].name
)
"""The fuzzed unary ops and the range each one's input is clamped to, in a fixed order."""
BINARY: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "max": np.maximum,
    "min": np.minimum,
}


@dataclass
class Graph:
    """The graph under construction, built twice: rlx ops and float64 NumPy."""

    rng: np.random.Generator
    dtype: str
    builder: rlx.Builder = field(default_factory=lambda: rlx.Builder("fuzz"))
    values: list = field(default_factory=list)  # (SSA value, float64 reference)
    inputs: list[np.ndarray] = field(default_factory=list)
    log: list[str] = field(default_factory=list)

    def add_input(self, shape: tuple[int, ...]) -> None:
        array = (self.rng.standard_normal(shape) * 0.8).astype(NUMPY[self.dtype])
        self.inputs.append(array)
        self.values.append((self.builder.input(shape, self.dtype), array.astype(np.float64)))

    def pick(self) -> tuple:
        return self.values[self.rng.integers(len(self.values))]

    def push(self, value, reference: np.ndarray, what: str) -> None:
        self.values.append((value, reference))
        self.log.append(what)


def _unary(g: Graph) -> None:
    op, (lo, hi) = UNARY[g.rng.integers(len(UNARY))]
    v, r = g.pick()
    if np.isfinite(lo) or np.isfinite(hi):
        r = np.clip(r, lo, hi)
        v = g.builder.min(g.builder.max(v, g.builder.constant(lo, g.dtype)), g.builder.constant(hi, g.dtype))
    g.push(g.builder.unary(short_name(op), v), reference(op, r), short_name(op))


def _broadcasts(*arrays: np.ndarray) -> bool:
    try:
        np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError:
        return False
    return True


def _binary(g: Graph) -> None:
    name = sorted(BINARY)[g.rng.integers(len(BINARY))]
    (a, ra), (b, rb) = g.pick(), g.pick()
    if _broadcasts(ra, rb):
        g.push(g.builder.binary(name, a, b), BINARY[name](ra, rb), name)


def _where(g: Graph) -> None:
    (a, ra), (b, rb) = g.pick(), g.pick()
    if not _broadcasts(ra, rb):
        return
    condition = g.builder.compare("gt", a, b)
    g.push(g.builder.where(condition, a, b), np.where(ra > rb, ra, rb), "where(gt)")


def _cast(g: Graph) -> None:
    v, r = g.pick()
    other = "f64" if g.dtype == "f32" else "f32"
    there = g.builder.cast(v, other)
    back = g.builder.cast(there, g.dtype)
    g.push(back, r.astype(NUMPY[other]).astype(np.float64), f"cast {other} and back")


def _movement(g: Graph) -> None:
    v, r = g.pick()
    b, rank, kind = g.builder, r.ndim, g.rng.integers(7)
    if kind == 0 and rank >= 2:
        perm = list(g.rng.permutation(rank))
        g.push(b.transpose(v, perm), np.transpose(r, perm), f"transpose {perm}")
    elif kind == 1 and rank >= 1:
        axis = int(g.rng.integers(rank))
        g.push(b.reverse(v, [axis]), np.flip(r, axis), f"reverse {axis}")
    elif kind == 2 and rank >= 1 and r.shape[-1] >= 2:
        n = r.shape[-1]
        starts, steps = [0] * (rank - 1) + [1], [1] * (rank - 1) + [2]
        lengths = [*r.shape[:-1], (n - 1 + 1) // 2]
        g.push(b.slice(v, starts, steps, lengths), r[..., 1::2], "slice ::2")
    elif kind == 3 and rank >= 1:
        before, after = [0] * (rank - 1) + [1], [0] * (rank - 1) + [2]
        reference = np.pad(r, [(0, 0)] * (rank - 1) + [(1, 2)])
        g.push(b.pad(v, before, after), reference, "pad")
    elif kind == 4 and rank >= 1:
        g.push(b.concat([v, v], rank - 1), np.concatenate([r, r], rank - 1), "concat")
    elif kind == 5 and rank <= 3:
        shape = (2, *r.shape)
        g.push(b.expand(v, shape), np.broadcast_to(r, shape), "expand")
    elif kind == 6:
        g.push(b.reshape(v, (r.size,)), r.reshape(-1), "reshape")


def _reduction(g: Graph) -> None:
    v, r = g.pick()
    if r.ndim == 0 or 0 in r.shape:
        return
    axis = int(g.rng.integers(r.ndim))
    kind = g.rng.integers(3)
    if kind == 0:
        g.push(g.builder.reduce_sum(v, [axis]), r.sum(axis), f"reduce_sum {axis}")
    elif kind == 1:
        g.push(g.builder.reduce_max(v, [axis], True), r.max(axis, keepdims=True), f"reduce_max {axis}")
    else:
        shifted = np.exp(r - r.max(axis, keepdims=True))
        g.push(g.builder.softmax(v, axis), shifted / shifted.sum(axis, keepdims=True), f"softmax {axis}")


def _matmul(g: Graph) -> None:
    v, r = g.pick()
    if r.ndim != 2:
        return
    g.push(g.builder.matmul(v, v, transpose_rhs=True), r @ r.T, "x @ xᵀ")


FAMILIES = [_unary, _unary, _binary, _binary, _where, _cast, _movement, _movement, _reduction, _matmul]


def random_graph(seed: int) -> Graph:
    rng = np.random.default_rng(seed)
    g = Graph(rng, "f32" if rng.random() < 0.7 else "f64")
    rank = int(rng.integers(1, 4))
    shape = tuple(int(n) for n in rng.integers(1, 6, rank))
    g.add_input(shape)
    g.add_input(shape[1:] if rank > 1 and rng.random() < 0.5 else shape)  # a broadcast operand
    for _ in range(int(rng.integers(3, 13))):
        FAMILIES[rng.integers(len(FAMILIES))](g)
    outputs = [g.values[-1]] + ([g.values[len(g.values) // 2]] if rng.random() < 0.4 else [])
    g.builder.output(*(v for v, _ in outputs))
    g.references = [r for _, r in outputs]  # type: ignore[attr-defined]
    return g


@dataclass(frozen=True)
class Outcome:
    seed: int
    ok: bool
    message: str = ""


def check(seed: int) -> Outcome:
    g = random_graph(seed)
    module = g.builder.module()
    try:
        fused, unfused = rlx.compile(module), rlx.compile(module, pipeline=NO_GRAPH_PASSES)
    except rlx.RlxError as error:
        return Outcome(seed, False, f"compile error: {error}")
    got, plain = fused(*g.inputs), unfused(*g.inputs)
    tolerance = {"f32": 2e-4, "f64": 1e-9}[g.dtype]
    for k, (a, b, want) in enumerate(zip(got, plain, g.references)):  # type: ignore[attr-defined]
        scale = max(1.0, float(np.nanmax(np.abs(want), initial=0.0)))
        if not np.allclose(a, b, rtol=tolerance, atol=tolerance * scale, equal_nan=True):
            return Outcome(seed, False, f"output {k}: fused != unfused ({' -> '.join(g.log)})")
        loose = tolerance * 10
        if not np.allclose(a.astype(np.float64), want, rtol=loose, atol=loose * scale, equal_nan=True):
            return Outcome(seed, False, f"output {k}: != float64 reference ({' -> '.join(g.log)})")
    return Outcome(seed, True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--graphs", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=0)
    options = parser.parse_args()
    start = time.perf_counter()
    failures = [o for o in (check(options.seed + k) for k in range(options.graphs)) if not o.ok]
    seconds = time.perf_counter() - start
    print(
        f"{options.graphs} random graphs (seeds {options.seed}..{options.seed + options.graphs - 1}) "
        f"in {seconds:.0f} s: {len(failures)} mismatches"
    )
    for failure in failures[:20]:
        print(f"  seed {failure.seed}: {failure.message}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
