"""The Python face of every C++ rung: a Generator around a native Rollout object.

The output arrays are allocated once (per T) and handed to C++, which writes every
element; nothing is copied. The arrays returned are reused by the next generate().
"""
from __future__ import annotations

from typing import Dict

import numpy as np

from core.api import Generator, GenConfig, StudyError, check_weights, empty_batch

ORDER = ("obs", "action", "reward", "next_obs", "terminated", "truncated")
ALIGN = 64          # cache line: threads' blocks of a time row then start on line boundaries


def aligned_empty(shape, dtype, align=ALIGN):
    """np.empty, but the data starts on an `align`-byte boundary (NumPy gives 16)."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape)) * dtype.itemsize
    raw = np.empty(nbytes + align, np.uint8)
    off = (-raw.ctypes.data) % align
    return raw[off:off + nbytes].view(dtype).reshape(shape)


def aligned_batch(T: int, N: int) -> Dict[str, np.ndarray]:
    """empty_batch(T, N) with every array cache-line aligned."""
    ref = empty_batch(T, N)
    out = {}
    for k, a in ref.items():
        out[k] = aligned_empty(a.shape, a.dtype)
        out[k][...] = a if k == "reward" else 0
    return out


class NativeGenerator(Generator):
    def __init__(self, cfg: GenConfig, core):
        super().__init__(cfg)
        if cfg.policy not in ("random", "egreedy"):
            raise StudyError(f"unknown policy '{cfg.policy}'")
        self.core = core
        self._batch = None
        self._T = -1
        self._since_weights = 0           # transitions generated since the weights were set
        if cfg.policy == "egreedy":
            self.set_weights(cfg.resolved_weights())

    def set_weights(self, weights: Dict[str, np.ndarray]) -> None:
        w = check_weights(weights)
        self.core.set_weights(w["w1"], w["b1"], w["w2"], w["b2"], w["w3"], w["b3"])
        self._since_weights = 0

    def set_epsilon(self, epsilon: float) -> None:
        self.core.set_epsilon(float(epsilon))

    def buffers(self, T: int) -> Dict[str, np.ndarray]:
        if T != self._T:
            self._batch = aligned_batch(T, self.cfg.n_envs)
            self._T = T
        return self._batch

    def generate(self, T: int) -> Dict[str, np.ndarray]:
        if T < 1:
            raise StudyError(f"T must be at least 1, got {T}")
        b = self.buffers(T)
        self.core.generate(*(b[k] for k in ORDER))
        self._since_weights += T * self.cfg.n_envs
        return b

    def work(self):
        """{"flops", "transitions"} the network executed since its weights were set, for a
        rung whose module counts them (v5c); None otherwise."""
        if (self.cfg.policy != "egreedy" or self.core is None or not hasattr(self.core, "work")
                or not self._since_weights):
            return None
        return {"flops": 2 * int(self.core.work()), "transitions": self._since_weights}

    @property
    def workers_used(self):
        """Threads the last generate() ran on (OpenMP rungs run small calls on one)."""
        return getattr(self.core, "last_threads", None) if self.core is not None else None

    def close(self) -> None:
        self.core = None
        self._batch = None


def micro_step_of(make_core):
    """micro_step(n_envs): one random-policy step of n_envs environments (generate(1))."""
    def micro_step(n_envs):
        g = NativeGenerator(GenConfig(n_envs=n_envs, policy="random"), make_core(n_envs, False))
        g.generate(1)
        return lambda: g.generate(1)
    return micro_step


def micro_forward_of(make_core):
    """micro_forward(n_envs): greedy actions of the rung's network for n_envs observations."""
    def micro_forward(n_envs):
        from core.api import init_weights
        g = NativeGenerator(GenConfig(n_envs=n_envs, policy="egreedy", weights=init_weights(0)),
                            make_core(n_envs, True))
        obs = np.ascontiguousarray(
            np.stack([0.01 * np.arange(n_envs), np.full(n_envs, -0.02), np.full(n_envs, 0.03),
                      np.full(n_envs, 0.01)], axis=1).astype(np.float32))
        act = np.empty(n_envs, np.int64)
        return lambda: g.core.greedy_batch(obs, act)
    return micro_forward
