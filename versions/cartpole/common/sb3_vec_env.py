"""RungSB3VecEnv: a RungVectorEnv as a stable-baselines3 VecEnv (RungVectorEnv.to_sb3()).

SB3's conventions, as its DummyVecEnv over Monitor-wrapped envs has them:
  - reset() -> obs; seeds from seed(s) (env i: s + i, i.e. WORKLOAD.md's streams under s)
    and options from set_options() are used once, at the next reset;
  - step_wait() -> obs, rewards float32 [N], dones bool [N], infos: a list of N dicts;
    resets are same-step: where an episode ended, obs holds the new episode's first obs,
    info["terminal_observation"] the final one, info["TimeLimit.truncated"] is
    `truncated and not terminated`, and info["episode"] = {"r", "l", "t"} as Monitor
    writes it (so env_is_wrapped(Monitor) is True, and evaluate_policy and the algorithms'
    ep_info_buffer use it; VecMonitor on top overrides it, with SB3's own warning).
The environments are not separate objects: get_attr / env_method read or call the one
RungVectorEnv and give its answer once per index asked.
"""
from __future__ import annotations

import time
from typing import Any, List, Optional, Sequence

import numpy as np
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices

from versions.cartpole.common import stepping as S
from versions.gym_adapter.infos import monitor_episode


class RungSB3VecEnv(VecEnv):
    def __init__(self, env):
        self.env = env
        super().__init__(env.num_envs, env.single_observation_space, env.single_action_space)
        self._actions: Optional[np.ndarray] = None
        self._t_origin = time.time()

    # --- VecEnv API ---------------------------------------------------------------------
    def reset(self):
        seeds = self._seeds if any(s is not None for s in self._seeds) else None
        options = self._options[0] if self._options and self._options[0] else None
        obs, _ = self.env.reset(seed=seeds, options=options)
        self._reset_seeds()
        self._reset_options()
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions

    def step_wait(self):
        env = self.env
        env._check_ready()
        a = S.check_actions(self._actions, self.num_envs)
        if env._n_pending:      # ended under the Gymnasium API: already in a fresh episode
            env._pending[:] = False
            env._n_pending = 0
        obs, term, trunc, idx, rows, lengths = env._advance(a)
        dones = term | trunc
        infos: List[dict] = [{"TimeLimit.truncated": False} for _ in range(self.num_envs)]
        if idx is not None:
            timeout = trunc & ~term
            for j, i in enumerate(idx.tolist()):
                infos[i] = {"TimeLimit.truncated": bool(timeout[i]),
                            "terminal_observation": rows[j],
                            "episode": monitor_episode(int(lengths[j]), self._t_origin)}
        return obs, np.ones(self.num_envs, np.float32), dones, infos

    def close(self) -> None:
        self.env.close()

    def get_images(self) -> Sequence[Optional[np.ndarray]]:
        """Frames of the RungVectorEnv's render_envs (not all N: N may be thousands)."""
        if self.env.render_mode != "rgb_array":
            return [None for _ in self.env.render_envs]
        return [self.env.render_env(i) for i in self.env.render_envs]

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> List[Any]:
        value = getattr(self.env, attr_name)
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        setattr(self.env, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices: VecEnvIndices = None,
                   **method_kwargs) -> List[Any]:
        result = getattr(self.env, method_name)(*method_args, **method_kwargs)
        return [result for _ in self._get_indices(indices)]

    def env_is_wrapped(self, wrapper_class, indices: VecEnvIndices = None) -> List[bool]:
        return [wrapper_class is Monitor for _ in self._get_indices(indices)]

    def _get_indices(self, indices: VecEnvIndices):
        if indices is None:
            return range(self.num_envs)
        if isinstance(indices, int):
            return [indices]
        return indices
