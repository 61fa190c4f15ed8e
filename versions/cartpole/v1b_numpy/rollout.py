"""v1b: the workload in NumPy -- a structure of arrays over the N environments.

Each of the four state components is one float64 array of shape [N], as in Gymnasium's
CartPoleVectorEnv; a time step is a few dozen whole-array operations. The counter-based
RNG is splitmix64 over uint64 arrays (the per-env keys are computed once), and the
Q-network is three float32 matrix products over all N observations at once.
"""
import numpy as np

from core.api import Generator, GenConfig, check_weights, empty_batch
from core import rng
from versions.cartpole.common.cartpole import (FORCE_MAG, GRAVITY, LENGTH, MASSPOLE,
                                      MAX_EPISODE_STEPS, POLEMASS_LENGTH, TAU,
                                      THETA_THRESHOLD, TOTAL_MASS, X_THRESHOLD)

U = np.uint64
GOLDEN, M1, M2 = U(0x9E3779B97F4A7C15), U(0xBF58476D1CE4E5B9), U(0x94D049BB133111EB)
S30, S27, S31, S11, S63 = U(30), U(27), U(31), U(11), U(63)


def mix(x):
    """splitmix64 on a uint64 array (NumPy's uint64 arithmetic wraps mod 2^64)."""
    x = x + GOLDEN
    x = (x ^ (x >> S30)) * M1
    x = (x ^ (x >> S27)) * M2
    return x ^ (x >> S31)


def u01(u):
    return (u >> S11).astype(np.float64) * rng.TWO_M53


def keys(seed, stream, n):
    """key(seed, stream, env) for env = 0..n-1, as a uint64 array."""
    base = U(rng.mix(rng.mix(seed) ^ stream))
    return mix(np.arange(n, dtype=np.uint64) ^ base)


def reset_states(k_reset, episode):
    """Initial states [4, n] of episode `episode[i]` of each env (k_reset, episode: [n])."""
    c = episode.astype(np.uint64) * U(4)
    return np.stack([-0.05 + 0.1 * u01(mix(k_reset ^ (c + U(j)))) for j in range(4)])


def step(x, x_dot, theta, theta_dot, action):
    """One Euler step of every env, Gymnasium's order of operations, float64 arrays."""
    force = np.where(action == 1, FORCE_MAG, -FORCE_MAG)
    costheta = np.cos(theta)
    sintheta = np.sin(theta)
    temp = (force + POLEMASS_LENGTH * (theta_dot * theta_dot) * sintheta) / TOTAL_MASS
    thetaacc = (GRAVITY * sintheta - costheta * temp) / (
        LENGTH * (4.0 / 3.0 - MASSPOLE * (costheta * costheta) / TOTAL_MASS))
    xacc = temp - POLEMASS_LENGTH * thetaacc * costheta / TOTAL_MASS
    x = x + TAU * x_dot
    x_dot = x_dot + TAU * xacc
    theta = theta + TAU * theta_dot
    theta_dot = theta_dot + TAU * thetaacc
    terminated = (x < -X_THRESHOLD) | (x > X_THRESHOLD) | \
                 (theta < -THETA_THRESHOLD) | (theta > THETA_THRESHOLD)
    return x, x_dot, theta, theta_dot, terminated


class MLP:
    """The Q-network as float32 matrix products over a batch of observations [n, 4]."""

    def __init__(self, weights):
        w = check_weights(weights)
        # transposed once, so that a forward pass is obs @ W1t + b1 ...
        self.w1t, self.b1 = np.ascontiguousarray(w["w1"].T), w["b1"]
        self.w2t, self.b2 = np.ascontiguousarray(w["w2"].T), w["b2"]
        self.w3t, self.b3 = np.ascontiguousarray(w["w3"].T), w["b3"]

    def q_values(self, obs):
        h = obs @ self.w1t
        h += self.b1
        np.maximum(h, 0, out=h)
        h = h @ self.w2t
        h += self.b2
        np.maximum(h, 0, out=h)
        q = h @ self.w3t
        q += self.b3
        return q

    def greedy(self, obs):
        q = self.q_values(obs)
        return (q[:, 1] > q[:, 0]).astype(np.int64)      # ties go to the lower index


class NumpyGenerator(Generator):
    def __init__(self, cfg: GenConfig):
        super().__init__(cfg)
        n, seed = cfg.n_envs, cfg.seed
        self.k_reset = keys(seed, rng.RESET, n)
        self.k_action = keys(seed, rng.ACTION, n)
        self.k_explore = keys(seed, rng.EXPLORE, n)
        self.episode = np.zeros(n, np.int64)
        self.elapsed = np.zeros(n, np.int64)
        self.t = 0                          # every env has taken the same number of steps
        self.state = reset_states(self.k_reset, self.episode)     # [4, n] float64
        self.epsilon = cfg.epsilon
        self.mlp = MLP(cfg.resolved_weights()) if cfg.policy == "egreedy" else None
        self._out = None

    def set_weights(self, weights):
        mlp = MLP(weights)                  # validated either way
        if self.cfg.policy == "egreedy":    # the random policy has no use for a network
            self.mlp = mlp

    def set_epsilon(self, epsilon):
        self.epsilon = float(epsilon)

    def generate(self, T):
        n = self.cfg.n_envs
        if self._out is None or self._out["action"].shape[0] != T:
            self._out = empty_batch(T, n)
        out = self._out
        o_obs, o_act, o_next = out["obs"], out["action"], out["next_obs"]
        o_term, o_trunc = out["terminated"], out["truncated"]
        x, x_dot, theta, theta_dot = self.state
        obs = self.state.T.astype(np.float32)                       # [n, 4]
        for s in range(T):
            t = U(self.t)
            a = mix(self.k_action ^ t) >> S63
            if self.mlp is not None:
                greedy = self.mlp.greedy(obs)
                explore = u01(mix(self.k_explore ^ t)) < self.epsilon
                a = np.where(explore, a, greedy)
            a = a.astype(np.int64)
            x, x_dot, theta, theta_dot, term = step(x, x_dot, theta, theta_dot, a)
            self.t += 1
            self.elapsed += 1
            trunc = self.elapsed >= MAX_EPISODE_STEPS
            o_obs[s] = obs
            o_act[s] = a
            nxt = o_next[s]
            nxt[:, 0], nxt[:, 1], nxt[:, 2], nxt[:, 3] = x, x_dot, theta, theta_dot
            o_term[s] = term
            o_trunc[s] = trunc
            done = term | trunc
            obs = nxt.copy()
            if done.any():                                          # same-step auto-reset
                idx = np.nonzero(done)[0]
                self.episode[idx] += 1
                self.elapsed[idx] = 0
                fresh = reset_states(self.k_reset[idx], self.episode[idx])
                x[idx], x_dot[idx], theta[idx], theta_dot[idx] = fresh
                obs[idx] = fresh.T
        self.state = np.stack([x, x_dot, theta, theta_dot])
        return out
