"""ChessEnv: one game of WORKLOAD.md's chess as a gymnasium.Env, for gym.make("ladder/Chess-v0").

A ChessVectorEnv of one game without autoreset, so it steps with the same stepper and
draws from the contract's counter-based RNG (env index 0; reset(seed=s): the batch
generator's env 0 under seed s). action_space.sample() is a legal action of the current
position (spaces.py); info["action_mask"] (bool [4672]) lists them; an illegal action, or
a step after the episode ended, is refused in one line. action_masks() returns that mask
again (sb3-contrib's MaskablePPO reads it: no wrapper needed).
"""
from __future__ import annotations

from typing import Optional

import gymnasium as gym
import numpy as np

from versions.gym_adapter.errors import InvalidArgument, NeedsReset, describe
from versions.gym_adapter.single import reset_seed
from versions.chess.client.spaces import LegalDiscrete
from versions.chess.client.vector_env import DISABLED, ChessVectorEnv
from versions.chess.common.encoding import mask_bool
from versions.chess.common.spec import N_ACTIONS


class ChessEnv(gym.Env):
    metadata = {"render_modes": []}

    def __init__(self, version: Optional[str] = None, obs_mode: str = "planes"):
        self._vec = ChessVectorEnv(1, seed=0, version=version, autoreset_mode=DISABLED,
                                   obs_mode=obs_mode, episode_statistics=False)
        self.version_name = self._vec.version_name
        self.observation_space = self._vec.single_observation_space
        self.action_space = LegalDiscrete(legal=self._legal)
        self._seeded = False
        self._shown: Optional[np.ndarray] = None      # the mask of the obs last returned

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        super().reset(seed=seed)
        obs, info = self._vec.reset(seed=reset_seed(self, seed, options))
        self._shown = info["action_mask"][0]
        return obs[0], {"action_mask": self._shown.copy()}

    def step(self, action):
        if not self.action_space.contains(action):
            raise InvalidArgument(f"action must be an integer in [0, {N_ACTIONS}) (Discrete({N_ACTIONS})), "
                                  f"got {describe(action)}")
        try:
            obs, reward, term, trunc, info = self._vec.step(np.array([action], np.int64))
        except NeedsReset:
            raise NeedsReset("the episode has ended (or never began): call reset() before step()") from None
        except InvalidArgument as e:
            raise InvalidArgument(str(e).removeprefix("env 0: ")) from None
        self._shown = info["action_mask"][0]
        return (obs[0], float(reward[0]), bool(term[0]), bool(trunc[0]),
                {"action_mask": self._shown.copy(), "end": int(info["end"][0])})

    def action_masks(self) -> np.ndarray:
        """bool [4672]: the legal actions of the observation last returned (all False at a
        terminated position); sb3-contrib's MaskablePPO convention."""
        if self._shown is None:
            raise NeedsReset("call reset() before action_masks()")
        return self._shown.copy()

    def _legal(self) -> Optional[np.ndarray]:
        if self._vec._needs_reset or self._vec._stepper is None:
            return None
        return mask_bool(self._vec._mask[0])

    def close(self):
        self._vec.close()
