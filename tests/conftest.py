"""Shared pytest configuration for the rlx test suite.

Helper modules: `tests/` has no `__init__.py`, so pytest's default import mode
("prepend") puts this directory at the front of `sys.path` when it imports this
conftest.py, before any test module is collected. The test modules
therefore import the shared helpers as plain top-level modules
(`from reference import ulp_error`, `from accuracy import accuracy`),
from the repository root (`python -m pytest -q`) as well as from a single
file, without touching `sys.path` themselves.

Compile cache: the session uses a temporary directory of its own
(`RLX_MLIR_CACHE_DIR`), removed at exit.

Fixtures: ``graph_exe``, the executable of `ir_snippets.GRAPH`, shared by the
API-error and regression suites.

Markers:

* ``x86_64_avx`` — the test reads x86 register names (``%ymm``/``%zmm``) in the
  assembly compiled for the host, so it only means something on an x86-64 host
  with AVX; elsewhere it is skipped with the reason, never failed.
"""

from __future__ import annotations

import atexit
import os
import platform
import shutil
import tempfile

import llvmlite.binding as llvm
import pytest
from ir_snippets import GRAPH

# The persistent compile cache of this test session: its own directory, never the user's.
if "RLX_MLIR_CACHE_DIR" not in os.environ:
    os.environ["RLX_MLIR_CACHE_DIR"] = tempfile.mkdtemp(prefix="rlx-test-cache-")
    atexit.register(shutil.rmtree, os.environ["RLX_MLIR_CACHE_DIR"], ignore_errors=True)

import rlx_mlir as rlx
from rlx_mlir.runtime import Executable

X86_64_MACHINES = ("x86_64", "AMD64")


def _host_x86_64_avx() -> str | None:
    """Why the host cannot run the x86-64 AVX assembly checks, or None if it can."""
    machine = platform.machine()
    if machine not in X86_64_MACHINES:
        return f"checks x86-64 register names in the assembly; this host is {machine or 'unknown'}"
    if not llvm.get_host_cpu_features().get("avx", False):
        return "checks packed %ymm/%zmm code; this x86-64 host has no AVX"
    return None


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "x86_64_avx: reads x86 AVX register names in host assembly (skipped elsewhere)")


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("x86_64_avx") is not None and (reason := _host_x86_64_avx()) is not None:
        pytest.skip(reason)


@pytest.fixture(scope="session")
def graph_exe() -> Executable:
    """ir_snippets.GRAPH compiled once, for the tests that call an executable wrongly."""
    return rlx.compile(GRAPH)
