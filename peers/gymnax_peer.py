"""gymnax 1.0.1 peer: CartPole-v1 in JAX on the CPU, the whole rollout one jitted program.

generate(T) runs jit(lax.scan over T steps of vmap(env.step) over N envs); the policy is
inside the scan: random actions from jax.random, or the study's Q-network written in JAX
(same weights and shapes as the PyTorch one, epsilon-greedy with jax.random). The first
call at a given T compiles; that compile time lands in startup_s, not in the throughput.
"""
from __future__ import annotations


from core.api import DEFAULT_EPSILON, init_weights

from .base import Peer, PeerUnavailable, cpu_count


def _imports():
    try:
        import jax
        import jax.numpy as jnp
        import gymnax
    except Exception as e:
        raise PeerUnavailable(f"jax/gymnax do not import ({type(e).__name__}: {e})")
    return jax, jnp, gymnax


class Gymnax(Peer):
    name = "gymnax"
    title = "gymnax (JAX, CPU)"
    autoreset = "same-step (final obs in info['final_observation'])"
    differs = ("jit(lax.scan(vmap(step))) over T steps, policy inside the scan (the egreedy "
               "MLP in JAX, not PyTorch); float32 state; XLA on the CPU; returns stacked "
               "[T,N] arrays of WORKLOAD.md's names (as JAX arrays); compile time is in startup_s")

    def __init__(self, n_envs, policy="random", seed=0, threads=None):
        jax, jnp, gymnax = _imports()
        threads = threads or cpu_count()
        # The Torch policy is not used here: the policy lives in the JAX program.
        self.n_envs, self.policy_name, self.seed, self.threads = n_envs, policy, seed, threads
        self.workers = threads
        self.policy_threads = threads     # the JAX policy shares XLA's threads
        self._buf = None
        if policy not in ("random", "egreedy"):
            raise ValueError(f"unknown policy '{policy}'")
        self.jax, self.jnp = jax, jnp
        env, params = gymnax.make("CartPole-v1")
        self.env, self.params = env, params
        w = {k: jnp.asarray(v) for k, v in init_weights(seed).items()}
        eps = DEFAULT_EPSILON
        egreedy = policy == "egreedy"

        def act(key, obs):
            k1, k2 = jax.random.split(key)
            rand = jax.random.randint(k1, (n_envs,), 0, 2)
            if not egreedy:
                return rand
            h = jax.nn.relu(obs @ w["w1"].T + w["b1"])
            h = jax.nn.relu(h @ w["w2"].T + w["b2"])
            q = h @ w["w3"].T + w["b3"]
            greedy = jnp.argmax(q, axis=1)
            explore = jax.random.uniform(k2, (n_envs,)) < eps
            return jnp.where(explore, rand, greedy)

        vstep = jax.vmap(env.step, in_axes=(0, 0, 0, None))
        vreset = jax.vmap(env.reset, in_axes=(0, None))

        def body(carry, _):
            key, state, obs = carry
            key, ka, ks = jax.random.split(key, 3)
            a = act(ka, obs)
            nobs, state, r, term, trunc, info = vstep(jax.random.split(ks, n_envs), state, a,
                                                      params)
            return (key, state, nobs), (obs, a, r, info["final_observation"], term, trunc)

        def rollout(carry, T):
            return jax.lax.scan(body, carry, None, length=T)

        self._jit = jax.jit(rollout, static_argnums=1)
        self._compiled = {}                 # T -> compiled program
        self.compile_s = {}                 # T -> seconds spent compiling it
        key = jax.random.PRNGKey(seed)
        key, kr = jax.random.split(key)
        obs, state = jax.jit(vreset)(jax.random.split(kr, n_envs), params)
        self.carry = (key, state, obs)

    def generate(self, T):
        prog = self._compiled.get(T)
        if prog is None:
            import time
            t0 = time.perf_counter()
            prog = self._compiled[T] = self._jit.lower(self.carry, T).compile()
            self.compile_s[T] = time.perf_counter() - t0
        self.carry, ys = prog(self.carry)
        ys = self.jax.block_until_ready(ys)
        return dict(zip(("obs", "action", "reward", "next_obs", "terminated", "truncated"), ys))

    def info(self):
        d = super().info()
        import jax
        d["jax_backend"] = jax.default_backend()
        return d
