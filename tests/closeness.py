"""`assert_close`: the one tolerance model of the numeric suites.

    |got - want| <= atol + rtol * |want|        element by element

`want` is the float64 (or higher-precision) reference, `rtol` covers the
rounding of each result (a few unit roundoffs of the output type), and `atol`
the error carried in from the terms a result was computed from: a scalar, for
instance `tol * largest(want)` where cancellation makes small elements as
uncertain as the largest ones, or an array giving each element its own bound
(a matmul's k·u·(|A|·|B|)). Complex values are compared by modulus. NaN must face NaN and an infinity the same
infinity; shapes must be equal. The message names the worst element.

ULP-level checks of single ops use `reference.ulp_error` and the bounds of
tests/op_records.py instead.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

FLOAT_TYPES = {
    "f16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
}
"""The floating types the kernels that widen f16/bf16 support, by rlx name."""
UNIT_ROUNDOFF = {"f16": 2.0**-11, "bf16": 2.0**-8, "f32": 2.0**-24, "f64": 2.0**-53}
COMPUTED_IN = {"f16": "f32", "bf16": "f32", "f32": "f32", "f64": "f64"}
"""The type a kernel sums in: f16/bf16 are widened to f32 and rounded once."""


def largest(want: np.ndarray, floor: float = 1e-30) -> float:
    """max |want| (at least `floor`): the scale of an absolute tolerance."""
    finite = np.abs(np.asarray(want)).astype(np.float64)
    finite = finite[np.isfinite(finite)]
    return max(float(finite.max(initial=0.0)), floor)


def assert_close(
    got: np.ndarray, want: np.ndarray, rtol: float = 0.0, atol: float | np.ndarray = 0.0, what: str = ""
) -> None:
    """Assert |got - want| <= atol + rtol |want| everywhere (see the module docstring)."""
    wide = np.complex128 if np.iscomplexobj(got) or np.iscomplexobj(want) else np.float64
    got64, want64 = np.asarray(got, wide), np.asarray(want, wide)
    label = f"{what}: " if what else ""
    assert got64.shape == want64.shape, f"{label}shape {got64.shape} != {want64.shape}"
    with np.errstate(invalid="ignore", over="ignore"):
        error = np.abs(got64 - want64)
        bound = atol + rtol * np.abs(want64)
        same_special = (np.isnan(got64) & np.isnan(want64)) | (np.isinf(want64) & (got64 == want64))
        ok = same_special | (error <= bound)
    if not ok.all():
        worst = np.unravel_index(np.argmax(np.where(ok, -np.inf, np.nan_to_num(error - bound, nan=np.inf))), ok.shape)
        bound_here = np.broadcast_to(bound, ok.shape)[worst]
        raise AssertionError(
            f"{label}{int((~ok).sum())} of {ok.size} elements off; worst at {worst}: "
            f"got {got64[worst]!r}, want {want64[worst]!r}, error {error[worst]:.3g} > {bound_here:.3g}"
        )
