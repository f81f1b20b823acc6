"""The docs point at code that exists: every `path`, `path:name` and `path:Class.member`
in inline code of README.md and docs/*.md resolves to a file and a symbol defined in it,
and the layer table of docs/architecture.md names every layer of the import-linter
contract in pyproject.toml.

A path is taken from the repository root, or from the document's folder; a bare file name
(`loops.py:emit_nest`, written after the full path was given) must name one file of the
repository, or one among those of that name that defines the symbol.
"""

from __future__ import annotations

import ast
import os
import re
import tomllib
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SKIPPED_DIRS = {".git", ".venv", "__pycache__", "build", "dist"}

INLINE_CODE = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
REFERENCE = re.compile(
    r"""^(?P<path>[\w.-]*(?:/[\w.-]+)*(?:\.(?:py|mlir|md|toml|cfg)|/))   # a file or a folder
        (?::(?P<name>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*))?                   # a symbol in it
        (?:\[[^\]]*\])?$                                                  # an index into it""",
    re.VERBOSE,
)

KNOWN_STALE: dict[str, set[str]] = {}
"""References a document may keep while they are stale, by document (none now)."""


def references(text: str) -> list[str]:
    """The inline code spans of a Markdown text that look like file references."""
    prose = FENCE.sub("", text)
    spans = (m.group(1).strip() for m in INLINE_CODE.finditer(prose))
    return [s for s in spans if REFERENCE.match(s) and ("/" in s or ".py" in s) and "://" not in s]


@cache
def files_named(name: str) -> tuple[Path, ...]:
    """Every file of the repository called `name` (symlinked folders, such as
    rlx_mlir/lowering -> lowering, are not walked a second time)."""
    found = []
    for folder, subfolders, files in os.walk(ROOT):
        subfolders[:] = [d for d in subfolders if d not in SKIPPED_DIRS]
        if name in files:
            found.append(Path(folder) / name)
    return tuple(found)


@cache
def defined(path: Path) -> dict[str, set[str]]:
    """Top-level names of a Python file, each with the names its class body defines."""
    names: dict[str, set[str]] = {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names[node.name] = set()
        elif isinstance(node, ast.ClassDef):
            names[node.name] = {n for item in node.body for n in _bound(item)}
        else:
            names.update({n: set() for n in _bound(node)})
    return names


def _bound(node: ast.stmt) -> list[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    return []


def has_symbol(path: Path, name: str) -> bool:
    first, *rest = name.split(".")
    names = defined(path)
    return first in names and (not rest or rest[0] in names[first])


def resolves(reference: str, document: Path) -> bool:
    match = REFERENCE.match(reference)
    assert match is not None
    path, name = match.group("path"), match.group("name")
    if "/" in path.rstrip("/"):
        candidates = [c for c in (ROOT / path, document.parent / path) if c.exists()]
    elif path.endswith("/"):
        candidates = [c for c in (ROOT / path, document.parent / path) if c.is_dir()]
    else:
        candidates = [c for c in (document.parent / path,) if c.exists()] or list(files_named(path))
    if name is None:
        return len(candidates) >= 1 if "/" in path else len(candidates) == 1
    return sum(c.suffix == ".py" and c.is_file() and has_symbol(c, name) for c in candidates) == 1


@pytest.mark.parametrize("document", DOCS, ids=[d.relative_to(ROOT).as_posix() for d in DOCS])
def test_every_code_reference_in_the_docs_resolves(document: Path) -> None:
    found = references(document.read_text())
    stale = sorted({r for r in found if not resolves(r, document)})
    known = KNOWN_STALE.get(document.relative_to(ROOT).as_posix(), set())
    unknown = [r for r in stale if r not in known]
    assert not unknown, f"stale references in {document.name}: {unknown}"
    fixed = sorted(known - set(stale))
    assert not fixed, f"no longer stale in {document.name}, drop them from KNOWN_STALE: {fixed}"


def test_references_are_found_and_a_stale_one_is_reported() -> None:
    text = "see `lowering/program.py:_EntryBuilder.launch` and `loops.py:emit_nest`, not `lowering/nope.py:x`"
    found = references(text)
    assert found == ["lowering/program.py:_EntryBuilder.launch", "loops.py:emit_nest", "lowering/nope.py:x"]
    document = ROOT / "docs" / "architecture.md"
    assert [resolves(r, document) for r in found] == [True, True, False]
    assert not resolves("lowering/program.py:_EntryBuilder.no_such_method", document)
    assert not resolves("contraction.py", document)  # two files of that name: which one?


def test_the_layer_table_names_every_layer_of_the_contract() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    contract = next(c for c in config["tool"]["importlinter"]["contracts"] if c["name"] == "Layers only point down")
    text = (ROOT / "docs" / "architecture.md").read_text()
    table = FENCE.search(text[text.index("## Layers") :])
    assert table is not None
    rows = table.group(0)
    missing = []
    for layer in contract["layers"]:
        for module in (m.strip() for m in layer.split("|")):
            relative = module.removeprefix("rlx_mlir.").replace(".", "/")
            stem = relative.rsplit("/", 1)[-1]
            if not any(form in rows for form in (f"{relative}.py", f"{relative}/", f"{stem},", f"{stem}}}")):
                missing.append(module)
    assert not missing, f"docs/architecture.md's layer table omits these layers of pyproject.toml: {missing}"
