"""ChessSB3VecEnv: a ChessVectorEnv as a stable-baselines3 VecEnv (ChessVectorEnv.to_sb3()),
with sb3-contrib's action-mask convention, so MaskablePPO trains on ladder/Chess-v0 unwrapped:

    from sb3_contrib import MaskablePPO
    env = gym.make_vec("ladder/Chess-v0", num_envs=8, version="v4_cpp").to_sb3()
    MaskablePPO("MlpPolicy", env).learn(2048)      # masks from env.env_method("action_masks")

SB3's conventions, as its DummyVecEnv over Monitor-wrapped envs has them (the CartPole
client's RungSB3VecEnv does the same):
  - reset() -> obs; seeds from seed(s) and options from set_options() are used once, at
    the next reset (seed(s): env i gets seed s + i, SB3's convention);
  - step_wait() -> obs, rewards float32 [N], dones bool [N], infos: a list of N dicts;
    resets are same-step: where an episode ended, obs holds the new episode's first
    position, info["terminal_observation"] the final one, info["TimeLimit.truncated"] is
    `truncated and not terminated` (the 256-move cap), info["episode"] = {"r", "l", "t"}
    as Monitor writes it (env_is_wrapped(Monitor) is True); every info holds "end" (the
    contract's end code of the transition);
  - env_method("action_masks") -> a list of N bool [4672] rows, one per env asked:
    sb3_contrib.common.maskable.utils.get_action_masks stacks them into [N, 4672].
The environments are not separate objects: get_attr / any other env_method read or call the
one ChessVectorEnv and give its answer once per index asked.
"""
from __future__ import annotations

import time
from typing import Any, List, Sequence

import numpy as np
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices

SAME = AutoresetMode.SAME_STEP
MASKS = "action_masks"


class ChessSB3VecEnv(VecEnv):
    def __init__(self, env):
        env.autoreset_mode = SAME           # SB3's VecEnvs reset the same step
        env.metadata = dict(env.metadata, autoreset_mode=SAME)
        env.episode_statistics = True       # Monitor's info["episode"] comes from them
        self.env = env
        super().__init__(env.num_envs, env.single_observation_space, env.single_action_space)
        self._actions = None
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
        obs, rewards, term, trunc, infos = self.env.step(np.asarray(self._actions).reshape(-1))
        dones = term | trunc
        end = infos["end"]
        out: List[dict] = [{"TimeLimit.truncated": False, "end": int(end[i])} for i in range(self.num_envs)]
        if dones.any():
            ep = infos["episode"]
            final = infos["final_obs"]
            stamp = round(time.time() - self._t_origin, 6)
            for i in np.flatnonzero(dones).tolist():
                out[i].update({"TimeLimit.truncated": bool(trunc[i] and not term[i]),
                               "terminal_observation": final[i],
                               "episode": {"r": round(float(ep["r"][i]), 6), "l": int(ep["l"][i]),
                                           "t": stamp}})
        return obs, rewards.astype(np.float32), dones, out

    def close(self) -> None:
        self.env.close()

    def get_images(self) -> Sequence[None]:
        return [None for _ in range(self.num_envs)]       # chess has no renderer

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> List[Any]:
        value = getattr(self.env, attr_name)
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        setattr(self.env, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices: VecEnvIndices = None,
                   **method_kwargs) -> List[Any]:
        result = getattr(self.env, method_name)(*method_args, **method_kwargs)
        if method_name == MASKS:            # one row per env, as DummyVecEnv's envs give them
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
