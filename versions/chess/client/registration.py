"""The Gymnasium id "ladder/Chess-v0": WORKLOAD.md's chess through gym.make_vec / gym.make.

    import versions                      # registers the ids (versions/__init__.py)
    envs = gym.make_vec("ladder/Chess-v0", num_envs=64, version="v4_cpp")   # ChessVectorEnv
    env = gym.make("ladder/Chess-v0", version="v1_python")                  # one game (ChessEnv)

make_vec's keywords go to ChessVectorEnv (vector_env.py): version, seed, autoreset_mode
(NEXT_STEP by default, as Gymnasium's), obs_mode ("planes" or "compact"),
episode_statistics. There is no TimeLimit: the env truncates an episode itself at the
contract's 256 agent moves. This module imports nothing heavy: the entry points are strings.
"""
from __future__ import annotations

import copy

ENV_ID = "ladder/Chess-v0"


def register_ids() -> None:
    """Register ENV_ID with Gymnasium (idempotent)."""
    import gymnasium as gym
    if ENV_ID in gym.registry:
        return
    gym.register(id=ENV_ID, entry_point="versions.chess.client.single_env:ChessEnv",
                 vector_entry_point="versions.chess.client.vector_env:make_vector")


def spec_for(env):
    """ENV_ID's EnvSpec with this ChessVectorEnv's settings (gym.make_vec(spec) makes its
    twin); None where the id is not registered."""
    import gymnasium as gym
    spec = gym.registry.get(ENV_ID)
    if spec is None:
        return None
    spec = copy.deepcopy(spec)
    spec.kwargs = {"num_envs": env.num_envs, "vectorization_mode": "vector_entry_point",
                   "seed": env.seed_value, "version": env.version_name,
                   "autoreset_mode": env.autoreset_mode, "obs_mode": env.obs_mode,
                   "episode_statistics": env.episode_statistics}
    return spec
