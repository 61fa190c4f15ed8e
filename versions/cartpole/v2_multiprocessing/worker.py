"""What runs inside one v2 worker process: v1's code on environments lo..hi-1.

The worker owns a contiguous slice of the N environments and its own copy of the
Q-network, and runs v1's PythonGenerator on it with the global environment indices, so the
counter-based RNG gives every environment the draws it has in v1. core/worker_pool.py's
`serve` does the rest (calibration, the shared segment, "done", ending with the parent):
what v2 shares with every workload's v2 lives there once.
"""
from dataclasses import replace

from core import rng
from core.worker_pool import serve
from versions.cartpole.v1_python.rollout import PythonGenerator, to_f32

# What the workers write; reward is all ones (the parent's view), so it is not written.
ARRAYS = (("obs", (4,), "float32"), ("action", (), "int64"), ("next_obs", (4,), "float32"),
          ("terminated", (), "bool"), ("truncated", (), "bool"))


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


def worker_main(index, cfg, lo, hi, conn):
    """Serve calls on environments lo..hi-1 until stopped (core/worker_pool.py, serve)."""
    serve(conn, lambda a, b: SliceGenerator(cfg, a, b), lo, hi, cfg.n_envs, ARRAYS)
