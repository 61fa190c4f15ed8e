"""v2 (chess): v1's games in persistent worker processes, the batch in shared memory.

The generator starts min(workers, N) worker processes once (forkserver; NOTES.md says why)
and gives each a contiguous slice of the N games (worker.py runs v1's code on it). A call
of generate(T) sends every worker one small message -- T, the shared-memory segment's name,
the new weights if set_weights was called since the last call, epsilon -- and waits for the
"done" answers while watching each worker's process sentinel: a worker that dies, raises or
stays stopped becomes a one-line WorkerFailure (a RuntimeError: a failed run, exit status 1
under the harness, where a StudyError is a refused input, status 2) naming it, the others are
terminated, and the generator refuses further calls. The pool of processes, its segment and
every call's deadline (docs/RELIABILITY.md) are core/worker_pool.py's, shared with
CartPole's v2; what is chess's is here and in worker.py.

Deadlines: a call must come back within max(floor, factor x expected), expected = T x
(largest slice) x max(1, workers / cores) x seconds per transition: the workers' own
calibration, then the slowest call measured, scaled up with a larger network (net_work).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from core.api import GenConfig, Generator
from core.errors import StudyError
from core.pool_client import PoolClient
from core.worker_pool import WorkerFailure, WorkerPool, context
from versions.chess.common import spec
from versions.chess.common.net import check_weights, init_weights
from versions.chess.v1_python.rollout import check_config

from . import worker as W

MAX_WORKERS = 64
STEP_MADDS = 2_000_000      # v1's python-chess step, in multiply-adds of the forward's time
__all__ = ["MultiprocessingChessGenerator", "WorkerFailure"]


def net_work(hidden: int) -> float:
    """Relative cost of one egreedy transition with hidden size H (the forward's
    multiply-adds plus the step's)."""
    return STEP_MADDS + spec.OBS_DIM * hidden + hidden * hidden + hidden * spec.N_ACTIONS


def blas_pool() -> int:
    """Threads of this process's BLAS pool: what v1's forward would use here (every core by
    default; the bench pins it to one)."""
    try:
        from threadpoolctl import threadpool_info
        n = [i.get("num_threads") or 1 for i in threadpool_info() if i.get("user_api") == "blas"]
        return max(n) if n else 1
    except Exception:           # no threadpoolctl or an odd library: one thread each
        return 1


def check_workers(workers) -> int:
    if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) \
            or not 1 <= workers <= MAX_WORKERS:
        raise StudyError(f"v2_multiprocessing: workers must be an integer in [1, {MAX_WORKERS}], "
                         f"got {workers!r}")
    return int(workers)


class MultiprocessingChessGenerator(PoolClient, Generator):
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
        self._pending_weights = None
        self._views = None
        self.hidden = int(weights["w1"].shape[0]) if weights is not None else 0
        self.pool = WorkerPool("v2_multiprocessing", context(W.__name__), self.slices, "v2chess")
        wcfg = replace(cfg, weights=weights, epsilon=self.epsilon, n_envs=n, workers=1)
        blas = max(1, blas_pool() // nw)    # each worker a share of v1's BLAS pool
        self.pool.start(W.worker_main, lambda w, lo, hi: (w, wcfg, lo, hi, blas), "chess-v2-worker")

    def set_weights(self, weights):
        w = check_weights(weights)          # validated whatever the policy, as in v1
        if self.cfg.policy == "egreedy":    # a random-policy generator stays random
            self._pending_weights = w
            h = int(w["w1"].shape[0])
            if h != self.hidden:
                self.pool.cost.scale(net_work(h) / net_work(self.hidden))
                self.hidden = h

    def set_epsilon(self, epsilon):
        self.epsilon = spec.check_epsilon(epsilon)

    def generate(self, T):
        return self._generate(T, spec.ARRAYS)
