"""The greedy evaluation that confirms a solve, once for the study and every peer.

The training half of "solved" comes from each trainer's own episode statistics; this is
the other half, and the same for everyone: `episodes` episodes of Gymnasium's own
CartPole-v1 (with its 500-step TimeLimit), environment i reset with seed `seed + i`,
actions chosen by a deterministic policy (epsilon 0). For our networks the policy is the
float32 NumPy forward with argmax ties to the lower index (`mlp_policy`); a peer plugs in
its own library's deterministic prediction.
"""
from __future__ import annotations

from typing import Callable, Dict, List

import numpy as np

Policy = Callable[[np.ndarray], np.ndarray]     # (n, 4) float32 observations -> n actions


def eval_seed(seed: int) -> int:
    """The first reset seed of a training run's greedy evaluation."""
    return 10_000 + 97 * (seed % 10 ** 9)


def greedy_actions(w: Dict[str, np.ndarray], obs: np.ndarray) -> np.ndarray:
    """argmax of the float32 ReLU MLP w1 b1 w2 b2 w3 b3 (nn.Linear layout), ties low."""
    h = np.maximum(obs @ w["w1"].T + w["b1"], 0)
    h = np.maximum(h @ w["w2"].T + w["b2"], 0)
    return np.argmax(h @ w["w3"].T + w["b3"], axis=1).astype(np.int64)


def mlp_policy(w: Dict[str, np.ndarray]) -> Policy:
    return lambda obs: greedy_actions(w, obs)


def greedy_eval(act: Policy, episodes: int = 20, seed: int = 12345) -> List[int]:
    """Returns of `episodes` episodes of Gymnasium's CartPole-v1 under `act`, batched: each
    step `act` gets every environment's observation (finished ones included, so the batch
    keeps its shape) and finished environments are not stepped again."""
    import gymnasium as gym
    envs = [gym.make("CartPole-v1") for _ in range(episodes)]
    obs = np.stack([e.reset(seed=seed + i)[0] for i, e in enumerate(envs)]).astype(np.float32)
    alive = np.ones(episodes, bool)
    ret = np.zeros(episodes, np.int64)
    try:
        while alive.any():
            actions = np.asarray(act(obs)).reshape(-1)
            for i in np.flatnonzero(alive):
                o, _, term, trunc, _ = envs[i].step(int(actions[i]))
                obs[i] = o
                ret[i] += 1
                if term or trunc:
                    alive[i] = False
    finally:
        for e in envs:
            e.close()
    return ret.tolist()
