"""DQN on the study's CartPole-v1, in the single-file style of CleanRL (one script: arguments,
network, replay buffer, loop), through Gymnasium's vector API.

The loop is the one written for any Gymnasium vector env: same-step autoreset, the real
next observation taken from infos["final_obs"], episode returns from infos["episode"].
The only line that is about this study is the one that makes `envs`:

    envs = gym.make_vec("ladder/CartPole-v1", num_envs=..., version="v5b_simd",
                        autoreset_mode=gym.vector.AutoresetMode.SAME_STEP)

With --collect the transitions come instead from the rung's own actor loop
(RungVectorEnv.collect: environments and epsilon-greedy network in the rung's code, T steps
per call), the fast path for DQN (examples/README.md). Training stops when the greedy
policy averages at least 475 over 20 episodes of Gymnasium's own CartPole-v1.

    PYTHONPATH=. .venv/bin/python examples/dqn_cleanrl_style.py            # to solved
    PYTHONPATH=. .venv/bin/python examples/dqn_cleanrl_style.py --collect  # the fast path
    PYTHONPATH=. .venv/bin/python examples/dqn_cleanrl_style.py --quick    # a smoke run
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from dataclasses import dataclass, fields
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))   # the repository root
import versions  # noqa: E402,F401  (registers ladder/CartPole-v1)


@dataclass
class Args:
    seed: int = 1
    """seed of the experiment"""
    version: str = "v5b_simd"
    """the rung that steps the environments"""
    num_envs: int = 8
    """parallel environments"""
    total_timesteps: int = 80_000
    """transitions to train on at most"""
    learning_rate: float = 2.3e-3
    """Adam's learning rate"""
    buffer_size: int = 100_000
    """replay memory, in transitions"""
    gamma: float = 0.99
    """discount factor"""
    hidden: int = 128
    """width of the two hidden layers"""
    batch_size: int = 64
    """minibatch size"""
    start_e: float = 1.0
    """epsilon at the start"""
    end_e: float = 0.04
    """final epsilon"""
    exploration_fraction: float = 0.16
    """fraction of total_timesteps over which epsilon decays"""
    learning_starts: int = 1000
    """transitions before learning starts"""
    train_every: int = 256
    """transitions between two training phases"""
    gradient_steps: int = 128
    """gradient steps per training phase (the target network is copied before each phase)"""
    max_grad_norm: float = 10.0
    """gradients are clipped to this norm"""
    eval_every: int = 4096
    """transitions between two greedy evaluations once exploration has decayed"""
    eval_episodes: int = 20
    """greedy episodes of Gymnasium's CartPole-v1 in an evaluation"""
    solved_return: float = 475.0
    """mean greedy return that counts as solved (CartPole-v1's reward threshold)"""
    collect: bool = False
    """take transitions from the rung's own actor loop (collect) instead of step()"""
    collect_steps: int = 32
    """with --collect: T steps of all envs per collect() call"""
    torch_threads: int = 1
    """torch's CPU threads (small networks: more threads only wait for each other)"""
    quick: bool = False
    """a smoke run of a few seconds (CI): few steps, no solving expected"""


def parse_args(argv=None) -> Args:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for f in fields(Args):
        flag = "--" + f.name.replace("_", "-")
        if f.type in (bool, "bool"):
            p.add_argument(flag, action="store_true")
        else:
            kind = {"int": int, "float": float, "str": str}[f.type if isinstance(f.type, str)
                                                             else f.type.__name__]
            p.add_argument(flag, type=kind, default=f.default)
    args = Args(**vars(p.parse_args(argv)))
    if args.quick:
        args.total_timesteps, args.learning_starts, args.train_every = 1024, 256, 128
        args.gradient_steps, args.eval_every, args.eval_episodes = 4, 512, 2
    return args


class QNetwork(nn.Module):
    def __init__(self, envs, hidden: int):
        super().__init__()
        n_obs = int(np.prod(envs.single_observation_space.shape))
        self.network = nn.Sequential(nn.Linear(n_obs, hidden), nn.ReLU(),
                                     nn.Linear(hidden, hidden), nn.ReLU(),
                                     nn.Linear(hidden, envs.single_action_space.n))

    def forward(self, x):
        return self.network(x)


class Replay:
    """A ring buffer of transitions (obs, action, reward, next_obs, terminated)."""

    def __init__(self, size: int, obs_dim: int):
        self.size, self.pos, self.full = size, 0, False
        self.obs = np.zeros((size, obs_dim), np.float32)
        self.next_obs = np.zeros((size, obs_dim), np.float32)
        self.actions = np.zeros(size, np.int64)
        self.rewards = np.zeros(size, np.float32)
        self.dones = np.zeros(size, np.float32)

    def add(self, obs, next_obs, actions, rewards, terminations):
        n = len(actions)
        i = (self.pos + np.arange(n)) % self.size
        self.obs[i], self.next_obs[i], self.actions[i] = obs, next_obs, actions
        self.rewards[i], self.dones[i] = rewards, terminations
        self.full = self.full or self.pos + n >= self.size
        self.pos = (self.pos + n) % self.size

    def sample(self, batch: int, rng: np.random.Generator):
        i = rng.integers(0, self.size if self.full else self.pos, batch)
        return tuple(torch.as_tensor(a[i]) for a in
                     (self.obs, self.actions, self.rewards, self.next_obs, self.dones))


def linear_schedule(start_e: float, end_e: float, duration: float, t: int) -> float:
    return max(end_e, start_e + (end_e - start_e) * t / duration)


def greedy_return(q_network, episodes: int, seed: int) -> float:
    """Mean return of the greedy policy over `episodes` episodes of Gymnasium's own CartPole-v1."""
    env = gym.make_vec("CartPole-v1", num_envs=episodes, vectorization_mode="vector_entry_point")
    obs, _ = env.reset(seed=seed)
    total = np.zeros(episodes)
    running = np.ones(episodes, bool)
    while running.any():
        with torch.no_grad():
            actions = q_network(torch.as_tensor(obs)).argmax(1).numpy()
        obs, rewards, terminations, truncations, _ = env.step(actions)
        total += rewards * running
        running &= ~(terminations | truncations)
    env.close()
    return float(total.mean())


def main(argv=None) -> int:
    args = parse_args(argv)
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.torch_threads)
    rng = np.random.default_rng(args.seed)

    # env setup: the only line that names the study
    envs = gym.make_vec("ladder/CartPole-v1", num_envs=args.num_envs, version=args.version,
                        autoreset_mode=gym.vector.AutoresetMode.SAME_STEP)
    assert isinstance(envs.single_action_space, gym.spaces.Discrete), "discrete actions only"

    q_network = QNetwork(envs, args.hidden)
    optimizer = torch.optim.Adam(q_network.parameters(), lr=args.learning_rate)
    target_network = QNetwork(envs, args.hidden)
    target_network.load_state_dict(q_network.state_dict())
    rb = Replay(args.buffer_size, int(np.prod(envs.single_observation_space.shape)))
    steps = transitions_to(args)
    if args.collect:
        from versions.cartpole.common.vector_env import RungVectorEnv, weights_from_torch
        envs.close()
        envs = RungVectorEnv(args.num_envs, seed=args.seed, version=args.version, policy="egreedy")

    start, returns, updates, last_train, last_eval = time.time(), [], 0, 0, 0
    solved_at, score = None, float("nan")
    obs, _ = (None, None) if args.collect else envs.reset(seed=args.seed)
    global_step = 0
    while global_step < args.total_timesteps:
        epsilon = linear_schedule(args.start_e, args.end_e,
                                  args.exploration_fraction * args.total_timesteps, global_step)
        if args.collect:
            envs.set_weights(weights_from_torch(q_network))
            envs.set_epsilon(epsilon)
            batch = envs.collect(args.collect_steps)
            rb.add(*(batch[k].reshape(-1, *batch[k].shape[2:]) for k in
                     ("obs", "next_obs", "action", "reward", "terminated")))
            returns += episode_returns(batch, steps)
            global_step += batch["action"].size
        else:
            if random.random() < epsilon:
                actions = np.array([envs.single_action_space.sample() for _ in range(envs.num_envs)])
            else:
                with torch.no_grad():
                    actions = q_network(torch.as_tensor(obs)).argmax(dim=1).numpy()
            next_obs, rewards, terminations, truncations, infos = envs.step(actions)
            if "episode" in infos:
                returns += infos["episode"]["r"][infos["_episode"]].tolist()
            real_next_obs = next_obs.copy()
            if "final_obs" in infos:
                for idx in np.flatnonzero(infos["_final_obs"]):
                    real_next_obs[idx] = infos["final_obs"][idx]
            rb.add(obs, real_next_obs, actions, rewards, terminations)
            obs = next_obs
            global_step += envs.num_envs

        if global_step >= args.learning_starts and global_step - last_train >= args.train_every:
            last_train = global_step
            target_network.load_state_dict(q_network.state_dict())
            for _ in range(args.gradient_steps):
                o, a, r, no, d = rb.sample(args.batch_size, rng)
                with torch.no_grad():
                    target_max = target_network(no).max(dim=1).values
                    td_target = r + args.gamma * target_max * (1 - d)
                old_val = q_network(o).gather(1, a.view(-1, 1)).squeeze(1)
                loss = F.smooth_l1_loss(old_val, td_target)
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(q_network.parameters(), args.max_grad_norm)
                optimizer.step()
                updates += 1

        explored = global_step >= args.exploration_fraction * args.total_timesteps
        if (explored or args.quick) and global_step - last_eval >= args.eval_every:
            last_eval = global_step
            score = greedy_return(q_network, args.eval_episodes, seed=args.seed + 1000)
            recent = np.mean(returns[-20:]) if returns else float("nan")
            print(f"step {global_step}: epsilon {epsilon:.3f}, mean return (last 20) {recent:.1f}, "
                  f"greedy {score:.1f}, {int(global_step / (time.time() - start))} steps/s",
                  flush=True)
            if score >= args.solved_return:
                solved_at = global_step
                break
    envs.close()
    wall = time.time() - start
    if solved_at is not None:
        print(f"solved at step {solved_at} in {wall:.1f}s: greedy mean return {score:.1f} over "
              f"{args.eval_episodes} episodes of Gymnasium's CartPole-v1 ({args.version}, "
              f"{'collect' if args.collect else 'step'} path)")
        return 0
    print(f"not solved after {global_step} steps in {wall:.1f}s (greedy {score:.1f}; "
          f"{len(returns)} training episodes)")
    return 0 if args.quick else 1


def transitions_to(args) -> np.ndarray:
    """Per-env step counters for --collect's episode bookkeeping."""
    return np.zeros(args.num_envs, np.int64)


def episode_returns(batch, steps: np.ndarray) -> list:
    """Returns of the episodes that ended in a collect() batch (1 a step; `steps` carries
    each env's running episode length across batches)."""
    out = []
    done = batch["terminated"] | batch["truncated"]
    for t in range(done.shape[0]):
        steps += 1
        ended = np.flatnonzero(done[t])
        out += steps[ended].astype(float).tolist()
        steps[ended] = 0
    return out


if __name__ == "__main__":
    raise SystemExit(main())
