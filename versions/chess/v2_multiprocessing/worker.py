"""What one v2 worker process runs: v1's games lo..hi-1, its columns of the batch.

The worker plays v1's code (PythonChessGenerator) on a contiguous slice of the N games,
keyed by their global indices, so every game draws from the counter-based RNG exactly what
it draws in v1 and the slice's batch is v1's columns lo..hi-1. core/worker_pool.py's
`serve` does the rest (calibration on scratch games, the shared segment, "done", ending
with the parent), as for every workload's v2; this file holds what is chess's.
"""
from __future__ import annotations

from dataclasses import replace

from threadpoolctl import threadpool_limits

from core import rng
from core.worker_pool import serve
from versions.chess.common import spec
from versions.chess.v1_python.rollout import Game, PythonChessGenerator


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


def worker_main(index, cfg, lo, hi, blas_threads, conn):
    """Serve calls on games lo..hi-1 until stopped (core/worker_pool.py, serve), with
    `blas_threads`, this worker's share of the cores, for NumPy's BLAS pool (the network)."""
    threadpool_limits(blas_threads, user_api="blas")   # workers x BLAS threads = the cores
    serve(conn, lambda a, b: SliceGenerator(cfg, a, b), lo, hi, int(cfg.n_envs), spec.ARRAYS)
