"""llvmlite: optimize an LLVM module at O3 for the host CPU and MCJIT it.

Compiled engines are shared by (IR text, target) while an executable holds
them: compiling a module that a live executable already runs costs one hash.
The cache holds engines weakly, plus the few most recently compiled, so a
process that compiles and drops executables for hours keeps a bounded
number of engines (each holds its machine code and LLVM's module).
"""

from __future__ import annotations

import collections
import hashlib
import threading
import weakref
from dataclasses import dataclass
from functools import cache

import llvmlite.binding as llvm
import llvmlite.ir as ir


@dataclass(frozen=True)
class Target:
    triple: str
    cpu: str
    features: str

    @property
    def key(self) -> str:
        return f"{self.triple}|{self.cpu}|{self.features}"


@cache
def host_target() -> Target:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    return Target(llvm.get_default_triple(), llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten())


def _new_target_machine() -> llvm.TargetMachine:
    t = host_target()
    target = llvm.Target.from_triple(t.triple)
    return target.create_target_machine(cpu=t.cpu, features=t.features, opt=3, codemodel="jitdefault")


@cache
def _target_machine() -> llvm.TargetMachine:
    """The shared machine for optimizing and printing assembly; never given to an
    engine, which takes ownership of its machine and disposes it with itself."""
    return _new_target_machine()


@dataclass
class CompiledModule:
    """A JIT-compiled module: keeps the engine alive and resolves function addresses.

    Each module is parsed into an LLVM context of its own, which dies with the
    engine: LLVM's global context would keep every type and constant of every
    module ever compiled."""

    engine: llvm.ExecutionEngine
    optimized_ir: str
    context: llvm.ContextRef

    def __del__(self) -> None:
        self.engine.close()  # before the context its module lives in

    def address(self, name: str) -> int:
        return self.engine.get_function_address(name)

    def assembly(self) -> str:
        return _target_machine().emit_assembly(llvm.parse_assembly(self.optimized_ir))


RECENT = 8
"""Engines kept alive after their last executable is dropped (a recompile of one is a hash)."""

_cache: weakref.WeakValueDictionary[str, CompiledModule] = weakref.WeakValueDictionary()
_recent: collections.deque[CompiledModule] = collections.deque(maxlen=RECENT)
_lock = threading.Lock()


def internalize(module: ir.Module, keep: set[str]) -> None:
    """Give every defined function but the entries internal linkage, so O3 can
    inline kernels into their thunks and drop the originals."""
    for fn in module.functions:
        if fn.blocks and fn.name not in keep:
            fn.linkage = "internal"


def compile_llvm(module: ir.Module, entries: set[str]) -> CompiledModule:
    internalize(module, entries)
    target = host_target()
    module.triple = target.triple
    text = str(module)
    key = hashlib.sha256(f"{target.key}\n{text}".encode()).hexdigest()
    with _lock:
        cached = _cache.get(key)
        if cached is not None:
            _recent.append(cached)
            return cached
        tm = _target_machine()
        context = llvm.create_context()
        parsed = llvm.parse_assembly(text, context=context)
        parsed.data_layout = str(tm.target_data)
        parsed.verify()
        options = llvm.create_pipeline_tuning_options(speed_level=3)
        options.loop_vectorization = True
        options.slp_vectorization = True
        builder = llvm.create_pass_builder(tm, options)
        builder.getModulePassManager().run(parsed, builder)
        engine = llvm.create_mcjit_compiler(parsed, _new_target_machine())
        engine.finalize_object()
        compiled = CompiledModule(engine, str(parsed), context)
        _cache[key] = compiled
        _recent.append(compiled)
        return compiled
