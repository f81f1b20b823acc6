"""lit configuration for the rlx FileCheck suite.

Run from the repository root with `lit tests/lit -v`. The tools (`rlx-opt`,
`filecheck`) are taken from the environment of the Python running lit, so the
suite tests the package installed in that venv (`pip install -e '.[test]'`).
"""

import os
import sys

import lit.formats

config.name = "rlx"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.excludes = ["lit.cfg.py", "Output"]
config.test_source_root = os.path.dirname(__file__)

# The venv's bin directory first, so `rlx-opt` and `filecheck` resolve to the
# installed tools rather than anything else on the user's PATH.
tools_dir = os.path.dirname(sys.executable)
config.environment["PATH"] = os.pathsep.join([tools_dir, config.environment.get("PATH", os.environ.get("PATH", ""))])

# A PYTHONPATH given to lit reaches the tools, so `PYTHONPATH=<checkout> lit ...`
# tests that checkout rather than the one the venv's editable install points at.
if "PYTHONPATH" in os.environ:
    config.environment["PYTHONPATH"] = os.environ["PYTHONPATH"]
