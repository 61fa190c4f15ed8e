"""PQN, the reference implementation (PyTorch eager): the algorithm ladder's a6.

PQN (Gallici et al. 2024, "Simplifying Deep Temporal Difference Learning"; CleanRL's
pqn.py, purejaxql): no replay buffer and no target network. A round: N environments of a
generating rung (stepped through its Gymnasium vector env, ladder/CartPole-v1, same-step
autoreset) take T epsilon-greedy steps with the current network; Q(lambda) targets are
computed backwards over the round; then `epochs` passes of `minibatches` shuffled
minibatches regress Q(s, a) on them (MSE, gradient norm clipped, RAdam); the round is
then thrown away. The network is 4-H-H-2 with LayerNorm before each ReLU, which is what
lets PQN bootstrap from its own, moving, estimates without a target network.

The targets (Peng's Q(lambda), with the episode's end respected):

    G_t = r_t + gamma (1 - term_t) [ (1 - lambda) max_a Q(s'_t, a) + lambda G' ]
    G'  = G_{t+1} if the episode goes on past t and t < T - 1, else max_a Q(s'_t, a)

where s'_t is the state after step t (the final observation when the step truncated the
episode). This is the recursion of purejaxql; CleanRL's pqn.py writes one that does not
cut lambda's term at an episode's end (peers/train/cleanrl_pqn_peer.py keeps CleanRL's).

Its update is not LEARNER.md's, so no learner of learners/ runs it; this file is its
reference (TorchPQN), and algorithms/a6_pqn's native implementation is verified against it
(training/pqn_verify.py) before it is timed.
"""
from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field
from typing import Callable, List, Optional

import numpy as np

from core.errors import StudyError
from core.evaluate import eval_seed, greedy_eval
from core.learner import _h
from core.spec import CARTPOLE

from .config import RunSettings, _fin


@dataclass
class PQNConfig(RunSettings):
    """One PQN run. Defaults: PQN's recipe (LayerNorm, lambda 0.65, RAdam, clipping at 10)
    at this ladder's shape, more environments and shorter rollouts than CleanRL's 4 x 128."""
    version: str = _h("the rung whose environments are stepped (its vector env)", default="")
    envs: int = _h("N parallel environments", default=32)
    steps: int = _h("T steps per round", default=32)
    hidden: int = _h("units of each of the two LayerNorm'd hidden layers", default=128)
    epochs: int = _h("passes over each round's transitions", default=4)
    minibatches: int = _h("minibatches per pass", default=4)
    lr: float = _h("RAdam learning rate", default=1e-3)
    gamma: float = _h("discount", default=0.99)
    q_lambda: float = _h("lambda of the Q(lambda) targets", default=0.65)
    max_grad_norm: float = _h("clip the gradient's global norm to this", default=10.0)
    eps_start: float = _h("epsilon of round 0", default=1.0)
    eps_end: float = _h("final epsilon", default=0.05)
    eps_decay_rounds: int = _h("epsilon decays linearly over this many rounds", default=100)
    seed: int = _h("seed of the network, the minibatch order, exploration and the envs", default=0)
    threads: int = _h("torch intra-op threads", default=1)
    max_rounds: int = _h("give up after this many rounds", default=10 ** 6)
    budget_s: float = _h("give up after this many seconds of training (0: no limit)", default=0.0)
    threshold: float = _h("solved: last-`window` mean and greedy evaluation at least this",
                          default=CARTPOLE.solved_return)
    window: int = _h("episodes in the moving mean", default=100)
    eval_episodes: int = _h("greedy episodes that confirm a solve", default=20)
    eval_cooldown: int = _h("rounds between two confirmation attempts", default=5)

    def check(self) -> "PQNConfig":
        def need(ok, name, rng):
            if not ok:
                raise StudyError(f"--{name.replace('_', '-')} must be {rng}, got {getattr(self, name)!r}")
        for name in ("envs", "steps", "hidden", "epochs", "minibatches", "eps_decay_rounds",
                     "threads", "max_rounds", "window", "eval_episodes", "eval_cooldown"):
            v = getattr(self, name)
            need(isinstance(v, int) and not isinstance(v, bool) and 0 < v <= 10 ** 7, name,
                 "a positive integer (at most 1e7)")
        need(self.hidden <= 4096, "hidden", "at most 4096")
        need(self.threads <= 256, "threads", "at most 256")
        need(self.minibatches <= self.envs * self.steps, "minibatches",
             "at most the transitions of a round (--envs x --steps)")
        need(_fin(self.lr) and 0 < self.lr <= 1, "lr", "a finite number in (0, 1]")
        need(_fin(self.gamma) and 0 < self.gamma <= 1, "gamma", "in (0, 1]")
        need(_fin(self.q_lambda) and 0 <= self.q_lambda <= 1, "q_lambda", "a finite number in [0, 1]")
        need(_fin(self.max_grad_norm) and self.max_grad_norm > 0, "max_grad_norm", "a positive finite number")
        for name in ("eps_start", "eps_end"):
            need(_fin(getattr(self, name)) and 0 <= getattr(self, name) <= 1, name, "in [0, 1]")
        need(_fin(self.budget_s) and 0 <= self.budget_s <= 10 ** 6, "budget_s", "in [0, 1e6] seconds")
        need(_fin(self.threshold) and self.threshold <= CARTPOLE.max_episode_steps, "threshold",
             f"a finite number at most {CARTPOLE.max_episode_steps}")
        need(isinstance(self.seed, int) and 0 <= self.seed < 2 ** 63, "seed", "an integer in [0, 2^63)")
        return self


def q_network(hidden: int):
    import torch.nn as nn
    return nn.Sequential(nn.Linear(4, hidden), nn.LayerNorm(hidden), nn.ReLU(),
                         nn.Linear(hidden, hidden), nn.LayerNorm(hidden), nn.ReLU(),
                         nn.Linear(hidden, 2))


def update_flops(hidden: int, rows: int) -> int:
    """FLOPs of one minibatch update counted from the shapes, as NetSpec.update_flops
    counts DQN's: the forward, the weight gradients of all three layers and the input
    gradients of layers 3 and 2 (LayerNorm, ReLU and the optimiser are O(parameters) or
    O(units) per row, not counted)."""
    layers = ((4, hidden), (hidden, hidden), (hidden, 2))
    mac = sum(a * b for a, b in layers)
    return 2 * rows * (mac + mac + layers[1][0] * layers[1][1] + layers[2][0] * layers[2][1])


WEIGHT_NAMES = ("w1", "b1", "g1", "be1", "w2", "b2", "g2", "be2", "w3", "b3")


class TorchPQN:
    """PQN's network and update in PyTorch eager: the reference. A fast implementation
    offers the same four methods (algorithms/a6_pqn/native.py) and is verified against it."""
    name = "reference (training/pqn.py, PyTorch eager)"

    def __init__(self, hidden: int, lr: float, dtype=None):
        import torch
        self.torch = torch
        self.net = q_network(hidden)            # draws from torch's global RNG (seeded by the caller)
        if dtype is not None:
            self.net = self.net.to(dtype)
        self.dtype = dtype or torch.float32
        self.opt = torch.optim.RAdam(self.net.parameters(), lr=lr)

    def q(self, x: np.ndarray) -> np.ndarray:
        """Q [R, 2] of the states x [R, 4]."""
        with self.torch.no_grad():
            return self.net(self.torch.from_numpy(np.asarray(x, np.float32)).to(self.dtype)).numpy()

    def update(self, x: np.ndarray, a: np.ndarray, G: np.ndarray, idx: np.ndarray, max_norm: float) -> float:
        """One minibatch (rows idx of the round x, a, G): MSE of Q(s, a) against G, the
        gradient's norm clipped, one RAdam step; returns the loss."""
        torch = self.torch
        i = torch.from_numpy(idx)
        q = self.net(torch.from_numpy(x).to(self.dtype)[i]).gather(1, torch.from_numpy(a)[i].unsqueeze(1)).squeeze(1)
        loss = torch.nn.functional.mse_loss(q, torch.from_numpy(G).to(self.dtype)[i])
        self.opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.net.parameters(), max_norm)
        self.opt.step()
        return loss.item()

    def weights(self) -> dict:
        """The parameters by WEIGHT_NAMES (nn.Linear and LayerNorm layout), float64 copies."""
        l1, n1, _, l2, n2, _, l3 = self.net
        ts = (l1.weight, l1.bias, n1.weight, n1.bias, l2.weight, l2.bias, n2.weight, n2.bias, l3.weight, l3.bias)
        return {k: t.detach().double().numpy().copy() for k, t in zip(WEIGHT_NAMES, ts)}


def lambda_targets(r, term, done, q_next, gamma: float, lam: float) -> np.ndarray:
    """G [T, N] of the module docstring (float64 NumPy; q_next = max_a Q(s'_t, a))."""
    T = r.shape[0]
    G = np.zeros_like(q_next, dtype=np.float64)
    for t in reversed(range(T)):
        nxt = q_next[t] if t == T - 1 else np.where(done[t], q_next[t], G[t + 1])
        G[t] = r[t] + gamma * (1.0 - term[t]) * ((1 - lam) * q_next[t] + lam * nxt)
    return G


@dataclass
class PQNResult:
    config: dict
    solved: bool
    rounds: int
    updates: int
    transitions: int
    wall_s: float
    eval_s: float
    startup_s: float
    final_mean_return: float
    eval_returns: List[int]
    evals: int
    out_of_budget: bool
    flops: int
    flops_per_update: int
    returns: List[int] = field(repr=False, default_factory=list)

    def row(self) -> dict:
        return asdict(self)


def train_pqn(cfg: PQNConfig, progress: Optional[Callable[[str], None]] = None,
              every: int = 50, implementation: Callable = TorchPQN) -> PQNResult:
    """One run. `implementation(hidden, lr)`: the network and its update (TorchPQN, the
    reference, or a fast one with its methods); it is built right after torch's RNG is
    seeded, so every implementation starts from the same weights."""
    import torch
    from versions.cartpole.common.vector_env import RungVectorEnv
    cfg.check()
    if not cfg.version:
        raise StudyError("PQN needs --version: the rung whose environments it steps")
    t_start = time.perf_counter()
    torch.set_num_threads(cfg.threads)
    torch.manual_seed(cfg.seed)
    rng = np.random.default_rng(cfg.seed)
    impl = implementation(cfg.hidden, cfg.lr)
    env = RungVectorEnv(cfg.envs, seed=cfg.seed, version=cfg.version, episode_statistics=False)
    N, T = cfg.envs, cfg.steps
    mb = (N * T) // cfg.minibatches
    fpu = update_flops(cfg.hidden, mb)
    obs, _ = env.reset(seed=cfg.seed)
    length = np.zeros(N, np.int64)
    returns: List[int] = []
    o_buf = np.zeros((T, N, 4), np.float32)
    nx_buf = np.zeros((T, N, 4), np.float32)
    a_buf = np.zeros((T, N), np.int64)
    r_buf = np.zeros((T, N), np.float64)
    term_buf = np.zeros((T, N), bool)
    done_buf = np.zeros((T, N), bool)
    startup_s = time.perf_counter() - t_start
    solved, evals, eval_returns, last_eval, eval_s = False, 0, [], -10 ** 9, 0.0
    updates = rounds = 0
    out_of_budget = False

    def greedy(o):
        return impl.q(o).argmax(1)       # ties: the first, as torch's argmax

    t_loop = time.perf_counter()
    try:
        for k in range(cfg.max_rounds):
            eps = cfg.epsilon(k)
            for t in range(T):
                o_buf[t] = obs
                act = greedy(obs)
                explore = rng.random(N) < eps
                act = np.where(explore, rng.integers(0, 2, N), act)
                obs, rew, term, trunc, info = env.step(act)
                done = term | trunc
                nx_buf[t] = obs
                if done.any():
                    for i in np.flatnonzero(done):
                        nx_buf[t, i] = info["final_obs"][i]
                    length += 1
                    returns.extend(length[done].tolist())
                    length[done] = 0
                else:
                    length += 1
                a_buf[t], r_buf[t], term_buf[t], done_buf[t] = act, rew, term, done
            q_next = impl.q(nx_buf.reshape(-1, 4)).max(1).reshape(T, N)
            G = lambda_targets(r_buf, term_buf, done_buf, q_next.astype(np.float64), cfg.gamma, cfg.q_lambda)
            b_o = o_buf.reshape(-1, 4).copy()
            b_a = a_buf.reshape(-1).copy()
            b_g = G.reshape(-1).astype(np.float32)
            for _ in range(cfg.epochs):
                perm = rng.permutation(N * T)
                for j in range(cfg.minibatches):
                    impl.update(b_o, b_a, b_g, perm[j * mb:(j + 1) * mb], cfg.max_grad_norm)
                    updates += 1
            rounds = k + 1
            mean = float(np.mean(returns[-cfg.window:])) if returns else math.nan
            if progress and k % every == 0:
                progress(f"round {k:5d}  transitions {rounds * N * T:8d}  mean return {mean:6.1f}  "
                         f"epsilon {eps:.3f}  elapsed {time.perf_counter() - t_loop - eval_s:6.1f}s")
            if len(returns) >= cfg.window and mean >= cfg.threshold and k - last_eval >= cfg.eval_cooldown:
                te = time.perf_counter()
                eval_returns = greedy_eval(greedy, cfg.eval_episodes, seed=eval_seed(cfg.seed))
                eval_s += time.perf_counter() - te
                evals, last_eval = evals + 1, k
                if np.mean(eval_returns) >= cfg.threshold:
                    solved = True
                    break
            if cfg.budget_s > 0 and time.perf_counter() - t_loop - eval_s > cfg.budget_s:
                out_of_budget = True
                break
    finally:
        env.close()
    wall = time.perf_counter() - t_loop - eval_s
    # the targets' forward over each round counts as DQN's target forwards do
    target_flops = rounds * N * T * 2 * (4 * cfg.hidden + cfg.hidden ** 2 + 2 * cfg.hidden)
    return PQNResult(config=asdict(cfg), solved=solved, rounds=rounds, updates=updates,
                     transitions=rounds * N * T, wall_s=wall, eval_s=eval_s, startup_s=startup_s,
                     final_mean_return=float(np.mean(returns[-cfg.window:])) if returns else math.nan,
                     eval_returns=eval_returns, evals=evals, out_of_budget=out_of_budget,
                     flops=updates * fpu + target_flops, flops_per_update=fpu, returns=returns)
