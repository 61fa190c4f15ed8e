"""A fast implementation of PQN's update checked against its reference (training/pqn.py's
TorchPQN), before it is timed; the algorithm ladder's counterpart of LEARNER.md's checks.

Both start from the same weights (torch's RNG seeded alike) and take the same minibatches
of one synthetic round (CartPole-scaled states, random actions, lambda-returns in [0, 60]).
The tolerance is measured in the same check: the reference run in float64 is a second
legitimate rounding of the same arithmetic, nearly exact beside float32. Taking it as exact,
the float32 reference's error is its distance from it; an implementation as accurate as the
reference is at most that far from the exact value too, so at most twice that distance from
the reference (after the same updates, weights relative to their largest magnitude; losses;
Q on the round's states). The tolerance: twice the float64 run's distance, never less than
a floor: for the weights FLOOR; for Q and the loss, single sums of `hidden` and `minibatch`
float32 terms, the classical bound n x 2^-24 on such a sum's rounding (relative to its
terms' magnitude), since their float64 distances are one rounding and may happen to be tiny.
A wrong step (a 5% learning rate change, a missing gradient) is thousands of times farther.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, List, Sequence

import numpy as np

from .pqn import TorchPQN

ROWS, MINIBATCH = 1024, 256          # one round of 32 x 32, minibatches of a quarter (PQN's defaults)
UPDATES = (1, 200)                   # the weights are compared after these many updates
SEEDS = (0, 1)
FLOOR = 1e-7                         # about one float32 rounding (2^-24 = 6e-8) of the largest value
U32 = 2.0 ** -24                     # float32's unit roundoff
SLACK = 2.0                          # the triangle inequality of the docstring


@dataclass
class Check:
    seed: int
    what: str
    value: float
    tolerance: float

    @property
    def ok(self) -> bool:
        return bool(np.isfinite(self.value) and self.value <= self.tolerance)

    def line(self) -> str:
        return (f"seed {self.seed}, {self.what}: {self.value:.3g} (tolerance {self.tolerance:.3g}) "
                f"{'ok' if self.ok else 'FAILED'}")


def distance(a: dict, b: dict) -> float:
    """Largest weight difference over the largest weight magnitude of b."""
    return max(float(np.max(np.abs(a[k] - b[k]))) for k in b) / max(float(np.max(np.abs(b[k]))) for k in b)


def round_data(seed: int):
    rng = np.random.default_rng(10_000 + seed)
    x = (rng.standard_normal((ROWS, 4)) * [1.0, 1.5, 0.1, 1.5]).astype(np.float32)
    a = rng.integers(0, 2, ROWS).astype(np.int64)
    G = rng.uniform(0.0, 60.0, ROWS).astype(np.float32)
    return x, a, G


def verify(implementation: Callable, hidden: int = 128, lr: float = 1e-3, max_norm: float = 10.0,
           seeds: Sequence[int] = SEEDS, updates: Sequence[int] = UPDATES) -> List[Check]:
    """Every check of `implementation(hidden, lr)` against TorchPQN (float32), each with
    twice the float64 reference's distance as its tolerance."""
    import torch
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    out: List[Check] = []
    try:
        for seed in seeds:
            made = []
            for make in (lambda: TorchPQN(hidden, lr), lambda: TorchPQN(hidden, lr, dtype=torch.float64),
                         lambda: implementation(hidden, lr)):
                torch.manual_seed(seed)
                made.append(make())
            ref, ref64, fast = made
            x, a, G = round_data(seed)
            out.append(Check(seed, "starting weights", distance(fast.weights(), ref.weights()), 0.0))
            q, q64, qf = ref.q(x), ref64.q(x), fast.q(x)
            scale = float(np.max(np.abs(q)))
            out.append(Check(seed, "Q of the round's states", float(np.max(np.abs(qf - q))) / scale,
                             max(SLACK * float(np.max(np.abs(q64 - q))) / scale, hidden * U32)))
            order = np.random.default_rng(20_000 + seed)
            for u in range(1, max(updates) + 1):
                idx = order.permutation(ROWS)[:MINIBATCH]
                lo, lo64, lf = (m.update(x, a, G, idx, max_norm) for m in (ref, ref64, fast))
                if u in updates:
                    w = ref.weights()
                    out.append(Check(seed, f"weights after {u} update(s)", distance(fast.weights(), w),
                                     max(SLACK * distance(ref64.weights(), w), FLOOR)))
                    out.append(Check(seed, f"loss of update {u}", abs(lf - lo) / abs(lo),
                                     max(SLACK * abs(lo64 - lo) / abs(lo), MINIBATCH * U32)))
    finally:
        torch.set_num_threads(threads)
    return out
