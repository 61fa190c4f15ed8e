"""n-step returns: the rows a round stores when the recipe bootstraps n steps ahead.

A generator's batch holds one-step transitions [T, N]. With n > 1 the replay instead
receives, for each step t of each environment,

    (s_t, a_t, R = r_t + g r_{t+1} + ... + g^(k-1) r_{t+k-1}, s_{t+k}, d)

where the window stops early (k < n) at the end of the episode. A window that ends in a
termination stores d = 1, so its bootstrap term vanishes and k does not matter; every
other window that is stored has k = n, so the learner's update (LEARNER.md, unchanged)
with its discount set to g^n is exactly the n-step target. A window cut short by a
truncation (k < n, d = 0) would need g^k: it is not stored (at most n - 1 rows of an
episode that reached the time limit). The last n - 1 steps of a round wait for the
next round, whose first steps complete their windows, so no other row is lost.
"""
from __future__ import annotations

from typing import Dict, Optional

import numpy as np

FIELDS = ("obs", "next_obs", "action", "reward", "terminated", "truncated")


class NStepReturns:
    """Turns each round's one-step batch into the n-step rows to store (see the module)."""

    def __init__(self, n: int, gamma: float):
        if not (isinstance(n, int) and n >= 1):
            raise ValueError(f"n must be a positive integer, got {n!r}")
        self.n, self.gamma = n, float(gamma)
        self.tail: Optional[Dict[str, np.ndarray]] = None
        self.dropped = 0                # truncated windows shorter than n, not stored

    def __call__(self, batch: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
        n = self.n
        if n == 1:
            return batch
        b = {k: np.asarray(batch[k]) for k in FIELDS}
        if self.tail is not None:
            b = {k: np.concatenate([self.tail[k], b[k]]) for k in FIELDS}
        L = b["obs"].shape[0]
        S = L - n + 1                   # windows with n steps in hand
        if S < 1:
            self.tail = b
            return _empty_like(b)
        done = b["terminated"] | b["truncated"]
        ret = np.zeros(b["reward"][:S].shape, np.float64)
        alive = np.ones(ret.shape, bool)
        nxt = b["next_obs"][:S].copy()
        term = np.zeros(ret.shape, bool)
        steps = np.zeros(ret.shape, np.int64)
        for i in range(n):
            ret += np.where(alive, self.gamma ** i * b["reward"][i:i + S], 0.0)
            nxt[alive] = b["next_obs"][i:i + S][alive]
            term = np.where(alive, b["terminated"][i:i + S], term)
            steps = np.where(alive, i + 1, steps)
            alive &= ~done[i:i + S]
        keep = (steps == n) | term
        self.dropped += int((~keep).sum())
        self.tail = {k: v[S:] for k, v in b.items()}
        return {"obs": b["obs"][:S][keep][:, None], "next_obs": nxt[keep][:, None],
                "action": b["action"][:S][keep][:, None],
                "reward": ret[keep].astype(np.float32)[:, None],
                "terminated": term[keep][:, None], "truncated": np.zeros((int(keep.sum()), 1), bool)}


def _empty_like(b):
    return {k: v[:0].reshape((0, 1) + v.shape[2:]) for k, v in b.items()}


def nstep_reference(rounds, n: int, gamma: float):
    """The same rows, one environment and one step at a time (the test's judge): a list of
    (obs, action, return, next_obs, terminated) tuples in the order NStepReturns stores them."""
    b = {k: np.concatenate([r[k] for r in rounds]) for k in FIELDS}
    T, N = b["reward"].shape
    # rows are stored round by round, time-major: the window starting at global step t of
    # env i is stored with the round in which step t + n - 1 arrives
    out = []
    for t in range(T - n + 1):
        for i in range(N):
            R, k = 0.0, 0
            while True:
                R += gamma ** k * float(b["reward"][t + k, i])
                k += 1
                if b["terminated"][t + k - 1, i] or b["truncated"][t + k - 1, i] or k == n:
                    break
            term = bool(b["terminated"][t + k - 1, i])
            if k == n or term:
                out.append((b["obs"][t, i], int(b["action"][t, i]), np.float32(R),
                            b["next_obs"][t + k - 1, i], term))
    return out
