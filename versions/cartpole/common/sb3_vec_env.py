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
The rest (reset, get_attr, env_method, ...) is versions/gym_adapter/sb3.py's, shared with
chess's client.
"""
from __future__ import annotations

from typing import List, Optional, Sequence

import numpy as np

from versions.cartpole.common import stepping as S
from versions.gym_adapter.infos import monitor_episode
from versions.gym_adapter.sb3 import OneVecEnvSB3


class RungSB3VecEnv(OneVecEnvSB3):
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

    def get_images(self) -> Sequence[Optional[np.ndarray]]:
        """Frames of the RungVectorEnv's render_envs (not all N: N may be thousands)."""
        if self.env.render_mode != "rgb_array":
            return [None for _ in self.env.render_envs]
        return [self.env.render_env(i) for i in self.env.render_envs]
