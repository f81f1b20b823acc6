"""The timing loops of benchmarks/: every script times its kernels and peers here.

Figures on a shared machine move with the load, so the loops that compare
runtimes call each function once per round, in turn: a change in load then hits
every function alike and their ratios stay comparable.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass


def median_ms(fn: Callable[[], object], repeat: int) -> float:
    """Median wall ms of `repeat` calls after one warm-up call."""
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


@dataclass(frozen=True)
class Samples:
    """One function's wall and CPU times (all threads of the process), ms, one per round."""

    wall: tuple[float, ...]
    cpu: tuple[float, ...]


def interleaved(fns: dict[str, Callable[[], object]], repeat: int) -> dict[str, Samples]:
    """Each function's times over `repeat` rounds that call every function once, after one
    warm-up call each. The CPU time does not count the time a thread waits for a core, so its
    ratios hold up better when the machine is oversubscribed (for kernels that keep all their
    threads busy)."""
    for fn in fns.values():
        fn()
    wall: dict[str, list[float]] = {name: [] for name in fns}
    cpu: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            fn()
            cpu[name].append((time.process_time() - start_cpu) * 1e3)
            wall[name].append((time.perf_counter() - start) * 1e3)
    return {name: Samples(tuple(wall[name]), tuple(cpu[name])) for name in fns}


@dataclass(frozen=True)
class Best:
    """A function's best wall time and best CPU time, ms."""

    wall: float
    cpu: float


def interleaved_ms(fns: dict[str, Callable[[], object]], repeat: int) -> dict[str, Best]:
    """The minimum times of `interleaved`: the statistic for kernels whose best run is their
    undisturbed speed (no peer whose own threads may be asleep at a round's start)."""
    return {name: Best(min(s.wall), min(s.cpu)) for name, s in interleaved(fns, repeat).items()}


def interleaved_medians(fns: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    """The median wall times of `interleaved`: the statistic for whole models, whose runs
    vary with the work of other runtimes' thread pools as much as with the load."""
    return {name: statistics.median(s.wall) for name, s in interleaved(fns, repeat).items()}
