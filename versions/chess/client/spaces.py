"""The spaces of ladder/Chess-v0: observations in WORKLOAD.md's float planes (or the compact
words), and action spaces whose sample() draws a *legal* action.

Gymnasium's Discrete(4672).sample() would almost always name an illegal move, which the env
refuses; so, as a random agent expects, the action spaces here sample uniformly among the
legal actions of the env's current position (from its own np_random, seeded by
space.seed() and by reset(seed=...)). sample(mask=...) takes a mask as Discrete does, bool
or int8. Membership (contains) is Discrete(4672)'s: legality is the env's to check.
"""
from __future__ import annotations

from typing import Callable, Optional

import numpy as np
from gymnasium import spaces

from versions.chess.common.spec import N_ACTIONS, OBS_WORDS, PLANES

OBS_MODES = ("planes", "compact")


def observation_space(obs_mode: str) -> spaces.Box:
    """One env's observation: float32 [20, 8, 8] in [0, 1] (the halfmove plane is clock / 100
    and a game ends at 100), or the compact uint64 [13] words."""
    if obs_mode == "planes":
        return spaces.Box(0.0, 1.0, (PLANES, 8, 8), np.float32)
    return spaces.Box(0, np.iinfo(np.uint64).max, (OBS_WORDS,), np.uint64)


def _pick(np_random: np.random.Generator, legal: np.ndarray) -> np.ndarray:
    """One uniformly chosen True column of each row of legal (bool [n, 4672]); 0 where none."""
    counts = legal.sum(axis=1)
    k = np.floor(np_random.random(len(legal)) * counts).astype(np.int64)
    flat = np.flatnonzero(legal)                    # row-major: each row's columns, ascending
    start = np.cumsum(counts) - counts
    return np.where(counts > 0, flat[np.minimum(start + k, max(len(flat) - 1, 0))] % legal.shape[1]
                    if len(flat) else 0, 0).astype(np.int64)


class LegalDiscrete(spaces.Discrete):
    """Discrete(4672) whose sample() draws a legal action of its env's current position."""

    def __init__(self, legal: Optional[Callable[[], np.ndarray]] = None, seed=None):
        super().__init__(N_ACTIONS, seed=seed)
        self.legal = legal          # () -> bool [4672] of the current position, or None

    def sample(self, mask=None, probability=None):
        if probability is not None or (mask is None and self.legal is None):
            return super().sample(mask=mask, probability=probability)
        legal = self.legal() if mask is None else np.asarray(mask).astype(np.bool_)
        if legal is None or legal.shape != (N_ACTIONS,):
            return super().sample(mask=mask)
        return np.int64(_pick(self.np_random, legal[None])[0])


class LegalMultiDiscrete(spaces.MultiDiscrete):
    """MultiDiscrete([4672] * N) whose sample() draws a legal action in every env."""

    def __init__(self, n: int, legal: Optional[Callable[[], np.ndarray]] = None, seed=None):
        super().__init__(np.full(n, N_ACTIONS, np.int64), seed=seed)
        self.legal = legal          # () -> bool [N, 4672], or None

    def sample(self, mask=None, probability=None):
        if probability is not None or (mask is None and self.legal is None):
            return super().sample(mask=mask, probability=probability)
        legal = self.legal() if mask is None else np.asarray(mask).astype(np.bool_)
        if legal is None or legal.shape != (len(self.nvec), N_ACTIONS):
            return super().sample(mask=mask)
        return _pick(self.np_random, legal)
