"""Results of at least `RECYCLE_MIN_BYTES` are reused once the caller has
dropped them, and never while anything (a result, a view, an input) refers to
them."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import rlx_mlir as rlx
from rlx_mlir.runtime import RECYCLE_MIN_BYTES

SIDE = 1024  # 4 MiB of f32: above the threshold


@pytest.fixture(scope="module")
def double() -> rlx.Executable:
    b = rlx.Builder("double")
    x = b.input((SIDE, SIDE))
    b.output(b.add(x, x))
    return rlx.compile(b.module(), tune=False)


def test_the_size_is_above_the_threshold() -> None:
    assert 4 * SIDE * SIDE >= RECYCLE_MIN_BYTES


def test_a_dropped_result_is_reused(double: rlx.Executable) -> None:
    x = np.ones((SIDE, SIDE), np.float32)
    results = double(x)
    address = results[0].ctypes.data
    del results
    again = double(x)[0]
    assert again.ctypes.data == address
    np.testing.assert_array_equal(again, 2 * x)


def test_a_held_result_is_not_overwritten(double: rlx.Executable) -> None:
    first = double(np.ones((SIDE, SIDE), np.float32))[0]
    second = double(np.full((SIDE, SIDE), 3, np.float32))[0]
    assert first.ctypes.data != second.ctypes.data
    assert first[0, 0] == 2 and second[0, 0] == 6


def test_a_view_keeps_its_result(double: rlx.Executable) -> None:
    result = double(np.ones((SIDE, SIDE), np.float32))[0]
    row = result[5]
    del result
    double(np.full((SIDE, SIDE), 3, np.float32))
    assert row[0] == 2


def test_a_result_passed_back_as_input_is_not_the_output(double: rlx.Executable) -> None:
    y = double(np.ones((SIDE, SIDE), np.float32))[0]
    z = double(y)[0]
    assert z.ctypes.data != y.ctypes.data
    assert y[0, 0] == 2 and z[0, 0] == 4


def test_concurrent_callers_get_distinct_results(double: rlx.Executable) -> None:
    seen: list[float] = []

    def call(k: int) -> None:
        for _ in range(20):
            r = double(np.full((SIDE, SIDE), k, np.float32))[0]
            seen.append(float(r[-1, -1]) - 2 * k)

    threads = [threading.Thread(target=call, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == [0.0] * 80
