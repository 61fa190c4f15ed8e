"""The actor of a training run: a rung's generator in this process, a thread or a child.

request(T, weights, epsilon) hands the actor the next round's job (weights None: keep the
current ones); result() returns (batch, seconds generate() took). A child-process actor
dies with its parent (PR_SET_PDEATHSIG) and is waited for with a deadline, so a stopped
or dead actor is an error, never a hang.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import queue
import signal
import threading
import time

import numpy as np

from core.api import GenConfig
from core.discover import runnable_rung
from core.errors import StudyError

from .config import TrainConfig

# A round's result must arrive within max(FLOOR, FACTOR x the slowest round so far) (the
# first round also pays for start-up, so its floor is START_FLOOR).
DEADLINE_FLOOR_S, DEADLINE_START_S, DEADLINE_FACTOR = 30.0, 300.0, 20.0


def gen_config(cfg: TrainConfig, weights) -> GenConfig:
    return GenConfig(n_envs=cfg.envs, seed=cfg.seed, policy="egreedy",
                     epsilon=cfg.epsilon(0), weights=weights, workers=cfg.workers)


class SerialActor:
    """The generator in this process: request() pushes weights, result() generates."""
    kind = "serial"

    def __init__(self, version_name: str, gcfg: GenConfig):
        self.gen = runnable_rung(version_name).make_generator(gcfg)
        self._T = None

    def request(self, T, weights, epsilon):
        if weights is not None:
            self.gen.set_weights(weights)
        self.gen.set_epsilon(epsilon)
        self._T = T

    def result(self):
        t0 = time.perf_counter()
        b = self.gen.generate(self._T)
        return b, time.perf_counter() - t0

    def close(self):
        if self.gen is not None:
            self.gen.close()
            self.gen = None


class ThreadActor:
    """The generator in a background thread. Overlaps only if generate() releases the GIL
    (native rungs do; pure-Python rungs do not, and then the thread buys nothing)."""
    kind = "thread"

    def __init__(self, version_name: str, gcfg: GenConfig):
        self.inner = SerialActor(version_name, gcfg)
        self.jobs: "queue.Queue" = queue.Queue()
        self.out: "queue.Queue" = queue.Queue()
        self.th = threading.Thread(target=self._loop, daemon=True)
        self.th.start()

    def _loop(self):
        while True:
            job = self.jobs.get()
            if job is None:
                return
            try:
                self.inner.request(*job)
                self.out.put(self.inner.result())
            except BaseException as e:  # hand the error to the learner thread
                self.out.put(e)

    def request(self, T, weights, epsilon):
        self.jobs.put((T, weights, epsilon))

    def result(self):
        r = self.out.get()
        if isinstance(r, BaseException):
            raise r
        return r

    def close(self):
        self.jobs.put(None)
        self.th.join(timeout=30)
        self.inner.close()


def _die_with_parent():
    """Linux: ask the kernel to SIGTERM this process when its parent dies."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)          # PR_SET_PDEATHSIG
    except Exception:
        pass


def _actor_process(conn, version_name, gcfg, parent):
    _die_with_parent()
    if os.getppid() != parent:                 # the parent died before prctl took effect
        return
    try:
        actor = SerialActor(version_name, gcfg)
    except BaseException as e:
        conn.send(("error", f"{type(e).__name__}: {e}"))
        return
    conn.send(("ready", None))
    try:
        while True:
            msg = conn.recv()
            if msg is None:
                break
            try:
                actor.request(*msg)
                b, dt = actor.result()
            except Exception as e:
                conn.send(("error", f"{type(e).__name__}: {e}"))
                break
            conn.send(("batch", ({k: np.ascontiguousarray(v) for k, v in b.items()}, dt)))
    except (EOFError, KeyboardInterrupt, BrokenPipeError):
        pass
    finally:
        actor.close()


class ProcessActor:
    """The generator in a child process (spawned, not a daemon, so that a rung with worker
    processes of its own can run in it): overlaps with any rung, GIL or not. Batches come
    back pickled through a pipe (N*T = 640 transitions: about 30 KB)."""
    kind = "process"

    def __init__(self, version_name: str, gcfg: GenConfig):
        ctx = mp.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_actor_process, args=(child, version_name, gcfg, os.getpid()),
                                daemon=False)
        self.proc.start()
        child.close()
        self.slowest = 0.0
        self.first = True
        tag, info = self._recv(DEADLINE_START_S, "start")
        if tag == "error":
            self.close()
            raise StudyError(f"actor process for {version_name} failed to start: {info}")

    def _recv(self, deadline_s: float, what: str):
        t0 = time.perf_counter()
        while not self.conn.poll(0.5):
            if not self.proc.is_alive():
                raise StudyError(f"the actor process died (exit code {self.proc.exitcode}) "
                                 f"while waiting for its {what}")
            if time.perf_counter() - t0 > deadline_s:
                self.close()
                raise StudyError(f"the actor process gave no {what} within {deadline_s:.0f} s "
                                 f"(stopped or hung); it was terminated")
        try:
            return self.conn.recv()
        except EOFError:
            raise StudyError(f"the actor process closed its pipe while sending its {what}")

    def request(self, T, weights, epsilon):
        self.conn.send((T, weights, epsilon))
        self._t_req = time.perf_counter()

    def result(self):
        limit = DEADLINE_START_S if self.first else max(DEADLINE_FLOOR_S, DEADLINE_FACTOR * self.slowest)
        tag, payload = self._recv(limit, "batch")
        if tag == "error":
            raise StudyError(f"the actor process failed: {payload}")
        self.first = False
        self.slowest = max(self.slowest, time.perf_counter() - self._t_req)
        return payload

    def close(self):
        try:
            self.conn.send(None)
        except (OSError, BrokenPipeError):
            pass
        self.proc.join(timeout=10)
        if self.proc.is_alive():
            self.proc.terminate()
            self.proc.join(timeout=5)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(timeout=5)


def make_actor(cfg: TrainConfig, weights):
    gcfg = gen_config(cfg, weights)
    if not cfg.pipelined:
        return SerialActor(cfg.version, gcfg)
    if cfg.actor == "thread":
        return ThreadActor(cfg.version, gcfg)
    return ProcessActor(cfg.version, gcfg)
