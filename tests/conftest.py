"""Shared pytest configuration for the rlx test suite.

Helper modules: `tests/` has no `__init__.py`, so pytest's default import mode
("prepend") puts this directory at the front of `sys.path` when it imports this
conftest.py, before any test module is collected. The test modules
therefore import the shared helpers as plain top-level modules
(`from reference import ulp_error`, `from movement_reference import TYPES`),
from the repository root (`python -m pytest -q`) as well as from a single
file, without touching `sys.path` themselves.
"""
