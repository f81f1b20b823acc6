"""ONNX's own node tests (onnx.backend.test) for every case whose ops all have
an importer: one test per case, so a failure names its case. The cases the
importer does not pass yet are strict expected failures with their reasons
(tests/onnx_expected_failures.py): a new failure fails, and so does a listed
case that starts passing (remove it from the list)."""

from __future__ import annotations

import pytest
from onnx_cases import run_case, supported_cases
from onnx_expected_failures import EXPECTED_FAILURES

CASES = supported_cases()


def _param(case: object) -> object:
    name = case.name  # type: ignore[attr-defined]
    if name not in EXPECTED_FAILURES:
        return pytest.param(case, id=name)
    return pytest.param(case, id=name, marks=pytest.mark.xfail(strict=True, reason=EXPECTED_FAILURES[name]))


@pytest.mark.parametrize("case", [_param(case) for case in CASES])
def test_onnx_node_test(case: object) -> None:
    result = run_case(case)
    assert result.ok, result.reason


def test_every_expected_failure_is_a_case_that_runs() -> None:
    """A listed name that is no longer a supported case (renamed, or its op lost) is stale."""
    assert set(EXPECTED_FAILURES) <= {case.name for case in CASES}  # type: ignore[attr-defined]
