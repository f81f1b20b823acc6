"""The process-wide thread pool (rlx_mlir/thread_pool.py), driven directly with a
Python thunk through ctypes, and through compiled executables: every chunk runs
once, the split covers [0, n) exactly, concurrent callers and forked children
still get right results."""

from __future__ import annotations

import ctypes
import json
import multiprocessing
import os
import subprocess
import sys
import threading
import time
from collections import Counter

import llvmlite.binding as llvm
import numpy as np
import pytest

import rlx_mlir as rlx
from rlx_mlir import thread_pool

THUNK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)
PARALLEL_FOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)


def parallel_for() -> PARALLEL_FOR:
    thread_pool.load()
    return PARALLEL_FOR(llvm.address_of_symbol(thread_pool.SYMBOL))


@pytest.fixture(autouse=True)
def no_backoff():
    """How launches split, without the backoff after a stall (a Python thunk's
    worker waits for the GIL, which looks like a descheduled one)."""
    thread_pool.set_backoff(0)
    yield
    thread_pool.set_backoff(thread_pool.BACKOFF_LAUNCHES)


def run_counting(n: int, threads: int, seconds: float = 0.0) -> tuple[np.ndarray, list[tuple[int, int]], set[int]]:
    """Run a thunk over [0, n) on `threads` threads, each chunk taking at least
    `seconds`: per index how often it ran, the chunks and the threads that ran them."""
    hits = np.zeros(n, np.int64)
    chunks: list[tuple[int, int]] = []
    idents: set[int] = set()

    def thunk(_args: int | None, lo: int, hi: int) -> None:
        time.sleep(seconds)
        hits[lo:hi] += 1
        chunks.append((lo, hi))
        idents.add(threading.get_ident())

    callback = THUNK(thunk)
    parallel_for()(ctypes.cast(callback, ctypes.c_void_p), None, n, threads)
    return hits, sorted(chunks), idents


@pytest.mark.parametrize(("n", "threads"), [(1000, 2), (1000, 3), (7, 4), (3, 8), (1, 2), (0, 2), (10, 1), (600, 1000)])
def test_every_index_runs_once_in_grains(n: int, threads: int) -> None:
    """[0, n) is cut into GRAINS_PER_THREAD grains per thread (at most n), or run
    whole on the calling thread when there is nothing to split."""
    hits, chunks, _ = run_counting(n, threads)
    assert np.array_equal(hits, np.ones(n, np.int64))
    parts = min(n, threads, thread_pool.MAX_WORKERS + 1)
    assert len(chunks) == (min(n, parts * thread_pool.GRAINS_PER_THREAD) if parts > 1 else 1)
    assert [lo for lo, _ in chunks[1:]] == [hi for _, hi in chunks[:-1]]  # contiguous, in order


def test_grains_run_on_pool_workers_that_are_reused() -> None:
    """Grains long enough (2 ms) for a sleeping worker to wake and take its share;
    shorter ones the caller may run all of, not waiting for the worker."""
    seen: Counter[int] = Counter()
    for _ in range(50):
        hits, chunks, idents = run_counting(64, 2, seconds=0.002)
        assert np.array_equal(hits, np.ones(64, np.int64)) and len(chunks) == 2 * thread_pool.GRAINS_PER_THREAD
        seen.update(idents)
    assert threading.get_ident() in seen
    assert len(seen) == 2  # the caller and one worker, the same one every time


def test_concurrent_callers_each_get_their_whole_range() -> None:
    """A second caller while the pool is busy runs its range on its own thread."""
    results: list[bool] = []

    def caller() -> None:
        for _ in range(20):
            hits, _, _ = run_counting(257, 2)
            results.append(bool(np.array_equal(hits, np.ones(257, np.int64))))

    threads = [threading.Thread(target=caller) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [True] * 80


def big_sum(n: int, threads: int = 2) -> rlx.Executable:
    """exp(a + b) over n f32: split across threads from 2^17 elements."""
    t = f"tensor<{n}xf32>"
    return rlx.compile(
        f"func.func @big(%a: {t}, %b: {t}) -> {t} {{\n"
        f"  %s = rlx.add %a, %b : ({t}, {t}) -> {t}\n"
        f"  %e = rlx.exp %s : ({t}) -> {t}\n"
        f"  func.return %e : {t}\n}}",
        threads=threads,
    )


def _run_in_child(queue: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    exe = big_sum(1 << 20)
    a = np.full(1 << 20, 0.5, np.float32)
    queue.put(float(exe(a, a)[0].sum()))


def test_a_forked_child_starts_its_own_workers() -> None:
    """The parent's workers do not exist in a forked child: the pool forgets them there."""
    n = 1 << 20
    exe = big_sum(n)
    a = np.full(n, 0.5, np.float32)
    expected = float(exe(a, a)[0].sum())  # the parent's pool has a worker now
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_run_in_child, args=(queue,))
    child.start()
    got = queue.get(timeout=120)
    child.join(timeout=120)
    assert child.exitcode == 0
    assert got == pytest.approx(expected, rel=1e-6)


def test_threaded_executable_matches_one_thread() -> None:
    n = (1 << 20) + 3  # an uneven split
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    two, one = big_sum(n), big_sum(n, threads=1)
    assert ("rlx_pool_parallel_for" in two.llvm_ir) == (len(os.sched_getaffinity(0)) > 1)
    for _ in range(20):
        np.testing.assert_array_equal(two(a, b)[0], one(a, b)[0])


def test_a_process_can_exit_right_after_a_launch() -> None:
    """The pool's code outlives the interpreter's teardown: a worker still spinning
    in it when the process exits must not run into freed memory (it did). The
    worker here spins for seconds, so that it surely is when the process exits."""
    code = (
        "import numpy as np, rlx_mlir as rlx\n"
        "from rlx_mlir import thread_pool\n"
        "thread_pool.SPIN_CYCLES = 1 << 34\n"
        "t = 'tensor<1048576xf32>'\n"
        "exe = rlx.compile(f'func.func @f(%a: {t}) -> {t} {{\\n %e = rlx.exp %a : ({t}) -> {t}\\n"
        " func.return %e : {t}\\n}}', threads=2)\n"
        "exe(np.ones(1 << 20, np.float32))\n"
    )
    for _ in range(5):
        done = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            env={**os.environ, "RLX_MLIR_CACHE": "0"},
            check=False,
        )
        assert done.returncode == 0, done.stderr


MOVE_CODE = (
    "import ctypes, json, os, threading, llvmlite.binding as llvm\n"
    "from rlx_mlir import thread_pool\n"
    "thread_pool.load()\n"
    "thread_pool.set_backoff(0)  # Python thunks wait on the GIL: not a stall to back off from\n"
    "allowed = sorted(os.sched_getaffinity(0))\n"
    "here = allowed[0]\n"
    "os.sched_setaffinity(0, {here})  # this thread only\n"
    "workers = set()\n"
    "def thunk(_args, lo, hi):\n"
    "    if threading.get_ident() != main:\n"
    "        workers.add(threading.get_native_id())\n"
    "main = threading.get_ident()\n"
    "callback = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)(thunk)\n"
    "run = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)(\n"
    "    llvm.address_of_symbol(thread_pool.SYMBOL))\n"
    "while not workers:\n"
    "    run(ctypes.cast(callback, ctypes.c_void_p), None, 2, 2)\n"
    "worker = workers.pop()\n"
    "os.sched_setaffinity(worker, {here})  # onto the caller's CPU\n"
    "import time\n"
    "for _ in range(20):  # a launch, then the caller sleeps: the worker runs (a caller that did all\n"
    "    run(ctypes.cast(callback, ctypes.c_void_p), None, 2, 2)  # the grains does not wait for it)\n"
    "    time.sleep(0.01)\n"
    "print(json.dumps({'allowed': allowed, 'worker': sorted(os.sched_getaffinity(worker))}))\n"
)


@pytest.mark.skipif(not thread_pool.AFFINITY or len(os.sched_getaffinity(0)) < 2, reason="needs Linux and 2 CPUs")
@pytest.mark.parametrize("moving", ["1", "0"])
def test_a_worker_on_its_callers_cpu_moves_off_it(moving: str) -> None:
    """A worker put on the CPU its caller runs on restricts itself to the other
    allowed CPUs at its next launch; RLX_MLIR_WORKER_AFFINITY=0 leaves it there."""
    env = {**os.environ, thread_pool.AFFINITY_VARIABLE: moving}
    done = subprocess.run([sys.executable, "-c", MOVE_CODE], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    allowed = seen["allowed"]
    assert seen["worker"] == (allowed[1:] if moving == "1" else allowed[:1])


def test_after_a_stalled_worker_launches_run_alone_a_while() -> None:
    """A worker whose grain takes far longer than the caller's (a descheduled one)
    makes the next BACKOFF launches run whole on the caller; then they split again."""
    thread_pool.set_backoff(3)
    caller = threading.get_ident()

    def slow_elsewhere(_args: int | None, lo: int, hi: int) -> None:  # the worker's grain 12x the caller's
        time.sleep(0.005 if threading.get_ident() == caller else 0.06)

    callback = THUNK(slow_elsewhere)
    parallel_for()(ctypes.cast(callback, ctypes.c_void_p), None, 64, 2)
    splits = [len(run_counting(64, 2, seconds=0.002)[1]) for _ in range(4)]
    assert splits[:3] == [1, 1, 1]
    assert splits[3] == 2 * thread_pool.GRAINS_PER_THREAD
