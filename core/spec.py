"""Every shape and dtype of the study, written once.

EnvSpec says what the environment is (observation size, actions, episode limit);
BatchSpec the arrays of one generated batch (WORKLOAD.md); ReplaySpec the row layout of
the replay buffer (LEARNER.md); NetSpec the Q-network's layers, weight arrays and flop
counts. CartPole-v1 is the one environment today: a second one would be a second set of
these four, and code that reads shapes from here needs no other change.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional, Tuple

import numpy as np


@dataclass(frozen=True)
class EnvSpec:
    name: str                        # Gymnasium id of the reference environment
    obs_dim: int                     # length of one observation
    n_actions: int                   # discrete actions 0..n_actions-1
    max_episode_steps: int           # truncation limit
    solved_return: float             # "solved": mean return of the last 100 episodes >= this
    obs_names: Tuple[str, ...] = ()


CARTPOLE = EnvSpec("CartPole-v1", obs_dim=4, n_actions=2, max_episode_steps=500,
                   solved_return=475.0, obs_names=("x", "x_dot", "theta", "theta_dot"))


@dataclass(frozen=True)
class BatchSpec:
    """The arrays of one batch of T steps of N environments, time-major (a workload's
    WORKLOAD.md): (name, per-transition shape, dtype) each. Without `arrays`, CartPole's six."""
    env: EnvSpec
    arrays: Tuple[Tuple[str, Tuple[int, ...], str], ...] = ()

    def __post_init__(self):
        if self.arrays:
            return
        d = self.env.obs_dim
        object.__setattr__(self, "arrays", (
            ("obs", (d,), "float32"), ("action", (), "int64"), ("reward", (), "float32"),
            ("next_obs", (d,), "float32"), ("terminated", (), "bool"),
            ("truncated", (), "bool")))

    @property
    def names(self) -> Tuple[str, ...]:
        return tuple(a[0] for a in self.arrays)

    def shape(self, name: str, T: int, N: int) -> Tuple[int, ...]:
        for n, tail, _ in self.arrays:
            if n == name:
                return (T, N) + tail
        raise KeyError(name)

    def dtype(self, name: str) -> np.dtype:
        for n, _, dt in self.arrays:
            if n == name:
                return np.dtype(dt)
        raise KeyError(name)

    @property
    def bytes_per_transition(self) -> int:
        """Bytes one transition occupies across the six arrays (46 for CartPole)."""
        return sum(int(np.prod(tail, dtype=np.int64)) * np.dtype(dt).itemsize
                   for _, tail, dt in self.arrays)

    def empty(self, T: int, N: int) -> Dict[str, np.ndarray]:
        """Preallocated arrays (reward filled with 1.0, flags with False)."""
        out = {}
        for name, tail, dt in self.arrays:
            a = np.empty((T, N) + tail, dt)
            if name == "reward":
                a.fill(1.0)
            elif dt == "bool":
                a.fill(False)
            out[name] = a
        return out

    def check(self, batch: Dict[str, np.ndarray], T: int, N: int) -> Optional[str]:
        """None if `batch` has every array with its shape and dtype, else what is wrong."""
        for name, tail, dt in self.arrays:
            if name not in batch:
                return f"missing array '{name}'"
            a = batch[name]
            want = (T, N) + tail
            if getattr(a, "shape", None) != want or a.dtype != np.dtype(dt):
                return (f"{name}: got {getattr(a, 'dtype', type(a))}{list(getattr(a, 'shape', ()))}, "
                        f"want {np.dtype(dt)}{list(want)}")
        return None


@dataclass(frozen=True)
class ReplaySpec:
    """One float32 row per stored transition (LEARNER.md, "The replay buffer")."""
    env: EnvSpec

    @property
    def width(self) -> int:
        return 2 * self.env.obs_dim + 3

    @property
    def obs(self) -> slice:
        return slice(0, self.env.obs_dim)

    @property
    def next_obs(self) -> slice:
        return slice(self.env.obs_dim, 2 * self.env.obs_dim)

    @property
    def action(self) -> int:
        return 2 * self.env.obs_dim

    @property
    def reward(self) -> int:
        return 2 * self.env.obs_dim + 1

    @property
    def terminated(self) -> int:
        return 2 * self.env.obs_dim + 2


@dataclass(frozen=True)
class NetSpec:
    """The Q-network: Linear(obs_dim, H) -> ReLU -> Linear(H, H) -> ReLU -> Linear(H, n_actions)."""
    env: EnvSpec
    hidden: int = 128

    KEYS = ("w1", "b1", "w2", "b2", "w3", "b3")

    def layers(self) -> Tuple[Tuple[int, int], ...]:
        """(fan_in, fan_out) of the three Linear layers."""
        h = self.hidden
        return ((self.env.obs_dim, h), (h, h), (h, self.env.n_actions))

    def shapes(self) -> Dict[str, Tuple[int, ...]]:
        """nn.Linear layout: w is [out, in], b is [out]."""
        out = {}
        for i, (fi, fo) in enumerate(self.layers(), start=1):
            out[f"w{i}"] = (fo, fi)
            out[f"b{i}"] = (fo,)
        return out

    def forward_flops(self, rows: int = 1) -> int:
        """Multiply-adds x 2 of one forward pass over `rows` inputs (34,304 per row at H=128)."""
        return 2 * rows * sum(fi * fo for fi, fo in self.layers())

    def update_flops(self, batch: int, double: bool = True) -> int:
        """Flops of one DQN update on a minibatch, counted from the shapes (LEARNER.md):
        forwards of the policy on obs, of the target (and, Double DQN, of the policy) on
        next_obs; the backward pass of the policy: weight gradients of all three layers
        and input gradients of layers 3 and 2 (the observation needs none). Bias, ReLU,
        loss and optimiser work is O(parameters), not counted."""
        fwd = self.forward_flops(batch)
        forwards = fwd * (3 if double else 2)
        (f1i, f1o), (f2i, f2o), (f3i, f3o) = self.layers()
        grads_w = 2 * batch * (f1i * f1o + f2i * f2o + f3i * f3o)
        grads_x = 2 * batch * (f3i * f3o + f2i * f2o)
        return forwards + grads_w + grads_x


BATCH = BatchSpec(CARTPOLE)
REPLAY = ReplaySpec(CARTPOLE)
NET = NetSpec(CARTPOLE)
