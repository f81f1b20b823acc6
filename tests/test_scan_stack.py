"""A scan's time loop takes no stack per step.

The entry used to allocate each launch's pointer array where the launch was
emitted: inside the time loop, one more array per step, until a scan of a few
million steps overflowed the stack and killed the process. The array is now
allocated once, in the entry block. The scan runs in a child process, so the
old crash fails this test instead of killing the test run.
"""

from __future__ import annotations

import subprocess
import sys

STEPS = 3_000_000

CHILD = f"""
import numpy as np
import rlx_mlir as rlx
from rlx_mlir.builder import Builder

b = Builder("long_scan")
c0, xs = b.input((1,)), b.input(({STEPS}, 1))
b.output(b.scan(c0, lambda b, c, x: b.add(c, x), [xs]))
exe = rlx.compile(b.module(), threads=1)
(total,) = exe(np.zeros(1, np.float32), np.ones(({STEPS}, 1), np.float32))
print(float(total[0]))
"""


def test_a_scan_of_millions_of_steps_runs_in_bounded_stack() -> None:
    done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, check=False)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert float(done.stdout) == float(STEPS)  # integers below 2^24 add exactly in f32
