"""The actor of a training run: a rung's generator in this process, a thread or a child.

request(T, weights, epsilon) hands the actor the next round's job (weights None: keep the
current ones); result() returns (batch, seconds generate() took). A child-process actor
dies with its parent (PR_SET_PDEATHSIG: SIGTERM, which it turns into an orderly exit
that closes its generator, workers and ranks included) and is waited for with the
deadline policy of docs/RELIABILITY.md: start-up within the start-up floor; before it
says "ready" the child times generate(1) on a scratch generator of the same rung (a few
environments), and a round of N x T transitions must then come back within
max(floor, factor x expected), expected = N x T x seconds per transition (that
calibration, then the slowest round so far); past it only while the child (with its
workers) is busy using CPU, up to the hard factor. A dead child fails the round at
once, a stopped one (SIGSTOP) after the stop grace.
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
from core import procutil

from .config import TrainConfig

CALIBRATION_ENVS = 4


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


def _calibrate(version_name: str, gcfg: GenConfig) -> float:
    """Seconds per transition of this rung: generate(1) on a scratch generator of a few
    environments (one worker), after one untimed call (JIT compilation, worker start)."""
    from dataclasses import replace
    n = min(gcfg.n_envs, CALIBRATION_ENVS)
    gen = runnable_rung(version_name).make_generator(replace(gcfg, n_envs=n, workers=1))
    try:
        gen.generate(1)
        t0 = time.perf_counter()
        gen.generate(1)
        return (time.perf_counter() - t0) / n
    finally:
        gen.close()


def _actor_process(conn, version_name, gcfg, parent):
    from core.errors import Terminated
    procutil.install_signal_handlers()         # SIGTERM: close the generator, then exit
    if not procutil.die_with_parent(signal.SIGTERM, parent):
        return                                 # the parent died before prctl took effect
    actor = None
    try:
        try:
            actor = SerialActor(version_name, gcfg)
            per = _calibrate(version_name, gcfg)
        except Exception as e:
            conn.send(("error", f"{type(e).__name__}: {e}"))
            return
        conn.send(("ready", per))
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
    except (EOFError, KeyboardInterrupt, Terminated, BrokenPipeError, OSError):
        pass
    finally:
        if actor is not None:
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
        self.cost = procutil.CostModel()
        self.units = gcfg.n_envs
        self.last_limit_s = None
        tag, info = self._recv(procutil.start_floor_s(), "start")
        if tag == "error":
            self.close()
            raise StudyError(f"actor process for {version_name} failed to start: {info}")
        self.cost.calibrate(info)

    def _recv(self, limit_s: float, what: str):
        clock = procutil.Clock(limit_s)
        stops = procutil.StopWatch()
        cpu = procutil.CpuWatch(tree=True)          # the child and its workers or ranks
        while not self.conn.poll(min(0.25, max(0.01, clock.left_s()))):
            clock.tick()
            if not self.proc.is_alive():
                self.proc.join(1)
                raise StudyError(f"the actor process {procutil.describe_exit(self.proc.exitcode)} "
                                 f"while we waited for its {what}")
            if stops.check([self.proc.pid], clock.used_s) is not None:
                self.close(force=True)
                raise StudyError(f"the actor process (pid {self.proc.pid}) is stopped (SIGSTOP?) and "
                                 f"gave no {what} for {stops.grace_s:g} s; it was terminated")
            if procutil.over_deadline(clock, cpu, [self.proc.pid]):
                self.close(force=True)
                raise StudyError(f"the actor process gave no {what} within its deadline of "
                                 f"{limit_s:.1f} s (hung?); it was terminated")
        try:
            return self.conn.recv()
        except (EOFError, OSError):
            self.proc.join(1)
            raise StudyError(f"the actor process closed its pipe while sending its {what} "
                             f"({procutil.describe_exit(self.proc.exitcode)})")

    def request(self, T, weights, epsilon):
        try:
            self.conn.send((T, weights, epsilon))
        except (OSError, BrokenPipeError):
            self.proc.join(1)
            raise StudyError(f"the actor process {procutil.describe_exit(self.proc.exitcode)} "
                             f"before the next round")
        self._T = T
        self._t_req = time.perf_counter()

    def result(self):
        units = self.units * self._T
        limit = self.cost.limit_s(units)
        self.last_limit_s = limit
        tag, payload = self._recv(limit, "batch")
        if tag == "error":
            raise StudyError(f"the actor process failed: {payload}")
        self.cost.observe(units, time.perf_counter() - self._t_req)
        return payload

    def close(self, force: bool = False):
        """Stop the child: asked politely (it closes its generator), or at once (force, or
        when it is stopped): SIGTERM, which it also turns into closing its generator,
        with SIGCONT so that a stopped child can act on it; SIGKILL if that takes 5 s."""
        if not force and procutil.process_state(self.proc.pid) not in ("T", "t"):
            try:
                self.conn.send(None)
            except (OSError, BrokenPipeError):
                pass
            self.proc.join(timeout=10)
        if self.proc.is_alive():
            self.proc.terminate()
            try:
                os.kill(self.proc.pid, signal.SIGCONT)
            except OSError:
                pass
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
