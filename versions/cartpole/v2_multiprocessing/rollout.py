"""v2: v1's code in persistent worker processes, outputs in shared memory.

The generator starts its workers once (forkserver start method; see NOTES.md) and gives
each a contiguous slice of the environments. A call of generate(T) sends every worker
one small message -- T, the name of the shared-memory segment, new weights if
set_weights was called, epsilon -- and waits for the "done" answers while watching each
worker's process sentinel, so a worker that dies or raises turns into a RuntimeError at
once instead of a hang. close(), an exception, garbage collection and interpreter exit
(Ctrl-C and SIGTERM under the harness included) all stop the workers and unlink the
segment.

Deadlines (docs/RELIABILITY.md): each call must finish within max(floor, factor x
expected), expected = T x (the largest slice) x max(1, workers / cores) x seconds per
transition, where seconds per transition is the workers' own calibration (their "ready"
message), then the slowest call measured; a larger network scales it by the work of its
forward pass. Until every worker is ready, the start-up floor applies. Past the limit a
call goes on only while its workers are busy using CPU (up to the hard factor). A
worker stopped (SIGSTOP) for the stop grace fails the call; a dead one at once. The segment is
named with this process's pid and start time, so a run that was SIGKILLed leaves nothing
the next harness command does not remove (core/procutil.py, sweep).
"""
import multiprocessing as mp
import os
import signal
import weakref
from dataclasses import replace
from multiprocessing import shared_memory
from multiprocessing.connection import wait

import numpy as np

from core.api import Generator, GenConfig, StudyError, check_weights
from core import procutil
from core.procutil import describe_exit
from . import worker as W

MAX_WORKERS = 64
START_METHOD = "forkserver"
JOIN_TIMEOUT_S = 2.0


def context():
    ctx = mp.get_context(START_METHOD)
    # imported once in the fork server, so each worker forks with numpy and v1 loaded
    ctx.set_forkserver_preload(["versions.cartpole.v2_multiprocessing.worker"])
    return ctx


def _shutdown(procs, conns, segments, polite=True):
    """Stop the workers (politely if idle, else by force) and unlink the shared segments."""
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
        except BufferError:        # arrays handed out still view it; freed when they go
            pass
    procs.clear()
    conns.clear()
    segments.clear()


class MultiprocessingGenerator(Generator):
    def __init__(self, cfg: GenConfig):
        super().__init__(cfg)
        n, nw = cfg.n_envs, cfg.workers
        if not 1 <= nw <= MAX_WORKERS:
            raise StudyError(f"v2_multiprocessing: --workers must be 1..{MAX_WORKERS}, got {nw}")
        if nw > n:
            raise StudyError(f"v2_multiprocessing: {nw} workers for {n} environments; "
                               f"each worker needs at least one environment (use --workers <= {n})")
        self.epsilon = float(cfg.epsilon)
        weights = check_weights(cfg.resolved_weights()) if cfg.policy == "egreedy" else None
        self._procs, self._conns, self._segments = [], [], []
        self._finalizer = weakref.finalize(self, _shutdown, self._procs, self._conns,
                                           self._segments)
        self._pending_weights = None
        self._faults = {}
        self._broken = None
        self._views = None
        self.slices = [(w * n // nw, (w + 1) * n // nw) for w in range(nw)]
        self._ready = [False] * nw
        self.cost = procutil.CostModel()
        self.hidden = int(weights["w1"].shape[0]) if weights is not None else 0
        self.last_limit_s = None
        ctx = context()
        wcfg = replace(cfg, weights=weights)
        try:
            for w, (lo, hi) in enumerate(self.slices):
                parent_end, child_end = ctx.Pipe()
                p = ctx.Process(target=W.worker_main, args=(w, wcfg, lo, hi, child_end),
                                name=f"v2-worker-{w}", daemon=True)
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
        w = check_weights(weights)
        if self.cfg.policy == "egreedy":    # the random policy has no use for a network
            self._pending_weights = w
            h = int(w["w1"].shape[0])
            if h != self.hidden:
                self.cost.scale(procutil.mlp_work(h) / procutil.mlp_work(self.hidden))
                self.hidden = h

    def units(self, T):
        """The work of one call in transitions of one worker: its largest slice, times how
        oversubscribed the cores are."""
        biggest = max(hi - lo for lo, hi in self.slices)
        cores = max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                    else (os.cpu_count() or 1))
        return T * biggest * max(1.0, len(self.slices) / cores)

    def set_epsilon(self, epsilon):
        self.epsilon = float(epsilon)

    def _inject_fault(self, worker, how="raise"):
        """Test hook: make `worker` misbehave during the next generate(): "raise", "hang"
        (sleep without answering), "exit", "busy" (use CPU for 2.5 s first) or "spin"
        (use CPU for ever)."""
        self._faults[worker] = how

    def _segment_for(self, T):
        n = self.cfg.n_envs
        need = W.layout(T, n)[1]
        seg = self._segments[-1] if self._segments else None
        if seg is None or seg.size < need:
            self._views = None
            new = shared_memory.SharedMemory(create=True, size=max(need, 2 * (seg.size if seg else 0)),
                                             name=procutil.new_name("v2"))
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
            v = W.views(seg.buf, T, n)
            v["reward"] = np.ones((T, n), np.float32)
            self._views = (T, v)
        return seg

    def _fail(self, what):
        self._broken = what
        self._abort()
        raise RuntimeError(what)

    def _abort(self):
        """Mid-call failure: the other workers are busy, so terminate them at once."""
        self._views = None
        self._finalizer.detach()
        _shutdown(self._procs, self._conns, self._segments, polite=False)

    def generate(self, T):
        if self._broken:
            raise RuntimeError(f"generator unusable after an earlier failure: {self._broken}")
        if not self._procs:
            raise RuntimeError("generator is closed")
        try:
            seg = self._segment_for(T)
            for w, c in enumerate(self._conns):
                try:
                    c.send(("gen", T, seg.name, self._pending_weights, self.epsilon,
                            self._faults.pop(w, None)))
                except OSError:              # BrokenPipeError: it died between calls
                    p = self._procs[w]
                    p.join(1.0)
                    self._fail(f"v2 worker {w} (pid {p.pid}) {describe_exit(p.exitcode)} "
                               f"before generate()")
            self._pending_weights = None
            self._wait_all(T)
        except RuntimeError:
            raise
        except BaseException as e:          # KeyboardInterrupt included: leave nothing behind
            self._broken = f"interrupted by {type(e).__name__}"
            self._abort()
            raise
        return self._views[1]

    def _wait_all(self, T):
        """Wait for every worker's "done" (after its "ready" on the first call), within the
        deadline; a dead worker, a worker stopped for the stop grace, or a worker past the
        deadline fails the call (and stops the others)."""
        remaining = set(range(len(self._procs)))
        by_obj = {}
        for w in remaining:
            by_obj[self._conns[w]] = ("conn", w)
            by_obj[self._procs[w].sentinel] = ("proc", w)
        units = self.units(T)
        all_ready = all(self._ready)
        limit = self.cost.limit_s(units) if all_ready else procutil.start_floor_s()
        clock = procutil.Clock(limit)
        stops = procutil.StopWatch()
        cpu = procutil.CpuWatch()
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
                p = self._procs[w]
                if kind == "conn":
                    try:
                        msg = self._conns[w].recv()
                    except (EOFError, OSError):
                        p.join(1.0)
                        self._fail(f"v2 worker {w} (pid {p.pid}) {describe_exit(p.exitcode)} "
                                   f"during generate()")
                    if msg[0] == "ready":
                        self._ready[w] = True
                        self.cost.calibrate(msg[1])
                        if all(self._ready) and not all_ready:
                            all_ready = True          # the call proper starts now
                            t_start = clock.used_s
                            clock.limit_s = t_start + self.cost.limit_s(units)
                            self.last_limit_s = clock.limit_s - t_start
                    elif msg[0] == "done":
                        remaining.discard(w)
                    else:
                        self._fail(f"v2 worker {w} (pid {p.pid}) raised {msg[1]}\n"
                                   f"--- worker traceback ---\n{msg[2]}")
                else:
                    if self._conns[w].poll():   # it answered before it went: read that first
                        continue
                    p.join(1.0)
                    self._fail(f"v2 worker {w} (pid {p.pid}) {describe_exit(p.exitcode)} "
                               f"during generate()")
            if not remaining:
                break
            stopped = stops.check([self._procs[w].pid for w in remaining], clock.used_s)
            if stopped is not None:
                w = next(w for w in remaining if self._procs[w].pid == stopped)
                self._fail(f"v2 worker {w} (pid {stopped}) is stopped (SIGSTOP?) and has not "
                           f"answered for {stops.grace_s:g} s; the workers were terminated")
            if procutil.over_deadline(clock, cpu, [self._procs[w].pid for w in remaining]):
                late = sorted(remaining)
                what = "start" if not all_ready else f"a call of T={T}"
                self._fail(f"v2 worker(s) {', '.join(map(str, late))} did not finish {what} within "
                           f"its deadline of {clock.limit_s - t_start:.1f} s (hung?); the workers "
                           f"were terminated")
        if all_ready:
            self.cost.observe(units, clock.used_s - t_start)

    def close(self):
        self._views = None
        self._finalizer()
