"""L5: L1's update, data-parallel over two processes with DistributedDataParallel (gloo).

The design of the Spadoni report (CartPole DQN, DDP on two GPUs), on this CPU machine:

- Two ranks, each a full copy of L1's learner (policy, target, AdamW state). Rank 0 lives
  in the caller's process (DDPLearner, the object the training loop holds); rank 1 is a
  spawned child process (`rank1_main`) driven over a pipe.
- Each update's B minibatch rows (LEARNER.md's indices, the same on both ranks) are split
  into **contiguous halves**: rank 0 takes rows [0, ceil(B/2)), rank 1 rows [ceil(B/2), B).
- Each rank's loss is the *sum* of its rows' Huber terms times ranks/B, and DDP averages
  the two ranks' gradients (one all-reduce per update: the network's 17,410 gradients fit
  one bucket), so the averaged gradient is sum_all / B: L1's full-minibatch mean, for odd B
  too. The Double DQN target needs no communication (each rank has the target network).
  Both ranks then take the same AdamW step on the same gradient and stay identical.
- The loss recorded for an update is the mean of the two ranks' weighted losses (= the
  full minibatch's mean); rank 1 sends its per-update values once per learn() call.
- Rank 1 reads the replay buffer in place: Replay.share() moves it into shared memory,
  rank 1 maps it, and the name is unlinked as soon as it has (so a killed run leaks
  nothing). Each learn() message carries the buffer's size and the learning rate.

Failures never hang the caller: rank 1 dies with its parent (PR_SET_PDEATHSIG, plus a
thread that watches the parent pid); every wait for rank 1 (start, each learn()'s reply)
has a deadline, and every collective runs under gloo's timeout, set to
max(floor, factor x the slowest update so far). A dead, failed or stopped rank 1 becomes
a one-line StudyError, after which the learner refuses work; close() stops rank 1
(politely, then SIGKILL) and is idempotent.

The process group is built directly from a TCPStore (what torch.distributed.new_group
does inside) rather than with init_process_group, so the learner leaves no global
torch.distributed state in the caller's process.
"""
from __future__ import annotations

import datetime
import os
import signal
import statistics
import threading
import time
import warnings
from dataclasses import asdict, replace
from typing import Optional

import numpy as np

from core.errors import StudyError
from core.learner import LearnConfig
from core.replay import Replay, sample_indices, shared_rows
from core.spec import REPLAY
from learners.l1_torch_eager.torch_eager import TorchLearner

RANKS = 2
START_TIMEOUT_S = 180.0        # spawn + `import torch` in the child, on a loaded machine
CONNECT_TIMEOUT_S = 60.0       # rendezvous and DDP's start-up collectives, once rank 1 is up
FLOOR_S = 10.0                 # the least deadline of a collective or of a learn() reply
FACTOR = 50.0                  # deadline = max(FLOOR_S, FACTOR x the slowest update so far)
CLOSE_TIMEOUT_S = 5.0


def rank_rows(batch_size: int, rank: int, ranks: int = RANKS):
    """The contiguous slice [lo, hi) of a minibatch's rows that `rank` takes."""
    per = -(-batch_size // ranks)
    return min(rank * per, batch_size), min((rank + 1) * per, batch_size)


def make_group(store, rank: int, timeout_s: float):
    """A gloo process group of RANKS ranks over `store`, not registered as torch's default
    group (see the module docstring), on the loopback interface."""
    import torch
    import torch.distributed as dist
    timeout = datetime.timedelta(seconds=timeout_s)
    opts = dist.ProcessGroupGloo._Options()
    opts._timeout = timeout
    opts._devices = [dist.ProcessGroupGloo.create_device(hostname="127.0.0.1")]
    prefixed = dist.PrefixStore("l5_ddp/", store)
    backend = dist.ProcessGroupGloo(prefixed, rank, RANKS, opts)
    pg = dist.ProcessGroup(prefixed, rank, RANKS)
    pg._set_default_backend(dist.ProcessGroup.BackendType.GLOO)
    pg._register_backend(torch.device("cpu"), dist.ProcessGroup.BackendType.GLOO, backend)
    return pg


def time_allreduce(pg, n: int, numel: int) -> list:
    """Seconds of each of n all-reduces (sum) of `numel` float32 on `pg` (both ranks call it)."""
    import torch
    t = torch.zeros(numel)
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        pg.allreduce([t]).wait()
        out.append(time.perf_counter() - t0)
    return out


def set_group_timeout(pg, seconds: float) -> None:
    pg.set_timeout(datetime.timedelta(seconds=seconds))


class _MappedReplay:
    """Rank 1's view of the caller's replay buffer: the shared rows, and the size that each
    learn() message brings (the training loop changes it only between rounds)."""

    def __init__(self, rows: np.ndarray):
        self.data = rows
        self.size = 0
        self.capacity = rows.shape[0]

    def indices(self, seed: int, first_update: int, n_updates: int, batch_size: int) -> np.ndarray:
        return sample_indices(seed, first_update, n_updates, batch_size, self.size)


class HalfBatchLearner(TorchLearner):
    """One rank of L5: L1's update on this rank's rows of each minibatch, with the policy's
    gradient averaged across the ranks by DDP. Two phases change: sampling (this rank's
    rows only) and the loss (forward through DDP; weighted sum instead of mean)."""

    def __init__(self, cfg: LearnConfig, replay, rank: int, pg, timed_comm: bool = False):
        with warnings.catch_warnings():     # rank 1's mapping is read-only, and only read
            warnings.simplefilter("ignore", UserWarning)
            super().__init__(cfg, replay)
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP
        self.rank = rank
        self.lo, self.hi = rank_rows(self.cfg.batch_size, rank)
        self.weight = RANKS / self.cfg.batch_size
        self.staging = [torch.empty((self.hi - self.lo, REPLAY.width), dtype=torch.float32)]
        self.copied = [None]
        # broadcasts rank 0's parameters (the same init on both anyway) and checks shapes
        self.ddp = DDP(self.policy, process_group=pg)
        self.comm_s = 0.0           # with timed_comm: seconds from bucket ready to all-reduced
        self.comm_n = 0
        if timed_comm:
            self.ddp.register_comm_hook(pg, self._timed_allreduce)

    def _timed_allreduce(self, pg, bucket):
        """DDP's default hook (divide by the world size, all-reduce) with a clock around it:
        the time includes waiting for the other rank to reach its all-reduce."""
        t0 = time.perf_counter()
        buf = bucket.buffer().div_(RANKS)
        fut = pg.allreduce([buf]).get_future()

        def done(f):
            self.comm_s += time.perf_counter() - t0
            self.comm_n += 1
            return f.value()[0]
        return fut.then(done)

    def plan(self, n: int) -> None:
        idx = self.replay.indices(self.cfg.seed, self.updates, n, self.cfg.batch_size)
        self._idx = self.torch.from_numpy(np.ascontiguousarray(idx[:, self.lo:self.hi]))
        self._idx_pos = 0

    def loss_of(self, rows):
        """L1's loss on this rank's rows: the policy's forward on s runs through DDP (so the
        backward all-reduces), and the Huber terms are summed and weighted by ranks/B."""
        torch = self.torch
        s = REPLAY
        obs, nxt = rows[:, s.obs], rows[:, s.next_obs]
        act = rows[:, s.action].long().unsqueeze(1)
        rew, term = rows[:, s.reward], rows[:, s.terminated]
        q = self.ddp(obs).gather(1, act).squeeze(1)
        with torch.no_grad():
            if self.cfg.double:
                a_next = self.policy(nxt).argmax(1, keepdim=True)
                q_next = self.target(nxt).gather(1, a_next).squeeze(1)
            else:
                q_next = self.target(nxt).max(1).values
            y = rew + self.cfg.gamma * (1.0 - term) * q_next
        return torch.nn.functional.smooth_l1_loss(q, y, reduction="sum") * self.weight


# -- rank 1: the child process ------------------------------------------------------------
def _die_with_parent(parent: int) -> None:
    """SIGKILL this process when its parent dies: the kernel's PR_SET_PDEATHSIG, plus a
    thread that polls the parent pid (covers the race before prctl, and a parent whose
    spawning thread exited, which also fires PDEATHSIG on Linux)."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)                # PR_SET_PDEATHSIG
    except Exception:
        pass

    def watch():
        while True:
            if os.getppid() != parent:
                os._exit(3)
            time.sleep(0.2)
    threading.Thread(target=watch, daemon=True, name="l5-parent-watch").start()


def rank1_main(conn, parent: int, cfg_dict: dict, segment: str, capacity: int, port: int,
               timed_comm: bool) -> None:
    """Rank 1: map the replay, join the group, then do what rank 0's messages say. It ends
    with os._exit (an interpreter that imported torch takes seconds to tear down on a busy
    machine, and there is nothing to flush but the pipe)."""
    _die_with_parent(parent)
    if os.getppid() != parent:
        os._exit(3)
    status, pg = 1, None
    try:
        import torch.distributed as dist
        rows = shared_rows(segment, capacity)
        conn.send(("mapped", None))
        store = dist.TCPStore("127.0.0.1", port, RANKS, False,
                              timeout=datetime.timedelta(seconds=CONNECT_TIMEOUT_S))
        pg = make_group(store, 1, CONNECT_TIMEOUT_S)
        learner = HalfBatchLearner(LearnConfig(**cfg_dict), _MappedReplay(rows), 1, pg, timed_comm)
        conn.send(("ready", os.getpid()))
    except BaseException as e:
        _send_quietly(conn, ("error", f"rank 1 failed to start: {type(e).__name__}: {_one_line(e)}"))
        os._exit(1)
    try:
        while True:
            msg = conn.recv()
            kind = msg[0]
            if kind == "close":
                status = 0
                break
            if kind == "timeout":
                set_group_timeout(pg, msg[1])
            elif kind == "allreduce":                # comm_profile: rank 1's side
                _, n, numel = msg
                conn.send(("done", time_allreduce(pg, n, numel)))
            elif kind == "learn":
                _, first, n, size, lr, want_losses, reply = msg
                if first != learner.updates:
                    raise RuntimeError(f"rank 1 is at update {learner.updates}, asked for {first}")
                learner.replay.size = size
                learner.set_lr(lr)
                losses = np.zeros(n, np.float32) if want_losses else None
                c0 = learner.comm_s
                learner.learn(n, losses)
                if reply:
                    conn.send(("done", (losses, learner.comm_s - c0)))
            else:
                raise RuntimeError(f"rank 1 got an unknown message {kind!r}")
    except (EOFError, KeyboardInterrupt, BrokenPipeError):
        pass
    except BaseException as e:
        _send_quietly(conn, ("error", f"rank 1 failed at update {learner.updates}: "
                                      f"{type(e).__name__}: {_one_line(e)}"))
    try:
        pg.shutdown()
        conn.close()
    finally:
        os._exit(status)


def _send_quietly(conn, msg) -> None:
    try:
        conn.send(msg)
    except Exception:
        pass


# -- rank 0: the learner the caller holds --------------------------------------------------
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
            late = (f" (no answer within the {self._timeout_s:.0f} s deadline: stopped or hung?)"
                    if self._proc.is_alive() else "")
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


def _one_line(e: BaseException) -> str:
    text = " ".join(str(e).split())
    return text[:300] + ("..." if len(text) > 300 else "")


def _exit_text(code) -> str:
    if code is None:
        return "is still running"
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with status {code}"


def median_update_s(learner: DDPLearner) -> float:
    return statistics.median(learner.update_times) if learner.update_times else float("nan")
