"""v2: v1's code in persistent worker processes, outputs in shared memory.

The generator starts its workers once (forkserver start method; see NOTES.md) and gives
each a contiguous slice of the environments. A call of generate(T) sends every worker one
small message -- T, the shared-memory segment's name, new weights if set_weights was
called, epsilon -- and waits for the "done" answers while watching each worker's process
sentinel, so a worker that dies, raises or hangs turns into a one-line WorkerFailure (a
RuntimeError) at once instead of a hang. The pool of processes, its segment and the
deadline of every call (docs/RELIABILITY.md) are core/worker_pool.py's, which every
workload's v2 shares; what is CartPole's is here and in worker.py.

Deadlines: each call must finish within max(floor, factor x expected), expected = T x (the
largest slice) x max(1, workers / cores) x seconds per transition, the workers' own
calibration, then the slowest call measured; a larger network scales it by the work of its
forward pass (procutil.mlp_work).
"""
from dataclasses import replace

import numpy as np

from core import procutil
from core.api import Generator, GenConfig, StudyError, check_weights
from core.pool_client import PoolClient
from core.worker_pool import WorkerFailure, WorkerPool, context
from . import worker as W

MAX_WORKERS = 64
__all__ = ["MultiprocessingGenerator", "WorkerFailure"]


class MultiprocessingGenerator(PoolClient, Generator):
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
        self._pending_weights = None
        self._views = None
        self.slices = [(w * n // nw, (w + 1) * n // nw) for w in range(nw)]
        self.hidden = int(weights["w1"].shape[0]) if weights is not None else 0
        self.pool = WorkerPool("v2_multiprocessing", context(W.__name__), self.slices, "v2")
        wcfg = replace(cfg, weights=weights)
        self.pool.start(W.worker_main, lambda w, lo, hi: (w, wcfg, lo, hi), "v2-worker")

    def set_weights(self, weights):
        w = check_weights(weights)
        if self.cfg.policy == "egreedy":    # the random policy has no use for a network
            self._pending_weights = w
            h = int(w["w1"].shape[0])
            if h != self.hidden:
                self.pool.cost.scale(procutil.mlp_work(h) / procutil.mlp_work(self.hidden))
                self.hidden = h

    def set_epsilon(self, epsilon):
        self.epsilon = float(epsilon)

    def generate(self, T):
        return self._generate(T, W.ARRAYS, lambda v, T: v.update(reward=np.ones((T, self.cfg.n_envs), np.float32)))
