"""Peers' time to a trained agent: CartPole-v1 trained by other people's libraries.

Each peer trains CartPole-v1 the way a practitioner would with that library, with its
published hyperparameters, and is timed to one criterion for every row (common.py): the
mean return of the last 100 training episodes >= 475 and a greedy evaluation of 20
episodes in Gymnasium's CartPole-v1 with mean >= 475, checked while training runs; the
run stops as soon as both hold, or when the training budget (300 s) is spent.

    sb3_dqn        Stable-Baselines3 DQN, rl-zoo3's CartPole-v1 hyperparameters
    sbx_dqn        SBX (SB3 in JAX) DQN, the same zoo hyperparameters
    cleanrl_dqn    CleanRL's dqn.py recipe (a transcription: see cleanrl_peer.py for why)
    cleanrl_pqn    CleanRL's pqn.py recipe (PQN: no replay, no target network; a transcription)
    pufferlib_ppo  PufferLib 3's trainer on its own C CartPole (puffer_peer.py)
    rejax_pqn      rejax's PQN in JAX on gymnax's CartPole-v1, its published settings (rejax_peer.py)

Every (peer, seed) runs in its own subprocess (child.py), started and timed by
runner.run_peer_training, which returns rows (never writes them).
"""
from __future__ import annotations

import importlib
from typing import Callable, Dict, Tuple

# name -> (module, function, title); the order is the order of the table
REGISTRY: Dict[str, Tuple[str, str, str]] = {
    "sb3_dqn": ("peers.train.sb3_peers", "run_sb3", "Stable-Baselines3 DQN (rl-zoo3 settings)"),
    "sbx_dqn": ("peers.train.sb3_peers", "run_sbx", "SBX DQN, JAX (rl-zoo3 settings)"),
    "cleanrl_dqn": ("peers.train.cleanrl_peer", "run_cleanrl", "CleanRL dqn.py (transcription)"),
    "cleanrl_pqn": ("peers.train.cleanrl_pqn_peer", "run_cleanrl_pqn", "CleanRL pqn.py (transcription)"),
    "pufferlib_ppo": ("peers.train.puffer_peer", "run_puffer", "PufferLib 3 PPO, Ocean CartPole"),
    "rejax_pqn": ("peers.train.rejax_peer", "run_rejax_pqn", "rejax PQN, JAX on gymnax (its published settings)"),
}
NAMES = tuple(REGISTRY)


def runner_for(name: str) -> Callable:
    if name not in REGISTRY:
        raise KeyError(f"unknown training peer '{name}'; known: {', '.join(NAMES)}")
    mod, fn, _ = REGISTRY[name]
    return getattr(importlib.import_module(mod), fn)


def title(name: str) -> str:
    return REGISTRY[name][2]
