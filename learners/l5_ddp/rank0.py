"""L5's rank 0: the learner the caller holds, and the owner of rank 1 (see ddp.py)."""
from __future__ import annotations

import datetime
import os
import signal
import time
from dataclasses import asdict, replace
from typing import Optional

import numpy as np

from core.errors import StudyError
from core.learner import LearnConfig
from core.replay import Replay
from learners.l1_torch_eager.torch_eager import TorchLearner

from .ddp import (CLOSE_TIMEOUT_S, CONNECT_TIMEOUT_S, FACTOR, FLOOR_S, RANKS, START_TIMEOUT_S,
                  HalfBatchLearner, _one_line, make_group, set_group_timeout, time_allreduce)
from .rank1 import _send_quietly, rank1_main


class DDPLearner(HalfBatchLearner):
    """Rank 0 of L5, and the owner of rank 1 (a spawned child process)."""

    def __init__(self, cfg: LearnConfig, replay: Replay, floor_s: float = FLOOR_S,
                 timed_comm: bool = False):
        import multiprocessing as mp

        import torch.distributed as dist
        cfg = cfg.learn_config().check_learn()
        if cfg.batch_size < RANKS:
            raise StudyError(f"l5_ddp splits each minibatch over {RANKS} ranks: --batch-size must "
                             f"be at least {RANKS}, got {cfg.batch_size}")
        if cfg.device not in ("auto", "cpu"):
            raise StudyError(f"l5_ddp runs on the CPU (gloo); --device {cfg.device} is not supported")
        cfg = replace(cfg, device="cpu")
        self._replay = replay
        self.floor_s = float(floor_s)
        self._proc = self._conn = self._pg = self._store = None
        self._broken: Optional[str] = None
        self._stage: Optional[str] = "while starting"     # None once started
        self._closed = False
        self._slowest = 0.0          # seconds per update, the slowest learn() so far
        self._lr = cfg.lr
        self._timeout_s = None
        self.comm_rank1_s = 0.0
        self.update_times = []       # seconds per update of each learn() call
        replay.share()
        try:
            self._store = dist.TCPStore("127.0.0.1", 0, RANKS, True, wait_for_workers=False,
                                        timeout=datetime.timedelta(seconds=CONNECT_TIMEOUT_S))
            ctx = mp.get_context("spawn")
            self._conn, child = ctx.Pipe()
            self._proc = ctx.Process(target=rank1_main, name="l5-ddp-rank1", daemon=True,
                                     args=(child, os.getpid(), asdict(cfg), replay.share(),
                                           replay.capacity, self._store.port, timed_comm))
            self._proc.start()
            child.close()
            self._recv(START_TIMEOUT_S, "start", "mapped")
            replay.unlink_shared()   # both processes have it mapped: the name can go
            self._pg = make_group(self._store, 0, CONNECT_TIMEOUT_S)
            super().__init__(cfg, replay, 0, self._pg, timed_comm)
            self._recv(CONNECT_TIMEOUT_S, "start", "ready")
            self._set_timeout(self.floor_s)
            self._stage = None
        except BaseException as e:
            self._shutdown(polite=False)
            if isinstance(e, RuntimeError) and not isinstance(e, StudyError):
                raise StudyError(self._why(f"l5_ddp failed to start: {_one_line(e)}")) from None
            raise

    # -- rank 1's pipe, always with a deadline --------------------------------------------
    def _recv(self, timeout_s: float, what: str, expect: str):
        from multiprocessing.connection import wait
        deadline = time.monotonic() + timeout_s
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise self._fail(f"rank 1 (pid {self._proc.pid}) gave no {what} reply within "
                                 f"{timeout_s:.0f} s (stopped or hung); it was killed")
            ready = wait([self._conn, self._proc.sentinel], timeout=min(left, 1.0))
            if self._conn in ready:
                try:
                    tag, payload = self._conn.recv()
                except (EOFError, OSError):
                    continue                 # rank 1 is gone: its sentinel says how
                if tag == "error":
                    raise self._fail(payload)
                if tag != expect:
                    raise self._fail(f"rank 1 sent {tag!r} while l5_ddp waited for {expect!r}")
                return payload
            if self._proc.sentinel in ready and not self._conn.poll():
                self._proc.join(1.0)
                raise self._fail(f"rank 1 (pid {self._proc.pid}) {_exit_text(self._proc.exitcode)} "
                                 f"while l5_ddp waited for its {what} reply")

    def _send(self, msg) -> None:
        try:
            self._conn.send(msg)
        except (OSError, BrokenPipeError):
            self._proc.join(1.0)
            raise self._fail(f"rank 1 (pid {self._proc.pid}) {_exit_text(self._proc.exitcode)} "
                             f"{self._where()}") from None

    def _deadline(self, n: int) -> float:
        return max(self.floor_s, FACTOR * max(1, n) * self._slowest)

    def _set_timeout(self, seconds: float) -> None:
        """Gloo's timeout for every collective (one per update)."""
        if self._timeout_s is None or seconds > self._timeout_s * 1.5:
            set_group_timeout(self._pg, seconds)
            self._send(("timeout", seconds))
            self._timeout_s = seconds

    def _where(self) -> str:
        return self._stage or f"at update {self.updates}"

    def _why(self, text: str) -> str:
        """Prefer rank 1's own words (an error message it sent, or how it exited)."""
        if self._conn is not None:
            try:
                while self._conn.poll(0.2):
                    tag, payload = self._conn.recv()
                    if tag == "error":
                        return f"l5_ddp: {payload}"
            except (EOFError, OSError):
                pass
        if self._proc is not None and not self._proc.is_alive() and self._proc.exitcode is not None:
            return f"l5_ddp: rank 1 (pid {self._proc.pid}) {_exit_text(self._proc.exitcode)} {self._where()}"
        return text

    def _fail(self, text: str) -> StudyError:
        """Mark the learner broken, stop rank 1, and return the one-line error to raise."""
        why = self._why(text if text.startswith("l5_ddp") else f"l5_ddp: {text}")
        self._broken = why
        self._shutdown(polite=False)
        return StudyError(why)

    def _check(self) -> None:
        if self._closed:
            raise StudyError("l5_ddp: the learner is closed")
        if self._broken:
            raise StudyError(f"l5_ddp is unusable after an earlier failure: {self._broken}")

    def _collectives(self, fn):
        """Run rank 0's side of some updates; a failed collective (rank 1 dead or stopped:
        gloo's error or timeout) becomes a one-line StudyError."""
        try:
            return fn()
        except StudyError:
            raise
        except RuntimeError as e:
            self._proc.join(0.5)             # a dying rank 1 (its sockets close before it is
            text = str(e).lower()            # reaped): let it go, so the message says how
            late = (f" (no answer within the {self._timeout_s:.0f} s deadline: stopped or hung?)"
                    if self._proc.is_alive() and "timed out" in text else "")
            raise self._fail(f"at update {self.updates} the all-reduce with rank 1 (pid {self._proc.pid}) "
                             f"failed{late}: {_one_line(e)}; rank 1 was killed") from None
        except BaseException:
            self._broken = f"interrupted during update {self.updates}"
            self._shutdown(polite=False)
            raise

    # -- the learner interface -------------------------------------------------------------
    def learn(self, n: int, losses: Optional[np.ndarray] = None) -> None:
        if n <= 0:
            return
        self._check()
        want = losses is not None
        mine = np.zeros(n, np.float32) if want else None
        t0 = time.perf_counter()
        self._send(("learn", self.updates, n, self.replay.size, self._lr, want, True))
        self._collectives(lambda: TorchLearner.learn(self, n, mine))
        theirs, comm1 = self._recv(self._deadline(n), "learn", "done")
        dt = (time.perf_counter() - t0) / n
        self.update_times.append(dt)
        self.comm_rank1_s += comm1
        if dt > self._slowest:
            self._slowest = dt
            self._set_timeout(self._deadline(1))
        if want:
            losses[:n] = (mine.astype(np.float64) + theirs) / 2

    def set_lr(self, lr: float) -> None:
        super().set_lr(lr)
        self._lr = float(lr)

    def time_allreduce(self, n: int, numel: int) -> list:
        """Rank 0's seconds for each of n standalone all-reduces of `numel` float32 with rank 1
        (what one update's DDP bucket costs without the compute around it)."""
        self._check()
        self._send(("allreduce", n, numel))
        mine = self._collectives(lambda: time_allreduce(self._pg, n, numel))
        self._recv(self._deadline(n), "all-reduce", "done")
        return mine

    def phases(self):
        """L1's phases on rank 0; "sample" also starts rank 1's copy of the update, which
        meets rank 0 in forward_backward's all-reduce (so that phase includes the wait)."""
        out = super().phases()

        def start_rank1():
            self._check()
            self._send(("learn", self.updates, 1, self.replay.size, self._lr, False, False))
        sample = out[0][1]

        def sample_both():
            start_rank1()
            sample()
        fb = out[2][1]
        return [("sample", sample_both), out[1],
                ("forward_backward+allreduce", lambda: self._collectives(fb))] + out[3:]

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._shutdown(polite=self._broken is None)

    def _shutdown(self, polite: bool) -> None:
        """Stop rank 1 (a close message, then SIGKILL after CLOSE_TIMEOUT_S), then release the
        process group and the store. Safe to call more than once."""
        p, conn = self._proc, self._conn
        if p is not None and p.pid is not None:
            if polite and p.is_alive():
                _send_quietly(conn, ("close",))
                p.join(CLOSE_TIMEOUT_S)
            if p.is_alive():
                p.kill()                     # SIGKILL also ends a stopped process
            p.join(CLOSE_TIMEOUT_S)
        if getattr(self, "ddp", None) is not None:
            self.ddp = None
        if self._pg is not None:
            try:
                self._pg.shutdown()
            except Exception:
                pass
            self._pg = None
        self._store = None
        if conn is not None:
            conn.close()
            self._conn = None
        if self._replay is not None:
            self._replay.unlink_shared()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def _exit_text(code) -> str:
    if code is None:
        return "is still running"
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with status {code}"
