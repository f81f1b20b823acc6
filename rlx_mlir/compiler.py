"""parse() and compile(): text or module in, executable out.

compile() runs the tensor-level pipeline (by default canonicalize-broadcast,
fuse-elementwise, plan-memory), reads what the runtime needs off the planned
function (signature, constants, memory plan), then lowers to LLVM and JITs.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
from typing_extensions import Buffer
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute
from xdsl.passes import ModulePass, PassPipeline
from xdsl.utils.exceptions import ArgSpecParseError, PassFailedException, VerifyException
from xdsl.utils.exceptions import ParseError as XdslParseError

from rlx_mlir import autotune, blas, disk_cache, dtypes, thread_pool
from rlx_mlir.context import cycle_collection_paused, make_context
from rlx_mlir.dialects.common import element_type, shape_of
from rlx_mlir.dialects.elision import elided_text, key_text, text_and_blobs
from rlx_mlir.dialects.parser import RlxParser
from rlx_mlir.dialects.resources import ResourceElementsAttr
from rlx_mlir.errors import AllocationError, CompileError, ParseError, VerificationError
from rlx_mlir.jit import compile_text
from rlx_mlir.lowering.core.translate import to_llvm_ir
from rlx_mlir.memory_plan import MemoryPlan, constant_slot, index_checks, planned_constants, read_plan
from rlx_mlir.passes.default_pipeline import TENSOR_PIPELINE
from rlx_mlir.passes.lower_to_llvm import lower_module
from rlx_mlir.passes.pack_conv_weights import pack_conv_weights
from rlx_mlir.passes.pack_matmul_weights import pack_matmul_weights
from rlx_mlir.passes.plan_memory import PlanMemoryPass
from rlx_mlir.passes.registry import available_passes
from rlx_mlir.profiler import TimedOp, describe
from rlx_mlir.runtime import ConstantData, Executable, IndexCheck, TensorSpec, shared_constant
from rlx_mlir.target import Target, available_cpus
from rlx_mlir.target import target as resolve_target
from rlx_mlir.tuning import Tuning
from rlx_mlir.verification import function_block, verify_module


def parse(text: str, blobs: Mapping[str, np.ndarray] | None = None) -> ModuleOp:
    """Parse and verify rlx IR text; errors carry line:column and the rule broken.
    `blobs` gives resources' bytes by handle, as the text's trailer would."""
    if not isinstance(text, str):
        raise CompileError(f"parse() takes IR text, got {type(text).__name__}")
    _check_text(text)
    try:
        module = RlxParser(make_context(), text, name="<input>", blobs=blobs).parse_module()
    except XdslParseError as error:
        raise ParseError(str(error)) from None
    except VerifyException as error:  # an attribute of the wrong kind, caught while parsing
        raise VerificationError(str(error)) from None
    except NotImplementedError as error:  # e.g. a semi-affine map, an f80 constant (xDSL raises it bare)
        detail = str(error) or "a type or literal xDSL cannot represent"
        raise ParseError(f"<input>: unsupported syntax: {detail}") from None
    except MemoryError:
        raise ParseError("<input>: a constant is too large to hold in memory") from None
    except RecursionError:
        raise ParseError("<input>: the text nests too deeply (modules, regions or dense literals)") from None
    except (ValueError, OverflowError) as error:  # xDSL's literal and type conversions
        if "integer string conversion" in str(error):
            raise ParseError(
                f"<input>: an integer literal has more than {sys.get_int_max_str_digits()} digits"
            ) from None
        raise ParseError(f"<input>: {error}") from None
    verify(module)
    return module


def _check_text(text: str) -> None:
    """Characters no IR file holds: a NUL byte, a lone surrogate (which also could
    not be hashed into a cache key), as located parse errors."""
    if "\0" in text:
        line = text[: text.index("\0")].count("\n") + 1
        raise ParseError(f"<input>:{line}: the text contains a NUL byte")
    try:
        text.encode()
    except UnicodeEncodeError as error:
        line = text[: error.start].count("\n") + 1
        code = ord(text[error.start])
        raise ParseError(f"<input>:{line}: the text contains a lone surrogate (U+{code:04X})") from None


def verify(module: ModuleOp) -> None:
    try:
        verify_module(module)
    except VerifyException as error:
        raise VerificationError(str(error)) from None


def _spec(t: Attribute) -> TensorSpec:
    return TensorSpec(shape_of(t), dtypes.from_ir(element_type(t)))


def _constant_digest(blob: str, dtype: np.dtype) -> str:
    """What a constant is known by (`ConstantData.digest`): its blob's digest and its element type."""
    return f"{blob}:{dtype.str}"


def _live_bytes(blob: str, dtype: np.dtype) -> np.ndarray | None:
    """The buffer a live executable reads for the blob of digest `blob` as `dtype` (or None)."""
    return shared_constant(_constant_digest(blob, dtype))


def _constants(function: func.FuncOp) -> list[ConstantData]:
    """Every constant of the function, those in scan bodies too, by slot: the
    function's table of constants points at them all."""
    found = []
    for op in planned_constants(function):
        spec = _spec(op.result.type)
        values = op.values().reshape(-1)  # a resource's bytes, not copied
        count = int(np.prod(spec.shape))
        resource = op.value if isinstance(op.value, ResourceElementsAttr) else None
        digest = None if resource is None else _constant_digest(resource.blob.data.digest(), values.dtype)
        if values.size != count:  # a splat: its bytes are not the blob's
            values, digest = np.ascontiguousarray(np.broadcast_to(values, (count,))), None
            values.flags.writeable = False
        found.append(ConstantData(constant_slot(op), values, digest))
    return found


SYMBOL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
RESERVED = ("llvm", "pthread_", blas.PREFIX, thread_pool.PREFIX)
"""Prefixes of the symbols a lowered module declares: intrinsics, libc threads, the BLAS, the thread pool."""


def _entry_function(module: ModuleOp, entry: str | None) -> func.FuncOp:
    """The one function with a body to compile, checked to be something rlx can run."""
    functions = [op for op in module.ops if isinstance(op, func.FuncOp) and op.body.blocks]
    if entry is not None:
        functions = [f for f in functions if f.sym_name.data == entry]
    if len(functions) != 1:
        names = [f.sym_name.data for f in module.ops if isinstance(f, func.FuncOp) and f.body.blocks]
        raise CompileError(f"expected exactly one function to compile (found {names}); pass entry=")
    function = functions[0]
    name = function.sym_name.data
    if not SYMBOL.fullmatch(name) or name.startswith(RESERVED):
        raise CompileError(
            f"function name '{name}' cannot be a JIT symbol "
            "(use letters, digits, _; not llvm.*/pthread_*/scipy_*/rlx_pool_*)"
        )
    try:
        block = function_block(function)
    except VerifyException as error:
        raise CompileError(str(error)) from None
    for op in block.ops:
        if not op.name.startswith("rlx.") and not isinstance(op, func.ReturnOp):
            raise CompileError(f"'{op.name}' in @{name} is not an rlx op; rlx_mlir.compile runs rlx functions")
    return function


@functools.lru_cache(maxsize=64)
def _tensor_passes(pipeline: str) -> tuple[ModulePass, ...]:
    """The passes `pipeline` names, parsed once per text: xDSL's spec parser reads
    every pass's type hints (2 ms of a 50 ms compile of a two-op graph), and passes
    are frozen dataclasses, which compiles can share."""
    try:
        passes = PassPipeline.parse_spec(available_passes(), pipeline).passes if pipeline else ()
    except (ValueError, ArgSpecParseError) as error:
        raise CompileError(f"bad pipeline '{pipeline}': {error}") from None
    for p in passes:
        if p.name in ("default", "lower-to-llvm"):
            raise CompileError(f"pipeline lists '{p.name}': compile() plans memory and lowers by itself")
    return passes


def _check_options(pipeline: object, entry: object, threads: object, tuning: object) -> None:
    for name, value in (("pipeline", pipeline), ("entry", entry)):
        if value is not None and not isinstance(value, str):
            raise CompileError(f"compile() {name}= takes a string, got {type(value).__name__}")
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 0:
        raise CompileError(f"compile() threads= takes a count >= 0 (0: every CPU), got {threads!r}")
    if tuning is not None and not isinstance(tuning, Mapping):
        raise CompileError(f"compile() tuning= takes a mapping of knob names to integers, got {type(tuning).__name__}")


@dataclass(frozen=True)
class Source:
    """A module known by a key before it is built. `compile` looks the key up in
    the persistent cache and calls `build` only on a miss, so a warm compile
    skips building the module and printing it to key the cache (an ONNX
    import, for a large model, costs more than loading what the cache holds).
    The key must determine the module, as its text would: `rlx_mlir/onnx.py`
    uses the model's bytes and the input shapes. `build` must pickle (a
    module-level function or a `functools.partial` of one) for the executable
    to pickle."""

    key: str
    build: Callable[[], ModuleOp]

    def __post_init__(self) -> None:
        if not isinstance(self.key, str) or not callable(self.build):
            raise CompileError("Source(key, build) takes a string and a callable returning a module")


@dataclass(frozen=True)
class Artifacts:
    """What compiling a module derives before the JIT: all an Executable needs
    besides machine code, so the disk cache can keep it."""

    name: str
    inputs: list[TensorSpec]
    outputs: list[TensorSpec]
    plan: MemoryPlan
    constants: list[ConstantData]
    jit_text: str
    """The LLVM IR handed to LLVM: kernels internal, the target's triple."""
    planned_ir: str
    checks: list[IndexCheck]
    tuned: list[autotune.Tuned]
    timed: list[TimedOp] | None = None
    """A profiling build's time-stamped ops, in order (`rlx_mlir.profiler`)."""

    def encode(self) -> tuple[list[memoryview], Weights | None]:
        """A disk-cache payload: JSON of everything but the constants' bytes, a newline,
        then those bytes (no pickle: loading an entry never runs code), in pieces:
        the constants are written from where they are, not joined in memory. The
        resources' bytes (a model's weights) go to their own entry instead
        (`Weights`), which every input shape of the model shares."""
        pieces: list[memoryview] = []
        shared = [c for c in self.constants if c.digest is not None and c.data.nbytes >= SHARED_WEIGHTS_OVER]
        weights = Weights.of(shared) if shared else None
        constants, start = [], 0
        for constant in self.constants:
            dtype = dtypes.from_numpy(constant.data.dtype)
            assert dtype is not None, "a constant's data has its tensor's dtype"
            row: dict[str, object] = {"slot": constant.slot, "dtype": dtype.name, "count": int(constant.data.size)}
            if constant in shared:
                assert constant.digest is not None
                row["digest"] = constant.digest
            else:
                raw = _bytes_of(constant.data)
                row["start"] = start
                pieces.append(raw)
                start += raw.nbytes
            constants.append(row)
        document = {
            "name": self.name,
            "inputs": [[list(s.shape), s.dtype.name] for s in self.inputs],
            "outputs": [[list(s.shape), s.dtype.name] for s in self.outputs],
            "plan": [self.plan.arena_size, self.plan.lower_bound, self.plan.offsets, self.plan.constant_bytes],
            "constants": constants,
            "jit_text": self.jit_text,
            "planned_ir": self.planned_ir,
            "checks": [c.op for c in self.checks],
            "tuned": [[t.op, t.choice, t.source, dict(t.seconds)] for t in self.tuned],
            "timed": None if self.timed is None else [t.encode() for t in self.timed],
        }
        return [memoryview(json.dumps(document).encode() + b"\n"), *pieces], weights

    @classmethod
    def decode(cls, payload: Buffer, load_weights: Callable[[str], Buffer | None]) -> Artifacts | None:
        """`encode`'s payload back, its constants viewing `payload` and the bytes
        `load_weights` gives for each weights digest, not copied; None if one is
        missing (a malformed one raises ValueError, KeyError or TypeError)."""
        view = memoryview(payload).cast("B")
        end = _line_end(view)
        if end < 0:
            raise ValueError("an entry without its JSON line")
        d, blob = json.loads(bytes(view[:end])), view[end + 1 :]

        def specs(rows: list) -> list[TensorSpec]:
            return [TensorSpec(tuple(int(n) for n in shape), dtypes.from_name(name)) for shape, name in rows]

        constants = []
        for c in d["constants"]:
            dtype = dtypes.from_name(c["dtype"]).numpy
            digest = str(c["digest"]) if "digest" in c else None
            source, start = (blob, int(c["start"])) if digest is None else (load_weights(digest), 0)
            if source is None:
                return None
            data = np.frombuffer(memoryview(source), dtype, int(c["count"]), start)
            constants.append(ConstantData(int(c["slot"]), data, digest))
        size, bound, offsets, constant_bytes = d["plan"]
        return cls(
            str(d["name"]),
            specs(d["inputs"]),
            specs(d["outputs"]),
            MemoryPlan(int(size), int(bound), {str(k): int(v) for k, v in offsets.items()}, int(constant_bytes)),
            constants,
            str(d["jit_text"]),
            str(d["planned_ir"]),
            [IndexCheck(str(op)) for op in d["checks"]],
            [autotune.Tuned(str(op), str(c), str(s), dict(t)) for op, c, s, t in d["tuned"]],
            None if d["timed"] is None else [TimedOp.decode(row) for row in d["timed"]],
        )


def _bytes_of(array: np.ndarray) -> memoryview:
    return np.ascontiguousarray(array).reshape(-1).view(np.uint8).data


SHARED_WEIGHTS_OVER = 1 << 16
"""Resources of at least this many bytes (64 KiB) get weights entries of their
own; smaller ones are written in their module's entry."""


@dataclass(frozen=True)
class Weights:
    """The large resources' bytes of a compiled module, one disk-cache entry per
    blob keyed by its digest: each input shape of a model compiles to its own
    module entry, and all of them name these (written once, never as text).
    A constant that depends on the shape (a slice of the position embeddings)
    is another blob and another entry; the model's matrices are shared."""

    entries: dict[str, memoryview]
    """Each blob's bytes by its entry key."""
    live: frozenset[str] = frozenset()
    """The entries whose bytes a live executable reads already (`runtime.shared_constant`)."""

    @staticmethod
    def key(digest: str) -> str:
        return disk_cache.key("weights", digest)

    @classmethod
    def of(cls, constants: Sequence[ConstantData]) -> Weights:
        entries, live = {}, set()
        for constant in constants:
            assert constant.digest is not None
            entries[cls.key(constant.digest)] = _bytes_of(constant.data)
            if shared_constant(constant.digest) is not None:
                live.add(cls.key(constant.digest))
        return cls(entries, frozenset(live))

    def store(self) -> dict[str, memoryview]:
        """Write the entries not stored yet. Where each entry's payload can be read
        in place, by entry key: a read-only map of the file just written, or of the
        one stored before (verified, as every load is) unless a live executable
        reads its bytes already."""
        found = {}
        for key, data in self.entries.items():
            if not disk_cache.exists("weights", key):
                view = disk_cache.store("weights", key, [data], mapped=True)
            else:
                view = None if key in self.live else disk_cache.load_view("weights", key)
            if view is not None:
                found[key] = view
        return found


def _in_stored_weights(constants: list[ConstantData], written: Mapping[str, memoryview]) -> list[ConstantData]:
    """`constants`, each whose weights entry `written` maps viewing that map instead
    of the bytes it was compiled from (a model file's, at any alignment: the
    entry's payload is 64-byte aligned and needs no copy; its pages are the page
    cache's, shared with every process reading the entry)."""
    moved = []
    for c in constants:
        view = None if c.digest is None else written.get(Weights.key(c.digest))
        data = c.data if view is None else np.frombuffer(view, c.data.dtype, c.data.size)
        moved.append(ConstantData(c.slot, data, c.digest))
    return moved


Result = TypeVar("Result")


def _in_background(work: Callable[[], Result]) -> Future[Result]:
    """`work`'s future, computed on a thread of its own (not a pool's: a forked child
    has none of its parent's threads). BERT-base's weights (435 MB: 0.6 s of blake2b,
    then the write) overlap LLVM's 1.9 s: its cold compile 4.6 -> 3.5-4.2 s wall (Zen 3)."""
    done: Future[Result] = Future()

    def run() -> None:
        try:
            done.set_result(work())
        except BaseException as error:  # raised again by done.result(), on the caller's thread
            done.set_exception(error)

    threading.Thread(target=run, name="rlx-weights", daemon=True).start()
    return done


def _line_end(view: memoryview) -> int:
    """Where the JSON line of an entry ends (its constants' bytes follow, and may hold any byte)."""
    step = 1 << 20
    for start in range(0, len(view), step):
        found = bytes(view[start : start + step]).find(b"\n")
        if found >= 0:
            return start + found
    return -1


def compile(
    module_or_text: ModuleOp | str | Source,
    pipeline: str | None = None,
    entry: str | None = None,
    threads: int = 0,
    target: str | None = None,
    tuning: Mapping[str, int] | None = None,
    tune: bool | float | None = None,
    profile: bool = False,
) -> Executable:
    """Compile an rlx module (or its text) to a callable executable.

    `pipeline` lists the tensor-level passes to run before memory planning and
    lowering (default: `TENSOR_PIPELINE`; "" runs none). `threads` caps how many
    threads a large kernel is split over (0, or more than there are: every
    available CPU). `target` names the machine to compile for (`rlx_mlir.target`:
    native, x86-64-v3, x86-64-v4 or an LLVM CPU name; None: $RLX_MLIR_TARGET,
    else native) and `tuning` overrides some of the kernel choices derived from
    it (`rlx_mlir.tuning.Tuning`'s fields). `tune` measures the choices a model
    cannot make (`rlx_mlir.autotune`: which form of a long recurrence runs) at the
    first compile, for up to 0.5 s (or `tune` seconds), and keeps the winners
    (None: unless $RLX_MLIR_TUNE is 0; False: the model's choices,
    deterministically). A `profile` build time-stamps each op's kernels, for
    `Executable.profile` (which makes one itself). Results are kept in the persistent cache of
    `rlx_mlir.disk_cache`: compiling the same text again, in any process,
    skips straight to loading machine code. An Executable pickles as its IR
    text and these options, and recompiles (through the cache) when unpickled.
    A `Source` is keyed by its key instead of its text, and built only on a miss.
    """
    _check_options(pipeline, entry, threads, tuning)
    source: str | ModuleOp | Source
    if isinstance(module_or_text, Source):
        source, identity = module_or_text, f"source:{module_or_text.key}"
    elif isinstance(module_or_text, ModuleOp):  # large constants are keyed by digest, never printed
        source = module_or_text.clone()
        identity = key_text(source)
    elif isinstance(module_or_text, str):
        source = identity = module_or_text
        _check_text(identity)
    else:
        raise CompileError(f"compile() takes IR text or a builtin.module, got {type(module_or_text).__name__}")
    effective = thread_pool.thread_count(min(threads, available_cpus()))  # more than there are: all of them
    machine = resolve_target(target)
    kernel_tuning = Tuning.for_target(machine).replace(tuning or {})
    if isinstance(tune, str) or not isinstance(tune, (bool, int, float, type(None))):
        raise CompileError(f"compile() tune= takes True, False or seconds, got {tune!r}")
    measure = autotune.budget(tune)
    options = (repr(pipeline), repr(entry), str(effective), kernel_tuning.key, f"tune={measure > 0}", f"{profile=}")
    disk_key = disk_cache.key("module", machine.key, identity, *options)
    artifacts = derived = _load_artifacts(disk_key)
    written: Future[dict[str, memoryview]] | None = None
    if artifacts is None:

        def build(alone: ModuleOp, knobs: Mapping[str, int]) -> Executable:
            return compile(alone, "", None, threads, machine.name, {**(tuning or {}), **knobs}, tune=False)

        measuring = (build, measure) if measure else None
        with cycle_collection_paused():
            built = _built(source.build) if isinstance(source, Source) else source
            artifacts = derived = _derive(built, pipeline, entry, effective, machine, kernel_tuning, measuring, profile)
        payload, weights = artifacts.encode()
        if weights is not None:  # hashed and written while LLVM works (both release the GIL)
            written = _in_background(weights.store)
    else:
        derived = None
    if blas.PREFIX in artifacts.jit_text:  # kernels call the BLAS: MCJIT resolves them in the process
        blas.load()
    if thread_pool.SYMBOL in artifacts.jit_text:  # and the thread pool
        thread_pool.load()
    compiled = compile_text(artifacts.jit_text, machine)
    if derived is not None:
        if written is not None:  # before the module entry that names them
            stored = _in_stored_weights(artifacts.constants, written.result())
            artifacts = derived = dataclasses.replace(artifacts, constants=stored)
        disk_cache.store("module", disk_key, payload)
    a = artifacts
    try:
        exe = Executable(
            a.name,
            compiled,
            a.inputs,
            a.outputs,
            a.plan,
            a.constants,
            a.jit_text,
            a.planned_ir,
            kernel_tuning,
            a.checks,
            a.timed,
        )
    except MemoryError:
        raise AllocationError(f"the arena of {a.plan.arena_size} bytes cannot be allocated") from None
    exe.tuned = artifacts.tuned if derived is not None else [_read_back(t) for t in artifacts.tuned]
    exe.pickled_source = pickled_source
    exe.threads = effective
    exe.recompile = (
        compile,
        (source, pipeline, entry, threads, target, None if tuning is None else dict(tuning), tune, profile),
    )
    exe.cached = {"module": artifacts is not derived, "machine code": compiled.from_disk}
    return exe


def _read_back(decision: autotune.Tuned) -> autotune.Tuned:
    """A decision of a module entry read from the cache: measured by the compile that
    wrote it (its times are that compile's), none in this one."""
    return dataclasses.replace(decision, source="cached")


def pickled_source(module: ModuleOp) -> Source:
    """What an executable compiled from a module pickles as: its text without
    the resources' bytes and those bytes as arrays (pickled in binary, never
    as hex), keyed by the digests of both (`key_text`, computed once per blob)."""
    text, blobs = text_and_blobs(module)
    return Source(f"pickled:{key_text(module)}", functools.partial(parse, text, blobs))


def _built(build: Callable[[], ModuleOp]) -> ModuleOp:
    module = build()
    if not isinstance(module, ModuleOp):
        raise CompileError(f"a Source's build() must return a builtin.module, got {type(module).__name__}")
    return module


def _load_artifacts(disk_key: str) -> Artifacts | None:
    data = disk_cache.load_view("module", disk_key)
    if data is None:
        return None
    try:
        return Artifacts.decode(data, _weights)
    except (ValueError, KeyError, TypeError, AttributeError):  # a verified entry of an older layout
        return None


def _weights(digest: str) -> Buffer | None:
    """The bytes of the weights of `digest`: those a live executable reads (nothing
    to load), else the disk cache's entry."""
    shared = shared_constant(digest)
    return shared.data if shared is not None else disk_cache.load_view("weights", Weights.key(digest))


def _derive(
    module_or_text: ModuleOp | str,
    pipeline: str | None,
    entry: str | None,
    threads: int,
    machine: Target,
    tuning: Tuning,
    measuring: tuple[autotune.Build, float] | None,
    profile: bool = False,
) -> Artifacts:
    """Parse, run the passes, plan and lower: everything but the JIT."""
    if isinstance(module_or_text, str):
        module = parse(module_or_text)
    else:
        module = module_or_text.clone()  # the passes rewrite it; `source` stays as given
        verify(module)
    passes = _tensor_passes(TENSOR_PIPELINE if pipeline is None else pipeline)
    function = _entry_function(module, entry)
    for other in [op for op in module.ops if op is not function]:
        other.detach()
    ctx = make_context()
    tuned: list[autotune.Tuned] = []
    try:
        for p in passes:
            p.apply(ctx, module)
        if measuring is not None:
            tuned = autotune.tune_module(module, measuring[0], machine, threads, measuring[1])
        pack_conv_weights(module, tuning)
        pack_matmul_weights(module, tuning, known=_live_bytes)
        PlanMemoryPass().apply(ctx, module)
        verify_module(module)
    except VerifyException as error:
        raise VerificationError(str(error)) from None
    except PassFailedException as error:  # e.g. autodiff through an op without an adjoint
        raise CompileError(str(error)) from None
    name = function.sym_name.data
    inputs = [_spec(t) for t in function.function_type.inputs]
    outputs = [_spec(t) for t in function.function_type.outputs]
    plan = read_plan(function)
    constants = _constants(function)
    planned_ir = elided_text(function)
    checks = [IndexCheck(op.name) for op in index_checks(function)]
    ops = describe(function) if profile else {}
    try:
        positions = lower_module(module, threads, tuning, profile)[name]
    except ValueError as error:  # an emitter's limit (a BLAS dimension, an op with no kernel)
        raise CompileError(f"@{name}: {error}") from None
    jit_text = to_llvm_ir(module, machine.triple)
    timed = [ops[k] for k in positions] if profile else None
    return Artifacts(name, inputs, outputs, plan, constants, jit_text, planned_ir, checks, tuned, timed)
