"""Episode returns from the batches (the greedy evaluation that confirms a solve is
core/evaluate.py, shared with the peers)."""
from __future__ import annotations

from typing import List

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
