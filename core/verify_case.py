"""One verification scenario of a rung, shared by every workload's verifier
(versions/<workload>/common/verify.py)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional


@dataclass(frozen=True)
class Case:
    """One verification scenario of a rung, for every workload's verifier: `calls` x
    generate(`steps`) over `n_envs` environments (or games) from `seed` under `policy`, with
    the network's weights from the seed, or from `weights()` where given."""
    label: str
    n_envs: int
    steps: int
    calls: int
    seed: int
    policy: str
    epsilon: float = 0.1
    weights: Optional[Callable[[], Any]] = None

    def config(self, workers: int = 1):
        from core.api import GenConfig
        return GenConfig(n_envs=self.n_envs, seed=self.seed, policy=self.policy, epsilon=self.epsilon,
                         weights=None if self.weights is None else self.weights(), workers=workers)
