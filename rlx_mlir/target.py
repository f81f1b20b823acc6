"""The machine code is compiled for: ISA level, vector registers, caches, cores.

A `Target` is chosen by name, by `compile(..., target=)`, `rlx-opt -p
'lower-to-llvm{target=...}'` or `$RLX_MLIR_TARGET`:

- `native` (the default): the host's LLVM CPU name and feature string;
- `x86-64-v3` (AVX2 + FMA, 16 ymm registers) or `x86-64-v4` (AVX-512 F/BW/CD/
  DQ/VL, 32 zmm registers): the psABI levels, so an AVX2 build can be made,
  inspected and run on an AVX-512 host;
- any LLVM x86 CPU name (`znver3`, `skylake-avx512`, ...): LLVM is asked, in a
  child process (an unknown name aborts LLVM), what that CPU's vectors are.

Whatever the name, an AVX-512 target is compiled for 512-bit vectors
(`LEVEL_TUNING`). LLVM's tuning of the generic v4 level and of every Intel
AVX-512 CPU (Skylake-X to Xeon 6) prefers 256 bits, for Skylake-X's clocks,
and then splits even explicit 512-bit IR into ymm pairs: the kernels, written
for 32 zmm registers, lost 1.1-1.4x on a Xeon 6 (softmax 1.38x, GELU 1.22x;
memory-bound kernels and the GEMM tiles unchanged).

The kernels read the target only through `rlx_mlir.tuning.Tuning`, whose
defaults are derived from it. Caches and cores are the host's whichever ISA
is targeted (the code runs here); where the system does not say, the
defaults below apply. Code for a level the host lacks compiles (its assembly
can be inspected) but calling it is refused (`Target.missing_on_host`).
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import llvmlite.binding as llvm

from rlx_mlir.errors import CompileError

ENVIRONMENT = "RLX_MLIR_TARGET"
"""The variable that names the target when `compile` is given none."""

DEFAULT_L1_BYTES = 32 << 10
DEFAULT_L2_BYTES = 1 << 20
DEFAULT_LLC_BYTES = 32 << 20
"""Cache sizes where sysfs does not give them: those of the Zen 3-5 and recent
Xeon cores this was measured on (L1 data per core, L2 per core, L3 shared)."""

LLC_BYTES_PER_CORE_LIMIT = 8 << 20
"""The most last-level cache one core can count on: twice the per-core slice of
the largest current parts (4 MiB on Zen 4 and Xeon 6). sysfs reports the whole
shared cache, which a VM's few vCPUs share with every other tenant of the
socket: a 2-vCPU Xeon 6 guest sees 480 MiB of L3, yet streaming stores win
there from ~32 MiB of traffic (`Target.llc_share`)."""

LEVEL_FEATURES = {
    "x86-64": frozenset({"sse2"}),
    "x86-64-v2": frozenset({"sse2", "sse4.2", "popcnt", "ssse3"}),
    "x86-64-v3": frozenset({"sse2", "sse4.2", "popcnt", "ssse3", "avx", "avx2", "fma", "bmi", "bmi2", "f16c"}),
    "x86-64-v4": frozenset(
        {
            "sse2",
            "sse4.2",
            "popcnt",
            "ssse3",
            "avx",
            "avx2",
            "fma",
            "bmi",
            "bmi2",
            "f16c",
            "avx512f",
            "avx512bw",
            "avx512cd",
            "avx512dq",
            "avx512vl",
        }
    ),
}
"""The features each x86-64 psABI level guarantees (the ones the kernels can use)."""

LEVEL_TUNING = {"x86-64-v4": "-prefer-256-bit"}
"""LLVM features (tuning flags) every target of a level is compiled with besides its CPU's."""

LEVEL_VECTORS = {"x86-64": (16, 16), "x86-64-v2": (16, 16), "x86-64-v3": (32, 16), "x86-64-v4": (64, 32)}
"""(widest vector register in bytes, vector registers) of each level."""


@dataclass(frozen=True)
class Target:
    name: str
    """As asked: `native`, a level, or a CPU name."""
    triple: str
    cpu: str
    """The LLVM CPU name code is generated for."""
    features: str
    """The LLVM feature string: the host's for `native`, else none (the CPU's own), then its level's `LEVEL_TUNING`."""
    level: str
    """The highest x86-64 psABI level the target has (a key of LEVEL_FEATURES)."""
    fma_units: int
    cores: int
    l1_bytes: int
    l2_bytes: int
    llc_bytes: int

    @property
    def vector_bytes(self) -> int:
        """The widest vector register: 16 (SSE), 32 (AVX2) or 64 (AVX-512)."""
        return LEVEL_VECTORS[self.level][0]

    @property
    def llc_share(self) -> int:
        """The last-level cache this process's cores can expect to hold its data:
        the cache, at most LLC_BYTES_PER_CORE_LIMIT per core."""
        return min(self.llc_bytes, self.cores * LLC_BYTES_PER_CORE_LIMIT)

    @property
    def vector_registers(self) -> int:
        return LEVEL_VECTORS[self.level][1]

    @property
    def key(self) -> str:
        """What decides the machine code: part of every cache key."""
        return "|".join(
            map(
                str,
                (
                    self.triple,
                    self.cpu,
                    self.features,
                    self.level,
                    self.cores,
                    self.l1_bytes,
                    self.l2_bytes,
                    self.llc_bytes,
                ),
            )
        )

    def missing_on_host(self) -> frozenset[str]:
        """The features of the target's level that the host lacks (none: the code runs here)."""
        return LEVEL_FEATURES[self.level] - host_features()

    def machine(self) -> llvm.TargetMachine:
        """A new LLVM target machine for this target (an engine takes ownership of its own)."""
        initialize()
        return llvm.Target.from_triple(self.triple).create_target_machine(
            cpu=self.cpu, features=self.features, opt=3, codemodel="jitdefault"
        )

    def describe(self) -> str:
        """One line naming the target, for benchmark rows and `exe.target`."""
        cpu = self.cpu if self.name == "native" else f"{self.cpu} code on a {llvm.get_host_cpu_name()} host"
        level = "" if self.level == self.cpu else f", {self.level}"
        caches = ", ".join(
            f"{k} {_size(v)}" for k, v in (("L1", self.l1_bytes), ("L2", self.l2_bytes), ("LLC", self.llc_bytes))
        )
        return (
            f"{self.name} ({cpu}{level}: {self.vector_bytes * 8}-bit vectors x {self.vector_registers}, "
            f"{self.cores} cores, {caches})"
        )

    def __str__(self) -> str:
        return self.describe()


class TargetError(CompileError, ValueError):
    """A target name LLVM does not know, or code for a target the host cannot run."""


@cache
def initialize() -> None:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity mask; all of them off Linux)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


@cache
def host_features() -> frozenset[str]:
    initialize()
    return frozenset(name for name, on in llvm.get_host_cpu_features().items() if on)


def target(name: str | None = None) -> Target:
    """The target called `name` (None: `$RLX_MLIR_TARGET`, else `native`)."""
    if name is None:
        name = os.environ.get(ENVIRONMENT) or "native"
    if not isinstance(name, str) or not name:
        raise TargetError(f"a target is a name (native, x86-64-v3, x86-64-v4 or an LLVM CPU), got {name!r}")
    return _resolve(name, available_cpus())


@cache
def _resolve(name: str, cores: int) -> Target:
    initialize()
    l1, l2, llc = cache_sizes()
    triple = llvm.get_default_triple()
    if name == "native":
        cpu, features = llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten()
        level = _level_of(host_features())
    elif name in LEVEL_FEATURES:
        cpu, features, level = name, "", name
    else:
        cpu, features, level = name, "", _probe_level(name, triple)
    features = ",".join(f for f in (features, LEVEL_TUNING.get(level, "")) if f)
    return Target(name, triple, cpu, features, level, 2, cores, l1, l2, llc)


def _level_of(features: frozenset[str]) -> str:
    """The highest level whose features `features` all has (plain x86-64 below SSE2's)."""
    held = [level for level, needed in LEVEL_FEATURES.items() if needed <= features]
    return held[-1] if held else "x86-64"


_PROBE = """
import sys, llvmlite.binding as llvm
llvm.initialize_native_target(); llvm.initialize_native_asmprinter()
triple, cpu = sys.argv[1:]
tm = llvm.Target.from_triple(triple).create_target_machine(cpu=cpu, features="", opt=2)
m = llvm.parse_assembly('''
define <16 x float> @f(<16 x float> %a, <16 x float> %b, <16 x float> %c) {
  %r = call <16 x float> @llvm.fma.v16f32(<16 x float> %a, <16 x float> %b, <16 x float> %c)
  ret <16 x float> %r
}
declare <16 x float> @llvm.fma.v16f32(<16 x float>, <16 x float>, <16 x float>)
''')
m.triple = triple
print(tm.emit_assembly(m))
"""


@cache
def _probe_level(cpu: str, triple: str) -> str:
    """The level of an LLVM CPU name, from the code LLVM emits for a 16-lane FMA
    (zmm: AVX-512; ymm and vfmadd: AVX2 + FMA). In a child process: LLVM warns
    about an unknown CPU and then aborts, which must not take this process down."""
    try:
        run = subprocess.run(
            [sys.executable, "-c", _PROBE, triple, cpu], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise TargetError(f"cannot ask LLVM about CPU '{cpu}': {error}") from None
    if "not a recognized processor" in run.stderr or run.returncode != 0:
        raise TargetError(f"unknown target '{cpu}': not native, x86-64-v3, x86-64-v4 or an LLVM x86 CPU name")
    assembly = run.stdout
    if "zmm" in assembly:
        return "x86-64-v4"
    if "ymm" in assembly and "vfmadd" in assembly:
        return "x86-64-v3"
    return "x86-64-v2" if "xmm" in assembly else "x86-64"


def cache_sizes(root: Path = Path("/sys/devices/system/cpu/cpu0/cache")) -> tuple[int, int, int]:
    """(L1 data, L2, last level) bytes of CPU 0 from sysfs, each defaulted where unreadable."""
    found: dict[int, int] = {}
    for index in sorted(root.glob("index*")):
        try:
            kind = (index / "type").read_text().strip()
            level = int((index / "level").read_text())
            size = _bytes((index / "size").read_text().strip())
        except (OSError, ValueError):
            continue
        if kind != "Instruction" and size:
            found[level] = max(found.get(level, 0), size)
    l1 = found.get(1, DEFAULT_L1_BYTES)
    l2 = found.get(2, DEFAULT_L2_BYTES)
    llc = found[max(found)] if found else DEFAULT_LLC_BYTES
    return l1, l2, llc


def _size(nbytes: int) -> str:
    return f"{nbytes >> 20} MiB" if nbytes >= 1 << 20 and nbytes % (1 << 20) == 0 else f"{nbytes >> 10} KiB"


def _bytes(text: str) -> int:
    """sysfs's `48K`, `1024K`, `32M` (or a plain byte count) in bytes."""
    scale = {"K": 10, "M": 20, "G": 30}.get(text[-1:], 0)
    return int(text[:-1] if scale else text) << scale
