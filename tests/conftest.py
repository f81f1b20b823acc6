"""Shared pytest configuration for the rlx test suite.

Helper modules: `tests/` has no `__init__.py`, so pytest's default import mode
("prepend") puts this directory at the front of `sys.path` when it imports this
conftest.py, before any test module is collected. The test modules
therefore import the shared helpers as plain top-level modules
(`from reference import ulp_error`, `from accuracy import accuracy`),
from the repository root (`python -m pytest -q`) as well as from a single
file, without touching `sys.path` themselves.

Compile cache: the session uses a temporary directory of its own
(`RLX_MLIR_CACHE_DIR`), removed at exit; so do the suite models' ONNX exports
(`RLX_TEST_EXPORT_DIR`), which every worker reads.

Fixtures: ``graph_exe``, the executable of `ir_snippets.GRAPH`, shared by the
API-error and regression suites.

Markers:

* ``x86_64_avx`` — the test reads x86 register names (``%ymm``/``%zmm``) in the
  assembly compiled for the host, so it only means something on an x86-64 host
  with AVX; elsewhere it is skipped with the reason, never failed.
* ``x86_64`` — the test reads the assembly of code compiled for forced x86-64
  targets (`x86-64-v3`, `x86-64-v4`), which any x86-64 host can emit without
  running it; elsewhere it is skipped with the reason.
* ``isa_subset`` — given by `ISA_SUBSET` below to whole modules: the numeric
  tests `.ci/run` runs a second time with ``RLX_MLIR_TARGET=x86-64-v3`` (AVX2
  code, which an AVX-512 host runs too), selected with ``-m isa_subset``, by
  tests/isa_subset.py (not on a host whose own kernels are the x86-64-v3 ones).
* ``target_independent`` — a test of an `ISA_SUBSET` module that does not
  read ``RLX_MLIR_TARGET``: it compiles for a target it names
  (``target="x86-64-v3"``: the second run would compile and run the very
  same code) or compiles nothing (a table, an import). It keeps no
  ``isa_subset`` mark, so it runs once.
"""

from __future__ import annotations

import atexit
import os
import platform
import shutil
import tempfile
from pathlib import Path

import llvmlite.binding as llvm
import pytest
from ir_snippets import GRAPH

# The persistent compile cache of this test session: its own directory, never the user's.
if "RLX_MLIR_CACHE_DIR" not in os.environ:
    os.environ["RLX_MLIR_CACHE_DIR"] = tempfile.mkdtemp(prefix="rlx-test-cache-")
    atexit.register(shutil.rmtree, os.environ["RLX_MLIR_CACHE_DIR"], ignore_errors=True)

# The suite models' ONNX exports (tests/test_models.py `exported`), made once and shared by
# the session's workers: the directory is made before xdist starts them, which inherit it.
if "RLX_TEST_EXPORT_DIR" not in os.environ:
    os.environ["RLX_TEST_EXPORT_DIR"] = tempfile.mkdtemp(prefix="rlx-test-exports-")
    atexit.register(shutil.rmtree, os.environ["RLX_TEST_EXPORT_DIR"], ignore_errors=True)

# The model's kernel choices, deterministically: measuring forms at compile time
# (rlx_mlir/autotune.py) is tested on its own, in tests/test_autotune.py.
os.environ.setdefault("RLX_MLIR_TUNE", "0")

import rlx_mlir as rlx
from rlx_mlir.runtime import Executable

X86_64_MACHINES = ("x86_64", "AMD64")


ISA_SUBSET = (
    "test_unary.py",
    "test_binary.py",
    "test_compare_where_fma_cast.py",
    "test_reductions.py",
    "test_normalize_fusion.py",
    "test_math_approx.py",
    "test_matmul.py",
    "test_rnn.py",
    "test_delta_rule.py",
    "test_state_space.py",
    "test_conv.py",
)
"""The modules whose kernels depend on the target's vectors (activations, casts,
reductions, GEMM and conv tiles, recurrences): `.ci/run` runs them at x86-64-v3 too."""


def _host_x86_64() -> str | None:
    """Why the host cannot check x86-64 assembly, or None if it can."""
    machine = platform.machine()
    if machine not in X86_64_MACHINES:
        return f"checks x86-64 register names in the assembly; this host is {machine or 'unknown'}"
    return None


def _host_x86_64_avx() -> str | None:
    """Why the host cannot run the x86-64 AVX assembly checks, or None if it can."""
    if (reason := _host_x86_64()) is not None:
        return reason
    if not llvm.get_host_cpu_features().get("avx", False):
        return "checks packed %ymm/%zmm code; this x86-64 host has no AVX"
    return None


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "x86_64_avx: reads x86 AVX register names in host assembly (skipped elsewhere)")
    config.addinivalue_line("markers", "x86_64: reads the assembly of forced x86-64 targets (skipped elsewhere)")
    config.addinivalue_line("markers", "isa_subset: also run at RLX_MLIR_TARGET=x86-64-v3 by .ci/run")
    config.addinivalue_line(
        "markers", "target_independent: in an ISA_SUBSET module, but the same code on every target: run once"
    )


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Under exactly `-m isa_subset` (the second pytest run of `.ci/run`), a test module
    outside `ISA_SUBSET` is not imported: none of its tests carries the mark, and
    importing them all (torch, transformers, ONNX's node-test generators, which run
    every reference at import) cost each worker about a minute of that run."""
    if config.option.markexpr != "isa_subset" or collection_path.suffix != ".py":
        return None
    return True if collection_path.name.startswith("test_") and collection_path.name not in ISA_SUBSET else None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.name in ISA_SUBSET and item.get_closest_marker("target_independent") is None:
            item.add_marker(pytest.mark.isa_subset)


def pytest_runtest_setup(item: pytest.Item) -> None:
    for marker, why_not in (("x86_64_avx", _host_x86_64_avx), ("x86_64", _host_x86_64)):
        if item.get_closest_marker(marker) is not None and (reason := why_not()) is not None:
            pytest.skip(reason)


@pytest.fixture(scope="session")
def graph_exe() -> Executable:
    """ir_snippets.GRAPH compiled once, for the tests that call an executable wrongly."""
    return rlx.compile(GRAPH)
