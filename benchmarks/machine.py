"""Which machine a benchmark ran on and which target it compiled for.

Every script takes `--target` (native, x86-64-v3, x86-64-v4 or an LLVM CPU
name; AVX2 code runs on an AVX-512 host, so both ISA levels can be measured
on one) and prints `header()` first, so every figure names its host CPU, its
target, the load and the BLAS settings it was measured under.
"""

from __future__ import annotations

import argparse
import os
import platform
from pathlib import Path

from rlx_mlir.target import ENVIRONMENT, target


def add_target_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--target",
        default=os.environ.get(ENVIRONMENT, "native"),
        help="the machine rlx compiles for: native, x86-64-v3, x86-64-v4 or an LLVM CPU name",
    )


def use_target(name: str) -> str:
    """Compile everything of this run for target `name` (through $RLX_MLIR_TARGET,
    which `rlx_mlir.compile` reads) and return the header naming host and target."""
    os.environ[ENVIRONMENT] = name
    return header(name)


def header(name: str) -> str:
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "unknown"
    blas = " ".join(f"{k}={os.environ[k]}" for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if k in os.environ)
    return (
        f"host: {_cpu_model()} ({platform.machine()}), load average {load}{', ' + blas if blas else ''}\n"
        f"target: {target(name)}"
    )


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"
