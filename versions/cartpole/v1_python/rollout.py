"""v1: the workload in plain Python -- floats, lists and the math module.

This is the baseline row of the ladder. One Python object holds N environments as
lists; generate(T) walks time steps, then environments, doing every multiply of the
CartPole step and of the Q-network's forward pass in the interpreter. NumPy appears
only at the edge, to hand the finished lists over as the arrays of WORKLOAD.md.
"""
from array import array

import numpy as np

from core.api import Generator, GenConfig, check_weights
from core import rng
from versions.cartpole.common.cartpole import MAX_EPISODE_STEPS, step


def to_f32(values):
    """Round Python floats (float64) to float32, still as Python floats."""
    return list(array("f", values))


class MLP:
    """Linear(4,H) -> ReLU -> Linear(H,H) -> ReLU -> Linear(H,2) on Python lists.

    Arithmetic is in float64 on the float32 weights and observation; the study allows
    the greedy action to differ from float32 only where the two Q-values lie within 1e-4.
    """

    def __init__(self, weights):
        w = check_weights(weights)
        self.w1 = w["w1"].tolist()
        self.b1 = w["b1"].tolist()
        self.w2 = w["w2"].tolist()
        self.b2 = w["b2"].tolist()
        self.w3 = w["w3"].tolist()
        self.b3 = w["b3"].tolist()

    def q_values(self, o):
        h1 = []
        for row, b in zip(self.w1, self.b1):
            s = b + row[0] * o[0] + row[1] * o[1] + row[2] * o[2] + row[3] * o[3]
            h1.append(s if s > 0.0 else 0.0)
        h2 = []
        for row, b in zip(self.w2, self.b2):
            s = b
            for wi, hi in zip(row, h1):
                s += wi * hi
            h2.append(s if s > 0.0 else 0.0)
        q = []
        for row, b in zip(self.w3, self.b3):
            s = b
            for wi, hi in zip(row, h2):
                s += wi * hi
            q.append(s)
        return q

    def greedy(self, o):
        q = self.q_values(o)
        return 1 if q[1] > q[0] else 0        # ties go to the lower index


class PythonGenerator(Generator):
    def __init__(self, cfg: GenConfig):
        super().__init__(cfg)
        n, seed = cfg.n_envs, cfg.seed
        self.k_reset = [rng.key(seed, rng.RESET, i) for i in range(n)]
        self.k_action = [rng.key(seed, rng.ACTION, i) for i in range(n)]
        self.k_explore = [rng.key(seed, rng.EXPLORE, i) for i in range(n)]
        self.episode = [0] * n          # episodes started, per env
        self.t = [0] * n                # steps taken over the env's life
        self.elapsed = [0] * n          # steps in the current episode
        self.state = [rng.reset_state(k, 0) for k in self.k_reset]
        self.obs = [to_f32(s) for s in self.state]
        self.epsilon = cfg.epsilon
        self.mlp = MLP(cfg.resolved_weights()) if cfg.policy == "egreedy" else None

    def set_weights(self, weights):
        mlp = MLP(weights)                  # validates, whatever the policy
        if self.cfg.policy == "egreedy":    # a random-policy generator stays random
            self.mlp = mlp

    def set_epsilon(self, epsilon):
        self.epsilon = float(epsilon)

    def generate(self, T):
        n = self.cfg.n_envs
        egreedy = self.mlp is not None
        eps = self.epsilon
        out_obs, out_act, out_next, out_term, out_trunc = [], [], [], [], []
        for _ in range(T):
            for i in range(n):
                t = self.t[i]
                o = self.obs[i]
                if egreedy and not rng.explores(self.k_explore[i], t, eps):
                    a = self.mlp.greedy(o)
                else:
                    a = rng.random_action(self.k_action[i], t)
                x, x_dot, theta, theta_dot, term = step(*self.state[i], a)
                s = [x, x_dot, theta, theta_dot]
                nxt = to_f32(s)
                self.t[i] = t + 1
                self.elapsed[i] += 1
                trunc = self.elapsed[i] >= MAX_EPISODE_STEPS
                out_obs.extend(o)
                out_act.append(a)
                out_next.extend(nxt)
                out_term.append(term)
                out_trunc.append(trunc)
                if term or trunc:                      # same-step auto-reset
                    self.episode[i] += 1
                    self.elapsed[i] = 0
                    s = rng.reset_state(self.k_reset[i], self.episode[i])
                    nxt = to_f32(s)
                self.state[i] = s
                self.obs[i] = nxt
        return {
            "obs": np.array(out_obs, np.float32).reshape(T, n, 4),
            "action": np.array(out_act, np.int64).reshape(T, n),
            "reward": np.ones((T, n), np.float32),
            "next_obs": np.array(out_next, np.float32).reshape(T, n, 4),
            "terminated": np.array(out_term, np.bool_).reshape(T, n),
            "truncated": np.array(out_trunc, np.bool_).reshape(T, n),
        }
