"""A scan with no per-step inputs (xs): its step count is the `length` property.

Issue 22 found such a scan accepted "although its length has no source". The
rule (dialects/scan.py): `length` is a required property of every rlx.scan and
the only source of its step count; xs, when present, must have it as their
leading axis. So a scan with no xs is a loop of `length` steps, and one
without a length (or with length 0) is a verifier error
(tests/lit/scan/invalid-no-xs.mlir). The Builder takes the length from the
xs, so it refuses a scan without them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import rlx_mlir as rlx

CASES = (Path(__file__).parent / "lit" / "scan" / "no-xs.mlir").read_text().split("// -----")


def test_a_broadcast_only_scan_runs_length_steps() -> None:
    h0, w = np.array([1, 2, 3], np.float32), np.array([0.5, -1, 2], np.float32)
    (h,) = rlx.compile(CASES[0])(h0, w)
    np.testing.assert_array_equal(h, h0 + 5 * w)


def test_a_carry_only_scan_saves_a_row_per_step() -> None:
    h0 = np.array([1, -3], np.float32)
    (trajectory,) = rlx.compile(CASES[1])(h0)
    np.testing.assert_array_equal(trajectory, np.stack([h0 * 2 ** (t + 1) for t in range(4)]))


def test_a_scan_without_xs_or_length_is_a_verifier_error() -> None:
    text = CASES[0].replace("{length = 5 : i64, num_broadcast = 1 : i64}", "{num_broadcast = 1 : i64}")
    with pytest.raises(rlx.VerificationError, match="property 'length' expected in operation 'rlx.scan'"):
        rlx.compile(text)


def test_the_builder_needs_xs_to_take_the_length_from() -> None:
    b = rlx.Builder()
    h0 = b.input((3,))
    with pytest.raises(rlx.ArgumentError, match=r"Builder.scan needs at least one per-step input \(xs\)"):
        b.scan(h0, lambda bb, c: bb.neg(c))
