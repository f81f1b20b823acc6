"""How much the persistent compile cache saves a second process.

    python benchmarks/compile_cache.py [--example examples/bias_gelu.mlir] [--runs 5]

Each run starts fresh Python processes that compile the example: a cold one
on an empty cache folder, then a warm one on the folder the cold one filled,
alternating, so both sides see the same load. The process's CPU time and the
wall time of `rlx_mlir.compile` are printed for the fastest of each side, and
their ratio (cold / warm: how many times less a second process spends).
`tests/test_disk_cache.py` checks what makes the warm side fast (it skips
every compiler stage); this script measures by how much.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from machine import add_target_argument, use_target  # this script's folder is on sys.path

CHILD = """
import json, sys, time
import rlx_mlir as rlx
text = open(sys.argv[1]).read()
start, cpu = time.perf_counter(), time.process_time()
exe = rlx.compile(text)
print(json.dumps({"wall": time.perf_counter() - start, "cpu": time.process_time() - cpu, "cached": exe.cached}))
"""

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "bias_gelu.mlir"


def compile_in_a_new_process(example: Path, cache: Path) -> dict:
    environment = {**os.environ, "RLX_MLIR_CACHE_DIR": str(cache)}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(example)], capture_output=True, text=True, env=environment, check=True
    )
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--example", type=Path, default=EXAMPLE)
    parser.add_argument("--runs", type=int, default=5, help="cold and warm processes, each")
    add_target_argument(parser)
    args = parser.parse_args()
    print(use_target(args.target))
    colds, warms = [], []
    with tempfile.TemporaryDirectory() as folder:
        for run in range(args.runs):
            cache = Path(folder) / f"cache{run}"
            colds.append(compile_in_a_new_process(args.example, cache))
            warms.append(compile_in_a_new_process(args.example, cache))
    if any(c["cached"]["module"] for c in colds) or not all(w["cached"]["module"] for w in warms):
        sys.exit("the cache did not behave: a cold process hit it or a warm one missed it")
    print(f"{args.example.name}: fastest of {args.runs} fresh processes each")
    print(f"{'clock':>6} {'first (ms)':>11} {'second (ms)':>12} {'ratio':>7}")
    for clock in ("cpu", "wall"):
        cold, warm = min(c[clock] for c in colds), min(w[clock] for w in warms)
        print(f"{clock:>6} {cold * 1e3:11.1f} {warm * 1e3:12.2f} {cold / warm:7.1f}")


if __name__ == "__main__":
    main()
