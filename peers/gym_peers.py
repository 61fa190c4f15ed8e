"""Gymnasium 1.3.0 peers: a Python loop over single envs, SyncVectorEnv, AsyncVectorEnv,
and the NumPy-vectorised CartPoleVectorEnv (make_vec's "vector_entry_point")."""
from __future__ import annotations

import numpy as np

from .base import Peer, PeerUnavailable, VectorPeer

ASYNC_MAX_ENVS = 256


def _gym():
    try:
        import gymnasium as gym
    except Exception as e:                      # ImportError or a broken install
        raise PeerUnavailable(f"gymnasium does not import ({type(e).__name__}: {e})")
    return gym


class GymSingle(Peer):
    name = "gym_single"
    title = "Gymnasium CartPole-v1, Python loop"
    autoreset = "same-step (the loop calls reset() right after a terminal step)"
    differs = ("N gym.make envs (with TimeLimit, OrderEnforcing, PassiveEnvChecker wrappers) "
               "stepped one at a time in a Python loop; float64 state, own RNG; the timing "
               "includes the policy and filling the batch arrays")

    def __init__(self, n_envs, policy="random", seed=0, threads=1):
        gym = _gym()
        super().__init__(n_envs, policy, seed, threads)
        self.envs = [gym.make("CartPole-v1") for _ in range(n_envs)]
        self.obs = np.stack([e.reset(seed=seed + i)[0] for i, e in enumerate(self.envs)])

    def generate(self, T):
        b = self.buffer(T)
        obs = self.obs
        for t in range(T):
            a = self.policy(obs)
            b["obs"][t] = obs
            b["action"][t] = a
            nxt = b["next_obs"][t]
            for i, env in enumerate(self.envs):
                o, r, term, trunc, _ = env.step(int(a[i]))
                nxt[i] = o
                b["reward"][t, i] = r
                b["terminated"][t, i] = term
                b["truncated"][t, i] = trunc
                obs[i] = env.reset()[0] if (term or trunc) else o
        return b

    def close(self):
        for e in self.envs:
            e.close()


class _GymVector(VectorPeer):
    """A Gymnasium VectorEnv stepped by the batched policy."""

    same_step = True

    def _start(self, venv, seed):
        self.venv = venv
        self.obs, _ = venv.reset(seed=seed)

    def step_batch(self, actions):
        return self.venv.step(actions)

    def patch_next_obs(self, row, info):
        # same-step autoreset: the step returned the reset obs; the transition's is in infos
        if self.same_step and "_final_obs" in info:
            idx = np.flatnonzero(info["_final_obs"])
            if idx.size:
                row[idx] = np.stack(info["final_obs"][idx])

    def close(self):
        self.venv.close()


class GymSync(_GymVector):
    name = "gym_sync"
    title = "Gymnasium SyncVectorEnv"
    autoreset = "same-step (AutoresetMode.SAME_STEP)"
    differs = ("SyncVectorEnv over N gym.make envs, autoreset_mode=SAME_STEP, final obs "
               "copied from infos['final_obs']; float64 state, own RNG; one process")

    def __init__(self, n_envs, policy="random", seed=0, threads=1):
        gym = _gym()
        from gymnasium.vector import AutoresetMode, SyncVectorEnv
        super().__init__(n_envs, policy, seed, threads)
        self._start(SyncVectorEnv([lambda: gym.make("CartPole-v1")] * n_envs,
                                  autoreset_mode=AutoresetMode.SAME_STEP), seed)


class GymAsync(_GymVector):
    name = "gym_async"
    title = "Gymnasium AsyncVectorEnv"
    autoreset = "same-step (AutoresetMode.SAME_STEP)"
    differs = ("AsyncVectorEnv: one worker process per env (fork, shared memory), "
               "autoreset_mode=SAME_STEP; the policy runs in the parent; float64 state, own RNG; "
               "process start-up is in startup_s")

    def __init__(self, n_envs, policy="random", seed=0, threads=1):
        gym = _gym()
        from gymnasium.vector import AsyncVectorEnv, AutoresetMode
        if n_envs > ASYNC_MAX_ENVS:
            raise PeerUnavailable(
                f"AsyncVectorEnv runs one process per environment; {n_envs} processes on "
                f"{_cores()} cores is not a setting anyone would run (limit here {ASYNC_MAX_ENVS})")
        super().__init__(n_envs, policy, seed, threads)
        self.workers = n_envs
        self._start(AsyncVectorEnv([lambda: gym.make("CartPole-v1")] * n_envs,
                                   autoreset_mode=AutoresetMode.SAME_STEP), seed)


class GymVectorEntry(_GymVector):
    name = "gym_numpy"
    title = "Gymnasium CartPoleVectorEnv (NumPy)"
    autoreset = "next-step (CartPoleVectorEnv supports only NEXT_STEP)"
    differs = ("gym.make_vec(vectorization_mode='vector_entry_point'): one NumPy array op per "
               "step for all N envs; next-step autoreset, so about 1 transition in 22 (random) "
               "is a dummy reset step, counted here as the env returns it; float64 state")
    same_step = False

    def __init__(self, n_envs, policy="random", seed=0, threads=1):
        gym = _gym()
        super().__init__(n_envs, policy, seed, threads)
        self._start(gym.make_vec("CartPole-v1", num_envs=n_envs,
                                 vectorization_mode="vector_entry_point"), seed)


def _cores():
    from .base import cpu_count
    return cpu_count()
