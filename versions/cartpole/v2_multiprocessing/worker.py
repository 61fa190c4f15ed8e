"""What runs inside one v2 worker process.

A worker owns the contiguous slice lo..hi-1 of the N environments and its own copy of
the Q-network, and runs v1's code on it (PythonGenerator, with the global env indices,
so the counter-based RNG gives every environment the draws it has in v1). It writes its
columns of the batch straight into the shared-memory segment and answers "done"; no
transition is ever pickled.

Before it serves, a worker times its own code on scratch copies of a few of its
environments (CALIBRATE_S of work, at most its whole slice) and sends ("ready", seconds
per transition): the parent's deadline for the first call comes from that (see
rollout.py and docs/RELIABILITY.md). A worker goes when the parent does, even in the
middle of a call: a thread waits on the parent's sentinel and ends the process; the
worker also closes its copy of the fork server's "alive" pipe (so the fork server exits
with the parent) and dies with the fork server (PR_SET_PDEATHSIG).
"""
import os
import signal
import time
import traceback
from dataclasses import replace
from multiprocessing import shared_memory

import numpy as np

from core import rng
from versions.cartpole.common.cartpole import ARRAY_NAMES
from versions.cartpole.v1_python.rollout import PythonGenerator, to_f32

OUT_NAMES = tuple(k for k in ARRAY_NAMES if k != "reward")   # reward is all ones: parent's
ALIGN = 64
CALIBRATE_S = 0.005


def calibrate(cfg, lo, hi):
    """Seconds one transition of this worker's code takes: generate(1) on scratch copies
    of 1, 2, 4, ... of its environments until the step takes CALIBRATE_S (or the whole
    slice is used), after one untimed step. The real environments are not touched."""
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
    """[(name, dtype, shape, offset)] of the outputs in the segment, and its size in bytes."""
    specs = [("obs", np.float32, (T, N, 4)), ("action", np.int64, (T, N)),
             ("next_obs", np.float32, (T, N, 4)), ("terminated", np.bool_, (T, N)),
             ("truncated", np.bool_, (T, N))]
    out, off = [], 0
    for name, dt, shape in specs:
        out.append((name, dt, shape, off))
        off += -(-int(np.prod(shape)) * np.dtype(dt).itemsize // ALIGN) * ALIGN
    return out, max(off, ALIGN)


def views(buf, T, N):
    return {name: np.ndarray(shape, dt, buffer=buf, offset=off)
            for name, dt, shape, off in layout(T, N)[0]}


class SliceGenerator(PythonGenerator):
    """v1's generator for environments lo..hi-1 of the whole batch."""

    def __init__(self, cfg, lo, hi):
        super().__init__(replace(cfg, n_envs=hi - lo))
        envs = range(lo, hi)
        self.k_reset = [rng.key(cfg.seed, rng.RESET, i) for i in envs]
        self.k_action = [rng.key(cfg.seed, rng.ACTION, i) for i in envs]
        self.k_explore = [rng.key(cfg.seed, rng.EXPLORE, i) for i in envs]
        self.state = [rng.reset_state(k, 0) for k in self.k_reset]
        self.obs = [to_f32(s) for s in self.state]


def _follow_parent():
    """End this worker when the process that started it ends, whatever it is doing."""
    import multiprocessing as mp
    import threading
    from multiprocessing import forkserver
    from multiprocessing.connection import wait
    fs = getattr(forkserver, "_forkserver", None)
    fd = getattr(fs, "_forkserver_alive_fd", None)
    if fd is not None:                      # workers never ask the fork server for children
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


def worker_main(index, cfg, lo, hi, conn):
    """Send ("ready", seconds per transition), then serve ("gen", T, segment,
    weights|None, epsilon, fault|None) until ("stop",) or EOF."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C is the parent's to handle
    from core.procutil import die_with_parent
    if not die_with_parent(signal.SIGKILL, os.getppid()):
        return                                     # the fork server is gone already
    _follow_parent()
    shm = None
    try:
        gen = SliceGenerator(cfg, lo, hi)
        conn.send(("ready", calibrate(cfg, lo, hi)))
        while True:
            try:
                msg = conn.recv()
            except EOFError:                       # the parent is gone
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
            if fault == "raise":
                raise RuntimeError("fault injected by the test hook")
            if fault == "hang":                    # alive and running, never answering
                while True:
                    time.sleep(3600)
            if fault == "exit":
                os._exit(3)
            if fault in ("busy", "spin"):          # using CPU: 2.5 s, or for ever
                t_end = time.perf_counter() + (2.5 if fault == "busy" else 1e9)
                while time.perf_counter() < t_end:
                    pass
            batch = gen.generate(T)
            out = views(shm.buf, T, cfg.n_envs)
            for k in OUT_NAMES:
                out[k][:, lo:hi] = batch[k]
            del out
            conn.send(("done",))
    except Exception as e:
        try:
            conn.send(("error", f"{type(e).__name__}: {e}", traceback.format_exc()))
        except Exception:
            pass
    finally:
        if shm is not None:
            shm.close()
