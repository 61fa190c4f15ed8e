"""OneVecEnvSB3: the part of a ladder vector env's stable-baselines3 VecEnv that does not
depend on the workload (CartPole's RungSB3VecEnv, chess's ChessSB3VecEnv subclass it and
write step_wait() and get_images()).

The environments are not separate objects: get_attr / env_method read or call the one
vector env and give its answer once per index asked (a name in PER_ENV: its answer is a
row per env, and each index gets its own row). reset() uses the seeds of seed(s) (env i:
s + i, SB3's convention) and the options of set_options() once, at the next reset;
env_is_wrapped(Monitor) is True, since step_wait() writes Monitor's info["episode"].
"""
from __future__ import annotations

import time
from typing import Any, List

from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices


class OneVecEnvSB3(VecEnv):
    PER_ENV: tuple = ()          # env_method names whose answer is one row per env

    def __init__(self, env):
        self.env = env
        super().__init__(env.num_envs, env.single_observation_space, env.single_action_space)
        self._actions = None
        self._t_origin = time.time()

    def reset(self):
        seeds = self._seeds if any(s is not None for s in self._seeds) else None
        options = self._options[0] if self._options and self._options[0] else None
        obs, _ = self.env.reset(seed=seeds, options=options)
        self._reset_seeds()
        self._reset_options()
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return obs

    def step_async(self, actions) -> None:
        self._actions = actions

    def close(self) -> None:
        self.env.close()

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> List[Any]:
        value = getattr(self.env, attr_name)
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        setattr(self.env, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices: VecEnvIndices = None,
                   **method_kwargs) -> List[Any]:
        result = getattr(self.env, method_name)(*method_args, **method_kwargs)
        if method_name in self.PER_ENV:
            return [result[i] for i in self._get_indices(indices)]
        return [result for _ in self._get_indices(indices)]

    def env_is_wrapped(self, wrapper_class, indices: VecEnvIndices = None) -> List[bool]:
        return [wrapper_class is Monitor for _ in self._get_indices(indices)]

    def _get_indices(self, indices: VecEnvIndices):
        if indices is None:
            return range(self.num_envs)
        if isinstance(indices, int):
            return [indices]
        return indices
