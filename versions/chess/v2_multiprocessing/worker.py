"""What one v2 worker process runs: v1's games lo..hi-1, its columns of the batch.

The worker plays v1's code (PythonChessGenerator) on a contiguous slice of the N games,
keyed by their global indices, so every game draws from the counter-based RNG exactly what
it draws in v1 and the slice's batch is v1's columns lo..hi-1. It writes those columns into
the shared-memory segment the parent names and answers "done": the transitions themselves
never cross the pipe.

Before it serves, the worker times v1's code on scratch games (CALIBRATE_S of work at most
its whole slice; the real games are untouched) and answers ("ready", seconds per
transition), from which the parent sets the first call's deadline. It ends with its parent,
even mid-call: a thread waits on the parent's sentinel, it drops its copy of the fork
server's "alive" pipe, and PR_SET_PDEATHSIG ties it to the fork server.
"""
from __future__ import annotations

import os
import signal
import time
import traceback
from dataclasses import replace
from multiprocessing import shared_memory

import numpy as np
from threadpoolctl import threadpool_limits

from core import rng
from versions.chess.common import spec
from versions.chess.v1_python.rollout import Game, PythonChessGenerator

ALIGN = 64
CALIBRATE_S = 0.005


class SliceGenerator(PythonChessGenerator):
    """v1's generator for games lo..hi-1 of the whole batch (their global RNG keys)."""

    def __init__(self, cfg, lo, hi):
        super().__init__(replace(cfg, n_envs=hi - lo, workers=1))
        seed = int(cfg.seed)
        games = range(lo, hi)
        self.k_colour = [rng.key(seed, spec.COLOUR, i) for i in games]
        self.k_opponent = [rng.key(seed, spec.OPPONENT, i) for i in games]
        self.k_action = [rng.key(seed, spec.ACTION, i) for i in games]
        self.k_explore = [rng.key(seed, spec.EXPLORE, i) for i in games]
        self.games = [Game() for _ in games]        # restarted with the global keys
        for i in range(hi - lo):
            self.new_episode(i)


def calibrate(cfg, lo, hi):
    """Seconds per transition of v1's code here: generate(1) on scratch copies of 1, 2, 4,
    ... of this worker's games until one call takes CALIBRATE_S (or the slice is used up),
    after one untimed call."""
    SliceGenerator(cfg, lo, lo + 1).generate(1)
    m, per = 1, None
    while True:
        g = SliceGenerator(cfg, lo, lo + m)
        t0 = time.perf_counter()
        g.generate(1)
        dt = time.perf_counter() - t0
        per = dt / m if per is None else max(dt / m, 0.5 * per)
        if dt >= CALIBRATE_S or lo + m >= hi:
            return per
        m = min(hi - lo, 2 * m)


def layout(T, N):
    """[(name, dtype, shape, offset)] of the batch's arrays in a segment, and its size."""
    out, off = [], 0
    for name, tail, dt in spec.ARRAYS:
        shape = (T, N) + tail
        out.append((name, np.dtype(dt), shape, off))
        off += -(-int(np.prod(shape)) * np.dtype(dt).itemsize // ALIGN) * ALIGN
    return out, max(off, ALIGN)


def views(buf, T, N):
    """The batch's arrays (WORKLOAD.md's names, shapes and dtypes) over a segment's buffer."""
    return {name: np.ndarray(shape, dt, buffer=buf, offset=off)
            for name, dt, shape, off in layout(T, N)[0]}


def _follow_parent():
    """End this worker when the process that asked for it ends, whatever it is doing."""
    import multiprocessing as mp
    import threading
    from multiprocessing import forkserver
    from multiprocessing.connection import wait
    fs = getattr(forkserver, "_forkserver", None)
    fd = getattr(fs, "_forkserver_alive_fd", None)
    if fd is not None:                      # a worker never asks the fork server for children
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
    threading.Thread(target=watch, name="chess-v2-parent-watch", daemon=True).start()


def _misbehave(fault):
    """The test hook's faults (rollout.py, _inject_fault)."""
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


def worker_main(index, cfg, lo, hi, conn, blas_threads=1):
    """Send ("ready", seconds per transition), then serve ("gen", T, segment name,
    weights or None, epsilon, fault or None) with ("done",) until ("stop",) or EOF; an
    exception is answered ("error", "Type: message", traceback) and ends the worker.
    `blas_threads`: this worker's share of the cores for NumPy's BLAS pool (the network)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)    # Ctrl-C is the parent's to handle
    from core.procutil import die_with_parent
    if not die_with_parent(signal.SIGKILL, os.getppid()):
        return                                      # the fork server is gone already
    _follow_parent()
    threadpool_limits(blas_threads, user_api="blas")   # workers x BLAS threads = the cores
    shm = None
    try:
        gen = SliceGenerator(cfg, lo, hi)
        conn.send(("ready", calibrate(cfg, lo, hi)))
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
            _misbehave(fault)
            batch = gen.generate(T)
            out = views(shm.buf, T, cfg.n_envs)
            for name in spec.ARRAY_NAMES:
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
