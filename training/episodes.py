"""Episode returns from the batches, and the greedy evaluation that confirms a solve."""
from __future__ import annotations

from typing import Dict, List

import numpy as np


class EpisodeTracker:
    """Per-environment step counters across batches: an episode's return is its length."""

    def __init__(self, n: int):
        self.length = np.zeros(n, np.int64)
        self.returns: List[int] = []
        self.end_round: List[int] = []

    def observe(self, batch, round_index: int) -> None:
        done = batch["terminated"] | batch["truncated"]
        for t in range(done.shape[0]):
            self.length += 1
            d = done[t]
            if d.any():
                self.returns.extend(self.length[d].tolist())
                self.end_round.extend([round_index] * int(d.sum()))
                self.length[d] = 0

    def mean_last(self, k: int) -> float:
        if not self.returns:
            return float("nan")
        return float(np.mean(self.returns[-k:]))


def greedy_actions(w: Dict[str, np.ndarray], obs: np.ndarray) -> np.ndarray:
    """argmax of the float32 Q-network, ties to the lower index."""
    h = np.maximum(obs @ w["w1"].T + w["b1"], 0)
    h = np.maximum(h @ w["w2"].T + w["b2"], 0)
    q = h @ w["w3"].T + w["b3"]
    return np.argmax(q, axis=1).astype(np.int64)


def greedy_eval(policy_weights: Dict[str, np.ndarray], episodes: int = 20, seed: int = 12345) -> List[int]:
    """Returns of `episodes` greedy (epsilon 0) episodes in Gymnasium's own CartPole-v1.

    An independent check: Gymnasium's environment (with its 500-step TimeLimit), its own
    seeding, and the policy evaluated in float32 NumPy with argmax ties to the lower index.
    """
    import gymnasium as gym
    envs = [gym.make("CartPole-v1") for _ in range(episodes)]
    obs = np.stack([e.reset(seed=seed + i)[0] for i, e in enumerate(envs)]).astype(np.float32)
    alive = np.ones(episodes, bool)
    ret = np.zeros(episodes, np.int64)
    try:
        while alive.any():
            act = greedy_actions(policy_weights, obs)
            for i in np.flatnonzero(alive):
                o, _, term, trunc, _ = envs[i].step(int(act[i]))
                obs[i] = o
                ret[i] += 1
                if term or trunc:
                    alive[i] = False
    finally:
        for e in envs:
            e.close()
    return ret.tolist()
