"""docs/adding-an-op.md, followed to the letter: `rlx.cube` added in a copy of the repository.

The test copies rlx_mlir/, tests/, docs/ and pyproject.toml into a temporary folder,
inserts the guide's own code blocks (read from the guide, so the two cannot
drift apart) at the places the guide names, runs the two generators, and
then runs the op's tests in the copy: pytest selecting the cube cases, the
lit line through rlx-opt, and the measurement command. It also checks that
the hand edits touched exactly the five files the guide promises (plus the
files the generators write, rlx_mlir/builder_ops.py and docs/dialect.md).

Files are found by the module that defines a symbol (the dialect's
`UnaryOp`, the lowering tables `FLOAT` and `DERIVATIVES`), not by a fixed
path, so the test survives files moving inside `rlx_mlir/lowering/`.
"""

from __future__ import annotations

import importlib
import inspect
import os
import pkgutil
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from types import ModuleType

import pytest

import rlx_mlir
import rlx_mlir.lowering
from rlx_mlir.dialects import elementwise as ew

REPO = Path(rlx_mlir.__file__).parent.parent
GUIDE = REPO / "docs" / "adding-an-op.md"
SECTION = "## A new unary op: `rlx.cube`"
BIN = Path(sys.executable).parent


def guide_blocks() -> list[tuple[str, str]]:
    """(language, code) of each fenced block of the cube section, in order, without the list indentation."""
    text = GUIDE.read_text()
    section = text[text.index(SECTION) :]
    section = section[: section.index("\n## ", 1)]
    blocks = []
    for match in re.finditer(r"^( *)```(\w+)[^\n]*\n(.*?)^\1```$", section, re.MULTILINE | re.DOTALL):
        indent, language, body = match.groups()
        lines = [line.removeprefix(indent) for line in body.splitlines()]
        blocks.append((language, "\n".join(lines)))
    return blocks


def _table_module(table: str) -> ModuleType:
    """The rlx_mlir.lowering module that defines the unary-op-keyed dict `table`."""
    for info in pkgutil.walk_packages(rlx_mlir.lowering.__path__, "rlx_mlir.lowering."):
        module = importlib.import_module(info.name)
        value = vars(module).get(table)
        if (
            isinstance(value, dict)
            and ew.GeluOp in value
            and inspect.getsourcefile(value[ew.GeluOp]) == module.__file__
        ):
            return module
    raise AssertionError(f"no module of rlx_mlir.lowering defines the table {table}")


def _relative(module_file: str | None) -> Path:
    assert module_file is not None
    return Path(module_file).relative_to(REPO)  # not resolved: rlx_mlir/dialects may be a symlink


def _insert_before(text: str, anchor: str, insertion: str, what: str) -> str:
    assert text.count(anchor) == 1, f"{what}: the anchor {anchor!r} must occur once"
    i = text.index(anchor)
    return text[:i] + insertion + text[i:]


def _append_row(text: str, table: str, row: str) -> str:
    """`row` as the last entry of the dict literal assigned to `table`, or of the
    tuple its comprehension walks (closed by a line `)` before the `}`)."""
    start = text.index(f"\n{table}: ")
    end = re.compile(r"\n(?: *\)\n)?\}").search(text, start)
    assert end is not None, f"the literal of {table} has no closing line"
    return text[: end.start()] + "\n" + row + text[end.start() :]


def _edit(path: Path, change: Callable[[str], str]) -> None:
    path.write_text(change(path.read_text()))


def _run(command: list[str], cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, f"{' '.join(command)} failed:\n{done.stdout[-6000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def _copy(target: Path) -> None:
    ignore = shutil.ignore_patterns("__pycache__", ".hypothesis", "Output", ".pytest_cache", "*.pyc")
    for name in ("rlx_mlir", "tests", "docs"):
        shutil.copytree(REPO / name, target / name, ignore=ignore)
    shutil.copy2(REPO / "pyproject.toml", target / "pyproject.toml")


def _snapshot(root: Path) -> dict[Path, str]:
    return {
        p.relative_to(root): p.read_text()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.suffix in (".py", ".mlir", ".md")
    }


@pytest.mark.slow
def test_the_guide_adds_cube(tmp_path: Path) -> None:
    blocks = guide_blocks()
    python = [code for language, code in blocks if language == "python"]
    mlir = [code for language, code in blocks if language == "mlir"]
    op_class, op_entry, formula, formula_row, grad, grad_row, record = python
    (lit_line,) = mlir

    copy = tmp_path / "repo"
    _copy(copy)
    before = _snapshot(copy)
    dialect = copy / _relative(inspect.getsourcefile(ew.UnaryOp))
    activations = copy / _relative(_table_module("FLOAT").__file__)
    grads = copy / _relative(_table_module("DERIVATIVES").__file__)

    # 1. the op class, and its entry in UNARY_OPS
    banner = "# ---------------------------------------------------------------------------\n# binary ops"
    _edit(dialect, lambda t: _insert_before(t, banner, op_class + "\n\n\n", "op class"))
    _edit(dialect, lambda t: _append_row(t, "UNARY_OPS", op_entry))
    # 2. the scalar formula, 3. the derivative: a function before the table, a row at its end
    for path, table, function, row in (
        (activations, "FLOAT", formula, formula_row),
        (grads, "DERIVATIVES", grad, grad_row),
    ):
        _edit(path, partial(_insert_before, anchor=f"\n{table}: ", insertion="\n" + function + "\n\n", what=table))
        _edit(path, partial(_append_row, table=table, row=row))
    # 4. one record
    _edit(copy / "tests" / "op_records.py", lambda t: _append_row(t, "RECORDS", record))
    # 5. one lit line
    _edit(
        copy / "tests" / "lit" / "elementwise" / "unary.mlir",
        lambda t: _insert_before(t, "  func.return\n", lit_line + "\n", "lit line"),
    )

    env = {**os.environ, "PYTHONPATH": str(copy), "RLX_MLIR_CACHE_DIR": str(tmp_path / "cache"), "RLX_MLIR_TUNE": "0"}
    _run([sys.executable, "-m", "rlx_mlir.builder_gen"], copy, env)
    _run([sys.executable, "-m", "rlx_mlir.cli.gen_dialect_docs"], copy, env)

    changed = {path for path, text in _snapshot(copy).items() if before.get(path) != text}
    hand_edits = changed - {Path("rlx_mlir/builder_ops.py"), Path("docs/dialect.md")}
    assert hand_edits == {
        dialect.relative_to(copy),
        activations.relative_to(copy),
        grads.relative_to(copy),
        Path("tests/op_records.py"),
        Path("tests/lit/elementwise/unary.mlir"),
    }, sorted(changed)
    assert Path("rlx_mlir/builder_ops.py") in changed, "the generator gave the Builder no cube method"
    assert Path("docs/dialect.md") in changed, "the dialect reference has no rlx.cube section"

    tests = [
        "tests/test_unary.py",
        "tests/test_backward.py",
        "tests/test_autodiff.py",
        "tests/test_dtypes.py",
        "tests/test_builder_ops.py",
        "tests/test_dialect_docs.py",
    ]
    out = _run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-v",
            "-p",
            "no:cacheprovider",
            *tests,
            "-k",
            "cube or every_unary_op_has_a_record or generated_methods_are_current or dialect",
        ],
        copy,
        env,
    )
    cube_cases = re.findall(r"^tests/test_\w+\.py::\S*cube\S* PASSED", out, re.MULTILINE)
    assert len(cube_cases) >= 12, out[-4000:]  # forward, specials, derivative, adjoint, f16/bf16, Builder method

    _run([str(BIN / "lit"), "-q", "tests/lit/elementwise/unary.mlir"], copy, env)
    measured = _run([sys.executable, "tests/measure.py", "rlx.cube"], copy, env)
    print(measured)  # with -s: the figures the record's bounds come from
    assert "rlx.cube:" in measured and "f64 derivative max" in measured, measured
