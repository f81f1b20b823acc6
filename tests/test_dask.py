"""Scale-out on Dask: a compiled graph over a chunked dask array, on a
2-process `dask.distributed.LocalCluster`, compared with NumPy. Each worker
unpickles the executable (its IR and options) and recompiles it through the
persistent cache; the chunks match the compiled shape."""

from __future__ import annotations

import dask.array as da
import numpy as np
import pytest
from dask.distributed import Client, LocalCluster

import rlx_mlir as rlx

ROWS, COLS = 256, 64


def test_map_blocks_on_a_two_process_local_cluster() -> None:
    b = rlx.Builder("layer")
    x, w = b.input((ROWS, COLS)), b.input((COLS,))
    b.output(b.tanh(b.mul(x, w)))
    exe = rlx.compile(b.module(), threads=1)
    rng = np.random.default_rng(0)
    data = rng.standard_normal((4 * ROWS, COLS)).astype(np.float32)
    weights = rng.standard_normal(COLS).astype(np.float32)

    def run(block: np.ndarray) -> np.ndarray:
        return exe(block, weights)[0]

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with Client(cluster) as client:
            assert len(client.scheduler_info()["workers"]) == 2
            chunked = da.from_array(data, chunks=(ROWS, COLS))
            got = chunked.map_blocks(run, dtype=np.float32).compute(scheduler=client)
    np.testing.assert_allclose(got, np.tanh(data * weights), rtol=2e-6, atol=1e-7)


def test_a_chunk_of_another_shape_is_a_clear_error() -> None:
    b = rlx.Builder("layer")
    b.output(b.neg(b.input((ROWS, COLS))))
    exe = rlx.compile(b.module())
    chunked = da.from_array(np.zeros((ROWS + 1, COLS), np.float32), chunks=(ROWS + 1, COLS))
    with pytest.raises(rlx.ArgumentError, match=r"must have shape \[256, 64\], got \[257, 64\]"):
        chunked.map_blocks(lambda block: exe(block)[0], dtype=np.float32).compute(scheduler="sync")
