"""RungEnv: one study CartPole as a gymnasium.Env, for gym.make("ladder/CartPole-v1").

The entry point of the registered id for single environments (and so for
gym.make_vec(..., vectorization_mode="sync"), SB3's make_vec_env and DummyVecEnv). It is a
RungVectorEnv of one environment without autoreset, so it steps with the same stepper and
draws initial states from WORKLOAD.md's counter-based RNG (env index 0, reset(seed=s): the
stream of seed s). Like Gymnasium's CartPoleEnv it has no step limit of its own: gym.make
adds TimeLimit(500) from the spec. Unlike it, a step after the episode ended is refused
(NeedsReset) rather than warned about.
"""
from __future__ import annotations

from typing import Optional

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from versions.gym_adapter.errors import InvalidArgument
from versions.gym_adapter.single import reset_seed
from versions.cartpole.common.rendering import RENDER_FPS, RENDER_MODES
from versions.cartpole.common.vector_env import DISABLED, RungVectorEnv

NO_LIMIT = 1 << 62


class RungEnv(gym.Env):
    metadata = {"render_modes": RENDER_MODES, "render_fps": RENDER_FPS}

    def __init__(self, version=None, render_mode: Optional[str] = None,
                 max_episode_steps: Optional[int] = None, stepper_workers: int = 1):
        self._vec = RungVectorEnv(1, seed=0, version=version, stepper_workers=stepper_workers,
                                  max_episode_steps=max_episode_steps or NO_LIMIT,
                                  autoreset_mode=DISABLED, episode_statistics=False,
                                  render_mode=render_mode)
        self.observation_space = self._vec.single_observation_space
        self.action_space = spaces.Discrete(2)
        self.render_mode = render_mode
        self._seeded = False

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        super().reset(seed=seed)
        seed = reset_seed(self, seed, options, " (initial states come from WORKLOAD.md's RNG)")
        obs, _ = self._vec.reset(seed=seed)
        return obs[0], {}

    def step(self, action):
        if not self.action_space.contains(action):
            raise InvalidArgument(f"action must be 0 or 1 (Discrete(2)), got {action!r} "
                                  f"({type(action).__name__})")
        obs, reward, terminated, truncated, _ = self._vec.step(np.array([action], np.int64))
        return obs[0], float(reward[0]), bool(terminated[0]), bool(truncated[0]), {}

    def render(self):
        if self.render_mode is None:
            gym.logger.warn("render() without a render_mode: gym.make('ladder/CartPole-v1', "
                            "render_mode='rgb_array')")
            return None
        return self._vec.render_env(0)

    def close(self):
        self._vec.close()
