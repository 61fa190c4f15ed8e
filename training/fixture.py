"""The fixed replay buffer and probe observations every learner is verified on (LEARNER.md).

The buffer is filled by the baseline rung (core.discover.baseline_rung) with the
egreedy policy over init_weights(FIXTURE_SEED), epsilon 0.5, seed FIXTURE_SEED, N=64
environments, 5 calls of T=32: 10,240 transitions, the same for every learner (and, by
WORKLOAD.md, the same from any rung).
"""
from __future__ import annotations

import functools

import numpy as np

from core import rng
from core.api import GenConfig, init_weights
from core.batches import fill as fill_rows, run_batches
from core.replay import Replay

FIXTURE_SEED = 2024
FIXTURE_N, FIXTURE_T, FIXTURE_CALLS = 64, 32, 5
PROBES = 4096


@functools.lru_cache(None)
def fixture_batches():
    from core.discover import baseline_rung
    cfg = GenConfig(n_envs=FIXTURE_N, seed=FIXTURE_SEED, policy="egreedy", epsilon=0.5,
                    weights=init_weights(FIXTURE_SEED))
    return tuple(run_batches(baseline_rung().make_generator, cfg, FIXTURE_T, FIXTURE_CALLS))


def fixed_replay(capacity: int = FIXTURE_N * FIXTURE_T * FIXTURE_CALLS, fill: int = None) -> Replay:
    """A replay buffer holding the fixture's transitions (repeated until `fill` rows)."""
    return fill_rows(Replay(capacity), fixture_batches(), fill or FIXTURE_N * FIXTURE_T * FIXTURE_CALLS)


def probe_observations(n: int = PROBES) -> np.ndarray:
    """Observations to compare greedy actions on: the fixture's obs plus uniform draws
    over CartPole's reachable box (counter-based RNG, stream INIT, index 1000)."""
    seen = np.concatenate([b["obs"].reshape(-1, 4) for b in fixture_batches()])[: n // 2]
    k = rng.key(FIXTURE_SEED, rng.INIT, 1000)
    u = rng.u01_np(rng.mix_np(np.arange((n - len(seen)) * 4, dtype=np.uint64) ^ np.uint64(k)))
    box = np.array([2.4, 3.0, 0.21, 3.5])
    drawn = ((2 * u.reshape(-1, 4) - 1) * box).astype(np.float32)
    return np.ascontiguousarray(np.concatenate([seen, drawn]).astype(np.float32))
