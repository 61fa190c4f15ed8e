"""v2 (chess): v1's games in persistent worker processes, the batch in shared memory.

The generator starts min(workers, N) worker processes once (forkserver; NOTES.md says why)
and gives each a contiguous slice of the N games (worker.py runs v1's code on it). A call
of generate(T) sends every worker one small message -- T, the shared-memory segment's name,
the new weights if set_weights was called since the last call, epsilon -- and waits for the
"done" answers while watching each worker's process sentinel: a worker that dies, raises or
stays stopped becomes a one-line WorkerFailure (a RuntimeError: a failed run, exit status 1
under the harness, where a StudyError is a refused input, status 2) naming it, the others are
terminated, and the generator refuses further calls. close(), an interrupt, garbage collection and interpreter
exit all stop the workers and unlink the segment.

Deadlines (docs/RELIABILITY.md): a call must come back within max(floor, factor x expected),
expected = T x (largest slice) x max(1, workers / cores) x seconds per transition: the
workers' own calibration, then the slowest call measured, scaled up with a larger network.
Until every worker is ready the start-up floor applies. Past the limit a call goes on only
while all its workers use CPU (up to the hard factor). The segment's name carries this
process's pid and start time, so what a SIGKILLed run leaves the next harness command
removes (core/procutil.py, sweep).
"""
from __future__ import annotations

import multiprocessing as mp
import os
import weakref
from dataclasses import replace
from multiprocessing import shared_memory
from multiprocessing.connection import wait

import numpy as np

from core import procutil
from core.api import GenConfig, Generator
from core.errors import StudyError
from core.procutil import describe_exit
from versions.chess.common import spec
from versions.chess.common.net import check_weights, init_weights
from versions.chess.v1_python.rollout import check_config

from . import worker as W

MAX_WORKERS = 64
START_METHOD = "forkserver"
JOIN_TIMEOUT_S = 2.0
STEP_MADDS = 2_000_000      # v1's python-chess step, in multiply-adds of the forward's time


def net_work(hidden: int) -> float:
    """Relative cost of one egreedy transition with hidden size H (the forward's
    multiply-adds plus the step's)."""
    return STEP_MADDS + spec.OBS_DIM * hidden + hidden * hidden + hidden * spec.N_ACTIONS


def cores() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
               else (os.cpu_count() or 1))


def blas_pool() -> int:
    """Threads of this process's BLAS pool: what v1's forward would use here (every core by
    default; the bench pins it to one)."""
    try:
        from threadpoolctl import threadpool_info
        n = [i.get("num_threads") or 1 for i in threadpool_info() if i.get("user_api") == "blas"]
        return max(n) if n else 1
    except Exception:           # no threadpoolctl or an odd library: one thread each
        return 1


def context():
    ctx = mp.get_context(START_METHOD)
    # imported once in the fork server: each worker forks with python-chess and v1 loaded
    ctx.set_forkserver_preload(["versions.chess.v2_multiprocessing.worker"])
    return ctx


def _shutdown(procs, conns, segments, polite=True):
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


def check_workers(workers) -> int:
    if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) \
            or not 1 <= workers <= MAX_WORKERS:
        raise StudyError(f"v2_multiprocessing: workers must be an integer in [1, {MAX_WORKERS}], "
                         f"got {workers!r}")
    return int(workers)


class WorkerFailure(RuntimeError):
    """A worker died, raised, hung or stayed stopped (docs/RELIABILITY.md: a failed run)."""


class MultiprocessingChessGenerator(Generator):
    def __init__(self, cfg: GenConfig):
        nw = check_workers(cfg.workers)
        check_config(replace(cfg, workers=1))          # v1's checks of everything else
        super().__init__(cfg)
        n = int(cfg.n_envs)
        self.epsilon = spec.check_epsilon(cfg.epsilon)
        weights = None
        if cfg.policy == "egreedy":
            weights = check_weights(cfg.weights if cfg.weights is not None
                                    else init_weights(int(cfg.seed)))
        elif cfg.weights is not None:
            check_weights(cfg.weights)                  # refused as v1 refuses it
        nw = min(nw, n)                                 # every worker needs a game
        self.workers_used = nw
        self.slices = [(w * n // nw, (w + 1) * n // nw) for w in range(nw)]
        self._procs, self._conns, self._segments = [], [], []
        self._finalizer = weakref.finalize(self, _shutdown, self._procs, self._conns,
                                           self._segments)
        self._pending_weights = None
        self._faults = {}
        self._broken = None
        self._views = None
        self._ready = [False] * nw
        self.worker_traceback = None
        self.cost = procutil.CostModel()
        self.hidden = int(weights["w1"].shape[0]) if weights is not None else 0
        self.last_limit_s = None
        ctx = context()
        wcfg = replace(cfg, weights=weights, epsilon=self.epsilon, n_envs=n, workers=1)
        blas = max(1, blas_pool() // nw)    # each worker a share of v1's BLAS pool
        try:
            for w, (lo, hi) in enumerate(self.slices):
                parent_end, child_end = ctx.Pipe()
                p = ctx.Process(target=W.worker_main, name=f"chess-v2-worker-{w}", daemon=True,
                                args=(w, wcfg, lo, hi, child_end, blas))
                p.start()
                child_end.close()
                self._procs.append(p)
                self._conns.append(parent_end)
        except BaseException:
            self.close()
            raise

    @property
    def worker_pids(self):
        return [p.pid for p in self._procs]

    @property
    def segment_names(self):
        return [s.name for s in self._segments]

    def set_weights(self, weights):
        w = check_weights(weights)          # validated whatever the policy, as in v1
        if self.cfg.policy == "egreedy":    # a random-policy generator stays random
            self._pending_weights = w
            h = int(w["w1"].shape[0])
            if h != self.hidden:
                self.cost.scale(net_work(h) / net_work(self.hidden))
                self.hidden = h

    def set_epsilon(self, epsilon):
        self.epsilon = spec.check_epsilon(epsilon)

    def units(self, T):
        """A call's work in transitions of one worker: its largest slice, times how
        oversubscribed the cores are."""
        biggest = max(hi - lo for lo, hi in self.slices)
        return T * biggest * max(1.0, len(self.slices) / cores())

    def _inject_fault(self, worker, how="raise"):
        """Test hook: worker `worker` misbehaves in the next generate(): "raise", "hang",
        "exit", "busy" (2.5 s of CPU first) or "spin" (CPU for ever)."""
        self._faults[worker] = how

    def _segment_for(self, T):
        n = self.cfg.n_envs
        need = W.layout(T, n)[1]
        seg = self._segments[-1] if self._segments else None
        if seg is None or seg.size < need:
            self._views = None
            new = shared_memory.SharedMemory(create=True, name=procutil.new_name("v2chess"),
                                             size=max(need, 2 * (seg.size if seg else 0)))
            if seg is not None:            # retire the old one; workers re-attach by name
                self._segments.remove(seg)
                seg.unlink()
                try:
                    seg.close()
                except BufferError:
                    pass
            self._segments.append(new)
            seg = new
        if self._views is None or self._views[0] != T:
            self._views = (T, W.views(seg.buf, T, n))
        return seg

    def _fail(self, what):
        self._broken = what
        self._abort()
        raise WorkerFailure(what)

    def _abort(self):
        """Mid-call failure: the other workers are busy, so terminate them at once."""
        self._views = None
        self._finalizer.detach()
        _shutdown(self._procs, self._conns, self._segments, polite=False)

    def generate(self, T):
        if isinstance(T, bool) or not isinstance(T, (int, np.integer)) or T < 1:
            raise StudyError(f"T (steps per call) must be a positive integer, got {T!r}")
        if self._broken:
            raise WorkerFailure(f"v2_multiprocessing: generator unusable after an earlier "
                             f"failure: {self._broken}")
        if not self._procs:
            raise StudyError("v2_multiprocessing: the generator is closed")
        T = int(T)
        try:
            seg = self._segment_for(T)
            for w, c in enumerate(self._conns):
                try:
                    c.send(("gen", T, seg.name, self._pending_weights, self.epsilon,
                            self._faults.pop(w, None)))
                except OSError:              # BrokenPipeError: it died between calls
                    self._dead(w, "before generate()")
            self._pending_weights = None
            self._wait_all(T)
        except (StudyError, WorkerFailure):
            raise
        except BaseException as e:          # KeyboardInterrupt included: leave nothing behind
            self._broken = f"interrupted by {type(e).__name__}"
            self._abort()
            raise
        return self._views[1]

    def _dead(self, w, when):
        p = self._procs[w]
        p.join(1.0)
        self._fail(f"v2_multiprocessing: worker {w} (pid {p.pid}) {describe_exit(p.exitcode)} "
                   f"{when}; the workers were stopped")

    def _answer(self, w):
        """Read worker w's message; True when it is done with the call."""
        try:
            msg = self._conns[w].recv()
        except (EOFError, OSError):
            self._dead(w, "during generate()")
        if msg[0] == "ready":
            self._ready[w] = True
            self.cost.calibrate(msg[1])
            return False
        if msg[0] == "done":
            return True
        self.worker_traceback = msg[2]
        self._fail(f"v2_multiprocessing: worker {w} (pid {self._procs[w].pid}) raised "
                   f"{' '.join(str(msg[1]).split())}; the workers were stopped")

    def _wait_all(self, T):
        """Every worker's "done" (after its "ready" on the first call) within the deadline;
        a dead worker, one stopped for the stop grace, or one past the deadline fails the
        call."""
        remaining = set(range(len(self._procs)))
        by_obj = {}
        for w in remaining:
            by_obj[self._conns[w]] = ("conn", w)
            by_obj[self._procs[w].sentinel] = ("proc", w)
        units = self.units(T)
        all_ready = all(self._ready)
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
                    if not self._conns[w].poll():   # no last answer to read first
                        self._dead(w, "during generate()")
                    continue
                if self._answer(w):
                    remaining.discard(w)
                elif all(self._ready) and not all_ready:
                    all_ready = True                # the call proper starts now
                    t_start = clock.used_s
                    clock.limit_s = t_start + self.cost.limit_s(units)
                    self.last_limit_s = clock.limit_s - t_start
            if not remaining:
                break
            pids = [self._procs[w].pid for w in remaining]
            stopped = stops.check(pids, clock.used_s)
            if stopped is not None:
                w = next(w for w in remaining if self._procs[w].pid == stopped)
                self._fail(f"v2_multiprocessing: worker {w} (pid {stopped}) is stopped "
                           f"(SIGSTOP?) and has not answered for {stops.grace_s:g} s; the "
                           f"workers were stopped")
            if procutil.over_deadline(clock, cpu, pids):
                what = "start" if not all_ready else f"a call of T={T}"
                late = ", ".join(map(str, sorted(remaining)))
                self._fail(f"v2_multiprocessing: worker(s) {late} did not finish {what} within "
                           f"its deadline of {clock.limit_s - t_start:.1f} s (hung?); the "
                           f"workers were stopped")
        if all_ready:
            self.cost.observe(units, clock.used_s - t_start)

    def close(self):
        self._views = None
        self._finalizer()
