"""llvmlite: optimize an LLVM module at O3 for a target CPU and MCJIT it.

Compiled engines are shared by (IR text, target) while an executable holds
them (and kept across processes by `rlx_mlir.disk_cache`): compiling a
module that a live executable already runs costs one hash.
The cache holds engines weakly, plus the few most recently compiled, so a
process that compiles and drops executables for hours keeps a bounded
number of engines (each holds its machine code and LLVM's module).
"""

from __future__ import annotations

import collections
import hashlib
import struct
import threading
import weakref
from dataclasses import dataclass
from functools import cache

import llvmlite.binding as llvm
import llvmlite.ir as ir

from rlx_mlir import disk_cache
from rlx_mlir.target import Target
from rlx_mlir.target import target as resolve_target


@cache
def _target_machine(target: Target) -> llvm.TargetMachine:
    """The shared machine of `target` for optimizing and printing assembly; never
    given to an engine, which takes ownership of its machine and disposes it with itself."""
    return target.machine()


@dataclass
class CompiledModule:
    """A JIT-compiled module: keeps the engine alive and resolves function addresses.

    Each module is parsed into an LLVM context of its own, which dies with the
    engine: LLVM's global context would keep every type and constant of every
    module ever compiled."""

    engine: llvm.ExecutionEngine
    optimized_ir: str
    context: llvm.ContextRef
    target: Target
    from_disk: bool = False
    """Whether the machine code came from the disk cache (O3 and codegen skipped)."""

    def __post_init__(self) -> None:
        # Not __del__: in a reference cycle the collector finalizes the
        # module, its engine and its context in any order, and a context
        # disposed first takes the engine's module with it. The finalizer
        # holds the two, so they outlive the module and go in this order.
        # Not at exit: llvmlite skips disposing anything while Python shuts down.
        weakref.finalize(self, _dispose, self.engine, self.context).atexit = False

    def address(self, name: str) -> int:
        return self.engine.get_function_address(name)

    def assembly(self) -> str:
        return _target_machine(self.target).emit_assembly(llvm.parse_assembly(self.optimized_ir))


RECENT = 8
"""Engines kept alive after their last executable is dropped (a recompile of one is a hash)."""

_cache: weakref.WeakValueDictionary[str, CompiledModule] = weakref.WeakValueDictionary()
_recent: collections.deque[CompiledModule] = collections.deque(maxlen=RECENT)
_lock = threading.Lock()


def _dispose(engine: llvm.ExecutionEngine, context: llvm.ContextRef) -> None:
    engine.close()  # before the context its module lives in
    context.close()


def compile_llvm(module: ir.Module, target: Target | None = None) -> CompiledModule:
    """JIT a module built with llvmlite's IR builder (the profiler's counter reader)."""
    target = target or resolve_target()
    module.triple = target.triple
    return compile_text(str(module), target)


def compile_text(text: str, target: Target) -> CompiledModule:
    """JIT LLVM IR `text` for `target`: shared with a live executable
    of the same IR and target, else from the disk cache's optimized IR and
    machine code, else O3 and codegen (whose results go to the disk cache)."""
    key = hashlib.sha256(f"{target.key}\n{text}".encode()).hexdigest()
    with _lock:
        cached = _cache.get(key)
        if cached is None:
            cached = _compile(text, target, disk_cache.key("object", target.key, text))
            _cache[key] = cached
        _recent.append(cached)
        return cached


def _compile(text: str, target: Target, disk_key: str) -> CompiledModule:
    stored = _load_object(disk_key)
    context = llvm.create_context()
    tm = _target_machine(target)
    # On a hit MCJIT loads the stored object instead of generating code, so it
    # needs no IR: an empty module skips parsing the optimized text.
    parsed = llvm.parse_assembly("" if stored else text, context=context)
    try:
        parsed.triple = target.triple
        parsed.data_layout = str(tm.target_data)
        if stored is None:
            _optimize(parsed, tm)
        optimized = stored[0] if stored else str(parsed)
    except BaseException:
        # Left to the collector, the context may go first and take the
        # module's memory with it: disposing the module then crashes.
        parsed.close()
        raise
    engine = llvm.create_mcjit_compiler(parsed, target.machine())  # owns the module, even if it fails
    compiled = CompiledModule(engine, optimized, context, target, from_disk=stored is not None)
    objects: list[bytes] = []
    engine.set_object_cache(
        notify_func=lambda _module, data: objects.append(data),
        getbuffer_func=lambda _module: stored[1] if stored else None,
    )
    engine.finalize_object()
    if stored is None and objects:
        disk_cache.store("object", disk_key, _encode_object(optimized, objects[0]))
    return compiled


def _optimize(module: llvm.ModuleRef, tm: llvm.TargetMachine) -> None:
    """Verify `module`, then run LLVM's O3 pipeline with both vectorizers on it."""
    module.verify()
    options = llvm.create_pipeline_tuning_options(speed_level=3)
    options.loop_vectorization = True
    options.slp_vectorization = True
    builder = llvm.create_pass_builder(tm, options)
    builder.getModulePassManager().run(module, builder)


_LENGTH = struct.Struct("<Q")


def _encode_object(optimized: str, machine_code: bytes) -> bytes:
    """An object entry's payload: the optimized IR's length, the IR, the object file."""
    text = optimized.encode()
    return _LENGTH.pack(len(text)) + text + machine_code


def _load_object(disk_key: str) -> tuple[str, bytes] | None:
    """(optimized IR, object file) from the disk cache, or None."""
    data = disk_cache.load("object", disk_key)
    if data is None or len(data) < _LENGTH.size:
        return None
    (length,) = _LENGTH.unpack_from(data)
    text = data[_LENGTH.size : _LENGTH.size + length]
    if len(text) != length:
        return None
    try:
        return text.decode(), data[_LENGTH.size + length :]
    except UnicodeDecodeError:
        return None
