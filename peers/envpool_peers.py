"""EnvPool 1.2.5 peers: its C++ CartPole-v1 in a thread pool, synchronous and asynchronous."""
from __future__ import annotations

import numpy as np

from .base import Peer, PeerUnavailable, VectorPeer, cpu_count


def _envpool():
    try:
        import envpool
    except Exception as e:
        raise PeerUnavailable(f"envpool does not import ({type(e).__name__}: {e})")
    return envpool


class EnvPoolSync(VectorPeer):
    name = "envpool_sync"
    title = "EnvPool sync"
    autoreset = "next-step (the step after a terminal one returns the reset obs, reward 0)"
    differs = ("envpool.make(env_type='gymnasium', batch_size=N): step() of all N envs in "
               "EnvPool's C++ thread pool; next-step autoreset (dummy reset transitions are "
               "counted); float64 state, own RNG; the policy runs between steps")

    def __init__(self, n_envs, policy="random", seed=0, threads=None):
        ep = _envpool()
        threads = threads or min(cpu_count(), n_envs)
        super().__init__(n_envs, policy, seed, threads)
        self.env = ep.make("CartPole-v1", env_type="gymnasium", num_envs=n_envs,
                           batch_size=n_envs, num_threads=threads, seed=seed)
        self.obs, _ = self.env.reset()

    def step_batch(self, actions):
        return self.env.step(actions.astype(np.int32))

    def close(self):
        self.env.close()


class EnvPoolAsync(Peer):
    name = "envpool_async"
    title = "EnvPool async"
    autoreset = "next-step (as EnvPool sync)"
    differs = ("envpool.make(batch_size=N/2): recv() returns the first N/2 envs to finish, the "
               "policy acts on them while the others step (send/recv); T*N transitions are "
               "2T recv/send rounds; next-step autoreset; next_obs is not collected")

    def __init__(self, n_envs, policy="random", seed=0, threads=None):
        ep = _envpool()
        threads = threads or min(cpu_count(), n_envs)
        super().__init__(n_envs, policy, seed, threads)
        self.batch = max(1, n_envs // 2)
        if n_envs % self.batch:
            raise PeerUnavailable(f"envpool async needs N divisible by N//2, got N={n_envs}")
        self.env = ep.make("CartPole-v1", env_type="gymnasium", num_envs=n_envs,
                           batch_size=self.batch, num_threads=threads, seed=seed)
        self.env.async_reset()

    def generate(self, T):
        b = self.buffer(T)
        rounds = T * self.n_envs // self.batch
        obs_f = b["obs"].reshape(rounds, self.batch, 4)
        act_f = b["action"].reshape(rounds, self.batch)
        rew_f = b["reward"].reshape(rounds, self.batch)
        term_f = b["terminated"].reshape(rounds, self.batch)
        trunc_f = b["truncated"].reshape(rounds, self.batch)
        for k in range(rounds):
            obs, r, term, trunc, info = self.env.recv()
            a = self.policy(obs)
            obs_f[k], act_f[k], rew_f[k], term_f[k], trunc_f[k] = obs, a, r, term, trunc
            self.env.send(a.astype(np.int32), info["env_id"])
        return {k: v for k, v in b.items() if k != "next_obs"}   # not collected here

    def close(self):
        self.env.close()
