"""llvmlite: optimize an LLVM module at O3 for the host CPU and MCJIT it.

Compiled engines are cached by (IR text, target): compiling the same module
twice costs one hash.
"""

from __future__ import annotations

import hashlib
import threading
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


@cache
def _target_machine() -> llvm.TargetMachine:
    t = host_target()
    target = llvm.Target.from_triple(t.triple)
    return target.create_target_machine(cpu=t.cpu, features=t.features, opt=3, codemodel="jitdefault")


@dataclass
class CompiledModule:
    """A JIT-compiled module: keeps the engine alive and resolves function addresses."""

    engine: llvm.ExecutionEngine
    optimized_ir: str

    def address(self, name: str) -> int:
        return self.engine.get_function_address(name)

    def assembly(self) -> str:
        return _target_machine().emit_assembly(llvm.parse_assembly(self.optimized_ir))


_cache: dict[str, CompiledModule] = {}
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
            return cached
        tm = _target_machine()
        parsed = llvm.parse_assembly(text)
        parsed.data_layout = str(tm.target_data)
        parsed.verify()
        options = llvm.create_pipeline_tuning_options(speed_level=3)
        options.loop_vectorization = True
        options.slp_vectorization = True
        builder = llvm.create_pass_builder(tm, options)
        builder.getModulePassManager().run(parsed, builder)
        engine = llvm.create_mcjit_compiler(parsed, tm)
        engine.finalize_object()
        compiled = CompiledModule(engine, str(parsed))
        _cache[key] = compiled
        return compiled
