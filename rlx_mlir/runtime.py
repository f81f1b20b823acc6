"""Executables: a JIT-compiled function plus the arena it runs over.

Calling one binds the NumPy inputs and outputs by pointer (zero-copy), so the
only memory an executable owns is its arena of intermediates, allocated once,
64-byte aligned. Constants are not in it: the entry reads them through a table
of pointers (`rlx_mlir/memory_plan.py`), each at its bytes where they already
are (a read-only map of a model file or of a disk-cache entry), copied only
when less aligned than the kernels need (`constant_buffer`), and shared by
every executable of the process compiled from the same weights.
"""

from __future__ import annotations

import ctypes
import mmap
import sys
import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from rlx_mlir import dtypes, profiler
from rlx_mlir.dtypes import Kind
from rlx_mlir.errors import AllocationError, ArgumentError
from rlx_mlir.jit import CompiledModule
from rlx_mlir.lowering.core.kernel import STATUS_FIELDS
from rlx_mlir.memory_plan import ALIGNMENT, MemoryPlan, constant_alignment
from rlx_mlir.profiler import Profile, TimedOp
from rlx_mlir.target import TargetError
from rlx_mlir.tuning import Tuning

_ENTRY = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)


@dataclass(frozen=True)
class TensorSpec:
    shape: tuple[int, ...]
    dtype: dtypes.DType

    def __str__(self) -> str:
        return f"{self.dtype.numpy.name}{list(self.shape)}"


@dataclass(frozen=True)
class IndexCheck:
    """An op whose kernel checks indices (its position + 1 is its status code)."""

    op: str


@dataclass(frozen=True)
class ConstantData:
    slot: int
    """Its place in the table of constant pointers (`rlx.constant_slot`)."""
    data: np.ndarray
    digest: str | None = None
    """A resource's (its blob's digest and dtype): the disk cache keeps its bytes
    in an entry every compile of the same weights shares, and the executables of
    a process share one buffer of them (`constant_buffer`)."""


_SHARED: weakref.WeakValueDictionary[str, np.ndarray] = weakref.WeakValueDictionary()
"""The buffer of each resource constant (by digest) that a live executable reads:
a model compiled at a second input shape, or profiled, reads the first one's."""

_SHARED_LOCK = threading.Lock()


def shared_constant(digest: str) -> np.ndarray | None:
    """The buffer a live executable reads for the constant of `digest`, if any
    (the compiler then need not even load it from the disk cache)."""
    with _SHARED_LOCK:
        return _SHARED.get(digest)


def constant_buffer(constant: ConstantData) -> np.ndarray:
    """The read-only bytes the kernels read for `constant`: a live executable's for
    the same digest, else its own data where it is (aligned as the kernels assume:
    `memory_plan.constant_alignment`) or, when it is not aligned enough or may be
    written by its owner, a copy in an aligned buffer."""
    data = constant.data.reshape(-1)
    with _SHARED_LOCK:
        found = None if constant.digest is None else _SHARED.get(constant.digest)
        if found is not None:
            return found
        misaligned = data.ctypes.data % constant_alignment(data.dtype) != 0
        if misaligned or data.flags.writeable or not data.flags.c_contiguous:
            copy = aligned_buffer(data.nbytes)
            copy[:] = np.ascontiguousarray(data).view(np.uint8).reshape(-1)
            data = copy
        buffer = data.view(np.uint8)
        buffer.flags.writeable = False
        if constant.digest is not None:
            _SHARED[constant.digest] = buffer
        return buffer


HUGE_PAGES_OVER = 1 << 26
"""Buffers larger than this (64 MiB: a large arena, a copied weight) are mapped
with transparent huge pages where the kernel offers them on request: writing
435 MB into 4 KiB pages takes over 100,000 page faults."""


def aligned_buffer(nbytes: int) -> np.ndarray:
    """A zeroed uint8 buffer whose data pointer is ALIGNMENT-aligned (a large one page-aligned, on huge pages)."""
    if nbytes > HUGE_PAGES_OVER and hasattr(mmap, "MADV_HUGEPAGE"):
        try:
            region = mmap.mmap(-1, nbytes)
        except OSError as error:  # ENOMEM: fail as np.zeros does, so callers see one kind of error
            raise MemoryError(f"cannot map {nbytes} bytes: {error}") from None
        region.madvise(mmap.MADV_HUGEPAGE)
        return np.frombuffer(region, dtype=np.uint8)
    raw = np.zeros(nbytes + ALIGNMENT, dtype=np.uint8)
    start = (-raw.ctypes.data) % ALIGNMENT
    return raw[start : start + nbytes]


class Executable:
    """`exe(*arrays, out=None) -> tuple[np.ndarray, ...]`."""

    def __init__(
        self,
        name: str,
        compiled: CompiledModule,
        inputs: Sequence[TensorSpec],
        outputs: Sequence[TensorSpec],
        memory_plan: MemoryPlan,
        constants: Sequence[ConstantData],
        llvm_ir: str,
        planned_ir: str,
        tuning: Tuning,
        index_checks: Sequence[IndexCheck] = (),
        timed: Sequence[TimedOp] | None = None,
    ) -> None:
        self.name = name
        self.target = compiled.target
        """The machine the code was compiled for (`rlx_mlir.target`)."""
        self.tuning = tuning
        """The kernel choices it was lowered with (`rlx_mlir.tuning`)."""
        self.inputs = tuple(inputs)
        self._layouts = tuple((spec.shape, spec.dtype.numpy) for spec in self.inputs)
        self.outputs = tuple(outputs)
        self.memory_plan = memory_plan
        self.llvm_ir = llvm_ir
        """The LLVM IR as handed to LLVM, before O3: kernels internal, the target's triple."""
        self.planned_ir = planned_ir
        self._compiled = compiled
        self._entry = self._refuse if self.target.missing_on_host() else _ENTRY(compiled.address(name))
        self._arena = aligned_buffer(max(memory_plan.arena_size, ALIGNMENT))
        ordered = sorted(constants, key=lambda c: c.slot)
        assert [c.slot for c in ordered] == list(range(len(ordered))), "one constant per slot"
        self.constants = tuple(constant_buffer(c) for c in ordered)
        """Each constant's bytes (read-only uint8), by slot: shared with every live
        executable compiled from the same weights, never written by a kernel."""
        self._constant_table = (ctypes.c_void_p * max(1, len(self.constants)))(
            *(buffer.ctypes.data for buffer in self.constants)
        )
        self._io = (ctypes.c_void_p * (len(self.inputs) + len(self.outputs)))()
        self._timed = None if timed is None else tuple(timed)
        stamps = 0 if timed is None else len(timed) + 1  # a profiling build's time stamps follow
        self._status = (ctypes.c_int64 * (STATUS_FIELDS + stamps))()  # code, index, axis, size
        self._arena_address, self._status_address = self._arena.ctypes.data, ctypes.addressof(self._status)
        self._io_address = ctypes.addressof(self._io)
        self._constants_address = ctypes.addressof(self._constant_table)
        self._index_checks = tuple(index_checks)
        self._lock = threading.Lock()  # the arena is shared state: one call at a time
        self._kept: list[np.ndarray | None] = [None] * len(self.outputs)
        """Large results of earlier calls, reused once the caller drops them (`_new_outputs`)."""
        self.recompile: tuple[Callable[..., Executable], tuple[object, ...]] | None = None
        """How to build this executable again (the compiler and its arguments): what it pickles as."""
        self.pickled_source: Callable[[ModuleOp], object] | None = None
        """What a module it was compiled from pickles as (`compiler.pickled_source`:
        its text and its resources' bytes as arrays)."""
        self.threads = 1
        """How many threads its large kernels are split over."""
        self._profiling: Executable | None = None
        self.tuned: list = []
        """The choices measured for this build (`rlx_mlir.autotune.Tuned`), or read from the cache."""
        self.cached: dict[str, bool] = {}
        """Which work the persistent cache saved: "module" (parsing, passes,
        lowering came from disk), "machine code" (the machine code was loaded
        from disk, by this compile or by the live executable it shares its
        engine with)."""

    def __reduce__(self) -> tuple[Callable[..., Executable], tuple[object, ...]]:
        """Pickled as its IR text and compile options; unpickling compiles again,
        through the persistent cache (for dask, multiprocessing, Ray workers).
        A module compiled as a ModuleOp is printed only now, its resources'
        bytes pickled beside the text as arrays."""
        if self.recompile is None:
            raise TypeError(f"{self.name}: this executable was not made by rlx_mlir.compile and cannot be pickled")
        compile_again, (source, *options) = self.recompile
        if isinstance(source, ModuleOp):
            source = self.pickled_source(source) if self.pickled_source is not None else str(source)
        return compile_again, (source, *options)

    @property
    def optimized_llvm_ir(self) -> str:
        return self._compiled.optimized_ir

    def assembly(self) -> str:
        """The assembly of the optimized module for its target (to check vectorization)."""
        return self._compiled.assembly()

    def __call__(
        self, *arrays: np.ndarray, out: Sequence[np.ndarray] | None = None, **named: object
    ) -> tuple[np.ndarray, ...]:
        if named:
            listed = ", ".join(f"{k}=" for k in named)
            raise ArgumentError(f"{self.name} takes its inputs by position, in order; got {listed}")
        inputs = self._check_inputs(arrays)
        with self._lock:
            outputs = self._check_outputs(out, inputs)
            # mypy's ctypes plugin types this slice as list[c_void_p | int | None] (invariant); ints are what it holds
            self._io[:] = _addresses((*inputs, *outputs))  # type: ignore[assignment]
            self._status[0] = 0  # a kernel that meets a bad index writes all four fields
            self._entry(self._arena_address, self._io_address, self._status_address, self._constants_address)
            if self._status[0]:
                raise self._index_error()
        return tuple(outputs)

    def profile(self, *arrays: np.ndarray, repeat: int = 20) -> Profile:
        """Where a call's time goes: each op's median time over `repeat` calls on
        `arrays`, with its bytes and FLOPs (`rlx_mlir.profiler`), measured on a
        profiling build of the same plan, compiled at the first use."""
        if not isinstance(repeat, int) or isinstance(repeat, bool) or repeat < 1:
            raise ArgumentError(f"{self.name}: profile() takes repeat >= 1, got {repeat!r}")
        build = self if self._timed is not None else self._profiling_build()
        assert build._timed is not None
        seconds, overhead, total = profiler.measure(lambda: build(*arrays), build._stamps, build._timed, repeat)
        rows = tuple(profiler.Row(op, s) for op, s in zip(build._timed, seconds, strict=True))
        return profiler.Profile(self.name, rows, overhead, total, repeat, self.target, self.threads)

    def _profiling_build(self) -> Executable:
        if self._profiling is None:
            if self.recompile is None:
                raise ArgumentError(f"{self.name}: only an executable made by rlx_mlir.compile can be profiled")
            compile_again, args = self.recompile
            self._profiling = compile_again(*args[:-1], profile=True)
        return self._profiling

    def _stamps(self) -> list[int]:
        """The time stamps of the last call of a profiling build: its start, then each op's end."""
        return list(self._status[STATUS_FIELDS:])

    def _new_outputs(self) -> list[np.ndarray]:
        """Fresh result arrays, reusing a large one of an earlier call that the
        caller has dropped (`RECYCLE_MIN_BYTES`); called under the lock."""
        outputs = []
        for j, spec in enumerate(self.outputs):
            kept = self._kept[j]
            if kept is not None and sys.getrefcount(kept) <= RECYCLE_REFERENCES:
                outputs.append(kept)
                continue
            try:
                array = np.empty(spec.shape, dtype=spec.dtype.numpy)
            except MemoryError:
                raise AllocationError(f"{self.name}: its results cannot be allocated") from None
            if array.nbytes >= RECYCLE_MIN_BYTES:
                self._kept[j] = array
            outputs.append(array)
        return outputs

    def _refuse(self, *_addresses: int) -> None:
        """The entry of code this host cannot run (compiled for a level it lacks)."""
        missing = ", ".join(sorted(self.target.missing_on_host()))
        level = "" if self.target.level == self.target.name else f" ({self.target.level})"
        raise TargetError(
            f"{self.name} was compiled for {self.target.name}{level}, which this host cannot run "
            f"(it lacks {missing}); its assembly() can still be inspected"
        )

    def _index_error(self) -> IndexError:
        code, index, axis, size = (int(v) for v in self._status)
        op = self._index_checks[code - 1].op
        return IndexError(f"{op}: index {index} is out of range for axis {axis} with size {size}")

    def _check_inputs(self, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
        if len(arrays) != len(self.inputs):
            raise ArgumentError(f"{self.name} takes {len(self.inputs)} arrays, got {len(arrays)}")
        checked: list[np.ndarray] = []
        for array, (shape, dtype) in zip(arrays, self._layouts):
            # the common case in two comparisons and a flag: a native C-contiguous array as specified
            if type(array) is not np.ndarray or array.shape != shape or array.dtype != dtype:
                array = self._convert_input(len(checked), array, self.inputs[len(checked)])
            elif not array.flags.c_contiguous:
                array = np.ascontiguousarray(array)
            checked.append(array)
        return checked

    def _convert_input(self, k: int, array: object, spec: TensorSpec) -> np.ndarray:
        """An input that is not exactly a native C-contiguous ndarray of the spec: a
        0-d input given as a number, an ndarray subclass or another byte order (packed
        once), or an error naming the argument."""
        if not isinstance(array, np.ndarray):
            array = _scalar_input(self.name, k, array, spec)
        _check_spec(self.name, f"argument #{k}", array, spec)
        if not array.flags.c_contiguous or array.dtype != spec.dtype.numpy:
            array = np.ascontiguousarray(array, dtype=spec.dtype.numpy)
        return array

    def _check_outputs(self, out: Sequence[np.ndarray] | None, inputs: list[np.ndarray]) -> list[np.ndarray]:
        if out is None:
            return self._new_outputs()
        if isinstance(out, np.ndarray):
            out = (out,)
        if not isinstance(out, (tuple, list)):
            raise ArgumentError(f"{self.name} out= must be a tuple of arrays, got {type(out).__name__}")
        if len(out) != len(self.outputs):
            raise ArgumentError(f"{self.name} has {len(self.outputs)} results, got {len(out)} out= arrays")
        for j, (array, spec) in enumerate(zip(out, self.outputs)):
            if not isinstance(array, np.ndarray):
                raise ArgumentError(f"{self.name} out[{j}] must be a NumPy array {spec}")
            _check_spec(self.name, f"out[{j}]", array, spec)
            if array.dtype != spec.dtype.numpy:
                raise ArgumentError(f"{self.name} out[{j}] must be native-endian {spec.dtype.numpy.name}")
            if not array.flags.c_contiguous or not array.flags.writeable:
                raise ArgumentError(f"{self.name} out[{j}] must be a writeable C-contiguous array")
            for other in (*inputs, *out[:j]):
                if array.size and np.may_share_memory(array, other):
                    raise ArgumentError(f"{self.name} out[{j}] overlaps another argument; pass distinct arrays")
        return list(out)


RECYCLE_MIN_BYTES = 1 << 20
"""Results at least this large are kept for reuse once the caller drops them:
NumPy maps such arrays fresh from the OS at each allocation, and the kernel
writing them then takes a page fault per 4 KiB (a 32 MiB layer norm result
took 35 ms per call instead of 28 ms with its memory reused), as an
allocator's cache (onnxruntime's arena) would avoid."""


RECYCLE_REFERENCES = 3
"""`sys.getrefcount` of a kept result that only the executable holds: the list
of kept results, the local name and getrefcount's argument. Any result, view
of it or input refers to it once more."""


_NUMBERS = {
    Kind.FLOAT: (int, float),
    Kind.COMPLEX: (int, float, complex),
    Kind.INT: (int,),
    Kind.UINT: (int,),
    Kind.BOOL: (bool,),
}
"""The Python numbers a 0-d input of each kind takes (converted as NumPy would)."""


def _scalar_input(name: str, k: int, value: object, spec: TensorSpec) -> np.ndarray:
    """A 0-d input given as a NumPy scalar (of the input's dtype, as arrays must
    be) or a Python number of a fitting kind, as a 0-d array."""
    what = f"{name} argument #{k}"
    if spec.shape != () or not isinstance(value, (np.generic, int, float, complex)):
        raise ArgumentError(f"{what} must be a NumPy array {spec}, got {type(value).__name__}")
    if isinstance(value, np.generic):
        return np.asarray(value)
    kind = spec.dtype.kind
    if not isinstance(value, _NUMBERS[kind]):
        raise ArgumentError(f"{what} must be a {spec.dtype.name} number, got {type(value).__name__}")
    if kind in (Kind.INT, Kind.UINT) and isinstance(value, int):  # always an int here (_NUMBERS)
        low, high = spec.dtype.int_range
        if not low <= value <= high:
            raise ArgumentError(f"{what}: {value} is out of range for {spec.dtype.name}")
    return np.asarray(value, dtype=spec.dtype.numpy)


def _addresses(arrays: Sequence[np.ndarray]) -> list[int]:
    """The data addresses of C-contiguous arrays, each through a ctypes view of its
    buffer (~0.3 us; `array.ctypes.data` builds a helper object, ~1.2 us, which a
    decode step's eight arrays would pay per call); one read-only or empty array
    sends them all through `_address`."""
    try:
        return [_ADDRESS_OF(_VIEW(array)) for array in arrays]
    except (TypeError, ValueError, BufferError):
        return [_address(array) for array in arrays]


_ADDRESS_OF = ctypes.addressof
# numpy's stubs give ndarray the buffer protocol (__buffer__) only for Python >= 3.12
_VIEW: Callable[[np.ndarray], ctypes.c_char] = ctypes.c_char.from_buffer  # type: ignore[assignment]


def _address(array: np.ndarray) -> int:
    """The data address of a C-contiguous array: through a view of its buffer when
    that is writeable and not empty, else from NumPy's ctypes helper."""
    try:
        return _ADDRESS_OF(_VIEW(array))
    except (TypeError, ValueError, BufferError):  # read-only or empty
        return array.ctypes.data


def _check_spec(name: str, what: str, array: np.ndarray, spec: TensorSpec) -> None:
    """Same shape and element type (byte order aside: inputs are converted, outputs checked)."""
    if array.dtype == spec.dtype.numpy and array.shape == spec.shape:
        return
    if array.dtype.newbyteorder("=") != spec.dtype.numpy:
        raise ArgumentError(f"{name} {what} must have dtype {spec.dtype.numpy.name}, got {array.dtype.name}")
    if tuple(array.shape) != spec.shape:
        raise ArgumentError(f"{name} {what} must have shape {list(spec.shape)}, got {list(array.shape)}")
