"""The process-wide pool of worker threads that parallel kernels are split over.

Why a pool: a launch that starts and joins a pthread per chunk pays ~20 us of
thread start-up every time, as much as 2^17 simple elements take to compute,
so mid-sized kernels (a decode step, one step of a recurrence at batch 32)
could not use a second core at all. Pool workers start once and then wait for
work, so a launch costs a few stores and, for a worker that has gone to sleep,
one condition-variable signal.

The pool is a small LLVM module of its own, built here with llvmlite and
JIT-compiled once per process by `load()` (through `rlx_mlir.jit`, so its
machine code is in the disk cache too), which registers its entry point
`SYMBOL` in MCJIT's symbol table. Lowered modules declare it and call it from
their parallel launchers (`lowering/parallel.py`), so their machine code (also
the disk cache's) refers to it by name, never by address:

    void rlx_pool_parallel_for(void (*thunk)(ptr args, i64 lo, i64 hi), ptr args, i64 n, i64 threads)

cuts [0, n) into grains (`GRAINS_PER_THREAD` per thread, at most n), wakes up
to `threads` - 1 workers, and the caller and the workers claim grains one at a
time from a shared count until none is left; it returns when all are done.

Protocol, per worker slot (a struct of whole cache lines per worker): the
caller writes the launch into the slot, then bumps the slot's generation
(seq_cst). The worker remembers the last generation it ran; after a launch it
spins on the generation for `SPIN_CYCLES`, then sleeps on the slot's
condition variable behind a `sleeping` flag, which the caller reads after its
bump and signals on. The flag store and the generation load on the worker's
side are seq_cst as well, so one side always sees the other's store. A worker
that finds no grain left decrements the shared `pending` count (release),
which the caller spins on (acquire) before it returns.

On Linux, workers are pinned to one CPU each as they start (`worker_cpus`): the
scheduler otherwise sometimes wakes a worker on the CPU its caller is busy on.

One caller owns the pool at a time (`busy`). Any other caller, such as a second
Python thread running another executable or a launch from inside a grain,
runs its whole range on its own thread instead of waiting. Workers that `fork`
did not copy into a child process are forgotten there (`os.register_at_fork`:
glibc's `pthread_atfork` is not an exported symbol MCJIT could resolve); the
child starts its own when it first needs them.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading

import llvmlite.binding as llvm
import llvmlite.ir as ir

from rlx_mlir import disk_cache
from rlx_mlir.jit import CompiledModule, compile_text, host_target

PREFIX = "rlx_pool_"
"""Every symbol of the pool starts with this; JIT entry names must not."""

SYMBOL = f"{PREFIX}parallel_for"
"""The pool's entry point, which lowered modules declare."""

MAX_WORKERS = 255
"""Worker slots; a launch uses at most this many workers plus the calling thread."""

GRAINS_PER_THREAD = 1
"""A launch's range is cut into this many grains per thread (at most one per index),
which the threads claim one at a time, so that a thread slowed by something else on
its core could take fewer. One, measured on 2 threads: 8 made the 4096^2 f32
transpose 2.0x a copy instead of 1.3x (its threads' interleaved bands of rows), and
did not steady the selective scan, whose run-to-run spread (2.3-3.7 ms) is the
host's."""

SPIN_CYCLES = 1 << 18
"""Cycle-counter ticks (~0.1 ms) a worker keeps spinning after its last launch before
it sleeps: back-to-back launches (the steps of a recurrence) then never pay a wake-up."""

CALLER_SPIN_CYCLES = 1 << 16
"""Cycle-counter ticks (~25 us) the caller spins on unfinished grains before it yields
its core between checks: on a loaded machine a worker may have been descheduled."""

OPAQUE_BYTES = 128
"""Room for a pthread_mutex_t or a pthread_cond_t on every supported libc (glibc: 40 and 48 bytes)."""

PIN_VARIABLE = "RLX_MLIR_PIN_THREADS"
"""Set to 0 to leave the workers unpinned (see `worker_cpus`)."""

CPU_SET_BYTES = 128
"""sizeof(cpu_set_t) in glibc and musl: CPUs 0 .. 1023."""

PINS = sys.platform.startswith("linux")
"""Whether the pool can pin its workers (pthread_setaffinity_np is Linux's)."""

_I8, _I32, _I64 = ir.IntType(8), ir.IntType(32), ir.IntType(64)
_PTR = _I8.as_pointer()
_VOID = ir.VoidType()
_NULL = ir.Constant(_PTR, None)
_THUNK = ir.FunctionType(_VOID, [_PTR, _I64, _I64]).as_pointer()
_OPAQUE = ir.ArrayType(_I8, OPAQUE_BYTES)
_SLOT = ir.LiteralStructType([_I32, _I32, _THUNK, _PTR, _I64, _I64, _OPAQUE, _OPAQUE, ir.ArrayType(_I8, 24)])
"""One worker's slot: generation, sleeping flag, the launch (thunk, args, n, grains), mutex,
condition, and padding to 320 bytes, so that the slots of the 64-byte aligned array
never share a cache line (with 64-bit pointers)."""
_GEN, _SLEEPING, _FN, _ARGS, _N, _GRAINS, _MUTEX, _COND = range(8)

_LIBC = {
    "pthread_create": ir.FunctionType(
        _I32, [_I64.as_pointer(), _PTR, ir.FunctionType(_PTR, [_PTR]).as_pointer(), _PTR]
    ),
    "pthread_detach": ir.FunctionType(_I32, [_I64]),
    "pthread_mutex_init": ir.FunctionType(_I32, [_PTR, _PTR]),
    "pthread_mutex_lock": ir.FunctionType(_I32, [_PTR]),
    "pthread_mutex_unlock": ir.FunctionType(_I32, [_PTR]),
    "pthread_cond_init": ir.FunctionType(_I32, [_PTR, _PTR]),
    "pthread_cond_wait": ir.FunctionType(_I32, [_PTR, _PTR]),
    "pthread_cond_signal": ir.FunctionType(_I32, [_PTR]),
    "sched_yield": ir.FunctionType(_I32, []),
    **({"pthread_setaffinity_np": ir.FunctionType(_I32, [_I64, _I64, _PTR])} if PINS else {}),
}
"""The libc functions the pool calls (pthread_t is held as an i64: an unsigned long or a pointer)."""


class _Pool:
    """The pool's module under construction: its globals, the libc declarations and
    the few IR idioms every function of it uses."""

    def __init__(self) -> None:
        self.module = ir.Module(name="rlx_thread_pool")
        self.slots = self._global("slots", ir.ArrayType(_SLOT, MAX_WORKERS), align=64)
        self.started = self._global("started", _I64)
        self.busy = self._global("busy", _I32)
        self.pending = self._global("pending", _I32)
        self.next = self._global("next", _I64)
        self.pin_cpus = self._global("pin_cpus", _I32.as_pointer())
        self.pin_count = self._global("pin_count", _I64)
        self.libc = {name: ir.Function(self.module, kind, name) for name, kind in _LIBC.items()}
        self.cycles = ir.Function(self.module, ir.FunctionType(_I64, []), "llvm.readcyclecounter")
        x86 = llvm.get_default_triple().startswith(("x86_64", "i386", "i686"))
        self.pause = ir.Function(self.module, ir.FunctionType(_VOID, []), "llvm.x86.sse2.pause") if x86 else None

    def _global(self, name: str, kind: ir.Type, align: int = 8) -> ir.GlobalVariable:
        g = ir.GlobalVariable(self.module, kind, f"{PREFIX}{name}")
        g.linkage = "internal"
        g.initializer = ir.Constant(kind, None)
        g.align = align
        return g

    def function(self, name: str, kind: ir.FunctionType, blocks: tuple[str, ...]) -> tuple[ir.Function, ...]:
        """A function (internal but for the entry point) and its named blocks, entry first."""
        f = ir.Function(self.module, kind, name)
        if name != SYMBOL:
            f.linkage = "internal"
        return f, *(f.append_basic_block(b) for b in ("entry", *blocks))

    @staticmethod
    def field(b: ir.IRBuilder, slot: ir.Value, index: int) -> ir.Value:
        return b.gep(slot, [_I32(0), _I32(index)], inbounds=True)

    def opaque(self, b: ir.IRBuilder, slot: ir.Value, index: int) -> ir.Value:
        """The slot's mutex or condition as the `void *` libc takes."""
        return b.bitcast(self.field(b, slot, index), _PTR)

    def slot(self, b: ir.IRBuilder, index: ir.Value) -> ir.Value:
        return b.gep(self.slots, [_I64(0), index], inbounds=True)

    def relax(self, b: ir.IRBuilder) -> None:
        """One spin-wait hint (x86 `pause`; nothing elsewhere)."""
        if self.pause is not None:
            b.call(self.pause, [])


def _load(b: ir.IRBuilder, ptr: ir.Value, order: str) -> ir.Value:
    return b.load_atomic(ptr, order, ptr.type.pointee.width // 8)


def _store(b: ir.IRBuilder, value: ir.Value, ptr: ir.Value, order: str) -> None:
    b.store_atomic(value, ptr, order, value.type.width // 8)


def _min(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    return b.select(b.icmp_signed("<", x, y), x, y)


def _emit_grains(p: _Pool) -> ir.Function:
    """`void grains(thunk, args, n, grains)`: claim grains g (the shared `next`
    count) until none is left, running thunk over [n·g/grains, n·(g+1)/grains)."""
    run, entry, claim, work, done = p.function(
        f"{PREFIX}grains", ir.FunctionType(_VOID, [_THUNK, _PTR, _I64, _I64]), ("claim", "work", "done")
    )
    fn, args, n, count = run.args
    b = ir.IRBuilder(entry)
    b.branch(claim)

    b.position_at_end(claim)
    g = b.atomic_rmw("add", p.next, _I64(1), "monotonic")
    b.cbranch(b.icmp_signed("<", g, count), work, done)

    b.position_at_end(work)
    b.call(fn, [args, b.sdiv(b.mul(n, g), count), b.sdiv(b.mul(n, b.add(g, _I64(1))), count)])
    b.branch(claim)

    b.position_at_end(done)
    b.ret_void()
    return run


def _emit_worker(p: _Pool, grains: ir.Function) -> ir.Function:
    """`ptr worker(ptr slot)`: forever wait for the slot's generation to move past
    the last one run (spinning, then sleeping), claim grains of the launch until
    none is left, count itself done."""
    worker, entry, wait, spin, idle, sleep, check, nap, woke, run = p.function(
        f"{PREFIX}worker", ir.FunctionType(_PTR, [_PTR]),
        ("wait", "spin", "idle", "sleep", "check", "nap", "woke", "run"),
    )
    b = ir.IRBuilder(entry)
    slot = b.bitcast(worker.args[0], _SLOT.as_pointer())
    gen, sleeping = p.field(b, slot, _GEN), p.field(b, slot, _SLEEPING)
    mutex, cond = p.opaque(b, slot, _MUTEX), p.opaque(b, slot, _COND)
    b.branch(wait)

    b.position_at_end(wait)
    seen = b.phi(_I32, "seen")
    seen.add_incoming(_I32(0), entry)
    deadline = b.add(b.call(p.cycles, []), _I64(SPIN_CYCLES))
    b.branch(spin)

    b.position_at_end(spin)
    now = _load(b, gen, "acquire")
    b.cbranch(b.icmp_unsigned("!=", now, seen), run, idle)

    b.position_at_end(idle)
    p.relax(b)
    b.cbranch(b.icmp_unsigned("<", b.call(p.cycles, []), deadline), spin, sleep)

    b.position_at_end(sleep)
    b.call(p.libc["pthread_mutex_lock"], [mutex])
    _store(b, _I32(1), sleeping, "seq_cst")
    b.branch(check)

    b.position_at_end(check)
    latest = _load(b, gen, "seq_cst")
    b.cbranch(b.icmp_unsigned("==", latest, seen), nap, woke)

    b.position_at_end(nap)
    b.call(p.libc["pthread_cond_wait"], [cond, mutex])
    b.branch(check)

    b.position_at_end(woke)
    _store(b, _I32(0), sleeping, "seq_cst")
    b.call(p.libc["pthread_mutex_unlock"], [mutex])
    b.branch(run)

    b.position_at_end(run)
    current = b.phi(_I32, "current")
    current.add_incoming(now, spin)
    current.add_incoming(latest, woke)
    launch = [b.load(p.field(b, slot, f)) for f in (_FN, _ARGS, _N, _GRAINS)]
    b.call(grains, launch)
    b.atomic_rmw("sub", p.pending, _I32(1), "release")
    seen.add_incoming(current, run)
    b.branch(wait)
    return worker


def _emit_pin(p: _Pool, b: ir.IRBuilder, thread: ir.Value, index: ir.Value, mask: ir.Value) -> None:
    """Pin worker `index` to CPU pin_cpus[index % pin_count], if there is a list
    (`worker_cpus`); a failure leaves it unpinned."""
    count = b.load(p.pin_count)
    with b.if_then(b.icmp_signed(">", count, _I64(0))):
        cpu = b.zext(b.load(b.gep(b.load(p.pin_cpus), [b.srem(index, count)], inbounds=True)), _I64)
        b.store(ir.Constant(mask.type.pointee, None), mask)
        word = b.gep(mask, [_I64(0), b.lshr(cpu, _I64(6))], inbounds=True)
        b.store(b.shl(_I64(1), b.and_(cpu, _I64(63))), word)
        b.call(p.libc["pthread_setaffinity_np"], [thread, _I64(CPU_SET_BYTES), b.bitcast(mask, _PTR)])


def _emit_grow(p: _Pool, worker: ir.Function) -> ir.Function:
    """`i64 grow(i64 want)`: start workers until there are `want` (or pthread_create
    fails); returns how many there are. Called by the pool's owner only."""
    grow, entry, head, start, started, done = p.function(
        f"{PREFIX}grow", ir.FunctionType(_I64, [_I64]), ("head", "start", "started", "done")
    )
    b = ir.IRBuilder(entry)
    tid = b.alloca(_I64)
    mask = b.alloca(ir.ArrayType(_I64, CPU_SET_BYTES // 8))
    b.branch(head)

    b.position_at_end(head)
    have = b.load(p.started)
    b.cbranch(b.icmp_signed("<", have, grow.args[0]), start, done)

    b.position_at_end(start)
    slot = p.slot(b, have)
    b.store(ir.Constant(_SLOT, None), slot)
    b.call(p.libc["pthread_mutex_init"], [p.opaque(b, slot, _MUTEX), _NULL])
    b.call(p.libc["pthread_cond_init"], [p.opaque(b, slot, _COND), _NULL])
    code = b.call(p.libc["pthread_create"], [tid, _NULL, worker, b.bitcast(slot, _PTR)])
    b.cbranch(b.icmp_signed("==", code, _I32(0)), started, done)

    b.position_at_end(started)
    if PINS:
        _emit_pin(p, b, b.load(tid), have, mask)
    b.call(p.libc["pthread_detach"], [b.load(tid)])
    b.store(b.add(have, _I64(1)), p.started)
    b.branch(head)

    b.position_at_end(done)
    b.ret(b.load(p.started))
    return grow


def _emit_parallel_for(p: _Pool, grow: ir.Function, grains: ir.Function) -> None:
    """The entry point (module docstring): the caller and up to threads - 1 workers
    claim the launch's grains (`_emit_grains`)."""
    kind = ir.FunctionType(_VOID, [_THUNK, _PTR, _I64, _I64])
    run, entry, claim, serial, pooled, share, mine, wait, idle, finish = p.function(
        SYMBOL, kind, ("claim", "serial", "pooled", "share", "mine", "wait", "idle", "finish")
    )
    fn, args, n, threads = run.args
    b = ir.IRBuilder(entry)
    chunks = _min(b, _min(b, n, threads), _I64(MAX_WORKERS + 1))
    b.cbranch(b.icmp_signed(">", chunks, _I64(1)), claim, serial)

    b.position_at_end(claim)
    owned = b.extract_value(b.cmpxchg(p.busy, _I32(0), _I32(1), "acquire", "monotonic"), 1)
    b.cbranch(owned, pooled, serial)

    b.position_at_end(serial)
    b.call(fn, [args, _I64(0), n])
    b.ret_void()

    b.position_at_end(pooled)
    workers = _min(b, b.call(grow, [b.sub(chunks, _I64(1))]), b.sub(chunks, _I64(1)))
    count = _min(b, n, b.mul(b.add(workers, _I64(1)), _I64(GRAINS_PER_THREAD)))
    _store(b, b.trunc(workers, _I32), p.pending, "seq_cst")
    _store(b, _I64(0), p.next, "seq_cst")
    b.cbranch(b.icmp_signed(">", workers, _I64(0)), share, mine)

    b.position_at_end(share)
    k = b.phi(_I64, "k")
    k.add_incoming(_I64(1), pooled)
    slot = p.slot(b, b.sub(k, _I64(1)))
    for f, value in ((_FN, fn), (_ARGS, args), (_N, n), (_GRAINS, count)):
        b.store(value, p.field(b, slot, f))
    b.atomic_rmw("add", p.field(b, slot, _GEN), _I32(1), "seq_cst")
    with b.if_then(b.icmp_unsigned("!=", _load(b, p.field(b, slot, _SLEEPING), "seq_cst"), _I32(0))):
        mutex = p.opaque(b, slot, _MUTEX)
        b.call(p.libc["pthread_mutex_lock"], [mutex])
        b.call(p.libc["pthread_cond_signal"], [p.opaque(b, slot, _COND)])
        b.call(p.libc["pthread_mutex_unlock"], [mutex])
    following = b.add(k, _I64(1))
    k.add_incoming(following, b.block)
    b.cbranch(b.icmp_signed("<=", following, workers), share, mine)

    b.position_at_end(mine)
    b.call(grains, [fn, args, n, count])
    deadline = b.add(b.call(p.cycles, []), _I64(CALLER_SPIN_CYCLES))
    b.branch(wait)

    b.position_at_end(wait)
    b.cbranch(b.icmp_unsigned("==", _load(b, p.pending, "acquire"), _I32(0)), finish, idle)

    b.position_at_end(idle)
    with b.if_else(b.icmp_unsigned("<", b.call(p.cycles, []), deadline)) as (then, otherwise):
        with then:
            p.relax(b)
        with otherwise:
            b.call(p.libc["sched_yield"], [])
    b.branch(wait)

    b.position_at_end(finish)
    _store(b, _I32(0), p.busy, "release")
    b.ret_void()


def _emit_set_pins(p: _Pool) -> None:
    """`void set_pins(i32 *cpus, i64 count)`: the CPUs workers started from now on
    are pinned to (`worker_cpus`; count 0: none). Called by `load`, before any launch."""
    set_pins, entry = p.function(f"{PREFIX}set_pins", ir.FunctionType(_VOID, [_I32.as_pointer(), _I64]), ())
    set_pins.linkage = "external"
    b = ir.IRBuilder(entry)
    b.store(set_pins.args[0], p.pin_cpus)
    b.store(set_pins.args[1], p.pin_count)
    b.ret_void()


def _emit_forget(p: _Pool) -> None:
    """`void forget()`: after a fork, the child has none of the parent's workers."""
    forget, entry = p.function(f"{PREFIX}forget", ir.FunctionType(_VOID, []), ())
    forget.linkage = "external"
    b = ir.IRBuilder(entry)
    for g in (p.started, p.busy, p.pending, p.next):
        b.store(ir.Constant(g.value_type, 0), g)
    b.ret_void()


def module_text() -> str:
    """The pool's LLVM IR."""
    p = _Pool()
    grains = _emit_grains(p)
    _emit_parallel_for(p, _emit_grow(p, _emit_worker(p, grains)), grains)
    _emit_set_pins(p)
    _emit_forget(p)
    p.module.triple = host_target().triple
    return str(p.module)


def _cached_module_text() -> str:
    """`module_text()`, from the disk cache when it is there: building it with
    llvmlite takes ~2 ms, as long as loading a whole cached module."""
    knobs = f"{MAX_WORKERS} {GRAINS_PER_THREAD} {SPIN_CYCLES} {CALLER_SPIN_CYCLES} {OPAQUE_BYTES} {PINS}"
    entry = disk_cache.key("pool", host_target().key, knobs)
    stored = disk_cache.load("pool", entry)
    if stored is not None:
        return stored.decode()
    text = module_text()
    disk_cache.store("pool", entry, text.encode())
    return text


def worker_cpus() -> list[int]:
    """The CPUs the workers are pinned to, worker i to entry i modulo the length: the
    CPUs this process may run on, the first one last (so that up to one worker per
    other CPU leaves it to the caller, which is never pinned); none where the pool
    cannot pin or `PIN_VARIABLE` is 0.

    Why pin: measured on a 2-vCPU KVM guest, the kernel woke an unpinned worker on
    the CPU its caller was computing on (the idle vCPU, halted at the host, did not
    count as idle) about one call in three, and both threads then shared that CPU
    for the call or for many: a 1.5 ms Mamba2 prefill took 3.3-4 ms. A pinned worker
    wakes on its own CPU, and the caller, if it was there, is moved off once."""
    if not PINS or os.environ.get(PIN_VARIABLE, "1") == "0":
        return []
    allowed = sorted(cpu for cpu in os.sched_getaffinity(0) if cpu < CPU_SET_BYTES * 8)
    return allowed[1:] + allowed[:1]


_compiled: CompiledModule | None = None
_pins: ctypes.Array[ctypes.c_int32] | None = None
"""The CPU list the pool's code points to (kept alive here)."""
_lock = threading.Lock()


def load() -> None:
    """JIT the pool (once per process; its machine code comes from the disk cache
    like any module's) and register `SYMBOL` for the modules that call it."""
    global _compiled
    with _lock:
        if _compiled is not None:
            return
        compiled = compile_text(_cached_module_text())
        _set_pins(compiled, worker_cpus())
        forget = ctypes.CFUNCTYPE(None)(compiled.address(f"{PREFIX}forget"))
        os.register_at_fork(after_in_child=forget)
        llvm.add_symbol(SYMBOL, compiled.address(SYMBOL))
        # Never freed, not even at interpreter exit: workers still spinning in the
        # pool's code (for SPIN_CYCLES after a launch) would run into freed memory.
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(compiled))
        _compiled = compiled


def _set_pins(compiled: CompiledModule, cpus: list[int]) -> None:
    global _pins
    _pins = (ctypes.c_int32 * max(1, len(cpus)))(*cpus)
    set_pins = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64)(compiled.address(f"{PREFIX}set_pins"))
    set_pins(ctypes.addressof(_pins), len(cpus))
