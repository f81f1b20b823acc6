"""The persistent compile cache: compiled work kept on disk across processes.

Two levels, both keyed by the target (`rlx_mlir.target`) and a fingerprint of this package
(each of its modules' size and modification time, so an edited compiler
never reads what an older one wrote) and of llvmlite's version:

- `module/`: an IR text with its pipeline, entry, thread count and kernel
  choices (`rlx_mlir.tuning.Tuning.key`) -> what the compiler derived from it
  (signature, memory plan, constants, LLVM IR), so parsing, the passes and
  the lowering are skipped (`rlx_mlir/compiler.py`);
- `object/`: an LLVM IR text -> its optimized IR and machine code, which
  MCJIT loads through llvmlite's object-cache callbacks instead of running
  O3 and codegen again (`rlx_mlir/jit.py`).

A hit in a fresh process costs one stat walk of the package (`fingerprint`,
once per process), two entry reads and MCJIT loading the stored object into
an empty module (`rlx_mlir/jit.py`: no IR is parsed); `tests/test_disk_cache.py`
checks it is >= 20x cheaper than a miss.

Location: `$RLX_MLIR_CACHE_DIR`, else `$XDG_CACHE_HOME/rlx_mlir`, else
`~/.cache/rlx_mlir`. `RLX_MLIR_CACHE=0` turns the cache off. Clear it with
`rlx_mlir.disk_cache.clear()` (or by deleting the directory). Entries are
written atomically, so concurrent processes never read half an entry; an
unreadable entry is a miss.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from functools import cache
from pathlib import Path
from typing import Iterator

import llvmlite


def directory() -> Path | None:
    """Where the cache lives, or None when it is turned off."""
    if os.environ.get("RLX_MLIR_CACHE", "1") == "0":
        return None
    configured = os.environ.get("RLX_MLIR_CACHE_DIR")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "rlx_mlir"


@cache
def fingerprint() -> str:
    """This package's sources (path, size and modification time of each module:
    an edited compiler never reads what an older one wrote; dialects/, passes/
    and lowering/ are symlinked into the package and the walk follows them) and
    the LLVM that made the machine code. Computed once per process: a cache hit
    costs one directory walk of stat calls, no file reads."""
    return hashlib.sha256("\n".join([llvmlite.__version__, *_sources(Path(__file__).parent)]).encode()).hexdigest()


def _sources(folder: Path, prefix: str = "") -> Iterator[str]:
    """`relative/path.py:size:mtime_ns` for every module under `folder`, in name order."""
    with os.scandir(folder) as scan:
        entries = sorted(scan, key=lambda entry: entry.name)
    for entry in entries:
        if entry.name.endswith(".py"):
            stat = entry.stat()
            yield f"{prefix}{entry.name}:{stat.st_size}:{stat.st_mtime_ns}"
        elif entry.name != "__pycache__" and entry.is_dir():
            yield from _sources(Path(entry.path), f"{prefix}{entry.name}/")


def key(*parts: str) -> str:
    digest = hashlib.sha256(fingerprint().encode())
    for part in parts:
        digest.update(b"\0")
        digest.update(part.encode())
    return digest.hexdigest()


def load(kind: str, entry: str) -> bytes | None:
    where = directory()
    if where is None:
        return None
    try:
        return (where / kind / entry).read_bytes()
    except OSError:
        return None


def store(kind: str, entry: str, data: bytes) -> None:
    """Write one entry (best effort: a read-only or full disk only costs the cache)."""
    where = directory()
    if where is None:
        return
    try:
        folder = where / kind
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, delete=False) as handle:
            handle.write(data)
        os.replace(handle.name, folder / entry)
    except OSError:
        return


def clear() -> None:
    """Delete every entry."""
    where = directory()
    if where is not None:
        shutil.rmtree(where, ignore_errors=True)
