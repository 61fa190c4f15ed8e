"""The replay buffer of LEARNER.md: one float32 row per transition, a ring.

Row layout (core.spec.REPLAY): obs[0:4] next_obs[4:8] action[8] reward[9] terminated[10].
Rows are stored in the order the transitions arrive (a batch [T, N] is stored time-major:
row t*N + i holds env i's step t), at position `pos`, wrapping at `capacity`; `size` counts
the rows holding data. Only `terminated` cuts the bootstrap: a truncated step keeps
bootstrapping from its final observation.

Minibatch rows come from the counter-based RNG, so every learner in any language samples
the same rows: update number u (0, 1, ... over the learner's life), row j of the minibatch:

    index(u, j) = ((draw(seed, SAMPLE, u, j) >> 32) * size) >> 32
"""
from __future__ import annotations

from typing import Dict

import numpy as np

from . import rng
from .errors import StudyError
from .spec import REPLAY, ReplaySpec


class Replay:
    def __init__(self, capacity: int, spec: ReplaySpec = REPLAY):
        if not isinstance(capacity, (int, np.integer)) or not 0 < capacity < 2 ** 32:
            raise StudyError(f"replay capacity must be an integer in [1, 2^32), got {capacity!r}")
        self.spec = spec
        self.capacity = int(capacity)
        self.data = np.zeros((self.capacity, spec.width), np.float32)
        self.pos = 0
        self.size = 0

    def add(self, batch: Dict[str, np.ndarray]) -> int:
        """Copy a time-major batch [T, N, ...] in (a generator's arrays are valid only until
        its next call, so they are copied here, never kept). Returns the rows added."""
        s = self.spec
        obs = batch["obs"]
        m = obs.shape[0] * obs.shape[1]
        if m > self.capacity:
            raise StudyError(f"a batch of {m} transitions exceeds the replay buffer ({self.capacity})")
        d = s.env.obs_dim
        cols = [(s.obs, obs.reshape(m, d)), (s.next_obs, batch["next_obs"].reshape(m, d)),
                (s.action, batch["action"].reshape(m)), (s.reward, batch["reward"].reshape(m)),
                (s.terminated, batch["terminated"].reshape(m))]
        start, end = self.pos, self.pos + m
        parts = [(start, min(end, self.capacity), 0)]
        if end > self.capacity:
            parts.append((0, end - self.capacity, self.capacity - start))
        for a, b, off in parts:
            for col, src in cols:
                self.data[a:b, col] = src[off:off + (b - a)]
        self.pos = end % self.capacity
        self.size = min(self.capacity, self.size + m)
        return m

    def indices(self, seed: int, first_update: int, n_updates: int, batch_size: int) -> np.ndarray:
        """Minibatch rows of updates first_update .. first_update+n_updates-1: int64 [n, B]."""
        return sample_indices(seed, first_update, n_updates, batch_size, self.size)


def sample_indices(seed: int, first_update: int, n_updates: int, batch_size: int,
                   size: int) -> np.ndarray:
    """index(u, j) of LEARNER.md for u in [first_update, first_update + n_updates), j < B."""
    if size < 1:
        raise StudyError("cannot sample from an empty replay buffer")
    keys = rng.keys_np(seed, rng.SAMPLE, first_update, n_updates)            # [n]
    draws = rng.mix_np(keys[:, None] ^ np.arange(batch_size, dtype=np.uint64)[None, :])
    return rng.below_np(draws, size)
