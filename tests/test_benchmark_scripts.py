"""Every benchmark script imports: the suite never runs them (they are measurements), so a
helper renamed under them would otherwise go unnoticed until someone runs one
(benchmarks/attention.py imported a timing helper that had moved for a day)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def test_every_benchmark_script_imports() -> None:
    scripts = sorted(str(p) for p in BENCHMARKS.glob("*.py"))
    assert any(s.endswith("attention.py") for s in scripts)
    code = (  # each as its own file, as `python benchmarks/X.py` loads it, but not as __main__
        f"import runpy, sys\nsys.path.insert(0, {str(BENCHMARKS)!r})\n"
        f"for script in {scripts!r}:\n    runpy.run_path(script, run_name='imported')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, cwd=BENCHMARKS)
    assert result.returncode == 0, result.stderr[-2000:]
