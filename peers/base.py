"""What every peer shares: the batch buffer, the two policies, thread pinning.

A peer owns N environments of someone else's CartPole-v1 and, like a version's
generator, `generate(T)` steps all of them T times and returns the batch it collected.
Peers do not meet WORKLOAD.md to the letter (their own RNG, and some reset on the step
after an episode ends), so they are timed beside the ladder, never verified against it.

Policies, as a practitioner writes them:
  random   numpy's Generator draws N actions per step (one call, batched).
  egreedy  the study's Q-network (Linear 4-128-128-2, harness.api.init_weights) in
           PyTorch, one batched forward pass per step under torch.no_grad(), argmax,
           then epsilon-greedy with numpy's Generator.
"""
from __future__ import annotations

import os
from typing import Dict, Optional

import numpy as np

from core.api import DEFAULT_EPSILON, init_weights
from core.procutil import pinned_threads

POLICY_THREADS = 1


def thread_env(threads: int, policy_threads: int = None) -> Dict[str, str]:
    """Environment variables for a peer's process: BLAS/OpenMP (the PyTorch policy) held to
    `policy_threads` (default POLICY_THREADS), XLA's CPU thread pool on only if `threads` > 1."""
    pt = POLICY_THREADS if policy_threads is None else policy_threads
    env = pinned_threads(pt)
    env["XLA_FLAGS"] = f"--xla_cpu_multi_thread_eigen={'true' if threads > 1 else 'false'}"
    return env


class PeerUnavailable(Exception):
    """The peer's package is missing or cannot run here; the message is the reason."""


class TorchPolicy:
    """Epsilon-greedy over the study's Q-network in PyTorch, batched over environments."""

    def __init__(self, seed: int, epsilon: float = DEFAULT_EPSILON, threads: int = 1):
        import torch
        torch.set_num_threads(threads)
        self.torch = torch
        w = init_weights(seed)
        net = torch.nn.Sequential(torch.nn.Linear(4, w["w1"].shape[0]), torch.nn.ReLU(),
                                  torch.nn.Linear(w["w1"].shape[0], w["w2"].shape[0]),
                                  torch.nn.ReLU(), torch.nn.Linear(w["w2"].shape[0], 2))
        with torch.no_grad():
            for i, layer in zip((1, 2, 3), (net[0], net[2], net[4])):
                layer.weight.copy_(torch.from_numpy(w[f"w{i}"]))
                layer.bias.copy_(torch.from_numpy(w[f"b{i}"]))
        net.eval()
        self.net = net
        self.epsilon = epsilon
        self.rng = np.random.default_rng(seed)

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        with self.torch.no_grad():
            q = self.net(self.torch.as_tensor(obs, dtype=self.torch.float32))
            greedy = q.argmax(dim=1).numpy()
        n = greedy.shape[0]
        explore = self.rng.random(n) < self.epsilon
        return np.where(explore, self.rng.integers(0, 2, n), greedy).astype(np.int64)


class RandomPolicy:
    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        return self.rng.integers(0, 2, obs.shape[0], dtype=np.int64)


def make_policy(policy: str, seed: int, threads: int = 1):
    if policy == "random":
        return RandomPolicy(seed)
    if policy == "egreedy":
        return TorchPolicy(seed, threads=threads)
    raise ValueError(f"unknown policy '{policy}'")


class Peer:
    """Base class: N environments, a policy, a reusable batch buffer."""

    name = ""            # registry key, e.g. "gym_sync"
    title = ""           # table label, e.g. "Gymnasium SyncVectorEnv"
    autoreset = ""       # "same-step", "next-step" or a note
    differs = ""         # how it differs from WORKLOAD.md and what its timing includes

    def __init__(self, n_envs: int, policy: str = "random", seed: int = 0, threads: int = 1):
        self.n_envs, self.policy_name, self.seed, self.threads = n_envs, policy, seed, threads
        self.workers = threads          # processes or threads stepping the environments
        # The PyTorch policy gets one thread in every peer: measured on the 2-core machine,
        # two torch threads beside EnvPool's worker threads ran the actor loop 5x slower.
        self.policy_threads = POLICY_THREADS
        self.policy = make_policy(policy, seed, POLICY_THREADS)
        self._buf: Optional[Dict[str, np.ndarray]] = None

    def buffer(self, T: int) -> Dict[str, np.ndarray]:
        """The batch arrays (time-major, WORKLOAD.md names), reused between calls."""
        if self._buf is None or self._buf["obs"].shape[0] != T:
            n = self.n_envs
            self._buf = {
                "obs": np.empty((T, n, 4), np.float32),
                "action": np.empty((T, n), np.int64),
                "reward": np.empty((T, n), np.float32),
                "next_obs": np.empty((T, n, 4), np.float32),
                "terminated": np.empty((T, n), np.bool_),
                "truncated": np.empty((T, n), np.bool_),
            }
        return self._buf

    def generate(self, T: int) -> Dict[str, np.ndarray]:
        raise NotImplementedError

    def close(self) -> None:
        pass

    def info(self) -> dict:
        """Fields of this peer's result row that describe it (not its timing)."""
        return {"peer": self.name, "title": self.title, "autoreset": self.autoreset,
                "differs": self.differs, "workers": self.workers,
                "threads": self.threads, "policy_threads": self.policy_threads}


class VectorPeer(Peer):
    """A peer whose environments step as one batch: subclasses set self.obs (after reset)
    and define step_batch(actions) -> (obs, reward, terminated, truncated, info)."""

    def step_batch(self, actions: np.ndarray):
        raise NotImplementedError

    def patch_next_obs(self, next_obs_row: np.ndarray, info) -> None:
        """Fix up one recorded next_obs row from the step's infos (default: nothing)."""

    def generate(self, T: int) -> Dict[str, np.ndarray]:
        b = self.buffer(T)
        obs = self.obs
        for t in range(T):
            a = self.policy(obs)
            b["obs"][t] = obs
            b["action"][t] = a
            obs, r, term, trunc, info = self.step_batch(a)
            b["next_obs"][t] = obs
            self.patch_next_obs(b["next_obs"][t], info)
            b["reward"][t] = r
            b["terminated"][t] = term
            b["truncated"][t] = trunc
        self.obs = obs
        return b


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1
