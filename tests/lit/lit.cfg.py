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
config.excludes = ["lit.cfg.py", "Output", "Inputs"]
config.test_source_root = os.path.dirname(__file__)

# The venv's bin directory first, so `rlx-opt` and `filecheck` resolve to the
# installed tools rather than anything else on the user's PATH.
tools_dir = os.path.dirname(sys.executable)
config.environment["PATH"] = os.pathsep.join([tools_dir, config.environment.get("PATH", os.environ.get("PATH", ""))])

# A PYTHONPATH given to lit reaches the tools, so a checkout that is not the
# installed one (a worktree: `PYTHONPATH=$PWD lit tests/lit`) tests its own code.
if "PYTHONPATH" in os.environ:
    config.environment["PYTHONPATH"] = os.environ["PYTHONPATH"]

# The lowering's IR depends on the target (vector widths, register tiles,
# cache-sized blocks): the suite checks the IR of x86-64-v4 (AVX-512) code on
# every host, so it gives the same text on an AVX2 host (nothing here runs it).
config.environment["RLX_MLIR_TARGET"] = os.environ.get("RLX_MLIR_LIT_TARGET", "x86-64-v4")
