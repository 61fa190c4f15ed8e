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

Modules: ddp.py (this: the group and one rank's learner), rank0.py (DDPLearner, the
caller's side and owner of rank 1), rank1.py (the child process), scripts/ddp_comm_profile.py (where
the time goes).

The process group is built directly from a TCPStore (what torch.distributed.new_group
does inside) rather than with init_process_group, so the learner leaves no global
torch.distributed state in the caller's process.
"""
from __future__ import annotations

import datetime
import time
import warnings

import numpy as np

from core.learner import LearnConfig
from core.replay import sample_indices
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
        self.spec = REPLAY            # CartPole's rows (the learner reads its network from it)
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
        return super().loss_of(rows, forward=self.ddp, scale=self.weight)


def _one_line(e: BaseException) -> str:
    text = " ".join(str(e).split())
    return text[:300] + ("..." if len(text) > 300 else "")
