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
The rest (reset, get_attr, env_method, ...) is versions/gym_adapter/sb3.py's, shared with
CartPole's client.
"""
from __future__ import annotations

import time
from typing import List, Sequence

import numpy as np
from gymnasium.vector import AutoresetMode

from versions.gym_adapter.sb3 import OneVecEnvSB3

SAME = AutoresetMode.SAME_STEP
MASKS = "action_masks"


class ChessSB3VecEnv(OneVecEnvSB3):
    PER_ENV = (MASKS,)                      # one row per env, as DummyVecEnv's envs give them

    def __init__(self, env):
        env.autoreset_mode = SAME           # SB3's VecEnvs reset the same step
        env.metadata = dict(env.metadata, autoreset_mode=SAME)
        env.episode_statistics = True       # Monitor's info["episode"] comes from them
        super().__init__(env)

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

    def get_images(self) -> Sequence[None]:
        return [None for _ in range(self.num_envs)]       # chess has no renderer
