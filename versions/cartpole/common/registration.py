"""The Gymnasium id "ladder/CartPole-v1": the study's CartPole through gym.make_vec / gym.make.

    import versions                      # registers the id (see versions/__init__.py)
    envs = gym.make_vec("ladder/CartPole-v1", num_envs=4096, version="v5b_simd",
                        autoreset_mode=AutoresetMode.NEXT_STEP)
    env = gym.make("ladder/CartPole-v1", version="v4_cpp")      # one env (RungEnv)

make_vec's keyword arguments go to RungVectorEnv (versions/cartpole/common/vector_env.py): version,
seed, autoreset_mode (default NEXT_STEP here, as for Gymnasium's CartPole-v1; the class's
own default is WORKLOAD.md's SAME_STEP), episode_statistics, render_mode, render_envs,
stepper_workers, max_episode_steps (500, from the spec). vectorization_mode="sync" or
"async" builds Gymnasium's SyncVectorEnv / AsyncVectorEnv over single RungEnvs instead.

This module imports nothing heavy: the entry points are strings, loaded on first use.
"""
from __future__ import annotations

import copy

from core.spec import CARTPOLE

ENV_ID = "ladder/CartPole-v1"
MAX_EPISODE_STEPS = CARTPOLE.max_episode_steps
REWARD_THRESHOLD = CARTPOLE.solved_return


def register_ids() -> None:
    """Register ENV_ID with Gymnasium (idempotent)."""
    import gymnasium as gym
    if ENV_ID in gym.registry:
        return
    gym.register(id=ENV_ID, entry_point="versions.cartpole.common.single_env:RungEnv",
                 vector_entry_point="versions.cartpole.common.vector_env:make_vector",
                 max_episode_steps=MAX_EPISODE_STEPS, reward_threshold=REWARD_THRESHOLD)


def spec_for(env):
    """ENV_ID's EnvSpec carrying this RungVectorEnv's settings, so that gym.make_vec(spec)
    makes its twin; None where the id is not registered or the env cannot be named."""
    import gymnasium as gym
    spec = gym.registry.get(ENV_ID)
    if spec is None or (env.version_module is not None and env.version_name is None):
        return None
    spec = copy.deepcopy(spec)
    spec.kwargs = {"num_envs": env.num_envs, "vectorization_mode": "vector_entry_point",
                   "seed": env.seed_value, "version": env.version_name,
                   "autoreset_mode": env.autoreset_mode,
                   "max_episode_steps": env.max_episode_steps,
                   "stepper_workers": env.stepper_workers,
                   "episode_statistics": env.episode_statistics,
                   "render_mode": env.render_mode}
    return spec
