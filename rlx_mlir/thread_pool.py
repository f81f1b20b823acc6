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
their parallel launchers (`lowering/core/parallel.py`), so their machine code (also
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

A worker takes the launch only by exchanging the slot's claim from 1 to 0
before it reads the launch. Once the caller has run out of grains, it takes
back the claims no worker has taken (a worker asleep, or descheduled on a core
shared with another process, would find nothing left to do) and counts those
workers done itself, so it never waits for a worker to wake up for nothing. A
caller that still waited on a worker longer than it computed (a worker
descheduled in the middle of its grain) runs the next `BACKOFF_LAUNCHES`
launches alone: on a loaded machine, two threads must not be slower than one.

On Linux, a worker that finds itself on its caller's CPU when a launch starts
moves off it for good (`_emit_avoid`): the scheduler otherwise sometimes wakes
workers on the CPU their caller is busy on, and keeps them there.

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
from rlx_mlir.jit import CompiledModule, compile_text
from rlx_mlir.target import available_cpus, target


def thread_count(requested: int) -> int:
    """The threads a large kernel is split over when `requested` are asked for: 0
    means one per CPU this process may run on (the one place that rule lives)."""
    return requested or available_cpus()


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
did not steady the selective scan, whose run-to-run spread (2.3-3.7 ms) came from
workers woken on their caller's CPU (`_emit_avoid`)."""

SPIN_CYCLES = 1 << 18
"""Cycle-counter ticks (~0.1 ms) a worker keeps spinning after its last launch before
it sleeps: back-to-back launches (the steps of a recurrence) then never pay a wake-up."""

CALLER_SPIN_CYCLES = 1 << 16
"""Cycle-counter ticks (~25 us) the caller spins on unfinished grains before it yields
its core between checks: on a loaded machine a worker may have been descheduled."""

BACKOFF_LAUNCHES = 32
"""Launches run on the calling thread alone after one whose caller waited on its
workers longer than it computed (plus `STALL_MIN_CYCLES`): a worker that took
its grain and was then descheduled, as on a core shared with another busy process.
Measured on 2 vCPUs at load 10: an 8M-element elementwise kernel took 6.7 ms on 2
threads and 2.7 ms on 1. The next launch after the backoff tries the workers again."""

STALL_MIN_CYCLES = 1 << 21
"""Cycle-counter ticks (~0.8 ms) a caller must have waited, and longer than its
own grains took, for a launch to count as stalled: a descheduled worker costs
its caller a scheduler time slice (milliseconds), while a worker that merely
started late (woken from sleep on a KVM guest) costs a fraction of that. With
a bound of ~50 us over the caller's own time, a layer norm of [2048, 1024] on
a quiet 2-vCPU host backed off on most launches (0.54 ms instead of 0.37)."""

OPAQUE_BYTES = 128
"""Room for a pthread_mutex_t or a pthread_cond_t on every supported libc (glibc: 40 and 48 bytes)."""

AFFINITY_VARIABLE = "RLX_MLIR_WORKER_AFFINITY"
"""Set to 0 to leave where workers run to the kernel alone (see `_emit_avoid`)."""

CPU_SET_BYTES = 128
"""sizeof(cpu_set_t) in glibc and musl: CPUs 0 .. 1023."""

AFFINITY = sys.platform.startswith("linux")
"""Whether the pool can move its workers (sched_getcpu and sched_setaffinity are Linux's)."""

_I8, _I32, _I64 = ir.IntType(8), ir.IntType(32), ir.IntType(64)
_PTR = _I8.as_pointer()
_VOID = ir.VoidType()
_NULL = ir.Constant(_PTR, None)
_THUNK = ir.FunctionType(_VOID, [_PTR, _I64, _I64]).as_pointer()
_OPAQUE = ir.ArrayType(_I8, OPAQUE_BYTES)
_SLOT = ir.LiteralStructType(
    [_I32, _I32, _THUNK, _PTR, _I64, _I64, _OPAQUE, _OPAQUE, _I32, _I32, ir.ArrayType(_I8, 16)]
)
"""One worker's slot: generation, sleeping flag, the launch (thunk, args, n, grains), mutex,
condition, the caller's CPU, the claim on the launch, and padding to 320 bytes, so that
the slots of the 64-byte aligned array never share a cache line (with 64-bit pointers)."""
_GEN, _SLEEPING, _FN, _ARGS, _N, _GRAINS, _MUTEX, _COND, _CALLER_CPU, _CLAIM = range(10)
_CPU_SET = ir.ArrayType(_I64, CPU_SET_BYTES // 8)

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
    **(
        {"sched_getcpu": ir.FunctionType(_I32, []), "sched_setaffinity": ir.FunctionType(_I32, [_I32, _I64, _PTR])}
        if AFFINITY
        else {}
    ),
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
        self.backoff = self._global("backoff", _I64)
        self.backoff_launches = self._global("backoff_launches", _I64)
        self.backoff_launches.initializer = _I64(BACKOFF_LAUNCHES)
        self.allowed = self._global("allowed", _CPU_SET)
        self.moving = self._global("moving", _I32)
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


def _emit_worker(p: _Pool, grains: ir.Function, avoid: ir.Function | None) -> ir.Function:
    """`ptr worker(ptr slot)`: forever wait for the slot's generation to move past
    the last one run (spinning, then sleeping), take the slot's claim on the launch
    (unless its caller revoked it: then wait again, having read nothing), move off
    the caller's CPU if it is on it (`avoid`), claim grains of the launch until none
    is left, count itself done."""
    worker, entry, wait, spin, idle, sleep, check, nap, woke, run, take = p.function(
        f"{PREFIX}worker",
        ir.FunctionType(_PTR, [_PTR]),
        ("wait", "spin", "idle", "sleep", "check", "nap", "woke", "run", "take"),
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
    seen.add_incoming(current, run)
    if avoid is not None:  # where it runs matters for the next launches, revoked or not
        b.call(avoid, [_load(b, p.field(b, slot, _CALLER_CPU), "monotonic")])
    claimed = b.atomic_rmw("xchg", p.field(b, slot, _CLAIM), _I32(0), "acq_rel")
    b.cbranch(b.icmp_unsigned("!=", claimed, _I32(0)), take, wait)  # else its caller revoked it

    b.position_at_end(take)
    launch = [b.load(p.field(b, slot, f)) for f in (_FN, _ARGS, _N, _GRAINS)]
    b.call(grains, launch)
    b.atomic_rmw("sub", p.pending, _I32(1), "release")
    seen.add_incoming(current, take)
    b.branch(wait)
    return worker


def _emit_avoid(p: _Pool) -> ir.Function:
    """`void avoid(i32 caller)`: a worker running on its caller's CPU restricts
    itself to the other allowed CPUs, which moves it at once and keeps the kernel
    from waking it there again (until the caller itself moves there: then it moves
    again). Measured on a 2-vCPU KVM guest: the kernel woke the unpinned worker on
    the CPU its caller was computing on (the idle vCPU, halted at the host, did not
    count as idle) about one launch in three and left both threads sharing that CPU
    for many launches: a 1.5 ms Mamba2 prefill took 3.3-4 ms. Pinning workers to
    fixed CPUs instead was worse when the caller sat on a worker's CPU. Off unless
    `set_cpus` enabled it (two or more allowed CPUs, `AFFINITY_VARIABLE` not 0)."""
    avoid, entry, check, move, done = p.function(
        f"{PREFIX}avoid", ir.FunctionType(_VOID, [_I32]), ("check", "move", "done")
    )
    caller = avoid.args[0]
    b = ir.IRBuilder(entry)
    mask = b.alloca(_CPU_SET)
    b.cbranch(b.icmp_unsigned("!=", b.load(p.moving), _I32(0)), check, done)

    b.position_at_end(check)
    here = b.call(p.libc["sched_getcpu"], [])
    in_set = b.icmp_unsigned("<", caller, _I32(CPU_SET_BYTES * 8))  # also false for -1 (unknown)
    b.cbranch(b.and_(in_set, b.icmp_signed("==", here, caller)), move, done)

    b.position_at_end(move)
    b.store(b.load(p.allowed), mask)
    word = b.gep(mask, [_I64(0), b.zext(b.lshr(caller, _I32(6)), _I64)], inbounds=True)
    bit = b.shl(_I64(1), b.zext(b.and_(caller, _I32(63)), _I64))
    b.store(b.and_(b.load(word), b.xor(bit, _I64(-1))), word)
    b.call(p.libc["sched_setaffinity"], [_I32(0), _I64(CPU_SET_BYTES), b.bitcast(mask, _PTR)])
    b.branch(done)

    b.position_at_end(done)
    b.ret_void()
    return avoid


def _emit_grow(p: _Pool, worker: ir.Function) -> ir.Function:
    """`i64 grow(i64 want)`: start workers until there are `want` (or pthread_create
    fails); returns how many there are. Called by the pool's owner only."""
    grow, entry, head, start, started, done = p.function(
        f"{PREFIX}grow", ir.FunctionType(_I64, [_I64]), ("head", "start", "started", "done")
    )
    b = ir.IRBuilder(entry)
    tid = b.alloca(_I64)
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
    run, entry, claim, serial, owned_block, backing_off, pooled, share, mine, revoke, wait, idle, finish = p.function(
        SYMBOL,
        kind,
        ("claim", "serial", "owned", "backing_off", "pooled", "share", "mine", "revoke", "wait", "idle", "finish"),
    )
    fn, args, n, threads = run.args
    b = ir.IRBuilder(entry)
    chunks = _min(b, _min(b, n, threads), _I64(MAX_WORKERS + 1))
    b.cbranch(b.icmp_signed(">", chunks, _I64(1)), claim, serial)

    b.position_at_end(claim)
    owned = b.extract_value(b.cmpxchg(p.busy, _I32(0), _I32(1), "acquire", "monotonic"), 1)
    b.cbranch(owned, owned_block, serial)

    b.position_at_end(serial)
    b.call(fn, [args, _I64(0), n])
    b.ret_void()

    b.position_at_end(owned_block)  # after a launch that waited on a descheduled worker, run alone a while
    left = b.load(p.backoff)
    b.cbranch(b.icmp_signed(">", left, _I64(0)), backing_off, pooled)

    b.position_at_end(backing_off)
    b.store(b.sub(left, _I64(1)), p.backoff)
    _store(b, _I32(0), p.busy, "release")
    b.call(fn, [args, _I64(0), n])
    b.ret_void()

    b.position_at_end(pooled)
    workers = _min(b, b.call(grow, [b.sub(chunks, _I64(1))]), b.sub(chunks, _I64(1)))
    count = _min(b, n, b.mul(b.add(workers, _I64(1)), _I64(GRAINS_PER_THREAD)))
    _store(b, b.trunc(workers, _I32), p.pending, "seq_cst")
    _store(b, _I64(0), p.next, "seq_cst")
    caller_cpu = b.call(p.libc["sched_getcpu"], []) if AFFINITY else _I32(-1)
    b.cbranch(b.icmp_signed(">", workers, _I64(0)), share, mine)

    b.position_at_end(share)
    k = b.phi(_I64, "k")
    k.add_incoming(_I64(1), pooled)
    slot = p.slot(b, b.sub(k, _I64(1)))
    for f, value in ((_FN, fn), (_ARGS, args), (_N, n), (_GRAINS, count)):
        b.store(value, p.field(b, slot, f))
    _store(b, caller_cpu, p.field(b, slot, _CALLER_CPU), "monotonic")  # read unclaimed too
    _store(b, _I32(1), p.field(b, slot, _CLAIM), "release")
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
    started = b.call(p.cycles, [])
    b.call(grains, [fn, args, n, count])
    done_own = b.call(p.cycles, [])
    deadline = b.add(done_own, _I64(CALLER_SPIN_CYCLES))
    b.cbranch(b.icmp_signed(">", workers, _I64(0)), revoke, wait)

    # Every grain is claimed: a worker that has not taken its claim yet (asleep, or
    # descheduled on a shared core) would find nothing to do, so it is not waited for.
    b.position_at_end(revoke)
    j = b.phi(_I64, "j")
    j.add_incoming(_I64(1), mine)
    unclaimed = b.atomic_rmw("xchg", p.field(b, p.slot(b, b.sub(j, _I64(1))), _CLAIM), _I32(0), "acq_rel")
    with b.if_then(b.icmp_unsigned("!=", unclaimed, _I32(0))):
        b.atomic_rmw("sub", p.pending, _I32(1), "release")
    after = b.add(j, _I64(1))
    j.add_incoming(after, b.block)
    b.cbranch(b.icmp_signed("<=", after, workers), revoke, wait)

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
    waited = b.sub(b.call(p.cycles, []), done_own)
    own = b.sub(done_own, started)
    stalled = b.and_(b.icmp_unsigned(">", waited, own), b.icmp_unsigned(">", waited, _I64(STALL_MIN_CYCLES)))
    with b.if_then(stalled):
        b.store(b.load(p.backoff_launches), p.backoff)
    _store(b, _I32(0), p.busy, "release")
    b.ret_void()


def _emit_set_cpus(p: _Pool) -> None:
    """`void set_cpus(i64 *allowed)`: the process's allowed CPUs (a cpu_set_t), which
    turns `avoid` on; called by `load` before any launch, where workers can move."""
    set_cpus, entry = p.function(f"{PREFIX}set_cpus", ir.FunctionType(_VOID, [_CPU_SET.as_pointer()]), ())
    set_cpus.linkage = "external"
    b = ir.IRBuilder(entry)
    b.store(b.load(set_cpus.args[0]), p.allowed)
    b.store(_I32(1), p.moving)
    b.ret_void()


def _emit_set_backoff(p: _Pool) -> None:
    """`void set_backoff(i64 launches)`: how many launches run alone after a stall
    (`BACKOFF_LAUNCHES`; 0: never), the current backoff cleared."""
    set_backoff, entry = p.function(f"{PREFIX}set_backoff", ir.FunctionType(_VOID, [_I64]), ())
    set_backoff.linkage = "external"
    b = ir.IRBuilder(entry)
    b.store(set_backoff.args[0], p.backoff_launches)
    b.store(_I64(0), p.backoff)
    b.ret_void()


def _emit_forget(p: _Pool) -> None:
    """`void forget()`: after a fork, the child has none of the parent's workers."""
    forget, entry = p.function(f"{PREFIX}forget", ir.FunctionType(_VOID, []), ())
    forget.linkage = "external"
    b = ir.IRBuilder(entry)
    for g in (p.started, p.busy, p.pending, p.next, p.backoff):
        b.store(ir.Constant(g.value_type, 0), g)
    b.ret_void()


def module_text() -> str:
    """The pool's LLVM IR."""
    p = _Pool()
    grains = _emit_grains(p)
    worker = _emit_worker(p, grains, _emit_avoid(p) if AFFINITY else None)
    _emit_parallel_for(p, _emit_grow(p, worker), grains)
    _emit_set_cpus(p)
    _emit_set_backoff(p)
    _emit_forget(p)
    p.module.triple = target("native").triple
    return str(p.module)


def _cached_module_text() -> str:
    """`module_text()`, from the disk cache when it is there: building it with
    llvmlite takes ~2 ms, as long as loading a whole cached module."""
    knobs = f"{MAX_WORKERS} {GRAINS_PER_THREAD} {SPIN_CYCLES} {CALLER_SPIN_CYCLES} {OPAQUE_BYTES} {AFFINITY}"
    entry = disk_cache.key("pool", target("native").key, knobs)
    stored = disk_cache.load("pool", entry)
    if stored is not None:
        return stored.decode()
    text = module_text()
    disk_cache.store("pool", entry, text.encode())
    return text


_compiled: CompiledModule | None = None
_lock = threading.Lock()


def load() -> None:
    """JIT the pool (once per process; its machine code comes from the disk cache
    like any module's) and register `SYMBOL` for the modules that call it."""
    global _compiled
    with _lock:
        if _compiled is not None:
            return
        compiled = compile_text(_cached_module_text(), target("native"))
        _set_cpus(compiled)
        forget = ctypes.CFUNCTYPE(None)(compiled.address(f"{PREFIX}forget"))
        os.register_at_fork(after_in_child=forget)
        llvm.add_symbol(SYMBOL, compiled.address(SYMBOL))
        # Never freed, not even at interpreter exit: workers still spinning in the
        # pool's code (for SPIN_CYCLES after a launch) would run into freed memory.
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(compiled))
        _compiled = compiled


def set_backoff(launches: int) -> None:
    """How many launches run on their calling thread alone after one that waited on
    a stalled worker (`BACKOFF_LAUNCHES` by default; 0 turns the backoff off, as
    tests of how launches split do)."""
    load()
    assert _compiled is not None
    ctypes.CFUNCTYPE(None, ctypes.c_int64)(_compiled.address(f"{PREFIX}set_backoff"))(launches)


def _set_cpus(compiled: CompiledModule) -> None:
    """Let workers move off their caller's CPU (`_emit_avoid`) where they can."""
    if not AFFINITY or os.environ.get(AFFINITY_VARIABLE, "1") == "0":
        return
    allowed = [cpu for cpu in os.sched_getaffinity(0) if cpu < CPU_SET_BYTES * 8]
    if len(allowed) < 2:
        return
    words = (ctypes.c_uint64 * (CPU_SET_BYTES // 8))()
    for cpu in allowed:
        words[cpu // 64] |= 1 << (cpu % 64)
    ctypes.CFUNCTYPE(None, ctypes.c_void_p)(compiled.address(f"{PREFIX}set_cpus"))(ctypes.addressof(words))
