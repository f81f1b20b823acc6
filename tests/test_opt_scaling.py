"""rlx-opt's time grows linearly in the graph (issue 22: a 10^5-op chain through
`rlx-opt -p default` ran past 60 s).

Profiled on 10^4 and 2·10^4-op elementwise chains, every stage (xDSL's parser,
the verifiers, each pass, the lowering, the printer) was linear once Python's
cyclic collector was paused: with it on, each full collection walked the whole
growing IR, and a doubled chain took 2.3x the CPU time (1.7x paused).
`rlx.compile` already paused it; rlx-opt now does too
(`context.cycle_collection_paused`), and `RlxParser` parses each spelling of
a simple tensor type once (two fifths of parsing). Measured: 10^5 ops in 42 s
of CPU time (63 s with the pause alone, past 100 s before), 4.7x the
2·10^4-op run; about half of it is still xDSL's own parsing and verifying.

The checks count collections during a run (none: the pause is in place) and
compare the function calls (cProfile's count, which the machine's load cannot
change) of two sizes, never a time; benchmarks/compile_time.py measures the
times.
"""

from __future__ import annotations

import contextlib
import cProfile
import gc
import io
import pstats
from collections.abc import Iterator
from pathlib import Path

from rlx_mlir.cli import opt as opt_cli


def chain(n: int) -> str:
    """tanh, mul by the input, neg, ... : `n` elementwise ops, each reading the last."""
    t = "tensor<256xf32>"
    lines = [f"func.func @f(%a: {t}) -> {t} {{", f"  %v0 = rlx.neg %a : ({t}) -> {t}"]
    for k in range(1, n):
        op = ("tanh", "mul", "neg")[k % 3]
        operands, types = (f"%v{k - 1}, %a", f"({t}, {t})") if op == "mul" else (f"%v{k - 1}", f"({t})")
        lines.append(f"  %v{k} = rlx.{op} {operands} : {types} -> {t}")
    lines.append(f"  func.return %v{n - 1} : {t}\n}}")
    return "\n".join(lines)


@contextlib.contextmanager
def collections() -> Iterator[list[int]]:
    """The generation of each collection that starts inside the block."""
    found: list[int] = []

    def note(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            found.append(info["generation"])

    gc.callbacks.append(note)
    try:
        yield found
    finally:
        gc.callbacks.remove(note)


def run_opt(path: Path) -> None:
    with contextlib.redirect_stdout(io.StringIO()):
        opt_cli.main([str(path), "-p", "default"])


def calls_of_run_opt(path: Path) -> int:
    """Python function calls of `rlx-opt path -p default`, in this process."""
    profile = cProfile.Profile()
    profile.enable()
    run_opt(path)
    profile.disable()
    return pstats.Stats(profile).total_calls


def test_rlx_opt_runs_with_the_cycle_collector_paused(tmp_path: Path) -> None:
    """No collection while rlx-opt runs (a warm-up run first does the tool's lazy
    imports), only the one collection (of a young generation) the objects
    allocated meanwhile start once the collector is on again. With the collector on, this run
    started hundreds (4 of them full in a fresh process)."""
    source = tmp_path / "chain.mlir"
    source.write_text(chain(2000))
    run_opt(source)
    with collections() as found:
        run_opt(source)
    assert len(found) <= 1 and 2 not in found, found
    assert gc.isenabled()


def test_doubling_the_chain_at_most_doubles_the_work(tmp_path: Path) -> None:
    """2,000 and 4,000 ops (a warm-up run first does the tool's lazy imports): a
    pass or stage that grows faster than the graph (a quadratic walk) shows up
    as a ratio of calls past 2. Measured: 1.85 (a fixed part makes it less than 2)."""
    sources = {n: tmp_path / f"chain{n}.mlir" for n in (100, 2000, 4000)}
    for n, source in sources.items():
        source.write_text(chain(n))
    run_opt(sources[100])
    calls = {n: calls_of_run_opt(sources[n]) for n in (2000, 4000)}
    assert calls[4000] / calls[2000] < 2.05, calls
