"""The persistent compile cache: compiled work kept on disk across processes.

Two levels, both keyed by the target (`rlx_mlir.target`) and a fingerprint of this package
(each of its modules' size and modification time, so an edited compiler
never reads what an older one wrote) and of llvmlite's version:

- `module/`: an IR text (or the key of a `compiler.Source`, which stands for
  a module not yet built: an ONNX model's bytes and input shapes) with its
  pipeline, entry, thread count and kernel choices
  (`rlx_mlir.tuning.Tuning.key`) -> what the compiler derived from it
  (signature, memory plan, constants, LLVM IR), so parsing, the passes and
  the lowering are skipped (`rlx_mlir/compiler.py`);
- `object/`: an LLVM IR text -> its optimized IR and machine code, which
  MCJIT loads through llvmlite's object-cache callbacks instead of running
  O3 and codegen again (`rlx_mlir/jit.py`).

A hit in a fresh process costs one stat walk of the package (`fingerprint`,
once per process), two entry reads and MCJIT loading the stored object into
an empty module (`rlx_mlir/jit.py`: no IR is parsed); `tests/test_disk_cache.py`
checks it is >= 20x cheaper than a miss.

`weights/` holds the resources' bytes of compiled modules (a model's
weights), keyed by their digests and shared by every module entry that
names them: a model compiled at eight input shapes stores its weights once.
Their payload starts 64-byte aligned in the file (the header is padded), so
an executable reads a mapped entry in place (`rlx_mlir/runtime.py`).
Three more kinds hold small things: `pool/` the thread pool's LLVM IR
(`rlx_mlir/thread_pool.py`), `wisdom/` the measured choices of
`rlx_mlir/autotune.py`, and `stamps/` what is known of a file as long as
it is not changed (`remember`, below).

Location: `$RLX_MLIR_CACHE_DIR`, else `$XDG_CACHE_HOME/rlx_mlir`, else
`~/.cache/rlx_mlir`. `RLX_MLIR_CACHE=0` turns the cache off.
`rlx_mlir.disk_cache.clear()` deletes the entries it wrote and nothing else.

Size: the cache holds at most `$RLX_MLIR_CACHE_MAX_SIZE` (bytes, or a number
with K, M or G; `DEFAULT_MAX_BYTES` by default), as ccache bounds its own.
Every edit of the compiler changes the fingerprint and so strands every entry
written before it, and each version of a stamped file leaves a stamp behind:
without a bound the folder only grows. A process's first write sums the
entries' sizes; when its writes take the total past the bound, the least
recently used entries are deleted until it is at most `PRUNED_TO_PERCENT` of
the bound (`prune`). Recently used is the later of an entry's access time and
its write time: reads are never stamped by hand (a touch would change a
weights entry's ctime, and so its identity and stamp), so on a `relatime`
mount (Linux's default) a read counts once a day, and on a `noatime` one the
oldest writes go first. Deleting an entry another process has mapped is
safe (its map stays valid); one it is about to read is a miss.

Trust: the cache verifies before it uses anything. Every entry carries a
header (format, kind, its full key, the payload's length and a blake2b
digest of all three with the payload); it is written atomically (temporary
file, rename) into folders created 0700, and read only as a regular
file (no symlink, FIFO or device) of bounded size owned by this user, from
folders no other user can write. Anything else (a flipped byte, a cut, an
entry copied from another key, a file planted by another user) is a miss:
the entry is deleted with one warning and compiled again, never run. The
digest has no secret: it guards against damage and mix-ups, not against
this user's own processes, which can rewrite the package itself. No level
holds a pickle: a module entry is JSON and the constants' bytes, an object
entry the optimized IR and the object file, so reading an entry never runs
code (`tests/test_disk_cache.py` corrupts every kind of entry).

Stamps: hashing a file costs ~1.5 ms per MB (a BERT-base's weights
entry, 435 MB: 0.7 s at every load; its .onnx file's SHA-256, 1 s at every
session), so what a hash of a file found is remembered in a `stamps/` entry
keyed by the file's identity: (device, inode, size, mtime_ns, ctime_ns), as
git's index remembers a file's blob. A large entry (`MAP_OVER`) whose stamp
says its digest was verified, and matches the header's, is not hashed again;
the session's model digest is reused likewise (`rlx_mlir/onnx.py`). Why
this keeps the rules above: entries are written without fsync (a BERT-base's
weights took 0.64 s of its 5.5 s cold compile to sync), so a crash may leave
one cut short, which its digest refuses; before a stamp vouches for an entry,
the entry is synced (`_durable`), so no stamp outlives the bytes it vouched
for. A mapped store (a compile's weights) over `MAP_OVER` is synced and
stamped by its writer (`WRITTEN`), from the digest of the bytes it
wrote, with the identity the rename into place left: the first warm process
does not hash it either (its one window, which only this user's processes
have: a write in place to the just-renamed file within the rename's
timestamp tick). Any write to a file, by any tool, changes its
ctime (which no user call can set back) and so its identity, and a
replaced file has another inode, so a damaged, swapped or planted file
never matches a stamp and is hashed (and refused) as before. The one gap
git also has, a write within the same timestamp tick as the hash, is
closed as git closes it: a stamp records when the hash started and is
trusted only for a file whose mtime and ctime are at least `RACY_NS`
older (a "racily clean" file is hashed again, and stamped again). What a
stamp does not catch is damage that bypasses the file system (the
medium's own bit rot, which no mtime shows), which the file system's
checksums are for; a stamp entry is itself verified like every entry.
"""

from __future__ import annotations

import contextlib
import hashlib
import mmap
import os
import re
import stat
import struct
import tempfile
import threading
import time
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TypeAlias

import llvmlite
from typing_extensions import Buffer


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


MAGIC = b"rlx-cache 2\n"
"""The first bytes of every entry: the format and its version."""

KINDS = ("module", "object", "pool", "wisdom", "weights", "stamps")
"""The subfolders entries live in; `clear()` touches nothing else."""

MAX_ENTRY_BYTES = 1 << 34
"""An entry larger than this (16 GiB) is not read: a hostile or damaged file
(a sparse terabyte) must not stall a compile."""

_HEADER = struct.Struct("<64s32sQ")
"""After MAGIC and the kind's name padded to 8 bytes: the entry's key (hex),
the blake2b digest of kind, key and payload, and the payload's length."""

_KIND_BYTES = 8

PAYLOAD_AT = 128
"""Where an entry's payload starts: after MAGIC, the kind and the header, padded
to a multiple of 64 bytes, so a mapped entry's payload is 64-byte aligned."""

_PADDING = PAYLOAD_AT - len(MAGIC) - _KIND_BYTES - _HEADER.size

_warned: set[str] = set()


Payload: TypeAlias = bytes | Sequence[Buffer]
"""What an entry holds: bytes, or pieces written one after the other (a
module's weights are written from where they are, never joined in memory)."""


def _pieces(payload: Payload) -> list[memoryview]:
    pieces = [payload] if isinstance(payload, bytes) else payload
    return [memoryview(p).cast("B") for p in pieces]


def _digest(kind: str, entry: str, pieces: Sequence[memoryview]) -> bytes:
    """blake2b of kind, key and payload, joined by NUL bytes."""
    digest = hashlib.blake2b(kind.encode() + b"\0" + entry.encode() + b"\0", digest_size=32)
    for piece in pieces:
        digest.update(piece)
    return digest.digest()


def _pack(kind: str, entry: str, payload: Payload) -> list[memoryview]:
    pieces = _pieces(payload)
    header = _HEADER.pack(entry.encode(), _digest(kind, entry, pieces), sum(p.nbytes for p in pieces))
    return [memoryview(MAGIC + kind.encode().ljust(_KIND_BYTES, b"\0") + header + bytes(_PADDING)), *pieces]


def _unpack(kind: str, entry: str, data: Buffer, verified: bytes | None = None) -> memoryview | None:
    """The payload of an entry read from disk (not copied), or None if any part of
    it is not what `_pack(kind, entry, ...)` wrote (a flipped byte, a cut, another
    entry). The payload is hashed unless `verified` is the header's digest (a
    stamp of this very file says a hash found it)."""
    view = memoryview(data).cast("B")
    if len(view) < PAYLOAD_AT or view[: len(MAGIC)] != MAGIC:
        return None
    if view[len(MAGIC) : len(MAGIC) + _KIND_BYTES] != kind.encode().ljust(_KIND_BYTES, b"\0"):
        return None
    stored_key, digest, length = _HEADER.unpack_from(view, len(MAGIC) + _KIND_BYTES)
    payload = view[PAYLOAD_AT:]
    if (
        stored_key != entry.encode()
        or length != len(payload)
        or view[PAYLOAD_AT - _PADDING : PAYLOAD_AT] != bytes(_PADDING)
    ):
        return None
    if digest != verified and digest != _digest(kind, entry, [payload]):
        return None
    return payload


def _header_digest(data: Buffer) -> bytes:
    """The digest an entry's header declares (what a stamp remembers as verified)."""
    view = memoryview(data).cast("B")
    return bytes(_HEADER.unpack_from(view, len(MAGIC) + _KIND_BYTES)[1]) if len(view) >= PAYLOAD_AT else b""


def _trusted_folder(folder: Path) -> bool:
    """A folder the cache reads from: ours and writable by nobody else (as ccache and pip require)."""
    try:
        info = os.lstat(folder)
    except OSError:
        return False
    owned = not hasattr(os, "getuid") or info.st_uid == os.getuid()
    return stat.S_ISDIR(info.st_mode) and owned and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _warn_once(what: str, why: str) -> None:
    _warn_once_about(what, f"rlx_mlir cache: {why}; {what} is ignored and compiled again")


def _warn_once_about(key: str, message: str) -> None:
    """One RuntimeWarning per `key` and process, attributed to the cache's caller."""
    if key not in _warned:
        _warned.add(key)
        warnings.warn(message, RuntimeWarning, stacklevel=4)


MAP_OVER = 1 << 20
"""Entries larger than this (1 MiB: a model's weight matrices) are memory-mapped,
not read (executables read the weights in place), and verified once per file
version (their stamps)."""


def _read_entry(path: Path) -> tuple[bytes | mmap.mmap, os.stat_result] | None:
    """The bytes of a regular file we own, of bounded size (a large one mapped
    read-only), and its status; None for anything else (missing, a symlink, a
    FIFO or device, another user's, too large)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        handle = os.open(path, flags)
    except OSError:
        return None
    try:
        info = os.fstat(handle)
        owned = not hasattr(os, "getuid") or info.st_uid == os.getuid()
        if not stat.S_ISREG(info.st_mode) or not owned or info.st_size > MAX_ENTRY_BYTES:
            _warn_once(str(path), "an entry is not a regular file of this user of bounded size")
            return None
        if info.st_size > MAP_OVER:
            return mmap.mmap(handle, 0, access=mmap.ACCESS_READ), info
        with os.fdopen(handle, "rb", closefd=False) as stream:
            return stream.read(info.st_size + 1), info
    except OSError:
        return None
    finally:
        os.close(handle)


def load(kind: str, entry: str) -> bytes | None:
    """The payload stored under (kind, entry), verified; None on a miss. An entry that
    fails verification is deleted (with one warning), so it is compiled and written again."""
    payload = load_view(kind, entry)
    return None if payload is None else bytes(payload)


def load_view(kind: str, entry: str) -> memoryview | None:
    """`load`'s payload not copied: a large entry stays a read-only map of its file."""
    where = directory()
    if where is None or not _trusted_folder(where) or not _trusted_folder(where / kind):
        return None
    path = where / kind / entry
    read = _read_entry(path)
    if read is None:
        return None
    data, info = read
    stamp = _verified(kind, entry)
    large = info.st_size > MAP_OVER
    verified = recall(stamp, info) if large else None
    started = time.time_ns()
    payload = _unpack(kind, entry, data, verified)
    if payload is not None and large and verified is None and _durable(path, info):
        remember(stamp, info, _header_digest(data), started)
    if payload is None:
        _warn_once(str(path), "an entry does not match its header (damaged or not written for this key)")
        with contextlib.suppress(OSError):
            path.unlink()
    return payload


def _verified(kind: str, entry: str) -> str:
    """What the stamp of a verified entry is about (its digest)."""
    return f"verified {kind}/{entry}"


def _durable(path: Path, info: os.stat_result) -> bool:
    """Whether the file of status `info` at `path` is synced to disk now (False if the
    path names another file by now, or the sync failed): what a stamp may vouch for."""
    try:
        handle = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return False
    try:
        if identity(os.fstat(handle)) != identity(info):
            return False
        os.fsync(handle)
        return True
    except OSError:
        return False
    finally:
        os.close(handle)


RACY_NS = 2_000_000_000
"""How much older than the start of its hash a file's mtime and ctime must be for
a stamp of it to be trusted: more than a timestamp tick of any file system
(1-4 ms on ext4, xfs, btrfs, tmpfs; 1 s on some network and older ones, 2 s on
FAT), so a write just after the hash started cannot share the hashed
version's timestamps."""


def identity(info: os.stat_result) -> str:
    """What changes whenever a file's bytes may have: its device, inode, size,
    mtime and ctime (to the nanosecond)."""
    return f"{info.st_dev}:{info.st_ino}:{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}"


def remember(what: str, info: os.stat_result, value: bytes, started: int) -> None:
    """Stamp `value` as what a hash of the file of status `info`, begun at
    `started` (`time.time_ns()`, or WRITTEN by its writer), found about `what`
    (see the docstring's Stamps)."""
    store("stamps", key("stamp", what, identity(info)), started.to_bytes(8, "little") + value)


WRITTEN = (1 << 64) - 1
"""The start time of a stamp its writer made (`store` of a mapped entry): from the
bytes it hashed in memory, then synced, then renamed into place (until the
rename, a temporary file no other process knew), so no later write can share
the timestamps of the version it stamped."""


def recall(what: str, info: os.stat_result) -> bytes | None:
    """What `remember` stamped about `what` for the very file of status `info`; None
    if nothing is, or if the file is racily clean (changed within `RACY_NS` of a
    hash that was not its writer's: a later write may share its timestamps)."""
    stamp = load("stamps", key("stamp", what, identity(info)))
    if stamp is None or len(stamp) < 8:
        return None
    started = int.from_bytes(stamp[:8], "little")
    if started != WRITTEN and max(info.st_mtime_ns, info.st_ctime_ns) > started - RACY_NS:
        return None
    return stamp[8:]


def exists(kind: str, entry: str) -> bool:
    """Whether an entry is stored (unverified: `load` checks it)."""
    where = directory()
    return where is not None and (where / kind / entry).is_file()


def store(kind: str, entry: str, data: Payload, mapped: bool = False) -> memoryview | None:
    """Write one entry atomically (temporary file, rename; not synced: see the
    docstring's Stamps) in folders only this user can write (best effort: a
    read-only or full disk only costs the cache).
    If `mapped`, the payload as written, in a read-only map of the new file
    (made before the rename, so it is the file this call wrote; 64-byte aligned:
    `PAYLOAD_AT`), which a compile reads its weights from instead of the bytes
    it was given; None if nothing was written."""
    where = directory()
    if where is None:
        return None
    try:
        folder = where / kind
        for level in (where, folder):
            level.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not _trusted_folder(where) or not _trusted_folder(folder):
            _warn_once(str(folder), "the cache folder is not this user's alone")
            return None
        view: memoryview | None = None
        written: os.stat_result | None = None
        pieces = _pack(kind, entry, data)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".tmp-", delete=False) as handle:
            for piece in pieces:
                handle.write(piece)
            handle.flush()
            size = os.fstat(handle.fileno()).st_size
            if mapped and size > PAYLOAD_AT:
                view = memoryview(mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ))[PAYLOAD_AT:]
            stamped = mapped and size > MAP_OVER  # by this writer, over bytes synced first
            if stamped:
                os.fsync(handle.fileno())
            os.replace(handle.name, folder / entry)
            if stamped:
                written = os.fstat(handle.fileno())  # the rename set its ctime: the identity to stamp
    except OSError:
        return None
    _account(where, folder / entry)
    if written is not None:
        remember(_verified(kind, entry), written, _header_digest(pieces[0]), WRITTEN)
    return view


_ENTRY_NAME = re.compile(r"[0-9a-f]{64}|\.tmp-\w+")


def clear() -> None:
    """Delete the entries this cache wrote (by name and header), and the kind
    folders they leave empty; nothing else in the configured folder."""
    where = directory()
    if where is None:
        return
    for kind in KINDS:
        folder = where / kind
        if not _trusted_folder(folder):
            continue
        for path in folder.iterdir():
            if _ENTRY_NAME.fullmatch(path.name) and path.is_file() and not path.is_symlink() and _written_here(path):
                with contextlib.suppress(OSError):
                    path.unlink()
        with contextlib.suppress(OSError):
            folder.rmdir()  # only if empty
    _usage.pop(where, None)
    with contextlib.suppress(OSError):
        where.rmdir()


def _written_here(path: Path) -> bool:
    if path.name.startswith(".tmp-"):
        return True
    try:
        with open(path, "rb") as stream:
            return stream.read(len(MAGIC)) == MAGIC
    except OSError:
        return False


DEFAULT_MAX_BYTES = 4 << 30
"""The bound on the cache's size unless `$RLX_MLIR_CACHE_MAX_SIZE` says otherwise:
room for a few models' weights (BERT-base's are 435 MB) and thousands of kernels."""

PRUNED_TO_PERCENT = 75
"""What `prune` leaves, as a share of the bound: slack so that the next writes do not
each walk the folder again."""

STALE_TEMPORARY_NS = 3600 * 1_000_000_000
"""A temporary file (`.tmp-*`) older than this is a writer's leftover (a killed
process), not a write in progress, and is pruned with the entries."""

_SIZE = re.compile(r"\s*(\d+)\s*([KMG]?)i?B?\s*", re.IGNORECASE)

_usage: dict[Path, int] = {}
"""Per cache folder, its bytes as of this process's last walk plus its writes since."""

_usage_lock = threading.Lock()
"""`_account`'s count is read and written by each writing thread."""


def max_bytes() -> int:
    """The bound on the cache's size: `$RLX_MLIR_CACHE_MAX_SIZE` (\"512M\", \"4G\",
    bytes), or `DEFAULT_MAX_BYTES` (with one warning) if it is not a size."""
    configured = os.environ.get("RLX_MLIR_CACHE_MAX_SIZE")
    if configured is None:
        return DEFAULT_MAX_BYTES
    match = _SIZE.fullmatch(configured)
    if match is None:
        what = f"RLX_MLIR_CACHE_MAX_SIZE={configured!r}"
        _warn_once_about(
            what,
            f"rlx_mlir cache: {what} is not a size (bytes, or a number with K, M or G); "
            f"the cache keeps its default bound of {DEFAULT_MAX_BYTES >> 30} GiB",
        )
        return DEFAULT_MAX_BYTES
    number, unit = match.groups()
    return int(number) << {"": 0, "K": 10, "M": 20, "G": 30}[unit.upper()]


def _account(where: Path, written: Path) -> None:
    """Count a write against the bound and prune past it (the folder is walked on a
    process's first write, then only when the count says the bound is passed)."""
    try:
        size = os.stat(written, follow_symlinks=False).st_size
    except OSError:
        return
    with _usage_lock:  # a compile writes its weights on a thread of their own
        used = _usage[where] + size if where in _usage else sum(entry.size for entry in _entries(where))
        _usage[where] = used
        if used > max_bytes():
            prune(keep=written)  # (which counts what it leaves)


@dataclass(frozen=True)
class _Entry:
    path: Path
    size: int
    used_ns: int
    """The later of its access and its write (see the docstring's Size)."""


def _entries(where: Path) -> list[_Entry]:
    """The entries of every kind folder we trust, by name (other files are not ours)
    and as regular files (a symlink is not followed: its target is not ours)."""
    found = []
    for kind in KINDS:
        folder = where / kind
        if not _trusted_folder(folder):
            continue
        with contextlib.suppress(OSError), os.scandir(folder) as scan:
            for item in scan:
                if not _ENTRY_NAME.fullmatch(item.name):
                    continue
                with contextlib.suppress(OSError):
                    info = item.stat(follow_symlinks=False)
                    if stat.S_ISREG(info.st_mode):
                        used = max(info.st_atime_ns, info.st_mtime_ns)
                        found.append(_Entry(Path(item.path), info.st_size, used))
    return found


def prune(limit: int | None = None, keep: Path | None = None) -> int:
    """Delete the least recently used entries until the cache holds at most
    `PRUNED_TO_PERCENT` of `limit` (default `max_bytes()`), if it holds more than
    `limit`; never `keep` (the entry just written), a temporary file being written,
    or a file without an entry's header. Returns the bytes left."""
    where = directory()
    if where is None:
        return 0
    limit = max_bytes() if limit is None else limit
    entries = _entries(where)
    used = sum(entry.size for entry in entries)
    if used <= limit:
        return used
    now = time.time_ns()
    for entry in sorted(entries, key=lambda entry: entry.used_ns):
        if used <= limit * PRUNED_TO_PERCENT // 100:
            break
        temporary = entry.path.name.startswith(".tmp-")
        if entry.path == keep or (temporary and now - entry.used_ns < STALE_TEMPORARY_NS):
            continue
        if _written_here(entry.path):
            with contextlib.suppress(OSError):
                entry.path.unlink()
                used -= entry.size
    _usage[where] = used
    return used
