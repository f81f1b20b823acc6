"""The accuracy promised for the transcendental kernels of lowering/scalar/math_approx.py: one table.

`MATH_APPROX_ACCURACY[function][width]` gives, for each function and float
width, the dense sweep range over which it is measured and the largest error
allowed there, in ULPs of that width (f32: vs the float64 reference rounded to
f32; f64: vs NumPy's float64). Values outside a range saturate and are covered
by the special values (±0, ±inf, NaN, subnormals, ±max) every suite adds.

Every numeric test of these functions reads this table, so a bound is written
once and the math_approx docstring cites it rather than a copy. It is keyed
by kernel, not by op: a new rlx op gets its bounds in tests/op_records.py (a
new row here is tested by tests/test_math_approx.py, which names a row
without a kernel or a reference):

* tests/test_math_approx.py — each kernel alone, ~2.25e6 points per function
  and width (uniform over `sweep`, log-uniform magnitudes, a dense [-2, 2] band);
* tests/op_records.py — the records of the rlx unary ops that are one of these
  kernels take their sweep and bound from here (tests/test_unary.py checks them
  over ~2e5 points);
* tests/test_numeric_edges.py — sin/cos/tan on huge arguments in f16/bf16/f32/f64
  (powers of two, floats nearest to multiples of pi/2, random bit patterns);
* tests/test_binary.py — rlx.pow and rlx.atan2 (special-value pairs and random
  operands).

atan2 and pow take two arguments, so they have no single range (`sweep` is
None); each suite draws their operands with its own generator (see
test_math_approx `_pow_inputs`/`_atan2_inputs`, test_binary `_random_operands`).

The bounds are the maxima measured over the test_math_approx sweeps (fixed
seeds) with no margin: one more ULP anywhere fails a test.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Accuracy:
    """How one function is swept at one width, and the largest error allowed there."""

    max_ulp: float
    sweep: tuple[float, float] | None  # [lo, hi] of the dense sweep; None for two-argument functions


F32_MAX, F64_MAX = 3.4e38, 1.7e308

MATH_APPROX_ACCURACY: dict[str, dict[str, Accuracy]] = {
    "exp": {"f32": Accuracy(1, (-105, 90)), "f64": Accuracy(1, (-746, 710))},
    "expm1": {"f32": Accuracy(1, (-40, 90)), "f64": Accuracy(2, (-60, 710))},
    "log": {"f32": Accuracy(1, (0, F32_MAX)), "f64": Accuracy(1, (0, F64_MAX))},
    "log1p": {"f32": Accuracy(1, (-1, F32_MAX)), "f64": Accuracy(1, (-1, F64_MAX))},
    "tanh": {"f32": Accuracy(2, (-20, 20)), "f64": Accuracy(3, (-40, 40))},
    "sigmoid": {"f32": Accuracy(2, (-110, 110)), "f64": Accuracy(2, (-750, 750))},
    # f64: 3 ULP at x = 1.0027499250782927 (found by the 2.25e6-point sweep)
    "erf": {"f32": Accuracy(1, (-5, 5)), "f64": Accuracy(3, (-7, 7))},
    # sin/cos/tan: every finite input (Cody-Waite below 2^16 / 2^30, exact Payne-Hanek above);
    # tests/test_numeric_edges.py adds powers of two, floats nearest to k pi/2 and the known hardest cases
    "sin": {"f32": Accuracy(1, (-F32_MAX, F32_MAX)), "f64": Accuracy(1, (-F64_MAX, F64_MAX))},
    "cos": {"f32": Accuracy(1, (-F32_MAX, F32_MAX)), "f64": Accuracy(1, (-F64_MAX, F64_MAX))},
    "tan": {"f32": Accuracy(3, (-F32_MAX, F32_MAX)), "f64": Accuracy(3, (-F64_MAX, F64_MAX))},
    "atan": {"f32": Accuracy(2, (-1e6, 1e6)), "f64": Accuracy(2, (-1e10, 1e10))},
    "atan2": {"f32": Accuracy(2, None), "f64": Accuracy(2, None)},
    "pow": {"f32": Accuracy(0, None), "f64": Accuracy(1, None)},
}

WIDTHS = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64"}


def accuracy(function: str, dtype: type | np.dtype) -> Accuracy:
    """The table row of `function` at the width of `dtype` (np.float32 or np.float64)."""
    return MATH_APPROX_ACCURACY[function][WIDTHS[np.dtype(dtype)]]


def sweep_range(function: str, dtype: type | np.dtype) -> tuple[float, float]:
    """The dense sweep [lo, hi] of a one-argument function at the width of `dtype`."""
    sweep = accuracy(function, dtype).sweep
    assert sweep is not None, f"{function} takes two arguments: its suites generate their own operands"
    return sweep
