"""The greedy evaluation that confirms a solve, once for the study and every peer.

The training half of "solved" comes from each trainer's own episode statistics; this is
the other half, and the same for everyone: `episodes` episodes of Gymnasium's own
CartPole-v1 (with its 500-step TimeLimit), environment i reset with seed `seed + i`,
actions chosen by a deterministic policy (epsilon 0). For our networks the policy is the
float32 NumPy forward with argmax ties to the lower index (`mlp_policy`); a peer plugs in
its own library's deterministic prediction.

`Periodic` is the practitioner's criterion, kept beside the study's: the same greedy
evaluation every `every` environment steps (as rl-zoo3's EvalCallback runs one every
eval_freq steps), and the run counts as trained at the first evaluation whose mean reaches
the threshold, whatever its training episodes' mean.
"""
from __future__ import annotations

import time
from typing import Callable, Dict, List, Optional

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


PERIODIC_EVERY = 10_000      # environment steps between two periodic evaluations (make e2e)


class Periodic:
    """The practitioner's criterion: a greedy evaluation (`greedy_eval`, the same episodes
    and seeds as the study's confirmation) each time the run's environment steps pass a
    multiple of `every`, looked at wherever the trainer hands back control (our round's
    end; a peer's step, or its epoch). Trained: the first evaluation with mean >= threshold.
    The evaluations' own time is measured apart (`eval_s`); the caller leaves it out of
    training time. After the first pass no more evaluations are run."""

    def __init__(self, every: int, episodes: int, threshold: float, seed: int):
        self.every, self.episodes, self.threshold, self.seed = int(every), episodes, threshold, seed
        self.next = self.every
        self.evals: List[list] = []          # [env steps, training s, mean return]
        self.passed_s: Optional[float] = None
        self.passed_steps: Optional[int] = None
        self.eval_s = 0.0

    @property
    def passed(self) -> bool:
        return self.passed_s is not None

    def check(self, env_steps: int, training_s: float, act_fn: Callable[[], Policy]) -> float:
        """Evaluate if `env_steps` passed the next multiple of `every`; the seconds spent."""
        if self.every <= 0 or self.passed or env_steps < self.next:
            return 0.0
        t0 = time.perf_counter()
        mean = float(np.mean(greedy_eval(act_fn(), self.episodes, seed=self.seed)))
        dt = time.perf_counter() - t0
        self.eval_s += dt
        self.next = (env_steps // self.every + 1) * self.every
        self.evals.append([int(env_steps), round(float(training_s), 4), mean])
        if mean >= self.threshold:
            self.passed_s, self.passed_steps = float(training_s), int(env_steps)
        return dt

    def row(self) -> dict:
        return {"every": self.every, "episodes": self.episodes, "threshold": self.threshold,
                "passed": self.passed, "passed_s": self.passed_s,
                "passed_env_steps": self.passed_steps, "evals": self.evals,
                "eval_s": self.eval_s, "evals_fields": ["env_steps", "training_s", "mean_return"]}
