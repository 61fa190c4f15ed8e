"""v2's machinery, written once for every workload: persistent worker processes, each
filling its columns of one batch in a shared-memory segment (WorkerPool: start, segment,
call, close; a generator shows it, and makes its calls, through core/pool_client.py).

A worker (`serve`) runs the workload's v1 code on its contiguous slice lo..hi-1 of the N
environments, keyed by their global indices, so its columns are v1's; it writes them into
the segment and answers "done": no transition crosses a pipe. Before it serves, it times
its own code on scratch copies of its environments (`calibrate`) and answers ("ready",
seconds per transition), from which the first call's deadline is set.

Failures (docs/RELIABILITY.md): a call must come back within max(floor, factor x expected),
expected = the call's units x seconds per unit (the workers' calibration, then the slowest
call measured); until every worker is ready the start-up floor applies. Past the limit a
call goes on only while its workers use CPU (up to the hard factor). A worker that dies,
raises, stays stopped (SIGSTOP) for the stop grace or passes the deadline is a one-line
WorkerFailure (a RuntimeError: a failed run, exit status 1 under the harness) naming it; the
others are terminated, the segment unlinked, and the pool refuses further calls. close(),
an interrupt, garbage collection and interpreter exit stop the workers and unlink the
segment, whose name carries this process's pid and start time (procutil.sweep removes what
a SIGKILLed run left). A worker ends with its parent, even mid-call.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import signal
import time
import traceback
import weakref
from multiprocessing import shared_memory
from multiprocessing.connection import wait
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from core import procutil
from core.procutil import describe_exit

ALIGN = 64
CALIBRATE_S = 0.005
JOIN_TIMEOUT_S = 2.0
Arrays = Sequence[Tuple[str, tuple, object]]     # (name, shape after (T, N), dtype)


class WorkerFailure(RuntimeError):
    """A worker died, raised, hung or stayed stopped (docs/RELIABILITY.md: a failed run)."""


def context(preload: str):
    """The forkserver context, with the worker's module imported once in the fork server
    (so each worker forks with NumPy and the workload's v1 already loaded)."""
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload([preload])
    return ctx


def cores() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
               else (os.cpu_count() or 1))


# -- the batch in a segment ----------------------------------------------------------------
def layout(arrays: Arrays, T: int, N: int):
    """[(name, dtype, shape, offset)] of the arrays in a segment, and its size in bytes."""
    out, off = [], 0
    for name, tail, dt in arrays:
        shape = (T, N) + tuple(tail)
        out.append((name, np.dtype(dt), shape, off))
        off += -(-int(np.prod(shape)) * np.dtype(dt).itemsize // ALIGN) * ALIGN
    return out, max(off, ALIGN)


def views(buf, arrays: Arrays, T: int, N: int) -> Dict[str, np.ndarray]:
    return {name: np.ndarray(shape, dt, buffer=buf, offset=off)
            for name, dt, shape, off in layout(arrays, T, N)[0]}


# -- the worker's side -------------------------------------------------------------------
def calibrate(make: Callable[[int, int], object], lo: int, hi: int) -> float:
    """Seconds one transition of this worker's code takes: generate(1) on scratch
    generators of 1, 2, 4, ... of its environments (`make(lo, hi)`) until one call takes
    CALIBRATE_S or the slice is used up, after one untimed call. The real ones are untouched."""
    make(lo, lo + 1).generate(1)
    m, per = 1, None
    while True:
        g = make(lo, lo + m)
        t0 = time.perf_counter()
        g.generate(1)
        dt = time.perf_counter() - t0
        per = dt / m if per is None else max(dt / m, 0.5 * per)
        if dt >= CALIBRATE_S or lo + m >= hi:
            return per
        m = min(hi - lo, 2 * m)


def follow_parent() -> None:
    """End this worker when the process that asked for it ends, whatever it is doing: drop
    the fork server's "alive" pipe (a worker never asks it for children) and watch the
    parent's sentinel from a thread."""
    import threading
    from multiprocessing import forkserver
    fs = getattr(forkserver, "_forkserver", None)
    fd = getattr(fs, "_forkserver_alive_fd", None)
    if fd is not None:
        try:
            os.close(fd)
        except OSError:
            pass
        fs._forkserver_alive_fd = None
    parent = mp.parent_process()
    if parent is None or parent.sentinel is None:
        return

    def watch():
        wait([parent.sentinel])
        os._exit(0)
    threading.Thread(target=watch, name="v2-parent-watch", daemon=True).start()


def misbehave(fault: Optional[str]) -> None:
    """The test hook's faults (WorkerPool.inject_fault)."""
    if fault == "raise":
        raise RuntimeError("fault injected by the test hook")
    if fault == "hang":                     # alive, never answering
        while True:
            time.sleep(3600)
    if fault == "exit":
        os._exit(3)
    if fault in ("busy", "spin"):           # using CPU: 2.5 s, or for ever
        t_end = time.perf_counter() + (2.5 if fault == "busy" else 1e9)
        while time.perf_counter() < t_end:
            pass


def serve(conn, make: Callable[[int, int], object], lo: int, hi: int, n: int,
          arrays: Arrays) -> None:
    """A worker's life: ("ready", seconds per transition), then ("gen", T, segment name,
    weights or None, epsilon, fault or None) answered ("done",) after writing columns
    lo..hi-1 of `arrays` into the segment, until ("stop",) or EOF; an exception is answered
    ("error", "Type: message", traceback) and ends the worker."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)    # Ctrl-C is the parent's to handle
    if not procutil.die_with_parent(signal.SIGKILL, os.getppid()):
        return                                      # the fork server is gone already
    follow_parent()
    shm = None
    try:
        gen = make(lo, hi)
        conn.send(("ready", calibrate(make, lo, hi)))
        while True:
            try:
                msg = conn.recv()
            except EOFError:                        # the parent is gone
                return
            if msg[0] == "stop":
                return
            _, T, seg_name, weights, epsilon, fault = msg
            if shm is None or shm.name != seg_name:
                if shm is not None:
                    shm.close()
                shm = shared_memory.SharedMemory(name=seg_name)
            if weights is not None:
                gen.set_weights(weights)
            gen.set_epsilon(epsilon)
            misbehave(fault)
            batch = gen.generate(T)
            out = views(shm.buf, arrays, T, n)
            for name in out:
                out[name][:, lo:hi] = batch[name]
            del out, batch
            conn.send(("done",))
    except Exception as e:
        try:
            conn.send(("error", f"{type(e).__name__}: {e}", traceback.format_exc()))
        except Exception:
            pass
    finally:
        if shm is not None:
            shm.close()


# -- the parent's side -------------------------------------------------------------------
def shutdown(procs: list, conns: list, segments: list, polite: bool = True) -> None:
    """Stop the workers (asked, if idle; else terminated, then killed) and unlink the
    segments."""
    if polite:
        for c in conns:
            try:
                c.send(("stop",))
            except Exception:
                pass
        for p in procs:
            p.join(JOIN_TIMEOUT_S / max(1, len(procs)) + 0.2)
    for p in procs:
        if p.is_alive():
            p.terminate()
            p.join(0.5)
        if p.is_alive():
            p.kill()
            p.join(0.5)
    for c in conns:
        c.close()
    for seg in segments:
        try:
            seg.unlink()
        except FileNotFoundError:
            pass
        try:
            seg.close()
        except BufferError:        # arrays handed out still view it: freed when they go
            pass
    procs.clear()
    conns.clear()
    segments.clear()


class WorkerPool:
    """The workers of one generator, its segment and the deadline of every call."""

    def __init__(self, name: str, ctx, slices: List[Tuple[int, int]], segment_prefix: str = "v2"):
        self.name, self.ctx, self.slices, self.prefix = name, ctx, list(slices), segment_prefix
        self.procs: list = []
        self.conns: list = []
        self.segments: list = []
        self._finalizer = weakref.finalize(self, shutdown, self.procs, self.conns, self.segments)
        self.faults: Dict[int, str] = {}
        self.broken: Optional[str] = None
        self.ready = [False] * len(self.slices)
        self.worker_traceback: Optional[str] = None
        self.cost = procutil.CostModel()
        self.last_limit_s: Optional[float] = None

    def start(self, target, args_for: Callable[[int, int, int], tuple], label: str) -> None:
        """One process per slice: target(*args_for(w, lo, hi), the pipe's end)."""
        try:
            for w, (lo, hi) in enumerate(self.slices):
                parent_end, child_end = self.ctx.Pipe()
                p = self.ctx.Process(target=target, args=args_for(w, lo, hi) + (child_end,),
                                     name=f"{label}-{w}", daemon=True)
                p.start()
                child_end.close()
                self.procs.append(p)
                self.conns.append(parent_end)
        except BaseException:
            self.close()
            raise

    @property
    def closed(self) -> bool:
        return not self.procs

    def units(self, T: int) -> float:
        """A call's work in transitions of one worker: its largest slice, times how
        oversubscribed the cores are."""
        biggest = max(hi - lo for lo, hi in self.slices)
        return T * biggest * max(1.0, len(self.slices) / cores())

    def inject_fault(self, worker: int, how: str = "raise") -> None:
        """Test hook: worker `worker` misbehaves in the next call: "raise", "hang", "exit",
        "busy" (2.5 s of CPU first) or "spin" (CPU for ever)."""
        self.faults[worker] = how

    def segment(self, need: int):
        """(the segment, whether it is new): the current one, or one at least twice as large
        when it is too small (the old one retired; workers re-attach by name)."""
        seg = self.segments[-1] if self.segments else None
        if seg is not None and seg.size >= need:
            return seg, False
        new = shared_memory.SharedMemory(create=True, name=procutil.new_name(self.prefix),
                                         size=max(need, 2 * (seg.size if seg else 0)))
        if seg is not None:
            self.segments.remove(seg)
            seg.unlink()
            try:
                seg.close()
            except BufferError:
                pass
        self.segments.append(new)
        return new, True

    def call(self, T: int, weights, epsilon: float) -> None:
        """Every worker fills its columns of the current segment for T steps, or a
        WorkerFailure (the pool is then stopped). An interrupt stops it too."""
        if self.broken:
            raise WorkerFailure(f"{self.name}: generator unusable after an earlier failure: "
                                f"{self.broken}")
        try:
            seg = self.segments[-1]
            for w, c in enumerate(self.conns):
                try:
                    c.send(("gen", T, seg.name, weights, epsilon, self.faults.pop(w, None)))
                except OSError:              # BrokenPipeError: it died between calls
                    self._dead(w, "before generate()")
            self._wait_all(T)
        except WorkerFailure:
            raise
        except BaseException as e:          # KeyboardInterrupt included: leave nothing behind
            self.broken = f"interrupted by {type(e).__name__}"
            self._abort()
            raise

    def _fail(self, what: str):
        self.broken = what
        self._abort()
        raise WorkerFailure(what)

    def _abort(self) -> None:
        """Mid-call failure: the other workers are busy, so terminate them at once."""
        self._finalizer.detach()
        shutdown(self.procs, self.conns, self.segments, polite=False)

    def _dead(self, w: int, when: str):
        p = self.procs[w]
        p.join(1.0)
        self._fail(f"{self.name}: worker {w} (pid {p.pid}) {describe_exit(p.exitcode)} "
                   f"{when}; the workers were stopped")

    def _answer(self, w: int) -> bool:
        """Read worker w's message; True when it is done with the call."""
        try:
            msg = self.conns[w].recv()
        except (EOFError, OSError):
            self._dead(w, "during generate()")
        if msg[0] == "ready":
            self.ready[w] = True
            self.cost.calibrate(msg[1])
            return False
        if msg[0] == "done":
            return True
        self.worker_traceback = msg[2]
        self._fail(f"{self.name}: worker {w} (pid {self.procs[w].pid}) raised "
                   f"{' '.join(str(msg[1]).split())}; the workers were stopped")

    def _wait_all(self, T: int) -> None:
        """Every worker's "done" (after its "ready" on the first call) within the deadline;
        a dead worker, one stopped for the stop grace, or one past the deadline fails it."""
        remaining = set(range(len(self.procs)))
        by_obj = {}
        for w in remaining:
            by_obj[self.conns[w]] = ("conn", w)
            by_obj[self.procs[w].sentinel] = ("proc", w)
        units = self.units(T)
        all_ready = all(self.ready)
        limit = self.cost.limit_s(units) if all_ready else procutil.start_floor_s()
        clock = procutil.Clock(limit)
        stops, cpu = procutil.StopWatch(), procutil.CpuWatch()
        t_start = clock.used_s
        self.last_limit_s = limit
        while remaining:
            ready = wait([o for o, (_, w) in by_obj.items() if w in remaining],
                         timeout=min(0.25, max(0.01, clock.left_s())))
            clock.tick()
            for obj in ready:
                kind, w = by_obj[obj]
                if w not in remaining:
                    continue
                if kind == "proc":
                    if not self.conns[w].poll():    # no last answer to read first
                        self._dead(w, "during generate()")
                    continue
                if self._answer(w):
                    remaining.discard(w)
                elif all(self.ready) and not all_ready:
                    all_ready = True                # the call proper starts now
                    t_start = clock.used_s
                    clock.limit_s = t_start + self.cost.limit_s(units)
                    self.last_limit_s = clock.limit_s - t_start
            if not remaining:
                break
            pids = [self.procs[w].pid for w in remaining]
            stopped = stops.check(pids, clock.used_s)
            if stopped is not None:
                w = next(w for w in remaining if self.procs[w].pid == stopped)
                self._fail(f"{self.name}: worker {w} (pid {stopped}) is stopped (SIGSTOP?) and "
                           f"has not answered for {stops.grace_s:g} s; the workers were stopped")
            if procutil.over_deadline(clock, cpu, pids):
                what = "start" if not all_ready else f"a call of T={T}"
                late = ", ".join(map(str, sorted(remaining)))
                self._fail(f"{self.name}: worker(s) {late} did not finish {what} within its "
                           f"deadline of {clock.limit_s - t_start:.1f} s (hung?); the workers "
                           f"were stopped")
        if all_ready:
            self.cost.observe(units, clock.used_s - t_start)

    def close(self) -> None:
        self._finalizer()
