"""Peers: other people's implementations of a workload, timed beside its ladder --
CartPole-v1's generators here (gym, EnvPool, gymnax), chess's (chess_peers.py,
chess_games.py), and the libraries that train an agent end to end (train/).

They do not meet WORKLOAD.md to the letter (their own RNGs; some reset on the step
after an episode ends; gymnax keeps float32 state), so they are not versions: the harness
times them with the same core.measure.time_generator, in the same `make bench`, and
writes rows of kind "peers". Each peer is a class with generate(T) and close(), built by
make(name, n_envs, policy, seed). A peer whose package is missing raises PeerUnavailable
with the reason, and becomes a "skipped" row, never a crash.
"""
from __future__ import annotations

import importlib
from typing import Dict, Tuple

from .base import Peer, PeerUnavailable, thread_env  # noqa: F401

# name -> (module, class); order is the order of the table
REGISTRY: Dict[str, Tuple[str, str]] = {
    "gym_single": ("peers.gym_peers", "GymSingle"),
    "gym_sync": ("peers.gym_peers", "GymSync"),
    "gym_async": ("peers.gym_peers", "GymAsync"),
    "gym_numpy": ("peers.gym_peers", "GymVectorEntry"),
    "envpool_sync": ("peers.envpool_peers", "EnvPoolSync"),
    "envpool_async": ("peers.envpool_peers", "EnvPoolAsync"),
    "gymnax": ("peers.gymnax_peer", "Gymnax"),
}
NAMES = tuple(REGISTRY)


def peer_class(name: str):
    if name not in REGISTRY:
        raise KeyError(f"unknown peer '{name}'; known: {', '.join(NAMES)}")
    mod, cls = REGISTRY[name]
    return getattr(importlib.import_module(mod), cls)


def make(name: str, n_envs: int, policy: str = "random", seed: int = 0, threads=None) -> Peer:
    """Build a peer; raises PeerUnavailable (with the reason) if it cannot run here."""
    cls = peer_class(name)
    if threads is None:
        return cls(n_envs, policy=policy, seed=seed)
    return cls(n_envs, policy=policy, seed=seed, threads=threads)


def title(name: str) -> str:
    return peer_class(name).title
